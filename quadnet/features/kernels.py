"""Mahalanobis kernels of a recursive feature machine and their feature matrices (quadnet theory §6).

A kernel machine ``f_c(x) = Σ_j a_jc k_M(x, x_j)`` with feature matrix ``M ⪰ 0`` and
bandwidth ``L`` uses one of four kernels:

==============  =====================================  ==================================
name            ``k_M(x, z)``                          ``∇_x k_M(x, z) = M α(x,z) (z − γx)``
==============  =====================================  ==================================
``exp_inner``   ``exp(xᵀMz / L²)``                     ``α = k / L²``,            ``γ = 0``
``gaussian``    ``exp(−‖x − z‖²_M / (2L²))``           ``α = k / L²``,            ``γ = 1``
``laplace``     ``exp(−‖x − z‖_M / L)``                ``α = k / (L ‖x − z‖_M)``, ``γ = 1``
``quadratic``   ``(xᵀMz)² / L⁴``                       ``α = 2 xᵀMz / L⁴``,       ``γ = 0``
==============  =====================================  ==================================

with ``‖v‖²_M = vᵀMv``. The Laplace gradient is undefined at ``x = z``; we use the value 0
there (the symmetric one-sided average, which central differences also return).

Every input gradient therefore has the form ``∇_x f_c(x_i) = M G_ic`` with
``G_ic = Σ_j α_ij a_jc (x_j − γ x_i)``, and the two matrices RFM updates from are, in closed
form (derivation in ``docs/rfm.md``), with ``A`` the ``n × c`` coefficients, ``S = αA``:

* FACT matrix ``F = Σ_i Σ_c a_ic ∇_x f_c(x_i) x_iᵀ = M B``,
  ``B = Xᵀ [α ⊙ AAᵀ − γ diag(rowsum(S ⊙ A))] X``;
* AGOP ``= (1/n) Σ_i Σ_c ∇_x f_c(x_i) ∇_x f_c(x_i)ᵀ = M Γ M``,
  ``nΓ = Xᵀ [(αᵀα) ⊙ AAᵀ − γ(C + Cᵀ) + γ² diag(rowsum(S ⊙ S))] X``, ``C = αᵀ ⊙ (A Sᵀ)``,
  and, for the centred AGOP (gradients minus their mean over the data),
  ``Γ ← Γ − Ḡ Ḡᵀ`` with ``Ḡ = (1/n) Xᵀ [(αᵀ𝟙) ⊙ A − γ S]``.

Costs: ``F`` is ``O(n²(c + d))``; the AGOP is ``O(min(n³, n²cd))`` (the Gram route above or the
per-point gradients, whichever is cheaper).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from quadnet._linalg import sym
from quadnet._validation import as_matrix, as_positive, as_square

__all__ = [
    "KERNELS",
    "kernel_agop",
    "kernel_fact_matrix",
    "input_gradients",
    "kernel_matrix",
]

#: Kernel names accepted everywhere; ``γ`` of each (0: inner-product kernel, 1: translation
#: invariant kernel), see the module docstring.
KERNELS: dict[str, int] = {"exp_inner": 0, "gaussian": 1, "laplace": 1, "quadratic": 0}

#: Squared M-distances below this fraction of ``‖x‖²_M + ‖z‖²_M`` are treated as exact zeros
#: (the formula ``‖x‖² + ‖z‖² − 2xᵀMz`` leaves rounding noise of that relative size at x = z);
#: this matters for the Laplace kernel, whose gradient divides by the distance.
_DIST_RTOL = 1e-12

#: Inputs with at most this fraction of nonzero entries (one-hot data) are multiplied as
#: ``scipy.sparse`` matrices: ``O(nnz · n)`` instead of ``O(n²d)`` for ``ZMXᵀ`` and ``XᵀWX``.
_SPARSE_DENSITY = 0.1


def _maybe_sparse(X: np.ndarray):
    if X.size and np.count_nonzero(X) <= _SPARSE_DENSITY * X.size:
        return sparse.csr_array(X)
    return X


def _gram_M(Z: np.ndarray, M: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``Z M Xᵀ`` (``m × n``), exploiting sparse inputs."""
    Zs = _maybe_sparse(Z)
    XM = np.asarray(_maybe_sparse(X) @ M)  # (X M)ᵀ = M Xᵀ as M is symmetric
    if sparse.issparse(Zs):
        return np.asarray(Zs @ np.ascontiguousarray(XM.T))
    return Z @ XM.T


def _sandwich(X: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``Xᵀ W X`` (``d × d``), exploiting sparse inputs."""
    Xs = _maybe_sparse(X)
    if sparse.issparse(Xs):
        return np.asarray(np.asarray(Xs.T @ W) @ Xs)
    return X.T @ W @ X


def check_kernel(kernel) -> str:
    """``kernel`` if it is one of :data:`KERNELS`, else a ``ValueError``/``TypeError``."""
    if not isinstance(kernel, str):
        raise TypeError(f"kernel must be a string, one of {sorted(KERNELS)}, "
                        f"got {type(kernel).__name__}")
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {sorted(KERNELS)}, got {kernel!r}")
    return kernel


def kernel_and_alpha(kernel: str, Z: np.ndarray, X: np.ndarray, M: np.ndarray, L: float,
                     want_alpha: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """``K_ij = k_M(z_i, x_j)`` and, if asked, ``α(z_i, x_j)`` of the module docstring.

    No input checks (internal; the public functions check).
    """
    G = _gram_M(Z, M, X)
    if kernel == "exp_inner":
        G *= 1.0 / L**2
        K = np.exp(G, out=G)
        return K, (K / L**2 if want_alpha else None)
    if kernel == "quadratic":
        alpha = G * (2.0 / L**4) if want_alpha else None
        G *= 1.0 / L**2
        return np.square(G, out=G), alpha
    zz = np.einsum("ij,ij->i", np.asarray(_maybe_sparse(Z) @ M), Z)
    xx = zz if Z is X else np.einsum("ij,ij->i", np.asarray(_maybe_sparse(X) @ M), X)
    d2 = G
    d2 *= -2.0
    d2 += zz[:, None]
    d2 += xx[None, :]
    if kernel == "gaussian":
        np.maximum(d2, 0.0, out=d2)
        d2 *= -1.0 / (2.0 * L**2)
        K = np.exp(d2, out=d2)
        return K, (K / L**2 if want_alpha else None)
    # laplace
    d2[d2 <= _DIST_RTOL * (zz[:, None] + xx[None, :])] = 0.0
    dist = np.sqrt(d2, out=d2)
    K = np.exp(-dist / L)
    if not want_alpha:
        return K, None
    alpha = np.zeros_like(K)
    pos = dist > 0
    alpha[pos] = K[pos] / (L * dist[pos])
    return K, alpha


def _check_common(kernel, X, M, bandwidth, name_X="X") -> tuple[str, np.ndarray, np.ndarray, float]:
    kernel = check_kernel(kernel)
    X = as_matrix(X, name_X)
    M = as_square(M, "M", X.shape[1])
    L = as_positive(bandwidth, "bandwidth")
    return kernel, X, M, L


def kernel_matrix(kernel: str, Z, X, M, bandwidth: float) -> np.ndarray:
    """The ``m × n`` kernel matrix ``K_ij = k_M(z_i, x_j)`` (formulas in the module docstring).

    Parameters
    ----------
    kernel : {"exp_inner", "gaussian", "laplace", "quadratic"}
        Kernel name (:data:`KERNELS`).
    Z : array_like, shape (m, d)
        Evaluation points.
    X : array_like, shape (n, d)
        Centres.
    M : array_like, shape (d, d)
        Symmetric PSD Mahalanobis matrix.
    bandwidth : float
        ``L > 0``.

    Raises
    ------
    TypeError, ValueError
        For an unknown kernel or bad arrays.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); coef = np.ones((2, 1))
    >>> kernel_matrix("gaussian", X, X, np.eye(2), 1.0).round(6).tolist()   # exp(-|x-z|^2 / (2 L^2))
    [[1.0, 0.367879], [0.367879, 1.0]]
    """
    kernel, X, M, L = _check_common(kernel, X, M, bandwidth)
    Z = as_matrix(Z, "Z", shape=(None, X.shape[1]))
    K, _ = kernel_and_alpha(kernel, Z, X, M, L, want_alpha=False)
    return K


def _coefficients(coef, n: int) -> np.ndarray:
    A = np.asarray(coef)
    if A.ndim == 1:
        A = A[:, None]
    return as_matrix(A, "coef", shape=(n, None))


def input_gradients(kernel: str, Z, X, coef, M, bandwidth: float) -> np.ndarray:
    """``∇_x f_c(z_i)`` for ``f_c(x) = Σ_j a_jc k_M(x, x_j)``, an ``m × c × d`` array.

    ``∇_x f_c(z) = M Σ_j α(z, x_j) a_jc (x_j − γ z)`` (centres ``x_j`` held fixed).
    Cost ``O(mncd)``: meant for checks and small problems; RFM uses :func:`kernel_fact_matrix`
    and :func:`kernel_agop`.

    Parameters
    ----------
    kernel : {"exp_inner", "gaussian", "laplace", "quadratic"}
        Kernel name (:data:`KERNELS`).
    Z : array_like, shape (m, d)
        Evaluation points.
    X : array_like, shape (n, d)
        Centres.
    coef : array_like, shape (n,) or (n, c)
        Coefficients ``a``.
    M : array_like, shape (d, d)
        Symmetric PSD Mahalanobis matrix.
    bandwidth : float
        ``L > 0``.

    Raises
    ------
    TypeError, ValueError
        For an unknown kernel or bad arrays.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); coef = np.ones((2, 1))
    >>> input_gradients("quadratic", X, X, coef, np.eye(2), 1.0).shape
    (2, 1, 2)
    """
    kernel, X, M, L = _check_common(kernel, X, M, bandwidth)
    Z = as_matrix(Z, "Z", shape=(None, X.shape[1]))
    A = _coefficients(coef, X.shape[0])
    _, alpha = kernel_and_alpha(kernel, Z, X, M, L)
    G = np.einsum("ij,jc,jk->ick", alpha, A, X)
    if KERNELS[kernel]:
        G -= (alpha @ A)[:, :, None] * Z[:, None, :]
    return G @ M  # M symmetric: (M G_ic)ᵀ = G_icᵀ M


def kernel_fact_matrix(kernel: str, X, coef, M, bandwidth: float) -> np.ndarray:
    """FACT matrix of the kernel machine, ``F = Σ_i Σ_c a_ic ∇_x f_c(x_i) x_iᵀ = M B``.

    ``B = Xᵀ [α ⊙ AAᵀ − γ diag(rowsum(αA ⊙ A))] X`` (``d × d``, symmetric); this is
    ``−(1/(nλ)) Σ_i ∇_x ℓ_i x_iᵀ`` of quadnet theory §6 with the kernel-ridge residual ``−nλ a_i``
    (``docs/rfm.md``), so ``λ`` cancels and the ridgeless limit is the same formula.
    Cost ``O(n²(c + d))``.

    Parameters
    ----------
    kernel : {"exp_inner", "gaussian", "laplace", "quadratic"}
        Kernel name (:data:`KERNELS`).
    X : array_like, shape (n, d)
        Centres (the training inputs).
    coef : array_like, shape (n,) or (n, c)
        Coefficients ``a``.
    M : array_like, shape (d, d)
        Symmetric PSD Mahalanobis matrix.
    bandwidth : float
        ``L > 0``.

    Raises
    ------
    TypeError, ValueError
        For an unknown kernel or bad arrays.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); coef = np.ones((2, 1))
    >>> F = kernel_fact_matrix("quadratic", X, coef, np.eye(2), 1.0)
    >>> bool(np.allclose(F, F.T))        # F = M B with B symmetric, M = I
    True
    """
    kernel, X, M, L = _check_common(kernel, X, M, bandwidth)
    A = _coefficients(coef, X.shape[0])
    _, alpha = kernel_and_alpha(kernel, X, X, M, L)
    return fact_from_alpha(X, A, M, alpha, KERNELS[kernel])


def fact_from_alpha(X: np.ndarray, A: np.ndarray, M: np.ndarray, alpha: np.ndarray,
                    gamma: int) -> np.ndarray:
    """:func:`kernel_fact_matrix` from a precomputed ``α`` (internal: no input checks)."""
    W = alpha * (A @ A.T)
    if gamma:
        W[np.diag_indices_from(W)] -= np.einsum("ij->i", W)
    B = _sandwich(X, W.T)
    return M @ sym(B)


def kernel_agop(kernel: str, X, coef, M, bandwidth: float, *, centre: bool = False) -> np.ndarray:
    """Average gradient outer product ``(1/n) Σ_i Σ_c ∇_x f_c(x_i) ∇_x f_c(x_i)ᵀ = M Γ M``.

    With ``centre=True`` the gradients are centred over the data first (per output):
    ``(1/n) Σ_i Σ_c (g_ic − ḡ_c)(g_ic − ḡ_c)ᵀ``. Closed forms of ``Γ`` in the module docstring;
    the cheaper of the Gram route (``O(n³)``) and the per-point route (``O(n²cd)``) runs.

    Parameters
    ----------
    kernel : {"exp_inner", "gaussian", "laplace", "quadratic"}
        Kernel name (:data:`KERNELS`).
    X : array_like, shape (n, d)
        Centres (the training inputs).
    coef : array_like, shape (n,) or (n, c)
        Coefficients ``a``.
    centre : bool, default False
        Centre the gradients over the data first.
    M : array_like, shape (d, d)
        Symmetric PSD Mahalanobis matrix.
    bandwidth : float
        ``L > 0``.

    Raises
    ------
    TypeError, ValueError
        For an unknown kernel or bad arrays.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); coef = np.ones((2, 1))
    >>> G = kernel_agop("quadratic", X, coef, np.eye(2), 1.0)
    >>> bool(np.linalg.eigvalsh(G).min() >= -1e-12)     # an average of outer products
    True
    """
    kernel, X, M, L = _check_common(kernel, X, M, bandwidth)
    A = _coefficients(coef, X.shape[0])
    _, alpha = kernel_and_alpha(kernel, X, X, M, L)
    return agop_from_alpha(X, A, M, alpha, KERNELS[kernel], centre=centre)


def agop_from_alpha(X: np.ndarray, A: np.ndarray, M: np.ndarray, alpha: np.ndarray, gamma: int,
                    *, centre: bool) -> np.ndarray:
    """:func:`kernel_agop` from a precomputed ``α`` (internal: no input checks)."""
    n, d = X.shape
    c = A.shape[1]
    S = alpha @ A
    if n <= c * d:
        P = alpha.T @ alpha
        P *= A @ A.T
        if gamma:
            C = alpha.T * (A @ S.T)
            P -= C
            P -= C.T
            P[np.diag_indices(n)] += np.einsum("ic,ic->i", S, S)
        Gamma = _sandwich(X, P) / n
    else:
        G = (alpha @ (A[:, :, None] * X[:, None, :]).reshape(n, c * d)).reshape(n, c, d)
        if gamma:
            G -= S[:, :, None] * X[:, None, :]
        G = G.reshape(n * c, d)
        Gamma = G.T @ G / n
    if centre:
        Gbar = X.T @ (alpha.sum(axis=0)[:, None] * A - gamma * S) / n
        Gamma -= Gbar @ Gbar.T
    Gamma = sym(Gamma)
    return M @ Gamma @ M
