"""Benchmark-level views over many instances (ChaosNetBench section 4.6): the validity screen, robustness counts,
fractional wins, and the two pairwise tests (Wilcoxon signed-rank on conditional accuracy, exact McNemar on
robustness). Pure functions over result records; no scipy needed (the tests compare them with scipy's defaults).

A record is a mapping with ``model``, ``instance``, ``test_mse`` and ``vpt`` (seed means, as in the published CSV)
plus any grouping keys (e.g. ``K``). A run is *valid* when its ``test_mse`` is below the threshold (0.95).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from itertools import product
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from tgbhub.errors import ScoreError

VALIDITY_THRESHOLD = 0.95
#: one (model, instance) result record: JSON values read from a CSV or a result file
Record = Mapping[str, Any]
#: an instance id or a value of a grouping key, as a record holds it (``"total"`` beside them)
Key = Hashable


def is_valid(record: Record, threshold: float = VALIDITY_THRESHOLD) -> bool:
    """The validity screen: seed-mean teacher-forced test MSE below ``threshold``."""
    return float(record["test_mse"]) < threshold


def _by_instance(records: Iterable[Record]) -> dict[Key, dict[str, Record]]:
    table: dict[Key, dict[str, Record]] = defaultdict(dict)
    for record in records:
        if record["model"] in table[record["instance"]]:
            raise ScoreError(f"model {record['model']!r} has two records for instance {record['instance']!r}; "
                             "aggregate seeds into one record per (model, instance) first")
        table[record["instance"]][record["model"]] = record
    return table


def robustness_counts(records: Iterable[Record], by: str | None = None,
                      threshold: float = VALIDITY_THRESHOLD) -> dict[str, dict[Key, int]]:
    """Valid instances per model, per value of ``by`` (e.g. ``"K"``) and in ``"total"``."""
    counts: dict[str, dict[Key, int]] = defaultdict(lambda: defaultdict(int))
    for record in records:
        valid = int(is_valid(record, threshold))
        counts[record["model"]]["total"] += valid
        if by is not None:
            counts[record["model"]][record[by]] += valid
    return {model: dict(groups) for model, groups in counts.items()}


def fractional_wins(records: Iterable[Record], by: str | None = None, threshold: float = VALIDITY_THRESHOLD,
                    exclude: Sequence[str] = (), min_valid: int = 2) -> tuple[dict[str, dict[Key, float]], int]:
    """Wins per model over the instances where at least ``min_valid`` (non-excluded) models are valid; the highest
    VPT among the valid models wins, and ties split the win equally. Returns ``(wins, scored instances)``."""
    wins: dict[str, dict[Key, float]] = defaultdict(lambda: defaultdict(float))
    scored = 0
    for models in _by_instance(records).values():
        valid = {m: r for m, r in models.items() if m not in exclude and is_valid(r, threshold)}
        if len(valid) < min_valid:
            continue
        scored += 1
        best = max(float(r["vpt"]) for r in valid.values())
        leaders = [m for m, r in valid.items() if float(r["vpt"]) == best]
        for model in leaders:
            share = 1.0 / len(leaders)
            wins[model]["total"] += share
            if by is not None:
                wins[model][valid[model][by]] += share
    return {model: dict(groups) for model, groups in wins.items()}, scored


def _average_ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values))
    ties = []
    start = 0
    sorted_values = values[order]
    while start < len(values):
        stop = start
        while stop + 1 < len(values) and sorted_values[stop + 1] == sorted_values[start]:
            stop += 1
        ranks[order[start:stop + 1]] = (start + stop) / 2 + 1
        ties.append(stop - start + 1)
        start = stop + 1
    return ranks, np.asarray(ties, dtype=np.float64)


def _exact_signed_rank_counts(n: int) -> np.ndarray:
    """How many sign patterns of ranks 1..n give each W+ in 0..n(n+1)/2."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1
    for rank in range(1, n + 1):
        counts[rank:] = counts[rank:] + counts[:-rank].copy()
    return counts


def wilcoxon_signed_rank(a: ArrayLike, b: ArrayLike) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test of ``a - b``, with scipy's defaults: zeros dropped,
    exact null distribution without ties or zeros (n <= 50), exact sign-flip enumeration with ties or zeros for
    n <= 13, else the normal approximation with tie correction and no continuity correction.

    Raises:
        ScoreError: if the samples differ in length or hold NaN.
    """
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or np.isnan(x).any() or np.isnan(y).any():
        raise ScoreError(f"paired samples must have one length and no NaN, got {x.shape} and {y.shape}")
    d = x - y
    zeros = int(np.count_nonzero(d == 0))
    nonzero = d[d != 0]
    n = len(nonzero)
    if n == 0:
        return 1.0  # no non-zero difference: no evidence either way (scipy's permutation test gives 1.0 too)
    ranks, ties = _average_ranks(np.abs(nonzero))
    r_plus = float(ranks[nonzero > 0].sum())
    tied = bool((ties > 1).any())
    if len(d) <= 50 and not tied and zeros == 0:
        counts = _exact_signed_rank_counts(n)
        total = counts.sum()
        k = int(round(r_plus))
        return float(min(1.0, 2 * min(counts[:k + 1].sum(), counts[k:].sum()) / total))
    if len(d) <= 13:
        signs = np.array(list(product((1.0, -1.0), repeat=n)))
        null = (signs > 0) @ ranks
        gamma = abs(1e-14 * r_plus)
        less = np.mean(null <= r_plus + gamma)
        greater = np.mean(null >= r_plus - gamma)
        return float(min(1.0, 2 * min(less, greater)))
    mean = n * (n + 1) / 4
    se = math.sqrt((n * (n + 1) * (2 * n + 1) - float(np.sum(ties ** 3 - ties)) / 2) / 24)
    z = (r_plus - mean) / se
    return float(math.erfc(abs(z) / math.sqrt(2)))


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value: a binomial(a_only + b_only, 1/2) test on the discordant pairs."""
    total = a_only + b_only
    if total == 0:
        return 1.0
    tail = sum(math.comb(total, k) for k in range(min(a_only, b_only) + 1)) / 2 ** total
    return float(min(1.0, 2 * tail))


def pairwise(records: Iterable[Record], model_a: str, model_b: str,
             threshold: float = VALIDITY_THRESHOLD) -> dict[str, float]:
    """Head-to-head of two models: conditional accuracy on the instances where both are valid (wins, ties,
    Wilcoxon p on VPT) and robustness over all shared instances (valid-only counts, McNemar p).

    Raises:
        ScoreError: if the models share no instance.
    """
    both, a_only, b_only, neither = [], 0, 0, 0
    for models in _by_instance(records).values():
        if model_a not in models or model_b not in models:
            continue
        a, b = models[model_a], models[model_b]
        valid_a, valid_b = is_valid(a, threshold), is_valid(b, threshold)
        if valid_a and valid_b:
            both.append((float(a["vpt"]), float(b["vpt"])))
        a_only += valid_a and not valid_b
        b_only += valid_b and not valid_a
        neither += not (valid_a or valid_b)
    if not both and not (a_only or b_only or neither):
        raise ScoreError(f"models {model_a!r} and {model_b!r} share no instance")
    vpt_a = np.array([x for x, _ in both])
    vpt_b = np.array([y for _, y in both])
    return {"both_valid": len(both), "a_wins": int(np.sum(vpt_a > vpt_b)), "b_wins": int(np.sum(vpt_b > vpt_a)),
            "ties": int(np.sum(vpt_a == vpt_b)),
            "wilcoxon_p": wilcoxon_signed_rank(vpt_a, vpt_b) if both else float("nan"),
            "a_only": a_only, "b_only": b_only, "neither": neither, "mcnemar_p": mcnemar_exact(a_only, b_only)}
