"""Columns kept on disk during an import (generators/spill.py): what is written reads back exactly, in any
slice, as another dtype and as a row range; the sink gives the same columns on disk and in memory; and reading a
column never maps it, so the reader's resident memory does not grow with the file."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from generators.spill import (ColumnSink, ColumnWriter, DiskColumn, MappedReads, blocks, in_memory, remove, rewrite,
                              spilled)


def _written(folder: Path, blocks: list[np.ndarray], name: str = "c") -> DiskColumn:
    writer = ColumnWriter(folder / f"{name}.raw", blocks[0].dtype)
    for block in blocks:
        writer.append(block)
    return writer.finish()


@pytest.mark.parametrize("tail", [(), (3,), (0,)])
def test_a_column_reads_back_in_any_slice_and_range(tmp_path: Path, tail: tuple[int, ...]) -> None:
    rng = np.random.default_rng(0)
    whole = rng.integers(-1000, 1000, (257, *tail))
    column = _written(tmp_path, [whole[:100], whole[100:101], whole[101:]])
    assert column.shape == whole.shape and column.ndim == whole.ndim and len(column) == 257
    for _ in range(50):
        a, b = sorted(int(x) for x in rng.integers(-300, 300, 2))
        assert np.array_equal(column[a:b], whole[a:b])
    view = column.view(40, 200)
    assert np.array_equal(view[10:30], whole[50:70]) and len(view) == 160
    assert np.array_equal(view.astype(np.int32)[0:160], whole[40:200].astype(np.int32))
    assert column.astype(np.int32)[0:5].dtype == np.int32
    assert np.array_equal(np.concatenate(list(blocks(column, 60))), whole)


def test_a_column_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    column = _written(tmp_path, [np.arange(10)])
    with pytest.raises(TypeError, match="slice of rows of step 1"):
        column[::2]
    with pytest.raises(TypeError, match="slice of rows"):
        column[3]  # type: ignore[index]
    writer = ColumnWriter(tmp_path / "m.raw", np.float64)
    writer.append(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"a block of rows \(4,\) after rows \(3,\)"):
        writer.append(np.zeros((2, 4)))
    writer.close()
    (tmp_path / "c.raw").write_bytes(b"\0" * 16)  # cut short: two of ten rows
    with pytest.raises(OSError, match="cut short"):
        column[0:10]


def test_the_sink_gives_the_same_columns_on_disk_and_in_memory(tmp_path: Path) -> None:
    def blocks() -> list[dict[str, np.ndarray]]:
        return [{"t": np.arange(k, k + 5), "feat": np.full((5, 2), float(k))} for k in range(0, 20, 5)]

    on_disk, memory = ColumnSink(tmp_path), ColumnSink(None)
    on_disk.extend(blocks())
    memory.extend(blocks())
    disk_columns, memory_columns = on_disk.finish(), memory.finish()
    assert list(disk_columns) == list(memory_columns) == ["t", "feat"]
    for name in memory_columns:
        assert isinstance(disk_columns[name], DiskColumn) and isinstance(memory_columns[name], np.ndarray)
        assert np.array_equal(disk_columns[name][0:20], memory_columns[name])
    assert in_memory({"f": memory_columns}) is not None and in_memory({"f": disk_columns}) is None
    again = ColumnSink(tmp_path)
    again.extend(blocks())
    again.discard()  # a reading that starts over leaves no file behind
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(c.path.name for c in disk_columns.values())
    remove(list(disk_columns.values()))
    assert not list(tmp_path.iterdir())


def test_rewrite_adds_in_place_and_spilled_writes_an_array(tmp_path: Path) -> None:
    column = spilled(np.arange(1000, dtype=np.int64), tmp_path, "dst")
    assert isinstance(column, DiskColumn)
    rewrite(column.view(100, 1000), 7, rows=64)
    expected = np.arange(1000)
    expected[100:] += 7
    assert np.array_equal(column[0:1000], expected)
    assert spilled(expected, None, "dst") is expected


def test_reading_a_large_column_does_not_grow_the_resident_set(tmp_path: Path) -> None:
    """Plain reads, not a mapping: sweeping 256 MiB a 1 MiB slice at a time leaves the resident set where it was
    (a mapped file's touched pages would count in it)."""
    column = _written(tmp_path, [np.ones(1 << 17, dtype=np.int64)] * 256)  # 256 MiB in 1 MiB blocks

    def resident() -> int:
        status = Path("/proc/self/status").read_text().splitlines()
        return int(next(line for line in status if line.startswith("VmRSS:")).split()[1]) * 1024

    before = resident()
    total = sum(int(block.sum()) for block in blocks(column, 1 << 17))
    assert total == 1 << 25
    assert resident() - before < 64 << 20


def test_default_blocks_hold_at_most_read_rows_int64s_worth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A matrix's blocks are fewer rows (a block of a 20-wide int32 matrix reads 8/80 of the rows), a narrow
    column's are READ_ROWS rows, and a spilled column is sized by what its file stores; every row comes back once."""
    from generators import spill

    monkeypatch.setattr(spill, "READ_ROWS", 100)
    matrix = np.arange(1000 * 20, dtype=np.int32).reshape(1000, 20)
    assert [len(block) for block in blocks(matrix)][:2] == [10, 10]
    assert np.array_equal(np.concatenate(list(blocks(matrix))), matrix)
    assert {len(block) for block in blocks(np.arange(250, dtype=np.int8))} == {100, 50}
    stored = spilled(np.arange(300, dtype=np.int64).reshape(150, 2), tmp_path, "wide").astype(np.int32)
    assert [len(block) for block in blocks(stored)][:2] == [50, 50]
    assert np.array_equal(np.concatenate(list(blocks(stored))), np.arange(300).reshape(150, 2))


def _resident() -> int:
    status = Path("/proc/self/status").read_text().splitlines()
    return int(next(line for line in status if line.startswith("VmRSS:")).split()[1]) * 1024


def test_mapped_reads_give_the_rows_of_a_slice(tmp_path: Path) -> None:
    """Mapped (any offset, so not page-aligned), read plainly when the column is cast or in memory: the same rows."""
    matrix = np.arange(5000 * 3, dtype=np.int32).reshape(5000, 3)
    column = spilled(matrix, tmp_path, "m")
    cast_column = spilled(np.arange(5000, dtype=np.int64), tmp_path, "c").astype(np.int32)
    with MappedReads() as reads:
        mapped = reads.rows(column, 1234, 4321)
        assert not mapped.flags.writeable  # a view of the file, not a copy
        assert np.array_equal(mapped, matrix[1234:4321])
        assert np.array_equal(reads.rows(column.view(7, 5000), 0, 3), matrix[7:10])
        assert np.array_equal(reads.rows(cast_column, 10, 20), np.arange(10, 20))
        assert np.array_equal(reads.rows(matrix, 4990, 6000), matrix[4990:])
        assert reads.rows(column, 3, 3).shape == (0, 3)
        kept = mapped  # still alive when the context closes: unmapped later, with it
    assert np.array_equal(kept[:2], matrix[1234:1236])


def test_mapped_reads_keep_only_recent_pages_resident(tmp_path: Path) -> None:
    """Sweeping a 256 MiB mapped column inside the context: the pages behind the sweep are dropped, so the
    resident set stays far below the column (a mapping left alone would hold every page it touched)."""
    column = _written(tmp_path, [np.ones(1 << 17, dtype=np.int64)] * 256)
    before, highest, total = _resident(), 0, 0
    with MappedReads() as reads:
        rows = reads.rows(column, 0, len(column))
        for first in range(0, len(rows), 1 << 17):
            total += int(rows[first:first + (1 << 17)].sum())
            highest = max(highest, _resident() - before)
            time.sleep(0.001)
        del rows
    assert total == 1 << 25
    assert highest < 96 << 20
