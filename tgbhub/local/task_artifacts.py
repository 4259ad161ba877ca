"""Task artifacts in the verified cache: rebuilt from the verified dataset, checked against the task document.

A task document (:mod:`tgbhub.tasks.documents`) pins the content digests of the dataset files it reads; its artifacts
are rebuilt locally from those verified files by the generator its recipe names, and install only if every artifact's
content digest equals the document's (the cache's usual temp -> verify -> rename, under the per-version lock).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tgbhub.cache import CacheEntry, Fetched, install, lookup
from tgbhub.errors import IntegrityError, ManifestError
from tgbhub.local.gateway import build_and_install, task_artifacts, task_builder
from tgbhub.manifest import TASKS_FOLDER, Manifest
from tgbhub.progress import Steps
from tgbhub.tasks.documents import (
    TaskDocument,
    document_path,
    documents_for,
    parse_task_document,
    read_task_document,
    with_tasks,
)
from tgbhub.tasks.specs import TaskSpec, declared_on_request, task_spec

if TYPE_CHECKING:
    import numpy as np

    from tgbhub.data.temporal_graph import TemporalGraphDataset

#: how a cache names the task documents it built on request (next to the artifacts' version folder)
ON_REQUEST_SUFFIX = ".document.json"


def declare_tasks(dataset: TemporalGraphDataset, manifest: Manifest, manifests: Path, root: Path) -> None:
    """Give a temporal-graph ``dataset`` its tasks: those of its bundled task ``documents``, plus the registered tasks
    of its kind that no document declares (declared on request: their documents and artifacts are built from the
    verified data on first use, and cached), and the opener that finds or builds a task's artifacts.

    Args:
        dataset: the :class:`~tgbhub.data.TemporalGraphDataset` just opened from ``manifest``.
        manifest: its manifest.
        manifests: the manifest root whose bundled task documents pinned to ``manifest``'s version it declares.
        root: the cache root the artifacts are kept in.

    Raises:
        ManifestError: if a bundled task document is malformed.
    """
    documents = documents_for(manifests, manifest)
    on_request = {spec.name: spec for spec in declared_on_request(manifest, {d.task_name for d in documents})}
    by_name = {document.task_name: document for document in documents}
    blocks = [document.task for document in documents]
    blocks += [{**spec.block(manifest, dataset), "builtOnRequest": True} for spec in on_request.values()]

    def open_task(opened: TemporalGraphDataset, task: str) -> tuple[Manifest, Mapping[str, Mapping[str, Path]]]:
        edges = {manifest.graph["edges_file"]: {"t": opened.t, "src": opened.src, "dst": opened.dst}}
        document = by_name.get(task)
        if document is None and task in on_request:
            document = document_on_request(manifest, edges, root, on_request[task])
        if document is None:
            raise ManifestError(f"{manifest.name}@{manifest.version} has no task document for task {task!r}; "
                                f"its task documents declare {', '.join([*by_name, *on_request]) or 'none'}")
        return document.artifacts, ensure_task_cached(document, manifest, edges, root).columns

    dataset.declare_tasks(with_tasks(manifest, blocks), open_task)


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


def ensure_task_cached(document: TaskDocument, manifest: Manifest, columns: Mapping[str, Mapping[str, np.ndarray]],
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
    recipe = document.artifacts.recipe
    spec = task_spec(document.task_name)
    builder = task_artifacts(spec, recipe.generator, recipe.version)  # type: ignore[union-attr]
    definition = spec.definition if spec is not None else None

    def fetch(staging: Path) -> Fetched:
        files = builder.build(manifest, columns, int(recipe.seed), definition)  # type: ignore[union-attr]
        return Fetched(files=builder.write(files, staging), columns=files, rebuilt=True)

    steps = Steps(f"task {document.reference}: building its artifacts", total=1)
    try:
        entry, _ = install(document.artifacts, root, fetch)
        steps.step("verified and installed")
    finally:
        steps.close()
    return entry


def document_on_request(manifest: Manifest, columns: Mapping[str, Mapping[str, np.ndarray]], root: Path,
                        spec: TaskSpec) -> TaskDocument:
    """The task document of task ``spec`` for a dataset that has none bundled (a variant built on request, say),
    built from the dataset's verified ``columns`` on first use by the same builder that writes the bundled ones, its
    artifacts verified and installed, then the document kept in the cache
    (``<cache>/<family>/<name>/tasks/<task>/<version>.document.json``; ``builtOnRequest`` says so), all under the
    entry's lock. Later calls read it back; one pinned to other dataset content is rebuilt.

    Raises:
        GenerationError: if this tgbhub cannot build the task.
        IntegrityError: if the artifacts do not verify against the document just written (a bug; nothing installed).
    """
    task, version = spec.name, spec.version
    path = document_path(root, manifest.name, task, version, ON_REQUEST_SUFFIX)

    def load(stored: Path) -> TaskDocument | None:
        document = read_task_document(stored)
        try:
            check_dataset(document, manifest)
        except IntegrityError:
            return None  # the cache holds a document of other dataset content: build this one's
        return document

    def parse(doc: dict[str, Any]) -> tuple[TaskDocument, Manifest]:
        document = parse_task_document(doc)
        return document, document.artifacts

    found = load(path) if path.is_file() else None
    if found is not None:
        return found
    steps = Steps(f"task {manifest.name}/{task}@{version}: building it on request", total=1)
    try:
        document, _ = build_and_install(root, f"{manifest.name}/{TASKS_FOLDER}/{task}", version,
                                        task_builder(manifest, columns, spec), stored=path, load=load, parse=parse)
        steps.step("verified and installed")
    finally:
        steps.close()
    return document
