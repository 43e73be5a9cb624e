"""Check ``overparam``: dynamics through the rank boundary at over-parameterised widths.

Every claim here is a quadnet target derived in ``docs/overparam.md`` (quadnet theory §2-4;
the paper's analysis, Cheng (2026) "Quotient Dynamics, Effective Curvature, and Implicit Bias
in Positive Quadratic Networks", stops at the full-rank stratum):

(a) the closed-form factor flow :func:`quadnet.factorization_flow` equals the DOP853 factor
    flow (rtol 1e-13) over a whole incremental-learning trajectory (``t`` up to 200), equals
    the closed form evaluated in mpmath with enough digits, and stays finite and exact up to
    ``t = 1e300`` (the Eckart-Young limit on the span the start reaches);
(b) incremental learning from ``U0 = eps V``: the time at which the ``k``-th eigenvalue of
    ``Q(t)`` reaches ``lambda_k / 2`` is ``ln(lambda_k / (eps^2 ell_k^2) - 1) / (4 lambda_k)``
    with ``ell_k`` the ``k``-th pivot of the column-echelon form of ``P^T V`` (derived, not
    fitted); the leading order ``ln(1/eps^2) / (4 lambda_k)`` is off by a relative error
    shrinking like ``1 / ln(1/eps)`` (staircase figure);
(c) excess directions (zero eigenvalues of ``T`` inside the range of ``U``): each excess
    eigenvalue decays like ``1/(4t)`` under the flow and ``1/(4 eta k)`` under descent (the
    constants measured); at the limit the effective Hessian splits into the signal block and
    ``(r - k) n_0`` structural zeros; ``lambda_min`` of the signal block is
    ``min(4 lambda_k, 2 (lambda_{k-1} + lambda_k), 2 (lambda_k - lambda_{k+1}))`` and is the
    measured flow rate;
(d) over-parameterised Gaussian sensing, ``d = 30``, ``r* = 2``, width ``r = d``, small
    start: exact recovery, and the rank staircase of gradient descent (figure);
(e) pymanopt's TrustRegions / SteepestDescent / ConjugateGradient on
    :class:`quadnet.PSDQuotient` when the optimum has rank ``< r``, side by side with
    pymanopt's ``PSDFixedRank``.
"""

from __future__ import annotations

import math
import time

import numpy as np

from quadnet._threads import single_threaded
import scipy.optimize

from quadnet.curvature.hessian import boundary_spectrum
from quadnet.curvature.rates import flow_decay_rate
from quadnet.dynamics import factorization_flow, gradient_descent, gradient_flow
from quadnet.geometry.conformance import compare_pymanopt_optimisers, random_orthogonal
from quadnet.harness.checks._base import (
    COLUMN_WIDTH, QUADNET, CheckContext, CheckResult, figure, register)
from quadnet.losses import FrobeniusLoss
from quadnet.sensing.gaussian import GaussianSensing, relative_error
from quadnet.sensing.recovery import recover

CLAIM = ("Over-parameterised widths: closed-form flow, incremental-learning times, 1/(4t) "
         "excess law, structural zeros, exact recovery at r = d")
Q = {"kind": "target", "source": f"{QUADNET} (docs/overparam.md)"}
EXPL = {"kind": "exploration", "source": f"{QUADNET} (docs/overparam.md)"}


def _rotated(lam, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lam = np.asarray(lam, dtype=float)
    P = random_orthogonal(lam.size, rng)
    return lam, P, P @ np.diag(lam) @ P.T


def _mp_closed_form(lam, P, U0, t) -> np.ndarray:
    """The closed form in mpmath with ``4 lambda_max t / ln 10 + 40`` digits (naive formula)."""
    import mpmath as mp

    mp.mp.dps = int(4 * max(max(lam), 0.0) * t / 2.3) + 40
    Pm = mp.matrix(P.tolist())
    A = Pm.T * mp.matrix(U0.tolist())
    tt = mp.mpf(t)
    E = mp.diag([mp.e ** (2 * mp.mpf(x) * tt) for x in lam])
    phi = mp.diag([mp.expm1(4 * mp.mpf(x) * tt) / mp.mpf(x) if x != 0 else 4 * tt for x in lam])
    N = mp.eye(U0.shape[1]) + A.T * phi * A
    return np.array((Pm * (E * A * mp.inverse(N) * A.T * E) * Pm.T).tolist(), dtype=float)


def _rel(a, b) -> float:
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


def _learned_time(T, U0, k, lam_k, t_hi) -> float:
    def f(t):
        return np.linalg.eigvalsh(factorization_flow(T, U0, [t]).Q[0])[::-1][k] - lam_k / 2

    return float(scipy.optimize.brentq(f, 1e-12, t_hi, xtol=1e-15, rtol=1e-15, maxiter=200))


def _flow_problem(ctx: CheckContext) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The target of (a) and (b), eigenvalues 3, 2, 1, 0, 0, -1 in a random basis, and the
    direction ``V`` of the small starts ``eps V``: ``(lam, P, T, V)``."""
    lam, P, T = _rotated([3.0, 2.0, 1.0, 0.0, 0.0, -1.0], ctx.rng("flow"))
    return lam, P, T, ctx.rng("flow-start").standard_normal((6, 4))


def _closed_form(ctx: CheckContext, res: CheckResult, flow: tuple) -> None:
    """(a) the closed-form flow against DOP853, mpmath and the Eckart-Young limit."""
    lam, P, T, V = flow
    ts = np.concatenate([[0.0], np.geomspace(1e-3, 200.0, 120 if ctx.quick else 400)])
    worst, nfev = 0.0, 0
    for eps in ((1e-6,) if ctx.quick else (1e-2, 1e-6, 1e-10)):
        ode = gradient_flow(FrobeniusLoss(T), eps * V, ts, rtol=1e-13, atol=1e-16 * eps)
        cf = factorization_flow(T, eps * V, ts)
        worst = max(worst, max(_rel(a, b) for a, b in zip(cf.Q, ode.Q)))
        nfev += ode.info["nfev"]
    res.add("(a) factorization_flow vs DOP853 gradient_flow (rtol 1e-13), max rel. over t in "
            "[0, 200] (plateaus included)", worst, 1e-10, paper="<= 1e-10", **Q)
    mp_times = (0.5, 5.0, 60.0) if ctx.quick else (0.01, 0.5, 5.0, 30.0, 100.0, 300.0)
    cf = factorization_flow(T, 1e-6 * V, mp_times)
    mp_err = max(_rel(Qc, _mp_closed_form(lam, P, 1e-6 * V, t)) for Qc, t in zip(cf.Q, mp_times))
    res.add(f"(a) factorization_flow vs the closed form in mpmath at t = {mp_times} (max rel.)",
            mp_err, 1e-13, paper="rounding", **Q)
    lam2, P2, T2 = _rotated([3.0, 2.0, 1.0, -0.5, -1.0, -2.0], ctx.rng("limit"))
    long_t = [1e3, 1e8, 1e300]
    cf = factorization_flow(T2, 1e-3 * V, long_t)
    best = P2[:, :3] @ np.diag(lam2[:3]) @ P2[:, :3].T
    lim_err = max(_rel(Qc, best) for Qc in cf.Q)
    finite = bool(np.all(np.isfinite(cf.U)))
    res.add("(a) t = 1e3, 1e8, 1e300: finite, and vs the Eckart-Young limit on the reached span "
            "(max rel.)", lim_err if finite else math.inf, 1e-12, paper="rounding", **Q)


def _learned_times(ctx: CheckContext, res: CheckResult, flow: tuple) -> None:
    """(b) the derived learned times against the measured ones; the staircase figure."""
    lam, P, T, V = flow
    ell = factorization_flow(T, V, [0.0]).info["pivot_norms"]
    epss = [1e-1, 1e-2, 1e-3, 1e-6, 1e-9, 1e-12] if ctx.quick else list(10.0 ** -np.arange(1, 13))
    learned = {"eps": epss, "measured": [], "refined": [], "leading": []}
    for eps in ctx.progress(epss, desc="learned times"):
        row_m, row_r, row_l = [], [], []
        for k in range(3):
            t_hi = (math.log(1 / eps**2) + 20) / (4 * lam[k]) + 5
            row_m.append(_learned_time(T, eps * V, k, lam[k], t_hi))
            row_r.append(math.log(lam[k] / (eps**2 * ell[k] ** 2) - 1) / (4 * lam[k]))
            row_l.append(math.log(1 / eps**2) / (4 * lam[k]))
        learned["measured"].append(row_m)
        learned["refined"].append(row_r)
        learned["leading"].append(row_l)
    tm, tr, tl = (np.asarray(learned[x]) for x in ("measured", "refined", "leading"))
    rel_ref, rel_lead = np.abs(tr - tm) / tm, np.abs(tl - tm) / tm
    i6 = epss.index(1e-6)
    res.add("(b) refined learned time ln(lambda_k/(eps^2 ell_k^2) - 1)/(4 lambda_k) vs measured, "
            "eps = 1e-6, every learned eigenvalue (max rel.)", float(rel_ref[i6].max()), 1e-3,
            paper="<= 1e-3", **Q)
    res.report("(b) ... the same over every eps in [1e-12, 1e-1] (max rel.)",
               float(rel_ref.max()), **EXPL)
    small = np.asarray(epss) <= 1e-3
    x = np.log(np.log(1 / np.asarray(epss)[small]))
    slopes = [float(np.polyfit(x, np.log(rel_lead[small, k]), 1)[0]) for k in range(3)]
    res.add("(b) leading order ln(1/eps^2)/(4 lambda_k): slope of log rel. error vs "
            "log ln(1/eps), eps <= 1e-3 (max |slope + 1| over k)",
            max(abs(s + 1) for s in slopes), 0.1, paper="rel. error ~ 1/ln(1/eps)", **Q)
    res.report("(b) leading-order rel. error at eps = 1e-6 (max over k)", float(rel_lead[i6].max()),
               **EXPL)
    stair_eps = [1e-2, 1e-6, 1e-12]
    grid = np.geomspace(1e-2, 60.0, 200)
    ctx.draw(res, "overparam_staircase", {
        "t": grid, "eps": stair_eps, "lam": lam[:3],
        "eig": [np.linalg.eigvalsh(factorization_flow(T, e * V, grid).Q)[:, ::-1][:, :4]
                for e in stair_eps],
        "refined": [tr[epss.index(e)] for e in stair_eps]})


def _excess(ctx: CheckContext, res: CheckResult, flow: tuple) -> None:
    """(c) the 1/(4t) and 1/(4 eta k) excess laws, structural zeros, the signal rate."""
    lam3, P3, T3 = _rotated([1.0, 0.5, 0.0, 0.0, 0.0, -1.0], ctx.rng("excess"))
    U0 = 0.3 * ctx.rng("excess-start").standard_normal((6, 4))
    Z = P3[:, 2:5]                                        # the zero eigenspace of T
    t_end = 2e3 if ctx.quick else 2e4
    tf = np.concatenate([[0.0], np.geomspace(1.0, t_end, 200)])
    fl = gradient_flow(FrobeniusLoss(T3), U0, tf, rtol=1e-12, atol=1e-15)
    qf = np.array([np.linalg.eigvalsh(Z.T @ Qt @ Z)[::-1][:2] for Qt in fl.Q])
    half = tf.size // 2
    c_flow = (tf[-1] - tf[half]) / (1 / qf[-1] - 1 / qf[half])
    res.add("(c) flow: excess eigenvalues q(t) ~ c/t, secant constant c vs 1/4 "
            f"(t in [{tf[half]:.0f}, {t_end:.0f}], max rel. over the 2 excess eigenvalues)",
            float(np.max(np.abs(4 * c_flow - 1))), 1e-3, paper="c = 1/4", **Q)
    res.report("(c) flow: t q_excess(t) at the last time (should approach 1/4)",
               float(np.max(tf[-1] * qf[-1])), **EXPL)
    eta, steps = 0.05, (10_000 if ctx.quick else 100_000)
    gd = gradient_descent(FrobeniusLoss(T3), U0, eta, steps, record_every=max(steps // 200, 1))
    qd = np.array([np.linalg.eigvalsh(Z.T @ (U @ U.T) @ Z)[::-1][:2] for U in gd.U])
    kk = gd.t
    h = kk.size // 2
    c_gd = eta * (kk[-1] - kk[h]) / (1 / qd[-1] - 1 / qd[h])
    res.add(f"(c) descent (eta = {eta}): q_k ~ c/(eta k), secant constant c vs 1/4 (max rel.)",
            float(np.max(np.abs(4 * c_gd - 1))), 1e-3, paper="c = 1/4", **Q)
    cf = factorization_flow(T3, U0, [1e300])
    U_inf = cf.U[0]
    bs = boundary_spectrum(FrobeniusLoss(T3), U_inf)
    res.add("(c) structural zeros at the rank-2 limit (r = 4, 3 zero eigenvalues): count vs "
            "(r - k) n_0 = 6", abs(bs.structural_zeros - 6), 0, paper="6", **Q)
    lam_pred = min(4 * lam3[1], 2 * (lam3[0] + lam3[1]), 2 * (lam3[1] - lam3[2]))
    res.add("(c) lambda_min of the non-structural (signal) spectrum vs min(4 l_k, 2(l_{k-1} + "
            "l_k), 2(l_k - l_{k+1})) (rel.)", abs(bs.lambda_min_signal - lam_pred) / lam_pred,
            1e-12, paper=f"{lam_pred:g}", **Q)
    fr = flow_decay_rate(FrobeniusLoss(T3), U_inf, seed=ctx.rng("rate"))
    res.add("(c) measured flow rate of the signal part vs lambda_min(signal) (rel.)",
            fr.relative_error, 1e-4, paper="Cheng (2026) §3 rate law, on the signal block", **Q)
    ctx.draw(res, "overparam_excess", {"t": tf[1:], "tq": (tf[1:, None] * qf[1:]),
                                       "k": kk[1:], "kq": eta * kk[1:, None] * qd[1:]})


def _sensing(ctx: CheckContext, res: CheckResult, flow: tuple) -> None:
    """(d) over-parameterised Gaussian sensing at width r = d; the rank staircase."""
    d, rs = 30, 2
    m = 4 * rs * d
    n_seeds = 2 if ctx.quick else 10
    errs, width_errs, ranks, secs = [], [], [], []
    for s in ctx.progress(range(n_seeds), desc="sensing r = d"):
        prob = GaussianSensing.random(d, rs, m, seed=ctx.rng("sensing", s))
        t0 = time.perf_counter()
        out = recover(prob, d, method="lbfgs", init="small", init_scale=1e-6,
                      seed=ctx.rng("sensing-init", s), max_iter=400, reduce_rank=True)
        secs.append(time.perf_counter() - t0)
        Qs = prob.U_star @ prob.U_star.T
        errs.append(relative_error(out.Q, Qs))
        ranks.append(out.history["rank"])
        sv = np.asarray(out.history["width_run"]["singular_values"])
        width_errs.append(float(np.sum(sv[rs:] ** 2) / np.linalg.norm(Qs)))
    n_ok = int(np.sum(np.asarray(errs) <= 1e-8))
    need = math.ceil(0.9 * n_seeds)
    res.add(f"(d) d = {d}, r* = {rs}, width r = d, m = {m} = 4 r* d, small start (1e-6): seeds "
            f"with ||Q - Q*||/||Q*|| <= 1e-8 (of {n_seeds}; need >= {need})", n_ok, need,
            relation=">=", paper=">= 9 of 10", **Q)
    res.report("(d) max relative error over the seeds", float(np.max(errs)), **EXPL)
    res.report("(d) rank found at the largest singular-value gap (min over seeds; r* = 2)",
               float(min(ranks)), passed=all(k == rs for k in ranks), **EXPL)
    res.report("(d) width-r run before the rank cut: idle-column mass sum_{j>r*} sigma_j^2 / "
               "||Q*|| (max; algebraic tail)", float(np.max(width_errs)), **EXPL)
    res.metrics["sensing_seconds"] = secs
    # staircase figure: a planted target with eigenvalues 2 and 0.5; same d, m, width r = d.
    # Early on S ~ -(2 Q* + tr(Q*) I) (population operator, quadnet theory §4): the isotropic
    # part drives every direction, idle ones included, so the steps are close together
    rng = ctx.rng("stair")
    X = rng.standard_normal((m, d))
    W = random_orthogonal(d, rng)[:, :rs]
    star = np.array([2.0, 0.5])
    prob = GaussianSensing(X, np.sum((X @ W) ** 2 * star, axis=1))
    U0s = 1e-6 * rng.standard_normal((d, d))
    g_steps = 1500 if ctx.quick else 4000
    stair = gradient_descent(prob, U0s, 0.02, g_steps, record_every=5)
    eig = np.array([np.linalg.eigvalsh(U @ U.T)[::-1][:6] for U in stair.U])
    res.report("(d) staircase: 3rd eigenvalue / 2nd at the last step", float(eig[-1, 2] / eig[-1, 1]),
               **EXPL)
    ctx.draw(res, "overparam_sensing", {"k": stair.t, "eig": np.maximum(eig, 1e-30),
                                        "star": star})


def _pymanopt(ctx: CheckContext, res: CheckResult, flow: tuple) -> None:
    """(e) pymanopt's optimisers on PSDQuotient through the rank boundary."""
    problems = [("T = diag(3, 1.5, 0.5, -0.5, -1, -1, -2), PSDQuotient(7, 4)",
                 np.diag([3.0, 1.5, 0.5, -0.5, -1.0, -1.0, -2.0]), 7, 4, True)]
    if not ctx.quick:
        _, _, T5 = _rotated([2.0, 1.0, -0.5, -1.0, -1.5, -2.0, -2.5, -3.0], ctx.rng("pyman"))
        problems.append(("rotated T, eigenvalues (2, 1, -0.5, ..., -3), PSDQuotient(8, 5)",
                         T5, 8, 5, True))
        # zero eigenvalues inside the range: a degenerate optimum (structural zeros), where
        # every first-order method converges only algebraically (section 3): reported
        _, _, T6 = _rotated([2.0, 1.0, 0.0, 0.0, -1.0, -1.5, -2.0, -3.0], ctx.rng("pyman0"))
        problems.append(("rotated T, eigenvalues (2, 1, 0, 0, -1, ...), PSDQuotient(8, 5) "
                         "(degenerate optimum)", T6, 8, 5, False))
    table = []
    for label, Tp, dp, rp, graded in problems:
        rows = compare_pymanopt_optimisers(FrobeniusLoss(Tp), dp, rp, seed=ctx.rng("pm", dp))
        table += [dict(row, problem=label) for row in rows]
        by = {(row["optimiser"], row["manifold"]): row for row in rows}
        for opt in ("TrustRegions", "SteepestDescent", "ConjugateGradient"):
            mine, ref = by[(opt, "PSDQuotient")], by[(opt, "PSDFixedRank")]
            if mine["error"] is not None:
                res.add(f"(e) {opt} on {label}: raised {mine['error'][:80]}", math.inf, 1e-10,
                        paper="no exception", **Q)
                continue
            it = (f"iterations {mine['iterations']} vs PSDFixedRank {ref['iterations']} "
                  f"({mine['time_s']:.2f} s vs {ref['time_s']:.2f} s)")
            ratio = mine["iterations"] / max(ref["iterations"] or 1, 1)
            if not graded:
                res.report(f"(e) {opt} on {label}: cost vs Eckart-Young (rel.; PSDFixedRank "
                           f"{abs(ref['rel_cost_error']):.1e}), {it}",
                           abs(mine["rel_cost_error"]), **EXPL)
                continue
            res.add(f"(e) {opt} on {label}: converged cost vs Eckart-Young (rel.)",
                    abs(mine["rel_cost_error"]), 1e-10, paper="<= 1e-10", **Q)
            res.add(f"(e) ... {it}: ratio", ratio, 2.0, paper="<= 2", **Q)
    res.metrics["pymanopt"] = table


#: The parts of the check, in the order they run (and their rows appear).
PARTS = (("a", _closed_form), ("b", _learned_times), ("c", _excess), ("d", _sensing),
         ("e", _pymanopt))


@register("overparam", CLAIM, order=35)
@single_threaded()  # one BLAS thread: CPU seconds, see quadnet._threads
def run(ctx: CheckContext, res: CheckResult) -> None:
    t_start = time.perf_counter()
    flow = _flow_problem(ctx)
    sections = {}
    for key, part in PARTS:
        t_sec = time.perf_counter()
        part(ctx, res, flow)
        sections[key] = time.perf_counter() - t_sec
    res.metrics["section_seconds"] = sections
    res.metrics["seconds"] = time.perf_counter() - t_start


# ----------------------------------------------------------------------------- figures
@figure("overparam_staircase")
def _figure_staircase(f: dict):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(COLUMN_WIDTH, 2.8), layout="constrained")
    t = np.asarray(f["t"], float)
    styles = ["-", "--", ":"]
    for j, (eps, eig) in enumerate(zip(f["eps"], f["eig"])):
        eig = np.maximum(np.asarray(eig, float), 1e-30)
        for i in range(eig.shape[1]):
            ax.semilogx(t, eig[:, i], styles[j % 3], color=f"C{i}",
                        label=rf"$\varepsilon$ = {eps:g}" if i == 0 else None)
        for i, tk in enumerate(f["refined"][j]):
            ax.axvline(tk, color=f"C{i}", lw=0.5, alpha=0.6)
    for lk in f["lam"]:
        ax.axhline(lk / 2, color="grey", lw=0.4)
    ax.set_xlabel("time $t$")
    ax.set_ylabel("eigenvalues of $Q(t)$")
    ax.set_title("incremental learning (closed form); vertical lines: derived learned times",
                 fontsize=8)
    ax.legend(fontsize=7)
    return fig


@figure("overparam_excess")
def _figure_excess(f: dict):
    import matplotlib.pyplot as plt

    fig, axs = plt.subplots(1, 2, figsize=(COLUMN_WIDTH, 2.4), layout="constrained")
    axs[0].semilogx(np.asarray(f["t"], float), np.asarray(f["tq"], float))
    axs[0].axhline(0.25, color="k", ls=":", lw=0.8)
    axs[0].set_xlabel("time $t$")
    axs[0].set_ylabel(r"$t\,q_{\mathrm{excess}}(t)$")
    axs[0].set_title("flow (DOP853)", fontsize=8)
    axs[1].semilogx(np.asarray(f["k"], float), np.asarray(f["kq"], float))
    axs[1].axhline(0.25, color="k", ls=":", lw=0.8)
    axs[1].set_xlabel("step $k$")
    axs[1].set_ylabel(r"$\eta k\,q_{\mathrm{excess}}$")
    axs[1].set_title("descent; dotted: 1/4 (quadnet target)", fontsize=8)
    return fig


@figure("overparam_sensing")
def _figure_sensing(f: dict):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(COLUMN_WIDTH, 2.6), layout="constrained")
    k, eig = np.asarray(f["k"], float), np.asarray(f["eig"], float)
    ax.loglog(k[1:], eig[1:])
    for s in f["star"]:
        ax.axhline(s, color="k", ls=":", lw=0.6)
    ax.set_xlabel("gradient-descent step $k$")
    ax.set_ylabel("top eigenvalues of $Q_k$")
    ax.set_title(r"Gaussian sensing, $d = r = 30$, $r^* = 2$ (eigenvalues 2, 0.5; dotted)."
                 "\n" r"$\mathrm{tr}(Q^*) I$ lifts every direction early; idle ones then decay "
                 "algebraically", fontsize=7)
    return fig
