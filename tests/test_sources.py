"""Hub and mirror sources through ``load_dataset``, against real servers on 127.0.0.1 (fixtures in conftest)."""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import tgbhub
from tests.servers import MirrorServer, serving
from tgbhub.errors import DiskFullError, InvalidNameError, SourceUnavailableError, SourceWarning
from tgbhub.hub.serve import LocalHub, start_local_hub
from tgbhub.publish import parse_target, publish
from tgbhub.registry import Registry

ROOT = Path(__file__).resolve().parent.parent


def _rows(ds: tgbhub.api.TemporalGraphDataset) -> tuple[np.ndarray, ...]:
    return np.asarray(ds.t), np.asarray(ds.src), np.asarray(ds.dst)


def _assert_same_rows(ds: object, name: str, tmp_path: Path) -> None:
    built = tgbhub.load_dataset(name, cache_dir=tmp_path / "built", sources="build")
    assert built.source == "build"
    for ours, reference in zip(_rows(ds), _rows(built), strict=True):
        np.testing.assert_array_equal(ours, reference)


def test_hub_serves_newest_and_pinned_versions(use_registry: Registry, local_hub: LocalHub, tmp_path: Path) -> None:
    newest = tgbhub.load_dataset("t-grab/pdet-2-1", cache_dir=tmp_path / "c", hub_endpoint=local_hub.url)
    pinned = tgbhub.load_dataset("t-grab/pdet-2-1@1.0.0", cache_dir=tmp_path / "c", hub_endpoint=local_hub.url)
    assert (newest.source, newest.version, pinned.source, pinned.version) == ("hub", "1.1.0", "hub", "1.0.0")
    assert newest.digest != pinned.digest  # two different published versions, each verified against its manifest
    _assert_same_rows(newest, "t-grab/pdet-2-1@1.1.0", tmp_path)
    _assert_same_rows(pinned, "t-grab/pdet-2-1@1.0.0", tmp_path)
    again = tgbhub.load_dataset("t-grab/pdet-2-1", cache_dir=tmp_path / "c", hub_endpoint=local_hub.url)
    assert again.source == "cache"


def test_endpoint_from_environment(use_registry: Registry, local_hub: LocalHub, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TGBHUB_ENDPOINT", local_hub.url)
    assert tgbhub.load_dataset("t-grab/ce-4", cache_dir=tmp_path).source == "hub"


def test_warm_cache_offline_opens_no_socket(use_registry: Registry, local_hub: LocalHub, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    tgbhub.load_dataset("t-grab/pdet-4-1", cache_dir=tmp_path, hub_endpoint=local_hub.url)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("offline mode opened a socket")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    ds = tgbhub.load_dataset("t-grab/pdet-4-1", cache_dir=tmp_path, hub_endpoint=local_hub.url, offline=True)
    assert ds.source == "cache"


def test_cold_cache_offline_builds_locally(use_registry: Registry, local_hub: LocalHub, tmp_path: Path) -> None:
    ds = tgbhub.load_dataset("t-grab/pdet-4-1", cache_dir=tmp_path, hub_endpoint=local_hub.url, offline=True)
    assert ds.source == "build"


def test_cold_cache_offline_without_a_recipe_is_a_clear_error(tmp_path: Path, hub_registry: Registry,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    manifests = tmp_path / "manifests" / "t-grab" / "pdet-4-1"
    manifests.mkdir(parents=True)
    document = json.loads(hub_registry.path("t-grab/pdet-4-1", "1.0.0").read_text())
    del document["recipe"]
    (manifests / "1.0.0.json").write_text(json.dumps(document))
    monkeypatch.setattr(tgbhub.api, "_REGISTRY", Registry(tmp_path / "manifests"))
    with pytest.raises(SourceUnavailableError, match="t-grab/pdet-4-1@1.0.0.*build: cannot serve") as caught:
        tgbhub.load_dataset("t-grab/pdet-4-1", cache_dir=tmp_path / "c", hub_endpoint="http://127.0.0.1:9",
                            offline=True)
    assert "offline" in str(caught.value)


def test_hub_stopped_mid_session_falls_back(use_registry: Registry, hub_root: Path, tmp_path: Path) -> None:
    hub = start_local_hub(hub_root)
    try:
        first = tgbhub.load_dataset("t-grab/pdet-4-1", cache_dir=tmp_path, hub_endpoint=hub.url)
    finally:
        hub.stop()
    started = time.perf_counter()
    with pytest.warns(SourceWarning, match=r"hub http://127\.0\.0\.1:\d+ failed"):
        second = tgbhub.load_dataset("t-grab/ce-4", cache_dir=tmp_path, hub_endpoint=hub.url)
    elapsed = time.perf_counter() - started
    again = tgbhub.load_dataset("t-grab/pdet-4-1", cache_dir=tmp_path, hub_endpoint=hub.url)
    assert (first.source, second.source, again.source) == ("hub", "build", "cache")
    assert elapsed < 10, f"falling back from a stopped hub took {elapsed:.1f} s"


def test_dataset_missing_from_the_hub_falls_back_with_a_named_reason(local_hub: LocalHub, tmp_path: Path) -> None:
    with pytest.warns(SourceWarning, match=r"tgbhub/t-grab/pdet-8-1/edges\.parquet at tag pdet-8-1-v1\.0\.0 or "
                                           r"v1\.0\.0") as caught:
        ds = tgbhub.load_dataset("t-grab/pdet-8-1", cache_dir=tmp_path, hub_endpoint=local_hub.url)
    assert ds.source == "build"
    # the advice is a command that works on a hub whose v1.0.0 already exists: it adds just this dataset
    advice = next(str(w.message) for w in caught if "pdet-8-1" in str(w.message))
    assert "`tgbhub publish t-grab --version 1.0.0 --datasets t-grab/pdet-8-1 --hub hf --endpoint" in advice


def test_advised_publish_adds_the_missing_dataset(hub_registry: Registry, use_registry: Registry,
                                                  tmp_path: Path) -> None:
    root = tmp_path / "hub"
    publish("t-grab", "1.0.0", parse_target(f"git:{root}"), datasets=["pdet-2-1", "ce-4"],
            cache_dir=tmp_path / "c", registry=hub_registry)
    with start_local_hub(root) as hub:
        with pytest.warns(SourceWarning, match="--datasets t-grab/pdet-4-1"):
            assert tgbhub.load_dataset("t-grab/pdet-4-1", cache_dir=tmp_path / "a", hub_endpoint=hub.url,
                                       sources="hub,build").source == "build"
        # what the warning advises, with the git: target this hub serves
        publish("t-grab", "1.0.0", parse_target(f"git:{root}"), datasets=["pdet-4-1"], cache_dir=tmp_path / "c",
                registry=hub_registry)
        ds = tgbhub.load_dataset("t-grab/pdet-4-1", cache_dir=tmp_path / "b", hub_endpoint=hub.url)
    assert ds.source == "hub"
    _assert_same_rows(ds, "t-grab/pdet-4-1", tmp_path)


def test_hub_with_only_family_tags_still_serves(hub_registry: Registry, use_registry: Registry,
                                                tmp_path: Path) -> None:
    """Hubs published before dataset tags existed carry only v<version>: the client falls back to it."""
    root = tmp_path / "hub"
    publish("t-grab", "1.0.0", parse_target(f"git:{root}"), datasets=["ce-4"], cache_dir=tmp_path / "c",
            registry=hub_registry)
    subprocess.run(["git", "-C", str(root / "datasets" / "tgbhub" / "t-grab"), "tag", "-d", "ce-4-v1.0.0"],
                   check=True, capture_output=True)
    with start_local_hub(root) as hub, warnings.catch_warnings():
        warnings.simplefilter("error", SourceWarning)
        ds = tgbhub.load_dataset("t-grab/ce-4", cache_dir=tmp_path / "load", hub_endpoint=hub.url)
    assert ds.source == "hub"
    _assert_same_rows(ds, "t-grab/ce-4", tmp_path)


def test_source_order_is_configurable(use_registry: Registry, local_hub: LocalHub, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TGBHUB_SOURCES", "build,hub")
    assert tgbhub.load_dataset("t-grab/ce-4", cache_dir=tmp_path, hub_endpoint=local_hub.url).source == "build"
    with pytest.raises(InvalidNameError, match="sources='hub,ftp'"):
        tgbhub.load_dataset("t-grab/ce-4", cache_dir=tmp_path, sources="hub,ftp")


# --- static mirrors ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def mirror_dir(tmp_path_factory: pytest.TempPathFactory, hub_registry: Registry) -> Path:
    folder = tmp_path_factory.mktemp("mirror")
    publish("t-grab", "1.0.0", parse_target(f"mirror:{folder}"), cache_dir=tmp_path_factory.mktemp("mirror-cache"),
            registry=hub_registry)
    return folder


def test_mirror_serves_verified_rows(use_registry: Registry, mirror_dir: Path, tmp_path: Path) -> None:
    with serving(MirrorServer(mirror_dir)) as server:
        ds = tgbhub.load_dataset("t-grab/ce-4", cache_dir=tmp_path, mirrors=[server.url])
    assert ds.source == "mirror"
    _assert_same_rows(ds, "t-grab/ce-4", tmp_path)


def test_corrupt_mirror_is_reported_skipped_and_installs_nothing(use_registry: Registry, mirror_dir: Path,
                                                                tmp_path: Path) -> None:
    manifest = tgbhub.resolve("t-grab/ce-4")
    expected = manifest.file("edges.parquet").sha256
    with serving(MirrorServer(mirror_dir)) as bad, serving(MirrorServer(mirror_dir)) as good:
        bad.corrupt.add("/t-grab/ce-4/1.0.0/edges.parquet")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            folder = tmp_path / "t-grab" / "ce-4" / "1.0.0"
            ds = tgbhub.load_dataset("t-grab/ce-4", cache_dir=tmp_path, mirrors=[bad.url, good.url])
    reports = [str(w.message) for w in caught if issubclass(w.category, SourceWarning)]
    assert len(reports) == 1 and f"mirror {bad.url}" in reports[0]
    assert "edges.parquet" in reports[0] and expected in reports[0]
    actual = reports[0].split("got ")[1][:64]
    assert len(actual) == 64 and actual != expected  # both hashes named
    assert ds.source == "mirror" and good.gets["/t-grab/ce-4/1.0.0/edges.parquet"] == 1
    installed = {p.name for p in folder.iterdir() if not p.name.endswith(".npy")}
    assert installed == {"COMPLETE", *(f.name for f in manifest.files)}


def test_corrupt_only_source_installs_nothing(use_registry: Registry, mirror_dir: Path, tmp_path: Path) -> None:
    with serving(MirrorServer(mirror_dir)) as bad:
        bad.corrupt.add("/t-grab/ce-4/1.0.0/edges.parquet")
        with pytest.warns(SourceWarning), pytest.raises(SourceUnavailableError, match="sha256"):
            tgbhub.load_dataset("t-grab/ce-4", cache_dir=tmp_path, mirrors=[bad.url], sources="mirror")
    assert not (tmp_path / "t-grab" / "ce-4" / "1.0.0").exists()


_LOADER = """
import sys, tgbhub, tgbhub.api
from tgbhub.registry import Registry
tgbhub.api._REGISTRY = Registry(sys.argv[1])
ds = tgbhub.load_dataset(sys.argv[2], cache_dir=sys.argv[3], mirrors=[sys.argv[4]], sources="mirror")
print(ds.source, flush=True)
"""


def _loader(registry: Registry, name: str, cache: Path, url: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", _LOADER, str(registry.root), name, str(cache), url],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_download_killed_mid_transfer_leaves_nothing_visible(use_registry: Registry, mirror_dir: Path,
                                                              tmp_path: Path) -> None:
    folder = tmp_path / "t-grab" / "ce-4"
    with serving(MirrorServer(mirror_dir)) as server:
        server.throttle = 0.05  # ~1.3 MB/s: the transfer is still running when it is killed
        process = _loader(use_registry, "t-grab/ce-4", tmp_path, server.url)
        deadline = time.monotonic() + 60
        while not list(folder.glob(".1.0.0.*.staging/edges.parquet")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(folder.glob(".1.0.0.*.staging/edges.parquet")), process.communicate()
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert not (folder / "1.0.0" / "edges.parquet").exists()
        assert not (folder / "1.0.0" / "COMPLETE").exists()
        server.throttle = 0.0
        ds = tgbhub.load_dataset("t-grab/ce-4", cache_dir=tmp_path, mirrors=[server.url])
    assert ds.source == "mirror"
    assert not list(folder.glob(".*.staging")), "the killed process's staging folder was not cleaned up"


def test_concurrent_processes_download_once(use_registry: Registry, mirror_dir: Path, tmp_path: Path) -> None:
    with serving(MirrorServer(mirror_dir)) as server:
        server.throttle = 0.005
        processes = [_loader(use_registry, "t-grab/ce-4", tmp_path, server.url) for _ in range(3)]
        outputs = [p.communicate(timeout=120) for p in processes]
    assert all(p.returncode == 0 for p in processes), outputs
    assert sorted(out.strip() for out, _ in outputs) == ["cache", "cache", "mirror"]
    assert server.gets["/t-grab/ce-4/1.0.0/edges.parquet"] == 1


def test_a_hub_that_does_not_answer_is_told_apart_from_one_that_lacks_the_dataset(tmp_path: Path) -> None:
    """A refused connection advises checking the endpoint, not publishing the dataset there."""
    with socket.socket() as closed:  # a port that was free a moment ago: nothing listens there
        closed.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{closed.getsockname()[1]}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SourceWarning)
        with pytest.raises(SourceUnavailableError) as failed:
            tgbhub.load_dataset("t-grab/pdet-2-1", cache_dir=tmp_path, hub_endpoint=endpoint, sources="hub")
    assert f"Nothing answered at {endpoint}" in str(failed.value) and "Publish this dataset" not in str(failed.value)


class _FillsUp:
    """A file whose disk fills up after ``room`` bytes: the write that does not fit raises ENOSPC, as a real one."""

    def __init__(self, path: Path, room: int) -> None:
        self.handle = open(path, "wb")  # noqa: SIM115 - closed by __exit__, as the real file would be
        self.room = room

    def write(self, block: bytes) -> int:
        if len(block) > self.room:
            self.handle.write(block[: self.room])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), self.handle.name)
        self.room -= len(block)
        return self.handle.write(block)

    def __enter__(self) -> _FillsUp:
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.close()


def _disk_fills_up(monkeypatch: pytest.MonkeyPatch, room: int) -> None:
    """Every download writes into a disk with ``room`` bytes left for each file (the lowest-level write of
    ``stream_to_file``)."""
    import tgbhub.sources.http as http

    monkeypatch.setattr(http, "open", lambda path, mode: _FillsUp(Path(path), room), raising=False)


@pytest.mark.parametrize("source", ["mirror", "hub"])
def test_a_full_disk_mid_download_is_the_disks_fault_not_the_sources(source: str, use_registry: Registry,
                                                                      mirror_dir: Path, local_hub: LocalHub,
                                                                      tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills up half way through a download: the error names the cache's disk (no other source is tried,
    no advice about the source or offline mode), and the staging folder with the half file is removed."""
    _disk_fills_up(monkeypatch, room=4096)
    with serving(MirrorServer(mirror_dir)) as server, warnings.catch_warnings():
        warnings.simplefilter("error", SourceWarning)  # a warning would mean the next source was tried
        options = {"mirrors": [server.url], "sources": "mirror,build"} if source == "mirror" else {
            "hub_endpoint": local_hub.url, "sources": "hub,build"}
        with pytest.raises(DiskFullError) as failed:
            tgbhub.load_dataset("t-grab/ce-4", cache_dir=tmp_path, **options)
    message = str(failed.value)
    assert "the disk is full" in message and "--cache-dir DIR or TGBHUB_CACHE" in message
    assert "Publish" not in message and "ffline" not in message and "mirror URL" not in message
    assert failed.value.declared == sum(f.size for f in tgbhub.resolve("t-grab/ce-4").files)
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and not p.name.endswith(".lock")]
