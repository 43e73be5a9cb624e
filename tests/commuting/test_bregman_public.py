"""The public Bregman functions (quadnet theory §5) through their validated entry points.

Each property is checked against an independent route: the scale law of the projection
(``y -> c y`` with ``q0 -> c q0`` maps ``q -> c q`` and leaves ``nu`` unchanged), the
closed form of a one-constraint projection, scipy's ``linprog`` for the minimum trace and its
dual, and the exponential-cone program of cvxpy for the projection with multiplicities.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import linprog

from quadnet.commuting.bregman import (
    bregman_projection,
    bregman_projection_cvxpy,
    feasible_support,
    min_trace_solution,
)
from quadnet.exceptions import InfeasibleError, SolverFailure


def _instance(seed=0, m=3, d=6):
    rng = np.random.default_rng(seed)
    A = rng.uniform(0.5, 2.0, (m, d))
    y = A @ rng.uniform(0.5, 2.0, d)
    q0 = rng.uniform(0.5, 2.0, d)
    return A, y, q0


# ---------------------------------------------------------------- bregman_projection, scales

@pytest.mark.parametrize("c", [1e-25, 2.0 ** -200, 1e-300, 1e30, 2.0 ** 300])
@pytest.mark.parametrize("start", ["auto", "zero", "lp"])
def test_projection_follows_the_scale_law_far_outside_the_unit_ratio(c, start):
    # max|y| / max|A diag(m)| = c far outside [1e-20, 1e20]: the answer is c times the
    # unit-scale answer, with the same dual, the same start and the same Newton run
    A, y, q0 = _instance()
    mult = np.array([1.0, 2.0, 3.0, 1.0, 2.0, 1.0])
    ref = bregman_projection(A, y, q0, multiplicities=mult, start=start, tol=1e-13,
                             max_iter=60)
    out = bregman_projection(A, c * y, log_q0=np.log(q0) + math.log(c), multiplicities=mult,
                             start=start, tol=1e-13, max_iter=60)
    assert out.converged and out.info["status"] in ("converged",
                                                    "converged (tolerance floor)")
    np.testing.assert_allclose(out.log_q, ref.log_q + math.log(c), rtol=0, atol=1e-11)
    np.testing.assert_allclose(out.q, c * ref.q, rtol=1e-11)
    np.testing.assert_allclose(out.nu, ref.nu, rtol=0, atol=1e-11)
    assert out.info["start"] == ref.info["start"]
    assert abs(out.iterations - ref.iterations) <= 1
    # the answer solves the scaled system
    np.testing.assert_allclose((A * mult) @ out.q, c * y, rtol=1e-11)


def test_projection_budget_and_tolerance_reach_the_rescaled_solve():
    # one Newton step cannot converge from the zero dual: the rescaled solve must honour
    # max_iter and report the failure (RuntimeError naming the residual)
    A, y, q0 = _instance(1)
    with pytest.raises(RuntimeError, match="did not converge: relative residual .* after 1 "
                                           "Newton iterations"):
        bregman_projection(A, 1e-30 * y, log_q0=np.log(q0) - 30 * math.log(10), max_iter=1,
                           start="zero")


def test_rescaled_projection_keeps_underflowed_coordinates_positive():
    # at the unit scale a coordinate of q underflows (log q ~ -1000 + 690); back at the
    # scale of y it is ~1e-135, which float64 holds: q must read exp(log_q) there
    A = np.array([[1.0, 1.0, 1.0]])
    c = 1e300
    log_q0 = np.array([0.0, 0.0, -1000.0]) + math.log(c)
    out = bregman_projection(A, np.array([2.0 * c]), log_q0=log_q0)
    # closed form of one constraint: q = q0 y / sum(q0)
    log_expected = log_q0 + math.log(2.0 * c) - (math.log(2.0) + math.log(c))
    np.testing.assert_allclose(out.log_q, log_expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out.q, np.exp(log_expected), rtol=1e-12)
    assert out.q[2] > 0.0 and not out.underflow.any()


def test_detect_support_gives_the_face_at_any_scale():
    # q3 is forced to 0 (row 2 minus row 1 gives q3 = 0), q1 and q2 are free on the face
    A = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    for c in (1.0, 1e-30, 1e40):
        for detect in (True, False):
            out = bregman_projection(A, c * np.array([2.0, 2.0]),
                                     log_q0=np.zeros(3) + math.log(c), detect_support=detect)
            assert out.support.tolist() == [True, True, False]
            np.testing.assert_allclose(out.q, c * np.array([1.0, 1.0, 0.0]), rtol=1e-10,
                                       atol=0)
            assert out.log_q[2] == -np.inf


# --------------------------------------------------------------------------- feasible_support

def test_feasible_support_is_invariant_under_column_and_data_scale():
    # the same face for columns scaled by 1e-9 .. 1e9: q3 = 0 is forced whatever its scale
    A = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    for s in ([1.0, 1.0, 1.0], [1e-9, 1.0, 1e9], [1e9, 1.0, 1e-9], [1.0, 1e6, 1e-8]):
        As = A * np.array(s)
        for cy in (1.0, 1e-12, 1e12):
            y = cy * np.array([1.0, 1.0])
            assert feasible_support(As, y).tolist() == [True, True, False], (s, cy)
            assert feasible_support(As, y, multiplicities=[2.0, 3.0, 5.0]).tolist() == [
                True, True, False]


def test_feasible_support_full_and_empty():
    A = np.array([[1.0, 2.0, 3.0]])
    assert feasible_support(A, np.array([1.0])).tolist() == [True, True, True]
    # y = 0 with positive columns: only q = 0
    assert feasible_support(A, np.array([0.0])).tolist() == [False, False, False]


@pytest.mark.parametrize("mult", [None, [1.0, 4.0]])
def test_feasible_support_refuses_an_empty_set_with_a_certificate(mult):
    A = np.array([[1.0, 1.0], [1.0, -1.0]])
    y = np.array([-1.0, 0.5])          # q1 + q2 = -1 has no q >= 0
    with pytest.raises(InfeasibleError, match=r"no solution with q >= 0 .*Farkas certificate "
                                              r"nu with max \(A\^T nu\) = .* <= 0") as info:
        feasible_support(A, y, multiplicities=mult)
    nu = info.value.certificate
    m = np.ones(2) if mult is None else np.asarray(mult)
    assert np.max((A * m).T @ nu) <= 1e-12 and y @ nu > 0.1


# ------------------------------------------------------------------------- min_trace_solution

def _lp(A, y, mult):
    return linprog(mult, A_eq=A * mult, b_eq=y, bounds=(0, None), method="highs")


def test_min_trace_vertex_against_linprog_and_its_dual():
    rng = np.random.default_rng(3)
    A = rng.uniform(0.2, 2.0, (3, 7))
    y = A @ rng.uniform(0.5, 1.5, 7) * 1e-3
    mult = rng.uniform(0.5, 3.0, 7)
    res = min_trace_solution(A, y, multiplicities=mult)
    lp = _lp(A, y, mult)
    assert res.face_dimension == 0 and res.info["method"] == "vertex"
    assert res.trace == pytest.approx(lp.fun, rel=1e-10)
    assert res.trace == pytest.approx(float(mult @ res.q), rel=1e-14)
    np.testing.assert_allclose((A * mult) @ res.q, y, rtol=1e-10)
    # an optimal dual: A^T lambda <= 1, equality on the support, strong duality
    assert np.all(A.T @ res.dual <= 1 + 1e-9)
    np.testing.assert_allclose((A.T @ res.dual)[res.support], 1.0, atol=1e-9)
    assert float(y @ res.dual) == pytest.approx(lp.fun, rel=1e-9)
    info = res.info
    assert info["lp_trace"] == pytest.approx(lp.fun, rel=1e-10)
    assert float(mult @ info["lp_q"]) == pytest.approx(lp.fun, rel=1e-10)
    assert info["lp_q"].dtype == np.float64 and info["lp_q"].shape == (7,)
    r = 1.0 - A.T @ res.dual                       # reduced cost per unit multiplicity
    off = r > 1e-9
    assert info["min_reduced_cost_off_face"] == pytest.approx(float(r[off].min()), rel=1e-9)
    assert info["max_reduced_cost_on_face"] == pytest.approx(
        float(np.abs(r[~off]).max()), abs=1e-12)
    assert info["max_reduced_cost_on_face"] < 1e-9
    expected = float(np.max(np.abs((A * mult) @ res.q - y)) / np.max(np.abs(y)))
    assert info["primal_residual"] == pytest.approx(expected, rel=1e-12, abs=1e-300)
    assert info["primal_residual"] < 1e-10
    assert "entropy_kkt" not in info


def test_min_trace_tiny_multiplicities_keep_the_face():
    # reduced costs are compared per unit multiplicity: tiny m must not pull a column with a
    # positive reduced cost onto the face
    A = np.array([[1.0, 2.0, 1.0]])
    y = np.array([2.0])
    mult = np.array([1e-6, 1e-6, 1e-6])
    res = min_trace_solution(A, y, multiplicities=mult)
    lp = _lp(A, y, mult)
    assert res.trace == pytest.approx(lp.fun, rel=1e-10)
    assert res.support.tolist() == [False, True, False]
    np.testing.assert_allclose(res.q, [0.0, 1e6, 0.0], rtol=1e-10)
    assert res.info["min_reduced_cost_off_face"] == pytest.approx(0.5, rel=1e-9)


@pytest.mark.parametrize("weights, expected", [(None, [1.0, 1.0]), ([1.0, 3.0], [0.5, 1.5])])
def test_min_trace_entropy_tie_break_is_the_projection_of_the_weights(weights, expected):
    # q1 + q2 = 2: a segment of minimisers; the weighted entropy picks q proportional to w
    res = min_trace_solution(np.array([[1.0, 1.0]]), np.array([2.0]), weights=weights)
    assert res.face_dimension == 1 and res.info["method"] == "entropy"
    np.testing.assert_allclose(res.q, expected, rtol=1e-12)
    assert res.trace == pytest.approx(2.0, rel=1e-14)
    assert 0.0 <= res.info["entropy_kkt"] < 1e-12
    assert res.info["primal_residual"] < 1e-14


# ---------------------------------------------------------------- bregman_projection_cvxpy

def test_cvxpy_baseline_with_multiplicities_and_a_named_solver():
    pytest.importorskip("cvxpy")
    A, y, q0 = _instance(2, m=2, d=4)
    mult = np.array([1.0, 2.0, 4.0, 1.0])
    ref = bregman_projection(A, y, q0, multiplicities=mult)
    q, info = bregman_projection_cvxpy(A, y, q0, multiplicities=mult, solver="SCS",
                                       eps=1e-9, max_iters=100000)
    assert info == {"status": "optimal", "solver": "SCS"}
    assert q.dtype == np.float64
    np.testing.assert_allclose(q, ref.q, rtol=1e-4)


def test_cvxpy_baseline_names_a_failing_solver():
    pytest.importorskip("cvxpy")
    import cvxpy as cp
    if "OSQP" not in cp.installed_solvers():
        pytest.skip("needs OSQP, which cannot solve exponential cones")
    A, y, q0 = _instance(2, m=2, d=4)
    with pytest.raises(SolverFailure, match=r"solver = 'OSQP' failed on the exponential-cone "
                                            r"Bregman projection: SolverError"):
        bregman_projection_cvxpy(A, y, q0, solver="OSQP")


def test_cvxpy_baseline_refuses_infeasible_data():
    pytest.importorskip("cvxpy")
    A = np.array([[1.0, 1.0]])
    with pytest.raises(InfeasibleError, match=r"A diag\(m\) q = y has no solution q >= 0 "
                                              r"\(cvxpy status infeasible"):
        bregman_projection_cvxpy(A, np.array([-1.0]), np.array([1.0, 1.0]), solver="CLARABEL")


# ------------------------------------------------- the thresholds of the rescaling (1e+-20)

def _unit_max_instance(seed=4):
    rng = np.random.default_rng(seed)
    A = rng.uniform(0.2, 1.0, (2, 5))
    A[0, 0] = 1.0                                   # max |A| = 1 exactly
    y = A @ rng.uniform(0.5, 1.5, 5)
    return A, y / np.max(np.abs(y))                 # max |y| = 1 exactly


def test_rescaling_starts_exactly_outside_the_documented_ratio_interval():
    # Y_RESCALE_BELOW = 1e-20: a ratio max|y| / max|A| of exactly 1e-20 is solved as given
    # (every log q0 = log 1e-20 < -30: the LP start), a smaller one at the unit scale (the
    # zero start of log q0 ~ 0)
    A, y = _unit_max_instance()
    at = bregman_projection(A, 1e-20 * y, log_q0=np.full(5, math.log(1e-20)))
    assert at.info["start"] == "lp"
    below = bregman_projection(A, 0.9e-20 * y, log_q0=np.full(5, math.log(0.9e-20)))
    assert below.info["start"] == "zero"
    np.testing.assert_allclose(below.q / 0.9e-20, at.q / 1e-20, rtol=1e-10)
    # the upper end: a ratio of exactly 1e20 is solved as given (log q0 = 0: the zero start)
    top = bregman_projection(A, 1e20 * y, np.ones(5))
    assert top.info["start"] == "zero"
    np.testing.assert_allclose((A @ top.q) / 1e20, y, rtol=1e-10)


@pytest.mark.parametrize("amax", [1.0, 0.25])
def test_ratio_just_above_1e20_is_solved_at_the_unit_scale(amax):
    # ratio 2^67 ~ 1.48e20: solved as the unit-scale problem (y / 2^67, q0 / 2^67), whose
    # every log q0 is below -30 (the LP start), for max |A| = 1 and max |A| < 1
    A, y = _unit_max_instance()
    A = amax * A
    c = 2.0 ** 67 * amax
    out = bregman_projection(A, c * y, np.ones(5))
    ref = bregman_projection(A, amax * y, log_q0=np.full(5, -67 * math.log(2.0)))
    assert ref.info["start"] == "lp" and out.info["start"] == "lp"
    np.testing.assert_allclose(out.q, 2.0 ** 67 * ref.q, rtol=1e-10)


def test_min_trace_reduced_costs_are_per_unit_multiplicity():
    rng = np.random.default_rng(6)
    A = rng.uniform(0.2, 2.0, (2, 5))
    y = A @ rng.uniform(0.5, 1.5, 5)
    mult = np.array([1e6, 3e5, 1.0, 2e6, 5e5])
    res = min_trace_solution(A, y, multiplicities=mult)
    r = 1.0 - A.T @ res.dual
    on = r <= 1e-9
    assert res.info["max_reduced_cost_on_face"] == pytest.approx(
        float(np.abs(r[on]).max()), abs=1e-12)
    assert res.info["min_reduced_cost_off_face"] == pytest.approx(float(r[~on].min()),
                                                                  rel=1e-9)
