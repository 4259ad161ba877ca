"""tgbn NDCG@10 under the two label-stream modes (tgbhub/tasks/declared.py): ``tgb-parity`` (py-tgb's: the edges at a
label timestamp are visible before it is predicted) and ``strict`` (only edges before it). On a small tgbn release the
``period-activity`` baseline's submissions, and so the graded NDCG, differ exactly when edges lie on a label
timestamp; the graded result records the mode."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tgbhub
from tests import tgb_formats as formats
from tests.test_import_tgbn import write_weekly
from tgbhub.baselines.nodeprop import period_activity
from tgbhub.tasks.declared import read_ndcg_mode, visible_edges
from tgbhub.errors import InvalidNameError, SubmissionError
from tgbhub.local.imports import import_tgb

NAME = "tgbn-genre"
WEEK, START = 7 * 86400, 1_104_537_600  # write_weekly's weeks: label timestamps at START + (w + 1) * WEEK


def _release(folder: Path, on_label_times: int) -> Any:
    """write_weekly's genre release with no edge on a label timestamp, except, for ``on_label_times = k > 0``, every
    k-th edge moved onto the end of its week (a label timestamp); imported and loaded."""
    files = write_weekly(folder / "files", NAME, n_edges=600, n_users=12, n_classes=10)
    path = files.files["edgelist"]
    rows = list(csv.reader(io.StringIO(path.read_text())))
    header, body = rows[0], rows[1:]
    labels = START + WEEK * np.arange(1, 12)
    for row in body:
        if int(row[0]) in labels:  # a random edge that happens to fall on a week's end
            row[0] = str(int(row[0]) - 1)
    for row in body[::on_label_times] if on_label_times else []:  # every few edges, so every split has some
        row[0] = str(START + ((int(row[0]) - START) // WEEK + 1) * WEEK)
    body.sort(key=lambda r: int(r[0]))
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows([header, *body])
    path.write_bytes(buffer.getvalue().encode("utf-8"))
    zipped = formats.zip_dataset(files, folder / "zips")
    import_tgb(NAME, zipped, cache_dir=folder / "cache", expected_stats={})
    ds = tgbhub.load_dataset(f"tgb/{NAME}", cache_dir=folder / "cache", offline=True)
    ds.test_cache = folder / "cache"  # where the baseline command finds it
    return ds


@pytest.fixture(scope="module")
def apart(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return _release(tmp_path_factory.mktemp("apart"), on_label_times=0)


@pytest.fixture(scope="module")
def touching(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return _release(tmp_path_factory.mktemp("touching"), on_label_times=4)


def _graded_split(ds: Any) -> str:
    rows = ds.manifest.task["labels"]["rows"]
    return "test" if rows["test"][1] > rows["test"][0] else "val"


def _both(ds: Any, split: str) -> tuple[dict[str, Any], dict[str, Any]]:
    task = ds.manifest.task
    return period_activity(ds, task, split, "tgb-parity"), period_activity(ds, task, split, "strict")


def test_visible_edges_counts_the_edges_at_the_label_time_only_in_parity() -> None:
    t = np.array([1, 2, 2, 3, 5])
    assert visible_edges(t, np.array([2, 4, 5]), "tgb-parity").tolist() == [3, 4, 5]
    assert visible_edges(t, np.array([2, 4, 5]), "strict").tolist() == [1, 4, 4]
    assert visible_edges(t, np.array([2]), "tgb-parity") == visible_edges(t, np.array([2]))  # parity is the default
    with pytest.raises(InvalidNameError, match="mode='leaky'.*'tgb-parity'.*'strict'"):
        read_ndcg_mode("leaky")
    with pytest.raises(ValueError, match="not sorted"):
        visible_edges(t[::-1], np.array([2]))


@pytest.mark.parametrize("split", ["val", "test"])
def test_modes_agree_when_no_edge_lies_on_a_label_timestamp(apart: Any, split: str) -> None:
    assert not np.isin(apart.t, np.asarray(apart.artifact("labels.parquet")["t"])).any()
    if apart.manifest.task["labels"]["rows"][split][1] <= apart.manifest.task["labels"]["rows"][split][0]:
        pytest.skip(f"the small release grades no label timestamp in {split}")
    parity, strict = _both(apart, split)
    assert np.array_equal(parity["scores"], strict["scores"]) and parity["scores"].any()
    evaluator = apart.get_evaluator("ndcg")
    a, b = evaluator.evaluate(parity, split=split), evaluator.evaluate(strict, split=split)
    assert a["metrics"] == b["metrics"]
    assert (a["protocol"]["ndcg_mode"], b["protocol"]["ndcg_mode"]) == ("tgb-parity", "strict")


def test_modes_differ_exactly_at_and_after_label_timestamps_with_edges(touching: Any) -> None:
    split = _graded_split(touching)
    label_t = np.unique(np.asarray(touching.artifact("labels.parquet")["t"]))
    on = np.intersect1d(np.unique(touching.t), label_t)
    assert len(on)
    parity, strict = _both(touching, split)
    changed = np.unique(parity["t"][(parity["scores"] != strict["scores"]).any(axis=1)])
    # an edge at L counts for L's period under parity and for the next label timestamp's under strict
    following = label_t[np.minimum(np.searchsorted(label_t, on) + 1, len(label_t) - 1)]
    assert len(changed) and set(changed.tolist()) <= set(on.tolist()) | set(following.tolist())
    assert set(on.tolist()) & set(np.unique(parity["t"]).tolist()) <= set(changed.tolist()) | set(following.tolist())
    evaluator = touching.get_evaluator("ndcg")
    a = evaluator.evaluate(parity, split=split, detail=True)
    b = evaluator.evaluate(strict, split=split, detail=True)
    assert a["metrics"]["ndcg"] != b["metrics"]["ndcg"]
    differs = [t for t, x, y in zip(a["per_timestamp"]["t"], a["per_timestamp"]["ndcg"], b["per_timestamp"]["ndcg"])
               if x != y]
    assert set(differs) <= set(changed.tolist())
    assert b["protocol"] == {"ndcg_mode": "strict", "visible_edges": b["protocol"]["visible_edges"]}
    assert "t < label time" in b["protocol"]["visible_edges"]


def test_the_mode_is_stated_once_and_recorded(touching: Any, tmp_path: Path) -> None:
    split = _graded_split(touching)
    strict = period_activity(touching, touching.manifest.task, split, "strict")
    evaluator = touching.get_evaluator("ndcg")
    as_file = dict(strict)  # a plain mapping (a file) carries no mode: the grader is told, or assumes parity
    assert evaluator.evaluate(as_file, split=split)["protocol"]["ndcg_mode"] == "tgb-parity"
    assert evaluator.evaluate(as_file, split=split, mode="strict")["protocol"]["ndcg_mode"] == "strict"
    with pytest.raises(SubmissionError, match="ndcg_mode.*'strict'.*mode='tgb-parity'"):
        evaluator.evaluate(strict, split=split, mode="tgb-parity")
    with pytest.raises(InvalidNameError, match="mode='after'"):
        evaluator.evaluate(as_file, split=split, mode="after")


def test_the_baseline_command_takes_the_mode_as_an_option(touching: Any, tmp_path: Path) -> None:
    cache = touching.test_cache
    graded = tgbhub.api.run_baseline("period-activity:mode=strict", f"tgb/{NAME}", cache_dir=cache, offline=True,
                                     split=_graded_split(touching))
    assert graded.result["protocol"]["ndcg_mode"] == "strict"
    with pytest.raises(InvalidNameError, match="mode='later'"):
        tgbhub.api.run_baseline("period-activity:mode=later", f"tgb/{NAME}", cache_dir=cache, offline=True)
