"""Window evaluation benchmark (run through ``scripts/bench forecast``); prints a markdown table of medians and ratios.

Link forecasting (docs/forecasting.md): the test split of a synthetic bursty continuous-time
stream (default 1M events, ~10k nodes, directed, integer seconds; quiet and busy Poisson periods plus a few
single-timestamp bursts of hundreds of e-mails from one sender, as in Enron) is cut into windows of the paper's
matched horizon (``suggest_horizon``); every window's events are scored by EdgeBank (unlimited memory: 1 if the pair
occurred before the window) against one historical negative per event (``group_negatives``, drawn once, untimed),
and AUC-ROC and AP are computed per window and averaged over the windows.

- tgbhub: ``window_index`` -> ``score_groups("edgebank", ...)`` -> ``grouped_auroc_ap`` -> mean (the reference
  evaluator's path), also timed step by step.
- the peer: the evaluation loop of the paper's DyGLib fork, written here as that code does it: a
  ``SnapshotLoader`` whose dataset computes each window's positions with a boolean mask over the split's times
  (``t0 + i*h <= t <= t0 + (i+1)*h - 1``, ``t0 = floor(min t)``) and yields the non-empty ones; per window EdgeBank's
  predictions as numpy arrays, ``sklearn.metrics.roc_auc_score`` / ``average_precision_score`` on the window's
  concatenated scores and labels, appended to lists, ``np.mean`` at the end. DyGLib rebuilds EdgeBank's memory from
  the whole history for every window; this peer instead keeps one Python ``set`` of ``(src, dst)`` built once from
  the history and updated with each window's true edges after scoring it (the incremental work tgbhub does), so the
  peer here is faster than DyGLib's own loop. A second peer row swaps sklearn for tgbhub's ``auroc`` /
  ``average_precision`` per window, separating the loop's overhead from the metrics' cost.

Both sides use the same events, windows and negatives, and must give the same per-window AUC and AP (to 1e-9)
before anything is printed. Medians over --repeats runs, interleaved; ratio = peer seconds / tgbhub seconds. If the
peer would take over --peer-budget seconds a run, it runs on the first windows only and its rows are labelled
EXTRAPOLATED (its one-off set-up plus the loop scaled to all windows); at the default size everything is measured.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

os.environ.setdefault("TGBHUB_NO_PROGRESS", "1")

import numpy as np  # noqa: E402
from sklearn.metrics import average_precision_score, roc_auc_score  # noqa: E402

from scripts._table import print_table  # noqa: E402
from tgbhub.baselines.forecast import score_groups  # noqa: E402
from tgbhub.evaluate.metrics import auroc, average_precision, grouped_auroc_ap  # noqa: E402
from tgbhub.forecasting.windows import Events, pair_code, suggest_horizon, window_index  # noqa: E402
from generators.forecast.negatives import group_negatives  # noqa: E402
from generators.negatives import stream_key  # noqa: E402

NUM_NODES = 10_000
TEST_SHARE = 0.15
TOLERANCE = 1e-9


# ---------------------------------------------------------------------------------------------------------------------
# the synthetic stream
# ---------------------------------------------------------------------------------------------------------------------

def bursty_stream(n: int, num_nodes: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(t, src, dst)`` of ``n`` directed events sorted by integer-second time.

    Activity alternates between quiet (0.08 events/s, mean 3 h) and busy (0.8 events/s, mean 1.5 h) periods of
    exponential length, with a silent gap (mean 2 h) after one busy period in ten: a Poisson process of switching
    rate, conditioned on its total count. A few bursts put
    200-1000 events from one sender to distinct recipients on a single timestamp (one of them in the test period).
    70% of the other events repeat a "habitual" pair (Zipf-weighted), the rest are fresh pairs of heavy-tailed
    senders and receivers.
    """
    rng = np.random.default_rng(seed)
    bursts = max(3, round(8 * n / 1_000_000))
    burst_sizes = rng.integers(200, 1001, size=bursts)
    while burst_sizes.sum() > n // 10:  # a small stream keeps its bursts small
        burst_sizes = np.maximum(burst_sizes // 2, 1)
    regular = n - int(burst_sizes.sum())
    # alternate quiet/busy periods until the expected count covers the stream
    rates, lengths, expected = [], [], 0.0
    while expected < regular:
        states = ((0.08, 3 * 3600.0), (0.8, 1.5 * 3600.0))
        if rng.random() < 0.1:  # now and then a silent gap (empty windows, which DyGLib's loader skips)
            states += ((0.0, 2 * 3600.0),)
        for rate, mean in states:
            length = max(1.0, rng.exponential(mean))
            rates.append(rate)
            lengths.append(length)
            expected += rate * length
    rate_arr, length_arr = np.array(rates), np.array(lengths)
    starts = np.r_[0.0, np.cumsum(length_arr)[:-1]]
    counts = rng.multinomial(regular, rate_arr * length_arr / np.sum(rate_arr * length_arr))
    seg = np.repeat(np.arange(len(counts)), counts)
    t_regular = np.floor(starts[seg] + rng.random(regular) * length_arr[seg]).astype(np.int64)
    span = float(starts[-1] + length_arr[-1])
    # who talks to whom
    activity = rng.pareto(1.5, num_nodes) + 1.0
    activity /= activity.sum()
    habitual = max(1, min(100_000, n // 5))
    h_src = rng.choice(num_nodes, habitual, p=activity)
    h_dst = rng.choice(num_nodes, habitual, p=activity)
    weights = 1.0 / np.arange(1, habitual + 1) ** 0.7
    pick = rng.choice(habitual, regular, p=weights / weights.sum())
    fresh = rng.random(regular) >= 0.7
    src = np.where(fresh, rng.choice(num_nodes, regular, p=activity), h_src[pick])
    dst = np.where(fresh, rng.integers(0, num_nodes, regular), h_dst[pick])
    # single-timestamp bursts (the last one inside the test period)
    burst_t = np.floor(rng.random(bursts) * span).astype(np.int64)
    burst_t[-1] = int(span * 0.95)
    b_t = np.repeat(burst_t, burst_sizes)
    b_src = np.repeat(rng.integers(0, num_nodes, bursts), burst_sizes)
    b_dst = np.concatenate([rng.choice(num_nodes, size, replace=False) for size in burst_sizes])
    t = np.concatenate([t_regular, b_t])
    src = np.concatenate([src, b_src]).astype(np.int64)
    dst = np.concatenate([dst, b_dst]).astype(np.int64)
    dst = np.where(dst == src, (dst + 1) % num_nodes, dst)  # no self-loops
    order = np.argsort(t, kind="stable")
    return t[order], src[order].astype(np.int32), dst[order].astype(np.int32)


# ---------------------------------------------------------------------------------------------------------------------
# the peer: DyGLib fork's window loader and evaluation loop
# ---------------------------------------------------------------------------------------------------------------------

class SnapshotLoader:
    """DyGLib fork's ``SnapshotLoader`` / ``IterableSnapshotDataset`` over a split's interaction times (numpy).

    Item ``i`` is the positions with ``t0 + i*h <= t <= t0 + (i+1)*h - 1``, found with a boolean mask over the
    sorted times; iterating yields the non-empty items in time order. ``stop`` (ours, for an extrapolated run) ends
    the iteration after window ``stop - 1``.
    """

    def __init__(self, time_: np.ndarray, horizon: int, stop: int | None = None) -> None:
        self.time = np.sort(time_)
        self.horizon = int(horizon)
        self.time_min = int(math.floor(self.time.min()))
        self.time_max = int(math.ceil(self.time.max()))
        self.stop = len(self) if stop is None else min(stop, len(self))

    def __len__(self) -> int:
        return (self.time_max - self.time_min) // self.horizon + 1

    def __getitem__(self, index: int) -> np.ndarray:
        start = self.time_min + index * self.horizon
        end = self.time_min + (index + 1) * self.horizon - 1
        return np.nonzero((self.time >= start) & (self.time <= end))[0]

    def __iter__(self) -> Iterator[np.ndarray]:
        for i in range(self.stop):
            indices = self[i]
            if len(indices) > 0:
                yield indices


@dataclass
class Bench:
    """Everything both sides read: the events, the split, the horizon and the negatives."""

    ev: Events
    a: int
    n: int
    horizon: int
    neg_src: np.ndarray
    neg_dst: np.ndarray


@dataclass
class PeerRun:
    setup: float  # one-off seconds (the history's set, sorting the split's times)
    loop: float  # seconds in the per-window loop
    stop: int  # windows iterated (empty ones included)
    total: int  # windows of the split (DyGLib's len())
    auc: np.ndarray
    ap: np.ndarray
    pos: np.ndarray
    neg: np.ndarray

    @property
    def seconds(self) -> float:
        """Measured seconds, or the extrapolation to every window when the loop stopped early."""
        return self.setup + self.loop * (self.total / self.stop)


def peer_evaluate(b: Bench, metrics: str | None, stop: int | None) -> PeerRun:
    """DyGLib's window evaluation of EdgeBank; ``metrics``: ``sklearn``, ``tgbhub`` or None (scores only)."""
    started = time.perf_counter()
    t_test = b.ev.t[b.a:b.n]
    src_test, dst_test = b.ev.src[b.a:b.n], b.ev.dst[b.a:b.n]
    memory = set(zip(b.ev.src[:b.a].tolist(), b.ev.dst[:b.a].tolist()))  # EdgeBank (unlimited) of the history
    loader = SnapshotLoader(t_test, b.horizon, stop)
    setup = time.perf_counter() - started
    aucs: list[float] = []
    aps: list[float] = []
    pos_list: list[np.ndarray] = []
    neg_list: list[np.ndarray] = []
    for indices in loader:
        src, dst = src_test[indices].tolist(), dst_test[indices].tolist()
        n_src, n_dst = b.neg_src[indices].tolist(), b.neg_dst[indices].tolist()
        pos = np.array([1.0 if edge in memory else 0.0 for edge in zip(src, dst)])
        neg = np.array([1.0 if edge in memory else 0.0 for edge in zip(n_src, n_dst)])
        if metrics == "sklearn":
            predicts = np.concatenate([pos, neg])
            labels = np.concatenate([np.ones(len(pos)), np.zeros(len(neg))])
            aucs.append(roc_auc_score(y_true=labels, y_score=predicts))
            aps.append(average_precision_score(y_true=labels, y_score=predicts))
        elif metrics == "tgbhub":
            aucs.append(auroc(pos, neg))
            aps.append(average_precision(pos, neg))
        else:
            pos_list.append(pos)
            neg_list.append(neg)
        memory.update(zip(src, dst))  # the window's true edges, after it was scored
    if metrics is not None:
        float(np.mean(aucs)), float(np.mean(aps))  # DyGLib's aggregation: the mean over windows
    loop = time.perf_counter() - started - setup
    empty = np.zeros(0)
    return PeerRun(setup, loop, loader.stop, len(loader), np.array(aucs), np.array(aps),
                   np.concatenate(pos_list) if pos_list else empty, np.concatenate(neg_list) if neg_list else empty)


def peer_metrics_only(windows: list[np.ndarray], pos: np.ndarray, neg: np.ndarray, total: int,
                      stop: int) -> PeerRun:
    """sklearn's AUC and AP per window on fixed scores (the windows' positions computed beforehand)."""
    started = time.perf_counter()
    aucs, aps = [], []
    for indices in windows:
        predicts = np.concatenate([pos[indices], neg[indices]])
        labels = np.concatenate([np.ones(len(indices)), np.zeros(len(indices))])
        aucs.append(roc_auc_score(y_true=labels, y_score=predicts))
        aps.append(average_precision_score(y_true=labels, y_score=predicts))
    float(np.mean(aucs)), float(np.mean(aps))
    return PeerRun(0.0, time.perf_counter() - started, stop, total, np.array(aucs), np.array(aps), pos, neg)


def peer_windows(b: Bench, stop: int | None) -> tuple[PeerRun, list[np.ndarray]]:
    """Iterate DyGLib's loader over the test split (every window's positions)."""
    started = time.perf_counter()
    loader = SnapshotLoader(b.ev.t[b.a:b.n], b.horizon, stop)
    setup = time.perf_counter() - started
    windows = list(loader)
    loop = time.perf_counter() - started - setup
    empty = np.zeros(0)
    return PeerRun(setup, loop, loader.stop, len(loader), empty, empty, empty, empty), windows


# ---------------------------------------------------------------------------------------------------------------------
# tgbhub
# ---------------------------------------------------------------------------------------------------------------------

def ours_windows(b: Bench) -> tuple[np.ndarray, object]:
    index = window_index(b.ev, "test", b.horizon)
    return index.window_of(np.arange(b.a, b.n)), index


def ours_scores(b: Bench) -> tuple[np.ndarray, np.ndarray]:
    window, index = ours_windows(b)
    return score_groups("edgebank", b.ev, index, b.ev.pair_codes()[b.a:b.n],
                        pair_code(b.neg_src, b.neg_dst, b.ev.num_nodes), window)


def ours_metrics(window: np.ndarray, pos: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    _, auc, ap = grouped_auroc_ap(window, pos, neg)
    float(auc.mean()), float(ap.mean())
    return auc, ap


def ours_evaluate(b: Bench) -> tuple[np.ndarray, np.ndarray]:
    window, index = ours_windows(b)
    pos, neg = score_groups("edgebank", b.ev, index, b.ev.pair_codes()[b.a:b.n],
                            pair_code(b.neg_src, b.neg_dst, b.ev.num_nodes), window)
    return ours_metrics(window, pos, neg)


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


# ---------------------------------------------------------------------------------------------------------------------


def setup(events: int, seed: int) -> tuple[Bench, dict[str, object]]:
    started = time.perf_counter()
    t, src, dst = bursty_stream(events, NUM_NODES, seed)
    n = len(t)
    a = int(np.searchsorted(t, np.quantile(t, 1 - TEST_SHARE), side="right"))  # ties go to the history
    ev = Events(t=t, src=src, dst=dst, rows=np.arange(n), splits={"train": (0, a), "test": (a, n)},
                symmetric=False, num_nodes=NUM_NODES, time="continuous", split_snapshots={})
    suggestion = suggest_horizon(ev)
    horizon = int(suggestion["value"])
    index = window_index(ev, "test", horizon)
    generated = time.perf_counter() - started
    started = time.perf_counter()
    neg_src, neg_dst, fill = group_negatives(ev.pair_codes(), ev.t, np.arange(len(index)), index.lo, index.hi,
                                             NUM_NODES, False, stream_key("bench", "test", 0))
    drawn = time.perf_counter() - started
    sizes = index.sizes[index.nonempty]
    info = {"n": n, "test": n - a, "windows": len(index), "nonempty": len(index.nonempty),
            "horizon": horizon, "rule": suggestion["rule"], "sizes": sizes, "span_days": (t[-1] - t[0]) / 86400,
            "random_share": float(np.mean(fill)), "generated": generated, "drawn": drawn}
    return Bench(ev, a, n, horizon, neg_src, neg_dst), info


def check(name: str, ours: np.ndarray, theirs: np.ndarray) -> float:
    if ours.shape != theirs.shape:
        raise RuntimeError(f"{name}: tgbhub has {ours.shape} values, the peer {theirs.shape}")
    diff = float(np.max(np.abs(ours - theirs))) if ours.size else 0.0
    if not diff <= TOLERANCE:
        raise RuntimeError(f"{name} differs: max |tgbhub - peer| = {diff:.3g} > {TOLERANCE:g}")
    return diff


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000, help="events in the synthetic stream")
    parser.add_argument("--repeats", type=int, default=3, help="runs of every timing (median reported)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic stream")
    parser.add_argument("--peer-budget", type=float, default=120.0,
                        help="seconds a peer run may take before it runs on the first windows only and is "
                             "extrapolated (default 120)")
    args = parser.parse_args()
    if args.events < 1000 or args.repeats < 1:
        parser.error("--events must be at least 1000 and --repeats at least 1")

    b, info = setup(args.events, args.seed)
    print(f"stream: {info['n']:,} events over {info['span_days']:.1f} days, generated in {info['generated']:.1f} s; "
          f"test negatives drawn in {info['drawn']:.1f} s", file=sys.stderr)

    # probe the peer on its first windows: a warm-up, and the projection that decides on extrapolation
    total = int(info["windows"])
    probe = peer_evaluate(b, "sklearn", min(total, 50))
    projected = probe.seconds
    stop: int | None = None
    if projected > args.peer_budget:
        per_window = probe.loop / probe.stop
        stop = max(1, min(total, int((args.peer_budget - probe.setup) / max(per_window, 1e-12))))
        print(f"peer projected at {projected:.1f} s a run: running it on the first {stop} of {total} windows and "
              "extrapolating", file=sys.stderr)
    ours_evaluate(b)  # warm-up

    rows_t: dict[str, list[float]] = {k: [] for k in ("o_win", "p_win", "o_score", "p_score", "o_met", "p_met",
                                                       "o_all", "p_all", "p_all_tg")}
    window, _ = ours_windows(b)
    pos, neg = ours_scores(b)
    for r in range(args.repeats):
        sec, (o_window, _) = timed(lambda: ours_windows(b))
        rows_t["o_win"].append(sec)
        run_w, p_windows = peer_windows(b, stop)
        rows_t["p_win"].append(run_w.seconds)
        sec, (o_pos, o_neg) = timed(lambda: ours_scores(b))
        rows_t["o_score"].append(sec)
        run_s = peer_evaluate(b, None, stop)
        rows_t["p_score"].append(run_s.seconds)
        sec, _ = timed(lambda: ours_metrics(window, pos, neg))
        rows_t["o_met"].append(sec)
        run_m = peer_metrics_only(p_windows, pos, neg, total, run_w.stop)
        rows_t["p_met"].append(run_m.seconds)
        sec, (o_auc, o_ap) = timed(lambda: ours_evaluate(b))
        rows_t["o_all"].append(sec)
        run_sk = peer_evaluate(b, "sklearn", stop)
        rows_t["p_all"].append(run_sk.seconds)
        run_tg = peer_evaluate(b, "tgbhub", stop)
        rows_t["p_all_tg"].append(run_tg.seconds)
        print(f"  run {r + 1}: tgbhub {rows_t['o_all'][-1]:.3f} s, peer (sklearn) {run_sk.seconds:.2f} s, "
              f"peer (tgbhub metrics) {run_tg.seconds:.2f} s", file=sys.stderr)

    # same work, same numbers: windows, scores and per-window metrics (on the windows the peer ran)
    windows_run = len(p_windows)
    peer_positions = np.concatenate(p_windows) if p_windows else np.zeros(0, dtype=np.int64)
    if not np.array_equal(peer_positions, np.arange(len(peer_positions))):
        raise RuntimeError("the peer's windows do not cover the test events in order")
    sizes_ours = np.bincount(o_window, minlength=total)
    check("window sizes", sizes_ours[sizes_ours > 0][:windows_run].astype(float),
          np.array([len(w) for w in p_windows], dtype=float))
    m = len(peer_positions)
    check("positive scores", o_pos[:m].astype(float), run_s.pos)
    check("negative scores", o_neg[:m].astype(float), run_s.neg)
    worst_auc = max(check("AUC (sklearn)", o_auc[:windows_run], run_sk.auc),
                    check("AUC (tgbhub metrics)", o_auc[:windows_run], run_tg.auc),
                    check("AUC (metrics only)", o_auc[:windows_run], run_m.auc))
    worst_ap = max(check("AP (sklearn)", o_ap[:windows_run], run_sk.ap),
                   check("AP (tgbhub metrics)", o_ap[:windows_run], run_tg.ap),
                   check("AP (metrics only)", o_ap[:windows_run], run_m.ap))
    if stop is None:
        check("mean AUC", np.array([o_auc.mean()]), np.array([np.mean(run_sk.auc)]))
        check("mean AP", np.array([o_ap.mean()]), np.array([np.mean(run_sk.ap)]))

    med = {k: statistics.median(v) for k, v in rows_t.items()}
    sizes = info["sizes"]
    extra = "" if stop is None else f" [peer: first {stop} of {total} windows, EXTRAPOLATED]"
    print(f"{info['n']:,} events, {info['test']:,} test events, {info['nonempty']:,} non-empty / {total:,} windows "
          f"(events per window {sizes.mean():.0f} +- {sizes.std():.0f}, max {sizes.max():,}), "
          f"horizon {info['horizon']} s ({info['rule']}); "
          f"{100 * info['random_share']:.1f}% of negatives random top-up; "
          f"agreement: per-window AUC and AP agree to {TOLERANCE:g} (max |diff| AUC {worst_auc:.1g}, "
          f"AP {worst_ap:.1g}), scores identical; mean AUC {o_auc.mean():.6f}, mean AP {o_ap.mean():.6f}")
    print("peer EdgeBank memory: one Python set of (src, dst) updated after each window (DyGLib rebuilds it from "
          "all history for every window, which would be far slower)")
    print()

    def secs(x: float) -> str:  # at least three decimals, two significant digits below a millisecond
        return f"{x:.{max(3, 1 - math.floor(math.log10(max(x, 1e-9))))}f}"

    def row(label: str, o: str, p: str) -> tuple[str, str, str, str]:
        return (label + extra, secs(med[o]), secs(med[p]), f"{med[p] / med[o]:.1f}x")

    rows = [
        row("assign test events to windows (window_index vs SnapshotLoader masks)", "o_win", "p_win"),
        row("EdgeBank scores, all windows (score_groups vs set-memory loop)", "o_score", "p_score"),
        row("AUC + AP per window on fixed scores (grouped_auroc_ap vs sklearn per window)", "o_met", "p_met"),
        row("window evaluation end to end (peer metrics: sklearn)", "o_all", "p_all"),
        row("window evaluation end to end (peer metrics: tgbhub auroc/average_precision)", "o_all", "p_all_tg"),
    ]
    print_table(("work", f"tgbhub (s, median of {args.repeats})",
                 f"DyGLib-fork loop (s, median of {args.repeats})", "peer/ours"), rows)


if __name__ == "__main__":
    main()
