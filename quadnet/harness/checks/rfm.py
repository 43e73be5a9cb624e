"""Check ``rfm``: FACT-RFM and NFA-RFM grok ``(x+y) mod 61`` and learn sparse parity (THEORY.md §6).

(a) ``(x+y) mod p``, 50% split: test accuracy vs iteration for FACT-RFM (exponential
inner-product kernel, ``L = 3``, ``M ← (FFᵀ)^{1/2}`` trace-normalised, ridgeless) and NFA-RFM
(Gaussian kernel, ``L = 2.5``, centred ``AGOP^{1/2}``, ridgeless), the iteration from which each
stays at 100%, the block-circulant score of the final ``M``, heatmaps of ``M``; FACT with the
other kernels is reported as measured. (b) Sparse parity ``d = 50, k = 3``: final test
accuracy vs training size for both updates, and the smallest size from which every larger one
reaches 99%. (c) The fixed-point residual ``‖F/‖F‖ − M/‖M‖‖`` at the end. Also: the closed forms
of ``F`` and the AGOP against finite differences for every kernel.

Quick mode (``--quick``): ``p = 23`` with a 75% split (at 50% small ``p`` does not reach 100%),
one seed, fewer iterations (same bounds 30/25, fixed-point residual only reported); parity only
FACT at ``n = 1000``.
"""

from __future__ import annotations

import numpy as np

from quadnet.features.kernels import KERNELS, kernel_agop, kernel_fact_matrix, kernel_matrix
from quadnet.features.rfm import RecursiveFeatureMachine, modular_arithmetic, sparse_parity
from quadnet.harness.checks._base import CheckContext, CheckResult, register

FACT_CFG = {"kernel": "exp_inner", "bandwidth": 3.0, "update": "fact", "fact_form": "ffT",
            "normalize": "trace", "ridge": 0.0}
NFA_CFG = {"kernel": "gaussian", "bandwidth": 2.5, "update": "nfa", "centre_agop": True,
           "normalize": None, "ridge": 0.0}
OTHER_FACT = {"gaussian": 2.5, "quadratic": 1.0, "laplace": 2.5}
PARITY_CFG = {"kernel": "gaussian", "bandwidth": 7.0, "ridge": 0.0, "block_size": 0}
STAY = 5  # "stays at 100%" = every later iterate up to the horizon, at least STAY of them


def _reach_and_stay(acc: list[float]) -> int | None:
    """First iteration from which test accuracy is 100% up to the end (≥ STAY iterations)."""
    a = np.asarray(acc)
    for t in range(len(a) - STAY):
        if np.all(a[t:] == 1.0):
            return t
    return None


def _fd_errors(ctx: CheckContext) -> dict[str, float]:
    """Max relative error of F, AGOP and centred AGOP against 5-point central differences."""
    rng = ctx.rng("rfm", "fd")
    n, d, c, L, h = 9, 5, 3, 1.7, 1e-3
    X = rng.standard_normal((n, d))
    A = rng.standard_normal((n, c))
    R = rng.standard_normal((d, d))
    M = R @ R.T / d + 0.1 * np.eye(d)
    out = {}
    for kernel in KERNELS:
        G = np.zeros((n, c, d))
        for k in range(d):
            e = np.zeros(d)
            e[k] = h

            def f(Z, kernel=kernel):
                # translation-invariant kernels: the self term has gradient 0 at x_i (Laplace:
                # by convention at its cusp), so it is left out of the differences
                K = kernel_matrix(kernel, Z, X, M, L)
                if KERNELS[kernel]:
                    K[np.diag_indices(n)] = 0.0
                return K @ A

            G[:, :, k] = (-f(X + 2 * e) + 8 * f(X + e) - 8 * f(X - e) + f(X - 2 * e)) / (12 * h)
        Gc = G - G.mean(axis=0)
        ref = {"F": np.einsum("ic,ick,il->kl", A, G, X),
               "AGOP": np.einsum("ick,icl->kl", G, G) / n,
               "AGOP_c": np.einsum("ick,icl->kl", Gc, Gc) / n}
        got = {"F": kernel_fact_matrix(kernel, X, A, M, L), "AGOP": kernel_agop(kernel, X, A, M, L),
               "AGOP_c": kernel_agop(kernel, X, A, M, L, centre=True)}
        out[kernel] = max(float(np.linalg.norm(got[k] - ref[k]) / np.linalg.norm(ref[k]))
                          for k in ref)
    return out


def _modular(ctx: CheckContext, p: int, frac: float, seeds: int, cfg: dict, iters: int,
             tag: str) -> list[dict]:
    runs = []
    for s in ctx.progress(range(seeds), desc=f"rfm {tag}"):
        data = modular_arithmetic(p, "add", frac, seed=ctx.rng("rfm", "mod", p, s))
        m = RecursiveFeatureMachine(iters=iters, block_size=p, **cfg)
        m.fit(data.X_train, data.y_train, data.X_test, data.y_test)
        h = m.history_
        runs.append({"val_acc": h["val_acc"], "reach": _reach_and_stay(h["val_acc"]),
                     "final_errors": round((1 - h["val_acc"][-1]) * len(data.y_test)),
                     "circulant": h["circulant_score"][-1],
                     "residual": h["fixed_point_residual"][-1], "M": m.M_})
    return runs


def _parity(ctx: CheckContext, sizes: list[int], iters: int, updates: tuple[str, ...]
            ) -> dict[str, list[float]]:
    acc: dict[str, list[float]] = {u: [] for u in updates}
    for n in ctx.progress(sizes, desc="rfm parity"):
        data = sparse_parity(50, 3, n, n_test=1000, seed=ctx.rng("rfm", "parity", n))
        for upd, accs in acc.items():
            m = RecursiveFeatureMachine(update=upd, iters=iters, **PARITY_CFG)
            m.fit(data.X_train, data.y_train)
            accs.append(m.accuracy(data.X_test, data.y_test))
    return acc


def _threshold(sizes: list[int], acc: list[float], level: float = 0.99) -> float:
    """Smallest size from which every larger size reaches ``level`` (inf if none)."""
    for i, n in enumerate(sizes):
        if all(a >= level for a in acc[i:]):
            return float(n)
    return float("inf")


@register("rfm", "FACT-RFM groks (x+y) mod 61 and learns sparse parity, like NFA-RFM", order=60)
def run(ctx: CheckContext) -> CheckResult:
    import matplotlib.pyplot as plt

    res = CheckResult("rfm", "FACT-RFM groks (x+y) mod 61 and learns sparse parity, like NFA-RFM")
    q = ctx.quick
    p, frac, seeds = (23, 0.75, 1) if q else (61, 0.5, 5)
    it_fact, it_nfa = (19, 16) if q else (35, 30)
    bound_fact, bound_nfa = 30, 25  # the bounds, quick mode included
    mode = f" [quick: p={p}, {int(frac * 100)}% split, 1 seed]" if q else ""

    # closed forms vs finite differences
    fd = _fd_errors(ctx)
    res.metrics["fd_relative_error"] = fd
    for kernel, err in fd.items():
        res.add(f"F, AGOP, centred AGOP closed forms vs finite differences ({kernel})", err, 1e-7,
                paper="<= 1e-7 (issue)")

    # (a) modular addition
    fact = _modular(ctx, p, frac, seeds, FACT_CFG, it_fact, "FACT")
    nfa = _modular(ctx, p, frac, seeds, NFA_CFG, it_nfa, "NFA")
    for name, runs, bound in (("FACT", fact, bound_fact), ("NFA", nfa, bound_nfa)):
        reach = [r["reach"] for r in runs]
        ok = sum(r is not None and r <= bound for r in reach)
        res.metrics[f"{name}_reach_iteration"] = reach
        res.metrics[f"{name}_final_test_errors"] = [r["final_errors"] for r in runs]
        res.metrics[f"{name}_circulant_score"] = [r["circulant"] for r in runs]
        res.metrics[f"{name}_fixed_point_residual"] = [r["residual"] for r in runs]
        cfg = FACT_CFG if name == "FACT" else NFA_CFG
        res.add(f"{name}-RFM ({cfg['kernel']}, L={cfg['bandwidth']:g}) on (x+y) mod {p}: seeds at "
                f"100% test accuracy by iteration <= {bound} and staying{mode}", ok, seeds,
                relation=">=", paper=f"100% after ~75 iterations (seed); {seeds}/{seeds} by <= "
                f"{bound} (issue)")
        worst = max((r if r is not None else np.inf) for r in reach)
        res.add(f"{name}-RFM on (x+y) mod {p}: latest iteration reaching 100% to stay{mode}",
                worst, bound, paper="~75 (seed)")
        res.add(f"{name}-RFM block-circulant score of final M (min over seeds){mode}",
                min(r["circulant"] for r in runs), 0.9, relation=">=",
                paper="block-circulant M (seed)")
    # residual 0.1 <=> cos(F, M) >= 0.995 (||a - b||^2 = 2 - 2 cos for unit a, b)
    # (the small quick problem is still far from its fixed point after 19 iterations: reported)
    res.add(f"FACT-RFM fixed-point residual ||F/||F|| - M/||M|||| at the end (max over seeds)"
            f"{mode}", max(r["residual"] for r in fact), None if q else 0.1,
            relation="=" if q else "<=", passed=True if q else None,
            paper="FACT fixed point W^T W = FACT (seed)")

    others = {}
    if not q:
        for kernel, bw in OTHER_FACT.items():
            cfg = dict(FACT_CFG, kernel=kernel, bandwidth=bw)
            run_ = _modular(ctx, p, frac, 1, cfg, it_fact, f"FACT {kernel}")[0]
            others[kernel] = run_
            res.add(f"FACT-RFM with the {kernel} kernel (L={bw:g}) on (x+y) mod {p}: test errors "
                    f"after {it_fact} iterations (reported, 1 seed)", run_["final_errors"], None,
                    relation="=", passed=True, paper="Gaussian/quadratic stall 1-7 errors (issue)")
        res.metrics["other_kernels"] = {k: {"final_test_errors": v["final_errors"],
                                            "reach": v["reach"], "circulant": v["circulant"]}
                                        for k, v in others.items()}

    # (b) sparse parity
    sizes = [1000] if q else [500, 750, 1000, 1250, 1500, 2000, 2500]
    par = _parity(ctx, sizes, 8 if q else 12, ("fact",) if q else ("fact", "nfa"))
    res.metrics["parity_sizes"] = sizes
    res.metrics["parity_test_accuracy"] = par
    if q:
        res.add("sparse parity d=50, k=3, n=1000: FACT-RFM test accuracy [quick]", par["fact"][0],
                0.99, relation=">=", paper="FACT solves from n=1000 (issue)")
    else:
        tf, tn = _threshold(sizes, par["fact"]), _threshold(sizes, par["nfa"])
        res.metrics["parity_threshold"] = {"fact": tf, "nfa": tn}
        res.add("sparse parity d=50, k=3: FACT-RFM smallest n with >= 99% test accuracy",
                tf, 1000, paper="1000 (issue)")
        res.add("sparse parity d=50, k=3: NFA-RFM smallest n with >= 99% test accuracy",
                tn, 2500, paper="~2000 (issue)")
        res.add("sparse parity: FACT threshold / NFA threshold", tf / tn, 1.0,
                paper="FACT needs fewer samples (issue)")

    # figures
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    for ax, name, runs, bound in ((axes[0], "FACT-RFM (exp inner product, L=3)", fact, bound_fact),
                                  (axes[1], "NFA-RFM (Gaussian, L=2.5)", nfa, bound_nfa)):
        for s, r in enumerate(runs):
            ax.plot(np.arange(len(r["val_acc"])), 100 * np.asarray(r["val_acc"]), lw=1.2,
                    label=f"seed {s}")
        ax.axvline(bound, color="k", ls=":", lw=1, label=f"issue bound ({bound})")
        if not q:
            ax.axvline(75, color="r", ls="--", lw=1, label="seed doc: ~75")
        ax.set_title(f"{name}, (x+y) mod {p}", fontsize=9)
        ax.set_xlabel("RFM iteration")
        ax.legend(fontsize=7, loc="lower right")
    axes[0].set_ylabel("test accuracy (%)")
    res.figures += ctx.savefig(fig, "rfm_grokking")

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), layout="constrained")
    for ax, name, runs in ((axes[0], "FACT-RFM", fact), (axes[1], "NFA-RFM", nfa)):
        Mf = runs[0]["M"]
        im = ax.imshow(Mf - np.diag(np.diag(Mf)), cmap="RdBu_r")
        ax.set_title(f"{name} final M (diagonal removed)\nblock-circulant score "
                     f"{runs[0]['circulant']:.3f}", fontsize=9)
        ax.set_xlabel("input coordinate (e_a | e_b)")
        ax.set_ylabel("input coordinate (e_a | e_b)")
        fig.colorbar(im, ax=ax, fraction=0.046)
    res.figures += ctx.savefig(fig, "rfm_M_heatmaps")

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for upd, mk in (("fact", "o-"), ("nfa", "s--")):
        if upd not in par:
            continue
        ax.plot(sizes, 100 * np.asarray(par[upd]), mk, label=f"{upd.upper()}-RFM")
    ax.axhline(99, color="k", ls=":", lw=1, label="success: 99%")
    ax.axvline(1000, color="C0", ls=":", lw=1, label="issue: FACT from 1000")
    ax.axvline(2000, color="C1", ls=":", lw=1, label="issue: NFA ~2000")
    ax.set_xlabel("training size n")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title("sparse parity d=50, k=3 (Gaussian kernel, L=7)", fontsize=9)
    ax.legend(fontsize=7)
    res.figures += ctx.savefig(fig, "rfm_parity")
    return res
