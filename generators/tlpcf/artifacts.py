"""A distorted variant's artifacts and manifest: only the rows it replaces, plus their paired negatives.

Files (the parent's are never copied; the dataset object puts the parent's other rows around these):

========================== =========================================================================================
``test-events.parquet``    the distorted test events, both directions of each undirected copy: ``t`` float64,
                           ``src``/``dst`` int32, ``orig_event_id`` int64 (the parent's test event, which is also the
                           row of its ranking query in the parent's ``negatives-test.parquet``), ``copy_idx`` int32;
                           sorted by (t, orig_event_id, copy_idx, direction)
``negatives-test.parquet`` ``paired`` negatives: each distorted query (row with src < dst)
                           inherits the negatives of its ``orig_event_id``, so SHUFFLE and the real split differ only
                           in time and scores can be paired (the default ``ranking`` task)
``negatives-test-          ``regenerated`` negatives: the parent's strategy (hist-rnd, same q and ratio, history =
regenerated.parquet``      the parent's rows before the split) recomputed on the distorted stream, conflicts taken at
                           the distorted timestamps, streams keyed by the variant's name (``ranking-regenerated``)
========================== =========================================================================================

The manifest records the lineage (``recipe.parent`` with the parent file's content digest, ``prov:wasDerivedFrom``),
the row ranges of every split, tau_bar, the invariants that were checked (with their values) and ATD/ACD against the
parent's test split (the paper's Table 2 quantities).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tgbhub.errors import GenerationError
from tgbhub.hashing import DIGEST_ALGORITHM, content_digest
from tgbhub.manifest import Manifest, plain

from ..families import Distances
from ..manifests import croissant_document, file_object, parquet_record_set
from ..negatives import hist_rnd, history_csr, stream_key
from ..ranking import negatives_file, ranking_task, write_negatives
from ..transforms import canonical_params, transform as transform_spec
from .catalogue import CITATION, GENERATOR, VERSION, Derivation, derived_name
from .distort import derivation_key, distort, tau_bar

EVENTS_FILE = "test-events.parquet"
REGENERATED_FILE = "negatives-test-regenerated.parquet"
SPLIT = "test"
PUBLISHED = "2026-11-23"
_SCHEMA = pa.schema([("t", pa.float64()), ("src", pa.int32()), ("dst", pa.int32()), ("orig_event_id", pa.int64()),
                     ("copy_idx", pa.int32())])


def _parent_rows(parent: Manifest, edges: Mapping[str, np.ndarray]) -> tuple[int, int]:
    """Row range of the parent's test split (its splits count snapshots; its rows are sorted by t)."""
    if SPLIT not in parent.splits:
        raise GenerationError(f"{parent.name}@{parent.version} has no {SPLIT!r} split to distort; its splits are "
                              f"{', '.join(parent.splits)}")
    lo, hi = parent.splits[SPLIT]
    first, last = np.searchsorted(edges["t"], [lo, hi])
    return int(first), int(last)


def _queries(columns: Mapping[str, np.ndarray]) -> np.ndarray:
    return np.flatnonzero(columns["src"] < columns["dst"])


def transform(parent: Manifest, parent_columns: Mapping[str, Mapping[str, np.ndarray]], kind: str,
              params: Mapping[str, Any], seed: int) -> dict[str, dict[str, np.ndarray]]:
    """The variant's files as columns: the distorted test events and their paired negatives.

    Raises:
        GenerationError: for a parent without a test split or ranking negatives, or a kind/parameter the transform
            does not know.
    """
    edges_file = parent.graph["edges_file"]
    edges = parent_columns[edges_file]
    first, last = _parent_rows(parent, edges)
    key = derivation_key(str(parent.file(edges_file).digest), kind, params, seed)
    events = distort(np.asarray(edges["src"][first:last]), np.asarray(edges["dst"][first:last]),
                     np.asarray(edges["t"][first:last]), kind, params, key, symmetric=bool(parent.graph["symmetric"]))
    parent_negatives = parent_columns.get(negatives_file(SPLIT))
    if parent_negatives is None:
        raise GenerationError(f"{parent.name}@{parent.version} has no {negatives_file(SPLIT)} to pair the variant's "
                              "queries with; distort a dataset that declares the ranking task")
    queries = _queries(events)
    origin = events["orig_event_id"][queries]
    parent_queries = int(np.count_nonzero(edges["src"][first:last] < edges["dst"][first:last]))
    if int(events["orig_event_id"].max(initial=-1)) + 1 != parent_queries or parent_queries != len(
            parent_negatives["count"]):
        raise GenerationError(f"{parent.name}@{parent.version}: its test split has {parent_queries} ranking queries "
                              f"and {len(parent_negatives['count'])} negatives rows, but the transform saw "
                              f"{int(events['orig_event_id'].max(initial=-1)) + 1} events (self-loops?); "
                              "paired negatives need one event per query")
    keys = {"t": events["t"][queries], "src": events["src"][queries], "dst": events["dst"][queries]}
    paired = {**keys, "negatives": np.ascontiguousarray(parent_negatives["negatives"][origin]),
              "count": np.ascontiguousarray(parent_negatives["count"][origin])}
    spec = _parent_negatives(parent)
    history = history_csr(np.asarray(edges["src"][:first]), np.asarray(edges["dst"][:first]),
                          int(parent.graph["num_nodes"]))
    stream = stream_key(derived_name(parent.name, kind, params, seed), SPLIT, seed)
    fresh, count = hist_rnd(events["t"], events["src"], events["dst"], history, int(parent.graph["num_nodes"]),
                            int(spec["q"]), float(spec["hist_ratio"]), stream, queries=queries)
    return {EVENTS_FILE: events, negatives_file(SPLIT): paired, REGENERATED_FILE: {**keys, "negatives": fresh,
                                                                                   "count": count}}


def write(files: Mapping[str, Mapping[str, np.ndarray]], folder: Path) -> dict[str, Path]:
    """Write the variant's files into ``folder`` (zstd Parquet, no timestamps: byte-stable)."""
    folder.mkdir(parents=True, exist_ok=True)
    events = files[EVENTS_FILE]
    table = pa.Table.from_arrays([pa.array(np.asarray(events[f.name], dtype=f.type.to_pandas_dtype()))
                                  for f in _SCHEMA], schema=_SCHEMA)
    pq.write_table(table, folder / EVENTS_FILE, compression="zstd", row_group_size=1 << 20, write_statistics=True)
    for name in (negatives_file(SPLIT), REGENERATED_FILE):
        write_negatives(files[name], folder / name)
    return {name: folder / name for name in files}


def _splits(parent: Manifest, edges: Mapping[str, np.ndarray], replaced: int) -> dict[str, list[int]]:
    """Row ranges of every split: the parent's, with the test split's rows replaced by ``replaced`` rows (splits
    after it move by the difference)."""
    first, last = _parent_rows(parent, edges)
    shift = replaced - (last - first)
    out = {}
    for name, (lo, hi) in parent.splits.items():
        a, b = (int(x) for x in np.searchsorted(edges["t"], [lo, hi]))
        out[name] = [first, first + replaced] if name == SPLIT else [a, b] if b <= first else [a + shift, b + shift]
    return out


def _events(columns: Mapping[str, np.ndarray], symmetric: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One row per event (the src < dst row of an undirected pair), as ATD/ACD count events."""
    keep = columns["src"] < columns["dst"] if symmetric else np.ones(len(columns["t"]), dtype=bool)
    return columns["src"][keep], columns["dst"][keep], np.asarray(columns["t"][keep], dtype=np.float64)


def invariants(kind: str, params: Mapping[str, Any], before: tuple[np.ndarray, ...],
               after: Mapping[str, np.ndarray], symmetric: bool, tau: float) -> dict[str, Any]:
    """The exact invariants of docs/derived.md ("The two distortions"), measured on the built variant (the build
    refuses if one fails).

    Raises:
        GenerationError: naming the invariant that does not hold.
    """
    src, dst, t = before
    out_src, out_dst, out_t = _events(after, symmetric)
    spec = transform_spec(kind)
    k = spec.copies(params)
    keep = after["src"] < after["dst"] if symmetric else np.ones(len(after["t"]), dtype=bool)
    origin = after["orig_event_id"][keep]
    pairs_in, counts_in = np.unique(np.stack([src, dst]), axis=1, return_counts=True)
    pairs_out, counts_out = np.unique(np.stack([out_src, out_dst]), axis=1, return_counts=True)
    facts: dict[str, Any] = {
        "events_in": int(len(t)), "events_out": int(len(out_t)), "copies_per_event": k,
        "each_event_copied_k_times": bool(np.array_equal(np.bincount(origin, minlength=len(t)),
                                                         np.full(len(t), k))),
        "pair_counts_times_k": bool(np.array_equal(pairs_in, pairs_out) and np.array_equal(counts_in * k,
                                                                                              counts_out)),
        "node_set_unchanged": bool(np.array_equal(np.union1d(src, dst), np.union1d(out_src, out_dst))),
        **spec.checks(t, out_t, origin, tau),
    }
    failed = [name for name, value in facts.items() if value is False]
    if failed:
        raise GenerationError(f"the {kind} variant breaks the invariant(s) {', '.join(failed)} (facts: {facts}); "
                              "this is a bug in the transform: report it")
    return facts


def manifest_document(variant: Derivation, parent: Manifest, parent_columns: Mapping[str, Mapping[str, np.ndarray]],
                      files: Mapping[str, Mapping[str, np.ndarray]], folder: Path,
                      distances: Distances) -> dict[str, Any]:
    """The Croissant manifest of one built variant (``folder`` holds its files); ``distances`` is the evaluator's
    ATD/ACD (:func:`tgbhub.evaluate.metrics.generative_scores`), handed over by whoever builds the variant."""
    edges_file = parent.graph["edges_file"]
    edges = parent_columns[edges_file]
    first, last = _parent_rows(parent, edges)
    symmetric = bool(parent.graph["symmetric"])
    events = files[EVENTS_FILE]
    before = _events({k: np.asarray(v[first:last]) for k, v in edges.items()}, symmetric)
    tau = tau_bar(before[2])
    params = canonical_params(variant.kind, variant.params)
    scores = distances(before, _events(events, symmetric), fallback="cap")
    distance: dict[str, float | str] = {key: scores[key] for key in (
        "atd", "acd", "atd_reverse", "acd_reverse", "atd_symmetric", "acd_symmetric", "count_ratio", "T", "tau_bar")}
    distance["convention"] = ("TLPCF Eq. 6/7 against the parent's test events (one per undirected edge, src < dst), "
                              "fallback 'cap', open windows of +-tau_bar, directed pairs")
    stats = {"num_rows": int(len(events["t"])) + int(len(edges["t"])) - (last - first),
             "test_rows": int(len(events["t"])), "parent_test_rows": last - first, "tau_bar": tau,
             "t_min": float(events["t"].min()), "t_max": float(events["t"].max()),
             "invariants": invariants(variant.kind, params, before, events, symmetric, tau),
             "distance_to_parent_test": distance}
    tasks = _tasks(parent)
    description = (f"{transform_spec(variant.kind).describe(params)} of {variant.parent}'s test split, "
                   f"seed {variant.seed} (TLPCF, Rahman et al.). Train, validation and any other split are the "
                   "parent's rows, referenced, not copied; this dataset's files hold the "
                   f"{len(events['t'])} distorted test rows and their paired negatives.")
    record_sets = [parquet_record_set("test_events", EVENTS_FILE, "The distorted test events (both directions of "
                                      "each undirected copy), sorted by (t, orig_event_id, copy_idx).", events),
                   parquet_record_set("negatives-test", negatives_file(SPLIT), "Ranking queries of the distorted test "
                                      "split and their paired negatives, -1 padded after count.",
                                      files[negatives_file(SPLIT)]),
                   parquet_record_set("negatives-test-regenerated", REGENERATED_FILE, "The same queries with "
                                      "negatives regenerated on the distorted stream, -1 padded after count.",
                                      files[REGENERATED_FILE])]
    graph = {**plain(parent.graph), "time": "continuous", "edges_file": EVENTS_FILE,
             "replaces": {"split": SPLIT, "parent_rows": [first, last]}}
    return croissant_document(
        name=variant.name, version=variant.version, description=description, license=parent.license,
        published=PUBLISHED, citation=CITATION, responsible_ai=_responsible_ai(variant, parent, params),
        distribution=[file_object(name, folder / name) for name in files],
        record_sets=record_sets,
        recipe={"generator": GENERATOR, "version": VERSION, "params": {"kind": variant.kind, **params},
                "seed": variant.seed,
                "parent": {"dataset": variant.parent, "digests": {edges_file: parent.file(edges_file).digest,
                                                                  negatives_file(SPLIT):
                                                                      parent.file(negatives_file(SPLIT)).digest}}},
        digest=[{"file": name, "algorithm": DIGEST_ALGORITHM, "columns": list(columns),
                 "value": content_digest(columns)} for name, columns in files.items()],
        graph=graph, splits={"unit": "row", "boundaries": _splits(parent, edges, len(events["t"]))},
        tasks=tasks, stats=stats, discrepancies=[{
            "field": "samples", "paper": "unseeded files from the authors' machine, never published",
            "ours": "seeded, deterministic variants (spec section 6.4); not the authors' bytes",
            "evidence": "Aniq55/TLPCF@4f5ae08 src/shuffle.py and src/intensify.py call np.random without a seed"}],
        extra={"prov:wasDerivedFrom": {"@id": _parent_url(parent)}, "isBasedOn": {"@id": _parent_url(parent)}})


def _responsible_ai(variant: Derivation, parent: Manifest, params: Mapping[str, Any]) -> dict[str, Any]:
    """The variant's Croissant RAI fields: its parent's (the data it is made of), each extended by what the transform
    changes; a parent manifest without a field (an import cached before RAI fields existed) says so instead."""
    def inherited(key: str) -> list[str]:
        value = plain(parent.responsible_ai.get(key))
        if not value:
            return [f"{variant.parent}'s manifest records no {key}; see its source"]
        return list(value) if isinstance(value, list) else [str(value)]

    what = transform_spec(variant.kind).describe(params)
    return {
        "rai:dataCollection": " ".join([*inherited("rai:dataCollection"), (
            f"This variant adds no collected data: tgbhub derived it from {variant.parent} by {what} of the test "
            f"split, seed {variant.seed} (TLPCF, Rahman et al.); the other splits are the parent's rows, "
            "referenced.")]),
        "rai:dataUseCases": [
            f"Counterfactual evaluation of temporal link prediction (TLPCF): a model's scores on {variant.parent}'s "
            "real test split and on this distorted one show how much it relies on the temporal structure the "
            "transform destroys or exaggerates.", *inherited("rai:dataUseCases")],
        "rai:dataLimitations": [*inherited("rai:dataLimitations"), (
            f"The test split is counterfactual by construction ({what}): its event times (and multiplicities, where "
            "the transform copies events) occur in no source; use it against its parent, not as data in its own "
            "right.")],
        "rai:dataBiases": [*inherited("rai:dataBiases"), (
            "The transform is designed to remove or exaggerate temporal patterns, so the test split deliberately "
            "does not follow the parent's temporal distribution.")],
        "rai:personalSensitiveInformation": [*inherited("rai:personalSensitiveInformation"), (
            "The variant holds the parent's test events with new times and no other attribute: it adds no "
            "information about anyone.")],
        "rai:dataSocialImpact": " ".join(inherited("rai:dataSocialImpact")),
    }


def _parent_url(parent: Manifest) -> str:
    """Where the parent version lives on the Hub: its family repo at the parent's own dataset tag."""
    return f"https://huggingface.co/datasets/tgbhub/{parent.family}/tree/{parent.short_name}-v{parent.version}"


def _tasks(parent: Manifest) -> list[dict[str, Any]]:
    """The ranking task on the distorted test split, once per negatives mode (paired is the default)."""
    spec = _parent_negatives(parent)
    paired = ranking_task({"q": spec["q"], "hist_ratio": spec["hist_ratio"], "splits": [SPLIT]})
    paired["negatives"]["mode"] = ("paired: each distorted query (row with src < dst) has the parent's negatives of "
                                   "its orig_event_id, so a variant and the real split differ only in time")
    regenerated = ranking_task({"q": spec["q"], "hist_ratio": spec["hist_ratio"], "splits": [SPLIT]})
    regenerated["name"] = "ranking-regenerated"
    regenerated["negatives"]["files"] = {SPLIT: REGENERATED_FILE}
    regenerated["negatives"]["mode"] = ("regenerated: the parent's strategy recomputed on the distorted stream "
                                        "(history: the parent's rows before the split; conflicts: the destinations "
                                        "of src at the distorted t)")
    regenerated["negatives"]["seed"] = ("query i: splitmix64(key + splitmix64(i)), key = first 8 bytes "
                                        "(little-endian) of sha256('tgbhub-negatives-v1|<variant name>|test|<seed>')")
    return [paired, regenerated]


def _parent_negatives(parent: Manifest) -> Mapping[str, Any]:
    recipe = parent.recipe
    spec = recipe.params.get("negatives") if recipe is not None else None
    if not spec:
        raise GenerationError(f"{parent.name}@{parent.version} declares no ranking negatives in its recipe; "
                              "distort a dataset that declares the ranking task")
    return spec
