import json
from pathlib import Path

import pytest

from tgbhub.cli import main


def test_list_json_filters_by_family(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--family", "t-grab", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 52 and {r["name"] for r in rows} >= {"t-grab/ce-64", "t-grab/psto-64-p90"}


def test_list_unknown_family_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--family", "tgrab"]) == 2
    assert "t-grab" in capsys.readouterr().err


def test_info_shows_recipe_and_discrepancy(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", "t-grab/ce-4", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["recipe"]["seed"] == 12345 and info["known_discrepancies"][0]["paper"] == 165_142
    assert main(["info", "t-grab/ce-4"]) == 0
    assert "165142" in capsys.readouterr().out


def test_get_offline_then_cached(capsys: pytest.CaptureFixture[str], cache_dir: Path) -> None:
    assert main(["--cache-dir", str(cache_dir), "get", "t-grab/pdet-2-1", "--offline", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == "build"
    assert main(["--cache-dir", str(cache_dir), "get", "t-grab/pdet-2-1", "--version", "1.0.0", "--json"]) == 0
    card = json.loads(capsys.readouterr().out)
    assert card["source"] == "cache" and card["num_rows"] == 10_560


def test_get_unknown_suggests(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["get", "t-grab/ce-65"]) == 2
    assert "t-grab/ce-64" in capsys.readouterr().err


def test_build_names_and_nothing(capsys: pytest.CaptureFixture[str], cache_dir: Path) -> None:
    assert main(["--cache-dir", str(cache_dir), "build", "t-grab/pdet-2-1", "t-grab/lr-1-1"]) == 0
    assert "2 dataset(s) ready (2 built" in capsys.readouterr().out
    assert main(["--cache-dir", str(cache_dir), "build"]) == 2
    assert "--all" in capsys.readouterr().err
