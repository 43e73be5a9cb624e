"""``quadnet report``: a ``verify --json`` report as a results table."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from quadnet.harness.cli._common import EXIT_OK, EXIT_USAGE, writable_file
from quadnet.harness.report import ReportError, format_report, read_report

__all__ = ["add_parser", "run"]


def add_parser(sub, name: str, summary: str) -> argparse.ArgumentParser:
    """The ``report`` subcommand of the ``quadnet`` parser's subparsers ``sub``."""
    r = sub.add_parser(name, help=summary)
    r.add_argument("json_file", metavar="FILE", help="written by quadnet verify --json FILE")
    r.add_argument("--format", choices=("text", "markdown", "latex", "json"), default="markdown",
                   help="table format (default markdown)")
    r.add_argument("--out", metavar="FILE", help="write the table here (default: stdout)")
    return r


def run(args) -> int:
    """``quadnet report``: 0 written, 2 a file that is not a report or an unwritable --out."""
    try:
        report = read_report(args.json_file)
    except ReportError as exc:
        print(f"quadnet report: {exc}", file=sys.stderr)
        return EXIT_USAGE
    text = format_report(report, args.format)
    if args.out:
        err = writable_file(args.out, "--out")
        if err:
            print(f"quadnet report: {err}", file=sys.stderr)
            return EXIT_USAGE
        Path(args.out).write_text(text)
    else:
        print(text, end="")
    return EXIT_OK
