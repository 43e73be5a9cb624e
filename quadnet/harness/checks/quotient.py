"""Check ``quotient``: factor dynamics are exact on the quotient (quadnet theory §1–2).

The claims are theorems of Cheng (2026) "Quotient Dynamics, Effective Curvature, and
Implicit Bias in Positive Quadratic Networks"; the tolerances are quadnet's (floating point).

Claims reproduced, on least-squares losses with generic symmetric measurements:

(a) orthogonally equivalent starts ``U0`` and ``U0 R`` (``R`` proper and improper) give the
    same predictor trajectory under gradient descent (1,000 steps) and gradient flow;
(b) the congruence recursion ``Q_{k+1} = C_k Q_k C_k^T`` reproduces factor gradient descent
    at every step, and the flow discretisation error is exactly ``4 eta^2 S_k Q_k S_k``.
    Run free (``Q`` only, no factors), the recursion carries rounding as
    ``delta -> C delta C^T``; its error is reported divided by the computable amplification
    bound ``max_{j<=k} prod_{i=j}^{k-1} ||C_i||_2^2`` (1 when the iteration contracts);
(c) the flow's velocity ``-2 S U`` is horizontal along the trajectory.

The flow tolerance is ``1e3 x rtol`` (``rtol = 1e-13``): solve_ivp's componentwise error
control is not ``O(r)``-invariant, so the two integrations take different steps, each accurate to ``rtol``.
"""

from __future__ import annotations

import numpy as np

from quadnet._threads import single_threaded

from quadnet.dynamics import (
    congruence_recursion,
    congruence_step,
    gradient_descent,
    gradient_flow,
    predictor_flow,
)
from quadnet.geometry.conformance import random_orthogonal
from quadnet.geometry.manifold import PSDQuotient, horizontal_dimension
from quadnet.harness.checks._base import (
    COLUMN_WIDTH, CheckContext, CheckResult, figure, floor_note, register)
from quadnet.losses import MeasurementLoss

CLAIM = "Factor gradient flow/descent are exact on M_r^+ = F_{d,r}/O(r)"


def _instance(d: int, r: int, rng: np.random.Generator):
    """Generic symmetric Gaussian measurements of a rank-r truth, scaled so that the normal
    operator has norm 1 and ``||U*||_2 = 1`` (so ``eta = 0.1`` is a stable step)."""
    n_h = horizontal_dimension(d, r)
    m = 3 * n_h
    A = rng.standard_normal((m, d, d))
    A = (A + A.transpose(0, 2, 1)) / 2
    flat = A.reshape(m, d * d)
    A /= np.sqrt(np.linalg.eigvalsh(flat.T @ flat / m).max())
    U_star = rng.standard_normal((d, r))
    U_star /= np.linalg.norm(U_star, 2)
    y = np.einsum("kij,ij->k", A, U_star @ U_star.T)
    U0 = 0.5 * rng.standard_normal((d, r)) / np.sqrt(d)
    return MeasurementLoss(A, y), U0


def _max_rel(Qa: np.ndarray, Qb: np.ndarray) -> float:
    num = np.linalg.norm(Qa - Qb, axis=(1, 2))
    return float(np.max(num / np.linalg.norm(Qb, axis=(1, 2))))


def _amplification(loss, Qs: np.ndarray, eta: float) -> float:
    """``max_{j <= k} prod_{i=j}^{k-1} ||C_i||_2^2``: the largest factor by which the congruence
    recursion can amplify a perturbation made at one step by any later step (>= 1)."""
    worst = running = 1.0
    for Q in Qs:
        lam = np.linalg.eigvalsh(loss.gradient(Q))
        growth = float(np.max(np.abs(1.0 - 2.0 * eta * lam))) ** 2
        running = max(running, 1.0) * growth
        worst = max(worst, running)
    return worst


#: The configuration of every instance: descent steps and step size, the DOP853 relative
#: tolerance and the time horizon of the flows.
STEPS, ETA, RTOL, HORIZON = 1000, 0.1, 1e-13, 30.0
#: The worst-case measurements (max over the instances), in the order of the rows.
WORST = ("gd_equiv", "flow_equiv", "flow_vs_predictor", "congruence", "congruence_one_step",
         "congruence_split", "horizontality")


def _measure(ctx: CheckContext, i: int, d: int, r: int) -> tuple[dict, dict]:
    """The measurements of instance ``i`` (shape ``d x r``) and its curves (for the figure)."""
    steps, eta, rtol = STEPS, ETA, RTOL
    rng = ctx.rng("quotient", i)
    loss, U0 = _instance(d, r, rng)
    M = PSDQuotient(d, r)
    inst = {"d": d, "r": r, "m": loss.m}
    times = np.linspace(0.0, HORIZON, 61)
    flow = gradient_flow(loss, U0, times, rtol=rtol, atol=1e-15)
    gd = gradient_descent(loss, U0, eta, steps)
    for improper in (False, True):
        R = random_orthogonal(r, rng, improper=improper)
        gd_R = gradient_descent(loss, U0 @ R, eta, steps)
        flow_R = gradient_flow(loss, U0 @ R, times, rtol=rtol, atol=1e-15)
        key = "improper" if improper else "proper"
        inst[f"gd_equiv_{key}"] = _max_rel(gd_R.Q, gd.Q)
        inst[f"flow_equiv_{key}"] = _max_rel(flow_R.Q, flow.Q)
    pf = predictor_flow(loss, U0 @ U0.T, times, rtol=rtol, atol=1e-15)
    inst["flow_vs_predictor"] = _max_rel(flow.Q, pf.Q)
    cong = congruence_recursion(loss, U0 @ U0.T, eta, steps)
    # free running, rounding is propagated as delta -> C delta C^T: the error is
    # tested relative to its first-order amplification bound (dynamics docstring)
    inst["congruence_raw"] = _max_rel(cong.Q, gd.Q)
    inst["amplification"] = _amplification(loss, gd.Q[:-1], eta)
    inst["congruence"] = inst["congruence_raw"] / inst["amplification"]
    one_step = np.stack([congruence_step(Q, loss.gradient(Q), eta) for Q in gd.Q[:-1]])
    inst["congruence_one_step"] = _max_rel(one_step, gd.Q[1:])
    # exact split: Q_{k+1} - [Q_k - 2 eta (S Q + Q S)] = 4 eta^2 S Q S
    Qs = gd.Q
    split, disc = [], []
    for k in range(steps):
        S = loss.gradient(Qs[k])
        SQ = S @ Qs[k]
        flow_part = Qs[k] - 2 * eta * (SQ + SQ.T)
        term = 4 * eta**2 * SQ @ S
        split.append(np.linalg.norm(Qs[k + 1] - flow_part - term) / np.linalg.norm(Qs[k + 1]))
        disc.append(np.linalg.norm(term) / np.linalg.norm(Qs[k + 1]))
    inst["congruence_split"] = float(np.max(split))
    vel = [-loss.factor_gradient(U) for U in flow.U]
    horiz = [np.linalg.norm(M.vertical_projection(U, v)) / np.linalg.norm(v)
             for U, v in zip(flow.U, vel)]
    inst["horizontality"] = float(np.max(horiz))
    inst["final_loss_gd"] = float(gd.loss[-1])
    curves = {"gd": gd, "gd_R": gd_R, "flow": flow, "flow_R": flow_R, "pf": pf, "cong": cong,
              "disc": np.array(disc), "horiz": np.array(horiz), "d": d, "r": r}
    return inst, curves


def _worst_of(inst: dict, key: str) -> float:
    """The measurement ``key`` of an instance (the equivalences: the worse of det = +1, -1)."""
    if key in ("gd_equiv", "flow_equiv"):
        return max(inst[f"{key}_proper"], inst[f"{key}_improper"])
    return inst[key]


def _rows(res: CheckResult, worst: dict, n: int) -> None:
    th = {"kind": "theorem", "source": "Cheng (2026) §1-2"}
    steps, rtol = STEPS, RTOL
    res.add(f"(a) descent: Q(U0) = Q(U0 R), {steps} steps, {n} instances, R in O(r) (det = ±1)",
            worst["gd_equiv"], 1e-12, paper="equal up to rounding", **th)
    res.add(f"(a) flow: Q(U0) = Q(U0 R), DOP853 rtol {rtol:g} (tolerance 1e3 x rtol)",
            worst["flow_equiv"], 1e3 * rtol, paper="equal up to rounding", **th)
    res.add("(a) factor flow projects to the Riemannian flow Q' = -2(SQ + QS)",
            worst["flow_vs_predictor"], 1e3 * rtol, paper="exact projection", **th)
    res.add("(b) Q_{k+1} = C_k Q_k C_k^T at every descent step", worst["congruence_one_step"],
            1e-12, paper="exact recursion", **th)
    res.add(f"(b) free-running recursion vs descent, {steps} steps, / rounding amplification",
            worst["congruence"], 1e-12, paper="exact recursion", **th)
    res.add("(b) Q_{k+1} = Q_k - 2eta(SQ+QS) + 4eta^2 SQS (exact split)",
            worst["congruence_split"], 1e-12, paper="exact discretisation error", **th)
    res.add("(c) flow velocity horizontal: max ||P_v U'|| / ||U'||", worst["horizontality"],
            1e-13, paper="exactly horizontal", **th)


def _figure_payload(f: dict) -> dict:
    """The data of the figure: the gaps between the first instance's curves."""
    def gap(a, b):
        return np.linalg.norm(a.Q - b.Q, axis=(1, 2)) / np.linalg.norm(b.Q, axis=(1, 2))

    return {"d": f["d"], "r": f["r"], "eta": ETA, "rtol": RTOL, "k": f["gd"].t,
            "gap_gd": gap(f["gd_R"], f["gd"]), "gap_cg": gap(f["cong"], f["gd"]),
            "t": f["flow"].t, "gap_fl": gap(f["flow_R"], f["flow"]),
            "gap_pf": gap(f["pf"], f["flow"]), "horiz": f["horiz"], "disc": f["disc"]}


@register("quotient", CLAIM, order=10)
@single_threaded()  # one BLAS thread: CPU seconds, see quadnet._threads
def run(ctx: CheckContext, res: CheckResult) -> None:
    sizes = [(5, 2), (8, 3)] if ctx.quick else [(4, 1), (6, 2), (8, 3), (10, 4), (5, 5), (12, 2)]
    worst = dict.fromkeys(WORST, 0.0)
    per_instance, first = [], None
    for i, (d, r) in enumerate(ctx.progress(sizes, desc="quotient")):
        inst, curves = _measure(ctx, i, d, r)
        for k in WORST:
            worst[k] = max(worst[k], _worst_of(inst, k))
        per_instance.append(inst)
        first = curves if first is None else first
    _rows(res, worst, len(sizes))
    res.metrics.update({"instances": per_instance, "worst": worst, "eta": ETA, "steps": STEPS,
                        "rtol": RTOL, "T": HORIZON})
    if first is not None:
        ctx.draw(res, "quotient_identities", _figure_payload(first))


@figure("quotient_identities")
def _figure(f: dict):
    import matplotlib.pyplot as plt

    floor = 1e-18  # exact zeros (e.g. at k = 0, t = 0) are drawn on this floor, marked
    fig = plt.figure(figsize=(COLUMN_WIDTH, 6.6), layout="constrained")
    sub = fig.subfigures(3, 1, height_ratios=[1.05, 1.05, 0.8])

    def lg(v):
        return np.maximum(np.asarray(v, float), floor)

    ax = sub[0].subplots()
    k = np.asarray(f["k"], float)
    ax.semilogy(k, lg(f["gap_gd"]), label="descent: $U_0$ vs $U_0R$ (det $R=-1$)")
    ax.semilogy(k, lg(f["gap_cg"]), label="congruence recursion vs factor descent")
    ax.axhline(1e-12, color="k", ls="--", lw=0.8, label="tolerance $10^{-12}$")
    floor_note(ax, floor)
    ax.set(xlabel="step $k$", ylabel=r"$\|Q_a-Q_b\|_F/\|Q_b\|_F$", ylim=(floor / 10, 1e-10),
           title=f"(a, b) exact descent identities, d = {f['d']}, r = {f['r']}")
    sub[0].legend(loc="outside lower center", ncol=1)
    ax = sub[1].subplots()
    t = np.asarray(f["t"], float)
    ax.semilogy(t, lg(f["gap_fl"]), label="flow: $U_0$ vs $U_0R$")
    ax.semilogy(t, lg(f["gap_pf"]), label="factor flow vs predictor flow")
    ax.semilogy(t, lg(f["horiz"]), label=r"horizontality $\|P_vU'\|/\|U'\|$")
    ax.axhline(1e3 * f["rtol"], color="k", ls="--", lw=0.8,
               label=f"tolerance $10^3\\times$ rtol = {1e3 * f['rtol']:.0e}")
    floor_note(ax, floor)
    ax.set(xlabel="time $t$ (dimensionless)", ylabel="relative error", ylim=(floor / 10, 1e-8),
           title="(a, c) gradient flow on the quotient")
    sub[1].legend(loc="outside lower center", ncol=2)
    ax = sub[2].subplots()
    ax.semilogy(k[:-1], np.asarray(f["disc"], float), color="#009E73")
    ax.set(xlabel="step $k$", ylabel=r"$\|4\eta^2 S_kQ_kS_k\|_F/\|Q_{k+1}\|_F$",
           title=f"(b) exact discretisation error vs the flow, $\\eta$ = {f['eta']:g}")
    return fig

