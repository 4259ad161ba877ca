"""Run-time settings resolved at call time: explicit argument, then environment variable, then default."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import platformdirs

from tgbhub.errors import InvalidNameError

CACHE_ENV = "TGBHUB_CACHE"
OFFLINE_ENV = "TGBHUB_OFFLINE"
ENDPOINT_ENV = "TGBHUB_ENDPOINT"
HUB_ORG_ENV = "TGBHUB_HUB_ORG"
MIRRORS_ENV = "TGBHUB_MIRRORS"
SOURCES_ENV = "TGBHUB_SOURCES"
TOKEN_ENVS = ("TGBHUB_TOKEN", "HF_TOKEN")
DEFAULT_HUB_ORG = "tgbhub"
#: where a cache miss is looked for, in order; a source that is not configured (no endpoint, no mirror) is skipped
DEFAULT_SOURCES = ("hub", "mirror", "build")
KNOWN_SOURCES = frozenset(DEFAULT_SOURCES)
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


def hub_endpoint(endpoint: str | None = None) -> str | None:
    """The Hub base URL: ``endpoint``, else ``$TGBHUB_ENDPOINT``; ``None`` means no hub is configured.

    Use ``https://huggingface.co`` for the public Hugging Face Hub, or the URL ``tgbhub hub serve`` prints.

    Raises:
        InvalidNameError: if the value is not an ``http://`` or ``https://`` URL.
    """
    chosen = endpoint if endpoint is not None else os.environ.get(ENDPOINT_ENV, "").strip() or None
    if chosen is None:
        return None
    return _url(chosen, "hub endpoint" if endpoint is not None else ENDPOINT_ENV)


def hub_org(org: str | None = None) -> str:
    """The Hub organisation holding one dataset repo per family: ``org``, else ``$TGBHUB_HUB_ORG``, else tgbhub."""
    return org or os.environ.get(HUB_ORG_ENV, "").strip() or DEFAULT_HUB_ORG


def hub_token(token: str | None = None) -> str | None:
    """An access token for private repos and publishing: ``token``, else ``$TGBHUB_TOKEN``, else ``$HF_TOKEN``."""
    return token or next((os.environ[name] for name in TOKEN_ENVS if os.environ.get(name)), None)


def mirror_urls(mirrors: str | Sequence[str] | None = None) -> tuple[str, ...]:
    """Static HTTP mirror base URLs: ``mirrors``, else ``$TGBHUB_MIRRORS`` (comma or space separated).

    Raises:
        InvalidNameError: if an entry is not an ``http://`` or ``https://`` URL.
    """
    raw = mirrors if mirrors is not None else os.environ.get(MIRRORS_ENV, "")
    items = raw.replace(",", " ").split() if isinstance(raw, str) else list(raw)
    label = "mirror" if mirrors is not None else MIRRORS_ENV
    return tuple(_url(item, label) for item in items)


def source_order(sources: str | Sequence[str] | None = None) -> tuple[str, ...]:
    """The order in which sources are tried after the cache: ``sources``, else ``$TGBHUB_SOURCES``, else
    hub, mirror, build.

    Raises:
        InvalidNameError: if a name is not one of hub, mirror, build, or is repeated.
    """
    raw = sources if sources is not None else os.environ.get(SOURCES_ENV, "").strip() or DEFAULT_SOURCES
    names = tuple(raw.replace(",", " ").split() if isinstance(raw, str) else raw)
    label = "sources" if sources is not None else SOURCES_ENV
    unknown = [n for n in names if n not in KNOWN_SOURCES]
    if unknown or len(set(names)) != len(names) or not names:
        raise InvalidNameError(f"{label}={','.join(names)!r} is not a list of distinct sources; use names from "
                               f"{', '.join(DEFAULT_SOURCES)}, e.g. 'hub,build'")
    return names


def _url(value: str, label: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise InvalidNameError(f"{label}={value!r} is not a URL; give one like http://127.0.0.1:8090")
    return value.rstrip("/")


def output_folder(command: str, name: str, model: str | None = None, seed: int | None = None) -> Path:
    """The default output folder of a command that writes files, one pattern for all of them:
    ``./COMMAND[-MODEL]-FAMILY-NAME[-sSEED]`` in the working folder (``train-dlinear-chaosnet-mini-k2.0-rho0.1-n8-s42``,
    ``counterfactual-persistence-t-grab-pdet-2-16``, ``forecast-stats-t-grab-pdet-2-16``); a version is left out,
    and every character a file name should not hold becomes ``-``."""
    parts = [command, *([model] if model else []), name.partition("@")[0]]
    stem = re.sub(r"[^A-Za-z0-9._~-]+", "-", "-".join(parts))
    return Path(stem + (f"-s{seed}" if seed is not None else ""))
