"""Persistence: predict the true previous snapshot ``G_{t-1}`` (for a split's first snapshot, the last one before
the split; the T-GRAB repo instead wrapped around to the split's own last snapshot, which peeks at the future).

On continuous time (a derived dataset's jittered or permuted test events) "the previous snapshot" is the window
``[t - 1.5, t)``: the pair counts as persisting if it was seen less than one and a half time units before the query.
On integer snapshot times that window holds exactly snapshot ``t - 1``, so base datasets score as before. The extra
half unit makes the rule robust to sub-snapshot jitter: with a window of exactly one unit, INTENSE's jitter of a few
hundredths of a unit would push the previous snapshot's event out of the window for about half the queries, and
persistence would "detect" a k = 1 jitter that changes no snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from tgbhub.baselines import Scorer, ranking_task, snapshot_task
from tgbhub.baselines.memory import PairTimes, rows
from tgbhub.baselines.registry import register_baseline

if TYPE_CHECKING:
    from tgbhub.baselines.registry import Column
    from tgbhub.data import TemporalGraphDataset

#: how far back (in the dataset's time unit) a sighting still counts as "the previous snapshot"
WINDOW = 1.5


def _scorer(dataset: TemporalGraphDataset) -> Scorer:
    t, src, dst = rows(dataset)
    memory = PairTimes(t, src, dst, dataset.num_nodes, dataset.num_snapshots)
    # last_time is NaN for a pair never seen, so it never counts as persisting
    return lambda s, d, when: (memory.last_time(s, d, when) >= np.asarray(when) - WINDOW).astype(np.float32)


@register_baseline("snapshot-link-prediction", "persistence")
def on_snapshots(dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str) -> dict[str, Column]:
    return snapshot_task(_scorer(dataset), dataset, task, split)


@register_baseline("one-vs-many-ranking", "persistence")
def on_ranking(dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str) -> dict[str, Column]:
    return ranking_task(_scorer(dataset), dataset, split, task)
