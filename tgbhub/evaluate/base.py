"""What every evaluator shares: its binding to a declared task, and results as plain floats with provenance."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Union

from tgbhub.evaluate.submission import GENERIC_NON_FINITE_FIX
from tgbhub.manifest import DIGEST_KIND, Manifest

if TYPE_CHECKING:
    from tgbhub.data import TemporalGraphDataset, TrajectoryDataset

#: the dataset object an evaluator reads its truth from (:func:`tgbhub.load_dataset`'s, of either kind)
Dataset = Union["TemporalGraphDataset", "TrajectoryDataset"]


def result(manifest: Manifest, task: Mapping[str, Any], split: str, metrics: Mapping[str, float],
           digests: Mapping[str, str | None], **extra: Any) -> dict[str, Any]:
    """A JSON-ready result: dataset, version, content digest(s), task, split and the metrics as Python floats.

    ``digests`` maps file names to logical content digests; ``digest`` is the first one (the graded data itself);
    ``digest_kind`` says what both are (logical content digests of the column values, not file sha256s).
    """
    return {"dataset": manifest.name, "version": manifest.version, "digest": next(iter(digests.values()), None),
            "digests": dict(digests), "digest_kind": DIGEST_KIND, "task": task.get("name"),
            "task_type": task.get("type"), "split": split, "metrics": {k: float(v) for k, v in metrics.items()},
            **extra}


class TaskEvaluator:
    """An evaluator bound to one task a manifest declares and to the dataset holding the truth.

    The constructor does no I/O; subclasses read ``truth`` lazily when they evaluate.

    ``non_finite_fix`` is what a NaN/inf in a submission should be replaced with, in this task's terms; subclasses
    override it, because a sensible fill value (if any) depends on what the number means.
    """

    def __init__(self, manifest: Manifest, task: Mapping[str, Any], truth: Dataset) -> None:
        self.manifest = manifest
        self.task = task
        self.truth = truth

    @property
    def non_finite_fix(self) -> str:
        """The fix a NaN/inf value's :class:`~tgbhub.errors.SubmissionError` names for this task."""
        return GENERIC_NON_FINITE_FIX
