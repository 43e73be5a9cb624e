"""The crash-safe factorisations (quadnet._lapack): correctness against LAPACK and a dense
reference, and the direct kernel solver at the size that crashed threaded ``dpotrf``.

OpenBLAS 0.3.30/0.3.31's parallel ``dpotrf`` dies with SIGSEGV on AVX-512 AMD CPUs from
n = 16,000 on (measured there: 15,000 fine, 16,000 and 20,000 crash; one thread fine). The
subprocess test below runs the public direct solver at n = 16,000 with the default two BLAS
threads, so it fails on exactly the machines where the fault lives.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import threadpoolctl
from scipy.linalg import lapack

from quadnet._lapack import cholesky_lower_inplace


def _spd(n, seed=0, cond=1e6):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    w = np.geomspace(1.0, 1.0 / cond, n)
    return np.asfortranarray((Q * w) @ Q.T)


@pytest.mark.parametrize("n,block", [(1, 4), (7, 4), (64, 64), (65, 64), (301, 32), (520, 1024)])
def test_blocked_cholesky_matches_lapack(n, block):
    A = _spd(n, seed=n)
    ref, info = lapack.dpotrf(A.copy(order="F"), lower=1, clean=1)
    assert info == 0
    a = A.copy(order="F")
    assert cholesky_lower_inplace(a, block=block) == 0
    L = np.tril(a)
    # both are backward stable Cholesky factors: ||L - L_ref|| <= c n eps cond(A)^{1/2}-ish;
    # the reconstruction is the sharp property: ||LL^T - A|| <= c n eps ||A||
    assert np.linalg.norm(L @ L.T - A) <= 10 * n * np.finfo(float).eps * np.linalg.norm(A)
    assert np.linalg.norm(L - ref) <= 1e-6 * np.linalg.norm(ref)
    assert np.all(np.diag(L) > 0)


def test_blocked_cholesky_reports_the_failing_minor_like_lapack():
    n = 200
    A = _spd(n, seed=1, cond=10.0)
    A[150, 150] = -5.0  # leading minor 151 is indefinite, all smaller ones are SPD
    _, info_ref = lapack.dpotrf(A.copy(order="F"), lower=1)
    info = cholesky_lower_inplace(A.copy(order="F"), block=32)
    assert info_ref == 151
    assert info == info_ref


def test_blocked_cholesky_solves_like_a_dense_solve():
    A = _spd(400, seed=2, cond=1e4)
    b = np.random.default_rng(3).standard_normal((400, 2))
    a = A.copy(order="F")
    assert cholesky_lower_inplace(a, block=96) == 0
    x, info = lapack.dpotrs(a, b, lower=1)
    assert info == 0
    x_ref = np.linalg.solve(A, b)
    assert np.linalg.norm(x - x_ref) <= 1e-8 * np.linalg.norm(x_ref)


def test_every_direct_kernel_solve_factors_through_the_blocked_cholesky(monkeypatch,
                                                                       default_blas_threads):
    """The RFM and the kernel machine reach LAPACK's dpotrf only on 256-column blocks, so the
    crash test below, run on ``fit_kernel_machine``, covers ``RecursiveFeatureMachine.fit``."""
    import scipy.linalg
    import scipy.linalg.lapack as lapack

    import quadnet._lapack as ql
    from quadnet.features import RecursiveFeatureMachine, fit_kernel_machine, sparse_parity

    sizes, whole = [], []
    real = lapack.dpotrf

    def spy(a, *args, **kwargs):
        sizes.append(a.shape[0])
        return real(a, *args, **kwargs)

    def refuse(name):
        def call(a, *args, **kwargs):
            whole.append((name, np.shape(a)))
            raise AssertionError(f"{name} on a {np.shape(a)} matrix")
        return call

    monkeypatch.setattr(lapack, "dpotrf", spy)
    for mod, name in ((np.linalg, "cholesky"), (scipy.linalg, "cholesky"),
                      (scipy.linalg, "cho_factor")):
        monkeypatch.setattr(mod, name, refuse(f"{mod.__name__}.{name}"))
    d = sparse_parity(20, 2, 600, n_test=50, seed=1)
    with threadpoolctl.threadpool_limits(2, user_api="blas"):   # a user's threaded pool
        RecursiveFeatureMachine(kernel="gaussian", bandwidth=4.0, iters=1, ridge=1e-3,
                                block_size=0, solver="direct").fit(d.X_train, d.y_train)
        fit_kernel_machine("gaussian", d.X_train, d.y_train, np.eye(20), bandwidth=4.0,
                           ridge=1e-3, solver="direct")
    assert not whole, whole
    assert sizes, "the direct solves did not factor with dpotrf at all"
    assert max(sizes) <= ql.CHOLESKY_BLOCK, f"dpotrf on a {max(sizes)}-row matrix"


def test_with_one_blas_thread_the_whole_matrix_goes_to_the_serial_dpotrf(monkeypatch):
    """Inside one-thread blocks (the checks of ``quadnet verify``) the factorisation is LAPACK's
    serial dpotrf on the whole matrix: the same bits as calling it, and every call it makes
    runs with one BLAS thread."""
    import scipy.linalg.lapack as lapack_mod

    from quadnet._threads import blas_threads, single_threaded

    threads, real = [], lapack_mod.dpotrf

    def spy(a, *args, **kwargs):
        threads.append((a.shape[0], blas_threads()))
        return real(a, *args, **kwargs)

    monkeypatch.setattr(lapack_mod, "dpotrf", spy)
    A = _spd(700, seed=4, cond=1e5)
    a = A.copy(order="F")
    with single_threaded():
        ref, info = real(A.copy(order="F"), lower=1, clean=0)
        assert cholesky_lower_inplace(a) == 0
    assert threads == [(700, 1)]
    assert np.array_equal(a, ref) and info == 0
    B = A.copy(order="F")
    B[300, 300] = -1.0           # the failing minor is reported as by the blocked route
    with single_threaded():
        assert cholesky_lower_inplace(B) == 301


@pytest.mark.slow
def test_direct_solver_at_the_crash_size_exits_cleanly():
    """n = 16,000 Gaussian-kernel direct solve, default BLAS threads, in a child process (the
    size at which threaded dpotrf segfaults on AVX-512 AMD machines)."""
    code = textwrap.dedent("""
        import resource
        # under an address-space limit, so that a memory blow-up fails here instead of taking
        # the machine down (peak RSS measured: 2.2 GB; the one n x n array is 2.05 GB)
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = 6 * 2**30 if hard == resource.RLIM_INFINITY else min(6 * 2**30, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
        import numpy as np
        from quadnet.features import fit_kernel_machine, sparse_parity
        d = sparse_parity(50, 4, 16000, n_test=200, seed=5)
        fit = fit_kernel_machine("gaussian", d.X_train, d.y_train, np.eye(50), bandwidth=7.0,
                                 ridge=1e-3, solver="direct", progress=False)
        a = np.asarray(fit.coef)
        assert fit.info.solver == "direct", fit.info.solver
        assert np.all(np.isfinite(a)), "non-finite coefficients"
        print("OK", a.shape)
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS",
                                                            "OMP_NUM_THREADS",
                                                            "QUADNET_BLAS_POLICY")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=1800, env=env)
    assert proc.returncode == 0, (f"child exited with {proc.returncode} "
                                  f"(negative = killed by that signal)\n{proc.stderr[-3000:]}")
    assert "OK" in proc.stdout
