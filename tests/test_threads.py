"""The BLAS thread policy (quadnet._threads)."""

from __future__ import annotations

import threadpoolctl

from quadnet._threads import blas_threads, single_threaded


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
