"""Targeted tests of three geometry kernels at their edges (quadnet.geometry._kernels):
``fro_norm`` on both of its routes and at every scale, ``procrustes`` (single and batched,
rescaled), and the rescaled SVD frame of ill-conditioned factors far from unit scale. The
references are independent: ``math.fsum`` on exactly rescaled entries, the nuclear-norm identity
of the Procrustes problem, and numpy's SVD of the unscaled factor."""

from __future__ import annotations

import math

import numpy as np
import pytest

import quadnet.geometry._kernels as K


def _ref_norm(a: np.ndarray) -> float:
    """||a||_F by exact power-of-two rescaling and a correctly rounded sum of squares."""
    v = np.asarray(a, dtype=np.float64).ravel()
    if v.size == 0 or not np.any(v):
        return 0.0
    e = math.frexp(float(np.abs(v).max()))[1]
    w = np.ldexp(v, -e)                       # exact: scaling by a power of two
    return math.ldexp(math.sqrt(math.fsum((w * w).tolist())), e)


@pytest.mark.parametrize("size", [1, 7, 4096, 4097, 30000])
@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1e-160, 1.0, 1e160, 1e200, 1e300])
def test_fro_norm_matches_a_correctly_rounded_reference_on_both_routes(size, scale):
    rng = np.random.default_rng(size)
    a = rng.standard_normal(size) * scale
    # both routes (dnrm2 up to 4,096 entries, numpy's norm rescaled above) to a few ulps
    assert K.fro_norm(a) == pytest.approx(_ref_norm(a), rel=4e-15)
    assert K.fro_norm(a.reshape(1, -1)) == K.fro_norm(a)   # shape does not matter


def test_fro_norm_of_float32_empty_zero_and_non_finite_input():
    x32 = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    assert K.fro_norm(x32) == pytest.approx(math.sqrt(sum(i * i for i in range(1, 13))), rel=1e-15)
    big32 = np.full(5000, 3e38, dtype=np.float32)       # squares overflow float32 and not float64
    # 5,000 equal squares summed by BLAS ddot: the worst-case relative error of a sum of n
    # positive terms is n u (u = eps/2), halved by the square root; how close a given ddot
    # kernel gets depends on its blocking (4.5e-15 measured on an AVX2 EPYC)
    assert K.fro_norm(big32) == pytest.approx(_ref_norm(big32), rel=big32.size * 2.3e-16 / 2)
    assert K.fro_norm(np.zeros((0, 3))) == 0.0
    assert K.fro_norm(np.zeros((50, 100))) == 0.0
    for n in (10, 5000):
        v = np.ones(n)
        v[3] = np.inf
        assert K.fro_norm(v) == math.inf
        v[3] = np.nan
        assert math.isnan(K.fro_norm(v))


def _orthogonal(r: int, rng) -> np.ndarray:
    Q, R = np.linalg.qr(rng.standard_normal((r, r)))
    return Q * np.sign(np.diag(R))


@pytest.mark.parametrize("su", [1e-200, 1e-120, 1.0, 1e120, 1e200])
@pytest.mark.parametrize("sv", [1e-200, 1.0, 1e200])
def test_procrustes_is_optimal_and_scale_invariant(su, sv):
    rng = np.random.default_rng(4)
    U, V = rng.standard_normal((6, 3)), rng.standard_normal((6, 3))
    R0 = K.procrustes(U, V)
    R = K.procrustes(U * su, V * sv)
    np.testing.assert_allclose(R, R0, atol=1e-12)            # invariant under positive scaling
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-13)
    # the nuclear-norm identity: min_R ||U R - V||^2 = ||U||^2 + ||V||^2 - 2 ||U^T V||_*
    best = np.sum(U**2) + np.sum(V**2) - 2 * np.linalg.svd(U.T @ V, compute_uv=False).sum()
    assert np.sum((U @ R0 - V) ** 2) == pytest.approx(best, rel=1e-12, abs=1e-12)
    for _ in range(20):                                       # no orthogonal matrix does better
        Q = _orthogonal(3, rng)
        assert np.sum((U @ R0 - V) ** 2) <= np.sum((U @ Q - V) ** 2) + 1e-12


def test_batched_procrustes_equals_the_single_one_slice_by_slice():
    rng = np.random.default_rng(5)
    scales = np.array([1e-200, 1e-100, 1.0, 1e100, 1e200])
    U = rng.standard_normal((5, 6, 3)) * scales[:, None, None]
    V = rng.standard_normal((5, 6, 3)) * scales[:, None, None]  # U_k^T V_k ~ 1e-400 ... 1e400
    R = K.procrustes(U, V)
    assert R.shape == (5, 3, 3)
    for k in range(5):
        np.testing.assert_allclose(R[k], K.procrustes(U[k] / scales[k], V[k] / scales[k]),
                                   atol=1e-12)
    V = V[::-1]                                                 # U_k^T V_k ~ 1 in every slice
    R = K.procrustes(U, V)
    for k in range(5):
        np.testing.assert_allclose(R[k], K.procrustes(U[k] / scales[k], V[k] / scales[4 - k]),
                                   atol=1e-12)
    # broadcasting one V against a stack of U
    R1 = K.procrustes(U[:2] / scales[:2, None, None], V[0] / scales[4])
    np.testing.assert_allclose(R1[1], K.procrustes(U[1] / scales[1], V[0] / scales[4]), atol=1e-12)


def test_procrustes_of_zero_and_non_finite_factors():
    U = np.ones((4, 2))
    np.testing.assert_array_equal(K.procrustes(np.zeros((4, 2)), U), np.eye(2))
    np.testing.assert_array_equal(K.procrustes(U, np.zeros((4, 2))), np.eye(2))
    bad = U.copy()
    bad[0, 0] = np.inf
    assert np.all(np.isnan(K.procrustes(bad, U)))


@pytest.mark.parametrize("c", [1e-70, 1e-55, 1e55, 1e70])
def test_ill_conditioned_frame_far_from_unit_scale_is_the_scaled_unit_frame(c):
    """cond(U^T U) = 1e8 (the SVD route) with sigma_max^2 outside [1e-100, 1e100]: the frame is
    built on U / max|U|, and everything computed from it equals the unit-scale result, scaled."""
    rng = np.random.default_rng(6)
    P, _ = np.linalg.qr(rng.standard_normal((7, 3)))
    W = _orthogonal(3, rng)
    U = P @ np.diag([1.0, 1e-2, 1e-4]) @ W.T
    Z = rng.standard_normal((7, 3))
    fr1, frc = K.frame(U), K.frame(U * c)
    assert frc.scale != 1.0 and fr1.scale == 1.0
    np.testing.assert_allclose(np.sort(frc.sigma) * frc.scale,
                               np.sort(np.linalg.svd(U, compute_uv=False)) * c, rtol=1e-10)
    assert frc.rank == fr1.rank == 3
    np.testing.assert_allclose(K.vertical_part(frc, Z * c), K.vertical_part(fr1, Z) * c,
                               rtol=1e-7, atol=1e-9 * c)
    Qdot = U @ Z.T + Z @ U.T
    xi1, _ = K.lift(fr1, Qdot)
    xic, _ = K.lift(frc, Qdot * c * c)
    np.testing.assert_allclose(xic, xi1 * c, rtol=1e-7, atol=1e-9 * c)
    S = rng.standard_normal((3, 3))
    S = S - S.T
    np.testing.assert_allclose(K.lyapunov(frc, S * c * c), K.lyapunov(fr1, S),
                               rtol=1e-6, atol=1e-8 * float(np.abs(K.lyapunov(fr1, S)).max()))
