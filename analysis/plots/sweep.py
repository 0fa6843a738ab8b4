"""The figures and tables of a sweep: sweep.png, the map of where the method
under study wins (sweep-map*.png and .md, and its why-figure) and the
time_to_accuracy tables per combination of the axes other than /seed."""
import math
import os

import matplotlib.pyplot as plt
import numpy as np

from .results import PlotError, axis_value_key, number, provenance_lines, read_csv, read_json
from .stats import interval, ratio_interval
from .tables import TARGET_METRICS, write_tables

# The columns of sweep.csv that its figures read as numbers.
SWEEP_NUMBER_COLUMNS = ("final_accuracy", "best_accuracy", "time_to_target_s", "time_to_target_node_mean_s",
                        "time_to_target_node_min_s", "merges", "staleness_mean_s", "partners")


def plot_sweep(folder, figs):
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
    figs.save(fig, "sweep.png")
    plt.close(fig)
    sweep_map(all_rows, axes, figs, target)
    if any(r.get("time_to_target_node_mean_s") for r in all_rows):
        sweep_map(all_rows, axes, figs, target, "node_mean", "sweep-map-node_mean.png")
    write_sweep_tables(all_rows, axes, figs, sweep_provenance(folder))


MAX_MAP_PANELS = 16


def sweep_map(rows, axes, figs, target, metric="average", name="sweep-map.png"):
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
                # In a fixed order: sums over a set of strings changed with Python's
                # hash seed, and with them the last digit of a table.
                seeds = sorted({k[4] for k in times if k[0] == ref and k[1] == y and k[2] == x and k[3] == facet},
                               key=axis_value_key)
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
    figs.save(fig, name)
    figs.note(name, reference=ref, target=target, cells=facts)
    if why_points:
        sweep_map_why(why_points, ref, rest, target, metric, figs, name[:-len(".png")] + "-why.png")
    # The same cells as text, one table per panel (name.md beside name.png).
    with open(figs.path(name[:-len(".png")] + ".md"), "w") as f:
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


def sweep_map_why(points, ref, rest, target, metric, figs, name):
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
    figs.save(fig, name)
    figs.note(name, reference=ref, target=target,
         points=[{**{k: v for k, v in p.items() if k != "facet"}, "facet": list(p["facet"])} for p in points])
    plt.close(fig)


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


def write_sweep_tables(rows, axes, figs, provenances=()):
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
    write_tables(figs, [(title(g, metric), {**dict(zip(groups, g)), **({"metric": metric} if metric else {})},
                        sections[(g, metric)]) for g, metric in keys], targets,
                 preface=provenance_lines(list(provenances)) if provenances else ())
