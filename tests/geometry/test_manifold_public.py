"""PSDQuotient's public methods, option by option, against independent references (the
lift against the dense minimum-norm least-squares solution of xi U^T + U xi^T = Qdot).

Tolerances: the dense solve and the closed form agree to rounding of a (dr x d^2) least-squares
problem with condition number <= 1e3 here, so 1e-10 relative."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

import quadnet as qn
from quadnet.geometry import manifold as mf
from quadnet.testing import dense_differential

RNG = np.random.default_rng(13)
#: an optional "Class.method: " or "function: " prefix naming the refusing callable
ANY = r"^(?:[\w.]+: )?"
LIFT = r"^(?:PSDQuotient\.lift: )?"
OVERFLOW = r"^(PSDQuotient\.)?{}: the result is not finite \(overflow of finite inputs\)$"


def _dense_lift(U, Qdot):
    """Minimum-norm least squares of vec(xi U^T + U xi^T) = vec(Qdot) over xi (d x r)."""
    xi, *_ = np.linalg.lstsq(dense_differential(U), Qdot.ravel(), rcond=1e-12)
    return xi.reshape(U.shape)


@pytest.mark.parametrize("rank", [1, 2])
def test_lift_is_the_dense_minimum_norm_solution_and_reports_the_residual(rank):
    M = qn.PSDQuotient(4, 2)
    U = RNG.standard_normal((4, 2))
    if rank == 1:
        U[:, 1] = 0.5 * U[:, 0]
    S = RNG.standard_normal((4, 4))
    Qdot = S + S.T
    xi, res = M.lift(U, Qdot, return_residual=np.True_)           # a numpy bool is a bool
    ref = _dense_lift(U, Qdot)
    assert np.allclose(xi, ref, rtol=0, atol=1e-10 * np.linalg.norm(ref))
    P = U @ np.linalg.pinv(U)
    assert res == pytest.approx(np.linalg.norm((np.eye(4) - P) @ Qdot @ (np.eye(4) - P)),
                                rel=1e-10)
    assert isinstance(M.lift(U, Qdot), np.ndarray)               # no residual by default
    msg = (f"Qdot is not in the image of D pi(U): ||(I - Pi) Qdot (I - Pi)||_F = {res:.3e} > "
           f"1e-10 ||Qdot||_F (U has rank {rank})")
    with pytest.raises(ValueError, match=f"{LIFT}{re.escape(msg)}$"):
        M.lift(U, Qdot, exact=np.True_)


def test_lift_exact_threshold_is_relative_to_qdot():
    """A tangent Qdot plus an off-image part of relative size 1e-12 is exact enough at any
    scale of Qdot (the threshold is 1e-10 ||Qdot||_F)."""
    M = qn.PSDQuotient(4, 2)
    U = RNG.standard_normal((4, 2))
    xi = RNG.standard_normal((4, 2))
    T = xi @ U.T + U @ xi.T
    n = np.linalg.svd(U)[0][:, 2:]                                # the normal space of range U
    off = n @ np.diag([1.0, -1.0]) @ n.T
    for scale in (1e-6, 1.0, 1e6):
        Qdot = scale * (T + 1e-12 * np.linalg.norm(T) * off / np.linalg.norm(off))
        out = M.lift(U, Qdot, exact=True)
        assert np.allclose(out, scale * M.horizontal_projection(U, xi), rtol=0,
                           atol=1e-8 * scale * np.linalg.norm(xi))


def test_lift_refuses_bad_flags_shapes_and_overflow_by_name():
    M = qn.PSDQuotient(3, 2)
    U = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    with pytest.raises(TypeError, match=LIFT + r"exact must be a bool, got str$"):
        M.lift(U, np.eye(3), exact="yes")
    with pytest.raises(TypeError, match=LIFT + r"return_residual must be a bool, got int$"):
        M.lift(U, np.eye(3), return_residual=1)
    with pytest.raises(ValueError, match=LIFT + r"Qdot must be \(3, 3\), got shape \(2, 2\)$"):
        M.lift(U, np.eye(2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match=r"^(PSDQuotient\.)?lift: the result is not "
                                             r"finite \(overflow of finite inputs\)$"):
            M.lift(1e-200 * U, 1e300 * np.diag([1.0, 1.0, 0.0]))


# ------------------------------------------------------------------ dense references
def _dense_vertical_basis(U, rtol=1e-10):
    """Orthonormal basis (row-major vec) of span{U Omega_ij}, Omega_ij = E (e_i e_j^T - e_j e_i^T)
    E^T over the pairs of right singular vectors not both in the numerical kernel."""
    _, s, Et = np.linalg.svd(U, full_matrices=False)
    k = int(np.sum(s > rtol * s[0])) if s[0] > 0 else 0
    r = U.shape[1]
    cols = []
    for i in range(r):
        for j in range(i + 1, r):
            if i >= k and j >= k:
                continue
            S = np.zeros((r, r))
            S[i, j], S[j, i] = 1.0, -1.0
            cols.append((U @ Et.T @ S @ Et).ravel())
    if not cols:
        return np.zeros((U.size, 0))
    return np.linalg.qr(np.array(cols).T)[0]


def _dense_horizontal(U, Z, rtol=1e-10):
    B = _dense_vertical_basis(U, rtol)
    return Z - (B @ (B.T @ Z.ravel())).reshape(Z.shape)


U3 = np.array([[1.0, 0.5], [0.0, 2.0], [1.5, -1.0]])
Z3 = np.array([[0.5, 0.0], [1.0, -0.5], [0.0, 1.0]])
W3 = np.array([[0.0, 1.0], [-0.5, 0.5], [1.0, 0.0]])


# ------------------------------------------------------------------ module functions
def test_horizontal_dimension_default_rank_is_full():
    for d, r in [(5, 2), (4, 4), (3, 1)]:
        assert mf.horizontal_dimension(d, r) == d * r - r * (r - 1) // 2
        assert mf.horizontal_dimension(d, r) == mf.horizontal_dimension(d, r, r)
        assert mf.horizontal_dimension(d, r, field="complex") == 2 * d * r - r * r


def _lyap_dense(U, K):
    """The minimum-norm solution of G Om + Om G = K by a dense Kronecker least-squares solve."""
    G = U.T @ U
    r = G.shape[0]
    A = np.kron(G, np.eye(r)) + np.kron(np.eye(r), G)
    return np.linalg.lstsq(A, K.ravel(), rcond=1e-12)[0].reshape(r, r)


def test_lyapunov_skew_with_the_callers_eigendecomposition():
    K = np.array([[0.0, 2.0], [-2.0, 0.0]])
    ref = _lyap_dense(U3, K)
    out = mf.lyapunov_skew(U3, K, eig=np.linalg.eigh(U3.T @ U3))
    assert np.allclose(out, ref, rtol=0, atol=1e-12 * np.linalg.norm(ref))
    out = mf.lyapunov_skew(U3, K, np.linalg.eigh(U3.T @ U3), exact=False)
    assert np.allclose(out, ref, rtol=0, atol=1e-12 * np.linalg.norm(ref))


def test_lyapunov_skew_uses_a_given_frame_and_its_rank():
    """A Frame built with a looser rank tolerance drops the pair of the small singular value:
    the closed form K_ij / (s_i + s_j) with the (1, 1) entry zeroed."""
    from quadnet.geometry import _kernels

    U = np.array([[1.0, 0.0], [0.0, 1e-5], [0.0, 0.0]])
    K = np.array([[2.0, 1.0], [1.0, 3e-10]])
    fr = _kernels.frame(U, 1e-3)
    out = mf.lyapunov_skew(U, K, eig=fr, exact=False)
    s = np.array([1.0, 1e-10])
    ref = K / (s[:, None] + s[None, :])
    ref[1, 1] = 0.0
    assert np.allclose(out, ref, rtol=1e-12, atol=1e-15)
    full = mf.lyapunov_skew(U, K, exact=False)             # default: rank 2
    assert full[1, 1] == pytest.approx(1.5, rel=1e-6)


def test_lyapunov_skew_range_check_at_rank_deficient_factors():
    U = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])   # rank 1, r = 3
    c = 0.75
    K = np.array([[0.0, 1.0, 2.0], [-1.0, 0.0, c], [-2.0, -c, 0.0]])
    # the kernel block is the (1, 2) pair in any basis of the kernel: residual sqrt(2) |c|
    msg = (f"K is not in the range of the Lyapunov operator at U (rank 1 < r = 3): residual "
           f"{math.sqrt(2) * c:.3e}; pass exact=False for the minimum-norm least-squares "
           f"solution")
    with pytest.raises(ValueError, match=f"{ANY}{re.escape(msg)}$"):
        mf.lyapunov_skew(U, K)
    out = mf.lyapunov_skew(U, K, exact=False)              # least squares, no refusal
    ref = _lyap_dense(U, K)
    assert np.allclose(out, ref, rtol=0, atol=1e-12)
    # an off-range part of relative size 1e-6 is refused (threshold 1e-10 ||K||_F)
    K2 = K.copy()
    K2[1, 2], K2[2, 1] = 1e-6, -1e-6
    with pytest.raises(ValueError, match=ANY + r"K is not in the range .* residual 1\.414e-06;"):
        mf.lyapunov_skew(U, K2)
    K2[1, 2], K2[2, 1] = 0.0, 0.0
    assert np.allclose(mf.lyapunov_skew(U, K2), _lyap_dense(U, K2), rtol=0, atol=1e-12)


def test_lyapunov_skew_overflow_is_named():
    U = 1e-150 * U3
    K = np.array([[0.0, 1e10], [-1e10, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match=r"^lyapunov_skew: the solution overflows "
                                             r"\(\|\|K\|\| / sigma_kept\^2 > 1e308\)$"):
            mf.lyapunov_skew(U, K)


def test_declared_real_field_refuses_each_complex_argument_by_name():
    Uc = U3 + 0j
    msg = ("{} must be real (field='real' is declared), got complex dtype complex128; pass "
           "field='complex' or None")
    with pytest.raises(TypeError, match=f"{ANY}{re.escape(msg.format('U'))}$"):
        mf.align(Uc, U3, field="real")
    with pytest.raises(TypeError, match=f"{ANY}{re.escape(msg.format('V'))}$"):
        mf.align(U3, Uc, field="real")
    Q = U3 @ U3.T
    with pytest.raises(TypeError, match=f"{ANY}{re.escape(msg.format('Q1'))}$"):
        mf.bures_wasserstein(Q + 0j, Q, field="real")
    with pytest.raises(TypeError, match=f"{ANY}{re.escape(msg.format('Q2'))}$"):
        mf.bures_wasserstein(Q, Q + 0j, field="real")


def _rotation(n, seed):
    return np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))[0]


@pytest.mark.parametrize("scale", [1.0, 1e-200, 2.0 ** -700, 1e200, 0.3])
def test_bures_wasserstein_commuting_closed_form_at_every_scale(scale):
    """Commuting Q1 = R diag(a) R^T, Q2 = R diag(b) R^T: d = ||sqrt(a) - sqrt(b)||, and
    d(c Q1, c Q2) = sqrt(c) d(Q1, Q2)."""
    R = _rotation(3, 1)
    for a, b in [([4.0, 1.0, 0.25], [1.0, 1.0, 1.0]), ([1.0, 2.0, 3.0], [3.0, 2.5, 1.0]),
                 ([1.0, 1e-3, 0.5], [0.0, 2.0, 1.0])]:
        Q1 = R @ np.diag(a) @ R.T
        Q2 = R @ np.diag(b) @ R.T
        ref = math.sqrt(scale) * float(np.linalg.norm(np.sqrt(a) - np.sqrt(b)))
        assert mf.bures_wasserstein(scale * Q1, scale * Q2) == pytest.approx(ref, rel=1e-10,
                                                                             abs=0)
        assert mf.bures_wasserstein(scale * Q2, scale * Q1) == pytest.approx(ref, rel=1e-10,
                                                                             abs=0)
    # unit largest eigenvalue of Q2 exactly (a diagonal Q2 = I)
    assert mf.bures_wasserstein(scale * np.diag([4.0, 1.0]), scale * np.eye(2)) == \
        pytest.approx(math.sqrt(scale), rel=1e-12, abs=0)


def test_bures_wasserstein_takes_the_transport_route_from_the_better_conditioned_matrix():
    """Nearly equal exact inputs Q = H diag(2, 1, 1/2, s) H^T (H the 4 x 4 Hadamard / 2, s a
    multiple of 2^-50, so every entry is exact) with kappa = 2 / s just below 1e8 for Q1 and
    just above for Q2: only Q1 qualifies as the base of the transport route, whose error is
    ~ eps kappa ~ 2e-8 relative; the factor route loses ~ eps / d ~ 1e-4 here. In both
    argument orders the result matches the closed form (s1 - s2) / (sqrt s1 + sqrt s2)."""
    H = np.array([[1, 1, 1, 1], [1, -1, 1, -1], [1, 1, -1, -1], [1, -1, -1, 1]]) / 2.0
    s1 = round(2.0001e-8 * 2**50) * 2.0**-50
    s2 = round(1.9999e-8 * 2**50) * 2.0**-50
    assert 2 / s1 < 1e8 < 2 / s2
    Q1 = H @ np.diag([2.0, 1.0, 0.5, s1]) @ H.T
    Q2 = H @ np.diag([2.0, 1.0, 0.5, s2]) @ H.T
    assert np.array_equal(4 * Q1 - 4 * Q2, (s1 - s2) * np.outer(4 * H[:, 3], H[:, 3]))  # exact
    ref = (s1 - s2) / (math.sqrt(s1) + math.sqrt(s2))
    assert mf.bures_wasserstein(Q1, Q2) == pytest.approx(ref, rel=1e-7, abs=0)
    assert mf.bures_wasserstein(Q2, Q1) == pytest.approx(ref, rel=1e-7, abs=0)


def test_bures_wasserstein_zero_matrix_is_the_trace_without_warnings():
    Q = U3 @ U3.T
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mf.bures_wasserstein(np.zeros((3, 3)), Q) == pytest.approx(
            math.sqrt(np.trace(Q)), rel=1e-14)
        assert mf.bures_wasserstein(Q, np.zeros((3, 3))) == pytest.approx(
            math.sqrt(np.trace(Q)), rel=1e-14)
        assert mf.bures_wasserstein(np.zeros((3, 3)), np.zeros((3, 3))) == 0.0


def test_bures_wasserstein_refuses_an_indefinite_matrix_by_name():
    with pytest.raises(ValueError, match=ANY + r"Q1 must be positive semidefinite, smallest "
                                         r"eigenvalue -1\.000e\+00 \(largest 2\.000e\+00\)$"):
        mf.bures_wasserstein(np.diag([-1.0, 2.0]), np.eye(2))
    with pytest.raises(ValueError, match=ANY + r"Q2 must be positive semidefinite, smallest "
                                         r"eigenvalue -5\.000e-01 \(largest 3\.000e\+00\)$"):
        mf.bures_wasserstein(np.eye(2), np.diag([3.0, -0.5]))


# ------------------------------------------------------------------ PSDQuotient
def test_name_and_typical_dist_match_pymanopt():
    from pymanopt.manifolds import PSDFixedRank

    assert str(qn.PSDQuotient(3, 2)) == "PSDQuotient(d=3, r=2)"
    assert str(qn.PSDQuotient(4, 1, field="complex")) == "PSDQuotient(d=4, r=1, field=complex)"
    for d, r in [(5, 2), (3, 3), (7, 1)]:
        assert qn.PSDQuotient(d, r).typical_dist == PSDFixedRank(d, r).typical_dist


def test_complex_field_results_are_checked_without_casting_warnings():
    H = qn.PSDQuotient(3, 2, field="complex")
    U = U3 + 0.5j * W3
    Z = Z3 - 1j * U3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        h = H.horizontal_projection(U, Z)
        v = H.vertical_projection(U, Z)
        D = H.differential(U, Z)
    assert np.allclose(h + v, Z, rtol=0, atol=1e-14)
    S = U.conj().T @ h
    assert np.allclose(S, S.conj().T, rtol=0, atol=1e-13)
    assert np.allclose(D, Z @ U.conj().T + U @ Z.conj().T, rtol=0, atol=1e-14)


def test_complex_inner_product_is_the_real_part_of_the_hermitian_one():
    H = qn.PSDQuotient(3, 2, field="complex")
    a = Z3 + 2j * W3
    b = W3 - 0.5j * Z3 + 1j
    ref = float(np.real(np.vdot(a, b)))
    assert H.inner_product(U3 + 0j, a, b) == pytest.approx(ref, rel=1e-14)
    assert H.inner_product(U3, a, b.tolist()) == pytest.approx(ref, rel=1e-14)
    assert H.inner_product(U3, Z3, W3) == pytest.approx(float(np.sum(Z3 * W3)), rel=1e-14)


def test_predictor_refuses_overflow_by_name_without_warnings():
    M = qn.PSDQuotient(3, 2)
    U = np.array([[1e200, 1e200], [1e200, -1e200], [0.0, 0.0]])    # inf and inf - inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"^(PSDQuotient\.)?predictor: U U\^T overflows "
                                             r"float64 \(U has entries up to 1e\+200\); "
                                             r"rescale U$"):
            M.predictor(U)
        with pytest.raises(ValueError, match=r"entries up to 3e\+200\)"):
            M.predictor(-3.0 * U)
    assert np.array_equal(M.predictor(U3.tolist()), U3 @ U3.T)


def test_differential_refuses_overflow_by_name_without_warnings():
    M = qn.PSDQuotient(2, 1)
    U = np.array([[1e200], [1e200]])
    xi = np.array([[1e200], [-1e200]])      # xi U^T = [[inf, inf], [-inf, -inf]]: inf - inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=OVERFLOW.format("differential")):
            M.differential(U, xi)



@pytest.mark.parametrize("method", ["vertical_projection", "horizontal_projection",
                                    "projection", "euclidean_to_riemannian_gradient"])
def test_projections_refuse_overflow_by_name(method):
    M = qn.PSDQuotient(3, 2)
    big = np.full((3, 2), 1.5e308)
    for mode in ("ignore", "error"):
        with warnings.catch_warnings():
            warnings.simplefilter(mode)
            with pytest.raises(ValueError, match=OVERFLOW.format(method)):
                getattr(M, method)(U3, big)


def test_transport_refuses_overflow_by_name():
    M = qn.PSDQuotient(3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match=OVERFLOW.format("transport")):
            M.transport(U3, 2.0 * U3, np.full((3, 2), 1.5e308))


def test_metric_refuses_overflow_by_name_also_under_warnings_as_errors():
    M = qn.PSDQuotient(3, 2)
    big = np.full((3, 2), 1.5e308)
    for mode in ("ignore", "error"):
        with warnings.catch_warnings():
            warnings.simplefilter(mode)
            with pytest.raises(ValueError,
                               match=r"^(PSDQuotient\.)?norm: the result is not finite$"):
                M.norm(U3, big)
            with pytest.raises(ValueError, match=OVERFLOW.format("inner_product")):
                M.inner_product(U3, big, big)
            with pytest.raises(ValueError, match=OVERFLOW.format("dist")):
                M.dist(np.array([[1.5e308, 0.0], [0.0, 0.0], [0.0, 0.0]]),
                       np.array([[0.0, 0.0], [1.5e308, 0.0], [0.0, 0.0]]))
            a = 1e308                       # aligned (R = 1), then 2a in the last entry
            with pytest.raises(ValueError, match=OVERFLOW.format("dist")):
                qn.PSDQuotient(3, 1).dist(np.array([[a], [a], [-a]]), np.array([[a], [a], [a]]))
            with pytest.raises(ValueError, match=OVERFLOW.format("log")):
                qn.PSDQuotient(3, 1).log(np.array([[a], [a], [-a]]), np.array([[a], [a], [a]]))


def test_riemannian_hessian_refuses_overflow_by_name():
    M = qn.PSDQuotient(3, 2)
    xi = M.vertical_projection(U3, np.array([[0.0, 1.0], [0.0, 0.0], [0.0, 0.0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match=OVERFLOW.format("euclidean_to_riemannian_hessian")):
            M.euclidean_to_riemannian_hessian(U3, U3, np.full((3, 2), 1.5e308), xi)


def test_rank_tolerance_reaches_the_bases_the_lift_and_random_tangent_vectors():
    """U with singular values (1, 1e-5, 1e-5): rank 1 at rank_rtol = 1e-3, rank 3 at the
    default; dim V_U = 2 against 3 (r = 3)."""
    U = np.zeros((4, 3))
    U[0, 0], U[1, 1], U[2, 2] = 1.0, 1e-5, 1e-5
    M = qn.PSDQuotient(4, 3, rank_rtol=1e-3)
    assert M.rank(U) == 1
    Bv = M.vertical_basis(U)
    Bh = M.horizontal_basis(U)
    assert Bv.shape == (12, 2) and Bh.shape == (12, 10)
    ref = _dense_vertical_basis(U, 1e-3)
    assert np.allclose(Bv @ Bv.T, ref @ ref.T, rtol=0, atol=1e-12)
    assert np.allclose(Bh.T @ Bh, np.eye(10), rtol=0, atol=1e-12)
    assert np.allclose(Bh.T @ Bv, 0.0, rtol=0, atol=1e-12)
    # the lift at the rank-1 truncation U_1 = diag(1, 0, 0)
    U1 = np.zeros((4, 3))
    U1[0, 0] = 1.0
    S = RNG.standard_normal((4, 4))
    Qdot = S + S.T
    assert np.allclose(M.lift(U, Qdot), _dense_lift(U1, Qdot), rtol=0, atol=1e-10)
    # a unit horizontal vector from rng=7: the dense projection of that Gaussian
    g = np.random.default_rng(7).standard_normal((4, 3))
    h = _dense_horizontal(U, g, 1e-3)
    assert np.allclose(M.random_tangent_vector(U, rng=7), h / np.linalg.norm(h), rtol=0,
                       atol=1e-12)


def test_lift_of_zero_is_exact():
    M = qn.PSDQuotient(3, 2)
    xi, res = M.lift(U3, np.zeros((3, 3)), exact=True, return_residual=True)
    assert res == 0.0 and np.array_equal(xi, np.zeros((3, 2)))


def test_random_draws_follow_the_given_stream():
    M = qn.PSDQuotient(3, 2, seed=5)
    assert np.array_equal(M.random_point(), np.random.default_rng(5).standard_normal((3, 2)))
    assert np.array_equal(M.random_point(rng=7), np.random.default_rng(7).standard_normal((3, 2)))
    for rng, ref_rng in [(None, 5), (7, 7), (np.random.default_rng(9), 9)]:
        M = qn.PSDQuotient(3, 2, seed=5)
        h = _dense_horizontal(U3, np.random.default_rng(ref_rng).standard_normal((3, 2)))
        assert np.allclose(M.random_tangent_vector(U3, rng=rng), h / np.linalg.norm(h),
                           rtol=0, atol=1e-12)
    # complex field: the documented CN(0, 1) draw from one (2, d, r) Gaussian
    H = qn.PSDQuotient(3, 2, seed=5, field="complex")
    g = np.random.default_rng(11).standard_normal((2, 3, 2))
    z = (g[0] + 1j * g[1]) * math.sqrt(0.5)
    assert np.allclose(H.random_point(rng=11), z, rtol=0, atol=1e-15)
    xi = H.random_tangent_vector(U3 + 0j, rng=11)
    h = H.horizontal_projection(U3 + 0j, z)
    assert np.allclose(xi, h / np.linalg.norm(h), rtol=0, atol=1e-12)
    assert np.abs(xi.imag).max() > 0.01


@pytest.mark.parametrize("method", ["random_point", "random_tangent_vector"])
def test_random_draws_name_and_record_the_rng(method):
    from quadnet._validation import count_validations

    M = qn.PSDQuotient(3, 2, seed=5)
    args = (U3,) if method == "random_tangent_vector" else ()
    with pytest.raises(TypeError, match=ANY + r"rng must be None, an int >= 0, a sequence of ints "
                                        r">= 0 or a numpy\.random\.Generator, got str$"):
        getattr(M, method)(*args, rng="abc")
    with pytest.raises(ValueError, match=ANY + r"rng must be an int >= 0, got -1$"):
        getattr(M, method)(*args, rng=-1)
    with count_validations() as seen:
        getattr(M, method)(*args, rng=3)
    assert [s for s in seen if s[0] == "as_rng"] == [("as_rng", "rng")]


# ------------------------------------------------------------------ curvature methods
def test_curvature_methods_pass_the_directions_and_the_projection_flag():
    M = qn.PSDQuotient(3, 2)
    xi = M.horizontal_projection(U3, Z3)
    eta = M.horizontal_projection(U3, W3)
    # Ric(xi, eta) is the bilinear form of the Ricci matrix in the horizontal basis
    R = M.ricci_curvature(U3)
    B = M.horizontal_basis(U3)
    cx, ce = B.T @ xi.ravel(), B.T @ eta.ravel()
    ric = M.ricci_curvature(U3, xi, eta)
    assert ric == pytest.approx(cx @ R @ ce, rel=1e-10)
    assert M.ricci_curvature(U3, xi) == pytest.approx(cx @ R @ cx, rel=1e-10)
    assert abs(ric - cx @ R @ cx) > 1e-3 and abs(ric - ce @ R @ ce) > 1e-3
    with pytest.raises(ValueError, match="eta given without xi"):
        M.ricci_curvature(U3, eta=eta)
    # project=True: the horizontal parts of non-horizontal directions
    assert M.ricci_curvature(U3, Z3, W3, project=True) == pytest.approx(ric, rel=1e-10)
    K = M.sectional_curvature(U3, xi, eta)
    assert M.sectional_curvature(U3, Z3, W3, project=True) == pytest.approx(K, rel=1e-10)
    with pytest.raises(ValueError, match="not horizontal"):
        M.sectional_curvature(U3, Z3, W3)
    with pytest.raises(ValueError, match="not horizontal"):
        M.ricci_curvature(U3, Z3, W3)


def test_parallel_transport_passes_time_flag_and_tolerances():
    from quadnet.geometry import riemannian

    M = qn.PSDQuotient(3, 2)
    xi = M.horizontal_projection(U3, Z3)
    v = M.horizontal_projection(U3, W3)
    t = 0.5
    V = M.parallel_transport(U3, xi, v, t)
    W = U3 + t * xi
    S = W.T @ V
    assert np.allclose(S, S.T, rtol=0, atol=1e-10)                      # horizontal at U + t xi
    assert np.linalg.norm(V) == pytest.approx(np.linalg.norm(v), rel=1e-10)   # isometry
    assert np.allclose(M.parallel_transport(U3, Z3, W3, t, project=True), V, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="not horizontal"):
        M.parallel_transport(U3, Z3, W3, t)
    for opts in ({"rtol": 1e-4}, {"atol": 1e-4}, {"rtol": 1e-5, "atol": 1e-6}):
        loose = M.parallel_transport(U3, xi, v, t, **opts)
        assert np.array_equal(loose, riemannian.parallel_transport(U3, xi, v, t, **opts))
        assert not np.array_equal(loose, V)                # the tolerance is used
        assert np.allclose(loose, V, rtol=0, atol=1e-2)


def test_random_point_inside_a_validated_call_does_not_record_the_rng_again():
    """check_manifold validates its seed once; its own random_point(rng) calls are nested."""
    from quadnet._validation import count_validations
    from quadnet.geometry.conformance import check_manifold

    with count_validations() as seen:
        check_manifold(qn.PSDQuotient(3, 2), trials=1)
    assert ("check_manifold", "seed") in seen
    assert [s for s in seen if s[0] == "as_rng"] == []
