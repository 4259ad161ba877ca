"""Figures of a trajectory dataset (ChaosNetBench): one initial condition as a sites x time picture, and the chaos
indicators the manifest declares (largest Lyapunov exponent, SALI and its chaotic / sticky / regular labels)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from tgbhub.plot.core import Drawn, margins, pyplot

if TYPE_CHECKING:
    from tgbhub.data import TrajectoryDataset

#: the steps a space-time picture shows: a few thousand columns is all a page-wide image resolves
MAX_STEPS = 2000
LABEL_COLOURS = {"chaotic": "tab:red", "sticky": "tab:orange", "regular": "tab:blue"}


def spacetime(ds: TrajectoryDataset, ic: int = 0) -> Drawn:
    """The angles ``q`` and momenta ``p`` of every site of initial condition ``ic`` against time, as two heat maps
    on a cyclic colour scale (the values wrap modulo 2 pi)."""
    plt = pyplot("tgbhub.plot.spacetime")
    steps = min(ds.num_steps, MAX_STEPS)
    sites = ds.num_sites
    state = np.asarray(ds.states[ic, :steps])  # one IC's first steps: a few MB read from the memory map
    figure, panels = plt.subplots(2, 1, figsize=(8, 4.2), dpi=100, sharex=True,
                                  **margins(0.08, 0.12, right=1.0, top=0.92, hspace=0.12))
    names = ds.variables
    for panel, (label, block) in zip(panels, (("q", state[:, :sites]), ("p", state[:, sites:2 * sites])),
                                     strict=True):
        shown = panel.imshow(np.mod(block.T, 2 * math.pi), aspect="auto", origin="lower", cmap="twilight",
                             vmin=0.0, vmax=2 * math.pi, interpolation="nearest", extent=(0, steps, 0.5, sites + 0.5))
        panel.set_ylabel(f"site ({label})")
        figure.colorbar(shown, ax=panel, label=f"{label} mod 2\u03c0")
    panels[-1].set_xlabel(f"step (initial condition {ic}, first {steps} of {ds.num_steps})")
    panels[0].set_title(f"{ds.name}@{ds.version}: space-time ({names[0]}..{names[-1]})", fontsize="medium")
    alt = (f"Space-time picture of {ds.name}: the angle q and momentum p of each of its {sites} sites (rows) over the "
           f"first {steps} steps (columns) of initial condition {ic}, coloured on a cyclic scale from 0 to 2 pi; "
           "smooth bands mean regular motion, speckle means chaos.")
    return Drawn("spacetime", figure, "Space-time picture of one trajectory", alt)


def has_indicators(ds: TrajectoryDataset) -> bool:
    return "indicators" in ds.manifest.graph


def lyapunov(ds: TrajectoryDataset) -> Drawn:
    """Per initial condition: its largest Lyapunov exponent against its SALI at the longest horizon the file holds,
    coloured by the SALI label, with the manifest's chaotic and regular thresholds."""
    plt = pyplot("tgbhub.plot.lyapunov")
    indicators = ds.indicators
    declared = ds.manifest.graph["indicators"]
    horizons = sorted(int(key.removeprefix("sali_")) for key in indicators
                      if key.startswith("sali_") and not key.startswith("sali_iterations_"))
    horizon = horizons[-1]
    lam = np.asarray(indicators["lambda_max"], dtype=np.float64).reshape(-1)
    sali = np.asarray(indicators[f"sali_{horizon}"], dtype=np.float64).reshape(-1)
    labels = np.asarray(indicators[f"label_{horizon}"]).astype(str).reshape(-1)
    floor = 1e-18  # SALI reaches exactly 0 once it underflows: drawn at the floor on log axes
    figure, axes = plt.subplots(figsize=(6, 3.8), dpi=100, **margins(0.12, 0.13, right=0.97))
    counted = []
    for label, colour in LABEL_COLOURS.items():
        chosen = labels == label
        if chosen.any():
            axes.scatter(lam[chosen], np.maximum(sali[chosen], floor), s=14, color=colour, label=f"{label} "
                         f"({int(chosen.sum())})")
            counted.append(f"{int(chosen.sum())} {label}")
    for threshold, name in ((float(declared["chaotic_below"]), "chaotic below"),
                            (float(declared["regular_above"]), "regular above")):
        axes.axhline(threshold, color="0.4", linestyle="--", linewidth=0.8)
        axes.annotate(f"{name} {threshold:g}", (0.01, threshold), xycoords=("axes fraction", "data"), fontsize=7,
                      va="bottom")
    axes.set_yscale("log")
    axes.yaxis.set_major_formatter("{x:.0e}")  # SALI spans 1e-16..1: exponents, as plain text
    axes.set_xlabel("largest Lyapunov exponent \u03bb_max (per step)")
    axes.set_ylabel(f"SALI after {horizon} steps")
    axes.legend(fontsize="small", loc="upper right")
    axes.set_title(f"{ds.name}@{ds.version}: chaos indicators", fontsize="medium")
    alt = (f"Chaos indicators of {ds.name}: each of its {len(lam)} initial conditions as a dot, its largest "
           f"Lyapunov exponent (from {lam.min():.3g} to {lam.max():.3g} per step) against its SALI after {horizon} "
           f"steps on a log scale, coloured by label ({', '.join(counted)}), with the labels' thresholds dashed.")
    return Drawn("lyapunov", figure, "Lyapunov exponent and SALI per initial condition", alt)
