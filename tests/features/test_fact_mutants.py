"""Properties of the public layer of quadnet.features.fact, against independent references.

Written for mutation testing of ``quadnet/features/fact.py`` (``scripts/mutation.py
--public-only``): FACT, bFACT and AGOP against their defining per-sample sums (hand-written
gradients of each sample's loss, one sample at a time), the nets against explicit loops, the
NFA comparisons against a dense eigendecomposition and a fine grid, and every refusal by its
message.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from quadnet._validation import NonFiniteResultError
from quadnet.features.fact import (
    DeepLinearNet,
    QuadraticNet,
    TrainInfo,
    agop,
    best_nfa_power,
    bfact_matrix,
    cosine,
    fact_matrix,
    nfa_cosines,
    psd_power,
)


def _quad(seed=0, d=3, width=4, n=7, signed=True):
    rng = np.random.default_rng(seed)
    a = rng.choice([-1.0, 1.0], width) * rng.uniform(0.5, 2, width) if signed else None
    return (QuadraticNet(rng.standard_normal((width, d)), a), rng.standard_normal((n, d)),
            rng.standard_normal(n))


def _lin(seed=0, dims=(3, 4, 2, 2), n=6):
    rng = np.random.default_rng(seed)
    Ws = [rng.standard_normal((dims[i + 1], dims[i])) for i in range(len(dims) - 1)]
    return DeepLinearNet(Ws), rng.standard_normal((n, dims[0])), rng.standard_normal((n, dims[-1]))


def _prod(mats, dim):
    P = np.eye(dim)
    for W in mats:
        P = W @ P
    return P


# ---------------------------------------------------------------------------------- nets


def test_quadratic_net_is_the_sum_of_squares_and_is_frozen():
    net, X, _ = _quad()
    want = np.array([sum(net.a[j] * (net.W[j] @ x) ** 2 for j in range(net.width)) for x in X])
    np.testing.assert_allclose(net(X), want, rtol=1e-12)
    Q = sum(net.a[j] * np.outer(net.W[j], net.W[j]) for j in range(net.width))
    np.testing.assert_allclose(net.Q, Q, rtol=1e-12, atol=1e-14)
    assert np.array_equal(net.Q, net.Q.T)
    assert (net.width, net.d) == (4, 3) and net.params() == (net.W,)
    assert not net.W.flags.writeable and not net.a.flags.writeable
    W0, a0 = np.ones((2, 3)), np.array([1.0, -1.0])
    n2 = QuadraticNet(W0, a0)
    W0[0, 0], a0[0] = 5.0, 5.0                       # the net holds copies
    assert n2.W[0, 0] == 1.0 and n2.a[0] == 1.0
    np.testing.assert_array_equal(QuadraticNet(np.ones((3, 2))).a, np.ones(3))


def test_deep_linear_net_is_the_product_and_is_frozen():
    net, X, _ = _lin()
    P = net.Ws[2] @ net.Ws[1] @ net.Ws[0]
    np.testing.assert_allclose(net.P, P, rtol=1e-12)
    np.testing.assert_allclose(net(X), X @ P.T, rtol=1e-12)
    assert (net.depth, net.d, net.c) == (3, 3, 2) and net.params() == net.Ws
    assert isinstance(net.Ws, tuple) and all(not W.flags.writeable for W in net.Ws)
    W0 = np.eye(2)
    n1 = DeepLinearNet([W0])
    W0[0, 0] = 7.0
    assert n1.Ws[0][0, 0] == 1.0 and n1.depth == 1
    np.testing.assert_array_equal(n1.P, np.eye(2))


def test_with_params_builds_the_same_architecture():
    net, X, _ = _quad()
    info = TrainInfo(grad_norm=0.0, objective=1.0, converged=True, gtol=1e-9, n_iter=1)
    other = net.with_params((2 * net.W,), info)
    np.testing.assert_array_equal(other.a, net.a)
    assert other.info is info and net.with_params((net.W,)).info is None
    np.testing.assert_allclose(other(X), 4 * net(X), rtol=1e-12)
    lin, Xl, _ = _lin()
    new = lin.with_params(tuple(2 * W for W in lin.Ws), info)
    assert new.info is info
    np.testing.assert_allclose(new(Xl), 8 * lin(Xl), rtol=1e-12)
    with pytest.raises(TypeError, match=r"^DeepLinearNet.with_params: info must be a TrainInfo "
                                        r"or None, got int$"):
        lin.with_params(lin.Ws, 3)
    with pytest.raises(ValueError, match=r"^DeepLinearNet.with_params: params\[1\] must have 4 "
                                         r"columns \(the output size of params\[0\]\), got shape "
                                         r"\(2, 3\)$"):
        lin.with_params((lin.Ws[0], np.ones((2, 3)), lin.Ws[2]))
    with pytest.raises(ValueError, match=r"^QuadraticNet.with_params: params\[0\] must have 4 "
                                         r"rows \(one per output weight a_j\), got shape \(3, 3\)$"):
        net.with_params((np.ones((3, 3)),))


@pytest.mark.parametrize("make, exc, match", [
    (lambda: DeepLinearNet(np.eye(2)), TypeError,
     r"^DeepLinearNet: Ws must be a sequence of matrices \(Ws\[0\] is the first layer\)$"),
    (lambda: DeepLinearNet(3), TypeError, r"^DeepLinearNet: Ws must be a sequence of matrices"),
    (lambda: DeepLinearNet(()), ValueError, r"^DeepLinearNet: Ws must contain at least one matrix$"),
    (lambda: DeepLinearNet((np.eye(2), np.ones((2, 3)))), ValueError,
     r"^DeepLinearNet: Ws\[1\] must have 2 columns \(the output size of Ws\[0\]\), got shape "
     r"\(2, 3\)$"),
    (lambda: DeepLinearNet((np.eye(2), np.eye(2), np.ones((2, 3)))), ValueError,
     r"^DeepLinearNet: Ws\[2\] must have 2 columns \(the output size of Ws\[1\]\)"),
    (lambda: DeepLinearNet((np.eye(2), np.array([[np.nan, 1.0]]))), ValueError,
     r"^DeepLinearNet: Ws\[1\] has 1 non-finite"),
    (lambda: DeepLinearNet((np.eye(2),), info=3), TypeError,
     r"^DeepLinearNet: info must be a TrainInfo or None, got int$"),
    (lambda: QuadraticNet(np.array([[np.nan, 1.0]])), ValueError,
     r"^QuadraticNet: W has 1 non-finite"),
    (lambda: QuadraticNet(np.ones((0, 2))), ValueError, r"^QuadraticNet: W must be non-empty"),
    (lambda: QuadraticNet(np.eye(2), a=np.ones((2, 1))), ValueError,
     r"^QuadraticNet: a must be 1-dimensional, got shape \(2, 1\)$"),
    (lambda: QuadraticNet(np.eye(2), a=np.ones(3)), ValueError, r"^QuadraticNet: a must have shape"),
    (lambda: QuadraticNet(np.eye(2), info="x"), TypeError,
     r"^QuadraticNet: info must be a TrainInfo or None, got str$"),
])
def test_net_refusals(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


def test_overflowing_outputs_name_the_arguments_and_do_not_warn():
    net = QuadraticNet(np.eye(2), np.array([1.0, -1.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(NonFiniteResultError, match=r"^QuadraticNet.__call__: the output is "
                                                       r"not finite \(float64 overflow\) for X "
                                                       r"\(max"):
            net(np.full((1, 2), 1e200))               # inf - inf: an invalid operation
        with pytest.raises(NonFiniteResultError, match=r"^QuadraticNet.__call__: the output .* "
                                                       r"for W \(max"):
            QuadraticNet(np.full((1, 2), 1e200))(np.ones((1, 2)))
        lin = DeepLinearNet((np.eye(2), np.full((1, 2), 1e10)))
        with pytest.raises(NonFiniteResultError, match=r"^DeepLinearNet.__call__: the output is "
                                                       r"not finite \(float64 overflow\) for X "
                                                       r"\(max"):
            lin(np.array([[1e300, -1e300]]))          # inf - inf: an invalid operation


# ------------------------------------------------------------------------ FACT, bFACT, AGOP


def _quad_refs(net, X, y, lam):
    """FACT, bFACT, AGOP of a quadratic net from per-sample gradients written by hand:
    ``∇_x f = 2 Q x``, ``∇_z f = 2 a ⊙ z`` (``z = W x``), ``ℓ_i = ½ r_i²``."""
    n = X.shape[0]
    F = np.zeros((net.d, net.d))
    B = np.zeros((net.width, net.width))
    G = np.zeros((net.d, net.d))
    for x, t in zip(X, y):
        z = net.W @ x
        f = float(np.sum(net.a * z**2))
        gx = 2 * net.Q @ x
        F += (f - t) * np.outer(gx, x)
        B += np.outer(z, (f - t) * 2 * net.a * z)
        G += np.outer(gx, gx)
    return -F / (n * lam), -B / (n * lam), G / n


def _lin_refs(net, X, Y, lam, layer):
    Ws, n = net.Ws, X.shape[0]
    before = _prod(Ws[:layer], net.d)
    after = _prod(Ws[layer + 1:], Ws[layer].shape[0])
    J = after @ Ws[layer]                              # ∂f/∂h at layer ``layer``
    F = np.zeros((Ws[layer].shape[1],) * 2)
    B = np.zeros((Ws[layer].shape[0],) * 2)
    for x, t in zip(X, Y):
        h = before @ x
        r = net.P @ x - t
        F += np.outer(J.T @ r, h)
        B += np.outer(Ws[layer] @ h, after.T @ r)
    return -F / (n * lam), -B / (n * lam), J.T @ J


@pytest.mark.parametrize("signed", [True, False])
def test_quadratic_fact_bfact_agop_are_the_per_sample_sums(signed):
    net, X, y = _quad(signed=signed)
    F, B, G = _quad_refs(net, X, y, 0.3)
    np.testing.assert_allclose(fact_matrix(net, X, y, 0.3), F, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fact_matrix(net, X, y, 0.3, layer=0), F, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(bfact_matrix(net, X, y, 0.3), B, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(agop(net, X), G, rtol=1e-10, atol=1e-12)
    assert np.array_equal(agop(net, X), agop(net, X).T)


@pytest.mark.parametrize("layer", [0, 1, 2])
def test_deep_linear_fact_bfact_agop_are_the_per_sample_sums(layer):
    net, X, Y = _lin()
    F, B, G = _lin_refs(net, X, Y, 0.7, layer)
    np.testing.assert_allclose(fact_matrix(net, X, Y, 0.7, layer), F, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(bfact_matrix(net, X, Y, 0.7, layer), B, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(agop(net, X, layer), G, rtol=1e-10, atol=1e-12)


def test_one_output_deep_linear_takes_a_vector_target():
    net, X, Y = _lin(dims=(3, 2, 1))
    np.testing.assert_allclose(fact_matrix(net, X, Y[:, 0], 1.0), fact_matrix(net, X, Y, 1.0))
    np.testing.assert_allclose(bfact_matrix(net, X, Y[:, 0], 1.0, 1),
                               _lin_refs(net, X, Y, 1.0, 1)[1], rtol=1e-10, atol=1e-12)


def test_fact_refusals_name_the_function():
    net, X, y = _quad()
    lin, Xl, Yl = _lin()
    big = 1e300 * np.ones(7)
    for fn in (fact_matrix, bfact_matrix):
        name = fn.__name__
        with pytest.raises(ValueError, match=rf"^{name}: lam must be finite and > 0, got 0.0$"):
            fn(net, X, y, 0.0)
        with pytest.raises(TypeError, match=rf"^{name}: lam must be a real number"):
            fn(net, X, y, "1")
        with pytest.raises(ValueError, match=rf"^{name}: lam = 1e-300 is too small: the matrix / "
                                             r"lam overflows float64 \(max \|entry\| before "
                                             r"dividing"):
            fn(net, X, big, 1e-300)
        with pytest.raises(ValueError, match=rf"^{name}: lam = 1e-300 is too small"):
            fn(lin, Xl, 1e300 * np.ones_like(Yl), 1e-300)
        with pytest.raises(ValueError, match=rf"^{name}: layer must be in 0..0: a QuadraticNet "
                                             r"has one trained layer \(0\); got 1$"):
            fn(net, X, y, 1.0, layer=1)
        with pytest.raises(ValueError, match=rf"^{name}: layer must be in 0..2: this "
                                             r"DeepLinearNet has layers 0..2; got 3$"):
            fn(lin, Xl, Yl, 1.0, layer=3)
    with pytest.raises(ValueError, match=r"^agop: layer must be in 0..2"):
        agop(lin, Xl, 3)
    with pytest.raises(TypeError, match=r"^agop: net must be a QuadraticNet or DeepLinearNet, "
                                        r"got ndarray$"):
        agop(np.eye(2), X)


def test_agop_overflow_names_the_arguments():
    net = QuadraticNet(np.eye(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(NonFiniteResultError, match=r"^agop: the AGOP is not finite \(float64 "
                                                       r"overflow\) for X \(max"):
            agop(net, np.full((2, 2), 1e200))
        big = DeepLinearNet((np.full((2, 2), 1e200), np.ones((1, 2))))
        with pytest.raises(NonFiniteResultError, match=r"^agop: .* for net.params\(\)\[0\] \(max"):
            agop(big, np.ones((2, 2)))
        with pytest.raises(NonFiniteResultError, match=r"^agop: .* for net.params\(\)\[1\] \(max"):
            agop(DeepLinearNet((np.eye(2), np.full((1, 2), 1e200))), np.ones((2, 2)), 1)


# --------------------------------------------------------------------------- comparisons


def test_cosine_and_its_refusals():
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    want = float(np.sum(A * B) / np.sqrt(np.sum(A * A) * np.sum(B * B)))
    assert cosine(A, B) == pytest.approx(want, rel=1e-12)
    assert cosine([1.0, 0.0], [0.0, 2.0]) == 0.0
    with pytest.raises(ValueError, match=r"^cosine: A has 1 non-finite"):
        cosine(np.array([np.nan, 1.0]), np.ones(2))
    with pytest.raises(ValueError, match=r"^cosine: B has 1 non-finite"):
        cosine(np.ones(2), np.array([np.nan, 1.0]))
    with pytest.raises(ValueError, match=r"^cosine: A and B must have the same shape, got \(2,\) "
                                         r"and \(3,\)$"):
        cosine(np.ones(2), np.ones(3))


def test_psd_power_against_a_dense_eigendecomposition():
    rng = np.random.default_rng(1)
    R = rng.standard_normal((4, 2))
    G = R @ R.T                                       # rank 2
    w, V = np.linalg.eigh(G)
    w[w < 4 * np.finfo(float).eps * w.max()] = 0.0   # the rounding of the two zero eigenvalues
    for s in (0.5, 1.0, 1.7):
        want = (V * w**s) @ V.T
        np.testing.assert_allclose(psd_power(G, s), want, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match=r"^psd_power: s must be finite and > 0, got 0.0$"):
        psd_power(G, 0)
    with pytest.raises(TypeError, match=r"^psd_power: s must be a real number"):
        psd_power(G, "a")
    with pytest.raises(ValueError, match=r"^psd_power: G must be symmetric"):
        psd_power(np.array([[1.0, 2.0], [0.0, 1.0]]), 1)
    with pytest.raises(ValueError, match=r"^psd_power: G must be positive semidefinite"):
        psd_power(-np.eye(2), 1)
    with pytest.raises(ValueError, match=r"^psd_power: G has 1 non-finite"):
        psd_power(np.array([[np.nan, 0.0], [0.0, 1.0]]), 1)


def _cos_ref(WtW, G, s):
    w, V = np.linalg.eigh(G)
    Gs = (V * np.clip(w, 0, None) ** s) @ V.T
    return float(np.sum(WtW * Gs) / np.linalg.norm(WtW) / np.linalg.norm(Gs))


def test_nfa_cosines_against_dense_powers():
    rng = np.random.default_rng(2)
    R = rng.standard_normal((4, 4))
    G = R @ R.T
    S = rng.standard_normal((4, 4))
    WtW = S @ S.T
    powers = [0.25, 0.5, 1.0, 2.0]
    np.testing.assert_allclose(nfa_cosines(WtW, G, powers),
                               [_cos_ref(WtW, G, s) for s in powers], rtol=1e-10)
    assert nfa_cosines(WtW, G, [1.0]).shape == (1,)
    assert nfa_cosines(WtW, G, np.array([0.5])).tolist() == pytest.approx([_cos_ref(WtW, G, .5)])
    with pytest.raises(ValueError, match=r"^nfa_cosines: powers must contain at least one power$"):
        nfa_cosines(WtW, G, [])
    with pytest.raises(ValueError, match=r"^nfa_cosines: powers must be > 0, got min 0$"):
        nfa_cosines(WtW, G, [0.5, 0.0])
    with pytest.raises(ValueError, match=r"^nfa_cosines: powers must be > 0, got min -1$"):
        nfa_cosines(WtW, G, [-1.0])
    with pytest.raises(ValueError, match=r"^nfa_cosines: powers must be 1-dimensional, got shape "
                                         r"\(1, 1\)$"):
        nfa_cosines(WtW, G, [[0.5]])
    with pytest.raises(ValueError, match=r"^nfa_cosines: powers has 1 non-finite"):
        nfa_cosines(WtW, G, [np.nan])
    with pytest.raises(ValueError, match=r"^nfa_cosines: G must be positive semidefinite"):
        nfa_cosines(WtW, -G, [1.0])
    with pytest.raises(ValueError, match=r"^nfa_cosines: WtW is the zero matrix"):
        nfa_cosines(0 * WtW, G, [1.0])


def test_best_nfa_power_is_the_grid_maximum_refined():
    rng = np.random.default_rng(3)
    R = rng.standard_normal((5, 5))
    G = R @ R.T
    WtW = psd_power(G, 0.7) + 0.3 * np.eye(5)         # peak strictly inside, not at 0.7
    s, c = best_nfa_power(WtW, G)
    grid = np.linspace(0.02, 2.0, 4001)
    cs = np.array([_cos_ref(WtW, G, t) for t in grid])
    k = int(np.argmax(cs))
    assert abs(s - grid[k]) <= 2e-3                   # grid step 5e-4; a flat peak
    assert c >= cs.max() - 1e-9 and c == pytest.approx(_cos_ref(WtW, G, s), rel=1e-12)
    # an exact power: found to xatol
    s2, c2 = best_nfa_power(psd_power(G, 0.5), G, (0.1, 1.5))
    assert abs(s2 - 0.5) < 1e-5 and c2 == pytest.approx(1.0, abs=1e-10)
    # the peak at the lower end of the bracket
    s3, c3 = best_nfa_power(psd_power(G, 0.05), G, (0.1, 1.0))
    assert s3 == pytest.approx(0.1, abs=1e-5) and c3 == pytest.approx(_cos_ref(psd_power(G, 0.05),
                                                                              G, 0.1), rel=1e-9)
    s4, _ = best_nfa_power(psd_power(G, 3.0), G, [0.5, 1.5])        # a list, upper end
    assert s4 == pytest.approx(1.5, abs=1e-5)


@pytest.mark.parametrize("bounds, exc, match", [
    ((1,), TypeError, r"^best_nfa_power: bounds must be a pair \(lo, hi\) of positive numbers, "
                      r"got \(1,\)$"),
    ((1, 2, 3), TypeError, r"^best_nfa_power: bounds must be a pair"),
    (3, TypeError, r"^best_nfa_power: bounds must be a pair .* got 3$"),
    ("ab", TypeError, r"^best_nfa_power: bounds must be a pair .* got 'ab'$"),
    ((0, 1), ValueError, r"^best_nfa_power: bounds must be finite and > 0, got 0.0$"),
    ((1, "a"), TypeError, r"^best_nfa_power: bounds must be a real number"),
    ((2, 1), ValueError, r"^best_nfa_power: bounds must satisfy lo < hi, got \(2, 1\)$"),
    ((1, 1), ValueError, r"^best_nfa_power: bounds must satisfy lo < hi"),
])
def test_best_nfa_power_refusals(bounds, exc, match):
    with pytest.raises(exc, match=match):
        best_nfa_power(np.eye(2), np.diag([1.0, 2.0]), bounds)


def test_best_nfa_power_matrix_refusals():
    with pytest.raises(ValueError, match=r"^best_nfa_power: G must be positive semidefinite"):
        best_nfa_power(np.eye(2), -np.eye(2))
    with pytest.raises(ValueError, match=r"^best_nfa_power: WtW is the zero matrix"):
        best_nfa_power(np.zeros((2, 2)), np.eye(2))


def test_agop_of_weights_near_the_float64_limit_is_refused_without_warnings():
    # Q = WᵀW = 1e308 is finite; 4 Q overflows elementwise
    net = QuadraticNet(np.diag([1e154, 1e154]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(NonFiniteResultError, match=r"^agop: the AGOP is not finite .* for "
                                                       r"net.params\(\)\[0\] \(max"):
            agop(net, np.eye(2))
