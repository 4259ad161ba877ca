"""A board's rows from its outcomes, with no I/O: a claim that differs from the re-grade is flagged, so is a score
at the task's ceiling; seeds of one configuration aggregate into one row; rows rank by the task's primary metric in
its direction; rejected submissions follow.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tgbhub.errors import RecordError
from tgbhub.results import records

#: a claimed metric within this relative distance of the re-grade is not flagged (last-bit differences of float
#: sums on another machine); anything further is a different number
CLAIM_RTOL = 1e-9

#: the columns of leaderboard.parquet, in order (the shared contract with the site)
COLUMNS = (("rank", "int32"), ("model", "string"), ("metric", "string"), ("mean", "float64"), ("std", "float64"),
           ("n", "int32"), ("seeds", "string"), ("verified", "bool"), ("flagged", "bool"), ("claimed", "float64"),
           ("status", "string"), ("message", "string"), ("date", "string"), ("record", "string"),
           ("submission", "string"), ("paper", "string"), ("dataset", "string"))


@dataclass
class Entry:
    """One outcome on a board: the submission id, the board ``(family/name, task)``, what the board shows of it
    (``meta``: model, seed, dataset, submitted, paper), the grader's record or rejection, and the claim (bytes,
    untrusted) or the grader's verdict on it (``claim_check``: flagged, claimed, message)."""

    id: str
    board: tuple[str, str]
    meta: dict[str, Any]
    claim: bytes | None = None
    record: dict[str, Any] | None = None
    rejection: dict[str, Any] | None = None
    path: str = ""
    claim_check: dict[str, Any] | None = None


def entry_of(outcome: Mapping[str, Any], path: str, board: tuple[str, str]) -> Entry:
    """The board entry of an outcome file (a record or a rejection) at ``path``.

    Raises:
        RecordError: if a record was edited after the grader wrote it.
    """
    if path.startswith("records/"):
        records.check_record(outcome, f"the results repo's {path}")
        hub = outcome.get("hub") or {}
        model = outcome.get("model") or {}
        meta = {"model": model.get("name"), "seed": model.get("seed"), "dataset": outcome["dataset"]["ref"],
                "submitted": hub.get("submitted", ""), "paper": hub.get("paper"), "split": outcome.get("split")}
        sid = str(hub.get("folder", "")).rsplit("/", 1)[-1] or path.split("/")[-2]
        return Entry(sid, board, meta, record=dict(outcome), path=path, claim_check=hub.get("claim"))
    meta = {key: outcome.get(key) for key in ("model", "seed", "submitted", "paper", "split")}
    meta["dataset"] = outcome.get("dataset")
    return Entry(str(outcome.get("submission")), board, meta, rejection=dict(outcome), path=path)


#: what a claim must agree on with the graded submission besides its scores: (claim field, record or meta field)
_CLAIM_IDENTITY = (("model.name", "model"), ("model.seed", "seed"), ("model.hyperparameters", "hyperparameters"),
                   ("dataset.ref", "dataset"), ("task.name", "task"), ("split", "split"))


def check_claim(claim: bytes | None, record: Mapping[str, Any], primary: str,
                meta: Mapping[str, Any] | None = None) -> tuple[bool, float | None, str, list[str]]:
    """``(flagged, claimed value of the ``primary`` metric or None, message, fields that differ)`` of a
    submitter's claim against the grader's record (and the submission's ``meta``, for the identity a claim states:
    model name, seed, hyper-parameters, dataset version, task, split). A claim that is not an intact record, graded
    another file, or names another identity is flagged; the re-graded values stand either way."""
    if claim is None:
        return False, None, "", []
    try:
        found = json.loads(claim)
        records.check_record(found, "the claim")
    except (json.JSONDecodeError, UnicodeDecodeError, RecordError) as exc:
        return True, None, f"the claim is not an intact result record ({exc}); the re-graded values stand", []
    claimed_metrics = found.get("metrics") or {}
    if (found.get("submission") or {}).get("sha256") != (record.get("submission") or {}).get("sha256"):
        return True, _number(claimed_metrics.get(primary)), ("the claim graded another file than the one submitted; "
                                                             "the re-graded values stand"), []
    differ = [name for name in sorted(claimed_metrics) if name in record["metrics"]
              and not _close(claimed_metrics[name], record["metrics"][name])]
    parts = [f"claimed {name} {claimed_metrics[name]!r}, re-graded {record['metrics'][name]!r}" for name in differ]
    stated = {"model": _dotted(record, "model.name"), "seed": _dotted(record, "model.seed"),
              "hyperparameters": _dotted(record, "model.hyperparameters"), "dataset": _dotted(record, "dataset.ref"),
              "task": _dotted(record, "task.name"), "split": record.get("split"), **(meta or {})}
    for claimed_field, own in _CLAIM_IDENTITY:
        value, expected = _dotted(found, claimed_field), stated.get(own)
        if expected is not None and value is not None and records.canonical(value) != records.canonical(expected):
            differ.append(claimed_field)
            parts.append(f"the claim names {claimed_field} {value!r}, the submission {expected!r}")
    message = f"{'; '.join(parts)} (the re-graded values stand)" if parts else ""
    return bool(differ), _number(claimed_metrics.get(primary)), message, differ


def _dotted(value: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _close(claimed: Any, regraded: Any) -> bool:
    a, b = _number(claimed), _number(regraded)
    if a is None or b is None:
        return claimed == regraded
    return a == b or math.isclose(a, b, rel_tol=CLAIM_RTOL, abs_tol=0.0)


#: metric families bounded above by 1 (rates and scores): 1.0 is their ceiling
UNIT_METRICS = ("f1", "mrr", "hits", "auc", "ap", "ndcg", "accuracy", "precision", "recall")


def ceiling(metric: str, task: Mapping[str, Any]) -> float | None:
    """The best value ``metric`` can take on ``task``: the task's declared ``ceiling``, else 1.0 for a rate or score
    (:data:`UNIT_METRICS`), 0.0 for an error (lower is better), ``None`` when unbounded (e.g. VPT, a step count)."""
    from tgbhub.evaluate.directions import higher_is_better

    declared = task.get("ceiling")
    if isinstance(declared, (int, float)) and not isinstance(declared, bool):
        return float(declared)
    family = metric.split("@", 1)[0].split("_", 1)[0]
    if family in UNIT_METRICS:
        return 1.0
    return None if higher_is_better(metric, task) else 0.0


def _config_key(record: Mapping[str, Any]) -> str:
    """What seeds of one configuration share (:data:`tgbhub.results.records.AGGREGATE_KEYS`), as one string."""
    values = []
    for dotted in records.AGGREGATE_KEYS:
        values.append(_dotted(record, dotted))
    return json.dumps(records.canonical(values), sort_keys=True)


def _groups(entries: Sequence[Entry]) -> list[list[Entry]]:
    """Graded entries as seed groups: one configuration, each seed once; an entry without a seed stands alone, and
    a seed submitted twice (two files) opens a second group rather than counting twice."""
    buckets: dict[str, list[list[Entry]]] = {}
    alone: list[list[Entry]] = []
    for entry in sorted(entries, key=lambda e: (str(e.meta.get("submitted")), e.id, e.path)):
        record = entry.record
        assert record is not None
        seed = record["model"]["seed"]
        if seed is None:
            alone.append([entry])
            continue
        groups = buckets.setdefault(_config_key(record), [])
        for group in groups:
            if all(other.record["model"]["seed"] != seed for other in group):  # type: ignore[index]
                group.append(entry)
                break
        else:
            groups.append([entry])
    seeded = [sorted(group, key=_seed_order) for groups in buckets.values() for group in groups]
    return seeded + alone


def _seed_order(entry: Entry) -> tuple[int, float, str]:
    seed = entry.record["model"]["seed"]  # type: ignore[index]
    return (0, float(seed), "") if isinstance(seed, (int, float)) else (1, 0.0, str(seed))


def board_rows(entries: Sequence[Entry], task: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of one board (columns :data:`COLUMNS`): ranked rows by rank, then rejected rows by date. A ranked
    row is flagged when its claim differs from the re-grade, or when it reaches the task's ceiling (:func:`ceiling`:
    a perfect score is what a file built from the public test edges earns).

    Raises:
        RecordError: if a stored record was edited (its ``record_sha256`` no longer matches).
    """
    from tgbhub.evaluate.directions import higher_is_better, primary_metric

    metric = primary_metric(task)
    upward = higher_is_better(metric, task)
    ranked: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []
    graded: list[Entry] = []
    for entry in entries:
        if entry.record is not None and metric not in entry.record["metrics"]:
            entry.rejection = {"message": f"the evaluator reported no {metric!r} (metrics "
                                          f"{sorted(entry.record['metrics'])}); the board ranks by it"}
            entry.record = None
        if entry.record is not None:
            graded.append(entry)
        elif entry.rejection is not None:
            rejected.append(_rejected_row(entry, metric))
    best = ceiling(metric, task)
    for group in _groups(graded):
        ranked.append(_ranked_row(group, metric, best))
    ranked.sort(key=lambda r: (-r["mean"] if upward else r["mean"], r["date"], r["model"], r["submission"]))
    for index, row in enumerate(ranked):
        previous = ranked[index - 1] if index else None
        row["rank"] = previous["rank"] if previous is not None and previous["mean"] == row["mean"] else index + 1
    rejected.sort(key=lambda r: (r["date"], r["submission"]))
    return ranked + rejected


def _claim_of(entry: Entry, metric: str) -> tuple[bool, float | None, str]:
    """The grader's verdict on an entry's claim: the one stored when it was graded, else computed from its bytes."""
    if entry.claim_check is not None:
        check = entry.claim_check
        return bool(check.get("flagged")), _number(check.get("claimed")), str(check.get("message") or "")
    flagged, claimed, message, _ = check_claim(entry.claim, entry.record, metric)  # type: ignore[arg-type]
    return flagged, claimed, message


def _ranked_row(group: list[Entry], metric: str, best: float | None = None) -> dict[str, Any]:
    seeds = [e.record for e in group]
    entry = records.aggregate(seeds)  # type: ignore[arg-type]
    checks = [_claim_of(e, metric) for e in group]
    claimed = [c[1] for c in checks]
    first = group[0]
    mean = float(entry["metrics"][metric]["mean"])
    messages = [c[2] for c in checks if c[2]]
    oracle = best is not None and mean == best
    if oracle:
        messages.append(f"{metric} {mean!r} is the task's ceiling: a perfect score is what a file built from the "
                        "public test edges (an oracle) earns, so it is flagged until the method is shown")
    ref = str(first.record["dataset"]["ref"]) if first.record else str(first.meta.get("dataset"))
    return {"rank": None, "model": str(first.meta["model"]), "metric": metric,
            "mean": mean, "std": entry["metrics"][metric]["std"],
            "n": int(entry["n"]), "seeds": json.dumps([s for s in entry["seeds"] if s is not None]), "verified": True,
            "flagged": any(c[0] for c in checks) or oracle,
            "claimed": (sum(claimed) / len(claimed)) if all(c is not None for c in claimed) else None,  # type: ignore
            "status": "ranked", "message": "; ".join(messages),
            "date": max(str(e.meta.get("submitted") or "")[:10] for e in group),
            # one link per row (the site's contract): the first seed's record; every seed's lies beside it, named
            # by its id in `submission`
            "record": first.path or _legacy_record_path(ref, first.board[1], first.id),
            "submission": ",".join(e.id for e in group),
            "paper": next((e.meta.get("paper") for e in group if e.meta.get("paper")), None),
            "dataset": ref}


def _legacy_record_path(dataset: str, task: str, sid: str) -> str:
    """Where an entry built outside a results repo (no outcome path) would have its record."""
    return f"records/{dataset.partition('@')[0]}/{task}/{sid}.json"


def _rejected_row(entry: Entry, metric: str) -> dict[str, Any]:
    seed = entry.meta.get("seed")
    claimed = None
    if entry.claim is not None:
        try:
            claimed = _number((json.loads(entry.claim).get("metrics") or {}).get(metric))
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
            claimed = None
    model = entry.meta.get("model")
    return {"rank": None, "model": str(model) if model is not None else "-", "metric": metric, "mean": None,
            "std": None, "n": 1, "seeds": json.dumps([] if seed is None else [seed]), "verified": False,
            "flagged": False, "claimed": claimed, "status": "rejected",
            "message": str(entry.rejection["message"]),  # type: ignore[index]
            "date": str(entry.meta.get("submitted") or "")[:10], "record": "", "submission": entry.id,
            "paper": entry.meta.get("paper"), "dataset": str(entry.meta.get("dataset"))}


def board_bytes(rows: Sequence[Mapping[str, Any]]) -> bytes:
    """``leaderboard.parquet``'s bytes: :data:`COLUMNS` in order, the same bytes for the same rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(name, getattr(pa, kind)() if kind != "bool" else pa.bool_()) for name, kind in COLUMNS])
    table = pa.Table.from_pylist([{name: row[name] for name, _ in COLUMNS} for row in rows], schema=schema)
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()
