"""EdgeBank (Poursafaei et al. 2022) in three memories, for snapshot and ranking tasks.

- ``edgebank``: every pair seen in any snapshot before the predicted one (EdgeBank-inf, TGB's default, updated
  with the true history as the evaluation streams on);
- ``edgebank-train``: pairs of the train split only, never updated (the EdgeBank of the T-GRAB paper);
- ``edgebank-tw``: pairs seen within the last ``W`` snapshots, ``W = ceil(0.15 x train snapshots)`` (TGB's
  time-window variant; the window ends just before the predicted snapshot).

A pair in memory scores 1, any other 0. Snapshot (int64) and continuous (float64, a derived dataset's) timestamps
are both supported; "before the query" always means strictly earlier in time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from tgbhub.baselines import Scorer, ranking_task, snapshot_task
from tgbhub.baselines.memory import PairTimes, rows
from tgbhub.baselines.registry import register_baseline

if TYPE_CHECKING:
    from tgbhub.baselines.registry import Column
    from tgbhub.data import TemporalGraphDataset

TRAIN_SPLIT = "train"
WINDOW_FRACTION = 0.15


def _memory(dataset: TemporalGraphDataset, split: str | None) -> PairTimes:
    t, src, dst = rows(dataset, split)
    return PairTimes(t, src, dst, dataset.num_nodes, dataset.num_snapshots)


def window(dataset: TemporalGraphDataset) -> int:
    """``edgebank-tw``'s window in time units: 15% of the train split's span, at least 1.

    A discrete-time dataset's train split spans its snapshots (``snapshot_splits``: ``stop - start``); any other
    (continuous time, a derived dataset) spans its first to its last row's time plus one unit, which is the same
    number for the parent's train rows a derived dataset keeps.
    """
    snapshots = dataset.snapshot_splits
    if snapshots is None:
        times = dataset.split(TRAIN_SPLIT).t
        span = float(times[-1] - times[0]) + 1.0 if len(times) else 0.0
    else:
        start, stop = snapshots[TRAIN_SPLIT]
        span = stop - start
    return max(1, math.ceil(WINDOW_FRACTION * span))


def _scorer(model: str, dataset: TemporalGraphDataset) -> Scorer:
    # last_time is NaN for a pair never seen, and NaN >= x is False: "seen (recently enough)" in one comparison
    if model == "edgebank-train":
        memory = _memory(dataset, TRAIN_SPLIT)
        return lambda s, d, t: (~np.isnan(memory.last_time(s, d, t))).astype(np.float32)
    memory = _memory(dataset, None)
    if model == "edgebank":
        return lambda s, d, t: (~np.isnan(memory.last_time(s, d, t))).astype(np.float32)
    width = window(dataset)
    return lambda s, d, t: (memory.last_time(s, d, t) >= np.asarray(t) - width).astype(np.float32)


def _register(model: str) -> None:
    @register_baseline("snapshot-link-prediction", model)
    def on_snapshots(dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str) -> dict[str, Column]:
        return snapshot_task(_scorer(model, dataset), dataset, task, split)

    @register_baseline("one-vs-many-ranking", model)
    def on_ranking(dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str) -> dict[str, Column]:
        return ranking_task(_scorer(model, dataset), dataset, split, task)


for _model in ("edgebank", "edgebank-train", "edgebank-tw"):
    _register(_model)
