# %% [markdown]
# # FACT vs the neural feature ansatz (NFA) — `quadnet.features`
#
# At a critical point of the weight-decayed loss
# $J(\theta) = \frac1n\sum_i \tfrac12\lVert f(x_i;\theta) - y_i\rVert^2 + \frac\lambda2\lVert\theta\rVert_F^2$,
# every weight matrix $W$ that acts on its input as $Wh$ satisfies the **Features at Convergence
# Theorem** (Boix-Adsera, Mallinar, Simon & Belkin 2025):
# $$W^\top W = \mathrm{FACT} := -\frac{1}{n\lambda}\sum_{i=1}^n (\nabla_h\ell_i)\, h_i^\top .$$
# The neural feature ansatz (NFA; Radhakrishnan et al. 2024) instead *posits*
# $W^\top W \propto \mathrm{AGOP}^s$ with $\mathrm{AGOP} = \frac1n\sum_i \nabla f(x_i)\nabla f(x_i)^\top$
# and a power $s$ to be tuned.
#
# This notebook uses only the public API and shows: FACT holding at trained points (with a
# bound that *certifies* it from the gradient norm), the depth-dependent NFA power $1/N$ in deep
# linear nets, and a construction where FACT holds while the NFA fails.
#
# **Assumes.** Training a small network by gradient descent with weight decay; the chain rule.
# No quotient geometry is needed. (Here $\lambda$ is the weight-decay strength, as in the
# feature-learning literature and quadnet theory §6, and $N$ the depth of a deep linear network,
# which that literature writes $L$.)
#
# **Learning outcomes.**
#
# - state the FACT identity and check it at a trained critical point, with the certificate
#   that bounds its error by the gradient norm;
# - compute the AGOP and the NFA power that fits a deep linear network;
# - build an example in which FACT holds and the NFA fails.
#
# **Theory.** [§6.2 The FACT identity](../docs/theory/features.md#62-the-fact-identity-and-why-it-holds-at-every-point),
# [§6.4 The Neural Feature Ansatz and the AGOP](../docs/theory/features.md#64-the-neural-feature-ansatz-and-the-agop),
# [§6.6 Deep linear networks](../docs/theory/features.md#66-deep-linear-networks),
# [§6.7 When the NFA fails and FACT holds](../docs/theory/features.md#67-when-the-nfa-fails-and-fact-holds);
# derivations in [FACT](../docs/fact.md).

# %%
import numpy as np
import matplotlib.pyplot as plt
import quadnet as qn
import quadnet.features as qf
from quadnet.exceptions import NotCriticalWarning

rng = np.random.default_rng(0)

# %% [markdown]
# ## 1. A positive quadratic network $f(x) = \lVert Wx\rVert^2$
#
# For $f(x) = \sum_j a_j (w_j^\top x)^2 = x^\top Q_a x$, $Q_a = W^\top \operatorname{diag}(a) W$
# (`QuadraticNet(W, a)`, with $a = \mathbf 1$ by default: the positive network), the closed forms
# of [quadnet theory §6.5](../docs/theory/features.md#65-quadratic-networks-closed-forms) are
# $\mathrm{FACT} = -\frac2\lambda Q_a C$ and $\mathrm{AGOP} = 4 Q_a\hat\Sigma Q_a$, with residuals
# $r_i = f(x_i) - y_i$, $C = \frac1n\sum_i r_i x_i x_i^\top$ and
# $\hat\Sigma = \frac1n\sum_i x_i x_i^\top$. `train` runs L-BFGS, then Newton, to
# $\lVert\nabla J\rVert \le 10^{-9}$ (its `gtol`) and records where it stopped in `net.info`.

# %%
d, n, lam = 6, 150, 1e-2
X = rng.standard_normal((n, d))
V = rng.standard_normal((d, 2))
y = np.sum((X @ V) ** 2, axis=1) + 0.1 * rng.standard_normal(n)

net = qf.train(qf.QuadraticNet(0.3 * rng.standard_normal((d, d))), X, y, lam)
print(net.info.grad_norm, net.info.stages)
rep = qf.fact_identity(net, X, y, lam)
print(f"cos(W^T W, FACT)  = {rep.cos_fact:.15f}")
print(f"cos(W W^T, bFACT) = {rep.cos_bfact:.15f}")
print(f"||W^T W - FACT|| = {rep.error:.2e}  <=  bound ||W||_2 ||grad J|| / lam = {rep.bound:.2e}")
print(f"certified: cos >= {rep.cos_lower_bound:.15f}")

# %% [markdown]
# Away from a critical point the identity still holds exactly,
# $W^\top W - \mathrm{FACT} = W^\top \nabla_W J/\lambda$,
# so the error is bounded by the gradient — and `fact_identity` warns when FACT is not
# expected to hold:

# %%
import warnings

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    rep0 = qf.fact_identity(qf.QuadraticNet(0.3 * rng.standard_normal((d, d))), X, y, lam)
print(caught[0].message)
print(f"error {rep0.error:.3g} <= bound {rep0.bound:.3g};  cos = {rep0.cos_fact:.3f}")

# %% [markdown]
# ## 2. Deep linear networks: FACT needs no tuning, the NFA needs $s = 1/N$
#
# For $f(x) = W_N\cdots W_1 x$ of depth $N$ with end-to-end map $W_{N:1} = W_N\cdots W_1$, at
# critical points $\mathrm{bFACT}_l = \mathrm{FACT}_{l+1}^\top$ gives balanced layers and
# $W_1^\top W_1 = (W_{N:1}^\top W_{N:1})^{1/N} = \mathrm{AGOP}^{1/N}$ exactly
# ([quadnet theory §6.6](../docs/theory/features.md#66-deep-linear-networks)).

# %%
c = 4
M = rng.standard_normal((c, d)) * np.array([3.0, 2.0, 1.0, 0.5])[:, None]
Y = X @ M.T
powers = np.linspace(0.05, 1.25, 100)
fig, ax = plt.subplots(figsize=(6, 3.5))
for N in (2, 3, 4):
    Ws = [rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(N - 1)]
    Ws.append(rng.standard_normal((c, d)) / np.sqrt(d))
    dnet = qf.train(qf.DeepLinearNet(Ws), X, Y, lam)
    W1 = dnet.Ws[0]
    G = qf.agop(dnet, X)
    s_best, c_best = qf.best_nfa_power(W1.T @ W1, G)
    cf = qf.cosine(W1.T @ W1, qf.fact_matrix(dnet, X, Y, lam))
    print(f"N={N}: cos(W1^T W1, FACT) = {cf:.12f}; best NFA power {s_best:.5f} (1/N = {1/N:.5f})")
    ax.plot(powers, qf.nfa_cosines(W1.T @ W1, G, powers), label=f"N={N}")
ax.set_xlabel("NFA power s"); ax.set_ylabel("cos(W1ᵀW1, AGOP^s)"); ax.legend();

# %% [markdown]
# ## 3. FACT holds, the NFA fails
#
# `nfa_counterexample` builds a width-7 quadratic net with a fixed signed second layer
# $a = (0.1, \dots, 0.1, -50)$, six quiet input directions and one loud one (variance 16), and a
# target with a negative coefficient on the loud direction. The sign pins the strong negative
# unit to the loud direction; the weak positive units need long weights for the quiet ones. So
# $W^\top W$ lives on the quiet directions while the AGOP (function sensitivity) lives on the
# loud one.

# %%
ex = qf.nfa_counterexample(seed=0)
cnet = qf.train(ex.net0, ex.X, ex.y, ex.lam)
WtW = cnet.W.T @ cnet.W
G = qf.agop(cnet, ex.X)
print("a =", cnet.a, " grad norm", f"{cnet.info.grad_norm:.1e}")
print(f"cos(FACT, W^T W)     = {qf.cosine(qf.fact_matrix(cnet, ex.X, ex.y, ex.lam), WtW):.12f}  (Boix-Adsera et al. 2025 report 0.994)")
for s in (1.0, 0.5):
    print(f"cos(AGOP^{s}, W^T W) = {qf.nfa_cosines(WtW, G, [s])[0]:.4f}"
          f"   (design formula {qf.counterexample_prediction(s):.4f}; Boix-Adsera et al. 2025 report < 0.068)")

# %%
powers = np.linspace(0.02, 1.5, 60)
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(powers, qf.nfa_cosines(WtW, G, powers), label="measured")
ax.plot(powers, [qf.counterexample_prediction(s) for s in powers], "--", label="design formula")
ax.axhline(0.068, color="k", lw=0.8, ls=":", label="Boix-Adsera et al. (2025): 0.068")
ax.set_xlabel("NFA power s"); ax.set_ylabel("cos(WᵀW, AGOP^s)"); ax.legend();

# %% [markdown]
# No power rescues the NFA here: the cosine falls as $s$ grows, and its best value on the grid,
# printed below, is well under FACT's, which holds with no parameter at all.

# %%
s_best, c_best = qf.best_nfa_power(WtW, G)
print(f"best NFA power on the grid: s = {s_best:.2f}, cos = {c_best:.3f}; "
      f"FACT: cos = {qf.cosine(qf.fact_matrix(cnet, ex.X, ex.y, ex.lam), WtW):.3f}")

# %% [markdown]
#
# ## 4. FACT along training
#
# Along gradient descent the cosine is low early and approaches 1 only as the gradient
# vanishes; the identity's bound turns the gradient norm into a certified lower bound.

# %%
d2 = 8
X2 = rng.standard_normal((300, d2))
Vq, _ = np.linalg.qr(rng.standard_normal((d2, 2)))
B = Vq @ np.diag([2.0, -2.0]) @ Vq.T
y2 = np.einsum("ij,jk,ik->i", X2, B, X2)
net0 = qf.QuadraticNet(1e-2 * rng.standard_normal((d2, d2)), np.r_[np.ones(4), -np.ones(4)])
path = qf.gd_path(net0, X2, y2, 1e-2, eta=5e-3, steps=1500, record_every=5)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", NotCriticalWarning)
    reps = [qf.fact_identity(m, X2, y2, 1e-2) for _, m in path]
ks = np.array([k for k, _ in path]) + 1
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.semilogx(ks, [r.cos_fact for r in reps], label="cos(WᵀW, FACT)")
ax.fill_between(ks, [max(r.cos_lower_bound, -1) for r in reps], 1, alpha=0.15, label="certified band")
ax.set_xlabel("GD step + 1"); ax.set_ylabel("cosine"); ax.legend();
print(f"start {reps[0].cos_fact:.3f}, end {reps[-1].cos_fact:.7f}")
