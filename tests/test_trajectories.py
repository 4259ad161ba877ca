"""The trajectory dataset object and the cache's HDF5 path: built by the real generator into a temporary cache,
memory-mapped, split by IC, z-scored with train statistics, windowed as upstream (parity) or per IC (clean)."""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
import warnings
from pathlib import Path

import h5py
import numpy as np
import pytest

import tgbhub
from generators.chaosnet.artifacts import TRAJECTORIES_FILE, build_recipe
from tgbhub import api, cache
from tgbhub.cache import Fetched
from tgbhub.errors import IntegrityError, InvalidNameError, MissingExtraError, SourceUnavailableError
from tgbhub.local.gateway import BuildSource

MINI = "chaosnet/mini-k2.0-rho0.3-n8"
FULL_N8 = "chaosnet/k2.0-rho0.2-n8"


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> tgbhub.data.TrajectoryDataset:
    return tgbhub.load_dataset(MINI, cache_dir=tmp_path_factory.mktemp("mini"), offline=True)


def test_load_builds_then_serves_a_memory_map_from_the_cache(tmp_path: Path) -> None:
    first = tgbhub.load_dataset(MINI, cache_dir=tmp_path, offline=True)
    assert first.source == "build"
    second = tgbhub.load_dataset(MINI, cache_dir=tmp_path, offline=True)
    assert second.source == "cache" and isinstance(second.states, np.memmap)
    assert second.states.shape == (6, 2000, 16) and second.states.dtype == np.float64
    assert np.array_equal(first.states, second.states)
    assert not list((tmp_path / "chaosnet" / "mini-k2.0-rho0.3-n8").glob("*/*.npy")), "no derived copies"
    records = second.manifest.raw["recordSet"][0]["data"]
    assert second.seeds.tolist() == [r["ics/seed"] for r in records]


def test_params_topology_and_indicators(mini) -> None:
    assert mini.params == {"K": 2.0, "rho": 0.3, "epsilon": 0.6, "N": 8}
    assert mini.adjacency("ring").shape == (8, 8) and mini.adjacency("jacobian").sum() == 48
    edges = mini.edge_index("coupling_only")
    assert edges.shape == (2, 32) and mini.adjacency("coupling_only")[edges[1], edges[0]].all()
    indicators = mini.indicators
    assert set(indicators) >= {"lambda_max", "sali_1000", "label_1000", "sali_2500", "sali_iterations_2500"}
    assert (indicators["lambda_max"] > 0.3).all() and set(indicators["label_1000"]) <= {"chaotic", "sticky",
                                                                                         "regular"}
    assert mini.initial_conditions.shape == (6, 16) and mini.variables[8] == "p_1"
    with pytest.raises(InvalidNameError, match="jacobian"):
        mini.adjacency("grid")
    with pytest.raises(InvalidNameError, match="train, val, test"):
        mini.windows("holdout")


def test_scaler_is_fitted_on_train_ics_only(mini) -> None:
    train = np.asarray(mini.states[0:3]).reshape(-1, 16)
    assert np.allclose(mini.scaler.mean, train.mean(axis=0)) and np.allclose(mini.scaler.std, train.std(axis=0))
    normalised = mini.arrays("train")
    assert normalised.dtype == np.float32 and normalised.shape == (6000, 16)
    assert np.abs(normalised.mean(axis=0)).max() < 1e-5 and np.allclose(normalised.std(axis=0), 1, atol=1e-5)
    test = mini.arrays("test")
    assert np.allclose(test, (np.asarray(mini.states[4:6]).reshape(-1, 16) - mini.scaler.mean) / mini.scaler.std,
                       atol=1e-6)
    assert np.array_equal(mini.arrays("test", normalised=False), np.asarray(mini.states[4:6]).reshape(-1, 16))


def test_windows_parity_and_clean(mini) -> None:
    rows = mini.arrays("test")
    parity = mini.windows("test")                                   # task default: parity, test stride 1
    assert len(parity) == 4000 - 60 + 1 and parity.mode == "parity"
    x, y = parity[[0, 1950]]
    assert np.array_equal(x[1], rows[1950:1998]) and np.array_equal(y[1], rows[1998:2010])
    assert parity.straddling == 59                                  # starts 1941..1999 mix IC 4 and IC 5
    clean = mini.windows("test", mode="clean")
    assert len(clean) == 2 * (2000 - 60 + 1) and clean.straddling == 0
    train = mini.windows("train")                                   # task default stride 12 on train
    assert len(train) == (6000 - 60) // 12 + 1 and train.starts[1] == 12
    custom = mini.windows("val", context=10, horizon=5, stride=7)
    assert custom[0][0].shape == (10, 16) and custom[0][1].shape == (5, 16) and len(custom) == (2000 - 15) // 7 + 1
    batches = list(train.batches(100, shuffle=True, seed=0))
    assert sum(len(b[0]) for b in batches) == len(train)
    with pytest.raises(InvalidNameError, match="parity, clean"):
        mini.windows("test", mode="overlapping")


def test_full_n8_instance_matches_the_protocol_sizes_and_the_test_vector(shared_cache: Path) -> None:
    started = time.perf_counter()
    ds = tgbhub.load_dataset(FULL_N8, cache_dir=shared_cache, offline=True)
    assert ds.states.shape == (100, 10_000, 16)
    assert hashlib.sha256(np.ascontiguousarray(ds.states[0]).tobytes()).hexdigest() == (
        "e1420aa02ca45b457ce898ae941712647ed74fe266c4cd8d14e81a87c1ad6605")
    sizes = {split: len(ds.windows(split)) for split in ("train", "val", "test")}
    assert sizes == {"train": 58_329, "val": 99_941, "test": 199_941}        # upstream's window counts
    assert 0.004 < ds.windows("test").straddling / sizes["test"] < 0.007      # "about 0.56 %"
    assert time.perf_counter() - started < 120
    again = tgbhub.load_dataset(FULL_N8, cache_dir=shared_cache, offline=True)
    assert again.source == "cache"


def test_missing_h5py_names_the_extra(mini, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = type(mini)(mini.manifest, mini.path, "cache")
    monkeypatch.setitem(sys.modules, "h5py", None)
    with pytest.raises(MissingExtraError, match=r"pip install -e '\.\[hdf5\]'"):
        fresh.states


def test_a_rewritten_file_with_the_same_values_passes_on_its_digest_and_still_maps(tmp_path: Path) -> None:
    manifest = api.resolve(MINI)
    build_recipe(manifest.recipe, tmp_path)
    original = tmp_path / TRAJECTORIES_FILE
    other = tmp_path / "contiguous.h5"
    with h5py.File(original) as source, h5py.File(other, "w") as target:   # another layout: same values, new bytes
        for name in source:
            target.create_dataset(name, data=source[name][()])
    entry = manifest.file(TRAJECTORIES_FILE)
    with pytest.raises(IntegrityError):
        cache.verify_file(entry, other, rebuilt=False)              # a download must match the sha256
    assert cache.verify_file(entry, other, rebuilt=True)[0] == "digest"
    ds = tgbhub.data.TrajectoryDataset(manifest, other, "test")
    assert isinstance(ds.states, np.memmap) and np.array_equal(ds.states, h5py.File(original)["state"][()])


class _Perturbed(BuildSource):
    """A local build whose values differ (as on a machine with another libm)."""

    def fetch(self, manifest, staging):
        fetched = super().fetch(manifest, staging)
        with h5py.File(fetched.files[TRAJECTORIES_FILE], "r+") as handle:
            handle["state"][0, 100, 0] = np.nextafter(handle["state"][0, 100, 0], 10.0)
        return fetched


class _Mirror:
    """A second source serving the published bytes."""

    name = label = "mirror"
    needs_network = False

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def can_serve(self, manifest) -> bool:
        return True

    def fetch(self, manifest, staging):
        shutil.copy(self.folder / TRAJECTORIES_FILE, staging / TRAJECTORIES_FILE)
        return Fetched(files={TRAJECTORIES_FILE: staging / TRAJECTORIES_FILE})


def test_a_rebuild_with_other_values_is_refused_plainly_and_the_next_source_serves(tmp_path: Path) -> None:
    manifest = api.resolve(MINI)
    with pytest.raises(SourceUnavailableError, match="holds different values") as refused, \
            pytest.warns(UserWarning, match="build failed"):
        api.ensure_cached(manifest, tmp_path / "cache", [_Perturbed()])
    assert "digest" in str(refused.value)
    assert cache.lookup(manifest, tmp_path / "cache") is None
    published = tmp_path / "published"
    published.mkdir()
    build_recipe(manifest.recipe, published)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        entry, served_by = api.ensure_cached(manifest, tmp_path / "cache", [_Perturbed(), _Mirror(published)])
    assert served_by == "mirror" and any("holds different values" in str(w.message) for w in caught)
    assert cache.lookup(manifest, tmp_path / "cache") is not None and entry.files[TRAJECTORIES_FILE].exists()


def test_a_damaged_cached_file_is_rebuilt_and_a_touched_one_kept(tmp_path: Path) -> None:
    ds = tgbhub.load_dataset(MINI, cache_dir=tmp_path, offline=True)
    path = ds.path
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))         # touched, same bytes
    assert tgbhub.load_dataset(MINI, cache_dir=tmp_path, offline=True).source == "cache"
    with open(path, "r+b") as handle:                                       # damaged
        handle.seek(stat.st_size // 2)
        handle.write(b"\x00\x01\x02\x03")
    again = tgbhub.load_dataset(MINI, cache_dir=tmp_path, offline=True)
    assert again.source == "build"
    published = again.manifest.raw["digest"][0]["state_per_ic"]
    assert [hashlib.sha256(np.ascontiguousarray(s).tobytes()).hexdigest() for s in again.states] == list(published)


def test_to_torch_gives_every_split_and_the_graph_on_one_device(mini, monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    tensors = mini.to_torch("cpu")
    assert set(tensors) == {*mini.manifest.splits, "edge_index"}
    for split in mini.manifest.splits:
        assert tensors[split].dtype == torch.float32 and tensors[split].device.type == "cpu"
        assert np.array_equal(tensors[split].numpy(), mini.trajectories(split))
    assert np.array_equal(tensors["edge_index"].numpy(), mini.edge_index())
    raw = mini.to_torch("cpu", normalised=False, dtype=np.float64)["train"]
    assert raw.dtype == torch.float64 and np.array_equal(raw.numpy(), mini.trajectories("train", normalised=False))
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(tgbhub.errors.MissingExtraError, match=r"pip install -e '\.\[torch\]'"):
        mini.to_torch()
