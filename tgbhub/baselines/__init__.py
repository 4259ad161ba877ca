"""Heuristic baselines that write submissions; they never import the evaluator (they cannot peek at grading).

Dispatch is by the manifest's declared task type, never the dataset's name: :data:`BASELINES` maps
``(task type, model)`` to a function ``fn(dataset, task, split) -> submission``, where the submission is a mapping
of column name -> array in the task's declared submission schema (a 2-D array is a list column).

Built in (:mod:`tgbhub.baselines.edgebank`, :mod:`tgbhub.baselines.persistence`), for both
``snapshot-link-prediction`` and ``one-vs-many-ranking``:

- ``edgebank``: memory of every edge seen before the predicted snapshot or query (TGB's default, EdgeBank-inf);
- ``edgebank-train``: memory = the train split only (the T-GRAB paper's EdgeBank);
- ``edgebank-tw``: pairs seen within a window of ``0.15 x`` the train split's span before the predicted snapshot;
- ``persistence``: the true previous snapshot (for a split's first snapshot, the last one before it).

For ``one-vs-many-ranking`` only (:mod:`tgbhub.baselines.recency`):

- ``recency``: ``1 / (1 + t - last time the pair was seen)``, 0 for a pair never seen (rank-equivalent to
  ``exp(-gap / tau)`` for every ``tau``); the timing-aware control of the counterfactual check.

For ``window-link-forecasting`` (:mod:`tgbhub.baselines.forecast`): ``edgebank`` (unlimited), ``edgebank-tw``,
``edgebank-ri``, ``edgebank-thr`` (DyGLib's other three memories), ``edgebank-train``, ``persistence`` (the previous
window) and ``recency``, each scoring a window from the events before it starts.

For ``node-property-ndcg`` (tgbn; :mod:`tgbhub.baselines.nodeprop`): ``period-activity``, each labelled node's
edge weights per class over its last label period, seen through a label-stream mode (``period-activity:mode=strict``;
default ``tgb-parity``, see :mod:`tgbhub.tasks.declared`).

Every scorer answers snapshot (int64) and continuous (float64, a derived dataset's) timestamps, with splits counted
in snapshots or rows.

Registering a model for a new task type (e.g. ``rollout-forecasting`` with ``zero``/``persistence``/``linear``):
write ``tgbhub/baselines/<topic>.py`` with functions decorated ``@register_baseline("<task type>", "<model>")``,
list it in :data:`~tgbhub.baselines.registry.BASELINES` (imported on its first read), and
``tgbhub baseline MODEL NAME`` runs them; the CLI grades the returned submission with the evaluator registered for the
same task type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from tgbhub.baselines.memory import list_column, snapshot_queries
from tgbhub.baselines.registry import BASELINES, baseline_for, models_for, register_baseline

if TYPE_CHECKING:
    from tgbhub.baselines.registry import Column, Submission
    from tgbhub.data import TemporalGraphDataset, TrajectoryDataset

#: a heuristic's score: ``scorer(src, dst, t) -> float32 scores``, using only rows before ``t``
Scorer = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def snapshot_task(scorer: Scorer, dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str
                  ) -> dict[str, Column]:
    """A snapshot-task submission: ``scorer`` applied to every candidate pair of every graded snapshot."""
    keys = snapshot_queries(dataset, task, split)
    return {**keys, "score": scorer(keys["src"], keys["dst"], keys["t"])}


def ranking_task(scorer: Scorer, dataset: TemporalGraphDataset, split: str, task: Mapping[str, Any] | None = None
                 ) -> dict[str, Column]:
    """A ranking-task submission: ``scorer`` on each query's true destination and on its negatives.

    ``task`` picks whose negatives are scored when a dataset declares several ranking tasks (a derived dataset's
    ``ranking`` has paired negatives, ``ranking-regenerated`` regenerated ones); default: the default task's.
    """
    negatives = dataset.negatives(split) if task is None else dataset.negatives(split, task=task.get("name"))
    src, t = np.asarray(negatives.src), np.asarray(negatives.t)
    matrix = np.asarray(negatives.negatives)
    shape = matrix.shape
    neg = scorer(np.repeat(src, shape[1]), np.maximum(matrix, 0).reshape(-1), np.repeat(t, shape[1]))
    return {"query": np.arange(len(src), dtype=np.int64), "pos_score": scorer(src, negatives.dst, t),
            "neg_scores": list_column(neg.reshape(shape), np.asarray(negatives.count))}


def run_baseline(model: str, dataset: TemporalGraphDataset | TrajectoryDataset, task: Mapping[str, Any], split: str
                 ) -> Submission:
    """The submission ``model`` makes for ``task`` on ``split`` of ``dataset``.

    Raises:
        UnsupportedTaskError: if ``model`` is not registered for the task's type.
    """
    return baseline_for(task, model)(dataset, task, split)


__all__ = ["BASELINES", "models_for", "register_baseline", "run_baseline"]
