#!/usr/bin/python3
"""Plots and tables for gossipsim results.

    plot.py RESULTS_DIR [RESULTS_DIR ...] [--out DIR] [--window START,END]

Each RESULTS_DIR is a folder written by `gossipsim run`. Several folders of
the same scenario with different seeds draw one curve per method with a band
from the lowest to the highest seed. Writes into --out (default: the first
folder):
  accuracy.png        accuracy of the average model vs virtual time and vs epochs
  loss.png            test loss of the average model vs virtual time
  consensus.png       consensus distance vs virtual time
  staleness.png       histogram of staleness (virtual seconds, snapshot to merge)
  comm_matrix.png     per method, transfers from each node to each node (heat map)
  comm_regions.png    the same between regions (geo topologies)
  consensus_regions.png  consensus distance within and between regions (geo)
  timeline-<m>.png    Gantt chart per node, for methods run with --trace: down
                      periods, lost transfers, cross-traffic, and the values
                      that profiles applied beneath
A folder written by `gossipsim sweep` gets sweep.png instead: time to the
first target against the first axis, and the speed-up of gossip-scheduled.
  time_to_accuracy.md / .csv   virtual time to each target, and the speed-up of
                               gossip-scheduled over each other method
Uses matplotlib and numpy from Debian's archive only.
"""
import argparse
import csv
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def number(x):
    return float(x) if x not in ("", None) else math.nan


def load_run(folder):
    with open(os.path.join(folder, "summary.json")) as f:
        summary = json.load(f)
    methods = {}
    for m in summary["methods"]:
        label = m["label"]
        d = os.path.join(folder, label)
        methods[label] = {
            "summary": m,
            "metrics": read_csv(os.path.join(d, "metrics.csv")),
            "transfers": read_csv(os.path.join(d, "transfers.csv")),
            "trace": os.path.join(d, "trace.json") if os.path.exists(os.path.join(d, "trace.json")) else None,
            "events": read_csv(os.path.join(d, "events.csv")) if os.path.exists(os.path.join(d, "events.csv")) else [],
            "matrix": optional_csv(os.path.join(d, "comm_matrix.csv")),
            "regions": optional_csv(os.path.join(d, "comm_regions.csv")),
            "consensus_regions": optional_csv(os.path.join(d, "consensus_regions.csv")),
        }
    return summary, methods


def optional_csv(path):
    return read_csv(path) if os.path.exists(path) else []


def heat_maps(out, by_label, key, src, dst, name, what):
    """One heat map per method of a communication matrix: transfers from row to column."""
    labels = [l for l, runs in by_label.items() if runs[0][key]]
    if not labels:
        return
    fig, axs = plt.subplots(1, len(labels), figsize=(4.2 * len(labels) + 1, 4.2), squeeze=False)
    for ax, l in zip(axs[0], labels):
        rows = by_label[l][0][key]
        names = sorted({r[src] for r in rows} | {r[dst] for r in rows},
                       key=lambda v: (0, int(v)) if v.isdigit() else (1, v))
        index = {n: i for i, n in enumerate(names)}
        m = np.zeros((len(names), len(names)))
        for r in rows:
            m[index[r[src]], index[r[dst]]] += number(r["transfers"])
        image = ax.imshow(m, cmap="viridis")
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
        ax.set_title(f"{l}: {int(m.sum())} transfers", fontsize=9)
        ax.set_xlabel(f"to ({what})")
        ax.set_ylabel(f"from ({what})")
        if len(names) <= 20:
            ax.set_xticks(range(len(names)))
            ax.set_yticks(range(len(names)))
            ax.set_xticklabels(names, rotation=90, fontsize=7)
            ax.set_yticklabels(names, fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, name), dpi=110)
    plt.close(fig)


def regional_consensus(out, by_label, colour, title):
    """consensus_regions.png: the consensus distance within regions (solid) and between them (dashed)."""
    labels = [l for l, runs in by_label.items() if runs[0]["consensus_regions"]]
    if not labels:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for l in labels:
        rows = by_label[l][0]["consensus_regions"]
        for column, style in (("within", "-"), ("between", "--")):
            xs, ys = series(rows, "time_s", column)
            if len(xs):
                ax.plot(xs, ys, style, color=colour[l], label=f"{l} {column}")
    ax.set_xlabel("virtual time (s)")
    ax.set_ylabel("consensus distance: within regions (solid), between (dashed)")
    ax.set_yscale("symlog", linthresh=1e-6)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "consensus_regions.png"), dpi=110)
    plt.close(fig)


def series(rows, x, y):
    xs = np.array([number(r[x]) for r in rows])
    ys = np.array([number(r[y]) for r in rows])
    keep = ~np.isnan(ys)
    return xs[keep], ys[keep]


def band_plot(ax, runs, label, x, y, colour):
    """One curve per method; with several seeds, the mean and a min-max band."""
    curves = [series(r["metrics"], x, y) for r in runs]
    curves = [c for c in curves if len(c[0])]
    if not curves:
        return
    if len(curves) == 1:
        ax.plot(curves[0][0], curves[0][1], label=label, color=colour)
        return
    end = min(c[0][-1] for c in curves)
    grid = np.linspace(0, end, 200)
    stacked = np.array([np.interp(grid, cx, cy) for cx, cy in curves])
    ax.plot(grid, stacked.mean(0), label=f"{label} (n={len(curves)})", color=colour)
    ax.fill_between(grid, stacked.min(0), stacked.max(0), color=colour, alpha=0.2)


def time_to_accuracy(by_label, targets):
    rows = []
    for label, runs in by_label.items():
        for t in targets:
            times = []
            for r in runs:
                hit = r["summary"]["time_to_accuracy"].get(f"{t:g}")
                times.append(hit["virtual_s"] if hit else math.inf)
            rows.append((label, t, float(np.mean(times)) if all(map(math.isfinite, times)) else math.inf))
    return rows


def write_tables(out, by_label, targets):
    rows = time_to_accuracy(by_label, targets)
    table = {(l, t): v for l, t, v in rows}
    labels = list(by_label)
    sched = [l for l in labels if by_label[l][0]["summary"]["method"] == "gossip-scheduled"]
    with open(os.path.join(out, "time_to_accuracy.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["method", "target", "virtual_s", "speedup_of_" + (sched[0] if sched else "gossip-scheduled")])
        for l, t, v in rows:
            s = table.get((sched[0], t), math.inf) if sched else math.inf
            speed = v / s if math.isfinite(v) and math.isfinite(s) and s > 0 else ""
            w.writerow([l, t, "" if not math.isfinite(v) else f"{v:.3f}", "" if speed == "" else f"{speed:.3f}"])
    fmt = lambda v: "not reached" if not math.isfinite(v) else f"{v:.1f} s"  # noqa: E731
    lines = ["| method | " + " | ".join(f"to {t:g}" for t in targets) + " |",
             "|---|" + "---|" * len(targets)]
    for l in labels:
        lines.append(f"| {l} | " + " | ".join(fmt(table[(l, t)]) for t in targets) + " |")
    if sched:
        lines += ["", f"Speed-up of {sched[0]} (other's time / its time; > 1: scheduling is faster):", "",
                  "| over | " + " | ".join(f"to {t:g}" for t in targets) + " |", "|---|" + "---|" * len(targets)]
        for l in labels:
            if l == sched[0]:
                continue
            cells = []
            for t in targets:
                a, b = table[(l, t)], table[(sched[0], t)]
                if math.isfinite(a) and math.isfinite(b):
                    cells.append(f"{a / b:.2f}x")
                elif math.isfinite(b):
                    cells.append("only scheduled reached it")
                elif math.isfinite(a):
                    cells.append("only the other reached it")
                else:
                    cells.append("neither")
            lines.append(f"| {l} | " + " | ".join(cells) + " |")
    with open(os.path.join(out, "time_to_accuracy.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


STEP_UNITS = {"capacity": "capacity (Mbit/s)", "latency": "latency (ms)", "speed": "iteration time factor"}


def value_steps(changes, kind, end):
    """Per target, the step curve (times, values) of one kind of change in events.csv."""
    curves = {}
    for c in changes:
        if c["kind"] == kind:
            curves.setdefault(c["target"], []).append((number(c["time_s"]), number(c["value"])))
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


def timeline(out, label, trace_path, window, changes=()):
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    nodes = sorted({e["pid"] for e in events if e["ph"] != "M"} | {e["pid"] for e in spans})
    if not spans:
        return
    start, end = window if window else (0.0, max(e["ts"] + e["dur"] for e in spans) / 1e6)
    steps = {k: value_steps(changes, k, end) for k in STEP_UNITS}
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
    for n, periods in down_periods(changes, end).items():
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
    colours = {"compute": "#4c72b0", "send": "#dd8452"}
    for e in spans:
        t0, t1 = e["ts"] / 1e6, (e["ts"] + e["dur"]) / 1e6
        if t1 < start or t0 > end:
            continue
        y = e["pid"] + (0.0 if e["name"] == "compute" else 0.3)
        ax.broken_barh([(t0, t1 - t0)], (y - 0.12, 0.24), facecolor=colours.get(e["name"], "grey"),
                       edgecolor="white", linewidth=0.4)
    flows = {}
    for e in events:
        if e["ph"] in ("s", "f"):
            flows.setdefault(e["id"], {})[e["ph"]] = e
    for pair in flows.values():
        if "s" in pair and "f" in pair:
            t0, t1 = pair["s"]["ts"] / 1e6, pair["f"]["ts"] / 1e6
            if t1 < start or t0 > end:
                continue
            ax.annotate("", xy=(t1, pair["f"]["pid"] - 0.3), xytext=(t0, pair["s"]["pid"] + 0.3),
                        arrowprops=dict(arrowstyle="->", color="#55a868", lw=0.8, alpha=0.7))
    merges = [(e["ts"] / 1e6, e["pid"]) for e in events if e["ph"] == "i" and start <= e["ts"] / 1e6 <= end]
    if merges:
        ax.scatter([m[0] for m in merges], [m[1] - 0.3 for m in merges], marker="v", color="#c44e52", s=18,
                   label="merge", zorder=3)
    ax.set_xlim(start, end)
    ax.set_yticks(nodes)
    ax.set_yticklabels([f"node {n}" for n in nodes])
    ax.invert_yaxis()
    lowest.set_xlabel("virtual time (s)")
    ax.set_title(f"{label}: compute (blue, one box per iteration), sending (orange), transfers (green arrows), "
                 "merges (red); idle is blank; down: hatched", fontsize=10)
    if merges or lost or cross:
        ax.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(os.path.join(out, f"timeline-{label}.png"), dpi=110)
    plt.close(fig)


def plot_sweep(folder, out):
    """sweep.png: time to the first target against the first axis, per method
    (mean over the other axes, seeds included), and the speed-up of
    gossip-scheduled over each other method at every value of that axis."""
    rows = read_csv(os.path.join(folder, "sweep.csv"))
    if not rows:
        return
    columns = list(rows[0].keys())
    axes = columns[1:columns.index("method")]
    x_axis = axes[0]
    targets = sorted({r["target"] for r in rows if r["target"]}, key=float)
    if not targets:
        return
    target = targets[0]
    rows = [r for r in rows if r["target"] == target]

    def key(v):
        try:
            return (0, float(v))
        except ValueError:
            return (1, v)

    xs = sorted({r[x_axis] for r in rows}, key=key)
    labels = list(dict.fromkeys(r["label"] for r in rows))
    method = {r["label"]: r["method"] for r in rows}
    time = {}
    for r in rows:
        rest = tuple(r[a] for a in axes[1:])
        time[(r["label"], r[x_axis], rest)] = number(r["time_to_target_s"])
    fig, axs = plt.subplots(1, 2, figsize=(12, 4.5))
    positions = range(len(xs))
    for l in labels:
        means = []
        for x in xs:
            v = [t for (ll, xx, _), t in time.items() if ll == l and xx == x and math.isfinite(t)]
            means.append(np.mean(v) if v else math.nan)
        axs[0].plot(positions, means, marker="o", label=l)
    sched = [l for l in labels if method[l] == "gossip-scheduled"]
    if sched:
        for l in labels:
            if l == sched[0]:
                continue
            ratios = []
            for x in xs:
                v = [time[(l, xx, rest)] / t for (ll, xx, rest), t in time.items()
                     if ll == sched[0] and xx == x and math.isfinite(t) and t > 0
                     and math.isfinite(time.get((l, xx, rest), math.inf))]
                ratios.append(np.mean(v) if v else math.nan)
            axs[1].plot(positions, ratios, marker="o", label=f"over {l}")
        axs[1].axhline(1.0, color="grey", lw=0.8, ls=":")
        axs[1].set_ylabel(f"speed-up of {sched[0]} to accuracy {target}")
        axs[1].legend()
    for ax in axs:
        ax.set_xticks(list(positions))
        ax.set_xticklabels(xs, rotation=20)
        ax.set_xlabel(x_axis)
        ax.grid(alpha=0.3)
    axs[0].set_ylabel(f"virtual seconds to accuracy {target} (mean over points)")
    axs[0].legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "sweep.png"), dpi=110)
    plt.close(fig)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+")
    p.add_argument("--out")
    p.add_argument("--window", help="START,END in virtual seconds for timelines")
    a = p.parse_args(argv)
    out = a.out or a.results[0]
    os.makedirs(out, exist_ok=True)
    window = tuple(float(v) for v in a.window.split(",")) if a.window else None
    if all(os.path.exists(os.path.join(f, "sweep.csv")) and not os.path.exists(os.path.join(f, "summary.json"))
           for f in a.results):
        plot_sweep(a.results[0], out)
        print(out)
        return

    by_label, targets, title = {}, [], ""
    for folder in a.results:
        summary, methods = load_run(folder)
        title = summary["scenario"]
        with open(os.path.join(folder, "scenario.json")) as f:
            targets = json.load(f).get("eval", {}).get("targets", targets)
        for label, run in methods.items():
            by_label.setdefault(label, []).append(run)

    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colour = {l: colours[i % len(colours)] for i, l in enumerate(by_label)}

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for l, runs in by_label.items():
        band_plot(axes[0], runs, l, "time_s", "accuracy", colour[l])
        band_plot(axes[1], runs, l, "epochs", "accuracy", colour[l])
    axes[0].set_xlabel("virtual time (s)")
    axes[1].set_xlabel("epochs (samples processed by all nodes / training set)")
    for ax in axes:
        ax.set_ylabel("test accuracy of the average model")
        ax.grid(alpha=0.3)
        for t in targets:
            ax.axhline(t, color="grey", lw=0.5, ls=":")
    axes[0].legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "accuracy.png"), dpi=110)
    plt.close(fig)

    for name, column, ylabel, log in (("loss", "loss", "test loss of the average model", False),
                                      ("consensus", "consensus", "consensus distance (mean ||x_i - x_bar||^2)", True)):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for l, runs in by_label.items():
            band_plot(ax, runs, l, "time_s", column, colour[l])
        ax.set_xlabel("virtual time (s)")
        ax.set_ylabel(ylabel)
        if log:
            ax.set_yscale("symlog", linthresh=1e-6)
        ax.grid(alpha=0.3)
        ax.legend()
        ax.set_title(title)
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"{name}.png"), dpi=110)
        plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    drawn = False
    for l, runs in by_label.items():
        s = [number(t["staleness_s"]) for r in runs for t in r["transfers"] if t["staleness_s"]]
        if s and runs[0]["summary"]["method"].startswith("gossip"):
            ax.hist(s, bins=40, histtype="step", label=f"{l} (median {np.median(s):.2f} s)", color=colour[l])
            drawn = True
    ax.set_xlabel("staleness: virtual seconds from snapshot to merge")
    ax.set_ylabel("merged models")
    if drawn:
        ax.legend()
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "staleness.png"), dpi=110)
    plt.close(fig)

    heat_maps(out, by_label, "matrix", "src", "dst", "comm_matrix.png", "node")
    heat_maps(out, by_label, "regions", "src_region", "dst_region", "comm_regions.png", "region")
    regional_consensus(out, by_label, colour, title)
    if targets:
        write_tables(out, by_label, targets)
    for l, runs in by_label.items():
        if runs[0]["trace"]:
            timeline(out, l, runs[0]["trace"], window, runs[0]["events"])
    print(out)


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
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        # One line, not a traceback: the folder is not what a run writes.
        sys.exit(f"plot: error: {type(e).__name__}: {e} (is every folder a whole gossipsim result?)")
