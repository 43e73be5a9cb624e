r"""Small initialisation for any loss: the limit of factor flow/descent and greedy low-rank learning.

For measurements that commute, the limit of factor gradient flow from ``U_0 = sqrt(eps) I`` is
the Bregman projection of ``eps I`` and, as ``eps -> 0``, the minimum-trace interpolant
(quadnet theory §5, proved in Cheng (2026) "Quotient Dynamics, Effective Curvature, and
Implicit Bias in Positive Quadratic Networks"). For general measurements that paper claims
nothing. Li, Luo & Lyu (ICLR 2021) "Towards Resolving the Implicit Bias of Gradient Descent for
Matrix Factorization: Greedy Low-Rank Learning" show that, under non-degeneracy assumptions,
gradient flow from an infinitesimal start follows *greedy low-rank learning* (GLRL): from
``Q = 0``, add the top eigenvector of ``-grad ell(Q)`` at a tiny scale, run the flow at the new
width to a stationary point, repeat. This module computes both sides:

* :func:`small_init_limit`: the limit of factor flow (``eta=None``) or of factor descent with
  step ``eta`` from ``sqrt(eps) W`` (``W = I`` by default) with an honest convergence report
  (residual, gradient, and the excess directions, which may decay only algebraically);
* :func:`greedy_low_rank_learning`: the GLRL path and its end point;
* :func:`min_trace_interpolant`: ``argmin {tr Q : A(Q) = y, Q PSD}`` by a cvxpy SDP, the
  minimum-nuclear-norm candidate of Gunasekar et al. (NeurIPS 2017).

Every comparison between them is a measurement (``docs/noncommuting.md``), not a theorem.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from quadnet._linalg import sym
from quadnet._validation import (
    Boolean,
    CvxpySolver,
    Factor,
    Integer,
    Optional,
    Options,
    Real,
    Relation,
    solve_cvxpy,
    validate_params,
)
from quadnet.commuting.algebra import CommutingSensing
from quadnet.dynamics import WindowedFlow, quadratic_factor_gradients, window_ends
from quadnet.exceptions import ConvergenceWarning, DivergenceError
from quadnet.losses import LOSS

__all__ = [
    "GLRLResult",
    "GLRLStage",
    "LimitReport",
    "MinTraceSDP",
    "SmallInitResult",
    "greedy_low_rank_learning",
    "min_trace_interpolant",
    "small_init_limit",
]


@dataclass(frozen=True)
class LimitReport:
    """How a run towards a limit ended (all relative numbers are scale free).

    ``status``: ``"converged"``, ``"budget"`` (step/time budget used up first) or
    ``"unbounded"`` (loss still falling while ``||Q||`` grows: no finite limit in sight).
    ``loss_rel = ell(Q)/ell(0)``; ``grad_rel = ||grad L(U)||_F / (||S_0||_2 ||U||_F)``;
    ``dQ_rel = ||Q(t) - Q(t/2)||_F / ||Q(t)||_F`` (over the last *doubling* window, so an
    algebraic tail ``~ t^-p`` shows up at its own size, not at the size of one step);
    ``excess_mass``: share of ``tr Q`` in eigen-directions below ``rank_tol * lambda_max``;
    ``excess_growth``: that mass now over its value at ``t/2`` (``> 1``: a saddle is being
    left; ``< 1`` but near 1: algebraic decay). Converged means ``dQ_rel <= qtol``,
    ``grad_rel <= gtol`` and the excess not growing, or an interpolant reached
    (``loss_rel <= 1e-24``, residual ``1e-12`` relative) with a small gradient; at full width
    also ``neg_rel <= gtol``. Or an *algebraic tail*: eigen-directions below ``1e-2 lambda_max``
    falling by >= 10 % over each of the last two doubling windows (a power ``t^-p``) while the
    rest of ``Q`` moved by ``<= qtol``: then the limit is ``Q`` without them, and ``tail_mass``
    (their share of ``tr Q`` now) and ``tail_exponent`` ``p`` are reported. ``"unbounded"`` needs ``||Q||`` increments that do not shrink
    over three doubling windows; ``neg_rel = max(0, -lambda_min(S)) / ||S_0||_2``
    (an escape direction of the full-width problem); ``rank``: numerical rank of ``Q``.
    """

    status: str
    converged: bool
    loss_rel: float
    grad_rel: float
    dQ_rel: float
    excess_mass: float
    excess_growth: float
    neg_rel: float
    rank: int
    elapsed: float
    checks: int
    message: str = ""
    tail_mass: float = 0.0
    tail_exponent: float = math.nan


@dataclass(frozen=True)
class SmallInitResult:
    """Limit of small-initialisation dynamics: ``Q`` (``d x d``), final factor ``U``, report."""

    Q: np.ndarray
    U: np.ndarray | None
    eps: float
    eta: float | None
    method: str
    report: LimitReport
    history: dict = field(default_factory=dict)

    @property
    def converged(self) -> bool:
        return self.report.converged


@dataclass(frozen=True)
class GLRLStage:
    """One GLRL step: the stationary point ``Q`` at width ``rank`` and how it was reached.

    ``mu`` are the leading eigenvalues of ``-grad ell`` at the previous point (``mu[0]`` the
    escape rate of the added direction), ``gap_ratio = mu[1]/mu[0]`` (the next competitor;
    near 1 means the greedy choice is nearly degenerate), ``added`` how many directions were
    added together (a degenerate top eigenvalue adds its whole cluster).
    """

    rank: int
    Q: np.ndarray
    loss_rel: float
    mu: np.ndarray
    gap_ratio: float
    added: int
    report: LimitReport


@dataclass(frozen=True)
class GLRLResult:
    """GLRL end point ``Q`` with ``path`` (the stationary point at each rank) and ``stages``.

    ``status``: ``"interpolating"`` (loss at rounding level), ``"stationary"`` (no negative
    direction of ``grad ell`` left, loss not zero: a minimiser over the PSD cone),
    ``"rank_budget"`` (``max_rank`` reached with a negative direction left) or
    ``"stage_budget"`` (a stage flow did not become stationary within ``max_stage_time``).
    """

    Q: np.ndarray
    U: np.ndarray
    path: list
    stages: list
    status: str
    loss_rel: float
    predicted_exponent: float

    @property
    def rank(self) -> int:
        return self.U.shape[1]


@dataclass(frozen=True)
class MinTraceSDP:
    """``argmin {tr Q : A(Q) = y, Q PSD}``: ``Q``, ``trace``, solver ``status``, ``residual``."""

    Q: np.ndarray
    trace: float
    status: str
    solver: str
    residual: float


# ------------------------------------------------------------------------------ helpers
def _loss_d(args) -> str | None:
    loss, d = args["loss"], args["d"]
    if loss.d is not None and loss.d != d:
        return f"d = {d} but the loss is for {loss.d} x {loss.d} predictors"
    return None


_LOSS_D = Relation(("loss", "d"), _loss_d, "``d`` equals ``loss.d``")
_TOL = Real(0, 1, closed="neither")
#: Relative tolerances of the convergence tests: below the rounding floor they never pass.
_REL_TOL = Real(1e-16, 1, closed="left")
#: ``rtol`` of the factor flows: below ``100 eps`` SciPy clamps it, and the steps shrink
#: without end.
_IVP_RTOL = Real(1e-14, 1e-2)
_POS_OPT = Optional(Real(0, None, closed="neither"))
#: Largest step budget (the default budget is capped at 5e7 too).
MAX_STEPS = 5 * 10**7


#: Smallest ``eps`` of the factor dynamics: ``Q = eps W W^T`` and its products (``~eps^2``)
#: must stay above float64's underflow; the reduced path (log coordinates) takes any ``eps``.
FACTOR_EPS_MIN = 1e-150


def _w_and_method(args) -> str | None:
    W = args["W"]
    reduced = isinstance(args["loss"], CommutingSensing) and W is None and \
        args["method"] != "factor"
    if not reduced and args["eps"] < FACTOR_EPS_MIN:
        return (f"eps = {args['eps']:g} underflows the factor dynamics (Q = eps W W^T, its "
                f"products ~ eps^2); use eps >= {FACTOR_EPS_MIN:g}, or a CommutingSensing loss "
                f"with W = None and method='auto' (exact log coordinates)")
    if W is not None:
        if W.shape[0] != args["d"]:
            return f"W must have shape ({args['d']}, *), got {W.shape}"
        if not np.any(W):
            return "W must not be zero"
    if args["method"] == "reduced" and not (isinstance(args["loss"], CommutingSensing)
                                            and W is None):
        return "method='reduced' needs a CommutingSensing loss and W = None"
    return None


def _max_rank(args) -> str | None:
    k, d = args["max_rank"], args["d"]
    return None if k is None or k <= d else f"max_rank must be <= {d}, got {k}"


def _excess(U: np.ndarray, rank_tol: float) -> tuple[float, int, float]:
    """(excess mass share, numerical rank, trace) from the singular values of ``U``."""
    s2 = np.linalg.svd(U, compute_uv=False) ** 2
    tr = float(s2.sum())
    if tr == 0:
        return 0.0, 0, 0.0
    big = s2 > rank_tol * s2[0]
    return float(s2[~big].sum() / tr), int(big.sum()), tr


class _Monitor:
    """Convergence tests on checkpoints ``(t, U)``: doubling windows, see :class:`LimitReport`."""

    def __init__(self, loss, U0, *, full_width, qtol, gtol, rank_tol, growth_tol,
                 loss_tol=1e-24):
        self.loss, self.loss_tol = loss, loss_tol
        self.full_width = full_width
        self.qtol, self.gtol, self.rank_tol, self.growth_tol = qtol, gtol, rank_tol, growth_tol
        d = U0.shape[0]
        S0 = loss.gradient(np.zeros((d, d)))
        self.scale = max(float(np.linalg.norm(S0, 2)), np.finfo(float).tiny)
        self.loss0 = max(float(loss.value(np.zeros((d, d)))), np.finfo(float).tiny)
        self.points: list[tuple[float, np.ndarray, float, np.ndarray]] = []  # (t, Q, exc, eig)
        self.checks = 0
        self.last: LimitReport | None = None
        self.Q_limit: np.ndarray | None = None

    def check(self, t: float, U: np.ndarray) -> LimitReport:
        self.checks += 1
        Q = U @ U.T
        qn = float(np.linalg.norm(Q))
        exc, rank, _ = _excess(U, self.rank_tol)
        ref = [p for p in self.points if p[0] <= 0.5 * t]
        Qref, exref = (ref[-1][1], ref[-1][2]) if ref else (np.zeros_like(Q), 0.0)
        lam = np.linalg.eigvalsh(Q)
        self.points.append((t, Q, exc, lam))
        dQ = float(np.linalg.norm(Q - Qref)) / qn if qn > 0 else math.inf
        growth = exc / exref if exref > 0 else (1.0 if exc == 0 else math.inf)
        S = self.loss.gradient(Q)
        grad_rel = 2.0 * float(np.linalg.norm(S @ U)) / (self.scale * max(np.linalg.norm(U), 1e-300))
        neg = max(0.0, -float(np.linalg.eigvalsh(S)[0])) / self.scale
        loss_rel = float(self.loss.value(Q)) / self.loss0
        excess_ok = exc <= self.qtol or growth <= 1.0 + self.growth_tol
        ok = dQ <= self.qtol and grad_rel <= self.gtol and excess_ok and bool(ref)
        msg = ""
        if (not ok and bool(ref) and loss_rel <= self.loss_tol and grad_rel <= self.gtol
                and (self.full_width or excess_ok)):
            ok = True
            msg = (f"interpolant reached (ell/ell_0 = {loss_rel:.1e} <= {self.loss_tol:g}); "
                   f"dQ over the last doubling {dQ:.1e}")
        tail_mass, tail_p = 0.0, math.nan
        if not ok and ref:
            ok, tail_mass, tail_p, tmsg = self._algebraic_tail(t, Q, lam, ref[-1], grad_rel)
            msg = tmsg or msg
        if ok and self.full_width and neg > self.gtol:
            ok = False  # U_0 = sqrt(eps) W has full rank: an escape direction of S will grow
            self.Q_limit = None
        status = "converged" if ok else "running"
        if ok and exc > self.qtol and growth < 1.0 - self.growth_tol:
            msg = (f"excess directions still decay (x{growth:.3g} per doubling of t, mass "
                   f"{exc:.2e}): algebraic tail, remaining change <= the excess mass")
        self.last = LimitReport(status, ok, loss_rel, grad_rel, dQ, exc, growth, neg, rank,
                                t, self.checks, msg, tail_mass, tail_p)
        return self.last

    def _algebraic_tail(self, t, Q, lam, ref, grad_rel):
        """Eigen-directions decaying like a power of ``t`` while the rest has converged.

        The tail: eigenvalues ``<= 1e-2 lambda_max`` that fell by >= 10 % over each of the last
        two doubling windows ``[t/4, t/2]``, ``[t/2, t]`` (a power law ``t^-p`` falls by ``2^-p``
        per doubling; an exponential by far more, a frozen direction not at all). If the rest of
        ``Q`` (the core) moved by ``<= qtol`` over the last window, the limit is the core: the tail
        tends to 0. Returns ``(ok, tail mass share, p, message)``.
        """
        older = [p for p in self.points if p[0] <= 0.5 * ref[0]]
        if not older:
            return False, 0.0, math.nan, ""
        lam_r, lam_rr = ref[3], older[-1][3]
        top = max(lam[-1], np.finfo(float).tiny)
        with np.errstate(divide="ignore", invalid="ignore"):
            r1, r2 = lam / lam_r, lam_r / lam_rr
        tail = (lam > 0) & (lam <= 1e-2 * top) & (r1 <= 0.9) & (r2 <= 0.9) & (lam_r > 0)
        if not tail.any():
            return False, 0.0, math.nan, ""
        k = int(np.count_nonzero(tail))
        if not np.all(tail[:k]):          # the tail must be the k smallest eigenvalues
            return False, 0.0, math.nan, ""

        def core(M):
            w, V = np.linalg.eigh(M)
            return (V[:, k:] * w[k:]) @ V[:, k:].T

        Qc = core(Q)
        dQc = float(np.linalg.norm(Qc - core(ref[1]))) / float(np.linalg.norm(Q))
        if dQc > self.qtol or grad_rel > math.sqrt(self.gtol):
            return False, 0.0, math.nan, ""
        p = float(-np.log2(np.max(r1[tail])))
        mass = float(lam[tail].sum() / lam.sum())
        self.Q_limit = Qc
        msg = (f"algebraic tail: {k} direction(s) with {mass:.2e} of tr Q decaying like t^-"
               f"{p:.2f} (per doubling x{2 ** -p:.3f}); core moved {dQc:.1e}; limit = the core")
        return True, mass, p, msg

    def finish(self, budget_msg: str) -> LimitReport:
        rep = self.last
        if rep is None or rep.converged:
            return rep
        status, msg = "budget", budget_msg
        if len(self.points) >= 3:
            t = self.points[-1][0]
            pick = [max((p for p in self.points if p[0] <= f * t), key=lambda p: p[0],
                        default=self.points[0]) for f in (0.25, 0.5, 1.0)]
            n = [np.linalg.norm(p[1]) for p in pick]
            if (n[2] - n[1] > 1e-3 * n[2] and n[2] - n[1] >= n[1] - n[0] > 0
                    and rep.loss_rel < 1e-2):
                status = "unbounded"
                msg = (f"||Q|| keeps growing ({n[1]:.4g} -> {n[2]:.4g}) while the loss falls "
                       f"(ell/ell_0 = {rep.loss_rel:.2e}): no finite limit")
        self.last = rep = replace(rep, status=status, message=msg)
        return rep


#: Largest ``d`` for which the inner loops use the affine factor gradient (its ``d^4`` table
#: and ``d(d+1)/2`` probes; above, the loss's own ``O(m d r)`` gradient costs less).
_AFFINE_MAX_D = 24


def _raw_factor_gradient(loss, d: int):
    """``U -> grad L(U)`` on raw ``d x r`` arrays for the inner loops: the affine form of
    :func:`quadnet.dynamics.quadratic_factor_gradients` when ``ell`` is quadratic in ``Q``
    (no argument checks per call) for ``d <= 24``, else the loss's own validated
    ``factor_gradient``. A :class:`quadnet.CommutingSensing` loss keeps its own formula (its
    exactly diagonal ``S`` in the joint eigenbasis, see :func:`greedy_low_rank_learning`),
    without the checks."""
    if isinstance(loss, CommutingSensing):
        return loss._factor_gradient
    if d > _AFFINE_MAX_D:
        return loss.factor_gradient
    grads = quadratic_factor_gradients(loss, d)
    return loss.factor_gradient if grads is None else grads


def _descend(loss, U, eta, max_steps, check_every, mon, progress, desc):
    from quadnet._progress import tqdm

    grad = _raw_factor_gradient(loss, U.shape[0])
    bar = tqdm(total=max_steps, desc=desc, disable=not progress, leave=False)
    k = 0
    try:
        while k < max_steps:
            n = min(check_every, max_steps - k)
            for i in range(n):
                U = U - eta * grad(U)
                if not np.abs(U).max() <= 1e40:          # also catches NaN
                    raise DivergenceError(f"factor descent diverged at step {k + i + 1} with "
                                          f"eta = {eta:g}; use a smaller step size eta")
            k += n
            bar.update(n)
            if mon.check(float(k), U).converged:
                break
            if k >= check_every * 64:
                check_every *= 2  # doubling windows need only O(log k) checks
    finally:
        bar.close()
    return U, k


#: The integrator of the factor flows: ODEPACK's LSODA (Adams, switching to BDF when the
#: flow turns stiff). Near a limit the slowest direction sets how long the monitor must wait
#: and the fastest the step an explicit pair can take (measured on the budget-capped GLRL
#: stage of a rank-one instance of ``verify beyond``: 43,662 right-hand sides with DOP853,
#: 8,113 with LSODA, the same point). LSODA's local error test is the weighted max norm over
#: the components.
FLOW_METHOD = "LSODA"


def _flow(loss, U, max_time, mon, rtol, progress, desc, grad=None):
    from quadnet._progress import tqdm

    d, r = U.shape
    atol = 1e-3 * rtol * float(np.max(np.abs(U)))
    grad = _raw_factor_gradient(loss, d) if grad is None else grad

    def rhs(_t, Y):
        return -grad(Y.reshape(d, r)).reshape(1, -1)

    flow = WindowedFlow(rhs, 0.0, U.reshape(1, -1), window_ends(0.5 / mon.scale, max_time),
                        rtol=rtol, atol=atol, method=FLOW_METHOD)
    bar = tqdm(total=None, desc=desc, disable=not progress, leave=False, unit="window")
    t = 0.0
    try:
        for t, Y in flow:
            U = Y.reshape(d, r)
            bar.update(1)
            if mon.check(t, U).converged:
                break
    finally:
        bar.close()
    return U, t, flow.nfev


def _budget(eps, scale, width_factor):
    return 4000.0 * width_factor * (1.0 + math.log1p(1.0 / eps)) / scale


# ------------------------------------------------------------------------------ public
@validate_params({"loss": LOSS, "d": Integer(1), "eps": Real(0, 1e100, closed="right"),
                  "eta": _POS_OPT,
                  "W": Optional(Factor(d=None, r=None, full_rank=False)),
                  "method": Options("auto", "factor", "reduced"),
                  "max_steps": Optional(Integer(1, MAX_STEPS)), "max_time": _POS_OPT,
                  "qtol": _REL_TOL, "gtol": _REL_TOL, "rank_tol": _TOL, "growth_tol": _TOL,
                  "rtol": _IVP_RTOL, "check_every": Integer(1), "progress": Boolean()},
                 relations=[_LOSS_D, Relation(("W", "method", "eps"), _w_and_method,
                                              "``W`` is ``d x r`` and nonzero; ``eps >= 1e-150`` "
                                              "on the factor dynamics; "
                                              "``method='reduced'`` needs a CommutingSensing "
                                              "loss and ``W = None``")])
def small_init_limit(loss, d, eps, *, eta=None, W=None, method: str = "auto",
                     max_steps: int | None = None, max_time: float | None = None,
                     qtol: float = 1e-10, gtol: float = 1e-9, rank_tol: float = 1e-8,
                     growth_tol: float = 1e-3, rtol: float = 1e-11, check_every: int = 50,
                     progress: bool = False) -> SmallInitResult:
    r"""The limit of factor flow (``eta=None``) or descent (step ``eta``) from ``U_0 = sqrt(eps) W``.

    Flow ``U' = -2 S U`` (quadnet theory §2) is integrated by LSODA (``rtol``; Adams, switching
    to BDF where the flow is stiff) in windows;
    descent is ``U <- U - eta grad L(U) = (I - 2 eta S) U``. After each window the monitor
    compares ``Q(t)`` with ``Q(t/2)`` (doubling windows), so an algebraically decaying excess
    direction is not mistaken for convergence; it also demands a small gradient and, at full
    width, no growing excess mass along an escape direction of ``S`` (a saddle plateau). See
    :class:`LimitReport`. For :class:`quadnet.CommutingSensing` with ``W = I`` the default
    ``method="auto"`` uses the exact reduced coordinates (quadnet theory §5: mirror flow in log
    coordinates, or ``q <- (1 - 2 eta g)^2 q``), which reach any ``eps > 0``; ``"factor"`` forces
    the generic factor dynamics.

    Parameters
    ----------
    loss : quadnet.Loss
        Any loss of the protocol (rank-one sensing uses its ``O(m d r)`` factor gradient).
    d : int
        Dimension of ``Q``.
    eps : float
        Initial scale, ``Q_0 = eps W W^T``, in ``(0, 1e100]``; at least ``1e-150``
        (``FACTOR_EPS_MIN``) on the factor dynamics, where ``eps^2`` must not underflow.
    eta : float or None
        Step size of descent; ``None`` for the flow.
    W : array (d, r), optional
        Start direction (default ``I_d``, width ``d``).
    method : {"auto", "factor", "reduced"}
    max_steps, max_time : budgets (defaults scale with ``log(1/eps)``).
    qtol, gtol, rank_tol, growth_tol, rtol, check_every : convergence controls.
    progress : bool
        Show a tqdm bar.

    Returns
    -------
    SmallInitResult
        ``.Q`` the limit, ``.report`` a :class:`LimitReport` (``status`` ``"converged"``,
        ``"budget"`` or ``"unbounded"``; a warning is issued unless converged).

    Raises
    ------
    DivergenceError
        Descent blew up (step too large).

    Examples
    --------
    >>> import numpy as np
    >>> from quadnet.losses import MeasurementLoss
    >>> A = np.array([[[1.0, 0.0], [0.0, 2.0]]])          # one measurement q_1 + 2 q_2 = 2
    >>> res = small_init_limit(MeasurementLoss(A, [2.0]), 2, 1e-8, method="factor")
    >>> res.report.status, np.round(np.diag(res.Q), 4).tolist()
    ('converged', [0.0001, 0.9999])
    """
    W0 = np.eye(d) if W is None else W
    reducible = isinstance(loss, CommutingSensing) and W is None
    if reducible and method != "factor":
        return _reduced_limit(loss, eps, eta, max_steps, max_time, qtol)
    U0 = math.sqrt(eps) * W0
    mon = _Monitor(loss, U0, full_width=W0.shape[1] == d, qtol=qtol, gtol=gtol,
                   rank_tol=rank_tol, growth_tol=growth_tol)
    if eta is None:
        T = _budget(eps, mon.scale, 1.0) if max_time is None else max_time
        U, _t, nfev = _flow(loss, U0, T, mon, rtol, progress, "small-init flow")
        hist = {"nfev": nfev}
    else:
        n = (max_steps if max_steps is not None
             else int(min(_budget(eps, mon.scale, 1.0) / eta, MAX_STEPS)))
        U, k = _descend(loss, U0, eta, n, check_every, mon, progress, "small-init descent")
        hist = {"steps": k}
    return _result(mon, U, eps, eta, hist)


def _result(mon, U, eps, eta, hist) -> SmallInitResult:
    """The :class:`SmallInitResult` of a finished run (warns unless converged)."""
    rep = mon.finish("budget used up before the convergence tests passed")
    if not rep.converged:
        warnings.warn(f"small_init_limit (eps = {eps:g}): {rep.status}: {rep.message}",
                      ConvergenceWarning, stacklevel=3)
    Q = U @ U.T if mon.Q_limit is None or not rep.converged else mon.Q_limit
    if mon.Q_limit is not None and rep.converged:
        hist["Q_last"] = U @ U.T
    return SmallInitResult(Q, U, eps, eta, "factor", rep, hist)


def _flow_limits(loss, d, eps_list, *, max_time, rtol: float = 1e-11) -> list[SmallInitResult]:
    """``[small_init_limit(loss, d, eps, max_time=max_time) for eps in eps_list]`` (flow,
    ``W = I``, default tolerances) with the factor flows integrated as one batched ODE.

    Every flow has the same windows (``[t, t + max(tau, t/8)]``, ``tau = 0.5/||S_0||``, capped at
    ``max_time``) and the same monitor as alone; the active flows are one stacked ODE (each
    flow held to its own ``rtol`` and ``atol = 1e-3 rtol max|U_0|``: LSODA's max norm), carried
    through the windows by one solver, and a flow leaves the batch when its monitor converges
    (the others go on from there in a new solver). Falls back to
    one :func:`small_init_limit` per ``eps`` when that takes the reduced route, when ``ell`` is
    not quadratic in ``Q`` (:func:`quadnet.dynamics.quadratic_factor_gradients`), above
    ``d = 24`` (where that function's ``d^4`` table costs more than the loss's own gradient) or
    without a common ``max_time``.
    """
    grads = None if (max_time is None or isinstance(loss, CommutingSensing)
                     or d > _AFFINE_MAX_D) else quadratic_factor_gradients(loss, d)
    if grads is None:
        return [small_init_limit(loss, d, float(e), max_time=max_time, rtol=rtol)
                for e in eps_list]
    U0 = np.stack([math.sqrt(float(e)) * np.eye(d) for e in eps_list])
    mons = [_Monitor(loss, U, full_width=True, qtol=1e-10, gtol=1e-9, rank_tol=1e-8,
                     growth_tol=1e-3) for U in U0]
    atol = 1e-3 * rtol * np.max(np.abs(U0), axis=(1, 2))
    U, nfev = U0.copy(), np.zeros(len(U0), dtype=int)
    active = np.arange(len(U0))
    ends = window_ends(0.5 / mons[0].scale, max_time)
    t = 0.0
    while ends.size and active.size:
        # one solver for the active flows, carried until one of them converges
        k = active.size
        flow = WindowedFlow(lambda _t, Y, k=k: -grads(Y.reshape(k, d, d)).reshape(k, -1), t,
                            U[active].reshape(k, -1), ends, rtol=rtol, atol=atol[active],
                            method=FLOW_METHOD)
        for t, Y in flow:  # ends is not empty: at least one checkpoint sets done
            U[active] = Y.reshape(k, d, d)
            done = np.array([mons[b].check(t, U[b]).converged for b in active])
            if done.any():
                break
        nfev[active] += flow.nfev
        ends = ends[ends > t]
        active = active[~done]
    return [_result(mon, U[b], float(eps_list[b]), None, {"nfev": int(nfev[b])})
            for b, mon in enumerate(mons)]


def _reduced_limit(loss: CommutingSensing, eps, eta, max_steps, max_time, qtol):
    """Exact reduced dynamics of a commuting loss from ``q0 = eps 1`` (log coordinates)."""
    L = -math.log(eps)
    z0 = np.full(loss.d, -L)
    scale = max(float(np.max(np.abs(loss.reduced_gradient(np.zeros(loss.d))))), 1e-300)
    if eta is None:
        T = _budget(eps, scale, 1.0) if max_time is None else max_time
        times = np.concatenate([[0.0], np.geomspace(1e-3 / scale, T, 64)])
        tr = loss.mirror_flow(log_q0=z0, times=times, rtol=1e-12, atol=1e-13)
    else:
        n = (max_steps if max_steps is not None
             else int(min(_budget(eps, scale, 1.0) / eta, MAX_STEPS)))
        tr = loss.gradient_descent(log_q0=z0, eta=eta, steps=n, record_every=max(n // 64, 1),
                                   rtol=1e-14)
    q = tr.q[-1]
    ref = tr.q[np.searchsorted(tr.t, 0.5 * tr.t[-1])]
    dq = float(np.linalg.norm(q - ref) / max(np.linalg.norm(q), 1e-300))
    res = float(np.max(np.abs(loss.spectra @ q - loss.y)) / max(np.max(np.abs(loss.y)), 1e-300))
    g = loss.reduced_gradient(q)
    ok = res <= 1e-10 or dq <= qtol
    rep = LimitReport("converged" if ok else "budget", ok, loss.reduced_loss(q) / max(
        loss.reduced_loss(np.zeros(loss.d)), 1e-300), float(np.max(np.abs(g))) / scale, dq,
        0.0, 1.0, max(0.0, -float(g.min())) / scale, int(np.sum(q > 1e-8 * q.max())),
        float(tr.t[-1]), len(tr.t), "exact reduced coordinates (quadnet theory §5)")
    Q = loss.to_matrix(q)
    return SmallInitResult(Q, None, eps, eta, "reduced", rep,
                           {"q": q, "log_q": tr.info["log_q_final"]})


@validate_params({"loss": LOSS, "d": Integer(1), "eps": Real(FACTOR_EPS_MIN, 1),
                  "max_rank": Optional(Integer(1)),
                  "neg_tol": _TOL, "degeneracy_tol": _TOL, "loss_tol": _TOL, "rtol": _IVP_RTOL,
                  "max_stage_time": _POS_OPT, "progress": Boolean()},
                 relations=[_LOSS_D, Relation(("max_rank",), _max_rank, "``max_rank <= d``")])
def greedy_low_rank_learning(loss, d, *, eps: float = 1e-12, max_rank: int | None = None,
                             neg_tol: float = 1e-9, degeneracy_tol: float = 1e-6,
                             loss_tol: float = 1e-20, rtol: float = 1e-11,
                             max_stage_time: float | None = None,
                             progress: bool = False) -> GLRLResult:
    r"""Greedy low-rank learning (Li, Luo & Lyu, ICLR 2021), the predicted ``eps -> 0`` limit.

    From ``U = []`` (``Q = 0``): let ``S = sym grad ell(Q)``; if ``lambda_max(-S) <=
    neg_tol ||S_0||_2`` stop (no negative direction: ``Q`` is stationary over the PSD cone);
    else append ``sqrt(eps) v`` for the top eigenvector ``v`` of ``-S`` — all eigenvectors
    within ``degeneracy_tol`` (relative) of the top when it is degenerate, as the isotropic
    start of the flow grows them together — and run the factor flow at the new width to a
    stationary point (:func:`small_init_limit`'s monitor). ``path`` holds the stationary point
    at each rank. A :class:`quadnet.CommutingSensing` loss is run in its joint eigenbasis, where
    ``S`` is exactly diagonal: in any other basis rounding seeds off-commutant components that
    the width-``r`` flow amplifies (it then ends on another point of the same minimum-trace
    face, rank-deficient and not in the commutant). With distinct top eigenvalues and non-degenerate stationary points Li, Luo &
    Lyu prove that factor flow from ``sqrt(eps) W`` tends to this path as ``eps -> 0``; the
    flow-vs-GLRL distance at finite ``eps`` is measured, not proved (``docs/noncommuting.md``).

    ``predicted_exponent`` is the heuristic ``prod_k (1 - mu_2^(k)/mu_1^(k))`` over the stages:
    each plateau leaves the losing directions at ``(start)^(1 - mu_2/mu_1)`` (in ``Q``, ``start``
    their size when the plateau began), so the
    distance of the flow's limit from the GLRL point should scale like ``eps`` to this power.

    Parameters
    ----------
    loss : quadnet.Loss
    d : int
    eps : float
        Scale of each added direction, in ``[1e-150, 1]`` (``FACTOR_EPS_MIN``).
    max_rank : int, optional
        Rank budget (default ``d``).
    neg_tol, degeneracy_tol, loss_tol, rtol : tolerances (stopping rule, eigenvalue clusters,
        interpolation, ODE).
    max_stage_time : float, optional
        Cap on each stage's flow time (default: ``4000 (1 + log(1/eps)) / mu_1``).
    progress : bool

    Returns
    -------
    GLRLResult
        ``.Q``, ``.path``, ``.stages``, ``.status`` (``"interpolating"``, ``"stationary"``,
        ``"rank_budget"`` or ``"stage_budget"``; the last two also warn, with a
        :class:`~quadnet.exceptions.ConvergenceWarning`).


    Examples
    --------
    >>> import numpy as np
    >>> from quadnet.losses import FrobeniusLoss
    >>> g = greedy_low_rank_learning(FrobeniusLoss(np.diag([3.0, 1.0, -1.0])), 3)
    >>> g.status, g.rank, np.round(np.diag(g.Q), 6).tolist()
    ('stationary', 2, [3.0, 1.0, 0.0])
    """
    max_rank = d if max_rank is None else max_rank
    if isinstance(loss, CommutingSensing) and not np.array_equal(loss.basis, np.eye(d)):
        # exact structure: run in the joint eigenbasis, where S is exactly diagonal, so the
        # stage flows never leave the commutant through rounding (quadnet theory §5)
        V = loss.basis
        out = greedy_low_rank_learning(
            CommutingSensing(np.eye(d), loss.spectra, loss.y), d, eps=eps, max_rank=max_rank,
            neg_tol=neg_tol, degeneracy_tol=degeneracy_tol, loss_tol=loss_tol, rtol=rtol,
            max_stage_time=max_stage_time, progress=progress)
        rot = lambda Q: V @ Q @ V.T  # noqa: E731
        return replace(out, Q=rot(out.Q), U=V @ out.U, path=[rot(Q) for Q in out.path],
                       stages=[replace(st, Q=rot(st.Q)) for st in out.stages])
    Z = np.zeros((d, d))
    scale = max(float(np.linalg.norm(loss.gradient(Z), 2)), np.finfo(float).tiny)
    loss0 = max(float(loss.value(Z)), np.finfo(float).tiny)
    U = np.zeros((d, 0))
    grad = _raw_factor_gradient(loss, d)
    path, stages, status, expo = [], [], "stationary", 1.0
    while True:
        Q = U @ U.T
        lrel = float(loss.value(Q)) / loss0
        w, V = np.linalg.eigh(-loss.gradient(Q))
        w, V = w[::-1], V[:, ::-1]
        if lrel <= loss_tol:
            status = "interpolating"
            break
        if w[0] <= neg_tol * scale:
            status = "stationary"
            break
        k = int(np.sum(w >= w[0] * (1.0 - degeneracy_tol)))
        if U.shape[1] + k > max_rank:
            status = "rank_budget"
            break
        ratio = float(w[k] / w[0]) if k < d else -math.inf
        expo *= 1.0 - max(ratio, -1.0) if math.isfinite(ratio) else 1.0
        Unew = np.hstack([U, math.sqrt(eps) * V[:, :k]])
        mon = _Monitor(loss, Unew, full_width=False, qtol=1e-11, gtol=1e-9, rank_tol=1e-8,
                       growth_tol=1e-3)
        mon.scale, mon.loss0 = scale, loss0
        T = _budget(eps, max(w[0], 1e-3 * scale), 1.0)
        T = T if max_stage_time is None else min(T, max_stage_time)
        U, _t, _n = _flow(loss, Unew, T, mon, rtol, progress, f"GLRL rank {Unew.shape[1]}",
                          grad)
        rep = mon.finish("stage budget used up before the stationarity tests passed")
        path.append(U @ U.T)
        stages.append(GLRLStage(U.shape[1], path[-1], rep.loss_rel, w[:min(d, 4)].copy(),
                                ratio, k, rep))
        if not rep.converged:
            status = "stage_budget"
            lrel = rep.loss_rel
            break
    if status == "stage_budget":
        warnings.warn(f"greedy_low_rank_learning: the rank-{U.shape[1]} stage did not reach a "
                      f"stationary point within max_stage_time ({stages[-1].report.status}, "
                      f"ell/ell_0 = {lrel:.3e})", ConvergenceWarning, stacklevel=2)
    if status == "rank_budget":
        warnings.warn(f"greedy_low_rank_learning: rank budget {max_rank} reached with loss "
                      f"ell/ell_0 = {lrel:.3e} and a negative direction of size "
                      f"{w[0] / scale:.3e} left", ConvergenceWarning, stacklevel=2)
    return GLRLResult(U @ U.T, U, path, stages, status, lrel, expo)


# -------------------------------------------------------------------------- SDP baseline
def _measurement_rows(loss):
    """The measurement map as rows of an ``(m, d*d)`` matrix, or a rank-one design ``X``."""
    if hasattr(loss, "X") and hasattr(loss, "y"):
        return None, np.asarray(loss.X, float), np.asarray(loss.y, float)
    if isinstance(loss, CommutingSensing):
        return loss.matrices().reshape(loss.m, -1), None, loss.y
    if hasattr(loss, "A") and hasattr(loss, "y"):
        A = np.asarray(loss.A, float)
        return A.reshape(A.shape[0], -1), None, np.asarray(loss.y, float)
    raise TypeError(f"min_trace_interpolant needs linear measurements (a MeasurementLoss, "
                    f"CommutingSensing or rank-one sensing loss), got {type(loss).__name__}")


#: Smallest ``tol`` of :func:`min_trace_interpolant`: the conic solver's feasibility and gap
#: tolerances. Its residuals are float64 sums of O(d^2) terms of size ~||y||, so they cannot get
#: below ~ d^2 eps ~ 1e-14 (relative) on any instance; asked for less, CLARABEL's equilibrated
#: KKT iterations never reach it and its eigen-decomposition of the cone step fails
#: ("Eigval error", a Rust panic that no ``except Exception`` catches).
MIN_TRACE_TOL_MIN = 1e-14


@validate_params({"loss": LOSS, "solver": CvxpySolver(),
                  "tol": Real(MIN_TRACE_TOL_MIN, 1e-2, closed="left")})
def min_trace_interpolant(loss, *, solver: str = "CLARABEL", tol: float = 1e-10) -> MinTraceSDP:
    r"""``argmin { tr Q : <A_i, Q> = y_i, Q PSD }`` by cvxpy (imported lazily).

    The minimum-nuclear-norm interpolant that Gunasekar et al. (NeurIPS 2017) conjectured to be
    the small-initialisation limit (for PSD ``Q``, nuclear norm = trace). Rank-one designs
    (attribute ``X``) use ``sum((X Q) * X, axis=1)``; dense measurements one ``(m, d^2)``
    affine map. ``tol`` sets Clarabel's gap and feasibility tolerances. ``residual`` is
    ``max_i |<A_i, Q> - y_i| / max |y|`` of the returned ``Q`` (symmetrised, negative
    eigenvalues clipped). Interior-point accuracy on rank-deficient optima is about
    ``sqrt(tol)`` in ``Q`` (the trace is accurate to ``~tol``).

    Parameters
    ----------
    loss : MeasurementLoss, CommutingSensing or a rank-one sensing loss
    solver : str
    tol : float

    Returns
    -------
    MinTraceSDP

    Raises
    ------
    TypeError
        The loss exposes no linear measurements.
    ValueError
        The solver found no optimum (status named).

    Examples
    --------
    >>> import numpy as np
    >>> from quadnet.losses import MeasurementLoss
    >>> A = np.array([[[1.0, 0.0], [0.0, 2.0]]])          # one measurement q_1 + 2 q_2 = 2
    >>> sol = min_trace_interpolant(MeasurementLoss(A, [2.0]))
    >>> sol.status, round(sol.trace, 6)
    ('optimal', 1.0)
    """
    import cvxpy as cp

    rows, X, y = _measurement_rows(loss)
    d = X.shape[1] if X is not None else int(round(math.sqrt(rows.shape[1])))
    Q = cp.Variable((d, d), PSD=True)
    if X is not None:
        meas = cp.sum(cp.multiply(X @ Q, X), axis=1)
    else:
        meas = rows @ cp.reshape(Q, (d * d,), order="C")
    prob = cp.Problem(cp.Minimize(cp.trace(Q)), [meas == y])
    kw = {"tol_gap_abs": tol, "tol_gap_rel": tol, "tol_feas": tol} if solver == "CLARABEL" else {}
    solve_cvxpy(prob, solver, "the minimum-trace SDP", "min_trace_interpolant", **kw)
    Qv = sym(Q.value)
    lam, V = np.linalg.eigh(Qv)
    Qv = (V * np.maximum(lam, 0.0)) @ V.T
    m_hat = (np.einsum("ij,jk,ik->i", X, Qv, X) if X is not None else rows @ Qv.reshape(-1))
    res = float(np.max(np.abs(m_hat - y)) / max(np.max(np.abs(y)), 1e-300))
    return MinTraceSDP(Qv, float(np.trace(Qv)), str(prob.status), solver, res)
