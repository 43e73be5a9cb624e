"""Test configuration: headless plotting, one BLAS thread, derandomised hypothesis.

hypothesis draws its examples from a fixed seed by default, so every run of the suite is
reproducible (a failure seen once is seen again); ``QUADNET_HYPOTHESIS_EXPLORE=1`` explores new
examples every run instead (the way new counterexamples are found; add each one found as an
explicit regression test).
"""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

#: One BLAS thread for the test processes and every child they start (notebook kernels, the
#: Sphinx build, ``quadnet`` subprocesses): ``pytest -n 2`` already runs two workers on two
#: cores, and a second BLAS thread per process only spins against the other worker (measured
#: on 2026-12-03: the suite's CPU time 546 -> 431 s, wall 301 -> 240 s). Tests about threading
#: ask for the default pools explicitly (the ``default_blas_threads`` fixture, the crash-size
#: child of tests/test_lapack.py).
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
for _var in BLAS_THREAD_VARIABLES:
    os.environ.setdefault(_var, "1")

import pytest  # noqa: E402
import threadpoolctl  # noqa: E402
from hypothesis import settings  # noqa: E402

# numpy may have been imported (by a plugin) before the variables were set: limit its pools too
_ONE_THREAD = threadpoolctl.threadpool_limits(limits=1, user_api="blas")

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("QUADNET_HYPOTHESIS_EXPLORE", "").lower() not in ("1", "true", "yes"):
    settings.load_profile("ci")


# Scheduling: ``pytest -n 2 --dist loadfile`` hands whole files to the workers, the files with
# most tests first (pytest-xdist's default order). Forcing the three longest files first
# (``--no-loadscope-reorder`` with them sorted to the front) was measured slower on
# 2026-12-03 (179.1 s against 151.6 s in the run just before, and 183.5 s against 178.4 s in
# a second pair of back-to-back runs): the crash-size child of tests/test_lapack.py (two BLAS
# threads), the Sphinx build and the notebook kernels then all run at the same time.


@pytest.fixture
def default_blas_threads(monkeypatch):
    """The pools as a user has them on this two-core machine: two BLAS threads in this process
    and no thread variables for its children (fails, rather than skips, where that is not
    possible, so a test about threading cannot pass vacuously)."""
    for var in BLAS_THREAD_VARIABLES:
        monkeypatch.delenv(var, raising=False)
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        pools = [p["num_threads"] for p in threadpoolctl.threadpool_info()
                 if p["user_api"] == "blas"]
        assert pools and max(pools) == 2, f"could not give the BLAS pools two threads: {pools}"
        yield
