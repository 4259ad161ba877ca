"""The first-compile notice (generators.jit): one line on stderr, only when numba will really compile."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numba
import numpy as np
import pytest

from generators import jit
from generators.chaosnet import dynamics

NOTICE = "compiling the tiny kernel (first use in this process, about no time)...\n"
KERNEL_SOURCE = "import numba\n\n\n@numba.njit(cache=True)\ndef twice(x):\n    return 2.0 * x\n"


def _load(path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """A fresh import of ``path`` as module ``name``: a new dispatcher over the same source, as in a new process."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)  # numba imports it by name when it loads cached code
    spec.loader.exec_module(module)
    return module


def test_the_notice_comes_once_before_the_first_compile(capfd):
    @numba.njit
    def halve(x):
        return x / 2.0

    assert jit.will_compile(halve, (1.0,))
    assert jit.announce_compile(halve, (1.0,), "the tiny kernel", "no time")
    assert capfd.readouterr().err == NOTICE
    assert halve(4.0) == 2.0
    assert not jit.will_compile(halve, (1.0,))  # compiled in this process now
    assert not jit.announce_compile(halve, (3.0,), "the tiny kernel", "no time")
    assert capfd.readouterr().err == ""


def test_quiet_says_nothing_even_before_a_compile(capfd, monkeypatch):
    @numba.njit
    def third(x):
        return x / 3.0

    monkeypatch.setenv(jit.QUIET_ENV, "1")  # what `tgbhub --quiet` sets
    assert jit.will_compile(third, (1.0,))
    assert not jit.announce_compile(third, (1.0,), "the tiny kernel", "no time")
    assert capfd.readouterr().err == ""


def test_once_announced_a_kernel_is_not_announced_again(capfd):
    @numba.njit
    def third(x):
        return x / 3.0

    assert jit.announce_compile(third, (1.0,), "the tiny kernel", "no time")
    # a second caller before the first compile has finished (another thread) stays quiet
    assert jit.will_compile(third, (1.0,))
    assert not jit.announce_compile(third, (1.0,), "the tiny kernel", "no time")
    assert capfd.readouterr().err == NOTICE


def test_no_notice_when_numbas_disk_cache_holds_the_code(tmp_path, monkeypatch, capfd):
    source = tmp_path / "tiny_kernel.py"
    source.write_text(KERNEL_SOURCE)
    first = _load(source, "tgbhub_test_tiny_kernel_a", monkeypatch)
    assert jit.announce_compile(first.twice, (1.5,), "the tiny kernel", "no time")
    assert first.twice(1.5) == 3.0  # compiles and writes numba's cache (cache=True)
    second = _load(source, "tgbhub_test_tiny_kernel_b", monkeypatch)
    assert not jit.will_compile(second.twice, (1.5,))  # a load from disk, not a compile
    assert jit.will_compile(second.twice, (np.arange(3.0),))  # other argument types: not cached
    assert not jit.announce_compile(second.twice, (1.5,), "the tiny kernel", "no time")
    assert capfd.readouterr().err == NOTICE


def test_a_plain_python_function_never_compiles():
    assert not jit.will_compile(lambda x: x, (1.0,))


def test_the_standard_map_kernel_is_not_announced_once_it_is_compiled(capfd):
    seeds = np.array([1, 2])
    dynamics.trajectories(0.5, 0.15, 4, seeds, 0, 10)  # compiles, or loads numba's cache: a notice or none
    capfd.readouterr()
    dynamics.trajectories(0.5, 0.15, 4, seeds, 0, 10)
    assert "compiling" not in capfd.readouterr().err


@pytest.mark.slow
def test_a_new_process_with_a_cold_cache_announces_the_kernel_and_a_warm_one_does_not(tmp_path):
    # two processes sharing an empty numba cache: the first compiles (about 5 to 15 s), the second loads
    code = ("import numpy as np\nfrom generators.chaosnet import dynamics\n"
            "dynamics.simulate(0.5, 0.15, 4, np.array([1, 2]), 0, 10, sali_horizons=(10,))\n"
            "dynamics.simulate(0.5, 0.15, 4, np.array([3]), 0, 10, sali_horizons=(10,))\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
            for _ in range(2)]
    assert runs[0].stderr.count("compiling the standard-map kernel (first use in this process") == 1
    assert "compiling" not in runs[1].stderr
