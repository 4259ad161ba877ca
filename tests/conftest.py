"""Shared fixtures: every test points the cache at a temporary folder; nothing touches the network."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tgbhub.registry import Registry

if TYPE_CHECKING:
    from tgbhub.hub.serve import LocalHub


#: the modules that take longest, the slowest first (test_docs.py alone is over a quarter of the suite): they start
#: first, so that no worker of a parallel run (pytest-xdist, ``--dist loadfile``) is left alone with one at the end
LONGEST_MODULES = ("test_docs.py", "test_gpu_check.py", "test_leaderboards.py", "test_compat_tgb.py",
                   "test_hub_serve.py", "test_chaosnet_portability.py")

#: the thread pools of OpenMP (torch), OpenBLAS, MKL and numba: one thread each per worker of a parallel run
THREAD_POOLS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS")


def pytest_configure(config: pytest.Config) -> None:
    """In a parallel run, give every worker one thread per pool before the workers start (they inherit this
    environment and read it when they import numpy, torch and numba): with two workers on two cores, pools sized to
    the machine oversubscribe it and tiny-model training runs 10-40x slower. A value set in the shell is kept."""
    parallel = bool(getattr(config.option, "numprocesses", None)) and not hasattr(config, "workerinput")
    if parallel:
        for name in THREAD_POOLS:
            os.environ.setdefault(name, "1")
    _keep_freed_memory()


#: glibc's mallopt parameters (malloc.h) and the size up to which freed memory is kept for reuse
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, KEEP_FREED_BYTES = -1, -3, 256 * 2**20


def _keep_freed_memory() -> None:
    """Let glibc keep up to KEEP_FREED_BYTES of freed memory for reuse in this process (not in the processes tests
    start, whose memory some tests measure). torch frees and allocates its tensors again at every training step;
    under glibc's defaults each is a fresh mmap whose pages fault in again, and the kernel takes 40% of a tiny model's
    training. Elsewhere than glibc, nothing changes."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    libc = ctypes.CDLL(name) if name else None
    if libc is None or not hasattr(libc, "mallopt") or not hasattr(libc, "gnu_get_libc_version"):
        return
    libc.mallopt(M_MMAP_THRESHOLD, KEEP_FREED_BYTES)
    libc.mallopt(M_TRIM_THRESHOLD, KEEP_FREED_BYTES)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Start the LONGEST_MODULES first (in that order); every other test keeps its collected place."""
    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return LONGEST_MODULES.index(name) if name in LONGEST_MODULES else len(LONGEST_MODULES)

    items.sort(key=rank)


@pytest.fixture(scope="session", autouse=True)
def _state_outside_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The local hub keeps olah's config and log in the user state folder: a test session keeps its own."""
    previous = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("state"))
    yield
    if previous is None:
        os.environ.pop("XDG_STATE_HOME", None)
    else:
        os.environ["XDG_STATE_HOME"] = previous


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test may use the user's cache or inherit offline/cache settings from the shell."""
    monkeypatch.setenv("TGBHUB_CACHE", str(tmp_path / "default-cache"))
    for name in ("TGBHUB_OFFLINE", "TGBHUB_ENDPOINT", "TGBHUB_MIRRORS", "TGBHUB_SOURCES", "TGBHUB_HUB_ORG",
                 "TGBHUB_TOKEN", "HF_TOKEN", "HF_ENDPOINT", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TGBHUB_NO_PROGRESS", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache reused by read-only tests, so each small dataset is built once per session."""
    return tmp_path_factory.mktemp("shared-cache")


# --- hub fixtures: real servers on 127.0.0.1, started and stopped here ---------------------------------------------

HUB_DATASETS = ("pdet-2-1", "pdet-4-1", "ce-4")


@pytest.fixture(scope="session")
def hub_registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    """The bundled manifests of HUB_DATASETS plus a second version, t-grab/pdet-2-1@1.1.0 (another seed)."""
    from generators.tgrab.artifacts import build_folder
    from generators.tgrab.catalogue import entries

    root = tmp_path_factory.mktemp("hub-manifests")
    bundled = Registry()
    for short in HUB_DATASETS:
        name = f"t-grab/{short}"
        target = root / "t-grab" / short / "1.0.0.json"
        target.parent.mkdir(parents=True)
        shutil.copyfile(bundled.path(name, "1.0.0"), target)
    entry = next(e for e in entries() if e.name == "t-grab/pdet-2-1")
    params = {**entry.params, "negatives": {**entry.params["negatives"], "namespace": "t-grab/pdet-2-1@1.1.0"}}
    newer = dataclasses.replace(entry, version="1.1.0", seed=entry.seed + 1, params=params)
    _, document = build_folder(newer, tmp_path_factory.mktemp("pdet-2-1-1.1.0"))
    (root / "t-grab" / "pdet-2-1" / "1.1.0.json").write_text(json.dumps(document, indent=1) + "\n")
    return Registry(root)


@pytest.fixture(scope="session")
def hub_root(tmp_path_factory: pytest.TempPathFactory, hub_registry: Registry) -> Path:
    """A git: root holding t-grab at v1.0.0 (HUB_DATASETS) and v1.1.0 (pdet-2-1), published by the real publisher."""
    from tgbhub.publish import parse_target, publish

    root = tmp_path_factory.mktemp("hub-root")
    cache = tmp_path_factory.mktemp("publish-cache")
    for version in ("1.0.0", "1.1.0"):
        publish("t-grab", version, parse_target(f"git:{root}"), cache_dir=cache, registry=hub_registry)
    return root


@pytest.fixture(scope="session")
def local_hub(hub_root: Path) -> Iterator[LocalHub]:
    """``tgbhub hub serve`` over hub_root for the whole session."""
    from tgbhub.hub.serve import start_local_hub

    with start_local_hub(hub_root) as hub:
        yield hub


@pytest.fixture
def use_registry(monkeypatch: pytest.MonkeyPatch, hub_registry: Registry) -> Registry:
    """Point tgbhub.load_dataset at hub_registry (so both versions of t-grab/pdet-2-1 resolve)."""
    import tgbhub.api

    monkeypatch.setattr(tgbhub.api, "_REGISTRY", hub_registry)
    return hub_registry


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """torch on one thread for a module of tiny models: their many small kernels leave OpenMP's second thread mostly
    waiting on a shared 2-core machine (up to 10x slower); the caller's setting is given back."""
    import torch  # the train extra: only the modules that train import it

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
