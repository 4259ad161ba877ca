"""What every dataset object shares about grading: the evaluator a composition root injected, looked up by task."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Union, cast

from tgbhub.errors import UnsupportedTaskError

if TYPE_CHECKING:
    from tgbhub.data.temporal_graph import TemporalGraphDataset
    from tgbhub.data.trajectories import TrajectoryDataset

#: ``(dataset, task name or None) -> evaluator``; injected by ``tgbhub.api`` so that ``data`` never imports ``evaluate``
#: (which is also why the evaluator is typed ``Any`` here: its class lives in a layer above this one)
EvaluatorFactory = Callable[[Union["TemporalGraphDataset", "TrajectoryDataset"], str | None], Any]


class Gradable:
    """Mixin: ``ds.evaluator`` and ``ds.get_evaluator(task)`` from an injected factory (``_evaluator_factory``)."""

    _evaluator_factory: EvaluatorFactory | None
    name: str
    version: str

    def get_evaluator(self, task: str | None = None) -> Any:
        """The reference evaluator of ``task`` (a task name from ``manifest.tasks``; default: ``manifest.task``).

        Raises:
            ManifestError: if the dataset declares no task called ``task``.
            UnsupportedTaskError: if this tgbhub cannot grade the task's type, or the dataset was opened without
                an evaluator (open it with ``tgbhub.load_dataset``).
        """
        if self._evaluator_factory is None:
            raise UnsupportedTaskError(f"{self.name}@{self.version} was opened without an evaluator; load it with "
                                       "tgbhub.load_dataset, or use tgbhub.evaluate.get_evaluator(manifest, ds)")
        # Gradable is mixed into exactly these two dataset classes
        return self._evaluator_factory(cast("TemporalGraphDataset | TrajectoryDataset", self), task)

    @property
    def evaluator(self) -> Any:
        """The reference evaluator of the default task (``ds.evaluator.evaluate(submission, split=...)``)."""
        return self.get_evaluator(None)
