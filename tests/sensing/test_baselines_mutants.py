"""trace_min_sdp against independent references (mutation testing of quadnet.sensing.baselines).

The SDP ``min tr Q s.t. x_i^T Q x_i = y_i, Q PSD`` is solved a second time here through a
different cvxpy formulation (one ``quad_form`` constraint per measurement); the returned
``Q`` is checked against its definition (feasible, PSD, the optimal trace), the clean-up of
the solver's matrix against the Moreau characterisation of the PSD projection, and the record
fields against the solver run they report.
"""

from __future__ import annotations

import numpy as np
import pytest

from quadnet import GaussianSensing
import quadnet.sensing.baselines as bl

cp = pytest.importorskip("cvxpy")


def _reference(problem, solver="CLARABEL", **opts):
    """The same SDP written per measurement: ``x_i^T Z x_i = y_i`` as ``quad_form``."""
    d = problem.d
    Z = cp.Variable((d, d), symmetric=True)
    cons = [Z >> 0] + [cp.quad_form(x, Z) == yi for x, yi in zip(problem.X, problem.y)]
    prob = cp.Problem(cp.Minimize(cp.trace(Z)), cons)
    prob.solve(solver=solver, **opts)
    return prob, Z.value


def _measure(X, Q):
    return np.einsum("ij,jk,ik->i", X, Q, X)


def test_underdetermined_sdp_matches_a_second_formulation():
    # m = 5 < d (d + 1) / 2 = 10: the optimum is not Q* (smaller trace), so only the objective
    # and the constraints decide it.
    prob = GaussianSensing.random(4, 1, 5, seed=1)
    res = bl.trace_min_sdp(prob)
    ref, Z = _reference(prob, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert ref.status == "optimal"
    # feasibility at the solver's tolerance (1e-10 on y of order 1)
    np.testing.assert_allclose(_measure(prob.X, res.Q), prob.y, rtol=0, atol=1e-7)
    # optimal trace: both interior-point solutions agree to ~ the gap tolerance
    assert abs(np.trace(res.Q) - np.trace(Z)) <= 1e-7 * np.trace(Z)
    assert np.trace(res.Q) < np.trace(prob.Q_star) - 0.05   # a genuinely different optimum
    np.testing.assert_allclose(res.Q, res.Q.T, rtol=0, atol=0)
    assert np.linalg.eigvalsh(res.Q).min() >= -1e-12


def test_well_sampled_sdp_returns_the_planted_matrix_and_its_record():
    prob = GaussianSensing.random(3, 1, 12, seed=0)
    res = bl.trace_min_sdp(prob)
    ref, _ = _reference(prob, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10,
                        max_iter=200)
    assert np.linalg.norm(res.Q - prob.Q_star) <= 1e-8 * np.linalg.norm(prob.Q_star)
    assert res.status == "optimal" and type(res.status) is str
    assert res.converged is True
    assert res.solver == "CLARABEL"
    assert type(res.iterations) is int and 1 <= res.iterations <= 200


@pytest.mark.parametrize("eps", [1e-3, 1e-10])
def test_eps_reaches_the_solver_as_its_tolerances(eps):
    # Clarabel's iteration count is that of a direct solve with the same three tolerances;
    # the loose tolerance stops strictly earlier than the default one (measured 3 vs 5).
    prob = GaussianSensing.random(3, 1, 12, seed=0)
    res = bl.trace_min_sdp(prob, eps=eps)
    Q = cp.Variable((3, 3), PSD=True)
    direct = cp.Problem(cp.Minimize(cp.trace(Q)),
                        [cp.sum(cp.multiply(prob.X @ Q, prob.X), axis=1) == prob.y])
    direct.solve(solver="CLARABEL", tol_gap_abs=eps, tol_gap_rel=eps, tol_feas=eps)
    assert res.iterations == direct.solver_stats.num_iters
    default = cp.Problem(cp.Minimize(cp.trace(Q)),
                         [cp.sum(cp.multiply(prob.X @ Q, prob.X), axis=1) == prob.y])
    default.solve(solver="CLARABEL")
    if eps == 1e-3:
        assert res.iterations < default.solver_stats.num_iters


def test_another_solver_is_used_and_recorded():
    prob = GaussianSensing.random(3, 1, 12, seed=0)
    res = bl.trace_min_sdp(prob, solver="scs")
    assert res.solver == "SCS"
    ref, Z = _reference(prob, solver="SCS")
    # SCS is first order: its own accuracy (~1e-4 default) on both formulations
    assert np.linalg.norm(res.Q - prob.Q_star) <= 1e-4 * np.linalg.norm(prob.Q_star)
    assert res.converged is (res.status == "optimal")
    # the SCS iteration count (tens), not Clarabel's (a handful)
    Q = cp.Variable((3, 3), PSD=True)
    direct = cp.Problem(cp.Minimize(cp.trace(Q)),
                        [cp.sum(cp.multiply(prob.X @ Q, prob.X), axis=1) == prob.y])
    direct.solve(solver="SCS")
    assert res.iterations == direct.solver_stats.num_iters


def test_infeasible_measurements_name_the_function_and_status():
    base = GaussianSensing.random(3, 1, 12, seed=0)
    prob = GaussianSensing(base.X, -np.abs(base.y))     # x^T Q x >= 0 for PSD Q: infeasible
    with pytest.raises(ValueError, match=r"^trace_min_sdp: solver = 'CLARABEL' returned "
                                         r"status 'infeasible'"):
        bl.trace_min_sdp(prob)


def test_solver_matrix_is_projected_onto_the_psd_cone(monkeypatch):
    # Replace the solver's matrix by a non-symmetric one with a clearly negative eigenvalue:
    # the returned Q must be the Frobenius projection P of S = sym(raw) onto the PSD cone,
    # characterised by P >= 0, P - S >= 0 and <P, P - S> = 0 (Moreau).
    real = bl.solve_cvxpy
    rng = np.random.default_rng(3)
    raw = {}

    def perturbed(prob, *args, **kw):
        real(prob, *args, **kw)
        var = prob.variables()[0]
        G = rng.standard_normal(var.shape)
        raw["S"] = var.value + 0.3 * G       # not symmetric, indefinite
        var.save_value(raw["S"])

    monkeypatch.setattr(bl, "solve_cvxpy", perturbed)
    prob = GaussianSensing.random(4, 1, 20, seed=0)
    res = bl.trace_min_sdp(prob)
    S = (raw["S"] + raw["S"].T) / 2
    assert np.linalg.eigvalsh(S).min() < -0.05           # the clipping has work to do
    P = res.Q
    scale = np.linalg.norm(S)
    np.testing.assert_allclose(P, P.T, rtol=0, atol=1e-14 * scale)
    assert np.linalg.eigvalsh(P).min() >= -1e-12 * scale
    assert np.linalg.eigvalsh(P - S).min() >= -1e-12 * scale
    assert abs(np.sum(P * (P - S))) <= 1e-12 * scale ** 2
    # and the nearest: no PSD matrix of a random family is closer to S
    for _ in range(20):
        B = rng.standard_normal((4, 4))
        assert np.linalg.norm(B @ B.T * 0.1 - S) >= np.linalg.norm(P - S) - 1e-12


@pytest.mark.parametrize("stats", ["none", "missing"])
def test_a_solver_without_an_iteration_count_reports_zero(monkeypatch, stats):
    import types

    real = bl.solve_cvxpy

    def no_count(prob, *args, **kw):
        real(prob, *args, **kw)
        if stats == "none":
            prob._solver_stats.num_iters = None
        else:
            prob._solver_stats = types.SimpleNamespace(solver_name="CLARABEL")

    monkeypatch.setattr(bl, "solve_cvxpy", no_count)
    prob = GaussianSensing.random(3, 1, 12, seed=0)
    res = bl.trace_min_sdp(prob)
    assert res.iterations == 0 and type(res.iterations) is int
    assert np.linalg.norm(res.Q - prob.Q_star) <= 1e-8 * np.linalg.norm(prob.Q_star)
