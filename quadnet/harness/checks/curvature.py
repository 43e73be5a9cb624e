"""Check ``curvature``: effective curvature predicts the local rates (quadnet theory §3-4).

Claims reproduced from Cheng (2026) "Quotient Dynamics, Effective Curvature, and Implicit Bias
in Positive Quadratic Networks" (the paper reports a relative rate error below 2.4e-4):

(a) the effective Hessian (Hessian restricted to the horizontal space) is computed exactly:
    its eigenvalues agree with an independent route (explicit measurement Jacobian written in a
    null-space basis of the horizontal constraint, residual term added) at and away from
    minimisers;
(b) at a zero-residual minimiser the full factor Hessian has exactly ``r(r-1)/2`` zero
    eigenvalues (the vertical directions) and the effective one none when ``m >= n_h``;
(c) the measured local decay rate of gradient flow equals ``lambda_min`` (the paper: relative
    error < 2.4e-4; here the slow-mode projection with a two-term fit, see
    :mod:`quadnet.curvature.rates`), over >= 20 random instances with varied ``d, r, m``;
(d) gradient descent contracts per step by ``max_i |1 - eta lambda_i|`` (both regimes), i.e.
    by ``log(1 - eta lambda_min)`` per step, not the surrogate ``-eta lambda_min``;
(e) "changing the steepness": along a family where ``lambda_min`` changes by >= 10x, the
    measured rate tracks it (figure);
(f) the empirical spectrum vs the population form ``2||zeta||^2 + tr(zeta)^2`` and its closed
    form, with the ``r(r-1)/2`` vertical zeros of the full Hessian shown separately (figure).
"""

from __future__ import annotations

import math
import time

import numpy as np

from quadnet._threads import single_threaded
import scipy.linalg

from quadnet.curvature.hessian import (
    effective_hessian,
    effective_spectrum,
    factor_hessian,
    horizontal_dimension,
)
from quadnet.sensing.population import population_effective_hessian, population_effective_spectrum
from quadnet.curvature.rates import descent_contraction, flow_decay_rate, local_curvature
from quadnet.sensing.gaussian import GaussianSensing
from quadnet.harness.checks._base import (
    COLUMN_WIDTH, OKABE_ITO, QUADNET_TARGET, CheckContext, CheckResult, figure, floor_note,
    register)

CLAIM = "Effective Hessian eigenvalues (vertical zeros removed) give the local flow/descent rates"


# ------------------------------------------------------------ independent reference
def _null_space_basis(U: np.ndarray) -> np.ndarray:
    """Basis of H_U as the SVD null space of ``xi -> (U^T xi)_ab - (U^T xi)_ba``, ``a < b``."""
    d, r = U.shape
    rows = []
    for a in range(r):
        for b in range(a + 1, r):
            C = np.zeros((d, r))
            C[:, b] += U[:, a]
            C[:, a] -= U[:, b]
            rows.append(C.reshape(-1))
    return np.eye(d * r) if not rows else scipy.linalg.null_space(np.array(rows))


def _jacobian_effective_hessian(loss: GaussianSensing, U: np.ndarray) -> np.ndarray:
    """``N^T (J^T J / m + 2 S (x) I_r) N`` with ``J_i = 2 vec(x_i x_i^T U)`` (explicit rows)."""
    X, y, m = loss.X, loss.y, loss.m
    XU = X @ U
    J = 2.0 * (X[:, :, None] * XU[:, None, :]).reshape(m, -1)
    res = np.sum(XU**2, axis=1) - y
    S = (X.T * res) @ X / m
    N = _null_space_basis(U)
    return N.T @ (J.T @ J / m + 2.0 * np.kron(S, np.eye(U.shape[1]))) @ N


def _rel_eig_diff(H1: np.ndarray, H2: np.ndarray) -> float:
    w1, w2 = np.linalg.eigvalsh(H1), np.linalg.eigvalsh(H2)
    return float(np.max(np.abs(w1 - w2)) / np.max(np.abs(w2)))


def _instance(rng: np.random.Generator, dr=((6, 20), (1, 4)), ratio=(2.0, 5.0)):
    d = int(rng.integers(dr[0][0], dr[0][1] + 1))
    r = int(rng.integers(dr[1][0], min(dr[1][1], d) + 1))
    n_h = horizontal_dimension(d, r)
    m = math.ceil(rng.uniform(*ratio) * n_h)
    return GaussianSensing.random(d, r, m, seed=rng), d, r, m


def _steep_family(s: float, X: np.ndarray, Qo: np.ndarray) -> GaussianSensing:
    """Planted ``U*(s) = Qo diag(1, s)`` on a fixed design: ``lambda_min ~ 4 s^2``."""
    U = Qo * np.array([1.0, s])
    XU = X @ U
    loss = GaussianSensing(X, np.sum(XU**2, axis=1))
    loss.U_star, loss.Q_star = U, U @ U.T
    return loss


QT = QUADNET_TARGET
T3 = {"kind": "theorem", "source": "Cheng (2026) §3"}
T4 = {"kind": "theorem", "source": "Cheng (2026) §4"}


def _exactness(ctx: CheckContext, res: CheckResult) -> None:
    """(a) the effective Hessian against the explicit Jacobian in a null-space basis."""
    rng = ctx.rng("hessian")
    at_min, away = [], []
    for _ in range(3 if ctx.quick else 8):
        loss, d, r, m = _instance(rng, dr=((4, 9), (1, 4)), ratio=(1.0, 3.0))
        U = loss.U_star
        V = U + 0.3 * rng.standard_normal(U.shape)
        at_min.append(_rel_eig_diff(effective_hessian(loss, U), _jacobian_effective_hessian(loss, U)))
        away.append(_rel_eig_diff(effective_hessian(loss, V), _jacobian_effective_hessian(loss, V)))
    res.add("eff. Hessian eigenvalues vs explicit Jacobian in null-space basis, at minimisers "
            "(max rel.)", max(at_min), 1e-10, paper="exact", **QT)
    res.add("... away from minimisers, residual term included (max rel.)", max(away), 1e-10,
            paper="exact", **QT)


def _vertical_zeros(ctx: CheckContext, res: CheckResult) -> None:
    """(b) the r(r-1)/2 vertical zeros of the full factor Hessian, none in the effective one."""
    rng = ctx.rng("zeros")
    count_err, eff_min, zero_max = 0, math.inf, 0.0
    zero_rows = []
    for _ in range(3 if ctx.quick else 8):
        d = int(rng.integers(4, 9))
        r = int(rng.integers(2, min(4, d) + 1))
        n_h = horizontal_dimension(d, r)
        loss = GaussianSensing.random(d, r, n_h + int(rng.integers(0, 4)), seed=rng)
        w = np.linalg.eigvalsh(factor_hessian(loss, loss.U_star))
        zero = np.abs(w) <= 1e-9 * w[-1]
        count_err = max(count_err, abs(int(np.count_nonzero(zero)) - r * (r - 1) // 2))
        zero_max = max(zero_max, float(np.max(np.abs(w[zero])) / w[-1]) if zero.any() else 0.0)
        weff = np.linalg.eigvalsh(effective_hessian(loss, loss.U_star))
        eff_min = min(eff_min, float(weff[0] / weff[-1]))
        zero_rows.append({"d": d, "r": r, "m": loss.m, "zeros": int(np.count_nonzero(zero)),
                          "eff_min_over_max": float(weff[0] / weff[-1])})
    res.add("full factor Hessian at zero-residual minimiser: |#zeros - r(r-1)/2| (max)",
            count_err, 0, paper="r(r-1)/2 zeros", **T3)
    res.add(f"effective Hessian, m >= n_h: min lambda_min/lambda_max (vertical zeros are "
            f"<= {zero_max:.0e})", eff_min, 1e-9, relation=">=", paper="none zero", **T3)
    res.metrics["vertical_zeros"] = {"instances": zero_rows, "largest_zero_rel": zero_max}


def _flow_rates(ctx: CheckContext, res: CheckResult) -> list:
    """(c) the flow decay rate against lambda_min; the descent runs of (d) on the same
    instances (returned)."""
    rng = ctx.rng("flow")
    n_inst = 6 if ctx.quick else 24
    errs, naive, loglin, inst = [], [], [], []
    descents = []
    for i in ctx.progress(range(n_inst), desc="flow rates"):
        loss, d, r, m = _instance(rng, dr=((6, 12), (1, 3)) if ctx.quick else ((6, 20), (1, 4)))
        curv = local_curvature(loss, loss.U_star)
        fr = flow_decay_rate(loss, loss.U_star, curvature=curv, seed=ctx.rng("start", i))
        errs.append(fr.relative_error)
        naive.append(fr.naive_relative_error)
        loglin.append(fr.loglinear_relative_error)
        inst.append({"d": d, "r": r, "m": m, "lambda_min": fr.lambda_min, "rate": fr.rate,
                     "rel_err": fr.relative_error, "naive_rel_err": fr.naive_relative_error,
                     "gap_rel": (curv.lambda_2 - curv.lambda_min) / curv.lambda_min})
        if i < (3 if ctx.quick else 10):
            for eta in (1.0 / curv.lambda_max, 0.5 * (curv.best_step + curv.stable_step)):
                dc = descent_contraction(loss, loss.U_star, eta, curvature=curv, seed=i)
                descents.append(dc)
    errs = np.array(errs)
    res.add(f"flow decay rate vs lambda_min, median rel. error ({n_inst} instances)",
            float(np.median(errs)), 1e-6, paper="< 2.4e-4", **T3)
    res.add(f"flow decay rate vs lambda_min, max rel. error ({n_inst} instances)",
            float(np.max(errs)), 1e-5, paper="< 2.4e-4", **T3)
    res.metrics["flow"] = {
        "instances": inst, "median_rel_err": float(np.median(errs)),
        "max_rel_err": float(np.max(errs)),
        "naive_log_slope_median_rel_err": float(np.median(naive)),
        "naive_log_slope_max_rel_err": float(np.max(naive)),
        "loglinear_projection_median_rel_err": float(np.median(loglin)),
    }
    return descents


def _descent(res: CheckResult, descents: list) -> None:
    """(d) the per-step contraction of gradient descent, and the surrogate it is not."""
    d_err = max(dc.relative_error for dc in descents)
    lmin = [dc for dc in descents if dc.dominant == "lambda_min"]
    log_err = max(abs(dc.log_rate - dc.log_prediction) / dc.log_prediction for dc in lmin)
    surr = [abs(dc.surrogate - dc.log_rate) / dc.log_rate for dc in lmin]
    surr_fit = max(abs(s / (dc.eta * dc.lambda_min / 2) - 1) for s, dc in zip(surr, lmin))
    res.add(f"GD per-step contraction vs max_i|1-eta lambda_i|, both regimes (max rel., "
            f"{len(descents)} runs)", d_err, 1e-6, paper="max|1-eta lambda_i|", **T3)
    res.add("GD log-contraction vs log(1-eta lambda_min) (max rel.)", log_err, 1e-6,
            paper="log(1-eta lambda_min)", **T3)
    res.add("surrogate -eta lambda_min misses it by eta lambda_min/2: max |ratio - 1|",
            surr_fit, 0.1, paper="O(eta^2) error", **QT)
    res.metrics["descent"] = [
        {"eta": dc.eta, "dominant": dc.dominant, "measured": dc.contraction,
         "predicted": dc.predicted, "rel_err": dc.relative_error, "steps": dc.steps,
         "norm_ratio": dc.norm_ratio} for dc in descents]
    res.metrics["descent_surrogate_rel_err_median"] = float(np.median(surr))


def _steepness(ctx: CheckContext, res: CheckResult) -> None:
    """(e) along a family whose lambda_min changes by >= 10x the rate tracks it (figure)."""
    rng = ctx.rng("steepness")
    d, m = 10, 120
    X = rng.standard_normal((m, d))
    Qo = np.linalg.qr(rng.standard_normal((d, 2)))[0]
    svals = np.geomspace(1.0, 0.2, 4 if ctx.quick else 8)
    lam, rate, pop, traces = [], [], [], []
    for s in svals:
        loss = _steep_family(float(s), X, Qo)
        fr = flow_decay_rate(loss, loss.U_star, seed=0)
        lam.append(fr.lambda_min)
        rate.append(fr.rate)
        pop.append(float(population_effective_spectrum(loss.U_star)[0]))
        traces.append((fr.t, np.abs(fr.projection)))
    lam, rate = np.array(lam), np.array(rate)
    res.add("steepness family: lambda_min range max/min", float(lam.max() / lam.min()), 10.0,
            relation=">=", paper="changed steepness", **QT)
    res.add("steepness family: rate tracks lambda_min (max rel. error)",
            float(np.max(np.abs(rate - lam) / lam)), 1e-5, paper="< 2.4e-4", **T3)
    res.metrics["steepness"] = {"s": svals, "lambda_min": lam, "rate": rate,
                                "population_lambda_min": pop}

    ctx.draw(res, "curvature_steepness", {
        "s": svals, "lambda_min": lam, "rate": rate, "population": pop,
        "t": [t for t, _ in traces], "projection": [p for _, p in traces]})


def _spectrum(ctx: CheckContext, res: CheckResult) -> None:
    """(f) the empirical spectrum against the population form; the vertical zeros (figure)."""
    rng = ctx.rng("spectrum")
    d, r = (15, 3) if ctx.quick else (30, 3)
    n_h = horizontal_dimension(d, r)
    loss = GaussianSensing.random(d, r, 10 * n_h if ctx.quick else 20 * n_h, seed=rng)
    U = loss.U_star
    H = effective_hessian(loss, U)
    w_emp = np.linalg.eigvalsh(H)
    w_full = np.linalg.eigvalsh(factor_hessian(loss, U))
    w_pop_mat = np.linalg.eigvalsh(population_effective_hessian(U))
    w_pop = population_effective_spectrum(U)
    res.add("population form: closed-form spectrum vs eigvalsh (max rel.)",
            float(np.max(np.abs(w_pop - w_pop_mat)) / w_pop[-1]), 1e-12, paper="closed form",
            **T4)
    u = rng.standard_normal((d, 1))
    w1 = np.linalg.eigvalsh(population_effective_hessian(u))
    n2 = float(np.sum(u**2))
    r1_err = max(float(np.max(np.abs(w1[:-1] - 4 * n2))), abs(w1[-1] - 12 * n2)) / (12 * n2)
    res.add("population r=1: 4||u||^2 (x d-1) and 12||u||^2 (max rel.)", r1_err, 1e-12,
            paper="4||u||^2, 12||u||^2", **T4)
    sp = effective_spectrum(loss, U, k=1)
    res.add("matrix-free effective_spectrum lambda_min vs dense (rel.)",
            abs(sp.eigenvalues[0] - w_emp[0]) / w_emp[0], 1e-10, paper="equal", **QT)
    k0 = r * (r - 1) // 2
    zeros = np.sort(np.abs(w_full))[:k0]
    ctx.draw(res, "curvature_spectrum", {
        "d": d, "r": r, "m": loss.m, "n_h": n_h, "w_emp": w_emp, "w_pop": w_pop,
        "zeros_rel": zeros / w_full[-1], "lambda_min_rel": w_emp[0] / w_full[-1]})
    res.metrics["spectrum"] = {
        "d": d, "r": r, "m": loss.m, "lambda_min_emp": w_emp[0], "lambda_min_pop": w_pop[0],
        "lambda_max_emp": w_emp[-1], "lambda_max_pop": w_pop[-1],
        "vertical_zeros_rel": zeros / w_full[-1],
        "matrix_free_hvps": sp.n_hvp}


@register("curvature", CLAIM, order=30)
@single_threaded()  # one BLAS thread: CPU seconds, see quadnet._threads
def run(ctx: CheckContext, res: CheckResult) -> None:
    t_start = time.perf_counter()
    _exactness(ctx, res)
    _vertical_zeros(ctx, res)
    _descent(res, _flow_rates(ctx, res))
    _steepness(ctx, res)
    _spectrum(ctx, res)
    res.metrics["seconds"] = time.perf_counter() - t_start


@figure("curvature_steepness")
def _figure_steepness(f: dict):
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(COLUMN_WIDTH, 4.9), layout="constrained")
    sub = fig.subfigures(2, 1, height_ratios=[1.1, 1.0])
    ax = sub[0].subplots()
    cmap = plt.get_cmap("cividis")
    s, lam = np.asarray(f["s"], float), np.asarray(f["lambda_min"], float)
    norm = plt.Normalize(s.min(), s.max())
    for j, (t, p) in enumerate(zip(f["t"], f["projection"])):
        t, p = np.asarray(t, float), np.asarray(p, float)
        ax.semilogy(t, p, color=cmap(norm(s[j])))
        ax.semilogy(t, p[0] * np.exp(-lam[j] * t), ":", color="k", lw=0.6)
    ax.set_xlabel("time $t$")
    ax.set_ylabel(r"$|\langle v_1, \log_{U^*} U(t)\rangle|$")
    ax.set_title(r"slow-mode error; dotted: $e^{-\lambda_{\min} t}$ (Cheng (2026) §3)")
    cb = sub[0].colorbar(plt.cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, pad=0.02)
    cb.set_label(r"smallest singular value $s$ of $U^*$")
    ax = sub[1].subplots()
    rate = np.asarray(f["rate"], float)
    ax.loglog(s, lam, "o-", label=r"$\lambda_{\min}$ of the effective Hessian")
    ax.loglog(s, rate, "x", ms=6, label="measured flow rate")
    ax.loglog(s, f["population"], "--", label=r"population $4\sigma_{\min}(U^*)^2$")
    ax.set_xlabel(r"smallest singular value $s$ of $U^*$")
    ax.set_ylabel("rate (1/time)")
    err = float(np.max(np.abs(rate - lam) / lam))
    ax.set_title(f"max rel. error {err:.1e} (Cheng (2026): < 2.4e-4)")
    sub[1].legend(loc="outside lower center", ncol=2)
    return fig


@figure("curvature_spectrum")
def _figure_spectrum(f: dict):
    import matplotlib.pyplot as plt

    floor = 1e-18
    fig = plt.figure(figsize=(COLUMN_WIDTH, 4.9), layout="constrained")
    sub = fig.subfigures(2, 1, height_ratios=[1.15, 0.9])
    ax = sub[0].subplots()
    n_h = f["n_h"]
    idx = np.arange(1, n_h + 1)
    ax.plot(idx, f["w_emp"], ".", ms=2.5, label=f"effective Hessian, empirical (m = {f['m']})")
    ax.plot(idx, f["w_pop"], "-", lw=1.0,
            label=r"population $2\|\zeta\|^2+\mathrm{tr}(\zeta)^2$ (Cheng (2026) §4)")
    ax.set_yscale("log")
    ax.set_xlabel(f"eigenvalue index (n_h = {n_h})")
    ax.set_ylabel("eigenvalue")
    ax.set_title(f"effective Hessian spectrum, d = {f['d']}, r = {f['r']}")
    sub[0].legend(loc="outside lower center", ncol=1)
    ax = sub[1].subplots()
    z = np.asarray(f["zeros_rel"], float)
    k0 = len(z)
    ax.semilogy(np.arange(1, k0 + 1), np.maximum(z, floor), "s", color=OKABE_ITO[1],
                label=f"the r(r-1)/2 = {k0} smallest |eigenvalues| of the full factor Hessian")
    ax.axhline(f["lambda_min_rel"], color=OKABE_ITO[0], ls="--", lw=0.9,
               label=r"smallest eigenvalue $\lambda_{\min}$ of the effective Hessian")
    floor_note(ax, floor)
    ax.set_xticks(np.arange(1, k0 + 1))
    ax.set_xlim(0.5, k0 + 0.5)
    ax.set_ylim(floor / 10, 10)
    ax.set_xlabel("vertical direction")
    ax.set_ylabel(r"$|\lambda|/\lambda_{\max}$")
    ax.set_title("vertical zeros (removed by the quotient) vs the effective minimum")
    sub[1].legend(loc="outside lower center", ncol=1)
    return fig
