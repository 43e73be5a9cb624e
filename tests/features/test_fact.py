"""Tests of quadnet.fact: closed forms against autograd, the identity (★), training, errors."""

from __future__ import annotations

import warnings

import autograd.numpy as anp
import numpy as np

import pytest
from autograd import grad
from hypothesis import given, settings
from hypothesis import strategies as st

import quadnet
from quadnet import fact as F
from quadnet.features.training import _flatten, _make_objective, _make_value_and_grad
from quadnet.harness.checks import CheckContext, run_check

# Closed forms and autograd evaluate the same sums in different orders; on random (far from
# critical) points the residuals are O(1) and nothing cancels, so agreement is at the level of
# a few hundred ulps. 1e-10 relative is the requirement and leaves >100x margin.
RTOL = 1e-10


def rel(A, B) -> float:
    return float(np.linalg.norm(np.asarray(A) - np.asarray(B)) / np.linalg.norm(B))


def random_quadratic(rng, d, width, n, signed):
    a = rng.choice([-1.0, 1.0], size=width) * rng.uniform(0.5, 2.0, size=width) if signed else None
    net = F.QuadraticNet(rng.standard_normal((width, d)) / np.sqrt(d), a)
    X = rng.standard_normal((n, d))
    y = rng.standard_normal(n)
    return net, X, y


def random_linear(rng, d, widths, c, n):
    dims = [d, *widths, c]
    Ws = [rng.standard_normal((dims[i + 1], dims[i])) / np.sqrt(dims[i]) for i in range(len(dims) - 1)]
    X = rng.standard_normal((n, d))
    Y = rng.standard_normal((n, c))
    return F.DeepLinearNet(Ws), X, Y


# ---------------------------------------------------------------- independent per-sample gradients


def autograd_fact_quadratic(net, X, y, lam):
    """FACT, bFACT, AGOP of a quadratic net from autograd per-sample gradients (no closed form)."""
    W, a, n = net.W, net.a, X.shape[0]

    def loss_h(H):  # Σ_i ℓ_i(h_i): row i of its gradient is ∇_h ℓ_i
        f = anp.dot(anp.dot(H, W.T) ** 2, a)
        return 0.5 * anp.sum((f - y) ** 2)

    def loss_z(Z):  # as a function of the layer outputs z_i = W h_i
        return 0.5 * anp.sum((anp.dot(Z**2, a) - y) ** 2)

    def fsum(H):
        return anp.sum(anp.dot(anp.dot(H, W.T) ** 2, a))

    Gh = grad(loss_h)(X)
    Z = X @ W.T
    Gz = grad(loss_z)(Z)
    Gx = grad(fsum)(X)
    return -(Gh.T @ X) / (n * lam), -(Z.T @ Gz) / (n * lam), Gx.T @ Gx / n


def autograd_fact_linear(net, X, Y, lam, layer):
    Ws, n = net.Ws, X.shape[0]
    H = X
    for Wl in Ws[:layer]:
        H = H @ Wl.T

    def after(Z):
        for Wl in Ws[layer + 1:]:
            Z = anp.dot(Z, Wl.T)
        return Z

    def loss_h(Hv):
        return 0.5 * anp.sum((after(anp.dot(Hv, Ws[layer].T)) - Y) ** 2)

    def loss_z(Z):
        return 0.5 * anp.sum((after(Z) - Y) ** 2)

    Gh = grad(loss_h)(H)
    Z = H @ Ws[layer].T
    Gz = grad(loss_z)(Z)
    agop = 0.0
    for k in range(net.c):  # one output coordinate at a time: rows are ∇_h f_k(h_i)
        gk = grad(lambda Hv, k=k: anp.sum(after(anp.dot(Hv, Ws[layer].T))[:, k]))(H)
        agop = agop + gk.T @ gk / n
    return -(Gh.T @ H) / (n * lam), -(Z.T @ Gz) / (n * lam), agop


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), d=st.integers(1, 7), width=st.integers(1, 7),
       signed=st.booleans())
def test_quadratic_closed_forms_match_autograd(seed, d, width, signed):
    rng = np.random.default_rng(seed)
    net, X, y = random_quadratic(rng, d, width, 30, signed)
    lam = float(10 ** rng.uniform(-3, 0))
    fact, bfact, agop = autograd_fact_quadratic(net, X, y, lam)
    assert rel(F.fact_matrix(net, X, y, lam), fact) <= RTOL
    assert rel(F.bfact_matrix(net, X, y, lam), bfact) <= RTOL
    assert rel(F.agop(net, X), agop) <= RTOL
    # and the quadnet theory §6 expressions, written out once more
    r = net(X) - y
    C = (X * r[:, None]).T @ X / len(y)
    Sig = X.T @ X / len(y)
    assert rel(F.fact_matrix(net, X, y, lam), -(2 / lam) * net.Q @ C) <= RTOL
    assert rel(F.agop(net, X), 4 * net.Q @ Sig @ net.Q) <= RTOL


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), L=st.integers(1, 5), c=st.integers(1, 3))
def test_linear_closed_forms_match_autograd(seed, L, c):
    rng = np.random.default_rng(seed)
    widths = list(rng.integers(1, 6, size=L - 1))
    net, X, Y = random_linear(rng, int(rng.integers(1, 6)), widths, c, 25)
    lam = 0.3
    for layer in range(L):
        fact, bfact, agop = autograd_fact_linear(net, X, Y, lam, layer)
        assert rel(F.fact_matrix(net, X, Y, lam, layer), fact) <= RTOL
        assert rel(F.bfact_matrix(net, X, Y, lam, layer), bfact) <= RTOL
        if np.linalg.norm(agop) > 0:
            assert rel(F.agop(net, X, layer), agop) <= RTOL


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), L=st.integers(2, 5))
def test_linear_bfact_is_next_layers_fact_transposed(seed, L):
    # bFACT_l = FACT_{l+1}^T at every point, hence W_l W_l^T = W_{l+1}^T W_{l+1} (balancedness)
    # at critical points; both sides are the same sum in another order (rounding only).
    rng = np.random.default_rng(seed)
    net, X, Y = random_linear(rng, 4, [3] * (L - 1), 2, 20)
    for layer in range(L - 1):
        assert rel(F.bfact_matrix(net, X, Y, 0.1, layer),
                   F.fact_matrix(net, X, Y, 0.1, layer + 1).T) <= RTOL


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(["positive", "signed", "linear"]))
def test_analytic_gradient_matches_autograd(seed, kind):
    rng = np.random.default_rng(seed)
    if kind == "linear":
        net, X, y = random_linear(rng, 4, [3, 5], 2, 20)
    else:
        net, X, y = random_quadratic(rng, 5, 4, 20, kind == "signed")
    theta = _flatten(net.params())
    v1, g1 = _make_value_and_grad(net, X, y, 0.07)(theta)
    J = _make_objective(net, X, y, 0.07)
    assert abs(v1 - J(theta)) <= 1e-13 * abs(v1)  # same formula, different summation order
    assert rel(g1, grad(J)(theta)) <= 1e-12


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(["positive", "signed", "linear"]))
def test_identity_star_holds_everywhere(seed, kind):
    # (★): W^TW − FACT = W^T ∇_W J / λ and WW^T − bFACT = W (∇_W J)^T / λ at ANY point;
    # for a = 1 the first is U (∇_U J)^T / λ with U = W^T (quadnet theory §6).
    rng = np.random.default_rng(seed)
    lam = 0.05
    if kind == "linear":
        net, X, y = random_linear(rng, 4, [3, 5], 2, 20)
    else:
        net, X, y = random_quadratic(rng, 5, 4, 20, kind == "signed")
    _, grads = F.objective_and_grad(net, X, y, lam)
    for layer, (W, G) in enumerate(zip(net.params(), grads)):
        lhs = W.T @ W - F.fact_matrix(net, X, y, lam, layer)
        assert rel(lhs, W.T @ G / lam) <= 1e-11
        blhs = W @ W.T - F.bfact_matrix(net, X, y, lam, layer)
        assert rel(blhs, W @ G.T / lam) <= 1e-11
        if kind == "positive":
            U, gU = W.T, G.T
            assert rel(lhs, U @ gU.T / lam) <= 1e-11
    with pytest.warns(F.NotCriticalWarning) as rec:
        rep = F.fact_identity(net, X, y, lam)
    assert rec[0].message.grad_norm == pytest.approx(rep.grad_norm)
    assert rep.error <= rep.bound * (1 + 1e-12)
    assert rep.residual_identity <= 1e-12
    assert rep.cos_lower_bound <= rep.cos_fact + 1e-12


# ------------------------------------------------------------------------------ training


def test_trained_quadratic_nets_satisfy_fact():
    # issue: cos(W^TW, FACT) >= 0.99999 at trained points; the identity's bound makes it
    # (gradient <= 1e-9, ||W^TW|| = O(1), lambda = 1e-2 => 1 - cos <= 1e-12 or so).
    for seed, signed in [(0, False), (1, True), (2, False)]:
        rng = np.random.default_rng(seed)
        d, n = 6, 120
        X = rng.standard_normal((n, d))
        V = rng.standard_normal((d, 2))
        sgn = np.array([1.0, -1.0]) if signed else np.ones(2)
        y = ((X @ V) ** 2) @ sgn + 0.1 * rng.standard_normal(n)
        a = np.r_[np.ones(3), -np.ones(3)] if signed else None
        net = F.train(F.QuadraticNet(0.3 * rng.standard_normal((d, d)), a), X, y, 1e-2)
        assert net.info.converged and net.info.grad_norm <= 1e-9
        rep = F.fact_identity(net, X, y, 1e-2)
        assert rep.cos_fact >= 0.99999 and rep.cos_bfact >= 0.99999
        assert rep.cos_lower_bound >= 0.99999
        assert rep.error <= rep.bound + 1e3 * np.finfo(float).eps * rep.wtw_norm


@pytest.mark.parametrize("L", [2, 3, 5])
def test_trained_deep_linear_fact_and_nfa_power(L):
    rng = np.random.default_rng(L)
    d, c, n = 5, 3, 100
    M = rng.standard_normal((c, d))
    X = rng.standard_normal((n, d))
    Y = X @ M.T
    Ws = [rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(L - 1)]
    net = F.train(F.DeepLinearNet([*Ws, rng.standard_normal((c, d)) / np.sqrt(d)]), X, Y, 1e-2)
    assert net.info.grad_norm <= 1e-9
    W1 = net.Ws[0]
    assert F.cosine(W1.T @ W1, F.fact_matrix(net, X, Y, 1e-2)) >= 0.999
    # at a critical point the layers are balanced, so W1^T W1 = (P^T P)^{1/L} exactly and the
    # NFA's best power is 1/L (up to the scalar search's 1e-6 tolerance and the 1e-9 gradient)
    s, cbest = F.best_nfa_power(W1.T @ W1, F.agop(net, X))
    assert abs(s - 1 / L) <= 1e-3 and cbest >= 1 - 1e-8


def test_training_is_deterministic_and_returns_new_net():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((50, 4))
    y = np.sum(X[:, :2] ** 2, axis=1)
    net0 = F.QuadraticNet(0.3 * rng.standard_normal((4, 4)))
    n1, n2 = F.train(net0, X, y, 0.1), F.train(net0, X, y, 0.1)
    assert np.array_equal(n1.W, n2.W)  # same input => same bits
    assert n1 is not net0 and net0.info is None and n1.info.converged
    e1, e2 = F.nfa_counterexample(3), F.nfa_counterexample(np.random.default_rng(3))
    assert np.array_equal(e1.X, e2.X) and np.array_equal(e1.net0.W, e2.net0.W)


def test_convergence_warning_reports_gradient():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 4))
    y = np.sum(X**2, axis=1)
    with pytest.warns(F.ConvergenceWarning, match=r"\|\|grad J\|\| = ") as rec:
        net = F.train(F.QuadraticNet(rng.standard_normal((3, 4))), X, y, 0.1, max_iter=2,
                      polish=False)
    assert not net.info.converged
    assert rec[0].message.grad_norm == pytest.approx(net.info.grad_norm)
    assert net.info.grad_norm == pytest.approx(F.grad_norm_at(net, X, y, 0.1))


def test_gd_path_records_and_rejects_divergence():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 3))
    y = np.sum(X**2, axis=1)
    net0 = F.QuadraticNet(0.1 * rng.standard_normal((3, 3)))
    path = F.gd_path(net0, X, y, 0.1, eta=1e-2, steps=10, record_every=4)
    assert [k for k, _ in path] == [0, 4, 8, 10]
    assert isinstance(path, quadnet.Trajectory) and path.t.tolist() == [0, 4, 8, 10]
    assert path.loss[-1] == pytest.approx(F.objective_and_grad(path[-1][1], X, y, 0.1)[0])
    assert F.objective_and_grad(path[-1][1], X, y, 0.1)[0] < F.objective_and_grad(net0, X, y, 0.1)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # overflow on the way to inf
        with pytest.raises(ValueError, match="diverged"):
            F.gd_path(net0, X, y, 0.1, eta=1e3, steps=200)


def test_renamed_keywords_still_accepted_with_a_deprecation_warning():
    """``lr`` -> ``eta`` (gd_path) and ``maxiter`` -> ``max_iter`` (train): same results."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 3))
    y = np.sum(X**2, axis=1)
    net0 = F.QuadraticNet(0.1 * rng.standard_normal((3, 3)))
    new = F.gd_path(net0, X, y, 0.1, eta=1e-2, steps=3)
    with pytest.warns(DeprecationWarning, match="eta="):
        old = F.gd_path(net0, X, y, 0.1, lr=1e-2, steps=3)
    assert np.array_equal(old[-1][1].W, new[-1][1].W)
    with pytest.raises(TypeError, match="eta"):
        F.gd_path(net0, X, y, 0.1, eta=1e-2, lr=1e-2, steps=3)
    kw = dict(polish=False, warn=False)
    with pytest.warns(DeprecationWarning, match="max_iter="):
        a = F.train(net0, X, y, 0.1, maxiter=3, **kw)
    b = F.train(net0, X, y, 0.1, max_iter=3, **kw)
    assert np.array_equal(a.W, b.W)


def test_counterexample_prediction_formula():
    # the idealised design formula at the defaults (values quoted in docs/fact.md)
    assert F.counterexample_prediction(1.0) == pytest.approx(0.0207, abs=1e-4)
    assert F.counterexample_prediction(0.5) == pytest.approx(0.0449, abs=1e-4)
    ex = F.nfa_counterexample(0)
    assert ex.net0.width == 7 and np.sum(ex.net0.a < 0) == 1
    np.testing.assert_allclose(ex.basis.T @ ex.basis, np.eye(7), atol=1e-14)


def test_psd_power_and_cosine():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((5, 3))
    G = A @ A.T  # rank 3: zero eigenvalues must be handled
    H = F.psd_power(G, 0.5)
    assert rel(H @ H, G) <= 1e-12
    assert F.cosine(G, 2 * G) == pytest.approx(1.0, abs=1e-15)
    assert F.cosine(np.eye(2), np.diag([1.0, -1.0])) == pytest.approx(0.0, abs=1e-15)


# ------------------------------------------------------------------------------ bad input


def test_bad_input():
    rng = np.random.default_rng(0)
    net, X, y = random_quadratic(rng, 3, 2, 10, False)
    for lam in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="lam"):
            F.fact_matrix(net, X, y, lam)
    with pytest.raises(TypeError, match="lam"):
        F.train(net, X, y, "0.1")
    with pytest.raises(ValueError, match="X must have shape"):
        F.fact_matrix(net, X[:, :2], y, 0.1)
    with pytest.raises(ValueError, match="y must have shape"):
        F.bfact_matrix(net, X, y[:-1], 0.1)
    with pytest.raises(ValueError, match="layer"):
        F.fact_matrix(net, X, y, 0.1, layer=1)
    with pytest.raises(ValueError, match="a must have shape"):
        F.QuadraticNet(np.ones((2, 3)), a=np.ones(3))
    with pytest.raises(ValueError, match=r"Ws\[1\] must have 4 columns"):
        F.DeepLinearNet([np.ones((4, 3)), np.ones((2, 5))])
    with pytest.raises(TypeError, match="net"):
        F.agop(np.eye(3), X)
    lin, Xl, Yl = random_linear(rng, 3, [2], 2, 10)
    with pytest.raises(ValueError, match=r"y must have shape \(10, 2\)"):
        F.fact_matrix(lin, Xl, Yl[:, 0], 0.1)
    with pytest.raises(ValueError, match="zero matrix"):
        F.cosine(np.zeros((2, 2)), np.eye(2))
    with pytest.raises(ValueError, match="same shape"):
        F.cosine(np.eye(2), np.eye(3))
    with pytest.raises(ValueError, match="positive semidefinite"):
        F.psd_power(-np.eye(2), 0.5)
    with pytest.raises(ValueError, match="non-finite"):
        F.QuadraticNet(np.array([[np.nan, 1.0]]))


def test_public_api_and_module_not_shadowed():
    import types

    assert isinstance(quadnet.fact, types.ModuleType)
    # the module path quadnet.fact keeps every name of quadnet 0.1 ...
    for name in ("QuadraticNet", "DeepLinearNet", "fact_matrix", "bfact_matrix", "agop", "cosine",
                 "train"):
        assert name in F.__all__ and getattr(F, name) is getattr(quadnet.features, name)
    # ... and the top level re-exports the entry points without a deprecation
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        for name in ("QuadraticNet", "DeepLinearNet", "fact_matrix", "agop", "train"):
            assert getattr(quadnet, name) is getattr(quadnet.features, name)


def test_check_quick_passes():
    res = run_check("fact", CheckContext(quick=True))
    assert res.passed, [(r.claim, r.measured) for r in res.rows if not r.passed]


# ------------------------------------------------------------- extreme and malformed arguments
def _closed_form(s, K=6, alpha=0.1, A=50.0, rho=16.0, gamma=25.0):
    g = (gamma**2 * rho) ** s
    return (K / alpha + gamma / A * g) / (np.sqrt(K / alpha**2 + (gamma / A) ** 2)
                                          * np.sqrt(K + g**2))


@given(st.floats(0.01, 3.0), st.floats(0.01, 10.0), st.floats(0.1, 100.0),
       st.floats(0.5, 50.0), st.floats(0.5, 50.0))
@settings(max_examples=50, deadline=None)
def test_counterexample_prediction_matches_the_closed_form(s, alpha, A, rho, gamma):
    """The log-scale evaluation equals the docstring's formula where the latter is finite."""
    got = F.counterexample_prediction(s, alpha=alpha, A=A, rho=rho, gamma=gamma)
    assert got == pytest.approx(_closed_form(s, alpha=alpha, A=A, rho=rho, gamma=gamma),
                                rel=1e-12)


@pytest.mark.parametrize("kwargs", [{"s": 1e300}, {"alpha": 1e300}, {"alpha": 1e-300},
                                    {"A": 1e-300}, {"gamma": 1e300}, {"rho": 1e300}])
def test_counterexample_prediction_is_a_finite_cosine_for_extreme_arguments(kwargs):
    """No overflow: the cosine of two positive vectors lies in (0, 1]."""
    s = kwargs.pop("s", 1.0)
    c = F.counterexample_prediction(s, **kwargs)
    assert np.isfinite(c) and 0.0 < c <= 1.0 + 1e-15


@pytest.mark.parametrize("n", [10**9, 10**12])
def test_nfa_counterexample_beyond_the_memory_is_refused(n):
    from quadnet._validation import SizeTooLargeError
    with pytest.raises(SizeTooLargeError, match=rf"n = {n}, quiet = 6: nfa_counterexample "
                                                r"needs about"):
        F.nfa_counterexample(0, n=n)


@pytest.mark.parametrize("bad", ["abc", -1, object(), np.eye(3), float("nan")])
def test_nets_take_only_a_train_info(bad):
    W = np.eye(2)
    with pytest.raises(TypeError, match=r"info must be a TrainInfo or None"):
        F.QuadraticNet(W, info=bad)
    with pytest.raises(TypeError, match=r"info must be a TrainInfo or None"):
        F.DeepLinearNet((W,), info=bad)
    with pytest.raises(TypeError, match=r"info must be a TrainInfo or None"):
        F.QuadraticNet(W).with_params((W,), info=bad)


def test_with_params_names_params():
    net = F.QuadraticNet(np.eye(2))
    with pytest.raises(ValueError, match=r"params\[0\] has 1 non-finite entries"):
        net.with_params((np.array([[np.nan, 0.0], [0.0, 1.0]]),))
    with pytest.raises(ValueError, match=r"params\[0\] must have 2 rows"):
        net.with_params((np.ones((1, 2)),))
    with pytest.raises(ValueError, match=r"params\[0\] must be 2-dimensional"):
        net.with_params((np.ones((1, 2, 2)),))
    with pytest.raises(TypeError, match=r"params\[0\] must be real"):
        net.with_params((np.eye(2) * 1j,))
    deep = F.DeepLinearNet((np.eye(2), np.ones((1, 2))))
    with pytest.raises(ValueError, match=r"params\[1\] must have 2 columns"):
        deep.with_params((np.eye(2), np.ones((1, 3))))


def test_overflowing_outputs_are_refused_naming_x():
    net = F.QuadraticNet(np.eye(2))
    X = np.ones((3, 2)) * 1e300
    with pytest.raises(ValueError, match=r"QuadraticNet.__call__: the output is not finite .*"
                                         r"X \(max \|entry\| 1e\+300\)"):
        net(X)
    with pytest.raises(ValueError, match=r"agop: the AGOP is not finite .*X \(max"):
        F.agop(net, X)
    with pytest.raises(ValueError, match=r"DeepLinearNet.__call__: the output is not finite"):
        F.DeepLinearNet((np.eye(2) * 1e200,))(np.ones((1, 2)) * 1e200)


@pytest.mark.parametrize("arg", ["polish", "warn"])
@pytest.mark.parametrize("bad", [np.array([True, False]), "False", 2, 1.5, None])
def test_train_bool_options_must_be_bools(arg, bad):
    net = F.QuadraticNet(np.eye(2))
    X = np.random.default_rng(0).standard_normal((5, 2))
    with pytest.raises(TypeError, match=rf"{arg} must be a bool, got"):
        F.train(net, X, X[:, 0] ** 2, 1e-2, **{arg: bad})


def test_net_trajectory_checks_its_fields():
    from quadnet.features import NetTrajectory
    net = F.QuadraticNet(np.eye(2))
    with pytest.raises(ValueError, match=r"one entry per recorded step, got lengths 3, 2 and 3"):
        NetTrajectory([0, 1, 2], [net, net], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"steps has 1 non-finite entries"):
        NetTrajectory([0, np.nan], [net, net], [1.0, 2.0])
    with pytest.raises(TypeError, match=r"steps must be an array of real numbers"):
        NetTrajectory("abc", [net], [1.0])
    with pytest.raises(ValueError, match=r"steps must be integers >= 0"):
        NetTrajectory([-1], [net], [1.0])
    with pytest.raises(ValueError, match=r"steps must hold at least one step"):
        NetTrajectory([], [], [])
    with pytest.raises(ValueError, match=r"loss has 1 non-finite entries"):
        NetTrajectory([0], [net], [np.inf])
    with pytest.raises(TypeError, match=r"nets\[0\] must be a QuadraticNet or DeepLinearNet"):
        NetTrajectory([0], ["abc"], [1.0])
    with pytest.raises(TypeError, match=r"nets must be a sequence"):
        NetTrajectory([0], None, [1.0])
    with pytest.raises(TypeError, match=r"info must be a dict or None"):
        NetTrajectory([0], [net], [1.0], info="abc")
    with pytest.raises(ValueError, match=r"loss must be >= 0 .*got minimum -1"):
        NetTrajectory([0], [net], [-1.0])


def test_grad_norm_at_does_not_overflow_below_1e308():
    """At lam = 1e300 the gradient lam W of the weight decay is finite (|| . || = sqrt(2) e300
    for W = I); squaring its entries would overflow."""
    net = F.QuadraticNet(np.eye(2))
    X = np.random.default_rng(0).standard_normal((5, 2))
    g = F.grad_norm_at(net, X, X[:, 0] ** 2, 1e300)
    assert g == pytest.approx(np.sqrt(2.0) * 1e300, rel=1e-12)
    with pytest.raises(ValueError, match=r"objective_and_grad: J or grad J overflows float64 "
                                         r".*the extreme arguments: X \(max"):
        F.grad_norm_at(net, X * 1e300, X[:, 0] ** 2, 0.1)
