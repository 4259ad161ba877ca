"""Binary AU-ROC/AP and the TLPCF stream distances ATD/ACD: hand-computed cases, an O(n^2) reference
implementation on random streams, exact invariants, and strict input checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tgbhub.errors import ScoreError
from tgbhub.evaluate.metrics import acd, atd, auroc, average_precision, generative_scores

# ---------------------------------------------------------------------------------------------------------------------
# AU-ROC and AP
# ---------------------------------------------------------------------------------------------------------------------


def test_auroc_hand_cases() -> None:
    # pairs (pos, neg): 0.9 beats 0.5 and 0.1; 0.5 ties 0.5 (1/2) and beats 0.1 -> (2 + 1.5) / 4
    assert auroc([0.9, 0.5], [0.5, 0.1]) == 0.875
    assert auroc([1.0, 1.0], [1.0, 1.0, 1.0]) == 0.5   # a constant scorer is a coin flip, not perfect
    assert auroc([0.1], [0.2, 0.3]) == 0.0
    assert auroc([3], [1, 2]) == 1.0                     # integer scores are fine
    assert type(auroc([0.9], [0.1])) is float


def test_average_precision_hand_cases() -> None:
    # thresholds from the top: 0.9 -> P = 1, R = 1/2; 0.6 -> P = 1/2 (no recall gain); 0.4 -> P = 2/3, R = 1
    assert average_precision([0.9, 0.4], [0.6]) == pytest.approx(0.5 * 1 + 0.5 * 2 / 3, rel=1e-15)
    # a tie is one threshold: at 0.5 both positives and one negative are in -> P = 2/3 for the whole recall
    assert average_precision([0.5, 0.5], [0.5, 0.1]) == pytest.approx(2 / 3, rel=1e-15)
    # positive 0.9 first (P = 1, R = 1/2), then the tie at 0.5 (P = 2/3, R = 1): 1/2 + 1/3
    assert average_precision([0.9, 0.5], [0.5]) == pytest.approx(5 / 6, rel=1e-15)
    assert average_precision([0.2, 0.3], []) == 1.0   # no negatives: every threshold has precision 1
    assert average_precision([0.1], [0.2, 0.3, 0.4]) == 0.25


def test_binary_metrics_match_sklearn() -> None:
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    for trial in range(40):
        n_pos, n_neg = rng.integers(1, 60, 2)
        pos = rng.normal(0.5, 1.0, n_pos)
        neg = rng.normal(0.0, 1.0, n_neg)
        if trial % 2:   # coarse scores: many ties within and across the classes
            pos, neg = np.round(pos, 0), np.round(neg, 0)
        labels = np.r_[np.ones(n_pos), np.zeros(n_neg)]
        scores = np.r_[pos, neg]
        assert auroc(pos, neg) == pytest.approx(sk.roc_auc_score(labels, scores), rel=1e-12)
        assert average_precision(pos, neg) == pytest.approx(sk.average_precision_score(labels, scores), rel=1e-12)


def test_binary_metrics_order_invariance() -> None:
    rng = np.random.default_rng(5)
    pos, neg = np.round(rng.normal(1, 1, 50), 1), np.round(rng.normal(0, 1, 70), 1)
    assert auroc(pos, neg) == auroc(rng.permutation(pos), rng.permutation(neg))
    assert average_precision(pos, neg) == pytest.approx(average_precision(rng.permutation(pos),
                                                                          rng.permutation(neg)), rel=1e-15)
    # AU-ROC is 1 - AU-ROC with the classes swapped
    assert auroc(neg, pos) == pytest.approx(1 - auroc(pos, neg), rel=1e-15)


@pytest.mark.parametrize("metric", [auroc, average_precision])
@pytest.mark.parametrize("pos, neg, message", [
    ([0.5, np.nan], [0.1], r"pos_scores\[1\] is nan"),
    ([0.5], [np.inf], r"neg_scores\[0\] is inf"),
    ([[0.5]], [0.1], "expected 1 dimension"),
    (np.array([True]), [0.1], "dtype bool"),
    ([], [0.1], "at least one positive"),
])
def test_binary_metrics_refuse_bad_inputs(metric, pos, neg, message: str) -> None:
    with pytest.raises(ScoreError, match=message):
        metric(pos, neg)


def test_auroc_needs_a_negative() -> None:
    with pytest.raises(ScoreError, match="0 negative"):
        auroc([0.5], [])


# ---------------------------------------------------------------------------------------------------------------------
# ATD / ACD: hand-computed cases
# ---------------------------------------------------------------------------------------------------------------------

# Reference E: n = 5, T = 12 - 0 = 12, tau_bar = 12 / 5 = 2.4, t_end = 12. Two simultaneous (0, 1) events at t = 0.
REF = ([0, 0, 0, 1, 2], [1, 1, 1, 0, 3], [0, 0, 3, 4, 12])
# Candidate E': pair (0, 1) at 1, 2.5, 2.5; pair (1, 0) at 9, 10; a pair (5, 6) that E does not have.
CAND = ([0, 0, 0, 1, 1, 5], [1, 1, 1, 0, 0, 6], [1.0, 2.5, 2.5, 9.0, 10.0, 6.0])


def test_atd_hand_case_directed() -> None:
    # nearest same-pair distances: t=0 -> 1, t=0 -> 1, t=3 -> 0.5, (1,0) t=4 -> 5 (from 9), (2,3) -> none
    out = atd(*REF, *CAND)   # cap: the missing pair costs T = 12
    assert out["atd"] == pytest.approx((1 + 1 + 0.5 + 5 + 12) / (12 * 5), rel=1e-15)   # 0.325
    assert (out["fallback_count"], out["missing_pair_count"]) == (1, 1)
    assert (out["T"], out["tau_bar"], out["n_ref"], out["n_cand"], out["n_cand_clipped"]) == (12.0, 2.4, 5, 6, 0)
    # horizon_end: an extra candidate at t_end = 12 for every event; only (2, 3) at t = 12 uses it (distance 0)
    out = atd(*REF, *CAND, fallback="horizon_end")
    assert out["atd"] == pytest.approx((1 + 1 + 0.5 + 5 + 0) / 60, rel=1e-15)          # 0.125
    assert out["fallback_count"] == 1
    with pytest.raises(ScoreError, match=r"1 reference event\(s\) have no candidate.*\(2, 3\) at t = 12\.0"):
        atd(*REF, *CAND, fallback="error")


def test_atd_hand_case_undirected() -> None:
    # (0, 1) and (1, 0) are one pair: the event (1, 0) at t = 4 now finds 2.5 (distance 1.5)
    out = atd(*REF, *CAND, directed=False)
    assert out["atd"] == pytest.approx((1 + 1 + 0.5 + 1.5 + 12) / 60, rel=1e-15)
    assert out["fallback_count"] == 1


def test_acd_hand_case() -> None:
    # open windows of half-width 2.4; the reference count includes the event and its tie
    #   (0,1) t=0: (-2.4, 2.4) real {0, 0} = 2, cand {1} = 1            -> 1   (twice: the tie)
    #   (0,1) t=3: (0.6, 5.4)  real {3} = 1,    cand {1, 2.5, 2.5} = 3  -> 2
    #   (1,0) t=4: (1.6, 6.4)  real {4} = 1,    cand {} (9, 10 outside) -> 1
    #   (2,3) t=12:            real 1,          cand 0                  -> 1
    out = acd(*REF, *CAND)
    assert out["acd"] == pytest.approx(6 / 5, rel=1e-15)
    assert (out["fallback_count"], out["T"], out["tau_bar"], out["n_ref"], out["n_cand"]) == (0, 12.0, 2.4, 5, 6)
    # undirected: t=0 -> |2 - 1| = 1 (twice); t=3 -> real {3, 4} vs cand {1, 2.5, 2.5}: 1;
    #             t=4 -> real {3, 4} vs cand {2.5, 2.5}: 0; t=12 -> 1
    assert acd(*REF, *CAND, directed=False)["acd"] == pytest.approx(4 / 5, rel=1e-15)


def test_acd_window_is_open() -> None:
    # E: (0,1) at 0 and 10 -> T = 10, tau_bar = 5. A candidate exactly at t + tau_bar = 5 is outside both windows.
    ref = ([0, 0], [1, 1], [0, 10])
    assert acd(*ref, [0], [1], [5])["acd"] == 1.0                # each event: |1 - 0|
    assert acd(*ref, [0], [1], [4.999])["acd"] == 0.5            # inside the first window only
    # the reference events are 2 tau_bar apart: neither counts the other
    assert acd(*ref, *ref)["acd"] == 0.0


def test_atd_fallbacks_when_the_pair_exists_but_is_far() -> None:
    # E: (0,1) at 0 and 10 (T = 10); E': (0,1) at 100 -> distances 100 and 90
    ref, cand = ([0, 0], [1, 1], [0, 10]), ([0], [1], [100])
    capped = atd(*ref, *cand)
    assert (capped["atd"], capped["fallback_count"], capped["missing_pair_count"]) == (1.0, 2, 0)
    horizon = atd(*ref, *cand, fallback="horizon_end")      # t_end = 10: terms min(100, 10), min(90, 0)
    assert (horizon["atd"], horizon["fallback_count"]) == (0.5, 2)
    raw = atd(*ref, *cand, fallback="error")                # the authors' code: no cap, so ATD can exceed 1
    assert (raw["atd"], raw["fallback_count"]) == ((100 + 90) / 20, 0)
    # clipping to [0, 10] removes the far candidate, so the pair is now missing
    clipped = atd(*ref, *cand, clip_to_reference_window=True)
    assert (clipped["atd"], clipped["n_cand"], clipped["n_cand_clipped"], clipped["missing_pair_count"]) == \
        (1.0, 0, 1, 2)
    with pytest.raises(ScoreError, match="fallback='error'"):
        atd(*ref, *cand, fallback="error", clip_to_reference_window=True)
    assert acd(*ref, [0, 0], [1, 1], [-1, 20], clip_to_reference_window=True)["n_cand_clipped"] == 2


def test_generative_scores_hand_case() -> None:
    # E: (1,2) at 0 and 10, (2,3) at 20 -> T = 20, tau_bar = 20/3. Ê: (1,2) at 4.
    reference = {"src": [1, 1, 2], "dst": [2, 2, 3], "t": [0, 10, 20]}
    out = generative_scores(reference, ([1], [2], [4]))
    assert out["atd"] == pytest.approx((4 + 6 + 20) / (20 * 3), rel=1e-15)   # (2,3) missing: capped at T
    # windows (t - 20/3, t + 20/3): t=0 real 1 vs {4} 1; t=10 real 1 vs {4} 1; t=20 real 1 vs 0
    assert out["acd"] == pytest.approx(1 / 3, rel=1e-15)
    # reverse, with the reference's T and tau_bar: Ê's event at 4 is 4 from E's (1,2) at 0;
    # its window (-2.67, 10.67) holds 1 event of Ê and 2 of E (0 and 10)
    assert out["atd_reverse"] == pytest.approx(4 / 20, rel=1e-15)
    assert out["acd_reverse"] == 1.0
    assert out["atd_symmetric"] == pytest.approx(0.35, rel=1e-15)
    assert out["acd_symmetric"] == pytest.approx(2 / 3, rel=1e-15)
    assert out["count_ratio"] == pytest.approx(1 / 3)
    assert (out["fallback_count"], out["fallback_count_reverse"], out["missing_pair_count"]) == (1, 0, 1)
    assert (out["T"], out["n_ref"], out["n_cand"]) == (20.0, 3, 1)
    assert out["tau_bar"] == pytest.approx(20 / 3, rel=1e-15)


def test_generative_scores_of_an_empty_candidate() -> None:
    out = generative_scores(([0, 0], [1, 1], [0, 10]), ([], [], []))
    assert out["atd"] == 1.0 and out["acd"] == 1.0 and out["count_ratio"] == 0.0
    assert math.isnan(out["atd_reverse"]) and math.isnan(out["acd_symmetric"])


def test_generative_scores_error_fallback_checks_both_directions() -> None:
    # every reference pair is covered, but the candidate invents (7, 8): the reverse direction refuses it
    with pytest.raises(ScoreError, match=r"\(7, 8\)"):
        generative_scores(([0, 0], [1, 1], [0, 10]), ([0, 7], [1, 8], [1, 5]), fallback="error")


# ---------------------------------------------------------------------------------------------------------------------
# ATD / ACD against an O(|E| |E'|) reference implementation
# ---------------------------------------------------------------------------------------------------------------------


def _key(u: int, v: int, directed: bool) -> tuple[int, int]:
    return (u, v) if directed else (min(u, v), max(u, v))


def brute_atd(ref, cand, fallback: str, directed: bool) -> tuple[float, int]:
    """ATD by a double loop: the definition with each fallback spelled out, plus how many terms used it."""
    t_ref = [float(t) for t in ref[2]]
    span, t_end = max(t_ref) - min(t_ref), max(t_ref)
    total, used = 0.0, 0
    for u, v, t in zip(ref[0], ref[1], t_ref):
        key = _key(u, v, directed)
        d = min((abs(t - float(c)) for a, b, c in zip(*cand) if _key(a, b, directed) == key), default=math.inf)
        alternative = {"cap": span, "horizon_end": abs(t_end - t), "error": math.inf}[fallback]
        if fallback == "error" and math.isinf(d):
            raise ScoreError("missing pair")
        used += alternative < d
        total += min(d, alternative)
    return total / (span * len(t_ref)), used


def brute_acd(ref, cand, directed: bool) -> float:
    """ACD by a double loop with open windows t - tau_bar < t' < t + tau_bar."""
    t_ref = [float(t) for t in ref[2]]
    tau = (max(t_ref) - min(t_ref)) / len(t_ref)
    total = 0
    for u, v, t in zip(ref[0], ref[1], t_ref):
        key = _key(u, v, directed)
        lo, hi = t - tau, t + tau
        real = sum(1 for a, b, c in zip(ref[0], ref[1], t_ref) if _key(a, b, directed) == key and lo < c < hi)
        other = sum(1 for a, b, c in zip(*cand) if _key(a, b, directed) == key and lo < float(c) < hi)
        total += abs(real - other)
    return total / len(t_ref)


def random_streams(seed: int) -> tuple[tuple, tuple]:
    """A reference with integer times (many ties, few nodes so pairs repeat) and a candidate that keeps some
    events, jitters others, drops pairs, adds new ones and reaches outside the reference window."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 80))
    src, dst = rng.integers(0, 5, n), rng.integers(0, 5, n)
    t = rng.integers(0, 40, n)
    if seed % 2 == 0:   # span 2n, so tau_bar = 2 exactly: integer events land on the open windows' edges
        t = rng.integers(0, 2 * n + 1, n)
        t[0], t[-1] = 0, 2 * n
    keep = rng.random(n) < 0.6
    jitter = np.where(rng.random(n) < 0.5, 0.0, rng.uniform(-6, 6, n))
    extra = int(rng.integers(0, 20))
    cand_src = np.r_[src[keep], rng.integers(0, 6, extra)]
    cand_dst = np.r_[dst[keep], rng.integers(0, 6, extra)]
    cand_t = np.r_[t[keep] + jitter[keep], rng.uniform(-20, 60, extra)]
    if seed % 3 == 0:   # integer timestamps on both sides: exact window-boundary hits happen
        cand_t = np.round(cand_t).astype(np.int64)
    return (src, dst, t), (cand_src, cand_dst, cand_t)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("directed", [True, False])
def test_atd_and_acd_match_brute_force(seed: int, directed: bool) -> None:
    ref, cand = random_streams(seed)
    if np.ptp(ref[2]) == 0:
        pytest.skip("degenerate draw")
    for fallback in ("cap", "horizon_end", "error"):
        try:
            expected, used = brute_atd(ref, cand, fallback, directed)
        except ScoreError:
            with pytest.raises(ScoreError, match="fallback='error'"):
                atd(*ref, *cand, fallback=fallback, directed=directed)
            continue
        out = atd(*ref, *cand, fallback=fallback, directed=directed)
        assert out["atd"] == pytest.approx(expected, rel=1e-12, abs=1e-15), fallback
        assert out["fallback_count"] == used, fallback
    assert acd(*ref, *cand, directed=directed)["acd"] == pytest.approx(brute_acd(ref, cand, directed), rel=1e-12)


def test_brute_force_streams_exercise_every_branch() -> None:
    """The random streams above must really contain ties, missing pairs and errors, or the comparison is weak."""
    ties = missing = far = edges = 0
    for seed in range(12):
        ref, cand = random_streams(seed)
        ties += len(ref[2]) - len(np.unique(ref[2]))
        out = atd(*ref, *cand, fallback="horizon_end")
        missing += out["missing_pair_count"] > 0
        far += out["fallback_count"] > out["missing_pair_count"]   # the horizon beat a present pair's event
        tau = out["tau_bar"]
        same = (ref[0][:, None] == cand[0][None, :]) & (ref[1][:, None] == cand[1][None, :])
        edges += int(np.sum(same & (np.abs(ref[2][:, None] - cand[2][None, :]) == tau)))
    assert ties > 20 and missing >= 6 and far >= 3 and edges >= 5, (ties, missing, far, edges)


# ---------------------------------------------------------------------------------------------------------------------
# ATD / ACD: exact invariants
# ---------------------------------------------------------------------------------------------------------------------


def _stream(seed: int, n: int = 300) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 15, n), rng.integers(0, 15, n), rng.integers(0, 500, n)


@pytest.mark.parametrize("seed", range(4))
def test_a_stream_is_at_distance_zero_from_itself(seed: int) -> None:
    ref = _stream(seed)
    for fallback in ("cap", "horizon_end", "error"):
        assert atd(*ref, *ref, fallback=fallback)["atd"] == 0.0
    assert acd(*ref, *ref)["acd"] == 0.0
    both = generative_scores(ref, ref)
    assert (both["atd_symmetric"], both["acd_symmetric"], both["count_ratio"]) == (0.0, 0.0, 1.0)


@pytest.mark.parametrize("k", [2, 5])
def test_exact_copies_scale_the_window_counts(k: int) -> None:
    # E' = K exact copies of E: every nearest distance is 0, and every candidate count is K x the real count, so
    # ACD(E, K E) = (K - 1) x mean real count = (K - 1) x ACD(E, empty)
    ref = _stream(9)
    copies = tuple(np.tile(column, k) for column in ref)
    assert atd(*ref, *copies)["atd"] == 0.0
    empty = acd(*ref, [], [], [])["acd"]
    assert empty >= 1.0   # the real count includes the event itself
    assert acd(*ref, *copies)["acd"] == pytest.approx((k - 1) * empty, rel=1e-14)


def test_row_order_translation_and_scale_do_not_matter() -> None:
    ref, cand = _stream(1), _stream(2)
    rng = np.random.default_rng(0)
    p, q = rng.permutation(len(ref[0])), rng.permutation(len(cand[0]))
    base_atd = atd(*ref, *cand, fallback="horizon_end")["atd"]
    base_acd = acd(*ref, *cand)["acd"]
    assert atd(*(c[p] for c in ref), *(c[q] for c in cand), fallback="horizon_end")["atd"] == base_atd
    assert acd(*(c[p] for c in ref), *(c[q] for c in cand))["acd"] == base_acd
    # shifting both streams by an integer and scaling by a power of two are exact in float64
    moved = lambda s: (s[0], s[1], 4 * s[2] + 1_000_000)  # noqa: E731
    assert atd(*moved(ref), *moved(cand), fallback="horizon_end")["atd"] == pytest.approx(base_atd, rel=1e-14)
    assert acd(*moved(ref), *moved(cand))["acd"] == base_acd


def test_reversed_edges_are_a_different_pair_only_when_directed() -> None:
    src, dst, t = np.array([0, 1, 2]), np.array([1, 2, 0]), np.array([0, 5, 9])
    assert atd(src, dst, t, dst, src, t)["atd"] == 1.0          # every pair missing: capped at T each
    assert atd(src, dst, t, dst, src, t, directed=False)["atd"] == 0.0
    assert acd(src, dst, t, dst, src, t, directed=False)["acd"] == 0.0


def test_cap_keeps_atd_in_the_unit_interval() -> None:
    for seed in range(6):
        ref, cand = _stream(seed), _stream(seed + 100)
        assert 0.0 <= atd(*ref, *cand)["atd"] <= 1.0


def test_large_streams_are_not_quadratic() -> None:
    # 200k x 200k events would be 4e10 comparisons for a double loop; the sorted search takes well under a second
    rng = np.random.default_rng(3)
    n = 200_000
    ref = (rng.integers(0, 5000, n), rng.integers(0, 5000, n), np.sort(rng.uniform(0, 1e6, n)))
    cand = (ref[0], ref[1], ref[2] + rng.uniform(-1, 1, n))
    out = generative_scores(ref, cand)
    assert 0 < out["atd"] < 1e-5 and out["count_ratio"] == 1.0


# ---------------------------------------------------------------------------------------------------------------------
# ATD / ACD: refused inputs
# ---------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("metric", [atd, acd])
@pytest.mark.parametrize("ref, cand, message", [
    (([], [], []), ([0], [1], [0]), "reference stream is empty"),
    (([0, 1], [1, 2], [5, 5]), ([0], [1], [0]), "T = max t - min t = 0"),
    (([0, 1], [1, 2], [0]), ([0], [1], [0]), "one length"),
    (([0.0, 1.0], [1, 2], [0, 1]), ([0], [1], [0]), "node ids must be integers"),
    (([0, 1], [1, 2], [0, np.nan]), ([0], [1], [0]), r"reference t\[1\] is nan"),
    (([0, 1], [1, 2], [0, 1]), ([0], [1], [np.inf]), r"candidate t\[0\] is inf"),
    (([0, 1], [1, 2], np.array(["a", "b"])), ([0], [1], [0]), "timestamps must be"),
])
def test_atd_acd_refuse_bad_streams(metric, ref, cand, message: str) -> None:
    with pytest.raises(ScoreError, match=message) as info:
        metric(*ref, *cand)
    assert isinstance(info.value, ValueError)


def test_unknown_fallback_and_bad_stream_arguments() -> None:
    with pytest.raises(ScoreError, match="fallback='nearest'"):
        atd([0, 0], [1, 1], [0, 1], [0], [1], [0], fallback="nearest")
    with pytest.raises(ScoreError, match=r"lacks column\(s\) \['t'\]"):
        generative_scores({"src": [0], "dst": [1]}, ([0], [1], [0]))
    with pytest.raises(ScoreError, match="mapping with 'src'"):
        generative_scores(np.zeros((3, 2)), ([0], [1], [0]))


def test_window_below_float_resolution_is_refused() -> None:
    # at 2**60 the float64 spacing is 256, so tau_bar = 128 rounds away: (t - 128, t + 128) would be empty
    big = 2.0 ** 60
    with pytest.raises(ScoreError, match="float64 resolution"):
        acd([0, 0], [1, 1], [big, big + 256], [0], [1], [big])
