"""The trainers' reproduction figure: our runs against the published numbers, from the runs' own records.

``docs/figures/training-runs.json`` holds what the figure shows: per run (``tgbhub train`` / ``tgbhub.train``
``result.json``) the model, dataset, seed, graded test metrics and the per-epoch validation history, plus the
published 3-seed means and standard deviations the runs are compared with (upstream ChaosNetBench's results CSV, as
quoted in the trainers' issue) and the heuristics' test F1 on the T-GRAB datasets. The figure:

- left: ChaosNetBench test MSE per seed (dots) against the published mean and the acceptance band (3 standard
  deviations or 0.01 MSE, whichever is larger), one row per (instance, model);
- right: T-GRAB validation F1 per epoch of ``gclstm`` and ``tgn`` with EdgeBank's and persistence's test F1 on the
  focus dataset (runs that stopped within 10 epochs are left out: their val F1 reached 1).

Usage, from the repository root::

    python -m scripts.training_figures add RESULT.json [...]   # record runs (replaces a run of the same key)
    python -m scripts.training_figures draw                     # write docs/figures/training-reproduction.png
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

FIGURES = Path(__file__).resolve().parent.parent / "docs" / "figures"
RUNS = FIGURES / "training-runs.json"
FIGURE = FIGURES / "training-reproduction.png"


def load() -> dict[str, Any]:
    return json.loads(RUNS.read_text())


def record(result: dict[str, Any]) -> dict[str, Any]:
    """The part of a run's ``result.json`` the figure and docs/baselines.md use."""
    metric = next(k for k in result["history"][0] if k.startswith("val_"))
    keep = ("test_mse", "test_mae", "vpt", "f1", "mrr", "f1_change_points")
    return {"model": result["model"], "dataset": result["dataset"], "version": result["version"],
            "seed": result["seed"], "device": result["device"], "epochs_run": result["epochs_run"],
            "best_epoch": result["best_epoch"], "train_seconds": round(result["train_seconds"], 1),
            "metrics": {k: v for k, v in result["metrics"].items() if k in keep},
            "val_metric": metric, "val_history": [round(h[metric], 6) for h in result["history"]]}


def add(paths: list[str]) -> None:
    data = load()
    for path in paths:
        run = record(json.loads(Path(path).read_text()))
        key = (run["model"], run["dataset"], run["seed"])
        data["runs"] = [r for r in data["runs"] if (r["model"], r["dataset"], r["seed"]) != key] + [run]
    data["runs"].sort(key=lambda r: (r["dataset"], r["model"], r["seed"]))
    RUNS.write_text(json.dumps(data, indent=1) + "\n")


def draw() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = load()
    runs = data["runs"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8), gridspec_kw={"width_ratios": [1, 1.2]})
    rows = [(p["dataset"], p["model"], p) for p in data["published"]]
    for y, (dataset, model, published) in enumerate(rows):
        band = max(3 * published["test_mse_std"], 0.01)
        mean = published["test_mse_mean"]
        left.barh(y, 2 * band, left=-band, height=0.5, color="#cfe3f5")
        left.plot([0, 0], [y - 0.25, y + 0.25], color="#1f5f99", lw=2)
        ours = [r["metrics"]["test_mse"] - mean for r in runs if r["dataset"] == dataset and r["model"] == model]
        left.plot(ours, [y] * len(ours), "o", color="#d1495b" if ours else "none", ms=6)
        if not ours:
            left.text(0, y, "  not run", va="center", fontsize=8, color="#666666")
    left.set_yticks(range(len(rows)), [f"{m}  {d.split('/')[1]}" for d, m, _ in rows], fontsize=8)
    left.axvline(0, color="#1f5f99", lw=0.5)
    left.set_xlabel("test MSE minus the published 3-seed mean")
    left.set_title("ChaosNetBench: our seeds (dots) vs published mean\n(band: 3 std or 0.01, the acceptance rule)",
                   fontsize=9)
    left.invert_yaxis()
    colours = {"gclstm": "#2a9d8f", "tgn": "#e76f51"}
    styles = ["-", "--", ":", "-."]
    others = sorted({r["dataset"] for r in runs if r["val_metric"] == "val_f1"} - {data["tgrab_focus"]})
    for run in runs:
        # a run that stopped within a few epochs (val F1 reached 1, e.g. on ce-1) is a table row, not a curve
        if run["val_metric"] != "val_f1" or len(run["val_history"]) < 10:
            continue
        label = f"{run['model']} {run['dataset'].split('/')[1]} (test {run['metrics']['f1']:.3f})"
        style = "-" if run["dataset"] == data["tgrab_focus"] else styles[1 + others.index(run["dataset"]) % 3]
        right.plot(run["val_history"], style, color=colours.get(run["model"], "k"), lw=1, label=label)
    for name, value in data["heuristics"][data["tgrab_focus"]].items():
        right.axhline(value, color="#888888", ls="--", lw=0.8)
        right.text(1, value, f" {name} test F1 {value:.3f}", fontsize=7, va="bottom", color="#555555")
    right.set_xlabel("epoch")
    right.set_ylabel("validation F1")
    right.set_title(f"T-GRAB: validation F1 per epoch (solid: {data['tgrab_focus']}; lines: its heuristics)",
                    fontsize=9)
    right.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(FIGURE, dpi=110)
    print(f"wrote {FIGURE}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("add").add_argument("results", nargs="+")
    sub.add_parser("draw")
    args = parser.parse_args(argv)
    if args.command == "add":
        add(args.results)
    else:
        draw()
    return 0


if __name__ == "__main__":
    sys.exit(main())
