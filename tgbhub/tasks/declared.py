"""Pure helpers that read declared tasks: candidate pairs, graded snapshot ranges and node-property label-stream
modes (no I/O).

Shared by the evaluators and the baselines, which must agree on what is graded but never import each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

import numpy as np

from tgbhub.errors import InvalidNameError, UnsupportedTaskError
from tgbhub.manifest import Manifest


def candidate_pairs(spec: Mapping[str, Any], num_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """``(src, dst)`` int64 arrays of every candidate pair, in the canonical order.

    ``all-ordered-pairs``: every ``(i, j)``, row-major, ``i != j`` when ``exclude_self_loops`` (100 nodes: 9,900).
    ``incident-to-node``: T-GRAB's concat(row ``k``, column ``k``): ``(k, j)`` for every ``j``, then ``(j, k)``,
    without ``(k, k)`` when ``exclude_self_loops`` (101 nodes: 200).

    Raises:
        UnsupportedTaskError: for a candidate kind this tgbhub does not know.
    """
    kind = spec.get("kind")
    no_loops = bool(spec.get("exclude_self_loops", True))
    if kind == "all-ordered-pairs":
        src, dst = np.divmod(np.arange(num_nodes * num_nodes, dtype=np.int64), num_nodes)
        keep = src != dst if no_loops else np.ones(len(src), dtype=bool)
        return src[keep], dst[keep]
    if kind == "incident-to-node":
        node = int(spec["node"])
        others = np.arange(num_nodes, dtype=np.int64)
        if no_loops:
            others = others[others != node]
        fixed = np.full(len(others), node, dtype=np.int64)
        return np.concatenate([fixed, others]), np.concatenate([others, fixed])
    raise UnsupportedTaskError(f"candidate kind {kind!r} is unknown (known: all-ordered-pairs, incident-to-node); "
                               "upgrade tgbhub")


def pair_index(src: np.ndarray, dst: np.ndarray, num_nodes: int) -> np.ndarray:
    """An ``(N, N)`` int64 table mapping ``(src, dst)`` to its candidate position, ``-1`` for non-candidates."""
    table = np.full((num_nodes, num_nodes), -1, dtype=np.int64)
    table[src, dst] = np.arange(len(src))
    return table


def choose_split(manifest: Manifest, task: Mapping[str, Any], split: str | None) -> str:
    """``split``, or the task's ``report_split`` when ``None``.

    Raises:
        InvalidNameError: if the dataset has no such split.
    """
    chosen = split or str(task.get("report_split", "test"))
    if chosen not in manifest.splits:
        raise InvalidNameError(f"{manifest.name}@{manifest.version} has no split {chosen!r}; its splits are "
                               f"{', '.join(manifest.splits)}")
    return chosen


def graded_snapshots(manifest: Manifest, task: Mapping[str, Any], split: str) -> tuple[int, int]:
    """``[start, stop)`` of the snapshots of ``split`` a snapshot task grades (after its ``skip_leading``).

    Raises:
        InvalidNameError: if the dataset has no such split.
    """
    start, stop = manifest.splits[choose_split(manifest, task, split)]
    return min(stop, start + int(task.get("skip_leading", {}).get(split, 0))), stop


#: why a task's ``skip_leading`` snapshots are left out, when the task does not say (``skip_leading_reason``)
SKIP_LEADING_REASON = ("the task declares them as skip_leading: their true edges are the effects of snapshots "
                       "before the split began (the task's lag), so they are not part of what the split tests; "
                       "T-GRAB's own evaluators skip them too")


class SkippedSnapshots(TypedDict):
    """The snapshots ``first..last`` (inclusive, ``count`` of them) a split's grading leaves out, and why."""

    count: int
    first: int
    last: int
    reason: str


def skipped_snapshots(manifest: Manifest, task: Mapping[str, Any], split: str) -> SkippedSnapshots | None:
    """What the grader leaves out of ``split`` because of the task's ``skip_leading``, ``None`` if nothing.

    Returns ``{"count", "first", "last", "reason"}``: the skipped snapshots are ``first..last`` (inclusive); the
    reason is the task's ``skip_leading_reason[split]`` when it declares one, else :data:`SKIP_LEADING_REASON`.

    Raises:
        InvalidNameError: if the dataset has no such split.
    """
    name = choose_split(manifest, task, split)
    start = manifest.splits[name][0]
    graded_start, _ = graded_snapshots(manifest, task, name)
    if graded_start == start:
        return None
    reason = task.get("skip_leading_reason", {}).get(name) or SKIP_LEADING_REASON
    return {"count": int(graded_start - start), "first": int(start), "last": int(graded_start - 1),
            "reason": str(reason)}


# --- node-property label streams (tgbn): which edges a model sees before a label timestamp ---------------
# Node-property label streams (``tgbn-*``): which edges a model may see before it predicts a label timestamp.
#
# TGB's loop (py-tgb's ``find_next_labels_batch(cur_t)``, handed out once a batch's last edge time passes the label
# time) processes the edges *at* the label timestamp itself before the prediction, so they are part of the visible
# history; a strict protocol hides them. Both are served as a ``mode``:
#
# - ``"tgb-parity"`` (the default; py-tgb's and TGB's leaderboard protocol): the history of label timestamp ``L`` is
#   every edge with ``t <= L``;
# - ``"strict"``: every edge with ``t < L``.
#
# The two agree exactly when no edge lies on a label timestamp. The grader only sees predictions, so the mode is a
# property of how they were made: a submission states it (``ndcg_mode``) and the graded result records it
# (``result["protocol"]["ndcg_mode"]``). The tgm project measured TGN on tgbn-trade at NDCG@10 0.3786 (parity) against
# 0.3727 (strict).

#: each mode and the edges it shows before label timestamp ``L`` (copied into graded results)
NDCG_MODES: dict[str, str] = {
    "tgb-parity": "edges with t <= label time are visible (py-tgb's label stream; TGB's leaderboard protocol)",
    "strict": "only edges with t < label time are visible (the edges at the label timestamp itself are hidden)",
}
DEFAULT_NDCG_MODE = "tgb-parity"


def read_ndcg_mode(value: object) -> str:
    """``value`` as one of :data:`NDCG_MODES` (``None`` means :data:`DEFAULT_NDCG_MODE`).

    Raises:
        InvalidNameError: for any other value, naming it and the modes there are.
    """
    if value is None:
        return DEFAULT_NDCG_MODE
    if value not in NDCG_MODES:
        raise InvalidNameError(f"mode={value!r} is not a node-property label mode; use 'tgb-parity' (edges at the "
                               "label timestamp are visible, py-tgb's protocol, the default) or 'strict' (only "
                               "edges before it)")
    return str(value)


def visible_edges(edge_t: np.ndarray, label_times: np.ndarray, mode: str = DEFAULT_NDCG_MODE) -> np.ndarray:
    """Per label timestamp, how many edges of the time-sorted stream ``edge_t`` its history holds: the history of
    ``label_times[i]`` is ``edges[:out[i]]`` (int64).

    Raises:
        InvalidNameError: for an unknown ``mode``.
        ValueError: if ``edge_t`` is not sorted (the stream must be in time order for a prefix to be a history).
    """
    mode = read_ndcg_mode(mode)
    edge_t = np.asarray(edge_t)
    if len(edge_t) > 1 and (np.diff(edge_t) < 0).any():
        raise ValueError("the edge timestamps are not sorted; sort the stream by time (np.argsort(t, kind='stable')) "
                         "before asking which edges a label timestamp sees")
    # "right" counts the edges at L too (TGB processes them before predicting), "left" stops before them
    side: Literal["left", "right"] = "right" if mode == "tgb-parity" else "left"
    return np.searchsorted(edge_t, np.asarray(label_times), side=side).astype(np.int64)
