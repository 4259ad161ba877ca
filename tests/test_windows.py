"""Events, windows and batches of link forecasting (tgbhub.forecasting.windows), on hand-made and built data."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import tgbhub
from tgbhub.errors import InvalidNameError
from tgbhub.forecasting.windows import batch_index, events, nice_duration, suggest_horizon, window_index


def graph(t, src=None, dst=None, splits=None, unit="row", symmetric=False, num_nodes=10):
    t = np.asarray(t)
    n = len(t)
    src = np.zeros(n, dtype=np.int64) if src is None else np.asarray(src)
    dst = np.ones(n, dtype=np.int64) if dst is None else np.asarray(dst)
    manifest = SimpleNamespace(graph={"symmetric": symmetric, "num_nodes": num_nodes},
                               splits=splits or {"all": (0, n)}, split_unit=unit)
    return SimpleNamespace(manifest=manifest, t=t, src=src, dst=dst)


def yielded(index):
    return [list(range(a, b)) for a, b in zip(index.lo, index.hi) if b > a]


def test_dyglib_loader_vectors() -> None:
    """The DyGLib fork's SnapshotLoader tests (its test/test_snapshot_loader.py): len counts empty windows, iteration
    skips them."""
    ev = events(graph([0, 0, 1, 1, 1, 1, 2, 3, 4, 4]))
    assert yielded(window_index(ev, "all", 1)) == [[0, 1], [2, 3, 4, 5], [6], [7], [8, 9]]
    assert len(window_index(ev, "all", 2)) == 3
    ev = events(graph([100, 100, 101, 101, 101, 101, 106, 106, 107, 107]))
    one, two = window_index(ev, "all", 1), window_index(ev, "all", 2)
    assert (len(one), len(yielded(one))) == (8, 4)
    assert (len(two), yielded(two)) == (4, [[0, 1, 2, 3, 4, 5], [6, 7, 8, 9]])
    assert two.t_start.tolist() == [100, 102, 104, 106] and two.sizes.tolist() == [6, 0, 0, 4]


def test_pyg_loader_vectors_count_empty_windows() -> None:
    """The PyG branch's SnapshotLoader tests: h=1 -> 9 windows, h=2 -> 5, empty ones included."""
    ev = events(graph([100, 101, 101, 101, 105, 105, 108]))
    assert [len(window_index(ev, "all", h)) for h in (1, 2)] == [9, 5]
    ev = events(graph([0, 1, 1, 1, 2, 2, 3]))
    assert [len(window_index(ev, "all", h)) for h in (1, 2)] == [4, 2]


def test_half_open_windows_keep_non_integer_times() -> None:
    """DyGLib's closed integer ranges drop t in (t0+(i+1)h-1, t0+(i+1)h); half-open windows keep every event."""
    ev = events(graph([0.0, 0.5, 1.5, 1.99, 2.0, 3.7]))
    index = window_index(ev, "all", 2)
    assert index.sizes.sum() == 6 and yielded(index) == [[0, 1, 2, 3], [4, 5]]
    assert index.window_of(np.arange(6)).tolist() == [0, 0, 0, 0, 1, 1]
    ev = events(graph(np.array([0.1, 0.2, 0.30000000000000004, 0.9]) * 3))
    index = window_index(ev, "all", 0.3)
    assert index.sizes.sum() == 4 and (index.t_start[index.window_of(np.arange(4))] <= ev.t).all()
    assert (ev.t < index.t_end[index.window_of(np.arange(4))]).all()


def test_symmetric_graphs_score_each_undirected_edge_once() -> None:
    t = [0, 0, 1, 1, 1, 1]
    ev = events(graph(t, src=[0, 1, 2, 3, 3, 3], dst=[1, 0, 3, 2, 3, 4], symmetric=True,
                      splits={"train": (0, 1), "test": (1, 2)}, unit="snapshot"))
    assert ev.src.tolist() == [0, 2, 3, 3] and ev.dst.tolist() == [1, 3, 3, 4] and ev.rows.tolist() == [0, 2, 4, 5]
    assert dict(ev.splits) == {"train": (0, 1), "test": (1, 4)}


def test_snapshot_splits_anchor_at_their_first_snapshot_and_keep_leading_empty_windows() -> None:
    ev = events(graph([0, 0, 3, 3, 4], splits={"train": (0, 2), "test": (2, 6)}, unit="snapshot"))
    index = window_index(ev, "test", 1)
    assert index.t_start.tolist() == [2, 3, 4, 5] and index.sizes.tolist() == [0, 2, 1, 0]
    assert index.lo.tolist() == [2, 2, 4, 5]  # absolute positions: history of window 1 = events [0, 2)
    assert window_index(ev, "test", 3).sizes.tolist() == [3, 0]  # the last window stops at the split's end


def test_batches_are_consecutive_chunks() -> None:
    ev = events(graph(np.arange(7), splits={"train": (0, 2), "test": (2, 7)}))
    index = batch_index(ev, "test", 2)
    assert index.lo.tolist() == [2, 4, 6] and index.hi.tolist() == [4, 6, 7]
    assert index.t_start.tolist() == [2, 4, 6] and index.t_end.tolist() == [3, 5, 6]


@pytest.mark.parametrize("bad", [0, -1, float("nan"), "x", 1.5])
def test_bad_horizons_name_the_value_and_the_fix(bad) -> None:
    ev = events(graph([0, 1, 2], splits={"s": (0, 3)}, unit="snapshot"))
    with pytest.raises(InvalidNameError, match="horizon") as info:
        window_index(ev, "s", bad)
    assert repr(bad) in str(info.value) and "e.g. horizon=" in str(info.value)


def test_unknown_split_and_bad_batch_size() -> None:
    ev = events(graph([0, 1]))
    with pytest.raises(InvalidNameError, match="no split 'test'; the splits are all"):
        window_index(ev, "test", 1)
    with pytest.raises(InvalidNameError, match="batch size 0"):
        batch_index(ev, "all", 0)


def test_matched_horizons_round_like_the_paper() -> None:
    """The paper's matched horizons (docs/forecasting.md, Horizon): nice(200 T/m) for Wikipedia (3 400 s -> 1 h),
    Reddit (800 -> 15 min), MOOC (1 240 -> 20 min), UCI (55 940 -> 16 h), Enron (181 640 -> 48 h), Social (2 000 ->
    30 min)."""
    assert [nice_duration(s) for s in (3400, 800, 1240, 55940, 181640, 2000)] == [3600, 900, 1200, 57600, 172800,
                                                                                     1800]
    ev = events(graph(np.linspace(0, 1000.0, 101)))
    assert suggest_horizon(ev)["value"] == nice_duration(200 * 1000.0 / 101)


def test_tgrab_windows_are_snapshots(shared_cache: Path) -> None:
    ds = tgbhub.load_dataset("t-grab/ce-4", cache_dir=shared_cache)
    ev = events(ds)
    assert suggest_horizon(ev)["value"] == 1 and ev.time == "snapshot"
    index = window_index(ev, "test", 1)
    start, stop = ds.snapshot_splits["test"]
    assert len(index) == stop - start
    for w in (0, len(index) // 2, len(index) - 1):
        _, src, dst = next(iter(ds._range("x", start + w, start + w + 1).snapshots()))
        keep = src <= dst
        assert (ev.src[index.lo[w]:index.hi[w]] == src[keep]).all() and (ev.dst[index.lo[w]:index.hi[w]] == dst[keep]).all()
