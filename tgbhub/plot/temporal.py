"""Figures of a temporal graph: activity over time, new vs repeated edges (TEA), edge traffic over time (TET), the
degree distribution and how much of each later split train has already seen.

All of them read the memory-mapped ``t``, ``src`` and ``dst`` columns with vectorised numpy: an edge is the int64 key
``src * num_nodes + dst``; its first appearance comes from one ``np.unique`` over the keys in time order, shared by the
figures that need it (:class:`Edges`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from tgbhub.plot.core import Bins, Drawn, margins, plain_log_labels, pyplot, short, time_bins

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from tgbhub.data import TemporalGraphDataset


def discrete_snapshots(ds: TemporalGraphDataset) -> int | None:
    """The snapshots a time axis counts in, where the times are integer snapshot indices (else ``None``)."""
    return ds.num_snapshots if np.issubdtype(ds.t.dtype, np.integer) else None


def time_unit(ds: TemporalGraphDataset) -> str:
    return str(ds.manifest.graph.get("time_unit", "snapshot"))


def train_split(ds: TemporalGraphDataset) -> str:
    """The split models are fitted on: ``train`` where the manifest declares it, else the earliest one."""
    splits = ds.splits
    return "train" if "train" in splits else min(splits, key=lambda name: splits[name])


class Edges:
    """What several figures of one dataset share, computed once on first use: the time bins, each row's edge key,
    and every distinct edge's first appearance (in time order, also for a variant whose rows are not sorted)."""

    def __init__(self, ds: TemporalGraphDataset) -> None:
        self.ds = ds
        self.nodes = max(ds.num_nodes, 1)

    @cached_property
    def bins(self) -> Bins:
        return time_bins(self.ds.t, discrete_snapshots(self.ds), time_unit(self.ds))

    @cached_property
    def keys(self) -> np.ndarray:
        """Row ``i``'s edge as one integer, ``src * num_nodes + dst``, in the narrowest unsigned type that holds every
        key: numpy sorts 16-bit integers by radix, 8x faster than int64, and a T-GRAB graph's keys fit in 16 bits."""
        space = self.nodes * self.nodes
        dtype = np.uint16 if space <= 2**16 else np.uint32 if space <= 2**32 else np.int64
        keys = np.asarray(self.ds.src).astype(dtype)
        keys *= dtype(self.nodes)
        np.add(keys, self.ds.dst, out=keys, casting="unsafe")
        return keys

    @cached_property
    def order(self) -> np.ndarray | None:
        """The rows in time order, or ``None`` where they already are (every base dataset)."""
        t = self.ds.t
        if len(t) < 2 or bool(np.all(t[1:] >= t[:-1])):
            return None
        return np.argsort(t, kind="stable")

    @cached_property
    def unique(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(first, inverse, rank)``: each distinct edge's first row in time order (sorted by key), each row's
        distinct edge (in time order), and each distinct edge's rank by first appearance."""
        keys = self.keys if self.order is None else self.keys[self.order]
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        del keys
        rank = np.empty(len(first), dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first))
        return first, inverse.reshape(-1), rank

    @cached_property
    def bin_in_time_order(self) -> np.ndarray:
        return self.bins.index if self.order is None else self.bins.index[self.order]


def _title(ds: TemporalGraphDataset) -> str:
    return f"{ds.name}@{ds.version}"


def _mark_splits(axes: Axes, ds: TemporalGraphDataset, bins: Bins) -> None:
    """A dashed line where each split after the first starts (at its first row's time)."""
    t = ds.t
    for name, (lo, hi) in sorted(ds.splits.items(), key=lambda item: item[1]):
        if lo == 0 or lo >= len(t) or hi <= lo:
            continue
        at = float(t[lo])
        axes.axvline(at, color="0.3", linestyle="--", linewidth=0.8)
        axes.annotate(name, (at, 1.0), xycoords=("data", "axes fraction"), fontsize=7, va="top", ha="left")


def activity(ds: TemporalGraphDataset, edges: Edges | None = None) -> Drawn:
    """Events per snapshot (per time bin for continuous time or many snapshots), with the split boundaries."""
    plt = pyplot("tgbhub.plot.activity")
    bins = (edges or Edges(ds)).bins
    counts = bins.counts()
    figure, axes = plt.subplots(figsize=(8, 3), dpi=100, **margins(0.09, 0.17))
    axes.stairs(counts, bins.edges, fill=True, alpha=0.8)
    axes.set_xlabel(bins.label)
    axes.set_ylabel("events")
    _mark_splits(axes, ds, bins)
    axes.set_title(f"{_title(ds)}: activity")
    per = "snapshot" if bins.label == "snapshot" else "time bin"
    peak = int(np.argmax(counts)) if counts.size else 0
    alt = (f"Events per {per} of {ds.name}: {short(ds.num_rows)} events over {bins.count} {per}s, between "
           f"{short(int(counts.min()) if counts.size else 0)} and {short(int(counts.max()) if counts.size else 0)} "
           f"per {per} (peak at {bins.edges[peak]:g}), with dashed lines where the splits {', '.join(ds.splits)} "
           "begin.")
    return Drawn("activity", figure, "Activity over time", alt)


def appearance(ds: TemporalGraphDataset, edges: Edges | None = None) -> Drawn:
    """Temporal edge appearance (TEA): per period, the events on an edge never seen before and the repeated ones."""
    plt = pyplot("tgbhub.plot.appearance")
    edges = edges or Edges(ds)
    first, _, _ = edges.unique
    periods = edges.bin_in_time_order
    bins = edges.bins
    new = np.bincount(periods[first], minlength=bins.count)
    total = bins.counts()
    repeated = total - new
    figure, axes = plt.subplots(figsize=(8, 3), dpi=100, **margins(0.09, 0.17))
    axes.stairs(total, bins.edges, fill=True, color="tab:orange", label="repeated edge")
    axes.stairs(new, bins.edges, fill=True, color="tab:blue", label="new edge")
    axes.set_xlabel(bins.label)
    axes.set_ylabel("events")
    axes.legend(loc="upper right", fontsize="small")
    _mark_splits(axes, ds, bins)
    axes.set_title(f"{_title(ds)}: new vs repeated edges")
    share = 100.0 * repeated.sum() / max(total.sum(), 1)
    per = "snapshot" if bins.label == "snapshot" else "time bin"
    alt = (f"Temporal edge appearance of {ds.name}: per {per}, the events on an edge "
           f"seen for the first time (blue) stacked under those repeating an earlier edge (orange); "
           f"{short(len(first))} distinct edges, {share:.0f}% of the {short(ds.num_rows)} events repeat one.")
    return Drawn("appearance", figure, "Temporal edge appearance (new vs repeated edges)", alt)


def traffic(ds: TemporalGraphDataset, edges: Edges | None = None, max_rows: int = 200) -> Drawn:
    """Temporal edge traffic (TET): distinct edges, ordered by first appearance and grouped into at most
    ``max_rows`` bands, against time; a cell's shade is how many events the band has in that period."""
    plt = pyplot("tgbhub.plot.traffic")
    from matplotlib.colors import LogNorm

    edges = edges or Edges(ds)
    first, inverse, rank = edges.unique
    bins = edges.bins
    distinct = max(len(first), 1)
    bands = max(1, min(distinct, max_rows))
    cell = rank[inverse]  # each row's edge rank, in time order; turned into its cell in place
    cell *= bands
    cell //= distinct
    cell *= bins.count
    cell += edges.bin_in_time_order
    grid = np.bincount(cell, minlength=bands * bins.count).reshape(bands, bins.count).astype(np.float64)
    del cell
    grid[grid == 0] = np.nan  # an empty cell stays white
    figure, axes = plt.subplots(figsize=(8, 3.6), dpi=100, **margins(0.08, 0.14, right=1.0))
    shown = axes.imshow(grid, aspect="auto", origin="lower", interpolation="nearest", cmap="viridis",
                        extent=(float(bins.edges[0]), float(bins.edges[-1]), 0, distinct),
                        norm=LogNorm(vmin=1, vmax=max(float(np.nanmax(grid)) if np.isfinite(grid).any() else 1, 1)))
    plain_log_labels(figure.colorbar(shown, ax=axes, label="events").ax.yaxis)
    axes.set_xlabel(bins.label)
    axes.set_ylabel("edges by first appearance")
    _mark_splits(axes, ds, bins)
    axes.set_title(f"{_title(ds)}: edge traffic")
    alt = (f"Temporal edge traffic of {ds.name}: its {short(distinct)} distinct edges, ordered by first "
           f"appearance bottom to top in {bands} bands, against time; a shaded cell means the band's edges carry "
           "events in that period (darker: fewer), so a horizontal streak is an edge that keeps recurring and the "
           "diagonal edge is where new edges appear.")
    return Drawn("traffic", figure, "Temporal edge traffic", alt)


def degree(ds: TemporalGraphDataset, edges: Edges | None = None) -> Drawn:
    """The degree distribution on log-log axes: for each degree k (events a node takes part in, as source, as
    destination, and both), how many nodes have it."""
    plt = pyplot("tgbhub.plot.degree")
    nodes = max(ds.num_nodes, 1)
    out_degree = np.bincount(ds.src, minlength=nodes)
    in_degree = np.bincount(ds.dst, minlength=nodes)
    total = out_degree + in_degree
    figure, axes = plt.subplots(figsize=(5.5, 4), dpi=100, **margins(0.14, 0.12, right=0.97))
    for label, values, marker in (("total", total, "o"), ("as source", out_degree, "^"),
                                  ("as destination", in_degree, "v")):
        histogram = np.bincount(values)
        k = np.flatnonzero(histogram)
        k = k[k > 0]  # log axes: degree 0 (ids no event uses) has no place on them
        axes.loglog(k, histogram[k], marker, markersize=3, linestyle="none", label=label, alpha=0.7)
    plain_log_labels(axes.xaxis, axes.yaxis)
    axes.set_xlabel("degree k (events)")
    axes.set_ylabel("nodes with degree k")
    axes.legend(fontsize="small")
    axes.set_title(f"{_title(ds)}: degree distribution", fontsize="medium")
    active = int(np.count_nonzero(total))
    alt = (f"Degree distribution of {ds.name} on log-log axes: how many nodes take part in k events, in total, as "
           f"source and as destination; {short(active)} of its {short(ds.num_nodes)} node ids occur, the busiest in "
           f"{short(int(total.max()) if total.size else 0)} events, the median active node in "
           f"{short(float(np.median(total[total > 0])) if active else 0)}.")
    return Drawn("degree", figure, "Degree distribution (log-log)", alt)


@dataclass(frozen=True)
class Novelty:
    """One later split against train: the share of its distinct nodes, its distinct edges and its events (on an edge)
    that train already holds."""

    split: str
    nodes: float
    edges: float
    events: float


def novelty_table(ds: TemporalGraphDataset, edges: Edges | None = None) -> list[Novelty]:
    """How much of every split after train train has seen: nodes, edges and events, each as a share (0..1)."""
    edges = edges or Edges(ds)
    splits = ds.splits
    fitted = train_split(ds)
    lo, hi = splits[fitted]
    nodes = edges.nodes
    seen_nodes = np.zeros(nodes, dtype=bool)
    seen_nodes[ds.src[lo:hi]] = True
    seen_nodes[ds.dst[lo:hi]] = True
    seen_edges = np.unique(edges.keys[lo:hi])
    found = []
    for name, (start, stop) in sorted(splits.items(), key=lambda item: item[1]):
        if name == fitted or stop <= start:
            continue
        present = np.zeros(nodes, dtype=bool)
        present[ds.src[start:stop]] = True
        present[ds.dst[start:stop]] = True
        keys = edges.keys[start:stop]
        at = np.searchsorted(seen_edges, keys)
        known = seen_edges[np.minimum(at, len(seen_edges) - 1)] == keys if len(seen_edges) else np.zeros(len(keys),
                                                                                                          bool)
        distinct, first = np.unique(keys, return_index=True)
        found.append(Novelty(name, float((present & seen_nodes).sum() / max(present.sum(), 1)),
                             float(known[first].sum() / max(len(distinct), 1)), float(known.mean())))
    return found


def novelty(ds: TemporalGraphDataset, edges: Edges | None = None) -> Drawn:
    """Node and edge novelty across splits: for each split after train, the share of its nodes, edges and events
    train has already seen (the rest is new: inductive)."""
    plt = pyplot("tgbhub.plot.novelty")
    table = novelty_table(ds, edges)
    fitted = train_split(ds)
    figure, axes = plt.subplots(figsize=(6, 3.4), dpi=100, **margins(0.11, 0.09))
    width = 0.8 / 3
    positions = np.arange(len(table))
    for offset, (label, attribute) in enumerate((("nodes", "nodes"), ("edges", "edges"),
                                                 ("events on a seen edge", "events"))):
        values = [100.0 * getattr(row, attribute) for row in table]
        bars = axes.bar(positions + (offset - 1) * width, values, width, label=label)
        axes.bar_label(bars, fmt="%.0f", fontsize=7)
    axes.set_xticks(positions, [row.split for row in table])
    axes.set_ylim(0, 110)
    axes.set_ylabel(f"% already seen in {fitted}")
    axes.legend(fontsize="small", loc="lower right")
    axes.set_title(f"{_title(ds)}: seen in {fitted}", fontsize="medium")
    said = "; ".join(f"{row.split}: {100 * row.nodes:.0f}% of nodes, {100 * row.edges:.0f}% of distinct edges and "
                     f"{100 * row.events:.0f}% of events" for row in table)
    alt = (f"Node and edge novelty of {ds.name}: the share of each later split's nodes, distinct edges and events "
           f"that {fitted} already holds ({said or 'no split after ' + fitted}).")
    return Drawn("novelty", figure, f"Novelty across splits (seen in {fitted})", alt)
