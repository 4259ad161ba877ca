"""Task artifacts in the verified cache: rebuilt from the verified dataset, checked against the task document.

A task document (:mod:`tgbhub.taskdocs`) pins the content digests of the dataset files it reads; its artifacts are
rebuilt locally from those verified files by the generator its recipe names, and install only if every artifact's
content digest equals the document's (the cache's usual temp -> verify -> rename, under the per-version lock).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tgbhub.cache import CacheEntry, Fetched, install, lookup
from tgbhub.errors import IntegrityError
from tgbhub.manifest import Manifest
from tgbhub.progress import Steps
from tgbhub.taskdocs import TaskDocument


def check_dataset(document: TaskDocument, manifest: Manifest) -> None:
    """The dataset must be the version, with the content, the task document was built from.

    Raises:
        IntegrityError: naming the dataset file whose content digest differs from the pinned one.
    """
    if document.dataset != f"{manifest.name}@{manifest.version}":
        raise IntegrityError(f"task {document.reference}", f"dataset {document.dataset}",
                             f"{manifest.name}@{manifest.version}", "Load the dataset version the task pins")
    for file, digest in document.dataset_digests.items():
        published = manifest.file(file).digest
        if published != digest:
            raise IntegrityError(f"task {document.reference}: dataset file {file}", f"content digest {digest}",
                                 str(published), "The bundled task document does not belong to this dataset "
                                 "version: reinstall tgbhub or report it")


def ensure_task_cached(document: TaskDocument, manifest: Manifest, columns: dict[str, dict[str, Any]],
                       root: Path) -> CacheEntry:
    """The verified cache entry of ``document``'s artifacts, built on first use from the dataset's verified
    ``columns`` (file -> column -> array).

    Raises:
        IntegrityError: if the dataset is not the one the document pins, or a rebuilt artifact's content differs
            from the document (nothing is installed then).
        GenerationError: if this tgbhub lacks the task's generator version.
    """
    entry = lookup(document.artifacts, root)
    if entry is not None:
        return entry
    check_dataset(document, manifest)
    from tgbhub.generators.forecast import builder_for  # numba kernels load on use

    recipe = document.artifacts.recipe
    build, write = builder_for(recipe)  # type: ignore[arg-type]

    def fetch(staging: Path) -> Fetched:
        files = build(manifest, columns, int(recipe.seed))  # type: ignore[union-attr]
        return Fetched(files=write(files, staging), columns=files, rebuilt=True)

    steps = Steps(f"task {document.reference}: building its artifacts", total=1)
    try:
        entry, _ = install(document.artifacts, root, fetch)
        steps.step("verified and installed")
    finally:
        steps.close()
    return entry
