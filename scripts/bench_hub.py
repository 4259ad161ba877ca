"""Hub fetch throughput (run through `scripts/bench hub`): the local Hub vs raw loopback HTTP, same files, same run.

1. Publish one dataset (default: the largest T-GRAB one) to a git: root and serve it with `tgbhub hub serve`'s code.
2. tgbhub's Hub source fetches every file of the dataset into a fresh folder (huggingface_hub resolves each file at
   the version tag, then the bytes stream in 1 MiB reads).
3. `curl` fetches the same files from a plain static server (`python -m http.server`'s handler, threaded) serving
   the very same bytes.
4. For context: huggingface_hub's own `hf_hub_download` of the same files, `curl` from the Hub front, and `curl`
   from olah alone (what the front replaces for LFS files).
Medians over --repeats runs, interleaved; throughput = bytes / median seconds.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _table import print_table  # noqa: E402
from tgbhub.api import resolve  # noqa: E402
from tgbhub.hub.layout import file_path, repo_id, tag_for  # noqa: E402
from tgbhub.hub.serve import start_local_hub  # noqa: E402
from tgbhub.publish import parse_target, publish  # noqa: E402
from tgbhub.sources.hf import HubSource  # noqa: E402


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


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


def _hf_download(url: str, manifest: object, folder: Path) -> float:
    from huggingface_hub import hf_hub_download

    started = time.perf_counter()
    for entry in manifest.files:  # type: ignore[attr-defined]
        hf_hub_download(repo_id(manifest.family, "tgbhub"), file_path(manifest, entry.name),  # type: ignore[arg-type]
                        repo_type="dataset", revision=tag_for(manifest.version), local_dir=folder,  # type: ignore
                        endpoint=url)
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
    manifest = resolve(args.dataset)
    with tempfile.TemporaryDirectory(prefix="tgbhub-bench-hub-") as scratch:
        work = Path(scratch)
        publish(manifest.family, manifest.version, parse_target(f"git:{work / 'hub'}"),
                datasets=[manifest.short_name], cache_dir=work / "cache")
        static = work / "static"
        static.mkdir()
        for entry in manifest.files:  # the same bytes, as plain files
            shutil.copyfile(work / "cache" / manifest.family / manifest.short_name / manifest.version / entry.name,
                            static / entry.name)
        total = sum(entry.size for entry in manifest.files)
        server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(static)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        raw_url = f"http://127.0.0.1:{server.server_address[1]}"
        with start_local_hub(work / "hub") as hub:
            olah_url = f"http://{hub.front.upstream[0]}:{hub.front.upstream[1]}"
            repo, tag = repo_id(manifest.family, "tgbhub"), tag_for(manifest.version)
            resolve_urls = [f"/datasets/{repo}/resolve/{tag}/{file_path(manifest, e.name)}" for e in manifest.files]
            source = HubSource(hub.url, "tgbhub")
            times: dict[str, list[float]] = {"hub": [], "raw": [], "hf": [], "front": [], "olah": []}
            for run in range(args.repeats + 1):  # the first run warms caches and imports and is discarded
                for method in times:
                    folder = work / f"{method}-{run}"
                    folder.mkdir()
                    if method == "hub":
                        seconds = _hub_fetch(source, args.dataset, folder)
                    elif method == "hf":
                        seconds = _hf_download(hub.url, manifest, folder)
                    elif method == "raw":
                        seconds = _curl([f"{raw_url}/{e.name}" for e in manifest.files], folder)
                    else:
                        base = hub.url if method == "front" else olah_url
                        seconds = _curl([base + path for path in resolve_urls], folder)
                    if run:
                        times[method].append(seconds)
                    shutil.rmtree(folder)
        server.shutdown()
    medians = {method: statistics.median(values) for method, values in times.items()}
    mb = total / 1e6
    rows = [
        ("tgbhub Hub source (what load_dataset runs) from the local Hub", medians["hub"], medians["raw"]),
        ("huggingface_hub hf_hub_download from the local Hub", medians["hf"], medians["raw"]),
        ("curl from the local Hub front", medians["front"], medians["raw"]),
        ("curl from olah alone (no front)", medians["olah"], medians["raw"]),
    ]
    print(f"{args.dataset}: {len(manifest.files)} files, {mb:.1f} MB; medians of {args.repeats} interleaved runs; "
          f"peer = curl of the same files from a static loopback HTTP server ({medians['raw'] * 1000:.1f} ms, "
          f"{mb / medians['raw']:.0f} MB/s)")
    header = ("fetch", "seconds", "MB/s", "peer MB/s", "throughput ratio (ours / peer)")
    table = [(label, f"{ours:.4f}", f"{mb / ours:.0f}", f"{mb / peer:.0f}", f"{peer / ours:.2f}")
             for label, ours, peer in rows]
    print_table(header, table)


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    main()
