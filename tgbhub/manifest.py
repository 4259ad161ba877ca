"""Croissant 1.1 JSON-LD manifests, parsed into frozen dataclasses.

A manifest is the single source of per-dataset facts: files and their hashes, the recipe that rebuilds them, resolved
splits, the evaluation task and statistics. Code branches on these attributes, never on a dataset's name.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import quote, urlsplit

from tgbhub.errors import ManifestError, UnsupportedTaskError

CROISSANT_CONFORMS_TO = "http://mlcommons.org/croissant/1.1"
#: the Croissant Responsible-AI vocabulary every manifest also conforms to (its terms use the ``rai:`` prefix)
RAI_CONFORMS_TO = "http://mlcommons.org/croissant/RAI/1.0"
#: a manifest's ``conformsTo``: Croissant 1.1 first (what mlcroissant reads the version from), then Croissant RAI 1.0;
#: a manifest written before the RAI fields declares the bare Croissant string, which is still accepted
MANIFEST_CONFORMS_TO = (CROISSANT_CONFORMS_TO, RAI_CONFORMS_TO)
#: the Responsible-AI fields every manifest carries, each non-empty (the NeurIPS Evaluations and Datasets track's
#: minimal set; the licence is Croissant's core ``license``), in the order manifests list them
RAI_FIELDS = ("rai:dataCollection", "rai:dataUseCases", "rai:dataLimitations", "rai:dataBiases",
              "rai:personalSensitiveInformation", "rai:dataSocialImpact")
#: keys outside the versioned data: a manifest that differs from a published one only here describes the same data
#: (docs/design.md, "Responsible-AI metadata and versioning"); every ``rai:`` key is metadata too
METADATA_KEYS = frozenset({"@context", "conformsTo"})
TGBHUB_NAMESPACE = "https://tgbhub.dev/ns#"
#: Our blocks, stored as JSON literals under the tgbhub namespace so Croissant tools keep them verbatim.
EXTENSION_KEYS = ("recipe", "digest", "graph", "splits", "task", "tasks", "stats", "knownDiscrepancies", "changelog")
#: how many of EXTENSION_KEYS every manifest's context declares (those of the first release)
_FIRST_RELEASE_TERMS = 8

_STANDARD_CONTEXT: dict[str, Any] = {
    "@language": "en", "@vocab": "https://schema.org/", "citeAs": "cr:citeAs", "column": "cr:column",
    "conformsTo": "dct:conformsTo", "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"}, "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/", "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"}, "extract": "cr:extract", "field": "cr:field",
    "fileProperty": "cr:fileProperty", "fileObject": "cr:fileObject", "fileSet": "cr:fileSet", "format": "cr:format",
    "includes": "cr:includes", "isLiveDataset": "cr:isLiveDataset", "jsonPath": "cr:jsonPath", "key": "cr:key",
    "md5": "cr:md5", "parentField": "cr:parentField", "path": "cr:path", "recordSet": "cr:recordSet",
    "references": "cr:references", "regex": "cr:regex", "repeated": "cr:repeated", "replace": "cr:replace",
    "samplingRate": "cr:samplingRate", "sc": "https://schema.org/", "separator": "cr:separator", "source": "cr:source",
    "subField": "cr:subField", "transform": "cr:transform",
}


def croissant_context(used: Iterable[str] = EXTENSION_KEYS) -> dict[str, Any]:
    """The standard Croissant 1.1 ``@context`` plus the ``tgbhub`` prefix and our JSON-literal terms: the first
    release's terms always, a later extension key's term only when the document uses it (so a published manifest's
    bytes never change because a term was added for other datasets)."""
    context = dict(_STANDARD_CONTEXT)
    context["tgbhub"] = TGBHUB_NAMESPACE
    wanted = set(used)
    for index, key in enumerate(EXTENSION_KEYS):
        if index < _FIRST_RELEASE_TERMS or key in wanted:
            context[key] = {"@id": f"tgbhub:{key}", "@type": "@json"}
    return context


#: the key that marks a ``distribution`` object only a Croissant view lists (a per-split Parquet copy a hub publishes
#: beside the artifacts, :mod:`tgbhub.hub.croissant`): not a file of the dataset version, so not one of its files
VIEW_ONLY_KEY = "tgbhub:split"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_SIZE = re.compile(r"^(\d+) B$")


@dataclass(frozen=True)
class FileEntry:
    """One artifact file: where it lives relative to the dataset folder, its bytes' hash and its logical digest."""

    name: str
    sha256: str
    size: int
    encoding: str
    digest: str | None
    columns: tuple[str, ...]
    #: sha256 of single columns' little-endian bytes, where the manifest lists them (names what differs on mismatch)
    column_sha256: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


#: what a ``digest`` is wherever cards and graded results show one (their ``digest_kind``): the logical content digest
DIGEST_KIND = ("logical content digest (sha256-columns-v1 of the canonical column bytes): what a local rebuild is "
               "checked against, the same whatever Parquet writer made the file; not a file sha256")
#: what a file's ``sha256`` is wherever it is shown beside a ``digest``
SHA256_KIND = "file sha256 (the bytes on disk): what a download is checked against"


@dataclass(frozen=True)
class ParentRef:
    """The dataset a derived dataset is built from: ``family/name@version`` and the content digest of each parent
    file the transform reads (a parent whose verified content differs is refused, not silently used)."""

    dataset: str
    digests: Mapping[str, str]

    @property
    def name(self) -> str:
        return self.dataset.partition("@")[0]

    @property
    def version(self) -> str:
        return self.dataset.partition("@")[2]


@dataclass(frozen=True)
class Recipe:
    """Everything needed to rebuild the files exactly, plus ``checks``: values a generator may verify cheaply before
    the long computation, to refuse a build that could not reproduce the published data (empty when absent).

    A derived dataset's recipe names its ``parent``; its ``generator`` is the transform, ``version`` the transform's
    code version, ``params`` its canonical parameters (``kind`` first) and ``seed`` the variant's seed.
    """

    generator: str
    version: str
    params: Mapping[str, Any]
    seed: int
    checks: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    parent: ParentRef | None = None


@dataclass(frozen=True)
class Manifest:
    """A parsed dataset-version manifest."""

    name: str
    version: str
    description: str
    license: str
    files: tuple[FileEntry, ...]
    recipe: Recipe | None
    graph: Mapping[str, Any]
    splits: Mapping[str, tuple[int, int]]
    task: Mapping[str, Any]
    stats: Mapping[str, Any]
    known_discrepancies: tuple[Mapping[str, Any], ...]
    raw: Mapping[str, Any] = field(repr=False, compare=False)

    @property
    def family(self) -> str:
        return self.name.split("/", 1)[0]

    @property
    def short_name(self) -> str:
        return self.name.split("/", 1)[1]

    @property
    def split_unit(self) -> str:
        """What split boundaries count: ``snapshot`` (half-open ranges of ``t``), ``row`` (half-open row ranges) or
        ``initial-condition``."""
        return str(self.raw["splits"].get("unit", "snapshot"))

    @property
    def derived_from(self) -> str | None:
        """``family/name@version`` of the parent, for a derived dataset; ``None`` for a base dataset."""
        parent = self.recipe.parent if self.recipe is not None else None
        return parent.dataset if parent is not None else None

    @property
    def transform(self) -> dict[str, Any] | None:
        """``{"kind", "params", "seed"}`` of a derived dataset's transform; ``None`` for a base dataset."""
        if self.derived_from is None:
            return None
        params = plain(self.recipe.params)  # type: ignore[union-attr]
        return {"kind": params.pop("kind"), "params": params, "seed": self.recipe.seed}  # type: ignore[union-attr]

    @property
    def responsible_ai(self) -> Mapping[str, Any]:
        """The manifest's Croissant RAI fields (``rai:dataCollection``, ...), as written; empty for a manifest written
        before they were added (an import cached by an older tgbhub)."""
        return MappingProxyType({k: v for k, v in self.raw.items() if k.startswith("rai:")})

    @property
    def changelog(self) -> tuple[Mapping[str, Any], ...]:
        """The version history up to this version, oldest first (``version``, ``date``, ``summary``,
        ``invalidates``); empty for a manifest that predates changelogs."""
        return tuple(self.raw.get("changelog", ()))

    @property
    def tasks(self) -> tuple[Mapping[str, Any], ...]:
        """Every evaluation task the dataset declares; the first is :attr:`task`, the default one."""
        return tuple(self.raw.get("tasks", ())) or (self.task,)

    def task_named(self, name: str | None = None) -> Mapping[str, Any]:
        """The task called ``name`` (``None``: the default task).

        Raises:
            ManifestError: if the manifest declares no task of that name (the message lists the ones it has).
        """
        if name is None:
            return self.task
        for task in self.tasks:
            if task.get("name") == name:
                return task
        raise ManifestError(f"{self.name}@{self.version} declares no task {name!r}; its tasks are "
                            f"{', '.join(str(t.get('name')) for t in self.tasks)}")

    def file(self, name: str) -> FileEntry:
        """The file entry called ``name``.

        Raises:
            ManifestError: if the manifest declares no such file.
        """
        for entry in self.files:
            if entry.name == name:
                return entry
        raise ManifestError(f"{self.name}@{self.version} declares no file {name!r}; it has "
                            f"{', '.join(f.name for f in self.files)}")


def frozen(value: Any) -> Any:
    """A JSON value made read-only, as every parsed manifest holds it: mappings as ``MappingProxyType``, lists as
    tuples, all the way down (:func:`plain` turns it back)."""
    kind = type(value)
    if kind in _SCALARS:  # the common case first: an isinstance check against an ABC is slow
        return value
    if kind is dict or isinstance(value, Mapping):
        return MappingProxyType({k: frozen(v) for k, v in value.items()})
    if kind is list or isinstance(value, list):
        return tuple([frozen(v) for v in value])
    return value


_SCALARS = frozenset({str, int, float, bool, type(None)})


def plain(value: Any) -> Any:
    """A frozen manifest value turned back into plain dicts and lists (for JSON output and generators)."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def _require(doc: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in doc:
        raise ManifestError(f"{where} has no {key!r}; regenerate it with `python -m scripts.manifests NAME` from a "
                            "checkout")
    return doc[key]


def file_name(obj: Mapping[str, Any], where: str) -> str:
    """The name inside the dataset folder of one ``distribution`` object: its ``contentUrl`` where that is relative
    (a manifest as published), its ``name`` where the ``contentUrl`` is an absolute URL (a Croissant view,
    :mod:`tgbhub.hub.croissant`, which resolves the same files against a hub); either way the file verified
    against the object's sha256 is the same.

    Raises:
        ManifestError: if the object has no ``contentUrl``, or an absolute one and no ``name`` it ends with.
    """
    url = str(_require(obj, "contentUrl", where))
    if not _ABSOLUTE_URL.match(url):
        return url
    name = str(obj.get("name", ""))
    if not name or not urlsplit(url).path.endswith("/" + quote(name)):
        raise ManifestError(f"{where} file object {obj.get('@id')!r} has the absolute contentUrl {url!r}, which does "
                            f"not end with its name {name!r}; a view names each file as its manifest does")
    return name


_ABSOLUTE_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def parse_file(obj: Mapping[str, Any], digests: Mapping[str, Any], where: str) -> FileEntry:
    """The :class:`FileEntry` of one ``distribution`` object, with its content digest from ``digests`` (file name ->
    digest entry) where there is one; ``where`` names the document in messages. The file's name is its
    ``contentUrl``, or its ``name`` where the ``contentUrl`` is absolute (:func:`file_name`).

    Raises:
        ManifestError: if a field is missing or malformed (sha256, contentSize) or the path leaves the dataset folder.
    """
    name = file_name(obj, where)
    sha = _require(obj, "sha256", f"{where} file {name!r}")
    if not _SHA256.match(sha):
        raise ManifestError(f"{where} file {name!r} has sha256 {sha!r}, which is not 64 lower-case hex digits")
    size_text = _require(obj, "contentSize", f"{where} file {name!r}")
    size = _SIZE.match(str(size_text))
    if size is None:
        raise ManifestError(f"{where} file {name!r} has contentSize {size_text!r}; expected '<bytes> B'")
    digest = digests.get(name, {})
    if name.startswith("/") or ".." in name.split("/"):
        raise ManifestError(f"{where} file {name!r} is not a path inside the dataset folder")
    return FileEntry(name=name, sha256=sha, size=int(size.group(1)), encoding=obj.get("encodingFormat", ""),
                     digest=digest.get("value"), columns=tuple(digest.get("columns", ())),
                     column_sha256=MappingProxyType(dict(digest.get("arrays", {}))))


def _parse_parent(doc: Mapping[str, Any] | None, where: str) -> ParentRef | None:
    if doc is None:
        return None
    dataset = str(_require(doc, "dataset", f"{where} recipe parent"))
    name, at, version = dataset.partition("@")
    if not at or "/" not in name or not version:
        raise ManifestError(f"{where} recipe parent {dataset!r} is not 'family/name@version'; a derived dataset "
                            "pins its parent's exact version")
    digests = _require(doc, "digests", f"{where} recipe parent")
    if not digests or not all(isinstance(v, str) and _SHA256.match(v) for v in digests.values()):
        raise ManifestError(f"{where} recipe parent digests {dict(digests)!r} must map each parent file read to "
                            "its 64-hex content digest")
    return ParentRef(dataset=dataset, digests=MappingProxyType(dict(digests)))


def parse_manifest(doc: Mapping[str, Any]) -> Manifest:
    """Build a :class:`Manifest` from a Croissant JSON-LD document.

    Raises:
        ManifestError: if a required field is missing or malformed.
    """
    where = f"manifest {doc.get('name', '<unnamed>')!r}"
    conforms = doc.get("conformsTo")
    if conforms != CROISSANT_CONFORMS_TO and not (isinstance(conforms, list)
                                                  and conforms[:1] == [CROISSANT_CONFORMS_TO]):
        raise ManifestError(f"{where} conformsTo {conforms!r}; expected {list(MANIFEST_CONFORMS_TO)!r} (or "
                            f"{CROISSANT_CONFORMS_TO!r} alone, as manifests before the RAI fields say)")
    digests = {d["file"]: d for d in doc.get("digest", [])}
    files = tuple(parse_file(obj, digests, where) for obj in _require(doc, "distribution", where)
                  if VIEW_ONLY_KEY not in obj)
    recipe_doc = doc.get("recipe")
    recipe = None
    if recipe_doc is not None:
        recipe = Recipe(generator=_require(recipe_doc, "generator", f"{where} recipe"),
                        version=_require(recipe_doc, "version", f"{where} recipe"),
                        params=frozen(_require(recipe_doc, "params", f"{where} recipe")),
                        seed=int(_require(recipe_doc, "seed", f"{where} recipe")),
                        checks=frozen(recipe_doc.get("checks", {})),
                        parent=_parse_parent(recipe_doc.get("parent"), where))
    splits = {name: (int(lo), int(hi)) for name, (lo, hi) in _require(doc, "splits", where)["boundaries"].items()}
    tasks = doc.get("tasks")
    if tasks is not None and (not tasks or tasks[0] != _require(doc, "task", where)):
        raise ManifestError(f"{where} lists tasks whose first entry is not its default 'task'; regenerate it with "
                            "`python -m scripts.manifests` from a checkout")
    return Manifest(
        name=_require(doc, "name", where), version=str(_require(doc, "version", where)),
        description=doc.get("description", ""), license=doc.get("license", ""), files=files, recipe=recipe,
        graph=frozen(_require(doc, "graph", where)), splits=MappingProxyType(splits),
        task=frozen(_require(doc, "task", where)), stats=frozen(doc.get("stats", {})),
        known_discrepancies=tuple(frozen(d) for d in doc.get("knownDiscrepancies", [])), raw=frozen(doc))


def data_part(doc: Mapping[str, Any]) -> dict[str, Any]:
    """``doc`` without the keys outside the versioned data (:data:`METADATA_KEYS` and every ``rai:`` key)."""
    return {k: v for k, v in doc.items() if k not in METADATA_KEYS and not k.startswith("rai:")}


def same_data(published: bytes, planned: bytes) -> bool:
    """Whether two manifest texts describe the same dataset version and differ at most in metadata outside the
    versioned data (RAI fields, ``@context``, ``conformsTo``); ``False`` for text that is not a JSON object."""
    try:
        old, new = json.loads(published), json.loads(planned)
    except ValueError:
        return False
    return isinstance(old, dict) and isinstance(new, dict) and data_part(old) == data_part(new)


def read_manifest(path: str | os.PathLike[str]) -> Manifest:
    """Parse the manifest file at ``path``.

    Raises:
        ManifestError: if the file is not valid JSON or not a valid manifest.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            doc = json.load(handle)
    except json.JSONDecodeError as exc:
        raise ManifestError(f"manifest {os.fspath(path)!r} is not valid JSON ({exc}); restore it from git") from exc
    return parse_manifest(doc)


#: the ``conformsTo`` of every task document (tasks versioned on their own, :mod:`tgbhub.tasks.documents`)
TASK_DOCUMENT_FORMAT = TGBHUB_NAMESPACE + "task-document/1"
#: the folder, inside a dataset's manifest folder, that holds its task documents
TASKS_FOLDER = "tasks"


#: each family's index of the derived datasets it publishes without shipping their manifests:
#: ``<manifest root>/<family>/derived.json``
DERIVED_INDEX = "derived.json"
DERIVED_INDEX_FORMAT = TGBHUB_NAMESPACE + "derived-index/1"


@dataclass(frozen=True)
class DerivedEntry:
    """One published derived dataset version whose manifest is not shipped but derived on request from its parent's
    manifest and its transform: ``manifest_sha256`` is the sha256 of the published manifest's bytes (what a local
    derivation must reproduce exactly); ``bytes`` and ``num_rows`` are its files' total size and its row count, so a
    listing needs no build."""

    name: str
    version: str
    derived_from: str
    transform: Mapping[str, Any]
    manifest_sha256: str
    bytes: int
    num_rows: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "derivedFrom": self.derived_from,
                "transform": plain(self.transform), "manifestSha256": self.manifest_sha256, "bytes": self.bytes,
                "numRows": self.num_rows}


def derived_entry(document: Mapping[str, Any], text: str) -> DerivedEntry:
    """The index entry of a derived dataset's manifest ``document``, serialised as ``text`` (its published bytes).

    Raises:
        ManifestError: if the document is not a derived dataset's manifest.
    """
    manifest = parse_manifest(document)
    if manifest.derived_from is None:
        raise ManifestError(f"{manifest.name}@{manifest.version} is not derived (its recipe names no parent); only "
                            "derived datasets are indexed in derived.json")
    return DerivedEntry(name=manifest.name, version=manifest.version, derived_from=manifest.derived_from,
                        transform=frozen(manifest.transform), manifest_sha256=hashlib.sha256(text.encode()).hexdigest(),
                        bytes=sum(f.size for f in manifest.files), num_rows=int(manifest.stats.get("num_rows", 0)))


def derived_index_text(entries: Iterable[DerivedEntry]) -> str:
    """The text of a family's ``derived.json``: one entry per line, sorted by name and version (diff-friendly)."""
    rows = sorted(entries, key=lambda e: (e.name, e.version))
    lines = [json.dumps(e.to_json(), ensure_ascii=False, sort_keys=True) for e in rows]
    return (f'{{"format": {json.dumps(DERIVED_INDEX_FORMAT)},\n "datasets": [\n  ' + ",\n  ".join(lines)
            + "\n ]\n}\n")


def read_derived_index(path: str | os.PathLike[str]) -> list[DerivedEntry]:
    """The entries of a family's ``derived.json``.

    Raises:
        ManifestError: if the file is not a derived index or an entry lacks a field.
    """
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ManifestError(f"cannot read the derived index {path}: {exc}; reinstall tgbhub") from exc
    if not isinstance(doc, dict) or doc.get("format") != DERIVED_INDEX_FORMAT:
        raise ManifestError(f"{path} is not a derived index (format {DERIVED_INDEX_FORMAT!r}); reinstall tgbhub")
    try:
        return [DerivedEntry(name=e["name"], version=e["version"], derived_from=e["derivedFrom"],
                             transform=frozen(e["transform"]), manifest_sha256=e["manifestSha256"],
                             bytes=e["bytes"], num_rows=e["numRows"]) for e in doc["datasets"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ManifestError(f"{path}: an entry lacks {exc}; reinstall tgbhub") from exc


def require_kind(manifest: Manifest, kind: str, what: str) -> None:
    """Refuse ``what`` (a command or function, e.g. ``"export"``) on a dataset that is not of ``kind``.

    Raises:
        UnsupportedTaskError: naming ``what``, the kind it needs, the dataset and its kind.
    """
    actual = manifest.graph.get("kind")
    if actual != kind:
        raise UnsupportedTaskError(f"{what} works on {kind} datasets; {manifest.name}@{manifest.version} is a "
                                   f"{actual} dataset (`tgbhub list` shows each dataset's kind by family)")
