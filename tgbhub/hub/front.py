"""The front of ``tgbhub hub serve`` (:mod:`tgbhub.hub.serve`): the HTTP server in this process that receives every
request to a local hub. It answers file downloads of LFS-stored files itself, straight from ``.git/lfs/objects``
with ``sendfile`` and ``Range`` support, answers a missing repo, file or revision as the real Hub does, hands the
Hub read API that :mod:`tgbhub.hub.answers` answers from git to it, serves the catalogue site under ``/site/``, and
relays everything else to olah.

It sheds load rather than piling it up: one loop thread holds every connection that is waiting for a request (a
socket each, no thread), a bounded pool of workers answers whole requests, and each client's share is bounded: time
to send a request head (:data:`HEADER_TIMEOUT`), idle time between requests (:data:`IDLE_TIMEOUT`), open connections
(:data:`MAX_CONNECTIONS`, then 503 with ``Retry-After``), body size (:data:`MAX_BODY_BYTES`, 413 unread). No answer
names olah's address: URLs olah builds from its own are rewritten to the front's, as the client addressed it.
"""

from __future__ import annotations

import collections
import errno
import html
import http.client
import io
import json
import mimetypes
import queue
import re
import select
import selectors
import socket
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from tgbhub.errors import HubServerError
from tgbhub.hub.answers import Answer, HubAnswers, claimed
from tgbhub.hub.croissant import served_view

_RESOLVE = re.compile(r"/(datasets|models|spaces)/([^/]+)/([^/]+)/resolve/([^/]+)/(.+)")
_POINTER = re.compile(rb"version https://git-lfs\.github\.com/spec/v1\noid sha256:([0-9a-f]{64})\nsize (\d+)\n")
# hop-by-hop headers, plus the ones the front writes itself
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection",
               "content-length", "host", "date", "server"}
_RELAY_TIMEOUT = 60.0
#: where the catalogue site is mounted: one prefix no Hub API route starts with
SITE_PREFIX = "/site/"
_SITE_TYPES = {".html": "text/html; charset=utf-8", ".json": "application/json", ".png": "image/png",
               ".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}

#: seconds a client has to send a whole request line and headers, counted from its connecting (or, on a kept-alive
#: connection, from the first byte of its next request); a client that has not is answered 408 and closed
HEADER_TIMEOUT = 10.0
#: seconds a kept-alive connection may sit between requests before it is closed (huggingface_hub's pool lets its
#: own go after 5 s, so an honest client never meets this)
IDLE_TIMEOUT = 15.0
#: client connections open at once, at most (parked, being answered or closing); one more is answered 503 with
#: ``Retry-After`` and closed. Lowered to what the process's file-descriptor limit (``ulimit -n``) leaves room for
MAX_CONNECTIONS = 1000
#: threads answering requests, at most (started as requests need them). A connection waiting for its request holds
#: no thread, only a socket, so this bounds the front's threads whatever the number of connections
WORKERS = 64
#: bytes of request body accepted (declared by Content-Length or sent chunked): the Hub read API's POSTs are JSON
#: lists of paths, kilobytes; more is answered 413 before any of it is read
MAX_BODY_BYTES = 16 * 1024 * 1024
#: bytes of request line and headers, at most; more is answered 431
MAX_HEAD_BYTES = 64 * 1024
#: seconds a send or receive may stall while a request is answered (a client that stops reading or sending)
_IO_TIMEOUT = 60.0
#: seconds a worker waits for a kept-alive client's next request before handing the connection to the loop: an
#: honest client's next request mostly comes within it, and answering it at once spares two thread hand-overs
_NEXT_REQUEST_WAIT = 0.002
#: seconds a connection the front closes keeps being read (and discarded) after its answer, so that a client still
#: sending a refused body reads the answer instead of a reset
_LINGER_SECONDS = 2.0
#: bytes discarded while lingering, at most
_LINGER_BYTES = 1024 * 1024
#: connections refused over the cap that may linger at once; beyond it they are closed at once
_MAX_REFUSED_LINGERING = 256
#: file descriptors kept free for what is not a client connection: per worker a relay socket and git's pipes, plus
#: olah's, the listening socket, the selector
_FD_RESERVE_PER_WORKER = 2
_FD_RESERVE = 64
_HEAD_END = re.compile(rb"\r?\n\r?\n")
#: a Host header that may be echoed into a rewritten Location: a name or an IP literal, and a port
_AUTHORITY = re.compile(r"(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?")
_TEXT_TYPES = re.compile(r"text/|application/(?:[\w.+-]*\+)?(?:json|xml|javascript)", re.IGNORECASE)


@dataclass(frozen=True)
class Limits:
    """What the front lets its clients take (see the constants of the same names)."""

    header_timeout: float = HEADER_TIMEOUT
    idle_timeout: float = IDLE_TIMEOUT
    max_connections: int = MAX_CONNECTIONS
    workers: int = WORKERS
    max_body_bytes: int = MAX_BODY_BYTES


def checked_limits(header_timeout: float, idle_timeout: float, max_connections: int | None, workers: int,
                    max_body_bytes: int) -> Limits:
    """The limits, checked: positive numbers, and no more connections than file descriptors allow.

    Raises:
        HubServerError: naming the argument, its value and a value that works.
    """
    for name, value, default in (("header_timeout", header_timeout, HEADER_TIMEOUT),
                                 ("idle_timeout", idle_timeout, IDLE_TIMEOUT)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
            raise HubServerError(f"{name} must be a positive number of seconds, got {value!r}; pass e.g. "
                                 f"{name}={default:g} (the default)")
    for name, count, default in (("max_connections", max_connections, MAX_CONNECTIONS), ("workers", workers, WORKERS),
                                 ("max_body_bytes", max_body_bytes, MAX_BODY_BYTES)):
        if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
            raise HubServerError(f"{name} must be a whole number of at least 1, got {count!r}; pass e.g. "
                                 f"{name}={default} (the default)")
    room = descriptor_limit() - _FD_RESERVE - _FD_RESERVE_PER_WORKER * workers
    if max_connections is None:
        max_connections = max(1, min(MAX_CONNECTIONS, room))
    elif max_connections > room:
        needed = max_connections + _FD_RESERVE + _FD_RESERVE_PER_WORKER * workers
        raise HubServerError(f"max_connections={max_connections} needs {needed} file descriptors, and this process "
                             f"may open {descriptor_limit()}; pass max_connections={max(1, room)} or less, or raise "
                             f"the limit first (ulimit -n {needed})")
    return Limits(float(header_timeout), float(idle_timeout), max_connections, workers, max_body_bytes)


def descriptor_limit() -> int:
    """How many files this process may open (its soft ``RLIMIT_NOFILE``); 1024 where that cannot be asked."""
    try:
        import resource
    except ImportError:  # not a Unix
        return 1024
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


class _Connection:
    """A client connection, with what the front's loop has read of its next request.

    Owned by one thread at a time: the loop while it waits for a whole request head (or lingers before closing),
    then the worker that answers it, which hands it back.
    """

    __slots__ = ("sock", "address", "buffer", "scanned", "deadline", "awaiting", "lingering", "refused", "discarded")

    def __init__(self, sock: socket.socket, address: Any, deadline: float, *, awaiting: bool = False) -> None:
        self.sock = sock
        self.address = address
        self.buffer = bytearray()
        #: how much of ``buffer`` was searched for the end of the head already
        self.scanned = 0
        self.deadline = deadline
        #: kept alive and no byte of the next request yet: ``deadline`` is the idle one
        self.awaiting = awaiting
        #: answered and half-closed: read and discarded until the client closes or ``deadline``
        self.lingering = False
        #: refused over the connection cap (not counted among the open connections)
        self.refused = False
        self.discarded = 0

    def head_complete(self) -> bool:
        """Whether ``buffer`` holds a whole request line and headers."""
        found = _HEAD_END.search(self.buffer, max(0, self.scanned - 3)) is not None
        self.scanned = len(self.buffer)
        return found


def _canned(status: str, text: str, extra: str = "") -> bytes:
    """A whole response, with ``Connection: close``, for the loop to send without a handler."""
    body = (text + "\n").encode()
    return (f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {len(body)}\r\n{extra}"
            "Connection: close\r\n\r\n").encode() + body


class FrontServer(HTTPServer):
    """The front: one loop thread accepts connections and holds each until a whole request head has arrived (a
    waiting connection costs a socket, not a thread); a bounded pool of worker threads answers the requests.

    The loop enforces the connection cap (503 with ``Retry-After`` beyond it), the header and idle time-outs, and
    closes connections gracefully (it keeps reading a closed connection for a moment, so that a client still sending
    reads the answer rather than a reset).
    """

    #: the listen backlog: a burst of connects waits in the kernel for the loop, instead of being refused
    request_queue_size = 1024

    def __init__(self, address: tuple[str, int], root: Path, upstream: tuple[str, int],
                 limits: Limits | None = None) -> None:
        # set before binding: a failed bind calls server_close(), which needs them
        self.hub_root = root
        self.upstream = upstream
        self.limits = limits or Limits()
        self._open: set[socket.socket] = set()
        self._guard = threading.Lock()
        self._readers: dict[Path, _GitReader] = {}
        #: the Hub read API answered from git rather than by olah (:mod:`tgbhub.hub.answers`)
        self.answers = HubAnswers(root)
        #: the site folder served under SITE_PREFIX (resolved), or None
        self.site: Path | None = None
        self._jobs: queue.SimpleQueue[_Connection | None] = queue.SimpleQueue()
        self._workers: list[threading.Thread] = []
        self._idle_workers = 0  # workers waiting for a job that no job has claimed yet
        self._returned: collections.deque[_Connection] = collections.deque()
        self._wake_in, self._wake_out = socket.socketpair()
        for end in (self._wake_in, self._wake_out):
            end.setblocking(False)
        self._stopping = threading.Event()
        self._stopped = threading.Event()
        self._loop_running = False
        self._loop_done = False
        self._parked: dict[socket.socket, _Connection] = {}  # the loop's own: never touched by a worker
        self._refused_lingering = 0
        # every name olah could give itself in a URL or header: the front rewrites them to the address the client used
        names = {upstream[0], "127.0.0.1", "localhost", "0.0.0.0", "[::1]"}
        pattern = rf"(?:{'|'.join(re.escape(name) for name in sorted(names))}):{upstream[1]}(?!\d)"
        self._upstream_text = re.compile(pattern, re.IGNORECASE)
        self._upstream_bytes = re.compile(pattern.encode(), re.IGNORECASE)
        self._over_cap = _canned("503 Service Unavailable", f"this hub is serving all the connections it may "
                                 f"({self.limits.max_connections}); retry in a second", "Retry-After: 1\r\n")
        self._timed_out = _canned("408 Request Timeout", "the request line and headers did not arrive within "
                                  f"{self.limits.header_timeout:g} s; send the whole request head at once")
        self._head_too_large = _canned("431 Request Header Fields Too Large", "the request line and headers are over "
                                       f"{MAX_HEAD_BYTES} bytes; send fewer or shorter headers")
        # the workers build their handlers themselves, from a connection and the head the loop read
        super().__init__(address, _FrontHandler)  # type: ignore[arg-type]

    def reader(self, repo: Path) -> _GitReader:
        with self._guard:
            if repo not in self._readers:
                self._readers[repo] = _GitReader(repo)
            return self._readers[repo]

    @property
    def open_connections(self) -> int:
        """Client connections open now (waiting, being answered or closing), those refused over the cap aside."""
        with self._guard:
            return len(self._open)

    def unrelayed(self, text: str, front: str) -> str:
        """``text`` (a header value from olah) with every address of olah replaced by ``front``."""
        return self._upstream_text.sub(front, text)

    def unrelayed_body(self, data: bytes, front: str) -> bytes:
        """As :meth:`unrelayed`, for a body."""
        return self._upstream_bytes.sub(front.encode(), data)

    # ---- the loop

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Accept, hold and hand out connections until :meth:`shutdown`.

        Args:
            poll_interval: unused; the loop wakes on its own deadlines and on :meth:`shutdown`.
        """
        with self._guard:  # atomic with shutdown(): a loop stopped before it started never starts
            if self._stopping.is_set():
                return
            self._loop_running = True
        tick = min(0.25, self.limits.header_timeout / 4, self.limits.idle_timeout / 4)
        self.socket.setblocking(False)
        selector = selectors.DefaultSelector()
        selector.register(self.socket, selectors.EVENT_READ, None)
        selector.register(self._wake_out, selectors.EVENT_READ, self._wake_out)
        accepting_from: float | None = None  # set while accepting is paused (out of file descriptors)
        next_sweep = time.monotonic() + tick
        try:
            while not self._stopping.is_set():
                for key, _ in selector.select(tick):
                    if key.data is None:
                        if self._accept(selector):
                            selector.unregister(self.socket)
                            accepting_from = time.monotonic() + 0.1
                    elif key.data is self._wake_out:
                        self._take_back(selector)
                    else:
                        self._receive(selector, key.data)
                now = time.monotonic()
                if accepting_from is not None and now >= accepting_from:
                    selector.register(self.socket, selectors.EVENT_READ, None)
                    accepting_from = None
                if now >= next_sweep:  # once a tick, not once a wake-up: a busy loop wakes thousands of times
                    self._expire(selector, now)
                    next_sweep = now + tick
        finally:
            with self._guard:
                self._loop_done = True
                waiting = list(self._parked.values()) + list(self._returned)
                self._parked.clear()
                self._returned.clear()
            for connection in waiting:
                self._close(connection.sock)
            selector.close()
            self._stopped.set()

    def _accept(self, selector: selectors.BaseSelector) -> bool:
        """Accept what is waiting (a bounded batch, so that a flood cannot starve the parked connections); True when
        the process is out of file descriptors and accepting must pause."""
        for _ in range(256):
            try:
                sock, address = self.socket.accept()
            except (BlockingIOError, InterruptedError):
                return False
            except OSError as exc:
                return exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
            sock.setblocking(False)
            # the front writes a response's head and body separately: Nagle would hold the body for an ACK
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._guard:
                admitted = len(self._open) < self.limits.max_connections
                if admitted:
                    self._open.add(sock)
            connection = _Connection(sock, address, time.monotonic() + self.limits.header_timeout)
            if admitted:
                self._park(selector, connection)
            else:
                self._refuse(selector, connection)
        return False

    def _refuse(self, selector: selectors.BaseSelector, connection: _Connection) -> None:
        """Answer 503 at once to a connection over the cap, then linger on it if few others do, else close it."""
        connection.refused = True
        try:
            connection.sock.recv(65536)  # what already came: closing on unread bytes would reset, losing the 503
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            connection.sock.close()
            return
        if self._refused_lingering >= _MAX_REFUSED_LINGERING:
            try:
                connection.sock.send(self._over_cap)
            except OSError:
                pass
            connection.sock.close()
            return
        self._refused_lingering += 1
        self._answer_and_linger(selector, connection, self._over_cap, registered=False)

    def _park(self, selector: selectors.BaseSelector, connection: _Connection) -> None:
        try:
            selector.register(connection.sock, selectors.EVENT_READ, connection)
        except (OSError, ValueError):  # closed meanwhile (close_connections)
            if connection.refused:
                self._refused_lingering -= 1
            self._close(connection.sock)
            return
        self._parked[connection.sock] = connection

    def _drop(self, selector: selectors.BaseSelector, connection: _Connection) -> None:
        if self._parked.pop(connection.sock, None) is not None:
            try:
                selector.unregister(connection.sock)
            except (KeyError, ValueError):
                pass
        if connection.refused:
            self._refused_lingering -= 1
        self._close(connection.sock)

    def _receive(self, selector: selectors.BaseSelector, connection: _Connection) -> None:
        try:
            data = connection.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._drop(selector, connection)
            return
        if connection.lingering:
            connection.discarded += len(data)
            if connection.discarded > _LINGER_BYTES:
                self._drop(selector, connection)
            return
        if connection.awaiting:  # the first byte of the next request: from now on, the header time-out counts
            connection.awaiting = False
            connection.deadline = time.monotonic() + self.limits.header_timeout
        connection.buffer += data
        if connection.head_complete():
            del self._parked[connection.sock]
            selector.unregister(connection.sock)
            self._hand_out(connection)
        elif len(connection.buffer) > MAX_HEAD_BYTES:
            self._answer_and_linger(selector, connection, self._head_too_large)

    def _expire(self, selector: selectors.BaseSelector, now: float) -> None:
        for connection in [c for c in self._parked.values() if c.deadline <= now]:
            if connection.lingering or not connection.buffer:  # idle, or done: nothing to say
                self._drop(selector, connection)
            else:
                self._answer_and_linger(selector, connection, self._timed_out)

    def _answer_and_linger(self, selector: selectors.BaseSelector, connection: _Connection, answer: bytes, *,
                           registered: bool = True) -> None:
        """Send ``answer`` (small: it fits the socket buffer), half-close, and discard what still comes for a moment:
        closing on unread bytes would send a reset, which can make the client lose the answer."""
        try:
            connection.sock.send(answer)
            connection.sock.shutdown(socket.SHUT_WR)
        except OSError:
            if not registered:
                self._parked[connection.sock] = connection  # so that _drop counts it out
            self._drop(selector, connection)
            return
        connection.lingering = True
        connection.buffer = bytearray()
        connection.deadline = time.monotonic() + _LINGER_SECONDS
        if not registered:
            self._park(selector, connection)

    def _take_back(self, selector: selectors.BaseSelector) -> None:
        """Park the connections workers handed back (kept alive, or lingering before their close)."""
        try:
            while self._wake_out.recv(4096):
                pass
        except (BlockingIOError, InterruptedError):
            pass
        while True:
            with self._guard:
                if not self._returned:
                    return
                connection = self._returned.popleft()
            self._park(selector, connection)

    # ---- the workers

    def _hand_out(self, connection: _Connection) -> None:
        """Queue ``connection`` for a worker: an idle one, else a new one while there are fewer than ``workers``
        (an idle hub keeps no more threads than its busiest moment needed)."""
        self._jobs.put(connection)
        with self._guard:
            if self._idle_workers:
                self._idle_workers -= 1
                return
            if len(self._workers) >= self.limits.workers:
                return  # all busy: the job waits for the first to finish
            worker = threading.Thread(target=self._work, name=f"tgbhub-hub-worker-{len(self._workers)}",
                                      daemon=True)
            self._workers.append(worker)
        worker.start()

    def _work(self) -> None:
        while True:
            connection = self._jobs.get()
            if connection is None:
                return
            self._answer(connection)
            with self._guard:
                self._idle_workers += 1

    def _answer(self, connection: _Connection) -> None:
        """Answer the request whose head ``connection`` holds, and any that follow it already read; then hand the
        connection back to the loop: to wait for its next request, or to linger and close."""
        sock = connection.sock
        try:
            sock.settimeout(_IO_TIMEOUT)
            while True:
                handler = _FrontHandler(connection, self)
                connection.buffer = bytearray(handler.rfile.leftover())
                connection.scanned = 0
                if handler.close_connection or self._stopping.is_set():
                    sock.shutdown(socket.SHUT_WR)
                    connection.lingering = True
                    connection.buffer = bytearray()
                    connection.deadline = time.monotonic() + _LINGER_SECONDS
                    break
                if not connection.head_complete() and _readable_within(sock, _NEXT_REQUEST_WAIT):
                    try:
                        connection.buffer += sock.recv(65536)
                    except OSError:
                        pass
                if not connection.head_complete():
                    connection.awaiting = not connection.buffer
                    wait = self.limits.idle_timeout if connection.awaiting else self.limits.header_timeout
                    connection.deadline = time.monotonic() + wait
                    break
            sock.setblocking(False)
        except OSError:  # the client went away, or stalled past _IO_TIMEOUT
            self._close(sock)
            return
        except Exception:  # a bug: say it (the client sees its connection closed), and serve on
            print(f"tgbhub hub: error while answering {connection.address}:\n{traceback.format_exc()}",
                  file=sys.stderr, flush=True)
            self._close(sock)
            return
        with self._guard:
            back = not self._loop_done
            if back:
                self._returned.append(connection)
        if not back:
            self._close(sock)
            return
        try:
            self._wake_in.send(b"\0")
        except OSError:  # full: the loop has a wake-up pending already; or closed: the server is stopping
            pass

    # ---- stopping

    def shutdown(self) -> None:
        """Stop the loop (connections waiting for a request are closed) and wait for it; workers finish what they
        are answering."""
        with self._guard:
            self._stopping.set()
            running = self._loop_running
        try:
            self._wake_in.send(b"\0")
        except OSError:
            pass
        if running:
            self._stopped.wait()

    def server_close(self) -> None:
        super().server_close()
        with self._guard:
            started = len(self._workers)
        for _ in range(started):
            self._jobs.put(None)
        with self._guard:
            for reader in self._readers.values():
                reader.close()
            self._readers.clear()
        for end in (self._wake_in, self._wake_out):
            end.close()

    def _close(self, sock: socket.socket) -> None:
        with self._guard:
            self._open.discard(sock)
        try:
            sock.close()
        except OSError:
            pass

    def close_connections(self) -> None:
        """End every open connection, those a worker is answering included (their sends and receives fail)."""
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


class _Refused(Exception):
    """A request body the front will not take: the status to answer and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _FrontHandler(BaseHTTPRequestHandler):
    """Serves LFS file downloads and not-found answers itself, and relays every other request to olah.

    One handler answers one request, in a worker thread; the server's loop, not a thread, waits for the next.
    """

    protocol_version = "HTTP/1.1"
    server: FrontServer
    rfile: _Reader

    def __init__(self, connection: _Connection, server: FrontServer) -> None:
        self._head = bytes(connection.buffer)
        self._body_length = 0
        self._chunked = False
        self._body_pending = False  # a body declared and not read yet
        self._framing: bool | None = None  # whether the body's framing was accepted (None: not looked at yet)
        super().__init__(connection.sock, connection.address, server)

    def setup(self) -> None:
        self.connection = self.request
        self.rfile = _Reader(self.connection, self._head)
        self.wfile = _Writer(self.connection)

    def handle(self) -> None:
        self.close_connection = True
        self.handle_one_request()
        if self._body_pending:  # an unread body would be taken for the next request
            self.close_connection = True

    def finish(self) -> None:
        pass  # the connection outlives the handler: the server parks it, or lingers and closes it

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass  # a Hub request log is olah's job; the front stays quiet

    def parse_request(self) -> bool:
        return super().parse_request() and self._body_accepted()

    def handle_expect_100(self) -> bool:
        # refuse an oversized body before inviting the client to send it
        return self._body_accepted() and super().handle_expect_100()

    def _body_accepted(self) -> bool:
        """Check how the request's body is framed and how large it says it is; answer and return False when the
        front will not read it (413 over ``max_body_bytes``, 400 or 501 for framing it cannot trust)."""
        if self._framing is not None:
            return self._framing
        encodings = self.headers.get_all("Transfer-Encoding") or []
        lengths = [value.strip() for value in self.headers.get_all("Content-Length") or []]
        limit = self.server.limits.max_body_bytes
        refusal: tuple[int, str] | None = None
        if encodings and lengths:
            refusal = (400, "the request has both Transfer-Encoding and Content-Length, which is ambiguous; send one")
        elif encodings:
            names = [name.strip().lower() for name in ",".join(encodings).split(",")]
            if names != ["chunked"]:
                refusal = (501, f"Transfer-Encoding {', '.join(encodings)!r} is not supported; send the body with "
                                "Content-Length or Transfer-Encoding: chunked")
            else:
                self._chunked = self._body_pending = True
        elif lengths:
            if len(set(lengths)) != 1 or not re.fullmatch(r"[0-9]{1,19}", lengths[0]):
                refusal = (400, f"Content-Length {', '.join(lengths)!r} is not one whole number of bytes")
            elif int(lengths[0]) > limit:
                refusal = (413, f"the request body of {int(lengths[0])} bytes is over this hub's limit of {limit} "
                                "bytes (start_local_hub's max_body_bytes)")
            else:
                self._body_length = int(lengths[0])
                self._body_pending = self._body_length > 0
        self._framing = refusal is None
        if refusal is not None:
            self._send_refusal(*refusal)
        return self._framing

    def _send_refusal(self, status: int, message: str) -> None:
        """Answer ``status`` with ``message`` as plain text, and close the connection after it."""
        body = (message + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _read_body(self) -> bytes | None:
        """The request's body, None when it has none (the framing was accepted already).

        Raises:
            _Refused: a chunked body over ``max_body_bytes`` (413), or one that is malformed or cut short (400).
        """
        if not self._body_pending:
            return None
        # a whole-body deadline: a client trickling a byte now and then would otherwise hold a worker for good
        self.rfile.deadline = time.monotonic() + _IO_TIMEOUT
        try:
            if self._chunked:
                body = self._read_chunked(self.server.limits.max_body_bytes)
            else:
                body = self.rfile.read(self._body_length)
                if len(body) < self._body_length:
                    raise _Refused(400, f"the request body ended after {len(body)} of its {self._body_length} bytes")
        finally:
            self.rfile.deadline = None
            self.connection.settimeout(_IO_TIMEOUT)
        self._body_pending = False
        return body

    def _read_chunked(self, limit: int) -> bytes:
        body = bytearray()
        while True:
            line = self.rfile.readline(1024)
            size = re.fullmatch(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?\r?\n", line)
            if size is None:
                raise _Refused(400, f"malformed chunk size line {line[:40]!r} in a chunked request body")
            length = int(size.group(1), 16)
            if length == 0:
                break
            if len(body) + length > limit:
                raise _Refused(413, f"the chunked request body is over this hub's limit of {limit} bytes "
                                    "(start_local_hub's max_body_bytes)")
            chunk = self.rfile.read(length)
            if len(chunk) < length or self.rfile.readline(3) not in (b"\r\n", b"\n"):
                raise _Refused(400, "a chunk of the chunked request body is cut short or not followed by CRLF")
            body += chunk
        for _ in range(100):  # trailer fields, dropped
            if self.rfile.readline(65537) in (b"\r\n", b"\n", b""):
                return bytes(body)
        raise _Refused(400, "the chunked request body's trailer has more than 100 lines")

    def _front_authority(self) -> str:
        """``host:port`` as the client addressed the front (its Host header), or the address the front is bound to."""
        host = self.headers.get("Host", "").strip()
        if _AUTHORITY.fullmatch(host):
            return host
        address, port = self.server.server_address[:2]
        return f"{address!s}:{port}"

    def do_HEAD(self) -> None:
        self._dispatch(send_body=False)

    def do_GET(self) -> None:
        self._dispatch(send_body=True)

    def do_POST(self) -> None:
        if claimed("POST", self.path) is None:
            self._relay()
            return
        try:
            body = self._read_body()
        except _Refused as refused:
            self._send_refusal(refused.status, str(refused))
            return
        self._answer_api(body, send_body=True)

    def _dispatch(self, send_body: bool) -> None:
        if self.server.site is not None and self._serve_site(self.server.site, send_body):
            return
        if claimed(self.command, self.path) is not None:
            self._answer_api(None, send_body)
            return
        # a dataset's Croissant view, computed for the address this client used (tgbhub.hub.croissant)
        view = served_view(self.server.hub_root, self.path, self._front_authority(), self.server.reader)
        if view is not None:
            self._send_page(200, view.body, "application/json; charset=utf-8", send_body, view.headers)
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

        A missing repo is a 404 ``RepoNotFound``, as the Hub API's own answers (:mod:`tgbhub.hub.answers`).
        """
        match = _RESOLVE.fullmatch(self.path.split("?", 1)[0])
        if match is None:
            return None
        kind, org, name, revision, path = (unquote(part) for part in match.groups())
        if ".." in path.split("/") or any(part in ("", ".", "..") or "/" in part for part in (org, name)):
            return None
        found = self.server.answers.repo(kind, org, name)
        if found is None:
            return _Missing("RepoNotFound", "Repository not found")
        repo = found.path
        if not (repo / ".git").is_dir():  # a bare repo: olah reads its LFS objects
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

    def _answer_api(self, body: bytes | None, send_body: bool) -> None:
        """Answer a Hub API request :mod:`tgbhub.hub.answers` claims; 500 when git cannot be asked (never a false
        "not found")."""
        try:
            answer = self.server.answers.answer(self.command, self.path, body)
        except OSError as exc:
            answer = Answer(500, json.dumps({"error": f"the hub could not read its git repo: {exc}"}).encode())
        if answer is None:  # claimed() said otherwise: cannot happen, but olah can still answer
            self._relay()
            return
        self._send_page(answer.status, answer.body, "application/json; charset=utf-8", send_body,
                        dict(answer.headers))

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
        try:
            body = self._read_body()
        except _Refused as refused:
            self._send_refusal(refused.status, str(refused))
            return
        host, port = self.server.upstream
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
        # olah builds absolute URLs (a 307's Location, say) from its own address, which the client cannot reach
        # and must not learn: they name the front, as the client addressed it
        front = self._front_authority()
        self.send_response(response.status, response.reason)
        for key, value in response.getheaders():
            if key.lower() not in _HOP_BY_HOP:
                self.send_header(key, self.server.unrelayed(value, front))
        # API answers only: a file's bytes are the dataset's, never altered
        if _RESOLVE.fullmatch(self.path.split("?", 1)[0]) is None and \
                _TEXT_TYPES.match(response.getheader("Content-Type") or ""):
            payload = self.server.unrelayed_body(payload, front)
        declared = response.getheader("Content-Length")
        self.send_header("Content-Length", declared if self.command == "HEAD" and declared else str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)


class _Reader(io.BufferedIOBase):
    """A request's bytes for its handler: the head the server's loop read, then the socket. What is left over after
    the request (the start of a pipelined next one) goes back to the loop with the connection."""

    def __init__(self, sock: socket.socket, head: bytes) -> None:
        self._sock = sock
        self._buffer = bytearray(head)
        #: when set, the time (monotonic) by which what is still read must have arrived
        self.deadline: float | None = None

    def readable(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> bytes:
        size = -1 if size is None else size
        start = 0
        while True:
            end = self._buffer.find(b"\n", start)
            if end >= 0:
                return self._take(end + 1 if size < 0 else min(end + 1, size))
            if 0 <= size <= len(self._buffer):
                return self._take(size)
            start = len(self._buffer)
            if not self._fill():
                return self._take(len(self._buffer))

    def read(self, size: int | None = -1) -> bytes:
        size = -1 if size is None else size
        while (size < 0 or len(self._buffer) < size) and self._fill():
            pass
        return self._take(len(self._buffer) if size < 0 else min(size, len(self._buffer)))

    def leftover(self) -> bytes:
        """What was read past the request, taken out."""
        return self._take(len(self._buffer))

    def _take(self, count: int) -> bytes:
        data = bytes(self._buffer[:count])
        del self._buffer[:count]
        return data

    def _fill(self) -> bool:
        """Receive more; False at the end of the stream.

        Raises:
            TimeoutError: past :attr:`deadline`, or no byte for ``_IO_TIMEOUT`` seconds.
        """
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the request did not arrive in time")
            self._sock.settimeout(min(left, _IO_TIMEOUT))
        chunk = self._sock.recv(256 * 1024)
        self._buffer += chunk
        return bool(chunk)


class _Writer(io.BufferedIOBase):
    """The handler's ``wfile``: every write goes straight to the socket (the handler joins its headers itself)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._sock.sendall(data)
        return len(data)


def _readable_within(sock: socket.socket, seconds: float) -> bool:
    """Whether ``sock`` has bytes (or its end) to read within ``seconds``."""
    if hasattr(select, "poll"):  # select.select cannot wait on a descriptor numbered 1024 or more
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(seconds * 1000))
    return bool(select.select([sock], [], [], seconds)[0])


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
