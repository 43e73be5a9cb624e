"""The BLAS thread policy (quadnet._threads): small-matrix workloads with and without it.

Each workload runs with the default BLAS pools (as many threads as OpenBLAS starts, 2 on a
2-core machine) once with the policy off (``QUADNET_BLAS_POLICY=off``: every
``single_threaded()`` block leaves the pools alone) and once with it on, interleaved
round-robin over ``--rounds`` rounds; the table reports the median wall time of each and
the ratio off / on (> 1: the policy helps). Wall time, not CPU time, because idle spinning
threads are what the policy removes. The machine load (``os.getloadavg``) is printed before
and after: on a shared machine the ratio, not the absolute time, is the result.

Workloads (all inside quadnet code paths that the policy wraps, or wrapped here the way a
caller would wrap a loop of small operations):

* ``train``: ``quadnet.train`` of a ``QuadraticNet`` (d = 10, width 10, n = 200);
* ``bregman``: 20 ``bregman_projection`` solves at d = 24, m = 6;
* ``mirror_flow``: ``CommutingSensing.mirror_flow`` at d = 24, m = 6;
* ``manifold_ops``: 300 ``projection`` + ``retraction`` calls of ``PSDQuotient(10, 2)``
  inside one ``single_threaded()`` block (a caller's loop);
* ``large_gemm``: one ``2000 x 2000`` product, *outside* any block (policy irrelevant:
  the ratio should be ~1, i.e. the policy does not slow large GEMMs down).

    python benchmarks/bench_threads.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import quadnet as qn
from quadnet._threads import blas_threads, single_threaded


def workloads() -> dict:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 10))
    y = np.sum(X[:, :3] ** 2, axis=1)
    net0 = qn.QuadraticNet(0.3 * rng.standard_normal((10, 10)))
    inst = qn.commuting.random_commuting_instance(0, d=24, m=6)
    cs = qn.CommutingSensing(np.eye(24), inst["spectra"], inst["y"])
    M = qn.PSDQuotient(10, 2, seed=0)
    U = M.random_point()
    Z = rng.standard_normal((10, 2))
    A = rng.standard_normal((2000, 2000))

    def train():
        qn.train(net0, X, y, 1e-2, max_iter=300, polish=False, warn=False)

    def bregman():
        for k in range(20):
            qn.bregman_projection(inst["spectra"], inst["y"], np.full(24, 10.0 ** -k))

    def mirror():
        cs.mirror_flow(np.full(24, 1e-3), np.array([0.0, 10.0, 100.0]))

    def manifold_ops():
        with single_threaded():
            for _ in range(300):
                M.retraction(U, M.projection(U, Z))

    def gemm():
        A @ A

    return {"train": train, "bregman": bregman, "mirror_flow": mirror,
            "manifold_ops": manifold_ops, "large_gemm": gemm}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    load0 = os.getloadavg()
    fns = workloads()
    times = {name: {"off": [], "on": []} for name in fns}
    for fn in fns.values():   # warm-up (imports, caches)
        fn()
    for _ in range(args.rounds):
        for name, fn in fns.items():
            for mode in ("off", "on"):
                os.environ["QUADNET_BLAS_POLICY"] = mode
                t0 = time.perf_counter()
                fn()
                times[name][mode].append(time.perf_counter() - t0)
    os.environ.pop("QUADNET_BLAS_POLICY", None)
    load1 = os.getloadavg()
    print(f"BLAS pools: {blas_threads()} threads by default; load average before "
          f"{load0[0]:.2f}, after {load1[0]:.2f}; median of {args.rounds} interleaved rounds")
    out = {"load_before": load0, "load_after": load1, "rows": {}}
    for name, t in times.items():
        off, on = float(np.median(t["off"])), float(np.median(t["on"]))
        out["rows"][name] = {"off_s": off, "on_s": on, "off_over_on": off / on}
        print(f"  {name:13s} policy off {off * 1e3:9.1f} ms   on {on * 1e3:9.1f} ms   "
              f"off/on = {off / on:5.2f}")
    return out


if __name__ == "__main__":
    main()
