"""The reproduction harness: paper checks, resumable sweeps and their pure cells, the CLI.

Nothing in the mathematical subpackages imports from here. ``quadnet verify`` runs the
checks of ``quadnet.harness.checks``; ``quadnet sweep`` runs the sweeps registered in
:mod:`quadnet.harness.cells` through :func:`run_sweep`, locally or on Dask;
:func:`draw_figure` redraws any figure of a saved report, at any size and style.
"""

# ruff: noqa: I001  (one re-export per line, grouped by module in theory order)

from quadnet.harness.sweeps import (
    SWEEPS as SWEEPS,
    Sweep as Sweep,
    SweepReport as SweepReport,
    available_sweeps as available_sweeps,
    get_sweep as get_sweep,
    read_results as read_results,
    register_sweep as register_sweep,
    run_sweep as run_sweep,
    sweep_cells as sweep_cells,
)
from quadnet.harness import cells as cells  # registers the built-in sweeps
from quadnet.harness.figures import (
    draw_figure as draw_figure,
    figure_names as figure_names,
)
from quadnet.harness.cells import (
    phase_transition_cell as phase_transition_cell,
    quotient_gd_cell as quotient_gd_cell,
    recovery_sweep_cell as recovery_sweep_cell,
    selection_cell as selection_cell,
    selection_sweep_cell as selection_sweep_cell,
)

__all__ = [
    "SWEEPS",
    "Sweep",
    "SweepReport",
    "available_sweeps",
    "cells",
    "draw_figure",
    "figure_names",
    "get_sweep",
    "phase_transition_cell",
    "quotient_gd_cell",
    "read_results",
    "recovery_sweep_cell",
    "register_sweep",
    "run_sweep",
    "selection_cell",
    "selection_sweep_cell",
    "sweep_cells",
]
