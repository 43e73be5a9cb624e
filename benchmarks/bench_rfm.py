"""Cost of one RFM iteration against one ``n × n`` Cholesky solve, measured in one run.

Data: ``(x+y) mod 61`` with a 50% split, so ``n = 1,860`` training points, ``d = 122`` inputs,
``c = 61`` outputs. One RFM iteration (the loop body of ``RecursiveFeatureMachine.fit``) is:
the kernel matrix, the Cholesky solve for the coefficients, the FACT matrix, and the update
of ``M`` (FACT: an SVD of a ``d × d`` matrix; NFA: additionally the AGOP, ``O(n³)``).
The reference is ``scipy.linalg.cho_factor`` + ``cho_solve`` of the same kernel matrix with
the same ``c`` right-hand sides. Each timing is the minimum of ``REPEAT`` interleaved runs
(the machine is shared; the minimum is the least disturbed run).

Run: ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_rfm.py``
"""

from __future__ import annotations

import time

from scipy import linalg

from quadnet.features.kernels import kernel_matrix
from quadnet.features.rfm import RecursiveFeatureMachine, modular_arithmetic

REPEAT = 5


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    data = modular_arithmetic(61, "add", 0.5, seed=0)
    X, Y = data.X_train, data.y_train
    n, d = X.shape
    machines = {
        "FACT (exp_inner, ffT)": RecursiveFeatureMachine(kernel="exp_inner", bandwidth=3.0,
                                                         update="fact"),
        "FACT (exp_inner, fm)": RecursiveFeatureMachine(kernel="exp_inner", bandwidth=3.0,
                                                        update="fact", fact_form="fm"),
        "NFA (gaussian, centred)": RecursiveFeatureMachine(kernel="gaussian", bandwidth=2.5,
                                                           update="nfa", normalize=None),
    }
    # a non-trivial M: the one after three FACT updates
    M = RecursiveFeatureMachine(kernel="exp_inner", bandwidth=3.0, iters=3).fit(X, Y).M_
    K = kernel_matrix("exp_inner", X, X, M, 3.0)

    def cholesky_solve():
        linalg.cho_solve(linalg.cho_factor(K, lower=True), Y)

    times: dict[str, list[float]] = {"cholesky solve": []}
    times.update({name: [] for name in machines})
    for _ in range(REPEAT):
        times["cholesky solve"].append(_time(cholesky_solve))
        for name, m in machines.items():
            times[name].append(_time(lambda m=m: m._step(X, Y, M)))
    ref = min(times["cholesky solve"])
    print(f"n = {n}, d = {d}, c = {Y.shape[1]}; minimum of {REPEAT} interleaved runs")
    print(f"{'operation':28s} {'seconds':>9s} {'ratio to Cholesky solve':>24s}")
    for name, ts in times.items():
        print(f"{name:28s} {min(ts):9.4f} {min(ts) / ref:24.2f}")
    fact = min(times["FACT (exp_inner, ffT)"]) / ref
    print(f"\nFACT iteration / Cholesky solve = {fact:.2f} (target <= 3): "
          f"{'OK' if fact <= 3 else 'OVER'}")


if __name__ == "__main__":
    main()
