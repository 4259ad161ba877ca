"""Checkpoints: a trained model's weights with everything needed to trust and reuse them.

One file (``torch.save``) holding the format tag, model and task, the run's config and resolved
hyper-parameters, seed, device, the fit report, and the dataset it was trained on (name, version, content
digest). Loading reads tensors and plain values only (``weights_only=True``: a checkpoint cannot run code), and a
checkpoint is refused for a dataset whose content digest differs from the one it was trained on.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tgbhub.errors import IntegrityError, InvalidNameError
from tgbhub.trainers.base import FitReport, TrainConfig, Trainer, make_trainer
from tgbhub.trainers.torchutil import require_torch, save_atomic

if TYPE_CHECKING:
    from tgbhub.data import TemporalGraphDataset, TrajectoryDataset

FORMAT = "tgbhub-checkpoint/1"


@dataclass(frozen=True)
class Checkpoint:
    """A loaded checkpoint: its trainer (weights restored) and the record it was saved with."""

    trainer: Trainer
    #: the file's record as read back (plain values and tensors, as :func:`save_checkpoint` wrote them)
    record: Mapping[str, Any]


def save_checkpoint(path: str | os.PathLike[str], trainer: Trainer, *, config: TrainConfig,
                    dataset: TemporalGraphDataset | TrajectoryDataset,
                    task: Mapping[str, Any], report: FitReport) -> Path:
    """Write ``trainer``'s state and its provenance to ``path`` (a temp file renamed into place).

    Raises:
        MissingExtraError: without torch.
        OSError: if the file cannot be written.
    """
    torch = require_torch("saving a checkpoint")
    payload = {"format": FORMAT, "model": trainer.model_name, "task": str(task.get("name")),
               "task_type": str(task.get("type")), "config": config.as_dict(),
               "hyperparameters": trainer.hyperparameters(), "seed": config.seed, "device": report.device,
               "dataset": {"name": dataset.name, "version": dataset.version, "digest": dataset.digest},
               "report": report.as_dict(),
               "versions": {"tgbhub": _installed_version(), "torch": str(torch.__version__)},
               "state": trainer.state()}
    return save_atomic(payload, path)


def _installed_version() -> str:
    try:
        return metadata.version("tgbhub")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def load_checkpoint(path: str | os.PathLike[str], dataset: TemporalGraphDataset | TrajectoryDataset, *,
                    device: str | None = None) -> Checkpoint:
    """The trainer saved at ``path``, rebuilt for ``dataset`` (which must be the data it was trained on).

    ``device`` overrides the device recorded in the checkpoint's config (``auto``, ``cpu``, ``cuda``).

    Raises:
        MissingExtraError: without torch.
        InvalidNameError: if the file is not a tgbhub checkpoint.
        IntegrityError: if ``dataset``'s content digest differs from the one the model was trained on.
        UnsupportedTaskError: if the checkpoint's model is not registered (a newer tgbhub wrote it).
    """
    torch = require_torch("loading a checkpoint")
    try:
        record = torch.load(Path(path), map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a foreign or damaged file
        raise InvalidNameError(f"{path} is not a readable tgbhub checkpoint ({type(exc).__name__}: {exc}); write "
                               "one with tgbhub.train(...) or `tgbhub train`") from exc
    if not isinstance(record, Mapping) or record.get("format") != FORMAT:
        raise InvalidNameError(f"{path} is not a tgbhub checkpoint (format {FORMAT!r} expected)")
    trained_on = record["dataset"]
    if trained_on["digest"] != dataset.digest:
        raise IntegrityError(f"checkpoint {path}", f"dataset {trained_on['name']}@{trained_on['version']} with "
                             f"content digest {trained_on['digest']}",
                             f"{dataset.name}@{dataset.version} with digest {dataset.digest}",
                             "Load the dataset the model was trained on (its name and version are above), or "
                             "train a new model on this one")
    settings = dict(record["config"])
    if device is not None:
        settings["device"] = device
    task = dataset.manifest.task_named(record["task"])
    trainer = make_trainer(task, record["model"], TrainConfig(**settings), dataset=dataset)
    trainer.restore(record["state"], dataset, task)
    return Checkpoint(trainer, record)
