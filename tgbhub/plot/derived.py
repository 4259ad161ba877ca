"""The figure of a derived (distorted) dataset: its activity beside its parent's, on the same time bins, so what the
transform did to the timeline shows at a glance."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from tgbhub.errors import UnsupportedTaskError
from tgbhub.plot.core import MAX_BINS, Drawn, margins, pyplot, short, time_bins
from tgbhub.plot.temporal import time_unit

if TYPE_CHECKING:
    from tgbhub.data import TemporalGraphDataset


def beside_parent(ds: TemporalGraphDataset) -> Drawn:
    """Events per time bin of a derived dataset and of its parent, over the span both cover.

    Raises:
        UnsupportedTaskError: for a base dataset (it has no parent to compare with).
    """
    parent = ds.parent
    if parent is None:
        raise UnsupportedTaskError(f"{ds.name}@{ds.version} is a base dataset: the beside-parent figure compares a "
                                   "derived dataset with its parent; draw `activity` instead")
    plt = pyplot("tgbhub.plot.beside_parent")
    # both on the same float bins: the variant's times are float64 while its parent's are snapshot indices
    snapshots = parent.num_snapshots
    if snapshots:  # whole snapshots per bin, so the parent's bars do not alias
        width = math.ceil(snapshots / MAX_BINS)
        bins = math.ceil(snapshots / width)
        span = (0.0, float(bins * width))
    else:
        lows = [float(column.min()) for column in (ds.t, parent.t) if len(column)]
        highs = [float(column.max()) for column in (ds.t, parent.t) if len(column)]
        span, bins = (min(lows, default=0.0), max(highs, default=1.0)), MAX_BINS
    mine = time_bins(ds.t, None, time_unit(ds), span=span, max_bins=bins)
    theirs = time_bins(parent.t, None, time_unit(parent), span=span, max_bins=bins)
    counts, parent_counts = mine.counts(), theirs.counts()
    figure, axes = plt.subplots(figsize=(8, 3), dpi=100, **margins(0.09, 0.17))
    axes.stairs(parent_counts, theirs.edges, label=f"parent {parent.name}", color="0.5", fill=True, alpha=0.5)
    axes.stairs(counts, mine.edges, label=ds.name, color="tab:red", linewidth=1.2)
    axes.set_xlabel(mine.label)
    axes.set_ylabel("events")
    axes.legend(fontsize="small", loc="upper right")
    kind = (ds.manifest.transform or {}).get("kind", "derived")
    changed = _distances(ds)
    axes.set_title(f"{ds.name}@{ds.version}: activity beside its parent ({kind})"
                   + (f"\n{changed} from the parent's test events" if changed else ""), fontsize="medium")
    moved = int(np.abs(counts - parent_counts).sum()) // 2
    alt = (f"Activity of {ds.name} (red line) beside its parent {parent.name} (grey area): events per time bin over "
           f"{len(counts)} shared bins; the {kind} transform leaves {short(ds.num_rows)} events against the parent's "
           f"{short(parent.num_rows)}, about {short(moved)} of them in other bins"
           + (f"; {changed} from the parent's test events (TLPCF's temporal and count distances)." if changed
              else "."))
    return Drawn("beside-parent", figure, "Activity beside its parent", alt)


def _distances(ds: TemporalGraphDataset) -> str:
    """``"ATD 0.123, ACD 0.456"``: the distances a variant's manifest records against its parent's test events, or
    an empty string where it records none."""
    recorded = ds.manifest.stats.get("distance_to_parent_test") or {}
    values = [(name.upper(), recorded.get(name)) for name in ("atd", "acd")]
    return ", ".join(f"{name} {float(value):.3g}" for name, value in values if isinstance(value, (int, float)))
