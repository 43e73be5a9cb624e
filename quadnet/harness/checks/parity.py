"""Check ``parity``: the sample size at which RFM learns sparse parity, k = 1 … 4 (theory §6).

Boix-Adsera et al. (2025) report a phase transition in the number of samples for sparse
parity at ``d = 50``: FACT-RFM needs about 500 / 500 / 5,000 / 50,000 samples for
``k = 1 / 2 / 3 / 4``. NFA-RFM is the recursive feature machine of Radhakrishnan et al. (2024).
Recipe (``quadnet.harness.recipes.PARITY_CFG``): Gaussian kernel, ``L = 7`` on ``±1`` inputs
(``L = 7/√50`` on the ``±1/√d`` inputs of the paper: the same kernel), 12 iterations, 1,000
test points, ridge ``PARITY_RIDGE = 1e-3`` at every ``n`` (an iterative kernel solver needs
``ridge > 0``; the check measures the ridgeless fits at ``n ≤ 2,500`` beside it).

Every fit is one cell ``(k, n, trial, method, ridge)`` of the sweep ``parity``
(``quadnet.harness.cells.parity_cell``), so the large cells can run on a cluster::

    quadnet sweep parity --set k=4 --set n=20000,50000 --dask-local 2

and the next ``quadnet verify parity`` (same directory, or ``QUADNET_SWEEPS=DIR``) reads them.
Cells not in a store are computed here, size by size in increasing ``n`` (the cells of one
size on two worker processes), unless

* two consecutive grid sizes already reached 99% on every seed for that ``k`` and method (the
  larger sizes are then not needed for the threshold and are not run; a row counts them);
* the method is NFA-RFM (no claim in the papers: an exploration) and ``n`` exceeds
  :data:`NFA_MAX_N` = 10,000; a REPORTED row counts those cells and gives the command that
  runs them;
* ``n`` exceeds ``QUADNET_PARITY_MAX_N`` (default :data:`DEFAULT_MAX_N` = 20,000, the size
  that confirms FACT-RFM's ``k = 4`` threshold of 10,000), or no kernel solver fits in memory
  (``quadnet.features.solvers.choose_solver``, the estimator's own estimate); these cells are
  listed in a SKIPPED row with the command that runs them.

So the default run computes every cell its rows need, ``k = 4`` included: 84 cells in 1,139
CPU-seconds (19 CPU-minutes) on two cores, most of it in the two FACT-RFM fits at
``n = 20,000``.

Threshold (the smallest ``n`` reaching 99%): the smallest grid ``n`` at which every seed has
test accuracy ``≥ 0.99`` and so does every seed at every larger grid ``n`` that ran. It is
*confirmed* when the next grid size ran on every seed and reached 99% too; a quadnet target
row asks that every FACT-RFM threshold be confirmed (in full mode).

Quick mode (``--quick``): ``k ≤ 3``, ``n ≤ 2,000`` (250, 500, 1000, 2000), one seed, no stores.
"""

from __future__ import annotations

import math
import os

import numpy as np

from quadnet.harness.cells import PARITY_N
from quadnet.harness.checks._base import (
    COLUMN_WIDTH, OKABE_ITO, QUADNET_TARGET, CheckContext, CheckResult, figure, register)
from quadnet.harness.checks._sweep_cells import SweepCells
from quadnet.harness.recipes import PARITY_CFG, PARITY_RIDGE, SOLVER_CFG

PAPER = {1: 500, 2: 500, 3: 5000, 4: 50000}  # FACT-RFM, Boix-Adsera et al. (2025)
METHODS = ("fact", "nfa")
WHO = {"fact": "FACT-RFM", "nfa": "NFA-RFM"}
SOURCE = {"fact": "Boix-Adsera et al. (2025)", "nfa": "Radhakrishnan et al. (2024)"}
LEVEL = 0.99
QT = QUADNET_TARGET
#: The largest ``n`` the check computes by itself unless ``QUADNET_PARITY_MAX_N`` says
#: otherwise: the grid size after FACT-RFM's ``k = 4`` threshold (10,000), which confirms it.
DEFAULT_MAX_N = 20_000
#: NFA-RFM is followed up to this ``n`` (cells of larger ``n`` are used when a store has them).
NFA_MAX_N = 10_000


def _solver_plan(n: int, method: str):
    """The kernel solver a fit of ``n`` points would use here, or the error saying that none
    fits in memory (``quadnet.features.solvers.choose_solver``, the estimator's own choice)."""
    from quadnet.exceptions import KernelMemoryError
    from quadnet.features.solvers import choose_solver

    cfg = {**PARITY_CFG, **SOLVER_CFG}
    try:
        return choose_solver(n, 50, 1, solver=cfg.get("solver", "auto"), ridge=PARITY_RIDGE,
                             memory_limit=cfg.get("memory_limit"), agop=method == "nfa"), None
    except KernelMemoryError as exc:
        return None, str(exc)


def parity_threshold(sizes, acc, level: float = LEVEL, seeds: int | None = None) -> float:
    """Smallest grid size at which every seed reaches ``level`` and so does every seed at every
    larger size that ran; ``acc[i]`` lists the seeds' accuracies at ``sizes[i]`` (empty: did not
    run). With ``seeds``, a size qualifies only if all ``seeds`` ran there. ``inf`` if no size
    qualifies.

    Examples
    --------
    >>> parity_threshold([250, 500, 1000], [[0.5, 0.6], [0.99, 1.0], [1.0, 1.0]])
    500.0
    >>> parity_threshold([250, 500, 1000], [[0.5], [0.995, 0.98], [1.0]])   # every seed counts
    1000.0
    >>> parity_threshold([250, 500, 1000], [[1.0], [0.7], []])               # no recovery
    inf
    >>> parity_threshold([250, 500, 1000], [[0.5], [1.0], []])               # 1000 did not run
    500.0
    >>> parity_threshold([250, 500], [[0.5, 0.5], [1.0]], seeds=2)          # one seed of two
    inf
    """
    ran = [(n, a) for n, a in zip(sizes, acc) if len(a)]
    for i, (n, a) in enumerate(ran):
        if seeds is not None and len(a) < seeds:
            continue
        if all(min(b) >= level for _, b in ran[i:]):
            return float(n)
    return float("inf")


def _grid(quick: bool) -> dict:
    if quick:
        return {"k": (1, 2, 3), "n": (250, 500, 1000, 2000), "trials": (0,), "ridge0_max": 0}
    return {"k": (1, 2, 3, 4), "n": PARITY_N, "trials": (0, 1), "ridge0_max": 2500}


def _cell(k, n, trial, method, ridge) -> dict:
    return {"k": k, "n": n, "trial": trial, "method": method, "ridge": ridge}


def _fmt(n: float) -> str:
    return f"{int(n):,}" if math.isfinite(n) else "not reached"


def _known(cells: SweepCells, c: dict) -> float | None:
    r = cells.get(c)
    return None if r is None else r["test_acc"]


def _max_n() -> int:
    """``QUADNET_PARITY_MAX_N`` (default :data:`DEFAULT_MAX_N`)."""
    raw = os.environ.get("QUADNET_PARITY_MAX_N", str(DEFAULT_MAX_N))
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"QUADNET_PARITY_MAX_N must be an integer number of training points, "
                         f"got {raw!r}") from None


def _why_not_run(cells: SweepCells, n: int, m: str, max_n: int) -> str | None:
    """Why the cell of ``n`` points (method ``m``) is not computed here, or None."""
    plan, err = _solver_plan(n, m)
    if plan is None:
        return f"no kernel solver fits in memory: {err}"
    if n > max_n:
        return (f"n > {max_n:,} (QUADNET_PARITY_MAX_N, the size this check runs by itself; this "
                f"machine would use the {plan.solver} solver, ~{plan.estimate / 1e9:.1f} GB)")
    if not cells.compute:
        return "not in a sweep store and QUADNET_CHECK_COMPUTE=0"
    return None


def _workers(most: int, n: int, cells: list) -> int:
    """Worker processes for the cells of one size: at most ``most``, as many as there are
    cells, and only as many as the machine's available memory holds at once (each worker
    needs its solver's estimate, ``quadnet.features.solvers.choose_solver``)."""
    from quadnet._validation.resources import available_memory

    if most < 2 or len(cells) < 2:
        return 1
    need = max(_solver_plan(n, c["method"])[0].estimate for c in cells)
    return max(1, min(most, len(cells), available_memory() // max(1, need)))


def _measure(ctx: CheckContext, cells: SweepCells, g: dict, max_n: int) -> tuple:
    """Test accuracies per method, ``k``, grid ``n`` and seed: size by size in increasing
    ``n`` (the missing cells of one size computed together, on two workers in full mode), each
    ``(k, method)`` until two consecutive sizes reached 99% on every seed. Returns ``(acc,
    not_needed, skipped, outside)``: the cells not needed, the cells not run by reason, and
    the NFA-RFM cells above :data:`NFA_MAX_N`."""
    sizes = list(g["n"])
    acc = {m: {k: [[] for _ in sizes] for k in g["k"]} for m in METHODS}
    not_needed: list[dict] = []
    outside: list[dict] = []
    skipped: dict[str, list[dict]] = {}
    jobs = [(k, m) for k in g["k"] for m in METHODS]
    workers = 1 if ctx.quick else min(2, os.cpu_count() or 1)
    for i, n in enumerate(sizes):
        slots = []  # (cell, its accuracy if known) in (k, method, trial) order
        for k, m in jobs:
            ran = [a for a in acc[m][k][:i] if a]
            confirmed = len(ran) >= 2 and min(ran[-1]) >= LEVEL and min(ran[-2]) >= LEVEL
            for t in g["trials"]:
                c = _cell(k, n, t, m, PARITY_RIDGE)
                a = _known(cells, c)
                if a is not None:
                    slots.append((c, a))
                elif confirmed:
                    not_needed.append(c)
                elif m == "nfa" and n > NFA_MAX_N:
                    outside.append(c)
                elif why := _why_not_run(cells, n, m, max_n):
                    skipped.setdefault(why, []).append(c)
                else:
                    slots.append((c, None))
        wanted = [c for c, a in slots if a is None]
        new = iter(cells.run_all(wanted, progress=ctx.progress, desc=f"parity n = {n:,}",
                                 workers=_workers(workers, n, wanted)))
        for c, a in slots:
            acc[c["method"]][c["k"]][i].append(next(new)["test_acc"] if a is None else a)
    outside = [c for c in outside if any(acc["nfa"][c["k"]])]  # rows that were followed
    return acc, not_needed, skipped, outside


def _threshold_rows(res: CheckResult, g: dict, acc: dict, mode: str) -> tuple[dict, dict]:
    """Per ``k`` and method: the smallest grid ``n`` reaching 99% (or how far it got)."""
    sizes, seeds = list(g["n"]), len(g["trials"])
    thresholds = {m: {k: parity_threshold(sizes, acc[m][k], seeds=seeds) for k in g["k"]}
                  for m in METHODS}
    largest = {m: {k: max((n for n, a in zip(sizes, acc[m][k]) if a), default=0)
                   for k in g["k"]} for m in METHODS}
    for k in g["k"]:
        for m in METHODS:
            th, top = thresholds[m][k], largest[m][k]
            paper = f"~{PAPER[k]:,} (Boix-Adsera et al. (2025))" if m == "fact" else "no claim"
            cite = {"paper": paper, "source": SOURCE[m],
                    "kind": "target" if m == "fact" else "exploration"}
            head = f"sparse parity d=50, k={k}: {WHO[m]}"
            if not top:
                res.skip(f"{head} smallest grid n with >= 99% test accuracy", "none of its "
                         "cells ran (the SKIPPED rows below)", **cite)
            elif math.isfinite(th):
                res.report(f"{head} smallest grid n with >= 99% test accuracy on all {seeds} "
                           f"seed(s), and at every larger n that ran (up to {top:,}){mode}",
                           th, **cite)
            else:
                j = sizes.index(top)
                res.report(f"{head} does not reach 99% test accuracy on all {seeds} seed(s) up "
                           f"to n = {top:,} (the largest n that ran); mean test accuracy there "
                           f"({len(acc[m][k][j])} of {seeds} seed(s) ran){mode}",
                           float(np.mean(acc[m][k][j])), **cite)
    return thresholds, largest


def _paper_ratio_row(res: CheckResult, g: dict, thresholds: dict, skipped: dict,
                     mode: str) -> None:
    """The quadnet target: FACT-RFM needs no more samples than the paper reports, k <= 3."""
    ks = [k for k in g["k"] if k <= 3]
    unknown = [k for k in ks if not math.isfinite(thresholds["fact"][k]) and any(
        c["k"] == k and c["method"] == "fact" for cs in skipped.values() for c in cs)]
    claim = (f"sparse parity: max over k = {', '.join(map(str, ks))} of FACT-RFM threshold / "
             "the paper's")
    if unknown:
        res.skip(claim, f"cells of k = {', '.join(map(str, unknown))} did not run (the SKIPPED "
                 "rows below)", tolerance=1.0, **QT)
    elif ks:
        ratio = max(thresholds["fact"][k] / PAPER[k] for k in ks)
        res.add(f"{claim} (Boix-Adsera et al. (2025): 500, 500, 5,000){mode}", ratio, 1.0,
                paper="<= 1 (no more samples than the paper)", **QT)


def _confirmed(sizes: list, runs: list, threshold: float, seeds: int) -> bool:
    """Whether the grid size after ``threshold`` ran on every seed and reached 99% there."""
    if not math.isfinite(threshold) or int(threshold) == sizes[-1]:
        return False
    nxt = runs[sizes.index(int(threshold)) + 1]
    return len(nxt) >= seeds and min(nxt) >= LEVEL


def _fact_target_rows(res: CheckResult, g: dict, acc: dict, thresholds: dict, skipped: dict,
                      mode: str) -> None:
    """FACT-RFM's ``k = 4`` threshold against the paper's ~50,000, and (full mode) that every
    FACT-RFM threshold is confirmed by the next grid size."""
    sizes, seeds = list(g["n"]), len(g["trials"])
    missing = {c["k"] for cs in skipped.values() for c in cs if c["method"] == "fact"}
    if 4 in g["k"]:
        claim = ("sparse parity d=50, k=4: FACT-RFM smallest grid n with >= 99% test accuracy "
                 f"on all {seeds} seed(s), confirmed at the next grid n, <= the paper's")
        if 4 in missing:
            res.skip(claim, "cells of k = 4 did not run (the SKIPPED rows below)",
                     tolerance=PAPER[4], **QT)
        else:
            t4 = thresholds["fact"][4]
            ok = _confirmed(sizes, acc["fact"][4], t4, seeds)
            res.add(claim, t4, PAPER[4],
                    passed=ok and t4 <= PAPER[4],
                    paper=f"~{PAPER[4]:,} (Boix-Adsera et al. (2025))", **QT)
    unconfirmed = [k for k in g["k"] if k not in missing and not _confirmed(
        sizes, acc["fact"][k], thresholds["fact"][k], seeds)]
    claim = (f"sparse parity: FACT-RFM thresholds of k = {', '.join(map(str, g['k']))} not "
             f"confirmed (the next grid n below 99% or not run on every seed){mode}")
    if mode:  # quick mode: the small grid may end at a threshold
        res.report(claim, len(unconfirmed), source="quadnet exploration")
    elif missing:
        res.skip(claim, f"cells of k = {', '.join(map(str, sorted(missing)))} did not run (the "
                 "SKIPPED rows below)", tolerance=0, **QT)
    else:
        res.add(claim, len(unconfirmed), 0, paper="0", **QT)


def _ridge_rows(res: CheckResult, cells: SweepCells, g: dict, skipped: dict) -> None:
    """The ridge of the recipe against ridgeless fits, seed 0, ``n <= ridge0_max``."""
    sizes, top = list(g["n"]), g["ridge0_max"]
    diffs, changed, compared = [], 0, 0
    for k in g["k"]:
        for m in METHODS:
            a0, a1 = [], []
            for n in sizes:
                if n > top:
                    break
                c1 = _known(cells, _cell(k, n, 0, m, PARITY_RIDGE))
                if c1 is None:  # not needed at this ridge: not needed ridgeless either
                    continue
                c0 = _known(cells, _cell(k, n, 0, m, 0.0))
                if c0 is None and cells.compute:
                    c0 = cells.run(_cell(k, n, 0, m, 0.0))["test_acc"]
                if c0 is None:
                    skipped.setdefault("ridgeless comparison cell not in a sweep store and "
                                       "QUADNET_CHECK_COMPUTE=0", []).append(
                        _cell(k, n, 0, m, 0.0))
                    continue
                diffs.append(abs(c1 - c0))
                a0.append((n, c0))
                a1.append((n, c1))
            t0 = parity_threshold([n for n, _ in a0], [[a] for _, a in a0])
            t1 = parity_threshold([n for n, _ in a1], [[a] for _, a in a1])
            compared += 1
            changed += t0 != t1
    where = f"sparse parity, seed 0, n <= {top:,}"
    if not diffs:
        res.skip(f"{where}: thresholds with ridge {PARITY_RIDGE:g} vs ridgeless", "none of the "
                 "compared cells ran (the SKIPPED rows below)", tolerance=0, **QT)
        return
    res.metrics["ridge_comparison"] = {"max_abs_acc_diff": max(diffs), "cells": len(diffs),
                                       "thresholds_changed": changed, "compared": compared}
    res.report(f"{where}: max |test accuracy (ridge {PARITY_RIDGE:g}) - test accuracy "
               f"(ridgeless)| over {len(diffs)} fits", max(diffs),
               paper="0 (the ridge does not matter)", source="quadnet exploration")
    res.add(f"{where}: (k, method) pairs whose threshold changes between ridge "
            f"{PARITY_RIDGE:g} and ridgeless (of {compared})", changed, 0, paper="0", **QT)


def _sweep_command(cs: list) -> str:
    """``quadnet sweep parity --set ...`` running the cells ``cs``."""
    axes = {a: sorted({c[a] for c in cs}) for a in ("k", "n", "trial", "method", "ridge")}
    return "quadnet sweep parity " + " ".join(
        f"--set {a}={','.join(map(str, v))}" for a, v in axes.items()
        if a in ("k", "n") or len(v) == 1)


def _not_run_rows(res: CheckResult, not_needed: list, skipped: dict, outside: list,
                  mode: str) -> None:
    """What did not run: the cells not needed, the NFA-RFM cells above :data:`NFA_MAX_N`, and
    per reason the cells skipped (with the ``quadnet sweep parity`` command that runs them)."""
    if outside:
        ks = ", ".join(map(str, sorted({c["k"] for c in outside})))
        res.report(f"sparse parity: NFA-RFM cells not run because n > {NFA_MAX_N:,} (NFA-RFM, "
                   f"which the papers make no claim for, is followed up to there), k = {ks}; "
                   f"`{_sweep_command(outside)}` runs them and the next quadnet verify parity "
                   f"reads them{mode}", len(outside), source="quadnet exploration")
    if not_needed:
        res.report(f"sparse parity: cells not run because two consecutive smaller grid n "
                   f"already reached 99% on every seed (same k and method){mode}",
                   len(not_needed), source="quadnet exploration")
    for why, cs in skipped.items():
        axes = {a: sorted({c[a] for c in cs}) for a in ("k", "n")}
        res.skip(f"sparse parity: {len(cs)} fit(s) not run, k = "
                 f"{','.join(map(str, axes['k']))} at n = "
                 f"{', '.join(f'{n:,}' for n in axes['n'])}",
                 f"{why}; run them with `{_sweep_command(cs)}` (resumable; locally or "
                 f"--dask-local/--scheduler) and rerun quadnet verify parity in the same "
                 f"directory", source="Boix-Adsera et al. (2025)", kind="target")


@register("parity", "FACT-RFM and NFA-RFM learn sparse parity k = 1..4 at d = 50 from a "
          "sample size like the paper's", order=62, heavy=True)
def run(ctx: CheckContext, res: CheckResult) -> None:
    q = ctx.quick
    g = _grid(q)
    mode = " [quick: k <= 3, n <= 2,000, 1 seed]" if q else ""
    cells = SweepCells("parity", ctx.seed, read_stores=not q)
    acc, not_needed, skipped, outside = _measure(ctx, cells, g, _max_n())
    thresholds, largest = _threshold_rows(res, g, acc, mode)
    _paper_ratio_row(res, g, thresholds, skipped, mode)
    _fact_target_rows(res, g, acc, thresholds, skipped, mode)
    if g["ridge0_max"]:
        _ridge_rows(res, cells, g, skipped)
    _not_run_rows(res, not_needed, skipped, outside, mode)
    res.metrics.update({
        "sizes": list(g["n"]), "test_accuracy": acc, "thresholds": thresholds,
        "largest_n_run": largest, "not_needed": len(not_needed), "skipped": skipped,
        "nfa_outside": len(outside),
        **cells.metrics()})
    ctx.draw(res, "parity_phase_transition", {
        "quick": q, "sizes": list(g["n"]), "ks": list(g["k"]), "accuracy": acc,
        "thresholds": thresholds, "paper": {str(k): PAPER[k] for k in g["k"]}})


@figure("parity_phase_transition")
def _figure_parity(f: dict):
    import matplotlib.pyplot as plt

    ks = f["ks"]
    fig = plt.figure(figsize=(COLUMN_WIDTH, 1.25 * len(ks) + 0.8), layout="constrained")
    axes = fig.subplots(len(ks), 1, sharex=True, squeeze=False)[:, 0]
    sizes = np.asarray(f["sizes"], float)
    for ax, k in zip(axes, ks):
        for j, (m, mk) in enumerate((("fact", "o"), ("nfa", "s"))):
            runs = f["accuracy"][m][str(k)]
            xs, ys, mx, my = [], [], [], []
            for n, a in zip(sizes, runs):
                if a:
                    xs += [n * (1.04 if j else 0.96)] * len(a)
                    ys += [100 * v for v in a]
                    mx.append(n)
                    my.append(100 * float(np.mean(a)))
            ax.plot(xs, ys, mk, color=OKABE_ITO[j], ms=2.5, alpha=0.6, mfc="none", mew=0.7)
            ax.plot(mx, my, "-", color=OKABE_ITO[j], label=f"{m.upper()}-RFM (mean; seeds as "
                    "points)")
        ax.axhline(99, color="k", ls=":", lw=0.7)
        ax.axvline(f["paper"][str(k)], color=OKABE_ITO[0], ls="--", lw=0.7,
                   label="FACT-RFM threshold, Boix-Adsera et al. (2025)")
        ax.set_xscale("log")
        ax.set_xticks(sizes, [f"{n / 1000:g}k" if n >= 1000 else f"{n:g}" for n in sizes])
        ax.minorticks_off()
        ax.set_ylim(40, 103)
        ax.set_xlim(sizes[0] / 1.3, sizes[-1] * 1.3)
        ax.set_ylabel(f"k = {k}\ntest acc. (%)")
    axes[-1].set_xlabel("training size n (d = 50, Gaussian kernel, L = 7; dotted: 99%)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=1)
    return fig
