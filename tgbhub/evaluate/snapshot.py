"""T-GRAB's snapshot task: per-snapshot binary F1 over the declared candidate pairs, averaged over a split.

Submission: one row per (evaluated snapshot ``t``, candidate pair ``(src, dst)``) with a ``score``; a pair is
predicted present iff ``score >= threshold`` (0.5). Row order is free. The evaluated snapshots are the split's,
minus the ``skip_leading`` ones the task declares (CE's inductive test skips its first ``lag`` snapshots). A result
on such a split says so twice: ``skipped_snapshots`` (count, first, last, reason) and the ``description`` line
(:meth:`SnapshotF1Evaluator.describe`), so a reader of the JSON alone knows what was and was not graded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from tgbhub.evaluate.base import TaskEvaluator, result
from tgbhub.evaluate.metrics import binary_f1
from tgbhub.evaluate.registry import register_evaluator
from tgbhub.evaluate.submission import Submission, SubmissionError, read_submission, unique_ids
from tgbhub.manifest import Manifest
from tgbhub.tasks.declared import candidate_pairs, choose_split, graded_snapshots, pair_index, skipped_snapshots

if TYPE_CHECKING:
    from tgbhub.data import TemporalGraphDataset

TASK_TYPE = "snapshot-link-prediction"


@register_evaluator(TASK_TYPE)
class SnapshotF1Evaluator(TaskEvaluator):
    """Grades a snapshot-link-prediction task. ``truth`` needs ``split(name)`` -> rows with ``t, src, dst``.

    The constructor does no I/O; ground truth is read when :meth:`evaluate` runs.
    """

    truth: TemporalGraphDataset

    def __init__(self, manifest: Manifest, task: Mapping[str, Any], truth: TemporalGraphDataset) -> None:
        super().__init__(manifest, task, truth)
        self.num_nodes = int(manifest.graph["num_nodes"])

    def snapshot_range(self, split: str | None = None) -> tuple[int, int]:
        """``[start, stop)`` of the snapshots of ``split`` that are graded (after ``skip_leading``).

        Raises:
            InvalidNameError: if the dataset has no such split.
        """
        return graded_snapshots(self.manifest, self.task, choose_split(self.manifest, self.task, split))

    @property
    def non_finite_fix(self) -> str:
        """Any score below the threshold means "no edge", so that is what a NaN should become."""
        threshold = float(self.task["threshold"])
        return (f"Replace NaN/inf before writing, e.g. np.nan_to_num(score, nan=0.0, posinf=1.0, neginf=0.0): "
                f"a score below the threshold {threshold:g} predicts no edge")

    def describe(self, split: str | None = None) -> str:
        """One sentence saying what :meth:`evaluate` grades on ``split``, skipped snapshots included.

        Raises:
            InvalidNameError: if the dataset has no such split.
        """
        name = choose_split(self.manifest, self.task, split)
        start, stop = self.snapshot_range(name)
        candidates = self.task["candidates"]
        text = (f"mean per-snapshot F1 (score >= {float(self.task['threshold']):g} predicts an edge) over "
                f"{len(self.candidates()[0])} candidate pairs ({candidates.get('kind')}) in snapshots "
                f"{start}..{stop - 1} of {name} ({stop - start} snapshots)")
        skipped = skipped_snapshots(self.manifest, self.task, name)
        if skipped is not None:
            text += (f"; the first {skipped['count']} snapshots of {name} ({skipped['first']}..{skipped['last']}) "
                     f"are not graded: {skipped['reason']}")
        return text

    def candidates(self) -> tuple[np.ndarray, np.ndarray]:
        """``(src, dst)`` of the pairs scored in every snapshot."""
        return candidate_pairs(self.task["candidates"], self.num_nodes)

    def submission_keys(self, split: str | None = None) -> dict[str, np.ndarray]:
        """The ``t, src, dst`` columns of a complete submission for ``split`` (fill in ``score``)."""
        start, stop = self.snapshot_range(split)
        src, dst = self.candidates()
        steps = np.arange(start, stop, dtype=np.int64)
        return {"t": np.repeat(steps, len(src)), "src": np.tile(src, len(steps)).astype(np.int32),
                "dst": np.tile(dst, len(steps)).astype(np.int32)}

    def _slots(self, columns: Mapping[str, np.ndarray], start: int, stop: int) -> np.ndarray:
        src, dst = self.candidates()
        t, s, d = columns["t"], columns["src"], columns["dst"]
        for name, values, lo, hi in (("t", t, start, stop), ("src", s, 0, self.num_nodes),
                                     ("dst", d, 0, self.num_nodes)):
            bad = (values < lo) | (values >= hi)
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise SubmissionError(name, row, f"is {int(values[row])}, outside [{lo}, {hi})",
                                      f"Submit only snapshots {start}..{stop - 1} and node ids 0..{self.num_nodes - 1}")
        position = pair_index(src, dst, self.num_nodes)[s, d]
        if (position < 0).any():
            row = int(np.flatnonzero(position < 0)[0])
            raise SubmissionError("src", row, f"pair ({int(s[row])}, {int(d[row])}) is not a candidate of this task "
                                  f"({self.task['candidates'].get('kind')})",
                                  "Submit exactly the candidate pairs (evaluator.submission_keys(split) lists them)")
        slots = (t - start) * len(src) + position
        describe = lambda slot: (f"t={start + slot // len(src)}, src={int(src[slot % len(src)])}, "  # noqa: E731
                                 f"dst={int(dst[slot % len(src)])}")
        return unique_ids("t", slots, (stop - start) * len(src), describe)

    def _truth_matrix(self, split: str, start: int, stop: int) -> np.ndarray:
        src, dst = self.candidates()
        index = pair_index(src, dst, self.num_nodes)
        rows = self.truth.split(split)
        t, s, d = np.asarray(rows.t), np.asarray(rows.src), np.asarray(rows.dst)
        keep = (t >= start) & (t < stop)
        position = index[s[keep], d[keep]]
        hit = position >= 0  # rows outside the candidate set (e.g. CE's cause edges) are not graded
        matrix = np.zeros((stop - start, len(src)), dtype=bool)
        matrix[t[keep][hit] - start, position[hit]] = True
        return matrix

    def evaluate(self, submission: Submission, split: str | None = None, detail: bool = False) -> dict[str, Any]:
        """Mean per-snapshot F1 of ``submission`` on ``split`` (default: the task's ``report_split``).

        Adds ``f1_change_points`` (mean over snapshots with ``t mod every == 0``) when the task declares
        ``change_points``; ``detail=True`` adds ``per_snapshot`` (t, f1, tp, fp, fn for every graded snapshot).
        The result carries ``num_snapshots`` (graded), ``description`` (:meth:`describe`) and, when the task's
        ``skip_leading`` leaves snapshots of the split out, ``skipped_snapshots`` (count, first, last, reason).

        Raises:
            SubmissionError: for a malformed submission (naming the column, first bad row and fix).
            InvalidNameError: for an unknown split.
        """
        name = choose_split(self.manifest, self.task, split)
        start, stop = self.snapshot_range(name)
        columns = read_submission(submission, self.task, non_finite_fix=self.non_finite_fix)
        slots = self._slots(columns, start, stop)
        scores = np.empty((stop - start) * len(self.candidates()[0]), dtype=np.float64)
        scores[slots] = columns["score"]
        predicted = (scores >= float(self.task["threshold"])).reshape(stop - start, -1)
        counts = binary_f1(predicted, self._truth_matrix(name, start, stop))
        metrics = {"f1": float(counts["f1"].mean()) if stop > start else 0.0}
        steps = np.arange(start, stop)
        every = self.task.get("change_points", {}).get("every")
        if every:
            chosen = steps % int(every) == 0
            metrics["f1_change_points"] = float(counts["f1"][chosen].mean()) if chosen.any() else 0.0
        extra: dict[str, Any] = {"num_snapshots": int(stop - start), "description": self.describe(name)}
        skipped = skipped_snapshots(self.manifest, self.task, name)
        if skipped is not None:
            extra["skipped_snapshots"] = skipped
        if detail:
            extra["per_snapshot"] = {"t": steps.tolist(), **{k: v.tolist() for k, v in counts.items()}}
        edges = self.manifest.graph["edges_file"]
        return result(self.manifest, self.task, name, metrics, {edges: self.manifest.file(edges).digest}, **extra)
