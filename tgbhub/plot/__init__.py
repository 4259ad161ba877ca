"""Figures of a dataset, for a paper or a page: each function takes a loaded dataset and returns a matplotlib Figure.

>>> import tgbhub, tgbhub.plot
>>> ds = tgbhub.load_dataset("t-grab/ce-64")                  # doctest: +SKIP
>>> tgbhub.plot.activity(ds, path="ce-64-activity.png")     # doctest: +SKIP

Kinds (:data:`KINDS`), by dataset kind:

* temporal graph: ``activity`` (events per snapshot or time bin), ``appearance`` (new vs repeated edges per period),
  ``traffic`` (edges by first appearance against time), ``degree`` (log-log distribution), ``novelty`` (the share of
  each later split's nodes, edges and events train has seen); a derived dataset adds ``beside-parent`` (its activity
  beside its parent's);
* trajectories (ChaosNet): ``spacetime`` (one initial condition, sites x time) and, where the manifest declares the
  indicators, ``lyapunov`` (largest Lyapunov exponent against SALI, by label).

:func:`draw` returns a :class:`Drawn` with the figure and its alt text (a sentence saying what it shows);
:func:`kinds_for` says which kinds apply to a manifest. matplotlib is imported on the first drawing (the ``plot``
extra); without it, drawing raises :class:`~tgbhub.errors.MissingExtraError`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from tgbhub.errors import InvalidNameError, UnsupportedTaskError
from tgbhub.plot.core import Drawn, require_matplotlib, save

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from tgbhub.data import TemporalGraphDataset, TrajectoryDataset
    from tgbhub.manifest import Manifest

    Dataset = TemporalGraphDataset | TrajectoryDataset

__all__ = ["DRAWING_VERSION", "KINDS", "Drawn", "activity", "appearance", "beside_parent", "degree", "draw",
           "draw_all", "kinds_for", "lyapunov", "novelty", "require_matplotlib", "save", "spacetime", "traffic"]

#: bumped whenever a figure's drawing changes, so figures cached by an older drawing are drawn again
DRAWING_VERSION = 2
#: every figure kind, with the dataset kind it applies to
KINDS: dict[str, str] = {
    "activity": "temporal-graph", "appearance": "temporal-graph", "traffic": "temporal-graph",
    "degree": "temporal-graph", "novelty": "temporal-graph", "beside-parent": "temporal-graph",
    "spacetime": "trajectories", "lyapunov": "trajectories",
}


def kinds_for(manifest: Manifest) -> tuple[str, ...]:
    """The figure kinds that apply to a dataset, from its manifest alone (nothing is read).

    Args:
        manifest: the dataset version's manifest.

    Returns:
        The kinds, in the order a page shows them; empty for a dataset kind with no figures.
    """
    kind = manifest.graph.get("kind")
    if kind == "temporal-graph":
        found = ["activity", "appearance", "traffic", "degree"]
        if len(manifest.splits) > 1:
            found.append("novelty")
        if manifest.derived_from is not None:
            found.append("beside-parent")
        return tuple(found)
    if kind == "trajectories":
        return ("spacetime", "lyapunov") if "indicators" in manifest.graph else ("spacetime",)
    return ()


def draw(kind: str, ds: Dataset, *, shared: Any = None) -> Drawn:
    """Draw one figure of a loaded dataset.

    Args:
        kind: one of :data:`KINDS` that applies to the dataset (:func:`kinds_for`).
        ds: the dataset (``tgbhub.load_dataset``).
        shared: for a temporal graph, the :class:`~tgbhub.plot.temporal.Edges` other figures of the same dataset
            already computed (:func:`draw_all` passes it), so edge keys are sorted once.

    Returns:
        The figure, its title and its alt text.

    Raises:
        InvalidNameError: for an unknown kind (naming the kinds).
        UnsupportedTaskError: for a kind that does not apply to this dataset (naming the ones that do).
        MissingExtraError: if matplotlib is not installed (the ``plot`` extra).
    """
    from tgbhub.plot import derived, temporal, trajectories

    if kind not in KINDS:
        raise InvalidNameError(f"no figure kind {kind!r}; choose one of {', '.join(KINDS)}")
    applies = kinds_for(ds.manifest)
    if kind not in applies:
        raise UnsupportedTaskError(f"the {kind!r} figure does not apply to {ds.name}@{ds.version} (a "
                                   f"{ds.manifest.graph.get('kind')} dataset); its kinds: "
                                   f"{', '.join(applies) or 'none'}")
    if KINDS[kind] == "trajectories":
        series = cast("TrajectoryDataset", ds)
        return trajectories.spacetime(series) if kind == "spacetime" else trajectories.lyapunov(series)
    graph = cast("TemporalGraphDataset", ds)
    if kind == "beside-parent":
        return derived.beside_parent(graph)
    drawing: Callable[..., Drawn] = getattr(temporal, kind)
    return drawing(graph, shared if shared is not None else temporal.Edges(graph))


def draw_all(ds: Dataset, kinds: Sequence[str] | None = None) -> list[Drawn]:
    """Every figure kind that applies to ``ds`` (or the given ``kinds``), sharing the edge computations.

    Raises:
        InvalidNameError, UnsupportedTaskError, MissingExtraError: as :func:`draw`.
    """
    from tgbhub.plot.temporal import Edges

    chosen = list(kinds_for(ds.manifest) if kinds is None else kinds)
    require_matplotlib("tgbhub.plot.draw_all")
    shared = Edges(cast("TemporalGraphDataset", ds)) if ds.manifest.graph.get("kind") == "temporal-graph" else None
    return [draw(kind, ds, shared=shared) for kind in chosen]


def _figure(kind: str, ds: Dataset, path: str | os.PathLike[str] | None) -> Figure:
    drawn = draw(kind, ds)
    if path is not None:
        save(drawn.figure, path, close=False)
    return drawn.figure


def activity(ds: TemporalGraphDataset, *, path: str | os.PathLike[str] | None = None) -> Figure:
    """Events per snapshot (per time bin for continuous time), with the split boundaries; saved to ``path`` when
    given. Raises as :func:`draw`."""
    return _figure("activity", ds, path)


def appearance(ds: TemporalGraphDataset, *, path: str | os.PathLike[str] | None = None) -> Figure:
    """New vs repeated edges per period (temporal edge appearance). Raises as :func:`draw`."""
    return _figure("appearance", ds, path)


def traffic(ds: TemporalGraphDataset, *, path: str | os.PathLike[str] | None = None) -> Figure:
    """Edges by first appearance against time (temporal edge traffic). Raises as :func:`draw`."""
    return _figure("traffic", ds, path)


def degree(ds: TemporalGraphDataset, *, path: str | os.PathLike[str] | None = None) -> Figure:
    """The degree distribution on log-log axes. Raises as :func:`draw`."""
    return _figure("degree", ds, path)


def novelty(ds: TemporalGraphDataset, *, path: str | os.PathLike[str] | None = None) -> Figure:
    """The share of each later split's nodes, edges and events train has seen. Raises as :func:`draw`."""
    return _figure("novelty", ds, path)


def beside_parent(ds: TemporalGraphDataset, *, path: str | os.PathLike[str] | None = None) -> Figure:
    """A derived dataset's activity beside its parent's. Raises as :func:`draw` (UnsupportedTaskError for a base
    dataset)."""
    return _figure("beside-parent", ds, path)


def spacetime(ds: TrajectoryDataset, *, path: str | os.PathLike[str] | None = None) -> Figure:
    """One trajectory (initial condition 0) as sites x time heat maps. Raises as :func:`draw`."""
    return _figure("spacetime", ds, path)


def lyapunov(ds: TrajectoryDataset, *, path: str | os.PathLike[str] | None = None) -> Figure:
    """Largest Lyapunov exponent against SALI per initial condition, by label. Raises as :func:`draw`."""
    return _figure("lyapunov", ds, path)
