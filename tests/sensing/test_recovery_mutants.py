"""recover against its definition (mutation testing of quadnet.sensing.recovery).

Gradient descent with a numeric step from a given start is re-run by hand with the gradient
of ``L(U) = (1/(2m)) sum_i (||U^T x_i||^2 - y_i)^2`` written from the definition,
``grad L(U) = (2/m) sum_i (||U^T x_i||^2 - y_i) x_i x_i^T U``; the iteration budget, the
recorded losses and the restart count are checked against that run.
"""

from __future__ import annotations

import numpy as np
import pytest

from quadnet import GaussianSensing
from quadnet.sensing.recovery import recover


def _loss(X, y, U):
    return float(np.sum((np.sum((X @ U) ** 2, axis=1) - y) ** 2) / (2 * len(y)))


def _grad(X, y, U):
    res = np.sum((X @ U) ** 2, axis=1) - y
    return 2.0 / len(y) * (X.T * res) @ (X @ U)


@pytest.mark.parametrize("budget", [1, 5])
def test_gd_runs_exactly_its_budget_of_steps_of_the_defined_gradient(budget):
    prob = GaussianSensing.random(4, 2, 30, seed=0)
    X, y = prob.X, prob.y
    U0 = np.random.default_rng(1).standard_normal((4, 2))
    eta = 0.01
    out = recover(prob, 2, "gd", U0, eta=eta, max_iter=budget, gtol=1e-15, restarts=0)
    U, losses = U0.copy(), [_loss(X, y, U0)]
    for _ in range(budget):
        U = U - eta * _grad(X, y, U)
        losses.append(_loss(X, y, U))
    assert out.iterations == budget and not out.converged
    np.testing.assert_allclose(out.U, U, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out.history["loss"], losses, rtol=1e-12)
    assert out.history["restarts"] == 0 and out.eta == eta
    assert (out.method, out.init) == ("gd", "array")
    np.testing.assert_allclose(out.Q, U @ U.T, rtol=1e-12, atol=1e-14)


def test_lbfgs_stops_at_its_budget_not_the_default_one():
    # a random start far from the optimum needs tens of L-BFGS iterations; a budget of 3 stops
    # it after 3 (the default budget of 5000 would run on to convergence)
    prob = GaussianSensing.random(5, 1, 40, seed=2)
    U0 = np.random.default_rng(0).standard_normal((5, 1))
    free = recover(prob, 1, "lbfgs", U0, gtol=1e-12)
    assert free.iterations > 3
    out = recover(prob, 1, "lbfgs", U0, max_iter=3, gtol=1e-12)
    assert out.iterations == 3 and not out.converged
    assert len(out.history["loss"]) == 4          # the start and one loss per iteration
    assert out.history["loss"][-1] > free.history["loss"][-1]


def test_restarts_are_counted_and_bounded_by_their_budget():
    # a 2-step budget never interpolates (relative loss far above restart_tol), so every one
    # of the allowed restarts is used, and iterations add up over the runs
    prob = GaussianSensing.random(4, 1, 30, seed=0)
    U0 = np.random.default_rng(1).standard_normal((4, 1))
    out = recover(prob, 1, "gd", U0, eta=0.01, max_iter=2, gtol=1e-15, restarts=2, seed=0)
    assert out.history["restarts"] == 2
    assert out.iterations == 3 * 2
    loss0 = float(prob.y @ prob.y) / (2 * prob.m)
    assert _loss(prob.X, prob.y, out.U) / loss0 > 1e-20
