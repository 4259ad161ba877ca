"""TGN side by side (``scripts/bench train --part tgn``): tgbhub's continuous-time trainer, TGB's own
``examples/linkproppred/tgbl-wiki/tgn.py`` on py-tgb 2.3.0, and TGM's (``tgm-lib`` 0.1.0b1)
``examples/linkproppred/tgn.py``, on one release in tgbl-wiki's exact layout, the same machine and device.

Setup (not timed): a release of ``--rows`` events written by ``scripts/_tgb_scale.write_wiki`` (JODIE layout with
``--feat-dim`` edge features, the two negatives pickles with up to ``--q`` negatives per query; ``--habit`` of the
events go to one of their user's three favourite items, so that one epoch learns something and the MRRs compare
models rather than noise: uniform destinations leave every model at the random MRR), zipped for tgbhub's
import and unzipped where py-tgb keeps a download; py-tgb's processing runs once before any side, so neither peer
pays for a CSV parse the other skips. The three sides read the same rows and the same negatives.

Each side runs in its own Python process, one per seed, with TGN's published sizes (memory, time and embedding 100,
10 recent neighbours, batch 200, Adam 1e-4), one training epoch, one validation pass and one test pass:

* tgbhub: ``make_trainer(task, "tgn", TrainConfig(epochs=1))``, ``fit``, then ``predict("test")`` graded by the
  bundled evaluator; train and validation seconds from the fit's history, test from the clock around predict and
  grading;
* TGB: the script as TGB ships it (``--num_epoch 1 --num_run 1``), run with ``runpy`` from a checkout of TGB
  (``--tgb-repo``: its ``modules/`` package is imported by the script); its own printed timings and MRRs;
* TGM: the example as tgm-lib's repository ships it at v0.1.0b1 (``--tgm-repo``), ``--epochs 1``; the latencies and
  metrics its logging writes (``train``, then ``eval`` for val and for test), at full precision from the JSON entries
  of the log file it is given.

TGB's ``modules`` import ``torch_scatter``, which only builds from source: ``--peer-site DIR`` puts a folder of such
packages on the peers' path alone (``pip install --target DIR --no-build-isolation --no-deps torch-scatter``), so
this environment stays as the tests see it.

The peers' scripts run unchanged: the only thing set from outside is py-tgb's package-relative data folder
(``PROJ_DIR``), pointed at the benchmark's folder before the script starts, since both scripts name the dataset
``tgbl-wiki`` and py-tgb looks for it next to its own package. Memory is each process's peak resident set (VmHWM) at
its end, libraries included. Every number is from this run: times are medians over the seeds, MRRs mean and
standard deviation over them.
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from scripts._table import print_table

NAME = "tgbl-wiki"
#: the line each child prints last: its measurements as JSON
RESULT = "TGN-BENCH-RESULT "
SIDES = ("tgbhub", "tgb", "tgm")
TGB_SCRIPT = Path("examples/linkproppred/tgbl-wiki/tgn.py")
TGM_SCRIPT = Path("examples/linkproppred/tgn.py")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The TGN part's options (``scripts/bench train --part tgn``)."""
    group = parser.add_argument_group("tgn part")
    group.add_argument("--rows", type=int, default=60_000, help="events in the release (default 60,000)")
    group.add_argument("--feat-dim", type=int, default=172, help="edge features per event (tgbl-wiki has 172)")
    group.add_argument("--habit", type=float, default=0.8,
                       help="share of events going to one of the user's three favourite items (default 0.8: a "
                       "pattern to learn, so the MRRs compare models, not noise; 0: uniform destinations)")
    group.add_argument("--q", type=int, default=999,
                       help="negatives per query at most (default: every other destination, as tgbl-wiki)")
    group.add_argument("--sides", default=",".join(SIDES), help="comma-separated, of: " + ", ".join(SIDES))
    group.add_argument("--seeds", default="1", help="comma-separated seeds, one process per side and seed")
    group.add_argument("--tgb-repo", type=Path, default=None,
                       help="a checkout of github.com/shenyangHuang/TGB at v2.3.0 (default: $TGB_REPO)")
    group.add_argument("--tgm-repo", type=Path, default=None,
                       help="a checkout of github.com/tgm-team/tgm at v0.1.0b1 (default: $TGM_REPO)")
    group.add_argument("--peer-site", type=Path, default=None,
                       help="a folder of packages the peers need beyond this environment, on their path only: TGB's "
                       "modules import torch_scatter, which builds from source (pip install --target DIR "
                       "--no-build-isolation --no-deps torch-scatter)")
    group.add_argument("--work", type=Path, default=None, help="working folder (default: a temporary one)")


# --- setup -------------------------------------------------------------------------------------------------------

def setup(work: Path, rows: int, feat_dim: int, q: int, habit: float) -> dict[str, Any]:
    """Write the release, zip it, import it into a fresh tgbhub cache, unzip it for py-tgb and let py-tgb process it."""
    from scripts._tgb_scale import write_wiki
    from tests import tgb_formats as formats
    from tgbhub.local.imports import import_tgb

    release = work / "release"
    release.mkdir(parents=True)
    items = max(100, rows // 500)  # write_wiki's destinations: a query draws its negatives among the others
    files, stats = write_wiki(release, rows, min(q, items - 1), feat_dim, seed=0, habit=habit)
    zipped = work / formats.zip_name(NAME)
    with zipfile.ZipFile(zipped, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for path in files.values():
            archive.write(path, path.name)
    shutil.rmtree(release)
    cache = work / "tgbhub-cache"
    import_tgb(NAME, zipped, cache_dir=cache, expected_stats=stats)
    formats.unzip_like_pytgb(zipped, work / "datasets", NAME)
    paths = {"work": str(work), "cache": str(cache)}
    _run_child("pytgb-process", paths, seed=0)
    return paths


# --- the children ------------------------------------------------------------------------------------------------

def _point_pytgb_at(work: str) -> None:
    """Make py-tgb look for ``datasets/<name>`` under ``work``: every loaded ``tgb`` module's ``PROJ_DIR``."""
    import tgb.linkproppred.dataset  # noqa: F401  (loads the modules that copy PROJ_DIR at import)
    import tgb.linkproppred.dataset_pyg  # noqa: F401
    import tgb.utils.info  # noqa: F401  (TGM's negatives hook reads PROJ_DIR from here at call time)

    for name, module in list(sys.modules.items()):
        if (name == "tgb" or name.startswith("tgb.")) and hasattr(module, "PROJ_DIR"):
            module.PROJ_DIR = work.rstrip("/") + "/"


def _peak_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _ours(paths: dict[str, Any], seed: int) -> dict[str, Any]:
    import tgbhub
    from tgbhub import api
    from tgbhub.trainers import TrainConfig, make_trainer

    dataset = tgbhub.load_dataset(f"tgb/{NAME}", cache_dir=paths["cache"])
    task = dataset.task
    trainer = make_trainer(task, "tgn", TrainConfig(seed=seed, epochs=1, progress=False), dataset=dataset)
    report = trainer.fit(dataset, task)
    epoch = report.history[0]
    tick = time.perf_counter()
    submission = trainer.predict(dataset, task, "test")
    graded = api.get_evaluator(dataset, task.get("name")).evaluate(submission, split="test")
    test_seconds = time.perf_counter() - tick
    return {"train_s": epoch["train_seconds"], "val_s": epoch["val_seconds"], "test_s": test_seconds,
            "val_mrr": epoch["val_mrr"], "test_mrr": float(graded["metrics"]["mrr"])}


def _run_script(script: Path, argv: list[str], repo: Path, paths: dict[str, Any]) -> None:
    """Run a peer's script unchanged, as ``python script argv`` would from ``repo`` (whose packages it imports)."""
    sys.argv = [str(script), *argv]
    sys.path[:0] = [str(repo)] + ([paths["peer_site"]] if paths.get("peer_site") else [])
    runpy.run_path(str(script), run_name="__main__")


def _tgb(paths: dict[str, Any], seed: int) -> dict[str, Any]:
    """TGB's tgn.py, copied into this run's folder (it writes its results and checkpoints beside itself); the MRRs
    at full precision from the results file it writes, the seconds from what it prints."""
    repo, folder = Path(paths["tgb_repo"]), Path(paths["work"]) / f"tgb-{seed}"
    folder.mkdir()
    script = Path(shutil.copy(repo / TGB_SCRIPT, folder / TGB_SCRIPT.name))
    _point_pytgb_at(paths["work"])
    _run_script(script, ["--num_epoch", "1", "--num_run", "1", "--seed", str(seed)], repo, paths)
    text = Path(paths["capture"]).read_text()
    saved = json.loads((folder / "saved_results" / f"TGN_{NAME}_results.json").read_text())
    return {"train_s": _number_after(text, "Training elapsed Time (s):"),
            "val_s": _number_after(text, "Validation: Elapsed time (s):"),
            "test_s": _number_after(text, "Test: Elapsed Time (s):"),
            "val_mrr": float(saved["val mrr"][-1]), "test_mrr": float(saved["test mrr"])}


def _tgm(paths: dict[str, Any], seed: int) -> dict[str, Any]:
    """TGM's tgn.py; seconds and MRRs at full precision from the JSON entries of the log file it is asked for."""
    repo, log = Path(paths["tgm_repo"]), Path(paths["work"]) / f"tgm-{seed}.jsonlog"
    _point_pytgb_at(paths["work"])
    _run_script(repo / TGM_SCRIPT, ["--epochs", "1", "--seed", str(seed), "--dataset", NAME,
                                    "--log-file-path", str(log)], repo, paths)
    entries = [json.loads(line[line.index('{"metric"'):]) for line in log.read_text().splitlines()
               if '{"metric"' in line]
    values: dict[str, list[float]] = {}
    for entry in entries:
        values.setdefault(str(entry.get("metric")), []).append(float(entry["value"]))
    evals = values["eval latency"]
    return {"train_s": values["train latency"][0], "val_s": evals[0], "test_s": evals[1],
            "val_mrr": values["Validation mrr epoch 1"][0], "test_mrr": values["Test mrr epoch 1"][0]}


def _number_after(text: str, marker: str) -> float:
    """The number after the last ``marker`` in ``text``."""
    for line in reversed(text.splitlines()):
        if marker in line:
            return float(line.split(marker, 1)[1].split()[0])
    raise RuntimeError(f"the peer printed no {marker!r}; its output ends with:\n{text[-2000:]}")


def child(side: str, paths_json: str, seed: int) -> None:
    """One side, one seed, in this process; prints ``RESULT`` and the measurements as JSON."""
    paths = json.loads(paths_json)
    if side == "pytgb-process":
        _point_pytgb_at(paths["work"])
        from tgb.linkproppred.dataset import LinkPropPredDataset

        LinkPropPredDataset(name=NAME, root="datasets", preprocess=True, download=False)
        result: dict[str, Any] = {}
    elif side == "tgbhub":
        result = _ours(paths, seed)
    elif side == "tgb":
        result = _tgb(paths, seed)
    else:
        result = _tgm(paths, seed)
    result["peak_mib"] = _peak_mib()
    sys.__stdout__.write(RESULT + json.dumps(result) + "\n")


def _run_child(side: str, paths: dict[str, Any], seed: int) -> dict[str, Any]:
    """Run one side in a fresh process whose output goes to a file the child parses (the peers print, not return)."""
    capture = Path(paths["work"]) / f"{side}-{seed}.log"
    env = {**os.environ, "TQDM_DISABLE": "1", "TGBHUB_NO_PROGRESS": "1", "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-c", "import sys; from scripts._train_tgn import child; child(*sys.argv[1:3], "
               "int(sys.argv[3]))", side, json.dumps({**paths, "capture": str(capture)}), str(seed)]
    with open(capture, "w") as sink:
        done = subprocess.run(command, stdout=sink, stderr=subprocess.STDOUT, cwd=Path(__file__).parent.parent,
                              env=env, check=False)
    text = capture.read_text()
    lines = [line for line in text.splitlines() if line.startswith(RESULT)]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{side} (seed {seed}) exited {done.returncode}; its output ends with:\n{text[-3000:]}")
    return dict(json.loads(lines[-1][len(RESULT):]))


# --- the table -----------------------------------------------------------------------------------------------------

def _repo(given: Path | None, variable: str, script: Path, what: str) -> Path | None:
    folder = given or (Path(os.environ[variable]) if os.environ.get(variable) else None)
    if folder is None:
        print(f"({what} skipped: pass --{variable.lower().replace('_', '-')} or set ${variable} to a checkout)")
        return None
    if not (folder / script).is_file():
        raise SystemExit(f"{folder} is no {what} checkout: it has no {script}")
    return folder.resolve()


def _summary(runs: list[dict[str, Any]]) -> dict[str, str]:
    def median(key: str) -> str:
        return f"{statistics.median(r[key] for r in runs):.2f}"

    def spread(key: str) -> str:
        values = [r[key] for r in runs]
        std = statistics.stdev(values) if len(values) > 1 else 0.0
        return f"{statistics.fmean(values):.4f} ± {std:.4f}"

    return {"train": median("train_s"), "val": median("val_s"), "test": median("test_s"),
            "peak": f"{statistics.median(r['peak_mib'] for r in runs):.0f}", "val_mrr": spread("val_mrr"),
            "test_mrr": spread("test_mrr")}


def run(args: argparse.Namespace) -> None:
    """Set up once, run every side for every seed, print the table."""
    seeds = [int(s) for s in str(args.seeds).split(",")]
    repos = {"tgb": _repo(args.tgb_repo, "TGB_REPO", TGB_SCRIPT, "TGB"),
             "tgm": _repo(args.tgm_repo, "TGM_REPO", TGM_SCRIPT, "TGM")}
    with tempfile.TemporaryDirectory(prefix="tgbhub-bench-tgn-") as scratch:
        work = Path(args.work or scratch)
        work.mkdir(parents=True, exist_ok=True)
        paths = setup(work, args.rows, args.feat_dim, args.q, args.habit)
        paths.update({"tgb_repo": str(repos["tgb"]), "tgm_repo": str(repos["tgm"]),
                      "peer_site": str(args.peer_site.resolve()) if args.peer_site else None})
        results = {side: [_run_child(side, paths, seed) for seed in seeds]
                   for side in args.sides.split(",") if side == "tgbhub" or repos[side] is not None}
    import torch

    print(f"\nTGN, one epoch + val + test, {args.rows:,} events in tgbl-wiki's layout ({args.feat_dim} edge features, "
          f"{args.habit:g} of them to one of the user's 3 favourite items, "
          f"batch 200, sizes 100, 10 neighbours), {torch.get_num_threads()} torch threads, CPU; seeds "
          f"{args.seeds}: seconds are medians, MRR mean ± std\n")
    rows = []
    for side, runs in results.items():
        cells = _summary(runs)
        rows.append([side, cells["train"], cells["val"], cells["test"], cells["peak"], cells["val_mrr"],
                     cells["test_mrr"]])
    print_table(["library", "train s", "val s", "test s", "peak MiB", "val MRR", "test MRR"], rows)
    ours = results.get("tgbhub")
    for side, runs in results.items():
        if side == "tgbhub" or ours is None:
            continue
        ratios = [statistics.median(r[k] for r in runs) / statistics.median(o[k] for o in ours)
                  for k in ("train_s", "val_s", "test_s")]
        print(f"\n{side} / tgbhub: train {ratios[0]:.2f}x, val {ratios[1]:.2f}x, test {ratios[2]:.2f}x")
