"""Benchmark: public geometry calls of this version vs quadnet 0.2 (before the constraint tables).

The quadnet target "no public call slows down by more than 5 %" compares each public
``PSDQuotient`` operation with the same operation of the previous release, on the same
inputs, in one process, one BLAS thread, rounds interleaved (old, new, new, old, ...), median
per-call time over ``--rounds``. The previous release is imported under another name: copy its
``quadnet`` package to ``DIR/quadnet_old`` with its imports renamed, e.g.

    git worktree add /tmp/q02 v0.2 && mkdir -p /tmp/qn_old && cp -r /tmp/q02/quadnet /tmp/qn_old/quadnet_old
    grep -rl quadnet /tmp/qn_old/quadnet_old --include=*.py | xargs sed -i -E \\
        's/\\bfrom quadnet([. ])/from quadnet_old\\1/g; s/\\bimport quadnet\\b/import quadnet_old/g; s/"quadnet\\./"quadnet_old./g'
    PYTHONPATH=/tmp/qn_old python benchmarks/bench_validation_overhead.py

Prints the load (``uptime``) and a markdown table of new / old per size and operation.
``--control`` times quadnet 0.2 against a second copy of itself (``DIR/quadnet_old2``, made
with ``quadnet_old2`` in place of ``quadnet_old``): identical code, so its spread of ratios is
the resolution of the measurement (code placement and cache effects move a call by several per
cent). ``--stat min`` takes the least disturbed round instead of the median. ``--wrapped``
times, instead, public callables checked by a ``validate_params`` table at tiny sizes (the
wrapper's own cost: binding, one converter per argument, the result check), against the same
callables of the old copy. ``--clock cpu`` times the process's CPU time
(``time.process_time``) instead of the wall clock: on a loaded machine the time spent waiting
for a core is then not counted, which the A/A control shows to be the only resolution there.
"""

from __future__ import annotations

import argparse
import subprocess
import time

import numpy as np
from bench_geometry import _calls as _geometry_calls
from bench_geometry import _per_call
from threadpoolctl import threadpool_limits

OPS = ("retraction", "exp", "projection", "dist", "log", "transport", "inner_product", "norm")
SIZES = ((10, 2), (100, 5), (1000, 20))


def _calls(M, U, V, Z):
    """``bench_geometry``'s six operations plus the metric's two."""
    return {**_geometry_calls(M, U, V, Z),
            "inner_product": lambda: M.inner_product(U, Z, Z),
            "norm": lambda: M.norm(U, Z)}


def _wrapped_calls(q):
    """Table-checked public callables at tiny sizes, where the wrapper is most of the time."""
    rng = np.random.default_rng(0)
    U, V, K = (rng.standard_normal(shape) for shape in ((5, 2), (5, 2), (2, 2)))
    K = K - K.T
    solvers = q.features.solvers
    return {
        "horizontal_dimension": lambda: q.geometry.horizontal_dimension(5, 2),
        "align": lambda: q.geometry.align(U, V),
        "lyapunov_skew": lambda: q.geometry.lyapunov_skew(U, K),
        "choose_solver": lambda: solvers.choose_solver(1000, 10, 1, ridge=1e-3,
                                                       memory_limit=10**9),
        "kernel_memory_estimate": lambda: solvers.kernel_memory_estimate(1000, 10, 1, "direct"),
    }


def _per_call_cpu(fn, budget: float) -> float:
    """CPU seconds of this process per call of ``fn()``, over at least ``budget`` CPU seconds
    (``time.process_time``: preemption by other processes is not counted)."""
    fn()
    n, t0 = 0, time.process_time()
    while (spent := time.process_time() - t0) < budget or n == 0:
        fn()
        n += 1
    return spent / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--budget", type=float, default=0.05, help="seconds per timing")
    ap.add_argument("--stat", choices=("median", "min"), default="median",
                    help="per-call time over the rounds (min: the least disturbed round)")
    ap.add_argument("--control", action="store_true",
                    help="A/A control: time quadnet_old against a second copy of itself "
                         "(DIR/quadnet_old2, made like quadnet_old), to measure the resolution")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="wall: time.perf_counter; cpu: the process's CPU time (loaded machines)")
    ap.add_argument("--wrapped", action="store_true",
                    help="time table-checked public callables (validate_params) instead")
    args = ap.parse_args()
    import importlib

    import quadnet_old
    quadnet = importlib.import_module("quadnet_old2" if args.control else "quadnet")
    stat = np.min if args.stat == "min" else np.median
    per_call = _per_call_cpu if args.clock == "cpu" else _per_call

    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    print(f"new {quadnet.__version__} ({quadnet.__file__}), old {quadnet_old.__version__}")
    rows = []
    if args.wrapped:
        new, old = _wrapped_calls(quadnet), _wrapped_calls(quadnet_old)
        times = {op: {"new": [], "old": []} for op in new}
        with threadpool_limits(1):
            for k in range(args.rounds):
                for op in new:
                    for which in (("old", "new") if k % 2 == 0 else ("new", "old")):
                        fn = (new if which == "new" else old)[op]
                        times[op][which].append(per_call(fn, args.budget))
        for op in new:
            tn, to = stat(times[op]["new"]), stat(times[op]["old"])
            rows.append(("tiny", op, to * 1e6, tn * 1e6, tn / to))
    with threadpool_limits(1):
        for d, r in (() if args.wrapped else SIZES):
            rng = np.random.default_rng(d)
            U, V, Z = (rng.standard_normal((d, r)) for _ in range(3))
            new = _calls(quadnet.PSDQuotient(d, r), U, V, Z)
            old = _calls(quadnet_old.PSDQuotient(d, r), U, V, Z)
            times = {op: {"new": [], "old": []} for op in OPS}
            for k in range(args.rounds):
                for op in OPS:
                    order = ("old", "new") if k % 2 == 0 else ("new", "old")
                    for which in order:
                        fn = (new if which == "new" else old)[op]
                        times[op][which].append(per_call(fn, args.budget))
            for op in OPS:
                tn, to = stat(times[op]["new"]), stat(times[op]["old"])
                rows.append((f"({d}, {r})", op, to * 1e6, tn * 1e6, tn / to))
    print(f"\nstatistic: {args.stat} over {args.rounds} rounds, {args.clock} clock"
          + (" (A/A control: both columns are quadnet 0.2)" if args.control else ""))
    ratios = np.array([row[-1] for row in rows])
    print(f"geometric mean {np.exp(np.mean(np.log(ratios))):.3f}, range "
          f"{ratios.min():.2f}-{ratios.max():.2f}, above 1.05: {int(np.sum(ratios > 1.05))}")
    print("\n| size | operation | old µs | new µs | new / old |\n|---|---|---|---|---|")
    for size, op, to, tn, ratio in rows:
        print(f"| {size} | {op} | {to:.1f} | {tn:.1f} | {ratio:.2f} |")
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
