r"""Entropy (Bregman) projections and the minimum-trace selection law (quadnet theory §5).

For measurements ``A q = y`` on spectral coordinates ``q >= 0`` (rows ``a_i``, one column per
eigen-direction, or per algebra block with multiplicity ``m_k``) this module computes

* the Bregman projection of a start ``q0 > 0`` (the limit of the entropy mirror flow)

      q_inf = argmin { D(q, q0) : A diag(m) q = y, q >= 0 },
      D(q, q0) = sum_k m_k [ q_k log(q_k / q0_k) - q_k + q0_k ],

  through its smooth convex dual ``F(nu) = sum_k m_k q0_k exp((A^T nu)_k) - y^T nu``, whose
  minimiser gives ``q = q0 * exp(A^T nu)``; and

* the ``eps -> 0`` limit of the projection of ``q0 = eps w``: the minimum-trace interpolant
  ``argmin { sum_k m_k q_k : A diag(m) q = y, q >= 0 }``, ties broken by the weighted entropy
  ``sum_k m_k q_k log(q_k / w_k)`` over the minimum-trace face.

With ``multiplicities = None`` every ``m_k = 1`` (the per-coordinate formulation). The block
formulation with ``m_k`` equal to the block ranks gives the same matrices as the
per-coordinate one with each block's column repeated ``m_k`` times (tested).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.optimize import linprog

from quadnet._docstrings import fill
from quadnet._threads import single_threaded
from quadnet._validation import (
    Array,
    Boolean,
    CvxpySolver,
    Integer,
    Optional,
    Options,
    Real,
    Relation,
    as_array,
    solver_failure,
    validate_params,
)

from quadnet.exceptions import InfeasibleError

__all__ = [
    "BregmanResult",
    "MinTraceResult",
    "bregman_divergence",
    "bregman_projection",
    "bregman_projection_cvxpy",
    "feasible_support",
    "min_trace_solution",
]

#: Parameter entries that several functions below document identically (``{{name}}`` lines).
_DOC = {
    "A_y": """A : array_like, shape (n_meas, d)
    Measurement matrix.
y : array_like, shape (n_meas,)
    Measurements.""",
    "multiplicities": """multiplicities : array_like, shape (d,), optional
    Block ranks ``m_k > 0`` (default all 1).""",
}

#: Exponents above this are treated as overflow (exp(700) ~ 1e304).
_EXP_MAX = 700.0
#: Starts with every ``log q0`` below this use the LP warm start of the dual.
_LP_START_BELOW = -30.0


@dataclass(frozen=True)
class BregmanResult:
    """Output of :func:`bregman_projection`.

    Attributes
    ----------
    q : ndarray, shape (d,)
        ``exp(log_q)``. Entries with ``log_q < -745`` underflow to exactly ``0.0`` in float64
        although they are positive: read ``log_q`` for them (:attr:`underflow` marks them).
    log_q : ndarray, shape (d,)
        ``log q``, finite on ``support`` (``log q = log q0 + A^T nu`` there) and ``-inf``
        off it.
    nu : ndarray, shape (n_meas,)
        The dual variable.
    kkt_residual : float
        ``max(primal, stationarity)``: the primal residual
        ``||A diag(m) q - y||_inf / max(||y||_inf, || |A| diag(m) q ||_inf)`` and the
        stationarity ``|log q - log q0 - A^T nu|`` (rounding only, since ``q`` is built from
        ``nu``).
    iterations : int
        Newton iterations (both runs, when the LP warm start was retried).
    converged : bool
        The residual reached ``tol``, or Newton stopped at the rounding floor of
        ``log q0 + A^T nu`` (``~ 1e-16 max|log q0|``) below 1e-10. ``info["status"]`` is then
        ``"converged"`` or ``"converged (tolerance floor)"``; a result that is not converged
        carries the reason Newton stopped: ``"stagnated"`` (no progress above the floor),
        ``"line_search"``, ``"max_iter"`` or ``"nonfinite"``. The two never disagree.
    support : ndarray of bool, shape (d,)
        The face of the feasible set ``{q >= 0 : A diag(m) q = y}`` the projection lies on:
        the coordinates that are positive at some feasible point (all of them when a strictly
        positive solution exists; :func:`feasible_support` otherwise). The projection is
        positive on exactly these coordinates and ``0`` off them; on them ``q`` may still read
        ``0.0`` by underflow while ``log_q`` stays finite (e.g. from ``q0 = e^-10000``).
    info : dict
        ``start`` (``"zero"`` or ``"lp"``, the dual start), ``primal_residual``,
        ``stationarity_residual``, ``status``.

    Examples
    --------
    >>> import numpy as np
    >>> res = bregman_projection(np.array([[1.0, 1.0]]), np.array([2.0]), np.array([1.0, 1.0]))
    >>> res.converged, res.info["status"], res.q.round(12).tolist(), res.support.tolist()
    (True, 'converged', [1.0, 1.0], [True, True])

    From ``q0 = e^-1000`` one coordinate of the (positive) projection underflows in ``q``:

    >>> res = bregman_projection(np.array([[1.0, 2.0]]), np.array([1.0]),
    ...                          log_q0=np.array([0.0, -1000.0]))
    >>> res.q.tolist(), res.underflow.tolist(), bool(np.isfinite(res.log_q).all())
    ([1.0, 0.0], [False, True], True)
    """

    q: np.ndarray
    log_q: np.ndarray
    nu: np.ndarray
    kkt_residual: float
    iterations: int
    converged: bool
    support: np.ndarray
    info: dict = field(default_factory=dict)

    @property
    def underflow(self) -> np.ndarray:
        """Coordinates on :attr:`support` whose ``q`` is ``0.0`` by float64 underflow
        (``log_q`` finite but below ``-745``): positive in the projection, zero in ``q``."""
        return self.support & (self.q == 0.0)


#: ``info["status"]`` of a converged :class:`BregmanResult`: the residual reached ``tol``, or
#: Newton stopped at the rounding floor of ``log q0 + A^T nu`` (below 1e-10).
CONVERGED_STATUSES = ("converged", "converged (tolerance floor)")


@dataclass(frozen=True)
class MinTraceResult:
    """Output of :func:`min_trace_solution`.

    ``q`` the selected minimum-trace interpolant, ``trace = sum m_k q_k``, ``support`` the
    support of the whole minimum-trace face (a boolean mask), ``face_dimension`` its dimension
    (0: the minimiser is unique and entropy plays no role), ``dual`` an optimal LP dual ``lambda``
    (``A^T lambda <= 1`` with equality on the support).

    Examples
    --------
    >>> import numpy as np
    >>> res = min_trace_solution(np.array([[1.0, 1.0]]), np.array([2.0]))
    >>> round(res.trace, 12), res.face_dimension          # a segment of minimisers
    (2.0, 1)
    """

    q: np.ndarray
    trace: float
    support: np.ndarray
    face_dimension: int
    dual: np.ndarray
    info: dict = field(default_factory=dict)


# ----------------------------------------------------------------------------- validation
def _log_start(q0, log_q0, d: int, name: str = "q0", *, allow_zero: bool = False
               ) -> np.ndarray:
    """``log q0`` from exactly one of ``q0=`` / ``log_q0=`` (the one parser of a start).

    ``q0`` must be ``> 0`` (``>= 0`` with at least one positive entry if ``allow_zero``:
    zero coordinates get ``log q0 = -inf`` and stay zero under the mirror flow).
    """
    if (q0 is None) == (log_q0 is None):
        raise TypeError(f"give exactly one of {name}= or log_{name}=")
    if log_q0 is not None:
        return as_array(log_q0, f"log_{name}", ndim=1, shape=(d,))
    q0 = as_array(q0, name, ndim=1, shape=(d,))
    if allow_zero:
        if np.any(q0 < 0) or not np.any(q0 > 0):
            raise ValueError(f"{name} must be >= 0 with at least one positive entry (zero "
                             f"coordinates stay zero); got min {q0.min():.3g}")
        with np.errstate(divide="ignore"):
            return np.log(q0)
    if np.any(q0 <= 0):
        raise ValueError(f"{name} must be strictly positive (found {int(np.sum(q0 <= 0))} entries "
                         f"<= 0, min {q0.min():.3g}); pass log_{name}= for starts below 1e-308")
    return np.log(q0)


def _mult(multiplicities, d: int) -> np.ndarray:
    """The multiplicities of a checked problem (default all 1)."""
    return np.ones(d) if multiplicities is None else np.asarray(multiplicities, dtype=float)


def _ell(q0, log_q0) -> np.ndarray:
    """``log q0`` of a checked start (exactly one of them given)."""
    if log_q0 is not None:
        return np.asarray(log_q0, dtype=float)
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(q0, dtype=float))


def _check_problem(args) -> str | None:
    """The relation of ``A``, ``y`` and ``multiplicities``: lengths agree, multiplicities > 0."""
    A, y = args["A"], args["y"]
    m, d = A.shape
    if y.shape[0] != m:
        return f"y must have length {m} (the number of rows of A), got {y.shape[0]}"
    mult = args.get("multiplicities")
    if mult is None:
        return None
    if mult.shape[0] != d:
        return f"multiplicities must have length {d} (columns of A), got {mult.shape[0]}"
    if np.any(mult <= 0):
        return f"multiplicities must be positive, got min {mult.min():.3g}"
    return None


def _start_relation(*, allow_zero: bool = False, both: bool = True) -> Relation:
    """The start of a projection: exactly one of ``q0``/``log_q0``, of length ``d``, ``q0 > 0``
    (:func:`_log_start`)."""

    def check(args):
        q0, log_q0 = args["q0"], args.get("log_q0")
        d = args["A"].shape[1]
        if both and (q0 is None) == (log_q0 is None):
            raise TypeError("give exactly one of q0= or log_q0=")
        for name, v in (("q0", q0), ("log_q0", log_q0)):
            if v is not None and v.shape[0] != d:
                return f"{name} must have shape ({d},), got {v.shape}"
        _log_start(q0, log_q0, d, allow_zero=allow_zero)   # q0 > 0 (messages name q0)
        return None

    names = ("q0", "log_q0") if both else ("q0",)
    what = ("exactly one of ``q0`` (entries > 0) and ``log_q0`` is given, of length ``d``"
            if both else "``q0`` has length ``d`` and entries > 0")
    return Relation(names, check, what)


_A = Array(ndim=2)
_Y = Array(ndim=1)
_MULT = Optional(Array(ndim=1))
_PROBLEM = Relation(("A", "y", "multiplicities"), _check_problem,
                    "``len(y)`` is the number of rows of ``A``; ``multiplicities`` has one "
                    "entry > 0 per column")
#: Smallest ``rc_tol`` of :func:`min_trace_solution`: reduced costs carry rounding errors of
#: ~1e-16 of the data scale, so a smaller tolerance misses the minimum-trace face (an
#: outside run found ``rc_tol = 1e-300`` reported a feasible problem as infeasible).
RC_TOL_MIN = 1e-13
#: Largest Newton budget of :func:`bregman_projection` (it converges in tens of iterations; a
#: tolerance below the rounding floor stops as ``"stagnated"``).
MAX_NEWTON_ITER = 10**5


# ------------------------------------------------------------------------------- LP tools
def _farkas(B: np.ndarray, y: np.ndarray) -> np.ndarray:
    """A ``nu`` in the box ``[-1, 1]^m`` maximising ``y^T nu`` subject to ``B^T nu <= 0``."""
    m = B.shape[0]
    res = linprog(-y, A_ub=B.T, b_ub=np.zeros(B.shape[1]), bounds=[(-1.0, 1.0)] * m,
                  method="highs")
    return np.asarray(res.x, dtype=float) if res.x is not None else np.zeros(m)


def _raise_infeasible(B: np.ndarray, y: np.ndarray) -> None:
    nu = _farkas(B, y)
    gap = float(y @ nu)
    viol = float(np.max(B.T @ nu, initial=0.0))
    raise InfeasibleError(
        "A q = y has no solution with q >= 0 (infeasible measurements): Farkas certificate nu "
        f"with max (A^T nu) = {viol:.3g} <= 0 and y^T nu = {gap:.3g} > 0 "
        "(see the exception's .certificate)", nu)


@validate_params({"A": _A, "y": _Y, "multiplicities": _MULT}, relations=[_PROBLEM])
@fill(_DOC)
def feasible_support(A, y, multiplicities=None) -> np.ndarray:
    """The coordinates that are positive at some point of ``{q >= 0 : A diag(m) q = y}``.

    First one LP (HiGHS) asks for a point with every ``q_j >= t > 0``; if there is none, one LP
    on the homogenised cone: maximise ``sum s`` over ``0 <= s <= 1``,
    ``s <= q``, ``A diag(m) q = tau y``, ``q >= 0``, ``tau >= 1``. The cone is closed under
    sums and positive scaling, so every coordinate that can be positive reaches ``s_j = 1``
    and the others are forced to 0: the optimum is a 0/1 vector, read off at 1/2.
    Raises :class:`InfeasibleError` (with a Farkas certificate) if the set is empty.

    Parameters
    ----------
    {{A_y}}
    {{multiplicities}}

    Returns
    -------
    numpy.ndarray of bool, shape (d,)

    Raises
    ------
    quadnet.exceptions.InfeasibleError
        If no ``q >= 0`` solves the system.

    Examples
    --------
    >>> import numpy as np
    >>> feasible_support(np.array([[1.0, 1.0]]), np.array([1.0])).tolist()
    [True, True]
    """
    mult = _mult(multiplicities, A.shape[1])
    B = A * mult
    m, d = B.shape
    # The support is invariant under scaling y and the columns: normalise both.
    cn = np.linalg.norm(B, axis=0)
    Bn = B / np.where(cn > 0, cn, 1.0)
    yn = y / max(np.max(np.abs(y)), np.finfo(float).tiny)
    # 1. Is there a strictly positive solution?  max t s.t. Bn (p + t 1) = yn, p >= 0, 0<=t<=1.
    c = np.zeros(d + 1)
    c[-1] = -1.0
    res = linprog(c, A_eq=np.hstack([Bn, Bn.sum(axis=1, keepdims=True)]), b_eq=yn,
                  bounds=[(0, None)] * d + [(0, 1)], method="highs")
    if res.status == 2:
        _raise_infeasible(B, y)
    if res.status != 0:
        raise RuntimeError(f"feasible_support: HiGHS failed ({res.message})")
    if -res.fun > 1e-9:
        return np.ones(d, bool)
    # 2. The homogenised 0/1 LP; variables [q (d), s (d), tau].
    c = np.concatenate([np.zeros(d), -np.ones(d), [0.0]])
    A_eq = sp.hstack([sp.csr_matrix(Bn), sp.csr_matrix((m, d)), sp.csr_matrix(-yn[:, None])])
    A_ub = sp.hstack([-sp.eye(d), sp.eye(d), sp.csr_matrix((d, 1))])
    bounds = [(0, None)] * d + [(0, 1)] * d + [(1, None)]
    res = linprog(c, A_ub=A_ub.tocsr(), b_ub=np.zeros(d), A_eq=A_eq.tocsr(), b_eq=np.zeros(m),
                  bounds=bounds, method="highs")
    if res.status == 2:
        _raise_infeasible(B, y)
    if res.status != 0:
        raise RuntimeError(f"feasible_support: HiGHS failed ({res.message})")
    return res.x[d:2 * d] > 0.5


# ---------------------------------------------------------------------------- projection
def _dual_value(A, y, mult, ell, nu) -> float:
    z = ell + A.T @ nu
    if z.max() > _EXP_MAX:
        return np.inf
    return float(mult @ np.exp(z) - y @ nu)


def _newton_direction(H: np.ndarray, g: np.ndarray) -> np.ndarray:
    try:
        return -sla.cho_solve(sla.cho_factor(H, lower=True, check_finite=False), g)
    except (np.linalg.LinAlgError, ValueError):
        w, V = np.linalg.eigh(H)
        keep = w > 1e-14 * max(w[-1], np.finfo(float).tiny)
        return -(V[:, keep] @ ((V[:, keep].T @ g) / w[keep]))


def _lp_start(A, y, mult, ell) -> np.ndarray:
    """Dual of the LP ``min sum m (-log q0) q s.t. A diag(m) q = y, q >= 0`` (the ``q0 -> 0``
    limit): ``nu`` with ``A^T nu <= -log q0``, equality on an optimal basis.

    Then ``q = q0 exp(A^T nu) <= 1`` with equality on the basis, so Newton starts with no
    underflow where it matters, a few ``O(1)`` corrections from the answer. Solved in the primal
    form (``m`` equality rows: fast for HiGHS), the duals read from the equality marginals.
    """
    B = A * mult
    # dense, tiny row count: HiGHS's presolve costs more than it saves here (~6x at 50 x 2000)
    res = linprog(-mult * ell, A_eq=B, b_eq=y, bounds=(0, None), method="highs",
                  options={"presolve": False})
    if res.status == 2:  # primal infeasible
        _raise_infeasible(B, y)
    if res.status != 0:
        return np.zeros(A.shape[0])
    return np.asarray(res.eqlin.marginals, dtype=float)


def _newton(A, y, mult, ell, nu, tol, max_iter) -> tuple[np.ndarray, int, float, str]:
    """Globalised Newton on ``F(nu) = sum m exp(ell + A^T nu) - y^T nu``.

    Backtracking (Armijo) line search on ``F``; near the solution, where ``F`` differences drown
    in rounding, a step is also accepted when it decreases ``||grad F||``. Returns the best
    iterate, the iteration count, its relative primal residual and a status: ``"tol"`` (residual
    <= tol), ``"stagnated"`` (no halving of the residual in 4 steps: the rounding floor, when the
    residual is small), ``"line_search"`` or ``"max_iter"``.
    """
    absA = np.abs(A) * mult

    def state(nu):
        z = ell + A.T @ nu
        q = np.exp(np.minimum(z, _EXP_MAX))
        g = (A * mult) @ q - y
        scale = max(np.max(np.abs(y)), np.max(absA @ q), np.finfo(float).tiny)
        return q, g, float(np.max(np.abs(g)) / scale)

    q, g, res = state(nu)
    best, best_nu, stall, it = res, nu, 0, 0
    for it in range(1, max_iter + 1):
        if res <= tol:
            return nu, it - 1, res, "tol"
        with np.errstate(over="ignore", invalid="ignore"):
            H = (A * (mult * q)) @ A.T
            delta = _newton_direction(H, g) if np.all(np.isfinite(H)) else None
        if delta is None or not np.all(np.isfinite(delta)):
            # the dual runs off to infinity (no interior point, e.g. infeasible data): stop and
            # let the caller's feasibility test decide, never return a non-finite iterate
            return best_nu, it, best, "nonfinite"
        slope = float(g @ delta)
        F0 = _dual_value(A, y, mult, ell, nu)
        gnorm = float(np.max(np.abs(g)))
        t = 1.0
        for _ in range(80):
            trial = nu + t * delta
            Ft = _dual_value(A, y, mult, ell, trial)
            if np.isfinite(Ft):
                if Ft <= F0 + 1e-4 * t * slope:
                    break
                _, gt, _ = state(trial)
                if np.max(np.abs(gt)) < (1 - 1e-4 * t) * gnorm and Ft <= F0 + 1e-12 * abs(F0):
                    break
            t *= 0.5
        else:
            return best_nu, it, best, "line_search"
        nu = trial
        q, g, res = state(nu)
        if res < best:
            best_nu = nu
        if res < 0.5 * best:
            stall = 0
        else:
            stall += 1
            if stall >= 4 and min(best, res) < 1e-8:  # early damped phases are not stagnation
                return best_nu, it, min(best, res), "stagnated"
        best = min(best, res)
    return best_nu, it, best, "tol" if best <= tol else "max_iter"


#: A Newton run that stagnates below this relative residual has hit the rounding floor
#: (``~ u max|log q|``); above it, stagnation means trouble (e.g. no interior point).
_FLOOR_OK = 1e-10


#: :func:`bregman_projection` rescales ``y`` (and ``q0`` with it) so that
#: ``max|y| / max|A diag(m)|`` is ~1 when that ratio lies outside
#: ``[Y_RESCALE_BELOW, 1 / Y_RESCALE_BELOW]``.
Y_RESCALE_BELOW = 1e-20


@validate_params({"A": _A, "y": _Y, "q0": Optional(_Y), "log_q0": Optional(_Y),
                  "multiplicities": _MULT, "tol": Real(0, 1, closed="neither"),
                  "max_iter": Integer(1, MAX_NEWTON_ITER), "start": Options("auto", "zero", "lp"),
                  "detect_support": Boolean()},
                 relations=[_PROBLEM, _start_relation()],
                 finite_result=False)   # log_q = -inf off the support is part of the answer
@fill(_DOC)
def bregman_projection(A, y, q0=None, *, log_q0=None, multiplicities=None, tol: float = 1e-14,
                       max_iter: int = 200, start: str = "auto",
                       detect_support: bool = False) -> BregmanResult:
    r"""The Bregman (relative-entropy) projection of ``q0`` onto ``{q >= 0 : A diag(m) q = y}``.

    The selection law of quadnet theory §5: the limit of the entropy mirror flow from ``q0``,

    .. math:: q_\infty = \arg\min \{ D(q, q_0) : A \operatorname{diag}(m)\, q = y,\ q \ge 0 \},
              \quad D(q, q_0) = \sum_k m_k [q_k \log(q_k / q_{0,k}) - q_k + q_{0,k}] .

    Solved on the dual: the minimiser of the smooth convex
    ``F(nu) = sum_k m_k q0_k exp((A^T nu)_k) - y^T nu`` gives ``q = q0 exp(A^T nu)``, with
    ``grad F = A diag(m) q - y`` and ``Hess F = A diag(m q) A^T``; a globalised (line-search)
    Newton method with Cholesky solves of the ``m x m`` Hessian, run with one BLAS thread.

    Parameters
    ----------
    A : array_like, shape (n_meas, d)
        Measurement matrix (rows ``a_i``: spectra of the ``A_i``).
    y : array_like, shape (n_meas,)
        Measurements.
    q0 : array_like, shape (d,), optional
        Strictly positive start (give exactly one of ``q0`` and ``log_q0``).
    log_q0 : array_like, shape (d,), optional
        Its logarithm, for starts below ``1e-308`` (``log_q0 = -1e4`` is fine).
    {{multiplicities}}
    tol : float, default 1e-14
        Target relative primal residual (the stationarity residual is rounding only).
    max_iter : int, default 200
        Newton iteration budget.
    start : {"auto", "zero", "lp"}
        Dual start: ``"auto"`` uses the LP warm start when every ``log q0 < -30``.
    detect_support : bool, default False
        First find the feasible set's support by :func:`feasible_support` (needed when no
        strictly positive solution exists). Done automatically (one LP) if Newton fails, or if
        some coordinate ends below ``1e-6`` of the data scale: a coordinate forced to zero by
        the constraints would otherwise be left at a tiny positive value (the residual at
        ``tol``) and counted in ``support``.

    Returns
    -------
    BregmanResult

    Raises
    ------
    quadnet.exceptions.InfeasibleError
        (a ``ValueError``) if no ``q >= 0`` solves ``A diag(m) q = y``, with a Farkas
        certificate.

    Examples
    --------
    >>> import numpy as np
    >>> res = bregman_projection(np.array([[1.0, 1.0]]), np.array([2.0]), np.array([1.0, 3.0]))
    >>> res.q.round(12).tolist(), res.converged                  # q = q0 / 2
    ([0.5, 1.5], True)
    """
    d = A.shape[1]
    mult, ell = _mult(multiplicities, d), _ell(q0, log_q0)
    top = float(np.max(np.abs(y))) if y.size else 0.0
    amax = float(np.max(np.abs(A) * mult)) if A.size else 0.0
    ratio = top / amax if amax > 0.0 else 0.0
    if top > 0.0 and 0.0 < ratio and not Y_RESCALE_BELOW <= ratio <= 1.0 / Y_RESCALE_BELOW:
        # q(c y; c q0) = c q(y; q0) with the same nu: solve at max|y| / max|A diag(m)| ~ 1
        # (c a power of two, exact), where the dual Newton solve converges; extreme ratios
        # (1e-80, 1e30) did not
        k = math.frexp(ratio)[1]
        out = bregman_projection(A, np.ldexp(y, -k), log_q0=ell - k * math.log(2.0),
                                 multiplicities=multiplicities, tol=tol, max_iter=max_iter,
                                 start=start, detect_support=detect_support)
        log_q = out.log_q + k * math.log(2.0)
        with np.errstate(over="ignore"):
            q = np.ldexp(out.q, k)
        redo = (out.q == 0.0) & np.isfinite(log_q)        # underflowed at the unit scale
        q[redo] = np.exp(log_q[redo])
        return dataclasses.replace(out, q=q, log_q=log_q)
    with single_threaded():   # Newton on an m x m dual: small matrices
        support = feasible_support(A, y, mult) if detect_support else np.ones(d, bool)
        out = _solve_on(A, y, mult, ell, support, tol, max_iter, start)
        if not detect_support and (not out.converged or _near_face(out, A, y, mult)):
            support = feasible_support(A, y, mult)  # raises InfeasibleError with a certificate
            if not support.all():
                out = _solve_on(A, y, mult, ell, support, tol, max_iter, start)
    if not out.converged and out.kkt_residual > 1e-8:
        raise RuntimeError(f"bregman_projection did not converge: relative residual "
                           f"{out.kkt_residual:.3e} after {out.iterations} Newton iterations")
    return out


#: A coordinate whose share ``|a_j|_inf m_j q_j`` of the data scale is below this may be off
#: the feasible set's face (forced to zero at every feasible point, but left at a tiny value by
#: a residual at ``tol``); :func:`bregman_projection` then checks the face by an LP.
_FACE_CHECK_BELOW = 1e-6


def _near_face(out: BregmanResult, A, y, mult) -> bool:
    """Some coordinate is so small that the solve alone cannot tell "positive" from "zero".

    A coordinate ``j`` off the face is certified by a ``w`` with ``A^T w >= 0``,
    ``w^T y = 0`` and ``(A^T w)_j > 0`` (Farkas), so ``q_j <= ||w||_1 ||A q - y||_inf /
    (A^T w)_j``: at a residual of ``tol`` it is tiny but not zero. Underflowed entries count
    as small too (they are positive in ``log_q``; the LP then confirms the full face).
    """
    colmax = np.max(np.abs(A), axis=0) * mult
    share = colmax * out.q
    scale = max(float(np.max(np.abs(y))), float(np.max(share)), np.finfo(float).tiny)
    return bool(np.any(share[out.support] <= _FACE_CHECK_BELOW * scale))


def _solve_on(A, y, mult, ell, support, tol, max_iter, start) -> BregmanResult:
    As, ms, ls = A[:, support], mult[support], ell[support]
    if not support.any():
        if np.any(y != 0):
            _raise_infeasible(A * mult, y)
        d = A.shape[1]
        return BregmanResult(np.zeros(d), np.full(d, -np.inf), np.zeros(A.shape[0]), 0.0, 0,
                             True, support, {"start": "none", "primal_residual": 0.0,
                                             "stationarity_residual": 0.0,
                                             "status": CONVERGED_STATUSES[0]})
    # y = 0: the problem is homogeneous, q(q0 e^c) = e^c q(q0); solve with max log q0 = 0 (no
    # underflow however small q0 is) and shift log q back; nu is unchanged.
    shift = float(ls.max()) if not np.any(y) else 0.0
    ls = ls - shift
    use_lp = start == "lp" or (start == "auto" and ls.max() < _LP_START_BELOW)
    nu0 = _lp_start(As, y, ms, ls) if use_lp else np.zeros(A.shape[0])
    nu, its, res, status = _newton(As, y, ms, ls, nu0, tol, max_iter)
    ok = status == "tol" or (status == "stagnated" and res <= _FLOOR_OK)
    if not ok and not use_lp and start == "auto":
        nu, its2, res, status = _newton(As, y, ms, ls, _lp_start(As, y, ms, ls), tol, max_iter)
        ok = status == "tol" or (status == "stagnated" and res <= _FLOOR_OK)
        its += its2
        use_lp = True
    z = ls + As.T @ nu + shift
    log_q = np.full(A.shape[1], -np.inf)
    log_q[support] = z
    q = np.zeros(A.shape[1])
    q[support] = np.exp(np.minimum(z, _EXP_MAX))
    stat = float(np.max(np.abs(np.log(np.maximum(q[support], np.finfo(float).tiny)) - z)
                        * (q[support] > np.finfo(float).tiny), initial=0.0))
    kkt = max(res, stat)
    # one word for one state: a converged result never carries Newton's stopping reason
    # ("stagnated" at the rounding floor is convergence), an unconverged one always does
    if ok:
        status = CONVERGED_STATUSES[0] if status == "tol" else CONVERGED_STATUSES[1]
    info = {"start": "lp" if use_lp else "zero", "primal_residual": res,
            "stationarity_residual": stat, "status": status}
    return BregmanResult(q, log_q, nu, kkt, its, ok, support, info)


def _divergence_args(args) -> str | None:
    q, q0, mult = args["q"], args["q0"], args["multiplicities"]
    if mult is not None and np.any(mult <= 0):
        return f"multiplicities must be positive, got min {mult.min():.3g}"
    if np.any(q < 0):
        return f"q must be >= 0, got min {q.min():.3g}"
    if np.any(q0 <= 0):
        return f"q0 must be > 0, got min {q0.min():.3g}"
    return None


@validate_params({"q": Array(shape=("d",)), "q0": Array(shape=("d",)),
                  "multiplicities": Optional(Array(shape=("d",)))},
                 relations=[Relation(("q", "q0", "multiplicities"), _divergence_args,
                                     "``q >= 0``, ``q0 > 0``, ``multiplicities > 0``")])
@fill(_DOC)
def bregman_divergence(q, q0, multiplicities=None) -> float:
    r"""The (weighted) relative entropy of ``q`` from ``q0`` (quadnet theory §5).

    .. math:: D(q, q_0) = \sum_k m_k \left[ q_k \log(q_k / q_{0,k}) - q_k + q_{0,k} \right]

    with ``0 log 0 = 0``; ``D >= 0`` with equality iff ``q = q0``.

    Parameters
    ----------
    q : array_like, shape (d,)
        A point with ``q >= 0``.
    q0 : array_like, shape (d,)
        The reference point, ``q0 > 0``.
    {{multiplicities}}

    Returns
    -------
    float
        ``D(q, q0) >= 0``, zero exactly at ``q = q0``.

    Examples
    --------
    >>> import numpy as np
    >>> round(bregman_divergence(np.array([1.0, 0.0]), np.array([1.0, 1.0])), 12)
    1.0
    """
    mult = _mult(multiplicities, q.shape[0])
    pos = q > 0
    xlogx = np.zeros_like(q)
    xlogx[pos] = q[pos] * np.log(q[pos] / q0[pos])
    return float(mult @ (xlogx - q + q0))


# ---------------------------------------------------------------------------- min trace
def _positive_weights(args) -> str | None:
    w = args["weights"]
    d = args["A"].shape[1]
    if w is None:
        return None
    if w.shape[0] != d:
        return f"weights must have shape ({d},), got {w.shape}"
    if np.any(w <= 0):
        return "weights must be strictly positive"
    return None


@validate_params({"A": _A, "y": _Y, "weights": Optional(_Y), "multiplicities": _MULT,
                  "rc_tol": Real(RC_TOL_MIN, 1, closed="left")},
                 relations=[_PROBLEM, Relation(("weights",), _positive_weights,
                                               "``weights`` has one entry > 0 per column")])
@fill(_DOC)
def min_trace_solution(A, y, weights=None, multiplicities=None, *,
                       rc_tol: float = 1e-9) -> MinTraceResult:
    r"""The minimum-trace interpolant: the ``eps -> 0`` limit of the projection of ``eps * weights``.

    The small-initialisation selection law of quadnet theory §5,
    ``argmin { sum_k m_k q_k : A diag(m) q = y, q >= 0 }`` with ties broken by the weighted
    entropy ``sum_k m_k q_k log(q_k / w_k)`` over the minimum-trace face:

    1. LP (HiGHS): ``tau* = min { m^T q : A diag(m) q = y, q >= 0 }`` with an optimal dual
       ``lambda`` and reduced costs ``r = m - diag(m) A^T lambda = m (1 - A^T lambda) >= 0``.
    2. Complementary slackness: every optimal ``q`` vanishes where ``r_k > 0``; conversely every
       feasible ``q`` supported on ``Z = {r_k = 0}`` has ``m^T q = lambda^T y = tau*``. So the
       minimum-trace face is exactly ``{q >= 0 : supp q in Z, A_Z diag(m_Z) q_Z = y}``
       (``r_k / m_k <= rc_tol`` decides ``r_k = 0``).
    3. Its support ``S`` by :func:`feasible_support` (one more LP), its dimension
       ``|S| - rank(A_S)``; if 0 the face is a point, solved exactly; otherwise the weighted
       entropy is minimised on it, which is the Bregman projection of ``w_S`` onto the face
       (``D`` and the entropy differ by the constant trace there), computed by
       :func:`bregman_projection`.

    Parameters
    ----------
    {{A_y}}
    weights : array_like, shape (d,), optional
        Positive weights ``w`` of the start direction (default all 1).
    {{multiplicities}}
    rc_tol : float, default 1e-9
        Relative reduced-cost tolerance in ``[1e-13, 1)`` (``RC_TOL_MIN``).

    Returns
    -------
    MinTraceResult

    Raises
    ------
    quadnet.exceptions.InfeasibleError
        If no ``q >= 0`` interpolates.

    Examples
    --------
    >>> import numpy as np
    >>> res = min_trace_solution(np.array([[1.0, 2.0]]), np.array([2.0]))
    >>> res.q.round(12).tolist(), round(res.trace, 12), res.face_dimension
    ([0.0, 1.0], 1.0, 0)
    """
    d = A.shape[1]
    mult = _mult(multiplicities, d)
    w = np.ones(d) if weights is None else np.asarray(weights, dtype=float)
    B = A * mult
    res = linprog(mult, A_eq=B, b_eq=y, bounds=[(0, None)] * d, method="highs")
    if res.status == 2:
        _raise_infeasible(B, y)
    if res.status != 0:
        raise RuntimeError(f"min_trace_solution: HiGHS failed ({res.message})")
    lam = np.asarray(res.eqlin.marginals, dtype=float)
    reduced = mult * (1.0 - A.T @ lam)
    Z = reduced / mult <= rc_tol
    support = np.zeros(d, bool)
    if Z.any():
        support[Z] = feasible_support(A[:, Z], y, mult[Z])
    AS = A[:, support] * mult[support]
    rank = int(np.linalg.matrix_rank(AS)) if support.any() else 0
    face_dim = int(support.sum()) - rank
    q = np.zeros(d)
    info = {"lp_trace": float(res.fun), "lp_q": np.asarray(res.x, dtype=float),
            "min_reduced_cost_off_face": float(np.min(reduced[~Z] / mult[~Z], initial=np.inf)),
            "max_reduced_cost_on_face": float(np.max(np.abs(reduced[Z] / mult[Z]), initial=0.0))}
    if face_dim == 0:
        q[support] = np.linalg.lstsq(AS, y, rcond=None)[0]
        q = np.maximum(q, 0.0)
        info["method"] = "vertex"
    else:
        br = bregman_projection(A[:, support], y, log_q0=np.log(w[support]),
                                multiplicities=mult[support])
        q[support] = br.q
        info.update(method="entropy", entropy_kkt=br.kkt_residual)
    info["primal_residual"] = float(np.max(np.abs(B @ q - y)) / max(np.max(np.abs(y)), 1e-300))
    return MinTraceResult(q, float(mult @ q), support, face_dim, lam, info)


# ------------------------------------------------------------------------- cvxpy baseline
@validate_params({"A": _A, "y": _Y, "q0": _Y, "multiplicities": _MULT,
                  "solver": CvxpySolver(allow_none=True)},
                 relations=[_PROBLEM, _start_relation(both=False)])
def bregman_projection_cvxpy(A, y, q0, multiplicities=None, solver: str | None = None,
                             **solver_options) -> tuple[np.ndarray, dict]:
    """Independent baseline: the same projection as an exponential-cone program in cvxpy.

    ``min sum m [-entr(q) - q log q0 - q]`` s.t. ``A diag(m) q = y`` (``entr(q) = -q log q``).
    Returns ``(q, info)`` with the solver name and status. Raises ``ImportError`` without cvxpy.

    Examples
    --------
    >>> import numpy as np
    >>> q, info = bregman_projection_cvxpy(np.array([[1.0, 1.0]]), np.array([2.0]),
    ...                                    np.array([1.0, 3.0]))       # doctest: +SKIP
    >>> bool(np.allclose(q, [0.5, 1.5], atol=1e-6))                    # doctest: +SKIP
    True
    """
    import cvxpy as cp

    mult, ell = _mult(multiplicities, A.shape[1]), _ell(q0, None)
    q = cp.Variable(A.shape[1])
    obj = cp.sum(cp.multiply(mult, -cp.entr(q) - cp.multiply(ell, q) - q))
    prob = cp.Problem(cp.Minimize(obj), [(A * mult) @ q == y])
    try:
        prob.solve(solver=solver, **solver_options)
    except cp.error.SolverError as exc:
        raise solver_failure(solver, exc, "the exponential-cone Bregman projection") from exc
    if prob.status in ("infeasible", "infeasible_inaccurate"):
        raise InfeasibleError(f"A diag(m) q = y has no solution q >= 0 (cvxpy status "
                              f"{prob.status})")
    if q.value is None:
        raise RuntimeError(f"cvxpy failed: status {prob.status}")
    return np.asarray(q.value, dtype=float), {"status": prob.status,
                                              "solver": prob.solver_stats.solver_name}
