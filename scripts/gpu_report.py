"""docs/gpu.md's tables and figure from ``scripts/gpu-check`` records (``scripts/gpu-report``).

Reads every record in the folders given (default: ``docs/gpu-records``, the committed ones), and rewrites the part of
the page between its ``gpu-report`` markers: training speed against upstream's loop (measured and extrapolated
cells labelled, upstream's published H100 seconds and the goals beside them), the GPU evaluation rows, GPU vs CPU
agreement, and the reproduction runs against the published 3-seed means; each row names its GPU and date, and a
dry run's rows say "dry run (CPU)". Steps with no record are listed as not measured yet. The figure (training epoch
seconds per model; test MSE per seed against the published band) is drawn when there is something to draw.

Usage::

    scripts/gpu-report                                  # from docs/gpu-records
    scripts/gpu-report .gpu-check/records --save docs/gpu-records   # keep a slot's records, then render
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from scripts.gpu_check import (AGREEMENT_FP32_MODELS, AGREEMENT_MODELS, FORMAT, GOAL_EPOCH_S, INSTANCES,
                               REPRODUCTION_MODELS, SEEDS, SPEED_MODELS, UPSTREAM_H100_EPOCH_S, published)

HERE = Path(__file__).resolve().parent

DOCS = HERE.parent / "docs"
RECORDS = DOCS / "gpu-records"
PAGE = DOCS / "gpu.md"
FIGURE = DOCS / "figures" / "gpu-check.png"
START, END = "<!-- gpu-report: start -->", "<!-- gpu-report: end -->"


def read_records(folders: Iterable[Path]) -> list[dict[str, Any]]:
    """Every measured gpu-check record in ``folders`` (a later folder's record of a step replaces an earlier's).

    Raises:
        ValueError: for a file that is not a gpu-check record (naming it).
    """
    by_step: dict[str, dict[str, Any]] = {}
    for folder in folders:
        for path in sorted(Path(folder).glob("*.json")):
            record = json.loads(path.read_text())
            if record.get("format") != FORMAT:
                raise ValueError(f"{path} is not a gpu-check record (format {FORMAT!r}); remove it from {folder}")
            if record.get("status") == "measured":
                by_step[record["step"]] = {**record, "_path": str(path)}
    return list(by_step.values())


def where(record: Mapping[str, Any]) -> str:
    """Device and date of a record, as a table cell."""
    gpus = record["environment"].get("gpu") or [record["device"]["device"]]
    name = "dry run (CPU)" if record["dry_run"] else gpus[0]
    return f"{name}, {record['created'][:10]}"


def speed_table(records: Sequence[Mapping[str, Any]]) -> list[str]:
    found = {r["data"]["model"]: r for r in records if r["kind"] == "speed"}
    lines = ["| model | tgbhub s / epoch | upstream loop s / epoch (same machine) | upstream / tgbhub | val pass s "
             "(tgbhub / upstream) | rollout s (tgbhub / upstream) | upstream on an H100 (published) | goal | how | "
             "where |", "|" + " --- |" * 10]
    for model in SPEED_MODELS:
        published_s = _seconds(UPSTREAM_H100_EPOCH_S.get(model))
        goal = f"<= {GOAL_EPOCH_S[model]:g} s" if model in GOAL_EPOCH_S else "-"
        record = found.get(model)
        if record is None:
            lines.append(f"| {model} | not measured yet | | | | | {published_s} | {goal} | | |")
            continue
        d = record["data"]
        ours, theirs = d["train_epoch_s"]["tgbhub"], d["train_epoch_s"]["upstream"]
        how = (f"extrapolated from {d['measured_batches']['tgbhub']} of {d['full_batches']} batches"
               if d["train_epoch_extrapolated"] else "measured, every batch")
        met = ""
        if model in GOAL_EPOCH_S and not record["dry_run"]:
            met = " (met)" if ours <= GOAL_EPOCH_S[model] else " (not met)"
        lines.append(f"| {model} | {ours:.2f}{met} | {theirs:.2f} | {theirs / ours:.1f}x | "
                     f"{d['val_pass_s']['tgbhub']:.2f} / {d['val_pass_s']['upstream']:.2f} | "
                     f"{d['rollout_s']['tgbhub']:.2f} / {d['rollout_s']['upstream']:.2f} | {published_s} | {goal} | "
                     f"{how} | {where(record)} |")
    return lines


def evaluate_table(records: Sequence[Mapping[str, Any]]) -> list[str]:
    found = [r for r in records if r["kind"] == "evaluate"]
    if not found:
        return ["Not measured yet."]
    record = found[0]
    lines = ["| what | tgbhub s | peer s | peer / tgbhub | where |", "|" + " --- |" * 5]
    lines += [f"| {row['what']} | {row['tgbhub_s']:.4f} | {row['peer_s']:.4f} | {row['ratio']} | {where(record)} |"
              for row in record["data"]["rows"]]
    return lines


def agreement_table(records: Sequence[Mapping[str, Any]]) -> list[str]:
    found = {r["step"]: r for r in records if r["kind"] == "agreement"}
    lines = ["| model | run | largest relative val MSE difference | largest weight difference | agrees | where |",
             "|" + " --- |" * 6]
    rows = [(f"agreement/{m}", m, "PyTorch's defaults") for m in AGREEMENT_MODELS]
    rows += [(f"agreement/{m}-fp32", m, "TF32 off") for m in AGREEMENT_FP32_MODELS]
    for key, model, math in rows:
        record = found.get(key)
        if record is None:
            lines.append(f"| {model} | {math}: not measured yet | | | | |")
            continue
        d = record["data"]
        agrees = f"{'yes' if d['agrees'] else 'no'} (rtol {d['rtol']:g})"
        lines.append(f"| {model} | {math}, {d['epochs']} epoch(s) x {d['batches_per_epoch']} batches, seed 42 | "
                     f"{d['max_rel_val_mse_diff']:.2e} | {d['max_abs_weight_diff']:.2e} | {agrees} | "
                     f"{where(record)} |")
    return lines


def reproductions(records: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    """Reproduction records grouped by ``(instance, model)``, seeds in order."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for record in sorted((r for r in records if r["kind"] == "reproduction"), key=lambda r: r["data"]["seed"]):
        groups.setdefault((record["data"]["dataset"], record["data"]["model"]), []).append(record)
    return groups


def reproduction_table(records: Sequence[Mapping[str, Any]]) -> list[str]:
    groups = reproductions(records)
    lines = ["| instance | model | test MSE per seed | mean +/- std (n) | published mean +/- std | within the band "
             "(3 std or 0.01) | VPT mean (published) | epochs run | GPU minutes a run | where |",
             "|" + " --- |" * 10]
    wanted = [(instance, model) for instance in INSTANCES for model in REPRODUCTION_MODELS]
    wanted += [key for key in groups if key not in wanted]  # a dry run's mini instances
    for instance, model in wanted:
        runs = groups.get((instance, model), [])
        target = published(model, instance)
        target_cell = f"{target['test_mse_mean']:.4f} +/- {target['test_mse_std']:.4f}" if target else "-"
        if not runs:
            lines.append(f"| {instance} | {model} | not run yet (seeds {', '.join(map(str, SEEDS))}) | | "
                         f"{target_cell} | | | | | |")
            continue
        mse = [r["data"]["result_record"]["metrics"]["test_mse"] for r in runs]
        vpt = [r["data"]["result_record"]["metrics"].get("vpt") for r in runs]
        mean = statistics.fmean(mse)
        spread = f"{statistics.stdev(mse):.4f}" if len(mse) > 1 else "-"
        within = "-"
        if target:
            band = max(3 * target["test_mse_std"], 0.01)
            within = "yes" if abs(mean - target["test_mse_mean"]) <= band else "no"
        seeds = ", ".join(f"s{r['data']['seed']}: {m:.4f}" for r, m in zip(runs, mse))
        known = [v for v in vpt if v is not None]
        vpt_cell = f"{statistics.fmean(known):.2f}" if known else "-"
        if target:
            vpt_cell += f" ({target['vpt_mean']:g})"
        epochs = ", ".join(str(r["data"]["result_record"]["model"]["epochs"]) for r in runs)
        minutes = statistics.fmean(r["data"]["result_record"]["model"]["train_seconds"] for r in runs) / 60
        lines.append(f"| {instance} | {model} | {seeds} | {mean:.4f} +/- {spread} ({len(mse)}) | {target_cell} | "
                     f"{within} | {vpt_cell} | {epochs} | {minutes:.1f} | {where(runs[-1])} |")
    return lines


def _seconds(value: float | None) -> str:
    return f"{value:g} s" if value is not None else "-"


def render(records: Sequence[Mapping[str, Any]], figure: Path | None) -> str:
    """The generated part of the page."""
    dry = any(r["dry_run"] for r in records)
    parts = [START, "",
             f"Generated by `scripts/gpu-report` from {len(records)} record(s)"
             + (" (a CPU dry run: rehearsal numbers, not GPU measurements)" if dry else "") + ".", "",
             "**Training speed** (`speed/*`): one train epoch at batch 32, `chaosnet/k0.5-rho0.3-n8`.", "",
             *speed_table(records), "", "**Evaluation on the GPU** (`evaluate`):", "", *evaluate_table(records), "",
             "**GPU vs CPU** (`agreement/*`), the same seed and batches on both:", "", *agreement_table(records), "",
             "**Reproductions** (`reproduction/*`), the published protocol (50 epochs at most, patience 10):", "",
             *reproduction_table(records), ""]
    if figure is not None:
        parts += [f"![GPU checks: epoch seconds and reproduction MSE](figures/{figure.name})", ""]
    parts.append(END)
    return "\n".join(parts)


def draw(records: Sequence[Mapping[str, Any]], path: Path) -> Path | None:
    """Epoch seconds per model (tgbhub, upstream, the goal) and test MSE per seed against the published band; the
    figure is not drawn (``None``) when no record has either."""
    speed = {r["data"]["model"]: r["data"] for r in records if r["kind"] == "speed"}
    groups = reproductions(records)
    if not speed and not groups:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2))
    models = [m for m in SPEED_MODELS if m in speed]
    goal_label = "goal"
    for y, model in enumerate(models):
        d = speed[model]["train_epoch_s"]
        left.barh(y + 0.2, d["tgbhub"], height=0.4, color="#1f5f99", label="tgbhub" if y == 0 else None)
        left.barh(y - 0.2, d["upstream"], height=0.4, color="#d1495b", label="upstream loop" if y == 0 else None)
        if model in GOAL_EPOCH_S:
            left.plot([GOAL_EPOCH_S[model]] * 2, [y - 0.4, y + 0.4], color="black", lw=1.5, label=goal_label)
            goal_label = None
    left.set_yticks(range(len(models)), models)
    left.set_xscale("log")
    left.set_xlabel("seconds per train epoch (batch 32)")
    left.legend(fontsize=8)
    left.set_title("Training speed", fontsize=10)
    for y, ((instance, model), runs) in enumerate(sorted(groups.items())):
        target = published(model, instance)
        mean = target["test_mse_mean"] if target else 0.0
        if target:
            band = max(3 * target["test_mse_std"], 0.01)
            right.barh(y, 2 * band, left=-band, height=0.5, color="#cfe3f5")
        right.plot([r["data"]["result_record"]["metrics"]["test_mse"] - mean for r in runs], [y] * len(runs), "o",
                   color="#d1495b")
    right.set_yticks(range(len(groups)), [f"{m} {i.split('/')[1]}" + ("" if published(m, i) else " (no published mean:"
                                                                       " raw MSE)") for i, m in sorted(groups)],
                     fontsize=8)
    right.axvline(0, color="#1f5f99", lw=0.5)
    right.set_xlabel("test MSE minus the published mean (band: 3 std or 0.01)")
    right.set_title("Reproductions, one dot a seed", fontsize=10)
    dry = " (dry run on CPU: not GPU numbers)" if any(r["dry_run"] for r in records) else ""
    fig.suptitle(f"scripts/gpu-check{dry}", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_page(page: Path, section: str) -> None:
    """Replace the text between the page's markers with ``section`` (a page that does not exist yet is written with
    the section alone).

    Raises:
        ValueError: if the page lacks the markers (naming them).
    """
    if not page.exists():
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"# GPU checks\n\n{section}\n")
        return
    text = page.read_text()
    if START not in text or END not in text:
        raise ValueError(f"{page} has no {START} ... {END} markers: add them where the tables belong")
    head, rest = text.split(START, 1)
    page.write_text(head + section + rest.split(END, 1)[1])


def save(records: Iterable[Mapping[str, Any]], folder: Path) -> int:
    """Copy GPU (not dry-run) records into ``folder``; returns how many."""
    folder.mkdir(parents=True, exist_ok=True)
    kept = 0
    for record in records:
        if not record["dry_run"]:
            shutil.copyfile(record["_path"], folder / Path(record["_path"]).name)
            kept += 1
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path, default=[RECORDS], help="record folders (default "
                        "docs/gpu-records)")
    parser.add_argument("--save", type=Path, metavar="DIR", help="first copy the GPU records read into DIR (e.g. "
                        "docs/gpu-records, to commit them); dry-run records are never copied")
    parser.add_argument("--page", type=Path, default=PAGE)
    parser.add_argument("--figure", type=Path, default=FIGURE)
    args = parser.parse_args(argv)
    records = read_records(args.folders)
    if args.save:
        print(f"gpu-report: kept {save(records, args.save)} GPU record(s) in {args.save}")
    figure = draw(records, args.figure)
    write_page(args.page, render(records, figure))
    print(f"gpu-report: {len(records)} record(s) -> {args.page}" + (f", {figure}" if figure else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
