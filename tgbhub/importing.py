"""``tgbhub import tgb NAME [--from PATH_OR_URL]``: TGB's release of a dataset, converted, verified and cached.

The import (a composition root, like :mod:`tgbhub.derive`):

1. finds the release zip: ``--from`` a local zip, a folder holding it, or an http(s) URL; else the copy a previous
   import kept (``<cache>/downloads/tgb/<zip>``); else TGB's upstream URL. A download streams to a temporary file
   with a progress bar, must open as a zip, and only then takes its final name; in offline mode nothing is
   downloaded and the error says what to download and where to put it. stdin is never read.
2. converts it with py-tgb's conventions (:mod:`generators.tgb`), and refuses it unless the statistics it measures
   equal the ones TGB published (:func:`tgbhub.tgb.catalogue.check_stats`), naming each difference;
3. writes the manifest (files' sha256 and content digests, the upstream URL, the zip's sha256, the statistics),
   installs the files through the verified cache (temp -> verify -> rename), and keeps the manifest next to the
   cache entry (``<cache>/tgb/<name>/<version>.manifest.json``), where :func:`tgbhub.load_dataset` finds it.

An imported version is then loaded, published and served like any other (``tgbhub publish`` reads manifests kept
this way when given ``--manifests``); nothing is trusted that the cache has not verified.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from tgbhub import cache, config
from tgbhub.cache import Fetched
from tgbhub.errors import DatasetNotFoundError, FetchError, IntegrityError
from tgbhub.hashing import file_sha256
from tgbhub.manifest import Manifest, parse_manifest, read_manifest
from tgbhub.progress import Steps, byte_bar
from tgbhub.sources.build import tgb_converter
from tgbhub.tgb.catalogue import TgbEntry, check_stats, entry as catalogue_entry

FAMILY = "tgb"
DOWNLOADS = Path("downloads") / FAMILY
_CHUNK = 1 << 20


def stored_versions(root: Path, name: str) -> list[Path]:
    """The manifests a cache keeps for ``name``, oldest version first."""
    from tgbhub.registry import version_key

    family, _, short = name.partition("/")
    folder = root / family / short
    return sorted(folder.glob("*.manifest.json"), key=lambda p: version_key(p.name.removesuffix(".manifest.json")))


def import_tgb(name: str, source: str | os.PathLike[str] | None = None, *,
               cache_dir: str | os.PathLike[str] | None = None, offline: bool | None = None,
               expected_stats: Mapping[str, Any] | None = None,
               manifests: str | os.PathLike[str] | None = None) -> Manifest:
    """Import TGB's ``name`` (``tgbl-wiki`` or ``tgb/tgbl-wiki``) into the cache; return its manifest.

    ``expected_stats`` replaces the published statistics the import is checked against (for a release you
    changed on purpose, or a small test release); by default they are the catalogue's. ``manifests`` (a manifest
    root such as the repository's ``manifests/``) also receives the manifest, at
    ``<family>/<name>/<version>.json``: that is how a maintainer bundles an import and publishes it
    (``tgbhub publish tgb --version V ...``); clients then fetch it from the hub, verified against that manifest.

    Raises:
        DatasetNotFoundError: if TGB has no such dataset (with suggestions).
        FetchError: if the release cannot be found or downloaded (saying what to download and where to put it).
        GenerationError: if the release is not a readable zip in TGB's layout, or this tgbhub cannot import it yet.
        IntegrityError: if its statistics differ from the published ones (each listed), or a converted file does not
            verify; nothing is installed then.
    """
    convert, manifest_document, write, Release = tgb_converter()
    item = catalogue_entry(name)
    root = config.cache_root(cache_dir)
    zip_path = obtain_release(item, source, root, config.offline_mode(offline))
    steps = Steps(f"importing {item.name}", total=5)
    try:
        zip_sha256 = file_sha256(zip_path)
        release = Release(zip_path, {role: file for role, file in item.files.items()})
        steps.step("zip hashed and opened")
        try:
            files, info = convert(item, release)
        finally:
            release.close()
        steps.step("converted")
        published = dict(expected_stats) if expected_stats is not None else dict(item.stats)
        _check_statistics(item, info["measured"], published)
        steps.step("statistics checked")
        with tempfile.TemporaryDirectory(prefix="tgbhub-import-") as scratch:
            written = write(files, Path(scratch), item)
            document = manifest_document(item, files, info, Path(scratch), zip_path.name, zip_sha256, published)
            manifest = parse_manifest(document)
            steps.step("written")

            def fetch(staging: Path) -> Fetched:
                for file, path in written.items():
                    shutil.move(str(path), staging / file)
                return Fetched(files={file: staging / file for file in written}, columns=files, rebuilt=True)

            cache.install(manifest, root, fetch)
            steps.step("verified and installed")
    finally:
        steps.close()
    text = json.dumps(document, indent=1, ensure_ascii=False) + "\n"
    cache.write_text_atomic(cache.stored_manifest_path(root, manifest.name, manifest.version), text)
    if manifests is not None:
        family, short = manifest.name.split("/", 1)
        cache.write_text_atomic(Path(manifests) / family / short / f"{manifest.version}.json", text)
    return manifest


def _check_statistics(item: TgbEntry, measured: Mapping[str, Any], published: Mapping[str, Any]) -> None:
    """Raises IntegrityError listing every published statistic the import does not reproduce."""
    mismatches = check_stats(dataclasses.replace(item, stats=MappingProxyType(dict(published))), measured)
    if mismatches:
        raise IntegrityError(f"import of {item.name}: statistics", "the published ones",
                             "; ".join(mismatches),
                             "Nothing was installed. The release is not the one TGB published (another version, a "
                             "partial download, a modified file): download it again from " + item.url)


def obtain_release(item: TgbEntry, source: str | os.PathLike[str] | None, root: Path, offline: bool) -> Path:
    """The release zip to read: ``source`` (a zip, a folder holding it, or a URL), the kept download, or upstream.

    Raises:
        FetchError: if ``source`` does not exist, holds no zip of that name, or a download fails or is refused
            offline (naming the URL and the folder to put the zip in).
    """
    kept = root / DOWNLOADS / item.zip_name
    text = os.fspath(source) if source is not None else None
    if text is not None and not text.startswith(("http://", "https://")):
        path = Path(text)
        if path.is_dir():
            path = path / item.zip_name
        if not path.is_file():
            raise FetchError(text, item.zip_name, "no such file", f"Download {item.url} and pass the zip (or its "
                             "folder) with --from")
        return path
    if text is None and kept.is_file():
        return kept
    url = text or item.url
    if offline:
        raise FetchError(url, item.zip_name, "offline mode is on, so nothing is downloaded",
                         f"Download {item.url} yourself and run `tgbhub import tgb {item.name} --from PATH`, or put "
                         f"the zip at {kept}")
    return download(url, kept, item)


def download(url: str, target: Path, item: TgbEntry) -> Path:
    """Stream ``url`` into ``target`` (temp file, progress bar, must open as a zip, then renamed).

    Raises:
        FetchError: for an HTTP error, a connection failure, a truncated body or a file that is not a zip.
    """
    import requests

    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.part")
    advice = f"Retry, or download {item.url} yourself and run `tgbhub import tgb {item.name} --from PATH`"
    try:
        with requests.get(url, stream=True, timeout=(10, 60)) as response:
            response.raise_for_status()
            size = int(response.headers.get("content-length", 0)) or None
            bar = byte_bar(f"downloading {item.zip_name}", size)
            with open(partial, "wb") as handle:
                for block in response.iter_content(_CHUNK):
                    handle.write(block)
                    bar.update(len(block))
            bar.close()
            if size is not None and partial.stat().st_size != size:
                raise FetchError(url, item.zip_name, f"got {partial.stat().st_size} of {size} bytes", advice)
        if not _whole_zip(partial):
            raise FetchError(url, item.zip_name, "the body is not an intact zip (an error page, or damaged on the "
                             "way: a member fails its CRC check)", advice)
        os.replace(partial, target)
    except requests.RequestException as exc:
        raise FetchError(url, item.zip_name, str(exc), advice) from exc
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


def load_imported(root: Path, name: str, version: str | None) -> Manifest | None:
    """The manifest of an imported ``name`` (``@version``, else the newest) kept in the cache, or ``None``."""
    if version is not None:
        path = cache.stored_manifest_path(root, name, version)
        return read_manifest(path) if path.is_file() else None
    kept = stored_versions(root, name)
    return read_manifest(kept[-1]) if kept else None


def import_advice(name: str) -> str | None:
    """How to get ``name`` when it is a TGB dataset not imported into this cache; ``None`` otherwise.

    Raises:
        DatasetNotFoundError: for a name in the ``tgb`` family that TGB does not have (suggesting close ones).
    """
    family, _, short = name.partition("/")
    if family != FAMILY:
        return None
    try:
        item = catalogue_entry(short)
    except DatasetNotFoundError as unknown:  # suggest TGB's names, in this project's spelling
        raise DatasetNotFoundError(name, [f"{FAMILY}/{s}" for s in unknown.suggestions]) from unknown
    return (f"{name} is TGB's {item.name}, which is imported, not bundled: run `tgbhub import tgb {item.name}` "
            f"(downloads {item.url}), or download it yourself and run `tgbhub import tgb {item.name} --from PATH`")


__all__ = ["download", "import_advice", "import_tgb", "load_imported", "obtain_release"]
