"""A dense Cholesky factorisation that never enters a threaded LAPACK driver on a large matrix.

The OpenBLAS builds that numpy and scipy wheels bundle (0.3.30/0.3.31, ``DYNAMIC_ARCH``)
crash with ``SIGSEGV`` in their *parallel* Cholesky driver (``dpotrf`` with two or more
threads) on AMD CPUs that expose AVX-512, from ``n ≈ 16,000`` on; the same call with one
thread, and threaded ``dgemm`` at every size, run fine there. A crash in a C library cannot be
caught, so the route is chosen by construction, not by detecting the CPU:

:func:`cholesky_lower_inplace`
    a blocked left-looking Cholesky. Every ``dpotrf`` and ``dtrsm`` it calls acts on one
    ``nb × nb`` diagonal block (or an ``nb``-column panel) and runs with one BLAS thread;
    all ``O(n^3)`` work of the trailing updates is in ``dgemm`` calls, which keep the
    thread pool. No matrix of order above ``nb`` ever reaches OpenBLAS's parallel LAPACK.
    When the BLAS pools already run one thread (as inside ``quadnet verify``'s checks), it
    calls the serial ``dpotrf`` on the whole matrix instead, which is faster and never enters
    the parallel driver.
``quadnet doctor --probe`` runs the raw threaded calls (and a threaded eigensolver) in child
processes, to tell whether a
machine has the fault. What the blocked route costs against the threaded call, where that
call works, is measured in ``docs/rfm.md`` (section "The direct solver on every machine").

Nothing here validates its input (raw Fortran-ordered float64 arrays).

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> B = rng.standard_normal((300, 300))
>>> A = np.asfortranarray(B @ B.T + 300 * np.eye(300))
>>> a = A.copy(order="F")
>>> cholesky_lower_inplace(a, block=64)
0
>>> L = np.tril(a)
>>> bool(np.linalg.norm(L @ L.T - A) <= 1e-12 * np.linalg.norm(A))
True
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import blas, lapack

from quadnet._threads import blas_threads, forced_single_thread

__all__ = ["CHOLESKY_BLOCK", "cholesky_lower_inplace"]

#: Columns per diagonal block of :func:`cholesky_lower_inplace`. Large enough that the
#: ``dgemm`` updates run at full speed, small enough that the one-thread ``dpotrf``/``dtrsm``
#: on a block is a few per cent of the work.
CHOLESKY_BLOCK = 256

#: Rows per ``dgemm`` of a block-column update (bounds the temporary to ``rows × nb``).
_UPDATE_ROWS = 8192


def cholesky_lower_inplace(a: np.ndarray, *, block: int | None = None) -> int:
    r"""Lower Cholesky factor of the symmetric ``a`` (Fortran-ordered, float64) in place.

    Left-looking block algorithm, for column blocks ``J = [j_0, j_1)``:

    .. math::

        A_{j_0:, J} \leftarrow A_{j_0:, J} - L_{j_0:, :j_0} L_{J, :j_0}^\top,\qquad
        L_{JJ} = \operatorname{chol}(A_{JJ}),\qquad
        L_{j_1:, J} = A_{j_1:, J} L_{JJ}^{-\top},

    the updates by threaded ``dgemm``, the block factor and the panel solve with one thread.

    Parameters
    ----------
    a : ndarray, shape (n, n), Fortran order
        Overwritten: its lower triangle by ``L``; the strict upper triangles of the diagonal
        blocks by intermediate values (the rest of the upper triangle is left as it was).
    block : int, optional
        Block size (default :data:`CHOLESKY_BLOCK`).

    Returns
    -------
    int
        ``0`` on success; ``k > 0`` when the leading minor of order ``k`` is not positive
        definite (LAPACK's ``info`` convention; ``a`` is then partly overwritten).
    """
    n = a.shape[0]
    nb = CHOLESKY_BLOCK if block is None else int(block)
    if block is None and n > nb and blas_threads() == 1:
        # one BLAS thread already: LAPACK's serial dpotrf on the whole matrix (the fault is in
        # the parallel driver), 22-30 % fewer CPU-s than the blocks at n = 1,860-2,500
        with forced_single_thread():
            c, info = lapack.dpotrf(a, lower=1, clean=0, overwrite_a=1)
        if not np.shares_memory(c, a):  # pragma: no cover - a is Fortran float64: in place
            a[...] = c
        return int(info)
    for j0 in range(0, n, nb):
        j1 = min(n, j0 + nb)
        if j0:
            Lj = a[j0:j1, :j0]
            for r0 in range(j0, n, _UPDATE_ROWS):
                r1 = min(n, r0 + _UPDATE_ROWS)
                a[r0:r1, j0:j1] -= a[r0:r1, :j0] @ Lj.T
        D = np.asfortranarray(a[j0:j1, j0:j1])
        with forced_single_thread():
            D, info = lapack.dpotrf(D, lower=1, clean=1, overwrite_a=1)
            if info != 0:
                return j0 + int(info) if info > 0 else int(info)
            a[j0:j1, j0:j1] = D
            if j1 < n:
                P = np.asfortranarray(a[j1:, j0:j1])
                a[j1:, j0:j1] = blas.dtrsm(1.0, D, P, side=1, lower=1, trans_a=1,
                                           overwrite_b=1)
    return 0

