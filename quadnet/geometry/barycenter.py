r"""Bures–Wasserstein barycentres (Fréchet means) of points of :math:`M_r^+` (quadnet theory §1).

The barycentre of ``Q_i = U_i U_i^T`` with weights ``w_i`` minimises
``F(U) = (1/2) sum_i w_i dist(U U^T, Q_i)^2`` over ``d x r`` factors, with the quotient
distance ``dist(Q_1, Q_2) = min_R ||U_1 R - U_2||_F`` (= the Bures–Wasserstein distance). Its
Riemannian gradient at ``U`` is ``-sum_i w_i log_U(U_i) = U - sum_i w_i U_i R_i`` with
``R_i = align(U_i, U)``, and the fixed-point iteration::

    U_{k+1} = sum_i w_i U_i align(U_i, U_k)

is Riemannian gradient descent with unit step. For ``r = d`` it is, in factor form, exactly
the fixed-point iteration of Álvarez-Esteban, del Barrio, Cuesta-Albertos & Matrán (2016)
"A fixed-point approach to barycenters in Wasserstein space", J. Math. Anal. Appl. 441:
``S_{k+1} = S_k^{-1/2} (sum_i w_i (S_k^{1/2} Q_i S_k^{1/2})^{1/2})^2 S_k^{-1/2}``
(``U_i R_i = T_i S_k^{1/2}`` with ``T_i`` the optimal transport map from ``S_k`` to ``Q_i``).
For ``r < d`` it is the generalised Procrustes mean (Gower 1975): each step does not increase
``F``, and the result is the Fréchet mean *within rank <= r*. On generic rank-deficient inputs
it also minimises ``F`` over all PSD matrices: the matrix fixed point above, started at the
identity, converges (sublinearly) to the same rank-``r`` point (quadnet target, measured in
``docs/riemannian.md`` §6). In symmetric configurations the minimiser over all PSD matrices
need not be unique (``e_1 e_1^T`` and ``e_2 e_2^T`` with equal weights: every
``S = [[1/4, b], [b, 1/4]]`` with ``|b| <= 1/4`` is optimal, ranks one and two), and the fixed
point then returns one of them, depending on ``init``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from quadnet._validation import as_array, as_factor, as_int, as_positive
from quadnet.exceptions import ConvergenceWarning
from quadnet.geometry._kernels import procrustes

__all__ = ["BWBarycenter", "bw_barycenter"]


@dataclass(frozen=True)
class BWBarycenter:
    """Result of :func:`bw_barycenter`.

    Attributes
    ----------
    U : numpy.ndarray, shape (d, r)
        A factor of the barycentre (any ``U R``, ``R`` in ``O(r)``, represents it).
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
    history : list of float
        The residual before each step.
    """

    U: np.ndarray
    Q: np.ndarray
    converged: bool
    iterations: int
    residual: float
    objective: float
    history: list = field(default_factory=list)

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


def bw_barycenter(Us, weights=None, *, init=None, tol: float = 1e-13, max_iter: int = 2000,
                  progress: bool = False) -> BWBarycenter:
    r"""Bures–Wasserstein barycentre of ``Q_i = U_i U_i^T`` in ``M_r^+`` by the fixed-point
    iteration.

    Minimises ``F(U) = (1/2) sum_i w_i dist(U U^T, U_i U_i^T)^2`` (quadnet theory §1) by
    ``U_{k+1} = sum_i w_i U_i align(U_i, U_k)``: Riemannian gradient descent with unit step,
    equal for ``r = d`` to the fixed-point iteration of Álvarez-Esteban, del Barrio,
    Cuesta-Albertos & Matrán (2016). For ``r < d`` the result is the Fréchet mean among
    PSD matrices of rank ``<= r`` (see the module docstring). The iteration converges to a
    critical point; for ``r = 1`` (signs) and in symmetric configurations it can stop at a
    local minimum, so try several ``init`` and keep the smallest ``objective``.

    Parameters
    ----------
    Us : sequence of array_like, or array_like of shape (k, d, r)
        Full-column-rank factors of the points (all the same shape).
    weights : array_like, shape (k,), optional
        Nonnegative weights summing to 1 (to ``1e-12``); uniform by default.
    init : array_like, shape (d, r), optional
        Starting factor; by default the input of largest weight (the first on ties).
    tol : float, default 1e-13
        Stop when the residual ``||sum_i w_i log_U(U_i)||_F <= tol * scale`` with
        ``scale = sqrt(sum_i w_i ||U_i||_F^2)``.
    max_iter : int, default 2000
        Maximum number of steps; a :class:`quadnet.exceptions.ConvergenceWarning` is issued
        when it is reached first.
    progress : bool, default False
        Show a tqdm bar.

    Returns
    -------
    BWBarycenter
        ``.U``, ``.Q`` and the convergence report (``converged``, ``iterations``,
        ``residual``, ``objective``, ``history``).

    Raises
    ------
    ValueError
        Fewer than one point, shapes that differ, a rank-deficient factor, weights negative,
        of the wrong length or not summing to 1, ``tol`` not positive.

    Examples
    --------
    >>> import numpy as np
    >>> Us = [np.diag([1.0, 2.0]), np.diag([3.0, 2.0])]
    >>> b = bw_barycenter(Us)                 # commuting inputs: the mean of the square roots
    >>> np.round(np.diag(b.Q), 10), b.converged
    (array([4., 4.]), True)
    >>> b.residual < 1e-12
    True
    """
    if isinstance(Us, np.ndarray) and Us.ndim == 3:
        stack = [Us[i] for i in range(Us.shape[0])]
    else:
        try:
            stack = list(Us)
        except TypeError:
            raise TypeError(f"Us must be a sequence of d x r factors, got {type(Us).__name__}") \
                from None
    if not stack:
        raise ValueError("Us must contain at least one factor")
    first = as_factor(stack[0], "Us[0]")
    S = np.stack([first] + [as_factor(Ui, f"Us[{i}]", d=first.shape[0], r=first.shape[1])
                            for i, Ui in enumerate(stack[1:], start=1)])
    k, d, r = S.shape
    w = _as_weights(weights, k)
    tol = as_positive(tol, "tol")
    max_iter = as_int(max_iter, "max_iter", minimum=1)
    U = S[int(np.argmax(w))].copy() if init is None else as_factor(init, "init", d=d, r=r)
    scale = float(np.sqrt(np.sum(w * np.sum(S ** 2, axis=(1, 2)))))

    if progress:
        from tqdm.auto import tqdm
    else:
        tqdm = _NoBar

    history: list[float] = []
    converged = False
    it = 0
    with tqdm(total=max_iter, desc="bw_barycenter", disable=not progress, leave=False) as bar:
        while True:
            mean = np.tensordot(w, _aligned(S, U), axes=1)
            res = float(np.linalg.norm(mean - U))
            history.append(res)
            if res <= tol * scale:
                converged = True
                break
            if it >= max_iter:
                break
            U = mean
            it += 1
            bar.update(1)
    if not converged:
        warnings.warn(ConvergenceWarning(
            f"bw_barycenter: residual {res:.3e} > {tol:g} * {scale:.3g} after {max_iter} "
            f"steps", res), stacklevel=2)
    dists2 = np.sum((_aligned(S, U) - U) ** 2, axis=(1, 2))
    return BWBarycenter(U=U, Q=U @ U.T, converged=converged, iterations=it, residual=res,
                        objective=float(0.5 * np.sum(w * dists2)), history=history)


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
