"""Every ChaosNetBench manifest: valid Croissant, mapped to its catalogue entry, carrying the spec's test vectors as
published per-IC digests, and recording the indicator facts the spec measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generators.__main__ import manifest_path
from generators.chaosnet.artifacts import build_folder
from generators.chaosnet.catalogue import GENERATOR, VERSION, instances, mini_instances
from tests.test_chaosnet import TEST_VECTORS
from tgbhub.manifest import plain, read_manifest

ROOT = Path(__file__).resolve().parent.parent / "manifests"
PATHS = sorted((ROOT / "chaosnet").glob("*/*.json"))
BY_NAME = {i.name: i for i in instances()}


def test_there_is_one_manifest_per_instance_and_back() -> None:
    assert set(PATHS) == {manifest_path(ROOT, i.name, i.version) for i in instances()} and len(PATHS) == 100


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.parent.name)
def test_manifest_maps_to_its_instance(path: Path) -> None:
    manifest = read_manifest(path)
    instance = BY_NAME[manifest.name]
    assert (manifest.recipe.generator, manifest.recipe.version, manifest.recipe.seed) == (GENERATOR, VERSION, 42)
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
    records = list(mlc.Dataset(jsonld=str(ROOT / "chaosnet" / "k2.0-rho0.2-n8" / "1.0.0.json")).records("ics"))
    assert [r["ics/ic"] for r in records] == list(range(100))
    assert records[0]["ics/seed"] == 863414062 and records[80]["ics/split"] in ("test", b"test")


@pytest.mark.parametrize("vector", TEST_VECTORS, ids=lambda v: "k{}-rho{}-n{}".format(*v[0]))
def test_published_digests_carry_the_spec_test_vectors(vector) -> None:
    (k, rho, n), seeds, _, _, sha = vector
    manifest = read_manifest(ROOT / "chaosnet" / f"k{k!r}-rho{rho!r}-n{n}" / "1.0.0.json")
    assert manifest.raw["digest"][0]["state_per_ic"][0] == sha
    assert [r["ics/seed"] for r in manifest.raw["recordSet"][0]["data"][:2]] == list(seeds)


def test_mini_manifests_are_current(tmp_path: Path) -> None:
    """Rebuilding the mini tier reproduces its committed manifests byte for byte (generator and writer unchanged)."""
    for instance in mini_instances():
        _, document = build_folder(instance, tmp_path / instance.name)
        committed = manifest_path(ROOT, instance.name, instance.version).read_text(encoding="utf-8")
        assert json.dumps(document, indent=1, ensure_ascii=False) + "\n" == committed, instance.name


def _stats(name: str) -> dict:
    return read_manifest(ROOT / "chaosnet" / name / "1.0.0.json").stats


def test_indicator_facts_the_spec_measured() -> None:
    # spec 3.3 and section 0 item 8: mean lambda 0.585 at K = 2.0, rho = 0.05, N = 8; 0.080 at K = 0.5, rho = 0.05
    assert _stats("k2.0-rho0.05-n8")["lambda_mean"] == pytest.approx(0.585, abs=0.0005)
    assert _stats("k0.5-rho0.05-n8")["lambda_mean"] == pytest.approx(0.080, abs=0.0005)
    # spec 3.2: at N = 32 the 1,000-step screen calls only 14-67 % of orbits chaotic, although every orbit has
    # lambda >= 0.08 (>= 1.40 at K = 6.5) ...
    n32 = [_stats(f"k{k!r}-rho{r!r}-n32") for k in (0.5, 0.97, 2.0, 6.5) for r in (0.05, 0.075, 0.1, 0.15, 0.2,
                                                                               0.3, 0.4, 0.5)]
    fractions = [s["sali_screens"]["1000"]["chaotic_fraction"] for s in n32]
    assert (min(fractions), max(fractions)) == (0.14, 0.67)
    assert min(s["lambda_min"] for s in n32) >= 0.08 and min(s["lambda_min"] for s in n32[24:]) >= 1.40
    # ... while with 5,000 steps every orbit is chaotic in the three instances the spec retested
    for name in ("k6.5-rho0.05-n32", "k2.0-rho0.05-n16", "k0.5-rho0.05-n8"):
        assert _stats(name)["sali_screens"]["5000"]["chaotic_fraction"] == 1.0, name


@pytest.mark.slow
@pytest.mark.parametrize("name", ["chaosnet/k0.5-rho0.05-n8", "chaosnet/k0.97-rho0.075-n16",
                                  "chaosnet/k6.5-rho0.5-n32"])
def test_full_instances_rebuild_to_the_published_bytes(name: str, tmp_path: Path) -> None:
    """One instance per N (the N = 32 one is 512 MB): the rebuilt file has the manifest's sha256 and every IC its
    published digest. ``python -m generators --family chaosnet`` checks all 96 the same way."""
    import hashlib

    import h5py

    manifest = read_manifest(manifest_path(ROOT, name, "1.0.0"))
    _, document = build_folder(BY_NAME[name], tmp_path)
    assert document["distribution"][0]["sha256"] == manifest.files[0].sha256
    with h5py.File(tmp_path / manifest.files[0].name) as handle:
        state = handle["state"]
        assert [hashlib.sha256(state[ic].tobytes()).hexdigest() for ic in range(state.shape[0])] == list(
            manifest.raw["digest"][0]["state_per_ic"])
