"""Diagnostics in the spirit of Manopt's checkgradient / checkhessian / checkmanifold.

Small independent tools: :func:`taylor_errors` and :func:`taylor_slope` (the log-log slope
of a Taylor remainder), :func:`check_gradient` (slope 2), :func:`check_hessian`
(slope 3, symmetry, zero on vertical directions), and :func:`check_manifold`, a conformance
suite for :class:`quadnet.PSDQuotient`-like manifolds (THEORY.md §1) that raises
``AssertionError`` naming the identity that failed and otherwise returns the measured errors.
"""

from __future__ import annotations

import numpy as np

from quadnet.losses import FrobeniusLoss, Loss
from quadnet.geometry.manifold import bures_wasserstein

__all__ = [
    "check_gradient",
    "check_hessian",
    "check_manifold",
    "random_orthogonal",
    "taylor_errors",
    "taylor_slope",
]


def random_orthogonal(r: int, rng, *, improper: bool | None = None) -> np.ndarray:
    """A Haar-random ``R`` in ``O(r)``; ``improper=True``/``False`` forces ``det R = -1``/``+1``."""
    rng = np.random.default_rng(rng)
    Qm, Rm = np.linalg.qr(rng.standard_normal((r, r)))
    R = Qm * np.sign(np.diag(Rm))
    if improper is not None and (np.linalg.det(R) < 0) != improper:
        R[:, 0] = -R[:, 0]
    return R


def taylor_errors(f, f0: float, linear: float, quad: float | None, ts: np.ndarray) -> np.ndarray:
    """``|f(t) - f0 - t linear - t^2/2 quad|`` for each ``t`` (``quad=None``: first order)."""
    q = 0.0 if quad is None else quad
    return np.array([abs(f(t) - f0 - t * linear - 0.5 * t * t * q) for t in ts])


def taylor_slope(ts: np.ndarray, errs: np.ndarray, floor: float, window: int = 6) -> float:
    """Log-log slope of a Taylor remainder in its asymptotic regime.

    Points whose remainder is within ``100 x floor`` of the rounding level carry no
    information and are dropped; the slope is the least-squares fit over the ``window``
    smallest remaining ``t`` (as small as rounding allows, so higher-order terms are
    negligible). Returns ``inf`` when fewer than 3 points are left (the remainder is at
    rounding level everywhere: exact to that order).
    """
    order = np.argsort(ts)
    ts, errs = np.asarray(ts)[order], np.asarray(errs)[order]
    keep = np.flatnonzero(errs > 100 * floor)[:window]
    if keep.size < 3:
        return float("inf")
    return float(np.polyfit(np.log(ts[keep]), np.log(errs[keep]), 1)[0])


def _floor(f0: float) -> float:
    return 10 * np.finfo(float).eps * max(abs(f0), 1.0)


def check_gradient(manifold, loss: Loss, U, xi, ts=None) -> float:
    """Slope of the first-order Taylor remainder of ``L`` along ``U + t xi`` (2 expected)."""
    ts = np.logspace(-8, 0, 33) if ts is None else ts
    grad = manifold.euclidean_to_riemannian_gradient(U, loss.factor_gradient(U))
    f0 = loss.factor_value(U)
    errs = taylor_errors(lambda t: loss.factor_value(manifold.retraction(U, t * xi)), f0,
                         manifold.inner_product(U, grad, xi), None, ts)
    return taylor_slope(ts, errs, _floor(f0))


def riemannian_hessian(manifold, loss: Loss, U, xi) -> np.ndarray:
    """``Hess L(U)[xi]`` through the manifold's Euclidean-to-Riemannian conversion."""
    return manifold.euclidean_to_riemannian_hessian(U, loss.factor_gradient(U),
                                                    loss.factor_hvp(U, xi), xi)


def check_hessian(manifold, loss: Loss, U, xi, eta=None, ts=None) -> dict[str, float]:
    """Slope of the second-order remainder (3 expected), Hessian symmetry, and the size of
    the Hessian on a vertical direction (0 expected on the quotient)."""
    ts = np.logspace(-6, 0, 33) if ts is None else ts
    grad = manifold.euclidean_to_riemannian_gradient(U, loss.factor_gradient(U))
    H = riemannian_hessian(manifold, loss, U, xi)
    f0 = loss.factor_value(U)
    errs = taylor_errors(lambda t: loss.factor_value(manifold.retraction(U, t * xi)), f0,
                         manifold.inner_product(U, grad, xi),
                         manifold.inner_product(U, H, xi), ts)
    out = {"slope": taylor_slope(ts, errs, _floor(f0))}
    if eta is not None:
        He = riemannian_hessian(manifold, loss, U, eta)
        a, b = manifold.inner_product(U, H, eta), manifold.inner_product(U, xi, He)
        out["symmetry"] = abs(a - b) / max(np.linalg.norm(H) * np.linalg.norm(eta), 1e-300)
    rng = np.random.default_rng(0)
    v = manifold.vertical_projection(U, rng.standard_normal(U.shape))
    Hv = riemannian_hessian(manifold, loss, U, v)
    scale = np.linalg.norm(loss.factor_hvp(U, v)) + np.linalg.norm(H) * np.linalg.norm(v)
    out["vertical"] = float(np.linalg.norm(Hv) / max(scale, 1e-300))
    return out


def _require(ok: bool, identity: str, value: float, tol: float) -> None:
    if not ok:
        raise AssertionError(f"check_manifold: {identity} failed: {value:.3e} (tolerance {tol:.1e})")


def check_manifold(manifold, *, seed=0, trials: int = 3, rtol: float = 1e-9) -> dict[str, float]:
    """Conformance suite for a quotient manifold of rank-r PSD matrices.

    Checks, at ``trials`` random points: the dimension (rank of a Gram matrix of projected
    random vectors), projection idempotence and orthogonality, horizontality, vertical
    vectors in the kernel of the differential, ``lift o differential = id`` on ``H_U`` and
    ``differential o lift = id`` on tangent vectors, the orthonormal horizontal basis,
    ``O(r)``-equivariance of projections and lifts (improper ``R`` included) and invariance
    of the metric and distance, distance = Bures–Wasserstein, exp/log round trip, the
    gradient and Hessian Taylor slopes (2 and 3), Hessian symmetry and its vanishing on
    vertical directions. Returns the worst measured value of each identity; raises
    ``AssertionError`` naming the first identity that fails.
    """
    M = manifold
    rng = np.random.default_rng(seed)
    d, r = M.d, M.r
    worst: dict[str, float] = {}

    def record(name: str, value: float, tol: float, *, relation: str = "<=") -> None:
        value = float(value)
        ok = value <= tol if relation == "<=" else value >= tol
        _require(ok and np.isfinite(value), name, value, tol)
        if relation == "<=":
            worst[name] = max(worst.get(name, 0.0), value)
        else:
            worst[name] = min(worst.get(name, np.inf), value)

    def rel(a, b) -> float:
        return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))

    for _ in range(trials):
        U = M.random_point(rng)
        Z, W = rng.standard_normal((2, d, r))
        G = U.T @ U
        # Lyapunov solves amplify rounding by at most kappa(U)^2 (quotient.py docstring)
        tol = rtol + 1e3 * np.finfo(float).eps * np.linalg.cond(U) ** 2
        # dimension by a Gram-matrix rank
        vecs = np.stack([M.projection(U, rng.standard_normal((d, r))).reshape(-1)
                         for _ in range(d * r)])
        s = np.linalg.svd(vecs, compute_uv=False)
        rank = int(np.sum(s > s[0] * 1e-10))
        _require(rank == M.dim, f"dimension (Gram rank {rank} vs dim {M.dim})", abs(rank - M.dim), 0)
        # projections
        h, v = M.horizontal_projection(U, Z), M.vertical_projection(U, Z)
        record("projection idempotence", rel(M.horizontal_projection(U, h), h), tol)
        record("vertical idempotence", rel(M.vertical_projection(U, v), v) if np.linalg.norm(v)
               > 1e-14 * np.linalg.norm(Z) else 0.0, tol)
        record("P_h + P_v = I", rel(h + v, Z), tol)
        record("P_h, P_v orthogonal", abs(np.sum(h * M.vertical_projection(U, W)))
               / (np.linalg.norm(Z) * np.linalg.norm(W)), tol)
        Uh = U.T @ h
        record("horizontality (U^T P_h Z symmetric)", np.linalg.norm(Uh - Uh.T)
               / (np.linalg.norm(U) * np.linalg.norm(Z)), tol)
        Om = np.linalg.solve(G, U.T @ v)
        record("verticality (P_v Z = U Omega, Omega skew)", np.linalg.norm(Om + Om.T)
               / max(np.linalg.norm(Om), 1e-300) if np.linalg.norm(Om) > 0 else 0.0, tol)
        record("vertical vectors in ker Dpi", np.linalg.norm(M.differential(U, v))
               / (np.linalg.norm(U) * np.linalg.norm(Z)), tol)
        # lifts
        Qdot = M.differential(U, h)
        record("lift o differential = id on H_U", rel(M.lift(U, Qdot), h), tol)
        record("differential o lift = id on T_Q", rel(M.differential(U, M.lift(U, Qdot)), Qdot),
               tol)
        # horizontal basis
        B = M.horizontal_basis(U)
        _require(B.shape == (d * r, M.dim), "horizontal_basis shape", B.shape[1], M.dim)
        record("horizontal_basis orthonormal", np.linalg.norm(B.T @ B - np.eye(M.dim)), tol)
        cols = B.T.reshape(M.dim, d, r)
        sk = np.einsum("ia,kib->kab", U, cols)
        record("horizontal_basis horizontal", np.linalg.norm(sk - sk.transpose(0, 2, 1))
               / np.linalg.norm(U) / np.sqrt(M.dim), tol)
        # O(r) equivariance and invariance, improper rotations included
        for improper in (False, True):
            R = random_orthogonal(r, rng, improper=improper)
            UR = U @ R
            record("P_h equivariance P_h(UR, ZR) = P_h(U, Z) R",
                   rel(M.horizontal_projection(UR, Z @ R), h @ R), tol)
            record("lift equivariance lift(UR, Qdot) = lift(U, Qdot) R",
                   rel(M.lift(UR, Qdot), M.lift(U, Qdot) @ R), tol)
            a = M.inner_product(U, h, M.horizontal_projection(U, W))
            b = M.inner_product(UR, h @ R, M.horizontal_projection(U, W) @ R)
            record("metric invariance", abs(a - b) / (np.linalg.norm(h) * np.linalg.norm(W)), tol)
            V = M.random_point(rng)
            dUV = M.dist(U, V)
            record("distance invariance dist(UR, V) = dist(U, V)",
                   abs(M.dist(UR, V) - dUV) / max(dUV, 1e-300), tol)
            record("dist(U, U R) = 0", M.dist(U, UR) / np.linalg.norm(U), tol)
        # distance = Bures-Wasserstein, alignment is optimal
        V = M.random_point(rng)
        dUV = M.dist(U, V)
        bw = bures_wasserstein(U @ U.T, V @ V.T)
        record("dist = Bures-Wasserstein", abs(dUV - bw) / max(bw, 1e-300), 1e-6)
        R0 = random_orthogonal(r, rng)
        record("align is optimal over O(r)", max(0.0, dUV - np.linalg.norm(U @ R0 - V)), 0.0)
        # exp / log round trip
        Vn = U + 0.3 * np.linalg.norm(U) / np.sqrt(d * r) * rng.standard_normal((d, r))
        L = M.log(U, Vn)
        Ul = U.T @ L
        record("log is horizontal", np.linalg.norm(Ul - Ul.T) / (np.linalg.norm(U)
               * max(np.linalg.norm(L), 1e-300)), tol)
        E = M.exp(U, L)
        record("exp o log round trip", rel(E @ E.T, Vn @ Vn.T), tol)
        record("||log_U V|| = dist(U, V)", abs(M.norm(U, L) - M.dist(U, Vn))
               / max(M.dist(U, Vn), 1e-300), tol)
        # Taylor slopes on a test loss; a random direction can make the next Taylor
        # coefficient vanish by chance and bend the slope, so the best of 3 directions counts
        T = rng.standard_normal((d, d))
        loss = FrobeniusLoss(T + T.T)
        dirs = [M.random_tangent_vector(U, rng) for _ in range(3)]
        record("gradient Taylor slope (2 expected)",
               max(check_gradient(M, loss, U, xi) for xi in dirs), 1.9, relation=">=")
        hcs = [check_hessian(M, loss, U, xi, eta=dirs[(i + 1) % 3]) for i, xi in enumerate(dirs)]
        record("Hessian Taylor slope (3 expected)", max(h["slope"] for h in hcs), 2.9,
               relation=">=")
        record("Hessian symmetry", max(h["symmetry"] for h in hcs), tol)
        record("Hessian vanishes on vertical directions", max(h["vertical"] for h in hcs), tol)
    return worst
