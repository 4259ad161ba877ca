"""``tgbhub hub serve ROOT``: a private Hugging Face-compatible Hub on this machine, over the git repos in ROOT.

Two parts, both bound to one address:

* **olah** (MIT, ``pip install tgbhub[serve]``) in offline mirror mode answers the Hub API: refs, trees, revision
  info, small files, everything ``huggingface_hub`` and ``datasets`` ask for.
* a **front** server in this process receives every request. It answers file downloads of LFS-stored files itself,
  straight from ``.git/lfs/objects`` with ``sendfile`` and ``Range`` support, the way the real Hub hands large files
  to its CDN; everything else it relays to olah. olah alone reads a whole blob into memory and sends it in 4 KiB
  chunks (tens of MB/s; see the README's Hub benchmark), which is what the front is for.
"""

from __future__ import annotations

import http.client
import importlib.util
import os
import re
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tgbhub.errors import HubServerError

_RESOLVE = re.compile(r"/(datasets|models|spaces)/([^/]+)/([^/]+)/resolve/([^/]+)/(.+)")
_POINTER = re.compile(rb"version https://git-lfs\.github\.com/spec/v1\noid sha256:([0-9a-f]{64})\nsize (\d+)\n")
# hop-by-hop headers, plus the ones the front writes itself
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection",
               "content-length", "host", "date", "server"}
_RELAY_TIMEOUT = 60.0


@dataclass
class LocalHub:
    """A running local Hub; ``url`` is what ``TGBHUB_ENDPOINT`` / ``HF_ENDPOINT`` should be set to."""

    root: Path
    url: str
    olah: subprocess.Popen[bytes]
    front: _FrontServer
    log: Path
    _thread: threading.Thread = field(repr=False)

    def stop(self) -> None:
        """Stop the front and olah (idempotent)."""
        self.front.shutdown()
        self.front.server_close()
        self.front.close_connections()
        if self.olah.poll() is None:
            self.olah.terminate()
            try:
                self.olah.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.olah.kill()
                self.olah.wait()

    def __enter__(self) -> LocalHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_local_hub(root: str | os.PathLike[str], port: int = 0, host: str = "127.0.0.1",
                    ready_timeout: float = 60.0) -> LocalHub:
    """Serve the repos under ``root`` (``root/datasets/<org>/<name>``, as ``tgbhub publish --to git:ROOT`` writes).

    ``port=0`` picks a free port. olah keeps its state and log in ``root/.olah``.

    Raises:
        HubServerError: if olah is not installed, ``root`` is not a folder of published repos, ``port`` cannot be
            bound (taken, or not allowed), or olah does not come up within ``ready_timeout`` seconds (with the tail
            of its log).
    """
    if importlib.util.find_spec("olah") is None:
        raise HubServerError("the local Hub needs olah, which is not installed; run: pip install 'tgbhub[serve]'")
    root = _checked_root(Path(root))
    olah_port = _free_port(host)
    try:
        front = _FrontServer((host, port), root, (host, olah_port))
    except OSError as exc:
        raise HubServerError(f"cannot serve on {host}:{port}: {exc.strerror or exc}. Choose another port "
                             "(--port 8091), or --port 0 to let the system pick a free one.") from exc
    url = f"http://{host}:{front.server_address[1]}"
    state = root / ".olah"
    config = _write_olah_config(state, root, host, olah_port, front.server_address[1])
    log = state / "olah.log"
    with open(log, "ab") as sink:
        process = subprocess.Popen([sys.executable, "-m", "olah.server", "-c", str(config), "--log-path",
                                    str(state / "logs")], stdout=sink, stderr=subprocess.STDOUT)
    thread = threading.Thread(target=front.serve_forever, name="tgbhub-hub-front", daemon=True)
    thread.start()
    hub = LocalHub(root, url, process, front, log, thread)
    try:
        _wait_ready(process, host, olah_port, log, ready_timeout)
    except BaseException:
        hub.stop()
        raise
    return hub


def _checked_root(root: Path) -> Path:
    """``root`` resolved, if it is a folder; serving a mistyped path would answer "not found" to everything."""
    resolved = root.expanduser().resolve()
    if not resolved.is_dir():
        raise HubServerError(f"the hub root {resolved} does not exist (or is not a folder), so there is nothing to "
                             f"serve. Publish into it first: tgbhub publish FAMILY --version VERSION --to git:{resolved}"
                             " (or pass the folder an earlier publish --to git:ROOT wrote)")
    return resolved


def _free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _write_olah_config(state: Path, root: Path, host: str, port: int, front_port: int) -> Path:
    state.mkdir(parents=True, exist_ok=True)
    config = state / "olah.toml"
    # Offline mirror mode: serve local git repos only. hf-netloc points at a closed port as a second guard against
    # any upstream request leaving the machine.
    config.write_text("\n".join([
        "[basic]", f'host = "{host}"', f"port = {port}", f'repos-path = "{state / "repos"}"',
        f'mirrors-path = ["{root}"]', 'hf-scheme = "http"', 'hf-netloc = "127.0.0.1:9"',
        'hf-lfs-netloc = "127.0.0.1:9"', f'mirror-netloc = "{host}:{front_port}"',
        f'mirror-lfs-netloc = "{host}:{front_port}"', "", "[accessibility]", "offline = true", ""]))
    return config


def _wait_ready(process: subprocess.Popen[bytes], host: str, port: int, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
    state = f"exited with code {process.returncode}" if process.poll() is not None else f"not ready in {timeout} s"
    raise HubServerError(f"olah {state} on {host}:{port}; its log ends with:\n{tail}\nCheck that the port is free "
                         "and that olah is installed in this environment (pip install 'tgbhub[serve]').")


class _FrontServer(ThreadingHTTPServer):
    """Tracks open client connections so that stopping the hub also ends kept-alive ones."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], root: Path, upstream: tuple[str, int]) -> None:
        # set before binding: a failed bind calls server_close(), which needs them
        self.hub_root = root
        self.upstream = upstream
        self._open: set[socket.socket] = set()
        self._guard = threading.Lock()
        self._readers: dict[Path, _GitReader] = {}
        super().__init__(address, _FrontHandler)

    def reader(self, repo: Path) -> _GitReader:
        with self._guard:
            if repo not in self._readers:
                self._readers[repo] = _GitReader(repo)
            return self._readers[repo]

    def server_close(self) -> None:
        super().server_close()
        with self._guard:
            for reader in self._readers.values():
                reader.close()
            self._readers.clear()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._guard:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._guard:
            self._open.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._guard:
            for connection in list(self._open):
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self._open.clear()


@dataclass(frozen=True)
class _LfsFile:
    path: Path
    sha256: str
    size: int
    commit: str


class _FrontHandler(BaseHTTPRequestHandler):
    """Serves LFS file downloads itself and relays every other request to olah."""

    protocol_version = "HTTP/1.1"
    server: _FrontServer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass  # a Hub request log is olah's job; the front stays quiet

    def do_HEAD(self) -> None:
        self._dispatch(send_body=False)

    def do_GET(self) -> None:
        self._dispatch(send_body=True)

    def do_POST(self) -> None:
        self._relay()

    def _dispatch(self, send_body: bool) -> None:
        lfs = self._lfs_target()
        if lfs is None:
            self._relay()
        else:
            self._send_lfs(lfs, send_body)

    def _lfs_target(self) -> _LfsFile | None:
        match = _RESOLVE.fullmatch(self.path.split("?", 1)[0])
        if match is None:
            return None
        kind, org, name, revision, path = match.groups()
        repo = self.server.hub_root / kind / org / name
        if ".." in path.split("/") or ".." in (org, name) or not (repo / ".git").is_dir():
            return None
        reader = self.server.reader(repo)
        commit = reader.header(f"{revision}^{{commit}}")
        if commit is None:
            return None
        blob = reader.header(f"{commit[0]}:{path}")
        if blob is None or blob[1] != "blob" or not 100 <= blob[2] <= 200:
            return None
        pointer = _POINTER.fullmatch(reader.content(blob[0]) or b"")
        if pointer is None:
            return None
        sha = pointer.group(1).decode()
        local = repo / ".git" / "lfs" / "objects" / sha[:2] / sha[2:4] / sha
        if not local.is_file():
            return None
        return _LfsFile(local, sha, int(pointer.group(2)), commit[0])

    def _send_lfs(self, lfs: _LfsFile, send_body: bool) -> None:
        start, stop = 0, lfs.size
        status = 200
        wanted = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", "").strip())
        if wanted and (wanted.group(1) or wanted.group(2)):
            first, last = wanted.groups()
            start = int(first) if first else max(lfs.size - int(last), 0)
            stop = min(int(last) + 1, lfs.size) if first and last else lfs.size
            if start >= stop:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{lfs.size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(stop - start))
        self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{stop - 1}/{lfs.size}")
        self.send_header("ETag", f'"{lfs.sha256}"')
        self.send_header("X-Repo-Commit", lfs.commit)
        self.send_header("X-Linked-Size", str(lfs.size))
        self.send_header("X-Linked-ETag", f'"{lfs.sha256}"')
        self.end_headers()
        if send_body:
            with open(lfs.path, "rb") as handle:
                self.wfile.flush()
                self.connection.sendfile(handle, offset=start, count=stop - start)

    def _relay(self) -> None:
        host, port = self.server.upstream
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
        upstream = http.client.HTTPConnection(host, port, timeout=_RELAY_TIMEOUT)
        try:
            upstream.request(self.command, self.path, body=body, headers=headers)
            response = upstream.getresponse()
            payload = response.read()
        except OSError as exc:
            self.send_error(502, f"olah did not answer: {exc}")
            return
        finally:
            upstream.close()
        self.send_response(response.status, response.reason)
        for key, value in response.getheaders():
            if key.lower() not in _HOP_BY_HOP:
                self.send_header(key, value)
        declared = response.getheader("Content-Length")
        self.send_header("Content-Length", declared if self.command == "HEAD" and declared else str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)


class _GitReader:
    """Long-lived ``git cat-file`` processes for one repo: a lookup costs microseconds, not a process start.

    git re-reads refs and rescans packs on every miss, so tags and commits published while serving are seen.
    """

    def __init__(self, repo: Path) -> None:
        self._repo = repo
        self._lock = threading.Lock()
        self._check: subprocess.Popen[bytes] | None = None
        self._batch: subprocess.Popen[bytes] | None = None

    def header(self, name: str) -> tuple[str, str, int] | None:
        """``(object id, type, size)`` of a revision expression such as ``v1.0.0^{commit}``, or None if missing."""
        with self._lock:
            self._check = self._check or self._start("--batch-check")
            line = self._ask(self._check, name)
        parts = line.split()
        return (parts[0], parts[1], int(parts[2])) if len(parts) == 3 and parts[1] != "missing" else None

    def content(self, oid: str) -> bytes | None:
        """The bytes of object ``oid`` (only ever asked for small objects: LFS pointers)."""
        with self._lock:
            self._batch = self._batch or self._start("--batch")
            parts = self._ask(self._batch, oid).split()
            if len(parts) != 3 or parts[1] == "missing":
                return None
            data = self._batch.stdout.read(int(parts[2]) + 1)  # type: ignore[union-attr]
        return data[:-1]

    def close(self) -> None:
        for process in (self._check, self._batch):
            if process is not None:
                process.kill()
                process.wait()

    def _start(self, mode: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(["git", "-C", str(self._repo), "cat-file", mode], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def _ask(self, process: subprocess.Popen[bytes], name: str) -> str:
        if "\n" in name:
            return "missing"
        try:
            process.stdin.write(name.encode() + b"\n")  # type: ignore[union-attr]
            process.stdin.flush()  # type: ignore[union-attr]
            return process.stdout.readline().decode()  # type: ignore[union-attr]
        except OSError:  # git died (repo removed?): start afresh on the next request
            self._check = self._batch = None
            process.kill()
            return "missing"
