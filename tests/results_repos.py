"""Results repos for the site tests, written the way the shared contract says `tgbhub leaderboard update` writes them:
``leaderboards/<family>/<name>/<task>.parquet`` (pyarrow, the contract's columns in order) and the grader's records
``records/<family>/<name>/<task>/<submission_id>.json``, in a plain folder or as a git: hub repo (LFS Parquet).

The records are real: the bundled baselines graded with ``--record``; ranks come from their re-graded metric.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from tgbhub import cli

#: the contract's columns, in its order
SCHEMA = pa.schema([("rank", pa.int32()), ("model", pa.string()), ("metric", pa.string()), ("mean", pa.float64()),
                    ("std", pa.float64()), ("n", pa.int32()), ("seeds", pa.string()), ("verified", pa.bool_()),
                    ("flagged", pa.bool_()), ("claimed", pa.float64()), ("status", pa.string()),
                    ("message", pa.string()), ("date", pa.string()), ("record", pa.string()),
                    ("submission", pa.string()), ("paper", pa.string()), ("dataset", pa.string())])
REJECTION = "submission column 'score', row 3: NaN is not a score. Write a finite float for every candidate."


def parquet(rows: list[dict[str, Any]], schema: pa.Schema = SCHEMA) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), sink)
    return sink.getvalue()


def graded_files(name: str, task: str, models: tuple[str, ...], work: Path, cache: Path) -> dict[str, bytes]:
    """A results repo's files for ``name``'s ``task``: one ranked row per baseline model (graded for real, with its
    record), the first model's row flagged (its claim beats its re-grade), and one rejected row."""
    family, short = name.split("/")
    work.mkdir(parents=True, exist_ok=True)
    graded = []
    for model in models:
        submission, record = work / f"{model}.parquet", work / f"{model}.json"
        assert cli.main(["--cache-dir", str(cache), "--quiet", "baseline", model, name, "--task", task, "--out",
                         str(submission), "--record", str(record)]) == 0
        sid = hashlib.sha256(submission.read_bytes()).hexdigest()[:16]
        graded.append((model, sid, record.read_bytes(), json.loads(record.read_text())))
    metric = "mrr"
    graded.sort(key=lambda item: -item[3]["metrics"][metric])
    files: dict[str, bytes] = {}
    rows = []
    for rank, (model, sid, data, record) in enumerate(graded, start=1):
        path = f"records/{family}/{short}/{task}/{sid}.json"
        files[path] = data
        value = record["metrics"][metric]
        flagged = model == models[0]
        claimed = min(value + 0.25, 1.0) if flagged else None
        rows.append({"rank": rank, "model": model, "metric": metric, "mean": value, "std": None, "n": 1,
                     "seeds": "[0]", "verified": True, "flagged": flagged, "claimed": claimed, "status": "ranked",
                     "message": f"claimed {metric} {claimed} differs from the re-grade {value}" if flagged else "",
                     "date": "2026-11-20", "record": path, "submission": sid,
                     "paper": "https://example.org/paper" if rank == 1 else None,
                     "dataset": f"{name}@{record['dataset']['version']}"})
    rows.append({"rank": None, "model": "broken-model", "metric": metric, "mean": None, "std": None, "n": 1,
                 "seeds": "[0]", "verified": False, "flagged": False, "claimed": None, "status": "rejected",
                 "message": REJECTION, "date": "2026-11-21", "record": "", "submission": "0" * 16, "paper": None,
                 "dataset": rows[0]["dataset"]})
    files[f"leaderboards/{family}/{short}/{task}.parquet"] = parquet(rows)
    return files


def write_folder(folder: Path, files: dict[str, bytes]) -> Path:
    for path, data in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    return folder


def commit_to_hub(root: Path, files: dict[str, bytes], repo_id: str = "tgbhub/results") -> Path:
    """``files`` committed onto ``main`` of ``root/datasets/<repo_id>`` by the git: target (Parquet as LFS)."""
    from tgbhub.hub.git import GitTarget
    from tgbhub.hub.layout import RepoFile

    target = GitTarget(root)
    repo = target.repo_dir(repo_id)
    if not (repo / ".git").is_dir():
        repo.mkdir(parents=True)
        subprocess.run(["git", "-C", str(repo), "init", "--quiet", "--initial-branch=main"], check=True)
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", "main"], capture_output=True,
                          text=True, check=False).stdout.strip() or None
    planned = [RepoFile(path, hashlib.sha256(data).hexdigest(), len(data), data=data) for path, data in files.items()]
    target.commit_files(repo, head, planned, [], "results")
    return repo
