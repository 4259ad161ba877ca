"""Variants built on request (tgbhub.local.derive through tgbhub.local.gateway): identity pinned to the parent's version,
one build under the entry's lock however many processes ask, manifests equal to the catalogue's, transforms as
plug-ins with bounded parameters."""

from __future__ import annotations

import hashlib
import re
import json
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import tgbhub
from tgbhub import api
from tgbhub.errors import GenerationError, IntegrityError
from generators import transforms
from tgbhub.registry import Registry

ROOT = Path(__file__).resolve().parent.parent
MANIFESTS = ROOT / "manifests"
BASE = "t-grab/pdet-2-16"


def _bases_only(folder: Path, *names: str) -> Path:
    """A manifest root holding only the given bases (and their task documents): no published variant."""
    for name in names:
        shutil.copytree(MANIFESTS / name, folder / name)
    return folder  # no derived.json: every variant is built on request, unpublished


def _as_version(source: str, name: str, version: str, folder: Path) -> None:
    """Publish the manifest of ``source`` as ``name@version`` under ``folder``: another version of a base, with other
    content (the recipe stays ``source``'s, so it rebuilds and verifies)."""
    document = json.loads((MANIFESTS / source / "1.0.0.json").read_text())
    document["name"], document["version"] = name, version
    (folder / name / f"{version}.json").write_text(json.dumps(document))


def _stored_sha256(cache: Path, name: str, version: str = "1.0.0") -> str:
    family, short = name.split("/", 1)
    return hashlib.sha256((cache / family / short / f"{version}.manifest.json").read_bytes()).hexdigest()


@pytest.mark.parametrize("variant", ["pdet-2-16~shuffle-s0", "pdet-2-16~intense-k5-s3", "pdet-2-16~intense-k1-s9"])
def test_a_published_variants_manifest_is_derived_byte_for_byte(variant: str, tmp_path: Path) -> None:
    name = f"t-grab/{variant}"
    published = api.registry().derived(name, "1.0.0")
    assert published is not None and not (MANIFESTS / "t-grab" / variant).exists()  # indexed, not shipped
    ds = tgbhub.load_dataset(name, cache_dir=tmp_path, offline=True)
    assert ds.source == "build" and _stored_sha256(tmp_path, name) == published.manifest_sha256
    assert (ds.manifest.derived_from, ds.manifest.transform) == (published.derived_from, published.transform)
    assert sum(f.size for f in ds.manifest.files) == published.bytes


@pytest.mark.parametrize("variant, what", [("pdet-2-16~shuffle-s0", "SHUFFLE"),
                                           ("ce-4~intense-k5-s1", "INTENSE with k = 5")])
def test_a_variants_responsible_ai_fields_are_its_parents_plus_what_the_transform_changes(
        variant: str, what: str, tmp_path: Path) -> None:
    mlc = pytest.importorskip("mlcroissant")
    name = f"t-grab/{variant}"
    ds = tgbhub.load_dataset(name, cache_dir=tmp_path, offline=True)
    parent = api.registry().resolve(tgbhub.registry.parse_reference(ds.manifest.derived_from))
    mine, theirs = ds.manifest.responsible_ai, parent.responsible_ai
    assert list(mine) == list(theirs) and all(mine.values())
    assert mine["rai:dataCollection"].startswith(theirs["rai:dataCollection"]) and what in mine["rai:dataCollection"]
    for key in ("rai:dataLimitations", "rai:dataBiases", "rai:personalSensitiveInformation"):
        assert list(mine[key][:-1]) == list(theirs[key]) and mine[key][-1] not in theirs[key], key
    assert list(mine["rai:dataUseCases"][1:]) == list(theirs["rai:dataUseCases"])
    assert "Counterfactual" in mine["rai:dataUseCases"][0]
    family, short = name.split("/", 1)
    metadata = mlc.Dataset(jsonld=str(tmp_path / family / short / "1.0.0.manifest.json")).metadata
    assert metadata.data_collection == mine["rai:dataCollection"] and metadata.data_limitations == list(
        mine["rai:dataLimitations"]) and metadata.license == [parent.license]


@pytest.mark.slow
def test_every_published_variants_manifest_is_derived_byte_for_byte(tmp_path: Path) -> None:
    """All 1,560 TLPCF defaults: each manifest derived here has the sha256 the index publishes (the index was written
    from the manifest files shipped before they were derived on request)."""
    registry = api.registry()
    names = [n for n in registry.names("t-grab") if "~" in n]
    assert len(names) == 52 * 30
    for name in names:
        tgbhub.load_dataset(name, cache_dir=tmp_path, offline=True)  # raises IntegrityError on any other byte
        assert _stored_sha256(tmp_path, name) == registry.derived(name, "1.0.0").manifest_sha256, name


def test_a_derived_manifest_that_is_not_the_published_one_is_refused(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    manifests = _bases_only(tmp_path / "manifests", BASE)
    index = (MANIFESTS / "t-grab" / "derived.json").read_text()
    published = api.registry().derived(f"{BASE}~shuffle-s0", "1.0.0").manifest_sha256
    (manifests / "t-grab" / "derived.json").write_text(index.replace(published, "0" * 64))
    monkeypatch.setattr(api, "_REGISTRY", Registry(manifests))
    with pytest.raises(IntegrityError, match="derived another manifest than the published one"):
        tgbhub.load_dataset(f"{BASE}~shuffle-s0", cache_dir=tmp_path / "cache", offline=True)
    variant = tmp_path / "cache" / "t-grab" / "pdet-2-16~shuffle-s0"
    assert not list(variant.glob("*.manifest.json")) and not list(variant.glob("*/COMPLETE"))


def test_a_variants_version_pins_its_parents_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"{BASE}~shuffle-s23"
    one = _bases_only(tmp_path / "one", BASE)
    monkeypatch.setattr(api, "_REGISTRY", Registry(one))
    alone = tgbhub.load_dataset(f"{name}@1.0.0", cache_dir=tmp_path / "cache-one", offline=True)
    assert alone.manifest.derived_from == f"{BASE}@1.0.0" and alone.manifest.version == "1.0.0"

    two = _bases_only(tmp_path / "two", BASE)
    _as_version("t-grab/pdet-2-8", BASE, "1.1.0", two)
    monkeypatch.setattr(api, "_REGISTRY", Registry(two))
    newest = tgbhub.load_dataset(name, cache_dir=tmp_path / "cache-two", offline=True)  # newest base first
    pinned = tgbhub.load_dataset(f"{name}@1.0.0", cache_dir=tmp_path / "cache-two", offline=True)
    assert newest.manifest.version == "1.1.0" and newest.manifest.derived_from == f"{BASE}@1.1.0"
    assert pinned.manifest.derived_from == f"{BASE}@1.0.0" and pinned.source == "build"
    assert pinned.digest == alone.digest and newest.digest != alone.digest
    assert (pinned.manifest.raw["distribution"] == alone.manifest.raw["distribution"])
    with pytest.raises(tgbhub.VersionNotFoundError, match=r"'t-grab/pdet-2-16~shuffle-s23' has no version '2.0.0'.*"
                                                           r"1.0.0, 1.1.0"):
        tgbhub.load_dataset(f"{name}@2.0.0", cache_dir=tmp_path / "cache-two", offline=True)


_LOADER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import tgbhub
    go = Path(sys.argv[2])
    while not go.exists():
        time.sleep(0.01)
    ds = tgbhub.load_dataset(sys.argv[1], cache_dir=sys.argv[3], offline=True)
    print(ds.source, ds.digest)
""")


def test_four_processes_loading_one_unpublished_variant_build_it_once(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    tgbhub.load_dataset(BASE, cache_dir=cache, offline=True)  # the parent is cached; the variant is not
    go = tmp_path / "go"
    env = {"TGBHUB_NO_PROGRESS": "1", "PATH": "/usr/bin:/bin"}
    procs = [subprocess.Popen([sys.executable, "-c", _LOADER, f"{BASE}~intense-k3-s23", str(go), str(cache)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
             for _ in range(4)]
    time.sleep(2.0)  # let every process import tgbhub and wait at the barrier
    go.touch()
    results = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in results]
    sources = sorted(out.split()[0] for out, _ in results)
    assert sources == ["build", "cache", "cache", "cache"]
    assert len({out.split()[1] for out, _ in results}) == 1
    assert not list(cache.glob("**/*.staging"))


@pytest.mark.parametrize("name, words", [
    ("chaosnet/mini-k2.0-rho0.1-n8~shuffle-s0",
     "transform 'shuffle' applies to temporal-graph datasets; chaosnet/mini-k2.0-rho0.1-n8@1.1.0 is a trajectories"),
    (f"{BASE}~intense-k999999-s0", r"k=999999 is out of range; k: int in \[1, 100\]"),
    (f"{BASE}~intense-k0-s0", r"k=0 is out of range"),
    (f"{BASE}~warp-s0", "unknown transform 'warp'; known: shuffle, intense"),
])
def test_an_inapplicable_transform_or_out_of_range_parameter_is_one_clear_error(name: str, words: str,
                                                                                 tmp_path: Path) -> None:
    with pytest.raises(GenerationError, match=words) as caught:
        tgbhub.load_dataset(name, cache_dir=tmp_path, offline=True)
    assert "\n" not in str(caught.value)
    assert not list(tmp_path.glob("**/*.manifest.json")) and not list(tmp_path.glob("chaosnet/**/COMPLETE"))


TOY = '''
"""A toy transform from outside the package: every test event moved to the split's last timestamp."""
import numpy as np
from generators.transforms.spec import Param, Transform


def _apply(t, params, key, tau):
    n = len(t)
    return np.full(n, t.max()) if n else t.copy(), np.arange(n, dtype=np.int64), np.zeros(n, dtype=np.int32)


def _checks(before, after, origin, tau):
    return {"all_at_the_end": bool((after == before.max()).all())}


TRANSFORM = Transform(name="late", summary="every test event at the split's last time", params=(
    Param("d", 0, 3, "an unused toy parameter", default=1),), applies_to=frozenset({"temporal-graph"}),
    needs_tau_bar=False, copies=lambda params: 1, apply=_apply, checks=_checks,
    describe=lambda params: "LATE (every test event at the split's last time)")
'''


@pytest.fixture
def toy_transform(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "toy_late.py").write_text(TOY)
    monkeypatch.syspath_prepend(str(plugins))
    monkeypatch.setitem(transforms.REGISTERED, "late", "toy_late")  # the one registration line
    return "late"


def test_a_transform_plugin_from_its_own_folder_builds_loads_and_grades(toy_transform: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    ds = tgbhub.load_dataset(f"{BASE}~late-d1-s0", cache_dir=cache, offline=True)
    assert ds.source == "build" and ds.manifest.stats["invariants"]["all_at_the_end"] is True
    assert ds.manifest.description.startswith("LATE (every test event")
    test = ds.split("test")
    assert len(set(test.t.tolist())) == 1
    again = tgbhub.load_dataset(f"{BASE}~late-d1-s0", cache_dir=cache, offline=True)
    assert again.source == "cache" and again.digest == ds.digest
    with pytest.raises(GenerationError, match=r"d=9 is out of range; d: int in \[0, 3\]"):
        tgbhub.load_dataset(f"{BASE}~late-d9-s0", cache_dir=cache, offline=True)
    from tgbhub.baselines import run_baseline

    task = ds.manifest.task_named("ranking")
    result = ds.get_evaluator("ranking").evaluate(run_baseline("edgebank", ds, task, "test"))
    assert result["dataset"] == f"{BASE}~late-d1-s0" and 0.0 <= result["metrics"]["mrr"] <= 1.0


def test_a_transform_plugin_appears_in_list_info_export_and_counterfactual(
        toy_transform: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tgbhub.cli import main

    assert main(["list", "--transforms", "--json"]) == 0
    cards = {c["name"]: c for c in json.loads(capsys.readouterr().out)}
    assert set(cards) == {"shuffle", "intense", "late"}
    assert cards["late"]["params"] == ["d: int in [0, 3], default 1 (an unused toy parameter)"]
    cache = str(tmp_path / "cache")
    assert main(["--cache-dir", cache, "info", f"{BASE}~late-d1-s0", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["transform"] == {"kind": "late", "params": {"d": 1, "scope": "test"}, "seed": 0}
    assert main(["--cache-dir", cache, "export", f"{BASE}~late-d1-s0", "--format", "dyglib", "--out",
                 str(tmp_path / "out"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["files"]
    assert main(["--cache-dir", cache, "counterfactual", "edgebank", BASE, "--kinds", "late-d1", "--seeds", "0-1",
                 "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert {r["kind"] for r in rows if r["model"] == "edgebank"} == {"late-d1"}


@pytest.mark.parametrize("argv, words", [
    (["export", "chaosnet/mini-k2.0-rho0.1-n8", "--format", "dyglib", "--out", "OUT"],
     "export works on temporal-graph datasets; chaosnet/mini-k2.0-rho0.1-n8@1.1.0 is a trajectories dataset"),
    (["forecast-stats", "chaosnet/mini-k2.0-rho0.1-n8"], "forecast-stats works on temporal-graph datasets"),
    (["counterfactual", "edgebank", "chaosnet/mini-k2.0-rho0.1-n8", "--seeds", "0-1"],
     "the counterfactual check works on temporal-graph datasets"),
    (["get", "chaosnet/mini-k2.0-rho0.1-n8~shuffle-s0"], "transform 'shuffle' applies to temporal-graph datasets"),
    (["get", f"{BASE}~intense-k999999-s0"], r"k=999999 is out of range; k: int in \[1, 100\]"),
])
def test_chaosnet_names_and_bad_transforms_are_one_line_errors_on_the_cli(
        argv: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tgbhub.cli import main

    argv = [a.replace("OUT", str(tmp_path / "out")) for a in argv]
    assert main(["--cache-dir", str(tmp_path / "cache"), *argv]) == 2  # an escaping exception would fail the test
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and re.search(words, lines[0]) and "Traceback" not in lines[0], lines
