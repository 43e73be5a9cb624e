"""Benchmark: ``quadnet.PSDQuotient`` vs pymanopt 2.2.1 ``PSDFixedRank`` (quadnet theory §1, §7).

Same ``(d, r)``, same inputs (Gaussian full-rank points, so both compute the same
mathematics), one BLAS thread for both (``threadpoolctl.threadpool_limits(1)``), rounds
interleaved (every operation of both libraries once per round, in alternating order), the
median over ``--rounds`` (default 7) of the per-call time of each. Operations: ``retraction``,
``exp``, ``projection``, ``dist``, ``log``, ``transport``. At full rank pymanopt's operations
are the same mathematics: ``U + xi``; ``xi - U Omega`` with ``Omega`` from
``scipy.linalg.solve_continuous_lyapunov`` (Bartels–Stewart) where quadnet uses one
``eigh(U^T U)``; ``log = V R - U`` with ``R`` the Procrustes factor over the full ``O(r)``
(improper rotations included, as quadnet) and ``dist = ||log||``; transport by projection.
They differ off the full-rank stratum (pymanopt's solve degenerates; quadnet switches to an
SVD), which this benchmark does not time.

Also the validation overhead: a public call vs its raw kernel
(:mod:`quadnet.geometry._kernels`) at ``(10, 2)``, ``1 - t_kernel / t_public``.

    python benchmarks/bench_geometry.py [--rounds 7] [--quick]

Prints the machine load (``uptime``) and two markdown tables.
"""

from __future__ import annotations

import argparse
import subprocess

import numpy as np
import pymanopt
from threadpoolctl import threadpool_limits

import quadnet.geometry._kernels as K
from _timing import per_call as _per_call  # wall seconds per call (time.perf_counter)
from quadnet import PSDQuotient

OPS = ("retraction", "exp", "projection", "dist", "log", "transport")
SIZES = ((10, 2), (100, 5), (1000, 20))


def _calls(M, U, V, Z):
    return {
        "retraction": lambda: M.retraction(U, Z),
        "exp": lambda: M.exp(U, Z),
        "projection": lambda: M.projection(U, Z),
        "dist": lambda: M.dist(U, V),
        "log": lambda: M.log(U, V),
        "transport": lambda: M.transport(U, V, Z),
    }


def _kernels(U, V, Z):
    return {
        "retraction": lambda: U + Z,
        "exp": lambda: U + Z,
        "projection": lambda: K.horizontal_part(K.frame(U), Z),
        "dist": lambda: K.fro_norm(U @ K.procrustes(U, V) - V),
        "log": lambda: V @ K.procrustes(V, U) - U,
        "transport": lambda: K.horizontal_part(K.frame(V), Z),
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="3 rounds, shorter budgets")
    args = ap.parse_args(argv)
    rounds = 3 if args.quick else max(5, args.rounds)
    budget = 0.01 if args.quick else 0.04
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    rows, over = [], []
    with threadpool_limits(1):
        for d, r in SIZES:
            rng = np.random.default_rng(d)
            U, V, Z = rng.standard_normal((3, d, r))
            ours = _calls(PSDQuotient(d, r), U, V, Z)
            theirs = _calls(pymanopt.manifolds.PSDFixedRank(d, r), U, V, Z)
            kern = _kernels(U, V, Z)
            # same answers (full rank): the comparison is of the same mathematics
            for op in OPS:
                a, b = ours[op](), theirs[op]()
                err = float(np.linalg.norm(np.asarray(a) - np.asarray(b))
                            / max(np.linalg.norm(np.asarray(b)), 1e-300))
                assert err < 1e-8, (op, d, r, err)
            t = {(op, w): [] for op in OPS for w in ("ours", "theirs", "kernel")}
            for k in range(rounds):
                for op in OPS:
                    order = (("ours", "theirs", "kernel") if k % 2 == 0
                             else ("theirs", "kernel", "ours"))
                    for w in order:
                        fn = {"ours": ours, "theirs": theirs, "kernel": kern}[w][op]
                        t[op, w].append(_per_call(fn, budget))
            for op in OPS:
                ratio = float(np.median(np.array(t[op, "ours"]) / np.array(t[op, "theirs"])))
                rows.append((d, r, op, 1e6 * float(np.median(t[op, "ours"])),
                             1e6 * float(np.median(t[op, "theirs"])), ratio))
                if (d, r) == (10, 2):
                    share = float(np.median(1 - np.array(t[op, "kernel"])
                                            / np.array(t[op, "ours"])))
                    over.append((op, 1e6 * float(np.median(t[op, "ours"])),
                                 1e6 * float(np.median(t[op, "kernel"])), share))
    print(f"\nrounds: {rounds} interleaved, median; one BLAS thread (threadpoolctl)\n")
    print("| (d, r) | operation | PSDQuotient (us) | PSDFixedRank (us) | ratio | <= 1.5x |")
    print("|---|---|---:|---:|---:|:---:|")
    for d, r, op, a, b, ratio in rows:
        print(f"| ({d}, {r}) | {op} | {a:.2f} | {b:.2f} | {ratio:.2f} | "
              f"{'yes' if ratio <= 1.5 else 'no'} |")
    print("\nValidation overhead at (10, 2): public call vs raw kernel\n")
    print("| operation | public (us) | kernel (us) | overhead share | <= 20% |")
    print("|---|---:|---:|---:|:---:|")
    for op, a, b, share in over:
        ok = "yes" if share <= 0.2 else "no"
        print(f"| {op} | {a:.2f} | {b:.2f} | {100 * share:.0f}% | {ok} |")
    print("\nload:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
