"""`tgbhub import tgb`: TGB releases in py-tgb 2.3.0's exact formats, converted, checked against py-tgb, verified
and cached; every broken release refused with nothing installed (tgbhub.local.imports, generators/tgb)."""

from __future__ import annotations

import dataclasses
import json
import pickle
import shutil
import zipfile
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest

import tgbhub
from tests import tgb_formats as formats
from tests.servers import MirrorServer, serving
from tgbhub.errors import (DatasetNotFoundError, FetchError, GenerationError, IntegrityError, InvalidNameError,
                           SubmissionError)
from tgbhub.cache import stored_manifest_path
from tgbhub.local.imports import import_tgb
from generators.tgb import catalogue
from tgbhub.manifest import RAI_FIELDS

NAME = "tgbl-wiki"


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory):
    """A small tgbl-wiki release (ragged negatives like the real one), its zip, and py-tgb's own load of it."""
    folder = tmp_path_factory.mktemp("tgb")
    files = formats.write_tgbl(folder / "files", NAME, n_edges=1000, seed=0)
    zipped = formats.zip_dataset(files, folder / "zips")
    loaded = formats.load_with_pytgb(files)
    data = loaded.full_data
    stats = {"num_nodes": int(len(np.union1d(data["sources"], data["destinations"]))),
             "num_edges": int(len(data["sources"])), "edge_feat_dim": int(data["edge_feat"].shape[1])}
    return zipped, loaded, stats


@pytest.fixture
def small_published(release, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the catalogue publish the small release's statistics (as if TGB had published this release)."""
    entry = dataclasses.replace(catalogue.CATALOGUE[NAME], stats=MappingProxyType(release[2]))
    monkeypatch.setattr(catalogue, "CATALOGUE", MappingProxyType({**catalogue.CATALOGUE, NAME: entry}))


def test_import_equals_pytgbs_loader(release, tmp_path: Path) -> None:
    zipped, pytgb, stats = release
    manifest = import_tgb(NAME, zipped, cache_dir=tmp_path, expected_stats=stats)
    ds = tgbhub.load_dataset(f"tgb/{NAME}", cache_dir=tmp_path, offline=True)
    assert (manifest.name, manifest.version, ds.source) == (f"tgb/{NAME}", "2.1.0", "cache")
    data = pytgb.full_data
    order = np.argsort(data["timestamps"], kind="stable")  # the release is time-sorted: order is the identity
    assert (order == np.arange(len(order))).all()
    assert (ds.src == data["sources"]).all() and (ds.dst == data["destinations"]).all()
    assert (ds.t == data["timestamps"]).all() and np.array_equal(ds.columns["edge_feat"], data["edge_feat"])
    assert (ds.columns["edge_id"] == data["edge_idxs"]).all()
    for split, mask in (("train", pytgb.train_mask), ("val", pytgb.val_mask), ("test", pytgb.test_mask)):
        lo, hi = ds.splits[split]
        assert np.flatnonzero(mask).tolist() == list(range(lo, hi)), split
        if split == "train":
            continue
        negatives = ds.negatives(split)
        expected = pytgb.negative_sampler.query_batch(ds.src[lo:hi], ds.dst[lo:hi], ds.t[lo:hi], split_mode=split)
        assert [negatives.negatives[i, :negatives.count[i]].tolist() for i in range(len(expected))] == [
            list(map(int, row)) for row in expected]
    assert len(set(ds.negatives("test").count.tolist())) > 1  # ragged, as the real release
    source = manifest.raw["stats"]["source"]
    assert source["url"] == catalogue.entry(NAME).url and len(source["zip_sha256"]) == 64


def test_an_imported_manifest_carries_tgbs_responsible_ai_fields_and_validates(release, tmp_path: Path) -> None:
    mlc = pytest.importorskip("mlcroissant")
    zipped, _, stats = release
    manifest = import_tgb(NAME, zipped, cache_dir=tmp_path, expected_stats=stats)
    rai = manifest.responsible_ai
    assert list(rai) == list(RAI_FIELDS) and all(rai.values())
    item = catalogue.entry(NAME)
    assert rai["rai:personalSensitiveInformation"][0] == item.personal_data
    assert "Wikipedia editors" in item.personal_data
    assert "Real-world data" in rai["rai:dataCollection"] and item.zip_name in rai["rai:dataCollection"]
    assert set(item.notes) <= set(rai["rai:dataLimitations"])  # the catalogue's per-dataset caveats, verbatim
    stored = stored_manifest_path(tmp_path, manifest.name, manifest.version)
    metadata = mlc.Dataset(jsonld=str(stored)).metadata
    assert metadata.personal_sensitive_information == [item.personal_data, *rai[
        "rai:personalSensitiveInformation"][1:]]
    assert metadata.data_collection == rai["rai:dataCollection"] and metadata.data_biases


def test_every_catalogue_entry_says_who_its_records_are_about() -> None:
    assert all(len(item.personal_data) > 40 for item in catalogue.CATALOGUE.values())


def test_evaluators_agree_and_ours_refuses_nan(release, tmp_path: Path) -> None:
    from tgb.linkproppred.evaluate import Evaluator

    zipped, _, stats = release
    import_tgb(NAME, zipped, cache_dir=tmp_path, expected_stats=stats)
    ds = tgbhub.load_dataset(f"tgb/{NAME}", cache_dir=tmp_path)
    negatives = ds.negatives("test")
    rng = np.random.default_rng(1)
    pos = rng.integers(0, 5, len(negatives)).astype(np.float32)  # ties on purpose
    neg = rng.integers(0, 5, negatives.negatives.shape).astype(np.float32)
    theirs = Evaluator(name=NAME)
    per_query = [theirs.eval({"y_pred_pos": pos[i:i + 1], "y_pred_neg": neg[i:i + 1, :negatives.count[i]],
                              "eval_metric": ["mrr"]})["mrr"] for i in range(len(pos))]
    submission = {"query": np.arange(len(pos)), "pos_score": pos,
                  "neg_scores": [neg[i, :negatives.count[i]].tolist() for i in range(len(pos))]}
    ours = ds.get_evaluator("ranking").evaluate(submission)
    assert ours["metrics"]["mrr"] == pytest.approx(float(np.mean(per_query)), abs=1e-6)
    pos[0] = np.nan  # py-tgb scores a NaN positive as rank 1 (MRR 1.0, docs/tgb.md); ours refuses it
    with pytest.raises(SubmissionError, match="pos_score"):
        ds.get_evaluator("ranking").evaluate({**submission, "pos_score": pos})


@pytest.fixture
def served(release, tmp_path: Path) -> Path:
    """A folder holding the release zip, for a loopback MirrorServer to serve."""
    folder = tmp_path / "served"
    folder.mkdir()
    shutil.copy(release[0], folder / release[0].name)
    return folder


def test_download_from_a_loopback_server_then_offline_from_the_kept_copy(release, served: Path, tmp_path: Path,
                                                                         small_published: None) -> None:
    zipped, _, _ = release
    with serving(MirrorServer(served)) as server:
        import_tgb(NAME, f"{server.url}/{zipped.name}", cache_dir=tmp_path / "cache")
        assert server.gets[f"/{zipped.name}"] == 1
    kept = tmp_path / "cache" / "downloads" / "tgb" / zipped.name
    assert kept.read_bytes() == zipped.read_bytes()
    shutil.rmtree(tmp_path / "cache" / "tgb")  # the cache entry is gone; the kept zip serves the next import
    manifest = import_tgb(NAME, cache_dir=tmp_path / "cache", offline=True)
    assert stored_manifest_path(tmp_path / "cache", manifest.name, manifest.version).is_file()


def test_truncated_and_corrupt_downloads_are_refused_and_nothing_kept(release, served: Path, tmp_path: Path,
                                                                      small_published: None) -> None:
    zipped, _, _ = release
    cache = tmp_path / "cache"
    with serving(MirrorServer(served)) as server:
        server.truncate.add(f"/{zipped.name}")
        with pytest.raises(FetchError, match=zipped.name):
            import_tgb(NAME, f"{server.url}/{zipped.name}", cache_dir=cache)
        server.truncate.clear()
        server.corrupt.add(f"/{zipped.name}")
        with pytest.raises((FetchError, GenerationError)):
            import_tgb(NAME, f"{server.url}/{zipped.name}", cache_dir=cache)
    assert not list((cache / "downloads" / "tgb").glob("*.zip"))  # nothing half-downloaded takes the name
    assert not formats.installed(cache / "tgb")


def test_a_corrupt_local_zip_is_refused(release, tmp_path: Path, small_published: None) -> None:
    zipped, _, _ = release
    broken = tmp_path / zipped.name
    data = bytearray(zipped.read_bytes())
    data[len(data) // 3] ^= 0xFF
    broken.write_bytes(bytes(data))
    with pytest.raises(GenerationError, match="download it again|CRC"):
        import_tgb(NAME, broken, cache_dir=tmp_path / "cache")
    assert not formats.installed(tmp_path / "cache" / "tgb")


def test_a_statistics_mismatch_is_refused_naming_each_number(release, tmp_path: Path) -> None:
    zipped, _, _ = release
    with pytest.raises(IntegrityError) as info:
        import_tgb(NAME, zipped, cache_dir=tmp_path)  # the catalogue's published tgbl-wiki: 9,227 nodes, 157,474 edges
    message = str(info.value)
    assert "num_edges" in message and "157474" in message.replace(",", "") and "Nothing was installed" in message
    assert not formats.installed(tmp_path / "tgb")


def test_a_pickle_that_runs_code_is_refused(release, tmp_path: Path, small_published: None) -> None:
    zipped, _, _ = release
    hostile = tmp_path / zipped.name
    with zipfile.ZipFile(zipped) as source, zipfile.ZipFile(hostile, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename.endswith("_test_ns_v2.pkl"):
                data = pickle.dumps({(1, 2, 3): _Shell()})
            target.writestr(item, data)
    with pytest.raises(GenerationError, match="posix.system|os.system|refusing"):
        import_tgb(NAME, hostile, cache_dir=tmp_path / "cache")


class _Shell:
    def __reduce__(self):
        import os

        return (os.system, ("echo pwned",))


def test_offline_without_a_copy_says_what_to_download_and_where(tmp_path: Path) -> None:
    with pytest.raises(FetchError) as info:
        import_tgb(NAME, cache_dir=tmp_path, offline=True)
    message = str(info.value)
    assert catalogue.entry(NAME).url in message and str(tmp_path / "downloads" / "tgb") in message


def test_a_tgb_dataset_not_imported_here_says_how(tmp_path: Path) -> None:
    with pytest.raises(DatasetNotFoundError, match="tgbhub import tgb/tgbl-review"):
        tgbhub.load_dataset("tgb/tgbl-review", cache_dir=tmp_path)
    with pytest.raises(DatasetNotFoundError, match="Did you mean"):
        tgbhub.load_dataset("tgb/tgbl-wikki", cache_dir=tmp_path)


def test_cli_import_prints_the_card(release, tmp_path: Path, small_published: None,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from tgbhub.cli import main

    zipped, _, stats = release
    assert main(["--cache-dir", str(tmp_path), "import", f"tgb/{NAME}", "--from", str(zipped.parent), "--json"]) == 0
    card = json.loads(capsys.readouterr().out)
    assert card["name"] == f"tgb/{NAME}" and card["num_rows"] == stats["num_edges"]
    assert card["checked"] == sorted(stats) and card["upstream"] == catalogue.entry(NAME).url
    assert main(["--cache-dir", str(tmp_path), "baseline", "edgebank", f"tgb/{NAME}", "--json"]) == 0
    assert 0 < json.loads(capsys.readouterr().out)["metrics"]["mrr"] <= 1


def test_an_import_is_published_served_and_fetched_verified(release, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A maintainer imports into the repository's manifests, publishes; a client with those manifests fetches the
    dataset from the hub, verified against the manifest the import produced."""
    import tgbhub.api
    from tgbhub.hub.serve import start_local_hub
    from tgbhub.publish import parse_target, publish
    from tgbhub.registry import Registry

    zipped, _, stats = release
    manifest = import_tgb(NAME, zipped, cache_dir=tmp_path / "maintainer", expected_stats=stats,
                          manifests=tmp_path / "manifests")
    registry = Registry(tmp_path / "manifests")
    assert registry.names("tgb") == [f"tgb/{NAME}"]
    results = publish("tgb", manifest.version, parse_target(f"git:{tmp_path / 'hub'}"), datasets=[NAME],
                      cache_dir=tmp_path / "maintainer", registry=registry)
    assert [r.tag for r in results] == [f"{NAME}-v{manifest.version}", f"v{manifest.version}"]
    monkeypatch.setattr(tgbhub.api, "_REGISTRY", registry)
    with start_local_hub(tmp_path / "hub") as hub:
        fetched = tgbhub.load_dataset(f"tgb/{NAME}", cache_dir=tmp_path / "client", hub_endpoint=hub.url)
    imported = tgbhub.load_dataset(f"tgb/{NAME}", cache_dir=tmp_path / "maintainer")
    assert fetched.source == "hub" and fetched.digest == imported.digest
    assert np.array_equal(fetched.columns["edge_feat"], imported.columns["edge_feat"])
    assert (fetched.negatives("test").negatives == imported.negatives("test").negatives).all()


def _other_parser_release(folder: Path, name: str, rows: list[list[object]], header: list[str]) -> formats.FormatFiles:
    """A small release of a tgbl dataset read by another py-tgb parser: its CSV (text ids, some with leading zeros)
    and hist_rnd-shaped negatives keyed by py-tgb's processed ids (renumbered by first appearance)."""
    import csv
    import io

    folder = folder / formats.dir_name(name)
    folder.mkdir(parents=True)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows(rows)
    edgelist = folder / formats.edgelist_name(name)
    edgelist.write_text(buffer.getvalue())
    ids: dict[str, int] = {}
    for row in rows:
        for raw in (row[1], row[2]):
            ids.setdefault(str(raw), len(ids))
    t = np.array([int(r[0]) for r in rows])
    val_time, test_time = np.quantile(t, [0.70, 0.85])
    rng = np.random.default_rng(3)
    paths = {"edgelist": edgelist}
    for split, inside in (("val", (t > val_time) & (t <= test_time)), ("test", t > test_time)):
        table = {(np.int64(ids[str(r[1])]), np.int64(ids[str(r[2])]), np.int64(int(r[0]))):
                 rng.choice(len(ids), 5, replace=False) for r, keep in zip(rows, inside) if keep}
        path = folder / formats.ns_name(name, split)
        path.write_bytes(pickle.dumps(table, protocol=pickle.HIGHEST_PROTOCOL))
        paths[f"{split}_ns"] = path
    return formats.FormatFiles(name, folder, paths, {})


@pytest.mark.parametrize("name", ["tgbl-coin", "tgbl-comment"])
def test_text_id_parsers_equal_pytgbs(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    people = [f"0x{i:03x}" for i in range(30)] + ["007", "7"]  # "007" and "7" are different ids to py-tgb
    times = np.sort(rng.integers(1_600_000_000, 1_600_100_000, 400))
    if name == "tgbl-coin":
        header = ["time", "src", "dst", "weight"]
        rows = [[int(t), people[rng.integers(32)], people[rng.integers(32)], float(rng.choice([0.0, 2.5, 800.0]))]
                for t in times]
    else:
        header = ["ts", "src", "dst", "num_words", "score"]
        rows = [[int(t), people[rng.integers(32)], people[rng.integers(32)], int(rng.integers(0, 900)),
                 int(rng.integers(-5, 50))] for t in times]
    files = _other_parser_release(tmp_path / "release", name, rows, header)
    zipped = formats.zip_dataset(files, tmp_path / "zips")
    pytgb = formats.load_with_pytgb(files)
    data = pytgb.full_data
    stats = {"num_nodes": int(len(np.union1d(data["sources"], data["destinations"]))), "num_edges": len(rows)}
    entry = dataclasses.replace(catalogue.CATALOGUE[name], stats=MappingProxyType(stats))
    monkeypatch.setattr(catalogue, "CATALOGUE", MappingProxyType({**catalogue.CATALOGUE, name: entry}))
    import_tgb(name, zipped, cache_dir=tmp_path / "cache")
    ds = tgbhub.load_dataset(f"tgb/{name}", cache_dir=tmp_path / "cache")
    assert (ds.src == data["sources"]).all() and (ds.dst == data["destinations"]).all()
    assert (ds.t == data["timestamps"]).all()
    assert np.array_equal(ds.columns["edge_feat"], data["edge_feat"])
    assert (ds.columns["edge_id"] + ds.manifest.graph["pytgb_edge_idxs_start"] == data["edge_idxs"]).all()
    for split in ("val", "test"):
        lo, hi = ds.splits[split]
        expected = pytgb.negative_sampler.query_batch(ds.src[lo:hi], ds.dst[lo:hi], ds.t[lo:hi], split_mode=split)
        got = ds.negatives(split)
        assert [got.negatives[i, :got.count[i]].tolist() for i in range(hi - lo)] == [list(map(int, e)) for e in expected]


def test_a_lost_cache_entry_is_rebuilt_from_the_kept_release(release, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The build source converts the zip the import kept again (checked by its sha256), and the cache verifies the
    result against the manifest; a kept zip of other bytes is refused, naming both hashes."""
    zipped, _, stats = release
    cache = tmp_path / "cache"
    monkeypatch.setenv("TGBHUB_CACHE", str(cache))
    kept = cache / "downloads" / "tgb" / zipped.name
    kept.parent.mkdir(parents=True)
    shutil.copy(zipped, kept)
    manifest = import_tgb(NAME, cache_dir=cache, expected_stats=stats, offline=True)  # from the kept copy
    first = tgbhub.load_dataset(f"tgb/{NAME}", cache_dir=cache)
    shutil.rmtree(cache / "tgb" / NAME / manifest.version)  # the entry is lost, the manifest and the zip are not
    again = tgbhub.load_dataset(f"tgb/{NAME}", cache_dir=cache, offline=True)
    assert again.source == "build" and again.digest == first.digest
    assert (again.negatives("test").negatives == first.negatives("test").negatives).all()
    shutil.rmtree(cache / "tgb" / NAME / manifest.version)
    kept.write_bytes(zipped.read_bytes() + b"\0")
    with pytest.warns(tgbhub.SourceWarning, match="build failed"), pytest.raises(
            tgbhub.SourceUnavailableError, match="was imported from a zip with sha256"):
        tgbhub.load_dataset(f"tgb/{NAME}", cache_dir=cache, offline=True)


TOY_IMPORTER = '''
"""A toy benchmark importer from outside the package: a release is a CSV of src,dst,t rows."""
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tgbhub.errors import DatasetNotFoundError, IntegrityError
from generators.importers import Converted, Importer, Release
from generators.manifests import croissant_document, file_object, parquet_record_set
from tgbhub.hashing import DIGEST_ALGORITHM, content_digest
from tgbhub.manifest import RAI_FIELDS

CATALOGUE = {"edges-a": {"rows": 12}, "edges-b": {"rows": 8}}


def entry(name):
    if name not in CATALOGUE:
        raise DatasetNotFoundError(f"toy/{name}", [f"edges-a"])
    return SimpleNamespace(name=name, **CATALOGUE[name])


def convert(item, path, sha256, expected, folder):
    rows = np.loadtxt(path, delimiter=",", dtype=np.int64, ndmin=2)
    if len(rows) != (expected or vars(item))["rows"]:
        raise IntegrityError(f"import of {item.name}: rows", str(item.rows), str(len(rows)), "Nothing was installed.")
    columns = {"t": rows[:, 2], "src": rows[:, 0].astype(np.int32), "dst": rows[:, 1].astype(np.int32)}
    pq.write_table(pa.table(columns), folder / "edges.parquet")
    n = len(rows)
    document = croissant_document(
        name=f"toy/{item.name}", version="1.0.0", description="a toy import", license="CC0", published="2026-11-25",
        citation="none", responsible_ai={key: "a toy: no data about anyone" for key in RAI_FIELDS},
        distribution=[file_object("edges.parquet", folder / "edges.parquet")],
        record_sets=[parquet_record_set("edges", "edges.parquet", "the edges", columns)],
        recipe={"generator": "toy/import", "version": "1.0.0", "params": {"sha256": sha256}, "seed": 0},
        digest=[{"file": "edges.parquet", "algorithm": DIGEST_ALGORITHM, "columns": list(columns),
                 "value": content_digest(columns)}],
        graph={"kind": "temporal-graph", "time": "continuous", "directed": True, "symmetric": False,
               "num_nodes": int(rows[:, :2].max()) + 1, "edges_file": "edges.parquet"},
        splits={"unit": "row", "boundaries": {"train": [0, n - 4], "val": [n - 4, n - 2], "test": [n - 2, n]}},
        tasks=[{"name": "none", "type": "none"}], stats={"num_rows": n}, discrepancies=[])
    return Converted(document=document, files={"edges.parquet": folder / "edges.parquet"}, columns={
        "edges.parquet": columns})


IMPORTER = Importer(name="toy", family="toy", summary="a toy benchmark", names=lambda: sorted(CATALOGUE),
                    entry=entry, card=vars, release=lambda item: Release(
                        url="http://127.0.0.1:9/none.csv", file_name=item.name + ".csv"),
                    version=lambda item: "1.0.0", convert=convert)
'''


def test_a_second_importer_from_its_own_folder_needs_one_registration_line(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from tgbhub.cli import main
    from generators import importers

    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "toy_importer.py").write_text(TOY_IMPORTER)
    monkeypatch.syspath_prepend(str(plugins))
    monkeypatch.setitem(importers.REGISTERED, "toy", "toy_importer")  # the one registration line
    release = tmp_path / "edges-a.csv"
    release.write_text("".join(f"{i % 5},{(i + 1) % 5},{10 * i}\n" for i in range(12)))
    cache = str(tmp_path / "cache")
    assert main(["list", "--importers", "--json"]) == 0
    assert {i["name"] for i in json.loads(capsys.readouterr().out)} == {"tgb", "toy"}
    assert main(["--cache-dir", cache, "import", "toy", "edges-a", "--from", str(release), "--json"]) == 0
    card = json.loads(capsys.readouterr().out)
    assert card["name"] == "toy/edges-a" and card["num_rows"] == 12  # imported, then opened from the cache
    ds = tgbhub.load_dataset("toy/edges-a", cache_dir=cache, offline=True)
    assert ds.source == "cache" and list(ds.split("test").t) == [100, 110]
    with pytest.raises(DatasetNotFoundError, match="toy/edges-b.*`tgbhub import toy/edges-b`"):
        tgbhub.load_dataset("toy/edges-b", cache_dir=cache, offline=True)  # in the catalogue, not imported
    with pytest.raises(DatasetNotFoundError, match="Did you mean 'toy/edges-a'"):
        tgbhub.load_dataset("toy/edges-c", cache_dir=cache, offline=True)
    assert main(["--cache-dir", cache, "import", "toy", "edges-a", "--from", str(tmp_path / "missing.csv")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["--cache-dir", cache, "list", "--family", "toy", "--json"]) == 0
    assert [(r["name"], r["status"], r["version"]) for r in json.loads(capsys.readouterr().out)] == [
        ("toy/edges-a", "imported", "1.0.0"), ("toy/edges-b", "import required", None)]


def test_cli_imports_a_modified_release_with_expected_stats(release, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A release that is not TGB's (this small one) is refused against the published statistics, and imported from
    the CLI with --expected-stats FILE, the manifest saying it is a modified release."""
    from tgbhub.cli import main

    zipped, _, stats = release
    cache = str(tmp_path / "cache")
    assert main(["--cache-dir", cache, "import", f"tgb/{NAME}", "--from", str(zipped), "--offline"]) == 2
    assert "statistics" in capsys.readouterr().err
    given = tmp_path / "stats.json"
    given.write_text(json.dumps(stats))
    assert main(["--cache-dir", cache, "import", f"tgb/{NAME}", "--from", str(zipped), "--offline",
                 "--expected-stats", str(given), "--json"]) == 0
    capsys.readouterr()
    manifest = tgbhub.manifest_of(f"tgb/{NAME}", cache_dir=cache, offline=True)
    assert manifest.stats["modified_release"]["checked_against"] == stats
    assert manifest.stats["modified_release"]["catalogue_stats"] == dict(catalogue.CATALOGUE[NAME].stats)
    assert any(d["field"] == "release" for d in manifest.known_discrepancies)
    for bad, why in (("missing.json", "cannot read"), ("list.json", "not an object")):
        if bad == "list.json":
            (tmp_path / bad).write_text("[1, 2]")
        assert main(["--cache-dir", cache, "import", f"tgb/{NAME}", "--from", str(zipped), "--offline",
                     "--expected-stats", str(tmp_path / bad)]) == 2
        assert why in capsys.readouterr().err


def test_the_importer_is_found_by_the_datasets_family() -> None:
    from tgbhub.local.imports import importer_for

    assert importer_for("tgb/tgbl-wiki") == "tgb"
    with pytest.raises(InvalidNameError, match="needs its family: .* e.g. `tgbhub import tgb/tgbl-wiki`"):
        importer_for("tgbl-wiki")
    with pytest.raises(InvalidNameError, match="no importer converts family 't-grab' .*`tgbhub get t-grab/ce-4`"):
        importer_for("t-grab/ce-4")
