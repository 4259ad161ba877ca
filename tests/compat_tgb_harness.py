"""Test-only: run TGB's own example scripts on both sides of a comparison, on identical files.

* py-tgb 2.3.0: the script unchanged, against a relocated copy of the installed ``tgb`` package (py-tgb resolves
  ``root="datasets"`` against its own folder, so the copy's ``tgb/datasets/<dir>`` holds the release and nothing is
  written into site-packages).
* tgbhub, imports only: the script with its ``tgb`` import lines rewritten to ``tgbhub.compat.tgb``
  (:func:`localize`), in a process where ``import tgb`` fails (:data:`NO_PYTGB`).
* tgbhub, runner: the unchanged script through ``python -m tgbhub.compat.tgb run``, in such a process too.

The release is one of ``tests/tgb_formats.py``'s small datasets in TGB's exact layout, imported into a tgbhub cache
with ``import_tgb``. Each side runs in its own copy of the script's folder (scripts write ``saved_results`` next to
themselves) with TGB's ``modules/`` package beside it. The metrics are read from the printed lines that name one and
from the results JSON the script saves (full precision).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from tests import tgb_formats as formats

#: the TGB commit the carried scripts and modules are copied from (py-tgb 2.3.0's release commit)
UPSTREAM_COMMIT = "3b83e5cfb2010743fd4f7a80a01b0e19dfcf78cb"
#: a line importing from py-tgb (or, after :func:`localize`, from tgbhub.compat.tgb)
IMPORT_LINE = re.compile(r"^\s*(from|import)\s+tgb(hub\.compat\.tgb)?(\.[\w.]+)?\s")
#: a py-tgb import the rewrite knows: ``from tgb.<module> import <names>``
FROM_TGB = re.compile(r"^(\s*)from\s+tgb\.[\w.]+\s+import\s+(.+)$")
#: a printed line or JSON key holding a metric (timings excluded)
METRIC = re.compile(r"mrr|ndcg|hits", re.IGNORECASE)
NUMBER = re.compile(r"-?\d+\.\d+(?:e-?\d+)?")
ANY_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")
#: a printed line about timing (its numbers differ from run to run)
TIMING = re.compile(r"time|second|elapsed|loading|took|it/s", re.IGNORECASE)
#: prepended to the compat side's process: py-tgb cannot be imported there, whether or not it is installed
NO_PYTGB = """\
import sys
class _NoPytgb:
    def find_spec(self, name, path=None, target=None):
        if name == "tgb" or name.startswith("tgb."):
            raise ModuleNotFoundError("py-tgb is blocked in this process: " + name, name=name)
        return None
sys.meta_path.insert(0, _NoPytgb())
"""
IMPORTS_ONLY = NO_PYTGB + """\
import os, runpy
script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(script))
runpy.run_path(script, run_name="__main__")
"""
THROUGH_RUNNER = NO_PYTGB + """\
from tgbhub.compat.tgb.__main__ import main
main(["run", *sys.argv[1:]])
"""


def body_digest(text: str) -> str:
    """sha256 of a script's lines other than its ``tgb`` (or ``tgbhub.compat.tgb``) import lines."""
    kept = [line for line in text.splitlines(keepends=True) if not IMPORT_LINE.match(line)]
    return hashlib.sha256("".join(kept).encode()).hexdigest()


def localize(text: str) -> str:
    """The script with each ``from tgb.X import names`` line rewritten to ``from tgbhub.compat.tgb import names``
    (nothing else changes: the line count stays)."""
    return "".join(FROM_TGB.sub(r"\1from tgbhub.compat.tgb import \2", line) if FROM_TGB.match(line) else line
                   for line in text.splitlines(keepends=True))


@dataclasses.dataclass(frozen=True)
class Release:
    """A small release of ``name``: in a relocated py-tgb tree (``pytgb_path`` goes first on PYTHONPATH) and imported
    into a tgbhub ``cache``."""

    name: str
    pytgb_path: Path
    cache: Path


def pytgb_tree(dest: Path) -> Path:
    """A copy of the installed py-tgb package under ``dest/tgb`` (its bundled dataset folders left out), so that
    py-tgb's ``PROJ_DIR`` is ``dest/tgb/``; returns ``dest``."""
    import tgb  # a namespace package: no __init__.py

    source = Path(list(tgb.__path__)[0])
    if not (dest / "tgb").is_dir():
        shutil.copytree(source, dest / "tgb", ignore=shutil.ignore_patterns("__pycache__", "datasets"))
        (dest / "tgb" / "datasets").mkdir()
    return dest


def build(name: str, work: Path, **size: int) -> Release:
    """``name`` written by ``tests/tgb_formats.py`` (``size``: the writer's keywords) into a py-tgb tree under
    ``work`` and imported into ``work/cache`` (the expected statistics from py-tgb's own load of the files)."""
    from tgbhub.local.imports import import_tgb

    root = pytgb_tree(work / "pytgb")
    write = formats.write_text_ids if name in formats.TEXT_ID_HEADERS else formats.write
    files = write(root / "tgb" / "datasets" / formats.dir_name(name), name, **size)
    pytgb = formats.load_with_pytgb(files, load_negatives=False)
    data = pytgb.full_data
    originals = len(data["sources"]) // (2 if name.startswith("tkgl-") else 1)  # py-tgb adds a TKG's inverses
    stats = {"num_nodes": int(len(np.union1d(data["sources"], data["destinations"]))), "num_edges": int(originals)}
    zipped = formats.zip_dataset(files, work / "zips")
    import_tgb(name, zipped, cache_dir=work / "cache", expected_stats=stats)
    _drop_processed(files.folder)
    return Release(name, root, work / "cache")


def _drop_processed(folder: Path) -> None:
    """Remove the processed pickles py-tgb's load wrote, so the script's own run parses the CSV as a user's would."""
    for path in folder.glob("ml_*"):
        path.unlink()


@dataclasses.dataclass(frozen=True)
class Run:
    """One side's run of a script: exit status, output, seconds, and the metrics it printed and saved."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    metrics: dict[str, float]

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def side_tree(tgb_root: Path, script: str, dest: Path, rewrite: bool) -> Path:
    """``dest`` holding TGB's ``modules/`` and the script's folder (``script`` relative to ``tgb_root``), the script
    localized when ``rewrite``; returns the script's path there."""
    if not (dest / "modules").is_dir():
        shutil.copytree(tgb_root / "modules", dest / "modules", ignore=shutil.ignore_patterns("__pycache__"))
    target = dest / script
    target.parent.mkdir(parents=True, exist_ok=True)
    text = read_exact(tgb_root / script)
    write_exact(target, localize(text) if rewrite else text)
    return target


def read_exact(path: Path) -> str:
    """A file's text with its line endings as stored (TGB has CRLF files)."""
    with open(path, newline="") as handle:
        return handle.read()


def write_exact(path: Path, text: str) -> None:
    """Write ``text`` with its line endings as they are."""
    with open(path, "w", newline="") as handle:
        handle.write(text)


def run(side: str, tgb_root: Path, script: str, args: list[str], release: Release, work: Path,
        timeout: float = 600) -> Run:
    """Run ``script`` (relative to the TGB checkout ``tgb_root``) with ``args`` on ``side`` (``pytgb``, ``imports``
    or ``runner``) in ``work/<side>``."""
    path = side_tree(tgb_root, script, work / side, rewrite=side == "imports")
    env = {**os.environ, "TGBHUB_CACHE": str(release.cache), "TGBHUB_OFFLINE": "1", "TGBHUB_NO_PROGRESS": "1",
           "PYTHONHASHSEED": "0", "PYTHONPATH": os.pathsep.join(
               ([str(release.pytgb_path)] if side == "pytgb" else []) + [str(work / side)]
               + [path for path in os.environ.get("PYTHONPATH", "").split(os.pathsep) if path])}
    command = {"pytgb": [sys.executable, str(path)], "imports": [sys.executable, "-c", IMPORTS_ONLY, str(path)],
               "runner": [sys.executable, "-c", THROUGH_RUNNER, str(path)]}[side]
    started = time.perf_counter()
    try:
        done = subprocess.run([*command, *args], cwd=work / side, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as late:
        return Run(-1, str(late.stdout or ""), "timed out", time.perf_counter() - started, {})
    seconds = time.perf_counter() - started
    return Run(done.returncode, done.stdout, done.stderr, seconds, metrics(done.stdout, path.parent))


def metrics(stdout: str, folder: Path) -> dict[str, float]:
    """The metrics a run printed (``line <i>.<j>``: the j-th number on the i-th printed line naming a metric) and
    saved (``json <key>`` of every results file under ``folder``, the last run's). A script that reports no metric
    (TGB's data-loading examples) gives the numbers of its printed lines instead (``printed <i>.<j>``: counts of
    nodes, edges, relations). Lines about timing are left out."""
    found: dict[str, float] = {}
    printed = [line for line in stdout.splitlines() if not TIMING.search(line)]
    for i, line in enumerate(line for line in printed if METRIC.search(line)):
        for j, number in enumerate(NUMBER.findall(line)):
            found[f"line {i}.{j}"] = float(number)
    for results in sorted(folder.rglob("*.json")):
        saved = json.loads(results.read_text())
        last = saved[-1] if isinstance(saved, list) else saved
        for key, value in last.items():
            if METRIC.search(key) and isinstance(value, (int, float)):
                found[f"json {key}"] = float(value)
    if not found:
        for i, line in enumerate(line for line in printed if ANY_NUMBER.search(line)):
            for j, number in enumerate(ANY_NUMBER.findall(line)):
                found[f"printed {i}.{j}"] = float(number)
    return found


def max_diff(ours: dict[str, float], theirs: dict[str, float]) -> float:
    """The largest ``|ours - theirs|`` over the metrics both report; inf if they do not report the same ones."""
    if set(ours) != set(theirs) or not ours:
        return float("inf")
    return max(abs(ours[key] - theirs[key]) for key in ours)

