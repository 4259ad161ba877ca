"""Resumable fits: a fit's whole state at an epoch boundary, written after every epoch and read back to go on.

A published protocol can outlast the machine it runs on: Graph WaveNet's 50 epochs do not fit in one 10-minute
command on a lent GPU, and a slot can end mid-run. With a state file (``TrainConfig.state_file``) a trainer writes,
after every epoch, everything the next epoch depends on: the weights, the optimiser's moments, the learning-rate
schedule, the shuffling generator and torch's global generators (dropout), the early-stopping book-keeping with the
best weights, and the history so far. A later fit with the same file starts at the next epoch, and on CPU the
resumed run is bit-identical to one that never stopped (tests/test_resume.py). ``TrainConfig.time_limit`` makes a
fit stop by itself, at an epoch boundary, before an epoch it could not finish in time.

The file records which run wrote it (model, hyper-parameters, seed, dataset digest); a fit of another run refuses
it instead of silently continuing the wrong model.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

from tgbhub.errors import IntegrityError, InvalidNameError
from tgbhub.trainers.torchutil import require_torch, save_atomic

if TYPE_CHECKING:
    import torch

    from tgbhub.data import TemporalGraphDataset, TrajectoryDataset

FORMAT = "tgbhub-fit-state/1"


class DatasetIdentity(TypedDict):
    """The data a run trained on, as a state file records it."""

    name: str | None
    version: str | None
    digest: str | None


class RunIdentity(TypedDict):
    """What :func:`run_identity` returns: the fields a state file must match to be continued."""

    model: str
    hyperparameters: dict[str, Any]
    seed: int
    dataset: DatasetIdentity


class StopperState(TypedDict):
    """Early stopping's book-keeping (:class:`~tgbhub.trainers.torchutil.EarlyStopping`), best weights included."""

    best: float
    best_epoch: int
    stale: int
    best_state: dict[str, torch.Tensor] | None


class FitState(TypedDict):
    """A fit's whole state at an epoch boundary: what :func:`save_fit_state` writes and :func:`load_fit_state` reads
    back (the file also holds ``format``)."""

    identity: RunIdentity
    next_epoch: int
    ended: bool
    weights: dict[str, torch.Tensor]
    #: torch's own state dicts (``Optimizer.state_dict()``, :func:`schedule_state`)
    optimiser: dict[str, Any]
    schedule: dict[str, Any]
    generator: torch.Tensor
    rng: dict[str, torch.Tensor]
    stopper: StopperState
    history: list[dict[str, float]]
    train_seconds: float


def run_identity(model: str, hyperparameters: Mapping[str, Any], seed: int,
                 dataset: TemporalGraphDataset | TrajectoryDataset) -> RunIdentity:
    """What must be equal for a state file to be continued: the model, its resolved settings, seed and data.

    The time limit, progress bars and batch caps of a single call are not part of it (``limit_batches`` is: it
    changes every epoch).
    """
    return {"model": model, "hyperparameters": dict(hyperparameters), "seed": int(seed),
            "dataset": {"name": getattr(dataset, "name", None), "version": getattr(dataset, "version", None),
                        "digest": getattr(dataset, "digest", None)}}


def save_fit_state(path: str | os.PathLike[str], state: FitState) -> Path:
    """Write ``state`` (tensors and plain values) to ``path``: a temp file renamed into place, so a run killed while
    writing leaves the previous epoch's state, never half a file.

    Raises:
        MissingExtraError: without torch.
        OSError: if the folder cannot be written.
    """
    return save_atomic({"format": FORMAT, **state}, path)


def load_fit_state(path: str | os.PathLike[str], identity: RunIdentity) -> FitState | None:
    """The state saved at ``path`` (``None`` when there is none yet), checked to belong to the run ``identity``.

    Raises:
        MissingExtraError: without torch.
        InvalidNameError: if the file is not a readable fit state.
        IntegrityError: if it was written by another run (the message names the first field that differs).
    """
    torch = require_torch("resuming a fit")
    source = Path(path)
    if not source.exists():
        return None
    try:
        state = torch.load(source, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a foreign or damaged file
        raise InvalidNameError(f"{source} is not a readable fit state ({type(exc).__name__}: {exc}); delete it to "
                               "start the run afresh") from exc
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise InvalidNameError(f"{source} is not a tgbhub fit state (format {FORMAT!r} expected); delete it to start "
                               "the run afresh")
    differs = _first_difference(state.get("identity"), identity)
    if differs is not None:
        key, saved, wanted = differs
        raise IntegrityError(f"fit state {source}", f"{key} = {saved!r}", f"{key} = {wanted!r}",
                             "This file belongs to another run: give this run its own --out folder, or delete the "
                             "file to start afresh")
    return cast(FitState, state)  # its format tag and identity are checked above


def _first_difference(saved: Any, wanted: Any, key: str = "run") -> tuple[str, Any, Any] | None:
    if isinstance(saved, Mapping) and isinstance(wanted, Mapping):
        for name in sorted(set(saved) | set(wanted)):
            found = _first_difference(saved.get(name), wanted.get(name), f"{key}.{name}")
            if found is not None:
                return found
        return None
    if isinstance(saved, (list, tuple)) and isinstance(wanted, (list, tuple)):
        saved, wanted = list(saved), list(wanted)
    return None if saved == wanted else (key, saved, wanted)


def schedule_state(schedule: torch.optim.lr_scheduler.LRScheduler) -> dict[str, Any]:
    """A learning-rate schedule's state in plain types (MultiStepLR keeps its milestones in a ``Counter``, which a
    ``weights_only`` load refuses)."""
    state = dict(schedule.state_dict())
    if isinstance(state.get("milestones"), Counter):
        state["milestones"] = dict(state["milestones"])
    return state


def load_schedule_state(schedule: torch.optim.lr_scheduler.LRScheduler, state: Mapping[str, Any]) -> None:
    restored = dict(state)
    if isinstance(restored.get("milestones"), dict):
        restored["milestones"] = Counter(restored["milestones"])
    schedule.load_state_dict(restored)


def global_rng_state(device: torch.device | None) -> dict[str, torch.Tensor]:
    """torch's global generators (CPU, and the CUDA device's when training there): dropout draws from them."""
    torch = require_torch("saving a fit state")
    state = {"cpu": torch.get_rng_state()}
    if getattr(device, "type", "cpu") == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


def set_global_rng_state(state: Mapping[str, torch.Tensor], device: torch.device | None) -> None:
    torch = require_torch("resuming a fit")
    torch.set_rng_state(state["cpu"])
    if "cuda" in state and getattr(device, "type", "cpu") == "cuda":
        torch.cuda.set_rng_state(state["cuda"], device)


class Deadline:
    """A fit's time limit: another epoch is started only if it would end within ``limit`` seconds of the start,
    judging by the slowest epoch so far. ``None`` never stops. The clock (and the time the limit counts from:
    default now) is injectable."""

    def __init__(self, limit: float | None, clock: Callable[[], float] = time.monotonic,
                 started: float | None = None) -> None:
        self.limit = limit
        self.clock = clock
        self.started = clock() if started is None else started

    def allows(self, epoch_seconds: float) -> bool:
        """Whether one more epoch of ``epoch_seconds`` still ends within the limit."""
        return self.limit is None or self.clock() - self.started + epoch_seconds <= self.limit
