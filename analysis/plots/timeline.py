"""timeline-<method>.png: per node, who computes, who sends to whom, and when
models are merged, over a window of virtual time, with churn, lost
transfers, cross-traffic and the values profiles applied."""
import json
import math
import re
import sys

import matplotlib.pyplot as plt

from .results import PlotError, number

# Timelines are drawn for a window: the first DEFAULT_WINDOW_S virtual
# seconds unless --window says otherwise (a whole run's arrows are a wall).
DEFAULT_WINDOW_S = 10.0


MAX_TIMELINE_NODES = 48


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
        nodes, keep, events, sent, names = [], None, [], set(), {}
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
                named = PROCESS_NAME.search(line)
                if named:
                    names[pid] = named.group(1)
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
    return nodes, events, names


# A node's name in the trace ("n3", with its region on geo topologies: "n3 eu-west-1").
PROCESS_NAME = re.compile(r'"name":"process_name".*"args":\{"name":"([^"]*)"')


def timeline(figs, label, trace_path, window, changes=(), start_values=(), run_end=None):
    """timeline-<label>.png: per node, its iterations, sends, transfers and
    merges within a window (the first DEFAULT_WINDOW_S s by default), drawn
    as a few collections so that a dense run takes seconds."""
    from matplotlib.collections import LineCollection

    if not run_end or not math.isfinite(run_end):
        with open(trace_path) as f:
            spans = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
        run_end = max((e["ts"] + e["dur"] for e in spans), default=0) / 1e6
    start, end = window if window else (0.0, min(run_end, DEFAULT_WINDOW_S))
    all_nodes, events, names = trace_window(trace_path, start * 1e6, end * 1e6, MAX_TIMELINE_NODES)
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
    ax.set_yticklabels([names.get(n, f"n{n}") for n in nodes])
    ax.set_ylim(max(nodes) + 0.6, min(nodes) - 0.6)
    lowest.set_xlabel("virtual time (s)")
    ax.set_title(f"{label}, {start:.4g}-{end:.4g} s of {run_end:.4g}: compute (blue, one box per iteration), sending "
                 "(orange), transfers (green, dot at arrival), merges (red); idle is blank; down: hatched", fontsize=9)
    if merges or lost or cross:
        ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    name = "timeline-" + re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-") + ".png"
    figs.save(fig, name)
    figs.note(name, window=[start, end], run_end_s=run_end, transfers=len(segments),
         steps={k: {t: v[1][0] for t, v in c.items()} for k, c in steps.items()})
    plt.close(fig)


def parse_window(text):
    try:
        start, end = (float(v) for v in text.split(","))
    except ValueError:
        raise PlotError(f"--window: expected START,END in virtual seconds, got {text!r}") from None
    if not (math.isfinite(start) and math.isfinite(end) and 0 <= start < end):
        raise PlotError(f"--window: expected 0 <= START < END, got {text!r}")
    return start, end
