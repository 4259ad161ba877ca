"""T-GRAB's temporal-graph models, ``gclstm`` and ``tgn``, for ``snapshot-link-prediction`` and
``one-vs-many-ranking`` tasks of any discrete-time temporal graph, trained by T-GRAB's Algorithm 1
(docs/baselines.md).

The protocol (``TrainConfig.epochs``/``lr``/``patience`` override its defaults):

- one snapshot per optimiser step, in time order; the model predicts ``G_t`` from the history before ``t`` and only
  then observes ``G_t`` (GC-LSTM: the state after ``G_{t-1}``; TGN: memory and neighbours of every earlier event);
- loss: BCE on every positive of ``G_t`` plus one negative per positive (same source, uniform random destination,
  redrawn where it hits a positive of ``G_t``); Adam, lr 1e-4;
- each epoch resets the history, runs the train split, then validates by carrying the same history through the
  val snapshots (predict, then observe), as T-GRAB does at test time too;
- model selection: the epoch with the best validation score by the task's metric (mean per-snapshot F1 at the
  task's threshold; MRR for a ranking task). T-GRAB reports the test F1 of that epoch;
- stopping: ``patience`` (100) epochs without a lower training loss (T-GRAB counts patience on the training loss,
  not on validation), at most ``epochs`` (100,000: the scripts' ``--num-epoch``), or as soon as the validation
  score is 1 (no later epoch could be selected; T-GRAB stops when its *test* F1 is 1, which peeks at the test set).

How ``predict`` replays history. A prediction for snapshot ``t`` depends on the model's state after every snapshot
before ``t`` (the recurrent state, or TGN's memory and neighbour lists), which depends on the weights; the state at
the end of ``fit`` is not it. Of the best epoch, ``fit`` therefore keeps the history state at the start of val
(after the train pass) and at its end (the start of test), next to the weights; ``state()`` saves both.
``predict(split)`` resumes from the latest kept state at or before the split's first snapshot (the empty history at
``t = 0`` always counts), observes any snapshots between that state and the split without scoring them, then
predicts and observes the split's snapshots one by one. So ``predict("test")`` continues exactly where the best
epoch's validation stopped (T-GRAB's number), ``predict("val")`` reproduces that epoch's validation, and a later
split (CE's ``test_inductive``) streams through test first. Data live on the device once (:class:`SnapshotEdges`);
a snapshot is a pair of views.

Where this differs from T-GRAB's code, on purpose: the first training step's "previous snapshot" is the
empty graph, not uniform noise or the previous evaluation's last snapshot; TGN trains its memory module (T-GRAB's
optimiser misses it); TGN uses the periodicity scripts' TransformerConv embedding on every dataset (CE/LR runs used
DyGLib's TGAT-style one); training negatives are redrawn a fixed number of rounds (8) instead of until no clash.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from tgbhub.baselines.memory import list_column, snapshot_queries
from tgbhub.errors import InvalidNameError, NotFittedError, UnsupportedTaskError
from tgbhub.progress import Steps
from tgbhub.tasks.declared import candidate_pairs, graded_snapshots
from tgbhub.trainers.base import FitReport, TrainConfig, checked_hparams, register_trainer
from tgbhub.trainers.history import EpochLoop, HistoryTrainer
from tgbhub.trainers.torchutil import require_torch, resolve_device

if TYPE_CHECKING:
    import torch
    from torch import Tensor

    from tgbhub.baselines.registry import Column
    from tgbhub.data import TemporalGraphDataset
    from tgbhub.data.temporal_graph import Negatives
    from tgbhub.trainers.graph_models import GCLSTMNet, SnapshotEdges, TGNNet

#: the network a snapshot trainer streams with (:mod:`tgbhub.trainers.graph_models`)
Network: TypeAlias = "GCLSTMNet | TGNNet"
#: scores a batch of pairs ``(src, dst)`` from the current embeddings
PairScorer: TypeAlias = "Callable[[Tensor, Tensor], Tensor]"

TASK_TYPES = ("snapshot-link-prediction", "one-vs-many-ranking")
MODEL_NAMES = ("gclstm", "tgn")
#: registered by :mod:`tgbhub.trainers.events` instead, whose trainer picks this module's protocol on a dataset with
#: snapshots and TGB's event protocol on one with continuous time (a task type says nothing about time)
DISPATCHED = (("one-vs-many-ranking", "tgn"),)
#: T-GRAB's training protocol: the paper's stated settings (App. D.2) and what its code does
PROTOCOL = {"lr": 1e-4, "epochs": 100_000, "patience": 100, "negatives_per_positive": 1, "eval_every": 1}
#: each model's sizes as T-GRAB's scripts set them; ``None`` resolves per dataset (see :func:`resolve_sizes`)
DEFAULTS: dict[str, dict[str, Any]] = {
    "gclstm": {"channels": 128, "K": 2, "decoder_dropout": 0.2},
    "tgn": {"memory_dim": None, "time_dim": 100, "embedding_dim": None, "heads": 2, "neighbors": 20, "dropout": 0.1,
            "decoder_dropout": 0.2},
}
#: rounds in which a training negative that hits a positive is redrawn (a clash survives with p^9, p <= degree/N)
RESAMPLE_ROUNDS = 8
#: training steps between two updates of the progress bar's running loss (each update reads the loss back)
PROGRESS_EVERY = 16


def _graph_models() -> ModuleType:
    from tgbhub.trainers import graph_models  # imports torch and torch-geometric: only when a model is built
    return graph_models


def resolve_sizes(model: str, hparams: Mapping[str, Any], num_nodes: int | None) -> dict[str, Any]:
    """The model's sizes: T-GRAB's defaults overridden by ``hparams``.

    TGN's ``memory_dim`` defaults to the node count (T-GRAB: the width of the one-hot node features, which are added
    to the memory: 100 on periodicity, 101 on CE) and ``embedding_dim`` to ``memory_dim`` rounded up to a multiple
    of ``heads`` (T-GRAB's TransformerConv output). Unknown before the dataset is (``num_nodes=None``): left ``None``.

    Raises:
        InvalidNameError: for an unknown hyper-parameter, a size that is not an integer in [1, MAX_SIZE], a dropout
            outside [0, 1), or an ``embedding_dim`` that ``heads`` does not divide.
    """
    sizes = checked_hparams(model, hparams, DEFAULTS[model])
    if model == "tgn" and num_nodes is not None:
        sizes["memory_dim"] = sizes["memory_dim"] or int(num_nodes)
        heads = sizes["heads"]
        sizes["embedding_dim"] = sizes["embedding_dim"] or heads * math.ceil(sizes["memory_dim"] / heads)
        if sizes["embedding_dim"] % heads:
            raise InvalidNameError(f"tgn: embedding_dim {sizes['embedding_dim']} is not divisible by heads {heads}; "
                                   "pick a multiple of heads")
    return sizes


def _snapshot_range(dataset: TemporalGraphDataset, split: str) -> tuple[int, int]:
    """``split``'s ``[start, stop)`` in snapshots (a trainer refuses a dataset without snapshots before asking)."""
    snapshots = dataset.snapshot_splits
    if snapshots is None:
        raise UnsupportedTaskError(f"{dataset.name}@{dataset.version} counts no snapshots (continuous time, or a "
                                   "derived dataset); the snapshot trainers need a discrete-time dataset")
    return snapshots[split]


# ---------------------------------------------------------------------------------------------------- query sets


class PairQueries:
    """A snapshot task's graded queries on one split: every candidate pair of every graded snapshot.

    Collects a score per candidate (in :func:`tgbhub.tasks.declared.candidate_pairs`' order, the order of
    :func:`tgbhub.baselines.memory.snapshot_queries`) and, on the way, each snapshot's F1 at the task's threshold.
    """

    #: the candidate pairs (and their codes, and the nodes they touch) on the device; the running F1 sum
    src: Tensor
    dst: Tensor
    codes: Tensor
    nodes: Tensor
    f1_sum: Tensor

    def __init__(self, torch: ModuleType, dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str,
                 edges: SnapshotEdges) -> None:
        self.torch, self.edges, self.num_nodes = torch, edges, dataset.num_nodes
        src, dst = candidate_pairs(task["candidates"], dataset.num_nodes)
        device = edges.src.device
        self.src = torch.as_tensor(src, device=device)
        self.dst = torch.as_tensor(dst, device=device)
        self.codes = self.src * self.num_nodes + self.dst
        self.nodes = torch.unique(torch.cat([self.src, self.dst]))
        self.start, self.stop = _snapshot_range(dataset, split)
        self.graded_from, _ = graded_snapshots(dataset.manifest, task, split)
        self.threshold = float(task.get("threshold", 0.5))
        self.zero_division = float(task.get("zero_division", 0.0))
        self.reset()

    def reset(self) -> None:
        """Forget collected scores (the queries stay on the device for the next pass)."""
        self.scores: list[Tensor] = []
        self.f1_sum = self.torch.zeros((), dtype=self.torch.float64, device=self.src.device)

    def graded(self, t: int) -> bool:
        return t >= self.graded_from

    def needs(self, t: int) -> Tensor:
        return self.nodes

    def collect(self, t: int, score: PairScorer) -> None:
        """Score snapshot ``t``'s candidates with ``score(src, dst)`` and add its F1 to the running sum."""
        torch = self.torch
        scores = score(self.src, self.dst)
        self.scores.append(scores)
        src, dst = self.edges.rows(t)
        truth = torch.isin(self.codes, src * self.num_nodes + dst)
        predicted = scores >= self.threshold
        tp = (predicted & truth).sum()
        denominator = 2 * tp + (predicted & ~truth).sum() + (~predicted & truth).sum()
        self.f1_sum += torch.where(denominator > 0, 2.0 * tp.double() / denominator.clamp(min=1).double(),
                                   torch.tensor(self.zero_division, dtype=torch.float64, device=tp.device))

    def metric(self) -> tuple[str, float]:
        """``("f1", mean per-snapshot F1 over the graded snapshots)``."""
        return "f1", float(self.f1_sum) / max(len(self.scores), 1)

    def submission(self, dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str) -> dict[str, Column]:
        keys = snapshot_queries(dataset, task, split)
        scores = self.torch.cat(self.scores) if self.scores else self.torch.zeros(0)
        return {**keys, "score": scores.float().cpu().numpy()}


class RankingQueries:
    """A ranking task's queries on one split, on the device in ``order``: positives, their pre-generated negatives
    (padded; ``valid`` says which are real) and the reciprocal rank (TGB's average-tie rule) summed on the way. A
    subclass says when each query is scored."""

    #: the queries (in ``order``), their negatives and which of those are real, on the device; the running sum
    src: Tensor
    dst: Tensor
    neg: Tensor
    valid: Tensor
    rr_sum: Tensor

    def __init__(self, torch: ModuleType, negatives: Negatives, order: np.ndarray, device: torch.device | None,
                 index_dtype: type[np.signedinteger[Any]]) -> None:
        self.torch = torch
        self.order = order  # answers go back to the file's query order at the end
        self.src = torch.as_tensor(np.asarray(negatives.src, dtype=np.int64)[order], device=device)
        self.dst = torch.as_tensor(np.asarray(negatives.dst, dtype=np.int64)[order], device=device)
        matrix = np.asarray(negatives.negatives)[order]
        self.count = np.asarray(negatives.count)
        self.neg = torch.as_tensor(np.maximum(matrix, 0).astype(index_dtype), device=device)
        self.valid = torch.as_tensor(matrix >= 0, device=device)
        self.reset()

    def reset(self) -> None:
        """Forget collected scores (the queries stay on the device for the next pass)."""
        self.pos_scores: list[Tensor] = []
        self.neg_scores: list[Tensor] = []
        self.rr_sum = self.torch.zeros((), dtype=self.torch.float64, device=self.src.device)

    def _add(self, pos: Tensor, negs: Tensor, valid: Tensor) -> None:
        """Keep a batch of queries' scores and add their reciprocal ranks."""
        self.pos_scores.append(pos)
        self.neg_scores.append(negs)
        self.rr_sum += reciprocal_ranks(pos, negs, valid).sum()

    def metric(self) -> tuple[str, float]:
        """``("mrr", mean reciprocal rank over the split's queries)``."""
        return "mrr", float(self.rr_sum) / max(len(self.src), 1)

    def ranked(self) -> dict[str, Column]:
        """The submission: ``query, pos_score, neg_scores`` in the negatives file's query order."""
        return ranking_submission(self.torch, self.pos_scores, self.neg_scores, self.order, self.count,
                                  int(self.neg.shape[1]))


class RankQueries(RankingQueries):
    """A ranking task's queries on one split of a dataset with snapshots: each query's positive and negatives are
    scored at its snapshot."""

    def __init__(self, torch: ModuleType, dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str,
                 edges: SnapshotEdges) -> None:
        negatives = dataset.negatives(split, task=task.get("name"))
        times = np.asarray(negatives.t, dtype=np.int64)
        order = np.argsort(times, kind="stable")  # queries by snapshot
        super().__init__(torch, negatives, order, edges.src.device, np.int64)
        self.start, self.stop = _snapshot_range(dataset, split)
        self.bounds = np.searchsorted(times[order], np.arange(self.start, self.stop + 1)).tolist()

    def graded(self, t: int) -> bool:
        return self.bounds[t - self.start + 1] > self.bounds[t - self.start]

    def _rows(self, t: int) -> slice:
        return slice(self.bounds[t - self.start], self.bounds[t - self.start + 1])

    def needs(self, t: int) -> Tensor:
        rows = self._rows(t)
        return self.torch.unique(self.torch.cat([self.src[rows], self.dst[rows], self.neg[rows].reshape(-1)]))

    def collect(self, t: int, score: PairScorer) -> None:
        """Score the positive and negatives of snapshot ``t``'s queries; add their reciprocal ranks."""
        rows = self._rows(t)
        src, neg = self.src[rows], self.neg[rows]
        pos = score(src, self.dst[rows])
        negs = score(src.repeat_interleave(neg.shape[1]), neg.reshape(-1)).reshape(neg.shape)
        self._add(pos, negs, self.valid[rows])

    def submission(self, dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str) -> dict[str, Column]:
        return self.ranked()


def reciprocal_ranks(pos: Tensor, negs: Tensor, valid: Tensor) -> Tensor:
    """Each query's reciprocal rank (float64) by TGB's average-tie rule: ``1 / (1 + (#neg > pos + #neg >= pos) / 2)``
    over its real negatives (``valid``), as the ranking evaluator counts it."""
    above = ((negs > pos[:, None]) & valid).sum(1) + ((negs >= pos[:, None]) & valid).sum(1)
    return 1.0 / (1.0 + above.double() / 2.0)


def ranking_submission(torch: ModuleType, pos_scores: list[Tensor], neg_scores: list[Tensor], order: np.ndarray,
                       count: np.ndarray, width: int) -> dict[str, Column]:
    """A ranking submission (``query, pos_score, neg_scores``) from scores collected in ``order`` (the query ids in
    the order they were scored), each query's list cut to its ``count`` real negatives."""
    pos = (torch.cat(pos_scores) if pos_scores else torch.zeros(0)).float().cpu().numpy()
    neg = (torch.cat(neg_scores) if neg_scores else torch.zeros(0, width)).float().cpu().numpy()
    back = np.empty_like(order)
    back[order] = np.arange(len(order))  # scored position of each query
    return {"query": np.arange(len(order), dtype=np.int64), "pos_score": pos[back],
            "neg_scores": list_column(neg[back], count)}


# -------------------------------------------------------------------------------------------------------- trainer


class SnapshotTrainer(HistoryTrainer):
    """One of T-GRAB's temporal-graph models (``gclstm``, ``tgn``) and its protocol; a unit of history is a
    snapshot. The constructor does no I/O."""

    def __init__(self, model_name: str, task_type: str, config: TrainConfig) -> None:
        self.model_name = model_name
        self.task_type = task_type
        super().__init__(config)
        #: the rows of the dataset the network streams (:meth:`_load_edges`), and that dataset
        self.edges: SnapshotEdges | None = None
        self._edges_of: TemporalGraphDataset | None = None
        self._num_nodes: int | None = None

    # ------------------------------------------------------------------------------------------------ settings

    def hyperparameters(self) -> dict[str, Any]:
        """The sizes (T-GRAB's, overridden by ``config.hparams``) and the protocol actually used.

        Raises:
            InvalidNameError: for an unknown or invalid hyper-parameter, a batch size other than one snapshot, or
                ``compile``/``amp`` (not part of T-GRAB's protocol, not offered here).
        """
        c = self.config
        if c.batch_size not in (None, 1):
            raise InvalidNameError(f"{self.model_name} trains on one snapshot per step (T-GRAB's protocol); "
                                   f"batch_size {c.batch_size} is not offered: leave it unset")
        if c.compile or c.amp:
            raise InvalidNameError(f"{self.model_name} does not offer compile or amp; leave both off")
        return {"model": resolve_sizes(self.model_name, c.hparams, self._num_nodes), "node_features": "one-hot",
                "lr": c.lr if c.lr is not None else PROTOCOL["lr"], "optimiser": "adam",
                "epochs": c.epochs or PROTOCOL["epochs"], "patience": c.patience or PROTOCOL["patience"],
                "patience_on": "train loss", "selection": "best validation score (the task's metric)",
                "batch": "one snapshot", "loss": "bce, one random negative per positive",
                "eval_every": PROTOCOL["eval_every"], "limit_batches": c.limit_batches}

    def _check(self, dataset: TemporalGraphDataset, task: Mapping[str, Any]) -> None:
        if str(task.get("type")) != self.task_type:
            raise UnsupportedTaskError(f"this {self.model_name} trainer answers {self.task_type} tasks, not "
                                       f"{task.get('type')!r} (task {task.get('name')!r}); make one with "
                                       "tgbhub.trainers.make_trainer(task, model, config)")
        if dataset.snapshot_splits is None or dataset.num_snapshots is None:
            other = ("; or train tgn, which trains on batches of events there (TGB's protocol)"
                     if self.task_type == "one-vs-many-ranking" and self.model_name != "tgn" else "")
            raise UnsupportedTaskError(f"{self.model_name} trains on snapshots, and {dataset.name}@{dataset.version} "
                                       f"has continuous time (no snapshot_splits); use a discrete-time dataset{other}")

    def _prepare(self, dataset: TemporalGraphDataset, task: Mapping[str, Any]) -> dict[str, Any]:
        """Resolve the settings for ``dataset``, put its rows on the device and build the network there."""
        self._check(dataset, task)
        self._num_nodes, self._digest = dataset.num_nodes, dataset.digest
        settings = self.hyperparameters()
        self.device = resolve_device(self.config.device)
        self._load_edges(dataset)
        self.module = _graph_models().build(self.model_name, dataset.num_nodes, settings["model"], self.edges)
        self.module.to(self.device)
        self.module.reset_history()
        self._boundaries, self._position = {0: None}, None
        return settings

    def _load_edges(self, dataset: TemporalGraphDataset) -> None:
        if self._edges_of is dataset:
            return
        t = np.asarray(dataset.t)
        bounds = np.searchsorted(t, np.arange(dataset.num_snapshots + 1)).tolist()
        self.edges = _graph_models().SnapshotEdges(np.asarray(dataset.src), np.asarray(dataset.dst), t, bounds,
                                                   self.device)
        self._edges_of = dataset
        if self.module is not None:
            self.module.edges = self.edges

    # -------------------------------------------------------------------------------------------------- fitting

    def _new_report(self) -> FitReport:
        """An empty report: the task's validation score (F1 or MRR), higher is better."""
        return FitReport(device=str(self.device))

    def _epochs(self, dataset: TemporalGraphDataset, task: Mapping[str, Any], settings: Mapping[str, Any],
                report: FitReport) -> float:
        """T-GRAB's protocol (Algorithm 1): train on the train split, select the epoch with the best validation score
        (F1 or MRR), keep its weights and its history states at the start and end of val. ``history`` has
        ``train_loss``, ``val_f1``/``val_mrr`` and ``seconds`` per epoch."""
        torch = require_torch(f"training {self.model_name}")
        module = self._network()
        optimiser = torch.optim.Adam(module.parameters(), lr=settings["lr"])
        train, val = dataset.split("train"), dataset.split("val")
        train_start, train_stop, val_start, val_stop = train.start, train.stop, val.start, val.stop
        steps = train_stop - train_start
        if settings["limit_batches"]:
            steps = min(steps, settings["limit_batches"])
        loop = EpochLoop(self, dataset, settings, report, optimiser, None)  # negatives draw from torch's generator
        queries = self._query_set(torch, dataset, task, "val")  # on the device once, reset every epoch
        self._start_pace(settings, report, steps, first_epoch=loop.first)
        for epoch in loop.epochs():
            tick = time.perf_counter()
            loss = self._train_epoch(torch, optimiser, train_start, train_start + steps, epoch, settings["epochs"])
            queries.reset()
            entry = self._seek(val_start)
            self._stream(torch, queries, val_start, val_stop)
            name, score = queries.metric()
            report.history.append({"epoch": epoch, "train_loss": loss, f"val_{name}": score,
                                   "seconds": time.perf_counter() - tick})
            if report.best_epoch < 0 or score > report.best_val:
                report.best_val, report.best_epoch = score, epoch
                report.val_metric, report.higher_is_better = name, True
                loop.best = ({k: v.detach().to("cpu", copy=True) for k, v in module.state_dict().items()},
                             {val_start: entry, val_stop: module.history()})
            if loss < loop.book.get("best_loss", math.inf):
                loop.book["best_loss"], loop.stale = loss, 0
            else:
                loop.stale += 1
            ended = (not math.isfinite(loss) or loop.stale >= settings["patience"] or score >= 1.0
                     or epoch + 1 == settings["epochs"])
            if not loop.end_epoch(epoch, ended):
                break
        loop.finish()
        return loop.earlier_seconds

    def _train_epoch(self, torch: ModuleType, optimiser: torch.optim.Optimizer, start: int, stop: int, epoch: int,
                     epochs: int) -> float:
        """One pass of Algorithm 1 over snapshots ``[start, stop)`` from an empty history; the mean step loss."""
        module, n, edges = self._network(), self.num_nodes, self._edges()
        module.train()
        module.reset_history()
        with torch.no_grad():
            for t in range(0, start):  # a train split that does not start at 0: its past is history, not loss
                module.observe(t, *edges.rows(t))
        bar = Steps(f"{self.model_name} epoch {epoch + 1}/{epochs}", stop - start) if self.config.progress else None
        total = torch.zeros((), dtype=torch.float64, device=self.device)
        trained, label = 0, "loss -"
        for t in range(start, stop):
            src, dst = edges.rows(t)
            if src.numel():
                neg = training_negatives(torch, src, dst, n)
                z, assoc = module.embed(torch.unique(torch.cat([src, dst, neg])))
                pos_logit = module.decoder(z[assoc[src]], z[assoc[dst]])
                neg_logit = module.decoder(z[assoc[src]], z[assoc[neg]])
                bce = torch.nn.functional.binary_cross_entropy_with_logits
                loss = bce(pos_logit, torch.ones_like(pos_logit)) + bce(neg_logit, torch.zeros_like(neg_logit))
                module.observe(t, src, dst)  # before backward, as TGN's: the memory update is part of the step
                optimiser.zero_grad(set_to_none=True)
                loss.backward()
                optimiser.step()
                module.after_step()
                total += loss.detach()
                trained += 1
            else:
                with torch.no_grad():
                    module.observe(t, src, dst)  # nothing to learn from; the history still moves on
            if self.pace is not None:
                self.pace.batch(epoch, t - start + 1)
            if bar is not None:
                if trained and (trained % PROGRESS_EVERY == 0 or t == stop - 1):
                    label = f"loss {float(total) / trained:.4f}"
                bar.step(label)
        if bar is not None:
            bar.close()
        self._position = stop
        return float(total) / max(trained, 1)

    # ------------------------------------------------------------------------------------------------ streaming

    @property
    def num_nodes(self) -> int:
        return int(self._num_nodes or 0)

    def _query_set(self, torch: ModuleType, dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str
                   ) -> PairQueries | RankQueries:
        kind = PairQueries if self.task_type == "snapshot-link-prediction" else RankQueries
        return kind(torch, dataset, task, split, self._edges())

    def _edges(self) -> SnapshotEdges:
        """The rows :meth:`_load_edges` put on the device."""
        if self.edges is None:
            raise NotFittedError(f"{self.model_name} has no data on the device yet: call fit(...) or restore(...) "
                                 "first")
        return self.edges

    def _observe(self, start: int, stop: int) -> None:
        """Observe snapshots ``[start, stop)`` without scoring them."""
        torch = require_torch("predicting")
        module, edges = self._network(), self._edges()
        with torch.no_grad():
            for t in range(start, stop):
                module.observe(t, *edges.rows(t))

    def _stream(self, torch: ModuleType, queries: PairQueries | RankQueries, start: int, stop: int) -> None:
        """Predict each snapshot of ``[start, stop)`` from the history before it, then observe it."""
        module, edges = self._network(), self._edges()

        def score(src: Tensor, dst: Tensor) -> Tensor:
            return torch.sigmoid(module.decoder(z[assoc[src]], z[assoc[dst]]))

        with torch.no_grad():
            for t in range(start, stop):
                if queries.graded(t):
                    z, assoc = module.embed(queries.needs(t))
                    queries.collect(t, score)
                module.observe(t, *edges.rows(t))
        self._position = stop

    # ------------------------------------------------------------------------------------------------ predicting

    def _predict(self, torch: ModuleType, dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str
                 ) -> dict[str, Column]:
        """A score in [0, 1] per candidate pair of every graded snapshot (``t, src, dst, score``), or per query
        (``query, pos_score, neg_scores``) for a ranking task."""
        self._load_edges(dataset)
        queries = self._query_set(torch, dataset, task, split)
        start, stop = _snapshot_range(dataset, split)
        self._seek(start)
        self._stream(torch, queries, start, stop)
        return queries.submission(dataset, task, split)


def training_negatives(torch: ModuleType, src: Tensor, dst: Tensor, num_nodes: int) -> Tensor:
    """One negative destination per positive ``(src, dst)`` of a snapshot: uniform over the nodes, redrawn (a fixed
    :data:`RESAMPLE_ROUNDS` times, so the device never waits on a check) where ``(src, neg)`` is a positive.
    T-GRAB's ``get_neg_link``; a self-pair is a valid negative there too."""
    positives = src * num_nodes + dst
    neg = torch.randint(0, num_nodes, src.shape, device=src.device)
    for _ in range(RESAMPLE_ROUNDS):
        clash = torch.isin(src * num_nodes + neg, positives)
        neg = torch.where(clash, torch.randint(0, num_nodes, src.shape, device=src.device), neg)
    return neg


def _register(task_type: str, name: str) -> None:
    register_trainer(task_type, name)(lambda config: SnapshotTrainer(name, task_type, config))


for _task_type in TASK_TYPES:
    for _name in MODEL_NAMES:
        if (_task_type, _name) not in DISPATCHED:
            _register(_task_type, _name)
