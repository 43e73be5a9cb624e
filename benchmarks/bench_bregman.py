"""Benchmark: quadnet.bregman_projection vs cvxpy (default solver) at d = 2,000, m = 50.

Both solve ``argmin sum q log(q/q0) - q + q0`` s.t. ``A q = y`` (quadnet theory §5). Prints, from one
run: wall times and their ratio, the relative constraint residuals
``||A q - y||_inf / ||y||_inf`` and their ratio, and the relative difference of the solutions.

Run with ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_bregman.py``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from quadnet.commuting.bregman import bregman_projection, bregman_projection_cvxpy


def _residual(A, q, y) -> float:
    return float(np.max(np.abs(A @ q - y)) / np.max(np.abs(y)))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--d", type=int, default=2000)
    p.add_argument("--m", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeats", type=int, default=5, help="median over repeats for bregman_projection")
    p.add_argument("--eps", type=float, default=None,
                   help="start q0 = eps * U(0.5, 1.5) instead of U(0.5, 1.5) (e.g. 1e-300)")
    args = p.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    A = rng.standard_normal((args.m, args.d))
    y = A @ rng.uniform(0.5, 1.5, args.d)
    q0 = rng.uniform(0.5, 1.5, args.d) * (1.0 if args.eps is None else args.eps)

    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        ours = bregman_projection(A, y, q0)
        times.append(time.perf_counter() - t0)
    t_ours = float(np.median(times))

    import cvxpy as cp  # noqa: F401  (baseline; ImportError if not installed)

    t0 = time.perf_counter()
    q_cvx, info = bregman_projection_cvxpy(A, y, q0)
    t_cvx = time.perf_counter() - t0

    r_ours = _residual(A, ours.q, y)
    r_cvx = _residual(A, q_cvx, y)
    floor = np.finfo(float).eps  # a residual of exactly 0 is reported as one ulp
    print(f"d = {args.d}, m = {args.m}, seed = {args.seed}, eps = {args.eps}")
    print(f"bregman_projection : {t_ours * 1e3:9.2f} ms (median of {args.repeats}), "
          f"{ours.iterations} Newton steps, residual {r_ours:.2e}, KKT {ours.kkt_residual:.2e}")
    print(f"cvxpy ({info['solver']:>9s}): {t_cvx * 1e3:9.2f} ms (incl. canonicalisation), "
          f"status {info['status']}, residual {r_cvx:.2e}")
    print(f"time ratio (cvxpy / ours)     : {t_cvx / t_ours:10.1f}x   (target >= 50x)")
    print(f"residual ratio (cvxpy / ours) : {r_cvx / max(r_ours, floor):10.2e}x (target >= 1e4x)")
    print(f"relative difference of the solutions: "
          f"{np.linalg.norm(q_cvx - ours.q) / np.linalg.norm(ours.q):.2e}")


if __name__ == "__main__":
    main()
