"""The counterfactual sanity check of temporal link prediction (TLPCF, Rahman, Modell and Coon), over datasets and
scores the caller hands in (the generative ATD/ACD evaluation is :mod:`tgbhub.evaluate.generative`).

The harness never runs a model itself (the evaluator layer must not import the baselines): a model enters either as
a callable ``predict(dataset, task, run) -> submission`` (a ranking-task submission: ``query``, ``pos_score``,
``neg_scores``) or as precomputed predictions in the long format below. :func:`tgbhub.counterfactual` wires the
registered baselines to it.

Conditions
----------
The *real* condition is the base dataset's test split under its ``ranking`` task; a *distorted* condition is one
derived variant (``<family>/<base>~shuffle-s3``) under ``ranking`` (``paired`` negatives: each query has the
parent's negatives of its ``orig_event_id``, so real and variant differ only in time) or ``ranking-regenerated``
(hist-rnd recomputed on the distorted stream). Variants are grouped by *kind* (``shuffle``, ``intense-k5``,
``intense-k1``); the seeds of one kind are its samples.

Metrics per condition and run: MRR and Hits@{1,3,10} of the ranking task, and AU-ROC and AP of the same scores
*pooled* as a binary problem: every query's positive score (label 1) against every real negative score of every
query (label 0), i.e. 1:q positives to negatives (q = 20 on T-GRAB, padding slots excluded). The paper used 1:1 with
one random negative per positive; pooled 1:q keeps all the information of the ranking task's negatives.

n and CI
--------
A distorted kind's sample is one value per (seed, run). The real condition has one value per run. A deterministic
scorer (every heuristic here; one run) has no run-to-run variance, so its single real value is *replicated once per
distorted value* (n_real = n_distorted) and its CI is exactly 0: the threshold is then ``-CI_distorted``. A model
with R > 1 runs (seeds) keeps its R real values (n_real = R). The gap test, flags and verdict are
:func:`tgbhub.evaluate.counterfactual_stats.compare`'s (CI-overlap ``significant_drop``, ``margin_drop`` at
``epsilon``, Welch p as an extra).

Validity precheck
-----------------
SHUFFLE is no distortion for a stream in which pair identity and time are already independent: then the real test
split is itself distributed like a shuffle of it. The precheck compares the symmetric ATD and ACD between the real
split and each shuffle with the same distances between two shuffles (seed i against seed i+1). Under the null the
real split is exchangeable with its shuffles, so both samples come from one distribution. If neither differs (Welch
p >= 0.01), the real split
is indistinguishable from its shuffles, the precheck fails, and every SHUFFLE verdict is ``inconclusive`` with that
reason (``compare(..., distortion_is_effective=False)``). It needs at least two shuffle seeds; INTENSE always
changes per-pair counts (k > 1) or timing (k = 1), so it is not prechecked.

Long-format predictions
-----------------------
One row per scored (condition, run, query, candidate):

=========== ======= ==================================================================================================
``variant`` string  ``"real"`` or the variant's canonical name, e.g. ``<family>/<base>~shuffle-s0`` (``@version``
                    allowed)
``run``     int64   the run (training seed) the scores come from; a deterministic model writes 0
``query``   int64   the query: its row in the condition's negatives file, the ``query`` of a ranking-task
                    submission (``edge_id`` is accepted as the column's name too). For a variant, query ``i``'s
                    parent event is ``orig_event_id`` of its test row (see :func:`query_orig_ids`)
``neg_rank`` int64  -1 for the query's true destination, ``0..count[query]-1`` for its negatives in the order of the
                    negatives file's row (padding slots get no row)
``score``   float   the model's score; higher means more likely
=========== ======= ==================================================================================================
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from numpy.typing import ArrayLike

from tgbhub.errors import MissingExtraError, ScoreError, SubmissionError
from tgbhub.evaluate.base import Dataset
from tgbhub.evaluate.counterfactual_stats import CAPTURES, FAILS, INCONCLUSIVE, compare, mean_ci95, welch_p
from tgbhub.evaluate.graded import Graded
from tgbhub.evaluate.metrics import auroc, average_precision, generative_scores
from tgbhub.evaluate.ranking import RankingEvaluator
from tgbhub.evaluate.submission import ListColumn, Submission, read_submission

if TYPE_CHECKING:
    from tgbhub.data import TemporalGraphDataset

REAL = "real"
SETTING = "transductive"
METRICS = ("mrr", "hits@1", "hits@3", "hits@10", "auroc", "ap")
NEGATIVE_MODES = {"paired": "ranking", "regenerated": "ranking-regenerated"}
#: the task of the real condition: the base dataset's own hist-rnd negatives on the real stream
REAL_TASK = "ranking"
PRECHECK_ALPHA = 0.01
LONG_COLUMNS = ("variant", "run", "query", "neg_rank", "score")

#: ``predict(dataset, task_name, run) -> ranking-task submission`` (``query``, ``pos_score``, ``neg_scores``)
Predict = Callable[["TemporalGraphDataset", str, int], Submission]


# ---------------------------------------------------------------------------------------------------------------------
# Conditions
# ---------------------------------------------------------------------------------------------------------------------


def seed_list(text: str) -> list[int]:
    """``"0-9"``, ``"0,2,5"`` or ``"3"`` as a list of seeds (ranges inclusive).

    Raises:
        ScoreError: if ``text`` is not such a list.
    """
    seeds: list[int] = []
    try:
        for part in str(text).split(","):
            lo, dash, hi = part.strip().partition("-")
            seeds.extend(range(int(lo), int(hi) + 1) if dash else [int(lo)])
    except ValueError:
        raise ScoreError(f"seeds {text!r} is not a seed list; write e.g. 0-9, 0,3,7 or 2") from None
    if not seeds or min(seeds) < 0:
        raise ScoreError(f"seeds {text!r} names no non-negative seed; write e.g. 0-9")
    return seeds


def kind_label(transform: Mapping[str, Any]) -> str:
    """``shuffle`` or ``intense-k5``: a transform's kind and its parameters (``scope`` left out), as in its name."""
    params = {k: v for k, v in transform["params"].items() if k != "scope"}
    return transform["kind"] + "".join(f"-{key}{value}" for key, value in sorted(params.items()))


@dataclass(frozen=True)
class Condition:
    """One graded condition: the real test split (``kind == "real"``) or one distorted variant."""

    variant: str
    kind: str
    seed: int | None
    dataset: TemporalGraphDataset
    task: str


def conditions(real: TemporalGraphDataset, variants: Iterable[TemporalGraphDataset], negatives: str = "paired"
               ) -> list[Condition]:
    """The real condition and one per variant, each bound to the task its negatives mode grades.

    Raises:
        ScoreError: for an unknown ``negatives`` mode, or a variant whose parent is not ``real``'s dataset.
    """
    if negatives not in NEGATIVE_MODES:
        raise ScoreError(f"negatives={negatives!r} is not one of {', '.join(map(repr, NEGATIVE_MODES))}; 'paired' "
                         "gives each distorted query its real event's negatives, 'regenerated' recomputes them")
    out = [Condition(REAL, REAL, None, real, REAL_TASK)]
    parent = f"{real.manifest.name}@{real.manifest.version}"
    for variant in variants:
        manifest = variant.manifest
        if manifest.derived_from != parent:
            raise ScoreError(f"{manifest.name} is derived from {manifest.derived_from!r}, not from {parent}; pass "
                             f"variants of {parent} only")
        transform = cast("dict[str, Any]", manifest.transform)  # derived (checked above): it has a transform
        out.append(Condition(manifest.name, kind_label(transform), int(transform["seed"]), variant,
                             NEGATIVE_MODES[negatives]))
    return out


def query_orig_ids(dataset: TemporalGraphDataset) -> np.ndarray:
    """The parent test event (= the parent's query row) of every query of a variant's test split, in query order.

    Queries are the test rows with ``src < dst`` (one per undirected edge), in row order; a base dataset's queries
    are their own events, so it returns ``arange(n_queries)``.
    """
    test = dataset.split("test")
    queries = np.flatnonzero(np.asarray(test.src) < np.asarray(test.dst))
    if "orig_event_id" not in dataset.columns or dataset.manifest.derived_from is None:
        return np.arange(len(queries), dtype=np.int64)
    start = dataset.splits["test"][0]
    return np.asarray(dataset.columns["orig_event_id"])[start + queries].astype(np.int64)


def condition_metrics(dataset: TemporalGraphDataset, task: str, submission: Submission) -> dict[str, float]:
    """MRR and Hits@K of ``submission`` under ``task`` on the test split, plus pooled AU-ROC and AP.

    AU-ROC and AP take every positive score against every real negative score of every query (1:q, padding
    excluded); see the module docstring.

    Raises:
        SubmissionError: for a malformed submission (through the ranking evaluator).
        ManifestError: if ``dataset`` declares no task ``task``.
    """
    return dict(condition_result(dataset, task, submission)["metrics"])


def condition_result(dataset: TemporalGraphDataset, task: str, submission: Submission) -> dict[str, Any]:
    """The ranking evaluator's result of ``submission`` on one condition, its metrics with AU-ROC and AP added (see
    :func:`condition_metrics`).

    Raises:
        SubmissionError, ManifestError: as :func:`condition_metrics`.
    """
    chosen = dataset.manifest.task_named(task)
    evaluator = RankingEvaluator(dataset.manifest, chosen, dataset)
    graded = evaluator.evaluate(submission, split="test")
    columns = read_submission(submission, chosen, non_finite_fix=evaluator.non_finite_fix)
    negatives: ListColumn = columns["neg_scores"]
    pos = np.asarray(columns["pos_score"], dtype=np.float64)
    neg = np.asarray(negatives.values, dtype=np.float64)
    return {**graded, "metrics": {**graded["metrics"], "auroc": auroc(pos, neg), "ap": average_precision(pos, neg)}}


# ---------------------------------------------------------------------------------------------------------------------
# Long-format predictions
# ---------------------------------------------------------------------------------------------------------------------


def _long_table(source: Submission) -> pa.Table:
    """A long-format predictions table from a Parquet path, a ``pyarrow.Table`` or a mapping of columns.

    Raises:
        SubmissionError: if the file cannot be read or a column is missing.
    """
    if isinstance(source, (str, os.PathLike)):
        try:
            table = pq.read_table(source)
        except (OSError, pa.ArrowInvalid) as exc:
            raise SubmissionError("variant", None, f"cannot read {os.fspath(source)!r} as Parquet ({exc})",
                                  "Write the predictions with pyarrow.parquet.write_table or df.to_parquet") from exc
    elif isinstance(source, pa.Table):
        table = source
    else:
        table = pa.table({k: (v if isinstance(v, (pa.Array, pa.ChunkedArray)) else np.asarray(v))
                          for k, v in dict(source).items()})
    if "query" not in table.column_names and "edge_id" in table.column_names:
        table = table.rename_columns(["query" if n == "edge_id" else n for n in table.column_names])
    for name in LONG_COLUMNS:
        if name not in table.column_names:
            raise SubmissionError(name, None, f"is missing (the file has {', '.join(table.column_names) or 'none'})",
                                  f"Write the long format's columns {', '.join(LONG_COLUMNS)} (module docstring of "
                                  "tgbhub.evaluate.counterfactual)")
    return table


def _integers(table: pa.Table, name: str) -> np.ndarray:
    column = table.column(name)
    if not pa.types.is_integer(column.type) or column.null_count:
        raise SubmissionError(name, None, f"has type {column.type} with {column.null_count} null(s)",
                              f"Write {name!r} as non-null int64")
    return column.to_numpy().astype(np.int64)


def read_predictions(source: Submission) -> dict[tuple[str, int], dict[str, ArrayLike]]:
    """Long-format predictions as ranking-task submissions, one per ``(variant, run)``.

    ``variant`` names lose any ``@version``. Each submission has ``query``, ``pos_score`` and ``neg_scores`` (a list
    column in ``neg_rank`` order); whether every query and negative is present is checked against the condition's
    negatives when it is graded.

    Raises:
        SubmissionError: naming the column, the first bad row and the fix: a missing column, a null, a non-integer
            ``run``/``query``/``neg_rank``, a NaN/inf ``score``, ``neg_rank < -1``, a repeated
            ``(variant, run, query, neg_rank)``, a query without its positive, or negatives with gaps in ``neg_rank``.
    """
    table = _long_table(source)
    variant = np.asarray([str(v).partition("@")[0] for v in table.column("variant").to_pylist()], dtype=object)
    run, query, rank = _integers(table, "run"), _integers(table, "query"), _integers(table, "neg_rank")
    score = table.column("score").to_numpy(zero_copy_only=False).astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(score))
    if bad.size:
        raise SubmissionError("score", int(bad[0]), f"is {score[bad[0]]!r}", "Every score must be finite: replace "
                              "NaN/inf, e.g. np.nan_to_num(scores, nan=-1e9)")
    if (rank < -1).any():
        row = int(np.flatnonzero(rank < -1)[0])
        raise SubmissionError("neg_rank", row, f"is {int(rank[row])}", "Use -1 for the positive and 0..count-1 for "
                              "the query's negatives")
    out: dict[tuple[str, int], dict[str, ArrayLike]] = {}
    names, codes = np.unique(variant, return_inverse=True)
    for code, name in enumerate(names):
        for r in np.unique(run[codes == code]):
            rows = np.flatnonzero((codes == code) & (run == r))
            out[(str(name), int(r))] = _submission(rows, query[rows], rank[rows], score[rows])
    return out


def _submission(rows: np.ndarray, query: np.ndarray, rank: np.ndarray, score: np.ndarray) -> dict[str, ArrayLike]:
    """One condition's long rows as a ranking submission (``rows`` are the file rows, for error messages).

    Raises:
        SubmissionError: for a repeated (query, neg_rank), a query without positive, or a gap in its neg_rank.
    """
    order = np.lexsort((rank, query))
    query, rank, score, rows = query[order], rank[order], score[order], rows[order]
    repeated = np.flatnonzero((query[1:] == query[:-1]) & (rank[1:] == rank[:-1]))
    if repeated.size:
        row = int(rows[repeated[0] + 1])
        raise SubmissionError("neg_rank", row, f"repeats (query {int(query[row == rows][0])}, neg_rank "
                              f"{int(rank[repeated[0] + 1])}) of the same variant and run", "Write each score once")
    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    lengths = np.diff(np.r_[starts, query.size])
    no_positive = np.flatnonzero(rank[starts] != -1)
    if no_positive.size:
        first = starts[no_positive[0]]
        raise SubmissionError("neg_rank", int(rows[first]), f"query {int(query[first])} has no row with neg_rank -1",
                              "Give every query its positive's score (neg_rank -1)")
    expected = np.arange(query.size) - np.repeat(starts, lengths) - 1   # -1, 0, 1, ... within each query
    gap = np.flatnonzero(rank != expected)
    if gap.size:
        raise SubmissionError("neg_rank", int(rows[gap[0]]), f"is {int(rank[gap[0]])} where "
                              f"{int(expected[gap[0]])} comes next for query {int(query[gap[0]])}",
                              "Score the query's negatives 0..count-1 without gaps")
    negatives = np.ones(query.size, dtype=bool)
    negatives[starts] = False
    offsets = np.r_[0, np.cumsum(lengths - 1)].astype(np.int32)
    return {"query": query[starts], "pos_score": score[starts].astype(np.float32),
            "neg_scores": pa.ListArray.from_arrays(pa.array(offsets), pa.array(score[negatives].astype(np.float32)))}


def long_format(submission: Mapping[str, Any], variant: str, run: int = 0) -> pa.Table:
    """A ranking-task submission (``query``, ``pos_score``, ``neg_scores``) as long-format rows of one condition.

    Raises:
        SubmissionError: if a column is missing.
    """
    for name in ("query", "pos_score", "neg_scores"):
        if name not in submission:
            raise SubmissionError(name, None, "is missing", "Pass a ranking-task submission")
    lists = submission["neg_scores"]
    lists = lists if isinstance(lists, (pa.Array, pa.ChunkedArray)) else pa.array(list(map(list, lists)))
    if isinstance(lists, pa.ChunkedArray):
        lists = lists.combine_chunks()
    lengths = np.asarray(pc.list_value_length(lists).to_numpy(zero_copy_only=False), dtype=np.int64)
    values = np.asarray(pc.list_flatten(lists).to_numpy(zero_copy_only=False), dtype=np.float64)
    query = np.asarray(submission["query"], dtype=np.int64)
    pos = np.asarray(submission["pos_score"], dtype=np.float64)
    neg_query = np.repeat(query, lengths)
    neg_rank = np.arange(values.size) - np.repeat(np.r_[0, np.cumsum(lengths)[:-1]], lengths)
    n = query.size + values.size
    return pa.table({"variant": pa.array([variant] * n), "run": np.full(n, run, dtype=np.int64),
                     "query": np.r_[query, neg_query], "neg_rank": np.r_[np.full(query.size, -1), neg_rank],
                     "score": np.r_[pos, values]})


# ---------------------------------------------------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------------------------------------------------


@dataclass
class Report:
    """What :func:`evaluate_counterfactual` found: one row per (model, setting, kind, metric), plus the raw values.

    ``values[(model, condition)][metric]`` lists the metric per run (``condition`` is ``"real"`` or a variant name);
    ``graded`` holds each (model, condition, run) as the one result type of graded runs
    (:class:`~tgbhub.evaluate.graded.Graded`, ``kind="counterfactual"``); ``distances[kind]`` the kind's ATD/ACD
    against the real test split; ``validity[kind]`` the precheck.
    """

    dataset: str
    version: str
    negatives: str
    epsilon: float
    models: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)
    values: dict[tuple[str, str], dict[str, list[float]]] = field(default_factory=dict)
    graded: list[Graded] = field(default_factory=list)
    distances: dict[str, dict[str, float]] = field(default_factory=dict)
    validity: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the kind of every distorted condition (variant name -> ``shuffle``, ``intense-k5``, ...)
    kind_of: dict[str, str] = field(default_factory=dict)
    #: why :meth:`write` drew no plot (matplotlib missing), else ``None``
    plot_skipped: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: settings, validity, distances and the rows (NaN written as ``null``)."""
        return json_ready({"dataset": self.dataset, "version": self.version, "negatives": self.negatives,
                           "epsilon": self.epsilon, "models": self.models, "setting": SETTING,
                           "validity": self.validity, "distances": self.distances, "rows": self.rows})

    def write(self, folder: str | os.PathLike[str]) -> dict[str, Path]:
        """Write ``counterfactual.json``, ``counterfactual.parquet`` and (with matplotlib) ``counterfactual.png``.

        Returns the paths written (``plot`` is absent when matplotlib is missing: ``plot_skipped`` says why).

        Raises:
            OSError: if ``folder`` cannot be created or written.
        """
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        written = {"json": out / "counterfactual.json", "parquet": out / "counterfactual.parquet"}
        written["json"].write_text(json.dumps(self.to_json(), indent=1, sort_keys=True, allow_nan=False))
        pq.write_table(pa.Table.from_pylist(self.rows), written["parquet"])
        try:
            written["plot"] = plot_report(self, out / "counterfactual.png")
        except MissingExtraError as exc:
            self.plot_skipped = str(exc)
        return written


def json_ready(value: object) -> Any:
    """``value`` with every non-finite float (NaN, inf) replaced by ``None``, recursively, and numpy scalars as
    Python numbers: strict JSON has no NaN."""
    if isinstance(value, Mapping):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _replicated(real: list[float], n_distorted: int) -> list[float]:
    """The real sample: one value (a deterministic run) stands for every distorted sample, so its CI is 0."""
    return real * n_distorted if len(real) == 1 else real


def mean_and_ci(values: Sequence[float]) -> tuple[float, float]:
    """Mean and Student-t CI95 half-width of ``values``; ``(nan, nan)`` for none."""
    if not values:
        return math.nan, math.nan
    mean, ci, _ = mean_ci95(np.asarray(values, dtype=np.float64))
    return mean, ci


def kind_distances(variants: Sequence[TemporalGraphDataset]) -> dict[str, float]:
    """ATD and ACD (mean and CI95 over seeds) of one kind's variants against the real test split, read from their
    manifests' ``stats["distance_to_parent_test"]``.

    Raises:
        ScoreError: if a variant's manifest records no distance.
    """
    atd, acd = [], []
    for variant in variants:
        found = variant.manifest.stats.get("distance_to_parent_test")
        if not found:
            raise ScoreError(f"{variant.manifest.name} records no stats['distance_to_parent_test']; rebuild its "
                             "manifest with the tlpcf generator")
        atd.append(float(found["atd"]))
        acd.append(float(found["acd"]))
    (atd_mean, atd_ci), (acd_mean, acd_ci) = mean_and_ci(atd), mean_and_ci(acd)
    return {"atd_mean": atd_mean, "atd_ci": atd_ci, "acd_mean": acd_mean, "acd_ci": acd_ci, "n_seeds": len(atd)}


def _events(dataset: TemporalGraphDataset) -> dict[str, np.ndarray]:
    """The test queries of a dataset as an event stream (one per undirected edge, ``src < dst``)."""
    negatives = dataset.negatives("test", task=REAL_TASK)
    return {"src": np.asarray(negatives.src), "dst": np.asarray(negatives.dst),
            "t": np.asarray(negatives.t, dtype=np.float64)}


def shuffle_precheck(real: TemporalGraphDataset, shuffles: Sequence[TemporalGraphDataset]) -> dict[str, Any]:
    """Whether SHUFFLE changed this stream: real-vs-shuffle against shuffle-vs-shuffle distances (module docstring).

    ``real`` is the dataset whose test split was shuffled and ``shuffles`` its SHUFFLE variants (or any datasets
    with test queries: the check reads ``negatives("test")``'s ``t, src, dst``). Both distances are the symmetric
    ATD and ACD of :func:`tgbhub.evaluate.metrics.generative_scores`: real against shuffle i, and shuffle i against
    shuffle i+1 (cyclically). Returns ``{"applied", "effective", "reason", "real_vs_shuffle",
    "shuffle_vs_shuffle", "welch_p"}``; with fewer than two shuffles it is not applied and the distortion is taken as
    effective.

    Raises:
        ScoreError: if a stream is empty or spans no time (ATD/ACD are undefined).
    """
    if len(shuffles) < 2:
        return {"applied": False, "effective": True,
                "reason": "needs at least two SHUFFLE seeds to estimate the shuffle-vs-shuffle distance"}
    keys = ("atd_symmetric", "acd_symmetric")
    real_side: dict[str, list[float]] = {k: [] for k in keys}
    null_side: dict[str, list[float]] = {k: [] for k in keys}
    reference = _events(real)
    streams = [_events(v) for v in shuffles]
    for index, stream in enumerate(streams):
        # the null: two shuffles of one split are two draws from "pair identity independent of time"
        null = generative_scores(stream, streams[(index + 1) % len(streams)])
        against_real = generative_scores(reference, stream)
        for key in keys:
            real_side[key].append(float(against_real[key]))
            null_side[key].append(float(null[key]))
    p = {key: welch_p(null_side[key], real_side[key]) for key in keys}
    # NaN: both sides constant; then any difference at all is a difference
    effective = any((value < PRECHECK_ALPHA) if not math.isnan(value) else real_side[key] != null_side[key]
                    for key, value in p.items())
    shown = ", ".join(f"{k.split('_')[0].upper()} {np.mean(real_side[k]):.4g} vs {np.mean(null_side[k]):.4g} "
                      f"(Welch p={p[k]:.2g})" for k in keys)
    reason = (f"real-vs-shuffle differs from shuffle-vs-shuffle: {shown}" if effective else
              f"the real test split is indistinguishable from its own shuffles ({shown}; p >= {PRECHECK_ALPHA}): "
              "pair identity and time look independent already, so SHUFFLE does not distort this stream and a "
              "fail says nothing about the model")
    return {"applied": True, "effective": bool(effective), "reason": reason,
            "real_vs_shuffle": {k: float(np.mean(v)) for k, v in real_side.items()},
            "shuffle_vs_shuffle": {k: float(np.mean(v)) for k, v in null_side.items()}, "welch_p": p}


def _score_all(chosen: Sequence[Condition], runs: Sequence[int], predict: Predict | None,
               predictions: Mapping[tuple[str, int], Submission] | None, model: str,
               graded: list[Graded]) -> dict[str, dict[str, list[float]]]:
    """Per condition, each metric's value per run; each graded (condition, run) is appended to ``graded``.

    Raises:
        ScoreError: if ``predictions`` lack a condition and run that ``predict`` would have been asked for.
        SubmissionError: for a malformed submission.
    """
    out: dict[str, dict[str, list[float]]] = {}
    for condition in chosen:
        per_metric: dict[str, list[float]] = {m: [] for m in METRICS}
        for run in runs:
            if predictions is not None:
                submission = predictions.get((condition.variant, run))
                if submission is None:
                    raise ScoreError(f"the predictions of {model!r} have no rows for variant {condition.variant!r}, "
                                     f"run {run}; score every condition in every run, or restrict kinds/seeds")
            else:
                submission = predict(condition.dataset, condition.task, run)  # type: ignore[misc]
            result = condition_result(condition.dataset, condition.task, submission)
            graded.append(Graded("counterfactual", result, model=model,
                                 run={"condition": condition.variant, "run": run}))
            for metric, value in result["metrics"].items():
                if metric in per_metric:
                    per_metric[metric].append(float(value))
        out[condition.variant] = per_metric
    return out


def evaluate_counterfactual(real: Dataset, variants: Sequence[Dataset],
                            models: Mapping[str, Predict | Mapping[tuple[str, int], Submission]], *,
                            negatives: str = "paired", runs: Mapping[str, Sequence[int]] | None = None,
                            epsilon: float = 0.05, controls: Iterable[str] = ()) -> Report:
    """The counterfactual check of every model in ``models`` on ``real`` and its distorted ``variants``.

    ``models`` maps a label to either a ``predict(dataset, task, run)`` callable or long-format predictions already
    read by :func:`read_predictions` (a mapping ``(variant, run) -> submission``). ``runs[label]`` lists the runs
    (default ``[0]``; for predictions, the runs found for ``"real"``). Labels in ``controls`` are reported with
    ``role = "control"``. Steps: bind conditions, score every (model, condition, run), read each kind's ATD/ACD, run
    the SHUFFLE precheck, then compare real against each kind per metric.

    Raises:
        ScoreError: for an unknown negatives mode, a variant of another dataset, predictions missing a condition, or
            an invalid ``epsilon``.
        SubmissionError: for a malformed submission or predictions file.
    """
    # temporal graphs: the caller checks the kind (tgbhub.api.counterfactual_check), conditions() the parentage
    real_graph = cast("TemporalGraphDataset", real)
    chosen = conditions(real_graph, cast("Sequence[TemporalGraphDataset]", variants), negatives)
    by_kind: dict[str, list[Condition]] = {}
    for condition in chosen[1:]:
        by_kind.setdefault(condition.kind, []).append(condition)
    report = Report(real.manifest.name, real.manifest.version, negatives, float(epsilon), list(models))
    report.kind_of = {c.variant: c.kind for c in chosen[1:]}
    for kind, members in by_kind.items():
        report.distances[kind] = kind_distances([c.dataset for c in members])
        report.validity[kind] = (shuffle_precheck(real_graph, [c.dataset for c in members]) if kind == "shuffle" else
                                 {"applied": False, "effective": True, "reason": "only SHUFFLE is prechecked"})
    control_set = set(controls)
    for label, source in models.items():
        predictions = source if isinstance(source, Mapping) else None
        scorer = None if isinstance(source, Mapping) else source
        if runs and label in runs:
            chosen_runs = list(runs[label])
        elif predictions is not None:
            chosen_runs = sorted({run for variant, run in predictions if variant == REAL}) or [0]
        else:
            chosen_runs = [0]
        scored = _score_all(chosen, chosen_runs, scorer, predictions, label, report.graded)
        for condition_name, per_metric in scored.items():
            report.values[(label, condition_name)] = per_metric
        role = "control" if label in control_set else "model"
        for kind, members in by_kind.items():
            report.rows.extend(_kind_rows(report, label, role, kind, members, scored))
    return report


def _kind_rows(report: Report, label: str, role: str, kind: str, members: Sequence[Condition],
               scored: Mapping[str, Mapping[str, list[float]]]) -> list[dict[str, Any]]:
    """The rows of one (model, kind): one per metric."""
    validity = report.validity[kind]
    distance = report.distances[kind]
    rows = []
    for metric in METRICS:
        distorted = [v for c in members for v in scored[c.variant][metric]]
        real = _replicated(list(scored[REAL][metric]), len(distorted))
        result = compare(real, distorted, epsilon=report.epsilon, distortion_is_effective=validity["effective"])
        if not validity["effective"]:
            result["reason"] = validity["reason"]
        rows.append({"dataset": report.dataset, "version": report.version, "model": label, "role": role,
                     "setting": SETTING, "negatives": report.negatives, "kind": kind, "metric": metric,
                     "seeds": ",".join(str(c.seed) for c in members), **result,
                     "atd_mean": distance["atd_mean"], "atd_ci": distance["atd_ci"],
                     "acd_mean": distance["acd_mean"], "acd_ci": distance["acd_ci"],
                     "distortion_effective": bool(validity["effective"])})
    return rows


# ---------------------------------------------------------------------------------------------------------------------
# Table and plot
# ---------------------------------------------------------------------------------------------------------------------

_FLAGS = {CAPTURES: "captures", FAILS: "FAILS", INCONCLUSIVE: "inconclusive"}


def table_lines(report: Report, metrics: Sequence[str] = METRICS) -> list[str]:
    """The report as text: per model and kind, one line per metric (real, distorted +- CI, delta, threshold, S/E
    flags, verdict), headed by the kind's ATD/ACD and any validity warning."""
    lines = [f"{report.dataset}@{report.version}: counterfactual check ({SETTING}, {report.negatives} negatives, "
             f"epsilon {report.epsilon:g}; S = significant drop, E = drop > epsilon)"]
    header = f"  {'metric':<8} {'real':>8} {'distorted':>19} {'delta':>9} {'thresh':>9} {'flags':>5}  verdict"
    for label in report.models:
        for kind in report.distances:
            rows = [r for r in report.rows if r["model"] == label and r["kind"] == kind and r["metric"] in metrics]
            if not rows:
                continue
            d = report.distances[kind]
            role = rows[0]["role"]
            lines.append(f"{label} ({role}) vs {kind} (seeds {rows[0]['seeds']}; ATD {d['atd_mean']:.4g} +- "
                         f"{d['atd_ci']:.2g}, ACD {d['acd_mean']:.4g} +- {d['acd_ci']:.2g})")
            if not report.validity[kind]["effective"]:
                lines.append(f"  WARNING: {report.validity[kind]['reason']}")
            lines.append(header)
            for r in rows:
                flags = ("S" if r["significant_drop"] else "-") + ("E" if r["margin_drop"] else "-")
                lines.append(f"  {r['metric']:<8} {r['mean_real']:>8.4f} {r['mean_distorted']:>9.4f} +- "
                             f"{r['ci_distorted']:<6.4f} {r['delta']:>+9.4f} {r['threshold']:>9.4f} {flags:>5}  "
                             f"{_FLAGS[r['verdict']]}")
    return lines


def plot_report(report: Report, path: str | os.PathLike[str], metrics: Sequence[str] = ("mrr", "auroc", "ap")
                ) -> Path:
    """Draw real vs distorted means with 95 % CIs, one panel per metric, groups per kind, one colour per model.

    Raises:
        MissingExtraError: if matplotlib is not installed (the ``plot`` extra).
    """
    try:
        import matplotlib
        matplotlib.use("Agg")  # files only: never open a window
        import matplotlib.pyplot as plt
    except ModuleNotFoundError as exc:
        raise MissingExtraError("matplotlib", "plot", "the counterfactual plot") from exc
    kinds = list(report.distances)
    groups = [REAL, *kinds]
    figure, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.6), squeeze=False)
    width = 0.8 / max(1, len(report.models))
    for axis, metric in zip(axes[0], metrics, strict=True):
        for index, label in enumerate(report.models):
            means, errors = [], []
            for group in groups:
                if group == REAL:
                    values = report.values[(label, REAL)][metric]
                else:
                    values = [v for (model, condition), per in report.values.items() if model == label
                              and report.kind_of.get(condition) == group for v in per[metric]]
                mean, ci = mean_and_ci(values)
                means.append(mean)
                errors.append(0.0 if not math.isfinite(ci) else ci)
            x = np.arange(len(groups)) + (index - (len(report.models) - 1) / 2) * width
            axis.bar(x, means, width, yerr=errors, capsize=3, label=label)
        axis.set_xticks(np.arange(len(groups)), groups, rotation=20)
        axis.set_title(metric)
        axis.set_ylim(0.0, 1.05)
    handles, labels = axes[0][0].get_legend_handles_labels()
    # below the panels, so no bar is hidden behind it
    figure.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=9, frameon=False)
    figure.suptitle(f"{report.dataset}: real vs distorted test split ({report.negatives} negatives, mean +- CI95)",
                    fontsize=10)
    figure.tight_layout(rect=(0.0, 0.07, 1.0, 1.0))
    target = Path(path)
    # fixed metadata so two runs write the same bytes
    figure.savefig(target, dpi=110, metadata={"Software": None})
    plt.close(figure)
    return target
