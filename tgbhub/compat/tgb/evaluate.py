"""py-tgb's ``Evaluator`` (``tgb.linkproppred.evaluate`` and ``tgb.nodeproppred.evaluate``) with py-tgb's arithmetic
and return types, computed in numpy: nothing is compiled on the first call, so it costs what every later call does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tgbhub.compat.tgb.samplers import ArrayInput
from tgbhub.compat.tgb.views import entry
from tgbhub.errors import ScoreError
from tgbhub.evaluate.metrics import as_scores
from tgbhub.evaluate.nodeprop import DEFAULT_K as NDCG_K, ndcg_rows


class Evaluator:
    """py-tgb's ``Evaluator``, link (``tgb.linkproppred.evaluate``) or node (``tgb.nodeproppred.evaluate``) as TGB's
    ``name`` is graded; a script imports this one class for either.

    Link datasets (tgbl, tkgl, thgl; ``Evaluator(name, k_value=10)``): ``eval({"y_pred_pos", "y_pred_neg",
    "eval_metric"})`` returns ``{"hits@<k>", "mrr"}`` as numpy float32 scalars, py-tgb's values bit for bit: the
    average-tie rank ``1 + (#neg > pos + #neg >= pos) / 2``, then ``1 / rank`` and ``rank <= k`` in float32,
    averaged in float32. ``y_pred_pos`` is ``(B,)`` (or ``(B, 1)``) and ``y_pred_neg`` ``(B, Q)``; a single query
    may pass its negatives as ``(Q,)``, as TGB's examples do.

    Node datasets (tgbn; ``Evaluator(name)``): ``eval({"y_true", "y_pred", "eval_metric": ["ndcg"]})`` returns
    ``{"ndcg": float}``, py-tgb's ``sklearn.metrics.ndcg_score(y_true, y_pred, k=10)`` (equal up to 1e-12;
    :func:`tgbhub.evaluate.nodeprop.ndcg_rows`) on ``(N, C)`` label vectors and class scores.

    Both are plain numpy (no compiled kernel), so the first call costs what later ones do. Unlike py-tgb, a NaN or
    infinite score and any other shape raise :class:`~tgbhub.errors.ScoreError`. numpy arrays, torch tensors (any
    device; moved to the CPU, as py-tgb does) and sequences are accepted.

    Raises (on construction):
        DatasetNotFoundError: if TGB has no such dataset (suggesting close names).
        ScoreError: if ``k_value`` is not a positive integer.
    """

    def __init__(self, name: str, k_value: int = 10) -> None:
        item = entry(name)
        if isinstance(k_value, bool) or not isinstance(k_value, (int, np.integer)) or k_value < 1:
            raise ScoreError(f"k_value must be a positive integer (hits@k); got {k_value!r}")
        self.name = name
        self.k_value = int(k_value)
        self.metric = item.eval_metric
        self.valid_metric_list = ["ndcg"] if item.eval_metric == "ndcg" else ["hits@", "mrr"]
        self.eval_metric: list[str] = []

    def eval(self, input_dict: Mapping[str, Any], verbose: bool = False) -> dict[str, Any]:
        """Link datasets: ``{"hits@<k>", "mrr"}`` (numpy float32), MRR and Hits@k of the positives among their
        negatives (macro average over queries). Node datasets: ``{"ndcg": float}``, NDCG@10 of the class scores
        against the label vectors (mean over rows); ``verbose`` prints it, as py-tgb's node evaluator does.

        Raises:
            ScoreError: for a missing key, an unknown metric name, shapes other than the ones above, a non-numeric
                dtype or a NaN/inf score (naming the first bad query or row); for NDCG also a negative label.
        """
        if self.metric != "ndcg":
            self.eval_metric = _metric_names(input_dict, {"mrr", "hits@", f"hits@{self.k_value}"})
            return pytgb_hits_and_mrr(*_score_arrays(input_dict), self.k_value)
        self.eval_metric = _metric_names(input_dict, {"ndcg"})
        y_true, y_pred = _ndcg_arrays(input_dict)
        result = {"ndcg": float(np.mean(ndcg_rows(y_true, y_pred, NDCG_K)))}
        if verbose:
            print("INFO: Evaluation Results:")
            print(f"\t>>> ndcg: {result['ndcg']:.4f}")
        return result


def pytgb_hits_and_mrr(pos: np.ndarray, neg: np.ndarray, k: int) -> dict[str, np.float32]:
    """py-tgb's ``{"hits@<k>", "mrr"}`` of ``(B,)`` positive scores among ``(B, Q)`` negatives: the average-tie rank,
    its reciprocal and ``rank <= k`` as float32 arrays, each averaged by numpy in float32 (so the value is py-tgb's
    bit for bit).

    Raises:
        ScoreError: if there is no query.
    """
    if pos.size == 0:
        raise ScoreError("no queries to rank; pass at least one positive score")
    column = pos.reshape(-1, 1)
    rank = 0.5 * ((neg > column).sum(axis=1) + (neg >= column).sum(axis=1)) + 1
    hits = (rank <= k).astype(np.float32)
    reciprocal = 1.0 / rank.astype(np.float32)
    return {f"hits@{k}": hits.mean(), "mrr": reciprocal.mean()}


def _metric_names(input_dict: Mapping[str, Any], allowed: set[str]) -> list[str]:
    """The ``eval_metric`` list of an input dict: py-tgb's names among ``allowed`` (``mrr``, ``hits@``,
    ``hits@<k>``; ``ndcg``).

    Raises:
        ScoreError: if it is missing or names another metric.
    """
    if not isinstance(input_dict, Mapping) or "eval_metric" not in input_dict:
        raise ScoreError(f"the input dict has no 'eval_metric'; add 'eval_metric': [{sorted(allowed)[-1]!r}]")
    names = list(input_dict["eval_metric"])
    unknown = [name for name in names if name not in allowed]
    if unknown:
        raise ScoreError(f"unsupported eval_metric {unknown}; use one or more of {sorted(allowed)}")
    return names


def _score_arrays(input_dict: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """``y_pred_pos`` as ``(B,)`` and ``y_pred_neg`` as ``(B, Q)`` numeric arrays.

    Raises:
        ScoreError: for a missing key, a non-numeric dtype, shapes that are not ``(B,)``/``(B, 1)`` against
            ``(B, Q)`` (or one positive against ``(Q,)``), or a NaN/inf score (naming the first such query).
    """
    missing = [key for key in ("y_pred_pos", "y_pred_neg") if key not in input_dict]
    if missing:
        raise ScoreError(f"the input dict lacks {', '.join(missing)}; pass the positive scores (B,) as 'y_pred_pos' "
                         "and the negative scores (B, Q) as 'y_pred_neg'")
    raw_pos, raw_neg = (_numpy(input_dict[key]) for key in ("y_pred_pos", "y_pred_neg"))
    pos = raw_pos.reshape(-1) if raw_pos.ndim == 0 or (raw_pos.ndim == 2 and raw_pos.shape[1] == 1) else raw_pos
    neg = raw_neg.reshape(1, -1) if raw_neg.ndim == 1 and pos.shape == (1,) else raw_neg
    if pos.ndim != 1 or neg.ndim != 2 or neg.shape[0] != pos.shape[0]:
        raise ScoreError(f"y_pred_pos has shape {raw_pos.shape} and y_pred_neg {raw_neg.shape}; expected (B,) and "
                         "(B, Q): one row of negative scores per positive (a single positive may pass its negatives "
                         "as (Q,)). py-tgb would broadcast these shapes into a meaningless MRR")
    pos, neg = as_scores(pos, "y_pred_pos", 1), as_scores(neg, "y_pred_neg", 2)
    bad = ~np.isfinite(pos) | ~np.isfinite(neg).all(axis=1)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ScoreError(f"query {first} has a NaN or infinite score (positive {pos[first]!r}); every score must be "
                         "finite: replace NaN/inf before evaluating, e.g. np.nan_to_num(scores, nan=-1e9)")
    return pos, neg


def _ndcg_arrays(input_dict: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """``y_true`` (non-negative label vectors) and ``y_pred`` (finite class scores) as ``(N, C)`` float arrays.

    Raises:
        ScoreError: for a missing key, a non-numeric dtype, shapes that are not one ``(N, C)`` with ``N >= 1`` and
            ``C >= 2`` (sklearn's requirement), a NaN or infinite value, or a negative label (naming the row).
    """
    missing = [key for key in ("y_true", "y_pred") if key not in input_dict]
    if missing:
        raise ScoreError(f"the input dict lacks {', '.join(missing)}; pass the label vectors (N, C) as 'y_true' and "
                         "the class scores (N, C) as 'y_pred'")
    raw = {key: _numpy(input_dict[key]) for key in ("y_true", "y_pred")}
    shapes = {key: values.shape for key, values in raw.items()}
    if len(set(shapes.values())) != 1 or raw["y_true"].ndim != 2 or min(raw["y_true"].shape) < 1 or \
            raw["y_true"].shape[1] < 2:
        raise ScoreError(f"y_true has shape {shapes['y_true']} and y_pred {shapes['y_pred']}; expected one shape "
                         "(N, C): a row per node, a column per class (at least 2), as find_next_labels_batch hands "
                         "the labels out")
    arrays = {key: as_scores(values, key, 2) for key, values in raw.items()}
    for key, values in arrays.items():
        bad = ~np.isfinite(values).all(axis=1)
        if bad.any():
            raise ScoreError(f"{key} row {int(np.flatnonzero(bad)[0])} holds a NaN or infinite value; every value "
                             "must be finite: replace NaN/inf before evaluating, e.g. np.nan_to_num(y_pred, "
                             "nan=-1e9, posinf=1e9, neginf=-1e9)")
    negative = (arrays["y_true"] < 0).any(axis=1)
    if negative.any():
        raise ScoreError(f"y_true row {int(np.flatnonzero(negative)[0])} holds a negative label; NDCG grades "
                         "non-negative relevances (sklearn refuses these too): pass the label vectors as y_true")
    return arrays["y_true"], arrays["y_pred"]


def _numpy(values: ArrayInput) -> np.ndarray:
    if hasattr(values, "detach"):  # torch tensor, without importing torch
        values = values.detach().cpu().numpy()
    return np.asarray(values)
