"""Run-time settings resolved at call time: explicit argument, then environment variable, then default."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from tgbhub.errors import InvalidNameError

CACHE_ENV = "TGBHUB_CACHE"
OFFLINE_ENV = "TGBHUB_OFFLINE"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


def cache_root(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The cache root: ``cache_dir``, else ``$TGBHUB_CACHE``, else the platform's user cache folder for tgbhub."""
    chosen = cache_dir if cache_dir is not None else os.environ.get(CACHE_ENV) or None
    if chosen is None:
        return Path(platformdirs.user_cache_dir("tgbhub"))
    return Path(chosen).expanduser().resolve()


def offline_mode(offline: bool | None = None) -> bool:
    """Whether network sources are off: ``offline`` if given, else ``$TGBHUB_OFFLINE``.

    Raises:
        InvalidNameError: if ``$TGBHUB_OFFLINE`` holds something that is neither true nor false.
    """
    if offline is not None:
        return bool(offline)
    raw = os.environ.get(OFFLINE_ENV, "").strip().lower()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise InvalidNameError(f"{OFFLINE_ENV}={raw!r} is not a boolean; set it to 1 (offline) or 0 (online)")
