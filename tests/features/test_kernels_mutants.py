"""Properties of the public functions of quadnet.features.kernels against independent
references (mutation testing): the four kernel formulas and their ``α`` written out by hand,
input gradients, FACT and AGOP (plain and centred) from central differences of the kernel
machine, on dense and one-hot (sparse) inputs, through every accumulation route of
``FeatureSums`` (one block and uneven row blocks, Gram and per-point, output chunks), and
the messages of the argument checks."""

from __future__ import annotations

import re

import numpy as np
import pytest

import quadnet.features.kernels as kernels_mod
from quadnet.features.kernels import (
    KERNELS,
    Columns,
    FeatureSums,
    KernelRows,
    agop_from_alpha,
    check_kernel,
    fact_from_alpha,
    input_gradients,
    kernel_agop,
    kernel_and_alpha,
    kernel_fact_matrix,
    kernel_matrix,
)

from _kernel_reference import fd_grads, kern, random_problem, sq_dist

NAMES = ["exp_inner", "gaussian", "laplace", "quadratic"]


def _alpha(kernel, Z, X, M, L):
    """``α`` of ``∇_x k(x, z) = M α (z − γx)`` from the module's table (0 at ``x = z`` for
    the Laplace kernel)."""
    K = kern(kernel, Z, X, M, L)
    if kernel in ("exp_inner", "gaussian"):
        return K / L**2
    if kernel == "quadratic":
        return 2 * (Z @ M @ X.T) / L**4
    dist = np.sqrt(sq_dist(Z, X, M))
    out = np.zeros_like(K)
    pos = dist > 1e-7
    out[pos] = K[pos] / (L * dist[pos])
    return out


def _refs(kernel, X, A, M, L):
    g = fd_grads(kernel, X, X, A, M, L)
    n = len(X)
    F = np.einsum("ic,ick,il->kl", A, g, X)
    G = np.einsum("ick,icl->kl", g, g) / n
    gc = g - g.mean(axis=0)
    return F, G, np.einsum("ick,icl->kl", gc, gc) / n


def _rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def _assert_fact_and_agop(kernel, X, A, M, L):
    """FACT, AGOP and centred AGOP of the public functions within 1e-6 (relative) of the
    central-difference references; returns the references."""
    F_ref, G_ref, Gc_ref = _refs(kernel, X, A, M, L)
    assert _rel(kernel_fact_matrix(kernel, X, A, M, L), F_ref) < 1e-6
    assert _rel(kernel_agop(kernel, X, A, M, L), G_ref) < 1e-6
    assert _rel(kernel_agop(kernel, X, A, M, L, centre=True), Gc_ref) < 1e-6
    return F_ref, G_ref, Gc_ref


def _dense(seed, n, d, c, scale=1.0):
    return random_problem(seed, n, d, c, ridge=0.3, scale=scale)


def _onehot(seed, n, d, c):
    rng = np.random.default_rng(seed)
    X = np.zeros((n, d))
    X[np.arange(n), rng.integers(0, d, n)] = 1.0
    X[np.arange(0, n, 3), rng.integers(0, d, len(range(0, n, 3)))] += 1.0  # 1 or 2 nonzeros
    assert np.count_nonzero(X) <= 0.1 * X.size
    A = rng.standard_normal((n, c))
    R = rng.standard_normal((d, d))
    M = R @ R.T / d + 0.5 * np.eye(d)
    return X, A, M


# ------------------------------------------------------------------ names


def test_check_kernel_names_and_messages():
    for name in KERNELS:
        assert check_kernel(name) == name
    assert KERNELS == {"exp_inner": 0, "gaussian": 1, "laplace": 1, "quadratic": 0}
    msg = "kernel must be one of 'exp_inner', 'gaussian', 'laplace', 'quadratic', got 'rbf'"
    with pytest.raises(ValueError, match=re.escape(msg)):
        check_kernel("rbf")
    with pytest.raises(TypeError, match="got int"):
        check_kernel(3)


# ------------------------------------------------------------------ kernel values and α


@pytest.mark.parametrize("kernel", NAMES)
@pytest.mark.parametrize("sparse_input", [False, True])
def test_kernel_matrix_and_alpha_match_the_formulas(kernel, sparse_input):
    if sparse_input:
        X, _, M = _onehot(0, 40, 20, 1)
        Z, _, _ = _onehot(1, 17, 20, 1)
    else:
        X, _, M = _dense(0, 40, 3, 1)
        Z = np.random.default_rng(1).standard_normal((17, 3)) / 2
    L = 1.3
    K_ref, a_ref = kern(kernel, Z, X, M, L), _alpha(kernel, Z, X, M, L)
    K = kernel_matrix(kernel, Z, X, M, L)
    assert K.shape == (17, 40)
    assert np.allclose(K, K_ref, rtol=1e-12, atol=1e-14)
    K2, a = kernel_and_alpha(kernel, Z, X, M, L)
    assert np.allclose(K2, K_ref, rtol=1e-12, atol=1e-14)
    assert np.allclose(a, a_ref, rtol=1e-10, atol=1e-13)
    K3, none = kernel_and_alpha(kernel, Z, X, M, L, want_alpha=False)
    assert none is None and np.allclose(K3, K_ref, rtol=1e-12, atol=1e-14)
    # Z is X (the norms shared) against a copy of X
    KX, aX = kernel_and_alpha(kernel, X, X, M, L)
    KY, aY = kernel_and_alpha(kernel, X.copy(), X, M, L)
    Kref = kern(kernel, X, X, M, L)
    assert np.allclose(KX, Kref, rtol=1e-12, atol=1e-14) and np.allclose(KY, KX, rtol=1e-12)
    assert np.allclose(aX, _alpha(kernel, X, X, M, L), rtol=1e-9, atol=1e-12)
    assert np.allclose(aY, aX, rtol=1e-9, atol=1e-12)


def test_laplace_is_exact_at_coincident_points():
    X, _, M = _dense(2, 6, 3, 1, scale=1e3)
    K, a = kernel_and_alpha("laplace", X, X, M, 2.0)
    assert np.array_equal(np.diag(K), np.ones(6))
    assert np.array_equal(np.diag(a), np.zeros(6))


@pytest.mark.parametrize("kernel", NAMES)
@pytest.mark.parametrize("sparse_input", [False, True])
def test_kernel_rows_blocks_rows_and_diagonal(kernel, sparse_input):
    if sparse_input:
        X, _, M = _onehot(3, 35, 20, 1)
    else:
        X, _, M = _dense(3, 35, 4, 1)
    L = 0.9
    kr = KernelRows(kernel, X, M, L)
    assert kr.n == 35 and kr.kernel == kernel and kr.L == 0.9
    Kref, aref = kern(kernel, X, X, M, L), _alpha(kernel, X, X, M, L)
    for rows in (slice(0, 35), slice(4, 11), slice(34, 35)):
        K_b, a_b = kr.rows(rows)
        assert np.allclose(K_b, Kref[rows], rtol=1e-12, atol=1e-14)
        assert np.allclose(a_b, aref[rows], rtol=1e-9, atol=1e-12)
        K_b, none = kr.rows(rows, want_alpha=False)
        assert none is None and np.allclose(K_b, Kref[rows], rtol=1e-12, atol=1e-14)
    Z = X[[5, 0, 7]] + 0.25
    K_z, a_z = kr.block(Z)
    assert np.allclose(K_z, kern(kernel, Z, X, M, L), rtol=1e-12, atol=1e-14)
    assert np.allclose(a_z, _alpha(kernel, Z, X, M, L), rtol=1e-9, atol=1e-12)
    idx = np.array([9, 2, 30])
    K_i, _ = kr.block(X[idx], idx, want_alpha=False)
    assert np.allclose(K_i, Kref[idx], rtol=1e-12, atol=1e-14)
    assert np.allclose(kr.diagonal(), np.diag(Kref), rtol=1e-12)
    assert kr.diagonal().shape == (35,)


# ------------------------------------------------------------------ gradients, FACT, AGOP


@pytest.mark.parametrize("kernel", NAMES)
def test_input_gradients_match_central_differences(kernel):
    X, A, M = _dense(4, 30, 3, 2)
    L = 1.1
    Z = np.random.default_rng(5).standard_normal((9, 3)) / 2
    for P in (Z, X):
        g = input_gradients(kernel, P, X, A, M, L)
        assert g.shape == (len(P), 2, 3)
        assert _rel(g, fd_grads(kernel, P, X, A, M, L)) < 1e-6
    g1 = input_gradients(kernel, Z, X, A[:, 0], M, L)
    assert g1.shape == (9, 1, 3) and _rel(g1[:, 0], fd_grads(kernel, Z, X, A, M, L)[:, 0]) < 1e-6


@pytest.mark.parametrize("kernel", NAMES)
@pytest.mark.parametrize("n,d,c", [(40, 3, 2), (10, 4, 3), (12, 4, 3), (25, 2, 1)])
def test_fact_and_agop_match_finite_differences(kernel, n, d, c):
    X, A, M = _dense(6 + n, n, d, c)
    L = 1.4
    F_ref, G_ref, Gc_ref = _assert_fact_and_agop(kernel, X, A, M, L)
    alpha = _alpha(kernel, X, X, M, L)
    g = KERNELS[kernel]
    assert _rel(fact_from_alpha(X, A, M, alpha, g), F_ref) < 1e-6
    assert _rel(agop_from_alpha(X, A, M, alpha, g, centre=False), G_ref) < 1e-6
    assert _rel(agop_from_alpha(X, A, M, alpha, g, centre=True), Gc_ref) < 1e-6


@pytest.mark.parametrize("kernel", NAMES)
@pytest.mark.parametrize("n,d,c", [(30, 20, 1), (30, 20, 2), (30, 20, 3), (12, 20, 1)])
def test_fact_and_agop_on_one_hot_inputs(kernel, n, d, c):
    X, A, M = _onehot(7 + c, n, d, c)
    _assert_fact_and_agop(kernel, X, A, M, 1.2)


@pytest.mark.parametrize("kernel", ["gaussian", "quadratic"])
@pytest.mark.parametrize("onehot", [False, True])
def test_per_point_route_in_output_chunks(kernel, onehot, monkeypatch):
    # an operand of 2 * n * d elements: one output per chunk, and a few rows per sparse step
    X, A, M = (_onehot(9, 40, 20, 3) if onehot else _dense(9, 40, 3, 3))
    n, d = X.shape
    monkeypatch.setattr(kernels_mod, "_AX_ELEMS", n * d + 1 if not onehot else 8 * 3 * d * 4)
    L = 1.3
    _, G_ref, Gc_ref = _refs(kernel, X, A, M, L)
    assert _rel(kernel_agop(kernel, X, A, M, L), G_ref) < 1e-6
    assert _rel(kernel_agop(kernel, X, A, M, L, centre=True), Gc_ref) < 1e-6


def test_per_point_route_in_chunks_of_two_outputs(monkeypatch):
    # d = 1 and room for 2 n d elements: chunks of two outputs and one
    X, A, M = _dense(12, 40, 1, 3)
    monkeypatch.setattr(kernels_mod, "_AX_ELEMS", 2 * 40 + 1)
    _, G_ref, Gc_ref = _refs("gaussian", X, A, M, 0.9)
    assert _rel(kernel_agop("gaussian", X, A, M, 0.9), G_ref) < 1e-6
    assert _rel(kernel_agop("gaussian", X, A, M, 0.9, centre=True), Gc_ref) < 1e-6


def _blocks(n, sizes):
    out, i = [], 0
    for s in sizes:
        out.append(slice(i, min(n, i + s)))
        i += s
    assert i >= n
    return out


@pytest.mark.parametrize("kernel", NAMES)
@pytest.mark.parametrize("onehot", [False, True])
def test_feature_sums_in_uneven_row_blocks(kernel, onehot):
    X, A, M = (_onehot(10, 33, 20, 2) if onehot else _dense(10, 33, 3, 2))
    n, d = X.shape
    L = 1.25
    K, alpha = kern(kernel, X, X, M, L), _alpha(kernel, X, X, M, L)
    F_ref, G_ref, Gc_ref = _refs(kernel, X, A, M, L)
    g = KERNELS[kernel]
    blocks = _blocks(n, [5, 1, 13, 14])
    for centre, ref in ((False, G_ref), (True, Gc_ref)):
        s = FeatureSums(X, A, g, agop="points", centre=centre, predictions=True)
        for rows in blocks:
            s.add(rows, alpha[rows], K[rows])
        assert np.allclose(s.KA, K @ A, rtol=1e-12, atol=1e-12)
        assert _rel(s.fact(M), F_ref) < 1e-6
        assert _rel(s.agop(M), ref) < 1e-6
        # Gram route: S in full, the AGOP term per block from the full α
        s = FeatureSums(X, A, g, agop="gram", centre=centre)
        s.set_S(alpha @ A)
        for rows in blocks:
            s.add(rows, alpha[rows])
            s.add_gram(rows, alpha)
        assert s.KA is None
        assert _rel(s.fact(M), F_ref) < 1e-6
        assert _rel(s.agop(M), ref) < 1e-6
    s = FeatureSums(X, A, g)          # FACT only
    for rows in blocks:
        s.add(rows, alpha[rows])
    assert s.nGamma is None and s.KA is None
    assert _rel(s.fact(M), F_ref) < 1e-6
    s = FeatureSums(X, A, g, fact=False, agop="points")
    assert s.B is None
    for rows in blocks:
        s.add(rows, alpha[rows])
    assert _rel(s.agop(M), G_ref) < 1e-6


def test_feature_sums_results_are_symmetric_products_with_M():
    X, A, M = _dense(11, 20, 3, 2)
    alpha = _alpha("gaussian", X, X, M, 1.0)
    s = FeatureSums(X, A, 1, agop="points", centre=True)
    s.add(slice(0, 20), alpha)
    F, G = s.fact(M), s.agop(M)
    B = np.linalg.solve(M, F)
    assert np.allclose(B, B.T, atol=1e-12 * np.abs(B).max())
    assert np.allclose(G, G.T, atol=1e-12 * np.abs(G).max())
    assert np.linalg.eigvalsh(np.linalg.solve(M, np.linalg.solve(M, G).T)).min() > -1e-12


# ------------------------------------------------------------------ Columns


def test_columns_converts_and_refuses_with_messages():
    col = Columns()
    dims = {}
    out = col.convert([1, 2, 3], "coef", dims)
    assert out.shape == (3, 1) and out.dtype == np.float64 and dims["n"] == 3
    out = col.convert(np.ones((3, 2), dtype=np.float32), "coef", dims)
    assert out.shape == (3, 2)
    with pytest.raises(ValueError, match=re.escape(
            "coef must have shape (n,) or (n, c), got shape (2, 2, 2)")):
        col.convert(np.ones((2, 2, 2)), "coef", {})
    with pytest.raises(ValueError, match=re.escape("Y must be non-empty, got shape (3, 0)")):
        col.convert(np.ones((3, 0)), "Y", {})
    with pytest.raises(ValueError, match=re.escape("coef must be non-empty, got shape (0, 1)")):
        col.convert(np.ones(0), "coef", {})
    with pytest.raises(ValueError, match=re.escape("coef has n = 3, but an earlier argument")):
        col.convert(np.ones(3), "coef", {"n": 4})
    m = Columns("m")
    dims = {}
    m.convert(np.ones(5), "Y", dims)
    assert dims["m"] == 5 and "n" not in dims
    assert m.describe() == "a finite real array of shape (m,) or (m, c)"
    assert Columns().describe() == "a finite real array of shape (n,) or (n, c)"
    assert col.convert(np.array([2.5]), "coef", {}).shape == (1, 1)    # one entry is fine
    with pytest.raises((TypeError, ValueError), match="coef"):
        col.convert("abc", "coef", {})
    with pytest.raises((TypeError, ValueError), match="^Y "):
        col.convert(np.array([1.0, np.nan]), "Y", {})
    bad = Columns().bad_values()
    kinds = {"string": lambda v: isinstance(v, str), "None": lambda v: v is None,
             "complex": lambda v: np.iscomplexobj(v),
             "wrong ndim": lambda v: np.ndim(v) not in (1, 2),
             "nan": lambda v: np.asarray(v).dtype.kind == "f" and bool(np.isnan(v).any())}
    assert sorted(label for label, _ in bad) == sorted(kinds)
    for label, value in bad:      # each label names what is wrong with its value
        assert kinds[label](value), label
        with pytest.raises((TypeError, ValueError), match="coef"):
            Columns().convert(value, "coef", {})
    with pytest.raises(ValueError, match=re.escape("kernel_fact_matrix: coef must be non-empty")):
        kernel_fact_matrix("gaussian", np.ones((3, 2)), np.ones((3, 0)), np.eye(2), 1.0)


# ------------------------------------------------------------------ memory


def _peak(fn):
    import tracemalloc

    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("kernel", ["gaussian", "quadratic"])
def test_kernel_matrix_holds_one_m_by_n_array(kernel):
    # 1000 x 1000 entries (below the threaded size): K is built in place in the Gram block,
    # and no α is formed
    X, _, M = _dense(13, 1000, 3, 1)
    one = 1000 * 1000 * 8
    peak = _peak(lambda: kernel_matrix(kernel, X, X, M, 1.0))
    assert peak < 1.3 * one


def test_agop_from_alpha_per_point_route_forms_no_n_by_n_temporary():
    X, A, M = _dense(14, 1000, 2, 1)          # n > cd: the per-point route, no FACT wanted
    alpha = _alpha("gaussian", X, X, M, 1.0)
    peak = _peak(lambda: agop_from_alpha(X, A, M, alpha, 1, centre=False))
    assert peak < 0.25 * alpha.nbytes


@pytest.mark.parametrize("agop", [None, "gram"])
def test_feature_sums_builds_the_per_point_operand_only_for_that_route(agop):
    X, A, M = _dense(15, 1000, 50, 4)          # A ⊗ X: 1000 x 200 float64 = 1.6 MB
    operand = 1000 * 4 * 50 * 8
    assert _peak(lambda: FeatureSums(X, A, 1, agop=agop)) < 0.1 * operand
    assert _peak(lambda: FeatureSums(X, A, 1, agop="points")) >= operand
