"""Recency: a pair scores higher the more recently it was seen, ``1 / (1 + (t - last))`` with ``last`` the latest
time ``< t`` at which the pair occurred (0 for a pair never seen).

TLPCF's recency scorer is ``exp(-(t - last) / tau)``. Every metric it is graded with here (MRR, Hits@K,
AU-ROC, AP) depends only on the order of the scores, and every strictly decreasing function of ``t - last`` gives
the same order, so ``tau`` would change nothing; ``1 / (1 + gap)`` is used because ``exp`` underflows float32 to 0
(the never-seen score) once the gap exceeds about 100 ``tau``. Like EdgeBank-inf it streams: the memory is every row
of the dataset, and a query at ``t`` sees only rows strictly before ``t`` (earlier test rows included).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from tgbhub.baselines import Scorer, ranking_task
from tgbhub.baselines.memory import PairTimes, rows
from tgbhub.baselines.registry import register_baseline

if TYPE_CHECKING:
    from tgbhub.baselines.registry import Column
    from tgbhub.data import TemporalGraphDataset


def recency_scorer(dataset: TemporalGraphDataset) -> Scorer:
    """``scorer(src, dst, t) -> float32`` in ``[0, 1]``: ``1 / (1 + t - last seen)``, 0 if never seen before ``t``."""
    t, src, dst = rows(dataset)
    memory = PairTimes(t, src, dst, dataset.num_nodes, dataset.num_snapshots)

    def score(s: np.ndarray, d: np.ndarray, when: np.ndarray) -> np.ndarray:
        gap = np.asarray(when, dtype=np.float64) - memory.last_time(s, d, when)   # > 0, or NaN when never seen
        return np.nan_to_num(1.0 / (1.0 + gap), nan=0.0).astype(np.float32)

    return score


@register_baseline("one-vs-many-ranking", "recency")
def on_ranking(dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str) -> dict[str, Column]:
    return ranking_task(recency_scorer(dataset), dataset, split, task)
