"""Properties of quadnet.features.training against independent references.

Written for mutation testing of ``quadnet/features/training.py`` (``scripts/mutation.py
--public-only``): the objective against its definition, its gradient against central finite
differences, gradient descent against steps taken by hand, the FACT report against the norms
and cosines computed directly, and the trajectory container's refusals by their messages.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import quadnet
from quadnet.exceptions import DivergenceError, NotCriticalWarning
from quadnet.features.fact import DeepLinearNet, QuadraticNet, bfact_matrix, fact_matrix
from quadnet.features.training import (
    NetTrajectory,
    fact_identity,
    gd_path,
    grad_norm_at,
    objective_and_grad,
)

PKG = os.path.dirname(quadnet.__file__)


def _quad(seed=0):
    rng = np.random.default_rng(seed)
    net = QuadraticNet(rng.standard_normal((3, 2)), np.array([1.0, -0.5, 2.0]))
    return net, rng.standard_normal((6, 2)), rng.standard_normal(6)


def _lin(seed=0):
    rng = np.random.default_rng(seed)
    net = DeepLinearNet((rng.standard_normal((3, 2)), rng.standard_normal((2, 3))))
    return net, rng.standard_normal((5, 2)), rng.standard_normal((5, 2))


def _J(net, X, y, lam):
    r = net(X) - y
    return float(np.sum(r**2) / (2 * X.shape[0])
                 + lam / 2 * sum(np.sum(p**2) for p in net.params()))


@pytest.mark.parametrize("make", [_quad, _lin])
def test_objective_and_its_gradient_against_finite_differences(make):
    net, X, y = make()
    lam = 0.3
    J, grads = objective_and_grad(net, X, y, lam)
    assert isinstance(J, float) and J == pytest.approx(_J(net, X, y, lam), rel=1e-12)
    assert len(grads) == len(net.params())
    h = 1e-6
    for i, (P, G) in enumerate(zip(net.params(), grads)):
        assert G.shape == P.shape
        fd = np.zeros_like(P)
        for idx in np.ndindex(P.shape):
            E = np.zeros_like(P)
            E[idx] = h
            plus = [Q + E if j == i else Q for j, Q in enumerate(net.params())]
            minus = [Q - E if j == i else Q for j, Q in enumerate(net.params())]
            fd[idx] = (_J(net.with_params(plus), X, y, lam)
                       - _J(net.with_params(minus), X, y, lam)) / (2 * h)
        # central differences: truncation ~h^2 |J'''| ~ 1e-12, rounding ~eps |J| / h ~ 1e-10
        np.testing.assert_allclose(G, fd, rtol=1e-6, atol=1e-8)
    norm = np.sqrt(sum(np.sum(g**2) for g in grads))
    assert grad_norm_at(net, X, y, lam) == pytest.approx(norm, rel=1e-12)


def test_grad_norm_at_a_critical_point_and_at_large_scales():
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert grad_norm_at(QuadraticNet(np.eye(2)), X, np.array([2.0, 2.0]), 1.0) == 0.0
    # lam = 1e160: the gradient lam W + O(1) has entries 1e160 whose squares overflow
    net = QuadraticNet(np.eye(2))
    y = np.array([1.0, 1.0])
    assert grad_norm_at(net, X, y, 1e160) == pytest.approx(1e160 * np.sqrt(2), rel=1e-12)
    with pytest.raises(ValueError, match=r"^grad_norm_at: \|\|grad J\|\| exceeds 1e308 at lam "
                                         r"= 1.5e\+308; use a smaller lam or rescale X and y$"):
        grad_norm_at(net, X, y, 1.5e308)


def test_objective_overflow_names_the_extreme_arguments():
    net, X, y = _quad()
    with pytest.raises(ValueError, match=r"^objective_and_grad: J or grad J overflows float64 at "
                                         r"lam = 1e\+300 \(the weight-decay term .* exceeds "
                                         r"1e308\); the extreme arguments: lam=1e\+300$"):
        objective_and_grad(net.with_params((1e10 * net.W,)), X, y, 1e300)
    with pytest.raises(ValueError, match=r"^objective_and_grad: J or grad J overflows float64 at "
                                         r"lam = 1 \(.*\); the extreme arguments: y \(max"):
        objective_and_grad(net, X, 1e300 * np.ones(6), 1.0)
    with pytest.raises(ValueError, match=r"exceeds 1e308\)$"):
        objective_and_grad(net.with_params((1e160 * net.W,)), X, y, 1.0)


def _descend(net, X, y, lam, eta, steps):
    nets, losses = [net], [_J(net, X, y, lam)]
    for _ in range(steps):
        _, g = objective_and_grad(nets[-1], X, y, lam)
        nets.append(nets[-1].with_params(tuple(p - eta * q for p, q in zip(nets[-1].params(), g))))
        losses.append(_J(nets[-1], X, y, lam))
    return nets, losses


@pytest.mark.parametrize("make", [_quad, _lin])
def test_gd_path_is_gradient_descent_by_hand(make):
    net, X, y = make()
    nets, losses = _descend(net, X, y, 0.1, 0.02, 5)
    path = gd_path(net, X, y, 0.1, eta=0.02, steps=5, record_every=2)
    assert path.steps == [0, 2, 4, 5] and path.t.tolist() == [0.0, 2.0, 4.0, 5.0]
    assert [k for k, _ in path] == [0, 2, 4, 5]
    for (k, n), L in zip(path, path.loss):
        for P, Q in zip(n.params(), nets[k].params()):
            np.testing.assert_allclose(P, Q, rtol=1e-12, atol=1e-14)
        assert L == pytest.approx(losses[k], rel=1e-12)
    assert path.info == {"eta": 0.02, "steps": 5}
    one = gd_path(net, X, y, 0.1, eta=0.02, steps=0)
    assert one.steps == [0] and one.loss.tolist() == pytest.approx([losses[0]])
    every = gd_path(net, X, y, 0.1, eta=0.02, steps=3)
    assert every.steps == [0, 1, 2, 3]


def test_gd_path_divergence_and_refusals():
    net, X, y = _quad()
    with pytest.raises(DivergenceError, match=r"^gd_path: gradient descent diverged at step \d+ \(eta = "
                                              r"1e\+06 is too large\)$"):
        gd_path(net, X, y, 0.1, eta=1e6, steps=50)
    # a step between recordings diverges: refused at the start of the next step
    with pytest.raises(DivergenceError, match=r"^gd_path: gradient descent diverged at step \d+ "
                                              r"\(eta = 1e\+06 is too large\)$"):
        gd_path(net, X, y, 0.1, eta=1e6, steps=50, record_every=7)
    with pytest.raises(ValueError, match=r"^gd_path: eta must be finite and > 0, got 0.0$"):
        gd_path(net, X, y, 0.1, eta=0.0, steps=2)


def test_net_trajectory_container():
    a, b = QuadraticNet(np.eye(2)), QuadraticNet(2 * np.eye(2))
    tr = NetTrajectory([0, 3], [a, b], [1.0, 0.5], {"k": 1})
    assert tr.steps == [0, 3] and all(isinstance(s, int) for s in tr.steps)
    assert tr.nets == [a, b] and tr.info == {"k": 1}
    np.testing.assert_array_equal(tr.Q, np.stack([np.eye(2), 4 * np.eye(2)]))
    assert tr[1] == (3, b) and tr[0:1] == [(0, a)] and list(tr) == [(0, a), (3, b)]
    assert NetTrajectory((0,), (a,), (0.0,)).info == {}
    assert NetTrajectory([1, 1], [a, a], [1.0, 1.0]).steps == [1, 1]


@pytest.mark.parametrize("args, exc, match", [
    (([], [], []), ValueError, r"^steps must hold at least one step, got an empty array$"),
    (([-1], ["n"], [1.0]), ValueError, r"^steps must be integers >= 0 \(the recorded step "
                                       r"indices\)$"),
    (([0.5], ["n"], [1.0]), ValueError, r"^steps must be integers >= 0"),
    (([2, 1], ["n", "n"], [1.0, 1.0]), ValueError, r"^steps must be non-decreasing \(the order "
                                                   r"they were recorded in\)$"),
    (([0], "n", [1.0]), TypeError, r"^nets must be a sequence of QuadraticNet or DeepLinearNet, "
                                   r"got str$"),
    (([0], 3, [1.0]), TypeError, r"^nets must be a sequence of QuadraticNet or DeepLinearNet, "
                                 r"got int$"),
    (([0, 1], ["n", 2], [1.0, 1.0]), TypeError, r"^nets\[1\] must be a QuadraticNet or "
                                                r"DeepLinearNet, got int$"),
    (([0], ["n"], [-1.0]), ValueError, r"^loss must be >= 0 \(the objective J is a sum of squares "
                                       r"plus a weight decay\), got minimum -1$"),
    (([0, 1], ["n"], [1.0, 1.0]), ValueError, r"^steps, nets and loss must have one entry per "
                                              r"recorded step, got lengths 2, 1 and 2$"),
    (([0], ["n"], [1.0, 2.0]), ValueError, r"^steps, nets and loss must have one entry per "
                                           r"recorded step, got lengths 1, 1 and 2$"),
    (([0], ["n"], [1.0], [1]), TypeError, r"^info must be a dict or None, got list$"),
    (([[0]], ["n"], [1.0]), ValueError, r"^steps must be 1-dimensional"),
    (([0], ["n"], [[1.0]]), ValueError, r"^loss must be 1-dimensional"),
])
def test_net_trajectory_refusals(args, exc, match):
    net = QuadraticNet(np.eye(2))
    args = tuple([net if v == "n" else v for v in a] if isinstance(a, list) and "n" in a else a
                 for a in args)
    with pytest.raises(exc, match=match):
        NetTrajectory(*args)


@pytest.mark.parametrize("make, layer", [(_quad, 0), (_lin, 0), (_lin, 1)])
def test_fact_identity_report_against_direct_norms(make, layer):
    net, X, y = make(1)
    lam = 0.2
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        rep = fact_identity(net, X, y, lam, layer)
    (w,) = [r for r in rec if issubclass(r.category, NotCriticalWarning)]
    assert not w.filename.startswith(PKG)
    _, grads = objective_and_grad(net, X, y, lam)
    W, G = net.params()[layer], grads[layer]
    F, bF = fact_matrix(net, X, y, lam, layer), bfact_matrix(net, X, y, lam, layer)
    WtW, WWt = W.T @ W, W @ W.T
    cos = lambda A, B: np.sum(A * B) / np.linalg.norm(A) / np.linalg.norm(B)   # noqa: E731
    gnorm = np.sqrt(sum(np.sum(g**2) for g in grads))
    assert rep.cos_fact == pytest.approx(cos(WtW, F), rel=1e-12)
    assert rep.cos_bfact == pytest.approx(cos(WWt, bF), rel=1e-12)
    assert rep.error == pytest.approx(np.linalg.norm(WtW - F), rel=1e-12)
    assert rep.berror == pytest.approx(np.linalg.norm(WWt - bF), rel=1e-12)
    assert rep.bound == pytest.approx(np.linalg.svd(W)[1][0] * np.linalg.norm(G) / lam, rel=1e-12)
    assert rep.grad_norm_layer == pytest.approx(np.linalg.norm(G), rel=1e-12)
    assert rep.grad_norm == pytest.approx(gnorm, rel=1e-12)
    assert rep.wtw_norm == pytest.approx(np.linalg.norm(WtW), rel=1e-12)
    assert rep.rel_error == pytest.approx(rep.error / np.linalg.norm(WtW), rel=1e-12)
    assert rep.error <= rep.bound * (1 + 1e-12)
    assert rep.residual_identity < 1e-12                 # (★) holds everywhere
    lb = np.sqrt(1 - (rep.bound / rep.wtw_norm) ** 2) if rep.bound < rep.wtw_norm else -1.0
    assert rep.cos_lower_bound == pytest.approx(lb, rel=1e-12)
    pnorm = np.sqrt(sum(np.sum(p**2) for p in net.params()))
    assert str(w.message) == (f"net is not near a critical point of J: ||grad J|| = {gnorm:.3e} "
                              f"> tol*lam*||theta|| = {1e-6 * lam * pnorm:.3e}; FACT holds only "
                              f"at critical points")
    assert w.message.grad_norm == pytest.approx(gnorm, rel=1e-12)


def test_fact_identity_at_a_critical_point_does_not_warn():
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rep = fact_identity(QuadraticNet(np.eye(2)), X, np.array([2.0, 2.0]), 1.0)
    assert rep.error == 0.0 and rep.cos_fact == pytest.approx(1.0) and rep.grad_norm == 0.0
    assert rep.cos_lower_bound == 1.0
    # tol: a loose tolerance silences the warning on a non-critical net
    net, Xq, yq = _quad()
    gnorm = grad_norm_at(net, Xq, yq, 0.1)
    pnorm = np.linalg.norm(net.W)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fact_identity(net, Xq, yq, 0.1, tol=1.01 * gnorm / (0.1 * pnorm))
    with pytest.warns(NotCriticalWarning):
        fact_identity(net, Xq, yq, 0.1, tol=0.99 * gnorm / (0.1 * pnorm))


def test_objective_overflow_lists_every_extreme_argument():
    net, X, y = _quad()
    with pytest.raises(ValueError, match=r"; the extreme arguments: X \(max \|entry\| [^)]*\), "
                                         r"y \(max \|entry\| 1e\+300\)$"):
        objective_and_grad(net, 1e100 * X, 1e300 * np.ones(6), 1.0)


def test_renamed_keywords_warn_at_the_caller():
    net, X, y = _quad()
    with pytest.warns(DeprecationWarning, match=r"^gd_path\(lr=\.\.\.\) is deprecated; use "
                                                r"eta=$") as rec:
        path = gd_path(net, X, y, 0.1, lr=0.02, steps=1)
    assert path.info["eta"] == 0.02
    assert all(not r.filename.startswith(PKG) for r in rec)
    with pytest.warns(DeprecationWarning, match=r"^train\(maxiter=\.\.\.\) is deprecated; use "
                                                r"max_iter=$") as rec:
        quadnet.features.training.train(net, X, y, 0.1, maxiter=2, polish=False, warn=False)
    assert all(not r.filename.startswith(PKG) for r in rec)


def _train_data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((10, 2))
    return QuadraticNet(0.5 * rng.standard_normal((2, 2))), X, X[:, 0] ** 2


def test_train_budgets_and_the_polish_switch():
    train = quadnet.features.training.train
    net, X, y = _train_data()
    one = train(net, X, y, 1e-2, max_iter=1, polish_max_iter=0, warn=False)
    assert one.info.stages[0][:2] == ("L-BFGS-B", 1) and len(one.info.stages) == 1
    polished = train(net, X, y, 1e-2, max_iter=1, polish_max_iter=1, warn=False)
    assert [s[0] for s in polished.info.stages][:2] == ["L-BFGS-B", "Newton-lstsq"]
    # the budget caps every polish stage, the first Newton stage included
    assert all(k <= 1 for name, k, _ in polished.info.stages[1:])
    with pytest.warns(DeprecationWarning, match=r"^train\(polish_maxiter=\.\.\.\) is deprecated; "
                                                r"use polish_max_iter=$") as rec:
        old = train(net, X, y, 1e-2, max_iter=1, polish_maxiter=0, warn=False)
    assert all(not r.filename.startswith(PKG) for r in rec)
    assert old.info.stages == one.info.stages
    with pytest.raises(ValueError, match=r"^train: max_iter must be >= 1, got 0$"):
        train(net, X, y, 1e-2, max_iter=0)
    with pytest.raises(TypeError, match=r"^train: max_iter must be an integer"):
        train(net, X, y, 1e-2, max_iter=1.5)
    with pytest.raises(ValueError, match=r"^train: polish_max_iter must be >= 0, got -1$"):
        train(net, X, y, 1e-2, polish_max_iter=-1)
    with pytest.raises(TypeError, match=r"^train: polish_max_iter must be an integer"):
        train(net, X, y, 1e-2, polish_max_iter="a")


def test_train_calls_back_at_every_iterate_and_refuses_an_overflowing_lam():
    train = quadnet.features.training.train
    net, X, y = _train_data()
    seen = []
    out = train(net, X, y, 1e-2, max_iter=3, polish=False, warn=False, callback=seen.append)
    assert len(seen) == out.info.stages[0][1] >= 1
    assert all(isinstance(n, QuadraticNet) for n in seen)
    np.testing.assert_array_equal(seen[-1].W, out.W)
    with pytest.raises(ValueError, match=r"^train: lam = 1e\+250 makes the objective overflow "
                                         r"float64 during the optimisation"):
        train(QuadraticNet(0.5 * np.ones((2, 2))), X, y, 1e250)
    # here scipy's own finiteness check of an iterate is what fails
    with pytest.raises(ValueError, match=r"^train: lam = 1e\+300 makes the objective overflow "
                                         r"float64 during the optimisation"):
        train(DeepLinearNet([np.eye(2), np.ones((1, 2))]), X, X[:, :1], 1e300)


def test_a_one_output_deep_net_takes_y_as_a_vector_or_a_column():
    """``y`` of shape ``(n,)`` is the column ``(n, 1)`` for a deep linear net with one output:
    every function of the data gives the same numbers for both."""
    rng = np.random.default_rng(7)
    net = DeepLinearNet((rng.standard_normal((3, 2)), rng.standard_normal((1, 3))))
    X = rng.standard_normal((6, 2))
    y = rng.standard_normal(6)
    tr = quadnet.features.training
    v1, g1 = tr.objective_and_grad(net, X, y, 0.1)
    v2, g2 = tr.objective_and_grad(net, X, y[:, None], 0.1)
    assert v1 == v2 and all(np.array_equal(a, b) for a, b in zip(g1, g2))
    assert tr.grad_norm_at(net, X, y, 0.1) == tr.grad_norm_at(net, X, y[:, None], 0.1)
    p1 = tr.gd_path(net, X, y, 0.1, eta=0.01, steps=3)
    p2 = tr.gd_path(net, X, y[:, None], 0.1, eta=0.01, steps=3)
    assert np.array_equal(p1.loss, p2.loss)
    t1 = tr.train(net, X, y, 0.1, max_iter=5, polish=False, warn=False)
    t2 = tr.train(net, X, y[:, None], 0.1, max_iter=5, polish=False, warn=False)
    assert all(np.array_equal(a, b) for a, b in zip(t1.params(), t2.params()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotCriticalWarning)
        r1 = tr.fact_identity(t1, X, y, 0.1)
        r2 = tr.fact_identity(t1, X, y[:, None], 0.1)
    assert r1.error == r2.error and r1.cos_fact == r2.cos_fact
