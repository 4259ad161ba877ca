"""Turn per-snapshot undirected edge lists into the canonical stored edge stream.

The stored convention (docs/design.md, "Formats"): one row per direction, sorted by ``(t, src, dst)``, ``t`` the 0-based
snapshot index, ``t:int64, src:int32, dst:int32``. Empty snapshots contribute no rows; their existence is recorded by
the snapshot count, never by sentinel rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np


@dataclass(frozen=True)
class TemporalEdges:
    """A generated discrete-time edge stream plus the facts a manifest needs about it."""

    t: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    num_nodes: int
    num_snapshots: int
    extras: dict[str, object] = field(default_factory=dict)

    def columns(self) -> dict[str, np.ndarray]:
        """The stored columns in their canonical order."""
        return {"t": self.t, "src": self.src, "dst": self.dst}


@numba.njit(cache=True, nogil=True)
def _both_directions_sorted(offsets, u, v, num_nodes):  # pragma: no cover - compiled
    """Emit every undirected edge both ways, each snapshot sorted by ``(src, dst)`` and free of repeats.

    Two stable counting-sort passes (by ``dst``, then by ``src``) per snapshot cost O(edges + nodes), which beats a
    comparison sort on the dense snapshots of P_sto and costs nothing on the sparse ones.
    """
    n_snap = offsets.shape[0] - 1
    total = 2 * u.shape[0]
    out_t = np.empty(total, dtype=np.int64)
    out_src = np.empty(total, dtype=np.int32)
    out_dst = np.empty(total, dtype=np.int32)
    heads = np.empty(total, dtype=np.int32)
    tails = np.empty(total, dtype=np.int32)
    by_dst = np.empty(total, dtype=np.int32)
    bucket = np.empty(num_nodes + 1, dtype=np.int64)
    adjacency = np.zeros(num_nodes * num_nodes if num_nodes <= 4096 else 0, dtype=np.uint8)
    written = 0
    for s in range(n_snap):
        lo = offsets[s]
        m = 2 * (offsets[s + 1] - lo)
        if num_nodes <= 4096 and 4 * m >= num_nodes * num_nodes:
            # A dense snapshot (P_sto: ~3,000 rows on 100 nodes): mark both directions in an adjacency table and
            # read it row by row, which yields the same (src, dst)-sorted rows without repeats in fewer passes.
            for i in range(lo, offsets[s + 1]):
                adjacency[u[i] * num_nodes + v[i]] = 1
                adjacency[v[i] * num_nodes + u[i]] = 1
            for a in range(num_nodes):
                base = a * num_nodes
                for b in range(num_nodes):
                    if adjacency[base + b]:
                        adjacency[base + b] = 0  # leave the table clean for the next dense snapshot
                        out_t[written] = s
                        out_src[written] = a
                        out_dst[written] = b
                        written += 1
            continue
        for i in range(m // 2):
            heads[2 * i] = u[lo + i]
            tails[2 * i] = v[lo + i]
            heads[2 * i + 1] = v[lo + i]
            tails[2 * i + 1] = u[lo + i]
        for key_of_pass in range(2):
            keys = tails if key_of_pass == 0 else heads
            bucket[:] = 0
            for i in range(m):
                bucket[keys[i] + 1] += 1
            for node in range(num_nodes):
                bucket[node + 1] += bucket[node]
            if key_of_pass == 0:
                for i in range(m):
                    by_dst[bucket[tails[i]]] = i
                    bucket[tails[i]] += 1
            else:
                for j in range(m):
                    i = by_dst[j]
                    slot = written + bucket[heads[i]]
                    out_src[slot] = heads[i]
                    out_dst[slot] = tails[i]
                    bucket[heads[i]] += 1
        kept = written
        for slot in range(written, written + m):
            # a repeated undirected edge is one edge, as in a networkx Graph
            if kept > written and out_src[slot] == out_src[kept - 1] and out_dst[slot] == out_dst[kept - 1]:
                continue
            out_src[kept] = out_src[slot]
            out_dst[kept] = out_dst[slot]
            out_t[kept] = s
            kept += 1
        written = kept
    return out_t[:written], out_src[:written], out_dst[:written]


def from_undirected(counts: np.ndarray, u: np.ndarray, v: np.ndarray, num_nodes: int,
                    **extras: object) -> TemporalEdges:
    """Build the stored stream from undirected edges grouped by snapshot.

    ``counts[s]`` is the number of undirected edges of snapshot ``s``; ``u``/``v`` hold them snapshot after
    snapshot, in any order within a snapshot. Self-loops would be stored once per direction, so callers never pass
    them.

    Raises:
        ValueError: if the counts do not add up to the number of edges or a node id is out of range.
    """
    counts = np.asarray(counts, dtype=np.int64)
    if int(counts.sum()) != len(u) or len(u) != len(v):
        raise ValueError(f"snapshot counts sum to {int(counts.sum())} but {len(u)}/{len(v)} edge endpoints were given")
    if len(u) and (min(u.min(), v.min()) < 0 or max(u.max(), v.max()) >= num_nodes):
        raise ValueError(f"edge endpoints must lie in [0, {num_nodes}); got [{min(u.min(), v.min())}, "
                         f"{max(u.max(), v.max())}]")
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    t, src, dst = _both_directions_sorted(offsets, np.ascontiguousarray(u, dtype=np.int64),
                                          np.ascontiguousarray(v, dtype=np.int64), num_nodes)
    return TemporalEdges(t=t, src=src, dst=dst, num_nodes=num_nodes, num_snapshots=len(counts), extras=extras)


def lexicographic_pairs(num_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """All pairs ``u < v`` in ``itertools.combinations(range(num_nodes), 2)`` order."""
    u, v = np.triu_indices(num_nodes, k=1)
    return u.astype(np.int64), v.astype(np.int64)
