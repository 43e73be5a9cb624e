"""Properties of the public layer of quadnet.features.rfm, against independent references.

Written for mutation testing of ``quadnet/features/rfm.py`` (``scripts/mutation.py
--public-only``): the data generators against Python's modular arithmetic and products, the
block-circulant score against an explicit projection onto the circulant permutation basis,
``solve_kernel`` against a dense ``numpy.linalg.solve``, the fitted estimator against a
hand-built kernel machine, and the scikit-learn protocol (parameters stored by the constructor
and ``set_params``, checked by ``fit``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from quadnet.exceptions import DegenerateFeaturesError
from quadnet.features.rfm import (
    Dataset,
    RecursiveFeatureMachine,
    RFMWarning,
    accuracy,
    block_circulant_score,
    modular_arithmetic,
    pow_mod_inverse,
    solve_kernel,
    sparse_parity,
    sqrt_psd_update,
)


# ------------------------------------------------------------------------------------ data


@pytest.mark.parametrize("op, f", [("add", lambda a, b, p: (a + b) % p),
                                   ("sub", lambda a, b, p: (a - b) % p),
                                   ("mul", lambda a, b, p: (a * b) % p),
                                   ("div", lambda a, b, p: next(c for c in range(p)
                                                                if (c * b) % p == a % p))])
def test_modular_arithmetic_is_every_pair_once_with_one_hot_blocks(op, f):
    p = 5
    ds = modular_arithmetic(p, op, 0.6, seed=3)
    info = ds.info
    pairs = np.vstack([info["pairs_train"], info["pairs_test"]])
    labels = np.concatenate([info["labels_train"], info["labels_test"]])
    N = p * (p - 1) if op == "div" else p * p
    assert pairs.shape == (N, 2) and len({tuple(x) for x in pairs.tolist()}) == N
    assert labels.shape == (N,) and set(labels.tolist()) <= set(range(p))
    if op == "div":
        assert (pairs[:, 1] != 0).all()
    assert ds.X_train.shape[0] == round(0.6 * N) and ds.X_test.shape[0] == N - round(0.6 * N)
    assert info["p"] == p and info["op"] == op
    for X, Y, P, L in ((ds.X_train, ds.y_train, info["pairs_train"], info["labels_train"]),
                       (ds.X_test, ds.y_test, info["pairs_test"], info["labels_test"])):
        assert X.shape[1] == 2 * p and Y.shape[1] == p
        for x, y, (a, b), lab in zip(X, Y, P.tolist(), L.tolist()):
            assert lab == f(a, b, p)
            want_x = np.zeros(2 * p)
            want_x[a] = want_x[p + b] = 1.0
            np.testing.assert_array_equal(x, want_x)
            np.testing.assert_array_equal(y, np.eye(p)[lab])


def test_modular_arithmetic_split_follows_the_seed_and_defaults():
    a, b = modular_arithmetic(7, seed=0), modular_arithmetic(7)
    np.testing.assert_array_equal(a.info["pairs_train"], b.info["pairs_train"])
    assert a.info["op"] == "add" and a.X_train.shape[0] == round(0.5 * 49)
    c = modular_arithmetic(7, seed=1)
    assert not np.array_equal(a.info["pairs_train"], c.info["pairs_train"])


@pytest.mark.parametrize("kw, exc, match", [
    ({"p": 1}, ValueError, r"^p must be >= 2, got 1$"),
    ({"p": 2.5}, TypeError, r"^p must be an integer"),
    ({"p": 5, "op": "pow"}, ValueError,
     r"^op must be one of 'add', 'sub', 'mul', 'div', got 'pow'$"),
    ({"p": 5, "train_fraction": 0.0}, ValueError, r"^train_fraction must be finite and > 0"),
    ({"p": 5, "train_fraction": "a"}, TypeError, r"^train_fraction must be a real number"),
    ({"p": 5, "train_fraction": 1.0}, ValueError,
     r"^train_fraction must lie in \(0, 1\), got 1.0$"),
    ({"p": 5, "train_fraction": 1.5}, ValueError, r"^train_fraction must lie in \(0, 1\)"),
    ({"p": 4, "op": "div"}, ValueError, r"^op='div' needs a prime p, got p=4$"),
    ({"p": 5, "train_fraction": 0.01}, ValueError,
     r"^train_fraction=0.01 leaves an empty split of 25 pairs$"),
    ({"p": 5, "train_fraction": 0.99}, ValueError, r"^train_fraction=0.99 leaves an empty split"),
])
def test_modular_arithmetic_refusals(kw, exc, match):
    with pytest.raises(exc, match="^modular_arithmetic: " + match[1:]):
        modular_arithmetic(**kw)


def test_modular_arithmetic_smallest_splits_are_accepted():
    # N = 4 pairs for p = 2: 1/4 leaves one training pair, 3/4 leaves one test pair
    assert modular_arithmetic(2, train_fraction=0.25).X_train.shape[0] == 1
    assert modular_arithmetic(2, train_fraction=0.75).X_test.shape[0] == 1
    assert modular_arithmetic(2, "div").X_train.shape[0] == 1   # b = 0 dropped: N = 2
    assert modular_arithmetic(3, "div", 0.5).info["p"] == 3


@pytest.mark.parametrize("p", [2, 3, 7, 13])
def test_pow_mod_inverse_is_the_inverse_and_keeps_the_shape(p):
    b = np.arange(1, p).reshape(-1, 1) if p > 2 else np.array([[1]])
    inv = pow_mod_inverse(b, p)
    assert inv.shape == b.shape and inv.dtype == np.int64
    assert ((inv * b) % p == 1).all()
    assert all(0 <= v < p for v in inv.ravel().tolist())
    B = np.array([[1, p - 1], [p - 1, 1]])
    np.testing.assert_array_equal(pow_mod_inverse(B, p) * B % p, np.ones((2, 2)))


def test_sparse_parity_labels_support_and_sizes():
    d, k, n, m = 9, 3, 40, 25
    ds = sparse_parity(d, k, n, n_test=m, seed=4)
    S = ds.info["support"]
    assert ds.info["d"] == d and ds.info["k"] == k
    assert S.shape == (k,) and len(set(S.tolist())) == k and (np.diff(S) > 0).all()
    assert 0 <= S.min() and S.max() < d
    assert ds.X_train.shape == (n, d) and ds.X_test.shape == (m, d)
    assert ds.y_train.shape == (n, 1) and ds.y_test.shape == (m, 1)
    for X, y in ((ds.X_train, ds.y_train), (ds.X_test, ds.y_test)):
        assert set(np.unique(X).tolist()) == {-1.0, 1.0}
        want = np.array([np.prod([row[j] for j in S.tolist()]) for row in X])
        np.testing.assert_array_equal(y[:, 0], want)
    # train and test are different draws
    assert not np.array_equal(ds.X_train[:m], ds.X_test)


def test_sparse_parity_defaults_and_seed():
    ds = sparse_parity(4, 4, 3)
    assert ds.X_test.shape == (2000, 4)
    np.testing.assert_array_equal(ds.info["support"], np.arange(4))
    np.testing.assert_array_equal(ds.X_train, sparse_parity(4, 4, 3, seed=0).X_train)
    a, b = sparse_parity(12, 1, 30, n_test=5, seed=0), sparse_parity(12, 1, 30, n_test=5, seed=1)
    assert not np.array_equal(a.X_train, b.X_train)
    one = sparse_parity(1, 1, 1, n_test=1)
    assert one.X_train.shape == (1, 1) and one.X_test.shape == (1, 1)
    np.testing.assert_array_equal(one.y_train, one.X_train)


@pytest.mark.parametrize("kw, exc, match", [
    ({"d": 0, "k": 1, "n": 1}, ValueError, r"^d must be >= 1, got 0$"),
    ({"d": 1.5, "k": 1, "n": 1}, TypeError, r"^d must be an integer"),
    ({"d": 3, "k": 0, "n": 1}, ValueError, r"^k must be >= 1, got 0$"),
    ({"d": 3, "k": 4, "n": 1}, ValueError, r"^k must be <= 3, got 4$"),
    ({"d": 3, "k": "a", "n": 1}, TypeError, r"^k must be an integer"),
    ({"d": 3, "k": 1, "n": 0}, ValueError, r"^n must be >= 1, got 0$"),
    ({"d": 3, "k": 1, "n": "a"}, TypeError, r"^n must be an integer"),
    ({"d": 3, "k": 1, "n": 2, "n_test": 0}, ValueError, r"^n_test must be >= 1, got 0$"),
    ({"d": 3, "k": 1, "n": 2, "n_test": 1.5}, TypeError, r"^n_test must be an integer"),
])
def test_sparse_parity_refusals(kw, exc, match):
    with pytest.raises(exc, match="^sparse_parity: " + match[1:]):
        sparse_parity(**kw)


def test_dataset_by_hand():
    ds = Dataset(np.ones((3, 2)), np.arange(3.0), np.ones((0, 2)), np.ones(0))
    assert ds.y_train.shape == (3, 1) and ds.X_test.shape == (0, 2) and ds.info == {}
    assert Dataset(np.ones((1, 1)), np.ones((1, 2)), np.ones((1, 1)), np.ones((1, 2)),
                   {"a": 1}).info == {"a": 1}
    with pytest.raises(ValueError, match=r"^Dataset: X_test must have the 2 columns of X_train, got "
                                         r"shape \(2, 3\)$"):
        Dataset(np.ones((3, 2)), np.ones(3), np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match=r"^Dataset: y_train must be 1- or 2-dimensional, got shape "
                                         r"\(3, 1, 1\)$"):
        Dataset(np.ones((3, 2)), np.ones((3, 1, 1)), np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match=r"^Dataset: y_train must have one row per row of X_train: got "
                                         r"2 rows for 3 inputs$"):
        Dataset(np.ones((3, 2)), np.ones(2), np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match=r"^Dataset: y_test must have the 2 columns of y_train, got 1$"):
        Dataset(np.ones((3, 2)), np.ones((3, 2)), np.ones((2, 2)), np.ones(2))
    with pytest.raises(TypeError, match=r"^Dataset: info must be a dict, got list$"):
        Dataset(np.ones((3, 2)), np.ones(3), np.ones((2, 2)), np.ones(2), [])
    with pytest.raises(ValueError, match=r"^Dataset: y_test has 1 non-finite"):
        Dataset(np.ones((3, 2)), np.ones(3), np.ones((2, 2)), np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match=r"^Dataset: X_test has 1 non-finite"):
        Dataset(np.ones((3, 2)), np.ones(3), np.array([[1.0, np.inf], [1, 1]]), np.ones(2))


# ---------------------------------------------------------------------------- accuracy


def test_accuracy_by_sign_and_by_argmax():
    assert accuracy([1.0, -2.0, 3.0, -0.5], [2.0, -1.0, -1.0, 1.0]) == 0.5
    assert accuracy(np.array([[1.0], [-1.0]]), np.array([1.0, 1.0])) == 0.5
    P = np.array([[0.1, 0.9, 0.0], [0.8, 0.1, 0.1], [0.2, 0.3, 0.5]])
    T = np.eye(3)[[1, 2, 2]]
    assert accuracy(P, T) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match=r"^Y_pred and Y_true must have the same shape, got "
                                         r"\(3, 1\), \(2, 1\)$"):
        accuracy(np.ones(3), np.ones(2))


# ------------------------------------------------------------------ block-circulant score


def _circulant_reference(M, p):
    """The score from its definition: each block (diagonal and the off-diagonal mean removed)
    projected onto the orthogonal basis ``P_k`` of circulant permutation matrices."""
    M = np.array(M, dtype=float)
    np.fill_diagonal(M, 0.0)
    shifts = [np.roll(np.eye(p), k, axis=0) for k in range(p)]   # P_k[i, j] = [i - j = k mod p]
    total = kept = 0.0
    for r in range(2):
        for s in range(2):
            B = M[r * p:(r + 1) * p, s * p:(s + 1) * p].copy()
            off = ~np.eye(p, dtype=bool) if r == s else np.ones((p, p), dtype=bool)
            if off.any():
                B[off] -= B[off].mean()
            B[~off] = 0.0
            total += np.sum(B**2)
            kept += sum(np.sum(B * P) ** 2 / p for P in shifts)
    return kept / total if total > 0 else 0.0


@pytest.mark.parametrize("p", [1, 2, 3, 5])
def test_block_circulant_score_matches_the_projection(p):
    rng = np.random.default_rng(p)
    for M in (rng.standard_normal((2 * p, 2 * p)), (lambda A: A @ A.T)(rng.random((2 * p, 2 * p)))):
        got = block_circulant_score(M, p)
        assert got == pytest.approx(_circulant_reference(M, p), rel=1e-12, abs=1e-15)
        assert block_circulant_score(M) == got                   # p defaults to d / 2
        assert 0.0 <= got <= 1.0 + 1e-12


def test_block_circulant_score_of_circulant_blocks_plus_constants_is_one():
    p = 4
    i, j = np.indices((p, p))
    c = np.array([0.0, 1.0, -2.0, 0.5])
    C = c[(i - j) % p]
    # constants added to each block and any diagonal leave the score at 1
    M = np.block([[C + 3.0, C.T - 1.0], [2 * C, C]]) + np.diag(np.arange(2 * p))
    assert block_circulant_score(M) == pytest.approx(1.0, abs=1e-12)
    # a Hankel block keeps only part of its energy, as the projection says
    H = c[(i + j) % p]
    M2 = np.block([[C, H], [H.T, C]])
    assert block_circulant_score(M2) == pytest.approx(_circulant_reference(M2, p), rel=1e-12)
    assert block_circulant_score(M2) < 0.99


def test_block_circulant_score_degenerate_inputs():
    assert block_circulant_score(np.diag([1.0, 2.0, 3.0, 4.0])) == 0.0   # no off-diagonal energy
    assert block_circulant_score(np.ones((4, 4))) == 0.0                  # constant blocks
    # a huge diagonal does not enter (only off-diagonal entries are scored)
    rng = np.random.default_rng(1)
    M = rng.standard_normal((6, 6))
    big = M.copy()
    np.fill_diagonal(big, 1e308)
    assert block_circulant_score(big) == pytest.approx(block_circulant_score(M), rel=1e-12)
    tiny = M * 1e-310                                                     # subnormal entries
    assert block_circulant_score(tiny) == pytest.approx(block_circulant_score(M), rel=1e-6)
    assert block_circulant_score(M * 1e300) == pytest.approx(block_circulant_score(M), rel=1e-12)


def test_block_circulant_score_refusals():
    with pytest.raises(ValueError, match=r"^block_circulant_score: M must be square, got shape \(4, 6\)$"):
        block_circulant_score(np.ones((4, 6)))
    with pytest.raises(ValueError, match=r"^block_circulant_score: M must be square, got shape \(6, 4\)$"):
        block_circulant_score(np.ones((6, 4)))
    with pytest.raises(ValueError, match=r"^block_circulant_score: M must be 2p x 2p for p=3, got shape \(4, 4\)$"):
        block_circulant_score(np.eye(4), 3)
    with pytest.raises(ValueError, match=r"^block_circulant_score: M must be 2p x 2p for p=1, got shape \(3, 3\)$"):
        block_circulant_score(np.eye(3))
    with pytest.raises(ValueError, match=r"^block_circulant_score: p must be >= 1, got 0$"):
        block_circulant_score(np.eye(4), 0)
    with pytest.raises(TypeError, match=r"^block_circulant_score: p must be an integer"):
        block_circulant_score(np.eye(4), 1.5)
    with pytest.raises(ValueError, match=r"^block_circulant_score: M has 1 non-finite entries"):
        block_circulant_score(np.array([[np.nan, 1.0], [1.0, 1.0]]))


# ----------------------------------------------------------------------- the updates, solve


def test_sqrt_psd_update_is_the_power_of_G_Gt():
    rng = np.random.default_rng(0)
    G = rng.standard_normal((4, 6))
    w, V = np.linalg.eigh(G @ G.T)
    for power in (1.0, 0.5, 2.0):
        want = (V * np.clip(w, 0, None) ** (power / 2)) @ V.T
        np.testing.assert_allclose(sqrt_psd_update(G, power), want, rtol=1e-10, atol=1e-12)


def test_solve_kernel_matches_a_dense_solve_and_leaves_K_intact():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((6, 6))
    K = A @ A.T + 0.5 * np.eye(6)
    Y = rng.standard_normal((6, 2))
    K0 = K.copy()
    for ridge in (0.0, 0.3):
        got = solve_kernel(K, Y, ridge)
        np.testing.assert_allclose(got, np.linalg.solve(K + ridge * np.eye(6), Y), rtol=1e-10)
        np.testing.assert_array_equal(K, K0)
    # list input, integer entries
    np.testing.assert_allclose(solve_kernel([[2, 0], [0, 4]], [[2], [2]], 0), [[1.0], [0.5]])


def test_solve_kernel_on_a_singular_matrix_warns_and_approximates_the_min_norm_solution():
    v = np.array([1.0, 2.0, 2.0]) / 3.0
    K = 3.0 * np.outer(v, v)                          # rank one, mean diagonal 1
    Y = np.array([[1.0], [2.0], [2.0]])               # in the range of K: K a = Y solvable
    with pytest.warns(RFMWarning):
        a = solve_kernel(K, Y, 0.0)
    np.testing.assert_allclose(K @ a, Y, rtol=1e-6)
    # the null-space part of a is rounding amplified by 1/jitter (jitter >= 1e-12 mean diag K):
    # ~eps / 1e-12 = 1e-4, far below the size 1 of the solution
    np.testing.assert_allclose(a, np.linalg.pinv(K) @ Y, atol=1e-3)


# ------------------------------------------------------------------------- the estimator


def _gauss(Z, X, M, L):
    D = Z[:, None, :] - X[None, :, :]
    return np.exp(-np.einsum("abi,ij,abj->ab", D, M, D) / (2 * L**2))


def _data(n=10, d=3, c=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.standard_normal((n, c))


def test_fit_returns_self_and_predict_is_the_kernel_machine():
    X, Y = _data()
    m = RecursiveFeatureMachine(iters=2, ridge=0.1, bandwidth=1.5)
    assert m.fit(X, Y) is m
    K = _gauss(X, X, m.M_, 1.5)
    np.testing.assert_allclose(m.coef_, np.linalg.solve(K + 0.1 * np.eye(10), Y), rtol=1e-8)
    Z = np.random.default_rng(5).standard_normal((4, 3))
    np.testing.assert_allclose(m.predict(Z), _gauss(Z, X, m.M_, 1.5) @ m.coef_, rtol=1e-10)
    # score is R^2 averaged over the outputs; accuracy by argmax
    P = m.predict(Z)
    T = P + np.random.default_rng(6).standard_normal(P.shape)
    r2 = np.mean([1 - np.sum((T[:, k] - P[:, k]) ** 2) / np.sum((T[:, k] - T[:, k].mean()) ** 2)
                  for k in range(2)])
    assert m.score(Z, T) == pytest.approx(r2, rel=1e-12)
    assert m.accuracy(Z, T) == float(np.mean(P.argmax(1) == T.argmax(1)))
    # features: the rows of X M^{1/2}
    F = m.features(Z)
    np.testing.assert_allclose(F @ F.T, Z @ m.M_ @ Z.T, rtol=1e-10, atol=1e-12)
    w, V = np.linalg.eigh(m.M_)
    np.testing.assert_allclose(F, Z @ (V * np.sqrt(np.clip(w, 0, None))) @ V.T, atol=1e-12)


def test_score_of_one_output_and_refusals():
    X, Y = _data(c=1)
    m = RecursiveFeatureMachine(iters=0).fit(X, Y[:, 0])
    assert m.score(X, Y[:, 0]) == pytest.approx(1.0, abs=1e-8)           # interpolates
    assert m.accuracy(X, Y) == 1.0
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.score: a target column of Y is constant, R² is "
                                         r"undefined$"):
        m.score(X, np.ones(10))
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.score: X has 3 non-finite"):
        m.score(np.where(np.eye(10, 3) > 0, np.nan, X), Y)
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.accuracy: X has 3 non-finite"):
        m.accuracy(np.where(np.eye(10, 3) > 0, np.nan, X), Y)
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.features: X must have shape \(\*, 3\), got \(2, 2\)"):
        m.features(np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.features: X has 1 non-finite"):
        m.features(np.array([[np.nan, 1.0, 1.0]]))
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.score: Y must have 1 column \(the outputs"):
        m.score(X, np.ones((10, 2)))
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.score: the sum of squares is not finite \(float64 "
                                         r"overflow\) for Y"):
        m.score(X, Y * 1e300)
    fresh = RecursiveFeatureMachine()
    for call in (lambda: fresh.predict(X), lambda: fresh.features(X),
                 lambda: fresh.score(X, Y), lambda: fresh.accuracy(X, Y)):
        with pytest.raises(RuntimeError, match=r"^this RecursiveFeatureMachine is not fitted "
                                               r"yet; call fit first$"):
            call()


def test_score_of_a_poor_fit_is_negative_and_exact():
    X, Y = _data(n=8, c=2, seed=2)
    m = RecursiveFeatureMachine(iters=0, ridge=1e3).fit(X, Y)        # heavy ridge: P ~ 0
    P = m.predict(X)
    ss_res = ((Y - P) ** 2).sum(0)
    ss_tot = ((Y - Y.mean(0)) ** 2).sum(0)
    assert m.score(X, Y) == pytest.approx(float(np.mean(1 - ss_res / ss_tot)), rel=1e-12)
    assert m.score(X, Y) < 0.5


def test_params_protocol():
    m = RecursiveFeatureMachine(iters=3, kernel="laplace")
    params = m.get_params()
    assert list(params) == ["kernel", "bandwidth", "update", "fact_form", "iters", "normalize",
                            "ridge", "centre_agop", "agop_power", "block_size", "solver",
                            "memory_limit", "storage", "tol", "feature_tol", "cg_max_iter",
                            "preconditioner_rank", "early_stopping", "seed", "progress"]
    assert params["iters"] == 3 and params["kernel"] == "laplace"
    assert m.get_params(deep=False) == params
    clone = RecursiveFeatureMachine(**params)
    assert clone.get_params() == params
    assert m.set_params(iters=5, ridge=0.5) is m and m.iters == 5 and m.ridge == 0.5
    assert m.set_params() is m
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine\.set_params: unknown "
                                         r"parameter 'iter'; valid: kernel, bandwidth, "
                                         r"update, .*, seed, progress$"):
        m.set_params(iter=2)
    assert m.iters == 5
    # repr round trip
    r = repr(RecursiveFeatureMachine(iters=2, normalize=None, kernel="quadratic"))
    assert r.startswith("RecursiveFeatureMachine(kernel='quadratic', bandwidth=1.0, ")
    assert "iters=2, normalize=None, " in r and r.endswith("seed=0, progress=None)")
    rebuilt = eval(r, {"RecursiveFeatureMachine": RecursiveFeatureMachine})
    assert rebuilt.get_params() == RecursiveFeatureMachine(iters=2, normalize=None,
                                                           kernel="quadratic").get_params()


def test_set_params_only_stores_and_fit_checks():
    X, Y = _data()
    m = RecursiveFeatureMachine().set_params(iters=-1)
    assert m.iters == -1
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine: iters must be >= 0, got -1$"):
        m.fit(X, Y)
    m.set_params(iters=1, kernel="nope")
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine: kernel must be one of"):
        m.fit(X, Y)
    m.set_params(iters=1, kernel="gaussian")
    assert m.fit(X, Y) is m


def test_fit_refusals():
    X, Y = _data()
    m = RecursiveFeatureMachine(iters=1)
    with pytest.raises(TypeError, match=r"^RecursiveFeatureMachine.fit: callback must be callable, got int$"):
        m.fit(X, Y, callback=3)
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.fit: early_stopping=1.5 needs validation data: call "
                                         r"fit\(X, Y, X_val, Y_val\)$"):
        RecursiveFeatureMachine(early_stopping=1.5).fit(X, Y)
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.fit: give both X_val and Y_val, or neither$"):
        m.fit(X, Y, X_val=X)
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.fit: give both X_val and Y_val, or neither$"):
        m.fit(X, Y, Y_val=Y)
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.fit: Y_val must have 2 columns like Y, got 1$"):
        m.fit(X, Y, X, Y[:, :1])
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.fit: Y_val must have one row per input row: got 9 rows "
                                         r"for 10 inputs$"):
        m.fit(X, Y, X, Y[:9])
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.fit: X_val must have shape"):
        m.fit(X, Y, X[:, :2], Y)
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.fit: Y must have one row per input row: got 9 rows for 10 "
                                         r"inputs$"):
        m.fit(X, Y[:9])
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.fit: block_size=1 needs d = 2 \* block_size, got d=3$"):
        RecursiveFeatureMachine(block_size=1, iters=0).fit(X, Y)


def test_fit_callback_and_block_size_default():
    X, Y = _data(d=4)
    seen = []
    m = RecursiveFeatureMachine(iters=3).fit(X, Y, callback=lambda t, h: seen.append(t) or t == 1)
    assert seen == [0, 1] and m.n_iter_ == 1
    # even d: the score at p = d/2 is recorded for every iterate
    assert m.history_["circulant_score"][0] == block_circulant_score(np.eye(4), 2) == 0.0
    assert m.history_["circulant_score"][1] == pytest.approx(block_circulant_score(m.M_, 2))
    X2, Y2 = _data(d=2)
    h2 = RecursiveFeatureMachine(iters=1).fit(X2, Y2).history_["circulant_score"]
    assert h2[0] == 0.0 and h2[1] is not None
    X3, Y3 = _data(d=3)
    assert RecursiveFeatureMachine(iters=1).fit(X3, Y3).history_["circulant_score"] == [None] * 2
    off = RecursiveFeatureMachine(iters=1, block_size=0).fit(X, Y).history_["circulant_score"]
    assert off == [None, None]
    m2 = RecursiveFeatureMachine(iters=1, block_size=2).fit(X, Y)
    assert m2.history_["circulant_score"][1] == pytest.approx(block_circulant_score(m2.M_, 2))


def test_fit_with_validation_records_the_validation_metrics():
    X, Y = _data(n=12)
    Xv, Yv = _data(n=5, seed=9)
    m = RecursiveFeatureMachine(iters=1, ridge=0.1).fit(X, Y, Xv, Yv)
    P = m.predict(Xv)
    assert m.history_["val_mse"][-1] == pytest.approx(float(np.mean((P - Yv) ** 2)), rel=1e-12)
    assert m.history_["val_acc"][-1] == accuracy(P, Yv)
    assert "val_mse" not in RecursiveFeatureMachine(iters=1).fit(X, Y).history_


def test_fit_errors_name_the_data():
    X, Y = _data()
    with pytest.raises(DegenerateFeaturesError,
                       match=r"^RecursiveFeatureMachine.fit: the RFM update produced a feature "
                             r"matrix with zero trace .*\(max \|X\| = "
                             + f"{np.abs(X).max():.3g}".replace(".", r"\.")
                             + r", max \|Y\| = 0, ridge = 0\); X and Y must not be zero"):
        RecursiveFeatureMachine(iters=1).fit(X, 0 * Y)
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.fit: the kernel fit "
                                         r"\(coefficients, predictions or FACT matrix\) is not "
                                         r"finite \(float64 overflow\) for Y"):
        RecursiveFeatureMachine(iters=1, ridge=1.0).fit(X, Y * 1e306)


def test_fit_refuses_empty_data_and_mismatched_targets():
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.fit: X must be non-empty, "
                                         r"got shape \(0, 3\)$"):
        RecursiveFeatureMachine().fit(np.ones((0, 3)), np.ones(0))
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.fit: Y has 1 non-finite"):
        RecursiveFeatureMachine().fit(np.ones((2, 1)), np.array([1.0, np.nan]))


def test_defaults_are_the_documented_ones():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = RecursiveFeatureMachine()
    p = m.get_params()
    assert (p["kernel"], p["bandwidth"], p["update"], p["fact_form"], p["iters"]) == (
        "gaussian", 1.0, "fact", "ffT", 10)
    assert (p["normalize"], p["ridge"], p["centre_agop"], p["agop_power"]) == (
        "trace", 0.0, True, 0.5)


def test_block_circulant_score_of_a_diagonal_matrix_does_not_divide_by_zero():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert block_circulant_score(np.diag([1.0, 2.0])) == 0.0
        assert block_circulant_score(np.zeros((4, 4)), 2) == 0.0


def test_pow_mod_inverse_of_nothing_is_an_empty_integer_array():
    inv = pow_mod_inverse(np.zeros((0, 3), dtype=np.int64), 7)
    assert inv.shape == (0, 3) and inv.dtype == np.int64


def _jitter(record):
    import re
    (w,) = [r for r in record if issubclass(r.category, RFMWarning)]
    return float(re.search(r"jitter (\S+) x mean\(diag K\)", str(w.message)).group(1))


@pytest.mark.parametrize("scale", [0.0, 1e6])
def test_solve_kernel_jitter_is_relative_to_the_mean_diagonal(scale):
    v = np.array([1.0, 2.0, 2.0]) / 3.0
    K = scale * np.outer(v, v)                       # rank one (zero for scale 0)
    Y = np.array([[1.0], [2.0], [3.0]])
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        a = solve_kernel(K, Y, 0.0)
    shift = _jitter(record) * (np.mean(np.diag(K)) or 1.0)   # the documented fallback scale
    Ks = K + shift * np.eye(3)
    # a backward-stable solve of the jittered system: residual <= ~n eps |Ks| |a| (1e-12: x300)
    assert np.linalg.norm(Ks @ a - Y) <= 1e-12 * np.linalg.norm(Ks, 2) * np.linalg.norm(a)
    # forward error <= cond(Ks) eps ~ 1e-4 at scale 1e6; a wrong shift changes a by its size
    np.testing.assert_allclose(a, np.linalg.solve(Ks, Y), rtol=1e-2)


def test_features_refuse_a_feature_matrix_that_is_not_psd_naming_it():
    X, Y = _data()
    m = RecursiveFeatureMachine(iters=0).fit(X, Y)
    m.M_ = -np.eye(3)
    with pytest.raises(ValueError, match=r"M_ must be positive semidefinite"):
        m.features(X)
    m.M_ = np.array([[2.0, 1.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 1.0]])   # its symmetric part
    S = (m.M_ + m.M_.T) / 2
    F = m.features(X)
    np.testing.assert_allclose(F @ F.T, X @ S @ X.T, rtol=1e-10, atol=1e-12)


def test_score_overflow_names_every_extreme_argument():
    rng = np.random.default_rng(0)
    X = 1e100 * rng.standard_normal((5, 2))          # far apart: the kernel matrix is I
    Y = rng.standard_normal((5, 1))
    m = RecursiveFeatureMachine(iters=0).fit(X, Y)
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.score: the sum of squares is "
                                         r"not finite \(float64 overflow\) for X \(max \|entry\| "
                                         r".*\), Y \(max"):
        m.score(X, Y * 1e300)


def test_constructor_stores_every_parameter():
    kw = {"kernel": "laplace", "bandwidth": 2.0, "update": "nfa", "fact_form": "fm", "iters": 3,
          "normalize": None, "ridge": 0.5, "centre_agop": False, "agop_power": 1.0,
          "block_size": 0, "solver": "iterative", "memory_limit": 1e9, "storage": "float32",
          "tol": 1e-6, "feature_tol": 1e-3, "cg_max_iter": 5, "preconditioner_rank": 3,
          "early_stopping": 1.1, "seed": 7, "progress": False}
    m = RecursiveFeatureMachine(**kw)
    assert m.get_params() == kw
    assert all(getattr(m, k) == v for k, v in kw.items())
    assert RecursiveFeatureMachine().set_params(**kw).get_params() == kw


def test_fit_overflow_with_moderate_arguments_names_them_all():
    X = np.random.default_rng(0).standard_normal((6, 2))
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.fit: the kernel fit "
                                         r"\(coefficients, predictions or FACT matrix\) is not "
                                         r"finite \(float64 overflow\) for X, Y, ridge, "
                                         r"bandwidth; rescale"):
        RecursiveFeatureMachine(kernel="exp_inner", bandwidth=0.01, iters=0).fit(X, X[:, :1])


def test_score_refuses_an_overflowing_residual_with_moderate_targets():
    # exp_inner at a far test point: finite predictions ~4e200 (e^460 times the coefficient
    # of x = 1), residual squares overflow while the targets' own spread is 0.5
    X = np.array([[1.0], [0.5], [-0.3]])
    m = RecursiveFeatureMachine(kernel="exp_inner", iters=0, ridge=1e-3).fit(
        X, np.array([[1.0], [0.0], [2.0]]))
    Xt = np.array([[460.0], [460.0]])
    assert np.all(np.isfinite(m.predict(Xt))) and np.all(np.abs(m.predict(Xt)) > 1e199)
    with pytest.raises(ValueError, match=r"^RecursiveFeatureMachine.score: the sum of squares is "
                                         r"not finite \(float64 overflow\) for X, Y; rescale"):
        m.score(Xt, np.array([[0.0], [1.0]]))
