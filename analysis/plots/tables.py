"""time_to_accuracy.md and .csv: per method and target, the final accuracy
and the time to the target over seeds, and the speed-up of the method under
study over every other method."""
import csv
import math

from .results import number
from .stats import interval, ratio_interval

TARGET_METRICS = {"average": "the average model", "node_mean": "the nodes' own models, mean over nodes",
                  "node_min": "the worst node's own model"}


def outcomes_of_runs(by_label, targets, metric=None):
    """label -> seed key -> {"final": accuracy, "times": {target: s or inf}};
    the seed key is the run's folder, so that ratios pair the same seed.
    metric: the times under that accuracy (summary's time_to_accuracy_by);
    None: the run's own /eval/target. None when some run lacks the metric."""
    table = {}
    for label, runs in by_label.items():
        for r in runs:
            hits = r["summary"]["time_to_accuracy"]
            if metric:
                hits = r["summary"].get("time_to_accuracy_by", {}).get(metric)
                if hits is None:
                    return None
            final = number(r["summary"].get("final_accuracy", ""))
            column = {"node_mean": "node_accuracy_mean", "node_min": "node_accuracy_min"}.get(metric)
            if column and r["metrics"] and r["metrics"][-1].get(column):
                final = number(r["metrics"][-1][column])  # (a method that trains alone has one model: its own)
            table.setdefault(label, {})[r["folder"]] = {
                "reference": is_reference(r["summary"]),
                "final": final,
                "times": {t: (hits[f"{t:g}"]["virtual_s"] if hits.get(f"{t:g}") else math.inf) for t in targets}}
    return table


def is_reference(method_summary):
    """Whether the result says this is the method under study (its registry
    row's trait): tables give its speed-up over every other method."""
    return bool(method_summary.get("traits", {}).get("reference", False))


def reference_label(results):
    ref = [l for l, seeds in results.items() if next(iter(seeds.values()))["reference"]]
    return ref[0] if ref else None


def stat_rows(results, targets):
    """One dict per (method, target) with the statistics the tables print."""
    ref = reference_label(results)
    rows = []
    for label, seeds in results.items():
        finals = [o["final"] for o in seeds.values() if math.isfinite(o["final"])]
        final, final_h = interval(finals)
        for t in targets:
            times = [o["times"][t] for o in seeds.values()]
            reached = [v for v in times if math.isfinite(v)]
            mean, half = interval(reached)
            row = {"method": label, "target": t, "seeds": len(times), "reached": len(reached),
                   "mean_s": mean, "half_s": half, "final": final, "final_half": final_h,
                   "ratio": math.nan, "ratio_low": math.nan, "ratio_high": math.nan, "pairs": 0, "verdict": ""}
            if ref and label != ref:
                pairs = [(o["times"][t], results[ref][k]["times"][t]) for k, o in seeds.items() if k in results[ref]]
                both = [a / b for a, b in pairs if math.isfinite(a) and math.isfinite(b) and b > 0]
                only_ref = sum(1 for a, b in pairs if math.isfinite(b) and not math.isfinite(a))
                only_other = sum(1 for a, b in pairs if math.isfinite(a) and not math.isfinite(b))
                row["pairs"] = len(both)
                if len(both) == 2:
                    row["ratio"], row["ratio_low"], row["ratio_high"] = ratio_interval(both)
                    row["verdict"] = "two seeds: no verdict"
                elif len(both) >= 3:
                    row["ratio"], row["ratio_low"], row["ratio_high"] = ratio_interval(both)
                    if row["ratio_low"] > 1:
                        row["verdict"] = "scheduling faster"
                    elif row["ratio_high"] < 1:
                        row["verdict"] = "scheduling slower"
                    else:
                        row["verdict"] = "no significant difference"
                elif len(both) == 1:
                    row["ratio"] = both[0]
                    row["verdict"] = "one seed: no interval"
                if only_ref or only_other:
                    extra = []
                    if only_ref:
                        extra.append(f"only scheduling reached it (in {only_ref} of {len(pairs)} seeds)")
                    if only_other:
                        extra.append(f"only {label} reached it (in {only_other} of {len(pairs)} seeds)")
                    row["verdict"] = "; ".join([v for v in [row["verdict"]] if v] + extra)
                if not row["verdict"]:
                    row["verdict"] = "neither reached it"
            rows.append(row)
    return rows, ref


def markdown_tables(rows, ref, targets):
    def cell(mean, half, unit="", digits=1):
        if not math.isfinite(mean):
            return "-"
        return f"{mean:.{digits}f}{unit}" + (f" ± {half:.{digits}f}" if math.isfinite(half) else "")

    labels = list(dict.fromkeys(r["method"] for r in rows))
    by = {(r["method"], r["target"]): r for r in rows}
    lines = ["| method | final accuracy | " + " | ".join(f"s to {t:g}" for t in targets) + " |",
             "|---|---|" + "---|" * len(targets)]
    for l in labels:
        first = by[(l, targets[0])]
        cells = []
        for t in targets:
            r = by[(l, t)]
            c = cell(r["mean_s"], r["half_s"]) if r["reached"] else "not reached"
            if r["reached"] != r["seeds"] and r["reached"]:
                c += f" ({r['reached']}/{r['seeds']})"
            cells.append(c)
        lines.append(f"| {l} | {cell(first['final'], first['final_half'], digits=3)} | " + " | ".join(cells) + " |")
    n = max(r["seeds"] for r in rows)
    lines += ["", f"Mean ± half-width of the 95% t-interval over {n} seed(s); a time is the mean over the seeds"
              " that reached the target, (k/n) when only k did."]
    if ref:
        lines += ["", f"Speed-up of {ref} (other's time / its time, geometric mean over the seeds where both"
                  " reached the target, [95% interval]; > 1: scheduling is faster; a verdict needs three such"
                  " seeds):", "",
                  "| over | " + " | ".join(f"to {t:g}" for t in targets) + " |", "|---|" + "---|" * len(targets)]
        for l in labels:
            if l == ref:
                continue
            cells = []
            for t in targets:
                r = by[(l, t)]
                c = ""
                if math.isfinite(r["ratio"]):
                    c = f"{r['ratio']:.2f}x"
                    if math.isfinite(r["ratio_low"]):
                        c += f" [{r['ratio_low']:.2f}, {r['ratio_high']:.2f}]"
                    c += ": "
                cells.append(c + r["verdict"])
            lines.append(f"| {l} | " + " | ".join(cells) + " |")
    return lines


CSV_FIELDS = ["method", "target", "seeds", "reached", "mean_s", "half_s", "final", "final_half",
              "ratio", "ratio_low", "ratio_high", "pairs", "verdict"]


def csv_value(v):
    if isinstance(v, float):
        return f"{v:.4f}" if math.isfinite(v) else ""
    return v


def write_tables(figs, sections, targets, preface=()):
    """sections: (title, group values, results); one markdown section each,
    after the lines of `preface` (what made the results)."""
    md, table = list(preface), []
    for title, group, results in sections:
        rows, ref = stat_rows(results, targets)
        if title:
            md += ["", f"## {title}", ""]
        md += markdown_tables(rows, ref, targets)
        for r in rows:
            table.append([*group.values(), *(csv_value(r[k]) for k in CSV_FIELDS)])
    groups = list(sections[0][1]) if sections else []
    with open(figs.path("time_to_accuracy.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(groups + CSV_FIELDS)
        for row in table:
            w.writerow(row)
    with open(figs.path("time_to_accuracy.md"), "w") as f:
        f.write("\n".join(md).lstrip("\n") + "\n")
