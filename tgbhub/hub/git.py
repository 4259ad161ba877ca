"""Publish target ``git:ROOT``: the family repo as git commits and tags under ``ROOT/datasets/<org>/<name>``.

That is the layout a local Hub server (olah's mirror mode, ``tgbhub hub serve``) serves. Large files are stored the
way the Hub stores them: a git-LFS pointer in the tree and the bytes under ``.git/lfs/objects``. Only git plumbing is
used (a private index, ``commit-tree``, compare-and-swap ``update-ref``), so no working tree is ever checked out and
a concurrent reader never sees a half-written version.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock

from tgbhub.errors import PublishError
from tgbhub.hashing import file_sha256
from tgbhub.hub.layout import Published, RepoFile, RepoPlan, lfs_oid, lfs_pointer
from tgbhub.hub.release import apply

_IDENTITY = {"GIT_AUTHOR_NAME": "tgbhub publisher", "GIT_AUTHOR_EMAIL": "publisher@tgbhub.invalid",
             "GIT_COMMITTER_NAME": "tgbhub publisher", "GIT_COMMITTER_EMAIL": "publisher@tgbhub.invalid"}
_EMPTY_OLD = "0" * 40


class GitTarget:
    """Writes family repos as git repositories under ``root`` (``root/datasets/<org>/<name>``)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def repo_dir(self, repo_id: str) -> Path:
        return self.root / "datasets" / repo_id

    def publish(self, plan: RepoPlan) -> list[Published]:
        """Add the plan's dataset versions to the repo (see :func:`tgbhub.hub.release.apply`), under a file lock.

        Raises:
            VersionConflictError: if a dataset version is already published with different content.
            PublishError: if git is missing or a git command fails.
        """
        repo = self.repo_dir(plan.repo_id)
        self._init(repo)
        with FileLock(str(repo / ".git" / "tgbhub-publish.lock")):
            return apply(_GitSession(self, repo), plan)

    @contextmanager
    def open_repo(self, repo_id: str, *, write: bool) -> Iterator[_GitSession | None]:
        """A session on any repo ``repo_id`` (submissions, results: :func:`~tgbhub.hub.release.commit_files` writes
        to it); ``write`` creates a missing repo and holds the publish lock while the session lasts, a reader gets
        ``None`` for a missing repo and takes no lock (a commit is never seen half-written).

        Raises:
            PublishError: if git is missing or a git command fails.
        """
        repo = self.repo_dir(repo_id)
        if not write:
            yield _GitSession(self, repo) if (repo / ".git").is_dir() else None
            return
        self._init(repo)
        with FileLock(str(repo / ".git" / "tgbhub-publish.lock")):
            yield _GitSession(self, repo)

    def remote_tree(self, repo: Path, rev: str) -> dict[str, tuple[str | None, str]]:
        """``path -> (lfs sha256 or None, blob id)`` of every file at ``rev``."""
        listing: dict[str, tuple[str | None, str]] = {}
        for line in self._git(repo, "ls-tree", "-r", "--full-tree", rev).splitlines():
            meta, path = line.split("\t", 1)
            listing[path] = (None, meta.split()[2])
        return listing

    def commit_files(self, repo: Path, parent: str | None, files: Sequence[RepoFile], deleted: Sequence[str],
                     message: str) -> str:
        """Commit ``parent``'s tree plus ``files`` minus ``deleted`` and move ``main`` to it, only from ``parent``."""
        tree = self._write_tree(repo, parent, files, deleted)
        commit = self._commit(repo, tree, parent, message)
        self._git(repo, "update-ref", "refs/heads/main", commit, parent or _EMPTY_OLD)
        return commit

    def read_blob(self, repo: Path, rev: str, path: str) -> bytes:
        return self._run_bytes(repo, ["cat-file", "blob", f"{rev}:{path}"])

    def _init(self, repo: Path) -> None:
        if (repo / ".git").is_dir():
            return
        repo.mkdir(parents=True, exist_ok=True)
        self._git(repo, "init", "--quiet", "--initial-branch=main")

    def _write_tree(self, repo: Path, parent: str | None, files: Sequence[RepoFile], deleted: Sequence[str]) -> str:
        with tempfile.TemporaryDirectory(prefix="tgbhub-publish-") as scratch:
            env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
            if parent is not None:
                self._git(repo, "read-tree", parent, env=env)
            if deleted:
                self._git(repo, "update-index", "--force-remove", "-z", "--stdin", stdin="\0".join(deleted) + "\0",
                          env=env)
            if files:
                sources = [self._blob_source(repo, f, Path(scratch)) for f in files]
                # one git process hashes and stores every blob
                blobs = self._git(repo, "hash-object", "-w", "--stdin-paths",
                                  stdin="\n".join(sources) + "\n").split()
                entries = [f"100644 {blob}\t{f.path}" for blob, f in zip(blobs, files, strict=True)]
                self._git(repo, "update-index", "--add", "--index-info", stdin="\n".join(entries) + "\n", env=env)
            return self._git(repo, "write-tree", env=env)

    def _blob_source(self, repo: Path, file: RepoFile, scratch: Path) -> str:
        """The path whose bytes become this file's blob: its LFS pointer (after storing the LFS object) or itself."""
        if file.lfs:
            self._store_lfs(repo, file)
            content = lfs_pointer(file.sha256, file.size)
        elif file.local is not None:
            return str(file.local)
        else:
            content = file.read()
        staged = scratch / uuid.uuid4().hex
        staged.write_bytes(content)
        return str(staged)

    def _store_lfs(self, repo: Path, file: RepoFile) -> None:
        objects = repo / ".git" / "lfs" / "objects" / file.sha256[:2] / file.sha256[2:4]
        final = objects / file.sha256
        if final.exists() and final.stat().st_size == file.size:
            return
        objects.mkdir(parents=True, exist_ok=True)
        temp = objects / f".{file.sha256}.{os.getpid()}.{uuid.uuid4().hex}.tmp"
        try:
            if file.local is not None:
                shutil.copyfile(file.local, temp)
            else:
                temp.write_bytes(file.read())
            actual = file_sha256(temp)
            if actual != file.sha256:
                raise PublishError(f"{file.path}: the bytes to publish have sha256 {actual}, the plan says "
                                   f"{file.sha256}; the source file changed while publishing. Publish again.")
            os.replace(temp, final)
        finally:
            temp.unlink(missing_ok=True)

    def _commit(self, repo: Path, tree: str, parent: str | None, message: str) -> str:
        parents = ["-p", parent] if parent else []
        return self._git(repo, "commit-tree", tree, *parents, "-m", message, env=_IDENTITY)

    def _run_bytes(self, repo: Path, args: list[str]) -> bytes:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
        if done.returncode != 0:
            raise PublishError(f"`git {' '.join(args)}` in {repo} failed ({done.returncode}): "
                               f"{done.stderr.decode(errors='replace').strip()}. Check that the repo is intact.")
        return done.stdout

    def _rev(self, repo: Path, ref: str) -> str | None:
        done = self._run(repo, ["rev-parse", "--verify", "--quiet", ref], check=False)
        return done.stdout.strip() or None

    def _git(self, repo: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> str:
        return self._run(repo, list(args), stdin=stdin, env=env).stdout.strip()

    def _run(self, repo: Path, args: list[str], *, stdin: str | None = None, env: dict[str, str] | None = None,
             check: bool = True) -> subprocess.CompletedProcess[str]:
        command = ["git", "-C", str(repo), *args]
        try:
            done = subprocess.run(command, input=stdin, capture_output=True, text=True,
                                  env={**os.environ, **(env or {})}, check=False)
        except FileNotFoundError as exc:
            raise PublishError("git is not installed; the git: target needs it (e.g. apt-get install git)") from exc
        if check and done.returncode != 0:
            raise PublishError(f"`{' '.join(command)}` failed ({done.returncode}): {done.stderr.strip()}. "
                               f"Check that {repo} is a git repository tgbhub may write to.")
        return done


class _GitSession:
    """A :class:`~tgbhub.hub.release.RepoSession` over one git repo (the caller holds the publish lock)."""

    def __init__(self, target: GitTarget, repo: Path) -> None:
        self._target = target
        self._repo = repo
        self.location = str(repo)

    def refs(self) -> tuple[dict[str, str], str | None]:
        # %(*objectname) is what an annotated tag points at; it is empty for a lightweight tag
        listing = self._target._git(self._repo, "for-each-ref",
                                    "--format=%(refname:strip=2) %(objectname) %(*objectname)", "refs/tags")
        tags = {}
        for line in listing.splitlines():
            name, direct, *peeled = line.split()
            tags[name] = peeled[0] if peeled else direct
        return tags, self._target._rev(self._repo, "refs/heads/main")

    def tree(self, commit: str) -> dict[str, tuple[str | None, str]]:
        return self._target.remote_tree(self._repo, commit)

    def read(self, commit: str, path: str) -> bytes:
        return self._target.read_blob(self._repo, commit, path)

    def commit(self, parent: str | None, files: Sequence[RepoFile], deleted: Sequence[str], message: str) -> str:
        return self._target.commit_files(self._repo, parent, files, deleted, message)

    def tag(self, name: str, commit: str, message: str) -> None:
        self._target._git(self._repo, "tag", "-a", name, "-m", message, commit, env=_IDENTITY)

    def download(self, commit: str, path: str, folder: Path) -> Path:
        """``path`` at ``commit`` into ``folder/path``: an LFS file's object (checked against its pointer's sha256),
        any other file's blob.

        Raises:
            PublishError: if the file is missing, or its LFS object is missing or does not match its pointer.
        """
        data = self.read(commit, path)
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        sha = lfs_oid(data)
        if sha is None:
            target.write_bytes(data)
            return target
        stored = self._repo / ".git" / "lfs" / "objects" / sha[:2] / sha[2:4] / sha
        if not stored.is_file() or file_sha256(stored) != sha:
            raise PublishError(f"{self._repo}: the LFS object of {path} at {commit[:12]} (sha256 {sha}) is missing "
                               "or damaged; restore .git/lfs/objects from a backup, or submit the file again")
        shutil.copyfile(stored, target)
        return target
