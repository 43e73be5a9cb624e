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
"""

from __future__ import annotations

import argparse
import subprocess

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--budget", type=float, default=0.05, help="seconds per timing")
    args = ap.parse_args()
    import quadnet
    import quadnet_old

    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    print(f"new {quadnet.__version__} ({quadnet.__file__}), old {quadnet_old.__version__}")
    rows = []
    with threadpool_limits(1):
        for d, r in SIZES:
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
                        times[op][which].append(_per_call(fn, args.budget))
            for op in OPS:
                tn, to = np.median(times[op]["new"]), np.median(times[op]["old"])
                rows.append((f"({d}, {r})", op, to * 1e6, tn * 1e6, tn / to))
    print("\n| size | operation | old µs | new µs | new / old |\n|---|---|---|---|---|")
    for size, op, to, tn, ratio in rows:
        print(f"| {size} | {op} | {to:.1f} | {tn:.1f} | {ratio:.2f} |")
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
