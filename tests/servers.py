"""Real loopback servers for the hub tests: a static mirror with fault injection, and a test double of the Hub's
write API. Both bind 127.0.0.1 on a free port and run in a thread of the test process.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class MirrorServer(ThreadingHTTPServer):
    """``python -m http.server`` for a folder, counting GETs per path, with faults a test can switch on."""

    daemon_threads = True

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.gets: Counter[str] = Counter()
        self.corrupt: set[str] = set()     # paths served with one byte flipped
        self.truncate: set[str] = set()    # paths whose body stops halfway (Content-Length still the full size)
        self.throttle: float = 0.0         # seconds of sleep per 64 KiB sent
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _MirrorHandler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _MirrorHandler(SimpleHTTPRequestHandler):
    server: MirrorServer

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, directory=str(args[2].directory), **kwargs)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        with self.server.lock:
            self.server.gets[path] += 1
        local = Path(self.translate_path(path))
        if not local.is_file():
            self.send_error(404)
            return
        data = bytearray(local.read_bytes())
        if path in self.server.corrupt:
            data[len(data) // 2] ^= 0xFF
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if path in self.server.truncate:
            self.wfile.write(data[:len(data) // 2])
            self.close_connection = True
            return
        for start in range(0, len(data), 1 << 16):
            self.wfile.write(data[start:start + (1 << 16)])
            if self.server.throttle:
                time.sleep(self.server.throttle)


@contextmanager
def serving(server: ThreadingHTTPServer) -> Iterator[ThreadingHTTPServer]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


class FakeHubWrites(ThreadingHTTPServer):
    """A TEST DOUBLE of the Hugging Face Hub's write API (not a Hub): the five endpoints ``HfApi`` uses to publish
    (validate-yaml, repos/create, preupload, commit, tag), storing into git repos under ``root/datasets``. Every
    other request (refs, trees, downloads) is relayed to ``read_url``, the real local Hub (olah) serving that root.
    """

    daemon_threads = True

    def __init__(self, root: Path, read_url: str) -> None:
        self.root = root
        self.read_url = read_url
        self.calls: list[str] = []
        super().__init__(("127.0.0.1", 0), _FakeWritesHandler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


_REPO_API = re.compile(r"/api/(datasets)/([^/]+)/([^/]+)/(preupload|commit|tag|branch)/(.+)")
_GIT_ENV = {"GIT_AUTHOR_NAME": "fake hub", "GIT_AUTHOR_EMAIL": "fake@hub.invalid",
            "GIT_COMMITTER_NAME": "fake hub", "GIT_COMMITTER_EMAIL": "fake@hub.invalid"}


class _FakeWritesHandler(BaseHTTPRequestHandler):
    server: FakeHubWrites
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = self.path.split("?", 1)[0]
        self.server.calls.append(f"POST {path}")
        if path == "/api/validate-yaml":
            return self._json(200, {"errors": [], "warnings": []})
        if path == "/api/repos/create":
            spec = json.loads(body)
            repo = self.server.root / f"{spec['type']}s" / spec["organization"] / spec["name"]
            url = f"{self.server.url}/datasets/{spec['organization']}/{spec['name']}"
            if repo.exists():  # like the Hub, the 409 still carries the repo URL
                return self._json(409, {"error": "You already created this dataset repo", "url": url})
            repo.mkdir(parents=True)
            _git(repo, "init", "--quiet", "--initial-branch=main")
            return self._json(200, {"url": url})
        match = _REPO_API.fullmatch(path)
        if match is None:
            return self._relay(body)
        kind, org, name, action, rev = match.groups()
        repo = self.server.root / kind / org / name
        if action == "preupload":
            files = [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                     for f in json.loads(body)["files"]]
            return self._json(200, {"files": files})
        if action == "commit":
            try:
                oid = _commit(repo, body)
            except RuntimeError as exc:  # the Hub answers a stale parentCommit with 412
                return self._json(412, {"error": str(exc)})
            url = f"{self.server.url}/datasets/{org}/{name}/commit/{oid}"
            return self._json(200, {"commitOid": oid, "commitUrl": url, "pullRequestUrl": None})
        if action == "tag":
            spec = json.loads(body)
            _git(repo, "tag", "-a", spec["tag"], "-m", spec.get("message") or spec["tag"], rev)
            return self._json(200, {})
        _git(repo, "branch", rev, json.loads(body)["startingPoint"])
        return self._json(200, {})

    def do_GET(self) -> None:
        self.server.calls.append(f"GET {self.path.split('?', 1)[0]}")
        self._relay(None)

    def do_HEAD(self) -> None:
        self._relay(None)

    def _relay(self, body: bytes | None) -> None:
        headers = {k: v for k, v in self.headers.items() if k.lower() not in {"host", "content-length"}}
        request = urllib.request.Request(self.server.read_url + self.path, data=body, method=self.command,
                                         headers=headers)
        try:
            with urllib.request.urlopen(request) as response:
                status, reply_headers, payload = response.status, response.getheaders(), response.read()
        except urllib.error.HTTPError as error:
            status, reply_headers, payload = error.code, error.headers.items(), error.read()
        self.send_response(status)
        declared = None
        for key, value in reply_headers:
            if key.lower() == "content-length":
                declared = value
            elif key.lower() not in {"transfer-encoding", "connection"}:
                self.send_header(key, value)
        # a HEAD answer has no body but must still announce the file's size, or clients download 0 bytes
        self.send_header("Content-Length", declared if self.command == "HEAD" and declared else str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _commit(repo: Path, body: bytes) -> str:
    """Apply an NDJSON commit (header, file, deletedFile lines) on top of ``main`` with a private index."""
    lines = [json.loads(line) for line in body.splitlines() if line.strip()]
    header = next(item["value"] for item in lines if item["key"] == "header")
    parent = _git(repo, "rev-parse", "--verify", "--quiet", "refs/heads/main", check=False) or None
    if header.get("parentCommit") and header["parentCommit"] != parent:
        raise RuntimeError(f"parent {header['parentCommit']} is not the head {parent}")
    with tempfile.TemporaryDirectory() as scratch:
        env = {"GIT_INDEX_FILE": os.path.join(scratch, "index")}
        if parent:
            _git(repo, "read-tree", parent, env=env)
        for item in lines:
            value = item["value"]
            if item["key"] == "file":
                blob_file = Path(scratch) / "blob"
                blob_file.write_bytes(base64.b64decode(value["content"]))
                blob = _git(repo, "hash-object", "-w", str(blob_file))
                _git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{value['path']}", env=env)
            elif item["key"] == "deletedFile":
                _git(repo, "update-index", "--force-remove", value["path"], env=env)
        tree = _git(repo, "write-tree", env=env)
    args = ["commit-tree", tree, "-m", header["summary"], *(["-p", parent] if parent else [])]
    commit = _git(repo, *args, env=_GIT_ENV)
    _git(repo, "update-ref", "refs/heads/main", commit)
    return commit


def _git(repo: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False,
                          env={**os.environ, **_GIT_ENV, **(env or {})})
    if check and done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr}")
    return done.stdout.strip()
