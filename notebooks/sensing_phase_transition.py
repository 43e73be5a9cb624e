# %% [markdown]
# # Gaussian rank-one sensing and its phase transition
#
# We observe $y_i = x_i^\top Q^\star x_i$ for Gaussian $x_i \sim N(0, I_d)$, $i = 1..m$, with a
# planted rank-$r$ PSD $Q^\star = U^\star U^{\star\top}$, and fit a positive quadratic network by
# minimising (quadnet theory §4)
# $$L(U) = \frac{1}{2m}\sum_{i=1}^m \big(\|U^\top x_i\|^2 - y_i\big)^2 .$$
# Each measurement is the rank-one matrix $A_i = x_ix_i^\top$, but no $d\times d$ matrix per
# sample is ever formed: one gradient costs $O(mdr)$.
#
# The degrees of freedom are $n_h = dr - r(r-1)/2 = \dim M_r^+$: no method can recover $Q^\star$
# from fewer samples. How many more does it take in practice, and how does that compare with the
# sufficient sample size of Cheng (2026), which is deliberately conservative?
#
# **Assumes.** The geometry track (at least `quotient_geometry` and
# `lifts_geodesics_and_gradients`); Gaussian random vectors and Isserlis' theorem.
#
# **Learning outcomes.**
#
# - set up rank-one Gaussian sensing with `GaussianSensing.random` and evaluate its loss and
#   gradient in $O(mdr)$;
# - compare the sample normal operator with the population operator
#   $T(H) = 2H + \operatorname{tr}(H)\,I$;
# - run `recover` from the spectral start and locate the empirical phase transition in $m/n_h$;
# - read quadnet's sufficient sample size and say how conservative it is.
#
# **Theory.** [§4.1 Data](../docs/theory/sensing.md#41-data),
# [§4.3 The normal operators and Isserlis' theorem](../docs/theory/sensing.md#43-the-normal-operators-and-isserlis-theorem),
# [§4.6 The spectral (moment) initialiser](../docs/theory/sensing.md#46-the-spectral-moment-initialiser),
# [§4.7 The guarantee chain and the explicit sample size](../docs/theory/sensing.md#47-the-guarantee-chain-and-the-explicit-sample-size),
# [§4.8 Degrees of freedom](../docs/theory/sensing.md#48-degrees-of-freedom).

# %%
import tempfile
import warnings
import numpy as np
import matplotlib.pyplot as plt
from quadnet.plotting import NOTEBOOK_DPI
import quadnet
from quadnet import GaussianSensing, population_normal_operator
from quadnet import recover, sufficient_sample_size

plt.rcParams["figure.dpi"] = NOTEBOOK_DPI
d, r = 10, 2
n_h = d * r - r * (r - 1) // 2
prob = GaussianSensing.random(d, r, 3 * n_h, seed=0)
relerr = lambda Q: np.linalg.norm(Q - prob.Q_star) / np.linalg.norm(prob.Q_star)
print(f"d = {d}, r = {r}: n_h = {n_h} degrees of freedom, m = {prob.m} measurements")

# %% [markdown]
# ## The normal operator concentrates
#
# The least-squares geometry is governed by $T_m(H) = \frac1m\sum_i \langle A_i, H\rangle A_i$,
# whose expectation is $T(H) = 2H + \operatorname{tr}(H)\,I$. Its fluctuation around $T$ shrinks
# like $1/\sqrt m$, which drives every guarantee of Cheng (2026) (it needs it uniformly over all
# symmetric $H$, hence many samples).

# %%
rng = np.random.default_rng(1)
H = rng.standard_normal((d, d)); H = (H + H.T) / 2
ms = np.unique(np.logspace(1, 4, 12).astype(int))
dev = [np.linalg.norm(GaussianSensing.random(d, r, m, seed=m).normal_operator(H)
                      - population_normal_operator(H)) / np.linalg.norm(population_normal_operator(H))
       for m in ms]
fig, ax = plt.subplots(figsize=(5.5, 3.8))
ax.loglog(ms, dev, "o-", label=r"$\|T_m(H) - T(H)\|_F / \|T(H)\|_F$")
ax.loglog(ms, dev[0] * np.sqrt(ms[0] / ms), "k:", label=r"$\propto m^{-1/2}$")
ax.set_xlabel("number of measurements m"); ax.set_ylabel("relative deviation"); ax.legend()
plt.show()

# %% [markdown]
# ## Spectral start, then descent
#
# The moment matrix $M = \frac1m\sum_i y_i x_ix_i^\top$ estimates $T(Q^\star) = 2Q^\star +
# \operatorname{tr}(Q^\star) I$; inverting $T$ and keeping the top-$r$ eigenpairs gives the spectral
# start $U_0$. From there L-BFGS and gradient descent converge linearly to $Q^\star$ (the
# local rate is set by the effective Hessian, see `curvature_and_rates`).

# %%
U0 = prob.spectral_init(r)
print(f"spectral start: relative error {relerr(U0 @ U0.T):.3f} (rough at m = 3 n_h: the moment "
      "estimate needs many samples; the guarantee needs a much closer start, yet the local "
      "methods below still converge from this one)")
fig, ax = plt.subplots(figsize=(5.5, 3.8))
for method in ("lbfgs", "gd"):
    res = recover(prob, r, method=method, init="spectral")
    ax.semilogy(res.history["loss"], label=f"{method}: {res.iterations} iterations, "
                f"final error {relerr(res.Q):.1e}")
ax.set_xlabel("iteration"); ax.set_ylabel("loss L(U)"); ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## The phase transition, as a resumable sweep
#
# Success ($\|Q - Q^\star\|_F \le 10^{-6}\|Q^\star\|_F$) against $m/n_h$ over independent trials
# is a parameter sweep: `quadnet.harness.run_sweep("recovery", store)` cuts it into cells, runs them (here in
# this process; `workers=2`, `dask_local=2` or a Dask `scheduler` address for more), writes each
# finished cell to the store atomically and collects `results.csv`. The same command line is
# `quadnet sweep recovery --quick --store DIR`; rerunning it resumes a killed sweep.

# %%
store = tempfile.mkdtemp()
rep = quadnet.harness.run_sweep("recovery", store, quick=True, workers=0, progress=False)
rows = quadnet.harness.read_results(store)
print(f"{rep.n_cells} cells -> {rep.results.name}; first row: {rows[0]}")
fig, ax = plt.subplots(figsize=(5.5, 3.8))
for rr in sorted({row["r"] for row in rows}):
    ratios = sorted({row["ratio"] for row in rows if row["r"] == rr})
    rate = [np.mean([row["success"] for row in rows if row["r"] == rr and row["ratio"] == q])
            for q in ratios]
    ax.plot(ratios, rate, "o-", label=f"d = {rows[0]['d']}, r = {rr}")
ax.axvline(1.0, color="k", ls=":", label="m = n_h (degrees of freedom)")
ax.set_xlabel("m / n_h"); ax.set_ylabel("success rate"); ax.set_ylim(-0.05, 1.05); ax.legend()
plt.show()
stuck = [row for row in rows if not row["success"] and row["ratio"] >= 3]
print(f"{len(stuck)} failures at m >= 3 n_h; their relative errors:",
      [round(row["rel_error"], 2) for row in stuck])

# %% [markdown]
# The quick grid has few trials per point (printed below), so the curve is noisy. A failure well
# above the threshold is a trial where L-BFGS stopped at a stationary point that does not
# interpolate (relative error of order one, not a slightly-too-large one);
# `recover(..., restarts=k)` restarts from small random starts in that case. The full grid
# (`quadnet sweep recovery`) has more trials, two dimensions, three ranks and both
# initialisations:

# %%
sweep = quadnet.harness.SWEEPS["recovery"]
for mode in ("quick", "full"):
    grid = getattr(sweep, mode)
    print(f"{mode:5s}: {len(grid['trial'])} trials per point, d in {grid['d']}, r in {grid['r']}, "
          f"init in {grid['init']}, m/n_h in {grid['ratio']}")

# %% [markdown]
# ## The sufficient sample size of the guarantee
#
# The guarantee chain of Cheng (2026) (full-space concentration $\Rightarrow$ spectral start in the basin
# $\Rightarrow$ linear convergence) yields an explicit sample size that scales like $r^2 d^8$.
# `sufficient_sample_size` prints quadnet's own chain of the same shape, whose bound scales like
# $r\kappa^2 d^6/p$ (linear in $r$; quadnet theory §4.7). The sweep above succeeds with a few
# times $n_h$.

# %%
for dd, rr in ((10, 1), (10, 2), (20, 2)):
    nh = dd * rr - rr * (rr - 1) // 2
    bound = sufficient_sample_size(dd, rr)
    print(f"d = {dd:2d}, r = {rr}: n_h = {nh:3d}, sufficient m = {bound:.2e} "
          f"= {bound / nh:.1e} x n_h")
