"""``tgbhub hub serve ROOT``: a private Hugging Face-compatible Hub on this machine, over the git repos in ROOT.

Two parts, both bound to one address:

* **olah** (MIT, the ``serve`` extra) in offline mirror mode answers the Hub API: refs, trees, revision
  info, small files, everything ``huggingface_hub`` and ``datasets`` ask for.
* a **front** server in this process receives every request. It answers file downloads of LFS-stored files itself,
  straight from ``.git/lfs/objects`` with ``sendfile`` and ``Range`` support, the way the real Hub hands large files
  to its CDN; everything else it relays to olah. olah alone reads a whole blob into memory and sends it in 4 KiB
  chunks (tens of MB/s; see the README's Hub benchmark), which is what the front is for. The front also answers a
  download of a file or revision that does not exist the way the real Hub does (404 ``EntryNotFound`` /
  ``RevisionNotFound``, the same for HEAD and GET), where olah answers 500 to GET and 401 "Repository not found" to
  HEAD. It also serves the catalogue site (a ``tgbhub site build`` folder) under ``/site/``, ``/`` redirecting
  there: a prefix of its own, so a page never shadows a Hub path such as ``/datasets/ORG/REPO/...``.

Nothing is ever written into ROOT, so a read-only hub serves: olah's config and logs live in a state folder outside
it (``state_dir``, by default the user's state folder keyed by ROOT).
"""

from __future__ import annotations

import hashlib
import html
import http.client
import importlib.util
import json
import mimetypes
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
from urllib.parse import unquote

import platformdirs

from tgbhub.errors import HubServerError

_RESOLVE = re.compile(r"/(datasets|models|spaces)/([^/]+)/([^/]+)/resolve/([^/]+)/(.+)")
_POINTER = re.compile(rb"version https://git-lfs\.github\.com/spec/v1\noid sha256:([0-9a-f]{64})\nsize (\d+)\n")
# hop-by-hop headers, plus the ones the front writes itself
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection",
               "content-length", "host", "date", "server"}
_RELAY_TIMEOUT = 60.0
#: the repo kinds olah's mirror mode looks for under ROOT (``ROOT/<kind>/<org>/<name>``)
_REPO_KINDS = ("datasets", "models", "spaces")
#: where the catalogue site is mounted: one prefix no Hub API route starts with
SITE_PREFIX = "/site/"
_SITE_TYPES = {".html": "text/html; charset=utf-8", ".json": "application/json", ".png": "image/png",
               ".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}


@dataclass
class LocalHub:
    """A running local Hub; ``url`` is what ``TGBHUB_ENDPOINT`` / ``HF_ENDPOINT`` should be set to."""

    root: Path
    url: str
    olah: subprocess.Popen[bytes]
    front: _FrontServer
    log: Path
    #: where olah's config, log and (unused, offline) repo cache live: never inside ``root``
    state_dir: Path
    config: Path
    _thread: threading.Thread = field(repr=False)

    def stop(self) -> None:
        """Stop the front and olah (idempotent), and remove this session's olah config."""
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
        self.config.unlink(missing_ok=True)

    def __enter__(self) -> LocalHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def site(self) -> Path | None:
        """The site folder served under ``/site/``, or None (``/`` then is olah's page)."""
        return self.front.site

    def serve_site(self, folder: str | os.PathLike[str] | None) -> None:
        """Serve ``folder`` (a ``tgbhub site build`` output) under ``/site/`` from now on; None stops serving one.

        Raises:
            HubServerError: if ``folder`` holds no ``index.html``.
        """
        self.front.site = None if folder is None else checked_site(Path(folder))


def start_local_hub(root: str | os.PathLike[str], port: int = 0, host: str = "127.0.0.1",
                    ready_timeout: float = 60.0, state_dir: str | os.PathLike[str] | None = None, *,
                    allow_empty: bool = False, site: str | os.PathLike[str] | None = None) -> LocalHub:
    """Serve the repos under ``root`` (``root/datasets/<org>/<name>``, as ``tgbhub publish --hub git:ROOT`` writes).

    ``port=0`` picks a free port. Nothing is written into ``root``: olah's config and log go to ``state_dir``, by
    default :func:`default_state_dir` (the user's state folder, one subfolder per served root). ``allow_empty``
    also accepts an existing, empty ``root``, for a hub whose first repo is written while it serves (olah reads git
    live), such as behind a Hub write API. ``site`` is a ``tgbhub site build`` folder served under ``/site/`` (``/``
    redirects there); :meth:`LocalHub.serve_site` sets one later.

    Raises:
        HubServerError: if olah is not installed; ``root`` is not a hub root (missing, a file, or a folder with no
            git repo at ``<kind>/<org>/<name>``, and not empty under ``allow_empty``); ``state_dir`` is inside
            ``root`` or cannot be created; ``port`` cannot be bound (taken, or not allowed); or olah does not come up
            within ``ready_timeout`` seconds (with the tail of its log); or ``site`` holds no ``index.html``.
    """
    if importlib.util.find_spec("olah") is None:
        raise HubServerError("the local Hub needs olah, which is not installed; run: pip install olah==0.5.4 (or, "
                             "in a tgbhub checkout, pip install -e '.[serve]')")
    root = checked_hub_root(Path(root), allow_empty=allow_empty)
    pages = checked_site(Path(site)) if site is not None else None
    state = _checked_state_dir(root, state_dir)
    olah_port = _free_port(host)
    try:
        front = _FrontServer((host, port), root, (host, olah_port))
    except OSError as exc:
        raise HubServerError(f"cannot serve on {host}:{port}: {exc.strerror or exc}. Choose another port "
                             "(--port 8091), or --port 0 to let the system pick a free one.") from exc
    front.site = pages
    url = f"http://{host}:{front.server_address[1]}"
    config = _write_olah_config(state, root, host, olah_port, front.server_address[1])
    log = state / "olah.log"
    with open(log, "ab") as sink:
        # cwd=state: anything olah writes to a relative path lands there too, never in the caller's folder
        process = subprocess.Popen([sys.executable, "-m", "olah.server", "-c", str(config), "--log-path",
                                    str(state / "logs")], stdout=sink, stderr=subprocess.STDOUT, cwd=state)
    thread = threading.Thread(target=front.serve_forever, name="tgbhub-hub-front", daemon=True)
    thread.start()
    hub = LocalHub(root, url, process, front, log, state, config, thread)
    try:
        _wait_ready(process, host, olah_port, log, ready_timeout)
    except BaseException:
        hub.stop()
        raise
    return hub


def checked_site(folder: Path) -> Path:
    """``folder`` resolved, if it is a built site (it holds ``index.html``).

    Raises:
        HubServerError: naming the folder and the command that builds one.
    """
    resolved = folder.expanduser().resolve()
    if not (resolved / "index.html").is_file():
        raise HubServerError(f"{resolved} is no built site: it holds no index.html; build one with: tgbhub site "
                             f"build {resolved}, or leave --site out to build one at start")
    return resolved


def default_state_dir(root: Path) -> Path:
    """Where olah's config and log go for a served ``root``: ``<user state dir>/tgbhub/hub/<name>-<hash of path>``.

    Keyed by the resolved path, so two hubs never share a log, and the same hub finds its old log again.
    """
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    label = re.sub(r"[^A-Za-z0-9._-]", "_", root.name) or "root"
    return Path(platformdirs.user_state_dir("tgbhub")) / "hub" / f"{label}-{digest}"


def checked_hub_root(root: Path, allow_empty: bool = False) -> Path:
    """``root`` resolved, if it is a hub root: a folder holding at least one git repo at ``<kind>/<org>/<name>``
    (or, with ``allow_empty``, an existing empty folder).

    Serving anything else would answer "not found" to every request (and olah would write its state into it).

    Raises:
        HubServerError: naming the path, why it is not a hub root, and the command that makes one.
    """
    resolved = root.expanduser().resolve()
    why = _not_a_hub_root(resolved)
    if why is None or (allow_empty and _is_empty_folder(resolved)):
        return resolved
    enclosing = next((parent for parent in list(resolved.parents)[:3] if _not_a_hub_root(parent) is None), None)
    if enclosing is not None:  # e.g. ROOT/datasets or one repo of it was passed
        fix = f"it lies inside the hub root {enclosing}; serve that instead: tgbhub hub serve {enclosing}"
    else:
        # suggest publishing into the path itself only where that is sensible: not into a file, nor /etc
        target = str(resolved) if not resolved.exists() or _is_empty_folder(resolved) else "DIR"
        fix = (f"make one with: tgbhub publish FAMILY --version VERSION --hub git:{target} (e.g. FAMILY t-grab, "
               f"VERSION 1.0.0), then: tgbhub hub serve {target}")
    raise HubServerError(f"{resolved} is not a hub root: {why}; {fix}")


def _not_a_hub_root(path: Path) -> str | None:
    """Why ``path`` is not a hub root, or None if it is one."""
    try:
        if not path.exists():
            return "it does not exist"
        if not path.is_dir():
            return "it is a file, not a folder"
        if any(_is_git_repo(repo) for repo in _repo_candidates(path)):
            return None
    except OSError as exc:  # e.g. a folder this user may not list
        return f"it cannot be read ({exc.strerror or exc})"
    others = ", ".join(f"{kind}/ORG/NAME" for kind in _REPO_KINDS[1:])
    return f"it holds no git repo at datasets/ORG/NAME (or {others})"


def _is_empty_folder(path: Path) -> bool:
    try:
        return path.is_dir() and next(path.iterdir(), None) is None
    except OSError:
        return False


def _repo_candidates(root: Path) -> list[Path]:
    """The folders at ``root/<kind>/<org>/<name>``: where olah's mirror mode looks for repos."""
    found: list[Path] = []
    for kind in _REPO_KINDS:
        if not (root / kind).is_dir():
            continue
        for org in (root / kind).iterdir():
            if org.is_dir():
                found.extend(name for name in org.iterdir() if name.is_dir())
    return found


def _is_git_repo(path: Path) -> bool:
    # a work tree (what publish --hub git: writes) or a bare repo (olah serves both)
    return (path / ".git").is_dir() or ((path / "HEAD").is_file() and (path / "objects").is_dir())


def _checked_state_dir(root: Path, state_dir: str | os.PathLike[str] | None) -> Path:
    """The state folder, created, and outside ``root``.

    Raises:
        HubServerError: if it lies inside ``root`` (olah would write into the tree it serves) or cannot be created.
    """
    state = Path(state_dir).expanduser().resolve() if state_dir is not None else default_state_dir(root)
    if state == root or root in state.parents:
        raise HubServerError(f"the state folder {state} is inside the served hub root {root}, and the hub never "
                             f"writes into what it serves; pass a folder outside it: --state-dir DIR")
    try:
        state.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HubServerError(f"cannot create the state folder {state} for olah's config and log: "
                             f"{exc.strerror or exc}; pass a writable folder outside {root}: --state-dir DIR") from exc
    return state


def _free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _write_olah_config(state: Path, root: Path, host: str, port: int, front_port: int) -> Path:
    # one file per session: two hubs serving the same root share the state folder, but never a config
    config = state / f"olah-{os.getpid()}-{port}.toml"
    # Offline mirror mode: serve local git repos only. hf-netloc points at a closed port as a second guard against
    # any upstream request leaving the machine.
    # json.dumps quotes: a JSON string is a valid TOML basic string, so a path with " or \ cannot break the file
    q = json.dumps
    config.write_text("\n".join([
        "[basic]", f"host = {q(host)}", f"port = {port}", f"repos-path = {q(str(state / 'repos'))}",
        f"mirrors-path = [{q(str(root))}]", 'hf-scheme = "http"', 'hf-netloc = "127.0.0.1:9"',
        'hf-lfs-netloc = "127.0.0.1:9"', f"mirror-netloc = {q(f'{host}:{front_port}')}",
        f"mirror-lfs-netloc = {q(f'{host}:{front_port}')}", "", "[accessibility]", "offline = true", ""]))
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
                         "and that olah is installed in this environment (pip install olah==0.5.4).")


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
        #: the site folder served under SITE_PREFIX (resolved), or None
        self.site: Path | None = None
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


@dataclass(frozen=True)
class _Missing:
    """A download the real Hub answers with 404: its ``X-Error-Code`` and, for a missing file, the commit looked in."""

    code: str
    message: str
    commit: str | None = None


class _FrontHandler(BaseHTTPRequestHandler):
    """Serves LFS file downloads and not-found answers itself, and relays every other request to olah."""

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
        if self.server.site is not None and self._serve_site(self.server.site, send_body):
            return
        target = self._resolve_target()
        if isinstance(target, _LfsFile):
            self._send_lfs(target, send_body)
        elif isinstance(target, _Missing):
            self._send_missing(target, send_body)
        else:
            self._relay()

    def _resolve_target(self) -> _LfsFile | _Missing | None:
        """What a ``/resolve/`` download names: an LFS file, something missing, or None (olah answers it).

        A missing repo is left to olah, whose 401 ``RepoNotFound`` is what the real Hub says too.
        """
        match = _RESOLVE.fullmatch(self.path.split("?", 1)[0])
        if match is None:
            return None
        kind, org, name, revision, path = (unquote(part) for part in match.groups())
        if ".." in path.split("/") or any(part in ("", ".", "..") or "/" in part for part in (org, name)):
            return None
        repo = self.server.hub_root / kind / org / name
        if not (repo / ".git").is_dir():
            return None
        try:
            return self._look_up(self.server.reader(repo), repo, revision, path)
        except OSError:  # git could not be asked: let olah answer rather than claim "not found"
            return None

    @staticmethod
    def _look_up(reader: _GitReader, repo: Path, revision: str, path: str) -> _LfsFile | _Missing | None:
        commit = reader.header(f"{revision}^{{commit}}")
        if commit is None:
            return _Missing("RevisionNotFound", f"Invalid rev id: {revision}")
        blob = reader.header(f"{commit[0]}:{path}")
        if blob is None or blob[1] != "blob":  # a folder is no more a downloadable entry than nothing is
            return _Missing("EntryNotFound", "Entry not found", commit[0])
        if not 100 <= blob[2] <= 200:  # too small or too large to be an LFS pointer: a plain file, olah sends it
            return None
        pointer = _POINTER.fullmatch(reader.content(blob[0]) or b"")
        if pointer is None:
            return None
        sha = pointer.group(1).decode()
        local = repo / ".git" / "lfs" / "objects" / sha[:2] / sha[2:4] / sha
        if not local.is_file():
            return None
        return _LfsFile(local, sha, int(pointer.group(2)), commit[0])

    def _serve_site(self, site: Path, send_body: bool) -> bool:
        """Answer a request for the site (``/``, ``/index.html``, ``/site`` redirect; ``/site/...`` is a file or a 404
        page); False for any other path, which the Hub API answers. ``/site/ORG/resolve/...`` stays the API's."""
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        if path in ("/", "/index.html", SITE_PREFIX.rstrip("/")):
            self._send_page(302, b"", "text/html; charset=utf-8", send_body, {"Location": SITE_PREFIX})
            return True
        if not path.startswith(SITE_PREFIX) or re.fullmatch(r"/[^/]+/[^/]+/resolve/.*", path):
            return False
        relative = unquote(path[len(SITE_PREFIX):])
        if relative == "" or relative.endswith("/"):
            relative += "index.html"
        file = _site_file(site, relative)
        if file is None:
            body = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><link rel=\"icon\" "
                    "href=\"data:,\"><title>Not found</title></head>\n<body><h1>Not found</h1><p>This hub has no page "
                    f"at <code>{html.escape(path)}</code>. <a href=\"{SITE_PREFIX}\">The catalogue</a> lists every "
                    "dataset.</p></body></html>\n").encode()
            self._send_page(404, body, "text/html; charset=utf-8", send_body)
            return True
        kind = _SITE_TYPES.get(file.suffix.lower()) or mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        try:
            data = file.read_bytes()
        except OSError:
            self._send_page(500, b"", "text/plain; charset=utf-8", send_body)
            return True
        self._send_page(200, data, kind, send_body)
        return True

    def _send_page(self, status: int, body: bytes, kind: str, send_body: bool,
                   extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-cache")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if send_body and body:
            self.wfile.write(body)

    def _send_missing(self, missing: _Missing, send_body: bool) -> None:
        # The Hub's headers, which huggingface_hub maps to RemoteEntryNotFoundError / RevisionNotFoundError; with
        # X-Repo-Commit it also caches the miss. HEAD gets the same status and headers as GET, minus the body.
        body = json.dumps({"error": missing.message}).encode()
        self.send_response(404)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Error-Code", missing.code)
        # the message echoes the requested revision: no control character (a CR LF would split the response)
        printable = re.sub(r"[\x00-\x1f\x7f]", "?", missing.message.encode("ascii", "replace").decode())
        self.send_header("X-Error-Message", printable)
        if missing.commit is not None:
            self.send_header("X-Repo-Commit", missing.commit)
        self.end_headers()
        if send_body:
            self.wfile.write(body)

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


def _site_file(site: Path, relative: str) -> Path | None:
    """The file ``relative`` names inside ``site``, or None: a missing file, a folder, or any path that would leave
    the site (``..``, an absolute part, a link pointing out of it) is not found."""
    parts = relative.split("/")
    if any(part in ("", ".", "..") or "\\" in part or "\0" in part for part in parts):
        return None
    candidate = site.joinpath(*parts)
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError):  # a link loop
        return None
    if site not in resolved.parents or not resolved.is_file():
        return None
    return resolved


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
        """``(object id, type, size)`` of a revision expression such as ``v1.0.0^{commit}``, or None if missing.

        Raises:
            OSError: if git cannot be started or stopped answering (the next call starts it afresh).
        """
        with self._lock:
            self._check = self._check or self._start("--batch-check")
            line = self._ask(self._check, name)
        parts = line.split()
        return (parts[0], parts[1], int(parts[2])) if len(parts) == 3 and parts[1] != "missing" else None

    def content(self, oid: str) -> bytes | None:
        """The bytes of object ``oid`` (only ever asked for small objects: LFS pointers).

        Raises:
            OSError: as :meth:`header`.
        """
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
        self._check = self._batch = None

    def _start(self, mode: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(["git", "-C", str(self._repo), "cat-file", mode], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def _ask(self, process: subprocess.Popen[bytes], name: str) -> str:
        if "\n" in name:  # git reads one name per line; such a name cannot exist
            return "missing"
        try:
            process.stdin.write(name.encode() + b"\n")  # type: ignore[union-attr]
            process.stdin.flush()  # type: ignore[union-attr]
            line = process.stdout.readline().decode()  # type: ignore[union-attr]
            if not line:
                raise BrokenPipeError(f"git cat-file in {self._repo} exited")
            return line
        except OSError:
            # git died (repo removed?): start afresh on the next request. The caller must not read this as
            # "missing", which would turn a hiccup into a 404.
            self.close()
            raise
