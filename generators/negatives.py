"""Pre-generated negatives for one-vs-many ranking: TGB's strategies, rectangular, independently regenerable.

Output of every 1-vs-q strategy: ``negatives`` int32 ``[n_queries, q]`` padded with ``-1`` and ``count`` int32
``[n_queries]`` (real negatives per row, always leading). The 1-vs-all strategy returns filter sets as CSR.

Determinism: query ``i`` of a split draws from its own stream, seeded ``splitmix64(key + splitmix64(i))`` where
``key`` is the first 8 bytes of ``sha256("tgbhub-negatives-v1|<dataset>@<version>|<split>|<seed>")``. A query's
negatives depend only on that seed and its candidate pool, so any subset can be regenerated and checked alone
(:func:`hist_rnd` takes the query indices to generate). No global RNG state is touched.

Correctness rule, in every branch: a negative is never a true destination of the query's ``(t, src[, rel])``
(its conflict set), never the source itself, and never repeated within a row.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numba
import numpy as np

from .jit import announce_compile

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def stream_key(namespace: str, split: str, seed: int) -> np.uint64:
    """The 64-bit key every query seed of ``(namespace, split, seed)`` is derived from."""
    digest = hashlib.sha256(f"tgbhub-negatives-v1|{namespace}|{split}|{seed}".encode()).digest()
    return np.uint64(int.from_bytes(digest[:8], "little"))


@numba.njit(cache=True, nogil=True)
def _mix(z):  # pragma: no cover - compiled
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True, nogil=True)
def _below(state, bound):  # pragma: no cover - compiled
    """Advance ``state`` (a 1-element uint64 array) and return an integer uniform in ``[0, bound)``.

    Lemire's multiply-shift on the high 32 bits: the bias is below ``bound / 2**32``, far under any effect here.
    """
    state[0] += np.uint64(0x9E3779B97F4A7C15)
    high = _mix(state[0]) >> np.uint64(32)
    return np.int64((high * np.uint64(bound)) >> np.uint64(32))


@numba.njit(cache=True, nogil=True)
def _seed(key, query):  # pragma: no cover - compiled
    state = np.empty(1, dtype=np.uint64)
    state[0] = _mix(key + _mix(np.uint64(query)))
    return state


@numba.njit(cache=True, nogil=True)
def _reseed(state, key, query):  # pragma: no cover - compiled
    """:func:`_seed` into an existing state array: the same stream, without a heap allocation per query (which
    cost about a fifth of the hist-rnd kernel's time on T-GRAB's 3.2M queries)."""
    state[0] = _mix(key + _mix(np.uint64(query)))


@numba.njit(cache=True, nogil=True)
def _draw_from(pool, size, take, state, out, at):  # pragma: no cover - compiled
    """Partial Fisher-Yates: move ``take`` uniformly chosen items of ``pool[:size]`` to ``out[at:]``."""
    for j in range(take):
        pick = j + _below(state, size - j)
        pool[j], pool[pick] = pool[pick], pool[j]
        out[at + j] = pool[j]


@numba.njit(cache=True, nogil=True)
def _draw_outside(num_nodes, need, free, banned, stamp, state, out, at, buffer):  # pragma: no cover - compiled
    """Draw ``need`` distinct nodes among the ``free`` whose ``banned`` stamp differs from ``stamp``; mark them.

    Large free pools use rejection (O(need)); small ones are enumerated first (O(num_nodes)). Which path runs
    depends only on the sizes, so the result stays a deterministic function of the query's stream.
    """
    if need == 0:
        return
    if num_nodes > 4096 and free >= 4 * need:
        j = 0
        while j < need:
            v = _below(state, num_nodes)
            if banned[v] != stamp:
                banned[v] = stamp
                out[at + j] = v
                j += 1
        return
    size = 0
    for v in range(num_nodes):
        if banned[v] != stamp:
            buffer[size] = v
            size += 1
    _draw_from(buffer, size, need, state, out, at)
    for j in range(need):
        banned[out[at + j]] = stamp


@numba.njit(cache=True, nogil=True)
def _ban(banned, stamp, source, conflict, lo, hi):  # pragma: no cover - compiled
    """Stamp the query's source and its conflict set ``conflict[lo:hi]``; return how many distinct nodes that is."""
    banned[source] = stamp
    blocked = 1
    for c in range(lo, hi):
        if banned[conflict[c]] != stamp:
            banned[conflict[c]] = stamp
            blocked += 1
    return blocked


@numba.njit(cache=True, nogil=True)
def _collect_unbanned(indices, lo, hi, banned, stamp, out):  # pragma: no cover - compiled
    """Copy the entries of ``indices[lo:hi]`` not stamped for this query into ``out``; return how many."""
    usable = 0
    for h in range(lo, hi):
        if banned[indices[h]] != stamp:
            out[usable] = indices[h]
            usable += 1
    return usable


@numba.njit(cache=True, nogil=True)
def _hist_rnd_kernel(queries, ids, src, group_lo, group_hi, conflict, hist_offsets, hist_indices, num_nodes, q,
                     hist_quota, key):  # pragma: no cover - compiled
    n = queries.shape[0]
    out = np.full((n, q), -1, dtype=np.int32)
    count = np.zeros(n, dtype=np.int32)
    banned = np.zeros(num_nodes, dtype=np.int64)   # stamp: in the conflict set, the source, or drawn
    pool = np.empty(num_nodes, dtype=np.int64)
    buffer = np.empty(num_nodes, dtype=np.int64)
    row = np.empty(q, dtype=np.int64)
    state = np.empty(1, dtype=np.uint64)
    for r in range(n):
        i = queries[r]
        stamp = r + 1
        s = src[i]
        blocked = _ban(banned, stamp, s, conflict, group_lo[i], group_hi[i])
        usable = _collect_unbanned(hist_indices, hist_offsets[s], hist_offsets[s + 1], banned, stamp, pool)
        # the random pool excludes conflicts, the source and the whole history (history entries are unique)
        random_free = num_nodes - blocked - usable
        n_hist = min(hist_quota, usable)
        n_rand = min(q - n_hist, random_free)
        n_hist = min(usable, q - n_rand)  # top up from history when the random pool is short
        _reseed(state, key, ids[r])
        _draw_from(pool, usable, n_hist, state, row, 0)
        if n_rand > 0:
            # stamps only steer this query's random draws, so with none to make (dense histories: the random
            # pool is empty) they are skipped; the draws and their order are the same either way
            for j in range(n_hist):
                banned[row[j]] = stamp
            for v in range(hist_offsets[s], hist_offsets[s + 1]):
                banned[hist_indices[v]] = stamp  # history is not part of the random pool
            _draw_outside(num_nodes, n_rand, random_free, banned, stamp, state, row, n_hist, buffer)
        for j in range(n_hist + n_rand):
            out[r, j] = row[j]
        count[r] = n_hist + n_rand
    return out, count


def _sorted_by(*keys: np.ndarray) -> bool:
    """Whether the rows are in lexicographic order of ``keys`` (ties allowed)."""
    if len(keys[0]) < 2:
        return True
    undecided = np.ones(len(keys[0]) - 1, dtype=bool)
    for key in keys:
        values = np.asarray(key)
        # integers widen to int64 (no unsigned wrap-around); float times (derived datasets) must not be truncated
        step = np.diff(values.astype(np.int64) if values.dtype.kind in "iub" else values)
        if np.any(undecided & (step < 0)):
            return False
        undecided &= step == 0
    return True


def _groups(t: np.ndarray, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per query: the ``[lo, hi)`` range of its conflict set (dsts of the same ``(t, src)``) in a sorted array."""
    if _sorted_by(t, src, dst):
        order = np.arange(len(t))  # stored edge streams already are: skip the O(n log n) sort
    else:
        order = np.lexsort((dst, src, t))
    st, ss = t[order], src[order]
    change = np.ones(len(t), dtype=bool)
    change[1:] = (st[1:] != st[:-1]) | (ss[1:] != ss[:-1])
    starts = np.flatnonzero(change)
    group_of_sorted = np.cumsum(change) - 1
    ends = np.append(starts[1:], len(t))
    group = np.empty(len(t), dtype=np.int64)
    group[order] = group_of_sorted
    return starts[group], ends[group], dst[order].astype(np.int64)


class History:
    """The ``(src, dst)`` pairs of a stream seen so far, grown split after split: the historical pool of every later
    split is the pool of the one before plus the rows in between, so a stream is scanned once, not once per split.

    :meth:`csr` is :func:`history_csr` of every row passed to :meth:`extend` so far, whatever the chunking.
    """

    def __init__(self, num_nodes: int) -> None:
        self.num_nodes = int(num_nodes)
        # small id space: a presence table is O(rows), no sort; otherwise the pairs are kept and sorted at the end
        self._present = (np.zeros(self.num_nodes * self.num_nodes, dtype=bool)
                         if self.num_nodes * self.num_nodes <= 1 << 26 else None)
        self._pairs: list[np.ndarray] = []

    def extend(self, src: np.ndarray, dst: np.ndarray) -> History:
        """Add the rows ``(src[i], dst[i])``; returns ``self``."""
        src, dst = np.asarray(src), np.asarray(dst)
        if self._present is not None and src.dtype == np.int32 and dst.dtype == np.int32:
            # ids < num_nodes <= 2**13, so pair keys < 2**26 fit int32: no int64 copies of the stored columns
            self._present[src * np.int32(self.num_nodes) + dst] = True
            return self
        pairs = src.astype(np.int64) * self.num_nodes + dst.astype(np.int64)
        if self._present is not None:
            self._present[pairs] = True
        else:
            self._pairs.append(pairs)
        return self

    def csr(self) -> tuple[np.ndarray, np.ndarray]:
        """Sorted unique destinations of every source as CSR ``(offsets [num_nodes + 1], indices)``."""
        if self._present is not None:
            keys = np.flatnonzero(self._present)
        else:
            keys = np.unique(np.concatenate(self._pairs) if self._pairs else np.empty(0, dtype=np.int64))
        owners, indices = np.divmod(keys, self.num_nodes)
        offsets = np.zeros(self.num_nodes + 1, dtype=np.int64)
        np.cumsum(np.bincount(owners, minlength=self.num_nodes), out=offsets[1:])
        return offsets, indices


def history_csr(src: np.ndarray, dst: np.ndarray, num_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique destinations of every source as CSR ``(offsets [num_nodes + 1], indices)``."""
    return History(num_nodes).extend(src, dst).csr()


def hist_rnd(t: np.ndarray, src: np.ndarray, dst: np.ndarray, history: tuple[np.ndarray, np.ndarray],
             num_nodes: int, q: int, hist_ratio: float, key: np.uint64,
             queries: np.ndarray | None = None, ids: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """TGB's ``hist_rnd`` one-vs-many negatives for every row of a split (or the rows ``queries``).

    Per query ``(t, s, d)``: the conflict set C is every destination of ``s`` at ``t`` in the split. Up to
    ``floor(hist_ratio * q)`` negatives come from ``history[s] \\ C`` (``history`` is CSR, see
    :func:`history_csr`), the rest uniformly from ``[0, num_nodes) \\ (C, s, history[s])``. Unlike TGB, a short
    pool is topped up from the other one, so a row falls short of ``q`` only when both are exhausted.

    ``queries`` picks the rows that are queries (default: all; the other rows still count as conflicts) and
    ``ids`` their query indices, which seed their streams (default: ``0..len(queries)-1``). Regenerate a subset
    by passing those rows with their original ids.

    Returns ``(negatives int32 [n, q] with -1 padding, count int32 [n])``, one row per query.
    """
    lo, hi, conflict = _groups(np.asarray(t), np.asarray(src), np.asarray(dst))
    chosen = np.arange(len(t), dtype=np.int64) if queries is None else np.asarray(queries, dtype=np.int64)
    seeds = np.arange(len(chosen), dtype=np.int64) if ids is None else np.asarray(ids, dtype=np.int64)
    if seeds.shape != chosen.shape:
        raise ValueError(f"ids has shape {seeds.shape} but queries has shape {chosen.shape}; pass one id per query")
    arguments = (chosen, seeds, np.asarray(src, dtype=np.int64), lo, hi, conflict, history[0], history[1],
                 int(num_nodes), int(q), int(np.floor(hist_ratio * q)), np.uint64(key))
    announce_compile(_hist_rnd_kernel, arguments, "the negative-sampling kernel", "3 s")
    return _hist_rnd_kernel(*arguments)


def time_filtered(t: np.ndarray, src: np.ndarray, rel: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TGB's TKG 1-vs-all filter sets: per query ``(t, s, r)``, every true object at that same ``t``.

    Returns ``(offsets [n + 1], indices)`` CSR over the queries in input order, each set sorted and without repeats
    (the query's own answer included; the evaluator skips it). Facts true at other times are not filtered
    (time-aware filtering). Queries sharing ``(t, s, r)`` share their set.
    """
    t, src, rel, dst = (np.asarray(a, dtype=np.int64) for a in (t, src, rel, dst))
    n = len(t)
    order = np.lexsort((dst, rel, src, t))
    keys = np.stack([t[order], src[order], rel[order]])
    new_key = np.ones(n, dtype=bool)
    new_key[1:] = (keys[:, 1:] != keys[:, :-1]).any(axis=0)
    sorted_dst = dst[order]
    new_member = new_key.copy()
    new_member[1:] |= sorted_dst[1:] != sorted_dst[:-1]  # a repeated (t, s, r, d) row adds no member
    key_of_sorted = np.cumsum(new_key) - 1
    key_offsets = np.zeros(int(new_key.sum()) + 1, dtype=np.int64)
    np.cumsum(np.bincount(key_of_sorted[new_member], minlength=len(key_offsets) - 1), out=key_offsets[1:])
    key = np.empty(n, dtype=np.int64)
    key[order] = key_of_sorted
    sizes = key_offsets[key + 1] - key_offsets[key]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    # query i's set is its key's run of members: gather every run at once, no Python loop over queries
    positions = np.repeat(key_offsets[key] - offsets[:-1], sizes) + np.arange(offsets[-1])
    return offsets, sorted_dst[new_member][positions]


def _conflicts(t: np.ndarray, src: np.ndarray, rel: np.ndarray,
               dst: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per query the ``[lo, hi)`` of its conflict set (the true objects of its ``(t, src, rel)``) in the returned
    array of destinations (see :func:`_groups`)."""
    rel = np.asarray(rel, dtype=np.int64)
    group = np.asarray(t, dtype=np.int64) * (int(rel.max(initial=0)) + 1) + rel
    return _groups(group, np.asarray(src), np.asarray(dst))


@dataclass(frozen=True)
class Pools:
    """The candidate pool of every query, as CSR: pool ``p`` is ``indices[offsets[p]:offsets[p + 1]]`` (node ids,
    sorted, without repeats) and query ``i`` draws from pool ``pool_of[i]``. Built by :func:`relation_pools` and
    :func:`type_pools`; drawing (:func:`dst_time_filtered`, :func:`node_type_filtered`) and checking negatives that
    were drawn elsewhere (:func:`audit_pooled`) use the same pools."""

    offsets: np.ndarray
    indices: np.ndarray
    pool_of: np.ndarray

    @classmethod
    def grouped(cls, owner: np.ndarray, members: np.ndarray, wanted: np.ndarray, pool_key: np.ndarray) -> Pools:
        """Pools from ``(owner, member)`` pairs sorted by owner then member (owners all in ``wanted``, sorted and
        distinct); query ``i`` gets the pool of ``pool_key[i]``, an empty one where no pair has that owner."""
        offsets = np.append(np.searchsorted(owner, wanted), len(owner)).astype(np.int64)
        return cls(offsets, members.astype(np.int64), np.searchsorted(wanted, pool_key).astype(np.int64))


def relation_pools(rel: np.ndarray, all_rel: np.ndarray, all_dst: np.ndarray) -> Pools:
    """TGB's ``dst-time-filtered`` pools (wikidata): query ``i``'s pool is every object seen with its relation
    ``rel[i]`` in ``(all_rel, all_dst)`` (TGB: the whole dataset, every split, inverse edges included)."""
    rel, all_rel, all_dst = (np.asarray(a, dtype=np.int64) for a in (rel, all_rel, all_dst))
    wanted = np.unique(rel)
    keep = np.isin(all_rel, wanted)
    width = int(all_dst.max(initial=-1)) + 1
    pairs = np.unique(all_rel[keep] * width + all_dst[keep])
    owner, members = np.divmod(pairs, max(width, 1))
    return Pools.grouped(owner, members, wanted, rel)


def type_pools(dst: np.ndarray, node_type: np.ndarray) -> Pools:
    """TGB's ``node-type-filtered`` pools (THG): query ``i``'s pool is every node of its true destination's type."""
    node_type = np.asarray(node_type, dtype=np.int64)
    wanted_type = node_type[np.asarray(dst, dtype=np.int64)]
    wanted = np.unique(wanted_type)
    members = np.flatnonzero(np.isin(node_type, wanted))
    members = members[np.argsort(node_type[members], kind="stable")]  # by type, ids ascending within a type
    return Pools.grouped(node_type[members], members, wanted, wanted_type)


@numba.njit(cache=True, nogil=True)
def _pool_kernel(queries, src, group_lo, group_hi, conflict, pool_offsets, pool_indices, pool_of, num_nodes, q, key,
                 fill_outside):  # pragma: no cover - compiled
    """Draw ``q`` per query from its pool (minus conflicts and source); optionally fill from outside the pool."""
    n = queries.shape[0]
    out = np.full((n, q), -1, dtype=np.int32)
    count = np.zeros(n, dtype=np.int32)
    banned = np.zeros(num_nodes, dtype=np.int64)
    buffer = np.empty(num_nodes, dtype=np.int64)
    pool = np.empty(num_nodes, dtype=np.int64)
    row = np.empty(q, dtype=np.int64)
    for r in range(n):
        i = queries[r]
        stamp = r + 1
        _ban(banned, stamp, src[i], conflict, group_lo[i], group_hi[i])
        p = pool_of[i]
        usable = _collect_unbanned(pool_indices, pool_offsets[p], pool_offsets[p + 1], banned, stamp, pool)
        take = min(q, usable)
        state = _seed(key, i)
        _draw_from(pool, usable, take, state, row, 0)
        got = take
        if fill_outside and got < q:
            for h in range(pool_offsets[p], pool_offsets[p + 1]):
                banned[pool_indices[h]] = stamp
            blocked = 0
            for v in range(num_nodes):  # rare path (short pools only), so an O(num_nodes) count is fine
                if banned[v] == stamp:
                    blocked += 1
            extra = min(q - got, num_nodes - blocked)
            _draw_outside(num_nodes, extra, num_nodes - blocked, banned, stamp, state, row, got, buffer)
            got += extra
        for j in range(got):
            out[r, j] = row[j]
        count[r] = got
    return out, count


def _pooled(t: np.ndarray, src: np.ndarray, rel: np.ndarray, dst: np.ndarray, pools: Pools, num_nodes: int, q: int,
            key: np.uint64, fill_outside: bool) -> tuple[np.ndarray, np.ndarray]:
    lo, hi, conflict = _conflicts(t, src, rel, dst)
    queries = np.arange(len(lo), dtype=np.int64)
    return _pool_kernel(queries, np.asarray(src, dtype=np.int64), lo, hi, conflict, pools.offsets, pools.indices,
                        pools.pool_of, int(num_nodes), int(q), np.uint64(key), fill_outside)


def dst_time_filtered(t: np.ndarray, src: np.ndarray, rel: np.ndarray, dst: np.ndarray, all_rel: np.ndarray,
                      all_dst: np.ndarray, num_nodes: int, q: int, key: np.uint64) -> tuple[np.ndarray, np.ndarray]:
    """TGB's TKG 1-vs-q (wikidata) negatives: objects ever seen with the query's relation, minus conflicts.

    Per query ``(t, s, r, d)``: the pool is every object seen with ``r`` in ``(all_rel, all_dst)``
    (:func:`relation_pools`), minus the conflict set (true objects of ``(t, s, r)``) and ``s``; ``q`` are drawn
    without replacement. A short pool is filled from the remaining nodes, excluding the conflict set (TGB's fallback
    could draw true answers).
    """
    return _pooled(t, src, rel, dst, relation_pools(rel, all_rel, all_dst), num_nodes, q, key, True)


def node_type_filtered(t: np.ndarray, src: np.ndarray, rel: np.ndarray, dst: np.ndarray, node_type: np.ndarray,
                       q: int, key: np.uint64) -> tuple[np.ndarray, np.ndarray]:
    """TGB's THG negatives: ``q`` nodes of the true destination's type (:func:`type_pools`), minus the conflict set
    of ``(t, s, r)``.

    Never falls back outside the type: a short pool gives a short, ``-1``-padded row.
    """
    return _pooled(t, src, rel, dst, type_pools(dst, node_type), len(node_type), q, key, False)


@dataclass(frozen=True)
class PoolAudit:
    """What :func:`audit_pooled` found, one entry per query: negatives outside the query's pool, negatives in its
    conflict set (its own destination included), whether its own destination is among them, and how many pool
    nodes the conflict set leaves (``pool_left``; below the number of negatives: the pool was short)."""

    outside_pool: np.ndarray
    in_conflict_set: np.ndarray
    holds_dst: np.ndarray
    pool_left: np.ndarray


@numba.njit(cache=True, nogil=True)
def _audit_kernel(negatives, count, dst, order, group_lo, group_hi, conflict, pool_offsets, pool_indices, pool_of,
                  num_nodes):  # pragma: no cover - compiled
    """:class:`PoolAudit`'s arrays; queries visited in ``order`` (by pool), so each pool is stamped once."""
    n = negatives.shape[0]
    outside = np.zeros(n, dtype=np.int64)
    clashing = np.zeros(n, dtype=np.int64)
    holds = np.zeros(n, dtype=np.bool_)
    left = np.zeros(n, dtype=np.int64)
    in_pool = np.zeros(num_nodes, dtype=np.int64)  # stamp: pool id + 1 (queries come grouped by pool)
    banned = np.zeros(num_nodes, dtype=np.int64)   # stamp: query + 1
    current = -1
    for k in range(n):
        i = order[k]
        p = pool_of[i]
        if p != current:
            for h in range(pool_offsets[p], pool_offsets[p + 1]):
                in_pool[pool_indices[h]] = p + 1
            current = p
        blocked = 0
        for c in range(group_lo[i], group_hi[i]):
            v = conflict[c]
            if banned[v] != i + 1:
                banned[v] = i + 1
                if in_pool[v] == p + 1:
                    blocked += 1
        left[i] = pool_offsets[p + 1] - pool_offsets[p] - blocked
        for j in range(count[i]):
            v = negatives[i, j]
            inside = 0 <= v < num_nodes
            if not inside or in_pool[v] != p + 1:
                outside[i] += 1
            if inside and banned[v] == i + 1:
                clashing[i] += 1
            if v == dst[i]:
                holds[i] = True
    return outside, clashing, holds, left


def audit_pooled(negatives: np.ndarray, count: np.ndarray, t: np.ndarray, src: np.ndarray, rel: np.ndarray,
                 dst: np.ndarray, pools: Pools, num_nodes: int) -> PoolAudit:
    """Check 1-vs-q negatives drawn elsewhere (TGB's pickles) against the rules the samplers here draw by: per query
    ``i`` (``t, src, rel, dst``; negatives ``negatives[i, :count[i]]``), how many lie outside its pool ``pools``
    and how many in its conflict set (every true object of ``(t, src, rel)`` among the queries). Linear in the
    negatives plus the pools' sizes; never builds a ``[n, q]`` boolean matrix."""
    lo, hi, conflict = _conflicts(t, src, rel, dst)
    order = np.argsort(pools.pool_of, kind="stable")
    found = _audit_kernel(np.asarray(negatives), np.asarray(count, dtype=np.int64), np.asarray(dst, dtype=np.int64),
                          order, lo, hi, conflict, pools.offsets, pools.indices, pools.pool_of, int(num_nodes))
    return PoolAudit(*found)
