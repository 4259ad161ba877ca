"""Every malformed submission gets a SubmissionError (a ValueError) naming the column, first bad row and fix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tgbhub
from tgbhub.errors import SubmissionError
from tgbhub.evaluate.submission import task_for_columns, write_submission


@pytest.fixture(scope="module")
def ds(shared_cache: Path) -> tgbhub.data.TemporalGraphDataset:
    return tgbhub.load_dataset("t-grab/ce-4", cache_dir=shared_cache)


@pytest.fixture
def snapshot_submission(ds) -> dict[str, np.ndarray]:
    keys = ds.evaluator.submission_keys("test")
    return {**keys, "score": np.zeros(len(keys["t"]), dtype=np.float32)}


@pytest.fixture
def ranking_submission(ds) -> dict[str, object]:
    n, q = len(ds.negatives("test")), ds.negatives("test").q
    return {"query": np.arange(n), "pos_score": np.ones(n, dtype=np.float32),
            "neg_scores": np.zeros((n, q), dtype=np.float32)}


def _swap(column: str, values: Callable[[np.ndarray], object]) -> Callable[[dict], dict]:
    return lambda sub: {**sub, column: values(np.asarray(sub[column]))}


def _with(values: np.ndarray, row: int, value: object) -> np.ndarray:
    out = values.copy()
    out[row] = value
    return out


SNAPSHOT_CASES = [
    # (mutation, column, row, words in the message)
    (lambda s: {k: v for k, v in s.items() if k != "score"}, "score", None, "is missing"),
    (lambda s: {**s, "extra": s["score"]}, "extra", None, "not part of this task"),
    (lambda s: {k: _with(v, 5, v[4]) for k, v in s.items()}, "t", 5, "repeats id t=3204, src=0, dst=5"),
    (lambda s: {k: v[1:] for k, v in s.items()}, "t", None, "lacks 1 of the"),
    (_swap("t", lambda t: _with(t, 3, 0)), "t", 3, "outside ["),
    (_swap("dst", lambda d: _with(d, 7, 500)), "dst", 7, "outside [0, 101)"),
    (lambda s: {**s, "src": _with(s["src"], 2, 5), "dst": _with(s["dst"], 2, 6)}, "src", 2, "not a candidate"),
    (_swap("score", lambda v: _with(v, 11, np.nan)), "score", 11, "finite"),
    (_swap("score", lambda v: _with(v, 12, np.inf)), "score", 12, "finite"),
    (_swap("score", lambda v: v.astype(str)), "score", 0, "has type string, expected float32"),
    (_swap("t", lambda t: t.astype(np.float64)), "t", 0, "has type double, expected int64"),
    (_swap("score", lambda v: pa.array([None] + v[1:].tolist(), type=pa.float32())), "score", 0, "is null"),
]


@pytest.mark.parametrize("mutate, column, row, words", SNAPSHOT_CASES)
def test_malformed_snapshot_submissions(ds, snapshot_submission, mutate, column, row, words) -> None:
    with pytest.raises(SubmissionError) as info:
        ds.evaluator.evaluate(mutate(snapshot_submission))
    error = info.value
    assert isinstance(error, ValueError)
    assert (error.column, error.row) == (column, row)
    assert words in str(error) and f"column {column!r}" in str(error)
    assert error.fix and str(error).endswith(error.fix)  # every message ends with how to fix it


RANKING_CASES = [
    (lambda s: {k: v for k, v in s.items() if k != "pos_score"}, "pos_score", None, "is missing"),
    (lambda s: {**s, "query": _with(s["query"], 4, 3)}, "query", 4, "repeats id query=3"),
    (lambda s: {**s, "query": _with(s["query"], 4, 10**9)}, "query", 4, "not an id this task asks for"),
    (lambda s: {k: v[:-1] for k, v in s.items()}, "query", None, "lacks 1 of the"),
    (lambda s: {**s, "neg_scores": s["neg_scores"][:, :-1]}, "neg_scores", 0, "has 19 scores but query 0 has 20"),
    (lambda s: {**s, "neg_scores": _with(s["neg_scores"], 9, np.nan)}, "neg_scores", 9, "NaN or infinite"),
    (lambda s: {**s, "pos_score": _with(s["pos_score"], 6, -np.inf)}, "pos_score", 6, "finite"),
    (lambda s: {**s, "neg_scores": s["pos_score"]}, "neg_scores", 0, "expected list<float32>"),
]


@pytest.mark.parametrize("mutate, column, row, words", RANKING_CASES)
def test_malformed_ranking_submissions(ds, ranking_submission, mutate, column, row, words) -> None:
    with pytest.raises(SubmissionError) as info:
        ds.get_evaluator("ranking").evaluate(mutate(ranking_submission))
    assert (info.value.column, info.value.row) == (column, row) and words in str(info.value)


def test_files_round_trip_and_unreadable_files(ds, snapshot_submission, tmp_path: Path) -> None:
    path = tmp_path / "sub.parquet"
    write_submission(snapshot_submission, path)
    assert ds.evaluator.evaluate(path)["metrics"]["f1"] == 0.0
    assert task_for_columns(ds.manifest.tasks, pq.read_schema(path).names)["name"] == "snapshot-f1"
    (tmp_path / "bad.parquet").write_text("t,src,dst,score\n")
    with pytest.raises(SubmissionError, match="not a readable Parquet file"):
        ds.evaluator.evaluate(tmp_path / "bad.parquet")
    with pytest.raises(SubmissionError, match="does not exist"):
        ds.evaluator.evaluate(tmp_path / "absent.parquet")


def test_cli_evaluate_reports_errors_without_a_score(ds, snapshot_submission, tmp_path: Path, shared_cache: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from tgbhub.cli import main

    good, bad = tmp_path / "good.parquet", tmp_path / "bad.parquet"
    write_submission(snapshot_submission, good)
    write_submission({**snapshot_submission, "score": _with(snapshot_submission["score"], 0, np.nan)}, bad)
    assert main(["--cache-dir", str(shared_cache), "evaluate", "t-grab/ce-4", str(good), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["metrics"] == {"f1": 0.0} and result["version"] == "1.0.0" and len(result["digest"]) == 64
    assert main(["--cache-dir", str(shared_cache), "evaluate", "t-grab/ce-4", str(bad), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "column 'score', row 0" in captured.err and "nan_to_num" in captured.err


# ------------------------------------------------------------------------------------------- pandas-written files

def _frame(submission: dict) -> Any:
    pd = pytest.importorskip("pandas")
    return pd.DataFrame({k: np.asarray(v) for k, v in submission.items()})


def test_an_unnamed_pandas_index_is_ignored(ds, snapshot_submission, tmp_path: Path) -> None:
    frame = _frame(snapshot_submission).sample(frac=1.0, random_state=0)  # shuffled: the index is no longer a range
    path = tmp_path / "pandas-default.parquet"
    frame.to_parquet(path)                                                 # pandas' default keeps the index
    assert "__index_level_0__" in pq.read_schema(path).names               # else this test would prove nothing
    assert ds.evaluator.evaluate(path)["metrics"] == ds.evaluator.evaluate(snapshot_submission)["metrics"]
    assert task_for_columns(ds.manifest.tasks, pq.read_schema(path).names)["name"] == "snapshot-f1"
    bare = pq.read_table(path).replace_schema_metadata(None)               # metadata lost: the name still tells
    assert ds.evaluator.evaluate(bare)["metrics"] == {"f1": 0.0}


def test_a_named_pandas_index_is_refused_naming_index_false(ds, snapshot_submission, tmp_path: Path) -> None:
    frame = _frame(snapshot_submission).sample(frac=1.0, random_state=0).rename_axis("row")
    path = tmp_path / "named-index.parquet"
    frame.to_parquet(path)
    with pytest.raises(SubmissionError) as info:
        ds.evaluator.evaluate(path)
    assert info.value.column == "row" and "DataFrame's index" in str(info.value)
    assert "index=False" in info.value.fix and str(info.value).endswith(info.value.fix)


def test_a_key_left_in_the_index_is_named_in_the_missing_column_error(ds, ranking_submission, tmp_path: Path) -> None:
    n = len(ranking_submission["query"])
    frame = _frame({"pos_score": ranking_submission["pos_score"]})
    frame["neg_scores"] = list(ranking_submission["neg_scores"])
    frame.index = np.arange(n)[::-1]                                       # the query ids, only as the index
    path = tmp_path / "query-in-index.parquet"
    frame.to_parquet(path)
    with pytest.raises(SubmissionError, match=r"reset_index\(names='query'\)") as info:
        ds.get_evaluator("ranking").evaluate(path)
    assert info.value.column == "query" and "is missing" in str(info.value)


def test_nan_advice_is_the_tasks_own(ds, snapshot_submission, ranking_submission) -> None:
    with pytest.raises(SubmissionError) as snapshot:
        ds.evaluator.evaluate({**snapshot_submission, "score": _with(snapshot_submission["score"], 3, np.nan)})
    assert "nan=0.0" in snapshot.value.fix and "threshold 0.5" in snapshot.value.fix  # below threshold: no edge
    with pytest.raises(SubmissionError) as ranking:
        ds.get_evaluator("ranking").evaluate({**ranking_submission,
                                              "pos_score": _with(ranking_submission["pos_score"], 2, np.nan)})
    assert "nan=-1e9" in ranking.value.fix and ranking.value.row == 2


@pytest.fixture
def window_submission(ds) -> dict[str, np.ndarray]:
    window = np.asarray(ds.window_negatives("test").window)
    n = len(window)
    return {"window": window.copy(), "query": np.arange(n), "pos_score": np.ones(n, dtype=np.float32),
            "neg_score": np.zeros(n, dtype=np.float32)}


WINDOW_CASES = [
    (lambda s: {k: v for k, v in s.items() if k != "window"}, "window", None, "is missing"),
    (lambda s: {**s, "window": _with(s["window"], 3, s["window"][3] + 1)}, "window", 3, "but query 3 lies in window"),
    (lambda s: {**s, "window": s["window"] - 1}, "window", 0, "lies in window"),
    (lambda s: {**s, "query": _with(s["query"], 4, 3)}, "query", 4, "repeats id query=3 (window"),
    (lambda s: {**s, "query": _with(s["query"], 4, -1)}, "query", 4, "not an id this task asks for"),
    (lambda s: {k: v[:-1] for k, v in s.items()}, "query", None, "lacks 1 of the"),
    (lambda s: {**s, "neg_score": _with(s["neg_score"], 9, np.nan)}, "neg_score", 9, "finite"),
    (lambda s: {**s, "window": s["window"].astype(np.float64)}, "window", 0, "has type double, expected int64"),
    (lambda s: {**s, "extra": s["pos_score"]}, "extra", None, "not part of this task"),
]


@pytest.mark.parametrize("mutate, column, row, words", WINDOW_CASES)
def test_malformed_window_submissions(ds, window_submission, mutate, column, row, words) -> None:
    with pytest.raises(SubmissionError) as info:
        ds.get_evaluator("window-forecast").evaluate(mutate(window_submission))
    assert (info.value.column, info.value.row) == (column, row) and words in str(info.value)
    assert info.value.fix and str(info.value).endswith(info.value.fix)


def test_a_window_submission_with_rows_in_any_order_scores_the_same(ds, window_submission) -> None:
    evaluator = ds.get_evaluator("window-forecast")
    rng = np.random.default_rng(0)
    scored = {**window_submission, "pos_score": rng.random(len(window_submission["query"])).astype(np.float32)}
    order = rng.permutation(len(scored["query"]))
    shuffled = {k: np.asarray(v)[order] for k, v in scored.items()}
    assert evaluator.evaluate(shuffled)["metrics"] == evaluator.evaluate(scored)["metrics"]
    assert task_for_columns(ds.manifest.tasks, list(scored))["name"] == "window-forecast"


# ------------------------------------------------------------------------------------- bounds, read from the footer

def test_bounds_are_the_tasks_own_row_counts(ds, snapshot_submission, ranking_submission, tmp_path: Path) -> None:
    from tgbhub.evaluate.submission import bounds_for, check_bounds

    snapshot = bounds_for(ds.manifest, ds.manifest.task_named("snapshot-f1"), "test")
    assert snapshot.rows == len(snapshot_submission["t"]) and "candidate pairs" in snapshot.basis
    ranking = bounds_for(ds.manifest, ds.manifest.task_named("ranking"), "test")
    n, q = ranking_submission["neg_scores"].shape
    assert ranking.rows >= n and ranking.values >= n * q
    exact = tmp_path / "exact.parquet"
    write_submission(snapshot_submission, exact)
    assert check_bounds(exact, snapshot).rows == snapshot.rows
    extra = tmp_path / "extra.parquet"  # one row too many: refused before a row is read
    write_submission({k: np.concatenate([v, v[:1]]) for k, v in snapshot_submission.items()}, extra)
    with pytest.raises(SubmissionError, match=f"holds {snapshot.rows + 1} rows; the task expects at most "
                       f"{snapshot.rows}"):
        check_bounds(extra, snapshot, "the task")
    wide = tmp_path / "wide.parquet"  # a few rows of lists far longer than the task's negatives
    pq.write_table(pa.table({"query": [0, 1], "pos_score": [0.5, 0.5],
                             "neg_scores": [[0.0] * (ranking.values // 2 + 1)] * 2}), wide)
    with pytest.raises(SubmissionError, match="values in one column"):
        check_bounds(wide, ranking, "the task")


def test_a_renamed_column_still_names_its_tasks_schema(ds, ranking_submission, tmp_path: Path) -> None:
    from tgbhub.evaluate.submission import closest_task

    renamed = pa.table({"query": ranking_submission["query"], "positive": ranking_submission["pos_score"],
                        "neg_scores": pa.array(list(ranking_submission["neg_scores"]))})
    assert closest_task(ds.manifest.tasks, renamed.schema)["name"] == "ranking"
    all_renamed = pa.table({"a": [1], "b": [0.5], "c": pa.array([[0.5, 0.25]])})
    assert closest_task(ds.manifest.tasks, all_renamed.schema)["name"] == "ranking"  # only ranking has a list
    assert closest_task(ds.manifest.tasks, pa.table({"x": [1]}).schema) is None  # no evidence: the default task
