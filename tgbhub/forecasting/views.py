"""Iterate a temporal graph's split by time window (link forecasting) or by fixed-size event batch.

Both views yield the split's scored events (:func:`tgbhub.forecasting.windows.events`) as numpy arrays, or as torch
tensors on ``device`` (moved once per view, then sliced on the device: no per-window host-to-device copy).

>>> ds = tgbhub.load_dataset("t-grab/ce-64")                                          # doctest: +SKIP
>>> for w in ds.windows("test", negatives=True):                                      # doctest: +SKIP
...     scores = model.forecast(w.src, w.dst, w.t, history_end=w.history_end)         # only events before w.t_start
...     model.update(w.src, w.dst, w.t)                                               # after the window is scored
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, Union

import numpy as np

from tgbhub.errors import MissingExtraError
from tgbhub.forecasting.windows import (
    DEFAULT_BATCH_SIZE,
    EventDataset,
    Events,
    WindowIndex,
    batch_index,
    events,
    window_index,
)

if TYPE_CHECKING:
    import torch

#: a column of a window: a numpy array, or a torch tensor on the view's ``device``
Column = Union[np.ndarray, "torch.Tensor"]
#: where a view's tensors go: a torch device or its name (``"cuda"``, ``"cuda:1"``), or an ordinal
Device = Union[str, int, "torch.device"]

WINDOW_TASK = "window-forecast"


@dataclass(frozen=True)
class Window:
    """One window (or batch) of a split: its events ``t, src, dst`` and, when asked for, their paired negatives.

    ``id`` is the window's id in the split (stable: empty windows count); ``t_start``/``t_end`` its half-open time
    range (a batch: its first and last event time, closed). ``history_end`` is the absolute position, in the
    dataset's event list, of the first event of the window: everything a model may use is ``events[:history_end]``.
    ``query`` holds the events' positions in the split, the ``query`` ids a submission uses.
    """

    id: int
    t_start: float
    t_end: float
    history_end: int
    query: Column
    t: Column
    src: Column
    dst: Column
    neg_src: Column | None = None
    neg_dst: Column | None = None

    def __len__(self) -> int:
        return len(self.query)


class PairedNegatives(Protocol):
    """One negative pair per scored event of a split (:class:`tgbhub.data.WindowNegatives` is one)."""

    @property
    def neg_src(self) -> np.ndarray: ...

    @property
    def neg_dst(self) -> np.ndarray: ...


class WindowedDataset(EventDataset, Protocol):
    """What :func:`windows` reads of a dataset: its events, manifest and a task's per-window negatives
    (:class:`tgbhub.data.TemporalGraphDataset` is one; this layer cannot import it)."""

    def window_negatives(self, split: str, task: str = ...) -> PairedNegatives: ...


def task_horizon(dataset: EventDataset, task: str = WINDOW_TASK) -> float | None:
    """The horizon the dataset's window-forecasting task declares, ``None`` if it declares no such task."""
    for declared in dataset.manifest.tasks:
        if declared.get("name") == task:
            return declared["horizon"]["value"]
    return None


def _arrays(ev: Events, lo: int, hi: int, negatives: PairedNegatives | None, device: Device | None
            ) -> Mapping[str, Column]:
    columns = {"query": np.arange(hi - lo, dtype=np.int64), "t": ev.t[lo:hi], "src": ev.src[lo:hi],
               "dst": ev.dst[lo:hi]}
    if negatives is not None:
        columns["neg_src"], columns["neg_dst"] = negatives.neg_src, negatives.neg_dst
    if device is None:
        return {name: np.asarray(values) for name, values in columns.items()}
    try:
        import torch
    except ModuleNotFoundError as exc:
        raise MissingExtraError("torch", "torch", "device=") from exc
    target = torch.device(device)
    return {name: torch.from_numpy(np.array(values, dtype=np.float64 if name == "t" and values.dtype.kind == "f"
                                            else np.int64)).to(target) for name, values in columns.items()}


def _iterate(ev: Events, index: WindowIndex, negatives: PairedNegatives | None, device: Device | None,
             skip_empty: bool) -> Iterator[Window]:
    lo, hi = ev.range(index.split)
    arrays = _arrays(ev, lo, hi, negatives, device)
    for w in range(len(index)):
        a, b = int(index.lo[w]) - lo, int(index.hi[w]) - lo
        if skip_empty and a == b:
            continue
        part = {name: values[a:b] for name, values in arrays.items()}
        yield Window(id=w, t_start=index.t_start[w].item(), t_end=index.t_end[w].item(), history_end=int(index.lo[w]),
                     **part)


def windows(dataset: WindowedDataset, split: str, horizon: float | None = None, *, skip_empty: bool = True,
            negatives: bool = False, device: Device | None = None, task: str = WINDOW_TASK) -> Iterator[Window]:
    """Yield the windows of ``split`` in time order.

    ``horizon`` defaults to the one the dataset's window-forecasting ``task`` declares (one snapshot for T-GRAB),
    else the paper's suggestion (:func:`~tgbhub.forecasting.windows.suggest_horizon`). ``skip_empty`` leaves out
    windows without events (DyGLib's iteration; ``False`` yields them too, as PyG's loader does; ids stay the
    same). ``negatives=True`` adds each event's pre-generated negative (the task's; only at the task's horizon).
    ``device`` (e.g. ``"cuda"``) yields int64/float64 torch tensors on that device.

    Raises:
        InvalidNameError: for an unknown split, a non-positive horizon, or ``negatives=True`` at a horizon other than
            the task's.
        MissingExtraError: if ``device`` is given without torch installed (a ``ModuleNotFoundError``).
    """
    from tgbhub.errors import InvalidNameError
    from tgbhub.forecasting.windows import suggest_horizon

    ev = events(dataset)
    declared = task_horizon(dataset, task)
    chosen = horizon if horizon is not None else declared if declared is not None else suggest_horizon(ev)["value"]
    pairs = None
    if negatives:
        if declared is None or float(chosen) != float(declared):
            raise InvalidNameError(f"negatives=True needs the horizon of task {task!r} ({declared}); got horizon="
                                   f"{chosen!r}. Drop horizon= or negatives=True")
        pairs = dataset.window_negatives(split, task=task)
    return _iterate(ev, window_index(ev, split, chosen), pairs, device, skip_empty)


def batches(dataset: EventDataset, split: str, batch_size: int = DEFAULT_BATCH_SIZE, *,
            device: Device | None = None) -> Iterator[Window]:
    """Yield ``split`` in consecutive batches of ``batch_size`` events (the last may be shorter): the legacy
    protocol, for comparison with :func:`windows`. A batch's ``history_end`` is its first event's position, so a
    model updated batch by batch sees earlier events of the same timestamp (the leakage the paper measures).

    Raises:
        InvalidNameError: for an unknown split or a batch size below 1.
        MissingExtraError: if ``device`` is given without torch installed (a ``ModuleNotFoundError``).
    """
    ev = events(dataset)
    return _iterate(ev, batch_index(ev, split, batch_size), None, device, skip_empty=True)
