"""Window EdgeBank (docs/forecasting.md, Baselines) against a deliberately simple implementation written here, and
the other window heuristics, on datasets built by the real generators."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

import tgbhub
from tgbhub.baselines import run_baseline
from tgbhub.baselines.forecast import EDGEBANKS, dyglib_memory, new_test_nodes, sorted_quantile
from tgbhub.baselines.registry import options_for, split_options
from tgbhub.cli import main
from tgbhub.errors import InvalidNameError
from tgbhub.forecasting.windows import events


@pytest.fixture(scope="module")
def ds(shared_cache: Path):
    return tgbhub.load_dataset("t-grab/ce-4", cache_dir=shared_cache)


def reference_scores(ds, split: str, mode: str, windows: set[int], dropped: frozenset[int] = frozenset()
                     ) -> tuple[list[float], list[float], list[int]]:
    """Python loops over the raw rows: one undirected edge = its src <= dst row; window = (t - split start) // h;
    history = every such edge with t before the window's start; memory rebuilt from scratch per window. Scores of
    the queries of ``windows`` only (the loops are slow), with their query ids. ``dropped``: nodes whose train
    edges are left out of every history (DyGLib's new test nodes)."""
    h = ds.manifest.task_named("window-forecast")["horizon"]["value"]
    start, stop = ds.snapshot_splits[split]
    train_stop = ds.snapshot_splits["train"][1]
    edges = [(int(t), int(s), int(d)) for t, s, d in zip(ds.t, ds.src, ds.dst) if s <= d]
    queries = [e for e in edges if start <= e[0] < stop]
    edges = [e for e in edges if e[0] >= train_stop or not {e[1], e[2]} & dropped]
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


# --- DyGLib's memory: the train edges of its "new test nodes" left out (docs/baselines.md) ---------------------------


def test_new_test_nodes_follow_dyglibs_rule_and_are_deterministic(ds) -> None:
    ev = events(ds)
    after = ev.range("train")[1]
    state, legacy = np.random.get_state()[1].copy(), random.getstate()
    drawn = new_test_nodes(ev, 0)
    # int(0.1 x distinct nodes), among the nodes with an event after the train split, never the global RNGs
    everyone = np.unique(np.concatenate([ev.src, ev.dst]))
    assert len(drawn) == int(0.1 * len(everyone)) == 10 and len(np.unique(drawn)) == len(drawn)
    assert np.isin(drawn, np.concatenate([ev.src[after:], ev.dst[after:]])).all()
    assert np.array_equal(np.random.get_state()[1], state) and random.getstate() == legacy
    assert np.array_equal(new_test_nodes(ev, 0), drawn)
    assert any(not np.array_equal(new_test_nodes(ev, seed), drawn) for seed in (1, 2, 3))
    keep = dyglib_memory(ev, 0)
    touches = np.isin(ev.src, drawn) | np.isin(ev.dst, drawn)
    assert np.array_equal(~keep[:after], touches[:after]) and touches[:after].any()
    assert keep[after:].all()  # validation and test events stay in the memory, as in DyGLib


@pytest.mark.parametrize("mode", ["edgebank", "edgebank-tw", "edgebank-ri", "edgebank-thr"])
def test_dyglib_memory_equals_the_simple_implementation_without_the_new_nodes_train_edges(ds, mode: str) -> None:
    task = ds.manifest.task_named("window-forecast")
    submission = run_baseline(f"{mode}:memory=dyglib,seed=3", ds, task, "test")
    dropped = frozenset(new_test_nodes(events(ds), 3).tolist())
    checked = {0, 1, 2, int(submission["window"].max())}
    pos, neg, ids = reference_scores(ds, "test", mode, checked, dropped)
    assert submission["pos_score"][ids].tolist() == pos and submission["neg_score"][ids].tolist() == neg


def test_an_edge_of_a_new_test_node_is_not_predicted_from_memory(ds) -> None:
    """A pair touching a drawn node that only the train split holds: EdgeBank-inf remembers it (1) by default and
    forgets it (0) with DyGLib's memory; every other score of the window stays as it was."""
    task = ds.manifest.task_named("window-forecast")
    ev = events(ds)
    drawn = new_test_nodes(ev, 0)
    full = run_baseline("edgebank", ds, task, "test")
    dyglib = run_baseline("edgebank:memory=dyglib,seed=0", ds, task, "test")
    negatives = ds.window_negatives("test")
    lo, hi = ev.range("test")
    src = np.concatenate([ev.src[lo:hi], negatives.neg_src])
    dst = np.concatenate([ev.dst[lo:hi], negatives.neg_dst])
    before = np.concatenate([full["pos_score"], full["neg_score"]])
    after = np.concatenate([dyglib["pos_score"], dyglib["neg_score"]])
    touching = np.isin(src, drawn) | np.isin(dst, drawn)
    forgotten = before != after
    assert forgotten.sum() > 10 and touching[forgotten].all()  # only pairs of drawn nodes change ...
    assert (before[forgotten] == 1.0).all() and (after[forgotten] == 0.0).all()  # ... from remembered to not
    # each forgotten pair occurs in train, and in no validation or earlier test event (the kept history)
    first_window = np.concatenate([full["window"], np.asarray(negatives.window)]) == full["window"][0]
    train_stop = ev.range("train")[1]
    codes = ev.pair_codes()
    for k in np.flatnonzero(forgotten & first_window)[:20]:
        code = int(src[k]) * ev.num_nodes + int(dst[k])
        assert code in set(codes[:train_stop].tolist()) and code not in set(codes[train_stop:lo].tolist())


def test_default_memory_is_unchanged_and_full_is_its_name(ds) -> None:
    task = ds.manifest.task_named("window-forecast")
    for model in EDGEBANKS:
        default, named = run_baseline(model, ds, task, "test"), run_baseline(f"{model}:memory=full", ds, task, "test")
        assert all(np.array_equal(default[k], named[k]) for k in default)
        assert options_for("window-link-forecasting", model) == ["memory", "seed"]
    assert options_for("window-link-forecasting", "persistence") == []
    changed = run_baseline("edgebank-tw:memory=dyglib,seed=0", ds, task, "test")
    assert not np.array_equal(changed["pos_score"], run_baseline("edgebank-tw", ds, task, "test")["pos_score"])


@pytest.mark.parametrize(("model", "message"), [
    ("edgebank-tw:memory=dyglib", r"needs seed=N.*edgebank-tw:memory=dyglib,seed=0"),
    ("edgebank-tw:seed=1", r"seed=1 draws DyGLib's new test nodes.*add memory=dyglib"),
    ("edgebank-tw:memory=dyglb,seed=1", r"memory='dyglb' is not one of full, dyglib"),
    ("edgebank-tw:memory=dyglib,seed=-2", r"seed='-2' is not a non-negative integer"),
    ("edgebank-tw:memory", r"option 'memory' is not KEY=VALUE"),
    ("edgebank-tw:seed=1,seed=2", r"sets option 'seed' twice"),
    ("edgebank-tw:window=3", r"no option 'window'.*it takes memory, seed"),
    ("persistence:memory=dyglib", r"'persistence' has no option 'memory'.*it takes none"),
])
def test_bad_options_are_refused_by_name(ds, model: str, message: str) -> None:
    with pytest.raises(InvalidNameError, match=message):
        run_baseline(model, ds, ds.manifest.task_named("window-forecast"), "test")


def test_split_options_reads_the_model_name() -> None:
    assert split_options("edgebank") == ("edgebank", {})
    assert split_options("edgebank-ri:memory=dyglib, seed=7") == ("edgebank-ri", {"memory": "dyglib", "seed": "7"})


def test_cli_runs_the_dyglib_memory_and_names_it(shared_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def run(model: str) -> dict:
        argv = ["--cache-dir", str(shared_cache), "baseline", model, "t-grab/ce-4", "--task", "window-forecast",
                "--json"]
        assert main(argv) == 0
        return json.loads(capsys.readouterr().out)

    default, dyglib = run("edgebank-tw"), run("edgebank-tw:memory=dyglib,seed=0")
    assert dyglib["model"] == "edgebank-tw:memory=dyglib,seed=0" and dyglib["task"] == "window-forecast"
    assert dyglib["metrics"]["auc"] != default["metrics"]["auc"]
    assert run("edgebank-tw:memory=dyglib,seed=0")["metrics"] == dyglib["metrics"]  # the seed fixes the draw
