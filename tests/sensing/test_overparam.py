"""Over-parameterised widths: recovery at r > rank(Q*) and the ``overparam`` check."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import quadnet as qn
from quadnet.harness.checks import CheckContext, run_check
from quadnet.sensing.gaussian import relative_error


def test_recover_at_width_above_the_rank_of_the_optimum():
    # width r = d = 10 for a rank-2 target, small start: the width-r run leaves idle columns
    # (flat directions, algebraic decay); the cut at the largest singular-value gap finds
    # rank 2 from the data and the continued run is exact to ~1e-12
    p = qn.GaussianSensing.random(10, 2, 80, seed=4)
    Qs = p.U_star @ p.U_star.T
    out = qn.recover(p, 10, init="small", init_scale=1e-6, seed=1, max_iter=400,
                     reduce_rank=True)
    assert out.U.shape == (10, 10) and out.history["rank"] == 2
    assert np.all(out.U[:, 2:] == 0)
    assert relative_error(out.Q, Qs) <= 1e-10
    plain = qn.recover(p, 10, init="small", init_scale=1e-6, seed=1, max_iter=400)
    assert plain.history["rank"] == 10 and np.all(np.isfinite(plain.U))
    assert relative_error(plain.Q, Qs) <= 1e-2           # close, but not exact (algebraic tail)
    # spectral start at width 5 > 2 and gradient descent: the same rank cut, exact
    p = qn.GaussianSensing.random(12, 2, 150, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", qn.exceptions.SpectralInitWarning)
        out = qn.recover(p, 5, method="gd", init="spectral", reduce_rank=True, max_iter=4000)
    assert out.history["rank"] == 2
    assert relative_error(out.Q, p.U_star @ p.U_star.T) <= 1e-10


def test_recover_reduce_rank_bad_input():
    p = qn.GaussianSensing.random(6, 1, 30, seed=0)
    with pytest.raises(TypeError, match="reduce_rank"):
        qn.recover(p, 3, reduce_rank="yes")
    with pytest.raises(ValueError, match="rank_gap"):
        qn.recover(p, 3, reduce_rank=True, rank_gap=1.0)
    with pytest.raises(ValueError, match="non-finite"):
        qn.recover(p, 3, init=np.full((6, 3), np.nan))


def test_overparam_check_quick_passes(tmp_path):
    res = run_check("overparam", CheckContext(seed=0, quick=True, figures_dir=tmp_path))
    assert res.passed, [(r.claim, r.measured) for r in res.failed]
    names = {p.split("/")[-1] for p in res.figures}
    assert {"overparam_staircase.png", "overparam_excess.png", "overparam_sensing.png"} <= names
    rows = {r.claim[:3]: r for r in res.rows}
    assert all(r.status in ("PASS", "REPORTED") for r in res.rows)
    assert "(a)" in rows and "(e)" in rows
