"""Tests of quadnet.commuting: CommutingSensing, joint eigenbasis, reduced dynamics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import quadnet
from quadnet.commuting.bregman import bregman_projection
from quadnet.harness.checks import CheckContext, run_check
from quadnet.commuting.algebra import CommutingSensing
from quadnet.harness.cells import selection_cell
from quadnet.geometry.conformance import random_orthogonal
from quadnet.dynamics import DivergenceError


def _sensing(seed, mult, m=3):
    rng = np.random.default_rng(seed)
    d = int(sum(mult))
    V = random_orthogonal(d, rng)
    spec = np.repeat(rng.standard_normal((m, len(mult))), mult, axis=1)
    y = spec @ rng.uniform(0.5, 1.5, d)
    return CommutingSensing(V, spec, y), rng


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), mult=st.lists(st.integers(1, 4), min_size=1, max_size=5),
       m=st.integers(1, 4))
def test_from_matrices_finds_blocks(seed, mult, m):
    cs, _ = _sensing(seed, mult, m)
    As = cs.matrices()
    found = CommutingSensing.from_matrices(As, cs.y)
    assert sorted(found.blocks.multiplicities.tolist()) == sorted(cs.blocks.multiplicities.tolist())
    # the matrices are rebuilt from the found basis and spectra to rounding (entries O(1), d<=20)
    np.testing.assert_allclose(found.matrices(), As, atol=1e-12)
    # projectors: idempotent, orthogonal, ranks m_k, summing to I
    P = found.blocks.projectors
    np.testing.assert_allclose(sum(P), np.eye(cs.d), atol=1e-12)
    for k, Pk in enumerate(P):
        np.testing.assert_allclose(Pk @ Pk, Pk, atol=1e-12)
        assert round(np.trace(Pk)) == found.blocks.multiplicities[k]


def test_from_matrices_rejects_non_commuting():
    cs, rng = _sensing(0, [1, 2, 2])
    As = cs.matrices()
    G = rng.standard_normal((cs.d, cs.d))
    As[1] += 1e-6 * (G + G.T)
    with pytest.raises(ValueError, match=r"do not commute: worst pair \(A_\d, A_\d\)"):
        CommutingSensing.from_matrices(As, cs.y)


@pytest.mark.parametrize("bad, match", [
    (lambda cs: (cs.matrices()[:, :, :-1], cs.y), "shape"),
    (lambda cs: (cs.matrices(), cs.y[:-1]), "y must have length"),
    (lambda cs: (cs.matrices() + np.triu(np.ones(cs.d), 1), cs.y), "not symmetric"),
    (lambda cs: (np.where(np.eye(cs.d) > 0, np.nan, cs.matrices()), cs.y), "non-finite"),
])
def test_from_matrices_bad_input(bad, match):
    cs, _ = _sensing(1, [1, 2])
    with pytest.raises(ValueError, match=match):
        CommutingSensing.from_matrices(*bad(cs))


def test_constructor_bad_input():
    cs, _ = _sensing(2, [2, 1])
    with pytest.raises(ValueError, match="orthogonal"):
        CommutingSensing(cs.basis * 1.1, cs.spectra, cs.y)
    with pytest.raises(ValueError, match="columns"):
        CommutingSensing(cs.basis, cs.spectra[:, :-1], cs.y)
    with pytest.raises(ValueError, match="y must have length"):
        CommutingSensing(cs.basis, cs.spectra, np.ones(7))
    with pytest.raises(ValueError, match="q0 must be >= 0"):
        cs.mirror_flow(-np.ones(cs.d), [0.0, 1.0])
    with pytest.raises(ValueError, match="non-finite"):
        cs.gradient_descent(np.full(cs.d, np.nan), 0.1, 3)
    with pytest.raises(ValueError, match="shape"):
        cs.gradient_descent(np.ones(cs.d + 1), 0.1, 3)
    with pytest.raises(ValueError, match="eta"):
        cs.gradient_descent(np.ones(cs.d), -0.1, 3)


def test_loss_protocol_against_explicit_matrices():
    cs, rng = _sensing(3, [1, 2, 1])
    As = cs.matrices()
    U = rng.standard_normal((cs.d, 2))
    Q = U @ U.T
    res = np.einsum("iab,ab->i", As, Q) - cs.y
    assert abs(cs.value(Q) - res @ res / (2 * cs.m)) <= 1e-12 * (1 + cs.value(Q))
    S = np.tensordot(res, As, axes=1) / cs.m
    np.testing.assert_allclose(cs.gradient(Q), S, atol=1e-12)
    H = rng.standard_normal((cs.d, cs.d))
    H = H + H.T
    DS = np.tensordot(np.einsum("iab,ab->i", As, H), As, axes=1) / cs.m
    np.testing.assert_allclose(cs.hessian_vector(Q, H), DS, atol=1e-12)
    # fast factor paths equal the generic ones derived in quadnet.Loss
    np.testing.assert_allclose(cs.factor_gradient(U), quadnet.Loss.factor_gradient(cs, U),
                               atol=1e-12)
    assert abs(cs.factor_value(U) - quadnet.Loss.factor_value(cs, U)) <= 1e-12
    xi = rng.standard_normal(U.shape)
    np.testing.assert_allclose(cs.factor_hvp(U, xi), quadnet.Loss.factor_hvp(cs, U, xi),
                               atol=1e-11)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_factor_descent_equals_reduced_descent(seed):
    cs, _ = _sensing(seed, [1, 2, 3])
    eps = 1e-2
    q_lim = bregman_projection(cs.spectra, cs.y, np.full(cs.d, eps)).q
    lam_max = np.linalg.eigvalsh((cs.spectra * q_lim) @ cs.spectra.T * 4 / cs.m)[-1]
    eta = 0.3 / lam_max
    tr = quadnet.gradient_descent(cs, np.sqrt(eps) * np.eye(cs.d), eta, 200, record_every=20)
    rt = cs.gradient_descent(np.full(cs.d, eps), eta, 200, record_every=20)
    for Q, q in zip(tr.Q, rt.q):
        # same recursion in two coordinates; 200 steps of O(1e-16) rounding each
        assert np.linalg.norm(Q - cs.to_matrix(q)) <= 1e-11 * np.linalg.norm(Q)
        assert cs.commutant_residual(Q) <= 1e-12


def test_mirror_flow_limit_is_bregman_projection():
    cs, _ = _sensing(4, [1, 2, 1, 2], m=2)
    q0 = np.full(cs.d, 0.1)
    br = bregman_projection(cs.spectra, cs.y, q0)
    lam = np.linalg.eigvalsh((cs.spectra * br.q) @ cs.spectra.T * 4 / cs.m)
    tr = cs.mirror_flow(q0, [0.0, 40.0 / lam[0]], method="LSODA", rtol=1e-10, atol=1e-12)
    # exp(-40) ~ 4e-18 of the transient left; RK/multistep steps keep log q - log q0 in
    # range(A^T) to rounding, so the limit is the projection to ~1e-13
    assert np.linalg.norm(tr.q[-1] - br.q) <= 1e-10 * np.linalg.norm(br.q)
    assert tr.loss[-1] <= 1e-20 + 1e-20 * cs.reduced_loss(q0)


def test_zero_coordinates_stay_zero_and_divergence():
    cs, _ = _sensing(5, [1, 1, 1, 1], m=2)
    q0 = np.array([0.0, 1.0, 0.5, 0.0])
    tr = cs.mirror_flow(q0, [0.0, 1.0, 2.0])
    assert np.all(tr.q[:, [0, 3]] == 0.0)
    gd = cs.gradient_descent(q0, 1e-3, 10)
    assert np.all(gd.q[:, [0, 3]] == 0.0)
    with pytest.raises(DivergenceError, match="eta"):
        cs.gradient_descent(np.ones(4), 1e3, 100)


def test_selection_cell_is_pure_and_complete():
    a = selection_cell(1e-30, 3)
    b = selection_cell(1e-30, 3)
    assert a == b
    for key in ("trace_gap", "dist", "entropy_bound", "kkt_residual", "log_inv_eps"):
        assert np.isfinite(a[key])
    c = selection_cell(None, 3, log_inv_eps=1e4)
    assert np.isfinite(c["dist"]) and c["kkt_residual"] <= 1e-11
    with pytest.raises(TypeError):
        selection_cell(1e-3, 3, log_inv_eps=5.0)
    with pytest.raises(ValueError):
        selection_cell(2.0, 3)


def test_selection_check_quick_passes():
    res = run_check("selection", CheckContext(quick=True))
    assert res.passed, [r for r in res.rows if not r.passed]


def test_from_matrices_close_and_scaled_eigenvalues():
    rng = np.random.default_rng(9)
    d = 8
    V = random_orthogonal(d, rng)
    spec = rng.standard_normal((2, d))
    spec[:, 1] = spec[:, 0] + 1e-7  # distinct but close joint eigenvalues: two blocks
    spec[:, 3] = spec[:, 2]         # a repeated one: one block of rank 2
    ref = CommutingSensing(V, spec, np.ones(2))
    for s in (1.0, 1e-200, 1e200):
        cs = CommutingSensing.from_matrices(ref.matrices() * s, np.ones(2))
        assert sorted(cs.blocks.multiplicities.tolist()) == [1] * 6 + [2]
        # eigenvalue gap 1e-7: eigenvectors are determined to ~1e-16/1e-7, matrices to rounding
        np.testing.assert_allclose(cs.matrices() / s, ref.matrices(), atol=1e-12)
    # zero matrices commute and form one block
    zero = CommutingSensing.from_matrices(np.zeros((2, 4, 4)), np.ones(2))
    assert zero.blocks.multiplicities.tolist() == [4]
