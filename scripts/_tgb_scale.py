"""TGB at scale (``scripts/bench tgb --scale``): tgbhub against py-tgb 2.3.0 on releases of 1M, 10M and 67M rows
(the size of tgbl-flight), wall time and peak resident memory side by side; then MRR over 10M queries x 100
negatives. Prints one markdown table; every number is one measurement of this run (no repeats: the largest size
alone takes minutes a cell), and nothing is extrapolated.

Setup (not timed): for each size, a release in TGB's exact layout, written block by block by this script:
  * ``wiki`` (the default, every size): tgbl-wiki v2's JODIE layout (``user_id,item_id,timestamp,state_label,
    comma_separated_list_of_features``; ``--feat-dim`` features, 4 by default), sources drawn with a Zipf-like skew
    from ``rows / 20`` users, destinations uniformly from ``max(100, rows / 500)`` items, timestamps rising by 1-39
    a row (so every (src, dst, t) is its own pickle key, as both loaders see it), and the two negatives pickles
    (py-tgb's dict ``{(np.int64 src, np.int64 dst + max(src) + 1, np.int64 t): int64[q]}`` for every val/test edge
    of py-tgb's quantile split, ``--q`` = 20 distinct destinations other than the positive; HIGHEST_PROTOCOL);
  * ``coin`` (``--coin-sizes``, 1M by default: its text ids make the 67M CSV 6 GB, its py-tgb parser is a Python
    loop over every row, and the run has 30 minutes): tgbl-coin v2's layout (``time,src,dst,weight``, 42-character
    ``0x`` addresses),
    negatives keyed by py-tgb's first-appearance ids.
  Each release is zipped (deflate, level 1) as upstream ships it; py-tgb reads the unzipped folder (its download
  step unzips; not timed), tgbhub reads the zip.

Cells (each in a fresh Python subprocess, imports done before the clock starts; memory is the process's own peak
resident set, ``VmHWM``, reset once its imports are done, so a row's memory is what its work needed on top of the
libraries; this process also samples the child's resident set every 5 ms and stops a child that passes
``--rss-limit`` GiB, so a failing peer cannot take the machine with it, and the row says so):
  * import: ``tgbhub.local.imports.import_tgb`` (zip -> converted, hashed, verified, installed cache entry, negatives
    included) vs py-tgb's processing (``LinkPropPredDataset(preprocess=True)``: CSV -> its ``ml_*.pkl`` cache), and vs
    py-tgb's processing plus ``load_val_ns()`` and ``load_test_ns()``, which is the same work as tgbhub's import:
    everything in the release made ready to evaluate (one py-tgb process runs both phases, its peak reset between
    them);
  * cached load: tgbhub ``load_dataset`` and a full read of every column (sums of t, src, dst, edge_id, edge_feat)
    vs py-tgb's constructor from its processed cache and the same sums over ``full_data``;
  * negatives: every val and test negative loaded and read (tgbhub ``ds.negatives(split)`` in a fresh process vs
    py-tgb's second phase above: ``load_val_ns()`` / ``load_test_ns()`` and a sum over every array);
  * MRR over ``--mrr-queries`` (10M) x ``--mrr-negatives`` (100) float32 scores, generated in the child before the
    clock starts, ``--mrr-chunk`` (1M) queries at a time: tgbhub's ``evaluate.metrics.ranks`` (its validation
    included) vs a plain numpy reduction (``(neg > pos).sum`` and ``(neg >= pos).sum``, the same average-tie rank) vs
    py-tgb's ``Evaluator.eval`` per chunk; memory is the peak above the child's once the scores exist.
Each pair of cells is checked to have read the same values before its row prints.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from scripts._draws import distinct_draws
from scripts._table import print_table
from tests import tgb_formats as formats

ROOT = Path(__file__).resolve().parent.parent

RESULT = "TGB_SCALE_RESULT "
PHASE = "TGB_SCALE_PHASE "
LAYOUTS = {"wiki": "tgbl-wiki", "coin": "tgbl-coin"}
BLOCK_ROWS = 2_000_000  # rows generated and written at a time
GIB = 2 ** 30


# --- the releases (setup, not timed) ---------------------------------------------------------------------------------

def _zipf_cdf(n: int) -> np.ndarray:
    weight = 1.0 / np.arange(1, n + 1) ** 0.8
    return np.cumsum(weight / weight.sum())


def _blocks(rows: int) -> Iterator[tuple[int, int]]:
    for lo in range(0, rows, BLOCK_ROWS):
        yield lo, min(rows, lo + BLOCK_ROWS)


def _columns(rows: int, users: int, items: int, seed: int, habit: float = 0.0
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sources (skewed), destinations (uniform), strictly rising times: the whole edge list's ids, block by block.

    ``habit``: the share of events whose destination is one of the source's own three favourite items (drawn once
    per user from a stream of its own, so 0 leaves every other draw as it was): a pattern a model can learn.
    """
    rng = np.random.default_rng([seed, 0])
    cdf = _zipf_cdf(users)
    src = np.minimum(np.searchsorted(cdf, rng.random(rows)), users - 1).astype(np.int64)
    src[0] = users - 1
    dst = rng.integers(0, items, rows)
    if habit > 0:
        habits = np.random.default_rng([seed, 3])
        favourites = habits.integers(0, items, (users, 3))
        chosen = np.flatnonzero(habits.random(rows) < habit)
        dst[chosen] = favourites[src[chosen], habits.integers(0, 3, len(chosen))]
    dst[:2] = (0, items - 1)
    t = np.cumsum(rng.integers(1, 40, rows))
    return src, dst, t


def _negatives(path: Path, keys: tuple[np.ndarray, np.ndarray, np.ndarray], positive: np.ndarray, lo: int,
               population: int, q: int, seed: int) -> None:
    """py-tgb's pickled dict of one split: each key's ``q`` distinct node ids in ``[lo, lo + population]`` other
    than its positive, written by :func:`write_pickled_negatives`."""
    rng = np.random.default_rng([seed, 1, len(positive)])
    rows = np.empty((len(positive), q), dtype=np.int64)
    for a, b in _blocks(len(positive)):
        draws = distinct_draws(rng, b - a, population, q)
        rows[a:b] = lo + draws + (draws >= (positive[a:b] - lo)[:, None])
    write_pickled_negatives(path, keys, rows)


#: entries between a MARK and its SETITEMS, as the pickler batches a dict's items
_PICKLE_BATCH = 1000


def _pickle_prelude() -> tuple[bytes, int, int, int, int]:
    """The start of the pickle (PROTO 5, the empty dict) and the objects every entry refers to, each memoized and
    popped: numpy's scalar constructor, the int64 dtype (built as the pickler builds it), ``_frombuffer`` and the
    order ``"C"``; returns the bytes and their memo indices. The module names are the installed numpy's own."""
    scalar, _ = np.int64(0).__reduce__()[:2]
    frombuffer = np.arange(1, dtype=np.int64).__reduce_ex__(5)[0]

    def text(value: str) -> bytes:
        return b"\x8c" + bytes([len(value)]) + value.encode() + b"\x94"

    prelude = (b"\x80\x05}\x94"  # PROTO 5, EMPTY_DICT, MEMOIZE 0
               + text(scalar.__module__) + text(scalar.__name__) + b"\x93\x94" + b"0"  # memo 3: scalar; POP
               + text("numpy") + text("dtype") + b"\x93\x94" + text("i8") + b"\x89\x88\x87\x94R\x94"  # 9: dtype
               + b"(K\x03" + text("<") + b"NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00t\x94b0"  # its state; POP
               + text(frombuffer.__module__) + text(frombuffer.__name__) + b"\x93\x940"  # 14: _frombuffer; POP
               + text("C") + b"0")  # 15: "C"; POP
    return prelude, 3, 9, 14, 15


def write_pickled_negatives(path: Path, keys: tuple[np.ndarray, np.ndarray, np.ndarray], rows: np.ndarray) -> None:
    """``{(np.int64(a), np.int64(b), np.int64(c)): rows[i]}`` pickled with protocol 5 opcode for opcode as
    ``pickle.dump`` writes it (numpy scalars by ``scalar(dtype, bytes)``, arrays by ``_frombuffer``, every object
    memoized, 1,000 items a SETITEMS), but encoded with numpy, many entries at once: ``pickle.dump`` of a dict of
    20 million entries takes minutes, and the bench has 30. Unframed (FRAME is optional); a sample of entries is
    decoded with ``pickle.loads`` and compared before anything is written.

    Raises:
        AssertionError: if the sample does not decode to the entries it encodes.
    """
    prelude, scalar, dtype, frombuffer, order = _pickle_prelude()
    n, q = rows.shape
    if q > 255:
        raise ValueError(f"q = {q}: the encoder writes the shape with BININT1 (q < 256)")
    key = b"h" + bytes([scalar]) + b"h" + bytes([dtype]) + b"C\x08" + bytes(8) + b"\x94\x86\x94R\x94"
    value = (b"h" + bytes([frombuffer]) + b"(\x96" + (8 * q).to_bytes(8, "little") + bytes(8 * q) + b"\x94h"
             + bytes([dtype]) + b"K" + bytes([q]) + b"\x85\x94h" + bytes([order]) + b"t\x94R\x94")
    template = np.frombuffer(3 * key + b"\x87\x94" + value, dtype=np.uint8)
    starts = [k * len(key) + 6 for k in range(3)]  # the 8 bytes of each key's SHORT_BINBYTES
    payload = 3 * len(key) + 2 + 12  # the array's bytes after its BYTEARRAY8 length

    def encoded(lo: int, hi: int) -> np.ndarray:
        block = np.tile(template, (hi - lo, 1))
        for start, column in zip(starts, keys):
            block[:, start:start + 8] = column[lo:hi].astype("<i8").view(np.uint8).reshape(-1, 8)
        block[:, payload:payload + 8 * q] = rows[lo:hi].astype("<i8").view(np.uint8).reshape(-1, 8 * q)
        return block

    sample = min(n, 3)
    decoded = pickle.loads(prelude + b"(" + encoded(0, sample).tobytes() + b"u.")
    expected = {tuple(np.int64(c[i]) for c in keys): rows[i] for i in range(sample)}
    assert decoded.keys() == expected.keys() and all(np.array_equal(decoded[k], expected[k]) for k in expected), \
        "the pickle encoder does not write what pickle.loads reads back"
    with open(path, "wb") as handle:
        handle.write(prelude)
        for lo, hi in _blocks(n):
            block = encoded(lo, hi)
            for a in range(0, hi - lo, _PICKLE_BATCH):
                handle.write(b"(" + block[a:a + _PICKLE_BATCH].tobytes() + b"u")
        handle.write(b".")


def write_wiki(folder: Path, rows: int, q: int, feat_dim: int, seed: int, habit: float = 0.0
               ) -> tuple[dict[str, Path], dict[str, int]]:
    """tgbl-wiki v2's CSV and negatives pickles (see the module docstring) and the release's own statistics;
    ``habit`` as :func:`_columns`."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    name = LAYOUTS["wiki"]
    users, items = max(50, rows // 20), max(100, rows // 500)
    src, dst, t = _columns(rows, users, items, seed, habit)
    edgelist = folder / formats.edgelist_name(name)
    rng = np.random.default_rng([seed, 2])
    with open(edgelist, "wb") as handle:
        handle.write(b"user_id,item_id,timestamp,state_label,comma_separated_list_of_features\n")
        for a, b in _blocks(rows):
            columns = {"user_id": pa.array(src[a:b]), "item_id": pa.array(dst[a:b]),
                       "timestamp": pc.binary_join_element_wise(pc.cast(pa.array(t[a:b]), pa.string()), ".0", ""),
                       "state_label": pa.array((rng.random(b - a) < 0.02).astype(np.int64))}
            features = np.round(rng.normal(0.0, 0.5, (b - a, feat_dim)), 3)
            columns.update({f"f{k}": pa.array(features[:, k]) for k in range(feat_dim)})
            pcsv.write_csv(pa.table(columns), handle, pcsv.WriteOptions(include_header=False, quoting_style="none"))
    shifted = dst + int(src.max()) + 1
    paths = {"edgelist": edgelist}
    for split, rows_of in _split_rows(t).items():
        paths[f"{split}_ns"] = folder / formats.ns_name(name, split)
        _negatives(paths[f"{split}_ns"], (src[rows_of], shifted[rows_of], t[rows_of]), shifted[rows_of],
                   int(shifted.min()), items - 1, q, seed)
    stats = {"num_nodes": int(len(np.unique(src)) + len(np.unique(dst))), "num_edges": rows}
    return paths, stats


def write_coin(folder: Path, rows: int, q: int, seed: int) -> tuple[dict[str, Path], dict[str, int]]:
    """tgbl-coin v2's CSV (text addresses) and negatives pickles keyed by py-tgb's first-appearance ids."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    name = LAYOUTS["coin"]
    accounts = max(100, rows // 10)
    heads, tails, _ = _columns(rows, accounts, accounts, seed)
    t = 1_600_000_000 + np.cumsum(np.random.default_rng([seed, 3]).integers(1, 40, rows))
    rng = np.random.default_rng([seed, 2])
    edgelist = folder / formats.edgelist_name(name)
    with open(edgelist, "wb") as handle:
        handle.write(b"time,src,dst,weight\n")
        for a, b in _blocks(rows):
            columns = {"time": pa.array(t[a:b]), "src": pa.array(np.char.mod("0x%040x", heads[a:b])),
                       "dst": pa.array(np.char.mod("0x%040x", tails[a:b])),
                       "weight": pa.array(np.round(rng.exponential(50.0, b - a), 6))}
            pcsv.write_csv(pa.table(columns), handle, pcsv.WriteOptions(include_header=False, quoting_style="none"))
    interleaved = np.empty(2 * rows, dtype=np.int64)
    interleaved[0::2], interleaved[1::2] = heads, tails
    raw, first = np.unique(interleaved, return_index=True)
    number = np.empty(int(raw.max()) + 1, dtype=np.int64)
    number[raw[np.argsort(first)]] = np.arange(len(raw))  # py-tgb's ids: order of first appearance, head first
    del interleaved, first
    src, dst = number[heads], number[tails]
    paths = {"edgelist": edgelist}
    for split, rows_of in _split_rows(t).items():
        paths[f"{split}_ns"] = folder / formats.ns_name(name, split)
        _negatives(paths[f"{split}_ns"], (src[rows_of], dst[rows_of], t[rows_of]), dst[rows_of], 0, len(raw) - 1, q,
                   seed)
    return paths, {"num_nodes": int(len(raw)), "num_edges": rows}


def _split_rows(t: np.ndarray) -> dict[str, np.ndarray]:
    """py-tgb's quantile split (0.70 / 0.85 of the timestamps): the val and test rows."""
    val_time, test_time = np.quantile(t, [0.70, 0.85])
    return {"val": np.flatnonzero((t > val_time) & (t <= test_time)), "test": np.flatnonzero(t > test_time)}


def setup(work: Path, layout: str, rows: int, args: argparse.Namespace) -> dict[str, Any]:
    """Write, zip and unzip (for py-tgb) one release; returns the paths every cell needs."""
    name = LAYOUTS[layout]
    folder = work / f"{layout}-{rows}"
    release = folder / "release"
    release.mkdir(parents=True)
    started = time.perf_counter()
    if layout == "wiki":
        files, stats = write_wiki(release, rows, args.q, args.feat_dim, args.seed)
    else:
        files, stats = write_coin(release, rows, args.q, args.seed)
    zipped = folder / "zips" / formats.zip_name(name)
    zipped.parent.mkdir()
    with zipfile.ZipFile(zipped, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for path in files.values():
            archive.write(path, path.name)
    csv_bytes = files["edgelist"].stat().st_size
    shutil.rmtree(release)
    pytgb = formats.unzip_like_pytgb(zipped, folder / "pytgb", name)
    root, meta = formats.pytgb_root(pytgb, name)
    return {"name": name, "zip": str(zipped), "stats": stats, "cache": str(folder / "tgbhub-cache"),
            "pytgb_folder": str(pytgb), "pytgb_root": root, "pytgb_meta": meta, "csv_bytes": csv_bytes,
            "zip_bytes": zipped.stat().st_size, "written_s": time.perf_counter() - started}


# --- the cells, each in a fresh subprocess ---------------------------------------------------------------------------

def _resident(pid: int | str = "self") -> int:
    """A process's resident bytes (0 once it has gone)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def _peak(reset: bool = False) -> int:
    """This process's peak resident bytes (``VmHWM``) since start or the last reset; ``reset`` starts a new peak
    from the current resident set (``/proc/self/clear_refs``, Linux 4.0 and later)."""
    peak = 0
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            peak = int(line.split()[1]) * 1024
    if reset:
        Path("/proc/self/clear_refs").write_text("5")
    return peak


def _pytgb(paths: dict[str, Any]) -> Any:
    """py-tgb's dataset: processed from the CSV if its ``ml_*.pkl`` cache is missing, else loaded from it."""
    from tgb.linkproppred.dataset import LinkPropPredDataset

    with formats._no_download():
        return LinkPropPredDataset(name=paths["name"], root=paths["pytgb_root"], meta_dict=paths["pytgb_meta"],
                                   preprocess=True, download=False)


def _sums(*columns: Any) -> list[float]:
    return [round(float(np.asarray(column).sum(dtype=np.float64)), 3) for column in columns]


def _neg_sum_pytgb(ds: Any) -> int:
    total = 0
    for split in ("val", "test"):
        total += int(sum(int(np.asarray(values).sum()) for values in ds.negative_sampler.eval_set[split].values()))
    return total


def _scores(args: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(args["seed"])
    pos = rng.random(args["queries"], dtype=np.float32)
    neg = np.empty((args["queries"], args["negatives"]), dtype=np.float32)
    for a in range(0, args["queries"], args["chunk"]):
        neg[a:a + args["chunk"]] = rng.random((min(args["chunk"], args["queries"] - a), args["negatives"]),
                                              dtype=np.float32)
    return pos, neg


def run_cell(cell: str, paths: dict[str, Any]) -> dict[str, Any]:
    """Prepare (not timed), then time ``cell``; returns ``seconds``, ``baseline`` (resident bytes when the clock
    started) and ``check`` (a checksum of what it read)."""
    clock = time.perf_counter
    if cell.startswith("mrr/"):
        pos, neg = _scores(paths)
        _peak(reset=True)  # the peak from here on is the scores plus what ranking them needs
        chunk = paths["chunk"]
        baseline, started = _resident(), clock()
        if cell == "mrr/tgbhub":
            from tgbhub.evaluate.metrics import metrics_from_ranks, ranks

            ranks(pos[:1], neg[:1])  # numba's compiled kernel loaded from its cache: once a process, not timed
            baseline, started = _resident(), clock()
            rank = np.concatenate([ranks(pos[a:a + chunk], neg[a:a + chunk]) for a in range(0, len(pos), chunk)])
            mrr = metrics_from_ranks(rank, ks=())["mrr"]
        elif cell == "mrr/numpy":
            total = 0.0
            for a in range(0, len(pos), chunk):
                p, n = pos[a:a + chunk, None], neg[a:a + chunk]
                rank = 1.0 + ((n > p).sum(axis=1) + (n >= p).sum(axis=1)) / 2.0
                total += float((1.0 / rank).sum())
            mrr = total / len(pos)
        else:
            from tgb.linkproppred.evaluate import Evaluator

            evaluator = Evaluator(name="tgbl-wiki", k_value=10)
            total = 0.0
            for a in range(0, len(pos), chunk):
                result = evaluator.eval({"y_pred_pos": pos[a:a + chunk], "y_pred_neg": neg[a:a + chunk],
                                         "eval_metric": ["mrr"]})
                total += float(result["mrr"]) * len(pos[a:a + chunk])
            mrr = total / len(pos)
        return {"seconds": clock() - started, "baseline": baseline, "check": mrr}
    if cell == "import/tgbhub":
        from tgbhub.local.imports import import_tgb

        baseline, started = _resident(), clock()
        import_tgb(paths["name"], paths["zip"], cache_dir=paths["cache"], expected_stats=paths["stats"])
        return {"seconds": clock() - started, "baseline": baseline, "check": None}
    if cell == "import/pytgb":  # processing, then the negatives on the dataset it made: two phases, one process
        for processed in Path(paths["pytgb_folder"]).glob("ml_*.pkl"):  # the processing, not a cache hit
            processed.unlink()
        baseline, started = _resident(), clock()
        ds = _pytgb(paths)
        processing = {"seconds": clock() - started, "baseline": baseline, "peak": _peak(reset=True), "check": None}
        print(PHASE + json.dumps(processing), flush=True)  # kept if the negatives phase is stopped
        baseline, started = _resident(), clock()
        ds.load_val_ns()
        ds.load_test_ns()
        check = _neg_sum_pytgb(ds)
        negatives = {"seconds": clock() - started, "baseline": baseline, "peak": _peak(), "check": check}
        return {"seconds": processing["seconds"] + negatives["seconds"], "baseline": processing["baseline"],
                "peak": max(processing["peak"], negatives["peak"]), "check": None, "phases": {
                    "process": processing, "negatives": negatives}}
    if cell == "load/tgbhub":
        import tgbhub

        baseline, started = _resident(), clock()
        ds = tgbhub.load_dataset(f"tgb/{paths['name']}", cache_dir=paths["cache"], offline=True)
        check = _sums(ds.t, ds.src, ds.dst, ds.columns["edge_feat"])
        _sums(ds.columns["edge_id"])  # read, not compared: py-tgb counts its edge_idxs from 1 for some layouts
        return {"seconds": clock() - started, "baseline": baseline, "check": check}
    if cell == "load/pytgb":
        baseline, started = _resident(), clock()
        data = _pytgb(paths).full_data
        check = _sums(data["timestamps"], data["sources"], data["destinations"], data["edge_feat"])
        _sums(data["edge_idxs"])
        return {"seconds": clock() - started, "baseline": baseline, "check": check}
    if cell == "neg/tgbhub":
        import tgbhub

        ds = tgbhub.load_dataset(f"tgb/{paths['name']}", cache_dir=paths["cache"], offline=True)
        baseline, started = _resident(), clock()
        check = sum(int(np.asarray(negatives.negatives).sum(dtype=np.int64, where=np.asarray(negatives.negatives)
                                                               >= 0))
                    for negatives in (ds.negatives("val"), ds.negatives("test")))
        return {"seconds": clock() - started, "baseline": baseline, "check": check}
    raise ValueError(f"unknown cell {cell!r}")


def child(cell: str, paths_json: str) -> None:
    modules = ["numpy", "pyarrow.parquet", "tgbhub", "tgbhub.local.imports", "tgbhub.evaluate.metrics"]
    if cell.endswith("/pytgb"):
        modules += ["pandas", "tgb.linkproppred.dataset", "tgb.linkproppred.evaluate"]
    for module in modules:
        importlib.import_module(module)
    _peak(reset=True)  # the imports' own peak is not the cell's
    result = run_cell(cell, json.loads(paths_json))
    result.setdefault("peak", _peak())
    print(RESULT + json.dumps(result), flush=True)


def spawn(cell: str, paths: dict[str, Any], rss_limit: float) -> dict[str, Any]:
    """Run ``cell`` in a fresh interpreter, sampling its resident memory; a result, or what stopped it."""
    # the child runs as this module from the repository root, where ``scripts`` is importable
    command = [sys.executable, "-m", __spec__.name, "--child", cell, "--paths", json.dumps(paths)]
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child_process = subprocess.Popen(command, stdout=out, stderr=err, cwd=ROOT)
        peak, stopped = 0, None
        while child_process.poll() is None:
            peak = max(peak, _resident(child_process.pid))
            if peak > rss_limit * GIB:
                child_process.send_signal(signal.SIGKILL)
                stopped = f"stopped at {peak / GIB:.1f} GiB resident (--rss-limit {rss_limit:g})"
            time.sleep(0.005)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        printed = out.read().decode().splitlines()
        tail = err.read().decode().strip().splitlines()
    lines = [line for line in printed if line.startswith(RESULT)]
    if stopped or child_process.returncode != 0 or not lines:
        why = stopped or (f"killed by signal {-child_process.returncode}" if child_process.returncode < 0 else
                          (tail[-1][:160] if tail else f"exit {child_process.returncode}"))
        phases = [json.loads(line[len(PHASE):]) for line in printed if line.startswith(PHASE)]
        return {"failed": f"failed after {wall:.0f} s: {why}", "peak": peak,
                **({"phases": {"process": phases[0]}} if phases else {})}
    return json.loads(lines[-1][len(RESULT):])


# --- the table -------------------------------------------------------------------------------------------------------

def _time(result: dict[str, Any]) -> str:
    return result.get("failed") or f"{result['seconds']:.2f} s, {result['peak'] / GIB:.2f} GiB"


def _ratio(ours: dict[str, Any], theirs: dict[str, Any]) -> str:
    if "failed" in ours or "failed" in theirs:
        return "-"
    return f"{theirs['seconds'] / ours['seconds']:.2f}x time, {theirs['peak'] / ours['peak']:.2f}x memory"


def _agree(text: str, ours: dict[str, Any], theirs: dict[str, Any], close: Callable[[Any, Any], bool]) -> None:
    if "failed" not in ours and "failed" not in theirs and not close(ours["check"], theirs["check"]):
        raise RuntimeError(f"{text}: tgbhub read {ours['check']}, py-tgb {theirs['check']}")


def _after(imported: dict[str, Any], cell: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``cell``'s result, or a failure saying there is nothing to load when the import (or processing) failed."""
    done = imported.get("phases", {}).get("process", imported)
    return {"failed": "not run: nothing was imported"} if "failed" in done else cell()


def release_rows(layout: str, rows: int, paths: dict[str, Any], rss_limit: float, peer: bool = True
                 ) -> tuple[list[tuple[str, ...]], dict[str, Any]]:
    """The table's rows for one release, and tgbhub's import cell (its peak memory for the summary line)."""
    label = f"{layout} {_count(rows)}"
    skipped = {"failed": "not run (--tgbhub-only)"}
    cells = {cell: spawn(cell, paths, rss_limit) if peer or cell.endswith("tgbhub") else skipped
             for cell in ("import/tgbhub", "import/pytgb")}
    for side in ("tgbhub", "pytgb"):
        cells[f"load/{side}"] = _after(cells[f"import/{side}"], lambda: spawn(f"load/{side}", paths, rss_limit))
    cells["neg/tgbhub"] = _after(cells["import/tgbhub"], lambda: spawn("neg/tgbhub", paths, rss_limit))
    theirs = cells["import/pytgb"]
    phases = {"process": theirs, "negatives": theirs, **theirs.get("phases", {})}
    _agree(f"{label} cached load", cells["load/tgbhub"], cells["load/pytgb"],
           lambda a, b: np.allclose(a, b, rtol=1e-9, atol=1e-3))
    _agree(f"{label} negatives", cells["neg/tgbhub"], phases["negatives"], lambda a, b: a == b)
    size = f"(CSV {paths['csv_bytes'] / GIB:.2f} GiB, zip {paths['zip_bytes'] / GIB:.2f} GiB)"
    return [
        (f"{label} import {size}: tgbhub import vs py-tgb processing", _time(cells["import/tgbhub"]),
         _time(phases["process"]), _ratio(cells["import/tgbhub"], phases["process"])),
        (f"{label} import: tgbhub import vs py-tgb processing + load_val_ns + load_test_ns (the same work)",
         _time(cells["import/tgbhub"]), _time(theirs), _ratio(cells["import/tgbhub"], theirs)),
        (f"{label} cached load + read every column", _time(cells["load/tgbhub"]), _time(cells["load/pytgb"]),
         _ratio(cells["load/tgbhub"], cells["load/pytgb"])),
        (f"{label} val + test negatives: load + read every value", _time(cells["neg/tgbhub"]),
         _time(phases["negatives"]), _ratio(cells["neg/tgbhub"], phases["negatives"])),
    ], cells["import/tgbhub"]


def mrr_rows(args: argparse.Namespace) -> list[tuple[str, ...]]:
    paths = {"seed": args.seed, "queries": args.mrr_queries, "negatives": args.mrr_negatives,
             "chunk": args.mrr_chunk}
    cells = {cell: spawn(cell, paths, args.rss_limit) for cell in ("mrr/tgbhub", "mrr/numpy", "mrr/pytgb")}
    for peer in ("mrr/numpy", "mrr/pytgb"):
        _agree(f"MRR ({peer})", cells["mrr/tgbhub"], cells[peer], lambda a, b: abs(a - b) < 1e-6)
    scores = args.mrr_queries * (args.mrr_negatives + 1) * 4
    label = (f"MRR over {_count(args.mrr_queries)} queries x {args.mrr_negatives} negatives "
             f"({scores / GIB:.1f} GiB of float32 scores; {_count(args.mrr_chunk)} queries a chunk)")

    def above(result: dict[str, Any]) -> str:
        return result.get("failed") or (f"{result['seconds']:.2f} s, "
                                         f"+{(result['peak'] - result['baseline']) / GIB:.2f} GiB above the scores")

    def ratio(ours: dict[str, Any], theirs: dict[str, Any]) -> str:
        return "-" if "failed" in ours or "failed" in theirs else f"{theirs['seconds'] / ours['seconds']:.2f}x time"

    return [(f"{label}: tgbhub ranks vs a plain numpy reduction", above(cells["mrr/tgbhub"]),
             above(cells["mrr/numpy"]), ratio(cells["mrr/tgbhub"], cells["mrr/numpy"])),
            (f"{label}: tgbhub ranks vs py-tgb Evaluator.eval", above(cells["mrr/tgbhub"]),
             above(cells["mrr/pytgb"]), ratio(cells["mrr/tgbhub"], cells["mrr/pytgb"]))]


def import_memory(peaks: list[tuple[str, dict[str, Any]]]) -> str:
    """One line: tgbhub's import peak memory at each wiki size, and the largest size's against the smallest's."""
    done = [(label, cell["peak"] / GIB) for label, cell in peaks if label.startswith("wiki ") and "failed" not in cell]
    if not done:
        return "tgbhub import peak memory: no wiki import finished"
    each = ", ".join(f"{label} {peak:.2f} GiB" for label, peak in done)
    return f"tgbhub import peak memory: {each}; {done[-1][0]} / {done[0][0]} = {done[-1][1] / done[0][1]:.2f}x"


def _count(n: int) -> str:
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n:,}"


def _sizes(text: str) -> list[int]:
    units = {"k": 1_000, "M": 1_000_000}
    return [int(float(part[:-1]) * units[part[-1]]) if part[-1] in units else int(part)
            for part in text.split(",") if part]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="scripts/bench tgb --scale", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--sizes", default="1M,10M,67M", help="rows of the wiki-layout releases (default %(default)s)")
    parser.add_argument("--coin-sizes", default="1M", help="rows of the coin-layout releases (default "
                        "%(default)s; empty: none)")
    parser.add_argument("--q", type=int, default=20, help="negatives per val/test edge (default 20, as TGB's "
                        "large tgbl datasets)")
    parser.add_argument("--feat-dim", type=int, default=4, help="edge features of the wiki layout (default 4)")
    parser.add_argument("--mrr-queries", type=int, default=10_000_000)
    parser.add_argument("--mrr-negatives", type=int, default=100)
    parser.add_argument("--mrr-chunk", type=int, default=1_000_000)
    parser.add_argument("--rss-limit", type=float, default=20.0, help="GiB a cell may hold before it is stopped "
                        "(default 20 of this machine's 24)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tgbhub-only", action="store_true", help="measure tgbhub's cells only (py-tgb's are "
                        "left out: a quick look at tgbhub's import memory across the sizes)")
    parser.add_argument("--workdir", type=Path, default=None, help="scratch folder (default: a temporary one)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--paths", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.paths)
        return
    os.environ.setdefault("TGBHUB_NO_PROGRESS", "1")
    os.environ.setdefault("TGBHUB_OFFLINE", "1")
    started = time.perf_counter()
    rows: list[tuple[str, ...]] = []
    peaks: list[tuple[str, dict[str, Any]]] = []
    scratch = tempfile.TemporaryDirectory(prefix="bench-tgb-scale-") if args.workdir is None else None
    # absolute: the cells run from the repository root
    work = Path(scratch.name) if scratch else args.workdir.resolve()
    try:
        for layout, sizes in (("wiki", _sizes(args.sizes)), ("coin", _sizes(args.coin_sizes))):
            for size in sizes:
                paths = setup(work, layout, size, args)
                print(f"[{time.perf_counter() - started:.0f} s] {layout} {_count(size)}: release written in "
                      f"{paths['written_s']:.0f} s", file=sys.stderr, flush=True)
                measured, imported = release_rows(layout, size, paths, args.rss_limit, not args.tgbhub_only)
                rows += measured
                peaks.append((f"{layout} {_count(size)}", imported))
                shutil.rmtree(Path(paths["zip"]).parents[1])  # the next size needs the disk
                print(f"[{time.perf_counter() - started:.0f} s] {layout} {_count(size)} measured", file=sys.stderr,
                      flush=True)
        if args.mrr_queries:
            rows += mrr_rows(args)
    finally:
        if scratch:
            scratch.cleanup()
    print(f"TGB at scale: one measurement a cell (wall time, peak resident memory of the process); "
          f"q = {args.q}, {args.feat_dim} edge features (wiki layout); run took {time.perf_counter() - started:.0f} s")
    print()
    print_table(("work", "tgbhub", "peer", "peer / tgbhub"), rows)
    print()
    print(import_memory(peaks))


if __name__ == "__main__":
    main()
