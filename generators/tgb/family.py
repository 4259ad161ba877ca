"""The TGB family's plug-in (registered in :mod:`generators.families`): rebuilding an imported dataset from the
release zip its import kept.

TGB's datasets are imported, not authored here (``tgbhub import tgb/NAME``), so the family publishes no catalogue of
its own. What it adds is the local build: when the verified cache entry of an imported version is lost, the build
source finds the zip the import kept (``<cache>/downloads/tgb/<zip>``, in the cache ``$TGBHUB_CACHE`` or the user
cache the build source hands over), checks that it is byte for byte the one
the manifest's recipe records (its sha256), and converts it again; the cache then verifies the files against the
manifest as for any rebuild.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tgbhub.errors import GenerationError
from tgbhub.hashing import file_sha256
from tgbhub.manifest import Recipe

from ..families import Built, CatalogueEntry, Family, Inputs
from ..importers import kept_release
from .artifacts import IMPORTER, IMPORTER_VERSION, convert, write
from .catalogue import entry as catalogue_entry
from .release import Release


def _preflight(recipe: Recipe) -> None:
    """Raises GenerationError unless this tgbhub's importer wrote the recipe (the conversion must be the same)."""
    if recipe.version != IMPORTER_VERSION:
        raise GenerationError(f"recipe needs {IMPORTER} {recipe.version}, this tgbhub has {IMPORTER_VERSION}; "
                              "install the matching tgbhub, or import the dataset again")


def _kept_release(recipe: Recipe, cache_root: Path | None) -> Path:
    """The kept zip the recipe names, checked against the sha256 it records.

    Raises:
        GenerationError: if the zip is not kept here or is not the one the import read.
    """
    params = recipe.params
    if cache_root is None:
        raise GenerationError(f"{params['dataset']} is rebuilt from the release its import kept in the cache, but no "
                              "cache root was handed to the build; load it with tgbhub.load_dataset")
    path = kept_release(cache_root, "tgb", str(params["zip"]))
    if not path.is_file():
        raise GenerationError(f"the release {params['zip']} of {params['dataset']} is not kept at {path}; run "
                              f"`tgbhub import tgb/{params['dataset']}` (or with --from PATH) to import it again")
    actual = file_sha256(path)
    if actual != params["zip_sha256"]:
        raise GenerationError(f"{path} has sha256 {actual}, but {params['dataset']} was imported from a zip with "
                              f"sha256 {params['zip_sha256']}; put that release there, or import again")
    return path


def _build(recipe: Recipe, folder: Path, inputs: Inputs) -> Built:
    """Convert the kept release again into ``folder`` (the cache verifies the result against the manifest)."""
    _preflight(recipe)
    item = catalogue_entry(str(recipe.params["dataset"]))
    release = Release(_kept_release(recipe, inputs.cache_root), dict(item.files))
    try:
        files, _ = convert(item, release)
    finally:
        release.close()
    return Built(files=write(files, folder, item), columns=files)


def _write(entry: CatalogueEntry, folder: Path, inputs: Inputs) -> dict[str, Any]:
    raise GenerationError("TGB datasets are imported, not authored: run `tgbhub import tgb/NAME`")


FAMILY: Family[CatalogueEntry] = Family(name="tgb", generators=frozenset({IMPORTER}), catalogue=lambda: [],
                                        write=_write, build=_build, preflight=_preflight)
