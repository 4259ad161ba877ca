"""The family registry: every family is a plug-in, and what the generators write today is what was published."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tgbhub.errors import GenerationError
from generators.build import preflight, rebuild
from generators.families import REGISTERED, families, family, family_of
from scripts.manifests import main as generate_manifests
from tgbhub.manifest import Recipe, read_manifest
from tgbhub.registry import Registry

ROOT = Path(__file__).resolve().parent.parent / "manifests"


def test_every_published_dataset_belongs_to_exactly_one_registered_family() -> None:
    registry = Registry(ROOT)
    published = {(name, version) for name in registry.names() for version in registry.versions(name)}
    catalogued = {(e.name, e.version) for f in families() for e in f.catalogue()}
    assert catalogued <= published  # earlier versions stay published after the catalogue moves on
    derived_families = [f for f in families() if f.derived]
    derived = {(e.name, e.version) for f in derived_families for e in f.catalogue()}
    for name, version in published:
        if registry.derived(name, version) is not None:
            # a derived dataset lives in its parent's namespace, is built by the family of its transform, and its
            # manifest is derived on request: the derived index lists it, a derived family catalogues it
            assert (name, version) in derived and not (ROOT / name).exists(), name
            continue
        recipe = read_manifest(registry.path(name, version)).recipe
        owners = [f.name for f in families() if recipe.generator in f.generators]
        assert recipe.parent is None and owners == [name.split("/")[0]], (name, owners)
    assert [f.name for f in derived_families] == ["tlpcf"]
    assert [f.name for f in families()] == [*REGISTERED, "tgb"]  # TGB's family comes with its importer


def test_unknown_generator_and_family_are_clear_errors() -> None:
    recipe = Recipe(generator="nope/generator", version="1.0.0", params={}, seed=0)
    with pytest.raises(GenerationError, match="no family of this tgbhub builds") as info:
        family_of(recipe)
    assert "t-grab/cause-effect" in str(info.value)
    with pytest.raises(GenerationError, match="upgrade tgbhub"):
        preflight(recipe)
    with pytest.raises(GenerationError):
        rebuild(recipe, Path("/nonexistent"))
    with pytest.raises(GenerationError, match="registered"):
        family("no-such-family")


@pytest.mark.parametrize("names", [
    ["t-grab/pdet-2-1", "t-grab/ce-4", "t-grab/psto-2-p50", "t-grab/lr-1-1"],
    ["chaosnet/mini-k0.5-rho0.1-n8"],
])
def test_the_writers_reproduce_the_published_manifests_byte_for_byte(names: list[str], tmp_path: Path) -> None:
    assert generate_manifests([*names, "--manifests", str(tmp_path)]) == 0
    for name in names:
        version = json.loads(next((tmp_path / name).glob("*.json")).read_text())["version"]
        written = (tmp_path / name / f"{version}.json").read_bytes()
        assert written == (ROOT / name / f"{version}.json").read_bytes(), name


@pytest.mark.slow
def test_every_t_grab_manifest_is_what_the_generators_write_today(tmp_path: Path) -> None:
    assert generate_manifests(["--family", "t-grab", "--manifests", str(tmp_path)]) == 0
    written = sorted(tmp_path.glob("t-grab/*/*.json"))
    assert len(written) == 52
    for path in written:
        assert path.read_bytes() == (ROOT / path.relative_to(tmp_path)).read_bytes(), path


@pytest.mark.slow
def test_the_derived_index_is_what_the_generators_write_today(tmp_path: Path) -> None:
    """The authoring side derives all 1,560 published variants again: the index it writes is the shipped one, and
    no variant manifest file is written (they are derived on request, tests/test_derive.py)."""
    assert generate_manifests(["--family", "tlpcf", "--manifests", str(tmp_path)]) == 0
    assert (tmp_path / "t-grab" / "derived.json").read_bytes() == (ROOT / "t-grab" / "derived.json").read_bytes()
    assert not list(tmp_path.glob("t-grab/*~*"))
