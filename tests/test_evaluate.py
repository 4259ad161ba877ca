"""Metric functions: hand-computed ranks and F1, strict input checks, and equality with py-tgb 2.3.0."""

from __future__ import annotations

import numpy as np
import pytest

from tgbhub.errors import ScoreError
from tgbhub.evaluate.metrics import (binary_f1, filtered_ranks, metrics_from_ranks, rank_metrics, rank_metrics_all,
                                     ranks)


def test_hand_computed_ranks_with_ties() -> None:
    pos = np.array([0.9, 0.5, 0.1])
    neg = np.array([[0.1, 0.2, 0.3, 0.4],    # nothing beats 0.9: rank 1 + (0 + 0) / 2 = 1
                    [0.5, 0.7, 0.5, 0.1],    # > 0.5: one (0.7); >= 0.5: three -> 1 + (1 + 3) / 2 = 3
                    [0.1, 0.1, 0.1, 0.1]])   # all tied: 1 + (0 + 4) / 2 = 3, never rank 1
    assert ranks(pos, neg).tolist() == [1.0, 3.0, 3.0]
    out = rank_metrics(pos, neg, ks=(1, 3, 10))
    assert out["mrr"] == pytest.approx((1 + 1 / 3 + 1 / 3) / 3)   # 5/9
    assert out["hits@1"] == pytest.approx(1 / 3)                   # only the first query
    assert out["hits@3"] == 1.0 and out["hits@10"] == 1.0          # ranks 3 count as <= 3
    assert set(out) == {"mrr", "hits@1", "hits@3", "hits@10"} and all(type(v) is float for v in out.values())


def test_fractional_rank_against_hits() -> None:
    # 2 of 2 negatives tie with the positive: rank 1 + (0 + 2) / 2 = 2, so hits@1 is 0 and hits@2 is 1
    assert rank_metrics([1.0], [[1.0, 1.0]], ks=(1, 2)) == {"mrr": 0.5, "hits@1": 0.0, "hits@2": 1.0}
    # one tie: 1 + (0 + 1) / 2 = 1.5 -> MRR 2/3, not a hit at 1
    assert rank_metrics([1.0], [[1.0, 0.0]], ks=(1,)) == {"mrr": pytest.approx(2 / 3), "hits@1": 0.0}


def test_padding_is_ignored_by_count() -> None:
    neg = np.array([[0.9, np.nan, np.nan], [0.1, 0.2, 0.95]])
    # query 0 has one real negative (0.9 > 0.5): rank 2; query 1 all three: 0.95 > 0.9 -> rank 2
    assert ranks([0.5, 0.9], neg, counts=[1, 3]).tolist() == [2.0, 2.0]
    with pytest.raises(ScoreError, match="counts"):
        ranks([0.5, 0.9], neg, counts=[1, 4])


@pytest.mark.parametrize("pos, neg, message", [
    ([np.nan, 0.1], [[0.1], [0.2]], "query 0 has a NaN"),                # py-tgb would call this rank 1
    ([0.5, 0.1], [[0.1], [np.inf]], "query 1 has a NaN or infinite"),
    ([0.5, 0.1], [[0.1], [-np.inf]], "query 1"),
    ([0.1, 0.2, 0.3], [0.1, 0.2, 0.3], "expected 2 dimension"),           # py-tgb broadcasts this to 3 x 3
    ([0.1, 0.2, 0.3], [[0.1], [0.2]], "3 queries but neg_scores has shape"),
    ([[0.1]], [[0.2]], "expected 1 dimension"),
    (np.array([True]), [[0.2]], "dtype bool"),
    (np.array(["a"]), [[0.2]], "dtype <U1"),
])
def test_bad_inputs_raise_a_value_error(pos, neg, message: str) -> None:
    with pytest.raises(ScoreError, match=message) as info:
        rank_metrics(pos, neg)
    assert isinstance(info.value, ValueError)


def test_no_queries_and_bad_k() -> None:
    with pytest.raises(ScoreError, match="no queries"):
        rank_metrics(np.zeros(0), np.zeros((0, 3)))
    with pytest.raises(ScoreError, match="positive integer"):
        metrics_from_ranks(np.array([1.0]), ks=(0,))


def test_equal_to_py_tgb_on_random_inputs_with_ties() -> None:
    evaluate = pytest.importorskip("tgb.linkproppred.evaluate")
    rng = np.random.default_rng(7)
    for dtype in (np.float32, np.float64):
        # scores on a coarse grid, so ties between the positive and its negatives are frequent
        pos = rng.integers(0, 6, size=2_000).astype(dtype) / 5
        neg = rng.integers(0, 6, size=(2_000, 37)).astype(dtype) / 5
        ours = rank_metrics(pos, neg, ks=(1, 3, 10))
        ties = (neg == pos[:, None]).any(axis=1).mean()
        assert ties > 0.5  # the check would be vacuous without ties
        for k in (1, 3, 10):
            theirs = evaluate.Evaluator("tgbl-wiki", k_value=k).eval(
                {"y_pred_pos": pos, "y_pred_neg": neg, "eval_metric": ["mrr"]})
            assert ours["mrr"] == pytest.approx(float(theirs["mrr"]), rel=1e-6)
            assert ours[f"hits@{k}"] == pytest.approx(float(theirs[f"hits@{k}"]), rel=1e-6)


def test_py_tgb_scores_nan_as_perfect_but_we_refuse() -> None:
    evaluate = pytest.importorskip("tgb.linkproppred.evaluate")
    theirs = evaluate.Evaluator("tgbl-wiki").eval(
        {"y_pred_pos": np.array([np.nan]), "y_pred_neg": np.array([[0.3, 0.9]]), "eval_metric": ["mrr"]})
    assert float(theirs["mrr"]) == 1.0
    with pytest.raises(ValueError):
        rank_metrics(np.array([np.nan]), np.array([[0.3, 0.9]]))


def test_filtered_one_vs_all_equals_explicit_negatives() -> None:
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 4, size=(50, 30)).astype(np.float64)
    pos = rng.integers(0, 30, size=50)
    sets = [np.unique(np.append(rng.choice(30, size=rng.integers(0, 6), replace=False), pos[i] if i % 2 else []))
            .astype(np.int64) for i in range(50)]  # odd queries list their own answer in the filter set
    offsets = np.cumsum([0, *map(len, sets)])
    indices = np.concatenate(sets)
    expected = []
    for i in range(50):
        keep = np.setdiff1d(np.arange(30), np.append(sets[i], pos[i]))
        expected.append(ranks(scores[i, pos[i]:pos[i] + 1], scores[i, keep][None, :])[0])
    assert filtered_ranks(scores, pos, offsets, indices, chunk=7).tolist() == expected
    assert rank_metrics_all(scores, pos, offsets, indices)["mrr"] == pytest.approx(np.mean(1 / np.array(expected)))


def test_filtered_hand_case_and_checks() -> None:
    # scores 0.1 0.9 0.5 0.9, positive node 1 (0.9), node 3 filtered: only 0.1 and 0.5 remain, both below -> 1
    assert filtered_ranks(np.array([[0.1, 0.9, 0.5, 0.9]]), [1], [0, 1], [3]).tolist() == [1.0]
    # unfiltered, node 3 ties the positive: 1 + (0 + 1) / 2 = 1.5
    assert filtered_ranks(np.array([[0.1, 0.9, 0.5, 0.9]]), [1], [0, 0], []).tolist() == [1.5]
    with pytest.raises(ScoreError, match="CSR"):
        filtered_ranks(np.zeros((1, 4)), [1], [0, 2], [3])
    with pytest.raises(ScoreError, match="NaN"):
        filtered_ranks(np.array([[0.1, np.nan]]), [0], [0, 0], [])


def test_binary_f1_by_hand() -> None:
    truth = np.array([[1, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0]], dtype=bool)
    pred = np.array([[1, 0, 1, 0], [0, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]], dtype=bool)
    out = binary_f1(pred, truth)
    # row 0: tp 1, fp 1, fn 1 -> 2/(2+1+1) = 0.5; row 1: nothing at all -> 0 (zero_division=0);
    # row 2: one false positive -> 0; row 3: perfect -> 1
    assert out["f1"].tolist() == [0.5, 0.0, 0.0, 1.0]
    assert out["tp"].tolist() == [1, 0, 0, 1] and out["fp"].tolist() == [1, 0, 1, 0]
    with pytest.raises(ScoreError):
        binary_f1(pred[:, :2], truth)


def test_device_ranks_equal_the_kernels_ranks_and_refuse_what_it_refuses():
    torch = pytest.importorskip("torch")
    from tgbhub.evaluate.metrics import device_ranks, ranks

    rng = np.random.default_rng(5)
    pos = rng.normal(size=300).astype(np.float32)
    neg = rng.normal(size=(300, 17)).astype(np.float32)
    neg[:, :4] = pos[:, None]  # ties take the average rank
    counts = rng.integers(0, 18, size=300)
    neg[counts == 0, :] = np.nan  # padding may hold anything
    pos_t, neg_t = torch.from_numpy(pos), torch.from_numpy(neg)
    assert np.array_equal(device_ranks(pos_t, neg_t, counts), ranks(pos, neg, counts))
    finite = np.nan_to_num(neg)
    assert np.array_equal(device_ranks(pos_t, torch.from_numpy(finite)), ranks(pos, finite))
    with pytest.raises(ScoreError, match="query 0 has a NaN"):
        device_ranks(torch.tensor([np.nan]), torch.zeros((1, 3)))
    with pytest.raises(ScoreError, match="expected 2 dimension"):
        device_ranks(torch.zeros(2), torch.zeros(2))
    with pytest.raises(ScoreError, match="counts must have shape"):
        device_ranks(torch.zeros(2), torch.zeros((2, 3)), [1, 4])
