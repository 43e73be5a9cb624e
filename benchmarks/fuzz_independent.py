"""Independent bad-input fuzzer for the quadnet public API.

Written from the outside: everything here is derived from ``inspect.signature``, parameter
names, defaults and the numpydoc docstrings. It does not read quadnet's own constraint tables
or bad-input tests. For each public callable a small hand-written valid call is built; then one
argument at a time is replaced by a bad value (nan, inf, huge/tiny, negative, complex, strings,
None, bool, empty and wrongly shaped arrays, non-symmetric or indefinite square matrices,
huge sizes, floats for ints, decreasing time grids, unknown option strings, ...).

Outcome classes
---------------
CLEAR            ValueError/TypeError whose message names the mutated parameter.
UNCLEAR          any other exception, or a ValueError/TypeError not naming the parameter.
SILENT-NONFINITE returned a result with NaN/inf where the valid call had none.
SILENT-SUSPECT   returned a finite result for a value that is clearly invalid (rule based,
                 reviewed by hand in the report).
ACCEPTED         returned a finite result for a value that may well be legitimate.
HANG             did not finish within the per-case alarm.

Run (not part of CI)::

    nice -n 10 python benchmarks/fuzz_independent.py [--only SUBSTRING] [--timeout 10]

Writes ``benchmarks/results/fuzz_independent.{md,json}``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import inspect
import io
import json
import math
import os
import re
import resource
import signal
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"

# ---------------------------------------------------------------------------------------------
# timeouts and memory
# ---------------------------------------------------------------------------------------------


class CaseTimeout(BaseException):
    """Raised by the alarm; a BaseException so that ``except Exception`` does not swallow it."""


def _alarm(signum, frame):
    raise CaseTimeout()


def limit_memory(gb: float = 6.0) -> None:
    lim = int(gb * 1024**3)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        lim = min(lim, hard)
    resource.setrlimit(resource.RLIMIT_AS, (lim, hard))


# ---------------------------------------------------------------------------------------------
# valid example values
# ---------------------------------------------------------------------------------------------

D, R = 4, 2


def rng(s):
    return np.random.default_rng(s)


def fac(d=D, r=R, s=0):
    return rng(s).standard_normal((d, r))


def sym(d=D, s=3):
    A = rng(s).standard_normal((d, d))
    return (A + A.T) / 2


def psd(d=D, s=2):
    A = rng(s).standard_normal((d, d))
    return A @ A.T + 0.1 * np.eye(d)


def skew(r=R, s=4):
    A = rng(s).standard_normal((r, r))
    return (A - A.T) / 2


def manifold(d=D, r=R):
    import quadnet as qn
    return qn.PSDQuotient(d, r)


def hor(U, s=1):
    d, r = U.shape
    return manifold(d, r).horizontal_projection(U, rng(s).standard_normal((d, r)))


def target_factor():
    return fac(s=7)


def frob():
    import quadnet as qn
    V = target_factor()
    return qn.FrobeniusLoss(V @ V.T)


def meas_A(m=6, d=D, s=5):
    A = rng(s).standard_normal((m, d, d))
    return (A + A.transpose(0, 2, 1)) / 2


def meas_loss():
    import quadnet as qn
    A = meas_A()
    V = target_factor()
    y = np.einsum("kij,ij->k", A, V @ V.T)
    return qn.MeasurementLoss(A, y)


def gauss(d=D, r=1, m=40):
    import quadnet as qn
    return qn.GaussianSensing.random(d, r, m, seed=0)


def commuting_data():
    """basis, spectra, y for a CommutingSensing instance with d = 4, 2 measurements."""
    spectra = np.abs(rng(8).standard_normal((2, D))) + 0.1
    q_true = np.array([1.0, 0.5, 0.0, 0.0])
    return np.eye(D), spectra, spectra @ q_true


def csens():
    from quadnet.commuting import CommutingSensing
    b, s, y = commuting_data()
    return CommutingSensing(b, s, y)


def qnet(d=2, s=11):
    import quadnet as qn
    return qn.QuadraticNet(0.5 * rng(s).standard_normal((d, d)))


def net_data(n=20, d=2):
    X = rng(12).standard_normal((n, d))
    return X, X[:, 0] ** 2


def kdata(n=10, d=3):
    X = rng(13).standard_normal((n, d))
    return X


def sweep_name():
    from quadnet import harness
    return "quotient-gd" if "quotient-gd" in harness.available_sweeps() else harness.available_sweeps()[0]


_counter = [0]


def fresh(prefix):
    _counter[0] += 1
    return f"{prefix}_{_counter[0]}"


TMP = Path(tempfile.mkdtemp(prefix="quadnet_fuzz_"))


def empty_check_file():
    p = TMP / f"{fresh('fuzzchecks')}.py"
    p.write_text('"""No checks."""\n')
    return str(p)


# ---------------------------------------------------------------------------------------------
# specs: (label, callable factory, kwargs factory)
# ---------------------------------------------------------------------------------------------

SPECS = []
SKIPPED = {}


def spec(label, target, kwargs=lambda: {}):
    """target: the callable, or a zero-argument factory returning it (for bound methods)."""
    SPECS.append((label, target, kwargs))


def skip(label, why):
    SKIPPED[label] = why


def build_specs():
    import quadnet as qn
    from quadnet import commuting as cm
    from quadnet import curvature as cv
    from quadnet import dynamics as dy
    from quadnet import features as ft
    from quadnet import geometry as ge
    from quadnet import harness as hs
    from quadnet import losses as ls
    from quadnet import sensing as se

    Um = lambda: target_factor()  # a minimiser of frob()  # noqa: E731

    # --- quadnet / geometry --------------------------------------------------------------
    spec("PSDQuotient", qn.PSDQuotient, lambda: dict(d=4, r=2, seed=0, rank_rtol=1e-10))
    spec("align", qn.align, lambda: dict(U=fac(), V=fac(s=1)))
    spec("bures_wasserstein", qn.bures_wasserstein, lambda: dict(Q1=psd(), Q2=psd(s=3)))
    spec("bw_barycenter", qn.bw_barycenter,
         lambda: dict(Us=[fac(s=i) for i in range(3)], weights=np.ones(3) / 3, inputs="factors",
                      init=None, tol=1e-13, max_iter=2000, max_rank=None, progress=False))
    spec("check_manifold", qn.check_manifold,
         lambda: dict(manifold=qn.PSDQuotient(3, 2), seed=0, trials=1, rtol=1e-9, boundary=True))
    spec("geometry.bures_wasserstein_sectional_curvature", ge.bures_wasserstein_sectional_curvature,
         lambda: dict(Sigma=psd(), X=sym(), Y=sym(s=9)))
    spec("geometry.check_gradient", ge.check_gradient,
         lambda: dict(manifold=manifold(), loss=frob(), U=fac(), xi=hor(fac()), ts=None))
    spec("geometry.check_hessian", ge.check_hessian,
         lambda: dict(manifold=manifold(), loss=frob(), U=fac(), xi=hor(fac()),
                      eta=hor(fac(), s=2), ts=None))
    spec("geometry.compare_pymanopt_optimisers", ge.compare_pymanopt_optimisers,
         lambda: dict(loss=frob(), d=4, r=2, seed=0, optimisers=("SteepestDescent",),
                      max_iterations=20, reference_cost=None))
    spec("geometry.curvature_bounds", ge.curvature_bounds, lambda: dict(U=fac()))
    spec("geometry.distance_expansion_curvature", ge.distance_expansion_curvature,
         lambda: dict(U=fac(), xi=hor(fac()), eta=hor(fac(), s=2), scales=None))
    spec("geometry.eckart_young_value", ge.eckart_young_value, lambda: dict(target=psd(), r=2))
    spec("geometry.holonomy", ge.holonomy,
         lambda: dict(U=fac(), xi=hor(fac()), eta=hor(fac(), s=2), eps=0.1, rtol=1e-13))
    spec("geometry.horizontal_dimension", ge.horizontal_dimension, lambda: dict(d=4, r=2, k=None))
    spec("geometry.lyapunov_skew", ge.lyapunov_skew,
         lambda: dict(U=fac(), K=skew(), eig=None, exact=True))
    spec("geometry.parallel_transport", ge.parallel_transport,
         lambda: dict(U=fac(), xi=hor(fac()), v=hor(fac(), s=2), t=1.0, project=False,
                      rtol=1e-13, atol=None))
    spec("geometry.random_orthogonal", ge.random_orthogonal, lambda: dict(r=3, rng=0, improper=None))
    spec("geometry.ricci_curvature", ge.ricci_curvature,
         lambda: dict(U=fac(), xi=hor(fac()), eta=None, project=False))
    spec("geometry.scalar_curvature", ge.scalar_curvature, lambda: dict(U=fac()))
    spec("geometry.sectional_curvature", ge.sectional_curvature,
         lambda: dict(U=fac(), xi=hor(fac()), eta=hor(fac(), s=2), project=False))
    ts = lambda: np.logspace(-4, -1, 8)  # noqa: E731
    spec("geometry.taylor_errors", ge.taylor_errors,
         lambda: dict(f=np.exp, f0=1.0, linear=1.0, quad=1.0, ts=ts()))
    spec("geometry.taylor_slope", ge.taylor_slope,
         lambda: dict(ts=ts(), errs=ts() ** 3, floor=1e-16, window=6))

    # --- losses ---------------------------------------------------------------------------
    def ag_fn(Q):
        import autograd.numpy as anp
        return 0.5 * anp.sum((Q - np.eye(Q.shape[0])) ** 2)

    spec("AutogradLoss", qn.AutogradLoss, lambda: dict(fn=ag_fn, d=4))
    spec("FrobeniusLoss", qn.FrobeniusLoss, lambda: dict(target=psd()))
    spec("MeasurementLoss", qn.MeasurementLoss,
         lambda: dict(A=meas_A(), y=rng(6).standard_normal(6)))
    spec("losses.as_loss", ls.as_loss, lambda: dict(loss=frob(), name="loss"))
    spec("losses.sym", ls.sym, lambda: dict(A=rng(0).standard_normal((3, 3))))
    spec("pymanopt_problem", qn.pymanopt_problem, lambda: dict(loss=frob(), manifold=manifold()))
    for cls_label, mk in [("FrobeniusLoss", frob), ("MeasurementLoss", meas_loss),
                          ("GaussianSensing", lambda: gauss(d=4, r=2, m=40)),
                          ("AutogradLoss", lambda: qn.AutogradLoss(ag_fn, d=4))]:
        for meth, kw in [("value", lambda: dict(Q=psd())),
                         ("gradient", lambda: dict(Q=psd())),
                         ("hessian_vector", lambda: dict(Q=psd(), H=sym())),
                         ("factor_value", lambda: dict(U=fac())),
                         ("factor_gradient", lambda: dict(U=fac())),
                         ("factor_hvp", lambda: dict(U=fac(), xi=fac(s=1))),
                         ("hvp_at", lambda: dict(U=fac())),
                         ("default_preconditioner", lambda: dict(U=fac()))]:
            spec(f"{cls_label}.{meth}", (lambda mk=mk, meth=meth: getattr(mk(), meth)), kw)
    spec("MeasurementLoss.residual", lambda: meas_loss().residual, lambda: dict(Q=psd()))

    # --- dynamics -------------------------------------------------------------------------
    spec("Trajectory", qn.Trajectory,
         lambda: dict(t=np.arange(3.0), U=rng(0).standard_normal((3, 4, 2)), loss=np.ones(3)))
    spec("congruence_recursion", qn.congruence_recursion,
         lambda: dict(loss=frob(), Q0=0.01 * np.eye(4), eta=0.02, steps=10, record_every=1))
    spec("congruence_step", qn.congruence_step,
         lambda: dict(Q=np.diag([1.0, 0.5, 0.0, 0.0]), S=np.diag([0.25, 1.0, 0.5, 0.1]), eta=0.5))
    spec("factorization_flow", qn.factorization_flow,
         lambda: dict(target=np.diag([2.0, 1.0, 0.0]),
                      U0=1e-3 * np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]]),
                      times=np.array([0.0, 0.5, 1.0])))
    spec("gradient_descent", qn.gradient_descent,
         lambda: dict(loss=frob(), U0=0.1 * fac(), eta=0.01, steps=10, record_every=1, gtol=None,
                      callback=None))
    spec("gradient_flow", qn.gradient_flow,
         lambda: dict(loss=frob(), U0=0.1 * fac(), times=np.array([0.0, 0.5, 1.0]), rtol=1e-8,
                      atol=1e-10, method="DOP853"))
    spec("predictor_flow", qn.predictor_flow,
         lambda: dict(loss=frob(), Q0=0.01 * np.eye(4), times=np.array([0.0, 0.5, 1.0]),
                      rtol=1e-8, atol=1e-10, method="DOP853"))
    spec("dynamics.canonical_gauge", dy.canonical_gauge, lambda: dict(U=fac()))

    # --- curvature ------------------------------------------------------------------------
    spec("descent_contraction", qn.descent_contraction,
         lambda: dict(loss=frob(), U=Um(), eta=0.05, amplitude=1e-4, decades=2.0, max_steps=20000,
                      n_samples=50, seed=0, curvature=None, gtol=None))
    spec("effective_hessian", qn.effective_hessian,
         lambda: dict(loss=frob(), U=Um(), return_basis=False))
    spec("effective_spectrum", qn.effective_spectrum,
         lambda: dict(loss=frob(), U=Um(), k=1, which="smallest", tol=None, ncv=None,
                      max_iter=None, seed=0, return_vectors=True, preconditioner=None))
    spec("flow_decay_rate", qn.flow_decay_rate,
         lambda: dict(loss=frob(), U=Um(), amplitude=1e-4, decades=2.0, n_samples=50, rtol=1e-10,
                      seed=0, curvature=None, gtol=None))
    spec("curvature.boundary_spectrum", cv.boundary_spectrum,
         lambda: dict(loss=frob(), U=np.c_[Um(), np.zeros(4)], zero_rtol=1e-8))
    spec("curvature.effective_operator", cv.effective_operator,
         lambda: dict(loss=frob(), U=Um(), vertical_shift=0.0))
    spec("curvature.factor_hessian", cv.factor_hessian, lambda: dict(loss=frob(), U=Um()))
    spec("curvature.gram_effective_spectrum", cv.gram_effective_spectrum,
         lambda: dict(loss=gauss(d=4, r=2, m=40), U=gauss(d=4, r=2, m=40).U_star, k=1,
                      return_vectors=True))
    spec("curvature.horizontal_dimension", cv.horizontal_dimension, lambda: dict(d=4, r=2, k=None))
    spec("curvature.local_curvature", cv.local_curvature,
         lambda: dict(loss=frob(), U=Um(), gtol=1e-6, dense_max=400, tol=1e-12, seed=0))
    spec("curvature.predicted_contraction", cv.predicted_contraction,
         lambda: dict(eigenvalues=np.array([1.0, 2.0, 3.0]), eta=0.1))

    # --- sensing --------------------------------------------------------------------------
    spec("GaussianSensing", qn.GaussianSensing, lambda: dict(X=gauss().X, y=gauss().y))
    spec("GaussianSensing.random", qn.GaussianSensing.random,
         lambda: dict(d=4, r=1, m=30, seed=0, noise=0.0))
    spec("GaussianSensing.spectral_init", lambda: gauss().spectral_init,
         lambda: dict(r=1, strict=True, method="auto"))
    spec("GaussianSensing.measure", lambda: gauss().measure, lambda: dict(Q=psd()))
    spec("GaussianSensing.normal_operator", lambda: gauss().normal_operator, lambda: dict(H=sym()))
    spec("GaussianSensing.gram_factor", lambda: gauss().gram_factor, lambda: dict(U=fac(r=1)))
    spec("GaussianSensing.factor_value_and_gradient", lambda: gauss().factor_value_and_gradient,
         lambda: dict(U=fac(r=1)))
    spec("PopulationInverse", qn.PopulationInverse, lambda: dict(U=fac()))
    spec("PopulationInverse.__call__", lambda: qn.PopulationInverse(fac()), lambda: dict(Z=fac(s=1)))
    spec("inverse_population_normal_operator", qn.inverse_population_normal_operator,
         lambda: dict(Y=sym()))
    spec("population_effective_hessian", qn.population_effective_hessian, lambda: dict(U=fac()))
    spec("population_normal_operator", qn.population_normal_operator, lambda: dict(H=sym()))
    spec("recover", qn.recover,
         lambda: dict(problem=gauss(), r=1, method="lbfgs", init="spectral", eta="tuned",
                      max_iter=50, gtol=1e-13, init_scale=1e-3, seed=0, lbfgs_memory=20,
                      restarts=0, restart_tol=1e-20, reduce_rank=False, rank_gap=10.0))
    spec("recover[gd]", qn.recover,
         lambda: dict(problem=gauss(), r=1, method="gd", init="small", eta=0.01, max_iter=30,
                      init_scale=1e-3, seed=0))
    spec("sufficient_sample_size", qn.sufficient_sample_size,
         lambda: dict(d=3, r=1, kappa=1.0, failure_probability=0.1))
    spec("trace_min_sdp", qn.trace_min_sdp,
         lambda: dict(problem=gauss(d=3, r=1, m=12), solver="CLARABEL", eps=1e-10))
    spec("sensing.basin_radius", se.basin_radius, lambda: dict(d=4))
    spec("sensing.concentration_samples", se.concentration_samples,
         lambda: dict(d=4, delta=0.1, failure_probability=0.1))
    spec("sensing.population_effective_hvp", se.population_effective_hvp,
         lambda: dict(U=fac(), xi=hor(fac())))
    spec("sensing.population_effective_inverse", se.population_effective_inverse,
         lambda: dict(U=fac(), eta=fac(s=1)))
    spec("sensing.population_effective_spectrum", se.population_effective_spectrum,
         lambda: dict(U=fac(), grouped=False))
    spec("sensing.prescribed_step", se.prescribed_step, lambda: dict(d=4, sigma_1=1.0, delta=0.0))
    spec("sensing.sample_bound", se.sample_bound,
         lambda: dict(d=4, r=2, kappa=1.0, failure_probability=0.1))

    # --- commuting ------------------------------------------------------------------------
    A1 = lambda: np.array([[1.0, 1.0, 2.0], [0.5, 1.0, 0.0]])  # noqa: E731
    y1 = lambda: np.array([2.0, 1.0])  # noqa: E731
    spec("CommutingSensing", qn.CommutingSensing,
         lambda: dict(zip(("basis", "spectra", "y"), commuting_data()), block_tol=1e-12))
    spec("commuting.CommutingSensing.from_matrices", cm.CommutingSensing.from_matrices,
         lambda: dict(As=np.stack([np.diag(s) for s in commuting_data()[1]]), y=commuting_data()[2],
                      tol=1e-10, seed=0))
    q4 = lambda: np.array([1.0, 0.5, 0.2, 0.1])  # noqa: E731
    for meth, kw in [("reduced_loss", lambda: dict(q=q4())),
                     ("reduced_gradient", lambda: dict(q=q4())),
                     ("to_matrix", lambda: dict(q=q4())),
                     ("spectral_coordinates", lambda: dict(Q=np.diag(q4()))),
                     ("commutant_residual", lambda: dict(Q=np.diag(q4()))),
                     ("value", lambda: dict(Q=np.diag(q4()))),
                     ("factor_value", lambda: dict(U=fac())),
                     ("gradient_descent", lambda: dict(q0=np.full(4, 1e-3), eta=0.01, steps=20,
                                                       record_every=1, rtol=None)),
                     ("mirror_flow", lambda: dict(q0=np.full(4, 1e-3), times=np.array([0.0, 1.0]),
                                                  rtol=1e-8, atol=1e-10, method="LSODA"))]:
        spec(f"CommutingSensing.{meth}", (lambda meth=meth: getattr(csens(), meth)), kw)
    spec("bregman_divergence", qn.bregman_divergence,
         lambda: dict(q=np.array([1.0, 0.5, 2.0]), q0=np.ones(3), multiplicities=np.ones(3)))
    spec("bregman_projection", qn.bregman_projection,
         lambda: dict(A=A1(), y=y1(), q0=np.ones(3), log_q0=None, multiplicities=None, tol=1e-14,
                      max_iter=200, start="auto", detect_support=False))
    spec("commuting.bregman_projection_cvxpy", cm.bregman_projection_cvxpy,
         lambda: dict(A=A1(), y=y1(), q0=np.ones(3), multiplicities=None, solver=None))
    spec("commuting.feasible_support", cm.feasible_support,
         lambda: dict(A=A1(), y=y1(), multiplicities=None))
    spec("greedy_low_rank_learning", qn.greedy_low_rank_learning,
         lambda: dict(loss=qn.FrobeniusLoss(np.diag([3.0, 1.0, -1.0])), d=3, eps=1e-12,
                      max_rank=None, neg_tol=1e-9, degeneracy_tol=1e-6, loss_tol=1e-20, rtol=1e-11,
                      max_stage_time=None, progress=False))
    spec("min_trace_solution", qn.min_trace_solution,
         lambda: dict(A=A1(), y=y1(), weights=None, multiplicities=None, rc_tol=1e-9))
    spec("commuting.min_trace_interpolant", cm.min_trace_interpolant,
         lambda: dict(loss=csens(), solver="CLARABEL", tol=1e-10))
    spec("commuting.random_commuting_instance", cm.random_commuting_instance,
         lambda: dict(seed=0, d=6, m=2))
    spec("small_init_limit", qn.small_init_limit,
         lambda: dict(loss=qn.MeasurementLoss(np.array([[[1.0, 0.0], [0.0, 2.0]]]), [2.0]), d=2,
                      eps=1e-8, eta=None, W=None, method="factor", max_steps=None, max_time=None,
                      qtol=1e-10, gtol=1e-9, rank_tol=1e-8, growth_tol=1e-3, rtol=1e-11,
                      check_every=50, progress=False))
    spec("commuting.SpectralTrajectory", cm.SpectralTrajectory,
         lambda: dict(t=np.arange(2.0), q=np.ones((2, 3)), loss=np.zeros(2), info=None,
                      basis=np.eye(3)))

    # --- features -------------------------------------------------------------------------
    X2 = lambda: np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # noqa: E731
    spec("Dataset", qn.Dataset,
         lambda: dict(X_train=np.ones((3, 2)), y_train=np.ones(3), X_test=np.ones((2, 2)),
                      y_test=np.ones(2), info={}))
    spec("DeepLinearNet", qn.DeepLinearNet,
         lambda: dict(Ws=(np.eye(2), np.array([[1.0, 1.0]])), info=None))
    spec("QuadraticNet", qn.QuadraticNet, lambda: dict(W=np.eye(2), a=np.ones(2), info=None))
    spec("QuadraticNet.__call__", lambda: qn.QuadraticNet(np.eye(2)), lambda: dict(X=X2()))
    spec("QuadraticNet.with_params", lambda: qn.QuadraticNet(np.eye(2)).with_params,
         lambda: dict(params=(2 * np.eye(2),), info=None))
    spec("DeepLinearNet.__call__", lambda: qn.DeepLinearNet((np.eye(2), np.ones((1, 2)))),
         lambda: dict(X=X2()))
    rfm_kw = dict(kernel="gaussian", bandwidth=1.0, update="fact", fact_form="ffT", iters=2,
                  normalize="trace", ridge=0.0, centre_agop=True, agop_power=0.5, block_size=None,
                  solver="auto", memory_limit=None, storage="auto", tol=None, cg_max_iter=None,
                  preconditioner_rank=None, seed=0, progress=False)
    spec("RecursiveFeatureMachine", qn.RecursiveFeatureMachine, lambda: dict(rfm_kw))

    def rfm_fit_factory():
        ds = ft.modular_arithmetic(5, seed=0)

        def rfm_fit(**kw):
            return qn.RecursiveFeatureMachine(**kw).fit(ds.X_train, ds.y_train)
        rfm_fit.__signature__ = inspect.signature(qn.RecursiveFeatureMachine)
        return rfm_fit
    spec("RecursiveFeatureMachine(...).fit", rfm_fit_factory, lambda: dict(rfm_kw))
    ds5 = lambda: ft.modular_arithmetic(5, seed=0)  # noqa: E731

    def fitted():
        ds = ds5()
        return qn.RecursiveFeatureMachine(iters=2).fit(ds.X_train, ds.y_train)
    spec("RecursiveFeatureMachine.fit", lambda: qn.RecursiveFeatureMachine(iters=2).fit,
         lambda: dict(X=ds5().X_train, Y=ds5().y_train, X_val=ds5().X_test, Y_val=ds5().y_test,
                      callback=None))
    for meth in ("predict", "features"):
        spec(f"RecursiveFeatureMachine.{meth}", (lambda meth=meth: getattr(fitted(), meth)),
             lambda: dict(X=ds5().X_test))
    for meth in ("score", "accuracy"):
        spec(f"RecursiveFeatureMachine.{meth}", (lambda meth=meth: getattr(fitted(), meth)),
             lambda: dict(X=ds5().X_train, Y=ds5().y_train))
    spec("agop", qn.agop, lambda: dict(net=qn.QuadraticNet(np.eye(2)), X=X2(), layer=0))
    spec("effective_rank", qn.effective_rank, lambda: dict(C=psd(3)))
    for nm, fn in [("fact_matrix", qn.fact_matrix), ("features.bfact_matrix", ft.bfact_matrix)]:
        spec(nm, fn, lambda: dict(net=qn.QuadraticNet(np.eye(2)), X=X2(), y=np.array([2.0, 2.0, 1.0]),
                                  lam=1.0, layer=0))
    spec("features.fact_identity", ft.fact_identity,
         lambda: dict(net=qn.QuadraticNet(np.eye(2)), X=X2(), y=np.array([2.0, 2.0, 1.0]), lam=1.0,
                      layer=0, tol=1e-6))
    spec("modular_arithmetic", qn.modular_arithmetic,
         lambda: dict(p=5, op="add", train_fraction=0.5, seed=0))
    spec("sparse_parity", qn.sparse_parity, lambda: dict(d=6, k=2, n=20, n_test=10, seed=0))
    spec("train", qn.train,
         lambda: dict(net=qnet(), X=net_data()[0], y=net_data()[1], lam=1e-2, gtol=1e-9,
                      max_iter=50, polish=False, polish_max_iter=None, callback=None, warn=True))
    spec("features.gd_path", ft.gd_path,
         lambda: dict(net=qnet(), X=net_data()[0], y=net_data()[1], lam=1e-2, eta=0.01, steps=5,
                      record_every=1))
    spec("features.grad_norm_at", ft.grad_norm_at,
         lambda: dict(net=qnet(), X=net_data()[0], y=net_data()[1], lam=1e-2))
    spec("features.objective_and_grad", ft.objective_and_grad,
         lambda: dict(net=qnet(), X=net_data()[0], y=net_data()[1], lam=1e-2))
    spec("features.NetTrajectory", ft.NetTrajectory,
         lambda: dict(steps=[0, 5], nets=[qn.QuadraticNet(np.eye(2))] * 2, loss=[1.0, 0.5],
                      info=None))
    spec("features.angle_correlation", ft.angle_correlation,
         lambda: dict(X=kdata(), Phi=rng(14).standard_normal((10, 5))))
    spec("features.distance_correlation", ft.distance_correlation,
         lambda: dict(X=kdata(), Phi=rng(14).standard_normal((10, 5))))
    spec("features.available_memory", ft.available_memory)
    spec("features.best_nfa_power", ft.best_nfa_power,
         lambda: dict(WtW=psd(), G=psd(s=5), bounds=(0.02, 2.0)))
    spec("features.nfa_cosines", ft.nfa_cosines,
         lambda: dict(WtW=psd(), G=psd(s=5), powers=np.array([0.5, 1.0])))
    M10 = lambda: psd(10, s=3)  # noqa: E731
    spec("features.block_circulant_score", ft.block_circulant_score, lambda: dict(M=M10(), p=5))
    spec("features.fourier_spectrum", ft.fourier_spectrum,
         lambda: dict(M=M10(), p=5, op="add", block="cross"))
    spec("features.group_circulant_score", ft.group_circulant_score,
         lambda: dict(M=M10(), p=5, op="add"))
    spec("features.group_order", ft.group_order, lambda: dict(p=5, op="add"))
    spec("features.primitive_root", ft.primitive_root, lambda: dict(p=7))
    spec("features.choose_solver", ft.choose_solver,
         lambda: dict(n=100, d=5, c=2, solver="auto", ridge=0.0, memory_limit=None, storage="auto",
                      rank=None, agop=False))
    spec("features.kernel_memory_estimate", ft.kernel_memory_estimate,
         lambda: dict(n=100, d=5, c=2, solver="direct", storage="float32", rank=None, agop=False))
    spec("features.default_rank", ft.default_rank, lambda: dict(n=100))
    spec("features.cosine", ft.cosine, lambda: dict(A=psd(3), B=psd(3, s=5)))
    spec("features.counterexample_prediction", ft.counterexample_prediction,
         lambda: dict(s=0.5, quiet=6, alpha=0.1, A=50.0, rho=16.0, gamma=25.0))
    spec("features.feature_covariance", ft.feature_covariance,
         lambda: dict(Phi=rng(14).standard_normal((10, 3)), centre=True))
    kern = lambda: dict(kernel="gaussian", X=kdata(), M=np.eye(3), bandwidth=1.0)  # noqa: E731
    spec("features.fit_kernel_machine", ft.fit_kernel_machine,
         lambda: dict(kern(), Y=rng(15).standard_normal((10, 1)), ridge=0.0, solver="auto",
                      memory_limit=None, storage="auto", tol=None))
    coef = lambda: rng(16).standard_normal((10, 1))  # noqa: E731
    Z = lambda: rng(17).standard_normal((4, 3))  # noqa: E731
    spec("features.input_gradients", ft.input_gradients, lambda: dict(kern(), Z=Z(), coef=coef()))
    spec("features.kernel_agop", ft.kernel_agop, lambda: dict(kern(), coef=coef(), centre=False))
    spec("features.kernel_fact_matrix", ft.kernel_fact_matrix, lambda: dict(kern(), coef=coef()))
    spec("features.kernel_matrix", ft.kernel_matrix, lambda: dict(kern(), Z=Z()))
    spec("features.kernel_predict", ft.kernel_predict, lambda: dict(kern(), Z=Z(), coef=coef()))
    spec("features.rpcholesky", ft.rpcholesky, lambda: dict(kern(), rank=5, seed=0, block=None))
    lab = lambda: np.array([0, 1] * 5)  # noqa: E731
    phi = lambda: np.c_[lab(), 1 - lab()].astype(float) + 0.01 * rng(18).standard_normal((10, 2))  # noqa: E731,E501
    spec("features.linear_readout_accuracy", ft.linear_readout_accuracy,
         lambda: dict(Phi_train=phi(), y_train=lab(), Phi_test=phi(), y_test=lab(), ridge=1e-8))
    spec("features.nfa_counterexample", ft.nfa_counterexample,
         lambda: dict(seed=0, n=40, quiet=6, alpha=0.1, A=50.0, rho=16.0, gamma=25.0, lam=1e-3,
                      init_scale=0.3))
    spec("features.psd_power", ft.psd_power, lambda: dict(G=psd(), s=0.5))

    # --- harness --------------------------------------------------------------------------
    spec("harness.CheckContext", hs.CheckContext, lambda: dict(seed=0, quick=True))
    spec("harness.CheckResult", hs.CheckResult, lambda: dict(name="x", claim="c"))
    spec("harness.Row", hs.Row,
         lambda: dict(claim="c", measured=1.0, tolerance=2.0, passed=True, relation="<="))
    spec("harness.SweepReport", hs.SweepReport,
         lambda: dict(store=TMP / "store", n_cells=1, skipped=0, ran=1, results=TMP / "r.csv"))
    spec("harness.available_checks", hs.available_checks)
    spec("harness.available_sweeps", hs.available_sweeps)
    spec("harness.figure_names", hs.figure_names)
    spec("harness.load_entry_points", hs.load_entry_points)
    spec("harness.figure", hs.figure, lambda: dict(stem=fresh("fuzzstem")))
    spec("harness.get_sweep", hs.get_sweep, lambda: dict(name=sweep_name()))
    spec("harness.register", hs.register,
         lambda: dict(name=fresh("fuzzcheck"), claim="c", order=100, heavy=False))
    spec("harness.register_sweep", hs.register_sweep,
         lambda: dict(sweep=dataclasses.replace(hs.get_sweep(sweep_name()), name=fresh("fuzzsweep"))))
    spec("harness.load_checks", hs.load_checks, lambda: dict(source=empty_check_file()))
    spec("harness.sweep_cells", hs.sweep_cells,
         lambda: dict(sweep=sweep_name(), quick=True, seed=0, grid=None))
    spec("harness.quotient_gd_cell", hs.quotient_gd_cell,
         lambda: dict(d=4, r=1, eta_scale=0.5, trial=0, steps=20, seed=0))
    spec("harness.recovery_sweep_cell", hs.recovery_sweep_cell,
         lambda: dict(d=4, r=1, ratio=3.0, trial=0, init="spectral", method="lbfgs", seed=0))
    spec("harness.phase_transition_cell", hs.phase_transition_cell,
         lambda: dict(d=4, r=1, m=30, trial=0, init="spectral", method="lbfgs", seed=0, restarts=0))
    spec("harness.selection_cell", hs.selection_cell,
         lambda: dict(eps=1e-3, instance_seed=0, d=6, m=2, log_inv_eps=None))
    spec("harness.selection_sweep_cell", hs.selection_sweep_cell,
         lambda: dict(instance=0, log_inv_eps=3.0, d=6, m=2, instance_seed=0))
    skip("harness.run_check", "runs a verify check (heavy by design; brief: skip verify checks)")
    skip("harness.run_sweep", "runs a whole sweep into a store (heavy; CLI-level)")
    skip("harness.draw_figure", "needs a `quadnet verify --json` report (heavy)")
    skip("harness.read_results", "needs a store written by run_sweep (skipped)")
    skip("harness.unload_checks", "stateful counterpart of load_checks; fuzzed load_checks only")
    skip("Loss", "abstract base class (no constructor arguments)")

    # --- PSDQuotient methods --------------------------------------------------------------
    Mq = lambda: qn.PSDQuotient(4, 2, seed=0)  # noqa: E731
    P = lambda: fac()  # noqa: E731
    T = lambda: hor(fac())  # noqa: E731
    T2 = lambda: hor(fac(), s=2)  # noqa: E731
    meth_args = {
        "align": lambda: dict(U=P(), V=fac(s=1)),
        "differential": lambda: dict(U=P(), xi=T()),
        "dist": lambda: dict(point_a=P(), point_b=fac(s=1)),
        "embedding": lambda: dict(point=P(), tangent_vector=T()),
        "euclidean_to_riemannian_gradient": lambda: dict(point=P(), euclidean_gradient=fac(s=3)),
        "euclidean_to_riemannian_hessian": lambda: dict(point=P(), euclidean_gradient=fac(s=3),
                                                        euclidean_hessian=fac(s=4),
                                                        tangent_vector=T()),
        "exp": lambda: dict(point=P(), tangent_vector=T()),
        "horizontal_basis": lambda: dict(U=P()),
        "horizontal_projection": lambda: dict(U=P(), Z=fac(s=3)),
        "inner_product": lambda: dict(point=P(), tangent_vector_a=T(), tangent_vector_b=T2()),
        "lift": lambda: dict(U=P(), Qdot=sym(), exact=False, return_residual=False),
        "log": lambda: dict(point_a=P(), point_b=fac(s=1)),
        "norm": lambda: dict(point=P(), tangent_vector=T()),
        "pair_mean": lambda: dict(point_a=P(), point_b=fac(s=1)),
        "parallel_transport": lambda: dict(U=P(), xi=T(), v=T2(), t=1.0, project=False, rtol=1e-13,
                                           atol=None),
        "predictor": lambda: dict(U=P()),
        "projection": lambda: dict(point=P(), vector=fac(s=3)),
        "random_point": lambda: dict(rng=0),
        "random_tangent_vector": lambda: dict(point=P(), rng=0),
        "rank": lambda: dict(U=P()),
        "retraction": lambda: dict(point=P(), tangent_vector=T()),
        "ricci_curvature": lambda: dict(U=P(), xi=T(), eta=None, project=False),
        "scalar_curvature": lambda: dict(U=P()),
        "sectional_curvature": lambda: dict(U=P(), xi=T(), eta=T2(), project=False),
        "to_tangent_space": lambda: dict(point=P(), vector=fac(s=3)),
        "transport": lambda: dict(point_a=P(), point_b=fac(s=1), tangent_vector=T()),
        "vertical_basis": lambda: dict(U=P()),
        "vertical_dimension": lambda: dict(U=P()),
        "vertical_projection": lambda: dict(U=P(), Z=fac(s=3)),
        "zero_vector": lambda: dict(point=P()),
    }
    for n, o in inspect.getmembers(qn.PSDQuotient):
        if n.startswith("_") or not callable(o):
            continue
        if n in meth_args:
            spec(f"PSDQuotient.{n}", (lambda n=n: getattr(Mq(), n)), meth_args[n])
        else:
            skip(f"PSDQuotient.{n}", "no valid example written")


# ---------------------------------------------------------------------------------------------
# bad values
# ---------------------------------------------------------------------------------------------

TOL_NAMES = re.compile(r"(^|_)(tol|rtol|atol|gtol|qtol|eps|floor|ridge|bandwidth|lam|amplitude|"
                       r"decades|noise|kappa|delta|sigma_1|init_scale|memory_limit|max_time|"
                       r"max_stage_time|rank_gap|growth_tol|neg_tol|rc_tol|block_tol|zero_rtol|"
                       r"restart_tol|loss_tol|degeneracy_tol|rank_rtol|eta|eta_scale|ratio|"
                       r"train_fraction|failure_probability|alpha|rho|gamma|s|t|width|height|"
                       r"vertical_shift|agop_power|reference_cost|log_inv_eps)$")
TIME_NAMES = {"times", "ts", "scales", "powers"}
SEED_NAMES = {"seed", "rng", "instance_seed"}


class Bad:
    """A labelled bad value (the label is what the report shows)."""

    def __init__(self, label, value, suspect, why=""):
        self.label, self.value, self.suspect, self.why = label, value, suspect, why


def annotation_kind(ann: str) -> str | None:
    ann = str(ann)
    for k in ("bool", "int", "float", "str"):
        if re.search(rf"\b{k}\b", ann):
            return k
    return None


def kind_of(name, valid, ann):
    if name in SEED_NAMES:
        return "seed"
    if isinstance(valid, (bool, np.bool_)):
        return "bool"
    if isinstance(valid, (int, np.integer)):
        return "int"
    if isinstance(valid, (float, np.floating)):
        return "float"
    if isinstance(valid, str):
        return "str"
    if isinstance(valid, np.ndarray) and valid.dtype.kind in "fiu":
        return "times" if name in TIME_NAMES else "array"
    if isinstance(valid, (list, tuple)) and valid and all(isinstance(x, np.ndarray) for x in valid):
        return "seq"
    if isinstance(valid, (list, tuple)) and valid and all(isinstance(x, (int, float)) for x in valid):
        return "times" if name in TIME_NAMES else "numlist"
    if valid is None:
        return "none:" + (annotation_kind(ann) or "any")
    if isinstance(valid, Path):
        return "path"
    if isinstance(valid, dict):
        return "dict"
    return "object"


def float_bads(name, required):
    tolish = bool(TOL_NAMES.search(name))
    out = [Bad("nan", math.nan, True, "nan accepted"),
           Bad("inf", math.inf, True, "inf accepted"),
           Bad("-inf", -math.inf, True, "-inf accepted"),
           Bad("1e300", 1e300, False),
           Bad("-1e300", -1e300, tolish, "negative accepted"),
           Bad("1e-300", 1e-300, False),
           Bad("0.0", 0.0, False),
           Bad("-1.0", -1.0, tolish, "negative accepted"),
           Bad("-0.5", -0.5, tolish, "negative accepted"),
           Bad("1+1j", 1 + 1j, True, "complex accepted"),
           Bad("'0.1'", "0.1", True, "string taken as a number"),
           Bad("'abc'", "abc", True, "string accepted"),
           Bad("None", None, required, "None accepted for a required number"),
           Bad("True", True, True, "bool taken as a number"),
           Bad("array([1.,2.])", np.array([1.0, 2.0]), True, "array taken as a scalar")]
    return out


def int_bads(name, required):
    return [Bad("-1", -1, True, "negative int accepted"),
            Bad("0", 0, False),
            Bad("2.5", 2.5, True, "non-integral float accepted"),
            Bad("3.0", 3.0, False),
            Bad("10**9", 10**9, False),
            Bad("10**12", 10**12, False),
            Bad("nan", math.nan, True, "nan accepted"),
            Bad("inf", math.inf, True, "inf accepted"),
            Bad("'abc'", "abc", True, "string accepted"),
            Bad("'3'", "3", True, "string taken as a number"),
            Bad("None", None, required, "None accepted for a required int"),
            Bad("True", True, True, "bool taken as an int"),
            Bad("1+0j", 1 + 0j, True, "complex accepted")]


def seed_bads():
    return [Bad("-1", -1, True, "negative seed accepted"),
            Bad("2.5", 2.5, True, "float seed accepted"),
            Bad("'abc'", "abc", True, "string seed accepted"),
            Bad("2**80", 2**80, False),
            Bad("nan", math.nan, True, "nan seed accepted"),
            Bad("True", True, False),
            Bad("None", None, False),
            Bad("Generator", np.random.default_rng(0), False),
            Bad("[1, 2]", [1, 2], False)]


def str_bads(valid):
    return [Bad("'abc'", "abc", True, "unknown option accepted"),
            Bad("''", "", True, "empty option accepted"),
            Bad("None", None, valid is not None, "None accepted"),
            Bad("1", 1, True, "int accepted as option"),
            Bad("upper", valid.upper() if isinstance(valid, str) else "ABC", False),
            Bad("' '+valid", " " + valid if isinstance(valid, str) else " abc", True,
                "padded option accepted")]


def bool_bads():
    return [Bad("'abc'", "abc", True, "string taken as bool"),
            Bad("'False'", "False", True, "string 'False' taken as bool"),
            Bad("2", 2, True, "int 2 taken as bool"),
            Bad("1.5", 1.5, True, "float taken as bool"),
            Bad("None", None, True, "None taken as bool"),
            Bad("np.bool_(True)", np.True_, False),
            Bad("array([True,False])", np.array([True, False]), True, "array taken as bool")]


def array_bads(name, v):
    v = np.asarray(v, dtype=float)
    out = []

    def put(i, x):
        w = v.copy()
        if w.size:
            w.flat[i] = x
        return w
    out += [Bad("nan entry", put(0, np.nan), True, "nan entry accepted"),
            Bad("inf entry", put(-1, np.inf), True, "inf entry accepted"),
            Bad("-inf entry", put(0, -np.inf), True, "-inf entry accepted"),
            Bad("x*1e300", v * 1e300 + (0 if np.any(v) else 1e300), False),
            Bad("x*1e-300", v * 1e-300, False),
            Bad("zeros", np.zeros_like(v), False),
            Bad("-x", -v, False),
            Bad("complex", v + 1j, True, "complex accepted"),
            Bad("'abc'", "abc", True, "string accepted"),
            Bad("None", None, True, "None accepted for an array"),
            Bad("True", True, True, "bool accepted for an array"),
            Bad("scalar 0.0", 0.0, True, "scalar accepted for an array"),
            Bad("empty []", np.array([]), True, "empty array accepted"),
            Bad("x[None] (extra dim)", v[None], True, "extra leading dim accepted"),
            Bad("x[..., None] (extra dim)", v[..., None], True, "extra trailing dim accepted"),
            Bad("list", v.tolist(), False),
            Bad("object array", np.array(v.tolist(), dtype=object), False),
            Bad("int dtype", np.rint(v).astype(int), False)]
    if v.ndim >= 1 and v.shape[0] > 0:
        out.append(Bad("0-size x[:0]", v[:0], True, "0-size array accepted"))
        out.append(Bad("drop last row x[:-1]", v[:-1], True, "wrong leading size accepted"))
    if v.ndim >= 2:
        out.append(Bad("drop last col", v[..., :-1], True, "wrong trailing size accepted"))
        out.append(Bad("ravel 1-d", v.ravel(), True, "flattened array accepted"))
        if v.shape[-1] != v.shape[-2]:
            out.append(Bad("transposed", np.swapaxes(v, -1, -2).copy(), True,
                           "transposed array accepted"))
        else:
            n = v.shape[-1]
            nonsym = v.copy()
            nonsym[..., 0, n - 1] += 1.0
            if np.allclose(v, np.swapaxes(v, -1, -2)):
                out.append(Bad("non-symmetric", nonsym, True, "non-symmetric matrix accepted"))
                w = v.copy()
                w[..., :, :] -= (np.abs(v).sum() + 1.0) * np.eye(n)
                out.append(Bad("indefinite (x - c I)", w, False))
            else:
                out.append(Bad("perturbed (+e_0 e_n^T)", nonsym, False))
    if v.ndim == 1:
        out.append(Bad("2-d column", v[:, None], True, "column accepted for 1-d"))
    return out


def times_bads(v):
    v = np.asarray(v, dtype=float)
    out = [Bad("decreasing", v[::-1].copy(), True, "decreasing grid accepted"),
           Bad("negative (-x-1)", -v - 1.0, True, "negative grid accepted"),
           Bad("nan entry", np.r_[v[:-1], np.nan], True, "nan accepted"),
           Bad("inf entry", np.r_[v[:-1], np.inf], True, "inf accepted"),
           Bad("duplicate", np.r_[v[:1], v], True, "duplicate point accepted"),
           Bad("2-d", np.c_[v, v], True, "2-d grid accepted"),
           Bad("empty []", np.array([]), True, "empty grid accepted"),
           Bad("single", v[-1:], False),
           Bad("complex", v + 1j, True, "complex accepted"),
           Bad("'abc'", "abc", True, "string accepted"),
           Bad("None", None, False),
           Bad("list", v.tolist(), False),
           Bad("x*1e300", v * 1e300, False)]
    if v.size and v.min() > 0:
        out.append(Bad("with 0", np.r_[0.0, v], False))
    return out


def object_bads(valid):
    return [Bad("None", None, True, "None accepted"),
            Bad("'abc'", "abc", True, "string accepted"),
            Bad("1", 1, True, "int accepted"),
            Bad("eye(4)", np.eye(4), True, "array accepted"),
            Bad("object()", object(), True, "object() accepted")]


def seq_bads(v):
    a = [np.asarray(x, float) for x in v]
    out = [Bad("[]", [], True, "empty sequence accepted"),
           Bad("None", None, True, "None accepted"),
           Bad("'abc'", "abc", True, "string accepted"),
           Bad("nan in first", [np.where(np.arange(a[0].size).reshape(a[0].shape) == 0, np.nan,
                                         a[0])] + a[1:], True, "nan entry accepted"),
           Bad("inf in last", a[:-1] + [a[-1] + np.inf], True, "inf entry accepted"),
           Bad("mixed shapes", [a[0][:-1]] + a[1:], True, "mismatched shapes accepted"),
           Bad("one element", a[:1], False),
           Bad("stacked array", np.stack(a) if len({x.shape for x in a}) == 1 else a, False),
           Bad("extra dim", [x[None] for x in a], True, "extra dim accepted"),
           Bad("complex", [x + 1j for x in a], True, "complex accepted")]
    return out


def numlist_bads(v):
    return [Bad("nan in", [math.nan] + list(v[1:]), True, "nan accepted"),
            Bad("inf in", list(v[:-1]) + [math.inf], True, "inf accepted"),
            Bad("reversed", list(v)[::-1], False),
            Bad("negative", [-abs(x) - 1 for x in v], True, "negative accepted"),
            Bad("[]", [], True, "empty accepted"),
            Bad("'abc'", "abc", True, "string accepted"),
            Bad("None", None, False),
            Bad("3 entries", list(v) + [v[-1]], True, "wrong length accepted")]


def bads_for(name, valid, ann, required):
    k = kind_of(name, valid, ann)
    if k == "seed":
        return k, seed_bads()
    if k == "bool":
        return k, bool_bads()
    if k == "int":
        return k, int_bads(name, required)
    if k == "float":
        return k, float_bads(name, required)
    if k == "str":
        return k, str_bads(valid)
    if k == "array":
        return k, array_bads(name, valid)
    if k == "times":
        return k, times_bads(valid)
    if k == "seq":
        return k, seq_bads(valid)
    if k == "numlist":
        return k, numlist_bads(valid)
    if k == "none:int":
        return k, [b for b in int_bads(name, False) if b.label != "None"]
    if k == "none:float":
        return k, [b for b in float_bads(name, False) if b.label != "None"]
    if k == "none:str":
        return k, [b for b in str_bads(None) if b.label not in ("None", "upper", "' '+valid")]
    if k == "none:bool":
        return k, [b for b in bool_bads() if b.label != "None"]
    if k == "none:any":
        return k, [Bad("'abc'", "abc", True, "string accepted"),
                   Bad("nan", math.nan, True, "nan accepted"),
                   Bad("-1", -1, True, "-1 accepted"),
                   Bad("object()", object(), True, "object() accepted"),
                   Bad("eye(3) (wrong size)", np.eye(3), True, "wrong-size array accepted")]
    if k == "path":
        return k, [Bad("None", None, True, "None accepted"), Bad("1", 1, True, "int accepted"),
                   Bad("'' ", "", True, "empty path accepted")]
    if k == "dict":
        return k, [Bad("'abc'", "abc", True, "string accepted"), Bad("1", 1, True, "int accepted"),
                   Bad("[1]", [1], True, "list accepted")]
    return k, object_bads(valid)


# ---------------------------------------------------------------------------------------------
# running and classifying
# ---------------------------------------------------------------------------------------------


def nonfinite_paths(obj, path="ret", depth=0, seen=None, out=None):
    if out is None:
        out, seen = [], set()
    if depth > 5 or len(out) > 20:
        return out
    if isinstance(obj, (bool, np.bool_, str, bytes)) or obj is None:
        return out
    if isinstance(obj, (float, complex, np.floating, np.complexfloating)):
        if not np.isfinite(obj):
            out.append(path)
        return out
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "fc" and obj.size and not np.all(np.isfinite(obj)):
            out.append(path)
        elif obj.dtype == object:
            for i, x in enumerate(obj.flat[:50]):
                nonfinite_paths(x, f"{path}[{i}]", depth + 1, seen, out)
        return out
    if id(obj) in seen:
        return out
    seen.add(id(obj))
    if isinstance(obj, dict):
        for k, x in list(obj.items())[:60]:
            nonfinite_paths(x, f"{path}[{k!r}]", depth + 1, seen, out)
    elif isinstance(obj, (list, tuple)):
        for i, x in enumerate(obj[:60]):
            nonfinite_paths(x, f"{path}[{i}]", depth + 1, seen, out)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            nonfinite_paths(getattr(obj, f.name, None), f"{path}.{f.name}", depth + 1, seen, out)
    elif type(obj).__module__.startswith("quadnet") and hasattr(obj, "__dict__"):
        for k, x in vars(obj).items():
            nonfinite_paths(x, f"{path}.{k}", depth + 1, seen, out)
    return out


def names_param(msg: str, name: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", msg) is not None


def run_case(fn, kwargs, timeout):
    t0 = time.perf_counter()
    buf = io.StringIO()
    with warnings.catch_warnings(record=True) as wl:
        warnings.simplefilter("always")
        signal.alarm(timeout)
        try:
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                ret = fn(**kwargs)
            exc = None
        except CaseTimeout:
            ret, exc = None, CaseTimeout()
        except BaseException as e:  # noqa: BLE001 -- the point is to catch everything
            if isinstance(e, KeyboardInterrupt):
                raise
            ret, exc = None, e
        finally:
            signal.alarm(0)
    ws = [f"{w.category.__name__}: {str(w.message)[:160]}" for w in wl]
    return ret, exc, ws, time.perf_counter() - t0


RAW_PATTERNS = re.compile(
    r"could not convert|cannot unpack|truth value of an array|too many values to unpack|"
    r"not iterable|division by zero|Numerical result out of range|object is not callable|"
    r"operands could not be broadcast|matmul:|index out of range|Unable to allocate|"
    r"expected str, bytes|unhashable type|cannot convert float|did not converge|"
    r"must not contain infs or NaNs|Input must be 1- or 2-d|did not contain a loop|"
    r"Eigval error|has no attribute")


def raised_in_quadnet(exc) -> bool:
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return last is not None and f"{os.sep}quadnet{os.sep}" in last


def unclear_tag(exc, others) -> str:
    """Why an exception is UNCLEAR: raw / wrong-type / other-arg / unnamed."""
    msg = str(exc)
    own = type(exc).__module__.startswith("quadnet")
    if RAW_PATTERNS.search(msg) or not (own or raised_in_quadnet(exc)):
        return "raw"
    if not isinstance(exc, (ValueError, TypeError)):
        return "wrong-type"
    if any(names_param(msg, o) for o in others):
        return "other-arg"
    return "unnamed"


def classify(name, bad, ret, exc, base_nonfinite, others=()):
    """Return (outcome, detail, tag)."""
    if isinstance(exc, CaseTimeout):
        return "HANG", "timeout", ""
    if exc is not None:
        msg = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, (ValueError, TypeError)) and names_param(str(exc), name):
            return "CLEAR", msg, ""
        return "UNCLEAR", msg, unclear_tag(exc, others)
    nf = [p for p in nonfinite_paths(ret) if p not in base_nonfinite]
    if nf:
        return "SILENT-NONFINITE", "non-finite at " + ", ".join(nf[:6]), ""
    if bad.suspect:
        return "SILENT-SUSPECT", bad.why, ""
    return "ACCEPTED", "", ""


# Hand review of the rule-based SILENT-SUSPECT / ACCEPTED split: (callable regex, parameter
# regex, value-label regex, verdict, reason). "legit" moves a SILENT-SUSPECT case to ACCEPTED
# (the value is documented or mathematically valid); "suspect" moves an ACCEPTED case to
# SILENT-SUSPECT; "benign" moves a SILENT-NONFINITE case whose inf is exact to ACCEPTED.
# First match wins.
REVIEW = [
    # free shapes: the factor width r, the dimension d or the sample count n are not fixed
    (r"^(FrobeniusLoss|MeasurementLoss|GaussianSensing|AutogradLoss|CommutingSensing)\.", r"^U$",
     r"drop last col", "legit", "any width r is a valid factor"),
    (r"^(geometry\.(curvature_bounds|scalar_curvature|lyapunov_skew)|dynamics\.canonical_gauge|"
     r"PopulationInverse|population_effective_hessian|sensing\.population_effective_spectrum)$",
     r"^U$", r"drop last (row|col)", "legit", "(d, r) is free"),
    (r"^(factorization_flow|gradient_descent|gradient_flow)$", r"^U0$", r"drop last col", "legit",
     "any width r"),
    (r"^(effective_hessian|effective_spectrum|curvature\.)", r"^U$", r"drop last col", "legit",
     "any width r"),
    (r"^GaussianSensing$", r"^X$", r"drop last col", "legit", "d is free"),
    (r"^curvature\.predicted_contraction$", r"^eigenvalues$", r"drop last row", "legit",
     "any number of eigenvalues"),
    (r"^QuadraticNet$", r"^W$", r"drop last col|non-symmetric", "legit", "W is any (width, d)"),
    (r"(__call__|\.predict|\.features|^agop|kernel_matrix|kernel_predict|input_gradients|"
     r"rpcholesky)$", r"^(X|Z)$", r"drop last row", "legit", "any number of points"),
    (r"^features\.(angle|distance)_correlation$", r"^(X|Phi)$", r"drop last col", "legit",
     "feature dimensions are free"),
    (r"^features\.feature_covariance$", r"^Phi$", r"drop last|transposed", "legit", "(n, k) free"),
    (r"^features\.(fit_kernel_machine|input_gradients|kernel_agop|kernel_fact_matrix|"
     r"kernel_predict)$", r"^(Y|coef)$", r"ravel 1-d", "legit", "documented (n,) or (n, c)"),
    (r"^Dataset$", r"^(y_train|y_test)$", r"extra dim|2-d column", "legit", "(n, c) targets"),
    (r"^Dataset$", r"^X_test$", r"non-symmetric", "legit", "data, not an operator"),
    (r"^features\.cosine$", r".", r"non-symmetric", "legit", "cosine of any matrices"),
    (r"^features\.(block_circulant_score|fourier_spectrum|group_circulant_score)$", r"^M$",
     r"non-symmetric", "legit", "no symmetry documented"),
    # documented optional values
    (r".", r"^(weights|inputs|eta|xi|quad|multiplicities|a|normalize|progress)$", r"^None$",
     "legit", "documented optional (None is the default)"),
    (r"^PSDQuotient\.ricci_curvature$", r"^xi$", r"^None$", "legit", "optional"),
    (r"^(geometry\.|PSDQuotient\.)parallel_transport$", r"^t$", r"-", "legit",
     "transport backwards along the geodesic"),
    (r"^geometry\.compare_pymanopt_optimisers$", r"^reference_cost$", r".", "legit",
     "any reference cost"),
    (r"^curvature\.effective_operator$", r"^vertical_shift$", r".", "legit",
     "a spectral shift of the vertical block; any real value defines an operator"),
    (r"^factorization_flow$", r"^times$", r"decreasing|duplicate", "legit",
     "documented: any order"),
    (r"^geometry\.taylor_(errors|slope)$", r"^ts$", r"decreasing|duplicate", "legit",
     "positive steps, order not required"),
    (r"^features\.nfa_cosines$", r"^powers$", r"decreasing|duplicate", "legit", "any powers"),
    (r"^losses\.as_loss$", r"^name$", r"'abc'|''|' '", "legit", "a label for messages"),
    (r"^recover$", r"^eta$", r"^1$", "legit", "an int step size"),
    (r"^harness\.load_checks$", r"^source$", r"'abc'", "legit", "'abc' is an importable module"),
    (r"^harness\.(register|figure)$", r"^(name|claim|stem)$", r"'abc'|' '", "legit",
     "free text"),
    (r"^commuting\.feasible_support$", r"^A$", r"drop last col", "legit", "d is free"),
    # non-finite but correct
    (r"^min_trace_solution$", r"^A$", r"drop last col", "benign",
     "info['min_reduced_cost_off_face'] = inf is the minimum over an empty face complement"),
    (r"^bregman_projection$", r"^y$", r"zeros", "benign",
     "y = 0 forces q = 0, so log_q = -inf is exact"),
    # accepted but wrong
    (r"^features\.(fit_kernel_machine|kernel_predict|rpcholesky)$", r"^M$",
     r"-x|indefinite", "suspect",
     "M is documented symmetric PSD; kernel_matrix / input_gradients / kernel_agop reject it"),
]


def review(rec):
    for cre, pre, vre, verdict, why in REVIEW:
        if re.search(cre, rec["callable"]) and re.search(pre, rec["param"]) \
                and re.search(vre, rec["value"]):
            if verdict == "legit" and rec["outcome"] == "SILENT-SUSPECT":
                rec["outcome"], rec["detail"] = "ACCEPTED", f"reviewed: {why}"
            elif verdict == "benign" and rec["outcome"] == "SILENT-NONFINITE":
                rec["outcome"], rec["detail"] = "ACCEPTED", f"reviewed: {why}"
            elif verdict == "suspect" and rec["outcome"] == "ACCEPTED":
                rec["outcome"], rec["detail"] = "SILENT-SUSPECT", f"reviewed: {why}"
            return rec
    return rec


def short(x, n=400):
    s = str(x).replace("\n", " ")
    return s if len(s) <= n else s[: n - 3] + "..."


FROZEN_RESULTS = {}  # type name -> (instance, label of the producing call)


def note_result(ret, label, public_types):
    stack = [ret]
    seen = set()
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            tn = type(o).__name__
            if type(o) in public_types and tn not in FROZEN_RESULTS:
                FROZEN_RESULTS[tn] = (o, label)
            for f in dataclasses.fields(o):
                v = getattr(o, f.name, None)
                if dataclasses.is_dataclass(v) or isinstance(v, (list, tuple)):
                    stack.append(v)
        elif isinstance(o, tuple) and hasattr(o, "_fields"):
            if type(o) in public_types and type(o).__name__ not in FROZEN_RESULTS:
                FROZEN_RESULTS[type(o).__name__] = (o, label)
            stack.extend(o[:8])
        elif isinstance(o, (list, tuple)):
            stack.extend(o[:5])


BASELINE_ONLY = [False]


def fuzz_callable(label, target, kwfac, timeout, records, baselines):
    try:
        fn = target() if (inspect.isfunction(target) and target.__name__ == "<lambda>") \
            or getattr(target, "__name__", "") == "rfm_fit_factory" else target
        base_kw = kwfac()
    except Exception as e:  # noqa: BLE001
        SKIPPED[label] = f"could not build the valid call: {type(e).__name__}: {short(e, 200)}"
        return None
    ret, exc, ws, dt = run_case(fn, base_kw, max(timeout, 30))
    if exc is not None:
        SKIPPED[label] = f"valid baseline raised {type(exc).__name__}: {short(exc, 200)}"
        return None
    baselines[label] = dict(seconds=round(dt, 3), warnings=ws[:3])
    base_nf = set(nonfinite_paths(ret))
    if BASELINE_ONLY[0]:
        return ret
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    params = []
    if sig is not None:
        for p in sig.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            if p.name in ("maxiter", "polish_maxiter", "lr"):  # documented aliases
                continue
            required = p.default is inspect.Parameter.empty
            if p.name in base_kw:
                valid = base_kw[p.name]
            elif not required:
                valid = p.default
            else:
                continue
            params.append((p.name, valid, p.annotation, required))
    for name, valid, ann, required in params:
        if callable(valid) and not isinstance(valid, (np.ndarray, type)) and name in ("fn", "f", "callback"):
            kind, bads = "callable", [Bad("None", None, name in ("fn", "f"), "None accepted"),
                                     Bad("'abc'", "abc", True, "string accepted"),
                                     Bad("1", 1, True, "int accepted")]
        else:
            kind, bads = bads_for(name, valid, ann, required)
        for bad in bads:
            try:
                fn_i = target() if fn is not target else target
                kw = kwfac()
            except Exception:  # noqa: BLE001
                continue
            kw[name] = bad.value
            r, e, w, dt = run_case(fn_i, kw, timeout)
            others = [q[0] for q in params if q[0] != name]
            cls, detail, tag = classify(name, bad, r, e, base_nf, others)
            records.append(review(dict(callable=label, param=name, kind=kind, value=bad.label,
                                       outcome=cls, tag=tag, detail=short(detail),
                                       warned=bool(w), warnings=[short(x, 200) for x in w[:2]],
                                       seconds=round(dt, 3), group="api")))
            del r
    return ret


def frozen_checks(records, public_types, timeout):
    """Mutate fields of returned result dataclasses, and rebuild them with bad fields."""
    out = []
    for tn, (obj, src) in sorted(FROZEN_RESULTS.items()):
        cls = type(obj)
        if not dataclasses.is_dataclass(obj):  # a NamedTuple: immutable by construction
            out.append(dict(type=tn, produced_by=src, frozen=True, mutable_fields=[],
                            writeable_arrays=[n for n in obj._fields
                                              if isinstance(getattr(obj, n), np.ndarray)
                                              and getattr(obj, n).flags.writeable]))
            continue
        params = cls.__dataclass_params__
        mut = []
        for f in dataclasses.fields(obj):
            try:
                setattr(obj, f.name, getattr(obj, f.name))
                mut.append(f.name)
            except (dataclasses.FrozenInstanceError, AttributeError):
                pass
        arrays_writeable = [f.name for f in dataclasses.fields(obj)
                            if isinstance(getattr(obj, f.name, None), np.ndarray)
                            and getattr(obj, f.name).flags.writeable]
        out.append(dict(type=tn, produced_by=src, frozen=bool(params.frozen), mutable_fields=mut,
                        writeable_arrays=arrays_writeable))
        # rebuild with one bad field at a time
        init_fields = [f for f in dataclasses.fields(obj) if f.init]
        base = {f.name: getattr(obj, f.name) for f in init_fields}
        label = f"{tn}(...) [result class]"
        try:
            cls(**base)
        except Exception as e:  # noqa: BLE001
            SKIPPED[label] = f"could not rebuild from its own fields: {type(e).__name__}: {short(e, 150)}"
            continue
        base_nf = set(nonfinite_paths(cls(**base)))
        for f in init_fields:
            valid = base[f.name]
            kind, bads = bads_for(f.name, valid, f.type, f.default is dataclasses.MISSING
                                  and f.default_factory is dataclasses.MISSING)
            for bad in bads[:10]:
                kw = dict(base)
                kw[f.name] = bad.value
                r, e, w, dt = run_case(cls, kw, timeout)
                c, detail, tag = classify(f.name, bad, r, e, base_nf,
                                         [g.name for g in init_fields if g.name != f.name])
                records.append(dict(callable=label, param=f.name, kind=kind, value=bad.label,
                                    outcome=c, tag=tag, detail=short(detail), warned=bool(w),
                                    group="container",
                                    warnings=[short(x, 200) for x in w[:2]],
                                    seconds=round(dt, 3)))
    return out


def public_classes():
    mods = ["quadnet", "quadnet.geometry", "quadnet.curvature", "quadnet.sensing",
            "quadnet.commuting", "quadnet.features", "quadnet.harness", "quadnet.losses",
            "quadnet.dynamics"]
    types, names = set(), {}
    for m in mods:
        M = importlib.import_module(m)
        for n in M.__all__:
            o = getattr(M, n)
            if inspect.isclass(o):
                types.add(o)
            if callable(o) and not inspect.ismodule(o):
                names.setdefault(id(o), f"{m}.{n}")
    return types, names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=None, help="substring filter on callable labels")
    ap.add_argument("--timeout", type=int, default=10)
    ap.add_argument("--baseline-only", action="store_true")
    ap.add_argument("--out", default=str(RESULTS / "fuzz_independent"))
    args = ap.parse_args()
    BASELINE_ONLY[0] = args.baseline_only
    limit_memory(6.0)
    signal.signal(signal.SIGALRM, _alarm)
    import quadnet  # noqa: F401
    try:
        import cvxpy  # noqa: F401  (import once so the SDP cases are not charged for it)
    except ImportError:
        pass
    build_specs()
    public_types, public_names = public_classes()

    covered = set()
    records, baselines = [], {}
    t_start = time.time()
    for label, target, kwfac in SPECS:
        if args.only and args.only not in label:
            continue
        t0 = time.time()
        n0 = len(records)
        ret = fuzz_callable(label, target, kwfac, args.timeout, records, baselines)
        if ret is not None:
            note_result(ret, label, public_types)
        print(f"[{time.time() - t_start:7.1f}s] {label}: {len(records) - n0} cases "
              f"in {time.time() - t0:.1f}s" + (f"  SKIP {SKIPPED[label]}" if label in SKIPPED else ""),
              flush=True)
        covered.add(label.split("[")[0].split(".")[-1])
    frozen = frozen_checks(records, public_types, args.timeout) if not args.only else []

    # public callables with no spec at all
    for oid, full in sorted(public_names.items(), key=lambda kv: kv[1]):
        short_name = full.split(".")[-1]
        if short_name not in covered and not any(full.endswith(s) for s in SKIPPED) \
                and short_name not in SKIPPED:
            if short_name in FROZEN_RESULTS:
                continue
            if short_name in {"DivergenceError", "CheckError"}:
                SKIPPED[full] = "exception class"
            else:
                SKIPPED.setdefault(full, "no valid example written (result class not produced by "
                                         "any baseline call, or not covered)")

    write_report(records, baselines, frozen, Path(args.out), time.time() - t_start)


CONTAINERS = {"Trajectory", "commuting.SpectralTrajectory", "features.NetTrajectory",
              "harness.CheckContext", "harness.CheckResult", "harness.Row", "harness.SweepReport"}
OUTCOMES = ("CLEAR", "UNCLEAR", "SILENT-NONFINITE", "SILENT-SUSPECT", "ACCEPTED", "HANG")


def write_report(records, baselines, frozen, out: Path, elapsed):
    out.parent.mkdir(parents=True, exist_ok=True)
    for r in records:
        if r["callable"] in CONTAINERS:
            r["group"] = "container"
    api = [r for r in records if r["group"] == "api"]
    cont = [r for r in records if r["group"] == "container"]

    def count(rs):
        t = {k: 0 for k in OUTCOMES}
        for r in rs:
            t[r["outcome"]] += 1
        return t
    totals = dict(api=count(api), containers=count(cont), all=count(records))
    tags = {}
    for r in api:
        if r["outcome"] == "UNCLEAR":
            tags[r["tag"]] = tags.get(r["tag"], 0) + 1
    totals["api_unclear_by_tag"] = tags
    data = dict(totals=totals, elapsed_seconds=round(elapsed, 1), n_callables=len(baselines),
                baselines=baselines, skipped=SKIPPED, frozen=frozen, review=[list(x) for x in REVIEW])
    # one case per line (diff-friendly); CLEAR cases keep only their message's first 80 characters
    lines = []
    for r in records:
        r = dict(r)
        if r["outcome"] == "CLEAR":
            r = {k: r[k] for k in ("callable", "param", "value", "outcome", "group")} | \
                {"detail": short(r["detail"], 80)}
        elif not r["warnings"]:
            del r["warnings"]
        lines.append(json.dumps(r, default=str, separators=(",", ":")))
    head = json.dumps(data, indent=1, default=str)
    out.with_suffix(".json").write_text(head[:-2] + ',\n "cases": [\n' + ",\n".join(lines) + "\n]}\n")

    def esc(x):
        return str(x).replace("|", "\\|")
    n_api = len({r["callable"] for r in api})
    L = ["# Independent bad-input fuzz of the quadnet public API", "",
         "Generated by `benchmarks/fuzz_independent.py`: valid calls written from signatures, "
         "names, defaults and docstring examples only; one argument mutated at a time; "
         "10 s alarm per case; address space limited to 6 GB. "
         f"{len(baselines)} valid baselines, {len(records)} cases, {elapsed:.0f} s.", "",
         "Outcome classes: CLEAR = ValueError/TypeError naming the mutated parameter; UNCLEAR = "
         "any other exception (tag: `raw` = a Python/numpy/scipy internal error leaked, "
         "`wrong-type` = explained but not ValueError/TypeError, `other-arg` = names another "
         "parameter only, `unnamed` = explained ValueError/TypeError that names no parameter); "
         "SILENT-NONFINITE = NaN/inf in the result where the valid call had none; "
         "SILENT-SUSPECT = finite result for a clearly invalid value (rule based, then hand "
         "reviewed: see `REVIEW` in the script); ACCEPTED = finite result, value plausibly "
         "legitimate; HANG = alarm fired.", "",
         "`api` = functions, methods and estimator/loss constructors "
         f"({n_api} callables); `containers` = plain record classes (trajectories, harness "
         "rows/contexts, and result dataclasses rebuilt from a returned instance with one bad "
         "field).", "",
         "The hand review of these lists (which cases are real problems) is in "
         "`fuzz_independent_review.md`.", "",
         "## Totals", "", "| outcome | api | containers | all |", "|---|---:|---:|---:|"]
    for k in OUTCOMES:
        L.append(f"| {k} | {totals['api'][k]} | {totals['containers'][k]} | {totals['all'][k]} |")
    L += ["", "UNCLEAR (api) by tag: " + ", ".join(f"{k} {v}" for k, v in sorted(tags.items())),
          ""]
    for k in ("UNCLEAR", "SILENT-NONFINITE", "SILENT-SUSPECT", "HANG"):
        rows = [r for r in api if r["outcome"] == k]
        L += [f"## api: {k} ({len(rows)})", ""]
        if k == "UNCLEAR":
            L += ["| callable | argument | value | tag | exception |", "|---|---|---|---|---|"]
            for r in rows:
                L.append(f"| {esc(r['callable'])} | {esc(r['param'])} | {esc(r['value'])} | "
                         f"{r['tag']} | {esc(r['detail'])} |")
        else:
            L += ["| callable | argument | value | outcome | warning |", "|---|---|---|---|---|"]
            for r in rows:
                L.append(f"| {esc(r['callable'])} | {esc(r['param'])} | {esc(r['value'])} | "
                         f"{esc(r['detail'])} | "
                         f"{esc(r['warnings'][0]) if r['warned'] else 'none'} |")
        L.append("")

    def grouped(rs, title):
        g = {}
        for r in rs:
            g.setdefault((r["callable"], r["param"], r["outcome"]), []).append(
                r["value"] + (" (W)" if r["warned"] else ""))
        out_ = [title, "", "| callable | argument | outcome | values |", "|---|---|---|---|"]
        for (c, p_, o), vs in g.items():
            out_.append(f"| {esc(c)} | {esc(p_)} | {o} | {esc(', '.join(vs))} |")
        return out_ + [""]
    L += grouped([r for r in cont if r["outcome"] != "CLEAR"],
                 f"## containers: every non-CLEAR case ({sum(r['outcome'] != 'CLEAR' for r in cont)};"
                 " (W) = a warning was emitted)")
    L += grouped([r for r in api if r["outcome"] == "ACCEPTED"],
                 f"## api: ACCEPTED ({totals['api']['ACCEPTED']}; plausibly legitimate; "
                 "(W) = a warning was emitted)")
    L += ["## Result classes: frozen?", "",
          "Each result type seen in a baseline return; `mutable fields` = fields that "
          "`setattr` changed on the returned instance.", "",
          "| type | produced by | frozen | mutable fields | writeable arrays |",
          "|---|---|---|---|---|"]
    for f in frozen:
        L.append(f"| {f['type']} | {f['produced_by']} | {f['frozen']} | "
                 f"{', '.join(f['mutable_fields']) or '-'} | {', '.join(f['writeable_arrays']) or '-'} |")
    L.append("")
    per = {}
    for r in records:
        per.setdefault(r["callable"], {k: 0 for k in OUTCOMES})[r["outcome"]] += 1
    L += ["## Per callable", "", "| callable | " + " | ".join(OUTCOMES) + " |",
          "|---|" + "---:|" * len(OUTCOMES)]
    for c, d_ in per.items():
        L.append(f"| {esc(c)} | " + " | ".join(str(d_[k]) for k in OUTCOMES) + " |")
    L.append("")
    L += ["## Skipped", "", "| callable | why |", "|---|---|"]
    for k, v in sorted(SKIPPED.items()):
        L.append(f"| {esc(k)} | {esc(v)} |")
    L += ["", "## Baseline timings (s)", "",
          ", ".join(f"{k} {v['seconds']}" for k, v in baselines.items()), ""]
    out.with_suffix(".md").write_text("\n".join(L) + "\n")
    print(json.dumps(totals))


if __name__ == "__main__":
    main()
