r"""Exact factor dynamics (quadnet theory §2).

* Gradient flow ``U' = -grad L(U) = -2 S U`` projects to ``Q' = -2 (S Q + Q S)``, the
  Riemannian gradient flow of ``ell`` on ``M_r^+`` for the quotient metric.
* Gradient descent ``U_{k+1} = (I - 2 eta S_k) U_k`` gives the exact congruence recursion
  ``Q_{k+1} = C_k Q_k C_k^T``, ``C_k = I - 2 eta S_k``, i.e.
  ``Q_{k+1} = Q_k - 2 eta (S_k Q_k + Q_k S_k) + 4 eta^2 S_k Q_k S_k``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import FrozenInstanceError, dataclass, field

import math

import numpy as np
import scipy.linalg
from scipy.integrate import DOP853, LSODA, RK23, RK45, solve_ivp

from quadnet._linalg import sym
from quadnet._validation import (
    Array,
    Converted,
    Factor,
    Integer,
    IsCallable,
    NonFiniteResultError,
    Optional,
    Options,
    Real,
    Relation,
    Symmetric,
    TimeGrid,
    as_array,
    validate_params,
)
from quadnet.losses import LOSS, Loss, as_loss

from quadnet.exceptions import DivergenceError

__all__ = [
    "BLOWUP",
    "Trajectory",
    "congruence_recursion",
    "canonical_gauge",
    "congruence_step",
    "factorization_flow",
    "gradient_descent",
    "gradient_flow",
    "predictor_flow",
    "quadratic_factor_gradients",
    "solve_flows",
]

#: Factor (or predictor) entries beyond this in absolute value are treated as divergence, long
#: before float64 overflows; every descent loop in quadnet uses this one threshold.
BLOWUP = 1e100


@dataclass
class Trajectory:
    """A recorded trajectory: times (or step indices) ``t``, factors ``U`` and predictors ``Q``.

    ``U`` has shape ``(n, d, r)`` (``None`` for predictor-only recursions); ``Q`` has
    shape ``(n, d, d)`` and is computed as ``U U^T`` when not stored; ``loss`` has shape
    ``(n,)``.
    """

    t: np.ndarray
    U: np.ndarray | None
    loss: np.ndarray
    info: dict = field(default_factory=dict)
    _Q: np.ndarray | None = None

    def __post_init__(self):
        # checked once when built (a plain record: no count_validations entry, no wrapper)
        t = as_array(self.t, "t", ndim=1, field=True)
        n = t.shape[0]
        if n == 0:
            raise ValueError("t must have at least one entry, got shape (0,)")
        loss = as_array(self.loss, "loss", ndim=1, field=True)
        if loss.shape != (n,):
            raise ValueError(f"loss must have shape ({n},) (one value per entry of t), got "
                             f"{loss.shape}")
        U = None if self.U is None else as_array(self.U, "U", ndim=3, field=True)
        if U is not None and U.shape[0] != n:
            raise ValueError(f"U must have shape ({n}, d, r) (one factor per entry of t), got "
                             f"{U.shape}")
        Q = None if self._Q is None else as_array(self._Q, "_Q", ndim=3, field=True)
        if Q is not None and (Q.shape[0] != n or Q.shape[1] != Q.shape[2]):
            raise ValueError(f"_Q must have shape ({n}, d, d) (one predictor per entry of t), "
                             f"got {Q.shape}")
        if U is not None and Q is not None and Q.shape[1] != U.shape[1]:
            raise ValueError(f"_Q has d = {Q.shape[1]}, but U has d = {U.shape[1]}")
        if U is None and Q is None and type(self).Q is Trajectory.Q:
            raise ValueError("a Trajectory needs U (factors) or _Q (predictors); both are None")
        if not isinstance(self.info, dict):
            raise TypeError(f"info must be a dict, got {type(self.info).__name__}")
        for name, value in (("t", t), ("loss", loss), ("U", U), ("_Q", Q)):
            object.__setattr__(self, name, value)

    @property
    def Q(self) -> np.ndarray:
        if self._Q is not None:
            return self._Q
        return self.U @ np.swapaxes(self.U, 1, 2)

    def __len__(self) -> int:
        return len(self.t)

    def __setattr__(self, name, value):
        # frozen once built: a field is set once (subclasses may add their own attributes)
        if name in type(self).__dataclass_fields__ and name in self.__dict__:
            raise FrozenInstanceError(f"cannot assign to field {name!r} of a Trajectory")
        object.__setattr__(self, name, value)


_check_loss = as_loss


def _diverged(U: np.ndarray) -> bool:
    return not np.all(np.isfinite(U)) or np.max(np.abs(U)) > BLOWUP


#: Positive finite step sizes and tolerances.
_POSITIVE = Real(0, None, closed="neither")
#: The integrators of :func:`scipy.integrate.solve_ivp`.
IVP_METHODS = ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")
#: The explicit Runge--Kutta pairs among them: stable only for steps ``h <~ c / lambda``, with
#: ``lambda`` the largest rate of the right-hand side's Jacobian.
EXPLICIT_METHODS = ("RK45", "RK23", "DOP853")
#: Largest ``(t_end - t_0) * lambda`` an explicit method is given (``lambda`` a lower bound on
#: the Jacobian's norm at the start): it needs at least about that many steps, ~10 right-hand
#: sides each, so 1e8 is already hours at any size and e.g. ``times * 1e300`` would never end.
MAX_EXPLICIT_HORIZON = 1e8
#: ``atol`` is required ``> 0``: with ``atol = 0`` the error weight ``rtol |y_i|`` of a state
#: component that is exactly zero (an off-diagonal predictor entry, a zero factor row) is 0, so
#: no step is ever accepted.
_FLOW = {"loss": LOSS, "rtol": Real(0, 1, closed="neither"), "atol": _POSITIVE,
         "method": Options(*IVP_METHODS)}


def _bounded_start(name: str) -> Relation:
    """Refuse a start beyond :data:`BLOWUP`: its first recorded state would count as diverged."""
    def check(args):
        X = args[name]
        m = float(np.max(np.abs(X))) if X.size else 0.0
        if m > BLOWUP:
            return (f"{name} has entries up to {m:.3g} in absolute value, beyond {BLOWUP:g}: "
                    f"quadnet treats such states as diverged (quadnet.dynamics.BLOWUP); rescale "
                    f"{name}")
        return None
    return Relation((name,), check, f"``{name}`` has entries of absolute value <= {BLOWUP:g}")


class _NonFiniteRHS(ArithmeticError):
    """Raised by a flow's right-hand side when it overflows (caught at the public boundary)."""


def _rate(jvp, X: np.ndarray) -> float:
    """A lower bound on the norm of the linear map ``jvp`` (a right-hand side's Jacobian): the
    largest ``||jvp(E)|| / ||E||`` over ``E = X`` and ``E = `` all ones."""
    rate = 0.0
    for E in (X, np.ones_like(X)):
        nE = float(np.linalg.norm(E))
        if nE > 0:
            with np.errstate(all="ignore"):
                v = float(np.linalg.norm(jvp(E / nE)))
            if np.isfinite(v):
                rate = max(rate, v)
    return rate


def _check_horizon(t: np.ndarray, rate, method: str, what: str) -> None:
    """Refuse an explicit integration over more than ``MAX_EXPLICIT_HORIZON`` time scales.

    ``rate()`` (called only for an explicit ``method``) is the smaller of the Jacobian-norm bounds at the start and at the origin: a large
    start contracts quickly (its stiffness is a transient, e.g. ``Q' ~ -4 Q^2``), and near the
    origin and the critical points the flow settles at, the rate is that of the loss itself.
    """
    if method not in EXPLICIT_METHODS:
        return
    span, rate = float(t[-1] - t[0]), rate()
    if span * rate > MAX_EXPLICIT_HORIZON:
        raise ValueError(
            f"times spans {span:.3g} time units, {span * rate:.3g} times the {what}'s time scale "
            f"1/{rate:.3g}: the explicit method {method!r} would need at least that many steps "
            f"(more than {MAX_EXPLICIT_HORIZON:g}); shorten times or use a stiff method "
            f"('LSODA', 'BDF' or 'Radau')")


def _failure(what: str, sol, t: np.ndarray, rtol: float, atol: float, start: str
             ) -> DivergenceError:
    """The :class:`DivergenceError` for a failed or diverged integration, with its cause."""
    if sol is None or sol.success:
        # the solver reached the end, but the state left the finite range on the way
        return DivergenceError(
            f"{what} diverged: the state became non-finite or larger than {BLOWUP:g} before "
            f"t = {t[-1]:g}; the flow from {start} blows up, or the tolerances (rtol = {rtol:g}, "
            f"atol = {atol:g}) are too loose to control the integration error")
    return DivergenceError(f"{what} integration failed: {sol.message} (rtol = {rtol:g}, "
                           f"atol = {atol:g}, times up to {t[-1]:g})")


@validate_params({"loss": LOSS, "U0": Factor(full_rank=False), "eta": _POSITIVE,
                  "steps": Integer(0), "record_every": Integer(1), "gtol": Optional(_POSITIVE),
                  "callback": Optional(IsCallable("a callable callback(k, U)"))},
                 relations=[_bounded_start("U0")])
def gradient_descent(loss: Loss, U0, eta: float, steps: int, *, record_every: int = 1,
                     gtol: float | None = None,
                     callback: Callable[[int, np.ndarray], None] | None = None) -> Trajectory:
    """Factor gradient descent ``U_{k+1} = U_k - eta grad L(U_k)``.

    Records steps ``0, record_every, 2 record_every, ...`` and the last step. Stops early when
    ``||grad L||_F <= gtol``. Raises :class:`DivergenceError` (a ``ValueError``) naming
    ``eta`` when the iterates become non-finite or exceed ``1e100``.
    """
    U = U0.copy()
    ts, Us, vals = [0], [U.copy()], [loss.factor_value(U)]
    k, stopped = 0, False
    for k in range(1, steps + 1):
        g = loss.factor_gradient(U)
        if gtol is not None and np.linalg.norm(g) <= gtol:
            k -= 1
            stopped = True
            break
        U = U - eta * g
        if _diverged(U):
            raise DivergenceError(
                f"gradient descent diverged at step {k} with eta = {eta:g}: the iterate is "
                f"{'non-finite' if not np.all(np.isfinite(U)) else 'larger than 1e100'}; "
                "use a smaller step size eta"
            )
        if callback is not None:
            callback(k, U)
        if k % record_every == 0 or k == steps:
            ts.append(k)
            Us.append(U.copy())
            vals.append(loss.factor_value(U))
    if ts[-1] != k:
        ts.append(k)
        Us.append(U.copy())
        vals.append(loss.factor_value(U))
    return Trajectory(np.asarray(ts, dtype=float), np.stack(Us), np.asarray(vals),
                      {"eta": eta, "steps": k, "converged": stopped})


def _times(times) -> np.ndarray:
    t = as_array(times, "times", ndim=1)
    if t.size < 2 or np.any(np.diff(t) <= 0):
        raise ValueError("times must be a strictly increasing 1-d array with at least 2 entries")
    return t


def _integrate(rhs, t: np.ndarray, y0: np.ndarray, method: str, rtol: float, atol: float,
               what: str, start: str):
    """``solve_ivp`` of a flow on the grid ``t`` from ``y0``; a right-hand side that is not
    finite (``_NonFiniteRHS``), a failed or diverged solve raises :func:`_failure` naming
    ``start``."""
    try:
        sol = solve_ivp(rhs, (t[0], t[-1]), y0.reshape(-1), method=method, t_eval=t,
                        rtol=rtol, atol=atol)
    except _NonFiniteRHS:
        sol = None
    if sol is None or not sol.success or sol.y.shape[1] != t.size or _diverged(sol.y):
        raise _failure(what, sol, t, rtol, atol, start)
    return sol


@validate_params(_FLOW | {"U0": Factor(full_rank=False), "times": TimeGrid()},
                 relations=[_bounded_start("U0")])
def gradient_flow(loss: Loss, U0, times, *, rtol: float = 1e-10, atol: float = 1e-12,
                  method: str = "DOP853") -> Trajectory:
    """Factor gradient flow ``U' = -grad L(U)`` by :func:`scipy.integrate.solve_ivp`.

    ``method`` defaults to the 8th-order Dormand–Prince pair; ``rtol``/``atol`` are passed
    through. The state is ``vec(U)`` (row-major). Raises :class:`DivergenceError` if the
    integrator fails or the state blows up. An explicit ``method`` over more than
    ``quadnet.dynamics.MAX_EXPLICIT_HORIZON`` (1e8) time scales of the flow (``1 / ||D^2 L||``
    estimated from below, the smaller of its values at ``U0`` and at the origin) is refused up
    front as a ``ValueError`` naming ``times``: it would need at least that many steps.
    """
    t = times
    shape = U0.shape
    zero = np.zeros_like(U0)
    _check_horizon(t, lambda: min(_rate(loss.hvp_at(U0), U0), _rate(loss.hvp_at(zero), U0)),
                   method, "gradient flow")

    def rhs(_t, y):
        out = -loss.factor_gradient(y.reshape(shape)).reshape(-1)
        if not np.isfinite(out).all():
            raise _NonFiniteRHS
        return out

    sol = _integrate(rhs, t, U0, method, rtol, atol, "gradient flow", "U0")
    Us = sol.y.T.reshape(t.size, *shape)
    vals = np.array([loss.factor_value(U) for U in Us])
    return Trajectory(t, Us, vals, {"nfev": sol.nfev, "method": method, "rtol": rtol,
                                    "atol": atol})


@validate_params(_FLOW | {"Q0": Symmetric("d", psd=True), "times": TimeGrid()},
                 relations=[_bounded_start("Q0")])
def predictor_flow(loss: Loss, Q0, times, *, rtol: float = 1e-10, atol: float = 1e-12,
                   method: str = "DOP853") -> Trajectory:
    """The Riemannian flow written on predictors, ``Q' = -2 (S Q + Q S)``, integrated directly.

    An independent route to the projected factor flow (quadnet theory §2). As for
    :func:`gradient_flow`, an explicit ``method`` over more than
    ``quadnet.dynamics.MAX_EXPLICIT_HORIZON`` (1e8) time scales of the flow is refused
    (``ValueError`` naming ``times``).
    """
    t = times
    n = Q0.shape[0]
    def jvp_at(Q):   # H -> D[-2 (S Q + Q S)](Q)[H]
        S = loss.gradient(Q)

        def jvp(H):
            P = loss.hessian_vector(Q, H) @ Q + S @ H
            return -2.0 * (P + P.T)
        return jvp

    _check_horizon(t, lambda: min(_rate(jvp_at(Q0), Q0), _rate(jvp_at(np.zeros_like(Q0)), Q0)),
                   method, "predictor flow")

    def rhs(_t, y):
        Q = y.reshape(n, n)
        SQ = loss.gradient(Q) @ Q
        out = (-2.0 * (SQ + SQ.T)).reshape(-1)
        if not np.isfinite(out).all():
            raise _NonFiniteRHS
        return out

    sol = _integrate(rhs, t, Q0, method, rtol, atol, "predictor flow", "Q0")
    Qs = sol.y.T.reshape(t.size, n, n)
    vals = np.array([loss.value(Q) for Q in Qs])
    return Trajectory(t, None, vals, {"nfev": sol.nfev, "method": method}, _Q=Qs)


def _congruence_step(Q: np.ndarray, S: np.ndarray, eta: float) -> np.ndarray:
    """Unchecked kernel of :func:`congruence_step` on raw symmetric arrays."""
    C = np.eye(Q.shape[0]) - 2.0 * eta * S
    return sym(C @ Q @ C.T)


#: Relative tolerance of :func:`congruence_step`'s PSD test: ``lambda_min(Q) >= -tol * max|lambda|``.
#: ``eigh`` of a symmetric ``Q`` is backward stable, so a PSD matrix built in float64 (e.g. an
#: iterate ``C Q C^T`` of the recursion) shows eigenvalues down to ``~ d eps max|lambda|``,
#: i.e. ~1e-14 relative at d = 50; 1e-12 leaves a factor ~100 above that (d up to ~4500), and a
#: genuinely indefinite predictor is off by O(1).
_PSD_RTOL = 1e-12


_PREDICTOR = Symmetric("d", psd=True, psd_rtol=1e-12)


@validate_params({"Q": _PREDICTOR, "S": Symmetric("d"), "eta": _POSITIVE})
def congruence_step(Q, S, eta: float) -> np.ndarray:
    r"""One exact gradient-descent step on predictors: ``C Q C^T`` with ``C = I - 2 eta S``.

    For ``Q = U U^T`` and ``S = grad L(Q)``, ``(U - 2 eta S U)(U - 2 eta S U)^T = C Q C^T``:
    the predictor of one factor step (quadnet theory §2, the congruence recursion).

    Parameters
    ----------
    Q : array_like, shape (d, d)
        Symmetric positive semidefinite predictor (up to rounding: smallest eigenvalue
        ``>= -1e-12 max|lambda|``).
    S : array_like, shape (d, d)
        Symmetric gradient ``grad L(Q)``.
    eta : float
        Step size, ``> 0``.

    Returns
    -------
    ndarray, shape (d, d)
        The symmetric ``C Q C^T``.

    Raises
    ------
    TypeError, ValueError
        Non-symmetric or mismatched ``Q``/``S``, ``Q`` not positive semidefinite (the
        message names ``Q``), or ``eta <= 0``.

    Examples
    --------
    >>> import numpy as np
    >>> Q = np.diag([1.0, 0.0])
    >>> congruence_step(Q, np.diag([0.25, 1.0]), 0.5).tolist()    # C = diag(0.75, 0)
    [[0.5625, 0.0], [0.0, 0.0]]
    """
    return _congruence_step(Q, S, eta)


@validate_params({"loss": LOSS, "Q0": Symmetric("d", psd=True), "eta": _POSITIVE,
                  "steps": Integer(0), "record_every": Integer(1)})
def congruence_recursion(loss: Loss, Q0, eta: float, steps: int, *,
                         record_every: int = 1) -> Trajectory:
    """Iterate :func:`congruence_step` with ``S_k = loss.gradient(Q_k)``: the predictor
    sequence of factor gradient descent, computed without factors.

    Numerical stability: in exact arithmetic ``Q_k`` keeps the rank and inertia of ``Q0``.
    In floating point, rounding puts ``O(eps)`` components outside ``range(Q_k)``, and the
    congruence multiplies them by ``(1 - 2 eta lambda)^2`` per step, with ``lambda`` an
    eigenvalue of ``S_k`` there. When the loss pulls towards a higher rank than ``Q0``'s
    (``S`` negative off the range, e.g. a rank-3 target fitted from a rank-2 start) these
    components grow geometrically and the recursion departs from factor descent, which
    stays exactly on the rank-r stratum; a negative component then runs away and raises
    :class:`DivergenceError`. On realisable problems (``S_k -> 0``) the recursion matches
    factor descent to ~1e-15 over thousands of steps.
    """
    Q = Q0
    ts, Qs, vals = [0], [Q], [loss.value(Q)]
    for k in range(1, steps + 1):
        # unchecked kernel: iterates are PSD only up to rounding (eigenvalues ~ -1e-13)
        Q = _congruence_step(Q, loss.gradient(Q), eta)
        if _diverged(Q):
            raise DivergenceError(
                f"congruence recursion diverged at step {k} with eta = {eta:g}: either eta is "
                "too large, or rounding outside range(Q0) was amplified because the loss pulls "
                "towards a higher rank than Q0's (see the docstring); factor descent is immune")
        if k % record_every == 0 or k == steps:
            ts.append(k)
            Qs.append(Q)
            vals.append(loss.value(Q))
    return Trajectory(np.asarray(ts, dtype=float), None, np.asarray(vals), {"eta": eta},
                      _Q=np.stack(Qs))


# ------------------------------------------------------------------ closed-form flow
#: Components of the start smaller than this times ``||U0||_F`` (in the eigenbasis of the
#: target, after the earlier pivots are removed) are rounding, not reached directions.
_ECHELON_RTOL = 64 * np.finfo(float).eps


def _echelon(A: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """``A = L Z`` with ``Z`` orthonormal rows and ``L`` (``d x k``) in column echelon form.

    Rows are visited top to bottom (the target's eigenvalues in descending order); a row whose
    component outside the span of the earlier pivot rows exceeds ``tol`` becomes the next
    pivot ``p_j`` and a Householder reflection on the remaining columns puts that component in
    column ``j`` alone. Returns ``L[:, :k]`` (``L[i, j] = 0`` for ``i < p_j``) and the pivots.
    """
    L = A.copy()
    d, r = L.shape
    piv: list[int] = []
    c = 0
    for i in range(d):
        if c == r:
            break
        x = L[i, c:]
        nx = float(np.linalg.norm(x))
        if nx <= tol:
            L[i, c:] = 0.0
            continue
        v = x.copy()
        v[0] += np.copysign(nx, x[0]) if x[0] != 0 else nx
        v /= np.linalg.norm(v)
        L[:, c:] -= np.outer(L[:, c:] @ v, 2.0 * v)
        L[i, c + 1:] = 0.0
        piv.append(i)
        c += 1
    return L[:, :c], np.asarray(piv, dtype=int)


def _log_psi(x: np.ndarray) -> np.ndarray:
    """``log((1 - exp(-|x|)) / |x|)`` (``0`` at ``x = 0``), without cancellation."""
    ax = np.abs(x)
    out = np.zeros_like(ax)
    big = ax > 1e-300
    out[big] = np.log(-np.expm1(-ax[big]) / ax[big])
    return out


@validate_params({"U": Factor(full_rank=False)})
def canonical_gauge(U: np.ndarray) -> np.ndarray:
    """The eigen-gauge representative ``[sqrt(q_1) w_1, ..., sqrt(q_r) w_r]`` of ``U U^T``.

    ``U = W diag(s) V^T`` (SVD) gives ``U V = W diag(s)``: columns in descending order of
    ``s``, each signed so that its entry of largest magnitude is positive; zero columns stay
    zero. The same for every ``U R``, ``R`` in ``O(r)``, up to ties in ``s`` (quadnet theory
    §1: one representative per fibre).

    Parameters
    ----------
    U : (d, r) ndarray
        Finite factor, any rank.

    Returns
    -------
    ndarray, shape (d, r)
        The representative, a factor of the same ``U U^T``.

    Examples
    --------
    >>> import numpy as np
    >>> U = np.array([[0.0, -2.0], [1.0, 0.0], [0.0, 0.0]])
    >>> R = np.array([[0.6, -0.8], [0.8, 0.6]])
    >>> bool(np.allclose(canonical_gauge(U @ R), canonical_gauge(U)))
    True
    >>> canonical_gauge(U).tolist()
    [[2.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    """
    W, s, _ = np.linalg.svd(U, full_matrices=False)
    Y = W * s
    idx = np.argmax(np.abs(Y), axis=0)
    sgn = np.sign(Y[idx, np.arange(Y.shape[1])])
    sgn[sgn == 0] = 1.0
    return Y * sgn


def _any_order_times(value, name):
    t = as_array(value, name, ndim=1)
    if t.size == 0 or np.any(t < 0):
        raise ValueError(f"{name} must be a non-empty 1-d array of finite times t >= 0")
    return t


@validate_params({"target": Symmetric("d"), "U0": Array(shape=("d", "r")),
                  "times": Converted(_any_order_times, "a non-empty 1-d array of finite times "
                                     "t >= 0 (any order)",
                                     bad=[("negative", [-1.0]), ("empty", []), ("nan", [np.nan]),
                                          ("string", "abc")])})
def factorization_flow(target, U0, times) -> Trajectory:
    r"""Exact gradient flow of ``FrobeniusLoss(target)`` from ``U0``, in closed form.

    The factor flow ``U' = -grad L(U) = -2 (U U^T - T) U`` (quadnet theory §2; ``L(U) =
    1/2 ||U U^T - T||_F^2``) projects to the matrix Riccati equation
    ``Q' = 2 (T Q + Q T) - 4 Q^2``, whose solution is

    .. math::

        Q(t) = e^{2Tt} U_0 \Big(I + U_0^\top \Phi(t)\, U_0\Big)^{-1} U_0^\top e^{2Tt},
        \qquad \Phi(t) = \int_0^t 4 e^{4Ts}\,ds

    (differentiate: with ``W = e^{2Tt} U0`` and ``N = I + U0^T Phi U0``, ``N' = 4 W^T W``, so
    ``Q' = 2 T Q + 2 Q T - 4 Q^2``). Valid for any width ``r``, any symmetric ``T``
    (indefinite, singular, any rank) and any ``t >= 0``.

    Stable evaluation. Naively ``e^{4 lambda t}`` overflows once ``4 lambda_max t > 709`` and
    ``N`` is a sum of terms of wildly different sizes. Here:

    1. ``T = P diag(lambda) P^T`` with ``lambda`` descending; ``A = P^T U0``. ``Q`` depends on
       ``A`` only through ``A A^T``, so ``A`` is replaced by a column echelon form ``L``
       (``A = L Z``, Householder reflections from the right, rows in eigenvalue order): column
       ``j`` starts at the pivot row ``p_j``, the ``j``-th eigen-direction the start reaches
       beyond the earlier ones. Components below ``64 eps ||U0||_F`` count as zero, so a
       rank-``k`` start gives ``k`` columns; so do eigenvalues ``|lambda| <= d eps ||T||_2``
       (the eigensolver's rounding of a zero eigenvalue, which would otherwise act as a
       genuine ``1e-17`` at times ``t > 1e15``).
    2. With ``phi_i = (e^{4 lambda_i t} - 1)/lambda_i`` (``4t`` at ``lambda_i = 0``),
       ``g_i = e^{4 lambda_i t}/phi_i`` and ``B = D_phi^{1/2} L D_p^{-1/2}``
       (``D_p = diag(phi_{p_j})``): ``B_ij = L_ij (phi_i/phi_{p_j})^{1/2}`` is bounded by
       ``|L_ij|`` because ``i >= p_j`` and ``phi`` increases with ``lambda``, and

       .. math:: Q = G^{1/2} B M^{-1} B^\top G^{1/2}, \qquad M = D_p^{-1} + B^\top B .

       ``M`` (``k x k``) is formed with its diagonal as a sum of positive terms, scaled to unit
       diagonal (``S M S``) and Cholesky-factored, ``S M S = C C^T``; then
       ``U(t) = P G^{1/2} B S C^{-T}`` (one triangular solve). The thin QR of the stacked
       ``[B; D_p^{-1/2}]`` would avoid squaring but mixes, within a Householder reflection,
       the tiny rows of ``B`` on a plateau with the large diagonal ones (measured: 1e-9
       relative error at ``eps = 1e-6``, ``t = 1e-3``); the scaled Cholesky keeps each row's
       relative accuracy (measured against mpmath: ~1e-14 throughout).
    3. Every exponential is formed from differences ``4 t (lambda_i^+ - lambda_{p_j}^+)`` and
       ``4 t lambda_i^-`` of eigenvalues, times ``log psi(4 lambda t)``,
       ``psi(x) = (1 - e^{-|x|})/|x|`` (by ``expm1``): ``phi = 4t e^{4 lambda^+ t} psi`` and
       ``g = e^{4 lambda^- t} / (4 t psi)``, so nothing overflows (``sqrt(g_i) <=
       max(lambda_i, 1/(4t))^{1/2}`` up to a factor ``sqrt(2)``) and large-``lambda`` rows
       dominate through bounded ratios, never through huge numbers.

    Limits. As ``t -> inf``, ``Q(t)`` tends to ``sum_j lambda_{p_j}^+ p p^T`` over the pivot
    directions (the best PSD rank-``k`` approximation of ``T`` on the span the start reaches);
    a zero eigenvalue of ``T`` inside that span leaves an excess eigenvalue ``~ 1/(4t)``
    (docs/overparam.md).

    Parameters
    ----------
    target : (d, d) array_like
        Symmetric target ``T``.
    U0 : (d, r) array_like
        Finite start of any width ``r >= 1`` (also ``r > d``) and any rank.
    times : 1-d array_like
        Finite times ``t >= 0`` (any order).

    Returns
    -------
    Trajectory
        ``.t`` the times, ``.U`` (``(n, d, r)``) in the canonical eigen-gauge
        (:func:`canonical_gauge`: columns ``sqrt(q_j) w_j`` of the eigenpairs of ``Q(t)``,
        zero columns for an unreached width), ``.Q``, ``.loss`` (``1/2 ||Q - T||_F^2``);
        ``info["pivots"]`` are the reached eigen-directions (indices into the descending
        eigenvalues ``info["eigenvalues"]``) and ``info["pivot_norms"]`` the ``|L_{p_j j}|``:
        the component of the start along the ``j``-th reached direction beyond the earlier
        ones, which sets when it is learned (from ``U0 = eps V``: at
        ``ln(lambda_{p_j} / (eps^2 ell_j^2) - 1) / (4 lambda_{p_j})``, docs/overparam.md).

    Raises
    ------
    ValueError
        ``target`` not symmetric/finite, ``U0`` not a finite ``d x r`` array, a negative or
        non-finite time.

    Examples
    --------
    >>> import numpy as np
    >>> T = np.diag([2.0, 1.0, 0.0])
    >>> U0 = 1e-3 * np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    >>> tr = factorization_flow(T, U0, [0.0, 1e8])      # no overflow at 4 lambda t = 8e8
    >>> print(np.round(np.linalg.eigvalsh(tr.Q[-1])[::-1], 6))
    [2. 1. 0.]
    >>> from quadnet import FrobeniusLoss
    >>> exact = gradient_flow(FrobeniusLoss(T), U0, [0.0, 5.0], rtol=1e-13, atol=1e-16)
    >>> bool(np.allclose(factorization_flow(T, U0, [5.0]).Q[0], exact.Q[-1], rtol=0, atol=1e-10))
    True
    """
    T, t = target, times
    d = T.shape[0]
    r = U0.shape[1]                                       # any width, also r > d
    lam, P = np.linalg.eigh(T)
    lam, P = lam[::-1].copy(), P[:, ::-1].copy()
    lam[np.abs(lam) <= d * np.finfo(float).eps * np.max(np.abs(lam), initial=0.0)] = 0.0
    A = P.T @ U0
    L, piv = _echelon(A, _ECHELON_RTOL * float(np.linalg.norm(A)))
    k = L.shape[1]
    lp, ln = np.maximum(lam, 0.0), np.minimum(lam, 0.0)
    Us = np.zeros((t.size, d, r))
    below = np.arange(d)[:, None] >= piv[None, :]          # i >= p_j
    for n, tn in enumerate(t):
        if tn == 0.0 or k == 0:
            Us[n] = canonical_gauge(U0)
            continue
        lpsi = _log_psi(4.0 * lam * tn)
        log4t = math.log(4.0 * tn)
        ratio = 4.0 * tn * (lp[:, None] - lp[piv][None, :]) + lpsi[:, None] - lpsi[piv][None, :]
        Bh = np.where(below, L * np.exp(0.5 * np.where(below, ratio, 0.0)), 0.0)
        inv_phi = np.exp(-(4.0 * tn * lp[piv] + log4t + lpsi[piv]))
        M = Bh.T @ Bh
        M[np.diag_indices(k)] = inv_phi + np.sum(Bh * Bh, axis=0)
        s = 1.0 / np.sqrt(np.diag(M))
        C = np.linalg.cholesky(s[:, None] * M * s[None, :])
        Y = scipy.linalg.solve_triangular(C, (Bh * s).T, lower=True).T
        sqrt_g = np.exp(0.5 * (4.0 * tn * ln - log4t - lpsi))
        Y = sqrt_g[:, None] * Y
        Us[n, :, :k] = canonical_gauge(P @ Y)
    vals = np.array([0.5 * float(np.sum((U @ U.T - T) ** 2)) for U in Us])
    if not (np.all(np.isfinite(vals)) and np.all(np.isfinite(Us))):
        raise NonFiniteResultError(
            f"factorization_flow: the flow's loss 1/2 ||Q - T||_F^2 overflows float64 (max |entry| "
            f"of target {float(np.max(np.abs(T))):.3g}, of U0 {float(np.max(np.abs(U0))):.3g}); "
            f"rescale target and U0")
    ell = np.abs(L[piv, np.arange(k)]) if k else np.empty(0)
    return Trajectory(t.copy(), Us, vals, {"method": "closed form", "pivots": piv,
                                           "pivot_norms": ell, "eigenvalues": lam, "rank": k})


# ----------------------------------------------------------------- independent flows at once
class _FlowwiseNorm:
    """Error norm of a Runge--Kutta pair on ``flows`` stacked systems: each flow's own norm
    (exactly the formula of the scipy pair on that flow alone), the largest of them.

    scipy's pairs accept a step when their error norm is ``< 1`` and scale the next step by
    ``norm^(-1/(order+1))``. The norm of the stacked state would be the root mean square over
    all flows, so one flow's error could hide behind the others' small ones (up to a factor
    ``sqrt(flows)``); with the largest per-flow norm every flow meets its own ``rtol``/``atol``
    on every accepted step, as it would when integrated alone (with smaller steps, where an
    other flow needs them).
    """

    flows = 1

    def _estimate_error_norm(self, K, h, scale):
        B = self.flows
        if isinstance(self, DOP853):   # scipy's DOP853 norm: 5th- and 3rd-order estimates
            e5 = (K.T @ self.E5 / scale).reshape(B, -1)
            e3 = (K.T @ self.E3 / scale).reshape(B, -1)
            n5, n3 = np.einsum("ij,ij->i", e5, e5), np.einsum("ij,ij->i", e3, e3)
            denom = (n5 + 0.01 * n3) * e5.shape[1]
            pos = denom > 0
            return float(np.max(np.abs(h) * n5[pos] / np.sqrt(denom[pos]), initial=0.0))
        err = (self._estimate_error(K, h) / scale).reshape(B, -1)   # RK45, RK23: RMS norm
        return float(np.sqrt(np.max(np.mean(err * err, axis=1))))


_FLOWWISE = {name: type(f"_Flowwise{name}", (_FlowwiseNorm, base), {})
             for name, base in (("DOP853", DOP853), ("RK45", RK45), ("RK23", RK23))}


def _increasing_span(args) -> str | None:
    t0, t1 = args["t_span"]
    return None if t1 > t0 else f"t_span must be (t0, t1) with t1 > t0, got {tuple(args['t_span'])}"


def _atol_per_flow(args) -> str | None:
    atol, Y0 = args["atol"], args["y0"]
    if atol.ndim > 2 or atol.ndim >= 1 and atol.shape[0] != Y0.shape[0] or \
            atol.ndim == 2 and atol.shape[1] != Y0.shape[1]:
        return (f"atol must be a scalar, one value per flow (shape ({Y0.shape[0]},)) or one per "
                f"component (shape {Y0.shape}), got shape {atol.shape}")
    if not np.all(atol > 0):
        return "atol must be > 0 (a zero weight never accepts a step on a zero component)"
    return None


@validate_params({"rhs": IsCallable("a callable rhs(t, Y) -> array of Y's shape"),
                  "t_span": Array(shape=(2,)), "y0": Array(ndim=2),
                  "rtol": Real(0, 1, closed="neither"), "atol": Array(),
                  "method": Options(*EXPLICIT_METHODS, "LSODA")},
                 relations=[Relation(("t_span",), _increasing_span, "``t_span[1] > t_span[0]``"),
                            Relation(("atol", "y0"), _atol_per_flow,
                                     "``atol > 0``: a scalar, per flow or per component")])
def solve_flows(rhs, t_span, y0, *, rtol: float = 1e-10, atol=1e-12,
                method: str = "DOP853") -> tuple[np.ndarray, int]:
    r"""Integrate ``B`` independent systems ``y_b' = f_b(t, y_b)`` as one ODE.

    The rows of ``y0`` (``B x n``) are stacked into one state of size ``B n`` and handed to one
    :func:`scipy.integrate.solve_ivp` call whose right-hand side ``rhs(t, Y)`` evaluates every
    flow at once (``Y`` and the result are ``B x n``), so the solver's per-step work is paid
    once for all ``B`` flows instead of once per flow.

    Accuracy per flow. The explicit Runge--Kutta pair (Dormand & Prince: ``"DOP853"`` of order
    8(5,3), ``"RK45"``, ``"RK23"``) estimates the local error of each component, weights it by
    ``1 / (atol_bi + rtol |y_bi|)`` and accepts a step when the norm of the weighted errors is
    below 1. Here that norm is taken per flow, with the formula scipy uses for one system, and
    the step is accepted only when the largest of the ``B`` norms is below 1 (the next step is
    sized from the largest). So every flow meets its own tolerances on every step, as it would
    alone; a flow may take smaller steps than alone (those another flow needs), so the
    trajectories agree with the one-at-a-time solutions to the solver tolerance, not bitwise
    (for ``B = 1`` they are scipy's, bit for bit). Only the first trial step is scipy's guess
    from the stacked state; it is then accepted or shrunk by the same per-flow test.
    ``"LSODA"`` (ODEPACK's Adams/BDF method with automatic stiffness switching, Petzold 1983)
    needs no such change: its local error test is already the weighted *max* norm over all
    components, so each component of each flow meets its own tolerance on every step. It is
    the method for long horizons, where an explicit pair is held to steps of ``~1/lambda_max``
    by stability long after the solution has stopped moving.
    ``atol`` may differ per flow (shape ``(B,)``) or per component (``B x n``), e.g. relative to
    each flow's own scale.

    Parameters
    ----------
    rhs : callable
        ``rhs(t, Y) -> dY/dt`` on ``B x n`` arrays; row ``b`` depends on row ``b`` only.
    t_span : (t0, t1)
        Integrate from ``t0`` to ``t1 > t0``.
    y0 : (B, n) array_like
        The ``B`` starting states.
    rtol : float
        Relative tolerance, in ``(0, 1)``.
    atol : float or array_like, shape (B,) or (B, n)
        Absolute tolerances ``> 0``.
    method : {"DOP853", "RK45", "RK23", "LSODA"}

    Returns
    -------
    Y : (B, n) ndarray
        The states at ``t1``.
    nfev : int
        Calls of ``rhs`` (each evaluates all ``B`` flows).

    Raises
    ------
    DivergenceError
        The integration failed or a state became non-finite.

    Examples
    --------
    Two linear flows ``y' = -k y`` with rates 1 and 3, against ``exp(-k t)``:

    >>> import numpy as np
    >>> k = np.array([[1.0], [3.0]])
    >>> Y, nfev = solve_flows(lambda t, Y: -k * Y, (0.0, 2.0), np.ones((2, 1)), rtol=1e-12,
    ...                       atol=1e-15)
    >>> bool(np.allclose(Y[:, 0], np.exp(-2.0 * k[:, 0]), rtol=1e-10, atol=0))
    True
    """
    B, n = y0.shape
    fun, atol_v = _stacked(rhs, B, n, atol)
    sol = solve_ivp(fun, (float(t_span[0]), float(t_span[1])), y0.reshape(-1),
                    method=_stacked_method(method, B), rtol=rtol, atol=atol_v)
    Y = sol.y[:, -1].reshape(B, n) if sol.y.size else y0
    if not sol.success or not np.all(np.isfinite(Y)):
        raise DivergenceError(f"solve_flows: integration of {B} flows failed at "
                              f"t <= {t_span[1]:g}: {sol.message}")
    return Y, int(sol.nfev)


def _stacked(rhs, B: int, n: int, atol):
    """The right-hand side of ``B`` flows of size ``n`` on their stacked state, and ``atol``
    (a scalar, one per flow or one per component) as one weight per stacked component."""
    atol = np.asarray(atol, dtype=float)
    atol_v = np.broadcast_to(atol.reshape(atol.shape + (1,) * (2 - atol.ndim)), (B, n))

    def fun(t, y):
        return np.asarray(rhs(t, y.reshape(B, n)), dtype=float).reshape(-1)

    return fun, atol_v.reshape(-1)


def _stacked_method(method: str, flows: int):
    """The scipy solver of ``flows`` stacked systems: LSODA as it is (its error test is already
    the max norm over the components), an explicit pair with the per-flow norm."""
    if method == "LSODA":
        return LSODA
    return type(f"{_FLOWWISE[method].__name__}x{flows}", (_FLOWWISE[method],), {"flows": flows})


def window_ends(tau: float, t_max: float, t0: float = 0.0) -> np.ndarray:
    """The checkpoints ``t_{k+1} = min(t_k + max(tau, t_k / 8), t_max)`` from ``t_0``: steps of
    ``tau`` first, then growing by 1/8 (so a doubling of ``t`` takes six checkpoints), the last
    one ``t_max``. Internal: the windows of the small-initialisation monitors."""
    ends, t = [], float(t0)
    while t < t_max:
        t = min(t + max(tau, t / 8.0), t_max)
        ends.append(t)
    return np.array(ends)


class WindowedFlow:
    """One scipy solver carried through a sequence of checkpoints: iterating yields
    ``(t_k, Y(t_k))`` for each ``t_k`` of ``ends`` (increasing, after ``t0``), the states
    between steps from the solver's dense output, so the caller can test convergence at each
    checkpoint and stop without the restart (new first step, and for LSODA order 1 again) that
    one :func:`scipy.integrate.solve_ivp` call per window costs. Internal: ``rhs(t, Y)`` and
    ``Y`` are ``B x n`` as in :func:`solve_flows` (no argument checks); ``nfev`` counts the
    calls so far. Raises :class:`~quadnet.exceptions.DivergenceError` when the solver fails or
    a state leaves ``|y| <= BLOWUP`` (a flow that blows up in finite time would otherwise take
    ever smaller steps)."""

    def __init__(self, rhs, t0: float, y0: np.ndarray, ends: np.ndarray, *, rtol: float,
                 atol, method: str = "LSODA"):
        self.B, self.n = y0.shape
        self.ends = np.asarray(ends, dtype=float)
        fun, atol_v = _stacked(rhs, self.B, self.n, atol)
        self._solver = _stacked_method(method, self.B)(fun, float(t0), y0.reshape(-1),
                                                       float(self.ends[-1]), rtol=rtol,
                                                       atol=atol_v)

    @property
    def nfev(self) -> int:
        return int(self._solver.nfev)

    def __iter__(self):
        sol = self._solver
        for t1 in self.ends:
            while sol.t < t1:
                why = sol.step()
                if sol.status == "failed":
                    raise DivergenceError(f"factor flow integration failed at t = {sol.t:g}: "
                                          f"{why}")
                if not np.abs(sol.y).max() <= BLOWUP:  # also NaN: a blow-up in finite time
                    raise DivergenceError(f"factor flow integration: the state left "
                                          f"|y| <= {BLOWUP:g} at t = {sol.t:g}")
            y = sol.y if sol.t == t1 else sol.dense_output()(t1)
            if not np.all(np.isfinite(y)):
                raise DivergenceError(f"factor flow integration: the state is not finite at "
                                      f"t = {t1:g}")
            yield float(t1), y.reshape(self.B, self.n)


#: Relative agreement a probe must show for :func:`quadratic_factor_gradients` to accept a
#: loss as quadratic in ``Q``.
_AFFINE_RTOL = 1e-10


@validate_params({"loss": LOSS, "d": Integer(1)})
def quadratic_factor_gradients(loss: Loss, d: int) -> Callable[[np.ndarray], np.ndarray] | None:
    r"""Factor gradients ``grad L(U_b) = 2 S(U_b U_b^T) U_b`` of a stack of factors at once.

    When ``ell`` is quadratic in ``Q`` (least squares on linear measurements: quadnet theory
    §2, §4), ``S`` is affine, ``S(Q) = S(0) + DS[Q]``, and with the symmetric basis
    ``E_kl + E_lk`` (``k < l``), ``E_kk``,

    .. math:: S(Q) = S(0) + \sum_{k \le l} Q_{kl}\, DS[E_{kl} + E_{lk} - \delta_{kl} E_{kk}],

    The ``d(d+1)/2`` directions ``DS[.]`` are the loss's own ``hessian_vector`` at ``0``. For a
    symmetric ``Q`` the same sum over all ``d^2`` entries reads ``DS[Q] = \sum_{k,l} Q_{kl}
    DS[E_{kl} + E_{lk}] / 2`` (``sum_{kl} Q_kl E_lk = sum_{kl} Q_kl E_kl``), so ``S`` of ``B``
    factors is one ``B x d^2`` by ``d^2 x d^2`` product (``O(d^4)`` memory: meant for small
    ``d``). The loss
    is accepted as quadratic when ``gradient`` at a fixed probe ``Q_p`` (entries ``O(1)``)
    agrees with the affine form to ``1e-10`` relative; otherwise ``None`` is returned (the
    caller then evaluates the flows one by one), as it is for a loss over complex factors.

    Parameters
    ----------
    loss : quadnet.Loss
    d : int
        Dimension of ``Q``.

    Returns
    -------
    callable or None
        ``grads(U)`` for ``U`` of shape ``(B, d, r)``, returning ``(B, d, r)`` (or one factor,
        ``(d, r)`` to ``(d, r)``); ``None`` when ``ell`` is not quadratic.

    Examples
    --------
    >>> import numpy as np
    >>> from quadnet import FrobeniusLoss
    >>> loss = FrobeniusLoss(np.diag([1.0, 0.0]))
    >>> U = np.array([[[2.0], [0.0]], [[0.0], [1.0]]])
    >>> grads = quadratic_factor_gradients(loss, 2)
    >>> bool(np.allclose(grads(U), [loss.factor_gradient(u) for u in U], rtol=1e-14, atol=0))
    True
    """
    iu, ju = np.triu_indices(d)
    S0 = np.asarray(loss.gradient(np.zeros((d, d))))
    if S0.dtype.kind != "f":     # a complex field (Hermitian S): not this real form
        return None
    cols = []
    for k, j in zip(iu, ju):
        E = np.zeros((d, d))
        E[k, j] = E[j, k] = 1.0
        cols.append(np.asarray(loss.hessian_vector(np.zeros((d, d)), E), dtype=float).reshape(-1))
    C = np.array(cols)                                             # (d(d+1)/2, d^2)
    x = np.arange(1.0, d + 1.0)
    Qp = np.eye(d) + 0.5 * np.outer(x, x) / d - 0.25 * np.outer(x[::-1], x) / d
    Qp = 0.5 * (Qp + Qp.T)
    S_probe = np.asarray(loss.gradient(Qp), dtype=float)
    affine = S0 + (Qp[iu, ju] @ C).reshape(d, d)
    if not np.all(np.isfinite(affine)) or np.linalg.norm(S_probe - affine) > _AFFINE_RTOL * max(
            np.linalg.norm(S_probe), np.linalg.norm(S0), np.finfo(float).tiny):
        return None

    # the same sum over all d^2 entries of the symmetric Q (half of each off-diagonal
    # direction on each side): one product, no gather of the upper triangle per call
    full = np.empty((d * d, d * d))
    full[iu * d + ju] = full[ju * d + iu] = C
    full[(iu * d + ju)[iu != ju]] *= 0.5
    full[(ju * d + iu)[iu != ju]] *= 0.5
    S0f = S0.reshape(-1)

    def grads(U: np.ndarray) -> np.ndarray:
        Q = U @ np.swapaxes(U, -1, -2)
        S = (S0f + Q.reshape(Q.shape[:-2] + (d * d,)) @ full).reshape(Q.shape)
        return 2.0 * (S @ U)

    return grads
