"""Croissant views (tgbhub.hub.croissant): a manifest with absolute URLs and a record set for every Parquet file,
served by `tgbhub hub serve` for the address the client used and committed by `tgbhub publish`, read by the real
mlcroissant from a URL and from a dict, while croissant.json keeps its bytes."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import requests

from tests import tgb_formats as formats
from tests.servers import FakeHubWrites, serving
from tgbhub.errors import ManifestError
from tgbhub.hub.croissant import VIEW, ViewFile, croissant_view, resolve_base, served_view
from tgbhub.hub.git import GitTarget
from tgbhub.hub.hfapi import HfTarget
from tgbhub.hub.layout import DatasetRelease, RepoFile, RepoPlan
from tgbhub.hub.serve import LocalHub, start_local_hub
from tgbhub.manifest import parse_manifest
from tgbhub.registry import Registry, parse_reference

TGRAB = "/datasets/tgbhub/t-grab/resolve/pdet-2-1-v1.0.0/pdet-2-1"


@pytest.fixture
def mlc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """mlcroissant, downloading into this test's folder (it reads $CROISSANT_CACHE only when first imported)."""
    module = pytest.importorskip("mlcroissant")
    from mlcroissant._src.core import constants

    monkeypatch.setattr(constants, "DOWNLOAD_PATH", tmp_path / "croissant-downloads")
    return module


def _rows(mlc: Any, jsonld: str | dict[str, Any], view: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Every record of every record set of the view, as mlcroissant reads them from ``jsonld``."""
    dataset = mlc.Dataset(jsonld=jsonld)
    return {rs["@id"]: list(dataset.records(rs["@id"])) for rs in view["recordSet"]}


def _lfs_rows(repo: Path, tag: str, path: str) -> int:
    """The row count of an LFS-stored Parquet file of a published repo, from its Parquet footer."""
    pointer = subprocess.run(["git", "-C", str(repo), "show", f"{tag}:{path}"], capture_output=True, text=True,
                             check=True).stdout
    sha = pointer.split("oid sha256:")[1].split()[0]
    return pq.read_metadata(repo / ".git" / "lfs" / "objects" / sha[:2] / sha[2:4] / sha).num_rows


def test_a_served_t_grab_view_reads_every_record_set_by_url_and_as_a_dict(local_hub: LocalHub, hub_root: Path,
                                                                         hub_registry: Registry, mlc: Any) -> None:
    url = f"{local_hub.url}{TGRAB}/{VIEW}"
    view = requests.get(url, timeout=30).json()
    base = f"{local_hub.url}{TGRAB}/"
    assert all(obj["contentUrl"] == base + obj["name"] for obj in view["distribution"])
    manifest = hub_registry.resolve(parse_reference("t-grab/pdet-2-1@1.0.0"))
    names = [rs["@id"] for rs in view["recordSet"]]
    assert names == ["edges", "negatives-val", "negatives-test", *manifest.splits]  # the split views too
    repo = hub_root / "datasets" / "tgbhub" / "t-grab"
    by_url, by_dict = _rows(mlc, url, view), _rows(mlc, view, view)
    for record_set in view["recordSet"]:
        file = record_set["field"][0]["source"]["fileObject"]["@id"]
        expected = _lfs_rows(repo, "pdet-2-1-v1.0.0", f"pdet-2-1/{file}")
        assert len(by_url[record_set["@id"]]) == len(by_dict[record_set["@id"]]) == expected > 0, record_set["@id"]
    for split, (lo, hi) in manifest.splits.items():  # each split view holds exactly its snapshots
        assert {int(row[f"{split}/t"]) for row in by_url[split]} <= set(range(lo, hi))
    assert sum(len(by_url[split]) for split in manifest.splits) == manifest.stats["num_rows"]
    assert len(by_url["negatives-val"][0]["negatives-val/negatives"]) == 20  # a list column, repeated


def test_the_canonical_manifest_keeps_its_bytes_and_the_view_parses_to_the_same_files(
        local_hub: LocalHub, hub_registry: Registry) -> None:
    canonical = requests.get(f"{local_hub.url}{TGRAB}/croissant.json", timeout=30)
    assert canonical.content == hub_registry.path("t-grab/pdet-2-1", "1.0.0").read_bytes()
    view = requests.get(f"{local_hub.url}{TGRAB}/{VIEW}", timeout=30).json()
    ours, theirs = parse_manifest(view), parse_manifest(json.loads(canonical.content))
    assert ours.files == theirs.files and len(view["distribution"]) == len(theirs.files) + 3  # + split views


def test_the_view_is_absolute_against_the_address_the_client_used(local_hub: LocalHub) -> None:
    answer = requests.get(f"{local_hub.url}{TGRAB}/{VIEW}", headers={"Host": "hub.example:8443"}, timeout=30)
    assert answer.headers["X-Repo-Commit"] and answer.headers["ETag"]
    urls = [obj["contentUrl"] for obj in answer.json()["distribution"]]
    assert urls[0] == f"http://hub.example:8443{TGRAB}/edges.parquet"
    assert answer.json()["isBasedOn"] == f"http://hub.example:8443{TGRAB}/croissant.json"
    head = requests.head(f"{local_hub.url}{TGRAB}/{VIEW}", timeout=30)
    assert head.status_code == 200 and int(head.headers["Content-Length"]) > 0
    missing = requests.get(f"{local_hub.url}/datasets/tgbhub/t-grab/resolve/no-such-tag/pdet-2-1/{VIEW}", timeout=30)
    assert missing.status_code == 404


@pytest.fixture
def hf_hub(tmp_path: Path) -> Iterator[SimpleNamespace]:
    """The Hub-API write double (tests/servers.py) in front of a real local hub over a fresh root: an ``hf`` target."""
    (tmp_path / "hf-root").mkdir()
    with start_local_hub(tmp_path / "hf-root", allow_empty=True) as hub, \
            serving(FakeHubWrites(tmp_path / "hf-root", hub.url)) as fake:
        yield SimpleNamespace(hub=hub, fake=fake, repo=tmp_path / "hf-root" / "datasets" / "org" / "fam")


def _release(registry: Registry) -> DatasetRelease:
    """t-grab/pdet-2-1@1.0.0's croissant.json and a stand-in edges file (a target never parses it)."""
    manifest = registry.resolve(parse_reference("t-grab/pdet-2-1@1.0.0"))
    files = [RepoFile(f"pdet-2-1/{name}", hashlib.sha256(data).hexdigest(), len(data), data=data)
             for name, data in (("croissant.json", registry.path(manifest.name, "1.0.0").read_bytes()),
                                ("edges.parquet", b"rows"))]
    return DatasetRelease(manifest, tuple(files))


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def test_a_hub_api_target_commits_the_view_the_hub_serves_and_keeps_older_tags(
        hf_hub: SimpleNamespace, hub_registry: Registry, monkeypatch: pytest.MonkeyPatch) -> None:
    import tgbhub.hub.release

    plan = RepoPlan("org/fam", "t-grab", "v1.0.0", (_release(hub_registry),), "publish")
    target = HfTarget(hf_hub.fake.url, token="hf_test_token")
    with monkeypatch.context() as older:  # a publisher from before views
        older.setattr(tgbhub.hub.release, "with_view", lambda release, location: release)
        target.publish(plan)
    tagged = _git(hf_hub.repo, "ls-tree", "-r", "--name-only", "pdet-2-1-v1.0.0").split()
    assert "pdet-2-1/croissant.json" in tagged and f"pdet-2-1/{VIEW}" not in tagged
    assert [(r.tag, r.status) for r in target.publish(plan)] == [("pdet-2-1-v1.0.0", "metadata-differs"),
                                                                 ("v1.0.0", "kept")]
    assert _git(hf_hub.repo, "ls-tree", "-r", "--name-only", "pdet-2-1-v1.0.0").split() == tagged  # never moved
    fresh = dataclasses.replace(plan, repo_id="org/new")  # published by this tgbhub: with its view
    assert [r.status for r in target.publish(fresh)] == ["published", "published"]
    repo = hf_hub.repo.parent / "new"
    committed = _git(repo, "show", f"pdet-2-1-v1.0.0:pdet-2-1/{VIEW}")
    base = f"{hf_hub.fake.url}/datasets/org/new/resolve/pdet-2-1-v1.0.0/pdet-2-1/"
    assert json.loads(committed)["distribution"][0]["contentUrl"] == base + "edges.parquet"
    served = requests.get(f"{hf_hub.hub.url}/datasets/org/new/resolve/pdet-2-1-v1.0.0/pdet-2-1/{VIEW}", timeout=30)
    # one code path: what the hub serves is what was committed, absolute against the address that was asked
    assert served.text.replace(hf_hub.hub.url, hf_hub.fake.url) == committed
    assert [r.status for r in target.publish(fresh)] == ["unchanged", "kept"]


def test_a_git_root_gets_no_committed_view(hub_root: Path) -> None:
    listed = _git(hub_root / "datasets" / "tgbhub" / "t-grab", "ls-tree", "-r", "--name-only", "pdet-2-1-v1.0.0")
    assert "pdet-2-1/croissant.json" in listed.split() and f"pdet-2-1/{VIEW}" not in listed.split()


def _parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def test_parquet_schemas_become_record_sets_and_what_croissant_cannot_type_is_named(hub_registry: Registry) -> None:
    document = json.loads(hub_registry.path("t-grab/pdet-2-1", "1.0.0").read_text())
    before = json.dumps(document)
    table = pa.table({"t": pa.array([1], pa.int64()), "w": pa.array([[0.5, 1.5]], pa.list_(pa.float32())),
                      "meta": pa.array([{"a": 1}])})
    base = resolve_base("http://h:1/datasets/o/r", "pdet-2-1-v1.0.0", "pdet-2-1")
    view = croissant_view(document, base, [ViewFile("train-00000-of-00001.parquet", "0" * 64, 9, _parquet(table))])
    assert json.dumps(document) == before  # the canonical document is not touched
    train = next(rs for rs in view["recordSet"] if rs["@id"] == "train")
    assert [(f["name"], f["dataType"], f.get("repeated", False)) for f in train["field"]] == [
        ("t", "cr:Int64", False), ("w", "cr:Float32", True)]
    assert "meta (struct<a: int64>)" in train["description"]
    split = next(obj for obj in view["distribution"] if obj["name"] == "train-00000-of-00001.parquet")
    assert split["tgbhub:split"] == "train" and split["contentUrl"] == base + split["name"]
    with pytest.raises(ManifestError, match="train-00000-of-00001.parquet"):
        croissant_view(document, base, [ViewFile("train-00000-of-00001.parquet", "0" * 64, 9, b"not parquet")])


def test_an_absolute_content_url_must_end_with_the_files_name(hub_registry: Registry) -> None:
    document = json.loads(hub_registry.path("t-grab/pdet-2-1", "1.0.0").read_text())
    document["distribution"][0]["contentUrl"] = "https://elsewhere.example/other.parquet"
    with pytest.raises(ManifestError, match="does not end with its name 'edges.parquet'"):
        parse_manifest(document)


def test_only_view_requests_are_answered(hub_root: Path) -> None:
    def never(repo: Path) -> Any:
        raise AssertionError("no git lookup for a request that is not a view")

    for request in (f"{TGRAB}/croissant.json", f"/datasets/tgbhub/t-grab/resolve/v1.0.0/../{VIEW}",
                    f"/datasets/tgbhub/no-repo/resolve/v1.0.0/x/{VIEW}", "/api/datasets/tgbhub/t-grab"):
        assert served_view(hub_root, request, "h:1", never) is None


# --- a TGB-format dataset and a ChaosNet one on a hub of their own --------------------------------------------------

@pytest.fixture(scope="module")
def other_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimpleNamespace]:
    """tgb/tgbl-wiki imported from a small release in py-tgb's format, and chaosnet/mini-k0.5-rho0.1-n8, published
    by the real publisher into one git root and served."""
    from tgbhub import api
    from tgbhub.cache import lookup, stored_manifest_path
    from tgbhub.local.imports import import_tgb
    from tgbhub.publish import Release, parse_target, publish, repo_plan

    folder = tmp_path_factory.mktemp("other-hub")
    cache, root = folder / "cache", folder / "hub"
    files = formats.write_tgbl(folder / "files", "tgbl-wiki", n_edges=300, seed=0)
    manifest = import_tgb("tgbl-wiki", formats.zip_dataset(files, folder / "zips"), cache_dir=cache,
                          expected_stats={})
    entry = lookup(manifest, cache)
    assert entry is not None
    release = Release(manifest, stored_manifest_path(cache, manifest.name, manifest.version).read_bytes(), entry)
    (folder / "views").mkdir()
    GitTarget(root).publish(repo_plan("tgbhub/tgb", manifest.version, [release], folder / "views"))
    publish("chaosnet", "1.1.0", parse_target(f"git:{root}"), datasets=["chaosnet/mini-k0.5-rho0.1-n8"],
            cache_dir=cache)
    chaos = api.manifest_of("chaosnet/mini-k0.5-rho0.1-n8", "1.1.0", cache_dir=cache, offline=True)
    with start_local_hub(root, state_dir=folder / "state") as hub:
        yield SimpleNamespace(hub=hub, root=root, tgb=manifest, chaos=chaos)


def test_a_tgb_format_view_reads_every_record_set_by_url_and_as_a_dict(other_hub: SimpleNamespace,
                                                                       mlc: Any) -> None:
    manifest = other_hub.tgb
    url = f"{other_hub.hub.url}/datasets/tgbhub/tgb/resolve/tgbl-wiki-v{manifest.version}/tgbl-wiki/{VIEW}"
    view = requests.get(url, timeout=30).json()
    assert [rs["@id"] for rs in view["recordSet"]] == ["edges", "negatives-val", "negatives-test"]
    by_url, by_dict = _rows(mlc, url, view), _rows(mlc, view, view)
    repo = other_hub.root / "datasets" / "tgbhub" / "tgb"
    for name in by_url:
        expected = _lfs_rows(repo, f"tgbl-wiki-v{manifest.version}", f"tgbl-wiki/{name}.parquet")
        assert len(by_url[name]) == len(by_dict[name]) == expected > 0, name
    assert len(by_url["edges"]) == manifest.stats["num_edges"] == 300
    assert len(by_url["edges"][0]["edges/edge_feat"]) == 172  # the 2-D feature column, repeated


def test_a_chaosnet_view_reads_its_trajectories_through_the_split_views_not_the_hdf5(other_hub: SimpleNamespace,
                                                                                    mlc: Any) -> None:
    manifest = other_hub.chaos
    tag = f"{manifest.short_name}-v{manifest.version}"
    url = f"{other_hub.hub.url}/datasets/tgbhub/chaosnet/resolve/{tag}/{manifest.short_name}/{VIEW}"
    view = requests.get(url, timeout=30).json()
    sources = {f["source"]["fileObject"]["@id"] for rs in view["recordSet"] for f in rs["field"] if "source" in f}
    assert "trajectories.h5" not in sources  # mlcroissant 1.1.1 has no HDF5 reader
    by_dict = _rows(mlc, view, view)
    steps, width = int(manifest.graph["num_snapshots"]), int(manifest.graph["num_nodes"])
    assert len(by_dict["ics"]) == int(manifest.graph["num_ics"])
    for split, (lo, hi) in manifest.splits.items():
        rows = by_dict[split]
        assert len(rows) == (hi - lo) * steps and len(rows[0][f"{split}/state"]) == width
        assert {int(row[f"{split}/trajectory"]) for row in rows} == set(range(lo, hi))
