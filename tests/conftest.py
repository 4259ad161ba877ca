"""Shared fixtures: every test points the cache at a temporary folder; nothing touches the network."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test may use the user's cache or inherit offline/cache settings from the shell."""
    monkeypatch.setenv("TGBHUB_CACHE", str(tmp_path / "default-cache"))
    monkeypatch.delenv("TGBHUB_OFFLINE", raising=False)
    monkeypatch.setenv("TGBHUB_NO_PROGRESS", "1")


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache reused by read-only tests, so each small dataset is built once per session."""
    return tmp_path_factory.mktemp("shared-cache")
