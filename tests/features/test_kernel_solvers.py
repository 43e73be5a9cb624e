"""Tests of quadnet.features.solvers: the direct and iterative kernel solvers of recursive
feature machines (quadnet theory §6, docs/rfm.md "Kernel solvers")."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc
import warnings

import numpy as np
import pytest

import quadnet.features.kernels as kernels_mod
import quadnet.features.solvers as solvers_mod
from quadnet.exceptions import KernelConvergenceWarning, KernelMemoryError, RFMWarning
from quadnet.features.kernels import KERNELS, kernel_agop, kernel_fact_matrix, kernel_matrix
from quadnet.features.rfm import (
    RecursiveFeatureMachine,
    accuracy,
    modular_arithmetic,
    solve_kernel,
    sparse_parity,
)
from quadnet.features.solvers import (
    available_memory,
    choose_solver,
    fit_kernel_machine,
    kernel_memory_estimate,
    kernel_predict,
    rpcholesky,
)

from _kernel_reference import random_problem


def _rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def _problem(seed=0, n=300, d=6, c=2):
    return random_problem(seed, n, d, c, ridge=0.1)


@pytest.fixture
def small_blocks(monkeypatch):
    """Force many row blocks (and output chunks of the per-point AGOP operand)."""
    monkeypatch.setattr(solvers_mod, "_BLOCK_MAX", 2000)
    monkeypatch.setattr(solvers_mod, "_block_entries", lambda n: 2000)
    monkeypatch.setattr(kernels_mod, "_AX_ELEMS", 500)


# --------------------------------------------------------------------------- direct
# K + λI with λ = 1e-3 and ‖K‖ ≤ n: condition ≤ 3e5, so a backward-stable Cholesky and
# LU (numpy.linalg.solve) agree to ~1e-16 · 3e5 ≈ 3e-11 relative.
@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_direct_matches_dense_reference(kernel):
    X, Y, M = _problem(1, n=300)
    fit = fit_kernel_machine(kernel, X, Y, M, 1.5, ridge=1e-3, solver="direct")
    K = kernel_matrix(kernel, X, X, M, 1.5)
    A_ref = np.linalg.solve(K + 1e-3 * np.eye(len(X)), Y)
    assert fit.info.solver == "direct" and fit.info.jitter == 0
    assert _rel(fit.coef, A_ref) < 1e-10
    assert _rel(fit.train_pred, K @ A_ref) < 1e-10  # Y − λA = K A


@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("centre", [False, True])
def test_blocked_fact_and_agop_match_closed_forms(kernel, centre, small_blocks):
    # n ≤ c·d: the direct solver takes the Gram route, the iterative one the per-point route
    # (chunked over outputs by the small _AX_ELEMS); n > c·d: per-point for both.
    for n, c in ((40, 8), (120, 1)):
        X, Y, M = _problem(2, n=n, d=6, c=c)
        F_ref = A = None
        for solver, kw in (("direct", {}), ("iterative", {"storage": "recompute"})):
            fit = fit_kernel_machine(kernel, X, Y, M, 1.5, ridge=1e-2, solver=solver,
                                     agop="centred" if centre else "plain", **kw)
            A = fit.coef
            F_ref = kernel_fact_matrix(kernel, X, A, M, 1.5)
            G_ref = kernel_agop(kernel, X, A, M, 1.5, centre=centre)
            # same A on both sides: only the summation order (and, at n = 40 for the
            # iterative fit, the route: per-point against the reference's Gram route) differ;
            # the quadratic kernel's coefficients (|a| ~ 60 at λ = 1e-2) cancel in the sums, so
            # agreement is to ~1e4 ulps of the result rather than a few
            assert _rel(fit.fact, F_ref) < 1e-11, (solver, n)
            assert _rel(fit.agop, G_ref) < 1e-11, (solver, n)


def test_direct_ridgeless_jitter_rebuilds_in_place():
    X = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])  # duplicate rows: K singular
    Y = np.array([[1.0], [1.0], [-1.0]])
    with pytest.warns(RFMWarning, match="jitter"):
        fit = fit_kernel_machine("gaussian", X, Y, np.eye(2), 1.0, solver="direct")
    assert fit.info.jitter > 0
    K = kernel_matrix("gaussian", X, X, np.eye(2), 1.0)
    np.testing.assert_allclose(fit.train_pred, K @ fit.coef, atol=1e-12)


def test_solve_kernel_alias_leaves_K_intact():
    X, Y, M = _problem(3, n=100)
    K = kernel_matrix("gaussian", X, X, M, 1.0)
    K0 = K.copy()
    A = solve_kernel(K, Y, 1e-3)
    assert np.array_equal(K, K0)
    assert _rel(A, np.linalg.solve(K + 1e-3 * np.eye(100), Y)) < 1e-10


@pytest.mark.parametrize("n, arrays", [(3000, 1), (2000, 2)])
def test_direct_peak_memory_is_one_kernel_matrix_or_two_while_k_is_kept(n, arrays):
    """Peak numpy allocation of a direct fit: the n x n float64 array (8 n² bytes; two of them
    below KEEP_KERNEL_BYTES, K kept beside its factor) plus row-block temporaries of n²/32
    entries each -- at most ~8 alive at once (kernel block, α block, A_b Aᵀ, W, W X, ...) =
    0.25 · 8n² -- plus O(n(d + c)) vectors: below (arrays + 0.3) · 8n²; the memory model
    (kernel_memory_estimate) bounds it."""
    ds = sparse_parity(50, 3, n, n_test=10, seed=0)
    X, Y = ds.X_train, ds.y_train
    assert (8 * n * n <= solvers_mod.KEEP_KERNEL_BYTES) == (arrays == 2)
    tracemalloc.start()
    try:
        fit_kernel_machine("gaussian", X, Y, np.eye(50), 7.0, ridge=1e-3, solver="direct")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert arrays * 8 * n * n <= peak <= (arrays + 0.3) * 8 * n * n, peak / (8 * n * n)
    assert kernel_memory_estimate(n, 50, 1, "direct") >= peak


_KEEP_CASES = [("mod", dict(kernel="gaussian", bandwidth=2.5, update="nfa")),      # Gram route
               ("mod", dict(kernel="exp_inner", bandwidth=3.0, update="fact")),
               ("mod", dict(kernel="laplace", bandwidth=2.5, update="fact")),     # not kept
               ("parity", dict(kernel="gaussian", bandwidth=5.0, update="nfa")),  # per point
               ("parity", dict(kernel="gaussian", bandwidth=5.0, update="fact"))]


@pytest.mark.parametrize("data, cfg", _KEEP_CASES, ids=[f"{d}-{c['kernel']}-{c['update']}"
                                                        for d, c in _KEEP_CASES])
def test_the_kept_kernel_gives_the_same_bits_and_forms_the_kernel_once(monkeypatch, data, cfg):
    """docs/rfm.md: below KEEP_KERNEL_BYTES the direct solver keeps K and reads the passes
    after the solve from it: the fit is bit-identical to recomputing, and the training kernel
    is formed once per iteration instead of twice (Gaussian, exponential inner product)."""
    ds = (modular_arithmetic(13, "add", 0.5, seed=0) if data == "mod"
          else sparse_parity(20, 3, 300, n_test=10, seed=1))
    n = ds.X_train.shape[0]
    calls = []
    block = kernels_mod.KernelRows.block

    def counted(self, Z, rows=None, want_alpha=True):
        calls.append(Z.shape[0] if self.n == n and rows is not None else 0)
        return block(self, Z, rows, want_alpha)

    monkeypatch.setattr(kernels_mod.KernelRows, "block", counted)
    out = {}
    for keep in (solvers_mod.KEEP_KERNEL_BYTES, 0):
        monkeypatch.setattr(solvers_mod, "KEEP_KERNEL_BYTES", keep)
        calls.clear()
        m = RecursiveFeatureMachine(iters=3, **cfg).fit(ds.X_train, ds.y_train)
        out[keep] = (m.M_, m.coef_, sum(calls) / n)   # training kernel rows formed, / n
    (M1, A1, rows1), (M0, A0, rows0) = out.values()
    assert np.array_equal(M1, M0) and np.array_equal(A1, A0)
    if cfg["kernel"] == "laplace":   # 4 solves (iters + 1), each a fill and a feature pass
        assert rows1 == rows0 == 2 * 4
    else:
        assert (rows1, rows0) == (4, 2 * 4)


# --------------------------------------------------------------------------- iterative
# Agreement target of docs/rfm.md: predictions within 1e-6 relative of the float64 direct
# solve at n = 2,000 with a ridge. Both storages reach their exact float64 residual tolerance
# (1e-8 float32 with refinement, 1e-10 recompute); with ‖(K + λI)⁻¹‖ ≤ 1/λ the prediction
# error K δa is at most ~tol · ‖y‖ · ‖K‖/λ in the worst direction, in practice ~tol.
def test_iterative_agrees_with_direct_on_sparse_parity():
    ds = sparse_parity(50, 2, 2000, n_test=500, seed=1)
    kw = dict(kernel="gaussian", bandwidth=7.0, ridge=1e-3, iters=1)
    direct = RecursiveFeatureMachine(solver="direct", **kw).fit(ds.X_train, ds.y_train)
    it = RecursiveFeatureMachine(solver="iterative", storage="float32", **kw).fit(
        ds.X_train, ds.y_train)
    for info in it.solver_info_:
        assert info.solver == "iterative" and info.storage == "float32" and info.converged
        assert info.residual <= info.tol
    Pd, Pi = direct.predict(ds.X_test), it.predict(ds.X_test)
    assert _rel(Pi, Pd) <= 1e-6
    assert accuracy(Pi, ds.y_test) == accuracy(Pd, ds.y_test)
    assert direct.accuracy(ds.X_test, ds.y_test) > 0.9  # k = 2 is learned at this n


def test_recompute_storage_agrees_with_direct():
    ds = sparse_parity(50, 2, 2000, n_test=500, seed=1)
    X, Y, M = ds.X_train, ds.y_train, np.eye(50)
    d = fit_kernel_machine("gaussian", X, Y, M, 7.0, ridge=1e-3, solver="direct")
    r = fit_kernel_machine("gaussian", X, Y, M, 7.0, ridge=1e-3, solver="iterative",
                           storage="recompute", tol=1e-9)
    assert r.info.converged and r.info.residual <= 1e-9
    assert _rel(r.train_pred, d.train_pred) <= 1e-8
    assert _rel(r.fact, d.fact) <= 1e-8


def test_iterative_agrees_with_direct_on_modular_arithmetic():
    ds = modular_arithmetic(61, "add", 0.55, seed=0)  # n = 2,047, c = 61 outputs
    kw = dict(kernel="exp_inner", bandwidth=3.0, ridge=1e-3, iters=1)
    direct = RecursiveFeatureMachine(solver="direct", **kw).fit(ds.X_train, ds.y_train)
    it = RecursiveFeatureMachine(solver="iterative", storage="float32", **kw).fit(
        ds.X_train, ds.y_train)
    assert all(i.converged for i in it.solver_info_)
    Pd, Pi = direct.predict(ds.X_test), it.predict(ds.X_test)
    assert _rel(Pi, Pd) <= 1e-6
    assert np.array_equal(Pi.argmax(1), Pd.argmax(1))


def test_nonconvergence_warns_and_records():
    X, Y, M = _problem(4, n=400)
    with pytest.warns(KernelConvergenceWarning, match="max_iter = 2"):
        fit = fit_kernel_machine("gaussian", X, Y, M, 1.0, ridge=1e-6, solver="iterative",
                                 storage="recompute", rank=5, max_iter=2, tol=1e-12)
    assert not fit.info.converged and fit.info.iterations == 2
    assert fit.info.residual > 1e-12


def test_rpcholesky_pivots_reproducible_and_accurate():
    X, _, M = _problem(5, n=300)
    F1, S1 = rpcholesky("gaussian", X, M, 1.0, 80, seed=7)
    F2, S2 = rpcholesky("gaussian", X, M, 1.0, 80, seed=7)
    _, S3 = rpcholesky("gaussian", X, M, 1.0, 80, seed=8)
    assert np.array_equal(S1, S2) and np.array_equal(F1, F2)
    assert not np.array_equal(S1, S3)
    K = kernel_matrix("gaussian", X, X, M, 1.0)
    R = K - F1 @ F1.T
    assert np.linalg.eigvalsh(R).min() > -1e-10  # a Nyström approximation: K − FFᵀ ⪰ 0
    F4, _ = rpcholesky("gaussian", X, M, 1.0, 160, seed=7)
    assert np.trace(K - F4 @ F4.T) < 0.1 * np.trace(R) < 0.01 * np.trace(K)


def test_rfm_iterative_is_reproducible_for_a_seed():
    ds = sparse_parity(10, 2, 400, n_test=20, seed=0)
    kw = dict(ridge=1e-3, iters=1, solver="iterative", preconditioner_rank=50, bandwidth=3.0)
    a = RecursiveFeatureMachine(seed=3, **kw).fit(ds.X_train, ds.y_train)
    b = RecursiveFeatureMachine(seed=3, **kw).fit(ds.X_train, ds.y_train)
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.M_, b.M_)


# --------------------------------------------------------------------------- memory model
def test_memory_estimates_and_choice():
    n = 50_000
    assert kernel_memory_estimate(n, 50, 1, "iterative", storage="float32") <= 12e9
    assert kernel_memory_estimate(n, 50, 1, "direct") >= 8 * n * n
    assert kernel_memory_estimate(20_000, 50, 1, "direct") <= 4.5e9
    plan = choose_solver(n, 50, 1, ridge=1e-3, memory_limit=16e9)
    assert (plan.solver, plan.storage) == ("iterative", "float32")
    plan = choose_solver(n, 50, 1, ridge=1e-3, memory_limit=5e9)
    assert (plan.solver, plan.storage) == ("iterative", "recompute")
    assert choose_solver(2000, 50, 1, ridge=1e-3, memory_limit=1e9).solver == "direct"
    assert choose_solver(2000, 50, 1, ridge=0.0, memory_limit=1e9).solver == "direct"


def test_auto_refuses_before_allocating():
    ds = sparse_parity(50, 3, 5000, n_test=10, seed=0)
    m = RecursiveFeatureMachine(ridge=1e-3, memory_limit=10**6)
    tracemalloc.start()
    try:
        with pytest.raises(KernelMemoryError, match=r"n = 5000 .* GB.* memory limit 0\.001 GB"):
            m.fit(ds.X_train, ds.y_train)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * ds.X_train.nbytes  # the input checks, nowhere near 8 n² = 200 MB
    # a million points, ridgeless (direct only) with the machine's memory: refused
    X = np.zeros((10**6, 2))
    X[:, 0] = np.arange(10**6)
    with pytest.raises(KernelMemoryError, match=r"n = 1000000 .*8e\+03 GB") as err:
        RecursiveFeatureMachine().fit(X, np.ones(10**6))
    assert isinstance(err.value, MemoryError) and isinstance(err.value, ValueError)
    assert err.value.n == 10**6 and err.value.estimate >= 8e12


def test_available_memory_honours_ulimit():
    assert 0 < available_memory()
    code = ("import resource; from quadnet.features.solvers import available_memory; "
            "s, h = resource.getrlimit(resource.RLIMIT_AS); "
            "resource.setrlimit(resource.RLIMIT_AS, (3 * 10**9, h)); print(available_memory())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    assert 0 < int(out) < 3 * 10**9


# --------------------------------------------------------------------------- prediction
def test_predict_in_blocks_matches_kernel_matrix(small_blocks):
    X, Y, M = _problem(6, n=150)
    Z = np.random.default_rng(0).standard_normal((333, 6))
    for kernel in KERNELS:
        P = kernel_predict(kernel, Z, X, Y, M, 1.3)
        np.testing.assert_allclose(P, kernel_matrix(kernel, Z, X, M, 1.3) @ Y, rtol=1e-12,
                                   atol=1e-12 * np.abs(P).max())


def test_progress_lines_on_stderr_when_no_terminal(capfd):
    ds = sparse_parity(8, 2, 200, n_test=10, seed=0)
    RecursiveFeatureMachine(iters=2, ridge=1e-3, progress=True).fit(ds.X_train, ds.y_train)
    err = capfd.readouterr().err
    assert "[quadnet] RFM (direct, n = 200)" in err
    RecursiveFeatureMachine(iters=1, ridge=1e-3).fit(ds.X_train, ds.y_train)  # small: quiet
    assert capfd.readouterr().err == ""


# --------------------------------------------------------------------------- bad input
def test_bad_input():
    X, Y = np.eye(4), np.ones((4, 1))
    with pytest.raises(ValueError, match="solver must be one of"):
        RecursiveFeatureMachine(solver="cholesky").fit(X, Y)
    with pytest.raises(TypeError, match="solver must be one of 'auto', 'direct', 'iterative', got int"):
        RecursiveFeatureMachine(solver=3).fit(X, Y)
    with pytest.raises(ValueError, match="memory_limit must be a finite number of bytes > 0"):
        RecursiveFeatureMachine(memory_limit=-1).fit(X, Y)
    with pytest.raises(TypeError, match="memory_limit must be a number of bytes"):
        RecursiveFeatureMachine(memory_limit="8GB").fit(X, Y)
    with pytest.raises(ValueError, match="ridge = 0 .* needs ridge > 0.*ill-posed"):
        RecursiveFeatureMachine(solver="iterative").fit(X, Y)
    with pytest.raises(ValueError, match="needs ridge > 0"):
        fit_kernel_machine("gaussian", X, Y, np.eye(4), 1.0, solver="iterative")
    with pytest.raises(ValueError, match="storage must be one of"):
        RecursiveFeatureMachine(storage="float16").fit(X, Y)
    with pytest.raises(ValueError, match="tol must be finite and > 0"):
        RecursiveFeatureMachine(tol=-1.0).fit(X, Y)
    with pytest.raises(ValueError, match="preconditioner_rank must be >= 1"):
        RecursiveFeatureMachine(preconditioner_rank=0).fit(X, Y)
    with pytest.raises(ValueError, match="cg_max_iter must be >= 1"):
        RecursiveFeatureMachine(cg_max_iter=0).fit(X, Y)
    with pytest.raises(TypeError, match="progress must be a bool"):
        RecursiveFeatureMachine(progress="yes").fit(X, Y)
    with pytest.raises(ValueError, match="seed must be an int >= 0"):
        RecursiveFeatureMachine(seed=-2).fit(X, Y)
    # non-finite X and Y with the iterative solver: test_rfm.test_fit_names_non_finite_data
    with pytest.raises(ValueError, match=r"Y has n = 3, but X has n = 4 \(mismatched shapes\)"):
        fit_kernel_machine("gaussian", X, np.ones(3), np.eye(4), 1.0)
    with pytest.raises(ValueError, match="agop must be"):
        fit_kernel_machine("gaussian", X, Y, np.eye(4), 1.0, agop="yes")
    with pytest.raises(ValueError, match="rank must be >= 1"):
        rpcholesky("gaussian", X, np.eye(4), 1.0, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RecursiveFeatureMachine(memory_limit=2**33, solver="direct").fit(X, Y)  # valid


@pytest.mark.parametrize("kernel", ["gaussian", "laplace", "exp_inner", "quadratic"])
def test_threaded_kernel_rows_are_bit_identical_to_one_thread(kernel, default_blas_threads):
    """Large blocks split the elementwise formula over threads and into cache-sized chunks of
    rows; every entry goes through the same operations, so K and alpha equal the values of
    the whole block at once exactly (not to a tolerance).
    Both routes get the same Gram block: the BLAS product itself may round differently with
    another thread count (OpenBLAS's single-thread small-matrix kernels), which is not the
    claim. The whole row block is then compared across thread counts to rounding level."""
    from threadpoolctl import threadpool_limits

    from quadnet._threads import single_threaded
    from quadnet.features.kernels import (_THREAD_MIN_ENTRIES, KernelRows, _from_gram,
                                          _from_gram_threaded)

    rng = np.random.default_rng(3)
    X = rng.standard_normal((2100, 6)) / 3
    X[5] = X[7]  # a repeated point: the Laplace distance-zero branch in one chunk
    M = np.eye(6) + 0.1
    rows = _THREAD_MIN_ENTRIES // 2100 + 3
    G = X[:rows] @ M @ X.T
    xx = np.einsum("ij,jk,ik->i", X, M, X)
    translation = kernel in ("gaussian", "laplace")
    zz, xs = (xx[:rows], xx) if translation else (None, None)
    with threadpool_limits(limits=2, user_api="blas"):
        K2, a2 = _from_gram_threaded(kernel, G.copy(), zz, xs, 2.0, True)
    with single_threaded():  # one thread, still in cache-sized chunks of rows
        K3, a3 = _from_gram_threaded(kernel, G.copy(), zz, xs, 2.0, True)
    K1, a1 = _from_gram(kernel, G.copy(), zz, xs, 2.0, True)   # the whole block at once
    assert np.array_equal(K1, K2) and np.array_equal(a1, a2)
    assert np.array_equal(K1, K3) and np.array_equal(a1, a3)
    assert np.all(np.isfinite(K2)) and np.all(np.isfinite(a2))
    kr = KernelRows(kernel, X, M, 2.0)
    with threadpool_limits(limits=2, user_api="blas"):
        R2, b2 = kr.rows(slice(0, rows))
    with single_threaded():
        R1, b1 = kr.rows(slice(0, rows))
    np.testing.assert_allclose(R2, R1, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(b2, b1, rtol=1e-13, atol=1e-15)


# --------------------------------------------------------------------------- feature_tol
def _dense_residual(m, X, Y, ridge):
    """‖(K + λI)a − y‖/‖y‖ of a fitted machine, from an independent dense kernel matrix."""
    K = kernel_matrix(m.kernel, X, X, m.M_, m.bandwidth)
    return np.linalg.norm(K @ m.coef_ + ridge * m.coef_ - Y) / np.linalg.norm(Y)


@pytest.mark.parametrize("early", [False, True])
def test_feature_tol_loosens_only_the_solves_that_feed_the_next_M(early):
    ds = sparse_parity(20, 2, 900, n_test=200, seed=2)
    X, Y, Xv, Yv = ds.X_train[:700], ds.y_train[:700], ds.X_train[700:], ds.y_train[700:]
    kw = dict(kernel="gaussian", bandwidth=4.0, ridge=1e-3, iters=4, solver="iterative",
              preconditioner_rank=60, block_size=0, early_stopping=1.1 if early else None)
    args = (X, Y, Xv, Yv) if early else (X, Y)
    tight = RecursiveFeatureMachine(**kw).fit(*args)
    loose = RecursiveFeatureMachine(feature_tol=1e-3, **kw).fit(*args)
    fits = loose.n_iter_ + 1
    infos = loose.solver_info_
    assert len(infos) == fits + (1 if early else 0)
    feed = infos[:fits] if early else infos[:-1]
    assert all(i.converged and i.tol == 1e-3 and i.residual <= 1e-3 for i in feed)
    assert infos[-1].tol == 1e-8 and infos[-1].residual <= 1e-8
    # the kept coefficients solve the kept system to tol (independent dense check)
    assert _dense_residual(loose, X, Y, 1e-3) <= 1.5e-8
    # fewer CG products in the loose solves than in the tight ones
    assert sum(i.iterations for i in feed) < sum(i.iterations for i in tight.solver_info_[:len(feed)])
    assert loose.accuracy(ds.X_test, ds.y_test) == tight.accuracy(ds.X_test, ds.y_test)


def test_feature_tol_none_is_the_default_fit_and_bad_values_are_refused():
    ds = sparse_parity(10, 2, 300, n_test=20, seed=0)
    kw = dict(ridge=1e-3, iters=2, solver="iterative", preconditioner_rank=40, bandwidth=3.0)
    a = RecursiveFeatureMachine(**kw).fit(ds.X_train, ds.y_train)
    b = RecursiveFeatureMachine(feature_tol=None, **kw).fit(ds.X_train, ds.y_train)
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.M_, b.M_)
    for bad in (0.0, 1.0, float("nan")):
        with pytest.raises(ValueError, match=r"feature_tol must be a finite real number in \(0, 1\)"):
            RecursiveFeatureMachine(feature_tol=bad).fit(ds.X_train, ds.y_train)
    with pytest.raises(TypeError, match="feature_tol"):
        RecursiveFeatureMachine(feature_tol="1e-4").fit(ds.X_train, ds.y_train)


# ------------------------------------------------------------- extreme and malformed arguments
def _kernel_calls():
    """Every public kernel function as ``f(bandwidth=..., M=..., X=...)`` on a small problem."""
    from quadnet.features.kernels import input_gradients
    rng = np.random.default_rng(0)
    X0, a0 = rng.standard_normal((8, 3)), rng.standard_normal(8)
    def call(name, bandwidth=1.0, M=np.eye(3), X=X0, coef=a0, Y=a0):
        return {
            "kernel_matrix": lambda: kernel_matrix("gaussian", X, X, M, bandwidth),
            "input_gradients": lambda: input_gradients("gaussian", X, X, coef, M, bandwidth),
            "kernel_fact_matrix": lambda: kernel_fact_matrix("gaussian", X, coef, M, bandwidth),
            "kernel_agop": lambda: kernel_agop("gaussian", X, coef, M, bandwidth),
            "fit_kernel_machine": lambda: fit_kernel_machine("gaussian", X, Y, M, bandwidth,
                                                             ridge=1e-3),
            "kernel_predict": lambda: kernel_predict("gaussian", X, X, coef, M, bandwidth),
            "rpcholesky": lambda: rpcholesky("gaussian", X, M, bandwidth, 4),
            "RecursiveFeatureMachine.fit": lambda: RecursiveFeatureMachine(
                iters=1, bandwidth=bandwidth).fit(X, Y[:, None]),
        }[name]()
    return call


KERNEL_FUNCTIONS = ["kernel_matrix", "input_gradients", "kernel_fact_matrix", "kernel_agop",
                    "fit_kernel_machine", "kernel_predict", "rpcholesky",
                    "RecursiveFeatureMachine.fit"]


@pytest.mark.parametrize("name", KERNEL_FUNCTIONS)
@pytest.mark.parametrize("bandwidth", [1e300, 1e-300, 1e76, 1e-76])
def test_bandwidth_outside_the_float64_range_is_refused_naming_it(name, bandwidth):
    """L^4 (quadratic kernel) is a normal float64 only for 1e-77 < L < 1e77: refused outside
    [1e-75, 1e75] instead of an OverflowError / ZeroDivisionError."""
    with pytest.raises(ValueError, match=r"bandwidth must be a finite real number in "
                                         r"\[1e-75, 1e\+75\]"):
        _kernel_calls()(name, bandwidth=bandwidth)


@pytest.mark.parametrize("name", KERNEL_FUNCTIONS[:7])
def test_bandwidth_range_ends_are_usable(name):
    for L in (1e-75, 1e75):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RFMWarning)
            _kernel_calls()(name, bandwidth=L)   # no exception, finite results checked inside


@pytest.mark.parametrize("name", KERNEL_FUNCTIONS[:7])
@pytest.mark.parametrize("M, match", [
    (np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]), r"M must be symmetric"),
    (-np.eye(3), r"M must be positive semidefinite"),
    (np.diag([1.0, -1.0, 1.0]), r"M must be positive semidefinite"),
])
def test_every_kernel_function_refuses_the_same_bad_metric(name, M, match):
    with pytest.raises(ValueError, match=match):
        _kernel_calls()(name, M=M)


@pytest.mark.parametrize("name", ["kernel_fact_matrix", "kernel_agop", "fit_kernel_machine"])
def test_overflowing_data_raises_naming_the_argument(name):
    from quadnet._validation import NonFiniteResultError
    X = np.random.default_rng(1).standard_normal((8, 3)) * 1e300
    with pytest.raises(NonFiniteResultError, match=r"non-finite result.*X \(max \|entry\|"):
        _kernel_calls()(name, X=X)


def test_rpcholesky_lapack_failure_names_x():
    X = np.random.default_rng(1).standard_normal((8, 3)) * 1e300
    with pytest.raises(ValueError, match=r"X \(max \|entry\| [0-9.e+]+\)"):
        rpcholesky("gaussian", X, np.eye(3), 1.0, 4)


@pytest.mark.parametrize("fn", [kernel_memory_estimate, choose_solver])
def test_sizing_functions_check_rank_and_agop(fn):
    with pytest.raises(ValueError, match=r"rank must be >= 1, got -1"):
        fn(100, 5, 1, rank=-1)
    with pytest.raises(TypeError, match=r"rank must be an integer, got float"):
        fn(100, 5, 1, rank=2.5)
    with pytest.raises(TypeError, match=r"agop must be a bool, got ndarray"):
        fn(100, 5, 1, agop=np.array([True, False]))
    with pytest.raises(TypeError, match=r"agop must be a bool, got str"):
        fn(100, 5, 1, agop="False")


def test_kernel_agop_centre_must_be_a_bool():
    X = np.eye(3)
    with pytest.raises(TypeError, match=r"centre must be a bool, got ndarray"):
        kernel_agop("gaussian", X, np.ones(3), np.eye(3), 1.0, centre=np.array([True, False]))
    with pytest.raises(TypeError, match=r"centre must be a bool, got NoneType"):
        kernel_agop("gaussian", X, np.ones(3), np.eye(3), 1.0, centre=None)
@pytest.mark.parametrize("solver", ["direct", "iterative"])
def test_solver_info_is_a_frozen_record(solver):
    """The SolverInfo a fit returns cannot be changed afterwards (its history is a tuple)."""
    import dataclasses

    from quadnet.features.solvers import SolverInfo, fit_kernel_machine

    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 4))
    fit = fit_kernel_machine("laplace", X, X[:, 0], np.eye(4), 2.0, ridge=1e-3, solver=solver,
                             tol=1e-8 if solver == "iterative" else None)
    info = fit.info
    assert type(info) is SolverInfo and isinstance(info.history, tuple)
    assert (len(info.history) > 0) == (solver == "iterative")
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field"):
        info.iterations = 0
