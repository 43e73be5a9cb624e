"""Benchmark: matrix-free ``effective_spectrum`` vs the dense route (THEORY.md §3).

Dense route: ``effective_hessian`` (``n_h`` factor HVPs on the horizontal basis) + ``eigvalsh``.
Matrix-free: ``effective_spectrum(k=1, which="smallest")``, ARPACK on ``P_h Hess P_h + sigma P_v``
(``preconditioner=None``) and LOBPCG preconditioned by the population inverse
(``preconditioner="population"``).
Both on Gaussian sensing at the planted minimiser, single-threaded BLAS recommended:

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_curvature.py [--skip-large]

Prints, from one run: seconds per HVP, dense seconds, matrix-free seconds and HVP count for
ARPACK and for preconditioned LOBPCG at two tolerances each, the relative difference of
``lambda_min`` to the dense route, the speed-up; then one preconditioned matrix-free run at ``d = 1000, r = 10, m = 100,000`` (``n_h = 9,955``) with its time
and the dense time it would need (``n_h`` HVPs at the measured cost, plus ``eigh``; not run).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from quadnet import GaussianSensing, effective_hessian, effective_spectrum, horizontal_dimension


def _hvp_seconds(loss, U, reps: int) -> float:
    rng = np.random.default_rng(0)
    ts = []
    for _ in range(reps):
        xi = rng.standard_normal(U.shape)
        t0 = time.perf_counter()
        loss.factor_hvp(U, xi)
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def _eigh_seconds(n: int) -> float:
    A = np.random.default_rng(1).standard_normal((n, n))
    A = A + A.T
    t0 = time.perf_counter()
    np.linalg.eigvalsh(A)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-large", action="store_true", help="skip the d=1000 run")
    ap.add_argument("--skip-small", action="store_true", help="skip the d=200 comparison")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    if not args.skip_small:
        _small(args.seed)
    if not args.skip_large:
        _large(args.seed)


def _small(seed: int) -> None:
    d, r, m = 200, 5, 20_000
    n_h = horizontal_dimension(d, r)
    loss = GaussianSensing.random(d, r, m, seed=seed)
    U = loss.U_star
    t_hvp = _hvp_seconds(loss, U, 9)
    print(f"== d={d}, r={r}, m={m}, n_h={n_h}: one factor HVP {t_hvp * 1e3:.1f} ms")

    t0 = time.perf_counter()
    H = effective_hessian(loss, U)
    w = np.linalg.eigvalsh(H)
    t_dense = time.perf_counter() - t0
    lam = w[0]
    print(f"dense  : {n_h} HVPs + eigvalsh  {t_dense:7.2f} s   lambda_min = {lam:.15g}"
          f"   (lambda_2 - lambda_1)/(lambda_max - lambda_1) = {(w[1] - w[0]) / (w[-1] - w[0]):.2e}")
    runs = [(None, 1e-6), (None, 1e-10), ("population", 1e-6), ("population", 2e-7)]
    for prec, tol in runs:
        t0 = time.perf_counter()
        sp = effective_spectrum(loss, U, k=1, which="smallest", tol=tol, preconditioner=prec)
        t_mf = time.perf_counter() - t0
        err = abs(sp.eigenvalues[0] - lam) / lam
        print(f"{sp.method:7s}: tol={tol:g}  {sp.n_hvp:4d} HVPs  {t_mf:7.2f} s   rel. diff to dense "
              f"{err:.1e}   a-posteriori bound {sp.residual_norms[0] / lam:.1e}   "
              f"speed-up {t_dense / t_mf:5.1f}x   (HVP ratio {n_h / sp.n_hvp:4.1f})")



def _large(seed: int) -> None:
    d, r, m = 1000, 10, 100_000
    n_h = horizontal_dimension(d, r)
    t0 = time.perf_counter()
    loss = GaussianSensing.random(d, r, m, seed=seed)
    t_gen = time.perf_counter() - t0
    U = loss.U_star
    t_hvp = _hvp_seconds(loss, U, 3)
    print(f"== d={d}, r={r}, m={m}, n_h={n_h}: data {t_gen:.1f} s, one factor HVP "
          f"{t_hvp:.3f} s")
    t0 = time.perf_counter()
    sp = effective_spectrum(loss, U, k=1, which="smallest", tol=1e-6,
                            preconditioner="population")
    t_mf = time.perf_counter() - t0
    t_eigh = _eigh_seconds(2000) * (n_h / 2000) ** 3
    dense_est = n_h * t_hvp + t_eigh
    print(f"{sp.method}: tol=1e-06  {sp.n_hvp} HVPs  {t_mf:.1f} s   lambda_min = "
          f"{sp.eigenvalues[0]:.12g}  a-posteriori rel. bound {sp.residual_norms[0] / sp.eigenvalues[0]:.1e}")
    print(f"dense  : not run; estimated {n_h} x {t_hvp:.3f} s + eigh ~{t_eigh:.0f} s = "
          f"{dense_est:.0f} s  ->  estimated speed-up {dense_est / t_mf:.0f}x")


if __name__ == "__main__":
    main()
