"""time_to_accuracy.md and .csv: per method and target, the final accuracy
and the time to the target over seeds, and the speed-up of the method under
study over every other method, as statistics a reviewer accepts:

- time to a target is censored, not dropped: a run that did not reach it
  counts as reaching it no earlier than its end, and a method's figure is
  the restricted mean time to the target (stats.restricted_mean);
- the speed-up is the geometric mean over seeds of the other method's
  restricted time over the reference's, every seed kept (two runs that
  never reached the target tie at 1);
- its p is the exact paired sign-flip test on the log ratios (with the
  smallest p the seeds allow), its interval the test inverted;
- the comparisons of one table are a family: p-values are adjusted (Holm
  for a table of runs and for a sweep's declared primary cells,
  Benjamini-Hochberg for a sweep's other, exploratory, cells) and a
  comparison is called only where its adjusted p is at most the level.
"""
import csv
import math

import numpy as np

from .results import number
from .stats import benjamini_hochberg, holm, interval, signflip_interval, signflip_p, smallest_p

TARGET_METRICS = {"average": "the average model", "node_mean": "the nodes' own models, mean over nodes",
                  "node_min": "the worst node's own model"}
ALPHA = 0.05
MONTE_CARLO_DRAWS = 200_000


def hit_time(hit):
    """A target's time from a summary: interpolated between evaluations where the summary has it."""
    if not hit:
        return math.inf
    return hit.get("interpolated_s", hit["virtual_s"])


def outcomes_of_runs(by_label, targets, metric=None):
    """label -> seed key -> {"reference", "final", "times": {target: s or inf}, "end": s, "interpolated", "starved"};
    the seed key is the run's folder, so that ratios pair the same seed.
    metric: the times under that accuracy (summary's time_to_accuracy_by);
    None: the run's own /eval/target. None when some run lacks the metric."""
    table = {}
    for label, runs in by_label.items():
        for r in runs:
            s = r["summary"]
            hits = s["time_to_accuracy"]
            if metric:
                hits = s.get("time_to_accuracy_by", {}).get(metric)
                if hits is None:
                    return None
            final = number(s.get("final_accuracy", ""))
            by = s.get("final_accuracy_by", {})
            if metric and metric in by:
                final = number(by[metric])
            else:
                column = {"node_mean": "node_accuracy_mean", "node_min": "node_accuracy_min"}.get(metric)
                if column and r["metrics"] and r["metrics"][-1].get(column):
                    final = number(r["metrics"][-1][column])  # (a method that trains alone has one model: its own)
            table.setdefault(label, {})[r["folder"]] = {
                "reference": is_reference(s),
                "final": final,
                "times": {t: hit_time(hits.get(f"{t:g}")) for t in targets},
                "interpolated": all("interpolated_s" in h for h in hits.values() if h),
                "end": number(s.get("virtual_s")),
                "starved": len(s.get("starved_cuts") or [])}
    return table


def is_reference(method_summary):
    """Whether the result says this is the method under study (its registry
    row's trait): tables give its speed-up over every other method."""
    return bool(method_summary.get("traits", {}).get("reference", False))


def reference_label(results, chosen=None):
    if chosen:
        return chosen if chosen in results else None
    ref = [l for l, seeds in results.items() if next(iter(seeds.values()))["reference"]]
    return ref[0] if ref else None


def paired_p(differences):
    """The sign-flip test's p: exact up to 20 seeds, Monte Carlo beyond
    (MONTE_CARLO_DRAWS sign assignments from a fixed seed)."""
    d = np.asarray(differences, dtype=float)
    if len(d) <= 20:
        return signflip_p(d)
    rng = np.random.default_rng(20211026)
    signs = rng.choice((-1.0, 1.0), size=(MONTE_CARLO_DRAWS, len(d)))
    observed = abs(d.sum())
    return float((1 + np.sum(np.abs(signs @ d) >= observed - 1e-9 * max(1.0, observed))) / (MONTE_CARLO_DRAWS + 1))


def compare(mine, theirs, target):
    """The speed-up of `mine` (the reference) over `theirs` to `target`, on
    every seed both ran: restricted times, log ratios, p, interval."""
    keys = [k for k in mine if k in theirs]
    if not keys:
        return None
    ref = [min(mine[k]["times"][target], mine[k]["end"]) for k in keys]
    other = [min(theirs[k]["times"][target], theirs[k]["end"]) for k in keys]
    if any(not (r > 0) or not (o > 0) for r, o in zip(ref, other)):
        return None
    d = [math.log(o / r) for r, o in zip(ref, other)]
    ci = signflip_interval(d, ALPHA) if len(d) <= 20 else None
    return {"ratio": math.exp(float(np.mean(d))), "ratio_low": math.exp(ci[0]) if ci else math.nan,
            "ratio_high": math.exp(ci[1]) if ci else math.nan, "p": paired_p(d), "smallest_p": smallest_p(d),
            "pairs": len(d), "ties": sum(1 for x in d if x == 0),
            "only_ref": sum(1 for k in keys if math.isfinite(mine[k]["times"][target])
                            and not math.isfinite(theirs[k]["times"][target])),
            "only_other": sum(1 for k in keys if math.isfinite(theirs[k]["times"][target])
                              and not math.isfinite(mine[k]["times"][target]))}


def stat_rows(results, targets, chosen_reference=None):
    """One dict per (method, target) with the statistics the tables print;
    verdicts are filled in once the family's p-values are adjusted."""
    ref = reference_label(results, chosen_reference)
    rows = []
    for label, seeds in results.items():
        finals = [o["final"] for o in seeds.values() if math.isfinite(o["final"])]
        final, final_h = interval(finals)
        for t in targets:
            restricted = [min(o["times"][t], o["end"]) for o in seeds.values() if math.isfinite(o["end"])]
            mean, half = interval(restricted)
            row = {"method": label, "target": t, "seeds": len(seeds),
                   "reached": sum(1 for o in seeds.values() if math.isfinite(o["times"][t])),
                   "rmst_s": mean, "rmst_half_s": half, "final": final, "final_half": final_h,
                   "starved": sum(o.get("starved", 0) for o in seeds.values()),
                   "ratio": math.nan, "ratio_low": math.nan, "ratio_high": math.nan, "p": math.nan,
                   "p_adjusted": math.nan, "smallest_p": math.nan, "pairs": 0, "verdict": ""}
            if ref and label != ref:
                c = compare(results[ref], seeds, t)
                if c:
                    row.update(c)
            rows.append(row)
    return rows, ref


def adjust(rows, correction):
    """Adjusts the p-values of the rows that compare (a family) and calls
    each comparison."""
    tested = [r for r in rows if math.isfinite(r["p"])]
    adjusted = (holm if correction == "holm" else benjamini_hochberg)([r["p"] for r in tested])
    for r, a in zip(tested, adjusted):
        r["p_adjusted"] = a
        if a <= ALPHA:
            r["verdict"] = "faster" if r["ratio"] > 1 else "slower"
        elif r["smallest_p"] > ALPHA:
            r["verdict"] = f"cannot reach {ALPHA:g} with {r['pairs']} seeds (smallest p {r['smallest_p']:.3g})"
        else:
            r["verdict"] = "no significant difference"
        if r.get("only_ref") or r.get("only_other"):
            r["verdict"] += (f"; only the reference reached it in {r['only_ref']}, only {r['method']} in "
                             f"{r['only_other']} of {r['pairs']} seeds")


def markdown_tables(rows, ref, targets, interpolated):
    def cell(mean, half, digits=1):
        if not math.isfinite(mean):
            return "-"
        return f"{mean:.{digits}f}" + (f" ± {half:.{digits}f}" if math.isfinite(half) else "")

    labels = list(dict.fromkeys(r["method"] for r in rows))
    by = {(r["method"], r["target"]): r for r in rows}
    lines = ["| method | final accuracy | " + " | ".join(f"s to {t:g}" for t in targets) + " |",
             "|---|---|" + "---|" * len(targets)]
    for l in labels:
        first = by[(l, targets[0])]
        cells = [cell(by[(l, t)]["rmst_s"], by[(l, t)]["rmst_half_s"]) + f" ({by[(l, t)]['reached']}/{by[(l, t)]['seeds']})"
                 for t in targets]
        lines.append(f"| {l} | {cell(first['final'], first['final_half'], digits=3)} | " + " | ".join(cells) + " |")
    n = max(r["seeds"] for r in rows)
    starved = {l: by[(l, targets[0])]["starved"] for l in labels if by[(l, targets[0])]["starved"]}
    lines += ["", f"Over {n} seed(s): mean ± half-width of the 95% t-interval. A time is the restricted mean time to "
              "the target: a run that did not reach it counts its end (censored, never dropped); (k/n): the seeds "
              "that reached it. Times are " + ("interpolated between evaluations." if interpolated
                                               else "those of the evaluation that first reached the target.")]
    if starved:
        lines += ["", "Warned of a cut no transfer crossed for long (summary.json's starved_cuts), in all: "
                  + ", ".join(f"{l} {k}" for l, k in starved.items()) + "."]
    if ref:
        lines += ["", f"Speed-up of {ref} over each other method (the other's restricted time over its own, "
                  "geometric mean over every seed; > 1: it is faster), [95% interval of the inverted sign-flip test, "
                  "where the seeds allow one], p of the exact paired sign-flip test, adjusted for this table's "
                  "comparisons:", "",
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
                    c += f", p {r['p']:.3g} (adj. {r['p_adjusted']:.3g}): "
                cells.append(c + r["verdict"])
            lines.append(f"| {l} | " + " | ".join(cells) + " |")
    return lines


CSV_FIELDS = ["method", "target", "seeds", "reached", "rmst_s", "rmst_half_s", "final", "final_half",
              "ratio", "ratio_low", "ratio_high", "p", "p_adjusted", "smallest_p", "pairs", "verdict"]


def csv_value(v, name=""):
    """Four decimals; probabilities, which can be far below 1e-4, in four
    significant digits."""
    if isinstance(v, float):
        if not math.isfinite(v):
            return ""
        if name == "target":
            return f"{v:g}"
        return f"{v:.4g}" if name in ("p", "p_adjusted", "smallest_p") else f"{v:.4f}"
    return v


def comparisons(n):
    return f"{n} comparison" + ("" if n == 1 else "s")


def write_tables(figs, sections, targets, preface=(), correction="holm", reference=None, primary=None, family=""):
    """sections: (title, group values, results); one markdown section each,
    after the lines of `preface` (what made the results). Every comparison
    of every section is one family, adjusted by `correction` ("holm" or
    "bh"); with `primary` (a function of a section's group values) the
    sections it accepts form a confirmatory family adjusted by Holm and the
    others an exploratory one adjusted by Benjamini-Hochberg."""
    computed = []
    for title, group, results in sections:
        rows, ref = stat_rows(results, targets, reference)
        interpolated = all(o.get("interpolated", False) for seeds in results.values() for o in seeds.values())
        computed.append((title, group, rows, ref, interpolated))
    families = {}
    for _, group, rows, _, _ in computed:
        key = "primary" if primary and primary(group) else "rest"
        families.setdefault(key, []).extend(rows)
    for key, rows in families.items():
        adjust(rows, "holm" if key == "primary" or (not primary and correction == "holm") else "bh")
    counts = {k: sum(1 for r in rows if math.isfinite(r["p"])) for k, rows in families.items()}
    md = list(preface)
    if family:
        md += ["", f"The claim these tables test, as the sweep file declared it before the runs: {family}"]
    if primary:
        md += ["", f"Confirmatory cells (declared in the sweep file before the runs): {comparisons(counts.get('primary', 0))}, "
               f"adjusted by Holm (family-wise {ALPHA:g}); the other cells are exploratory: "
               f"{comparisons(counts.get('rest', 0))}, adjusted by Benjamini-Hochberg (false discovery rate {ALPHA:g})."]
    else:
        method = "Holm (family-wise" if correction == "holm" else "Benjamini-Hochberg (false discovery rate"
        md += ["", f"The family: the {comparisons(counts.get('rest', 0))} of this file, adjusted by {method} {ALPHA:g})."]
    table = []
    for title, group, rows, ref, interpolated in computed:
        if title:
            md += ["", f"## {title}", ""]
        md += markdown_tables(rows, ref, targets, interpolated)
        for r in rows:
            table.append([*group.values(), *(csv_value(r[k], k) for k in CSV_FIELDS)])
    groups = list(sections[0][1]) if sections else []
    with open(figs.path("time_to_accuracy.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(groups + CSV_FIELDS)
        for row in table:
            w.writerow(row)
    with open(figs.path("time_to_accuracy.md"), "w") as f:
        f.write("\n".join(md).lstrip("\n") + "\n")
