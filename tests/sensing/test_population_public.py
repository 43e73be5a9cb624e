"""The population effective Hessian of Gaussian sensing (quadnet theory §4), public functions.

Independent references: the quadratic form ``2 ||zeta||_F^2 + tr(zeta)^2`` with
``zeta = xi U^T + U xi^T`` written out here (its half-gradient is the operator), a horizontal
basis built here from the Lyapunov projection solved by Kronecker products
(tests/_geometry_reference.py), the closed-form spectrum of docs/curvature.md (``r = 1`` and
equal-``g`` cases by hand), and the inverse checked by applying the forward operator to it.
"""

from __future__ import annotations

import numpy as np
import pytest

from quadnet.sensing.population import (
    PopulationInverse,
    population_effective_hessian,
    population_effective_hvp,
    population_effective_inverse,
    population_effective_spectrum,
)

from _geometry_reference import horizontal_projection


def _factor(d, r, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    return scale * rng.standard_normal((d, r))


def _form(U, xi):
    zeta = xi @ U.T + U @ xi.T
    return 2.0 * np.sum(zeta * zeta) + np.trace(zeta) ** 2


def _operator(U, xi):
    zeta = xi @ U.T + U @ xi.T
    return 2.0 * (2.0 * zeta + np.trace(zeta) * np.eye(U.shape[0])) @ U


def _horizontal_basis(U):
    d, r = U.shape
    cols = [horizontal_projection(U, e.reshape(d, r)).ravel() for e in np.eye(d * r)]
    Q, s, _ = np.linalg.svd(np.array(cols).T, full_matrices=False)
    n_h = d * r - r * (r - 1) // 2
    return Q[:, :n_h]


@pytest.mark.parametrize("d, r", [(4, 1), (5, 2), (6, 3), (3, 3)])
def test_hvp_is_the_half_gradient_of_the_form(d, r):
    U = _factor(d, r, seed=d + r)
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, d, r))
    Ha = population_effective_hvp(U, a)
    np.testing.assert_allclose(Ha, _operator(U, a), rtol=1e-12, atol=1e-12)
    assert np.sum(a * Ha) == pytest.approx(_form(U, a), rel=1e-12)
    assert np.sum(b * Ha) == pytest.approx(np.sum(a * population_effective_hvp(U, b)),
                                           rel=1e-12)
    # a vertical direction U Omega (Omega skew) gives zeta = 0
    omega = rng.standard_normal((r, r))
    np.testing.assert_allclose(population_effective_hvp(U, U @ (omega - omega.T)), 0.0,
                               atol=1e-12)


@pytest.mark.parametrize("d, r", [(4, 1), (5, 2), (6, 3), (3, 3)])
def test_hessian_and_spectrum_against_a_basis_built_here(d, r):
    U = _factor(d, r, seed=10 + d + r)
    H = population_effective_hessian(U)
    n_h = d * r - r * (r - 1) // 2
    assert H.shape == (n_h, n_h)
    np.testing.assert_array_equal(H, H.T)
    B = _horizontal_basis(U)
    ref = B.T @ np.array([_operator(U, c.reshape(d, r)).ravel() for c in B.T]).T
    want = np.linalg.eigvalsh((ref + ref.T) / 2)
    scale = want[-1]
    np.testing.assert_allclose(np.linalg.eigvalsh(H), want, atol=1e-11 * scale)
    np.testing.assert_allclose(population_effective_spectrum(U), want, atol=1e-11 * scale)


def test_spectrum_closed_forms_and_groups():
    u = np.array([[1.0], [2.0], [2.0]])                 # ||u||^2 = 9
    np.testing.assert_allclose(population_effective_spectrum(u), [36.0, 36.0, 108.0])
    # equal g: U with orthogonal columns of norm 2 (g = 4)
    U = 2.0 * np.eye(5)[:, :3]
    got = population_effective_spectrum(U, grouped=True)
    assert set(got) == {"normal", "multiplicity_normal", "offdiagonal", "diagonal"}
    np.testing.assert_allclose(got["normal"], [16.0, 16.0, 16.0])
    assert got["multiplicity_normal"] == 2
    np.testing.assert_allclose(got["offdiagonal"], [32.0, 32.0, 32.0])
    np.testing.assert_allclose(got["diagonal"], [32.0, 32.0, (8 + 4 * 3) * 4.0])
    flat = population_effective_spectrum(U)
    np.testing.assert_allclose(flat, np.sort(np.concatenate(
        [np.repeat(got["normal"], 2), got["offdiagonal"], got["diagonal"]])))
    # distinct g: the groups against their formulas
    V = _factor(6, 3, seed=4)
    g = np.linalg.eigvalsh(V.T @ V)
    grp = population_effective_spectrum(V, grouped=True)
    np.testing.assert_allclose(grp["normal"], 4 * g, rtol=1e-13)
    np.testing.assert_allclose(grp["offdiagonal"], np.sort(4 * np.array(
        [g[0] + g[1], g[0] + g[2], g[1] + g[2]])), rtol=1e-13)
    w = np.sqrt(g)
    np.testing.assert_allclose(grp["diagonal"], np.linalg.eigvalsh(
        8 * np.diag(g) + 4 * np.outer(w, w)), rtol=1e-13)
    assert grp["multiplicity_normal"] == 3


@pytest.mark.parametrize("d, r, scale", [(4, 1, 1.0), (5, 2, 1.0), (6, 3, 1e-3), (4, 4, 1e3),
                                         (7, 3, 1.0)])
def test_inverse_inverts_the_operator_on_the_horizontal_space(d, r, scale):
    U = _factor(d, r, seed=20 + d, scale=scale)
    rng = np.random.default_rng(2)
    eta = rng.standard_normal((d, r))
    xi = population_effective_inverse(U, eta)
    Ph = horizontal_projection(U, eta)
    np.testing.assert_allclose(_operator(U, xi), Ph, rtol=1e-9,
                               atol=1e-10 * np.abs(Ph).max())
    np.testing.assert_allclose(horizontal_projection(U, xi), xi, rtol=1e-9,
                               atol=1e-10 * np.abs(xi).max())
    inv = PopulationInverse(U)
    np.testing.assert_allclose(inv(eta), xi, rtol=1e-13, atol=1e-14 * np.abs(xi).max())
    assert (inv.d, inv.r) == (d, r)
    np.testing.assert_allclose(inv.g, np.linalg.svd(U, compute_uv=False) ** 2, rtol=1e-13)


def test_inverse_refuses_a_mismatched_direction():
    inv = PopulationInverse(_factor(4, 2))
    with pytest.raises(ValueError, match="Z"):
        inv(np.ones((4, 3)))


def test_inverse_refuses_a_factor_whose_squares_leave_float64():
    # singular values 1e158..1e160: g = s^2 overflows; the message gives the singular range
    W, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((5, 3)))
    U = W * np.array([1e160, 1e159, 1e158])
    with pytest.raises(ValueError, match=r"^PopulationInverse: U has singular values in \[1e\+158, 1e\+160\]: "
                                         r"their squares .* leave the float64 range; rescale U$"):
        PopulationInverse(U)
    with pytest.raises(ValueError, match=r"U has singular values in \[1e\+158, 1e\+160\]"):
        population_effective_inverse(U, np.ones((5, 3)))
