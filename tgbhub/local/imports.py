"""``tgbhub import FAMILY/NAME [--from PATH_OR_URL]``: a benchmark's release of a dataset, converted, verified and
cached. The importers (TGB first) are plug-ins (:mod:`generators.importers`, reached through
:mod:`tgbhub.local.gateway`); what is here is the same for every one of them.

The import:

1. finds the release: ``--from`` a local file, a folder holding it, or an http(s) URL; else the copy a previous
   import kept (``<cache>/downloads/<importer>/<file>``); else the importer's upstream URL. A download streams to a
   temporary file with a progress bar, must open as an intact zip, and only then takes its final name; in offline
   mode nothing is downloaded and the error says what to download and where to put it. stdin is never read. An
   importer that reads the copies its benchmark's own client keeps (:class:`ReadsClientCopies`: TGB's, py-tgb's
   ``datasets/`` folder) also finds the release in such a folder, as a zip or as its extracted files; and
   :func:`import_every` imports every dataset such a folder holds.
2. converts it with the importer, which refuses it unless the statistics it measures equal the published ones (or
   ``expected_stats``), naming each difference;
3. installs the files through the one on-request install path (:func:`tgbhub.local.gateway.build_and_install`:
   staging, verify, install and store the manifest under the entry's lock), where :func:`tgbhub.load_dataset` finds
   it (``<cache>/<family>/<name>/<version>.manifest.json``).

An imported version is then loaded, published and served like any other (``tgbhub publish`` reads manifests kept
this way when given ``--manifests``); nothing is trusted that the cache has not verified.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from tgbhub.cache import Fetched, stored_manifest_path, write_text_atomic
from tgbhub.config import cache_root, offline_mode
from tgbhub.errors import DatasetNotFoundError, FetchError, InvalidNameError, TgbhubError
from tgbhub.hashing import file_sha256
from tgbhub.local.gateway import (
    CatalogueEntry,
    ImporterPlugin,
    build_and_install,
    importer_names,
    importer_plugin,
    kept_release,
)
from tgbhub.manifest import Manifest, read_manifest
from tgbhub.progress import Steps, byte_bar, counter

_CHUNK = 1 << 20


@runtime_checkable
class ReadsClientCopies(Protocol):
    """An importer that also reads the copies its benchmark's own client keeps on disk (``client`` names it: TGB's
    importer reads py-tgb's ``datasets/`` folder): where a folder holds a dataset's release, which datasets a folder
    holds, and the sha256 an import records for a release read there."""

    @property
    def client(self) -> str: ...

    @property
    def client_layout(self) -> str:
        """How the client lays its folder out, for a refusal to say what it expected."""
        ...

    def find_release(self, item: CatalogueEntry, folder: Path) -> Path:
        """The release of ``item`` in ``folder``: a file, or a folder of its extracted files; raises FetchError
        naming the folder and what was expected."""
        ...

    def held_datasets(self, root: Path) -> list[tuple[str, Path]]:
        """The datasets the client keeps under ``root``, each with its folder."""
        ...

    def release_sha256(self, item: CatalogueEntry, path: Path) -> str:
        """The sha256 an import of the release at ``path`` (a file or a folder) records."""
        ...


def stored_versions(root: Path, name: str) -> list[Path]:
    """The manifests a cache keeps for ``name``, oldest version first."""
    from tgbhub.registry import version_key

    family, _, short = name.partition("/")
    folder = root / family / short
    return sorted(folder.glob("*.manifest.json"), key=lambda p: version_key(p.name.removesuffix(".manifest.json")))


def import_dataset(importer: str, name: str, source: str | os.PathLike[str] | None = None, *,
                   cache_dir: str | os.PathLike[str] | None = None, offline: bool | None = None,
                   expected_stats: Mapping[str, Any] | None = None,
                   manifests: str | os.PathLike[str] | None = None) -> Manifest:
    """Import ``importer``'s dataset ``name`` (``tgbl-wiki`` or ``tgb/tgbl-wiki``) into the cache; return its
    manifest.

    ``expected_stats`` replaces the published statistics the import is checked against (for a release you changed
    on purpose, or a small test release); by default they are the catalogue's. ``manifests`` (a manifest root such
    as the repository's ``manifests/``) also receives the manifest, at ``<family>/<name>/<version>.json``: that is
    how a maintainer bundles an import and publishes it (``tgbhub publish tgb --version V ...``); clients then fetch
    it from the hub, verified against that manifest. Importing again reads the release again.

    Raises:
        GenerationError: if there is no such importer, the release is not readable in its layout, or this tgbhub
            cannot import it yet.
        DatasetNotFoundError: if the importer's catalogue has no such dataset (with suggestions).
        FetchError: if the release cannot be found or downloaded (saying what to download and where to put it).
        IntegrityError: if its statistics differ from the published ones (each listed), or a converted file does not
            verify; nothing is installed then.
    """
    plugin = importer_plugin(importer)
    item = plugin.entry(name.removeprefix(f"{plugin.family}/"))
    root = cache_root(cache_dir)
    path = obtain_release(importer, item, source, root, offline_mode(offline))
    steps = Steps(f"importing {item.name}", total=3)
    try:
        sha256 = plugin.release_sha256(item, path) if isinstance(plugin, ReadsClientCopies) else file_sha256(path)
        steps.step("release hashed")

        def build(staging: Path) -> tuple[dict[str, Any], Fetched]:
            convert = partial(plugin.convert, progress=counter) if plugin.reports_progress else plugin.convert
            converted = convert(item, path, sha256, expected_stats, staging)
            steps.step("converted and checked")
            return converted.document, Fetched(files=converted.files, columns=converted.columns, rebuilt=True)

        manifest: Manifest  # build_and_install's default load and parse give the dataset manifest
        manifest, _ = build_and_install(root, f"{plugin.family}/{item.name}", plugin.version(item), build,
                                        reuse=False)
        steps.step("verified and installed")
    finally:
        steps.close()
    if manifests is not None:
        family, short = manifest.name.split("/", 1)
        text = stored_manifest_path(root, manifest.name, manifest.version).read_text(encoding="utf-8")
        write_text_atomic(Path(manifests) / family / short / f"{manifest.version}.json", text)
    return manifest


def importer_for(name: str) -> str:
    """The importer whose family ``name`` (``family/name``) belongs to: ``importer_for("tgb/tgbl-wiki")`` is
    ``"tgb"``.

    Raises:
        InvalidNameError: for a name without a family, or a family no importer converts (naming those that do).
    """
    family, sep, short = name.partition("/")
    found = {importer_plugin(importer).family: importer for importer in importer_names()}
    if sep and family in found:
        return found[family]
    known = ", ".join(sorted(found))
    if sep:
        raise InvalidNameError(f"no importer converts family {family!r} (importers convert {known}); a bundled "
                               f"dataset is fetched or built with `tgbhub get {name}`")
    raise InvalidNameError(f"{name!r} needs its family: write FAMILY/NAME with FAMILY one of {known}, e.g. "
                           f"`tgbhub import {next(iter(found), 'tgb')}/{name}`")


def read_expected_stats(path: str | os.PathLike[str] | None) -> dict[str, Any] | None:
    """The statistics a modified release is checked against (``expected_stats`` of :func:`import_dataset`), read
    from a JSON object file; ``None`` for no file.

    Raises:
        InvalidNameError: if the file is missing, not JSON, or not an object of statistics.
    """
    if path is None:
        return None
    where, example = f"--expected-stats {os.fspath(path)!r}", "{\"num_edges\": 157474, \"num_nodes\": 9227}"
    try:
        stats = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidNameError(f"{where}: cannot read it ({exc.strerror}); pass a JSON file, e.g. {example}") from None
    except json.JSONDecodeError as exc:
        raise InvalidNameError(f"{where} is not JSON ({exc.msg} at line {exc.lineno}); write an object of statistics, "
                               f"e.g. {example}") from None
    if not isinstance(stats, dict) or not stats:
        found = "an empty object" if stats == {} else f"a JSON {type(stats).__name__}"
        raise InvalidNameError(f"{where} holds {found}, not an object of statistics; write e.g. {example}")
    return stats


def import_tgb(name: str, source: str | os.PathLike[str] | None = None, **options: Any) -> Manifest:
    """:func:`import_dataset` with TGB's importer: ``import_tgb("tgbl-wiki")``."""
    return import_dataset("tgb", name, source, **options)


def obtain_release(importer: str, item: CatalogueEntry, source: str | os.PathLike[str] | None, root: Path,
                   offline: bool) -> Path:
    """The release to read: ``source`` (a file, a folder holding it, or a URL), the kept download, or upstream. A
    folder of an importer that reads its client's copies (:class:`ReadsClientCopies`) is searched as that client
    lays it out, and may give a folder of extracted files.

    Raises:
        FetchError: if ``source`` does not exist, holds no file of that name (nor, for such an importer, a release
            as its client keeps it), or a download fails or is refused offline (naming the URL and the folder to
            put the file in).
    """
    plugin = importer_plugin(importer)
    release = plugin.release(item)
    kept = kept_release(root, importer, release.file_name)
    text = os.fspath(source) if source is not None else None
    if text is not None and not text.startswith(("http://", "https://")):
        path = Path(text)
        if path.is_dir() and isinstance(plugin, ReadsClientCopies):
            return plugin.find_release(item, path)
        if path.is_dir():
            path = path / release.file_name
        if not path.is_file():
            raise FetchError(text, release.file_name, "no such file", f"Download {release.url} and pass the file "
                             "(or its folder) with --from")
        return path
    if text is None and kept.is_file():
        return kept
    url = text or release.url
    advice = f"download {release.url} yourself and run `tgbhub import {plugin.family}/{item.name} --from PATH`"
    if offline:
        raise FetchError(url, release.file_name, "offline mode is on, so nothing is downloaded",
                         f"{advice[0].upper()}{advice[1:]}, or put the file at {kept}")
    return download(url, kept, f"Retry, or {advice}")


def download(url: str, target: Path, advice: str) -> Path:
    """Stream ``url`` into ``target`` (temp file, progress bar, must open as a zip, then renamed).

    Raises:
        FetchError: for an HTTP error, a connection failure, a truncated body or a file that is not a zip.
    """
    import requests

    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.part")
    try:
        with requests.get(url, stream=True, timeout=(10, 60)) as response:
            response.raise_for_status()
            size = int(response.headers.get("content-length", 0)) or None
            bar = byte_bar(f"downloading {target.name}", size)
            with open(partial, "wb") as handle:
                for block in response.iter_content(_CHUNK):
                    handle.write(block)
                    bar.update(len(block))
            bar.close()
            if size is not None and partial.stat().st_size != size:
                raise FetchError(url, target.name, f"got {partial.stat().st_size} of {size} bytes", advice)
        if not _whole_zip(partial):
            raise FetchError(url, target.name, "the body is not an intact zip (an error page, or damaged on the "
                             "way: a member fails its CRC check)", advice)
        os.replace(partial, target)
    except requests.RequestException as exc:
        raise FetchError(url, target.name, str(exc), advice) from exc
    finally:
        partial.unlink(missing_ok=True)
    return target


def _whole_zip(path: Path) -> bool:
    """Whether ``path`` is a zip whose every member passes its CRC check (a kept download must be usable)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            return archive.testzip() is None
    except (zipfile.BadZipFile, OSError, EOFError):
        return False


@dataclass(frozen=True)
class FolderImport:
    """One dataset of an :func:`import_every`: its name (``family/name``), the folder it was found in, and either
    the manifest its import installed or the error that refused it (nothing of it installed)."""

    name: str
    folder: Path
    manifest: Manifest | None = None
    error: TgbhubError | None = None


def importer_of_family(family: str) -> str | None:
    """The importer whose family is ``family`` (a bare word: ``tgb``), or ``None``."""
    for importer in importer_names():
        if importer_plugin(importer).family == family:
            return importer
    return None


def import_every(importer: str, root: str | os.PathLike[str] | None, *,
                 cache_dir: str | os.PathLike[str] | None = None,
                 expected_stats: Mapping[str, Mapping[str, Any]] | None = None,
                 manifests: str | os.PathLike[str] | None = None) -> list[FolderImport]:
    """Import every dataset ``importer``'s benchmark client keeps under ``root`` (TGB: py-tgb's ``datasets/``
    folder, or one dataset's folder in it), one after the other; a dataset that is refused does not stop the
    others. ``expected_stats`` maps a dataset's name (``tgbl-wiki`` or ``tgb/tgbl-wiki``) to the statistics its
    release is checked against instead of the published ones (:func:`import_dataset`); ``manifests`` as there.
    Nothing is downloaded.

    Returns:
        One :class:`FolderImport` per dataset found, in the importer's catalogue order.

    Raises:
        InvalidNameError: if ``root`` is not given, or the importer reads no client's folders.
        FetchError: if ``root`` is not a folder, or holds no dataset as the client keeps them (naming what was
            expected).
    """
    plugin = importer_plugin(importer)
    reader = _client_reader(plugin)
    folder = _client_root(reader, plugin.family, root)
    found = reader.held_datasets(folder)
    if not found:
        raise FetchError(str(folder), f"{reader.client}'s copies of {importer}'s datasets",
                         f"it holds none: expected {reader.client_layout}",
                         f"Pass the datasets/ folder {reader.client} downloaded into, or one dataset's folder in it")
    given = {name.removeprefix(f"{plugin.family}/"): stats for name, stats in (expected_stats or {}).items()}
    for name, stats in given.items():
        if not isinstance(stats, Mapping) or not stats:
            raise InvalidNameError(f"--expected-stats: {name!r} maps to {stats!r:.60}, not an object of statistics; "
                                   "with a family alone, the file maps each dataset's name to its statistics, e.g. "
                                   "{\"tgbl-wiki\": {\"num_edges\": 157474, \"num_nodes\": 9227}}")
    unknown = sorted(set(given) - {name for name, _ in found})
    if unknown:
        raise InvalidNameError(f"--expected-stats names {', '.join(unknown)}, which {folder} does not hold (it holds "
                               f"{', '.join(name for name, _ in found)}); key the statistics by those names")
    imported = []
    for name, where in found:
        try:
            manifest = import_dataset(importer, name, where, cache_dir=cache_dir, offline=True,
                                      expected_stats=given.get(name), manifests=manifests)
        except TgbhubError as refused:
            imported.append(FolderImport(f"{plugin.family}/{name}", where, error=refused))
        else:
            imported.append(FolderImport(manifest.name, where, manifest=manifest))
    return imported


def _client_reader(plugin: ImporterPlugin) -> ReadsClientCopies:
    """``plugin`` as an importer that reads its client's folders.

    Raises:
        InvalidNameError: if it reads none.
    """
    if not isinstance(plugin, ReadsClientCopies):
        raise InvalidNameError(f"{plugin.family!r} names an importer's family, and its importer reads no benchmark "
                               f"client's folders: import one dataset, `tgbhub import {plugin.family}/NAME --from "
                               "PATH`")
    return plugin


def _client_root(reader: ReadsClientCopies, family: str, root: str | os.PathLike[str] | None) -> Path:
    """``root`` as a folder of ``reader``'s client copies.

    Raises:
        InvalidNameError: if ``root`` is not given.
        FetchError: if ``root`` is not a folder.
    """
    if root is None:
        raise InvalidNameError(f"{family!r} alone imports every dataset of a {reader.client} folder: pass it, "
                               f"`tgbhub import {family} --from DATASETS_FOLDER`, or import one dataset, "
                               f"`tgbhub import {family}/NAME`")
    folder = Path(root)
    if not folder.is_dir():
        raise FetchError(str(folder), f"{reader.client}'s copies of {family}'s datasets", "no such folder",
                         f"Pass the datasets/ folder {reader.client} downloaded into")
    return folder


def load_imported(root: Path, name: str, version: str | None) -> Manifest | None:
    """The manifest of an imported ``name`` (``@version``, else the newest) kept in the cache, or ``None``."""
    if version is not None:
        path = stored_manifest_path(root, name, version)
        return read_manifest(path) if path.is_file() else None
    kept = stored_versions(root, name)
    return read_manifest(kept[-1]) if kept else None


def import_advice(name: str) -> str | None:
    """How to get ``name`` when an importer's catalogue has it and it is not imported into this cache; ``None`` when
    no importer's family is ``name``'s.

    Raises:
        DatasetNotFoundError: for a name in an importer's family that its catalogue does not have (suggesting close
            ones).
    """
    family, _, short = name.partition("/")
    for importer in importer_names():
        plugin = importer_plugin(importer)
        if plugin.family != family:
            continue
        try:
            item = plugin.entry(short)
        except DatasetNotFoundError as unknown:  # suggest the catalogue's names, in this project's spelling
            raise DatasetNotFoundError(name, [f"{family}/{s}" for s in unknown.suggestions]) from unknown
        release = plugin.release(item)
        return (f"{name} is {importer}'s {item.name}, which is imported, not bundled: run `tgbhub import "
                f"{family}/{item.name}` (downloads {release.url}), or download it yourself and run `tgbhub import "
                f"{family}/{item.name} --from PATH`")
    return None


__all__ = ["FolderImport", "ReadsClientCopies", "download", "import_advice", "import_dataset", "import_every",
           "import_tgb", "importer_for", "importer_of_family", "load_imported", "obtain_release",
           "read_expected_stats"]
