"""``quadnet.commuting.bregman``: the failure reports of the LP and cone solvers (found by
mutation testing).

HiGHS does not fail on these small problems, so its failure is injected: ``linprog`` as the
module calls it is wrapped so that one chosen call returns the real result with a failure
status and message (status 4, "numerical difficulties"; status 2, "infeasible"), and the
error raised is asserted in full. The cone baseline is stopped early by Clarabel's own
iteration limit.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import quadnet.commuting.bregman as bregman
from quadnet.commuting.bregman import (
    bregman_projection_cvxpy,
    feasible_support,
    min_trace_solution,
)
from quadnet.exceptions import InfeasibleError

INJECTED = "numerical difficulties (injected)"

# q_3 is forced to 0 (second row), q_1 + q_2 = 1 leaves a segment: no strictly positive
# solution, so feasible_support runs its second LP
A_FACE = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
Y_FACE = np.array([1.0, 0.0])


def _inject(monkeypatch, call: int, status: int = 4):
    """Make the ``call``-th ``linprog`` of the module report ``status``; returns the count."""
    real = bregman.linprog
    seen = []

    def linprog(*args, **kwargs):
        seen.append(None)
        res = real(*args, **kwargs)
        if len(seen) == call:
            res.status, res.message = status, INJECTED
        return res
    monkeypatch.setattr(bregman, "linprog", linprog)
    return seen


def test_feasible_support_without_injection_is_the_face(monkeypatch):
    seen = _inject(monkeypatch, call=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # and without a warning
        assert feasible_support(A_FACE, Y_FACE).tolist() == [True, True, False]
    assert len(seen) == 2                       # the positive-point LP, then the 0/1 LP


@pytest.mark.parametrize("call", [1, 2])
def test_feasible_support_reports_a_failing_highs_run(monkeypatch, call):
    _inject(monkeypatch, call)
    with pytest.raises(RuntimeError, match=r"^feasible_support: HiGHS failed \(numerical "
                                           r"difficulties \(injected\)\)$"):
        feasible_support(A_FACE, Y_FACE)


def test_feasible_support_reports_infeasible_from_the_cone_lp(monkeypatch):
    _inject(monkeypatch, call=2, status=2)
    with pytest.raises(InfeasibleError, match=r"^feasible_support: A q = y has no solution with q >= 0"):
        feasible_support(A_FACE, Y_FACE)


def test_min_trace_solution_reports_a_failing_highs_run(monkeypatch):
    _inject(monkeypatch, call=1)
    with pytest.raises(RuntimeError, match=r"^min_trace_solution: HiGHS failed \(numerical "
                                           r"difficulties \(injected\)\)$"):
        min_trace_solution(np.array([[1.0, 2.0]]), np.array([2.0]))


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_cvxpy_baseline_refuses_infeasible_data_when_stopped_early():
    """An infeasible system stays refused as infeasible when the cone solver stops before
    certifying it (Clarabel after 10 iterations reports ``infeasible_inaccurate``)."""
    pytest.importorskip("cvxpy")
    A, y, q0 = np.array([[1.0, 1.0]]), np.array([-1.0]), np.array([1.0, 1.0])
    for max_iter in (10, 100):
        with pytest.raises(InfeasibleError, match=r"^bregman_projection_cvxpy: A diag\(m\) q = y has no "
                                                  r"solution q >= 0 "
                                                  r"\(cvxpy status infeasible(_inaccurate)?\)$"):
            bregman_projection_cvxpy(A, y, q0, solver="CLARABEL", max_iter=max_iter)


def test_feasible_support_takes_one_lp_when_a_positive_solution_exists(monkeypatch):
    """The documented fast path: a system with a strictly positive solution is answered by
    the first LP alone (the cone LP runs only when there is none)."""
    seen = _inject(monkeypatch, call=0)
    A = np.array([[1.0, 2.0, 0.5], [0.3, 1.0, 1.0]])
    assert feasible_support(A, A @ np.array([1.0, 0.2, 0.7])).all()
    assert len(seen) == 1


def _tied_face():
    """Columns 0 and 2 equal (a segment of minimisers), column 3 off the face."""
    a = np.random.default_rng(0).uniform(0.1, 1, size=(2, 2))
    A = np.hstack([a, a[:, [0]], np.random.default_rng(0).uniform(0.01, 0.05, size=(2, 1))])
    A[:, 2] = A[:, 0]
    return A, A @ np.array([1.0, 1.0, 0.0, 0.0]), np.array([1.0, 3.0, 1.0, 5.0])


def test_min_trace_reduced_cost_on_the_face_is_per_unit_multiplicity():
    """``info["max_reduced_cost_on_face"]`` is ``max |1 - (A^T lambda)_k|`` over the face, the
    reduced cost per unit multiplicity, to rounding (here it is not exactly 0)."""
    A, y, mult = _tied_face()
    res = min_trace_solution(A, y, multiplicities=mult)
    per_unit = 1.0 - A.T @ res.dual
    on = per_unit <= 1e-9
    assert on.tolist() == [True, True, True, False]
    want = float(np.abs(per_unit[on]).max())
    if want == 0.0:
        pytest.skip("HiGHS returned an exact dual on the face")
    assert res.info["max_reduced_cost_on_face"] == pytest.approx(want, rel=1e-6, abs=0)
    assert res.info["min_reduced_cost_off_face"] == pytest.approx(float(per_unit[3]), rel=1e-12)


def test_min_trace_rc_tol_is_inclusive():
    """``r_k / m_k <= rc_tol`` puts ``k`` on the face: at ``rc_tol`` equal to the off-face
    coordinate's reduced cost, that coordinate joins the face (and may be positive)."""
    A, y, mult = _tied_face()
    first = min_trace_solution(A, y, multiplicities=mult)
    assert first.support.tolist() == [True, True, True, False]
    tol = first.info["min_reduced_cost_off_face"]
    assert 1e-13 <= tol < 1
    wide = min_trace_solution(A, y, multiplicities=mult, rc_tol=tol)
    assert wide.support.tolist() == [True, True, True, True]
    assert wide.info["min_reduced_cost_off_face"] == np.inf


def _count_support_calls(monkeypatch):
    real = bregman.feasible_support
    seen = []

    def feasible_support(*args, **kwargs):
        seen.append(None)
        return real(*args, **kwargs)
    monkeypatch.setattr(bregman, "feasible_support", feasible_support)
    return seen


@pytest.mark.parametrize("scale", [1.0, 2.0 ** 100])          # 2^100: the rescaled solve
def test_projection_finds_the_support_only_when_asked_or_needed(monkeypatch, scale):
    """A strictly positive, well-separated solution needs no support LP; ``detect_support=True``
    runs exactly one ``feasible_support`` first, at any data scale, with the same answer."""
    A = np.array([[1.0, 2.0, 0.5], [0.3, 1.0, 1.0]])
    y = scale * (A @ np.array([1.0, 0.5, 2.0]))
    q0 = np.full(3, scale)                   # q(c y; c q0) = c q(y; q0): the same shares
    seen = _count_support_calls(monkeypatch)
    plain = bregman.bregman_projection(A, y, q0)
    assert plain.converged and plain.support.all() and seen == []
    asked = bregman.bregman_projection(A, y, q0, detect_support=True)
    assert len(seen) == 1
    np.testing.assert_allclose(asked.q, plain.q, rtol=1e-12)
    np.testing.assert_allclose(A @ asked.q, y, rtol=1e-12)
