"""tgbl-flight (TGB v2): a small release in py-tgb 2.3.0's exact format (``tests/tgb_formats.py``'s
:func:`write_flight`: ``day,src,dst,callsign,typecode`` with Unix seconds, ``airport_node_feat_v2.csv`` as TGB's
``clean_node_feat`` writes it, negatives keyed by processed ids), imported and checked against py-tgb's own load of
it: edges, edge features, negatives and the airport node features. The releases py-tgb cannot load reproducibly
(date strings) or at all (a 9-character callsign, an airport whose vector is not 20 values wide) are refused."""

from __future__ import annotations

import zipfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import tgbhub
from tests import tgb_formats as formats
from tgbhub.errors import GenerationError
from tgbhub.local.imports import import_tgb
from generators.tgb import catalogue

pytest.importorskip("tgb.linkproppred.dataset")

NAME = "tgbl-flight"


def _stats(pytgb: object, n_edges: int) -> dict:
    """The catalogue's statistics of a small release, counted on py-tgb's load of it."""
    data = pytgb.full_data
    return {"num_nodes": int(len(np.union1d(data["sources"], data["destinations"]))), "num_edges": n_edges,
            "num_timestamps": int(len(np.unique(data["timestamps"]))), "edge_feat_dim": 16}


@pytest.fixture(scope="module")
def flight(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """The release written, py-tgb's load of it, and tgbhub's import of its zip."""
    folder = tmp_path_factory.mktemp("flight")
    files = formats.write_flight(folder / formats.dir_name(NAME))
    zipped = formats.zip_dataset(files, folder / "zips")
    pytgb = formats.load_with_pytgb(files)
    stats = _stats(pytgb, len(files.truth["rows"]))
    manifest = import_tgb(NAME, zipped, cache_dir=folder / "cache", expected_stats=stats)
    ds = tgbhub.load_dataset(f"tgb/{NAME}", cache_dir=folder / "cache", offline=True)
    return SimpleNamespace(files=files, zipped=zipped, pytgb=pytgb, manifest=manifest, ds=ds)


def test_flight_equals_pytgbs(flight: SimpleNamespace) -> None:
    rows, pytgb, ds = flight.files.truth["rows"], flight.pytgb, flight.ds
    assert sorted(zipfile.ZipFile(flight.zipped).namelist()) == sorted(catalogue.entry(NAME).files.values())
    data = pytgb.full_data
    assert (ds.src == data["sources"]).all() and (ds.dst == data["destinations"]).all()
    assert (ds.t == data["timestamps"]).all() and ds.t.dtype == np.int64 and ds.t[0] == rows[0][0]
    assert ds.columns["edge_feat"].shape == (len(rows), 16)
    assert np.array_equal(ds.columns["edge_feat"], data["edge_feat"])
    assert (ds.columns["edge_id"] + ds.manifest.graph["pytgb_edge_idxs_start"] == data["edge_idxs"]).all()
    # the padding rules, spelled out: "b2" / "A350-1000" (9 characters: all '!')
    row = next(i for i, r in enumerate(rows) if r[3] == "b2" and r[4] == "A350-1000")
    b, two = ord("B") - 44 + 9, 2
    assert ds.columns["edge_feat"][row].tolist() == [b, two] + [-1] * 14
    for split in ("val", "test"):
        lo, hi = ds.splits[split]
        expected = pytgb.negative_sampler.query_batch(ds.src[lo:hi], ds.dst[lo:hi], ds.t[lo:hi], split_mode=split)
        got = ds.negatives(split)
        assert hi > lo
        assert [got.negatives[i, :got.count[i]].tolist() for i in range(hi - lo)] == \
            [list(map(int, e)) for e in expected]


def test_airport_node_features_equal_pytgbs(flight: SimpleNamespace) -> None:
    """nodes.parquet holds py-tgb's node_feat bit for bit, one row per node id; the manifest names the file and the
    layout py-tgb's process_node_feat gives the vector (types and continents numbered by first appearance among the
    airports of the edges; the others, listed first in the file, do not count)."""
    pytgb, ds, truth = flight.pytgb, flight.ds, flight.files.truth
    declared = ds.manifest.graph["node_feat"]
    nodes = ds.artifact(declared["file"])
    theirs = pytgb.node_feat
    assert theirs.dtype == np.float64 and theirs.shape == (len(formats.FLIGHT_AIRPORTS), 20)
    assert_array_equal(nodes["node"], np.arange(len(theirs)))
    assert nodes[declared["column"]].dtype == np.float64 and nodes[declared["column"]].shape == theirs.shape
    assert_array_equal(nodes[declared["column"]], theirs)
    assert declared["dim"] == 20 and ds.manifest.stats["node_feat_dim"] == 20
    listed = {row[0]: row for row in truth["airports"]}
    used = [row for row in truth["airports"] if row[0] in truth["node_ids"]]
    kinds, continents = list(dict.fromkeys(r[1] for r in used)), list(dict.fromkeys(r[2] for r in used))
    layout = declared["layout"]
    assert list(layout["type"]["one_hot"]) == kinds and "closed" not in kinds and len(kinds) == 4
    assert list(layout["continent"]["one_hot"]) == continents and "NA" in continents and len(continents) == 7
    # one airport spelled out: one-hot type, one-hot continent, the region padded to 7 and encoded, coordinates
    code = formats.FLIGHT_AIRPORTS[3]
    _, kind, continent, region, longitude, latitude = listed[code]
    region_codes = [int(c) if c.isdigit() else -1 if c == "!" else ord(c.upper()) - 44 + 9
                    for c in region.ljust(7, "!")]
    expected = [float(k == kind) for k in kinds] + [float(c == continent) for c in continents] + region_codes + \
        [longitude, latitude]
    assert nodes["node_feat"][truth["node_ids"][code]].tolist() == expected
    unlisted = truth["node_ids"][formats.FLIGHT_UNLISTED]
    assert not theirs[unlisted].any() and not nodes["node_feat"][unlisted].any()
    assert ds.manifest.stats["nodes_without_features"] == 1
    assert ds.manifest.graph["node_features"] == "float64[20] (node_feat of nodes.parquet)"


def test_date_strings_and_long_callsigns_are_refused(tmp_path: Path) -> None:
    dated = [[f"2019-01-{1 + i // 10:02d}", formats.FLIGHT_AIRPORTS[i % 12], formats.FLIGHT_AIRPORTS[(i + 1) % 12],
              "UAL1", "B738"] for i in range(50)]
    zipped = formats.zip_dataset(formats.write_flight(tmp_path / "dated", rows=dated), tmp_path / "dated-zip")
    with pytest.raises(GenerationError, match=r"date strings \('2019-01-01'\).*local time zone.*Unix timestamps"):
        import_tgb(NAME, zipped, cache_dir=tmp_path / "cache")

    rows = formats.flight_rows(100)
    rows[7][3] = "ABCDEFGHI"  # 9 characters: py-tgb's row gets 17 features and fails
    files = formats.write_flight(tmp_path / "long", rows=rows)
    with pytest.raises(ValueError):
        formats.load_with_pytgb(files, load_negatives=False)
    zipped = formats.zip_dataset(files, tmp_path / "long-zip")
    with pytest.raises(GenerationError, match=r"row 7 \(line 9\) has the callsign 'ABCDEFGHI' of more than 8"):
        import_tgb(NAME, zipped, cache_dir=tmp_path / "cache")
    assert not formats.installed(tmp_path / "cache" / "tgb" / NAME)


def test_an_airport_vector_py_tgb_cannot_build_is_refused(tmp_path: Path) -> None:
    """A region of 8 characters makes the airport's vector 21 values wide: py-tgb fails to store it, and the import
    refuses the release, naming the row; an airport no edge has may hold anything (py-tgb skips it)."""
    airports = formats.flight_airports()
    used = next(k for k, row in enumerate(airports) if row[0] in formats.FLIGHT_AIRPORTS)
    unused = next(k for k, row in enumerate(airports) if row[0] not in formats.FLIGHT_AIRPORTS)
    airports[unused][3] = "XX-TOOLONG"
    skipped = formats.write_flight(tmp_path / "skipped", airports=airports)
    assert formats.load_with_pytgb(skipped, load_negatives=False).node_feat.shape == (12, 20)
    airports[used][3] = "US-LONG1"
    files = formats.write_flight(tmp_path / "wide", airports=airports)
    with pytest.raises(ValueError):
        formats.load_with_pytgb(files, load_negatives=False)
    with pytest.raises(GenerationError, match=rf"row {used} \(line {used + 2}\) encodes to 4 types \+ 7 continents "
                                              r"\+ 8 region characters \+ 2 coordinates = 21 values, not py-tgb's 20"):
        import_tgb(NAME, formats.zip_dataset(files, tmp_path / "zips"), cache_dir=tmp_path / "cache",
                   expected_stats={})
