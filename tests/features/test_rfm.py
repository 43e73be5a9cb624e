"""Tests of quadnet.kernels and quadnet.rfm (quadnet theory §6, docs/rfm.md)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from quadnet.harness.checks import CheckContext, run_check
from quadnet.features.fact import psd_power
from quadnet.features.kernels import KERNELS, input_gradients, kernel_matrix
from quadnet.features.kernels import kernel_agop as agop
from quadnet.features.kernels import kernel_fact_matrix as fact_matrix
from quadnet.features.rfm import (
    RecursiveFeatureMachine,
    RFMWarning,
    block_circulant_score,
    modular_arithmetic,
    sparse_parity,
    sqrt_psd_update,
)


def _problem(seed: int, n: int, d: int, c: int):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    A = rng.standard_normal((n, c))
    R = rng.standard_normal((d, d))
    M = R @ R.T / d + 0.1 * np.eye(d)
    return X, A, M


def _fd_gradients(kernel, X, A, M, L, h=1e-3):
    """5-point central differences of f_c(x) = Σ_j a_jc k(x, x_j) at the centres (n × c × d).

    For the translation-invariant kernels the self term k(x, x_i) is left out at x_i: its
    gradient there is 0 (Gaussian: exactly; Laplace: by the convention of quadnet.kernels), and
    differencing the Laplace cusp only measures the rounding of ‖x − x_i‖_M near 0.
    """
    n, d = X.shape
    G = np.zeros((n, A.shape[1], d))
    for k in range(d):
        e = np.zeros(d)
        e[k] = h

        def f(Z):
            K = kernel_matrix(kernel, Z, X, M, L)
            if KERNELS[kernel]:
                K[np.diag_indices(n)] = 0.0
            return K @ A

        G[:, :, k] = (-f(X + 2 * e) + 8 * f(X + e) - 8 * f(X - e) + f(X - 2 * e)) / (12 * h)
    return G


def _rel(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


# The 5-point stencil with h = 1e-3 has truncation error ~h^4 |f^(5)| ~ 1e-12 relative and
# rounding ~eps/h ~ 1e-13; the quadnet target 1e-7 leaves room for the Laplace kernel, whose
# higher derivatives are larger near (but not at) coincident points.
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(3, 8), d=st.integers(2, 5), c=st.integers(1, 3),
       kernel=st.sampled_from(sorted(KERNELS)), L=st.floats(1.0, 3.0))
def test_closed_forms_match_finite_differences(seed, n, d, c, kernel, L):
    X, A, M = _problem(seed, n, d, c)
    if kernel == "laplace":
        # the k-th derivative of ||x - x_j||_M grows like dist^(1-k): the stencil's truncation
        # term h^4 f^(5) / 30 reaches 1e-7 at M-distances ~0.07 between samples (measured),
        # so such near-coincident draws test the stencil, not the closed form
        diff = X[:, None, :] - X[None, :, :]
        dist = np.sqrt(np.einsum("ijk,kl,ijl->ij", diff, M, diff))
        assume(dist[np.triu_indices(n, 1)].min() >= 0.2)
    G = _fd_gradients(kernel, X, A, M, L)
    assert _rel(input_gradients(kernel, X, X, A, M, L), G) <= 1e-7
    assert _rel(fact_matrix(kernel, X, A, M, L), np.einsum("ic,ick,il->kl", A, G, X)) <= 1e-7
    assert _rel(agop(kernel, X, A, M, L), np.einsum("ick,icl->kl", G, G) / n) <= 1e-7
    Gc = G - G.mean(axis=0)
    assert _rel(agop(kernel, X, A, M, L, centre=True),
                np.einsum("ick,icl->kl", Gc, Gc) / n) <= 1e-7


@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("shape", [(6, 4, 3), (30, 2, 1)])  # n <= cd: Gram route; n > cd: tensor
def test_agop_routes_agree_with_per_point_gradients(kernel, shape):
    n, d, c = shape
    X, A, M = _problem(1, n, d, c)
    G = input_gradients(kernel, X, X, A, M, 1.5).reshape(n * c, d)
    # both are exact formulas: agreement to rounding (1e-12 relative)
    assert _rel(agop(kernel, X, A, M, 1.5), G.T @ G / n) <= 1e-12


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_fact_is_M_times_symmetric_B(kernel):
    X, A, M = _problem(2, 7, 4, 2)
    F = fact_matrix(kernel, X, A, M, 1.3)
    B = np.linalg.solve(M, F)
    assert np.linalg.norm(B - B.T) <= 1e-10 * np.linalg.norm(B)  # rounding of the solve
    if KERNELS[kernel] == 0:  # inner-product kernels: B = Xᵀ(α ⊙ AAᵀ)X is PSD (Schur product)
        assert np.linalg.eigvalsh(0.5 * (B + B.T)).min() >= -1e-10 * np.linalg.norm(B)


def test_fm_form_equals_square_root_of_FM():
    # docs/rfm.md: (F M² Fᵀ)^{1/4} = (F M)^{1/2} when F M = M B M is PSD (exp_inner kernel)
    X, A, M = _problem(3, 8, 5, 2)
    F = fact_matrix("exp_inner", X, A, M, 1.2)
    FM = F @ M
    assert np.linalg.norm(FM - FM.T) <= 1e-10 * np.linalg.norm(FM)
    lhs = sqrt_psd_update(FM, 0.5)
    rhs = psd_power(FM, 0.5)
    assert _rel(lhs, rhs) <= 1e-10  # two factorisations of the same PSD root
    np.testing.assert_allclose(lhs @ lhs, 0.5 * (FM + FM.T), rtol=0, atol=1e-10 * np.abs(FM).max())


def test_fact_forms_have_the_same_fixed_point():
    # at F = M both updates return M (for a PSD M)
    _, _, M = _problem(4, 3, 5, 1)
    assert _rel(sqrt_psd_update(M, 1.0), M) <= 1e-12
    assert _rel(sqrt_psd_update(M @ M, 0.5), M) <= 1e-12


def test_modular_arithmetic_data():
    D = modular_arithmetic(7, "add", 0.5, seed=3)
    assert D.X_train.shape == (24, 14) and D.X_test.shape == (25, 14)
    assert D.y_train.shape == (24, 7)
    a, b = D.info["pairs_train"].T
    np.testing.assert_array_equal(D.X_train[:, :7].argmax(1), a)
    np.testing.assert_array_equal(D.X_train[:, 7:].argmax(1), b)
    np.testing.assert_array_equal(D.y_train.argmax(1), (a + b) % 7)
    all_pairs = np.vstack([D.info["pairs_train"], D.info["pairs_test"]])
    assert len({tuple(r) for r in all_pairs}) == 49
    D2 = modular_arithmetic(7, "add", 0.5, seed=3)
    np.testing.assert_array_equal(D.X_train, D2.X_train)
    Dd = modular_arithmetic(7, "div", 0.5, seed=0)
    a, b = Dd.info["pairs_train"].T
    np.testing.assert_array_equal((Dd.y_train.argmax(1) * b) % 7, a)


def test_sparse_parity_data():
    D = sparse_parity(20, 3, 50, n_test=30, seed=5)
    S = D.info["support"]
    assert len(S) == 3 and D.X_train.shape == (50, 20) and D.y_test.shape == (30, 1)
    assert set(np.unique(D.X_train)) <= {-1.0, 1.0}
    np.testing.assert_array_equal(D.y_train[:, 0], np.prod(D.X_train[:, S], axis=1))
    np.testing.assert_array_equal(D.X_test, sparse_parity(20, 3, 50, n_test=30, seed=5).X_test)


def test_block_circulant_score():
    p = 7
    rng = np.random.default_rng(0)
    c = rng.standard_normal(p)
    i, j = np.indices((p, p))
    c2 = rng.standard_normal(p)
    circ, circ2, hank = c[(i - j) % p], c2[(i - j) % p], c[(i + j) % p]
    M = np.block([[circ + circ.T, circ2], [circ2.T, circ + circ.T]])
    assert block_circulant_score(M) == pytest.approx(1.0, abs=1e-12)
    assert block_circulant_score(np.eye(2 * p)) == 0.0
    # a Hankel off-diagonal block is not circulant: it keeps only its "diagonal" part
    assert block_circulant_score(np.block([[circ + circ.T, hank], [hank.T, circ + circ.T]])) < 0.9
    R = rng.standard_normal((2 * p, 2 * p))
    assert block_circulant_score(R + R.T) < 0.5  # noise: ~1/p of the energy (p = 7)


def _fit_small(**kw):
    D = modular_arithmetic(11, "add", 0.8, seed=1)
    m = RecursiveFeatureMachine(kernel="exp_inner", bandwidth=3.0, iters=3, **kw)
    return m.fit(D.X_train, D.y_train, D.X_test, D.y_test), D


def test_fit_predict_shapes_history_and_determinism():
    m, D = _fit_small()
    assert m.predict(D.X_test).shape == D.y_test.shape
    assert m.coef_.shape == D.y_train.shape
    assert np.trace(m.M_) == pytest.approx(D.X_train.shape[1], rel=1e-12)
    for key in ("train_acc", "val_acc", "train_mse", "val_mse", "circulant_score",
                "fixed_point_residual"):
        assert len(m.history_[key]) == 4
    assert len(m.history_["update_change"]) == 3
    assert m.history_["train_acc"][-1] == 1.0  # ridgeless: interpolates the training data
    m2, _ = _fit_small()
    np.testing.assert_array_equal(m.M_, m2.M_)
    np.testing.assert_array_equal(m.predict(D.X_test), m2.predict(D.X_test))
    assert -np.inf < m.score(D.X_test, D.y_test) <= 1.0
    assert 0.0 <= m.accuracy(D.X_test, D.y_test) <= 1.0


@pytest.mark.parametrize("kw", [{"update": "nfa"}, {"fact_form": "fm"}, {"normalize": None},
                                {"ridge": 1e-3}, {"kernel": "laplace"}, {"kernel": "quadratic"}])
def test_all_variants_run_finite(kw):
    base = {"kernel": "exp_inner", "bandwidth": 3.0, "iters": 2}
    base.update(kw)
    D = modular_arithmetic(7, "add", 0.8, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RFMWarning)  # quadratic kernel on one-hot data is singular
        m = RecursiveFeatureMachine(**base).fit(D.X_train, D.y_train)
    assert np.all(np.isfinite(m.M_)) and np.all(np.isfinite(m.predict(D.X_test)))


def test_get_set_params_roundtrip():
    m = RecursiveFeatureMachine(kernel="laplace", bandwidth=2.0, update="nfa", iters=4)
    params = m.get_params()
    assert params["kernel"] == "laplace" and params["iters"] == 4
    clone = RecursiveFeatureMachine(**params)
    assert clone.get_params() == params
    assert m.set_params(bandwidth=5.0) is m and m.bandwidth == 5.0
    with pytest.raises(ValueError, match="unknown parameter"):
        m.set_params(width=3)


def test_parameters_are_checked_once_in_fit():
    """scikit-learn's convention: the constructor and set_params only store; fit checks the
    table and its relations, once per call (the nested choose_solver does not check again)."""
    from quadnet._validation import count_validations

    m = RecursiveFeatureMachine(kernel="rbf", iters=1)
    assert m.kernel == "rbf"
    m.set_params(kernel="gaussian", solver="iterative")   # ridge = 0: a relation, refused by fit
    X, Y = np.eye(4), np.ones((4, 1))
    with pytest.raises(ValueError, match=r"ridge = 0 with solver='iterative' needs ridge > 0"):
        m.fit(X, Y)
    m.set_params(ridge=1e-3)
    with count_validations() as seen:
        m.fit(X, Y)
    checked = [arg for where, arg in seen if where == "RecursiveFeatureMachine"]
    assert sorted(checked) == sorted(RecursiveFeatureMachine._parameter_constraints)
    assert not [where for where, _ in seen if where in ("choose_solver", "as_rng")]


def test_ridgeless_singular_kernel_falls_back_with_warning():
    X = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])  # duplicate rows: K is singular
    Y = np.array([[1.0], [1.0], [-1.0]])
    m = RecursiveFeatureMachine(kernel="gaussian", bandwidth=1.0, iters=1)
    with pytest.warns(RFMWarning, match="jitter"):
        m.fit(X, Y)
    assert np.all(np.isfinite(m.coef_))
    np.testing.assert_allclose(m.predict(X), Y, atol=1e-4)  # consistent duplicates interpolated


@pytest.mark.parametrize("options, where", [
    ({"iters": 1}, (0, 0)),
    ({"iters": 1, "ridge": 1e-3, "solver": "iterative"}, (1, 2)),
], ids=["default solver", "iterative solver"])
def test_fit_names_non_finite_data(options, where):
    X, Y = np.eye(4), np.ones((4, 1))
    m = RecursiveFeatureMachine(**options)
    bad = X.copy()
    bad[where] = np.nan
    with pytest.raises(ValueError, match="X has 1 non-finite"):
        m.fit(bad, Y)
    with pytest.raises(ValueError, match="Y has 1 non-finite"):
        m.fit(X, np.array([[1.0], [np.inf], [0.0], [1.0]]))


def test_bad_input():
    X, Y = np.eye(4), np.ones((4, 1))
    with pytest.raises(ValueError, match="kernel"):
        RecursiveFeatureMachine(kernel="rbf").fit(X, Y)
    with pytest.raises(ValueError, match="update"):
        RecursiveFeatureMachine(update="agop").fit(X, Y)
    with pytest.raises(ValueError, match="fact_form"):
        RecursiveFeatureMachine(fact_form="FM").fit(X, Y)
    with pytest.raises(ValueError, match="normalize"):
        RecursiveFeatureMachine(normalize="max").fit(X, Y)
    for bw in (0.0, -1.0, np.inf):
        with pytest.raises(ValueError, match="bandwidth"):
            RecursiveFeatureMachine(bandwidth=bw).fit(X, Y)
    with pytest.raises(TypeError, match="bandwidth"):
        RecursiveFeatureMachine(bandwidth="wide").fit(X, Y)
    m = RecursiveFeatureMachine(iters=1)
    with pytest.raises(ValueError, match="Y must have one row per input row"):
        m.fit(X, np.ones((3, 1)))
    with pytest.raises(ValueError, match="X_val"):
        m.fit(X, Y, X_val=np.eye(3, 4))
    with pytest.raises(RuntimeError, match="not fitted"):
        RecursiveFeatureMachine().predict(X)
    with pytest.raises(ValueError, match="kernel"):
        kernel_matrix("poly", X, X, np.eye(4), 1.0)
    with pytest.raises(ValueError, match="op"):
        modular_arithmetic(5, op="pow")
    with pytest.raises(ValueError, match="prime"):
        modular_arithmetic(6, op="div")
    with pytest.raises(ValueError, match="k must be <= 5"):
        sparse_parity(5, 6, 10)


def test_check_passes_in_quick_mode():
    res = run_check("rfm", CheckContext(quick=True))
    assert res.passed, [(r.claim, r.measured) for r in res.rows if not r.passed]


def test_dataset_built_by_hand_is_checked():
    from quadnet.features.rfm import Dataset

    good = (np.ones((3, 2)), np.ones(3), np.ones((2, 2)), np.ones(2))
    ds = Dataset(*good, {})
    assert ds.y_train.shape == (3, 1) and ds.y_test.shape == (2, 1)
    with pytest.raises(ValueError, match=r"X_train has 6 non-finite entries"):
        Dataset(np.full((3, 2), np.nan), *good[1:], {})
    with pytest.raises(ValueError, match=r"y_train must have one row per row of X_train: got 1"):
        Dataset(good[0], np.ones((1, 3)), *good[2:], {})          # transposed targets
    with pytest.raises(ValueError, match=r"X_test must have the 2 columns of X_train"):
        Dataset(good[0], good[1], np.ones((2, 3)), good[3], {})
    with pytest.raises(ValueError, match=r"y_test must have the 1 columns of y_train"):
        Dataset(*good[:3], np.ones((2, 2)), {})
    with pytest.raises(TypeError, match=r"info must be a dict"):
        Dataset(*good, "info")


@pytest.mark.parametrize("fn", ["kernel_matrix", "kernel_agop", "kernel_fact_matrix",
                                "input_gradients"])
def test_kernel_functions_refuse_a_non_symmetric_or_indefinite_metric(fn):
    from quadnet.features import kernels

    X = np.random.default_rng(0).standard_normal((4, 2))
    coef = np.ones((4, 1))
    args = {"kernel_matrix": lambda M: kernels.kernel_matrix("gaussian", X, X, M, 1.0),
            "kernel_agop": lambda M: kernels.kernel_agop("gaussian", X, coef, M, 1.0),
            "kernel_fact_matrix": lambda M: kernels.kernel_fact_matrix("gaussian", X, coef, M,
                                                                       1.0),
            "input_gradients": lambda M: kernels.input_gradients("gaussian", X, X, coef, M, 1.0)}
    call = args[fn]
    with pytest.raises(ValueError, match=r"M must be symmetric"):
        call(np.array([[1.0, 2.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"M must be positive semidefinite"):
        call(np.diag([1.0, -1.0]))
    assert np.all(np.isfinite(call(np.eye(2))))


@pytest.mark.parametrize("mult", [1.0, 1.1, 10.0])
def test_early_stopping_keeps_the_best_validation_iterate(mult):
    """xRFM's rule: stop at the first validation MSE above ``mult`` x the best so far and keep
    the best iterate. The kept machine is checked against an independent plain fit run for
    exactly ``best_iter_`` updates (same computations: equal to the last bit)."""
    D = sparse_parity(12, 2, 500, n_test=300, seed=3)
    Xtr, ytr, Xva, yva = D.X_train[:300], D.y_train[:300], D.X_train[300:], D.y_train[300:]
    kw = {"kernel": "gaussian", "bandwidth": 3.0, "iters": 10, "ridge": 1e-3, "block_size": 0}
    m = RecursiveFeatureMachine(early_stopping=mult, **kw).fit(Xtr, ytr, Xva, yva)
    v = m.history_["val_mse"]
    assert len(v) == m.n_iter_ + 1
    assert m.best_iter_ == int(np.argmin(v))
    best = [min(v[: t + 1]) for t in range(len(v))]
    # no earlier iterate triggered the rule; the last one did, unless all iterations ran
    assert all(v[t] <= mult * best[t - 1] for t in range(1, len(v) - 1))
    assert m.n_iter_ == kw["iters"] or v[-1] > mult * best[-2]
    ref = RecursiveFeatureMachine(**(kw | {"iters": m.best_iter_})).fit(Xtr, ytr)
    np.testing.assert_array_equal(m.M_, ref.M_)
    np.testing.assert_array_equal(m.predict(D.X_test), ref.predict(D.X_test))


def test_early_stopping_refuses_bad_values_and_missing_validation_data():
    D = modular_arithmetic(5, seed=0)
    with pytest.raises(ValueError, match=r"early_stopping must be .*\[1, inf\), got 0\.5"):
        RecursiveFeatureMachine(early_stopping=0.5).fit(D.X_train, D.y_train)
    with pytest.raises(TypeError, match="early_stopping"):
        RecursiveFeatureMachine(early_stopping="1.1").fit(D.X_train, D.y_train)
    with pytest.raises(ValueError, match=r"early_stopping=1\.1 needs validation data"):
        RecursiveFeatureMachine(early_stopping=1.1).fit(D.X_train, D.y_train)


# ------------------------------------------------------------- extreme and malformed arguments
def _parity():
    return modular_arithmetic(5, seed=0)


@pytest.mark.parametrize("arg", ["X", "Y"])
def test_fit_with_overflowing_data_names_it(arg):
    from quadnet._validation import NonFiniteResultError
    ds = _parity()
    data = {"X": ds.X_train, "Y": ds.y_train}
    data[arg] = data[arg] * 1e300
    with pytest.raises(NonFiniteResultError, match=rf"RecursiveFeatureMachine.fit: .* not "
                                                   rf"finite .* for {arg} \(max \|entry\|"):
        RecursiveFeatureMachine(iters=2).fit(data["X"], data["Y"])


@pytest.mark.parametrize("scale, ridge", [(("X", 0.0), 0.0), (("Y", 0.0), 0.0),
                                          (("X", 1e-300), 0.0), (("Y", 1e-300), 0.0),
                                          (None, 1e300)])
def test_fit_with_vanishing_gradients_is_a_value_error_naming_the_data(scale, ridge):
    from quadnet.exceptions import DegenerateFeaturesError
    ds = _parity()
    data = {"X": ds.X_train, "Y": ds.y_train}
    if scale is not None:
        data[scale[0]] = data[scale[0]] * scale[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RFMWarning)
        with pytest.raises(DegenerateFeaturesError, match=r"zero trace .*max \|X\| = .*"
                                                          r"max \|Y\| = .*ridge = "):
            RecursiveFeatureMachine(iters=2, ridge=ridge).fit(data["X"], data["Y"])
    assert issubclass(DegenerateFeaturesError, ValueError)
    assert issubclass(DegenerateFeaturesError, FloatingPointError)   # as before


def test_fit_refuses_an_overflowing_validation_mse():
    ds = _parity()
    with pytest.raises(ValueError, match=r"validation MSE is not finite .* Y_val"):
        RecursiveFeatureMachine(iters=1).fit(ds.X_train, ds.y_train, ds.X_test,
                                             ds.y_test * 1e300)


def test_score_checks_the_columns_and_overflow():
    ds = _parity()
    m = RecursiveFeatureMachine(iters=1).fit(ds.X_train, ds.y_train)
    with pytest.raises(ValueError, match=r"Y must have 5 columns \(the outputs of the fitted "
                                         r"machine\), got 4"):
        m.score(ds.X_train, ds.y_train[:, :-1])
    with pytest.raises(ValueError, match=r"Y must have 5 columns"):
        m.accuracy(ds.X_train, ds.y_train[:, :-1])
    with pytest.raises(ValueError, match=r"score: the sum of squares is not finite .* Y"):
        m.score(ds.X_train, ds.y_train * 1e300)


def test_predict_refuses_a_non_finite_prediction():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 3))
    m = RecursiveFeatureMachine(kernel="exp_inner", iters=0, ridge=1e-3).fit(X, X[:, :1])
    with pytest.raises(ValueError, match=r"prediction at X is not finite .* X \(max"):
        m.predict(X * 1e300)


@pytest.mark.parametrize("fn, kwargs, match", [
    (modular_arithmetic, {"p": 10**9}, r"p = 1000000000: modular_arithmetic needs about"),
    (sparse_parity, {"d": 10**9, "k": 1, "n": 10}, r"d = 1000000000, .*sparse_parity needs"),
    (sparse_parity, {"d": 5, "k": 1, "n": 10**12}, r"n = 1000000000000, .*sparse_parity"),
    (sparse_parity, {"d": 5, "k": 1, "n": 10, "n_test": 10**12}, r"n_test = 10{12}"),
])
def test_data_sets_beyond_the_memory_are_refused_before_allocating(fn, kwargs, match):
    from quadnet._validation import SizeTooLargeError
    with pytest.raises(SizeTooLargeError, match=match):
        fn(**kwargs)
    assert issubclass(SizeTooLargeError, ValueError)


def test_block_circulant_score_is_scale_invariant_up_to_overflow():
    rng = np.random.default_rng(0)
    M = (lambda A: A @ A.T)(rng.standard_normal((6, 6)))
    ref = block_circulant_score(M, 3)
    for s in (1e-300, 1e300):
        assert block_circulant_score(M * s, 3) == pytest.approx(ref, rel=1e-12)
