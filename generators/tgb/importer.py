"""TGB's importer (registered in :mod:`generators.importers`): TGB 1.x and 2.0 release zips, converted with py-tgb
2.3.0's conventions and checked against the statistics TGB published."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from tgbhub.errors import IntegrityError

from ..importers import Converted, Importer, Release
from .artifacts import convert as convert_release, dataset_version, manifest_document, write
from .catalogue import CATALOGUE, TgbEntry, check_stats, entry
from .family import FAMILY
from .release import ProgressFactory, Release as OpenedRelease


def _convert(item: TgbEntry, path: Path, sha256: str, expected_stats: Mapping[str, Any] | None,
             folder: Path, progress: ProgressFactory | None = None) -> Converted:
    """Convert the release at ``path``, check the statistics, write the files and the manifest into ``folder``;
    each stage (reading, numbering, sorting, negatives, writing) shows its progress through ``progress``.

    Raises:
        GenerationError: if the release is not a readable zip in TGB's layout, or this tgbhub cannot import it yet.
        IntegrityError: listing every published statistic (or ``expected_stats`` one) the release does not reproduce.
    """
    opened = OpenedRelease(path, dict(item.files), progress)
    try:
        files, info = convert_release(item, opened)
    finally:
        opened.close()
    published = dict(expected_stats) if expected_stats is not None else dict(item.stats)
    mismatches = check_stats(dataclasses.replace(item, stats=MappingProxyType(published)), info["measured"])
    if mismatches:
        raise IntegrityError(f"import of {item.name}: statistics", "the published ones", "; ".join(mismatches),
                             "Nothing was installed. The release is not the one TGB published (another version, a "
                             "partial download, a modified file): download it again from " + item.url)
    written = write(files, folder, item, progress)
    document = manifest_document(item, files, info, folder, path.name, sha256, published,
                                 modified=expected_stats is not None)
    return Converted(document=document, files=written, columns=files)


def _card(item: TgbEntry) -> dict[str, Any]:
    return {"name": f"tgb/{item.name}", "tgb_version": item.tgb_version, "task": item.task,
            "metric": item.eval_metric, "upstream": item.url, "zip": item.zip_name, "stats": dict(item.stats),
            "stats_source": item.stats_source, "citation": item.citation,
            "import": f"tgbhub import tgb/{item.name}"}


IMPORTER = Importer(name="tgb", family="tgb", summary="TGB 1.x and 2.0 (tgbl, tgbn, tkgl, thgl)",
                    names=lambda: sorted(CATALOGUE), entry=entry, card=_card,
                    release=lambda item: Release(url=item.url, file_name=item.zip_name), version=dataset_version,
                    convert=_convert, builder=FAMILY, reports_progress=True)
