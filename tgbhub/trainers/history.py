"""What the trainers of temporal-graph networks share: a network with a history (TGN's memory and neighbour lists,
GC-LSTM's hidden state) streamed through the data unit by unit (a snapshot, a batch of events), and the history
states kept where prediction may resume.

``fit`` keeps the history state at a few boundaries of the best epoch (a unit index -> state; 0 is always the
empty history). :meth:`HistoryTrainer.predict` then resumes from the latest kept boundary at or before the split's
first unit, observes the units in between without scoring them, and scores the split unit by unit. A subclass says
what a unit is: how to observe a range of them (:meth:`HistoryTrainer._observe`) and how to score a split
(:meth:`HistoryTrainer._predict`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

from tgbhub.errors import IntegrityError, InvalidNameError, NotFittedError
from tgbhub.trainers.base import EpochPace, FitReport, TrainConfig
from tgbhub.trainers.resume import (
    Deadline,
    FitState,
    global_rng_state,
    load_fit_state,
    run_identity,
    save_fit_state,
    set_global_rng_state,
)
from tgbhub.trainers.torchutil import isolated_rng, require_torch, resolve_device

if TYPE_CHECKING:
    import torch
    from torch import Tensor

    from tgbhub.baselines.registry import Column
    from tgbhub.data import TemporalGraphDataset

#: a network's history state at a boundary: its own record of tensors and ints (``network.history()``)
History = dict[str, Any]
#: the best epoch's weights (CPU copies) and the history states kept for prediction
Best = tuple[dict[str, "Tensor"], dict[int, History | None]]


class HistoryFitState(FitState, total=False):
    """A history trainer's fit state: :class:`~tgbhub.trainers.resume.FitState` with the best epoch's kept history
    states and the protocol's own book-keeping (a best train loss, the name of the validation metric)."""

    boundaries: list[dict[str, Any]]
    book: dict[str, Any]


class EpochLoop:
    """The epochs of one fit of a history trainer, resumable: with ``TrainConfig.state_file`` it starts where a
    saved state left off and saves its state after every epoch; with ``TrainConfig.time_limit`` it stops at the
    epoch boundary before an epoch that would end later (the report then says ``finished=False``). On CPU a resumed
    fit is bit-identical to one that never stopped.

    The protocol's loop reads :meth:`epochs`, records its best epoch in :attr:`best`, counts :attr:`stale` epochs
    and keeps what else it needs in :attr:`book`; it ends each epoch with :meth:`end_epoch` and the fit with
    :meth:`finish`.
    """

    def __init__(self, trainer: HistoryTrainer, dataset: TemporalGraphDataset, settings: Mapping[str, Any],
                 report: FitReport, optimiser: torch.optim.Optimizer, generator: torch.Generator | None) -> None:
        self.trainer, self.settings, self.report = trainer, settings, report
        self.optimiser, self.generator = optimiser, generator
        self.identity = run_identity(trainer.model_name, settings, trainer.config.seed, dataset)
        self.deadline = Deadline(trainer.config.time_limit, time.perf_counter, trainer.started)
        self.best: Best | None = None
        self.stale = 0
        self.book: dict[str, Any] = {}
        self.first = 0
        self.earlier_seconds = 0.0
        self._resume()

    def epochs(self) -> range:
        """The epochs this call runs (none for a fit a saved state says had ended)."""
        return range(self.first, int(self.settings["epochs"]))

    def end_epoch(self, epoch: int, ended: bool) -> bool:
        """Close ``epoch`` (``ended``: the protocol stops after it); save the state; whether to run another."""
        report = self.report
        report.epochs_run = epoch + 1
        report.finished = ended or self.deadline.allows(max(h["seconds"] for h in report.history))
        self._save(epoch + 1, ended)
        return not ended and report.finished

    def finish(self) -> None:
        """Give the trainer the best epoch's weights and history states (when the fit finished: a paused fit keeps
        the last epoch's, to go on from)."""
        trainer = self.trainer
        if self.report.finished and self.best is not None:
            trainer._network().load_state_dict(self.best[0])
            trainer._boundaries = {0: None, **self.best[1]}
        trainer._position = None

    def _save(self, next_epoch: int, ended: bool) -> None:
        path = self.trainer.config.state_file
        if path is None:
            return
        report, best = self.report, self.best
        kept = [] if best is None else [{"t": int(t), "history": h} for t, h in sorted(best[1].items())
                                        if h is not None]
        generator = self.generator.get_state() if self.generator is not None else None
        state: HistoryFitState = {
            "identity": self.identity, "next_epoch": next_epoch, "ended": ended,
            "weights": {k: v.detach().cpu() for k, v in self.trainer._network().state_dict().items()},
            "optimiser": self.optimiser.state_dict(), "schedule": {},
            "generator": generator if generator is not None else require_torch("saving a fit").empty(0),
            "rng": global_rng_state(self.trainer.device),
            "stopper": {"best": report.best_val, "best_epoch": report.best_epoch, "stale": self.stale,
                        "best_state": None if best is None else best[0]},
            "history": report.history,
            "train_seconds": self.earlier_seconds + time.perf_counter() - self.trainer.started,
            "boundaries": kept,
            "book": {**self.book, "val_metric": report.val_metric, "higher_is_better": report.higher_is_better}}
        save_fit_state(path, state)

    def _resume(self) -> None:
        path = self.trainer.config.state_file
        if path is None:
            return
        saved = load_fit_state(path, self.identity)
        if saved is None:
            return
        state: HistoryFitState = saved  # type: ignore[assignment]  # the keys a history trainer adds are optional
        self.trainer._network().load_state_dict(state["weights"])
        self.optimiser.load_state_dict(state["optimiser"])
        if self.generator is not None:
            self.generator.set_state(state["generator"])
        set_global_rng_state(state["rng"], self.trainer.device)
        stopper, report = state["stopper"], self.report
        report.best_val, report.best_epoch, self.stale = float(stopper["best"]), int(stopper["best_epoch"]), \
            int(stopper["stale"])
        if stopper["best_state"] is not None:
            self.best = (stopper["best_state"], {int(b["t"]): dict(b["history"]) for b in state.get("boundaries", [])})
        self.book = dict(state.get("book", {}))
        report.val_metric = str(self.book.pop("val_metric", report.val_metric))
        report.higher_is_better = bool(self.book.pop("higher_is_better", report.higher_is_better))
        report.history = list(state["history"])
        report.epochs_run = report.resumed_at = int(state["next_epoch"])
        self.earlier_seconds = float(state["train_seconds"])
        self.first = int(self.settings["epochs"]) if state["ended"] else int(state["next_epoch"])


class HistoryTrainer:
    """The state and the replay every history-streaming trainer shares. The constructor does no I/O.

    A subclass sets ``model_name`` and ``task_type`` and implements :meth:`_check`, :meth:`_prepare` (resolve the
    settings, put the data on the device, build :attr:`module`), :meth:`_new_report`, :meth:`_epochs`,
    :meth:`_observe` and :meth:`_predict`.
    """

    model_name: str
    task_type: str
    #: takes ``TrainConfig.state_file`` and ``time_limit`` (:class:`EpochLoop`)
    resumable = True

    def __init__(self, config: TrainConfig) -> None:
        self.config = config
        #: when the running fit started (its time limit counts from there)
        self.started = 0.0
        #: the network, built by ``fit`` or :meth:`restore`
        self.module: Any = None
        self.device: torch.device | None = None
        self._digest: str | None = None
        #: history states kept for prediction: first unit not yet observed -> state (``None``: empty history)
        self._boundaries: dict[int, History | None] = {0: None}
        #: the unit the module's live history is at (``None``: not a usable position, seek a boundary)
        self._position: int | None = None
        #: the running fit's time estimate (:meth:`_start_pace`); its train passes report each unit to it
        self.pace: EpochPace | None = None

    # ------------------------------------------------------------------------------------------------ subclasses

    def _check(self, dataset: TemporalGraphDataset, task: Mapping[str, Any]) -> None:
        """Raises UnsupportedTaskError for a task or dataset this trainer does not serve."""
        raise NotImplementedError

    def _prepare(self, dataset: TemporalGraphDataset, task: Mapping[str, Any]) -> dict[str, Any]:
        """Resolve the settings, put ``dataset`` on the device and build the network there; returns the settings."""
        raise NotImplementedError

    def _new_report(self) -> FitReport:
        """An empty report naming the device and the validation metric the epochs select by."""
        raise NotImplementedError

    def _epochs(self, dataset: TemporalGraphDataset, task: Mapping[str, Any], settings: Mapping[str, Any],
                report: FitReport) -> float:
        """Train epoch by epoch into ``report`` through an :class:`EpochLoop`; leave the best epoch's weights and
        history boundaries in place. Returns the seconds earlier calls of a resumed fit trained."""
        raise NotImplementedError

    def _observe(self, start: int, stop: int) -> None:
        """Feed units ``[start, stop)`` into the module's history without scoring them (gradients off)."""
        raise NotImplementedError

    def _predict(self, torch: ModuleType, dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str
                 ) -> dict[str, Column]:
        """Score ``split`` unit by unit from the history before each unit (the data already on the device)."""
        raise NotImplementedError

    # -------------------------------------------------------------------------------------------------- shared

    def _start_pace(self, settings: Mapping[str, Any], report: FitReport, units: int, first_epoch: int = 0
                    ) -> EpochPace:
        """The fit's time estimate (:class:`~tgbhub.trainers.base.EpochPace`) over ``units`` train units an epoch,
        kept in :attr:`pace` for the train passes to report to; made right before the first epoch starts."""
        sync = None
        if self.device is not None and self.device.type == "cuda":
            sync = require_torch(f"training {self.model_name}").cuda.synchronize
        self.pace = EpochPace(self.model_name, self.config, epochs=settings["epochs"], patience=settings["patience"],
                              batches=units, report=report, first_epoch=first_epoch, resumable=self.resumable,
                              sync=sync)
        return self.pace

    def _network(self) -> Any:
        """The network ``fit`` or :meth:`restore` built.

        Raises:
            NotFittedError: before either.
        """
        if self.module is None:
            raise NotFittedError(f"{self.model_name} has no network yet: call fit(...) or restore(...) first")
        return self.module

    def _seek(self, target: int) -> History:
        """Bring the module's history (in eval mode) to "every unit before ``target`` observed"; returns that state.
        Resumes from the live history when it is not past ``target``, else from the latest kept boundary at or
        before it, and observes the units in between without scoring them."""
        module = self._network()
        # first: TGN's memory flushes its pending messages when it leaves training mode, and without gradients (as
        # in TGB's @torch.no_grad() test loop): a flush recorded by autograd would leave the memory tied to this
        # epoch's weights, and the next epoch's first step would back-propagate into it
        with require_torch(f"evaluating {self.model_name}").no_grad():
            module.eval()
        position = self._position
        if position is None or position > target:
            position = max(b for b in self._boundaries if b <= target)
            state = self._boundaries[position]
            if state is None:
                module.reset_history()
            else:
                module.load_history(state)
        self._observe(position, target)
        self._position = target
        return module.history()

    def fit(self, dataset: TemporalGraphDataset, task: Mapping[str, Any]) -> FitReport:
        """Train on the train split by the trainer's protocol, select the epoch with the best validation score, keep
        its weights and its history states at the start and end of val. ``history`` has the train loss, the
        validation score and the seconds of every epoch.

        Raises:
            MissingExtraError: without torch (the ``train`` extra).
            InvalidNameError: for an invalid hyper-parameter or an unusable device; if the dataset lacks a split the
                protocol needs.
            UnsupportedTaskError: for a task or dataset this trainer does not serve.
        """
        require_torch(f"training {self.model_name}")
        self.started = time.perf_counter()
        with isolated_rng(self.config.seed, resolve_device(self.config.device)):
            settings = self._prepare(dataset, task)
            report = self._new_report()
            earlier = self._epochs(dataset, task, settings, report)
        report.train_seconds = earlier + time.perf_counter() - self.started
        return report

    def predict(self, dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str) -> dict[str, Column]:
        """The submission for ``split`` in the task's schema, scored from the history the best epoch left.

        Raises:
            MissingExtraError: without torch.
            InvalidNameError: before ``fit`` or :meth:`restore` (no weights yet); for an unknown split.
            IntegrityError: for a dataset other than the one the model was fitted on (its content digest differs).
            UnsupportedTaskError: for a task or dataset this trainer does not serve.
        """
        torch = require_torch(f"predicting with {self.model_name}")
        if self.module is None:
            raise InvalidNameError(f"{self.model_name} has no weights yet: call fit(dataset, task) or load a "
                                   "checkpoint first")
        self._check(dataset, task)
        if dataset.digest != self._digest:
            # the kept history states are states of the data the model was fitted on
            raise IntegrityError(f"{self.model_name} predicting {dataset.name}@{dataset.version}",
                                 f"the data it was fitted on (content digest {self._digest})",
                                 f"content digest {dataset.digest}",
                                 "Predict on the dataset the model was fitted on, or fit it on this one")
        if split not in dataset.splits:
            raise InvalidNameError(f"{dataset.name}@{dataset.version} has no split {split!r}; its splits are "
                                   f"{', '.join(dataset.splits)}")
        with isolated_rng(self.config.seed, self.device):
            return self._predict(torch, dataset, task, split)

    def state(self) -> dict[str, Any]:
        """The weights and the kept history states (CPU tensors and ints): what :meth:`predict` resumes from."""
        def cpu(state: History) -> History:
            return {k: (v.detach().cpu() if hasattr(v, "detach") else v) for k, v in state.items()}

        return {"weights": {k: v.detach().cpu() for k, v in self._network().state_dict().items()},
                "boundaries": [{"t": int(t), "history": cpu(s)} for t, s in sorted(self._boundaries.items())
                               if s is not None]}

    def restore(self, state: Mapping[str, Any], dataset: TemporalGraphDataset, task: Mapping[str, Any]) -> None:
        """Rebuild the network for ``dataset`` on the configured device and load ``state``.

        Raises:
            MissingExtraError: without torch.
            InvalidNameError: for an invalid hyper-parameter or device.
            UnsupportedTaskError: for a task or dataset this trainer does not serve.
        """
        require_torch(f"loading {self.model_name}")
        self._prepare(dataset, task)
        self._network().load_state_dict(state["weights"])
        self._boundaries = {0: None, **{int(b["t"]): dict(b["history"]) for b in state["boundaries"]}}
        self._position = None
