"""Load t-grab/ce-64 from nothing, print its card, time a cached load, grade two baselines with the reference
evaluator, run the TLPCF counterfactual check of persistence on its distorted variants, then publish it to a private
hub on 127.0.0.1 and load it back from there (run through scripts/demo).

Every line printed stays under :data:`WIDTH` characters, and every number comes with one short line saying what it
means: the demo is read by someone who has not read the docs yet.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import textwrap
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tgbhub
from tgbhub.baselines import run_baseline
from tgbhub.data import TemporalGraphDataset
from tgbhub.hub.serve import start_local_hub
from tgbhub.publish import parse_target, publish

#: the widest line the demo prints
WIDTH = 96

#: what each heuristic baseline predicts, said after its first score
MODELS = {
    "edgebank-train": "edgebank-train: predicts every pair seen in the train split, nothing else",
    "persistence": "persistence: predicts that the previous snapshot's edges happen again",
}

#: what a task asks and how its metrics read, by task type (shown above its scores)
TASKS = {
    "snapshot-link-prediction": ["which of the candidate edges exist in each test snapshot?",
                                 "f1: mean per-snapshot F1, 0 (none right) to 1 (every edge right)"],
    "one-vs-many-ranking": ["rank each test edge's true destination among {q} negatives",
                            "mrr: mean of 1/rank (1 = always first); hits@k: share ranked in the top k"],
    "window-link-forecasting": ["will each pair link in the next window? (one negative per positive)",
                                "auc, ap: 0.5 is chance, 1 is perfect; _pooled: over all windows at once"],
}

#: what each distortion of the counterfactual check does to the test split
KINDS = {
    "shuffle": "shuffle: the test edges' timestamps permuted: the pairs stay, their timing is lost",
    "intense-k5": "intense-k5: each test edge replaced by 5 copies at jittered times",
    "intense-k1": "intense-k1: the jitter alone, without copies (the control for intense-k5)",
}

#: what each verdict means (tgbhub.evaluate.counterfactual_stats.compare_from_summary has the rules)
VERDICTS = {
    "captures-temporal-pattern": "the score fell beyond both 95% intervals: the model uses the timing",
    "fails-sanity-check": "a fall of 0.05 or more is ruled out: the score does not need the timing",
    "inconclusive": "no clear fall, but the intervals are too wide to rule one out",
}


def say(text: str = "", indent: int = 0) -> None:
    """Print ``text`` wrapped to :data:`WIDTH` columns, every line indented by ``indent`` spaces."""
    pad = " " * indent
    print(textwrap.fill(text, WIDTH, initial_indent=pad, subsequent_indent=pad) if text else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--name", default="t-grab/ce-64")
    args = parser.parse_args()

    started = time.perf_counter()
    dataset = graph(tgbhub.load_dataset(args.name, cache_dir=args.cache_dir))
    first = time.perf_counter() - started
    print(f"{dataset.name}@{dataset.version}")
    say(dataset.manifest.description, indent=2)
    print(f"  nodes      {dataset.num_nodes}")
    print(f"  rows       {dataset.num_rows:,} (both directions of {dataset.num_rows // 2:,} undirected edges)")
    print(f"  snapshots  {dataset.num_snapshots:,}")
    for name, (start, stop) in (dataset.snapshot_splits or {}).items():
        print(f"  split      {name:<15} t in [{start}, {stop})  {dataset.split(name).t.size:>7,} rows")
    print(f"  digest     {dataset.digest[:16]}... (sha256 of the columns: what a rebuild must match)")
    how = "built here from its recipe" if dataset.source == "build" else f"from the {dataset.source}"
    print(f"  source     {dataset.source} ({first:.2f} s): {how}, offline")
    say(f"cache      {args.cache_dir}", indent=2)

    started = time.perf_counter()
    again = graph(tgbhub.load_dataset(args.name, cache_dir=args.cache_dir))
    cached = time.perf_counter() - started
    same = bool((again.src == dataset.src).all() and (again.t == dataset.t).all())
    print(f"second load: source={again.source}, {cached * 1000:.1f} ms, identical rows: {same}")
    grade_baselines(again)
    counterfactual_check(args.cache_dir)
    hub_round_trip(dataset)


def graph(dataset: Any) -> TemporalGraphDataset:
    """``dataset``, which the demo's datasets are: a temporal graph with snapshots.

    Raises:
        SystemExit: for a dataset of another kind (``--name`` of a ChaosNet system), saying which kind to name.
    """
    if not isinstance(dataset, TemporalGraphDataset):
        raise SystemExit(f"the demo shows a temporal graph with snapshots; {dataset.name} is not one: pass --name "
                         "t-grab/NAME")
    return dataset


def grade_baselines(dataset: TemporalGraphDataset) -> None:
    """Submit two heuristic baselines' predictions to the evaluator each of the dataset's tasks declares, and say
    what each task asks, what its metrics mean and how to read each score."""
    print()
    print("two heuristic baselines on the test split, graded by the reference evaluator:")
    for line in MODELS.values():
        say(line, indent=2)
    for task in dataset.manifest.tasks:
        q = task.get("negatives", {}).get("q", "its")
        print(f"  {task['name']} ({task['type']}):")
        for line in TASKS.get(str(task["type"]), []):
            say(line.format(q=q), indent=4)
        for model in ("edgebank-train", "persistence"):
            submission = run_baseline(model, dataset, task, "test")
            metrics = dataset.get_evaluator(task["name"]).evaluate(submission, split="test")["metrics"]
            print(f"    {model:<15} " + " ".join(f"{k}={v:.4f}" for k, v in metrics.items()))
            for line in read_scores(metrics, q):
                say(f"-> {line}", indent=6)


def read_scores(metrics: Mapping[str, float], q: Any) -> list[str]:
    """One short line on how to read ``metrics`` where they need it (ties, chance level); else none."""
    if "mrr" in metrics and metrics["mrr"] > 0:
        typical = 1 / metrics["mrr"]
        if metrics.get("hits@1", 1.0) == 0 and metrics.get("hits@10", 0.0) > 0.9:
            return [f"all seen pairs score 1; tied, they share rank ~{typical:.0f}: never 1st, nearly always "
                    "top 10"]
        among = f" of {q + 1}" if isinstance(q, int) else ""
        return [f"the true destination ranks about {typical:.0f}{among} on average (1/mrr = {typical:.1f})"]
    if "auc" in metrics:
        gap = metrics["auc"] - 0.5
        return ["chance level: it cannot tell the next window's pairs from others" if abs(gap) < 0.02
                else f"auc {gap:+.3f} from chance"]
    return []


def counterfactual_check(cache_dir: str, name: str = "t-grab/pdet-2-16", seeds: range = range(3)) -> None:
    """Does persistence use the test split's timing? Score it on the real split and on SHUFFLE / INTENSE variants
    (built from the verified parent on the way) and print each kind's MRR verdict, with what the kinds and the
    verdicts mean."""
    started = time.perf_counter()
    report = tgbhub.counterfactual(name, "persistence", seeds=seeds, cache_dir=cache_dir, controls=("edgebank",))
    print()
    print(f"counterfactual check on {name} (MRR, seeds {seeds.start}-{seeds.stop - 1}, "
          f"{time.perf_counter() - started:.1f} s):")
    say("does the score fall when the test split's timing is destroyed? It should if the model uses the "
        "timing; edgebank ignores time order, so it is the control and should not fall", indent=2)
    rows = [row for row in report.rows if row["metric"] == "mrr"]
    for kind in dict.fromkeys(row["kind"] for row in rows):
        say(KINDS.get(kind, kind), indent=2)
    say(f"real: MRR on the real test split; distorted: mean over {len(seeds)} distorted copies +- its 95% "
        "interval", indent=2)
    for row in rows:
        print(f"  {row['model']:<12} {row['kind']:<11} real {row['mean_real']:.3f}  distorted "
              f"{row['mean_distorted']:.3f} +- {row['ci_distorted']:.3f}  -> {row['verdict']}")
    for verdict in dict.fromkeys(row["verdict"] for row in rows):
        say(f"{verdict}: {VERDICTS.get(verdict, '')}", indent=2)


def hub_round_trip(dataset: TemporalGraphDataset) -> None:
    """Publish the dataset's family repo to git, serve it with `tgbhub hub serve`'s code, fetch it from there."""
    print()
    with tempfile.TemporaryDirectory(prefix="tgbhub-demo-hub-") as scratch:
        root = Path(scratch)
        results = publish(dataset.manifest.family, dataset.version, parse_target(f"git:{root / 'hub'}"),
                          datasets=[dataset.manifest.short_name], cache_dir=root / "publish-cache")
        say(f"published to a private git hub in {root / 'hub'} (removed at the end):")
        for result in results:  # the dataset's own tag, then the family tag
            print(f"  {result.repo_id} tag {result.tag}")
        with start_local_hub(root / "hub") as hub:
            started = time.perf_counter()
            fetched = graph(tgbhub.load_dataset(dataset.name, cache_dir=root / "client-cache", hub_endpoint=hub.url,
                                                offline=False))  # loopback only: the hub runs on 127.0.0.1
            seconds = time.perf_counter() - started
        same = bool((fetched.src == dataset.src).all() and (fetched.dst == dataset.dst).all())
        print(f"fetched back from {hub.url} (tgbhub hub serve): source={fetched.source}, {seconds:.2f} s")
        print(f"  digest verified, identical rows: {same}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # Ctrl-C: one line, not a traceback (scripts/demo removes the cache)
        print("demo interrupted", file=sys.stderr)
        sys.exit(130)
