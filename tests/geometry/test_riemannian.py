"""Curvature and parallel transport of M_r^+ (quadnet.geometry.riemannian), each against an
independent route. Tolerances: rounding-level identities at 1e-10..1e-12 (Lyapunov solves
amplify by at most kappa(U)^2, ~1e2 here); the distance expansion at 1e-4 relative (its
truncation is ~1e-7 with the default scales); ODE invariants at 1e-10 (DOP853, rtol 1e-13)."""

from __future__ import annotations

import numpy as np
import pytest

from quadnet.geometry.manifold import PSDQuotient, lyapunov_skew
from quadnet.geometry.riemannian import (
    bures_wasserstein_sectional_curvature,
    curvature_bounds,
    distance_expansion_curvature,
    holonomy,
    parallel_transport,
    ricci_curvature,
    scalar_curvature,
    sectional_curvature,
)

RNG = np.random.default_rng(20261201)


def _case(d, r, rng):
    M = PSDQuotient(d, r)
    # singular values in [0.3, 2] (random singular vectors): the distance-expansion route needs
    # steps h << sigma_min(U), and its rounding grows as sigma_min -> 0
    P = np.linalg.qr(rng.standard_normal((d, r)))[0]
    E = np.linalg.qr(rng.standard_normal((r, r)))[0]
    U = (P * rng.uniform(0.3, 2.0, r)) @ E.T
    return M, U, M.random_tangent_vector(U, rng), M.random_tangent_vector(U, rng)


# r = 1..5, square (r = d, the SPD closed form applies) and tall; M_1^+ in d = 1 has no plane
CASES = [(d, r) for r in range(1, 6) for d in ((2, 3, 4) if r == 1 else (r, r + 1, r + 3))] + \
    [(6, 2), (7, 3), (8, 4), (5, 5), (6, 5)]


@pytest.mark.parametrize("d,r", CASES)
def test_three_routes(d, r):
    assert len(CASES) >= 20
    rng = np.random.default_rng([d, r])
    M, U, xi, eta = _case(d, r, rng)
    K = sectional_curvature(U, xi, eta)
    if r == 1:
        assert K == 0.0                                   # Omega is 1 x 1 skew: exactly 0
        assert abs(distance_expansion_curvature(U, xi, eta)) < 1e-6
        return
    assert K > 0
    Ke = distance_expansion_curvature(U, xi, eta)
    assert abs(Ke / K - 1) <= 1e-4
    if r == d:
        X, Y = M.differential(U, xi), M.differential(U, eta)
        Kc = bures_wasserstein_sectional_curvature(U @ U.T, X, Y)
        assert abs(Kc / K - 1) <= 1e-10


def test_invariances():
    M, U, xi, eta = _case(5, 3, RNG)
    K = sectional_curvature(U, xi, eta)
    from quadnet._linalg import random_orthogonal
    R = random_orthogonal(3, RNG)
    assert abs(sectional_curvature(U @ R, xi @ R, eta @ R) / K - 1) < 1e-12
    # a plane, not a pair: any basis of span(xi, eta) gives the same K
    assert abs(sectional_curvature(U, 2 * xi + eta, xi - 3 * eta) / K - 1) < 1e-12
    # scaling: M_r^+ is a cone, K(cU) = K(U) / c^2
    assert abs(sectional_curvature(2 * U, xi, eta) * 4 / K - 1) < 1e-12


def test_ricci_and_scalar_routes():
    for d, r in [(3, 2), (4, 3), (4, 4), (6, 3)]:
        M, U, _, _ = _case(d, r, RNG)
        Ric = ricci_curvature(U)
        B = M.horizontal_basis(U).T.reshape(-1, d, r)
        n = len(B)
        # route 1: Ric_jk = 3 sum_i <U Omega(e_j, e_i), U Omega(e_k, e_i)> (O'Neill A-tensor)
        UO = np.array([[U @ lyapunov_skew(U, B[j].T @ B[i] - B[i].T @ B[j]) for i in range(n)]
                       for j in range(n)])
        R1 = 3 * np.einsum("jidr,kidr->jk", UO, UO)
        assert np.max(np.abs(Ric - R1)) <= 1e-12 * np.max(np.abs(R1))
        # scalar: closed form = trace = sum_{i != j} K(e_i, e_j)
        pair_sum = sum(sectional_curvature(U, B[i], B[j]) for i in range(n) for j in range(n)
                       if i != j)
        s = scalar_curvature(U)
        assert abs(np.trace(Ric) / s - 1) < 1e-12
        assert abs(pair_sum / s - 1) < 1e-12
        # Ric(xi, xi) = sum_i K(xi, e_i)|xi ^ e_i|^2 on a random direction
        xi = M.random_tangent_vector(U, RNG)
        direct = sum(3 * np.sum((U @ lyapunov_skew(U, xi.T @ e - e.T @ xi)) ** 2) for e in B)
        assert abs(ricci_curvature(U, xi) / direct - 1) < 1e-12


@pytest.mark.parametrize("d,r", [(4, 2), (5, 3), (3, 3), (6, 4)])
def test_bounds(d, r):
    M, U, _, _ = _case(d, r, RNG)
    b = curvature_bounds(U)
    Ks = [sectional_curvature(U, M.random_tangent_vector(U, RNG), M.random_tangent_vector(U, RNG))
          for _ in range(100)]
    assert 0 <= min(Ks) and max(Ks) <= b.sectional_max * (1 + 1e-12)
    lam_ric = np.linalg.eigvalsh(ricci_curvature(U))
    assert lam_ric[0] > -1e-12 and lam_ric[-1] <= b.ricci_max * (1 + 1e-12)
    # radial direction xi = U is flat: K(U, eta) = 0, Ric(U, U) = 0
    assert sectional_curvature(U, U, M.random_tangent_vector(U, RNG)) < 1e-14
    # the sectional bound is attained for every d >= r (the extremal plane of curvature_bounds)
    xi0, eta0 = b.extremal_plane
    assert np.linalg.norm(U.T @ xi0 - xi0.T @ U) < 1e-12 and abs(np.sum(xi0 * eta0)) < 1e-14
    assert abs(sectional_curvature(U, xi0, eta0) / b.sectional_max - 1) < 1e-12
    assert b.ricci_attained == (d > r)
    if d > r:  # the Ricci bound is attained too
        _, E = np.linalg.eigh(U.T @ U)               # increasing: E[:, 0] <-> sigma_r
        x = np.linalg.svd(U, full_matrices=True)[0][:, r]   # orthogonal to range(U)
        xi, eta = np.outer(x, E[:, 0]), np.outer(x, E[:, 1])
        assert abs(sectional_curvature(U, xi, eta) / b.sectional_max - 1) < 1e-12
        assert abs(lam_ric[-1] / b.ricci_max - 1) < 1e-12
        assert abs(ricci_curvature(U, xi) / b.ricci_max - 1) < 1e-12


def test_bound_behaviour_at_the_boundary():
    # sigma_r -> 0 alone: the sectional bound tends to 3 / sigma_{r-1}^2 (finite);
    # sigma_{r-1}, sigma_r -> 0 together: it grows like 3 / (sigma_{r-1}^2 + sigma_r^2)
    P = np.linalg.qr(RNG.standard_normal((5, 3)))[0]
    one = [curvature_bounds(P * [1.0, 0.5, s]).sectional_max for s in (1e-1, 1e-2, 1e-3)]
    assert abs(one[-1] / (3 / 0.25) - 1) < 1e-5
    two = [curvature_bounds(P * [1.0, s, s]).sectional_max for s in (1e-1, 1e-2)]
    assert abs(two[1] / two[0] - 100) < 1e-9


def test_r1_exactly_flat():
    M, U, xi, eta = _case(4, 1, RNG)
    assert sectional_curvature(U, xi, eta) == 0.0
    assert scalar_curvature(U) == 0.0 and ricci_curvature(U, xi) == 0.0
    assert np.all(ricci_curvature(U) == 0.0)


def test_parallel_transport_invariants():
    for d, r in [(4, 2), (5, 3), (3, 3)]:
        M, U, xi, _ = _case(d, r, RNG)
        v1, v2 = M.random_tangent_vector(U, RNG), M.random_tangent_vector(U, RNG)
        t = 0.9 * np.linalg.svd(U, compute_uv=False)[-1]   # U + s xi stays full rank
        V1, V2 = parallel_transport(U, xi, v1, t), parallel_transport(U, xi, v2, t)
        W = U + t * xi
        assert abs(np.linalg.norm(V1) - 1) <= 1e-10
        assert abs(np.sum(V1 * V2) - np.sum(v1 * v2)) <= 1e-10
        assert np.linalg.norm(W.T @ V1 - V1.T @ W) <= 1e-12 * np.linalg.norm(W)
        assert np.linalg.norm(parallel_transport(U, xi, xi, t) - xi) <= 1e-14
        # transport is linear and composes along the geodesic
        V12 = parallel_transport(U, xi, 2 * v1 - v2, t)
        assert np.linalg.norm(V12 - (2 * V1 - V2)) <= 1e-10
        Vh = parallel_transport(U + 0.4 * t * xi, xi, parallel_transport(U, xi, v1, 0.4 * t),
                                0.6 * t)
        assert np.linalg.norm(Vh - V1) <= 1e-10
        back = parallel_transport(W, -xi, V1, t)
        assert np.linalg.norm(back - v1) <= 1e-10


def test_projection_transport_is_second_order():
    M, U, xi, _ = _case(5, 3, RNG)
    v = M.random_tangent_vector(U, RNG)
    ts = np.array([0.08, 0.04, 0.02, 0.01])
    diff = [np.linalg.norm(parallel_transport(U, xi, v, t) - M.transport(U, U + t * xi, v))
            for t in ts]
    slope = np.polyfit(np.log(ts), np.log(diff), 1)[0]
    assert 1.9 < slope < 2.1


def test_holonomy_rate():
    M, U, xi, eta = _case(4, 2, RNG)
    eps = np.array([2e-2, 1e-2, 5e-3])
    hs = [holonomy(U, xi, eta, e) for e in eps]
    err_c = [abs(h["angle"] / (h["K_centre"] * h["area"]) - 1) for h in hs]
    err_0 = [abs(h["angle"] / (h["K"] * h["area"]) - 1) for h in hs]
    assert max(h["norm_drift"] for h in hs) <= 1e-10
    assert err_c[-1] < 1e-4 and err_0[-1] < 0.05
    assert 1.8 < np.polyfit(np.log(eps), np.log(err_c), 1)[0] < 2.2
    assert 0.8 < np.polyfit(np.log(eps), np.log(err_0), 1)[0] < 1.2


def test_bad_input():
    M, U, xi, eta = _case(4, 2, RNG)
    Z = xi + U @ np.array([[0.0, 1.0], [-1.0, 0.0]])   # a vertical part
    with pytest.raises(ValueError, match="not horizontal"):
        sectional_curvature(U, Z, eta)
    assert sectional_curvature(U, Z, eta, project=True) == pytest.approx(
        sectional_curvature(U, M.horizontal_projection(U, Z), eta), rel=1e-12)
    with pytest.raises(ValueError, match="parallel"):
        sectional_curvature(U, xi, -2.5 * xi)
    with pytest.raises(ValueError, match="nonzero"):
        sectional_curvature(U, np.zeros_like(xi), eta)
    with pytest.raises(ValueError, match="rank deficient"):
        sectional_curvature(np.zeros((4, 2)), xi, eta)
    with pytest.raises(ValueError, match="shape"):
        sectional_curvature(U, xi[:3], eta)
    with pytest.raises(ValueError, match="not horizontal"):
        parallel_transport(U, xi, Z)
    with pytest.raises(ValueError, match="full-rank"):
        parallel_transport(U, -U, xi, 2.0)             # U + s(-U) = 0 at s = 1
    with pytest.raises(ValueError, match="finite"):
        parallel_transport(U, xi, eta, np.inf)
    with pytest.raises(ValueError, match="parallel"):
        bures_wasserstein_sectional_curvature(np.eye(2), np.eye(2), 2 * np.eye(2))


def test_geometry_check_quick_mode_passes():
    from quadnet.harness.checks import CheckContext, run_check

    res = run_check("geometry", CheckContext(quick=True))
    failed = [(r.claim, r.measured, r.tolerance) for r in res.rows if not r.passed]
    assert res.passed, failed
    assert len(res.rows) >= 20 and set(res.figure_data) == {
        "geometry_curvature", "geometry_transport", "geometry_triangles", "geometry_barycentre"}


def test_transport_segment_certificate():
    # U + s xi loses rank exactly at s = 1: refused for t >= 1, fine before
    U = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    xi = np.array([[0.0, 0.0], [0.0, -1.0], [0.0, 0.0]])
    v = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
    assert np.allclose(parallel_transport(U, xi, v, 0.9), v, atol=1e-14)
    for t in (1.0, 1.5, 3.0):
        with pytest.raises(ValueError, match="full-rank"):
            parallel_transport(U, xi, v, t)
    # a segment that passes the boundary between coarse grid points is still caught
    with pytest.raises(ValueError, match="full-rank|rank boundary"):
        parallel_transport(U, xi, v, 1.0 + 1e-9)
