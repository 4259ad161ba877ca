"""TGB's time-aware filtered one-vs-all ranking (the ``time-filtered`` TKG protocol: tkgl-smallpedia, -polecat,
-icews, -yago): the true destination against every node except the query's filter set.

Query ``i`` of a split is row ``i`` of the task's ``filters-<split>.parquet`` (the ``i``-th row of the split,
original and inverse edges alike): ``(t, src, edge_type)`` asks for ``dst``. Its negatives are all ``num_candidates``
nodes minus its filter set (every destination true at ``(t, src, edge_type)``, the true one included), stored as CSR
(``filter_count`` per query, the sets concatenated in ``filter-nodes-<split>.parquet``); no negative list is ever
built. The rank is TGB's average-tie rank, ``1 + (#negatives > pos + #negatives >= pos) / 2``, which equals py-tgb's
``Evaluator`` on ``query_batch``'s negatives.

Two ways to hand in scores, both one score per node in node-id order with the true destination's included:

- a submission (file, table or mapping): one row per query, ``query`` and ``scores`` (a list of ``num_candidates``
  floats), any row order; graded by :meth:`TimeFilteredEvaluator.evaluate`;
- in process, without a file (a split of tkgl-icews holds millions of queries over ~88k nodes):
  :meth:`TimeFilteredEvaluator.evaluate_scores` takes the whole ``(n_queries, num_candidates)`` matrix or an
  iterable of ``(query_ids, matrix)`` batches (numpy or torch), so a model scores and grades one batch at a time.

A NaN or inf score is refused (py-tgb ranks a NaN positive first), naming the query and the fix.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import ArrayLike

from tgbhub.errors import IntegrityError, InvalidNameError, ScoreError, SubmissionError
from tgbhub.evaluate.base import TaskEvaluator, result
from tgbhub.evaluate.metrics import DEFAULT_KS, as_scores, filtered_ranks, metrics_from_ranks
from tgbhub.evaluate.registry import register_evaluator
from tgbhub.evaluate.submission import Submission, read_submission, unique_ids
from tgbhub.manifest import Manifest
from tgbhub.tasks.declared import choose_split

if TYPE_CHECKING:
    from tgbhub.data import TemporalGraphDataset

TASK_TYPE = "time-filtered-ranking"


@dataclass(frozen=True)
class FilterSets:
    """The queries of one split and their filter sets as CSR: query ``i`` is ``(t[i], src[i], edge_type[i])`` with
    true destination ``dst[i]``; its set is ``indices[offsets[i]:offsets[i + 1]]`` (int64 offsets, ``n + 1``)."""

    split: str
    files: tuple[str, str]
    t: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    edge_type: np.ndarray
    offsets: np.ndarray
    indices: np.ndarray

    def __len__(self) -> int:
        return len(self.dst)

    def describe(self, query: int) -> str:
        """``query=i (t=…, src=…, edge_type=…)`` for messages."""
        return f"query={query} (t={self.t[query]}, src={self.src[query]}, edge_type={self.edge_type[query]})"

    def subset(self, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The CSR ``(offsets, indices)`` of the sets of ``queries``, in that order."""
        counts = np.diff(self.offsets)[queries]
        offsets = np.concatenate([[0], np.cumsum(counts)])
        positions = np.repeat(self.offsets[queries] - offsets[:-1], counts) + np.arange(offsets[-1])
        return offsets, np.asarray(self.indices)[positions]


@register_evaluator(TASK_TYPE)
class TimeFilteredEvaluator(TaskEvaluator):
    """Grades a time-filtered ranking task. ``truth`` needs ``artifact(file)`` (the verified columns of the task's
    filter files, as :meth:`tgbhub.data.TemporalGraphDataset.artifact` gives them).

    The constructor does no I/O; the filter sets are read when a method grades.
    """

    truth: TemporalGraphDataset

    def __init__(self, manifest: Manifest, task: Mapping[str, Any], truth: TemporalGraphDataset) -> None:
        super().__init__(manifest, task, truth)
        self.ks = tuple(int(k) for k in task.get("ks", DEFAULT_KS))
        self.num_candidates = int(task["candidates"]["num_candidates"])

    @property
    def non_finite_fix(self) -> str:
        """A very low score is the honest stand-in: a NaN positive then ranks last, a NaN negative beats nothing."""
        return "Replace NaN/inf before grading, e.g. np.nan_to_num(scores, nan=-1e9, posinf=1e9, neginf=-1e9)"

    def filter_sets(self, split: str | None = None) -> FilterSets:
        """The queries of ``split`` (default: the task's ``report_split``) and their filter sets.

        Raises:
            InvalidNameError: for an unknown split or one the task does not grade.
            IntegrityError: if the dataset was opened without the task's files, or they disagree.
        """
        name = choose_split(self.manifest, self.task, split)
        declared = self.task["filter"]["files"]
        if name not in declared:
            raise InvalidNameError(f"task {self.task.get('name')!r} of {self.manifest.name}@{self.manifest.version} "
                                   f"grades no split {name!r}; it grades {', '.join(declared)}")
        files = (str(declared[name]["queries"]), str(declared[name]["indices"]))
        queries, nodes = self.truth.artifact(files[0]), self.truth.artifact(files[1])
        offsets = np.concatenate([[0], np.cumsum(queries["filter_count"], dtype=np.int64)])
        if offsets[-1] != len(nodes["filter_indices"]):
            raise IntegrityError(f"{self.manifest.name}@{self.manifest.version}: {files[1]}",
                                 f"{offsets[-1]} filter entries (the sum of {files[0]}'s filter_count)",
                                 f"{len(nodes['filter_indices'])}", "Clear the dataset's cache entry and load again.")
        return FilterSets(split=name, files=files, t=queries["t"], src=queries["src"], dst=queries["dst"],
                          edge_type=queries["edge_type"], offsets=offsets, indices=nodes["filter_indices"])

    def evaluate(self, submission: Submission, split: str | None = None, detail: bool = False) -> dict[str, Any]:
        """MRR and Hits@K (the task's ``ks``) of ``submission`` (``query``, ``scores``) on ``split`` (default: the
        task's ``report_split``). ``detail=True`` adds ``per_query`` ranks (average-tie, float) in query order.

        Raises:
            SubmissionError: for a malformed submission (naming the column, first bad row and fix): a missing,
                repeated or unknown query, a row without exactly ``num_candidates`` scores, a NaN or inf.
            InvalidNameError, IntegrityError: as :meth:`filter_sets`.
        """
        sets = self.filter_sets(split)
        columns = read_submission(submission, self.task, non_finite_fix=self.non_finite_fix)
        query = unique_ids("query", columns["query"], len(sets), sets.describe)
        lists = columns["scores"]
        wrong = lists.lengths != self.num_candidates
        if wrong.any():
            row = int(np.flatnonzero(wrong)[0])
            raise SubmissionError("scores", row, f"has {int(lists.lengths[row])} scores but the task ranks all "
                                  f"{self.num_candidates} nodes", "Give one score per node, in node-id order, the "
                                  "true destination's included")
        matrix = lists.values.reshape(len(query), self.num_candidates)
        if not np.array_equal(query, np.arange(len(query))):
            matrix = matrix[np.argsort(query)]
        rank = filtered_ranks(matrix, sets.dst, sets.offsets, sets.indices)
        return self._result(sets, rank, detail)

    def evaluate_scores(self, scores: ArrayLike | Iterable[tuple[ArrayLike, ArrayLike]], split: str | None = None,
                        detail: bool = False) -> dict[str, Any]:
        """MRR and Hits@K on ``split`` from scores in memory, without a submission file.

        ``scores`` is either a ``(n_queries, num_candidates)`` array (numpy, torch, anything with ``ndim``): every
        query of the split in order; or an iterable of ``(query_ids, matrix)`` batches, ``matrix`` of shape
        ``(len(query_ids), num_candidates)``, which together name every query once, in any order. Row ``j`` of a
        matrix scores every node, in node-id order, as the destination of query ``query_ids[j]``.

        Raises:
            ScoreError: for a wrong shape or dtype, a NaN or inf (naming the query and the fix), a query id out of
                range or given twice, or queries left without scores.
            InvalidNameError, IntegrityError: as :meth:`filter_sets`.
        """
        sets = self.filter_sets(split)
        rank = np.zeros(len(sets), dtype=np.float64)
        graded = np.zeros(len(sets), dtype=bool)
        for ids, matrix in _batches(scores, len(sets)):
            self._check_batch(sets, ids, matrix, graded)
            offsets, indices = sets.subset(ids)
            try:
                rank[ids] = filtered_ranks(matrix, np.asarray(sets.dst)[ids], offsets, indices)
            except ScoreError:
                self._check_finite(sets, ids, matrix)  # names the query and node, with this task's fix
                raise
            graded[ids] = True
        if not graded.all():
            missing = np.flatnonzero(~graded)
            raise ScoreError(f"{len(missing)} of the {len(sets)} queries of split {sets.split!r} got no scores, the "
                             f"first being {sets.describe(int(missing[0]))}; pass every query once (query i is row i "
                             f"of {sets.files[0]}, the split's i-th row)")
        return self._result(sets, rank, detail)

    def _check_batch(self, sets: FilterSets, ids: np.ndarray, matrix: np.ndarray, graded: np.ndarray) -> None:
        """Raises ScoreError for a batch whose ids or scores cannot be graded (see :meth:`evaluate_scores`)."""
        if matrix.shape != (len(ids), self.num_candidates):
            raise ScoreError(f"a batch of {len(ids)} query ids came with scores of shape {matrix.shape}; expected "
                             f"({len(ids)}, {self.num_candidates}): one row per query, one column per node")
        outside = (ids < 0) | (ids >= len(sets))
        if outside.any():
            raise ScoreError(f"query id {int(ids[np.flatnonzero(outside)[0]])} is not one of split {sets.split!r}'s "
                             f"{len(sets)} queries (0..{len(sets) - 1})")
        again = graded[ids]
        if not again.any() and len(np.unique(ids)) != len(ids):
            again = np.ones(len(ids), dtype=bool)
            again[np.unique(ids, return_index=True)[1]] = False
        if again.any():
            raise ScoreError(f"{sets.describe(int(ids[np.flatnonzero(again)[0]]))} was given scores twice; pass "
                             "every query once")

    def _check_finite(self, sets: FilterSets, ids: np.ndarray, matrix: np.ndarray) -> None:
        """Raises ScoreError naming the first query with a NaN or inf score (checked only once grading failed)."""
        finite = np.isfinite(matrix).all(axis=1)
        if not finite.all():
            row = int(np.flatnonzero(~finite)[0])
            raise ScoreError(f"{sets.describe(int(ids[row]))} of split {sets.split!r} has a NaN or infinite score "
                             f"(node {int(np.flatnonzero(~np.isfinite(matrix[row]))[0])}). {self.non_finite_fix}")

    def _result(self, sets: FilterSets, rank: np.ndarray, detail: bool) -> dict[str, Any]:
        extra: dict[str, Any] = {"num_queries": int(len(rank)), "num_candidates": self.num_candidates}
        if detail:
            extra["per_query"] = {"rank": rank.tolist()}
        edges = self.manifest.graph["edges_file"]
        digests = {file: self.manifest.file(file).digest for file in (edges, *sets.files)}
        return result(self.manifest, self.task, sets.split, metrics_from_ranks(rank, self.ks), digests, **extra)


def _batches(scores: ArrayLike | Iterable[tuple[ArrayLike, ArrayLike]], n: int
             ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(query ids, score matrix)`` pairs from a whole matrix (anything with ``ndim``) or an iterable of pairs.

    Raises:
        ScoreError: for an item that is not a ``(query_ids, matrix)`` pair, or ids that are not integers.
    """
    if hasattr(scores, "ndim"):  # an array or tensor: the whole matrix
        yield np.arange(n, dtype=np.int64), as_scores(cast("ArrayLike", scores), "scores", 2)
        return
    if not isinstance(scores, Iterable):
        raise ScoreError(f"scores is a {type(scores).__name__}; pass a (n_queries, num_candidates) array or an "
                         "iterable of (query_ids, matrix) batches")
    for item in scores:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise ScoreError(f"a batch is a {type(item).__name__}, not a (query_ids, matrix) pair; pass "
                             "[(query_ids, matrix), ...] or the whole (n_queries, num_candidates) matrix")
        ids, matrix = item
        ids = np.asarray(ids.detach().cpu().numpy() if hasattr(ids, "detach") else ids)
        if ids.ndim != 1 or not (np.issubdtype(ids.dtype, np.integer) or ids.size == 0):
            raise ScoreError(f"query_ids has shape {ids.shape} and dtype {ids.dtype}; pass a 1-D array of integer "
                             "query ids (row i of the split is query i)")
        yield ids.astype(np.int64), as_scores(matrix, "scores", 2)
