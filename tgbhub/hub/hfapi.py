"""Publish target ``hf``: the Hugging Face Hub API through ``huggingface_hub`` (one atomic commit, then tags)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from tgbhub.errors import PublishError, TgbhubError
from tgbhub.hub.layout import Published, RepoFile, RepoPlan
from tgbhub.hub.release import apply

if TYPE_CHECKING:
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi


class HfTarget:
    """Publishes a repo plan to a Hub at ``endpoint`` (the public Hub or any server speaking its API)."""

    def __init__(self, endpoint: str, token: str | None, private: bool = False) -> None:
        self.endpoint = endpoint
        self.token = token
        self.private = private

    def publish(self, plan: RepoPlan) -> list[Published]:
        """Create the repo if needed and add the plan's dataset versions (see :func:`tgbhub.hub.release.apply`).

        New files go into one atomic commit on ``main`` that names its parent, so a concurrent writer makes the Hub
        refuse it rather than interleave.

        Raises:
            VersionConflictError: if a dataset version is already published with different content.
            PublishError: if the Hub refuses a call (authentication, permissions, conflicts) or cannot be reached.
        """
        from huggingface_hub import HfApi  # deferred: the client side never needs the write API

        api = HfApi(endpoint=self.endpoint, token=self.token)
        try:
            api.create_repo(plan.repo_id, repo_type="dataset", exist_ok=True, private=self.private)
            with tempfile.TemporaryDirectory(prefix="tgbhub-hf-read-") as scratch:
                session = _HfSession(api, plan.repo_id, f"{self.endpoint}/datasets/{plan.repo_id}", Path(scratch))
                return apply(session, plan)
        except TgbhubError:
            raise
        except Exception as exc:  # huggingface_hub raises HTTP, validation and connection errors of many types
            raise _refused(self.endpoint, f"publishing {plan.repo_id} {plan.tag}", exc) from exc


    @contextmanager
    def open_repo(self, repo_id: str, *, write: bool) -> Iterator[_HfSession | None]:
        """A session on any dataset repo ``repo_id`` (submissions, results); ``write`` creates a missing repo, a
        reader gets ``None`` for a missing one. Commits name their parent, so a concurrent writer is refused.

        Raises:
            PublishError: if the Hub refuses a call or cannot be reached (calls inside the session included).
        """
        from huggingface_hub import HfApi
        from huggingface_hub.errors import RepositoryNotFoundError

        api = HfApi(endpoint=self.endpoint, token=self.token)
        try:
            if write:
                api.create_repo(repo_id, repo_type="dataset", exist_ok=True, private=self.private)
            else:
                try:  # refs, not repo_exists: olah answers a repo's info without a revision with 401
                    api.list_repo_refs(repo_id, repo_type="dataset")
                except RepositoryNotFoundError:
                    yield None
                    return
            with tempfile.TemporaryDirectory(prefix="tgbhub-hf-read-") as scratch:
                yield _HfSession(api, repo_id, f"{self.endpoint}/datasets/{repo_id}", Path(scratch))
        except TgbhubError:
            raise
        except Exception as exc:  # huggingface_hub raises HTTP, validation and connection errors of many types
            raise _refused(self.endpoint, f"a call on {repo_id}", exc) from exc


def _refused(endpoint: str, what: str, exc: Exception) -> PublishError:
    """The error for a Hub call that failed: which Hub, what was asked, what it answered, and what to check."""
    return PublishError(f"the Hub at {endpoint} refused {what}: {type(exc).__name__}: {exc}. Check the endpoint, "
                        "that the token (--token, $TGBHUB_TOKEN or $HF_TOKEN) may write to the repo, and retry.")


class _HfSession:
    """A :class:`~tgbhub.hub.release.RepoSession` over one dataset repo on a Hub."""

    def __init__(self, api: HfApi, repo_id: str, location: str, scratch: Path) -> None:
        self._api = api
        self._repo_id = repo_id
        self._scratch = scratch
        self.location = location

    def refs(self) -> tuple[dict[str, str], str | None]:
        refs = self._api.list_repo_refs(self._repo_id, repo_type="dataset")
        head = next((ref.target_commit for ref in refs.branches if ref.name == "main"), None)
        return {ref.name: ref.target_commit for ref in refs.tags}, head

    def tree(self, commit: str) -> dict[str, tuple[str | None, str]]:
        from huggingface_hub.hf_api import RepoFile as HubFile

        listing = {}
        for item in self._api.list_repo_tree(self._repo_id, revision=commit, recursive=True, repo_type="dataset"):
            if isinstance(item, HubFile):
                listing[item.path] = (item.lfs.sha256 if item.lfs is not None else None, item.blob_id)
        return listing

    def read(self, commit: str, path: str) -> bytes:
        local = self._api.hf_hub_download(self._repo_id, path, repo_type="dataset", revision=commit,
                                          cache_dir=self._scratch)
        return Path(local).read_bytes()

    def commit(self, parent: str | None, files: Sequence[RepoFile], deleted: Sequence[str], message: str) -> str:
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        operations: list[CommitOperationAdd | CommitOperationDelete] = [
            CommitOperationAdd(path_in_repo=f.path, path_or_fileobj=f.data if f.data is not None else str(f.local))
            for f in files]
        operations += [CommitOperationDelete(path_in_repo=path) for path in deleted]
        info = self._api.create_commit(self._repo_id, operations=operations, commit_message=message,
                                       repo_type="dataset", parent_commit=parent)
        return str(info.oid)

    def tag(self, name: str, commit: str, message: str) -> None:
        self._api.create_tag(self._repo_id, tag=name, revision=commit, tag_message=message, repo_type="dataset")

    def download(self, commit: str, path: str, folder: Path) -> Path:
        """``path`` at ``commit`` into ``folder/path`` (``hf_hub_download``; the Hub serves LFS content)."""
        local = self._api.hf_hub_download(self._repo_id, path, repo_type="dataset", revision=commit,
                                          cache_dir=self._scratch)
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(local, target)
        return target
