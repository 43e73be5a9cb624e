"""``quadnet compare OLD.json NEW.json``: the rows of two reports that moved.

The rules are :mod:`quadnet.harness.compare`'s; both reports are read with
:func:`~quadnet.harness.report.read_report` (so each is checked against the schema).
"""

from __future__ import annotations

import argparse
import sys

from quadnet.harness.report import (
    DEFAULT_FACTOR,
    DEFAULT_FLOOR,
    ReportError,
    compare_reports,
    format_comparison,
    read_report,
)

__all__ = ["EXIT_BAD_INPUT", "EXIT_OK", "EXIT_REGRESSED", "add_parser", "run"]

EXIT_OK, EXIT_REGRESSED, EXIT_BAD_INPUT = 0, 1, 2

EXIT_HELP = """\
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


def add_parser(sub, name: str, summary: str) -> argparse.ArgumentParser:
    """The ``compare`` subcommand of the ``quadnet`` parser's subparsers ``sub``."""
    c = sub.add_parser(name, help=summary,
                       description="which rows of two ``verify --json`` reports moved.",
                       epilog=EXIT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    return c


def run(args) -> int:
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
