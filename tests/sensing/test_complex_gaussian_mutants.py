"""``quadnet.sensing.complex_gaussian``: properties left unchecked by the other complex-sensing
tests (found by mutation testing).

Independent references: the documented draw order of ``GaussianSensing.random(...,
field="complex")`` (``U*`` then ``X`` as interleaved standard normals, then the noise only if
``noise > 0``) replayed on a generator; the eigensolver each ``method`` names, recorded by
wrapping scipy; threadpoolctl's view of the BLAS pools; the error messages of the spectral
start asserted in full.
"""

from __future__ import annotations

import types

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse.linalg
from threadpoolctl import threadpool_limits

from quadnet._threads import blas_threads
from quadnet.sensing.complex_gaussian import (
    SINGLE_THREAD_ENTRIES,
    ComplexGaussianSensing,
    threads_for,
)
from quadnet.sensing.gaussian import GaussianSensing
from quadnet.sensing.recovery import recover


def _cn(rng, *shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) / np.sqrt(2)


def _deficient(d=5, m=4000, seed=3):
    """A complex design whose ``T^-1(M)`` has one positive eigenvalue (``~0.8``, the rest
    ``~-0.3``)."""
    rng = np.random.default_rng(seed)
    X = _cn(rng, m, d)
    A = np.diag([0.8] + [-0.3] * (d - 1))
    return GaussianSensing(X, np.einsum("ij,jk,ik->i", X, A, X.conj()).real, field="complex")


# ------------------------------------------------------------------------ the problem record

def test_constructor_stores_complex_design_and_no_planted_truth():
    p = ComplexGaussianSensing(np.arange(6.0).reshape(3, 2), [1, 2, 3])
    assert p.X.dtype == np.complex128 and p.X.flags["C_CONTIGUOUS"]
    assert p.y.dtype == np.float64 and p.y.shape == (3,)
    assert (p.m, p.d) == (3, 2)
    assert p.U_star is None and p.Q_star is None
    assert p.noise == 0.0 and isinstance(p.noise, float)


@pytest.mark.parametrize("noise", [0.0, 0.4])
def test_random_follows_its_documented_draw_order(noise):
    d, r, m = 5, 2, 40
    g = np.random.default_rng(17)
    p = GaussianSensing.random(d, r, m, seed=g, noise=noise, field="complex")
    ref = np.random.default_rng(17)
    U = ref.standard_normal(2 * d * r).view(np.complex128).reshape(d, r) / np.sqrt(2 * d)
    X = ref.standard_normal(2 * m * d).view(np.complex128).reshape(m, d) / np.sqrt(2.0)
    y = np.sum(np.abs(X @ U) ** 2, axis=1)
    if noise > 0:
        y = y + noise * ref.standard_normal(m)
    np.testing.assert_array_equal(p.U_star, U)
    np.testing.assert_array_equal(p.X, X)
    np.testing.assert_allclose(p.y, y, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(p.Q_star, U @ U.conj().T, rtol=1e-14)
    assert p.noise == noise
    # nothing more was drawn from the generator
    np.testing.assert_array_equal(g.standard_normal(4), ref.standard_normal(4))


def test_default_preconditioner_is_none_and_checks_u():
    p = GaussianSensing.random(4, 1, 30, seed=0, field="complex")
    assert p.default_preconditioner(p.U_star) is None
    with pytest.raises(ValueError, match="U"):
        p.default_preconditioner(np.ones((3, 1)))


# --------------------------------------------------------------------------- the spectral start

def test_strict_spectral_start_refuses_a_deficient_matrix():
    p = _deficient()
    msg = (r"^ComplexGaussianSensing\.spectral_init: spectral initialiser: T\^-1\(M\) has only 1 positive eigenvalue\(s\) among its "
           r"top r = 2; the measurements do not determine a rank-2 start "
           r"\(pass strict=False to pad\)$")
    with pytest.raises(ValueError, match=msg):
        p.spectral_init(2)
    with pytest.raises(ValueError, match=msg):
        p.spectral_init(2, strict=True, method="dense")


@pytest.mark.parametrize("method, route", [("lanczos", "eigsh"), ("dense", "eigh"),
                                           ("auto", "eigh")])
def test_method_names_the_eigensolver(monkeypatch, method, route):
    p = GaussianSensing.random(8, 2, 200, seed=1, field="complex")
    calls = []
    for mod, name in ((scipy.sparse.linalg, "eigsh"), (scipy.linalg, "eigh")):
        def wrapped(*a, _original=getattr(mod, name), _name=name, **k):
            calls.append(_name)
            return _original(*a, **k)
        monkeypatch.setattr(mod, name, wrapped)
    U = p.spectral_init(2, method=method)
    assert calls == [route]
    # the start is the top-2 part of T^-1(M) = M - tr(M)/(d+1) I, whichever route
    M = (p.X.conj().T * p.y) @ p.X / p.m
    lam, V = np.linalg.eigh(M - np.trace(M).real / (p.d + 1) * np.eye(p.d))
    want = (V[:, -2:] * lam[-2:]) @ V[:, -2:].conj().T
    np.testing.assert_allclose(U @ U.conj().T, want, atol=1e-8)


def test_recover_refuses_optimal_preprocessing_without_more_rows_than_columns():
    """``recover``'s table accepts ``preprocessing="optimal"``; the complex spectral start
    (called inside it, where its own table is skipped) refuses ``m <= d`` by name."""
    p = GaussianSensing.random(6, 1, 6, seed=0, field="complex")
    with pytest.raises(ValueError, match=r"^recover: preprocessing='optimal' needs m > d \(delta = "
                                         r"m/d = 6/6 <= 1: .*use preprocessing='identity'$"):
        recover(p, 1, preprocessing="optimal")


# ------------------------------------------------------------------------------ BLAS threads

def test_threads_for_limits_small_complex_problems_only(monkeypatch):
    monkeypatch.delenv("QUADNET_BLAS_POLICY", raising=False)
    side = 1 << 11                                   # side * side == SINGLE_THREAD_ENTRIES
    assert side * side == SINGLE_THREAD_ENTRIES
    cases = [
        (GaussianSensing.random(4, 1, 20, seed=0, field="complex"), 1),
        (GaussianSensing.random(4, 1, 20, seed=0), 2),                       # real
        (types.SimpleNamespace(field="complex", m=side, d=side), 1),         # at the bound
        (types.SimpleNamespace(field="complex", m=2 * side, d=side), 2),     # above it
        (types.SimpleNamespace(field="real", m=2, d=2), 2),
    ]
    with threadpool_limits(limits=2, user_api="blas"):
        if blas_threads() != 2:
            pytest.skip("no BLAS pool with two threads")
        for problem, want in cases:
            with threads_for(problem):
                assert blas_threads() == want, (problem.field, problem.m, problem.d)
            assert blas_threads() == 2
