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
from pathlib import Path

from filelock import FileLock

from tgbhub.errors import PublishError, VersionConflictError
from tgbhub.hashing import file_sha256
from tgbhub.hub.layout import Published, RepoFile, RepoPlan, differences, lfs_pointer

_IDENTITY = {"GIT_AUTHOR_NAME": "tgbhub publisher", "GIT_AUTHOR_EMAIL": "publisher@tgbhub.invalid",
             "GIT_COMMITTER_NAME": "tgbhub publisher", "GIT_COMMITTER_EMAIL": "publisher@tgbhub.invalid"}
_EMPTY_OLD = "0" * 40


class GitTarget:
    """Writes family repos as git repositories under ``root`` (``root/datasets/<org>/<name>``)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def repo_dir(self, repo_id: str) -> Path:
        return self.root / "datasets" / repo_id

    def publish(self, plan: RepoPlan) -> Published:
        """Commit ``plan`` as the new head of ``main`` and tag it, unless the tag already holds exactly ``plan``.

        Raises:
            VersionConflictError: if the tag exists with different content.
            PublishError: if git is missing or a git command fails.
        """
        repo = self.repo_dir(plan.repo_id)
        self._init(repo)
        with FileLock(str(repo / ".git" / "tgbhub-publish.lock")):
            existing = self._rev(repo, f"refs/tags/{plan.tag}^{{commit}}")
            if existing is not None:
                return self._compare(repo, plan, existing)
            tree = self._write_tree(repo, plan)
            head = self._rev(repo, "refs/heads/main")
            if head is None or self._git(repo, "rev-parse", f"{head}^{{tree}}") != tree:
                commit = self._commit(repo, tree, head, plan.message)
                self._git(repo, "update-ref", "refs/heads/main", commit, head or _EMPTY_OLD)
            else:
                commit = head
            self._git(repo, "tag", "-a", plan.tag, "-m", plan.message, commit, env=_IDENTITY)
        return Published(plan.repo_id, plan.tag, commit, "published", str(repo))

    def remote_tree(self, repo: Path, rev: str) -> dict[str, tuple[str | None, str]]:
        """``path -> (lfs sha256 or None, blob id)`` of every file at ``rev``."""
        listing = {}
        for line in self._git(repo, "ls-tree", "-r", "--full-tree", rev).splitlines():
            meta, path = line.split("\t", 1)
            listing[path] = (None, meta.split()[2])
        return listing

    def _compare(self, repo: Path, plan: RepoPlan, commit: str) -> Published:
        changed = differences(plan, self.remote_tree(repo, commit))
        if changed:
            raise VersionConflictError(plan.repo_id, plan.tag, changed)
        return Published(plan.repo_id, plan.tag, commit, "unchanged", str(repo))

    def _init(self, repo: Path) -> None:
        if (repo / ".git").is_dir():
            return
        repo.mkdir(parents=True, exist_ok=True)
        self._git(repo, "init", "--quiet", "--initial-branch=main")

    def _write_tree(self, repo: Path, plan: RepoPlan) -> str:
        with tempfile.TemporaryDirectory(prefix="tgbhub-publish-") as scratch:
            sources = [self._blob_source(repo, f, Path(scratch)) for f in plan.files]
            # one git process hashes and stores every blob
            blobs = self._git(repo, "hash-object", "-w", "--stdin-paths", stdin="\n".join(sources) + "\n").split()
            entries = [f"100644 {blob}\t{f.path}" for blob, f in zip(blobs, plan.files)]
            env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
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
