"""The public functions of quadnet.geometry.barycenter, argument by argument: every option of
``bw_barycenter`` changes what it must (the start, the rank cap, the field, the stopping
scale, the progress bar, the former call form) and ``transport_maps`` is checked against its
invariances (scale, unitary change of factor, field).

Tolerances: identities that hold in exact arithmetic are asserted to 1e-12 relative (rounding
of d <= 8 eigen-decompositions, a few hundred flops per entry); fixed points stopped at
``tol = 1e-13 x scale`` are compared to 1e-9 (the iteration's contraction leaves the iterate
within about tol / (1 - rate) of the fixed point)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import quadnet
from quadnet.exceptions import ConvergenceWarning
from quadnet.geometry.barycenter import bw_barycenter, transport_maps

RNG = np.random.default_rng(11)
PACKAGE = str(Path(quadnet.__file__).resolve().parent)


def _points_at_the_caller(wrn) -> bool:
    """The warning names a line outside quadnet (the caller's: here this file), not the
    ``warnings.warn`` line inside the package (a wrong ``stacklevel``)."""
    return not str(Path(wrn.filename).resolve()).startswith(PACKAGE)
LEGACY = ("bw_barycenter(Us) without inputs= reads Us as factors and returns the Fréchet mean "
          "within rank <= r; pass inputs='factors' or inputs='matrices' for the barycentre "
          "over all PSD matrices (max_rank=r keeps the within-rank mean)")


def _rank2_points(k=5, d=8, seed=2):
    """Five rank-2 points in d = 8 whose barycentre has rank 3 (the docstring's example)."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((k, d, 2)), rng.dirichlet(np.ones(k))


# ------------------------------------------------------------------ the former call form
def test_former_call_form_warns_with_the_whole_message_at_the_callers_line():
    Us, w = _rank2_points()
    with pytest.warns(DeprecationWarning) as rec:
        old = bw_barycenter(Us, w)
    (wrn,) = [r for r in rec if r.category is DeprecationWarning]
    assert str(wrn.message) == LEGACY
    assert _points_at_the_caller(wrn)
    new = bw_barycenter(Us, w, inputs="factors", max_rank=2)
    assert old.U.shape[1] == 2 and np.allclose(old.Q, new.Q, rtol=0, atol=1e-9)
    # an explicit max_rank is kept by the former form too (here wider than r: the full mean)
    with pytest.warns(DeprecationWarning):
        wide = bw_barycenter(Us, w, max_rank=8)
    full = bw_barycenter(Us, w, inputs="factors")
    assert wide.rank == full.rank == 3 and np.allclose(wide.Q, full.Q, rtol=0, atol=1e-9)


def test_former_call_form_refuses_a_rank_deficient_factor_the_new_one_takes_it():
    Us, w = _rank2_points()
    Us[1, :, 1] = 2.0 * Us[1, :, 0]                  # rank 1 < 2
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="rank"):
        bw_barycenter(Us, w)
    b = bw_barycenter(Us, w, inputs="factors")
    assert b.converged and b.dual_min >= -1e-9


# ------------------------------------------------------------------ the start
def test_default_start_is_the_input_of_largest_weight():
    Us, _ = _rank2_points()
    w = np.array([0.05, 0.1, 0.6, 0.15, 0.1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        one = bw_barycenter(Us, w, inputs="factors", max_iter=1)
        heavy = bw_barycenter(Us, w, inputs="factors", max_iter=1, init=Us[2])
        first = bw_barycenter(Us, w, inputs="factors", max_iter=1, init=Us[0])
    assert np.array_equal(one.U, heavy.U)
    assert not np.allclose(one.U, first.U)


def test_init_is_checked_and_used():
    Us, w = _rank2_points()
    b = bw_barycenter(Us, w, inputs="factors")
    # any start of any width reaches the same barycentre (the objective is convex in Q)
    for init in (np.eye(8)[:, :1], RNG.standard_normal((8, 4)), np.zeros((8, 1)) + 0.1):
        c = bw_barycenter(Us, w, inputs="factors", init=init.tolist())
        assert np.allclose(c.Q, b.Q, rtol=0, atol=1e-8 * np.linalg.norm(b.Q))
    # a rank-deficient start is allowed (full_rank=False)
    c = bw_barycenter(Us, w, inputs="factors", init=np.outer(np.ones(8), [1.0, 2.0]))
    assert np.allclose(c.Q, b.Q, rtol=0, atol=1e-8 * np.linalg.norm(b.Q))
    with pytest.raises(ValueError, match=r"init must have shape \(8, \*\), got \(5, 2\)"):
        bw_barycenter(Us, w, inputs="factors", init=np.ones((5, 2)))
    with pytest.raises(ValueError, match=r"init has 3 columns > max_rank = 2"):
        bw_barycenter(Us, w, inputs="factors", init=np.ones((8, 3)), max_rank=2)


def test_complex_start_of_real_points_gives_the_hermitian_barycentre():
    Us, w = _rank2_points()
    b = bw_barycenter(Us, w, inputs="factors")
    z = bw_barycenter(Us, w, inputs="factors", init=Us[0] * np.exp(0.3j))
    assert z.U.dtype.kind == "c"
    assert np.allclose(z.Q, b.Q, rtol=0, atol=1e-8 * np.linalg.norm(b.Q))
    with pytest.raises((TypeError, ValueError), match="init"):
        bw_barycenter(Us, w, inputs="factors", init=Us[0] * 1j, field="real")


# ------------------------------------------------------------------ the rank cap and the rank
def test_max_rank_caps_the_width():
    Us, w = _rank2_points()
    full = bw_barycenter(Us, w, inputs="factors")
    assert full.rank == full.U.shape[1] == 3
    for cap in (1, 2):
        c = bw_barycenter(Us, w, inputs="factors", max_rank=cap, init=Us[0][:, :1])
        assert c.U.shape[1] == cap and c.rank == cap and c.objective > full.objective


@pytest.mark.parametrize("c", [1e-14, 1e-6, 1.0, 1e6])
def test_rank_and_iterations_are_scale_free(c):
    """F(c Q) = c F(Q) and the stop is relative to scale = sqrt(sum_i w_i tr Q_i): the same
    number of steps at every scale, the same rank (the eigenvalue cut is relative)."""
    Us, w = _rank2_points()
    ref = bw_barycenter(Us, w, inputs="factors")
    b = bw_barycenter(np.sqrt(c) * Us, w, inputs="factors")
    assert b.rank == ref.rank == 3
    assert b.iterations == ref.iterations
    assert np.allclose(b.Q / c, ref.Q, rtol=0, atol=1e-9 * np.linalg.norm(ref.Q))
    assert np.isclose(b.objective / c, ref.objective, rtol=1e-9)
    # one residual per step and per stage start, scaling like sqrt(c)
    assert len(b.history) == len(ref.history) >= b.iterations
    assert np.allclose(np.array(b.history) / np.sqrt(c), ref.history, rtol=1e-6,
                       atol=1e-9 * ref.history[0])


def test_rank_one_commuting_points_have_a_rank_one_barycentre_at_large_scale():
    e = np.zeros((4, 1))
    e[0] = 1.0
    Us = np.stack([1e4 * e, 3e4 * e])
    b = bw_barycenter(Us, inputs="factors")
    assert b.rank == 1 and np.isclose(b.Q[0, 0], (2e4) ** 2, rtol=1e-12)


def test_zero_points_give_the_zero_barycentre():
    b = bw_barycenter(np.zeros((3, 4, 2)), inputs="factors")
    assert b.rank == 0 and b.dual_min == 0.0 and not np.any(b.Q)


# ------------------------------------------------------------------ matrices and fields
def test_matrices_input_and_the_field():
    Us, w = _rank2_points()
    C = np.einsum("kij,klj->kil", Us, Us)
    b = bw_barycenter(Us, w, inputs="factors")
    bm = bw_barycenter(C, w, inputs="matrices", field="real")
    assert bm.U.dtype == np.float64
    assert np.allclose(bm.Q, b.Q, rtol=0, atol=1e-8 * np.linalg.norm(b.Q))
    H = C.astype(complex)
    Z = Us[0] + 0.1j * RNG.standard_normal(Us[0].shape)
    H[0] = Z @ Z.conj().T                                         # Hermitian PSD, not real
    assert bw_barycenter(H, w, inputs="matrices").U.dtype.kind == "c"
    with pytest.raises((TypeError, ValueError), match="Us"):
        bw_barycenter(H, w, inputs="matrices", field="real")


# ------------------------------------------------------------------ budget and progress
def test_step_budget_counts_every_stage_and_the_warning_says_so():
    Us, w = _rank2_points()
    full = bw_barycenter(Us, w, inputs="factors", init=Us[0][:, :1])
    budget = full.iterations - 1
    with pytest.warns(ConvergenceWarning) as rec:
        b = bw_barycenter(Us, w, inputs="factors", init=Us[0][:, :1], max_iter=budget)
    assert b.iterations == budget and not b.converged
    (wrn,) = [r for r in rec if r.category is ConvergenceWarning]
    assert _points_at_the_caller(wrn)
    scale = np.sqrt(np.sum(w * np.sum(Us ** 2, axis=(1, 2))))
    assert str(wrn.message) == (f"bw_barycenter: residual {b.residual:.3e} > 1e-13 * "
                                f"{scale:.3g} after {budget} steps")
    assert wrn.message.grad_norm == b.residual


def test_progress_bar_names_the_function_and_is_cleared(capsys):
    Us, w = _rank2_points()
    quiet = bw_barycenter(Us, w, inputs="factors")
    assert capsys.readouterr().err == ""
    loud = bw_barycenter(Us, w, inputs="factors", progress=True)
    err = capsys.readouterr().err
    assert re.search(r"(^|\r)bw_barycenter: ", err) and "/2000" in err
    assert err.endswith("\r")                      # leave=False: the bar is cleared at the end
    assert np.array_equal(quiet.U, loud.U)


# ------------------------------------------------------------------ transport maps
def test_transport_maps_are_invariant_under_scale_and_unitary_change_of_factor():
    Us, w = _rank2_points()
    U = bw_barycenter(Us, w, inputs="factors").U
    T = transport_maps(Us, U)
    assert T.dtype == np.float64
    for c in (1e-12, 1e12):             # T(c Q_i, c Q) = T(Q_i, Q)
        assert np.allclose(transport_maps(np.sqrt(c) * Us, np.sqrt(c) * U), T, rtol=0,
                           atol=1e-9 * np.abs(T).max())
    R = np.linalg.qr(RNG.standard_normal((U.shape[1],) * 2))[0]
    assert np.allclose(transport_maps(Us, U @ R), T, rtol=0, atol=1e-12 * np.abs(T).max())
    # the same maps when either side is complex (Hermitian factors of the same matrices)
    for Uc, Usc in ((U.astype(complex), Us), (U, Us * np.exp(0.7j))):
        Tc = transport_maps(Usc, Uc)
        assert Tc.dtype.kind == "c"
        assert np.allclose(Tc, T, rtol=0, atol=1e-12 * np.abs(T).max())


def test_transport_maps_vanish_off_the_support():
    """At a rank-deficient Q the maps act on the range of U_i^T Q U_i only: U = 0 gives T = 0,
    and a rank-one Q gives rank-one maps."""
    Us, _ = _rank2_points(k=3)
    assert not np.any(transport_maps(Us, np.zeros((8, 2))))
    u = RNG.standard_normal((8, 1))
    T = transport_maps(Us, np.hstack([u, 2 * u]))
    v = np.sqrt(5.0) * u                          # Q = v v^T
    for Ui, Ti in zip(Us, T):
        s = np.linalg.svd(Ti, compute_uv=False)
        assert s[1] <= 1e-12 * s[0]
        # tr(T_i Q) is the fidelity tr (Q^1/2 Q_i Q^1/2)^1/2 = sqrt(v^T Q_i v) at rank one
        assert np.isclose((v.T @ Ti @ v).item(), np.sqrt((v.T @ Ui @ Ui.T @ v).item()),
                          rtol=1e-12)


# ------------------------------------------------------------------ the documented steps
def _objective(Us, w, Q):
    """F(Q) = (1/2) sum_i w_i (tr Q + tr Q_i - 2 tr (U_i^T Q U_i)^{1/2}), from eigenvalues."""
    fid = [np.sum(np.sqrt(np.clip(np.linalg.eigvalsh(Ui.T @ Q @ Ui), 0, None))) for Ui in Us]
    return 0.5 * sum(wi * (np.trace(Q) + np.sum(Ui ** 2) - 2 * f)
                     for wi, Ui, f in zip(w, Us, fid))


def _step(Us, w, U):
    """One factor fixed-point step sum_i w_i U_i R_i, R_i the thin-SVD Procrustes of U_i^T U."""
    out = np.zeros_like(U)
    for wi, Ui in zip(w, Us):
        A, _, Bt = np.linalg.svd(Ui.T @ U, full_matrices=False)
        out += wi * Ui @ (A @ Bt)
    return out


def test_rank_growth_is_the_documented_line_search_then_a_fixed_point_step():
    """Stage 1 converges at width r; then the eigenvector v of lambda_min(G) is appended as
    sqrt(t) v with t the exact minimiser of F(Q + t v v^T), and the fixed point runs again: one
    step of it, rebuilt here from the docstring, is what a run stopped one step later returns."""
    import scipy.optimize

    Us, w = _rank2_points()
    within = bw_barycenter(Us, w, inputs="factors", max_rank=2)
    U1 = within.U
    G = np.eye(8) - np.tensordot(w, transport_maps(Us, U1), axes=1)
    lam, E = np.linalg.eigh(0.5 * (G + G.T))
    assert lam[0] < -1e-6                                     # a descent direction of the cone
    v = E[:, 0]
    scale2 = float(np.sum(w * np.sum(Us ** 2, axis=(1, 2))))
    t = scipy.optimize.minimize_scalar(
        lambda t: _objective(Us, w, U1 @ U1.T + t * np.outer(v, v)), bounds=(0, scale2),
        method="bounded", options={"xatol": 1e-14 * scale2}).x
    U2 = _step(Us, w, np.column_stack([U1, np.sqrt(t) * v]))
    with pytest.warns(ConvergenceWarning):
        b = bw_barycenter(Us, w, inputs="factors", max_iter=within.iterations + 1)
    assert b.iterations == within.iterations + 1 and b.U.shape == (8, 3)
    assert np.allclose(b.U @ b.U.T, U2 @ U2.T, rtol=0, atol=1e-7 * np.linalg.norm(U2) ** 2)


def test_dual_min_is_lambda_min_of_the_cone_condition_at_the_result():
    Us, w = _rank2_points()
    for b in (bw_barycenter(Us, w, inputs="factors"),
              bw_barycenter(Us, w, inputs="factors", max_rank=2)):
        G = np.eye(8) - np.tensordot(w, transport_maps(Us, b.U), axes=1)
        assert np.isclose(b.dual_min, np.linalg.eigvalsh(0.5 * (G + G.T))[0], rtol=0,
                          atol=1e-12)
    assert bw_barycenter(Us, w, inputs="factors", max_rank=2).dual_min < -1e-6  # not optimal


def test_transport_maps_of_complex_factors_against_the_formula():
    """T_i = U_i (U_i^* Q U_i)^{+1/2} U_i^* for genuinely complex factors (not a global phase)."""
    from scipy.linalg import sqrtm

    rng = np.random.default_rng(4)
    Us = rng.standard_normal((3, 5, 2)) + 1j * rng.standard_normal((3, 5, 2))
    U = rng.standard_normal((5, 3)) + 1j * rng.standard_normal((5, 3))
    Q = U @ U.conj().T
    T = transport_maps(Us, U)
    for Ui, Ti in zip(Us, T):
        ref = Ui @ np.linalg.inv(sqrtm(Ui.conj().T @ Q @ Ui)) @ Ui.conj().T
        assert np.allclose(Ti, ref, rtol=0, atol=1e-10 * np.abs(ref).max())
        assert np.allclose(Ti, Ti.conj().T, rtol=0, atol=1e-13 * np.abs(ref).max())


def test_report_is_the_convergence_summary():
    Us, w = _rank2_points()
    b = bw_barycenter(Us, w, inputs="factors")
    assert b.report == {"converged": True, "iterations": b.iterations,
                        "residual": b.residual, "objective": b.objective}
    assert b.residual <= 1e-13 * np.sqrt(np.sum(w * np.sum(Us ** 2, axis=(1, 2))))
    assert np.isclose(b.objective, _objective(Us, w, b.Q), rtol=1e-12)
