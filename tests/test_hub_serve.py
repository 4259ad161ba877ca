"""The local Hub (`tgbhub hub serve`): real Hugging Face clients against olah plus the LFS front, on 127.0.0.1."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

import tgbhub
from tgbhub.errors import HubServerError
from tgbhub.hub.serve import LocalHub, default_state_dir, start_local_hub
from tgbhub.registry import Registry

ROOT = Path(__file__).resolve().parent.parent


def _get(url: str, headers: dict[str, str] | None = None, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers or {}, method=method)
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, dict(response.headers), response.read()


def test_versions_are_tags_seen_by_huggingface_hub(local_hub: LocalHub) -> None:
    from huggingface_hub import HfApi

    api = HfApi(endpoint=local_hub.url)
    refs = api.list_repo_refs("tgbhub/t-grab", repo_type="dataset")
    assert {"v1.0.0", "v1.1.0", "ce-4-v1.0.0", "pdet-2-1-v1.0.0", "pdet-2-1-v1.1.0"} <= {tag.name for tag in refs.tags}
    versions = {}
    for tag in ("pdet-2-1-v1.0.0", "pdet-2-1-v1.1.0"):
        path = api.hf_hub_download("tgbhub/t-grab", "pdet-2-1/croissant.json", repo_type="dataset", revision=tag)
        versions[tag] = json.loads(Path(path).read_text())["version"]
    assert versions == {"pdet-2-1-v1.0.0": "1.0.0", "pdet-2-1-v1.1.0": "1.1.0"}


def test_lfs_files_come_from_the_front_with_hub_headers_and_ranges(local_hub: LocalHub,
                                                                   hub_registry: Registry) -> None:
    expected = hub_registry.resolve(tgbhub.registry.parse_reference("t-grab/ce-4@1.0.0")).file("edges.parquet")
    url = f"{local_hub.url}/datasets/tgbhub/t-grab/resolve/v1.0.0/ce-4/edges.parquet"
    status, headers, body = _get(url)
    assert status == 200 and hashlib.sha256(body).hexdigest() == expected.sha256
    assert headers["ETag"] == f'"{expected.sha256}"' and re.fullmatch(r"[0-9a-f]{40}", headers["X-Repo-Commit"])
    status, headers, part = _get(url, {"Range": "bytes=4-23"})
    assert (status, part, headers["Content-Range"]) == (206, body[4:24], f"bytes 4-23/{len(body)}")
    status, _, tail = _get(url, {"Range": "bytes=-10"})
    assert (status, tail) == (206, body[-10:])


def test_small_files_are_relayed_to_olah(local_hub: LocalHub, hub_registry: Registry) -> None:
    url = f"{local_hub.url}/datasets/tgbhub/t-grab/resolve/v1.0.0/ce-4/croissant.json"
    status, _, body = _get(url)
    assert status == 200 and body == hub_registry.path("t-grab/ce-4", "1.0.0").read_bytes()
    status, headers, _ = _get(url, method="HEAD")
    assert status == 200 and int(headers["Content-Length"]) == len(body)
    assert re.fullmatch(r"[0-9a-f]{40}", {k.lower(): v for k, v in headers.items()}["x-repo-commit"])


@pytest.mark.parametrize("revision", ["v1.0.0", "main"])
def test_missing_file_is_404_entry_not_found_for_head_and_get(local_hub: LocalHub, hub_registry: Registry,
                                                               tmp_path: Path, revision: str) -> None:
    """olah alone answers GET with 500 and HEAD with 401 "Repository not found"; the real Hub says 404 to both."""
    import requests
    from huggingface_hub import HfApi, hf_hub_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        RemoteEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    def download(repo: str, path: str, rev: str = revision) -> str:
        return hf_hub_download(repo, path, repo_type="dataset", revision=rev, endpoint=local_hub.url,
                               cache_dir=tmp_path / "hf")

    with pytest.raises(RemoteEntryNotFoundError) as missing_file:
        download("tgbhub/t-grab", "ce-4/no-such-file.json")
    assert isinstance(missing_file.value, EntryNotFoundError) and missing_file.value.response.status_code == 404
    with pytest.raises(RepositoryNotFoundError):
        download("tgbhub/no-such-family", "ce-4/croissant.json")
    with pytest.raises(RevisionNotFoundError):
        download("tgbhub/t-grab", "ce-4/croissant.json", rev="v9.9.9")
    # present files still download, small (olah) and LFS (the front) alike
    expected = hub_registry.resolve(tgbhub.registry.parse_reference("t-grab/ce-4@1.0.0"))
    assert Path(download("tgbhub/t-grab", "ce-4/croissant.json")).read_bytes() == \
        hub_registry.path("t-grab/ce-4", "1.0.0").read_bytes()
    parquet = Path(download("tgbhub/t-grab", "ce-4/edges.parquet"))
    assert hashlib.sha256(parquet.read_bytes()).hexdigest() == expected.file("edges.parquet").sha256

    url = f"{local_hub.url}/datasets/tgbhub/t-grab/resolve/{revision}/ce-4/no-such-file.json"
    got, head = requests.get(url, timeout=30), requests.head(url, timeout=30)
    commit = HfApi(endpoint=local_hub.url).dataset_info("tgbhub/t-grab", revision=revision).sha
    for answer in (got, head):
        assert answer.status_code == 404, (answer.request.method, answer.status_code, answer.text)
        assert answer.headers["X-Error-Code"] == "EntryNotFound" and answer.headers["X-Repo-Commit"] == commit
    assert got.json() == {"error": "Entry not found"} and head.content == b""
    # the revision echoed in the error header cannot split the response
    crlf = requests.get(f"{local_hub.url}/datasets/tgbhub/t-grab/resolve/v9%0D%0AX-Injected:%201/ce-4/a.json",
                        timeout=30)
    assert crlf.status_code == 404 and "X-Injected" not in crlf.headers
    # a folder is no downloadable entry either
    assert requests.head(f"{local_hub.url}/datasets/tgbhub/t-grab/resolve/{revision}/ce-4", timeout=30)\
        .status_code == 404


def test_datasets_library_reads_the_published_rows(local_hub: LocalHub, tmp_path: Path) -> None:
    # datasets reads HF_ENDPOINT at import time, so it runs in a fresh process
    script = ("import datasets, json\n"
              "dd = datasets.load_dataset('tgbhub/t-grab', 'ce-4', revision='ce-4-v1.0.0')\n"
              "rows = {s: dd[s].with_format('numpy')[:] for s in dd}\n"
              "print(json.dumps({s: [r[c].tolist() for c in ('t', 'src', 'dst')] for s, r in rows.items()}))")
    env = {**os.environ, "HF_ENDPOINT": local_hub.url, "HF_HOME": str(tmp_path / "hf"),
           "HF_HUB_DISABLE_TELEMETRY": "1"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    splits = json.loads(done.stdout.strip().splitlines()[-1])
    built = tgbhub.load_dataset("t-grab/ce-4@1.0.0", cache_dir=tmp_path / "c", sources="build")
    assert list(splits) == list(built.splits)
    for name, (t, src, dst) in splits.items():
        part = built.split(name)
        np.testing.assert_array_equal(np.asarray(t), part.t)
        np.testing.assert_array_equal(np.asarray(src), part.src)
        np.testing.assert_array_equal(np.asarray(dst), part.dst)


def test_datasets_library_reads_trajectory_views(tmp_path: Path) -> None:
    """ChaosNet repos carry the per-split views their card promises: one row per (trajectory, step), exact states."""
    from tgbhub.publish import parse_target, publish

    name = "chaosnet/mini-k0.5-rho0.1-n8"
    publish("chaosnet", "1.1.0", parse_target(f"git:{tmp_path / 'hub'}"), datasets=[name],
            cache_dir=tmp_path / "c")
    script = ("import datasets, json, sys\n"
              "dd = datasets.load_dataset('tgbhub/chaosnet', sys.argv[1], revision=sys.argv[1] + '-v1.1.0')\n"
              # arrow, not numpy: datasets' numpy formatting turns a list of float64 into float32
              "out = {s: dd[s].with_format('arrow')[:] for s in dd}\n"
              "print(json.dumps({s: [r.column(c).to_pylist() for c in ('trajectory', 'step', 'state')] "
              "for s, r in out.items()}))")
    with start_local_hub(tmp_path / "hub") as hub:
        env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_DISABLE_TELEMETRY": "1"}
        done = subprocess.run([sys.executable, "-c", script, name.split("/")[1]], capture_output=True, text=True,
                              env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    splits = json.loads(done.stdout.strip().splitlines()[-1])
    ds = tgbhub.load_dataset(name, cache_dir=tmp_path / "c", offline=True)
    assert list(splits) == list(ds.splits)
    for split, (trajectory, step, state) in splits.items():
        lo, hi = ds.ic_splits[split]
        expected = np.asarray(ds.states[lo:hi])
        assert trajectory == np.repeat(np.arange(lo, hi), ds.num_steps).tolist()
        assert step == np.tile(np.arange(ds.num_steps), hi - lo).tolist()
        np.testing.assert_array_equal(np.asarray(state), expected.reshape(-1, ds.num_nodes))  # bit for bit


_LFS_PATH = "/datasets/tgbhub/t-grab/resolve/v1.0.0/ce-4/edges.parquet"


@pytest.fixture(scope="module")
def tight_hub(hub_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalHub]:
    """A hub whose limits a test can reach in seconds: 16 connections, 4 workers, 1.5 s to send a request head,
    1 s idle between requests, 64 KiB request bodies."""
    with start_local_hub(hub_root, state_dir=tmp_path_factory.mktemp("tight-state"), header_timeout=1.5,
                         idle_timeout=1.0, max_connections=16, workers=4, max_body_bytes=64 * 1024) as hub:
        yield hub


def _address(hub: LocalHub) -> tuple[str, int]:
    host, port = hub.url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def _answer(sock: socket.socket, timeout: float = 5.0) -> tuple[int, dict[str, str], bytes]:
    """Read one response from ``sock`` (status, headers, body)."""
    sock.settimeout(timeout)
    response = http.client.HTTPResponse(sock)
    response.begin()
    return response.status, dict(response.getheaders()), response.read()


def _wait_for(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the condition did not come true in time"
        time.sleep(0.01)


def _has_data(sock: socket.socket) -> bool:
    try:
        return bool(sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
    except BlockingIOError:
        return False


def test_held_connections_hold_no_thread_and_over_the_cap_get_a_quick_503(tight_hub: LocalHub) -> None:
    """Slow clients that never finish a request head cost a socket each, not a thread; an honest client is served
    among them; past the cap (16) new connections get 503 with Retry-After at once; after the header time-out
    (1.5 s) the held ones get 408 and the hub serves again."""
    threads = threading.active_count()
    partial = b"GET /api/datasets/tgbhub/t-grab/refs HTTP/1.1\r\nHost: x\r\n"  # and never the blank line
    held: list[socket.socket] = []
    try:
        for _ in range(12):
            held.append(socket.create_connection(_address(tight_hub)))
            held[-1].sendall(partial)
        status, _, body = _get(tight_hub.url + _LFS_PATH)  # 12 held, cap 16: served, while they wait
        assert status == 200 and len(body) > 0
        _wait_for(lambda: tight_hub.front.open_connections == 12)  # the honest client's closed connection is gone
        for _ in range(48):  # 60 held in all: 4 reach the cap, 44 are refused
            held.append(socket.create_connection(_address(tight_hub)))
            held[-1].sendall(partial)
        started = time.monotonic()
        with pytest.raises(urllib.error.HTTPError) as refused:
            _get(tight_hub.url + _LFS_PATH)
        assert refused.value.code == 503 and refused.value.headers["Retry-After"] == "1"
        assert time.monotonic() - started < 0.5
        assert threading.active_count() <= threads + 4, "a held connection must not cost a thread (4 workers)"
        time.sleep(0.2)
        answered = [sock for sock in held if _has_data(sock)]
        assert len(answered) == 44 and all(_answer(sock)[0] == 503 for sock in answered)
        # the 16 admitted get 408 once their 1.5 s are up; closing them frees the cap at once
        waiting = [sock for sock in held if sock not in answered]
        assert [_answer(sock)[0] for sock in waiting] == [408] * 16
        assert time.monotonic() - started < 2.5
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.1)
    assert _get(tight_hub.url + _LFS_PATH)[0] == 200
    assert threading.active_count() <= threads + 4


def test_idle_and_silent_connections_are_closed_after_their_time_outs(tight_hub: LocalHub) -> None:
    """A kept-alive connection idle for 1 s (idle_timeout) is closed; so is one that never sends a byte, after
    1.5 s (header_timeout), with no answer."""
    kept = http.client.HTTPConnection(*_address(tight_hub), timeout=5)
    kept.request("HEAD", _LFS_PATH)
    assert kept.getresponse().status == 200
    silent = socket.create_connection(_address(tight_hub))
    started = time.monotonic()
    closed_after = {}
    try:
        for name, sock in (("idle", kept.sock), ("silent", silent)):
            sock.settimeout(5)
            assert sock.recv(1) == b"", name  # the server closed it
            closed_after[name] = time.monotonic() - started
    finally:
        kept.close()
        silent.close()
    assert 0.8 <= closed_after["idle"] <= 2.0 and 1.3 <= closed_after["silent"] <= 2.5, closed_after


def test_a_body_over_the_limit_is_refused_with_413_unread(tight_hub: LocalHub) -> None:
    """A declared 300 MB body is refused before one byte of it is sent (so unread), with Expect: 100-continue too;
    a chunked body is cut off at the limit; a client that sends the whole body anyway still reads the 413; bodies
    under the limit are relayed to olah, chunked or not."""
    import requests

    head = (b"POST /api/datasets/tgbhub/t-grab/paths-info/main HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\n")
    for extra in (b"", b"Expect: 100-continue\r\n"):
        with socket.create_connection(_address(tight_hub)) as sock:
            sock.sendall(head + extra + b"Content-Length: 300000000\r\n\r\n")
            status, headers, body = _answer(sock, timeout=2)
        assert (status, headers["Connection"]) == (413, "close"), extra
        assert b"300000000 bytes is over this hub's limit of 65536 bytes" in body
    with socket.create_connection(_address(tight_hub)) as sock:
        sock.sendall(head + b"Transfer-Encoding: chunked\r\n\r\n")
        for _ in range(7):  # 70 KiB in 10 KiB chunks
            sock.sendall(b"2800\r\n" + b"x" * 0x2800 + b"\r\n")
        status, _, body = _answer(sock, timeout=2)
    assert status == 413 and b"chunked request body is over this hub's limit" in body
    url = f"{tight_hub.url}/api/datasets/tgbhub/t-grab/paths-info/main"
    assert requests.post(url, data=b"x" * (8 << 20), timeout=30).status_code == 413
    for body_ in (b"paths=README.md", iter([b"paths=", b"README.md"])):  # the second is sent chunked
        answer = requests.post(url, data=body_, timeout=30,
                               headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert answer.status_code == 200 and [entry["path"] for entry in answer.json()] == ["README.md"]


def test_no_answer_names_olahs_address(local_hub: LocalHub) -> None:
    """olah builds absolute URLs from its own address (a 307 to the path without its trailing slash); the front
    rewrites them to the address the client used."""
    import requests

    olah_port = str(local_hub.front.upstream[1])
    moved = requests.get(f"{local_hub.url}/api/datasets/tgbhub/t-grab/", allow_redirects=False, timeout=30)
    assert moved.status_code == 307 and moved.headers["Location"] == f"{local_hub.url}/api/datasets/tgbhub/t-grab"
    port = _address(local_hub)[1]
    other = requests.get(f"{local_hub.url}/api/datasets/tgbhub/t-grab/", allow_redirects=False, timeout=30,
                         headers={"Host": f"localhost:{port}"})
    assert other.headers["Location"] == f"http://localhost:{port}/api/datasets/tgbhub/t-grab"
    for path in ("/api/datasets/tgbhub/t-grab/", "/api/datasets/tgbhub/t-grab/revision/main",
                 "/api/datasets/tgbhub/t-grab/refs", "/no/such/page"):
        answer = requests.get(local_hub.url + path, timeout=30)
        assert olah_port not in str(answer.headers) and olah_port not in answer.text, path
    followed = requests.get(f"{local_hub.url}/api/datasets/tgbhub/t-grab/", timeout=30)
    assert [answer.url for answer in (*followed.history, followed)] == [
        f"{local_hub.url}/api/datasets/tgbhub/t-grab/", f"{local_hub.url}/api/datasets/tgbhub/t-grab"]


@pytest.mark.parametrize(("limit", "message"), [
    ({"header_timeout": 0}, r"header_timeout must be a positive number of seconds, got 0; pass e\.g\. "
                            r"header_timeout=10 \(the default\)"),
    ({"idle_timeout": float("inf")}, r"idle_timeout must be a positive number of seconds, got inf"),
    ({"workers": 0}, r"workers must be a whole number of at least 1, got 0; pass e\.g\. workers=64"),
    ({"max_body_bytes": 1.5}, r"max_body_bytes must be a whole number of at least 1, got 1\.5"),
    ({"max_connections": 10**9}, r"max_connections=1000000000 needs \d+ file descriptors, and this process may "
                                 r"open \d+; pass max_connections=\d+ or less, or raise the limit first \(ulimit -n"),
])
def test_limits_that_cannot_work_are_refused(hub_root: Path, tmp_path: Path, limit: dict[str, float],
                                             message: str) -> None:
    with pytest.raises(HubServerError, match=message):
        start_local_hub(hub_root, state_dir=tmp_path / "state", **limit)  # type: ignore[arg-type]
    assert not (tmp_path / "state").exists()


def test_busy_port_is_a_clear_error(hub_root: Path, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(HubServerError, match=rf"cannot serve on 127\.0\.0\.1:{port}: .*--port 0"):
            start_local_hub(hub_root, port=port, state_dir=tmp_path / "state")


def test_missing_root_is_refused_and_left_alone(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-hub"
    with pytest.raises(HubServerError, match=rf"{re.escape(str(missing))} is not a hub root: it does not exist.*"
                                             rf"--hub git:{re.escape(str(missing))}"):
        start_local_hub(missing)
    assert not missing.exists()


@pytest.fixture
def _restore_sigterm() -> Iterator[None]:
    """`tgbhub hub serve` installs a SIGTERM handler; run in-process, the test process keeps its own."""
    previous = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, previous)


def _not_a_hub(kind: str, tmp_path: Path) -> tuple[Path, str]:
    """A path that is not a hub root, and the reason the refusal must give."""
    if kind == "missing":
        return tmp_path / "no-such-hub", "it does not exist"
    if kind == "file":
        (tmp_path / "hub.txt").write_text("not a hub\n")
        return tmp_path / "hub.txt", "it is a file, not a folder"
    if kind == "etc":
        return Path("/etc"), "it holds no git repo at datasets/ORG/NAME"
    folder = tmp_path / "empty"
    if kind == "no-repos":  # the layout's folders, but no git repo in them
        (folder / "datasets" / "tgbhub" / "t-grab").mkdir(parents=True)
    folder.mkdir(exist_ok=True)
    return folder, "it holds no git repo at datasets/ORG/NAME"


@pytest.mark.usefixtures("_restore_sigterm")
@pytest.mark.parametrize("kind", ["missing", "empty", "no-repos", "file", "etc"])
def test_cli_refuses_what_is_not_a_hub_root_in_one_line(kind: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from tgbhub.cli import main

    path, why = _not_a_hub(kind, tmp_path)

    def snapshot() -> object:  # all of a scratch folder; /etc only at its top, where .olah was once written
        if not path.exists():
            return None
        return sorted(os.listdir(path)) if kind == "etc" else _listing(path)

    before = snapshot()
    assert main(["hub", "serve", str(path), "--port", "0", "--state-dir", str(tmp_path / "state")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"tgbhub: error: {path} is not a hub root: {why}"), err
    assert "tgbhub publish FAMILY --version VERSION --hub git:" in err
    assert snapshot() == before
    assert not (tmp_path / "state").exists()


def test_a_folder_inside_a_hub_root_names_the_root(hub_root: Path, tmp_path: Path) -> None:
    inner = hub_root / "datasets"
    with pytest.raises(HubServerError, match=rf"{re.escape(str(inner))} is not a hub root: .*inside the hub root "
                                             rf"{re.escape(str(hub_root))}; serve that instead"):
        start_local_hub(inner, state_dir=tmp_path / "state")


def test_allow_empty_accepts_an_empty_folder_only(tmp_path: Path) -> None:
    """For a hub whose first repo is written while it serves (a Hub write API in front, as test_publish does)."""
    (tmp_path / "hub").mkdir()
    with start_local_hub(tmp_path / "hub", state_dir=tmp_path / "state", allow_empty=True) as hub:
        assert hub.root == (tmp_path / "hub").resolve()
    assert list((tmp_path / "hub").iterdir()) == []
    (tmp_path / "hub" / "notes.txt").write_text("a folder with something else in it is still no hub\n")
    with pytest.raises(HubServerError, match="is not a hub root: it holds no git repo"):
        start_local_hub(tmp_path / "hub", state_dir=tmp_path / "state", allow_empty=True)


def test_a_state_folder_inside_the_served_tree_is_refused(hub_root: Path) -> None:
    before = _listing(hub_root)
    with pytest.raises(HubServerError, match=r"inside the served hub root .* --state-dir DIR"):
        start_local_hub(hub_root, state_dir=hub_root / ".olah")
    assert _listing(hub_root) == before


def _listing(root: Path) -> dict[str, tuple[bool, int, int]]:
    """Every name under ``root`` (itself included) with (is a folder, size, mtime in ns), links not followed."""
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in [".", *dirs, *files]:
            path = Path(folder, name)
            info = path.lstat()
            found[str(path.relative_to(root))] = (path.is_dir() and not path.is_symlink(), info.st_size,
                                                  info.st_mtime_ns)
    return found


def _use_the_hub(url: str, hub_registry: Registry, cache: Path) -> None:
    """What clients do: list versions, download a small and an LFS file (checked), ask for a missing file."""
    from huggingface_hub import HfApi, hf_hub_download
    from huggingface_hub.errors import RemoteEntryNotFoundError

    assert "v1.0.0" in {tag.name for tag in HfApi(endpoint=url).list_repo_refs("tgbhub/t-grab",
                                                                                 repo_type="dataset").tags}
    expected = hub_registry.resolve(tgbhub.registry.parse_reference("t-grab/ce-4@1.0.0"))
    for name in ("croissant.json", "edges.parquet"):
        path = Path(hf_hub_download("tgbhub/t-grab", f"ce-4/{name}", repo_type="dataset", revision="ce-4-v1.0.0",
                                    endpoint=url, cache_dir=cache))
        if name != "croissant.json":
            assert hashlib.sha256(path.read_bytes()).hexdigest() == expected.file(name).sha256
    with pytest.raises(RemoteEntryNotFoundError):
        hf_hub_download("tgbhub/t-grab", "ce-4/missing.json", repo_type="dataset", revision="v1.0.0", endpoint=url,
                        cache_dir=cache)


def test_serving_writes_nothing_into_the_tree(hub_root: Path, hub_registry: Registry, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """olah's config and log go to the user's state folder, keyed by the root; the tree is left as it was."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))  # platformdirs' user state folder
    root = tmp_path / "hub"
    shutil.copytree(hub_root, root, symlinks=True)
    before = _listing(root)
    with start_local_hub(root) as hub:
        _use_the_hub(hub.url, hub_registry, tmp_path / "hf")
    assert _listing(root) == before
    assert hub.state_dir == default_state_dir(root.resolve())
    assert (tmp_path / "xdg-state") in hub.state_dir.parents and (hub.state_dir / "olah.log").is_file()
    assert not hub.config.exists()  # this session's config goes with it


def _read_only_mounts_work(scratch: Path) -> bool:
    """Whether this process may make a private mount namespace with a read-only bind mount (root, or a sandbox
    that allows unshare): the only way to make a tree unwritable for root, whom chmod does not stop."""
    if shutil.which("unshare") is None:
        return False
    scratch.mkdir()
    probe = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" && ! touch "$1/probe" 2>/dev/null'
    done = subprocess.run(["unshare", "--mount", "sh", "-c", probe, "sh", str(scratch)], capture_output=True,
                          timeout=30, check=False)
    return done.returncode == 0 and not (scratch / "probe").exists()


@pytest.mark.parametrize("how", ["chmod-0555", "read-only-mount"])
def test_a_read_only_hub_serves(how: str, hub_root: Path, hub_registry: Registry, tmp_path: Path) -> None:
    """chmod 0555 makes the tree unwritable for any user but root; a read-only bind mount, for root too."""
    root, state = tmp_path / "hub", tmp_path / "state"
    shutil.copytree(hub_root, root, symlinks=True)
    if how == "read-only-mount" and not _read_only_mounts_work(tmp_path / "probe"):
        pytest.skip("no private mount namespace here (unshare --mount is not allowed)")
    folders = [Path(folder) for folder, _, _ in os.walk(root)]
    for folder in folders:
        folder.chmod(0o555)
    try:
        before = _listing(root)
        if how == "chmod-0555":
            with start_local_hub(root, state_dir=state) as hub:
                _use_the_hub(hub.url, hub_registry, tmp_path / "hf")
        else:
            _serve_read_only_mount(root, state, hub_registry, tmp_path / "hf")
        assert _listing(root) == before
    finally:
        for folder in folders:
            folder.chmod(0o755)


def _serve_read_only_mount(root: Path, state: Path, hub_registry: Registry, cache: Path) -> None:
    """`tgbhub hub serve` in its own mount namespace, where ``root`` is mounted read-only (even for root)."""
    script = ('mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" && ! touch "$1/probe" 2>/dev/null && '
              'exec "$2" -m tgbhub.cli hub serve "$1" --port 0 --state-dir "$3"')
    process = subprocess.Popen(["unshare", "--mount", "sh", "-c", script, "sh", str(root), sys.executable,
                                str(state)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        first = process.stdout.readline()  # type: ignore[union-attr]
        url = re.search(r"at (http://127\.0\.0\.1:\d+)", first)
        assert url, first + process.stderr.read()  # type: ignore[union-attr]
        _use_the_hub(url.group(1), hub_registry, cache)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    assert process.returncode == 0, process.stderr.read()  # type: ignore[union-attr]


def test_cli_serve_starts_answers_and_stops(hub_root: Path) -> None:
    process = subprocess.Popen([sys.executable, "-m", "tgbhub.cli", "hub", "serve", str(hub_root), "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        first = process.stdout.readline()  # type: ignore[union-attr]
        url = re.search(r"at (http://127\.0\.0\.1:\d+)", first)
        assert url, first + process.stderr.read()  # type: ignore[union-attr]
        status, _, body = _get(f"{url.group(1)}/api/datasets/tgbhub/t-grab/refs")
        assert status == 200 and "v1.0.0" in body.decode()
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    assert process.returncode == 0


def test_the_site_is_served_under_its_prefix_beside_the_api(hub_root: Path, hub_registry: Registry,
                                                             tmp_path: Path) -> None:
    """`/` redirects to `/site/`; pages, their types and 404s come from the site folder; nothing outside it is
    reachable; the Hub API (refs, LFS and small downloads, its 404s) answers as before."""
    import requests

    from tgbhub.site import build_site

    site = build_site(tmp_path / "site", family="t-grab", cache_dir=tmp_path / "cache").out
    (tmp_path / "secret.txt").write_text("outside the site\n")
    (site / "datasets" / "leak.html").symlink_to(tmp_path / "secret.txt")
    with start_local_hub(hub_root, state_dir=tmp_path / "state", site=site) as hub:
        for path in ("/", "/index.html", "/site"):
            moved = requests.get(hub.url + path, allow_redirects=False, timeout=30)
            assert (moved.status_code, moved.headers["Location"]) == (302, "/site/"), path
        index = requests.get(hub.url + "/", timeout=30)
        assert index.url == hub.url + "/site/" and index.headers["Content-Type"] == "text/html; charset=utf-8"
        assert index.content == (site / "index.html").read_bytes()
        page = requests.get(f"{hub.url}/site/datasets/t-grab/ce-4.html?x=1", timeout=30)
        assert page.status_code == 200 and page.content == (site / "datasets/t-grab/ce-4.html").read_bytes()
        head = requests.head(f"{hub.url}/site/datasets/t-grab/ce-4.html", timeout=30)
        assert head.status_code == 200 and int(head.headers["Content-Length"]) == len(page.content)
        for missing in ("/site/datasets/t-grab/no-such.html", "/site/../secret.txt", "/site/%2e%2e/secret.txt",
                        "/site/datasets/leak.html", "/site/datasets", "/site//etc/passwd", "/site/%00.html"):
            # http.client sends the path as it is (requests would fold the dots away before sending)
            connection = http.client.HTTPConnection(hub.url.removeprefix("http://"), timeout=30)
            connection.request("GET", missing)
            answer = connection.getresponse()
            body = answer.read().decode()
            connection.close()
            assert answer.status == 404 and "Not found" in body, (missing, answer.status, body)
            assert "outside the site" not in body and answer.getheader("Content-Type").startswith("text/html")
        # the Hub API is untouched: its paths are never the site's
        refs = requests.get(f"{hub.url}/api/datasets/tgbhub/t-grab/refs", timeout=30)
        assert refs.status_code == 200 and "v1.0.0" in refs.text
        _use_the_hub(hub.url, hub_registry, tmp_path / "hf")
        gone = requests.get(f"{hub.url}/datasets/tgbhub/t-grab/resolve/v1.0.0/ce-4/missing.json", timeout=30)
        assert gone.status_code == 404 and gone.headers["X-Error-Code"] == "EntryNotFound"


def test_a_site_folder_without_index_is_refused(hub_root: Path, tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    with pytest.raises(HubServerError, match=r"is no built site: it holds no index\.html; build one with: tgbhub "
                                             r"site build"):
        start_local_hub(hub_root, state_dir=tmp_path / "state", site=tmp_path / "site")


def test_cli_serve_builds_the_site_with_the_hubs_leaderboards(hub_root: Path, tmp_path: Path) -> None:
    """Without --site the command builds the catalogue into its state folder at start, boards from
    ROOT/datasets/tgbhub/results; the built folder goes when the server stops."""
    import requests

    from tests.results_repos import commit_to_hub, graded_files

    root = tmp_path / "hub"
    shutil.copytree(hub_root, root, symlinks=True)
    files = graded_files("t-grab/pdet-2-1", "ranking", ("recency",), tmp_path / "work", tmp_path / "cache")
    commit_to_hub(root, files)
    state = tmp_path / "state"
    process = subprocess.Popen([sys.executable, "-m", "tgbhub.cli", "hub", "serve", str(root), "--port", "0",
                                "--state-dir", str(state)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=ROOT)
    try:
        first = process.stdout.readline()  # type: ignore[union-attr]
        url = re.search(r"at (http://127\.0\.0\.1:\d+)", first)
        assert url, first + process.stderr.read()  # type: ignore[union-attr]
        banner = "".join(process.stdout.readline() for _ in range(3))  # type: ignore[union-attr]
        assert f"the catalogue site: {url.group(1)}/" in banner
        board = requests.get(f"{url.group(1)}/site/leaderboards/t-grab/pdet-2-1/ranking.html", timeout=30)
        assert board.status_code == 200 and "recency" in board.text and "broken-model" in board.text
        record = next(path for path in files if path.startswith("records/"))
        assert requests.get(f"{url.group(1)}/site/{record}", timeout=30).content == files[record]
        assert [p.name for p in state.iterdir() if p.name.startswith("site-")]
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    assert process.returncode == 0
    assert not [p for p in state.iterdir() if p.name.startswith("site-")]


def test_missing_olah_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "olah" else real(name, *a))
    with pytest.raises(HubServerError, match=r"pip install -e '\.\[serve\]'"):
        start_local_hub(tmp_path)


@pytest.mark.slow
def test_whole_family_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's acceptance, end to end with the CLI: publish all of T-GRAB to git:, serve it, load every dataset
    from it (rows equal the local build), read every config with `datasets`, stop the server, load from the cache."""
    from tgbhub.cli import main

    root, cache = tmp_path / "hub", tmp_path / "cache"
    names = tgbhub.api.registry().names("t-grab", derived=False)  # the 52 base datasets (variants: test_tlpcf.py)
    assert main(["--cache-dir", str(tmp_path / "publish-cache"), "publish", "t-grab", "--version", "1.0.0",
                 "--hub", f"git:{root}", "--datasets", ",".join(names)]) == 0
    process = subprocess.Popen([sys.executable, "-m", "tgbhub.cli", "hub", "serve", str(root), "--port", "0"],
                               stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        url = re.search(r"at (http://127\.0\.0\.1:\d+)", process.stdout.readline()).group(1)  # type: ignore[union-attr]
        monkeypatch.setenv("TGBHUB_ENDPOINT", url)
        for name in names:
            ds = tgbhub.load_dataset(name, cache_dir=cache)
            built = tgbhub.load_dataset(name, cache_dir=tmp_path / "built", sources="build")
            assert ds.source == "hub", name
            for column in ("t", "src", "dst"):
                np.testing.assert_array_equal(getattr(ds, column), getattr(built, column), err_msg=name)
        script = ("import datasets, sys\n"
                  "for config in sys.argv[1:]:\n"
                  "    dd = datasets.load_dataset('tgbhub/t-grab', config, revision='v1.0.0')\n"
                  "    print(config, sum(len(dd[s]) for s in dd), flush=True)\n")
        env = {**os.environ, "HF_ENDPOINT": url, "HF_HOME": str(tmp_path / "hf")}
        done = subprocess.run([sys.executable, "-c", script, *(n.split("/")[1] for n in names)], env=env,
                              capture_output=True, text=True, timeout=1800)
        assert done.returncode == 0, done.stderr[-3000:]
        counts = dict(line.split() for line in done.stdout.split("\n") if line.strip())
        for name in names:
            built = tgbhub.load_dataset(name, cache_dir=tmp_path / "built", sources="build")
            assert int(counts[name.split("/")[1]]) == built.num_rows, name
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    assert {tgbhub.load_dataset(name, cache_dir=cache).source for name in names} == {"cache"}
