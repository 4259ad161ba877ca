"""Diagnostics of batch-based evaluation vs time windows (docs/forecasting.md, "Diagnostics"; pure, no I/O).

Fixed-size batches of ``b`` events lose information (events of different times in one batch, problem a), leak it
(one timestamp spread over several batches, problem b) and cover varying durations (problem c); windows of a fixed
horizon do not. This module measures all three on an event stream, the way the paper does (normalised mutual
information of timestamp and batch id, Fig. 2 and Table 2; of batch id and window id, Table 3; ``|E_t|`` and
``T/m``, Table 1) and with direct counts of our own (the paper defines none), and composes them into one JSON-ready
:func:`report` per dataset. :func:`plot_report` draws it (needs matplotlib: the ``plot`` extra).

Conventions: logarithms are natural; every mean and standard deviation is the population one (``ddof=0``); a
measure that is undefined (a coefficient of variation with mean 0, the durations of a single batch) is ``None``,
so a report holds no NaN and serialises as strict JSON.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import ArrayLike

from tgbhub.errors import InvalidNameError, MissingExtraError
from tgbhub.forecasting.windows import (
    DEFAULT_BATCH_SIZE,
    Described,
    EventDataset,
    Events,
    WindowIndex,
    check_horizon,
    events,
    suggest_horizon,
    window_index,
)
from tgbhub.manifest import require_kind

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: batch sizes Table 2's "max over b" is taken over by default (plus the chosen b and the mean ``|E_t|``)
DEFAULT_BATCH_GRID = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000)
#: the task whose declared horizon :func:`report` uses by default
FORECAST_TASK = "window-forecast"
#: the most points a report's plotting series keep (longer ones are thinned to every k-th point)
MAX_SERIES_POINTS = 2000
#: the name of the pseudo-split covering every event (whole-dataset windows, Table 3's mean window size)
_ALL = "<all>"


# --- normalised mutual information --------------------------------------------------------------------------------


def nmi(x: ArrayLike, y: ArrayLike) -> float:
    """Normalised mutual information of two labellings, ``I(X,Y) / (½(H(X)+H(Y)))`` in natural logs.

    Exactly scikit-learn's ``normalized_mutual_info_score(x, y)`` (arithmetic normalisation, empirical
    frequencies): 1.0 when both labellings are constant (or empty), 0.0 when only one is, or when ``I(X,Y) = 0``.
    Labels may be any sortable values (timestamps, batch ids); O(n log n).

    Raises:
        InvalidNameError: if ``x`` or ``y`` is not one-dimensional, holds NaN/inf, or their lengths differ.
    """
    x, y = _labels(x, "x"), _labels(y, "y")
    if len(x) != len(y):
        raise InvalidNameError(f"x has {len(x)} labels but y has {len(y)}; pass one label of each per event")
    return _nmi_codes(*_codes(x), *_codes(y))


def _labels(values: ArrayLike, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise InvalidNameError(f"{name} has shape {array.shape}; pass a one-dimensional array, one label per event")
    if array.dtype.kind in "fc" and not np.isfinite(array).all():
        bad = int(np.flatnonzero(~np.isfinite(array))[0])
        raise InvalidNameError(f"{name}[{bad}] is {array[bad].item()!r}; labels must be finite: drop or fill "
                               "such events")
    return array


def _codes(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense codes ``0..k-1`` of ``values`` (in sorted order) and ``k``."""
    uniq, inverse = np.unique(values, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64, copy=False), len(uniq)


def mutual_info(x: ArrayLike, y: ArrayLike) -> float:
    """``I(X,Y) = Σ p(x,y) ln(p(x,y) / (p(x)p(y)))`` in nats over the empirical frequencies (scikit-learn's
    ``mutual_info_score``).

    Raises:
        InvalidNameError: as :func:`nmi`.
    """
    x, y = _labels(x, "x"), _labels(y, "y")
    if len(x) != len(y):
        raise InvalidNameError(f"x has {len(x)} labels but y has {len(y)}; pass one label of each per event")
    return _mi_codes(*_codes(x), *_codes(y))


def entropy(labels: ArrayLike) -> float:
    """``H(X) = -Σ p(x) ln p(x)`` in nats over the empirical frequencies (0 for a constant labelling; 1.0 for an
    empty one, as scikit-learn's ``entropy``).

    Raises:
        InvalidNameError: if ``labels`` is not one-dimensional or holds NaN/inf.
    """
    codes, count = _codes(_labels(labels, "labels"))
    return 1.0 if count == 0 else _entropy(np.bincount(codes, minlength=count))


def _mi_codes(cx: np.ndarray, nx: int, cy: np.ndarray, ny: int) -> float:
    """:func:`mutual_info` of two dense code arrays with ``nx`` and ``ny`` distinct codes (scikit-learn's
    arithmetic, term by term, so the two agree to the last bit)."""
    if nx <= 1 or ny <= 1:  # a constant labelling carries no information
        return 0.0
    joint, cells = np.unique(cx * np.int64(ny) + cy, return_counts=True)
    px, py = np.bincount(cx, minlength=nx), np.bincount(cy, minlength=ny)
    n = float(len(cx))
    cells = cells.astype(np.float64)
    p_joint = cells / n
    outer = px[joint // ny].astype(np.int64) * py[joint % ny].astype(np.int64)
    log_outer = -np.log(outer) + math.log(float(px.sum())) + math.log(float(py.sum()))
    terms = p_joint * (np.log(cells) - math.log(n)) + p_joint * log_outer
    terms = np.where(np.abs(terms) < np.finfo(np.float64).eps, 0.0, terms)
    return float(np.clip(terms.sum(), 0.0, None))


def _nmi_codes(cx: np.ndarray, nx: int, cy: np.ndarray, ny: int) -> float:
    """:func:`nmi` of two dense code arrays with ``nx`` and ``ny`` distinct codes."""
    if nx == ny == 1 or nx == ny == 0:  # neither labelling splits the events: a perfect match
        return 1.0
    mi = _mi_codes(cx, nx, cy, ny)
    if mi == 0.0:
        return 0.0
    hx, hy = _entropy(np.bincount(cx, minlength=nx)), _entropy(np.bincount(cy, minlength=ny))
    return float(mi / np.mean([hx, hy]))


def _entropy(counts: np.ndarray) -> float:
    """``H`` in nats of the distribution with these (non-negative) counts."""
    counts = counts[counts > 0].astype(np.float64)
    if counts.size <= 1:
        return 0.0
    total = float(counts.sum())
    return float(-np.sum((counts / total) * (np.log(counts) - math.log(total))))


# --- timestamps -----------------------------------------------------------------------------------------------------


def timestamp_multiplicity(t: ArrayLike) -> dict[str, float]:
    """``|E_t|``, the number of events per distinct timestamp (Table 1): ``distinct`` timestamps, ``mean`` and
    ``std`` over them, ``max``. Leakage is possible wherever ``|E_t| > b``.

    Raises:
        InvalidNameError: if ``t`` is empty, not one-dimensional, or holds NaN/inf.
    """
    counts = np.unique(_nonempty(t, "t"), return_counts=True)[1]
    return {"distinct": int(len(counts)), "mean": float(counts.mean()), "std": float(counts.std()),
            "max": int(counts.max())}


def temporal_density(t: ArrayLike) -> float:
    """``T/m``: the time the events span (last minus first time) divided by their number (Table 1), i.e. the
    expected time per event; ``b * T/m`` is the expected duration of a batch of ``b``.

    Raises:
        InvalidNameError: if ``t`` is empty, not one-dimensional, or holds NaN/inf.
    """
    t = _nonempty(t, "t")
    return float(t.max() - t.min()) / len(t)


def _nonempty(t: ArrayLike, name: str) -> np.ndarray:
    array = _labels(t, name)
    if len(array) == 0:
        raise InvalidNameError(f"{name} holds no events; pass the times of a non-empty event list or split")
    return array


def _sorted_times(t: ArrayLike) -> np.ndarray:
    array = _nonempty(t, "t")
    if array.dtype.kind not in "iuf":
        raise InvalidNameError(f"t has dtype {array.dtype}; pass numeric event times, e.g. events(dataset).t")
    down = np.flatnonzero(array[1:] < array[:-1])
    if len(down):
        i = int(down[0])
        first, second = array[i].item(), array[i + 1].item()
        raise InvalidNameError(f"t is not sorted by time: t[{i}]={first!r} > t[{i + 1}]={second!r}; pass the "
                               "time-sorted events, e.g. events(dataset).t")
    return array


def _batch_size(b: object) -> int:
    if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 1:
        raise InvalidNameError(f"batch size {b!r} is not a positive integer; pass e.g. b=200")
    return int(b)


# --- batches --------------------------------------------------------------------------------------------------------


def batch_measures(t: ArrayLike, b: int) -> dict[str, float | None]:
    """Information loss, leakage and duration measures of cutting the time-sorted times ``t`` into batches of
    ``b`` consecutive events (the last may be shorter):

    * ``nmi_time_batch``: NMI(timestamp, batch id) (Fig. 2);
    * ``multi_ts_batch_frac``: share of batches holding ≥ 2 distinct timestamps (problem a);
    * ``split_ts_frac``: share of distinct timestamps whose events fall into ≥ 2 batches (problem b);
    * ``leak_edge_frac`` (``leak_edges``): share (number) of events with an event of the same timestamp in an
      *earlier* batch, i.e. those whose prediction can use leaked same-time information;
    * ``batch_duration_mean/std/cv``: batch durations ``t[b*(i+1)] - t[b*i]``, the paper's ``t_{b(i+1)} - t_{b·i}``
      read with 0-based positions: the time from batch ``i``'s first event to the next batch's first event, so
      one duration per batch that has a successor (``None`` with a single batch; the CV is ``None`` at mean 0).

    Raises:
        InvalidNameError: if ``t`` is empty, not sorted by time or not numeric, or ``b`` is not a positive integer.
    """
    t, b = _sorted_times(t), _batch_size(b)
    m = len(t)
    batch = np.arange(m, dtype=np.int64) // b
    count = int(batch[-1]) + 1
    new_time = np.ones(m, dtype=bool)
    new_time[1:] = t[1:] != t[:-1]
    run_start = np.flatnonzero(new_time)  # first position of each distinct timestamp
    run_last = np.append(run_start[1:], m) - 1
    first_of_own_time = np.repeat(run_start, run_last - run_start + 1)
    starts = np.arange(0, m, b, dtype=np.int64)
    ends = np.minimum(starts + b, m) - 1
    leaks = int(np.count_nonzero(batch[first_of_own_time] < batch))
    durations = (t[starts[1:]] - t[starts[:-1]]).astype(np.float64)
    time_codes = np.cumsum(new_time, dtype=np.int64) - 1
    return {"batch_size": b, "events": m, "batches": count,
            "nmi_time_batch": _nmi_codes(time_codes, len(run_start), batch, count),
            "multi_ts_batch_frac": float(np.count_nonzero(t[starts] != t[ends])) / count,
            "split_ts_frac": float(np.count_nonzero(batch[run_start] != batch[run_last])) / len(run_start),
            "leak_edges": leaks, "leak_edge_frac": leaks / m, **_spread("batch_duration", durations)}


def _spread(prefix: str, values: np.ndarray) -> dict[str, float | None]:
    """``{prefix}_mean``, ``_std`` and ``_cv`` (std/mean; ``None`` when empty or at mean 0)."""
    if len(values) == 0:
        return {f"{prefix}_mean": None, f"{prefix}_std": None, f"{prefix}_cv": None}
    mean, std = float(values.mean()), float(values.std())
    return {f"{prefix}_mean": mean, f"{prefix}_std": std, f"{prefix}_cv": std / mean if mean != 0 else None}


# --- windows --------------------------------------------------------------------------------------------------------


def window_ids(windows: WindowIndex | ArrayLike, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The window id of each of ``m`` events, and the size of every window (empty ones included).

    ``windows`` is a :class:`WindowIndex` of the events' split (ids ``0..len-1``) or one integer window id per
    event; the windows of an id array are the integers from its smallest to its largest id, so a missing id is an
    empty window (e.g. ``floor((t - t0) / h)``).

    Raises:
        InvalidNameError: if the windows do not hold exactly ``m`` events, or the ids are not integers.
    """
    if isinstance(windows, WindowIndex):
        sizes = np.asarray(windows.sizes, dtype=np.int64)
        if int(sizes.sum()) != m:
            raise InvalidNameError(f"the windows of split {windows.split!r} hold {int(sizes.sum())} events, not "
                                   f"{m}; pass the times of that split, e.g. ev.t[lo:hi] with lo, hi = "
                                   "ev.range(split)")
        return np.repeat(np.arange(len(sizes), dtype=np.int64), sizes), sizes
    ids = _labels(windows, "window ids")
    if ids.dtype.kind not in "iu":
        raise InvalidNameError(f"window ids have dtype {ids.dtype}; pass integer ids, e.g. "
                               "np.floor((t - t0) / h).astype(int), or a WindowIndex")
    if len(ids) != m:
        raise InvalidNameError(f"{len(ids)} window ids for {m} events; pass one window id per event")
    if m == 0:
        return ids.astype(np.int64), np.zeros(0, dtype=np.int64)
    ids = ids.astype(np.int64) - int(ids.min())
    return ids, np.bincount(ids)


def window_measures(t: ArrayLike, windows: WindowIndex | ArrayLike) -> dict[str, float | None]:
    """Measures of the windows holding the events with times ``t`` (the paper's Table 3 and Figs. 12-13):
    ``nmi_time_window`` (NMI(timestamp, window id); 1 when each window is one distinct timestamp), the number of
    ``windows`` and of ``empty_windows``, events per window ``size_mean``/``size_std``/``window_size_cv`` over all
    windows (empty ones included: every window spans the same time, as in Table 3), ``size_mean_nonempty``/
    ``size_std_nonempty`` over the non-empty ones, and ``size_max``. ``windows``: see :func:`window_ids`.

    Raises:
        InvalidNameError: if ``t`` is empty, not one-dimensional or holds NaN/inf, or ``windows`` does not match it.
    """
    t = _nonempty(t, "t")
    ids, sizes = window_ids(windows, len(t))
    filled = sizes[sizes > 0]
    spread = _spread("size", sizes.astype(np.float64))
    return {"windows": int(len(sizes)), "empty_windows": int(len(sizes) - len(filled)),
            "nmi_time_window": nmi(t, ids), "size_mean": spread["size_mean"], "size_std": spread["size_std"],
            "window_size_cv": spread["size_cv"], "size_mean_nonempty": float(filled.mean()),
            "size_std_nonempty": float(filled.std()), "size_max": int(filled.max())}


def nmi_batch_window(t_split: ArrayLike, b: int, windows: WindowIndex | ArrayLike) -> float:
    """NMI(batch id, window id) over the time-sorted events ``t_split`` of one split (Table 3; the paper uses
    ``b=200`` and the test split): how differently the two protocols chunk the same events.

    Raises:
        InvalidNameError: if ``t_split`` is empty or not sorted, ``b`` is not a positive integer, or ``windows``
            does not match the events (see :func:`window_ids`).
    """
    t, b = _sorted_times(t_split), _batch_size(b)
    ids = window_ids(windows, len(t))[0]
    batch = np.arange(len(t), dtype=np.int64) // b
    return _nmi_codes(batch, int(batch[-1]) + 1, *_codes(ids))


# --- the report of one dataset --------------------------------------------------------------------------------------


def report(dataset: Described, batch_size: int = DEFAULT_BATCH_SIZE, horizon: float | None = None,
           split: str = "test", batch_grid: Sequence[int] | None = None) -> dict[str, Any]:
    """Every diagnostic of one dataset as a JSON-ready dict (plain ints, floats, lists, ``None``; no NaN).

    * ``all``: over the whole event list: ``multiplicity`` (``|E_t|``), ``temporal_density`` (``T/m``),
      ``nmi_time_batch`` per batch size of the grid with its ``nmi_time_batch_max`` (Table 2), and the windows of
      the horizon (``windows``, anchored at the first split's start; Table 3's mean window size);
    * ``split``: over ``split``'s events: ``multiplicity``, ``batches`` (:func:`batch_measures` at
      ``batch_size``), ``windows`` (:func:`window_measures` of its :func:`window_index`) and
      ``nmi_batch_window`` (Table 3's NMI);
    * ``series``: what :func:`plot_report` draws (thinned to :data:`MAX_SERIES_POINTS` points).

    ``horizon`` defaults to the ``horizon.value`` of the manifest's ``window-forecast`` task, else
    :func:`suggest_horizon`'s; ``batch_grid`` to :data:`DEFAULT_BATCH_GRID` plus the mean ``|E_t|`` (where the
    NMI of snapshot data peaks). The chosen ``batch_size`` is always in the grid; sizes above ``m`` are dropped.

    Raises:
        InvalidNameError: for an unknown split, a split or dataset without events, a batch size (or grid entry)
            that is not a positive integer, or a horizon that is not a positive number.
        UnsupportedTaskError: if ``dataset`` is not a temporal graph.
    """
    require_kind(dataset.manifest, "temporal-graph", "forecast-stats")
    graph = cast(EventDataset, dataset)  # a temporal graph: checked just above
    ev = events(graph)
    batch_size = _batch_size(batch_size)
    t_all = _sorted_times(ev.t)
    chosen = _choose_horizon(graph, ev, batch_size, horizon)
    lo, hi = ev.range(split)
    if hi == lo:
        raise InvalidNameError(f"split {split!r} of {dataset.manifest.name} holds no events; pick another split "
                               f"(the splits are {', '.join(ev.splits)})")
    t_split = ev.t[lo:hi]
    split_windows = window_index(ev, split, chosen["value"])
    everything = window_index(_whole(ev), _ALL, chosen["value"])
    multiplicity = timestamp_multiplicity(t_all)
    grid = _grid(batch_grid, batch_size, multiplicity["mean"], len(t_all))
    curve = _nmi_curve(t_all, grid)
    best = max(curve, key=lambda point: point["nmi"])
    batches = batch_measures(t_split, batch_size)
    manifest = dataset.manifest
    return {"dataset": f"{manifest.name}@{manifest.version}", "time": ev.time, "events": len(t_all),
            "batch_size": batch_size, "horizon": chosen,
            "all": {"multiplicity": multiplicity, "temporal_density": temporal_density(t_all),
                    "nmi_time_batch": curve, "nmi_time_batch_max": best,
                    "windows": window_measures(t_all, everything)},
            "split": {"name": split, "events": len(t_split), "multiplicity": timestamp_multiplicity(t_split),
                      "batches": batches, "windows": window_measures(t_split, split_windows),
                      "nmi_batch_window": nmi_batch_window(t_split, batch_size, split_windows)},
            "series": _series(t_all, t_split, batch_size, split_windows)}


def _choose_horizon(dataset: EventDataset, ev: Events, batch_size: int, horizon: float | None) -> dict[str, Any]:
    """``{"value", "source"}``: the argument, else the forecasting task's declared horizon, else the suggestion."""
    if horizon is not None:
        return {"value": _plain(check_horizon(horizon, ev.time)), "source": "argument"}
    for task in getattr(dataset.manifest, "tasks", ()):
        declared = task.get("horizon") if task.get("name") == FORECAST_TASK else None
        if isinstance(declared, Mapping) and declared.get("value") is not None:
            return {"value": _plain(check_horizon(declared["value"], ev.time)), "source": f"task {FORECAST_TASK}"}
    suggested = suggest_horizon(ev, batch_size)
    return {"value": _plain(check_horizon(suggested["value"], ev.time)), "source": suggested["rule"]}


def _whole(ev: Events) -> Events:
    """``ev`` with one more split, :data:`_ALL`, holding every event (windows anchored at the first split)."""
    snapshots = dict(ev.split_snapshots)
    if ev.time == "snapshot" and snapshots:
        snapshots[_ALL] = (min(s for s, _ in snapshots.values()), max(e for _, e in snapshots.values()))
    return dataclasses.replace(ev, splits={**ev.splits, _ALL: (0, len(ev))}, split_snapshots=snapshots)


def _grid(batch_grid: Sequence[int] | None, batch_size: int, mean_multiplicity: float, m: int) -> list[int]:
    sizes = list(DEFAULT_BATCH_GRID) + [max(1, round(mean_multiplicity))] if batch_grid is None else list(batch_grid)
    sizes = [_batch_size(b) for b in sizes] + [batch_size]
    return sorted({b for b in sizes if b <= m} | {batch_size})


def _nmi_curve(t: np.ndarray, grid: Sequence[int]) -> list[dict[str, float]]:
    """NMI(t, batch id) for each batch size of ``grid`` (``t`` sorted: its codes are a running count)."""
    new_time = np.ones(len(t), dtype=bool)
    new_time[1:] = t[1:] != t[:-1]
    codes, distinct = np.cumsum(new_time, dtype=np.int64) - 1, int(new_time.sum())
    positions = np.arange(len(t), dtype=np.int64)
    return [{"batch_size": b, "nmi": _nmi_codes(codes, distinct, positions // b, -(-len(t) // b))} for b in grid]


def _series(t_all: np.ndarray, t_split: np.ndarray, b: int, windows: WindowIndex) -> dict[str, Any]:
    """The plotted series: ``|E_t|`` histogram (whole list), window sizes and batch durations over time (split)."""
    counts = np.unique(t_all, return_counts=True)[1]
    edges = 2 ** np.arange(int(math.log2(int(counts.max()))) + 2, dtype=np.int64)  # [1,2) [2,4) [4,8) ...
    histogram = np.histogram(counts, bins=edges)[0]
    starts = np.arange(0, len(t_split), b, dtype=np.int64)
    durations = t_split[starts[1:]] - t_split[starts[:-1]]
    window_step = max(1, -(-len(windows) // MAX_SERIES_POINTS))
    batch_step = max(1, -(-len(durations) // MAX_SERIES_POINTS))
    return {"multiplicity_bins": _plain(edges), "multiplicity_counts": _plain(histogram),
            "window_step": window_step, "window_t_start": _plain(windows.t_start[::window_step]),
            "window_sizes": _plain(windows.sizes[::window_step]), "batch_step": batch_step,
            "batch_t_start": _plain(t_split[starts[:-1]][::batch_step]),
            "batch_durations": _plain(durations[::batch_step])}


def _plain(value: object) -> Any:
    """Numpy arrays and scalars as Python lists and numbers; non-finite floats as ``None``."""
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# --- presentation ---------------------------------------------------------------------------------------------------


def _fmt(value: object, digits: int = 4) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}" if abs(value) < 1e6 else f"{value:.4g}"
    return str(value)


def report_lines(result: Mapping[str, Any]) -> list[str]:
    """A :func:`report` as readable lines: one measure per line, the paper's table or section in brackets."""
    whole, part = result["all"], result["split"]
    batches, windows, horizon = part["batches"], part["windows"], result["horizon"]
    best, b = whole["nmi_time_batch_max"], result["batch_size"]
    rows = [(f"{result['dataset']}: {result['events']} events, {result['time']} time", ""),
            ("batch size b", str(b)), ("horizon h", f"{_horizon(horizon)} ({horizon['source']})"),
            ("whole dataset", ""),
            ("  events per timestamp |E_t|", _mean_std(whole["multiplicity"], "mean", "std")
             + f" over {whole['multiplicity']['distinct']} timestamps, max {whole['multiplicity']['max']} [T1]"),
            ("  temporal density T/m", f"{_fmt(whole['temporal_density'])} [T1]"),
            *_curve_rows(whole["nmi_time_batch"]),
            ("  max NMI(t, batch id)", f"{best['nmi']:.4f} at b={best['batch_size']} [T2]"),
            ("  NMI(t, window id)", f"{whole['windows']['nmi_time_window']:.4f} at h={_horizon(horizon)}"),
            ("  events per window", _mean_std(whole["windows"], "size_mean", "size_std")
             + f" over {whole['windows']['windows']} windows ({whole['windows']['empty_windows']} empty) [T3]"),
            (f"{part['name']} split ({part['events']} events)", ""),
            ("  events per timestamp |E_t|", _mean_std(part["multiplicity"], "mean", "std")
             + f", max {part['multiplicity']['max']}"),
            ("  NMI(t, batch id)", f"{batches['nmi_time_batch']:.4f} ({batches['batches']} batches)"),
            ("  NMI(t, window id)", f"{windows['nmi_time_window']:.4f} ({windows['windows']} windows, "
             f"{windows['empty_windows']} empty)"),
            ("  NMI(batch id, window id)", f"{part['nmi_batch_window']:.4f} [T3]"),
            ("  batches with >1 timestamp", f"{batches['multi_ts_batch_frac']:.4f} (information loss)"),
            ("  timestamps split over batches", f"{batches['split_ts_frac']:.4f} (leakage)"),
            ("  events with leaked same-time info",
             f"{batches['leak_edge_frac']:.4f} ({batches['leak_edges']} events)"),
            ("  batch duration", _mean_std(batches, "batch_duration_mean", "batch_duration_std")
             + f", CV {_fmt(batches['batch_duration_cv'])}"),
            ("  events per window", _mean_std(windows, "size_mean", "size_std")
             + f", CV {_fmt(windows['window_size_cv'])}; non-empty "
             + _mean_std(windows, "size_mean_nonempty", "size_std_nonempty"))]
    width = max(len(label) for label, value in rows if value)
    return [f"{label:<{width}}  {value}".rstrip() if value else label for label, value in rows]


def _horizon(horizon: Mapping[str, Any]) -> str:
    """``3600.0`` -> ``'3600'``, ``0.5`` -> ``'0.5'``."""
    return f"{horizon['value']:g}"


def _curve_rows(curve: Sequence[Mapping[str, Any]], per_row: int = 6) -> list[tuple[str, str]]:
    cells = [f"b={p['batch_size']}: {p['nmi']:.4f}" for p in curve]
    return [("  NMI(t, batch id) by b" if i == 0 else "", "  ".join(cells[i:i + per_row]))
            for i in range(0, len(cells), per_row)]


def _mean_std(values: Mapping[str, Any], mean: str, std: str) -> str:
    return f"{_fmt(values[mean], 2)} ± {_fmt(values[std], 2)}"


def write_report(result: Mapping[str, Any], name: str, out: str | os.PathLike[str] | None = None
                 ) -> tuple[dict[str, Path], str | None]:
    """Write a :func:`report` of dataset ``name`` as ``forecast-stats-FAMILY-NAME.json`` and its figure
    (:func:`plot_report`) into ``out``.

    Args:
        result: the report.
        name: the dataset it describes, ``family/name[@version]``.
        out: the folder (created if missing; default ``./forecast-stats-FAMILY-NAME``).

    Returns:
        The files written by kind (``json``, ``plot``), and why the figure was skipped (matplotlib missing) or
        ``None``.

    Raises:
        OSError: if the folder or a file cannot be written.
    """
    from tgbhub.cache import write_text_atomic
    from tgbhub.config import output_folder

    stem = output_folder("forecast-stats", name).name
    folder = Path(out) if out is not None else Path(stem)
    folder.mkdir(parents=True, exist_ok=True)
    written = {"json": folder / f"{stem}.json"}
    write_text_atomic(written["json"], json.dumps(result, indent=1, allow_nan=False) + "\n")
    try:
        written["plot"] = plot_report(result, folder / f"{stem}.png")
    except MissingExtraError as exc:
        return written, str(exc)
    return written, None


def plot_report(result: Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Draw a :func:`report` as one PNG of 2x2 panels: NMI(t, batch id) vs b (log x) with the chosen b and the
    window NMI; events per window of the split over time vs the batch size; the ``|E_t|`` histogram; batch
    durations over time vs the window length. Written to a temporary file in the target folder, then renamed.

    Raises:
        MissingExtraError: (a ``ModuleNotFoundError``) if matplotlib is not installed: the ``plot`` extra.
        OSError: if ``path`` cannot be written.
    """
    try:
        import matplotlib
        matplotlib.use("Agg")  # files only: never open a window
        import matplotlib.pyplot as plt
    except ModuleNotFoundError as exc:
        raise MissingExtraError("matplotlib", "plot", "the forecast-stats plot") from exc
    figure, axes = plt.subplots(2, 2, figsize=(10.0, 7.2))
    _plot_nmi(axes[0][0], result)
    _plot_sizes(axes[0][1], result)
    _plot_multiplicity(axes[1][0], result)
    _plot_durations(axes[1][1], result)
    figure.suptitle(f"{result['dataset']}: batches of b={result['batch_size']} vs windows of "
                    f"h={_horizon(result['horizon'])}", fontsize=10)
    figure.tight_layout()
    target = Path(path)
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")  # same folder: the rename is atomic
    try:
        # fixed metadata so two runs write the same bytes
        figure.savefig(partial, format="png", dpi=100, metadata={"Software": None})
        os.replace(partial, target)
    finally:
        plt.close(figure)
        partial.unlink(missing_ok=True)
    return target


def _plot_nmi(axis: Axes, result: Mapping[str, Any]) -> None:
    curve = result["all"]["nmi_time_batch"]
    axis.plot([p["batch_size"] for p in curve], [p["nmi"] for p in curve], marker="o", ms=3, label="batches")
    axis.axvline(result["batch_size"], color="tab:red", ls="--", lw=1, label=f"b={result['batch_size']}")
    axis.axhline(result["all"]["windows"]["nmi_time_window"], color="tab:green", lw=1,
                 label=f"windows, h={_horizon(result['horizon'])}")
    axis.set_xscale("log")
    axis.set(xlabel="batch size b", ylabel="NMI(t, id)", title="NMI(timestamp, batch id), whole dataset",
             ylim=(0.0, 1.05))
    axis.legend(fontsize=8)


def _plot_sizes(axis: Axes, result: Mapping[str, Any]) -> None:
    series = result["series"]
    axis.step(series["window_t_start"], series["window_sizes"], where="post", lw=1, label="events per window")
    axis.axhline(result["batch_size"], color="tab:red", ls="--", lw=1, label="events per batch")
    step = f", every {series['window_step']}th window" if series["window_step"] > 1 else ""
    axis.set(xlabel="window start", ylabel="events", title=f"{result['split']['name']} split{step}")
    axis.legend(fontsize=8)


def _plot_multiplicity(axis: Axes, result: Mapping[str, Any]) -> None:
    series = result["series"]
    bins = series["multiplicity_bins"]
    axis.bar(bins[:-1], series["multiplicity_counts"], width=np.diff(bins), align="edge", edgecolor="white")
    axis.axvline(result["batch_size"], color="tab:red", ls="--", lw=1, label="b: leakage possible beyond")
    axis.set_xscale("log", base=2)
    axis.set(xlabel="events per timestamp |E_t|", ylabel="timestamps", title="|E_t|, whole dataset")
    axis.legend(fontsize=8)


def _plot_durations(axis: Axes, result: Mapping[str, Any]) -> None:
    series = result["series"]
    axis.plot(series["batch_t_start"], series["batch_durations"], ".", ms=3, label="batch durations")
    axis.axhline(result["horizon"]["value"], color="tab:green", lw=1, label="window length h")
    axis.set(xlabel="batch start", ylabel="duration", title=f"batch durations, {result['split']['name']} split")
    axis.legend(fontsize=8)
