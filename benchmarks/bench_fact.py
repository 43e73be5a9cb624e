"""Costs behind ``quadnet.fact``, as ratios measured in one run.

1. Closed-form FACT ``−(2/λ) Q_a C`` against the definition evaluated with autograd per-sample
   gradients ``−(1/(nλ)) Σ (∇_h ℓ_i) h_iᵀ`` (quadratic net, ``n = 2000``, ``d = 20``).
2. The hand-derived objective gradient used by L-BFGS against ``autograd.value_and_grad`` of
   the same objective (why ``_fact_train`` does not use autograd in the inner loop).
3. Training the counterexample of ``nfa_counterexample``: L-BFGS alone (``polish=False``)
   against L-BFGS + Newton polish — the final gradient norm and the time.

Each timing is the minimum of ``REPEAT`` runs (the machine is shared).
Run: ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_fact.py``
"""

from __future__ import annotations

import time
import warnings

import autograd.numpy as anp
import numpy as np
from autograd import grad, value_and_grad

import quadnet as qn
from quadnet.features.training import _flatten, _make_objective, _make_value_and_grad

REPEAT = 5


def best_time(fn, repeat: int = REPEAT) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    rng = np.random.default_rng(0)
    n, d, width, lam = 2000, 20, 20, 1e-2
    X = rng.standard_normal((n, d))
    y = rng.standard_normal(n)
    net = qn.QuadraticNet(rng.standard_normal((width, d)) / np.sqrt(d),
                          rng.choice([-1.0, 1.0], width))
    W, a = net.W, net.a

    def fact_autograd():
        def loss_h(H):
            return 0.5 * anp.sum((anp.dot(anp.dot(H, W.T) ** 2, a) - y) ** 2)
        return -(grad(loss_h)(X).T @ X) / (n * lam)

    F1, F2 = qn.fact_matrix(net, X, y, lam), fact_autograd()
    t_closed = best_time(lambda: qn.fact_matrix(net, X, y, lam))
    t_auto = best_time(fact_autograd)
    print(f"1. FACT closed form {t_closed * 1e3:.2f} ms vs autograd per-sample {t_auto * 1e3:.2f} ms:"
          f" ratio {t_auto / t_closed:.1f}x (relative difference "
          f"{np.linalg.norm(F1 - F2) / np.linalg.norm(F2):.1e})")

    n2, d2 = 400, 7
    X2 = rng.standard_normal((n2, d2))
    y2 = rng.standard_normal(n2)
    net2 = qn.QuadraticNet(rng.standard_normal((d2, d2)))
    theta = _flatten(net2.params())
    vg_hand = _make_value_and_grad(net2, X2, y2, lam)
    vg_auto = value_and_grad(_make_objective(net2, X2, y2, lam))
    t_hand = best_time(lambda: [vg_hand(theta) for _ in range(100)]) / 100
    t_ag = best_time(lambda: [vg_auto(theta) for _ in range(100)]) / 100
    print(f"2. objective+gradient (n={n2}, d={d2}): hand-derived {t_hand * 1e6:.0f} us vs autograd "
          f"{t_ag * 1e6:.0f} us: ratio {t_ag / t_hand:.1f}x")

    ex = qn.nfa_counterexample(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", qn.ConvergenceWarning)
        t0 = time.perf_counter()
        plain = qn.train(ex.net0, ex.X, ex.y, ex.lam, polish=False)
        t_plain = time.perf_counter() - t0
        t0 = time.perf_counter()
        full = qn.train(ex.net0, ex.X, ex.y, ex.lam)
        t_full = time.perf_counter() - t0
    print(f"3. counterexample training: L-BFGS alone |grad J| = {plain.info.grad_norm:.1e} in "
          f"{t_plain:.2f} s ({plain.info.message}); with Newton polish |grad J| = "
          f"{full.info.grad_norm:.1e} in {t_full:.2f} s: time ratio {t_full / t_plain:.2f}, "
          f"gradient ratio {plain.info.grad_norm / full.info.grad_norm:.1e}")
    print(f"   stages: {full.info.stages}")


if __name__ == "__main__":
    main()
