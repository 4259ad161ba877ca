"""Evaluators bound to manifest tasks: snapshot F1 (T-GRAB) and one-vs-many ranking, on real generated data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tgbhub
from tgbhub.errors import ManifestError, UnsupportedTaskError
from tgbhub.evaluate import EVALUATORS, get_evaluator, register_evaluator


@pytest.fixture(scope="module")
def pdet(shared_cache: Path) -> tgbhub.data.TemporalGraphDataset:
    return tgbhub.load_dataset("t-grab/pdet-2-4", cache_dir=shared_cache)


@pytest.fixture(scope="module")
def ce(shared_cache: Path) -> tgbhub.data.TemporalGraphDataset:
    return tgbhub.load_dataset("t-grab/ce-4", cache_dir=shared_cache)


def truth_submission(ds, split: str) -> dict[str, np.ndarray]:
    """A perfect submission: score 1 exactly on the true edges among the candidates."""
    keys = ds.evaluator.submission_keys(split)
    rows = ds.split(split)
    true = set(zip(rows.t.tolist(), rows.src.tolist(), rows.dst.tolist()))
    score = np.array([(t, s, d) in true for t, s, d in zip(keys["t"].tolist(), keys["src"].tolist(),
                                                            keys["dst"].tolist())], dtype=np.float32)
    return {**keys, "score": score}


def test_dispatch_is_by_task_type(pdet) -> None:
    assert type(pdet.evaluator) is EVALUATORS["snapshot-link-prediction"]
    assert type(pdet.get_evaluator("ranking")) is EVALUATORS["one-vs-many-ranking"]
    with pytest.raises(ManifestError, match="snapshot-f1, ranking"):
        pdet.get_evaluator("forecast")
    with pytest.raises(UnsupportedTaskError, match="no-such-type"):
        get_evaluator(pdet.manifest, pdet, {"name": "x", "type": "no-such-type"})
    with pytest.raises(ValueError, match="task type 'snapshot-link-prediction' is already registered, to Snapshot"):
        register_evaluator("snapshot-link-prediction")(type("Other", (), {}))


def test_perfect_submission_scores_one_and_carries_provenance(pdet, tmp_path: Path) -> None:
    submission = truth_submission(pdet, "test")
    assert len(submission["t"]) == 32 * 9_900  # 32 test snapshots x 100*99 ordered pairs
    path = tmp_path / "perfect.parquet"
    pq.write_table(pa.table(submission), path)
    result = pdet.evaluator.evaluate(path)
    assert result["metrics"] == {"f1": 1.0, "f1_change_points": 1.0}
    assert (result["dataset"], result["version"], result["split"]) == ("t-grab/pdet-2-4", "1.0.0", "test")
    assert result["digest"] == pdet.digest and result["num_snapshots"] == 32


def test_hand_computed_f1_after_two_mistakes(pdet) -> None:
    submission = truth_submission(pdet, "test")
    first = np.flatnonzero(submission["t"] == 352)           # the first test snapshot (a change point: 352 % 4 == 0)
    hits = first[submission["score"][first] == 1]
    m = len(hits)                                           # true edges of snapshot 352 (both directions)
    submission["score"][hits[0]] = 0.49                     # below the 0.5 threshold: one false negative
    miss = first[submission["score"][first] == 0][0]
    submission["score"][miss] = 0.5                         # exactly at the threshold counts: one false positive
    result = pdet.evaluator.evaluate(submission, detail=True)
    # snapshot 352: tp = m - 1, fp = 1, fn = 1 -> F1 = 2(m-1) / (2(m-1) + 2) = (m-1)/m; the other 31 are perfect
    assert result["metrics"]["f1"] == pytest.approx((31 + (m - 1) / m) / 32)
    # change points are t = 352, 356, ..., 380 (8 of them): one of them has (m-1)/m
    assert result["metrics"]["f1_change_points"] == pytest.approx((7 + (m - 1) / m) / 8)
    detail = result["per_snapshot"]
    assert detail["t"][0] == 352 and detail["tp"][0] == m - 1 and detail["fp"][0] == 1 and detail["fn"][0] == 1


def test_all_zero_submission_scores_zero_and_val_split(pdet) -> None:
    keys = pdet.evaluator.submission_keys("val")
    result = pdet.evaluator.evaluate({**keys, "score": np.zeros(len(keys["t"]))}, split="val")
    assert result["split"] == "val" and result["metrics"]["f1"] == 0.0  # no predictions: F1 0 everywhere


def test_ce_grades_node0_pairs_and_skips_leading_inductive_snapshots(ce) -> None:
    evaluator = ce.evaluator
    start, stop = ce.snapshot_splits["test_inductive"]
    assert evaluator.snapshot_range("test_inductive") == (start + 4, stop)  # CE(4) skips its first 4 snapshots
    keys = evaluator.submission_keys("test_inductive")
    assert len(keys["t"]) == (stop - start - 4) * 200 and set(np.unique(keys["t"])) == set(range(start + 4, stop))
    assert ((keys["src"] == 0) | (keys["dst"] == 0)).all()
    result = evaluator.evaluate(truth_submission(ce, "test_inductive"), split="test_inductive")
    assert result["metrics"] == {"f1": pytest.approx(
        np.mean([1.0 if d else 0.0 for d in _node0_active(ce, start + 4, stop)]))}


def _node0_active(ds, start: int, stop: int) -> list[bool]:
    # a snapshot where node 0 has no edge has nothing to find: F1 is 0 even for the perfect submission
    rows = ds.split("test_inductive")
    touched = set(rows.t[(rows.src == 0) | (rows.dst == 0)].tolist())
    return [t in touched for t in range(start, stop)]


def test_ranking_by_hand_and_per_query(ce) -> None:
    negatives = ce.negatives("test")
    n = len(negatives)
    count = np.asarray(negatives.count)
    neg = np.zeros((n, negatives.q), dtype=np.float32)
    pos = np.ones(n, dtype=np.float32)  # every positive beats every negative: rank 1
    pos[0] = 0.0                        # query 0 ties all its count[0] negatives: 1 + count/2
    submission = {"query": np.arange(n)[::-1].copy(), "pos_score": pos[::-1].copy(), "neg_scores": neg[::-1].copy()}
    assert (count == negatives.q).all()  # CE's pools are large: no padding, so a (n, q) matrix is valid
    result = ce.get_evaluator("ranking").evaluate(submission, detail=True)
    first = 1 + count[0] / 2            # 20 tied negatives -> rank 11
    assert result["per_query"]["rank"][0] == first
    assert result["metrics"]["mrr"] == pytest.approx((n - 1 + 1 / first) / n)
    assert result["metrics"]["hits@10"] == pytest.approx((n - 1) / n)
    assert result["num_queries"] == n and result["digests"]["negatives-test.parquet"]
    assert result["task"] == "ranking" and result["task_type"] == "one-vs-many-ranking"


def test_ranking_on_the_scores_device_equals_the_host_path(ce, monkeypatch) -> None:
    torch = pytest.importorskip("torch")
    import tgbhub.evaluate.ranking as ranking

    negatives = ce.negatives("test")
    n, q = len(negatives), negatives.q
    rng = np.random.default_rng(11)
    neg = rng.integers(0, 4, size=(n, q)).astype(np.float32)  # small integers: many ties
    pos = rng.integers(0, 4, size=n).astype(np.float32)
    order = rng.permutation(n)
    host = {"query": order, "pos_score": pos[order], "neg_scores": neg[order]}
    tensors = {"query": torch.from_numpy(order), "pos_score": torch.from_numpy(pos[order]),
               "neg_scores": torch.from_numpy(neg[order])}
    evaluator = ce.get_evaluator("ranking")
    expected = evaluator.evaluate(host, detail=True)
    # CI has no GPU: treat CPU tensors as if they lived on one, so the device path itself runs
    monkeypatch.setattr(ranking, "on_accelerator", lambda values: hasattr(values, "detach"))
    calls = []
    monkeypatch.setattr(ranking, "device_ranks", lambda *a: calls.append(1) or ranking.ranks(*a))
    got = evaluator.evaluate(tensors, detail=True)
    assert calls == [1] and got == expected
    tensors["neg_scores"] = tensors["neg_scores"].clone()
    tensors["neg_scores"][3, 0] = float("nan")
    with pytest.raises(ranking.SubmissionError, match="neg_scores.*row 3"):
        evaluator.evaluate(tensors)
    tensors["query"] = torch.from_numpy(np.zeros(n, dtype=np.int64))  # repeats: the host's own check and message
    with pytest.raises(ranking.SubmissionError, match="query"):
        evaluator.evaluate(tensors)


def test_ranking_with_padded_rows_uses_variable_lists() -> None:
    from tgbhub.evaluate.ranking import RankingEvaluator
    from tgbhub.manifest import Manifest

    class Truth:  # a split with a short pool: query 1 has only 2 of q = 3 negatives
        def negatives(self, split, task=None):
            from tgbhub.data import Negatives
            return Negatives(split, "negatives-test.parquet", np.zeros(2), np.zeros(2), np.zeros(2),
                             np.array([[1, 2, 3], [4, 5, -1]]), np.array([3, 2]))

    manifest = tgbhub.resolve("t-grab/ce-4")
    evaluator = RankingEvaluator(manifest, manifest.task_named("ranking"), Truth())
    lists = pa.array([[0.1, 0.2, 0.9], [0.1, 0.7]], type=pa.list_(pa.float32()))
    result = evaluator.evaluate({"query": np.array([0, 1]), "pos_score": np.array([0.5, 0.5]), "neg_scores": lists},
                                detail=True)
    # query 0: 0.9 beats 0.5 -> rank 2; query 1: 0.7 beats 0.5 -> rank 2 (the padding slot is never scored)
    assert result["per_query"]["rank"] == [2.0, 2.0] and isinstance(manifest, Manifest)


def test_skipped_snapshots_are_reported_in_the_result(ce) -> None:
    start, stop = ce.snapshot_splits["test_inductive"]
    keys = ce.evaluator.submission_keys("test_inductive")
    result = ce.evaluator.evaluate({**keys, "score": np.zeros(len(keys["t"]))}, split="test_inductive")
    skipped = result["skipped_snapshots"]
    assert (skipped["count"], skipped["first"], skipped["last"]) == (4, start, start + 3)
    assert "skip_leading" in skipped["reason"] and result["num_snapshots"] == stop - start - 4
    assert f"the first 4 snapshots of test_inductive ({start}..{start + 3}) are not graded" in result["description"]
    assert result["description"] == ce.evaluator.describe("test_inductive")
    plain = ce.evaluator.evaluate(truth_submission(ce, "test"), split="test")
    assert "skipped_snapshots" not in plain and "not graded" not in plain["description"]
