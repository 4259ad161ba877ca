"""The networks behind :mod:`tgbhub.trainers.snapshot` and :mod:`tgbhub.trainers.events`: T-GRAB's GC-LSTM, TGN
(one module for both protocols: T-GRAB's snapshots and TGB's batches of events) and the two papers' link decoders.

This module imports torch and torch-geometric at the top; the trainers import it only when a model is built, so
``import tgbhub`` never needs either.

Both networks answer the same three calls the snapshot trainer streams with (T-GRAB's Algorithm 1; docs/baselines.md):
``embed(nodes)`` (node embeddings for predicting the current snapshot from the history seen so far),
``observe(t, src, dst)`` (take snapshot ``t``'s true edges into the history, after it was predicted) and
``history()``/``load_history()`` (the history state at a snapshot boundary, so that prediction can resume there).

On events (:mod:`tgbhub.trainers.events`) a network answers ``pair_logits`` (a training batch), ``query_logits``
(a batch of ranking queries), ``observe_events``, ``after_step`` and the same history calls; TGN here, GraphMixer in
:mod:`tgbhub.trainers.graphmixer`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from torch import Tensor, nn
from torch_geometric.nn import ChebConv, TransformerConv
from torch_geometric.nn.inits import glorot, zeros
from torch_geometric.nn.models.tgn import IdentityMessage, LastNeighborLoader, TGNMemory

#: the most (query, candidate) pairs decoded at once: bounds evaluation memory whatever the batch size and the
#: number of negatives per query (tgbl-wiki: 200 queries x ~1000 negatives)
PAIRS_PER_CHUNK = 1 << 18


class SnapshotEdges:
    """Every row of a discrete-time graph on the device, once: ``src``, ``dst`` (int64), ``t`` (int64) and the
    snapshot boundaries (host ints), so a snapshot is a pair of tensor views and no batch is copied to the device.
    """

    def __init__(self, src: npt.ArrayLike, dst: npt.ArrayLike, t: npt.ArrayLike, bounds: list[int],
                 device: torch.device | None) -> None:
        # one host copy each (the columns are read-only memory maps), then one transfer
        self.src = torch.from_numpy(np.array(src, dtype=np.int64)).to(device)
        self.dst = torch.from_numpy(np.array(dst, dtype=np.int64)).to(device)
        self.t = torch.from_numpy(np.array(t, dtype=np.int64)).to(device)
        self.bounds = bounds
        self._ones = torch.ones(max(bounds[-1], 1), 1, device=device)
        self._empty = torch.empty(2, 0, dtype=torch.long, device=device)

    def rows(self, t: int) -> tuple[Tensor, Tensor]:
        lo, hi = self.bounds[t], self.bounds[t + 1]
        return self.src[lo:hi], self.dst[lo:hi]

    def edge_index(self, t: int) -> Tensor:
        """Snapshot ``t`` as a ``(2, E)`` edge index; the empty graph for ``t = -1``."""
        if t < 0:
            return self._empty
        src, dst = self.rows(t)
        return torch.stack([src, dst])

    def weight(self, n: int) -> Tensor:
        """``n`` constant-1 edge features (T-GRAB's ``edge_feat``), a view."""
        return self._ones[:n] if n <= self._ones.shape[0] else torch.ones(n, 1, device=self._ones.device)

    #: the width of an event's message (:meth:`msg`): T-GRAB's one constant edge feature
    msg_dim = 1

    def msg(self, e_id: Tensor) -> Tensor:
        """The messages (edge features) of events ``e_id``: all constant 1."""
        return self.weight(e_id.numel())


class EventRows:
    """Every event of a continuous-time graph on the device, once: ``src``, ``dst``, ``t`` (int64: TGN's memory keeps
    times as integers) and the edge features as float32 messages (one constant-1 feature when the dataset has none,
    as T-GRAB's). A batch is a row range ``[lo, hi)`` of views; an event's id is its row index.
    """

    def __init__(self, src: npt.ArrayLike, dst: npt.ArrayLike, t: npt.ArrayLike, features: npt.ArrayLike | None,
                 device: torch.device | None) -> None:
        self.src = torch.from_numpy(np.array(src, dtype=np.int64)).to(device)
        self.dst = torch.from_numpy(np.array(dst, dtype=np.int64)).to(device)
        self.t = torch.from_numpy(np.array(t, dtype=np.int64)).to(device)
        if features is None:
            self.features = torch.ones(len(self.src), 1, device=device)
        else:
            values = np.array(features, dtype=np.float32)
            self.features = torch.from_numpy(values.reshape(len(values), -1)).to(device)

    @property
    def msg_dim(self) -> int:
        return int(self.features.shape[1])

    def __len__(self) -> int:
        return int(self.src.numel())

    def batch(self, lo: int, hi: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """Rows ``[lo, hi)``: ``(src, dst, t, msg)``, views."""
        return self.src[lo:hi], self.dst[lo:hi], self.t[lo:hi], self.features[lo:hi]

    def msg(self, e_id: Tensor) -> Tensor:
        """The messages (edge features) of events ``e_id``."""
        return self.features[e_id]


class LinkDecoder(nn.Module):
    """T-GRAB's ``LinkPredictor``: ReLU, Linear(2h, h), ReLU, Linear(h, h), Dropout(p), Linear(h, 1) over
    ``[z_src || z_dst]`` (as T-GRAB's code builds it).

    Returns logits; the trainer applies the sigmoid (scores in [0, 1], as T-GRAB's) and trains with BCE on logits,
    which is T-GRAB's ``BCELoss`` on the sigmoid computed without its log(0) clamp.
    """

    def __init__(self, channels: int, dropout: float) -> None:
        super().__init__()
        self.hidden = nn.Linear(2 * channels, channels)
        self.middle = nn.Linear(channels, channels)
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(channels, 1)

    def forward(self, z_src: Tensor, z_dst: Tensor) -> Tensor:
        h = self.hidden(torch.relu(torch.cat([z_src, z_dst], dim=-1)))
        return self.out(self.dropout(self.middle(torch.relu(h)))).squeeze(-1)


class TGBLinkPredictor(nn.Module):
    """TGB's ``LinkPredictor`` (its ``modules/decoder.py``): ``Linear(h, 1)(ReLU(Linear(h, h)(z_src) +
    Linear(h, h)(z_dst)))``, then, with ``squash``, a sigmoid, as TGB's returns.

    TGB's ``tgn.py`` feeds those sigmoid outputs to ``BCEWithLogitsLoss`` (a sigmoid applied twice in the loss) and
    ranks them; the event protocol keeps both as published, so its TGN is built with ``squash=True``. Without it the
    output is a logit (GraphMixer's pair MLP, trained with the same loss on logits, as TGM trains it).
    """

    def __init__(self, channels: int, squash: bool = False) -> None:
        super().__init__()
        self.lin_src = nn.Linear(channels, channels)
        self.lin_dst = nn.Linear(channels, channels)
        self.lin_final = nn.Linear(channels, 1)
        self.squash = squash

    def _out(self, hidden: Tensor) -> Tensor:
        out = self.lin_final(hidden).squeeze(-1)
        return out.sigmoid() if self.squash else out

    def forward(self, z_src: Tensor, z_dst: Tensor) -> Tensor:
        return self._out(torch.relu(self.lin_src(z_src) + self.lin_dst(z_dst)))

    def candidates(self, z_src: Tensor, z: Tensor, index: Tensor) -> Tensor:
        """Scores of every ``(z_src[i], z[index[i, j]])`` (``(queries, q)``): each projection is computed once per
        query and once per embedded node rather than once per pair, the sum's only per-pair work left."""
        hidden = self.lin_dst(z)[index]  # (queries, q, h): the one per-pair tensor, updated in place
        hidden += self.lin_src(z_src)[:, None, :]
        return self._out(hidden.relu_())


class GCLSTMCell(nn.Module):
    """GC-LSTM (Chen et al. 2018) as torch-geometric-temporal's ``GCLSTM``, which T-GRAB's ``gclstm.py`` uses.

    Every gate is ``X W_g + ChebConv_g(H) + b_g`` (no peepholes); ``C' = F*C + I*tanh(.)``, ``H' = O*tanh(C')``.
    The four gates' Chebyshev convolutions run as one ChebConv with ``4h`` output channels, which is the same
    function (each gate's output block has its own weights) at a quarter of the propagation work; each block is
    initialised as a separate ``(h, h)`` layer would be. The node features are one-hot, so ``X W_g`` is ``W_g``
    itself: no ``N x N`` identity is materialised.
    """

    def __init__(self, num_nodes: int, channels: int, k: int) -> None:
        super().__init__()
        self.channels = channels
        self.input_weight = nn.Parameter(torch.empty(num_nodes, 4 * channels))
        self.conv = ChebConv(channels, 4 * channels, K=k, normalization="sym")
        self.reset_parameters()

    def reset_parameters(self) -> None:
        c = self.channels
        for gate in range(4):
            glorot(self.input_weight.data[:, gate * c:(gate + 1) * c])
        for lin in self.conv.lins:
            for gate in range(4):
                glorot(lin.weight.data[gate * c:(gate + 1) * c])
        zeros(self.conv.bias)

    def forward(self, edge_index: Tensor, h: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
        gates = self.conv(h, edge_index) + self.input_weight
        i, f, g, o = gates.chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class GCLSTMNet(nn.Module):
    """The snapshot model: a GC-LSTM over the previous snapshot, then the link decoder.

    History state: ``(H, C)`` after the snapshots before ``pending``, and ``pending``, the last observed snapshot,
    not yet fed through the cell. Predicting snapshot ``t`` feeds ``G_{t-1}`` (T-GRAB: "the embedding from
    ``G_{t-1}`` predicts ``G_t``"); before any snapshot that graph is empty. Gradients flow through one step only
    (T-GRAB's back-propagation window of 1): the state is detached whenever a snapshot is observed.
    """

    #: every node id, a registered buffer (declared here: nn.Module types buffers as ``Tensor | Module``)
    _all: Tensor

    def __init__(self, num_nodes: int, channels: int, k: int, decoder_dropout: float, edges: SnapshotEdges) -> None:
        super().__init__()
        self.cell = GCLSTMCell(num_nodes, channels, k)
        self.decoder = LinkDecoder(channels, decoder_dropout)
        self.num_nodes = num_nodes
        self.edges = edges
        self.register_buffer("_all", torch.arange(num_nodes), persistent=False)
        self.reset_history()

    def reset_history(self) -> None:
        device = self._all.device
        self.h = torch.zeros(self.num_nodes, self.cell.channels, device=device)
        self.c = torch.zeros_like(self.h)
        self.pending = -1  # snapshot index of the graph the next step feeds; -1 = the empty graph before t = 0
        self._stepped: tuple[Tensor, Tensor] | None = None

    def _step(self) -> tuple[Tensor, Tensor]:
        if self._stepped is None:
            self._stepped = self.cell(self.edges.edge_index(self.pending), self.h, self.c)
        return self._stepped

    def embed(self, nodes: Tensor) -> tuple[Tensor, Tensor]:
        """Embeddings of every node for predicting the snapshot after ``pending``, and the node -> row map."""
        h, _ = self._step()
        return h, self._all

    def observe(self, t: int, src: Tensor, dst: Tensor) -> None:
        h, c = self._step()
        self.h, self.c, self.pending, self._stepped = h.detach(), c.detach(), t, None

    def after_step(self) -> None:
        """Nothing to do after an optimiser step: :meth:`observe` already detached the state."""

    def history(self) -> dict[str, Any]:
        return {"h": self.h.detach().clone(), "c": self.c.detach().clone(), "pending": int(self.pending)}

    def load_history(self, state: dict[str, Any]) -> None:
        device = self._all.device
        self.h, self.c = state["h"].to(device), state["c"].to(device)
        self.pending, self._stepped = int(state["pending"]), None


class LatestMessage(nn.Module):
    """TGN's ``LastAggregator`` as TGB runs it (torch_scatter's ``scatter_max``): each node's message with the latest
    time, the first of equal times; zeros for a node with none.

    PyG's own ``LastAggregator`` without torch_scatter installed (its pure-torch ``scatter_argmax``) hands a node
    without a message the message at position ``dim_size - 1`` whenever there are more messages than nodes, so the
    memory of such a node would be updated from another node's event.
    """

    def forward(self, msg: Tensor, index: Tensor, t: Tensor, dim_size: int) -> Tensor:
        count = t.numel()
        latest = t.new_zeros(dim_size).scatter_reduce(0, index, t, reduce="amax", include_self=False)
        is_latest = t == latest[index]
        position = torch.arange(count, device=t.device)
        first = torch.full((dim_size,), count, dtype=torch.long, device=t.device).scatter_reduce(
            0, index[is_latest], position[is_latest], reduce="amin", include_self=True)
        out = msg.new_zeros((dim_size, msg.size(-1)))
        found = first < count
        out[found] = msg[first[found]]
        return out


class SplitStoreMemory(TGNMemory):
    """PyG's ``TGNMemory`` with its message-store update done by one gather and one split instead of four index
    operations per node: the same entries (the same rows, in the same order of ``src.sort()``), a few times faster,
    which matters because TGN observes every snapshot one at a time."""

    def _update_msg_store(self, src: Tensor, dst: Tensor, t: Tensor, raw_msg: Tensor, msg_store: dict) -> None:
        n_id, perm = src.sort()
        n_id, count = n_id.unique_consecutive(return_counts=True)
        sizes = count.tolist()
        columns = [column[perm].split(sizes) for column in (src, dst, t, raw_msg)]
        for i, *entry in zip(n_id.tolist(), *columns, strict=True):
            msg_store[i] = tuple(entry)


class TGNNet(nn.Module):
    """TGN as TGB's ``tgn.py`` and T-GRAB's periodicity runs use it (PyG's TGN): ``TGNMemory`` with
    ``IdentityMessage`` and ``LastAggregator``, a one-layer graph-attention embedding (``TransformerConv``,
    relative-time encoding plus the event's message as edge attributes) over the ``LastNeighborLoader``'s most recent
    neighbours, then a link decoder. One module serves both protocols; what differs is given, not copied:

    - ``edges``: where an event's time and message are looked up by its id (:class:`SnapshotEdges`: constant-1
      messages; :class:`EventRows`: the dataset's edge features);
    - ``node_features``: ``"one-hot"`` (T-GRAB) makes the memory's input ``memory + x``, ``x`` the one-hot node features
      (T-GRAB adds them to the memory, whose width equals the number of nodes); when ``memory_dim`` differs from the
      node count (a small test model) ``x`` is a learned node embedding instead, i.e. the one-hot features through a
      linear map. ``"none"`` (TGB) feeds the memory alone;
    - ``decoder``: ``"mlp"`` (T-GRAB's :class:`LinkDecoder` over the concatenated pair) or ``"sum"`` (TGB's
      :class:`TGBLinkPredictor` over the sum of the two projections, with its sigmoid).

    History state: the memory (``memory``, ``last_update``), the neighbour loader (``neighbors``, ``e_id``,
    ``cur_e_id``) and the message stores. Event ids are row indices of the dataset: every event is observed in order
    from row 0, so the loader's ``e_id`` of a row is its position, and event times and messages are looked up by it.
    """

    #: node -> row map of the last :meth:`embed`, a registered buffer (declared here: nn.Module types buffers as
    #: ``Tensor | Module``)
    _assoc: Tensor

    def __init__(self, num_nodes: int, memory_dim: int, time_dim: int, embedding_dim: int, heads: int,
                 neighbors: int, dropout: float, decoder_dropout: float, edges: SnapshotEdges | EventRows, *,
                 node_features: str = "one-hot", decoder: str = "mlp") -> None:
        super().__init__()
        if node_features not in ("one-hot", "none") or decoder not in ("mlp", "sum"):
            raise ValueError(f"TGNNet: node_features {node_features!r} (one-hot or none) or decoder {decoder!r} "
                             "(mlp or sum) is unknown")
        msg_dim = edges.msg_dim
        self.memory = SplitStoreMemory(num_nodes, msg_dim, memory_dim, time_dim,
                                       message_module=IdentityMessage(msg_dim, memory_dim, time_dim),
                                       aggregator_module=LatestMessage())
        self.one_hot = node_features == "one-hot" and memory_dim == num_nodes
        self.features = (nn.Embedding(num_nodes, memory_dim) if node_features == "one-hot" and not self.one_hot
                         else None)
        self.conv = TransformerConv(memory_dim, embedding_dim // heads, heads=heads, dropout=dropout,
                                    edge_dim=msg_dim + time_dim)
        self.decoder: nn.Module = (LinkDecoder(embedding_dim, decoder_dropout) if decoder == "mlp"
                                   else TGBLinkPredictor(embedding_dim, squash=True))
        self.num_nodes = num_nodes
        self.neighbors = neighbors
        self.edges = edges
        self.register_buffer("_assoc", torch.zeros(num_nodes, dtype=torch.long), persistent=False)
        self.loader: LastNeighborLoader | None = None

    def reset_history(self) -> None:
        self.loader = LastNeighborLoader(self.num_nodes, size=self.neighbors, device=self._assoc.device)
        self.memory.reset_state()

    def _loader(self) -> LastNeighborLoader:
        """The neighbour loader :meth:`reset_history` made.

        Raises:
            RuntimeError: before the first :meth:`reset_history`.
        """
        if self.loader is None:
            raise RuntimeError("TGNNet.reset_history() must run before its history is used")
        return self.loader

    def _node_input(self, n_id: Tensor, memory: Tensor) -> Tensor:
        """The convolution's node input: the memory, plus the node features when there are any."""
        if self.one_hot:
            return memory + nn.functional.one_hot(n_id, self.num_nodes).to(memory.dtype)
        if self.features is not None:
            return memory + self.features(n_id)
        return memory

    def embed(self, nodes: Tensor) -> tuple[Tensor, Tensor]:
        """Embeddings of ``nodes`` (and their sampled neighbours), and the node -> row map into them.

        A node of ``nodes`` attends over its own most recent neighbours only, so its embedding is the same whichever
        other nodes are embedded with it: a batch of queries is embedded at once, as one query at a time would be.
        """
        n_id, edge_index, e_id = self._loader()(nodes)
        self._assoc[n_id] = torch.arange(n_id.numel(), device=n_id.device)
        memory, last_update = self.memory(n_id)
        x = self._node_input(n_id, memory)
        rel_t = (last_update[edge_index[0]] - self.edges.t[e_id]).to(x.dtype)
        edge_attr = torch.cat([self.memory.time_enc(rel_t), self.edges.msg(e_id)], dim=-1)
        return self.conv(x, edge_index, edge_attr), self._assoc

    def pair_logits(self, src: Tensor, dst: Tensor, neg: Tensor, t: Tensor) -> tuple[Tensor, Tensor]:
        """Training logits of a batch's events ``(src, dst)`` and of its negatives ``(src, neg)``, from the history
        before the batch (TGN's embeddings come from the memory: the events' times ``t`` are not needed)."""
        z, assoc = self.embed(torch.unique(torch.cat([src, dst, neg])))
        z_src = z[assoc[src]]
        return self.decoder(z_src, z[assoc[dst]]), self.decoder(z_src, z[assoc[neg]])

    def query_logits(self, src: Tensor, dst: Tensor, neg: Tensor, valid: Tensor, t: Tensor) -> tuple[Tensor, Tensor]:
        """Logits of each query's positive ``(src, dst)`` and of its negatives ``neg`` (``(queries, q)``; slots where
        ``valid`` is False get a score that means nothing), from the current history, every query embedded at once
        (``t``, the queries' times, is not needed: see :meth:`pair_logits`)."""
        fill = torch.where(valid, neg, src[:, None])  # padding points at a node that is embedded anyway
        z, assoc = self.embed(torch.unique(torch.cat([src, dst, fill.reshape(-1)])))
        z_src = z[assoc[src]]
        pos = self.decoder(z_src, z[assoc[dst]])
        q = int(neg.shape[1])
        step = max(1, PAIRS_PER_CHUNK // max(q, 1))
        candidates = getattr(self.decoder, "candidates", None)
        parts = []
        for i in range(0, int(src.numel()), step):
            index = assoc[fill[i:i + step]]
            if candidates is not None:  # a decoder that scores a query against all its candidates in one go
                parts.append(candidates(z_src[i:i + step], z, index))
            else:
                parts.append(self.decoder(z_src[i:i + step].repeat_interleave(q, dim=0), z[index.reshape(-1)]
                                          ).reshape(-1, q))
        return pos, torch.cat(parts) if parts else z.new_zeros(0, q)

    def observe(self, t: int, src: Tensor, dst: Tensor) -> None:
        """Take snapshot ``t``'s edges into the history (every event at time ``t``, constant-1 messages)."""
        if src.numel() == 0:
            return
        self.observe_events(src, dst, torch.full_like(src, t), self.edges.msg(src))

    def observe_events(self, src: Tensor, dst: Tensor, t: Tensor, msg: Tensor) -> None:
        """Take a batch of events into the history: the memory's messages and the neighbour lists (in row order, so
        the loader's event ids stay row indices)."""
        if src.numel() == 0:
            return
        self.memory.update_state(src, dst, t, msg)
        self._loader().insert(src, dst)

    def after_step(self) -> None:
        """Cut the memory from the step's graph after the optimiser step (TGN's truncated back-propagation)."""
        self.memory.detach()

    def history(self) -> dict[str, Any]:
        """The history at a boundary, taken in eval mode (the message stores hold only applied messages, whose
        times are older than any later event's, so :class:`LastAggregator` never picks them: they are dropped)."""
        loader = self._loader()
        return {"memory": self.memory.memory.detach().clone(), "last_update": self.memory.last_update.clone(),
                "neighbors": loader.neighbors.clone(), "e_id": loader.e_id.clone(), "cur_e_id": int(loader.cur_e_id)}

    def load_history(self, state: dict[str, Any]) -> None:
        device = self._assoc.device
        self.reset_history()
        loader = self._loader()
        self.memory.memory.copy_(state["memory"].to(device))
        self.memory.last_update.copy_(state["last_update"].to(device))
        loader.neighbors.copy_(state["neighbors"].to(device))
        loader.e_id.copy_(state["e_id"].to(device))
        loader.cur_e_id = int(state["cur_e_id"])


def build(model: str, num_nodes: int, settings: dict[str, Any], edges: SnapshotEdges) -> GCLSTMNet | TGNNet:
    """The network ``model`` (``gclstm`` or ``tgn``) with the resolved ``settings``, on the CPU, as T-GRAB builds it."""
    if model == "gclstm":
        return GCLSTMNet(num_nodes, settings["channels"], settings["K"], settings["decoder_dropout"], edges)
    return TGNNet(num_nodes, settings["memory_dim"], settings["time_dim"], settings["embedding_dim"],
                  settings["heads"], settings["neighbors"], settings["dropout"], settings["decoder_dropout"], edges)


def build_tgb_tgn(num_nodes: int, settings: dict[str, Any], edges: EventRows) -> TGNNet:
    """TGN as TGB's ``tgn.py`` builds it (no node features, TGB's decoder), with the resolved ``settings``, on the
    CPU."""
    return TGNNet(num_nodes, settings["memory_dim"], settings["time_dim"], settings["embedding_dim"],
                  settings["heads"], settings["neighbors"], settings["dropout"], 0.0, edges, node_features="none",
                  decoder="sum")
