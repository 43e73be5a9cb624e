"""Public callables of ``quadnet.sensing.gaussian`` (quadnet theory §4) against references.

Independent references: the documented draw order of ``GaussianSensing.random`` (``U*``,
then ``X``, then the noise, from one generator) replayed here; ``T^{-1}(M)`` of the spectral
initialiser written out densely (``T(H) = 2 H + tr(H) I``, so
``T^{-1}(M) = (M - tr(M) I / (d + 2)) / 2``) for designs whose measurements ``y_i = x_i^T A x_i``
have a known population limit ``A``; numpy's norms for the relative error at far scales;
the float64 Hessian-vector product for the float32 one.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from quadnet.exceptions import SpectralInitWarning
from quadnet.sensing.gaussian import GaussianSensing, relative_error, spectral_init
from quadnet.sensing.population import PopulationInverse


# ----------------------------------------------------------------------------- relative_error

@pytest.mark.parametrize("scale", [1e-200, 1.0, 1e200])
def test_relative_error_complex_and_mixed_at_far_scales(scale):
    rng = np.random.default_rng(0)
    Qs = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    Q = Qs + 0.1 * (rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)))
    want = np.linalg.norm(Q - Qs) / np.linalg.norm(Qs)
    assert relative_error(scale * Q, scale * Qs) == pytest.approx(want, rel=1e-12)
    # a complex Q against a real Q_star (and the reverse) uses the complex route
    R = Qs.real
    want_mixed = np.linalg.norm(Q - R) / np.linalg.norm(R)
    assert relative_error(scale * Q, scale * R) == pytest.approx(want_mixed, rel=1e-12)
    assert relative_error(scale * R, scale * Q) == pytest.approx(
        np.linalg.norm(R - Q) / np.linalg.norm(Q), rel=1e-12)
    assert relative_error(scale * R, scale * R) == 0.0


def test_relative_error_refuses_a_zero_reference():
    with pytest.raises(ValueError, match="Q_star"):
        relative_error(np.ones((2, 2)), np.zeros((2, 2)))


# ----------------------------------------------------------------------- the problem records

def test_constructor_stores_float_arrays_and_no_planted_truth():
    X = np.arange(12.0).reshape(4, 3)
    p = GaussianSensing(X, [1.0, 2.0, 3.0, 4.0])
    assert p.X.dtype == np.float64 and p.y.dtype == np.float64
    assert p.X.flags["C_CONTIGUOUS"] and p.y.shape == (4,)
    assert p.U_star is None and p.Q_star is None
    assert p.noise == 0.0 and isinstance(p.noise, float)


@pytest.mark.parametrize("noise", [0.0, 0.5])
def test_random_follows_its_documented_draw_order(noise):
    d, r, m, seed = 7, 2, 300, 11
    p = GaussianSensing.random(d, r, m, seed=seed, noise=noise)
    rng = np.random.default_rng(seed)
    U = rng.standard_normal((d, r)) / np.sqrt(d)
    X = rng.standard_normal((m, d))
    y = np.sum((X @ U) ** 2, axis=1)
    if noise > 0:
        y = y + noise * rng.standard_normal(m)
    np.testing.assert_array_equal(p.U_star, U)
    np.testing.assert_array_equal(p.X, X)
    np.testing.assert_allclose(p.y, y, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(p.Q_star, U @ U.T, rtol=1e-14)
    assert p.noise == noise


# --------------------------------------------------------------------------- spectral start

def _design(A, m=4000, seed=3):
    X = np.random.default_rng(seed).standard_normal((m, A.shape[0]))
    y = np.einsum("ij,jk,ik->i", X, A, X)
    return GaussianSensing(X, y)


def _t_inverse_moment(p):
    d = p.d
    M = (p.X.T * p.y) @ p.X / p.m
    return (M - np.trace(M) / (d + 2) * np.eye(d)) / 2.0


def test_spectral_init_pads_or_refuses_a_deficient_moment_matrix():
    d = 5
    A = np.diag([0.8, -0.5, -0.5, -0.5, -0.5])      # one positive eigenvalue, below 1
    p = _design(A)
    lam = np.sort(np.linalg.eigvalsh(_t_inverse_moment(p)))[::-1]
    assert lam[0] > 0 > lam[1]
    msg = (r"spectral initialiser: T\^-1\(M\) has only 1 positive eigenvalue\(s\) among its "
           r"top r = 2; the measurements do not determine a rank-2 start")
    with pytest.raises(ValueError, match=r"^GaussianSensing\.spectral_init: " + msg + r" \(pass strict=False to pad\)$"):
        p.spectral_init(2)
    with pytest.raises(ValueError, match=r"\(pass strict=False to pad\)$"):
        spectral_init(p, 2)
    for call in (lambda: p.spectral_init(2, strict=False),
                 lambda: spectral_init(p, 2, strict=False)):
        with pytest.warns(SpectralInitWarning, match="^" + msg + r"; padding with 1e-6 \* "
                                                                 r"lambda_max$"):
            U = call()
        assert U.shape == (d, 2)
        np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(U.T @ U))[::-1],
                                   [lam[0], 1e-6 * lam[0]], rtol=1e-8)
    # no positive eigenvalue: refused whatever strict says, with no hint to pad
    q = _design(-np.eye(d))
    for strict in (True, False):
        with pytest.raises(ValueError, match=r"has only 0 positive eigenvalue\(s\) among its "
                                             r"top r = 1; the measurements do not determine "
                                             r"a rank-1 start$"):
            q.spectral_init(1, strict=strict)


@pytest.mark.parametrize("r", [1, 3, 4, 5])
def test_spectral_init_methods_agree_up_to_r_equal_d(r):
    A = np.diag([3.0, 2.5, 2.0, 1.5, 1.0])
    p = _design(A)
    ref = _t_inverse_moment(p)
    lam, V = np.linalg.eigh(ref)
    want = (V[:, -r:] * lam[-r:]) @ V[:, -r:].T       # the top-r part of T^-1(M)
    for method in ("auto", "dense", "lanczos"):
        U = p.spectral_init(r, method=method)
        np.testing.assert_allclose(U @ U.T, want, atol=1e-8)
        U2 = spectral_init(p, r, method=method)
        np.testing.assert_allclose(U2 @ U2.T, want, atol=1e-8)


def test_spectral_init_refuses_optimal_preprocessing_on_a_real_design():
    p = _design(np.diag([3.0, 2.0, 1.0]))
    with pytest.raises(ValueError, match="preprocessing"):
        p.spectral_init(1, preprocessing="optimal")


# ------------------------------------------------------------------ float32 and preconditioner

def test_single_precision_products_and_the_default_preconditioner():
    p = GaussianSensing.random(12, 2, 400, seed=5)
    rng = np.random.default_rng(6)
    U = p.U_star + 0.05 * rng.standard_normal((12, 2))
    xi = rng.standard_normal((12, 2))
    h64 = p.hvp_at(U)(xi)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        h32 = p.single_precision_hvp_at(U)(xi)
        stack = p.single_precision_hvp_at(U)(np.stack([xi, 2.0 * xi]))
    assert h32.dtype == np.float64 and h32.shape == (12, 2)
    assert np.linalg.norm(h32 - h64) <= 1e-5 * np.linalg.norm(h64)
    # the products really are float32 ones: they differ from float64 by float32 roundings
    assert np.linalg.norm(h32 - h64) > 1e-10 * np.linalg.norm(h64)
    np.testing.assert_allclose(stack[1], 2.0 * stack[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(stack[0], h64, rtol=1e-4, atol=1e-5 * np.abs(h64).max())
    P = p.default_preconditioner(U)
    assert isinstance(P, PopulationInverse)
    np.testing.assert_allclose(P(xi), PopulationInverse(U)(xi), rtol=1e-14)
