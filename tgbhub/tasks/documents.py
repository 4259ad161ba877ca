"""Task documents: tasks versioned on their own, for tasks that only read a dataset's existing data.

A dataset manifest declares the tasks its own files were built for. A task added later (window forecasting) must not
change the dataset's bytes or version (docs/design.md, "Names and versions"), so it lives in its own document next
to the manifest::

    manifests/<family>/<name>/tasks/<task>/<task version>.json

The document pins the dataset version it belongs to and the content digest of every dataset file it reads
(``datasetDigests``), lists its own artifacts (e.g. per-window negatives) with sha256, size and content digest like a
manifest does, and carries the task block the evaluator is bound to. Its artifacts are rebuilt locally from the
verified dataset by the recipe it names and are accepted only if their content digests equal the document's; they
are cached under ``<cache>/<family>/<name>/tasks/<task>/<task version>/``. When the dataset gets a new version, a
new task version pins it; a published task version never changes.

No I/O here beyond reading a document file; building and caching live in :mod:`tgbhub.api`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from tgbhub.errors import ManifestError
from tgbhub.manifest import TASK_DOCUMENT_FORMAT, TASKS_FOLDER, Manifest, Recipe, frozen, parse_file, plain


@dataclass(frozen=True)
class TaskDocument:
    """One version of a task of one dataset version.

    ``artifacts`` is the document seen as a manifest (name ``<family>/<name>/tasks/<task>``, its files and recipe):
    the cache installs and verifies it exactly like a dataset version.
    """

    task_name: str
    version: str
    dataset: str
    dataset_digests: Mapping[str, str]
    task: Mapping[str, Any]
    artifacts: Manifest

    @property
    def reference(self) -> str:
        """``<family>/<name>/tasks/<task>@<version>``: how results and messages name this task version."""
        return f"{self.artifacts.name}@{self.version}"


def _require(doc: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in doc:
        raise ManifestError(f"{where} has no {key!r}; regenerate it with "
                            "`python -m scripts.forecast_tasks` from a checkout")
    return doc[key]


def parse_task_document(doc: Mapping[str, Any]) -> TaskDocument:
    """A :class:`TaskDocument` from its JSON.

    Raises:
        ManifestError: if the document is not a task document or a field is missing or malformed.
    """
    where = f"task document {doc.get('name', '<unnamed>')!r}"
    if doc.get("conformsTo") != TASK_DOCUMENT_FORMAT:
        raise ManifestError(f"{where} conformsTo {doc.get('conformsTo')!r}; expected {TASK_DOCUMENT_FORMAT!r}")
    name = str(_require(doc, "name", where))
    dataset = str(_require(doc, "dataset", where))
    if "@" not in dataset or f"{dataset.partition('@')[0]}/{TASKS_FOLDER}/" not in f"{name}/":
        raise ManifestError(f"{where} pins dataset {dataset!r}; expected 'family/name@version' whose name prefixes "
                            f"'{name}'")
    task = _require(doc, "task", where)
    digests = {d["file"]: d for d in doc.get("digest", [])}
    files = tuple(parse_file(obj, digests, where) for obj in _require(doc, "distribution", where))
    recipe_doc = _require(doc, "recipe", where)
    recipe = Recipe(generator=str(_require(recipe_doc, "generator", f"{where} recipe")),
                    version=str(_require(recipe_doc, "version", f"{where} recipe")),
                    params=frozen(recipe_doc.get("params", {})), seed=int(_require(recipe_doc, "seed", where)))
    version = str(_require(doc, "version", where))
    artifacts = Manifest(name=name, version=version, description=str(doc.get("description", "")),
                         license=str(doc.get("license", "")), files=files, recipe=recipe, graph=MappingProxyType({}),
                         splits=MappingProxyType({}), task=frozen(task), stats=frozen(doc.get("stats", {})),
                         known_discrepancies=(), raw=frozen(doc))
    return TaskDocument(task_name=str(_require(task, "name", where)), version=version, dataset=dataset,
                        dataset_digests=MappingProxyType(dict(_require(doc, "datasetDigests", where))),
                        task=frozen(task), artifacts=artifacts)


def read_task_document(path: str | os.PathLike[str]) -> TaskDocument:
    """Parse the task document at ``path``.

    Raises:
        ManifestError: if the file is not valid JSON or not a valid task document.
    """
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ManifestError(f"task document {os.fspath(path)!r} cannot be read ({exc}); restore it from git") from exc
    return parse_task_document(doc)


def document_path(root: Path, dataset_name: str, task: str, version: str, suffix: str = ".json") -> Path:
    """Where the task document ``task@version`` of ``dataset_name`` lives under manifest ``root`` (a cache keeps
    the documents it built on request under the same layout, ``suffix`` ``.document.json``)."""
    family, short = dataset_name.split("/", 1)
    return root / family / short / TASKS_FOLDER / task / f"{version}{suffix}"


def documents_for(root: Path, manifest: Manifest) -> list[TaskDocument]:
    """The newest version of every task document pinned to ``manifest``'s exact version, by task name.

    Raises:
        ManifestError: if a document there is malformed.
    """
    from tgbhub.registry import version_key  # registry imports nothing of ours: no cycle, but keep it lazy

    folder = root / manifest.family / manifest.short_name / TASKS_FOLDER
    pinned = f"{manifest.name}@{manifest.version}"
    chosen: list[TaskDocument] = []
    for task_folder in sorted(p for p in folder.glob("*") if p.is_dir()):
        files = sorted(task_folder.glob("*.json"), key=lambda p: version_key(p.stem))
        documents = [read_task_document(p) for p in files]
        matching = [d for d in documents if d.dataset == pinned]
        if matching:
            chosen.append(matching[-1])
    return chosen


def with_tasks(manifest: Manifest, tasks: Iterable[Mapping[str, Any]]) -> Manifest:
    """``manifest`` with ``tasks`` (task documents' task blocks) appended to its ``tasks`` (its files, version and
    default task are unchanged: a task document adds a way to grade the data, never data)."""
    extra = [plain(task) for task in tasks]
    if not extra:
        return manifest
    raw = plain(manifest.raw)
    raw["tasks"] = [*(raw.get("tasks") or [raw["task"]]), *extra]
    return replace(manifest, raw=frozen(raw))
