"""The parts of the Bregman projection (quadnet theory §5) one at a time, against closed forms.

Fast, deterministic cases (no hypothesis): the dual value and its overflow cut, the Newton
direction and its pseudo-inverse fallback, the LP warm start (dual feasibility and strong
duality against an independent ``linprog``), the Farkas certificate, Newton's stopping
reasons and budget, every field of a result (single-constraint problems have the closed form
``q = q0 y / sum(m q0)``, ``nu = log(y / sum(m q0))``; ``q1 = q2`` gives the geometric mean),
and the validation relations with their messages. ``tests/commuting/test_bregman.py`` holds the
randomised properties.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.optimize import linprog

from quadnet.commuting import bregman as b
from quadnet.exceptions import InfeasibleError

A1 = np.array([[1.0, 1.0]])


def _closed_form(q0, y, mult=None):
    mult = np.ones_like(q0) if mult is None else mult
    e = y / float(mult @ q0)
    return q0 * e, math.log(e)


# ------------------------------------------------------------------------ dual value
def test_dual_value_is_the_dual_objective_and_cuts_overflow_above_700():
    A = np.array([[1.0, 2.0], [0.5, -1.0]])
    y, mult = np.array([1.0, 2.0]), np.array([1.0, 3.0])
    ell, nu = np.array([0.1, -0.2]), np.array([0.3, 0.4])
    ref = float(np.sum(mult * np.exp(ell + A.T @ nu)) - y @ nu)
    assert b._dual_value(A, y, mult, ell, nu) == pytest.approx(ref, rel=1e-15)
    one = np.array([[1.0]])
    # exactly at the cut it is still evaluated, just above it is +inf
    assert b._dual_value(one, np.array([0.0]), np.ones(1), np.array([700.0]), np.zeros(1)) == \
        pytest.approx(math.exp(700.0), rel=1e-15)
    assert b._dual_value(one, np.array([0.0]), np.ones(1), np.array([700.5]),
                         np.zeros(1)) == math.inf


# -------------------------------------------------------------------- Newton direction
def test_newton_direction_solves_the_system_or_pseudo_inverts():
    H = np.array([[4.0, 1.0], [1.0, 3.0]])
    g = np.array([1.0, 2.0])
    np.testing.assert_allclose(b._newton_direction(H, g), -np.linalg.solve(H, g), rtol=1e-14)
    # singular: Cholesky fails, the eigen fallback keeps eigenvalues > 1e-14 lambda_max
    Hs = np.diag([1.0, 0.0, 5e-14])
    gs = np.array([1.0, 7.0, 1e-14])
    np.testing.assert_allclose(b._newton_direction(Hs, gs), [-1.0, 0.0, -0.2], rtol=1e-12)
    Hd = np.diag([1.0, 0.0, 5e-15])            # below the cut: dropped
    np.testing.assert_array_equal(b._newton_direction(Hd, gs), [-1.0, 0.0, 0.0])
    np.testing.assert_array_equal(b._newton_direction(np.zeros((2, 2)), g), [0.0, 0.0])


# ------------------------------------------------------------------------ LP warm start
def test_lp_start_is_an_optimal_dual_of_the_q0_to_zero_lp():
    A = np.array([[1.0, 2.0, 0.5, 1.0], [0.0, 1.0, 1.0, 3.0]])
    y = np.array([2.0, 3.0])
    mult = np.array([1.0, 2.0, 1.0, 1.0])
    ell = np.array([-40.0, -35.0, -50.0, -38.0])
    nu = b._lp_start(A, y, mult, ell)
    assert nu.shape == (2,)
    # dual feasibility A^T nu <= -log q0, tight on at least m = 2 columns (a basis)
    slack = -ell - A.T @ nu
    assert slack.min() >= -1e-9 and np.sum(np.abs(slack) < 1e-9) >= 2
    # strong duality against an independent primal LP
    prim = linprog(-mult * ell, A_eq=A * mult, b_eq=y, bounds=[(0, None)] * 4, method="highs")
    assert y @ nu == pytest.approx(prim.fun, rel=1e-12)
    # q = q0 exp(A^T nu) <= 1: no underflow where it matters
    assert np.exp(ell + A.T @ nu).max() == pytest.approx(1.0, rel=1e-9)
    with warnings.catch_warnings():                 # HiGHS is called with valid options only
        warnings.simplefilter("error")
        np.testing.assert_array_equal(b._lp_start(A, y, mult, ell), nu)


def test_lp_start_unbounded_gives_zero_and_infeasible_raises():
    # min -(q1 + q2) on q1 = q2: unbounded, no dual: Newton starts from 0
    np.testing.assert_array_equal(
        b._lp_start(np.array([[1.0, -1.0]]), np.array([0.0]), np.ones(2), np.ones(2)), [0.0])
    with pytest.raises(InfeasibleError, match=r"A q = y has no solution with q >= 0"):
        b._lp_start(A1, np.array([-1.0]), np.ones(2), np.zeros(2))


# ----------------------------------------------------------------------------- Farkas
def test_farkas_certificate_lies_in_the_box_and_is_optimal():
    nu = b._farkas(A1, np.array([-1.0]))           # nu <= 0, maximise -nu: nu = -1
    np.testing.assert_array_equal(nu, [-1.0])
    nu = b._farkas(-A1, np.array([1.0]))           # -nu <= 0, maximise nu: nu = 1
    np.testing.assert_array_equal(nu, [1.0])
    B = np.array([[1.0, 0.0], [0.0, 1.0]])
    nu = b._farkas(B, np.array([-1.0, 2.0]))       # nu1 = -1, nu2 <= 0: best nu2 = 0
    np.testing.assert_allclose(nu, [-1.0, 0.0], atol=1e-12)


def test_infeasible_error_reports_the_certificate_exactly():
    with pytest.raises(InfeasibleError) as exc:
        b._raise_infeasible(A1, np.array([-1.0]))
    assert str(exc.value) == (
        "A q = y has no solution with q >= 0 (infeasible measurements): Farkas certificate nu "
        "with max (A^T nu) = 0 <= 0 and y^T nu = 1 > 0 (see the exception's .certificate)")
    np.testing.assert_array_equal(exc.value.certificate, [-1.0])
    with pytest.raises(InfeasibleError, match=r"max \(A\^T nu\) = 0 <= 0 and y\^T nu = 2 > 0"):
        b._raise_infeasible(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([-1.0, -1.0]))


# ---------------------------------------------------------------------------- Newton
def test_newton_reaches_the_closed_form_within_its_budget():
    q0 = np.array([1.0, 3.0])
    y = np.array([2.0])
    nu, it, res, status = b._newton(A1, y, np.ones(2), np.log(q0), np.zeros(1), 1e-14, 200)
    assert status == "tol" and res <= 1e-14 and 1 <= it <= 8
    assert nu[0] == pytest.approx(math.log(0.5), abs=1e-14)
    # the budget is exact: one step, then "max_iter", iteration count 1
    nu1, it1, res1, status1 = b._newton(A1, np.array([1000.0]), np.ones(2), np.zeros(2),
                                        np.zeros(1), 1e-14, 1)
    assert (it1, status1) == (1, "max_iter") and res1 > 1e-3
    # already solved: zero iterations
    nu0, it0, res0, status0 = b._newton(A1, np.array([2.0]), np.ones(2), np.zeros(2),
                                        np.zeros(1), 1e-14, 5)
    assert (it0, status0, res0) == (0, "tol", 0.0) and nu0[0] == 0.0


def test_newton_residual_is_relative_to_the_data_scale():
    A = np.array([[1.0, -1.0], [1.0, 1.0]])
    y = np.array([0.0, 2e10])
    nu, it, res, status = b._newton(A, y, np.ones(2), np.zeros(2), np.zeros(2), 1e-14, 200)
    assert status == "tol"
    q = np.exp(A.T @ nu)
    scale = max(np.abs(y).max(), (np.abs(A) @ q).max())
    assert res == pytest.approx(np.abs(A @ q - y).max() / scale, abs=1e-30)
    np.testing.assert_allclose(q, [1e10, 1e10], rtol=1e-13)


def test_newton_below_the_rounding_floor_stagnates():
    # log q0 of size 25: the residual's rounding floor ~ 1e-16, never exactly 0
    A = np.array([[0.13, -0.13, 0.64], [0.1, -0.54, 0.36]])
    y = np.array([1.32, -0.45])
    ell = np.array([-25.3, -12.5, 0.8])
    nu, it, res, status = b._newton(A, y, np.ones(3), ell, np.zeros(2), 0.0, 200)
    assert status == "stagnated" and 0.0 < res < 1e-14 and 5 <= it < 40
    res_proj = b.bregman_projection(A, y, np.exp(ell), tol=1e-300)
    assert res_proj.converged and res_proj.info["status"] == "converged (tolerance floor)"
    np.testing.assert_allclose(res_proj.nu, nu, rtol=1e-12)


# --------------------------------------------------------------------- full results
def test_every_field_of_a_projection_matches_the_closed_form():
    q0, y, mult = np.array([1.0, 3.0]), np.array([2.0]), np.array([2.0, 1.0])
    out = b.bregman_projection(A1, y, q0, multiplicities=mult)
    q, nu = _closed_form(q0, 2.0, mult)
    np.testing.assert_allclose(out.q, q, rtol=1e-14)
    np.testing.assert_allclose(out.log_q, np.log(q), rtol=1e-14)
    assert out.nu.shape == (1,) and out.nu[0] == pytest.approx(nu, rel=1e-14)
    assert out.converged is True and 1 <= out.iterations <= 8
    assert 0.0 <= out.kkt_residual <= 1e-14
    np.testing.assert_array_equal(out.support, [True, True])
    assert set(out.info) == {"start", "primal_residual", "stationarity_residual", "status"}
    assert out.info["start"] == "zero" and out.info["status"] == "converged"
    assert out.info["primal_residual"] <= 1e-14 and out.info["stationarity_residual"] <= 1e-15
    assert out.kkt_residual == max(out.info["primal_residual"],
                                   out.info["stationarity_residual"])
    np.testing.assert_array_equal(out.underflow, [False, False])


def test_start_choice_is_reported():
    y = np.array([1.0])
    ell = np.array([-30.0, -31.0])
    # auto: the LP start only when every log q0 < -30
    assert b.bregman_projection(A1, y, log_q0=ell).info["start"] == "zero"
    deep = b.bregman_projection(A1, y, log_q0=ell - 1e-9)
    assert deep.info["start"] == "lp"
    for start in ("lp", "zero"):
        out = b.bregman_projection(A1, y, log_q0=ell, start=start)
        assert out.info["start"] == start and out.converged
        np.testing.assert_allclose(out.q, _closed_form(np.exp(ell), 1.0)[0], rtol=1e-13)
    np.testing.assert_allclose(deep.q, _closed_form(np.exp(ell), 1.0)[0], rtol=1e-13)


def test_homogeneous_problem_from_a_tiny_start_is_the_geometric_mean():
    # q1 = q2 from q0 = (e^-800, 4 e^-800): q = q0 exp(A^T nu) = (2 e^-800, 2 e^-800), nu = log 2
    A = np.array([[1.0, -1.0]])
    out = b.bregman_projection(A, np.array([0.0]), log_q0=np.array([-800.0, -800.0 + math.log(4)]),
                               start="zero")
    np.testing.assert_allclose(out.log_q, [-800.0 + math.log(2)] * 2, rtol=1e-15)
    assert out.nu[0] == pytest.approx(math.log(2), rel=1e-12)
    np.testing.assert_array_equal(out.q, [0.0, 0.0])
    np.testing.assert_array_equal(out.underflow, [True, True])


def test_a_point_feasible_set_has_empty_support():
    out = b.bregman_projection(A1, np.array([0.0]), np.array([1.0, 2.0]))
    np.testing.assert_array_equal(out.q, [0.0, 0.0])
    np.testing.assert_array_equal(out.log_q, [-np.inf, -np.inf])
    np.testing.assert_array_equal(out.nu, [0.0])
    assert (out.kkt_residual, out.iterations, out.converged) == (0.0, 0, True)
    np.testing.assert_array_equal(out.support, [False, False])
    assert out.info == {"start": "none", "primal_residual": 0.0, "stationarity_residual": 0.0,
                        "status": "converged"}


def test_a_face_of_the_feasible_set_is_found():
    # q1 + q2 = 1 and q2 + q3 = 0: q2 = q3 = 0 on every feasible point
    A = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]])
    out = b.bregman_projection(A, np.array([1.0, 0.0]), np.ones(3))
    np.testing.assert_array_equal(out.support, [True, False, False])
    np.testing.assert_allclose(out.q, [1.0, 0.0, 0.0], atol=1e-15)
    assert out.converged and out.log_q[0] == pytest.approx(0.0, abs=1e-14)
    np.testing.assert_array_equal(out.log_q[1:], [-np.inf, -np.inf])


def test_newton_budget_per_run_and_the_lp_retry():
    with pytest.raises(RuntimeError, match=r"bregman_projection did not converge: relative "
                                           r"residual \d\.\d{3}e[-+]\d\d after 2 Newton iter"):
        b.bregman_projection(np.array([[1.0, 2.0]]), np.array([1000.0]), np.ones(2), max_iter=1)
    with pytest.raises(RuntimeError, match=r"after 1 Newton iterations"):
        b.bregman_projection(np.array([[1.0, 2.0]]), np.array([1000.0]), np.ones(2), max_iter=1,
                             start="zero")


def test_near_face_threshold():
    A = np.array([[1.0, 1.0]])
    mult = np.ones(2)

    def res(q):
        q = np.asarray(q, float)
        return b.BregmanResult(q, np.log(q), np.zeros(1), 0.0, 1, True, np.ones(2, bool))
    assert b._near_face(res([1.0, 1e-6]), A, np.array([1.0]), mult)
    assert not b._near_face(res([1.0, 1.1e-6]), A, np.array([1.0]), mult)
    # the scale is the larger of |y| and the largest share |a_j| m_j q_j
    assert b._near_face(res([10.0, 1.1e-5]), 1.0 * A, np.array([1.0]), mult) is False
    assert b._near_face(res([10.0, 0.9e-5]), A, np.array([1.0]), mult) is True
    assert b._near_face(res([1.0, 0.5]), A, np.array([1e6]), 2.0 * mult) is True
    off = b.BregmanResult(np.array([1.0, 0.0]), np.array([0.0, -np.inf]), np.zeros(1), 0.0, 1,
                          True, np.array([True, False]))
    assert b._near_face(off, A, np.array([1.0]), mult) is False   # off-support zeros ignored


# ------------------------------------------------------------------ parsing and relations
def test_log_start_parses_exactly_one_start():
    d = 2
    with pytest.raises(TypeError, match=r"^give exactly one of q0= or log_q0=$"):
        b._log_start(None, None, d)
    with pytest.raises(TypeError, match=r"^give exactly one of w= or log_w=$"):
        b._log_start(np.ones(2), np.zeros(2), d, "w")
    np.testing.assert_array_equal(b._log_start(None, np.array([-1e4, 2.0]), d), [-1e4, 2.0])
    np.testing.assert_allclose(b._log_start(np.array([1.0, math.e]), None, d), [0.0, 1.0])
    with pytest.raises(ValueError, match=r"log_q0 must have shape \(2\)"):
        b._log_start(None, np.zeros(3), d)
    with pytest.raises(ValueError, match=r"^q0 must be strictly positive \(found 1 entries <= 0, "
                                         r"min 0\); pass log_q0= for starts below 1e-308$"):
        b._log_start(np.array([0.0, 1.0]), None, d)
    np.testing.assert_array_equal(b._log_start(np.array([0.0, 1.0]), None, d, allow_zero=True),
                                  [-np.inf, 0.0])
    for bad, low in (([0.0, -1.0], "-1"), ([0.0, 0.0], "0")):
        with pytest.raises(ValueError, match=rf"^q0 must be >= 0 with at least one positive "
                                             rf"entry \(zero coordinates stay zero\); got min {low}$"):
            b._log_start(np.array(bad), None, d, allow_zero=True)


def test_mult_and_ell_defaults():
    np.testing.assert_array_equal(b._mult(None, 3), [1.0, 1.0, 1.0])
    m = b._mult([2, 3], 2)
    assert m.dtype == float and m.tolist() == [2.0, 3.0]
    np.testing.assert_array_equal(b._ell(None, [1, -2]), [1.0, -2.0])
    np.testing.assert_array_equal(b._ell(np.array([1.0, 0.0]), None), [0.0, -np.inf])
    assert b._ell(None, [1, 2]).dtype == float


def test_problem_relation_messages():
    A = np.ones((2, 3))
    ok = {"A": A, "y": np.ones(2), "multiplicities": None}
    assert b._check_problem(ok) is None
    assert b._check_problem(dict(ok, multiplicities=np.ones(3))) is None
    assert b._check_problem(dict(ok, y=np.ones(3))) == \
        "y must have length 2 (the number of rows of A), got 3"
    assert b._check_problem(dict(ok, multiplicities=np.ones(2))) == \
        "multiplicities must have length 3 (columns of A), got 2"
    assert b._check_problem(dict(ok, multiplicities=np.array([1.0, 0.0, 2.0]))) == \
        "multiplicities must be positive, got min 0"
    assert b._check_problem({"A": A, "y": np.ones(2)}) is None


def test_start_relation_checks_and_describes():
    rel = b._start_relation()
    assert rel.names == ("q0", "log_q0") and rel.error is ValueError
    assert rel.describe() == ("exactly one of ``q0`` (entries > 0) and ``log_q0`` is given, of "
                              "length ``d``")
    A = np.ones((1, 2))
    assert rel({"A": A, "q0": np.ones(2), "log_q0": None}) is None
    assert rel({"A": A, "q0": None, "log_q0": np.zeros(2)}) is None
    with pytest.raises(TypeError, match=r"^give exactly one of q0= or log_q0=$"):
        rel({"A": A, "q0": None, "log_q0": None})
    with pytest.raises(TypeError, match=r"^give exactly one of q0= or log_q0=$"):
        rel({"A": A, "q0": np.ones(2), "log_q0": np.zeros(2)})
    with pytest.raises(ValueError, match=r"^q0 must have shape \(2,\), got \(3,\)$"):
        rel({"A": A, "q0": np.ones(3), "log_q0": None})
    with pytest.raises(ValueError, match=r"^log_q0 must have shape \(2,\), got \(1,\)$"):
        rel({"A": A, "q0": None, "log_q0": np.zeros(1)})
    with pytest.raises(ValueError, match=r"^q0 must be strictly positive"):
        rel({"A": A, "q0": np.array([1.0, 0.0]), "log_q0": None})
    one = b._start_relation(both=False)
    assert one.names == ("q0",)
    assert one.describe() == "``q0`` has length ``d`` and entries > 0"
    assert one({"A": A, "q0": np.ones(2)}) is None
    with pytest.raises(ValueError, match=r"^q0 must be strictly positive"):
        one({"A": A, "q0": np.array([0.0, 1.0])})
    zero_ok = b._start_relation(allow_zero=True)
    assert zero_ok({"A": A, "q0": np.array([0.0, 1.0]), "log_q0": None}) is None
    with pytest.raises(ValueError, match=r"^q0 must be >= 0 with at least one positive entry"):
        zero_ok({"A": A, "q0": np.array([0.0, -1.0]), "log_q0": None})


def test_divergence_and_weight_relations():
    ok = {"q": np.array([0.0, 1.0]), "q0": np.array([1.0, 2.0]), "multiplicities": None}
    assert b._divergence_args(ok) is None
    assert b._divergence_args(dict(ok, multiplicities=np.array([1.0, 1e-300]))) is None
    assert b._divergence_args(dict(ok, multiplicities=np.array([1.0, 0.0]))) == \
        "multiplicities must be positive, got min 0"
    assert b._divergence_args(dict(ok, multiplicities=np.array([1.0, 0.5]))) is None
    assert b._divergence_args(dict(ok, q=np.array([-1e-300, 1.0]))) == \
        "q must be >= 0, got min -1e-300"
    assert b._divergence_args(dict(ok, q0=np.array([0.0, 1.0]))) == "q0 must be > 0, got min 0"
    assert b._divergence_args(dict(ok, q0=np.array([1e-300, 1.0]))) is None
    A = np.ones((1, 2))
    assert b._positive_weights({"A": A, "weights": None}) is None
    assert b._positive_weights({"A": A, "weights": np.array([1e-300, 1.0])}) is None
    assert b._positive_weights({"A": A, "weights": np.ones(3)}) == \
        "weights must have shape (2,), got (3,)"
    assert b._positive_weights({"A": A, "weights": np.array([0.0, 1.0])}) == \
        "weights must be strictly positive"
    assert b.bregman_divergence(np.array([1.0, 0.0]), np.array([1.0, 1.0]),
                                np.array([1.0, 3.0])) == pytest.approx(3.0, rel=1e-15)


def test_newton_stops_on_an_overflowing_hessian_without_warnings():
    # q = e^700 ~ 1e304 times |a|^2 = 1e6 overflows H (and inf - inf off the diagonal)
    A = np.array([[1e3, 1e3], [1e3, -1e3]])
    nu, it, res, status = b._newton(A, np.array([1.0, 0.0]), np.ones(2),
                                    np.array([700.0, 700.0]), np.zeros(2), 1e-14, 50)
    assert (it, status) == (1, "nonfinite")
    np.testing.assert_array_equal(nu, [0.0, 0.0])
    assert res == 1.0                          # the start's residual: the best seen


def test_newton_at_zero_tolerance_accepts_an_exact_solution():
    nu, it, res, status = b._newton(A1, np.array([2.0]), np.ones(2), np.zeros(2), np.zeros(1),
                                    0.0, 5)
    assert (it, res, status) == (0, 0.0, "tol")


def test_near_face_uses_each_column_and_its_multiplicity():
    def res(q):
        q = np.asarray(q, float)
        return b.BregmanResult(q, np.log(q), np.zeros(1), 0.0, 1, True, np.ones(2, bool))
    y = np.array([1.0])
    # share_j = max_i |A_ij| m_j q_j: (1, 1e-6) is near the face, (1, 1) is not
    assert b._near_face(res([1.0, 1e-3]), A1, y, np.array([1.0, 1e-3])) is True
    assert b._near_face(res([1.0, 1.0]), np.array([[1.0, 1e-7]]), y, np.ones(2)) is True
    assert b._near_face(res([1.0, 1.0]), np.array([[1.0, 1e-7], [0.0, 1.0]]),
                        np.array([1.0, 1.0]), np.ones(2)) is False


def test_an_empty_support_with_nonzero_data_is_infeasible():
    with pytest.raises(InfeasibleError, match=r"A q = y has no solution with q >= 0") as exc:
        b._solve_on(A1, np.array([-1.0]), np.array([2.0, 1.0]), np.zeros(2),
                    np.zeros(2, bool), 1e-14, 10, "auto")
    cert = exc.value.certificate
    assert cert[0] == -1.0                       # B^T nu <= 0 with B = A diag(m), y^T nu = 1


def test_a_run_out_of_budget_is_not_converged_and_says_so():
    A = np.array([[1.0, 2.0, 0.5]])
    y = np.array([5.0])
    # 4 Newton steps reach 4.7e-11 (below 1e-8: returned, not raised), not tol = 1e-14
    out = b.bregman_projection(A, y, np.ones(3), max_iter=4, start="zero")
    assert not out.converged and out.info["status"] == "max_iter"
    assert out.info["start"] == "zero" and out.iterations == 4
    assert 1e-14 < out.kkt_residual < 1e-10
    auto = b.bregman_projection(A, y, np.ones(3), max_iter=4)        # retried from the LP start
    assert not auto.converged and auto.info["status"] == "max_iter"
    assert auto.info["start"] == "lp" and auto.iterations == 8


def test_the_lp_retry_converges_when_the_zero_start_runs_out():
    A = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 1.0]])
    y = A @ np.array([1.0, 0.5, 2.0])
    ell = np.array([-29.0, -25.0, -28.0])        # max log q0 > -30: the zero start first
    out = b.bregman_projection(A, y, log_q0=ell, max_iter=6)
    assert out.converged and out.info["status"] == "converged"
    assert out.info["start"] == "lp" and out.iterations == 12
    ref = b.bregman_projection(A, y, log_q0=ell)
    np.testing.assert_allclose(out.q, ref.q, rtol=1e-12)


def _rel_residual(A, y, mult, ell, nu):
    q = np.exp(np.minimum(ell + A.T @ nu, 700.0))
    g = (A * mult) @ q - y
    return np.abs(g).max() / max(np.abs(y).max(), ((np.abs(A) * mult) @ q).max())


def test_newton_reports_the_relative_residual_of_the_iterate_it_returns():
    # from a tiny start, the measurement scale is |y| (A q ~ 1e-22), later |A| m q
    A = np.array([[1.0, 2.0], [0.5, -1.0]])
    y = np.array([3.0, 0.5])
    mult = np.array([2.0, 0.5])
    ell = np.array([-50.0, -48.0])
    seen = set()
    for k in range(1, 9):
        nu, it, res, status = b._newton(A, y, mult, ell, np.zeros(2), 1e-14, k)
        assert res == pytest.approx(_rel_residual(A, y, mult, ell, nu), rel=1e-12, abs=1e-300)
        seen.add(status)
    assert "max_iter" in seen


def test_newton_with_full_steps_is_undamped_newton_near_the_solution():
    A = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 1.0]])
    y = A @ np.array([1.0, 0.5, 2.0])
    ell = np.log(np.array([1.1, 0.45, 1.9]))          # close to the answer
    mult = np.ones(3)
    nu, its = np.zeros(2), 0
    while _rel_residual(A, y, mult, ell, nu) > 1e-14:     # plain Newton, no line search
        q = np.exp(ell + A.T @ nu)
        nu = nu - np.linalg.solve((A * q) @ A.T, A @ q - y)
        its += 1
    nu_b, it_b, res_b, status = b._newton(A, y, mult, ell, np.zeros(2), 1e-14, 50)
    assert status == "tol" and it_b == its and its >= 3
    np.testing.assert_allclose(nu_b, nu, rtol=1e-12, atol=1e-15)


def test_newton_converging_on_its_last_allowed_step_is_converged():
    A = np.array([[1.0, 2.0, 0.5]])
    y = np.array([5.0])
    full = b._newton(A, y, np.ones(3), np.zeros(3), np.zeros(1), 1e-14, 200)
    k = full[1]
    nu, it, res, status = b._newton(A, y, np.ones(3), np.zeros(3), np.zeros(1), 1e-14, k)
    assert (it, status) == (k, "tol") and res <= 1e-14
    nu, it, res, status = b._newton(A, y, np.ones(3), np.zeros(3), np.zeros(1), 1e-14, k - 1)
    assert (it, status) == (k - 1, "max_iter") and res > 1e-14


def test_newton_declares_stagnation_after_four_steps_without_halving():
    # the best residual after k steps (a budget of k): a step "halves" when best_k < best_{k-1}/2
    A = np.array([[0.13, -0.13, 0.64], [0.1, -0.54, 0.36]])
    y = np.array([1.32, -0.45])
    ell = np.array([-25.3, -12.5, 0.8])
    args = (A, y, np.ones(3), ell, np.zeros(2), 0.0)
    nu, stop, res, status = b._newton(*args, 200)
    assert status == "stagnated"
    best = [_rel_residual(A, y, np.ones(3), ell, np.zeros(2))]      # k = 0: the start
    for k in range(1, stop + 1):
        best.append(b._newton(*args, k)[2])
    stall, expected = 0, None
    for k in range(1, stop + 1):
        stall = 0 if best[k] < 0.5 * best[k - 1] else stall + 1
        if stall >= 4 and best[k] < 1e-8:
            expected = k
            break
    assert expected == stop and res == best[stop]


def test_log_start_checks_dimension_shape_and_sign_naming_the_start():
    with pytest.raises(ValueError, match=r"^q0 must be 1-dimensional, got shape \(2, 1\)$"):
        b._log_start(np.ones((2, 1)), None, 2)
    with pytest.raises(ValueError, match=r"^log_q0 must be 1-dimensional, got shape \(2, 1\)$"):
        b._log_start(None, np.zeros((2, 1)), 2)
    with pytest.raises(ValueError, match=r"^w must have shape \(2\), got \(3,\)$"):
        b._log_start(np.ones(3), None, 2, "w")
    # a negative entry is refused even when another entry is positive
    with pytest.raises(ValueError, match=r"^q0 must be >= 0 with at least one positive entry "
                                         r"\(zero coordinates stay zero\); got min -1$"):
        b._log_start(np.array([1.0, -1.0]), None, 2, allow_zero=True)


def test_newton_direction_cut_is_relative_to_the_largest_eigenvalue():
    # lambda_max = 100: the cut is 1e-12, so 5e-13 is dropped and 5e-12 kept
    g = np.array([1.0, 7.0, 1.0])
    np.testing.assert_array_equal(b._newton_direction(np.diag([100.0, 0.0, 5e-13]), g),
                                  [-0.01, 0.0, 0.0])
    np.testing.assert_allclose(b._newton_direction(np.diag([100.0, 0.0, 5e-12]), g),
                               [-0.01, 0.0, -2e11], rtol=1e-12)
