"""Per-window (or per-batch) negatives for link forecasting: historical, topped up at random, one per positive.

See docs/forecasting.md, "Negatives". For each group of events (a time window, or a batch of the legacy protocol) with
``n`` positives we draw exactly ``n`` negative pairs:

1. the *historical pool* (DyGLib's definition, which the paper's EdgeBank numbers come from): every distinct pair
   that occurred before the group's time range starts, minus every pair occurring inside that range (``[first t,
   last t]`` of the group; for a window that is the window itself). Drawn without replacement.
2. if the pool is short, the rest uniformly from all pairs (``u != v``; for a symmetric graph unordered pairs, stored
   ``u < v``) that are neither positive in the range nor drawn already (the paper's random strategy, which is also
   DyGLib's top-up); with replacement only when fewer such pairs exist than are needed.

Negative ``j`` of a group is paired with its ``j``-th positive and inherits its timestamp.

Determinism: group ``g`` draws from its own stream, seeded ``splitmix64(key + splitmix64(g))`` with ``key`` from
:func:`generators.negatives.stream_key`; the pool is enumerated in order of first occurrence. Integer arithmetic
only: the result is the same on every machine, thread count and numpy version. No global RNG state is touched.
"""

from __future__ import annotations

import numba
import numpy as np

from tgbhub.errors import GenerationError

from ..negatives import _below, _seed

#: ``fill`` values of the negatives artifact: where a negative came from
FROM_POOL, FROM_RANDOM = 0, 1


def first_occurrences(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(pairs, first)``: every distinct pair code in order of its first occurrence, and that event position."""
    unique, first = np.unique(codes, return_index=True)
    order = np.argsort(first, kind="stable")
    return unique[order], first[order].astype(np.int64)


@numba.njit(cache=True, nogil=True)
def _sorted_contains(sorted_codes, code):  # pragma: no cover - compiled
    at = np.searchsorted(sorted_codes, code)
    return at < sorted_codes.shape[0] and sorted_codes[at] == code


@numba.njit(cache=True, nogil=True)
def _kernel(codes, pairs_by_first, first_pos, groups, excl_lo, excl_hi, out_lo, out_hi, num_nodes, symmetric,
            key):  # pragma: no cover - compiled
    """``(neg, fill, failed)``: ``failed`` is the first group that needs negatives while every pair of the graph is
    positive in its range (its index; the caller raises, naming it), else -1."""
    total = 0
    for g in range(groups.shape[0]):
        total += out_hi[g] - out_lo[g]
    neg = np.empty(total, dtype=np.int64)
    fill = np.zeros(total, dtype=np.int8)
    pool = np.empty(pairs_by_first.shape[0], dtype=np.int64)
    n_nodes = np.int64(num_nodes)
    all_pairs = n_nodes * (n_nodes - 1) // 2 if symmetric else n_nodes * (n_nodes - 1)
    at = 0
    for g in range(groups.shape[0]):
        need = out_hi[g] - out_lo[g]
        if need == 0:
            continue
        banned = np.sort(codes[excl_lo[g]:excl_hi[g]])
        usable = 0
        n_known = np.searchsorted(first_pos, excl_lo[g])  # pairs first seen before the range begins
        for p in range(n_known):
            if not _sorted_contains(banned, pairs_by_first[p]):
                pool[usable] = pairs_by_first[p]
                usable += 1
        state = _seed(key, groups[g])
        take = min(need, usable)
        for j in range(take):
            pick = j + _below(state, usable - j)
            pool[j], pool[pick] = pool[pick], pool[j]
            neg[at + j] = pool[j]
        rest = need - take
        if rest > 0:
            distinct_banned = 0
            for b in range(banned.shape[0]):
                if b == 0 or banned[b] != banned[b - 1]:
                    distinct_banned += 1
            if all_pairs - distinct_banned <= 0:
                return neg, fill, g
            free = all_pairs - distinct_banned - take
            unique_draws = free >= rest
            chosen = np.sort(neg[at:at + take])
            extra = np.empty(rest, dtype=np.int64)
            j = 0
            while j < rest:
                u = _below(state, n_nodes)
                v = _below(state, n_nodes)
                if u == v:
                    continue
                if symmetric and u > v:
                    u, v = v, u
                code = u * n_nodes + v
                if _sorted_contains(banned, code):
                    continue
                if unique_draws:
                    if _sorted_contains(chosen, code):
                        continue
                    repeated = False
                    for k in range(j):
                        if extra[k] == code:
                            repeated = True
                            break
                    if repeated:
                        continue
                extra[j] = code
                j += 1
            for k in range(rest):
                neg[at + take + k] = extra[k]
                fill[at + take + k] = 1
        at += need
    return neg, fill, -1


def group_negatives(codes: np.ndarray, t: np.ndarray, groups: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                    num_nodes: int, symmetric: bool, key: np.uint64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Negatives of every group ``g`` (events ``lo[g]..hi[g]-1`` of the time-sorted event list), concatenated in
    group order: ``(neg_src, neg_dst, fill)`` with one row per positive.

    ``codes`` are the events' pair codes (``src * num_nodes + dst``; canonical ``src <= dst`` for a symmetric
    graph), ``groups`` the groups' ids (they seed the streams). The exclusion range of a group is every event whose
    time lies in ``[t[lo], t[hi - 1]]``, its pool every pair first seen before ``t[lo]``.

    Raises:
        GenerationError: if a group needs negatives but the graph has no pair outside its positives (naming the
            group, its events and times).
    """
    lo, hi = np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)
    filled = hi > lo
    first_t = np.where(filled, t[np.minimum(lo, len(t) - 1)], 0) if len(t) else np.zeros(0)
    last_t = np.where(filled, t[np.maximum(hi - 1, 0)], 0) if len(t) else np.zeros(0)
    excl_lo = np.where(filled, np.searchsorted(t, first_t, side="left"), lo).astype(np.int64)
    excl_hi = np.where(filled, np.searchsorted(t, last_t, side="right"), lo).astype(np.int64)
    pairs, first = first_occurrences(codes)
    n = int(num_nodes)
    possible = n * (n - 1) // 2 if symmetric else n * (n - 1)
    if possible <= 0 and bool(filled.any()):
        raise GenerationError(f"a graph of num_nodes={n} node(s) has no pair of distinct nodes, so no negative can be "
                              f"drawn for its {int(filled.sum())} group(s) of events; negatives need a graph of at "
                              "least 2 nodes")
    neg, fill, failed = _kernel(np.asarray(codes, dtype=np.int64), pairs.astype(np.int64), first,
                                np.asarray(groups, dtype=np.int64), excl_lo, excl_hi, lo, hi, n, bool(symmetric),
                                np.uint64(key))
    if failed >= 0:
        kind = "unordered" if symmetric else "ordered"
        raise GenerationError(f"group {int(np.asarray(groups)[failed])} (events {lo[failed]}..{hi[failed] - 1}, t "
                              f"{first_t[failed]}..{last_t[failed]}) needs negatives, but all {possible} {kind} pairs "
                              f"of the {n}-node graph are positive in that time range, so none can be drawn; use "
                              "shorter windows (or batches) or a graph with more nodes")
    return (neg // n).astype(np.int32), (neg % n).astype(np.int32), fill
