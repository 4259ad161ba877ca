"""Load t-grab/ce-64 from nothing, print its card, then time a cached load (run through scripts/demo)."""

from __future__ import annotations

import argparse
import time

import tgbhub


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--name", default="t-grab/ce-64")
    args = parser.parse_args()

    started = time.perf_counter()
    dataset = tgbhub.load_dataset(args.name, cache_dir=args.cache_dir)
    first = time.perf_counter() - started
    print(f"{dataset.name}@{dataset.version}  ({dataset.manifest.description})")
    print(f"  nodes      {dataset.num_nodes}")
    print(f"  rows       {dataset.num_rows:,} (both directions of {dataset.num_rows // 2:,} undirected edges)")
    print(f"  snapshots  {dataset.num_snapshots:,}")
    for name, (start, stop) in dataset.splits.items():
        print(f"  split      {name:<15} t in [{start}, {stop})  {dataset.split(name).t.size:>7,} rows")
    print(f"  digest     {dataset.digest}")
    print(f"  source     {dataset.source} ({first:.2f} s)   cache: {args.cache_dir}")

    started = time.perf_counter()
    again = tgbhub.load_dataset(args.name, cache_dir=args.cache_dir)
    cached = time.perf_counter() - started
    same = bool((again.src == dataset.src).all() and (again.t == dataset.t).all())
    print(f"second load: source={again.source}, {cached * 1000:.1f} ms, identical rows: {same}")


if __name__ == "__main__":
    main()
