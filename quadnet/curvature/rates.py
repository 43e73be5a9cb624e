r"""Local rates near a minimiser from the effective curvature (quadnet theory §3).

Near a minimiser ``U*`` with effective Hessian ``H`` (:func:`quadnet.effective_hessian`),
eigenvalues ``0 < lambda_1 <= ... <= lambda_{n_h}``:

* gradient flow: ``||Q(t) - Q*||_F ~ exp(-lambda_1 t)``;
* gradient descent with step ``eta``: the horizontal error is multiplied by ``I - eta H`` per
  step, so it contracts by ``max_i |1 - eta lambda_i| = max(|1 - eta lambda_1|,
  |1 - eta lambda_{n_h}|)`` (stable iff ``eta < 2 / lambda_{n_h}``). With ``eta <= 2/(lambda_1 +
  lambda_{n_h})`` that is ``1 - eta lambda_1``, whose logarithm is ``log(1 - eta lambda_1)``,
  not the continuous-time surrogate ``-eta lambda_1`` (they differ by ``(eta lambda_1)^2/2``).

How the rate is *measured* (:func:`flow_decay_rate`, :func:`descent_contraction`). A plain
late-time log-slope of ``||Q(t) - Q*||`` converges to ``lambda_1`` only like
``exp(-2 (lambda_2 - lambda_1) t)`` (the second-slowest mode), and is further biased by the
nonlinearity. Instead:

1. the trajectory is integrated in *deviation coordinates* ``e = U - U*`` (state ``e``, right
   side ``-grad L(U* + e)``; mathematically the same flow, but the integrator's relative
   tolerance then applies to the small error itself instead of to ``U*``);
2. the error is read gauge-free as the horizontal log ``xi(t) = log_{U*}(U(t)) = U(t) R - U*``
   (``R`` the Procrustes alignment) and projected on the unit slowest eigenvector ``v_1``:
   ``p(t) = <v_1, xi(t)>``. Linearly, ``p(t) = c_1 exp(-lambda_1 t)`` exactly: every other mode is
   orthogonal to ``v_1``, so the second-mode contamination of the log-slope is gone;
3. what remains is the nonlinearity. On the slow manifold the normal form gives
   ``p(t) = C e^{-lambda t} + D e^{-2 lambda t} + (faster)``; ``lambda`` is fitted to this
   two-term Prony-type model by variable projection (for each ``lambda`` the amplitudes
   ``C, D`` are a linear least-squares fit of the relative residual; ``lambda`` minimises the
   remaining residual by bounded Brent). The fit uses the samples after ``|p|`` has dropped
   by 10x and before it reaches the rounding floor.

For descent the same is done with ``p_k = <v, xi_k>`` on the mode ``v`` attaining
``max_i |1 - eta lambda_i|`` and the model ``p_k = C mu^k + D mu^{2k}``.

Warnings and errors. Rates are only meaningful at (near) critical points with a positive
definite effective Hessian: a large gradient gives :class:`NotAMinimiserWarning`; a negative
``lambda_min`` is reported (``LocalCurvature.indefinite`` and an
:class:`IndefiniteHessianWarning`), and asking for a decay rate there raises ``ValueError``.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.optimize
from scipy.integrate import solve_ivp

from quadnet._validation import (Array, Factor, Instance, Integer, Optional, Real, Seed,
                                 as_rng, named_call, validate_params)
from quadnet.losses import GRADIENT_FINITE, LOSS
from quadnet.curvature.hessian import (ZERO_RTOL, _excess_block, _split, effective_hessian,
                                      effective_spectrum, horizontal_dimension)
from quadnet.losses import Loss
from quadnet.geometry.manifold import PSDQuotient, align

from quadnet.exceptions import IndefiniteHessianWarning, NotAMinimiserWarning

__all__ = [
    "DescentContraction",
    "FlowDecayRate",
    "LocalCurvature",
    "descent_contraction",
    "flow_decay_rate",
    "local_curvature",
    "predicted_contraction",
]


# ----------------------------------------------------------------------- curvature
@dataclass(frozen=True)
class LocalCurvature:
    """Extreme effective curvature at ``U`` and the rates it predicts (quadnet theory §3).

    Attributes:
        lambda_min, lambda_max: extreme eigenvalues of the effective Hessian.
        v_min, v_max: their unit horizontal eigenvectors (``d x r``).
        lambda_2: second-smallest eigenvalue (sets the bias of a plain log-slope).
        gradient_norm: ``||grad L(U)||_F``.
        relative_gradient: ``||grad L(U)||_F / (|lambda| ||U||_F)`` with ``lambda = lambda_min``
            if positive else ``lambda_max``: the relative size of a Newton step, i.e. roughly
            how far ``U`` is from the critical point the rates describe.
        error_bound: absolute error bound on ``lambda_min`` (residual norm; 0 for dense).
        n_h: horizontal dimension. method: ``"dense"`` or ``"eigsh"``.
        rank: numerical rank ``k`` of ``U``. At ``k < r`` (an over-parameterised point) every
            other field describes the signal block (the effective Hessian of ``U_k = U V_k``,
            :func:`quadnet.curvature.boundary_spectrum`), which sets the exponential rates;
            ``structural_zeros`` counts the zero modes of the ``r - k`` idle columns (they decay
            algebraically, not exponentially) and ``excess_min`` is the smallest eigenvalue of
            the excess block ``2 W_0^T S W_0`` (negative: a saddle).
    """

    lambda_min: float
    lambda_max: float
    lambda_2: float
    v_min: np.ndarray = field(repr=False)
    v_max: np.ndarray = field(repr=False)
    gradient_norm: float
    relative_gradient: float
    error_bound: float
    n_h: int
    method: str
    rank: int | None = None
    structural_zeros: int = 0
    excess_min: float = math.nan

    @property
    def indefinite(self) -> bool:
        """``lambda_min < 0`` beyond its error bound, or (at a rank-deficient ``U``) a negative
        excess eigenvalue: a saddle or maximum of the quotient."""
        neg_excess = self.excess_min < -ZERO_RTOL * max(abs(self.lambda_max), 1e-300)
        return bool(self.lambda_min < -self.error_bound or neg_excess)

    @property
    def flow_rate(self) -> float:
        """Predicted exponential decay rate of gradient flow, ``lambda_min``."""
        return self.lambda_min

    @property
    def stable_step(self) -> float:
        """``2 / lambda_max``: gradient descent is locally stable iff ``eta`` is below it."""
        return 2.0 / self.lambda_max

    @property
    def best_step(self) -> float:
        """``2 / (lambda_min + lambda_max)``: minimises ``max_i |1 - eta lambda_i|``."""
        return 2.0 / (self.lambda_min + self.lambda_max)

    def contraction(self, eta: float) -> float:
        """``max_i |1 - eta lambda_i|`` (see :func:`predicted_contraction`)."""
        # a refusal is named by the method called, then by the inner function
        return named_call(self, predicted_contraction, [self.lambda_min, self.lambda_max], eta)


_POSITIVE = Real(0, None, closed="neither")


@validate_params({"eigenvalues": Array(ndim=1), "eta": _POSITIVE})
def predicted_contraction(eigenvalues, eta: float) -> float:
    """``max_i |1 - eta lambda_i|``: the local per-step contraction of gradient descent.

    ``|1 - eta lambda|`` is convex in ``lambda``, so the extreme eigenvalues suffice.
    Values ``>= 1`` mean no local contraction (unstable step or non-positive curvature).

    Examples
    --------
    >>> predicted_contraction([0.5, 1.0], 0.1)
    0.95
    """
    return float(np.max(np.abs(1.0 - eta * np.asarray(eigenvalues, dtype=float))))


#: Up to this horizontal dimension :func:`local_curvature` uses the dense effective Hessian.
DENSE_MAX = 400


@validate_params({"loss": LOSS, "U": Factor(full_rank=False), "gtol": _POSITIVE,
                  "dense_max": Integer(0), "tol": Real(0, 1, closed="left"),
                  "seed": Seed(raw=True)}, relations=[GRADIENT_FINITE], finite_result=False)
def local_curvature(loss: Loss, U, *, gtol: float = 1e-6, dense_max: int = DENSE_MAX,
                    tol: float = 1e-12, seed=0) -> LocalCurvature:
    """Extreme effective eigenpairs at ``U`` with warnings when rates would not apply.

    Dense (:func:`quadnet.effective_hessian` + ``eigh``) when ``n_h <= dense_max``, else
    :func:`quadnet.effective_spectrum` (smallest two and largest one). Warns
    :class:`NotAMinimiserWarning` when ``relative_gradient > gtol`` and
    :class:`IndefiniteHessianWarning` when ``lambda_min < 0``; the numbers are always returned.
    At a rank-deficient ``U`` the fields describe the signal block and ``rank``,
    ``structural_zeros``, ``excess_min`` the idle columns (:class:`LocalCurvature`).

    Examples
    --------
    >>> import numpy as np
    >>> from quadnet import FrobeniusLoss
    >>> T = np.diag([2.0, 1.0, 0.0, -1.0])
    >>> U = np.zeros((4, 3)); U[0, 0], U[1, 1] = np.sqrt(2.0), 1.0   # rank 2 < r = 3
    >>> c = local_curvature(FrobeniusLoss(T), U)
    >>> c.rank, c.structural_zeros, round(c.lambda_min, 10), round(c.excess_min, 10)
    (2, 1, 2.0, 0.0)
    """
    sp = _split(U)
    if sp.rank == 0:
        raise ValueError("local_curvature: U = 0 has no signal part (every direction is an idle "
                         "column); use quadnet.curvature.boundary_spectrum")
    if sp.rank < U.shape[1]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", (NotAMinimiserWarning, IndefiniteHessianWarning))
            out = local_curvature(loss, sp.U_k, gtol=gtol, dense_max=dense_max, tol=tol,
                                  seed=seed)
        excess = np.linalg.eigvalsh(_excess_block(loss, U, sp))
        scale = max(abs(out.lambda_max), float(np.max(np.abs(excess))), 1e-300)
        out = dataclasses.replace(
            out, rank=sp.rank, excess_min=float(excess[0]),
            structural_zeros=(U.shape[1] - sp.rank) * int(
                np.count_nonzero(np.abs(excess) <= ZERO_RTOL * scale)),
            n_h=horizontal_dimension(*U.shape, sp.rank),
            v_min=out.v_min @ sp.V_k.T, v_max=out.v_max @ sp.V_k.T)
        _warn_curvature(out, gtol)
        return out
    d, r = U.shape
    n_h = horizontal_dimension(d, r)
    if n_h <= max(dense_max, 2):
        H, B = effective_hessian(loss, U, return_basis=True)
        w, V = np.linalg.eigh(H)
        vecs = (B @ V[:, [0, -1]]).T.reshape(2, d, r)
        lam1, lam2, lamN = w[0], (w[1] if n_h > 1 else w[0]), w[-1]
        bound, method = 0.0, "dense"
    else:
        lo = effective_spectrum(loss, U, k=2, which="smallest", tol=tol, seed=seed)
        hi = effective_spectrum(loss, U, k=1, which="largest", tol=tol, seed=seed)
        vecs = np.stack([lo.eigenvectors[0], hi.eigenvectors[0]])
        lam1, lam2, lamN = lo.eigenvalues[0], lo.eigenvalues[1], hi.eigenvalues[0]
        bound, method = float(lo.residual_norms[0]), "eigsh"
    gnorm = _norm(np.asarray(loss.factor_gradient(U)))
    ref = lam1 if lam1 > bound else abs(lamN)
    # (gnorm / ref) / ||U|| in scaled norms: U ~ 1e-300 underflows neither ||U|| nor ||grad||
    rel = gnorm / ref / _norm(U) if ref > 0 else (0.0 if gnorm == 0 else math.inf)
    out = LocalCurvature(float(lam1), float(lamN), float(lam2), vecs[0], vecs[1], gnorm,
                         float(rel), bound, n_h, method, rank=r)
    _warn_curvature(out, gtol)
    return out


def _norm(A: np.ndarray) -> float:
    """``||A||_F`` computed on ``A / max|A|`` (no over- or underflow of the squares)."""
    top = float(np.max(np.abs(A))) if A.size else 0.0
    return top * float(np.linalg.norm(A / top)) if top > 0 and math.isfinite(top) else top


def _warn_curvature(out: LocalCurvature, gtol: float) -> None:
    gnorm, rel, lam1, lamN = (out.gradient_norm, out.relative_gradient, out.lambda_min,
                              out.lambda_max)
    if rel > gtol:
        warnings.warn(
            f"U is not a critical point: ||grad L(U)||_F = {gnorm:.3e}, relative gradient "
            f"{rel:.2e} > gtol = {gtol:g}; local rates describe a minimiser, not this point",
            NotAMinimiserWarning, stacklevel=3)
    if out.indefinite:
        warnings.warn(
            f"the effective Hessian at U is indefinite: lambda_min = "
            f"{min(lam1, out.excess_min) if out.rank is not None else lam1:.6e} < 0 "
            f"(lambda_max = {lamN:.6e}); U is not a local minimiser of the quotient",
            IndefiniteHessianWarning, stacklevel=3)


# ------------------------------------------------------------------ measurements
def _aligned_errors(U: np.ndarray, E: np.ndarray) -> np.ndarray:
    """``xi = (U + e) R - U = U (R - I) + e R`` for each deviation ``e``, with the Procrustes
    ``R = argmin_{R in O(r)} ||(U + e) R - U||_F`` from :func:`quadnet.geometry.align`."""
    eye = np.eye(U.shape[1])
    out = np.empty_like(E)
    for i, e in enumerate(E):
        R = align(U + e, U)
        out[i] = U @ (R - eye) + e @ R
    return out


def _prony2(x: np.ndarray, p: np.ndarray, rate0: float) -> float:
    """Fit ``p(x) = C exp(-a x) + D exp(-2 a x)`` (relative residual); return ``a``.

    Variable projection: ``C, D`` by linear least squares for each ``a``; ``a`` by bounded
    Brent in ``[0.9 a0, 1.1 a0]`` around the log-linear estimate ``a0``.
    """
    w = 1.0 / np.abs(p)

    def misfit(a: float) -> float:
        A = np.stack([np.exp(-a * x), np.exp(-2.0 * a * x)], axis=1) * w[:, None]
        coef, *_ = np.linalg.lstsq(A, p * w, rcond=None)
        res = A @ coef - p * w
        return float(res @ res)

    lo, hi = 0.9 * rate0, 1.1 * rate0
    sol = scipy.optimize.minimize_scalar(misfit, bounds=(lo, hi), method="bounded",
                                         options={"xatol": 1e-15 * abs(rate0), "maxiter": 500})
    return float(sol.x)


def _window(p: np.ndarray, floor: float) -> np.ndarray:
    a = np.abs(p)
    sel = (a <= a[0] / 10.0) & (a >= floor)
    if np.count_nonzero(sel) < 8:
        raise ValueError(
            "too few usable samples for the rate fit (the slow component fell to the rounding "
            "floor too early); raise amplitude or n_samples")
    if np.any(np.sign(p[sel]) != np.sign(p[sel][0])):
        raise ValueError("the slow-mode projection changes sign: the trajectory is not in the "
                         "local regime; lower amplitude")
    return sel


def _setup(loss: Loss, U, curvature: LocalCurvature | None, amplitude: float, seed,
           gtol: float | None, decades: float):
    sp = _split(U)
    if 0 < sp.rank < U.shape[1]:
        # over-parameterised point: a perturbation in the signal part keeps the flow on
        # U_k(t) V_k^T, the flow of the rank-k factor, whose rates are those of the signal block
        U = sp.U_k
        if isinstance(curvature, LocalCurvature) and curvature.v_min.shape != U.shape:
            curvature = dataclasses.replace(curvature, v_min=curvature.v_min @ sp.V_k,
                                            v_max=curvature.v_max @ sp.V_k)
    if gtol is None:
        gtol = 1e-3 * amplitude * 10.0 ** (-decades)
    if curvature is None:
        curvature = local_curvature(loss, U, gtol=gtol)
    elif curvature.relative_gradient > gtol:
        warnings.warn(f"relative gradient {curvature.relative_gradient:.2e} > gtol = {gtol:g}: "
                      "the measured rate is biased by the distance to the true critical point",
                      NotAMinimiserWarning, stacklevel=3)
    if curvature.lambda_min <= curvature.error_bound:
        raise ValueError(
            f"no local decay rate at U: the effective Hessian has lambda_min = "
            f"{curvature.lambda_min:.6e} (<= {curvature.error_bound:.1e}, "
            f"{'indefinite' if curvature.indefinite else 'singular'}); gradient flow does not "
            "converge exponentially to U")
    rng = as_rng(seed, record=False)
    g = PSDQuotient(*U.shape).random_tangent_vector(U, rng)
    return loss, U, curvature, amplitude, g


def _start(U: np.ndarray, v: np.ndarray, g: np.ndarray, amplitude: float) -> np.ndarray:
    e0 = v + g
    return e0 * (amplitude * np.linalg.norm(U) / np.linalg.norm(e0))


@dataclass(frozen=True)
class FlowDecayRate:
    """Measured local decay rate of gradient flow vs ``lambda_min`` (:func:`flow_decay_rate`).

    Attributes:
        rate: the fitted rate (two-term model on the slow-mode projection).
        lambda_min: the effective Hessian's smallest eigenvalue.
        relative_error: ``|rate - lambda_min| / lambda_min``.
        loglinear_rate: log-linear fit of the same projection (no nonlinear term).
        naive_rate: late-time log-slope of ``||Q(t) - Q*||_F`` over the last quarter.
        t, projection, error_norm: the samples (``p(t)`` and ``||Q(t) - Q*||_F``).
        nfev: right-hand-side evaluations of the integrator.
    """

    rate: float
    lambda_min: float
    relative_error: float
    loglinear_rate: float
    naive_rate: float
    t: np.ndarray = field(repr=False)
    projection: np.ndarray = field(repr=False)
    error_norm: np.ndarray = field(repr=False)
    nfev: int = 0

    @property
    def naive_relative_error(self) -> float:
        return abs(self.naive_rate - self.lambda_min) / self.lambda_min

    @property
    def loglinear_relative_error(self) -> float:
        return abs(self.loglinear_rate - self.lambda_min) / self.lambda_min


#: The arguments shared by :func:`flow_decay_rate` and :func:`descent_contraction`.
#: ``decades`` is bounded by what float64 can resolve: the slow mode decays by ``10^decades``
#: from a relative size ``amplitude <= 0.1`` and must stay above the rounding floor ``1e-12``.
_RATE = {"loss": LOSS, "U": Factor(full_rank=False),
         "amplitude": Real(0, 0.1, closed="neither"), "decades": Real(0, 12, closed="right"),
         "n_samples": Integer(20, 10**6), "seed": Seed(raw=True),
         "curvature": Optional(Instance(LocalCurvature, "a LocalCurvature")),
         "gtol": Optional(_POSITIVE)}


@validate_params(_RATE | {"rtol": Real(0, 1e-3, closed="right")})
def flow_decay_rate(loss: Loss, U, *, amplitude: float = 1e-4, decades: float = 4.0,
                    n_samples: int = 400, rtol: float = 1e-10, seed=0,
                    curvature: LocalCurvature | None = None,
                    gtol: float | None = None) -> FlowDecayRate:
    r"""Measure the local exponential decay rate of gradient flow at a minimiser ``U``.

    Method (module docstring): start at ``U + e_0``, ``e_0`` horizontal of relative size
    ``amplitude`` along ``v_1 + g`` (``g`` a random unit horizontal vector from ``seed``);
    integrate ``e' = -grad L(U + e)`` with DOP853 (``rtol``; ``atol`` = 1e-14 ``||U||``, above
    the gradient's rounding noise) until the slow mode has decayed by ``10^decades``;
    project the aligned error on ``v_1`` and fit ``C e^{-lambda t} + D e^{-2 lambda t}``.

    Raises ``ValueError`` when the effective Hessian is not positive definite (no decay) and
    warns :class:`NotAMinimiserWarning` when ``U`` is not critical to the precision needed
    (``gtol`` defaults to ``1e-3 amplitude 10^-decades``).
    """
    loss, U, curv, amplitude, g = _setup(loss, U, curvature, amplitude, seed, gtol, decades)
    d, r = U.shape
    lam, v = curv.lambda_min, curv.v_min
    T = decades * math.log(10.0) / lam
    ts = np.linspace(0.0, T, n_samples)
    scale = float(np.linalg.norm(U))

    def rhs(_t, y):
        return -np.asarray(loss.factor_gradient(U + y.reshape(d, r))).reshape(-1)

    sol = solve_ivp(rhs, (0.0, T), _start(U, v, g, amplitude).reshape(-1), method="DOP853",
                    t_eval=ts, rtol=rtol, atol=1e-14 * scale)
    if not sol.success:
        raise ValueError(f"flow_decay_rate: integration failed: {sol.message}")
    E = sol.y.T.reshape(-1, d, r)
    p = np.einsum("nij,ij->n", _aligned_errors(U, E), v)
    err = np.array([np.linalg.norm(U @ e.T + e @ U.T + e @ e.T) for e in E])
    sel = _window(p, floor=1e-12 * scale)
    x, y = ts[sel], p[sel]
    loglin = -float(np.polyfit(x, np.log(np.abs(y)), 1)[0])
    rate = _prony2(x - x[0], y, loglin)
    q = max(len(ts) // 4, 2)
    naive = -float(np.log(err[-1] / err[-q]) / (ts[-1] - ts[-q]))
    return FlowDecayRate(rate, lam, abs(rate - lam) / lam, loglin, naive, ts, p, err,
                         int(sol.nfev))


@dataclass(frozen=True)
class DescentContraction:
    """Measured per-step contraction of gradient descent near a minimiser.

    Attributes:
        contraction: measured ``|mu|`` (fit on the dominant mode's projection).
        predicted: ``max_i |1 - eta lambda_i|``.
        relative_error: ``|contraction - predicted| / predicted``.
        eta, lambda_min, lambda_max: the step and the extreme curvature.
        dominant: ``"lambda_min"`` or ``"lambda_max"``, the mode attaining the maximum.
        log_rate: measured ``-log(contraction)`` per step; compare with ``-log(1 - eta lambda_min)``
            (:attr:`log_prediction`) and the surrogate ``eta lambda_min`` (:attr:`surrogate`).
        norm_ratio: late-step ratio ``||xi_{k+1}|| / ||xi_k||`` (naive estimate).
        steps: number of steps taken.
    """

    contraction: float
    predicted: float
    relative_error: float
    eta: float
    lambda_min: float
    lambda_max: float
    dominant: str
    norm_ratio: float
    steps: int

    @property
    def log_rate(self) -> float:
        return -math.log(self.contraction)

    @property
    def log_prediction(self) -> float:
        """``-log(1 - eta lambda_min)`` (``inf`` if ``eta lambda_min >= 1``)."""
        x = 1.0 - self.eta * self.lambda_min
        return -math.log(x) if x > 0 else math.inf

    @property
    def surrogate(self) -> float:
        """The continuous-time surrogate ``eta lambda_min``."""
        return self.eta * self.lambda_min


@validate_params(_RATE | {"eta": _POSITIVE, "max_steps": Integer(10, 10**8)})
def descent_contraction(loss: Loss, U, eta: float, *, amplitude: float = 1e-4,
                        decades: float = 4.0, max_steps: int = 200_000, n_samples: int = 400,
                        seed=0, curvature: LocalCurvature | None = None,
                        gtol: float | None = None) -> DescentContraction:
    r"""Measure the per-step contraction of gradient descent ``U_{k+1} = U_k - eta grad L(U_k)``.

    Runs descent from ``U + e_0`` (as in :func:`flow_decay_rate`) in deviation coordinates
    ``e_{k+1} = e_k - eta grad L(U + e_k)`` until the dominant mode has decayed by
    ``10^decades``, projects the aligned error on the eigenvector ``v`` attaining
    ``max_i |1 - eta lambda_i|`` and fits ``p_k = C mu^k + D mu^{2k}``.

    Raises ``ValueError`` for ``eta >= 2 / lambda_max`` (locally unstable; the message gives
    the limit) or a non-positive-definite effective Hessian, or when more than ``max_steps``
    steps would be needed.
    """
    loss, U, curv, amplitude, g = _setup(loss, U, curvature, amplitude, seed, gtol, decades)
    l1, lN = curv.lambda_min, curv.lambda_max
    if eta >= curv.stable_step:
        raise ValueError(
            f"eta = {eta:g} >= 2/lambda_max = {curv.stable_step:.6g}: gradient descent is locally "
            f"unstable at U (max_i |1 - eta lambda_i| = {curv.contraction(eta):.6g} >= 1)")
    mu_min, mu_max = 1.0 - eta * l1, 1.0 - eta * lN
    if abs(mu_min) >= abs(mu_max):
        dominant, v, mu = "lambda_min", curv.v_min, mu_min
    else:
        dominant, v, mu = "lambda_max", curv.v_max, mu_max
    predicted = abs(mu)
    # -log|mu| per step; log1p keeps a tiny eta (1 - eta lambda rounding to 1) from giving 0
    lam = l1 if dominant == "lambda_min" else lN
    rate = -math.log1p(-eta * lam) if mu > 0 else -math.log(predicted)
    need = decades * math.log(10.0) / rate if rate > 0 else math.inf
    if need > max_steps:
        raise ValueError(f"descent_contraction needs {need:.6g} steps > max_steps = {max_steps} "
                         f"(per-step contraction |1 - eta lambda| with eta lambda = "
                         f"{eta * lam:.6g}, eta = {eta:g}); raise max_steps or eta")
    steps = math.ceil(need)
    every = max(1, steps // n_samples)
    e = _start(U, v, g, amplitude)
    ks, E = [0], [e.copy()]
    for k in range(1, steps + 1):
        e = e - eta * np.asarray(loss.factor_gradient(U + e))
        if not np.all(np.isfinite(e)):
            raise ValueError(f"gradient descent diverged at step {k} with eta = {eta:g}")
        if k % every == 0 or k == steps:
            ks.append(k)
            E.append(e.copy())
    ks = np.asarray(ks, dtype=float)
    Xi = _aligned_errors(U, np.stack(E))
    p = np.einsum("nij,ij->n", Xi, v)
    sel = _window(p if mu > 0 else np.abs(p), floor=1e-12 * float(np.linalg.norm(U)))
    x, y = ks[sel], p[sel]
    loglin = -float(np.polyfit(x, np.log(np.abs(y)), 1)[0])
    if mu < 0:  # alternating sign: fit |p_k| = |C| |mu|^k + D' |mu|^{2k} with the same model
        y = np.abs(y)
    a = _prony2(x - x[0], y, loglin)
    measured = math.exp(-a)
    # naive: ratio of aligned error norms over the last recorded stretch
    n1, n0 = np.linalg.norm(Xi[-1]), np.linalg.norm(Xi[-2])
    norm_ratio = float((n1 / n0) ** (1.0 / max(ks[-1] - ks[-2], 1.0)))
    return DescentContraction(measured, predicted, abs(measured - predicted) / predicted, eta,
                              l1, lN, dominant, norm_ratio, steps)
