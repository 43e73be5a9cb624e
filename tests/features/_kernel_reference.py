"""Hand-written kernel references shared by the tests of quadnet.features.kernels and
quadnet.features.solvers: the four kernel formulas of the kernels module docstring written
out with numpy, central differences of the kernel machine, and the random problems the tests
draw. They share no code with the package.

The test modules of this folder import it as a sibling (``from _kernel_reference import
...``): pytest's default ``prepend`` import mode puts this folder, which has no
``__init__.py``, on ``sys.path`` before it imports them.
"""

from __future__ import annotations

import numpy as np


def sq_dist(Z, X, M):
    """``(z_i - x_j)^T M (z_i - x_j)`` for every pair, clipped at 0: ``m × n``."""
    D = Z[:, None, :] - X[None, :, :]
    return np.maximum(np.einsum("ijk,kl,ijl->ij", D, M, D), 0.0)


def kern(kernel, Z, X, M, L):
    """``k_M(z_i, x_j)`` from the formulas of the kernels module docstring: ``m × n``."""
    G = Z @ M @ X.T
    d2 = sq_dist(Z, X, M)
    if kernel == "exp_inner":
        return np.exp(G / L**2)
    if kernel == "gaussian":
        return np.exp(-d2 / (2 * L**2))
    if kernel == "laplace":
        return np.exp(-np.sqrt(d2) / L)
    return G**2 / L**4


def fd_grads(kernel, Z, X, A, M, L, h=1e-5):
    """Central differences of ``f_c(z) = Σ_j a_jc k(z, x_j)`` at the rows of ``Z``:
    ``m × c × d``."""
    m, d = Z.shape
    out = np.empty((m, A.shape[1], d))
    for k in range(d):
        e = np.zeros(d)
        e[k] = h
        out[:, :, k] = (kern(kernel, Z + e, X, M, L) @ A
                        - kern(kernel, Z - e, X, M, L) @ A) / (2 * h)
    return out


def random_problem(seed, n, d, c, ridge, scale=1.0):
    """Gaussian inputs ``X`` (``n × d``, entries of size ``scale / √d``), Gaussian outputs or
    coefficients (``n × c``) and the metric ``M = R R^T / d + ridge · I`` (positive definite),
    drawn in that order from ``default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    X = scale * rng.standard_normal((n, d)) / np.sqrt(d)
    Y = rng.standard_normal((n, c))
    R = rng.standard_normal((d, d))
    M = R @ R.T / d + ridge * np.eye(d)
    return X, Y, M
