"""What every evaluator returns: plain floats plus the provenance a result must carry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tgbhub.manifest import Manifest


def result(manifest: Manifest, task: Mapping[str, Any], split: str, metrics: Mapping[str, float],
           digests: Mapping[str, str | None], **extra: Any) -> dict[str, Any]:
    """A JSON-ready result: dataset, version, content digest(s), task, split and the metrics as Python floats.

    ``digests`` maps file names to logical digests; ``digest`` is the first one (the graded data itself).
    """
    return {"dataset": manifest.name, "version": manifest.version, "digest": next(iter(digests.values()), None),
            "digests": dict(digests), "task": task.get("name"), "task_type": task.get("type"), "split": split,
            "metrics": {k: float(v) for k, v in metrics.items()}, **extra}
