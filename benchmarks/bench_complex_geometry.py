"""Benchmark: ``PSDQuotient(d, r, field="complex")`` against the real manifold, and the real
path against a reference tree (quadnet target: complex operations cost <= 4x the real ones at
the same ``(d, r)``; the real path is not slower than before).

Two measurements, one BLAS thread (``threadpoolctl.threadpool_limits(1)``), in CPU time of
this process (``time.process_time``). Each round times
the two sides back to back (order alternating); the tables give the minimum over rounds of
each side's mean per-call time (the estimate least disturbed by other load, as ``timeit``
recommends) and the median over rounds of the paired ratio (robust to load that changes
between rounds):

* ``--reference DIR``: the real manifold of this tree against the one of the tree at ``DIR``
  (a ``git archive`` of an earlier commit: ``git archive <rev> quadnet | tar -x -C DIR``),
  imported as ``quadnet_ref`` in the same process and timed alternately, round by round, on
  the same inputs (and the outputs compared bit for bit);
* complex against real in this tree, interleaved operation by operation in one process, on
  CN(0, 1) and N(0, 1) factors of the same ``(d, r)``.

    python benchmarks/bench_complex_geometry.py [--rounds 7] [--reference /tmp/qbase] [--quick]

Prints the machine load and markdown tables (ratios: new / reference, complex / real).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this tree

from _timing import per_call  # noqa: E402  (benchmarks/, the folder of this script)

OPS = ("retraction", "projection", "dist", "log", "transport", "inner_product", "norm",
       "egrad_to_rgrad", "ehess_to_rhess", "random_tangent_vector")
SIZES = ((10, 2), (100, 5), (1000, 20))


def _per_call(fn, budget: float) -> float:
    """CPU seconds per call of ``fn()`` (``time.process_time``: the time this process ran, not
    the time it waited for one of the two cores of a shared machine), repeated for ``budget``."""
    return per_call(fn, budget, clock=time.process_time)


def _calls(M, U, V, Z, W):
    return {
        "retraction": lambda: M.retraction(U, Z),
        "projection": lambda: M.projection(U, Z),
        "dist": lambda: M.dist(U, V),
        "log": lambda: M.log(U, V),
        "transport": lambda: M.transport(U, V, Z),
        "inner_product": lambda: M.inner_product(U, Z, W),
        "norm": lambda: M.norm(U, Z),
        "egrad_to_rgrad": lambda: M.euclidean_to_riemannian_gradient(U, Z),
        "ehess_to_rhess": lambda: M.euclidean_to_riemannian_hessian(U, Z, W, V),
        "random_tangent_vector": lambda: M.random_tangent_vector(U),
    }


def _points(d, r, field, seed=0):
    import numpy as np

    rng = np.random.default_rng([d, r, seed])
    if field == "real":
        return rng.standard_normal((4, d, r))
    g = rng.standard_normal((2, 4, d, r))
    return (g[0] + 1j * g[1]) * np.sqrt(0.5)


def _reference_module(tree: str):
    """The ``quadnet`` package of ``tree`` imported as ``quadnet_ref`` (a renamed copy in a
    temporary directory), so that both versions run interleaved in one process."""
    import importlib
    import re
    import shutil
    import tempfile

    tmp = tempfile.mkdtemp(prefix="quadnet_ref_")
    dst = os.path.join(tmp, "quadnet_ref")
    shutil.copytree(os.path.join(tree, "quadnet"), dst)
    for root, _, files in os.walk(dst):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(root, f)
                with open(path) as fh:
                    text = fh.read()
                with open(path, "w") as fh:
                    fh.write(re.sub(r"\bquadnet\b", "quadnet_ref", text))
    sys.path.insert(0, tmp)
    return importlib.import_module("quadnet_ref")


def _interleaved(calls_a: dict, calls_b: dict, rounds: int, budget: float) -> dict:
    """``op -> (min a, min b, median of b / a)``, the two timed back to back, round by round."""
    out = {}
    for op in OPS:
        ta, tb = [], []
        for k in range(rounds):
            pair = ((calls_a, ta), (calls_b, tb)) if k % 2 == 0 else ((calls_b, tb), (calls_a, ta))
            for calls, acc in pair:
                acc.append(_per_call(calls[op], budget))
        ratios = sorted(b / a for a, b in zip(ta, tb))
        out[op] = (min(ta), min(tb), ratios[len(ratios) // 2])
    return out


def reference_table(reference: str, rounds: int, budget: float) -> str:
    import numpy as np
    from threadpoolctl import threadpool_limits

    from quadnet import PSDQuotient

    ref = _reference_module(reference)
    lines = ["| (d, r) | operation | reference µs | this tree µs | this / reference (median of "
             "paired ratios) | same bits |", "| --- | --- | ---: | ---: | ---: | --- |"]
    with threadpool_limits(1):
        for d, r in SIZES:
            pts = _points(d, r, "real")
            new = _calls(PSDQuotient(d, r, seed=0), *pts)
            old = _calls(ref.PSDQuotient(d, r, seed=0), *pts)
            same = {op: bool(np.array_equal(np.asarray(new[op]()), np.asarray(old[op]())))
                    for op in OPS if op != "random_tangent_vector"}
            same["random_tangent_vector"] = bool(np.array_equal(
                PSDQuotient(d, r).random_tangent_vector(pts[0], 3),
                ref.PSDQuotient(d, r).random_tangent_vector(pts[0], 3)))
            for op, (t_ref, t_new, ratio) in _interleaved(old, new, rounds, budget).items():
                lines.append(f"| {d}x{r} | {op} | {1e6 * t_ref:.2f} | {1e6 * t_new:.2f} | "
                             f"{ratio:.3f} | {'yes' if same[op] else 'no'} |")
    return "\n".join(lines)


def complex_table(rounds: int, budget: float) -> str:
    from threadpoolctl import threadpool_limits

    from quadnet import PSDQuotient

    times = {}
    with threadpool_limits(1):
        for d, r in SIZES:
            real = _calls(PSDQuotient(d, r, seed=0), *_points(d, r, "real"))
            cplx = _calls(PSDQuotient(d, r, seed=0, field="complex"), *_points(d, r, "complex"))
            for op, pair in _interleaved(real, cplx, rounds, budget).items():
                times[(d, r, op)] = pair
    lines = ["| (d, r) | operation | real µs | complex µs | complex / real (median of paired "
             "ratios) |", "| --- | --- | ---: | ---: | ---: |"]
    for (d, r, op), (tr, tc, ratio) in times.items():
        lines.append(f"| {d}x{r} | {op} | {1e6 * tr:.2f} | {1e6 * tc:.2f} | {ratio:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reference", default=None, help="a tree holding an earlier quadnet/")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    rounds = 3 if args.quick else max(3, args.rounds)
    budget = 0.005 if args.quick else 0.01
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    if args.reference:
        print("\n### Real path: this tree against the reference\n")
        print(reference_table(args.reference, rounds, budget))
    print("\n### Complex against real, this tree\n")
    print(complex_table(rounds, budget))


if __name__ == "__main__":
    main()
