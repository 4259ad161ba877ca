"""Hub fetch throughput (run through `scripts/bench hub`): the local Hub vs raw loopback HTTP, same files, same run.

1. Publish one dataset (default: the largest T-GRAB one) to a git: root and serve it with `tgbhub hub serve`'s code.
2. tgbhub's Hub source fetches every file of the dataset into a fresh folder (huggingface_hub resolves each file at
   the version tag, then the bytes stream in 1 MiB reads).
3. The peer: `curl` fetches the same files from nginx (Debian's nginx-light, `sendfile on`), which this script
   starts on 127.0.0.1 with a generated config in a temporary folder (pid, logs and temp paths there, no root
   needed) serving the very same bytes. A second peer row uses Python's threaded `http.server` handler, for
   reference.
4. Every row pairs one of our fetches with a peer doing the same work: the Hub source (in-process) against the
   very same 1 MiB HTTP streamer reading straight from nginx (what the Hub's resolution and front cost) and against
   huggingface_hub's own `hf_hub_download` from the same Hub; curl from the Hub front (and, for context, from olah
   alone and from Python's `http.server`) against curl from nginx.
5. Under load (``--cases load``): honest clients (--clients threads, --requests ranged 64 KiB GETs in all, kept
   alive) fetch from the front, once alone and once beside --held connections that send half a request head and
   never finish it plus --posts clients each sending a 300 MB body; the peer is the same load on nginx, configured
   with the front's limits (10 s for a request head, 15 s idle, 16 MiB bodies, 1000-odd connections). The load runs
   in a separate process, so it never shares our server's interpreter.
Every row is measured (nothing extrapolated). Medians over --repeats runs, interleaved; throughput = bytes / median
seconds; ratio = peer seconds / our seconds (above 1: faster than the peer).
"""

from __future__ import annotations

import argparse
import functools
import http.client
import multiprocessing
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from scripts._table import print_table
from tgbhub.api import resolve
from tgbhub.hub.layout import dataset_tag, file_path, repo_id
from tgbhub.hub.front import HEADER_TIMEOUT, IDLE_TIMEOUT, MAX_BODY_BYTES, MAX_CONNECTIONS
from tgbhub.hub.serve import start_local_hub
from tgbhub.publish import parse_target, publish
from tgbhub.sources.hf import HubSource
from tgbhub.sources.http import stream_to_file


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


_NGINX_CONF = """\
daemon off;
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/error.log warn;
events {{ worker_connections {connections}; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    # the hub front's limits (tgbhub.hub.serve), so that the load case asks both servers the same
    client_header_timeout {header_timeout}s;
    keepalive_timeout {idle_timeout}s;
    client_max_body_size {max_body}k;
    client_body_temp_path {work}/client;
    proxy_temp_path {work}/proxy;
    fastcgi_temp_path {work}/fastcgi;
    uwsgi_temp_path {work}/uwsgi;
    scgi_temp_path {work}/scgi;
    types {{ }}
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{port};
        root {root};
    }}
}}
"""


def _nginx_binary() -> str:
    found = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.path.exists(p)), None)
    if found is None:
        raise SystemExit("scripts/bench hub needs nginx as its static-server peer; install Debian's nginx-light "
                         "(apt-get install -y nginx-light) and run it again")
    return found


@contextmanager
def _nginx(root: Path, work: Path) -> Iterator[tuple[str, int]]:
    """nginx serving ``root`` on a free loopback port, from a config, pid and logs under ``work``: its URL and the
    master's process id."""
    work.mkdir()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    conf = work / "nginx.conf"
    # connections: the front's cap, plus nginx's own count of the listening socket and its upstream-less spare
    conf.write_text(_NGINX_CONF.format(work=work, port=port, root=root, connections=MAX_CONNECTIONS + 24,
                                       header_timeout=f"{HEADER_TIMEOUT:g}", idle_timeout=f"{IDLE_TIMEOUT:g}",
                                       max_body=MAX_BODY_BYTES // 1024))
    process = subprocess.Popen([_nginx_binary(), "-p", str(work), "-c", str(conf), "-e", str(work / "error.log")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    log = (work / "error.log").read_text() if (work / "error.log").exists() else ""
                    errors = process.stderr.read().decode(errors="replace")  # type: ignore[union-attr]
                    raise SystemExit(f"nginx did not start on 127.0.0.1:{port}: {log}{errors}") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}", process.pid
    finally:
        process.terminate()
        process.wait(timeout=10)


def _curl(urls: list[str], folder: Path) -> float:
    args = ["curl", "-sS", "--fail"]
    for index, url in enumerate(urls):
        args += ["-o", str(folder / f"f{index}"), url]
    started = time.perf_counter()
    subprocess.run(args, check=True)
    return time.perf_counter() - started


def _hub_fetch(source: HubSource, name: str, folder: Path) -> float:
    manifest = resolve(name)
    started = time.perf_counter()
    source.fetch(manifest, folder)
    return time.perf_counter() - started


def _stream(base: str, manifest: Any, folder: Path) -> float:
    """tgbhub's own HTTP streamer (what the Hub source runs after resolving a file), straight from a static server."""
    import requests

    started = time.perf_counter()
    with requests.Session() as session:
        for entry in manifest.files:
            stream_to_file(session, f"{base}/{entry.name}", folder / entry.name, entry.size)
    return time.perf_counter() - started


def _hf_download(url: str, manifest: Any, folder: Path) -> float:
    from huggingface_hub import hf_hub_download

    started = time.perf_counter()
    for entry in manifest.files:
        hf_hub_download(repo_id(manifest.family, "tgbhub"), file_path(manifest, entry.name),
                        repo_type="dataset", revision=dataset_tag(manifest.short_name, manifest.version),
                        local_dir=folder, endpoint=url)
    return time.perf_counter() - started


#: the head a held connection sends: a request line and one header, and never the blank line that ends it
_PARTIAL_HEAD = b"GET / HTTP/1.1\r\nHost: bench\r\n"
#: what a large-body client declares, and sends as long as the server lets it
_LARGE_BODY = 300_000_000


def _load_client(address: tuple[str, int], path: str, held: int, clients: int, requests: int, posts: int) -> dict[
        str, Any]:
    """The load, run in its own process: ``held`` connections that never finish a request head, ``posts`` clients
    streaming a 300 MB body, and ``clients`` honest keep-alive clients making ``requests`` ranged 64 KiB GETs of
    ``path`` in all, timed. Returns the honest clients' seconds and latencies, their failures, the large-body
    answers (status, seconds, bytes sent before it) and how many held connections were still open at the end."""
    sockets = []
    for _ in range(held):
        try:
            sock = socket.create_connection(address, timeout=10)
            sock.sendall(_PARTIAL_HEAD)
            sockets.append(sock)
        except OSError:
            pass
    answers: list[tuple[object, float, int]] = []
    lock = threading.Lock()

    def large_body() -> None:
        started, sent = time.perf_counter(), 0
        status: object = "no answer"
        answered = threading.Event()
        try:
            sock = socket.create_connection(address, timeout=30)
        except OSError as exc:
            with lock:
                answers.append((type(exc).__name__, time.perf_counter() - started, 0))
            return

        def send() -> None:
            nonlocal sent
            chunk = b"x" * (1 << 20)
            try:
                sock.sendall(b"POST /upload HTTP/1.1\r\nHost: bench\r\nContent-Type: application/octet-stream\r\n"
                             b"Content-Length: %d\r\n\r\n" % _LARGE_BODY)
                while sent < _LARGE_BODY and not answered.is_set():
                    sock.sendall(chunk)
                    sent += len(chunk)
            except OSError:
                pass

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        try:
            response = http.client.HTTPResponse(sock)
            response.begin()
            status = response.status
        except OSError as exc:
            status = type(exc).__name__
        finally:
            answered.set()
        elapsed = time.perf_counter() - started
        sock.close()
        sender.join(timeout=5)
        with lock:
            answers.append((status, elapsed, sent))

    latencies: list[float] = []
    failures: list[str] = []

    def honest(count: int) -> None:
        connection = http.client.HTTPConnection(*address, timeout=30)
        mine, wrong = [], []
        for _ in range(count):
            started = time.perf_counter()
            try:
                connection.request("GET", path, headers={"Range": "bytes=0-65535"})
                response = connection.getresponse()
                body = response.read()
                if response.status != 206 or len(body) != 65536:
                    wrong.append(f"status {response.status}, {len(body)} bytes")
            except OSError as exc:
                wrong.append(type(exc).__name__)
                connection.close()
            mine.append(time.perf_counter() - started)
        connection.close()
        with lock:
            latencies.extend(mine)
            failures.extend(wrong)

    posters = [threading.Thread(target=large_body) for _ in range(posts)]
    for thread in posters:
        thread.start()
    workers = [threading.Thread(target=honest, args=(requests // clients,)) for _ in range(clients)]
    started = time.perf_counter()
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    seconds = time.perf_counter() - started
    for thread in posters:
        thread.join()
    still_open = 0
    for sock in sockets:
        try:
            sock.setblocking(False)  # with a time-out set, recv would wait for the answer
            sock.recv(1, socket.MSG_PEEK)  # an answer (408) or the end: no longer held
        except BlockingIOError:
            still_open += 1  # nothing to read and not closed: the server is still holding it
        except OSError:
            pass
        sock.close()
    return {"seconds": seconds, "latencies": latencies, "failures": failures, "answers": answers,
            "held_open": still_open, "held": len(sockets)}


def _threads_of(pid: int) -> int:
    """Threads of process ``pid`` and its children (nginx: master and workers), from /proc."""
    total = len(os.listdir(f"/proc/{pid}/task"))
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return total + sum(len(os.listdir(f"/proc/{child}/task")) for child in children)


def _under_load(address: tuple[str, int], path: str, count_threads: Any, held: int, clients: int, requests: int,
                posts: int) -> dict[str, Any]:
    """Run :func:`_load_client` in a fresh process against ``address``, sampling the server's threads meanwhile."""
    peak = [count_threads()]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak.append(count_threads())

    sampler = threading.Thread(target=sample, daemon=True)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        pool.submit(abs, 0).result()  # the process starts (imports) before the clock does
        sampler.start()
        try:
            result = pool.submit(_load_client, address, path, held, clients, requests, posts).result()
        finally:
            done.set()
            sampler.join()
    result["threads"] = max(peak)
    return result


def _load_rows(hub_url: str, hub_path: str, nginx_url: str, nginx_path: str, nginx_pid: int,
               args: argparse.Namespace) -> None:
    """Run the load case on the front and on nginx, alone and beside the hostile load, and print its table."""
    def address(url: str) -> tuple[str, int]:
        host, port = url.removeprefix("http://").rsplit(":", 1)
        return host, int(port)

    ours_threads = lambda: threading.active_count() - 1  # noqa: E731 - every thread here but the sampler's
    # a warm-up, discarded: the front's git lookup processes start, the page cache fills
    for url, path in ((hub_url, hub_path), (nginx_url, nginx_path)):
        _under_load(address(url), path, lambda: 0, 0, args.clients, args.clients * 10, 0)
    runs: dict[tuple[str, bool], dict[str, Any]] = {}
    for loaded in (False, True):
        held, posts = (args.held, args.posts) if loaded else (0, 0)
        runs["ours", loaded] = _under_load(address(hub_url), hub_path, ours_threads, held, args.clients,
                                           args.requests, posts)
        runs["nginx", loaded] = _under_load(address(nginx_url), nginx_path, lambda: _threads_of(nginx_pid), held,
                                            args.clients, args.requests, posts)
    n = args.requests // args.clients * args.clients
    print(f"\nUnder load: {args.clients} honest keep-alive clients, {n} ranged 64 KiB GETs in all; loaded: beside "
          f"{args.held} connections that never finish a request head and {args.posts} clients each sending a "
          f"{_LARGE_BODY // 1_000_000} MB body (one run each, ours and the peer back to back)")
    header = ("case", "ours: seconds", "req/s", "p99 ms", "failed", "threads", "peer (same work)", "peer seconds",
              "peer req/s", "peer p99 ms", "peer failed", "peer threads", "ratio (peer s / ours)")

    def cells(run: dict[str, Any]) -> list[str]:
        latencies = sorted(run["latencies"])
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000
        return [f"{run['seconds']:.2f}", f"{n / run['seconds']:.0f}", f"{p99:.1f}", str(len(run["failures"])),
                str(run["threads"])]

    table = []
    for loaded in (False, True):
        label = "honest clients alone" if not loaded else f"the same beside {args.held} held + {args.posts} large"
        ours, peer = runs["ours", loaded], runs["nginx", loaded]
        table.append((label, *cells(ours), f"nginx {_nginx_version()}", *cells(peer),
                      f"{peer['seconds'] / ours['seconds']:.2f}"))
    print_table(header, table)
    for name in ("ours", "nginx"):
        run = runs[name, True]
        statuses = sorted({str(status) for status, _, _ in run["answers"]})
        seconds = statistics.median(elapsed for _, elapsed, _ in run["answers"]) if run["answers"] else 0.0
        sent = max((count for _, _, count in run["answers"]), default=0)
        print(f"- {name}: large bodies answered {', '.join(statuses) or 'never'} in a median {seconds:.3f} s, at most "
              f"{sent / 1e6:.0f} MB sent before the answer; held connections still open after the run: "
              f"{run['held_open']}/{run['held']}; failures: {sorted(set(run['failures']))[:3] or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="chaosnet/k2.0-rho0.2-n8",
                        help="dataset to fetch (default: %(default)s, one 128 MB file; t-grab/psto-64-p90 is the "
                             "largest T-GRAB dataset, 3 files, 21 MB)")
    parser.add_argument("--repeats", type=int, default=7, help="runs per method (median reported)")
    parser.add_argument("--cases", default="throughput,load",
                        help="which tables: throughput (fetch speed), load (serving beside hostile clients); "
                             "default: %(default)s")
    parser.add_argument("--held", type=int, default=500, help="load case: connections that never finish a request "
                                                              "head (default: %(default)s)")
    parser.add_argument("--clients", type=int, default=50, help="load case: honest clients (default: %(default)s)")
    parser.add_argument("--requests", type=int, default=5000, help="load case: honest requests in all (default: "
                                                                   "%(default)s)")
    parser.add_argument("--posts", type=int, default=20, help="load case: clients sending a 300 MB body (default: "
                                                              "%(default)s)")
    args = parser.parse_args()
    cases = {case.strip() for case in args.cases.split(",")}
    if not cases <= {"throughput", "load"}:
        raise SystemExit(f"--cases {args.cases!r}: choose from throughput, load (comma-separated)")
    if shutil.which("curl") is None:
        raise SystemExit("scripts/bench hub needs curl (apt-get install curl)")
    _nginx_binary()  # fail before the long publish, not after
    manifest = resolve(args.dataset)
    with tempfile.TemporaryDirectory(prefix="tgbhub-bench-hub-") as scratch:
        work = Path(scratch)
        publish(manifest.family, manifest.version, parse_target(f"git:{work / 'hub'}"),
                datasets=[manifest.short_name], cache_dir=work / "cache")
        static = work / "static"
        static.mkdir()
        # nginx started by root serves as "nobody", which must be able to reach the (public) files
        for folder in (work, static):
            folder.chmod(0o755)
        for entry in manifest.files:  # the same bytes, as plain files
            shutil.copyfile(work / "cache" / manifest.family / manifest.short_name / manifest.version / entry.name,
                            static / entry.name)
        total = sum(entry.size for entry in manifest.files)
        server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(static)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        python_url = f"http://127.0.0.1:{server.server_address[1]}"
        with start_local_hub(work / "hub") as hub, _nginx(static, work / "nginx") as (nginx_url, nginx_pid):
            olah_url = f"http://{hub.front.upstream[0]}:{hub.front.upstream[1]}"
            repo, tag = repo_id(manifest.family, "tgbhub"), dataset_tag(manifest.short_name, manifest.version)
            resolve_urls = [f"/datasets/{repo}/resolve/{tag}/{file_path(manifest, e.name)}" for e in manifest.files]
            source = HubSource(hub.url, "tgbhub")
            times: dict[str, list[float]] = {"hub": [], "stream": [], "nginx": [], "python": [], "hf": [], "front": [],
                                             "olah": []}
            if "load" in cases:
                _load_rows(hub.url, resolve_urls[0], nginx_url, f"/{manifest.files[0].name}", nginx_pid, args)
            for run in range(args.repeats + 1 if "throughput" in cases else 0):  # the first run warms caches
                for method in times:
                    folder = work / f"{method}-{run}"
                    folder.mkdir()
                    if method == "hub":
                        seconds = _hub_fetch(source, args.dataset, folder)
                    elif method == "hf":
                        seconds = _hf_download(hub.url, manifest, folder)
                    elif method == "stream":
                        seconds = _stream(nginx_url, manifest, folder)
                    elif method in ("nginx", "python"):
                        base = nginx_url if method == "nginx" else python_url
                        seconds = _curl([f"{base}/{e.name}" for e in manifest.files], folder)
                    else:
                        base = hub.url if method == "front" else olah_url
                        seconds = _curl([base + path for path in resolve_urls], folder)
                    if run:
                        times[method].append(seconds)
                    shutil.rmtree(folder)
        server.shutdown()
    if "throughput" not in cases:
        return
    medians = {method: statistics.median(values) for method, values in times.items()}
    mb = total / 1e6
    nginx = f"nginx {_nginx_version()}"
    pairs = [
        ("tgbhub Hub source (what load_dataset runs), local Hub", "hub",
         f"the same 1 MiB streamer from {nginx}", "stream"),
        ("tgbhub Hub source (what load_dataset runs), local Hub", "hub",
         "huggingface_hub hf_hub_download, same Hub", "hf"),
        ("curl from the local Hub front", "front", f"curl from {nginx} (sendfile)", "nginx"),
        ("curl from olah alone (no front), for context", "olah", f"curl from {nginx} (sendfile)", "nginx"),
        ("curl from Python http.server, for context", "python", f"curl from {nginx} (sendfile)", "nginx"),
    ]
    print(f"{args.dataset}: {len(manifest.files)} files, {mb:.1f} MB; medians of {args.repeats} interleaved runs; "
          "every row measured, each against a peer doing the same work")
    header = ("ours", "seconds", "MB/s", "peer (same work)", "peer seconds", "peer MB/s", "ratio (peer s / ours)")
    table = [(label, f"{medians[ours]:.4f}", f"{mb / medians[ours]:.0f}", peer_label, f"{medians[peer]:.4f}",
              f"{mb / medians[peer]:.0f}", f"{medians[peer] / medians[ours]:.2f}")
             for label, ours, peer_label, peer in pairs]
    print_table(header, table)


def _nginx_version() -> str:
    done = subprocess.run([_nginx_binary(), "-v"], capture_output=True, text=True)
    return (done.stderr or done.stdout).strip().rsplit("/", 1)[-1]


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    main()
