"""Training quadratic and deep linear nets on the weight-decayed squared loss (quadnet theory §6).

The objective (written once in ``autograd.numpy``, :func:`_make_objective`, whose exact
Hessian drives the Newton polish; the gradient used by L-BFGS is the hand-derived numpy
version :func:`_make_value_and_grad`, tested against autograd):

    J(θ) = (1/n) Σ_i ½‖f(x_i; θ) − y_i‖² + (λ/2)‖θ‖²_F,

``θ = W`` for a :class:`~quadnet.features.QuadraticNet` (``a`` is fixed) and ``θ = (W_1, …, W_L)``
for a :class:`~quadnet.features.DeepLinearNet`. :func:`train` minimises it in float64 with
scipy's L-BFGS-B (``ftol = 0``: it stops on the gradient, not on a stalled objective) and,
when that leaves ``‖∇J‖ > gtol``, polishes with Newton steps on ``∇J = 0`` (the exact
autograd Hessian, pseudo-inverted) and, if those do not reach ``gtol``, scipy's
``trust-exact`` (Newton steps inside a trust region; globally convergent, they also escape
saddles) followed by Newton again. It never pretends: the returned net carries a
:class:`~quadnet.features.TrainInfo` with the final gradient norm, and a
:class:`ConvergenceWarning` is issued when ``‖∇J‖ > gtol``.
"""

from __future__ import annotations

import math

import warnings
from dataclasses import dataclass

import autograd.numpy as anp
import numpy as np
from autograd import hessian
from scipy.optimize import minimize

from quadnet._docstrings import fill
from quadnet._threads import single_threaded
from quadnet._validation import (
    Boolean,
    Integer,
    IsCallable,
    NonFiniteResultError,
    Optional,
    _extreme_arguments,
    as_array,
    as_int,
    as_positive,
    renamed_keyword,
    validate_params,
)
from quadnet.dynamics import Trajectory

from quadnet.exceptions import ConvergenceWarning, DivergenceError, NotCriticalWarning
from quadnet.features.fact import (
    DeepLinearNet,
    QuadraticNet,
    NET,
    _LAYER,
    _POS,
    DATA,
    DATA_FITS,
    TrainInfo,
    _moment_C,
    _targets,
    bfact_matrix,
    cosine,
    fact_matrix,
)

__all__ = [
    "FactReport",
    "NetTrajectory",
    "fact_identity",
    "gd_path",
    "grad_norm_at",
    "objective_and_grad",
    "train",
]

#: The toy problem of the :func:`train` and :func:`gd_path` examples (``y = x_1^2`` on 20
#: Gaussian points in the plane), written once and substituted into both docstrings.
_DOC = {"example_data": """>>> import numpy as np
>>> from quadnet.features import QuadraticNet
>>> rng = np.random.default_rng(0)
>>> X = rng.standard_normal((20, 2)); y = X[:, 0] ** 2"""}


def _shapes(net) -> list[tuple[int, int]]:
    return [p.shape for p in net.params()]


def _unflatten(theta, shapes):
    out, k = [], 0
    for (m, n) in shapes:
        out.append(anp.reshape(theta[k:k + m * n], (m, n)))
        k += m * n
    return out


def _flatten(params) -> np.ndarray:
    return np.concatenate([np.ascontiguousarray(p).reshape(-1) for p in params])


def _make_objective(net, X: np.ndarray, y: np.ndarray, lam: float):
    """``θ ↦ J(θ)`` for the net's architecture (autograd-differentiable)."""

    shapes = _shapes(net)
    n = X.shape[0]
    if isinstance(net, QuadraticNet):
        a = np.asarray(net.a)

        def J(theta):
            (W,) = _unflatten(theta, shapes)
            f = anp.dot(anp.dot(X, W.T) ** 2, a)
            return 0.5 * anp.sum((f - y) ** 2) / n + 0.5 * lam * anp.sum(theta**2)
    else:
        def J(theta):
            Ws = _unflatten(theta, shapes)
            H = X.T
            for Wl in Ws:
                H = anp.dot(Wl, H)
            return 0.5 * anp.sum((H.T - y) ** 2) / n + 0.5 * lam * anp.sum(theta**2)
    return J


def _make_value_and_grad(net, X: np.ndarray, y: np.ndarray, lam: float):
    """``θ ↦ (J(θ), ∇J(θ))`` in plain numpy (≈15x faster than autograd on these sizes).

    Quadratic net: ``∇_W J = 2 D_a W C + λW`` with ``C = (1/n) Σ r_i x_i x_iᵀ`` (the same
    ``C`` as FACT's closed form). Deep linear net: backpropagation through ``H_l = H_{l−1}W_lᵀ``,
    ``∇_{W_l} J = G_lᵀ H_{l−1} + λW_l``, ``G_{l−1} = G_l W_l``, ``G_L = (H_L − Y)/n``.
    ``tests/features/test_fact.py`` checks both against autograd applied to :func:`_make_objective`.
    """

    shapes = _shapes(net)
    n = X.shape[0]
    if isinstance(net, QuadraticNet):
        a = np.asarray(net.a)
        (shape,) = shapes

        def vg(theta):
            W = theta.reshape(shape)
            r = (X @ W.T) ** 2 @ a - y
            val = 0.5 * (r @ r) / n + 0.5 * lam * (theta @ theta)
            grad = 2.0 * a[:, None] * (W @ _moment_C(X, r)) + lam * W
            return float(val), grad.reshape(-1)
    else:
        def vg(theta):
            Ws = [np.asarray(W) for W in _unflatten(theta, shapes)]
            Hs = [X]
            for Wl in Ws:
                Hs.append(Hs[-1] @ Wl.T)
            E = Hs[-1] - y
            val = 0.5 * np.sum(E * E) / n + 0.5 * lam * (theta @ theta)
            G = E / n
            grads = [None] * len(Ws)
            for k in range(len(Ws) - 1, -1, -1):
                grads[k] = G.T @ Hs[k] + lam * Ws[k]
                G = G @ Ws[k]
            return float(val), _flatten(grads)
    return vg


#: The table of the functions of a net, its data and its weight decay ``lam``, and the relation
#: of the data to the net.
_NET_LAM = {"net": NET} | DATA | {"lam": _POS}
_FITS = [DATA_FITS]


def _prepare(net, X, y, lam):
    return X, _targets(net, y), lam


@validate_params(_NET_LAM, relations=_FITS)
def objective_and_grad(net, X, y, lam) -> tuple[float, tuple[np.ndarray, ...]]:
    """``J`` and ``∇J``, the gradient as a tuple shaped like ``net.params()``.

    Examples
    --------
    >>> import numpy as np
    >>> from quadnet.features import QuadraticNet
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); y = np.array([2.0, 2.0])
    >>> J, (g,) = objective_and_grad(QuadraticNet(np.eye(2)), X, y, 1.0)
    >>> J, bool(np.allclose(g, 0.0))          # W = I is critical for lam = 1
    (1.5, True)
    """
    X, y, lam = _prepare(net, X, y, lam)
    with np.errstate(over="ignore", invalid="ignore"):
        val, g = _make_value_and_grad(net, X, y, lam)(_flatten(net.params()))
    if not (math.isfinite(val) and np.all(np.isfinite(g))):
        extreme = _extreme_arguments({"X": X, "y": y, "lam": lam})
        blame = f"; the extreme arguments: {', '.join(extreme)}" if extreme else ""
        raise NonFiniteResultError(
            f"objective_and_grad: J or grad J overflows float64 at lam = {lam:g} (the "
            f"weight-decay term lam ||theta||^2 / 2 or the loss exceeds 1e308){blame}")
    return float(val), tuple(np.array(p) for p in _unflatten(g, _shapes(net)))


@validate_params(_NET_LAM, relations=_FITS)
def grad_norm_at(net, X, y, lam) -> float:
    """Euclidean norm of the full gradient ``∇_θ J`` at ``net``.

    Examples
    --------
    >>> import numpy as np
    >>> from quadnet.features import QuadraticNet
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); y = np.array([2.0, 2.0])
    >>> grad_norm_at(QuadraticNet(np.eye(2)), X, y, 1.0)
    0.0
    """
    _, grads = objective_and_grad(net, X, y, lam)
    top = max(float(np.max(np.abs(g))) if g.size else 0.0 for g in grads)
    if top == 0:
        return 0.0
    norm = top * math.sqrt(sum(float(np.sum((g / top) ** 2)) for g in grads))  # no overflow
    if not math.isfinite(norm):
        raise NonFiniteResultError(f"grad_norm_at: ||grad J|| exceeds 1e308 at lam = {lam:g}; "
                                   f"use a smaller lam or rescale X and y")
    return norm


@validate_params(_NET_LAM | {"gtol": _POS, "polish": Boolean(), "warn": Boolean(),
                              "callback": Optional(IsCallable("callable"))},
                 relations=_FITS)
@fill(_DOC)
def train(net, X, y, lam, *, gtol: float = 1e-9, max_iter: int | None = None,
          polish: bool = True, polish_max_iter: int | None = None, callback=None,
          warn: bool = True, maxiter: int | None = None, polish_maxiter: int | None = None):
    r"""Minimise the weight-decayed squared loss from ``net``'s weights (quadnet theory §6).

    .. math:: J(\theta) = \frac1n \sum_i \tfrac12 \|f(x_i; \theta) - y_i\|^2
              + \frac\lambda2 \|\theta\|_F^2

    Stage 1: L-BFGS-B (``maxcor = 30``, ``ftol = 0``, ``gtol`` on the largest gradient
    entry). Stage 2 (if ``polish`` and ``‖∇J‖ > gtol``): Newton steps on ``∇J = 0`` with the
    exact (autograd) Hessian, pseudo-inverted (see :func:`_newton_on_gradient`); if that
    does not reach ``gtol``, scipy ``trust-exact`` and Newton again. The loops run with one
    BLAS thread (:func:`quadnet._threads.single_threaded`: the matrices are small).

    Parameters
    ----------
    net : QuadraticNet or DeepLinearNet
        The starting point.
    X : array_like, shape (n, d)
        Inputs.
    y : array_like, shape (n,) or (n, c)
        Targets.
    lam : float
        Weight decay ``lambda > 0``.
    gtol : float, default 1e-9
        Target gradient norm ``‖∇J‖``.
    max_iter : int, default 20000
        L-BFGS iteration budget (formerly ``maxiter``, still accepted with a
        ``DeprecationWarning``).
    polish : bool, default True
        Run the Newton / trust-region polish when L-BFGS stops above ``gtol``.
    polish_max_iter : int, default 200
        Iteration budget of each polish stage (formerly ``polish_maxiter``).
    callback : callable, optional
        ``callback(net_k)`` at every L-BFGS iterate (for paths).
    warn : bool, default True
        Issue a :class:`~quadnet.exceptions.ConvergenceWarning` when ``‖∇J‖ > gtol``.

    Returns
    -------
    QuadraticNet or DeepLinearNet
        A new net of the same kind; ``.info`` (:class:`~quadnet.features.TrainInfo`)
        reports the final gradient norm, objective and iterations per stage.

    Raises
    ------
    TypeError, ValueError
        For a bad net, data, ``lam``, ``gtol`` or budget.

    Examples
    --------
    {{example_data}}
    >>> net = train(QuadraticNet(0.5 * rng.standard_normal((2, 2))), X, y, 1e-2)
    >>> net.info.converged, net.info.grad_norm <= 1e-9
    (True, True)
    """
    max_iter = renamed_keyword(max_iter, maxiter, "max_iter", "maxiter", "train", default=20000,
                               stacklevel=4)
    polish_max_iter = renamed_keyword(polish_max_iter, polish_maxiter, "polish_max_iter",
                                      "polish_maxiter", "train", default=200, stacklevel=4)
    X, y, lam = _prepare(net, X, y, lam)
    max_iter = as_int(max_iter, "max_iter", minimum=1)
    polish_max_iter = as_int(polish_max_iter, "polish_max_iter", minimum=0)
    with single_threaded(), np.errstate(over="ignore", invalid="ignore"):
        try:
            out = _train(net, X, y, lam, gtol, max_iter, polish, polish_max_iter, callback, warn)
        except ValueError as exc:   # scipy's asarray_chkfinite on an overflowed iterate
            if "infs or NaNs" not in str(exc):
                raise
            raise _overflow(lam) from exc
    return out


def _overflow(lam: float) -> ValueError:
    return ValueError(f"train: lam = {lam:g} makes the objective overflow float64 during the "
                      f"optimisation (lam ||theta||^2 and the quasi-Newton curvature products "
                      f"~ (lam ||theta||)^2 must stay below 1e308); use a smaller lam or "
                      f"rescale X, y and the starting weights")


def _train(net, X, y, lam, gtol, maxiter, polish, polish_maxiter, callback, warn):
    shapes = _shapes(net)
    J = _make_objective(net, X, y, lam)
    fun = _make_value_and_grad(net, X, y, lam)

    cb = None
    if callback is not None:
        def cb(theta):
            callback(net.with_params([np.array(p) for p in _unflatten(theta, shapes)]))

    theta = _flatten(net.params())
    stages = []
    res = minimize(fun, theta, jac=True, method="L-BFGS-B", callback=cb,
                   options={"maxiter": maxiter, "maxcor": 30, "ftol": 0.0,
                            "gtol": gtol / np.sqrt(theta.size), "maxls": 50})
    theta = res.x
    val, g = fun(theta)
    gnorm = float(np.linalg.norm(g))
    stages.append(("L-BFGS-B", int(res.nit), gnorm))
    message = str(res.message)
    if polish and gnorm > gtol and polish_maxiter > 0:
        H = hessian(J)
        # Newton on the gradient first: from an L-BFGS end point it usually needs 1-3 steps.
        theta, val, gnorm, k = _newton_on_gradient(fun, H, theta, gtol, min(10, polish_maxiter))
        stages.append(("Newton-lstsq", k, gnorm))
        if gnorm > gtol:
            # still far: trust regions (globally convergent, escape saddles), then Newton again
            with warnings.catch_warnings():
                # scipy warns when the trust region collapses at the rounding floor of J;
                # the final gradient norm is reported below instead.
                warnings.simplefilter("ignore", RuntimeWarning)
                warnings.simplefilter("ignore", UserWarning)
                res2 = minimize(fun, theta, jac=True, hess=lambda t: np.asarray(H(t)),
                                method="trust-exact",
                                options={"gtol": gtol, "maxiter": polish_maxiter})
            val2, g2 = fun(res2.x)
            g2norm = float(np.linalg.norm(g2))
            stages.append(("trust-exact", int(res2.nit), g2norm))
            if g2norm < gnorm and val2 <= val + 1e-12 * max(1.0, abs(val)):
                theta, val, gnorm, message = res2.x, val2, g2norm, str(res2.message)
            if gnorm > gtol:
                theta, val, gnorm, k = _newton_on_gradient(fun, H, theta, gtol, polish_maxiter)
                stages.append(("Newton-lstsq", k, gnorm))
    if not (math.isfinite(gnorm) and math.isfinite(val) and np.all(np.isfinite(theta))):
        raise _overflow(lam)
    converged = gnorm <= gtol
    info = TrainInfo(grad_norm=gnorm, objective=float(val), converged=bool(converged), gtol=gtol,
                     n_iter=int(sum(s[1] for s in stages)), stages=tuple(stages), message=message)
    if warn and not converged:
        warnings.warn(ConvergenceWarning(
            f"train stopped with ||grad J|| = {gnorm:.3e} > gtol = {gtol:.1e} after "
            f"{info.n_iter} iterations ({'; '.join(f'{m}: {k} it, |g|={v:.2e}' for m, k, v in stages)})",
            gnorm), stacklevel=4)
    return net.with_params([np.array(p) for p in _unflatten(theta, shapes)], info)


def _newton_on_gradient(fun, H, theta, gtol: float, maxiter: int):
    """Newton iteration on ``∇J = 0``: ``δ = −H⁺ g`` (pseudo-inverse, eigenvalues below
    ``1e-12·max|eig|`` dropped), accepted only if it lowers ``‖∇J‖`` (halving up to 20 times).

    A trust-region method measures progress by the *objective*, whose changes fall below the
    rounding of ``J`` long before ``‖∇J‖`` reaches 1e-9 on degenerate minimisers (the
    continuous symmetries of the nets make ``H`` singular); the gradient is the quantity we
    certify, so this last stage works on it directly. The gradient of an invariant objective
    is orthogonal to the symmetry orbits, i.e. to ``ker H`` at the minimiser, so ``H⁺g`` is
    the right step.
    """
    val, g = fun(theta)
    gnorm = float(np.linalg.norm(g))
    k = 0
    while gnorm > gtol and k < maxiter:
        k += 1
        w, V = np.linalg.eigh(np.asarray(H(theta)))
        keep = np.abs(w) > 1e-12 * np.abs(w).max()
        step = -V[:, keep] @ ((V[:, keep].T @ g) / w[keep])
        t, improved = 1.0, False
        for _ in range(20):
            v_new, g_new = fun(theta + t * step)
            if np.isfinite(v_new) and np.linalg.norm(g_new) < gnorm:
                theta, val, g = theta + t * step, v_new, g_new
                gnorm, improved = float(np.linalg.norm(g_new)), True
                break
            t *= 0.5
        if not improved:
            break
    return theta, float(val), gnorm, k


class NetTrajectory(Trajectory):
    """A :class:`quadnet.Trajectory` of nets: ``t`` the recorded steps, ``loss`` the objective
    ``J`` there, ``nets`` the nets.

    It still reads as the list of ``(step, net)`` pairs that :func:`gd_path` returned in
    quadnet 0.1: iterating yields the pairs and ``path[i]`` is the ``i``-th pair.

    Examples
    --------
    >>> import numpy as np
    >>> from quadnet.features import QuadraticNet
    >>> tr = NetTrajectory([0, 5], [QuadraticNet(np.eye(2))] * 2, [1.0, 0.5])
    >>> [k for k, _ in tr], tr.t.tolist(), len(tr)
    ([0, 5], [0.0, 5.0], 2)
    """

    def __init__(self, steps, nets, loss, info: dict | None = None):
        k = as_array(steps, "steps", ndim=1)
        if k.size == 0:
            raise ValueError("steps must hold at least one step, got an empty array")
        if np.any(k < 0) or np.any(k != np.round(k)):
            raise ValueError("steps must be integers >= 0 (the recorded step indices)")
        if np.any(np.diff(k) < 0):
            raise ValueError("steps must be non-decreasing (the order they were recorded in)")
        if isinstance(nets, (str, bytes, np.ndarray)) or not hasattr(nets, "__len__"):
            raise TypeError(f"nets must be a sequence of QuadraticNet or DeepLinearNet, got "
                            f"{type(nets).__name__}")
        nets = list(nets)
        for i, net in enumerate(nets):
            if not isinstance(net, (QuadraticNet, DeepLinearNet)):
                raise TypeError(f"nets[{i}] must be a QuadraticNet or DeepLinearNet, got "
                                f"{type(net).__name__}")
        loss = as_array(loss, "loss", ndim=1)
        if np.any(loss < 0):
            raise ValueError(f"loss must be >= 0 (the objective J is a sum of squares plus a "
                             f"weight decay), got minimum {loss.min():g}")
        if not len(nets) == loss.size == k.size:
            raise ValueError(f"steps, nets and loss must have one entry per recorded step, got "
                             f"lengths {k.size}, {len(nets)} and {loss.size}")
        if info is not None and not isinstance(info, dict):
            raise TypeError(f"info must be a dict or None, got {type(info).__name__}")
        super().__init__(k, None, loss, {} if info is None else info)
        self.nets = nets
        self.steps = [int(v) for v in k]

    @property
    def Q(self) -> np.ndarray:
        """``W^T W`` of the first layer along the path, shape ``(n, d, d)``."""
        return np.stack([n.params()[0].T @ n.params()[0] for n in self.nets])

    def __iter__(self):
        return iter(zip(self.steps, self.nets))

    def __getitem__(self, i):
        if isinstance(i, slice):
            return list(zip(self.steps, self.nets))[i]
        return self.steps[i], self.nets[i]


@validate_params(_NET_LAM | {"steps": Integer(0), "record_every": Integer(1)}, relations=_FITS)
@fill(_DOC)
def gd_path(net, X, y, lam, *, eta: float | None = None, steps: int, record_every: int = 1,
            lr: float | None = None) -> NetTrajectory:
    r"""Plain gradient descent ``θ ← θ − eta ∇J(θ)`` on the FACT objective (quadnet theory §6).

    Records step 0 and every ``record_every``-th step (and the last).

    Parameters
    ----------
    net : QuadraticNet or DeepLinearNet
        The start.
    X, y : array_like
        Data, as for :func:`train`.
    lam : float
        Weight decay ``> 0``.
    eta : float
        Step size ``> 0`` (formerly ``lr``, still accepted with a ``DeprecationWarning``).
    steps : int
        Number of steps ``>= 0``.
    record_every : int, default 1
        Recording stride.

    Returns
    -------
    NetTrajectory
        A :class:`quadnet.Trajectory` (``t`` steps, ``loss`` objective values) that also
        iterates as ``(step, net)`` pairs.

    Raises
    ------
    TypeError, ValueError
        For bad arguments.
    quadnet.exceptions.DivergenceError
        If the iterates blow up (non-finite objective): choose a smaller ``eta``.

    Examples
    --------
    {{example_data}}
    >>> path = gd_path(QuadraticNet(0.3 * np.eye(2)), X, y, 0.1, eta=0.05, steps=4,
    ...                record_every=2)
    >>> [k for k, _ in path], bool(path.loss[-1] < path.loss[0])
    ([0, 2, 4], True)
    """
    eta = renamed_keyword(eta, lr, "eta", "lr", "gd_path", stacklevel=4)
    X, y, lam = _prepare(net, X, y, lam)
    eta = as_positive(eta, "eta")
    shapes = _shapes(net)
    vg = _make_value_and_grad(net, X, y, lam)
    theta = _flatten(net.params())
    ks, nets, vals = [0], [net], []
    with single_threaded():
        v, g = vg(theta)
        vals.append(float(v))
        for k in range(1, steps + 1):
            if not np.isfinite(v):
                raise DivergenceError(f"gradient descent diverged at step {k} (eta = {eta:g} "
                                      "is too large)")
            theta = theta - eta * np.asarray(g)
            v, g = vg(theta)
            if k % record_every == 0 or k == steps:
                if not np.isfinite(v):
                    raise DivergenceError(f"gradient descent diverged at step {k} (eta = "
                                          f"{eta:g} is too large)")
                ks.append(k)
                nets.append(net.with_params([np.array(p) for p in _unflatten(theta, shapes)]))
                vals.append(float(v))
    return NetTrajectory(ks, nets, vals, {"eta": eta, "steps": steps})


@dataclass(frozen=True)
class FactReport:
    """The identity (★) at one point: ``‖WᵀW − FACT‖_F`` against ``‖W‖₂‖∇_W J‖_F/λ``.

    ``residual_identity`` is ``‖(WᵀW − FACT) − Wᵀ∇_W J/λ‖_F / ‖WᵀW‖_F`` (rounding only).
    ``cos_lower_bound = √(1 − (bound/‖WᵀW‖_F)²)`` (``−1`` when ``bound ≥ ‖WᵀW‖_F``) is a
    certified lower bound on ``cos_fact``: every matrix within Frobenius distance ``b`` of
    ``WᵀW`` makes an angle at most ``arcsin(b/‖WᵀW‖_F)`` with it.

    Examples
    --------
    >>> import numpy as np
    >>> from quadnet.features import QuadraticNet
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); y = np.array([2.0, 2.0])
    >>> rep = fact_identity(QuadraticNet(np.eye(2)), X, y, 1.0)
    >>> round(rep.cos_lower_bound, 12), rep.error
    (1.0, 0.0)
    """

    cos_fact: float
    cos_bfact: float
    error: float
    bound: float
    berror: float
    grad_norm_layer: float
    grad_norm: float
    rel_error: float
    residual_identity: float
    cos_lower_bound: float
    wtw_norm: float


@validate_params(_NET_LAM | {"layer": Integer(0), "tol": _POS}, relations=[*_FITS, *_LAYER])
def fact_identity(net, X, y, lam, layer: int = 0, *, tol: float = 1e-6) -> FactReport:
    """Measure FACT at ``net``: cosines, the error of ``WᵀW = FACT`` and its a-priori bound.

    Uses the exact identity (★) ``WᵀW − FACT = Wᵀ(∇_W J)/λ`` (for ``a = 1``:
    ``U(∇_U J)ᵀ/λ``, quadnet theory §6), so ``error <= bound = ‖W‖₂ ‖∇_W J‖_F / λ`` always.
    Warns :class:`NotCriticalWarning` (with the gradient norm) when the relative gradient
    ``‖∇_θ J‖ / (λ‖θ‖)`` exceeds ``tol``: FACT is then not expected to hold.

    Examples
    --------
    >>> import numpy as np
    >>> from quadnet.features import QuadraticNet
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); y = np.array([2.0, 2.0])
    >>> rep = fact_identity(QuadraticNet(np.eye(2)), X, y, 1.0)   # a critical point
    >>> rep.error <= rep.bound + 1e-15, round(rep.cos_fact, 12)
    (True, 1.0)
    """
    y = _targets(net, y)
    _, grads = objective_and_grad(net, X, y, lam)
    params = net.params()
    W, G = params[layer], grads[layer]
    WtW, WWt = W.T @ W, W @ W.T
    F = fact_matrix(net, X, y, lam, layer)
    bF = bfact_matrix(net, X, y, lam, layer)
    gnorm = float(np.sqrt(sum(np.sum(g * g) for g in grads)))
    pnorm = float(np.sqrt(sum(np.sum(p * p) for p in params)))
    if gnorm > tol * lam * max(pnorm, np.finfo(float).tiny):
        warnings.warn(NotCriticalWarning(
            f"net is not near a critical point of J: ||grad J|| = {gnorm:.3e} > tol*lam*||theta|| "
            f"= {tol * lam * pnorm:.3e}; FACT holds only at critical points", gnorm), stacklevel=3)
    with np.errstate(over="ignore", invalid="ignore"):
        report = _fact_report(W, G, WtW, WWt, F, bF, gnorm, lam)
    if not all(math.isfinite(getattr(report, f)) for f in report.__dataclass_fields__):
        raise ValueError(f"fact_identity: lam = {lam:g} is too small for these weights: the "
                         f"report's norms (||W^T W - FACT||, the bound ||W|| ||grad J|| / lam) "
                         f"overflow float64")
    return report


def _fact_report(W, G, WtW, WWt, F, bF, gnorm, lam):
    err = float(np.linalg.norm(WtW - F))
    wnorm = float(np.linalg.norm(WtW))
    resid = np.linalg.norm((WtW - F) - W.T @ G / lam) / max(wnorm, np.finfo(float).tiny)
    bound = float(np.linalg.norm(W, 2) * np.linalg.norm(G) / lam)
    return FactReport(
        cos_fact=cosine(WtW, F),
        cos_bfact=cosine(WWt, bF),
        error=err,
        bound=bound,
        berror=float(np.linalg.norm(WWt - bF)),
        grad_norm_layer=float(np.linalg.norm(G)),
        grad_norm=gnorm,
        rel_error=err / max(wnorm, np.finfo(float).tiny),
        residual_identity=float(resid),
        cos_lower_bound=float(np.sqrt(1.0 - (bound / wnorm) ** 2)) if bound < wnorm else -1.0,
        wtw_norm=wnorm,
    )
