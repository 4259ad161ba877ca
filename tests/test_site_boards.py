"""A results repo as the site reads it: from a checkout or from the git: hub repo (LFS Parquet checked by sha256),
the contract's columns enforced, every record a row names present."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.results_repos import commit_to_hub, graded_files, parquet, write_folder
from tgbhub.errors import RecordError
from tgbhub.site.boards import read_results

BOARD = ("t-grab/pdet-2-1", "ranking")
PARQUET = "leaderboards/t-grab/pdet-2-1/ranking.parquet"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    work = tmp_path_factory.mktemp("graded")
    return graded_files(*BOARD, ("recency", "persistence"), work, work / "cache")


def test_a_checkout_and_the_git_repo_read_the_same(files: dict[str, bytes], tmp_path: Path) -> None:
    folder = read_results(write_folder(tmp_path / "checkout", files))
    repo = commit_to_hub(tmp_path / "hub", files)
    # the git: target stores the table as an LFS object, its pointer in the tree
    assert list((repo / ".git" / "lfs" / "objects").rglob("*"))
    from_git = read_results(repo)
    assert set(folder.boards) == set(from_git.boards) == {BOARD}
    assert folder.boards[BOARD].rows == from_git.boards[BOARD].rows
    records = {path: data for path, data in files.items() if path.startswith("records/")}
    assert dict(folder.records) == dict(from_git.records) == records
    board = from_git.boards[BOARD]
    assert [row["status"] for row in board.rows] == ["ranked", "ranked", "rejected"] and board.ranked == 2


def test_a_damaged_lfs_object_is_refused(files: dict[str, bytes], tmp_path: Path) -> None:
    repo = commit_to_hub(tmp_path / "hub", files)
    sha = hashlib.sha256(files[PARQUET]).hexdigest()
    stored = repo / ".git" / "lfs" / "objects" / sha[:2] / sha[2:4] / sha
    stored.write_bytes(stored.read_bytes()[:-1] + b"x")
    with pytest.raises(RecordError, match=rf"ranking\.parquet does not match its pointer's sha256 {sha}"):
        read_results(repo)
    stored.unlink()
    with pytest.raises(RecordError, match=rf"the LFS object of {PARQUET} \(sha256 {sha}\) cannot be read"):
        read_results(repo)


def test_a_checkout_without_lfs_objects_says_so(files: dict[str, bytes], tmp_path: Path) -> None:
    sha = hashlib.sha256(files[PARQUET]).hexdigest()
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha}\nsize {len(files[PARQUET])}\n"
    folder = write_folder(tmp_path / "checkout", {**files, PARQUET: pointer.encode()})
    with pytest.raises(RecordError, match="is a git-LFS pointer, not the file: fetch the LFS objects"):
        read_results(folder)


def test_a_row_naming_a_missing_or_outside_record_is_refused(files: dict[str, bytes], tmp_path: Path) -> None:
    import io

    import pyarrow.parquet as pq

    rows = pq.read_table(io.BytesIO(files[PARQUET])).to_pylist()
    missing = {p: d for p, d in files.items() if p != rows[0]["record"]}
    with pytest.raises(RecordError, match=rf"the record {rows[0]['record']} of model .* is not in the results repo"):
        read_results(write_folder(tmp_path / "a", missing))
    outside = [{**rows[0], "record": "records/../../etc/passwd.json"}, *rows[1:]]
    with pytest.raises(RecordError, match=r"names the record path 'records/\.\./\.\./etc/passwd\.json'"):
        read_results(write_folder(tmp_path / "b", {**files, PARQUET: parquet(outside)}))


def test_an_unknown_status_and_a_non_repo_are_refused(files: dict[str, bytes], tmp_path: Path) -> None:
    import io

    import pyarrow.parquet as pq

    rows = pq.read_table(io.BytesIO(files[PARQUET])).to_pylist()
    odd = [{**rows[0], "status": "pending"}, *rows[1:]]
    with pytest.raises(RecordError, match="status 'pending' of model .* is neither 'ranked' nor 'rejected'"):
        read_results(write_folder(tmp_path / "a", {**files, PARQUET: parquet(odd)}))
    (tmp_path / "empty").mkdir()
    with pytest.raises(RecordError, match="is no results repo: it holds no leaderboards/ folder and is not a git repo"):
        read_results(tmp_path / "empty")


def test_a_results_repo_with_no_commit_has_no_boards(tmp_path: Path) -> None:
    import subprocess

    repo = tmp_path / "results"
    repo.mkdir()
    subprocess.run(["git", "-C", str(repo), "init", "--quiet"], check=True)
    found = read_results(repo)
    assert dict(found.boards) == {} and dict(found.records) == {}
