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
from tgbhub.hub.layout import RepoFile, RepoPlan, dataset_card, differences, lfs_pointer, tag_for, version_of
from tgbhub.hub.serve import LocalHub, start_local_hub
from tgbhub.publish import parse_target, publish
from tgbhub.registry import Registry


def _memory(path: str, data: bytes) -> RepoFile:
    return RepoFile(path, hashlib.sha256(data).hexdigest(), len(data), data=data)


def _plan(tag: str, files: dict[str, bytes]) -> RepoPlan:
    return RepoPlan("org/fam", tag, tuple(_memory(p, d) for p, d in sorted(files.items())), f"publish {tag}")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def test_tags_are_v_semver() -> None:
    assert tag_for("1.2.3") == "v1.2.3"
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
    plan = RepoPlan("o/f", "v1.0.0", (_memory("a/edges.parquet", data), _memory("README.md", b"hi")), "m")
    pointer = git_blob_sha1(lfs_pointer(hashlib.sha256(data).hexdigest(), len(data)))
    same = {"a/edges.parquet": (None, pointer), "README.md": (None, git_blob_sha1(b"hi"))}
    assert differences(plan, same) == []
    # the real Hub reports LFS files by sha256; a Hub that kept the file as a plain blob reports its blob id
    assert differences(plan, {**same, "a/edges.parquet": (hashlib.sha256(data).hexdigest(), "x")}) == []
    assert differences(plan, {**same, "a/edges.parquet": (None, git_blob_sha1(data))}) == []
    assert differences(plan, {**same, "a/edges.parquet": ("0" * 64, "x")}) == ["a/edges.parquet"]
    assert differences(plan, {"README.md": same["README.md"], "extra.txt": (None, "y")}) == [
        "a/edges.parquet", "extra.txt"]


def test_git_target_is_idempotent_and_refuses_changed_bytes(tmp_path: Path) -> None:
    target = GitTarget(tmp_path)
    first = target.publish(_plan("v1.0.0", {"README.md": b"card", "d/edges.parquet": b"rows"}))
    again = target.publish(_plan("v1.0.0", {"README.md": b"card", "d/edges.parquet": b"rows"}))
    assert (first.status, again.status, again.commit) == ("published", "unchanged", first.commit)
    with pytest.raises(VersionConflictError, match=r"org/fam already has v1\.0\.0 .*d/edges\.parquet"):
        target.publish(_plan("v1.0.0", {"README.md": b"card", "d/edges.parquet": b"other rows"}))
    second = target.publish(_plan("v1.1.0", {"README.md": b"card 2"}))
    repo = target.repo_dir("org/fam")
    assert _git(repo, "ls-tree", "-r", "--name-only", "v1.0.0").split() == ["README.md", "d/edges.parquet"]
    assert _git(repo, "ls-tree", "-r", "--name-only", "v1.1.0").split() == ["README.md"]
    assert _git(repo, "rev-parse", "main").strip() == second.commit
    sha = hashlib.sha256(b"rows").hexdigest()
    assert (repo / ".git" / "lfs" / "objects" / sha[:2] / sha[2:4] / sha).read_bytes() == b"rows"
    assert _git(repo, "show", "v1.0.0:d/edges.parquet").startswith("version https://git-lfs.github.com/spec/v1")


def test_publish_writes_a_loadable_family_repo(hub_root: Path, hub_registry: Registry) -> None:
    repo = hub_root / "datasets" / "tgbhub" / "t-grab"
    files = _git(repo, "ls-tree", "-r", "--name-only", "v1.0.0").split()
    assert {".gitattributes", "README.md", "ce-4/croissant.json", "ce-4/edges.parquet",
            "ce-4/test_inductive-00000-of-00001.parquet"} <= set(files)
    assert _git(repo, "show", "v1.0.0:ce-4/croissant.json") == hub_registry.path("t-grab/ce-4", "1.0.0").read_text()
    newer = _git(repo, "ls-tree", "-r", "--name-only", "v1.1.0").split()
    assert {f.split("/")[0] for f in newer if "/" in f} == {"pdet-2-1"}  # a version holds what was published


def test_republishing_is_a_no_op(hub_root: Path, hub_registry: Registry, tmp_path: Path) -> None:
    results = publish("t-grab", "1.0.0", parse_target(f"git:{hub_root}"), cache_dir=tmp_path, registry=hub_registry)
    assert [r.status for r in results] == ["unchanged"]


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
    args = ["--cache-dir", str(tmp_path / "c"), "publish", "t-grab", "--datasets", "pdet-2-1", "--version", "1.0.0",
            "--to", f"git:{tmp_path / 'hub'}"]
    assert main(args) == 0
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("published: tgbhub/t-grab v1.0.0") and out[1].startswith("unchanged: tgbhub/t-grab")
    assert main(["publish", "t-grab", "--version", "1.0.0", "--to", "nowhere"]) == 2


# --- --to hf, through the write-API test double ----------------------------------------------------------------

@pytest.fixture
def writable_hub(tmp_path: Path) -> Iterator[tuple[FakeHubWrites, LocalHub]]:
    """The Hub-API write double in front of a real local Hub (olah) over a fresh root."""
    with start_local_hub(tmp_path / "hf-root") as hub, serving(FakeHubWrites(tmp_path / "hf-root", hub.url)) as fake:
        yield fake, hub


def test_hf_target_publishes_one_commit_and_a_tag(writable_hub: tuple[FakeHubWrites, LocalHub],
                                                  hub_registry: Registry, use_registry: Registry,
                                                  tmp_path: Path) -> None:
    fake, hub = writable_hub
    target = HfTarget(fake.url, token="hf_test_token")
    [result] = publish("t-grab", "1.0.0", target, datasets=["pdet-2-1", "ce-4"], cache_dir=tmp_path / "c",
                       registry=hub_registry)
    assert result.status == "published"
    writes = [c for c in fake.calls if c.startswith("POST")]
    assert writes[0] == "POST /api/repos/create"
    assert sum(c.endswith("/commit/main") for c in writes) == 1  # one atomic commit
    assert writes[-1] == f"POST /api/datasets/tgbhub/t-grab/tag/{result.commit}"
    ds = tgbhub.load_dataset("t-grab/ce-4@1.0.0", cache_dir=tmp_path / "load", hub_endpoint=hub.url)
    built = tgbhub.load_dataset("t-grab/ce-4@1.0.0", cache_dir=tmp_path / "build", sources="build")
    assert ds.source == "hub"
    np.testing.assert_array_equal(np.asarray(ds.dst), np.asarray(built.dst))
    again = publish("t-grab", "1.0.0", target, datasets=["pdet-2-1", "ce-4"], cache_dir=tmp_path / "c",
                    registry=hub_registry)
    assert again[0].status == "unchanged"
    with pytest.raises(VersionConflictError, match="ce-4/"):
        publish("t-grab", "1.0.0", target, datasets=["pdet-2-1"], cache_dir=tmp_path / "c", registry=hub_registry)
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
