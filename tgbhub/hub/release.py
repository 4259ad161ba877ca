"""How a publish changes a family repo, the same for every Hub-like target (``git:`` and ``hf``).

A target opens a :class:`RepoSession` (refs, trees, small reads, one commit on ``main``, tags) and :func:`apply`
decides what to write:

* a dataset version whose tag exists is compared with what is planned: identical is a no-op, different is refused,
  except a ``croissant.json`` that differs only in metadata outside the versioned data (RAI fields, ``@context``,
  ``conformsTo``: :func:`tgbhub.manifest.same_data`), which the tag keeps as published (``metadata-differs``);
* a dataset version published before dataset tags existed (its family tag holds it) gets its own tag on that commit;
* every other dataset version lands in one commit on ``main`` that replaces only its own folder (datasets already in
  the repo keep their files and versions), regenerates the card for everything now on ``main``, and gets its tag;
* the family tag is created once and never moved.

On a target with a web address (the Hub API), each dataset's folder also gets its Croissant view
(:mod:`tgbhub.hub.croissant`), derived from its ``croissant.json`` with URLs absolute against that Hub; it is not
versioned data, so a tag whose view differs (or that predates views) keeps what it holds, like a manifest that
differs only in metadata.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from tgbhub.errors import PublishError, VersionConflictError
from tgbhub.hub.croissant import VIEW, web_location, with_view
from tgbhub.hub.layout import (
    CARD,
    CROISSANT,
    GITATTRIBUTES,
    METADATA_DIFFERS,
    DatasetRelease,
    Published,
    RepoFile,
    RepoPlan,
    dataset_card,
    differences,
    gitattributes,
    in_folder,
)
from tgbhub.manifest import Manifest, parse_manifest, same_data


class RepoSession(Protocol):
    """One family repo on a target, opened for publishing (the target holds any lock for the session's lifetime)."""

    location: str

    def refs(self) -> tuple[dict[str, str], str | None]:
        """``({tag: commit id}, head commit of main or None)``."""

    def tree(self, commit: str) -> dict[str, tuple[str | None, str]]:
        """``path -> (lfs sha256 or None, git blob id)`` of every file at ``commit``."""

    def read(self, commit: str, path: str) -> bytes:
        """The bytes of a small (non-LFS) file at ``commit``."""

    def commit(self, parent: str | None, files: Sequence[RepoFile], deleted: Sequence[str], message: str) -> str:
        """Commit ``parent``'s tree with ``files`` written and ``deleted`` removed as the new head of ``main``, only
        if ``main`` is still at ``parent``; return the commit id."""

    def tag(self, name: str, commit: str, message: str) -> None:
        """Create tag ``name`` at ``commit``."""

    def download(self, commit: str, path: str, folder: Path) -> Path:
        """The file ``path`` at ``commit`` (LFS content, not its pointer) copied to ``folder/path``; its path."""


def apply(session: RepoSession, plan: RepoPlan) -> list[Published]:
    """Publish ``plan`` through ``session``: one result per dataset tag, then one for the family tag.

    Raises:
        VersionConflictError: if a dataset version is already published with different content.
        PublishError: if the target refuses a write, or a ``croissant.json`` already in the repo is not a valid
            manifest.
        ManifestError: if a planned ``croissant.json`` is not a valid manifest (its view cannot be derived).
    """
    location = web_location(session.location)
    if location is not None:
        plan = dataclasses.replace(plan, datasets=tuple(with_view(release, location) for release in plan.datasets))
    tags, head = session.refs()
    family_commit = tags.get(plan.tag)
    results: list[Published] = []
    pending: list[DatasetRelease] = []
    for release in plan.datasets:
        if release.tag in tags:
            status = _require_same(session, plan, release, release.tag, tags[release.tag])
            results.append(Published(plan.repo_id, release.tag, tags[release.tag], status, session.location))
        elif family_commit is not None and _holds(session, family_commit, release):
            # published before dataset tags existed: the family tag's commit is this version, so tag it there
            _require_same(session, plan, release, plan.tag, family_commit)
            session.tag(release.tag, family_commit, plan.message)
            results.append(Published(plan.repo_id, release.tag, family_commit, "published", session.location))
        else:
            pending.append(release)
    commit = _commit(session, plan, pending, head) if pending else head
    for release in pending:
        session.tag(release.tag, commit, plan.message)  # type: ignore[arg-type]
        results.append(Published(plan.repo_id, release.tag, str(commit), "published", session.location))
    if family_commit is not None:
        results.append(Published(plan.repo_id, plan.tag, family_commit, "kept", session.location))
    elif commit is not None:
        session.tag(plan.tag, commit, plan.message)
        results.append(Published(plan.repo_id, plan.tag, commit, "published", session.location))
    return results


def _require_same(session: RepoSession, plan: RepoPlan, release: DatasetRelease, tag: str, commit: str) -> str:
    """``"unchanged"`` if ``commit`` holds exactly the planned folder; ``"metadata-differs"`` if only its
    ``croissant.json`` differs, and only outside the versioned data (a manifest published before the RAI fields:
    the files and every data-bearing key are the same, and a published tag never moves, so it stays as it is), or
    only its Croissant view (derived, not versioned: one published before views, or by another view version).

    Raises:
        VersionConflictError: if any file, or any data-bearing key of the manifest, differs.
    """
    everything = differences(release.files, in_folder(session.tree(commit), release.folder))
    changed = [path for path in everything if path != f"{release.folder}/{VIEW}"]
    if not everything:
        return "unchanged"
    if not changed:
        return METADATA_DIFFERS
    croissant = f"{release.folder}/{CROISSANT}"
    if changed == [croissant]:
        planned = next(f for f in release.files if f.path == croissant).read()
        if same_data(session.read(commit, croissant), planned):
            return METADATA_DIFFERS
    raise VersionConflictError(plan.repo_id, f"{release.manifest.name}@{release.manifest.version} (tag {tag})",
                               changed)


def _holds(session: RepoSession, commit: str, release: DatasetRelease) -> bool:
    """Whether ``commit`` holds this dataset's folder at this version (as its croissant.json says)."""
    path = f"{release.folder}/{CROISSANT}"
    if path not in session.tree(commit):
        return False
    return _manifest(session, commit, path).version == release.manifest.version


def _commit(session: RepoSession, plan: RepoPlan, pending: Sequence[DatasetRelease], head: str | None) -> str:
    """One commit on ``main``: the pending datasets' folders replaced, every other folder kept, a fresh card."""
    tree = session.tree(head) if head is not None else {}
    folders = {release.folder for release in pending}
    kept = sorted({path.split("/", 1)[0] for path in tree if "/" in path} - folders)
    manifests = [_manifest(session, head, f"{folder}/{CROISSANT}") for folder in kept  # type: ignore[arg-type]
                 if f"{folder}/{CROISSANT}" in tree]
    manifests += [release.manifest for release in pending]
    manifests.sort(key=lambda m: m.short_name)
    files = [f for release in pending for f in release.files]
    files += [_in_memory(CARD, dataset_card(plan.family, manifests, plan.repo_id)),
              _in_memory(GITATTRIBUTES, gitattributes())]
    written = {f.path for f in files}
    deleted = sorted(p for p in tree if p.split("/", 1)[0] in folders and p not in written)
    changed = set(differences(files, {p: e for p, e in tree.items() if p in written}))
    to_write = [f for f in files if f.path in changed]
    if head is not None and not to_write and not deleted:
        return head
    return session.commit(head, to_write, deleted, plan.message)


def _manifest(session: RepoSession, commit: str, path: str) -> Manifest:
    data = session.read(commit, path)
    try:
        return parse_manifest(json.loads(data))
    except ValueError as exc:  # ManifestError and JSON errors are ValueErrors
        raise PublishError(f"the repo's {path} at {commit[:12]} is not a valid tgbhub manifest ({exc}); the card "
                           "cannot list it. Restore that file from the dataset's manifest, then publish "
                           "again.") from exc


def _in_memory(path: str, data: bytes) -> RepoFile:
    return RepoFile(path, hashlib.sha256(data).hexdigest(), len(data), data=data)


def commit_files(session: RepoSession, files: Sequence[RepoFile], message: str) -> str | None:
    """Write ``files`` onto ``main`` in one commit that keeps every other file of the repo (any repo, not only a
    family's: submissions and results use it); return the new head, or the old one when every file is already there
    with the same content (nothing is committed). A repo's first commit also gets the Hub's ``.gitattributes``, so
    its Parquet files are LFS files on every target.

    Raises:
        PublishError: if the target refuses the write (e.g. ``main`` moved meanwhile: run again).
    """
    _, head = session.refs()
    tree = session.tree(head) if head is not None else {}
    planned = list(files) + ([_in_memory(GITATTRIBUTES, gitattributes())] if GITATTRIBUTES not in tree else [])
    paths = {f.path for f in planned}
    changed = set(differences(planned, {p: e for p, e in tree.items() if p in paths}))
    to_write = [f for f in planned if f.path in changed]
    if not to_write:
        return head
    return session.commit(head, to_write, [], message)
