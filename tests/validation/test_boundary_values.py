"""Regression tests of the bad-input findings in losses, sensing, commuting and conformance.

Each case was found by trying extreme but finite arguments one at a time (huge iteration counts
and sizes, tiny tolerances) on the public callables: a run without end, an allocation failure
(``MemoryError``) instead of a refusal naming the sizes, a wrong answer (a feasible problem called
infeasible), or a third-party error (cvxpy's ``SolverError``, LAPACK's ``LinAlgError``) leaking out.
Every refusal names the argument; the messages are asserted.
"""

from __future__ import annotations

import numpy as np
import pytest

import quadnet as qn
from quadnet import _validation as v
from quadnet.commuting import experiments as ex
from quadnet.commuting import greedy as gr


def _commuting():
    inst = qn.commuting.random_commuting_instance(0, d=6, m=3)
    return qn.CommutingSensing(np.eye(6), inst["spectra"], inst["y"]), inst


def _small_loss():
    return qn.MeasurementLoss(np.array([[[1.0, 0.0], [0.0, 2.0]]]), [2.0])


# ------------------------------------------------------------ the four runs without end
def test_recover_iteration_budget_is_bounded():
    prob = qn.GaussianSensing.random(4, 2, 12, seed=0)
    with pytest.raises(ValueError, match=r"max_iter must be <= 1000000, got 1000000000"):
        qn.recover(prob, 2, method="gd", max_iter=10**9)
    with pytest.raises(ValueError, match=r"restarts must be <= 1000, got 1000000000"):
        qn.recover(prob, 2, max_iter=5, restarts=10**9)


def test_reduced_descent_steps_are_bounded():
    cs, _ = _commuting()
    with pytest.raises(ValueError, match=r"steps must be <= 100000000, got 1000000000"):
        cs.gradient_descent(np.ones(6), eta=0.01, steps=10**9)


def test_mirror_flow_tolerance_has_a_floor():
    cs, _ = _commuting()
    with pytest.raises(ValueError, match=r"rtol must be a finite real number in \[1e-13, 1\), "
                                         r"got 1e-300"):
        cs.mirror_flow(np.ones(6), times=[0.0, 1e6], rtol=1e-300, atol=1e-300)


def test_small_init_limit_budget_and_underflow():
    with pytest.raises(ValueError, match=r"max_steps must be <= 50000000"):
        gr.small_init_limit(_small_loss(), 2, 1e-8, method="factor", max_steps=10**9)
    with pytest.raises(ValueError, match=r"eps = 1e-300 underflows the factor dynamics"):
        gr.small_init_limit(_small_loss(), 2, 1e-300)
    with pytest.raises(ValueError, match=r"qtol must be a finite real number in \[1e-16, 1\)"):
        gr.small_init_limit(_small_loss(), 2, 1e-8, qtol=1e-300)


def test_other_loop_budgets_are_bounded():
    with pytest.raises(ValueError, match=r"trials must be <= 1000, got 1000000000"):
        qn.check_manifold(qn.PSDQuotient(3, 2), trials=10**9)
    _, inst = _commuting()
    with pytest.raises(ValueError, match=r"max_steps must be <= 100000000"):
        ex.descent_effective_start(inst["spectra"], inst["y"], 0.01, 700.0, max_steps=10**9)
    with pytest.raises(ValueError, match=r"max_iter must be <= 100000"):
        qn.bregman_projection(inst["spectra"], inst["y"], np.ones(6), max_iter=10**9)


# ----------------------------------------------------------------- sizes refused up front
@pytest.mark.parametrize("call, match", [
    (lambda: qn.GaussianSensing.random(4, 2, 10**9, seed=0),
     r"d = 4, r = 2, m = 1000000000: the design X .* needs about [0-9.]+ GiB, more than"),
    (lambda: qn.GaussianSensing.random(10**6, 2, 10**4, seed=0), r"d = 1000000, .*GiB"),
    (lambda: qn.commuting.random_commuting_instance(0, d=10**9, m=3),
     r"d = 1000000000, m = 3: the spectra .* GiB"),
    (lambda: qn.geometry.random_orthogonal(10**5, 0), r"r = 100000: .* GiB"),
])
def test_huge_sizes_are_refused_naming_them(call, match):
    with pytest.raises(v.SizeTooLargeError, match=match):
        call()


def test_gram_factor_memory_is_estimated(monkeypatch):
    prob = qn.GaussianSensing.random(4, 2, 12, seed=0)
    monkeypatch.setattr(v.resources, "available_memory", lambda: 100)
    with pytest.raises(v.SizeTooLargeError, match=r"U: the Gram factor K .* GiB"):
        prob.gram_factor(prob.U_star)


def test_sample_bounds_refuse_overflowing_arguments():
    with pytest.raises(ValueError, match=r"d must be <= 1000000000000"):
        qn.sensing.sample_bound(10**300, 2)
    with pytest.raises(ValueError, match=r"delta = 1e-300, .*overflows float64"):
        qn.sensing.concentration_samples(3, 1e-300)


# ----------------------------------------------------------------------- wrong answers
def test_min_trace_reduced_cost_tolerance_has_a_floor():
    """``rc_tol = 1e-300`` called a feasible problem infeasible (the face was missed)."""
    _, inst = _commuting()
    with pytest.raises(ValueError, match=r"rc_tol must be a finite real number in \[1e-13, 1\)"):
        qn.min_trace_solution(inst["spectra"], inst["y"], rc_tol=1e-300)
    lo = qn.min_trace_solution(inst["spectra"], inst["y"], rc_tol=1e-13)
    ref = qn.min_trace_solution(inst["spectra"], inst["y"])
    assert lo.trace == pytest.approx(ref.trace, rel=1e-12)


def test_nested_factor_dynamics_are_guarded_at_the_outer_boundary():
    """Nested calls skip their checks, so the experiment refuses what the inner one would
    (it raised ``ZeroDivisionError`` from the underflowed factor flow)."""
    with pytest.raises(ValueError, match=r"eps must be a number or a 1-d list of numbers in "
                                         r"\[1e-150, 1\]"):
        ex.commuting_cross_check(0, eps=(1e-300,))
    with pytest.raises(ValueError, match=r"eps must be a finite real number in \[1e-150, 1\]"):
        gr.greedy_low_rank_learning(qn.FrobeniusLoss(np.diag([3.0, 1.0, -1.0])), 3, eps=1e-300)


def test_symmetric_check_does_not_overflow_near_the_largest_float():
    T = np.diag([1e308, -1e308, 1.0, 1.0])
    # the checked matrix keeps its entries (0.5 * (T + T^T) overflowed to inf, and LAPACK then
    # failed on an "infinite" target)
    assert np.array_equal(v.as_symmetric(T, "T"), T)
    # the squared eigenvalue 1e616 overflows: refused naming the extreme argument
    with pytest.raises(v.NonFiniteResultError, match=r"eckart_young_value .*target"):
        qn.geometry.eckart_young_value(T, 1)


# ------------------------------------------------------------ third-party errors wrapped
def test_cvxpy_solver_failure_names_the_solver():
    pytest.importorskip("cvxpy")
    prob = qn.GaussianSensing.random(3, 1, 12, seed=0)
    with pytest.raises(v.SolverFailure, match=r"solver = 'OSQP' failed on the "
                                              r"trace-minimisation SDP: SolverError"):
        qn.trace_min_sdp(prob, solver="OSQP")
    with pytest.raises(ValueError, match=r"solver must be one of the installed cvxpy solvers"):
        qn.trace_min_sdp(prob, solver="NOPE")


def test_lapack_failure_is_a_value_error_naming_the_argument():
    def boom(A):
        raise np.linalg.LinAlgError("SVD did not converge")

    wrapped = v.validate_params({"A": v.Array(ndim=2)})(boom)
    with pytest.raises(v.LinAlgFailure, match=r"boom: LAPACK failed \(SVD did not converge\) "
                                              r"on A") as info:
        wrapped(np.eye(2))
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value.__cause__, np.linalg.LinAlgError)


# ------------------------------------------------------------------ validated once
def test_recover_checks_each_argument_once():
    prob = qn.GaussianSensing.random(4, 2, 40, seed=0)
    with v.count_validations() as seen:
        qn.recover(prob, 2, max_iter=20, seed=0)
    names = [n for _, n in seen]
    assert len(names) == len(set(names)), names
    assert "problem" in names and "gtol" in names


def test_tables_drive_the_docs():
    doc = qn.GaussianSensing.random.__doc__
    assert "must fit in the available memory" in doc
    assert "``noise``: a real number, finite and >= 0" in doc
    assert "``max_iter``: None or an integer in [1, 1000000]" in qn.recover.__doc__


def test_joint_limit_refuses_an_eps_that_underflows_instead_of_running_its_whole_budget():
    """q0 = exp(-log_inv_eps) must be a normal float64; at log_inv_eps = 1e6 it was 0.0 and the
    multiplicative descent spent its 200,000 steps without moving (> 90 s)."""
    from quadnet.commuting.experiments import descent_effective_start, joint_limit

    with pytest.raises(ValueError, match=r"log_inv_eps must be a finite real number in \(0, 700\]"):
        joint_limit(0.1, 1e6, 0)
    with pytest.raises(ValueError, match="log_inv_eps"):
        descent_effective_start(np.eye(2), np.ones(2), 0.1, 701.0)
    out = joint_limit(0.1, 700.0, 0, d=8, m=3)  # the largest accepted value still converges
    assert out["converged"] and out["residual"] <= 1e-10


def test_ill_conditioned_tiny_factor_projects_finitely():
    """A factor at scale 1e-149 with condition 1e6 took the SVD route unscaled: its smaller
    squared singular value (1e-310) made 1/(s_i + s_j) overflow. Found by hypothesis."""
    U = np.array([[7.32005165e-151, -1.78197345e-150], [3.72860813e-150, -9.07668554e-150]])
    M = qn.PSDQuotient(2, 2)
    Z = np.arange(4.0).reshape(2, 2) - 1.5
    h, v = M.horizontal_projection(U, Z), M.vertical_projection(U, Z)
    # the projections do not depend on |U|: compare with the unit-scale factor
    assert np.allclose(h, M.horizontal_projection(U / 1e-149, Z), rtol=0, atol=1e-12)
    assert np.linalg.norm(h + v - Z) <= 1e-13 * np.linalg.norm(Z)
