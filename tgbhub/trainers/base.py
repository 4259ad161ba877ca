"""The model protocol: what a trainable baseline is, how it is configured, and how it is found.

A trainer owns one model for one task type. It fits on the train split (early stopping on val), predicts a
submission for any split, and hands its state to :mod:`tgbhub.trainers.checkpoint`. Trainers stay on the baselines'
side of the layers: they read datasets and task blocks, write submissions, and never import the evaluator (grading
is :mod:`tgbhub.training`'s job).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from tgbhub.baselines.registry import registering
from tgbhub.errors import InvalidNameError, UnsupportedTaskError
from tgbhub.plugins import PluginTable
from tgbhub.progress import duration, notice

if TYPE_CHECKING:
    from tgbhub.baselines.registry import Submission

DEVICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class TrainConfig:
    """How to train: everything a run needs besides the model's name and the data.

    ``epochs``, ``batch_size`` and ``lr`` default (``None``) to the protocol the model's published numbers come
    from; ``hparams`` overrides the model's sizes by name (tests use tiny ones). ``compile`` and ``amp`` are off by
    default: neither is part of the published protocols. ``limit_batches`` caps the train batches per epoch (smoke
    runs only; a run with it set is not comparable to a published number). ``state_file`` makes the fit resumable:
    its whole state is written there after every epoch and a fit given an existing file goes on from it
    (:mod:`tgbhub.trainers.resume`); ``time_limit`` (seconds) stops a fit at the epoch boundary before an epoch it
    could not finish in time (the report then says ``finished=False``). Only trainers with ``resumable = True`` take
    either.
    """

    seed: int = 42
    device: str = "auto"
    epochs: int | None = None
    batch_size: int | None = None
    lr: float | None = None
    patience: int | None = None
    compile: bool = False
    amp: bool = False
    hparams: Mapping[str, Any] = field(default_factory=dict)
    limit_batches: int | None = None
    progress: bool = True
    state_file: str | None = None
    time_limit: float | None = None

    def __post_init__(self) -> None:
        if self.device not in DEVICES and not str(self.device).startswith("cuda:"):
            raise InvalidNameError(f"device {self.device!r} is unknown; choose auto, cpu, cuda or cuda:N")
        for name in ("epochs", "batch_size", "patience", "limit_batches"):
            value = getattr(self, name)
            if value is not None and int(value) < 1:
                raise InvalidNameError(f"{name} must be a positive integer, got {value!r}")
        if self.lr is not None and not float(self.lr) > 0:
            raise InvalidNameError(f"lr must be positive, got {self.lr!r}")
        if self.time_limit is not None and not float(self.time_limit) >= 0:
            raise InvalidNameError(f"time_limit must be a number of seconds >= 0, got {self.time_limit!r}")

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (for checkpoints and reports)."""
        out = asdict(self)
        out["hparams"] = dict(self.hparams)
        return out


#: the largest size ``--hparam`` may set: far above every published model (the widest is 256 channels) and small
#: enough that no layer of any registered model needs more than a few GB; a typo like 100000 is refused, not allocated
MAX_SIZE = 4096


def checked_hparams(model: str, hparams: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``defaults`` overridden by ``hparams``, every override checked against its default's kind: a size (an integer
    default, or ``None``: resolved per dataset) is an integer in [1, MAX_SIZE], a dropout (a name with "dropout", or
    a float default) a number in [0, 1).

    Raises:
        InvalidNameError: for an unknown name (listing the model's), a value of the wrong type or out of range
            (naming the key, the value and the range).
    """
    unknown = sorted(set(hparams) - set(defaults))
    if unknown:
        raise InvalidNameError(f"{model} has no hyper-parameter {unknown[0]!r}; it takes {', '.join(sorted(defaults))}")
    for name, value in hparams.items():
        default = defaults[name]
        if "dropout" in name or isinstance(default, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
                raise InvalidNameError(f"{model}: --hparam {name}={value!r} is out of range; {name}: a number in "
                                       f"[0, 1) (default {default})")
        elif not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_SIZE:
            raise InvalidNameError(f"{model}: --hparam {name}={value!r} is out of range; {name}: an integer in "
                                   f"[1, {MAX_SIZE}] (default {default if default is not None else 'per dataset'})")
    return {**defaults, **hparams}


@dataclass
class FitReport:
    """What ``fit`` did: epochs run, the epoch whose weights were kept, and per-epoch losses and times.

    ``best_val`` is that epoch's validation score, ``val_metric`` names it (``"mse"``, ``"f1"``, ``"mrr"``) and
    ``higher_is_better`` says which way it was selected (an error is minimised, a score maximised).
    ``finished`` is False when a time limit paused the fit before its protocol ended (the weights are then the
    last epoch's, not the best: resume it rather than predict); ``resumed_at`` is the epoch a resumed fit started
    from, and ``train_seconds`` counts every call of a resumed run.
    """

    epochs_run: int = 0
    best_epoch: int = -1
    best_val: float = float("nan")
    val_metric: str = ""
    higher_is_better: bool = False
    train_seconds: float = 0.0
    device: str = "cpu"
    history: list[dict[str, float]] = field(default_factory=list)
    finished: bool = True
    resumed_at: int | None = None
    epoch_estimate: dict[str, float] | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


#: the clock :class:`EpochPace` reads (monotonic; tests replace it)
clock: Callable[[], float] = time.perf_counter
#: the estimate is made once this many batches after the first are timed ...
PACE_BATCHES = 3
#: ... and at least this many seconds have passed since the first ended (the first batch, with its warm-up, is not
#: timed: it would inflate the rate of every other)
PACE_SECONDS = 5.0
#: an estimate above this many seconds names the ways to bound the run
LONG_RUN_SECONDS = 600.0


class EpochPace:
    """The estimate of how long a fit will take, said once, early in its first epoch.

    Every trainer's epoch loop makes one before its epochs and calls :meth:`batch` after each train batch (a
    snapshot, a batch of events or of windows). After the first batch plus :data:`PACE_BATCHES` more, and at least
    :data:`PACE_SECONDS` since the first ended (or at the end of the epoch's train pass, whichever comes first), it
    extrapolates the train pass to the whole epoch and writes one notice (:func:`tgbhub.progress.notice`: silenced by
    ``tgbhub --quiet``, and by ``TrainConfig(progress=False)``) with the time per epoch, the time early stopping needs
    at the least (``patience + 1`` epochs) and the upper bound (every epoch the protocol allows). Above
    :data:`LONG_RUN_SECONDS` it also names how to bound the run: ``--time-limit`` for a resumable trainer,
    ``--epochs``/``--patience`` for the others. The estimate covers the train pass, not validation, so it is a lower
    bound per epoch; it is kept in ``report.epoch_estimate``.

    Args:
        model: the model's name, first word of the notice.
        config: the run's settings (``progress``, and ``time_limit`` already given).
        epochs: the most epochs the protocol runs; ``patience``: its early-stopping patience.
        batches: train batches per epoch.
        report: the fit's report, which keeps the estimate.
        first_epoch: the epoch this call starts at (a resumed fit's: only the epochs left count).
        resumable: whether the trainer can pause at a time limit and go on (``--time-limit``).
        sync: called before the clock is read for the estimate (``torch.cuda.synchronize`` on a GPU, where the
            batches run asynchronously and the host's clock alone would read too little).
        say: where the line goes (default: :func:`tgbhub.progress.notice`).
    """

    def __init__(self, model: str, config: TrainConfig, *, epochs: int, patience: int, batches: int,
                 report: FitReport, first_epoch: int = 0, resumable: bool = False,
                 sync: Callable[[], Any] | None = None, say: Callable[[str], None] | None = None) -> None:
        self.model, self.config, self.report = model, config, report
        self.epochs, self.patience, self.batches = int(epochs), int(patience), max(int(batches), 1)
        self.first_epoch, self.resumable = int(first_epoch), resumable
        self._sync, self._say = sync, say or notice
        self._clock = clock  # the module's clock as it is now (tests replace it)
        self._start = self._clock()
        self._after_first: float | None = None
        self.done = not config.progress  # nothing to say: said already, or asked for no progress

    def batch(self, epoch: int, done: int) -> None:
        """After train batch ``done`` (1-based) of ``epoch``: time the first epoch's batches, say the estimate once.

        Raises nothing.
        """
        if self.done or epoch != self.first_epoch:
            return
        if done <= 1:
            self._after_first = self._clock()
            if done < self.batches:
                return
        now = self._clock()
        timed = now - (self._after_first if self._after_first is not None else self._start)
        if done < self.batches and (done - 1 < PACE_BATCHES or timed < PACE_SECONDS):
            return
        if self._sync is not None:
            self._sync()
            now = self._clock()
        elapsed = now - self._start
        if done > 1 and self._after_first is not None:
            rate = (now - self._after_first) / (done - 1)  # per batch, the warm-up of the first left out
            per_epoch = elapsed + rate * (self.batches - done)
        else:
            per_epoch = elapsed * self.batches / max(done, 1)
        self.done = True
        self.report.epoch_estimate = {"seconds_per_epoch": per_epoch, "timed_batches": float(done),
                                      "batches": float(self.batches)}
        self._say(self.line(per_epoch, done))

    def line(self, per_epoch: float, timed: int) -> str:
        """The notice for ``per_epoch`` seconds an epoch, estimated from ``timed`` batches."""
        left = max(self.epochs - self.first_epoch, 1)
        most = left * per_epoch
        text = (f"{self.model}: about {duration(per_epoch)} per epoch of training (from {timed} of "
                f"{self.batches} batches; validation adds to it)")
        soonest = min(self.patience + 1, self.epochs) - self.first_epoch
        if soonest < left:  # early stopping, not the epoch count, is what ends such a run
            text += (f"; early stopping (patience {self.patience}) needs {soonest}+ epochs, about "
                     f"{duration(soonest * per_epoch)}; at most {left} epochs, {duration(most)}")
        else:
            text += f"; {left} epochs, about {duration(most)}"
        if most > LONG_RUN_SECONDS:
            text += ". " + self._bound_advice()
        return text

    def _bound_advice(self) -> str:
        if self.resumable:
            if self.config.time_limit is not None:
                return (f"--time-limit {self.config.time_limit:g} pauses it at an epoch boundary; run again with "
                        "--resume to go on")
            return ("To spend at most an hour per call: --resume --time-limit 3600 (exit 3 when paused; run the "
                    "same command again to go on)")
        return (f"To bound it: --epochs N or --patience N ({self.model} cannot pause and resume, so --time-limit "
                "does not apply)")


class Trainer(Protocol):
    """A trainable baseline for one task type. The constructor does no I/O and touches no data.

    ``dataset`` is the kind the trainer's task type reads (a ``TemporalGraphDataset`` or a ``TrajectoryDataset``,
    picked by the registry at run time), so the protocol leaves it open: a union would admit no implementation.
    ``task`` is the manifest's task block (JSON); ``hyperparameters()`` and ``state()`` are each model's own.
    """

    #: the model's registered name and the task type it answers
    model_name: str
    task_type: str

    def fit(self, dataset: Any, task: Mapping[str, Any]) -> FitReport:
        """Train on the task's train split, keep the weights of the best validation epoch."""

    def predict(self, dataset: Any, task: Mapping[str, Any], split: str) -> Submission:
        """The submission for ``split``, in the task's declared schema."""

    def hyperparameters(self) -> dict[str, Any]:
        """The resolved sizes and optimiser settings actually used (defaults merged with overrides)."""

    def state(self) -> dict[str, Any]:
        """Everything needed to predict again: weights (CPU tensors) and fitted statistics."""

    def restore(self, state: Mapping[str, Any], dataset: Any, task: Mapping[str, Any]) -> None:
        """Rebuild the model for ``dataset`` and load ``state`` (from :meth:`state`)."""


TrainerFactory = Callable[[TrainConfig], Trainer]

#: ``(task type, model name)`` -> trainer factory; filled by :func:`register_trainer`
TRAINERS: PluginTable[tuple[str, str], TrainerFactory] = PluginTable("trainer", (
    "tgbhub.trainers.chaosnet", "tgbhub.trainers.snapshot", "tgbhub.trainers.events"))


def register_trainer(task_type: str, model: str) -> Callable[[TrainerFactory], TrainerFactory]:
    """Decorator: ``model`` trains for every task of type ``task_type``.

    Raises:
        ValueError: if ``(task_type, model)`` is already registered to another factory (a programming error).
    """
    return registering(TRAINERS, task_type, model)


def trainers_for(task_type: str | None = None) -> list[str]:
    """Every model registered for ``task_type`` (every task type when ``None``), sorted."""
    return sorted({model for kind, model in TRAINERS if task_type is None or kind == task_type})


def task_types_of(model: str) -> list[str]:
    """The task types ``model`` is registered for."""
    return sorted(kind for kind, name in TRAINERS if name == model)


def make_trainer(task: Mapping[str, Any], model: str, config: TrainConfig, dataset: Any = None) -> Trainer:
    """A fresh trainer for ``(task["type"], model)``.

    A registered trainer that serves several protocols under one key (``tgn`` on a ranking task: T-GRAB's snapshots
    or TGB's events, by the dataset's kind of time) has a ``bind(dataset)`` method; given ``dataset``, the trainer is
    bound to it here, so that ``hyperparameters()`` checks the settings of the protocol that will run.

    Raises:
        UnsupportedTaskError: if ``model`` does not train for the task's type (the message lists what does), or
            ``config`` asks a trainer that cannot resume for a state file or a time limit.
    """
    factory = TRAINERS.get((str(task.get("type")), model))
    if factory is None:
        known = trainers_for(str(task.get("type")))
        elsewhere = task_types_of(model)
        hint = f"; {model!r} trains for {', '.join(elsewhere)} tasks" if elsewhere else ""
        raise UnsupportedTaskError(f"no trainable model {model!r} for task type {task.get('type')!r} (task "
                                   f"{task.get('name')!r}); available: {', '.join(known) or 'none'}{hint}")
    trainer = factory(config)
    if (config.state_file is not None or config.time_limit is not None) and not getattr(trainer, "resumable", False):
        resumable = sorted(name for (kind, name), make in TRAINERS.items()
                           if getattr(make(TrainConfig()), "resumable", False))
        raise UnsupportedTaskError(f"{model!r} cannot pause and resume a fit (a state file or a time limit was asked "
                                   f"for); models that can: {', '.join(resumable)}. Run it without --resume and "
                                   "--time-limit")
    bind = getattr(trainer, "bind", None)
    if dataset is not None and bind is not None:
        bind(dataset)
    return trainer
