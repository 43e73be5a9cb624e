"""Small dense linear-algebra kernels shared by every layer (raw arrays, no validation).

Public functions validate their arguments and then call these; nothing here checks its
input, so each is a few numpy operations and safe to call in inner loops.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["cosine", "eigh_power", "psd_eigh", "psd_power", "random_orthogonal", "rel_diff", "sym"]


def sym(A: np.ndarray) -> np.ndarray:
    """Symmetric part ``(A + A^T) / 2`` of a square matrix (or of each matrix in a stack).

    Examples
    --------
    >>> import numpy as np
    >>> sym(np.array([[0.0, 2.0], [0.0, 0.0]])).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    return 0.5 * (A + np.swapaxes(A, -1, -2))


def psd_eigh(G: np.ndarray, *, name: str = "G") -> tuple[np.ndarray, np.ndarray]:
    """Eigendecomposition ``(w, V)`` of a symmetric PSD matrix with rounding-level ``w`` zeroed.

    Eigenvalues below ``n eps lambda_max`` (rounding of a PSD matrix) are set to zero; a
    genuinely negative eigenvalue (below ``-100`` times that) raises ``ValueError`` naming
    ``name``. The one place quadnet decides "PSD up to rounding" for powers and roots.

    Examples
    --------
    >>> import numpy as np
    >>> w, V = psd_eigh(np.diag([1.0, -1e-18]))
    >>> w.tolist()                          # the rounding-level negative eigenvalue is zeroed
    [0.0, 1.0]
    """
    w, V = np.linalg.eigh(G)
    tol = G.shape[0] * np.finfo(float).eps * max(abs(w).max(), np.finfo(float).tiny)
    if w.min() < -100 * tol:
        raise ValueError(f"{name} must be positive semidefinite, smallest eigenvalue "
                         f"{w.min():.3e}")
    return np.where(w > tol, w, 0.0), V


def psd_power(G: np.ndarray, s: float, *, name: str = "G") -> np.ndarray:
    """``G^s`` of a symmetric PSD matrix by :func:`psd_eigh` (``s > 0``; ``s = 1/2``: the root).

    Examples
    --------
    >>> import numpy as np
    >>> psd_power(np.diag([4.0, 9.0]), 0.5).tolist()
    [[2.0, 0.0], [0.0, 3.0]]
    """
    w, V = psd_eigh(G, name=name)
    return eigh_power(w, V, s, name=name)


#: ``log`` of the largest float64: ``lambda^s`` overflows once ``s log lambda`` exceeds it.
_LOG_MAX = math.log(np.finfo(float).max)


def eigh_power(w: np.ndarray, V: np.ndarray, s: float, *, name: str = "G",
               power_name: str = "s", unit: bool = False) -> np.ndarray:
    """``V diag(w^s) V^T`` from an eigendecomposition ``(w >= 0, V)`` of :func:`psd_eigh`.

    ``unit=True`` returns ``(G / lambda_max)^s`` instead (what a cosine sees: ``G^s`` up to the
    factor ``lambda_max^s``), which no power overflows. Otherwise a power whose result would
    overflow float64 (``lambda_max^s > 1e308 / n``, e.g. ``s = 1e300`` with ``lambda_max > 1``)
    raises ``ValueError`` naming ``power_name`` and ``name``, never returning ``inf``.

    Examples
    --------
    >>> import numpy as np
    >>> w, V = np.array([1.0, 4.0]), np.eye(2)
    >>> eigh_power(w, V, 0.5).tolist(), eigh_power(w, V, 1e300, unit=True).tolist()
    ([[1.0, 0.0], [0.0, 2.0]], [[0.0, 0.0], [0.0, 1.0]])
    """
    top = float(w.max()) if w.size else 0.0
    if unit:
        if top > 0.0:
            w = w / top
    elif top > 1.0 and s * math.log(top) > _LOG_MAX - math.log(w.size):
        raise ValueError(f"{power_name} = {s:g} is too large for {name}: lambda_max({name})^"
                         f"{power_name} = {top:.6g}^{s:g} overflows float64; use a smaller "
                         f"{power_name} or rescale {name} ((c {name})^{power_name} = "
                         f"c^{power_name} {name}^{power_name})")
    return (V * w**s) @ V.T


def cosine(A: np.ndarray, B: np.ndarray, names: tuple[str, str] = ("A", "B")) -> float:
    """Frobenius cosine ``<A, B> / (||A||_F ||B||_F)``; ``ValueError`` for a zero matrix.

    Each argument is divided by its largest entry first, so the result is exact for entries
    anywhere in float64's range (``1e-300`` or ``1e300``): the cosine is scale invariant,
    its norms are not representable there.

    Examples
    --------
    >>> import numpy as np
    >>> cosine(np.eye(2), -np.eye(2))
    -1.0
    >>> cosine(1e300 * np.eye(2), 1e-300 * np.eye(2))
    1.0
    """
    sa, sb = np.max(np.abs(A)), np.max(np.abs(B))
    if sa == 0 or sb == 0:
        which = names[0] if sa == 0 else names[1]
        raise ValueError(f"the cosine is undefined: {which} is the zero matrix")
    A, B = A / sa, B / sb
    na, nb = np.linalg.norm(A), np.linalg.norm(B)
    return float(np.clip(np.vdot(A, B) / (na * nb), -1.0, 1.0))


def rel_diff(a, b) -> float:
    """``||a - b|| / ||b||`` (Frobenius / Euclidean): the relative difference quadnet reports.

    Both are divided by ``max |b|`` first (scale invariant; no overflow or underflow of the
    norms); ``||a||`` when ``b = 0``.

    Examples
    --------
    >>> rel_diff([1.0, 1.0], [1.0, 0.0])
    1.0
    >>> rel_diff([2e300], [1e300])
    1.0
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    s = np.max(np.abs(b)) if b.size else 0.0
    if s == 0:
        return float(np.linalg.norm(a))
    return float(np.linalg.norm(a / s - b / s) / np.linalg.norm(b / s))


def random_orthogonal(r: int, rng: np.random.Generator, *, improper: bool | None = None
                      ) -> np.ndarray:
    """A Haar-random ``R`` in ``O(r)``; ``improper=True``/``False`` forces ``det R = -1``/``+1``.

    QR of a Gaussian matrix with the signs of ``diag(R)`` fixed (Mezzadri 2007).

    Examples
    --------
    >>> import numpy as np
    >>> R = random_orthogonal(3, np.random.default_rng(0), improper=True)
    >>> bool(np.allclose(R.T @ R, np.eye(3))), round(float(np.linalg.det(R)), 12)
    (True, -1.0)
    """
    Qm, Rm = np.linalg.qr(rng.standard_normal((r, r)))
    R = Qm * np.sign(np.diag(Rm))
    if improper is not None and (np.linalg.det(R) < 0) != improper:
        R[:, 0] = -R[:, 0]
    return R
