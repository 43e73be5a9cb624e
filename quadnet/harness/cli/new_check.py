"""``quadnet new-check NAME [--dir DIR]``: write a template check of one's own and its test
(:func:`quadnet.harness.newcheck.write_template`)."""

from __future__ import annotations

import argparse
import sys

from quadnet.harness import newcheck

__all__ = ["add_parser", "run"]


def add_parser(sub, name: str, summary: str) -> argparse.ArgumentParser:
    """The ``new-check`` subcommand of the ``quadnet`` parser's subparsers ``sub``."""
    n = sub.add_parser(name, help=summary,
                       description=newcheck.__doc__.splitlines()[0].split(": ", 1)[1])
    n.add_argument("name", metavar="NAME", help="the check's name, e.g. my-identity")
    n.add_argument("--dir", default=".", metavar="DIR",
                   help="where to write the two files (default: the current folder)")
    return n


def run(args) -> int:
    """``quadnet new-check``: 0 written, 2 bad name or existing file."""
    try:
        paths = newcheck.write_template(args.name, args.dir)
    except (ValueError, OSError) as exc:
        print(f"quadnet new-check: {exc}", file=sys.stderr)
        return 2
    for p in paths:
        print(p)
    print(f"next: quadnet verify --checks {paths[0]} {args.name} --quick\n"
          f"      python -m pytest {paths[1]}", file=sys.stderr)
    return 0
