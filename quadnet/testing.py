r"""Dense independent references for tests and ``quadnet verify`` checks.

The production sensing code never forms a measurement matrix (it works in ``O(m d r)``,
quadnet theory §4). The references here do, on purpose: they write the least-squares loss on
measurements ``<A_i, Q> = y_i`` with every ``A_i`` present (an ``m x d x d`` array, small
sizes only), so that a test or a check compares two computations that share no code.

* :func:`dense_measurement_reference` -- value, factor gradient, factor Hessian-vector
  product and empirical normal operator of

  .. math:: L(U) = \frac{1}{2m} \sum_i (\langle A_i, U U^\top \rangle - y_i)^2

  (quadnet theory §2 for the lift, §4 for the normalisation);
* :func:`dense_sensing_reference` -- the same with ``A_i = x_i x_i^T`` (Gaussian rank-one
  sensing);
* :func:`dense_differential` -- the matrix of the differential of ``U -> U U^T`` (a
  ``d^2 x dr`` array, quadnet theory §1), for dense least-squares references of lifts and
  horizontal spaces;
* :func:`five_point_derivative` -- the five-point central difference, exact for polynomials
  of degree ``<= 4`` (so for ``L(U + t xi)``, a quartic in ``t``, and its gradient, a cubic).

Examples
--------
>>> import numpy as np
>>> X = np.array([[1.0, 0.0], [1.0, 1.0]]); y = np.array([1.0, 4.0])
>>> value, grad, hvp, Tm = dense_sensing_reference(X, y)
>>> U = np.array([[1.0], [1.0]])
>>> value(U)      # residuals (1 - 1, 4 - 4)
0.0
>>> round(five_point_derivative(lambda t: (1 + t) ** 4), 12)
4.0
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["dense_differential", "dense_measurement_reference", "dense_sensing_reference",
           "five_point_derivative"]


def dense_measurement_reference(A, y) -> tuple[Callable, Callable, Callable, Callable]:
    r"""Dense formulas of least squares on symmetric measurements ``A`` (``m x d x d``).

    With ``res_i = <A_i, U U^T> - y_i``:

    * ``value(U) = (1/(2m)) sum_i res_i^2``;
    * ``grad(U) = (2/m) sum_i res_i A_i U``;
    * ``hvp(U, xi) = (2/m) sum_i (res_i A_i xi + <A_i, xi U^T + U xi^T> A_i U)``;
    * ``Tm(H) = (1/m) sum_i <A_i, H> A_i``.

    Parameters
    ----------
    A : array_like, shape (m, d, d)
        Symmetric measurement matrices ``A_i``, every one stored (small ``m d^2`` only).
    y : array_like, shape (m,)
        Measurements ``y_i``.

    Returns
    -------
    (value, grad, hvp, Tm) : tuple of callables

    Raises
    ------
    ValueError
        If the shapes do not match.

    Examples
    --------
    >>> import numpy as np
    >>> value, grad, hvp, Tm = dense_measurement_reference(np.eye(2)[None], np.array([1.0]))
    >>> U = np.array([[1.0], [0.0]])
    >>> value(U), grad(U).ravel().tolist(), Tm(np.eye(2)).tolist()
    (0.0, [0.0, 0.0], [[2.0, 0.0], [0.0, 2.0]])
    """
    A = np.asarray(A, dtype=float)
    y = np.asarray(y, dtype=float)
    if A.ndim != 3 or A.shape[1] != A.shape[2] or y.shape != (A.shape[0],):
        raise ValueError(f"A must be (m, d, d) and y (m,), got {A.shape} and {y.shape}")
    m = A.shape[0]

    def res(U):
        return np.einsum("iab,ab->i", A, U @ U.T) - y

    def value(U):
        e = res(U)
        return float(e @ e) / (2 * m)

    def grad(U):
        return 2.0 / m * np.einsum("i,iab,bk->ak", res(U), A, U)

    def hvp(U, xi):
        c = np.einsum("iab,ab->i", A, xi @ U.T + U @ xi.T)
        return 2.0 / m * (np.einsum("i,iab,bk->ak", res(U), A, xi)
                          + np.einsum("i,iab,bk->ak", c, A, U))

    def Tm(H):
        return np.einsum("i,iab->ab", np.einsum("iab,ab->i", A, H), A) / m

    return value, grad, hvp, Tm


def dense_sensing_reference(X, y) -> tuple[Callable, Callable, Callable, Callable]:
    """:func:`dense_measurement_reference` for Gaussian sensing, ``A_i = x_i x_i^T``.

    Parameters
    ----------
    X : array_like, shape (m, d)
        Design, rows ``x_i``.
    y : array_like, shape (m,)
        Measurements.

    Returns
    -------
    tuple of callables
        The ``(value, grad, hvp, Tm)`` of :func:`dense_measurement_reference` on the
        ``m x d x d`` stack ``A_i = x_i x_i^T``.

    Examples
    --------
    >>> import numpy as np
    >>> value, *_ = dense_sensing_reference(np.array([[2.0, 0.0]]), np.array([0.0]))
    >>> value(np.array([[1.0], [0.0]]))    # (x^T U U^T x)^2 / 2 = 16 / 2
    8.0
    """
    X = np.asarray(X, dtype=float)
    return dense_measurement_reference(np.einsum("ia,ib->iab", X, X), y)


def dense_differential(U) -> np.ndarray:
    r"""The matrix ``D`` of ``xi -> vec(xi U^T + U xi^T)`` (row-major ``vec``), column ``a``
    the image of the ``a``-th unit ``d x r`` matrix: ``D pi(U)`` of ``pi(U) = U U^T``
    (quadnet theory §1), formed entry by entry (small sizes only).

    Parameters
    ----------
    U : array_like, shape (d, r)

    Returns
    -------
    numpy.ndarray, shape (d * d, d * r)

    Examples
    --------
    >>> import numpy as np
    >>> D = dense_differential(np.array([[1.0], [0.0]]))
    >>> D @ np.array([1.0, 2.0])          # xi = (1, 2): xi U^T + U xi^T = [[2, 2], [2, 0]]
    array([2., 2., 2., 0.])
    """
    U = np.asarray(U, dtype=float)
    d, r = U.shape
    cols = []
    for a in range(d * r):
        xi = np.zeros(d * r)
        xi[a] = 1.0
        xi = xi.reshape(d, r)
        cols.append((xi @ U.T + U @ xi.T).reshape(-1))
    return np.array(cols).T


def five_point_derivative(f: Callable[[float], object], h: float = 0.5):
    r"""Five-point central difference at 0, exact for polynomials of degree ``<= 4``.

    .. math:: f'(0) \approx \frac{8 (f(h) - f(-h)) - (f(2h) - f(-2h))}{12 h}

    ``L(U + t xi)`` is a quartic and ``grad L(U + t xi)`` a cubic in ``t`` for the quadratic
    losses of quadnet, so no truncation error remains, only rounding (~ ``eps |f| / h``).

    Parameters
    ----------
    f : callable
        ``t -> float`` or ``t -> array``.
    h : float, default 0.5
        Step.

    Returns
    -------
    float or numpy.ndarray
        The derivative estimate, shaped like ``f(0)``.

    Examples
    --------
    >>> round(five_point_derivative(lambda t: 3 * t ** 3 + t), 12)
    1.0
    """
    return (8 * (f(h) - f(-h)) - (f(2 * h) - f(-2 * h))) / (12 * h)
