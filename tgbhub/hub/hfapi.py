"""Publish target ``hf``: the Hugging Face Hub API through ``huggingface_hub`` (one atomic commit, then a tag)."""

from __future__ import annotations

from typing import Any

from tgbhub.errors import PublishError, VersionConflictError
from tgbhub.hub.layout import Published, RepoPlan, differences


class HfTarget:
    """Publishes a repo plan to a Hub at ``endpoint`` (the public Hub or any server speaking its API)."""

    def __init__(self, endpoint: str, token: str | None, private: bool = False) -> None:
        self.endpoint = endpoint
        self.token = token
        self.private = private

    def publish(self, plan: RepoPlan) -> Published:
        """Create the repo if needed, commit the plan as one atomic commit on ``main`` and tag it.

        Republishing identical content is a no-op; the commit names its parent, so a concurrent writer makes the Hub
        refuse it rather than interleave.

        Raises:
            VersionConflictError: if the tag exists with different content.
            PublishError: if the Hub refuses a call (authentication, permissions, conflicts) or cannot be reached.
        """
        from huggingface_hub import HfApi  # deferred: the client side never needs the write API

        api = HfApi(endpoint=self.endpoint, token=self.token)
        try:
            api.create_repo(plan.repo_id, repo_type="dataset", exist_ok=True, private=self.private)
            refs = api.list_repo_refs(plan.repo_id, repo_type="dataset")
            tags = {ref.name: ref.target_commit for ref in refs.tags}
            if plan.tag in tags:
                return self._compare(api, plan, tags[plan.tag])
            head = next((ref.target_commit for ref in refs.branches if ref.name == "main"), None)
            commit = self._commit(api, plan, head)
            api.create_tag(plan.repo_id, tag=plan.tag, revision=commit, tag_message=plan.message,
                           repo_type="dataset")
        except VersionConflictError:
            raise
        except Exception as exc:  # huggingface_hub raises HTTP, validation and connection errors of many types
            raise PublishError(f"the Hub at {self.endpoint} refused publishing {plan.repo_id} {plan.tag}: "
                               f"{type(exc).__name__}: {exc}. Check the endpoint, that the token "
                               "(--token, $TGBHUB_TOKEN or $HF_TOKEN) may write to the repo, and retry.") from exc
        return Published(plan.repo_id, plan.tag, commit, "published", f"{self.endpoint}/datasets/{plan.repo_id}")

    def _commit(self, api: Any, plan: RepoPlan, head: str | None) -> str:
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        remote = self._tree(api, plan.repo_id, head) if head else {}
        changed = differences(plan, remote)
        if head is not None and not changed:
            return head
        planned = plan.by_path()
        operations: list[Any] = [
            CommitOperationAdd(path_in_repo=f.path, path_or_fileobj=f.data if f.data is not None else str(f.local))
            for f in plan.files if f.path in changed]
        operations += [CommitOperationDelete(path_in_repo=path) for path in changed if path not in planned]
        info = api.create_commit(plan.repo_id, operations=operations, commit_message=plan.message,
                                 repo_type="dataset", parent_commit=head)
        return str(info.oid)

    def _tree(self, api: Any, repo_id: str, revision: str) -> dict[str, tuple[str | None, str]]:
        from huggingface_hub.hf_api import RepoFile

        listing = {}
        for item in api.list_repo_tree(repo_id, revision=revision, recursive=True, repo_type="dataset"):
            if isinstance(item, RepoFile):
                lfs = item.lfs.sha256 if item.lfs is not None else None
                listing[item.path] = (lfs, item.blob_id)
        return listing

    def _compare(self, api: Any, plan: RepoPlan, commit: str) -> Published:
        changed = differences(plan, self._tree(api, plan.repo_id, commit))
        if changed:
            raise VersionConflictError(plan.repo_id, plan.tag, changed)
        return Published(plan.repo_id, plan.tag, commit, "unchanged", f"{self.endpoint}/datasets/{plan.repo_id}")
