"""Node property prediction (``node-property-ndcg``, tgbn-*): ``period-activity``, each labelled node's class scores
from its own edges of the last label period, seen through a label-stream ``mode``
(:mod:`tgbhub.tasks.declared`).

The scores of ``(L, node)`` are the summed edge weights (``weight`` column; 1 per edge without it) from ``node`` to
each class ``c`` (``dst = c``; tgbn's classes are destination ids below the label width) over the edges between the
previous label timestamp's history and ``L``'s: with ``mode="tgb-parity"`` the edges with ``L_prev < t <= L``, with
``mode="strict"`` those with ``L_prev <= t < L``. A node without edges there gets all-zero scores (a constant
predictor: NDCG averages its ties). The model is a persistence of the node's edge mix, and it reads nothing but the
visible history, so the two modes give the same submission exactly when no edge lies on a label timestamp.

``tgbhub baseline period-activity:mode=strict tgb/tgbn-trade`` runs the strict protocol; the graded result records
the mode (``protocol.ndcg_mode``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from tgbhub.baselines.registry import register_baseline
from tgbhub.errors import InvalidNameError
from tgbhub.tasks.declared import DEFAULT_NDCG_MODE, read_ndcg_mode, visible_edges

if TYPE_CHECKING:
    from tgbhub.data import TemporalGraphDataset

TASK_TYPE = "node-property-ndcg"


class NodePropertySubmission(dict[str, np.ndarray]):
    """The submission columns (``t``, ``node``, ``scores``), plus ``ndcg_mode``: the label-stream mode the scores
    were made under, which the evaluator records in the result (a file cannot carry it: pass ``mode=`` there)."""

    ndcg_mode: str = DEFAULT_NDCG_MODE


def period_activity(dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str,
                    mode: str = DEFAULT_NDCG_MODE) -> NodePropertySubmission:
    """The ``period-activity`` scores of every label row ``split`` grades (see the module docstring).

    Raises:
        InvalidNameError: for an unknown ``mode``, or a split that grades no label rows.
        IntegrityError: if the dataset was opened without its labels file.
    """
    mode = read_ndcg_mode(mode)
    spec = task["labels"]
    lo, hi = (int(x) for x in spec["rows"].get(split, (0, 0)))
    if hi <= lo:
        raise InvalidNameError(f"{dataset.manifest.name}: split {split!r} grades no label rows; run a split of "
                               f"{', '.join(s for s, (a, b) in spec['rows'].items() if b > a) or 'none'}")
    labels = dataset.artifact(spec["file"])
    width = int(spec["width"])
    t, node = np.asarray(labels["t"][lo:hi]), np.asarray(labels["node"][lo:hi], dtype=np.int64)
    order = np.argsort(dataset.t, kind="stable")  # imports are time-sorted already; a prefix needs it
    edge_t, src, dst = (np.asarray(a)[order] for a in (dataset.t, dataset.src, dataset.dst))
    weight = (np.asarray(dataset.columns["weight"], dtype=np.float64)[order] if "weight" in dataset.columns
              else np.ones(len(edge_t)))
    every = np.unique(np.asarray(labels["t"]))  # the whole stream: a split's first period starts at the one before
    ends = visible_edges(edge_t, every, mode)
    starts = np.concatenate([[0], ends[:-1]])
    scores = np.zeros((hi - lo, width), dtype=np.float64)
    times, first = np.unique(t, return_index=True)
    bounds = [*first.tolist(), len(t)]
    for i, when in enumerate(times):
        a, b = bounds[i], bounds[i + 1]
        k = int(np.searchsorted(every, when))
        e_src, e_dst, e_w = src[starts[k]:ends[k]], dst[starts[k]:ends[k]], weight[starts[k]:ends[k]]
        batch = node[a:b]  # sorted: label rows sort by (t, node)
        row = np.minimum(np.searchsorted(batch, e_src), len(batch) - 1)
        mine = (batch[row] == e_src) & (e_dst >= 0) & (e_dst < width)
        np.add.at(scores, (a + row[mine], e_dst[mine].astype(np.int64)), e_w[mine])
    out = NodePropertySubmission(t=t.astype(np.int64), node=node, scores=scores)
    out.ndcg_mode = mode
    return out


@register_baseline(TASK_TYPE, "period-activity", options={"mode": read_ndcg_mode})
def on_labels(dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str, mode: str = DEFAULT_NDCG_MODE
              ) -> NodePropertySubmission:
    return period_activity(dataset, task, split, mode)
