"""Result records: written by every graded run's --record, re-checked by `tgbhub verify-result`,
protected by their own sha256, aggregated over seeds, and written as canonical JSON."""

from __future__ import annotations

import json
import statistics
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tgbhub
from tgbhub import api
from tgbhub.cli import main
from tgbhub.errors import RecordError
from tgbhub.evaluate import EVALUATOR_VERSION
from tgbhub.evaluate.graded import Graded
from tgbhub.results import records

NAME = "t-grab/pdet-2-4"
FIXED = datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def baseline_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """One `tgbhub baseline edgebank NAME --out sub.parquet --record rec.json`: (cache, submission, record)."""
    folder = tmp_path_factory.mktemp("record-run")
    cache, sub, rec = folder / "cache", folder / "sub.parquet", folder / "rec.json"
    assert main(["--cache-dir", str(cache), "--offline", "--quiet", "baseline", "edgebank", NAME,
                 "--out", str(sub), "--record", str(rec)]) == 0
    return cache, sub, rec


def _verify(cache: Path, rec: Path, sub: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict, str]:
    code = main(["--cache-dir", str(cache), "--offline", "verify-result", str(rec), str(sub), "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else {}), err


def test_a_baseline_record_names_what_it_was_computed_on(baseline_run: tuple[Path, Path, Path]) -> None:
    _, sub, rec = baseline_run
    record = records.read_record(rec)
    manifest = api.resolve(NAME)
    assert record["dataset"]["ref"] == f"{NAME}@{manifest.version}"
    assert record["dataset"]["files"]["edges.parquet"]["sha256"] == manifest.file("edges.parquet").sha256
    assert set(record["dataset"]["files"]) == {f.name for f in manifest.files}  # negatives included
    assert record["task"]["name"] == "snapshot-f1" and record["split"] == "test"
    assert record["evaluator"]["version"] == EVALUATOR_VERSION
    assert record["submission"]["sha256"] == records.file_sha256(sub)
    assert record["model"]["name"] == "edgebank" and set(record["metrics"]) == {"f1", "f1_change_points"}
    assert record["environment"]["tgbhub"] and record["environment"]["numpy"] and record["created"].endswith("Z")
    assert rec.read_bytes() == records.canonical_json(record) + b"\n"


def test_the_record_verifies_against_its_submission(baseline_run: tuple[Path, Path, Path],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    cache, sub, rec = baseline_run
    code, found, _ = _verify(cache, rec, sub, capsys)
    assert code == 0 and found["ok"]
    assert {row["check"] for row in found["checks"]} >= {"submission sha256", "metric f1", "metric f1_change_points"}
    assert all(row["status"] == "match" for row in found["checks"])


def test_a_changed_score_is_a_mismatch_naming_the_metric(baseline_run: tuple[Path, Path, Path], tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    cache, sub, rec = baseline_run
    table = pq.read_table(sub)
    scores = table.column("score").to_numpy().copy()
    row = int((scores >= 0.5).nonzero()[0][0])  # a predicted edge, now predicted absent: that snapshot's F1 moves
    scores[row] = 0.0
    tampered = tmp_path / "tampered.parquet"
    pq.write_table(table.set_column(table.schema.get_field_index("score"), "score", pa.array(scores)), tampered)
    code, found, _ = _verify(cache, rec, tampered, capsys)
    assert code == 1 and not found["ok"]
    mismatched = {row["check"] for row in found["checks"] if row["status"] == "mismatch"}
    assert {"submission sha256", "metric f1"} <= mismatched
    assert "dataset digests" not in mismatched  # the data did not change, the submission did


def test_an_edited_record_is_refused_by_its_sha256(baseline_run: tuple[Path, Path, Path], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    cache, sub, rec = baseline_run
    record = json.loads(rec.read_text())
    record["metrics"]["f1"] = 0.99
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(record, indent=1))
    code, found, err = _verify(cache, edited, sub, capsys)
    assert code == 2 and not found
    assert "record_sha256" in err and str(edited) in err and err.count("\n") == 1


def test_another_valid_submission_is_named_by_its_sha256(baseline_run: tuple[Path, Path, Path], tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A valid file of another task, given for the record's: the answer is its sha256, not column advice."""
    cache, _, rec = baseline_run
    ranking = tmp_path / "ranking.parquet"
    api.run_baseline("edgebank", NAME, task="ranking", out=ranking, cache_dir=cache, offline=True)
    code, found, _ = _verify(cache, rec, ranking, capsys)
    recorded = records.read_record(rec)["submission"]["sha256"]
    assert code == 1 and [row["check"] for row in found["checks"] if row["status"] == "mismatch"] == \
        ["submission sha256"]
    assert found["checks"][0]["message"].startswith(f"its sha256 {records.file_sha256(ranking)} differs from the "
                                                    f"record's {recorded}")
    assert any(note.startswith("not re-graded: the file is not the one the record graded") for note in found["notes"])
    assert main(["--cache-dir", str(cache), "--offline", "verify-result", str(rec), str(ranking)]) == 1
    out = capsys.readouterr().out
    assert "its sha256" in out and "differs from the record's" in out and "Write exactly the columns" not in out


def test_a_file_with_renamed_columns_is_told_its_own_tasks_columns(baseline_run: tuple[Path, Path, Path],
                                                                   tmp_path: Path) -> None:
    cache, _, _ = baseline_run
    ranking = tmp_path / "ranking.parquet"
    api.run_baseline("edgebank", NAME, task="ranking", out=ranking, cache_dir=cache, offline=True)
    renamed = tmp_path / "renamed.parquet"
    pq.write_table(pq.read_table(ranking).rename_columns(["query", "positive", "negatives"]), renamed)
    with pytest.raises(tgbhub.SubmissionError, match="Write exactly the columns query, pos_score, neg_scores"):
        api.grade(NAME, renamed, cache_dir=cache, offline=True)


def test_missing_files_are_user_errors(baseline_run: tuple[Path, Path, Path], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    cache, sub, rec = baseline_run
    assert _verify(cache, tmp_path / "none.json", sub, capsys)[0] == 2
    code, _, err = _verify(cache, rec, tmp_path / "none.parquet", capsys)
    assert code == 2 and "none.parquet" in err


def _graded(seed: int, f1: float, split: str = "test") -> Graded:
    manifest = api.resolve(NAME)
    result = {"dataset": NAME, "version": manifest.version, "digest": "d", "digests": {"edges.parquet": "d"},
              "task": "snapshot-f1", "task_type": "snapshot-link-prediction", "split": split,
              "metrics": {"f1": f1, "f1_change_points": f1 / 2}}
    return Graded("train", result, model="gclstm", run={"seed": seed, "device": "cpu", "epochs_run": 3,
                                                        "train_seconds": 1.5, "hyperparameters": {"channels": 8}})


def _record(seed: int, f1: float, split: str = "test") -> dict:
    return records.make_record(_graded(seed, f1, split), manifest=api.resolve(NAME), now=FIXED)


def test_three_seeds_aggregate_to_mean_sample_std_and_n() -> None:
    values = [0.5, 0.625, 0.875]
    entry = records.aggregate([_record(seed, f1) for seed, f1 in zip((0, 1, 2), values, strict=True)])
    assert entry["n"] == 3 and entry["seeds"] == [0, 1, 2] and entry["std"] == "sample (ddof=1)"
    assert entry["metrics"]["f1"]["mean"] == pytest.approx(2 / 3)
    assert entry["metrics"]["f1"]["std"] == pytest.approx(statistics.stdev(values))
    assert entry["metrics"]["f1_change_points"]["values"] == [v / 2 for v in values]
    assert entry["dataset"] == f"{NAME}@{api.resolve(NAME).version}" and entry["model"] == "gclstm"


def test_aggregation_refuses_other_configurations_and_edited_records() -> None:
    with pytest.raises(RecordError, match="split 'val'"):
        records.aggregate([_record(0, 0.5), _record(1, 0.6, split="val")])
    with pytest.raises(RecordError, match="seed"):
        records.aggregate([_record(0, 0.5), _record(0, 0.6)])
    edited = {**_record(1, 0.6), "metrics": {"f1": 0.9, "f1_change_points": 0.45}}
    with pytest.raises(RecordError, match="changed after it was written"):
        records.aggregate([_record(0, 0.5), edited])


def test_canonical_json_is_stable() -> None:
    first, second = _record(7, 0.1 + 0.2), _record(7, 0.1 + 0.2)
    assert records.canonical_json(first) == records.canonical_json(second)
    assert first["record_sha256"] == second["record_sha256"] == records.record_sha256(first)
    text = records.canonical_json(first)
    assert records.canonical_json(json.loads(text)) == text  # floats as repr round-trip exactly
    assert b"0.30000000000000004" in text
    reordered = dict(reversed(list(first.items())))
    assert records.canonical_json(reordered) == text
    assert json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode() == text


def test_counterfactual_writes_one_record_per_condition(tmp_path: Path) -> None:
    out = tmp_path / "records"
    assert main(["--cache-dir", str(tmp_path / "cache"), "--offline", "--quiet", "counterfactual", "edgebank", NAME,
                 "--kinds", "shuffle", "--seeds", "0", "--controls", "--out", str(tmp_path / "cf"),
                 "--record", str(out)]) == 0
    found = [records.read_record(path) for path in sorted(out.glob("*.json"))]
    assert sorted(r["condition"]["variant"] for r in found) == ["real", f"{NAME}~shuffle-s0"]
    assert all(r["kind"] == "counterfactual" and "mrr" in r["metrics"] for r in found)


def test_a_submission_or_a_binary_file_passed_as_the_record_is_named_as_such(tmp_path: Path, capsys) -> None:
    """The record and the submission swapped (or the submission twice) is one line naming the order, not a
    UnicodeDecodeError traceback."""
    from tgbhub.cli import main

    submission = tmp_path / "submission.parquet"
    pq.write_table(pa.table({"score": [0.5]}), submission)
    assert main(["verify-result", str(submission), str(submission)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is a Parquet file, not a result record (JSON): pass the record first" in err[0]
    binary = tmp_path / "record.json"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(records.RecordError, match="is not text .*not a result record"):
        records.read_record(binary)
