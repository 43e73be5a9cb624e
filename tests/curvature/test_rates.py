"""Tests of quadnet.rates: measured local rates vs the effective curvature."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from quadnet import FrobeniusLoss, GaussianSensing, descent_contraction, effective_hessian, flow_decay_rate
from quadnet.exceptions import IndefiniteHessianWarning, NotAMinimiserWarning
from quadnet.curvature.rates import LocalCurvature, local_curvature, predicted_contraction

INSTANCES = [(8, 2, 60, 0), (12, 1, 60, 3), (15, 2, 150, 2)]


@pytest.mark.parametrize("d,r,m,seed", INSTANCES)
def test_flow_decay_rate_matches_lambda_min(d, r, m, seed):
    loss = GaussianSensing.random(d, r, m, seed=seed)
    res = flow_decay_rate(loss, loss.U_star, seed=seed)
    lam = np.linalg.eigvalsh(effective_hessian(loss, loss.U_star))[0]
    assert abs(res.lambda_min - lam) <= 1e-12 * lam
    # measured 1e-9..1e-8 on these instances (two-term fit); the issue asks <= 1e-6
    assert res.relative_error <= 1e-6
    # the log-linear fit carries the O(amplitude) nonlinear bias, the naive slope the 2nd mode
    assert res.relative_error < res.loglinear_relative_error
    assert res.relative_error < res.naive_relative_error


def test_flow_decay_rate_generic_loss_and_determinism():
    """Frobenius loss (not a sensing loss): minimiser = top-r eigenvectors of a PSD target."""
    rng = np.random.default_rng(5)
    Qo = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    T = (Qo * np.array([4.0, 2.5, 1.0, 0.5, 0.2, 0.1])) @ Qo.T
    U = Qo[:, :2] * np.sqrt([4.0, 2.5])
    loss = FrobeniusLoss(T)
    a = flow_decay_rate(loss, U, seed=1)
    b = flow_decay_rate(loss, U, seed=1)
    assert a.rate == b.rate
    assert a.relative_error <= 1e-6


@pytest.mark.parametrize("d,r,m,seed", INSTANCES[:2])
def test_descent_contraction_both_regimes(d, r, m, seed):
    loss = GaussianSensing.random(d, r, m, seed=seed)
    curv = local_curvature(loss, loss.U_star)
    # eta = 1/lambda_max: the lambda_min mode dominates, contraction 1 - eta lambda_min
    res = descent_contraction(loss, loss.U_star, 1.0 / curv.lambda_max, curvature=curv)
    assert res.dominant == "lambda_min"
    assert res.relative_error <= 1e-8            # measured ~1e-10
    assert abs(res.log_rate - res.log_prediction) <= 1e-6 * res.log_prediction
    # -eta lambda_min misses log(1 - eta lambda_min) by ~ (eta lambda_min)/2 in relative terms
    x = res.eta * res.lambda_min
    assert abs(res.surrogate - res.log_rate) / res.log_rate == pytest.approx(x / 2, rel=0.1)
    # between the best and the stable step the lambda_max mode dominates (negative multiplier)
    eta = 0.5 * (curv.best_step + curv.stable_step)
    res = descent_contraction(loss, loss.U_star, eta, curvature=curv)
    assert res.dominant == "lambda_max"
    assert res.predicted == pytest.approx(eta * curv.lambda_max - 1.0, rel=1e-14)
    assert res.relative_error <= 1e-8


def test_predicted_contraction():
    lam = np.array([0.5, 1.0, 4.0])
    assert predicted_contraction(lam, 0.1) == pytest.approx(0.95)
    assert predicted_contraction(lam, 0.45) == pytest.approx(0.8)     # |1 - 0.45 * 4|
    assert predicted_contraction([-1.0, 2.0], 0.1) == pytest.approx(1.1)  # indefinite: > 1
    with pytest.raises(ValueError, match="eta"):
        predicted_contraction(lam, -0.1)
    with pytest.raises(ValueError, match="empty"):
        predicted_contraction([], 0.1)
    with pytest.raises(ValueError, match="non-finite"):
        predicted_contraction([np.nan], 0.1)


def test_dense_and_matrix_free_local_curvature_agree():
    loss = GaussianSensing.random(10, 2, 100, seed=1)
    a = local_curvature(loss, loss.U_star)
    b = local_curvature(loss, loss.U_star, dense_max=0)
    assert a.method == "dense" and b.method == "eigsh"
    for x, y in [(a.lambda_min, b.lambda_min), (a.lambda_max, b.lambda_max),
                 (a.lambda_2, b.lambda_2)]:
        assert abs(x - y) <= 1e-10 * a.lambda_max
    assert abs(abs(np.sum(a.v_min * b.v_min)) - 1) <= 1e-8


def test_warnings_and_errors():
    loss = GaussianSensing.random(8, 2, 60, seed=0)
    U = loss.U_star
    with pytest.warns(NotAMinimiserWarning, match="not a critical point"):
        curv = local_curvature(loss, U + 1e-3)
    assert curv.relative_gradient > 1e-5 and not curv.indefinite
    with pytest.warns(NotAMinimiserWarning):
        flow_decay_rate(loss, U + 1e-6, decades=2)
    with pytest.raises(ValueError, match="eta"):
        descent_contraction(loss, U, 2.5 / local_curvature(loss, U).lambda_max)
    with pytest.raises(ValueError, match="amplitude"):
        flow_decay_rate(loss, U, amplitude=0.5)
    with pytest.raises(TypeError, match="curvature"):
        flow_decay_rate(loss, U, curvature="no")
    with pytest.raises(TypeError, match="loss"):
        flow_decay_rate("loss", U)

    # a saddle of the Frobenius loss: reported (warning + flag), and no rate is measured
    lam = np.array([5.0, 3.0, 1.0, 0.5])
    Qo = np.linalg.qr(np.random.default_rng(0).standard_normal((4, 4)))[0]
    fro = FrobeniusLoss((Qo * lam) @ Qo.T)
    saddle = np.sqrt(3.0) * Qo[:, [1]]
    with pytest.warns(IndefiniteHessianWarning, match="indefinite"):
        curv = local_curvature(fro, saddle)
    assert isinstance(curv, LocalCurvature) and curv.indefinite and curv.lambda_min < 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IndefiniteHessianWarning)
        with pytest.raises(ValueError, match="indefinite"):
            flow_decay_rate(fro, saddle)
        with pytest.raises(ValueError, match="indefinite"):
            descent_contraction(fro, saddle, 0.01)
