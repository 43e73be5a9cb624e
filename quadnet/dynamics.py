r"""Exact factor dynamics (THEORY.md §2).

* Gradient flow ``U' = -grad L(U) = -2 S U`` projects to ``Q' = -2 (S Q + Q S)``, the
  Riemannian gradient flow of ``ell`` on ``M_r^+`` for the quotient metric.
* Gradient descent ``U_{k+1} = (I - 2 eta S_k) U_k`` gives the exact congruence recursion
  ``Q_{k+1} = C_k Q_k C_k^T``, ``C_k = I - 2 eta S_k``, i.e.
  ``Q_{k+1} = Q_k - 2 eta (S_k Q_k + Q_k S_k) + 4 eta^2 S_k Q_k S_k``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp

from quadnet._validation import as_array, as_factor, as_int, as_positive, as_symmetric
from quadnet.losses import Loss, as_loss

from quadnet.exceptions import DivergenceError

__all__ = [
    "Trajectory",
    "congruence_recursion",
    "congruence_step",
    "gradient_descent",
    "gradient_flow",
    "predictor_flow",
]

#: Factor norms beyond this are treated as divergence (long before float64 overflows).
_BLOWUP = 1e100


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

    @property
    def Q(self) -> np.ndarray:
        if self._Q is not None:
            return self._Q
        return self.U @ np.swapaxes(self.U, 1, 2)

    def __len__(self) -> int:
        return len(self.t)


_check_loss = as_loss


def _diverged(U: np.ndarray) -> bool:
    return not np.all(np.isfinite(U)) or np.max(np.abs(U)) > _BLOWUP


def gradient_descent(loss: Loss, U0, eta: float, steps: int, *, record_every: int = 1,
                     gtol: float | None = None,
                     callback: Callable[[int, np.ndarray], None] | None = None) -> Trajectory:
    """Factor gradient descent ``U_{k+1} = U_k - eta grad L(U_k)``.

    Records steps ``0, record_every, 2 record_every, ...`` and the last step. Stops early when
    ``||grad L||_F <= gtol``. Raises :class:`DivergenceError` (a ``ValueError``) naming
    ``eta`` when the iterates become non-finite or exceed ``1e100``.
    """
    loss = _check_loss(loss)
    U = as_factor(U0, "U0", d=loss.d, full_rank=False).copy()
    eta = as_positive(eta, "eta")
    steps = as_int(steps, "steps", minimum=0)
    record_every = as_int(record_every, "record_every", minimum=1)
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


def gradient_flow(loss: Loss, U0, times, *, rtol: float = 1e-10, atol: float = 1e-12,
                  method: str = "DOP853") -> Trajectory:
    """Factor gradient flow ``U' = -grad L(U)`` by :func:`scipy.integrate.solve_ivp`.

    ``method`` defaults to the 8th-order Dormand–Prince pair; ``rtol``/``atol`` are passed
    through. The state is ``vec(U)`` (row-major). Raises :class:`DivergenceError` if the
    integrator fails or the state blows up.
    """
    loss = _check_loss(loss)
    U0 = as_factor(U0, "U0", d=loss.d, full_rank=False)
    t = _times(times)
    shape = U0.shape

    def rhs(_t, y):
        return -loss.factor_gradient(y.reshape(shape)).reshape(-1)

    sol = solve_ivp(rhs, (t[0], t[-1]), U0.reshape(-1), method=method, t_eval=t,
                    rtol=rtol, atol=atol)
    if not sol.success or sol.y.shape[1] != t.size or _diverged(sol.y):
        raise DivergenceError(f"gradient flow integration failed: {sol.message}")
    Us = sol.y.T.reshape(t.size, *shape)
    vals = np.array([loss.factor_value(U) for U in Us])
    return Trajectory(t, Us, vals, {"nfev": sol.nfev, "method": method, "rtol": rtol,
                                    "atol": atol})


def predictor_flow(loss: Loss, Q0, times, *, rtol: float = 1e-10, atol: float = 1e-12,
                   method: str = "DOP853") -> Trajectory:
    """The Riemannian flow written on predictors, ``Q' = -2 (S Q + Q S)``, integrated directly.

    An independent route to the projected factor flow (THEORY.md §2).
    """
    loss = _check_loss(loss)
    Q0 = as_symmetric(Q0, "Q0", loss.d)
    t = _times(times)
    n = Q0.shape[0]

    def rhs(_t, y):
        Q = y.reshape(n, n)
        SQ = loss.gradient(Q) @ Q
        return (-2.0 * (SQ + SQ.T)).reshape(-1)

    sol = solve_ivp(rhs, (t[0], t[-1]), Q0.reshape(-1), method=method, t_eval=t,
                    rtol=rtol, atol=atol)
    if not sol.success or sol.y.shape[1] != t.size or _diverged(sol.y):
        raise DivergenceError(f"predictor flow integration failed: {sol.message}")
    Qs = sol.y.T.reshape(t.size, n, n)
    vals = np.array([loss.value(Q) for Q in Qs])
    return Trajectory(t, None, vals, {"nfev": sol.nfev, "method": method}, _Q=Qs)


def congruence_step(Q, S, eta: float) -> np.ndarray:
    """``C Q C^T`` with ``C = I - 2 eta S``: one exact gradient-descent step on predictors."""
    Q = as_symmetric(Q, "Q")
    S = as_symmetric(S, "S", Q.shape[0])
    eta = as_positive(eta, "eta")
    C = np.eye(Q.shape[0]) - 2.0 * eta * S
    out = C @ Q @ C.T
    return 0.5 * (out + out.T)


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
    loss = _check_loss(loss)
    Q = as_symmetric(Q0, "Q0", loss.d)
    steps = as_int(steps, "steps", minimum=0)
    record_every = as_int(record_every, "record_every", minimum=1)
    ts, Qs, vals = [0], [Q], [loss.value(Q)]
    for k in range(1, steps + 1):
        Q = congruence_step(Q, loss.gradient(Q), eta)
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
