"""Quotient geometry of M_r^+ (quadnet theory §1): conformance, identities, pymanopt, bad input.

Tolerances: every identity below is exact in exact arithmetic; the projections go through
one r x r eigendecomposition when kappa(U) < 100 (rounding amplified by at most kappa(U)^2)
and one thin SVD otherwise (docs/stratified.md), so for
Gaussian factors (kappa < 1e3 with overwhelming probability at these sizes) 1e-9 relative
leaves a margin of several orders over the ~1e-14 typically measured.
"""

import numpy as np
import pymanopt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import quadnet as qn
from quadnet.geometry.conformance import random_orthogonal

SIZES = [(1, 1), (3, 1), (4, 2), (5, 5), (7, 3), (6, 6), (10, 4), (12, 1)]


@pytest.mark.parametrize("d,r", SIZES)
def test_check_manifold_passes(d, r):
    worst = qn.check_manifold(qn.PSDQuotient(d, r), seed=d * 100 + r)
    assert worst["Hessian Taylor slope (3 expected)"] >= 2.9
    assert worst["Hessian vanishes on vertical directions"] < 1e-9


def test_check_manifold_catches_a_broken_projection():
    class Broken(qn.PSDQuotient):
        def horizontal_projection(self, U, Z):  # pymanopt Elliptope-style sign slip
            return np.asarray(Z) + self.vertical_projection(U, Z)

    with pytest.raises(AssertionError, match="dimension|idempotence|P_h"):
        qn.check_manifold(Broken(5, 2))


def test_check_manifold_catches_so_alignment():
    """Aligning over SO(r) only (geomstats' bug) breaks dist(U, U R) = 0 for det R = -1."""

    class SOOnly(qn.PSDQuotient):
        def dist(self, a, b):
            R = qn.align(a, b)
            if np.linalg.det(R) < 0:
                A, _, Bt = np.linalg.svd(a.T @ b)
                A[:, -1] *= -1
                R = A @ Bt
            return float(np.linalg.norm(a @ R - b))

    with pytest.raises(AssertionError, match="dist"):
        qn.check_manifold(SOOnly(4, 2), seed=3)


def test_pymanopt_psdfixedrank_hessian_pitfall_is_fixed():
    """pymanopt's PSDFixedRank returns a large vector for a vertical direction; ours gives 0."""
    rng = np.random.default_rng(0)
    d, r = 6, 3
    M = qn.PSDQuotient(d, r)
    U = M.random_point(rng)
    T = rng.standard_normal((d, d))
    loss = qn.FrobeniusLoss(T + T.T)
    v = M.vertical_projection(U, rng.standard_normal((d, r)))
    g, hv = loss.factor_gradient(U), loss.factor_hvp(U, v)
    theirs = pymanopt.manifolds.PSDFixedRank(d, r).euclidean_to_riemannian_hessian(U, g, hv, v)
    ours = M.euclidean_to_riemannian_hessian(U, g, hv, v)
    assert np.linalg.norm(theirs) > 1e-2 * np.linalg.norm(hv)  # their pitfall is real
    assert np.linalg.norm(ours) <= 1e-12 * np.linalg.norm(hv)


def test_dimension_and_basis():
    for d, r in SIZES:
        M = qn.PSDQuotient(d, r)
        assert M.dim == d * r - r * (r - 1) // 2
        B = M.horizontal_basis(M.random_point(np.random.default_rng(1)))
        assert B.shape == (d * r, M.dim)


@settings(max_examples=40, deadline=None)
@given(d=st.integers(1, 9), data=st.data(), seed=st.integers(0, 2**31 - 1))
def test_identities_property(d, data, seed):
    """Random sizes and seeds: projections, lift, equivariance, distance = Bures–Wasserstein."""
    r = data.draw(st.integers(1, d))
    rng = np.random.default_rng(seed)
    M = qn.PSDQuotient(d, r)
    U, V, Z = M.random_point(rng), M.random_point(rng), rng.standard_normal((d, r))
    tol = 1e-9 + 1e3 * np.finfo(float).eps * np.linalg.cond(U) ** 2
    h = M.horizontal_projection(U, Z)
    assert np.linalg.norm(M.horizontal_projection(U, h) - h) <= tol * np.linalg.norm(Z)
    K = U.T @ h
    assert np.linalg.norm(K - K.T) <= tol * np.linalg.norm(U) * np.linalg.norm(Z)
    assert np.linalg.norm(M.lift(U, M.differential(U, h)) - h) <= tol * np.linalg.norm(h)
    R = random_orthogonal(r, rng, improper=bool(seed % 2))
    assert np.linalg.norm(M.horizontal_projection(U @ R, Z @ R) - h @ R) <= tol * np.linalg.norm(Z)
    dist = M.dist(U, V)
    assert abs(M.dist(U @ R, V) - dist) <= 1e-10 * max(dist, 1.0)
    bw = qn.bures_wasserstein(U @ U.T, V @ V.T)
    assert abs(dist - bw) <= 1e-6 * max(bw, 1.0)  # BW goes through matrix square roots


def test_align_allows_improper_rotations():
    rng = np.random.default_rng(5)
    M = qn.PSDQuotient(5, 3)
    U = M.random_point(rng)
    R = random_orthogonal(3, rng, improper=True)
    assert np.allclose(M.align(U, U @ R), R, atol=1e-12)
    assert M.dist(U, U @ R) < 1e-12 * np.linalg.norm(U)


def test_exp_runs_onto_the_boundary():
    """U + xi is a point of the total space at every rank: exp never refuses (rank 2 -> 1)."""
    M = qn.PSDQuotient(3, 2)
    U = np.eye(3)[:, :2]
    W = M.exp(U, -U * np.array([1.0, 0.0]))
    assert M.rank(W) == 1 and np.all(np.isfinite(M.horizontal_projection(W, np.ones((3, 2)))))


@pytest.mark.parametrize("Optimizer", [pymanopt.optimizers.TrustRegions,
                                       pymanopt.optimizers.SteepestDescent,
                                       pymanopt.optimizers.ConjugateGradient])
def test_pymanopt_optimizers_converge(Optimizer):
    """Best rank-2 PSD approximation of a PSD target: Eckart–Young gives the answer."""
    rng = np.random.default_rng(2)
    d, r = 6, 2
    G = rng.standard_normal((d, d))
    w, E = np.linalg.eigh(G @ G.T / d)
    target = (E * w) @ E.T
    best = (E[:, -r:] * w[-r:]) @ E[:, -r:].T
    M = qn.PSDQuotient(d, r, seed=0)
    problem = qn.pymanopt_problem(qn.FrobeniusLoss(target), M)
    kwargs = {"max_iterations": 3000, "verbosity": 0}
    if Optimizer is pymanopt.optimizers.TrustRegions:
        kwargs["max_iterations"] = 200
    result = Optimizer(**kwargs).run(problem, initial_point=M.random_point(rng))
    U = result.point
    # first-order methods stop at pymanopt's default gradient tolerance 1e-6
    assert np.linalg.norm(U @ U.T - best) <= 1e-5 * np.linalg.norm(best)


@pytest.mark.parametrize("call,match", [
    (lambda M: M.horizontal_projection(np.full((4, 2), np.nan), np.ones((4, 2))), "U has"),
    (lambda M: M.vertical_projection(np.eye(4)[:, :2], np.full((4, 2), -np.inf)), "Z has"),
    (lambda M: M.exp(np.eye(4)[:, :2], np.full((4, 2), np.inf)), "tangent_vector has"),
    (lambda M: M.retraction(np.full((4, 2), np.inf), -np.full((4, 2), np.inf)), "point has"),
    (lambda M: M.log(np.eye(4)[:, :2], np.full((4, 2), np.nan)), "point_b has"),
    (lambda M: M.lift(np.eye(4)[:, :2], np.eye(4), exact=True), "not in the image"),
    (lambda M: M.projection(np.ones((4, 3)), np.ones((4, 2))), r"point must have shape"),
    (lambda M: M.transport(np.ones((4, 2)), np.ones((4, 2)), np.ones((2, 4))),
     r"tangent_vector must"),
    (lambda M: M.transport(np.ones((4, 3)), np.ones((4, 2)), np.ones((4, 2))), r"point_a must"),
    (lambda M: M.horizontal_projection(np.ones((4, 3)), np.ones((4, 2))), r"shape \(4, 2\)"),
    (lambda M: M.horizontal_projection(np.eye(4)[:, :2], np.full((4, 2), np.nan)), "non-finite"),
    (lambda M: M.lift(np.eye(4)[:, :2], np.triu(np.ones((4, 4)))), "Qdot must be symmetric"),
    (lambda M: M.dist(np.eye(4)[:, :2], np.full((4, 2), np.inf)), "point_b"),
])
def test_bad_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call(qn.PSDQuotient(4, 2))


def test_bad_sizes():
    with pytest.raises(ValueError, match="r <= d"):
        qn.PSDQuotient(3, 4)
    with pytest.raises(TypeError, match="d must be an integer"):
        qn.PSDQuotient(3.5, 1)
    with pytest.raises(TypeError, match="U must be an array"):
        qn.PSDQuotient(3, 1).predictor("abc")
    for bad in (0.0, 1.0, -1e-3, 2.0, float("nan")):
        with pytest.raises(ValueError, match=r"rank_rtol must be a finite real number in \(0, 1\)"):
            qn.PSDQuotient(3, 2, rank_rtol=bad)
    with pytest.raises(TypeError, match="rank_rtol"):
        qn.PSDQuotient(3, 2, rank_rtol="1e-10")
