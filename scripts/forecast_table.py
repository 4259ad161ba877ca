"""EdgeBank under window forecasting next to fixed-size batch evaluation (b = 200, 800) on a handful of T-GRAB
datasets: the table of docs/forecasting.md.

    .venv/bin/python -m scripts.forecast_table [--cache-dir DIR] [--models edgebank-tw,edgebank-thr] [NAME ...]

Each row is :func:`tgbhub.protocols.compare_protocols` (the window task graded by its reference evaluator; the batch
protocol with DyGLib's rules), test split. Delta = (window - batch) / batch, the paper's relative change.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import tgbhub
from tgbhub.protocols import compare_protocols

DATASETS = ("t-grab/pdet-2-16", "t-grab/pdet-8-1", "t-grab/psto-4-p90", "t-grab/ce-16", "t-grab/ce-64",
            "t-grab/lr-4-4")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", default=list(DATASETS))
    parser.add_argument("--cache-dir", type=Path)
    parser.add_argument("--models", default="edgebank-tw,edgebank-thr")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        cache = args.cache_dir or Path(scratch)
        print("| dataset | EdgeBank memory | window AUC | window AP | batch b=200 AUC / AP | batch b=800 AUC / AP "
              "| ΔAUC vs b=200 | ΔAUC vs b=800 |")
        print("|---|---|---|---|---|---|---|---|")
        for name in args.names:
            dataset = tgbhub.load_dataset(name, cache_dir=cache)
            for model in args.models.split(","):
                window, b200, b800 = compare_protocols(dataset, model, (200, 800))
                print(f"| {name.split('/', 1)[1]} | {model} | {window['auc']:.3f} | {window['ap']:.3f} | "
                      f"{b200['auc']:.3f} / {b200['ap']:.3f} | {b800['auc']:.3f} / {b800['ap']:.3f} | "
                      f"{b200['delta_auc_pct']:+.1f} % | {b800['delta_auc_pct']:+.1f} % |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
