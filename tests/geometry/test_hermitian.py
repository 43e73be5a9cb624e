"""The Hermitian quotient C^{d x r} / U(r): ``PSDQuotient(d, r, field="complex")`` and the free
functions on Hermitian input, each identity against an independent route.

References: scipy's ``unitary_group`` (Haar unitaries), ``scipy.linalg.sqrtm`` and 50-digit
mpmath for the Bures-Wasserstein trace formula, the nuclear norm of ``U^* V`` for the
alignment, a dense real-ified differential for the dimension, the distance expansion of the
curvature (the tolerance of the real test, 1e-4: its truncation), the Ricci form as a sum of
sectional curvatures, a second closed form (Sigma coordinates) of the curvature at ``r = d``,
pymanopt 2.2.1's ``PSDFixedRankComplex``. Tolerances: rounding-level identities at 1e-12
relative (the factors have singular values in [0.3, 2], so the Lyapunov solves amplify
rounding by kappa(U)^2 <= 45); ODE invariants at 1e-10 (DOP853 at rtol 1e-13).
"""

from __future__ import annotations

import mpmath
import numpy as np
import pymanopt
import pytest
import scipy.linalg
from scipy.stats import unitary_group

import quadnet as qn
from quadnet.geometry import (
    bures_wasserstein,
    bures_wasserstein_sectional_curvature,
    check_manifold,
    distance_expansion_curvature,
    holonomy,
    horizontal_dimension,
    lyapunov_skew,
    parallel_transport,
    ricci_curvature,
    scalar_curvature,
    sectional_curvature,
)

TOL = 1e-12
SIZES = [(3, 1), (4, 2), (5, 3), (6, 2), (4, 4)]


def ct(A):
    return A.conj().T


def re(a, b):
    return float(np.vdot(a, b).real)


def cgauss(rng, shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) / np.sqrt(2)


def factor(d, r, rng):
    """Singular values in [0.3, 2], Haar singular vectors (complex)."""
    P = np.linalg.qr(cgauss(rng, (d, r)))[0]
    E = unitary_group.rvs(r, random_state=rng) if r > 1 else np.exp(1j * rng.uniform(0, 6.3))[None, None]
    return (P * rng.uniform(0.3, 2.0, r)) @ ct(np.atleast_2d(E))


def unitary(r, rng):
    return np.atleast_2d(unitary_group.rvs(r, random_state=rng)) if r > 1 else \
        np.exp(1j * rng.uniform(0, 6.3))[None, None]


def rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def case(d, r, seed):
    rng = np.random.default_rng([d, r, seed])
    M = qn.PSDQuotient(d, r, field="complex")
    U, V = factor(d, r, rng), factor(d, r, rng)
    return M, rng, U, V


# ---------------------------------------------------------------------- construction
def test_field_attribute_dim_and_dtypes():
    M = qn.PSDQuotient(5, 2, seed=3, field="complex")
    assert M.field == "complex" and qn.PSDQuotient(5, 2).field == "real"
    assert M.dim == 2 * 5 * 2 - 2 ** 2 == horizontal_dimension(5, 2, field="complex") == 16
    U = M.random_point()
    assert U.dtype == np.complex128 and U.shape == (5, 2)
    assert M.zero_vector(U).dtype == np.complex128 and not M.zero_vector(U).any()
    # same seed, same bits; CN(0, 1) entries (g1 + i g2)/sqrt(2) from one (2, d, r) draw
    g = np.random.default_rng(7).standard_normal((2, 5, 2))
    assert np.array_equal(qn.PSDQuotient(5, 2, field="complex").random_point(7),
                          (g[0] + 1j * g[1]) * np.sqrt(0.5))
    assert np.array_equal(qn.PSDQuotient(5, 2, seed=1, field="complex").random_point(),
                          qn.PSDQuotient(5, 2, seed=1, field="complex").random_point())
    xi = M.random_tangent_vector(U, 0)
    assert xi.dtype == np.complex128 and abs(M.norm(U, xi) - 1) < TOL


def test_field_is_validated_and_named():
    for bad in ("quaternion", "Complex", None, 3):
        with pytest.raises(ValueError, match=r"field must be 'real' or 'complex', got"):
            qn.PSDQuotient(3, 2, field=bad)
    with pytest.raises(ValueError, match=r"field must be 'real' or 'complex'"):
        horizontal_dimension(3, 2, field="C")


def test_complex_data_on_the_real_field_is_refused_naming_the_argument():
    M = qn.PSDQuotient(3, 2)
    U, Z = np.eye(3, 2), np.ones((3, 2)) * 1j
    with pytest.raises(TypeError, match=r"^PSDQuotient\.horizontal_projection: Z must be real, "
                                        r"got complex dtype"):
        M.horizontal_projection(U, Z)
    with pytest.raises(TypeError, match=r"point must be real"):
        M.retraction(Z, U)
    with pytest.raises(TypeError, match=r"tangent_vector_b must be real"):
        M.inner_product(U, U, Z)
    with pytest.raises(TypeError, match=r"point_b must be real"):
        M.dist(U, Z)
    with pytest.raises(TypeError, match=r"xi must be real on a PSDQuotient with field='real'"):
        M.sectional_curvature(U, Z, U)
    with pytest.raises(TypeError, match=r"Qdot must be real"):
        M.lift(U, np.eye(3) * 1j)
    with pytest.raises(TypeError, match=r"V must be real \(field='real' is declared\)"):
        qn.align(U, Z, field="real")
    with pytest.raises(TypeError, match=r"Q2 must be real \(field='real' is declared\)"):
        bures_wasserstein(np.eye(2), np.eye(2) + 0j, field="real")
    with pytest.raises(TypeError, match=r"Us\[0\] must be real"):
        qn.bw_barycenter([Z, Z], inputs="factors", field="real")
    with pytest.raises(TypeError, match=r"U must be real"):      # real-only: curvature bounds
        qn.geometry.curvature_bounds(Z)


def test_non_hermitian_or_indefinite_input_is_refused_with_the_defect():
    H = np.array([[1.0, 2j], [2j, 1.0]])                       # symmetric, not Hermitian
    with pytest.raises(ValueError, match=r"Q1 must be Hermitian: \|\|Q1 - Q1\^\*\|\|_F / "
                                         r"\|\|Q1\|\|_F = 1\.789e\+00 > 1e-10"):
        bures_wasserstein(H, np.eye(2))
    N = np.array([[1.0, 2j], [-2j, 1.0]])                      # Hermitian, eigenvalues -1, 3
    with pytest.raises(ValueError, match=r"Q2 must be positive semidefinite, smallest "
                                         r"eigenvalue -1\.000e\+00"):
        bures_wasserstein(np.eye(2), N)
    with pytest.raises(ValueError, match=r"Us\[1\] must be positive semidefinite: smallest "
                                         r"eigenvalue -1"):
        qn.bw_barycenter([np.eye(2), N], inputs="matrices")
    with pytest.raises(ValueError, match=r"Us\[0\] must be Hermitian"):
        qn.bw_barycenter([H, np.eye(2)], inputs="matrices")
    M = qn.PSDQuotient(2, 1, field="complex")
    with pytest.raises(ValueError, match=r"Qdot must be Hermitian"):
        M.lift(np.ones((2, 1)), H)


# ---------------------------------------------------------------------- fibres, alignment
@pytest.mark.parametrize("d,r", SIZES)
def test_unitary_invariance_of_Q_and_dist(d, r):
    M, rng, U, V = case(d, r, 0)
    R, S = unitary(r, rng), unitary(r, rng)
    Q = M.predictor(U)
    assert rel(M.predictor(U @ R), Q) <= TOL
    dist = M.dist(U, V)
    assert abs(M.dist(U @ R, V @ S) - dist) <= TOL * dist
    assert M.dist(U, U @ R) <= TOL * np.linalg.norm(U)
    assert abs(bures_wasserstein(Q, M.predictor(V)) - dist) <= TOL * dist


@pytest.mark.parametrize("d,r", SIZES)
def test_alignment_is_optimal_and_reaches_the_nuclear_norm(d, r):
    M, rng, U, V = case(d, r, 1)
    R = qn.align(U, V)
    assert rel(ct(R) @ R, np.eye(r)) <= TOL
    best = np.linalg.norm(U @ R - V)
    for _ in range(200):
        assert best <= np.linalg.norm(U @ unitary(r, rng) - V) + TOL * best
    nuclear = np.linalg.svd(ct(U) @ V, compute_uv=False).sum()
    d2 = np.linalg.norm(U) ** 2 + np.linalg.norm(V) ** 2 - 2 * nuclear
    assert abs(best ** 2 - d2) <= TOL * (np.linalg.norm(U) ** 2 + np.linalg.norm(V) ** 2)
    C = ct(U @ R) @ V                                   # Hermitian PSD at the optimum
    assert np.linalg.norm(C - ct(C)) <= TOL * np.linalg.norm(C)
    assert np.linalg.eigvalsh(0.5 * (C + ct(C)))[0] >= -TOL * np.linalg.norm(C)
    assert abs(M.dist(U, V) - best) <= TOL * best
    W = unitary(r, rng)
    assert rel(qn.align(U, U @ W), W) <= 1e-11             # the fibre element is recovered


def test_real_factors_align_as_in_the_real_quotient():
    rng = np.random.default_rng(5)
    U, V = rng.standard_normal((2, 6, 3))
    Mr, Mc = qn.PSDQuotient(6, 3), qn.PSDQuotient(6, 3, field="complex")
    assert abs(Mc.dist(U, V) - Mr.dist(U, V)) <= TOL * Mr.dist(U, V)
    assert np.allclose(qn.align(U + 0j, V), qn.align(U, V), atol=1e-12)


# ---------------------------------------------------------------------- distance
@pytest.mark.parametrize("d,r", SIZES)
def test_dist_equals_the_trace_formula_by_sqrtm(d, r):
    M, rng, U, V = case(d, r, 2)
    Q1, Q2 = U @ ct(U), V @ ct(V)
    if r < d:                     # sqrtm of a singular matrix is inaccurate: full rank, r = d
        Q1, Q2 = Q1 + 0.5 * np.eye(d), Q2 + 0.3 * np.eye(d)
        F1 = np.linalg.cholesky(Q1)
        F2 = np.linalg.cholesky(Q2)
        dist = qn.PSDQuotient(d, d, field="complex").dist(F1, F2)
    else:
        dist = M.dist(U, V)
    S = scipy.linalg.sqrtm(Q1)
    d2 = np.trace(Q1).real + np.trace(Q2).real - 2 * np.trace(scipy.linalg.sqrtm(S @ Q2 @ S)).real
    assert abs(dist ** 2 - d2) <= 1e-12 * (np.trace(Q1).real + np.trace(Q2).real)
    assert abs(bures_wasserstein(Q1, Q2) - dist) <= 1e-12 * dist


def test_dist_against_fifty_digit_mpmath():
    rng = np.random.default_rng(11)
    U, V = factor(3, 3, rng), factor(3, 3, rng)
    with mpmath.workdps(50):
        Q1 = mpmath.matrix(U @ ct(U))
        Q2 = mpmath.matrix(V @ ct(V))
        S = mpmath.sqrtm(Q1)
        inner = mpmath.sqrtm(S * Q2 * S)
        tr = lambda A: sum(A[i, i] for i in range(3))        # noqa: E731
        d2 = mpmath.re(tr(Q1) + tr(Q2) - 2 * tr(inner))
        ref = float(mpmath.sqrt(d2))
    assert abs(qn.PSDQuotient(3, 3, field="complex").dist(U, V) - ref) <= 1e-13 * ref
    assert abs(bures_wasserstein(U @ ct(U), V @ ct(V)) - ref) <= 1e-12 * ref


def test_bures_wasserstein_hermitian_examples():
    # commuting: |sqrt(lambda) - sqrt(mu)| per eigenvalue, in any common unitary basis
    W = unitary(3, np.random.default_rng(0))
    A, B = W @ np.diag([4.0, 1.0, 0.0]) @ ct(W), W @ np.diag([1.0, 1.0, 9.0]) @ ct(W)
    assert abs(bures_wasserstein(A, B) - np.sqrt(1 + 0 + 9)) <= 1e-12 * np.sqrt(10)
    # nearly equal points: the cancellation-free route, first order
    Q = W @ np.diag([4.0, 2.0, 1.0]) @ ct(W)
    E = 1e-9 * W @ np.diag([4.0, 0.0, 0.0]) @ ct(W)           # d = 1e-9 * ||...||_Q: 1e-9
    assert abs(bures_wasserstein(Q, Q + E) - 1e-9) <= 1e-15


# ---------------------------------------------------------------------- spaces and maps
@pytest.mark.parametrize("d,r", SIZES)
def test_dimension_is_the_kernel_of_the_realified_differential(d, r):
    """dim = 2 d r - dim ker D pi, with D pi(U): C^{d x r} = R^{2dr} -> Herm(d) written as a
    dense real matrix, its kernel counted by an SVD."""
    M, rng, U, _ = case(d, r, 3)
    cols = []
    for k in range(2 * d * r):
        e = np.zeros(2 * d * r)
        e[k] = 1.0
        xi = (e[:d * r] + 1j * e[d * r:]).reshape(d, r)
        D = M.differential(U, xi)
        cols.append(np.concatenate([D.real.ravel(), D.imag.ravel()]))
    s = np.linalg.svd(np.array(cols).T, compute_uv=False)
    rank = int(np.sum(s > 1e-10 * s[0]))
    assert rank == M.dim == 2 * d * r - r * r
    assert 2 * d * r - rank == r * r == M.vertical_dimension(U)
    assert M.vertical_basis(U).shape == (d * r, r * r)


@pytest.mark.parametrize("d,r", [(4, 3), (5, 4)])
def test_rank_deficient_points_as_in_the_real_case(d, r):
    """At rank k < r: dim V_U = r^2 - (r-k)^2 (the skew-Hermitian block of the null directions
    drops out), every projection finite, idempotent and orthogonal, the lift minimum-norm."""
    M = qn.PSDQuotient(d, r, field="complex")
    rng = np.random.default_rng([d, r])
    for k in range(r):
        P = np.linalg.qr(cgauss(rng, (d, r)))[0]
        U = (P * np.r_[rng.uniform(0.5, 2.0, k), np.zeros(r - k)]) @ ct(unitary(r, rng))
        assert M.rank(U) == k and M.vertical_dimension(U) == r * r - (r - k) ** 2
        B = M.horizontal_basis(U)
        assert B.shape[1] == horizontal_dimension(d, r, k, field="complex") == \
            2 * d * r - r * r + (r - k) ** 2
        Z = cgauss(rng, (d, r))
        h = M.horizontal_projection(U, Z)
        assert np.all(np.isfinite(h)) and rel(M.horizontal_projection(U, h), h) <= TOL
        assert abs(re(h, M.vertical_projection(U, Z))) <= TOL * np.linalg.norm(Z) ** 2
        Qdot = M.differential(U, h)
        xi = M.lift(U, Qdot)
        assert np.linalg.norm(M.differential(U, xi) - Qdot) <= TOL * max(np.linalg.norm(Qdot), 1)
        assert np.linalg.norm(xi) <= np.linalg.norm(h) * (1 + TOL)
        assert np.isfinite(M.dist(U, cgauss(rng, (d, r))))


@pytest.mark.parametrize("d,r", SIZES)
def test_projections_split_orthogonally(d, r):
    M, rng, U, _ = case(d, r, 4)
    Z, W = cgauss(rng, (d, r)), cgauss(rng, (d, r))
    h, v = M.horizontal_projection(U, Z), M.vertical_projection(U, Z)
    assert rel(M.horizontal_projection(U, h), h) <= TOL           # idempotence
    assert rel(M.projection(U, M.projection(U, W)), M.projection(U, W)) <= TOL
    assert rel(M.vertical_projection(U, v), v) <= TOL if r > 0 else True
    assert rel(h + v, Z) <= TOL
    S = ct(U) @ h                                                  # horizontal: U^* h Hermitian
    assert np.linalg.norm(S - ct(S)) <= TOL * np.linalg.norm(U) * np.linalg.norm(Z)
    K = ct(U) @ Z
    Om = lyapunov_skew(U, K - ct(K))                               # vertical: U Omega
    assert np.linalg.norm(Om + ct(Om)) <= TOL * np.linalg.norm(Om)
    assert rel(U @ Om, v) <= TOL
    assert abs(re(h, M.vertical_projection(U, W))) <= TOL * np.linalg.norm(Z) * np.linalg.norm(W)
    R = unitary(r, rng)                                            # equivariance
    assert rel(M.horizontal_projection(U @ R, Z @ R), h @ R) <= TOL


@pytest.mark.parametrize("d,r", SIZES)
def test_lift_inverts_the_differential_on_the_horizontal_space(d, r):
    M, rng, U, _ = case(d, r, 5)
    xi = M.horizontal_projection(U, cgauss(rng, (d, r)))
    Qdot = M.differential(U, xi)
    assert np.linalg.norm(Qdot - ct(Qdot)) == 0.0
    assert rel(M.lift(U, Qdot), xi) <= TOL
    R = unitary(r, rng)
    assert rel(M.lift(U @ R, Qdot), xi @ R) <= TOL


@pytest.mark.parametrize("d,r", SIZES)
def test_horizontal_velocity_exp_log_round_trip(d, r):
    M, rng, U, V = case(d, r, 6)
    L = M.log(U, V)
    S = ct(U) @ L
    assert np.linalg.norm(S - ct(S)) <= TOL * np.linalg.norm(U) * np.linalg.norm(L)
    # the velocity of t -> U + t L stays horizontal: (U + t L)^* L Hermitian for every t
    for t in (0.25, 0.5, 1.0):
        St = ct(U + t * L) @ L
        assert np.linalg.norm(St - ct(St)) <= TOL * np.linalg.norm(U + t * L) * np.linalg.norm(L)
    E = M.exp(U, L)
    assert rel(E @ ct(E), V @ ct(V)) <= TOL
    assert abs(M.norm(U, L) - M.dist(U, V)) <= TOL * M.dist(U, V)
    assert np.array_equal(M.retraction(U, L), U + L)
    mid = M.pair_mean(U, V)
    assert abs(M.dist(U, mid) - 0.5 * M.dist(U, V)) <= TOL * M.dist(U, V)


@pytest.mark.parametrize("d,r", SIZES)
def test_metric_inner_product_is_real_and_invariant(d, r):
    M, rng, U, _ = case(d, r, 7)
    a, b = (M.projection(U, cgauss(rng, (d, r))) for _ in range(2))
    ip = M.inner_product(U, a, b)
    assert isinstance(ip, float) and abs(ip - np.sum(a.real * b.real + a.imag * b.imag)) <= \
        TOL * np.linalg.norm(a) * np.linalg.norm(b)
    R = unitary(r, rng)
    assert abs(M.inner_product(U @ R, a @ R, b @ R) - ip) <= TOL * np.linalg.norm(a) * \
        np.linalg.norm(b)
    B = M.horizontal_basis(U)
    assert B.shape == (d * r, M.dim)
    assert np.linalg.norm((ct(B) @ B).real - np.eye(M.dim)) <= 1e-12 * M.dim


# ---------------------------------------------------------------------- curvature, transport
@pytest.mark.parametrize("d,r", SIZES)
def test_oneill_curvature_against_the_distance_expansion(d, r):
    M, rng, U, _ = case(d, r, 8)
    xi, eta = (M.random_tangent_vector(U, rng) for _ in range(2))
    K = sectional_curvature(U, xi, eta)
    assert K > 0                             # r = 1 is curved too (cone over CP^{d-1})
    assert abs(distance_expansion_curvature(U, xi, eta) / K - 1) <= 1e-4
    assert abs(M.sectional_curvature(U, xi, eta) - K) <= TOL * K
    R = unitary(r, rng)
    assert abs(sectional_curvature(U @ R, xi @ R, eta @ R) / K - 1) <= TOL
    assert abs(sectional_curvature(U, 2 * xi + eta, xi - 3 * eta) / K - 1) <= 1e-11


def test_rank_one_holomorphic_curvature_is_three_over_the_norm():
    """r = 1: the plane (x, i x) with x orthogonal to u has K = 3 / |u|^2 (a closed form,
    checked here against the distance expansion)."""
    rng = np.random.default_rng(2)
    u = cgauss(rng, (5, 1))
    x = cgauss(rng, (5, 1))
    x = x - u * (np.vdot(u, x) / np.vdot(u, u))
    K = sectional_curvature(u, x, 1j * x)
    assert abs(K * np.vdot(u, u).real / 3 - 1) <= TOL
    assert abs(distance_expansion_curvature(u, x, 1j * x) / K - 1) <= 1e-4


@pytest.mark.parametrize("d", [2, 3, 4])
def test_curvature_against_the_sigma_coordinates_closed_form(d):
    M, rng, U, _ = case(d, d, 9)
    xi, eta = (M.random_tangent_vector(U, rng) for _ in range(2))
    K = sectional_curvature(U, xi, eta)
    Kc = bures_wasserstein_sectional_curvature(U @ ct(U), M.differential(U, xi),
                                               M.differential(U, eta))
    assert abs(Kc / K - 1) <= 1e-10


@pytest.mark.parametrize("d,r", [(3, 1), (4, 2), (5, 3)])
def test_ricci_is_the_sum_of_sectional_curvatures(d, r):
    M, rng, U, _ = case(d, r, 10)
    xi = M.random_tangent_vector(U, rng)
    B = M.horizontal_basis(U)
    total = 0.0
    for col in B.T:
        e = col.reshape(d, r)
        e = e - re(xi, e) * xi                   # the plane of (xi, e_i), area |xi ^ e_i|^2
        if np.linalg.norm(e) > 1e-8:
            total += sectional_curvature(U, xi, e) * re(e, e)
    assert abs(ricci_curvature(U, xi) / total - 1) <= 1e-10
    Ric = M.ricci_curvature(U)
    assert Ric.shape == (M.dim, M.dim)
    assert abs(np.trace(Ric) - scalar_curvature(U)) <= 1e-12 * np.trace(Ric)


@pytest.mark.parametrize("d,r", [(2, 1), (5, 1), (3, 2), (4, 3), (4, 4), (6, 3)])
def test_scalar_curvature_closed_form_is_the_trace_of_ricci(d, r):
    """The closed form in lambda = sigma(U)^2 against the trace of the Ricci matrix (a sum of
    vertical-basis projections over an orthonormal basis of H_U); r = 1: 6 (d - 1) / |u|^2."""
    M, rng, U, _ = case(d, r, 18)
    scal = scalar_curvature(U)
    assert abs(scal - np.trace(M.ricci_curvature(U))) <= 1e-12 * scal
    if r == 1:
        assert abs(scal - 6 * (d - 1) / re(U, U)) <= 1e-13 * scal
    R = unitary(r, rng)
    assert abs(M.scalar_curvature(U @ R) - scal) <= 1e-12 * scal


@pytest.mark.parametrize("d,r", [(3, 1), (4, 2), (5, 3)])
def test_parallel_transport_is_an_isometry(d, r):
    M, rng, U, _ = case(d, r, 11)
    xi, a, b = (M.random_tangent_vector(U, rng) for _ in range(3))
    t = 0.2
    A, B = (parallel_transport(U, xi, v, t) for v in (a, b))
    W = U + t * xi
    for V in (A, B):
        S = ct(W) @ V
        assert np.linalg.norm(S - ct(S)) <= 1e-10 * np.linalg.norm(W)
    assert abs(re(A, B) - re(a, b)) <= 1e-10
    assert abs(np.linalg.norm(A) - 1) <= 1e-10
    assert rel(M.parallel_transport(U, xi, xi, t), xi) <= 1e-10        # geodesic velocity
    T = M.transport(U, W, a)                   # projection transport: horizontal at W
    S = ct(W) @ T
    assert np.linalg.norm(S - ct(S)) <= TOL * np.linalg.norm(W)


def test_holonomy_turns_by_the_curvature_times_the_area():
    M, rng, U, _ = case(4, 2, 12)
    xi, eta = (M.random_tangent_vector(U, rng) for _ in range(2))
    h = holonomy(U, xi, eta, 1e-2)
    assert abs(h["angle"] / (h["K_centre"] * h["area"]) - 1) <= 1e-3
    assert h["norm_drift"] <= 1e-10


# ---------------------------------------------------------------------- Riemannian Hessian
def test_riemannian_hessian_vanishes_on_vertical_directions():
    """A U(r)-invariant cost: ehess[U Omega] = egrad Omega, so the conversion returns 0 on
    vertical directions (the input direction is projected)."""
    M, rng, U, _ = case(5, 2, 13)
    T = cgauss(rng, (5, 5))
    T = T + ct(T)
    S = U @ ct(U) - T
    egrad = 2 * S @ U
    v = M.vertical_projection(U, cgauss(rng, (5, 2)))
    P = v @ ct(U)
    ehess = 2 * S @ v + 2 * (P + ct(P)) @ U
    H = M.euclidean_to_riemannian_hessian(U, egrad, ehess, v)
    assert np.linalg.norm(H) <= TOL * (np.linalg.norm(ehess) + np.linalg.norm(egrad))


# ---------------------------------------------------------------------- conformance suite
@pytest.mark.parametrize("d,r", [(3, 1), (4, 2), (5, 3), (3, 3)])
def test_check_manifold_passes_on_the_complex_manifold(d, r):
    worst = check_manifold(qn.PSDQuotient(d, r, field="complex"), seed=d * r, trials=2)
    assert worst["dist = Bures-Wasserstein"] <= 1e-12
    assert worst["P_h + P_v = I (rank < r)"] <= 1e-12
    assert worst["Hessian Taylor slope (3 expected)"] >= 2.9


def test_check_manifold_names_a_broken_complex_projection():
    class Transposed(qn.PSDQuotient):        # U^T for U^*: the classic port error
        def vertical_projection(self, U, Z):
            K = U.T @ Z - Z.T @ U
            return U @ lyapunov_skew(U, K, exact=False)

        def horizontal_projection(self, U, Z):
            return Z - self.vertical_projection(U, Z)

    with pytest.raises(AssertionError, match=r"check_manifold: .* failed"):
        check_manifold(Transposed(4, 2, field="complex"), trials=1, boundary=False)


# ---------------------------------------------------------------------- barycentres
def test_barycenter_of_hermitian_matrices_solves_the_fixed_point_equation():
    rng = np.random.default_rng(14)
    Us = [factor(3, 3, rng) for _ in range(4)]
    w = rng.dirichlet(np.ones(4))
    b = qn.bw_barycenter(Us, w, inputs="factors")
    Qs = [U @ ct(U) for U in Us]
    S = scipy.linalg.sqrtm(b.Q)
    fixed = sum(wi * scipy.linalg.sqrtm(S @ Q @ S) for wi, Q in zip(w, Qs))
    assert b.converged and rel(fixed, b.Q) <= 1e-10             # Álvarez-Esteban et al. 2016
    bm = qn.bw_barycenter(Qs, w, inputs="matrices")
    assert rel(bm.Q, b.Q) <= 1e-10
    assert np.linalg.norm(b.Q - ct(b.Q)) == 0.0 or rel(b.Q, ct(b.Q)) <= TOL


def test_barycenter_of_real_points_is_the_real_one():
    rng = np.random.default_rng(15)
    Us = rng.standard_normal((5, 6, 2))
    w = rng.dirichlet(np.ones(5))
    br = qn.bw_barycenter(Us, w, inputs="factors")
    bc = qn.bw_barycenter(Us + 0j, w, inputs="factors")
    assert bc.Q.dtype == np.complex128 and rel(bc.Q, br.Q) <= 1e-9
    assert abs(bc.objective - br.objective) <= 1e-10 * br.objective


# ---------------------------------------------------------------------- pymanopt
def test_agrees_with_pymanopt_psdfixedrankcomplex():
    """Inner product, projection (its Lyapunov solve is the same mathematics at full rank),
    dist (the norm of its log), dim; pymanopt's random_point is not CN(0, 1) (variance 2)."""
    d, r = 6, 2
    M, rng, U, V = case(d, r, 16)
    P = pymanopt.manifolds.PSDFixedRankComplex(d, r)
    Z, W = cgauss(rng, (d, r)), cgauss(rng, (d, r))
    assert P.dim == M.dim
    assert abs(P.inner_product(U, Z, W) - M.inner_product(U, Z, W)) <= TOL * np.linalg.norm(Z) \
        * np.linalg.norm(W)
    assert rel(M.projection(U, Z), P.projection(U, Z)) <= 1e-11
    assert abs(P.dist(U, V) - M.dist(U, V)) <= TOL * M.dist(U, V)
    assert rel(M.log(U, V), P.log(U, V)) <= 1e-11


@pytest.mark.parametrize("name", ["SteepestDescent", "ConjugateGradient", "TrustRegions"])
def test_pymanopt_solvers_run_on_the_complex_manifold(name):
    import autograd.numpy as anp

    d, r = 6, 2
    rng = np.random.default_rng(17)
    M = qn.PSDQuotient(d, r, field="complex")
    Ustar = factor(d, r, rng)
    T = Ustar @ ct(Ustar)

    @pymanopt.function.autograd(M)
    def cost(U):
        S = U @ anp.conj(U).T - T
        return 0.5 * anp.real(anp.sum(anp.conj(S) * S))

    opt = getattr(pymanopt.optimizers, name)(verbosity=0, max_iterations=2000)
    res = opt.run(pymanopt.Problem(M, cost), initial_point=M.random_point(rng))
    assert res.point.dtype == np.complex128
    assert rel(res.point @ ct(res.point), T) <= 1e-6
