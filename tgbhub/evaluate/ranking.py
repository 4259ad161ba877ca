"""TGB's one-vs-many link ranking: the true destination against the pre-generated negatives of its query.

Submission: one row per query of the split's negatives file, ``query`` (its row index there), ``pos_score`` and
``neg_scores``, a list with exactly ``count[query]`` scores in the order of that query's negatives (padding ``-1``
slots get no score). Row order is free.

An in-memory submission whose ``neg_scores`` is a ``(queries, q)`` torch tensor on a GPU is ranked there: the score
matrix never comes to the host, only the query ids and the ranks cross. Anything else is read on the host. Both
paths apply the same checks and give the same ranks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from tgbhub.errors import ScoreError
from tgbhub.evaluate.base import TaskEvaluator, result
from tgbhub.evaluate.metrics import DEFAULT_KS, device_ranks, metrics_from_ranks, on_accelerator, ranks
from tgbhub.evaluate.registry import register_evaluator
from tgbhub.evaluate.submission import ListColumn, Submission, SubmissionError, read_submission, unique_ids
from tgbhub.manifest import Manifest
from tgbhub.tasks.declared import choose_split

if TYPE_CHECKING:
    import torch

    from tgbhub.data import TemporalGraphDataset

TASK_TYPE = "one-vs-many-ranking"


@register_evaluator(TASK_TYPE)
class RankingEvaluator(TaskEvaluator):
    """Grades a one-vs-many ranking task. ``truth`` needs ``negatives(split, task=name)`` with ``negatives`` and
    ``count`` (the task's own negatives: a derived dataset has one set per mode).

    The constructor does no I/O; the negatives are read when :meth:`evaluate` runs.
    """

    truth: TemporalGraphDataset

    def __init__(self, manifest: Manifest, task: Mapping[str, Any], truth: TemporalGraphDataset) -> None:
        super().__init__(manifest, task, truth)
        self.ks = tuple(int(k) for k in task.get("ks", DEFAULT_KS))

    @property
    def non_finite_fix(self) -> str:
        """A very low score is the honest stand-in: a NaN positive then ranks last, a NaN negative beats nothing."""
        return "Replace NaN/inf before writing, e.g. np.nan_to_num(scores, nan=-1e9, posinf=1e9, neginf=-1e9)"

    def _matrix(self, columns: Mapping[str, Any], count: np.ndarray, q: int) -> np.ndarray:
        query = unique_ids("query", columns["query"], len(count), lambda i: f"query={i}")
        lists: ListColumn = columns["neg_scores"]
        lengths = lists.lengths
        wrong = lengths != count[query]
        if wrong.any():
            row = int(np.flatnonzero(wrong)[0])
            raise SubmissionError("neg_scores", row, f"has {int(lengths[row])} scores but query "
                                  f"{int(query[row])} has {int(count[query[row]])} negatives",
                                  "Give one score per real negative of the query, in its order (skip -1 padding)")
        if len(lengths) and (lengths == q).all():  # the common rectangular case: no scatter needed
            matrix = lists.values.reshape(len(query), q)
            return matrix if np.array_equal(query, np.arange(len(query))) else matrix[np.argsort(query)]
        matrix = np.zeros((len(count), q), dtype=lists.values.dtype)
        row_of = np.repeat(query, lengths)
        within = np.arange(len(lists.values)) - np.repeat(lists.offsets[:-1], lengths)
        matrix[row_of, within] = lists.values
        return matrix

    def _on_device(self, submission: Submission, count: np.ndarray, q: int
                   ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None] | None:
        """``(pos, neg, row_of_query)`` with the scores in query order on their device, for a mapping submission
        whose ``neg_scores`` is a ``(queries, q)`` floating tensor off the CPU and every query has ``q`` real
        negatives (``row_of_query`` maps a query to its submission row; ``None`` when rows are in query order);
        ``None`` otherwise, and the host path then reads the submission and gives its own errors.

        Raises:
            SubmissionError: for query ids that miss or repeat a query.
        """
        if not isinstance(submission, Mapping) or set(submission) != {"query", "pos_score", "neg_scores"}:
            return None
        neg, pos, query = submission["neg_scores"], submission["pos_score"], submission["query"]
        if not on_accelerator(neg) or not neg.is_floating_point() or tuple(neg.shape) != (len(count), q) or not (
                count == q).all():
            return None
        import torch  # present: neg is a torch tensor

        pos = torch.as_tensor(pos, device=neg.device)
        query = query.detach().cpu().numpy() if hasattr(query, "detach") else np.asarray(query)
        if not pos.is_floating_point() or tuple(pos.shape) != (len(count),) or query.dtype.kind not in "iu" or (
                query.shape != (len(count),)):
            return None
        query = unique_ids("query", query.astype(np.int64, copy=False), len(count), lambda i: f"query={i}")
        if not np.array_equal(query, np.arange(len(query))):
            row_of_query = torch.as_tensor(np.argsort(query), device=neg.device)
            pos, neg = pos[row_of_query], neg[row_of_query]
        else:
            row_of_query = None
        return pos, neg, row_of_query

    def _device_ranks(self, pos: torch.Tensor, neg: torch.Tensor, row_of_query: torch.Tensor | None) -> np.ndarray:
        """:func:`device_ranks`, whose pass over the scores also checks them; a NaN/inf is located only on failure.

        Raises:
            SubmissionError: for a NaN or infinite score, naming its column and submission row.
        """
        try:
            return device_ranks(pos, neg)
        except ScoreError:
            import torch  # present: the scores are torch tensors

            for column, bad in (("pos_score", ~torch.isfinite(pos)), ("neg_scores", ~torch.isfinite(neg).all(dim=1))):
                if bool(bad.any()):
                    first = int(torch.nonzero(bad)[0, 0])
                    row = first if row_of_query is None else int(row_of_query[first])
                    raise SubmissionError(column, row, "holds a NaN or infinite value; every value must be finite",
                                          self.non_finite_fix) from None
            raise

    def evaluate(self, submission: Submission, split: str | None = None, detail: bool = False) -> dict[str, Any]:
        """MRR and Hits@K (the task's ``ks``) of ``submission`` on ``split`` (default: the task's ``report_split``).

        ``detail=True`` adds ``per_query`` ranks (average-tie, float) in query order.

        Raises:
            SubmissionError: for a malformed submission (naming the column, first bad row and fix).
            InvalidNameError: for an unknown split or a split without negatives.
        """
        name = choose_split(self.manifest, self.task, split)
        negatives = self.truth.negatives(name, task=self.task.get("name"))
        count = np.asarray(negatives.count, dtype=np.int64)
        q = int(negatives.negatives.shape[1])
        on_device = self._on_device(submission, count, q)
        if on_device is not None:
            rank = self._device_ranks(*on_device)
        else:
            columns = read_submission(submission, self.task, non_finite_fix=self.non_finite_fix)
            matrix = self._matrix(columns, count, q)
            pos = np.empty(len(count), dtype=np.float64)
            pos[columns["query"]] = columns["pos_score"]
            rank = ranks(pos, matrix, count)
        extra: dict[str, Any] = {"num_queries": int(len(count))}
        if detail:
            extra["per_query"] = {"rank": rank.tolist()}
        edges = self.manifest.graph["edges_file"]
        digests = {edges: self.manifest.file(edges).digest,
                   negatives.file: self.manifest.file(negatives.file).digest}
        return result(self.manifest, self.task, name, metrics_from_ranks(rank, self.ks), digests, **extra)
