"""One heuristic evaluated both ways: window forecasting (the graded task) and the legacy fixed-size batches.

The link-forecasting paper's point (docs/forecasting.md) is that batch evaluation depends on the batch
size. :func:`compare_protocols` makes that visible for any temporal graph: the window task's AUC/AP next to the
batch protocol's for several batch sizes, same model, same split, and the relative change
``(forecast - prediction) / prediction`` of the paper's Tables 13/14.

The batch protocol is DyGLib's: batch ``i`` holds events ``b*i .. b*(i+1)-1`` of the split, the model's history is
every event before the batch's first one (earlier batches of the same timestamp included: the leakage the paper
measures), and each batch gets one historical negative per event, drawn like the window task's (the pool and the
exclusions follow the batch's time range ``[first t, last t]``). Batch negatives are drawn on the fly (they are a
diagnostic, not a graded task), by the same deterministic generator as the window task's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tgbhub.baselines import run_baseline
from tgbhub.baselines.forecast import MEMORIES, score_groups
from tgbhub.errors import UnsupportedTaskError
from tgbhub.evaluate.metrics import grouped_auroc_ap
from tgbhub.forecasting.windows import batch_index, events, pair_code
from tgbhub.local.gateway import batch_negatives

WINDOW_TASK = "window-forecast"


def batch_scores(dataset: Any, model: str, batch_size: int, split: str = "test", seed: int = 0) -> dict[str, Any]:
    """AUC/AP of ``model`` under fixed-size batch evaluation (mean over batches, and pooled).

    Raises:
        InvalidNameError: for an unknown split or a batch size below 1.
        UnsupportedTaskError: if ``model`` is not a window-forecasting heuristic.
    """
    if model not in (*MEMORIES, "edgebank-train"):
        raise UnsupportedTaskError(f"no window-forecasting heuristic {model!r} for the batch protocol; available: "
                                   f"{', '.join((*MEMORIES, 'edgebank-train'))}")
    ev = events(dataset)
    index = batch_index(ev, split, batch_size)
    neg_src, neg_dst, _ = batch_negatives(ev.pair_codes(), ev.t, index.lo, index.hi, ev.num_nodes, ev.symmetric,
                                          f"{dataset.name}@{dataset.version}|batches-{batch_size}", split, seed)
    lo, hi = ev.range(split)
    group = index.window_of(np.arange(lo, hi))
    fixed = ev.range("train")[1] if model == "edgebank-train" else None
    pos, neg = score_groups(model, ev, index, ev.pair_codes()[lo:hi], pair_code(neg_src, neg_dst, ev.num_nodes),
                            group, fixed)
    _, auc, ap = grouped_auroc_ap(group, pos, neg)
    return {"protocol": f"batch b={batch_size}", "batches": len(index), "auc": float(auc.mean()),
            "ap": float(ap.mean())}


def compare_protocols(dataset: Any, model: str = "edgebank-tw", batch_sizes: Sequence[int] = (200, 800),
                      split: str = "test") -> list[dict[str, Any]]:
    """Rows ``{protocol, auc, ap, delta_auc_pct, delta_ap_pct}``: the window task's result first, then the batch
    protocol's for each batch size, each with the paper's relative change of the window result against it.

    >>> rows = compare_protocols(tgbhub.load_dataset("t-grab/ce-64"), "edgebank-tw")   # doctest: +SKIP

    Raises:
        ManifestError: if the dataset declares no window-forecasting task.
        UnsupportedTaskError: if ``model`` is not a window-forecasting heuristic.
        InvalidNameError: for an unknown split or a bad batch size.
    """
    task = dataset.manifest.task_named(WINDOW_TASK)
    graded = dataset.get_evaluator(WINDOW_TASK).evaluate(run_baseline(model, dataset, task, split), split=split)
    window = {"protocol": f"window h={task['horizon']['value']} {task['horizon']['unit']}",
              "windows": graded["num_graded_windows"], "auc": graded["metrics"]["auc"],
              "ap": graded["metrics"]["ap"]}
    rows = [window]
    for size in batch_sizes:
        row = batch_scores(dataset, model, size, split)
        row["delta_auc_pct"] = 100.0 * (window["auc"] - row["auc"]) / row["auc"]
        row["delta_ap_pct"] = 100.0 * (window["ap"] - row["ap"]) / row["ap"]
        rows.append(row)
    return rows
