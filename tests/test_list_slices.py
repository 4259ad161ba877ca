"""A fixed-size list column handed to Arrow in planned slices writes the bytes of one whole write, and the page check
catches slices that do not."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from generators import list_slices, ranking


def _write(path: Path, matrix: np.ndarray, ends: np.ndarray) -> str:
    """``matrix`` as one row group of a one-column negatives-like file, its list column chunked at ``ends``."""
    schema = pa.schema([("negatives", pa.list_(pa.int32(), matrix.shape[1]))])
    table = pa.Table.from_arrays([list_slices.sliced(matrix, ends)], schema=schema)
    with pq.ParquetWriter(path, schema, compression="zstd", write_statistics=True) as writer:
        writer.write_table(table, row_group_size=1 << 30)
    return hashlib.sha256(path.read_bytes()).hexdigest()


#: (rows, width, values drawn from, layout): each exercises a way the whole write cuts its pages
CASES = {
    "dictionary, 20,000-row pages": (60_000, 20, 9_000, "random"),
    "dictionary falls back, then 1 MiB plain pages": (40_000, 20, 2_000_000, "random"),
    "falls back at once (the limit's edge)": (30_000, 20, 262_145, "random"),
    "dictionary pages cut by their estimated size": (12_000, 100, 200_000, "random"),
    "one row a batch (wider than a batch)": (1_500, 1_500, 9_000, "random"),
    "runs (RLE), a narrow list": (200_000, 3, 50, "runs"),
    "sorted values": (50_000, 13, 300_000, "sorted"),
}


def _matrix(rows: int, width: int, nodes: int, layout: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if layout == "runs":
        values = np.repeat(rng.integers(-1, nodes, rows * width // 37 + 1), 37)[:rows * width]
    elif layout == "sorted":
        values = np.sort(rng.integers(-1, nodes, rows * width))
    else:
        values = rng.integers(-1, nodes, rows * width)
    return values.astype(np.int32).reshape(rows, width)


@pytest.fixture
def small_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slices of 4096 values, so that small matrices cross many slice ends and every kind of page event."""
    monkeypatch.setattr(list_slices, "SLICE_VALUES", 4096)


@pytest.mark.parametrize("case", sorted(CASES))
def test_planned_slices_write_the_bytes_of_one_whole_write(case: str, tmp_path: Path, small_slices: None) -> None:
    matrix = _matrix(*CASES[case])
    ends = list_slices.plan(matrix)
    assert len(ends) > 4 and ends[-1] == len(matrix) and np.all(np.diff(ends) > 0)
    whole = _write(tmp_path / "whole.parquet", matrix, np.array([len(matrix)]))
    assert _write(tmp_path / "sliced.parquet", matrix, ends) == whole
    assert list_slices.unfaithful_groups(tmp_path / "sliced.parquet", 0, matrix.shape[1], [ends]) == []


def test_the_page_check_flags_every_slicing_that_changes_the_bytes(tmp_path: Path) -> None:
    """Slices placed without the plan: whenever their bytes differ from the whole write's, the check says so."""
    differing = 0
    for rows, width, nodes, layout in CASES.values():
        matrix = _matrix(rows, width, nodes, layout, seed=1)
        whole = _write(tmp_path / "whole.parquet", matrix, np.array([rows]))
        for step in (997, 4096, 6_500):
            ends = np.append(np.arange(step, rows, step), rows)
            changed = _write(tmp_path / "naive.parquet", matrix, ends) != whole
            flagged = list_slices.unfaithful_groups(tmp_path / "naive.parquet", 0, width, [ends]) == [0]
            differing += changed
            assert flagged or not changed, (rows, width, nodes, layout, step)
    assert differing >= 3  # the check was really put to the test


def test_small_groups_and_wide_value_ranges_are_written_whole(small_slices: None) -> None:
    assert list_slices.plan(np.zeros((300, 20), np.int32)).tolist() == [300]
    spread = np.zeros((10_000, 20), np.int32)
    spread[-1, -1] = list_slices.MOST_SPAN
    assert list_slices.plan(spread).tolist() == [10_000]


def test_page_starts_are_read_from_the_page_headers(tmp_path: Path) -> None:
    """A narrow dictionary-encoded list: pages of 20,000 rows, the last one shorter."""
    matrix = _matrix(45_000, 2, 50, "random")
    _write(tmp_path / "pages.parquet", matrix, np.array([45_000]))
    chunk = pq.read_metadata(tmp_path / "pages.parquet").row_group(0).column(0)
    with open(tmp_path / "pages.parquet", "rb") as file:
        starts = list_slices._page_starts(file, chunk, 2)
    assert starts is not None and starts.tolist() == [0, 20_000, 40_000]


def _negatives(rows: int, width: int, nodes: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"t": np.sort(rng.integers(0, 10**9, rows)), "src": rng.integers(0, nodes, rows).astype(np.int32),
            "dst": rng.integers(0, nodes, rows).astype(np.int32),
            "negatives": rng.integers(-1, nodes, (rows, width)).astype(np.int32),
            "count": np.full(rows, width, np.int32)}


def _whole_write(columns: dict[str, np.ndarray], path: Path) -> str:
    """The negatives file as one ``write_table`` of the whole table (what the sliced writer must reproduce)."""
    schema = ranking._negatives_schema(columns["negatives"].shape[1], pa.int64())
    matrix = columns["negatives"]
    lists = pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), matrix.shape[1])
    table = pa.Table.from_arrays([pa.array(columns["t"]), pa.array(columns["src"]), pa.array(columns["dst"]), lists,
                                  pa.array(columns["count"])], schema=schema)
    pq.write_table(table, path, compression="zstd", write_statistics=True,
                   row_group_size=ranking.NEGATIVES_ROW_GROUP)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_write_negatives_keeps_the_bytes_of_one_whole_write(tmp_path: Path, small_slices: None,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranking, "NEGATIVES_ROW_GROUP", 25_000)
    columns = _negatives(60_000, 20, 2_000_000)
    ranking.write_negatives(columns, tmp_path / "sliced.parquet")
    assert pq.read_metadata(tmp_path / "sliced.parquet").num_row_groups == 3
    assert (hashlib.sha256((tmp_path / "sliced.parquet").read_bytes()).hexdigest()
            == _whole_write(columns, tmp_path / "whole.parquet"))


def test_write_negatives_writes_a_group_again_whole_when_its_pages_refute_the_slices(
        tmp_path: Path, small_slices: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A planner that places slices badly: the page check catches the group and the file keeps its bytes."""
    planned: list[int] = []

    def misplaced(matrix: np.ndarray) -> np.ndarray:
        planned.append(len(matrix))
        return np.append(np.arange(997, len(matrix), 997), len(matrix))

    checked: list[list[int]] = []
    check = list_slices.unfaithful_groups

    def recorded(*args: object) -> list[int]:
        checked.append(check(*args))  # type: ignore[arg-type]
        return checked[-1]

    monkeypatch.setattr(list_slices, "plan", misplaced)
    monkeypatch.setattr(list_slices, "unfaithful_groups", recorded)
    columns = _negatives(30_000, 20, 2_000_000, seed=3)
    ranking.write_negatives(columns, tmp_path / "sliced.parquet")
    assert checked == [[0], []]  # refuted, then written whole (nothing left to check)
    assert planned == [30_000]
    assert (hashlib.sha256((tmp_path / "sliced.parquet").read_bytes()).hexdigest()
            == _whole_write(columns, tmp_path / "whole.parquet"))
