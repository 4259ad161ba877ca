"""Torch plumbing every trainer shares: the import guard, device choice, seeded RNG, early stopping.

torch is an extra (the ``train`` extra): it is imported on first use, so importing tgbhub never needs it.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from tgbhub.errors import InvalidNameError, MissingExtraError

if TYPE_CHECKING:
    import torch


def require_torch(needed_for: str) -> ModuleType:
    """The ``torch`` module, imported now.

    Raises:
        MissingExtraError: if torch is not installed (the ``train`` extra).
    """
    try:
        import torch
    except ModuleNotFoundError as exc:
        raise MissingExtraError("torch", "train", needed_for) from exc
    return torch


def save_atomic(payload: object, path: str | os.PathLike[str]) -> Path:
    """``torch.save`` of ``payload`` to a temp file beside ``path``, renamed into place: a run killed while writing
    leaves the previous file, never half of one.

    Raises:
        MissingExtraError: without torch.
        OSError: if the folder cannot be written.
    """
    torch = require_torch("saving a checkpoint")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_name(f".{target.name}.tmp")
    torch.save(payload, temp)
    os.replace(temp, target)
    return target


def resolve_device(name: str) -> torch.device:
    """``auto`` -> the first CUDA device when one is usable, else the CPU; ``cpu``/``cuda``/``cuda:N`` as given.

    Raises:
        MissingExtraError: if torch is not installed.
        InvalidNameError: if CUDA is asked for and this torch build or machine has none.
    """
    torch = require_torch("training a model")
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise InvalidNameError(f"device {name!r} was asked for, but torch {torch.__version__} sees no CUDA device "
                               "here; use --device auto (CUDA when present, else CPU) or --device cpu")
    return device


@contextlib.contextmanager
def isolated_rng(seed: int, device: torch.device | None) -> Iterator[None]:
    """Seed torch's generators for the duration of a run and restore the caller's RNG state afterwards.

    Module initialisers and dropout draw from torch's global generators; forking them keeps a run reproducible
    from ``seed`` alone without changing the state any other code sees. On CPU the run is also made to use
    deterministic kernels, so a fixed seed gives bit-identical weights run to run.
    """
    torch = require_torch("training a model")
    devices = [device] if getattr(device, "type", "cpu") == "cuda" else []
    deterministic = torch.are_deterministic_algorithms_enabled()
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        if not devices:
            torch.use_deterministic_algorithms(True)
        try:
            yield
        finally:
            torch.use_deterministic_algorithms(deterministic)


class EarlyStopping:
    """Patience on a validation loss: stop after ``patience`` epochs without a strict improvement.

    Keeps a CPU copy of the best weights so the best-validation model can be restored before testing.
    """

    def __init__(self, patience: int) -> None:
        self.patience = patience
        self.best = math.inf
        self.best_epoch = -1
        self.best_state: dict[str, torch.Tensor] | None = None
        self.stale = 0

    def update(self, epoch: int, loss: float, module: torch.nn.Module) -> bool:
        """Record ``loss`` of ``epoch``; returns True when training should stop."""
        if loss < self.best:
            self.best, self.best_epoch, self.stale = loss, epoch, 0
            self.best_state = {k: v.detach().to("cpu", copy=True) for k, v in module.state_dict().items()}
        else:
            self.stale += 1
        return self.stale >= self.patience

    def restore(self, module: torch.nn.Module) -> None:
        """Load the best weights seen into ``module`` (no-op before the first update)."""
        if self.best_state is not None:
            module.load_state_dict(self.best_state)
