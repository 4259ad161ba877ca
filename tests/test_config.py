from pathlib import Path

import pytest

from tgbhub.config import cache_root, offline_mode
from tgbhub.errors import InvalidNameError


def test_cache_root_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TGBHUB_CACHE", str(tmp_path / "env"))
    assert cache_root(tmp_path / "arg") == tmp_path / "arg"
    assert cache_root() == tmp_path / "env"
    monkeypatch.delenv("TGBHUB_CACHE")
    assert cache_root().name == "tgbhub"


@pytest.mark.parametrize("raw, expected", [("1", True), ("true", True), ("YES", True), ("0", False), ("", False)])
def test_offline_from_environment(monkeypatch: pytest.MonkeyPatch, raw: str, expected: bool) -> None:
    monkeypatch.setenv("TGBHUB_OFFLINE", raw)
    assert offline_mode() is expected
    assert offline_mode(not expected) is (not expected)


def test_offline_garbage_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TGBHUB_OFFLINE", "sometimes")
    with pytest.raises(InvalidNameError, match="set it to 1"):
        offline_mode()
