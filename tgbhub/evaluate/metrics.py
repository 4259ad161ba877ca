"""Pure metric functions over arrays: one-vs-many and one-vs-all ranking, per-snapshot binary F1, binary AU-ROC and
AP, and the ATD/ACD distances between event streams (TLPCF).

Ranks use TGB's (and OGB's) average-tie rule: ``rank = 1 + (#neg > pos + #neg >= pos) / 2``, so a constant scorer
gets the middle rank, not the first. Inputs are validated before anything is computed: a NaN or inf score, a wrong
shape or a non-numeric dtype raises :class:`~tgbhub.errors.ScoreError` (also a ``ValueError``). py-tgb 2.3.0 instead
scores a NaN positive as rank 1 and broadcasts mismatched shapes silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TypedDict, TypeGuard, cast

import numba
import numpy as np
from numpy.typing import ArrayLike

from tgbhub.errors import ScoreError

if TYPE_CHECKING:
    import torch

DEFAULT_KS = (1, 3, 10)
#: ``(src, dst, t)`` of an event stream: int64, int64 and float64 arrays of one length
Stream = tuple[np.ndarray, np.ndarray, np.ndarray]


def as_scores(values: ArrayLike, name: str, ndim: int) -> np.ndarray:
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


def ranks(pos_scores: ArrayLike, neg_scores: ArrayLike, counts: ArrayLike | None = None) -> np.ndarray:
    """Average-tie rank of every positive among its negatives (float64, ``>= 1``).

    ``counts`` (optional, int ``[n_queries]``) marks how many leading negatives of each row are real; padding
    after them is ignored (it may hold anything, NaN included).

    Raises:
        ScoreError: on shapes other than ``(B,)`` and ``(B, Q)``, a non-numeric dtype, counts outside ``[0, Q]``,
            or a NaN/inf score (the message names the first bad query).
    """
    if on_accelerator(pos_scores) or on_accelerator(neg_scores):
        return device_ranks(pos_scores, neg_scores, counts)
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


def on_accelerator(values: object) -> TypeGuard[torch.Tensor]:
    """True for a torch tensor that lives off the CPU (checked without importing torch)."""
    device = getattr(values, "device", None)
    return hasattr(values, "detach") and getattr(device, "type", "cpu") != "cpu"


def device_ranks(pos_scores: ArrayLike, neg_scores: ArrayLike, counts: ArrayLike | None = None) -> np.ndarray:
    """:func:`ranks` computed by torch where the scores live (a GPU: two comparisons and a row sum, no copy of the
    score matrix to the host); only the ranks come back, as float64 numpy.

    Same rule, checks and errors as :func:`ranks`; :func:`ranks` calls this for tensors off the CPU, and a test
    calls it on CPU tensors against the numba kernel.

    Raises:
        ScoreError: as :func:`ranks`.
    """
    import torch

    pos = torch.as_tensor(pos_scores)
    neg = torch.as_tensor(neg_scores, device=pos.device)
    for name, values, ndim in (("pos_scores", pos, 1), ("neg_scores", neg, 2)):
        if values.dtype == torch.bool or values.dtype.is_complex:
            raise ScoreError(f"{name} has dtype {values.dtype}; scores must be real numbers (float32 or float64)")
        if values.dim() != ndim:
            raise ScoreError(f"{name} has shape {tuple(values.shape)}; expected {ndim} dimension(s) "
                             f"({'(n_queries,)' if ndim == 1 else '(n_queries, n_negatives)'})")
    if neg.shape[0] != pos.shape[0]:
        raise ScoreError(f"pos_scores has {pos.shape[0]} queries but neg_scores has shape {tuple(neg.shape)}; pass "
                         "one row of negative scores per positive, shape (n_queries, n_negatives)")
    real = torch.ones_like(neg, dtype=torch.bool)
    if counts is not None:
        limit = torch.as_tensor(np.asarray(counts, dtype=np.int64), device=neg.device)
        if tuple(limit.shape) != tuple(pos.shape) or (limit.numel() and (int(limit.min()) < 0
                                                                         or int(limit.max()) > neg.shape[1])):
            raise ScoreError(f"counts must have shape {tuple(pos.shape)} with values in [0, {neg.shape[1]}]; got "
                             f"shape {tuple(limit.shape)}")
        real = torch.arange(neg.shape[1], device=neg.device)[None, :] < limit[:, None]
    finite = torch.isfinite(pos) & (torch.isfinite(neg) | ~real).all(dim=1)
    if not bool(finite.all()):
        bad = int(torch.nonzero(~finite)[0, 0])
        raise ScoreError(f"query {bad} has a NaN or infinite score (positive {float(pos[bad])!r}); every score must "
                         "be finite: replace NaN/inf before evaluating, e.g. torch.nan_to_num(scores, nan=-1e9)")
    column = pos[:, None]
    greater = ((neg > column) & real).sum(dim=1)
    at_least = ((neg >= column) & real).sum(dim=1)
    return (1.0 + (greater + at_least).double() / 2.0).cpu().numpy()


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


def rank_metrics(pos_scores: ArrayLike, neg_scores: ArrayLike, ks: Iterable[int] = DEFAULT_KS) -> dict[str, float]:
    """One-vs-many MRR and Hits@K: ``pos_scores`` ``(B,)`` against ``neg_scores`` ``(B, Q)``.

    Equal to py-tgb 2.3.0's ``Evaluator.eval`` on the same (valid) inputs, in float64 rather than float32.

    >>> rank_metrics([0.9, 0.2], [[0.1, 0.9], [0.5, 0.7]], ks=(1,))  # ranks 1.5 and 3: (1/1.5 + 1/3) / 2
    {'mrr': 0.5, 'hits@1': 0.0}

    Raises:
        ScoreError: on mismatched shapes, a non-numeric dtype or a NaN/inf score.
    """
    return metrics_from_ranks(ranks(pos_scores, neg_scores), ks)


def filtered_ranks(scores: ArrayLike, pos_dst: ArrayLike, filter_offsets: ArrayLike, filter_indices: ArrayLike,
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


def rank_metrics_all(scores: ArrayLike, pos_dst: ArrayLike, filter_offsets: ArrayLike, filter_indices: ArrayLike,
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


# ---------------------------------------------------------------------------------------------------------------------
# Binary classification: AU-ROC and AP of positive scores against negative scores (the counterfactual TLP test)
# ---------------------------------------------------------------------------------------------------------------------


def _finite_scores(values: ArrayLike, name: str) -> np.ndarray:
    """``values`` as a finite 1-D float64 array.

    Raises:
        ScoreError: on a wrong shape or dtype, or a NaN/inf entry (the message names the first one).
    """
    array = as_scores(values, name, 1).astype(np.float64, copy=False)
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise ScoreError(f"{name}[{int(bad[0])}] is {float(array[bad[0]])!r}; every score must be finite: replace "
                         "NaN/inf before evaluating, e.g. np.nan_to_num(scores, nan=-1e9)")
    return array


def auroc(pos_scores: ArrayLike, neg_scores: ArrayLike) -> float:
    """Area under the ROC curve of ``pos_scores`` (label 1) against ``neg_scores`` (label 0), in ``[0, 1]``.

    Computed in the Mann-Whitney form, ``sum over pairs [pos > neg] + 1/2 [pos == neg]`` divided by
    ``n_pos * n_neg``: a tie counts one half, so a constant scorer gets 0.5. This equals sklearn's
    ``roc_auc_score`` on the concatenated scores and labels. ``O((n_pos + n_neg) log n_neg)``: the negatives are
    sorted once and each positive is located by binary search.

    >>> auroc([0.9, 0.5], [0.5, 0.1])  # pairs: 0.9 beats both, 0.5 beats 0.1 and ties 0.5 -> (2 + 1.5) / 4
    0.875

    Raises:
        ScoreError: if either side is empty, not 1-D, not numeric, or holds a NaN/inf score.
    """
    pos = _finite_scores(pos_scores, "pos_scores")
    neg = np.sort(_finite_scores(neg_scores, "neg_scores"))
    if pos.size == 0 or neg.size == 0:
        raise ScoreError(f"AU-ROC needs at least one positive and one negative score; got {pos.size} positive(s) and "
                         f"{neg.size} negative(s)")
    below = np.searchsorted(neg, pos, side="left")      # negatives strictly below each positive
    at_most = np.searchsorted(neg, pos, side="right")   # ... and those tied with it
    # integer counts summed exactly before the single division; halves are exact in float64
    wins = float(np.sum(below, dtype=np.int64)) + 0.5 * float(np.sum(at_most - below, dtype=np.int64))
    return wins / (float(pos.size) * float(neg.size))


def average_precision(pos_scores: ArrayLike, neg_scores: ArrayLike) -> float:
    """Average precision of ``pos_scores`` (label 1) against ``neg_scores`` (label 0), sklearn's definition.

    ``AP = sum_k (R_k - R_{k-1}) P_k`` over the distinct score values taken as thresholds from the highest down,
    with ``P_k``/``R_k`` the precision/recall of predicting "positive" for every score ``>=`` that value and
    ``R_0 = 0``: a step-wise sum, no interpolation. Tied scores form one threshold, so a tie between a positive
    and a negative is neither ranked above nor below (this equals ``sklearn.metrics.average_precision_score``). With
    no negatives AP is 1. ``O(n log n)``.

    >>> average_precision([0.9, 0.4], [0.6])  # thresholds 0.9: P=1, R=1/2; 0.6: P=1/2; 0.4: P=2/3, R=1
    0.8333333333333333

    Raises:
        ScoreError: if there is no positive score, an input is not 1-D or numeric, or a score is NaN/inf.
    """
    pos = _finite_scores(pos_scores, "pos_scores")
    neg = _finite_scores(neg_scores, "neg_scores")
    if pos.size == 0:
        raise ScoreError("average precision needs at least one positive score; got none")
    scores = np.concatenate([pos, neg])
    labels = np.concatenate([np.ones(pos.size, dtype=np.int64), np.zeros(neg.size, dtype=np.int64)])
    order = np.argsort(-scores, kind="stable")
    scores, labels = scores[order], labels[order]
    # the last index of every run of equal scores: each distinct value is one threshold
    last = np.flatnonzero(np.r_[scores[1:] != scores[:-1], True])
    true_pos = np.cumsum(labels)[last]
    predicted = last + 1
    precision = true_pos / predicted
    recall_gain = np.diff(np.r_[0, true_pos]) / pos.size
    return float(np.sum(recall_gain * precision))


def grouped_auroc_ap(group: ArrayLike, pos_scores: ArrayLike, neg_scores: ArrayLike
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group, :func:`auroc` and :func:`average_precision` of its positives against its negatives, at once.

    Query ``i`` belongs to group ``group[i]`` and contributes one positive (``pos_scores[i]``) and one negative
    (``neg_scores[i]``), as in window-based link forecasting. Returns ``(groups, auc, ap)`` for every group that
    has a query, in ascending group order. Same definitions and tie rules as the single-group functions (AUC is
    bit-identical: it is an exact ratio of counts; AP sums its steps in order, so it may differ from
    :func:`average_precision` in the last bit). ``O(n log n)`` for all groups together.

    Raises:
        ScoreError: if the arrays differ in length, are not 1-D numeric, or hold a NaN/inf score.
    """
    pos = _finite_scores(pos_scores, "pos_scores")
    neg = _finite_scores(neg_scores, "neg_scores")
    ids = np.asarray(group)
    if not (ids.ndim == 1 and len(ids) == pos.size == neg.size):
        raise ScoreError(f"group, pos_scores and neg_scores must be 1-D of one length; got {ids.shape}, {pos.shape} "
                         f"and {neg.shape}")
    groups, dense = np.unique(ids, return_inverse=True)
    dense = dense.ravel().astype(np.int64)
    n_group = np.bincount(dense, minlength=len(groups)).astype(np.float64)  # positives = negatives per group
    scores = np.concatenate([pos, neg])
    labels = np.concatenate([np.ones(pos.size), np.zeros(neg.size)])
    member = np.concatenate([dense, dense])
    # AUC: average ranks within each group (ties share the mean of their positions), Mann-Whitney U
    order = np.lexsort((scores, member))
    s, g, lab = scores[order], member[order], labels[order]
    new_run = np.r_[True, (s[1:] != s[:-1]) | (g[1:] != g[:-1])]
    run = np.cumsum(new_run) - 1
    run_first = np.flatnonzero(new_run)
    run_last = np.r_[run_first[1:], len(s)] - 1
    group_first = np.searchsorted(g, np.arange(len(groups)))
    position = np.arange(len(s), dtype=np.float64) - group_first[g]
    rank = 0.5 * (position[run_first[run]] + position[run_last[run]]) + 1.0
    rank_sum = np.bincount(g, weights=rank * lab, minlength=len(groups))
    auc = (rank_sum - n_group * (n_group + 1) / 2) / (n_group * n_group)
    # AP: thresholds at each group's distinct scores from the highest down
    order = np.lexsort((-scores, member))
    s, g, lab = scores[order], member[order], labels[order]
    last = np.r_[(s[1:] != s[:-1]) | (g[1:] != g[:-1]), True]
    true_pos = np.cumsum(lab)
    before = np.r_[0.0, true_pos][group_first[g]]  # positives of earlier groups
    tp = (true_pos - before)[last]
    predicted = (np.arange(len(s)) - group_first[g] + 1)[last].astype(np.float64)
    owner = g[last]
    previous_tp = np.r_[0.0, tp[:-1]]
    previous_tp[np.r_[True, owner[1:] != owner[:-1]]] = 0.0
    ap = np.bincount(owner, weights=(tp - previous_tp) / n_group[owner] * (tp / predicted), minlength=len(groups))
    return groups, auc, ap


# ---------------------------------------------------------------------------------------------------------------------
# ATD and ACD (TLPCF, Eqs. 6-7): distances between a reference event stream E and a candidate stream E'
# ---------------------------------------------------------------------------------------------------------------------

ATD_FALLBACKS = ("cap", "horizon_end", "error")


def _event_stream(src: ArrayLike, dst: ArrayLike, t: ArrayLike, name: str) -> Stream:
    """``(src, dst, t)`` as int64, int64 and float64 arrays of one length.

    Raises:
        ScoreError: on arrays that are not 1-D or differ in length, node ids that are not integers, timestamps that
            are not real numbers, or a NaN/inf timestamp.
    """
    arrays = [np.asarray(a) for a in (src, dst, t)]
    if any(a.ndim != 1 for a in arrays) or len({len(a) for a in arrays}) != 1:
        raise ScoreError(f"{name} needs 1-D src, dst and t of one length; got shapes "
                         f"{', '.join(str(a.shape) for a in arrays)}")
    for column, array in zip(("src", "dst"), arrays[:2], strict=True):
        # an empty list arrives as float64; with no ids there is nothing to misread
        if array.size and not np.issubdtype(array.dtype, np.integer):
            raise ScoreError(f"{name} {column} has dtype {array.dtype}; node ids must be integers. Map them to "
                             f"integer ids first, e.g. np.unique({column}, return_inverse=True)[1]")
    t = arrays[2]
    if t.dtype == np.bool_ or not (np.issubdtype(t.dtype, np.integer) or np.issubdtype(t.dtype, np.floating)):
        raise ScoreError(f"{name} t has dtype {t.dtype}; timestamps must be int64 or float64")
    t = t.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        raise ScoreError(f"{name} t[{int(bad[0])}] is {float(t[bad[0]])!r}; every timestamp must be finite. Drop "
                         "or repair that event before computing ATD/ACD")
    return arrays[0].astype(np.int64), arrays[1].astype(np.int64), t


def _pair_ids(streams: list[tuple[np.ndarray, np.ndarray]], directed: bool) -> list[np.ndarray]:
    """One dense id per (src, dst) pair shared across ``streams``; with ``directed=False`` (u, v) is (v, u).

    Sorting by (first, second) endpoint and numbering the runs is O(n log n) and never builds a ``V x V`` table.
    """
    src = np.concatenate([s for s, _ in streams])
    dst = np.concatenate([d for _, d in streams])
    if not directed:
        src, dst = np.minimum(src, dst), np.maximum(src, dst)
    order = np.lexsort((dst, src))
    new_pair = np.r_[True, (src[order][1:] != src[order][:-1]) | (dst[order][1:] != dst[order][:-1])]
    ids = np.empty(src.size, dtype=np.int64)
    ids[order] = np.cumsum(new_pair) - 1
    return np.split(ids, np.cumsum([len(s) for s, _ in streams])[:-1])


class _PairIndex:
    """Events grouped by pair and sorted by time, searchable by ``(pair, time)`` with exact comparisons.

    Every time that will ever be searched for is ranked together with the stored times (equal floats get equal
    ranks), so ``pair * n_ranks + rank`` is an int64 key whose order is the lexicographic (pair, time) order.
    ``np.searchsorted`` on it then finds, per query, the neighbours inside the query's own pair in O(log n).
    """

    def __init__(self, pair: np.ndarray, rank: np.ndarray, t: np.ndarray, n_ranks: int) -> None:
        self.n_ranks = n_ranks
        key = pair * n_ranks + rank
        order = np.argsort(key, kind="stable")
        self.key, self.pair, self.t = key[order], pair[order], t[order]

    def nearest_distance(self, pair: np.ndarray, rank: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Per query, ``min |t - t'|`` over stored events of the same pair; ``inf`` where the pair has none."""
        distance = np.full(t.size, np.inf)
        m = self.key.size
        if m == 0:
            return distance
        pos = np.searchsorted(self.key, pair * self.n_ranks + rank, side="left")
        after = np.minimum(pos, m - 1)      # first stored event at or after t, if it shares the pair
        has_after = (pos < m) & (self.pair[after] == pair)
        distance[has_after] = self.t[after][has_after] - t[has_after]
        before = np.maximum(pos - 1, 0)     # last stored event strictly before t, if it shares the pair
        has_before = (pos > 0) & (self.pair[before] == pair)
        distance[has_before] = np.minimum(distance[has_before], t[has_before] - self.t[before][has_before])
        return distance

    def count_open(self, pair: np.ndarray, rank_lo: np.ndarray, rank_hi: np.ndarray) -> np.ndarray:
        """Per query, the number of stored events of the same pair with ``lo < t' < hi`` (an open window)."""
        base = pair * self.n_ranks
        return (np.searchsorted(self.key, base + rank_hi, side="left")
                - np.searchsorted(self.key, base + rank_lo, side="right"))


def _dense_ranks(*arrays: np.ndarray) -> tuple[list[np.ndarray], int]:
    """Dense ranks of the float values of ``arrays`` taken together (equal values share a rank), and the count."""
    values, inverse = np.unique(np.concatenate(arrays), return_inverse=True)
    inverse = inverse.ravel().astype(np.int64)
    return np.split(inverse, np.cumsum([a.size for a in arrays])[:-1]), int(values.size)


def _reference_scale(t: np.ndarray) -> tuple[float, float, float]:
    """``(T, tau_bar, t_end)`` of a reference stream: span, mean inter-event time ``T / |E|`` and last timestamp.

    Raises:
        ScoreError: if the reference is empty or all its events are simultaneous (``T = 0``): both metrics divide by
            ``T`` or use windows of half-width ``T / |E|``, so they are undefined there.
    """
    if t.size == 0:
        raise ScoreError("the reference stream is empty; ATD and ACD average over reference events, so pass at "
                         "least two events at distinct times")
    span = float(t.max() - t.min())
    if span <= 0.0:
        raise ScoreError(f"every reference event happens at t = {float(t[0])!r}, so T = max t - min t = 0 and "
                         "ATD/ACD are undefined; pass a reference spanning a positive time range")
    return span, span / t.size, float(t.max())


def _clip(stream: Stream, lo: float, hi: float) -> tuple[Stream, int]:
    """The events of ``stream`` with ``lo <= t <= hi`` and how many were dropped."""
    keep = (stream[2] >= lo) & (stream[2] <= hi)
    return (stream[0][keep], stream[1][keep], stream[2][keep]), int(keep.size - np.count_nonzero(keep))


def _check_fallback(fallback: str) -> None:
    if fallback not in ATD_FALLBACKS:
        raise ScoreError(f"fallback={fallback!r} is not one of {', '.join(map(repr, ATD_FALLBACKS))}; 'cap' "
                         "(default) charges min(distance, T) per event, 'horizon_end' adds a candidate at the last "
                         "reference time, 'error' refuses reference pairs the candidate lacks")


class _AtdTerms(TypedDict):
    sum: float
    fallback_count: int
    missing_pair_count: int


def _atd_terms(ref: Stream, cand: Stream, span: float, t_end: float, fallback: str, directed: bool) -> _AtdTerms:
    """Sum over ``ref`` events of the ATD term against ``cand`` with the given scale; see :func:`atd`."""
    ref_pair, cand_pair = _pair_ids([ref[:2], cand[:2]], directed)
    (ref_rank, cand_rank), n_ranks = _dense_ranks(ref[2], cand[2])
    index = _PairIndex(cand_pair, cand_rank, cand[2], n_ranks)
    distance = index.nearest_distance(ref_pair, ref_rank, ref[2])
    missing = np.isinf(distance)
    if fallback == "cap":
        used = distance > span
        term = np.minimum(distance, span)
    elif fallback == "horizon_end":
        to_end = np.abs(t_end - ref[2])
        used = to_end < distance
        term = np.minimum(distance, to_end)
    else:
        if missing.any():
            first = int(np.flatnonzero(missing)[0])
            raise ScoreError(f"{int(missing.sum())} reference event(s) have no candidate event of their pair, the "
                             f"first is ({int(ref[0][first])}, {int(ref[1][first])}) at t = {float(ref[2][first])!r}, "
                             "and fallback='error' refuses them; use fallback='cap' or 'horizon_end' to score them")
        used = np.zeros(distance.size, dtype=bool)
        term = distance
    return {"sum": float(np.sum(term)), "fallback_count": int(np.count_nonzero(used)),
            "missing_pair_count": int(np.count_nonzero(missing))}


def _acd_terms(ref: Stream, cand: Stream, tau_bar: float, directed: bool) -> float:
    """Sum over ``ref`` events of ``| #ref - #cand |`` in the open window ``(t - tau_bar, t + tau_bar)``.

    Raises:
        ScoreError: if ``tau_bar`` is below the float64 resolution of the timestamps (the window would be empty).
    """
    lo, hi = ref[2] - tau_bar, ref[2] + tau_bar
    if np.any(lo >= ref[2]) or np.any(hi <= ref[2]):
        raise ScoreError(f"tau_bar = {tau_bar!r} is below the float64 resolution of timestamps near "
                         f"{float(np.max(np.abs(ref[2])))!r}, so the window (t - tau_bar, t + tau_bar) is empty; "
                         "subtract the first timestamp from both streams before computing ACD")
    ref_pair, cand_pair = _pair_ids([ref[:2], cand[:2]], directed)
    (ref_rank, cand_rank, lo_rank, hi_rank), n_ranks = _dense_ranks(ref[2], cand[2], lo, hi)
    real = _PairIndex(ref_pair, ref_rank, ref[2], n_ranks).count_open(ref_pair, lo_rank, hi_rank)
    other = _PairIndex(cand_pair, cand_rank, cand[2], n_ranks).count_open(ref_pair, lo_rank, hi_rank)
    return float(np.sum(np.abs(real - other)))


def _prepare(ref_src: ArrayLike, ref_dst: ArrayLike, ref_t: ArrayLike, cand_src: ArrayLike, cand_dst: ArrayLike,
             cand_t: ArrayLike, clip_to_reference_window: bool
             ) -> tuple[Stream, Stream, tuple[float, float, float], int]:
    """Validated reference and candidate streams, the reference scale and the number of clipped candidates."""
    ref = _event_stream(ref_src, ref_dst, ref_t, "reference")
    cand = _event_stream(cand_src, cand_dst, cand_t, "candidate")
    scale = _reference_scale(ref[2])
    clipped = 0
    if clip_to_reference_window:
        cand, clipped = _clip(cand, float(ref[2].min()), scale[2])
    return ref, cand, scale, clipped


def atd(ref_src: ArrayLike, ref_dst: ArrayLike, ref_t: ArrayLike, cand_src: ArrayLike, cand_dst: ArrayLike,
        cand_t: ArrayLike, *, fallback: str = "cap", directed: bool = True, clip_to_reference_window: bool = False
        ) -> dict[str, float]:
    """Average time distance ATD(E, E') of TLPCF (Eq. 6): how far each reference event is from its pair's
    nearest candidate event, normalised by the reference span.

    ``ATD = sum over (u, v, t) in E of min(|t - t'| for t' in E'_(u,v), fallback) / (T |E|)``, where
    ``T = max t - min t`` of the *reference* E. Conventions:

    - ``fallback`` reads the paper's ill-posed "``∪ {T}``" candidate (a duration used as a time): ``"cap"`` (default)
      takes ``min(d, T)``, so every term is at most ``T`` and ATD lies in ``[0, 1]``; ``"horizon_end"`` adds a candidate
      at ``t_end = max t`` of E; ``"error"`` (the authors' code) uses ``d`` alone and raises for a reference event whose
      pair has no candidate event. ``fallback_count`` counts the events whose term came from the fallback (strictly
      smaller than ``d``; ``d = inf`` for a pair missing from E'), ``missing_pair_count`` those with no candidate of
      their pair at all.
    - Pairs are ordered (u -> v); ``directed=False`` treats (u, v) and (v, u) as one pair in both streams.
    - The sum runs over E only: candidate events of pairs absent from E cost nothing, and one candidate may serve
      every reference event of its pair (no matching).
    - Timestamps are compared as float64. ``clip_to_reference_window`` drops candidate events outside the closed
      window ``[min t, max t]`` of E first (the authors dropped E' events at or below the test boundary only; for
      exact parity filter E' yourself). Without it E' is taken as given.

    Returns ``{"atd", "fallback_count", "missing_pair_count", "T", "tau_bar", "n_ref", "n_cand", "n_cand_clipped"}``
    (``n_cand`` after clipping). O((|E| + |E'|) log(|E| + |E'|)).

    Raises:
        ScoreError: on an empty reference or one with ``T = 0``, an unknown ``fallback``, malformed arrays (lengths,
            non-integer node ids, non-numeric or NaN/inf timestamps), or, with ``fallback="error"``, a reference pair
            missing from the candidate.
    """
    _check_fallback(fallback)
    ref, cand, (span, tau_bar, t_end), clipped = _prepare(ref_src, ref_dst, ref_t, cand_src, cand_dst, cand_t,
                                                           clip_to_reference_window)
    terms = _atd_terms(ref, cand, span, t_end, fallback, directed)
    return {"atd": terms["sum"] / (span * ref[2].size), "fallback_count": terms["fallback_count"],
            "missing_pair_count": terms["missing_pair_count"], "T": span, "tau_bar": tau_bar,
            "n_ref": int(ref[2].size), "n_cand": int(cand[2].size), "n_cand_clipped": clipped}


def acd(ref_src: ArrayLike, ref_dst: ArrayLike, ref_t: ArrayLike, cand_src: ArrayLike, cand_dst: ArrayLike,
        cand_t: ArrayLike, *, directed: bool = True, clip_to_reference_window: bool = False) -> dict[str, float]:
    """Average count distance ACD(E, E') of TLPCF (Eq. 7): per reference event, how many more or fewer events of
    its pair the candidate has near it.

    ``ACD = (1/|E|) sum over (u, v, t) in E of | |E_(u,v)(t - tau_bar, t + tau_bar)| - |E'_(u,v)(same)| |`` with
    ``tau_bar = T / |E|`` and ``T = max t - min t``, both from the *reference* E. Conventions:

    - Windows are open and computed in float64: ``t - tau_bar < t' < t + tau_bar``. The reference count includes the
      event itself (so it is >= 1); tied events are all counted.
    - Pairs are ordered (u -> v); ``directed=False`` treats (u, v) and (v, u) as one pair in both streams.
    - A pair absent from E' has candidate count 0; ACD needs no fallback, so ``fallback_count`` is always 0 (kept so
      the result has the same fields as :func:`atd`).
    - ``clip_to_reference_window`` drops candidate events outside ``[min t, max t]`` of E first, as in :func:`atd`.

    Returns ``{"acd", "fallback_count", "T", "tau_bar", "n_ref", "n_cand", "n_cand_clipped"}``.
    O((|E| + |E'|) log(|E| + |E'|)).

    Raises:
        ScoreError: on an empty reference or one with ``T = 0``, malformed arrays, or ``tau_bar`` below the float64
            resolution of the timestamps.
    """
    ref, cand, (span, tau_bar, _), clipped = _prepare(ref_src, ref_dst, ref_t, cand_src, cand_dst, cand_t,
                                                       clip_to_reference_window)
    total = _acd_terms(ref, cand, tau_bar, directed)
    return {"acd": total / ref[2].size, "fallback_count": 0, "T": span, "tau_bar": tau_bar,
            "n_ref": int(ref[2].size), "n_cand": int(cand[2].size), "n_cand_clipped": clipped}


def _stream_arg(stream: Mapping[str, ArrayLike] | Sequence[ArrayLike], name: str
                ) -> tuple[ArrayLike, ArrayLike, ArrayLike]:
    """``(src, dst, t)`` from a mapping with those keys or from a 3-sequence.

    Raises:
        ScoreError: if ``stream`` is neither.
    """
    if hasattr(stream, "keys"):  # a mapping, or anything with columns by name (a pandas DataFrame)
        columns = cast("Mapping[str, ArrayLike]", stream)
        missing = [k for k in ("src", "dst", "t") if k not in columns]
        if missing:
            raise ScoreError(f"{name} lacks column(s) {missing}; pass a mapping with 'src', 'dst' and 't'")
        return columns["src"], columns["dst"], columns["t"]
    if isinstance(stream, (tuple, list)) and len(stream) == 3:
        return stream[0], stream[1], stream[2]
    raise ScoreError(f"{name} must be a mapping with 'src', 'dst', 't' or a (src, dst, t) tuple; got "
                     f"{type(stream).__name__}")


def generative_scores(reference: Mapping[str, ArrayLike] | Sequence[ArrayLike],
                      candidate: Mapping[str, ArrayLike] | Sequence[ArrayLike], *, fallback: str = "cap",
                      directed: bool = True, clip_to_reference_window: bool = False) -> dict[str, float]:
    """ATD and ACD of a generated event set against the real one, both ways (docs/derived.md, "Generative evaluation").

    ``reference`` (E, the real test split) and ``candidate`` (Ê, the predicted events) are mappings with ``src``,
    ``dst``, ``t`` or ``(src, dst, t)`` tuples. Reported:

    - ``atd``/``acd``: the paper's direction, ATD(E, Ê) and ACD(E, Ê) (recall-like: sums over real events);
    - ``atd_reverse``/``acd_reverse``: sums over the candidate's events against E (precision-like: penalises
      over-generation). They use the *reference's* ``T``, ``tau_bar`` and horizon end, not the candidate's, so both
      directions are on one scale and a degenerate candidate (all at one time) still gets a score;
    - ``atd_symmetric``/``acd_symmetric``: the mean of the two directions (the CES follow-up's idea, with the
      paper's normalisation);
    - ``count_ratio`` = |Ê| / |E|; ``fallback_count``/``fallback_count_reverse`` and ``missing_pair_count``/
      ``missing_pair_count_reverse`` (see :func:`atd`); ``T``, ``tau_bar``, ``n_ref``, ``n_cand``,
      ``n_cand_clipped``.

    An empty candidate gives ``atd`` 1 under ``"cap"`` and NaN for the reverse and symmetric values (an average over
    no events). Options are those of :func:`atd`; ``clip_to_reference_window`` applies before both directions.

    Raises:
        ScoreError: as :func:`atd` and :func:`acd`; with ``fallback="error"`` also when a candidate pair is absent
            from the reference (the reverse direction needs it).
    """
    _check_fallback(fallback)
    ref, cand, (span, tau_bar, t_end), clipped = _prepare(*_stream_arg(reference, "reference"),
                                                           *_stream_arg(candidate, "candidate"),
                                                           clip_to_reference_window)
    n_ref, n_cand = int(ref[2].size), int(cand[2].size)
    forward = _atd_terms(ref, cand, span, t_end, fallback, directed)
    backward = _atd_terms(cand, ref, span, t_end, fallback, directed)
    out = {"atd": forward["sum"] / (span * n_ref), "acd": _acd_terms(ref, cand, tau_bar, directed) / n_ref}
    if n_cand:
        out["atd_reverse"] = backward["sum"] / (span * n_cand)
        out["acd_reverse"] = _acd_terms(cand, ref, tau_bar, directed) / n_cand
    else:
        out["atd_reverse"] = out["acd_reverse"] = float("nan")
    out["atd_symmetric"] = 0.5 * (out["atd"] + out["atd_reverse"])
    out["acd_symmetric"] = 0.5 * (out["acd"] + out["acd_reverse"])
    out.update(count_ratio=n_cand / n_ref, fallback_count=forward["fallback_count"],
               fallback_count_reverse=backward["fallback_count"], missing_pair_count=forward["missing_pair_count"],
               missing_pair_count_reverse=backward["missing_pair_count"], T=span, tau_bar=tau_bar, n_ref=n_ref,
               n_cand=n_cand, n_cand_clipped=clipped)
    return out
