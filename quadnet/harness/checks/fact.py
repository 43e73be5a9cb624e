"""Check ``fact``: features at convergence (FACT) vs the neural feature ansatz (quadnet theory §6).

Claims reproduced from Boix-Adsera et al. (2025) "The Features at Convergence Theorem"
(arXiv:2507.05644); the neural feature ansatz (NFA) and the AGOP are those of Radhakrishnan
et al. (2024):

(a) positive quadratic nets ``f = ‖Wx‖²`` trained to ``‖∇J‖ ≤ 1e-9`` on noisy low-rank
    targets, many seeds: ``cos(WᵀW, FACT)`` and ``cos(WWᵀ, bFACT)`` ≈ 1, and the identity
    error ``‖WᵀW − FACT‖_F`` never exceeds its bound ``‖U‖₂‖∇J‖/λ``;
(b) deep linear nets, depth ``L = 2..5``, vector outputs: ``cos(W₁ᵀW₁, FACT) ≥ 0.999`` while
    the NFA's best power ``argmax_s cos(W₁ᵀW₁, AGOP^s)`` is ``1/L`` (balancedness at critical
    points gives ``W₁ᵀW₁ = (PᵀP)^{1/L}`` exactly);
(c) the counterexample of :func:`quadnet.features.nfa_counterexample` (signed fixed second layer,
    width 7, one loud input direction): ``cos(FACT, WᵀW) ≥ 0.99`` but
    ``cos(AGOP^s, WᵀW) < 0.07`` for ``s ∈ {½, 1}``;
(d) along gradient descent from a small start the cosine ``cos(WᵀW, FACT)`` starts low and
    rises to ≈ 1 as the gradient vanishes.
"""

from __future__ import annotations

import warnings

import numpy as np

from quadnet._threads import single_threaded

from quadnet._linalg import sym
from quadnet.features.counterexample import counterexample_prediction, nfa_counterexample
from quadnet.exceptions import NotCriticalWarning
from quadnet.features.fact import (
    DeepLinearNet,
    QuadraticNet,
    agop,
    best_nfa_power,
    cosine,
    fact_matrix,
    nfa_cosines,
    psd_power,
)
from quadnet.features.training import fact_identity, gd_path, train
from quadnet.harness.checks._base import (
    COLUMN_WIDTH, OKABE_ITO, QUADNET_TARGET, CheckContext, CheckResult, figure, floor_note,
    register)

FT = {"kind": "theorem", "source": "Boix-Adsera et al. (2025)"}
FN = {"kind": "target", "source": "Boix-Adsera et al. (2025)"}
QT = QUADNET_TARGET

CLAIM = "At convergence W^TW = FACT (quadratic, deep linear nets); the NFA needs s=1/L and can fail"


def _quadratic_instance(rng: np.random.Generator):
    """Positive net of width d on ``y = ‖U*ᵀx‖² + 0.1·noise``, Gaussian ``x``, ``U*`` rank 2."""
    d = int(rng.integers(5, 11))
    n = 20 * d
    X = rng.standard_normal((n, d))
    U = rng.standard_normal((d, 2)) / np.sqrt(2)
    y = np.sum((X @ U) ** 2, axis=1) + 0.1 * rng.standard_normal(n)
    lam = float(10.0 ** rng.uniform(-3, -1))
    return QuadraticNet(0.5 * rng.standard_normal((d, d)) / np.sqrt(d)), X, y, lam


def _linear_instance(L: int, rng: np.random.Generator):
    """Depth-L linear net, d = 6 inputs, width 6, c = 4 outputs, target with singular values
    (3, 2, 1, 0.5) plus noise, λ = 1e-2; start from a 1/√width-scaled Gaussian (the origin is a
    local minimum for L ≥ 3, so the start must not be tiny)."""
    d, c, n = 6, 4, 200
    Ua, _ = np.linalg.qr(rng.standard_normal((c, c)))
    Va, _ = np.linalg.qr(rng.standard_normal((d, c)))
    M = Ua @ np.diag([3.0, 2.0, 1.0, 0.5]) @ Va.T
    X = rng.standard_normal((n, d))
    Y = X @ M.T + 0.1 * rng.standard_normal((n, c))
    Ws = [rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(L - 1)]
    Ws.append(rng.standard_normal((c, d)) / np.sqrt(d))
    return DeepLinearNet(Ws), X, Y, 1e-2


def _signed_gd_instance(rng: np.random.Generator):
    """Signed net (a = ±1, width 8, d = 8) from a 1e-2 start on a trace-free rank-2 target."""
    d, n = 8, 300
    X = rng.standard_normal((n, d))
    V, _ = np.linalg.qr(rng.standard_normal((d, 2)))
    B = V @ np.diag([2.0, -2.0]) @ V.T
    y = np.einsum("ij,jk,ik->i", X, B, X)
    a = np.r_[np.ones(d // 2), -np.ones(d // 2)]
    return QuadraticNet(1e-2 * rng.standard_normal((d, d)), a), X, y, 1e-2


def _part_a(ctx, res, n_seeds):
    worst = {"cos_fact": 1.0, "cos_bfact": 1.0, "err_over_bound": 0.0, "grad_norm": 0.0,
             "rel_error": 0.0, "cos_certified": 1.0}
    for i in ctx.progress(range(n_seeds), desc="fact (a)"):
        net0, X, y, lam = _quadratic_instance(ctx.rng("fact-a", i))
        # ask for 1e-10 so that the 1e-9 row below has a margin (Newton stops at the target)
        net = train(net0, X, y, lam, gtol=1e-10, warn=False)
        rep = fact_identity(net, X, y, lam)
        worst["cos_fact"] = min(worst["cos_fact"], rep.cos_fact)
        worst["cos_bfact"] = min(worst["cos_bfact"], rep.cos_bfact)
        # the bound is exact arithmetic; allow the rounding of forming FACT (~1e3 eps ||W^TW||)
        slack = rep.bound + 1e3 * np.finfo(float).eps * rep.wtw_norm
        worst["err_over_bound"] = max(worst["err_over_bound"], rep.error / slack)
        worst["grad_norm"] = max(worst["grad_norm"], net.info.grad_norm)
        worst["rel_error"] = max(worst["rel_error"], rep.rel_error)
        worst["cos_certified"] = min(worst["cos_certified"], rep.cos_lower_bound)
    res.metrics["a_positive_quadratic"] = {"seeds": n_seeds, **worst}
    res.add(f"(a) positive quadratic nets, {n_seeds} seeds: max 1 - cos(W^TW, FACT)",
            1.0 - worst["cos_fact"], 1e-5, paper="0 at convergence", **FT)
    res.add(f"(a) positive quadratic nets, {n_seeds} seeds: max 1 - cos(WW^T, bFACT)",
            1.0 - worst["cos_bfact"], 1e-5, paper="0 at convergence", **FT)
    res.add("(a) max ||W^TW - FACT|| / (||U||_2 ||grad J|| / lam)  (identity bound)",
            worst["err_over_bound"], 1.0, paper="<= 1 (exact identity)", **FT)
    res.add("(a) max ||grad J|| after training", worst["grad_norm"], 1e-9,
            paper="converged", **QT)
    res.add("(a) max 1 - certified lower bound on cos(W^TW, FACT) from ||grad J||",
            1.0 - worst["cos_certified"], 1e-5, paper="-", **QT)


def _part_b(ctx, res, n_seeds):
    powers = np.linspace(0.05, 1.25, 121)
    curves, table = {}, []
    for L in ctx.progress((2, 3, 4, 5), desc="fact (b) depths"):
        cos_f, s_best, cos_best, cos_s1, gns = [], [], [], [], []
        for i in range(n_seeds):
            net0, X, Y, lam = _linear_instance(L, ctx.rng("fact-b", L, i))
            net = train(net0, X, Y, lam, warn=False)
            W1 = net.Ws[0]
            WtW, G = W1.T @ W1, agop(net, X)
            cos_f.append(cosine(WtW, fact_matrix(net, X, Y, lam)))
            s, cb = best_nfa_power(WtW, G)
            s_best.append(s)
            cos_best.append(cb)
            cos_s1.append(cosine(WtW, G))
            gns.append(net.info.grad_norm)
            if i == 0:
                curves[L] = (nfa_cosines(WtW, G, powers), cos_f[-1])
        row = {"L": L, "min_cos_fact": min(cos_f), "best_power_mean": float(np.mean(s_best)),
               "best_power_max_dev": float(np.max(np.abs(np.array(s_best) - 1 / L))),
               "cos_at_best_power_min": min(cos_best), "cos_nfa_s1_max": max(cos_s1),
               "max_grad_norm": max(gns)}
        table.append(row)
        res.add(f"(b) deep linear L={L}: max 1 - cos(W1^TW1, FACT)", 1.0 - row["min_cos_fact"],
                1e-3, paper="cos >= 0.999", **FN)
        res.add(f"(b) deep linear L={L}: |best power s of the NFA (Radhakrishnan et al. (2024)) "
                "- 1/L|", row["best_power_max_dev"], 1e-3,
                paper="s = 1/L", **FT)
    res.metrics["b_deep_linear"] = {"seeds_per_depth": n_seeds, "table": table}
    res.add("(b) deep linear: max ||grad J|| after training (all L)",
            max(r["max_grad_norm"] for r in table), 1e-9, paper="converged", **QT)
    return powers, curves, table


def _part_c(ctx, res, n_seeds):
    worst = {"cos_fact": 1.0, "cos_agop": 0.0, "cos_agop_half": 0.0, "max_grad_norm": 0.0}
    example = None
    for i in ctx.progress(range(n_seeds), desc="fact (c)"):
        ex = nfa_counterexample(ctx.rng("fact-c", i))
        net = train(ex.net0, ex.X, ex.y, ex.lam, warn=False)
        WtW, G = net.W.T @ net.W, agop(net, ex.X)
        F = fact_matrix(net, ex.X, ex.y, ex.lam)
        c1, ch = nfa_cosines(WtW, G, [1.0, 0.5])
        worst["cos_fact"] = min(worst["cos_fact"], cosine(WtW, F))
        worst["cos_agop"] = max(worst["cos_agop"], c1)
        worst["cos_agop_half"] = max(worst["cos_agop_half"], ch)
        worst["max_grad_norm"] = max(worst["max_grad_norm"], net.info.grad_norm)
        if example is None:
            example = (ex, WtW, F, G)
    pred = {"s=1": counterexample_prediction(1.0), "s=1/2": counterexample_prediction(0.5)}
    res.metrics["c_counterexample"] = {"seeds": n_seeds, **worst, "design_prediction": pred,
                                       "params": example[0].params,
                                       "a": example[0].net0.a.tolist()}
    res.add(f"(c) counterexample, width 7, signed a, {n_seeds} seeds: min cos(FACT, W^TW)",
            worst["cos_fact"], 0.99, relation=">=", paper="0.994", **FN)
    res.add("(c) counterexample: max ||grad J|| after training", worst["max_grad_norm"], 1e-9,
            paper="converged", **QT)
    res.add("(c) counterexample: max cos(AGOP, W^TW)", worst["cos_agop"], 0.07, relation="<",
            paper="< 0.068", **FN)
    res.add("(c) counterexample: max cos(AGOP^(1/2), W^TW)", worst["cos_agop_half"], 0.07,
            relation="<", paper="< 0.068", **FN)
    return example


def _part_d(ctx, res, steps):
    net0, X, y, lam = _signed_gd_instance(ctx.rng("fact-d"))
    full = gd_path(net0, X, y, lam, eta=5e-3, steps=steps, record_every=1)
    keep = np.unique(np.r_[np.arange(min(steps, 40) + 1),
                           np.geomspace(1, steps, 120).astype(int), steps])
    path = [full[k] for k in keep]
    ks = np.array([k for k, _ in path])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotCriticalWarning)  # expected away from convergence
        reps = [fact_identity(n, X, y, lam) for _, n in path]
    cos_f = np.array([r.cos_fact for r in reps])
    cos_lb = np.array([r.cos_lower_bound for r in reps])
    gnorm = np.array([r.grad_norm for r in reps])
    cos_a = np.array([cosine(n.W.T @ n.W, agop(n, X)) for _, n in path])
    early = float(np.min(cos_f[ks <= max(1, steps // 100)]))
    res.metrics["d_training_path"] = {"steps": steps, "cos_at_start": float(cos_f[0]),
                                      "min_cos_first_1pct": early, "cos_final": float(cos_f[-1]),
                                      "grad_norm_final": float(gnorm[-1])}
    res.add("(d) GD path: cos(W^TW, FACT) at the start", float(cos_f[0]), 0.5, paper="low early",
            **QT)
    res.add(f"(d) GD path: cos(W^TW, FACT) after {steps} steps", float(cos_f[-1]), 0.9999,
            relation=">=", paper="~1 near convergence", **FT)
    return ks, cos_f, cos_lb, cos_a, gnorm


@register("fact", CLAIM, order=50)
@single_threaded()  # one BLAS thread: CPU seconds, see quadnet._threads
def run(ctx: CheckContext, res: CheckResult) -> None:
    quick = ctx.quick
    _part_a(ctx, res, 6 if quick else 50)
    powers, curves, _ = _part_b(ctx, res, 1 if quick else 5)
    example = _part_c(ctx, res, 1 if quick else 10)
    path = _part_d(ctx, res, 1500 if quick else 4000)
    _figures(ctx, res, powers, curves, example, path)


def _figures(ctx, res, powers, curves, example, path) -> None:
    ctx.draw(res, "fact_deep_linear_nfa_power", {
        "powers": powers, "L": list(curves), "nfa_cos": [c for c, _ in curves.values()],
        "fact_cos": [cf for _, cf in curves.values()]})
    ex, WtW, F, G = example
    Bm = ex.basis
    mats = {"W^TW": WtW, "FACT": F, "AGOP": G, "AGOP^(1/2)": psd_power(G, 0.5)}
    ctx.draw(res, "fact_counterexample", {
        "K": ex.params["quiet"], "names": list(mats),
        "diag": [np.einsum("ik,ij,jk->k", Bm, sym(M), Bm) / np.linalg.norm(M)
                 for M in mats.values()],
        "cos": [cosine(WtW, M) for M in mats.values()]})
    ks, cos_f, cos_lb, cos_a, gnorm = path
    ctx.draw(res, "fact_along_training", {"ks": ks, "cos_fact": cos_f, "cos_lower": cos_lb,
                                          "cos_agop": cos_a, "grad_norm": gnorm})


@figure("fact_deep_linear_nfa_power")
def _figure_deep_linear(f: dict):
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(COLUMN_WIDTH, 4.6), layout="constrained")
    sub = fig.subfigures(2, 1, height_ratios=[1.25, 1.0])
    ax = sub[0].subplots()
    powers = np.asarray(f["powers"], float)
    for j, (L, cs) in enumerate(zip(f["L"], f["nfa_cos"])):
        ax.plot(powers, cs, color=OKABE_ITO[j], label=f"L = {L}")
        ax.axvline(1 / int(L), color=OKABE_ITO[j], ls=":", lw=0.8)
    ax.set_xlabel("NFA power $s$")
    ax.set_ylabel(r"cos($W_1^\top W_1$, AGOP$^s$)")
    ax.set_title("deep linear nets: the NFA peaks at s = 1/L (dotted)")
    lo = min(float(np.min(np.asarray(c, float))) for c in f["nfa_cos"])
    ax.set_ylim(max(min(0.8, lo), -1.0), 1.005)
    sub[0].legend(loc="outside lower center", ncol=4, title="depth")
    ax = sub[1].subplots()
    Ls = [int(L) for L in f["L"]]
    one_minus_fact = np.maximum(1.0 - np.asarray(f["fact_cos"], float), 1e-16)
    one_minus_nfa1 = [max(1.0 - float(np.interp(1.0, powers, np.asarray(c, float))), 1e-16)
                      for c in f["nfa_cos"]]
    ax.semilogy(Ls, one_minus_fact, "o-", color=OKABE_ITO[0],
                label=r"FACT: 1 $-$ cos($W_1^\top W_1$, FACT)")
    ax.semilogy(Ls, one_minus_nfa1, "s--", color=OKABE_ITO[1],
                label=r"NFA at s = 1: 1 $-$ cos($W_1^\top W_1$, AGOP)")
    ax.axhline(1e-3, color="k", ls="--", lw=0.8,
               label="cos = 0.999 (Boix-Adsera et al. (2025))")
    floor_note(ax, 1e-16, what="values <= 1e-16 (rounding)")
    ax.set_ylim(1e-18, 1.0)
    ax.set_xticks(Ls)
    ax.set_xlabel("depth L")
    ax.set_ylabel(r"1 $-$ cosine")
    ax.set_title("FACT holds at every depth; the NFA at s = 1 does not")
    sub[1].legend(loc="outside lower center", ncol=1)
    return fig


@figure("fact_counterexample")
def _figure_counterexample(f: dict):
    import matplotlib.pyplot as plt

    K = int(f["K"])
    labels = [f"$u_{k + 1}$" for k in range(K)] + [r"$u_*$ (loud)"]
    tex = {"W^TW": r"$W^\top W$", "FACT": "FACT", "AGOP": "AGOP",
           "AGOP^(1/2)": r"AGOP$^{1/2}$"}
    fig, ax = plt.subplots(figsize=(COLUMN_WIDTH, 2.9), layout="constrained")
    width = 0.2
    for j, (name, diag, c) in enumerate(zip(f["names"], f["diag"], f["cos"])):
        ax.bar(np.arange(K + 1) + (j - 1.5) * width, diag, width, color=OKABE_ITO[j],
               label=f"{tex.get(name, name)}  (cos with $W^\\top W$ = {c:.3f})")
    ax.axhline(0, color="k", lw=0.5)
    ax.set_xticks(np.arange(K + 1), labels)
    ax.set_ylabel(r"$u_k^\top M u_k / \|M\|_F$")
    ax.set_title("counterexample: FACT = $W^\\top W$; the AGOP sits on the loud direction\n"
                 "(Boix-Adsera et al. (2025): cos(FACT, $W^\\top W$) = 0.994, "
                 "cos(AGOP, $W^\\top W$) < 0.068)")
    fig.legend(loc="outside lower center", ncol=1)
    return fig


@figure("fact_along_training")
def _figure_training(f: dict):
    import matplotlib.pyplot as plt

    ks = np.asarray(f["ks"], float) + 1
    cos_f, cos_lb = np.asarray(f["cos_fact"], float), np.asarray(f["cos_lower"], float)
    fig = plt.figure(figsize=(COLUMN_WIDTH, 4.4), layout="constrained")
    ax, ax2 = fig.subplots(2, 1, sharex=True, height_ratios=[1.4, 1.0])
    ax.plot(ks, cos_f, color=OKABE_ITO[0], label=r"cos($W^\top W$, FACT)")
    ax.fill_between(ks, np.maximum(cos_lb, -1.0), 1.0, color=OKABE_ITO[0], alpha=0.15, lw=0,
                    label=r"range allowed by $\|\nabla J\|$ (FACT identity)")
    ax.plot(ks, f["cos_agop"], color=OKABE_ITO[1], ls="--", label=r"cos($W^\top W$, AGOP)")
    ax.set_xscale("log")
    ax.set_ylabel("cosine similarity")
    ax.set_ylim(min(-0.05, float(cos_f.min()) - 0.05), 1.05)
    ax.set_title("FACT along training (signed net, step 5e-3)")
    ax2.semilogy(ks, f["grad_norm"], color="0.3")
    ax2.set_ylabel(r"gradient norm $\|\nabla J\|$")
    ax2.set_xlabel("gradient-descent step + 1")
    fig.legend(loc="outside lower center", ncol=1)
    return fig
