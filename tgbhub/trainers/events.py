"""TGN on continuous-time link datasets (TGB's ``tgbl-*`` and any temporal graph whose splits are rows), trained and
evaluated by TGB's protocol (its ``examples/linkproppred/*/tgn.py``; docs/baselines.md):

- the events stream in time order in batches of ``batch_size`` (200) rows; each split's batches start at the split's
  first row, as TGB's ``TemporalDataLoader`` over each split cuts them;
- training: per batch, one negative per positive (same source, a destination drawn uniformly from
  ``[min dst, max dst]`` of the whole dataset, TGB's), embeddings of every node of the batch from the memory and
  neighbours of the events *before* the batch, ``BCEWithLogitsLoss`` on the decoder's scores; then the batch's events
  update the memory and the
  neighbour lists, the optimiser steps (Adam, lr 1e-4) and the memory is detached (truncated back-propagation);
- every epoch resets the history, trains on the train split, then streams the val split in evaluation mode: each
  batch's queries are ranked against their pre-generated negatives (the ranking task's own, as the evaluator grades
  them) from the history before the batch, and only then does the batch enter the history;
- evaluation embeds a whole batch of queries (positives and every negative) at once; a node attends over its own
  most recent neighbours only, so this is exactly what TGB's loop over single queries computes;
- model selection and stopping: the epoch with the best validation MRR; stop after ``patience`` (5) epochs without
  a relative improvement above 1e-6, or after ``epochs`` (50), as TGB's ``EarlyStopMonitor``.

TGN is TGB's: memory, time and embedding width 100, the 10 most recent neighbours, a two-head ``TransformerConv``
over the memory (no node features) with the relative-time encoding and the event's edge features as edge attributes,
and TGB's ``LinkPredictor``. It is the same module as T-GRAB's snapshot TGN (:class:`~tgbhub.trainers.graph_models.
TGNNet`), given the dataset's edge features as messages, no node features and TGB's decoder.

TGN's scores are what TGB's ``LinkPredictor`` returns, sigmoid outputs; TGB's ``tgn.py`` ranks them and hands them
to ``BCEWithLogitsLoss``, which applies a second sigmoid. Both are kept as published: with the same initial weights
and negatives, the first batches' losses equal TGB's to the printed digit (checked against TGB's own modules). For
GraphMixer they are logits, as TGM's.

How ``predict`` replays history, as :mod:`tgbhub.trainers.snapshot` does: of the best epoch, ``fit`` keeps the
history state at the start of val and at its end; ``predict(split)`` resumes from the latest kept state at or
before the split's first row (the empty history at row 0 always counts), streams any rows in between in batches
without scoring them, then scores and observes the split's batches. So ``predict("test")`` continues exactly where
the best epoch's validation stopped.

A query of the negatives file is ``(t, src, dst)``; it is scored in the batch of the first row of its split with that
key (a repeated edge has one query, as TGB's negatives dictionaries have one key).

``graphmixer`` (:class:`GraphMixerTrainer`, the network in :mod:`tgbhub.trainers.graphmixer`) trains by the same
protocol with TGM's GraphMixer sizes and learning rate (2e-4); it has no memory, so each node of a query is embedded at
the query's time, negatives included. Continuous time only.

``tgn`` on a ranking task is :class:`TGNRankingTrainer`: TGB's protocol here on a dataset with continuous time,
T-GRAB's (:class:`~tgbhub.trainers.snapshot.SnapshotTrainer`) on one with snapshots. A task type says nothing about
time, so the trainer is bound to its protocol by the dataset (:func:`tgbhub.trainers.make_trainer` does it when
given the dataset, ``fit`` and ``restore`` otherwise).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from tgbhub.errors import IntegrityError, InvalidNameError, NotFittedError, UnsupportedTaskError
from tgbhub.progress import Steps
from tgbhub.trainers.base import FitReport, TrainConfig, checked_hparams, register_trainer
from tgbhub.trainers.history import EpochLoop, HistoryTrainer
from tgbhub.trainers.snapshot import RankingQueries, SnapshotTrainer
from tgbhub.trainers.torchutil import require_torch, resolve_device

if TYPE_CHECKING:
    import torch

    from tgbhub.baselines.registry import Column
    from tgbhub.data import TemporalGraphDataset
    from tgbhub.data.temporal_graph import Negatives
    from tgbhub.trainers.graph_models import EventRows, TGNNet
    from tgbhub.trainers.graphmixer import GraphMixerNet

    #: a network the event protocol trains: TGN or GraphMixer (both answer pair_logits, query_logits, observe_events,
    #: after_step and the history calls)
    EventNetwork = TGNNet | GraphMixerNet

TASK_TYPE = "one-vs-many-ranking"
MODEL_NAME = "tgn"
#: TGB's training protocol (``tgn.py``: NUM_EPOCH, PATIENCE, TOLERANCE, LR, BATCH_SIZE)
PROTOCOL = {"lr": 1e-4, "epochs": 50, "patience": 5, "tolerance": 1e-6, "batch_size": 200}
#: TGB's TGN sizes (MEM_DIM, TIME_DIM, EMB_DIM, NUM_NEIGHBORS; two attention heads, attention dropout 0.1)
DEFAULTS: dict[str, Any] = {"memory_dim": 100, "time_dim": 100, "embedding_dim": 100, "heads": 2, "neighbors": 10,
                            "dropout": 0.1}
GRAPHMIXER = "graphmixer"
#: GraphMixer's sizes on tgbl-* as TGM's example sets them (--n-nbrs, --time-dim, --embed-dim, --node-dim,
#: --time-gap, two mixer layers, --dropout)
GRAPHMIXER_DEFAULTS: dict[str, Any] = {"neighbors": 20, "time_dim": 100, "embedding_dim": 128, "node_dim": 100,
                                       "time_gap": 2000, "layers": 2, "dropout": 0.1}
#: TGB's protocol with TGM's GraphMixer learning rate (its --lr)
GRAPHMIXER_PROTOCOL = {**PROTOCOL, "lr": 2e-4}
#: training steps between two updates of the progress bar's running loss (each update reads the loss back)
PROGRESS_EVERY = 16


def _graph_models() -> ModuleType:
    from tgbhub.trainers import graph_models  # imports torch and torch-geometric: only when a model is built
    return graph_models


def resolve_sizes(hparams: Mapping[str, Any]) -> dict[str, Any]:
    """TGB's TGN sizes overridden by ``hparams``.

    Raises:
        InvalidNameError: for an unknown hyper-parameter, a size that is not an integer in [1, MAX_SIZE], a dropout
            outside [0, 1), or an ``embedding_dim`` that ``heads`` does not divide.
    """
    sizes = checked_hparams(MODEL_NAME, hparams, DEFAULTS)
    if sizes["embedding_dim"] % sizes["heads"]:
        raise InvalidNameError(f"tgn: embedding_dim {sizes['embedding_dim']} is not divisible by heads "
                               f"{sizes['heads']}; pick a multiple of heads")
    return sizes


def batch_grid(dataset: TemporalGraphDataset, batch_size: int) -> list[int]:
    """Row boundaries of the batches every pass streams: each stretch between split boundaries (and the dataset's
    ends) cut into ``batch_size`` rows from its start, as TGB's loaders cut each split."""
    n = len(dataset.t)
    cuts = sorted({0, n, *(int(b) for bounds in dataset.splits.values() for b in bounds)})
    grid = [b for lo, hi in zip(cuts, cuts[1:], strict=False) for b in range(lo, hi, batch_size)]
    return [*grid, n]


def query_rows(dataset: TemporalGraphDataset, negatives: Negatives, lo: int, hi: int) -> np.ndarray:
    """For each query ``(t, src, dst)`` of ``negatives``, the first row of ``[lo, hi)`` with that key.

    Raises:
        IntegrityError: if a query is not an event of the split (negatives of another dataset or split).
    """
    t, src, dst = (np.asarray(c)[lo:hi] for c in (dataset.t, dataset.src, dataset.dst))
    q_t, q_src, q_dst = (np.asarray(c) for c in (negatives.t, negatives.src, negatives.dst))
    if len(q_t) == hi - lo and np.array_equal(q_t, t) and np.array_equal(q_src, src) and np.array_equal(q_dst, dst):
        return np.arange(lo, hi, dtype=np.int64)  # one query per row in row order: TGB's releases without repeats
    # dense codes of times and pairs over rows and queries together, so one int64 key per event cannot overflow
    _, t_code = np.unique(np.concatenate([t, q_t]), return_inverse=True)
    n = int(dataset.num_nodes)
    pairs = np.concatenate([src.astype(np.int64) * n + dst, q_src.astype(np.int64) * n + q_dst])
    _, p_code = np.unique(pairs, return_inverse=True)
    key = t_code.astype(np.int64) * (int(p_code.max(initial=0)) + 1) + p_code
    keys, first = np.unique(key[:hi - lo], return_index=True)
    wanted = key[hi - lo:]
    found = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
    missing = np.flatnonzero(keys[found] != wanted) if len(keys) else np.arange(len(wanted))
    if len(missing):
        i = int(missing[0])
        raise IntegrityError(f"negatives file {negatives.file!r} of {dataset.name}@{dataset.version}",
                             f"queries that are events of split {negatives.split!r} (rows {lo}..{hi})",
                             f"{len(missing)} that are not, first query {i}: (t={q_t[i]}, src={q_src[i]}, "
                             f"dst={q_dst[i]})", "Load the dataset with tgbhub.load_dataset so that its negatives "
                             "and rows come from the same verified version")
    return lo + first[found]


class EventQueries(RankingQueries):
    """A ranking task's queries on one split of a continuous-time dataset: each query's positive and its
    pre-generated negatives are scored in the batch of its row, from the history before that batch."""

    def __init__(self, torch: ModuleType, dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str,
                 device: torch.device | None) -> None:
        negatives = dataset.negatives(split, task=task.get("name"))
        lo, hi = dataset.splits[split]
        rows = query_rows(dataset, negatives, int(lo), int(hi))
        order = np.argsort(rows, kind="stable")  # queries by row
        self.rows = rows[order]
        # int32 as stored (half the device memory of int64 on a large split); a batch's slice is widened to index
        super().__init__(torch, negatives, order, device, np.int32)
        self.t = torch.as_tensor(np.asarray(dataset.t)[self.rows].astype(np.int64), device=device)

    def within(self, lo: int, hi: int) -> slice:
        """The (sorted) queries whose row is in ``[lo, hi)``."""
        a, b = np.searchsorted(self.rows, [lo, hi])
        return slice(int(a), int(b))

    def collect(self, module: EventNetwork, queries: slice) -> None:
        """Score ``queries`` from the module's current history, at their events' times; add their reciprocal
        ranks."""
        pos, negs = module.query_logits(self.src[queries], self.dst[queries], self.neg[queries].long(),
                                        self.valid[queries], self.t[queries])
        self._add(pos, negs, self.valid[queries])


class EventTrainer(HistoryTrainer):
    """TGN trained and evaluated by TGB's protocol on a continuous-time dataset; a unit of history is an event row,
    observed in the batches of :func:`batch_grid`. The constructor does no I/O.

    A subclass trains another network by the same protocol: it sets ``model_name``, ``protocol`` and ``described``
    and overrides :meth:`_sizes` and :meth:`_build`."""

    model_name = MODEL_NAME
    task_type = TASK_TYPE
    #: the protocol's defaults (:data:`PROTOCOL`)
    protocol: Mapping[str, Any] = PROTOCOL
    #: what :meth:`hyperparameters` says of the network beside its sizes
    described: Mapping[str, str] = {"node_features": "none", "decoder": "tgb link predictor"}

    def __init__(self, config: TrainConfig) -> None:
        super().__init__(config)
        #: the events of the dataset on the device, that dataset, and the batch boundaries of every pass
        self.events: EventRows | None = None
        self._events_of: TemporalGraphDataset | None = None
        self._grid: list[int] = [0]

    # ------------------------------------------------------------------------------------------------ settings

    def hyperparameters(self) -> dict[str, Any]:
        """TGB's sizes (overridden by ``config.hparams``) and protocol actually used.

        Raises:
            InvalidNameError: for an unknown or invalid hyper-parameter, or ``compile``/``amp`` (not part of TGB's
                protocol, not offered here).
        """
        c, protocol = self.config, self.protocol
        if c.compile or c.amp:
            raise InvalidNameError(f"{self.model_name} does not offer compile or amp; leave both off")
        return {"protocol": "tgb events", "model": self._sizes(), **self.described,
                "lr": c.lr if c.lr is not None else protocol["lr"],
                "optimiser": "adam", "epochs": c.epochs or protocol["epochs"],
                "patience": c.patience or protocol["patience"], "patience_on": "val mrr",
                "tolerance": protocol["tolerance"], "selection": "best validation mrr",
                "batch_size": c.batch_size or protocol["batch_size"],
                "loss": "bce with logits on the decoder's scores, one negative per positive: a uniform destination "
                        "in [min dst, max dst]",
                "limit_batches": c.limit_batches}

    def _sizes(self) -> dict[str, Any]:
        """The network's sizes: the defaults overridden by ``config.hparams``.

        Raises:
            InvalidNameError: for an unknown or invalid hyper-parameter.
        """
        return resolve_sizes(self.config.hparams)

    def _build(self, num_nodes: int, sizes: dict[str, Any]) -> EventNetwork:
        """The network, on the CPU."""
        return _graph_models().build_tgb_tgn(num_nodes, sizes, self._events())

    def _check(self, dataset: TemporalGraphDataset, task: Mapping[str, Any]) -> None:
        if str(task.get("type")) != self.task_type:
            raise UnsupportedTaskError(f"this {self.model_name} trainer answers {self.task_type} tasks, not "
                                       f"{task.get('type')!r} (task {task.get('name')!r}); make one with "
                                       "tgbhub.trainers.make_trainer(task, model, config)")
        if dataset.snapshot_splits is not None:
            raise UnsupportedTaskError(f"{dataset.name}@{dataset.version} has snapshots, and {self.model_name} trains "
                                       "by TGB's event protocol, for continuous time. Train it with "
                                       "tgbhub.trainers.make_trainer(task, 'tgn', config, dataset=dataset) (or "
                                       "`tgbhub train tgn`), which picks T-GRAB's snapshot protocol there")
        t = np.asarray(dataset.t)
        if t.dtype.kind == "f" and len(t) and not np.array_equal(t, np.floor(t)):
            first = int(np.flatnonzero(t != np.floor(t))[0])
            unit = dataset.manifest.graph.get("time_unit")
            raise UnsupportedTaskError(f"{self.model_name} keeps event times as integers (as TGN's memory does), and "
                                       f"{dataset.name}@{dataset.version} has fractional times (row {first}: "
                                       f"t={t[first]}); use a dataset whose times are whole "
                                       f"{f'{unit}s' if unit else 'time units'}")

    def _prepare(self, dataset: TemporalGraphDataset, task: Mapping[str, Any]) -> dict[str, Any]:
        """Resolve the settings, put the dataset's events on the device and build the network there."""
        self._check(dataset, task)
        self._digest = dataset.digest
        settings = self.hyperparameters()
        self.device = resolve_device(self.config.device)
        self._load_events(dataset, settings["batch_size"])
        self.module = self._build(dataset.num_nodes, settings["model"])
        self.module.to(self.device)
        self.module.reset_history()
        self._boundaries, self._position = {0: None}, None
        return settings

    def _load_events(self, dataset: TemporalGraphDataset, batch_size: int) -> None:
        if self._events_of is dataset:
            return
        self.events = _graph_models().EventRows(np.asarray(dataset.src), np.asarray(dataset.dst), np.asarray(dataset.t),
                                                dataset.columns.get("edge_feat"), self.device)
        self._grid = batch_grid(dataset, batch_size)
        self._events_of = dataset
        if self.module is not None:
            self.module.edges = self.events

    def _events(self) -> EventRows:
        if self.events is None:
            raise NotFittedError(f"{self.model_name} has no data on the device yet: call fit(...) or restore(...) "
                                 "first")
        return self.events

    def _batches(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """The grid's batches covering ``[lo, hi)`` (both are grid points)."""
        points = [b for b in self._grid if lo <= b <= hi]
        return list(zip(points, points[1:], strict=False))

    # -------------------------------------------------------------------------------------------------- fitting

    def _new_report(self) -> FitReport:
        """An empty report: validation MRR, higher is better."""
        return FitReport(device=str(self.device), val_metric="mrr", higher_is_better=True)

    def _epochs(self, dataset: TemporalGraphDataset, task: Mapping[str, Any], settings: Mapping[str, Any],
                report: FitReport) -> float:
        """TGB's protocol: train on the train split, select the epoch with the best validation MRR, keep its weights
        and its history states at the start and end of val. ``history`` has ``train_loss`` (the mean batch loss),
        ``val_mrr``, and ``seconds`` per epoch split into ``train_seconds`` and ``val_seconds``."""
        torch = require_torch(f"training {self.model_name}")
        module = self._network()
        optimiser = torch.optim.Adam(module.parameters(), lr=settings["lr"])
        train, val = dataset.split("train").rows, dataset.split("val").rows
        assert train is not None and val is not None  # a dataset's own split always has its rows
        batches = self._batches(*train)
        if settings["limit_batches"]:
            batches = batches[:settings["limit_batches"]]
        dst = np.asarray(dataset.dst)
        # TGB draws training negatives from the whole dataset's destination range
        dst_range = (int(dst.min()), int(dst.max()) + 1) if len(dst) else (0, 1)
        generator = torch.Generator(device=self.device).manual_seed(self.config.seed)
        loop = EpochLoop(self, dataset, settings, report, optimiser, generator)
        queries = EventQueries(torch, dataset, task, "val", self.device)  # on the device once, reset every epoch
        self._start_pace(settings, report, len(batches), first_epoch=loop.first)
        for epoch in loop.epochs():
            tick = time.perf_counter()
            loss = self._train_epoch(torch, optimiser, batches, train[0], dst_range, generator, epoch,
                                     settings["epochs"])
            trained = time.perf_counter()
            queries.reset()
            entry = self._seek(val[0])
            self._stream(torch, queries, *val)
            _, score = queries.metric()
            done = time.perf_counter()
            report.history.append({"epoch": epoch, "train_loss": loss, "val_mrr": score, "seconds": done - tick,
                                   "train_seconds": trained - tick, "val_seconds": done - trained})
            # TGB's EarlyStopMonitor: an improvement is a relative gain above the tolerance
            if report.best_epoch < 0 or score - report.best_val > settings["tolerance"] * abs(report.best_val):
                report.best_val, report.best_epoch, loop.stale = score, epoch, 0
                loop.best = ({k: v.detach().to("cpu", copy=True) for k, v in module.state_dict().items()},
                             {val[0]: entry, val[1]: module.history()})
            else:
                loop.stale += 1
            ended = not math.isfinite(loss) or loop.stale >= settings["patience"] or epoch + 1 == settings["epochs"]
            if not loop.end_epoch(epoch, ended):
                break
        loop.finish()
        return loop.earlier_seconds

    def _train_epoch(self, torch: ModuleType, optimiser: torch.optim.Optimizer, batches: list[tuple[int, int]],
                     start: int, dst_range: tuple[int, int], generator: torch.Generator, epoch: int, epochs: int
                     ) -> float:
        """One pass of TGB's training loop over ``batches`` from an empty history; the mean batch loss."""
        module, events = self._network(), self._events()
        module.train()
        module.reset_history()
        with torch.no_grad():
            for lo, hi in self._batches(0, start):  # a train split that does not start at row 0: its past is history
                module.observe_events(*events.batch(lo, hi))
        bce = torch.nn.functional.binary_cross_entropy_with_logits
        bar = Steps(f"{self.model_name} epoch {epoch + 1}/{epochs}", len(batches)) if self.config.progress else None
        total = torch.zeros((), dtype=torch.float64, device=self.device)
        label = "loss -"
        for step, (lo, hi) in enumerate(batches, start=1):
            src, dst, t, msg = events.batch(lo, hi)
            neg = torch.randint(*dst_range, src.shape, device=src.device, generator=generator)
            pos_logit, neg_logit = module.pair_logits(src, dst, neg, t)
            loss = bce(pos_logit, torch.ones_like(pos_logit)) + bce(neg_logit, torch.zeros_like(neg_logit))
            module.observe_events(src, dst, t, msg)  # before backward, as TGB's: the memory update is in the step
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            module.after_step()
            total += loss.detach()
            if self.pace is not None:
                self.pace.batch(epoch, step)
            if bar is not None:
                if step % PROGRESS_EVERY == 0 or step == len(batches):
                    label = f"loss {float(total) / step:.4f}"
                bar.step(label)
        if bar is not None:
            bar.close()
        self._position = batches[-1][1] if batches else start
        return float(total) / max(len(batches), 1)

    # ------------------------------------------------------------------------------------------------ streaming

    def _observe(self, start: int, stop: int) -> None:
        """Observe the batches of rows ``[start, stop)`` without scoring them."""
        torch = require_torch("predicting")
        module, events = self._network(), self._events()
        with torch.no_grad():
            for lo, hi in self._batches(start, stop):
                module.observe_events(*events.batch(lo, hi))

    def _stream(self, torch: ModuleType, queries: EventQueries, start: int, stop: int) -> None:
        """Score each batch of ``[start, stop)``'s queries from the history before the batch, then observe it."""
        module, events = self._network(), self._events()
        with torch.no_grad():
            for lo, hi in self._batches(start, stop):
                chosen = queries.within(lo, hi)
                if chosen.stop > chosen.start:
                    queries.collect(module, chosen)
                module.observe_events(*events.batch(lo, hi))
        self._position = stop

    # ------------------------------------------------------------------------------------------------ predicting

    def _predict(self, torch: ModuleType, dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str
                 ) -> dict[str, Column]:
        """``query, pos_score, neg_scores`` (the decoder's scores), one row per query of the split's negatives
        file."""
        self._load_events(dataset, self.hyperparameters()["batch_size"])
        queries = EventQueries(torch, dataset, task, split, self.device)
        start, stop = (int(b) for b in dataset.splits[split])
        self._seek(start)
        self._stream(torch, queries, start, stop)
        return queries.ranked()


class GraphMixerTrainer(EventTrainer):
    """GraphMixer (:mod:`tgbhub.trainers.graphmixer`) trained and evaluated by TGB's event protocol, as TGN is, with
    TGM's sizes and learning rate. Continuous time only. The constructor does no I/O."""

    model_name = GRAPHMIXER
    protocol = GRAPHMIXER_PROTOCOL
    described = {"node_features": "fixed random (the trainer's seed), as TGM's",
                 "decoder": "two-layer mlp over the pair"}

    def _sizes(self) -> dict[str, Any]:
        return checked_hparams(GRAPHMIXER, self.config.hparams, GRAPHMIXER_DEFAULTS)

    def _build(self, num_nodes: int, sizes: dict[str, Any]) -> EventNetwork:
        from tgbhub.trainers.graphmixer import build_graphmixer  # imports torch: only when a model is built

        return build_graphmixer(num_nodes, sizes, self._events(), seed=self.config.seed)


class TGNRankingTrainer:
    """``tgn`` for a ranking task: TGB's event protocol (:class:`EventTrainer`) on a dataset with continuous time,
    T-GRAB's snapshot protocol (:class:`~tgbhub.trainers.snapshot.SnapshotTrainer`) on one with snapshots; both
    train the same TGN module. The constructor does no I/O; :meth:`bind` picks the protocol for a dataset."""

    model_name = MODEL_NAME
    task_type = TASK_TYPE
    #: both protocols take a state file and a time limit (:class:`~tgbhub.trainers.history.EpochLoop`)
    resumable = True

    def __init__(self, config: TrainConfig) -> None:
        self.config = config
        self.protocol: EventTrainer | SnapshotTrainer | None = None

    def bind(self, dataset: TemporalGraphDataset) -> EventTrainer | SnapshotTrainer:
        """The protocol for ``dataset`` (made once per kind of time): snapshots when it counts them, else events."""
        if dataset.snapshot_splits is None:
            if not isinstance(self.protocol, EventTrainer):
                self.protocol = EventTrainer(self.config)
        elif not isinstance(self.protocol, SnapshotTrainer):
            self.protocol = SnapshotTrainer(self.model_name, self.task_type, self.config)
        return self.protocol

    def hyperparameters(self) -> dict[str, Any]:
        """The bound protocol's settings; before :meth:`bind`, TGB's (a ranking task's own protocol).

        Raises:
            InvalidNameError: as the protocol's ``hyperparameters``.
        """
        return (self.protocol or EventTrainer(self.config)).hyperparameters()

    def fit(self, dataset: TemporalGraphDataset, task: Mapping[str, Any]) -> FitReport:
        """The protocol for ``dataset``'s ``fit``."""
        return self.bind(dataset).fit(dataset, task)

    def predict(self, dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str) -> dict[str, Column]:
        """The fitted protocol's ``predict`` (which refuses a dataset of the other kind of time).

        Raises:
            InvalidNameError: before :meth:`fit` or :meth:`restore`.
        """
        if self.protocol is None:
            raise InvalidNameError(f"{self.model_name} has no weights yet: call fit(dataset, task) or load a "
                                   "checkpoint first")
        return self.protocol.predict(dataset, task, split)

    def state(self) -> dict[str, Any]:
        """The fitted protocol's state, with the protocol's name.

        Raises:
            NotFittedError: before :meth:`fit` or :meth:`restore`.
        """
        if self.protocol is None:
            raise NotFittedError(f"{self.model_name} has no weights yet: call fit(...) or restore(...) first")
        kind = "events" if isinstance(self.protocol, EventTrainer) else "snapshots"
        return {"protocol": kind, **self.protocol.state()}

    def restore(self, state: Mapping[str, Any], dataset: TemporalGraphDataset, task: Mapping[str, Any]) -> None:
        """Bind to ``dataset`` and restore its protocol from ``state``.

        Raises:
            IntegrityError: if ``state`` was saved by the other protocol (a dataset of the other kind of time).
        """
        protocol = self.bind(dataset)
        kind = "events" if isinstance(protocol, EventTrainer) else "snapshots"
        saved = state.get("protocol", kind)
        if saved != kind:
            raise IntegrityError(f"{self.model_name} state for {dataset.name}@{dataset.version}",
                                 f"the {kind} protocol's (the dataset's kind of time)", f"the {saved} protocol's",
                                 "Restore it on the dataset it was trained on")
        protocol.restore(state, dataset, task)


register_trainer(TASK_TYPE, MODEL_NAME)(TGNRankingTrainer)
register_trainer(TASK_TYPE, GRAPHMIXER)(GraphMixerTrainer)
