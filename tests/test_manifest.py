"""Every committed manifest: valid Croissant, parsed by tgbhub, mapped to a generator and back, rebuildable."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tgbhub.generators.__main__ import manifest_path
from tgbhub.generators.tgrab.artifacts import EDGES_FILE, build_folder
from tgbhub.generators.tgrab.catalogue import GENERATORS, entries
from tgbhub.errors import ManifestError
from tgbhub.hashing import content_digest
from tgbhub.manifest import parse_manifest, plain, read_manifest
from tgbhub.registry import Registry, parse_reference

ROOT = Path(__file__).resolve().parent.parent / "manifests"
# base T-GRAB datasets (chaosnet/: tests/test_chaosnet_manifests.py; derived "~" variants: tests/test_tlpcf.py)
PATHS = sorted(p for p in ROOT.glob("t-grab/*/*.json") if "~" not in p.parent.name)


def test_there_is_one_manifest_per_catalogue_entry_and_back() -> None:
    expected = {manifest_path(ROOT, e.name, e.version) for e in entries()}
    assert set(PATHS) == expected and len(PATHS) == 52


@pytest.mark.parametrize("path", PATHS, ids=lambda p: f"{p.parent.name}@{p.stem}")
def test_manifest_maps_to_its_generator_and_recipe(path: Path) -> None:
    manifest = read_manifest(path)
    entry = next(e for e in entries() if e.name == manifest.name)
    assert manifest.version == entry.version == "1.0.0" == path.stem
    assert manifest.recipe.generator in GENERATORS
    assert manifest.recipe.version == GENERATORS[manifest.recipe.generator].version
    assert plain(manifest.recipe.params) == json.loads(json.dumps(entry.params))
    assert manifest.recipe.seed == entry.seed
    assert manifest.splits == GENERATORS[entry.generator].splits(entry.params)
    assert manifest.graph["num_snapshots"] == max(stop for _, stop in manifest.splits.values())
    assert manifest.task["candidates"]["kind"] in {"all-ordered-pairs", "incident-to-node"}


def test_every_manifest_validates_under_mlcroissant() -> None:
    mlc = pytest.importorskip("mlcroissant")
    for path in PATHS:
        dataset = mlc.Dataset(jsonld=str(path))
        assert dataset.metadata.name == read_manifest(path).name


def test_discrepancies_are_recorded_with_numbers() -> None:
    ce4 = read_manifest(ROOT / "t-grab" / "ce-4" / "1.0.0.json")
    assert ce4.known_discrepancies[0]["paper"] == 165_142 and ce4.known_discrepancies[0]["ours"] == 164_790
    assert ce4.stats["rows_original_code"] == 164_790
    assert ce4.stats["num_rows"] == 164_790 - 2 * ce4.stats["splits"]["test_inductive"]["empty_snapshots"]
    psto = read_manifest(ROOT / "t-grab" / "psto-2-p50" / "1.0.0.json")
    assert psto.known_discrepancies[0]["paper"]["family_min_rows"] == 219_960


def test_rebuild_matches_the_manifest_bytes_and_croissant_reads_the_rows(tmp_path: Path) -> None:
    mlc = pytest.importorskip("mlcroissant")
    entry = next(e for e in entries() if e.name == "t-grab/pdet-2-1")
    edges, document = build_folder(entry, tmp_path)
    manifest = read_manifest(ROOT / "t-grab" / "pdet-2-1" / "1.0.0.json")
    assert document["distribution"][0]["sha256"] == manifest.files[0].sha256
    assert content_digest(edges.columns()) == manifest.files[0].digest
    shutil.copy(ROOT / "t-grab" / "pdet-2-1" / "1.0.0.json", tmp_path / "croissant.json")
    records = list(mlc.Dataset(jsonld=str(tmp_path / "croissant.json")).records("edges"))
    assert len(records) == len(edges.t) == 10_560
    assert [int(records[0][f"edges/{c}"]) for c in ("t", "src", "dst")] == [
        int(edges.t[0]), int(edges.src[0]), int(edges.dst[0])]
    (tmp_path / EDGES_FILE).write_bytes(b"not parquet")
    with pytest.raises(Exception, match="edges.parquet"):
        list(mlc.Dataset(jsonld=str(tmp_path / "croissant.json")).records("edges"))


def _document() -> dict:
    return json.loads((ROOT / "t-grab" / "ce-1" / "1.0.0.json").read_text())


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.pop("splits"), "no 'splits'"),
    (lambda d: d["distribution"][0].update(sha256="abc"), "not 64 lower-case hex"),
    (lambda d: d["distribution"][0].update(contentSize="12 MB"), "expected '<bytes> B'"),
    (lambda d: d["distribution"][0].update(contentUrl="../../etc/passwd"), "not a path inside"),
    (lambda d: d.update(conformsTo="http://mlcommons.org/croissant/1.0"), "conformsTo"),
])
def test_malformed_manifests_are_refused_with_the_field_named(mutate, message: str) -> None:
    document = _document()
    mutate(document)
    with pytest.raises(ManifestError, match=message):
        parse_manifest(document)


def test_manifest_is_frozen() -> None:
    manifest = parse_manifest(_document())
    with pytest.raises(TypeError):
        manifest.task["threshold"] = 0.9  # type: ignore[index]
    assert manifest.splits["test"] == (3201, 3601)
    assert Registry(ROOT).resolve(parse_reference("t-grab/ce-1")).version == "1.0.0"
    assert np.isclose(manifest.task["threshold"], 0.5)
