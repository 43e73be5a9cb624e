"""The floor under a guarded retraction: why ``PSDQuotient.retraction`` cannot be within 1.5x of
pymanopt's ``PSDFixedRank.retraction``.

pymanopt returns ``U + xi`` with no check (NaN in, NaN out). quadnet never returns a non-finite
result silently, so any implementation must at least add and then look at every entry once.
This script times, interleaved in one run with one BLAS thread (median of 7 rounds):
pymanopt, the bare addition, the addition plus the cheapest finiteness tests (``isfinite().all()``
and one reduction), and ``PSDQuotient.retraction``. Ratios are to pymanopt.

Usage: ``python benchmarks/retraction_floor.py`` (prints one line per size, and ``uptime``).
"""

from __future__ import annotations

import math
import os
import timeit

import numpy as np
from pymanopt.manifolds import PSDFixedRank
from threadpoolctl import threadpool_limits

import quadnet as qn


def main() -> None:
    with threadpool_limits(1):
        for d, r in [(10, 2), (100, 5), (1000, 20)]:
            rng = np.random.default_rng(0)
            U, X = rng.standard_normal((d, r)), rng.standard_normal((d, r))
            M, P = qn.PSDQuotient(d, r), PSDFixedRank(d, r)

            def add_isfinite():
                out = U + X
                if not np.isfinite(out).all():
                    raise ValueError("non-finite")
                return out

            def add_sum():
                out = U + X
                if not math.isfinite(float(np.add.reduce(out, axis=None))):
                    raise ValueError("non-finite")
                return out

            fs = {"pymanopt": lambda: P.retraction(U, X), "bare add": lambda: U + X,
                  "add+isfinite": add_isfinite, "add+sum": add_sum,
                  "quadnet": lambda: M.retraction(U, X)}
            n = 20000 if d < 1000 else 2000
            times = {k: [] for k in fs}
            for _ in range(7):                      # interleaved rounds
                for k, f in fs.items():
                    times[k].append(timeit.timeit(f, number=n) / n)
            med = {k: sorted(v)[3] for k, v in times.items()}
            print(f"(d, r) = ({d}, {r}): " + ", ".join(
                f"{k} {med[k] * 1e6:.2f} us ({med[k] / med['pymanopt']:.2f}x)" for k in fs))
    print("load:", os.getloadavg())


if __name__ == "__main__":
    main()
