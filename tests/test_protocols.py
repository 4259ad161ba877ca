"""Window forecasting next to the legacy batch protocol (tgbhub.protocols): the paper's leakage, on real data."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import tgbhub
from tgbhub.baselines import run_baseline
from tgbhub.baselines.forecast import score_groups
from tgbhub.forecasting.windows import batch_index, events, window_index
from tgbhub.protocols import batch_scores, compare_protocols


def leaky_stream() -> SimpleNamespace:
    """Snapshots of 4 events; in each test snapshot one never-seen pair occurs twice, once in each half (a deterministic
    probe of the paper's App. H.4 leakage test): batches of 2 put the two occurrences in consecutive batches of the same
    timestamp."""
    t, src, dst = [], [], []
    for snapshot in range(10):
        fresh = (snapshot, snapshot + 20)
        t += [snapshot] * 4
        src += [fresh[0], 30, fresh[0], 31]
        dst += [fresh[1], 32, fresh[1], 33]
    order = np.lexsort((np.arange(40), np.asarray(t)))
    manifest = SimpleNamespace(graph={"symmetric": False, "num_nodes": 40}, splits={"train": (0, 5), "test": (5, 10)},
                               split_unit="snapshot")
    return SimpleNamespace(manifest=manifest, name="unit/leaky", version="1.0.0", t=np.asarray(t)[order],
                           src=np.asarray(src)[order], dst=np.asarray(dst)[order])


def test_batches_leak_same_time_events_and_windows_do_not() -> None:
    ds = leaky_stream()
    ev = events(ds)
    lo, hi = ev.range("test")
    codes = ev.pair_codes()[lo:hi]
    windows, batches = window_index(ev, "test", 1), batch_index(ev, "test", 2)
    by_window, _ = score_groups("edgebank", ev, windows, codes, codes, windows.window_of(np.arange(lo, hi)))
    by_batch, _ = score_groups("edgebank", ev, batches, codes, codes, batches.window_of(np.arange(lo, hi)))
    second = np.arange(hi - lo) % 4 == 2  # the fresh pair's second occurrence
    assert by_window[second].tolist() == [0.0] * 5 and by_batch[second].tolist() == [1.0] * 5
    assert (by_window[~second] == by_batch[~second]).all()
    # shuffling events inside each snapshot changes nothing for windows (order-invariant), but batches move
    rng = np.random.default_rng(0)
    shuffled = SimpleNamespace(**vars(ds))
    order = np.concatenate([rng.permutation(np.arange(4 * s, 4 * s + 4)) for s in range(10)])
    shuffled.src, shuffled.dst = ds.src[order], ds.dst[order]
    ev2 = events(shuffled)
    codes2 = ev2.pair_codes()[lo:hi]
    again, _ = score_groups("edgebank", ev2, windows, codes2, codes2, windows.window_of(np.arange(lo, hi)))
    assert sorted(zip(codes2.tolist(), again.tolist())) == sorted(zip(codes.tolist(), by_window.tolist()))


def test_batch_scores_on_the_leaky_stream_beat_windows_by_the_leak() -> None:
    """Every negative is an earlier snapshot's fresh pair (in memory: 1). Batches of 4 are the snapshots: positives
    (0, 1, 0, 1) vs four 1s give AUC 4 x 0.5 / 16 = 0.25. Batches of 2: (0, 1) vs (1, 1) -> 0.25, then the leaked
    second half (1, 1) vs (1, 1) -> 0.5: mean 0.375."""
    as_windows, leaking = batch_scores(leaky_stream(), "edgebank", 4), batch_scores(leaky_stream(), "edgebank", 2)
    assert (as_windows["batches"], as_windows["auc"]) == (5, 0.25)
    assert (leaking["batches"], leaking["auc"]) == (10, 0.375)


@pytest.fixture(scope="module")
def ce(shared_cache: Path):
    return tgbhub.load_dataset("t-grab/ce-4", cache_dir=shared_cache)


def test_compare_protocols_puts_the_graded_window_result_first(ce) -> None:
    rows = compare_protocols(ce, "edgebank-thr", (200, 10**9))
    graded = ce.get_evaluator("window-forecast").evaluate(
        run_baseline("edgebank-thr", ce, ce.manifest.task_named("window-forecast"), "test"))
    assert rows[0]["auc"] == graded["metrics"]["auc"] and rows[0]["protocol"] == "window h=1 snapshot"
    assert [r["protocol"] for r in rows[1:]] == ["batch b=200", f"batch b={10**9}"] and rows[2]["batches"] == 1
    for row in rows[1:]:
        assert row["delta_auc_pct"] == pytest.approx(100 * (rows[0]["auc"] - row["auc"]) / row["auc"])
    assert compare_protocols(ce, "edgebank-thr", (200,))[1] == rows[1]  # deterministic
