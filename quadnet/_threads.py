"""BLAS thread policy: small-matrix work single-threaded, large GEMMs threaded.

numpy's and scipy's OpenBLAS start one pool each, sized to the machine (2 threads on a
2-core box). Waking a thread pool costs microseconds, so on matrices of a few hundred
entries -- every step of an L-BFGS loop, a manifold operation at ``(10, 2)``, an ODE
right-hand side, a sweep cell -- the threads cost more than the arithmetic, and on a shared
machine they also contend with other processes' pools. The policy:

* loops over small matrices run inside :func:`single_threaded` (a context manager and a
  decorator, backed by ``threadpoolctl``): one BLAS thread for their whole duration, set
  once per loop rather than once per call;
* large dense products (``effective_hessian`` at ``n_h`` in the thousands, the moment
  matrix at ``d >= 400``, kernel solves of a recursive feature machine) keep the default
  pool in library calls: they are compute-bound and scale with the threads on an idle
  machine;
* the built-in checks of ``quadnet verify`` run with one BLAS thread per process (the
  ``rfm`` and ``beyond`` checks under :func:`single_threaded`, the phase-transition workers
  of ``recovery`` with one thread each): on a shared 2-core machine spinning BLAS threads
  cost several times the arithmetic (one FACT-RFM fit at ``p = 61``, 35 iterations: 14.7
  CPU-s with one thread, 54.5 CPU-s and 3.9x the wall time with two, load ~18; 40 recovery
  cells in two worker processes: 2.4 against 36.6 CPU-s, load ~10);
* ``QUADNET_BLAS_POLICY=off`` in the environment disables the policy (every
  :func:`single_threaded` block then leaves the pools alone), for measuring it.

Nested blocks are cheap: only the outermost block that limits talks to ``threadpoolctl``.

Examples
--------
>>> from quadnet._threads import blas_threads, single_threaded
>>> with single_threaded():
...     inside = blas_threads()
>>> inside in (None, 1)
True
>>> @single_threaded()
... def small_loop():
...     return blas_threads()
>>> small_loop() in (None, 1)
True
"""

from __future__ import annotations

import contextlib
import os
import threading

__all__ = ["blas_threads", "forced_single_thread", "policy_enabled", "single_threaded"]

_controller = None
#: process-wide, since the BLAS pools are: how many limiting blocks are open (in any Python
#: thread) and the threadpoolctl limit the first of them set
_lock = threading.Lock()
_open = 0
_limit = None


def policy_enabled() -> bool:
    """``False`` when ``QUADNET_BLAS_POLICY=off`` (or ``0``/``false``/``no``) is set."""
    return os.environ.get("QUADNET_BLAS_POLICY", "on").strip().lower() not in ("off", "0",
                                                                              "false", "no")


def _get_controller():
    global _controller
    if _controller is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - threadpoolctl is a dependency
            return None
        _controller = ThreadpoolController()
    return _controller


def blas_threads() -> int | None:
    """The largest thread count over the loaded BLAS pools (``None`` if none is visible)."""
    ctl = _get_controller()
    if ctl is None:
        return None
    pools = [p.num_threads for p in ctl.select(user_api="blas").lib_controllers]
    return max(pools) if pools else None


class single_threaded(contextlib.ContextDecorator):
    """Run a block (or every call of a decorated function) with one BLAS thread.

    Use it around loops of small-matrix operations (the sizes where thread wake-ups cost
    more than the arithmetic); leave large GEMMs outside. Re-entrant, and safe across Python
    threads: the BLAS pools are process-wide, so the blocks are counted process-wide, the first
    block to open sets the limit and the last to close restores the count found before the
    first (while any block is open, BLAS calls of every Python thread run on one thread).

    Examples
    --------
    >>> import numpy as np
    >>> with single_threaded():
    ...     x = np.ones((3, 3)) @ np.ones((3, 3))
    >>> float(x[0, 0])
    3.0
    """

    #: ``True`` in :class:`forced_single_thread`: limit even under ``QUADNET_BLAS_POLICY=off``.
    _forced = False

    def __enter__(self):
        global _open, _limit
        self._counted = False
        if self._forced or policy_enabled():
            with _lock:
                if _open == 0:
                    ctl = _get_controller()
                    _limit = None if ctl is None else ctl.limit(limits=1, user_api="blas")
                _open += 1
                self._counted = True
        return self

    def __exit__(self, *exc):
        global _open, _limit
        if self._counted:
            with _lock:
                _open -= 1
                if _open == 0 and _limit is not None:
                    _limit.restore_original_limits()
                    _limit = None
            self._counted = False
        return False

    def _recreate_cm(self):
        # a fresh instance per decorated call, so recursion and threads do not share _limit
        return type(self)()



class forced_single_thread(single_threaded):
    """Like :class:`single_threaded`, but also under ``QUADNET_BLAS_POLICY=off``.

    For calls that must not run threaded for correctness rather than speed (the crash
    workarounds of :mod:`quadnet._lapack`); the policy switch only measures the speed policy.

    Examples
    --------
    >>> with forced_single_thread():
    ...     inside = blas_threads()
    >>> inside in (None, 1)
    True
    """

    _forced = True
