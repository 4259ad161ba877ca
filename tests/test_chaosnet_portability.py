"""Across machines inside one machine: the ChaosNet rebuild gives the same values under every OpenBLAS kernel this
CPU can execute and with one or two threads (numba and BLAS), and those values are the published ones.

Each configuration is a fresh process (OpenBLAS reads ``OPENBLAS_CORETYPE`` when it loads) that loads the datasets
through the public path, ``tgbhub.load_dataset(..., offline=True)`` into an empty cache: build, verify, install.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_chaosnet import GLIBC_X86_FMA, TEST_VECTORS

ROOT = Path(__file__).resolve().parent.parent
MINI = ["chaosnet/mini-k0.5-rho0.1-n8", "chaosnet/mini-k0.5-rho0.3-n8", "chaosnet/mini-k2.0-rho0.1-n8",
        "chaosnet/mini-k2.0-rho0.3-n8"]
FULL_N8 = "chaosnet/k2.0-rho0.2-n8"
# The test vector of that instance (computed with upstream's code): sha256 of IC 0's (10000, 16) states.
FULL_N8_STATE0 = next(sha for (k, rho, n), *_, sha in TEST_VECTORS if (k, rho, n) == (2.0, 0.2, 8))

_LOAD = """
import hashlib, json, sys
import tgbhub
from tgbhub import cache, config
from tgbhub.columns import read_columns
from tgbhub.hashing import content_digest
from tgbhub.manifest import plain

report = {}
for name in sys.argv[1:]:
    ds = tgbhub.load_dataset(name, offline=True)
    entry = ds.manifest.files[0]
    folder = cache.version_dir(config.cache_root(), ds.manifest)
    marker = json.loads((folder / cache.MARKER).read_text())
    values = read_columns(folder / entry.name, entry.encoding, entry.columns)
    report[name] = {"source": ds.source, "version": ds.manifest.version,
                    "verified_by": marker["files"][entry.name]["verified_by"],
                    "digest": content_digest(values), "published": entry.digest,
                    "state0": hashlib.sha256(ds.states[0].astype("<f8").tobytes()).hexdigest()}
print(json.dumps(report))
"""


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    line = next((row for row in text.splitlines() if row.startswith("flags")), "")
    return set(line.partition(":")[2].split())


def kernels() -> list[str]:
    """The OpenBLAS kernels this CPU can execute (forcing one it cannot would be an illegal instruction)."""
    flags = _cpu_flags()
    chosen = ["Prescott"]
    if {"avx2", "fma"} <= flags:
        chosen += ["Haswell", "Zen"]
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        chosen.append("SkylakeX")
    return chosen


def _load(names: list[str], kernel: str, threads: int, cache: Path) -> dict:
    env = {**os.environ, "OPENBLAS_CORETYPE": kernel, "OPENBLAS_NUM_THREADS": str(threads),
           "NUMBA_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads), "TGBHUB_CACHE": str(cache),
           "TGBHUB_OFFLINE": "1", "TGBHUB_NO_PROGRESS": "1"}
    run = subprocess.run([sys.executable, "-c", _LOAD, *names], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=600)
    assert run.returncode == 0, f"{kernel}, {threads} thread(s):\n{run.stderr[-3000:]}"
    return json.loads(run.stdout.splitlines()[-1])


@pytest.mark.skipif(not GLIBC_X86_FMA, reason="the published data are glibc's FMA sin/cos/log on x86-64")
def test_every_blas_kernel_and_thread_count_rebuilds_the_published_values(tmp_path: Path) -> None:
    names = [*MINI, FULL_N8]
    reports = {(kernel, threads): _load(names, kernel, threads, tmp_path / f"{kernel}-{threads}")
               for kernel in kernels() for threads in (1, 2)}
    assert len(reports) >= 2 * 3 or not {"avx2", "fma"} <= _cpu_flags()
    for config, report in reports.items():
        for name in names:
            built = report[name]
            assert built["source"] == "build", (config, name)
            # Verified against the manifest (sha256 with the locked writer, content digest with another one) ...
            assert built["verified_by"] in ("sha256", "digest") and built["digest"] == built["published"], (config,
                                                                                                          name)
        # ... and identical, value for value, under every configuration.
        assert report == reports[("Prescott", 1)], config
        assert report[FULL_N8]["state0"] == FULL_N8_STATE0, config
