"""Blocked Cholesky (quadnet._lapack) against LAPACK's threaded dpotrf, interleaved in one run.

Gaussian kernel matrices of sparse-parity data plus ridge 1e-3 (the direct RFM solver's
matrix). Reports wall and CPU seconds of each route per size and the relative difference of
the factors. Run:  python benchmarks/bench_cholesky.py --sizes 4000 8000 12000 --reps 2
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy.linalg import lapack


def kernel_matrix(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.choice([-1.0, 1.0], size=(n, 50))
    sq = (X * X).sum(1)
    K = np.asfortranarray(np.exp(-np.maximum(sq[:, None] + sq[None] - 2 * X @ X.T, 0) / (2 * 49.0)))
    K.reshape(-1, order="F")[:: n + 1] += 1e-3
    return K


def main() -> None:
    from quadnet._lapack import cholesky_lower_inplace
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[4000, 8000])
    ap.add_argument("--reps", type=int, default=2)
    a = ap.parse_args()
    print(f"load {os.getloadavg()[0]:.2f}")
    print("| n | threaded dpotrf wall / CPU s | blocked wall / CPU s | wall ratio | rel. diff of L |")
    print("|---|---|---|---|---|")
    for n in a.sizes:
        K = kernel_matrix(n)
        t = {"lapack": [], "blocked": []}
        for _ in range(a.reps):
            for name in ("lapack", "blocked"):
                buf = K.copy(order="F")
                w0, c0 = time.perf_counter(), time.process_time()
                if name == "lapack":
                    buf, info = lapack.dpotrf(buf, lower=1, clean=0, overwrite_a=1)
                    L1 = buf
                else:
                    info = cholesky_lower_inplace(buf)
                    L2 = buf
                t[name].append((time.perf_counter() - w0, time.process_time() - c0))
                assert info == 0
        d = np.linalg.norm(np.tril(L1) - np.tril(L2)) / np.linalg.norm(np.tril(L1))
        lw, lc = min(t["lapack"])
        bw, bc = min(t["blocked"])
        print(f"| {n:,} | {lw:.2f} / {lc:.2f} | {bw:.2f} / {bc:.2f} | {bw / lw:.3f} | {d:.1e} |",
              flush=True)
        del K, L1, L2
    print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
