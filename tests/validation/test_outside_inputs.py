"""Regression tests for the bad-input findings of the independent fuzzer
(benchmarks/results/fuzz_independent_review.md) in the dynamics, losses, geometry, curvature,
sensing and commuting layers: each asserts the exception type and that the message names the
argument."""

import dataclasses

import numpy as np
import pytest

import quadnet as qn
from quadnet.commuting import CommutingSensing, SpectralTrajectory

T4 = np.diag([3.0, 2.0, 1.0, 0.5])
U4 = 0.1 * np.random.default_rng(0).standard_normal((4, 2))
TIMES = np.array([0.0, 0.5, 1.0])


def frob():
    return qn.FrobeniusLoss(T4)


# ------------------------------------------------------------------------------- dynamics
@pytest.mark.parametrize("flow, start", [(qn.gradient_flow, U4), (qn.predictor_flow, 0.01 * np.eye(4))])
def test_flows_require_a_positive_atol(flow, start):
    # atol = 0 gives a zero error weight to an exactly-zero state entry: no step is accepted
    with pytest.raises(ValueError, match=r"atol must be finite and > 0, got 0.0"):
        flow(frob(), start, TIMES, atol=0.0)


@pytest.mark.parametrize("flow, start", [(qn.gradient_flow, U4), (qn.predictor_flow, 0.01 * np.eye(4))])
def test_explicit_flow_over_an_endless_horizon_is_refused(flow, start):
    with pytest.raises(ValueError, match=r"times spans 1e\+300 time units.*explicit method "
                                         r"'DOP853'.*stiff method"):
        flow(frob(), start, TIMES * 1e300)


def test_a_large_start_that_contracts_is_not_refused_by_the_horizon_rule():
    # the stiffness of U0 = 1e50 U is a transient (Q' ~ -4 Q^2): the run finishes
    tr = qn.gradient_flow(frob(), 1e50 * U4, TIMES)
    assert np.all(np.isfinite(tr.loss))


@pytest.mark.parametrize("call, name", [
    (lambda: qn.gradient_flow(frob(), U4 * 1e300, TIMES), "U0"),
    (lambda: qn.gradient_descent(frob(), U4 * 1e300, 0.01, 10), "U0"),
    (lambda: qn.predictor_flow(frob(), np.eye(4) * 1e300, TIMES), "Q0"),
])
def test_starts_beyond_blowup_are_refused_naming_them(call, name):
    with pytest.raises(ValueError, match=rf"{name} has entries up to .* beyond 1e\+100"):
        call()


@pytest.mark.parametrize("flow, start, name", [
    (qn.gradient_flow, 0.1 * np.random.default_rng(0).standard_normal((4, 2)), "U0"),
    (qn.predictor_flow, 0.01 * np.eye(4), "Q0")])
def test_loose_tolerance_divergence_message_names_the_tolerances(flow, start, name):
    # atol = 1e300 switches the error control off: the solver "succeeds" on a diverged state
    V = np.random.default_rng(7).standard_normal((4, 2))
    with pytest.raises(qn.DivergenceError, match=rf"diverged: .* the flow from {name} blows "
                                                 r"up, or the tolerances \(rtol = 1e-08, atol "
                                                 r"= 1e\+300\) are too loose"):
        flow(qn.FrobeniusLoss(V @ V.T), start, TIMES, rtol=1e-8, atol=1e300)


def test_gradient_descent_checks_callback_up_front():
    with pytest.raises(TypeError, match=r"callback must be a callable callback\(k, U\), got int"):
        qn.gradient_descent(frob(), U4, 0.01, 10, callback=3)
    seen = []
    qn.gradient_descent(frob(), U4, 0.01, 3, callback=lambda k, U: seen.append(k))
    assert seen == [1, 2, 3]


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(t=[0.0, np.nan], U=np.ones((2, 2, 1)), loss=[0.0, 0.0]), ValueError, r"t has 1 non-finite"),
    (dict(t="abc", U=None, loss=[0.0]), TypeError, r"t must be an array of real numbers"),
    (dict(t=[0.0, 1.0], U=np.ones((3, 2, 1)), loss=[0.0, 0.0]), ValueError, r"U must have shape \(2, d, r\)"),
    (dict(t=[0.0, 1.0], U=np.ones((2, 2, 1)), loss=[0.0]), ValueError, r"loss must have shape \(2,\)"),
    (dict(t=[0.0, 1.0], U=np.ones((2, 2, 1)), loss=[0.0, np.inf]), ValueError, r"loss has 1 non-finite"),
    (dict(t=[0.0, 1.0], U=np.ones((2, 2, 1)) * 1j, loss=[0.0, 0.0]), TypeError, r"U must be an array of real"),
    (dict(t=[0.0, 1.0], U=None, loss=[0.0, 0.0]), ValueError, r"needs U \(factors\) or _Q"),
    (dict(t=[0.0, 1.0], U=np.ones((2, 2, 1)), loss=[0.0, 0.0], info=3), TypeError, r"info must be a dict"),
])
def test_trajectory_checks_its_fields(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        qn.Trajectory(**kwargs)


def test_spectral_trajectory_checks_its_fields():
    with pytest.raises(ValueError, match=r"q must have shape \(2, d\)"):
        SpectralTrajectory([0.0, 1.0], np.ones((3, 2)), [0.0, 0.0])
    with pytest.raises(ValueError, match=r"q has 1 non-finite"):
        SpectralTrajectory([0.0, 1.0], [[1.0, np.nan], [1.0, 1.0]], [0.0, 0.0])
    with pytest.raises(TypeError, match=r"t must be an array of real numbers"):
        SpectralTrajectory("abc", np.ones((2, 2)), [0.0, 0.0])
    with pytest.raises(ValueError, match=r"basis must have shape \(2, 2\)"):
        SpectralTrajectory([0.0, 1.0], np.ones((2, 2)), [0.0, 0.0], basis=np.eye(3))


def test_mirror_flow_refuses_a_start_whose_jacobian_is_beyond_blowup():
    cs = CommutingSensing(np.eye(2), np.array([[1.0, 2.0]]), np.array([2.0]))
    with pytest.raises(ValueError, match=r"q0 has entries up to 1e\+297, beyond 1e\+100"):
        cs.mirror_flow(np.array([1e297, 1e297]), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"log_q0 has entries up to"):
        cs.mirror_flow(log_q0=np.array([684.0, 684.0]), times=np.array([0.0, 1.0]))


# -------------------------------------------------------------------- losses and sensing
def _losses():
    import autograd.numpy as anp

    return [qn.FrobeniusLoss(T4), qn.MeasurementLoss(np.stack([np.eye(4)] * 3), np.ones(3)),
            qn.AutogradLoss(lambda Q: anp.sum(Q ** 2), d=4)]


@pytest.mark.parametrize("loss", _losses(), ids=lambda L: type(L).__name__)
@pytest.mark.parametrize("method", ["factor_value", "factor_gradient", "factor_hvp", "hvp_at"])
def test_factor_methods_name_U_when_U_Ut_overflows(loss, method):
    args = (U4 * 1e300, U4) if method == "factor_hvp" else (U4 * 1e300,)
    with pytest.raises(ValueError, match=r"U has entries up to 1.*e\+299: the predictor U U\^T "
                                         r"overflows float64; rescale U"):
        getattr(loss, method)(*args)


@pytest.mark.parametrize("method", ["factor_value", "factor_gradient", "factor_hvp",
                                    "factor_value_and_gradient"])
def test_gaussian_factor_methods_refuse_an_overflow_naming_U(method):
    prob = qn.GaussianSensing.random(4, 2, 40, seed=0)
    args = (U4 * 1e300, U4) if method == "factor_hvp" else (U4 * 1e300,)
    with pytest.raises(ValueError, match=rf"GaussianSensing.{method}: the result overflows "
                                         r"float64 at this U .*rescale U"):
        getattr(prob, method)(*args)


@pytest.mark.parametrize("loss", _losses()[:2] + [qn.GaussianSensing.random(4, 2, 40, seed=0)],
                         ids=lambda L: type(L).__name__)
def test_value_refuses_an_overflow_naming_Q(loss):
    with pytest.raises(ValueError, match=r"\.value: the result overflows float64 at this Q "
                                         r"\(max \|entry\| 1e\+300\)"):
        loss.value(np.eye(4) * 1e300)


def test_inner_loops_still_skip_the_result_check():
    # the guard is a boundary check: nested (validated) callers see raw results and cost nothing
    from quadnet._validation import _NESTED

    prob = qn.GaussianSensing.random(4, 2, 40, seed=0)
    tok = _NESTED.set(True)
    try:
        with np.errstate(all="ignore"):
            assert not np.isfinite(prob.factor_value(U4 * 1e300))
    finally:
        _NESTED.reset(tok)


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_population_inverse_refuses_a_factor_whose_scale_leaves_float64(scale):
    U = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match=r"U has singular values in .* leave the float64 range"):
        qn.PopulationInverse(U * scale)
    with pytest.raises(ValueError, match=r"U has singular values in"):
        qn.GaussianSensing.random(3, 2, 30, seed=0).default_preconditioner(U * scale)


@pytest.mark.parametrize("Z, exc, match", [
    ("abc", TypeError, r"Z must be an array of real numbers, got str"),
    (None, TypeError, r"Z must be an array of real numbers, got NoneType"),
    (np.ones((2, 3)), ValueError, r"Z has d = 2, but the PopulationInverse has d = 3"),
    (np.ones((3, 1)), ValueError, r"Z has r = 1, but the PopulationInverse has r = 2"),
    (np.ones((3, 2)) * 1j, TypeError, r"Z must be real"),
    (np.full((3, 2), np.nan), ValueError, r"Z has 6 non-finite entries"),
])
def test_population_inverse_call_checks_Z(Z, exc, match):
    P = qn.PopulationInverse(np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]]))
    with pytest.raises(exc, match=match):
        P(Z)


def test_effective_spectrum_refuses_an_array_preconditioner():
    U = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    with pytest.raises(TypeError, match=r"preconditioner must be None, 'auto', a callable"):
        qn.effective_spectrum(qn.FrobeniusLoss(np.eye(3)), U, preconditioner=np.eye(3))


# ------------------------------------------------------------------------------- geometry
@pytest.mark.parametrize("flag", ["exact", "return_residual"])
@pytest.mark.parametrize("value", ["abc", "False", 2, 1.5, None, np.array([True, False])])
def test_lift_flags_must_be_bools(flag, value):
    M = qn.PSDQuotient(2, 2)
    with pytest.raises(TypeError, match=rf"{flag} must be a bool, got"):
        M.lift(np.eye(2), np.eye(2), **{flag: value})
    assert isinstance(M.lift(np.eye(2), np.eye(2), **{flag: np.bool_(False)}), np.ndarray)


def test_predictor_refuses_an_overflow_naming_U():
    with pytest.raises(ValueError, match=r"predictor: U U\^T overflows float64 .* rescale U"):
        qn.PSDQuotient(4, 2).predictor(U4 * 1e300)


# ------------------------------------------------------------------------------ commuting
def test_min_trace_interpolant_tol_has_a_floor():
    loss = CommutingSensing(np.eye(2), np.array([[1.0, 2.0]]), np.array([2.0]))
    with pytest.raises(ValueError, match=r"tol must be a finite real number in \[1e-14, 0.01\)"):
        qn.commuting.min_trace_interpolant(loss, tol=1e-300)


# ------------------------------------------------------------------------ frozen results
def test_result_records_are_frozen():
    from quadnet.commuting.bregman import BregmanResult, MinTraceResult
    from quadnet.commuting.greedy import (GLRLResult, GLRLStage, LimitReport, MinTraceSDP,
                                          SmallInitResult)
    from quadnet.sensing.baselines import SDPResult
    from quadnet.sensing.recovery import RecoveryResult

    for cls in (BregmanResult, MinTraceResult, GLRLResult, GLRLStage, LimitReport, MinTraceSDP,
                SmallInitResult, SDPResult, RecoveryResult):
        assert cls.__dataclass_params__.frozen, cls.__name__
    g = qn.commuting.greedy_low_rank_learning(qn.FrobeniusLoss(np.diag([3.0, 1.0, -1.0])), 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.status = "x"


@pytest.mark.parametrize("scale_T, scale_U", [(1e300, 1.0), (1.0, 1e300)])
def test_factorization_flow_overflow_names_target_and_U0(scale_T, scale_U):
    T = np.diag([2.0, 1.0, 0.0]) * scale_T
    U0 = 1e-3 * np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]]) * scale_U
    with pytest.raises(ValueError, match=r"overflows float64 .*rescale target and U0"):
        qn.factorization_flow(T, U0, [0.0, 0.5, 1.0])


# ----------------------------------------------------- geometry: Taylor checks, lyapunov_skew
def _taylor_setup():
    M = qn.PSDQuotient(4, 2)
    rng = np.random.default_rng(0)
    U = rng.standard_normal((4, 2))
    T = rng.standard_normal((4, 4))
    return M, qn.FrobeniusLoss(T + T.T), U, M.random_tangent_vector(U, 1)


@pytest.mark.parametrize("check", [qn.geometry.check_gradient, qn.geometry.check_hessian])
@pytest.mark.parametrize("scale, match", [
    (0.0, r"xi must be a nonzero direction, got the zero matrix"),
    (1e-300, r"xi is numerically zero at U: max\(ts\) \|\|xi\|\|_F = .* <= eps \|\|U\|\|_F"),
])
def test_taylor_checks_refuse_a_zero_direction_naming_xi(check, scale, match):
    M, loss, U, xi = _taylor_setup()
    with pytest.raises(ValueError, match=match):
        check(M, loss, U, scale * xi)


@pytest.mark.parametrize("check", [qn.geometry.check_gradient, qn.geometry.check_hessian])
def test_taylor_checks_refuse_a_remainder_at_rounding_level_naming_xi_and_ts(check):
    # |xi| = 1e-12 moves U, but the remainder (~ t^2 |xi|^2) never leaves rounding: no slope
    M, loss, U, xi = _taylor_setup()
    with pytest.raises(ValueError, match=rf"{check.__name__}: the Taylor remainder along xi is "
                                         r"at rounding level .* steps ts, so no slope"):
        check(M, loss, U, 1e-12 * xi / np.linalg.norm(xi))
    # the same direction at unit length gives the expected slopes (2 and 3, theory §7)
    out = check(M, loss, U, xi)
    slope = out if check is qn.geometry.check_gradient else out["slope"]
    assert slope > (1.9 if check is qn.geometry.check_gradient else 2.9)


@pytest.mark.parametrize("errs", [np.zeros(8), np.logspace(-4, -1, 8) ** 3 * 1e-300])
def test_taylor_slope_refuses_remainders_at_rounding_level_naming_errs(errs):
    with pytest.raises(ValueError, match=r"errs: only 0 of the 8 remainders are above the "
                                         r"rounding level 100 x floor = 1e-14"):
        qn.geometry.taylor_slope(np.logspace(-4, -1, 8), errs, 1e-16)


@pytest.mark.parametrize("eig, exc, match", [
    ("abc", TypeError, r"eig must be None or the pair \(values, vectors\) .* got str"),
    (np.nan, TypeError, r"eig must be None or the pair .* got float"),
    (-1, TypeError, r"eig must be None or the pair .* got int"),
    (np.eye(3), TypeError, r"eig must be None or the pair .* got ndarray"),
    ([1.0, 2.0, 3.0], TypeError, r"eig must be None or the pair .* a sequence of length 3"),
    ((np.ones(2), np.eye(2)), ValueError, r"eig must be \(values, vectors\) of shapes \(3,\) "
                                          r"and \(3, 3\)"),
    ((np.ones(3), np.full((3, 3), np.nan)), ValueError, r"eig\[1\] \(the eigenvectors\) has 9 "
                                                        r"non-finite"),
    ((np.array([3.0, 2.0, 1.0]), np.eye(3)), ValueError,
     r"^lyapunov_skew: eig\[0\] \(the eigenvalues\) must be in ascending order, as numpy.linalg.eigh returns$"),
    ((np.ones(3), np.eye(2)), ValueError, r"eig must be \(values, vectors\) of shapes \(3,\) "
                                          r"and \(3, 3\) for U with r = 3, got \(3,\) and \(2, 2\)"),
    ((np.ones((3, 1)), np.eye(3)), ValueError, r"eig\[0\] \(the eigenvalues\) must be 1-d"),
    ((np.ones(3), np.ones(3)), ValueError, r"eig\[1\] \(the eigenvectors\) must be 2-d"),
    ((np.ones(3), np.eye(3)), ValueError, r"eig is not an eigendecomposition of U\^T U"),
])
def test_lyapunov_skew_checks_eig(eig, exc, match):
    U = np.random.default_rng(0).standard_normal((4, 3))
    K = np.array([[0.0, 1.0, 2.0], [-1.0, 0.0, 3.0], [-2.0, -3.0, 0.0]])
    with pytest.raises(exc, match=match):
        qn.geometry.lyapunov_skew(U, K, eig)
    # the documented use: eigh(U^T U) gives the same solution as eig=None
    np.testing.assert_allclose(qn.geometry.lyapunov_skew(U, K, np.linalg.eigh(U.T @ U)),
                               qn.geometry.lyapunov_skew(U, K), rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------------------ curvature
def _minimiser():
    U = np.zeros((4, 2))
    U[0, 0], U[1, 1] = np.sqrt(3.0), np.sqrt(2.0)
    return qn.FrobeniusLoss(np.diag([3.0, 2.0, 0.0, 0.0])), U


@pytest.mark.parametrize("eta", [1e-300, 5e-324])
def test_descent_contraction_with_a_vanishing_step_names_eta_and_max_steps(eta):
    # 1 - eta lambda rounds to 1: the step count is ~ 1/(eta lambda) (or infinite), not a
    # division by zero
    loss, U = _minimiser()
    with pytest.raises(ValueError, match=r"descent_contraction needs .* steps > max_steps = "
                                         r"200000 .* raise max_steps or eta"):
        qn.descent_contraction(loss, U, eta, decades=2.0, n_samples=50)
    # a moderate step still measures the predicted contraction 1 - eta lambda_min
    res = qn.descent_contraction(loss, U, 1e-3, decades=2.0, n_samples=50)
    assert abs(res.contraction - (1 - 1e-3 * res.lambda_min)) < 1e-6


def _plane_setup():
    M = qn.PSDQuotient(4, 2)
    U = np.random.default_rng(0).standard_normal((4, 2))
    return U, M.random_tangent_vector(U, 1), M.random_tangent_vector(U, 2)


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_holonomy_does_not_depend_on_the_length_of_xi(scale):
    # xi is normalised first: the loop is the same for any positive multiple of xi
    U, xi, eta = _plane_setup()
    ref, h = qn.geometry.holonomy(U, xi, eta, 0.1), qn.geometry.holonomy(U, scale * xi, eta, 0.1)
    assert abs(h["angle"] - ref["angle"]) <= 1e-12 * abs(ref["angle"])
    assert abs(h["K"] - ref["K"]) <= 1e-12 * ref["K"]


@pytest.mark.parametrize("c", [1e120, 1e-120])
def test_distance_expansion_curvature_scales_as_one_over_c_squared(c):
    # K(c U) = K(U) / c^2 (the metric is homogeneous of degree 2 in U); the expansion's own
    # relative error is <= 1e-5 (its docstring), the rescaling is exact in binary
    U, xi, eta = _plane_setup()
    K0 = qn.geometry.sectional_curvature(U, xi, eta)
    assert abs(qn.geometry.distance_expansion_curvature(c * U, xi, eta) * c ** 2 / K0 - 1) < 1e-5


@pytest.mark.parametrize("c", [1e300, 1e-300])
def test_distance_expansion_curvature_refuses_a_curvature_outside_float64_naming_U(c):
    U, xi, eta = _plane_setup()
    with pytest.raises(ValueError, match=r"U has entries up to .*: its sectional curvature .* "
                                         r"is outside the float64 range; rescale U"):
        qn.geometry.distance_expansion_curvature(c * U, xi, eta)


@pytest.mark.parametrize("call, match", [
    (lambda U: qn.effective_spectrum(frob(), U, k=1),
     r"U has entries up to .*: the predictor U U\^T overflows float64; rescale U"),
    (lambda U: qn.curvature.local_curvature(frob(), U),
     r"U has entries up to .*: the predictor U U\^T overflows float64; rescale U"),
    (lambda U: qn.curvature.gram_effective_spectrum(
        qn.GaussianSensing.random(4, 2, 40, seed=0), U),
     r"GaussianSensing.factor_gradient: the result overflows float64 at this U .*rescale U"),
])
def test_curvature_routines_refuse_an_overflowing_U_naming_it(call, match):
    with pytest.raises(ValueError, match=match):
        call(U4 * 1e300 + 1e300 * np.eye(4, 2))


def test_local_curvature_relative_gradient_at_a_tiny_factor_is_finite():
    # ||grad L(U)|| / (|lambda| ||U||) is scale-free near U = 0: grad ~ 2 S U, S -> -T, so the
    # ratio at 1e-300 U equals the ratio at 1e-8 U (both in the U -> 0 limit) to 1e-8
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tiny = qn.curvature.local_curvature(frob(), 1e-300 * U4)
        small = qn.curvature.local_curvature(frob(), 1e-8 * U4)
    assert np.isfinite(tiny.relative_gradient)
    assert abs(tiny.relative_gradient / small.relative_gradient - 1) < 1e-8


def test_mirror_flow_requires_a_positive_atol_like_the_other_flows():
    cs = CommutingSensing(np.eye(2), np.array([[1.0, 2.0]]), np.array([2.0]))
    with pytest.raises(ValueError, match=r"atol must be finite and > 0, got 0.0"):
        cs.mirror_flow(np.array([1e-3, 1e-3]), np.array([0.0, 1.0]), atol=0.0)
    tr = cs.mirror_flow(np.array([1e-3, 1e-3]), np.array([0.0, 1.0]), atol=1e-12)
    assert np.all(np.isfinite(tr.q))


@pytest.mark.parametrize("e", [-300, -80, 30, 300])
def test_bregman_projection_converges_at_extreme_measurement_scales(e):
    # q(c y; q0) is solved as c q(y'; q0 / c) at max|y'| ~ 1 (the same nu); before, y * 1e-80
    # did not converge and y * 1e30 was misreported infeasible
    A = np.array([[1.0, 1.0, 2.0], [0.5, 1.0, 0.0]])
    y = np.array([2.0, 1.0]) * 10.0 ** e
    r = qn.bregman_projection(A, y, np.ones(3))
    assert r.converged
    assert np.max(np.abs(A @ r.q - y)) <= 1e-12 * np.max(np.abs(y))
    assert np.all(np.isfinite(r.log_q[r.q > 0]))


@pytest.mark.parametrize("c", [1e-3, 1.0, 1e3, 1e60])
def test_lyapunov_skew_accepts_a_valid_eig_at_any_scale(c):
    """The eigen-residual is relative to ||U^T U||: a valid eigh of a scaled factor passes."""
    U = np.random.default_rng(1).standard_normal((4, 3)) * c
    K = np.array([[0.0, 1.0, 2.0], [-1.0, 0.0, 3.0], [-2.0, -3.0, 0.0]]) * c * c
    np.testing.assert_allclose(qn.geometry.lyapunov_skew(U, K, np.linalg.eigh(U.T @ U)),
                               qn.geometry.lyapunov_skew(U, K), rtol=1e-10, atol=1e-14)
