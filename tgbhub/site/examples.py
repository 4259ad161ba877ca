"""The example submission a dataset page offers for download: a valid submission file for the dataset's default
task, written by the project's own submission writer (:func:`tgbhub.evaluate.submission.write_submission`, through
:func:`tgbhub.api.run_baseline`) from the first bundled baseline of the task's type, and graded by the reference
evaluator before the page links it.

It covers the task's report split, as every graded submission must (the evaluator wants a row for every query), so
it is made only for a dataset of at most :data:`EXAMPLE_MAX_BYTES`; a larger one's page says which command writes
one. Only the cache is read (offline: nothing is built or downloaded for an example), and the file is kept in the
cache by the dataset's content digest (``<cache>/.examples/<family>/<name>/<digest>-<task>-<model>.parquet``, its
grade beside it as ``.json``), so a rebuild of the site copies it instead of running the baseline again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tgbhub import api
from tgbhub.errors import CacheWriteError, ManifestError, TgbhubError, human_bytes
from tgbhub.manifest import Manifest
from tgbhub.site.figures import content_digest

#: the folder of the cache root that holds example submissions (a dot-folder: no family is called that)
STORE = ".examples"
#: the largest dataset (declared bytes of its files) whose page gets an example submission
EXAMPLE_MAX_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Example:
    """An example submission: the task and split it answers, the baseline that wrote it, its rows, the metrics the
    reference evaluator gave it and the task's ``primary`` one, the file name beside the page and its content
    (``data``)."""

    task: str
    split: str
    model: str
    rows: int
    metrics: dict[str, float]
    primary: str
    file: str
    data: bytes


def example_submission(manifest: Manifest, root: Path, page: str) -> Example | str:
    """The example submission of ``manifest``'s dataset (held complete in the cache at ``root``), reused from the
    cache's store or written and graded now; or, when there is none, a sentence saying why and how to write one.

    Args:
        manifest: the dataset's manifest (its default task is the one answered).
        root: the cache root.
        page: the dataset page's path in the site (``datasets/<family>/<name>.html``): the file goes beside it.

    Returns:
        The :class:`Example`, or the reason there is none.

    Raises:
        CacheWriteError: if the example cannot be kept in the cache.
    """
    from tgbhub.baselines.registry import models_for
    from tgbhub.evaluate.directions import primary_metric

    task = manifest.task
    name, kind = str(task.get("name")), str(task.get("type"))
    models = models_for(kind)
    if not models:
        return f"No example submission: no bundled baseline writes a {kind} submission."
    size = sum(entry.size for entry in manifest.files)
    if size > EXAMPLE_MAX_BYTES:
        return (f"No example submission: the dataset's {human_bytes(size)} are more than the "
                f"{human_bytes(EXAMPLE_MAX_BYTES)} an example is made for; write one with `tgbhub baseline "
                f"{models[0]} {manifest.name} --task {name} --out submission.parquet`.")
    stored = stored_path(root, manifest, name, models[0])
    if not (stored.is_file() and stored.with_suffix(".json").is_file()):
        try:
            _write(manifest, name, models[0], root, stored)
        except CacheWriteError:
            raise
        except TgbhubError as exc:  # a dataset whose baseline fails is shown without an example, saying why
            return f"No example submission: {exc}"
    facts = json.loads(stored.with_suffix(".json").read_text(encoding="utf-8"))
    try:
        primary = primary_metric(task)
    except ManifestError:  # a task naming no metric: the grade's first
        primary = next(iter(facts["metrics"]), "")
    return Example(name, str(facts["split"]), models[0], int(facts["rows"]), dict(facts["metrics"]), primary,
                   f"{page.rsplit('/', 1)[-1].removesuffix('.html')}.{name}.example.parquet", stored.read_bytes())


def stored_path(root: Path, manifest: Manifest, task: str, model: str) -> Path:
    """Where the example submission of ``manifest``'s ``task`` written by ``model`` is kept in the cache."""
    family, _, short = manifest.name.partition("/")
    return root / STORE / family / short / f"{content_digest(manifest)[:24]}-{task}-{model}.parquet"


def _write(manifest: Manifest, task: str, model: str, root: Path, stored: Path) -> None:
    """Run ``model`` on the cached dataset, grade its submission and keep both in the store: the file takes its
    final name only after it was written, read back and graded.

    Raises:
        TgbhubError: as :func:`tgbhub.api.run_baseline` (a dataset that cannot be opened offline, a failing grade).
        CacheWriteError: if the store cannot be written.
    """
    import pyarrow.parquet as pq

    temp = stored.with_name(f"{stored.name}.{os.getpid()}.tmp")
    try:
        stored.parent.mkdir(parents=True, exist_ok=True)
        graded = api.run_baseline(model, f"{manifest.name}@{manifest.version}", task=task, out=temp,
                                  cache_dir=root, offline=True)
        facts: dict[str, Any] = {"task": task, "model": model, "split": graded.result.get("split"),
                                 "rows": pq.read_metadata(temp).num_rows, "metrics": dict(graded.metrics)}
        stored.with_suffix(".json").write_text(json.dumps(facts, sort_keys=True, default=float), encoding="utf-8")
        os.replace(temp, stored)
    except OSError as exc:
        if CacheWriteError.applies(exc):
            raise CacheWriteError("an example submission", exc) from exc
        raise
    finally:
        temp.unlink(missing_ok=True)
