"""Losses and exact factor dynamics (THEORY.md §2).

Tolerances: gradient descent and the congruence recursion are the same arithmetic up to
rounding, and on a realisable least-squares problem the recursion is contracting, so the
1e-12 relative bound of the issue holds with ~3 orders of margin (~1e-15 measured). The
flow is compared between two adaptive integrations at rtol = 1e-12, each accurate to
~rtol, hence 1e3 x rtol.
"""

import autograd.numpy as anp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import quadnet as qn
from quadnet.harness.checks.quotient import _instance
from quadnet.geometry.conformance import random_orthogonal


def _rel(a, b):
    return float(np.max(np.linalg.norm(a - b, axis=(1, 2)) / np.linalg.norm(b, axis=(1, 2))))


@settings(max_examples=15, deadline=None)
@given(d=st.integers(2, 8), data=st.data(), seed=st.integers(0, 2**31 - 1))
def test_descent_equivariance_and_congruence(d, data, seed):
    r = data.draw(st.integers(1, d))
    rng = np.random.default_rng(seed)
    loss, U0 = _instance(d, r, rng)
    R = random_orthogonal(r, rng, improper=bool(seed % 2))
    a = qn.gradient_descent(loss, U0, 0.1, 300)
    b = qn.gradient_descent(loss, U0 @ R, 0.1, 300)
    assert _rel(b.Q, a.Q) <= 1e-12
    # one congruence step from each descent iterate reproduces the next one (a few matrix
    # products: rounding ~ d eps, so 1e-13 has a 100x margin)
    for k in range(300):
        Qk = a.Q[k]
        step = qn.congruence_step(Qk, loss.gradient(Qk), 0.1)
        assert np.linalg.norm(step - a.Q[k + 1]) <= 1e-13 * np.linalg.norm(a.Q[k + 1])


@pytest.mark.parametrize("d,r", [(5, 2), (8, 3), (6, 6)])
def test_free_running_congruence_recursion(d, r):
    """Free-running, the recursion amplifies rounding off range(Q) while S has negative
    eigenvalues there (congruence_recursion docstring; hypothesis found a d=4, r=1 start
    stuck near a saddle where it reaches 1e-7). On these converging realisable instances the
    amplification stays below 10x, so 1e-12 (the issue's bound) holds with margin."""
    loss, U0 = _instance(d, r, np.random.default_rng(d + r))
    a = qn.gradient_descent(loss, U0, 0.1, 1000)
    c = qn.congruence_recursion(loss, U0 @ U0.T, 0.1, 1000)
    assert _rel(c.Q, a.Q) <= 1e-12


def test_flow_equivariance_projection_and_horizontality():
    rng = np.random.default_rng(11)
    d, r = 6, 3
    loss, U0 = _instance(d, r, rng)
    R = random_orthogonal(r, rng, improper=True)
    times = np.linspace(0, 20, 41)
    fa = qn.gradient_flow(loss, U0, times, rtol=1e-12, atol=1e-14)
    fb = qn.gradient_flow(loss, U0 @ R, times, rtol=1e-12, atol=1e-14)
    pf = qn.predictor_flow(loss, U0 @ U0.T, times, rtol=1e-12, atol=1e-14)
    assert _rel(fb.Q, fa.Q) <= 1e-9
    assert _rel(pf.Q, fa.Q) <= 1e-9
    M = qn.PSDQuotient(d, r)
    for U in fa.U:
        v = loss.factor_gradient(U)
        assert np.linalg.norm(M.vertical_projection(U, v)) <= 1e-13 * np.linalg.norm(v)
    assert fa.loss[-1] < 1e-2 * fa.loss[0]  # it is a descent flow


def test_congruence_step_formula():
    rng = np.random.default_rng(0)
    Q = rng.standard_normal((4, 4))
    Q = Q @ Q.T
    S = rng.standard_normal((4, 4))
    S = S + S.T
    eta = 0.03
    expected = Q - 2 * eta * (S @ Q + Q @ S) + 4 * eta**2 * S @ Q @ S
    assert np.allclose(qn.congruence_step(Q, S, eta), expected, rtol=1e-13, atol=1e-13)


def test_loss_protocol_derivatives_match_finite_differences():
    """Factor gradient and HVP derived once in Loss, checked by central differences
    (error O(h^2) ~ 1e-10 at h = 1e-5, so 1e-7 relative is a safe bound)."""
    rng = np.random.default_rng(3)
    d, r = 5, 2
    A = rng.standard_normal((7, d, d))
    A = A + A.transpose(0, 2, 1)
    y = rng.standard_normal(7)
    dense = qn.MeasurementLoss(A, y)
    auto = qn.AutogradLoss(lambda Q: anp.sum((anp.tensordot(A, Q, axes=([1, 2], [0, 1])) - y)
                                             ** 2) / 14 + anp.sum(Q ** 3) / 10, d=d)
    U, xi = rng.standard_normal((2, d, r))
    h = 1e-5
    for loss in (dense, auto):
        g = loss.factor_gradient(U)
        fd = (loss.factor_value(U + h * xi) - loss.factor_value(U - h * xi)) / (2 * h)
        assert abs(np.sum(g * xi) - fd) <= 1e-7 * max(abs(fd), 1)
        hv = loss.factor_hvp(U, xi)
        fd_h = (loss.factor_gradient(U + h * xi) - loss.factor_gradient(U - h * xi)) / (2 * h)
        assert np.linalg.norm(hv - fd_h) <= 1e-7 * np.linalg.norm(hv)


def test_hvp_at_caches_the_point_and_applies_stacks():
    """``Loss.hvp_at(U)``: same numbers as ``factor_hvp`` per direction (it is the same code
    after computing ``S`` once, so equality is exact up to the order of the stack loop) for the
    generic derivation, an autograd loss, and a subclass overriding ``factor_hvp`` (commuting);
    stacks ``(b, d, r)`` give the per-direction results; bad shapes are named."""
    rng = np.random.default_rng(5)
    d, r = 4, 2
    A = rng.standard_normal((6, d, d))
    A = A + A.transpose(0, 2, 1)
    y = rng.standard_normal(6)
    basis = np.linalg.qr(rng.standard_normal((d, d)))[0]
    losses = [qn.MeasurementLoss(A, y), qn.FrobeniusLoss(A[0]),
              qn.AutogradLoss(lambda Q: anp.sum(Q ** 4) / 4, d=d),
              qn.CommutingSensing(basis, rng.standard_normal((3, d)), rng.standard_normal(3))]
    U = rng.standard_normal((d, r))
    Xi = rng.standard_normal((3, d, r))
    for loss in losses:
        hvp = loss.hvp_at(U)
        stack = hvp(Xi)
        assert stack.shape == Xi.shape
        for j in range(3):
            one = loss.factor_hvp(U, Xi[j])
            assert np.linalg.norm(hvp(Xi[j]) - one) <= 1e-14 * np.linalg.norm(one)
            assert np.linalg.norm(stack[j] - one) <= 1e-14 * np.linalg.norm(one)
        with pytest.raises(ValueError, match="xi must have shape"):
            hvp(np.zeros((d, r + 1)))
        with pytest.raises(ValueError, match="xi must have shape"):
            hvp(np.zeros((0, d, r)))
        bad = np.zeros((d, r))
        bad[1, 0] = np.nan
        with pytest.raises(ValueError, match="xi has 1 non-finite"):
            hvp(bad)


def test_divergent_step_raises():
    rng = np.random.default_rng(1)
    loss, U0 = _instance(4, 2, rng)
    with pytest.raises(qn.DivergenceError, match="eta"):
        qn.gradient_descent(loss, 10 * U0 + 3, 50.0, 200)
    assert issubclass(qn.DivergenceError, ValueError)


def test_descent_is_reproducible_bit_for_bit():
    loss, U0 = _instance(5, 2, np.random.default_rng(7))
    a = qn.gradient_descent(loss, U0, 0.1, 50)
    loss2, U02 = _instance(5, 2, np.random.default_rng(7))
    b = qn.gradient_descent(loss2, U02, 0.1, 50)
    assert np.array_equal(a.U, b.U)


def test_dynamics_bad_input():
    loss, U0 = _instance(4, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="eta must be finite and > 0"):
        qn.gradient_descent(loss, U0, -0.1, 10)
    with pytest.raises(ValueError, match="U0 must have shape"):
        qn.gradient_descent(loss, np.ones((5, 2)), 0.1, 10)
    with pytest.raises(ValueError, match="times must be a strictly increasing"):
        qn.gradient_flow(loss, U0, [0.0, 0.0])
    with pytest.raises(TypeError, match="quadnet.Loss"):
        qn.gradient_descent(lambda Q: 0.0, U0, 0.1, 10)
    with pytest.raises(ValueError, match="symmetric"):
        qn.MeasurementLoss(np.arange(8.0).reshape(2, 2, 2), [0.0, 1.0])


def test_quotient_check_quick_passes():
    from quadnet.harness.checks import CheckContext, run_check

    res = run_check("quotient", CheckContext(quick=True))
    assert res.passed, [r for r in res.rows if not r.passed]
