"""``tgbhub.train``: load a dataset, fit a trainable baseline, predict, grade with the reference evaluator, write.

The orchestration layer above :mod:`tgbhub.trainers` (which never imports the evaluator): it picks the task the model
trains for, runs ``fit`` and ``predict``, grades the submission with the task's evaluator and writes the run's files
to ``out``:

- ``model.pt``: the checkpoint (:mod:`tgbhub.trainers.checkpoint`: weights, config, seed, device, dataset digest);
- ``submission.parquet``: the graded submission, in the task's schema;
- ``teacher_forced.parquet`` (rollout forecasting): the teacher-forced window forecasts the run was graded with, in
  the evaluator's schema (without them ``tgbhub evaluate`` could not compute the test MSE or apply the validity
  screen, and would report less than the run did);
- ``result.json``: the run's full JSON (per-epoch history included), with ``regrade``: the ``tgbhub evaluate ...``
  command that grades the written files again and prints the metrics the run printed, value for value.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tgbhub import config
from tgbhub.errors import InvalidNameError, TrainingPaused, UnsupportedTaskError
from tgbhub.evaluate.graded import Graded
from tgbhub.manifest import Manifest

if TYPE_CHECKING:
    from tgbhub.baselines.registry import Column, Submission
    from tgbhub.data import TemporalGraphDataset, TrajectoryDataset
    from tgbhub.evaluate.base import TaskEvaluator
    from tgbhub.trainers import FitReport, TrainConfig, Trainer

#: the resumable fit's state, in the run's folder (:mod:`tgbhub.trainers.resume`)
STATE_FILE = "fit-state.pt"
RESULT_KEYS = ("dataset", "version", "model", "seed", "device", "epochs_run", "train_seconds", "metrics")


def default_out(model: str, name: str, seed: int) -> Path:
    """``./train-<model>-<family>-<name>-s<seed>``: one folder per run, next to where the command runs."""
    return config.output_folder("train", name, model, seed)


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
          hparams: Mapping[str, Any] | None = None, write: bool = True, resume: bool = False,
          **options: Any) -> Graded:
    """Train ``model`` on ``name``, grade its submission for ``split`` (the task's report split) and write the run.

    ``options`` are further :class:`~tgbhub.trainers.TrainConfig` fields (``batch_size``, ``lr``, ``patience``,
    ``compile``, ``amp``, ``limit_batches``, ``progress``, ``time_limit``). With ``resume`` the fit keeps its whole
    state in ``out/fit-state.pt`` after every epoch and, when that file exists, goes on from it: a run can span
    several processes (a GPU slot of a few minutes each, or a killed one), and on CPU ends bit-identical to an
    uninterrupted run. With ``time_limit`` (seconds) the fit stops at the epoch boundary before an epoch it could
    not finish in time and :class:`~tgbhub.errors.TrainingPaused` is raised (run again with ``resume`` to go on).
    Returns the :class:`~tgbhub.evaluate.graded.Graded` run (``kind="train"``): the evaluator's result (dataset,
    version, digests, task, split, ``metrics``), the model, and the run's ``seed``, ``device``, ``epochs_run``,
    ``train_seconds``, best epoch, history, hyper-parameters, the files written and ``regrade``, the
    ``tgbhub evaluate`` command that grades those files the same way (:func:`regrade_command`).

    >>> tgbhub.train("dlinear", "chaosnet/k0.5-rho0.3-n8", seed=42)  # doctest: +SKIP

    Raises:
        MissingExtraError: without torch (the ``train`` extra).
        UnsupportedTaskError: if ``model`` trains for none of the dataset's tasks.
        InvalidNameError: for a bad device, split or hyper-parameter, ``resume`` without ``write``, or
            ``time_limit`` without ``resume``.
        DatasetNotFoundError, SourceUnavailableError, IntegrityError: as :func:`tgbhub.load_dataset` (and
            IntegrityError for a ``fit-state.pt`` another run wrote).
        TrainingPaused: when ``time_limit`` stopped the fit before its protocol ended (its state is saved).
    """
    from tgbhub import api
    from tgbhub.tasks.declared import choose_split
    from tgbhub.trainers import TrainConfig, make_trainer

    if resume and not write:
        raise InvalidNameError("resume keeps the fit's state in the run's folder: it needs write=True")
    if options.get("time_limit") is not None and not resume:
        raise InvalidNameError(f"time_limit={options['time_limit']!r} without resume would stop the fit with nothing "
                               "kept to go on from: pass resume=True (--resume) with it")
    config = TrainConfig(seed=seed, device=device, epochs=epochs, hparams=dict(hparams or {}), **options)
    dataset = api.load_dataset(name, version, cache_dir=cache_dir)  # after the settings are checked: it can be slow
    folder = Path(out) if out is not None else default_out(model, dataset.name, seed)
    if resume:
        config = dataclasses.replace(config, state_file=str(folder / STATE_FILE))
    chosen = task_for(dataset.manifest, model, task)
    trainer = make_trainer(chosen, model, config, dataset=dataset)
    trainer.hyperparameters()  # a bad --hparam is refused here, before any data is prepared or memory allocated
    report = trainer.fit(dataset, chosen)
    if not report.finished:
        raise _paused(model, dataset, config, report, int(trainer.hyperparameters()["epochs"]))
    graded_split = choose_split(dataset.manifest, chosen, split)
    submission = trainer.predict(dataset, chosen, graded_split)
    evaluator = api.get_evaluator(dataset, chosen.get("name"))
    graded = evaluator.evaluate(submission, split=graded_split)
    run: dict[str, Any] = {"seed": seed, "device": report.device, "epochs_run": report.epochs_run,
                           "train_seconds": report.train_seconds, "best_epoch": report.best_epoch,
                           "best_val": {report.val_metric: report.best_val},
                           "hyperparameters": trainer.hyperparameters(), "history": report.history}
    if write:
        run["files"] = _write_run(folder, trainer, config, dataset, chosen, report, submission, evaluator,
                                  graded_split)
        run["regrade"] = regrade_command(dataset, chosen, graded_split, run["files"], cache_dir)
        _write_result(Path(run["files"]["result"]), Graded("train", graded, model, run).to_json())
    return Graded("train", graded, model=model, run=run)


def _paused(model: str, dataset: TemporalGraphDataset | TrajectoryDataset, config: TrainConfig, report: FitReport,
            planned: int) -> TrainingPaused:
    slowest = max((h["seconds"] for h in report.history), default=0.0)
    return TrainingPaused(
        f"{model} on {dataset.name}@{dataset.version} paused after epoch {report.epochs_run} of {planned} (seed "
        f"{config.seed}): the next epoch (about {slowest:.0f} s) would pass the time limit of {config.time_limit:g} s; "
        f"its state is in {config.state_file}. Run the same command again with --resume (and a time limit that "
        "fits) to go on", state_file=str(config.state_file), epochs_run=report.epochs_run, epochs=planned)


def regrade_command(dataset: TemporalGraphDataset | TrajectoryDataset, task: Mapping[str, Any], split: str,
                    files: Mapping[str, str], cache_dir: str | os.PathLike[str] | None = None) -> str:
    """The ``tgbhub evaluate ...`` command line that grades a run's written files as the run graded them.

    Everything the run chose is spelled out rather than left to the command's defaults, which could pick otherwise:
    the exact version (a newer one may have been published since), the task (the one matching the file's columns is
    not always the one trained for), the split (``--split`` may have named another), and the teacher-forced file.
    The cache folder is named only when the run was given one; otherwise both resolve it the same way (``TGBHUB_CACHE``,
    then the user cache). Paths are as written, so the command works from the folder the run was started in.
    """
    argv = ["tgbhub"]
    if cache_dir is not None:
        argv += ["--cache-dir", os.fspath(cache_dir)]
    argv += ["evaluate", f"{dataset.name}@{dataset.version}", files["submission"], "--split", split]
    if task.get("name") is not None:
        argv += ["--task", str(task["name"])]
    if "teacher_forced" in files:
        argv += ["--teacher-forced", files["teacher_forced"]]
    return shlex.join(argv)


def _write_run(folder: Path, trainer: Trainer, config: TrainConfig, dataset: TemporalGraphDataset | TrajectoryDataset,
               task: Mapping[str, Any], report: FitReport, submission: Submission, evaluator: TaskEvaluator,
               split: str) -> dict[str, str]:
    """Write the checkpoint, the submission and whatever else the evaluator graded; returns name -> path."""
    from tgbhub.evaluate.submission import write_submission
    from tgbhub.trainers import save_checkpoint

    folder.mkdir(parents=True, exist_ok=True)
    files = {"checkpoint": str(save_checkpoint(folder / "model.pt", trainer, config=config, dataset=dataset,
                                               task=task, report=report)),
             "submission": str(folder / "submission.parquet")}
    write_submission(submission, folder / "submission.parquet")
    forecasts = _teacher_forced_columns(submission, evaluator, split)
    if forecasts is not None:
        files["teacher_forced"] = str(folder / "teacher_forced.parquet")
        write_submission(forecasts, folder / "teacher_forced.parquet")
    files["result"] = str(folder / "result.json")
    return files


def _teacher_forced_columns(submission: Submission, evaluator: TaskEvaluator, split: str
                            ) -> dict[str, Column] | None:
    """The teacher-forced forecasts file's columns (``window``, ``values``) when the run was graded with forecasts
    in memory, else ``None``.

    A forecaster given as a callable (the heuristic baselines' way) is not a trainer's: trainers attach the array of
    every window's forecasts, which is exactly what the file holds.
    """
    forecasts = getattr(submission, "forecasts", None)
    if forecasts is None or callable(forecasts) or not hasattr(evaluator, "teacher_forced_keys"):
        return None
    keys = evaluator.teacher_forced_keys(split)
    forecasts = np.asarray(forecasts)
    return {**keys, "values": forecasts.reshape(len(forecasts), -1)}


def _write_result(path: Path, result: Mapping[str, Any]) -> None:
    from tgbhub.cache import write_text_atomic

    write_text_atomic(path, json.dumps(result, indent=2, default=float) + "\n")
