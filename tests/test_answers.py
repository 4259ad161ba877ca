"""The Hub read API that `tgbhub hub serve` answers from git: every read call of huggingface_hub (and datasets)
against a real served hub, answers compared with git's own view of the repo."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tgbhub.hub.layout import lfs_pointer_fields
from tgbhub.hub.serve import LocalHub, start_local_hub

REPO = "tgbhub/t-grab"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def repo(hub_root: Path) -> Path:
    return hub_root / "datasets" / REPO


@pytest.fixture(scope="module")
def api(local_hub: LocalHub) -> Any:
    from huggingface_hub import HfApi

    return HfApi(endpoint=local_hub.url)


def _files(repo: Path, revision: str) -> dict[str, tuple[int, str | None, int]]:
    """``{path: (size, lfs sha256 or None, pointer size)}`` at ``revision``, from git and the LFS objects."""
    found = {}
    for line in _git(repo, "ls-tree", "-r", "-l", revision).splitlines():
        meta, path = line.split("\t", 1)
        blob_size = int(meta.split()[3])
        fields = lfs_pointer_fields(_git(repo, "cat-file", "blob", meta.split()[2]).encode())
        if fields is None:
            found[path] = (blob_size, None, blob_size)
        else:
            stored = repo / ".git" / "lfs" / "objects" / fields[0][:2] / fields[0][2:4] / fields[0]
            found[path] = (stored.stat().st_size, hashlib.sha256(stored.read_bytes()).hexdigest(), blob_size)
    return found


def test_repo_info_with_and_without_revision_and_file_metadata(api: Any, repo: Path) -> None:
    plain = api.dataset_info(REPO)
    assert plain.sha == _git(repo, "rev-parse", "main").strip() and plain.id == REPO and plain.private is False
    assert {c["config_name"] for c in plain.card_data.configs} >= {"ce-4", "ce-4-negatives", "pdet-2-1-negatives"}
    assert "license:apache-2.0" in plain.tags and api.repo_info(REPO, repo_type="dataset").sha == plain.sha
    tag = "pdet-2-1-v1.0.0"
    info = api.dataset_info(REPO, revision=tag, files_metadata=True)
    assert info.sha == _git(repo, "rev-parse", f"{tag}^{{commit}}").strip()
    expected = _files(repo, tag)
    got = {s.rfilename: (s.size, s.lfs.sha256 if s.lfs else None, s.lfs.pointer_size if s.lfs else s.size)
           for s in info.siblings}
    assert got == expected and any(sha for _, sha, _ in got.values())
    assert all(s.size is None for s in plain.siblings)  # sizes only when asked for, as on the Hub


def test_repo_and_file_exist(api: Any) -> None:
    assert api.repo_exists(REPO, repo_type="dataset") and not api.repo_exists("tgbhub/no-such", repo_type="dataset")
    assert api.file_exists(REPO, "ce-4/edges.parquet", repo_type="dataset")
    assert api.file_exists(REPO, "README.md", repo_type="dataset", revision="v1.0.0")
    assert not api.file_exists(REPO, "ce-4/no-such.parquet", repo_type="dataset")
    assert not api.file_exists(REPO, "README.md", repo_type="dataset", revision="v9.9.9")


@pytest.fixture(scope="module")
def two_repo_hub(hub_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalHub]:
    """A hub holding tgbhub/t-grab and a bare clone of it as lab/graphs-copy."""
    root = tmp_path_factory.mktemp("two-repos")
    shutil.copytree(hub_root / "datasets" / "tgbhub", root / "datasets" / "tgbhub", symlinks=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(hub_root / "datasets" / REPO),
                    str(root / "datasets" / "lab" / "graphs-copy")], check=True)
    with start_local_hub(root, state_dir=tmp_path_factory.mktemp("two-state")) as hub:
        yield hub


def test_list_datasets_and_its_filters(two_repo_hub: LocalHub) -> None:
    from huggingface_hub import HfApi

    api = HfApi(endpoint=two_repo_hub.url)

    def ids(**query: Any) -> list[str]:
        return [d.id for d in api.list_datasets(**query)]

    assert ids() == ["lab/graphs-copy", REPO]
    assert ids(search="grab") == [REPO] and ids(search="COPY") == ["lab/graphs-copy"] and ids(search="zz") == []
    assert ids(author="lab") == ["lab/graphs-copy"] and ids(author="tgbhub", search="copy") == []
    assert ids(filter="tgbhub") == ids() and ids(filter="license:mit") == [] and len(ids(limit=1)) == 1
    assert sorted(ids(sort="last_modified")) == ids()
    full = next(iter(api.list_datasets(author="tgbhub", full=True)))
    assert full.sha and "README.md" in {s.rfilename for s in full.siblings}


def test_refs_and_commits_are_gits(api: Any, repo: Path) -> None:
    refs = api.list_repo_refs(REPO, repo_type="dataset")
    tags = {name: _git(repo, "rev-parse", f"{name}^{{commit}}").strip() for name in _git(repo, "tag").split()}
    assert {t.name: t.target_commit for t in refs.tags} == tags and len(tags) >= 5
    assert [(b.name, b.target_commit) for b in refs.branches] == [("main", _git(repo, "rev-parse", "main").strip())]
    commits = api.list_repo_commits(REPO, repo_type="dataset")
    assert [c.commit_id for c in commits] == _git(repo, "rev-list", "main").split()
    assert commits[0].title == _git(repo, "log", "-1", "--format=%s", "main").strip() and commits[0].authors
    older = api.list_repo_commits(REPO, repo_type="dataset", revision="v1.0.0")
    assert [c.commit_id for c in older] == _git(repo, "rev-list", "v1.0.0").split()


def test_tree_and_paths_info(api: Any, repo: Path) -> None:
    from huggingface_hub.hf_api import RepoFile, RepoFolder

    top = list(api.list_repo_tree(REPO, repo_type="dataset"))
    assert {e.path for e in top if isinstance(e, RepoFolder)} == {"ce-4", "pdet-2-1", "pdet-4-1"}
    assert {e.path for e in top if isinstance(e, RepoFile)} == {".gitattributes", "README.md"}
    everything = list(api.list_repo_tree(REPO, repo_type="dataset", recursive=True, revision="v1.0.0"))
    assert sorted(e.path for e in everything) == sorted(_git(repo, "ls-tree", "-r", "-t", "--name-only",
                                                             "v1.0.0").split())
    expected = _files(repo, "v1.0.0")
    folder = list(api.list_repo_tree(REPO, "ce-4", repo_type="dataset", revision="v1.0.0", expand=True))
    assert {e.path: (e.size, e.lfs.sha256 if e.lfs else None) for e in folder} == {
        p: v[:2] for p, v in expected.items() if p.startswith("ce-4/")}
    assert all(e.last_commit is not None and len(e.last_commit.oid) == 40 for e in folder)
    info = api.get_paths_info(REPO, ["ce-4/edges.parquet", "ce-4", "no/such", "README.md"], repo_type="dataset",
                              revision="v1.0.0")
    assert [e.path for e in info] == ["ce-4/edges.parquet", "ce-4", "README.md"]
    assert isinstance(info[1], RepoFolder) and (info[0].size, info[0].lfs.sha256) == expected["ce-4/edges.parquet"][:2]


def test_auth_check_lets_anyone_read(api: Any) -> None:
    from huggingface_hub.errors import RepositoryNotFoundError

    assert api.auth_check(REPO, repo_type="dataset") is None
    with pytest.raises(RepositoryNotFoundError):
        api.auth_check("tgbhub/no-such", repo_type="dataset")


def test_hf_file_system_globs_lists_and_reads(local_hub: LocalHub, repo: Path) -> None:
    from huggingface_hub import HfFileSystem

    fs = HfFileSystem(endpoint=local_hub.url)
    base = f"datasets/{REPO}@ce-4-v1.0.0"
    expected = _files(repo, "ce-4-v1.0.0")
    assert sorted(fs.glob(f"{base}/ce-4/negatives-*.parquet")) == sorted(
        f"{base}/{p}" for p in expected if p.startswith("ce-4/negatives-"))
    listed = fs.ls(f"{base}/ce-4", detail=True)
    assert {e["name"].removeprefix(f"{base}/"): e["size"] for e in listed} == {
        p: v[0] for p, v in expected.items() if p.startswith("ce-4/")}
    edges = fs.cat_file(f"{base}/ce-4/edges.parquet")
    assert hashlib.sha256(edges).hexdigest() == expected["ce-4/edges.parquet"][1]
    with fs.open(f"{base}/ce-4/edges.parquet", "rb") as handle:
        handle.seek(8)
        assert handle.read(16) == edges[8:24]
    card = fs.read_text(f"{base}/README.md")
    assert card == _git(repo, "show", "ce-4-v1.0.0:README.md")


def test_hf_hub_download_and_snapshot_download(local_hub: LocalHub, repo: Path, tmp_path: Path) -> None:
    from huggingface_hub import hf_hub_download, snapshot_download

    expected = _files(repo, "ce-4-v1.0.0")
    path = hf_hub_download(REPO, "ce-4/negatives-val.parquet", repo_type="dataset", revision="ce-4-v1.0.0",
                           endpoint=local_hub.url, cache_dir=tmp_path / "hf")
    assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == expected["ce-4/negatives-val.parquet"][1]
    folder = Path(snapshot_download(REPO, repo_type="dataset", revision="ce-4-v1.0.0", endpoint=local_hub.url,
                                    cache_dir=tmp_path / "hf", allow_patterns=["ce-4/*"]))
    got = {p.relative_to(folder).as_posix(): p.stat().st_size for p in folder.rglob("*") if p.is_file()}
    wanted = {p: v[0] for p, v in expected.items() if p.startswith("ce-4/")}
    assert set(got) == set(wanted)
    # the Croissant view is rewritten for the address the client used (tgbhub.hub.croissant): its size differs
    rewritten = {p for p in wanted if p.endswith("croissant-view.json")}
    assert {p: got[p] for p in set(got) - rewritten} == {p: wanted[p] for p in set(wanted) - rewritten}


def _calls(api: Any, repo_id: str, revision: str, path: str) -> list[Callable[[], object]]:
    from huggingface_hub import hf_hub_download

    kind = {"repo_type": "dataset"}
    return [lambda: api.dataset_info(repo_id, revision=revision),
            lambda: api.list_repo_commits(repo_id, revision=revision, **kind),
            lambda: list(api.list_repo_tree(repo_id, path, revision=revision, **kind)),
            lambda: api.get_paths_info(repo_id, [path], revision=revision, **kind),
            lambda: hf_hub_download(repo_id, path, revision=revision, endpoint=api.endpoint, **kind)]


@pytest.mark.parametrize(("what", "error", "code"), [
    ("repo", "RepositoryNotFoundError", "RepoNotFound"),
    ("revision", "RevisionNotFoundError", "RevisionNotFound"),
    ("entry", "RemoteEntryNotFoundError", "EntryNotFound"),
])
def test_what_does_not_exist_is_a_404_the_client_names(api: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       what: str, error: str, code: str) -> None:
    import huggingface_hub.errors

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    repo_id = "tgbhub/no-such" if what == "repo" else REPO
    revision = "v9.9.9" if what == "revision" else "v1.0.0"
    path = "ce-4/no-such" if what == "entry" else "ce-4"
    calls = _calls(api, repo_id, revision, path)
    if what == "entry":  # paths-info leaves out a missing path; a repo's info has no path to miss
        calls = [calls[2], calls[4]]
        assert api.get_paths_info(REPO, [path], revision=revision, repo_type="dataset") == []
    for call in calls:
        with pytest.raises(getattr(huggingface_hub.errors, error)) as raised:
            call()
        response = raised.value.response
        assert (response.status_code, response.headers["X-Error-Code"]) == (404, code)


def test_no_answer_names_olahs_address(local_hub: LocalHub) -> None:
    import requests

    olah = str(local_hub.front.upstream[1])
    paths = ["/api/datasets", "/api/datasets?full=true", f"/api/datasets/{REPO}", f"/api/datasets/{REPO}/",
             f"/api/datasets/{REPO}/revision/v1.0.0?blobs=true", f"/api/datasets/{REPO}/refs",
             f"/api/datasets/{REPO}/commits/main", f"/api/datasets/{REPO}/tree/main/ce-4?expand=true",
             f"/api/datasets/{REPO}/auth-check", f"/api/datasets/{REPO}/tree/main", "/api/datasets/x/y",
             f"/datasets/{REPO}/resolve/main/README.md", f"/datasets/{REPO}/resolve/v9/README.md"]
    for path in paths:
        for method in ("GET", "HEAD"):
            answer = requests.request(method, local_hub.url + path, allow_redirects=False, timeout=30)
            assert olah not in str(answer.headers) and olah not in answer.text, (method, path)
            if answer.is_redirect:
                assert answer.headers["Location"].startswith(local_hub.url + "/"), path
    posted = requests.post(f"{local_hub.url}/api/datasets/{REPO}/paths-info/main", data={"paths": ["README.md"]},
                           timeout=30)
    assert posted.status_code == 200 and olah not in posted.text and posted.json()[0]["path"] == "README.md"


def test_datasets_library_loads_the_negatives_config(local_hub: LocalHub, repo: Path, tmp_path: Path) -> None:
    """The card's ``<name>-negatives`` config: one split per negatives file, rows as the file holds them."""
    script = ("import datasets, json\n"
              "dd = datasets.load_dataset('tgbhub/t-grab', 'ce-4-negatives', revision='ce-4-v1.0.0')\n"
              "print(json.dumps({s: [dd[s].num_rows, dd[s][0]] for s in dd}))")
    env = {**os.environ, "HF_ENDPOINT": local_hub.url, "HF_HOME": str(tmp_path / "hf"),
           "HF_HUB_DISABLE_TELEMETRY": "1"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    import json

    splits = json.loads(done.stdout.strip().splitlines()[-1])
    assert list(splits) == ["val", "test", "test_inductive"]
    from huggingface_hub import hf_hub_download

    for split, (rows, first) in splits.items():
        local = hf_hub_download(REPO, f"ce-4/negatives-{split}.parquet", repo_type="dataset",
                                revision="ce-4-v1.0.0", endpoint=local_hub.url, cache_dir=tmp_path / "files")
        table = pq.read_table(local)
        assert rows == table.num_rows and first == table.slice(0, 1).to_pylist()[0]


def test_datasets_library_loads_the_features_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A dataset whose manifest declares node features (a small tgbl-flight in TGB's format, imported and published)
    gets a ``<name>-features`` config on its card; ``datasets.load_dataset`` reads the features file through it."""
    import json

    import tgbhub.api
    from tests import tgb_formats as formats
    from tgbhub.local.imports import import_tgb
    from tgbhub.publish import parse_target, publish
    from tgbhub.registry import Registry

    files = formats.write_flight(tmp_path / formats.dir_name("tgbl-flight"), n_edges=300)
    rows = files.truth["rows"]
    stats = {"num_nodes": len({r[1] for r in rows} | {r[2] for r in rows}), "num_edges": len(rows),
             "num_timestamps": len({r[0] for r in rows}), "edge_feat_dim": 16}
    cache, manifests = tmp_path / "cache", tmp_path / "manifests"
    manifest = import_tgb("tgbl-flight", formats.zip_dataset(files, tmp_path / "zips"), cache_dir=cache,
                          expected_stats=stats, manifests=manifests)
    registry = Registry(manifests)
    monkeypatch.setattr(tgbhub.api, "_REGISTRY", registry)
    publish("tgb", manifest.version, parse_target(f"git:{tmp_path / 'hub'}"), datasets=["tgbl-flight"],
            cache_dir=cache, registry=registry)
    declared = manifest.graph["node_feat"]
    tag = f"tgbl-flight-v{manifest.version}"
    script = ("import datasets, json\n"
              f"dd = datasets.load_dataset('tgbhub/tgb', 'tgbl-flight-features', revision='{tag}')\n"
              "print(json.dumps({s: [dd[s].num_rows, dd[s].column_names] for s in dd}))")
    with start_local_hub(tmp_path / "hub") as served:
        env = {**os.environ, "HF_ENDPOINT": served.url, "HF_HOME": str(tmp_path / "hf"),
               "HF_HUB_DISABLE_TELEMETRY": "1"}
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        from huggingface_hub import hf_hub_download

        local = hf_hub_download("tgbhub/tgb", f"tgbl-flight/{declared['file']}", repo_type="dataset", revision=tag,
                                endpoint=served.url, cache_dir=tmp_path / "files")
    table = pq.read_table(local)
    (split, (count, columns)), = json.loads(done.stdout.strip().splitlines()[-1]).items()
    assert count == table.num_rows > 0 and columns == table.column_names and declared["column"] in columns, split
    imported = tgbhub.api.load_dataset("tgb/tgbl-flight", cache_dir=cache, offline=True)
    assert imported.artifact(declared["file"])[declared["column"]].tolist() == table[declared["column"]].to_pylist()
