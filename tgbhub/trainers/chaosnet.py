"""ChaosNetBench's trainable forecasters (``dlinear``, ``lstm``, ``tcn``, ``graph_wavenet``) for every
``rollout-forecasting`` task, trained by ChaosNetBench's shared protocol (docs/baselines.md).

The protocol, as the published runs used it: Adam (weight decay 0) at each model's learning rate, MSE on the
normalised 12-step targets, batch 32 shuffled with the last partial batch dropped, at most 50 epochs, MultiStepLR
at epochs 20/35/45 with gamma 0.5 stepped once per epoch, gradient clipping at global norm 5, early stopping on the
teacher-forced validation MSE (stride-1 windows) with patience 10, and the best-validation weights restored before
testing. Train windows have stride 12, over the split's ICs concatenated (the task's ``parity`` windows).

Where it differs from upstream's ``training.py`` (and why it is many times faster at the same quality): the whole
normalised split lives on the device as one ``(rows, 2N)`` tensor and a batch is one gather of ``starts + offsets``
there, so there is no ``Dataset``/``DataLoader``, no per-window Python call and no host-to-device copy per batch;
validation runs in large batches; the rollout advances the split's ICs together (one model call per 12-step block for
all ICs, instead of one IC at a time). Numerically each step is the same computation.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from tgbhub.baselines.trajectory import RolloutSubmission
from tgbhub.errors import InvalidNameError, NotFittedError
from tgbhub.progress import Progress, counter
from tgbhub.trainers.base import EpochPace, FitReport, TrainConfig, checked_hparams, register_trainer
from tgbhub.trainers.resume import (
    Deadline,
    RunIdentity,
    global_rng_state,
    load_fit_state,
    load_schedule_state,
    run_identity,
    save_fit_state,
    schedule_state,
    set_global_rng_state,
)
from tgbhub.trainers.torchutil import EarlyStopping, isolated_rng, require_torch, resolve_device

if TYPE_CHECKING:
    import torch
    from torch import Tensor

    from tgbhub.data import TrajectoryDataset

TASK_TYPE = "rollout-forecasting"


class TrainingProtocol(TypedDict):
    """The training protocol's settings (:data:`PROTOCOL`)."""

    epochs: int
    batch_size: int
    milestones: tuple[int, ...]
    gamma: float
    patience: int
    clip_norm: float
    weight_decay: float


#: ChaosNetBench's shared protocol, as upstream's ``scripts/train.py`` runs it
PROTOCOL: TrainingProtocol = {"epochs": 50, "batch_size": 32, "milestones": (20, 35, 45), "gamma": 0.5, "patience": 10,
            "clip_norm": 5.0, "weight_decay": 0.0}
#: windows per forward pass when nothing is trained (validation, teacher-forced test): memory, not math, bounds it
EVAL_BATCH = 4096
#: train batches between progress-bar refreshes (each refresh reads the running loss back from the device)
SHOW_EVERY = 100
MODEL_NAMES = ("dlinear", "lstm", "tcn", "graph_wavenet")


def _models() -> Mapping[str, tuple[Callable[..., torch.nn.Module], dict[str, Any], float]]:
    from tgbhub.trainers.chaosnet_models import MODELS  # imports torch: only when a model is built
    return MODELS


class DeviceWindows:
    """One split's windows, on the device: ``rows`` ``(R, V)`` and window ``starts``; a batch is one gather."""

    rows: Tensor
    starts: Tensor
    offsets: Tensor

    def __init__(self, torch: ModuleType, rows: np.ndarray, starts: np.ndarray, context: int, horizon: int,
                 device: torch.device | None) -> None:
        self.rows = torch.as_tensor(np.ascontiguousarray(rows), dtype=torch.float32, device=device)
        self.starts = torch.as_tensor(starts, dtype=torch.int64, device=device)
        self.offsets = torch.arange(context + horizon, device=device)
        self.context = context

    def __len__(self) -> int:
        return int(self.starts.shape[0])

    def gather(self, index: Tensor) -> tuple[Tensor, Tensor]:
        """``(x, y)`` of the windows ``index`` selects: ``(B, context, V)`` and ``(B, horizon, V)``."""
        block = self.rows[self.starts[index][:, None] + self.offsets]
        return block[:, :self.context], block[:, self.context:]


@dataclass
class _Loop:
    """What a fit's epochs share and its state file keeps."""

    optimiser: torch.optim.Optimizer
    schedule: torch.optim.lr_scheduler.LRScheduler
    stopper: EarlyStopping
    generator: torch.Generator
    report: FitReport
    started: float  # perf_counter at the start of this call's fit
    earlier_seconds: float = 0.0  # the training seconds of the calls a resumed fit continues

    def seconds(self) -> float:
        return self.earlier_seconds + time.perf_counter() - self.started


class ChaosNetTrainer:
    """A ChaosNetBench forecaster and its training protocol. The constructor does no I/O."""

    task_type = TASK_TYPE
    #: takes ``TrainConfig.state_file`` and ``time_limit`` (:mod:`tgbhub.trainers.resume`)
    resumable = True

    def __init__(self, model_name: str, config: TrainConfig) -> None:
        self.model_name = model_name
        self.config = config
        #: the network, built by :meth:`fit` or :meth:`restore`
        self.module: torch.nn.Module | None = None
        self.device: torch.device | None = None
        self._hparams: dict[str, Any] | None = None

    # ------------------------------------------------------------------------------------------------ settings

    def hyperparameters(self) -> dict[str, Any]:
        """The model's sizes as the published runs used them (overridden by ``config.hparams``) and the protocol."""
        _, defaults, lr = _models()[self.model_name]
        c = self.config
        return {"model": checked_hparams(self.model_name, c.hparams, defaults), "lr": c.lr if c.lr is not None else lr,
                "epochs": c.epochs or PROTOCOL["epochs"], "batch_size": c.batch_size or PROTOCOL["batch_size"],
                "patience": c.patience or PROTOCOL["patience"], "milestones": list(PROTOCOL["milestones"]),
                "gamma": PROTOCOL["gamma"], "clip_norm": PROTOCOL["clip_norm"],
                "weight_decay": PROTOCOL["weight_decay"], "compile": c.compile, "amp": c.amp,
                "limit_batches": c.limit_batches}

    def _build(self, num_nodes: int) -> torch.nn.Module:
        builder, _, _ = _models()[self.model_name]
        return builder(num_nodes, **self.hyperparameters()["model"])

    # -------------------------------------------------------------------------------------------------- fitting

    def fit(self, dataset: TrajectoryDataset, task: Mapping[str, Any]) -> FitReport:
        """Train on the task's train windows, early-stop on the validation MSE, keep the best weights.

        Raises:
            MissingExtraError: without torch (the ``train`` extra).
            InvalidNameError: for an unknown hyper-parameter or an unusable device.
        """
        torch = require_torch(f"training {self.model_name}")
        settings = self.hyperparameters()
        self.device = resolve_device(self.config.device)
        report = FitReport(device=str(self.device))
        started = time.perf_counter()
        with isolated_rng(self.config.seed, self.device):
            self.module = self._build(dataset.num_nodes).to(self.device)
            train = self._windows(torch, dataset, task, "train")
            val = self._windows(torch, dataset, task, "val")
            self._train_epochs(torch, train, val, settings, report, dataset, started)
        return report

    def _windows(self, torch: ModuleType, dataset: TrajectoryDataset, task: Mapping[str, Any], split: str
                 ) -> DeviceWindows:
        context, horizon = int(task["context"]), int(task["horizon"])
        windows = dataset.windows(split, context, horizon)
        return DeviceWindows(torch, windows.rows, windows.starts, context, horizon, self.device)

    def _train_epochs(self, torch: ModuleType, train: DeviceWindows, val: DeviceWindows, settings: Mapping[str, Any],
                      report: FitReport, dataset: TrajectoryDataset, started: float) -> None:
        module = self._network()
        optimiser = torch.optim.Adam(module.parameters(), lr=settings["lr"], weight_decay=settings["weight_decay"])
        schedule = torch.optim.lr_scheduler.MultiStepLR(optimiser, milestones=settings["milestones"],
                                                        gamma=settings["gamma"])
        step = self._step_function(torch, optimiser, settings)
        stopper = EarlyStopping(settings["patience"])
        generator = torch.Generator(device=self.device).manual_seed(self.config.seed)
        loop = _Loop(optimiser, schedule, stopper, generator, report, started)
        identity = run_identity(self.model_name, settings, self.config.seed, dataset)
        first = self._resume(loop, identity, settings["epochs"])
        deadline = Deadline(self.config.time_limit, time.perf_counter, started)
        batch = settings["batch_size"]
        batches = len(train) // batch  # drop_last, as upstream
        if settings["limit_batches"]:
            batches = min(batches, settings["limit_batches"])
        sync = torch.cuda.synchronize if self._device().type == "cuda" else None
        pace = EpochPace(self.model_name, self.config, epochs=settings["epochs"], patience=settings["patience"],
                         batches=batches, report=report, first_epoch=first, resumable=self.resumable, sync=sync)
        for epoch in range(first, settings["epochs"]):
            tick = time.perf_counter()
            module.train()
            order = torch.randperm(len(train), generator=generator, device=self.device)
            total = torch.zeros((), dtype=torch.float64, device=self.device)
            bar = self._bar(epoch, settings["epochs"], batches)
            for b in range(batches):
                x, y = train.gather(order[b * batch:(b + 1) * batch])
                total += step(x, y).detach()
                pace.batch(epoch, b + 1)
                if bar is not None and (b + 1) % SHOW_EVERY == 0:  # a host sync, so only now and then
                    bar.update(SHOW_EVERY)
                    bar.set_postfix_str(f"train mse {float(total) / (b + 1):.4f}")
            train_loss = float(total) / max(batches, 1)  # the one host sync of the epoch's training
            if bar is not None:
                bar.close()
            trained = time.perf_counter()
            val_mse = self.mean_squared_error(val)
            lr = optimiser.param_groups[0]["lr"]
            schedule.step()
            done = time.perf_counter()
            report.history.append({"epoch": epoch, "train_mse": train_loss, "val_mse": val_mse, "lr": lr,
                                   "seconds": done - tick, "train_seconds": trained - tick,
                                   "val_seconds": done - trained, "batches": batches})
            report.epochs_run = epoch + 1
            # diverged (keep the best finite epoch, as a patience stop would), patience ran out, or the protocol ended
            ended = (not math.isfinite(train_loss) or stopper.update(epoch, val_mse, module)
                     or epoch + 1 == settings["epochs"])
            report.finished = ended or deadline.allows(max(h["seconds"] for h in report.history))
            self._save_state(loop, identity, epoch + 1, ended)
            if ended or not report.finished:
                break
        if report.finished:
            stopper.restore(module)
        report.best_epoch, report.best_val = stopper.best_epoch, stopper.best
        report.val_metric, report.higher_is_better = "mse", False
        report.train_seconds = loop.seconds()

    def _save_state(self, loop: _Loop, identity: RunIdentity, next_epoch: int, ended: bool) -> None:
        """The fit's state after an epoch, for :meth:`_resume` (only with a ``state_file``)."""
        if self.config.state_file is None:
            return
        stopper = loop.stopper
        save_fit_state(self.config.state_file, {
            "identity": identity, "next_epoch": next_epoch, "ended": ended,
            "weights": {k: v.detach().cpu() for k, v in self._network().state_dict().items()},
            "optimiser": loop.optimiser.state_dict(), "schedule": schedule_state(loop.schedule),
            "generator": loop.generator.get_state(), "rng": global_rng_state(self.device),
            "stopper": {"best": stopper.best, "best_epoch": stopper.best_epoch, "stale": stopper.stale,
                        "best_state": stopper.best_state},
            "history": loop.report.history, "train_seconds": loop.seconds()})

    def _resume(self, loop: _Loop, identity: RunIdentity, epochs: int) -> int:
        """Load the state file into the loop when there is one; returns the epoch to start from (the protocol's
        end for a fit that had ended: then only the best weights are restored)."""
        if self.config.state_file is None:
            return 0
        state = load_fit_state(self.config.state_file, identity)
        if state is None:
            return 0
        self._network().load_state_dict(state["weights"])
        loop.optimiser.load_state_dict(state["optimiser"])
        load_schedule_state(loop.schedule, state["schedule"])
        loop.generator.set_state(state["generator"])
        set_global_rng_state(state["rng"], self.device)
        saved = state["stopper"]
        loop.stopper.best, loop.stopper.best_epoch = float(saved["best"]), int(saved["best_epoch"])
        loop.stopper.stale, loop.stopper.best_state = int(saved["stale"]), saved["best_state"]
        report = loop.report
        report.history = list(state["history"])
        report.epochs_run = int(state["next_epoch"])
        report.resumed_at = int(state["next_epoch"])
        loop.earlier_seconds = float(state["train_seconds"])
        return epochs if state["ended"] else int(state["next_epoch"])

    def _step_function(self, torch: ModuleType, optimiser: torch.optim.Optimizer, settings: Mapping[str, Any]
                       ) -> Callable[[Tensor, Tensor], Tensor]:
        """One optimisation step ``(x, y) -> loss``; compiled and/or under autocast when asked for."""
        module = self._network()
        device = self._device()
        forward = torch.compile(module) if settings["compile"] else module
        # bfloat16 keeps float32's exponent range, so no loss scaling is needed (unlike float16)
        amp = bool(settings["amp"])
        clip = settings["clip_norm"]

        def step(x: Tensor, y: Tensor) -> Tensor:
            optimiser.zero_grad(set_to_none=True)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
                loss = torch.nn.functional.mse_loss(forward(x).float(), y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(module.parameters(), clip)
            optimiser.step()
            return loss

        return step

    def _bar(self, epoch: int, epochs: int, batches: int) -> Progress | None:
        if not self.config.progress:
            return None
        return counter(f"{self.model_name} epoch {epoch + 1}/{epochs}", batches, unit="batch")

    # ------------------------------------------------------------------------------------------------ predicting

    def forecast(self, x: Tensor) -> Tensor:
        """The model on a batch of windows already on the device, in eval mode, without gradients."""
        torch = require_torch("forecasting")
        module = self._network()
        module.eval()
        with torch.no_grad():
            return module(x)

    def mean_squared_error(self, windows: DeviceWindows) -> float:
        """Teacher-forced MSE over every window, step and variable (the early-stopping criterion)."""
        torch = require_torch("forecasting")
        total = torch.zeros((), dtype=torch.float64, device=self.device)
        for lo in range(0, len(windows), EVAL_BATCH):
            x, y = windows.gather(torch.arange(lo, min(lo + EVAL_BATCH, len(windows)), device=self.device))
            total += ((self.forecast(x) - y) ** 2).sum(dtype=torch.float64)
        horizon = int(windows.offsets.numel()) - windows.context
        return float(total) / (len(windows) * horizon * int(windows.rows.shape[1]))

    def teacher_forced(self, windows: DeviceWindows) -> np.ndarray:
        """Forecasts ``(windows, horizon, V)`` float32 of every window of a split, in order."""
        torch = require_torch("forecasting")
        parts = []
        for lo in range(0, len(windows), EVAL_BATCH):
            x, _ = windows.gather(torch.arange(lo, min(lo + EVAL_BATCH, len(windows)), device=self.device))
            parts.append(self.forecast(x))
        return torch.cat(parts).float().cpu().numpy()

    def rollout(self, context: np.ndarray, steps: int, block: int) -> np.ndarray:
        """Block-autoregressive rollout of every IC together: ``(ICs, context, V)`` true rows -> ``(ICs, steps, V)``.

        Same recursion as :func:`tgbhub.baselines.trajectory.rollout`, on the device: predict ``block`` rows,
        append them, drop the oldest ``block``, repeat; the last block is truncated.
        """
        torch = require_torch("forecasting")
        window = torch.as_tensor(context, dtype=torch.float32, device=self.device)
        out = torch.empty((window.shape[0], steps, window.shape[2]), dtype=torch.float32, device=self.device)
        done = 0
        while done < steps:
            predicted = self.forecast(window)[:, :block].float()
            take = min(block, steps - done)
            out[:, done:done + take] = predicted[:, :take]
            window = torch.cat([window[:, block:], predicted], dim=1)
            done += take
        return out.cpu().numpy()

    def predict(self, dataset: TrajectoryDataset, task: Mapping[str, Any], split: str) -> RolloutSubmission:
        """The rollout submission of ``split`` with its teacher-forced forecasts attached (``.forecasts``).

        Raises:
            MissingExtraError: without torch.
            InvalidNameError: before :meth:`fit` or :meth:`restore` (no model yet).
        """
        torch = require_torch("forecasting")
        if self.module is None:
            raise InvalidNameError(f"{self.model_name} has no weights yet: call fit(dataset, task) or load a "
                                   "checkpoint first")
        context, block = int(task["context"]), int(task.get("rollout", {}).get("block", task["horizon"]))
        trajectories = dataset.trajectories(split)
        steps = trajectories.shape[1] - context
        rolled = self.rollout(trajectories[:, :context], steps, block)
        ics = dataset.split_ics(split)
        columns = RolloutSubmission(ic=np.repeat(np.arange(ics.start, ics.stop, dtype=np.int64), steps),
                                    t=np.tile(np.arange(context, context + steps, dtype=np.int64), len(ics)),
                                    values=rolled.reshape(-1, rolled.shape[2]))
        columns.forecasts = self.teacher_forced(self._windows(torch, dataset, task, split))
        return columns

    # ---------------------------------------------------------------------------------------------- checkpoints

    def state(self) -> dict[str, dict[str, Tensor]]:
        """The weights as CPU tensors (buffers included, e.g. BatchNorm statistics)."""
        return {"weights": {k: v.detach().cpu() for k, v in self._network().state_dict().items()}}

    def restore(self, state: Mapping[str, Any], dataset: TrajectoryDataset, task: Mapping[str, Any]) -> None:
        """Rebuild the model for ``dataset`` on the configured device and load ``state``'s weights."""
        require_torch(f"loading {self.model_name}")
        self.device = resolve_device(self.config.device)
        self.module = self._build(dataset.num_nodes).to(self.device)
        self.module.load_state_dict(state["weights"])

    def _network(self) -> torch.nn.Module:
        """The network :meth:`fit` or :meth:`restore` built."""
        if self.module is None:
            raise NotFittedError(f"{self.model_name} has no network yet: call fit(...) or restore(...) first")
        return self.module

    def _device(self) -> torch.device:
        """The device :meth:`fit` or :meth:`restore` resolved."""
        if self.device is None:
            raise NotFittedError(f"{self.model_name} has no device yet: call fit(...) or restore(...) first")
        return self.device


def _register(name: str) -> None:
    register_trainer(TASK_TYPE, name)(lambda config: ChaosNetTrainer(name, config))


for _name in MODEL_NAMES:
    _register(_name)
