"""Progress bars for work a person waits on; silent when stderr is not a terminal or TGBHUB_NO_PROGRESS is set."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm import tqdm

T = TypeVar("T")


def _disabled() -> bool | None:
    # None lets tqdm switch itself off on a non-terminal stderr (logs, CI).
    return True if os.environ.get("TGBHUB_NO_PROGRESS") else None


def track(items: Iterable[T], desc: str, total: int | None = None, unit: str = "it") -> Iterator[T]:
    """Iterate ``items`` with a progress bar on stderr."""
    yield from tqdm(items, desc=desc, total=total, unit=unit, file=sys.stderr, disable=_disabled(), leave=False)


class Steps:
    """A bar over named steps, for one long operation (fetch, verify, install)."""

    def __init__(self, desc: str, total: int) -> None:
        self._bar = tqdm(total=total, desc=desc, file=sys.stderr, disable=_disabled(), leave=False,
                         bar_format="{desc}: {n}/{total} {postfix} [{elapsed}]")

    def step(self, label: str) -> None:
        self._bar.set_postfix_str(label)
        self._bar.update(1)

    def close(self) -> None:
        self._bar.close()


def byte_bar(desc: str, total: int | None) -> tqdm:
    """A bar counting bytes (KiB/MiB scaled) for a download; call ``update(n)`` per block, ``close()`` at the end."""
    return tqdm(total=total, desc=desc, unit="B", unit_scale=True, unit_divisor=1024, file=sys.stderr,
                disable=_disabled(), leave=False)


def counter(desc: str, total: int | None, unit: str = "it") -> tqdm:
    """A bar the caller advances itself (``update(n)``, ``set_postfix_str`` for running values, ``close()``)."""
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=_disabled(), leave=False)
