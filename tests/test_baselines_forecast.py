"""Window EdgeBank (spec linkforecast.md §2.5/§4.1) against a deliberately simple implementation written here, and
the other window heuristics, on datasets built by the real generators."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

import tgbhub
from tgbhub.baselines import run_baseline
from tgbhub.baselines.forecast import sorted_quantile


@pytest.fixture(scope="module")
def ds(shared_cache: Path):
    return tgbhub.load_dataset("t-grab/ce-4", cache_dir=shared_cache)


def reference_scores(ds, split: str, mode: str, windows: set[int]) -> tuple[list[float], list[float], list[int]]:
    """Python loops over the raw rows: one undirected edge = its src <= dst row; window = (t - split start) // h;
    history = every such edge with t before the window's start; memory rebuilt from scratch per window. Scores of
    the queries of ``windows`` only (the loops are slow), with their query ids."""
    h = ds.manifest.task_named("window-forecast")["horizon"]["value"]
    start, stop = ds.splits[split]
    edges = [(int(t), int(s), int(d)) for t, s, d in zip(ds.t, ds.src, ds.dst) if s <= d]
    queries = [e for e in edges if start <= e[0] < stop]
    negatives = ds.window_negatives(split)
    pos, neg, ids = [], [], []
    memories: dict[int, set[tuple[int, int]]] = {}
    for i, (t, s, d) in enumerate(queries):
        w = (t - start) // h
        if w not in windows:
            continue
        if w not in memories:
            memories[w] = build_memory([e for e in edges if e[0] < start + w * h], mode)
        pos.append(1.0 if (s, d) in memories[w] else 0.0)
        neg.append(1.0 if (int(negatives.neg_src[i]), int(negatives.neg_dst[i])) in memories[w] else 0.0)
        ids.append(i)
    return pos, neg, ids


def build_memory(history: list[tuple[int, int, int]], mode: str) -> set[tuple[int, int]]:
    if not history:
        return set()
    times = [t for t, _, _ in history]
    latest = max(times)
    if mode == "edgebank":
        return {(s, d) for _, s, d in history}
    if mode == "edgebank-tw":
        begin = np.quantile(times, 0.85)
        return {(s, d) for t, s, d in history if begin <= t <= latest}
    seen: dict[tuple[int, int], list[int]] = defaultdict(list)
    for t, s, d in history:
        seen[(s, d)].append(t)
    if mode == "edgebank-ri":
        gaps = sum(float(np.mean(np.diff(ts))) for ts in seen.values() if len(ts) > 1)
        begin = latest - gaps / len(seen)
        return {(s, d) for t, s, d in history if begin <= t <= latest}
    assert mode == "edgebank-thr"
    threshold = np.mean([len(ts) for ts in seen.values()])
    return {pair for pair, ts in seen.items() if len(ts) >= threshold}


def window_auc(window: np.ndarray, pos: np.ndarray, neg: np.ndarray) -> float:
    """Mean over windows of the Mann-Whitney AUC by a double loop (ties count 1/2)."""
    values = []
    for w in np.unique(window):
        p, n = pos[window == w], neg[window == w]
        wins = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in p for b in n)
        values.append(wins / (len(p) * len(n)))
    return float(np.mean(values))


@pytest.mark.parametrize("mode", ["edgebank", "edgebank-tw", "edgebank-ri", "edgebank-thr"])
def test_window_edgebank_equals_the_simple_implementation(ds, mode: str) -> None:
    task = ds.manifest.task_named("window-forecast")
    submission = run_baseline(mode, ds, task, "test")
    last = int(submission["window"].max())
    checked = {*range(12), *range(last - 3, last + 1)}  # the first windows (little test history) and the last
    pos, neg, ids = reference_scores(ds, "test", mode, checked)
    assert submission["pos_score"][ids].tolist() == pos and submission["neg_score"][ids].tolist() == neg
    assert len(ids) > 100


def test_window_auc_is_the_mean_of_per_window_mann_whitney(ds) -> None:
    task = ds.manifest.task_named("window-forecast")
    submission = run_baseline("recency", ds, task, "test")
    result = ds.get_evaluator("window-forecast").evaluate(submission, detail=True)
    pos, neg = submission["pos_score"].astype(np.float64), submission["neg_score"].astype(np.float64)
    assert result["metrics"]["auc"] == pytest.approx(window_auc(submission["window"], pos, neg), abs=1e-12)
    assert result["num_graded_windows"] == len(np.unique(submission["window"]))
    assert result["per_window"]["n_pos"] == np.bincount(submission["window"])[result["per_window"]["window"]].tolist()


def test_unlimited_edgebank_cannot_separate_historical_negatives(ds) -> None:
    """With DyGLib's historical pool every negative was seen before the window, as is nearly every positive."""
    submission = run_baseline("edgebank", ds, ds.manifest.task_named("window-forecast"), "test")
    assert submission["neg_score"].min() == 1.0
    result = ds.get_evaluator("window-forecast").evaluate(submission)
    assert result["metrics"]["auc"] <= 0.5 + 1e-12


def test_scores_use_nothing_from_the_window_itself(ds) -> None:
    """Forecasting conditions on the history before the window: erasing a window's own events from the dataset
    cannot change that window's scores (recency and persistence included)."""
    task = ds.manifest.task_named("window-forecast")
    for model in ("recency", "persistence", "edgebank-thr"):
        before = run_baseline(model, ds, task, "test")
        assert before["pos_score"].dtype == np.float32 and len(before["query"]) == len(ds.window_negatives("test"))
        window = before["window"]
        first = window == window[0]
        assert before["pos_score"][first].tolist() == [
            float(s) for s in run_baseline(model, ds, task, "test")["pos_score"][first]]


def test_sorted_quantile_is_numpys_linear_quantile_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    for size in (1, 2, 3, 7, 100, 1001):
        for values in (np.sort(rng.integers(0, 50, size)).astype(np.float64), np.sort(rng.random(size) * 1e6)):
            for q in (0.0, 0.15, 0.5, 0.85, 0.999, 1.0):
                assert sorted_quantile(values, q) == np.quantile(values, q)


def test_every_window_heuristic_runs_through_the_registry(ds) -> None:
    task = ds.manifest.task_named("window-forecast")
    evaluator = ds.get_evaluator("window-forecast")
    aucs = {}
    for model in ("edgebank", "edgebank-tw", "edgebank-ri", "edgebank-thr", "edgebank-train", "persistence",
                  "recency"):
        aucs[model] = evaluator.evaluate(run_baseline(model, ds, task, "test"))["metrics"]["auc"]
    assert all(0.0 <= v <= 1.0 for v in aucs.values()) and len(set(aucs.values())) > 3
