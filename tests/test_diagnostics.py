"""Batch-evaluation diagnostics (the link-forecasting paper's NMI measures and our direct counts; docs/forecasting.md,
Diagnostics) and `tgbhub forecast-stats`."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import tgbhub
from tgbhub.cli import main
from tgbhub.errors import InvalidNameError
from tgbhub.forecasting import diagnostics as diag
from tgbhub.forecasting.windows import Events, events, window_index

SNAPSHOTS = "t-grab/pdet-2-16"  # 1,536 snapshots of 50 or 60 events (two ER graphs), 7,040 test events: builds fast
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None

# App. B, Ex. B.1: E = ((a,b,1),(b,c,2),(c,a,2),(a,c,4),(a,b,5),(b,a,5)); batch ids for b=2, window ids for h=1
X = (1, 2, 2, 4, 5, 5)
Y = (1, 1, 2, 2, 3, 3)
Z = (1, 2, 2, 3, 4, 4)


def _stream(t, time_kind: str = "continuous", snapshots: tuple[int, int] | None = None) -> Events:
    """A one-split ("test") event list with times ``t`` (nodes do not matter to the diagnostics)."""
    t = np.asarray(t)
    zeros = np.zeros(len(t), dtype=np.int64)
    return Events(t=t, src=zeros, dst=zeros, rows=np.arange(len(t)), splits={"test": (0, len(t))}, symmetric=False,
                  num_nodes=1, time=time_kind, split_snapshots={"test": snapshots} if snapshots else {})


def _reference_nmi(x, y) -> float:
    """The textbook definition, one contingency cell at a time (independent of the implementation under test)."""
    n = len(x)
    xs, ys = sorted(set(x)), sorted(set(y))
    if len(xs) == len(ys) == 1 or n == 0:
        return 1.0
    px = {a: sum(1 for v in x if v == a) / n for a in xs}
    py = {b: sum(1 for v in y if v == b) / n for b in ys}
    mi = 0.0
    for a in xs:
        for b in ys:
            cell = sum(1 for u, v in zip(x, y) if u == a and v == b) / n
            if cell > 0:
                mi += cell * math.log(cell / (px[a] * py[b]))
    if mi <= 1e-15:
        return 0.0
    hx = -sum(p * math.log(p) for p in px.values())
    hy = -sum(p * math.log(p) for p in py.values())
    return mi / ((hx + hy) / 2)


def _entropy_of(values) -> float:
    counts = np.array(list(Counter(values).values()), dtype=float)
    p = counts / counts.sum()
    return float(-(p * np.log(p)).sum())


# --- NMI ------------------------------------------------------------------------------------------------------------


def test_worked_example_of_appendix_b() -> None:
    assert diag.mutual_info(X, Y) == pytest.approx(0.86756, abs=1e-5)
    assert diag.mutual_info(X, Z) == pytest.approx(1.32966, abs=1e-5)
    assert diag.mutual_info(Y, Z) == pytest.approx(0.86756, abs=1e-5)
    assert diag.entropy(X) == pytest.approx(1.32966, abs=1e-5) and diag.entropy(Z) == pytest.approx(diag.entropy(X))
    assert diag.entropy(Y) == pytest.approx(math.log(3))
    assert diag.nmi(X, Y) == pytest.approx(0.71455, abs=1e-4)
    assert diag.nmi(X, Z) == pytest.approx(1.0, abs=1e-12)
    assert diag.nmi(Y, Z) == pytest.approx(0.71455, abs=1e-4)
    # the rounded values the paper prints
    assert (round(diag.mutual_info(X, Y), 3), round(diag.entropy(X), 3), round(diag.nmi(X, Y), 3)) == (0.868, 1.33,
                                                                                                       0.715)


def test_worked_example_through_batches_and_windows() -> None:
    """The same numbers from the batch and window machinery: b=2 batches, h=1 windows (one of them empty)."""
    t = np.array(X, dtype=np.int64)
    windows = window_index(_stream(t), "test", 1)
    assert windows.sizes.tolist() == [1, 2, 0, 1, 2]  # [1,2) [2,3) [3,4) [4,5) [5,6)
    assert diag.batch_measures(t, 2)["nmi_time_batch"] == pytest.approx(0.71455, abs=1e-4)
    assert diag.window_measures(t, windows)["nmi_time_window"] == pytest.approx(1.0, abs=1e-12)
    assert diag.nmi_batch_window(t, 2, windows) == pytest.approx(0.71455, abs=1e-4)
    # window ids as an array: the gap at 3 is an empty window, exactly as in the index
    ids = np.floor(t - 1).astype(np.int64)
    assert diag.window_measures(t, ids) == diag.window_measures(t, windows)


def test_nmi_matches_the_definition_on_random_labels() -> None:
    rng = np.random.default_rng(7)
    for _ in range(150):
        n = int(rng.integers(0, 40))
        x = rng.integers(0, int(rng.integers(1, 6)), n)
        y = rng.integers(0, int(rng.integers(1, 6)), n)
        assert diag.nmi(x, y) == pytest.approx(_reference_nmi(x.tolist(), y.tolist()), abs=1e-12), (x, y)
    floats = np.round(rng.uniform(0, 3, 30), 1)
    words = rng.choice(["a", "b", "c"], 30)
    assert diag.nmi(floats, words) == pytest.approx(_reference_nmi(floats.tolist(), words.tolist()), abs=1e-12)


@pytest.mark.skipif(importlib.util.find_spec("sklearn") is None, reason="scikit-learn is not installed")
def test_nmi_equals_scikit_learn() -> None:
    from sklearn.metrics import mutual_info_score, normalized_mutual_info_score

    rng = np.random.default_rng(11)
    for _ in range(200):
        n = int(rng.integers(1, 80))
        x = rng.integers(0, int(rng.integers(1, 9)), n)
        y = rng.integers(0, int(rng.integers(1, 9)), n)
        assert diag.nmi(x, y) == normalized_mutual_info_score(x, y), (x, y)
        assert diag.mutual_info(x, y) == mutual_info_score(x, y), (x, y)
    t = np.sort(rng.integers(0, 5000, 20000)).astype(float)
    batches = np.arange(len(t)) // 200
    assert diag.nmi(t, batches) == normalized_mutual_info_score(t, batches)
    assert diag.batch_measures(t, 200)["nmi_time_batch"] == pytest.approx(normalized_mutual_info_score(t, batches),
                                                                         abs=1e-12)


def test_nmi_degenerate_cases() -> None:
    assert diag.nmi([3, 3, 3], [7, 7, 7]) == 1.0  # both constant: a perfect match (as scikit-learn)
    assert diag.nmi([], []) == 1.0
    assert diag.nmi([3, 3, 3], [1, 2, 3]) == 0.0 and diag.nmi([1, 2, 3], [0, 0, 0]) == 0.0
    assert diag.nmi([0, 0, 1, 1], [0, 1, 0, 1]) == 0.0  # independent
    assert diag.nmi([0, 0, 1, 1], [5, 5, 2, 2]) == pytest.approx(1.0)  # relabelled
    with pytest.raises(InvalidNameError, match="x has 3 labels but y has 2"):
        diag.nmi([1, 2, 3], [1, 2])
    with pytest.raises(InvalidNameError, match=r"x\[1\] is nan"):
        diag.nmi([1.0, float("nan")], [1, 2])
    with pytest.raises(InvalidNameError, match="one-dimensional"):
        diag.nmi(np.zeros((2, 2)), np.zeros((2, 2)))


def test_nmi_handles_a_million_events_quickly() -> None:
    rng = np.random.default_rng(0)
    t = np.sort(rng.integers(0, 300_000, 1_000_000)).astype(np.float64)
    started = time.perf_counter()
    value = diag.nmi(t, np.arange(len(t)) // 200)
    assert time.perf_counter() - started < 10.0
    assert 0.5 < value < 1.0


# --- NMI(time, window) and NMI(time, batch) at the resolution, with ties, on snapshots -----------------------------


def test_windows_at_the_resolution_recover_every_timestamp() -> None:
    rng = np.random.default_rng(3)
    t = np.sort(rng.choice(np.arange(0, 500), 2000))  # integer times, ties and gaps
    measures = diag.window_measures(t, window_index(_stream(t), "test", 1))
    assert measures["nmi_time_window"] == pytest.approx(1.0, abs=1e-12)
    assert measures["empty_windows"] == int(t.max() - t.min()) + 1 - len(np.unique(t)) > 0
    assert diag.window_measures(t, window_index(_stream(t), "test", 2))["nmi_time_window"] < 0.99


def test_batches_of_one_with_unique_and_with_tied_timestamps() -> None:
    rng = np.random.default_rng(4)
    unique = np.cumsum(rng.exponential(1.0, 3000))
    assert diag.batch_measures(unique, 1)["nmi_time_batch"] == pytest.approx(1.0, abs=1e-12)
    tied = np.sort(rng.integers(0, 800, 3000))
    m, h_t = len(tied), _entropy_of(tied.tolist())
    # b=1: each batch is one event, so I = H(T), H(batch) = ln m
    assert diag.batch_measures(tied, 1)["nmi_time_batch"] == pytest.approx(2 * h_t / (h_t + math.log(m)), abs=1e-12)
    assert diag.batch_measures(tied, 1)["nmi_time_batch"] < 0.99


def test_snapshots_of_equal_size_peak_at_one_and_fall_with_spread() -> None:
    k, count = 40, 300
    equal = np.repeat(np.arange(count), k)
    assert diag.batch_measures(equal, k)["nmi_time_batch"] == pytest.approx(1.0, abs=1e-12)
    assert diag.batch_measures(equal, k // 2)["nmi_time_batch"] < 1.0 - 1e-6
    rng = np.random.default_rng(5)
    best = []
    for spread in (4, 16):
        sizes = np.maximum(1, np.round(rng.normal(k, spread, count))).astype(int)
        t = np.repeat(np.arange(count), sizes)
        best.append(max(diag.batch_measures(t, b)["nmi_time_batch"] for b in range(10, 81, 2)))
    assert 1.0 > best[0] > best[1]


# --- bursts and NMI(batch, window): the paper's Table 3 pattern ----------------------------------------------------


def test_a_single_timestamp_burst_is_one_window_but_many_batches() -> None:
    rng = np.random.default_rng(6)
    before = np.cumsum(rng.exponential(1.0, 4000))  # 4000 events: the burst starts on a batch boundary
    burst_time = math.floor(before[-1]) + 10.0
    after = burst_time + 1.0 + np.cumsum(rng.exponential(1.0, 4000))
    k = 1705  # Enron's burst: 9 batches of 200
    t = np.concatenate([before, np.full(k, burst_time), after])
    ev = _stream(t)
    windows = window_index(ev, "test", 200.0)
    burst = np.arange(4000, 4000 + k)
    assert len(np.unique(windows.window_of(burst))) == 1
    assert len(np.unique(burst // 200)) == math.ceil(k / 200) == 9
    batches = diag.batch_measures(t, 200)
    assert batches["leak_edges"] == k - 200  # every burst event after the first batch of the burst
    assert batches["split_ts_frac"] == pytest.approx(1 / len(np.unique(t)))
    assert diag.window_measures(t, windows)["size_max"] >= k
    # shifted off the boundary the burst touches one batch more, still one window
    shifted = np.concatenate([before[:-50], np.full(k, burst_time), after])
    assert len(np.unique((np.arange(3950, 3950 + k)) // 200)) == math.ceil(k / 200) + 1
    assert diag.batch_measures(shifted, 200)["leak_edges"] == k - 50


def test_batch_window_nmi_is_lower_for_bursty_activity() -> None:
    """As in the paper's Table 3 (Wikipedia 0.890, Reddit 0.915): with h = 200 T/m windows hold ~200 events and
    NMI(batch, window) ~ 0.90 for a Poisson stream; alternating rates lower it."""
    rng = np.random.default_rng(0)
    values = {}
    for label, gaps in (("poisson", rng.exponential(1.0, 50_000)),
                        ("alternating", np.concatenate([rng.exponential(0.2 if i % 2 else 1.8, 2000)
                                                        for i in range(25)]))):
        t = np.cumsum(gaps)
        windows = window_index(_stream(t), "test", 200 * diag.temporal_density(t))
        assert diag.window_measures(t, windows)["size_mean"] == pytest.approx(200, rel=0.02)
        values[label] = diag.nmi_batch_window(t, 200, windows)
    assert 0.88 < values["poisson"] < 0.93
    assert values["alternating"] < values["poisson"] - 0.02


# --- our direct counts (the paper measures only NMI) and the per-timestamp measures -------------------------------


def test_counts_on_a_hand_made_stream() -> None:
    t = np.array([0, 0, 0, 1, 1, 2, 3, 3, 3, 3])
    got = diag.batch_measures(t, 3)  # batches [0 0 0] [1 1 2] [3 3 3] [3]
    assert (got["batches"], got["events"], got["batch_size"]) == (4, 10, 3)
    assert got["multi_ts_batch_frac"] == pytest.approx(1 / 4)  # only [1 1 2]
    assert got["split_ts_frac"] == pytest.approx(1 / 4)  # only 3, over the last two batches
    assert (got["leak_edges"], got["leak_edge_frac"]) == (1, pytest.approx(1 / 10))  # the lone last 3
    # durations t[3]-t[0], t[6]-t[3], t[9]-t[6] = 1, 2, 0
    assert got["batch_duration_mean"] == pytest.approx(1.0)
    assert got["batch_duration_std"] == pytest.approx(math.sqrt(2 / 3))
    assert got["batch_duration_cv"] == pytest.approx(math.sqrt(2 / 3))
    example = diag.batch_measures(np.array(X), 2)  # [1 2] [2 4] [5 5]
    assert (example["multi_ts_batch_frac"], example["split_ts_frac"]) == (pytest.approx(2 / 3), pytest.approx(1 / 4))
    assert example["leak_edges"] == 1 and example["batch_duration_mean"] == pytest.approx(2.0)
    single = diag.batch_measures(np.array([5, 5, 5]), 200)
    assert single["batch_duration_mean"] is None and single["batch_duration_cv"] is None
    assert single["leak_edges"] == 0 and single["nmi_time_batch"] == 1.0


def test_window_sizes_count_empty_windows() -> None:
    t = np.array(X)
    got = diag.window_measures(t, window_index(_stream(t), "test", 1))  # sizes 1 2 0 1 2
    assert (got["windows"], got["empty_windows"], got["size_max"]) == (5, 1, 2)
    assert got["size_mean"] == pytest.approx(1.2) and got["size_std"] == pytest.approx(math.sqrt(0.56))
    assert got["window_size_cv"] == pytest.approx(math.sqrt(0.56) / 1.2)
    assert (got["size_mean_nonempty"], got["size_std_nonempty"]) == (pytest.approx(1.5), pytest.approx(0.5))


def test_multiplicity_and_density() -> None:
    t = np.array([0, 0, 0, 1, 4, 4])
    assert diag.timestamp_multiplicity(t) == {"distinct": 3, "mean": 2.0, "std": pytest.approx(math.sqrt(2 / 3)),
                                              "max": 3}
    assert diag.temporal_density(t) == pytest.approx(4 / 6)
    with pytest.raises(InvalidNameError, match="no events"):
        diag.temporal_density([])


def test_bad_arguments_say_what_and_how_to_fix() -> None:
    with pytest.raises(InvalidNameError, match=r"not sorted by time: t\[1\]=5 > t\[2\]=3.*events\(dataset\)\.t"):
        diag.batch_measures(np.array([1, 5, 3]), 2)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(InvalidNameError, match=f"batch size {bad!r} is not a positive integer"):
            diag.batch_measures(np.array([1, 2, 3]), bad)
    t = np.array([1, 2, 3])
    with pytest.raises(InvalidNameError, match="2 window ids for 3 events"):
        diag.window_measures(t, np.array([0, 1]))
    with pytest.raises(InvalidNameError, match="integer ids"):
        diag.window_measures(t, np.array([0.0, 1.0, 1.0]))
    windows = window_index(_stream(np.array(X)), "test", 1)
    with pytest.raises(InvalidNameError, match="hold 6 events, not 3"):
        diag.nmi_batch_window(t, 2, windows)


# --- the report of a built dataset --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def snapshots(shared_cache: Path):
    return tgbhub.load_dataset(SNAPSHOTS, cache_dir=shared_cache)


def test_report_on_a_snapshot_dataset(snapshots) -> None:
    result = diag.report(snapshots)
    json.dumps(result, allow_nan=False)  # strict JSON: plain numbers, no NaN
    ev = events(snapshots)
    lo, hi = ev.range("test")
    assert result["dataset"] == f"{SNAPSHOTS}@{snapshots.manifest.version}" and result["time"] == "snapshot"
    declared = any(task.get("name") == diag.FORECAST_TASK for task in snapshots.manifest.tasks)
    # the fallback source is the text the library writes into the published task documents
    assert result["horizon"] == {"value": 1, "source": "task window-forecast" if declared else
                                 "discrete time: one snapshot (link forecasting, \N{SECTION SIGN}2.2)"}
    whole = result["all"]
    counts = np.unique(ev.t, return_counts=True)[1]
    assert whole["multiplicity"] == {"distinct": len(counts), "mean": pytest.approx(counts.mean()),
                                     "std": pytest.approx(counts.std()), "max": int(counts.max())}
    assert whole["windows"]["nmi_time_window"] == pytest.approx(1.0, abs=1e-12)  # h = one snapshot
    assert whole["windows"]["windows"] == len(counts) and whole["windows"]["empty_windows"] == 0
    assert whole["windows"]["size_mean"] == pytest.approx(len(ev) / len(counts))
    # Table 2: the grid holds the chosen b and the mean snapshot size, and the maximum is its best point
    grid = {point["batch_size"]: point["nmi"] for point in whole["nmi_time_batch"]}
    assert {1, 200, round(counts.mean())} <= set(grid) and max(grid) <= len(ev)
    assert whole["nmi_time_batch_max"] == {"batch_size": max(grid, key=grid.get), "nmi": max(grid.values())}
    assert 20 <= whole["nmi_time_batch_max"]["batch_size"] <= 100 and grid[200] < max(grid.values())
    assert grid[200] == pytest.approx(diag.nmi(ev.t, np.arange(len(ev)) // 200), abs=1e-12)
    part = result["split"]
    assert (part["name"], part["events"], part["batches"]["batches"]) == ("test", hi - lo, math.ceil((hi - lo) / 200))
    # h = one snapshot: the window id is the timestamp, so NMI(batch, window) = NMI(t, batch)
    assert part["nmi_batch_window"] == pytest.approx(part["batches"]["nmi_time_batch"], abs=1e-12)
    assert part["batches"]["nmi_time_batch"] == pytest.approx(diag.nmi(ev.t[lo:hi], np.arange(hi - lo) // 200))
    assert part["batches"]["leak_edge_frac"] > 0 and part["batches"]["split_ts_frac"] > 0
    series = result["series"]
    assert sum(series["multiplicity_counts"]) == len(counts)
    assert len(series["window_sizes"]) == part["windows"]["windows"]


def test_report_options(snapshots) -> None:
    two = diag.report(snapshots, horizon=2, batch_size=100, batch_grid=(1, 10, 10**9))
    assert two["horizon"] == {"value": 2, "source": "argument"} and two["split"]["batches"]["batch_size"] == 100
    assert [p["batch_size"] for p in two["all"]["nmi_time_batch"]] == [1, 10, 100]  # 10**9 > m is dropped
    assert two["all"]["windows"]["nmi_time_window"] < 1.0
    lo, hi = events(snapshots).range("val")
    assert diag.report(snapshots, split="val")["split"]["events"] == hi - lo
    with pytest.raises(InvalidNameError, match="no split 'nope'; the splits are train, val, test"):
        diag.report(snapshots, split="nope")
    with pytest.raises(InvalidNameError, match="not a whole number of snapshots"):
        diag.report(snapshots, horizon=1.5)
    lines = diag.report_lines(two)
    assert lines[0].startswith(f"{SNAPSHOTS}@") and any("NMI(batch id, window id)" in line for line in lines)


def test_report_on_a_continuous_stream_uses_the_matched_horizon() -> None:
    """No declared task: the horizon is the paper's matched nice(200 T/m). One event every ~17 s (Wikipedia's T/m) gives
    its 3600 s, and the Poisson stream lands near its Table 2/3 values (max batch NMI 0.9982, 211.7 events per window,
    0.8903)."""
    rng = np.random.default_rng(9)
    m = 100_000
    t = np.round(np.cumsum(rng.exponential(17.0, m))).astype(np.int64)  # whole seconds: some ties
    manifest = SimpleNamespace(name="fake/wiki-like", version="0.0.0", tasks=(), split_unit="row",
                               graph={"kind": "temporal-graph", "symmetric": False, "num_nodes": 50},
                               splits={"train": (0, 70_000), "val": (70_000, 85_000), "test": (85_000, m)})
    dataset = SimpleNamespace(manifest=manifest, t=t, src=rng.integers(0, 50, m), dst=rng.integers(0, 50, m))
    result = diag.report(dataset)
    json.dumps(result, allow_nan=False)
    assert result["time"] == "continuous" and result["horizon"]["value"] == 3600
    assert result["horizon"]["source"].startswith("matched@200")
    assert result["all"]["windows"]["size_mean"] == pytest.approx(3600 / diag.temporal_density(t), rel=0.01)
    assert 0.86 < result["split"]["nmi_batch_window"] < 0.92
    best = result["all"]["nmi_time_batch_max"]
    assert best["batch_size"] == 1 and 0.995 < best["nmi"] < 1.0  # continuous time: b=1 is best, < 1 with ties
    assert len(np.unique(t)) < m


@pytest.mark.skipif(not HAS_MATPLOTLIB, reason="matplotlib is not installed")
def test_plot_report_writes_a_png(snapshots, tmp_path: Path) -> None:
    target = diag.plot_report(diag.report(snapshots), tmp_path / "stats.png")
    assert target == tmp_path / "stats.png" and target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["stats.png"]  # no temporary file left behind


def test_plot_without_matplotlib_names_the_extra(snapshots, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install -e '\.\[plot\]'"):
        diag.plot_report(diag.report(snapshots), tmp_path / "stats.png")
    assert not (tmp_path / "stats.png").exists()


# --- the command ----------------------------------------------------------------------------------------------------


def test_cli_prints_a_table(shared_cache: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["--cache-dir", str(shared_cache), "forecast-stats", SNAPSHOTS]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{SNAPSHOTS}@") and "max NMI(t, batch id)" in out and "NMI(batch id, window id)" in out
    folder = tmp_path / "forecast-stats-t-grab-pdet-2-16"  # no --out: the figure and JSON go to ./forecast-stats-NAME/
    assert f"wrote plot: {Path('forecast-stats-t-grab-pdet-2-16') / 'forecast-stats-t-grab-pdet-2-16.png'}" in out
    assert sorted(p.name for p in folder.iterdir()) == ["forecast-stats-t-grab-pdet-2-16.json",
                                                        "forecast-stats-t-grab-pdet-2-16.png"]
    assert main(["--cache-dir", str(shared_cache), "forecast-stats", SNAPSHOTS, "--no-files"]) == 0
    assert "wrote" not in capsys.readouterr().out
    # --cache-dir is also accepted after the command
    assert main(["forecast-stats", SNAPSHOTS, "--cache-dir", str(shared_cache), "--split", "nope"]) == 2
    assert "no split 'nope'" in capsys.readouterr().err


def test_cli_json(shared_cache: Path, capsys: pytest.CaptureFixture[str], snapshots) -> None:
    assert main(["--cache-dir", str(shared_cache), "forecast-stats", SNAPSHOTS, "--json", "--batch-size", "50",
                 "--horizon", "2", "--no-files"]) == 0
    printed = json.loads(capsys.readouterr().out)
    expected = diag.report(snapshots, batch_size=50, horizon=2)
    assert {k: v for k, v in printed.items() if k not in ("written", "plot_skipped")} == expected
    assert printed["written"] == {} and printed["batch_size"] == 50 and printed["horizon"]["value"] == 2


@pytest.mark.skipif(not HAS_MATPLOTLIB, reason="matplotlib is not installed")
def test_cli_out_writes_json_and_png(shared_cache: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                     snapshots) -> None:
    out = tmp_path / "stats"
    assert main(["--cache-dir", str(shared_cache), "forecast-stats", SNAPSHOTS, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    stem = "forecast-stats-t-grab-pdet-2-16"
    assert sorted(p.name for p in out.iterdir()) == [f"{stem}.json", f"{stem}.png"]
    assert f"wrote json: {out / stem}.json" in printed and f"wrote plot: {out / stem}.png" in printed
    assert json.loads((out / f"{stem}.json").read_text()) == diag.report(snapshots)
    assert (out / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"
    assert main(["--cache-dir", str(shared_cache), "forecast-stats", SNAPSHOTS, "--out", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["written"] == {"json": str(out / f"{stem}.json"),
                                                             "plot": str(out / f"{stem}.png")}


def test_cli_out_without_matplotlib_still_writes_the_json(shared_cache: Path, capsys: pytest.CaptureFixture[str],
                                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["--cache-dir", str(shared_cache), "forecast-stats", SNAPSHOTS, "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "plot skipped:" in printed and "pip install -e '.[plot]'" in printed
    assert [p.name for p in tmp_path.iterdir()] == ["forecast-stats-t-grab-pdet-2-16.json"]
