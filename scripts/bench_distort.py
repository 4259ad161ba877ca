"""TLPCF distortion benchmarks (run through scripts/bench); prints markdown tables of medians and ratios.

1. Build the published default variants (shuffle, intense-k5, intense-k1; seeds 0-9) of all 52 T-GRAB datasets
   into an empty cache, offline: ``tgbhub.load_dataset`` of every parent, then of each of the 1,560 variants (about
   6 minutes on the 2-core machine of the README). ``--quick`` measures a documented subset instead: every parent,
   then seed 0 of each kind for every dataset (156 variants), and prints the total for all seeds as EXTRAPOLATED
   (parents + 10 x the seed-0 variants; every seed of a kind does the same work on the same parent).
2. SHUFFLE and INTENSE(k=5) transform throughput on the test split of the largest T-GRAB dataset
   (t-grab/psto-64-p90), in rows of the input split per second, against a straightforward numpy version of the
   authors' scripts (docs/derived.md, "How we draw them") doing the same work in the same run: ``np.random.shuffle`` of the test
   timestamp column, then the rows sorted by their new timestamp; for INTENSE, 5 copies of every row each with
   ``np.random.uniform(-tau, tau)``, concatenated with the source row id and sorted (numpy's default, unstable
   ``argsort``, as pandas' default sort). Ours additionally keeps undirected mirror rows together, sorts stably with
   a documented tie-break, and draws from a counter-based stream whose bytes do not depend on numpy's Generator.
   ``--transform-only`` runs just this table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np

import tgbhub
from tgbhub.api import registry
from generators.tlpcf.catalogue import DEFAULT_KINDS, DEFAULT_SEEDS, derived_name
from generators.tlpcf.distort import distort, tau_bar, derivation_key
from scripts._table import print_table

LARGEST = "t-grab/psto-64-p90"


def _load_all(names: list[str], cache: str) -> float:
    started = time.perf_counter()
    for name in names:
        if tgbhub.load_dataset(name, cache_dir=cache, offline=True).source != "build":
            raise RuntimeError(f"{name} was not built from scratch")
    return time.perf_counter() - started


def build_defaults(bases: list[str], seeds: tuple[int, ...]) -> tuple[float, float, int]:
    """Seconds to build every parent, then the given seeds of every default kind, into one empty cache."""
    variants = [derived_name(base, kind, params, seed) for base in bases for kind, params in DEFAULT_KINDS
                for seed in seeds]
    with tempfile.TemporaryDirectory() as cache:
        parents = _load_all(bases, cache)
        derived = _load_all(variants, cache)
    return parents, derived, len(variants)


def _median_seconds(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def authors_shuffle(src: np.ndarray, dst: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, ...]:
    """``src/shuffle.py``'s work: permute the test timestamp column in place (global, unseeded RNG), then sort the
    rows by their new timestamp (pandas' default sort, unstable) as the script does before writing them."""
    ts = t.copy()
    np.random.shuffle(ts)
    order = np.argsort(ts)
    return src[order], dst[order], ts[order]


def authors_intense(src: np.ndarray, dst: np.ndarray, t: np.ndarray, m: int = 5) -> tuple[np.ndarray, ...]:
    """``src/intensify.py``'s work: m copies of every row, each with its own U(-tau, tau) jitter, concatenated with
    their source row id (``id_old``) and sorted by timestamp (unstable)."""
    tau = (t.max() - t.min()) / len(t)
    stacked = np.concatenate([t + np.random.uniform(-tau, tau, size=len(t)) for _ in range(m)])
    order = np.argsort(stacked)
    ids = np.tile(np.arange(len(t)), m)
    return np.tile(src, m)[order], np.tile(dst, m)[order], stacked[order], ids[order]


def throughput(repeats: int) -> list[tuple[str, str, str, str]]:
    dataset = tgbhub.load_dataset(LARGEST, offline=True)
    test = dataset.split("test")
    src, dst, t = np.asarray(test.src), np.asarray(test.dst), np.asarray(test.t)
    tau_bar(t)  # fail early on a degenerate split
    key = derivation_key(dataset.digest, "shuffle", {}, 0)
    rows = []
    for label, ours, theirs in (
            ("shuffle", lambda: distort(src, dst, t, "shuffle", {}, key, symmetric=True),
             lambda: authors_shuffle(src, dst, t.astype(np.float64))),
            ("intense k=5", lambda: distort(src, dst, t, "intense", {"k": 5}, key, symmetric=True),
             lambda: authors_intense(src, dst, t.astype(np.float64)))):
        ours_s, theirs_s = _median_seconds(ours, repeats), _median_seconds(theirs, repeats)
        rows.append((f"{label} on {LARGEST} test ({len(t):,} rows), rows/s", f"{len(t) / ours_s:,.0f}",
                     f"{len(t) / theirs_s:,.0f}", f"{theirs_s / ours_s:.2f}x"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="build seed 0 of each kind only and extrapolate to all seeds (about 1 minute)")
    parser.add_argument("--repeats", type=int, default=5, help="transform repetitions (median reported)")
    parser.add_argument("--transform-only", action="store_true", help="only the transform throughput table")
    args = parser.parse_args()
    if args.transform_only:
        print_table(("transform", f"tgbhub (median of {args.repeats})",
                     f"numpy authors' scripts (median of {args.repeats})", "ratio (tgbhub / numpy rows/s)"),
                    throughput(args.repeats))
        return
    bases = [n for n in registry().names("t-grab") if "~" not in n]
    seeds = DEFAULT_SEEDS[:1] if args.quick else DEFAULT_SEEDS
    parents, derived, count = build_defaults(bases, seeds)
    print(f"parents {parents:.1f} s, {count} variants {derived:.1f} s", file=sys.stderr)
    measured = [(f"build the {len(bases)} T-GRAB parents (s)", f"{parents:.1f}"),
                (f"build {count} variants: {len(DEFAULT_KINDS)} kinds x seeds "
                 f"{','.join(map(str, seeds))} x {len(bases)} datasets (s)", f"{derived:.1f}"),
                ("per variant, mean (s)", f"{derived / count:.3f}")]
    print_table(("measurement (one run, empty cache, offline)", "seconds"), measured)
    print()
    if args.quick:
        total = parents + derived * len(DEFAULT_SEEDS)
        print_table(("EXTRAPOLATED", "seconds"),
                    [(f"all {len(bases) * len(DEFAULT_KINDS) * len(DEFAULT_SEEDS)} defaults + parents = parents + "
                      f"{len(DEFAULT_SEEDS)} x seed-0 variants", f"{total:.0f} (EXTRAPOLATED)")])
        print()
    print_table(("transform", f"tgbhub (median of {args.repeats})",
                 f"numpy authors' scripts (median of {args.repeats})", "ratio (tgbhub / numpy rows/s)"),
                throughput(args.repeats))


if __name__ == "__main__":
    main()
