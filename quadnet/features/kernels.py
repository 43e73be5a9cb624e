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

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy import sparse

from quadnet._linalg import sym
from quadnet._threads import blas_threads
from quadnet._validation import (
    Array,
    Boolean,
    Constraint,
    Options,
    Real,
    Symmetric,
    _bind,
    as_array,
    validate_params,
)

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


def check_kernel(kernel) -> str:
    """``kernel`` if it is one of :data:`KERNELS`, else a ``ValueError``/``TypeError``."""
    return KERNEL.convert(kernel, "kernel", {})


def _from_gram(kernel: str, G: np.ndarray, zz: np.ndarray | None, xx: np.ndarray | None,
               L: float, want_alpha: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """``K`` and, if asked, ``α`` of the module docstring from the Gram block ``G = Z M Xᵀ``
    (overwritten) and the squared norms ``zz = ‖z_i‖²_M``, ``xx = ‖x_j‖²_M`` (translation
    invariant kernels only). The one place the four kernel formulas live."""
    if kernel == "exp_inner":
        G *= 1.0 / L**2
        K = np.exp(G, out=G)
        return K, (alpha_from_kernel(kernel, K, L) if want_alpha else None)
    if kernel == "quadratic":
        alpha = G * (2.0 / L**4) if want_alpha else None
        G *= 1.0 / L**2
        return np.square(G, out=G), alpha
    d2 = G
    d2 *= -2.0
    d2 += zz[:, None]
    d2 += xx[None, :]
    if kernel == "gaussian":
        np.maximum(d2, 0.0, out=d2)
        d2 *= -1.0 / (2.0 * L**2)
        K = np.exp(d2, out=d2)
        return K, (alpha_from_kernel(kernel, K, L) if want_alpha else None)
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


#: The kernels whose ``α`` is a function of ``K`` alone (``α = K / L²``); the quadratic and
#: Laplace kernels' ``α`` needs the Gram entry or the distance.
ALPHA_FROM_K = frozenset({"gaussian", "exp_inner"})


def alpha_from_kernel(kernel: str, K: np.ndarray, L: float, out: np.ndarray | None = None
                      ) -> np.ndarray | None:
    """``α`` of :func:`_from_gram` from the kernel values alone for the kernels of
    :data:`ALPHA_FROM_K`: ``K / L²`` (the same operation as there, so the same bits; into
    ``out`` if given); ``None`` for the others."""
    return np.divide(K, L**2, out=out) if kernel in ALPHA_FROM_K else None


#: Gram blocks of at least this many entries have their elementwise formula (the
#: ``exp``, the norms, the clip) evaluated in row chunks on as many threads as the BLAS pool
#: has: numpy releases the GIL inside ufuncs, and each entry goes through the same operations
#: whatever the chunking, so the result is bit-identical to the one-thread evaluation. Inside
#: :func:`quadnet._threads.single_threaded` (one BLAS thread) the formula runs on one thread.
_THREAD_MIN_ENTRIES = 2**20
_POOL: ThreadPoolExecutor | None = None


def _elementwise_threads() -> int:
    threads = blas_threads()
    return max(1, min(threads or 1, os.cpu_count() or 1))


#: Entries of a Gram block that the elementwise formula works on at a time (512 KB of
#: float64): a chunk stays in the core's cache through the formula's five or six passes
#: (scale, the two norms, the clip, the ``exp``; the ``α``) instead of each pass streaming the
#: whole block from memory. Each entry goes through the same operations, so the result is the
#: same bits. Measured on 500 x 16,000 blocks (one and two threads, 2026-12-03): the Gaussian
#: formula 0.7-0.85 of the time, the Laplace one 0.56-0.78, ``exp_inner`` (two passes) the same.
_CHUNK_ENTRIES = 2**16


def _from_gram_rows(kernel: str, G: np.ndarray, zz: np.ndarray | None, xx: np.ndarray | None,
                    L: float, alpha: np.ndarray | None, rows: slice) -> None:
    """:func:`_from_gram` on the rows ``rows`` of ``G`` (overwritten by ``K``) and of ``alpha``
    (written, if given), a cache-sized chunk of rows at a time."""
    step = max(1, _CHUNK_ENTRIES // max(1, G.shape[1]))
    want_alpha = alpha is not None
    for s in range(rows.start, rows.stop, step):
        sub = slice(s, min(rows.stop, s + step))
        K_r, a_r = _from_gram(kernel, G[sub], None if zz is None else zz[sub], xx, L,
                              want_alpha)
        if not np.shares_memory(K_r, G):  # the Laplace formula returns a fresh array
            G[sub] = K_r
        if want_alpha:
            alpha[sub] = a_r


def _from_gram_threaded(kernel: str, G: np.ndarray, zz: np.ndarray | None,
                        xx: np.ndarray | None, L: float, want_alpha: bool
                        ) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`_from_gram` on a block of any size: row ranges on as many threads as the BLAS
    pool has (large blocks), each in cache-sized chunks (:data:`_CHUNK_ENTRIES`)."""
    if G.size <= _CHUNK_ENTRIES:
        return _from_gram(kernel, G, zz, xx, L, want_alpha)
    alpha = np.empty_like(G) if want_alpha else None
    workers = _elementwise_threads() if G.size >= _THREAD_MIN_ENTRIES else 1
    if workers < 2 or G.shape[0] < 2 * workers:
        _from_gram_rows(kernel, G, zz, xx, L, alpha, slice(0, G.shape[0]))
        return G, alpha
    global _POOL
    if _POOL is None or _POOL._max_workers < workers:
        _POOL = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="quadnet-kernel")
    cuts = np.linspace(0, G.shape[0], workers + 1).astype(int)

    def work(i: int) -> None:
        _from_gram_rows(kernel, G, zz, xx, L, alpha, slice(int(cuts[i]), int(cuts[i + 1])))

    for _ in _POOL.map(work, range(workers)):
        pass
    return G, alpha


def kernel_and_alpha(kernel: str, Z: np.ndarray, X: np.ndarray, M: np.ndarray, L: float,
                     want_alpha: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """``K_ij = k_M(z_i, x_j)`` and, if asked, ``α(z_i, x_j)`` of the module docstring.

    No input checks (internal; the public functions check).
    """
    G = _gram_M(Z, M, X)
    zz = xx = None
    if KERNELS[kernel]:
        zz = np.einsum("ij,ij->i", np.asarray(_maybe_sparse(Z) @ M), Z)
        xx = zz if Z is X else np.einsum("ij,ij->i", np.asarray(_maybe_sparse(X) @ M), X)
    return _from_gram_threaded(kernel, G, zz, xx, L, want_alpha)


class KernelRows:
    """Row blocks ``k_M(z_i, x_j)`` (and ``α``) of a kernel matrix against fixed centres ``X``.

    Precomputes ``X M`` and ``‖x_j‖²_M`` once, so a block of ``b`` rows costs ``O(b n d)``
    (the ``d × d`` product with ``M`` is not repeated per block). Same formulas as
    :func:`kernel_and_alpha` (:func:`_from_gram`). Internal: no input checks.
    """

    def __init__(self, kernel: str, X: np.ndarray, M: np.ndarray, L: float):
        self.kernel, self.X, self.M, self.L = kernel, X, M, float(L)
        self.n = X.shape[0]
        self._Xs = _maybe_sparse(X)  # the centres as scipy.sparse (one-hot data), or X
        XM = np.asarray(self._Xs @ M)
        self._XMt = np.ascontiguousarray(XM.T)  # M Xᵀ (d × n)
        self._xx = np.einsum("ij,ij->i", XM, X) if KERNELS[kernel] else None

    def block(self, Z: np.ndarray, rows: slice | None = None, want_alpha: bool = True
              ) -> tuple[np.ndarray, np.ndarray | None]:
        """``(K, α)`` of the points ``Z`` (``b × d``) against the centres; ``rows``: ``Z`` is
        ``X[rows]`` (reuses the centres' norms and their sparse form)."""
        Zs = (self._Xs[rows] if rows is not None and sparse.issparse(self._Xs)
              else _maybe_sparse(Z))
        G = np.asarray(Zs @ self._XMt)
        zz = None
        if KERNELS[self.kernel]:
            zz = (self._xx[rows] if rows is not None
                  else np.einsum("ij,ij->i", np.asarray(Zs @ self.M), Z))
        return _from_gram_threaded(self.kernel, G, zz, self._xx, self.L, want_alpha)

    def rows(self, rows: slice, want_alpha: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """``(K, α)`` of the rows ``rows`` of the ``n × n`` training kernel matrix."""
        return self.block(self.X[rows], rows, want_alpha)

    def diagonal(self) -> np.ndarray:
        """``k_M(x_i, x_i)`` for every centre (``n``-vector), without forming ``K``."""
        if KERNELS[self.kernel]:
            return np.ones(self.n)
        q = np.einsum("ij,ji->i", self.X, self._XMt) / self.L**2  # ‖x_i‖²_M / L²
        return np.exp(q) if self.kernel == "exp_inner" else q**2


#: The Mahalanobis matrix of every kernel function: symmetric positive semidefinite, ``d x d``
#: (the docstrings' requirement; an indefinite ``M`` makes ``‖x − z‖²_M`` negative).
METRIC = Symmetric("d", psd=True)

#: Bandwidths ``L`` the kernels can evaluate in float64. The formulas use ``L²`` and, for the
#: quadratic kernel, ``L⁴`` (``α = 2xᵀMz / L⁴``); ``L⁴`` is a normal float64 (neither ``inf``
#: nor ``0``) only for ``1e-77 < L < 1e77``. ``[1e-75, 1e75]`` keeps a factor ``10⁸`` of
#: headroom in ``L⁴`` for the products with the data; rescale the data for anything outside.
BANDWIDTH = Real(1e-75, 1e75)

#: The kernel name of every kernel function.
KERNEL = Options(*KERNELS)


class Columns(Constraint):
    """A finite real array of shape ``(n,)`` or ``(n, c)`` (returned as ``(n, c)``, float64),
    ``c >= 1``; binds the symbolic size ``n`` (coefficients and targets of a kernel machine)."""

    def __init__(self, n: str = "n"):
        self.n = n

    def convert(self, value, name, dims):
        arr = as_array(value, name)
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.ndim != 2:
            raise ValueError(f"{name} must have shape (n,) or (n, c), got shape {arr.shape}")
        if arr.size == 0:
            raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
        _bind(dims, self.n, arr.shape[0], name)
        return arr

    def describe(self) -> str:
        return f"a finite real array of shape ({self.n},) or ({self.n}, c)"

    def bad_values(self):
        return [("string", "abc"), ("None", None), ("complex", np.ones(2) * 1j),
                ("wrong ndim", np.ones((2, 2, 2))), ("nan", np.array([np.nan]))]


#: The constraint tables of the kernel functions (shared by quadnet.features.solvers).
KERNEL_TABLE = {"kernel": KERNEL, "Z": Array(shape=("m", "d")), "X": Array(shape=("n", "d")),
                "coef": Columns("n"), "M": METRIC, "bandwidth": BANDWIDTH}


def _table(*names: str, **extra: Constraint) -> dict:
    return {n: KERNEL_TABLE[n] for n in names} | extra


@validate_params(_table("kernel", "Z", "X", "M", "bandwidth"))
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
    K, _ = kernel_and_alpha(kernel, Z, X, M, bandwidth, want_alpha=False)
    return K


@validate_params(_table("kernel", "Z", "X", "coef", "M", "bandwidth"))
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
    A = coef
    _, alpha = kernel_and_alpha(kernel, Z, X, M, bandwidth)
    G = np.einsum("ij,jc,jk->ick", alpha, A, X)
    if KERNELS[kernel]:
        G -= (alpha @ A)[:, :, None] * Z[:, None, :]
    return G @ M  # M symmetric: (M G_ic)ᵀ = G_icᵀ M


@validate_params(_table("kernel", "X", "coef", "M", "bandwidth"))
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
    _, alpha = kernel_and_alpha(kernel, X, X, M, bandwidth)
    return fact_from_alpha(X, coef, M, alpha, KERNELS[kernel])




def fact_from_alpha(X: np.ndarray, A: np.ndarray, M: np.ndarray, alpha: np.ndarray,
                    gamma: int) -> np.ndarray:
    """:func:`kernel_fact_matrix` from a precomputed ``α`` (internal: no input checks)."""
    sums = FeatureSums(X, A, gamma)
    sums.add(slice(0, X.shape[0]), alpha)
    return sums.fact(M)


@validate_params(_table("kernel", "X", "coef", "M", "bandwidth", centre=Boolean()))
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
    _, alpha = kernel_and_alpha(kernel, X, X, M, bandwidth)
    return agop_from_alpha(X, coef, M, alpha, KERNELS[kernel], centre=centre)


def agop_from_alpha(X: np.ndarray, A: np.ndarray, M: np.ndarray, alpha: np.ndarray, gamma: int,
                    *, centre: bool) -> np.ndarray:
    """:func:`kernel_agop` from a precomputed ``α`` (internal: no input checks).

    Runs the cheaper route: the Gram route (``O(n³)``) when ``n ≤ cd``, else the per-point
    route (``O(n²cd)``); both are the row-block accumulations below with one block.
    """
    n, d = X.shape
    c = A.shape[1]
    sums = FeatureSums(X, A, gamma, fact=False, agop="gram" if n <= c * d else "points",
                       centre=centre)
    if n <= c * d:
        sums.set_S(alpha @ A)
        sums.add_gram(slice(0, n), alpha)
    sums.add(slice(0, n), alpha)
    return sums.agop(M)


def _right_sparse(W: np.ndarray, Xs) -> np.ndarray:
    """``W X`` for a dense ``W`` and ``X`` dense or ``scipy.sparse`` (``(Xᵀ Wᵀ)ᵀ``)."""
    if sparse.issparse(Xs):
        return np.asarray(Xs.T @ W.T).T
    return W @ Xs


#: Elements of one per-point-route operand ``A ⊗ X`` (``n × c'd`` for a chunk of ``c'``
#: outputs) held at once: 2**24 float64 = 128 MiB.
_AX_ELEMS = 2**24


class FeatureSums:
    """Row-block accumulation of the FACT matrix, the AGOP and ``K A`` (quadnet theory §6).

    Each closed form of the module docstring is a sum over the rows ``i`` of the ``n × n``
    matrices ``α``/``K``, so it can be accumulated from row blocks ``α_b = α[rows]`` without
    holding ``α``:

    * FACT: ``B = Σ_b X_bᵀ W_b X``, ``W_b = α_b ⊙ (A_b Aᵀ) − γ diag(rowsum(S_b ⊙ A_b))``,
      ``F = M sym(B)``;
    * AGOP, per-point route: ``G_b = α_b (A ⊗ X) − γ S_b ⊗ X_b`` (``b × c × d``),
      ``nΓ = Σ_b G_bᵀ G_b``, with ``S_b = α_b A``;
    * AGOP, Gram route (``α`` held in full, ``n ≤ cd``): ``nΓ = Σ_b X_bᵀ P_b X``,
      ``P_b = (α[:, b]ᵀ α) ⊙ (A_b Aᵀ) − γ(α[:, b]ᵀ ⊙ (A_b Sᵀ) + α_b ⊙ (S_b Aᵀ))
      + γ² diag(rowsum(S_b ⊙ S_b))`` (:meth:`add_gram`, needs ``S = αA`` from :meth:`set_S`);
    * centring: ``Ḡ = (1/n)(Xᵀ((αᵀ𝟙) ⊙ A) − γ Σ_b X_bᵀ S_b)``, ``Γ ← Γ − Ḡ Ḡᵀ``;
    * predictions at the centres ``K A`` row by row (``predictions=True``).

    Internal (no input checks). :func:`fact_from_alpha` and :func:`agop_from_alpha` are this
    class with one block; the blocked kernel solvers (``quadnet.features.solvers``) feed it
    blocks recomputed from :class:`KernelRows`.
    """

    def __init__(self, X: np.ndarray, A: np.ndarray, gamma: int, *, fact: bool = True,
                 agop: str | None = None, centre: bool = False, predictions: bool = False):
        n, d = X.shape
        c = A.shape[1]
        self.X, self.Xs, self.A, self.gamma, self.n = X, _maybe_sparse(X), A, gamma, n
        self.want_fact, self.route, self.centre = fact, agop, centre
        self.B = np.zeros((d, d)) if fact else None
        self.nGamma = np.zeros((d, d)) if agop else None
        self.colsum = np.zeros(n) if (agop and centre) else None
        self.XtS = np.zeros((d, c)) if (agop and centre) else None
        self.KA = np.zeros((n, c)) if predictions else None
        self.S = None
        self._AX = None
        self._cols = self._sparse_columns() if agop else None
        if agop == "points" and self._cols is None:
            self._cc = max(1, min(c, _AX_ELEMS // max(1, n * d)))  # outputs per AX chunk
            if self._cc == c:
                self._AX = self._ax(0, c)

    def _sparse_columns(self):
        """For sparse ``X`` (``scipy.sparse``, :data:`_SPARSE_DENSITY`), the per-point gradients
        column by column: ``(α_b (A ⊗ X))[:, :, k] = α_b[:, J_k] (A[J_k] ⊙ X[J_k, k])`` over
        the rows ``J_k`` where column ``k`` of ``X`` is nonzero, ``O(b c nnz(X))`` per block
        instead of ``O(b n c d)``. Returns ``(rows, AJ, starts)`` (the nonzeros sorted by column,
        ``A[rows] ⊙ X[rows, k]``, each column's first position) when that, plus ``G_bᵀ G_b``
        (``b c d²``), costs less than the chosen route (Gram: ``b n²`` per block), else
        ``None``."""
        if not sparse.issparse(self.Xs):
            return None
        n, d = self.X.shape
        c = self.A.shape[1]
        Xc = sparse.csc_array(self.Xs)
        Xc.sort_indices()
        nnz = Xc.nnz
        if self.route == "gram" and c * (nnz + d * d) >= n * n:
            return None
        rows = Xc.indices.astype(np.intp)
        return rows, self.A[rows] * Xc.data[:, None], Xc.indptr.astype(np.intp)

    def _add_points_sparse(self, alpha_b: np.ndarray, Sb: np.ndarray | None, Xb: np.ndarray
                           ) -> None:
        """``nΓ += G_bᵀ G_b`` by :meth:`_sparse_columns`, with ``G_i = T_i − γ x_i s_iᵀ``
        (``d × c`` per point, ``T_i = Σ_j α_ij x_j a_jᵀ``) expanded:
        ``Σ_i G_i G_iᵀ = Σ_i T_i T_iᵀ − γ(VᵀX_b + X_bᵀV) + γ² X_bᵀ diag(‖s_i‖²) X_b``,
        ``V_i = T_i s_i``; ``T`` is formed for a few rows at a time (``d × b' × c``, a
        contiguous ``b' × c`` block per column ``k``)."""
        rows, AJ, starts = self._cols
        b, (c, d) = alpha_b.shape[0], (self.A.shape[1], self.X.shape[1])
        step = max(1, _AX_ELEMS // 8 // max(1, c * d))
        T = np.empty((d, min(b, step), c))
        V = np.zeros((b, d)) if self.gamma else None
        for i0 in range(0, b, step):
            i1 = min(b, i0 + step)
            E = alpha_b[i0:i1][:, rows]
            Tc = T[:, : i1 - i0]
            for k in range(d):
                p0, p1 = starts[k], starts[k + 1]
                if p1 > p0:
                    np.matmul(E[:, p0:p1], AJ[p0:p1], out=Tc[k])
                else:
                    Tc[k] = 0.0
            Tf = Tc.reshape(d, -1)
            self.nGamma += Tf @ Tf.T
            if self.gamma:
                V[i0:i1] = np.einsum("kic,ic->ik", Tc, Sb[i0:i1])
        if self.gamma:
            XV = np.asarray(_right_sparse(V.T, _maybe_sparse(Xb)))
            ss = np.einsum("ic,ic->i", Sb, Sb)
            self.nGamma += Xb.T @ (ss[:, None] * Xb) - XV - XV.T

    def _ax(self, c0: int, c1: int) -> np.ndarray:
        n, d = self.X.shape
        return (self.A[:, c0:c1, None] * self.X[:, None, :]).reshape(n, (c1 - c0) * d)

    def set_S(self, S: np.ndarray) -> None:
        """``S = α A`` in full (``n × c``), needed by the Gram route."""
        self.S = S

    def add(self, rows: slice, alpha_b: np.ndarray, K_b: np.ndarray | None = None) -> None:
        """Accumulate the rows ``rows`` of ``α`` (and of ``K``, for the predictions ``K A``).

        With the Gram route this adds the FACT, centring and prediction terms only (the
        AGOP term comes from :meth:`add_gram`)."""
        A, X, g = self.A, self.X, self.gamma
        Ab, Xb = A[rows], X[rows]
        n, d = X.shape
        b, c = Ab.shape
        if self.KA is not None:
            self.KA[rows] = K_b @ A
        need_S = self.want_fact and g or self.route == "points" or self.centre and self.route
        Sb = (alpha_b @ A) if need_S else None
        if self.want_fact:
            W = alpha_b * (Ab @ A.T)
            if g:
                r = np.arange(b)
                W[r, r + rows.start] -= np.einsum("ic,ic->i", Sb, Ab)
            self.B += Xb.T @ _right_sparse(W, self.Xs)
            del W
        if self.route == "points" and self._cols is not None:
            self._add_points_sparse(alpha_b, Sb, Xb)
        elif self.route == "points":
            Gb = np.empty((b, c, d))
            for c0 in range(0, c, self._cc):
                c1 = min(c, c0 + self._cc)
                AX = self._AX if self._AX is not None else self._ax(c0, c1)
                Gb[:, c0:c1, :] = (alpha_b @ AX).reshape(b, c1 - c0, d)
            if g:
                Gb -= Sb[:, :, None] * Xb[:, None, :]
            Gb = Gb.reshape(b * c, d)
            self.nGamma += Gb.T @ Gb
        if self.route and self.centre:
            self.colsum += alpha_b.sum(axis=0)
            if g:
                self.XtS += Xb.T @ Sb

    def add_gram(self, rows: slice, alpha: np.ndarray) -> None:
        """Gram-route AGOP term of the rows ``rows``, from the full ``α`` (``n × n``)."""
        A, S, g = self.A, self.S, self.gamma
        Ab, Sb = A[rows], S[rows]
        if self._cols is not None:  # sparse X: the per-point gradients cost less than αᵀα
            self._add_points_sparse(alpha[rows], Sb, self.X[rows])
            return
        aT = alpha[:, rows].T  # α[:, b]ᵀ (b × n)
        P = aT @ alpha
        P *= Ab @ A.T
        if g:
            P -= aT * (Ab @ S.T)
            P -= alpha[rows] * (Sb @ A.T)
            r = np.arange(Ab.shape[0])
            P[r, r + rows.start] += np.einsum("ic,ic->i", Sb, Sb)
        self.nGamma += self.X[rows].T @ _right_sparse(P, self.Xs)

    def fact(self, M: np.ndarray) -> np.ndarray:
        """The FACT matrix ``F = M sym(B)``."""
        return M @ sym(self.B)

    def agop(self, M: np.ndarray) -> np.ndarray:
        """The (centred) AGOP ``M Γ M``."""
        Gamma = self.nGamma / self.n
        if self.centre:
            Gbar = (self.X.T @ (self.colsum[:, None] * self.A) - self.gamma * self.XtS) / self.n
            Gamma = Gamma - Gbar @ Gbar.T
        Gamma = sym(Gamma)
        return M @ Gamma @ M
