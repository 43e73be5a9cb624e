"""Sweep throughput: 2 local workers vs 1, and a 2-worker Dask LocalCluster vs 2 local processes.

Runs the same slice of the recovery phase-transition sweep (L-BFGS from the spectral and the
small start, d = 20, 30, r = 2, 3, m / n_h = 1.5, 2, 3; about 0.1 s per cell) into fresh stores with ``--workers 1``, ``--workers 2`` and ``--dask-local 2``
and prints, for each, the end-to-end wall time (worker start-up included) and the steady-state
throughput (cells per second between the first and the last finished cell, from the cell
files' modification times). The three results.csv files must be byte-identical.

Targets (issue 6): 2 workers >= 1.7x one worker; Dask-local within 15% of local processes.
The machine has 2 cores, so any other load on it lowers the 2-worker ratio; the 1-minute load
average is printed before each run, and for local processes the CPU seconds the workers got per
wall second ("cores obtained": about 1 for one worker and 2 for two on an idle machine).

Usage: ``python benchmarks/bench_sweep.py [--trials N]`` (default 50 trials per grid point,
1200 cells).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from quadnet.harness.sweeps import Sweep, run_sweep, sweep_cells


def recovery_slice(trials: int) -> Sweep:
    axes = {"d": (20, 30), "r": (2, 3), "ratio": (1.5, 2.0, 3.0), "trial": tuple(range(trials)),
            "init": ("spectral", "small"), "method": ("lbfgs",)}
    return Sweep("recovery", "bench slice of the recovery sweep",
                 "quadnet.harness.cells:recovery_sweep_cell", quick=axes, full=axes,
                 results=("m", "n_h", "success", "rel_error", "iterations", "converged",
                          "diverged"),
                 seed_keys=(), requires=("quadnet.recovery",))


_SPIN = "x = 0\nfor i in range(15_000_000):\n    x += i\n"


def machine_scaling() -> float:
    """What the machine delivers right now: the throughput of two concurrent CPU-bound Python
    processes relative to one (2.0 on two idle cores). A calibration for the ratios below."""
    def run(n: int) -> float:
        t0 = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-c", _SPIN]) for _ in range(n)]
        for proc in procs:
            proc.wait()
        return time.perf_counter() - t0

    one = run(1)
    return 2.0 * one / run(2)


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def timed(sweep: Sweep, store: Path, **backend) -> dict:
    load = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), _children_cpu()
    rep = run_sweep(sweep, store, quick=True, progress=False, **backend)
    wall = time.perf_counter() - t0
    # CPU seconds of the (joined) worker processes per wall second: the number of cores the
    # sweep actually obtained (not meaningful for Dask, whose workers are not our children)
    cores = (_children_cpu() - c0) / wall
    mt = sorted(p.stat().st_mtime for p in (store / "cells").glob("0*.json"))
    steady = (len(mt) - 1) / (mt[-1] - mt[0])
    digest = hashlib.sha256((store / "results.csv").read_bytes()).hexdigest()[:16]
    print(f"{rep.backend:<24} wall {wall:7.2f} s  end-to-end {rep.n_cells / wall:6.2f} cells/s  "
          f"steady {steady:6.2f} cells/s  load {load:4.1f}  cores obtained {cores:4.2f}  "
          f"results.csv {digest}")
    return {"wall": wall, "rate": rep.n_cells / wall, "steady": steady, "digest": digest}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=50)
    p.add_argument("--repeat", type=int, default=2, help="rounds of the three backends, "
                   "interleaved; the best round of each backend is compared (default 2)")
    args = p.parse_args()
    sweep = recovery_slice(args.trials)
    n = len(sweep_cells(sweep, quick=True))
    print(f"recovery slice: {n} cells, {os.cpu_count()} cores")
    ceiling = machine_scaling()
    print(f"machine calibration: 2 concurrent CPU-bound processes give {ceiling:.2f}x the "
          "throughput of one (2.00 on an idle 2-core machine)")
    runs: dict[str, list[dict]] = {"w1": [], "w2": [], "d2": []}
    backends = {"w1": {"workers": 1}, "w2": {"workers": 2}, "d2": {"dask_local": 2}}
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.repeat):
            for key, kw in backends.items():
                runs[key].append(timed(sweep, Path(tmp) / f"{key}-{k}", **kw))
    best = {key: max(rs, key=lambda r: r["rate"]) for key, rs in runs.items()}
    one, two, dask = best["w1"], best["w2"], best["d2"]
    same = len({r["digest"] for rs in runs.values() for r in rs}) == 1
    print(f"\nbest of {args.repeat} rounds per backend:")
    print(f"throughput 2 workers / 1 worker: end-to-end {two['rate'] / one['rate']:.2f}x, "
          f"steady-state {two['steady'] / one['steady']:.2f}x   (target >= 1.7x; the machine "
          f"itself delivered {ceiling:.2f}x)")
    print(f"dask-local 2 / local 2 workers:   end-to-end {dask['rate'] / two['rate']:.2f}x, "
          f"steady-state {dask['steady'] / two['steady']:.2f}x   (target within 15%: >= 0.85x)")
    print(f"results.csv byte-identical across all {sum(map(len, runs.values()))} runs: {same}")


if __name__ == "__main__":
    main()
