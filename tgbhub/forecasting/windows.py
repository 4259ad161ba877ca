"""Time windows and fixed-size batches over a temporal graph's event list (pure functions, no I/O).

Link forecasting (Lampert et al., *From Link Prediction to Forecasting*; docs/forecasting.md) scores every event of a
time window at once, given only the events before the window starts. This module decides which events a task scores and
how they fall into windows and batches; the views, the negatives generator, the evaluator and the baselines all use it,
so they cannot disagree about a window's edges.

Events
------
A task scores *events*: every stored row of a directed graph; for a ``symmetric`` graph (each undirected edge stored
in both directions, as T-GRAB does) the rows with ``src <= dst``, one per undirected edge, so an edge is never
scored twice. Rows are sorted by time, so events are too, and a split is a contiguous range of events.

Windows (the convention we store)
---------------------------------
Window ``i`` of a split is the half-open interval ``[t0 + i*h, t0 + (i+1)*h)`` of horizon ``h``, anchored at the
split's start ``t0``: the split's first snapshot for a split counted in snapshots (so leading empty snapshots are
windows too), else ``floor(min t)`` of its events (DyGLib's anchor). The boundaries ``t0 + i*h`` are computed once,
exactly in int64 for integer times and horizon, else in float64, and an event belongs to the window whose
boundaries enclose it: no event is dropped (DyGLib's closed integer ranges lose a non-integer time between
``t0+(i+1)h-1`` and ``t0+(i+1)h``). The history of window ``i`` is every event before its first one, i.e. every
event with ``t < t0 + i*h``; empty windows are kept in the index with ``n = 0`` so window ids are stable (DyGLib
skips them when iterating, PyG yields them: :func:`window_index` keeps both possible).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol, TypedDict

import numpy as np
from numpy.typing import ArrayLike

from tgbhub.errors import InvalidNameError
from tgbhub.manifest import Manifest

#: the batch size the paper's "matched" horizons are derived from (DyGLib's default)
DEFAULT_BATCH_SIZE = 200
#: durations a matched horizon is rounded to, in seconds (as the paper's: 3 400 s -> 1 h, 800 s -> 15 min, ...)
_NICE_SECONDS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 5400, 7200, 10800, 14400, 21600,
                 28800, 43200, 57600, 86400, 172800, 259200, 345600, 432000, 604800, 1209600, 2592000, 7776000,
                 15552000, 31536000)


class EventRows(Protocol):
    """Rows of events sorted by time: ``t``, ``src`` and ``dst`` of one length (a dataset, or one split of it)."""

    @property
    def t(self) -> np.ndarray: ...

    @property
    def src(self) -> np.ndarray: ...

    @property
    def dst(self) -> np.ndarray: ...


class Described(Protocol):
    """A dataset of any kind, seen through its manifest (:mod:`tgbhub.data`'s dataset objects are ones)."""

    @property
    def manifest(self) -> Manifest: ...


class EventDataset(EventRows, Described, Protocol):
    """What :func:`events` reads of a temporal-graph dataset: its rows and its manifest.

    :class:`tgbhub.data.TemporalGraphDataset` is one; this layer cannot import it (the data layer sits above it).
    """


@dataclass(frozen=True)
class Events:
    """The events a forecasting task scores, over the whole dataset, sorted by time.

    ``rows`` maps each event to its row in the dataset; ``splits`` holds each split's half-open event range.
    """

    t: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    rows: np.ndarray
    splits: Mapping[str, tuple[int, int]]
    symmetric: bool
    num_nodes: int
    #: ``snapshot`` (integer snapshot times, splits start at declared snapshots) or ``continuous``
    time: str
    #: the declared ``[first, stop)`` snapshots of each split (snapshot time only): its windows cover exactly these
    split_snapshots: Mapping[str, tuple[int, int]]
    #: what one unit of ``t`` is (the manifest's ``graph.time_unit``): ``snapshot`` for T-GRAB and its variants, whose
    #: float times still count snapshots; empty when undeclared
    time_unit: str = ""

    def __len__(self) -> int:
        return len(self.t)

    def range(self, split: str) -> tuple[int, int]:
        """``[lo, hi)`` of ``split``'s events.

        Raises:
            InvalidNameError: if there is no such split (the message lists the ones there are).
        """
        if split not in self.splits:
            raise InvalidNameError(f"no split {split!r}; the splits are {', '.join(self.splits)}")
        return self.splits[split]

    def pair_codes(self) -> np.ndarray:
        """``src * num_nodes + dst`` per event (int64): one integer per ordered pair."""
        return pair_code(self.src, self.dst, self.num_nodes)


def pair_code(src: ArrayLike, dst: ArrayLike, num_nodes: int) -> np.ndarray:
    """``src * num_nodes + dst`` as int64, the key every pair lookup of this package uses."""
    return np.asarray(src, dtype=np.int64) * int(num_nodes) + np.asarray(dst, dtype=np.int64)


def events(dataset: EventDataset) -> Events:
    """The scored events of a temporal-graph dataset (see the module docstring).

    Reads ``dataset.t/src/dst``, ``manifest.graph`` (``symmetric``, ``num_nodes``), ``manifest.splits`` and
    ``manifest.split_unit``; the arrays are views or one filtered copy, never written.
    """
    manifest = dataset.manifest
    t, src, dst = np.asarray(dataset.t), np.asarray(dataset.src), np.asarray(dataset.dst)
    symmetric = bool(manifest.graph.get("symmetric", False))
    keep = src <= dst if symmetric else None
    rows = np.flatnonzero(keep) if keep is not None else np.arange(len(t), dtype=np.int64)
    if keep is not None:
        before = np.zeros(len(t) + 1, dtype=np.int64)  # events among the first r rows
        np.cumsum(keep, out=before[1:])
    unit = manifest.split_unit
    splits: dict[str, tuple[int, int]] = {}
    snapshots: dict[str, tuple[int, int]] = {}
    for name, (start, stop) in manifest.splits.items():
        row_lo, row_hi = (start, stop) if unit == "row" else np.searchsorted(t, [start, stop])
        # every row is an event of a directed graph: the row range is the event range
        splits[name] = (int(before[row_lo]), int(before[row_hi])) if keep is not None else (int(row_lo), int(row_hi))
        if unit == "snapshot":
            snapshots[name] = (int(start), int(stop))
    discrete = unit == "snapshot" and np.issubdtype(t.dtype, np.integer)
    return Events(t=t[rows] if keep is not None else t, src=src[rows] if keep is not None else src,
                  dst=dst[rows] if keep is not None else dst, rows=rows, splits=splits, symmetric=symmetric,
                  num_nodes=int(manifest.graph["num_nodes"]), time="snapshot" if discrete else "continuous",
                  split_snapshots=snapshots, time_unit=str(manifest.graph.get("time_unit", "")))


@dataclass(frozen=True)
class WindowIndex:
    """The windows of one split: window ``i`` is ``[t_start[i], t_end[i])`` and holds events ``lo[i]..hi[i]-1``
    (absolute event positions). Empty windows are kept (``lo == hi``)."""

    split: str
    horizon: float
    anchor: float
    t_start: np.ndarray
    t_end: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    def __len__(self) -> int:
        return len(self.lo)

    @property
    def sizes(self) -> np.ndarray:
        """Events per window (int64)."""
        return self.hi - self.lo

    @property
    def nonempty(self) -> np.ndarray:
        """The ids of the windows holding at least one event."""
        return np.flatnonzero(self.hi > self.lo)

    def window_of(self, positions: np.ndarray) -> np.ndarray:
        """The window id of each absolute event position (all inside this split)."""
        return np.searchsorted(self.hi, np.asarray(positions, dtype=np.int64), side="right")

    def table(self) -> dict[str, np.ndarray]:
        """``window, t_start, t_end, lo, hi, n`` as columns (the window index a task stores)."""
        return {"window": np.arange(len(self), dtype=np.int64), "t_start": self.t_start, "t_end": self.t_end,
                "lo": self.lo, "hi": self.hi, "n": self.sizes}


def check_horizon(horizon: float, time: str) -> float | int:
    """``horizon`` as a positive number (an int for snapshot time).

    Raises:
        InvalidNameError: if it is not a positive finite number, or not a whole number of snapshots.
    """
    try:
        value = float(horizon)
    except (TypeError, ValueError):
        value = float("nan")
    if not math.isfinite(value) or value <= 0:
        raise InvalidNameError(f"horizon {horizon!r} is not a positive number; pass the window length in the "
                               "dataset's time unit, e.g. horizon=1 (one snapshot) or horizon=3600 (one hour in "
                               "seconds)")
    if time == "snapshot":
        if value != int(value):
            raise InvalidNameError(f"horizon {horizon!r} is not a whole number of snapshots; windows of a "
                                   "discrete-time graph hold whole snapshots, e.g. horizon=1 or 2")
        return int(value)
    return value


def window_index(ev: Events, split: str, horizon: float) -> WindowIndex:
    """The windows of ``split`` for ``horizon`` (see the module docstring for the convention).

    Raises:
        InvalidNameError: for an unknown split or a horizon that is not a positive number (a whole number of
            snapshots in snapshot time).
    """
    lo, hi = ev.range(split)
    h = check_horizon(horizon, ev.time)
    t = ev.t[lo:hi]
    if ev.time == "snapshot":
        t0, stop = ev.split_snapshots[split]
        count = -(-(stop - t0) // h)  # the last window may reach past the split; it holds only the split's events
        bounds: np.ndarray = t0 + h * np.arange(count + 1, dtype=np.int64)
    else:
        if len(t) == 0:
            return WindowIndex(split, float(h), 0.0, *(np.zeros(0, np.float64),) * 2, *(np.zeros(0, np.int64),) * 2)
        t0 = math.floor(float(t[0]))
        count = int(math.floor((float(t[-1]) - t0) / h)) + 1
        bounds = t0 + h * np.arange(count + 2, dtype=np.float64)
        # float rounding may leave the last event on a boundary: keep going until every event is inside
        while bounds[-2] <= float(t[-1]):
            bounds = np.append(bounds, t0 + h * len(bounds))
        bounds = bounds[: int(np.searchsorted(bounds, float(t[-1]), side="right")) + 1]
    starts = lo + np.searchsorted(t, bounds[:-1], side="left")
    ends = lo + np.searchsorted(t, bounds[1:], side="left")
    return WindowIndex(split=split, horizon=float(h), anchor=float(t0), t_start=bounds[:-1], t_end=bounds[1:],
                       lo=starts.astype(np.int64), hi=ends.astype(np.int64))


def batch_index(ev: Events, split: str, batch_size: int) -> WindowIndex:
    """Consecutive chunks of ``batch_size`` events of ``split`` (the last may be shorter), as a
    :class:`WindowIndex` whose ``t_start``/``t_end`` are each batch's first and last event time (closed).

    Raises:
        InvalidNameError: for an unknown split or a batch size below 1.
    """
    if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise InvalidNameError(f"batch size {batch_size!r} is not a positive integer; pass e.g. batch_size=200")
    lo, hi = ev.range(split)
    starts = np.arange(lo, hi, int(batch_size), dtype=np.int64)
    ends = np.minimum(starts + int(batch_size), hi)
    return WindowIndex(split=split, horizon=float("nan"), anchor=float("nan"), t_start=ev.t[starts],
                       t_end=ev.t[ends - 1] if len(ends) else ev.t[:0], lo=starts, hi=ends)


def nice_duration(seconds: float) -> int:
    """The duration of :data:`_NICE_SECONDS` closest to ``seconds`` on a log scale (the paper's rounding)."""
    return min(_NICE_SECONDS, key=lambda nice: abs(math.log(nice) - math.log(max(seconds, 1e-9))))


class SuggestedHorizon(TypedDict):
    """A task's horizon block as :func:`suggest_horizon` picks it (JSON: it goes into task documents)."""

    value: int
    unit: str
    rule: str


def suggest_horizon(ev: Events, batch_size: int = DEFAULT_BATCH_SIZE) -> SuggestedHorizon:
    """The horizon the paper would pick (docs/forecasting.md, "Horizon"): one snapshot for discrete time (and for
    float times counted in snapshots, e.g. a distorted variant of a snapshot dataset); for continuous time the
    "matched" ``nice(b * T / m)`` (windows holding about ``b`` events on average over the whole dataset).

    Returns ``{"value", "unit", "rule"}``.
    """
    if ev.time == "snapshot" or ev.time_unit == "snapshot":
        # the committed task documents carry this rule verbatim; its section sign cites the link-forecasting
        # paper's section 2.2, written as an escape so the source names no outside document by that sign
        return {"value": 1, "unit": "snapshot",
                "rule": "discrete time: one snapshot (link forecasting, \N{SECTION SIGN}2.2)"}
    span = float(ev.t[-1] - ev.t[0]) if len(ev) else 0.0
    raw = batch_size * span / max(len(ev), 1)
    return {"value": nice_duration(raw), "unit": "time unit",
            "rule": f"matched@{batch_size}: nice({batch_size} x T/m) = nice({raw:.4g})"}
