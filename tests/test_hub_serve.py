"""The local Hub (`tgbhub hub serve`): real Hugging Face clients against olah plus the LFS front, on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import numpy as np
import pytest

import tgbhub
from tgbhub.errors import HubServerError
from tgbhub.hub.serve import LocalHub, start_local_hub
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
        lo, hi = ds.splits[split]
        expected = np.asarray(ds.states[lo:hi])
        assert trajectory == np.repeat(np.arange(lo, hi), ds.num_steps).tolist()
        assert step == np.tile(np.arange(ds.num_steps), hi - lo).tolist()
        np.testing.assert_array_equal(np.asarray(state), expected.reshape(-1, ds.num_nodes))  # bit for bit


def test_busy_port_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(HubServerError, match=rf"cannot serve on 127\.0\.0\.1:{port}: .*--port 0"):
            start_local_hub(tmp_path, port=port)


def test_missing_root_is_refused_and_left_alone(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-hub"
    with pytest.raises(HubServerError, match=rf"{re.escape(str(missing))} does not exist.*--to git:"):
        start_local_hub(missing)
    assert not missing.exists()


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


def test_missing_olah_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "olah" else real(name, *a))
    with pytest.raises(HubServerError, match=r"pip install 'tgbhub\[serve\]'"):
        start_local_hub(tmp_path)


@pytest.mark.slow
def test_whole_family_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's acceptance, end to end with the CLI: publish all of T-GRAB to git:, serve it, load every dataset
    from it (rows equal the local build), read every config with `datasets`, stop the server, load from the cache."""
    from tgbhub.cli import main

    root, cache = tmp_path / "hub", tmp_path / "cache"
    names = tgbhub.api.registry().names("t-grab", derived=False)  # the 52 base datasets (variants: test_tlpcf.py)
    assert main(["--cache-dir", str(tmp_path / "publish-cache"), "publish", "t-grab", "--version", "1.0.0",
                 "--to", f"git:{root}", "--datasets", ",".join(n.split("/")[1] for n in names)]) == 0
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
