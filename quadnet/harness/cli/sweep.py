"""``quadnet sweep``: run or resume a parameter sweep (local processes or Dask)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from quadnet.harness import discovery, sweeps
from quadnet.harness.cli._common import EXIT_FAIL, EXIT_OK, EXIT_USAGE, progress_on

__all__ = ["add_parser", "run"]


def add_parser(sub, name: str, summary: str) -> argparse.ArgumentParser:
    """The ``sweep`` subcommand of the ``quadnet`` parser's subparsers ``sub``."""
    s = sub.add_parser(name, help=summary)
    s.add_argument("name", nargs="?", help="the sweep (quadnet sweep --list shows them)")
    s.add_argument("--list", action="store_true", help="list the sweeps and exit")
    s.add_argument("--quick", action="store_true", help="the small grid")
    s.add_argument("--set", action="append", metavar="KEY=V1,V2",
                   help="replace one axis of the grid, e.g. --set d=20,40 --set r=1,2 "
                   "(repeatable; values take the type of the axis)")
    s.add_argument("--store", metavar="DIR", help="store directory (default: sweeps/NAME, "
                   "with -quick and -custom-HASH suffixes); rerun with the same store to "
                   "resume")
    s.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    backend = s.add_mutually_exclusive_group()
    backend.add_argument("--workers", type=int, default=1, metavar="N",
                         help="local worker processes (default 1; 0 runs the cells in this "
                         "process)")
    backend.add_argument("--dask-local", type=int, metavar="N",
                         help="a local Dask cluster with N one-thread worker processes")
    backend.add_argument("--scheduler", metavar="ADDRESS",
                         help="an existing Dask scheduler, e.g. tcp://host:8786")
    s.add_argument("--start-method", choices=("fork", "spawn", "forkserver"),
                   help="how local worker processes start (default: fork where available)")
    s.add_argument("--chunk", type=int, metavar="N", help="cells per task (default: about 8 "
                   "tasks per worker, at most 16 cells each; results do not depend on it)")
    s.add_argument("--progress", action="store_true", help="progress bar even without a tty")
    s.add_argument("--no-progress", action="store_true", help="no progress bar")
    s.add_argument("--checks", action="append", metavar="FILE_OR_MODULE",
                   help="load the sweeps registered by this file or module (repeatable)")
    return s


def _parse_set(items: list[str]) -> dict[str, list[str]]:
    grid: dict[str, list[str]] = {}
    for item in items or []:
        key, sep, values = item.partition("=")
        if not sep or not key.strip() or not values.strip():
            raise ValueError(f"--set expects KEY=V1,V2,..., got {item!r}")
        grid[key.strip()] = [v.strip() for v in values.split(",") if v.strip()]
    return grid


def run(args) -> int:
    """``quadnet sweep``: 0 done, 1 a cell failed (finished cells kept), 2 refused, 130
    interrupted."""
    if discovery.load_for_command(args.checks, "sweep") is None:  # sweeps of user checks
        return EXIT_USAGE
    if args.list:
        for name in sweeps.available_sweeps():
            sw = sweeps.SWEEPS[name]
            nq = len(sweeps.sweep_cells(sw, quick=True))
            nf = len(sweeps.sweep_cells(sw, quick=False))
            axes = ", ".join(f"{k}={','.join(map(str, v))}" for k, v in sw.axes(True).items())
            print(f"{name:<14} {nq:>5} cells quick, {nf:>6} full   {sw.description}\n"
                  f"{'':<14} quick grid: {axes}")
        return EXIT_OK
    if not args.name:
        print("quadnet sweep: give a sweep NAME (quadnet sweep --list shows them)",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        grid = _parse_set(args.set)
        if grid:
            grid = sweeps.parse_grid(args.name, grid, quick=args.quick)
    except (ValueError, TypeError) as exc:
        print(f"quadnet sweep: {exc}", file=sys.stderr)
        return EXIT_USAGE
    suffix = ("-quick" if args.quick else "") + \
        (f"-custom-{sweeps.grid_tag(grid)}" if grid else "")
    store = args.store or str(Path("sweeps") / (args.name + suffix))
    if grid:
        print(f"[quadnet] sweep {args.name}: custom grid {grid} (other axes from the "
              f"{'quick' if args.quick else 'full'} grid) -> {store}", file=sys.stderr)
    try:
        rep = sweeps.run_sweep(args.name, store, quick=args.quick, seed=args.seed,
                               workers=args.workers, dask_local=args.dask_local,
                               scheduler=args.scheduler, chunk=args.chunk, grid=grid or None,
                               start_method=args.start_method,
                               progress=progress_on(args))
    except sweeps.SweepCellError as exc:
        print(f"quadnet sweep: {exc}\nfinished cells are kept in {store}; fix the cause and "
              "rerun the same command to resume", file=sys.stderr)
        return EXIT_FAIL
    except (ValueError, TypeError, ImportError) as exc:
        print(f"quadnet sweep: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except RuntimeError as exc:  # e.g. spawned workers that could not start
        print(f"quadnet sweep: {exc}", file=sys.stderr)
        return EXIT_FAIL
    except KeyboardInterrupt:
        print(f"\nquadnet sweep: interrupted; finished cells are kept in {store}; rerun the "
              "same command to resume", file=sys.stderr)
        return 130
    print(f"sweep {args.name}: {rep.n_cells} cells ({rep.skipped} already finished, {rep.ran} "
          f"run now on {rep.backend}) -> {rep.results}")
    return EXIT_OK
