"""Progress of work a person waits on, on stderr: a bar on a terminal, plain lines elsewhere, nothing when asked.

Every helper here picks its mode when it is created, from the environment and ``sys.stderr`` at that moment:

- ``TGBHUB_NO_PROGRESS`` set to any non-empty value: nothing (``scripts/test``, the benchmarks and Dask workers set
  it);
- stderr is a terminal: a tqdm bar, cleared when the work ends;
- stderr is not a terminal (a log file, CI, a pipe): plain lines such as ``building: 10/52 family/name (31.2 s)``,
  at a modest rate (:class:`Lines`): at most one every :data:`LINE_EVERY` seconds, and once the work has run a
  while at most one per :data:`LINE_SHARE` of the time it has run (an hour-long job writes about fifty lines, not
  seven hundred), plus a last line when it ends. Work that ends within :data:`LINE_EVERY` seconds writes nothing:
  a log needs no line for what took no time.

So every caller (dataset builds, downloads, training epochs, grading many files) logs its progress the same way.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sized
from typing import Any, Protocol, TextIO, TypeVar

from tqdm import tqdm

T = TypeVar("T")

#: the least time between two progress lines (seconds)
LINE_EVERY = 5.0
#: ... and the least share of the time the work has run so far (a long job's lines thin out as it goes)
LINE_SHARE = 0.1

#: the clock the lines read (monotonic: a wall-clock change must not make work look longer or shorter)
clock: Callable[[], float] = time.monotonic


class Progress(Protocol):
    """What callers may use of a bar: tqdm's ``update``, ``set_postfix_str`` and ``close``."""

    def update(self, n: float = 1) -> Any: ...

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None: ...

    def close(self) -> None: ...


#: set to any non-empty value: no progress output at all
NO_PROGRESS_ENV = "TGBHUB_NO_PROGRESS"
#: set to any non-empty value: no notices either (``tgbhub --quiet``); errors and warnings still print. The
#: generators read the same name (``generators.jit.QUIET_ENV``), as they may not import this module.
QUIET_ENV = "TGBHUB_QUIET"


def silenced() -> bool:
    """Whether ``TGBHUB_NO_PROGRESS`` asks for no progress output at all."""
    return bool(os.environ.get(NO_PROGRESS_ENV))


def quiet() -> bool:
    """Whether ``TGBHUB_QUIET`` asks for no notices (one-line messages that are neither errors nor warnings)."""
    return bool(os.environ.get(QUIET_ENV))


def _on_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream: not a person's terminal
        return False


def _mode() -> str:
    """``"off"``, ``"bar"`` or ``"lines"``: see the module docstring."""
    if silenced():
        return "off"
    return "bar" if _on_terminal(sys.stderr) else "lines"


def duration(seconds: float) -> str:
    """``seconds`` as a person reads it: ``12.5 s``, ``2 min 05 s``, ``3 h 07 min``, ``2 d 04 h``, ``5.7 years``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    if seconds < 2 * 86400:
        return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"
    if seconds < 365 * 86400:
        return f"{int(seconds // 86400)} d {int(seconds % 86400 // 3600):02d} h"
    return f"{seconds / (365.25 * 86400):.1f} years"


_duration = duration  # the name the progress lines were written with


def notice(text: str) -> None:
    """A one-line ``tgbhub: notice: TEXT`` on stderr (what a run is about to cost, an old spelling that still
    works), unless ``TGBHUB_QUIET`` (``tgbhub --quiet``) asks for none. Layers below the CLI use this one."""
    if not quiet():
        print(f"tgbhub: notice: {text}", file=sys.stderr, flush=True)


def _amount(value: float, unit: str) -> str:
    if unit == "B":
        size, scale = float(value), 0
        while size >= 1024 and scale < 4:
            size, scale = size / 1024, scale + 1
        return f"{int(value)} B" if scale == 0 else f"{size:.1f} {('KiB', 'MiB', 'GiB', 'TiB')[scale - 1]}"
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


class Lines:
    """Progress as plain lines, ``DESC: N/TOTAL LABEL (ELAPSED)``, for a stream that is not a terminal.

    A line is written by :meth:`update` when at least ``max(every, share x elapsed)`` seconds have passed since the
    previous one (or since the start), and by :meth:`close` when the work has run at least ``every`` seconds and
    the last line does not already say where it ended. The same calls as a tqdm bar (``update``,
    ``set_postfix_str``, ``close``, ``with``), so callers need not know which one they hold. ``timer`` defaults to
    the module's :data:`clock`. Raises nothing (a failed write to ``stream`` aside).
    """

    def __init__(self, desc: str, total: float | None, stream: TextIO, unit: str = "it",
                 timer: Callable[[], float] | None = None, every: float = LINE_EVERY,
                 share: float = LINE_SHARE) -> None:
        self.desc, self.total, self.unit, self.stream = desc, total, unit, stream
        self.n: float = 0
        self.label = ""
        self._clock = timer or clock  # default: the module's clock as it is now (tests replace it)
        self._every, self._share = every, share
        self._start = self._last = self._clock()
        self._said: tuple[float, str] | None = None  # (count, label) of the last line written
        self._closed = False

    def update(self, n: float = 1) -> None:
        """Count ``n`` more units done; write a line if one is due."""
        self.n += n
        now = self._clock()
        if now - self._last >= max(self._every, self._share * (now - self._start)):
            self._write(now)

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        """Set the label the next line ends with (the item just done, a running loss); writes nothing itself."""
        self.label = s

    def close(self) -> None:
        """Write the last line, for work that ran at least ``every`` seconds and was not just reported."""
        if self._closed:
            return
        self._closed = True
        now = self._clock()
        if now - self._start >= self._every and self._said != (self.n, self.label):
            self._write(now)

    def __enter__(self) -> Lines:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, now: float) -> None:
        count = _amount(self.n, self.unit)
        if self.total:
            count += f"/{_amount(self.total, self.unit)}"
        label = f" {self.label}" if self.label else ""
        print(f"{self.desc}: {count}{label} ({_duration(now - self._start)})", file=self.stream, flush=True)
        self._last, self._said = now, (self.n, self.label)


def _progress(desc: str, total: float | None, unit: str = "it", **bar: Any) -> Progress:
    """A tqdm bar on a terminal, :class:`Lines` elsewhere, a disabled (no-op) tqdm when silenced."""
    mode = _mode()
    if mode == "lines":
        return Lines(desc, total, sys.stderr, unit=unit)
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=mode == "off", leave=False, **bar)


def _length(items: Iterable[Any], total: int | None) -> int | None:
    if total is not None:
        return total
    return len(items) if isinstance(items, Sized) else None


def track(items: Iterable[T], desc: str, total: int | None = None, unit: str = "it",
          label: Callable[[T], str] | None = None) -> Iterator[T]:
    """Iterate ``items`` with progress on stderr; an item counts as done when the next one is asked for.

    ``label(item)`` names the item just done in the progress (e.g. a dataset's name); ``total`` defaults to
    ``len(items)`` when there is one.
    """
    bar = _progress(desc, _length(items, total), unit)
    name = label if not silenced() else None
    try:
        for item in items:
            yield item
            if name is not None:
                bar.set_postfix_str(name(item), refresh=False)
            bar.update(1)
    finally:
        bar.close()


class Steps:
    """Progress over named steps, for one long operation (fetch, verify, install)."""

    def __init__(self, desc: str, total: int) -> None:
        self._bar = _progress(desc, total, bar_format="{desc}: {n}/{total} {postfix} [{elapsed}]")

    def step(self, label: str) -> None:
        self._bar.set_postfix_str(label)
        self._bar.update(1)

    def close(self) -> None:
        self._bar.close()


def byte_bar(desc: str, total: int | None) -> Progress:
    """Progress counting bytes (KiB/MiB scaled) for a download; call ``update(n)`` per block, ``close()`` at the end."""
    return _progress(desc, total, unit="B", unit_scale=True, unit_divisor=1024)


def counter(desc: str, total: int | None, unit: str = "it") -> Progress:
    """Progress the caller advances itself (``update(n)``, ``set_postfix_str`` for running values, ``close()``)."""
    return _progress(desc, total, unit)
