"""Direct against iterative kernel solvers of a recursive feature machine, each in its own process.

One kernel fit at ``M = I`` (the solve, the FACT matrix from row blocks, the predictions on
1,000 test points), as one RFM iteration runs it, on sparse parity ``d = 50``, ``k = 4``
(Boix-Adsera, Mallinar, Simon & Belkin 2025), Gaussian kernel ``L = 7``, ridge ``λ = 10⁻³``.
Solvers: ``direct`` (in-place Cholesky, one ``n × n`` float64 array), ``iterative`` with float32
kernel storage (PCG + RPCholesky preconditioner + mixed-precision refinement) and with
recomputed kernel rows. Each case runs in a fresh subprocess, which reports its wall time,
CPU time (user + system), peak RSS (``ru_maxrss``), the memory estimate of
``kernel_memory_estimate`` and the solver record; the parent compares the test predictions
with the direct solve's: ``‖P − P_direct‖_F / ‖P_direct‖_F`` and the test accuracies.
The machine load (``uptime``) is printed before and after: times on a shared machine are only
comparable within one run.

Run (the n = 20,000 direct case needs ~3.5 GB): ``ulimit -v 8000000;
python benchmarks/bench_kernel_solvers.py [--n 2000 5000 10000 20000] [--recompute-max 5000]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

D, K_SUPPORT, L, RIDGE, N_TEST = 50, 4, 7.0, 1e-3, 1000


def _child(n: int, solver: str, storage: str, out: str, rank: int | None) -> None:
    from quadnet.features.rfm import accuracy, sparse_parity
    from quadnet.features.solvers import _predict, fit_kernel_machine, kernel_memory_estimate

    ds = sparse_parity(D, K_SUPPORT, n, n_test=N_TEST, seed=0)
    M = np.eye(D)
    t0, c0 = time.perf_counter(), time.process_time()
    fit = fit_kernel_machine("gaussian", ds.X_train, ds.y_train, M, L, ridge=RIDGE,
                             solver=solver, storage=storage if solver == "iterative" else "auto",
                             rank=rank, progress=False)
    P = _predict("gaussian", ds.X_test, ds.X_train, fit.coef, M, L)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    np.save(out, P)
    info = fit.info
    est = kernel_memory_estimate(n, D, 1, solver if solver == "direct" else "iterative",
                                 storage=storage if solver == "iterative" else "float32",
                                 rank=rank)
    print(json.dumps({
        "wall": wall, "cpu": cpu, "solve_s": info.seconds,
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9,
        "estimate_gb": est / 1e9, "iterations": info.iterations,
        "refinements": info.refinements, "residual": info.residual, "rank": info.rank,
        "test_acc": accuracy(P, ds.y_test)}))


def _fill_only(n: int) -> None:
    from quadnet.features.kernels import KernelRows
    from quadnet.features.rfm import sparse_parity
    from quadnet.features.solvers import _fill_kernel, kernel_memory_estimate

    print(f"before: {_uptime()}", flush=True)
    ds = sparse_parity(D, K_SUPPORT, n, n_test=N_TEST, seed=0)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    t0 = time.perf_counter()
    buf = np.empty((n, n), order="F")
    _fill_kernel(buf, KernelRows("gaussian", ds.X_train, np.eye(D), L), RIDGE)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"n = {n}: direct array filled in place in {time.perf_counter() - t0:.1f} s; peak RSS "
          f"{peak / 1e9:.2f} GB (interpreter + data before: {base / 1e9:.2f} GB; 8n^2 = "
          f"{8 * n * n / 1e9:.2f} GB; estimate {kernel_memory_estimate(n, D, 1) / 1e9:.2f} GB)")
    print(f"after: {_uptime()}", flush=True)


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:  # pragma: no cover
        return f"load {os.getloadavg()}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[2000, 5000, 10000, 20000])
    ap.add_argument("--recompute-max", type=int, default=5000,
                    help="largest n for the recompute storage (slow: O(n^2 d) per product)")
    ap.add_argument("--rank", type=int, default=None, help="RPCholesky rank (default 1000)")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows here")
    ap.add_argument("--fill-only", type=int, default=None, metavar="N",
                    help="only build the direct solver's n x n array in place (kernel + ridge) "
                         "and report the peak RSS: the direct solver's peak, since dpotrf "
                         "factors in place and the feature pass runs after the array is freed")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.fill_only:
        _fill_only(args.fill_only)
        return
    if args.child:
        n, solver, storage, out = args.child
        _child(int(n), solver, storage, out, args.rank)
        return
    print(f"before: {_uptime()}", flush=True)
    print(f"sparse parity d={D}, k={K_SUPPORT}, Gaussian L={L}, ridge={RIDGE:g}, "
          f"{N_TEST} test points; one kernel fit at M = I per subprocess", flush=True)
    hdr = (f"{'n':>6} {'solver':>18} {'wall s':>8} {'cpu s':>8} {'rss GB':>7} {'est GB':>7} "
           f"{'iters':>5} {'resid':>8} {'rel diff':>9} {'acc':>6}")
    print(hdr, flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.n:
            cases = [("direct", "float64"), ("iterative", "float32")]
            if n <= args.recompute_max:
                cases.append(("iterative", "recompute"))
            ref = None
            for solver, storage in cases:
                out = os.path.join(tmp, f"{n}_{solver}_{storage}.npy")
                cmd = [sys.executable, __file__, "--child", str(n), solver, storage, out]
                if args.rank:
                    cmd += ["--rank", str(args.rank)]
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    print(f"{n:6d} {solver + '/' + storage:>18} FAILED: "
                          f"{proc.stderr.strip().splitlines()[-1:]}", flush=True)
                    continue
                r = json.loads(proc.stdout.strip().splitlines()[-1])
                P = np.load(out)
                if solver == "direct":
                    ref = P
                r["rel_diff"] = (float(np.linalg.norm(P - ref) / np.linalg.norm(ref))
                                 if ref is not None else float("nan"))
                r.update(n=n, solver=solver, storage=storage)
                rows.append(r)
                print(f"{n:6d} {solver + '/' + storage:>18} {r['wall']:8.1f} {r['cpu']:8.1f} "
                      f"{r['peak_rss_gb']:7.2f} {r['estimate_gb']:7.2f} {r['iterations']:5d} "
                      f"{r['residual']:8.1e} {r['rel_diff']:9.1e} {r['test_acc']:6.3f}",
                      flush=True)
    print(f"after: {_uptime()}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
