"""Persistence: predict the true previous snapshot ``G_{t-1}`` (for a split's first snapshot, the last one before
the split; the T-GRAB repo instead wrapped around to the split's own last snapshot, which peeks at the future)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tgbhub.baselines import ranking_task, snapshot_task
from tgbhub.baselines.memory import PairTimes, rows
from tgbhub.baselines.registry import register_baseline


def _scorer(dataset: Any):
    t, src, dst = rows(dataset)
    memory = PairTimes(t, src, dst, dataset.num_nodes, dataset.num_snapshots)
    return lambda s, d, when: (memory.last_before(s, d, when) == np.asarray(when) - 1).astype(np.float32)


@register_baseline("snapshot-link-prediction", "persistence")
def on_snapshots(dataset: Any, task: Mapping[str, Any], split: str) -> dict[str, Any]:
    return snapshot_task(_scorer(dataset), dataset, task, split)


@register_baseline("one-vs-many-ranking", "persistence")
def on_ranking(dataset: Any, task: Mapping[str, Any], split: str) -> dict[str, Any]:
    return ranking_task(_scorer(dataset), dataset, split)
