"""Representation diagnostics of learned features (quadnet theory §6).

Applied to any feature map ``φ(x)`` given as the rows of a matrix ``Φ`` (``n × k``): an RFM's
``M^{1/2} x``, a quadratic network's ``Uᵀ x``, ...

* :func:`effective_rank` ``= exp(H(p))``, ``p = λ / Σλ`` the normalised eigenvalues of a PSD
  matrix (e.g. :func:`feature_covariance`), ``H(p) = −Σ p_i log p_i`` (``0 log 0 = 0``); it runs
  from 1 (one direction) to ``k`` (isotropic).
* :func:`linear_readout_accuracy`: accuracy of a ridge-regularised least-squares linear read-out
  (with intercept) trained on the features, evaluated on held-out features.
* :func:`distance_correlation` / :func:`angle_correlation`: Pearson correlation, over all pairs
  ``i < j``, between the input-space and feature-space Euclidean distances / angles.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from quadnet._linalg import sym
from quadnet._validation import (
    Array,
    Boolean,
    NonFiniteResultError,
    Real,
    Relation,
    _overflow_error,
    validate_params,
)

__all__ = [
    "angle_correlation",
    "distance_correlation",
    "effective_rank",
    "feature_covariance",
    "linear_readout_accuracy",
]

#: Eigenvalues above ``−PSD_RTOL · max|λ|`` count as rounding of a PSD matrix and are clipped
#: to 0; more negative ones make the input not PSD (an error).
PSD_RTOL = 1e-10


@validate_params({"Phi": Array(ndim=2), "centre": Boolean()})
def feature_covariance(Phi, *, centre: bool = True) -> np.ndarray:
    """``(1/n) Σ_i (φ_i − φ̄)(φ_i − φ̄)ᵀ`` (``φ̄ = 0`` if ``centre=False``), ``k × k``.

    Examples
    --------
    >>> import numpy as np
    >>> feature_covariance(np.array([[1.0], [3.0]])).tolist()
    [[1.0]]
    """
    if centre:
        Phi = Phi - Phi.mean(axis=0)
    return Phi.T @ Phi / Phi.shape[0]


@validate_params({"C": Array(allow_empty=True)})
def effective_rank(C) -> float:
    r"""Effective rank (entropy of the normalised spectrum, Roy & Vetterli 2007).

    .. math:: \operatorname{erank}(C) = \exp\left(-\sum_i p_i \log p_i\right),
              \qquad p = \lambda / \textstyle\sum_j \lambda_j ,

    of a symmetric PSD matrix ``C`` or of a 1-d array of its (non-negative) eigenvalues
    (quadnet theory §6).

    Parameters
    ----------
    C : array_like, shape (n, n) or (n,)
        Symmetric PSD matrix, or its spectrum.

    Returns
    -------
    float
        In ``[1, n]``.

    Raises
    ------
    TypeError, ValueError
        For non-finite, non-symmetric, negative or all-zero input.

    Examples
    --------
    >>> import numpy as np
    >>> round(effective_rank(np.eye(3)), 12), round(effective_rank([1.0, 1.0, 0.0]), 12)
    (3.0, 2.0)
    """
    if C.ndim == 2:
        if C.shape[0] != C.shape[1]:
            raise ValueError(f"C must be a square matrix or a 1-d spectrum, got shape {C.shape}")
        scale = np.linalg.norm(C)
        if np.linalg.norm(C - C.T) > 1e-10 * max(scale, np.finfo(float).tiny):
            raise ValueError("C must be symmetric")
        lam = np.linalg.eigvalsh(sym(C))
    elif C.ndim == 1:
        lam = C
    else:
        raise ValueError(f"C must be a square matrix or a 1-d spectrum, got shape {C.shape}")
    if lam.size == 0:
        raise ValueError("C is empty")
    top = float(np.max(np.abs(lam)))
    if top == 0.0:
        raise ValueError("C is zero: the effective rank of a zero matrix is undefined")
    if np.min(lam) < -PSD_RTOL * top:
        raise ValueError(f"C must be positive semidefinite, smallest eigenvalue "
                         f"{np.min(lam):.3e} (largest magnitude {top:.3e})")
    p = np.clip(lam, 0.0, None)
    p = p[p > 0] / p.sum()
    return float(np.exp(-np.sum(p * np.log(p))))


def _targets(y, n: int, name: str, classes: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray]:
    """``y`` (a float array) as a target matrix and integer labels: 1-d labels → one-hot over
    ``classes``; ``n × 1`` → ±1 signs; ``n × c`` → argmax labels."""
    if y.ndim == 0:
        raise ValueError(f"{name} must be 1-d labels or a 2-d target matrix, got a scalar")
    if y.shape[0] != n:
        raise ValueError(f"{name} must have {n} rows (one per feature row), got {y.shape[0]}")
    if y.ndim == 1:
        if not np.all(y == np.round(y)):
            raise ValueError(f"{name} as a 1-d array must hold integer class labels")
        cls = np.unique(y) if classes is None else classes
        T = (y[:, None] == cls[None, :]).astype(float)
        return T, y
    if y.ndim != 2:
        raise ValueError(f"{name} must be 1-d labels or a 2-d target matrix, got shape {y.shape}")
    if y.shape[1] == 1:
        return y, np.sign(y[:, 0])
    return y, y.argmax(axis=1).astype(float)


def _same_columns(a: dict):
    k, got = a["Phi_train"].shape[1], a["Phi_test"].shape
    return None if got[1] == k else f"Phi_test must have shape (*, {k}), got {got}"


@validate_params({"Phi_train": Array(ndim=2), "y_train": Array(allow_empty=True),
                  "Phi_test": Array(ndim=2), "y_test": Array(allow_empty=True),
                  "ridge": Real(0)},
                 relations=[Relation(("Phi_train", "Phi_test"), _same_columns,
                                     "Phi_test has as many columns as Phi_train")])
def linear_readout_accuracy(Phi_train, y_train, Phi_test, y_test, *, ridge: float = 1e-8
                            ) -> float:
    """Accuracy of the linear read-out ``ŷ = Wᵀφ + b`` fitted by ridge least squares.

    ``W, b = argmin Σ_i ‖Wᵀφ_i + b − t_i‖² + ridge · n · (tr(ZᵀZ)/k) · ‖W‖²_F`` on the centred
    training features ``Z`` (``n × k``; the mean eigenvalue ``tr(ZᵀZ)/k`` makes ``ridge``
    independent of the scale of the features), with targets ``t_i`` one-hot for integer labels
    ``y`` (argmax decides), the given columns for a target matrix (argmax), or ``±1`` for one
    column (sign decides).

    Examples
    --------
    >>> import numpy as np
    >>> lab = np.array([0, 1] * 5); Phi = np.c_[lab, 1 - lab].astype(float)
    >>> linear_readout_accuracy(Phi, lab, Phi, lab)
    1.0
    """
    Ptr, Pte, lam, ytr, yte = Phi_train, Phi_test, ridge, y_train, y_test
    classes = np.unique(ytr) if ytr.ndim == 1 else None
    Ttr, _ = _targets(ytr, Ptr.shape[0], "y_train")
    if (yte.ndim == 1) != (ytr.ndim == 1) or (yte.ndim == 2 and yte.shape[1] != Ttr.shape[1]):
        raise ValueError(f"y_test must be of the same kind as y_train, got shapes {yte.shape} "
                         f"and {ytr.shape}")
    _, labels_te = _targets(yte, Pte.shape[0], "y_test", classes)
    mu, tmu = Ptr.mean(axis=0), Ttr.mean(axis=0)
    Z = Ptr - mu
    n, k = Z.shape
    with np.errstate(over="ignore", invalid="ignore"):
        G = Z.T @ Z
        G[np.diag_indices(k)] += lam * n * max(np.trace(G) / k, np.finfo(float).tiny)
        rhs = Z.T @ (Ttr - tmu)
    if not (np.all(np.isfinite(G)) and np.all(np.isfinite(rhs))):
        raise _overflow("the Gram matrix of the training features", {"Phi_train": Ptr})
    if lam > 0:
        W = linalg.solve(G, rhs, assume_a="pos")
    else:
        W = linalg.lstsq(Z, Ttr - tmu)[0]
    with np.errstate(over="ignore", invalid="ignore"):
        out = (Pte - mu) @ W + tmu
    if not np.all(np.isfinite(out)):
        raise _overflow("the read-out of the test features", {"Phi_test": Pte,
                                                              "Phi_train": Ptr})
    if ytr.ndim == 1:
        pred = classes[out.argmax(axis=1)]
        return float(np.mean(pred == labels_te))
    if out.shape[1] == 1:
        return float(np.mean(np.sign(out[:, 0]) == labels_te))
    return float(np.mean(out.argmax(axis=1) == labels_te))


def _overflow(what: str, args: dict) -> NonFiniteResultError:
    return _overflow_error(what, args, "rescale the features to moderate magnitudes")


def _pairwise_upper(D: np.ndarray) -> np.ndarray:
    return D[np.triu_indices(D.shape[0], k=1)]


def _pearson(a: np.ndarray, b: np.ndarray, what: str) -> float:
    """Pearson correlation; values constant to 1e-12 relative (rounding) have none."""
    scale_a, scale_b = np.linalg.norm(a), np.linalg.norm(b)
    a = a - a.mean()
    b = b - b.mean()
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na <= 1e-12 * scale_a or nb <= 1e-12 * scale_b:
        raise ValueError(f"the pairwise {what} are constant in one of the spaces; their "
                         f"correlation is undefined")
    return float(np.clip(a @ b / (na * nb), -1.0, 1.0))


def _two_spaces(a: dict):
    """The relation of :func:`distance_correlation` and :func:`angle_correlation`: as many
    rows in both spaces, at least 3."""
    n, got = a["X"].shape[0], a["Phi"].shape
    if got[0] != n:
        return f"Phi must have shape ({n}, *), got {got}"
    if n < 3:
        return f"need at least 3 points for a correlation over pairs, got {n}"
    return None


_TWO_SPACES = {"X": Array(ndim=2), "Phi": Array(ndim=2)}
_PAIRS = [Relation(("X", "Phi"), _two_spaces, "X and Phi have the same number n >= 3 of rows")]


def _unit_scale(Z: np.ndarray) -> np.ndarray:
    """``Z / max |Z|``: the correlations are invariant to scaling either space, and the
    products below stay finite for any finite ``Z``."""
    top = float(np.max(np.abs(Z)))
    return Z / top if top > 0 else Z


def _distances(Z: np.ndarray) -> np.ndarray:
    Z = _unit_scale(Z)
    sq = np.einsum("ij,ij->i", Z, Z)
    D2 = sq[:, None] + sq[None, :] - 2.0 * Z @ Z.T
    return np.sqrt(np.clip(D2, 0.0, None))


def _angles(Z: np.ndarray, name: str) -> np.ndarray:
    Z = _unit_scale(Z)
    norms = np.linalg.norm(Z, axis=1)
    if np.any(norms == 0):
        raise ValueError(f"{name} has a zero row; its angle to other rows is undefined")
    U = Z / norms[:, None]
    return np.arccos(np.clip(U @ U.T, -1.0, 1.0))


@validate_params(_TWO_SPACES, relations=_PAIRS)
def distance_correlation(X, Phi) -> float:
    """Pearson correlation of ``‖x_i − x_j‖`` and ``‖φ_i − φ_j‖`` over all pairs ``i < j``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((10, 3))
    >>> round(distance_correlation(X, 2 * X), 12)        # distances scale: correlation 1
    1.0
    """
    return _pearson(_pairwise_upper(_distances(X)), _pairwise_upper(_distances(Phi)),
                    "distances")


@validate_params(_TWO_SPACES, relations=_PAIRS)
def angle_correlation(X, Phi) -> float:
    """Pearson correlation of ``∠(x_i, x_j)`` and ``∠(φ_i, φ_j)`` over all pairs ``i < j``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((10, 3))
    >>> round(angle_correlation(X, X), 12)
    1.0
    """
    return _pearson(_pairwise_upper(_angles(X, "X")), _pairwise_upper(_angles(Phi, "Phi")),
                    "angles")
