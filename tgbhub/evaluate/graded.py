"""One result type for every graded run: a submission file (``tgbhub evaluate``), a heuristic baseline (``tgbhub
baseline``), a trained model (``tgbhub train``) or one condition of the counterfactual check (``tgbhub
counterfactual``), each graded by the reference evaluator."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

#: what produced the graded scores
KINDS = ("evaluate", "baseline", "train", "counterfactual")


@dataclass(frozen=True)
class Graded(Mapping[str, Any]):
    """A graded run.

    ``kind``: one of :data:`KINDS`. ``result``: what the task's evaluator returned (``dataset``, ``version``,
    ``digest`` and ``digests`` of the graded data, ``task``, ``task_type``, ``split``, ``metrics`` and whatever the
    task reports beside them, e.g. ``skipped_snapshots``, ``validity_screen``). ``model``: the baseline or trained
    model (``None`` for a submission file). ``run``: what the run itself reports (a trained model's ``seed``,
    ``device``, ``epochs_run``, ``train_seconds``, ``best_epoch``, ``hyperparameters``, ``history``, ``files``; a
    file's ``submission``; a counterfactual condition's ``condition`` and ``run``).

    A read-only mapping of the JSON it prints: ``graded["metrics"]``, ``graded.get("seed")``, ``dict(graded)``.
    """

    kind: str
    result: Mapping[str, Any]
    model: str | None = None
    run: Mapping[str, Any] = field(default_factory=dict)

    @property
    def metrics(self) -> Mapping[str, float]:
        return self.result["metrics"]

    @property
    def dataset(self) -> str:
        return str(self.result["dataset"])

    @property
    def version(self) -> str:
        return str(self.result["version"])

    def to_json(self) -> dict[str, Any]:
        """The evaluator's result, the model (if any), then the run's own facts: one flat JSON object."""
        return {**self.result, **({"model": self.model} if self.model is not None else {}), **self.run}

    def __getitem__(self, key: str) -> Any:
        return self.to_json()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_json())

    def __len__(self) -> int:
        return len(self.to_json())
