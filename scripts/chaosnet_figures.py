"""The ChaosNetBench material of docs/chaosnet.md: the reference predictors on the N = 8 slice, and two figures.

Builds every N = 8 instance (32: 4 K x 8 rho) into a temporary cache, runs ``zero``, ``persistence`` and ``linear``
on the test split, then writes

- ``docs/figures/chaosnet-n8-baselines.json``: every metric of every (instance, predictor);
- ``docs/figures/chaosnet-vpt-rho.png``: test VPT against rho, one line per K (linear solid, zero dashed);
- ``docs/figures/chaosnet-phase-space.png``: (q_1, p_1) of IC 0 over its 10,000 recorded steps,
  near-integrable vs chaotic;

and prints the markdown table (rho in {0.05, 0.2, 0.5}) used in docs/chaosnet.md. Needs the plot extra
(matplotlib: ``pip install -e '.[plot]'``).
Run it from the repository root: ``python -m scripts.chaosnet_figures``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import tgbhub  # noqa: E402
from generators.chaosnet.catalogue import K_VALUES, RHO_VALUES, instance_name  # noqa: E402
from tgbhub.baselines import run_baseline  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

MODELS = ("zero", "persistence", "linear")
TABLE_RHO = (0.05, 0.2, 0.5)
DOCS = ROOT / "docs" / "figures"


def evaluate_slice(cache: str) -> dict[str, dict[str, dict[str, float]]]:
    results: dict[str, dict[str, dict[str, float]]] = {}
    for k in K_VALUES:
        for rho in RHO_VALUES:
            name = instance_name(k, rho, 8)
            ds = tgbhub.load_dataset(name, cache_dir=cache, offline=True)
            results[name] = {model: ds.evaluator.evaluate(run_baseline(model, ds, ds.task, "test"),
                                                          split="test")["metrics"] for model in MODELS}
            results[name]["lambda_mean"] = {"value": ds.manifest.stats["lambda_mean"]}
            print(f"  {name}: " + ", ".join(f"{m} vpt {results[name][m]['vpt']:.2f} mse "
                                             f"{results[name][m]['test_mse']:.4f}" for m in MODELS), file=sys.stderr)
    return results


def plot_vpt(results: dict) -> None:
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for color, k in zip(("tab:blue", "tab:orange", "tab:green", "tab:red"), K_VALUES):
        rhos = list(RHO_VALUES)
        for model, style in (("linear", "-o"), ("zero", "--")):
            vpt = [results[instance_name(k, rho, 8)][model]["vpt"] for rho in rhos]
            ax.plot(rhos, vpt, style, color=color, markersize=3, label=f"K={k} {model}")
    ax.set_xlabel("coupling-to-chaos ratio rho = epsilon / K")
    ax.set_ylabel("test VPT (steps, mean over 20 ICs)")
    ax.set_title("ChaosNetBench N=8: valid prediction time of the reference predictors")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(DOCS / "chaosnet-vpt-rho.png", dpi=120)


def plot_phase_space(cache: str) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(8, 4), sharey=True)
    for ax, k in zip(axes, (0.5, 6.5)):
        ds = tgbhub.load_dataset(instance_name(k, 0.05, 8), cache_dir=cache, offline=True)
        state = np.asarray(ds.states[0])
        ax.scatter(state[:, 0], state[:, 8], s=0.2, color="black")
        lam = float(ds.indicators["lambda_max"][0])
        ax.set_title(f"K={k}, rho=0.05, N=8, IC 0 (lambda = {lam:.3f})", fontsize=9)
        ax.set_xlabel("q_1")
    axes[0].set_ylabel("p_1 mod 2pi")
    fig.tight_layout()
    fig.savefig(DOCS / "chaosnet-phase-space.png", dpi=120)


def table(results: dict) -> str:
    lines = ["| instance | lambda | " + " | ".join(f"{m} MSE | {m} VPT" for m in MODELS) + " |",
             "| --- | --- | " + " | ".join("--- | ---" for _ in MODELS) + " |"]
    for k in K_VALUES:
        for rho in TABLE_RHO:
            name = instance_name(k, rho, 8)
            row = results[name]
            cells = " | ".join(f"{row[m]['test_mse']:.3f} | {row[m]['vpt']:.2f}" for m in MODELS)
            lines.append(f"| `{name}` | {row['lambda_mean']['value']:.3f} | {cells} |")
    return "\n".join(lines)


def main() -> None:
    DOCS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as cache:
        results = evaluate_slice(cache)
        plot_phase_space(cache)
    (DOCS / "chaosnet-n8-baselines.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    plot_vpt(results)
    print(table(results))


if __name__ == "__main__":
    main()
