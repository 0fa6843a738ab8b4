"""Figures of a run (or of seeds pooled): accuracy, loss and consensus
curves with confidence bands, staleness histograms, the whole run's
activity, communication heat maps and the consensus within and between
regions."""
import math

import matplotlib.pyplot as plt
import numpy as np

from .figure import MAX_LEGEND_INSIDE, axis_facts
from .results import natural, number
from .stats import t975

def series(rows, x, y):
    xs = np.array([number(r[x]) for r in rows])
    ys = np.array([number(r[y]) for r in rows])
    keep = ~np.isnan(ys)
    return xs[keep], ys[keep]


# The range each metric can take: curves and bands are clipped to it.
METRIC_RANGE = {"accuracy": (0.0, 1.0), "loss": (0.0, math.inf), "consensus": (0.0, math.inf)}


def band_plot(ax, runs, label, x, y, colour, style=None):
    """One curve per method; with several seeds, the mean and a band of its
    95% confidence interval (pointwise, t over seeds), clipped to the range
    the metric can take (an interval's arithmetic knows no bounds)."""
    curves = [series(r["metrics"], x, y) for r in runs]
    curves = [c for c in curves if len(c[0])]
    if not curves:
        return None
    if len(curves) == 1:
        ax.plot(curves[0][0], curves[0][1], label=label, color=colour, **(style or {}))
        return None
    end = min(c[0][-1] for c in curves)
    grid = np.linspace(0, end, 200)
    stacked = np.array([np.interp(grid, cx, cy) for cx, cy in curves])
    mean = stacked.mean(0)
    half = t975(len(curves) - 1) * stacked.std(0, ddof=1) / math.sqrt(len(curves))
    low, high = METRIC_RANGE.get(y, (-math.inf, math.inf))
    ax.plot(grid, mean, label=f"{label} (mean of {len(curves)}, 95% CI)", color=colour, **(style or {}))
    lower, upper = np.clip(mean - half, low, high), np.clip(mean + half, low, high)
    ax.fill_between(grid, lower, upper, color=colour, alpha=0.2)
    return float(np.nanmin(lower)), float(np.nanmax(upper))


def band_range(bands):
    """The lowest and highest edge of the confidence bands drawn (none with one seed)."""
    bands = [b for b in bands if b]
    return {"band_min": min(b[0] for b in bands), "band_max": max(b[1] for b in bands)} if bands else {}


def curves(figs, by_label, colour, targets, title):
    """accuracy.png, loss.png and consensus.png."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    bands = []
    for l, runs in by_label.items():
        bands.append(band_plot(axes[0], runs, l, "time_s", "accuracy", colour[l], figs.line.get(l)))
        bands.append(band_plot(axes[1], runs, l, "epochs", "accuracy", colour[l], figs.line.get(l)))
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
    figs.save(fig, "accuracy.png")
    figs.note("accuracy.png", **axis_facts(axes[0]), targets=list(targets), **band_range(bands),
         target_labels=[t.get_text() for t in axes[0].texts])
    plt.close(fig)

    for name, column, ylabel, log in (("loss", "loss", "test loss of the average model", False),
                                      ("consensus", "consensus", "consensus distance (mean ||x_i - x_bar||^2)", True)):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        bands = [band_plot(ax, runs, l, "time_s", column, colour[l], figs.line.get(l)) for l, runs in by_label.items()]
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
        figs.save(fig, f"{name}.png")
        figs.note(f"{name}.png", **axis_facts(ax), **band_range(bands))
        plt.close(fig)


def staleness(figs, by_label, colour, title):
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
                    linestyle=figs.line.get(l, {}).get("ls", "-"), linewidth=figs.line.get(l, {}).get("lw", 1.0))
            drawn = True
    ax.set_xlabel("staleness: virtual seconds from snapshot to merge")
    ax.set_ylabel("merged models (per run)")
    if drawn:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)  # beside the bars, never over them
    ax.set_title(title)
    fig.tight_layout()
    figs.save(fig, "staleness.png")
    legend = ax.get_legend()
    # Measured on the figure as drawn: whether the legend lies beside the axes, clear of the bars.
    beside = bool(legend and legend.get_window_extent().x0 >= ax.get_window_extent().x1)
    figs.note("staleness.png", **axis_facts(ax), legend_beside_axes=beside)
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


def activity(figs, by_label, colour, title):
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
        rate_ax.plot(centres, counts / width, color=colour[l], **(figs.line.get(l) or {"lw": 1}),
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
        if not figs.line:  # comparing kinds of runs: the lines alone, bands would hide them
            util_ax.fill_between(centres, lo, hi, color=colour[l], alpha=0.2, lw=0)
        util_ax.plot(centres, mid, color=colour[l], label=l, **(figs.line.get(l) or {"lw": 1}))
        facts[l] = {"transfers_finished": int(counts.sum()), "bin_s": float(width), "nodes": len(shares),
                    "sending_s": sending if len(sending) <= 64 else {},
                    "sending_share_median": float(np.mean(mid)), "sending_share_min": float(lo.min()),
                    "sending_share_max": float(hi.max())}
    if not facts:
        plt.close(fig)
        return
    rate_ax.set_ylabel("transfers finished per s\n(allreduce: ring chunks)")
    rate_ax.set_ylim(bottom=0)  # from 0: a scale from 25 made a dip look like a stop
    rate_ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    rate_ax.set_title(f"{title}: the whole run ({ACTIVITY_BINS} bins)", fontsize=10)
    util_ax.set_ylabel("share of time sending\n(median node)" if figs.line else "share of time sending\n(median node; band 10-90%)")
    util_ax.set_ylim(0, 1.02)
    util_ax.set_xlabel("virtual time (s)")
    for ax in (rate_ax, util_ax):
        ax.grid(alpha=0.3)
        ax.set_xlim(0, max(number(r[0]["summary"].get("virtual_s")) or 0 for r in by_label.values()))
    fig.tight_layout()
    figs.save(fig, "activity.png")
    figs.note("activity.png", methods=sorted(facts), per_method=facts, **axis_facts(util_ax))
    plt.close(fig)


def heat_maps(figs, by_label, key, src, dst, name, what):
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
    figs.save(fig, name)
    figs.note(name, methods=labels, colour_min=0.0, colour_max=float(top))
    plt.close(fig)


def regional_consensus(figs, by_label, colour, title):
    """consensus_regions.png: the consensus distance within regions (solid) and between them (dashed)."""
    labels = [l for l, runs in by_label.items() if runs[0]["consensus_regions"]]
    if not labels:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    drawn = False
    # With one node per region there is nothing within a region: its
    # distance is 0 throughout, drawn as lines on the axis it said nothing.
    alone = all(number(r.get("within")) == 0 for l in labels for r in by_label[l][0]["consensus_regions"]
                if r.get("within"))
    for l in labels:
        rows = by_label[l][0]["consensus_regions"]
        for column, style in ((("between", "--"),) if alone else (("within", "-"), ("between", "--"))):
            xs, ys = series(rows, "time_s", column)
            if len(xs):
                ax.plot(xs, ys, style, color=colour[l], label=f"{l} {column}")
                drawn = True
    if not drawn:  # nothing evaluated (timeline only): no empty axes
        plt.close(fig)
        return
    ax.set_xlabel("virtual time (s)")
    ax.set_ylabel("consensus distance between regions (dashed)" if alone else
                  "consensus distance: within regions (solid), between (dashed)")
    ax.set_yscale("symlog", linthresh=1e-6)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title + ("\none node per region: the distance within regions is 0, not drawn" if alone else ""),
                 fontsize=9)
    fig.tight_layout()
    figs.save(fig, "consensus_regions.png")
    figs.note("consensus_regions.png", **axis_facts(ax), one_node_per_region=alone)
    plt.close(fig)
