"""The served site follows its results repo (tgbhub.site.live): a board graded while `tgbhub hub serve` runs shows
without a restart, and a results repo that does not move costs no rebuild."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from tgbhub.hub.serve import start_local_hub
from tgbhub.results.grader import update
from tgbhub.results.leaderboards import seed_baselines
from tgbhub.publish import parse_target, publish
from tgbhub.site.boards import hub_results
from tgbhub.site.live import LiveSite, results_head

pytest.importorskip("jinja2")

NAME, TASK = "t-grab/pdet-2-1", "snapshot-f1"


def test_a_board_graded_while_serving_shows_after_a_refresh(tmp_path: Path) -> None:
    cache, root = tmp_path / "cache", tmp_path / "hub"
    publish("t-grab", "1.0.0", parse_target(f"git:{root}"), datasets=["pdet-2-1"], cache_dir=cache)
    seed_baselines(f"git:{root}", datasets=["pdet-2-1"], models=["edgebank"], cache_dir=cache, offline=True)
    update(f"git:{root}", cache_dir=cache, offline=True)
    with start_local_hub(root) as hub:
        live = LiveSite(hub, cache)
        first = live.build()
        assert first is not None and live.head == results_head(hub_results(root)) is not None
        page = f"{hub.url}/site/leaderboards/{NAME}/{TASK}.html"
        before = requests.get(page, timeout=30).text
        assert "edgebank" in before and "persistence" not in before
        assert live.refresh() is False and live.folder == first  # nothing committed: no rebuild
        seed_baselines(f"git:{root}", datasets=["pdet-2-1"], models=["persistence"], cache_dir=cache, offline=True)
        update(f"git:{root}", cache_dir=cache, offline=True)
        assert live.refresh() is True and live.head == results_head(hub_results(root))
        after = requests.get(page, timeout=30).text
        assert "edgebank" in after and "persistence" in after
        assert not first.exists() and live.folder is not None and live.folder.exists()
        live.close()
        assert live.folder is None


def test_no_results_repo_has_no_head(tmp_path: Path) -> None:
    assert results_head(None) is None
    assert results_head(tmp_path) is None  # not a git repo
