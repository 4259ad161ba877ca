"""``python -m scripts.forecast_tasks [NAME ...]``, run from the repository root: write the window-forecasting task
document of every base temporal-graph dataset (default) or of the named ones, next to its manifest.

An authoring script, and so a composition root: it hands the library's task definition
(:mod:`tgbhub.forecasting.task`) to the builders, as the client's build source does.

Each dataset is rebuilt with its family's generator and checked against its published digests first; the task's
negatives are then built from those verified edges, hashed into the document, and discarded (a client rebuilds
them and checks them against the document).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from tqdm import tqdm

from generators.forecast.task import SEED, build, task_document, write
from generators.manifests import MANIFEST_ROOT
from generators.tlpcf.parents import load_parent
from tgbhub.forecasting import task as definition
from tgbhub.registry import DERIVED_MARK, Registry
from tgbhub.tasks.documents import document_path


def main(argv: list[str] | None = None) -> int:
    """Write the window-forecasting task document of each dataset ``argv`` names (every base temporal-graph
    dataset by default).

    Returns:
        The exit status, 0 (a bad argument or a derived dataset exits through ``argparse``).
    """
    parser = argparse.ArgumentParser(prog="python -m scripts.forecast_tasks", description=__doc__)
    parser.add_argument("names", nargs="*", help="datasets (default: every base temporal-graph dataset)")
    parser.add_argument("--manifests", type=Path, default=MANIFEST_ROOT, help="manifest root (default: %(default)s)")
    args = parser.parse_args(argv)
    registry = Registry(args.manifests)
    names = args.names or [n for n in registry.names(derived=False)
                           if registry.lookup(n).graph.get("kind") == "temporal-graph"]
    for name in tqdm(names, desc="window-forecast tasks", unit="dataset", file=sys.stderr):
        if DERIVED_MARK in name:
            parser.error(f"{name} is a derived dataset; its task documents are not authored yet")
        manifest = registry.lookup(name)
        manifest, columns = load_parent(f"{manifest.name}@{manifest.version}")
        files = build(manifest, columns, SEED, definition)
        with tempfile.TemporaryDirectory(prefix="tgbhub-task-") as scratch:
            write(files, Path(scratch))
            document = task_document(manifest, columns, files, Path(scratch), definition)
        target = document_path(args.manifests, manifest.name, definition.TASK_NAME, definition.TASK_VERSION)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
