"""Exports of a temporal graph for other loaders (the loader adapters TLPCF's distorted datasets need; docs/derived.md).

Pure functions over dataset objects that write files into a folder; nothing here reaches the network or the cache.
Every file is written to a process-unique temporary name in the target folder, verified (size and sha256 of the
bytes meant to be written) and only then renamed to its final name, so an interrupted export never leaves a
truncated file under a final name.

Three formats:

- ``dyglib``: DyGLib's ``ml_<name>.csv`` (``,u,i,ts,label,idx``; 1-based ``idx``) plus an explicit ``split`` column
  and a ``ml_<name>_splits.json`` sidecar, because DyGLib's ``get_link_prediction_data`` recomputes its splits from
  the 0.70 / 0.85 quantiles of ``ts`` (wrong for every T-GRAB split and for any INTENSE variant); a patched loader
  reads the ``split`` column instead.
- ``ml``: the paper's file names for the TLPCF authors' TGN / TGAT / CAWN forks (``shuffle_<j>_ml_<ds>.csv``,
  ``intense_<k>_<j>_ml_<ds>.csv``, ``j = seed + 1``) with the ``split_times`` constants those forks split by; one
  row per event, as the paper's files hold (an undirected edge's ``src <= dst`` row only).
- ``tgb-negatives``: TGB's ``{(src, dst, t): negatives}`` pickle of a split's ranking negatives, refused when two
  queries share a key.

Node ids: tgbhub's ids are 0-based; both ``ml`` formats write ``u = src + 1`` and ``i = dst + 1`` (row 0 of the node
feature matrix is the padding row of the Jodie/TGN convention), without bipartite reindexing. Labels are 0 and
features zeros (the manifests declare one-hot node and constant-1 edge features, which carry no information a model
could not rebuild; DyGLib refuses node features wider than 172).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from tgbhub.data import Negatives, TemporalGraphDataset, TrajectoryDataset
from tgbhub.errors import IntegrityError, InvalidNameError, ManifestError, TgbhubError
from tgbhub.hashing import file_sha256
from tgbhub.manifest import require_kind

FORMATS = ("dyglib", "ml", "tgb-negatives")
#: the node-feature width of the Jodie/TGN ``ml_`` files (DyGLib's ``NODE_FEAT_DIM``)
NODE_FEATURE_DIM = 172
#: zero edge features are written one column wide; DyGLib pads to 172 on load, the forks read the width from the file
EDGE_FEATURE_DIM = 1
#: the forks' split rule (TGN ``data_processing.py``), with ``split_times[ds] = (val_time, test_time)``
FORK_RULE = "train: ts <= val_time; val: val_time < ts <= test_time; test: ts > test_time"
_FORK_SPLITS = ("train", "val", "test")
_PICKLE_PROTOCOL = 4


@dataclass(frozen=True)
class Export:
    """What an export wrote: the files (final paths, in writing order) and the facts a caller checks."""

    format: str
    dataset: str
    files: tuple[Path, ...]
    info: Mapping[str, Any] = field(default_factory=dict)


def export(dataset: TemporalGraphDataset | TrajectoryDataset, fmt: str, out: str | os.PathLike[str], *,
           split: str = "test", task: str | None = None) -> Export:
    """Export ``dataset`` in format ``fmt`` (one of :data:`FORMATS`) into the folder ``out`` (created if missing).

    ``split`` and ``task`` apply to ``tgb-negatives`` only.

    Raises:
        InvalidNameError: if ``fmt`` is not a known format, or ``out`` is an existing file.
        UnsupportedTaskError: if ``dataset`` is not a temporal graph (a ChaosNet trajectory set, say).
        ManifestError, IntegrityError: as the chosen exporter raises them.
    """
    require_kind(dataset.manifest, "temporal-graph", "export")
    graph = cast(TemporalGraphDataset, dataset)  # a temporal-graph manifest is opened as one
    if fmt == "dyglib":
        return export_dyglib(graph, out)
    if fmt == "ml":
        return export_ml(graph, out)
    if fmt == "tgb-negatives":
        return export_tgb_negatives(graph, out, split=split, task=task)
    raise InvalidNameError(f"unknown export format {fmt!r}; pass one of {', '.join(FORMATS)}")


# --- DyGLib --------------------------------------------------------------------------------------------------------


def export_dyglib(dataset: TemporalGraphDataset, out: str | os.PathLike[str]) -> Export:
    """Write every row as the dataset holds them (all splits, in row order) in DyGLib's ``ml_`` layout.

    Files, with ``<name>`` the dataset's short name (``pdet-2-16~intense-k5-s0``): ``ml_<name>.csv`` (``,u,i,ts,label,
    idx,split``: unnamed row index, ``u = src + 1``, ``i = dst + 1``, ``ts`` the stored time (float64 written with
    its shortest round-trip repr), ``label`` 0, ``idx = row + 1``, ``split`` the row's split), ``ml_<name>.npy``
    (zero edge features, ``[rows + 1, 1]``, row 0 the pad), ``ml_<name>_node.npy`` (zero node features,
    ``[num_nodes + 1, 172]``) and ``ml_<name>_splits.json`` (split -> ``idx`` range and count, the source dataset, and
    what an unpatched DyGLib, splitting at the 0.70 / 0.85 quantiles of ``ts``, would count instead).

    Raises:
        InvalidNameError: if ``out`` is an existing file.
        ManifestError: if the dataset's splits do not tile its rows.
        IntegrityError: if a written file does not verify (nothing is left under its final name).
    """
    folder = _folder(out)
    labels = row_splits(dataset)
    name = dataset.manifest.short_name
    ts = np.asarray(dataset.t)
    counts = _count_by(labels)
    ranges = _idx_ranges(labels)
    quantiles = np.quantile(ts, [0.70, 0.85]) if len(ts) else np.zeros(2)
    unpatched = _count_by(_fork_labels(ts, float(quantiles[0]), float(quantiles[1])))
    info = {"source": _source(dataset), "rows": int(len(ts)), "counts": counts, "idx_ranges": ranges,
            "node_ids": "u = src + 1, i = dst + 1 (row 0 of the node features is the pad row)",
            "split_column": "split: read it instead of recomputing quantiles (DyGLib's get_link_prediction_data "
                            "splits at np.quantile(ts, [0.70, 0.85]))",
            "unpatched_quantile_split": {"val_time": float(quantiles[0]), "test_time": float(quantiles[1]),
                                         "counts": unpatched}}
    files = [
        _write_atomic(folder / f"ml_{name}.csv", _ml_csv(dataset, np.arange(len(ts)), labels)),
        _write_atomic(folder / f"ml_{name}.npy", _npy(np.zeros((len(ts) + 1, EDGE_FEATURE_DIM)))),
        _write_atomic(folder / f"ml_{name}_node.npy", _node_features(dataset)),
        _write_atomic(folder / f"ml_{name}_splits.json", _json(info)),
    ]
    return Export("dyglib", _source(dataset)["name"], tuple(files), info)


def row_splits(dataset: TemporalGraphDataset) -> np.ndarray:
    """The split name of every row (a ``str`` array as long as the dataset), from the dataset's row ranges
    (``dataset.splits``, converted from the manifest's boundaries). Never recomputed from quantiles.

    Raises:
        ManifestError: if the splits overlap or leave rows uncovered.
    """
    bounds = []
    for name, (lo, hi) in dataset.splits.items():
        bounds.append((lo, hi, name))
    labels = np.empty(dataset.num_rows, dtype=object)
    covered = 0
    for lo, hi, name in sorted(bounds):
        if lo != covered:
            raise ManifestError(f"{dataset.name}@{dataset.version}: split {name!r} starts at row {lo}, expected row "
                                f"{covered}; its splits do not tile its rows, so no export can label them. Clear its "
                                "cache entry and load it again; if it persists the manifest is wrong")
        labels[lo:hi] = name
        covered = hi
    if covered != dataset.num_rows:
        raise ManifestError(f"{dataset.name}@{dataset.version}: its splits cover rows 0..{covered - 1} of "
                            f"{dataset.num_rows}; clear its cache entry and load it again")
    return labels.astype(str)


# --- the paper's ml_ files for the authors' forks ------------------------------------------------------------------


def export_ml(dataset: TemporalGraphDataset, out: str | os.PathLike[str]) -> Export:
    """Write the paper-compatible ``ml_`` files of a base dataset or a SHUFFLE / INTENSE variant, with the
    ``split_times`` constants of its base.

    Files, with ``<ds>`` the base's short name: ``<prefix>ml_<ds>.csv`` (``,u,i,ts,label,idx``, as
    :func:`export_dyglib` but without the ``split`` column) and ``<prefix>ml_<ds>.npy``, where ``<prefix>`` is empty
    for the base, ``shuffle_<j>_`` or ``intense_<k>_<j>_`` for a variant (``j = seed + 1``, the forks'
    ``--distortion`` argument); the shared ``ml_<ds>_node.npy``; ``split_times_<ds>.json`` (``val_time``,
    ``test_time`` and the rule; the same for every variant of ``<ds>``); and ``<prefix>ml_<ds>.json``, this file's
    report: rows per split as written and as the forks' rule assigns them, the rows the rule puts on the wrong side
    (``misassigned``), the test rows earlier than the first real test snapshot, and ``stored_rows`` (the dataset's
    rows in those splits, both directions of an undirected edge counted). Only the splits ``train``,
    ``val`` and ``test`` are written (the forks know no other); other splits' rows (``test_inductive``) are dropped
    and named in the report.

    One row per event (:func:`event_rows`): of a symmetric graph, which stores each undirected edge in both
    directions, only the ``src <= dst`` row. The paper's files hold one row per interaction, and the authors'
    metrics notebook takes ``tau_bar = T / rows``; both directions would halve ``tau_bar`` against the one INTENSE
    jittered with and give another ACD (1.55 instead of the manifest's 4.0 on ``pdet-2-16~intense-k5-s0``).

    Raises:
        InvalidNameError: if ``out`` is an existing file.
        ManifestError: if the variant's kind has no paper name, the dataset (or its parent) has no snapshot splits
            ``val`` and ``test``, or its splits do not tile its rows.
        IntegrityError: if a written file does not verify.
    """
    folder = _folder(out)
    base, snapshots = _time_base(dataset)
    ds_name, prefix = base.manifest.short_name, paper_prefix(dataset)
    val_time, test_time = split_times(dataset)
    labels = row_splits(dataset)
    known = np.isin(labels, _FORK_SPLITS)
    rows = np.flatnonzero(known & event_rows(dataset))
    ts = np.asarray(dataset.t)[rows]
    report = fork_split_report(labels[rows], ts, val_time, test_time, test_start=snapshots["test"][0])
    report = {"source": _source(dataset), "file": f"{prefix}ml_{ds_name}.csv", "rows": int(len(rows)),
              "stored_rows": int(np.count_nonzero(known)), "one_row_per_event": _event_rule(dataset),
              "split_times": {"val_time": val_time, "test_time": test_time}, "rule": FORK_RULE, **report,
              "dropped_splits": sorted(set(labels.tolist()) - set(_FORK_SPLITS))}
    constants = {ds_name: {"val_time": val_time, "test_time": test_time}, "rule": FORK_RULE,
                 "boundaries": "the base's half-open snapshot boundaries: val_time = first val snapshot - 1, "
                               "test_time = first test snapshot - 1 (the last snapshot of the previous split)"}
    files = [
        _write_atomic(folder / f"{prefix}ml_{ds_name}.csv", _ml_csv(dataset, rows, None)),
        _write_atomic(folder / f"{prefix}ml_{ds_name}.npy", _npy(np.zeros((len(rows) + 1, EDGE_FEATURE_DIM)))),
        _write_atomic(folder / f"ml_{ds_name}_node.npy", _node_features(dataset)),
        _write_atomic(folder / f"split_times_{ds_name}.json", _json(constants)),
        _write_atomic(folder / f"{prefix}ml_{ds_name}.json", _json(report)),
    ]
    return Export("ml", _source(dataset)["name"], tuple(files), report)


def event_rows(dataset: TemporalGraphDataset) -> np.ndarray:
    """A boolean mask, one entry per row, that keeps one row per event: every row of a directed graph; of a
    symmetric one (each undirected edge stored as ``(u, v)`` and ``(v, u)``) the row with ``src <= dst``, the
    window-forecasting task's events. A variant's recorded ATD/ACD takes the ``src < dst`` rows: the same rows
    wherever there is no self-loop (no T-GRAB dataset has one)."""
    src, dst = np.asarray(dataset.src), np.asarray(dataset.dst)
    if not dataset.manifest.graph.get("symmetric", False):
        return np.ones(len(src), dtype=bool)
    return src <= dst


def _event_rule(dataset: TemporalGraphDataset) -> str:
    if dataset.manifest.graph.get("symmetric", False):
        return ("the src <= dst row of each undirected edge (the dataset stores both directions; the paper's files "
                "hold one row per interaction)")
    return "every stored row (a directed graph)"


def paper_prefix(dataset: TemporalGraphDataset) -> str:
    """The forks' ``--distortion`` file-name prefix: ``""`` for a base dataset, ``shuffle_<j>_`` or
    ``intense_<k>_<j>_`` for a variant, ``j = seed + 1``.

    Raises:
        ManifestError: for a transform that has no paper name (export it with ``dyglib`` instead).
    """
    transform = dataset.manifest.transform
    if transform is None:
        return ""
    kind, params, j = transform["kind"], transform["params"], int(transform["seed"]) + 1
    if kind == "shuffle":
        return f"shuffle_{j}_"
    if kind == "intense" and "k" in params:
        return f"intense_{int(params['k'])}_{j}_"
    raise ManifestError(f"{dataset.name}@{dataset.version}: transform {kind!r} ({params}) has no paper-compatible "
                        "ml_ file name; export it with format 'dyglib', whose split column names every row's split")


def split_times(dataset: TemporalGraphDataset) -> tuple[int, int]:
    """``(val_time, test_time)`` for the forks' rule (:data:`FORK_RULE`), from the base's half-open snapshot splits
    (a variant's parent): the last snapshot before ``val`` and the last before ``test``. On integer snapshot times
    the rule then reproduces the splits exactly; a jittered INTENSE copy is misassigned only if it lands a whole
    snapshot early (``tau_bar >= 1``).

    Raises:
        ManifestError: if neither the dataset nor its parent has snapshot splits ``val`` and ``test``.
    """
    _, snapshots = _time_base(dataset)
    return int(snapshots["val"][0]) - 1, int(snapshots["test"][0]) - 1


def fork_split_report(labels: np.ndarray, ts: np.ndarray, val_time: float, test_time: float, *,
                      test_start: float) -> dict[str, Any]:
    """How the forks' rule splits rows whose true splits are ``labels``: counts both ways, the misassigned rows
    (total, per ``"stored->rule"`` pair, the first row), and the test rows with ``ts < test_start`` (earlier than the
    first real test snapshot: INTENSE copies jittered backwards, which the paper's loader counted as validation when
    its boundary was the boundary itself)."""
    rule = _fork_labels(ts, val_time, test_time)
    wrong = np.flatnonzero(rule != labels)
    pairs = _count_by(np.char.add(np.char.add(labels[wrong].astype(str), "->"), rule[wrong].astype(str)))
    test = labels == "test"
    return {"counts": _count_by(labels), "counts_by_rule": _count_by(rule), "misassigned": int(len(wrong)),
            "misassigned_by_split": pairs, "first_misassigned_row": int(wrong[0]) if len(wrong) else None,
            "test_rows_before_test_start": int(np.count_nonzero(test & (ts < test_start))),
            "test_start": test_start,
            "earliest_test_ts": float(ts[test].min()) if test.any() else None}


def _time_base(dataset: TemporalGraphDataset) -> tuple[TemporalGraphDataset, dict[str, tuple[int, int]]]:
    """The dataset whose snapshot splits give the time boundaries (itself, or a variant's parent), and those splits.

    Raises:
        ManifestError: if neither the dataset nor its parent has snapshot splits ``val`` and ``test``.
    """
    base = dataset if dataset.snapshot_splits is not None else dataset.parent
    snapshots = None if base is None else base.snapshot_splits
    if base is None or snapshots is None or not {"val", "test"} <= set(snapshots):
        raise ManifestError(f"{dataset.name}@{dataset.version} has no snapshot splits 'val' and 'test' (itself or "
                            "its parent) to take split_times from; open it with tgbhub.load_dataset (which attaches "
                            "a variant's parent), or export it with format 'dyglib'")
    return base, snapshots


def _fork_labels(ts: np.ndarray, val_time: float, test_time: float) -> np.ndarray:
    code = (ts > val_time).astype(np.int8) + (ts > test_time)
    return np.array(_FORK_SPLITS)[code]


# --- TGB negatives shim --------------------------------------------------------------------------------------------


def export_tgb_negatives(dataset: TemporalGraphDataset, out: str | os.PathLike[str], *, split: str = "test",
                         task: str | None = None) -> Export:
    """Write ``<name>_<split>_ns.pkl``: TGB's ``{(src, dst, t): negative destinations}`` dict of ``split``'s ranking
    negatives (``task``: the default task's, e.g. the paired ones of a variant; or ``ranking-regenerated``), for
    ``tgb.linkproppred.negative_sampler.NegativeEdgeSampler.load_eval_set``. Keys are the task's queries (one per
    undirected edge, ``src < dst``), in query order; ``t`` is an ``int`` when every query time is integral, else a
    ``float``; values are int64 arrays of the query's ``count`` negatives.

    Raises:
        InvalidNameError: if ``out`` is an existing file, or the dataset has no negatives for ``split``.
        ManifestError: if ``task`` names no task of the dataset.
        IntegrityError: if two queries share ``(src, dst, t)`` (a SHUFFLE of snapshot times does this), which such a
            dict cannot hold; or if the written file does not verify.
    """
    folder = _folder(out)
    negatives = dataset.negatives(split, task=task)
    try:
        table = tgb_negatives(negatives)
    except IntegrityError as exc:
        raise IntegrityError(f"{dataset.name}@{dataset.version} {negatives.file}", "one query per (src, dst, t)",
                             exc.actual, "TGB's (src, dst, t)-keyed pickle cannot hold both; use the edge_id-keyed "
                             "negatives instead (ds.negatives(split): row i is query i) and look negatives up by "
                             "query index") from None
    name = f"{dataset.manifest.short_name}_{split}_ns.pkl"
    path = _write_atomic(folder / name, pickle.dumps(table, protocol=_PICKLE_PROTOCOL))
    info = {"source": _source(dataset), "split": split, "task": _declaring_task(dataset, split, negatives.file),
            "negatives_file": negatives.file, "queries": len(negatives), "keys": len(table),
            "key": "(src, dst, t) of each query, src < dst"}
    return Export("tgb-negatives", _source(dataset)["name"], (path,), info)


def _declaring_task(dataset: TemporalGraphDataset, split: str, file: str) -> str | None:
    for declaring in dataset.manifest.tasks:
        if declaring.get("negatives", {}).get("files", {}).get(split) == file:
            return str(declaring.get("name"))
    return None


def tgb_negatives(negatives: Negatives) -> dict[tuple[int, int, int | float], np.ndarray]:
    """TGB's ``{(src, dst, t): int64 negatives}`` of one split's queries, in query order (pure).

    Raises:
        IntegrityError: naming the first key two queries share, and both queries.
    """
    t = np.asarray(negatives.t)
    times = t.astype(np.int64).tolist() if _integral(t) else t.astype(np.float64).tolist()
    table: dict[tuple[int, int, int | float], np.ndarray] = {}
    first: dict[tuple[int, int, int | float], int] = {}
    rows = np.asarray(negatives.negatives)
    counts = np.asarray(negatives.count)
    keys = zip(np.asarray(negatives.src).tolist(), np.asarray(negatives.dst).tolist(), times, strict=True)
    for i, key in enumerate(keys):
        if key in table:
            raise IntegrityError(f"{negatives.file}", "unique (src, dst, t) keys",
                                 f"queries {first[key]} and {i} both at (src, dst, t) = {key}",
                                 "Key negatives by query index (edge_id) instead")
        first[key] = i
        table[key] = rows[i, :counts[i]].astype(np.int64)
    return table


def _integral(t: np.ndarray) -> bool:
    if np.issubdtype(t.dtype, np.integer):
        return True
    return bool(np.all(np.isfinite(t)) and np.array_equal(t, np.floor(t)) and (len(t) == 0 or np.abs(t).max() < 2**53))


# --- writing -------------------------------------------------------------------------------------------------------


def _folder(out: str | os.PathLike[str]) -> Path:
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise InvalidNameError(f"export target {str(folder)!r} is a file; pass a folder (it is created if missing)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidNameError(f"cannot create the export folder {str(folder)!r} ({exc.strerror}); pass a writable "
                               "folder") from exc
    return folder


def _write_atomic(path: Path, data: bytes) -> Path:
    """Write ``data`` to a process-unique temporary file beside ``path``, verify its size and sha256, then rename.

    Raises:
        IntegrityError: if the bytes on disk are not ``data`` (the temporary file is removed).
        TgbhubError: if the folder is not writable.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    try:
        try:
            with open(tmp, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            raise TgbhubError(f"cannot write {str(path)!r} ({exc.strerror}); pass a writable folder with "
                              f"{len(data)} bytes free") from exc
        expected, size = hashlib.sha256(data).hexdigest(), tmp.stat().st_size
        if size != len(data) or file_sha256(tmp) != expected:
            raise IntegrityError(str(path), f"{len(data)} bytes, sha256 {expected}", f"{size} bytes on disk",
                                 "Check the disk and export again.")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _ml_csv(dataset: TemporalGraphDataset, rows: np.ndarray, labels: np.ndarray | None) -> bytes:
    """The ``ml_`` CSV of ``rows``, renumbered: unnamed index 0.., ``u, i`` 1-based ids, ``ts``, ``label`` 0,
    ``idx`` 1.. (+ ``split``)."""
    src = (np.asarray(dataset.src)[rows].astype(np.int64) + 1).tolist()
    dst = (np.asarray(dataset.dst)[rows].astype(np.int64) + 1).tolist()
    t = np.asarray(dataset.t)[rows]
    ts = t.tolist() if np.issubdtype(t.dtype, np.integer) else [repr(float(x)) for x in t.tolist()]
    if labels is None:
        lines = [",u,i,ts,label,idx"]
        lines += [f"{k},{u},{i},{s},0,{k + 1}" for k, (u, i, s) in enumerate(zip(src, dst, ts, strict=True))]
    else:
        lines = [",u,i,ts,label,idx,split"]
        lines += [f"{k},{u},{i},{s},0,{k + 1},{p}" for k, (u, i, s, p) in
                  enumerate(zip(src, dst, ts, labels[rows].tolist(), strict=True))]
    return ("\n".join(lines) + "\n").encode()


def _node_features(dataset: TemporalGraphDataset) -> bytes:
    return _npy(np.zeros((dataset.num_nodes + 1, NODE_FEATURE_DIM)))


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _json(value: Any) -> bytes:
    return (json.dumps(value, indent=1, sort_keys=True) + "\n").encode()


def _source(dataset: TemporalGraphDataset) -> dict[str, Any]:
    return {"name": f"{dataset.name}@{dataset.version}", "digest": dataset.digest,
            "derived_from": dataset.manifest.derived_from, "transform": dataset.manifest.transform}


def _count_by(values: np.ndarray) -> dict[str, int]:
    names, counts = np.unique(np.asarray(values).astype(str), return_counts=True)
    return {str(n): int(c) for n, c in zip(names, counts, strict=True)}


def _idx_ranges(labels: np.ndarray) -> dict[str, list[int]]:
    """Each split's ``idx`` range ``[first, last]`` (1-based, inclusive), splits being contiguous row ranges."""
    out: dict[str, list[int]] = {}
    for name in dict.fromkeys(labels.tolist()):
        where = np.flatnonzero(labels == name)
        out[str(name)] = [int(where[0]) + 1, int(where[-1]) + 1]
    return out


__all__: Sequence[str] = ("EDGE_FEATURE_DIM", "Export", "FORK_RULE", "FORMATS", "NODE_FEATURE_DIM", "event_rows",
                          "export", "export_dyglib", "export_ml", "export_tgb_negatives", "fork_split_report",
                          "paper_prefix", "row_splits", "split_times", "tgb_negatives")
