"""TGB's importer (registered in :mod:`generators.importers`): TGB 1.x and 2.0 release zips, converted with py-tgb
2.3.0's conventions and checked against the statistics TGB published. It also reads the copies py-tgb keeps on
disk (its ``datasets/`` folder: :class:`~generators.tgb.release.PytgbLayout`), one dataset's folder or all of them."""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from tgbhub.errors import GenerationError, IntegrityError
from tgbhub.hashing import file_sha256

from ..importers import Converted, Importer, Release
from ..spill import in_memory
from .artifacts import convert as convert_release, dataset_version, manifest_document, write
from .catalogue import CATALOGUE, TgbEntry, check_stats, entry
from .family import FAMILY
from .release import ProgressFactory, PytgbLayout, Release as OpenedRelease, datasets_in, extracted_sha256


def _convert(item: TgbEntry, path: Path, sha256: str, expected_stats: Mapping[str, Any] | None,
             folder: Path, progress: ProgressFactory | None = None) -> Converted:
    """Convert the release at ``path`` (its zip, or a folder holding its extracted files), check the statistics,
    write the files and the manifest into ``folder``; each stage (reading, numbering, sorting, negatives, writing)
    shows its progress through ``progress``.

    Raises:
        GenerationError: if the release is not a readable zip in TGB's layout, or this tgbhub cannot import it yet.
        IntegrityError: listing every published statistic (or ``expected_stats`` one) the release does not reproduce.
    """
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".spill-", dir=folder) as spill:
        opened = _open(item, path, progress, Path(spill))
        try:
            files, info = convert_release(item, opened)
        finally:
            opened.close()
        published = dict(expected_stats) if expected_stats is not None else dict(item.stats)
        mismatches = check_stats(dataclasses.replace(item, stats=MappingProxyType(published)), info["measured"])
        if mismatches:
            raise IntegrityError(f"import of {item.name}: statistics", "the published ones", "; ".join(mismatches),
                                 "Nothing was installed. The release is not the one TGB published (another version, "
                                 "a partial download, a modified file): download it again from " + item.url)
        written = write(files, folder, item, progress)
        document = manifest_document(item, files, info, folder, _release_name(item, path), sha256, published,
                                     modified=expected_stats is not None)
    if path.is_dir():
        _say_extracted(document, item)
    # columns spilled to disk are gone with the spill folder: the cache reads them back from the files
    return Converted(document=document, files=written, columns=in_memory(files))


def _open(item: TgbEntry, path: Path, progress: ProgressFactory | None, spill: Path) -> OpenedRelease:
    """The release at ``path``, opened, its conversion spilling large columns into ``spill``.

    Raises:
        GenerationError: as :class:`~generators.tgb.release.Release`; for an unreadable zip with the release's
            extracted files beside it (a py-tgb folder), also how to import those instead.
    """
    try:
        return OpenedRelease(path, dict(item.files), progress, spill)
    except GenerationError as refused:
        beside = path.parent
        if path.is_file() and all((beside / member).is_file() for member in item.files.values()):
            raise GenerationError(f"{refused}; or, to import the files extracted beside it instead, move {path.name} "
                                  f"out of {beside} and import from that folder again") from refused
        raise


def _release_name(item: TgbEntry, path: Path) -> str:
    """What the manifest names as the release read: the zip's file name, or the zip the extracted files came from."""
    return f"{item.zip_name} (extracted)" if path.is_dir() else path.name


def _say_extracted(document: dict[str, Any], item: TgbEntry) -> None:
    """Say in the manifest's checksum discrepancy what its ``zip_sha256`` is when the release was read from its
    extracted files (no zip was read)."""
    for discrepancy in document["knownDiscrepancies"]:
        if discrepancy["field"] == "checksum":
            discrepancy["ours"] = (f"read from the files extracted from {item.zip_name}: zip_sha256 is the sha256 of "
                                   f"their sha256sum listing ({', '.join(sorted(item.files.values()))}, in that "
                                   "order)")


def _card(item: TgbEntry) -> dict[str, Any]:
    return {"name": f"tgb/{item.name}", "tgb_version": item.tgb_version, "task": item.task,
            "metric": item.eval_metric, "upstream": item.url, "zip": item.zip_name, "stats": dict(item.stats),
            "stats_source": item.stats_source, "citation": item.citation,
            "import": f"tgbhub import tgb/{item.name}"}


def layout(item: TgbEntry) -> PytgbLayout:
    """Where py-tgb keeps ``item`` once it has downloaded it."""
    return PytgbLayout(name=item.name, zip_name=item.zip_name, members=tuple(item.files.values()), url=item.url)


class TgbImporter(Importer[TgbEntry]):
    """TGB's importer, which also finds a release where py-tgb keeps it (``client``: the benchmark's own client)."""

    client = "py-tgb"
    client_layout = ("py-tgb's datasets/ folder, whose dataset folders are named with _ for - (tgbl_wiki/) and hold "
                     "the release zip under the dataset's name (tgbl-wiki.zip) or upstream's (tgbl-wiki-v2.zip), or "
                     "the files extracted from it (tgbl-wiki_edgelist_v2.csv, tgbl-wiki_val_ns_v2.pkl, "
                     "tgbl-wiki_test_ns_v2.pkl)")

    def find_release(self, item: TgbEntry, folder: Path) -> Path:
        """The release of ``item`` in ``folder`` (py-tgb's dataset folder, or its ``datasets/`` root): the zip,
        else the folder of its extracted files.

        Raises:
            FetchError: naming the folder, what it holds and what was expected, with the way to get the release.
        """
        return layout(item).locate(folder)

    def held_datasets(self, root: Path) -> list[tuple[str, Path]]:
        """The datasets py-tgb keeps under ``root`` (its ``datasets/`` folder, or one dataset's folder), in catalogue
        order, each with its folder; folders holding nothing of a release (py-tgb's own scripts) are left out."""
        return [(found.name, folder) for found, folder in datasets_in(root, map(layout, CATALOGUE.values()))]

    def release_sha256(self, item: TgbEntry, path: Path) -> str:
        """The sha256 the manifest records for the release at ``path``: the zip's, or for a folder of extracted
        files the sha256 of their ``sha256sum`` listing (:func:`~generators.tgb.release.extracted_sha256`)."""
        return extracted_sha256(path, item.files.values()) if path.is_dir() else file_sha256(path)


IMPORTER = TgbImporter(name="tgb", family="tgb", summary="TGB 1.x and 2.0 (tgbl, tgbn, tkgl, thgl)",
                       names=lambda: sorted(CATALOGUE), entry=entry, card=_card,
                       release=lambda item: Release(url=item.url, file_name=item.zip_name), version=dataset_version,
                       convert=_convert, builder=FAMILY, reports_progress=True)
