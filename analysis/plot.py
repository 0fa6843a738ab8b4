#!/usr/bin/python3
"""Plots and tables for gossipsim results.

    plot.py RESULTS_DIR [RESULTS_DIR ...] [--out DIR] [--window START,END] [--methods a,b] [--side-by-side]

Each RESULTS_DIR is a folder written by `gossipsim run`. Several folders of
the same scenario with different seeds draw one curve per method: the mean
over seeds with a band of its 95% confidence interval, clipped to the range
the metric can take. Folders are pooled as seeds only when their
scenario.json files differ in /seed alone; otherwise the plot refuses, naming
the first difference, unless --side-by-side draws each folder's methods as
separate configurations. Runs that were not evaluated (--kernels none) get
no accuracy, loss or consensus figure and no time-to-accuracy table. Writes
into --out (default: the first folder):
  accuracy.png        accuracy of the average model vs virtual time and vs epochs
  loss.png            test loss of the average model vs virtual time
  consensus.png       consensus distance vs virtual time
  staleness.png       histogram of staleness (virtual seconds, snapshot to merge)
  activity.png        the whole run from transfers.csv: transfers finished
                      per second, and each node's share of time with a
                      transfer of its own in flight (median and 10-90% band)
  comm_matrix.png     per method, transfers from each node to each node (heat
                      maps on one colour scale from 0)
  comm_regions.png    the same between regions (geo topologies)
  consensus_regions.png  consensus distance within and between regions (geo)
  timeline-<m>.png    Gantt chart per node, for methods run with --trace: down
                      periods, lost transfers, cross-traffic, and the values
                      that profiles applied beneath; the first 10 virtual s
                      unless --window START,END says otherwise
  figures.json        what each figure shows, for checks without pixels:
                      methods drawn, axis ranges, confidence-band edges,
                      colour-scale bounds, timeline windows, what was skipped
  time_to_accuracy.md / .csv   final accuracy and virtual time to each target
                      (mean and 95% interval over seeds, and in how many
                      seeds it was reached), and the speed-up of the
                      method under study (the one whose summary says
                      traits.reference) over each other method: the geometric
                      mean of the per-seed ratios with its 95% interval, and
                      whether that interval excludes 1
Simulation against reality: given results of `gossipsim run --real` and
simulated results of the same scenario (which may differ in /seed and in
/network's flow model alone), each method is drawn once per kind of run,
"label [real]" and "label [sim <model>]", repetitions of a kind pooled, on
the same figures; and beside them
  sim_vs_real.md / .csv   per method and kind of run: transfer durations
                      (median, p90), staleness (mean, p95), merges,
                      iterations, final accuracy and the time to each target, each the mean
                      over the kind's runs with the real runs' range, and
                      each simulation's difference from the real mean in %
                      (marked when it lies outside the real runs' range).
                      A real run marked invalid (summary.json) is refused.
A folder written by `gossipsim sweep` gets sweep.png instead (time to the
first target against the first axis, and the speed-up of the method under study,
with 95% intervals over seeds), and the same time_to_accuracy tables with
one section per combination of the axes other than /seed.
Uses matplotlib and numpy from Debian's archive only.
"""
import argparse
import csv
import json
import math
import operator
import os
import re
import sys

import warnings

import matplotlib

matplotlib.use("Agg")
# Methods that never reach a target leave NaN points; matplotlib says so.
warnings.filterwarnings("ignore", message=".*(All-NaN|masked element).*")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


# What each figure shows, as a reader would check it (methods drawn, axis
# ranges, colour scales), written to figures.json beside the figures so that
# tests can check figures without comparing pixels.
FACTS = {}

# Timelines are drawn for a window: the first DEFAULT_WINDOW_S virtual
# seconds unless --window says otherwise (a whole run's arrows are a wall).
DEFAULT_WINDOW_S = 10.0
MAX_TIMELINE_NODES = 48

# More legend entries than this go beside the axes, not over the curves.
MAX_LEGEND_INSIDE = 8

# Line styles by label (simulation against real runs: one colour per
# method, one style per kind of run); empty otherwise.
LINE = {}
KIND_STYLE = {"real": {"ls": "-", "lw": 2.0}, "sim maxmin": {"ls": "--", "lw": 1.2},
              "sim tcp": {"ls": "-.", "lw": 1.2}, "sim slowstart": {"ls": ":", "lw": 1.5}}


class PlotError(Exception):
    """A request the plots cannot honour: one line, exit 2."""


def note(name, **facts):
    FACTS.setdefault(name, {}).update(facts)


def axis_facts(ax):
    """Methods (legend labels) and ranges of an axis as drawn."""
    labels = [t.get_text() for t in ax.get_legend().get_texts()] if ax.get_legend() else []
    return {"labels": labels, "xlim": [float(v) for v in ax.get_xlim()], "ylim": [float(v) for v in ax.get_ylim()],
            "artists": len(ax.lines) + len(ax.collections) + len(ax.patches) + len(ax.images)}


def save(fig, path):
    """Writes a figure whole or not at all: to a temporary name, renamed into
    place; an error names the file."""
    tmp = f"{path}.tmp-{os.getpid()}.png"
    try:
        fig.savefig(tmp, dpi=110)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise OSError(e.errno, e.strerror or str(e), path) from None


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def number(x):
    return float(x) if x not in ("", None) else math.nan


NUMERIC_TRANSFER_COLUMNS = ("start_s", "finish_s", "staleness_s")


def read_transfers(path):
    """transfers.csv as columns (a million rows in a few seconds): the
    senders as a list of names, the times as float arrays (NaN where empty)."""
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, [])
        wanted = ("src",) + NUMERIC_TRANSFER_COLUMNS
        rows = list(map(operator.itemgetter(*(header.index(c) for c in wanted)), reader))
    columns = list(zip(*rows)) if rows else [()] * len(wanted)
    out = {"rows": len(rows), "src": list(columns[0])}
    for name, column in zip(NUMERIC_TRANSFER_COLUMNS, columns[1:]):
        out[name] = np.array([float(x) if x else math.nan for x in column], dtype=float)
    return out


def load_run(folder):
    with open(os.path.join(folder, "summary.json")) as f:
        summary = json.load(f)
    methods = {}
    for m in summary["methods"]:
        label = m["label"]
        d = os.path.join(folder, label)
        methods[label] = {
            "folder": os.path.abspath(folder),
            "summary": m,
            "metrics": read_csv(os.path.join(d, "metrics.csv")),
            "transfers": read_transfers(os.path.join(d, "transfers.csv")),
            "trace": os.path.join(d, "trace.json") if os.path.exists(os.path.join(d, "trace.json")) else None,
            "events": read_csv(os.path.join(d, "events.csv")) if os.path.exists(os.path.join(d, "events.csv")) else [],
            "matrix": optional_csv(os.path.join(d, "comm_matrix.csv")),
            "regions": optional_csv(os.path.join(d, "comm_regions.csv")),
            "consensus_regions": optional_csv(os.path.join(d, "consensus_regions.csv")),
        }
    return summary, methods


def optional_csv(path):
    return read_csv(path) if os.path.exists(path) else []


def axis_value_key(v):
    """Sort key of a sweep axis's values as sweep.csv writes them: numbers by value, then text."""
    try:
        return (0, float(v))
    except ValueError:
        return (1, v)


def natural(name):
    """Sort key: n2 before n10, then names."""
    m = re.fullmatch(r"n(\d+)", name)
    return (0, int(m.group(1)), "") if m else (1, 0, name)


def heat_maps(out, by_label, key, src, dst, name, what):
    """One heat map per method of a communication matrix: transfers from row to column."""
    labels = [l for l, runs in by_label.items() if runs[0][key]]
    if not labels:
        return
    fig, axs = plt.subplots(1, len(labels), figsize=(4.2 * len(labels) + 1, 4.2), squeeze=False)
    matrices = {}
    for l in labels:
        rows = by_label[l][0][key]
        names = sorted({r[src] for r in rows} | {r[dst] for r in rows}, key=natural)
        index = {n: i for i, n in enumerate(names)}
        m = np.zeros((len(names), len(names)))
        for r in rows:
            m[index[r[src]], index[r[dst]]] += number(r["transfers"])
        matrices[l] = (names, m)
    # One colour scale from 0 for every panel: a colour means the same count
    # in each, and dark means none.
    top = max(1.0, max(m.max() for _, m in matrices.values()))
    for ax, l in zip(axs[0], labels):
        names, m = matrices[l]
        image = ax.imshow(m, cmap="viridis", vmin=0, vmax=top)
        bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
        bar.set_label("transfers (one scale from 0, all panels)", fontsize=7)
        pooled = len(by_label[l])
        ax.set_title(f"{l}: {int(m.sum())} transfers" + (f" (first of {pooled} runs)" if pooled > 1 else ""), fontsize=9)
        ax.set_xlabel(f"to ({what})")
        ax.set_ylabel(f"from ({what})")
        if len(names) <= 20:
            ax.set_xticks(range(len(names)))
            ax.set_yticks(range(len(names)))
            ax.set_xticklabels(names, rotation=90, fontsize=7)
            ax.set_yticklabels(names, fontsize=7)
    fig.tight_layout()
    save(fig, os.path.join(out, name))
    note(name, methods=labels, colour_min=0.0, colour_max=float(top))
    plt.close(fig)


def regional_consensus(out, by_label, colour, title):
    """consensus_regions.png: the consensus distance within regions (solid) and between them (dashed)."""
    labels = [l for l, runs in by_label.items() if runs[0]["consensus_regions"]]
    if not labels:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    drawn = False
    for l in labels:
        rows = by_label[l][0]["consensus_regions"]
        for column, style in (("within", "-"), ("between", "--")):
            xs, ys = series(rows, "time_s", column)
            if len(xs):
                ax.plot(xs, ys, style, color=colour[l], label=f"{l} {column}")
                drawn = True
    if not drawn:  # nothing evaluated (timeline only): no empty axes
        plt.close(fig)
        return
    ax.set_xlabel("virtual time (s)")
    ax.set_ylabel("consensus distance: within regions (solid), between (dashed)")
    ax.set_yscale("symlog", linthresh=1e-6)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title)
    fig.tight_layout()
    save(fig, os.path.join(out, "consensus_regions.png"))
    note("consensus_regions.png", **axis_facts(ax))
    plt.close(fig)


def series(rows, x, y):
    xs = np.array([number(r[x]) for r in rows])
    ys = np.array([number(r[y]) for r in rows])
    keep = ~np.isnan(ys)
    return xs[keep], ys[keep]


# Two-sided 95% quantiles of Student's t by degrees of freedom.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042}


def t975(df):
    """The 0.975 quantile of t with df degrees of freedom (the next smaller
    tabulated df, so never too narrow; 1.96 beyond 30)."""
    if df > 30:
        return 1.96
    return T975[max(k for k in T975 if k <= df)]


def interval(values):
    """Mean and the half-width of its 95% t-interval (NaN below 2 values)."""
    v = np.asarray(values, dtype=float)
    if len(v) == 0:
        return math.nan, math.nan
    if len(v) < 2:
        return float(v.mean()), math.nan
    return float(v.mean()), t975(len(v) - 1) * float(v.std(ddof=1)) / math.sqrt(len(v))


def ratio_interval(ratios):
    """Geometric mean of paired ratios and its 95% interval (t on the logs)."""
    m, h = interval(np.log(ratios))
    return math.exp(m), math.exp(m - h), math.exp(m + h)


# The range each metric can take: curves and bands are clipped to it.
METRIC_RANGE = {"accuracy": (0.0, 1.0), "loss": (0.0, math.inf), "consensus": (0.0, math.inf)}


def band_plot(ax, runs, label, x, y, colour):
    """One curve per method; with several seeds, the mean and a band of its
    95% confidence interval (pointwise, t over seeds), clipped to the range
    the metric can take (an interval's arithmetic knows no bounds)."""
    curves = [series(r["metrics"], x, y) for r in runs]
    curves = [c for c in curves if len(c[0])]
    if not curves:
        return None
    if len(curves) == 1:
        ax.plot(curves[0][0], curves[0][1], label=label, color=colour, **LINE.get(label, {}))
        return None
    end = min(c[0][-1] for c in curves)
    grid = np.linspace(0, end, 200)
    stacked = np.array([np.interp(grid, cx, cy) for cx, cy in curves])
    mean = stacked.mean(0)
    half = t975(len(curves) - 1) * stacked.std(0, ddof=1) / math.sqrt(len(curves))
    low, high = METRIC_RANGE.get(y, (-math.inf, math.inf))
    ax.plot(grid, mean, label=f"{label} (mean of {len(curves)}, 95% CI)", color=colour, **LINE.get(label, {}))
    lower, upper = np.clip(mean - half, low, high), np.clip(mean + half, low, high)
    ax.fill_between(grid, lower, upper, color=colour, alpha=0.2)
    return float(np.nanmin(lower)), float(np.nanmax(upper))


def band_range(bands):
    """The lowest and highest edge of the confidence bands drawn (none with one seed)."""
    bands = [b for b in bands if b]
    return {"band_min": min(b[0] for b in bands), "band_max": max(b[1] for b in bands)} if bands else {}


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


def write_tables(out, sections, targets):
    """sections: (title, group values, results); one markdown section each."""
    md, table = [], []
    for title, group, results in sections:
        rows, ref = stat_rows(results, targets)
        if title:
            md += ["", f"## {title}", ""]
        md += markdown_tables(rows, ref, targets)
        for r in rows:
            table.append([*group.values(), *(csv_value(r[k]) for k in CSV_FIELDS)])
    groups = list(sections[0][1]) if sections else []
    with open(os.path.join(out, "time_to_accuracy.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(groups + CSV_FIELDS)
        for row in table:
            w.writerow(row)
    with open(os.path.join(out, "time_to_accuracy.md"), "w") as f:
        f.write("\n".join(md).lstrip("\n") + "\n")


STEP_UNITS = {"capacity": "capacity (Mbit/s)", "latency": "latency (ms)", "speed": "iteration time factor"}


def value_steps(changes, kind, end, start_values=()):
    """Per target, the step curve (times, values) of one kind of change in
    events.csv, from time 0: before its first change a target holds the value
    summary.json's profile_start gives."""
    curves = {}
    for c in changes:
        if c["kind"] == kind:
            curves.setdefault(c["target"], []).append((number(c["time_s"]), number(c["value"])))
    for s in start_values:
        points = curves.get(s["target"])
        if s["kind"] == kind and points and points[0][0] > 0:
            points.insert(0, (0.0, float(s["value"])))
    out = {}
    for target, points in curves.items():
        ts = [t for t, _ in points] + [end]
        vs = [v for _, v in points] + [points[-1][1]]
        out[target] = (ts, vs)
    return out


def down_periods(changes, end):
    """Per node id, the (start, end, kind) periods it was down (churn rows of events.csv)."""
    periods = {}
    for c in changes:
        if c["kind"] in ("crash", "leave"):
            periods.setdefault(int(c["target"][1:]), []).append([number(c["time_s"]), end, c["kind"]])
        elif c["kind"] == "join" and periods.get(int(c["target"][1:])):
            periods[int(c["target"][1:])][-1][1] = number(c["time_s"])
    return periods


TRACE_FIELD = re.compile(r'"(ph|pid|ts|id)":"?([^",}]*)')


def trace_window(path, start_us, end_us, max_nodes):
    """The events of trace.json that a timeline of [start_us, end_us] and of
    its first max_nodes nodes draws, and every node. gossipsim writes one
    event per line, so a line is looked at before it is parsed: a long
    run's trace is read in seconds. Another trace is parsed whole."""
    with open(path) as f:
        first = f.readline()
        if not first.startswith('{"displayTimeUnit"'):
            f.seek(0)
            lines = [json.dumps(e) for e in json.load(f)["traceEvents"]]
        else:
            lines = f
        nodes, keep, events, sent = [], None, [], set()
        for line in lines:
            ph = line[7:8] if line.startswith('{"ph":"') else None
            if ph in ("X", "i") and keep is not None:
                # The two most frequent kinds, looked at without a regex.
                p = line.find('"pid":')
                if p < 0 or int(line[p + 6:line.index(",", p)]) not in keep:
                    continue
                t = line.find('"ts":')
                if t < 0 or float(line[t + 5:line.index(",", t) if ph == "X" else line.index("}", t)]) > end_us:
                    continue
            fields = dict(TRACE_FIELD.findall(line))
            ph = fields.get("ph")
            if ph is None or "pid" not in fields:
                continue
            pid = int(fields["pid"])
            if ph == "M":
                if not nodes or nodes[-1] != pid:
                    nodes.append(pid)
                continue
            if keep is None:
                keep = set(nodes[:max_nodes])
            if pid not in keep:
                continue
            ts = float(fields["ts"])
            if ph == "f":
                if fields.get("id") in sent:
                    events.append(json.loads(line.rstrip().rstrip(",")))
                continue
            if ts > end_us:
                continue
            e = json.loads(line.rstrip().rstrip(","))
            if ph == "X" and ts + e["dur"] < start_us:
                continue
            if ph == "s":
                sent.add(fields.get("id"))
            events.append(e)
    return nodes, events


def timeline(out, label, trace_path, window, changes=(), start_values=(), run_end=None):
    """timeline-<label>.png: per node, its iterations, sends, transfers and
    merges within a window (the first DEFAULT_WINDOW_S s by default), drawn
    as a few collections so that a dense run takes seconds."""
    from matplotlib.collections import LineCollection

    if not run_end or not math.isfinite(run_end):
        with open(trace_path) as f:
            spans = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
        run_end = max((e["ts"] + e["dur"] for e in spans), default=0) / 1e6
    start, end = window if window else (0.0, min(run_end, DEFAULT_WINDOW_S))
    all_nodes, events = trace_window(trace_path, start * 1e6, end * 1e6, MAX_TIMELINE_NODES)
    spans = [e for e in events if e["ph"] == "X"]
    nodes = sorted(set(all_nodes) | {e["pid"] for e in events})
    if not spans:
        print(f"plot: timeline-{label}.png not drawn: no iteration within {start:g}-{end:g} s "
              f"(the run ends at {run_end:.4g} s)", file=sys.stderr)
        return
    if len(nodes) > MAX_TIMELINE_NODES:
        # A track per node stops being readable (and the figure drawable) long
        # before a thousand nodes: the first ones, said so.
        print(f"plot: timeline-{label}.png shows nodes {nodes[0]}-{nodes[MAX_TIMELINE_NODES - 1]} of {len(nodes)}",
              file=sys.stderr)
        nodes = nodes[:MAX_TIMELINE_NODES]
        keep = set(nodes)
        changes = [c for c in changes if not c["target"].startswith("n") or not c["target"][1:].split("->")[0].isdigit()
                   or int(c["target"][1:].split("->")[0]) in keep]
    if not window and run_end > DEFAULT_WINDOW_S:
        print(f"plot: timeline-{label}.png shows the first {DEFAULT_WINDOW_S:g} s of {run_end:.0f} "
              "(--window START,END for another span)", file=sys.stderr)
    steps = {k: value_steps(changes, k, run_end, start_values) for k in STEP_UNITS}
    steps = {k: v for k, v in steps.items() if v}
    if steps:
        # The values that /network/profiles and /compute/profiles applied, under the node tracks.
        fig, axs = plt.subplots(1 + len(steps), 1, figsize=(12, 0.6 * len(nodes) + 1.5 + 2.5 * len(steps)),
                                sharex=True,
                                gridspec_kw={"height_ratios": [0.6 * len(nodes) + 1.5] + [2.5] * len(steps)})
        ax, lowest = axs[0], axs[-1]
        for panel, (kind, curves) in zip(axs[1:], steps.items()):
            for target, (ts, vs) in curves.items():
                panel.step(ts, vs, where="post", label=target)
            panel.set_ylabel(STEP_UNITS[kind])
            panel.grid(alpha=0.3)
            panel.legend(loc="upper right", fontsize=8)
    else:
        fig, ax = plt.subplots(figsize=(12, 0.6 * len(nodes) + 1.5))
        lowest = ax
    # Churn: down periods as grey hatched bars over the node's track.
    for n, periods in down_periods(changes, run_end).items():
        for t0, t1, kind in periods:
            if t1 < start or t0 > end:
                continue
            # Above the arrows, so that a dense run still shows them.
            ax.broken_barh([(t0, t1 - t0)], (n - 0.4, 0.8), facecolor="#bbbbbb", alpha=0.85,
                           hatch="xx" if kind == "crash" else "//", edgecolor="#666666", linewidth=0.4, zorder=2.5)
    lost = [(number(c["time_s"]), int(c["target"].split("->")[1][1:])) for c in changes if c["kind"] == "lost"]
    lost = [(t, n) for t, n in lost if start <= t <= end]
    if lost:
        ax.scatter([t for t, _ in lost], [n + 0.3 for _, n in lost], marker="x", color="black", s=24,
                   label="lost transfer", zorder=3)
    cross = [number(c["time_s"]) for c in changes if c["kind"] == "cross-traffic"]
    if cross:
        ax.axvspan(max(start, min(cross)), min(end, max(cross)), color="#f0e442", alpha=0.2, zorder=0,
                   label=f"cross-traffic arrivals ({len(cross)} flows)")
    # Iterations and sends: one collection per node and kind.
    colours = {"compute": "#4c72b0", "send": "#dd8452"}
    bars = {}
    for e in spans:
        t0, t1 = e["ts"] / 1e6, (e["ts"] + e["dur"]) / 1e6
        if t1 < start or t0 > end:
            continue
        bars.setdefault((e["pid"], e["name"]), []).append((t0, t1 - t0))
    for (pid, name), xs in bars.items():
        y = pid + (0.0 if name == "compute" else 0.3)
        ax.broken_barh(xs, (y - 0.12, 0.24), facecolor=colours.get(name, "grey"), edgecolor="white", linewidth=0.4)
    # Transfers (allreduce's ring chunks among them): one line collection,
    # with a dot at each arrival.
    flows = {}
    for e in events:
        if e["ph"] in ("s", "f"):
            flows.setdefault(e["id"], {})[e["ph"]] = e
    segments = []
    for pair in flows.values():
        if "s" in pair and "f" in pair:
            t0, t1 = pair["s"]["ts"] / 1e6, pair["f"]["ts"] / 1e6
            if t1 < start or t0 > end:
                continue
            segments.append([(t0, pair["s"]["pid"] + 0.3), (t1, pair["f"]["pid"] - 0.3)])
    if segments:
        ax.add_collection(LineCollection(segments, colors="#55a868", linewidths=0.8, alpha=0.7))
        ax.scatter([s[1][0] for s in segments], [s[1][1] for s in segments], marker=".", s=8, color="#55a868",
                   zorder=2.6)
    merges = [(e["ts"] / 1e6, e["pid"]) for e in events if e["ph"] == "i" and start <= e["ts"] / 1e6 <= end]
    if merges:
        ax.scatter([m[0] for m in merges], [m[1] - 0.3 for m in merges], marker="v", color="#c44e52", s=18,
                   label="merge", zorder=3)
    ax.set_xlim(start, end)
    ax.set_yticks(nodes)
    ax.set_yticklabels([f"n{n}" for n in nodes])
    ax.set_ylim(max(nodes) + 0.6, min(nodes) - 0.6)
    lowest.set_xlabel("virtual time (s)")
    ax.set_title(f"{label}, {start:.4g}-{end:.4g} s of {run_end:.4g}: compute (blue, one box per iteration), sending "
                 "(orange), transfers (green, dot at arrival), merges (red); idle is blank; down: hatched", fontsize=9)
    if merges or lost or cross:
        ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    name = "timeline-" + re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-") + ".png"
    save(fig, os.path.join(out, name))
    note(name, window=[start, end], run_end_s=run_end, transfers=len(segments),
         steps={k: {t: v[1][0] for t, v in c.items()} for k, c in steps.items()})
    plt.close(fig)


# The columns of sweep.csv that its figures read as numbers.
SWEEP_NUMBER_COLUMNS = ("final_accuracy", "best_accuracy", "time_to_target_s", "time_to_target_node_mean_s",
                        "time_to_target_node_min_s", "merges", "staleness_mean_s", "partners")


def plot_sweep(folder, out):
    """sweep.png: time to the first target against the first axis, per method
    (mean over the other axes, seeds included), and the speed-up of the
    method under study over each other method at every value of that axis."""
    path = os.path.join(folder, "sweep.csv")
    rows = read_csv(path)
    if not rows:
        return
    # Every number the sweep's figures read, checked once here, so that a
    # damaged sweep.csv is refused in one line naming its line and column.
    for line, r in enumerate(rows, start=2):
        for column in SWEEP_NUMBER_COLUMNS:
            text = r.get(column) or ""
            try:
                ok = text == "" or (math.isfinite(float(text)) and float(text) >= 0)
            except ValueError:
                ok = False
            if not ok:
                raise PlotError(f"{path} line {line}: {column}: expected a number >= 0 or nothing, got {text!r}")
    columns = list(rows[0].keys())
    axes = columns[1:columns.index("method")]
    x_axis = axes[0]
    targets = sorted({r["target"] for r in rows if r["target"]}, key=float)
    if not targets:
        return
    target = targets[0]
    all_rows, rows = rows, [r for r in rows if r["target"] == target]

    xs = sorted({r[x_axis] for r in rows}, key=axis_value_key)
    labels = list(dict.fromkeys(r["label"] for r in rows))
    reference = {r["label"]: r.get("reference") == "1" for r in rows}
    time = {}
    for r in rows:
        rest = tuple(r[a] for a in axes[1:])
        time[(r["label"], r[x_axis], rest)] = number(r["time_to_target_s"])
    fig, axs = plt.subplots(1, 2, figsize=(12, 4.5))
    positions = np.arange(len(xs))
    for l in labels:
        stats = []
        for x in xs:
            v = [t for (ll, xx, _), t in time.items() if ll == l and xx == x and math.isfinite(t)]
            stats.append(interval(v))
        means, halves = np.array(stats).T
        axs[0].errorbar(positions, means, yerr=np.nan_to_num(halves), marker="o", capsize=3, label=l)
    sched = [l for l in labels if reference[l]]
    if sched:
        for l in labels:
            if l == sched[0]:
                continue
            mid, low, high = [], [], []
            for x in xs:
                v = [time[(l, xx, rest)] / t for (ll, xx, rest), t in time.items()
                     if ll == sched[0] and xx == x and math.isfinite(t) and t > 0
                     and math.isfinite(time.get((l, xx, rest), math.inf))]
                g, lo, hi = ratio_interval(v) if v else (math.nan, math.nan, math.nan)
                mid.append(g)
                low.append(g - lo if math.isfinite(lo) else 0)
                high.append(hi - g if math.isfinite(hi) else 0)
            axs[1].errorbar(positions, mid, yerr=[low, high], marker="o", capsize=3, label=f"over {l}")
        axs[1].axhline(1.0, color="grey", lw=0.8, ls=":")
        axs[1].set_ylabel(f"speed-up of {sched[0]} to accuracy {target}")
        axs[1].legend()
    for ax in axs:
        ax.set_xticks(list(positions))
        ax.set_xticklabels(xs, rotation=20)
        ax.set_xlabel(x_axis)
        ax.grid(alpha=0.3)
    axs[0].set_ylabel(f"virtual seconds to accuracy {target} (mean, 95% CI)")
    axs[0].legend()
    fig.tight_layout()
    save(fig, os.path.join(out, "sweep.png"))
    plt.close(fig)
    sweep_map(all_rows, axes, out, target)
    if any(r.get("time_to_target_node_mean_s") for r in all_rows):
        sweep_map(all_rows, axes, out, target, "node_mean", "sweep-map-node_mean.png")
    write_sweep_tables(all_rows, axes, out)


MAX_MAP_PANELS = 16


def sweep_map(rows, axes, out, target, metric="average", name="sweep-map.png"):
    """sweep-map.png: where the method under study wins. For the first two
    axes other than /seed (rows and columns), one heat map per combination
    of the remaining axes: the speed-up of the reference method over each
    other method to `target` (geometric mean over the seeds where both
    reached it), on a log colour scale centred on 1; a cell whose 95%
    interval excludes 1 is marked (+ faster, - slower), one with fewer than
    two such seeds says so. `metric` chooses the times: the average
    model's or the nodes' own (node_mean)."""
    column = "time_to_target_s" if metric == "average" else f"time_to_target_{metric}_s"
    seed_axis = "/seed" if "/seed" in axes else None
    free = [a for a in axes if a != seed_axis]
    if len(free) < 2:
        return
    y_axis, x_axis, rest = free[0], free[1], free[2:]

    rows = [r for r in rows if r["target"] == target]
    ref = next((r["label"] for r in rows if r.get("reference") == "1"), None)
    others = list(dict.fromkeys(r["label"] for r in rows if r.get("reference") != "1"))
    if not ref or not others:
        return
    times, mechanism = {}, {}
    for r in rows:
        seed = r[seed_axis] if seed_axis else r["point"]
        key = (r["label"], r[y_axis], r[x_axis], tuple(r[a] for a in rest), seed)
        times[key] = number(r[column]) if r.get(column) else math.inf
        # What each method did there (sweep.csv since they were gathered):
        # merges, their mean staleness and its effective partners per node.
        mechanism[key] = tuple(number(r[c]) if r.get(c) else None
                               for c in ("merges", "staleness_mean_s", "partners"))
    ys = sorted({r[y_axis] for r in rows}, key=axis_value_key)
    xs = sorted({r[x_axis] for r in rows}, key=axis_value_key)
    facets = list(dict.fromkeys(tuple(r[a] for a in rest) for r in rows))[:MAX_MAP_PANELS]
    panels = [(o, f) for o in others for f in facets][:MAX_MAP_PANELS]
    cols = min(4, len(panels))
    n_rows = (len(panels) + cols - 1) // cols
    fig, axs = plt.subplots(n_rows, cols, figsize=(4.8 * cols + 1.5, 3.8 * n_rows + 0.8), squeeze=False,
                            layout="constrained")
    from matplotlib.colors import LogNorm
    norm = LogNorm(vmin=1 / 4, vmax=4)
    facts, image, tables, why_points = [], None, [], []
    for ax, (other, facet) in zip(axs.flat, panels):
        grid = np.full((len(ys), len(xs)), np.nan)
        cells_text = [["" for _ in xs] for _ in ys]
        mechanism_text = [["-" for _ in xs] for _ in ys]
        for i, y in enumerate(ys):
            for j, x in enumerate(xs):
                seeds = {k[4] for k in times if k[0] == ref and k[1] == y and k[2] == x and k[3] == facet}
                ratios = [times[(other, y, x, facet, s)] / times[(ref, y, x, facet, s)] for s in seeds
                          if math.isfinite(times.get((other, y, x, facet, s), math.inf))
                          and math.isfinite(times[(ref, y, x, facet, s)]) and times[(ref, y, x, facet, s)] > 0]
                # Seeds where each of the two reached the target: where they
                # differ the cell says so, since a cell without a value can hide
                # that one method always reached it and the other never did.
                ref_reached = sum(1 for s in seeds if math.isfinite(times[(ref, y, x, facet, s)]))
                other_reached = sum(1 for s in seeds if math.isfinite(times.get((other, y, x, facet, s), math.inf)))
                mark = f"{len(ratios)}/{len(seeds)}"
                if len(ratios) >= 2:
                    g, lo, hi = ratio_interval(ratios)
                    grid[i, j] = g
                    mark = f"{g:.2f}" + ("+" if lo > 1 else "-" if hi < 1 else "")
                    facts.append({"other": other, "facet": list(facet), y_axis: y, x_axis: x, "speedup": g,
                                  "low": lo, "high": hi, "seeds": len(ratios), "reference_reached": ref_reached,
                                  "other_reached": other_reached, "of": len(seeds)})
                elif len(ratios) == 1:
                    mark = f"{ratios[0]:.2f}?"
                text = (f"{grid[i, j]:.2f}x [{lo:.2f}, {hi:.2f}]" + (" **+**" if lo > 1 else " **-**" if hi < 1 else "")
                        if len(ratios) >= 2 else f"{ratios[0]:.2f}x, one seed" if ratios else "no seed where both did")
                if ref_reached != other_reached:
                    mark += f"\n{ref_reached} vs {other_reached}"
                    text += f" ({ref_reached} vs {other_reached} of {len(seeds)})"
                cells_text[i][j] = text
                mechanism_text[i][j], merges, partners = cell_mechanism(
                    mechanism, ref, other, (y, x, facet), seeds)
                if len(ratios) >= 2 and merges and partners:
                    why_points.append({"other": other, "facet": facet, "speedup": g, "low": lo, "high": hi,
                                       "merges": merges, "partners": partners})
                dark = math.isfinite(grid[i, j]) and not 0.4 < grid[i, j] < 2.5  # white on the deep colours
                ax.text(j, i, mark, ha="center", va="center", fontsize=7, color="white" if dark else "black")
        image = ax.imshow(np.clip(grid, 1 / 4, 4), cmap="RdBu", norm=norm, aspect="auto")
        ax.set_xticks(range(len(xs)))
        ax.set_xticklabels(xs, rotation=30, fontsize=6)
        ax.set_yticks(range(len(ys)))
        ax.set_yticklabels(ys, fontsize=6)
        ax.set_xlabel(x_axis, fontsize=7)
        ax.set_ylabel(y_axis, fontsize=7)
        # One line per remaining axis, named by its last path component: the
        # panels sit side by side and whole paths ran into each other.
        ax.set_title("\n".join([f"{ref} over {other}"] + [f"{a.rsplit('/', 1)[-1]} = {v}" for a, v in zip(rest, facet)]),
                     fontsize=7)
        tables.append((other, facet, cells_text, mechanism_text))
    for ax in list(axs.flat)[len(panels):]:
        ax.axis("off")
    if image is not None:
        bar = fig.colorbar(image, ax=axs, fraction=0.04)
        bar.set_ticks([0.25, 0.5, 1, 2, 4])
        bar.set_ticklabels(["1/4", "1/2", "1", "2", "4"])
        bar.set_label(f"speed-up (> 1: {ref} faster)", fontsize=8)
    fig.suptitle(f"Speed-up to accuracy {target} on {TARGET_METRICS[metric]}, geometric mean over seeds\n"
                 "+ / -: its 95% interval lies above / below 1; k/n: seeds where both reached it\n"
                 f"a vs b: seeds where {ref} / the other reached it, where they differ", fontsize=8)
    save(fig, os.path.join(out, name))
    note(name, reference=ref, target=target, cells=facts)
    if why_points:
        sweep_map_why(why_points, ref, rest, target, metric, out, name[:-len(".png")] + "-why.png")
    # The same cells as text, one table per panel (name.md beside name.png).
    with open(os.path.join(out, name[:-len(".png")] + ".md"), "w") as f:
        f.write(f"Speed-up of {ref} to accuracy {target} on {TARGET_METRICS[metric]}: geometric mean over the "
                "seeds where both reached it [95% interval]; **+** / **-**: the interval lies above / below 1; "
                f"(a vs b of n): the seeds where {ref} / the "
                f"other reached it, where they differ. Rows: {y_axis}; columns: {x_axis}.\n")
        for other, facet, cells_text, mechanism_text in tables:
            where = "; " + ", ".join(f"{a} = {v}" for a, v in zip(rest, facet)) if rest else ""
            for heading, cells in ((f"{ref} over {other}", cells_text),
                                   (f"why: {ref}'s merges and their mean staleness over {other}'s (geometric mean "
                                    f"over seeds), and each one's effective partners per node ({ref} vs {other})",
                                    mechanism_text)):
                if cells is mechanism_text and all(c == "-" for row in cells for c in row):
                    continue  # a sweep.csv gathered before merges were
                f.write(f"\n### {heading}{where}\n\n")
                f.write(f"| {y_axis} | " + " | ".join(str(x) for x in xs) + " |\n")
                f.write("|---" * (len(xs) + 1) + "|\n")
                for y, row in zip(ys, cells):
                    f.write(f"| {y} | " + " | ".join(row) + " |\n")
    plt.close(fig)


def cell_mechanism(mechanism, ref, other, cell, seeds):
    """Why a map cell came out as it did: the reference's merges and mean
    staleness over the other's (geometric mean of the per-seed ratios, over
    the seeds where both have them) and each one's effective partners per
    node (mean over seeds). Returns the cell's text and the merges and
    partners ratios (None where missing)."""
    def values(label, n):
        return {s: mechanism[(label, *cell, s)][n] for s in seeds
                if (label, *cell, s) in mechanism and mechanism[(label, *cell, s)][n]}
    why, ratio = [], {}
    for n, what in enumerate(("merges", "staleness")):
        mine, theirs = values(ref, n), values(other, n)
        logs = [math.log(mine[s] / theirs[s]) for s in mine if s in theirs]
        if logs:
            ratio[what] = math.exp(sum(logs) / len(logs))
            why.append(f"{what} {ratio[what]:.2f}x")
    partners = [list(values(label, 2).values()) for label in (ref, other)]
    partners_ratio = None
    if all(partners):
        means = [sum(p) / len(p) for p in partners]
        why.append("partners " + " vs ".join(f"{m:.1f}" for m in means))
        partners_ratio = means[0] / means[1]
    return ", ".join(why) or "-", ratio.get("merges"), partners_ratio


def compact(value):
    """An axis value for a legend: a JSON object without its quotes."""
    return str(value).replace('"', "").replace(" ", "")


def sweep_map_why(points, ref, rest, target, metric, out, name):
    """sweep-map-why.png: the map's cells against their mechanism. Each cell
    with an interval is a point: its speed-up against the reference's merges
    over the other's (left) and against its effective partners per node over
    the other's (right); filled where the interval excludes 1, hollow where
    it does not (the intervals themselves are in sweep-map.md: with two or
    three seeds they span decades and would hide the points); one colour per
    combination of the axes beyond the map's two."""
    from matplotlib.ticker import FixedLocator, FormatStrFormatter, NullFormatter
    facets = list(dict.fromkeys(p["facet"] for p in points))
    colours = plt.cm.tab10(np.linspace(0, 1, 10))
    fig = plt.figure(figsize=(10, 5.2 + 0.16 * len(facets)), layout="constrained")
    grid = fig.add_gridspec(2, 2, height_ratios=[5, 0.2 + 0.16 * len(facets)])
    axs = [fig.add_subplot(grid[0, 0])]
    axs.append(fig.add_subplot(grid[0, 1], sharey=axs[0]))
    legend_ax = fig.add_subplot(grid[1, :])
    legend_ax.axis("off")
    for ax, key, label in ((axs[0], "merges", f"merges: {ref} / the other"),
                           (axs[1], "partners", f"effective partners per node: {ref} / the other")):
        for k, facet in enumerate(facets):
            mine = [p for p in points if p["facet"] == facet]
            decided = [p for p in mine if p["low"] > 1 or p["high"] < 1]
            undecided = [p for p in mine if not (p["low"] > 1 or p["high"] < 1)]
            colour = colours[k % 10]
            ax.scatter([p[key] for p in decided], [p["speedup"] for p in decided], s=22, color=colour,
                       label=", ".join(f"{a.rsplit('/', 1)[-1]} = {compact(v)}" for a, v in zip(rest, facet)) or "all")
            ax.scatter([p[key] for p in undecided], [p["speedup"] for p in undecided], s=22, facecolors="none",
                       edgecolors=colour)
        ax.axhline(1, color="black", lw=0.8)
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(FixedLocator([0.25, 0.35, 0.5, 0.7, 1, 1.4, 2, 2.8, 4]))
        ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(label, fontsize=8)
        ax.grid(alpha=0.3)
    axs[0].set_ylabel(f"speed-up to {target} on {TARGET_METRICS[metric]}\n(> 1: {ref} faster)", fontsize=8)
    legend_ax.legend(*axs[0].get_legend_handles_labels(), fontsize=7, loc="center", ncol=1, frameon=False)
    fig.suptitle("Each cell of the map: its speed-up against what the methods did "
                 "(filled: the 95% interval excludes 1; hollow: it does not)", fontsize=9)
    save(fig, os.path.join(out, name))
    note(name, reference=ref, target=target,
         points=[{**{k: v for k, v in p.items() if k != "facet"}, "facet": list(p["facet"])} for p in points])
    plt.close(fig)


def write_sweep_tables(rows, axes, out):
    """time_to_accuracy.md / .csv of a sweep: one section per combination of
    the axes other than /seed, statistics over the seeds."""
    seed_axis = "/seed" if "/seed" in axes else None
    groups = [a for a in axes if a != seed_axis]
    targets = sorted({float(r["target"]) for r in rows if r["target"]})
    # The average model's times, and the node mean's beside them where the
    # sweep has them (time_to_target_node_mean_s, summaries since 0.2).
    columns = {"average": "time_to_target_s"}
    if any(r.get("time_to_target_node_mean_s") for r in rows):
        columns["node_mean"] = "time_to_target_node_mean_s"
    sections = {}
    for metric, column in columns.items():
        for r in rows:
            g = tuple(r[a] for a in groups)
            key = (g, metric) if len(columns) > 1 else (g, None)
            seed = r[seed_axis] if seed_axis else r["point"]
            o = sections.setdefault(key, {}).setdefault(r["label"], {}).setdefault(
                seed, {"reference": r.get("reference") == "1", "final": number(r["final_accuracy"]), "times": {}})
            if r["target"]:
                o["times"][float(r["target"])] = number(r[column]) if r.get(column) else math.inf
    if not targets:
        return
    def title(g, metric):
        text = ", ".join(f"{a} = {v}" for a, v in zip(groups, g))
        return text + (f"; time to target on {TARGET_METRICS[metric]} ({metric})" if metric else "")
    order = list(dict.fromkeys(g for g, _ in sections))  # each combination's average, then its node mean
    keys = [(g, m if len(columns) > 1 else None) for g in order for m in columns]
    write_tables(out, [(title(g, metric), {**dict(zip(groups, g)), **({"metric": metric} if metric else {})},
                        sections[(g, metric)]) for g, metric in keys], targets)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+")
    p.add_argument("--out")
    p.add_argument("--window", help="START,END in virtual seconds for timelines (default: the first "
                                    f"{DEFAULT_WINDOW_S:g} s)")
    p.add_argument("--methods", help="only these method labels (comma-separated)")
    p.add_argument("--side-by-side", action="store_true",
                   help="draw runs whose scenarios differ as separate configurations instead of refusing to pool them")
    a = p.parse_args(argv)
    out = a.out or a.results[0]
    os.makedirs(out, exist_ok=True)
    window = parse_window(a.window) if a.window else None
    if all(os.path.exists(os.path.join(f, "sweep.csv")) and not os.path.exists(os.path.join(f, "summary.json"))
           for f in a.results):
        FACTS.clear()
        plot_sweep(a.results[0], out)
        with open(os.path.join(out, "figures.json"), "w") as f:
            json.dump(FACTS, f, indent=1)
        print(out)
        return

    by_label, targets, title, evaluated, first = {}, [], "", False, None
    names = run_names(a.results)
    loaded = []
    for folder in a.results:
        summary, methods = load_run(folder)
        with open(os.path.join(folder, "scenario.json")) as f:
            scenario = json.load(f)
        loaded.append((folder, summary, methods, scenario))
    kinds = {folder: run_kind(summary, scenario) for folder, summary, _, scenario in loaded}
    compare = "real" in kinds.values() and any(k != "real" for k in kinds.values()) and not a.side_by_side
    real_settings = {}
    for folder, summary, methods, scenario in loaded:
        if compare:
            refuse_invalid_real(folder, summary)
        if kinds[folder] == "real":
            # Its connections and dilation, and the flow model its scheduler's estimates start from.
            net = scenario.get("network", {})
            settings = {k: net[k] for k in ("real", "model", "slowstart", "tcp") if k in net}
            for other, theirs in real_settings.items():
                if theirs != settings:
                    raise PlotError(f"{folder}: /network is {json.dumps(settings)[:80]} where {other} has "
                                    f"{json.dumps(theirs)[:80]}: real runs are pooled as repetitions only under the "
                                    "same /network/real and flow model (plot them apart)")
            real_settings[folder] = settings
        if first is None:
            first = (folder, scenario)
        elif not a.side_by_side:
            refuse_to_pool(first, (folder, scenario), ignore_network_model=compare)
        title = summary["scenario"] if not a.side_by_side else " vs ".join(names.values())
        if compare:
            title = summary["scenario"] + ": simulation against real runs"
        targets = scenario.get("eval", {}).get("targets", targets)
        evaluated = evaluated or summary.get("kernels") != "none"
        for label, run in methods.items():
            run["kind"] = kinds[folder]
            key = f"{label} [{names[folder]}]" if a.side_by_side else f"{label} [{kinds[folder]}]" if compare else label
            by_label.setdefault(key, []).append(run)

    if a.methods:
        wanted = [m for m in a.methods.split(",") if m]
        have = {l.split(" [")[0] for l in by_label}
        unknown = [m for m in wanted if m not in have]
        if unknown:
            raise PlotError(f"--methods: no method labelled {unknown[0]} in these results; their labels are "
                            + ", ".join(dict.fromkeys(l.split(" [")[0] for l in by_label)))
        by_label = {l: r for l, r in by_label.items() if l.split(" [")[0] in wanted}
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colour = {l: colours[i % len(colours)] for i, l in enumerate(by_label)}
    LINE.clear()
    if compare:
        bases = list(dict.fromkeys(l.rsplit(" [", 1)[0] for l in by_label))
        for l, runs in by_label.items():
            colour[l] = colours[bases.index(l.rsplit(" [", 1)[0]) % len(colours)]
            LINE[l] = KIND_STYLE.get(runs[0]["kind"], {"ls": "--", "lw": 1.2})
    FACTS.clear()
    if evaluated:
        curves(out, by_label, colour, targets, title)
    else:
        for name in ("accuracy.png", "loss.png", "consensus.png", "consensus_regions.png", "time_to_accuracy.md",
                     "time_to_accuracy.csv"):
            if os.path.exists(os.path.join(out, name)):
                os.remove(os.path.join(out, name))  # an earlier plot's, of other runs: not of these
        print("plot: accuracy, loss and consensus not drawn, no time-to-accuracy table: not evaluated "
              "(timeline only, --kernels none)", file=sys.stderr)
        note("skipped", accuracy="not evaluated: timeline only")
    staleness(out, by_label, colour, title)
    activity(out, by_label, colour, title)
    heat_maps(out, by_label, "matrix", "src", "dst", "comm_matrix.png", "node")
    heat_maps(out, by_label, "regions", "src_region", "dst_region", "comm_regions.png", "region")
    regional_consensus(out, by_label, colour, title)
    if targets and evaluated:
        # The average model and the nodes' own (mean over nodes) side by
        # side: a decentralized user deploys a node's model, not the average.
        sections = [(f"Time to target on {TARGET_METRICS[m]} ({m})", {"metric": m}, outcomes_of_runs(by_label, targets, m))
                    for m in ("average", "node_mean")]
        sections = [sec for sec in sections if sec[2] is not None]
        if len(sections) == 1 or not sections:
            sections = [("", {}, outcomes_of_runs(by_label, targets))]
        write_tables(out, sections, targets)
    if compare:
        sim_vs_real(out, by_label, targets if evaluated else [])
    for l, runs in by_label.items():
        if runs[0]["trace"]:
            timeline(out, l, runs[0]["trace"], window, runs[0]["events"], runs[0]["summary"].get("profile_start", []),
                     number(runs[0]["summary"].get("virtual_s")))
    with open(os.path.join(out, "figures.json"), "w") as f:
        json.dump(FACTS, f, indent=1)
    print(out)


def parse_window(text):
    try:
        start, end = (float(v) for v in text.split(","))
    except ValueError:
        raise PlotError(f"--window: expected START,END in virtual seconds, got {text!r}") from None
    if not (math.isfinite(start) and math.isfinite(end) and 0 <= start < end):
        raise PlotError(f"--window: expected 0 <= START < END, got {text!r}")
    return start, end


def run_names(folders):
    """A short name per results folder: its last path part, made unique."""
    names = {}
    for f in folders:
        base = os.path.basename(os.path.normpath(f)) or f
        name, k = base, 2
        while name in names.values():
            name, k = f"{base}-{k}", k + 1
        names[f] = name
    return names


def first_difference(a, b, path=""):
    """The JSON path of the first place two documents differ, and the two values there (None if equal)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{path}/{k}", a.get(k, "(absent)"), b.get(k, "(absent)")
            d = first_difference(a[k], b[k], f"{path}/{k}")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}/{i}")
            if d:
                return d
        if len(a) != len(b):
            return f"{path}/{min(len(a), len(b))}", *(v[min(len(a), len(b))] if len(v) > min(len(a), len(b))
                                                      else "(absent)" for v in (a, b))
        return None
    return None if a == b else (path or "/", a, b)


def without_network_model(scenario):
    """The scenario less what a real run does not read: the flow model and its options, and /network/real."""
    s = {k: v for k, v in scenario.items() if k != "seed"}
    if isinstance(s.get("network"), dict):
        s["network"] = {k: v for k, v in s["network"].items() if k not in ("model", "tcp", "slowstart", "real")}
    return s


def refuse_to_pool(first, other, ignore_network_model=False):
    """Runs are pooled as seeds only when their scenarios differ in /seed
    alone (and, comparing simulations with real runs, in /network's flow
    model)."""
    (fa, a), (fb, b) = first, other
    if ignore_network_model:
        d = first_difference(without_network_model(a), without_network_model(b))
    else:
        d = first_difference({k: v for k, v in a.items() if k != "seed"}, {k: v for k, v in b.items() if k != "seed"})
    if d:
        def show(v):
            return json.dumps(v)[:60]

        raise PlotError(f"{fb}: scenario.json {d[0]} is {show(d[2])} where {fa} has {show(d[1])}: runs are pooled as "
                        "seeds only when their scenarios differ in /seed alone (--side-by-side draws them apart)")


def run_kind(summary, scenario):
    """"real" for a result of `run --real`, else "sim <flow model>"."""
    if summary.get("real"):
        return "real"
    return "sim " + scenario.get("network", {}).get("model", "maxmin")


def refuse_invalid_real(folder, summary):
    for m in summary["methods"]:
        r = m.get("real") or {}
        if r and not r.get("valid", True):
            raise PlotError(f"{folder}: {m['label']} is marked invalid ({r.get('invalid_because', '')}): "
                            "a comparison with it would mislead (run it again, dilated: /network/real/dilation)")


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


def sim_vs_real(out, by_label, targets):
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
    with open(os.path.join(out, "sim_vs_real.md"), "w") as f:
        f.write("\n".join(md))
    with open(os.path.join(out, "sim_vs_real.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        names = ["method", "run", "runs", "measure", "mean", "min", "max", "difference_pct", "outside_real_range"]
        w.writerow(names)
        for r in rows:
            w.writerow([csv_value(r[n]) if isinstance(r[n], float) else r[n] for n in names])
    note("sim_vs_real.md", methods=list(per_method), kinds=sorted({k for v in per_method.values() for k in v}))


def curves(out, by_label, colour, targets, title):
    """accuracy.png, loss.png and consensus.png."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    bands = []
    for l, runs in by_label.items():
        bands.append(band_plot(axes[0], runs, l, "time_s", "accuracy", colour[l]))
        bands.append(band_plot(axes[1], runs, l, "epochs", "accuracy", colour[l]))
    axes[0].set_xlabel("virtual time (s)")
    axes[1].set_xlabel("epochs (samples processed by all nodes / training set)")
    for ax in axes:
        ax.set_ylabel("test accuracy of the average model")
        ax.grid(alpha=0.3)
        for t in targets:
            ax.axhline(t, color="grey", lw=0.5, ls=":")
            ax.annotate(f"target {t:g}", xy=(1, t), xycoords=("axes fraction", "data"), xytext=(-2, 2),
                        textcoords="offset points", ha="right", va="bottom", fontsize=7, color="grey")
    fig.suptitle(title)
    if len(by_label) > MAX_LEGEND_INSIDE:  # beside the panels: inside, so many entries hide the curves
        fig.set_size_inches(15, 5)
        legend = axes[0].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.03, 1.0),
                                bbox_transform=axes[1].transAxes)
        legend.set_in_layout(False)
        fig.tight_layout(rect=(0, 0, 0.8, 1))
    else:
        axes[0].legend(fontsize=8)
        fig.tight_layout()
    save(fig, os.path.join(out, "accuracy.png"))
    note("accuracy.png", **axis_facts(axes[0]), targets=list(targets), **band_range(bands),
         target_labels=[t.get_text() for t in axes[0].texts])
    plt.close(fig)

    for name, column, ylabel, log in (("loss", "loss", "test loss of the average model", False),
                                      ("consensus", "consensus", "consensus distance (mean ||x_i - x_bar||^2)", True)):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        bands = [band_plot(ax, runs, l, "time_s", column, colour[l]) for l, runs in by_label.items()]
        ax.set_xlabel("virtual time (s)")
        ax.set_ylabel(ylabel)
        if log:
            ax.set_yscale("symlog", linthresh=1e-6)
        ax.grid(alpha=0.3)
        ax.set_title(title)
        if len(by_label) > MAX_LEGEND_INSIDE:
            fig.set_size_inches(10.5, 4.5)
            legend = ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
            legend.set_in_layout(False)
            fig.tight_layout(rect=(0, 0, 0.7, 1))
        else:
            ax.legend(fontsize=8)
            fig.tight_layout()
        save(fig, os.path.join(out, f"{name}.png"))
        note(f"{name}.png", **axis_facts(ax), **band_range(bands))
        plt.close(fig)


def staleness(out, by_label, colour, title):
    """staleness.png: every method whose transfers were merged."""
    fig, ax = plt.subplots(figsize=(9.5, 4.5))
    drawn = False
    values = {l: np.concatenate([r["transfers"]["staleness_s"] for r in runs]) for l, runs in by_label.items()}
    values = {l: v[~np.isnan(v)] for l, v in values.items()}
    every = np.concatenate(list(values.values())) if values else np.array([])
    # One set of bins for every method, so that bar heights compare.
    edges = np.linspace(every.min(), every.max(), 41) if len(every) and every.max() > every.min() else 40
    for l, runs in by_label.items():
        s = values[l]
        if len(s):
            # Per run: labels pooled over different numbers of runs (seeds,
            # or real repetitions against one simulation) compare as they are.
            ax.hist(s, bins=edges, histtype="step", weights=np.full(len(s), 1.0 / len(runs)),
                    label=f"{l} (median {np.median(s):.2f} s)", color=colour[l],
                    linestyle=LINE.get(l, {}).get("ls", "-"), linewidth=LINE.get(l, {}).get("lw", 1.0))
            drawn = True
    ax.set_xlabel("staleness: virtual seconds from snapshot to merge")
    ax.set_ylabel("merged models (per run)")
    if drawn:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)  # beside the bars, never over them
    ax.set_title(title)
    fig.tight_layout()
    save(fig, os.path.join(out, "staleness.png"))
    legend = ax.get_legend()
    # Measured on the figure as drawn: whether the legend lies beside the axes, clear of the bars.
    beside = bool(legend and legend.get_window_extent().x0 >= ax.get_window_extent().x1)
    note("staleness.png", **axis_facts(ax), legend_beside_axes=beside)
    plt.close(fig)


ACTIVITY_BINS = 60


def busy_until(starts, ends, edges):
    """Per edge time t, the time within [0, t] that at least one of the
    intervals [starts, ends] covers (their union, so overlapping transfers
    of one node count once)."""
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > reach[:-1]
    group = np.cumsum(new) - 1
    gs = s[new]
    ge = np.zeros(len(gs))
    np.maximum.at(ge, group, e)
    full = np.concatenate(([0.0], np.cumsum(ge - gs)))  # busy time before each merged interval
    k = np.searchsorted(gs, edges, side="right")  # merged intervals started by t
    last = np.clip(k - 1, 0, None)
    partial = np.where(k > 0, np.clip(edges - gs[last], 0, ge[last] - gs[last]), 0.0)
    return full[last] * (k > 0) + partial


def activity(out, by_label, colour, title):
    """activity.png: a whole run at a glance, however long or large, from
    transfers.csv: transfers finished per second, and the share of each
    time bin in which a node had a transfer of its own in flight (median
    over nodes, with the band from the 10th to the 90th percentile)."""
    fig, (rate_ax, util_ax) = plt.subplots(2, 1, figsize=(9.5, 6.5), sharex=True)
    facts = {}
    for l, runs in by_label.items():
        run = runs[0]
        end = number(run["summary"].get("virtual_s")) or 0.0
        t = run["transfers"]
        if not t["rows"] or not end or not math.isfinite(end):
            continue
        edges = np.linspace(0.0, end, ACTIVITY_BINS + 1)
        width = edges[1] - edges[0]
        finish = t["finish_s"]
        counts, _ = np.histogram(finish[~np.isnan(finish)], bins=edges)
        centres = (edges[:-1] + edges[1:]) / 2
        rate_ax.plot(centres, counts / width, color=colour[l], **(LINE.get(l) or {"lw": 1}),
                     label=l + (f" (first of {len(runs)} runs)" if len(runs) > 1 else ""))
        ends = np.minimum(np.where(np.isnan(finish), end, finish), end)  # unfinished: in flight to the end
        names, node_of = np.unique(np.array(t["src"], dtype=object), return_inverse=True)
        order = np.argsort(node_of, kind="stable")
        bounds = np.searchsorted(node_of[order], np.arange(len(names) + 1))
        by_node = {names[k]: order[bounds[k]:bounds[k + 1]] for k in range(len(names))}
        shares, sending = [], {}
        for node, idx in sorted(by_node.items(), key=lambda kv: natural(kv[0])):
            busy = busy_until(t["start_s"][idx], ends[idx], edges)
            shares.append(np.diff(busy) / width)
            sending[node] = float(busy[-1])
        nodes = int(run["summary"].get("nodes", len(by_node)) or len(by_node))
        shares += [np.zeros(ACTIVITY_BINS)] * max(0, nodes - len(shares))  # nodes that never sent
        shares = np.clip(np.array(shares), 0.0, 1.0)
        lo, mid, hi = np.percentile(shares, [10, 50, 90], axis=0)
        if not LINE:  # comparing kinds of runs: the lines alone, bands would hide them
            util_ax.fill_between(centres, lo, hi, color=colour[l], alpha=0.2, lw=0)
        util_ax.plot(centres, mid, color=colour[l], label=l, **(LINE.get(l) or {"lw": 1}))
        facts[l] = {"transfers_finished": int(counts.sum()), "bin_s": float(width), "nodes": len(shares),
                    "sending_s": sending if len(sending) <= 64 else {},
                    "sending_share_median": float(np.mean(mid)), "sending_share_min": float(lo.min()),
                    "sending_share_max": float(hi.max())}
    if not facts:
        plt.close(fig)
        return
    rate_ax.set_ylabel("transfers finished per s\n(allreduce: ring chunks)")
    rate_ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    rate_ax.set_title(f"{title}: the whole run ({ACTIVITY_BINS} bins)", fontsize=10)
    util_ax.set_ylabel("share of time sending\n(median node)" if LINE else "share of time sending\n(median node; band 10-90%)")
    util_ax.set_ylim(0, 1.02)
    util_ax.set_xlabel("virtual time (s)")
    for ax in (rate_ax, util_ax):
        ax.grid(alpha=0.3)
        ax.set_xlim(0, max(number(r[0]["summary"].get("virtual_s")) or 0 for r in by_label.values()))
    fig.tight_layout()
    save(fig, os.path.join(out, "activity.png"))
    note("activity.png", methods=sorted(facts), per_method=facts, **axis_facts(util_ax))
    plt.close(fig)


def is_result(folder):
    """Whether a folder was written by gossipsim run or sweep (marker, or the files of older results)."""
    marker = os.path.join(folder, ".gossipsim")
    if os.path.isfile(marker):
        try:
            with open(marker) as f:
                return json.load(f).get("kind") in ("run", "sweep")
        except (OSError, ValueError, AttributeError):
            return False
    return (os.path.isfile(os.path.join(folder, "summary.json")) and os.path.isfile(os.path.join(folder, "scenario.json"))) \
        or os.path.isfile(os.path.join(folder, "sweep.csv"))


if __name__ == "__main__":
    for folder in [a for a in sys.argv[1:] if not a.startswith("-")][:1]:
        if not is_result(folder):
            sys.exit(f"plot: {folder}: expected a folder written by gossipsim run or gossipsim sweep")
    try:
        main(sys.argv[1:])
    except OSError as e:
        # A full disk, a read-only folder, a file that cannot be read: one
        # line with the path and the reason, exit 2 (as gossipsim's own).
        print(f"plot: error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        sys.exit(2)
    except PlotError as e:
        print(f"plot: error: {e}", file=sys.stderr)
        sys.exit(2)
    except (ValueError, KeyError, IndexError, TypeError) as e:
        # One line, not a traceback: the folder is not what a run writes.
        print(f"plot: error: {type(e).__name__}: {e} (is every folder a whole gossipsim result?)", file=sys.stderr)
        sys.exit(2)
