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
Every row is measured (nothing extrapolated). Medians over --repeats runs, interleaved; throughput = bytes / median
seconds; ratio = peer seconds / our seconds (above 1: faster than the peer).
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from scripts._table import print_table
from tgbhub.api import resolve
from tgbhub.hub.layout import dataset_tag, file_path, repo_id
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
events {{ worker_connections 64; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
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
def _nginx(root: Path, work: Path) -> Iterator[str]:
    """nginx serving ``root`` on a free loopback port, from a config, pid and logs under ``work``."""
    work.mkdir()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    conf = work / "nginx.conf"
    conf.write_text(_NGINX_CONF.format(work=work, port=port, root=root))
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
                    raise SystemExit(f"nginx did not start on 127.0.0.1:{port}: {log}{process.stderr.read()}")
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
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


def _stream(base: str, manifest: object, folder: Path) -> float:
    """tgbhub's own HTTP streamer (what the Hub source runs after resolving a file), straight from a static server."""
    import requests

    started = time.perf_counter()
    with requests.Session() as session:
        for entry in manifest.files:  # type: ignore[attr-defined]
            stream_to_file(session, f"{base}/{entry.name}", folder / entry.name, entry.size)
    return time.perf_counter() - started


def _hf_download(url: str, manifest: object, folder: Path) -> float:
    from huggingface_hub import hf_hub_download

    started = time.perf_counter()
    for entry in manifest.files:  # type: ignore[attr-defined]
        hf_hub_download(repo_id(manifest.family, "tgbhub"), file_path(manifest, entry.name),  # type: ignore[arg-type]
                        repo_type="dataset", revision=dataset_tag(manifest.short_name, manifest.version),  # type: ignore
                        local_dir=folder, endpoint=url)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="chaosnet/k2.0-rho0.2-n8",
                        help="dataset to fetch (default: %(default)s, one 128 MB file; t-grab/psto-64-p90 is the "
                             "largest T-GRAB dataset, 3 files, 21 MB)")
    parser.add_argument("--repeats", type=int, default=7, help="runs per method (median reported)")
    args = parser.parse_args()
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
        with start_local_hub(work / "hub") as hub, _nginx(static, work / "nginx") as nginx_url:
            olah_url = f"http://{hub.front.upstream[0]}:{hub.front.upstream[1]}"
            repo, tag = repo_id(manifest.family, "tgbhub"), dataset_tag(manifest.short_name, manifest.version)
            resolve_urls = [f"/datasets/{repo}/resolve/{tag}/{file_path(manifest, e.name)}" for e in manifest.files]
            source = HubSource(hub.url, "tgbhub")
            times: dict[str, list[float]] = {"hub": [], "stream": [], "nginx": [], "python": [], "hf": [], "front": [],
                                             "olah": []}
            for run in range(args.repeats + 1):  # the first run warms caches and imports and is discarded
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
