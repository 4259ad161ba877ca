"""``tgbhub hub serve ROOT``: a private Hugging Face-compatible Hub on this machine, over the git repos in ROOT.

Two parts, both bound to one address:

* **olah** (MIT, the ``serve`` extra) in offline mirror mode answers small files and whatever of the Hub API the
  front does not answer itself.
* a **front** server in this process receives every request. It answers file downloads of LFS-stored files itself,
  straight from ``.git/lfs/objects`` with ``sendfile`` and ``Range`` support, the way the real Hub hands large files
  to its CDN; everything else it relays to olah. olah alone reads a whole blob into memory and sends it in 4 KiB
  chunks (tens of MB/s; see the README's Hub benchmark), which is what the front is for. The front also answers a
  download of a file or revision that does not exist the way the real Hub does (404 ``EntryNotFound`` /
  ``RevisionNotFound``, the same for HEAD and GET), where olah answers 500 to GET and 401 "Repository not found" to
  HEAD. It also serves the catalogue site (a ``tgbhub site build`` folder) under ``/site/``, ``/`` redirecting
  there: a prefix of its own, so a page never shadows a Hub path such as ``/datasets/ORG/REPO/...``. And it answers
  the Hub's read API (repo info with file sizes and LFS details, repo listing and search, refs, commits, trees,
  paths-info, auth-check) from the git repos itself (:mod:`tgbhub.hub.answers`), where olah answers differently
  from the real Hub.

The front (:mod:`tgbhub.hub.front`) sheds load rather than piling it up: a bounded pool of workers, time-outs for
a request head and between requests, caps on open connections and request bodies, and no answer names olah's
address.

Nothing is ever written into ROOT, so a read-only hub serves: olah's config and logs live in a state folder outside
it (``state_dir``, by default the user's state folder keyed by ROOT).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from tgbhub.errors import HubServerError
from tgbhub.hub.front import (
    HEADER_TIMEOUT,
    IDLE_TIMEOUT,
    MAX_BODY_BYTES,
    WORKERS,
    FrontServer,
    checked_limits,
)

#: the repo kinds olah's mirror mode looks for under ROOT (``ROOT/<kind>/<org>/<name>``)
_REPO_KINDS = ("datasets", "models", "spaces")


@dataclass
class LocalHub:
    """A running local Hub; ``url`` is what ``TGBHUB_ENDPOINT`` / ``HF_ENDPOINT`` should be set to."""

    root: Path
    url: str
    olah: subprocess.Popen[bytes]
    front: FrontServer
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
                    allow_empty: bool = False, site: str | os.PathLike[str] | None = None,
                    header_timeout: float = HEADER_TIMEOUT, idle_timeout: float = IDLE_TIMEOUT,
                    max_connections: int | None = None, workers: int = WORKERS,
                    max_body_bytes: int = MAX_BODY_BYTES) -> LocalHub:
    """Serve the repos under ``root`` (``root/datasets/<org>/<name>``, as ``tgbhub publish --hub git:ROOT`` writes).

    Nothing is written into ``root``. The last five arguments are what one client may take of the server; the
    defaults are the module's constants of the same names, documented there and in ``docs/hubs.md``.

    Args:
        root: the hub root.
        port: the port to serve on; 0 picks a free one.
        host: the address to bind.
        ready_timeout: seconds olah may take to come up.
        state_dir: where olah's config and log go, by default :func:`default_state_dir` (the user's state folder,
            one subfolder per served root).
        allow_empty: also accept an existing, empty ``root``, for a hub whose first repo is written while it serves
            (olah reads git live), such as behind a Hub write API.
        site: a ``tgbhub site build`` folder served under ``/site/`` (``/`` redirects there);
            :meth:`LocalHub.serve_site` sets one later.
        header_timeout: seconds a client has to send a request line and headers (then 408 and closed).
        idle_timeout: seconds a kept-alive connection may sit idle between requests (then closed).
        max_connections: client connections open at once; one more gets 503 with ``Retry-After``. None: 1000, or
            fewer where the file-descriptor limit leaves room for fewer.
        workers: threads answering requests; waiting connections hold none.
        max_body_bytes: the largest request body accepted; a larger one gets 413 before any of it is read.

    Returns:
        The running hub; stop it with :meth:`LocalHub.stop` or a ``with`` block.

    Raises:
        HubServerError: if olah is not installed; a limit is not a positive number, or ``max_connections`` is more
            than the file-descriptor limit allows; ``root`` is not a hub root (missing, a file, or a folder with no
            git repo at ``<kind>/<org>/<name>``, and not empty under ``allow_empty``); ``state_dir`` is inside
            ``root`` or cannot be created; ``port`` cannot be bound (taken, or not allowed); or olah does not come up
            within ``ready_timeout`` seconds (with the tail of its log); or ``site`` holds no ``index.html``.
    """
    if importlib.util.find_spec("olah") is None:
        raise HubServerError("the local Hub needs olah, which is not installed; in your tgbhub checkout, run "
                             "pip install -e '.[serve]' (it pins olah==0.5.4)")
    limits = checked_limits(header_timeout, idle_timeout, max_connections, workers, max_body_bytes)
    root = checked_hub_root(Path(root), allow_empty=allow_empty)
    pages = checked_site(Path(site)) if site is not None else None
    state = _checked_state_dir(root, state_dir)
    olah_port = _free_port(host)
    try:
        front = FrontServer((host, port), root, (host, olah_port), limits)
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
                         "and that olah is installed in this environment (in your tgbhub checkout: pip install -e "
                         "'.[serve]').")


