"""quadnet's recursive feature machine against xRFM 0.4.5, side by side on the same data.

Sparse parity at d = 50 (quadnet.features.sparse_parity): for each cell both libraries fit the
same training set and are scored on the same 1,000 test points. Each fit runs in its own child
process (spawn), so its peak RSS (``ru_maxrss``) is its own, under an address-space limit
(``--memory-gb``) so that no fit can take the machine down. Cells are interleaved: quadnet then
xRFM for each cell, in one run, with the machine load printed before and after.

quadnet runs the sparse-parity recipe of ``quadnet verify parity`` (Gaussian kernel
exp(-||x - z||_M^2 / (2 L^2)), L = 7, FACT update, 12 iterations, ridge 1e-3, solver "auto").
xRFM runs the same kernel (its ``LpqLaplaceKernel`` with p = q = 2 is exp(-||x - z||_M^2 / b^2),
so b = sqrt(2) L), the same ridge and iterations, AGOP (NFA) updates as it implements them,
on the CPU, with a separate 1,000-point validation set for its early stopping (it keeps the best
iterate on validation data), in float32 as it runs by default.

Usage::

    python benchmarks/bench_xrfm.py                     # k=3 n=5000, k=4 n=10000
    python benchmarks/bench_xrfm.py --cell 4:50000      # the k = 4 threshold cell
    python benchmarks/bench_xrfm.py --only quadnet      # skip xRFM

xRFM is an optional benchmark dependency: ``pip install xrfm==0.4.5`` (it needs torch).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import sys
import time

D, L, ITERS, RIDGE, N_TEST = 50, 7.0, 12, 1e-3, 1000


def _limit(memory_gb: float) -> None:
    lim = int(memory_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (lim, lim))


def _data(k: int, n: int, seed: int):
    from quadnet.features import sparse_parity

    ds = sparse_parity(D, k, n + N_TEST, n_test=N_TEST, seed=seed)
    # the first n rows train, the next N_TEST validate (xRFM's early stopping), then test
    return (ds.X_train[:n], ds.y_train[:n], ds.X_train[n:], ds.y_train[n:], ds.X_test,
            ds.y_test)


def _quadnet(k, n, seed, update, memory_gb, out, early=False):
    _limit(memory_gb)
    import numpy as np

    from quadnet.features import RecursiveFeatureMachine

    Xtr, ytr, Xva, yva, Xte, yte = _data(k, n, seed)
    t0, c0 = time.perf_counter(), time.process_time()
    m = RecursiveFeatureMachine(kernel="gaussian", bandwidth=L, update=update, iters=ITERS,
                                ridge=RIDGE, block_size=0, solver="auto",
                                memory_limit=int(memory_gb * 2**30 * 0.9),
                                early_stopping=1.1 if early else None, seed=seed)
    if early:  # xRFM's rule and multiplier, on the same validation set
        m.fit(Xtr, ytr, Xva, yva)
    else:
        m.fit(Xtr, ytr)
    acc = m.accuracy(Xte, yte)
    info = getattr(m, "solver_info_", None)
    solver = str(info[-1].solver) if info else "?"
    out.put({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0,
             "acc": float(acc), "solver": solver,
             "rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
             "dtype": "float64", "fits": m.n_iter_ + 1, "best_iter": m.best_iter_})
    del np


def _quadnet_early(k, n, seed, update, memory_gb, out):
    _quadnet(k, n, seed, update, memory_gb, out, early=True)


def _xrfm(k, n, seed, update, memory_gb, out):
    _limit(memory_gb)
    import numpy as np
    import torch
    from xrfm.rfm_src.kernels import LpqLaplaceKernel
    from xrfm.rfm_src.recursive_feature_machine import RFM

    torch.set_num_threads(os.cpu_count() or 1)
    Xtr, ytr, Xva, yva, Xte, yte = (torch.from_numpy(a.astype(np.float32))
                                    for a in _data(k, n, seed))
    t0, c0 = time.perf_counter(), time.process_time()
    model = RFM(kernel=LpqLaplaceKernel(bandwidth=2**0.5 * L, p=2.0, q=2.0), iters=ITERS,
                device="cpu", verbose=False, tuning_metric="mse")
    calls = []  # count kernel fits (early stopping may end the loop)
    fit_predictor = model.fit_predictor
    model.fit_predictor = lambda *a, **kw: (calls.append(1), fit_predictor(*a, **kw))[1]
    model.fit((Xtr, ytr), (Xva, yva), reg=RIDGE, solver="cholesky")
    pred = model.predict(Xte).numpy().reshape(-1)
    acc = float(np.mean(np.sign(pred) == yte.numpy().reshape(-1)))
    out.put({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0, "acc": acc,
             "solver": "cholesky (torch)",
             "rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
             "dtype": "float32", "fits": len(calls), "best_iter": getattr(model, "best_iter", None)})


def _run(target, *args):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=target, args=(*args, q))
    p.start()
    p.join()
    if p.exitcode != 0:
        return {"error": f"exit code {p.exitcode} (memory limit or crash)"}
    return q.get()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cell", action="append", metavar="K:N",
                    help="a (k, n) cell (repeatable; default 3:5000 and 4:10000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--update", default="fact", choices=("fact", "nfa"),
                    help="quadnet's update (xRFM implements AGOP updates only)")
    ap.add_argument("--memory-gb", type=float, default=14.0, help="address-space limit per fit")
    ap.add_argument("--only", choices=("quadnet", "xrfm"))
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    cells = [tuple(int(v) for v in c.split(":")) for c in (args.cell or ["3:5000", "4:10000"])]
    print(f"load before: {os.getloadavg()}", flush=True)
    rows = []
    for k, n in cells:
        for lib, target in (("quadnet", _quadnet), ("quadnet, early stopping", _quadnet_early),
                            ("xRFM 0.4.5", _xrfm)):
            if args.only and not lib.lower().startswith(args.only):
                continue
            res = _run(target, k, n, args.seed, args.update, args.memory_gb)
            res |= {"lib": lib, "k": k, "n": n, "load": os.getloadavg()[0]}
            rows.append(res)
            print(json.dumps(res), flush=True)
    print(f"load after: {os.getloadavg()}", flush=True)
    print("\n| k | n | library | solver | kernel fits | test acc | wall s | CPU s | peak RSS GB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['k']} | {r['n']} | {r['lib']} | {r['error']} | | | | | |")
        else:
            print(f"| {r['k']} | {r['n']} | {r['lib']} | {r['solver']} | {r.get('fits', '')} | "
                  f"{r['acc']:.3f} | "
                  f"{r['wall']:.0f} | {r['cpu']:.0f} | {r['rss_gb']:.2f} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
