"""Reference evaluation: pure metric functions and evaluators bound to a manifest's declared task.

How grading is chosen
---------------------
Every task a manifest declares (``manifest.tasks``; ``manifest.task`` is the default) has a ``type``. The evaluator
class is looked up in :data:`EVALUATORS` by that type, never by the dataset's name:

========================== ======================================== ==============================
task type                  evaluator                                submission columns
========================== ======================================== ==============================
``snapshot-link-prediction`` :class:`~tgbhub.evaluate.snapshot.SnapshotF1Evaluator` ``t, src, dst, score``
``one-vs-many-ranking``    :class:`~tgbhub.evaluate.ranking.RankingEvaluator`     ``query, pos_score, neg_scores``
``rollout-forecasting``    :class:`~tgbhub.evaluate.rollout.RolloutEvaluator`     ``ic, t, values`` (optional
                                                                                    ``teacher_forced`` file:
                                                                                    ``window, values``)
``window-link-forecasting`` :class:`~tgbhub.evaluate.window.WindowForecastEvaluator` ``window, query, pos_score,
                                                                                    neg_score``
``node-property-ndcg``     :class:`~tgbhub.evaluate.nodeprop.NodePropertyEvaluator` ``t, node, scores``
``time-filtered-ranking``  :class:`~tgbhub.evaluate.filtered.TimeFilteredEvaluator` ``query, scores`` (all nodes;
                                                                                    also ``evaluate_scores``)
========================== ======================================== ==============================

Registering a new task type (e.g. ``rollout-forecasting``)
---------------------------------------------------------
1. Write a module ``tgbhub/evaluate/<topic>.py`` with a class decorated ``@register_evaluator("<task type>")``.
   It is constructed as ``cls(manifest, task, truth)`` and must do no I/O there: ``truth`` is the dataset object
   (anything with the accessors your class needs, e.g. ``split(name)``, ``negatives(name)``, ``arrays(name)``);
   read from it lazily in ``evaluate``.
2. Give it ``schema(split) -> SubmissionSchema`` (the Parquet columns a submission must have; see
   :mod:`tgbhub.evaluate.submission`) and ``evaluate(submission, split=None, detail=False) -> dict``.
   ``submission`` is a Parquet path, a ``pyarrow.Table`` or a mapping of column name -> array; validate it with
   :func:`~tgbhub.evaluate.submission.read_submission` so malformed input raises
   :class:`~tgbhub.errors.SubmissionError` (column, first bad row, fix), never a score; pass it your task's own
   ``non_finite_fix`` (override the property: what a NaN/inf should become depends on what the number means, and
   ``None`` lets the evaluator check finiteness itself to name the failing entity). Return the dict built by
   :func:`~tgbhub.evaluate.base.result` (dataset, version, digest, task, split, metrics as plain floats), plus any
   entry a reader needs to know what was and was not graded (e.g. ``skipped_snapshots``, ``validity_screen``).
3. List the module in :data:`~tgbhub.evaluate.registry.EVALUATORS` (imported on its first read), and add the type to
   the table above.

``get_evaluator(manifest, truth, task=None)`` then works for every dataset declaring that type, and so do
``ds.evaluator`` and ``tgbhub evaluate NAME FILE``. Baselines register the same way in :mod:`tgbhub.baselines`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tgbhub.evaluate.base import Dataset
from tgbhub.evaluate.registry import EVALUATORS, evaluator_class, register_evaluator
from tgbhub.manifest import Manifest

#: the version of the reference evaluators' grading, written into every result record
#: (:mod:`tgbhub.results.records`). Bump it whenever a change could move a metric of an unchanged submission (a tie
#: rule, a skipped snapshot, a filter), so a record made before the change is not re-checked as if nothing had changed.
EVALUATOR_VERSION = "1.0.0"


def get_evaluator(manifest: Manifest, truth: Dataset, task: str | Mapping[str, Any] | None = None) -> Any:
    """The evaluator for ``task`` (a task name, a task mapping, or ``None`` for the default) of ``manifest``.

    Raises:
        ManifestError: if ``task`` names no task of the manifest.
        UnsupportedTaskError: if the task's type has no registered evaluator.
    """
    chosen = task if isinstance(task, Mapping) else manifest.task_named(task)
    return evaluator_class(chosen, manifest)(manifest, chosen, truth)


__all__ = ["EVALUATORS", "EVALUATOR_VERSION", "get_evaluator", "register_evaluator"]
