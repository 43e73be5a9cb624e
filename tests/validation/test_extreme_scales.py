"""Finite but extreme arguments (powers, weight decays, matrices near 1e+-300) never give a
silent ``inf``/``NaN`` or a wrong number: either the exact answer (by homogeneity, checked
against closed forms and 50-digit mpmath) or a ``ValueError`` naming the argument.

The cases were found by an outside fuzzer (``psd_power(G, 1e300)`` overflowing, the
Bures-Wasserstein distance of ``diag(1e308, 1)`` and ``diag(1e308, 1e308)`` returned as 0) and
by trying ``1e300``, ``1e-300`` and ``1e308`` on each argument of the geometry, features and
commuting functions.
"""

from __future__ import annotations

import math
import warnings

import mpmath
import numpy as np
import pytest

import quadnet as qn
from quadnet import features as F
from quadnet.features.training import objective_and_grad
from quadnet.geometry import bures_wasserstein_sectional_curvature as bw_curv

G2 = np.diag([4.0, 0.5])


# ------------------------------------------------------------------------- PSD powers
def test_psd_power_refuses_an_overflowing_power_naming_it():
    with pytest.raises(ValueError, match=r"s = 1e\+300 is too large for G: lambda_max\(G\)\^s "
                                         r"= 4\^1e\+300 overflows float64"):
        F.psd_power(G2, 1e300)
    with pytest.raises(ValueError, match=r"s = 1e\+10 is too large for G"):
        F.psd_power(np.diag([1.5, 1.0]), 1e10)


def test_psd_power_up_to_the_overflow_threshold_is_exact():
    # 2^1000 and 2^-1000 are floats: the power is exact, no false refusal near the bound
    out = F.psd_power(np.diag([2.0, 0.5]), 1000.0)
    assert out[0, 0] == 2.0**1000 and out[1, 1] == 2.0**-1000 and out[0, 1] == 0.0
    # eigenvalues <= 1 never overflow, whatever the power: 1^s = 1, 0.5^s underflows to 0
    np.testing.assert_array_equal(F.psd_power(np.diag([1.0, 0.5]), 1e300), np.diag([1.0, 0.0]))
    # tiny powers: G^s -> the projector on the range
    np.testing.assert_array_equal(F.psd_power(np.diag([4.0, 0.0]), 1e-300), np.diag([1.0, 0.0]))


def test_nfa_cosines_at_extreme_powers_are_the_limits():
    WtW = np.diag([2.0, 1.0])
    c = F.nfa_cosines(WtW, G2, [0.5, 1e300, 1e-300])
    # s -> inf: G^s / lambda_max^s -> e1 e1^T, cos = 2 / sqrt(5); s -> 0: G^s -> I
    assert c[1] == pytest.approx(2.0 / math.sqrt(5.0), rel=1e-15)
    assert c[2] == pytest.approx(3.0 / math.sqrt(10.0), rel=1e-15)
    # s = 1/2 agrees with the unscaled power (the cosine is scale invariant)
    assert c[0] == pytest.approx(F.cosine(WtW, F.psd_power(G2, 0.5)), rel=1e-14)
    s, cbest = F.best_nfa_power(WtW, G2, (0.02, 1e300))      # no overflow warning (error here)
    assert math.isfinite(s) and 0.0 < cbest <= 1.0


# ----------------------------------------------------------------------- weight decay
def _data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 2))
    return X, X[:, 0] ** 2


def test_train_refuses_an_overflowing_weight_decay_naming_it():
    X, y = _data()
    with pytest.raises(ValueError, match=r"train: lam = 1e\+250 makes the objective overflow"):
        F.train(F.QuadraticNet(0.5 * np.ones((2, 2))), X, y, 1e250)
    net = F.DeepLinearNet([np.eye(2), np.ones((1, 2))])
    with pytest.raises(ValueError, match=r"train: lam = 1e\+300 makes the objective overflow"):
        F.train(net, X, X[:, :1], 1e300)


def test_train_with_a_huge_but_safe_weight_decay_finds_zero():
    # W = 0 is critical for every lam and the global minimiser once lam dominates the loss
    X, y = _data()
    net = F.train(F.QuadraticNet(0.5 * np.ones((2, 2))), X, y, 1e150)
    assert net.info.converged and np.abs(net.W).max() < 1e-250


def test_fact_matrices_refuse_a_tiny_weight_decay_naming_it():
    X, y = _data()
    net = F.QuadraticNet(3.0 * np.eye(2))
    for f in (F.fact_matrix, F.bfact_matrix):
        with pytest.raises(ValueError, match=rf"{f.__name__}: lam = 4.94066e-324 is too small"):
            f(net, X, y, 5e-324)
    # a small lam that does not overflow: exactly FACT(lam = 1) / lam
    np.testing.assert_allclose(F.fact_matrix(net, X, y, 1e-300),
                               F.fact_matrix(net, X, y, 1.0) / 1e-300, rtol=1e-15)
    with pytest.raises(ValueError, match=r"objective_and_grad: J or grad J overflows float64 "
                                         r"at lam = 1e\+308"):
        objective_and_grad(net, X, y, 1e308)
    deep = F.DeepLinearNet([np.array([[1.0, 2.0], [0.5, -1.0]]), np.array([[1.0, 3.0]])])
    with pytest.raises(ValueError, match=r"(fact_identity|fact_matrix): lam = 1e-308 is too small"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", qn.exceptions.NotCriticalWarning)
            F.fact_identity(deep, X, X[:, :1], 1e-308)


# ---------------------------------------------------------- Bures-Wasserstein distance
def _mp_bw(A, B) -> float:
    """50-digit ``sqrt(tr A + tr B - 2 tr (A^1/2 B A^1/2)^1/2)``."""
    with mpmath.workdps(50):
        A, B = mpmath.matrix(A.tolist()), mpmath.matrix(B.tolist())
        rA = mpmath.sqrtm(A)
        M = mpmath.sqrtm(rA * B * rA)
        tr = lambda X: sum(X[i, i] for i in range(X.rows))  # noqa: E731
        return float(mpmath.sqrt(tr(A) + tr(B) - 2 * mpmath.re(tr(M))))


def test_bures_wasserstein_near_the_largest_float():
    # diag: d = |sqrt(1e308) - sqrt(1)| = 1e154 - 1 (it returned 0 before)
    d = qn.bures_wasserstein(np.diag([1e308, 1.0]), np.diag([1e308, 1e308]))
    assert d == pytest.approx(1e154, rel=1e-15)
    assert qn.bures_wasserstein(np.diag([4e300, 1e300]), np.diag([1e300, 1e300])) == \
        pytest.approx(1e150, rel=1e-14)


@pytest.mark.parametrize("c", [1e300, 1e-300, 1e200, 1e-200, 2.0**1000])
def test_bures_wasserstein_is_homogeneous_of_degree_one_half(c):
    rng = np.random.default_rng(3)
    A = rng.standard_normal((3, 3))
    A = A @ A.T + 0.1 * np.eye(3)
    B = rng.standard_normal((3, 3))
    B = B @ B.T
    ref = _mp_bw(A, B)
    assert qn.bures_wasserstein(A, B) == pytest.approx(ref, rel=1e-12)
    assert qn.bures_wasserstein(c * A, c * B) == pytest.approx(math.sqrt(c) * ref, rel=1e-12)


# ---------------------------------------------------- BW sectional curvature, norms
def test_bw_sectional_curvature_scales_exactly_at_extreme_entries():
    S = np.diag([1.0, 4.0])
    X = np.array([[0.0, 3.0], [3.0, 0.0]])
    Y = np.diag([2.0, 0.0])
    K = bw_curv(S, X, Y)
    assert K == pytest.approx(0.48, rel=1e-14)
    # K(c S, a X, b Y) = K(S, X, Y) / c (it raised OverflowError at c = 1e-300 before)
    for c, a, b in [(1e-300, 1.0, 1.0), (1e300, 1e300, 1e-300), (1.0, 1e-300, 1e300),
                    (1e-308, 1.0, 1.0)]:
        assert bw_curv(c * S, a * X, b * Y) == pytest.approx(0.48 / c, rel=1e-13)
    with pytest.raises(ValueError, match=r"X is zero: the sectional curvature is undefined"):
        bw_curv(S, 0.0 * X, Y)
    with pytest.raises(ValueError, match=r"Y is zero"):
        bw_curv(S, X, 0.0 * Y)


def test_quotient_norm_of_a_huge_tangent_vector_warns_nothing():
    M = qn.PSDQuotient(4, 2)
    xi = np.arange(8.0).reshape(4, 2)
    assert M.norm(np.ones((4, 2)), 1e300 * xi) == pytest.approx(1e300 * np.linalg.norm(xi),
                                                                rel=1e-15)


def test_commuting_loss_refuses_an_overflowing_value_naming_the_argument():
    inst = qn.commuting.random_commuting_instance(0, d=6, m=3)
    cs = qn.CommutingSensing(np.eye(6), inst["spectra"], inst["y"])
    big = 1e300
    for call, name, arg in [(lambda: cs.value(big * np.eye(6)), "value", "Q"),
                            (lambda: cs.reduced_loss(big * np.ones(6)), "reduced_loss", "q"),
                            (lambda: cs.factor_value(big * np.eye(6)[:, :2]), "factor_value", "U"),
                            (lambda: cs.factor_gradient(big * np.eye(6)[:, :2]),
                             "factor_gradient", "U")]:
        with pytest.raises(ValueError, match=rf"^CommutingSensing\.{name}: the result overflows "
                                             rf"float64 at this {arg} \(max \|entry\| 1e\+300\)"):
            call()
    # finite values are unchanged: at q = 0 the reduced loss is |y|^2 / (2m)
    assert cs.reduced_loss(np.zeros(6)) == pytest.approx(inst["y"] @ inst["y"] / 6, rel=1e-15)
    assert cs.value(np.eye(6)) == pytest.approx(cs.reduced_loss(np.ones(6)), rel=1e-14)


def test_sectional_curvature_does_not_depend_on_the_scale_of_the_directions():
    # |xi ^ eta|^2 of entries ~1e-150 underflows; ~1e-300 made ||xi|| read 0 ("zero matrix")
    rng = np.random.default_rng(0)
    U, xi, eta = (rng.standard_normal((4, 2)) for _ in range(3))
    K0 = qn.geometry.sectional_curvature(U, xi, eta, project=True)
    assert K0 > 0.1
    for a, b in [(1e-150, 1.0), (1e150, 1.0), (1e-300, 1e-300), (1e300, 1e-300)]:
        assert qn.geometry.sectional_curvature(U, a * xi, b * eta, project=True) == \
            pytest.approx(K0, rel=1e-14)


def test_best_nfa_power_finds_the_peak_in_a_very_wide_bracket():
    """60 grid powers over (0.02, 1e300) stepped by ~1e5 and returned a poor power silently;
    the grid now has 20 powers per decade. AGOP = (WᵀW)³ has its exact power at s = 1/3."""
    from quadnet.features.fact import best_nfa_power

    rng = np.random.default_rng(0)
    A = rng.standard_normal((6, 6))
    W = A.T @ A
    for bounds in ((0.02, 2.0), (0.02, 1e300), (1e-300, 5.0)):
        s, c = best_nfa_power(W, W @ W @ W, bounds)
        assert abs(s - 1 / 3) < 1e-6 and c > 1 - 1e-12, bounds


def test_an_overflowing_step_is_refused_without_a_numpy_warning():
    """exp and retraction refuse a step whose sum overflows with one ValueError, and numpy's
    overflow RuntimeWarning does not escape first (it would be an error under -W error)."""
    import warnings

    import quadnet

    M = quadnet.PSDQuotient(3, 1)
    U = np.full((3, 1), 1e308)
    for op in (M.retraction, M.exp):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(ValueError, match="the result is not finite"):
                op(U, U)
