# %% [markdown]
# # Effective curvature and local rates
#
# Because $L(U) = \ell(UU^\top)$ is constant along fibres, its Hessian always has
# $r(r-1)/2$ flat directions at a minimiser: the vertical ones. They carry no information about
# the problem. The curvature that matters is the **effective Hessian**, the Hessian restricted to
# the horizontal space $\mathcal{H}_U$ (quadnet theory §3):
# $$H_{\mathrm{eff}} = B^\top\, \nabla^2L(U)\, B, \qquad B \text{ an orthonormal basis of } \mathcal{H}_U .$$
# Its smallest eigenvalue $\lambda_{\min}$ sets the local rate of gradient flow,
# $\|Q(t) - Q^\star\|_F \asymp e^{-\lambda_{\min} t}$, and its spectrum sets the per-step
# contraction $\max_i|1 - \eta\lambda_i|$ of gradient descent. We measure both on Gaussian sensing.
#
# **Assumes.** The geometry units `quotient_geometry`, `lifts_geodesics_and_gradients` and
# `curvature_of_the_quotient` (horizontal space, the Riemannian Hessian); gradient descent on a
# quadratic.
#
# **Learning outcomes.**
#
# - build the effective Hessian $B^\top \nabla^2L(U) B$ from `PSDQuotient.horizontal_basis` and see the
#   $r(r-1)/2$ vertical zeros of the full factor Hessian;
# - predict the local decay rate of gradient flow from $\lambda_{\min}$ and check it on a flow;
# - predict the per-step contraction $\max_i |1 - \eta\lambda_i|$ of gradient descent and the
#   step size above which it diverges;
# - compare the sample effective spectrum with its population limit.
#
# **Theory.** [§3.1 Definition](../docs/theory/curvature.md#31-definition),
# [§3.3 The vertical kernel at critical points](../docs/theory/curvature.md#33-the-vertical-kernel-at-critical-points),
# [§3.5 Local rates](../docs/theory/curvature.md#35-local-rates),
# [§4.5 The population effective Hessian](../docs/theory/sensing.md#45-the-population-effective-hessian).

# %%
import numpy as np
import matplotlib.pyplot as plt
from quadnet.plotting import NOTEBOOK_DPI
import quadnet
from quadnet import GaussianSensing, PSDQuotient
from quadnet.curvature import effective_hessian, factor_hessian, effective_spectrum
from quadnet.sensing import population_effective_spectrum

plt.rcParams["figure.dpi"] = NOTEBOOK_DPI
d, r = 6, 2
n_h = d * r - r * (r - 1) // 2
prob = GaussianSensing.random(d, r, 40 * n_h, seed=0)
U_star = prob.U_star                     # the planted factor: a zero-residual minimiser
print(f"d = {d}, r = {r}: n_h = {n_h}, m = {prob.m}")

# %% [markdown]
# ## 1. Vertical zeros versus horizontal curvature
#
# At the planted minimiser the full $dr\times dr$ factor Hessian has exactly $r(r-1)/2 = 1$ zero
# eigenvalue (the fibre direction $U\Omega$); the effective Hessian is that spectrum with the zero
# removed.

# %%
full = np.linalg.eigvalsh(factor_hessian(prob, U_star))
eff = np.linalg.eigvalsh(effective_hessian(prob, U_star))
print("factor Hessian eigenvalues:   ", np.round(full, 4))
print("effective Hessian eigenvalues:", np.round(eff, 4))

# %% [markdown]
# ## 2. Empirical curvature converges to the population formula
#
# For Gaussian sensing the population effective Hessian at $Q^\star = U^\star U^{\star\top}$ is the form
# $2\|\zeta\|_F^2 + \operatorname{tr}(\zeta)^2$, $\zeta = \xi U^{\star\top} + U^\star\xi^\top$, with a closed-form
# spectrum in terms of the eigenvalues $g_j$ of $U^{\star\top}U^\star$ ($4g_j$, $4(g_i+g_j)$ and the
# eigenvalues of $8\operatorname{diag}(g) + 4\sqrt g\sqrt g^\top$). The empirical effective Hessian
# approaches it as $m$ grows.

# %%
pop = population_effective_spectrum(U_star)
fig, ax = plt.subplots(figsize=(5.8, 3.8))
for m, c in ((2 * n_h, "tab:red"), (10 * n_h, "tab:orange"), (200 * n_h, "tab:green")):
    pm = GaussianSensing.random(d, r, m, seed=m)
    # the same planted Q*: re-measure it with fresh Gaussian vectors
    pm = GaussianSensing(pm.X, pm.measure(prob.Q_star))
    ax.plot(np.linalg.eigvalsh(effective_hessian(pm, U_star)), "o-", color=c, ms=4, label=f"m = {m}")
ax.plot(pop, "k*", ms=10, label="population (closed form)")
ax.set_xlabel("index"); ax.set_ylabel("eigenvalue of H_eff"); ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## 3. The flow's rate is $\lambda_{\min}$
#
# Start gradient flow close to $U^\star$ and fit the exponential decay of
# $\|Q(t) - Q^\star\|_F$; compare with $\lambda_{\min}(H_{\mathrm{eff}})$, computed matrix-free by
# `effective_spectrum` (Lanczos on the horizontal space, with an a-posteriori error bound).

# %%
spec = effective_spectrum(prob, U_star, k=1, which="smallest")
lam_min, v_min = spec.eigenvalues[0], spec.eigenvectors[0]
rng = np.random.default_rng(1)
M = PSDQuotient(d, r)
# start near U*: mostly along the slowest horizontal direction, plus a random horizontal part
U0 = U_star + 1e-4 * (v_min + 0.3 * M.random_tangent_vector(U_star, rng=rng))
# stop at 8 / lambda_min: the error stays far above the integrator's tolerance (atol 1e-12)
times = np.linspace(0, 8 / lam_min, 49)
flow = quadnet.gradient_flow(prob, U0, times)
err = np.linalg.norm(flow.Q - prob.Q_star, axis=(1, 2))
tail = slice(len(times) // 2, None)          # after the faster modes have died out
rate = -np.polyfit(times[tail], np.log(err[tail]), 1)[0]
print(f"lambda_min = {lam_min:.6f} (error bound {spec.error_bound[0]:.1e}); "
      f"fitted decay rate = {rate:.6f}; relative difference {abs(rate - lam_min) / lam_min:.1e}")
fig, ax = plt.subplots(figsize=(5.5, 3.8))
ax.semilogy(times, err, label="||Q(t) - Q*||_F")
ax.semilogy(times, err[0] * np.exp(-lam_min * times), "k:", label="exp(-lambda_min t)")
ax.set_xlabel("time t"); ax.set_ylabel("error"); ax.legend()
plt.show()

# %% [markdown]
# ## 4. Gradient descent contracts by $\max_i |1 - \eta\lambda_i|$ per step
#
# For $\eta < 2/\lambda_{\max}$ the error of gradient descent shrinks each step by the factor
# $\gamma(\eta) = \max_i |1-\eta\lambda_i|$, smallest at $\eta^\star = 2/(\lambda_{\min}+\lambda_{\max})$;
# beyond $2/\lambda_{\max}$ the minimiser repels: the error along the top eigenvector grows by
# the factor $|1 - \eta\lambda_{\max}| > 1$ per step, until it leaves the neighbourhood where the
# linearisation holds (the second cell below).

# %%
lam = np.linalg.eigvalsh(effective_hessian(prob, U_star))
U1 = U0   # the flow's start: mostly the slowest mode, every horizontal mode present
for eta in (0.5 / lam[-1], 1.0 / lam[-1], 2 / (lam[0] + lam[-1]), 1.99 / lam[-1]):
    gd = quadnet.gradient_descent(prob, U1, eta, 2000)
    e = np.linalg.norm(gd.Q - prob.Q_star, axis=(1, 2))
    # fit the per-step factor on the second half of the stretch where the error is far above
    # rounding (by then the slowest mode dominates)
    k = np.arange(len(e)); last = k[e > 1e-11].max(); window = (k >= last // 2) & (k <= last)
    measured = np.exp(np.polyfit(k[window], np.log(e[window]), 1)[0])
    predicted = np.max(np.abs(1 - eta * lam))
    print(f"eta = {eta * lam[-1]:.2f}/lambda_max: predicted contraction {predicted:.5f}, measured {measured:.5f}")

# %%
eta = 2.1 / lam[-1]                  # above the stability limit 2 / lambda_max
gd = quadnet.gradient_descent(prob, U1, eta, 300)
e = np.linalg.norm(gd.Q - prob.Q_star, axis=(1, 2))
k = np.arange(len(e)); grow = (k >= 20) & (e < 1e-3)   # the top mode dominates, still linear
measured = np.exp(np.polyfit(k[grow], np.log(e[grow]), 1)[0])
print(f"eta = 2.10/lambda_max: predicted growth {abs(1 - eta * lam[-1]):.4f} per step, "
      f"measured {measured:.4f}; the error grows from {e[0]:.1e} to {e[-1]:.1e} in {len(e) - 1} steps")
