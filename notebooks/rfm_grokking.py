# %% [markdown]
# # Recursive feature machines: grokking modular addition with FACT and NFA updates
#
# A recursive feature machine (RFM; Radhakrishnan et al. 2024) alternates kernel regression
# with a kernel $k_M(x, z)$ that depends on a feature matrix $M$, and an update of $M$ computed
# from the fitted machine:
#
# * **NFA** (neural feature ansatz): $M \leftarrow \mathrm{AGOP}^{1/2}$, the square root of the
#   average gradient outer product;
# * **FACT** (features at convergence): $M \leftarrow (FF^\top)^{1/2}$, with
#   $F = \sum_i \sum_c a_{ic}\, \nabla f_c(x_i)\, x_i^\top$ the FACT matrix of the kernel machine.
#
# This notebook runs both on $(a + b) \bmod p$ (small $p$, so it runs in seconds), looks at the
# learned $M$, and applies the representation diagnostics of `quadnet.features` to learned
# features.
#
# **Assumes.** `fact_vs_nfa` (FACT and the AGOP); kernel ridge regression.
#
# **Learning outcomes.**
#
# - fit a recursive feature machine with the NFA and the FACT update;
# - watch test accuracy jump (grokking) on modular addition and read the learned $M$;
# - apply the representation diagnostics to learned features.
#
# **Theory.** [§6.8 Recursive feature machines](../docs/theory/features.md#68-recursive-feature-machines),
# [§6.9 Representation diagnostics](../docs/theory/features.md#69-representation-diagnostics);
# derivations in [recursive feature machines](../docs/rfm.md).

# %%
import numpy as np
import matplotlib.pyplot as plt
import quadnet
from quadnet.features.kernels import kernel_matrix

p = 23
data = quadnet.modular_arithmetic(p, op="add", train_fraction=0.75, seed=0)
print("train", data.X_train.shape, "test", data.X_test.shape)

# %% [markdown]
# ## 1. Grokking: test accuracy jumps after many iterations
#
# Both machines interpolate the training set from the start (ridgeless kernel regression); test
# accuracy stays at or below chance ($1/p$) for several iterations and then climbs to 100%
# (printed below the figure).

# %%
fact = quadnet.RecursiveFeatureMachine(kernel="exp_inner", bandwidth=3.0, update="fact",
                                      fact_form="ffT", normalize="trace", iters=20)
nfa = quadnet.RecursiveFeatureMachine(kernel="gaussian", bandwidth=2.5, update="nfa",
                                     centre_agop=True, normalize=None, iters=20)
for m in (fact, nfa):
    m.fit(data.X_train, data.y_train, data.X_test, data.y_test)

fig, ax = plt.subplots(figsize=(5.5, 3.2))
for name, m in (("FACT-RFM", fact), ("NFA-RFM", nfa)):
    ax.plot(100 * np.array(m.history_["val_acc"]), "o-", ms=3, label=name)
ax.set_xlabel("RFM iteration"); ax.set_ylabel("test accuracy (%)")
ax.set_title(f"(a + b) mod {p}"); ax.legend(); plt.show()
for name, m in (("FACT-RFM", fact), ("NFA-RFM", nfa)):
    val = np.array(m.history_["val_acc"])
    print(f"{name}: train accuracy >= {min(m.history_['train_acc']):.3f} at every iteration; test "
          f"accuracy {val[0]:.3f} at iteration 0 (chance {1 / p:.3f}), first above 0.5 at iteration "
          f"{int(np.argmax(val > 0.5))}, {val[-1]:.3f} at the end")

# %% [markdown]
# ## 2. The learned feature matrices are block-circulant
#
# Both machines learn Fourier features `e^{iωa} + e^{iωb}` of the two summands, so each
# `p × p` block of `M` depends only on `(i − j) mod p`: `M` is block-circulant.
# `block_circulant_score` is the fraction of the energy of `M` (diagonal and block means removed)
# in that structure: 0 for `M_0 = I`, about `1/p` for noise, 1 for exact structure (the first
# line printed below measures the first two).

# %%
noise = [quadnet.features.block_circulant_score(A @ A.T) for A in
         np.random.default_rng(2).standard_normal((20, 2 * p, 2 * p))]
print(f"score of I: {quadnet.features.block_circulant_score(np.eye(2 * p)):.3f}; of 20 Wishart "
      f"noise matrices: {np.mean(noise):.3f} +- {np.std(noise):.3f} (1/p = {1 / p:.3f})")
fig, axes = plt.subplots(1, 2, figsize=(8, 3.6))
for ax, (name, m) in zip(axes, (("FACT-RFM", fact), ("NFA-RFM", nfa))):
    M = m.M_ - np.diag(np.diag(m.M_))
    ax.imshow(M, cmap="RdBu_r")
    ax.set_title(f"{name}: score {quadnet.features.block_circulant_score(m.M_):.3f}", fontsize=9)
print("fixed-point residual ||F/|F| - M/|M||| along FACT-RFM:",
      np.round(fact.history_["fixed_point_residual"][::4], 3))

# %% [markdown]
# ## 3. Diagnostics of the learned representation
#
# * `effective_rank` = `exp(entropy)` of the normalised eigenvalues: how many directions `M`
#   (equivalently the features `M^{1/2}x`) really uses, out of `2p`.
# * `distance_correlation(X, Φ)`: how much the pairwise geometry of the inputs survives in the
#   features `Φ = M^{1/2}x`.
# * `linear_readout_accuracy`: a linear read-out of the label from the kernel representation
#   `φ(x) = (k_M(x, x_j))_j`; with `M = I` it cannot read `(a + b) mod p` off, with the learned `M`
#   it can. (A linear read-out from `M^{1/2}x` itself is still linear in `x`, so it cannot.)

# %%
Xtr, Xte = data.X_train, data.X_test
ytr, yte = data.info["labels_train"], data.info["labels_test"]
for name, m in (("identity M", None), ("FACT-RFM", fact), ("NFA-RFM", nfa)):
    M = np.eye(2 * p) if m is None else m.M_
    b = 3.0 if m is not nfa else 2.5           # the bandwidth (quadnet theory §6.8)
    kern = "exp_inner" if m is not nfa else "gaussian"
    Phi = Xte if m is None else m.features(Xte)  # M^{1/2} x
    ktr, kte = kernel_matrix(kern, Xtr, Xtr, M, b), kernel_matrix(kern, Xte, Xtr, M, b)
    print(f"{name:11s} eff. rank of M {quadnet.effective_rank(M):5.1f} / {2 * p}   "
          f"distance corr {quadnet.features.distance_correlation(Xte, Phi):.3f}   "
          f"angle corr {quadnet.features.angle_correlation(Xte, Phi):.3f}   "
          f"kernel read-out acc {quadnet.features.linear_readout_accuracy(ktr, ytr, kte, yte):.3f}")

# %% [markdown]
# ## 4. Sparse parity: `M` finds the support
#
# For `y = x_1 x_5 x_9`-type targets on `{±1}^50`, FACT-RFM with 1000 samples concentrates `M` on
# the `k = 3` relevant coordinates: its effective rank drops from 50 to a few.

# %%
par = quadnet.sparse_parity(50, 3, 1000, n_test=500, seed=1)
rfm = quadnet.RecursiveFeatureMachine(kernel="gaussian", bandwidth=7.0, update="fact", iters=8)
rfm.fit(par.X_train, par.y_train, par.X_test, par.y_test)
S = par.info["support"]
print("support", S, " test accuracy", rfm.history_["val_acc"][-1])
print("effective rank of M:", round(quadnet.effective_rank(rfm.M_), 2),
      " share of diag(M) on the support:", round(np.diag(rfm.M_)[S].sum() / np.trace(rfm.M_), 3))

# %% [markdown]
# ## 5. The same diagnostics on a trained quadratic network
#
# A positive quadratic network `f(x) = ‖Uᵀx‖²` (quadnet theory §0) trained with weight decay on a
# rank-2 quadratic target `‖Bᵀx‖²` learns features `Uᵀx` whose covariance has effective rank
# about 2, and whose pairwise distances track those of the target features `Bᵀx`.

# %%
rng = np.random.default_rng(0)
d, width, n = 8, 6, 200
B = np.linalg.qr(rng.standard_normal((d, 2)))[0]  # orthonormal: Cov(B^T x) = I_2
X = rng.standard_normal((n, d))
y = np.sum((X @ B) ** 2, axis=1)
net = quadnet.train(quadnet.QuadraticNet(0.3 * rng.standard_normal((width, d))), X, y, 1e-3,
                    warn=False)
Phi = X @ net.W.T  # features U^T x, U = W^T
print("effective rank of Cov(U^T x):", round(quadnet.effective_rank(quadnet.features.feature_covariance(Phi)), 2),
      " (target rank 2, width", width, ")")
print("distance corr. with the target features B^T x:",
      round(quadnet.features.distance_correlation(X @ B, Phi), 3))
