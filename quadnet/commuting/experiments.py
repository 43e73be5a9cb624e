r"""Experiments beyond the commuting selection laws: pure functions of seeds and parameters.

(a) :func:`limit_distances`: small-initialisation limit vs GLRL and vs the minimum-trace
    interpolant on one instance, over a grid of ``eps`` (random instances from
    :func:`gaussian_symmetric_instance`; rank-one ``x x^T`` instances are built by the harness
    and passed in as losses);
(b) :func:`counterexample_search`, :func:`verify_counterexample`,
    :func:`razin_cohen_dilation` (Razin & Cohen, NeurIPS 2020);
(c) :func:`commutator_path`: rotate one measurement by ``exp(t Omega)`` and measure the
    distance of the flow's limit from the matrix (von Neumann) Bregman projection, which is
    the proved law at ``t = 0`` (quadnet theory §5);
(d) :func:`joint_limit`: factor descent at fixed ``eta`` as ``eps -> 0`` in the commuting case,
    with the exact effective-start identity of :func:`descent_effective_start`.

Everything here is measured; ``docs/noncommuting.md`` says what is proved.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.linalg
from scipy.optimize import linprog

from quadnet._linalg import sym
from quadnet._validation import (
    R_LE_D,
    Array,
    Boolean,
    Converted,
    Integer,
    Optional,
    Real,
    Relation,
    validate_params,
)
from quadnet.commuting.algebra import CommutingSensing, random_commuting_instance
from quadnet.commuting.bregman import bregman_projection, min_trace_solution
from quadnet.commuting.greedy import (
    FACTOR_EPS_MIN,
    _flow_limits,
    greedy_low_rank_learning,
    min_trace_interpolant,
    small_init_limit,
)
from quadnet.exceptions import ConvergenceWarning
from quadnet.geometry import horizontal_dimension
from quadnet.losses import LOSS, MeasurementLoss

__all__ = [
    "commutator_path",
    "commuting_cross_check",
    "counterexample_search",
    "descent_effective_start",
    "fit_power_law",
    "gaussian_symmetric_instance",
    "joint_limit",
    "joint_limits",
    "limit_distances",
    "razin_cohen_dilation",
    "verify_counterexample",
    "von_neumann_projection",
]


_SEED = Integer(0)
_POS = Real(0, None, closed="neither")
_POS_OPT = Optional(_POS)
#: ``log(1/eps)`` of a descent started at ``q0 = eps 1`` in linear coordinates: ``eps`` must
#: be a normal float64 (``exp(-700) ≈ 1e-304``); below, ``q0`` underflows to 0, where the
#: multiplicative descent cannot move and would spend its whole step budget.
_LOG_INV_EPS = Real(0, 700, closed="right")
#: Largest budgets of the experiment loops (Newton iterations, reduced descent steps).
MAX_NEWTON_ITER = 10**4
MAX_STEPS = 10**8


def _y_per_row(key: str):
    def check(args) -> str | None:
        m = args[key].shape[0]
        if args["y"].shape[0] != m:
            return f"y must have shape ({m},), got {args['y'].shape}"
        nu0 = args.get("nu0")
        if nu0 is not None and nu0.shape[0] != m:
            return f"nu0 must have shape ({m},), got {nu0.shape}"
        return None
    return Relation((key, "y"), check, f"``y`` has one entry per row of ``{key}``")


def _eps_list(value, name: str) -> np.ndarray:
    e = np.atleast_1d(Array(ndim=None).convert(value, name, {}))
    if e.ndim != 1 or np.any(e < FACTOR_EPS_MIN) or np.any(e > 1):
        raise ValueError(f"{name} must be a number or a 1-d list of numbers in [1e-150, 1] (the "
                         f"factor dynamics underflow below), got {value!r}")
    return e


_EPS_LIST = Converted(_eps_list, "a finite number in [1e-150, 1] or a non-empty 1-d list of them",
                      bad=[("string", "abc"), ("None", None), ("negative", (-1.0,)),
                           ("empty", ()), ("nan", (np.nan,))])


def _rel(a, b) -> float:
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


@validate_params({"seed": _SEED, "d": Integer(2), "m": Integer(1), "r": Integer(1)},
                 relations=[R_LE_D])
def gaussian_symmetric_instance(seed, d: int = 5, m: int = 6, r: int = 1) -> MeasurementLoss:
    r"""``A_i = (G_i + G_i^T)/2`` with Gaussian ``G_i``, ``y_i = <A_i, Z Z^T>``, ``Z`` Gaussian ``d x r``.

    Underdetermined when ``m < d(d+1)/2``. The planted ``Z Z^T`` is stored as ``Q_star``.

    Examples
    --------
    >>> loss = gaussian_symmetric_instance(0)
    >>> loss.A.shape, round(loss.value(loss.Q_star), 12)
    ((6, 5, 5), 0.0)
    """
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((m, d, d))
    A = sym(G)
    Z = rng.standard_normal((d, r))
    loss = MeasurementLoss(A, np.einsum("iab,ab->i", A, Z @ Z.T))
    loss.Q_star = Z @ Z.T
    return loss


def _power_law_args(args) -> str | None:
    if args["eps"].shape != args["dist"].shape:
        return f"dist must have the shape of eps {args['eps'].shape}, got {args['dist'].shape}"
    if np.any(args["eps"] <= 0):
        return "eps must be > 0 (a log-log fit)"
    if not args["floor"] < args["ceiling"]:
        return f"floor must be < ceiling, got {args['floor']} >= {args['ceiling']}"
    return None


@validate_params({"eps": Array(ndim=1), "dist": Array(ndim=1), "floor": Real(0), "ceiling": _POS},
                 relations=[Relation(("eps", "dist", "floor", "ceiling"), _power_law_args,
                                     "``eps > 0`` and ``dist`` have one shape; "
                                     "``floor < ceiling``")], finite_result=False)
def fit_power_law(eps, dist, *, floor: float = 1e-11, ceiling: float = 0.2) -> dict:
    r"""Least-squares fit ``log dist = log C + alpha log eps`` on the points with
    ``floor < dist < ceiling`` (the asymptotic regime above the solver floor).

    Returns ``{"alpha", "C", "points"}`` (``nan`` with fewer than two points).

    Examples
    --------
    >>> e = np.array([1e-4, 1e-8, 1e-12])
    >>> round(fit_power_law(e, 3 * e**0.5)["alpha"], 9)
    0.5
    """
    e, dd = eps, dist
    keep = (dd > floor) & (dd < ceiling)
    if keep.sum() < 2:
        return {"alpha": math.nan, "C": math.nan, "points": int(keep.sum())}
    a, b = np.polyfit(np.log(e[keep]), np.log(dd[keep]), 1)
    return {"alpha": float(a), "C": float(math.exp(b)), "points": int(keep.sum())}


@validate_params({"loss": LOSS, "d": Integer(1), "eps_grid": _EPS_LIST, "m": Optional(Integer(1)),
                  "glrl_eps": Real(FACTOR_EPS_MIN, 1), "with_sdp": Boolean(), "max_time_factor": _POS_OPT,
                  "progress": Boolean()})
def limit_distances(loss, d: int, eps_grid, *, m: int | None = None, glrl_eps: float = 1e-14,
                    with_sdp: bool = True, max_time_factor: float | None = None,
                    progress: bool = False) -> dict:
    r"""Small-initialisation flow limit vs GLRL and vs the minimum-trace interpolant, per ``eps``.

    The predicted exponent is ``alpha = prod_k (1 - mu_2^(k)/mu_1^(k))`` (GLRL stages), halved
    when the GLRL end point is not isolated among interpolants of its rank
    (``m < n_h = d r - r(r-1)/2``): then the ``sqrt``-size cross terms of the left-over
    directions are not removed by interpolation. ``diagnosis`` names, for this instance, why
    the two limits are still apart at the smallest ``eps`` when they are (``"ok"`` otherwise).
    ``max_time_factor`` caps each flow (and each GLRL stage) at ``max_time_factor / ||S_0||_2``
    time units.
    """
    eps_grid = np.sort(eps_grid)[::-1]
    m = getattr(loss, "m", None) if m is None else m
    scale = max(float(np.linalg.norm(loss.gradient(np.zeros((d, d))), 2)), 1e-300)
    T = None if max_time_factor is None else max_time_factor / scale
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        g = greedy_low_rank_learning(loss, d, eps=glrl_eps, max_stage_time=T)
    r = g.rank
    n_h = horizontal_dimension(d, r) if r else 0   # dim M_r^+ (0 if nothing was learned)
    isolated = m is not None and m >= n_h
    alpha_pred = g.predicted_exponent * (1.0 if isolated else 0.5)
    mt = min_trace_interpolant(loss) if with_sdp else None
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        flows = (_flow_limits(loss, d, eps_grid, max_time=T) if not progress else
                 [small_init_limit(loss, d, float(e), max_time=T, progress=True) for e in eps_grid])
        for eps, res in zip(eps_grid, flows):
            rep = res.report
            rows.append({"eps": float(eps), "dist_glrl": _rel(res.Q, g.Q),
                         "dist_min_trace": _rel(res.Q, mt.Q) if mt else math.nan,
                         "trace": float(np.trace(res.Q)), "status": rep.status,
                         "loss_rel": rep.loss_rel, "excess_mass": rep.excess_mass,
                         "excess_growth": rep.excess_growth, "neg_rel": rep.neg_rel,
                         "rank": rep.rank})
    e = np.array([x["eps"] for x in rows])
    dist = np.array([x["dist_glrl"] for x in rows])
    fit = fit_power_law(e, dist)
    last = rows[-1]
    gaps = [s.gap_ratio for s in g.stages]
    notes = []
    if g.status != "interpolating":
        notes.append(f"GLRL ends at a {g.status} point (loss {g.loss_rel:.1e})")
    if last["status"] != "converged":
        notes.append(f"flow '{last['status']}' at eps = {last['eps']:.0e} (loss "
                     f"{last['loss_rel']:.1e}, escape rate {last['neg_rel']:.1e}, excess "
                     f"x{last['excess_growth']:.3f} per doubling): slow direction")
    if last["dist_glrl"] <= 1e-3:
        why = "; ".join(["ok"] + notes)
    elif notes:
        why = "; ".join(notes)
    elif any(s.added > 1 for s in g.stages) or max(gaps, default=0) > 0.9:
        why = f"degenerate step (mu2/mu1 up to {max(gaps):.3f})"
    elif math.isfinite(fit["alpha"]):
        need = math.exp((math.log(1e-3) - math.log(fit["C"])) / fit["alpha"])
        why = (f"power law eps^{fit['alpha']:.3f} with prefactor {fit['C']:.2g}: "
               f"1e-3 reached only at eps ~ {need:.1e}")
    else:
        why = "no asymptotic regime within the grid"
    return {"rows": rows, "glrl_trace": float(np.trace(g.Q)), "glrl_rank": r,
            "glrl_status": g.status, "gap_ratios": gaps,
            "added": [s.added for s in g.stages], "alpha_pred": alpha_pred,
            "alpha_pred_raw": g.predicted_exponent, "isolated": bool(isolated),
            "alpha_fit": fit["alpha"], "C_fit": fit["C"], "fit_points": fit["points"],
            "min_trace": mt.trace if mt else math.nan,
            "min_trace_status": mt.status if mt else "", "diagnosis": why,
            "glrl_Q": g.Q}


# ------------------------------------------------------------------------- (b) counterexamples
@validate_params({"seeds": Array(ndim=1), "d": Integer(2), "m": Integer(1), "r": Integer(1)},
                 relations=[R_LE_D])
def counterexample_search(seeds, *, d: int = 5, m: int = 6, r: int = 1) -> list[dict]:
    """GLRL trace vs minimum trace on :func:`gaussian_symmetric_instance` for each seed.

    Sorted by the relative gap ``(tr Q_GLRL - tr Q_mt) / tr Q_mt``, largest first.
    """
    out = []
    for s in seeds:
        loss = gaussian_symmetric_instance(int(s), d, m, r)
        g = greedy_low_rank_learning(loss, d)
        mt = min_trace_interpolant(loss)
        tg = float(np.trace(g.Q))
        out.append({"seed": int(s), "d": d, "m": m, "glrl_trace": tg, "min_trace": mt.trace,
                    "gap_rel": (tg - mt.trace) / mt.trace, "glrl_rank": g.rank,
                    "glrl_status": g.status, "sdp_status": mt.status})
    return sorted(out, key=lambda x: -x["gap_rel"])


@validate_params({"loss": LOSS, "d": Integer(1), "eps_list": _EPS_LIST, "eta": _POS_OPT,
                  "progress": Boolean()})
def verify_counterexample(loss, d: int, eps_list=(1e-3, 1e-6, 1e-9, 1e-12), *,
                          eta: float | None = None, progress: bool = False) -> dict:
    r"""Trace of the descent limit (step ``eta``; default ``0.02 / ||S_0||_2``) from
    ``sqrt(eps) I`` for each ``eps``, of GLRL and of the SDP minimum-trace interpolant."""
    S0 = loss.gradient(np.zeros((d, d)))
    eta = 0.02 / float(np.linalg.norm(S0, 2)) if eta is None else eta
    g = greedy_low_rank_learning(loss, d)
    mt = min_trace_interpolant(loss)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for eps in eps_list:
            res = small_init_limit(loss, d, float(eps), eta=eta, progress=progress)
            tr = float(np.trace(res.Q))
            rows.append({"eps": float(eps), "trace": tr, "gap_rel": (tr - mt.trace) / mt.trace,
                         "status": res.report.status, "loss_rel": res.report.loss_rel,
                         "steps": res.history.get("steps", 0), "rank": res.report.rank})
    tg = float(np.trace(g.Q))
    return {"eta": eta, "rows": rows, "glrl_trace": tg, "glrl_gap_rel": (tg - mt.trace) / mt.trace,
            "glrl_rank": g.rank, "min_trace": mt.trace, "sdp_status": mt.status,
            "sdp_residual": mt.residual}


def razin_cohen_dilation() -> tuple[MeasurementLoss, np.ndarray]:
    r"""Razin & Cohen (NeurIPS 2020) 2 x 2 completion, observed ``W_12 = W_21 = 1``, ``W_22 = 0``,
    as a PSD problem by the dilation ``Q = [[A A^T, A B^T], [B A^T, B B^T]]`` (``W = A B^T``).

    Returns the loss on ``4 x 4`` predictors (measurements of the off-diagonal block) and the
    balanced start direction ``W0 = [I; I]`` (``A_0 = B_0 = sqrt(eps) I``, ``det W(0) > 0``).
    Every interpolant has ``det W = -1``; the minimum trace is ``2 ||W||_* >= 4`` (at
    ``W_11 = 0``); Razin & Cohen prove that from such starts ``|W_11| -> inf`` as the loss
    goes to 0.
    """
    obs = [((0, 1), 1.0), ((1, 0), 1.0), ((1, 1), 0.0)]
    A = np.zeros((3, 4, 4))
    for i, ((a, b), _v) in enumerate(obs):
        A[i, a, 2 + b] = A[i, 2 + b, a] = 0.5
    loss = MeasurementLoss(A, [v for _, v in obs])
    return loss, np.vstack([np.eye(2), np.eye(2)])


# --------------------------------------------------------------------- (c) commuting -> not
@validate_params({"A": Array(ndim=3), "y": Array(ndim=1), "log_eps": Real(-700, 100),
                  "nu0": Optional(Array(ndim=1)), "tol": Real(0, 1, closed="neither"),
                  "max_iter": Integer(1, MAX_NEWTON_ITER), "return_dual": Boolean()},
                 relations=[_y_per_row("A")])
def von_neumann_projection(A, y, log_eps: float, *, nu0=None, tol: float = 1e-13,
                           max_iter: int = 200, return_dual: bool = False):
    r"""``argmin { D(Q, eps I) : <A_i, Q> = y_i }``, ``D`` the von Neumann divergence
    ``tr(Q log Q - Q log Q0 - Q + Q0)``.

    Dual Newton: ``Q(nu) = exp(log(eps) I + sum_i nu_i A_i)`` minimises ``F(nu) = tr Q(nu) -
    y^T nu``; ``grad F = A(Q) - y``; the Hessian ``<A_i, D exp[A_j]>`` from divided differences
    of ``exp`` in the eigenbasis (Daleckii–Krein); damped by a backtracking line search from
    ``nu0`` (default 0; a warm start from a nearby problem is much faster). For commuting
    ``A_i`` this is the Bregman projection of quadnet theory §5, i.e. the proved limit of the
    factor flow. ``return_dual=True`` also returns ``nu``.

    Examples
    --------
    >>> A = np.array([[[1.0, 0.0], [0.0, 2.0]]])
    >>> Q = von_neumann_projection(A, [2.0], math.log(1e-8))
    >>> np.round(np.diag(Q), 4).tolist()
    [0.0001, 0.9999]
    """
    m, d, _ = A.shape
    nu = np.zeros(m) if nu0 is None else nu0.copy()

    def state(nu):
        M = log_eps * np.eye(d) + np.tensordot(nu, A, 1)
        lam, V = np.linalg.eigh(sym(M))
        if lam.max() > 100.0:          # a trial step far out: reject it in the line search
            return lam, V, None, math.inf
        Q = (V * np.exp(lam)) @ V.T
        return lam, V, Q, float(np.exp(lam).sum() - y @ nu)

    lam, V, Q, F = state(nu)
    ynorm = max(np.max(np.abs(y)), 1e-300)
    for _ in range(max_iter):
        g = np.einsum("iab,ab->i", A, Q) - y
        if np.max(np.abs(g)) <= tol * ynorm:
            return (Q, nu) if return_dual else Q
        diff = lam[:, None] - lam[None, :]
        el = np.exp(lam)
        with np.errstate(invalid="ignore", divide="ignore"):
            dd = np.where(np.abs(diff) > 1e-12 * (1 + np.abs(lam[:, None])),
                          (el[:, None] - el[None, :]) / np.where(diff == 0, 1, diff),
                          np.exp(0.5 * (lam[:, None] + lam[None, :])))
        At = np.einsum("ak,iab,bl->ikl", V, A, V, optimize=True)
        H = np.einsum("ikl,jkl,kl->ij", At, At, dd, optimize=True)
        step = np.linalg.solve(H + 1e-300 * np.eye(m), g)
        t, gn = 1.0, float(np.linalg.norm(g))
        while t > 1e-30:
            lam2, V2, Q2, F2 = state(nu - t * step)
            if Q2 is not None and (F2 <= F - 1e-4 * t * (g @ step) or np.linalg.norm(
                    np.einsum("iab,ab->i", A, Q2) - y) < (1.0 - 1e-4 * t) * gn):
                break   # Armijo, or (in rounding, near the optimum) a smaller gradient
            t *= 0.5
        if Q2 is None:
            break
        nu, lam, V, Q, F = nu - t * step, lam2, V2, Q2, F2
    raise RuntimeError("von_neumann_projection: Newton did not converge")


@validate_params({"seed": _SEED, "ts": Array(ndim=1), "d": Integer(2), "m": Integer(2),
                  "eps": Real(FACTOR_EPS_MIN, 1), "progress": Boolean()})
def commutator_path(seed, ts, *, d: int = 4, m: int = 3, eps: float = 1e-4,
                    progress: bool = False) -> dict:
    r"""Rotate ``A_0`` of a commuting instance by ``R(t) = exp(t Omega)`` (``Omega`` random skew,
    ``||Omega||_F = 1``) and compare the factor-flow limit from ``sqrt(eps) I`` with the
    von Neumann Bregman projection of ``eps I`` (:func:`von_neumann_projection`).

    ``y`` is kept consistent with the planted ``Q* = V diag(q*) V^T`` (positive definite), so
    every ``t`` is feasible. Returns per ``t``: the relative commutator
    ``max_j ||[A_0(t), A_j]||_F / (||A_0|| ||A_j||)``, the deviation
    ``||Q_flow - Q_vN|| / ||Q_vN||``; the power laws deviation ~ C commutator^p and
    |trace gap| ~ commutator^p_tr fitted where the deviation is below 0.1.
    """
    rng = np.random.default_rng([seed, 7003])
    V = np.linalg.qr(rng.standard_normal((d, d)))[0]
    spec = rng.standard_normal((m, d))
    qstar = rng.uniform(0.5, 1.5, d)
    As0 = np.einsum("ak,ik,bk->iab", V, spec, V)
    Om = rng.standard_normal((d, d))
    Om = Om - Om.T
    Om /= np.linalg.norm(Om)
    Qs = (V * qstar) @ V.T
    nu = bregman_projection(spec, spec @ qstar, np.full(d, eps)).nu   # exact at t = 0
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for t in ts:
            R = scipy.linalg.expm(float(t) * Om)
            As = As0.copy()
            As[0] = R @ As0[0] @ R.T
            As[0] = sym(As[0])
            y = np.einsum("iab,ab->i", As, Qs)
            loss = MeasurementLoss(As, y)
            n = np.linalg.norm(As, axis=(1, 2))
            comm = max(float(np.linalg.norm(As[0] @ As[j] - As[j] @ As[0]) / (n[0] * n[j]))
                       for j in range(1, m))
            res = small_init_limit(loss, d, eps, progress=progress)
            Qv, nu = von_neumann_projection(As, y, math.log(eps), nu0=nu, return_dual=True)
            rows.append({"t": float(t), "commutator": comm, "deviation": _rel(res.Q, Qv),
                         "status": res.report.status, "trace_flow": float(np.trace(res.Q)),
                         "trace_vn": float(np.trace(Qv))})
    c = np.array([x["commutator"] for x in rows])
    dev = np.array([x["deviation"] for x in rows])
    dtr = np.array([abs(x["trace_flow"] - x["trace_vn"]) / x["trace_vn"] for x in rows])
    keep = (c > 0) & (dev > 1e-10) & (dev < 0.1)
    fit = np.polyfit(np.log(c[keep]), np.log(dev[keep]), 1) if keep.sum() >= 2 else (math.nan,) * 2
    keep_t = keep & (dtr > 1e-12)
    p_tr = (float(np.polyfit(np.log(c[keep_t]), np.log(dtr[keep_t]), 1)[0])
            if keep_t.sum() >= 2 else math.nan)
    return {"rows": rows, "exponent": float(fit[0]), "prefactor": float(math.exp(fit[1])),
            "trace_exponent": p_tr, "eps": eps, "d": d, "m": m}


# ------------------------------------------------------------------ (d) joint (eta, eps) limit
@validate_params({"spectra": Array(ndim=2), "y": Array(ndim=1), "eta": _POS,
                  "log_inv_eps": _LOG_INV_EPS,
                  "max_steps": Integer(1, MAX_STEPS), "rtol": Real(0, 1, closed="neither")},
                 relations=[_y_per_row("spectra")])
def descent_effective_start(spectra, y, eta: float, log_inv_eps: float, *,
                            max_steps: int = 200_000, rtol: float = 1e-13) -> dict:
    r"""Factor descent in spectral coordinates from ``q0 = eps 1`` and its exact selection law.

    ``log q_{k+1} = log q_k + 2 log|1 - 2 eta g_k|`` (quadnet theory §5). Writing
    ``2 log|1 - 2 eta g| = -4 eta g + b(eta g)`` with ``b(x) = 2 log|1 - 2x| + 4x = -4x^2 + ...``
    and ``g_k = A^T (A q_k - y)/m in range(A^T)``, the limit satisfies
    ``log q_inf = log q0 + beta + A^T nu`` with ``beta = sum_k b(eta g_k)`` and ``A q_inf = y``:
    it is *exactly* the Bregman projection of the effective start ``q0 * exp(beta)`` (derived
    here; the flow is ``beta = 0``). As ``eps -> 0`` at fixed ``eta``, ``beta ~ -kappa log(1/eps)``
    (the plateaus last ``~ log(1/eps)/eta`` steps), so the limit tends to the *weighted*
    minimum-trace point ``argmin {(1 + kappa)^T q : A q = y, q >= 0}``, which is the
    minimum-trace point only while ``kappa(eta)`` keeps its LP vertex optimal.

    Returns ``q``, ``beta``, ``kappa = -beta / log(1/eps)``, ``steps``, ``residual``.
    """
    return _descent_cells(spectra, y, np.array([float(eta)]), np.array([float(log_inv_eps)]),
                          max_steps, rtol)[0]


def _descent_cells(A, y, eta, L, max_steps, rtol) -> list[dict]:
    """:func:`descent_effective_start` of ``B`` cells ``(eta_b, L_b)`` on one instance, stepped
    together: row ``b`` of the ``B x d`` state follows its own recursion and leaves the batch
    at its own stopping step, so each cell takes the steps it would take alone (the products
    are batched, so the last bits may differ from one cell at a time)."""
    m, d = A.shape
    yn = max(float(np.max(np.abs(y))), 1e-300)
    tol = rtol * yn
    Z, beta = np.repeat(-L[:, None], d, axis=1), np.zeros((L.size, d))
    steps = np.full(L.size, max_steps)
    idx, z, bt = np.arange(L.size), Z.copy(), beta.copy()    # the cells still running
    ce = (2.0 * eta / m)[:, None]
    q = np.exp(z)
    for k in range(1, max_steps + 1):
        r = q @ A.T - y
        done = np.max(np.abs(r), axis=1) <= tol
        if done.any():
            Z[idx[done]], beta[idx[done]], steps[idx[done]] = z[done], bt[done], k
            keep = ~done
            idx, z, bt, ce, r = idx[keep], z[keep], bt[keep], ce[keep], r[keep]
            if not idx.size:
                break
        x = ce * (r @ A)                       # = 2 eta g, one row per cell
        step = 2.0 * np.log(np.abs(1.0 - x))
        z += step
        bt += step + 2.0 * x
        if not z.max() <= 230.0:
            bad = idx[int(np.argmax(np.max(z, axis=1)))]
            raise ValueError(f"descent diverged at step {k} with eta = {eta[bad]:g}")
        q = np.exp(z)
    Z[idx], beta[idx] = z, bt
    out = []
    for b in range(L.size):
        qb = np.exp(Z[b])
        res = float(np.max(np.abs(A @ qb - y)) / yn)
        out.append({"q": qb, "beta": beta[b], "kappa": -beta[b] / L[b], "steps": int(steps[b]),
                    "residual": res, "converged": bool(res <= 1e-10)})
    return out


def _weighted_lp(A, y, w) -> np.ndarray:
    sol = linprog(w, A_eq=A, b_eq=y, bounds=[(0, None)] * A.shape[1], method="highs")
    if sol.status != 0:
        raise RuntimeError(f"weighted LP failed: {sol.message}")
    return np.asarray(sol.x, float)


def _list_of(item, what: str) -> Converted:
    """A number or a non-empty 1-d list of numbers, each accepted by the constraint ``item``."""
    def convert(value, name: str) -> np.ndarray:
        e = np.atleast_1d(Array(ndim=None).convert(value, name, {}))
        if e.ndim != 1 or e.size == 0:
            raise ValueError(f"{name} must be a number or a non-empty 1-d list of {what}, "
                             f"got {value!r}")
        return np.array([item.convert(float(v), f"{name}[{i}]", {}) for i, v in enumerate(e)])
    return Converted(convert, f"a number or a non-empty 1-d list of {what}",
                     bad=[("string", "abc"), ("empty", ()), ("nan", (np.nan,)),
                          ("nested", ((1.0,),))])


@validate_params({"eta_scale": _POS, "log_inv_eps": _LOG_INV_EPS, "instance_seed": _SEED,
                  "d": Integer(2),
                  "m": Integer(1)})
def joint_limit(eta_scale: float, log_inv_eps: float, instance_seed: int, *, d: int = 24,
                m: int = 6) -> dict:
    r"""One ``(eta, eps)`` cell of the commuting joint limit on :func:`random_commuting_instance`.

    ``eta = eta_scale / max_j |g0_j|`` with ``g0 = -A^T y / m`` the gradient at ``Q = 0``
    (``eta_scale < 1`` keeps ``|1 - 2 eta g0| < 1`` on the growing coordinates). Reports the
    distance of the descent limit from the minimum-trace point, the error of the effective-start
    identity (Bregman projection of ``eps exp(beta)``; exact, so at rounding level), and the
    weighted-LP prediction of the ``eps -> 0`` limit at this ``eta`` with its distance.
    :func:`joint_limits` computes a grid of cells at once.
    """
    return _joint_grid([eta_scale], [log_inv_eps], instance_seed, d, m)[0][0]


@validate_params({"eta_scales": _list_of(_POS, "step scales > 0"),
                  "log_inv_eps": _list_of(_LOG_INV_EPS, "log(1/eps) in (0, 700]"),
                  "instance_seed": _SEED, "d": Integer(2), "m": Integer(1)})
def joint_limits(eta_scales, log_inv_eps, instance_seed: int, *, d: int = 24,
                 m: int = 6) -> list[list[dict]]:
    r"""The grid ``[[joint_limit(e, L, instance_seed) for L in log_inv_eps] for e in eta_scales]``.

    All cells share the instance, so its minimum-trace point is solved once, and the descents
    of all cells run as one batched recursion (each cell stops at its own step, as alone); the
    results agree with :func:`joint_limit` cell by cell to rounding.

    Examples
    --------
    >>> grid = joint_limits([0.1, 0.4], [8.0], 0, d=6, m=2)
    >>> len(grid), len(grid[0]), all(c["converged"] for row in grid for c in row)
    (2, 1, True)
    """
    return _joint_grid(eta_scales, log_inv_eps, instance_seed, d, m)


def _joint_grid(eta_scales, Ls, instance_seed, d, m) -> list[list[dict]]:
    inst = random_commuting_instance(instance_seed, d, m)
    A, y = inst["spectra"], inst["y"]
    g0 = -A.T @ y / m
    etas = [float(e) / float(np.max(np.abs(g0))) for e in eta_scales]
    cells = [(e, es, float(L)) for e, es in zip(etas, eta_scales) for L in Ls]
    outs = _descent_cells(A, y, np.array([c[0] for c in cells]), np.array([c[2] for c in cells]),
                          200_000, 1e-13)
    mt = min_trace_solution(A, y).q
    flat = []
    for (eta, eta_scale, L), out in zip(cells, outs):
        q = out["q"]
        br = bregman_projection(A, y, log_q0=np.full(d, -L) + out["beta"])
        lp = _weighted_lp(A, y, 1.0 + out["kappa"])
        flat.append({"eta": eta, "eta_scale": float(eta_scale), "log_inv_eps": L,
                     "dist_min_trace": _rel(q, mt), "identity_error": _rel(q, br.q),
                     "dist_weighted_lp": _rel(q, lp), "lp_vs_min_trace": _rel(lp, mt),
                     "kappa_spread": float(np.ptp(out["kappa"])), "steps": out["steps"],
                     "residual": out["residual"], "converged": out["converged"],
                     "trace": float(q.sum()), "min_trace": float(mt.sum())})
    k = len(Ls)
    return [flat[i:i + k] for i in range(0, len(flat), k)]


@validate_params({"seed": _SEED, "d": Integer(2), "m": Integer(1), "eps": _EPS_LIST})
def commuting_cross_check(seed: int = 0, *, d: int = 5, m: int = 3, eps=(1e-4,)) -> dict:
    r"""The new generic code against the proved commuting laws (quadnet theory §5).

    On :func:`random_commuting_instance` ``(seed, d, m)`` in a random orthogonal basis: GLRL
    vs :func:`quadnet.min_trace_solution`, and, for each ``eps``, :func:`small_init_limit` with
    ``method="factor"`` (the generic factor flow) vs :func:`quadnet.bregman_projection` of
    ``eps 1``, plus the exact reduced path. Relative Frobenius distances (worst over ``eps``).

    Examples
    --------
    >>> out = commuting_cross_check(0, d=3, m=1, eps=(1e-2,))
    >>> out["flow_vs_bregman"] < 1e-8, out["glrl_vs_min_trace"] < 1e-8
    (True, True)
    """
    inst = random_commuting_instance(seed, d, m)
    rng = np.random.default_rng([seed, 7005])
    V = np.linalg.qr(rng.standard_normal((d, d)))[0]
    loss = CommutingSensing(V, inst["spectra"], inst["y"])
    A, y = inst["spectra"], inst["y"]
    g = greedy_low_rank_learning(loss, d)
    mt = loss.to_matrix(min_trace_solution(A, y).q)
    flow, red, status = [], [], []
    for e in np.atleast_1d(np.asarray(eps, dtype=float)):
        res = small_init_limit(loss, d, float(e), method="factor")
        br = loss.to_matrix(bregman_projection(A, y, np.full(d, float(e))).q)
        flow.append(_rel(res.Q, br))
        red.append(_rel(small_init_limit(loss, d, float(e)).Q, br))
        status.append(res.report.status)
    return {"seed": int(seed), "glrl_vs_min_trace": _rel(g.Q, mt),
            "flow_vs_bregman": max(flow), "reduced_vs_bregman": max(red),
            "flow_per_eps": flow, "flow_status": status, "glrl_status": g.status,
            "eps": [float(e) for e in np.atleast_1d(eps)]}
