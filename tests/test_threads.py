"""The BLAS thread policy (quadnet._threads)."""

from __future__ import annotations

import pytest
import threadpoolctl

from quadnet._threads import blas_threads, single_threaded

# the suite runs on one BLAS thread (tests/conftest.py); a restore to 1 would prove nothing
pytestmark = pytest.mark.usefixtures("default_blas_threads")


def _max_blas_threads() -> int:
    info = threadpoolctl.threadpool_info()
    return max((p["num_threads"] for p in info if p["user_api"] == "blas"), default=1)


def test_single_threaded_limits_and_restores():
    before = _max_blas_threads()
    with single_threaded():
        assert _max_blas_threads() == 1
        with single_threaded():            # nested: still one thread, no second limiter
            assert _max_blas_threads() == 1
        assert _max_blas_threads() == 1    # the inner exit does not restore early
    assert _max_blas_threads() == before
    assert blas_threads() == before


def test_decorator_and_policy_switch(monkeypatch):
    @single_threaded()
    def inside():
        return _max_blas_threads()

    assert inside() == 1
    assert inside() == 1                   # a fresh limiter per call
    monkeypatch.setenv("QUADNET_BLAS_POLICY", "off")
    before = _max_blas_threads()
    assert inside() == before              # the policy is off: pools left alone


def test_restores_after_an_exception():
    before = _max_blas_threads()
    try:
        with single_threaded():
            raise KeyError("x")
    except KeyError:
        pass
    assert _max_blas_threads() == before


def test_overlapping_blocks_of_two_python_threads_restore_the_pool():
    """The pools are process-wide, so are the blocks: A opens, B opens, A closes, B closes, and
    the pool is back at its count (per-thread bookkeeping left it at 1: B's block, opened under
    A's limit, restored that limit last); while B is open after A closed, the limit is held."""
    import threading

    import quadnet._threads as T

    before = _max_blas_threads()
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def a():
        with single_threaded():
            a_in.set()
            b_in.wait(10)
        a_out.set()

    def b():
        a_in.wait(10)
        with single_threaded():
            b_in.set()
            a_out.wait(10)
            seen["open"] = (T._open, T._limit is not None)

    ts = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(20)
    assert seen["open"] == (1, True)
    assert _max_blas_threads() == before
    assert (T._open, T._limit) == (0, None)
