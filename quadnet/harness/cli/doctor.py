"""``quadnet doctor [--probe]``: what this machine runs quadnet with
(:func:`quadnet.harness.doctor.report`)."""

from __future__ import annotations

import argparse
import json
import sys

from quadnet.harness import doctor

__all__ = ["add_parser", "run"]


def add_parser(sub, name: str, summary: str) -> argparse.ArgumentParser:
    """The ``doctor`` subcommand of the ``quadnet`` parser's subparsers ``sub``."""
    d = sub.add_parser(name, help=summary,
                       description=doctor.__doc__.split("\n\n")[0].split(": ", 1)[1])
    d.add_argument("--probe", action="store_true",
                   help="also run the crash canaries, each in a child process")
    d.add_argument("--probe-size", type=int, metavar="N",
                   help="matrix order of the probes (default: 16,000 for the Cholesky probes, "
                   "6,000 for the eigensolver)")
    d.add_argument("--timeout", type=float, default=600.0, metavar="S",
                   help="seconds per probe before it is reported too slow (default 600)")
    d.add_argument("--json", action="store_true", help="print the report as JSON")
    return d


def run(args) -> int:
    """``quadnet doctor``: 0 always unless a probe crashed or failed (then 1)."""
    try:
        info = doctor.report(probe=args.probe, size=args.probe_size, timeout=args.timeout,
                             out=None if args.json else sys.stdout)
        if args.json:
            print(json.dumps(info, indent=2, default=str))
    except Exception as exc:  # noqa: BLE001 - the doctor never crashes
        print(f"quadnet doctor: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    bad = [p for p in info.get("probes", []) if p["status"].startswith(("crashed", "failed"))]
    return 1 if bad else 0
