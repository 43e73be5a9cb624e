"""Properties of the public functions of quadnet.features.solvers against independent
references (mutation testing): the memory model written out term by term from the arrays
each solver allocates, the documented rule of ``choose_solver`` at its boundaries with its
messages, dense numpy solves of ``(K + λI)A = Y`` for every solver route, FACT / AGOP from
finite differences of the kernel machine, and RPCholesky's first pivots drawn by hand."""

from __future__ import annotations

import re

import numpy as np
import pytest

import quadnet.features.solvers as solvers_mod
from quadnet.exceptions import KernelConvergenceWarning, KernelMemoryError
from quadnet.features.solvers import (
    DIRECT_MAX_N,
    available_memory,
    choose_solver,
    default_rank,
    fit_kernel_machine,
    kernel_memory_estimate,
    kernel_predict,
    rpcholesky,
)

from _kernel_reference import fd_grads, kern, random_problem

# ------------------------------------------------------------------ hand-written references


def _block(n):
    return max(n, min(n * n // 32, 2**22))


def _k_default(n):
    return min(n, max(1000, n // 16))


def _estimate(n, d, c, solver, storage="float32", rank=None, agop=False):
    """Peak bytes from the arrays: the n × n kernel (float64 direct, float32 stored; direct
    with its kept copy while that copy is at most KEEP_KERNEL_BYTES),
    the n × k factor and the k × k Woodbury matrix (float64), eight row blocks of b entries,
    the data / coefficients / CG vectors ``n(d + 8c)``, the per-point AGOP operand and its
    block."""
    b = _block(n)

    def nbytes(*shape, dt=np.float64):
        return int(np.prod(shape)) * np.dtype(dt).itemsize

    est = 8 * nbytes(b) + nbytes(n, d + 8 * c)
    if agop:
        est += nbytes(min(n * c * d, 2**24)) + nbytes(b // n + 1, c, d)
    if solver == "direct":
        kept = nbytes(n, n) if nbytes(n, n) <= solvers_mod.KEEP_KERNEL_BYTES else 0
        return est + nbytes(n, n) + kept
    k = min(n, _k_default(n) if rank is None else rank)
    est += nbytes(n, k) + nbytes(k, k)
    return est + (nbytes(n, n, dt=np.float32) if storage == "float32" else 0)


def _gb(x):
    return f"{x / 1e9:.3g} GB"


def _problem(seed=0, n=60, d=3, c=2):
    return random_problem(seed, n, d, c, ridge=0.2)


def _gaussian_gram(seed, L):
    """40 Gaussian points in the plane, the identity metric and their Gaussian kernel
    matrix of bandwidth ``L`` by hand."""
    X = np.random.default_rng(seed).standard_normal((40, 2))
    M = np.eye(2)
    return X, M, kern("gaussian", X, X, M, L)


# ------------------------------------------------------------------ default_rank


@pytest.mark.parametrize("n", [1, 2, 999, 1000, 1001, 15999, 16000, 16015, 16016, 16032,
                               50_000, 10**6])
def test_default_rank_is_min_n_max_1000_n_over_16(n):
    assert default_rank(n) == min(n, max(1000, n // 16))
    assert type(default_rank(n)) is int


def test_default_rank_refuses_zero():
    with pytest.raises(ValueError, match="n"):
        default_rank(0)


# ------------------------------------------------------------------ kernel_memory_estimate

_SIZES = [(1, 1, 1), (31, 2, 1), (32, 5, 3), (33, 5, 3), (1000, 50, 1), (4096, 4096, 1),
          (4096, 4097, 1), (11585, 10, 2), (11586, 10, 2), (20_000, 50, 1), (50_000, 7, 4),
          (100, 1000, 200)]


@pytest.mark.parametrize("n,d,c", _SIZES)
@pytest.mark.parametrize("agop", [False, True])
def test_memory_estimate_matches_the_allocated_arrays(n, d, c, agop):
    assert kernel_memory_estimate(n, d, c, "direct", agop=agop) == _estimate(
        n, d, c, "direct", agop=agop)
    assert kernel_memory_estimate(n, d, c, agop=agop) == _estimate(n, d, c, "direct", agop=agop)
    for storage in ("float32", "recompute"):
        for rank in (None, 1, 7, 2 * n + 3):
            got = kernel_memory_estimate(n, d, c, "iterative", storage=storage, rank=rank,
                                         agop=agop)
            assert got == _estimate(n, d, c, "iterative", storage, rank, agop), (storage, rank)
            assert type(got) is int
    # the float32 default storage
    assert kernel_memory_estimate(n, d, c, "iterative", agop=agop) == _estimate(
        n, d, c, "iterative", "float32", None, agop)


def test_memory_estimate_of_the_docstring_and_its_ordering():
    assert round(kernel_memory_estimate(20_000, 50, 1, "direct") / 1e9, 2) == 3.48
    n = 50_000
    f32 = kernel_memory_estimate(n, 50, 1, "iterative")
    rec = kernel_memory_estimate(n, 50, 1, "iterative", storage="recompute")
    assert f32 - rec == 4 * n * n
    assert kernel_memory_estimate(n, 50, 1, "direct") - rec == 8 * n * n - 8 * n * 3125 - 8 * 3125**2


def test_memory_estimate_refuses_unknown_solver():
    with pytest.raises(ValueError, match="solver"):
        kernel_memory_estimate(10, 2, 1, "auto")


# ------------------------------------------------------------------ choose_solver


def _plan(plan):
    return plan.solver, plan.storage, plan.estimate, plan.limit


def test_auto_takes_direct_up_to_direct_max_n_then_float32():
    big = 10**15
    n = DIRECT_MAX_N
    direct = _estimate(n, 5, 1, "direct")
    p = choose_solver(n, 5, 1, ridge=1e-3, memory_limit=big)
    assert _plan(p) == ("direct", "float64", direct, big)
    assert p.reason == (f"direct Cholesky, n = {n} <= DIRECT_MAX_N = {DIRECT_MAX_N}; "
                        f"estimate {_gb(direct)} <= memory limit {_gb(big)}")
    n += 1
    f32 = _estimate(n, 5, 1, "iterative", "float32")
    p = choose_solver(n, 5, 1, ridge=1e-3, memory_limit=big)
    assert _plan(p) == ("iterative", "float32", f32, big)
    assert p.reason == (f"PCG with float32 kernel storage; estimate {_gb(f32)} <= "
                        f"memory limit {_gb(big)}")
    # ridge = 0: the direct solver whatever n
    direct = _estimate(n, 5, 1, "direct")
    p = choose_solver(n, 5, 1, ridge=0.0, memory_limit=big)
    assert _plan(p) == ("direct", "float64", direct, big)
    assert p.reason == (f"direct Cholesky, ridge = 0 (the iterative solver needs a ridge); "
                        f"estimate {_gb(direct)} <= memory limit {_gb(big)}")
    assert choose_solver(n, 5, 1, memory_limit=big).solver == "direct"   # default ridge 0


def test_requested_solvers_and_storages():
    big = 10**12
    p = choose_solver(50, 3, 2, solver="direct", ridge=1.0, memory_limit=big)
    assert _plan(p) == ("direct", "float64", _estimate(50, 3, 2, "direct"), big)
    assert p.reason.startswith("direct Cholesky, requested; estimate ")
    p = choose_solver(50, 3, 2, solver="iterative", ridge=1.0, memory_limit=big)
    assert _plan(p) == ("iterative", "float32", _estimate(50, 3, 2, "iterative"), big)
    p = choose_solver(50, 3, 2, solver="iterative", ridge=1.0, memory_limit=big,
                      storage="recompute", rank=7, agop=True)
    assert _plan(p) == ("iterative", "recompute",
                        _estimate(50, 3, 2, "iterative", "recompute", 7, True), big)
    assert p.reason == (f"PCG with recompute kernel storage; estimate "
                        f"{_gb(p.estimate)} <= memory limit {_gb(big)}")
    n = DIRECT_MAX_N + 1
    p = choose_solver(n, 3, 2, ridge=1.0, memory_limit=big, storage="recompute", rank=5)
    assert _plan(p) == ("iterative", "recompute", _estimate(n, 3, 2, "iterative", "recompute", 5),
                        big)
    p = choose_solver(60, 3, 2, solver="direct", memory_limit=big, agop=True)
    assert p.estimate == _estimate(60, 3, 2, "direct", agop=True)
    assert p.estimate > _estimate(60, 3, 2, "direct")


def test_auto_falls_back_along_the_memory_limit():
    n, d, c = 5000, 20, 1
    direct = _estimate(n, d, c, "direct")
    f32 = _estimate(n, d, c, "iterative", "float32")
    rec = _estimate(n, d, c, "iterative", "recompute")
    assert rec < f32 < direct
    assert _plan(choose_solver(n, d, c, ridge=1e-3, memory_limit=direct)) == (
        "direct", "float64", direct, direct)
    assert _plan(choose_solver(n, d, c, ridge=1e-3, memory_limit=direct - 1)) == (
        "iterative", "float32", f32, direct - 1)
    assert _plan(choose_solver(n, d, c, ridge=1e-3, memory_limit=f32)) == (
        "iterative", "float32", f32, f32)
    assert _plan(choose_solver(n, d, c, ridge=1e-3, memory_limit=f32 - 1)) == (
        "iterative", "recompute", rec, f32 - 1)
    assert _plan(choose_solver(n, d, c, ridge=1e-3, memory_limit=rec)) == (
        "iterative", "recompute", rec, rec)
    assert _plan(choose_solver(n, d, c, ridge=1e-3, memory_limit=float(rec) + 0.5)) == (
        "iterative", "recompute", rec, rec)
    lim = rec - 1
    msg = (f"a kernel problem with n = {n} centres needs at least {_gb(rec)} "
           f"(direct {_gb(direct)}, iterative/float32 {_gb(f32)}, iterative/recompute "
           f"{_gb(rec)}), over the memory limit {_gb(lim)}")
    with pytest.raises(KernelMemoryError, match=re.escape(msg) + "$") as exc:
        choose_solver(n, d, c, ridge=1e-3, memory_limit=lim)
    assert (exc.value.n, exc.value.estimate, exc.value.limit) == (n, rec, lim)


def test_auto_direct_when_the_iterative_solver_does_not_fit():
    n, d, c = DIRECT_MAX_N + 1, 4, 1
    direct = _estimate(n, d, c, "direct")
    f32 = _estimate(n, d, c, "iterative", "float32", n)
    rec = _estimate(n, d, c, "iterative", "recompute", n)
    assert direct < rec < f32
    p = choose_solver(n, d, c, ridge=1e-3, memory_limit=direct, rank=n)
    assert _plan(p) == ("direct", "float64", direct, direct)
    assert p.reason == (f"direct Cholesky (the iterative solver does not fit); estimate "
                        f"{_gb(direct)} <= memory limit {_gb(direct)}")
    # auto: the smallest estimate over all solvers is named
    lim = direct - 1
    with pytest.raises(KernelMemoryError, match=re.escape(f"needs at least {_gb(direct)} ")) as e:
        choose_solver(n, d, c, ridge=1e-3, memory_limit=lim, rank=n)
    assert (e.value.n, e.value.estimate, e.value.limit) == (n, direct, lim)
    # iterative requested: the direct solver is neither taken nor counted
    msg = (f"a kernel problem with n = {n} centres needs at least {_gb(rec)} "
           f"(direct {_gb(direct)}, iterative/float32 {_gb(f32)}, iterative/recompute "
           f"{_gb(rec)}), over the memory limit {_gb(direct)}")
    with pytest.raises(KernelMemoryError, match=re.escape(msg) + "$") as e:
        choose_solver(n, d, c, solver="iterative", ridge=1e-3, memory_limit=direct, rank=n)
    assert (e.value.n, e.value.estimate, e.value.limit) == (n, rec, direct)
    with pytest.raises(KernelMemoryError, match=re.escape(
            f"(direct {_gb(direct)}, iterative/float32 {_gb(f32)}), over")):
        choose_solver(n, d, c, solver="iterative", storage="float32", ridge=1e-3,
                      memory_limit=rec, rank=n)


def test_direct_requested_over_the_limit():
    n, d, c = 3000, 10, 2
    direct = _estimate(n, d, c, "direct")
    lim = direct - 1
    msg = (f"a kernel problem with n = {n} centres needs about {_gb(direct)} for the direct "
           f"solver, over the memory limit {_gb(lim)}; use solver='iterative' (with ridge > 0) "
           f"or raise memory_limit")
    with pytest.raises(KernelMemoryError, match=re.escape(msg) + "$") as e:
        choose_solver(n, d, c, solver="direct", ridge=1e-3, memory_limit=lim)
    assert (e.value.n, e.value.estimate, e.value.limit) == (n, direct, lim)
    assert isinstance(e.value, MemoryError) and isinstance(e.value, ValueError)
    p = choose_solver(n, d, c, solver="direct", ridge=1e-3, memory_limit=direct)   # inclusive
    assert _plan(p) == ("direct", "float64", direct, direct)


def test_ridgeless_over_the_limit_names_the_iterative_needs():
    n, d, c = 5000, 20, 1
    direct = _estimate(n, d, c, "direct")
    f32 = _estimate(n, d, c, "iterative", "float32")
    rec = _estimate(n, d, c, "iterative", "recompute")
    lim = f32 + 1   # the iterative solver would fit, but needs a ridge
    msg = (f"a kernel problem with n = {n} centres needs about {_gb(direct)} for the direct "
           f"solver (the only one for ridge = 0), over the memory limit {_gb(lim)}; with "
           f"ridge > 0 the iterative solver would need iterative/float32 {_gb(f32)}, "
           f"iterative/recompute {_gb(rec)}")
    with pytest.raises(KernelMemoryError, match=re.escape(msg) + "$") as e:
        choose_solver(n, d, c, memory_limit=lim)
    assert (e.value.n, e.value.estimate, e.value.limit) == (n, direct, lim)
    with pytest.raises(KernelMemoryError, match=re.escape("would need iterative/recompute")):
        choose_solver(n, d, c, memory_limit=lim, storage="recompute")


def test_iterative_needs_a_ridge_and_default_limit_is_available_memory():
    with pytest.raises(ValueError, match=re.escape("solver='iterative' needs ridge > 0")):
        choose_solver(100, 2, 1, solver="iterative", ridge=0.0, memory_limit=10**12)
    p = choose_solver(100, 2, 1, ridge=1e-3)
    avail = available_memory()
    assert p.solver == "direct"
    assert abs(p.limit - avail) <= 0.2 * avail
    with pytest.raises(ValueError, match="memory_limit must be a finite number of bytes > 0"):
        choose_solver(100, 2, 1, memory_limit=-1.0)


# ------------------------------------------------------------------ fit_kernel_machine


def _dense(kernel, X, Y, M, L, ridge):
    K = kern(kernel, X, X, M, L)
    A = np.linalg.solve(K + ridge * np.eye(len(X)), Y)
    return K, A


def _fact_agop_ref(kernel, X, A, M, L):
    g = fd_grads(kernel, X, X, A, M, L)            # n × c × d
    F = np.einsum("ic,ick,il->kl", A, g, X)
    n = len(X)
    G = np.einsum("ick,icl->kl", g, g) / n
    gc = g - g.mean(axis=0)
    Gc = np.einsum("ick,icl->kl", gc, gc) / n
    return F, G, Gc


@pytest.mark.parametrize("kernel", ["gaussian", "laplace", "exp_inner", "quadratic"])
def test_direct_fit_matches_dense_solve_and_finite_differences(kernel):
    X, Y, M = _problem(1, n=70, d=3, c=2)
    L, ridge = 1.5, 0.1
    K, A_ref = _dense(kernel, X, Y, M, L, ridge)
    F_ref, G_ref, Gc_ref = _fact_agop_ref(kernel, X, A_ref, M, L)
    fit = fit_kernel_machine(kernel, X, Y, M, L, ridge=ridge, solver="direct", agop="plain")
    scale = np.linalg.norm(A_ref)
    assert np.linalg.norm(fit.coef - A_ref) <= 1e-9 * scale
    assert np.allclose(fit.train_pred, K @ A_ref, rtol=0, atol=1e-9 * np.abs(Y).max())
    assert np.linalg.norm(fit.fact - F_ref) <= 1e-6 * np.linalg.norm(F_ref)
    assert np.linalg.norm(fit.agop - G_ref) <= 1e-6 * np.linalg.norm(G_ref)
    assert fit.info.solver == "direct" and fit.info.storage == "float64"
    assert fit.info.estimate == _estimate(70, 3, 2, "direct", agop=True)
    fit_c = fit_kernel_machine(kernel, X, Y, M, L, ridge=ridge, solver="direct", agop="centred")
    assert np.linalg.norm(fit_c.agop - Gc_ref) <= 1e-6 * np.linalg.norm(Gc_ref)
    fit_n = fit_kernel_machine(kernel, X, Y[:, 0], M, L, ridge=ridge)
    assert fit_n.agop is None and fit_n.coef.shape == (70, 1)
    assert fit_n.info.estimate == _estimate(70, 3, 1, "direct")
    assert np.linalg.norm(fit_n.coef[:, 0] - A_ref[:, 0]) <= 1e-9 * scale


@pytest.mark.parametrize("storage", ["float32", "recompute"])
def test_iterative_fit_reaches_its_tolerance_against_the_dense_operator(storage):
    X, Y, M = _problem(2, n=90, d=3, c=2)
    L, ridge = 1.2, 0.05
    K, A_ref = _dense("gaussian", X, Y, M, L, ridge)
    Kr = K + ridge * np.eye(90)
    for tol in (1e-4, 1e-9):
        fit = fit_kernel_machine("gaussian", X, Y, M, L, ridge=ridge, solver="iterative",
                                 storage=storage, tol=tol, rank=8, agop="centred")
        res = np.linalg.norm(Kr @ fit.coef - Y, axis=0) / np.linalg.norm(Y, axis=0)
        assert res.max() <= tol * 1.01
        assert fit.info.tol == tol and fit.info.converged
        assert fit.info.rank == 8 and fit.info.storage == storage
        assert abs(fit.info.residual - res.max()) <= 1e-3 * res.max() + 1e-13
        assert fit.info.estimate == _estimate(90, 3, 2, "iterative", storage, 8, True)
    assert np.linalg.norm(fit.coef - A_ref) <= 1e-6 * np.linalg.norm(A_ref)
    _, _, Gc = _fact_agop_ref("gaussian", X, fit.coef, M, L)
    assert np.linalg.norm(fit.agop - Gc) <= 1e-6 * np.linalg.norm(Gc)


def test_fit_passes_seed_rank_and_max_iter():
    X, Y, M = _problem(3, n=80, d=3, c=1)
    kw = dict(ridge=1e-3, solver="iterative", storage="recompute", tol=1e-10)
    f1 = fit_kernel_machine("laplace", X, Y, M, 1.0, rank=5, seed=1, **kw)
    f1b = fit_kernel_machine("laplace", X, Y, M, 1.0, rank=5, seed=np.random.default_rng(1),
                             **kw)
    f2 = fit_kernel_machine("laplace", X, Y, M, 1.0, rank=5, seed=2, **kw)
    assert f1.info.history == f1b.info.history
    assert f1.info.history != f2.info.history
    assert f1.info.rank == 5
    fd = fit_kernel_machine("laplace", X, Y, M, 1.0, **kw)   # default rank min(n, 1000)
    assert fd.info.rank == 80 or fd.info.rank < 80 and fd.info.iterations <= 3
    assert fd.info.iterations < f1.info.iterations
    with pytest.warns(KernelConvergenceWarning, match=re.escape("(max_iter = 2)")):
        f = fit_kernel_machine("laplace", X, Y, M, 1.0, rank=2, max_iter=2, **kw)
    assert f.info.iterations == 2 and not f.info.converged
    with pytest.raises(KernelMemoryError, match=re.escape("over the memory limit 1e-06 GB")):
        fit_kernel_machine("laplace", X, Y, M, 1.0, ridge=1e-3, memory_limit=1000)
    with pytest.raises(KernelMemoryError, match="for the direct solver, over"):
        fit_kernel_machine("laplace", X, Y, M, 1.0, ridge=1e-3, solver="direct",
                           memory_limit=1000)


def test_fit_default_tolerances_per_storage():
    X, Y, M = _problem(4, n=50, d=2, c=1)
    f = fit_kernel_machine("gaussian", X, Y, M, 1.0, ridge=1e-2, solver="iterative",
                           storage="recompute")
    assert f.info.tol == 1e-10
    f = fit_kernel_machine("gaussian", X, Y, M, 1.0, ridge=1e-2, solver="iterative")
    assert f.info.tol == 1e-8 and f.info.storage == "float32"


def test_fit_progress_flag_reaches_the_bars(monkeypatch):
    seen = []
    real = solvers_mod.progress_bar

    def spy(total, desc, enabled, **kw):
        seen.append((desc, bool(enabled)))
        return real(total, desc, False)

    monkeypatch.setattr(solvers_mod, "progress_bar", spy)
    X, Y, M = _problem(5, n=40, d=2, c=1)
    fit_kernel_machine("gaussian", X, Y, M, 1.0, ridge=1e-2)
    assert seen and not any(on for _, on in seen)      # n < PROGRESS_MIN_N: off
    seen.clear()
    fit_kernel_machine("gaussian", X, Y, M, 1.0, ridge=1e-2, progress=True)
    assert any(on for d, on in seen if d.startswith("kernel fit (direct)"))
    seen.clear()
    fit_kernel_machine("gaussian", X, Y, M, 1.0, ridge=1e-2, progress=False)
    assert seen and not any(on for _, on in seen)


def test_fit_iterative_without_ridge_is_refused():
    X, Y, M = _problem(6, n=20, d=2, c=1)
    with pytest.raises(ValueError, match=re.escape("solver='iterative' needs ridge > 0")):
        fit_kernel_machine("gaussian", X, Y, M, 1.0, solver="iterative")


# ------------------------------------------------------------------ kernel_predict


@pytest.mark.parametrize("kernel", ["gaussian", "laplace", "exp_inner", "quadratic"])
def test_kernel_predict_matches_the_hand_kernel(kernel):
    rng = np.random.default_rng(7)
    X, Y, M = _problem(7, n=45, d=3, c=3)
    Z = rng.standard_normal((130, 3)) / 2
    got = kernel_predict(kernel, Z, X, Y, M, 1.3)
    ref = kern(kernel, Z, X, M, 1.3) @ Y
    assert got.shape == (130, 3)
    assert np.allclose(got, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
    one = kernel_predict(kernel, Z[:3], X, Y[:, 1], M, 1.3)
    assert one.shape == (3, 1) and np.allclose(one[:, 0], ref[:3, 1], rtol=1e-12)


# ------------------------------------------------------------------ rpcholesky


def test_rpcholesky_first_round_pivots_and_full_rank_factor():
    X, M, K = _gaussian_gram(8, 0.7)
    F, S = rpcholesky("gaussian", X, M, 0.7, 40, seed=3, block=4)
    # the Gaussian diagonal is 1: the first round draws 4 pivots uniformly without replacement
    ref = np.random.default_rng(3).choice(40, size=4, replace=False, p=np.ones(40) / 40)
    assert np.array_equal(S[:4], ref)
    assert np.linalg.norm(F @ F.T - K) <= 1e-8 * np.linalg.norm(K)
    F1, S1 = rpcholesky("gaussian", X, M, 0.7, 40, seed=3)     # default block 10
    ref10 = np.random.default_rng(3).choice(40, size=10, replace=False, p=np.ones(40) / 40)
    assert np.array_equal(S1[:10], ref10)
    g = np.random.default_rng(3)
    _, S2 = rpcholesky("gaussian", X, M, 0.7, 6, seed=g, block=4)
    assert np.array_equal(S2[:4], ref)
    assert not np.array_equal(g.bit_generator.state["state"],
                              np.random.default_rng(3).bit_generator.state["state"])
    F3, S3 = rpcholesky("gaussian", X, M, 0.7, 6, seed=3, block=4)
    assert F3.shape == (40, 6) and len(S3) == 6
    # the factor interpolates K on its pivots (Nyström), and the bandwidth is the one given
    assert np.allclose((F3 @ F3.T)[np.ix_(S3, S3)], K[np.ix_(S3, S3)], atol=1e-10)
    assert np.allclose((F3 @ F3.T)[:, S3], K[:, S3], atol=1e-8)


def test_progress_threshold_is_inclusive(monkeypatch):
    seen = []
    real = solvers_mod.progress_bar

    def spy(total, desc, enabled, **kw):
        seen.append(bool(enabled))
        return real(total, desc, False)

    monkeypatch.setattr(solvers_mod, "progress_bar", spy)
    X, Y, M = _problem(5, n=40, d=2, c=1)
    monkeypatch.setattr(solvers_mod, "PROGRESS_MIN_N", 40)   # n >= PROGRESS_MIN_N: on
    fit_kernel_machine("gaussian", X, Y, M, 1.0, ridge=1e-2)
    assert any(seen)
    seen.clear()
    monkeypatch.setattr(solvers_mod, "PROGRESS_MIN_N", 41)
    fit_kernel_machine("gaussian", X, Y, M, 1.0, ridge=1e-2)
    assert seen and not any(seen)


def test_each_argument_is_checked_once():
    from quadnet._validation import count_validations

    X, Y, M = _problem(9, n=30, d=2, c=1)
    with count_validations() as seen:
        fit_kernel_machine("gaussian", X, Y, M, 1.0, ridge=1e-2, solver="iterative", seed=4)
    args = [a for _, a in seen]
    assert sorted(args) == sorted(set(args))
    assert {w for w, _ in seen} == {"fit_kernel_machine"}
    with count_validations() as seen:
        rpcholesky("gaussian", X, M, 1.0, 5, seed=4)
    assert {w for w, _ in seen} == {"rpcholesky"} and len(seen) == len({a for _, a in seen})


def test_rpcholesky_second_round_draws_from_the_residual_diagonal():
    X, M, K = _gaussian_gram(10, 0.8)
    F, S = rpcholesky("gaussian", X, M, 0.8, 6, seed=5, block=4)
    g = np.random.default_rng(5)
    S4 = g.choice(40, size=4, replace=False, p=np.ones(40) / 40)
    C = K[:, S4]
    r = np.diag(K) - np.einsum("ij,ji->i", C, np.linalg.solve(K[np.ix_(S4, S4)], C.T))
    r[S4] = 0.0
    r = np.maximum(r, 0.0)
    nxt = g.choice(40, size=2, replace=False, p=r / r.sum())
    assert np.array_equal(S, np.concatenate([S4, nxt]))
    assert F.shape == (40, 6)
    # one round of six (the default block is at least 10) draws all six uniformly
    _, S6 = rpcholesky("gaussian", X, M, 0.8, 6, seed=5)
    assert np.array_equal(S6, np.random.default_rng(5).choice(40, size=6, replace=False,
                                                              p=np.ones(40) / 40))
    assert not np.array_equal(S6, S)
