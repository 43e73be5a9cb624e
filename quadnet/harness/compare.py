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

import argparse
import sys

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

EXIT_OK, EXIT_REGRESSED, EXIT_BAD_INPUT = 0, 1, 2


# ------------------------------------------------------------------------ the command
_HELP = """\
Rows are matched by (check, claim). Listed: status changes, rows that crossed their
tolerance, measured values that moved by more than --factor (values within --floor of zero
count as --floor), changed tolerances, added and removed rows.

regressions: a status that got worse (PASS/REPORTED < SKIPPED < FAIL), a row that crossed
its tolerance (or passes only because the tolerance changed), a removed row or check
(unless --allow-removed), a check that crashed; with --strict also a move in the worse
direction.

exit status:
  0  nothing regressed
  1  something regressed
  2  bad input: a file that cannot be read, is not a quadnet report, or has another
     schema version
"""


def add_parser(sub) -> argparse.ArgumentParser:
    """Add the ``compare`` subcommand to the ``quadnet`` parser's subparsers."""
    c = sub.add_parser("compare", help="which rows of two verify --json reports moved",
                       description=__doc__.splitlines()[0].split(": ", 1)[1], epilog=_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("old", metavar="OLD.json", help="the reference report")
    c.add_argument("new", metavar="NEW.json", help="the report to check against it")
    c.add_argument("--factor", type=float, default=DEFAULT_FACTOR,
                   help=f"a move is a change by more than this factor (default "
                   f"{DEFAULT_FACTOR:g}: one order of magnitude)")
    c.add_argument("--floor", type=float, default=DEFAULT_FLOOR,
                   help=f"values within this of zero count as it (default {DEFAULT_FLOOR:g}; "
                   "0 compares exactly)")
    c.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    c.add_argument("--strict", action="store_true",
                   help="a move in the worse direction is a regression too")
    c.add_argument("--allow-removed", action="store_true",
                   help="rows and checks missing from NEW are not regressions")
    c.set_defaults(func=cmd_compare)
    return c


def cmd_compare(args) -> int:
    """``quadnet compare``: print the comparison; 0 nothing regressed, 1 regressed, 2 bad
    input."""
    try:
        old, new = read_report(args.old), read_report(args.new)
    except ReportError as exc:
        print(f"quadnet compare: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    old["_file"], new["_file"] = str(args.old), str(args.new)
    try:
        cmp = compare_reports(old, new, factor=args.factor, floor=args.floor,
                              strict=args.strict, allow_removed=args.allow_removed)
    except ValueError as exc:
        print(f"quadnet compare: --{exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    sys.stdout.write(format_comparison(cmp, args.format))
    return EXIT_REGRESSED if cmp.regressed else EXIT_OK
