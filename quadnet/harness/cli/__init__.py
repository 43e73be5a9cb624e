"""The ``quadnet`` command: a thin layer over ``quadnet.harness.checks`` and the sweeps.

``quadnet verify [NAME ...] [--quick] [--format text|markdown|latex|json] [--json FILE]
[--resume FILE] [--seed N] [--figures DIR]`` runs the registered checks and prints one table
(claim, kind, source, reference value, measured, tolerance, status), check by check as each
finishes, then a summary line and the wall time. ``--json FILE`` is rewritten atomically after
every check; ``--resume FILE`` skips the checks FILE already holds (same version, seed and
mode); SIGINT and SIGTERM stop the run with the finished checks saved.

``quadnet figures [NAME ...] [--from REPORT.json] [--out DIR] [--width IN] [--height IN]
[--format pdf,png,svg] [--style paper|slides]`` redraws the figures from a saved report
without recomputing (``--from``), or recomputes them (and says so).

``quadnet sweep NAME [--quick] [--set KEY=V1,V2 ...] [--store DIR] [--workers N | --dask-local
N | --scheduler ADDRESS]`` runs or resumes a parameter sweep; ``quadnet sweep --list`` lists
them.

``quadnet report FILE.json [--format markdown|latex|json|text] [--out FILE]`` turns a
``verify --json`` report into a results table.

``verify``, ``figures`` and ``sweep`` take ``--checks FILE_OR_MODULE`` (checks of one's own,
:mod:`quadnet.harness.discovery`); ``quadnet verify --list`` lists every check with its origin.
``quadnet compare OLD.json NEW.json`` (:mod:`quadnet.harness.compare`) lists the rows that
moved; ``quadnet new-check NAME`` (:mod:`quadnet.harness.newcheck`) writes a template check;
``quadnet doctor`` prints what the machine runs quadnet with.

Layout: :data:`COMMANDS` is the one table of commands (name -> module and one-line summary,
in the order of ``quadnet --help``). Each command is one module of this package with the same
two functions, ``add_parser(sub, name, summary)`` (its arguments) and ``run(args) -> int``
(the exit status); :func:`main` imports only the module of the command it runs (``quadnet
--help`` imports none). What the commands share (exit codes, output-path checks, signals,
running one check) is in ``_common``; what a report is (schema, reading, writing, rendering)
is :mod:`quadnet.harness.report`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Iterable
from typing import NamedTuple

# the names this module held before the commands had their own modules
from quadnet.harness.cli._common import (
    EXIT_FAIL as EXIT_FAIL,
    EXIT_OK as EXIT_OK,
    EXIT_SIGINT as EXIT_SIGINT,
    EXIT_SIGTERM as EXIT_SIGTERM,
    EXIT_SKIPPED as EXIT_SKIPPED,
    EXIT_USAGE as EXIT_USAGE,
    Interrupted as Interrupted,
    run_one as _run_one,  # noqa: F401
)
from quadnet.harness.report import (
    REFERENCES as REFERENCES,
    REPORT_SCHEMA as REPORT_SCHEMA,
    format_report as format_report,
    results_latex as results_latex,
    results_markdown as results_markdown,
    results_text as results_text,
    summary_lines as summary_lines,
    write_json_atomic as write_json_atomic,
)

__all__ = ["COMMANDS", "CommandInfo", "add_command", "build_parser", "main"]


class CommandInfo(NamedTuple):
    """Where a command lives and the line ``quadnet --help`` shows for it."""

    module: str
    summary: str


#: The commands, in the order of ``quadnet --help``; a module is imported only to run its
#: command (or to build its ``--help``).
COMMANDS: dict[str, CommandInfo] = {
    "verify": CommandInfo("quadnet.harness.cli.verify",
                          "reproduce the claims and print measured vs claimed"),
    "figures": CommandInfo("quadnet.harness.cli.figures",
                           "redraw the figures from a saved report, or recompute them"),
    "sweep": CommandInfo("quadnet.harness.cli.sweep",
                         "run or resume a parameter sweep (local processes or Dask)"),
    "report": CommandInfo("quadnet.harness.cli.report",
                          "results table from a verify --json report"),
    "compare": CommandInfo("quadnet.harness.cli.compare",
                           "which rows of two verify --json reports moved"),
    "new-check": CommandInfo("quadnet.harness.cli.new_check",
                             "write a template check of your own and its test"),
    "doctor": CommandInfo("quadnet.harness.cli.doctor",
                          "versions, BLAS, CPU and memory; --probe runs the crash canaries"),
}


def add_command(sub, name: str) -> argparse.ArgumentParser:
    """Add the command ``name`` of :data:`COMMANDS` to the subparsers ``sub`` (importing its
    module); its ``run`` becomes the parser's ``func`` default."""
    info = COMMANDS[name]
    module = importlib.import_module(info.module)
    parser = module.add_parser(sub, name, info.summary)
    parser.set_defaults(func=module.run)
    return parser


def build_parser(commands: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The ``quadnet`` parser with every command of :data:`COMMANDS`; only those in
    ``commands`` (default: all) get their arguments, the others are listed by name and
    summary without importing their modules."""
    full = set(COMMANDS if commands is None else commands)
    p = argparse.ArgumentParser(prog="quadnet", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name, info in COMMANDS.items():
        if name in full:
            add_command(sub, name)
        else:
            sub.add_parser(name, help=info.summary)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run ``quadnet ARGV``; the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    first = next((a for a in argv if not a.startswith("-")), None)
    args = build_parser([first] if first in COMMANDS else []).parse_args(argv)
    return args.func(args)


#: Old names of this module that now live in a command module: name -> (module, name there).
_MOVED = {
    "QUICK_MEASURED": ("verify", "QUICK_MEASURED"),
    "QUICK_BUDGET": ("verify", "QUICK_BUDGET"),
    "PER_CHECK_QUICK_BUDGET": ("verify", "PER_CHECK_QUICK_BUDGET"),
    "quick_time_claim": ("verify", "quick_time_claim"),
    "cmd_verify": ("verify", "run"),
    "cmd_figures": ("figures", "run"),
    "cmd_sweep": ("sweep", "run"),
    "cmd_report": ("report", "run"),
}


def __getattr__(name: str):
    if name in _MOVED:
        module, attr = _MOVED[name]
        return getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
