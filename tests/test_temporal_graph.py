"""The temporal-graph dataset object's names, one meaning each: ``splits`` counts rows on a base dataset and on its
derived variant alike (a discrete-time base's snapshot ranges are ``snapshot_splits``), and a variant's column dtypes
are its parent's except where its transform's definition says otherwise, which the cards state. Its conversions
for tabular tools, ``to_pandas`` and ``to_hf``, give the edge file's own columns and types, checked against the
Parquet file itself (a T-GRAB base, its float-time variant, and a TGB release with a feature-vector column).
"""

from __future__ import annotations

import sys
from itertools import pairwise
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

import tgbhub
from tests import tgb_formats as formats
from tgbhub import api, cache
from tgbhub.errors import InvalidNameError, MissingExtraError

BASE = "t-grab/ce-4"
VARIANT = f"{BASE}~shuffle-s0"


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[tgbhub.data.TemporalGraphDataset, ...]:
    root = tmp_path_factory.mktemp("pair")
    base = tgbhub.load_dataset(BASE, cache_dir=root, offline=True)
    variant = tgbhub.load_dataset(VARIANT, cache_dir=root, offline=True)
    return base, variant, root


def _tiles_the_rows(ds: tgbhub.data.TemporalGraphDataset) -> None:
    """``splits`` are half-open row ranges, in order, covering every row once, each the rows ``split`` returns."""
    ranges = list(ds.splits.values())
    assert ranges[0][0] == 0 and ranges[-1][1] == ds.num_rows
    assert all(stop == start for (_, stop), (start, _) in pairwise(ranges))
    for name, (lo, hi) in ds.splits.items():
        part = ds.split(name)
        assert part.rows == (lo, hi) and len(part.t) == hi - lo
        for column in ("t", "src", "dst"):
            assert np.array_equal(getattr(part, column), getattr(ds, column)[lo:hi]), (ds.name, name, column)


def test_splits_count_rows_on_a_base_and_its_variant(pair) -> None:
    base, variant, _ = pair
    assert base.manifest.split_unit == "snapshot" and variant.manifest.split_unit == "row"  # stored as published
    _tiles_the_rows(base)
    _tiles_the_rows(variant)
    assert list(base.splits) == list(variant.splits)
    # the rows before the distorted test split are the parent's, at the same rows
    assert base.splits["train"] == variant.splits["train"] and base.splits["val"] == variant.splits["val"]
    assert base.splits["test"][0] == variant.splits["test"][0]
    assert variant.splits == {k: tuple(v) for k, v in variant.manifest.splits.items()}


def test_snapshot_splits_are_the_manifests_and_select_the_same_rows(pair) -> None:
    base, variant, _ = pair
    assert base.snapshot_splits == {k: tuple(v) for k, v in base.manifest.splits.items()}
    assert variant.snapshot_splits is None  # a variant's rows are placed by row, not by time
    for name, (start, stop) in base.snapshot_splits.items():
        lo, hi = base.splits[name]
        t = np.asarray(base.t[lo:hi])
        assert t.min() >= start and t.max() < stop and base.split(name).num_snapshots == stop - start
        assert int(np.count_nonzero((base.t >= start) & (base.t < stop))) == hi - lo


def test_the_card_shows_rows_and_snapshots_under_their_own_names(pair) -> None:
    base, variant, _ = pair
    card = base.card()
    assert card["splits"] == {k: list(v) for k, v in base.splits.items()}
    assert card["snapshot_splits"] == {k: list(v) for k, v in base.snapshot_splits.items()}
    assert "snapshot_splits" not in variant.card()


def test_a_variant_keeps_its_parents_dtypes_but_those_its_transform_declares(pair) -> None:
    base, variant, root = pair
    declared = {card["name"]: card for card in api.transforms()}["shuffle"]
    assert declared["dtypes"]["t"] == "float64" and "t becomes float64" in declared["dtype_change"]
    # the definition is what the published files store (their bytes are not changed to suit the API)
    entry = cache.lookup(variant.manifest, root)
    assert entry is not None
    stored = pq.read_schema(entry.folder / variant.manifest.graph["edges_file"])
    assert {field.name: field.type.to_pandas_dtype().__name__ for field in stored} == declared["dtypes"]
    # the object exposes the stored dtypes, the parent's rows included, and nothing else changes
    assert (base.t.dtype, variant.t.dtype) == (np.int64, np.float64)
    assert variant.dtypes == declared["dtypes"]
    assert variant.dtype_changes() == {"t": ("int64", "float64")} and base.dtype_changes() == {}
    assert (variant.src.dtype, variant.dst.dtype) == (base.src.dtype, base.dst.dtype)
    card = variant.card()
    assert card["dtypes"]["t"] == "float64" and card["dtype_changes"]["t"].startswith("int64 in t-grab/ce-4, float64")
    assert "shuffle" in card["dtype_changes"]["t"] and "dtype_changes" not in base.card()
    # a SHUFFLE only permutes the parent's times: whole numbers, stored as float64
    test = variant.split("test").t
    assert np.array_equal(np.sort(test), np.sort(base.split("test").t.astype(np.float64)))


def test_cards_label_the_logical_digest(pair) -> None:
    base, _, _ = pair
    card = base.card()
    assert card["digest"] == base.manifest.file("edges.parquet").digest != base.manifest.file("edges.parquet").sha256
    assert "logical content digest" in card["digest_kind"] and "not a file sha256" in card["digest_kind"]


def test_trajectory_splits_count_rows_and_ic_splits_ics(tmp_path: Path) -> None:
    ds = tgbhub.load_dataset("chaosnet/mini-k2.0-rho0.3-n8", cache_dir=tmp_path, offline=True)
    assert ds.ic_splits == {k: tuple(v) for k, v in ds.manifest.splits.items()} == {
        "train": (0, 3), "val": (3, 4), "test": (4, 6)}
    assert ds.splits == {"train": (0, 6000), "val": (6000, 8000), "test": (8000, 12000)}
    rows = np.asarray(ds.states).reshape(-1, ds.num_variables)
    assert len(rows) == ds.num_rows == ds.manifest.stats["num_rows"]
    for name, (lo, hi) in ds.splits.items():
        assert np.array_equal(ds.arrays(name, normalised=False), rows[lo:hi])
        assert ds.split_ics(name) == range(*ds.ic_splits[name])


def test_to_torch_keeps_the_exposed_time_dtype(pair) -> None:
    torch = pytest.importorskip("torch")
    base, variant, _ = pair
    assert base.to_torch("cpu")["t"].dtype == torch.int64
    tensors = variant.to_torch("cpu")
    assert tensors["t"].dtype == torch.float64 and tensors["src"].dtype == torch.int64
    assert torch.equal(tensors["t"], torch.from_numpy(np.array(variant.t)))


# --- to_pandas / to_hf: the edge file's rows, columns and types ------------------------------------------------------

@pytest.fixture(scope="module")
def flight(tmp_path_factory: pytest.TempPathFactory) -> tgbhub.data.TemporalGraphDataset:
    """A small tgbl-flight imported as `tgbhub import tgb` imports it: its edge file has a 16-wide feature column."""
    from tgbhub.local.imports import import_tgb

    folder = tmp_path_factory.mktemp("flight")
    files = formats.write_flight(folder / formats.dir_name("tgbl-flight"), n_edges=300)
    rows = files.truth["rows"]
    stats = {"num_nodes": len({r[1] for r in rows} | {r[2] for r in rows}), "num_edges": len(rows),
             "num_timestamps": len({r[0] for r in rows}), "edge_feat_dim": 16}
    import_tgb(files.name, formats.zip_dataset(files, folder / "zips"), cache_dir=folder / "cache",
               expected_stats=stats)
    return tgbhub.load_dataset("tgb/tgbl-flight", cache_dir=folder / "cache", offline=True)


def _edge_file(ds: tgbhub.data.TemporalGraphDataset) -> Path:
    """The verified Parquet edge file in the cache (its columns are memory-mapped beside it as NAME.COLUMN.npy)."""
    edges = ds.manifest.graph["edges_file"]
    path = Path(next(iter(ds._files[edges].values()))).with_name(edges)
    assert path.is_file()
    return path


def _stored_rows(ds: tgbhub.data.TemporalGraphDataset) -> tuple[int, int]:
    """The rows the dataset's own edge file holds: all of a base dataset's; a variant's, those of the split its
    transform rewrote (its other rows are the parent's, read from the parent's file)."""
    if ds.parent is None:
        return 0, ds.num_rows
    return ds.splits[ds.manifest.transform["params"]["scope"]]


def _equal_frames(a, b) -> bool:
    """Equal columns, dtypes, index and values, a vector column compared row by row."""
    if list(a.columns) != list(b.columns) or dict(a.dtypes) != dict(b.dtypes) or not a.index.equals(b.index):
        return False
    return all(np.array_equal(np.stack(a[c].to_numpy()), np.stack(b[c].to_numpy())) if a[c].dtype == object
               else np.array_equal(a[c].to_numpy(), b[c].to_numpy()) for c in a.columns)


def test_to_pandas_is_the_parquet_file(pair, flight) -> None:
    pytest.importorskip("pandas")
    base, variant, _ = pair
    for ds in (base, variant, flight):
        expected = pq.read_table(_edge_file(ds)).to_pandas()
        lo, hi = _stored_rows(ds)
        whole = ds.to_pandas()
        assert list(whole.columns) == list(expected.columns) and dict(whole.dtypes) == dict(expected.dtypes), ds.name
        assert _equal_frames(whole.iloc[lo:hi].reset_index(drop=True), expected), ds.name
        for name, (start, stop) in ds.splits.items():
            part = ds.to_pandas(name)
            assert _equal_frames(part, whole.iloc[start:stop].reset_index(drop=True)), (ds.name, name)
    # a variant's other rows are its parent's, with -1 in the columns the parent does not have
    train, parents = variant.to_pandas("train"), base.to_pandas("train")
    assert np.array_equal(train["t"].to_numpy(), parents["t"].to_numpy()) and (train["copy_idx"] == -1).all()
    assert flight.to_pandas("val")["edge_feat"].iloc[0].shape == (16,)
    with pytest.raises(InvalidNameError, match="holdout"):
        flight.to_pandas("holdout")


def test_to_hf_holds_every_split_with_the_files_types(pair, flight) -> None:
    pytest.importorskip("datasets")
    for ds in (*pair[:2], flight):
        table = pq.read_table(_edge_file(ds)).replace_schema_metadata(None)
        splits = ds.to_hf()
        assert list(splits) == list(ds.splits), ds.name
        for name, (lo, hi) in ds.splits.items():
            arrow = splits[name].data.table.replace_schema_metadata(None)
            assert arrow.schema == table.schema and arrow.num_rows == hi - lo, (ds.name, name)
        lo, hi = _stored_rows(ds)
        stored = [name for name, rows in ds.splits.items() if lo <= rows[0] and rows[1] <= hi]
        for name in stored:
            start, stop = ds.splits[name]
            assert splits[name].data.table.replace_schema_metadata(None).equals(table.slice(start - lo, stop - start))


def test_a_missing_extra_names_its_install_command(pair, monkeypatch: pytest.MonkeyPatch) -> None:
    base = pair[0]
    for module, extra, call in (("pandas", "pandas", base.to_pandas), ("datasets", "datasets", base.to_hf)):
        with monkeypatch.context() as patch:
            patch.setitem(sys.modules, module, None)  # a None entry makes `import` raise ModuleNotFoundError
            with pytest.raises(MissingExtraError, match=rf"pip install -e '\.\[{extra}\]'"):
                call()
