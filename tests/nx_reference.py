"""Test-only, deliberately slow reference for the original T-GRAB data generators.

This module re-implements the *original* T-GRAB generation protocol (repository
``alirezadizaji/T-GRAB``, ``dataset/DTDG/graph_generation``) in the plainest
possible way: networkx graph samplers driven by explicit random-number-generator
objects, one snapshot at a time, with no caching and no vectorisation.  Its only
purpose is to cross-check the fast vectorised generator row for row in tests; it is
not part of the package and should never be imported by library code.

Differences from the original code are limited to the project's output cleanups:

* every undirected edge ``{u, v}`` of snapshot ``t`` becomes the rows ``(t, u, v)``
  and ``(t, v, u)``;
* ``t`` is always the 0-based loop index of the snapshot;
* no ``(0, 0)`` sentinel rows are written and empty snapshots are not dropped
  (an empty snapshot simply contributes no rows).

The original seeded Python's and numpy's *global* RNGs.  Here every stream is a
local object (``random.Random``, ``np.random.RandomState``,
``np.random.Generator``) that produces the same numbers, so calling these
functions never changes global state and the results do not depend on call order.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterator

import networkx as nx
import numpy as np

__all__ = ["reference_rows", "ce_empty_inductive_snapshots"]

# The original scripts pass --seed=12345 for every family.
_SEED = 12345

# Periodicity: 40 train + 4 validation + 4 test periods.
_NUM_PERIODS = 48
_PERIODIC_NUM_NODES = 100
_PDET_ER_PROB = 0.01
_PSTO_INTER_PROB = 0.01
_PSTO_NUM_CLUSTERS = 3

# Cause-and-effect: 101 nodes = memory node 0 + 90 transductive + 10 inductive.
_CE_NUM_NODES = 101
_CE_NUM_SAMPLES = 4000
_CE_SPLIT_RATIO = 0.1
_CE_ER_PROB = 0.002
_CE_ER_PROB_INDUCTIVE = 0.02

# Long-range: 100 nodes = target 0 + source 1 + 98 path candidates; 3 branches.
_LR_NUM_NODES = 100
_LR_NUM_SAMPLES = 4000
_LR_NUM_BRANCHES = 3
_LR_TARGET = 0
_LR_SOURCE = 1

Snapshot = set[tuple[int, int]]


# --------------------------------------------------------------------------- #
# Shared helpers
# --------------------------------------------------------------------------- #
def _edge_set(graph: nx.Graph) -> Snapshot:
    """Return the undirected edges of ``graph`` as ``(min, max)`` int pairs."""
    # Normalising to sorted plain ints makes unions order-free and strips numpy ints.
    return {(min(int(u), int(v)), max(int(u), int(v))) for u, v in graph.edges()}


def _rows_from_snapshots(
    snapshots: Iterator[Snapshot],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Turn a sequence of undirected snapshots into sorted directed (t, src, dst) rows."""
    t_list: list[int] = []
    src_list: list[int] = []
    dst_list: list[int] = []
    for t, edges in enumerate(snapshots):
        for u, v in edges:
            # Both directions, as the published data stores them.
            t_list += [t, t]
            src_list += [u, v]
            dst_list += [v, u]
    t_arr = np.asarray(t_list, dtype=np.int64)
    src_arr = np.asarray(src_list, dtype=np.int64)
    dst_arr = np.asarray(dst_list, dtype=np.int64)
    # np.lexsort sorts by the last key first, so this orders by (t, src, dst).
    order = np.lexsort((dst_arr, src_arr, t_arr))
    return t_arr[order], src_arr[order], dst_arr[order]


# --------------------------------------------------------------------------- #
# P_det(k, n): fixed ER graph per pattern, reseeded every snapshot
# --------------------------------------------------------------------------- #
def _pdet_snapshots(k: int, n: int) -> Iterator[Snapshot]:
    """Yield the snapshots of P_det(k, n) in time order."""
    period = [i for i in range(1, k + 1) for _ in range(n)]
    for _ in range(_NUM_PERIODS):
        for pattern in period:
            # The original reseeds the global `random` with 12345 + pattern right
            # before each draw; a fresh Random(12345 + pattern) is the same stream.
            rng = random.Random(_SEED + pattern)
            graph = nx.gnp_random_graph(_PERIODIC_NUM_NODES, _PDET_ER_PROB, seed=rng)
            yield _edge_set(graph)


# --------------------------------------------------------------------------- #
# P_sto(k, 1): fresh SBM per snapshot, fixed node shuffle per pattern
# --------------------------------------------------------------------------- #
def _psto_block_sizes() -> list[int]:
    """Block sizes as the original computes them: remainder goes to the first blocks."""
    base, remainder = divmod(_PERIODIC_NUM_NODES, _PSTO_NUM_CLUSTERS)
    return [base + (1 if i < remainder else 0) for i in range(_PSTO_NUM_CLUSTERS)]


def _psto_snapshots(k: int, p_intra: float) -> Iterator[Snapshot]:
    """Yield the snapshots of P_sto(k, 1) in time order."""
    sizes = _psto_block_sizes()
    # Built exactly like the original so the floats networkx compares are identical.
    probs = np.full((_PSTO_NUM_CLUSTERS, _PSTO_NUM_CLUSTERS), _PSTO_INTER_PROB)
    np.fill_diagonal(probs, p_intra)
    # One edge stream for the whole dataset: the original seeds `random` once.
    rng = random.Random(_SEED)
    period = list(range(1, k + 1))
    for _ in range(_NUM_PERIODS):
        for pattern in period:
            sbm = nx.stochastic_block_model(sizes, probs, seed=rng)
            original_ids = list(sbm.nodes)
            random_ids = list(original_ids)
            # The community assignment is fixed per pattern via its own PCG64 stream.
            np.random.Generator(np.random.PCG64(_SEED + pattern)).shuffle(random_ids)
            relabelled = nx.relabel_nodes(sbm, dict(zip(original_ids, random_ids)))
            yield _edge_set(relabelled)


# --------------------------------------------------------------------------- #
# CE(lag): i.i.d. ER cause graphs, memory node 0 echoes them lag steps later
# --------------------------------------------------------------------------- #
def _ce_layout(lag: int) -> tuple[int, int]:
    """Return (T, first inductive t) for CE(lag)."""
    total = _CE_NUM_SAMPLES + lag
    inductive_len = int(total * _CE_SPLIT_RATIO)
    return total, total - inductive_len


def _ce_snapshots(lag: int) -> Iterator[Snapshot]:
    """Yield the snapshots of CE(lag) in time order (cause edges plus effect edges)."""
    total, inductive_start = _ce_layout(lag)
    pattern_nodes = _CE_NUM_NODES - 1
    inductive_nodes = int(pattern_nodes * _CE_SPLIT_RATIO)
    transductive_nodes = pattern_nodes - inductive_nodes
    # One edge stream for the whole dataset: the original seeds `random` once.
    rng = random.Random(_SEED)
    past_causes: deque[nx.Graph] = deque()
    for t in range(total):
        if t < inductive_start:
            cause = nx.gnp_random_graph(transductive_nodes, _CE_ER_PROB, seed=rng)
            offset = 1
        else:
            cause = nx.gnp_random_graph(inductive_nodes, _CE_ER_PROB_INDUCTIVE, seed=rng)
            offset = 1 + transductive_nodes
        cause = nx.relabel_nodes(cause, {node: node + offset for node in cause.nodes})
        past_causes.append(cause)

        edges = _edge_set(cause)
        if t >= lag:
            # FIFO: the head is the cause graph of snapshot t - lag.
            old_cause = past_causes.popleft()
            active = [node for node, degree in old_cause.degree() if degree >= 1]
            edges |= {(0, int(node)) for node in active}
        yield edges


def ce_empty_inductive_snapshots(lag: int) -> int:
    """Count empty snapshots in the inductive part of CE(lag) (the original's (0,0) sentinels)."""
    _, inductive_start = _ce_layout(lag)
    return sum(
        1
        for t, edges in enumerate(_ce_snapshots(lag))
        if t >= inductive_start and not edges
    )


# --------------------------------------------------------------------------- #
# LR(lag, d): relabelled 3-branch star, target 0 links to old branch ends
# --------------------------------------------------------------------------- #
def _lr_template(d: int) -> tuple[nx.Graph, list[int]]:
    """Return the star template on node ids 0..99 and its branch end nodes."""
    template = nx.empty_graph(_LR_NUM_NODES)
    end_nodes: list[int] = []
    for b in range(_LR_NUM_BRANCHES):
        path = [_LR_SOURCE] + list(range(2 + b * d, 2 + (b + 1) * d))
        nx.add_path(template, path)
        end_nodes.append(path[-1])
    return template, end_nodes


def _lr_snapshots(lag: int, d: int) -> Iterator[Snapshot]:
    """Yield the snapshots of LR(lag, d) in time order."""
    total = _LR_NUM_SAMPLES + lag
    template, end_nodes = _lr_template(d)
    # Legacy MT19937 seeded with an int, i.e. the original's np.random.seed(12345).
    rs = np.random.RandomState(_SEED)
    labels = np.arange(_LR_NUM_NODES)
    past_ends: deque[list[int]] = deque()
    for t in range(total):
        mapping = {j: int(labels[j]) for j in range(_LR_NUM_NODES)}
        graph = nx.relabel_nodes(template, mapping)
        past_ends.append([mapping[e] for e in end_nodes])

        edges = _edge_set(graph)
        if t >= lag:
            # FIFO: the head holds the relabelled end nodes of snapshot t - lag.
            edges |= {(_LR_TARGET, e) for e in past_ends.popleft()}
        yield edges

        # The original redraws the labelling after every snapshot, the last included;
        # the final draw is unused but kept so the stream matches step for step.
        labels = np.concatenate(
            [[_LR_TARGET, _LR_SOURCE], rs.permutation(np.arange(2, _LR_NUM_NODES))]
        )


# --------------------------------------------------------------------------- #
# Public entry point
# --------------------------------------------------------------------------- #
def reference_rows(family: str, params: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (t, src, dst) as int64 arrays, sorted lexicographically by (t, src, dst), for one dataset."""
    if family == "pdet":
        snapshots = _pdet_snapshots(int(params["k"]), int(params["n"]))
    elif family == "psto":
        snapshots = _psto_snapshots(int(params["k"]), float(params["p_intra"]))
    elif family == "ce":
        snapshots = _ce_snapshots(int(params["lag"]))
    elif family == "lr":
        snapshots = _lr_snapshots(int(params["lag"]), int(params["d"]))
    else:
        raise ValueError(f"unknown T-GRAB family: {family!r}")
    return _rows_from_snapshots(snapshots)
