"""The AGOP of a kernel machine on sparse (one-hot) inputs (quadnet theory §6).

``FeatureSums`` forms the per-point input gradients of one-hot data column by column
(``α_b[:, J_k] (A[J_k] ⊙ X[J_k, k])``, ``O(b c nnz(X))``) when that costs less than the Gram
route's ``αᵀα``. References: the Gram route and the dense per-point route (the same closed
form summed another way: agreement to rounding, 1e-12 relative, ~1e-15 measured), and
5-point central differences of ``f(x) = K(x, X) A`` (an independent reference: truncation
``O(h⁴)`` and rounding ``O(eps/h)`` at ``h = 1e-3`` give ~1e-10; 1e-7 as in the ``rfm`` check).
"""

import numpy as np
import pytest

from quadnet.features import kernels as K
from quadnet.features.kernels import KERNELS, FeatureSums, agop_from_alpha, kernel_and_alpha
from quadnet.features.rfm import modular_arithmetic


def _rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def _problem(p=7, c=None, seed=0):
    rng = np.random.default_rng(seed)
    X = np.asarray(modular_arithmetic(p, "add", 0.6, seed=seed).X_train, dtype=float)
    n, d = X.shape
    A = rng.standard_normal((n, c or p))
    R = rng.standard_normal((d, d))
    M = np.eye(d) + 0.05 * R @ R.T
    return X, A, M


def _agop(X, A, M, alpha, gamma, route, centre, blocks=1, sparse_columns=True):
    n = X.shape[0]
    sums = FeatureSums(X, A, gamma, fact=False, agop=route, centre=centre)
    if not sparse_columns:
        sums._cols = None
        if route == "points":
            sums._cc = A.shape[1]
            sums._AX = sums._ax(0, A.shape[1])
    if route == "gram":
        sums.set_S(alpha @ A)
    for rows in np.array_split(np.arange(n), blocks):
        rows = slice(int(rows[0]), int(rows[-1]) + 1)
        sums.add(rows, alpha[rows])
        if route == "gram":
            sums.add_gram(rows, alpha)
    return sums.agop(M)


@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize("centre", [False, True])
def test_sparse_route_equals_the_gram_and_dense_per_point_routes(kernel, centre):
    X, A, M = _problem(p=11, c=2)     # n = 72, d = 22: c (nnz + d²) = 1256 < n² = 5184
    alpha = kernel_and_alpha(kernel, X, X, M, 2.0)[1]
    g = KERNELS[kernel]
    ref = _agop(X, A, M, alpha, g, "gram", centre, sparse_columns=False)
    dense_points = _agop(X, A, M, alpha, g, "points", centre, sparse_columns=False)
    assert _rel(dense_points, ref) <= 1e-12
    for route in ("gram", "points"):
        for blocks in (1, 4):
            sums = FeatureSums(X, A, g, fact=False, agop=route, centre=centre)
            assert sums._cols is not None          # one-hot X takes the column route
            got = _agop(X, A, M, alpha, g, route, centre, blocks=blocks)
            assert _rel(got, ref) <= 1e-12, (route, blocks)


@pytest.mark.parametrize("kernel", list(KERNELS))
def test_sparse_route_matches_finite_differences(kernel):
    X, A, M = _problem(p=11, c=3, seed=1)
    n, d = X.shape
    L, h = 1.7, 1e-3

    def f(Z):
        Kz = K.kernel_matrix(kernel, Z, X, M, L)
        if KERNELS[kernel]:          # the self term: gradient 0 at x_i (Laplace: by convention)
            Kz[np.diag_indices(n)] = 0.0
        return Kz @ A

    G = np.zeros((n, A.shape[1], d))
    for k in range(d):
        e = np.zeros(d)
        e[k] = h
        G[:, :, k] = (-f(X + 2 * e) + 8 * f(X + e) - 8 * f(X - e) + f(X - 2 * e)) / (12 * h)
    for centre in (False, True):
        Gc = G - G.mean(axis=0) if centre else G
        ref = np.einsum("ick,icl->kl", Gc, Gc) / n
        alpha = kernel_and_alpha(kernel, X, X, M, L)[1]
        got = agop_from_alpha(X, A, M, alpha, KERNELS[kernel], centre=centre)
        assert _rel(got, ref) <= 1e-7
        assert _rel(K.kernel_agop(kernel, X, A, M, L, centre=centre), ref) <= 1e-7


def test_route_choice_follows_the_cost():
    X, A, M = _problem(p=11)
    n, d = X.shape
    dense = X + 0.5                     # no zeros: never the column route
    assert FeatureSums(dense, A, 1, fact=False, agop="gram")._cols is None
    assert FeatureSums(dense, A, 1, fact=False, agop="points")._cols is None
    # Gram route: the column route only while c (nnz + d²) < n²
    wide = np.ones((n, n * n // (2 * n + d * d) + 1))
    assert FeatureSums(X, wide, 1, fact=False, agop="gram")._cols is None
    assert FeatureSums(X, wide, 1, fact=False, agop="points")._cols is not None
    assert FeatureSums(X, A, 1, fact=True, agop=None)._cols is None
