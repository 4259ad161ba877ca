"""Every committed manifest: valid Croissant, parsed by tgbhub, mapped to a generator and back, rebuildable."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from generators.families import families
from generators.manifests import with_responsible_ai
from generators.tgrab.artifacts import EDGES_FILE, build_folder
from generators.tgrab.catalogue import GENERATORS, entries
from scripts.manifests import main as generators_main, manifest_path
from tgbhub.errors import GenerationError, ManifestError
from tgbhub.hashing import content_digest
from tgbhub.manifest import (CROISSANT_CONFORMS_TO, MANIFEST_CONFORMS_TO, RAI_FIELDS, data_part, parse_manifest, plain,
                             read_manifest, same_data)
from tgbhub.registry import Registry, parse_reference

ROOT = Path(__file__).resolve().parent.parent / "manifests"
# base T-GRAB datasets (chaosnet/: tests/test_chaosnet_manifests.py; derived "~" variants: tests/test_tlpcf.py)
PATHS = sorted(p for p in ROOT.glob("t-grab/*/*.json") if "~" not in p.parent.name)
#: every committed dataset manifest, every family and version (task documents live one folder deeper)
ALL_PATHS = sorted(ROOT.glob("*/*/*.json"))


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
    # the committed manifest is exactly what a full rebuild writes, RAI fields included
    assert json.dumps(document, indent=1, ensure_ascii=False) + "\n" == (ROOT / "t-grab" / "pdet-2-1" /
                                                                         "1.0.0.json").read_text()
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
    (lambda d: d.update(conformsTo=["http://mlcommons.org/croissant/RAI/1.0"]), "conformsTo"),
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


def test_every_manifest_carries_the_responsible_ai_fields_and_mlcroissant_reads_them() -> None:
    mlc = pytest.importorskip("mlcroissant")
    assert len(ALL_PATHS) == 52 + 200  # T-GRAB's 52; ChaosNetBench's 100 instances at 1.0.0 and 1.1.0
    for path in ALL_PATHS:
        document = json.loads(path.read_text())
        assert document["conformsTo"] == list(MANIFEST_CONFORMS_TO), path
        assert [k for k in document if k.startswith("rai:")] == list(RAI_FIELDS), path
        metadata = mlc.Dataset(jsonld=str(path)).metadata
        assert metadata.ctx.conforms_to.value == CROISSANT_CONFORMS_TO and not metadata.ctx.issues.errors, path
        read = {"rai:dataCollection": metadata.data_collection, "rai:dataUseCases": metadata.data_use_cases,
                "rai:dataLimitations": metadata.data_limitations, "rai:dataBiases": metadata.data_biases,
                "rai:personalSensitiveInformation": metadata.personal_sensitive_information,
                "rai:dataSocialImpact": metadata.data_social_impact}
        assert read == {key: document[key] for key in RAI_FIELDS}, path  # as written, every field non-empty
        assert all(read.values()) and all(all(v) for v in read.values() if isinstance(v, list)), path
        assert metadata.license == [document["license"]], path


@pytest.mark.parametrize("family", ["t-grab", "chaosnet"])
def test_committed_manifests_hold_what_their_catalogue_says_about_responsible_ai(family: str) -> None:
    """The metadata-only rewrite (python -m scripts.manifests --metadata-only) leaves every committed manifest as it
    is: the RAI text comes from the family's catalogue, and a manifest written by the generator equals it."""
    plugin = next(f for f in families() if f.name == family)
    checked = 0
    for entry in plugin.catalogue():
        for path in sorted(manifest_path(ROOT, entry.name, "0").parent.glob("*.json")):
            document = json.loads(path.read_text())
            assert with_responsible_ai(document, plugin.responsible_ai(entry)) == document, path
            checked += 1
    assert checked == {"t-grab": 52, "chaosnet": 200}[family]


def test_the_metadata_only_rewrite_adds_the_fields_and_leaves_the_data_as_published(tmp_path: Path) -> None:
    published = ROOT / "t-grab" / "ce-4" / "1.0.0.json"
    before = json.loads(published.read_text())
    old = {k: v for k, v in before.items() if not k.startswith("rai:")}
    old["conformsTo"] = CROISSANT_CONFORMS_TO  # as manifests were written before the RAI fields
    folder = tmp_path / "t-grab" / "ce-4"
    folder.mkdir(parents=True)
    (folder / "1.0.0.json").write_text(json.dumps(old, indent=1, ensure_ascii=False) + "\n")
    assert parse_manifest(old).responsible_ai == {}  # an older manifest (e.g. a cached import) still parses
    assert generators_main(["--metadata-only", "--family", "t-grab", "--manifests", str(tmp_path), "t-grab/ce-4"]) == 0
    assert (folder / "1.0.0.json").read_bytes() == published.read_bytes()
    assert data_part(old) == data_part(before) and same_data(json.dumps(old).encode(), published.read_bytes())


def test_same_data_tells_metadata_from_data() -> None:
    document = _document()
    text = json.dumps(document).encode()
    stripped = {k: v for k, v in document.items() if not k.startswith("rai:")}
    assert same_data(json.dumps({**stripped, "conformsTo": CROISSANT_CONFORMS_TO}).encode(), text)
    changed = json.loads(text)
    changed["digest"][0]["value"] = "0" * 64
    assert not same_data(text, json.dumps(changed).encode())
    assert not same_data(text, json.dumps({**document, "version": "1.0.1"}).encode())
    assert not same_data(b"not json", text) and not same_data(b"[]", text)


def test_a_manifest_without_a_responsible_ai_field_is_not_written() -> None:
    document = _document()
    entry = next(e for e in entries() if e.name == document["name"])
    plugin = next(f for f in families() if f.name == "t-grab")
    fields = dict(plugin.responsible_ai(entry))
    with pytest.raises(GenerationError, match="rai:dataBiases"):
        with_responsible_ai(document, {**fields, "rai:dataBiases": []})
    with pytest.raises(GenerationError, match="rai:dataLimitations"):
        with_responsible_ai(document, {k: v for k, v in fields.items() if k != "rai:dataLimitations"})
    with pytest.raises(GenerationError, match="rai:madeUp"):
        with_responsible_ai(document, {**fields, "rai:madeUp": "x"})
