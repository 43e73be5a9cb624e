"""Tests of quadnet.sensing (quadnet theory §4).

Reference computations form every ``A_i = x_i x_i^T`` explicitly (the "dense independent
computation"); the production code never does.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quadnet import PSDQuotient
from quadnet import effective_hessian as quadnet_effective_hessian
from quadnet.testing import dense_sensing_reference, five_point_derivative
from quadnet.sensing.gaussian import (
    GaussianSensing,
    SpectralInitWarning,
    inverse_population_normal_operator,
    population_normal_operator,
    relative_error,
)

# Relative tolerance for identities that hold exactly in real arithmetic and are computed by
# O(m) sums of O(1) terms: rounding is ~ m * eps ~ 1e-13 for the sizes used here.
EXACT = 1e-10


def rel(a, b) -> float:
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


def dense(prob: GaussianSensing):
    """The dense reference with every ``A_i = x_i x_i^T`` formed (m x d x d, test-only)."""
    return dense_sensing_reference(prob.X, prob.y)


stencil = five_point_derivative


@settings(max_examples=15, deadline=None)
@given(d=st.integers(1, 7), r=st.integers(1, 4), m=st.integers(1, 40), seed=st.integers(0, 2**32 - 1),
       noise=st.sampled_from([0.0, 0.3]))
def test_factor_paths_match_dense_and_finite_differences(d, r, m, seed, noise):
    r = min(r, d)
    prob = GaussianSensing.random(d, r, m, seed=seed, noise=noise)
    rng = np.random.default_rng(seed + 1)
    U = rng.standard_normal((d, r))
    xi = rng.standard_normal((d, r))
    value, grad, hvp, Tm = dense(prob)
    assert abs(prob.factor_value(U) - value(U)) <= EXACT * abs(value(U))
    g = prob.factor_gradient(U)
    assert rel(g, grad(U)) <= EXACT
    assert rel(prob.factor_hvp(U, xi), hvp(U, xi)) <= EXACT
    val2, g2 = prob.factor_value_and_gradient(U)
    assert val2 == prob.factor_value(U) and np.array_equal(g2, g)
    # finite differences (exact stencil, rounding only: tolerance 1e-10 relative to the scale
    # of the terms, which are ~ |L| and ~ |grad L|).
    fd_dir = stencil(lambda t: prob.factor_value(U + t * xi))
    assert abs(fd_dir - np.sum(g * xi)) <= EXACT * max(prob.factor_value(U), 1.0) * 10
    fd_h = stencil(lambda t: prob.factor_gradient(U + t * xi))
    assert rel(fd_h, prob.factor_hvp(U, xi)) <= EXACT * 10
    # the generic Loss derivation from value/gradient/hessian_vector gives the same
    from quadnet.losses import Loss

    assert rel(Loss.factor_gradient(prob, U), g) <= EXACT
    assert rel(Loss.factor_hvp(prob, U, xi), hvp(U, xi)) <= EXACT
    H = rng.standard_normal((d, d))
    H = H + H.T
    assert rel(prob.normal_operator(H), Tm(H)) <= EXACT
    assert rel(prob.hessian_vector(U @ U.T, H), Tm(H)) <= EXACT


def test_hvp_at_batches_in_blocks(monkeypatch):
    """``GaussianSensing.hvp_at``: a stack of directions, split into blocks of ``c`` (here 1, 2
    and all at once by shrinking the scratch budget), gives the per-direction ``factor_hvp``
    (the same sums over ``m`` in BLAS-3 instead of thin products: rounding only, EXACT)."""
    from quadnet.sensing import gaussian as sensing

    prob = GaussianSensing.random(6, 2, 30, seed=8, noise=0.1)
    rng = np.random.default_rng(9)
    U = rng.standard_normal((6, 2))
    Xi = rng.standard_normal((5, 6, 2))
    ref = np.stack([prob.factor_hvp(U, z) for z in Xi])
    for budget in (1, 2 * 30 * 2, 1 << 22):        # block = 1, 2, everything
        monkeypatch.setattr(sensing, "HVP_SCRATCH_ENTRIES", budget)
        out = prob.hvp_at(U)(Xi)
        assert out.shape == Xi.shape
        assert rel(out, ref) <= EXACT
    assert rel(prob.hvp_at(U)(Xi[2]), ref[2]) <= EXACT
    with pytest.raises(ValueError, match="xi must have shape"):
        prob.hvp_at(U)(Xi[:, :, :1])
    with pytest.raises(ValueError, match="U must"):
        prob.hvp_at(np.zeros((5, 2)))


def test_gradient_is_horizontal_and_zero_at_truth():
    prob = GaussianSensing.random(6, 3, 50, seed=3)
    U = np.random.default_rng(0).standard_normal((6, 3))
    g = prob.factor_gradient(U)
    K = U.T @ g
    assert np.linalg.norm(K - K.T) <= 1e-12 * np.linalg.norm(K)  # U^T grad = 2 U^T S U symmetric
    assert prob.factor_value(prob.U_star) <= 1e-28  # exact data: only rounding of y
    assert np.linalg.norm(prob.factor_gradient(prob.U_star)) <= 1e-13


def test_population_operator_and_inverse():
    rng = np.random.default_rng(5)
    H = rng.standard_normal((5, 5))
    H = H + H.T
    T = population_normal_operator(H)
    assert rel(inverse_population_normal_operator(T), H) <= 1e-14
    assert np.isclose(np.trace(T), 7 * np.trace(H))  # tr T(H) = (d + 2) tr H


def test_population_operator_monte_carlo():
    # ||T_m(H) - T(H)||_F has mean ~ c / sqrt(m); averaged over 4 seeds at two m a factor
    # 16 apart the ratio must be ~ 4 (sqrt 16). Monte-Carlo spread at these sizes is ~ 15%.
    d = 4
    H = np.diag([1.0, -0.5, 0.3, 0.0]) + 0.1
    errs = []
    for m in (2000, 32000):
        e = [np.linalg.norm(GaussianSensing.random(d, 1, m, seed=s).normal_operator(H)
                            - population_normal_operator(H)) for s in range(4)]
        errs.append(np.mean(e))
    assert 2.5 <= errs[0] / errs[1] <= 6.5


def test_spectral_init_recovers_truth_for_large_m():
    prob = GaussianSensing.random(8, 2, 20000, seed=1)
    U0 = prob.spectral_init(2)
    # T^-1(M) - Q* = T^-1(T_m - T)(Q*) = O(d/sqrt(m)) ~ 0.06; 0.25 leaves a wide margin.
    assert relative_error(U0 @ U0.T, prob.Q_star) <= 0.25


def test_spectral_init_nonpositive():
    # rows e_1..e_5 repeated: M = diag(mean y over each e_j) / 5 exactly, T^-1(M) is diagonal.
    X = np.vstack([np.eye(5)] * 6)
    prob = GaussianSensing(X, -np.ones(30))  # T^-1(M) = (-I/5 + I/35) / 2 < 0
    with pytest.raises(ValueError, match="positive eigenvalue"):
        prob.spectral_init(1, strict=False)
    # one positive direction only, rank 3 asked: strict raises, lenient warns and pads
    prob = GaussianSensing(X, np.tile([5.0, -1, -1, -1, -1], 6))
    with pytest.raises(ValueError, match="r = 3"):
        prob.spectral_init(3)
    with pytest.warns(SpectralInitWarning):
        U0 = prob.spectral_init(3, strict=False)
    assert U0.shape == (5, 3) and np.all(np.isfinite(U0))
    PSDQuotient(5, 3)._point(U0)  # full rank


def test_bad_inputs():
    X = np.ones((4, 3))
    with pytest.raises(ValueError, match="len\\(y\\)"):
        GaussianSensing(X, np.ones(5))
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="X has 1 non-finite"):
        GaussianSensing(Xn, np.ones(4))
    with pytest.raises(ValueError, match="y has 1 non-finite"):
        GaussianSensing(X, np.array([1.0, np.inf, 0, 0]))
    with pytest.raises(TypeError, match="X"):
        GaussianSensing("abc", np.ones(4))
    with pytest.raises(ValueError, match="r = 5 > d = 3"):
        GaussianSensing.random(3, 5, 10)
    with pytest.raises(ValueError, match="noise"):
        GaussianSensing.random(3, 1, 10, noise=-1.0)
    prob = GaussianSensing.random(3, 1, 10, seed=0)
    with pytest.raises(ValueError, match="U must have shape"):
        prob.factor_gradient(np.ones((4, 1)))
    with pytest.raises(ValueError, match="r"):
        prob.spectral_init(4)


def test_same_seed_same_bits():
    a = GaussianSensing.random(5, 2, 30, seed=7, noise=0.1)
    b = GaussianSensing.random(5, 2, 30, seed=7, noise=0.1)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)
    assert np.array_equal(a.U_star, b.U_star)


@pytest.mark.parametrize("d, r, m", [(30, 3, 600), (12, 1, 300), (6, 5, 4000)])
def test_spectral_init_lanczos_matches_the_dense_moment_matrix(d, r, m):
    """Lanczos on ``v -> (M v - tr(M)/(d+2) v) / 2`` (no d x d matrix) and the dense route
    give the same start: both solve the same symmetric eigenproblem, ARPACK to tol 1e-10,
    so ``U0 U0^T`` agrees to ~1e-9 relative (r = d - 1 falls back to the dense route)."""
    prob = GaussianSensing.random(d, r, m, seed=d)
    UL = prob.spectral_init(r, method="lanczos")
    UD = prob.spectral_init(r, method="dense")
    QD = UD @ UD.T
    assert UL.shape == (d, r)
    assert rel(UL @ UL.T, QD) <= 1e-8
    assert np.array_equal(prob.spectral_init(r), UD)     # small d: "auto" is the dense route
    with pytest.raises(ValueError, match="method"):
        prob.spectral_init(r, method="eigh")


def test_gram_factor_gives_the_effective_spectrum():
    """``K^T K + 2 S (x) I_r`` is the factor Hessian, so the Gram route of the curvature
    module reproduces the dense effective spectrum at any full-rank U (rounding: 1e-10)."""
    from quadnet.curvature.hessian import gram_effective_spectrum

    prob = GaussianSensing.random(6, 2, 80, seed=1, noise=0.1)
    U = np.random.default_rng(2).standard_normal((6, 2))
    K = prob.gram_factor(U)
    assert K.shape == (80, 12)
    ref = np.linalg.eigvalsh(quadnet_effective_hessian(prob, U))[:3]
    got = gram_effective_spectrum(prob, U, k=3).eigenvalues
    assert rel(got, ref) <= 1e-10
