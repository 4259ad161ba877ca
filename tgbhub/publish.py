"""``tgbhub publish``: put one version of a family on a hub, from verified local files.

Steps: select the family's manifests at the version -> make sure each dataset is in the verified cache (building it
if needed) and that its bytes are exactly the published sha256 -> lay each dataset's folder out (artifacts,
croissant.json, per-split views) -> hand the plan to the target, which adds the datasets that are new (one commit,
one tag per dataset version, the card regenerated), leaves identical ones alone and refuses changed ones.

Targets: ``hf`` (the Hugging Face Hub API), ``git:ROOT`` (git repos a local Hub server serves), ``mirror:DIR`` (a
static folder for any web server).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tgbhub import api, config
from tgbhub.cache import CacheEntry, stored_manifest_path
from tgbhub.columns import import_h5py
from tgbhub.errors import PublishError, VersionNotFoundError
from tgbhub.hashing import file_sha256
from tgbhub.hub.git import GitTarget
from tgbhub.hub.hfapi import HfTarget
from tgbhub.hub.layout import (
    CROISSANT,
    DatasetRelease,
    Published,
    RepoFile,
    RepoPlan,
    file_path,
    repo_id,
    split_view_path,
    split_views,
    tag_for,
)
from tgbhub.hub.mirror import MirrorTarget
from tgbhub.manifest import Manifest
from tgbhub.progress import track
from tgbhub.registry import Registry

Target = GitTarget | HfTarget | MirrorTarget


@dataclass(frozen=True)
class Release:
    """A dataset version ready to publish: its manifest, the manifest file's bytes and its verified files."""

    manifest: Manifest
    croissant: bytes
    entry: CacheEntry


def parse_target(spec: str, *, endpoint: str | None = None, token: str | None = None,
                 private: bool = False) -> Target:
    """``hf``, ``git:ROOT`` or ``mirror:DIR`` as a target object.

    Raises:
        PublishError: for an unknown target, or ``hf`` without an endpoint.
    """
    kind, _, where = spec.partition(":")
    if kind == "git" and where:
        return GitTarget(Path(where).expanduser())
    if kind == "mirror" and where:
        return MirrorTarget(Path(where).expanduser())
    if kind == "hf" and not where:
        chosen = config.hub_endpoint(endpoint) or "https://huggingface.co"
        return HfTarget(chosen, config.hub_token(token), private)
    raise PublishError(f"unknown publish target {spec!r}; use hf, git:ROOT or mirror:DIR "
                       "(e.g. --hub git:/srv/tgbhub-hub)")


def publish(family: str, version: str, target: Target, *, datasets: Sequence[str] | None = None,
            repo: str | None = None, cache_dir: str | os.PathLike[str] | None = None,
            registry: Registry | None = None) -> list[Published]:
    """Publish ``family`` at ``version`` (every dataset of it, or only ``datasets``) to ``target``.

    The repo is ``repo``, else ``<$TGBHUB_HUB_ORG or tgbhub>/<family>``. Hub targets (``hf``, ``git:``) give each
    dataset version its own immutable tag ``<name>-v<version>`` and keep every other dataset of the repo as it is, so
    a dataset can join a family whose ``v<version>`` tag already exists (that tag is never moved). Republishing
    identical content is a no-op. Returns one result per dataset tag, then one for the family tag.

    Raises:
        DatasetNotFoundError, VersionNotFoundError: if a dataset or the version is missing.
        PublishError: if local bytes differ from the manifests' sha256, or the target refuses.
        VersionConflictError: if a dataset version is already published with different content.
    """
    catalogue = registry or api.registry()
    root = config.cache_root(cache_dir)
    manifests = select(catalogue, family, version, datasets, root)
    releases = [_release(catalogue, m, root)
                for m in track(manifests, desc=f"verifying {family} {version}", unit="dataset")]
    if isinstance(target, MirrorTarget):
        return [target.publish(r.manifest, r.entry.files, r.croissant) for r in releases]
    with tempfile.TemporaryDirectory(prefix="tgbhub-views-") as views:
        plan = repo_plan(repo or repo_id(family, config.hub_org()), version, releases, Path(views))
        return target.publish(plan)


def select(catalogue: Registry, family: str, version: str, datasets: Sequence[str] | None,
           root: Path | None = None) -> list[Manifest]:
    """The manifests of ``family`` at ``version``: all of them, or the named ones (short or full names). A published
    derived dataset's manifest is derived on request into the cache at ``root`` (default: the configured one).

    Raises:
        DatasetNotFoundError: if a named dataset does not exist.
        VersionNotFoundError: if a named dataset lacks the version, or no dataset of the family has it.
    """
    names = ([n if "/" in n else f"{family}/{n}" for n in datasets] if datasets
             else [n for n in catalogue.names(family) if version in catalogue.versions(n)])
    if not names:
        raise VersionNotFoundError(family, version, sorted({v for n in catalogue.names(family)
                                                            for v in catalogue.versions(n)}))
    return [api.manifest_of(name, version, cache_dir=root, offline=True, catalogue=catalogue) for name in names]


def _release(catalogue: Registry, manifest: Manifest, root: Path) -> Release:
    _, entry = api.open_verified(manifest, root, api.Fetching(offline=True, sources=["build"]))  # parents first
    for item in manifest.files:
        actual = entry.sha256[item.name]  # recorded by the cache when it verified the file
        if actual != item.sha256:
            raise PublishError(
                f"{manifest.name}@{manifest.version}: the local {item.name} has sha256 {actual}, the manifest "
                f"publishes {item.sha256} (a rebuild by another writer version verifies by content digest but has "
                "other bytes). Publish from the environment that wrote the manifests, or regenerate the manifests "
                "under a new version.")
    derived = catalogue.derived(manifest.name, manifest.version) is not None
    croissant = (stored_manifest_path(root, manifest.name, manifest.version) if derived  # checked when derived
                 else catalogue.path(manifest.name, manifest.version))
    return Release(manifest, croissant.read_bytes(), entry)


def repo_plan(repo: str, version: str, releases: Sequence[Release], views: Path) -> RepoPlan:
    """Each dataset's folder (artifacts, croissant.json, split views) and the family tag, for a Hub target."""
    datasets = []
    for release in releases:
        manifest = release.manifest
        files = [RepoFile(file_path(manifest, f.name), f.sha256, f.size, local=release.entry.files[f.name])
                 for f in manifest.files]
        files.append(_in_memory(file_path(manifest, CROISSANT), release.croissant))
        files += _split_view_files(release, views)
        datasets.append(DatasetRelease(manifest, tuple(sorted(files, key=lambda f: f.path))))
    family = releases[0].manifest.family
    names = ", ".join(r.manifest.short_name for r in releases)
    return RepoPlan(repo, family, tag_for(version), tuple(datasets), f"tgbhub publish {family} {version}: {names}")


def _in_memory(path: str, data: bytes) -> RepoFile:
    return RepoFile(path, hashlib.sha256(data).hexdigest(), len(data), data=data)


def _split_view_files(release: Release, views: Path) -> list[RepoFile]:
    """One Parquet file per split for the ``datasets`` library, cut from the verified artifacts."""
    manifest = release.manifest
    ranges = split_views(manifest)
    if not ranges:
        return []
    folder = views / manifest.short_name
    folder.mkdir(parents=True, exist_ok=True)
    write = _VIEW_WRITERS[str(manifest.graph["kind"])]
    files = []
    for split, (lo, hi) in ranges.items():
        local = folder / f"{split}.parquet"
        write(release, lo, hi, local)
        files.append(RepoFile(split_view_path(manifest, split), file_sha256(local), local.stat().st_size,
                              local=local))
    return files


def _edge_view(release: Release, lo: int, hi: int, target: Path) -> None:
    """The edge rows whose snapshot lies in ``[lo, hi)``, every edge column as stored."""
    columns = {name: np.load(path, mmap_mode="r") for name, path in
               release.entry.columns[release.manifest.graph["edges_file"]].items()}
    first, last = np.searchsorted(columns["t"], [lo, hi])
    table = pa.table({name: np.ascontiguousarray(values[first:last]) for name, values in columns.items()})
    pq.write_table(table, target, compression="zstd", row_group_size=_ROW_GROUP)


def _trajectory_view(release: Release, lo: int, hi: int, target: Path) -> None:
    """Initial conditions ``[lo, hi)`` as rows ``trajectory, step, state`` (the float64 state vector, exact).

    Written one row group per batch of trajectories of at most ``_VIEW_BYTES``, so a 512 MB instance is never read
    into memory whole.
    """
    graph = release.manifest.graph
    h5py = import_h5py("publishing trajectory datasets")
    width = int(graph["num_nodes"])
    steps = int(graph["num_snapshots"])
    schema = pa.schema([("trajectory", pa.int32()), ("step", pa.int32()),
                        ("state", pa.list_(pa.float64(), width))])
    batch = max(1, _VIEW_BYTES // (steps * width * 8))
    path = release.entry.files[graph["trajectories_file"]]
    with h5py.File(path, "r") as handle, pq.ParquetWriter(target, schema, compression="zstd") as writer:
        states = handle[graph["state_array"]]
        for start in range(lo, hi, batch):
            stop = min(start + batch, hi)
            block = np.ascontiguousarray(states[start:stop], dtype=np.float64).reshape(-1)
            count = (stop - start) * steps
            writer.write_table(pa.table({
                "trajectory": np.repeat(np.arange(start, stop, dtype=np.int32), steps),
                "step": np.tile(np.arange(steps, dtype=np.int32), stop - start),
                "state": pa.FixedSizeListArray.from_arrays(pa.array(block), width)}, schema=schema),
                row_group_size=count)


_ROW_GROUP = 1 << 20
_VIEW_BYTES = 64 << 20
#: how each dataset kind's verified artifacts become a split's rows (the kinds layout.VIEW_UNITS lists)
_VIEW_WRITERS = {"temporal-graph": _edge_view, "trajectories": _trajectory_view}
