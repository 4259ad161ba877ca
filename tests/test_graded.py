"""One result type for every graded run (tgbhub.evaluate.graded): a submission file, a baseline, a trained model and
a counterfactual condition are all :class:`Graded`, and read like the JSON the CLI prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tgbhub
from tgbhub import api
from tgbhub.evaluate.graded import KINDS, Graded

NAME = "t-grab/pdet-2-16"


def test_a_baseline_and_its_submission_file_grade_to_the_same_result(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from tgbhub.cli import main

    cache = tmp_path / "cache"
    baseline = api.run_baseline("edgebank", NAME, task="ranking", out=tmp_path / "edgebank.parquet",
                                cache_dir=cache, offline=True)
    assert isinstance(baseline, Graded) and (baseline.kind, baseline.model) == ("baseline", "edgebank")
    graded = api.grade(NAME, tmp_path / "edgebank.parquet", cache_dir=cache, offline=True)
    assert graded.kind == "evaluate" and graded.model is None and graded["task"] == "ranking"
    assert graded.metrics == baseline.metrics and graded["digest"] == baseline["digest"]
    assert dict(graded) == {**graded.result, "submission": str(tmp_path / "edgebank.parquet")}
    assert main(["--cache-dir", str(cache), "baseline", "edgebank", NAME, "--task", "ranking", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)  # the CLI's run wrote no file, so it names none
    assert printed == {k: v for k, v in baseline.to_json().items() if k != "submission"}


def test_the_json_is_flat_and_the_kinds_are_known() -> None:
    result = {"dataset": "d/x", "version": "1.0.0", "metrics": {"f1": 0.5}, "task": "t"}
    graded = Graded("train", result, model="m", run={"seed": 3})
    assert graded.to_json() == {**result, "model": "m", "seed": 3} and graded.get("seed") == 3 and len(graded) == 6
    assert (graded.dataset, graded.version, graded.metrics) == ("d/x", "1.0.0", {"f1": 0.5})
    assert KINDS == ("evaluate", "baseline", "train", "counterfactual")
    assert tgbhub.api.Fetching(offline=True).offline is True  # the typed settings of one call
