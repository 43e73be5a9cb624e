"""Check ``grokking``: FACT-RFM and NFA-RFM on ``a ∘ b mod p`` for add, sub, mul, div (theory §6).

Boix-Adsera et al. (2025) report 100% test accuracy after about 75 iterations for FACT-RFM on
``(x+y) mod 61`` with a 50% split; NFA-RFM is the recursive feature machine of Radhakrishnan
et al. (2024). The recipes are those of the ``rfm`` check (``quadnet.harness.recipes``). Every
run is one cell of the sweep ``grokking`` (``quadnet.harness.cells.grokking_cell``): a run
stops at 40 iterations, or once its last ``STAY + 1 = 6`` iterates are all at 100% test
accuracy (the reach-and-stay iteration of the ``rfm`` check on the run so far).

(a) ``p = 61`` and ``97`` at a 50% split, all four operations, both methods: the iteration
from which test accuracy is 100% and stays, or the wrong test points at the end.
(b) The phase diagram over ``p`` and the training fraction (``p = 31, 41, 47, 53`` on the whole
fraction grid 0.3 … 0.8, ``p = 61, 97`` at 0.5): per operation and method, the smallest grid
fraction from which every larger one groks, and the training pairs per output class it
amounts to (``frac · p``); whether that is constant in ``p`` (``frac_min ∝ 1/p``) or grows like
``log p``; the group-circulant score of the final ``M`` and the operand coupling per Fourier
frequency (``quadnet.features.fourier``) where 50% is too little (``p = 31``, ``47``).

(c) Recipes tried where 50% is marginal: FACT-RFM ridgeless (the recipe), ridge ``1e-3``,
``L = 2`` and ``L = 4``, on add and mul at ``p = 43, 47, 53``, two seeds each.

(d) The boundary law fitted on (b), tested at ``p = 61`` and ``97`` on the fractions 0.25,
0.3, 0.35, 0.4 and 0.5 (add, FACT-RFM).

Cells finished in a sweep store (``quadnet sweep grokking ...`` into ``sweeps/``) are read,
the others computed here (``quadnet.harness.checks._sweep_cells``, through
:func:`quadnet.harness.sweeps.run_cells`).

Quick mode (``--quick``): ``p = 13, 23`` at 75% (the rows: ``p = 23``, 75%), all four
operations, both methods, 24 iterations, nothing read from stores.
"""

from __future__ import annotations

import numpy as np

from quadnet.harness.cells import GROKKING_FRAC
from quadnet.harness.checks._base import (
    COLUMN_WIDTH, QUADNET_TARGET, CheckContext, CheckResult, figure, register)
from quadnet.harness.checks._sweep_cells import SweepCells
from quadnet.harness.recipes import FACT_CFG, NFA_CFG, STAY
from quadnet.harness.recipes import METHODS as METHOD_CFGS

OPS = ("add", "sub", "mul", "div")
SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
METHODS = ("fact", "nfa")
WHO = {"fact": "FACT-RFM", "nfa": "NFA-RFM"}
SOURCE = {"fact": "Boix-Adsera et al. (2025)", "nfa": "Radhakrishnan et al. (2024)"}
RECIPE = {"fact": FACT_CFG, "nfa": NFA_CFG}
QT = QUADNET_TARGET
#: FACT-RFM variants tried where 50% is marginal (p = 43, 47, 53), over two seeds
RECIPE_VARIANTS = ("fact", "fact_ridge1e-3", "fact_L2", "fact_L4")
RECIPE_OPS = ("add", "mul")
RECIPE_P = (43, 47, 53)
RECIPE_TRIALS = (0, 1)
#: where the boundary law fitted on the phase diagram is tested (add, FACT-RFM)
PREDICT_P = (61, 97)
PREDICT_FRAC = (0.25, 0.3, 0.35, 0.4, 0.5)


def _describe(name: str) -> str:
    base, diff = (FACT_CFG, "fact") if name.startswith("fact") else (NFA_CFG, "nfa")
    cfg = METHOD_CFGS[name]
    changed = [f"{k}={cfg[k]:g}" if isinstance(cfg[k], float) else f"{k}={cfg[k]}"
               for k in cfg if cfg[k] != base.get(k)]
    return f"{diff.upper()} recipe" + (f" with {', '.join(changed)}" if changed else "")


def _grid(quick: bool) -> dict:
    if quick:
        return {"rows_p": (23,), "rows_frac": 0.75, "phase_p": (13, 23), "frac": (0.75,),
                "iters": 24}
    return {"rows_p": (61, 97), "rows_frac": 0.5, "phase_p": (31, 41, 47, 53),
            "frac": GROKKING_FRAC, "iters": 40}


def _cell(op, p, frac, method, iters) -> dict:
    return {"op": op, "p": p, "frac": frac, "method": method, "trial": 0, "iters": iters}


def _outcome(r: dict) -> str:
    if r["reach"] >= 0:
        return f"{r['reach']}"
    return f"{r['final_wrong']} wrong"


def _missing_reason(op, p, frac, method) -> str:
    what = " ".join(f"--set {k}={v}" for k, v in (("op", op), ("p", p), ("frac", frac),
                                                  ("method", method)) if v is not None)
    return ("not in a sweep store and QUADNET_CHECK_COMPUTE=0; run `quadnet sweep grokking "
            f"{what}` (resumable, locally or on Dask) and rerun quadnet verify grokking")


def frac_min(fracs, grokked) -> float | None:
    """Smallest grid fraction from which every larger grid fraction groks (None: none).

    >>> frac_min([0.3, 0.4, 0.5], [False, True, True]), frac_min([0.3, 0.4], [True, False])
    (0.4, None)
    """
    for i, f in enumerate(fracs):
        if all(grokked[i:]):
            return float(f)
    return None


def _head(m: str, op: str, p: int, split: int) -> str:
    cfg = RECIPE[m]
    return (f"{WHO[m]} ({cfg['kernel']}, L={cfg['bandwidth']:g}) on (x{SYMBOL[op]}y) mod {p}, "
            f"{split}% split")


def _split_rows(res: CheckResult, cells: SweepCells, g: dict) -> dict:
    """(a) per method, operation and ``p`` of the rows: the reach-and-stay iteration, or the
    wrong test points at the end; returns the table of those runs."""
    it, mode = g["iters"], g["mode"]
    split = int(round(100 * g["rows_frac"]))
    table: dict = {}
    for p in g["rows_p"]:
        for op in OPS:
            for m in METHODS:
                r = cells.get(_cell(op, p, g["rows_frac"], m, it))
                paper = ("~75 iterations (Boix-Adsera et al. (2025))"
                         if (m, op, p, split) == ("fact", "add", 61, 50) else "no claim")
                kind = "target" if paper != "no claim" else "exploration"
                head = _head(m, op, p, split)
                if r is None:
                    table[f"{m} {op} {p}"] = None
                    res.skip(f"{head}: iteration from which test accuracy is 100% and stays",
                             _missing_reason(op, p, g["rows_frac"], m), paper=paper,
                             source=SOURCE[m])
                    continue
                table[f"{m} {op} {p}"] = {k: r[k] for k in ("reach", "final_wrong",
                                                            "group_circulant", "iterations")}
                if r["reach"] >= 0:
                    res.report(f"{head}: iteration from which test accuracy is 100% and stays "
                               f"({STAY} more){mode}", r["reach"], paper=paper, source=SOURCE[m],
                               kind=kind)
                else:
                    res.report(f"{head}: 100% not reached in {it} iterations; wrong test points "
                               f"at the end (of {r['n_test']}){mode}", r["final_wrong"],
                               paper=paper, source=SOURCE[m], kind=kind)
    res.metrics["rows"] = table
    fact_rows = [table[f"fact {op} {p}"] for p in g["rows_p"] for op in OPS]
    fact_ok = sum(r is not None and r["reach"] >= 0 for r in fact_rows)
    n_rows = len(OPS) * len(g["rows_p"])
    claim = (f"FACT-RFM reaches 100% test accuracy to stay within {it} iterations for all four "
             f"operations at p = {', '.join(map(str, g['rows_p']))}, {split}% split")
    if None in fact_rows:
        res.skip(claim, "some of its cells did not run (the SKIPPED rows above)",
                 tolerance=n_rows, relation=">=", **QT)
    else:
        res.add(f"{claim}{mode}", fact_ok, n_rows, relation=">=",
                paper=f"{n_rows}/{n_rows} runs", **QT)
    return table


def _phase_diagram(res: CheckResult, cells: SweepCells, g: dict) -> dict:
    """(b) the smallest grokking fraction per method, operation and ``p``."""
    it, mode, fracs = g["iters"], g["mode"], list(g["frac"])
    phase: dict = {}
    missing: list[str] = []
    for m in METHODS:
        for op in OPS:
            for p in g["phase_p"]:
                rs = [cells.get(_cell(op, p, f, m, it)) for f in fracs]
                if None in rs:
                    phase[f"{m} {op} {p}"] = None
                    missing.append(f"{m} {op} {p}")
                    continue
                fm = frac_min(fracs, [r["reach"] >= 0 for r in rs])
                phase[f"{m} {op} {p}"] = {"frac_min": fm, **{k: [r[k] for r in rs] for k in (
                    "reach", "final_wrong", "n_test", "group_circulant",
                    "coupled_frequencies", "fourier_neff")}}
                if fm is None:
                    res.report(f"{WHO[m]} on (x{SYMBOL[op]}y) mod {p}: no grid training fraction "
                               f"<= {fracs[-1]:g} groks in {it} iterations; wrong test points at "
                               f"{fracs[-1]:g}{mode}", rs[-1]["final_wrong"], paper="no claim",
                               source=SOURCE[m])
                else:
                    res.report(f"{WHO[m]} on (x{SYMBOL[op]}y) mod {p}: smallest grid training "
                               f"fraction from which every larger one groks in {it} iterations"
                               f"{mode}", fm, paper="no claim", source=SOURCE[m])
    if missing:
        ps = ",".join(sorted({k.split()[2] for k in missing}, key=int))
        res.skip(f"phase diagram: smallest grokking fraction for {len(missing)} (method, op, "
                 f"p): {', '.join(missing)}", _missing_reason(None, ps, None, None))
    res.metrics["phase"] = phase
    res.metrics["fractions"] = fracs
    return phase


def _boundary_scaling(res: CheckResult, phase: dict, g: dict) -> dict:
    """The scaling of the boundary with ``p``: ``frac* p`` (training pairs per class) against
    ``frac* p / log p``, ``frac*`` the midpoint between ``frac_min`` and the grid fraction
    below it (which does not grok); the power law ``frac* = C p^b``."""
    mode, fracs = g["mode"], list(g["frac"])
    scaling: dict = {}
    for m in METHODS:
        c1, c2, pts = [], [], []
        for op in OPS:
            for p in g["phase_p"]:
                fm = (phase[f"{m} {op} {p}"] or {}).get("frac_min")
                if fm is not None and fm > fracs[0]:  # the lowest grid fraction is an upper bound
                    mid = (fm + fracs[fracs.index(fm) - 1]) / 2
                    c1.append(mid * p)
                    c2.append(mid * p / np.log(p))
                    pts.append((p, mid))
        if len(c1) < 2 or len({p for p, _ in pts}) < 2:
            continue
        cv1, cv2 = (float(np.std(c) / np.mean(c)) for c in (c1, c2))
        lp, lf = np.log([p for p, _ in pts]), np.log([f for _, f in pts])
        b, a = np.polyfit(lp, lf, 1)  # frac* = e^a p^b
        scaling[m] = {"pairs_per_class": c1, "per_log": c2, "cv_c_over_p": cv1,
                      "cv_c_log_p_over_p": cv2, "mean_pairs_per_class": float(np.mean(c1)),
                      "mean_per_log": float(np.mean(c2)), "power": [float(a), float(b)]}
        for claim, value in (
                (f"exponent b of the least-squares fit frac* = C p^b over ops and p (b = -1: a "
                 f"constant number of training pairs per class){mode}", b),
                (f"training pairs per output class frac*p at the grokking boundary (frac* = "
                 f"midpoint of the last failing and first grokking grid fraction), mean over ops "
                 f"and p{mode}", float(np.mean(c1))),
                (f"c = frac*p/log(p) at the boundary, mean over ops and p (frac_min ~ c "
                 f"log(p)/p){mode}", float(np.mean(c2))),
                (f"spread (std/mean) of frac*p over ops and p; constant if frac_min ~ "
                 f"c/p{mode}", cv1),
                (f"spread (std/mean) of frac*p/log(p); constant if frac_min ~ c "
                 f"log(p)/p{mode}", cv2)):
            res.report(f"{WHO[m]}: {claim}", value, paper="no claim",
                       source="quadnet exploration")
    res.metrics["scaling"] = scaling
    return scaling


def _boundary_test(ctx: CheckContext, res: CheckResult, cells: SweepCells, g: dict,
                   scaling: dict) -> None:
    """(d) the boundary law fitted on the phase diagram, tested at ``p = 61, 97`` (add)."""
    it = g["iters"]
    if "fact" not in scaling:
        res.skip(f"FACT-RFM on (x+y) mod {', '.join(map(str, PREDICT_P))}: the boundary law "
                 "tested", "the phase diagram it is fitted on did not run (the SKIPPED rows "
                 "above)")
        return
    pred_cells = [_cell("add", p, f, "fact", it) for p in PREDICT_P for f in PREDICT_FRAC]
    got = cells.run_all(pred_cells, ctx.progress, desc="grokking boundary test")
    c_log, c_p = scaling["fact"]["mean_per_log"], scaling["fact"]["mean_pairs_per_class"]
    a, b = scaling["fact"]["power"]
    test = {}
    for p in PREDICT_P:
        rs = [r for c, r in zip(pred_cells, got) if c["p"] == p]
        if None in rs:
            res.skip(f"FACT-RFM on (x+y) mod {p}: smallest grokking fraction on "
                     f"{', '.join(map(str, PREDICT_FRAC))}",
                     _missing_reason("add", p, ",".join(map(str, PREDICT_FRAC)), "fact"))
            continue
        fm = frac_min(PREDICT_FRAC, [r["reach"] >= 0 for r in rs])
        test[p] = {"frac_min": fm, "reach": [r["reach"] for r in rs],
                   "final_wrong": [r["final_wrong"] for r in rs],
                   "predicted_log": c_log * np.log(p) / p, "predicted_const": c_p / p,
                   "predicted_power": float(np.exp(a) * p ** b)}
        res.report(f"FACT-RFM on (x+y) mod {p}: smallest training fraction in "
                   f"{{{', '.join(f'{f:g}' for f in PREDICT_FRAC)}}} from which every larger "
                   f"one groks in {it} iterations (the boundary law fitted on p = "
                   f"{', '.join(map(str, g['phase_p']))}; 1 = none)",
                   fm if fm is not None else 1.0,
                   paper=f"boundary predicted at {c_p / p:.2f} (c/p), "
                         f"{c_log * np.log(p) / p:.2f} (c log p/p), "
                         f"{test[p]['predicted_power']:.2f} (C p^b)",
                   source="quadnet exploration")
    res.metrics["boundary_test"] = test


def _failures_at_half(res: CheckResult, phase: dict, g: dict) -> None:
    """Where 50% is too little (``p = 31, 47``): feature learning (circulant ``M``) vs data."""
    fracs = list(g["frac"])
    for p in (31, 47):
        if p not in g["phase_p"]:
            continue
        i = fracs.index(0.5)
        for m in METHODS:
            if any(phase[f"{m} {op} {p}"] is None for op in OPS):
                continue
            gc = [phase[f"{m} {op} {p}"]["group_circulant"][i] for op in OPS]
            wr = [phase[f"{m} {op} {p}"]["final_wrong"][i] for op in OPS]
            res.report(f"{WHO[m]} on mod {p}, 50% split: group-circulant score of the final M"
                       f" (min over the four ops; wrong test points {wr})", min(gc),
                       paper="block-circulant M", source=SOURCE[m])


def _recipes(ctx: CheckContext, res: CheckResult, cells: SweepCells, g: dict) -> None:
    """(c) the recipes tried on ``p = 43, 47, 53`` at 50%, two seeds each (not tuned to one)."""
    it = g["iters"]
    variants = {}
    rec_cells = [dict(_cell(op, p, 0.5, v, it), trial=t) for v in RECIPE_VARIANTS
                 for op in RECIPE_OPS for p in RECIPE_P for t in RECIPE_TRIALS]
    cells.run_all(rec_cells, ctx.progress, desc="grokking recipes")
    for v in RECIPE_VARIANTS:
        rs = {(c["op"], c["p"], c["trial"]): cells.get(c) for c in rec_cells
              if c["method"] == v}
        if None in rs.values():
            res.skip(f"recipe {v} ({_describe(v)}), 50% split, p = 43, 47, 53",
                     _missing_reason(None, None, None, v))
            continue
        ok = {k: r["reach"] >= 0 for k, r in rs.items()}
        variants[v] = {f"{op} {p} {t}": [r["reach"], r["final_wrong"]]
                       for (op, p, t), r in rs.items()}
        n47 = sum(ok[op, 47, t] for op in RECIPE_OPS for t in RECIPE_TRIALS)
        res.report(f"recipe {v} ({_describe(v)}), 50% split, ops {'/'.join(RECIPE_OPS)}, "
                   f"p = {', '.join(map(str, RECIPE_P))}, {len(RECIPE_TRIALS)} seeds: runs at "
                   f"100% test accuracy to stay within {it} iterations (of {len(rs)}; p = 47: "
                   f"{n47} of {len(RECIPE_TRIALS) * len(RECIPE_OPS)})", sum(ok.values()),
                   paper="no claim", source="quadnet exploration")
    res.metrics["recipes"] = variants


def _figure_payload(g: dict, table: dict, phase: dict, scaling: dict, test: dict) -> dict:
    fracs = list(g["frac"])
    return {
        "quick": g["quick"], "iters": g["iters"], "fracs": fracs, "ps": list(g["phase_p"]),
        "ops": list(OPS), "methods": list(METHODS), "phase": phase,
        "rows": {f"{m} {op} {p}": ([table[f"{m} {op} {p}"]["reach"],
                                     table[f"{m} {op} {p}"]["final_wrong"]]
                                    if table[f"{m} {op} {p}"] else None)
                 for m in METHODS for op in OPS for p in g["rows_p"]},
        "rows_p": list(g["rows_p"]), "rows_frac": g["rows_frac"],
        "boundary_law": {m: scaling.get(m, {}).get("power") for m in METHODS},
        "extra": {f"fact add {p} {f:g}": [t["reach"][i], t["final_wrong"][i]]
                  for p, t in test.items() for i, f in enumerate(PREDICT_FRAC) if f in fracs}}


@register("grokking", "FACT-RFM and NFA-RFM grok a∘b mod p for add/sub/mul/div once frac·p is "
          "large enough", order=61, heavy=True)
def run(ctx: CheckContext, res: CheckResult) -> None:
    q = ctx.quick
    g = {**_grid(q), "quick": q}
    g["mode"] = f" [quick: {g['iters']} iterations, 1 seed]" if q else ""
    cells = SweepCells("grokking", ctx.seed, read_stores=not q)
    # (a) the rows at p = 61, 97 (quick: p = 23), 50% (quick: 75%), and (b) the phase diagram
    row_cells = [_cell(op, p, g["rows_frac"], m, g["iters"]) for p in g["rows_p"] for op in OPS
                 for m in METHODS]
    phase_cells = [_cell(op, p, f, m, g["iters"]) for p in g["phase_p"] for f in g["frac"]
                   for op in OPS for m in METHODS]
    todo = row_cells + [c for c in phase_cells if c not in row_cells]
    todo.sort(key=lambda c: c["frac"] * c["p"] ** 2)  # cheap cells first
    cells.run_all(todo, ctx.progress, desc="grokking cells")
    table = _split_rows(res, cells, g)
    phase = _phase_diagram(res, cells, g)
    scaling = _boundary_scaling(res, phase, g)
    if not q:
        _boundary_test(ctx, res, cells, g, scaling)
        _failures_at_half(res, phase, g)
        _recipes(ctx, res, cells, g)
    res.metrics.update(cells.metrics())
    ctx.draw(res, "grokking_phase", _figure_payload(g, table, phase, scaling,
                                                     res.metrics.get("boundary_test", {})))


@figure("grokking_phase")
def _figure_phase(f: dict):
    import matplotlib.pyplot as plt
    from matplotlib.colors import Normalize

    ops, methods, fracs = f["ops"], f["methods"], f["fracs"]
    ps = list(f["ps"]) + [p for p in f["rows_p"] if p not in f["ps"]]
    fig = plt.figure(figsize=(COLUMN_WIDTH, 1.2 * len(ops) + 0.9), layout="constrained")
    axes = fig.subplots(len(ops), len(methods), sharex=True, sharey=True, squeeze=False)
    norm = Normalize(0, f["iters"])
    cmap = plt.get_cmap("cividis")
    xs = np.arange(len(ps))
    h = float(np.min(np.diff(fracs))) if len(fracs) > 1 else 0.1
    for i, op in enumerate(ops):
        for j, m in enumerate(methods):
            ax = axes[i, j]
            for a, p in enumerate(ps):
                for b, fr in enumerate(fracs):
                    reach, wrong = None, None
                    if p in f["ps"]:
                        cell = f["phase"][f"{m} {op} {p}"]
                        if cell is None:
                            continue
                        reach, wrong = cell["reach"][b], cell["final_wrong"][b]
                    elif fr == f["rows_frac"] and f["rows"][f"{m} {op} {p}"] is not None:
                        reach, wrong = f["rows"][f"{m} {op} {p}"]
                    elif f"{m} {op} {p} {fr:g}" in f.get("extra", {}):
                        reach, wrong = f["extra"][f"{m} {op} {p} {fr:g}"]
                    else:
                        continue
                    if reach is not None and reach >= 0:
                        ax.add_patch(plt.Rectangle((a - 0.5, fr - h / 2), 1, h,
                                                   color=cmap(norm(reach))))
                        ax.text(a, fr, str(reach), ha="center", va="center", fontsize=4.5,
                                color="white" if reach < 0.6 * f["iters"] else "black")
                    else:
                        ax.add_patch(plt.Rectangle((a - 0.5, fr - h / 2), 1, h, color="0.85"))
                        ax.text(a, fr, str(wrong),
                                ha="center", va="center", fontsize=4.2, color="#D55E00")
            grid_p = np.linspace(-0.5, len(ps) - 0.5, 50)
            law = f["boundary_law"].get(m)
            if law:  # the power law frac* = C p^b fitted to the measured boundary
                pv = np.interp(grid_p, xs, ps)
                ax.plot(grid_p, np.exp(law[0]) * pv ** law[1], "k:", lw=0.8)
            ax.set_xlim(-0.5, len(ps) - 0.5)
            ax.set_ylim(fracs[0] - h / 2, fracs[-1] + h / 2)
            if i == 0:
                ax.set_title(f"{m.upper()}-RFM", fontsize=6.5)
            if j == 0:
                ax.set_ylabel(f"(a{SYMBOL[op]}b) mod p\ntrain fraction", fontsize=6)
    for ax in axes[-1]:
        ax.set_xticks(xs, [str(p) for p in ps], fontsize=5.5)
        ax.set_xlabel("p")
    for ax in axes[:, 0]:
        ax.set_yticks(fracs, [f"{x:g}" for x in fracs], fontsize=5.5)
    sm = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
    cb = fig.colorbar(sm, ax=axes, location="bottom", fraction=0.03, pad=0.02, aspect=40)
    cb.set_label(f"iteration from which test accuracy is 100% and stays\n(grey: not within "
                 f"{f['iters']} iterations, number = wrong test points at the end);\n"
                 f"dotted: the fit frac = C p^b to the boundary over p = "
                 f"{', '.join(map(str, f['ps']))}",
                 fontsize=5.5)
    return fig
