"""The plot command: reads the results folders given, decides what they are
(runs pooled as seeds, runs side by side, simulations against real runs, or
a sweep), and draws. Each step is a function; `run` is the list of them."""
import argparse
import json
import os
import sys

import matplotlib.pyplot as plt

from . import curves, sim_vs_real, sweep, tables, timeline
from .figure import Figures, kind_style
from .results import (PlotError, is_result, load_run, number, provenance_lines, read_json, refuse_invalid_real,
                      refuse_to_pool, run_kind, run_names)


def parse(argv, description):
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+")
    p.add_argument("--out")
    p.add_argument("--window", help="START,END in virtual seconds for timelines (default: the first "
                                    f"{timeline.DEFAULT_WINDOW_S:g} s)")
    p.add_argument("--methods", help="only these method labels (comma-separated)")
    p.add_argument("--reference", help="the method under study, whose speed-up over the others the tables give "
                                       "(default: the sweep file's analysis, else the method whose traits say so)")
    p.add_argument("--side-by-side", action="store_true",
                   help="draw runs whose scenarios differ as separate configurations instead of refusing to pool them")
    return p.parse_args(argv)


def is_sweep(folder):
    return os.path.exists(os.path.join(folder, "sweep.csv")) and not os.path.exists(os.path.join(folder, "summary.json"))


def plot_sweeps(a, figs):
    """A sweep's figures and tables; several sweeps side by side (each in a
    folder of its own, and sweep-compare.md): their points are not seeds of
    one another, so they are never pooled."""
    if len(a.results) > 1:
        sweep.compare_sweeps(a.results, figs, a.reference)
    else:
        sweep.plot_sweep(a.results[0], figs, a.reference)


def load_runs(folders):
    """(folder, summary, methods, scenario) per folder."""
    loaded = []
    for folder in folders:
        summary, methods = load_run(folder)
        scenario = read_json(os.path.join(folder, "scenario.json"), "the scenario a run wrote")
        loaded.append((folder, summary, methods, scenario))
    return loaded


def pool(a, loaded):
    """The methods of every run by label (seeds pooled, kinds of runs or
    folders apart), the targets, the title and whether runs were evaluated."""
    names = run_names(a.results)
    kinds = {folder: run_kind(summary, scenario) for folder, summary, _, scenario in loaded}
    compare = "real" in kinds.values() and any(k != "real" for k in kinds.values()) and not a.side_by_side
    by_label, targets, title, evaluated, first, real_settings = {}, [], "", False, None, {}
    for folder, summary, methods, scenario in loaded:
        if kinds[folder] == "real":
            # A real run marked invalid misleads alone as much as beside a simulation.
            refuse_invalid_real(folder, summary)
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
    if not compare and not a.side_by_side and loaded:
        title += f" ({len(loaded)} {'seed' if len(loaded) == 1 else 'seeds'}; {network_assumed(loaded[0][3])})"
    return by_label, targets, title, evaluated, compare


def network_assumed(scenario):
    """The flow model a simulation assumed and the TCP connections it stands
    for (docs/network-model.md), for a figure's title."""
    net = scenario.get("network", {}) if isinstance(scenario.get("network"), dict) else {}
    model = net.get("model", "maxmin")
    if model == "slowstart":
        ss = net.get("slowstart", {})
        queues = f", {ss['congestion']} queues" if ss.get("congestion", "none") != "none" else ""
        sending = ss.get("round_sending", "burst") if queues else "burst"
        rounds = f", {sending} rounds" if sending != "burst" else ""
        return f"slowstart: {ss.get('connections', 'fresh')} connections{queues}{rounds}"
    return {"maxmin": "maxmin: warm connections", "tcp": "tcp (SimGrid LV08)"}.get(model, model)


def select_methods(a, by_label):
    if not a.methods:
        return by_label
    wanted = [m for m in a.methods.split(",") if m]
    have = {l.split(" [")[0] for l in by_label}
    unknown = [m for m in wanted if m not in have]
    if unknown:
        raise PlotError(f"--methods: no method labelled {unknown[0]} in these results; their labels are "
                        + ", ".join(dict.fromkeys(l.split(" [")[0] for l in by_label)))
    return {l: r for l, r in by_label.items() if l.split(" [")[0] in wanted}


def styles(figs, by_label, compare):
    """A colour per label (per method when kinds of runs are compared, with a
    line style per kind)."""
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colour = {l: colours[i % len(colours)] for i, l in enumerate(by_label)}
    if compare:
        bases = list(dict.fromkeys(l.rsplit(" [", 1)[0] for l in by_label))
        for l, runs in by_label.items():
            colour[l] = colours[bases.index(l.rsplit(" [", 1)[0]) % len(colours)]
            figs.line[l] = kind_style(runs[0]["kind"])
    return colour


def draw_evaluations(figs, by_label, colour, targets, title, evaluated):
    if evaluated:
        curves.curves(figs, by_label, colour, targets, title)
        return
    for name in ("accuracy.png", "loss.png", "consensus.png", "consensus_regions.png", "time_to_accuracy.md",
                 "time_to_accuracy.csv"):
        if os.path.exists(figs.path(name)):
            os.remove(figs.path(name))  # an earlier plot's, of other runs: not of these
    print("plot: accuracy, loss and consensus not drawn, no time-to-accuracy table: not evaluated "
          "(timeline only, --kernels none)", file=sys.stderr)
    figs.note("skipped", accuracy="not evaluated: timeline only")


def draw_tables(figs, by_label, targets, evaluated, provenances, reference=None):
    if not (targets and evaluated):
        return
    # The average model and the nodes' own (mean over nodes) side by side:
    # a decentralized user deploys a node's model, not the average.
    sections = [(f"Time to target on {tables.TARGET_METRICS[m]} ({m})", {"metric": m},
                 tables.outcomes_of_runs(by_label, targets, m)) for m in ("average", "node_mean")]
    sections = [sec for sec in sections if sec[2] is not None]
    if len(sections) == 1 or not sections:
        sections = [("", {}, tables.outcomes_of_runs(by_label, targets))]
    tables.write_tables(figs, sections, targets, preface=provenance_lines(provenances), reference=reference)


def draw_timelines(figs, by_label, window):
    for l, runs in by_label.items():
        if runs[0]["trace"]:
            timeline.timeline(figs, l, runs[0]["trace"], window, runs[0]["events"],
                              runs[0]["summary"].get("profile_start", []), number(runs[0]["summary"].get("virtual_s")))


def plot_runs(a, figs):
    window = timeline.parse_window(a.window) if a.window else None
    loaded = load_runs(a.results)
    by_label, targets, title, evaluated, compare = pool(a, loaded)
    by_label = select_methods(a, by_label)
    colour = styles(figs, by_label, compare)
    draw_evaluations(figs, by_label, colour, targets, title, evaluated)
    curves.staleness(figs, by_label, colour, title)
    curves.activity(figs, by_label, colour, title)
    curves.heat_maps(figs, by_label, "matrix", "src", "dst", "comm_matrix.png", "node")
    curves.heat_maps(figs, by_label, "regions", "src_region", "dst_region", "comm_regions.png", "region")
    curves.regional_consensus(figs, by_label, colour, title)
    if a.reference and a.reference not in {l.split(" [")[0] for l in by_label}:
        raise PlotError(f"--reference: no method labelled {a.reference} in these results; their labels are "
                        + ", ".join(dict.fromkeys(l.split(" [")[0] for l in by_label)))
    draw_tables(figs, by_label, targets, evaluated, [summary.get("provenance") for _, summary, _, _ in loaded],
                a.reference)
    if compare:
        sim_vs_real.sim_vs_real(figs, by_label, targets if evaluated else [])
    draw_timelines(figs, by_label, window)


def main(argv, description=""):
    a = parse(argv, description)
    for folder in a.results:
        if not is_result(folder):
            raise PlotError(f"{folder}: expected a folder written by gossipsim run or gossipsim sweep")
    sweeps = [f for f in a.results if is_sweep(f)]
    if sweeps and len(sweeps) != len(a.results):
        raise PlotError(f"{sweeps[0]}: a sweep is drawn alone, not with runs (plot it apart)")
    figs = Figures(a.out or a.results[0])
    os.makedirs(figs.out, exist_ok=True)
    (plot_sweeps if sweeps else plot_runs)(a, figs)
    figs.write_facts()
    print(figs.out)


def run(argv, description=""):
    """main() with the command's exit codes: 2 and one line for a request it
    cannot honour or a file it cannot read or write."""
    try:
        main(argv, description)
    except OSError as e:
        # A full disk, a read-only folder, a file that cannot be read: one
        # line with the path and the reason, exit 2 (as gossipsim's own).
        print(f"plot: error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 2
    except PlotError as e:
        print(f"plot: error: {e}", file=sys.stderr)
        return 2
    except (ValueError, KeyError, IndexError, TypeError) as e:
        # One line, not a traceback: the folder is not what a run writes.
        print(f"plot: error: {type(e).__name__}: {e} (is every folder a whole gossipsim result?)", file=sys.stderr)
        return 2
    return 0
