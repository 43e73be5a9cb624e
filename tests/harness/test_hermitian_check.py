"""The ``hermitian`` check (quadnet theory §8): quick mode passes, a broken identity fails its row,
the asymptotic overlap curve against an independent quadrature, the cells are pure."""

from __future__ import annotations

import json

import numpy as np
import pytest

from quadnet.harness.cells_hermitian import complex_dimension, hermitian_recovery_cell
from quadnet.harness.checks import CheckContext, CheckResult, default_checks, run_check
from quadnet.harness.checks import hermitian
from quadnet.harness.checks._base import render_figure
from quadnet.harness.sweeps import run_cells


@pytest.fixture(scope="module")
def quick():
    return run_check("hermitian", CheckContext(quick=True))


def _row(res: CheckResult, start: str):
    rows = [r for r in res.rows if r.claim.startswith(start)]
    assert len(rows) == 1, [r.claim for r in res.rows]
    return rows[0]


def test_quick_mode_runs_and_passes(quick):
    assert quick.status == "PASS", [(r.claim, r.measured) for r in quick.failed]
    assert "hermitian" in default_checks()
    groups = {r.claim[:3] for r in quick.rows}
    assert groups == {"(a)", "(b)", "(c)"}
    # every geometry identity is held to 1e-12 except the curvature expansion (1e-4)
    geometry = [r for r in quick.rows if r.claim.startswith("(a)")]
    assert len(geometry) == 11
    assert sorted({r.tolerance for r in geometry}) == [1e-12, 1e-4]
    assert _row(quick, "(c) phase retrieval d = 16: smallest").tolerance == 4.0


def test_quick_figures_redraw_from_the_stored_data(quick):
    data = json.loads(json.dumps(quick.as_dict()))["figure_data"]
    assert set(data) == {"hermitian_operator", "hermitian_spectral", "hermitian_recovery"}
    for stem, payload in data.items():
        fig = render_figure(stem, payload)
        assert fig.axes
    # a curve that never reaches 90% is stored as None and drawn as "not reached"
    rec = data["hermitian_recovery"]
    next(iter(rec["summary"].values()))["m90_ratio"] = None
    assert render_figure("hermitian_recovery", rec).axes


def _geometry_rows() -> CheckResult:
    res = CheckResult("hermitian", hermitian.CLAIM)
    hermitian._geometry(CheckContext(quick=True), res, 6)
    return res


def test_a_wrong_bures_wasserstein_fails_its_row(monkeypatch):
    true = hermitian.bures_wasserstein
    monkeypatch.setattr(hermitian, "bures_wasserstein", lambda a, b: 1.001 * true(a, b))
    res = _geometry_rows()
    assert _row(res, "(a) bures_wasserstein").status == "FAIL"
    assert _row(res, "(a) dist = (tr Q1").status == "PASS"   # the other rows are unaffected


def test_an_alignment_over_the_identity_only_fails_its_row(monkeypatch):
    monkeypatch.setattr(hermitian, "align", lambda U, V: np.eye(U.shape[1]))
    res = _geometry_rows()
    assert _row(res, "(a) alignment").status == "FAIL"


def test_a_flat_curvature_fails_the_expansion_row(monkeypatch):
    monkeypatch.setattr(hermitian.PSDQuotient, "sectional_curvature",
                        lambda self, U, xi, eta: 0.5 * 3.0 / float(np.sum(np.abs(U) ** 2)))
    res = _geometry_rows()
    assert _row(res, "(a) K: O'Neill vs distance expansion").status == "FAIL"
    assert _row(res, "(a) r = 1: K(u, z, i z)").status == "FAIL"


def test_the_real_population_operator_fails_the_complex_rows(monkeypatch):
    def real_operator(H, *, field="real"):
        return 2 * H + np.trace(H) * np.eye(H.shape[0])   # the real-field formula
    monkeypatch.setattr(hermitian, "population_normal_operator", real_operator)
    res = CheckResult("hermitian", hermitian.CLAIM)
    hermitian._operator(CheckContext(quick=True), res)
    assert _row(res, "(b) T(H) = H + tr(H) I").status == "FAIL"
    assert _row(res, "(b) Monte Carlo").status == "PASS"   # measured against the closed form


def test_asymptotic_overlap_against_adaptive_quadrature():
    """The same characterisation integrated by scipy.integrate.quad (an independent route
    to the Gauss-Laguerre sums of the check)."""
    from scipy import integrate, optimize

    def quad_overlap(delta):
        T = lambda y: (y - 1) / (y + np.sqrt(delta) - 1)  # noqa: E731
        E = lambda f: integrate.quad(lambda y: f(y) * np.exp(-y), 0, np.inf, limit=200)[0]  # noqa: E731
        psi = lambda lam: lam * (1 / delta + E(lambda y: T(y) / (lam - T(y))))  # noqa: E731
        phi = lambda lam: lam * E(lambda y: T(y) * y / (lam - T(y)))  # noqa: E731
        lbar = optimize.minimize_scalar(psi, bounds=(1 + 1e-6, 60), method="bounded",
                                        options={"xatol": 1e-10}).x
        lam = optimize.brentq(lambda x: psi(x) - phi(x), lbar, 60)
        h = 1e-5
        a = (psi(lam + h) - psi(lam - h)) / (2 * h)
        b = (phi(lam + h) - phi(lam - h)) / (2 * h)
        return a / (a - b)

    for delta in (1.5, 3.0, 6.0):
        assert abs(hermitian.asymptotic_overlap(delta) - quad_overlap(delta)) < 1e-6
    small = [hermitian.asymptotic_overlap(1 + e) for e in (1e-2, 1e-3)]
    assert 0 < small[1] < small[0] < 0.01                 # it vanishes at the threshold m/d = 1
    assert hermitian.asymptotic_overlap(1.0) == 0.0


def test_weak_threshold_recovers_a_shift_and_needs_two_points():
    x = [1.5, 2.0, 2.5, 3.0, 4.0]
    for shift in (-0.1, 0.0, 0.4):
        y = [hermitian.asymptotic_overlap(v - shift) for v in x]
        assert abs(hermitian.weak_threshold(x, y) - (1 + shift)) < 1e-3
    assert np.isnan(hermitian.weak_threshold([1.2, 3.0], [0.1, float("nan")]))


def test_cells_are_pure_and_scheduling_free():
    args = [(6, 1, 36, t, start, "lbfgs", 3, 0, "c")
            for t in range(2) for start in ("spectral-optimal", "small")]
    one = run_cells(hermitian._cell, args, workers=1)
    two = run_cells(hermitian._cell, args, workers=2)
    strip = lambda cells: [{k: v for k, v in c.items() if k != "cpu_seconds"} for c in cells]  # noqa: E731
    assert strip(one) == strip(two)
    again = hermitian_recovery_cell(6, 1, 36, 0, "small", "lbfgs", 3)
    assert {k: again[k] for k in ("rel_error", "iterations")} == \
        {k: one[1][k] for k in ("rel_error", "iterations")}
    assert complex_dimension(6, 1) == one[0]["n_h"] == 11


def test_a_cell_refuses_an_unknown_start():
    with pytest.raises(ValueError, match=r"start must be one of .*'spectral-optimal'"):
        hermitian_recovery_cell(6, 1, 36, 0, "spectral", "lbfgs", 0)
    with pytest.raises(ValueError, match=r"\br\b"):
        hermitian_recovery_cell(3, 4, 36, 0, "small", "lbfgs", 0)
