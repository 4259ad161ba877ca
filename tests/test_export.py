"""Loader adapters (tgbhub.compat.export): DyGLib ml_ with a split column, the TLPCF forks' ml_ files with split_times,
and TGB's (src, dst, t)-keyed negatives; the loader round trips (docs/derived.md, Exports for other loaders), on real
data."""

from __future__ import annotations

import csv
import json
import pickle
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import tgbhub
from tgbhub.compat import export
from tgbhub.cli import main
from tgbhub.data import TemporalGraphDataset
from tgbhub.errors import IntegrityError, InvalidNameError, ManifestError

BASE = "t-grab/pdet-2-16"


@pytest.fixture(scope="module")
def load(shared_cache: Path) -> Any:
    def _load(name: str) -> TemporalGraphDataset:
        dataset = tgbhub.load_dataset(name, cache_dir=shared_cache, offline=True)
        assert isinstance(dataset, TemporalGraphDataset)
        return dataset
    return _load


def _read_csv(path: Path) -> tuple[list[str], dict[str, np.ndarray]]:
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], rows[1:]
    columns = {name or "index": np.array([r[k] for r in body]) for k, name in enumerate(header)}
    return header, columns


def _parent_test_rows(parent: TemporalGraphDataset) -> int:
    """The parent's test rows as T-GRAB stores them: both directions of every undirected test event."""
    test = parent.split("test")
    assert len(test.t) == 2 * int(np.count_nonzero(np.asarray(test.src) < np.asarray(test.dst)))
    return len(test.t)


def _events(ds: TemporalGraphDataset, split: str) -> int:
    """The events of one split: one per undirected edge (its src <= dst row), the rows the ml export writes."""
    part = ds.split(split)
    return int(np.count_nonzero(np.asarray(part.src) <= np.asarray(part.dst)))


# --- DyGLib ---------------------------------------------------------------------------------------------------------


def test_dyglib_export_of_intense5_has_k_times_the_test_rows_and_the_parent_train_val(load: Any,
                                                                                     tmp_path: Path) -> None:
    ds = load(f"{BASE}~intense-k5-s0")
    written = export.export_dyglib(ds, tmp_path)
    assert [p.name for p in written.files] == [f"ml_pdet-2-16~intense-k5-s0{s}" for s in
                                               (".csv", ".npy", "_node.npy", "_splits.json")]
    _, columns = _read_csv(tmp_path / "ml_pdet-2-16~intense-k5-s0.csv")
    labels, counts = np.unique(columns["split"], return_counts=True)
    found = dict(zip(labels.tolist(), counts.tolist()))
    parent = ds.parent
    n_test = _parent_test_rows(parent)
    assert n_test == 14080  # 7040 undirected events, both directions stored
    assert found == {"train": len(parent.split("train").t), "val": len(parent.split("val").t), "test": 5 * n_test}
    sidecar = json.loads((tmp_path / "ml_pdet-2-16~intense-k5-s0_splits.json").read_text())
    assert sidecar["counts"] == found and sidecar["idx_ranges"]["test"] == [154881, 154880 + 5 * n_test]
    # what an unpatched DyGLib would do: its 0.70 / 0.85 quantiles fall inside the distorted test window
    unpatched = sidecar["unpatched_quantile_split"]
    assert unpatched["val_time"] > parent.snapshot_splits["test"][0] and unpatched["counts"]["test"] < 5 * n_test


@pytest.mark.parametrize("name", [BASE, f"{BASE}~intense-k5-s0"])
def test_dyglib_export_round_trips_to_the_dataset_rows(load: Any, tmp_path: Path, name: str) -> None:
    ds = load(name)
    export.export_dyglib(ds, tmp_path)
    stem = tmp_path / f"ml_{ds.manifest.short_name}"
    header, columns = _read_csv(stem.with_suffix(".csv"))
    assert header == ["", "u", "i", "ts", "label", "idx", "split"]
    n = ds.num_rows
    assert np.array_equal(columns["index"].astype(np.int64), np.arange(n))
    assert np.array_equal(columns["idx"].astype(np.int64), np.arange(1, n + 1))
    assert np.array_equal(columns["u"].astype(np.int64) - 1, np.asarray(ds.src))  # 1-based node ids
    assert np.array_equal(columns["i"].astype(np.int64) - 1, np.asarray(ds.dst))
    assert np.array_equal(columns["ts"].astype(np.float64), np.asarray(ds.t, dtype=np.float64))  # bit-exact
    assert set(columns["label"].tolist()) == {"0"}
    assert np.array_equal(columns["split"], export.row_splits(ds))
    edges = np.load(Path(f"{stem}.npy"))
    nodes = np.load(Path(f"{stem}_node.npy"))
    assert edges.shape == (n + 1, export.EDGE_FEATURE_DIM) and not edges.any()
    assert nodes.shape == (ds.num_nodes + 1, export.NODE_FEATURE_DIM) and not nodes.any()
    assert columns["u"].astype(np.int64).max() <= ds.num_nodes  # every id has a node-feature row


def test_row_splits_of_a_base_dataset_follow_its_snapshot_boundaries(load: Any) -> None:
    ds = load(BASE)
    labels = export.row_splits(ds)
    for name, (start, stop) in ds.snapshot_splits.items():
        t = np.asarray(ds.t)[labels == name]
        assert t.min() >= start and t.max() < stop and len(t) == len(ds.split(name).t)


# --- the paper's ml_ files ------------------------------------------------------------------------------------------


def _fork_counts(path: Path, split_times: Path, ds_name: str) -> dict[str, int]:
    """Split an exported ml_ file the way the forks do: ts <= val_time, val_time < ts <= test_time, ts > test_time."""
    constants = json.loads(split_times.read_text())[ds_name]
    _, columns = _read_csv(path)
    ts = columns["ts"].astype(np.float64)
    val_time, test_time = constants["val_time"], constants["test_time"]
    return {"train": int(np.count_nonzero(ts <= val_time)),
            "val": int(np.count_nonzero((ts > val_time) & (ts <= test_time))),
            "test": int(np.count_nonzero(ts > test_time))}


def test_ml_export_of_shuffle_splits_with_the_stored_split_times_to_the_same_counts(load: Any,
                                                                                    tmp_path: Path) -> None:
    ds = load(f"{BASE}~shuffle-s0")
    written = export.export_ml(ds, tmp_path)
    assert [p.name for p in written.files] == ["shuffle_1_ml_pdet-2-16.csv", "shuffle_1_ml_pdet-2-16.npy",
                                               "ml_pdet-2-16_node.npy", "split_times_pdet-2-16.json",
                                               "shuffle_1_ml_pdet-2-16.json"]
    header, _ = _read_csv(tmp_path / "shuffle_1_ml_pdet-2-16.csv")
    assert header == ["", "u", "i", "ts", "label", "idx"]  # the forks' columns, nothing else
    counts = _fork_counts(tmp_path / "shuffle_1_ml_pdet-2-16.csv", tmp_path / "split_times_pdet-2-16.json",
                          "pdet-2-16")
    parent = ds.parent
    # one row per event: half the stored rows of every split (T-GRAB stores both directions)
    assert counts == {s: _events(parent, s) for s in ("train", "val", "test")} == {
        s: len(parent.split(s).t) // 2 for s in ("train", "val", "test")}
    snapshots = parent.snapshot_splits
    assert export.split_times(ds) == (snapshots["val"][0] - 1, snapshots["test"][0] - 1) == (1279, 1407)
    assert written.info["misassigned"] == 0 and written.info["test_rows_before_test_start"] == 0
    assert written.info["stored_rows"] == ds.num_rows == 2 * written.info["rows"]
    assert np.load(tmp_path / "shuffle_1_ml_pdet-2-16.npy").shape == (ds.num_rows // 2 + 1, 1)


def test_ml_export_of_intense_reports_the_copies_before_the_test_boundary(load: Any, tmp_path: Path) -> None:
    ds = load(f"{BASE}~intense-k5-s0")
    written = export.export_ml(ds, tmp_path)
    assert written.files[0].name == "intense_5_1_ml_pdet-2-16.csv"
    counts = _fork_counts(written.files[0], tmp_path / "split_times_pdet-2-16.json", "pdet-2-16")
    parent = ds.parent
    # test_time is the last val snapshot, tau_bar (0.018) < 1 snapshot: the rule still splits exactly ...
    assert counts == {"train": _events(parent, "train"), "val": _events(parent, "val"),
                      "test": 5 * _events(parent, "test")} == {"train": 70400, "val": 7040, "test": 35200}
    assert written.info["misassigned"] == 0 and written.info["counts_by_rule"] == written.info["counts"]
    # ... but copies of first-snapshot events land up to tau_bar before the real boundary; a loader splitting at the
    # boundary itself (the paper's leak) would count exactly these as validation
    _, columns = _read_csv(written.files[0])
    ts = columns["ts"].astype(np.float64)
    test_start = parent.snapshot_splits["test"][0]
    before = int(np.count_nonzero((ts > 1407) & (ts < test_start)))
    assert before == written.info["test_rows_before_test_start"] == 125
    assert test_start - ds.manifest.stats["tau_bar"] <= written.info["earliest_test_ts"] < test_start
    assert not np.any(np.diff(ts) < 0)  # file order stays monotone: the early copies still follow every val row


def test_ml_export_of_the_base_is_the_unprefixed_file(load: Any, tmp_path: Path) -> None:
    written = export.export_ml(load(BASE), tmp_path)
    assert written.files[0].name == "ml_pdet-2-16.csv" and written.info["misassigned"] == 0


def test_ml_export_drops_splits_the_forks_do_not_know(load: Any, tmp_path: Path) -> None:
    ds = load("t-grab/ce-4")
    written = export.export_ml(ds, tmp_path)
    assert written.info["dropped_splits"] == ["test_inductive"]
    assert written.info["stored_rows"] == ds.num_rows - len(ds.split("test_inductive").t)
    assert written.info["rows"] == sum(_events(ds, s) for s in ("train", "val", "test"))
    assert written.info["counts_by_rule"] == {s: _events(ds, s) for s in ("train", "val", "test")}


def _notebook_acd(real_csv: Path, distorted_csv: Path, test_time: float) -> tuple[float, float]:
    """ACD as the TLPCF authors' metrics notebook computes it from two ml_ files: both filtered to ts > test_time,
    tau = (max - min) / n over the real rows, then per real row the same ordered (u, i) counted in the open window
    (t - tau, t + tau) in each file; the mean absolute difference. Returns (ACD, tau)."""
    def read(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        _, columns = _read_csv(path)
        ts = columns["ts"].astype(np.float64)
        keep = ts > test_time
        return columns["u"].astype(np.int64)[keep], columns["i"].astype(np.int64)[keep], ts[keep]

    (u, i, ts), (du, di, dts) = read(real_csv), read(distorted_csv)
    tau = (ts.max() - ts.min()) / len(ts)
    total = 0
    for a, b, t in zip(u, i, ts):
        real = np.count_nonzero((u == a) & (i == b) & (ts > t - tau) & (ts < t + tau))
        distorted = np.count_nonzero((du == a) & (di == b) & (dts > t - tau) & (dts < t + tau))
        total += abs(int(real) - int(distorted))
    return total / len(ts), tau


@pytest.mark.parametrize("kind", ["intense-k5", "shuffle"])
def test_ml_export_writes_one_row_per_event_so_the_notebook_acd_is_the_manifests(load: Any, tmp_path: Path,
                                                                                 kind: str) -> None:
    """The paper's files hold one row per interaction; both stored directions of an undirected edge would halve the
    notebook's tau_bar (T / rows) and give another ACD (1.55 for INTENSE(5) on pdet-2-16 instead of 4.0)."""
    ds = load(f"t-grab/pdet-2-1~{kind}-s0")
    parent = ds.parent
    base = export.export_ml(parent, tmp_path)
    variant = export.export_ml(ds, tmp_path)
    copies = 5 if kind == "intense-k5" else 1
    events = {s: _events(parent, s) for s in ("train", "val", "test")}
    assert base.info["rows"] == sum(events.values()) == parent.num_rows // 2
    assert variant.info["counts"] == {**events, "test": copies * events["test"]}
    for written in (base, variant):
        _, columns = _read_csv(written.files[0])
        u, i = columns["u"].astype(np.int64), columns["i"].astype(np.int64)
        assert len(u) == written.info["rows"] and np.all(u <= i)  # one row per event: the src <= dst row
    # every undirected edge of the parent, once
    _, columns = _read_csv(base.files[0])
    written_edges = sorted(zip(columns["ts"].astype(np.int64).tolist(), (columns["u"].astype(np.int64) - 1).tolist(),
                               (columns["i"].astype(np.int64) - 1).tolist()))
    stored = {(int(t), int(min(s, d)), int(max(s, d))) for t, s, d in zip(parent.t, parent.src, parent.dst)}
    assert written_edges == sorted(stored)
    test_time = json.loads((tmp_path / "split_times_pdet-2-1.json").read_text())["pdet-2-1"]["test_time"]
    value, tau = _notebook_acd(base.files[0], variant.files[0], test_time)
    recorded = ds.manifest.stats["distance_to_parent_test"]
    assert tau == pytest.approx(recorded["tau_bar"], rel=1e-12)
    assert value == pytest.approx(recorded["acd"], abs=1e-12)
    assert (value == 4.0) if kind == "intense-k5" else (0.0 < value < 4.0)


def test_paper_prefix_names_seed_plus_one_and_refuses_unknown_kinds() -> None:
    def fake(kind: str, params: dict[str, Any], seed: int) -> Any:
        manifest = SimpleNamespace(transform={"kind": kind, "params": params, "seed": seed})
        return SimpleNamespace(manifest=manifest, name="f/x~y", version="1.0.0")

    assert export.paper_prefix(fake("shuffle", {"scope": "test"}, 2)) == "shuffle_3_"
    assert export.paper_prefix(fake("intense", {"k": 5, "scope": "test"}, 9)) == "intense_5_10_"
    with pytest.raises(ManifestError, match="'reverse'.*dyglib"):
        export.paper_prefix(fake("reverse", {}, 0))


# --- TGB negatives shim ---------------------------------------------------------------------------------------------


def test_tgb_negatives_find_every_distorted_positive(load: Any, tmp_path: Path) -> None:
    ds = load(f"{BASE}~intense-k5-s0")
    written = export.export_tgb_negatives(ds, tmp_path)
    assert [p.name for p in written.files] == ["pdet-2-16~intense-k5-s0_test_ns.pkl"]
    table = pickle.loads(written.files[0].read_bytes())
    negatives = ds.negatives("test")
    assert len(table) == len(negatives) == 35200 and written.info["task"] == "ranking"
    test = ds.split("test")
    queries = np.asarray(test.src) < np.asarray(test.dst)  # the task's queries: one per undirected copy
    assert int(queries.sum()) == len(negatives)
    for s, d, t in zip(np.asarray(test.src)[queries], np.asarray(test.dst)[queries], np.asarray(test.t)[queries]):
        assert (s, d, t) in table  # numpy scalars, as TGB's sampler looks them up
    for i in range(0, len(negatives), 997):
        key = (int(negatives.src[i]), int(negatives.dst[i]), float(negatives.t[i]))
        assert np.array_equal(table[key], np.asarray(negatives.negatives[i, :negatives.count[i]]))


def test_tgb_negatives_of_a_base_dataset_have_integer_times(load: Any, tmp_path: Path) -> None:
    ds = load(BASE)
    table = pickle.loads(export.export_tgb_negatives(ds, tmp_path).files[0].read_bytes())
    assert len(table) == len(ds.negatives("test")) and all(type(k[2]) is int for k in table)


def test_tgb_negatives_take_the_named_task(load: Any, tmp_path: Path) -> None:
    ds = load(f"{BASE}~intense-k1-s0")
    written = export.export_tgb_negatives(ds, tmp_path, task="ranking-regenerated")
    regenerated = ds.negatives("test", task="ranking-regenerated")
    table = pickle.loads(written.files[0].read_bytes())
    assert written.info["task"] == "ranking-regenerated" and len(table) == len(regenerated)
    key = (int(regenerated.src[0]), int(regenerated.dst[0]), float(regenerated.t[0]))
    assert np.array_equal(table[key], np.asarray(regenerated.negatives[0, :regenerated.count[0]]))


def test_tgb_negatives_refuse_a_shuffle_whose_queries_share_a_key(load: Any, tmp_path: Path) -> None:
    ds = load(f"{BASE}~shuffle-s0")
    negatives = ds.negatives("test")
    keys = list(zip(negatives.src.tolist(), negatives.dst.tolist(), negatives.t.tolist()))
    assert len(set(keys)) < len(keys)  # SHUFFLE of snapshot times: one pair twice in one snapshot
    first = next(i for i, key in enumerate(keys) if key in set(keys[:i]))
    with pytest.raises(IntegrityError, match=r"both at \(src, dst, t\).*edge_id-keyed negatives") as caught:
        export.export_tgb_negatives(ds, tmp_path / "out")
    s, d, t = keys[first]
    assert f"and {first} both at (src, dst, t) = ({s}, {d}, {int(t)})" in str(caught.value)
    assert list((tmp_path / "out").iterdir()) == []  # nothing written, no temporary file left


# --- writing, errors, CLI -------------------------------------------------------------------------------------------


def test_a_file_that_does_not_verify_never_reaches_its_final_name(load: Any, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(export, "file_sha256", lambda path: "0" * 64)
    with pytest.raises(IntegrityError, match="ml_pdet-2-16.csv"):
        export.export_dyglib(load(BASE), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_bad_format_and_bad_folder_are_named(load: Any, tmp_path: Path) -> None:
    ds = load(BASE)
    with pytest.raises(InvalidNameError, match="'parquet'.*dyglib, ml, tgb-negatives"):
        export.export(ds, "parquet", tmp_path)
    target = tmp_path / "a-file"
    target.write_text("x")
    with pytest.raises(InvalidNameError, match="is a file; pass a folder"):
        export.export(ds, "dyglib", target)


def test_cli_export_prints_what_it_wrote(shared_cache: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--cache-dir", str(shared_cache), "export", f"{BASE}~intense-k5-s0", "--format", "ml", "--out"]
    assert main([*argv, str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"wrote {tmp_path / 'intense_5_1_ml_pdet-2-16.csv'}" in out and "test_rows_before_test_start: 125" in out
    assert main([*argv, str(tmp_path / "j"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["info"]["counts"]["test"] == 35200  # 5 copies of 7,040 events
    refused = ["--cache-dir", str(shared_cache), "export", f"{BASE}~shuffle-s0", "--format", "tgb-negatives",
               "--out", str(tmp_path / "tgb")]
    assert main(refused) == 2
    assert "edge_id-keyed negatives" in capsys.readouterr().err
