"""GraphMixer (Cong et al., "Do We Really Need Complicated Model Architectures For Temporal Networks?", ICLR 2023)
for TGB's event protocol (:mod:`tgbhub.trainers.events`), with the settings TGB's training library TGM uses on
``tgbl-*`` datasets (its ``examples/linkproppred/graphmixer.py``).

A node ``v`` at query time ``t`` is embedded from two parts:

- the **link encoder**: ``v``'s ``neighbors`` (20) most recent events before the batch, oldest first (padding first,
  as DyGLib's recent-neighbour sampler lays them out), each the event's edge features beside a fixed time encoding of
  ``t - t_event`` (``cos(Δt·ω)``, ``ω_i = 10^(-9 i / (d - 1))``, not learned: the paper's choice), projected to the
  edge-feature width and mixed by ``layers`` (2) MLP-Mixer blocks (token mixing over the events with expansion 0.5,
  channel mixing with expansion 4.0, each after a layer norm, with a residual), then averaged over the real events;
- the **node encoder**: ``v``'s node features plus the mean of those of its neighbours in the last ``time_gap``
  (2,000) events before the batch. TGB's link datasets have no node features, so, as TGM does, every node gets a fixed
  random vector of width ``node_dim`` (100), drawn from the trainer's seed and saved with the weights.

Both parts are concatenated and projected to ``embedding_dim`` (128); the decoder is a two-layer MLP over the pair
(DyGLib's ``MergeLayer``; its first layer over ``[z_src || z_dst]`` is computed as TGB's
:class:`~tgbhub.trainers.graph_models.TGBLinkPredictor` computes its sum, so that a query's candidates share the
projection of its source).

Unlike TGN there is no memory: an embedding depends on the query time, so every (node, time) pair is embedded on its
own, a query's negatives at the query's time. The history is the neighbour lists (PyG's ``LastNeighborLoader``: the
most recent events of each node, by event id = row index) and the count of events seen.

This module imports torch and torch-geometric at the top; the trainers import it only when a model is built.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor, nn
from torch_geometric.nn.models.tgn import LastNeighborLoader

from tgbhub.trainers.graph_models import EventRows, TGBLinkPredictor

#: the token and channel expansion factors of the MLP-Mixer blocks (the paper's and TGM's)
TOKEN_EXPANSION = 0.5
CHANNEL_EXPANSION = 4.0
#: the most (event slot) tokens mixed at once when queries are ranked: each (node, time) pair is ``neighbors``
#: tokens of the edge-feature width, expanded four times inside a block, so this bounds evaluation memory
TOKENS_PER_CHUNK = 1 << 16


class FixedTimeEncoder(nn.Module):
    """``cos(Δt·ω)`` with ``ω_i = 10^(-9 i / (dim - 1))``: GraphMixer's time encoding, fixed (a buffer, not learned)."""

    omega: Tensor

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.register_buffer("omega", torch.from_numpy(1.0 / 10 ** np.linspace(0, 9, dim, dtype=np.float32)))

    def forward(self, dt: Tensor) -> Tensor:
        return torch.cos(dt.to(self.omega.dtype)[..., None] * self.omega)


class FeedForward(nn.Module):
    """``Linear(d, e·d)``, GELU, dropout, ``Linear(e·d, d)``, dropout: one MLP-Mixer sub-block."""

    def __init__(self, dim: int, expansion: float, dropout: float) -> None:
        super().__init__()
        hidden = max(1, int(expansion * dim))
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Dropout(dropout), nn.Linear(hidden, dim),
                                 nn.Dropout(dropout))

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class MixerBlock(nn.Module):
    """Token mixing across a node's events, then channel mixing within each; both after a layer norm, residual."""

    def __init__(self, tokens: int, channels: int, dropout: float) -> None:
        super().__init__()
        self.token_norm = nn.LayerNorm(tokens)
        self.token_mix = FeedForward(tokens, TOKEN_EXPANSION, dropout)
        self.channel_norm = nn.LayerNorm(channels)
        self.channel_mix = FeedForward(channels, CHANNEL_EXPANSION, dropout)

    def forward(self, x: Tensor) -> Tensor:
        """``x``: ``(pairs, tokens, channels)``."""
        x = x + self.token_mix(self.token_norm(x.transpose(1, 2))).transpose(1, 2)
        return x + self.channel_mix(self.channel_norm(x))


class GraphMixerNet(nn.Module):
    """GraphMixer over a continuous-time graph's events (see the module docstring); the event-network calls of
    :mod:`tgbhub.trainers.events`: ``pair_logits``, ``query_logits``, ``observe_events``, ``after_step``,
    ``reset_history``, ``history`` and ``load_history``."""

    #: the fixed random node features (saved with the weights, so a restored model embeds as the trained one)
    node_features: Tensor

    def __init__(self, num_nodes: int, neighbors: int, time_dim: int, embedding_dim: int, node_dim: int,
                 time_gap: int, layers: int, dropout: float, edges: EventRows, seed: int) -> None:
        super().__init__()
        edge_dim = edges.msg_dim
        self.time_enc = FixedTimeEncoder(time_dim)
        self.projection = nn.Linear(edge_dim + time_dim, edge_dim)
        self.mixers = nn.ModuleList(MixerBlock(neighbors, edge_dim, dropout) for _ in range(layers))
        self.output = nn.Linear(edge_dim + node_dim, embedding_dim)
        self.decoder = TGBLinkPredictor(embedding_dim)
        features = torch.randn(num_nodes, node_dim, generator=torch.Generator().manual_seed(seed))
        self.register_buffer("node_features", features)
        self.num_nodes = num_nodes
        self.neighbors = neighbors
        self.time_gap = time_gap
        self.edges = edges
        self.loader: LastNeighborLoader | None = None

    # ------------------------------------------------------------------------------------------------ history

    def reset_history(self) -> None:
        self.loader = LastNeighborLoader(self.num_nodes, size=self.neighbors, device=self.node_features.device)

    def _loader(self) -> LastNeighborLoader:
        """The neighbour loader :meth:`reset_history` made.

        Raises:
            RuntimeError: before the first :meth:`reset_history`.
        """
        if self.loader is None:
            raise RuntimeError("GraphMixerNet.reset_history() must run before its history is used")
        return self.loader

    def observe_events(self, src: Tensor, dst: Tensor, t: Tensor, msg: Tensor) -> None:
        """Take a batch of events into the neighbour lists (in row order, so event ids stay row indices)."""
        if src.numel():
            self._loader().insert(src, dst)

    def after_step(self) -> None:
        """Nothing to cut: GraphMixer keeps no state that gradients flow through."""

    def history(self) -> dict[str, Any]:
        loader = self._loader()
        return {"neighbors": loader.neighbors.clone(), "e_id": loader.e_id.clone(), "cur_e_id": int(loader.cur_e_id)}

    def load_history(self, state: dict[str, Any]) -> None:
        device = self.node_features.device
        self.reset_history()
        loader = self._loader()
        loader.neighbors.copy_(state["neighbors"].to(device))
        loader.e_id.copy_(state["e_id"].to(device))
        loader.cur_e_id = int(state["cur_e_id"])

    # ------------------------------------------------------------------------------------------------ embedding

    def _links(self, nodes: Tensor, times: Tensor) -> Tensor:
        """The link encoder's output for each ``(nodes[i], times[i])``: ``(pairs, edge_dim)``."""
        e_id = self._loader().e_id[nodes].flip(1)  # the loader keeps the most recent first, padding (-1) last
        valid = e_id >= 0
        safe = e_id.clamp(min=0)
        keep = valid[..., None].to(self.node_features.dtype)
        features = self.edges.msg(safe) * keep
        encoded = self.time_enc(times[:, None] - self.edges.t[safe]) * keep
        h = self.projection(torch.cat([features, encoded], dim=-1))
        for mixer in self.mixers:
            h = mixer(h)
        return (h * keep).sum(1) / keep.sum(1).clamp(min=1.0)

    def _nodes(self, nodes: Tensor) -> Tensor:
        """The node encoder's output for ``nodes``: own features plus the mean over neighbours of the last
        ``time_gap`` events seen (``(len(nodes), node_dim)``)."""
        unique, inverse = torch.unique(nodes, return_inverse=True)
        seen = int(self._loader().cur_e_id)
        lo = max(0, seen - self.time_gap)
        src, dst = self.edges.src[lo:seen], self.edges.dst[lo:seen]
        ends, others = torch.cat([src, dst]), torch.cat([dst, src])  # undirected: each event counts for both ends
        slot = torch.searchsorted(unique, ends).clamp(max=unique.numel() - 1)
        hit = unique[slot] == ends
        sums = torch.zeros(unique.numel(), self.node_features.shape[1], device=nodes.device)
        sums.index_add_(0, slot[hit], self.node_features[others[hit]])
        counts = torch.zeros(unique.numel(), device=nodes.device).index_add_(0, slot[hit], hit[hit].to(sums.dtype))
        gap = sums / counts.clamp(min=1.0)[:, None]
        return (gap + self.node_features[unique])[inverse]

    def embed_at(self, nodes: Tensor, times: Tensor) -> Tensor:
        """Embeddings of each ``(nodes[i], times[i])`` from the history seen so far: ``(pairs, embedding_dim)``."""
        return self.output(torch.cat([self._links(nodes, times), self._nodes(nodes)], dim=-1))

    # ------------------------------------------------------------------------------------------------ scoring

    def pair_logits(self, src: Tensor, dst: Tensor, neg: Tensor, t: Tensor) -> tuple[Tensor, Tensor]:
        """Training logits of a batch's events ``(src, dst)`` and of its negatives ``(src, neg)``, each node embedded
        at its event's time ``t``."""
        z = self.embed_at(torch.cat([src, dst, neg]), torch.cat([t, t, t]))
        z_src, z_dst, z_neg = z.chunk(3)
        return self.decoder(z_src, z_dst), self.decoder(z_src, z_neg)

    def query_logits(self, src: Tensor, dst: Tensor, neg: Tensor, valid: Tensor, t: Tensor) -> tuple[Tensor, Tensor]:
        """Logits of each query's positive ``(src, dst)`` and of its negatives ``neg`` (``(queries, q)``; slots where
        ``valid`` is False get a score that means nothing), every node embedded at its query's time ``t``, a chunk of
        queries at a time."""
        q = int(neg.shape[1])
        step = max(1, TOKENS_PER_CHUNK // (self.neighbors * (q + 2)))
        positives, negatives = [], []
        for i in range(0, int(src.numel()), step):
            s, d, times = src[i:i + step], dst[i:i + step], t[i:i + step]
            fill = torch.where(valid[i:i + step], neg[i:i + step], s[:, None])
            nodes = torch.cat([s, d, fill.reshape(-1)])
            z = self.embed_at(nodes, torch.cat([times, times, times.repeat_interleave(q)]))
            n = int(s.numel())
            z_src, z_dst, z_neg = z[:n], z[n:2 * n], z[2 * n:]
            positives.append(self.decoder(z_src, z_dst))
            index = torch.arange(n * q, device=z.device).reshape(n, q)
            negatives.append(self.decoder.candidates(z_src, z_neg, index))
        if not positives:
            return src.new_zeros(0, dtype=torch.float32), src.new_zeros(0, q, dtype=torch.float32)
        return torch.cat(positives), torch.cat(negatives)


def build_graphmixer(num_nodes: int, settings: dict[str, Any], edges: EventRows, seed: int) -> GraphMixerNet:
    """GraphMixer with the resolved ``settings`` (:data:`tgbhub.trainers.events.GRAPHMIXER_DEFAULTS`), on the CPU."""
    return GraphMixerNet(num_nodes, settings["neighbors"], settings["time_dim"], settings["embedding_dim"],
                         settings["node_dim"], settings["time_gap"], settings["layers"], settings["dropout"], edges,
                         seed)
