"""Pure metric functions over arrays: one-vs-many and one-vs-all ranking, and per-snapshot binary F1.

Ranks use TGB's (and OGB's) average-tie rule: ``rank = 1 + (#neg > pos + #neg >= pos) / 2``, so a constant scorer
gets the middle rank, not the first. Inputs are validated before anything is computed: a NaN or inf score, a wrong
shape or a non-numeric dtype raises :class:`~tgbhub.errors.ScoreError` (also a ``ValueError``). py-tgb 2.3.0 instead
scores a NaN positive as rank 1 and broadcasts mismatched shapes silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numba
import numpy as np

from tgbhub.errors import ScoreError

DEFAULT_KS = (1, 3, 10)


def as_scores(values: Any, name: str, ndim: int) -> np.ndarray:
    """``values`` as a numeric numpy array of ``ndim`` dimensions (torch tensors are moved to the CPU first).

    Raises:
        ScoreError: if the array is not ``ndim``-dimensional or its dtype is not a real number type.
    """
    if hasattr(values, "detach"):  # torch tensor, without importing torch
        values = values.detach().cpu().numpy()
    array = np.asarray(values)
    if array.dtype == np.bool_ or not (np.issubdtype(array.dtype, np.floating)
                                       or np.issubdtype(array.dtype, np.integer)):
        raise ScoreError(f"{name} has dtype {array.dtype}; scores must be real numbers (float32 or float64). "
                         f"Convert with {name}.astype('float32')")
    if array.ndim != ndim:
        raise ScoreError(f"{name} has shape {array.shape}; expected {ndim} dimension(s) "
                         f"({'(n_queries,)' if ndim == 1 else '(n_queries, n_negatives)'})")
    if np.issubdtype(array.dtype, np.integer):
        array = array.astype(np.float64)
    return array


@numba.njit(cache=True, nogil=True)
def _rank_kernel(pos, neg, counts):  # pragma: no cover - compiled
    """Average-tie ranks in one pass; returns ``(ranks, first_bad_row)`` with -1 when every score is finite.

    ``counts[i]`` (when given) says how many leading entries of row ``i`` are real; the rest is padding.
    Finiteness is checked in the same pass (``x - x`` is 0 exactly for finite ``x``), and the loop body has no
    branch, so LLVM vectorises it: one read of the scores at memory speed.
    """
    n, q = neg.shape
    ranks = np.empty(n, dtype=np.float64)
    limited = counts.shape[0] > 0
    for i in range(n):
        p = pos[i]
        m = counts[i] if limited else q
        greater = 0
        at_least = 0
        bad = not (p - p == 0.0)
        row = neg[i]
        for j in range(m):
            x = row[j]
            greater += x > p
            at_least += x >= p
            bad |= not (x - x == 0.0)
        if bad:
            return ranks, i
        ranks[i] = 1.0 + 0.5 * (greater + at_least)
    return ranks, -1


def ranks(pos_scores: Any, neg_scores: Any, counts: Any = None) -> np.ndarray:
    """Average-tie rank of every positive among its negatives (float64, ``>= 1``).

    ``counts`` (optional, int ``[n_queries]``) marks how many leading negatives of each row are real; padding
    after them is ignored (it may hold anything, NaN included).

    Raises:
        ScoreError: on shapes other than ``(B,)`` and ``(B, Q)``, a non-numeric dtype, counts outside ``[0, Q]``,
            or a NaN/inf score (the message names the first bad query).
    """
    pos = as_scores(pos_scores, "pos_scores", 1)
    neg = as_scores(neg_scores, "neg_scores", 2)
    if neg.shape[0] != pos.shape[0]:
        raise ScoreError(f"pos_scores has {pos.shape[0]} queries but neg_scores has shape {neg.shape}; pass one row "
                         "of negative scores per positive, shape (n_queries, n_negatives)")
    if counts is None:
        limit = np.empty(0, dtype=np.int64)
    else:
        limit = np.asarray(counts, dtype=np.int64)
        if limit.shape != pos.shape or (limit.size and (limit.min() < 0 or limit.max() > neg.shape[1])):
            raise ScoreError(f"counts must have shape {pos.shape} with values in [0, {neg.shape[1]}]; got shape "
                             f"{limit.shape}")
    result, bad = _rank_kernel(pos, neg, limit)
    if bad >= 0:
        raise ScoreError(f"query {bad} has a NaN or infinite score (positive {pos[bad]!r}); every score must be "
                         "finite: replace NaN/inf before evaluating, e.g. np.nan_to_num(scores, nan=-1e9)")
    return result


def metrics_from_ranks(rank: np.ndarray, ks: Iterable[int] = DEFAULT_KS) -> dict[str, float]:
    """``{"mrr", "hits@K"...}`` as plain floats from per-query ranks (macro average over queries).

    Raises:
        ScoreError: if there are no ranks, or a ``K`` is not a positive integer.
    """
    if rank.size == 0:
        raise ScoreError("no queries to rank; pass at least one positive score")
    out = {"mrr": float(np.mean(1.0 / rank))}
    for k in ks:
        if int(k) != k or k < 1:
            raise ScoreError(f"hits@K needs positive integer K; got {k!r}")
        out[f"hits@{int(k)}"] = float(np.mean(rank <= k))
    return out


def rank_metrics(pos_scores: Any, neg_scores: Any, ks: Iterable[int] = DEFAULT_KS) -> dict[str, float]:
    """One-vs-many MRR and Hits@K: ``pos_scores`` ``(B,)`` against ``neg_scores`` ``(B, Q)``.

    Equal to py-tgb 2.3.0's ``Evaluator.eval`` on the same (valid) inputs, in float64 rather than float32.

    >>> rank_metrics([0.9, 0.2], [[0.1, 0.9], [0.5, 0.7]], ks=(1,))  # ranks 1.5 and 3: (1/1.5 + 1/3) / 2
    {'mrr': 0.5, 'hits@1': 0.0}

    Raises:
        ScoreError: on mismatched shapes, a non-numeric dtype or a NaN/inf score.
    """
    return metrics_from_ranks(ranks(pos_scores, neg_scores), ks)


def filtered_ranks(scores: Any, pos_dst: Any, filter_offsets: Any, filter_indices: Any,
                   chunk: int = 4096) -> np.ndarray:
    """One-vs-all ranks: each row of ``scores`` ``(B, V)`` scores every node; the positive is ``pos_dst[b]``.

    Every other node is a negative except the filter set of query ``b``, given as CSR
    ``filter_indices[filter_offsets[b]:filter_offsets[b + 1]]`` (TGB's time-aware filter: other true answers at the
    same time; it may contain the positive). Counts run over the whole row and the filtered entries are subtracted,
    so no ``(B, V)`` negative-id matrix is ever built.

    Raises:
        ScoreError: on shapes that disagree, ids outside ``[0, V)``, unsorted offsets, or NaN/inf scores.
    """
    score = as_scores(scores, "scores", 2)
    pos = np.asarray(pos_dst, dtype=np.int64)
    offsets = np.asarray(filter_offsets, dtype=np.int64)
    indices = np.asarray(filter_indices, dtype=np.int64)
    n, v = score.shape
    if pos.shape != (n,) or offsets.shape != (n + 1,) or (n and (pos.min() < 0 or pos.max() >= v)):
        raise ScoreError(f"scores {score.shape} needs pos_dst of shape ({n},) with ids in [0, {v}) and "
                         f"filter_offsets of shape ({n + 1},); got {pos.shape} and {offsets.shape}")
    if offsets[0] != 0 or np.any(np.diff(offsets) < 0) or offsets[-1] != len(indices) or (
            len(indices) and (indices.min() < 0 or indices.max() >= v)):
        raise ScoreError("filter sets must be CSR: offsets start at 0, never decrease and end at len(indices), "
                         f"and every index lies in [0, {v})")
    result = np.empty(n, dtype=np.float64)
    owner = np.repeat(np.arange(n), np.diff(offsets))
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        block = score[lo:hi]
        if not np.isfinite(block).all():
            bad = lo + int(np.flatnonzero(~np.isfinite(block).all(axis=1))[0])
            raise ScoreError(f"query {bad} has a NaN or infinite score; every score must be finite")
        p = block[np.arange(hi - lo), pos[lo:hi]][:, None]
        greater = (block > p).sum(axis=1)
        at_least = (block >= p).sum(axis=1) - 1  # the positive itself is always >= itself
        f_lo, f_hi = offsets[lo], offsets[hi]
        rows, cols = owner[f_lo:f_hi] - lo, indices[f_lo:f_hi]
        # the positive inside its own filter set was already taken out above
        keep = cols != pos[lo:hi][rows]
        rows, cols = rows[keep], cols[keep]
        hit = block[rows, cols]
        greater -= np.bincount(rows, weights=hit > p[rows, 0], minlength=hi - lo).astype(np.int64)
        at_least -= np.bincount(rows, weights=hit >= p[rows, 0], minlength=hi - lo).astype(np.int64)
        result[lo:hi] = 1.0 + 0.5 * (greater + at_least)
    return result


def rank_metrics_all(scores: Any, pos_dst: Any, filter_offsets: Any, filter_indices: Any,
                     ks: Iterable[int] = DEFAULT_KS) -> dict[str, float]:
    """Filtered one-vs-all MRR and Hits@K (see :func:`filtered_ranks`).

    Raises:
        ScoreError: as :func:`filtered_ranks`.
    """
    return metrics_from_ranks(filtered_ranks(scores, pos_dst, filter_offsets, filter_indices), ks)


def binary_f1(predicted: np.ndarray, truth: np.ndarray) -> dict[str, np.ndarray]:
    """Per-row binary F1 of boolean ``(S, C)`` predictions against ``(S, C)`` truth, with its counts.

    ``F1 = 2 tp / (2 tp + fp + fn)``, and 0 when a row has no positives and no predictions (sklearn's
    ``zero_division=0``, T-GRAB's choice).

    Raises:
        ScoreError: if the two arrays differ in shape or are not two-dimensional booleans.
    """
    if predicted.shape != truth.shape or predicted.ndim != 2 or predicted.dtype != np.bool_ \
            or truth.dtype != np.bool_:
        raise ScoreError(f"binary_f1 needs two boolean (S, C) arrays of one shape; got {predicted.dtype}"
                         f"{predicted.shape} and {truth.dtype}{truth.shape}")
    tp = np.count_nonzero(predicted & truth, axis=1)
    fp = np.count_nonzero(predicted & ~truth, axis=1)
    fn = np.count_nonzero(~predicted & truth, axis=1)
    denominator = 2 * tp + fp + fn
    f1 = np.divide(2.0 * tp, denominator, out=np.zeros(len(tp)), where=denominator > 0)
    return {"f1": f1, "tp": tp, "fp": fp, "fn": fn}
