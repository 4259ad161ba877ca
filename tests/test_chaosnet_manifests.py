"""Every ChaosNetBench manifest: valid Croissant, mapped to its catalogue entry, carrying the SHA-256 test vectors
(computed with upstream's code) as published per-IC digests, and recording the known indicator facts (the paper's
worked example, the SALI screen's horizon limit)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generators.chaosnet.artifacts import DEVIATION, build_folder, writer_versions
from generators.chaosnet.catalogue import CHANGELOG, GENERATOR, VERSION, instances, mini_instances
from scripts.manifests import manifest_path
from tests.test_chaosnet import TEST_VECTORS
from tgbhub.manifest import plain, read_manifest

ROOT = Path(__file__).resolve().parent.parent / "manifests"
PATHS = sorted((ROOT / "chaosnet").glob("*/*.json"))
BY_NAME = {i.name: i for i in instances()}
RELEASED = [entry["version"] for entry in CHANGELOG]


def test_every_instance_has_every_released_version_and_nothing_else() -> None:
    expected = {manifest_path(ROOT, i.name, version) for i in instances() for version in RELEASED}
    assert set(PATHS) == expected and len(PATHS) == 100 * len(RELEASED) and RELEASED[-1] == VERSION


@pytest.mark.parametrize("path", PATHS, ids=lambda p: f"{p.parent.name}@{p.stem}")
def test_manifest_maps_to_its_instance(path: Path) -> None:
    manifest = read_manifest(path)
    instance = BY_NAME[manifest.name]
    assert (manifest.recipe.generator, manifest.recipe.seed) == (GENERATOR, 42)
    assert manifest.recipe.version == manifest.version == path.stem and manifest.version in DEVIATION
    assert plain(manifest.recipe.params) == json.loads(json.dumps(instance.params))
    assert dict(manifest.splits) == instance.splits
    assert manifest.graph["kind"] == "trajectories" and manifest.graph["num_nodes"] == 2 * instance.n
    assert manifest.task["type"] == "rollout-forecasting" and manifest.task["context"] == 48
    (entry,) = manifest.files
    assert entry.encoding == "application/x-hdf5" and entry.size > instance.n_ics * instance.steps * 2 * instance.n * 8
    digest = manifest.raw["digest"][0]
    assert len(digest["state_per_ic"]) == instance.n_ics and entry.digest == digest["value"]
    stats = manifest.stats
    assert 0 < stats["lambda_min"] <= stats["lambda_mean"] <= stats["lambda_max"]
    assert stats["lyapunov_time"] == pytest.approx(1 / stats["lambda_mean"])
    assert len(manifest.raw["recordSet"][0]["data"]) == instance.n_ics


def test_every_manifest_validates_under_mlcroissant_and_its_records_read_back() -> None:
    mlc = pytest.importorskip("mlcroissant")
    for path in PATHS:
        assert mlc.Dataset(jsonld=str(path)).metadata.name == read_manifest(path).name
    records = list(mlc.Dataset(jsonld=str(ROOT / "chaosnet" / "k2.0-rho0.2-n8" / f"{VERSION}.json")).records("ics"))
    assert [r["ics/ic"] for r in records] == list(range(100))
    assert records[0]["ics/seed"] == 863414062 and records[80]["ics/split"] in ("test", b"test")


@pytest.mark.parametrize("version", RELEASED)
@pytest.mark.parametrize("vector", TEST_VECTORS, ids=lambda v: "k{}-rho{}-n{}".format(*v[0]))
def test_published_digests_carry_the_spec_test_vectors(vector, version: str) -> None:
    (k, rho, n), seeds, _, _, sha = vector
    manifest = read_manifest(ROOT / "chaosnet" / f"k{k!r}-rho{rho!r}-n{n}" / f"{version}.json")
    assert manifest.raw["digest"][0]["state_per_ic"][0] == sha
    assert [r["ics/seed"] for r in manifest.raw["recordSet"][0]["data"][:2]] == list(seeds)


def test_each_version_changes_only_what_its_changelog_says() -> None:
    """1.1.0 recomputed the SALI deviation vectors without BLAS: trajectories, ICs, seeds and adjacency are identical
    to 1.0.0's for all 100 instances, lambda_max moves only in the last bits, and no SALI label changes."""
    changed: dict[str, int] = {}
    for instance in instances():
        old, new = (read_manifest(manifest_path(ROOT, instance.name, v)) for v in ("1.0.0", "1.1.0"))
        assert old.raw["digest"][0]["state_per_ic"] == new.raw["digest"][0]["state_per_ic"], instance.name
        for name, sha in old.raw["digest"][0]["arrays"].items():
            changed[name] = changed.get(name, 0) + (new.raw["digest"][0]["arrays"][name] != sha)
        for before, after in zip(old.raw["recordSet"][0]["data"], new.raw["recordSet"][0]["data"]):
            assert after["ics/lambda_max"] == pytest.approx(before["ics/lambda_max"], rel=1e-13, abs=0)
            assert [v for k, v in before.items() if "label" in k] == [v for k, v in after.items() if "label" in k]
    assert {name for name, count in changed.items() if count} == {"sali", "sali_iterations", "lambda_max"}, changed


def test_the_changelog_is_carried_and_readable() -> None:
    for instance in instances():
        history = read_manifest(manifest_path(ROOT, instance.name, VERSION)).changelog
        assert [entry["version"] for entry in history] == RELEASED
        assert all(entry["summary"] and entry["invalidates"] and entry["date"] for entry in history)
        assert read_manifest(manifest_path(ROOT, instance.name, "1.0.0")).changelog == ()   # predates changelogs


def _without_file_bytes(document: dict) -> dict:
    """The manifest minus what depends on the HDF5 writer's version (file sha256 and size, the writer itself)."""
    copy = json.loads(json.dumps(document))
    for item in copy["distribution"]:
        item.pop("sha256"), item.pop("contentSize")
    copy["digest"][0].pop("writer")
    return copy


def test_mini_manifests_are_current(tmp_path: Path) -> None:
    """Rebuilding the mini tier reproduces its committed manifests: byte for byte when this process has the HDF5
    writer the manifests were made with (the locked one, scripts/constraints.txt), and otherwise everything but the
    file's bytes, which the content digest covers."""
    for instance in mini_instances():
        _, document = build_folder(instance, tmp_path / instance.name)
        committed_text = manifest_path(ROOT, instance.name, instance.version).read_text(encoding="utf-8")
        committed = json.loads(committed_text)
        if committed["digest"][0]["writer"] == writer_versions():
            assert json.dumps(document, indent=1, ensure_ascii=False) + "\n" == committed_text, instance.name
        else:
            assert _without_file_bytes(document) == _without_file_bytes(committed), instance.name


def _stats(name: str) -> dict:
    return read_manifest(ROOT / "chaosnet" / name / f"{VERSION}.json").stats


def test_indicator_facts_the_spec_measured() -> None:
    # the paper's worked example: mean lambda 0.585 at K = 2.0, rho = 0.05, N = 8; and 0.080 at K = 0.5, rho = 0.05
    assert _stats("k2.0-rho0.05-n8")["lambda_mean"] == pytest.approx(0.585, abs=0.0005)
    assert _stats("k0.5-rho0.05-n8")["lambda_mean"] == pytest.approx(0.080, abs=0.0005)
    # upstream's SALI screen is horizon-limited: at N = 32 the 1,000-step screen calls only 14-67 % of orbits
    # chaotic, although every orbit has lambda >= 0.08 (>= 1.40 at K = 6.5) ...
    n32 = [_stats(f"k{k!r}-rho{r!r}-n32") for k in (0.5, 0.97, 2.0, 6.5) for r in (0.05, 0.075, 0.1, 0.15, 0.2,
                                                                               0.3, 0.4, 0.5)]
    fractions = [s["sali_screens"]["1000"]["chaotic_fraction"] for s in n32]
    assert (min(fractions), max(fractions)) == (0.14, 0.67)
    assert min(s["lambda_min"] for s in n32) >= 0.08 and min(s["lambda_min"] for s in n32[24:]) >= 1.40
    # ... while with 5,000 steps every orbit is chaotic in the three instances retested
    for name in ("k6.5-rho0.05-n32", "k2.0-rho0.05-n16", "k0.5-rho0.05-n8"):
        assert _stats(name)["sali_screens"]["5000"]["chaotic_fraction"] == 1.0, name


@pytest.mark.slow
@pytest.mark.parametrize("name", ["chaosnet/k0.5-rho0.05-n8", "chaosnet/k0.97-rho0.075-n16",
                                  "chaosnet/k6.5-rho0.5-n32"])
def test_full_instances_rebuild_to_the_published_bytes(name: str, tmp_path: Path) -> None:
    """One instance per N (the N = 32 one is 512 MB): the rebuilt file has the manifest's content digest (and sha256,
    with the locked HDF5 writer) and every IC its published digest. ``python -m scripts.manifests --family chaosnet``
    checks all 96 the same way."""
    import hashlib

    import h5py

    manifest = read_manifest(manifest_path(ROOT, name, VERSION))
    _, document = build_folder(BY_NAME[name], tmp_path)
    if manifest.raw["digest"][0]["writer"] == writer_versions():
        assert document["distribution"][0]["sha256"] == manifest.files[0].sha256
    assert document["digest"][0]["value"] == manifest.files[0].digest
    with h5py.File(tmp_path / manifest.files[0].name) as handle:
        state = handle["state"]
        assert [hashlib.sha256(state[ic].tobytes()).hexdigest() for ic in range(state.shape[0])] == list(
            manifest.raw["digest"][0]["state_per_ic"])
