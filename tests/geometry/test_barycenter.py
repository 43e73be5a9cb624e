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
    b = bw_barycenter(Us, w, inputs="factors")
    C = np.einsum("kij,klj->kil", Us, Us)
    with contextlib.redirect_stdout(io.StringIO()):
        _, Cb = ot.gaussian.bures_wasserstein_barycenter(np.zeros((k, d)), C, w,
                                                         num_iter=3000, eps=1e-12)
    assert b.converged
    assert np.linalg.norm(b.Q - Cb) / np.linalg.norm(Cb) <= 1e-8
    # the same matrices, given as matrices (as POT takes them)
    bm = bw_barycenter(C, w, inputs="matrices")
    assert np.linalg.norm(bm.Q - Cb) / np.linalg.norm(Cb) <= 1e-8


@pytest.mark.parametrize("d,r,k", [(5, 2, 4), (6, 3, 5), (2, 1, 3), (7, 6, 3)])
def test_rank_deficient_first_order_optimality(d, r, k):
    Us = RNG.standard_normal((k, d, r))
    w = RNG.dirichlet(np.ones(k))
    b = bw_barycenter(Us, w, inputs="factors", max_rank=r)
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
    Q = bw_barycenter(Us, w, inputs="factors").Q
    for i in range(k):
        Vs = Us.copy()
        Vs[i] = Vs[i] @ random_orthogonal(r, RNG)
        assert np.linalg.norm(bw_barycenter(Vs, w, inputs="factors").Q - Q) <= 1e-10 * np.linalg.norm(Q)


def test_closed_forms_and_determinism():
    U = RNG.standard_normal((4, 2))
    b = bw_barycenter([U], inputs="factors")
    assert np.array_equal(b.Q, U @ U.T) and b.iterations == 0
    # commuting inputs: the barycentre of diag(a_i^2) is diag((sum w_i a_i)^2)
    a = np.abs(RNG.standard_normal((3, 4))) + 0.1
    w = np.array([0.2, 0.5, 0.3])
    b = bw_barycenter([np.diag(x) for x in a], w, inputs="factors")
    assert np.allclose(b.Q, np.diag((w @ a) ** 2), rtol=1e-12, atol=0)
    Us = RNG.standard_normal((3, 4, 2))
    assert np.array_equal(bw_barycenter(Us, inputs="factors").Q,
                          bw_barycenter(list(Us), inputs="factors").Q)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
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
        assert bw_barycenter(Us, inputs="factors").converged


# ------------------------------------------------ the barycentre over all PSD matrices
def _psqrt(A):
    lam, E = np.linalg.eigh(0.5 * (A + A.T))
    return (E * np.sqrt(np.clip(lam, 0.0, None))) @ E.T


def _fixed_point_reference(Qs, w, iters):
    """Álvarez-Esteban, del Barrio, Cuesta-Albertos & Matrán (2016) on PSD matrices, started at
    a full-rank multiple of the identity: S <- S^{-1/2} (sum_i w_i (S^{1/2} Q_i S^{1/2})^{1/2})^2
    S^{-1/2} (independent of quadnet: numpy eigendecompositions only)."""
    d = Qs.shape[1]
    S = np.eye(d) * float(np.mean([np.trace(Q) for Q in Qs])) / d
    for _ in range(iters):
        R = _psqrt(S)
        lam, E = np.linalg.eigh(R)
        Ri = (E / np.where(lam > 1e-300, lam, np.inf)) @ E.T
        M = sum(wi * _psqrt(R @ Q @ R) for wi, Q in zip(w, Qs))
        S = Ri @ M @ M @ Ri
        S = 0.5 * (S + S.T)
    return S


def _objective(S, Qs, w):
    R = _psqrt(S)
    return 0.5 * sum(wi * (np.trace(S) + np.trace(Q) - 2.0 * np.trace(_psqrt(R @ Q @ R)))
                     for wi, Q in zip(w, Qs))


def _kkt(Us, w, U):
    """G = I - sum_i w_i T_i with T_i = U_i (U_i^T Q U_i)^{-1/2} U_i^T (independent code)."""
    Q = U @ U.T
    G = np.eye(Q.shape[0])
    for wi, Ui in zip(w, Us):
        lam, E = np.linalg.eigh(Ui.T @ Q @ Ui)
        G -= wi * Ui @ (E / np.sqrt(lam)) @ E.T @ Ui.T
    return 0.5 * (G + G.T)


@pytest.mark.parametrize("seed", [0, 2, 3, 6])
def test_rank_deficient_inputs_give_the_psd_barycentre(seed):
    """Five rank-2 factors in d = 8, Dirichlet weights: the result is the minimiser over all
    PSD matrices (the fixed point on matrices, 3000 steps, converges sublinearly: measured
    ||Q - Q_ref|| / ||Q_ref|| <= 6e-5 here, so 1e-3 is the tolerance) and its objective is
    at least as low; seeds 2 and 3 have a barycentre of rank 3 > 2."""
    rng = np.random.default_rng(seed)
    Us = rng.standard_normal((5, 8, 2))
    w = rng.dirichlet(np.ones(5))
    Qs = np.einsum("kij,klj->kil", Us, Us)
    b = bw_barycenter(Us, w, inputs="factors")
    S = _fixed_point_reference(Qs, w, 3000)
    assert b.converged
    assert np.linalg.norm(b.Q - S) / np.linalg.norm(S) <= 1e-3
    # the trace formula takes square roots of eigenvalues at rounding level (the reference's
    # small eigenvalues, the barycentre's zero ones): ~sqrt(eps) = 1.5e-8 absolute per term,
    # measured up to 9e-8 here, so objectives are compared to 1e-6 relative
    assert b.objective <= _objective(S, Qs, w) * (1 + 1e-6)
    assert abs(b.objective - _objective(b.Q, Qs, w)) <= 1e-6 * b.objective
    if seed in (2, 3):
        assert b.rank == 3
        ev = np.linalg.eigvalsh(S)[::-1]
        assert ev[2] / ev[0] > 0.1                          # the reference agrees: rank 3
    # the same inputs given as matrices
    bm = bw_barycenter(Qs, w, inputs="matrices")
    assert np.linalg.norm(bm.Q - b.Q) <= 1e-9 * np.linalg.norm(b.Q)


@pytest.mark.parametrize("d,r,k", [(5, 2, 4), (8, 2, 5), (6, 1, 3), (4, 3, 6)])
def test_first_order_condition_of_the_cone(d, r, k):
    """Property: sum_i w_i T_i = I on the support of Q (G Q = 0) and G = I - sum_i w_i T_i
    is PSD (the objective is convex in Q, so this certifies the global minimiser)."""
    rng = np.random.default_rng(100 + d + r + k)
    Us = rng.standard_normal((k, d, r))
    w = rng.dirichlet(np.ones(k))
    b = bw_barycenter(Us, w, inputs="factors")
    G = _kkt(Us, w, b.U)
    assert np.linalg.norm(G @ b.U) <= 1e-8 * np.linalg.norm(b.U)
    assert np.linalg.eigvalsh(G)[0] >= -1e-8
    assert b.dual_min >= -1e-8


def test_inputs_are_never_guessed():
    rng = np.random.default_rng(4)
    S = rng.standard_normal((3, 3))
    S = S + S.T                                          # symmetric indefinite
    with pytest.raises(ValueError, match=r"Us\[0\] must be positive semidefinite"):
        bw_barycenter([S, S], inputs="matrices")
    # read as factors, on request: the barycentre of S S^T
    b = bw_barycenter([S, S], inputs="factors")
    assert np.allclose(b.Q, S @ S.T, rtol=1e-12, atol=1e-12)
    # the former call form still works, with a DeprecationWarning naming inputs=
    with pytest.warns(DeprecationWarning, match="inputs="):
        b_old = bw_barycenter([S, S])
    assert np.allclose(b_old.Q, S @ S.T, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="inputs must be one of"):
        bw_barycenter([S, S], inputs="covariances")
    with pytest.raises(ValueError, match=r"max_iter must be >= 1"):
        bw_barycenter([S, S], inputs="factors", max_iter=0)


def test_result_is_frozen():
    import dataclasses

    b = bw_barycenter(RNG.standard_normal((2, 3, 2)), inputs="factors")
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.converged = False
