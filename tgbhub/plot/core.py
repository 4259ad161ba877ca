"""What every figure shares: matplotlib loaded on first use (the core install has none), a drawn figure with its alt
text, saving, and the time bins the temporal figures count events in.

Every count is a ``numpy.bincount`` over an int64 index array derived from the memory-mapped columns; no figure
makes a Python object per event.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tgbhub.errors import CacheWriteError, MissingExtraError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: the most bars or columns a time axis gets: more would be thinner than a pixel on a page-wide figure
MAX_BINS = 200


@dataclass(frozen=True)
class Drawn:
    """One figure of one dataset: ``kind`` (e.g. ``activity``), the matplotlib ``figure``, ``title`` (a caption) and
    ``alt`` (a sentence saying what it shows, for an ``<img alt>``)."""

    kind: str
    figure: Figure
    title: str
    alt: str


def pyplot(needed_for: str = "tgbhub.plot") -> Any:
    """matplotlib's pyplot on the file-only Agg backend (a figure never opens a window).

    Args:
        needed_for: what asked, for the error message.

    Returns:
        The ``matplotlib.pyplot`` module.

    Raises:
        MissingExtraError: if matplotlib is not installed (the ``plot`` extra).
    """
    try:
        import matplotlib
    except ModuleNotFoundError as exc:
        raise MissingExtraError("matplotlib", "plot", needed_for) from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def margins(left: float, bottom: float, right: float = 0.98, top: float = 0.9, **spacing: float) -> dict[str, Any]:
    """Fixed subplot margins (``gridspec_kw`` of ``plt.subplots``): each figure's layout is known, and matplotlib's
    tight layout, which measures every label on every draw, costs more than drawing a small dataset's data."""
    return {"gridspec_kw": {"left": left, "bottom": bottom, "right": right, "top": top, **spacing}}


def require_matplotlib(needed_for: str) -> None:
    """Check that figures can be drawn, before any data is read for them.

    Raises:
        MissingExtraError: if matplotlib is not installed (the ``plot`` extra).
    """
    pyplot(needed_for)


def save(figure: Figure, path: str | os.PathLike[str], *, close: bool = True) -> Path:
    """Write ``figure`` to ``path`` (PNG, or the format its suffix names: ``.pdf``, ``.svg``), creating its folder.

    The file carries no software version stamp, so the same data drawn twice gives the same bytes.

    Args:
        figure: a figure from one of this package's functions.
        path: the file to write.
        close: release the figure's memory afterwards (pyplot keeps every open figure alive).

    Returns:
        The path written.

    Raises:
        CacheWriteError: if the file cannot be written (naming the path and the way out).
    """
    target = Path(path)
    fmt = target.suffix.lstrip(".").lower() or "png"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(target, format=fmt, metadata={"Software": None} if fmt == "png" else None)
    except OSError as exc:
        raise CacheWriteError(f"the figure {target}", exc) from exc
    finally:
        if close:
            pyplot().close(figure)
    return target


@dataclass(frozen=True)
class Bins:
    """Time bins: ``index[i]`` is row ``i``'s bin (int64), ``edges`` the ``count + 1`` bin edges in the time unit,
    ``label`` the x-axis label (``snapshot``, ``t (5 snapshots per bin)``, ``t (seconds)``)."""

    index: np.ndarray
    count: int
    edges: np.ndarray
    label: str
    unit: str

    def counts(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Events per bin (of the selected ``rows``' bins when given)."""
        return np.bincount(self.index if rows is None else rows, minlength=self.count)


def time_bins(t: np.ndarray, num_snapshots: int | None, unit: str, *, span: tuple[float, float] | None = None,
              max_bins: int = MAX_BINS) -> Bins:
    """Bin a time column: one bin per snapshot of a discrete-time graph with at most ``max_bins`` snapshots, else
    ``max_bins`` equal bins (whole snapshots each for discrete time) over ``span`` (default: the column's range).

    Args:
        t: the time column (a memory map: read once or twice, never copied as Python objects).
        num_snapshots: the snapshots of a discrete-time dataset with integer times, else ``None``.
        unit: the time unit the manifest names (``snapshot``, ``s``, ``day``), for the axis label.
        span: ``(first, last)`` time to bin over, so two datasets (a variant and its parent) share bins.
        max_bins: the most bins.

    Returns:
        The bins, with each row's bin index.
    """
    if num_snapshots is not None and np.issubdtype(t.dtype, np.integer):
        width = max(1, math.ceil(num_snapshots / max_bins))
        count = max(1, math.ceil(num_snapshots / width))
        index = np.asarray(t, dtype=np.int64) if width == 1 else np.floor_divide(t, width, dtype=np.int64)
        label = "snapshot" if width == 1 else f"snapshot ({width} per bin)"
        return Bins(index, count, np.arange(count + 1, dtype=np.float64) * width, label, "snapshot")
    if span is None:
        span = (float(t.min()), float(t.max())) if len(t) else (0.0, 1.0)
    lo, hi = span
    count = max_bins
    if hi <= lo:
        hi = lo + 1.0
    scaled = np.subtract(t, lo, dtype=np.float64)
    scaled *= count / (hi - lo)
    index = scaled.astype(np.int64)
    del scaled
    np.clip(index, 0, count - 1, out=index)  # the last event sits on the right edge; it belongs to the last bin
    return Bins(index, count, np.linspace(lo, hi, count + 1), f"t ({unit}, {count} bins)", unit)


def plain_log_labels(*axes: Any) -> None:
    """Label log axes (an ``Axis``, e.g. ``axes.xaxis`` or a colorbar's) ``1``, ``10``, ``1k``, with no minor labels:
    matplotlib's default log labels are typeset math, parsed per label per draw, which costs more than the data."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    for axis in axes:
        axis.set_major_formatter(FuncFormatter(lambda value, _: short(value)))
        axis.set_minor_formatter(NullFormatter())


def short(number: float) -> str:
    """``1234567`` -> ``'1.2M'``: a count as an alt text says it."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(number) >= size:
            return f"{number / size:.1f}{suffix}"
    return f"{number:g}"
