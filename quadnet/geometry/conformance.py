"""Diagnostics in the spirit of Manopt's checkgradient / checkhessian / checkmanifold.

Small independent tools: :func:`taylor_errors` and :func:`taylor_slope` (the log-log slope
of a Taylor remainder), :func:`check_gradient` (slope 2), :func:`check_hessian`
(slope 3, symmetry, zero on vertical directions), and :func:`check_manifold`, a conformance
suite for :class:`quadnet.PSDQuotient`-like manifolds (quadnet theory §1, on full-rank and
rank-deficient factors, ``docs/stratified.md``) that raises ``AssertionError`` naming the
identity that failed and otherwise returns the measured errors; and
:func:`compare_pymanopt_optimisers`, pymanopt's optimisers on ``PSDQuotient`` beside
pymanopt's ``PSDFixedRank``.
"""

from __future__ import annotations

import math
import numbers
import time
import warnings

import numpy as np

import quadnet.geometry._kernels as K
from quadnet._docstrings import fill
from quadnet._linalg import random_orthogonal as _random_orthogonal
from quadnet._validation import (
    Array,
    Boolean,
    Converted,
    Integer,
    IsCallable,
    Optional,
    Real,
    Relation,
    Seed,
    Sequence,
    Options,
    Symmetric,
    as_array,
    memory_guard,
    rank_at_most_dimension,
    validate_params,
)
from quadnet.geometry.manifold import bures_wasserstein, lyapunov_skew
from quadnet.losses import LOSS, FrobeniusLoss, Loss

__all__ = [
    "BOUNDARY_EXCEPTIONS",
    "check_gradient",
    "check_hessian",
    "check_manifold",
    "compare_pymanopt_optimisers",
    "eckart_young_value",
    "random_orthogonal",
    "taylor_errors",
    "taylor_slope",
]


@validate_params({"r": Integer(1), "rng": Seed(), "improper": Optional(Boolean())},
                 relations=[memory_guard(("r",), lambda a: 24.0 * a["r"] ** 2,
                                         "the r x r Gaussian matrix and its QR factors")])
def random_orthogonal(r: int, rng, *, improper: bool | None = None) -> np.ndarray:
    """A Haar-random ``R`` in ``O(r)`` (``quadnet._linalg.random_orthogonal``, Mezzadri 2007).

    Parameters
    ----------
    r : int
        Size, ``>= 1``.
    rng : int or numpy.random.Generator
        Seed or stream (same seed, same bits).
    improper : bool, optional
        ``True``/``False`` forces ``det R = -1``/``+1``.

    Returns
    -------
    ndarray, shape (r, r)
        ``R`` with ``R^T R = I``.

    Examples
    --------
    >>> import numpy as np
    >>> R = random_orthogonal(3, 0, improper=True)
    >>> bool(np.allclose(R.T @ R, np.eye(3))), round(float(np.linalg.det(R)), 12)
    (True, -1.0)
    """
    return _random_orthogonal(r, rng, improper=improper)


def _real(x, name: str, *, positive: bool = False) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}")
    x = float(x)
    if not math.isfinite(x) or (positive and x <= 0):
        raise ValueError(f"{name} must be finite{' and > 0' if positive else ''}, got {x}")
    return x


def _random_unitary(r: int, rng: np.random.Generator, *, det_phase: bool = False
                    ) -> np.ndarray:
    """A Haar-random ``R`` in ``U(r)``: QR of a complex Gaussian with the phases of ``diag(R)``
    fixed (Mezzadri 2007); ``det_phase=True`` multiplies a column by ``-1`` as well (``U(r)`` is
    connected: no second component to visit, but a second draw)."""
    G = rng.standard_normal((2, r, r))
    Qm, Rm = np.linalg.qr(G[0] + 1j * G[1])
    d = np.diag(Rm)
    R = Qm * (d / np.abs(d))
    if det_phase:
        R[:, 0] = -R[:, 0]
    return R


def _is_complex(M) -> bool:
    return getattr(M, "field", "real") == "complex"


def _gaussian(M, rng: np.random.Generator, shape: tuple) -> np.ndarray:
    """Standard Gaussian of ``shape``, complex ``CN(0, 1)`` on a complex manifold."""
    if not _is_complex(M):
        return rng.standard_normal(shape)
    g = rng.standard_normal((2,) + tuple(shape))
    return (g[0] + 1j * g[1]) * math.sqrt(0.5)


def _re(a: np.ndarray, b: np.ndarray) -> float:
    """The real inner product ``Re tr(a^* b)`` (the metric of both fields)."""
    return float(np.vdot(a, b).real)


def _steps(ts, name: str = "ts") -> np.ndarray:
    ts = as_array(ts, name, ndim=1)
    if ts.size == 0 or np.any(ts <= 0):
        raise ValueError(f"{name} must be a non-empty 1-d array of positive step sizes, got "
                         f"shape {ts.shape}")
    return ts


_MANIFOLD_API = ("d", "r", "dim", "projection", "horizontal_projection", "vertical_projection",
                 "retraction", "inner_product", "euclidean_to_riemannian_gradient",
                 "euclidean_to_riemannian_hessian", "random_point")


def _manifold(M):
    missing = [a for a in _MANIFOLD_API if not hasattr(M, a)]
    if missing:
        raise TypeError(f"manifold must be a PSDQuotient-like manifold (missing {missing[:3]}), "
                        f"got {type(M).__name__}")
    return M


_STEPS = Converted(lambda v, name: _steps(v, name), "a non-empty 1-d array of step sizes > 0",
                   bad=[("string", "abc"), ("None", None), ("negative", np.array([-1.0])),
                        ("empty", np.array([])), ("nan", np.array([np.nan]))])
_MANIFOLD = Converted(lambda v, name: _manifold(v), "a PSDQuotient-like manifold",
                      bad=[("string", "abc"), ("int", 3)], dims={"d": "d", "r": "r"})
_DR = Array(shape=("d", "r"))
#: Points and directions of the checks: real, or complex on a ``field="complex"`` manifold.
_DRX = Array(shape=("d", "r"), allow_complex=True)
_SCALAR = Real()
#: Largest ``trials`` of :func:`check_manifold` and ``max_iterations`` of
#: :func:`compare_pymanopt_optimisers` (both run dense work per unit).
MAX_TRIALS = 1000
MAX_OPTIMISER_ITERATIONS = 10**5


@validate_params({"f": IsCallable("a callable f(t) -> float"), "f0": _SCALAR, "linear": _SCALAR,
                  "quad": Optional(_SCALAR), "ts": _STEPS}, finite_result=False)
def taylor_errors(f, f0: float, linear: float, quad: float | None, ts) -> np.ndarray:
    """Taylor remainders ``|f(t) - f0 - t linear - t^2/2 quad|`` at each step ``t``.

    ``quad=None`` gives the first-order remainder (quadnet theory §7: Manopt-style checks).

    Parameters
    ----------
    f : callable
        ``t -> float``.
    f0, linear : float
        ``f(0)`` and the claimed first derivative.
    quad : float or None
        The claimed second derivative.
    ts : array_like, 1-d
        Positive steps.

    Returns
    -------
    ndarray

    Raises
    ------
    TypeError, ValueError
        Non-callable ``f``, non-real coefficients, bad steps, or a non-finite ``f(t)``.

    Examples
    --------
    >>> import numpy as np
    >>> e = taylor_errors(np.exp, 1.0, 1.0, 1.0, np.array([1e-2, 1e-1]))
    >>> bool(e[1] / e[0] > 500)                 # third order: ratio ~ 1000
    True
    """
    q = 0.0 if quad is None else quad
    out = np.array([abs(f(t) - f0 - t * linear - 0.5 * t * t * q) for t in ts], dtype=float)
    if not np.all(np.isfinite(out)):
        raise ValueError("taylor_errors: f(t) returned a non-finite value")
    return out


def _slope_args(args) -> str | None:
    ts, errs, window = args["ts"], args["errs"], args["window"]
    if errs.shape != ts.shape:
        return f"errs must have the shape of ts {ts.shape}, got {errs.shape}"
    if np.any(errs < 0):
        return "errs must be non-negative remainders"
    if window > ts.size:
        return f"window must be <= {ts.size}, got {window}"
    if np.unique(ts).size != ts.size:
        return "ts must hold distinct step sizes (a log-log fit needs them)"
    return None


@validate_params({"ts": _STEPS, "errs": Array(ndim=1), "floor": Real(0, None, closed="neither"),
                  "window": Integer(3)},
                 relations=[Relation(("ts", "errs", "window"), _slope_args,
                                     "``errs >= 0`` has the shape of ``ts`` (distinct steps); "
                                     "``window <= len(ts)``")])
def taylor_slope(ts, errs, floor: float, window: int = 6) -> float:
    """Log-log slope of a Taylor remainder in its asymptotic regime.

    Points whose remainder is within ``100 x floor`` of the rounding level carry no
    information and are dropped; the slope is the least-squares fit over the ``window``
    smallest remaining ``t`` (as small as rounding allows, so higher-order terms are
    negligible). Fewer than 3 points left (zero remainders, or all at rounding level: the
    model is exact to that order, or the steps are too small) leave the slope undefined: a
    ``ValueError`` naming ``errs``.

    Parameters
    ----------
    ts : array_like, 1-d
        Positive steps.
    errs : array_like, 1-d
        Finite non-negative remainders, same length.
    floor : float
        Rounding level, ``> 0``.
    window : int
        Points in the fit, ``3 <= window <= len(ts)``.

    Returns
    -------
    float
        The fitted slope ``p`` of ``log err = p log t + c``: the order of the remainder.

    Raises
    ------
    ValueError
        Fewer than 3 remainders exceed ``100 x floor`` (a NaN remainder is refused with the
        arguments, never taken as "exact").

    Examples
    --------
    >>> import numpy as np
    >>> ts = np.logspace(-4, -1, 12)
    >>> round(taylor_slope(ts, 0.3 * ts**3, 1e-16), 6)
    3.0
    """
    return _slope_or_refuse(ts, errs, floor, window, lambda n: (
        f"errs: only {n} of the {errs.size} remainders are above the rounding level "
        f"100 x floor = {100 * floor:.3g} (max {float(errs.max()):.3g}); a slope needs at "
        f"least 3 (zero remainders: the model is exact to this order, or the steps are too "
        f"small to leave rounding)"))


def _fit_slope(ts: np.ndarray, errs: np.ndarray, floor: float, window: int) -> float | None:
    """The slope of :func:`taylor_slope`, ``None`` when fewer than 3 remainders exceed
    ``100 floor``."""
    order = np.argsort(ts)
    ts, errs = ts[order], errs[order]
    keep = np.flatnonzero(errs > 100 * floor)[:window]
    if keep.size < 3:
        return None
    return float(np.polyfit(np.log(ts[keep]), np.log(errs[keep]), 1)[0])


def _slope_or_refuse(ts: np.ndarray, errs: np.ndarray, floor: float, window: int,
                     why) -> float:
    """:func:`_fit_slope`, or a ``ValueError`` with the message ``why(n)`` when it is undefined
    (``n`` the number of remainders above ``100 floor``)."""
    slope = _fit_slope(ts, errs, floor, window)
    if slope is None:
        raise ValueError(why(int(np.count_nonzero(errs > 100 * floor))))
    return slope


def _floor(f0: float) -> float:
    return 10 * np.finfo(float).eps * max(abs(f0), 1.0)


def _moving_direction(a) -> str | None:
    """``xi`` nonzero and not numerically zero at ``U``: ``U + t xi != U`` for the largest step."""
    nxi, nU = K.fro_norm(a["xi"]), K.fro_norm(a["U"])
    tmax = 1.0 if a["ts"] is None else float(np.max(a["ts"]))   # both defaults end at t = 1
    if nxi == 0.0:
        return "xi must be a nonzero direction, got the zero matrix"
    if not tmax * nxi > np.finfo(float).eps * nU:
        return (f"xi is numerically zero at U: max(ts) ||xi||_F = {tmax * nxi:.3g} <= eps "
                f"||U||_F = {np.finfo(float).eps * nU:.3g} (U + t xi = U to rounding at every "
                f"step); rescale xi or ts")
    return None


#: What check_gradient and check_hessian document identically (``{{name}}`` lines): their
#: refusal, and the instance their examples check (a rank-2 point of a Frobenius loss).
_DOC = {"raises_no_slope": """Raises
------
ValueError
    Naming ``xi`` and ``ts``, when the remainder is at rounding level at all but 2 steps (no
    slope can be measured).""",
        "example_instance": """>>> import numpy as np, quadnet as qn
>>> M = qn.PSDQuotient(3, 2)
>>> loss = qn.FrobeniusLoss(np.diag([1.0, 2.0, -1.0]))
>>> U = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])"""}

_MOVING = Relation(("U", "xi", "ts"), _moving_direction,
                   "``xi`` is nonzero and moves ``U``: ``max(ts) ||xi||_F > eps ||U||_F``")


def _slope_along(what: str, ts: np.ndarray, errs: np.ndarray, floor: float) -> float:
    """:func:`taylor_slope` of a check, refused naming ``xi`` and ``ts`` when undefined."""
    window = min(6, ts.size) if ts.size >= 3 else 3
    return _slope_or_refuse(ts, errs, floor, window, lambda n: (
        f"{what}: the Taylor remainder along xi is at rounding level (<= 100 x floor = "
        f"{100 * floor:.3g}) at all but {n} of the {ts.size} steps ts, so no slope can be "
        f"measured: xi is too short for these steps, or the model is exact along this curve "
        f"(rescale xi or ts, or use another direction)"))


def _field_of_manifold(a) -> str | None:
    """A complex point or direction given with a real manifold is refused, naming it."""
    if _is_complex(a["manifold"]):
        return None
    for n in ("U", "xi", "eta"):
        x = a.get(n)
        if x is not None and x.dtype.kind == "c":
            return f"{n} must be real for a manifold with field='real', got complex dtype {x.dtype}"
    return None


_FIELD_MATCH = Relation(("manifold", "U", "xi", "eta"), _field_of_manifold,
                        "complex ``U``/``xi``/``eta`` only with a ``field='complex'`` manifold",
                        error=TypeError)


@validate_params({"manifold": _MANIFOLD, "loss": LOSS, "U": _DRX, "xi": _DRX,
                  "ts": Optional(_STEPS)}, relations=[_MOVING, _FIELD_MATCH])
@fill(_DOC)
def check_gradient(manifold, loss: Loss, U, xi, ts=None) -> float:
    """Slope of the first-order Taylor remainder of ``L`` along ``retraction(U, t xi)``
    (2 expected for a correct Riemannian gradient; quadnet theory §1, §7).

    Parameters
    ----------
    manifold : PSDQuotient-like
    loss : quadnet.Loss
    U, xi : array_like, shape (d, r)
        Point and direction.
    ts : array_like, optional
        Positive steps (default ``logspace(-8, 0, 33)``).

    Returns
    -------
    float
        The slope.

    {{raises_no_slope}}

    Examples
    --------
    {{example_instance}}
    >>> bool(abs(check_gradient(M, loss, U, M.random_tangent_vector(U, 0)) - 2) < 0.1)
    True
    """
    return _gradient_slope(manifold, loss, U, xi, ts)


def _gradient_slope(M, loss, U, xi, ts=None) -> float:
    """:func:`check_gradient` on checked arguments (``loss``: any object with ``factor_value``
    and ``factor_gradient``)."""
    ts = np.logspace(-8, 0, 33) if ts is None else ts
    grad = M.euclidean_to_riemannian_gradient(U, loss.factor_gradient(U))
    f0 = loss.factor_value(U)
    errs = taylor_errors(lambda t: loss.factor_value(M.retraction(U, t * xi)), f0,
                         M.inner_product(U, grad, xi), None, ts)
    return _slope_along("check_gradient", ts, errs, _floor(f0))


@validate_params({"manifold": _MANIFOLD, "loss": LOSS, "U": _DRX, "xi": _DRX},
                 relations=[_FIELD_MATCH])
def riemannian_hessian(manifold, loss: Loss, U, xi) -> np.ndarray:
    """``Hess L(U)[xi]`` through the manifold's Euclidean-to-Riemannian conversion.

    Examples
    --------
    >>> import numpy as np, quadnet as qn
    >>> M, loss = qn.PSDQuotient(2, 1), qn.FrobeniusLoss(np.diag([1.0, 0.0]))
    >>> riemannian_hessian(M, loss, np.array([[1.0], [0.0]]), np.array([[1.0], [0.0]])).ravel()
    array([4., 0.])
    """
    return _rhess(manifold, loss, U, xi)


def _rhess(M, loss, U, xi) -> np.ndarray:
    return M.euclidean_to_riemannian_hessian(U, loss.factor_gradient(U), loss.factor_hvp(U, xi),
                                             xi)


@validate_params({"manifold": _MANIFOLD, "loss": LOSS, "U": _DRX, "xi": _DRX,
                  "eta": Optional(_DRX), "ts": Optional(_STEPS)},
                 relations=[_MOVING, _FIELD_MATCH])
@fill(_DOC)
def check_hessian(manifold, loss: Loss, U, xi, eta=None, ts=None) -> dict[str, float]:
    """Slope of the second-order remainder (3 expected), Hessian symmetry, and the size of
    the Hessian on a vertical direction (0 expected on the quotient; quadnet theory §3, §7).

    Parameters
    ----------
    manifold : PSDQuotient-like
    loss : quadnet.Loss
    U, xi : array_like, shape (d, r)
    eta : array_like, shape (d, r), optional
        Second direction for the symmetry test.
    ts : array_like, optional
        Positive steps (default ``logspace(-6, 0, 33)``).

    Returns
    -------
    dict
        ``slope``, ``vertical`` and (with ``eta``) ``symmetry``.

    {{raises_no_slope}}

    Examples
    --------
    {{example_instance}}
    >>> out = check_hessian(M, loss, U, M.random_tangent_vector(U, 0))
    >>> bool(out["slope"] > 2.9), bool(out["vertical"] < 1e-12)
    (True, True)
    """
    return _hessian_checks(manifold, loss, U, xi, eta, ts)


def _hessian_checks(M, loss, U, xi, eta=None, ts=None) -> dict[str, float]:
    """:func:`check_hessian` on checked arguments (``loss``: any object with ``factor_value``,
    ``factor_gradient`` and ``factor_hvp``)."""
    ts = np.logspace(-6, 0, 33) if ts is None else ts
    grad = M.euclidean_to_riemannian_gradient(U, loss.factor_gradient(U))
    H = _rhess(M, loss, U, xi)
    f0 = loss.factor_value(U)
    errs = taylor_errors(lambda t: loss.factor_value(M.retraction(U, t * xi)), f0,
                         M.inner_product(U, grad, xi), M.inner_product(U, H, xi), ts)
    out = {"slope": _slope_along("check_hessian", ts, errs, _floor(f0))}
    if eta is not None:
        He = _rhess(M, loss, U, eta)
        a, b = M.inner_product(U, H, eta), M.inner_product(U, xi, He)
        out["symmetry"] = abs(a - b) / max(np.linalg.norm(H) * np.linalg.norm(eta), 1e-300)
    rng = np.random.default_rng(0)
    v = M.vertical_projection(U, _gaussian(M, rng, U.shape))
    Hv = _rhess(M, loss, U, v)
    scale = np.linalg.norm(loss.factor_hvp(U, v)) + np.linalg.norm(H) * np.linalg.norm(v)
    out["vertical"] = float(np.linalg.norm(Hv) / max(scale, 1e-300))
    return out


def _require(ok: bool, identity: str, value: float, tol: float) -> None:
    if not ok:
        raise AssertionError(f"check_manifold: {identity} failed: {value:.3e} "
                             f"(tolerance {tol:.1e})")


#: Identities of the full-rank stratum that do not hold at a factor of rank ``k < r``
#: (``docs/stratified.md``); :func:`check_manifold` checks the stated replacement instead.
BOUNDARY_EXCEPTIONS = {
    "dimension": "dim H_U = d r - r(r-1)/2 + (r-k)(r-k-1)/2 exceeds dim M_r^+ when k <= r-2 "
                 "(checked: Gram rank = horizontal_dimension(d, r, k))",
    "lift uniqueness": "lift o differential = id fails on the (d-k)(r-k) directions "
                       "(I - Pi) D E_0^T of H_U in ker D pi (checked: the lift is the "
                       "minimum-norm preimage, D pi o lift o D pi = D pi)",
    "ker D pi = V_U": "ker D pi is larger than V_U when k < r (checked: V_U in ker D pi)",
}


def _rank_k_factor(M, k: int, rng: np.random.Generator) -> np.ndarray:
    """A ``d x r`` factor of rank ``k`` (complex on a complex manifold)."""
    P = np.linalg.qr(_gaussian(M, rng, (M.d, M.r)))[0]
    W = _fibre_element(M, rng)
    sigma = np.concatenate([rng.uniform(0.5, 2.0, k), np.zeros(M.r - k)])
    return (P * sigma) @ _ct(W)


@validate_params({"manifold": _MANIFOLD, "seed": Seed(), "trials": Integer(1, MAX_TRIALS),
                  "rtol": Real(0, 1, closed="neither"), "boundary": Boolean()})
def check_manifold(manifold, *, seed=0, trials: int = 3, rtol: float = 1e-9,
                   boundary: bool = True) -> dict[str, float]:
    r"""Conformance suite for a quotient manifold of PSD factors (quadnet theory §1, stratified).

    At ``trials`` random full-rank points, and (``boundary=True``) at one factor of each rank
    ``k = 0, ..., r-1``, checks: the dimension (rank of a Gram matrix of projected random
    vectors, against ``horizontal_dimension(d, r, k)``), projection idempotence and
    orthogonality, ``P_h + P_v = I``, horizontality, verticality (``P_v Z = U Omega`` with the
    skew :func:`~quadnet.geometry.lyapunov_skew` solution), vertical vectors in the kernel of
    the differential, ``differential o lift = id`` on the image of ``D pi(U)``, the
    orthonormal horizontal basis, ``O(r)``-equivariance of projections and lifts (improper
    ``R`` included), invariance of the metric and the distance, distance = Bures–Wasserstein,
    optimality of ``align``, the exp/log round trip, the gradient and Hessian Taylor slopes
    (2 and 3), Hessian symmetry and its vanishing on vertical directions. At full rank also
    ``lift o differential = id`` on ``H_U``; at ``k < r`` the identities in
    :data:`BOUNDARY_EXCEPTIONS` fail by theory and their stated replacements are checked.

    A manifold with ``field == "complex"`` (``PSDQuotient(d, r, field="complex")``) is checked
    with complex Gaussian points and directions, Haar unitary fibre elements (``U(r)``), the
    conjugate transpose for the transpose, the real inner product ``Re tr(A^* B)``, the
    dimension counted in the real-ified space (``2 d r - r^2`` at full rank) and the Hermitian
    test loss ``1/2 ||U U^* - T||_F^2`` for the Taylor slopes.

    Parameters
    ----------
    manifold : PSDQuotient-like
        Has ``d``, ``r``, ``dim`` and the methods of :class:`quadnet.PSDQuotient`.
    seed : int or numpy.random.Generator
    trials : int
        Full-rank points, ``>= 1``.
    rtol : float
        Base relative tolerance; rounding amplified by ``kappa^2`` of the nonzero singular
        values is added.
    boundary : bool
        Also check rank-deficient factors ``k = 0..r-1``.

    Returns
    -------
    dict
        Worst measured value of each identity (the keys of rank-deficient points end in
        ``" (rank < r)"``).

    Raises
    ------
    AssertionError
        Naming the first identity that fails.
    TypeError, ValueError
        Bad ``trials``, ``rtol`` or ``seed``.

    Examples
    --------
    >>> import quadnet as qn
    >>> worst = check_manifold(qn.PSDQuotient(3, 2), trials=1)
    >>> worst["P_h + P_v = I"] < 1e-12, worst["P_h + P_v = I (rank < r)"] < 1e-12
    (True, True)
    >>> worst = check_manifold(qn.PSDQuotient(3, 2, field="complex"), trials=1)
    >>> worst["dist = Bures-Wasserstein"] < 1e-12
    True
    """
    M = manifold
    rng = seed
    r = M.r
    worst: dict[str, float] = {}
    points = [(M.random_point(rng), r) for _ in range(trials)]
    if boundary:
        points += [(_rank_k_factor(M, k, rng), k) for k in range(r)]
    for U, k in points:
        _check_point(M, U, k, rng, rtol, worst)
    return worst


class _HermitianFrobenius:
    """``L(U) = 1/2 ||U U^* - T||_F^2`` for a Hermitian ``T``: the test loss of the Taylor checks
    on a complex manifold (the real inner product: ``grad L = 2 S U``, ``S = U U^* - T``,
    ``D^2 L[xi] = 2 S xi + 2 (xi U^* + U xi^*) U``)."""

    def __init__(self, T: np.ndarray):
        self.T = T

    def factor_value(self, U) -> float:
        S = U @ U.conj().T - self.T
        return 0.5 * _re(S, S)

    def factor_gradient(self, U) -> np.ndarray:
        return 2.0 * (U @ U.conj().T - self.T) @ U

    def factor_hvp(self, U, xi) -> np.ndarray:
        P = xi @ U.conj().T
        return 2.0 * (U @ U.conj().T - self.T) @ xi + 2.0 * (P + P.conj().T) @ U


class _Recorder:
    """Records the worst value of each identity at one point; fails naming the first broken one."""

    def __init__(self, worst: dict, tag: str):
        self.worst, self.tag = worst, tag

    def __call__(self, name: str, value: float, tol: float, *, relation: str = "<=") -> None:
        name = name + self.tag
        value = float(value)
        ok = value <= tol if relation == "<=" else value >= tol
        _require(ok and np.isfinite(value), name, value, tol)
        if relation == "<=":
            self.worst[name] = max(self.worst.get(name, 0.0), value)
        else:
            self.worst[name] = min(self.worst.get(name, np.inf), value)


def _rel(a, b) -> float:
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


def _ct(A: np.ndarray) -> np.ndarray:
    return K.ct(A)


def _check_point(M, U, k, rng, rtol, worst) -> None:
    d, r = M.d, M.r
    tag = "" if k == r else " (rank < r)"
    record = _Recorder(worst, tag)
    sv = np.linalg.svd(U, compute_uv=False)
    nz = sv[sv > K.RANK_RTOL * sv[0]] if sv[0] > 0 else np.ones(1)
    # Lyapunov solves amplify rounding by at most kappa^2 of the kept part (docs/stratified.md)
    tol = rtol + 1e3 * np.finfo(float).eps * (nz[0] / nz[-1]) ** 2
    Z, W = _gaussian(M, rng, (2, d, r))
    _check_dimension(M, U, k, rng, tag)
    h, Qdot, xi = _check_projections(M, U, k, Z, W, tol, record)
    _check_basis(M, U, k, tol, record, tag)
    _check_invariance(M, U, rng, tol, record, Z, W, h, Qdot, xi)
    _check_metric_maps(M, U, rng, tol, record)
    _check_taylor(M, U, rng, tol, record)


def _check_dimension(M, U, k, rng, tag) -> None:
    """The rank of many projected random vectors (real-ified on the complex field)."""
    d, r = M.d, M.r
    field = "complex" if _is_complex(M) else "real"
    dim_h = K.horizontal_dim(d, r, k, field)
    n = (2 if field == "complex" else 1) * d * r
    vecs = [M.projection(U, _gaussian(M, rng, (d, r))).reshape(-1) for _ in range(n)]
    vecs = np.stack([np.concatenate([v.real, v.imag]) if field == "complex" else v for v in vecs])
    s = np.linalg.svd(vecs, compute_uv=False)
    rank = int(np.sum(s > s[0] * 1e-10))
    _require(rank == dim_h, f"dimension{tag} (Gram rank {rank} vs dim H_U {dim_h})",
             abs(rank - dim_h), 0)
    if k == r:
        _require(M.dim == dim_h, f"dim (manifold.dim {M.dim} vs n_h {dim_h})", M.dim, dim_h)


def _check_projections(M, U, k, Z, W, tol, record):
    """Projections, verticality, the differential and the lift; returns ``(P_h Z, Qdot, lift)``."""
    r = M.r
    h, v = M.horizontal_projection(U, Z), M.vertical_projection(U, Z)
    nZ, nU = np.linalg.norm(Z), max(np.linalg.norm(U), 1e-300)
    record("projection idempotence", _rel(M.horizontal_projection(U, h), h), tol)
    record("vertical idempotence", _rel(M.vertical_projection(U, v), v)
           if np.linalg.norm(v) > 1e-14 * nZ else 0.0, tol)
    record("P_h + P_v = I", _rel(h + v, Z), tol)
    record("P_h, P_v orthogonal", abs(_re(h, M.vertical_projection(U, W)))
           / (nZ * np.linalg.norm(W)), tol)
    Uh = _ct(U) @ h
    record("horizontality (U^T P_h Z symmetric)", np.linalg.norm(Uh - _ct(Uh)) / (nU * nZ), tol)
    Kz = _ct(U) @ Z
    Om = lyapunov_skew(U, Kz - _ct(Kz))
    record("verticality (P_v Z = U Omega, Omega skew)",
           (np.linalg.norm(U @ Om - v) + np.linalg.norm(U @ (Om + _ct(Om)))) / nZ, tol)
    record("vertical vectors in ker Dpi", np.linalg.norm(M.differential(U, v)) / (nU * nZ), tol)
    Qdot = M.differential(U, h)
    nQ = max(np.linalg.norm(Qdot), 1e-300)
    xi = M.lift(U, Qdot)
    record("differential o lift = id on the image of Dpi",
           np.linalg.norm(M.differential(U, xi) - Qdot) / nQ, tol)
    if k == r:
        record("lift o differential = id on H_U", _rel(xi, h), tol)
    else:
        # minimum norm: no longer than h, and xi - h lies in ker Dpi (checked above)
        record("lift is the minimum-norm preimage (||lift|| <= ||h||)",
               max(0.0, np.linalg.norm(xi) - np.linalg.norm(h)) / max(np.linalg.norm(h), 1e-300),
               tol)
    return h, Qdot, xi


def _check_basis(M, U, k, tol, record, tag) -> None:
    d, r = M.d, M.r
    dim_h = K.horizontal_dim(d, r, k, "complex" if _is_complex(M) else "real")
    B = M.horizontal_basis(U)
    _require(B.shape == (d * r, dim_h), f"horizontal_basis shape{tag}", B.shape[1], dim_h)
    record("horizontal_basis orthonormal", np.linalg.norm((_ct(B) @ B).real - np.eye(dim_h)), tol)
    cols = B.T.reshape(dim_h, d, r)
    sk = np.einsum("ia,kib->kab", U.conj(), cols)
    record("horizontal_basis horizontal", np.linalg.norm(sk - sk.transpose(0, 2, 1).conj())
           / max(np.linalg.norm(U), 1e-300) / np.sqrt(dim_h), tol)


def _fibre_element(M, rng, improper: bool | None = None) -> np.ndarray:
    """A Haar-random element of the fibre group: ``O(r)`` (``improper`` forces the sign of the
    determinant), or ``U(r)`` on a complex manifold (``improper``: a column times ``-1``)."""
    if _is_complex(M):
        return _random_unitary(M.r, rng, det_phase=bool(improper))
    return _random_orthogonal(M.r, rng, improper=improper)


def _check_invariance(M, U, rng, tol, record, Z, W, h, Qdot, xi) -> None:
    """Equivariance of projections and lifts (improper ``R`` included on the real field),
    invariance of the metric and the distance."""
    nZ = np.linalg.norm(Z)
    for improper in (False, True):
        R = _fibre_element(M, rng, improper)
        UR = U @ R
        record("P_h equivariance P_h(UR, ZR) = P_h(U, Z) R",
               _rel(M.horizontal_projection(UR, Z @ R), h @ R), tol)
        record("lift equivariance lift(UR, Qdot) = lift(U, Qdot) R",
               _rel(M.lift(UR, Qdot), xi @ R) if np.linalg.norm(xi) > 0 else 0.0, tol)
        hw = M.horizontal_projection(U, W)
        a = M.inner_product(U, h, hw)
        b = M.inner_product(UR, h @ R, hw @ R)
        record("metric invariance", abs(a - b) / (nZ * np.linalg.norm(W)), tol)
        V = M.random_point(rng)
        dUV = M.dist(U, V)
        record("distance invariance dist(UR, V) = dist(U, V)",
               abs(M.dist(UR, V) - dUV) / max(dUV, 1e-300), tol)
        record("dist(U, U R) = 0", M.dist(U, UR) / max(np.linalg.norm(U), 1.0), tol)


def _check_metric_maps(M, U, rng, tol, record) -> None:
    """Distance = Bures-Wasserstein, optimal alignment, the exp/log round trip."""
    d, r = M.d, M.r
    V = M.random_point(rng)
    dUV = M.dist(U, V)
    bw = bures_wasserstein(U @ _ct(U), V @ _ct(V))
    record("dist = Bures-Wasserstein", abs(dUV - bw) / max(bw, 1e-300), 1e-6)
    R0 = _fibre_element(M, rng)
    # no orthogonal (unitary) R0 does better than the aligned distance, up to rounding: both
    # sides are norms of d x r arrays of size ||U|| + ||V|| (an exact 0 failed at 4.4e-16 on a
    # rank-deficient U, whose optimal alignments are not unique)
    record("align is optimal over O(r)", max(0.0, dUV - np.linalg.norm(U @ R0 - V))
           / max(np.linalg.norm(U) + np.linalg.norm(V), 1e-300), 1e-14)
    Vn = U + 0.3 * max(np.linalg.norm(U), 1.0) / np.sqrt(d * r) * _gaussian(M, rng, (d, r))
    L = M.log(U, Vn)
    Ul = _ct(U) @ L
    record("log is horizontal", np.linalg.norm(Ul - _ct(Ul)) / (max(np.linalg.norm(U), 1e-300)
           * max(np.linalg.norm(L), 1e-300)), tol)
    E = M.exp(U, L)
    record("exp o log round trip", _rel(E @ _ct(E), Vn @ _ct(Vn)), tol)
    record("||log_U V|| = dist(U, V)", abs(M.norm(U, L) - M.dist(U, Vn))
           / max(M.dist(U, Vn), 1e-300), tol)


def _check_taylor(M, U, rng, tol, record) -> None:
    """Gradient and Hessian Taylor slopes on a test loss; a random direction can make the next
    Taylor coefficient vanish by chance and bend the slope, so the best of 3 directions counts."""
    d = M.d
    T = _gaussian(M, rng, (d, d))
    loss = _HermitianFrobenius(T + _ct(T)) if _is_complex(M) else FrobeniusLoss(T + T.T)
    dirs = [M.random_tangent_vector(U, rng) for _ in range(3)]
    record("gradient Taylor slope (2 expected)",
           max(_gradient_slope(M, loss, U, xi) for xi in dirs), 1.9, relation=">=")
    hcs = [_hessian_checks(M, loss, U, xi, eta=dirs[(i + 1) % 3]) for i, xi in enumerate(dirs)]
    record("Hessian Taylor slope (3 expected)", max(h["slope"] for h in hcs), 2.9,
           relation=">=")
    record("Hessian symmetry", max(h["symmetry"] for h in hcs), tol)
    record("Hessian vanishes on vertical directions", max(h["vertical"] for h in hcs), tol)


# ------------------------------------------------------------------ pymanopt optimisers
@validate_params({"target": Symmetric("d"), "r": Integer(1)})
def eckart_young_value(target, r: int) -> float:
    r"""``min_{Q psd, rank Q <= r} 1/2 ||Q - T||_F^2``: half the sum of squares of the
    eigenvalues of ``T`` other than its ``r`` largest positive ones (Eckart & Young 1936 on the
    positive part, the minimiser of :class:`quadnet.FrobeniusLoss` over ``M_{<=r}^+``).

    Parameters
    ----------
    target : array_like, shape (d, d)
        Symmetric.
    r : int
        Rank budget, ``>= 1``.

    Returns
    -------
    float
        The minimum value (0 when ``T`` is positive semidefinite of rank ``<= r``).

    Examples
    --------
    >>> import numpy as np
    >>> eckart_young_value(np.diag([3.0, 1.0, -2.0]), 1)   # (1 + 4) / 2
    2.5
    """
    w = np.linalg.eigvalsh(target)
    keep = np.zeros(w.size, dtype=bool)
    pos = np.flatnonzero(w > 0)[::-1][:r]
    keep[pos] = True
    return 0.5 * float(np.sum(w[~keep] ** 2))


_OPTIMISERS = ("TrustRegions", "SteepestDescent", "ConjugateGradient")


def _loss_d_r(args) -> str | None:
    loss, d = args["loss"], args["d"]
    wrong_rank = rank_at_most_dimension(args)
    if wrong_rank:
        return wrong_rank
    if loss.d is not None and loss.d != d:
        return f"d = {d} but the loss is for {loss.d} x {loss.d} predictors"
    return None


@validate_params({"loss": LOSS, "d": Integer(1), "r": Integer(1), "seed": Seed(),
                  "optimisers": Sequence(Options(*_OPTIMISERS)),
                  "max_iterations": Integer(1, MAX_OPTIMISER_ITERATIONS),
                  "reference_cost": Optional(Real())},
                 relations=[Relation(("loss", "d", "r"), _loss_d_r, "``r <= d = loss.d``")])
def compare_pymanopt_optimisers(loss, d: int, r: int, seed=0, *, optimisers=_OPTIMISERS,
                                max_iterations: int = 5000, reference_cost: float | None = None
                                ) -> list[dict]:
    r"""Run pymanopt optimisers on ``L(U) = loss(U U^T)`` over :class:`quadnet.PSDQuotient` and
    over pymanopt 2.2.1's ``PSDFixedRank`` from the same Gaussian start, side by side.

    Designed for optima of rank ``< r`` (``docs/stratified.md``): ``PSDQuotient``'s
    retraction never refuses and its projections stay exact on the boundary. The reference
    cost defaults to :func:`eckart_young_value` for a :class:`quadnet.FrobeniusLoss`.

    Parameters
    ----------
    loss : quadnet.Loss
    d, r : int
        Sizes, ``1 <= r <= d``.
    seed : int or numpy.random.Generator
        The start ``U0`` (standard Gaussian).
    optimisers : sequence of str
        Names in ``pymanopt.optimizers``.
    max_iterations : int
    reference_cost : float, optional

    Returns
    -------
    list of dict
        One row per (optimiser, manifold): ``optimiser``, ``manifold`` (``"PSDQuotient"`` or
        ``"PSDFixedRank"``), ``iterations``, ``cost``, ``rel_cost_error`` (``(cost - ref) /
        |ref|``, ``nan`` without a reference), ``time_s``, ``stopping``, ``error`` (the text
        of an exception, ``None`` if none).


    Examples
    --------
    >>> import numpy as np, quadnet as qn
    >>> T = np.diag([3.0, 1.5, -0.5, -1.0])
    >>> rows = compare_pymanopt_optimisers(qn.FrobeniusLoss(T), 4, 3, seed=0,
    ...                                    optimisers=("TrustRegions",))
    >>> [(row["manifold"], abs(row["rel_cost_error"]) < 1e-10) for row in rows]
    [('PSDQuotient', True), ('PSDFixedRank', True)]
    """
    import pymanopt

    from quadnet.geometry.manifold import PSDQuotient
    from quadnet.losses import pymanopt_problem

    if reference_cost is None and isinstance(loss, FrobeniusLoss):
        reference_cost = eckart_young_value(loss.target, r)
    U0 = seed.standard_normal((d, r))
    rows = []
    for name in optimisers:
        for label, M in (("PSDQuotient", PSDQuotient(d, r)),
                         ("PSDFixedRank", pymanopt.manifolds.PSDFixedRank(d, r))):
            problem = pymanopt_problem(loss, M)
            opt = getattr(pymanopt.optimizers, name)(verbosity=0, max_iterations=max_iterations)
            t0 = time.perf_counter()
            row = {"optimiser": name, "manifold": label, "iterations": None, "cost": np.nan,
                   "rel_cost_error": np.nan, "time_s": np.nan, "stopping": None, "error": None}
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # PSDFixedRank's Lyapunov
                    res = opt.run(problem, initial_point=U0.copy())
                row.update(iterations=int(res.iterations), cost=float(res.cost),
                           stopping=str(res.stopping_criterion))
                if reference_cost is not None:
                    row["rel_cost_error"] = ((row["cost"] - reference_cost)
                                             / max(abs(reference_cost), 1e-300))
            except Exception as exc:  # reported, not raised: a side-by-side comparison
                row["error"] = f"{type(exc).__name__}: {exc}"
            row["time_s"] = time.perf_counter() - t0
            rows.append(row)
    return rows
