"""Benchmark: matrix-free ``effective_spectrum`` vs two dense routes and the Gram route (quadnet theory §3).

Dense routes, both ``n_h`` HVPs on ``PSDQuotient.horizontal_basis(U)`` + ``eigvalsh``:

* ``dense-1``: the issue's route, one ``loss.factor_hvp(U, b_j)`` call per basis vector (each
  call recomputes ``X U`` and the residual, three thin ``m x d`` products);
* ``dense-B``: :func:`quadnet.effective_hessian`, i.e. ``loss.hvp_at(U)`` on blocks of basis
  vectors (``X U`` once, two BLAS-3 products per block of ~40 directions).

Matrix-free: ``effective_spectrum(k=1, which="smallest")``, ARPACK on ``P_h Hess P_h + sigma P_v``
(``preconditioner=None``) and LOBPCG preconditioned by the population inverse
(``preconditioner="population"``), both through ``loss.hvp_at(U)`` (``X U`` once, two thin
products per HVP). Gaussian sensing at the planted minimiser:

    python benchmarks/bench_curvature.py [--skip-large] [--skip-small] [--gram-only]

Structured Gram route (:func:`quadnet.curvature.gram_effective_spectrum`): ``K`` with rows
``(2/sqrt m) vec(x_i (U^T x_i)^T)`` through the loss hook ``gram_factor(U)``, one ``K^T K``
GEMM, then the smallest eigenvalue of ``P_h H P_h + sigma P_v`` (LAPACK ``evr``, one
eigenvalue), ``GaussianSensing.gram_factor`` supplying ``K``. The five routes are timed
interleaved (``--reps`` rounds of gram / dense-B / LOBPCG at two tolerances / ARPACK), and the
machine load (``uptime``) is printed before and after.

Prints, from one run: the cost of one HVP each way, both dense times, matrix-free seconds and
HVP count for ARPACK and LOBPCG, the relative difference of ``lambda_min`` to the dense value,
and the speed-up against each dense route; then one preconditioned matrix-free run at
``d = 1000, r = 10, m = 100,000`` (``n_h = 9,955``), ``precision="double"`` and ``"mixed"``
interleaved twice (wall and CPU seconds), with the time each dense route would need (``n_h``
HVPs at the measured cost plus ``eigh``; not run). ``--hvp-only``: one row-blocked HVP against
the two-pass one of quadnet 0.2, interleaved. Run the large part under a memory limit, e.g.
``(ulimit -v 14000000; python benchmarks/bench_curvature.py --skip-small)``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from quadnet import GaussianSensing, PSDQuotient, effective_hessian, effective_spectrum
from quadnet.curvature.hessian import gram_effective_spectrum, horizontal_dimension


def _uptime() -> str:
    import os

    return "load average %.2f %.2f %.2f" % os.getloadavg()


def _gram(seed: int, reps: int) -> None:
    d, r, m = 200, 5, 20_000
    n_h = horizontal_dimension(d, r)
    loss = GaussianSensing.random(d, r, m, seed=seed)
    U = loss.U_star
    print(f"== Gram route, d={d}, r={r}, m={m}, n_h={n_h}; {_uptime()}")
    times = {"gram": [], "dense-B": [], "lobpcg": [], "lobpcg-1e-8": [], "eigsh": []}
    vals = {}
    for rep in range(reps):
        t0 = time.perf_counter()
        g = gram_effective_spectrum(loss, U, k=1)
        times["gram"].append(time.perf_counter() - t0)
        vals["gram"] = (g.eigenvalues[0], g.residual_norms[0])
        t0 = time.perf_counter()
        w = np.linalg.eigvalsh(effective_hessian(loss, U))
        times["dense-B"].append(time.perf_counter() - t0)
        vals["dense-B"] = (w[0], 0.0)
        t0 = time.perf_counter()
        sp = effective_spectrum(loss, U, k=1, tol=1e-6, preconditioner="population")
        times["lobpcg"].append(time.perf_counter() - t0)
        vals["lobpcg"] = (sp.eigenvalues[0], sp.residual_norms[0])
        t0 = time.perf_counter()
        sp = effective_spectrum(loss, U, k=1, tol=1e-8, preconditioner="population")
        times["lobpcg-1e-8"].append(time.perf_counter() - t0)
        vals["lobpcg-1e-8"] = (sp.eigenvalues[0], sp.residual_norms[0])
        t0 = time.perf_counter()
        sp = effective_spectrum(loss, U, k=1, tol=1e-10)
        times["eigsh"].append(time.perf_counter() - t0)
        vals["eigsh"] = (sp.eigenvalues[0], sp.residual_norms[0])
    lam = vals["dense-B"][0]
    tg = float(np.median(times["gram"]))
    for name, ts in times.items():
        med = float(np.median(ts))
        v, bound = vals[name]
        print(f"{name:11s} median {med:6.2f} s over {reps} (all: "
              f"{', '.join(f'{t:.2f}' for t in ts)})  lambda_min = {v:.15g}  rel. diff to dense "
              f"{abs(v - lam) / lam:.1e}  a-posteriori bound {bound / lam:.1e}  "
              f"{'' if name == 'gram' else f'gram is {med / tg:.2f}x faster'}")
    print(f"after: {_uptime()}")


def _hvp_seconds(loss, U, reps: int, block: int = 1) -> float:
    """Median seconds per direction: ``factor_hvp`` (``block=0``) or ``hvp_at`` on ``block`` directions."""
    rng = np.random.default_rng(0)
    hvp = loss.hvp_at(U)
    ts = []
    for _ in range(reps):
        if block == 0:
            xi = rng.standard_normal(U.shape)
            t0 = time.perf_counter()
            loss.factor_hvp(U, xi)
            ts.append(time.perf_counter() - t0)
        else:
            xi = rng.standard_normal((block, *U.shape))
            t0 = time.perf_counter()
            hvp(xi[0] if block == 1 else xi)
            ts.append((time.perf_counter() - t0) / block)
    return float(np.median(ts))


def _dense_one_by_one(loss, U) -> np.ndarray:
    """The issue's dense route: ``n_h`` separate ``factor_hvp`` calls, then ``eigvalsh``."""
    d, r = U.shape
    B = PSDQuotient(d, r).horizontal_basis(U)
    cols = np.empty_like(B)
    for j in range(B.shape[1]):
        cols[:, j] = loss.factor_hvp(U, B[:, j].reshape(d, r)).reshape(-1)
    H = B.T @ cols
    return np.linalg.eigvalsh(0.5 * (H + H.T))


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
    ap.add_argument("--gram-only", action="store_true", help="only the Gram-route comparison")
    ap.add_argument("--hvp-only", action="store_true",
                    help="only the row-blocked HVP against the two-pass one (d=1000)")
    ap.add_argument("--reps", type=int, default=3, help="interleaved rounds of the Gram comparison")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    if args.hvp_only:
        _hvp_blocking(args.seed, max(args.reps, 5))
        return
    _gram(args.seed, args.reps)
    if args.gram_only:
        return

    if not args.skip_small:
        _small(args.seed)
    if not args.skip_large:
        _large(args.seed)


def _small(seed: int) -> None:
    d, r, m = 200, 5, 20_000
    n_h = horizontal_dimension(d, r)
    loss = GaussianSensing.random(d, r, m, seed=seed)
    U = loss.U_star
    t1, tc, tb = (_hvp_seconds(loss, U, 9, b) for b in (0, 1, 40))
    print(f"== d={d}, r={r}, m={m}, n_h={n_h}: one HVP {t1 * 1e3:.1f} ms (factor_hvp), "
          f"{tc * 1e3:.1f} ms (hvp_at, one direction), {tb * 1e3:.1f} ms (hvp_at, per "
          f"direction in a block of 40)")

    t0 = time.perf_counter()
    w1 = _dense_one_by_one(loss, U)
    t_one = time.perf_counter() - t0
    t0 = time.perf_counter()
    w = np.linalg.eigvalsh(effective_hessian(loss, U))
    t_blk = time.perf_counter() - t0
    lam = w[0]
    print(f"dense-1: {n_h} factor_hvp calls + eigvalsh  {t_one:7.2f} s   lambda_min = {w1[0]:.15g}")
    print(f"dense-B: effective_hessian (blocked) + eigvalsh  {t_blk:7.2f} s   lambda_min = "
          f"{lam:.15g}   (lambda_2 - lambda_1)/(lambda_max - lambda_1) = "
          f"{(w[1] - w[0]) / (w[-1] - w[0]):.2e}")
    runs = [(None, 1e-10), ("population", 1e-6), ("population", 2e-7)]
    for prec, tol in runs:
        t0 = time.perf_counter()
        sp = effective_spectrum(loss, U, k=1, which="smallest", tol=tol, preconditioner=prec)
        t_mf = time.perf_counter() - t0
        err = abs(sp.eigenvalues[0] - lam) / lam
        print(f"{sp.method:7s}: tol={tol:g}  {sp.n_hvp:4d} HVPs  {t_mf:6.2f} s   rel. diff to dense "
              f"{err:.1e}   a-posteriori bound {sp.residual_norms[0] / lam:.1e}   speed-up "
              f"{t_one / t_mf:5.1f}x vs dense-1, {t_blk / t_mf:4.1f}x vs dense-B   "
              f"(HVP ratio {n_h / sp.n_hvp:4.1f})")


def _two_pass_hvp(loss, XU, res, W):
    """The HVP of quadnet 0.2 (two passes over all of ``X``), the reference of ``--hvp-only``."""
    m, r = loss.m, XU.shape[1]
    XW = loss.X @ W
    V = XW.reshape(m, -1, r)
    a = 2.0 * np.einsum("ick,ik->ic", V, XU)
    V *= res[:, None, None]
    V += a[:, :, None] * XU[:, None, :]
    return loss.X.T @ XW * (2.0 / m)


def _hvp_blocking(seed: int, reps: int) -> None:
    d, r, m = 1000, 10, 100_000
    loss = GaussianSensing.random(d, r, m, seed=seed)
    U = loss.U_star
    XU, res = loss._residual(U)
    xi = np.random.default_rng(seed + 1).standard_normal((d, r))
    print(f"== one HVP at d={d}, r={r}, m={m}: row-blocked (one pass over X) vs two passes; "
          f"{_uptime()}")
    t_two, t_blk = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        h2 = _two_pass_hvp(loss, XU, res, xi)
        t_two.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        hb = loss._hvp_columns(XU, res, xi)
        t_blk.append(time.perf_counter() - t0)
    rel = np.linalg.norm(hb - h2) / np.linalg.norm(h2)
    print(f"two passes {np.median(t_two):.3f} s, row-blocked {np.median(t_blk):.3f} s (medians of "
          f"{reps}, interleaved): ratio {np.median(t_blk) / np.median(t_two):.2f}; relative "
          f"difference {rel:.1e}; after: {_uptime()}")


def _large(seed: int) -> None:
    d, r, m = 1000, 10, 100_000
    n_h = horizontal_dimension(d, r)
    t0 = time.perf_counter()
    loss = GaussianSensing.random(d, r, m, seed=seed)
    t_gen = time.perf_counter() - t0
    U = loss.U_star
    t1, tb = _hvp_seconds(loss, U, 3, 0), _hvp_seconds(loss, U, 2, 10)
    print(f"== d={d}, r={r}, m={m}, n_h={n_h}: data {t_gen:.1f} s, one HVP {t1:.3f} s "
          f"(factor_hvp), {tb:.3f} s (hvp_at, per direction in a block)")
    runs = {"double": [], "mixed": []}
    for _ in range(2):                       # interleaved: double, mixed, double, mixed
        for precision in runs:
            t0, c0 = time.perf_counter(), time.process_time()
            sp = effective_spectrum(loss, U, k=1, which="smallest", tol=1e-6,
                                    preconditioner="population", precision=precision)
            runs[precision].append((time.perf_counter() - t0, time.process_time() - c0, sp))
    for precision, got in runs.items():
        walls = ", ".join(f"{w:.1f}" for w, _, _ in got)
        cpus = ", ".join(f"{c:.1f}" for _, c, _ in got)
        sp = got[-1][2]
        print(f"{sp.method}: tol=1e-06  {sp.n_hvp} HVPs  wall {walls} s, CPU {cpus} s   "
              f"lambda_min = {sp.eigenvalues[0]:.12g}  a-posteriori rel. bound "
              f"{sp.residual_norms[0] / sp.eigenvalues[0]:.1e}")
    ratio = np.median([w for w, _, _ in runs["mixed"]]) / np.median([w for w, _, _ in runs["double"]])
    print(f"mixed / double wall time: {ratio:.2f}; {_uptime()}")
    t_mf = min(w for w, _, _ in runs["double"])
    sp = runs["double"][-1][2]
    t_eigh = _eigh_seconds(2000) * (n_h / 2000) ** 3
    est_one, est_blk = n_h * t1 + t_eigh, n_h * tb + t_eigh
    print(f"dense  : not run (the n_h x n_h matrix is {8 * n_h**2 / 1e9:.2f} GB); estimated "
          f"eigh ~{t_eigh:.0f} s, dense-1 {est_one:.0f} s, dense-B {est_blk:.0f} s  ->  "
          f"estimated speed-up {est_one / t_mf:.0f}x / {est_blk / t_mf:.1f}x")


if __name__ == "__main__":
    main()
