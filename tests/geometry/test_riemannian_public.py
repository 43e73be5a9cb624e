"""Public curvature functions of ``quadnet.geometry.riemannian`` at every scale and field.

Independent routes: the Bures–Wasserstein closed form (Takatsu 2011) against O'Neill's factor
route (``sectional_curvature`` at ``U`` with ``Sigma = U U^T``, ``X = xi U^T + U xi^T``); the
scale laws ``K(c Sigma) = K(Sigma) / c``, ``K(c U) = K(U) / c^2`` and the invariance under
``X -> a X``; unitary invariance of the Hermitian case; the holonomy of a small loop
against ``K * area`` (the Ambrose–Singer / Gauss–Bonnet first order).
"""

from __future__ import annotations

import numpy as np
import pytest

from quadnet.geometry.riemannian import (
    bures_wasserstein_sectional_curvature,
    distance_expansion_curvature,
    holonomy,
    sectional_curvature,
)

from _geometry_reference import horizontal_projection


def _plane(d, r, seed):
    rng = np.random.default_rng(seed)
    U = rng.standard_normal((d, r)) + 2.0 * np.eye(d, r)
    xi = horizontal_projection(U, rng.standard_normal((d, r)))
    eta = horizontal_projection(U, rng.standard_normal((d, r)))
    return U, xi, eta


# --------------------------------------------------------- Bures–Wasserstein closed form

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bures_wasserstein_closed_form_equals_the_factor_route(seed):
    U, xi, eta = _plane(3, 3, seed)
    Sigma = U @ U.T
    X, Y = xi @ U.T + U @ xi.T, eta @ U.T + U @ eta.T
    want = sectional_curvature(U, xi, eta)
    got = bures_wasserstein_sectional_curvature(Sigma, X, Y)
    assert got == pytest.approx(want, rel=1e-9)
    # the same values as complex (Hermitian) arrays: the complex branch gives the same K
    cx = bures_wasserstein_sectional_curvature(Sigma.astype(complex), X.astype(complex),
                                               Y.astype(complex))
    assert cx == pytest.approx(want, rel=1e-9)
    # scale laws: K(c Sigma) = K / c, K(a X, b Y) = K
    for c in (1e-200, 3.7, 1e200):
        assert bures_wasserstein_sectional_curvature(c * Sigma, X, Y) == pytest.approx(
            want / c, rel=1e-9)
    assert bures_wasserstein_sectional_curvature(Sigma, 1e-300 * X, 1e250 * Y) == pytest.approx(
        want, rel=1e-9)


def test_bures_wasserstein_hermitian_case_is_unitarily_invariant():
    rng = np.random.default_rng(5)
    n = 3
    A = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    Sigma = A @ A.conj().T + np.eye(n)
    X = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    Y = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    X, Y = X + X.conj().T, Y + Y.conj().T
    W, _ = np.linalg.qr(rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)))
    k = bures_wasserstein_sectional_curvature(Sigma, X, Y)
    kw = bures_wasserstein_sectional_curvature(W @ Sigma @ W.conj().T, W @ X @ W.conj().T,
                                               W @ Y @ W.conj().T)
    assert k > 0.0 and kw == pytest.approx(k, rel=1e-9)
    assert bures_wasserstein_sectional_curvature(Sigma, 2.0 * X, -3.0 * Y) == pytest.approx(
        k, rel=1e-9)
    assert bures_wasserstein_sectional_curvature(1e-150 * Sigma, X, Y) == pytest.approx(
        k * 1e150, rel=1e-9)


def test_bures_wasserstein_refusals_name_the_cause():
    X = np.array([[0.0, 1.0], [1.0, 0.0]])
    Y = np.diag([1.0, 0.0])
    with pytest.raises(ValueError, match="^bures_wasserstein_sectional_curvature: Sigma must be "
                                         "symmetric positive definite$"):
        bures_wasserstein_sectional_curvature(np.diag([1.0, 0.0]), X, Y)
    with pytest.raises(ValueError, match="^bures_wasserstein_sectional_curvature: Sigma must be "
                                         "symmetric positive definite$"):
        bures_wasserstein_sectional_curvature(np.zeros((2, 2)), X, Y)
    S = np.diag([1.0, 4.0])
    with pytest.raises(ValueError, match="^bures_wasserstein_sectional_curvature: X is zero: "
                                         "the sectional curvature is undefined$"):
        bures_wasserstein_sectional_curvature(S, np.zeros((2, 2)), Y)
    with pytest.raises(ValueError, match="^bures_wasserstein_sectional_curvature: Y is zero: "
                                         "the sectional curvature is undefined$"):
        bures_wasserstein_sectional_curvature(S, X, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="^bures_wasserstein_sectional_curvature: X and Y are parallel: the sectional curvature is "
                                         "undefined$"):
        bures_wasserstein_sectional_curvature(S, X, -2.0 * X)
    assert bures_wasserstein_sectional_curvature(S, X, Y) == pytest.approx(0.48, rel=1e-12)


# ----------------------------------------------------------- distance expansion, far scales

@pytest.mark.parametrize("c", [2.0 ** -400, 1e-120, 1e130, 2.0 ** 350])
def test_distance_expansion_follows_the_scale_law(c):
    U, xi, eta = _plane(4, 2, 7)
    want = sectional_curvature(U, xi, eta)
    assert distance_expansion_curvature(U, xi, eta) == pytest.approx(want, rel=1e-4)
    assert distance_expansion_curvature(c * U, xi, eta) == pytest.approx(want / c ** 2,
                                                                         rel=1e-4)
    hs = (0.1, 0.05, 0.025)
    ref = distance_expansion_curvature(U, xi, eta, scales=hs)
    got = distance_expansion_curvature(c * U, xi, eta, scales=[c * h for h in hs])
    assert got == pytest.approx(ref / c ** 2, rel=1e-6)


def test_distance_expansion_refuses_a_curvature_outside_float64():
    U, xi, eta = _plane(4, 2, 8)
    with pytest.raises(ValueError, match=r"U has entries up to .*e-200: its sectional curvature "
                                         r"\(.* x 2\^\d+\) is outside the float64 range; "
                                         r"rescale U \(K\(c U\) = K\(U\) / c\^2\)"):
        distance_expansion_curvature(1e-200 * U, xi, eta)


def test_distance_expansion_refuses_vertical_and_parallel_directions():
    U, xi, eta = _plane(4, 2, 9)
    vertical = U @ np.array([[0.0, 1.0], [-1.0, 0.0]])
    with pytest.raises(ValueError, match="xi is not horizontal at U"):
        distance_expansion_curvature(U, xi + vertical, eta)
    with pytest.raises(ValueError, match="xi and eta are parallel"):
        distance_expansion_curvature(U, xi, 3.0 * xi)


# ----------------------------------------------------------------------------- holonomy

def test_holonomy_angle_is_curvature_times_area_and_scale_free_in_the_directions():
    U = np.array([[1.0, 0.0], [0.0, 1.5], [0.0, 0.0]])
    xi = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
    eta = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 1.0]])
    h = holonomy(U, xi, eta, 1e-2)
    assert set(h) >= {"angle", "area", "K", "K_centre", "norm_drift", "transported"}
    assert h["area"] == pytest.approx(1e-4, rel=1e-15)
    assert h["K"] == pytest.approx(sectional_curvature(U, xi, eta), rel=1e-12)
    assert h["angle"] / (h["K_centre"] * h["area"]) == pytest.approx(1.0, abs=1e-3)
    V = h["transported"]
    assert V.shape == U.shape
    assert h["norm_drift"] == pytest.approx(abs(np.linalg.norm(V) - 1.0), abs=1e-15)
    assert h["norm_drift"] < 1e-9
    # horizontal at U (U^T V symmetric) and the same loop for rescaled directions
    np.testing.assert_allclose(U.T @ V, (U.T @ V).T, atol=1e-9)
    h2 = holonomy(U, 1e-3 * xi, 1e5 * eta, 1e-2)
    assert h2["angle"] == pytest.approx(h["angle"], rel=1e-9)
    np.testing.assert_allclose(h2["transported"], V, atol=1e-12)
    with pytest.raises(ValueError, match="eta is not horizontal at U"):
        holonomy(U, xi, eta + U @ np.array([[0.0, 1.0], [-1.0, 0.0]]), 1e-2)


# ------------------------------------------------ Ricci, scalar, bounds, transport arguments

from quadnet.geometry.riemannian import (  # noqa: E402
    curvature_bounds,
    parallel_transport,
    ricci_curvature,
    scalar_curvature,
)

VERT = np.array([[0.0, 1.0], [-1.0, 0.0]])


def test_ricci_form_is_bilinear_and_its_arguments_are_named():
    U, xi, eta = _plane(4, 2, 11)
    r_xx, r_ee, r_xe = (ricci_curvature(U, xi), ricci_curvature(U, eta),
                        ricci_curvature(U, xi, eta))
    # polarisation: Ric(xi, eta) = (Ric(xi + eta) - Ric(xi - eta)) / 4
    assert r_xe == pytest.approx((ricci_curvature(U, xi + eta) - ricci_curvature(U, xi - eta))
                                 / 4.0, rel=1e-9, abs=1e-12)
    assert r_xe == pytest.approx(ricci_curvature(U, eta, xi), rel=1e-12)
    assert abs(r_xe) ** 2 <= r_xx * r_ee * (1 + 1e-12)
    assert abs(r_xe - r_xx) > 1e-6 * abs(r_xx)
    # project=True uses the horizontal part, project=False names the direction
    assert ricci_curvature(U, xi + U @ VERT, project=True) == pytest.approx(r_xx, rel=1e-12)
    assert ricci_curvature(U, xi, eta + U @ VERT, project=True) == pytest.approx(r_xe,
                                                                                 rel=1e-12)
    with pytest.raises(ValueError, match=r"^ricci_curvature: xi is not horizontal at U: "
                                         r"\|\|P_v\(xi\)\|\|"):
        ricci_curvature(U, xi + U @ VERT)
    with pytest.raises(ValueError, match=r"^ricci_curvature: eta is not horizontal at U: "
                                         r"\|\|P_v\(eta\)\|\|"):
        ricci_curvature(U, xi, eta + U @ VERT)
    with pytest.raises(ValueError, match="^ricci_curvature: eta given without xi$"):
        ricci_curvature(U, eta=eta)


def test_complex_ricci_and_scalar_curvature_agree_and_promote_real_arguments():
    rng = np.random.default_rng(12)
    Uc = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    R = ricci_curvature(Uc)
    assert np.trace(R) == pytest.approx(scalar_curvature(Uc), rel=1e-10)
    # r = 1 on the Hermitian quotient is curved: scal = 6 (d - 1) / lambda_1
    assert scalar_curvature(np.array([[2.0], [0.0], [0.0]], dtype=complex)) == pytest.approx(
        3.0, rel=1e-14)
    assert scalar_curvature(np.array([[2.0], [0.0], [0.0]])) == 0.0
    # a real factor with a complex direction is a point of the complex quotient
    U = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    xi = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1j]])
    assert ricci_curvature(U, xi) == pytest.approx(ricci_curvature(U.astype(complex), xi),
                                                   rel=1e-12)
    assert ricci_curvature(U, xi) != pytest.approx(ricci_curvature(U, xi.real), rel=1e-6)


def test_sectional_curvature_is_scale_free_in_the_directions():
    U, xi, eta = _plane(4, 2, 13)
    k = sectional_curvature(U, xi, eta)
    assert sectional_curvature(U, 1e-3 * xi, 1e4 * eta) == pytest.approx(k, rel=1e-10)
    assert sectional_curvature(U, 1e5 * xi, 1e-4 * eta) == pytest.approx(k, rel=1e-10)


@pytest.mark.parametrize("d, r", [(4, 2), (3, 3), (5, 3), (4, 1)])
def test_curvature_bounds_fields(d, r):
    U, _, _ = _plane(d, r, 14)
    b = curvature_bounds(U)
    sig = np.linalg.svd(U, compute_uv=False)
    np.testing.assert_allclose(b.sigma, sig, rtol=1e-13)
    assert b.sectional_min == 0.0 and isinstance(b.sectional_min, float)
    assert b.scalar == pytest.approx(scalar_curvature(U), rel=1e-12, abs=1e-300)
    assert b.ricci_attained is (d > r)
    if r == 1:
        assert (b.sectional_max, b.ricci_max, b.extremal_plane) == (0.0, 0.0, None)
        return
    lam = sig ** 2
    assert b.sectional_max == pytest.approx(3.0 / (lam[-2] + lam[-1]), rel=1e-13)
    assert b.ricci_max == pytest.approx(3.0 * np.sum(1.0 / (lam[:-1] + lam[-1])), rel=1e-13)
    p, q = b.extremal_plane
    assert np.linalg.norm(p) == pytest.approx(1.0, rel=1e-12)
    assert np.linalg.norm(q) == pytest.approx(1.0, rel=1e-12)
    assert abs(np.sum(p * q)) < 1e-12
    assert sectional_curvature(U, p, q) == pytest.approx(b.sectional_max, rel=1e-10)


def test_parallel_transport_arguments():
    U = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    xi = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
    v = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 1.0]])
    V = parallel_transport(U, xi, v, 1.0)
    assert parallel_transport(U, xi + U @ VERT, v, 1.0, project=True) == pytest.approx(V)
    assert parallel_transport(U, xi, v + U @ VERT, 1.0, project=True) == pytest.approx(V)
    with pytest.raises(ValueError, match=r"^parallel_transport: xi is not horizontal at U"):
        parallel_transport(U, xi + U @ VERT, v, 1.0)
    with pytest.raises(ValueError, match=r"^parallel_transport: v is not horizontal at U"):
        parallel_transport(U, xi, v + U @ VERT, 1.0)
    zero = parallel_transport(U, xi, np.zeros((3, 2)), 1.0)
    assert zero.shape == (3, 2) and not zero.any()
    # a tiny v is transported with a tolerance relative to its own size
    small = parallel_transport(U, xi, 1e-150 * v, 1.0)
    np.testing.assert_allclose(small, 1e-150 * V, rtol=1e-8)


def test_parallel_transport_is_linear_down_to_tiny_vectors():
    """Transport is linear in v: 1e-200 v and 1e200 v go to 1e-+200 V (the solver's
    tolerance is relative, so the same rtol holds)."""
    U = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    xi = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
    v = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 1.0]])
    V = parallel_transport(U, xi, v, 1.0)
    np.testing.assert_allclose(parallel_transport(U, xi, 1e-200 * v, 1.0), 1e-200 * V,
                               rtol=1e-8)
    np.testing.assert_allclose(parallel_transport(U, xi, 1e200 * v, 1.0), 1e200 * V,
                               rtol=1e-8)
