"""load_dataset and the temporal-graph dataset object, on tiny real data built by the real generators."""

from __future__ import annotations

import socket
import warnings
from pathlib import Path

import numpy as np
import pytest

import tgbhub
from tgbhub.errors import InvalidNameError


def test_dataset_surface(shared_cache: Path) -> None:
    ds = tgbhub.load_dataset("t-grab/ce-16", cache_dir=shared_cache)
    assert (ds.name, ds.version, ds.num_nodes, ds.num_snapshots) == ("t-grab/ce-16", "1.0.0", 101, 4016)
    assert ds.source in {"build", "cache"}
    assert ds.snapshot_splits == {"train": (0, 2813), "val": (2813, 3214), "test": (3214, 3615),
                                  "test_inductive": (3615, 4016)}
    assert ds.splits == {name: tuple(int(i) for i in np.searchsorted(ds.t, bounds))
                         for name, bounds in ds.snapshot_splits.items()}  # the same splits, in rows
    key = (ds.t.astype(np.int64) * 101 + ds.src) * 101 + ds.dst
    assert np.all(np.diff(key) > 0)
    test = ds.split("test")
    assert test.t.min() >= 3214 and test.t.max() < 3615 and test.num_snapshots == 401
    assert sum(len(ds.split(s).t) for s in ds.splits) == ds.num_rows
    assert ds.digest == ds.manifest.files[0].digest
    assert "ce-16" in repr(ds)


def test_snapshots_include_empty_ones(shared_cache: Path) -> None:
    ds = tgbhub.load_dataset("t-grab/ce-256", cache_dir=shared_cache)
    snaps = list(ds.snapshots())
    assert [t for t, _, _ in snaps] == list(range(4256))
    assert len(snaps[80][1]) == 0  # the empty cause-graph snapshot the original code dropped
    inductive = list(ds.snapshots("test_inductive"))
    assert len(inductive) == 425 and sum(1 for _, s, _ in inductive if len(s) == 0) == 25
    with pytest.raises(InvalidNameError, match="test_inductive"):
        ds.split("holdout")


def test_version_pinning_and_second_load_from_cache(cache_dir: Path) -> None:
    first = tgbhub.load_dataset("t-grab/lr-1-1@1.0.0", cache_dir=cache_dir)
    second = tgbhub.load_dataset("t-grab/lr-1-1", version="1.0.0", cache_dir=cache_dir)
    assert (first.source, second.source) == ("build", "cache")
    assert np.array_equal(first.dst, second.dst)


def test_cache_root_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TGBHUB_CACHE", str(tmp_path / "from-env"))
    tgbhub.load_dataset("t-grab/pdet-2-1")
    assert (tmp_path / "from-env" / "t-grab" / "pdet-2-1" / "1.0.0" / "COMPLETE").exists()


def test_offline_opens_no_socket(monkeypatch: pytest.MonkeyPatch, cache_dir: Path) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("offline mode opened a socket")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setenv("TGBHUB_OFFLINE", "1")
    assert tgbhub.load_dataset("t-grab/pdet-4-1", cache_dir=cache_dir).source == "build"
    assert tgbhub.load_dataset("t-grab/pdet-4-1", cache_dir=cache_dir, offline=True).source == "cache"


def test_bad_offline_value_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TGBHUB_OFFLINE", "maybe")
    with pytest.raises(InvalidNameError, match="TGBHUB_OFFLINE='maybe'"):
        tgbhub.load_dataset("t-grab/pdet-2-1")


def test_malformed_name_fails_before_any_path_is_built(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        tgbhub.load_dataset("../../etc", cache_dir=tmp_path / "never")
    assert not (tmp_path / "never").exists()


def test_to_torch_on_cpu(shared_cache: Path) -> None:
    torch = pytest.importorskip("torch")
    ds = tgbhub.load_dataset("t-grab/ce-16", cache_dir=shared_cache)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch warns about the read-only memory maps unless they are copied
        tensors = ds.to_torch("cpu")
    assert tensors["src"].dtype == torch.int64 and tensors["src"].device.type == "cpu"
    assert torch.equal(tensors["t"], torch.from_numpy(np.array(ds.t, dtype=np.int64)))
    default = ds.to_torch()
    assert default["dst"].device.type == ("cuda" if torch.cuda.is_available() else "cpu")


def _small_tgb_import(root: Path) -> str:
    """A small tgbl-wiki release in py-tgb's formats, imported into the cache at ``root``; its full name."""
    from tests import tgb_formats as formats
    from tgbhub.local.imports import import_tgb

    files = formats.write_tgbl(root / "release", "tgbl-wiki", n_edges=400, seed=0)
    data = formats.load_with_pytgb(files).full_data
    stats = {"num_nodes": len(np.union1d(data["sources"], data["destinations"])), "num_edges": len(data["sources"]),
             "edge_feat_dim": int(data["edge_feat"].shape[1])}
    import_tgb("tgbl-wiki", formats.zip_dataset(files, root / "zips"), cache_dir=root / "cache", expected_stats=stats)
    return "tgb/tgbl-wiki"


def test_list_info_and_the_dataset_agree_on_sizes_for_every_family(tmp_path: Path) -> None:
    """One definition per kind (api.dataset_summary): ``tgbhub list`` (catalogue_rows), ``tgbhub info`` (describe)
    and the loaded dataset give the same nodes, rows, snapshots and splits, on one dataset of every family built
    here."""
    from tgbhub import api

    cache = tmp_path / "cache"
    names = ["t-grab/ce-4", "t-grab/ce-4~shuffle-s0", "chaosnet/mini-k2.0-rho0.3-n8", _small_tgb_import(tmp_path)]
    for name in names:
        ds = tgbhub.load_dataset(name, cache_dir=cache, offline=True)
        family = name.split("/")[0]
        row = {r["name"]: r for r in api.catalogue_rows(family, cache_dir=cache)}[name]
        info = api.describe(name, cache_dir=cache)
        card = ds.card()
        trajectories = isinstance(ds, tgbhub.data.TrajectoryDataset)
        snapshots = ds.num_steps if trajectories else ds.num_snapshots
        for source in (row, info):
            assert (source["num_nodes"], source["num_rows"], source["num_snapshots"]) == (
                ds.num_nodes, ds.num_rows, snapshots), (name, source)
        assert (card["num_nodes"], card["num_rows"]) == (ds.num_nodes, ds.num_rows)
        assert info["splits"] == card["splits"] == {k: list(v) for k, v in ds.splits.items()}  # rows, everywhere
        by_unit = ("ic_splits", ds.ic_splits) if trajectories else ("snapshot_splits", ds.snapshot_splits)
        assert info.get(by_unit[0]) == (None if by_unit[1] is None else {k: list(v) for k, v in by_unit[1].items()})
        if trajectories:  # a node is a state variable (q_i or p_i); a site carries two of them
            assert row["num_sites"] == info["num_sites"] == card["num_sites"] == ds.num_sites == ds.num_nodes // 2
        else:  # a node is an id of the node-id space
            assert int(max(ds.src.max(), ds.dst.max())) < ds.num_nodes
    tgb = {r["name"]: r for r in api.catalogue_rows("tgb", cache_dir=cache)}
    assert tgb["tgb/tgbl-wiki"]["status"] == "imported" and tgb["tgb/tgbl-wiki"]["published_num_nodes"] == 9227
    assert tgb["tgb/tgbl-review"]["num_nodes"] is None  # counted once imported, never TGB's count in its place
