"""Benchmark: ``small_init_limit`` descent on rank-one sensing, the ``O(m d r)`` path vs dense.

``quadnet.small_init_limit(GaussianSensing, d=50, eps, eta=...)`` takes every step through
``GaussianSensing.factor_gradient`` (``X^T (res * (X U))``: two ``m x d`` by ``d x r`` products,
never an ``A_i``). The reference is the same descent written directly in numpy on the dense
``m x d x d`` stack ``A_i = x_i x_i^T``: ``Q = U U^T``, ``res = A_flat vec(Q) - y``,
``S = (res A_flat)/m``, ``U <- U - 2 eta S U``. Both run the same fixed number of steps from the
same ``sqrt(eps) W`` (their final factors agree to rounding, checked), timed interleaved in one
run (median of repeats); the small_init_limit time includes its convergence monitor. Two
widths: ``W = I`` (``r = d``, the default start) and a ``d x 2`` start ``W``.

Run: ``python benchmarks/bench_noncommuting.py`` (prints the machine load from ``uptime``).
"""

from __future__ import annotations

import subprocess
import time
import warnings

import numpy as np

import quadnet as qn
from quadnet.exceptions import ConvergenceWarning


def dense_descent(A_flat, y, U, eta, steps):
    m = A_flat.shape[0]
    d = U.shape[0]
    for _ in range(steps):
        Q = U @ U.T
        res = A_flat @ Q.reshape(-1) - y
        S = (res @ A_flat).reshape(d, d) / m
        U = U - 2.0 * eta * (S @ U)
    return U


def main(d: int = 50, m: int = 250, steps: int = 400, repeats: int = 5, seed: int = 0) -> dict:
    loss = qn.GaussianSensing.random(d, 2, m, seed=seed)
    A_flat = np.einsum("ia,ib->iab", loss.X, loss.X).reshape(m, d * d)   # the dense stack
    eta = 0.02 / float(np.linalg.norm(loss.gradient(np.zeros((d, d))), 2))
    eps = 1e-12
    out = {}
    for label, W in (("width d (W = I)", None),
                     ("width 2 (W = d x 2)", np.linalg.qr(
                         np.random.default_rng(1).standard_normal((d, 2)))[0])):
        U0 = np.sqrt(eps) * (np.eye(d) if W is None else W)
        t_fast, t_dense = [], []
        for _ in range(repeats):          # interleaved
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                res = qn.small_init_limit(loss, d, eps, eta=eta, W=W, max_steps=steps)
            t_fast.append(time.perf_counter() - t)
            t = time.perf_counter()
            Ud = dense_descent(A_flat, loss.y, U0, eta, steps)
            t_dense.append(time.perf_counter() - t)
        agree = float(np.linalg.norm(res.U - Ud) / np.linalg.norm(Ud))
        f, g = float(np.median(t_fast)), float(np.median(t_dense))
        out[label] = {"fast_s": f, "dense_s": g, "ratio": g / f, "agreement": agree,
                      "steps": res.history["steps"]}
        print(f"{label}: small_init_limit (O(m d r)) {f * 1e3:.1f} ms, dense m x d x d "
              f"{g * 1e3:.1f} ms for {steps} steps -> dense / O(mdr) = {g / f:.1f}x "
              f"(final factors agree to {agree:.1e})")
    print(f"d = {d}, m = {m}, dense stack {A_flat.nbytes / 1e6:.0f} MB; load: "
          + subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return out


if __name__ == "__main__":
    main()
