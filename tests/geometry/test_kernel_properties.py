"""Reusable property suites for the fibre-bundle kernels, run on every stratum.

In the spirit of geomstats' parametrised manifold test classes: one class of properties,
instantiated on each stratum of the total space of factors -- full rank, rank deficient,
``r = 1``, ``r = d``, ill conditioned (the SVD route of ``quadnet.geometry._kernels.frame``),
and factors near the ends of float64's range (the rescaled routes) -- and checked against
independent dense references: the Kronecker matrix of the Lyapunov operator and its
pseudo-inverse, the null space of ``xi -> U^T xi - xi^T U`` (horizontal space), the span of
``U (e_i e_j^T - e_j e_i^T)`` (vertical space), the least-squares solution of
``xi U^T + U xi^T = Qdot`` and brute-force Procrustes over random orthogonal matrices
(quadnet theory §1, ``docs/stratified.md``).

Tolerances: the references are dense SVD/least-squares solves on matrices of size
``<= (d r)^2 = 144``; they agree with the kernels to ``c eps kappa``, so ``1e-9`` relative is
generous for the conditioned strata (``kappa <= 1e4``) and still six orders above rounding.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.linalg

import quadnet.geometry._kernels as K
from quadnet import PSDQuotient
from quadnet._linalg import random_orthogonal
from quadnet.testing import dense_differential

from _geometry_reference import vertical_generators

TOL = 1e-9


def _factor(d, r, k, cond, scale, seed):
    """A ``d x r`` factor of rank ``k`` with singular values spread over ``cond``, times
    ``scale``."""
    rng = np.random.default_rng(seed)
    P = np.linalg.qr(rng.standard_normal((d, r)))[0]
    E = np.linalg.qr(rng.standard_normal((r, r)))[0]
    sig = np.zeros(r)
    sig[:k] = np.geomspace(1.0, 1.0 / cond, k) if k else []
    return scale * (P * sig) @ E.T


#: (name, d, r, k, cond, scale): every stratum and route of the kernels (1e-155: U^T U is
#: subnormal, ~1e-310, so the Gram route would lose its digits)
STRATA = [
    ("full rank", 5, 3, 3, 3.0, 1.0),
    ("rank deficient", 5, 3, 2, 3.0, 1.0),
    ("rank one of three", 4, 3, 1, 1.0, 1.0),
    ("r = 1", 4, 1, 1, 1.0, 1.0),
    ("r = d", 3, 3, 3, 2.0, 1.0),
    ("r = d deficient", 4, 4, 2, 2.0, 1.0),
    ("ill conditioned (SVD route)", 5, 3, 3, 1e4, 1.0),
    ("ill conditioned, scaled", 5, 3, 3, 1e3, 10.0),
    ("full rank, scaled", 5, 3, 3, 3.0, 10.0),
    ("huge (rescaled)", 4, 2, 2, 2.0, 1e200),
    ("tiny (rescaled)", 4, 2, 2, 2.0, 1e-200),
    ("tiny rank deficient", 4, 3, 2, 2.0, 1e-200),
    ("subnormal Gram matrix (rescaled)", 4, 2, 2, 2.0, 1e-155),
]


def _vertical_span(U):
    """Orthonormal basis of span{vec(U (e_i e_j^T - e_j e_i^T))} (dense reference)."""
    B = vertical_generators(U).T
    if not B.size:
        return np.zeros((U.size, 0))
    B = B / max(np.abs(B).max(), np.finfo(float).tiny)
    return scipy.linalg.orth(B, rcond=1e-8)


def _skew_map(U):
    """Matrix of ``xi -> vec(U^T xi - xi^T U)`` (kernel = horizontal space)."""
    d, r = U.shape
    Un = U / max(np.abs(U).max(), np.finfo(float).tiny)
    cols = []
    for a in range(d * r):
        e = np.zeros(d * r)
        e[a] = 1.0
        xi = e.reshape(d, r)
        M = Un.T @ xi
        cols.append((M - M.T).reshape(-1))
    return np.array(cols).T


def _rank(A, rtol=1e-8):
    s = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(s > rtol * s[0])) if s.size and s[0] > 0 else 0


def _rel(a, b):
    return K.fro_norm(a - b) / max(K.fro_norm(b), np.finfo(float).tiny)


@pytest.fixture(params=list(enumerate(STRATA)), ids=[s[0] for s in STRATA])
def stratum(request):
    """One factor per stratum. The kernels work on raw arrays and leave floating-point
    warnings to their callers (the public functions run them under ``np.errstate``, checking the
    result): the Gram matrix of a 1e200 factor overflows before the SVD route takes over."""
    i, (name, d, r, k, cond, scale) = request.param
    U = _factor(d, r, k, cond, scale, seed=100 + i)
    rng = np.random.default_rng(1)
    with np.errstate(over="ignore", under="ignore"):
        yield {"name": name, "d": d, "r": r, "k": k, "U": U, "fr": K.frame(U), "scale": scale,
               "Z": rng.standard_normal((d, r)), "rng": rng}


class TestFibreBundleKernels:
    """Properties of the kernels at one factor; ``stratum`` supplies the factor."""

    # ------------------------------------------------------------------ the frame
    def test_frame_rank_and_route(self, stratum):
        fr, U, k = stratum["fr"], stratum["U"], stratum["k"]
        assert fr.rank == k
        np.testing.assert_allclose(fr.s, fr.sigma ** 2, rtol=1e-15)
        assert fr.tol == pytest.approx(K.RANK_RTOL * fr.sigma.max(), rel=1e-12)
        # Un = U / scale, and Un E = P diag(sigma) on the kept columns
        np.testing.assert_allclose(fr.Un * fr.scale, U, rtol=1e-14, atol=0)
        keep = fr.sigma > fr.tol
        P = K._left(fr)
        np.testing.assert_allclose((fr.Un @ fr.E)[:, keep], P[:, keep] * fr.sigma[keep],
                                   rtol=0, atol=1e-12 * fr.sigma.max())
        np.testing.assert_allclose(P[:, keep].T @ P[:, keep], np.eye(keep.sum()), atol=1e-12)
        np.testing.assert_allclose(fr.E.T @ fr.E, np.eye(stratum["r"]), atol=1e-12)
        rescaled = stratum["scale"] not in (1.0, 10.0)
        conditioned = not rescaled and k == stratum["r"] and "ill" not in stratum["name"]
        assert (fr.P is None) == conditioned            # the Gram route only when safe
        if rescaled:
            assert fr.scale == pytest.approx(np.abs(U).max(), rel=1e-15)
        else:
            assert fr.scale == 1.0

    def test_pair_inverse_drops_exactly_the_rank_deficient_pairs(self, stratum):
        fr = stratum["fr"]
        sig, s = fr.sigma, fr.s
        for i in range(len(sig)):
            for j in range(len(sig)):
                if max(sig[i], sig[j]) > fr.tol:
                    assert fr.inv[i, j] == pytest.approx(1.0 / (s[i] + s[j]), rel=1e-14)
                else:
                    assert fr.inv[i, j] == 0.0

    def test_frame_from_eig_matches_frame(self, stratum):
        U, fr = stratum["U"], stratum["fr"]
        assert K.frame_from_eig(U, fr) is fr
        eig = np.linalg.eigh(U.T @ U)
        fe = K.frame_from_eig(U, eig)
        assert fe.rank == fr.rank and (fe.P is None) == (fr.P is None)
        assert fe.scale == fr.scale and fe.tol == pytest.approx(fr.tol, rel=1e-12)
        np.testing.assert_allclose(np.sort(fe.sigma), np.sort(fr.sigma), rtol=1e-10)
        np.testing.assert_allclose(np.sort(fe.s), np.sort(fr.s), rtol=1e-10)
        if fe.P is None:                # the caller's eigendecomposition is used as it is
            assert fe.E is eig[1] and fe.s is eig[0]
        Z = stratum["Z"]
        np.testing.assert_allclose(K.vertical_part(fe, Z), K.vertical_part(fr, Z),
                                   atol=1e-9 * K.fro_norm(Z))
        np.testing.assert_allclose(K.vertical_generator(fe, Z), K.vertical_generator(fr, Z),
                                   atol=1e-9 * np.abs(K.vertical_generator(fr, Z)).max() + 1e-300)
        Un = fr.Un
        Qn = Z @ Un.T + Un @ Z.T
        np.testing.assert_allclose(K.lift(fe, Qn)[0], K.lift(fr, Qn)[0],
                                   atol=1e-9 * K.fro_norm(K.lift(fr, Qn)[0]))

    # --------------------------------------------------------------- Lyapunov
    def test_lyapunov_is_the_minimum_norm_solution(self, stratum):
        """Against the pseudo-inverse of the Kronecker matrix of ``W -> G W + W G``."""
        fr, r = stratum["fr"], stratum["r"]
        Gn = fr.Un.T @ fr.Un                                     # G / scale^2
        L = np.kron(Gn, np.eye(r)) + np.kron(np.eye(r), Gn)      # vec(G W + W G), row-major
        # K of a magnitude whose solution K / scale^2 is representable
        c = 1.0 if fr.scale == 1.0 else (1e-300 if fr.scale < 1 else 1e300)
        rng = stratum["rng"]
        for kind in ("skew", "symmetric"):
            A = rng.standard_normal((r, r))
            Kn = A - A.T if kind == "skew" else A + A.T
            ref = (np.linalg.pinv(L, rcond=1e-12) @ Kn.reshape(-1)).reshape(r, r)
            Om = K.lyapunov(fr, Kn * c) / (c / fr.scale / fr.scale)
            # the dense pseudo-inverse is accurate to eps kappa(L), kappa(L) = s_max / s_min
            w = np.linalg.svd(L, compute_uv=False)
            kappa = w[0] / w[w > 1e-12 * w[0]][-1]
            np.testing.assert_allclose(Om, ref, rtol=0,
                                       atol=1e-13 * kappa * np.abs(ref).max() + 1e-300)
            if fr.rank == r:        # full rank: it solves G W + W G = K
                np.testing.assert_allclose(Gn @ Om + Om @ Gn, Kn, atol=1e-11 * np.abs(Kn).max())
            sign = -1.0 if kind == "skew" else 1.0                  # the symmetry of K
            np.testing.assert_allclose(Om, sign * Om.T, atol=1e-12 * np.abs(Om).max())

    # ------------------------------------------------------------- projections
    def test_projections_are_complementary_orthogonal_projectors(self, stratum):
        fr, Z, U = stratum["fr"], stratum["Z"], stratum["U"]
        Pv = K.vertical_part(fr, Z)
        Ph = K.horizontal_part(fr, Z)
        np.testing.assert_allclose(Pv + Ph, Z, atol=1e-14)
        assert abs(np.vdot(Pv, Ph)) <= 1e-12 * K.fro_norm(Z) ** 2     # orthogonal
        np.testing.assert_allclose(K.vertical_part(fr, Pv), Pv, atol=1e-11)   # idempotent
        assert K.fro_norm(K.vertical_part(fr, Ph)) <= 1e-11 * K.fro_norm(Z)
        # horizontality: U^T P_h(Z) symmetric
        M = (U / fr.scale).T @ Ph
        assert K.fro_norm(M - M.T) <= 1e-11 * max(K.fro_norm(M), 1.0)

    def test_vertical_projection_against_the_dense_span(self, stratum):
        fr, Z, U = stratum["fr"], stratum["Z"], stratum["U"]
        B = _vertical_span(U)
        ref = (B @ (B.T @ Z.reshape(-1))).reshape(Z.shape)
        np.testing.assert_allclose(K.vertical_part(fr, Z), ref, atol=TOL * K.fro_norm(Z))

    def test_vertical_generator_is_skew_and_generates_the_projection(self, stratum):
        fr, Z, U = stratum["fr"], stratum["Z"], stratum["U"]
        Om = K.vertical_generator(fr, Z)
        np.testing.assert_allclose(Om, -Om.T, atol=1e-12 * max(np.abs(Om).max(), 1e-300))
        np.testing.assert_allclose(U @ Om, K.vertical_part(fr, Z), atol=TOL * K.fro_norm(Z))
        # minimum norm: no component on the dropped pairs (rows/columns of dropped E vectors)
        drop = fr.sigma <= fr.tol
        if drop.any():
            W = fr.E.T @ Om @ fr.E
            assert np.abs(W[np.ix_(drop, drop)]).max() <= 1e-12 * np.abs(Om).max()

    def test_dimension_formulas_against_null_space_counts(self, stratum):
        U, d, r, k = stratum["U"], stratum["d"], stratum["r"], stratum["k"]
        n_v = _vertical_span(U).shape[1]
        n_h = d * r - _rank(_skew_map(U))
        assert n_v == K.vertical_dim(r, k)
        assert n_h == K.horizontal_dim(d, r, k) == d * r - n_v
        if k == r:
            assert K.vertical_dim(r) == r * (r - 1) // 2
            assert K.horizontal_dim(d, r) == d * r - r * (r - 1) // 2

    def test_bases_are_orthonormal_and_complementary(self, stratum):
        fr, U, d, r, k = stratum["fr"], stratum["U"], stratum["d"], stratum["r"], stratum["k"]
        V = K.vertical_basis(fr)
        H = K.horizontal_basis(fr)
        assert V.shape == (d * r, K.vertical_dim(r, k))
        assert H.shape == (d * r, K.horizontal_dim(d, r, k))
        np.testing.assert_allclose(V.T @ V, np.eye(V.shape[1]), atol=1e-12)
        np.testing.assert_allclose(H.T @ H, np.eye(H.shape[1]), atol=1e-12)
        assert np.abs(V.T @ H).max(initial=0.0) <= 1e-12
        # the vertical basis spans the dense vertical space
        B = _vertical_span(U)
        np.testing.assert_allclose(V @ V.T, B @ B.T, atol=1e-9)
        for col in V.T[:3]:
            np.testing.assert_allclose(K.vertical_part(fr, col.reshape(d, r)).reshape(-1), col,
                                       atol=1e-11)

    # -------------------------------------------------------------------- lift
    def test_lift_is_the_horizontal_minimum_norm_least_squares_solution(self, stratum):
        fr, U, d, r = stratum["fr"], stratum["U"], stratum["d"], stratum["r"]
        rng = stratum["rng"]
        Un = U / fr.scale
        eta = rng.standard_normal((d, r))
        Qdot = eta @ Un.T + Un @ eta.T                              # in the image
        xi, res = K.lift(K.frame(Un), Qdot)
        np.testing.assert_allclose(xi @ Un.T + Un @ xi.T, Qdot, atol=TOL * K.fro_norm(Qdot))
        assert res <= 1e-10 * K.fro_norm(Qdot)
        D = dense_differential(Un)
        ref = (np.linalg.pinv(D, rcond=1e-10) @ Qdot.reshape(-1)).reshape(d, r)
        np.testing.assert_allclose(xi, ref, atol=TOL * max(K.fro_norm(ref), 1.0))
        # a general symmetric Qdot: res is the distance to the image of D pi(U)
        A = rng.standard_normal((d, d))
        S = A + A.T
        xi2, res2 = K.lift(K.frame(Un), S)
        sol = np.linalg.lstsq(D, S.reshape(-1), rcond=1e-10)[0]
        dist = np.linalg.norm(D @ sol - S.reshape(-1))
        assert res2 == pytest.approx(dist, rel=1e-8, abs=1e-10)
        np.testing.assert_allclose(xi2, np.linalg.pinv(D, rcond=1e-10).dot(S.reshape(-1))
                                   .reshape(d, r), atol=1e-8)

    def test_lift_undoes_the_frame_scaling(self, stratum):
        fr, d, r = stratum["fr"], stratum["d"], stratum["r"]
        Un = fr.Un
        eta = stratum["rng"].standard_normal((d, r))
        Qn = eta @ Un.T + Un @ eta.T
        c = 1.0 if fr.scale == 1.0 else (1e-300 if fr.scale < 1 else 1e300)
        # xi U^T + U xi^T = c Qn  <=>  xi = (c / scale) xi_n with xi_n the lift of Qn at Un
        xi_n, _ = K.lift(K.frame(Un), Qn)
        xi, res = K.lift(fr, c * Qn)
        np.testing.assert_allclose(xi / (c / fr.scale), xi_n, atol=TOL * K.fro_norm(xi_n))

    # ---------------------------------------------------------- O(r) invariance
    def test_projections_are_equivariant_under_O_r(self, stratum):
        U, Z, r = stratum["U"], stratum["Z"], stratum["r"]
        R = random_orthogonal(r, np.random.default_rng(5), improper=True)
        a = K.vertical_part(K.frame(U @ R), Z @ R)
        b = K.vertical_part(K.frame(U), Z) @ R
        np.testing.assert_allclose(a, b, atol=TOL * K.fro_norm(Z))


# ------------------------------------------------------------------------ Procrustes
@pytest.mark.parametrize("d, r, k, scale_u, scale_v", [
    (5, 3, 3, 1.0, 1.0), (5, 3, 2, 1.0, 1.0), (4, 1, 1, 1.0, 1.0), (3, 3, 3, 1.0, 1.0),
    (4, 2, 2, 1e200, 1e150), (4, 2, 2, 1e-200, 1e-150), (4, 2, 2, 1e300, 1e-300)])
@np.errstate(over="ignore", under="ignore")
def test_procrustes_is_optimal_and_equivariant(d, r, k, scale_u, scale_v):
    rng = np.random.default_rng(d * 10 + r)
    U = _factor(d, r, k, 2.0, 1.0, 3)
    V = rng.standard_normal((d, r))
    R = K.procrustes(scale_u * U, scale_v * V)
    np.testing.assert_allclose(R.T @ R, np.eye(r), atol=1e-12)
    R1 = K.procrustes(U, V)
    if k == r:
        np.testing.assert_allclose(R, R1, atol=1e-10)          # scale invariant
    # optimality: no random orthogonal matrix does better, and (U R)^T V is symmetric PSD
    best = np.linalg.norm(U @ R1 - V)
    for s in range(20):
        Q = random_orthogonal(r, np.random.default_rng(s))
        assert best <= np.linalg.norm(U @ Q - V) + 1e-12
    M = (U @ R1).T @ V
    np.testing.assert_allclose(M, M.T, atol=1e-10)
    assert np.linalg.eigvalsh(0.5 * (M + M.T)).min() >= -1e-10
    nuc = np.linalg.svd(U.T @ V, compute_uv=False).sum()
    assert best ** 2 == pytest.approx(np.linalg.norm(U) ** 2 + np.linalg.norm(V) ** 2 - 2 * nuc,
                                      abs=1e-9)
    # O(r) equivariance: procrustes(U Q, V) = Q^T procrustes(U, V) (full rank: unique)
    if k == r:
        Q = random_orthogonal(r, np.random.default_rng(11), improper=True)
        np.testing.assert_allclose(K.procrustes(U @ Q, V), Q.T @ R1, atol=1e-10)


@np.errstate(over="ignore", under="ignore", invalid="ignore")
def test_procrustes_batched_equals_one_by_one_and_handles_extremes():
    rng = np.random.default_rng(0)
    Us, Vs = rng.standard_normal((4, 5, 2)), rng.standard_normal((4, 5, 2))
    Rs = K.procrustes(Us, Vs)
    for U, V, R in zip(Us, Vs, Rs):
        np.testing.assert_allclose(R, K.procrustes(U, V), atol=1e-12)
    big = K.procrustes(Us * 1e200, Vs * 1e200)                   # U^T V overflows: rescaled
    np.testing.assert_allclose(big, Rs, atol=1e-12)
    small = K.procrustes(Us * 1e-200, Vs)
    np.testing.assert_allclose(small, Rs, atol=1e-12)
    zero = K.procrustes(np.zeros((2, 5, 2)), Vs[:2])
    assert np.all(np.isfinite(zero))
    np.testing.assert_allclose(K.procrustes(np.zeros((5, 2)), Vs[0]), np.eye(2))
    np.testing.assert_allclose(K.procrustes(Us[0], np.zeros((5, 2))), np.eye(2))
    bad = K.procrustes(np.full((5, 2), np.inf), Vs[0])
    assert bad.shape == (2, 2) and np.isnan(bad).all()
    with np.errstate(all="ignore"):
        assert np.isnan(K.procrustes(np.full((5, 2), np.nan), Vs[0])).all()


# --------------------------------------------------------------------------- fro_norm
@pytest.mark.parametrize("scale", [1.0, 1e-170, 1e170, 1e-300, 1e300, 1e-150, 1e150])
@np.errstate(over="ignore", under="ignore")
def test_fro_norm_without_overflow_or_underflow(scale):
    A = np.array([[3.0, 0.0], [0.0, 4.0]])
    assert K.fro_norm(scale * A) == pytest.approx(5.0 * scale, rel=1e-15, abs=0)


def test_fro_norm_is_numpy_s_norm_to_rounding_at_every_scale():
    """BLAS dnrm2 against numpy's norm (safe range) and against the exactly rescaled norm
    (outside it): within 2 ulp, from 1e-300 to 1e300."""
    rng = np.random.default_rng(4)
    for e, shape in itertools.product((-300, -200, -100, -50, -10, -3, -1, 0, 1, 10, 100, 200,
                                       300), ((3, 4), (100, 50))):  # dnrm2 and numpy routes
        B = rng.standard_normal(shape) / 7.0
        A = B * 10.0 ** e
        ref = float(np.linalg.norm(B)) * 10.0 ** e if abs(e) > 100 else float(np.linalg.norm(A))
        assert K.fro_norm(A) == pytest.approx(ref, rel=5e-16, abs=0), e


def test_fro_norm_edge_cases():
    assert K.fro_norm(np.zeros((2, 2))) == 0.0
    assert K.fro_norm(np.array([[np.inf, 1.0]])) == np.inf
    assert K.fro_norm(np.array([[5e-324, 0.0]])) == 5e-324           # the norm underflows
    assert K.fro_norm(np.array([[1e-200, 0.0]])) == pytest.approx(1e-200, rel=1e-15, abs=0)
    assert K.fro_norm(np.array([[1e140, 1e140]])) == pytest.approx(math.sqrt(2) * 1e140)


def test_zero_factor_frame():
    fr = K.frame(np.zeros((3, 2)))
    assert fr.rank == 0 and fr.scale == 1.0 and not fr.inv.any() and fr.tol == 0.0
    np.testing.assert_array_equal(fr.s, np.zeros(2))
    np.testing.assert_array_equal(fr.sigma, np.zeros(2))
    Z = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(K.horizontal_part(fr, Z), Z)
    assert K.vertical_basis(fr).shape == (6, 0)
    np.testing.assert_array_equal(K.horizontal_basis(fr), np.eye(6))


@np.errstate(over="ignore", under="ignore")
def test_frame_from_eig_falls_back_with_the_callers_rtol():
    U = _factor(5, 3, 3, 1e5, 1.0, 7)            # sigma ratio 1e-5: the Gram route is unsafe
    eig = np.linalg.eigh(U.T @ U)
    assert K.frame_from_eig(U, eig).rank == 3
    fr = K.frame_from_eig(U, eig, rtol=1e-3)     # the SVD fallback keeps rtol
    assert fr.P is not None and fr.rank == 2


@np.errstate(over="ignore", under="ignore", invalid="ignore")
def test_procrustes_rescales_where_svd_would_lose_digits():
    """U^T V near the subnormal range (~1e-320) or beyond 1e308 is rescaled first: the result
    equals the one of the moderate pair, to rounding."""
    rng = np.random.default_rng(8)
    U, V = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    R = K.procrustes(U, V)
    for su, sv in ((1e-160, 1e-160), (1e200, 1e200), (1e-300, 1e-20), (1e160, 1e150),
                   (1e-310, 1.0), (1.0, 1e-310)):
        np.testing.assert_allclose(K.procrustes(su * U, sv * V), R, atol=1e-12,
                                   err_msg=f"{su}, {sv}")
        Us, Vs = np.stack([U, V]), np.stack([V, U])
        Rs = np.stack([R, K.procrustes(V, U)])
        np.testing.assert_allclose(K.procrustes(su * Us, sv * Vs), Rs, atol=1e-12,
                                   err_msg=f"batched {su}, {sv}")
    # a stack against one matrix broadcasts
    Us = rng.standard_normal((3, 5, 3))
    np.testing.assert_allclose(K.procrustes(Us, V), np.stack([K.procrustes(u, V) for u in Us]),
                               atol=1e-12)
    np.testing.assert_allclose(K.procrustes(V, Us), np.stack([K.procrustes(V, u) for u in Us]),
                               atol=1e-12)
    # a zero matrix in a batch: the identity for it, the others unchanged
    Z = np.stack([np.zeros((5, 3)), U])
    out = K.procrustes(Z * 1e-200, np.stack([V, V]) * 1e-200)
    np.testing.assert_allclose(out[1], R, atol=1e-12)
    assert np.all(np.isfinite(out))


@np.errstate(over="ignore", under="ignore")
def test_public_quotient_uses_the_kernels():
    """The public projection equals the kernel's on every stratum (one formula)."""
    for name, d, r, k, cond, scale in STRATA:
        U = _factor(d, r, k, cond, scale, seed=3)
        Z = np.random.default_rng(2).standard_normal((d, r))
        M = PSDQuotient(d, r)
        np.testing.assert_allclose(M.vertical_projection(U, Z), K.vertical_part(K.frame(U), Z),
                                   atol=1e-12 * K.fro_norm(Z), err_msg=name)
