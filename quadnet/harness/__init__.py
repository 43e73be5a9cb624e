"""The reproduction harness: paper checks, resumable sweeps and their pure cells, the CLI.

Nothing in the mathematical subpackages imports from here. ``quadnet verify`` runs the
checks of ``quadnet.harness.checks``; ``quadnet sweep`` runs the sweeps registered in
:mod:`quadnet.harness.cells` through :func:`run_sweep`, locally or on Dask;
:func:`draw_figure` redraws any figure of a saved report, at any size and style.

The same machinery verifies claims of your own, with no edit of quadnet: a check is
``run(ctx: CheckContext, res: CheckResult)`` registered with :func:`register` (which makes
``res`` with the check's name and claim) in any file or module; its rows (:meth:`CheckResult.add`, :meth:`~CheckResult.report`,
:meth:`~CheckResult.skip`), figures (drawers registered with :func:`figure`, drawn with
:meth:`CheckContext.draw`) and sweeps (:func:`register_sweep` with a cell function,
:func:`run_sweep`) behave as the built-in ones. ``quadnet verify --checks FILE_OR_MODULE``
(or :func:`load_checks`, or a ``quadnet.checks`` entry point; see
:mod:`quadnet.harness.discovery`) loads them, ``quadnet new-check NAME`` writes a template,
and ``quadnet compare OLD.json NEW.json`` lists the rows that moved between two reports
(:mod:`quadnet.harness.compare`). These names are the very objects the built-in checks use
(``quadnet.harness.register is quadnet.harness.checks._base.register``).
"""

# ruff: noqa: I001  (one re-export per line, grouped by module in theory order)

from quadnet.harness.checks._base import (
    CheckContext as CheckContext,
    CheckError as CheckError,
    CheckResult as CheckResult,
    Row as Row,
    figure as figure,
    register as register,
)
from quadnet.harness.checks import (
    available as available_checks,
    run_check as run_check,
)
from quadnet.harness import compare as compare  # quadnet compare: reports side by side
from quadnet.harness import discovery as discovery  # --checks and the quadnet.checks entry points
from quadnet.harness import newcheck as newcheck  # quadnet new-check: a template check
from quadnet.harness.discovery import (
    load_checks as load_checks,
    load_entry_points as load_entry_points,
    unload_checks as unload_checks,
)
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
    "CheckContext",
    "CheckError",
    "CheckResult",
    "Row",
    "SWEEPS",
    "Sweep",
    "SweepReport",
    "available_checks",
    "available_sweeps",
    "cells",
    "compare",
    "discovery",
    "draw_figure",
    "figure",
    "figure_names",
    "get_sweep",
    "load_checks",
    "load_entry_points",
    "newcheck",
    "phase_transition_cell",
    "quotient_gd_cell",
    "read_results",
    "recovery_sweep_cell",
    "register",
    "register_sweep",
    "run_check",
    "run_sweep",
    "selection_cell",
    "selection_sweep_cell",
    "sweep_cells",
    "unload_checks",
]
