"""sim_vs_real.md and .csv: each kind of run (real, or simulated under a flow
model) against the real runs, per method."""
import csv
import math

import numpy as np

from .tables import csv_value

def run_measures(run, targets):
    """What sim_vs_real.md compares, for one method's run."""
    t = run["transfers"]
    dur = (t["finish_s"] - t["start_s"])
    dur = dur[~np.isnan(dur)]
    st = t["staleness_s"][~np.isnan(t["staleness_s"])]
    s = run["summary"]
    hits = s.get("time_to_accuracy", {})
    m = {"transfer_median_s": float(np.median(dur)) if len(dur) else math.nan,
         "transfer_p90_s": float(np.percentile(dur, 90)) if len(dur) else math.nan,
         "staleness_mean_s": float(np.mean(st)) if len(st) else math.nan,
         "staleness_p95_s": float(np.percentile(st, 95)) if len(st) else math.nan,
         "merges": float(s.get("merges", math.nan)),
         "iterations": float(s.get("iterations", math.nan))}
    if targets:  # evaluated
        m["final_accuracy"] = number(s.get("final_accuracy"))
    for target in targets:
        h = hits.get(f"{target:g}")
        m[f"time_to_{target:g}_s"] = h["virtual_s"] if h else math.inf
    return m


def sim_vs_real(figs, by_label, targets):
    """sim_vs_real.md and .csv: each kind of run against the real runs, per method."""
    per_method = {}
    for key, runs in by_label.items():
        label = key.rsplit(" [", 1)[0]
        per_method.setdefault(label, {})[runs[0]["kind"]] = [run_measures(r, targets) for r in runs]
    fields = list(next(iter(next(iter(per_method.values())).values()))[0].keys())
    md = ["# Simulation against real runs", "",
          "Each cell: the mean over the kind's runs; real rows give the range of the real runs in brackets; "
          "simulated rows their difference from the real mean, in %, with * where the simulated value lies "
          "outside the real runs' range. Times in virtual seconds.", ""]
    rows = []
    for label, kinds in per_method.items():
        real = kinds.get("real")
        md += [f"## {label}", "", "| run | runs | " + " | ".join(fields) + " |", "|---|---|" + "---|" * len(fields)]
        for kind in sorted(kinds, key=lambda k: (k != "real", k)):
            values = kinds[kind]
            cells = []
            for f in fields:
                v = [x[f] for x in values]
                mean = float(np.mean(v)) if all(math.isfinite(x) for x in v) else (math.inf if all(
                    not math.isnan(x) for x in v) else math.nan)
                row = {"method": label, "run": kind, "runs": len(values), "measure": f, "mean": mean,
                       "min": min(v), "max": max(v), "difference_pct": math.nan, "outside_real_range": ""}
                text = "n/a" if math.isnan(mean) else "not reached" if math.isinf(mean) else f"{mean:.4g}"
                if kind == "real" and len(values) > 1 and math.isfinite(mean):
                    text += f" [{min(v):.4g}, {max(v):.4g}]"
                if kind != "real" and real:
                    rv = [x[f] for x in real]
                    if all(math.isfinite(x) for x in rv) and math.isfinite(mean) and np.mean(rv) != 0:
                        diff = 100 * (mean - np.mean(rv)) / np.mean(rv)
                        outside = mean < min(rv) or mean > max(rv)
                        row["difference_pct"], row["outside_real_range"] = diff, outside
                        text += f" ({diff:+.0f}%{'*' if outside else ''})"
                cells.append(text)
                rows.append(row)
            md.append(f"| {kind} | {len(values)} | " + " | ".join(cells) + " |")
        md.append("")
    with open(figs.path("sim_vs_real.md"), "w") as f:
        f.write("\n".join(md))
    with open(figs.path("sim_vs_real.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        names = ["method", "run", "runs", "measure", "mean", "min", "max", "difference_pct", "outside_real_range"]
        w.writerow(names)
        for r in rows:
            w.writerow([csv_value(r[n]) if isinstance(r[n], float) else r[n] for n in names])
    figs.note("sim_vs_real.md", methods=list(per_method), kinds=sorted({k for v in per_method.values() for k in v}))
