"""Evaluation benchmarks (run through ``scripts/bench evaluate``); prints a markdown table of medians and ratios.

1. MRR over 1M queries x 100 negatives (float32): tgbhub's ``rank_metrics`` (one call, validation included)
   against py-tgb 2.3.0's ``Evaluator.eval``, batched (one call) and as its examples call it (once per query,
   then ``np.mean``), in the same run.
   Where a GPU is present, the same scores as CUDA tensors: tgbhub's ``rank_metrics`` (ranks on the GPU, checks
   included) against py-tgb's ``Evaluator.eval`` on the same tensors (it copies them to the host and ranks in
   numpy) and against a plain torch reduction on the GPU (the same ranking work without checks: the floor).
   On a CPU-only machine the table says the GPU rows were not measured.
2. Loading 1M x 20 pre-generated negatives: tgbhub's format against a TGB-style pickled dict
   ``{(src, dst, t): ndarray}``. tgbhub's load path is the cache's memory-mapped ``.npy`` (what ``ds.negatives``
   opens; also timed reading every value); decoding the Parquet artifact happens once, at install, and is shown too.

Ratios are py-tgb time / tgbhub time from the same run.
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from scripts._table import print_table
from tgbhub.columns import read_parquet_columns
from tgbhub.evaluate.metrics import rank_metrics


def timed(fn: Callable[[], object], repeats: int) -> tuple[list[float], object]:
    times, value = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - started)
    return times, value


def mrr_rows(queries: int, q: int, repeats: int, per_query: int) -> list[tuple[str, str, str, str]]:
    from tgb.linkproppred.evaluate import Evaluator

    rng = np.random.default_rng(0)
    pos = rng.random(queries, dtype=np.float32)
    neg = rng.random((queries, q), dtype=np.float32)
    rank_metrics(pos[:2], neg[:2])  # compile (or load) the kernel once, as any second call finds it
    evaluator = Evaluator(name="tgbl-wiki", k_value=10)

    def batched() -> float:
        return float(evaluator.eval({"y_pred_pos": pos, "y_pred_neg": neg, "eval_metric": ["mrr"]})["mrr"])

    def one_by_one() -> float:
        return float(np.mean([evaluator.eval({"y_pred_pos": pos[i:i + 1], "y_pred_neg": neg[i:i + 1],
                                              "eval_metric": ["mrr"]})["mrr"] for i in range(per_query)]))

    ours, value = timed(lambda: rank_metrics(pos, neg)["mrr"], repeats)
    theirs, their_value = timed(batched, repeats)
    if abs(value - their_value) > 1e-5:
        raise RuntimeError(f"MRR differs: tgbhub {value} vs py-tgb {their_value}")
    loop, _ = timed(one_by_one, 1)
    loop_full = loop[0] * queries / per_query  # exact when per_query == queries (the default)
    o, t = statistics.median(ours), statistics.median(theirs)
    label = f"{queries // 1_000_000}M x {q}" if queries >= 1_000_000 else f"{queries} x {q}"
    per_query_label = f"MRR {label}, py-tgb once per query (s)" + (
        "" if per_query == queries else f" [{per_query} queries, scaled]")
    return [(f"MRR {label}, batched (s)", f"{o:.3f}", f"{t:.3f}", f"{t / o:.1f}x"),
            (per_query_label, f"{o:.3f}", f"{loop_full:.1f}", f"{loop_full / o:.0f}x")]


def gpu_rows(queries: int, q: int, repeats: int) -> list[tuple[str, str, str, str]]:
    try:
        import torch
    except ImportError:
        return [("MRR on the GPU", "not measured: torch is not installed", "", "")]
    if not torch.cuda.is_available():
        return [("MRR on the GPU", "not measured: no CUDA device on this machine", "", "")]
    return tensor_rows(queries, q, repeats, "cuda")


def tensor_rows(queries: int, q: int, repeats: int, device: str) -> list[tuple[str, str, str, str]]:
    """MRR of scores held as torch tensors on ``device`` (``cuda`` in the bench; ``cpu`` checks the code here)."""
    import torch
    from tgb.linkproppred.evaluate import Evaluator

    generator = torch.Generator(device=device).manual_seed(0)
    pos = torch.rand(queries, device=device, generator=generator)
    neg = torch.rand((queries, q), device=device, generator=generator)
    evaluator = Evaluator(name="tgbl-wiki", k_value=10)
    where = torch.cuda.get_device_name() if device == "cuda" else device

    def synced(fn: Callable[[], float]) -> Callable[[], float]:
        def run() -> float:
            value = fn()
            if device == "cuda":
                torch.cuda.synchronize()
            return value
        return run

    def plain_torch() -> float:
        column = pos[:, None]
        rank = 1.0 + 0.5 * ((neg > column).sum(dim=1) + (neg >= column).sum(dim=1)).double()
        return float((1.0 / rank).mean())

    ours_fn = synced(lambda: rank_metrics(pos, neg)["mrr"])
    peers = {"py-tgb Evaluator.eval (copies to the host)": synced(
        lambda: float(evaluator.eval({"y_pred_pos": pos, "y_pred_neg": neg, "eval_metric": ["mrr"]})["mrr"])),
        "plain torch reduction on the same device, no checks": synced(plain_torch)}
    ours_fn(), [peer() for peer in peers.values()]  # warm-up: CUDA context and kernels
    ours, value = timed(ours_fn, repeats)
    o = statistics.median(ours)
    label = f"{queries // 1_000_000}M x {q}" if queries >= 1_000_000 else f"{queries} x {q}"
    rows = []
    for name, peer in peers.items():
        theirs, their_value = timed(peer, repeats)
        if abs(value - their_value) > 1e-4:
            raise RuntimeError(f"GPU MRR differs: tgbhub {value} vs {name} {their_value}")
        t = statistics.median(theirs)
        rows.append((f"MRR {label}, torch tensors on {where}; peer: {name} (s)", f"{o:.4f}",
                     f"{t:.4f}", f"{t / o:.1f}x"))
    return rows


def load_rows(queries: int, q: int, repeats: int, pickle_repeats: int) -> list[tuple[str, str, str, str]]:
    rng = np.random.default_rng(1)
    src = rng.integers(0, 10_000, queries).astype(np.int32)
    dst = rng.integers(0, 10_000, queries).astype(np.int32)
    t = np.arange(queries, dtype=np.int64)
    matrix = rng.integers(0, 10_000, (queries, q)).astype(np.int32)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        lists = pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), q)
        pq.write_table(pa.table({"t": t, "src": src, "dst": dst, "negatives": lists,
                                 "count": np.full(queries, q, dtype=np.int32)}),
                       folder / "negatives.parquet", compression="zstd", row_group_size=1 << 20)
        np.save(folder / "negatives.npy", matrix)
        # TGB's layout: keys are tuples of numpy scalars, values one ndarray per query
        with open(folder / "negatives.pkl", "wb") as handle:
            pickle.dump({(s, d, ts): row for s, d, ts, row in zip(src, dst, t, matrix)}, handle,
                        protocol=pickle.HIGHEST_PROTOCOL)

        def parquet() -> int:
            return int(read_parquet_columns(folder / "negatives.parquet", ("negatives",))["negatives"][-1, -1])

        def mapped() -> int:
            return int(np.load(folder / "negatives.npy", mmap_mode="r")[-1, -1])

        def mapped_and_read() -> int:  # every value read once, as the unpickled dict has them all in memory
            return int(np.load(folder / "negatives.npy", mmap_mode="r").sum(dtype=np.int64))

        def pickled() -> int:
            with open(folder / "negatives.pkl", "rb") as handle:
                return len(pickle.load(handle))

        ours, _ = timed(parquet, repeats)
        mmap, _ = timed(mapped, repeats)
        touched, _ = timed(mapped_and_read, repeats)
        theirs, _ = timed(pickled, pickle_repeats)
    o, m, p = statistics.median(ours), statistics.median(mmap), statistics.median(theirs)
    r = statistics.median(touched)
    label = f"{queries // 1_000_000}M x {q}" if queries >= 1_000_000 else f"{queries} x {q}"
    return [(f"load negatives {label}: Parquet artifact vs pickled dict (s)", f"{o:.3f}", f"{p:.2f}",
             f"{p / o:.0f}x"),
            (f"load negatives {label}: cached .npy memory-map (ds.negatives) vs pickled dict (s)", f"{m:.5f}",
             f"{p:.2f}", f"{p / m:.0f}x"),
            (f"load negatives {label}: memory-map and read every value vs pickled dict (s)", f"{r:.4f}",
             f"{p:.2f}", f"{p / r:.0f}x")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--negatives", type=int, default=100, help="negatives per query for the MRR benchmark")
    parser.add_argument("--load-negatives", type=int, default=20, help="negatives per query for the load benchmark")
    parser.add_argument("--repeats", type=int, default=5, help="repetitions of the batched and load timings")
    parser.add_argument("--per-query", type=int, default=None,
                        help="queries for the once-per-query loop (default: all; fewer are scaled up)")
    parser.add_argument("--pickle-repeats", type=int, default=3)
    args = parser.parse_args()
    per_query = args.per_query or args.queries
    rows = [*mrr_rows(args.queries, args.negatives, args.repeats, per_query),
            *gpu_rows(args.queries, args.negatives, args.repeats),
            *load_rows(args.queries, args.load_negatives, args.repeats, args.pickle_repeats)]
    header = ("measurement", f"tgbhub (median of {args.repeats})",
              f"peer: py-tgb 2.3.0 unless named (median of {args.repeats}; per-query loop and pickle: 1 / "
              f"{args.pickle_repeats})",
              "ratio")
    print_table(header, rows)


if __name__ == "__main__":
    main()
