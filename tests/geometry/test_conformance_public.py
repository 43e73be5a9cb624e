"""The public helpers of quadnet.geometry.conformance against independent references: the
Eckart–Young value against a brute-force minimisation over PSD matrices of bounded rank, the
Taylor remainders against exact polynomials, random orthogonal matrices against their
definition, and the side-by-side pymanopt comparison row by row (fields, reference, budget,
errors reported rather than raised, determinism for a seed).

Tolerances: exact polynomial remainders are compared to 1e-12 absolute (a few flops on O(1)
numbers); orthogonality to 1e-13 (a QR of an r x r Gaussian matrix)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import quadnet as qn
from quadnet.geometry.conformance import (
    check_gradient, check_hessian, compare_pymanopt_optimisers, eckart_young_value,
    random_orthogonal, riemannian_hessian, taylor_errors, taylor_slope)

RNG = np.random.default_rng(5)


# ------------------------------------------------------------------ Eckart-Young
@pytest.mark.parametrize("signs,r", [((3, 1, -2, -0.5), 1), ((3, 1, -2, -0.5), 2),
                                     ((3, 1, -2, -0.5), 3), ((-1, -2, -3), 2),
                                     ((2, 2, 1), 2), ((5, 4, 3, 2), 4)])
def test_eckart_young_value_against_the_best_rank_r_psd_matrix(signs, r):
    """The minimum of 1/2 ||Q - T||^2 over PSD Q of rank <= r, found by keeping every subset of
    at most r positive eigen-directions (the minimiser is diagonal in T's eigenbasis)."""
    d = len(signs)
    B = np.linalg.qr(RNG.standard_normal((d, d)))[0]
    T = B @ np.diag(signs) @ B.T
    lam, E = np.linalg.eigh(T)
    best = math.inf
    for mask in range(1 << d):
        idx = [i for i in range(d) if mask >> i & 1]
        if len(idx) > r:
            continue
        Q = sum((max(lam[i], 0.0) * np.outer(E[:, i], E[:, i]) for i in idx), np.zeros((d, d)))
        best = min(best, 0.5 * np.linalg.norm(Q - T) ** 2)
    assert eckart_young_value(T, r) == pytest.approx(best, rel=1e-12, abs=1e-12)


def test_eckart_young_value_is_zero_on_psd_targets_of_small_rank():
    u = RNG.standard_normal((5, 2))
    assert eckart_young_value(u @ u.T, 2) == pytest.approx(0.0, abs=1e-12)
    assert eckart_young_value(u @ u.T, 1) > 0


# ------------------------------------------------------------------ Taylor remainders
def test_taylor_errors_are_the_exact_remainders_of_a_cubic():
    f = lambda t: 1.0 + 2.0 * t + 3.0 * t * t + 4.0 * t ** 3   # noqa: E731
    ts = np.array([1e-3, 1e-2, 0.1, 1.0])
    # first order: |3 t^2 + 4 t^3|; second order (quad = 6): |4 t^3|
    np.testing.assert_allclose(taylor_errors(f, 1.0, 2.0, None, ts),
                               3 * ts ** 2 + 4 * ts ** 3, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(taylor_errors(f, 1.0, 2.0, 6.0, ts), 4 * ts ** 3,
                               rtol=1e-9, atol=1e-15)
    # a wrong derivative leaves a first-order remainder |t| for linear = 3
    np.testing.assert_allclose(taylor_errors(f, 1.0, 3.0, 6.0, ts), np.abs(-ts + 4 * ts ** 3),
                               rtol=1e-9, atol=1e-15)
    out = taylor_errors(f, 1.0, 2.0, 6.0, ts.tolist())
    assert out.dtype == np.float64 and out.shape == (4,)


def test_taylor_errors_refuse_a_non_finite_value():
    with pytest.raises(ValueError, match=r"^taylor_errors: f\(t\) returned a non-finite value$"):
        taylor_errors(lambda t: math.inf if t > 0.5 else t, 0.0, 1.0, None, [0.1, 1.0])


# ------------------------------------------------------------------ random orthogonal
@pytest.mark.parametrize("r", [1, 2, 5])
def test_random_orthogonal_is_orthogonal_of_the_asked_determinant(r):
    for improper, det in ((False, 1.0), (True, -1.0)):
        R = random_orthogonal(r, np.random.default_rng(r), improper=improper)
        assert R.shape == (r, r)
        np.testing.assert_allclose(R.T @ R, np.eye(r), rtol=0, atol=1e-13)
        assert np.linalg.det(R) == pytest.approx(det, abs=1e-12)
    dets = {round(float(np.linalg.det(random_orthogonal(r, np.random.default_rng(s)))))
            for s in range(40)}
    assert dets == ({1} if r == 0 else {-1, 1})      # improper=None: both components
    a = random_orthogonal(r, np.random.default_rng(3))
    assert np.array_equal(a, random_orthogonal(r, np.random.default_rng(3)))


# ------------------------------------------------------------------ pymanopt side by side
def test_compare_pymanopt_optimisers_rows():
    pytest.importorskip("pymanopt")
    T = np.diag([3.0, 1.5, -0.5, -1.0])
    loss = qn.FrobeniusLoss(T)
    ref = eckart_young_value(T, 3)
    rows = compare_pymanopt_optimisers(loss, 4, 3, seed=1,
                                       optimisers=("TrustRegions", "SteepestDescent"),
                                       max_iterations=300)
    assert [(r["optimiser"], r["manifold"]) for r in rows] == [
        ("TrustRegions", "PSDQuotient"), ("TrustRegions", "PSDFixedRank"),
        ("SteepestDescent", "PSDQuotient"), ("SteepestDescent", "PSDFixedRank")]
    for r in rows:
        assert set(r) == {"optimiser", "manifold", "iterations", "cost", "rel_cost_error",
                          "time_s", "stopping", "error"}
        assert r["error"] is None and isinstance(r["iterations"], int) and r["iterations"] >= 1
        assert r["rel_cost_error"] == (r["cost"] - ref) / abs(ref)
        assert isinstance(r["stopping"], str) and r["stopping"]
        assert 0.0 <= r["time_s"] < 600
        assert r["iterations"] <= 300
    assert abs(rows[0]["rel_cost_error"]) < 1e-10            # trust regions reach the optimum
    # the same seed, the same numbers (times aside)
    again = compare_pymanopt_optimisers(loss, 4, 3, seed=1, optimisers=("TrustRegions",),
                                        max_iterations=300)
    timing = ("time_s", "stopping")                  # pymanopt's stopping text has seconds
    for a, b in zip(again, rows[:2]):
        assert {k: v for k, v in a.items() if k not in timing} == \
            {k: v for k, v in b.items() if k not in timing}
        assert a["stopping"].split(" after ")[0] == b["stopping"].split(" after ")[0]


def test_compare_pymanopt_optimisers_budget_reference_and_errors(capsys):
    pytest.importorskip("pymanopt")
    loss = qn.FrobeniusLoss(np.diag([2.0, 1.0, -1.0]))
    rows = compare_pymanopt_optimisers(loss, 3, 2, seed=0, optimisers=("SteepestDescent",),
                                       max_iterations=3, reference_cost=10.0)
    assert all(r["iterations"] == 3 and "iterations" in r["stopping"].lower() for r in rows)
    assert all(r["rel_cost_error"] == (r["cost"] - 10.0) / 10.0 for r in rows)
    assert capsys.readouterr().out == ""                       # verbosity 0
    # a loss that is not a FrobeniusLoss has no default reference
    T = np.diag([2.0, 1.0, -1.0])
    other = qn.AutogradLoss(lambda Q: 0.5 * ((Q - T) ** 2).sum(), 3)
    rows = compare_pymanopt_optimisers(other, 3, 2, seed=0, optimisers=("SteepestDescent",),
                                       max_iterations=3)
    assert all(math.isnan(r["rel_cost_error"]) and r["error"] is None for r in rows)

    class Broken(qn.FrobeniusLoss):
        def value(self, Q):
            raise RuntimeError("no value here")

    rows = compare_pymanopt_optimisers(Broken(T), 3, 2, seed=0,
                                       optimisers=("SteepestDescent",), max_iterations=3)
    for r in rows:                                      # reported, not raised
        assert r["error"] == "RuntimeError: no value here"
        assert r["iterations"] is None and math.isnan(r["cost"]) and r["stopping"] is None
        assert math.isnan(r["rel_cost_error"]) and r["time_s"] >= 0


# ------------------------------------------------------------------ slopes and Hessians
def _point():
    M = qn.PSDQuotient(4, 2)
    loss = qn.FrobeniusLoss(np.diag([2.0, 1.0, -0.5, -1.0]))
    U = np.array([[1.0, 0.2], [0.1, 1.0], [0.5, -0.3], [0.0, 0.4]])
    return M, loss, U, M.random_tangent_vector(U, 3), M.random_tangent_vector(U, 4)


class _WrongGradient(qn.FrobeniusLoss):
    def factor_gradient(self, U):
        return 1.1 * super().factor_gradient(U)


class _WrongHessian(qn.FrobeniusLoss):
    def factor_hvp(self, U, xi):
        return 1.1 * super().factor_hvp(U, xi)


def test_taylor_slope_fits_the_power_of_the_smallest_steps():
    ts = np.logspace(-5, 0, 21)
    for p in (1.0, 2.0, 3.0):
        assert taylor_slope(ts, 0.7 * ts ** p, 1e-16) == pytest.approx(p, abs=1e-10)
    # t^2 + 50 t^3: the window of the 6 smallest steps sees the t^2 term
    assert taylor_slope(ts, ts ** 2 + 50 * ts ** 3, 1e-16) == pytest.approx(2.0, abs=0.01)
    assert taylor_slope(ts, ts ** 2 + 50 * ts ** 3, 1e-16, window=21) > 2.2
    # remainders within 100 x floor of rounding are dropped: a plateau does not bend the fit
    errs = np.maximum(ts ** 3, 1e-14)
    assert taylor_slope(ts, errs, 1e-16) == pytest.approx(3.0, abs=1e-10)
    with pytest.raises(ValueError, match=r"errs: only 2 of the 21 remainders are above the "
                                         r"rounding level 100 x floor = 1e-08"):
        taylor_slope(ts, np.where(ts > 0.5, ts, 0.0), 1e-10)


def test_check_gradient_measures_two_and_catches_a_wrong_gradient():
    M, loss, U, xi, _ = _point()
    assert check_gradient(M, loss, U, xi) == pytest.approx(2.0, abs=0.05)
    assert check_gradient(M, _WrongGradient(loss.target), U, xi) == pytest.approx(1.0, abs=0.05)
    ts = np.logspace(-6, -1, 15)
    assert check_gradient(M, loss, U, xi, ts=ts) == pytest.approx(2.0, abs=0.05)


def test_check_hessian_measures_three_symmetry_and_the_vertical_zero():
    M, loss, U, xi, eta = _point()
    out = check_hessian(M, loss, U, xi, eta)
    assert set(out) == {"slope", "symmetry", "vertical"}
    assert out["slope"] == pytest.approx(3.0, abs=0.1)
    assert out["symmetry"] < 1e-12 and out["vertical"] < 1e-12
    assert set(check_hessian(M, loss, U, xi)) == {"slope", "vertical"}
    bad = check_hessian(M, _WrongHessian(loss.target), U, xi, eta)
    assert bad["slope"] == pytest.approx(2.0, abs=0.1)


def test_riemannian_hessian_against_central_differences_of_the_gradient():
    """On the quotient of the flat factor space, Hess L(U)[xi] = P_h(D grad L(U)[xi]) for a
    horizontal xi (the Euclidean gradient of an invariant L is horizontal)."""
    M, loss, U, xi, _ = _point()
    h = 1e-5
    fd = (loss.factor_gradient(U + h * xi) - loss.factor_gradient(U - h * xi)) / (2 * h)
    ref = M.horizontal_projection(U, fd)
    H = riemannian_hessian(M, loss, U, xi)
    assert np.allclose(H, ref, rtol=0, atol=1e-8 * np.linalg.norm(ref))
    assert np.linalg.norm(M.vertical_projection(U, H)) <= 1e-12 * np.linalg.norm(H)


def test_the_steps_given_are_the_steps_used():
    """Steps far from the asymptotic regime bend both slopes: passing them must change the
    result (the defaults, logspace(-8, 0) and logspace(-6, 0), stay asymptotic)."""
    M, loss, U, xi, eta = _point()
    big = np.logspace(0.0, 1.0, 8)
    assert abs(check_gradient(M, loss, U, xi, ts=big) - check_gradient(M, loss, U, xi)) > 0.1
    assert abs(check_hessian(M, loss, U, xi, ts=big)["slope"]
               - check_hessian(M, loss, U, xi)["slope"]) > 0.1


def test_compare_pymanopt_optimisers_reference_is_the_rank_r_value():
    pytest.importorskip("pymanopt")
    T = np.diag([2.0, 1.0, -1.0])
    (row, _) = compare_pymanopt_optimisers(qn.FrobeniusLoss(T), 3, 1, seed=0,
                                           optimisers=("TrustRegions",), max_iterations=50)
    ref = eckart_young_value(T, 1)
    assert ref != eckart_young_value(T, 3)
    assert row["rel_cost_error"] == (row["cost"] - ref) / abs(ref)
    assert abs(row["rel_cost_error"]) < 1e-8
