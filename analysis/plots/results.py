"""Reading what gossipsim run and sweep wrote: one reader for every file the
plots read, so that a damaged file (cut short, only a header, a cell that is
no number, JSON that does not parse, bytes that are not text) is refused in
one line naming the file, its line and column, never drawn as if whole.

Also here: which folders are results, and whether runs may be pooled as seeds.
"""
import csv
import json
import math
import operator
import os
import re

import numpy as np


class PlotError(Exception):
    """A request the plots cannot honour: one line, exit 2."""


def read_json(path, what):
    """A JSON document; PlotError naming the file when it does not parse."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except UnicodeDecodeError as e:
        raise PlotError(f"{path}: expected {what}, JSON text; byte {e.start} is not UTF-8") from None
    except json.JSONDecodeError as e:
        raise PlotError(f"{path}: line {e.lineno} column {e.colno}: expected {what}: {e.msg}") from None


def number(x):
    return float(x) if x not in ("", None) else math.nan


def read_table(path, numbers=(), required=(), at_least_one_row=False, what="a CSV file written by gossipsim"):
    """A CSV file as rows (dicts), checked: a header holding `required`, every
    row as long as the header (a row cut short is refused), every cell of a
    column in `numbers` a finite number or empty."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None:
                raise PlotError(f"{path}: expected {what}; it is empty")
            missing = [c for c in required if c not in header]
            if missing:
                raise PlotError(f"{path} line 1: expected the columns of {what}; {missing[0]} is missing")
            checked = [(header.index(c), c) for c in numbers if c in header]
            rows = []
            for line, cells in enumerate(reader, start=2):
                if len(cells) != len(header):
                    raise PlotError(f"{path} line {line}: expected {len(header)} cells, as its header has; found "
                                    f"{len(cells)} (a file cut short, or damaged)")
                for i, column in checked:
                    text = cells[i]
                    if text == "":
                        continue
                    try:
                        ok = math.isfinite(float(text))
                    except ValueError:
                        ok = False
                    if not ok:
                        raise PlotError(f"{path} line {line}: {column}: expected a number or nothing, got {text!r}")
                rows.append(dict(zip(header, cells)))
    except UnicodeDecodeError as e:
        raise PlotError(f"{path}: expected {what}, text; byte {e.start} is not UTF-8") from None
    except csv.Error as e:
        raise PlotError(f"{path}: expected {what}: {e}") from None
    if at_least_one_row and not rows:
        raise PlotError(f"{path}: expected {what} with at least one row; it has only its header")
    return rows


def read_csv(path):
    return read_table(path)


METRIC_COLUMNS = ("time_s", "epochs", "iterations", "accuracy", "loss", "node_accuracy_mean", "node_accuracy_min",
                  "node_accuracy_max", "node_loss_mean", "node_loss_min", "node_loss_max", "consensus", "bytes_sent",
                  "transfers", "merges")


def read_metrics(path, end_s):
    """metrics.csv: one row per evaluation, the last at the run's end
    (`end_s`, from summary.json): a file cut short at a row boundary is
    refused too, not drawn as a curve that stops early."""
    rows = read_table(path, numbers=METRIC_COLUMNS, required=("method", "time_s", "accuracy"), at_least_one_row=True,
                      what="the metrics a run wrote")
    times = [number(r["time_s"]) for r in rows]
    for line, (a, b) in enumerate(zip(times, times[1:]), start=3):
        if not b >= a:
            raise PlotError(f"{path} line {line}: time_s: expected times in order; {b:g} comes after {a:g}")
    if end_s is not None and math.isfinite(end_s) and abs(times[-1] - end_s) > 1e-6 * max(1.0, end_s):
        raise PlotError(f"{path}: expected evaluations up to the end of the run, {end_s:g} virtual s (summary.json); "
                        f"the last is at {times[-1]:g} s (a file cut short)")
    return rows


NUMERIC_TRANSFER_COLUMNS = ("start_s", "finish_s", "staleness_s")


def read_transfers(path):
    """transfers.csv as columns (a million rows in a few seconds): the
    senders as a list of names, the times as float arrays (NaN where empty).
    Checked as read_table checks, column by column."""
    what = "the transfers a run wrote"
    wanted = ("src",) + NUMERIC_TRANSFER_COLUMNS
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None:
                raise PlotError(f"{path}: expected {what}; it is empty")
            missing = [c for c in wanted if c not in header]
            if missing:
                raise PlotError(f"{path} line 1: expected the columns of {what}; {missing[0]} is missing")
            pick = operator.itemgetter(*(header.index(c) for c in wanted))
            width, rows = len(header), []
            for line, cells in enumerate(reader, start=2):
                if len(cells) != width:
                    raise PlotError(f"{path} line {line}: expected {width} cells, as its header has; found "
                                    f"{len(cells)} (a file cut short, or damaged)")
                rows.append(pick(cells))
    except UnicodeDecodeError as e:
        raise PlotError(f"{path}: expected {what}, text; byte {e.start} is not UTF-8") from None
    except csv.Error as e:
        raise PlotError(f"{path}: expected {what}: {e}") from None
    columns = list(zip(*rows)) if rows else [()] * len(wanted)
    out = {"rows": len(rows), "src": list(columns[0])}
    for name, column in zip(NUMERIC_TRANSFER_COLUMNS, columns[1:]):
        try:
            values = np.array([float(x) if x else math.nan for x in column], dtype=float)
            given = np.array([x != "" for x in column], dtype=bool)
            bad = np.flatnonzero(given & ~np.isfinite(values)) if len(values) else []
        except ValueError:
            bad = [next(i for i, x in enumerate(column) if x and not _is_number(x))]
        if len(bad):
            raise PlotError(f"{path} line {bad[0] + 2}: {name}: expected a number or nothing, got {column[bad[0]]!r}")
        out[name] = values
    return out


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def optional_csv(path, numbers=()):
    return read_table(path, numbers=numbers) if os.path.exists(path) else []


def read_summary(folder):
    """A run's summary.json, checked for what the plots read."""
    path = os.path.join(folder, "summary.json")
    summary = read_json(path, "the summary a run wrote")
    if not isinstance(summary, dict) or not isinstance(summary.get("methods"), list):
        raise PlotError(f"{path}: /methods: expected the list of the run's methods")
    for i, m in enumerate(summary["methods"]):
        if not isinstance(m, dict) or not isinstance(m.get("label"), str) or not m["label"]:
            raise PlotError(f"{path}: /methods/{i}/label: expected the method's label")
        for key in ("time_to_accuracy",):
            if not isinstance(m.get(key), dict):
                raise PlotError(f"{path}: /methods/{i}/{key}: expected an object")
    return summary


def load_run(folder):
    summary = read_summary(folder)
    methods = {}
    for m in summary["methods"]:
        label = m["label"]
        d = os.path.join(folder, label)
        end = m.get("virtual_s")
        methods[label] = {
            "folder": os.path.abspath(folder),
            "summary": m,
            "metrics": read_metrics(os.path.join(d, "metrics.csv"), end if isinstance(end, (int, float)) else None),
            "transfers": read_transfers(os.path.join(d, "transfers.csv")),
            "trace": os.path.join(d, "trace.json") if os.path.exists(os.path.join(d, "trace.json")) else None,
            "events": optional_csv(os.path.join(d, "events.csv"), numbers=("time_s", "value")),
            "matrix": optional_csv(os.path.join(d, "comm_matrix.csv"), numbers=("transfers", "bytes", "lost")),
            "regions": optional_csv(os.path.join(d, "comm_regions.csv"), numbers=("transfers", "bytes")),
            "consensus_regions": optional_csv(os.path.join(d, "consensus_regions.csv"),
                                              numbers=("time_s", "consensus", "within", "between")),
        }
    return summary, methods


# What a result's provenance (summary.json) holds that does not change its
# numbers: left out when results are compared.
PROVENANCE_IGNORED = ("gossipsim/dirty", "host/kernel", "blas/library", "resumed_with", "libtorch/package")


def flat_provenance(p, prefix=""):
    """A provenance as {"blas/version": "0.3.21", ...}, without what does not change numbers."""
    out = {}
    for k, v in (p or {}).items():
        key = f"{prefix}{k}"
        if any(key == i or key.startswith(i + "/") for i in PROVENANCE_IGNORED):
            continue
        if isinstance(v, dict):
            out.update(flat_provenance(v, key + "/"))
        else:
            out[key] = v
    return out


def describe_provenance(p):
    """One line: what made a result."""
    if not p:
        return "a gossipsim older than provenance records"
    g, h, b = p.get("gossipsim", {}), p.get("host", {}), p.get("blas", {})
    text = f"gossipsim {g.get('version', '?')} ({g.get('commit', '?')}{', with changes' if g.get('dirty') else ''})"
    if p.get("kernels") == "torch":
        core = f" {b['core']}" if b.get("core") else ""
        text += (f", LibTorch {p.get('libtorch', {}).get('version', '?')}, {b.get('name', '?')} BLAS "
                 f"{b.get('version', '')}{core} ({b.get('threads', '?')} thread(s)), {p.get('workers', '?')} worker(s)")
    else:
        text += ", timeline only (no kernels)"
    return text + f", on {h.get('cpu', '?')} ({h.get('cores', '?')} cores)"


def provenance_lines(provenances):
    """Lines for a table: what made the pooled results, and, where they
    differ in anything that changes numbers, in what."""
    flats = [flat_provenance(p) for p in provenances]
    keys = sorted({k for f in flats for k in f})
    differ = [k for k in keys if len({json.dumps(f.get(k)) for f in flats}) > 1]
    first = describe_provenance(provenances[0] if provenances else None)
    if not differ:
        return [f"Made by {first}" + (f" (all {len(provenances)} results)." if len(provenances) > 1 else ".")]
    detail = "; ".join(
        f"{k}: " + ", ".join(f"{json.dumps(v)} in {sum(1 for f in flats if f.get(k) == v)}"
                             for v in dict.fromkeys(f.get(k) for f in flats))
        for k in differ[:6])
    return [f"**The {len(provenances)} results pooled here were made differently** (their curves are not comparable "
            f"bit for bit): {detail}. The first: {first}."]


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
    """"real" for a result of `run --real`, else "sim <flow model>" (slowstart
    told a congestion control: "sim slowstart+<it>", a model of its own, and
    "+acked" or "+paced" after it where its rounds leave as ACKs come back or
    as BBR paces them)."""
    if summary.get("real"):
        return "real"
    net = scenario.get("network", {})
    model = net.get("model", "maxmin")
    slowstart = (net.get("slowstart") or {}) if model == "slowstart" else {}
    congestion = slowstart.get("congestion", "none")
    if congestion == "none":
        return "sim " + model
    sending = slowstart.get("round_sending", "burst")
    return "sim " + model + "+" + congestion + ("+" + sending if sending in ("acked", "paced") else "")


def refuse_invalid_real(folder, summary):
    for m in summary["methods"]:
        r = m.get("real") or {}
        if r and not r.get("valid", True):
            raise PlotError(f"{folder}: {m['label']} is marked invalid ({r.get('invalid_because', '')}): "
                            "a comparison with it would mislead (run it again, dilated: /network/real/dilation)")
