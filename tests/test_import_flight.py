"""tgbl-flight (TGB v2): a small release in py-tgb 2.3.0's exact format (``day,src,dst,callsign,typecode`` with Unix
seconds, ``airport_node_feat_v2.csv``, negatives keyed by processed ids), imported and checked against py-tgb's own
load of it; the releases py-tgb cannot load reproducibly (date strings) or at all (a 9-character callsign) refused."""

from __future__ import annotations

import csv
import dataclasses
import io
import pickle
import zipfile
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest

import tgbhub
from tests import tgb_formats as formats
from tgbhub.errors import GenerationError
from tgbhub.importing import import_tgb
from tgbhub.tgb import catalogue

NAME = "tgbl-flight"
NODE_FILE = "airport_node_feat_v2.csv"
AIRPORTS = [f"K{chr(65 + i)}{chr(66 + i)}X" for i in range(10)] + ["007", "7"]  # "007" and "7" differ to py-tgb
TYPES = ["large_airport", "medium_airport", "small_airport", "heliport"]
CONTINENTS = ["NA", "EU", "AS", "AF", "OC", "SA", "AN"]
#: callsigns of 0..8 characters (lower case, digits), typecodes of 0..9 (9: py-tgb's '!!!!!!!!')
CALLSIGNS = ["", "A", "b2", "UAL", "dal12", "SWA123", "aal1234", "JBU12345"]
TYPECODES = ["", "B", "a3", "B738", "a320n", "B77W12", "e190zzz", "CRJ900xx", "A350-1000"]


def _write(folder: Path, rows: list[list[object]]) -> formats.FormatFiles:
    """The release's files (CSV rows as py-tgb's dataset script writes them, "\\r\\n"), the airport node features and
    hist_rnd-shaped negatives keyed by py-tgb's processed ids (first appearance, source before destination)."""
    folder = folder / formats.dir_name(NAME)
    folder.mkdir(parents=True)

    def write_csv(path: Path, header: list[str], body: list[list[object]]) -> Path:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\r\n")
        writer.writerow(header)
        writer.writerows(body)
        path.write_text(buffer.getvalue())
        return path

    paths = {"edgelist": write_csv(folder / formats.edgelist_name(NAME), ["day", "src", "dst", "callsign", "typecode"],
                                   rows)}
    # 4 types + 7 continents + a 7-character region + 2 coordinates = py-tgb's 20 node features
    airports = [[code, TYPES[i % 4], CONTINENTS[i % 7], f"US-{chr(65 + i)}", -73.5 + i, 40.25 - i]
                for i, code in enumerate(AIRPORTS)]
    paths["node_feat"] = write_csv(folder / NODE_FILE, ["airport_code", "type", "continent", "iso_region", "longitude",
                                                        "latitude"], airports)
    ids: dict[str, int] = {}
    for row in rows:
        for raw in (row[1], row[2]):
            ids.setdefault(str(raw), len(ids))
    if all(str(r[0]).isdigit() for r in rows):
        t = np.array([int(r[0]) for r in rows])
        val_time, test_time = np.quantile(t, [0.70, 0.85])
        rng = np.random.default_rng(3)
        for split, inside in (("val", (t > val_time) & (t <= test_time)), ("test", t > test_time)):
            table = {(np.int64(ids[str(r[1])]), np.int64(ids[str(r[2])]), np.int64(int(r[0]))):
                     rng.choice(len(ids), 5, replace=False) for r, keep in zip(rows, inside) if keep}
            paths[f"{split}_ns"] = folder / formats.ns_name(NAME, split)
            paths[f"{split}_ns"].write_bytes(pickle.dumps(table, protocol=pickle.HIGHEST_PROTOCOL))
    else:
        for split in ("val", "test"):
            paths[f"{split}_ns"] = folder / formats.ns_name(NAME, split)
            paths[f"{split}_ns"].write_bytes(pickle.dumps({}, protocol=pickle.HIGHEST_PROTOCOL))
    return formats.FormatFiles(NAME, folder, paths, {})


def _rows(n: int = 600, seed: int = 0) -> list[list[object]]:
    rng = np.random.default_rng(seed)
    days = np.sort(1_546_300_800 + 86_400 * rng.integers(0, 40, n))  # 2019-01-01 on, daily, in time order
    rows = []
    for i, day in enumerate(days.tolist()):
        src, dst = (AIRPORTS[i % 12], AIRPORTS[(i + 5) % 12]) if i < 12 else \
            (AIRPORTS[rng.integers(12)], AIRPORTS[rng.integers(12)])
        rows.append([day, src, dst, CALLSIGNS[rng.integers(len(CALLSIGNS))], TYPECODES[rng.integers(len(TYPECODES))]])
    return rows


def _publish(name: str, stats: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = dataclasses.replace(catalogue.CATALOGUE[name], stats=MappingProxyType(stats))
    monkeypatch.setattr(catalogue, "CATALOGUE", MappingProxyType({**catalogue.CATALOGUE, name: entry}))


def test_flight_equals_pytgbs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _rows()
    files = _write(tmp_path / "release", rows)
    zipped = formats.zip_dataset(files, tmp_path / "zips")
    assert sorted(zipfile.ZipFile(zipped).namelist()) == sorted(catalogue.entry(NAME).files.values())
    pytgb = formats.load_with_pytgb(files)
    data = pytgb.full_data
    assert pytgb.node_feat.shape == (12, 20)  # py-tgb read the airport file (not imported: see generators/tgb/tgbl.py)
    stats = {"num_nodes": int(len(np.union1d(data["sources"], data["destinations"]))), "num_edges": len(rows),
             "num_timestamps": int(len(np.unique(data["timestamps"]))), "edge_feat_dim": 16}
    _publish(NAME, stats, monkeypatch)
    import_tgb(NAME, zipped, cache_dir=tmp_path / "cache", expected_stats=stats)
    ds = tgbhub.load_dataset(f"tgb/{NAME}", cache_dir=tmp_path / "cache")
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


def test_date_strings_and_long_callsigns_are_refused(tmp_path: Path) -> None:
    dated = [[f"2019-01-{1 + i // 10:02d}", AIRPORTS[i % 12], AIRPORTS[(i + 1) % 12], "UAL1", "B738"]
             for i in range(50)]
    zipped = formats.zip_dataset(_write(tmp_path / "dated", dated), tmp_path / "dated-zip")
    with pytest.raises(GenerationError, match=r"date strings \('2019-01-01'\).*local time zone.*Unix timestamps"):
        import_tgb(NAME, zipped, cache_dir=tmp_path / "cache")

    rows = _rows(100)
    rows[7][3] = "ABCDEFGHI"  # 9 characters: py-tgb's row gets 17 features and fails
    files = _write(tmp_path / "long", rows)
    with pytest.raises(ValueError):
        formats.load_with_pytgb(files, load_negatives=False)
    zipped = formats.zip_dataset(files, tmp_path / "long-zip")
    with pytest.raises(GenerationError, match=r"row 7 \(line 9\) has the callsign 'ABCDEFGHI' of more than 8"):
        import_tgb(NAME, zipped, cache_dir=tmp_path / "cache")
    assert not (tmp_path / "cache" / "tgb" / NAME).exists() or not any((tmp_path / "cache" / "tgb" / NAME).iterdir())
