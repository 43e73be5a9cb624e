"""``quadnet.sensing.gaussian``: properties left unchecked by the other sensing tests
(found by mutation testing).

Independent references: the documented draw order of ``GaussianSensing.random`` replayed on
a generator passed in; the eigensolver each ``method`` names (scipy's ``eigsh`` for
``"lanczos"``, ``scipy.linalg.eigh`` for ``"dense"``) recorded by wrapping scipy; the optimal
preprocessing of Luo, Alghamdi & Lu (2019) written out densely (weights, top eigenvector,
one-parameter least-squares magnitude); float32 rounding of the directions; tracemalloc for
the one float32 copy of ``X``; the file a warning names.
"""

from __future__ import annotations

import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse.linalg

import quadnet
from quadnet.exceptions import SpectralInitWarning
from quadnet.sensing.gaussian import GaussianSensing, spectral_init
from quadnet.sensing.recovery import recover

PACKAGE = str(Path(quadnet.__file__).resolve().parent)


def _outside_package(wrn) -> bool:
    return not str(Path(wrn.filename).resolve()).startswith(PACKAGE)


def _deficient(field="real", d=5, m=4000, seed=3):
    """A design whose spectral matrix has exactly one positive eigenvalue."""
    rng = np.random.default_rng(seed)
    if field == "real":
        X = rng.standard_normal((m, d))
        A = np.diag([0.8] + [-0.5] * (d - 1))
        return GaussianSensing(X, np.einsum("ij,jk,ik->i", X, A, X))
    X = (rng.standard_normal((m, d)) + 1j * rng.standard_normal((m, d))) / np.sqrt(2)
    A = np.diag([0.8] + [-0.3] * (d - 1))
    y = np.einsum("ij,jk,ik->i", X, A, X.conj()).real
    return GaussianSensing(X, y, field="complex")


# ------------------------------------------------------------------------ the spectral start

@pytest.mark.parametrize("field", ["real", "complex"])
def test_the_padding_warning_names_the_callers_line(field):
    p = _deficient(field)
    for call in (lambda: p.spectral_init(2, strict=False),
                 lambda: spectral_init(p, 2, strict=False)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        hits = [w for w in caught if issubclass(w.category, SpectralInitWarning)]
        assert len(hits) == 1
        assert _outside_package(hits[0]), hits[0].filename


class _Recorder:
    def __init__(self, monkeypatch):
        self.calls = []
        for mod, name in ((scipy.sparse.linalg, "eigsh"), (scipy.linalg, "eigh")):
            original = getattr(mod, name)

            def wrapped(*a, _original=original, _name=name, **k):
                self.calls.append(_name)
                return _original(*a, **k)
            monkeypatch.setattr(mod, name, wrapped)


@pytest.mark.parametrize("method, route", [("lanczos", "eigsh"), ("dense", "eigh"),
                                           ("auto", "eigh")])
def test_method_names_the_eigensolver(monkeypatch, method, route):
    p = GaussianSensing.random(8, 2, 400, seed=0)
    rec = _Recorder(monkeypatch)
    U_method = p.spectral_init(2, method=method)
    assert rec.calls == [route]
    rec.calls.clear()
    U_fn = spectral_init(p, 2, method=method)
    assert rec.calls == [route]
    np.testing.assert_allclose(U_fn @ U_fn.T, U_method @ U_method.T, rtol=0, atol=1e-12)


def test_spectral_init_function_passes_the_optimal_preprocessing():
    """``spectral_init(p, 1, preprocessing="optimal")`` against the preprocessing written out:
    weights ``T(yhat) = (yhat - 1)/(yhat + sqrt(delta) - 1)``, ``yhat = max(y, 0)/mean(y)``,
    direction the top eigenvector of ``(1/m) X^* diag(T) X``, magnitude the least-squares
    ``beta`` of ``y_i ~ beta |(X v)_i|^2``."""
    p = GaussianSensing.random(10, 1, 120, seed=4, field="complex")
    X, y, m, d = p.X, p.y, p.m, p.d
    yhat = np.maximum(y, 0) / y.mean()
    w = (yhat - 1) / (yhat + np.sqrt(m / d) - 1)
    D = (X.conj().T * w) @ X / m
    v = np.linalg.eigh(D)[1][:, -1]
    z = np.abs(X @ v) ** 2
    beta = (z @ y) / (z @ z)
    want = beta * np.outer(v, v.conj())
    for u in (spectral_init(p, 1, preprocessing="optimal"),
              p.spectral_init(1, preprocessing="optimal")):
        np.testing.assert_allclose(u @ u.conj().T, want, rtol=0, atol=1e-10 * abs(beta))
    # and it is not the moment estimator of preprocessing="identity"
    u_id = spectral_init(p, 1)
    assert np.linalg.norm(u_id @ u_id.conj().T - want) > 1e-3 * abs(beta)


def test_recover_refuses_optimal_preprocessing_on_a_real_design():
    """``recover``'s table accepts ``preprocessing="optimal"``; the real spectral start (called
    inside it, where its own table is skipped) refuses it by name."""
    p = GaussianSensing.random(6, 1, 60, seed=0)
    with pytest.raises(ValueError, match=r"^recover: preprocessing='optimal' \(Luo, Alghamdi & Lu 2019\) "
                                         r"is implemented for complex Gaussian designs "
                                         r"\(field='complex'\); a real design takes "
                                         r"preprocessing='identity'$"):
        recover(p, 1, preprocessing="optimal")


# ------------------------------------------------------------------------- the planted draw

def test_random_without_noise_draws_nothing_after_the_design():
    """Draw order ``U*``, ``X``, then the noise only if ``noise > 0``: a generator passed in is
    left just after ``X`` at ``noise = 0`` and ``m`` normals later at ``noise > 0``."""
    d, r, m = 4, 1, 30
    for noise, extra in ((0.0, 0), (0.3, m)):
        g = np.random.default_rng(21)
        GaussianSensing.random(d, r, m, seed=g, noise=noise)
        ref = np.random.default_rng(21)
        ref.standard_normal((d, r))
        ref.standard_normal((m, d))
        if extra:
            ref.standard_normal(extra)
        np.testing.assert_array_equal(g.standard_normal(5), ref.standard_normal(5))


# --------------------------------------------------------------- the single-precision products

def test_single_precision_products_round_the_directions_to_float32():
    """The directions are float32 inside the products: a direction and its float32 rounding
    give the same bits, one direction and a stack alike; the float64 products do not."""
    p = GaussianSensing.random(9, 2, 300, seed=7)
    rng = np.random.default_rng(8)
    U = p.U_star + 0.1 * rng.standard_normal((9, 2))
    xi = rng.standard_normal((9, 2))
    xi32 = xi.astype(np.float32).astype(np.float64)
    assert np.any(xi32 != xi)
    h = p.single_precision_hvp_at(U)
    np.testing.assert_array_equal(h(xi), h(xi32))
    stack = np.stack([xi, -xi])
    np.testing.assert_array_equal(h(stack), h(stack.astype(np.float32).astype(np.float64)))
    h64 = p.hvp_at(U)
    assert np.any(h64(xi) != h64(xi32))


def test_the_float32_copy_of_x_is_made_once():
    """``4 m d`` bytes on the first call, none on later calls (at other points too)."""
    m, d = 6000, 40
    p = GaussianSensing.random(d, 1, m, seed=9)
    U = p.U_star
    copy_bytes = 4 * m * d
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        first = p.single_precision_hvp_at(U)
        grown = tracemalloc.get_traced_memory()[0] - before
        assert grown >= copy_bytes
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        second = p.single_precision_hvp_at(2.0 * U)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert peak < copy_bytes / 2
    xi = np.ones((d, 1))
    np.testing.assert_allclose(second(xi), p.hvp_at(2.0 * U)(xi), rtol=1e-4,
                               atol=1e-5 * np.abs(p.hvp_at(2.0 * U)(xi)).max())
    assert first(xi).dtype == np.float64
