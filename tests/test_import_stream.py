"""The streamed TGB import writes the bytes the whole-table import writes, for every tgbl layout: CSV
blocks of a few KB (dozens of blocks), first-appearance ids numbered across them
(:class:`generators.tgb.release.BlockNumbering`, merged many times), rows out of time order sorted in place; and
the whole-table reading (:data:`generators.tgb.tgbl.STREAMED` emptied) is the reference, itself checked against
py-tgb 2.3.0 by the parity tests (``test_compat_tgb.py``, ``test_importing.py``, ``test_import_flight.py``)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests import tgb_formats as formats
from tgbhub import progress
from tgbhub.errors import GenerationError
from generators import spill
from generators.tgb import catalogue, release, tgbl
from generators.tgb.importer import _convert
from generators.tgb.release import BlockNumbering, first_appearance
from generators.tgb.release import Release as OpenedRelease


def _files_and_manifest(name: str, zipped: Path, folder: Path) -> tuple[dict[str, bytes], str]:
    """Every file's bytes and the manifest of ``zipped``'s import, checked against what it measures."""
    item = catalogue.entry(name)
    opened = OpenedRelease(zipped, dict(item.files))
    try:
        _, info = tgbl.convert(item, opened)
    finally:
        opened.close()
    converted = _convert(item, zipped, "0" * 64, info["measured"], folder)
    return ({file: path.read_bytes() for file, path in converted.files.items()},
            json.dumps(converted.document, sort_keys=True))


def _streamed_and_whole(name: str, zipped: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
                        ) -> tuple[tuple[dict[str, bytes], str], tuple[dict[str, bytes], str]]:
    monkeypatch.setattr(release, "CSV_BLOCK_BYTES", block)
    monkeypatch.setattr(release, "NUMBERING_MERGE_MIN", 64)  # many merges of the block dictionaries
    monkeypatch.setattr(release, "NUMBERING_WAITING_ROWS", 50)  # ... also forced by the rows waiting
    monkeypatch.setattr(spill, "READ_ROWS", 97)  # the spilled columns read back in many uneven slices
    streamed = _files_and_manifest(name, zipped, tmp_path / "streamed")
    monkeypatch.setattr(tgbl, "STREAMED", {})  # the whole-table reading
    return streamed, _files_and_manifest(name, zipped, tmp_path / "whole")


def test_the_jodie_layout_streams_to_the_whole_tables_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tgbl-wiki's layout in a dozen blocks (and the negatives dict emptied as it converts) gives the files and
    manifest the whole-table reading gives: the same bytes, whatever pyarrow version writes both."""
    files = formats.write_tgbl(tmp_path / "files", "tgbl-wiki", n_edges=3000, seed=1, feat_dim=8)
    zipped = formats.zip_dataset(files, tmp_path / "zips")
    streamed, whole = _streamed_and_whole("tgbl-wiki", zipped, tmp_path, monkeypatch, 16 << 10)
    assert streamed == whole


@pytest.mark.parametrize("name", ["tgbl-coin", "tgbl-review", "tgbl-comment"])
def test_text_id_layouts_stream_to_the_whole_tables_bytes(name: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    files = formats.write_text_ids(tmp_path / "files", name, n_edges=4000, seed=3, n_nodes=1500)
    zipped = formats.zip_dataset(files, tmp_path / "zips")
    blocks = sum(1 for _ in release.csv_blocks(OpenedRelease(zipped, {"edgelist": files.files["edgelist"].name}),
                                               files.files["edgelist"].name, (1, 2), 8 << 10))
    assert blocks > 20
    streamed, whole = _streamed_and_whole(name, zipped, tmp_path, monkeypatch, 8 << 10)
    assert streamed == whole
    manifest = json.loads(streamed[1])
    assert manifest["stats"]["reordered_rows"] > 0  # the rows were sorted, in place
    assert manifest["graph"]["num_nodes"] > 1000


def test_flight_streams_to_the_whole_tables_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tgbl-flight: airport codes numbered across blocks, the node-feature file matched against the codes."""
    rows = formats.flight_rows(3000, seed=2)
    for k, row in enumerate(rows):  # airports that appear for the first time late in the file
        if k > 2000 and k % 7 == 0:
            row[2] = f"Z{k:03d}"
    rows = sorted(rows, key=lambda r: int(r[0]) // 86_400 % 3)  # out of time order: sorted stably by the importer
    files = formats.write_flight(tmp_path / "files", rows=rows)
    zipped = formats.zip_dataset(files, tmp_path / "zips")
    streamed, whole = _streamed_and_whole("tgbl-flight", zipped, tmp_path, monkeypatch, 4 << 10)
    assert streamed == whole
    assert "nodes.parquet" in streamed[0] and json.loads(streamed[1])["stats"]["reordered_rows"] > 0


@pytest.mark.parametrize("merge_min", [1, 50, 1 << 20])
def test_block_numbering_is_first_appearance_over_every_row(merge_min: int) -> None:
    """Blocks of random sizes, merged after every block, every few blocks, or only at the end: the ids and the
    dictionary :func:`first_appearance` gives over the whole edge list."""
    rng = np.random.default_rng(merge_min)
    names = np.array([f"n{i}" for i in rng.permutation(3000)], dtype=object)
    heads = pa.array(names[np.minimum(rng.zipf(1.3, 20_000), 3000) - 1].tolist(), type=pa.large_string())
    tails = pa.array(names[rng.integers(0, 3000, 20_000)].tolist(), type=pa.large_string())
    cuts = np.unique(np.concatenate([[0, 20_000], rng.integers(0, 20_000, 40)]))
    numbering = BlockNumbering(merge_min)
    pieces = [numbering.add(heads[lo:hi], tails[lo:hi]) for lo, hi in zip(cuts[:-1], cuts[1:])]
    dictionary = numbering.finish()
    head, tail, expected = first_appearance(heads, tails)
    assert dictionary.equals(expected)
    assert np.array_equal(np.concatenate([h for h, _ in pieces]), head)
    assert np.array_equal(np.concatenate([t for _, t in pieces]), tail)
    assert BlockNumbering().finish() is None


def _zipped_csv(tmp_path: Path, name: str, lines: list[str]) -> tuple[Path, str]:
    member = formats.edgelist_name(name)
    csv = tmp_path / member
    csv.write_text("\n".join(lines) + "\n")
    zipped = tmp_path / "release.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.write(csv, member)
    return zipped, member


def test_a_weight_type_change_after_the_first_block_reads_the_csv_whole(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Integer weights in the first block, a decimal later: Arrow's streaming reader cannot change the type, so
    the CSV is read whole, numbered afresh (nothing of the abandoned blocks is kept)."""
    lines = ["time,src,dst,weight"] + [f"{k},a{k % 97},b{k % 13},{k % 4}" for k in range(3000)] + ["3000,c,a1,0.5"]
    zipped, member = _zipped_csv(tmp_path, "tgbl-coin", lines)
    monkeypatch.setattr(release, "CSV_BLOCK_BYTES", 4 << 10)
    opened = OpenedRelease(zipped, {"edgelist": member})
    try:
        edges, nodes = tgbl.parse_edges(opened, {"edgelist": member}, "stablecoin")
        monkeypatch.setattr(tgbl, "STREAMED", {})
        whole, whole_nodes = tgbl.parse_edges(opened, {"edgelist": member}, "stablecoin")
    finally:
        opened.close()
    assert nodes.equals(whole_nodes) and len(nodes) == 97 + 13 + 1
    assert all(np.array_equal(edges[column], whole[column]) for column in whole)
    assert edges["edge_feat"][-1, 0] == -1.0 and edges["src"][-1] == len(nodes) - 1


def test_a_long_callsign_in_a_later_block_is_named_by_its_row_in_the_csv(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    rows = formats.flight_rows(2000, seed=1)
    rows[1733][3] = "ABCDEFGHI"
    files = formats.write_flight(tmp_path / "files", rows=rows)
    member = files.files["edgelist"].name
    monkeypatch.setattr(release, "CSV_BLOCK_BYTES", 4 << 10)
    opened = OpenedRelease(formats.zip_dataset(files, tmp_path / "zips"), {"edgelist": member})
    try:
        with pytest.raises(GenerationError, match=r"row 1733 \(line 1735\) has the callsign 'ABCDEFGHI'"):
            tgbl.parse_edges(opened, {"edgelist": member}, "opensky")
    finally:
        opened.close()


def test_an_empty_edge_list_is_read_whole(tmp_path: Path) -> None:
    """No row at all: the streamed reading yields nothing and the whole-table reading gives its answer."""
    zipped, member = _zipped_csv(tmp_path, "tgbl-comment", ["ts,src,dst,num_words,score"])
    opened = OpenedRelease(zipped, {"edgelist": member})
    try:
        with pytest.raises(GenerationError, match="not a CSV in TGB's layout"):
            tgbl.parse_edges(opened, {"edgelist": member}, "reddit-comments")
    finally:
        opened.close()


@pytest.mark.parametrize("rows", [0, 1, 999, 1000, 2500])
def test_parquet_row_groups_are_one_whole_table_writes_bytes(rows: int, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """write_parquet, group by group, writes what one write_table of the whole table with the same options
    writes (the files imported before it are unchanged): row groups of ROW_GROUP_ROWS rows, the last one short."""
    rng = np.random.default_rng(rows)
    columns = {"t": np.arange(rows, dtype=np.int64), "src": rng.integers(0, 50, rows).astype(np.int32),
               "edge_feat": rng.normal(size=(rows, 3))[:, ::-1]}  # edge_feat: a strided view
    monkeypatch.setattr(tgbl, "ROW_GROUP_ROWS", 1000)
    tgbl.write_parquet(columns, tmp_path / "groups.parquet")
    whole = pa.Table.from_arrays(
        [pa.array(columns["t"]), pa.array(columns["src"]),
         pa.FixedSizeListArray.from_arrays(pa.array(np.ascontiguousarray(columns["edge_feat"]).reshape(-1)), 3)],
        names=list(columns))
    pq.write_table(whole, tmp_path / "whole.parquet", compression="zstd", row_group_size=1000, write_statistics=True)
    assert (tmp_path / "groups.parquet").read_bytes() == (tmp_path / "whole.parquet").read_bytes()
    metadata = pq.ParquetFile(tmp_path / "groups.parquet").metadata
    assert metadata.num_row_groups == max(1, -(-rows // 1000)) and metadata.num_rows == rows


def test_every_stage_reports_progress_unless_silenced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Off a terminal each stage writes its progress line once it has run a while (a clock that moves 10 s per
    reading here), the read counting rows; TGBHUB_NO_PROGRESS (set by --quiet) silences them all."""
    files = formats.write_text_ids(tmp_path / "files", "tgbl-coin", n_edges=3000, seed=5)
    zipped = formats.zip_dataset(files, tmp_path / "zips")
    item = catalogue.entry("tgbl-coin")
    ticks = iter(range(0, 10_000_000, 10))
    monkeypatch.setattr(progress, "clock", lambda: float(next(ticks)))
    monkeypatch.setattr(release, "CSV_BLOCK_BYTES", 32 << 10)

    def run(folder: Path) -> str:
        opened = OpenedRelease(zipped, dict(item.files), progress.counter)  # as tgbhub.local.imports hands it in
        try:
            converted, _ = tgbl.convert(item, opened)
        finally:
            opened.close()
        tgbl.write(converted, folder, progress.counter)
        return capsys.readouterr().err

    monkeypatch.delenv("TGBHUB_NO_PROGRESS", raising=False)
    lines = run(tmp_path / "loud").splitlines()
    member = files.files["edgelist"].name
    for prefix, last in ((f"reading {member}: ", "3000 "), (f"numbering the node ids of {member}: ", "1/1 "),
                         ("sorting the edges of tgbl-coin by time: ", "1/1 "),
                         ("converting the negatives of tgbl-coin: ", "2/2 test "),
                         ("writing the imported files: ", "3/3 negatives-test.parquet ")):
        said = [line.removeprefix(prefix) for line in lines if line.startswith(prefix)]
        assert said and said[-1].startswith(last), (prefix, lines)
    monkeypatch.setenv("TGBHUB_NO_PROGRESS", "1")
    assert run(tmp_path / "quiet") == ""


def test_tgbhub_hands_its_progress_to_the_import_and_a_bare_release_stays_silent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The generators never import tgbhub's progress module (docs/design.md, One flow, one direction):
    ``tgbhub.local.imports`` hands it in, so ``tgbhub import`` shows every stage, while a release opened without it (a
    rebuild, a script) shows none."""
    files = formats.write_text_ids(tmp_path / "files", "tgbl-coin", n_edges=3000, seed=5)
    zipped = formats.zip_dataset(files, tmp_path / "zips")
    ticks = iter(range(0, 10_000_000, 10))
    monkeypatch.setattr(progress, "clock", lambda: float(next(ticks)))
    monkeypatch.delenv("TGBHUB_NO_PROGRESS", raising=False)
    item = catalogue.entry("tgbl-coin")
    opened = OpenedRelease(zipped, dict(item.files))
    try:
        converted, info = tgbl.convert(item, opened)
    finally:
        opened.close()
    tgbl.write(converted, tmp_path / "bare")
    assert capsys.readouterr().err == ""

    from tgbhub.local.imports import import_tgb

    import_tgb("tgbl-coin", zipped, cache_dir=tmp_path / "cache", expected_stats=info["measured"])
    said = capsys.readouterr().err
    for stage in ("reading ", "numbering the node ids", "sorting the edges", "converting the negatives",
                  "writing the imported files"):
        assert stage in said, (stage, said)


def test_the_split_quantiles_are_numpys_to_the_bit() -> None:
    """py-tgb splits at ``np.quantile(t, [0.70, 0.85])``; the streamed split reads two values a quantile and must
    give the same floats (ties, huge timestamps, one row, interpolation on both sides of 0.5)."""
    rng = np.random.default_rng(7)
    cases = [np.array([5]), np.array([1, 2]), np.arange(10) * (1 << 50), np.full(11, 3)]
    for _ in range(400):
        n = int(rng.integers(1, 3000))
        high = int(rng.choice([10, 1 << 20, 1 << 40, (1 << 62)]))
        cases.append(np.sort(rng.integers(-high // 4, high, n)))
    for t in cases:
        quantiles = [float(q) for q in rng.random(2)] + [0.70, 0.85, 0.0, 1.0]
        expected = [float(v) for v in np.quantile(t, quantiles)]
        assert tgbl.sorted_quantiles(t, quantiles) == expected, (len(t), quantiles)
