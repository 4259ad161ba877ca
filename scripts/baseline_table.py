"""Run every heuristic baseline through ``tgbhub baseline`` on every T-GRAB dataset; print the markdown table.

    .venv/bin/python -m scripts.baseline_table [--cache-dir DIR] [--json OUT]   # from the repository root

Snapshot task (test F1, plus F1 at change points for pdet-2-n) for edgebank, edgebank-train, edgebank-tw and
persistence, and the ranking task's test MRR for the same models. Each cell is one ``tgbhub baseline MODEL NAME
--json`` call (run in-process through ``tgbhub.cli.main``, the same code path as the command).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path

from tgbhub.api import registry
from tgbhub.cli import main as cli

MODELS = ("edgebank", "edgebank-train", "edgebank-tw", "persistence")


def run(args: list[str]) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli(args)
    if code != 0:
        raise RuntimeError(f"tgbhub {' '.join(args)} exited {code}")
    return json.loads(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache-dir", help="cache root (default: a temporary folder)")
    parser.add_argument("--json", type=Path, help="also write every result here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        cache = args.cache_dir or scratch
        results = []
        for name in registry().names("t-grab", derived=False):
            row = {"dataset": name}
            for model in MODELS:
                snap = run(["--cache-dir", cache, "baseline", model, name, "--json"])
                rank = run(["--cache-dir", cache, "baseline", model, name, "--task", "ranking", "--json"])
                row[model] = {**snap["metrics"], "mrr": rank["metrics"]["mrr"]}
            results.append(row)
            print(f"{name} done", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    head = ["dataset", *[f"{m} F1" for m in MODELS], "F1 at change points (eb-train / pers.)",
            *[f"{m} MRR" for m in MODELS]]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in results:
        cp = row["persistence"].get("f1_change_points")
        change = "-" if cp is None else f"{row['edgebank-train']['f1_change_points']:.4f} / {cp:.4f}"
        cells = [row["dataset"].split("/", 1)[1], *[f"{row[m]['f1']:.4f}" for m in MODELS], change,
                 *[f"{row[m]['mrr']:.4f}" for m in MODELS]]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
