"""``tgbhub.train``: load a dataset, fit a trainable baseline, predict, grade with the reference evaluator, write.

The orchestration layer above :mod:`tgbhub.trainers` (which never imports the evaluator): it picks the task the model
trains for, runs ``fit`` and ``predict``, grades the submission with the task's evaluator and writes the run's files
to ``out``:

- ``model.pt``: the checkpoint (:mod:`tgbhub.trainers.checkpoint`: weights, config, seed, device, dataset digest);
- ``submission.parquet``: the graded submission, in the task's schema (``tgbhub evaluate NAME FILE`` re-grades it);
- ``result.json``: the same JSON ``tgbhub train --json`` prints, with the per-epoch history.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tgbhub.errors import UnsupportedTaskError
from tgbhub.evaluate.graded import Graded
from tgbhub.manifest import Manifest

RESULT_KEYS = ("dataset", "version", "model", "seed", "device", "epochs_run", "train_seconds", "metrics")


def default_out(model: str, name: str, seed: int) -> Path:
    """``./train-<model>-<family>-<name>-s<seed>``: one folder per run, next to where the command runs."""
    return Path(f"train-{model}-{re.sub(r'[^A-Za-z0-9._-]+', '-', name)}-s{seed}")


def task_for(manifest: Manifest, model: str, task: str | None = None) -> Mapping[str, Any]:
    """The task ``model`` trains for: ``task`` when named, else the default task, else the first one it trains for.

    Raises:
        ManifestError: if the manifest has no task called ``task``.
        UnsupportedTaskError: if ``model`` trains for none of the dataset's tasks (the message lists them).
    """
    from tgbhub.trainers.base import task_types_of, trainers_for

    if task is not None:
        return manifest.task_named(task)
    for candidate in [manifest.task, *manifest.tasks]:
        if model in trainers_for(str(candidate.get("type"))):
            return candidate
    offered = {str(t.get("type")): trainers_for(str(t.get("type"))) for t in manifest.tasks}
    elsewhere = task_types_of(model)
    raise UnsupportedTaskError(
        f"{model!r} trains for none of {manifest.name}@{manifest.version}'s tasks; models per task type there: "
        + "; ".join(f"{kind}: {', '.join(m) or 'none'}" for kind, m in offered.items())
        + (f". {model!r} trains for {', '.join(elsewhere)} tasks" if elsewhere else f". {model!r} is not a "
           f"trainable model; known: {', '.join(trainers_for())}"))


def train(model: str, name: str, *, version: str | None = None, seed: int = 42, device: str = "auto",
          epochs: int | None = None, out: str | os.PathLike[str] | None = None, task: str | None = None,
          split: str | None = None, cache_dir: str | os.PathLike[str] | None = None,
          hparams: Mapping[str, Any] | None = None, write: bool = True, **options: Any) -> Graded:
    """Train ``model`` on ``name``, grade its submission for ``split`` (the task's report split) and write the run.

    ``options`` are further :class:`~tgbhub.trainers.TrainConfig` fields (``batch_size``, ``lr``, ``patience``,
    ``compile``, ``amp``, ``limit_batches``, ``progress``). Returns the :class:`~tgbhub.evaluate.graded.Graded` run
    (``kind="train"``): the evaluator's result (dataset, version, digests, task, split, ``metrics``), the model, and
    the run's ``seed``, ``device``, ``epochs_run``, ``train_seconds``, best epoch, history, hyper-parameters and the
    files written.

    >>> tgbhub.train("dlinear", "chaosnet/k0.5-rho0.3-n8", seed=42)  # doctest: +SKIP

    Raises:
        MissingExtraError: without torch (``pip install 'tgbhub[train]'``).
        UnsupportedTaskError: if ``model`` trains for none of the dataset's tasks.
        InvalidNameError: for a bad device, split or hyper-parameter.
        DatasetNotFoundError, SourceUnavailableError, IntegrityError: as :func:`tgbhub.load_dataset`.
    """
    from tgbhub import api
    from tgbhub.tasks import choose_split
    from tgbhub.trainers import TrainConfig, make_trainer

    config = TrainConfig(seed=seed, device=device, epochs=epochs, hparams=dict(hparams or {}), **options)
    dataset = api.load_dataset(name, version, cache_dir=cache_dir)
    chosen = task_for(dataset.manifest, model, task)
    trainer = make_trainer(chosen, model, config)
    report = trainer.fit(dataset, chosen)
    graded_split = choose_split(dataset.manifest, chosen, split)
    submission = trainer.predict(dataset, chosen, graded_split)
    graded = api.get_evaluator(dataset, chosen.get("name")).evaluate(submission, split=graded_split)
    run: dict[str, Any] = {"seed": seed, "device": report.device, "epochs_run": report.epochs_run,
                           "train_seconds": report.train_seconds, "best_epoch": report.best_epoch,
                           "best_val": {report.val_metric: report.best_val},
                           "hyperparameters": trainer.hyperparameters(), "history": report.history}
    if write:
        folder = Path(out) if out is not None else default_out(model, dataset.name, seed)
        run["files"] = _write_run(folder, trainer, config, dataset, chosen, report, submission,
                                  Graded("train", graded, model, run).to_json())
    return Graded("train", graded, model=model, run=run)


def _write_run(folder: Path, trainer: Any, config: Any, dataset: Any, task: Mapping[str, Any], report: Any,
               submission: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, str]:
    from tgbhub.cache import write_text_atomic
    from tgbhub.evaluate.submission import write_submission
    from tgbhub.trainers import save_checkpoint

    folder.mkdir(parents=True, exist_ok=True)
    files = {"checkpoint": str(save_checkpoint(folder / "model.pt", trainer, config=config, dataset=dataset,
                                               task=task, report=report)),
             "submission": str(folder / "submission.parquet"), "result": str(folder / "result.json")}
    write_submission(submission, folder / "submission.parquet")
    write_text_atomic(folder / "result.json", json.dumps({**result, "files": files}, indent=2, default=float) + "\n")
    return files
