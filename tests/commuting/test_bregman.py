"""Tests of quadnet.bregman: Bregman projection, feasible support, minimum-trace selection."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from quadnet.commuting.bregman import (
    CONVERGED_STATUSES,
    InfeasibleError,
    bregman_divergence,
    bregman_projection,
    bregman_projection_cvxpy,
    feasible_support,
    min_trace_solution,
)


def _instance(seed, m, d):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, d))
    return A, A @ rng.uniform(0.5, 1.5, d), rng


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), m=st.integers(1, 6), extra=st.integers(1, 20),
       log_eps=st.sampled_from([0.0, -2.3, -23.0, -230.0, -690.0]))
def test_projection_kkt(seed, m, extra, log_eps):
    d = m + extra
    A, y, rng = _instance(seed, m, d)
    log_q0 = log_eps + rng.uniform(-1, 1, d)
    r = bregman_projection(A, y, log_q0=log_q0)
    # Newton converges quadratically; the floor is rounding in log q0 + A^T nu, i.e.
    # ~ |log q0| * 1e-16 <= 1e-13 here, so 1e-12 leaves a 10x margin.
    assert r.kkt_residual <= 1e-12
    assert np.all(np.isfinite(r.q)) and np.all(r.q >= 0)
    assert np.max(np.abs(A @ r.q - y)) <= 1e-11 * max(1.0, np.max(np.abs(y)))
    # stationarity: log q - log q0 lies in range(A^T) (exactly A^T nu)
    np.testing.assert_allclose(r.log_q - log_q0, A.T @ r.nu, atol=1e-12 * max(1, abs(log_eps)))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_projection_is_minimal_along_feasible_directions(seed):
    A, y, rng = _instance(seed, 3, 9)
    q0 = rng.uniform(0.1, 2.0, 9)
    r = bregman_projection(A, y, q0)
    N = np.linalg.svd(A)[2][3:].T  # null space of A
    base = bregman_divergence(r.q, q0)
    for _ in range(10):
        step = N @ rng.standard_normal(N.shape[1])
        step *= 0.5 * np.min(r.q) / np.max(np.abs(step))  # stays >= 0
        # convexity: D increases along any feasible direction (second order ~ |step|^2/q)
        assert bregman_divergence(r.q + step, q0) >= base - 1e-12


def test_tiny_and_log_form_starts():
    A, y, _ = _instance(1, 5, 20)
    ref = None
    for log_eps in [np.log(1e-300), -1e4, -1e5]:
        r = bregman_projection(A, y, log_q0=np.full(20, log_eps))
        assert np.all(np.isfinite(r.q)) and np.all(np.isfinite(r.nu))
        # rounding of log q0 + A^T nu is ~|log q0| u: 1e5 * 1.1e-16 ~ 1e-11 at the far end
        assert r.kkt_residual <= 1e-15 * abs(log_eps) + 1e-13
        assert r.converged and r.info["status"] in CONVERGED_STATUSES
        if ref is not None:  # all three are (numerically) the eps -> 0 limit here
            assert np.linalg.norm(r.q - ref) <= 1e-9 * np.linalg.norm(ref)
        ref = r.q
    r = bregman_projection(A, y, np.full(20, 1e-300))
    assert r.kkt_residual <= 1e-12


def test_against_cvxpy():
    pytest.importorskip("cvxpy")
    A, y, rng = _instance(7, 4, 15)
    q0 = rng.uniform(0.05, 1.0, 15)
    r = bregman_projection(A, y, q0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        q, _ = bregman_projection_cvxpy(A, y, q0, solver="CLARABEL", tol_gap_abs=1e-12,
                                        tol_gap_rel=1e-12, tol_feas=1e-12)
    # an interior-point solver with 1e-12 gap tolerance: ~1e-9 relative on q
    assert np.linalg.norm(q - r.q) <= 1e-7 * np.linalg.norm(r.q)


def test_multiplicities_equal_repeated_columns():
    rng = np.random.default_rng(3)
    K, m = 6, 3
    mult = np.array([1, 3, 2, 1, 2, 4])
    cols = rng.standard_normal((m, K))
    y = cols @ (mult * rng.uniform(0.5, 1.5, K))
    w = rng.uniform(0.5, 2, K)
    rb = bregman_projection(cols, y, w, multiplicities=mult)
    rc = bregman_projection(np.repeat(cols, mult, axis=1), y, np.repeat(w, mult))
    # same strictly convex problem in two parametrisations: agree to Newton accuracy
    np.testing.assert_allclose(np.repeat(rb.q, mult), rc.q, rtol=1e-11)


def test_infeasible_gives_certificate():
    A = np.array([[1.0, 1.0, 2.0], [1.0, -1.0, 0.5]])
    y = np.array([-1.0, 0.3])  # first row: a nonnegative combination cannot be negative
    with pytest.raises(InfeasibleError, match="no solution with q >= 0") as exc:
        bregman_projection(A, y, np.ones(3))
    nu = exc.value.certificate
    assert np.max(A.T @ nu) <= 1e-9 and y @ nu > 1e-6
    with pytest.raises(ValueError, match="Farkas"):
        min_trace_solution(A, y)
    with pytest.raises(ValueError):
        bregman_projection(A, y, log_q0=np.full(3, -500.0))


def test_boundary_only_feasible_set():
    # q2 + q3 = 0 forces q2 = q3 = 0: no strictly positive solution, the dual diverges
    A = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]])
    y = np.array([1.0, 0.0])
    np.testing.assert_array_equal(feasible_support(A, y), [True, False, False])
    r = bregman_projection(A, y, np.ones(3))
    np.testing.assert_allclose(r.q, [1.0, 0.0, 0.0], atol=1e-14)
    assert r.kkt_residual <= 1e-14


@pytest.mark.parametrize("kwargs, err, match", [
    ({"q0": np.array([1.0, 0.0, 1.0])}, ValueError, "strictly positive"),
    ({"q0": np.array([1.0, -1.0, 1.0])}, ValueError, "strictly positive"),
    ({"q0": np.array([1.0, np.nan, 1.0])}, ValueError, "non-finite"),
    ({"q0": np.array([1.0, np.inf, 1.0])}, ValueError, "non-finite"),
    ({"q0": np.ones(4)}, ValueError, "shape"),
    ({"log_q0": np.array([0.0, np.nan, 0.0])}, ValueError, "non-finite"),
    ({"q0": np.ones(3), "log_q0": np.zeros(3)}, TypeError, "exactly one"),
    ({}, TypeError, "exactly one"),
    ({"q0": np.ones(3), "multiplicities": [1, 2]}, ValueError, "multiplicities"),
    ({"q0": np.ones(3), "multiplicities": [1, 0, 2]}, ValueError, "multiplicities"),
])
def test_bad_input(kwargs, err, match):
    A = np.array([[1.0, 2.0, 3.0]])
    with pytest.raises(err, match=match):
        bregman_projection(A, np.array([2.0]), **kwargs)


def test_bad_shapes():
    with pytest.raises(ValueError, match="y must have length 2"):
        bregman_projection(np.ones((2, 3)), np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="2-dimensional"):
        bregman_projection(np.ones(3), np.ones(1), np.ones(3))
    with pytest.raises(ValueError, match="weights"):
        min_trace_solution(np.ones((1, 3)), np.ones(1), weights=np.array([1.0, -1.0, 1.0]))


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), m=st.integers(1, 5), extra=st.integers(1, 12))
def test_min_trace_matches_lp_on_generic_instances(seed, m, extra):
    d = m + extra
    A, y, _ = _instance(seed, m, d)
    mt = min_trace_solution(A, y)
    lp = linprog(np.ones(d), A_eq=A, b_eq=y, bounds=[(0, None)] * d, method="highs")
    # generic data: unique LP vertex; both are the same basic solution up to HiGHS's 1e-9
    assert mt.face_dimension == 0
    assert abs(mt.trace - lp.fun) <= 1e-9 * max(1.0, lp.fun)
    assert np.linalg.norm(mt.q - lp.x) <= 1e-8 * np.linalg.norm(lp.x)


def _degenerate(seed, mult):
    """Blocks 0..K-2 on the hyperplane a^T lam = 1 (zero reduced cost), the last below it."""
    rng = np.random.default_rng(seed)
    m, K = 2, len(mult)
    lam = rng.standard_normal(m)
    cols = rng.standard_normal((m, K))
    cols -= np.outer(lam, (lam @ cols - 1.0) / (lam @ lam))
    cols[:, -1] -= 0.5 * lam / (lam @ lam)
    p = rng.uniform(0.5, 1.5, K)
    p[-1] = 0.0
    return cols, cols @ p, rng.uniform(0.5, 2.0, K)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6),
       mult=st.lists(st.integers(1, 3), min_size=4, max_size=6))
def test_degenerate_tie_break_block_vs_coordinate(seed, mult):
    mult = np.array(mult)
    cols, y, w = _degenerate(seed, mult)
    K = len(mult)
    mb = min_trace_solution(cols, y, weights=w, multiplicities=mult)
    mc = min_trace_solution(np.repeat(cols, mult, axis=1), y, weights=np.repeat(w, mult))
    assert mb.face_dimension == (K - 1) - 2
    assert mc.face_dimension == int(mult[:-1].sum()) - 2
    np.testing.assert_allclose(np.repeat(mb.q, mult), mc.q, rtol=1e-9, atol=1e-12)
    # the eps -> 0 limit of the Bregman projection of eps w is the tie-split
    br = bregman_projection(cols, y, log_q0=np.log(w) - np.log(1e300), multiplicities=mult)
    assert np.linalg.norm(br.q - mb.q) <= 1e-9 * np.linalg.norm(mb.q)


def test_tie_split_is_entropy_minimiser_on_face():
    mult = np.array([1, 2, 3, 1])
    cols, y, w = _degenerate(11, mult)
    mt = min_trace_solution(cols, y, weights=w, multiplicities=mult)
    S = mt.support
    assert S.tolist() == [True, True, True, False]
    # face: p = m q on S with cols_S p = y, one free direction
    B = cols[:, S] * mult[S]
    n = np.linalg.svd(B)[2][-1]

    def ent(q):
        return float(np.sum(mult[S] * q * np.log(q / w[S])))

    q = mt.q[S]
    # the face direction keeps the trace (it is lambda^T y on the face) ...
    assert abs(mult[S] @ n) <= 1e-12
    # ... and moving along it raises the entropy (strictly convex, minimised at q)
    for t in np.linspace(-1, 1, 21) * 0.2 * q.min() / np.max(np.abs(n)):
        assert ent(q + t * n) >= ent(q) - 1e-13


def test_degenerate_systems():
    A, y, _ = _instance(0, 3, 8)
    ref = bregman_projection(A, y, np.ones(8))
    # a repeated row: singular Newton Hessian, same projection
    r = bregman_projection(np.vstack([A, A[0]]), np.append(y, y[0]), np.ones(8))
    assert r.kkt_residual <= 1e-13
    np.testing.assert_allclose(r.q, ref.q, rtol=1e-12)
    # the same row with an inconsistent right-hand side: infeasible, with a certificate
    with pytest.raises(InfeasibleError):
        bregman_projection(np.vstack([A, A[0]]), np.append(y, y[0] + 1), np.ones(8))
    # y = 0 and a cone of solutions: the projection of q0 onto {q1 = q2 = q3}
    r = bregman_projection(np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0]]), np.zeros(2),
                           np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(r.q, np.full(3, 6.0 ** (1 / 3)), rtol=1e-13)  # geometric mean
    # only q = 0 is feasible
    r = bregman_projection(np.array([[1.0, 1.0]]), np.zeros(1), np.ones(2))
    np.testing.assert_array_equal(r.q, [0.0, 0.0])
    # extreme scales of A and y: the relative residual is scale invariant
    for s in (1e-150, 1e150):
        assert bregman_projection(A * s, y * s, np.ones(8)).kkt_residual <= 1e-13


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), m=st.integers(1, 5), d=st.integers(1, 12),
       log_scale=st.floats(-700, 50), feasible=st.booleans())
def test_never_nan(seed, m, d, log_scale, feasible):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, d)) * (rng.random((m, d)) < 0.7)  # some exact zeros
    y = A @ rng.uniform(0, 2, d) if feasible else rng.standard_normal(m)
    log_q0 = log_scale + rng.uniform(-3, 3, d)
    try:
        r = bregman_projection(A, y, log_q0=log_q0)
    except InfeasibleError as exc:
        nu = exc.certificate
        # Farkas: A^T nu <= 0 and y^T nu > 0 (up to HiGHS's 1e-9 feasibility tolerance)
        assert np.max(A.T @ nu, initial=0.0) <= 1e-7 and y @ nu > 0
        return
    assert np.all(np.isfinite(r.q)) and np.all(np.isfinite(r.nu)) and np.isfinite(r.kkt_residual)
    assert np.all(r.q >= 0)
    # feasible to the solver's accuracy (support LPs use HiGHS's 1e-9 tolerances)
    assert np.max(np.abs(A @ r.q - y)) <= 1e-7 * max(1.0, np.max(np.abs(y)), np.max(r.q))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_integer_instances_limit_equals_min_trace(seed):
    # small integer data: many ties, degenerate faces, y = 0 cones, zero columns
    rng = np.random.default_rng(seed)
    m, d = int(rng.integers(1, 4)), int(rng.integers(2, 9))
    A = rng.integers(-1, 3, (m, d)).astype(float)
    y = A @ rng.integers(0, 3, d).astype(float)
    w = rng.uniform(0.5, 2, d)
    mult = rng.integers(1, 4, d).astype(float)
    mt = min_trace_solution(A, y, weights=w, multiplicities=mult)
    lp = linprog(mult, A_eq=A * mult, b_eq=y, bounds=[(0, None)] * d, method="highs")
    assert abs(mt.trace - lp.fun) <= 1e-8 * max(1.0, lp.fun)  # HiGHS's tolerance
    # integer data keep the reduced costs >= ~1/det, so at log(1/eps) = 1e4 the Bregman
    # projection of eps w is the eps -> 0 limit to rounding (~1e4 * 1e-16)
    br = bregman_projection(A, y, log_q0=np.log(w) - 1e4, multiplicities=mult)
    assert np.linalg.norm(br.q - mt.q) <= 1e-9 * max(np.linalg.norm(mt.q), 1e-300)


def test_infeasible_data_whose_newton_run_diverges_raise_infeasible():
    """Regression: an infeasible instance (a row with non-positive coefficients and y > 0) on
    which the dual Newton iterate runs off to infinity raises InfeasibleError with a Farkas
    certificate, not a RuntimeWarning from a non-finite Newton step."""
    rng = np.random.default_rng(14308)
    A = rng.standard_normal((2, 7)) * (rng.random((2, 7)) < 0.7)
    y = rng.standard_normal(2)
    log_q0 = rng.uniform(-3, 3, 7)
    with pytest.raises(InfeasibleError) as info:
        bregman_projection(A, y, log_q0=log_q0)
    nu = info.value.certificate
    assert np.max(A.T @ nu) <= 1e-7 and y @ nu > 0


# ----------------------------------------------- the result agrees with itself (any instance)
_FAILURE_WORDS = ("stagnat", "line_search", "max_iter", "nonfinite", "fail", "diverg")


def _assert_self_consistent(r, A, y):
    """``converged``, ``info["status"]``, ``support``, ``q`` and ``log_q`` never contradict."""
    status = r.info["status"]
    assert r.converged == (status in CONVERGED_STATUSES), (r.converged, status)
    if r.converged:
        assert not any(w in status for w in _FAILURE_WORDS), status
        assert r.kkt_residual <= 1e-10
    # off the support: exactly zero and log -inf; on it: log q finite, q = exp(log q), and a
    # q of 0.0 only by underflow (log q below the smallest subnormal's log, ~ -745.1)
    off = ~r.support
    assert np.all(r.q[off] == 0.0) and np.all(r.log_q[off] == -np.inf)
    on = r.support
    assert np.all(np.isfinite(r.log_q[on]))
    np.testing.assert_array_equal(r.q[on], np.exp(np.minimum(r.log_q[on], 700.0)))
    assert np.all(r.log_q[r.underflow] < -745.0)
    assert np.array_equal(r.underflow, on & (r.q == 0.0))
    # the support is the face of the feasible set (an independent LP)
    np.testing.assert_array_equal(r.support, feasible_support(A, y))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), m=st.integers(1, 5), extra=st.integers(1, 12),
       zeros=st.integers(0, 4), log_eps=st.sampled_from([0.0, -23.0, -690.0, -1e4]),
       detect=st.booleans())
def test_result_never_contradicts_itself(seed, m, extra, zeros, log_eps, detect):
    # instances with and without a strict face: a non-negative row a with a^T q = 0 forces
    # the coordinates where a > 0 to zero (``zeros`` of them)
    rng = np.random.default_rng(seed)
    d = m + extra + zeros
    A = rng.standard_normal((m, d))
    q_true = rng.uniform(0.5, 1.5, d)
    if zeros:
        q_true[:zeros] = 0.0
        A[0] = np.concatenate([rng.uniform(0.5, 1.5, zeros), np.zeros(d - zeros)])
    y = A @ q_true
    log_q0 = log_eps + rng.uniform(-1, 1, d)
    r = bregman_projection(A, y, log_q0=log_q0, detect_support=detect)
    _assert_self_consistent(r, A, y)
    assert r.support[:zeros].sum() == 0 and r.support[zeros:].all()


def test_readme_tour_instance_is_self_consistent():
    # q0 = e^-10000: most of q underflows to 0.0, yet every coordinate is in the face and
    # log_q is finite; the result is converged and says so
    from quadnet.commuting.algebra import random_commuting_instance

    inst = random_commuting_instance(seed=0)
    A, y = inst["spectra"], inst["y"]
    r = bregman_projection(A, y, log_q0=np.full(A.shape[1], -1e4))
    _assert_self_consistent(r, A, y)
    assert r.converged and r.support.all() and r.underflow.sum() >= 10
    assert r.info["status"] in CONVERGED_STATUSES
