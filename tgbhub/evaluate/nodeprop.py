"""TGB's node property prediction (``tgbn-*``): NDCG@10 of each node's class scores against its label vector, per
label timestamp, averaged over the split's label timestamps.

Submission: one row per ``(t, node)`` label row the split grades (the task's ``labels.rows``), ``t``, ``node`` and
``scores``, a list of exactly ``labels.width`` finite scores (entry ``c`` scores class ``c``). Row order is free.

The metric is py-tgb's: its ``Evaluator`` calls ``sklearn.metrics.ndcg_score(y_true, y_pred, k=10)`` on the rows of
one label timestamp (one ``get_node_label`` batch), and TGB's examples average those scores over label timestamps
(``total_score / num_label_ts``, since py-tgb 0.8.0). :func:`ndcg_rows` is sklearn's computation in numpy (sklearn
is not a dependency of the library), equal to it up to float rounding (1e-12): the discount ``1 / log2(rank + 1)``
for the first ``k`` ranks and 0 after; tied scores share the average gain of their group over the group's summed
discounts (McSherry and Najork's tie averaging, sklearn's default), so a constant predictor earns the mean gain, not
the best case; the ideal DCG sorts the labels themselves; a row whose label is all zero scores 0 and still counts.

The grader sees only predictions; which edges the model saw before a label timestamp is the label stream's ``mode``
(:mod:`tgbhub.tasks.declared`: ``"tgb-parity"``, edges with ``t <= L`` visible, py-tgb's and the default; ``"strict"``,
only ``t < L``). A submission states it (``evaluate(..., mode=)`` or an in-process ``submission.ndcg_mode``, as the
``period-activity`` baseline's) and every result records it in ``protocol`` (``ndcg_mode`` and what it shows).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from tgbhub.errors import InvalidNameError
from tgbhub.evaluate.base import TaskEvaluator, result
from tgbhub.evaluate.registry import register_evaluator
from tgbhub.evaluate.submission import ListColumn, Submission, SubmissionError, read_submission, unique_ids
from tgbhub.manifest import Manifest
from tgbhub.tasks.declared import NDCG_MODES, choose_split, read_ndcg_mode

if TYPE_CHECKING:
    from tgbhub.data import TemporalGraphDataset

TASK_TYPE = "node-property-ndcg"
#: TGB's cut-off (hard-coded ``k = 10`` in py-tgb's node Evaluator)
DEFAULT_K = 10


def _discount(width: int, k: int) -> np.ndarray:
    """sklearn's ``1 / (log(rank + 1) / log(2))`` for ranks 1..width, zero after rank ``k``."""
    discount = 1 / (np.log(np.arange(width) + 2) / np.log(2))
    discount[k:] = 0
    return discount


def ndcg_rows(y_true: np.ndarray, y_score: np.ndarray, k: int = DEFAULT_K) -> np.ndarray:
    """NDCG@k of every row of ``(n, C)`` labels against ``(n, C)`` finite scores, ties averaged as sklearn's
    ``ndcg_score`` (its mean over the rows is ``ndcg_score(y_true, y_score, k=k)``)."""
    y_true = np.asarray(y_true, dtype=np.float64)
    y_score = np.asarray(y_score, dtype=np.float64)
    n, width = y_true.shape
    discount = _discount(width, k)
    summed = np.cumsum(discount)
    order = np.argsort(-y_score, axis=1, kind="stable")  # ties keep column order, as np.add.at sums them
    score = np.take_along_axis(y_score, order, axis=1)
    gain = np.take_along_axis(y_true, order, axis=1)
    starts = np.ones((n, width), dtype=bool)
    starts[:, 1:] = score[:, 1:] != score[:, :-1]
    ends = np.ones((n, width), dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    group = np.cumsum(starts.ravel()) - 1  # every row starts a group: ids run across rows
    mean_gain = np.bincount(group, weights=gain.ravel()) / np.bincount(group)
    first, last = np.nonzero(starts)[1], np.nonzero(ends)[1]
    group_discount = summed[last] - np.where(first > 0, summed[np.maximum(first - 1, 0)], 0.0)
    row_of_group = np.nonzero(starts)[0]
    dcg = np.bincount(row_of_group, weights=mean_gain * group_discount, minlength=n)
    ideal = (-np.sort(-y_true, axis=1)[:, :k] * discount[:k]).sum(axis=1)
    out = np.zeros(n, dtype=np.float64)
    relevant = ideal != 0
    out[relevant] = dcg[relevant] / ideal[relevant]
    return out


def label_columns(truth: TemporalGraphDataset, file: str) -> Mapping[str, np.ndarray]:
    """The verified columns (``t``, ``node``, ``label``) of the labels file ``file``, memory-mapped
    (``truth.artifact(file)``, as a dataset opened by :func:`tgbhub.load_dataset` offers it).

    Raises:
        IntegrityError: if the dataset was opened without that file (load it with ``tgbhub.load_dataset``).
    """
    return truth.artifact(file)


@register_evaluator(TASK_TYPE)
class NodePropertyEvaluator(TaskEvaluator):
    """Grades a node-property-ndcg task. ``truth`` needs the task's labels file (see :func:`label_columns`).

    The constructor does no I/O; the labels are read when :meth:`evaluate` runs.
    """

    truth: TemporalGraphDataset

    def __init__(self, manifest: Manifest, task: Mapping[str, Any], truth: TemporalGraphDataset) -> None:
        super().__init__(manifest, task, truth)
        self.k = int(task.get("k", DEFAULT_K))

    @property
    def non_finite_fix(self) -> str:
        """A very low score is the honest stand-in: a NaN class then ranks last (sklearn refuses NaN outright)."""
        return ("Replace NaN/inf before writing, e.g. np.nan_to_num(scores, nan=-1e9, posinf=1e9, neginf=-1e9); a "
                "class score must be a finite number to be ranked")

    def _positions(self, columns: Mapping[str, np.ndarray], t: np.ndarray, node: np.ndarray, where: str
                   ) -> np.ndarray:
        """Each submission row's label row (0-based within the split), every label row required once.

        Raises:
            SubmissionError: for a ``(t, node)`` the split does not grade, a repeated or a missing one.
        """
        times = np.unique(t)
        width = int(node.max()) + 1 if len(node) else 1
        keys = np.searchsorted(times, t) * width + node.astype(np.int64)  # ascending: labels sort by (t, node)
        sub_t, sub_node = columns["t"], columns["node"]
        slot = np.minimum(np.searchsorted(times, sub_t), len(times) - 1)
        sub_keys = slot * width + sub_node
        pos = np.minimum(np.searchsorted(keys, sub_keys), len(keys) - 1)
        wrong = (times[slot] != sub_t) | (sub_node < 0) | (sub_node >= width) | (keys[pos] != sub_keys)
        if wrong.any():
            row = int(np.flatnonzero(wrong)[0])
            raise SubmissionError("node", row, f"(t={int(sub_t[row])}, node={int(sub_node[row])}) is not a label row "
                                  "this split grades", f"Submit exactly the (t, node) of {where}")

        def describe(i: int) -> str:
            return f"(t={int(t[i])}, node={int(node[i])})"

        return unique_ids("node", pos, len(keys), describe)

    def _scores(self, lists: ListColumn, positions: np.ndarray, width: int) -> np.ndarray:
        """The ``(rows, width)`` score matrix in label-row order.

        Raises:
            SubmissionError: for a row whose list does not hold exactly ``width`` scores.
        """
        wrong = lists.lengths != width
        if wrong.any():
            row = int(np.flatnonzero(wrong)[0])
            raise SubmissionError("scores", row, f"has {int(lists.lengths[row])} scores; the labels have {width} "
                                  "classes", f"Give exactly {width} scores per row, entry c for class c")
        matrix = np.empty((len(positions), width), dtype=np.float64)
        matrix[positions] = lists.values.reshape(len(positions), width)
        return matrix

    def _mode(self, submission: Submission, mode: str | None) -> str:
        """The label-stream mode the predictions were made under: ``mode``, else the submission's own
        ``ndcg_mode``, else ``"tgb-parity"``.

        Raises:
            InvalidNameError: for an unknown mode.
            SubmissionError: if ``mode`` and ``submission.ndcg_mode`` disagree.
        """
        stated = getattr(submission, "ndcg_mode", None)
        if mode is not None and stated is not None and read_ndcg_mode(mode) != read_ndcg_mode(stated):
            raise SubmissionError("ndcg_mode", None, f"is {stated!r} on the submission but mode={mode!r} was passed",
                                  "Grade the predictions under the mode they were made with: drop mode= or match it")
        return read_ndcg_mode(mode if mode is not None else stated)

    def evaluate(self, submission: Submission, split: str | None = None, detail: bool = False,
                 mode: str | None = None) -> dict[str, Any]:
        """NDCG@k of ``submission`` on ``split`` (default: the task's ``report_split``): per label timestamp, the mean
        over its rows, then the mean over label timestamps (``ndcg``).

        ``mode``: the label-stream mode the predictions were made under (``"tgb-parity"`` or ``"strict"``, see
        :mod:`tgbhub.tasks.declared`); default the submission's ``ndcg_mode``, else ``"tgb-parity"``. It does not change
        the arithmetic; the result records it as ``protocol`` (``ndcg_mode``, ``visible_edges``) so two numbers made
        under different protocols are not compared unawares.

        ``detail=True`` adds ``per_timestamp`` (``t``, ``ndcg``, ``num_nodes``) in time order.

        Raises:
            SubmissionError: for a malformed submission (naming the column, first bad row and fix): a missing,
                repeated or unknown ``(t, node)``, a list of the wrong length, NaN or inf.
            InvalidNameError: for an unknown split, or one without label timestamps to grade; an unknown mode.
            IntegrityError: if the dataset was opened without its labels file.
        """
        mode = self._mode(submission, mode)
        name = choose_split(self.manifest, self.task, split)
        spec = self.task["labels"]
        lo, hi = (int(x) for x in spec["rows"].get(name, (0, 0)))
        if hi <= lo:
            raise InvalidNameError(f"{self.manifest.name}@{self.manifest.version}: split {name!r} grades no label "
                                   "timestamp; grade one of "
                                   f"{', '.join(s for s, (a, b) in spec['rows'].items() if b > a) or 'none'}")
        labels = label_columns(self.truth, spec["file"])
        t, node = np.asarray(labels["t"][lo:hi]), np.asarray(labels["node"][lo:hi])
        columns = read_submission(submission, self.task, non_finite_fix=self.non_finite_fix)
        where = f"rows {lo}..{hi - 1} of {spec['file']} (the split's label rows)"
        scores = self._scores(columns["scores"], self._positions(columns, t, node, where), labels["label"].shape[1])
        times, starts = np.unique(t, return_index=True)
        bounds = [*starts.tolist(), len(t)]
        per_t = np.array([float(np.mean(ndcg_rows(labels["label"][lo + a:lo + b], scores[a:b], self.k)))
                          for a, b in zip(bounds[:-1], bounds[1:], strict=True)])
        extra: dict[str, Any] = {"num_label_timestamps": int(len(times)), "num_rows": int(len(t)), "k": self.k,
                                 "protocol": {"ndcg_mode": mode, "visible_edges": NDCG_MODES[mode]}}
        if detail:
            extra["per_timestamp"] = {"t": times.tolist(), "ndcg": per_t.tolist(),
                                      "num_nodes": np.diff(bounds).tolist()}
        edges = self.manifest.graph["edges_file"]
        digests = {edges: self.manifest.file(edges).digest, spec["file"]: self.manifest.file(spec["file"]).digest}
        return result(self.manifest, self.task, name, {"ndcg": float(np.mean(per_t))}, digests, **extra)
