"""How a family of dataset versions is laid out in one Hugging Face dataset repo (pure: no I/O).

One repo per family (``<org>/<family>``); one folder per dataset holding its artifacts exactly as its manifest names
them, the manifest itself as ``croissant.json``, and per-split Parquet views for the ``datasets`` library; a card
``README.md`` whose YAML ``configs:`` lists every dataset and its splits.

Versions are git tags, of two kinds. A **dataset tag** ``<name>-v<semver>`` marks the commit where that dataset
version was first published; it is immutable and is what clients fetch. A **family tag** ``v<semver>`` marks the
first commit that published the family at that version; it is never moved either, so datasets added to the family
later are reachable through their own dataset tags (and on ``main``), never by rewriting the family tag.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tgbhub.hashing import git_blob_sha1
from tgbhub.manifest import Manifest

CARD = "README.md"
CROISSANT = "croissant.json"
GITATTRIBUTES = ".gitattributes"
#: binary artifacts go to LFS storage, as the Hub's default .gitattributes does
LFS_SUFFIXES = (".parquet", ".h5", ".hdf5", ".npy", ".npz", ".arrow")
_TAG = re.compile(r"v(\d+\.\d+\.\d+)")
_LICENSES = {"https://www.apache.org/licenses/LICENSE-2.0": "apache-2.0",
             "https://creativecommons.org/licenses/by/4.0/": "cc-by-4.0",
             "https://opensource.org/licenses/MIT": "mit"}


def tag_for(version: str) -> str:
    """The family tag of a version: ``1.0.0`` -> ``v1.0.0``."""
    return f"v{version}"


def dataset_tag(short_name: str, version: str) -> str:
    """The immutable tag of one dataset version: ``ce-256``, ``1.0.0`` -> ``ce-256-v1.0.0``.

    Git (and so the Hub) refuses ``~`` in a ref name, and derived datasets use it (``ce-64~shuffle-s0``); names never
    contain ``+``, which git and the Hub accept, so ``~`` -> ``+`` keeps tags one-to-one with dataset versions.
    """
    return f"{short_name.replace('~', '+')}-v{version}"


def version_of(tag: str) -> str | None:
    """The version a tag names, or ``None`` for tags that are not ``v<semver>``."""
    match = _TAG.fullmatch(tag)
    return match.group(1) if match else None


def repo_id(family: str, org: str) -> str:
    """The Hub repo that holds a family: ``<org>/<family>``."""
    return f"{org}/{family}"


def file_path(manifest: Manifest, name: str) -> str:
    """Where a dataset's file (an artifact, or ``croissant.json``) lives in its family repo."""
    return dataset_file(manifest.short_name, name)


def dataset_file(short_name: str, name: str) -> str:
    """Where file ``name`` of the dataset ``<family>/<short_name>`` lives in its family repo (before a manifest is
    at hand: a derived dataset's ``croissant.json``)."""
    return f"{short_name}/{name}"


def split_view_path(manifest: Manifest, split: str) -> str:
    """The per-split Parquet view the ``datasets`` library reads (``<name>/<split>-00000-of-00001.parquet``)."""
    return f"{manifest.short_name}/{split}-00000-of-00001.parquet"


#: the split unit per dataset kind for which a per-split Parquet view can be cut: edge streams by snapshot range,
#: trajectories by initial-condition range
VIEW_UNITS = {"temporal-graph": "snapshot", "trajectories": "initial-condition"}


def split_views(manifest: Manifest) -> dict[str, tuple[int, int]]:
    """The ranges (snapshots or initial conditions) to publish as per-split views; empty when the kind has none."""
    boundaries = manifest.raw.get("splits", {})
    unit = VIEW_UNITS.get(str(manifest.graph.get("kind")))
    if unit is None or boundaries.get("unit") != unit:
        return {}
    return {name: (int(lo), int(hi)) for name, (lo, hi) in manifest.splits.items()}


#: the per-split negatives files a dataset may carry (``<prefix>-<split>.parquet``, the ranking task's layout), each
#: published as a ``datasets`` config ``<name>-<prefix>`` with one split per file
NEGATIVES_PREFIXES = ("negatives", "window-negatives")


def extra_configs(manifest: Manifest) -> dict[str, dict[str, str]]:
    """The card's configs beside the split views: ``{config name: {split: file path in the repo}}``.

    One ``<name>-<prefix>`` config per :data:`NEGATIVES_PREFIXES` whose files the manifest lists for some of its
    splits, and ``<name>-features`` (split named after the file) when ``graph.node_feat`` names a features file.
    """
    names = {entry.name for entry in manifest.files}
    configs: dict[str, dict[str, str]] = {}
    for prefix in NEGATIVES_PREFIXES:
        files = {split: f"{prefix}-{split}.parquet" for split in manifest.splits}
        present = {split: file_path(manifest, name) for split, name in files.items() if name in names}
        if present:
            configs[f"{manifest.short_name}-{prefix}"] = present
    features = manifest.graph.get("node_feat")
    feature_file = features.get("file") if isinstance(features, Mapping) else None
    if isinstance(feature_file, str) and feature_file in names:
        split = re.sub(r"\W", "_", feature_file.split(".", 1)[0])
        configs[f"{manifest.short_name}-features"] = {split: file_path(manifest, feature_file)}
    return configs


def is_lfs(path: str) -> bool:
    return path.endswith(LFS_SUFFIXES)


def gitattributes() -> bytes:
    return "".join(f"*{suffix} filter=lfs diff=lfs merge=lfs -text\n" for suffix in LFS_SUFFIXES).encode()


def lfs_pointer(sha256: str, size: int) -> bytes:
    """The git-LFS pointer file that stands in the git tree for an LFS-stored file."""
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()


_POINTER = re.compile(rb"version https://git-lfs\.github\.com/spec/v1\noid sha256:([0-9a-f]{64})\nsize (\d+)\n")


def lfs_oid(blob: bytes) -> str | None:
    """The sha256 an LFS pointer file names, or ``None`` when ``blob`` is not a pointer (a regular file)."""
    fields = lfs_pointer_fields(blob)
    return fields[0] if fields else None


def lfs_pointer_fields(blob: bytes) -> tuple[str, int] | None:
    """``(sha256, size)`` of the object an LFS pointer file names, or ``None`` when ``blob`` is not a pointer."""
    match = _POINTER.fullmatch(blob)
    return (match.group(1).decode(), int(match.group(2))) if match else None


@dataclass(frozen=True)
class RepoFile:
    """One file of a planned repo tree: its bytes are either in memory (``data``) or in a verified local file."""

    path: str
    sha256: str
    size: int
    data: bytes | None = None
    local: Path | None = None

    def __post_init__(self) -> None:
        if (self.data is None) == (self.local is None):
            raise ValueError(f"RepoFile {self.path!r} needs exactly one of data= or local=")

    @property
    def lfs(self) -> bool:
        return is_lfs(self.path)

    def git_oid(self) -> str:
        """The blob id git stores for this path: of the LFS pointer for LFS files, of the content otherwise."""
        if self.lfs:
            return git_blob_sha1(lfs_pointer(self.sha256, self.size))
        return git_blob_sha1(self.read())

    def read(self) -> bytes:
        return self.data if self.data is not None else Path(self.local).read_bytes()  # type: ignore[arg-type]


@dataclass(frozen=True)
class DatasetRelease:
    """One dataset version as it lies in its family repo: every file of its folder, and nothing outside it."""

    manifest: Manifest
    files: tuple[RepoFile, ...]

    @property
    def folder(self) -> str:
        return self.manifest.short_name

    @property
    def tag(self) -> str:
        return dataset_tag(self.manifest.short_name, self.manifest.version)


@dataclass(frozen=True)
class RepoPlan:
    """What one publish adds to a family repo: dataset versions, each with its own tag, and the family tag."""

    repo_id: str
    family: str
    tag: str
    datasets: tuple[DatasetRelease, ...]
    message: str


@dataclass(frozen=True)
class Published:
    """What a publish did to one tag.

    ``status`` is ``"published"`` (the tag is new), ``"unchanged"`` (the tag already held exactly this content),
    :data:`METADATA_DIFFERS` (the tag holds this version's files and a ``croissant.json`` that differs only in metadata
    outside the versioned data, e.g. one written before the RAI fields; the tag keeps it, since tags never move) or,
    for a family tag that already existed, ``"kept"`` (it stays where it was: published tags never move).
    """

    repo_id: str
    tag: str
    commit: str
    status: str
    location: str


RemoteTree = Mapping[str, tuple[str | None, str]]
#: the status of a dataset version already published with the same data and other metadata (:class:`Published`)
METADATA_DIFFERS = "metadata-differs"


def in_folder(tree: RemoteTree, folder: str) -> dict[str, tuple[str | None, str]]:
    """The entries of ``tree`` below ``folder/``."""
    return {path: entry for path, entry in tree.items() if path.startswith(f"{folder}/")}


def differences(files: Sequence[RepoFile], remote: RemoteTree) -> list[str]:
    """Paths whose content differs between ``files`` and a remote tree, sorted; empty means identical.

    ``remote`` maps each path to ``(lfs_sha256 or None, git blob id)``: an LFS entry is compared by content sha256,
    a regular one by git blob id (so a remote that stored a file outside LFS still compares equal by content).
    """
    planned = {f.path: f for f in files}
    changed = sorted(set(planned) ^ set(remote))
    for path in sorted(set(planned) & set(remote)):
        lfs_sha, blob = remote[path]
        if not _same(planned[path], lfs_sha, blob):
            changed.append(path)
    return sorted(changed)


def _same(mine: RepoFile, lfs_sha: str | None, blob: str) -> bool:
    if lfs_sha is not None:
        return lfs_sha == mine.sha256
    # an LFS-suffixed file the remote kept as a regular blob compares by its content's blob id
    return blob == mine.git_oid() or (mine.lfs and blob == git_blob_sha1(mine.read()))


def dataset_card(family: str, manifests: Sequence[Manifest], repo: str) -> bytes:
    """The repo's ``README.md``: Hub card YAML (license, tags, one ``configs:`` entry per dataset with split views)
    and a usage note that promises the ``datasets`` library only the configs that exist."""
    licenses = sorted({_LICENSES.get(m.license, "other") for m in manifests})
    kinds = sorted({str(m.graph.get("kind")) for m in manifests})
    lines = ["---", f"license: {licenses[0] if len(licenses) == 1 else 'other'}",
             f"pretty_name: tgbhub {family}", "task_categories:", "- graph-ml", "tags:",
             *(f"- {kind}" for kind in kinds), "- tgbhub"]
    with_views = [m for m in manifests if split_views(m)]
    extras = {name: files for m in manifests for name, files in extra_configs(m).items()}
    lines += ["configs:"] if with_views or extras else []
    for index, manifest in enumerate(with_views):
        lines += [f"- config_name: {manifest.short_name}", "  data_files:"]
        for split in split_views(manifest):
            lines += [f"  - split: {split}", f"    path: {manifest.short_name}/{split}-*.parquet"]
        lines += ["  default: true"] if index == 0 else []
    for name, files in extras.items():
        lines += [f"- config_name: {name}", "  data_files:"]
        lines += [line for split, path in files.items() for line in (f"  - split: {split}", f"    path: {path}")]
    first = manifests[0]
    lines += ["---", "", f"# {family} (tgbhub)", "",
              f"{len(manifests)} dataset(s). Each folder holds the artifacts exactly as its `{CROISSANT}` (Croissant "
              "1.1, with sha256 per file) names them. Every dataset version has its own immutable git tag "
              f"`<name>-v<version>` (e.g. `{dataset_tag(first.short_name, first.version)}`); `v<version>` tags mark "
              "the family as first published at that version.", "", "```python",
              "import tgbhub  # verified, cached numpy views; set TGBHUB_ENDPOINT to this hub",
              f"ds = tgbhub.load_dataset(\"{first.name}@{first.version}\")"]
    if with_views:
        shown = with_views[0]
        without = [m.short_name for m in manifests if not split_views(m)]
        lines += ["", f"import datasets  # one Parquet view per split ({_view_columns(shown)})",
                  f"dd = datasets.load_dataset(\"{repo}\", \"{shown.short_name}\", "
                  f"revision=\"{dataset_tag(shown.short_name, shown.version)}\")"]
        lines += [f"# no `datasets` view (use tgbhub): {', '.join(without)}"] if without else []
    if extras:
        lines += ["", f"# more configs (negatives, features): {', '.join(extras)}"]
    lines += ["```", ""]
    return "\n".join(lines).encode()


def _view_columns(manifest: Manifest) -> str:
    if manifest.graph.get("kind") == "trajectories":
        return "columns trajectory, step, state"
    return "the edge columns"
