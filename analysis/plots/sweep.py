"""The figures and tables of a sweep: sweep.png, the map of where the method
under study wins (sweep-map*.png and .md, and its why-figure) and the
time_to_accuracy tables per combination of the axes other than /seed."""
import json
import math
import os

import matplotlib.pyplot as plt
import numpy as np

from .results import PlotError, axis_value_key, number, provenance_lines, read_csv, read_json
from .stats import benjamini_hochberg, holm, interval, ratio_interval
from .tables import ALPHA, TARGET_METRICS, compare, write_tables

# The columns of sweep.csv that its figures read as numbers.
SWEEP_NUMBER_COLUMNS = ("final_accuracy", "best_accuracy", "time_to_target_s", "time_to_target_node_mean_s",
                        "time_to_target_node_min_s", "merges", "staleness_mean_s", "partners", "starved_cuts",
                        "time_to_target_interp_s", "time_to_target_node_mean_interp_s",
                        "time_to_target_node_min_interp_s", "final_accuracy_node_mean", "final_accuracy_node_min",
                        "cross_region")


def plot_sweep(folder, figs, reference=None):
    """sweep.png, one row per target: the restricted time to the target (a
    run that did not reach it counts its end) against the first axis other
    than /seed, per method (mean over the other axes and the seeds, with its
    95% t-interval), and the speed-up of the method under study over each
    other method there. A sweep of seeds alone is drawn as what it is, a
    distribution: each seed's time as a point per method, with the mean and
    its interval, no line through seeds. Then the map and the tables."""
    path = os.path.join(folder, "sweep.csv")
    rows = read_csv(path)
    if not rows:
        return
    if "reference" not in rows[0]:
        # Gathered before sweep.csv said which method is under study (the
        # method's trait): the paper's method, as the tables took it then.
        for r in rows:
            r["reference"] = "1" if r["method"] == "gossip-scheduled" else "0"
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
    analysis = sweep_analysis(folder)
    if reference:
        analysis = {**analysis, "reference": reference}
    targets = sorted({r["target"] for r in rows if r["target"]}, key=float)
    if not targets:
        return
    labels = list(dict.fromkeys(r["label"] for r in rows))
    ref = analysis.get("reference") or next((r["label"] for r in rows if r.get("reference") == "1"), None)
    if reference and reference not in labels:
        raise PlotError(f"--reference: no method labelled {reference} in this sweep; its labels are "
                        + ", ".join(labels))
    if ref and ref not in labels:
        raise PlotError(f"{os.path.join(folder, 'analysis.json')}: reference {ref} is none of this sweep's methods "
                        "(" + ", ".join(labels) + ")")
    free = [a for a in axes if a != "/seed"]
    x_axis = free[0] if free else "/seed"
    seeds_only = not free
    fig, axs = plt.subplots(len(targets), 2, figsize=(12, 4.2 * len(targets)), squeeze=False)
    for row_axes, target in zip(axs, targets):
        at = [r for r in rows if r["target"] == target]
        restricted = {}
        for r in at:
            t, _ = row_time(r, "average")
            rest = tuple(r[a] for a in axes if a != x_axis)
            restricted[(r["label"], r[x_axis], rest)] = min(t, number(r["virtual_s"]))
        drawn = [l for l in labels if any(k[0] == l for k in restricted)]
        if seeds_only:
            for k, l in enumerate(drawn):
                v = [t for (ll, _, _), t in restricted.items() if ll == l]
                row_axes[0].scatter([k] * len(v), v, s=14, alpha=0.6)
                m, h = interval(v)
                h = 0 if math.isnan(h) else h
                # A time is never negative: the interval is cut at 0.
                row_axes[0].errorbar([k + 0.15], [m], yerr=[[min(h, m)], [h]], fmt="s", capsize=4, color="black")
            row_axes[0].set_xticks(range(len(drawn)))
            # Slanted from their right end, so that long labels side by side do not overlap.
            row_axes[0].set_xticklabels(drawn, rotation=30, ha="right", rotation_mode="anchor")
            row_axes[0].set_xlabel(f"method ({len({k[1] for k in restricted})} seeds; points: seeds; square: mean, "
                                   "95% CI)")
        else:
            xs = sorted({k[1] for k in restricted}, key=axis_value_key)
            positions = np.arange(len(xs))
            for l in drawn:
                means, halves = np.array([interval([t for (ll, xx, _), t in restricted.items() if ll == l and xx == x])
                                          for x in xs]).T
                halves = np.nan_to_num(halves)
                row_axes[0].errorbar(positions, means, yerr=[np.minimum(halves, np.nan_to_num(means)), halves],
                                     marker="o", capsize=3, label=l)
            set_ticks(row_axes[0], xs)
            row_axes[0].set_xlabel(x_axis)
            row_axes[0].legend(fontsize=8)
        row_axes[0].set_ylabel(f"s to accuracy {target}, restricted\n(mean, 95% CI; unreached: run's end)")
        if ref and ref in drawn:
            xs = sorted({k[1] for k in restricted}, key=axis_value_key) if not seeds_only else ["all seeds"]
            positions = np.arange(len(xs))
            others = [l for l in drawn if l != ref]
            width = 0.8 / max(1, len(others))  # each method beside the others, not on top of them
            for i, l in enumerate(others):
                mid, low, high = [], [], []
                for x in xs:
                    pairs = [(restricted[(l, xx, rest)], t) for (ll, xx, rest), t in restricted.items()
                             if ll == ref and (seeds_only or xx == x) and (l, xx, rest) in restricted and t > 0]
                    g, lo, hi = ratio_interval([o / m for o, m in pairs]) if pairs else (math.nan,) * 3
                    mid.append(g)
                    low.append(g - lo if math.isfinite(lo) else 0)
                    high.append(hi - g if math.isfinite(hi) else 0)
                row_axes[1].errorbar(positions + (i - (len(others) - 1) / 2) * width, mid, yerr=[low, high], marker="o",
                                     capsize=3, label=f"over {l}")
            row_axes[1].axhline(1.0, color="grey", lw=0.8, ls=":")
            row_axes[1].set_yscale("log")  # a ratio and its interval on logs: 2x and 1/2x equally far from 1
            # At least 1/2 to 2: ratios all 1 (every time censored at the run's end) left an axis with no
            # room and no tick below 1.
            low_y, high_y = row_axes[1].get_ylim()
            row_axes[1].set_ylim(min(low_y, 0.5), max(high_y, 2.0))
            set_ticks(row_axes[1], xs)
            row_axes[1].set_xlabel(x_axis if not seeds_only else "")
            row_axes[1].set_ylabel(f"speed-up of {ref} to {target}\n(geometric mean, t-interval on logs)")
            row_axes[1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        else:
            row_axes[1].axis("off")
        for ax in row_axes:
            ax.grid(alpha=0.3)
    fig.suptitle("Tables with exact tests and adjusted p-values: time_to_accuracy.md", fontsize=9)
    fig.tight_layout()
    figs.save(fig, "sweep.png")
    figs.note("sweep.png", targets=targets, seeds_only=seeds_only, reference=ref)
    plt.close(fig)
    target = targets[0] if "target" not in analysis else f"{float(analysis['target']):g}"
    if target not in targets:
        raise PlotError(f"{folder}: analysis.json's target {target} is none of the sweep's targets "
                        + ", ".join(targets))
    sweep_map(rows, axes, figs, target, analysis=analysis)
    if any(r.get("time_to_target_node_mean_s") for r in rows):
        sweep_map(rows, axes, figs, target, "node_mean", "sweep-map-node_mean.png", analysis=analysis)
    write_sweep_tables(rows, axes, figs, sweep_provenance(folder), analysis)


MAX_MAP_PANELS = 16


def time_columns(metric):
    """sweep.csv's columns of a target's time on `metric`: the interpolated
    one first (sweeps gathered since it was kept), then the evaluation grid's."""
    base = "time_to_target" if metric == "average" else f"time_to_target_{metric}"
    return f"{base}_interp_s", f"{base}_s"


def row_time(r, metric):
    """A sweep.csv row's time to its target (inf: not reached), and whether
    it is interpolated between evaluations."""
    interp, grid = time_columns(metric)
    if interp in r and (r.get(grid) or "") != "":
        return (number(r[interp]) if r[interp] else number(r[grid])), bool(r[interp])
    return (number(r[grid]) if r.get(grid) else math.inf), False


def sweep_map(rows, axes, figs, target, metric="average", name="sweep-map.png", analysis=None):
    """sweep-map.png: where the method under study wins. For the first two
    axes other than /seed (rows and columns), one heat map per combination
    of the remaining axes: the speed-up of the reference method over each
    other method to `target` (the other's restricted time over the
    reference's, geometric mean over every seed: a run that did not reach
    the target counts its end), on a log colour scale centred on 1. Every
    cell's exact paired sign-flip p is adjusted over the map's cells
    (Benjamini-Hochberg; Holm over the cells the sweep file declares
    primary), and only a cell whose adjusted p is at most 0.05 is marked
    (+ faster, - slower). `metric` chooses the times: the average model's
    or the nodes' own (node_mean)."""
    seed_axis = "/seed" if "/seed" in axes else None
    free = [a for a in axes if a != seed_axis]
    if len(free) < 2:
        return
    y_axis, x_axis, rest = free[0], free[1], free[2:]
    analysis = analysis or {}
    rows = [r for r in rows if r["target"] == target]
    ref = analysis.get("reference") or next((r["label"] for r in rows if r.get("reference") == "1"), None)
    others = list(dict.fromkeys(r["label"] for r in rows if r["label"] != ref))
    if not ref or not others or not any(r["label"] == ref for r in rows):
        return
    runs, mechanism = {}, {}
    for r in rows:
        seed = r[seed_axis] if seed_axis else r["point"]
        cell = (r[y_axis], r[x_axis], tuple(r[a] for a in rest))
        t, _ = row_time(r, metric)
        runs.setdefault((r["label"], cell), {})[seed] = {"times": {target: t}, "end": number(r["virtual_s"])}
        # What each method did there (sweep.csv since they were gathered):
        # merges, their mean staleness and its effective partners per node.
        mechanism[(r["label"], *cell, seed)] = tuple(number(r[c]) if r.get(c) else None
                                                     for c in ("merges", "staleness_mean_s", "partners"))
    ys = sorted({r[y_axis] for r in rows}, key=axis_value_key)
    xs = sorted({r[x_axis] for r in rows}, key=axis_value_key)
    facets = list(dict.fromkeys(tuple(r[a] for a in rest) for r in rows))[:MAX_MAP_PANELS]
    panels = [(o, f) for o in others for f in facets][:MAX_MAP_PANELS]
    # Every cell's comparison, then the map's adjustment: a family of all
    # its cells (or two: the declared primary ones and the rest).
    primary = primary_test(analysis, [y_axis, x_axis, *rest])
    cells = {}
    for other, facet in panels:
        for y in ys:
            for x in xs:
                mine, theirs = runs.get((ref, (y, x, facet))), runs.get((other, (y, x, facet)))
                if mine and theirs:
                    c = compare(mine, theirs, target)
                    if c:
                        c["primary"] = primary({y_axis: y, x_axis: x, **dict(zip(rest, facet))})
                        cells[(other, y, x, facet)] = c
    for is_primary in (True, False):
        family = [c for c in cells.values() if c["primary"] == is_primary]
        for c, adjusted in zip(family, (holm if is_primary else benjamini_hochberg)([c["p"] for c in family])):
            c["p_adjusted"] = adjusted
            c["called"] = adjusted <= ALPHA
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
                c = cells.get((other, y, x, facet))
                mine = runs.get((ref, (y, x, facet)), {})
                theirs = runs.get((other, (y, x, facet)), {})
                # In a fixed order: sums over a set of strings changed with Python's
                # hash seed, and with them the last digit of a table.
                seeds = sorted(set(mine) & set(theirs), key=axis_value_key)
                ref_reached = sum(1 for s in seeds if math.isfinite(mine[s]["times"][target]))
                other_reached = sum(1 for s in seeds if math.isfinite(theirs[s]["times"][target]))
                if c:
                    grid[i, j] = c["ratio"]
                    sign = ("+" if c["ratio"] > 1 else "-") if c["called"] else ""
                    mark = f"{c['ratio']:.2f}{sign}"
                    interval = (f" [{c['ratio_low']:.2f}, {c['ratio_high']:.2f}]" if math.isfinite(c["ratio_low"])
                                else "")
                    text = (f"{c['ratio']:.2f}x{interval}, p {c['p']:.3g} (adj. {c['p_adjusted']:.3g})"
                            + (f" **{sign}**" if sign else ""))
                    facts.append({"other": other, "facet": list(facet), y_axis: y, x_axis: x, "speedup": c["ratio"],
                                  "low": c["ratio_low"], "high": c["ratio_high"], "p": c["p"],
                                  "p_adjusted": c["p_adjusted"], "called": c["called"], "primary": c["primary"],
                                  "seeds": c["pairs"], "reference_reached": ref_reached,
                                  "other_reached": other_reached, "of": len(seeds)})
                else:
                    mark, text = "-", "no seed run by both"
                if ref_reached != other_reached:
                    mark += f"\n{ref_reached} vs {other_reached}"
                    text += f" ({ref_reached} vs {other_reached} of {len(seeds)} reached it)"
                cells_text[i][j] = text
                mechanism_text[i][j], merges, partners = cell_mechanism(
                    mechanism, ref, other, (y, x, facet), seeds)
                if c and merges and partners:
                    why_points.append({"other": other, "facet": facet, "speedup": c["ratio"], "called": c["called"],
                                       "merges": merges, "partners": partners})
                dark = math.isfinite(grid[i, j]) and not 0.4 < grid[i, j] < 2.5  # white on the deep colours
                ax.text(j, i, mark, ha="center", va="center", fontsize=7, color="white" if dark else "black")
        image = ax.imshow(np.clip(grid, 1 / 4, 4), cmap="RdBu", norm=norm, aspect="auto")
        set_ticks(ax, xs, fontsize=6)
        ax.set_yticks(range(len(ys)))
        ax.set_yticklabels([tick_label(y) for y in ys], fontsize=6)
        ax.set_xlabel(x_axis, fontsize=7)
        ax.set_ylabel(y_axis, fontsize=7)
        # One line per remaining axis, named by its last path component: the
        # panels sit side by side and whole paths ran into each other.
        ax.set_title("\n".join([f"{ref} over {other}"] + [f"{a.rsplit('/', 1)[-1]} = {compact(v)}" for a, v in zip(rest, facet)]),
                     fontsize=7)
        tables.append((other, facet, cells_text, mechanism_text))
    for ax in list(axs.flat)[len(panels):]:
        ax.axis("off")
    if image is not None:
        bar = fig.colorbar(image, ax=axs, fraction=0.04)
        bar.set_ticks([0.25, 0.5, 1, 2, 4])
        bar.set_ticklabels(["1/4", "1/2", "1", "2", "4"])
        bar.set_label(f"speed-up (> 1: {ref} faster)", fontsize=8)
    n_primary = sum(1 for c in cells.values() if c["primary"])
    family = (f"Holm over the {n_primary} declared primary cells, Benjamini-Hochberg over the other "
              f"{len(cells) - n_primary}" if n_primary else f"Benjamini-Hochberg over the map's {len(cells)} cells")
    fig.suptitle(f"Speed-up to accuracy {target} on {TARGET_METRICS[metric]}, geometric mean over every seed "
                 "(a run that did not reach it counts its end)\n"
                 f"+ / -: faster / slower, exact paired sign-flip p adjusted ({family}) at most {ALPHA:g}\n"
                 f"a vs b: seeds where {ref} / the other reached it, where they differ", fontsize=8)
    figs.save(fig, name)
    figs.note(name, reference=ref, target=target, cells=facts, family=family)
    if why_points:
        sweep_map_why(why_points, ref, rest, target, metric, figs, name[:-len(".png")] + "-why.png")
    # The same cells as text, one table per panel (name.md beside name.png).
    with open(figs.path(name[:-len(".png")] + ".md"), "w") as f:
        f.write(f"Speed-up of {ref} to accuracy {target} on {TARGET_METRICS[metric]}: the other's restricted "
                "time over its own (a run that did not reach the target counts its end), geometric mean over every "
                "seed [95% interval of the inverted sign-flip test, from 6 seeds on]; p of the exact paired "
                f"sign-flip test and adjusted ({family}); **+** / **-**: faster / slower at adjusted p <= {ALPHA:g}; "
                f"(a vs b of n reached it): the seeds where {ref} / the other reached the target, where they differ. "
                f"Rows: {y_axis}; columns: {x_axis}.\n")
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


def tick_label(value):
    """An axis value for a tick: a JSON object one member a line (its kind or
    dist first, by itself), and a list of objects each in turn, so that a
    partition, a distribution or a list of overrides does not run into the
    next panel; anything else as it is."""
    try:
        parsed = json.loads(value)
    except (TypeError, ValueError):
        return str(value)

    def members(o):
        head = [str(o[k]) for k in ("kind", "dist") if k in o]
        return head + [f"{k}={compact(json.dumps(v))}" for k, v in o.items() if k not in ("kind", "dist")]

    if isinstance(parsed, dict):
        return "\n".join(members(parsed))
    if isinstance(parsed, list) and parsed and all(isinstance(o, dict) for o in parsed):
        return "\n".join(line for o in parsed for line in members(o))
    return str(value)


def set_ticks(ax, values, fontsize=None):
    """Ticks at 0..n-1 labelled with `values`: slanted from their right end
    where every label is one line (so that long ones side by side do not
    overlap), upright where an object's members make them several."""
    labels = [tick_label(v) for v in values]
    ax.set_xticks(list(range(len(labels))))
    if any("\n" in l for l in labels):
        ax.set_xticklabels(labels, fontsize=fontsize or 8)
    else:
        ax.set_xticklabels(labels, rotation=30, ha="right", rotation_mode="anchor", fontsize=fontsize)


def sweep_map_why(points, ref, rest, target, metric, figs, name):
    """sweep-map-why.png: the map's cells against their mechanism. Each cell
    with an interval is a point: its speed-up against the reference's merges
    over the other's (left) and against its effective partners per node over
    the other's (right); filled where the map calls it (adjusted p), hollow where
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
            decided = [p for p in mine if p["called"]]
            undecided = [p for p in mine if not p["called"]]
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
                 "(filled: called at adjusted p <= 0.05; hollow: not)", fontsize=9)
    figs.save(fig, name)
    figs.note(name, reference=ref, target=target,
         points=[{**{k: v for k, v in p.items() if k != "facet"}, "facet": list(p["facet"])} for p in points])
    plt.close(fig)


def sweep_analysis(folder):
    """The analysis the sweep file declared before its runs (analysis.json
    beside sweep.csv: reference, target, primary cells); {} where none."""
    path = os.path.join(folder, "analysis.json")
    doc = read_json(path, "the analysis a sweep file declared") if os.path.exists(path) else {}
    return doc if isinstance(doc, dict) else {}


def sweep_provenance(folder):
    """What made a sweep's points (provenance.json beside sweep.csv), one
    provenance per point; empty for sweeps gathered before it was written."""
    path = os.path.join(folder, "provenance.json")
    if not os.path.exists(path):
        return []
    doc = read_json(path, "the provenance of a sweep's points")
    out = []
    for e in doc.get("provenances", []) if isinstance(doc, dict) else []:
        out += [e.get("provenance")] * len(e.get("points", []))
    return out


def primary_test(analysis, axes):
    """Whether a cell (a dict of axis values, as sweep.csv writes them) is
    one of the primary cells the sweep file declared (analysis.json)."""
    declared = (analysis or {}).get("primary") or []

    def same(a, b):
        try:
            return json.loads(a) == b
        except (TypeError, ValueError):
            return a == b
    return lambda cell: any(all(p in cell and same(cell[p], v) for p, v in d.items()) for d in declared)


def write_sweep_tables(rows, axes, figs, provenances=(), analysis=None):
    """time_to_accuracy.md / .csv of a sweep: one section per combination of
    the axes other than /seed, statistics over the seeds (tables.py): a
    family of comparisons per sweep, the declared primary cells adjusted by
    Holm and the others by Benjamini-Hochberg."""
    seed_axis = "/seed" if "/seed" in axes else None
    groups = [a for a in axes if a != seed_axis]
    targets = sorted({float(r["target"]) for r in rows if r["target"]})
    # The average model's times, and the node mean's beside them where the
    # sweep has them (summaries since 0.2), each with its own final accuracy.
    metrics = ["average"] + (["node_mean"] if any(r.get("time_to_target_node_mean_s") for r in rows) else [])
    sections = {}
    for metric in metrics:
        final_column = "final_accuracy" if metric == "average" else f"final_accuracy_{metric}"
        for r in rows:
            g = tuple(r[a] for a in groups)
            key = (g, metric) if len(metrics) > 1 else (g, None)
            seed = r[seed_axis] if seed_axis else r["point"]
            final = number(r.get(final_column) or "") if r.get(final_column) else (
                number(r["final_accuracy"]) if metric == "average" else math.nan)
            o = sections.setdefault(key, {}).setdefault(r["label"], {}).setdefault(
                seed, {"reference": r.get("reference") == "1", "final": final, "times": {}, "interpolated": True,
                       "end": number(r["virtual_s"]), "starved": int(number(r.get("starved_cuts") or "0") or 0)})
            if r["target"]:
                t, interpolated = row_time(r, metric)
                o["times"][float(r["target"])] = t
                o["interpolated"] = o["interpolated"] and (interpolated or not math.isfinite(t))
    if not targets:
        return
    def title(g, metric):
        text = ", ".join(f"{a} = {v}" for a, v in zip(groups, g))
        on = f"time to target on {TARGET_METRICS[metric]} ({metric})" if metric else ""
        return "; ".join(part for part in (text, on) if part)
    order = list(dict.fromkeys(g for g, _ in sections))  # each combination's average, then its node mean
    keys = [(g, m if len(metrics) > 1 else None) for g in order for m in metrics]
    primary = primary_test(analysis, groups) if (analysis or {}).get("primary") else None
    write_tables(figs, [(title(g, metric), {**dict(zip(groups, g)), **({"metric": metric} if metric else {})},
                        sections[(g, metric)]) for g, metric in keys], targets,
                 preface=provenance_lines(list(provenances)) if provenances else (), correction="bh",
                 reference=(analysis or {}).get("reference"), primary=primary, family=(analysis or {}).get("family", ""))


def compare_sweeps(folders, figs, reference=None):
    """Two (or more) sweeps side by side: each drawn into a folder of its own
    under the output (named after its folder), and sweep-compare.md, which
    sets their speed-ups cell by cell (the combinations of axes besides
    /seed they share), each with its own adjusted p and call."""
    from .figure import Figures
    from .results import run_names
    names = run_names(folders)
    tables = {}
    for folder in folders:
        own = Figures(figs.path(names[folder]))
        os.makedirs(own.out, exist_ok=True)
        plot_sweep(folder, own, reference)
        own.write_facts()
        path = own.path("time_to_accuracy.csv")
        tables[folder] = read_csv(path) if os.path.exists(path) else []
    keys = None
    for rows in tables.values():
        mine = {tuple((k, v) for k, v in r.items() if k not in TABLE_VALUES) for r in rows if r.get("ratio")}
        keys = mine if keys is None else keys & mine
    if not keys:
        raise PlotError(f"{', '.join(folders)}: these sweeps share no cell with a speed-up to compare (the same "
                        "axes' values besides /seed, method and target, with accuracy evaluated)")
    lines = ["Speed-ups of the method under study, cell by cell, in each sweep (each sweep's p adjusted within its "
             "own family; see each one's time_to_accuracy.md):", "",
             "| cell | method | target | " + " | ".join(names[f] for f in folders) + " |",
             "|---|---|---|" + "---|" * len(folders)]
    for key in sorted(keys):
        cell = dict(key)
        where = ", ".join(f"{k} = {v}" for k, v in cell.items() if k not in ("method", "target"))
        texts = []
        for folder in folders:
            r = next(r for r in tables[folder] if all(r.get(k) == v for k, v in cell.items()))
            interval = f" [{float(r['ratio_low']):.2f}, {float(r['ratio_high']):.2f}]" if r["ratio_low"] else ""
            adjusted = f", adj. p {float(r['p_adjusted']):.3g}" if r["p_adjusted"] else ""
            texts.append(f"{float(r['ratio']):.2f}x{interval}{adjusted}: {r['verdict']}")
        lines.append(f"| {where} | {cell['method']} | {cell['target']} | " + " | ".join(texts) + " |")
    with open(figs.path("sweep-compare.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    figs.note("sweep-compare.md", sweeps=[names[f] for f in folders], cells=len(keys))


# time_to_accuracy.csv's columns that hold statistics, not the cell's name.
TABLE_VALUES = ("seeds", "reached", "rmst_s", "rmst_half_s", "final", "final_half", "ratio", "ratio_low", "ratio_high",
                "p", "p_adjusted", "smallest_p", "pairs", "verdict")
