"""Per-call timing shared by the benchmarks (``python benchmarks/<name>.py`` puts this folder
on ``sys.path``, so a benchmark imports it as ``_timing``)."""

from __future__ import annotations

import time
from collections.abc import Callable


def per_call(fn: Callable[[], object], budget: float,
             clock: Callable[[], float] = time.perf_counter) -> float:
    """Seconds of ``clock`` per call of ``fn()``: one warm-up call, then calls until ``budget``
    seconds of ``clock`` have passed (``time.perf_counter``: wall time; ``time.process_time``:
    the CPU time of this process, not the time it waited for a core of a shared machine)."""
    fn()
    n, t0 = 0, clock()
    while True:
        fn()
        n += 1
        el = clock() - t0
        if el >= budget:
            return el / n
