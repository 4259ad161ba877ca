"""Derived datasets end to end: TLPCF's distorted variants of T-GRAB datasets, loaded through the verified path."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import tgbhub
from tgbhub import api
from tgbhub.errors import GenerationError, IntegrityError, InvalidNameError, ManifestError
from generators.tlpcf.catalogue import DEFAULT_KINDS, DEFAULT_SEEDS, defaults, parse_derived, derived_name
from tgbhub.manifest import plain, read_manifest
from tgbhub.registry import Registry
from tgbhub.local.gateway import BuildSource

ROOT = Path(__file__).resolve().parent.parent / "manifests"
BASE = "t-grab/pdet-2-16"


@pytest.fixture(scope="module")
def derived(tmp_path_factory: pytest.TempPathFactory):
    """A published variant's manifest, derived on request (checked against the derived index) into one cache."""
    cache = tmp_path_factory.mktemp("derived")

    def manifest(short: str):
        return tgbhub.manifest_of(f"{BASE}~{short}", cache_dir=cache, offline=True)

    manifest.cache = cache
    return manifest


def _variants(base: str) -> list[str]:
    return [derived_name(base, kind, params, seed) for kind, params in DEFAULT_KINDS for seed in DEFAULT_SEEDS]


def test_every_default_variant_is_published_for_every_t_grab_dataset(derived) -> None:
    registry = Registry(ROOT)
    bases = [n for n in registry.names("t-grab") if "~" not in n]
    assert len(bases) == 52
    published = {n for n in registry.names("t-grab") if "~" in n}
    assert published == {v.name for v in defaults()} and len(published) == 52 * 30
    assert all(registry.derived(n, "1.0.0") is not None for n in published)
    manifest = derived("intense-k5-s3")
    assert manifest.derived_from == f"{BASE}@1.0.0"
    assert manifest.transform == {"kind": "intense", "params": {"k": 5, "scope": "test"}, "seed": 3}


@pytest.mark.parametrize("text, parsed", [
    ("t-grab/ce-64~shuffle-s3", ("t-grab/ce-64", "shuffle", {}, 3)),
    ("t-grab/ce-64~intense-k5-s0", ("t-grab/ce-64", "intense", {"k": 5}, 0)),
    ("t-grab/ce-64", None), ("t-grab/ce-64~shuffle", None), ("t-grab/ce-64~intense-k5-s-1", None),
])
def test_the_name_grammar_round_trips(text: str, parsed: tuple | None) -> None:
    assert parse_derived(text) == parsed
    if parsed is not None:
        assert derived_name(*parsed) == text
        assert tgbhub.registry.parse_reference(f"{text}@1.0.0").name == text  # composes with @version


def test_names_are_canonical_and_refuse_bad_parameters() -> None:
    assert derived_name(BASE, "intense", {"scope": "test", "k": 5}, 0) == f"{BASE}~intense-k5-s0"
    for kind, params, seed, words in [("intense", {}, 0, "k"), ("intense", {"k": 0}, 0, "k"),
                                      ("jitter", {}, 0, "jitter"), ("shuffle", {}, -1, "seed")]:
        with pytest.raises(GenerationError, match=words):
            derived_name(BASE, kind, params, seed)


@pytest.mark.parametrize("base", ["t-grab/ce-64", BASE])
def test_every_default_variant_loads_offline_from_nothing_and_keeps_the_parents_other_rows(base: str,
                                                                                         tmp_path: Path) -> None:
    parent = None
    for index, name in enumerate(_variants(base)):
        cache = tmp_path / f"c{index % 2}"
        ds = tgbhub.load_dataset(name, cache_dir=cache, offline=True)
        assert ds.source == "build" and ds.parent is not None and ds.parent.name == base
        parent = ds.parent
        # verified against the manifest, which another process wrote: that is already a second identical build
        assert ds.digest == ds.manifest.file("test-events.parquet").digest
        if index % len(DEFAULT_SEEDS) == 0:  # and once more per kind, into a fresh cache
            again = tgbhub.load_dataset(name, cache_dir=tmp_path / f"again{index}", offline=True)
            assert again.source == "build" and again.digest == ds.digest
        lo, hi = ds.manifest.graph["replaces"]["parent_rows"]
        for split in ("train", "val"):
            mine, theirs = ds.split(split), parent.split(split)
            assert np.array_equal(mine.src, theirs.src) and np.array_equal(mine.dst, theirs.dst)
            assert np.array_equal(mine.t, theirs.t.astype(np.float64))
        test = ds.split("test")
        kind = ds.manifest.transform["kind"]
        k = ds.manifest.transform["params"].get("k", 1)
        real = parent.split("test")
        pairs = lambda s, d: sorted(zip(s.tolist(), d.tolist()))  # noqa: E731
        assert pairs(test.src, test.dst) == sorted(pairs(real.src, real.dst) * k)
        if kind == "shuffle":
            assert np.array_equal(np.sort(test.t), np.sort(real.t.astype(np.float64)))
        assert ds.num_rows == parent.num_rows - (hi - lo) + len(test.t)
        if "test_inductive" in ds.splits:  # CE's inductive split is the parent's, after the distorted rows
            assert np.array_equal(ds.split("test_inductive").src, parent.split("test_inductive").src)
    assert parent is not None


def test_paired_negatives_are_the_parents_and_regenerated_ones_differ(tmp_path: Path) -> None:
    ds = tgbhub.load_dataset(f"{BASE}~shuffle-s0", cache_dir=tmp_path, offline=True)
    paired, parent = ds.negatives("test"), ds.parent.negatives("test")
    test = ds.split("test")
    origin = ds.columns["orig_event_id"][test.start:test.stop][test.src < test.dst]
    assert np.array_equal(paired.negatives, parent.negatives[origin])
    regenerated = ds.negatives("test", task="ranking-regenerated")
    assert regenerated.file == "negatives-test-regenerated.parquet"
    assert np.array_equal(regenerated.src, paired.src) and not np.array_equal(regenerated.negatives, paired.negatives)
    assert ds.get_evaluator("ranking-regenerated").task["negatives"]["files"] == {
        "test": "negatives-test-regenerated.parquet"}
    # the window-forecasting task is declared on request for every temporal graph without a bundled document
    assert [t["name"] for t in ds.manifest.tasks] == ["ranking", "ranking-regenerated", "window-forecast"]


def test_the_manifest_records_lineage_invariants_and_distances(derived) -> None:
    manifest = derived("intense-k5-s0")
    parent = read_manifest(ROOT / "t-grab" / BASE.split("/")[1] / "1.0.0.json")
    assert manifest.recipe.parent.digests["edges.parquet"] == parent.file("edges.parquet").digest
    assert manifest.raw["prov:wasDerivedFrom"]["@id"].endswith(f"/tree/{BASE.split('/')[1]}-v1.0.0")
    facts = manifest.stats["invariants"]
    assert facts["each_event_copied_k_times"] and facts["pair_counts_times_k"] and facts["jitter_below_tau_bar"]
    distance = manifest.stats["distance_to_parent_test"]
    assert distance["count_ratio"] == 5.0 and 0 < distance["atd"] < 1e-3  # jitter within tau_bar: tiny ATD
    shuffled = derived("shuffle-s0")
    assert shuffled.stats["invariants"]["timestamp_multiset_unchanged"]
    assert shuffled.stats["distance_to_parent_test"]["atd"] > 100 * distance["atd"]  # SHUFFLE moves events far


def test_a_variant_validates_under_mlcroissant(derived) -> None:
    mlc = pytest.importorskip("mlcroissant")
    derived("shuffle-s1")
    path = derived.cache / "t-grab" / f"{BASE.split('/')[1]}~shuffle-s1" / "1.0.0.manifest.json"
    assert mlc.Dataset(jsonld=str(path)).metadata.name == f"{BASE}~shuffle-s1"


def test_a_parent_with_other_content_is_refused(derived, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    variant = derived("shuffle-s0")
    parent = api.resolve(BASE)
    forged = dataclasses.replace(parent, files=tuple(
        dataclasses.replace(f, digest="0" * 64) if f.name == "edges.parquet" else f for f in parent.files))
    real_resolve = api.resolve
    monkeypatch.setattr(api, "resolve", lambda name, version=None: forged if name == f"{BASE}@1.0.0"
                        else real_resolve(name, version))
    with pytest.raises(IntegrityError, match="parent t-grab/pdet-2-16@1.0.0 file edges.parquet"):
        api.open_verified(variant, tmp_path, api.Fetching(offline=True))


def test_the_build_source_refuses_a_variant_without_its_parent(derived, tmp_path: Path) -> None:
    with pytest.raises(GenerationError, match="not loaded first"):
        BuildSource().fetch(derived("shuffle-s0"), tmp_path)
    with pytest.raises(ManifestError, match="load_dataset"):
        tgbhub.data.open_dataset(derived("shuffle-s0"), {"test-events.parquet": {}}, "cache")


def test_list_json_carries_lineage(capsys: pytest.CaptureFixture[str]) -> None:
    from tgbhub.cli import main

    assert main(["list", "--family", "t-grab", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows[f"{BASE}~intense-k1-s9"]["derived_from"] == f"{BASE}@1.0.0"
    assert rows[f"{BASE}~intense-k1-s9"]["transform"] == {"kind": "intense", "params": {"k": 1, "scope": "test"},
                                                          "seed": 9}
    assert rows[BASE]["derived_from"] is None and rows[BASE]["transform"] is None
    assert main(["list", "--family", "t-grab"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert len(table) == 53 and table[0].split()[-2:] == ["variants", "status"]  # variants hidden, counted per base
    assert main(["list", "--family", "t-grab", "--derived"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1 + 52 * 31


def test_a_variant_is_published_served_and_fetched_like_any_dataset(tmp_path: Path) -> None:
    pytest.importorskip("olah")
    from tgbhub.hub.serve import start_local_hub
    from tgbhub.publish import parse_target, publish

    variant = "pdet-2-1~shuffle-s0"
    results = publish("t-grab", "1.0.0", parse_target(f"git:{tmp_path / 'hub'}"), datasets=["pdet-2-1", variant],
                      cache_dir=tmp_path / "publish-cache")
    assert {r.status for r in results} == {"published"} and len(results) == 3  # two dataset tags + the family tag
    with start_local_hub(tmp_path / "hub") as hub:
        ds = tgbhub.load_dataset(f"t-grab/{variant}", cache_dir=tmp_path / "client", hub_endpoint=hub.url,
                                 sources="hub")
    assert (ds.source, ds.parent.source) == ("hub", "hub")  # the parent came through the same verified path
    built = tgbhub.load_dataset(f"t-grab/{variant}", cache_dir=tmp_path / "built", offline=True)
    assert np.array_equal(ds.t, built.t) and np.array_equal(ds.dst, built.dst)


def test_a_variant_that_is_not_published_is_built_on_request_and_cached(tmp_path: Path) -> None:
    name = f"{BASE}~intense-k2-s11"
    with pytest.raises(tgbhub.DatasetNotFoundError):
        api.resolve(name)  # not in the catalogue
    first = tgbhub.load_dataset(name, cache_dir=tmp_path, offline=True)
    assert first.source == "build" and first.manifest.derived_from == f"{BASE}@1.0.0"
    assert first.manifest.transform == {"kind": "intense", "params": {"k": 2, "scope": "test"}, "seed": 11}
    assert first.manifest.stats["invariants"]["copies_per_event"] == 2
    assert len(first.split("test").t) == 2 * len(first.parent.split("test").t)
    again = tgbhub.load_dataset(f"{name}@1.0.0", cache_dir=tmp_path, offline=True)
    assert again.source == "cache" and again.digest == first.digest
    elsewhere = tgbhub.load_dataset(name, cache_dir=tmp_path / "other", offline=True)  # same bytes, fresh build
    assert elsewhere.digest == first.digest and np.array_equal(elsewhere.t, first.t)
    published = tgbhub.load_dataset(f"{BASE}~intense-k5-s0", cache_dir=tmp_path, offline=True)
    # a published default's manifest is derived, byte for byte the published one (plus tasks declared on load)
    stored = tmp_path / "t-grab" / f"{BASE.split('/')[1]}~intense-k5-s0" / "1.0.0.manifest.json"
    assert hashlib.sha256(stored.read_bytes()).hexdigest() == api.registry().derived(
        f"{BASE}~intense-k5-s0", "1.0.0").manifest_sha256
    bundled = json.loads(stored.read_text())
    assert {k: v for k, v in plain(published.manifest.raw).items() if k != "tasks"} == {
        k: v for k, v in bundled.items() if k != "tasks"}
    assert plain(published.manifest.tasks[:len(bundled["tasks"])]) == bundled["tasks"]


@pytest.mark.parametrize("name, error, words", [
    (f"{BASE}~intense-k0-s1", GenerationError, "k"),
    (f"{BASE}~jitter-s1", GenerationError, "jitter"),
    ("t-grab/nope~shuffle-s1", tgbhub.DatasetNotFoundError, "nope"),
    (f"{BASE}~shuffle-s01", InvalidNameError, "~shuffle-s1"),
    (f"{BASE}~shuffle-s1@2.0.0", tgbhub.VersionNotFoundError, "1.0.0"),
])
def test_bad_variant_requests_are_clear_errors(name: str, error: type, words: str, tmp_path: Path) -> None:
    with pytest.raises(error, match=words):
        tgbhub.load_dataset(name, cache_dir=tmp_path, offline=True)
    assert not list(tmp_path.glob("**/*.manifest.json"))
