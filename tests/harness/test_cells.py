"""The sensing sweep cells accept every job the checks give them (the full ``verify recovery``
grid included, whose convex-baseline rows carry ``init="-"``)."""

from __future__ import annotations

import pytest

from quadnet.harness.cells import phase_transition_cell


def test_the_sdp_baseline_cell_takes_no_start():
    pytest.importorskip("cvxpy")
    out = phase_transition_cell(6, 1, 30, 0, "-", "sdp")     # as verify recovery --full builds it
    assert out["init"] == "-" and out["method"] == "sdp"
    assert out["success"] and out["rel_error"] <= out["success_tol"]


def test_a_start_is_still_required_by_the_factored_methods():
    with pytest.raises(ValueError, match=r"^phase_transition_cell: init must be one of "):
        phase_transition_cell(6, 1, 30, 0, "-", "lbfgs")
    with pytest.raises(ValueError, match=r"^phase_transition_cell: init must be one of "):
        phase_transition_cell(6, 1, 30, 0, "other", "sdp")
