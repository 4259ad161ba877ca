"""Load t-grab/ce-64 from nothing, print its card, time a cached load, grade two baselines with the reference
evaluator, run the TLPCF counterfactual check of persistence on its distorted variants, then publish it to a private
hub on 127.0.0.1 and load it back from there (run through scripts/demo)."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import tgbhub
from tgbhub.baselines import run_baseline
from tgbhub.hub.serve import start_local_hub
from tgbhub.publish import parse_target, publish


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
    for name, (start, stop) in dataset.snapshot_splits.items():
        print(f"  split      {name:<15} t in [{start}, {stop})  {dataset.split(name).t.size:>7,} rows")
    print(f"  digest     {dataset.digest}")
    print(f"  source     {dataset.source} ({first:.2f} s)   cache: {args.cache_dir}")

    started = time.perf_counter()
    again = tgbhub.load_dataset(args.name, cache_dir=args.cache_dir)
    cached = time.perf_counter() - started
    same = bool((again.src == dataset.src).all() and (again.t == dataset.t).all())
    print(f"second load: source={again.source}, {cached * 1000:.1f} ms, identical rows: {same}")
    grade_baselines(again)
    counterfactual_check(args.cache_dir)
    hub_round_trip(dataset)


def grade_baselines(dataset: tgbhub.api.TemporalGraphDataset) -> None:
    """Submit two heuristic baselines' predictions to the evaluator each of the dataset's tasks declares."""
    print("baselines on the test split, graded by the reference evaluator:")
    for task in dataset.manifest.tasks:
        for model in ("edgebank-train", "persistence"):
            submission = run_baseline(model, dataset, task, "test")
            result = dataset.get_evaluator(task["name"]).evaluate(submission, split="test")
            metrics = ", ".join(f"{k}={v:.4f}" for k, v in result["metrics"].items())
            print(f"  {task['name']:<15} {model:<15} {metrics}")


def counterfactual_check(cache_dir: str, name: str = "t-grab/pdet-2-16", seeds: range = range(3)) -> None:
    """Does persistence use the test split's timing? Score it on the real split and on SHUFFLE / INTENSE variants
    (built from the verified parent on the way) and print each kind's MRR verdict."""
    started = time.perf_counter()
    report = tgbhub.counterfactual(name, "persistence", seeds=seeds, cache_dir=cache_dir, controls=("edgebank",))
    print(f"counterfactual check of persistence on {name} (MRR, seeds {seeds.start}-{seeds.stop - 1}, "
          f"{time.perf_counter() - started:.1f} s):")
    for row in report.rows:
        if row["metric"] == "mrr":
            print(f"  {row['model']:<12} {row['kind']:<11} real {row['mean_real']:.3f}  distorted "
                  f"{row['mean_distorted']:.3f} +- {row['ci_distorted']:.3f}  -> {row['verdict']}")


def hub_round_trip(dataset: tgbhub.api.TemporalGraphDataset) -> None:
    """Publish the dataset's family repo to git, serve it with `tgbhub hub serve`'s code, fetch it from there."""
    with tempfile.TemporaryDirectory(prefix="tgbhub-demo-hub-") as scratch:
        root = Path(scratch)
        results = publish(dataset.manifest.family, dataset.version, parse_target(f"git:{root / 'hub'}"),
                          datasets=[dataset.manifest.short_name], cache_dir=root / "publish-cache")
        for result in results:  # the dataset's own tag, then the family tag
            print(f"published: {result.repo_id} {result.tag} -> {result.location}")
        with start_local_hub(root / "hub") as hub:
            started = time.perf_counter()
            fetched = tgbhub.load_dataset(dataset.name, cache_dir=root / "client-cache", hub_endpoint=hub.url,
                                          offline=False)  # loopback only: the hub runs on 127.0.0.1
            seconds = time.perf_counter() - started
        same = bool((fetched.src == dataset.src).all() and (fetched.dst == dataset.dst).all())
        print(f"from the local hub {hub.url}: source={fetched.source}, {seconds:.2f} s, verified, "
              f"identical rows: {same}")


if __name__ == "__main__":
    main()
