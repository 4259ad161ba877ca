"""The publisher and its targets: repo layout, git:, mirror:, and hf: through a loopback test double of the Hub's
write API (reads go to the real local Hub)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import tgbhub
from tests.servers import FakeHubWrites, serving
from tgbhub.cli import main
from tgbhub.errors import PublishError, VersionConflictError, VersionNotFoundError
from tgbhub.hashing import git_blob_sha1
from tgbhub.hub.git import GitTarget
from tgbhub.hub.hfapi import HfTarget
from tgbhub.hub.layout import (DatasetRelease, RepoFile, RepoPlan, dataset_card, dataset_tag, differences,
                               lfs_pointer, tag_for, version_of)
from tgbhub.hub.serve import LocalHub, start_local_hub
from tgbhub.publish import parse_target, publish
from tgbhub.registry import Registry


def _memory(path: str, data: bytes) -> RepoFile:
    return RepoFile(path, hashlib.sha256(data).hexdigest(), len(data), data=data)


def _release(registry: Registry, name: str, edges: bytes) -> DatasetRelease:
    """A dataset version with its real croissant.json and a stand-in edges file (the target never parses it)."""
    manifest = registry.resolve(tgbhub.registry.parse_reference(name))
    croissant = registry.path(manifest.name, manifest.version).read_bytes()
    files = (_memory(f"{manifest.short_name}/croissant.json", croissant),
             _memory(f"{manifest.short_name}/edges.parquet", edges))
    return DatasetRelease(manifest, files)


def _plan(version: str, *releases: DatasetRelease) -> RepoPlan:
    return RepoPlan("org/fam", "t-grab", tag_for(version), releases, f"publish {version}")


def _tags(repo: Path) -> dict[str, str]:
    lines = _git(repo, "for-each-ref", "--format=%(refname:strip=2) %(*objectname)", "refs/tags").splitlines()
    return dict(line.split() for line in lines)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def test_tags_are_v_semver() -> None:
    assert tag_for("1.2.3") == "v1.2.3"
    assert dataset_tag("ce-256", "1.0.0") == "ce-256-v1.0.0"
    # git refuses "~" in a ref; every tag must pass git's own check
    derived = dataset_tag("ce-64~shuffle-s0", "1.0.0")
    assert derived == "ce-64+shuffle-s0-v1.0.0"
    for tag in (derived, dataset_tag("k0.5-rho0.05-n8", "1.1.0")):
        assert subprocess.run(["git", "check-ref-format", f"refs/tags/{tag}"]).returncode == 0, tag
    assert (version_of("v1.2.3"), version_of("latest"), version_of("v1.2")) == ("1.2.3", None, None)


def test_card_lists_every_dataset_and_split(hub_registry: Registry) -> None:
    manifests = [hub_registry.resolve(tgbhub.registry.parse_reference(f"t-grab/{n}@1.0.0"))
                 for n in ("ce-4", "pdet-2-1")]
    card = dataset_card("t-grab", manifests, "tgbhub/t-grab").decode()
    front = card.split("---")[1]
    assert "license: apache-2.0" in front
    for split in ("train", "val", "test", "test_inductive"):
        assert f"  - split: {split}\n    path: ce-4/{split}-*.parquet" in front
    assert "- config_name: pdet-2-1" in front and "test_inductive" not in front.split("pdet-2-1")[1]
    assert front.count("default: true") == 1


def test_lfs_files_compare_by_content_hash() -> None:
    data = b"\x00parquet bytes"
    plan = (_memory("a/edges.parquet", data), _memory("README.md", b"hi"))
    pointer = git_blob_sha1(lfs_pointer(hashlib.sha256(data).hexdigest(), len(data)))
    same = {"a/edges.parquet": (None, pointer), "README.md": (None, git_blob_sha1(b"hi"))}
    assert differences(plan, same) == []
    # the real Hub reports LFS files by sha256; a Hub that kept the file as a plain blob reports its blob id
    assert differences(plan, {**same, "a/edges.parquet": (hashlib.sha256(data).hexdigest(), "x")}) == []
    assert differences(plan, {**same, "a/edges.parquet": (None, git_blob_sha1(data))}) == []
    assert differences(plan, {**same, "a/edges.parquet": ("0" * 64, "x")}) == ["a/edges.parquet"]
    assert differences(plan, {"README.md": same["README.md"], "extra.txt": (None, "y")}) == [
        "a/edges.parquet", "extra.txt"]


def test_git_target_grows_without_moving_tags_and_refuses_changed_bytes(tmp_path: Path,
                                                                         hub_registry: Registry) -> None:
    target = GitTarget(tmp_path)
    pdet = _release(hub_registry, "t-grab/pdet-2-1@1.0.0", b"rows")
    first = target.publish(_plan("1.0.0", pdet))
    assert [(r.tag, r.status) for r in first] == [("pdet-2-1-v1.0.0", "published"), ("v1.0.0", "published")]
    repo = target.repo_dir("org/fam")
    before = _tags(repo)
    # a new dataset joins the family: its own tag, the family tag stays, the first dataset's tag stays
    grown = target.publish(_plan("1.0.0", _release(hub_registry, "t-grab/ce-4@1.0.0", b"ce rows")))
    assert [(r.tag, r.status) for r in grown] == [("ce-4-v1.0.0", "published"), ("v1.0.0", "kept")]
    after = _tags(repo)
    assert {t: after[t] for t in before} == before
    assert _git(repo, "rev-parse", "main").strip() == after["ce-4-v1.0.0"] != before["v1.0.0"]
    files = _git(repo, "ls-tree", "-r", "--name-only", "ce-4-v1.0.0").split()
    assert {"ce-4/edges.parquet", "pdet-2-1/edges.parquet", "pdet-2-1/croissant.json"} <= set(files)
    card = _git(repo, "show", "ce-4-v1.0.0:README.md")
    assert "# t-grab (tgbhub)" in card and "2 dataset(s)" in card
    again = target.publish(_plan("1.0.0", pdet, _release(hub_registry, "t-grab/ce-4@1.0.0", b"ce rows")))
    assert {r.status for r in again} == {"unchanged", "kept"} and _tags(repo) == after
    with pytest.raises(VersionConflictError, match=r"t-grab/pdet-2-1@1\.0\.0 \(tag pdet-2-1-v1\.0\.0\).*"
                                                   r"pdet-2-1/edges\.parquet"):
        target.publish(_plan("1.0.0", _release(hub_registry, "t-grab/pdet-2-1@1.0.0", b"other rows")))
    newer = target.publish(_plan("1.1.0", _release(hub_registry, "t-grab/pdet-2-1@1.1.0", b"rows 2")))
    assert [(r.tag, r.status) for r in newer] == [("pdet-2-1-v1.1.0", "published"), ("v1.1.0", "published")]
    assert _git(repo, "show", "pdet-2-1-v1.0.0:pdet-2-1/edges.parquet") == _git(repo, "show",
                                                                              "v1.0.0:pdet-2-1/edges.parquet")
    assert _git(repo, "ls-tree", "-r", "--name-only", "v1.1.0").count("ce-4/") == 2  # kept on main
    sha = hashlib.sha256(b"rows").hexdigest()
    assert (repo / ".git" / "lfs" / "objects" / sha[:2] / sha[2:4] / sha).read_bytes() == b"rows"
    assert _git(repo, "show", "v1.0.0:pdet-2-1/edges.parquet").startswith("version https://git-lfs.github.com/spec/v1")


def test_legacy_family_tag_gets_dataset_tags_on_republish(tmp_path: Path, hub_registry: Registry) -> None:
    """A hub written before dataset tags existed (only v1.0.0): republishing tags each dataset at that commit."""
    target = GitTarget(tmp_path)
    pdet = _release(hub_registry, "t-grab/pdet-2-1@1.0.0", b"rows")
    target.publish(_plan("1.0.0", pdet))
    repo = target.repo_dir("org/fam")
    _git(repo, "tag", "-d", "pdet-2-1-v1.0.0")
    results = target.publish(_plan("1.0.0", pdet))
    assert [(r.tag, r.status) for r in results] == [("pdet-2-1-v1.0.0", "published"), ("v1.0.0", "kept")]
    tags = _tags(repo)
    assert tags["pdet-2-1-v1.0.0"] == tags["v1.0.0"]
    _git(repo, "tag", "-d", "pdet-2-1-v1.0.0")
    with pytest.raises(VersionConflictError, match="pdet-2-1/edges.parquet"):
        target.publish(_plan("1.0.0", _release(hub_registry, "t-grab/pdet-2-1@1.0.0", b"changed")))


def test_publish_writes_a_loadable_family_repo(hub_root: Path, hub_registry: Registry) -> None:
    repo = hub_root / "datasets" / "tgbhub" / "t-grab"
    files = _git(repo, "ls-tree", "-r", "--name-only", "v1.0.0").split()
    assert {".gitattributes", "README.md", "ce-4/croissant.json", "ce-4/edges.parquet",
            "ce-4/test_inductive-00000-of-00001.parquet"} <= set(files)
    assert _git(repo, "show", "v1.0.0:ce-4/croissant.json") == hub_registry.path("t-grab/ce-4", "1.0.0").read_text()
    tags = _tags(repo)
    assert tags["ce-4-v1.0.0"] == tags["pdet-2-1-v1.0.0"] == tags["v1.0.0"] != tags["pdet-2-1-v1.1.0"]
    assert _git(repo, "show", "pdet-2-1-v1.1.0:pdet-2-1/croissant.json") == hub_registry.path(
        "t-grab/pdet-2-1", "1.1.0").read_text()
    # main keeps every dataset: the newer pdet-2-1 replaced only its own folder
    assert _git(repo, "show", "main:ce-4/croissant.json") == hub_registry.path("t-grab/ce-4", "1.0.0").read_text()


def test_republishing_is_a_no_op(hub_root: Path, hub_registry: Registry, tmp_path: Path) -> None:
    results = publish("t-grab", "1.0.0", parse_target(f"git:{hub_root}"), cache_dir=tmp_path, registry=hub_registry)
    assert [r.status for r in results] == ["unchanged", "unchanged", "unchanged", "kept"]


def test_publish_refuses_local_bytes_that_differ_from_the_manifest(hub_registry: Registry, tmp_path: Path) -> None:
    # A rebuild by another pyarrow version verifies by content digest but has other bytes: never publish those.
    manifests = tmp_path / "manifests" / "t-grab" / "pdet-4-1"
    manifests.mkdir(parents=True)
    document = json.loads(hub_registry.path("t-grab/pdet-4-1", "1.0.0").read_text())
    document["distribution"][0]["sha256"] = "ab" * 32
    (manifests / "1.0.0.json").write_text(json.dumps(document))
    with pytest.raises(PublishError, match=f"edges.parquet has sha256 [0-9a-f]{{64}}, the manifest publishes {'ab' * 32}"):
        publish("t-grab", "1.0.0", parse_target(f"git:{tmp_path / 'hub'}"), cache_dir=tmp_path / "c",
                registry=Registry(tmp_path / "manifests"))


def test_unknown_version_and_target_are_clear_errors(hub_registry: Registry, tmp_path: Path) -> None:
    with pytest.raises(VersionNotFoundError, match="1.0.0, 1.1.0"):
        publish("t-grab", "9.9.9", parse_target(f"git:{tmp_path}"), registry=hub_registry)
    with pytest.raises(PublishError, match="use hf, git:ROOT or mirror:DIR"):
        parse_target("s3:bucket")


def test_mirror_target_layout_and_conflicts(hub_registry: Registry, tmp_path: Path) -> None:
    target = parse_target(f"mirror:{tmp_path / 'mirror'}")
    [result] = publish("t-grab", "1.0.0", target, datasets=["pdet-2-1"], cache_dir=tmp_path / "c",
                       registry=hub_registry)
    folder = tmp_path / "mirror" / "t-grab" / "pdet-2-1" / "1.0.0"
    manifest = hub_registry.resolve(tgbhub.registry.parse_reference("t-grab/pdet-2-1@1.0.0"))
    assert result.status == "published"
    assert {p.name for p in folder.iterdir()} == {"croissant.json", *(f.name for f in manifest.files)}
    again = publish("t-grab", "1.0.0", target, datasets=["pdet-2-1"], cache_dir=tmp_path / "c",
                    registry=hub_registry)
    assert again[0].status == "unchanged"
    (folder / "edges.parquet").write_bytes(b"tampered")
    with pytest.raises(VersionConflictError, match="edges.parquet"):
        publish("t-grab", "1.0.0", target, datasets=["pdet-2-1"], cache_dir=tmp_path / "c", registry=hub_registry)


def test_cli_publish_to_git(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--cache-dir", str(tmp_path / "c"), "publish", "t-grab", "--datasets", "t-grab/pdet-2-1", "--version", "1.0.0",
            "--hub", f"git:{tmp_path / 'hub'}"]
    assert main(args) == 0
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[:3] for line in out] == [
        ["published:", "tgbhub/t-grab", "pdet-2-1-v1.0.0"], ["published:", "tgbhub/t-grab", "v1.0.0"],
        ["unchanged:", "tgbhub/t-grab", "pdet-2-1-v1.0.0"], ["kept:", "tgbhub/t-grab", "v1.0.0"]]
    assert main(["publish", "t-grab", "--version", "1.0.0", "--hub", "nowhere"]) == 2


def _hub_tags(url: str) -> dict[str, str]:
    from huggingface_hub import HfApi

    refs = HfApi(endpoint=url).list_repo_refs("tgbhub/t-grab", repo_type="dataset")
    return {ref.name: ref.target_commit for ref in refs.tags}


def _loads_from_hub(name: str, hub: LocalHub, tmp_path: Path) -> None:
    ds = tgbhub.load_dataset(name, cache_dir=tmp_path / "load", hub_endpoint=hub.url)
    built = tgbhub.load_dataset(name, cache_dir=tmp_path / "build", sources="build")
    assert (ds.source, ds.version) == ("hub", built.version)
    np.testing.assert_array_equal(np.asarray(ds.dst), np.asarray(built.dst))


def test_a_served_git_hub_grows_one_dataset_at_a_time(hub_registry: Registry, use_registry: Registry,
                                                     tmp_path: Path) -> None:
    target = parse_target(f"git:{tmp_path / 'hub'}")
    publish("t-grab", "1.0.0", target, datasets=["pdet-2-1"], cache_dir=tmp_path / "c", registry=hub_registry)
    with start_local_hub(tmp_path / "hub") as hub:
        before = _hub_tags(hub.url)
        grown = publish("t-grab", "1.0.0", target, datasets=["ce-4"], cache_dir=tmp_path / "c",
                        registry=hub_registry)
        assert [(r.tag, r.status) for r in grown] == [("ce-4-v1.0.0", "published"), ("v1.0.0", "kept")]
        after = _hub_tags(hub.url)
        assert {tag: after[tag] for tag in before} == before and set(after) - set(before) == {"ce-4-v1.0.0"}
        _loads_from_hub("t-grab/pdet-2-1@1.0.0", hub, tmp_path)
        _loads_from_hub("t-grab/ce-4@1.0.0", hub, tmp_path)


# --- --to hf, through the write-API test double ----------------------------------------------------------------

@pytest.fixture
def writable_hub(tmp_path: Path) -> Iterator[tuple[FakeHubWrites, LocalHub]]:
    """The Hub-API write double in front of a real local Hub (olah) over a fresh root."""
    (tmp_path / "hf-root").mkdir()
    # an empty hub that the write API fills while it serves
    with start_local_hub(tmp_path / "hf-root", allow_empty=True) as hub, \
            serving(FakeHubWrites(tmp_path / "hf-root", hub.url)) as fake:
        yield fake, hub


def test_hf_target_grows_with_one_commit_and_tags_per_publish(writable_hub: tuple[FakeHubWrites, LocalHub],
                                                              hub_registry: Registry, use_registry: Registry,
                                                              tmp_path: Path) -> None:
    fake, hub = writable_hub
    target = HfTarget(fake.url, token="hf_test_token")
    first = publish("t-grab", "1.0.0", target, datasets=["pdet-2-1"], cache_dir=tmp_path / "c",
                    registry=hub_registry)
    assert [(r.tag, r.status) for r in first] == [("pdet-2-1-v1.0.0", "published"), ("v1.0.0", "published")]
    writes = [c for c in fake.calls if c.startswith("POST")]
    assert writes[0] == "POST /api/repos/create"
    assert sum(c.endswith("/commit/main") for c in writes) == 1  # one atomic commit
    assert writes[-2:] == [f"POST /api/datasets/tgbhub/t-grab/tag/{first[0].commit}"] * 2
    before = _hub_tags(hub.url)
    fake.calls.clear()
    grown = publish("t-grab", "1.0.0", target, datasets=["ce-4"], cache_dir=tmp_path / "c", registry=hub_registry)
    assert [(r.tag, r.status) for r in grown] == [("ce-4-v1.0.0", "published"), ("v1.0.0", "kept")]
    assert sum(c.endswith("/commit/main") for c in fake.calls) == 1
    after = _hub_tags(hub.url)
    assert {tag: after[tag] for tag in before} == before and after["ce-4-v1.0.0"] != before["v1.0.0"]
    _loads_from_hub("t-grab/ce-4@1.0.0", hub, tmp_path)
    _loads_from_hub("t-grab/pdet-2-1@1.0.0", hub, tmp_path)
    again = publish("t-grab", "1.0.0", target, datasets=["pdet-2-1", "ce-4"], cache_dir=tmp_path / "c",
                    registry=hub_registry)
    assert [r.status for r in again] == ["unchanged", "unchanged", "kept"] and _hub_tags(hub.url) == after
    newer = publish("t-grab", "1.1.0", target, cache_dir=tmp_path / "c", registry=hub_registry)
    assert newer[0].status == "published"
    pinned = tgbhub.load_dataset("t-grab/pdet-2-1@1.1.0", cache_dir=tmp_path / "load", hub_endpoint=hub.url)
    assert (pinned.source, pinned.version) == ("hub", "1.1.0")


def test_hf_target_reports_an_unreachable_hub(hub_registry: Registry, tmp_path: Path) -> None:
    with pytest.raises(PublishError, match=r"http://127\.0\.0\.1:9 refused publishing tgbhub/t-grab v1\.0\.0"):
        publish("t-grab", "1.0.0", HfTarget("http://127.0.0.1:9", token="x"), datasets=["pdet-2-1"],
                cache_dir=tmp_path, registry=hub_registry)


_LIVE = {name: os.environ.get(name, "") for name in ("TGBHUB_LIVE_HUB", "TGBHUB_LIVE_TOKEN", "TGBHUB_LIVE_ORG")}


@pytest.mark.skipif(not (_LIVE["TGBHUB_LIVE_HUB"] == "1" and _LIVE["TGBHUB_LIVE_TOKEN"] and _LIVE["TGBHUB_LIVE_ORG"]),
                    reason="opt-in live Hugging Face Hub test (needs internet and a write token): set "
                           "TGBHUB_LIVE_HUB=1, TGBHUB_LIVE_TOKEN and TGBHUB_LIVE_ORG (publishes ORG/t-grab, private)")
def test_live_publish_to_the_hugging_face_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token, org = _LIVE["TGBHUB_LIVE_TOKEN"], _LIVE["TGBHUB_LIVE_ORG"]
    target = HfTarget("https://huggingface.co", token=token, private=True)
    publish("t-grab", "1.0.0", target, datasets=["pdet-2-1"], repo=f"{org}/t-grab", cache_dir=tmp_path / "c")
    monkeypatch.setenv("TGBHUB_HUB_ORG", org)
    monkeypatch.setenv("TGBHUB_TOKEN", token)
    ds = tgbhub.load_dataset("t-grab/pdet-2-1", cache_dir=tmp_path / "load", hub_endpoint="https://huggingface.co")
    assert ds.source == "hub"


def _without_responsible_ai(release: DatasetRelease) -> DatasetRelease:
    """The same dataset version as a tgbhub before the RAI fields published it: its croissant.json without them."""
    croissant = next(f for f in release.files if f.path.endswith("/croissant.json"))
    document = {k: v for k, v in json.loads(croissant.read()).items() if not k.startswith("rai:")}
    document["conformsTo"] = "http://mlcommons.org/croissant/1.1"
    old = _memory(croissant.path, (json.dumps(document, indent=1, ensure_ascii=False) + "\n").encode())
    return DatasetRelease(release.manifest, tuple(old if f is croissant else f for f in release.files))


def test_a_tag_published_before_the_rai_fields_keeps_its_manifest_and_data_changes_are_still_refused(
        tmp_path: Path, hub_registry: Registry) -> None:
    """Metadata outside the versioned data (RAI fields) differs: the tag neither moves nor conflicts; any other
    difference in croissant.json (here a content digest) is a different version and refused."""
    target = GitTarget(tmp_path)
    current = _release(hub_registry, "t-grab/pdet-2-1@1.0.0", b"rows")
    old = _without_responsible_ai(current)
    target.publish(_plan("1.0.0", old))
    repo = target.repo_dir("org/fam")
    before = _tags(repo)
    again = target.publish(_plan("1.0.0", current))
    assert [(r.tag, r.status) for r in again] == [("pdet-2-1-v1.0.0", "metadata-differs"), ("v1.0.0", "kept")]
    assert _tags(repo) == before
    kept = json.loads(_git(repo, "show", "pdet-2-1-v1.0.0:pdet-2-1/croissant.json"))
    assert "rai:dataBiases" not in kept  # a published tag is never rewritten
    document = json.loads(next(f for f in current.files if f.path.endswith("croissant.json")).read())
    document["digest"][0]["value"] = "0" * 64
    forged = _memory("pdet-2-1/croissant.json", json.dumps(document).encode())
    other = DatasetRelease(current.manifest, tuple(forged if f.path.endswith("croissant.json") else f
                                                   for f in current.files))
    with pytest.raises(VersionConflictError, match=r"pdet-2-1/croissant\.json"):
        target.publish(_plan("1.0.0", other))
    with pytest.raises(VersionConflictError, match=r"pdet-2-1/croissant\.json.*pdet-2-1/edges\.parquet"):
        target.publish(_plan("1.0.0", _release(hub_registry, "t-grab/pdet-2-1@1.0.0", b"other rows")))


def test_a_mirror_published_before_the_rai_fields_keeps_its_manifest(tmp_path: Path) -> None:
    from tgbhub import api
    from tgbhub.cache import lookup
    from tgbhub.hub.mirror import MirrorTarget

    manifest = api.registry().resolve(tgbhub.registry.parse_reference("t-grab/pdet-2-1@1.0.0"))
    tgbhub.load_dataset("t-grab/pdet-2-1@1.0.0", cache_dir=tmp_path / "cache", offline=True)
    files = lookup(manifest, tmp_path / "cache").files
    croissant = api.registry().path(manifest.name, manifest.version).read_bytes()
    old = json.dumps({k: v for k, v in json.loads(croissant).items() if not k.startswith("rai:")}).encode()
    mirror = MirrorTarget(tmp_path / "mirror")
    assert mirror.publish(manifest, files, old).status == "published"
    result = mirror.publish(manifest, files, croissant)
    assert result.status == "metadata-differs" and (Path(result.location) / "croissant.json").read_bytes() == old
    with pytest.raises(VersionConflictError, match="croissant.json"):
        mirror.publish(manifest, files, json.dumps({**json.loads(croissant), "version": "9.9.9"}).encode())
