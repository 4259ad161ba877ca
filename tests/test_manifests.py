"""generators/manifests.py: the logical digest of a written Parquet file, read a row group of a column at a time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from generators import ranking
from generators.manifests import parquet_digest
from generators.tgb import tgbl
from tgbhub.columns import read_parquet_columns
from tgbhub.errors import GenerationError
from tgbhub.hashing import content_digest

NEGATIVES = ("t", "src", "dst", "negatives", "count")


def _edges(rows: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"src": rng.integers(0, 1000, rows), "dst": rng.integers(0, 1000, rows),
            "t": np.sort(rng.integers(0, 1 << 40, rows)), "w": rng.standard_normal(rows),
            "msg": rng.standard_normal((rows, 3)).astype(np.float32)}


def _negatives(rows: int, t: np.dtype, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"t": np.sort(rng.integers(0, 1000, rows)).astype(t), "src": rng.integers(0, 50, rows, dtype=np.int32),
            "dst": rng.integers(0, 50, rows, dtype=np.int32),
            "negatives": rng.integers(-1, 50, (rows, 4), dtype=np.int32), "count": np.full(rows, 4, np.int32)}


@pytest.mark.parametrize("rows", [0, 1, 333])
def test_the_digest_of_an_edges_file_is_the_whole_columns_digest(rows: int, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tgbl, "ROW_GROUP_ROWS", 50)
    columns = _edges(rows)
    path = tmp_path / "edges.parquet"
    tgbl.write_parquet(columns, path)
    assert pq.ParquetFile(path).num_row_groups == max(1, -(-rows // 50))
    names = list(columns)
    expected = content_digest(read_parquet_columns(path, tuple(names)))
    assert expected == content_digest(columns)
    assert parquet_digest(path, names) == expected
    assert parquet_digest(path, names[::-1]) == content_digest({n: columns[n] for n in names[::-1]})
    assert parquet_digest(path, ["t"]) != expected


@pytest.mark.parametrize(("rows", "t"), [(0, np.int64), (120, np.int64), (120, np.float64)])
def test_the_digest_of_a_negatives_file_reads_the_lists_as_a_matrix(rows: int, t: np.dtype, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranking, "NEGATIVES_ROW_GROUP", 32)
    columns = _negatives(rows, t)
    path = tmp_path / "negatives.parquet"
    ranking.write_negatives(columns, path)
    assert pq.ParquetFile(path).num_row_groups == max(1, -(-rows // 32))
    read = read_parquet_columns(path, NEGATIVES)
    assert read["negatives"].shape == (rows, 4)
    assert parquet_digest(path, NEGATIVES) == content_digest(read) == content_digest(columns)


def test_a_missing_or_unhashable_column_is_named(tmp_path: Path) -> None:
    path = tmp_path / "odd.parquet"
    pq.write_table(pa.table({"n": pa.array([1, None, 3], pa.int64()), "s": pa.array(["a", "b", "c"])}), path)
    with pytest.raises(GenerationError, match="no column 'x'"):
        parquet_digest(path, ["x"])
    with pytest.raises(GenerationError, match="column 's' is string"):
        parquet_digest(path, ["s"])
    with pytest.raises(GenerationError, match="column 'n' reads back as float64, not as its type int64"):
        parquet_digest(path, ["n"])
