"""How a family of dataset versions is laid out in one Hugging Face dataset repo (pure: no I/O).

One repo per family (``<org>/<family>``); one folder per dataset holding its artifacts exactly as its manifest names
them, the manifest itself as ``croissant.json``, and per-split Parquet views for the ``datasets`` library; a card
``README.md`` whose YAML ``configs:`` lists every dataset and its splits; versions are git tags ``v<semver>``.
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
    """The git tag of a dataset version: ``1.0.0`` -> ``v1.0.0``."""
    return f"v{version}"


def version_of(tag: str) -> str | None:
    """The version a tag names, or ``None`` for tags that are not ``v<semver>``."""
    match = _TAG.fullmatch(tag)
    return match.group(1) if match else None


def repo_id(family: str, org: str) -> str:
    """The Hub repo that holds a family: ``<org>/<family>``."""
    return f"{org}/{family}"


def file_path(manifest: Manifest, name: str) -> str:
    """Where a dataset's file (an artifact, or ``croissant.json``) lives in its family repo."""
    return f"{manifest.short_name}/{name}"


def split_view_path(manifest: Manifest, split: str) -> str:
    """The per-split Parquet view the ``datasets`` library reads (``<name>/<split>-00000-of-00001.parquet``)."""
    return f"{manifest.short_name}/{split}-00000-of-00001.parquet"


def split_views(manifest: Manifest) -> dict[str, tuple[int, int]]:
    """The snapshot ranges to publish as per-split views: only for edge streams split by snapshot, else none."""
    boundaries = manifest.raw.get("splits", {})
    if manifest.graph.get("kind") != "temporal-graph" or boundaries.get("unit") != "snapshot":
        return {}
    return {name: (int(lo), int(hi)) for name, (lo, hi) in manifest.splits.items()}


def is_lfs(path: str) -> bool:
    return path.endswith(LFS_SUFFIXES)


def gitattributes() -> bytes:
    return "".join(f"*{suffix} filter=lfs diff=lfs merge=lfs -text\n" for suffix in LFS_SUFFIXES).encode()


def lfs_pointer(sha256: str, size: int) -> bytes:
    """The git-LFS pointer file that stands in the git tree for an LFS-stored file."""
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()


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
class RepoPlan:
    """Everything one version tag of a family repo must hold, and nothing else."""

    repo_id: str
    tag: str
    files: tuple[RepoFile, ...]
    message: str

    def by_path(self) -> dict[str, RepoFile]:
        return {f.path: f for f in self.files}


@dataclass(frozen=True)
class Published:
    """What a publish did: ``status`` is ``"published"`` (new commit and tag) or ``"unchanged"`` (already there)."""

    repo_id: str
    tag: str
    commit: str
    status: str
    location: str


def differences(plan: RepoPlan, remote: Mapping[str, tuple[str | None, str]]) -> list[str]:
    """Paths whose content differs between ``plan`` and a remote tree, sorted; empty means identical.

    ``remote`` maps each path to ``(lfs_sha256 or None, git blob id)``: an LFS entry is compared by content sha256,
    a regular one by git blob id (so a remote that stored a file outside LFS still compares equal by content).
    """
    planned = plan.by_path()
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
    """The repo's ``README.md``: Hub card YAML (license, tags, one ``configs:`` entry per dataset) and a usage note."""
    licenses = sorted({_LICENSES.get(m.license, "other") for m in manifests})
    versions = sorted({m.version for m in manifests})
    lines = ["---", f"license: {licenses[0] if len(licenses) == 1 else 'other'}",
             f"pretty_name: tgbhub {family}", "task_categories:", "- graph-ml", "tags:", "- temporal-graph",
             "- tgbhub"]
    with_views = [m for m in manifests if split_views(m)]
    lines += ["configs:"] if with_views else []
    first = True
    for manifest in with_views:
        views = split_views(manifest)
        lines += [f"- config_name: {manifest.short_name}", "  data_files:"]
        for split in views:
            lines += [f"  - split: {split}", f"    path: {manifest.short_name}/{split}-*.parquet"]
        if first:
            lines.append("  default: true")
            first = False
    lines += ["---", "", f"# {family} (tgbhub)", "",
              f"{len(manifests)} dataset(s), version(s) {', '.join(versions)}. Each folder holds the artifacts "
              f"exactly as its `{CROISSANT}` (Croissant 1.1, with sha256 per file) names them, plus one Parquet "
              "view per split for the `datasets` library.", "", "```python",
              "import tgbhub  # verified, cached numpy views; set TGBHUB_ENDPOINT to this hub",
              f"ds = tgbhub.load_dataset(\"{manifests[0].name}@{manifests[0].version}\")", "",
              "import datasets  # the per-split views",
              f"dd = datasets.load_dataset(\"{repo}\", \"{manifests[0].short_name}\", "
              f"revision=\"{tag_for(manifests[0].version)}\")", "```", ""]
    return "\n".join(lines).encode()
