"""The generative evaluation of TLPCF (docs/derived.md, "Generative evaluation"): predicted future events scored
against the real test split with ATD/ACD in both directions (:func:`generative_evaluation`), and the three
reference points a generative model should be judged against (:func:`generative_baselines`: the SHUFFLE oracle, the
INTENSE k=1 jittered oracle, and a replay of the validation window shifted to the test window).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from numpy.typing import ArrayLike

from tgbhub.errors import SubmissionError
from tgbhub.evaluate.base import Dataset
from tgbhub.evaluate.counterfactual import json_ready, mean_and_ci
from tgbhub.evaluate.metrics import generative_scores

if TYPE_CHECKING:
    from tgbhub.data import TemporalGraphDataset

#: predicted events: a Parquet file's path, or a mapping with ``src``, ``dst``, ``t`` and optionally ``sample_id``
Candidate = str | os.PathLike[str] | Mapping[str, ArrayLike]


def reference_events(dataset: TemporalGraphDataset, split: str = "test") -> dict[str, np.ndarray]:
    """The events of ``split`` as the generative evaluation's reference: every row, or for a symmetric dataset (both
    directions stored) the rows with ``src < dst``, one per undirected edge, as the ranking queries.

    Raises:
        InvalidNameError: if the dataset has no split ``split``.
    """
    rows = dataset.split(split)
    src, dst, t = np.asarray(rows.src), np.asarray(rows.dst), np.asarray(rows.t, dtype=np.float64)
    if dataset.manifest.graph.get("symmetric"):
        keep = src < dst
        src, dst, t = src[keep], dst[keep], t[keep]
    return {"src": src, "dst": dst, "t": t}


def _candidate_events(candidate: Candidate, symmetric: bool) -> dict[int, dict[str, np.ndarray]]:
    """Predicted events per ``sample_id`` (0 when absent); for a symmetric dataset each edge as ``(min, max)``.

    Raises:
        SubmissionError: if the file cannot be read or lacks ``src``, ``dst`` or ``t``.
    """
    if isinstance(candidate, (str, os.PathLike)):
        try:
            table = pq.read_table(candidate)
        except (OSError, pa.ArrowInvalid) as exc:
            raise SubmissionError("t", None, f"cannot read {os.fspath(candidate)!r} as Parquet ({exc})",
                                  "Write the predicted events (src, dst, t[, sample_id]) as Parquet") from exc
        candidate = {name: table.column(name).to_numpy() for name in table.column_names}
    columns = dict(candidate)
    for name in ("src", "dst", "t"):
        if name not in columns:
            raise SubmissionError(name, None, f"is missing (got {', '.join(columns) or 'none'})",
                                  "Give the predicted events as columns src, dst, t (and optionally sample_id)")
    src, dst = np.asarray(columns["src"]), np.asarray(columns["dst"])
    t = np.asarray(columns["t"], dtype=np.float64)
    if symmetric:
        src, dst = np.minimum(src, dst), np.maximum(src, dst)
    sample = np.asarray(columns.get("sample_id", np.zeros(len(t), dtype=np.int64)), dtype=np.int64)
    return {int(s): {"src": src[sample == s], "dst": dst[sample == s], "t": t[sample == s]}
            for s in np.unique(sample)} or {0: {"src": src, "dst": dst, "t": t}}


GENERATIVE_KEYS = ("atd", "acd", "atd_reverse", "acd_reverse", "atd_symmetric", "acd_symmetric", "count_ratio",
                   "fallback_count", "fallback_count_reverse")


def generative_evaluation(real: Dataset, candidate: Candidate, *, fallback: str = "cap",
                          clip_to_reference_window: bool = False, directed: bool = True) -> dict[str, Any]:
    """ATD/ACD of predicted events against ``real``'s test split, per sample and summarised.

    ``candidate`` is a Parquet path or a mapping with ``src``, ``dst``, ``t`` and optionally ``sample_id`` (several
    generated samples: each is scored and the summary gives mean and CI95 over samples). For a symmetric dataset
    each undirected event counts once: predict each once, in either orientation. Options are
    :func:`tgbhub.evaluate.metrics.generative_scores`' (``fallback`` "cap" | "horizon_end" | "error").

    Returns ``{"dataset", "version", "options", "per_sample": {id: scores}, "summary": {key: {"mean", "ci"}},
    "T", "tau_bar", "n_ref"}``.

    Raises:
        SubmissionError: for an unreadable candidate or a missing column.
        ScoreError: as :func:`tgbhub.evaluate.metrics.generative_scores` (bad fallback, malformed arrays, ...).
    """
    graph = cast("TemporalGraphDataset", real)  # a temporal graph: a trajectory dataset has no events to score
    reference = reference_events(graph)
    samples = _candidate_events(candidate, bool(real.manifest.graph.get("symmetric")))
    options = {"fallback": fallback, "clip_to_reference_window": clip_to_reference_window, "directed": directed}
    per_sample = {sid: generative_scores(reference, events, fallback=fallback, directed=directed,
                                         clip_to_reference_window=clip_to_reference_window)
                  for sid, events in samples.items()}
    summary = {}
    for key in GENERATIVE_KEYS:
        values = [float(s[key]) for s in per_sample.values() if math.isfinite(float(s[key]))]
        mean, ci = mean_and_ci(values)
        # one sample has no spread to estimate: its CI is unknown (NaN, null in JSON), not 0
        summary[key] = {"mean": mean, "ci": ci if len(values) > 1 else math.nan}
    first = next(iter(per_sample.values()))
    return {"dataset": real.manifest.name, "version": real.manifest.version, "options": options,
            "per_sample": {str(k): json_ready(v) for k, v in per_sample.items()}, "summary": summary,
            "T": first["T"], "tau_bar": first["tau_bar"], "n_ref": first["n_ref"]}


def replay_validation(real: TemporalGraphDataset) -> dict[str, np.ndarray]:
    """The "replay" baseline: the validation split's events shifted by ``test start - validation start``.

    Split starts are the first timestamps of each split (its boundary in snapshot units).

    Raises:
        InvalidNameError: if the dataset lacks a ``val`` or ``test`` split.
    """
    val, test = reference_events(real, "val"), reference_events(real, "test")
    snapshots = real.snapshot_splits
    if snapshots is not None:  # discrete time: the boundary snapshots, even where a split starts empty
        shift = float(snapshots["test"][0] - snapshots["val"][0])
    else:
        shift = float(test["t"].min() - val["t"].min())
    return {"src": val["src"], "dst": val["dst"], "t": val["t"] + shift}


def generative_baselines(real: Dataset, shuffles: Sequence[Dataset] = (), jittered: Sequence[Dataset] = (),
                         **options: Any
                         ) -> dict[str, dict[str, Any]]:
    """The reference points of the generative evaluation, scored like a model (:func:`generative_evaluation`).

    - ``shuffle-oracle``: knows the exact test pair multiset and timestamps, permuted (the SHUFFLE variants given);
    - ``intense-k1-oracle``: every test event jittered by U(-tau_bar, tau_bar) (the INTENSE k=1 variants given);
    - ``replay-val``: the validation window replayed, shifted to the test start (:func:`replay_validation`).

    Each variant list is scored as samples (mean and CI95 over seeds); an empty list leaves that baseline out.

    Raises:
        ScoreError: as :func:`generative_evaluation`.
    """
    graph = cast("TemporalGraphDataset", real)  # temporal graphs, as generative_evaluation's
    out = {"replay-val": generative_evaluation(real, replay_validation(graph), **options)}
    for label, variants in (("shuffle-oracle", shuffles), ("intense-k1-oracle", jittered)):
        if not variants:
            continue
        streams = [reference_events(cast("TemporalGraphDataset", v)) for v in variants]
        stacked = {key: np.concatenate([s[key] for s in streams]) for key in ("src", "dst", "t")}
        stacked["sample_id"] = np.repeat(np.arange(len(streams)), [len(s["t"]) for s in streams])
        out[label] = generative_evaluation(real, stacked, **options)
    return out


def generative_lines(result: Mapping[str, Any], baselines: Mapping[str, Mapping[str, Any]] | None = None
                     ) -> list[str]:
    """The generative evaluation as text: one line per scored stream, the model first, then the baselines."""
    keys = ("atd", "acd", "atd_reverse", "acd_reverse", "atd_symmetric", "acd_symmetric", "count_ratio")
    lines = [f"{result['dataset']}@{result['version']}: generative ATD/ACD against the real test split "
             f"(T {result['T']:.6g}, tau_bar {result['tau_bar']:.6g}, {result['n_ref']} events; {result['options']})",
             f"  {'stream':<18}" + "".join(f"{k:>15}" for k in keys) + f"{'fallbacks':>11}"]
    for label, scored in [("predictions", result), *(baselines or {}).items()]:
        summary = scored["summary"]
        lines.append(f"  {label:<18}" + "".join(f"{summary[k]['mean']:>15.5g}" for k in keys)
                     + f"{summary['fallback_count']['mean']:>11.4g}")
    return lines
