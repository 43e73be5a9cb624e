"""The raw kernels of the curvature and transport module (quadnet theory §1) one at a time.

Each against an independent route: the plane area against ``|xi|^2 |eta|^2 - <xi, eta>^2``;
O'Neill's sectional curvature against the Bures-Wasserstein closed form in SPD coordinates
(Takatsu 2011) for ``r = d``; the Ricci form against ``sum_i K(xi, e_i) |xi ^ e_i|^2`` over an
orthonormal horizontal basis built here from a null space, and its trace against the scalar
closed form; the transport ODE against its invariants (horizontality, isometry, the geodesic's
own velocity is parallel, reversibility) and a fixed-step RK4 of the same ODE; the rank
certificate of a segment against segments that cross the boundary at known points.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg

from quadnet.geometry import riemannian as rg
from quadnet.geometry import _kernels as K
from quadnet.geometry.manifold import bures_wasserstein


def _rng(seed=0):
    return np.random.default_rng(seed)


def _horizontal_basis(U):
    """Orthonormal basis of ``{Z : U^T Z symmetric}`` (columns, row-major vec), independent of
    the package: the null space of the skew part of ``U^T Z``."""
    d, r = U.shape
    rows = []
    for a in range(r):
        for b in range(a + 1, r):
            M = np.zeros((d, r))
            M[:, b] += U[:, a]   # (U^T Z)_ab = U[:, a] . Z[:, b]
            M[:, a] -= U[:, b]   # (U^T Z)_ba = U[:, b] . Z[:, a]
            rows.append(M.reshape(-1))
    if not rows:
        return np.eye(d * r)
    return scipy.linalg.null_space(np.array(rows))


def _horizontal(U, rng):
    B = _horizontal_basis(U)
    return (B @ rng.standard_normal(B.shape[1])).reshape(U.shape)


# ---------------------------------------------------------------------- plane and parts
def test_vertical_part_is_u_omega_with_omega_skew_and_leaves_a_horizontal_rest():
    rng = _rng(1)
    U = rng.standard_normal((5, 3))
    Z = rng.standard_normal((5, 3))
    Zv = rg._vertical_part(U, Z)
    Omega = np.linalg.lstsq(U, Zv, rcond=None)[0]
    np.testing.assert_allclose(U @ Omega, Zv, atol=1e-13)
    np.testing.assert_allclose(Omega, -Omega.T, atol=1e-13)
    H = U.T @ (Z - Zv)
    np.testing.assert_allclose(H, H.T, atol=1e-13)


def test_plane_area_and_relative_size():
    xi = np.array([[3.0, 0.0], [0.0, 0.0]])
    eta = np.array([[1.0, 2.0], [0.0, 0.0]])
    area2, rel = rg._plane(xi, eta)   # perp = eta - xi / 3 = (0, 2): area^2 = 9 * 4
    assert area2 == 36.0
    assert rel == pytest.approx(2.0 / math.sqrt(5.0), rel=1e-15)
    rng = _rng(2)
    x, e = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    area2, rel = rg._plane(2.5 * x, e)
    ref = np.sum((2.5 * x) ** 2) * np.sum(e**2) - np.sum(2.5 * x * e) ** 2
    assert area2 == pytest.approx(ref, rel=1e-13)
    assert rel == pytest.approx(math.sqrt(ref / np.sum((2.5 * x) ** 2) / np.sum(e**2)),
                                rel=1e-13)
    assert rg._plane(np.zeros((2, 2)), eta) == (0.0, 0.0)
    assert rg._plane(xi, np.zeros((2, 2))) == (0.0, 0.0)
    area2, rel = rg._plane(xi, -2.0 * xi)
    assert area2 == 0.0 and rel == 0.0


def test_check_plane_threshold_and_message():
    xi = np.array([[1.0, 0.0], [0.0, 0.0]])
    rg._check_plane(xi, np.array([[1.0, 2e-10], [0.0, 0.0]]))          # rel 2e-10: accepted
    with pytest.raises(ValueError, match=r"^xi and eta are parallel \(\|xi \^ eta\| / \(\|\|xi\|\| "
                                         r"\|\|eta\|\|\) = 5\.000e-11 <= 1e-10\): the sectional "
                                         r"curvature of a degenerate plane is undefined$"):
        rg._check_plane(xi, np.array([[1.0, 5e-11], [0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"= 0\.000e\+00 <= 1e-10"):
        rg._check_plane(np.zeros((2, 2)), xi)


def test_as_horizontal_checks_projects_and_names():
    U = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    h = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
    assert rg._as_horizontal(U, h, "xi", False) is h
    v = U @ np.array([[0.0, 1.0], [-1.0, 0.0]])                    # vertical
    with pytest.raises(ValueError, match=r"^eta is not horizontal at U: \|\|P_v\(eta\)\|\| / "
                                         r"\|\|eta\|\| = 1\.000e\+00 > 1e-08 \(U\^T eta must be "
                                         r"symmetric\); pass project=True to use its horizontal "
                                         r"projection$"):
        rg._as_horizontal(U, v, "eta", False)
    np.testing.assert_allclose(rg._as_horizontal(U, v + h, "xi", True), h, atol=1e-15)
    with pytest.raises(ValueError, match=r"^v must be a nonzero tangent vector, got the zero "
                                         r"matrix$"):
        rg._as_horizontal(U, np.zeros((3, 2)), "v", True)
    # a vertical share of 1e-9 is accepted as rounding, 1e-7 is not
    v1 = v / np.linalg.norm(v)
    rg._as_horizontal(U, h + 1e-9 * v1, "xi", False)
    with pytest.raises(ValueError, match=r"= 1\.000e-07 > 1e-08"):
        rg._as_horizontal(U, h + 1e-7 * v1, "xi", False)


def test_gram_eigenpairs_are_decreasing():
    rng = _rng(3)
    U = rng.standard_normal((6, 4))
    lam, E = rg._gram_eig_desc(U)
    assert np.all(np.diff(lam) < 0)
    np.testing.assert_allclose(lam, np.linalg.svd(U, compute_uv=False) ** 2, rtol=1e-12)
    np.testing.assert_allclose(U.T @ U @ E, E * lam, atol=1e-12)


# ------------------------------------------------------------------ curvature kernels
def test_sectional_matches_the_bures_wasserstein_closed_form_at_full_rank():
    rng = _rng(4)
    for d in (2, 3, 4):
        U = rng.standard_normal((d, d)) + 2 * np.eye(d)
        xi, eta = _horizontal(U, rng), _horizontal(U, rng)
        K_oneill = rg._sectional(U, xi, eta)
        X, Y = xi @ U.T + U @ xi.T, eta @ U.T + U @ eta.T     # d pi(xi), d pi(eta)
        ref = rg.bures_wasserstein_sectional_curvature(U @ U.T, X, Y)
        assert K_oneill == pytest.approx(ref, rel=1e-9)
        # K(c U; xi, eta) = K(U; xi, eta) / c^2, invariant under xi -> a xi
        assert rg._sectional(3.0 * U, 0.5 * xi, eta) == pytest.approx(K_oneill / 9.0, rel=1e-12)


def test_ricci_form_is_the_sum_of_sectional_curvatures():
    rng = _rng(5)
    U = rng.standard_normal((4, 3))
    B = _horizontal_basis(U)
    basis = B.T.reshape(-1, 4, 3)
    xi, eta = _horizontal(U, rng), _horizontal(U, rng)

    def ric(x):
        tot = 0.0
        for e in basis:
            area2 = rg._plane(x, e)[0]
            if area2 > 1e-20:
                tot += rg._sectional(U, x, e) * area2
        return tot
    R = rg._ricci_form(U, np.array([xi, eta]), np.array([xi, eta, xi + eta]))
    assert R.shape == (2, 3)
    assert R[0, 0] == pytest.approx(ric(xi), rel=1e-10)
    assert R[1, 1] == pytest.approx(ric(eta), rel=1e-10)
    polar = 0.25 * (ric(xi + eta) - ric(xi - eta))
    assert R[0, 1] == pytest.approx(polar, rel=1e-9)
    assert R[1, 2] == pytest.approx(R[1, 0] + R[1, 1], rel=1e-12)   # linear in the second slot
    Rsame = rg._ricci_form(U, np.array([xi, eta]), np.array([xi, eta]))
    np.testing.assert_allclose(Rsame, R[:, :2], rtol=1e-13)


@pytest.mark.parametrize("d, r", [(2, 2), (3, 2), (4, 3), (5, 3), (5, 4)])
def test_scalar_closed_form_is_the_trace_of_ricci(d, r):
    rng = _rng(10 * d + r)
    U = rng.standard_normal((d, r)) * np.array([1.0, 0.7, 1.9, 0.4][:r])
    B = _horizontal_basis(U)
    basis = B.T.reshape(-1, d, r)
    trace = float(np.trace(rg._ricci_form(U, basis, basis)))
    lam, _ = rg._gram_eig_desc(U)
    assert rg._scalar_closed_form(lam, d) == pytest.approx(trace, rel=1e-11)


def test_scalar_closed_form_values():
    # r = 2: 6 (d - 1) / (l1 + l2); r = 1: 0
    assert rg._scalar_closed_form(np.array([3.0, 1.0]), 5) == pytest.approx(6.0, rel=1e-15)
    assert rg._scalar_closed_form(np.array([2.0]), 4) == 0.0
    lam = np.array([3.0, 2.0, 1.0])
    ref = 0.0
    for a, b_, i in ((0, 1, 2), (0, 2, 1), (1, 2, 0)):
        la, lb, li = lam[a], lam[b_], lam[i]
        ref += (4 - 3 + 1 + la * lb / ((la + li) * (lb + li))) / (la + lb)
    assert rg._scalar_closed_form(lam, 4) == pytest.approx(6.0 * ref, rel=1e-15)


# ------------------------------------------------------------------------- transport
def _rk4(U, xi, V, t, n=400):
    f = rg._transport_rhs(U, xi)
    y, h = V.reshape(-1).copy(), t / n
    for k in range(n):
        s = k * h
        k1 = f(s, y)
        k2 = f(s + h / 2, y + h / 2 * k1)
        k3 = f(s + h / 2, y + h / 2 * k2)
        k4 = f(s + h, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y.reshape(U.shape)


def test_transport_rhs_is_minus_u_omega():
    rng = _rng(6)
    U, xi = rng.standard_normal((4, 2)), rng.standard_normal((4, 2))
    V = rng.standard_normal((4, 2))
    s = 0.3
    Us = U + s * xi
    C = xi.T @ V
    G = Us.T @ Us
    Om = scipy.linalg.solve_continuous_lyapunov(G, C - C.T)        # G Om + Om G = C - C^T
    np.testing.assert_allclose(rg._transport_rhs(U, xi)(s, V.reshape(-1)),
                               (-(Us @ Om)).reshape(-1), rtol=1e-12, atol=1e-14)


def test_transport_invariants_and_a_second_integrator():
    rng = _rng(7)
    U = rng.standard_normal((4, 2)) + np.array([[2.0, 0], [0, 2.0], [0, 0], [0, 0]])
    xi = 0.4 * _horizontal(U, rng)
    v, w = _horizontal(U, rng), _horizontal(U, rng)
    t = 0.8
    V = rg._transport(U, xi, v, t, 1e-13, 1e-15)
    W = rg._transport(U, xi, w, t, 1e-13, 1e-15)
    Ut = U + t * xi
    H = Ut.T @ V
    np.testing.assert_allclose(H, H.T, atol=1e-11)                              # horizontal
    assert np.sum(V * W) == pytest.approx(np.sum(v * w), rel=1e-10)          # isometry
    assert np.linalg.norm(V) == pytest.approx(np.linalg.norm(v), rel=1e-11)
    np.testing.assert_allclose(V, _rk4(U, xi, v, t), rtol=1e-8, atol=1e-10)
    back = rg._transport(Ut, -xi, V, t, 1e-13, 1e-15)                           # reversible
    np.testing.assert_allclose(back, v, atol=1e-10)
    np.testing.assert_allclose(rg._transport(U, xi, xi, t, 1e-13, 1e-15), xi, atol=1e-13)
    same = rg._transport(U, xi, v, 0.0, 1e-13, 1e-15)
    np.testing.assert_array_equal(same, v)
    assert same is not v
    # a loose tolerance is honoured: the error grows, and stays far below 1
    loose = rg._transport(U, xi, v, t, 1e-3, 1e-3)
    assert 0 < np.abs(loose - V).max() < 1e-2


# ------------------------------------------------------------------ rank certificate
def test_check_segment_certifies_or_names_the_crossing():
    U = np.eye(2)
    xi = np.diag([-1.0, 0.0])                        # U + s xi = diag(1 - s, 1)
    rg._check_segment(U, xi, 0.9)
    rg._check_segment(U, xi, -5.0)
    rg._check_segment(U, np.zeros((2, 2)), 3.0)
    with pytest.raises(ValueError, match=r"^the geodesic U \+ s xi leaves the full-rank stratum "
                                         r"at s = 1 in \[0, 2\] \(sigma_min/sigma_max = "
                                         r"0\.00e\+00\)$"):
        rg._check_segment(U, xi, 2.0)
    with pytest.raises(ValueError, match=r"leaves the full-rank stratum at s = 4 in \[0, 4\]"):
        rg._check_segment(U, 0.25 * xi, 4.0)
    with pytest.raises(ValueError, match=r"at s = 0 in \[0, 1\]"):
        rg._check_segment(np.diag([1.0, 0.0]), np.eye(2), 1.0)
    with pytest.raises(ValueError, match=r"at s = 1 in \[0, 1\] \(sigma_min/sigma_max = 0\.00e"):
        rg._check_segment(np.ones((2, 1)), -np.ones((2, 1)), 1.0)


def test_check_segment_budget_of_evaluations():
    U = np.eye(2)
    xi = np.diag([-1.0, 0.0])
    # [0, 1.5] needs a bisection (sigma sum 1.5 = L |b - a|): 2 evaluations are not enough
    with pytest.raises(ValueError, match=r"^the geodesic U \+ s xi comes within rounding of the "
                                         r"rank boundary near s = 0\.75 in \[0, 1\.5\]$"):
        rg._check_segment(U, xi, 1.5, max_evals=2)
    with pytest.raises(ValueError, match=r"leaves the full-rank stratum at s = 0\.75"):
        rg._check_segment(U, 0.0 * xi + np.diag([-4.0 / 3.0, 0.0]), 1.5, max_evals=3)
    rg._check_segment(U, 0.5 * xi, 1.5, max_evals=2)  # 1 + 0.25 > 0.5 * 1.5: no bisection
    rg._check_segment(U, xi, 0.999)                    # safe, many bisections


def test_dist_is_the_bures_wasserstein_distance_of_the_predictors():
    rng = _rng(8)
    U, V = rng.standard_normal((4, 2)), rng.standard_normal((4, 2))
    assert rg._dist(U, V) == pytest.approx(bures_wasserstein(U @ U.T, V @ V.T), rel=1e-10)
    R = np.linalg.qr(rng.standard_normal((2, 2)))[0]
    assert rg._dist(U @ R, V) == pytest.approx(rg._dist(U, V), rel=1e-12)
    assert rg._dist(U, U @ R) == pytest.approx(0.0, abs=1e-14)
    assert K.fro_norm(U) == pytest.approx(rg._dist(U, np.zeros((4, 2))), rel=1e-14)


def test_check_segment_lipschitz_constant_is_the_spectral_norm():
    # U + s xi = (1 - s/2) I on [0, 1.8]: sigma(0) + sigma(1.8) = 1.1 > ||xi||_2 1.8 = 0.9, so
    # no bisection is needed (the Frobenius norm 0.71 * 1.8 = 1.27 would need one)
    rg._check_segment(np.eye(2), -0.5 * np.eye(2), 1.8, max_evals=2)


def test_check_segment_reports_the_relative_smallest_singular_value():
    U = 2.0 * np.eye(3)
    xi = np.diag([-2.0 * (1 - 1e-14), 0.0, 0.0])     # sigma = (2, 2, 2e-14) at s = 1
    sv = np.linalg.svd(U + xi, compute_uv=False)
    with pytest.raises(ValueError, match=rf"at s = 1 in \[0, 1\] \(sigma_min/sigma_max = "
                                         rf"{sv[-1] / sv[0]:.2e}\)$"):
        rg._check_segment(U, xi, 1.0)
    assert f"{sv[-1] / sv[0]:.2e}" == "9.99e-15"


def test_check_segment_counts_every_evaluation_against_the_budget():
    # the rank boundary at s = 1/3 is never a bisection point: the budget ends the search
    with pytest.raises(ValueError, match=r"^the geodesic U \+ s xi comes within rounding of the "
                                         r"rank boundary near s = 0\.3\d* in \[0, 1\]$"):
        rg._check_segment(np.eye(2), np.diag([-3.0, 0.0]), 1.0, max_evals=10)


def test_check_plane_refuses_exactly_at_the_threshold():
    xi = np.array([[1.0, 0.0]])
    assert rg._plane(xi, np.array([[1.0, 1e-10]]))[1] == 1e-10
    with pytest.raises(ValueError, match=r"= 1\.000e-10 <= 1e-10"):
        rg._check_plane(xi, np.array([[1.0, 1e-10]]))


def test_transport_solver_failure_is_named(monkeypatch):
    class Failed:
        success, message = False, "step size too small"
    monkeypatch.setattr(rg.scipy.integrate, "solve_ivp", lambda *a, **k: Failed())
    with pytest.raises(ValueError, match=r"^parallel_transport: the ODE solver failed on the "
                                         r"segment U \+ s xi, 0 <= s <= t \(\|t xi\| / \|U\| = "
                                         r"2\): step size too small; give a shorter xi or t"):
        rg._transport(np.eye(2), 2 * np.eye(2), np.eye(2), 1.0, 1e-13, 1e-15)
