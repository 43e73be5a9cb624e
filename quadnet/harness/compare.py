"""``quadnet compare OLD.json NEW.json``: which rows of two ``verify --json`` reports moved.

Rows are matched by ``(check, claim)`` (the k-th row of a claim that occurs several times in a
check with the k-th in the other report). For every matched row the comparison reports

* a **status change** (``PASS -> FAIL``, ``PASS -> SKIPPED``, ...); it is a *regression*
  when the new status is worse in the order ``PASS = REPORTED < SKIPPED < FAIL``;
* a row that **crossed its tolerance**: the old value met its tolerance and the new value
  does not meet the new tolerance, or meets it only because the tolerance changed (the
  relation is re-evaluated from the numbers, so a report whose status disagrees with its
  numbers is caught too); always a regression;
* a **move**: the measured value changed by more than ``factor`` (default 10, one order of
  magnitude), or changed sign. Values within ``floor`` (default ``1e-12``) of zero count as
  ``floor``, so a row at rounding level (``0 -> 1.3e-15``) does not move while ``0 -> 5``
  does. A move is listed with its direction (``worse`` / ``better`` for rows with a
  ``<=``/``>=`` tolerance, ``?`` otherwise) and is a regression only with ``strict``
  (worse or unknown direction);
* a changed tolerance.

Rows (and checks) present in only one report are *added* or *removed*; a removed row is a
regression unless ``allow_removed`` (a claim that is no longer verified). A check that
crashed in NEW (no rows, an ``error`` metric) is one regression, not one per row.

Why factor 10: the theorem rows of the built-in checks measure errors at float64 rounding
level (``1e-16`` to ``1e-13``), which move by factors of a few between seeds, BLAS builds and
thread counts; a quick run with seed 0 against seed 1 of the ``quotient`` and ``geometry``
checks moves 0 of their 34 rows by more than 10 beyond the floor (docs/report_schema.md). An
order of magnitude is what a change of algorithm or a lost digit looks like.

Exit status: 0 nothing regressed, 1 something regressed, 2 bad input (a file that cannot be
read, is not a quadnet report, or has another schema version).
"""

from __future__ import annotations

import functools

from quadnet.harness.report import (
    COMPARE_SCHEMA,
    DEFAULT_FACTOR,
    DEFAULT_FLOOR,
    REPORT_SCHEMA,
    Comparison,
    ReportError,
    compare_reports,
    format_comparison,
    read_report,
    report_schema,
    validate_report,
)

__all__ = [
    "COMPARE_SCHEMA",
    "DEFAULT_FACTOR",
    "DEFAULT_FLOOR",
    "REPORT_SCHEMA",
    "Comparison",
    "ReportError",
    "compare_reports",
    "format_comparison",
    "read_report",
    "report_schema",
    "validate_report",
]

#: Names of the ``quadnet compare`` command, which is :mod:`quadnet.harness.cli.compare`.
_COMMAND = {"EXIT_OK": "EXIT_OK", "EXIT_REGRESSED": "EXIT_REGRESSED",
            "EXIT_BAD_INPUT": "EXIT_BAD_INPUT", "cmd_compare": "run"}


def __getattr__(name: str):
    if name in _COMMAND:
        from quadnet.harness.cli import compare as command

        return getattr(command, _COMMAND[name])
    if name == "add_parser":  # add_parser(sub): the compare subcommand of a quadnet parser
        from quadnet.harness.cli import add_command

        return functools.partial(add_command, name="compare")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
