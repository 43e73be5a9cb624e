"""Greedy low-rank learning, the small-initialisation limit and the ``beyond`` experiments.

Tolerances: the flow is integrated by LSODA at ``rtol = 1e-11`` and stopped by the monitor at
``qtol = 1e-10``; measured agreement with the proved commuting laws is ~1e-12, so 1e-8 leaves
four orders of margin for other BLAS/platforms. Non-commuting distances are measured laws, and
the thresholds below sit an order of magnitude above the measured values.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import quadnet as qn
from quadnet.commuting import experiments as ex
from quadnet.commuting.greedy import min_trace_interpolant
from quadnet.exceptions import ConvergenceWarning, DivergenceError


def _commuting(seed=0, d=4, m=2):
    inst = qn.commuting.random_commuting_instance(seed, d, m)
    V = np.linalg.qr(np.random.default_rng(seed + 100).standard_normal((d, d)))[0]
    return qn.CommutingSensing(V, inst["spectra"], inst["y"]), inst


# ----------------------------------------------------------------- proved commuting laws
def test_factor_flow_limit_is_the_bregman_projection():
    loss, inst = _commuting()
    for eps in (1e-2, 1e-5):
        res = qn.small_init_limit(loss, 4, eps, method="factor")
        br = loss.to_matrix(qn.bregman_projection(inst["spectra"], inst["y"],
                                                  np.full(4, eps)).q)
        assert res.report.status == "converged"
        assert np.linalg.norm(res.Q - br) / np.linalg.norm(br) <= 1e-8


def test_glrl_is_the_minimum_trace_solution_when_measurements_commute():
    for seed in range(3):
        loss, inst = _commuting(seed, d=5, m=3)
        g = qn.greedy_low_rank_learning(loss, 5)
        mt = loss.to_matrix(qn.min_trace_solution(inst["spectra"], inst["y"]).q)
        assert g.status == "interpolating"
        assert np.linalg.norm(g.Q - mt) / np.linalg.norm(mt) <= 1e-8
        assert len(g.path) == len(g.stages) and g.path[-1] is g.stages[-1].Q or np.allclose(
            g.path[-1], g.Q)


def test_reduced_and_factor_descent_agree():
    """Descent from sqrt(eps) I stays in the commutant: q <- (1 - 2 eta g)^2 q exactly."""
    loss, _ = _commuting(1)
    eta = 0.05 / float(np.max(np.abs(loss.reduced_gradient(np.zeros(4)))))
    fac = qn.small_init_limit(loss, 4, 1e-6, eta=eta, method="factor")
    red = qn.small_init_limit(loss, 4, 1e-6, eta=eta)
    assert red.method == "reduced" and fac.method == "factor"
    assert np.linalg.norm(fac.Q - red.Q) / np.linalg.norm(red.Q) <= 1e-8


def test_descent_effective_start_identity_is_exact():
    inst = qn.commuting.random_commuting_instance(0, 12, 4)
    A, y = inst["spectra"], inst["y"]
    eta = 0.3 / float(np.max(np.abs(A.T @ y / 4)))
    out = ex.descent_effective_start(A, y, eta, 20.0)
    br = qn.bregman_projection(A, y, log_q0=np.full(12, -20.0) + out["beta"])
    assert out["converged"]
    assert np.linalg.norm(out["q"] - br.q) / np.linalg.norm(br.q) <= 1e-8
    # the bias is second order in eta g and never positive at leading order
    assert np.all(out["beta"] <= 1e-12)


def test_von_neumann_projection_reduces_to_bregman_when_commuting():
    loss, inst = _commuting(2)
    A = loss.matrices()
    Q = ex.von_neumann_projection(A, inst["y"], math.log(1e-3))
    br = loss.to_matrix(qn.bregman_projection(inst["spectra"], inst["y"], np.full(4, 1e-3)).q)
    assert np.linalg.norm(Q - br) / np.linalg.norm(br) <= 1e-9


# ------------------------------------------------------------------------------ GLRL logic
def test_glrl_eckart_young_and_stopping_rule():
    g = qn.greedy_low_rank_learning(qn.FrobeniusLoss(np.diag([3.0, 1.0, -1.0])), 3)
    assert g.status == "stationary" and g.rank == 2
    assert np.allclose(g.Q, np.diag([3.0, 1.0, 0.0]), atol=1e-8)
    assert [s.rank for s in g.stages] == [1, 2]
    assert np.allclose(g.path[0], np.diag([3.0, 0.0, 0.0]), atol=1e-8)


def test_glrl_adds_a_degenerate_top_eigenspace_at_once():
    g = qn.greedy_low_rank_learning(qn.FrobeniusLoss(np.diag([2.0, 2.0, -1.0])), 3)
    assert g.stages[0].added == 2 and len(g.stages) == 1
    assert np.allclose(g.Q, np.diag([2.0, 2.0, 0.0]), atol=1e-8)


def test_glrl_rank_budget_is_reported_not_nan():
    with pytest.warns(ConvergenceWarning, match="rank budget"):
        g = qn.greedy_low_rank_learning(qn.FrobeniusLoss(np.diag([3.0, 1.0, 0.5])), 3,
                                        max_rank=1)
    assert g.status == "rank_budget" and np.all(np.isfinite(g.Q)) and g.loss_rel > 0.01


# -------------------------------------------------------------------- non-commuting limits
def test_glrl_predicts_the_flow_limit_on_a_gaussian_instance():
    loss = ex.gaussian_symmetric_instance(2)
    g = qn.greedy_low_rank_learning(loss, 5)
    res = qn.small_init_limit(loss, 5, 1e-12)
    assert res.report.converged
    # measured 3.5e-10; law eps^0.81 (GLRL gap ratio 0.187, isolated rank-1 point)
    assert np.linalg.norm(res.Q - g.Q) / np.linalg.norm(g.Q) <= 1e-8
    assert abs(g.predicted_exponent - 0.813) < 0.01


@pytest.mark.parametrize("kind, seed", [("gaussian", 2), ("rankone", 2)])
def test_lsoda_flow_limits_agree_with_dop853(monkeypatch, kind, seed):
    """The factor flows run on LSODA; DOP853 (an explicit pair, a second integrator) gives the
    same limits, statuses and GLRL point. Measured on the 20 instances of the ``beyond`` check:
    the distances of the flow limit from the GLRL point differ by a median 1.7e-9 relative and
    at most 1.8e-3 on the 91 above 1e-9, all 120 within the bound below (1e-3 relative +
    1e-10); below 1e-10 each integrator sits on its own floor (here at eps = 1e-30: DOP853
    3.3e-11, LSODA 5.9e-13, the limit being the GLRL point). Instances: one whose flows
    converge, one that stops on its budget."""
    from quadnet.commuting import greedy
    from quadnet.harness.checks.beyond import rankone_instance

    loss = ex.gaussian_symmetric_instance(seed) if kind == "gaussian" else rankone_instance(seed)
    eps = [1e-3, 1e-12, 1e-30]
    out = {}
    for method in ("LSODA", "DOP853"):
        monkeypatch.setattr(greedy, "FLOW_METHOD", method)
        out[method] = ex.limit_distances(loss, 5, eps, with_sdp=False, max_time_factor=5e3)
    a, b = out["LSODA"], out["DOP853"]
    assert [r["status"] for r in a["rows"]] == [r["status"] for r in b["rows"]]
    assert a["glrl_status"] == b["glrl_status"]
    assert abs(a["glrl_trace"] - b["glrl_trace"]) <= 1e-8 * b["glrl_trace"]
    for ra, rb in zip(a["rows"], b["rows"]):
        assert abs(ra["trace"] - rb["trace"]) <= 1e-8 * rb["trace"]
        assert abs(ra["dist_glrl"] - rb["dist_glrl"]) <= 1e-3 * rb["dist_glrl"] + 1e-10


def test_batched_flows_above_d_24_never_build_the_d4_table(monkeypatch):
    """``limit_distances``'s batched flows fall back to one flow per eps above d = 24 (the
    affine table has d^4 entries: 8 GB at d = 100), as the inner loops of a single flow do."""
    from quadnet.commuting import greedy

    def refuse(loss, d):
        raise AssertionError(f"quadratic_factor_gradients at d = {d}")

    monkeypatch.setattr(greedy, "quadratic_factor_gradients", refuse)
    loss = qn.FrobeniusLoss(np.diag(np.linspace(1.0, -1.0, 25)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        out = greedy._flow_limits(loss, 25, [1e-2], max_time=2.0)
    assert len(out) == 1 and out[0].Q.shape == (25, 25)


def test_counterexample_glrl_trace_exceeds_min_trace():
    loss = ex.gaussian_symmetric_instance(1)
    g = qn.greedy_low_rank_learning(loss, 5)
    sdp = min_trace_interpolant(loss)
    assert sdp.status == "optimal" and sdp.residual <= 1e-8
    assert np.trace(g.Q) >= 1.01 * sdp.trace   # 3.1218 vs 3.0639


def test_min_trace_interpolant_rank_one_design_matches_dense():
    gs = qn.GaussianSensing.random(4, 1, 5, seed=3)
    dense = qn.MeasurementLoss(np.einsum("ia,ib->iab", gs.X, gs.X), gs.y)
    a, b = min_trace_interpolant(gs), min_trace_interpolant(dense)
    assert abs(a.trace - b.trace) <= 1e-6 * b.trace


def test_razin_cohen_dilation_reports_no_finite_limit():
    loss, W = ex.razin_cohen_dilation()
    with pytest.warns(ConvergenceWarning):
        res = qn.small_init_limit(loss, 4, 1e-3, W=W, max_time=300.0)
    assert not res.converged and res.report.status in ("budget", "unbounded")
    assert np.all(np.isfinite(res.Q)) and res.Q[0, 2] > 3.0   # W_11 grows (Razin & Cohen)


def test_commutator_path_deviation_is_linear_in_the_commutator():
    out = ex.commutator_path(0, [0.0, 1e-4, 1e-3])
    assert out["rows"][0]["deviation"] <= 1e-8         # the proved law at t = 0
    assert abs(out["exponent"] - 1.0) < 0.05           # measured 1.000
    assert abs(out["trace_exponent"] - 2.0) < 0.1      # measured 2.00


def test_joint_limit_cell_boundary():
    small = ex.joint_limit(0.1, 64.0, 0)
    big = ex.joint_limit(0.4, 64.0, 0)
    assert small["lp_vs_min_trace"] <= 1e-9 and big["lp_vs_min_trace"] > 1e-3
    assert big["dist_weighted_lp"] < big["dist_min_trace"]
    assert small["identity_error"] <= 1e-8 and big["identity_error"] <= 1e-8


def _descent_reference(A, y, eta, L, max_steps=200_000, rtol=1e-13):
    """The recursion of descent_effective_start written out for one cell, in plain loops."""
    m = A.shape[0]
    z, beta = np.full(A.shape[1], -L), np.zeros(A.shape[1])
    yn = np.max(np.abs(y))
    for k in range(1, max_steps + 1):
        r = A @ np.exp(z) - y
        if np.max(np.abs(r)) <= rtol * yn:
            return z, beta, k
        x = 2.0 * eta * (A.T @ r) / m
        z = z + 2.0 * np.log(np.abs(1.0 - x))
        beta = beta + 2.0 * np.log(np.abs(1.0 - x)) + 2.0 * x
    return z, beta, max_steps


def test_joint_limits_grid_equals_its_cells_and_the_plain_recursion():
    etas, Ls = [0.05, 0.3, 0.6], [4.0, 16.0]
    grid = ex.joint_limits(etas, Ls, 2, d=8, m=3)
    assert [len(row) for row in grid] == [2, 2, 2]
    inst = qn.commuting.random_commuting_instance(2, 8, 3)
    A, y = inst["spectra"], inst["y"]
    g0 = np.max(np.abs(A.T @ y / 3))
    for e, row in zip(etas, grid):
        for L, cell in zip(Ls, row):
            alone = ex.joint_limit(e, L, 2, d=8, m=3)
            assert cell["eta"] == alone["eta"] == e / g0 and cell["log_inv_eps"] == L
            z, beta, k = _descent_reference(A, y, e / g0, L)
            # each cell stops where it would alone, to a few steps: the stopping test reads a
            # residual of 1e-13 relative, where the rounding of the products (batched or not)
            # makes the last steps stall or not; the point reached is the same to 1e-11
            assert abs(cell["steps"] - k) <= 3 and abs(alone["steps"] - k) <= 3
            assert cell["converged"] and alone["converged"]
            assert abs(cell["trace"] - np.exp(z).sum()) <= 1e-11 * np.exp(z).sum()
            assert abs(cell["dist_min_trace"] - alone["dist_min_trace"]) <= 1e-9
            assert cell["identity_error"] <= 1e-8


def test_joint_limits_refuses_bad_lists_by_name():
    with pytest.raises(ValueError, match=r"joint_limits: eta_scales must be non-empty"):
        ex.joint_limits([], [4.0], 0)
    with pytest.raises(ValueError, match=r"log_inv_eps\[1\]"):
        ex.joint_limits([0.1], [4.0, 701.0], 0)
    with pytest.raises(ValueError, match=r"eta_scales\[0\]"):
        ex.joint_limits([-0.1], [4.0], 0)


def test_fit_power_law():
    e = np.array([1e-3, 1e-6, 1e-9])
    f = ex.fit_power_law(e, 2.0 * e ** 0.25)
    assert abs(f["alpha"] - 0.25) < 1e-12 and abs(f["C"] - 2.0) < 1e-10
    assert math.isnan(ex.fit_power_law(e[:1], e[:1])["alpha"])


# -------------------------------------------------------------------------------- bad input
def test_bad_input_gets_clear_errors():
    loss = ex.gaussian_symmetric_instance(0)
    with pytest.raises(TypeError, match="loss"):
        qn.small_init_limit(object(), 5, 1e-3)
    with pytest.raises(TypeError, match="loss"):
        qn.greedy_low_rank_learning("not a loss", 5)
    for bad in (0.0, -1e-3, math.nan, math.inf):
        with pytest.raises(ValueError, match="eps"):
            qn.small_init_limit(loss, 5, bad)
        with pytest.raises(ValueError, match="eps"):
            qn.greedy_low_rank_learning(loss, 5, eps=bad)
    with pytest.raises(ValueError, match="eta"):
        qn.small_init_limit(loss, 5, 1e-3, eta=-0.1)
    with pytest.raises(ValueError, match="d = 4"):
        qn.small_init_limit(loss, 4, 1e-3)
    with pytest.raises(ValueError, match="W"):
        qn.small_init_limit(loss, 5, 1e-3, W=np.ones((4, 2)))
    with pytest.raises(ValueError, match="W"):
        qn.small_init_limit(loss, 5, 1e-3, W=np.zeros((5, 2)))
    with pytest.raises(ValueError, match="method"):
        qn.small_init_limit(loss, 5, 1e-3, method="euler")
    with pytest.raises(ValueError, match="max_rank"):
        qn.greedy_low_rank_learning(loss, 5, max_rank=6)
    with pytest.raises(TypeError, match="progress"):
        qn.small_init_limit(loss, 5, 1e-3, progress="yes")
    with pytest.raises(TypeError, match="linear measurements"):
        min_trace_interpolant(qn.FrobeniusLoss(np.eye(2)))


def test_diverging_step_raises_a_divergence_error():
    loss = ex.gaussian_symmetric_instance(0)
    with pytest.raises(DivergenceError, match="eta"):
        qn.small_init_limit(loss, 5, 1e-2, eta=50.0)


def test_budget_is_a_reported_status():
    loss = ex.gaussian_symmetric_instance(0)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = qn.small_init_limit(loss, 5, 1e-20, max_time=5.0)
    assert res.report.status == "budget" and not res.converged
    assert any(issubclass(x.category, ConvergenceWarning) for x in w)
    assert np.all(np.isfinite(res.Q))


# ------------------------------------------------------------------------ check and cells
def test_beyond_check_quick():
    from quadnet.harness.checks import CheckContext, run_check

    r = run_check("beyond", CheckContext(quick=True))
    assert r.passed, [(row.claim, row.measured) for row in r.rows if not row.passed]
    assert any("THEOREM" in row.claim for row in r.rows)
    assert all(("THEOREM" in row.claim) or ("EXPLORATION" in row.claim) for row in r.rows)


def test_beyond_cells_are_pure():
    from quadnet.harness.cells import beyond_commutator_cell, beyond_joint_cell

    a = beyond_joint_cell(0, 0.2, 16.0, 5)
    assert a == beyond_joint_cell(0, 0.2, 16.0, 5)
    c = beyond_commutator_cell(0, 1e-3, 3)
    assert c["status"] == "converged" and 0 < c["deviation"] < 0.1
