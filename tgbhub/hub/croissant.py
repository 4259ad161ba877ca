"""The Croissant view of a published dataset version: its manifest as a document that loads from anywhere.

A dataset version's ``croissant.json`` is its canonical manifest. It names every file relative to its own folder
(``"contentUrl": "edges.parquet"``), so ``mlcroissant`` reads it only from a file path beside the files, and its
bytes never change once published: the client checks a published variant's manifest against the sha256 its family's
``derived.json`` pins, and every file against the sha256s a manifest lists. So it is never rewritten.

The **view** (:data:`VIEW`, ``croissant-view.json`` beside it) is derived from it on demand, by one function,
:func:`croissant_view`, for both places that need one:

* ``tgbhub publish`` to a Hub API target commits it into each dataset's folder, its URLs absolute against that Hub
  (``https://huggingface.co/datasets/<org>/<family>/resolve/<dataset tag>/<name>/<file>``); a ``git:`` root gets
  none, as the server below computes it;
* ``tgbhub hub serve`` answers a request for it (:func:`served_view`) by computing it from the ``croissant.json`` at
  the requested revision, its URLs absolute against the address the client used, whatever file was committed there.

What the view adds to the manifest, and nothing else changes (files, sha256s, sizes, digests, ``@id``\\ s):

* every ``contentUrl`` absolute: ``<hub>/datasets/<org>/<repo>/resolve/<revision>/<name>/<file>``;
* a ``cr:FileObject`` for every per-split Parquet view the hub publishes beside the artifacts (marked
  ``"tgbhub:split"``: not an artifact of the dataset version, so :func:`tgbhub.manifest.parse_manifest` skips it);
* a ``cr:RecordSet`` for every Parquet file no record set reads yet (its fields from the file's Parquet schema);
* ``isBasedOn``: the URL of the canonical ``croissant.json`` it was derived from.

HDF5 files (ChaosNet's ``trajectories.h5``) get no record set: ``mlcroissant`` 1.1.1 reads CSV, TSV, JSON, JSON
Lines, Parquet, text, ARFF, DICOM, images and audio; generating the records of a record set over an
``application/x-hdf5`` file raises its ``GenerationError`` for the ``Read`` operation, caused by ``ValueError``
("None of the provided encoding formats: application/x-hdf5 ... returned a valid pandas dataframe"). Croissant 1.1
has no way to address an array inside an HDF5 file either. Their content is still readable through the view: the
per-split Parquet views hold every trajectory row by row (``trajectory``, ``step``, ``state``), and the manifest's
own ``ics`` record set carries the per-trajectory labels inline.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote, unquote

from tgbhub.errors import ManifestError
from tgbhub.hub.layout import CROISSANT, DatasetRelease, RepoFile, lfs_oid, split_view_path, split_views
from tgbhub.manifest import VIEW_ONLY_KEY, file_name, parse_manifest, plain

#: the view's file name, beside ``croissant.json`` in each dataset's folder
VIEW = "croissant-view.json"
PARQUET = "application/x-parquet"
#: Croissant data types of Arrow's scalar types (a list of one of them is that type, ``repeated``)
_ARROW_TYPES = {"int8": "cr:Int8", "int16": "cr:Int16", "int32": "cr:Int32", "int64": "cr:Int64",
                "uint8": "cr:UInt8", "uint16": "cr:UInt16", "uint32": "cr:UInt32", "uint64": "cr:UInt64",
                "halffloat": "cr:Float16", "float": "cr:Float32", "double": "cr:Float64", "bool": "sc:Boolean",
                "string": "sc:Text", "large_string": "sc:Text"}
_SHARD = re.compile(r"-\d{5}-of-\d{5}$")
_VIEW_REQUEST = re.compile(r"/datasets/([^/]+)/([^/]+)/resolve/([^/]+)/(.+)/" + re.escape(VIEW))


@dataclass(frozen=True)
class ViewFile:
    """A file of a dataset's folder as the view needs it: its name inside the folder, sha256 and size, and its bytes
    (a local path, or the bytes themselves) where its Parquet schema may have to be read; ``None`` where they are not
    at hand (the file then gets no record set of its own)."""

    name: str
    sha256: str
    size: int
    source: Path | bytes | None = None


def resolve_base(location: str, revision: str, folder: str) -> str:
    """The URL every file of a dataset's folder is resolved against: ``<location>/resolve/<revision>/<folder>/``.

    Args:
        location: the repo's web address, ``<hub>/datasets/<org>/<repo>``.
        revision: the tag or commit the URLs pin.
        folder: the dataset's folder in the repo (its short name).
    """
    return f"{location.rstrip('/')}/resolve/{quote(revision, safe='')}/{quote(folder)}/"


def croissant_view(document: Mapping[str, Any], base: str, files: Sequence[ViewFile]) -> dict[str, Any]:
    """The view of the canonical manifest ``document`` whose folder is at ``base``.

    Args:
        document: the canonical manifest (``croissant.json``), as parsed JSON; it is not changed.
        base: the folder's URL, ending in ``/`` (:func:`resolve_base`).
        files: what is known of the folder's files: the artifacts and the per-split Parquet views (one not named
            here is left out of the view, an artifact keeps its file object without a new record set).

    Returns:
        The view, a Croissant 1.1 document ``mlcroissant`` loads from a URL or as a dict.

    Raises:
        ManifestError: if ``document`` is not a valid manifest, or a Parquet file's schema cannot be read.
    """
    manifest = parse_manifest(document)
    known = {f.name: f for f in files}
    view = plain(document)
    where = f"manifest {manifest.name!r}"
    view["distribution"] = [{**obj, "contentUrl": base + quote(file_name(obj, where))}
                            for obj in view["distribution"] if VIEW_ONLY_KEY not in obj]
    view["distribution"] += [_split_object(known[name], split, base)
                             for split, name in _split_files(manifest).items() if name in known]
    read = {str(field["source"]["fileObject"]["@id"]) for record_set in view.get("recordSet", ())
            for field in record_set.get("field", ()) if "source" in field and "fileObject" in field["source"]}
    taken = {str(record_set.get("@id")) for record_set in view.get("recordSet", ())}
    for obj in view["distribution"]:
        entry = known.get(obj["name"])
        if obj["@id"] in read or obj.get("encodingFormat") != PARQUET or entry is None or entry.source is None:
            continue
        view.setdefault("recordSet", []).append(_parquet_record_set(obj, entry, taken))
    view["isBasedOn"] = base + CROISSANT
    return view


def view_bytes(document: Mapping[str, Any], base: str, files: Sequence[ViewFile]) -> bytes:
    """:func:`croissant_view` as the bytes a Hub stores and serves (indented JSON, one trailing newline).

    Raises:
        ManifestError: as :func:`croissant_view`.
    """
    return (json.dumps(croissant_view(document, base, files), indent=1, ensure_ascii=False) + "\n").encode()


def web_location(target_location: str) -> str | None:
    """The web address of a publish target's repo (``<hub>/datasets/<org>/<repo>``) that a committed view's URLs
    are absolute against: the target's own where it is a URL (a Hub API target: ``https://huggingface.co/...`` for
    the Hugging Face Hub); ``None`` for a ``git:`` root, which gets no committed view, since ``tgbhub hub serve``
    computes one for the address each client uses."""
    if target_location.startswith(("https://", "http://")):
        return target_location.rstrip("/")
    return None


def with_view(release: DatasetRelease, location: str) -> DatasetRelease:
    """``release`` with its folder's view (:data:`VIEW`) among its files, its URLs pinned to the dataset version's
    tag at ``location`` (:func:`web_location`); ``release`` itself when it holds no ``croissant.json``.

    Raises:
        ManifestError: if its ``croissant.json`` is not a valid manifest, or a split view is not Parquet.
    """
    prefix = f"{release.folder}/"
    croissant = next((f for f in release.files if f.path == prefix + CROISSANT), None)
    if croissant is None:
        return release
    kept = [f for f in release.files if f.path != prefix + VIEW]
    files = [ViewFile(f.path.removeprefix(prefix), f.sha256, f.size, f.local if f.local is not None else f.data)
             for f in kept if f.path.startswith(prefix) and f is not croissant]
    try:
        document = json.loads(croissant.read())
    except ValueError as exc:
        raise ManifestError(f"{croissant.path} is not JSON ({exc}); publish the dataset's manifest file") from exc
    data = view_bytes(document, resolve_base(location, release.tag, release.folder), files)
    view = RepoFile(prefix + VIEW, hashlib.sha256(data).hexdigest(), len(data), data=data)
    return DatasetRelease(release.manifest, tuple(sorted([*kept, view], key=lambda f: f.path)))


class GitObjects(Protocol):
    """Read access to one git repo's objects (the front's long-lived ``git cat-file``)."""

    def header(self, name: str) -> tuple[str, str, int] | None:
        """``(object id, type, size)`` of a revision expression, or ``None`` if it names nothing."""

    def content(self, oid: str) -> bytes | None:
        """The bytes of object ``oid``, or ``None`` if it is missing."""


@dataclass(frozen=True)
class ServedView:
    """A view as a local hub answers it: the document's bytes and the commit the revision resolved to."""

    body: bytes
    commit: str

    @property
    def headers(self) -> dict[str, str]:
        """The Hub's download headers for it (``huggingface_hub`` needs both to download a file)."""
        return {"ETag": f'"{hashlib.sha256(self.body).hexdigest()}"', "X-Repo-Commit": self.commit}


def served_view(root: Path, request: str, authority: str,
                objects: Callable[[Path], GitObjects]) -> ServedView | None:
    """The view a local hub answers to ``GET <request>``, for a request of
    ``/datasets/<org>/<repo>/resolve/<revision>/<name>/croissant-view.json``: computed from that folder's
    ``croissant.json`` at ``revision``, its URLs absolute against ``http://<authority>``; ``None`` for any other
    request, or where the repo, revision, folder or manifest is missing or invalid (the hub then answers as for any
    other file).

    Args:
        root: the hub root (``<root>/datasets/<org>/<repo>``: git repos, work trees or bare, with their LFS objects).
        request: the request target, query included.
        authority: ``host:port`` as the client addressed the hub.
        objects: the object reader of a repo.
    """
    match = _VIEW_REQUEST.fullmatch(request.split("?", 1)[0])
    if match is None:
        return None
    org, name, revision, folder = (unquote(part) for part in match.groups())
    if any(part in ("", ".", "..") for part in (org, name, *folder.split("/"))) or "/" in org + name:
        return None
    repo = root / "datasets" / org / name
    lfs = repo / ".git" / "lfs" / "objects" if (repo / ".git").is_dir() else repo / "lfs" / "objects"
    if not (repo / ".git").is_dir() and not (repo / "HEAD").is_file():
        return None
    try:
        return _view_at(objects(repo), lfs, f"http://{authority}/datasets/{org}/{name}", revision, folder)
    except (OSError, ValueError):  # git unavailable, or a manifest that is no manifest: answered as any other file
        return None


def _view_at(git: GitObjects, lfs: Path, location: str, revision: str, folder: str) -> ServedView | None:
    """The view of ``folder``'s manifest at ``revision``, or ``None`` if there is none; ``lfs``: the repo's LFS
    object store."""
    commit = git.header(f"{revision}^{{commit}}")
    blob = git.header(f"{commit[0]}:{folder}/{CROISSANT}") if commit is not None else None
    data = git.content(blob[0]) if blob is not None and blob[1] == "blob" else None
    if commit is None or data is None:
        return None
    document = json.loads(data)
    manifest = parse_manifest(document)
    names = [f.name for f in manifest.files] + list(_split_files(manifest).values())
    files = [found for found in (_repo_file(git, lfs, commit[0], folder, n) for n in names) if found is not None]
    return ServedView(view_bytes(document, resolve_base(location, revision, folder), files), commit[0])


def _repo_file(git: GitObjects, lfs: Path, commit: str, folder: str, name: str) -> ViewFile | None:
    """``folder/name`` at ``commit``: an LFS file read from the LFS object store, a regular one from git; ``None``
    if the commit does not hold it (a hub published before split views)."""
    blob = git.header(f"{commit}:{folder}/{name}")
    data = git.content(blob[0]) if blob is not None and blob[1] == "blob" else None
    if data is None:
        return None
    sha256 = lfs_oid(data)
    if sha256 is None:
        return ViewFile(name, hashlib.sha256(data).hexdigest(), len(data), data)
    local = lfs / sha256[:2] / sha256[2:4] / sha256
    size = int(data.rsplit(b"size ", 1)[1])
    return ViewFile(name, sha256, size, local if local.is_file() else None)


def _split_files(manifest: Any) -> dict[str, str]:
    """``split -> file name inside the folder`` of the per-split Parquet views the hub publishes for ``manifest``."""
    prefix = f"{manifest.short_name}/"
    return {split: split_view_path(manifest, split).removeprefix(prefix) for split in split_views(manifest)}


def _split_object(file: ViewFile, split: str, base: str) -> dict[str, Any]:
    return {"@type": "cr:FileObject", "@id": file.name, "name": file.name, "contentUrl": base + quote(file.name),
            "encodingFormat": PARQUET, "sha256": file.sha256, "contentSize": f"{file.size} B",
            "description": f"The {split} split as Parquet rows, published beside the artifacts for the `datasets` "
                           "library (not a versioned artifact: cut from them at publish time).",
            VIEW_ONLY_KEY: split}


def _parquet_record_set(obj: Mapping[str, Any], file: ViewFile, taken: set[str]) -> dict[str, Any]:
    """A record set reading every column of the Parquet file ``obj`` whose type Croissant has (a list column as a
    ``repeated`` field of its item type); named for the file (its split, for a split view), unique in ``taken``.

    Raises:
        ManifestError: if the file's Parquet schema cannot be read.
    """
    name = obj.get(VIEW_ONLY_KEY) or _SHARD.sub("", obj["name"].rsplit("/", 1)[-1].removesuffix(".parquet"))
    while name in taken:
        name = f"{name}-records"
    taken.add(name)
    fields, skipped = [], []
    for column, arrow_type in _parquet_schema(file):
        data_type, repeated = _croissant_type(arrow_type)
        if data_type is None:
            skipped.append(f"{column} ({arrow_type})")
            continue
        field: dict[str, Any] = {"@type": "cr:Field", "@id": f"{name}/{column}", "name": column,
                                 "dataType": data_type,
                                 "source": {"fileObject": {"@id": obj["@id"]}, "extract": {"column": column}}}
        if repeated:
            field["repeated"] = True
        fields.append(field)
    description = f"Every row of {obj['name']}, its columns as its Parquet schema declares them."
    if skipped:
        description += f" Not described (no Croissant data type): {', '.join(skipped)}."
    return {"@type": "cr:RecordSet", "@id": name, "name": name, "description": description, "field": fields}


def _parquet_schema(file: ViewFile) -> list[tuple[str, Any]]:
    """``(column, Arrow type)`` of each top-level column of a Parquet file.

    Raises:
        ManifestError: if the file is not readable Parquet.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = pa.BufferReader(file.source) if isinstance(file.source, bytes) else file.source
    try:
        schema = pq.read_schema(source)
    except (OSError, pa.ArrowException) as exc:
        raise ManifestError(f"cannot read the Parquet schema of {file.name} ({exc}); the view describes only files "
                            "that are Parquet: publish the dataset's verified files again") from exc
    return [(field.name, field.type) for field in schema]


def _croissant_type(arrow_type: Any) -> tuple[str | None, bool]:
    """``(Croissant data type or None, repeated)`` of an Arrow type: a list's item type, repeated."""
    item = getattr(arrow_type, "value_type", None)
    if item is not None and str(arrow_type).startswith(("list", "large_list", "fixed_size_list")):
        return _ARROW_TYPES.get(str(item)), True
    return _ARROW_TYPES.get(str(arrow_type)), False
