"""The importer registry: every benchmark whose published releases ``tgbhub import FAMILY/NAME`` converts.

An importer is a plug-in: its own folder defines ``IMPORTER`` (an :class:`Importer`: its catalogue, where each
release lives, the version an import gets, and the conversion), named here by one line of :data:`REGISTERED`. The
import command's choices, its advice for a dataset not imported yet, and the catalogue listing read this registry;
the download, the verified install and the kept copy of the release are the library's, the same for every importer
(:mod:`tgbhub.local.imports`). The family that rebuilds an import from its kept release registers in
:mod:`generators.families` as usual.

Adding an importer: write ``generators/<benchmark>/importer.py`` defining ``IMPORTER``, then add one line to
:data:`REGISTERED` (a module path starting with ``.`` is inside this package; any other is imported as written).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import numpy as np

from tgbhub.errors import GenerationError
from tgbhub.plugins import PluginTable

if TYPE_CHECKING:  # for annotations only: the family registry reads this module's registry back
    from .families import AnyFamily

#: where an import keeps the release it read, under the cache root: ``<cache>/downloads/<importer>/<file>``
KEPT = Path("downloads")
#: an importer's name -> the module that defines its ``IMPORTER`` (each converts the releases of one family)
REGISTERED: dict[str, str] = {
    "tgb": ".tgb.importer",
}


@dataclass(frozen=True)
class Release:
    """Where an entry's release is published: its URL and the file name it is kept under."""

    url: str
    file_name: str


@dataclass(frozen=True)
class Converted:
    """An import's result, written into a folder: the manifest document, the files, and their columns where the
    import still holds them in memory (``None``: the cache reads them back from the files)."""

    document: dict[str, Any]
    files: dict[str, Path]
    columns: Mapping[str, Mapping[str, np.ndarray]] | None


class ImportEntry(Protocol):
    """What an importer's catalogue entry has for everyone: the dataset's name in the benchmark (the rest is the
    importer's own, handed back to its ``card``, ``release``, ``version`` and ``convert``)."""

    @property
    def name(self) -> str: ...


#: an importer's catalogue entry type (TGB's: ``TgbEntry``)
E = TypeVar("E", bound=ImportEntry)


@dataclass(frozen=True)
class Importer(Generic[E]):
    """One benchmark's importer, over its catalogue entry type ``E``.

    ``name``: the importer's name. ``family``: the family its datasets are named in (``tgbhub import FAMILY/NAME``:
    ``tgb/tgbl-wiki``). ``summary``: one line for help texts. ``names()``: every dataset its catalogue knows.
    ``entry(name)``: a catalogue entry, anything with a ``name`` attribute (the dataset's name in the benchmark);
    raises :class:`~tgbhub.errors.DatasetNotFoundError` with close names.
    ``card(entry)``: what ``tgbhub info`` shows before an import (statistics, upstream, citation). ``release(entry)``:
    where it is published. ``version(entry)``: the dataset version an import gets. ``convert(entry, release_path,
    release_sha256, expected_stats, folder)``: the converted files and manifest, written into ``folder``; raises
    :class:`~tgbhub.errors.IntegrityError` if the release does not reproduce the published statistics (or
    ``expected_stats``, for a release changed on purpose), naming each difference. ``builder``: the family plug-in
    that rebuilds an imported dataset from the release its import kept (``None``: a lost entry is imported again).
    ``reports_progress``: ``convert`` also takes ``progress=``, a factory of per-stage progress bars
    (:data:`generators.tgb.release.ProgressFactory`), which the client hands in.
    """

    name: str
    family: str
    summary: str
    names: Callable[[], list[str]]
    entry: Callable[[str], E]
    card: Callable[[E], dict[str, Any]]
    release: Callable[[E], Release]
    version: Callable[[E], str]
    convert: Callable[[E, Path, str, Mapping[str, Any] | None, Path], Converted]
    builder: AnyFamily | None = None
    reports_progress: bool = False


#: an importer whichever its entry type: what the registry holds, every importer having its own
AnyImporter = Importer[Any]


#: the registered importers, each module imported when its SOURCE is first read
IMPORTERS: PluginTable[str, AnyImporter] = PluginTable("importer", REGISTERED, attribute="IMPORTER",
                                                       package=__package__, error=GenerationError)


def kept_release(cache_root: Path, importer_name: str, file_name: str) -> Path:
    """Where an import by ``importer_name`` keeps the release file ``file_name`` in the cache at ``cache_root`` (the
    family that rebuilds an import reads it back from there)."""
    return cache_root / KEPT / importer_name / file_name


def names() -> list[str]:
    """Every registered importer, in registration order."""
    return list(REGISTERED)


def importer(name: str) -> AnyImporter:
    """The registered importer ``name``.

    Raises:
        GenerationError: if no importer of that name is registered (listing the known ones).
    """
    return IMPORTERS.require(name)


def importers() -> list[AnyImporter]:
    """Every registered importer, in registration order."""
    return list(IMPORTERS.values())
