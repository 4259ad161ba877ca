"""T-GRAB generators (Dizaji et al., 2025): periodicity, cause-and-effect and long-range temporal graphs.

Each generator reproduces the random streams of the original code (``alirezadizaji/T-GRAB`` at ``3129310``) exactly,
without networkx: docs/tgrab.md lists the streams. The original wrote
``(0, 0)`` sentinel rows into empty snapshots (or dropped them); we keep empty snapshots empty and state the
snapshot count instead. All generators are pure functions of ``(params, seed)``.

Determinism beyond one machine (docs/determinism.md), audited: the values come from integer arithmetic, from
comparisons of uniforms with probabilities (exact), and from streams whose output is frozen (MT19937 through
``RandomState``, and PCG64's raw output shuffled by :func:`~generators.streams.pcg64_permutation`). No BLAS and no
float reductions: every ``cumsum``/``sum`` here adds integers. The one float function is ``log`` in the SBM's
geometric skip, the C library's through the pinned symbol of :mod:`generators.libm`, probed before an SBM build.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numba
import numpy as np

from ..edges import TemporalEdges, from_undirected, lexicographic_pairs
from ..libm import c_log
from ..streams import numpy_legacy_stream, pcg64_permutation, python_random_stream

VERSION = "1.0.0"


# --------------------------------------------------------------------------------------------- splits


def periodic_splits(params: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    """Whole periods: ``periods = [train, val, test]`` counted in periods of ``k * n`` snapshots."""
    period = params["k"] * params["n"]
    bounds = np.cumsum([0, *params["periods"]]) * period
    return {name: (int(bounds[i]), int(bounds[i + 1])) for i, name in enumerate(("train", "val", "test"))}


def ratio_splits(params: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    """Trailing splits of ``int(T * ratio)`` snapshots each, in ``params["tail_splits"]`` order; train is the rest.

    ``int(T * ratio)`` with a float ratio is exactly what the original code computes (4016 * 0.1 -> 401).
    """
    total = params["num_snapshots"]
    sizes = [(name, int(total * ratio)) for name, ratio in params["tail_splits"]]
    start = total - sum(size for _, size in sizes)
    splits = {"train": (0, start)}
    for name, size in sizes:
        splits[name] = (start, start + size)
        start += size
    return splits


# --------------------------------------------------------------------------------------------- P_det


def periodic_er(params: Mapping[str, Any], seed: int) -> TemporalEdges:
    """P_det(k, n): pattern ``i`` (1-based) is ER(num_nodes, p) drawn from a stream seeded ``seed + i``.

    The original reseeds before every snapshot, so pattern ``i`` is the same graph wherever it appears; drawing each
    pattern once and repeating it gives the same rows.
    """
    k, n, num_nodes, p = params["k"], params["n"], params["num_nodes"], params["p"]
    pair_u, pair_v = lexicographic_pairs(num_nodes)
    chosen = [np.flatnonzero(python_random_stream(seed + i).random_sample(len(pair_u)) < p) for i in range(1, k + 1)]
    sizes = np.array([len(c) for c in chosen], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    flat = np.concatenate(chosen)
    num_snapshots = sum(params["periods"]) * k * n
    pattern = (np.arange(num_snapshots) // n) % k
    counts = sizes[pattern]
    within = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    picked = flat[np.repeat(starts[pattern], counts) + within]
    return from_undirected(counts, pair_u[picked], pair_v[picked], num_nodes)


# --------------------------------------------------------------------------------------------- P_sto


@numba.njit(cache=True, nogil=True)
def _sbm_snapshots(uniforms, pos, first, last, bounds, p_intra, p_inter, labels, out_u, out_v, counts):  # noqa: PLR0913
    """Draw SBM snapshots ``first..last-1`` as networkx's sparse ``stochastic_block_model`` does.

    Blocks are visited in ``combinations_with_replacement`` order. A diagonal block takes one draw per pair
    (``combinations`` order) and then one more draw, because networkx runs its geometric-skip loop over the already
    exhausted pair iterator. An off-diagonal block skips ``floor(log(u) / log(1 - p))`` pairs of the ``product``
    order per draw until it runs past the end. Node ``j`` is written as ``labels[snapshot, j]``. Returns
    ``(next snapshot, stream position, edges written)``; it stops early when the stream or the output might not hold
    one more worst-case snapshot, so the caller can refill.
    """
    n_blocks = bounds.shape[0] - 1
    n_nodes = bounds[n_blocks]
    worst_draws = n_nodes * n_nodes + n_blocks * n_blocks
    worst_edges = n_nodes * (n_nodes - 1) // 2
    written = 0
    snap = first
    log_keep = c_log(1.0 - p_inter)
    while snap < last:
        label = labels[snap]
        if uniforms.shape[0] - pos < worst_draws or out_u.shape[0] - written < worst_edges:
            break
        before = written
        for i in range(n_blocks):
            for j in range(i, n_blocks):
                lo_i, hi_i, lo_j, hi_j = bounds[i], bounds[i + 1], bounds[j], bounds[j + 1]
                if i == j:
                    for a in range(lo_i, hi_i):
                        for b in range(a + 1, hi_i):
                            if uniforms[pos] < p_intra:
                                out_u[written] = label[a]
                                out_v[written] = label[b]
                                written += 1
                            pos += 1
                    pos += 1
                else:
                    width = hi_j - lo_j
                    total = (hi_i - lo_i) * width
                    index = 0
                    while True:
                        skip = math.floor(c_log(uniforms[pos]) / log_keep)
                        pos += 1
                        index += skip
                        if index >= total:
                            break
                        out_u[written] = label[lo_i + index // width]
                        out_v[written] = label[lo_j + index % width]
                        written += 1
                        index += 1
        counts[snap] = written - before
        snap += 1
    return snap, pos, written


def _block_bounds(num_nodes: int, num_blocks: int) -> np.ndarray:
    """networkx block ranges for the original's sizes: ``num_nodes // b`` each, the remainder to the first blocks."""
    sizes = [num_nodes // num_blocks + (1 if i < num_nodes % num_blocks else 0) for i in range(num_blocks)]
    return np.cumsum([0, *sizes]).astype(np.int64)


def periodic_sbm(params: Mapping[str, Any], seed: int) -> TemporalEdges:
    """P_sto(k, 1): fresh SBM edges every snapshot from one stream; pattern ``i`` fixes the community relabelling.

    Node ``j`` of the drawn SBM becomes ``perm_i[j]``, ``perm_i`` being ``0..N-1`` shuffled by PCG64(seed + i).
    """
    k, num_nodes = params["k"], params["num_nodes"]
    num_snapshots = sum(params["periods"]) * k * params["n"]
    bounds = _block_bounds(num_nodes, params["num_blocks"])
    intra_pairs = sum(int(b - a) * int(b - a - 1) // 2 for a, b in zip(bounds[:-1], bounds[1:], strict=True))
    inter_pairs = num_nodes * (num_nodes - 1) // 2 - intra_pairs
    expected_edges = params["p_intra"] * intra_pairs + params["p_inter"] * inter_pairs
    capacity = int(expected_edges * num_snapshots * 1.05) + 2 * num_nodes * num_nodes
    out_u = np.empty(capacity, dtype=np.int64)
    out_v = np.empty(capacity, dtype=np.int64)
    counts = np.zeros(num_snapshots, dtype=np.int64)
    perms = np.stack([pcg64_permutation(seed + i, num_nodes) for i in range(1, k + 1)])
    labels = perms[(np.arange(num_snapshots) // params["n"]) % k]
    stream = python_random_stream(seed)
    draws_per_snapshot = intra_pairs + params["p_inter"] * inter_pairs + len(bounds) ** 2
    chunk = int(draws_per_snapshot * num_snapshots * 1.05) + 4 * num_nodes**2
    uniforms, pos, snap, written = stream.random_sample(chunk), 0, 0, 0
    while snap < num_snapshots:
        snap, pos, added = _sbm_snapshots(uniforms, pos, snap, num_snapshots, bounds, params["p_intra"],
                                          params["p_inter"], labels, out_u[written:], out_v[written:], counts)
        written += added
        if snap < num_snapshots:
            uniforms, pos = np.concatenate([uniforms[pos:], stream.random_sample(chunk)]), 0
            if capacity - written < num_nodes * num_nodes:
                out_u, out_v = np.concatenate([out_u, out_u]), np.concatenate([out_v, out_v])
                capacity = len(out_u)
    return from_undirected(counts, out_u[:written], out_v[:written], num_nodes)


# --------------------------------------------------------------------------------------------- CE


def _grouped(num_snapshots: int, num_nodes: int, *parts: tuple[np.ndarray, np.ndarray, np.ndarray]) -> TemporalEdges:
    """Merge ``(t, u, v)`` undirected edge sets and group them by snapshot."""
    t, u, v = (np.concatenate(column) for column in zip(*parts, strict=True))
    order = np.argsort(t, kind="stable")
    return from_undirected(np.bincount(t, minlength=num_snapshots), u[order], v[order], num_nodes)


def _er_block(uniforms: np.ndarray, p: float, block_nodes: int,
              offset: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ER draws (one per pair, ``combinations`` order) for consecutive snapshots; ``uniforms`` is (snapshots, pairs)."""
    pair_u, pair_v = lexicographic_pairs(block_nodes)
    snap, pair = np.nonzero(uniforms < p)
    return snap, pair_u[pair] + offset, pair_v[pair] + offset


def cause_effect(params: Mapping[str, Any], seed: int) -> TemporalEdges:
    """CE(lag): ER cause graphs over a transductive then an inductive node block; node 0 answers ``lag`` steps later.

    One stream from ``seed``: each snapshot consumes one ER draw over its block's pairs, so the cause graphs are
    identical for every lag. For ``t >= lag`` node 0 links to every node with an edge in the cause graph of
    ``t - lag``.
    """
    lag, num_nodes = params["lag"], params["num_nodes"]
    num_snapshots = params["num_snapshots"]
    inductive_nodes = int((num_nodes - 1) * params["inductive_nodes_ratio"])
    transductive_nodes = num_nodes - 1 - inductive_nodes
    inductive_start = ratio_splits(params)["test_inductive"][0]
    stream = python_random_stream(seed)
    n_tr_pairs = transductive_nodes * (transductive_nodes - 1) // 2
    n_in_pairs = inductive_nodes * (inductive_nodes - 1) // 2
    draws_tr = stream.random_sample(inductive_start * n_tr_pairs).reshape(inductive_start, n_tr_pairs)
    draws_in = stream.random_sample((num_snapshots - inductive_start) * n_in_pairs).reshape(-1, n_in_pairs)
    t_tr, u_tr, v_tr = _er_block(draws_tr, params["p"], transductive_nodes, 1)
    t_in, u_in, v_in = _er_block(draws_in, params["p_inductive"], inductive_nodes, 1 + transductive_nodes)
    cause_t = np.concatenate([t_tr, t_in + inductive_start])
    cause_u, cause_v = np.concatenate([u_tr, u_in]), np.concatenate([v_tr, v_in])
    active = np.zeros((num_snapshots, num_nodes), dtype=bool)
    active[cause_t, cause_u] = True
    active[cause_t, cause_v] = True
    effect_t, effect_node = np.nonzero(active[: num_snapshots - lag])
    return _grouped(num_snapshots, num_nodes, (cause_t, cause_u, cause_v),
                    (effect_t + lag, np.zeros_like(effect_node), effect_node))


# --------------------------------------------------------------------------------------------- LR


def _star_template(branches: int, length: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Edges of ``branches`` paths of ``length`` edges out of node 1 over template nodes 2.., and their end nodes."""
    heads, tails, ends = [], [], []
    node = 2
    for _ in range(branches):
        previous = 1
        for _ in range(length):
            heads.append(previous)
            tails.append(node)
            previous = node
            node += 1
        ends.append(previous)
    return np.array(heads), np.array(tails), np.array(ends)


def long_range(params: Mapping[str, Any], seed: int) -> TemporalEdges:
    """LR(lag, d): disjoint random paths from source node 1; target node 0 links to their ends ``lag`` steps later.

    Snapshot 0 uses the template labelling; after every snapshot the labels of nodes ``2..N-1`` are redrawn with
    the legacy numpy ``permutation`` from one stream seeded with ``seed`` (``np.random.seed`` semantics).
    """
    lag, length, num_nodes = params["lag"], params["d"], params["num_nodes"]
    num_snapshots = params["num_snapshots"]
    stream = numpy_legacy_stream(seed)
    labels = np.empty((num_snapshots, num_nodes), dtype=np.int64)
    labels[:, :2] = (0, 1)
    labels[0, 2:] = np.arange(2, num_nodes)
    movable = np.arange(2, num_nodes)
    for t in range(1, num_snapshots):
        labels[t, 2:] = stream.permutation(movable)
    heads, tails, ends = _star_template(params["branches"], length)
    path_t = np.repeat(np.arange(num_snapshots), len(heads))
    effect_t = np.repeat(np.arange(lag, num_snapshots), len(ends))
    effect_v = labels[: num_snapshots - lag][:, ends].ravel()
    return _grouped(num_snapshots, num_nodes, (path_t, labels[:, heads].ravel(), labels[:, tails].ravel()),
                    (effect_t, np.zeros_like(effect_v), effect_v))
