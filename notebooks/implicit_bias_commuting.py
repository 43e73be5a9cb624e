# %% [markdown]
# # Implicit bias when the measurements commute
#
# If all measurement matrices share one eigenbasis, $A_i = V\operatorname{diag}(a_i)V^\top$, and the
# start is in their algebra (e.g. $Q_0 = \varepsilon I$), the factor gradient flow never leaves it:
# $Q(t) = V\operatorname{diag}(q(t))V^\top$ with
# $$\dot q = -4\,\nabla\tilde\ell(q)\odot q \quad\Longleftrightarrow\quad
# \tfrac{d}{dt}\log q = -4\nabla\tilde\ell(q),$$
# a **mirror flow** for the entropy $\varphi(q) = \sum_j q_j\log q_j - q_j$ (quadnet theory §5). Its limit
# is therefore a **Bregman projection** of the start onto the interpolating set
# $\{q \ge 0: Aq = y\}$, and as $\varepsilon \to 0$ it selects the minimum-trace interpolant.
# We check each statement numerically.
#
# **Assumes.** `quotient_geometry` (the factorisation $Q = UU^\top$) and gradient flow;
# convex duality at the level of Lagrange multipliers.
#
# **Learning outcomes.**
#
# - reduce the factor flow with commuting measurements to a flow on eigenvalues;
# - recognise that flow as the entropy mirror flow and compute its limit as a Bregman projection;
# - check that a small start selects the minimum-trace interpolant;
# - measure the $O(\eta)$ deviation of finite-step descent from the flow's limit.
#
# **Theory.** [§5.1 The commuting setting](../docs/theory/commuting.md#51-the-commuting-setting),
# [§5.2 Spectral coordinates: the entropy mirror flow](../docs/theory/commuting.md#52-spectral-coordinates-the-entropy-mirror-flow),
# [§5.3 The selection law: a Bregman projection](../docs/theory/commuting.md#53-the-selection-law-a-bregman-projection),
# [§5.5 Small initialisation selects the minimum trace](../docs/theory/commuting.md#55-small-initialisation-selects-the-minimum-trace).

# %%
import numpy as np
import matplotlib.pyplot as plt
from quadnet.plotting import NOTEBOOK_DPI
import quadnet
from quadnet.commuting import CommutingSensing, random_commuting_instance
from quadnet.harness.cells import selection_cell
from quadnet.commuting import bregman_projection, min_trace_solution

plt.rcParams["figure.dpi"] = NOTEBOOK_DPI
rng = np.random.default_rng(0)
d, m = 8, 3
inst = random_commuting_instance(0, d=d, m=m)      # spectra a_i, y = A q* with q* > 0
A, y = inst["spectra"], inst["y"]
V = quadnet.geometry.random_orthogonal(d, rng)              # the common eigenbasis
loss = CommutingSensing(V, A, y)
print(f"{m} commuting measurements of {d} x {d} PSD predictors")

# %% [markdown]
# ## 1. The factor flow stays in the algebra and is the mirror flow
#
# Run the *factor* gradient flow $\dot U = -2SU$ from $U_0 = \sqrt\varepsilon\, I$ and the
# *spectral* mirror flow from $q_0 = \varepsilon\mathbf 1$; compare.

# %%
eps = 1e-2
times = np.array([0.0, 0.3, 1, 3, 10, 30, 100, 1000])
mirror = loss.mirror_flow(eps * np.ones(d), times)
factor = quadnet.gradient_flow(loss, np.sqrt(eps) * np.eye(d), times)
print("max commutant residual of Q(t):", max(loss.commutant_residual(Q) for Q in factor.Q))
print("max |spectral coords of factor flow - mirror flow|:",
      max(np.abs(loss.spectral_coordinates(Q) - q).max() for Q, q in zip(factor.Q, mirror.q)))
fig, ax = plt.subplots(figsize=(5.5, 3.8))
ax.semilogx(times[1:], mirror.q[1:], "-")
ax.set_xlabel("time t"); ax.set_ylabel("eigenvalues q_j(t) of Q(t)")
ax.set_title("mirror flow from q0 = 0.01 * 1")
plt.show()

# %% [markdown]
# ## 2. The limit is the Bregman projection of the start
#
# $q_\infty = \arg\min\{D_\varphi(q, q_0) : Aq = y,\ q\ge 0\}$ with
# $D_\varphi(q,q_0) = \sum_j q_j\log(q_j/q_{0,j}) - q_j + q_{0,j}$, computed by a Newton method on the
# dual (`quadnet.commuting.bregman_projection`; `loss.selection_limit(q0)` calls it).

# %%
for q0 in (eps * np.ones(d), rng.uniform(0.01, 1.0, d)):
    lim = loss.mirror_flow(q0, np.array([0.0, 1e4])).q[-1]
    proj = loss.selection_limit(q0)
    print(f"start in [{q0.min():.2f}, {q0.max():.2f}]: ||flow limit - Bregman projection|| / ||q|| = "
          f"{np.linalg.norm(lim - proj.q) / np.linalg.norm(proj.q):.1e}")

# %% [markdown]
# ## 3. Small initialisation selects the minimum-trace interpolant
#
# With $q_0 = \varepsilon\mathbf 1$, $D_\varphi(q, q_0) = \varphi(q) + \log(1/\varepsilon)\,\operatorname{tr} q +
# \varepsilon d$ ($\varphi$ the entropy above), so as $\varepsilon\to0$ the trace term wins: the limit tends to
# $\arg\min\{\operatorname{tr} q : Aq = y, q\ge0\}$ (an LP), with the trace gap bounded by
# $(\varphi(q_{\rm mt}) - \varphi(q_\varepsilon))/\log(1/\varepsilon)$ (the curve "entropy bound" below). `selection_cell` is the unit of the
# `selection` sweep (`quadnet sweep selection --quick --store DIR`).

# %%
Ls = [1, 2, 4, 8, 16, 32, 64]
cells = [selection_cell(None, 0, d=d, m=m, log_inv_eps=L) for L in Ls]
fig, ax = plt.subplots(figsize=(5.5, 3.8))
ax.semilogy(Ls, [max(c["trace_gap"], 1e-17) for c in cells], "o-", label="tr q_eps - min trace")
ax.semilogy(Ls, [max(c["entropy_bound"], 1e-17) for c in cells], "s--", label="entropy bound")
ax.semilogy(Ls, [max(c["dist"], 1e-17) for c in cells], "^-", label="||q_eps - q_mt|| / ||q_mt||")
ax.set_xlabel("log(1/eps)"); ax.set_ylabel("gap"); ax.legend(fontsize=8)
plt.show()
print("minimum trace (LP):", cells[0]["min_trace"], "; face dimension:", cells[0]["face_dimension"])

# %% [markdown]
# ## 4. Finite steps: gradient descent is off by $O(\eta)$
#
# Factor gradient descent in these coordinates is $q_{k+1} = (1 - 2\eta g_k)^2\odot q_k$. Its
# limit differs from the flow's Bregman projection by a term proportional to the step.

# %%
proj = loss.selection_limit(eps * np.ones(d)).q
scale = np.linalg.eigvalsh(A.T @ A / m).max() * proj.max()
etas = np.array([0.32, 0.16, 0.08, 0.04]) / scale
gaps = []
for eta in etas:
    gd = loss.gradient_descent(eps * np.ones(d), eta, 100000, rtol=1e-13)
    gaps.append(np.linalg.norm(gd.q[-1] - proj) / np.linalg.norm(proj))
fig, ax = plt.subplots(figsize=(5.5, 3.8))
ax.loglog(etas, gaps, "o-", label="||q_GD - q_flow|| / ||q_flow||")
ax.loglog(etas, gaps[-1] * etas / etas[-1], "k:", label="slope 1")
ax.set_xlabel("step size eta"); ax.set_ylabel("relative difference"); ax.legend()
plt.show()
print("fitted slope:", np.polyfit(np.log(etas), np.log(gaps), 1)[0])
