"""How many HVPs does the smallest effective eigenvalue need at d=200, r=5, m=20,000?

Companion of ``bench_curvature.py`` (quadnet theory §3, docs/curvature.md §4). It counts Hessian-vector
products, not seconds, on the explicit ``n_h x n_h`` matrices (so the counts are those of the
matrix-free solvers, without their HVP cost), for Gaussian sensing at the planted minimiser:

* LOBPCG with the population inverse as preconditioner, block sizes ``b = 1 .. 64``: iterations
  until the smallest Ritz value is within ``1e-10`` (relative) of ``eigvalsh``, and HVPs
  (``b`` per iteration). Large blocks are what batched (BLAS-3) HVPs could pay for;
* unrestarted generalised Davidson with the same preconditioner: one HVP per step on
  ``P^{-1} (H u - theta u)``, full orthogonalisation, Rayleigh-Ritz on the whole space. It keeps
  every direction, so it is the fewest HVPs a one-direction-per-HVP preconditioned method
  needs here (a practical floor, not a theorem);
* LOBPCG with a data-dependent preconditioner: the exact empirical diagonal blocks
  ``(4/m) sum_i z_ij^2 x_i x_i^T`` of the factor Hessian (``z_i = U^T x_i``, ``U^T U``
  diagonal) with the population cross-column blocks.

    python benchmarks/curvature_floor.py
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse.linalg as spla

from quadnet import (
    GaussianSensing,
    PSDQuotient,
    effective_hessian,
    population_effective_hessian,
)

TARGET = 1e-10


def _lobpcg_iterations(H, Minv, b: int, lam: float) -> int | None:
    X0 = np.random.default_rng(0).standard_normal((H.shape[0], b))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, _, hist = spla.lobpcg(H, X0, M=Minv, tol=1e-14, maxiter=400, largest=False,
                                 retLambdaHistory=True)
    for it, ritz in enumerate(hist):
        if abs(np.min(ritz) - lam) <= TARGET * lam:
            return it
    return None


def _davidson_hvps(H, Minv, lam: float, cap: int = 400) -> int | None:
    x = np.random.default_rng(0).standard_normal(H.shape[0])
    V = (x / np.linalg.norm(x))[:, None]
    W = H @ V
    for n_hvp in range(1, cap):
        theta, Y = np.linalg.eigh(0.5 * (V.T @ W + W.T @ V))
        if abs(theta[0] - lam) <= TARGET * lam:
            return n_hvp
        u, Hu = V @ Y[:, 0], W @ Y[:, 0]
        t = Minv @ (Hu - theta[0] * u)
        for _ in range(2):                       # twice is enough (Kahan-Parlett)
            t -= V @ (V.T @ t)
        t /= np.linalg.norm(t)
        V, W = np.column_stack([V, t]), np.column_stack([W, H @ t])
    return None


def _blockdiag_empirical(loss: GaussianSensing, U: np.ndarray) -> np.ndarray:
    """Factor-Hessian approximation: empirical diagonal blocks, population cross blocks (d r x d r)."""
    d, r = U.shape
    Z = loss.X @ U
    P = np.zeros((d, r, d, r))
    for j in range(r):
        for k in range(r):
            uj, uk = U[:, j], U[:, k]
            if j == k:
                P[:, j, :, j] = 4.0 / loss.m * (loss.X.T @ (Z[:, j, None] ** 2 * loss.X))
            else:
                P[:, j, :, k] = 4.0 * ((uj @ uk) * np.eye(d) + np.outer(uj, uk) + np.outer(uk, uj))
    return P.reshape(d * r, d * r)


def main() -> None:
    d, r, m = 200, 5, 20_000
    loss = GaussianSensing.random(d, r, m, seed=0)
    _, _, Vt = np.linalg.svd(loss.U_star, full_matrices=False)
    U = loss.U_star @ Vt.T                       # same Q, U^T U diagonal (spectrum unchanged)
    H = effective_hessian(loss, U)
    w = np.linalg.eigvalsh(H)
    lam = w[0]
    Minv = np.linalg.inv(population_effective_hessian(U))
    mu = np.sort(np.linalg.eigvals(Minv @ H).real)
    print(f"d={d}, r={r}, m={m}, n_h={H.shape[0]}: lambda_1 = {lam:.6f}, lambda_2 = {w[1]:.6f}, "
          f"lambda_max = {w[-1]:.3f}; spectrum of P^-1 H in [{mu[0]:.3f}, {mu[-1]:.3f}]")
    print(f"HVPs to reach {TARGET:g} relative on lambda_min (dense route: {H.shape[0]}):")
    for b in (1, 2, 4, 8, 16, 32, 64):
        it = _lobpcg_iterations(H, Minv, b, lam)
        print(f"  LOBPCG + population inverse, block {b:2d}: {it} iterations, "
              f"{None if it is None else it * b} HVPs")
    print(f"  generalised Davidson + population inverse (unrestarted): "
          f"{_davidson_hvps(H, Minv, lam)} HVPs")
    B = PSDQuotient(d, r).horizontal_basis(U)
    Mblk = np.linalg.inv(B.T @ _blockdiag_empirical(loss, U) @ B)
    it = _lobpcg_iterations(H, Mblk, 1, lam)
    print(f"  LOBPCG + empirical-diagonal-block preconditioner, block 1: {it} iterations")


if __name__ == "__main__":
    main()
