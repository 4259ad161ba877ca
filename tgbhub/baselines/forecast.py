"""Heuristics for window-based link forecasting: EdgeBank in DyGLib's four memories, persistence and recency.

See docs/forecasting.md, "Baselines". For window ``i`` the history is every event before the window starts (the
train and validation splits and the split's earlier windows): nothing inside the window informs its scores, and
the memory is rebuilt from that history for every window. A pair is an ordered ``(src, dst)`` (for a symmetric
graph the stored ``src <= dst`` form, on both the events and their negatives).

- ``edgebank`` (*unlimited*): 1 if the pair occurred in the history at all;
- ``edgebank-tw`` (*time window, fixed proportion*): 1 if it occurred at a time ``>= q``, ``q`` = the 0.85-quantile
  (numpy's linear rule) of the history's timestamps, up to the latest history time;
- ``edgebank-ri`` (*time window, repeat interval*): 1 if it occurred within the last ``L`` time units before the
  latest history time, ``L`` = (sum over pairs seen at least twice of their mean gap between occurrences) / (number
  of distinct pairs, singletons included);
- ``edgebank-thr`` (*repeat threshold*): 1 if its number of occurrences is ``>=`` the mean number per distinct pair;
- ``edgebank-train``: 1 if it occurred in the train split (the T-GRAB paper's memory, never updated);
- ``persistence``: 1 if it occurred in the ``h`` time units before the window (the previous window) [ours];
- ``recency``: ``1 / (1 + t_start - last time seen)``, 0 if never seen [ours].

Which EdgeBank memory the paper used per dataset is its Table 11d; with historical negatives it is never
*unlimited*, so the paper's numbers compare with ``edgebank-tw``, ``edgebank-ri`` or ``edgebank-thr``.

Every EdgeBank takes the option ``memory`` (``MODEL:memory=dyglib,seed=N``): ``full`` (the default) remembers every
event of the history; ``dyglib`` leaves out what the paper's code (DyGLib's ``get_link_prediction_data``, which the
fork keeps) removes from the train split before any model sees it: every train event touching one of its "new test
nodes", ``int(0.1 x distinct nodes)`` nodes drawn among those with an event after the train split
(:func:`new_test_nodes`). DyGLib draws them with ``random.seed(2020)`` over a Python set; here a numpy ``Generator``
seeded with ``seed`` draws from the sorted node ids, so the rule is the fork's and the nodes are not (a different,
reproducible draw for each seed). Validation and earlier test events stay in the memory, as in DyGLib.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from tgbhub.baselines.registry import register_baseline
from tgbhub.errors import InvalidNameError
from tgbhub.forecasting.windows import Events, WindowIndex, events, pair_code, window_index

if TYPE_CHECKING:
    from tgbhub.data import TemporalGraphDataset

TASK_TYPE = "window-link-forecasting"
#: edgebank-tw's share of the history's timestamps it remembers (DyGLib's ``time_window_proportion``: the test share)
TIME_WINDOW_PROPORTION = 0.15
#: DyGLib's share of all nodes drawn as "new test nodes" (``int(0.1 * num_total_unique_node_ids)``)
NEW_NODE_FRACTION = 0.1
#: the ``memory`` option of every EdgeBank: ``full`` (every history event, the default) or ``dyglib``
MEMORY_OPTIONS = ("full", "dyglib")


def sorted_quantile(values: np.ndarray, q: float) -> float:
    """``np.quantile(values, q)`` (method ``"linear"``) of already sorted ``values``, in O(1), bit for bit.

    Follows numpy's own steps: virtual index ``(n - 1) * q``, the last value from index ``n - 1`` on, else its
    ``_lerp`` (``a + (b-a)*g`` below one half, ``b - (b-a)*(1-g)`` from one half on).
    """
    n = len(values)
    virtual = (n - 1) * q
    if virtual >= n - 1:
        return float(values[-1])
    below = math.floor(virtual)
    gamma = virtual - below
    a, b = float(values[below]), float(values[below + 1])
    diff = b - a
    return b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma


class History:
    """Per distinct pair: occurrences, first and last time among the events ``[0, end)`` that ``keep`` admits (all
    by default); ``end`` only grows."""

    def __init__(self, ev: Events, keep: np.ndarray | None = None) -> None:
        self.t = np.asarray(ev.t, dtype=np.float64)
        self.codes = ev.pair_codes()
        self.pairs, self.pair_of = np.unique(self.codes, return_inverse=True)
        self.pair_of = self.pair_of.ravel()
        size = len(self.pairs)
        self.count = np.zeros(size, dtype=np.int64)
        self.first = np.full(size, np.nan)
        self.last = np.full(size, np.nan)
        self.end = 0
        self.keep = keep
        #: the admitted events' times (sorted, as the events are); the history holds the first ``size`` of them
        self.kept_t = self.t if keep is None else self.t[keep]
        self.size = 0

    def advance(self, end: int) -> None:
        """Take the admitted events of ``[self.end, end)`` into the history."""
        if end <= self.end:
            return
        ids, t = self.pair_of[self.end:end], self.t[self.end:end]
        if self.keep is not None:
            admitted = self.keep[self.end:end]
            ids, t = ids[admitted], t[admitted]
        self.end = end
        if len(ids) == 0:
            return
        self.size += len(ids)
        self.count += np.bincount(ids, minlength=len(self.pairs))
        seen, at = np.unique(ids, return_index=True)
        fresh = np.isnan(self.first[seen])
        self.first[seen[fresh]] = t[at[fresh]]
        seen_last, at_last = np.unique(ids[::-1], return_index=True)
        self.last[seen_last] = t[len(ids) - 1 - at_last]

    def times(self) -> np.ndarray:
        """The timestamps of the events in the history, sorted."""
        return self.kept_t[:self.size]

    def lookup(self, codes: np.ndarray) -> np.ndarray:
        """The pair id of each code, ``-1`` for a pair that never occurs in the dataset."""
        if len(self.pairs) == 0:
            return np.full(len(codes), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.pairs, codes), len(self.pairs) - 1)
        return np.where(self.pairs[at] == codes, at, -1)


#: ``memory(history, window start, horizon) -> bool/float per pair id`` (the score of every pair)
Memory = Callable[[History, float, float], np.ndarray]


def _unlimited(history: History, t_start: float, horizon: float) -> np.ndarray:
    return (history.count > 0).astype(np.float64)


def _fixed_proportion(history: History, t_start: float, horizon: float) -> np.ndarray:
    if history.size == 0:
        return np.zeros(len(history.pairs))
    start = sorted_quantile(history.times(), 1 - TIME_WINDOW_PROPORTION)
    return (history.last >= start).astype(np.float64)  # NaN (never seen) compares False


def _repeat_interval(history: History, t_start: float, horizon: float) -> np.ndarray:
    seen = history.count > 0
    if not seen.any():
        return np.zeros(len(history.pairs))
    repeated = history.count >= 2
    gaps = (history.last[repeated] - history.first[repeated]) / (history.count[repeated] - 1)
    length = math.fsum(gaps.tolist()) / int(seen.sum())
    end = float(history.times()[-1])
    return (history.last >= end - length).astype(np.float64)


def _repeat_threshold(history: History, t_start: float, horizon: float) -> np.ndarray:
    seen = history.count > 0
    if not seen.any():
        return np.zeros(len(history.pairs))
    threshold = math.fsum(history.count[seen].tolist()) / int(seen.sum())
    return (history.count >= threshold).astype(np.float64)


def _persistence(history: History, t_start: float, horizon: float) -> np.ndarray:
    return (history.last >= t_start - horizon).astype(np.float64)


def _recency(history: History, t_start: float, horizon: float) -> np.ndarray:
    return np.where(np.isnan(history.last), 0.0, 1.0 / (1.0 + t_start - history.last))


MEMORIES: dict[str, Memory] = {"edgebank": _unlimited, "edgebank-tw": _fixed_proportion,
                               "edgebank-ri": _repeat_interval, "edgebank-thr": _repeat_threshold,
                               "persistence": _persistence, "recency": _recency}


def score_groups(model: str, ev: Events, index: WindowIndex, pos_codes: np.ndarray, neg_codes: np.ndarray,
                 group: np.ndarray, fixed_history: int | None = None, keep: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Scores of ``model`` for every query: query ``j`` (pair codes ``pos_codes[j]``, ``neg_codes[j]``) belongs to
    window (or batch) ``group[j]`` of ``index`` and is scored from the events before ``index.lo[group[j]]``; with
    ``fixed_history`` the history is ``[0, fixed_history)`` for every group instead (``edgebank-train``); with
    ``keep`` (a boolean per event) only the events it admits enter the history (:func:`dyglib_memory`).

    ``group`` must be non-decreasing (queries in event order).
    """
    memory = MEMORIES["edgebank" if fixed_history is not None else model]
    history = History(ev, keep)
    pos_ids, neg_ids = history.lookup(pos_codes), history.lookup(neg_codes)
    pos = np.zeros(len(pos_codes), dtype=np.float32)
    neg = np.zeros(len(neg_codes), dtype=np.float32)
    bounds = np.searchsorted(group, np.arange(len(index) + 1))
    if fixed_history is not None:
        history.advance(fixed_history)
    for w in np.flatnonzero(bounds[1:] > bounds[:-1]):
        if fixed_history is None:
            history.advance(int(index.lo[w]))
        table = memory(history, float(index.t_start[w]), float(index.horizon))
        a, b = bounds[w], bounds[w + 1]
        for ids, out in ((pos_ids[a:b], pos[a:b]), (neg_ids[a:b], neg[a:b])):
            out[:] = np.where(ids >= 0, table[np.maximum(ids, 0)], 0.0)
    return pos, neg


def new_test_nodes(ev: Events, seed: int) -> np.ndarray:
    """DyGLib's inductive "new test nodes", drawn with numpy (sorted ids).

    As ``get_link_prediction_data``: ``int(0.1 x`` the number of distinct nodes of all events ``)`` nodes, uniformly
    without replacement, among the nodes of the events after the train split (DyGLib's ``ts > val_time``); all of
    those if they are fewer (where DyGLib's ``random.sample`` would fail). ``np.random.default_rng(seed)`` draws
    from the sorted candidates, so a seed gives the same nodes on every machine; the global RNGs are not touched.

    Raises:
        InvalidNameError: if the events have no ``train`` split (the message lists the splits there are).
    """
    after = ev.range("train")[1]
    everyone = np.unique(np.concatenate([ev.src, ev.dst]))
    candidates = np.unique(np.concatenate([ev.src[after:], ev.dst[after:]]))
    size = min(int(NEW_NODE_FRACTION * len(everyone)), len(candidates))
    drawn = np.random.default_rng(seed).choice(candidates, size=size, replace=False)
    return np.sort(drawn).astype(np.int64)


def dyglib_memory(ev: Events, seed: int) -> np.ndarray:
    """Per event, whether DyGLib's EdgeBank may remember it: ``False`` for a train event touching one of
    :func:`new_test_nodes` (``seed``), which DyGLib drops from its train data; ``True`` for every other event.

    Raises:
        InvalidNameError: if the events have no ``train`` split.
    """
    drawn = new_test_nodes(ev, seed)
    touches = np.isin(ev.src, drawn) | np.isin(ev.dst, drawn)
    keep = np.ones(len(ev), dtype=bool)
    after = ev.range("train")[1]
    keep[:after] = ~touches[:after]
    return keep


def window_submission(model: str, dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str, *,
                      memory: str = "full", seed: int | None = None) -> dict[str, np.ndarray]:
    """A complete window-forecasting submission of ``model`` for ``split``: every query, in event order.

    ``memory="dyglib"`` (with ``seed``, the new-test-node draw's) leaves the train events of DyGLib's new test
    nodes out of an EdgeBank's memory (:func:`dyglib_memory`); ``"full"`` keeps every event.

    Raises:
        InvalidNameError: for an unknown ``memory``, ``memory="dyglib"`` without a ``seed``, a ``seed`` with
            ``memory="full"``, or ``memory="dyglib"`` for a model that is not an EdgeBank.
    """
    _read_memory(memory)
    if memory == "dyglib" and model not in EDGEBANKS:
        raise InvalidNameError(f"memory=dyglib is an EdgeBank memory and {model!r} has none; use one of "
                               f"{', '.join(EDGEBANKS)}")
    if memory == "dyglib" and seed is None:
        # no default seed: the drawn nodes alone move AUC by up to 0.024 (lr-4-4), so a run must name its draw
        raise InvalidNameError(f"{model}:memory=dyglib needs seed=N for its new-test-node draw, e.g. "
                               f"{model}:memory=dyglib,seed=0")
    if memory == "full" and seed is not None:
        raise InvalidNameError(f"seed={seed} draws DyGLib's new test nodes, which memory=full does not use; add "
                               "memory=dyglib or drop the seed")
    ev = events(dataset)
    index = window_index(ev, split, task["horizon"]["value"])
    # a task block from the manifest always has its name; None (as before) lets the manifest pick its default task
    negatives = dataset.window_negatives(split, task=cast(str, task.get("name")))
    lo, hi = ev.range(split)
    window = np.asarray(negatives.window, dtype=np.int64)
    pos_codes = ev.pair_codes()[lo:hi]
    neg_codes = pair_code(negatives.neg_src, negatives.neg_dst, ev.num_nodes)
    fixed = ev.range("train")[1] if model == "edgebank-train" else None
    keep = dyglib_memory(ev, seed) if memory == "dyglib" and seed is not None else None
    pos, neg = score_groups(model, ev, index, pos_codes, neg_codes, window, fixed, keep)
    return {"window": window, "query": np.arange(hi - lo, dtype=np.int64), "pos_score": pos, "neg_score": neg}


def _read_memory(value: str) -> str:
    if value not in MEMORY_OPTIONS:
        raise InvalidNameError(f"memory={value!r} is not one of {', '.join(MEMORY_OPTIONS)}; 'full' remembers "
                               "every history event, 'dyglib' drops the train events of DyGLib's new test nodes")
    return value


def _read_seed(value: str) -> int:
    try:
        seed = int(value)
    except ValueError:
        seed = -1
    if seed < 0:
        raise InvalidNameError(f"seed={value!r} is not a non-negative integer; write e.g. seed=0")
    return seed


#: the window EdgeBanks, which take ``memory`` and ``seed`` (``MODEL:memory=dyglib,seed=N``)
EDGEBANKS = ("edgebank", "edgebank-tw", "edgebank-ri", "edgebank-thr", "edgebank-train")
_EDGEBANK_OPTIONS = {"memory": _read_memory, "seed": _read_seed}


def _register(model: str) -> None:
    @register_baseline(TASK_TYPE, model, options=_EDGEBANK_OPTIONS if model in EDGEBANKS else None)
    def on_windows(dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str, **options: Any
                   ) -> dict[str, np.ndarray]:
        return window_submission(model, dataset, task, split, **options)


for _model in (*MEMORIES, "edgebank-train"):
    _register(_model)
