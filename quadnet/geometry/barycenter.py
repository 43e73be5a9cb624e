r"""Bures–Wasserstein barycentres (Fréchet means) of PSD matrices (quadnet theory §1).

The barycentre of ``Q_i = U_i U_i^T`` with weights ``w_i`` minimises
``F(Q) = (1/2) sum_i w_i dist(Q, Q_i)^2`` over all PSD matrices ``Q`` (:func:`bw_barycenter`;
``max_rank=q`` restricts it to rank ``<= q``), with the quotient distance
``dist(Q_1, Q_2) = min_R ||U_1 R - U_2||_F`` (= the Bures–Wasserstein distance). At a factor
``U`` of ``Q`` the Riemannian gradient is ``-sum_i w_i log_U(U_i) = U - sum_i w_i U_i R_i``
with ``R_i = align(U_i, U)``, and the fixed-point iteration::

    U_{k+1} = sum_i w_i U_i align(U_i, U_k)

is Riemannian gradient descent with unit step. For ``r = d`` it is, in factor form, exactly
the fixed-point iteration of Álvarez-Esteban, del Barrio, Cuesta-Albertos & Matrán (2016)
"A fixed-point approach to barycenters in Wasserstein space", J. Math. Anal. Appl. 441:
``S_{k+1} = S_k^{-1/2} (sum_i w_i (S_k^{1/2} Q_i S_k^{1/2})^{1/2})^2 S_k^{-1/2}``
(``U_i R_i = T_i S_k^{1/2}`` with ``T_i`` the optimal transport map from ``S_k`` to ``Q_i``).
At a fixed width ``q < d`` it is the generalised Procrustes mean (Gower 1975): each step does
not increase ``F``, and the result is the Fréchet mean *within rank <= q*. The barycentre over
all PSD matrices can have a larger rank than the inputs (the second example of
:func:`bw_barycenter`), so :func:`bw_barycenter` adds a column whenever the cone's
first-order condition (``I - sum_i w_i T_i`` PSD, :func:`transport_maps`) fails at the fixed
point (derivation and measurements in ``docs/riemannian.md`` §6). In symmetric configurations
the minimiser over all PSD matrices need not be unique (``e_1 e_1^T`` and ``e_2 e_2^T`` with
equal weights: every ``S = [[1/4, b], [b, 1/4]]`` with ``|b| <= 1/4`` is optimal, ranks one
and two), and the fixed point then returns one of them, depending on ``init``.

Complex factors or Hermitian PSD matrices (the Hermitian quotient ``C^{d x r} / U(r)``) run the
same iteration with the unitary Procrustes (``align``), ``Q = U U^*``, ``T_i = U_i (U_i^* Q
U_i)^{+1/2} U_i^*`` and the real inner product ``Re tr(A^* B)``: every step above holds with
``A^*`` for ``A^T`` (``tr(A Q A^*)^{1/2}`` is concave on Hermitian PSD ``Q`` as well).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from quadnet._validation import (Boolean, Integer, Optional, Options, Real, Symmetric,
                                 as_array, as_factor, validate_params)
from quadnet.exceptions import ConvergenceWarning
from quadnet.geometry._kernels import ct, procrustes

__all__ = ["BWBarycenter", "bw_barycenter", "transport_maps"]


@dataclass(frozen=True)
class BWBarycenter:
    """Result of :func:`bw_barycenter`.

    Attributes
    ----------
    U : numpy.ndarray, shape (d, q)
        A factor of the barycentre, ``q`` the final width (any ``U R``, ``R`` in ``O(q)``,
        represents it).
    Q : numpy.ndarray, shape (d, d)
        The barycentre ``U U^T``.
    converged : bool
        Whether ``residual <= tol * scale`` was reached within ``max_iter`` steps.
    iterations : int
        Fixed-point steps taken.
    residual : float
        First-order optimality residual ``||sum_i w_i log_U(U_i)||_F`` at the returned ``U``.
    objective : float
        ``(1/2) sum_i w_i dist(Q, Q_i)^2``.
    history : tuple of float
        The residual before each step.
    rank : int or None
        Numerical rank of ``Q`` (eigenvalues above ``1e-10`` times the largest).
    dual_min : float
        ``lambda_min(I - sum_i w_i T_i)`` at the result (``transport_maps``): ``>= 0`` up
        to rounding at the barycentre over all PSD matrices.
    """

    U: np.ndarray
    Q: np.ndarray
    converged: bool
    iterations: int
    residual: float
    objective: float
    history: tuple = field(default_factory=tuple)
    rank: int | None = None
    dual_min: float = 0.0

    @property
    def report(self) -> dict:
        """The convergence report as a plain dict."""
        return {"converged": self.converged, "iterations": self.iterations,
                "residual": self.residual, "objective": self.objective}


def _aligned(Us: np.ndarray, U: np.ndarray) -> np.ndarray:
    """``U_i R_i`` with ``R_i = argmin_R ||U_i R - U||`` for a stack ``Us`` (k, d, r), from the
    geometry's one Procrustes kernel (one batched SVD)."""
    return Us @ procrustes(Us, U[None])


def _as_weights(weights, k: int) -> np.ndarray:
    if weights is None:
        return np.full(k, 1.0 / k)
    w = as_array(weights, "weights", ndim=1)
    if w.shape[0] != k:
        raise ValueError(f"weights must have one entry per point ({k}), got {w.shape[0]}")
    if np.any(w < 0):
        raise ValueError(f"weights must be nonnegative, got min {w.min():.3g}")
    if abs(float(w.sum()) - 1.0) > 1e-12:
        raise ValueError(f"weights must sum to 1, got {float(w.sum())!r}")
    return w


def _as_stack(Us) -> list:
    if isinstance(Us, np.ndarray) and Us.ndim == 3:
        stack = [Us[i] for i in range(Us.shape[0])]
    else:
        if isinstance(Us, (str, bytes)):
            raise TypeError(f"Us must be a sequence of matrices, got {type(Us).__name__}")
        try:
            stack = list(Us)
        except TypeError:
            raise TypeError(f"Us must be a sequence of d x r factors or d x d PSD matrices, got "
                            f"{type(Us).__name__}") from None
    if not stack:
        raise ValueError("Us must contain at least one factor")
    return stack


def _factors_of_matrices(stack: list, real: bool = False) -> np.ndarray:
    """PSD matrices ``Q_i`` -> factors ``Q_i = F_i F_i^T`` of one common width (the largest
    numerical rank), zero columns padding the others; an indefinite ``Q_i`` is refused (complex
    ``Q_i`` must be Hermitian PSD; refused naming it when ``real``)."""
    psd = _PSD_REAL if real else _PSD
    first = psd.convert(stack[0], "Us[0]", dims := {})
    mats = [first] + [psd.convert(Q, f"Us[{i}]", dims) for i, Q in enumerate(stack[1:], 1)]
    cx = any(Q.dtype.kind == "c" for Q in mats)
    fs = []
    for Q in mats:
        lam, E = np.linalg.eigh(Q)
        keep = lam > 10 * Q.shape[0] * np.finfo(float).eps * max(float(lam[-1]), 0.0)
        fs.append(E[:, keep] * np.sqrt(lam[keep]))
    width = max(1, max(f.shape[1] for f in fs))
    out = np.zeros((len(fs), first.shape[0], width), dtype=complex if cx else float)
    for i, f in enumerate(fs):
        out[i, :, :f.shape[1]] = f
    return out


def _factors(stack: list, full_rank: bool, allow_complex: bool = False) -> np.ndarray:
    first = as_factor(stack[0], "Us[0]", full_rank=full_rank, allow_complex=allow_complex)
    return np.stack([first] + [as_factor(Ui, f"Us[{i}]", d=first.shape[0], r=first.shape[1],
                                         full_rank=full_rank, allow_complex=allow_complex)
                               for i, Ui in enumerate(stack[1:], start=1)])


def transport_maps(Us, U) -> np.ndarray:
    r"""The optimal transport maps ``T_i`` from ``Q = U U^T`` to ``Q_i = U_i U_i^T``.

    ``T_i = U_i (U_i^T Q U_i)^{+1/2} U_i^T`` (the pseudo-inverse square root on the range of
    ``U_i^T Q U_i``): the gradient of ``Q -> (1/2) dist(Q, Q_i)^2`` on the PSD cone is
    ``(I - T_i) / 2`` (``d tr(U_i^T Q U_i)^{1/2} = (1/2) tr(T_i dQ)``, Bhatia, Jain & Lim 2019), so
    the barycentre over all PSD matrices is characterised (the objective is convex in ``Q``)
    by ``G = I - sum_i w_i T_i`` positive semidefinite with ``G Q = 0``: ``sum_i w_i T_i = I``
    on the support of ``Q``.

    Parameters
    ----------
    Us : ndarray, shape (k, d, r)
        Factors of the points (any rank; complex: Hermitian ``Q_i = U_i U_i^*``).
    U : ndarray, shape (d, q)
        A factor of ``Q``.

    Returns
    -------
    ndarray, shape (k, d, d)
        Symmetric (Hermitian for complex factors) PSD maps.
    """
    Us, U = np.asarray(Us), np.asarray(U)
    cx = Us.dtype.kind == "c" or U.dtype.kind == "c"
    dt = complex if cx else float
    Us, U = Us.astype(dt, copy=False), U.astype(dt, copy=False)
    M = np.einsum("kdr,dq->krq", Us.conj() if cx else Us, U)     # U_i^* U
    out = np.empty((Us.shape[0], Us.shape[1], Us.shape[1]), dtype=dt)
    for i in range(Us.shape[0]):
        lam, E = np.linalg.eigh(M[i] @ ct(M[i]))                     # U_i^* Q U_i
        top = max(float(lam[-1]), 0.0)
        inv = np.where(lam > 1e-13 * top, 1.0 / np.sqrt(np.where(lam > 0, lam, 1.0)), 0.0)
        W = Us[i] @ E
        out[i] = (W * inv) @ ct(W)
    return out


def _dual(S: np.ndarray, w: np.ndarray, U: np.ndarray) -> tuple[float, np.ndarray]:
    """``lambda_min`` and its unit eigenvector of ``G = I - sum_i w_i T_i`` at ``Q = U U^T``."""
    G = np.eye(S.shape[1]) - np.tensordot(w, transport_maps(S, U), axes=1)
    lam, E = np.linalg.eigh(0.5 * (G + ct(G)))
    return float(lam[0]), E[:, 0]


def _objective(S: np.ndarray, w: np.ndarray, U: np.ndarray) -> float:
    """``(1/2) sum_i w_i dist(U U^T, Q_i)^2`` for factors of different widths."""
    q, r = U.shape[1], S.shape[2]
    if q < r:
        U = np.concatenate([U, np.zeros((U.shape[0], r - q))], axis=1)
    elif q > r:
        S = np.concatenate([S, np.zeros(S.shape[:2] + (q - r,))], axis=2)
    D = _aligned(S, U) - U
    return float(0.5 * np.sum(w * np.sum((D.conj() * D).real if D.dtype.kind == "c" else D ** 2,
                                         axis=(1, 2))))


def _fixed_point(S, w, U, tol, scale, budget, bar, history):
    """The within-width fixed point ``U <- sum_i w_i U_i align(U_i, U)`` (``S`` padded to the
    width of ``U``); returns ``(U, residual, steps, converged)``."""
    q, r = U.shape[1], S.shape[2]
    if q > r:
        S = np.concatenate([S, np.zeros(S.shape[:2] + (q - r,))], axis=2)
    it, res = 0, np.inf
    while True:
        mean = np.tensordot(w, _aligned(S, U), axes=1)
        res = float(np.linalg.norm(mean - U))
        history.append(res)
        if res <= tol * scale:
            return U, res, it, True
        if it >= budget:
            return U, res, it, False
        U = mean
        it += 1
        bar.update(1)


#: ``lambda_min(I - sum_i w_i T_i)`` below ``-DUAL_TOL`` means that the PSD cone has a descent
#: direction outside the current rank: the rank is raised along its eigenvector.
DUAL_TOL = 1e-9

_INPUTS = ("factors", "matrices")
_PSD = Symmetric("d", psd=True, allow_complex=True)
_PSD_REAL = Symmetric("d", psd=True)


@validate_params({"inputs": Optional(Options(*_INPUTS)), "tol": Real(1e-15, 1e-2),
                  "max_iter": Integer(1, 10**6), "max_rank": Optional(Integer(1)),
                  "progress": Boolean(), "field": Optional(Options("real", "complex"))})
def bw_barycenter(Us, weights=None, *, inputs: str | None = None, init=None, tol: float = 1e-13,
                  max_iter: int = 2000, max_rank: int | None = None,
                  progress: bool = False, field: str | None = None) -> BWBarycenter:
    r"""Bures–Wasserstein barycentre of PSD matrices ``Q_i``, over all PSD matrices.

    Minimises ``F(Q) = (1/2) sum_i w_i dist(Q, Q_i)^2`` (quadnet theory §1) over every PSD
    ``Q``, whatever the ranks of the ``Q_i``: the barycentre's rank may exceed theirs.
    ``F`` is convex in ``Q`` (``tr(A Q A)^{1/2}`` is concave), so the barycentre is characterised
    by the first-order condition of the cone: ``G = I - sum_i w_i T_i`` is PSD and ``G Q = 0``
    (``sum_i w_i T_i = I`` on the support of ``Q``, ``transport_maps``).

    Algorithm (rank-adaptive Burer–Monteiro). The factor fixed point
    ``U_{k+1} = sum_i w_i U_i align(U_i, U_k)`` (Riemannian gradient descent with unit step on
    ``M_q^+``; for ``q = d`` in factor form exactly the fixed-point iteration of
    Álvarez-Esteban, del Barrio, Cuesta-Albertos & Matrán 2016) runs at the width ``q`` of the
    start; at its fixed point, if ``lambda_min(G) < -DUAL_TOL`` the cone has a descent direction
    ``v`` (the eigenvector) outside rank ``q``: the column ``sqrt(t) v`` is appended, ``t`` from
    an exact line search of ``F(Q + t v v^T)``, and the fixed point runs again at width
    ``q + 1``. At full-rank inputs the first stage is already optimal (``G = 0``).

    Parameters
    ----------
    Us : sequence of array_like, or array_like of shape (k, d, r) or (k, d, d)
        The points, read as ``inputs`` says.
    weights : array_like, shape (k,), optional
        Nonnegative weights summing to 1 (to ``1e-12``); uniform by default.
    inputs : {"factors", "matrices"}
        ``"factors"``: ``Q_i = U_i U_i^T`` from ``d x r`` factors (any rank, one shape).
        ``"matrices"``: the ``Q_i`` themselves, ``d x d`` symmetric PSD (an indefinite matrix is
        refused). Never guessed from the shape. Not given (the former call form): factors,
        and the former result, the Fréchet mean *within rank <= r* (as ``max_rank=r``), with a
        :class:`DeprecationWarning`.
    init : array_like, shape (d, q), optional
        Starting factor (``q <= d``); by default the input of largest weight (the first on ties).
        A start narrower than the points (``q < r``) is completed with zero columns to width
        ``min(r, max_rank)``.
    tol : float, default 1e-13
        Stop each stage when ``||sum_i w_i log_U(U_i)||_F <= tol * scale``,
        ``scale = sqrt(sum_i w_i tr Q_i)``; in ``[1e-15, 1e-2]``.
    max_iter : int, default 2000
        Maximum number of fixed-point steps over all stages (``1 <= max_iter <= 10^6``); a
        :class:`quadnet.exceptions.ConvergenceWarning` is issued when it is reached first.
    max_rank : int, optional
        Restrict to PSD matrices of rank ``<= max_rank`` (the Fréchet mean of ``M_r^+`` at
        ``max_rank = r``, the generalised Procrustes mean of Gower 1975).
    progress : bool, default False
        Show a tqdm bar.
    field : {None, "real", "complex"}
        ``None`` (default): from the data -- complex factors or Hermitian matrices give the
        barycentre over all Hermitian PSD matrices (the unitary alignment of ``align``).
        ``"real"``: a complex point (or ``init``) is refused naming it.

    Returns
    -------
    BWBarycenter
        ``.U`` (``d x q``, ``q`` the final width), ``.Q``, the convergence report and
        ``dual_min`` (``lambda_min(G)``, ``>= -DUAL_TOL`` at the barycentre over all PSD
        matrices).

    Raises
    ------
    ValueError
        Fewer than one point, shapes that differ, an indefinite matrix (``inputs="matrices"``),
        a rank-deficient factor (former call form), weights negative, of the wrong length or
        not summing to 1, ``tol`` out of range.

    Examples
    --------
    >>> import numpy as np
    >>> Us = [np.diag([1.0, 2.0]), np.diag([3.0, 2.0])]
    >>> b = bw_barycenter(Us, inputs="factors")    # commuting: the mean of the square roots
    >>> np.round(np.diag(b.Q), 10), b.converged
    (array([4., 4.]), True)
    >>> rng = np.random.default_rng(2)          # five rank-2 points in d = 8
    >>> Us, w = rng.standard_normal((5, 8, 2)), rng.dirichlet(np.ones(5))
    >>> b = bw_barycenter(Us, w, inputs="factors")
    >>> b.rank, b.dual_min > -1e-9              # rank 3: above the inputs' rank
    (3, True)
    >>> within = bw_barycenter(Us, w, inputs="factors", max_rank=2)
    >>> round(within.objective - b.objective, 4)
    0.1131
    >>> H = [np.diag([1.0, 2.0]) + 0j, np.diag([3.0, 2.0]) * 1j]   # complex factors
    >>> np.round(np.diag(bw_barycenter(H, inputs="factors").Q).real, 10)
    array([4., 4.])
    """
    stack = _as_stack(Us)
    legacy = inputs is None
    if legacy:
        warnings.warn("bw_barycenter(Us) without inputs= reads Us as factors and returns the "
                      "Fréchet mean within rank <= r; pass inputs='factors' or "
                      "inputs='matrices' for the barycentre over all PSD matrices (max_rank=r "
                      "keeps the within-rank mean)", DeprecationWarning, stacklevel=3)
        S = _factors(stack, full_rank=True)
    elif inputs == "factors":
        S = _factors(stack, full_rank=False, allow_complex=field != "real")
    else:
        S = _factors_of_matrices(stack, real=field == "real")
    k, d, r = S.shape
    if legacy and max_rank is None:
        max_rank = r
    w = _as_weights(weights, k)
    if init is None:
        U = S[int(np.argmax(w))].copy()
    else:
        U = as_factor(init, "init", d=d, full_rank=False, allow_complex=field != "real")
    if S.dtype.kind == "c" or U.dtype.kind == "c":
        S, U = S.astype(complex, copy=False), U.astype(complex, copy=False)
    if max_rank is not None and U.shape[1] > max_rank:
        raise ValueError(f"init has {U.shape[1]} columns > max_rank = {max_rank}")
    cap = d if max_rank is None else min(d, max_rank)
    if U.shape[1] < min(r, cap):
        # a start narrower than the points: zero columns up to their width, so the fixed point
        # can leave rank q (the cone test below is only a certificate at a point whose
        # U_i^T Q U_i have full rank; at a narrower Q the distance is not differentiable
        # off its support and the test would pass at a non-optimal point)
        U = np.concatenate([U, np.zeros((d, min(r, cap) - U.shape[1]), dtype=U.dtype)], axis=1)
    scale = float(np.sqrt(np.sum(w * np.sum(np.abs(S) ** 2, axis=(1, 2)))))

    if progress:
        from quadnet._progress import tqdm
    else:
        tqdm = _NoBar

    history: list[float] = []
    steps, converged, dual = 0, False, 0.0
    with tqdm(total=max_iter, desc="bw_barycenter", disable=not progress, leave=False) as bar:
        while True:
            U, res, it, converged = _fixed_point(S, w, U, tol, scale, max_iter - steps, bar,
                                                 history)
            steps += it
            if not converged or scale == 0.0:
                break
            dual, v = _dual(S, w, U)
            if dual >= -DUAL_TOL or U.shape[1] >= cap:
                break
            # a descent direction of the cone outside rank q: exact line search on t
            import scipy.optimize

            def along(t, U=U, v=v):
                return _objective(S, w, np.column_stack([U, np.sqrt(max(t, 0.0)) * v]))

            t = scipy.optimize.minimize_scalar(along, bounds=(0.0, scale ** 2),
                                               method="bounded",
                                               options={"xatol": 1e-12 * scale ** 2}).x
            U = np.column_stack([U, np.sqrt(max(t, 1e-16 * scale ** 2)) * v])
    if not converged:
        warnings.warn(ConvergenceWarning(
            f"bw_barycenter: residual {res:.3e} > {tol:g} * {scale:.3g} after {max_iter} "
            f"steps", res), stacklevel=3)
    Q = U @ ct(U)
    lam = np.linalg.eigvalsh(Q)
    rank = int(np.count_nonzero(lam > 1e-10 * max(float(lam[-1]), 0.0))) if lam[-1] > 0 else 0
    return BWBarycenter(U=U, Q=Q, converged=converged, iterations=steps, residual=res,
                        objective=_objective(S, w, U), history=tuple(history), rank=rank,
                        dual_min=dual)


class _NoBar:
    """A do-nothing stand-in for a tqdm bar (no tqdm import when progress is off)."""

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n: int = 1) -> None:
        pass
