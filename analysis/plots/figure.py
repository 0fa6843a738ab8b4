"""Where figures and tables go, and what each figure shows.

Figures is the one object a plotting call writes through: the output
folder, the facts of each figure (methods drawn, axis ranges, colour scales,
written to figures.json so that tests check figures without comparing
pixels) and the line style of each label. Nothing here is module state: a
Figures is made per call of the command.
"""
import json
import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402,F401  (the backend is chosen before any figure)

# More legend entries than this go beside the axes, not over the curves.
MAX_LEGEND_INSIDE = 8

# Line styles of kinds of runs (simulation against real runs: one colour
# per method, one style per kind).
KIND_STYLE = {"real": {"ls": "-", "lw": 2.0}, "sim maxmin": {"ls": "--", "lw": 1.2},
              "sim tcp": {"ls": "-.", "lw": 1.2}, "sim slowstart": {"ls": ":", "lw": 1.5}}


def kind_style(kind):
    """The line of a kind of run: slowstart with queues dashed, with acked
    rounds dash-dot-dotted and with paced ones long-dashed, so that the
    readings stay apart."""
    if kind.endswith("+acked"):
        return {"ls": (0, (4, 1.5, 1, 1.5, 1, 1.5)), "lw": 1.2}
    if kind.endswith("+paced"):
        return {"ls": (0, (8, 2)), "lw": 1.2}
    return KIND_STYLE.get(kind, {"ls": "--", "lw": 1.2})


class Figures:
    """The output folder of one plot command, the facts of its figures and
    the line style of each label (empty unless kinds of runs are compared)."""

    def __init__(self, out):
        self.out = out
        self.facts = {}
        self.line = {}

    def path(self, name):
        return os.path.join(self.out, name)

    def note(self, name, **facts):
        self.facts.setdefault(name, {}).update(facts)

    def save(self, fig, name):
        """Writes a figure whole or not at all: to a temporary name, renamed
        into place; an error names the file."""
        path = self.path(name)
        tmp = f"{path}.tmp-{os.getpid()}.png"
        try:
            fig.savefig(tmp, dpi=110)
            os.replace(tmp, path)
        except OSError as e:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise OSError(e.errno, e.strerror or str(e), path) from None

    def write_facts(self):
        """figures.json, strict JSON: a number that is not finite (an
        interval two seeds cannot give) is null."""
        path = self.path("figures.json")
        tmp = f"{path}.tmp-{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump(finite_or_null(self.facts), f, indent=1, allow_nan=False)
        os.replace(tmp, path)


def finite_or_null(v):
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: finite_or_null(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [finite_or_null(x) for x in v]
    return v


def axis_facts(ax):
    """Methods (legend labels) and ranges of an axis as drawn."""
    labels = [t.get_text() for t in ax.get_legend().get_texts()] if ax.get_legend() else []
    return {"labels": labels, "xlim": [float(v) for v in ax.get_xlim()], "ylim": [float(v) for v in ax.get_ylim()],
            "artists": len(ax.lines) + len(ax.collections) + len(ax.patches) + len(ax.images)}
