"""Benchmark of the O(m d r) paths of quadnet.GaussianSensing (quadnet targets).

Prints, from one run at d = 400, r = 8, m = 40,000 (single BLAS thread):

* time(factor_gradient) / (time(X U) + time(X^T W)): the overhead of the gradient over the
  two products it cannot avoid (target <= 1.15); likewise factor_hvp over its three
  products and factor_value over X U;
* the traced peak memory of one gradient (tracemalloc; numpy reports its buffers to it):
  peak / bytes(X) and the extra memory beyond X and y in units of 8 (d^2 + m r) bytes
  (target: peak <= 1.2 bytes(X) + O(d^2 + m r)).

Timings are minimum CPU times (process_time, one BLAS thread) over repeats, interleaved
round-robin: on a shared machine wall-clock minima varied by 3x between runs, CPU time
does not count the time the process was preempted.

The second part compares the two routes of ``GaussianSensing.spectral_init``: Lanczos
(ARPACK on ``O(m d)`` products, no ``d x d`` matrix) against the dense moment matrix (one
``O(m d^2)`` GEMM and a partial ``eigh``), interleaved, at ``(d, r, m)`` =
``--spectral-sizes``: CPU-time ratio, traced peak memory of each route, and the agreement
``||U_L U_L^T - U_D U_D^T||_F / ||U_D U_D^T||_F``.

    python benchmarks/bench_sensing.py [--d 400 --r 8 --m 40000 --repeats 15]
    python benchmarks/bench_sensing.py --spectral-only
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse
import time
import tracemalloc

import numpy as np

from quadnet import GaussianSensing


def best_times(fns: dict, repeats: int) -> dict:
    """Minimum CPU time (``time.process_time``: one BLAS thread, so time preempted by other
    processes is not counted) of each callable, measured interleaved (round-robin) so that
    a change in machine load (cache contention) affects all of them alike."""
    for fn in fns.values():
        fn()  # warm-up
    out = dict.fromkeys(fns, np.inf)
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.process_time()
            fn()
            out[name] = min(out[name], time.process_time() - t0)
    return out


def _peak_bytes(fn) -> int:
    tracemalloc.start()
    tracemalloc.reset_peak()
    base, _ = tracemalloc.get_traced_memory()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak - base


def spectral(sizes, repeats: int) -> list[dict]:
    """Lanczos vs dense ``spectral_init`` at each ``(d, r, m)``."""
    rows = []
    for d, r, m in sizes:
        prob = GaussianSensing.random(d, r, m, seed=0)
        fns = {"lanczos": lambda: prob.spectral_init(r, method="lanczos"),
               "dense": lambda: prob.spectral_init(r, method="dense")}
        t = best_times(fns, repeats)
        UL, UD = fns["lanczos"](), fns["dense"]()
        QD = UD @ UD.T
        agree = float(np.linalg.norm(UL @ UL.T - QD) / np.linalg.norm(QD))
        row = {"d": d, "r": r, "m": m, "t_lanczos_s": t["lanczos"], "t_dense_s": t["dense"],
               "lanczos_over_dense": t["lanczos"] / t["dense"],
               "peak_lanczos_MB": _peak_bytes(fns["lanczos"]) / 2**20,
               "peak_dense_MB": _peak_bytes(fns["dense"]) / 2**20,
               "relative_difference": agree}
        rows.append(row)
        print(f"  spectral_init d = {d}, r = {r}, m = {m}: lanczos {t['lanczos']:.3f} s, "
              f"dense {t['dense']:.3f} s, ratio lanczos/dense = {row['lanczos_over_dense']:.2f}; "
              f"peak extra memory {row['peak_lanczos_MB']:.1f} vs {row['peak_dense_MB']:.1f} MiB; "
              f"relative difference {agree:.1e}")
    return rows


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=400)
    ap.add_argument("--r", type=int, default=8)
    ap.add_argument("--m", type=int, default=40_000)
    ap.add_argument("--repeats", type=int, default=25)
    ap.add_argument("--spectral-sizes", default="400,5,20000;1000,5,20000;2000,5,8000",
                    help="d,r,m triples separated by ';'")
    ap.add_argument("--spectral-repeats", type=int, default=3)
    ap.add_argument("--spectral-only", action="store_true")
    args = ap.parse_args(argv)
    d, r, m = args.d, args.r, args.m
    sizes = [tuple(int(v) for v in t.split(",")) for t in args.spectral_sizes.split(";")]
    if args.spectral_only:
        print(f"spectral_init routes, 1 BLAS thread, min CPU time over "
              f"{args.spectral_repeats} interleaved repeats; load: {os.getloadavg()}")
        return {"spectral": spectral(sizes, args.spectral_repeats)}

    tracemalloc.start()
    prob = GaussianSensing.random(d, r, m, seed=0)
    rng = np.random.default_rng(1)
    U = rng.standard_normal((d, r)) / np.sqrt(d)
    xi = rng.standard_normal((d, r))
    W = rng.standard_normal((m, r))
    X = prob.X
    x_bytes = X.nbytes
    # memory: peak of one gradient, relative to what is already allocated
    tracemalloc.reset_peak()
    base, _ = tracemalloc.get_traced_memory()
    prob.factor_gradient(U)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    extra_grad = peak - base  # temporaries of the gradient (X, y already in `base`)
    resident = base  # includes X, y, U*, U, xi, W
    total_peak = resident + extra_grad

    t = best_times({"xu": lambda: X @ U, "xtw": lambda: X.T @ W,
                    "grad": lambda: prob.factor_gradient(U),
                    "hvp": lambda: prob.factor_hvp(U, xi),
                    "val": lambda: prob.factor_value(U)}, args.repeats)
    t_xu, t_xtw, t_grad, t_hvp, t_val = (t[k] for k in ("xu", "xtw", "grad", "hvp", "val"))

    unit = 8 * (d * d + m * r)
    out = {
        "d": d, "r": r, "m": m,
        "t_XU_ms": 1e3 * t_xu, "t_XtW_ms": 1e3 * t_xtw, "t_grad_ms": 1e3 * t_grad,
        "grad_ratio": t_grad / (t_xu + t_xtw),
        "hvp_ratio": t_hvp / (2 * t_xu + t_xtw),
        "value_ratio": t_val / t_xu,
        "X_MB": x_bytes / 2**20,
        "grad_temporaries_MB": extra_grad / 2**20,
        "grad_temporaries_over_8(d^2+mr)": extra_grad / unit,
        "peak_over_X_bytes": total_peak / x_bytes,
        "memory_budget_ok": total_peak <= 1.2 * x_bytes + 4 * unit,
    }
    print(f"GaussianSensing benchmark, d = {d}, r = {r}, m = {m}, 1 BLAS thread, "
          f"min CPU time over {args.repeats} repeats")
    print(f"  X U: {out['t_XU_ms']:.2f} ms   X^T W: {out['t_XtW_ms']:.2f} ms   "
          f"factor_gradient: {out['t_grad_ms']:.2f} ms")
    print(f"  factor_gradient / (X U + X^T W)      = {out['grad_ratio']:.3f}   (target <= 1.15)")
    print(f"  factor_hvp / (X U + X xi + X^T W)    = {out['hvp_ratio']:.3f}")
    print(f"  factor_value / X U                   = {out['value_ratio']:.3f}")
    print(f"  bytes(X) = {out['X_MB']:.1f} MiB; gradient temporaries = "
          f"{out['grad_temporaries_MB']:.2f} MiB = "
          f"{out['grad_temporaries_over_8(d^2+mr)']:.2f} x 8 (d^2 + m r) bytes")
    print(f"  peak traced memory / bytes(X)        = {out['peak_over_X_bytes']:.3f}   "
          f"(all resident arrays included; target <= 1.2 + O(d^2 + m r))")
    out["spectral"] = spectral(sizes, args.spectral_repeats)
    return out


if __name__ == "__main__":
    main()
