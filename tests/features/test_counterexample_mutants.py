"""Properties of quadnet.features.counterexample against independent references.

Written for mutation testing of ``quadnet/features/counterexample.py`` (``scripts/mutation.py
--public-only``): the predicted cosine against the cosine of the two spectra evaluated in
mpmath at 50 digits, and the drawn construction against the documented recipe replayed from
the same seed.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from quadnet._linalg import random_orthogonal
from quadnet.features.counterexample import (
    NFACounterexample,
    counterexample_prediction,
    nfa_counterexample,
)
from quadnet.features.fact import QuadraticNet


def _cos_mp(s, K, alpha, A, rho, gamma):
    """cos(u, v) of u = (1/α, …, 1/α, γ/A), v = (1, …, 1, (γ²ρ)^s) in 50-digit arithmetic."""
    with mpmath.workdps(50):
        s, alpha, A, rho, gamma = (mpmath.mpf(x) for x in (s, alpha, A, rho, gamma))
        g = (gamma**2 * rho) ** s
        u1, u2 = 1 / alpha, gamma / A
        num = K * u1 + u2 * g
        den = mpmath.sqrt(K * u1**2 + u2**2) * mpmath.sqrt(K + g**2)
        return float(num / den)


@pytest.mark.parametrize("s, kw", [
    (1.0, {}), (0.5, {}), (0.02, {}), (2.0, {"quiet": 3}),
    (0.7, {"alpha": 2.0, "A": 0.5, "rho": 0.1, "gamma": 0.3}),   # log g < 0, 1/α < γ/A
    (1.0, {"alpha": 1e-200}), (1.0, {"A": 1e-200}), (300.0, {}), (1e-300, {}),
    (1.0, {"gamma": 1e-100, "rho": 1e-100}), (3.0, {"quiet": 1, "alpha": 1e150, "A": 1e-150}),
])
def test_counterexample_prediction_is_the_cosine_of_the_spectra(s, kw):
    full = {"quiet": 6, "alpha": 0.1, "A": 50.0, "rho": 16.0, "gamma": 25.0} | kw
    got = counterexample_prediction(s, **kw)
    want = _cos_mp(s, full["quiet"], full["alpha"], full["A"], full["rho"], full["gamma"])
    assert got == pytest.approx(want, rel=1e-12, abs=1e-300)
    assert 0.0 < got <= 1.0                  # a cosine of positive vectors, never above 1


def test_counterexample_prediction_defaults_and_refusals():
    assert counterexample_prediction(0.5) == counterexample_prediction(
        0.5, quiet=6, alpha=0.1, A=50.0, rho=16.0, gamma=25.0)
    with pytest.raises(ValueError, match=r"^counterexample_prediction: s must be"):
        counterexample_prediction(0.0)
    with pytest.raises(ValueError, match=r"^counterexample_prediction: quiet must be >= 1"):
        counterexample_prediction(1.0, quiet=0)


def test_nfa_counterexample_replays_the_documented_recipe():
    K, n, alpha, A, rho, gamma, lam, init = 3, 12, 0.2, 7.0, 9.0, 4.0, 0.05, 0.5
    ex = nfa_counterexample(5, n=n, quiet=K, alpha=alpha, A=A, rho=rho, gamma=gamma, lam=lam,
                            init_scale=init)
    assert isinstance(ex, NFACounterexample) and isinstance(ex.net0, QuadraticNet)
    rng = np.random.default_rng(5)
    basis = random_orthogonal(K + 1, rng)
    Z = rng.standard_normal((n, K + 1))
    W0 = rng.standard_normal((K + 1, K + 1))
    np.testing.assert_allclose(ex.basis, basis, rtol=0, atol=0)
    np.testing.assert_allclose(ex.X, (Z * np.r_[np.ones(K), np.sqrt(rho)]) @ basis.T,
                               rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(ex.net0.W, init * W0, rtol=1e-15)
    np.testing.assert_array_equal(ex.net0.a, np.r_[alpha * np.ones(K), -A])
    # y = x^T B x, B = Σ_k u_k u_k^T − γ u_* u_*^T
    B = basis[:, :K] @ basis[:, :K].T - gamma * np.outer(basis[:, K], basis[:, K])
    np.testing.assert_allclose(ex.y, np.einsum("ij,jk,ik->i", ex.X, B, ex.X), rtol=1e-10,
                               atol=1e-12)
    assert ex.y.shape == (n,) and ex.lam == lam
    assert ex.params == {"quiet": K, "alpha": alpha, "A": A, "rho": rho, "gamma": gamma}
    np.testing.assert_allclose(basis.T @ basis, np.eye(K + 1), atol=1e-14)


def test_nfa_counterexample_defaults_and_seeds():
    ex = nfa_counterexample()
    assert ex.X.shape == (400, 7) and ex.lam == 1e-3 and ex.net0.width == 7
    assert ex.params == {"quiet": 6, "alpha": 0.1, "A": 50.0, "rho": 16.0, "gamma": 25.0}
    np.testing.assert_array_equal(ex.X, nfa_counterexample(0).X)
    e1, e2 = nfa_counterexample(3, n=30), nfa_counterexample(np.random.default_rng(3), n=30)
    np.testing.assert_array_equal(e1.X, e2.X)
    assert not np.array_equal(e1.X, nfa_counterexample(4, n=30).X)
    with pytest.raises(ValueError, match=r"^nfa_counterexample: n must be >= 28, got 27$"):
        nfa_counterexample(0, n=27)
    assert nfa_counterexample(0, n=28).X.shape == (28, 7)
