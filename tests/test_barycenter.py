"""Bures–Wasserstein barycentres (quadnet.geometry.barycenter). Tolerances: POT's fixed point is
run to eps 1e-12, so 1e-8 relative leaves four orders of margin; the optimality residual is
the iteration's own stopping quantity (tol 1e-13 x scale)."""

from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np
import pytest

from quadnet.exceptions import ConvergenceWarning
from quadnet.geometry.barycenter import bw_barycenter
from quadnet._linalg import random_orthogonal
from quadnet.geometry.manifold import PSDQuotient

RNG = np.random.default_rng(7)


def _residual(Us, w, U):
    M = PSDQuotient(*U.shape)
    return np.linalg.norm(sum(wi * M.log(U, Ui) for wi, Ui in zip(w, Us)))


@pytest.mark.parametrize("d,k", [(2, 3), (3, 4), (5, 6)])
def test_full_rank_matches_pot(d, k):
    ot = pytest.importorskip("ot")
    Us = RNG.standard_normal((k, d, d))
    w = RNG.dirichlet(np.ones(k))
    b = bw_barycenter(Us, w)
    C = np.einsum("kij,klj->kil", Us, Us)
    with contextlib.redirect_stdout(io.StringIO()):
        _, Cb = ot.gaussian.bures_wasserstein_barycenter(np.zeros((k, d)), C, w,
                                                         num_iter=3000, eps=1e-12)
    assert b.converged
    assert np.linalg.norm(b.Q - Cb) / np.linalg.norm(Cb) <= 1e-8


@pytest.mark.parametrize("d,r,k", [(5, 2, 4), (6, 3, 5), (2, 1, 3), (7, 6, 3)])
def test_rank_deficient_first_order_optimality(d, r, k):
    Us = RNG.standard_normal((k, d, r))
    w = RNG.dirichlet(np.ones(k))
    b = bw_barycenter(Us, w)
    assert b.converged and b.U.shape == (d, r)
    assert _residual(Us, w, b.U) <= 1e-10              # independent: PSDQuotient.log
    assert abs(b.residual - _residual(Us, w, b.U)) <= 1e-12
    # a local minimiser: small perturbations do not decrease the objective
    M = PSDQuotient(d, r)
    F = lambda U: 0.5 * sum(wi * M.dist(U, Ui) ** 2 for wi, Ui in zip(w, Us))  # noqa: E731
    assert abs(F(b.U) - b.objective) <= 1e-12 * b.objective
    for _ in range(5):
        assert F(b.U + 1e-4 * RNG.standard_normal((d, r))) >= b.objective - 1e-14


def test_orthogonal_invariance_of_every_input():
    d, r, k = 5, 3, 4
    Us = RNG.standard_normal((k, d, r))
    w = np.array([0.4, 0.3, 0.2, 0.1])
    Q = bw_barycenter(Us, w).Q
    for i in range(k):
        Vs = Us.copy()
        Vs[i] = Vs[i] @ random_orthogonal(r, RNG)
        assert np.linalg.norm(bw_barycenter(Vs, w).Q - Q) <= 1e-10 * np.linalg.norm(Q)


def test_closed_forms_and_determinism():
    U = RNG.standard_normal((4, 2))
    b = bw_barycenter([U])
    assert np.array_equal(b.Q, U @ U.T) and b.iterations == 0
    # commuting inputs: the barycentre of diag(a_i^2) is diag((sum w_i a_i)^2)
    a = np.abs(RNG.standard_normal((3, 4))) + 0.1
    w = np.array([0.2, 0.5, 0.3])
    b = bw_barycenter([np.diag(x) for x in a], w)
    assert np.allclose(b.Q, np.diag((w @ a) ** 2), rtol=1e-12, atol=0)
    Us = RNG.standard_normal((3, 4, 2))
    assert np.array_equal(bw_barycenter(Us).Q, bw_barycenter(list(Us)).Q)


def test_bad_input():
    Us = RNG.standard_normal((3, 4, 2))
    with pytest.raises(ValueError, match="nonnegative"):
        bw_barycenter(Us, [0.6, 0.6, -0.2])
    with pytest.raises(ValueError, match="sum to 1"):
        bw_barycenter(Us, [0.3, 0.3, 0.3])
    with pytest.raises(ValueError, match="one entry per point"):
        bw_barycenter(Us, [0.5, 0.5])
    with pytest.raises(ValueError, match="at least one"):
        bw_barycenter([])
    with pytest.raises(ValueError, match="shape"):
        bw_barycenter([Us[0], Us[1][:3]])
    with pytest.raises(ValueError, match="rank deficient"):
        bw_barycenter([Us[0], np.zeros((4, 2))])
    with pytest.raises(TypeError):
        bw_barycenter(3.0)
    with pytest.warns(ConvergenceWarning):
        b = bw_barycenter(RNG.standard_normal((4, 5, 3)), max_iter=1)
    assert not b.converged and b.residual > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bw_barycenter(Us).converged
