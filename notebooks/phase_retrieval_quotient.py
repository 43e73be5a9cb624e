# %% [markdown]
# # Phase retrieval as a quotient problem
#
# **Assumes.** The geometry track (at least `quotient_geometry` and
# `lifts_geodesics_and_gradients`) and `sensing_phase_transition`; complex numbers, the conjugate
# transpose $A^*$ and circular complex Gaussian vectors.
#
# **Learning outcomes.** After this unit you can
#
# - explain why the global phase of phase retrieval is the fibre $\mathrm{U}(1)$ of the quotient
#   $\mathbb{C}^d_*/\mathrm{U}(1)$, and why the complex fibre $\mathrm{U}(r)$ has no $\det = -1$ trap;
# - compute the quotient distance by a complex Procrustes alignment and check it against the
#   Bures–Wasserstein formula on Hermitian matrices;
# - derive the complex Isserlis identity $\mathbb{E}[(a^*Ha)\,aa^*] = H + \operatorname{tr}(H)I$ and
#   say where the real factor 2 went, and check it by Monte Carlo;
# - measure the overlap of the spectral start against $m/d$ for the identity and the optimal
#   preprocessing, next to the weak-recovery threshold $m/d = 1$;
# - recover a phase-retrieval signal with `recover()` and with pymanopt's solvers on
#   `PSDQuotient(d, 1, field="complex")`, and read the success curve against $2d$ and $4d - 4$.
#
# **Theory.** [§8.1 What changes, in one table](../docs/theory/hermitian.md#81-what-changes-in-one-table),
# [§8.2 Fibres and alignment: complex Procrustes](../docs/theory/hermitian.md#82-fibres-and-alignment-complex-procrustes),
# [§8.3 The real inner product, vertical and horizontal spaces, dimension](../docs/theory/hermitian.md#83-the-real-inner-product-vertical-and-horizontal-spaces-dimension),
# [§8.6 Curvature: O'Neill's formula with the real inner product](../docs/theory/hermitian.md#86-curvature-oneills-formula-with-the-real-inner-product),
# [§8.8 The complex Isserlis identity](../docs/theory/hermitian.md#88-the-complex-isserlis-identity),
# [§8.10 The spectral start and its weak-recovery threshold](../docs/theory/hermitian.md#810-the-spectral-start-and-its-weak-recovery-threshold),
# [§8.11 How many measurements: the limits](../docs/theory/hermitian.md#811-how-many-measurements-the-limits).
# The real-field versions are §1 and §4 of the theory pages, summarised in the table of §8.1.
#
# In phase retrieval we observe intensities $y_i = \lvert a_i^*x\rvert^2$ of a signal $x \in \mathbb{C}^d$
# (the theory pages write $x_i$ for the sensing vectors and $u^\star$ for the signal). The intensity is
# $a_i^*Qa_i$ with $Q = xx^*$, so only the Hermitian rank-one matrix $Q$ can be recovered, and the signal
# only up to a global phase $e^{i\theta}$. This is the quotient geometry of the geometry track with the
# unitary group in place of the orthogonal one. Exercises 1–4 (solutions hidden below each one) check
# the main facts numerically.

# %%
import numpy as np
import matplotlib.pyplot as plt
import pymanopt
import quadnet as qn
from quadnet import GaussianSensing, PSDQuotient, align, bures_wasserstein
from quadnet.harness.checks.hermitian import asymptotic_overlap
from quadnet.plotting import NOTEBOOK_DPI
from quadnet.sensing import recover

plt.rcParams["figure.dpi"] = NOTEBOOK_DPI
rng = np.random.default_rng(0)


def cn(*shape):
    """i.i.d. CN(0, 1) entries: (g + i h) / sqrt(2)."""
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) / np.sqrt(2)


def overlap(u, x):
    """|<u, x>|^2 / (|u|^2 |x|^2), blind to the phase."""
    return float(abs(np.vdot(u, x)) ** 2 / (np.vdot(u, u).real * np.vdot(x, x).real))


def finish(ax, xlabel, ylabel=None):
    """Label the axes, add the legend and show the figure (each plot below ends so)."""
    ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)
    plt.tight_layout()
    plt.show()

# %% [markdown]
# ## 1. The global phase is the fibre $\mathrm{U}(1)$
#
# Multiplying the signal by $e^{i\theta}$ changes no intensity: $\lvert a^*(e^{i\theta}x)\rvert^2 =
# \lvert a^*x\rvert^2$. In quotient language, $x$ and $xe^{i\theta}$ lie in the same fibre of
# $\pi(x) = xx^*$, and the fibre is the circle $\mathrm{U}(1)$
# ([§8.2](../docs/theory/hermitian.md#82-fibres-and-alignment-complex-procrustes)). The real case has
# the two points $\{x, -x\}$ instead. `PSDQuotient(d, 1, field="complex")` is that quotient: its
# distance is zero along the fibre, and its dimension is $2d - 1$ (one real direction, the phase, is
# lost). The plot draws $\lVert xe^{i\theta} - v\rVert$ along the fibre of $x$: the distance of the
# quotient is its minimum, reached at the phase of $x^*v$.

# %%
d = 6
M = PSDQuotient(d, 1, field="complex")
x, v = cn(d, 1), cn(d, 1)
A = GaussianSensing.random(d, 1, 40, seed=1, field="complex").X          # rows a_i^*
theta = np.linspace(0, 2 * np.pi, 361)
same_y = max(np.abs(np.abs(A @ (x * np.exp(1j * t))) ** 2 - np.abs(A @ x) ** 2).max() for t in theta)
print(f"max change of the intensities along the fibre: {same_y:.1e}")
print(f"dist(x, x e^(i 0.7)) = {M.dist(x, x * np.exp(0.7j)):.1e};  dim = {M.dim} = 2d - 1")

z = (x.conj().T @ v).item()
along = [np.linalg.norm(x * np.exp(1j * t) - v) for t in theta]
fig, ax = plt.subplots(figsize=(6, 3.2))
ax.plot(theta, along, label=r"$\|x e^{i\theta} - v\|$ along the fibre of $x$")
ax.axvline(np.angle(z) % (2 * np.pi), color="k", ls=":", label=r"$\theta = \arg(x^*v)$")
ax.axhline(M.dist(x, v), color="C1", ls="--", label="PSDQuotient.dist(x, v)")
ax.plot([0, np.pi], [np.linalg.norm(x - v), np.linalg.norm(-x - v)], "s", color="C3",
        label=r"the real fibre: $\theta \in \{0, \pi\}$ only")
finish(ax, r"$\theta$")
print(f"min along the circle {min(along):.6f} = dist {M.dist(x, v):.6f}")

# %% [markdown]
# ## 2. Alignment is a complex Procrustes problem
#
# For factors $U, V \in \mathbb{C}^{d\times r}$ the closest point of the fibre of $U$ to $V$ is $UR$ with
# $R = Y_1Y_2^*$ from the SVD $U^*V = Y_1\Sigma Y_2^*$: expand
# $\lVert UR - V\rVert^2 = \lVert U\rVert^2 + \lVert V\rVert^2 - 2\operatorname{Re}\operatorname{tr}(R^*U^*V)$ and
# maximise the real part of a trace over unitaries. The squared distance is
# $\operatorname{tr}Q + \operatorname{tr}Q' - 2\lVert U^*V\rVert_*$, the Bures–Wasserstein distance of the
# Hermitian matrices $Q = UU^*$, $Q' = VV^*$. Because $\mathrm{U}(r)$ is connected, no "improper" half of
# the fibre can be missed, unlike $SO(r)$ against $O(r)$ in the real case (`quotient_geometry`, §4).

# %%
d, r = 5, 2
U, V = cn(d, r), cn(d, r)
R = align(U, V)
Y1, sig, Y2h = np.linalg.svd(U.conj().T @ V)
C = (U @ R).conj().T @ V
print("R = Y1 Y2^*:                 ", np.allclose(R, Y1 @ Y2h))
print("R unitary:                   ", np.allclose(R.conj().T @ R, np.eye(r)))
print("(U R)^* V Hermitian PSD:     ", np.allclose(C, C.conj().T), np.linalg.eigvalsh(C).min() > 0)
M2 = PSDQuotient(d, r, field="complex")
Q, Q2 = U @ U.conj().T, V @ V.conj().T
print(f"dist = {M2.dist(U, V):.12f}")
print(f"sqrt(tr Q + tr Q' - 2 ||U^* V||_*) = "
      f"{np.sqrt(np.trace(Q).real + np.trace(Q2).real - 2 * sig.sum()):.12f}")
print(f"bures_wasserstein(Q, Q')        = {bures_wasserstein(Q, Q2):.12f}")

# %% [markdown]
# ### Exercise 1: aligning each column's phase is not enough
#
# For $r = 2$ one might align $U$ to $V$ by one phase per column, $R = \operatorname{diag}(e^{i\phi_1},
# e^{i\phi_2})$, each $\phi_j$ the phase of $u_j^*v_j$. (a) Show that this is the optimal alignment over the
# diagonal unitaries. (b) Show numerically that it is in general worse than `align` (the full $\mathrm{U}(2)$),
# and that the gap vanishes when $U^*V$ is diagonal. (c) Why does `align` for $r = 1$ reduce to the phase
# of $u^*v$?

# %% [markdown]
# :::{dropdown} Solution
# (a) With $R$ diagonal, $\operatorname{Re}\operatorname{tr}(R^*U^*V) = \sum_j \operatorname{Re}(e^{-i\phi_j}u_j^*v_j)$,
# maximised term by term at $\phi_j = \arg(u_j^*v_j)$. (b) The diagonal unitaries are a subgroup of $\mathrm{U}(2)$, so
# their minimum is at least the full one; they coincide when the optimum $Y_1Y_2^*$ is diagonal, e.g. when $U^*V$
# is. (c) For $r = 1$, $\mathrm{U}(1)$ *is* the diagonal group, and the SVD of the $1\times1$ matrix $u^*v$ is
# $\lvert u^*v\rvert$ with the phase in $Y_1Y_2^*$.
# :::

# %% tags=["solution", "hide-cell"]
def columnwise(U, V):
    phases = np.array([np.vdot(U[:, j], V[:, j]) for j in range(U.shape[1])])
    return np.diag(phases / np.abs(phases))

gaps = []
for _ in range(200):
    U_, V_ = cn(5, 2), cn(5, 2)
    gaps.append(np.linalg.norm(U_ @ columnwise(U_, V_) - V_) - np.linalg.norm(U_ @ align(U_, V_) - V_))
assert min(gaps) > -1e-12 and np.mean(np.array(gaps) > 1e-6) > 0.9     # full U(2) is better
E = np.linalg.qr(cn(5, 2))[0]
Vd = E @ np.diag([2.0, 0.5]) @ np.diag(np.exp(1j * np.array([0.3, -1.1])))
Ud = E                                                                   # U^* V diagonal
assert abs(np.linalg.norm(Ud @ columnwise(Ud, Vd) - Vd) - np.linalg.norm(Ud @ align(Ud, Vd) - Vd)) < 1e-12
u_, v_ = cn(5, 1), cn(5, 1)
zz = np.vdot(u_, v_)
assert np.allclose(align(u_, v_), [[zz / abs(zz)]])
print(f"column phases lose on {np.mean(np.array(gaps) > 1e-6):.0%} of random pairs; "
      f"mean excess distance {np.mean(gaps):.3f}")

# %% [markdown]
# ## 3. The complex Isserlis identity, by Monte Carlo
#
# For $a \sim \mathcal{CN}(0, I_d)$ the fourth moments pair an $a$ with an $\bar a$ only:
# $\mathbb{E}[\bar a_p a_q a_s \bar a_t] = \delta_{pq}\delta_{st} + \delta_{ps}\delta_{qt}$. The third real pairing,
# $\mathbb{E}[\bar a_p\bar a_t]\,\mathbb{E}[a_qa_s]$, vanishes because a circular Gaussian has $\mathbb{E}[aa^\top] = 0$.
# Summing against $H_{pq}$ gives
# $$T(H) = \mathbb{E}[(a^*Ha)\,aa^*] = H + \operatorname{tr}(H)\,I,$$
# against $2H + \operatorname{tr}(H)I$ for a real Gaussian
# ([§8.8](../docs/theory/hermitian.md#88-the-complex-isserlis-identity)). `GaussianSensing.normal_operator`
# computes the empirical $T_m(H) = \frac1m\sum_i(a_i^*Ha_i)a_ia_i^*$ without forming any $a_ia_i^*$.

# %%
d = 5
H = cn(d, d)
H = H + H.conj().T
T_complex = qn.population_normal_operator(H, field="complex")
print("population_normal_operator(H, field='complex') = H + tr(H) I:",
      np.allclose(T_complex, H + np.trace(H) * np.eye(d)))
ms = np.array([250, 1000, 4000, 16000, 64000])
err_c, err_r = [], []
for m in ms:
    Tm = GaussianSensing.random(d, 1, int(m), seed=int(m), field="complex").normal_operator(H)
    err_c.append(np.linalg.norm(Tm - T_complex) / np.linalg.norm(T_complex))
    err_r.append(np.linalg.norm(Tm - (2 * H + np.trace(H) * np.eye(d))) / np.linalg.norm(T_complex))
slope = np.polyfit(np.log(ms), np.log(err_c), 1)[0]
fig, ax = plt.subplots(figsize=(6, 3.2))
ax.loglog(ms, err_c, "o-", label=f"vs $H + \\mathrm{{tr}}(H)I$ (slope {slope:.2f})")
ax.loglog(ms, err_r, "s--", label=r"vs the real formula $2H + \mathrm{tr}(H)I$")
ax.loglog(ms, err_c[0] * np.sqrt(ms[0] / ms), "k:", label=r"$1/\sqrt{m}$")
finish(ax, "m", r"$\|T_m(H) - \cdot\| / \|T(H)\|$")

# %% [markdown]
# ### Exercise 2: the pseudo-covariance is the whole difference
#
# (a) Estimate $\mathbb{E}[aa^*]$ and $\mathbb{E}[aa^\top]$ from the rows of a circular complex design.
# (b) Take instead a *real* Gaussian design, $a = g$ with $g \sim \mathcal{N}(0, I_d)$, which has the same
# covariance $\mathbb{E}[aa^*] = I$ but the pseudo-covariance $\mathbb{E}[aa^\top] = I$. Show that for a
# Hermitian $H$ its operator is $\mathbb{E}[(a^*Ha)\,aa^*] = H + H^\top + \operatorname{tr}(H)I$ (which is
# $2H + \operatorname{tr}(H)I$ when $H$ is real symmetric), and check both designs by Monte Carlo.

# %% [markdown]
# :::{dropdown} Solution
# (a) $\frac1m\sum_i a_ia_i^* \to I$ and $\frac1m\sum_i a_ia_i^\top \to 0$. (b) For the real design all three
# Isserlis pairings survive: $\mathbb{E}[a_pa_qa_sa_t] = \delta_{pq}\delta_{st} + \delta_{ps}\delta_{qt} +
# \delta_{pt}\delta_{qs}$, and $\sum_{pq}H_{pq}(\cdot)$ gives $\operatorname{tr}(H)\delta_{st} + H_{st} + H_{ts}$. The
# third term is the pairing $\mathbb{E}[a_pa_t]\,\mathbb{E}[a_qa_s]$ of the pseudo-covariance, zero for a circular design.
# :::

# %% tags=["solution", "hide-cell"]
m = 200_000
g, h = rng.standard_normal((m, d)), rng.standard_normal((m, d))
rows = (g + 1j * h) / np.sqrt(2)                                 # a_i^T, circular
assert np.abs(rows.T @ rows.conj() / m - np.eye(d)).max() < 0.02   # E[a a^*] = I
assert np.abs(rows.T @ rows / m).max() < 0.02                      # E[a a^T] = 0


def mc_operator(rows, H):
    q = np.einsum("ip,pq,iq->i", rows.conj(), H, rows).real       # a_i^* H a_i
    return (rows.T * q) @ rows.conj() / len(rows)                  # (1/m) sum q_i a_i a_i^*

scale = lambda M_: np.linalg.norm(M_) / np.linalg.norm(T_complex)   # noqa: E731
assert scale(mc_operator(rows, H) - T_complex) < 0.02                         # circular
real_rows = g + 0j                                                            # real design
assert np.abs(real_rows.T @ real_rows / m - np.eye(d)).max() < 0.02             # E[a a^T] = I
assert scale(mc_operator(real_rows, H) - (np.trace(H) * np.eye(d) + H + H.T)) < 0.05  # heavier 4th moments
print("circular design: H + tr(H) I;  real design: H + H^T + tr(H) I")

# %% [markdown]
# ## 4. The spectral start and its weak-recovery threshold
#
# The spectral start is the top eigenvector of $\frac1m\sum_i\psi(y_i)\,a_ia_i^*$. With $\psi(y) = y$ (the
# identity preprocessing, the start of Wirtinger flow) it needs many samples: large intensities dominate
# the matrix. Mondelli & Montanari (2019) prove that for complex Gaussian designs no estimator correlates
# with the signal below $m/d = 1$ and a spectral one does above; Luo, Alghamdi & Lu (2019) give the
# preprocessing that maximises the overlap at every $m/d$
# ([§8.10](../docs/theory/hermitian.md#810-the-spectral-start-and-its-weak-recovery-threshold)).
# `GaussianSensing.spectral_init(1, preprocessing="optimal")` uses it; the black curve is its
# limiting overlap as $d \to \infty$, computed by the `hermitian` check (`asymptotic_overlap`).

# %%
d = 200
ratios = [1.25, 1.5, 2.0, 3.0, 4.0, 6.0]
curves = {"optimal": [], "identity": []}
for ratio in ratios:
    probs = [GaussianSensing.random(d, 1, int(ratio * d), seed=[int(10 * ratio), t], field="complex")
             for t in range(2)]
    for k in curves:
        curves[k].append(np.mean([overlap(p.spectral_init(1, preprocessing=k), p.U_star)
                                  for p in probs]))
xs = np.linspace(1.0, 6.0, 100)
fig, ax = plt.subplots(figsize=(6, 3.4))
ax.plot(xs, [asymptotic_overlap(s) for s in xs], "k-", lw=1, label=r"optimal, $d \to \infty$")
ax.plot(ratios, curves["optimal"], "o", label=f"optimal preprocessing, d = {d}")
ax.plot(ratios, curves["identity"], "s--", label="identity preprocessing")
ax.axvline(1.0, color="0.5", ls=":")
finish(ax, "m / d", "overlap")

# %% [markdown]
# ### Exercise 3: the optimal preprocessing by hand
#
# Build the matrix $D = \frac1m\sum_i\psi^*(\hat y_i)\,a_ia_i^*$ with
# $\psi^*(\hat y) = (\hat y - 1)/(\hat y + \sqrt{m/d} - 1)$ and $\hat y_i = y_i/\operatorname{mean}(y)$ (the
# function documented in `quadnet.sensing.complex_gaussian.optimal_preprocessing`), take its top eigenvector
# and check that it is the direction of `spectral_init(1, preprocessing="optimal")` (up to a phase). Why are
# all the weights below 1, and why does $m > d$ keep the denominator positive?

# %% [markdown]
# :::{dropdown} Solution
# $\psi^*(\hat y) = 1 - \sqrt{m/d}/(\hat y + \sqrt{m/d} - 1) < 1$ for $\hat y \ge 0$, and the denominator is at least
# $\sqrt{m/d} - 1 > 0$ when $m > d$: unlike $\psi(y) = y$, no single large intensity can dominate $D$.
# `spectral_init` then fits the magnitude of the start to the data along that direction (the eigenvalues
# of $D$ carry no scale), so only the direction is compared.
# :::

# %% tags=["solution", "hide-cell"]
prob = GaussianSensing.random(100, 1, 300, seed=7, field="complex")
yhat = prob.y / prob.y.mean()
delta = prob.m / prob.d
w = (yhat - 1) / (yhat + np.sqrt(delta) - 1)
Arows = prob.X.conj()                                    # rows a_i^T (X has rows a_i^*)
D = (Arows.T * w) @ Arows.conj() / prob.m                # (1/m) sum w_i a_i a_i^*
top = np.linalg.eigh(D)[1][:, -1]
u0 = prob.spectral_init(1, preprocessing="optimal")[:, 0]
assert w.max() < 1 and np.sqrt(delta) - 1 > 0
assert overlap(top, u0) > 1 - 1e-8
print(f"overlap of the two directions: {overlap(top, u0):.12f}; "
      f"overlap with the signal: {overlap(u0, prob.U_star):.3f}")

# %% [markdown]
# ## 5. Recovery: `recover()` and pymanopt on the quotient
#
# From the spectral start, L-BFGS on the factor loss
# $L(u) = \frac1{2m}\sum_i(\lvert a_i^*u\rvert^2 - y_i)^2$ recovers the signal up to phase once $m/d$ is a small
# multiple of 1. The plot is a small version of the phase transition of `quadnet verify hermitian`
# ([§8.11](../docs/theory/hermitian.md#811-how-many-measurements-the-limits)): success rate against $m/d$,
# with the Bayes-optimal perfect-recovery threshold $m/d = 2$ (Maillard, Loureiro, Krzakala & Zdeborová,
# 2020) and the injectivity count $4d - 4$ (Conca, Edidin, Hering & Vinzant, 2015).

# %%
d, trials = 32, 5
ratios = [2.0, 2.5, 3.0, 4.0, 5.0]
rates = {"spectral (optimal)": [], "small random start": []}
for ratio in ratios:
    ok = {k: 0 for k in rates}
    for t in range(trials):
        p = GaussianSensing.random(d, 1, int(ratio * d), seed=[d, int(10 * ratio), t], field="complex")
        starts = {"spectral (optimal)": p.spectral_init(1, preprocessing="optimal"),
                  "small random start": "small"}
        for k, init in starts.items():
            res = recover(p, 1, method="lbfgs", init=init, seed=t)
            ok[k] += np.linalg.norm(res.Q - p.Q_star) <= 1e-6 * np.linalg.norm(p.Q_star)
    for k in rates:
        rates[k].append(ok[k] / trials)
fig, ax = plt.subplots(figsize=(6, 3.2))
for k, v in rates.items():
    ax.plot(ratios, v, "o-", label=k)
for xv, lab in ((2.0, "2d"), ((4 * d - 4) / d, "4d - 4")):
    ax.axvline(xv, color="0.5", ls=":")
    ax.text(xv, 0.05, lab, rotation=90, ha="right")
finish(ax, "m / d", "success rate")

# %% [markdown]
# pymanopt's solvers run on the same quotient: `qn.pymanopt_problem` turns the loss into a pymanopt
# problem on `PSDQuotient(d, 1, field="complex")` (cost, gradient and Hessian-vector products for the
# real inner product $\operatorname{Re}\operatorname{tr}(\xi^*\eta)$), and the manifold supplies the horizontal
# projection. The solution is compared with the signal through the quotient distance, which ignores the
# phase: the printed phase of $u^{\star *}u$ is arbitrary, the distance is at rounding level for trust
# regions (exact Hessian-vector products) and small for conjugate gradients (which stops on its step size).

# %%
p = GaussianSensing.random(32, 1, 160, seed=11, field="complex")
Mq = PSDQuotient(32, 1, field="complex")
problem = qn.pymanopt_problem(p, Mq)
start = p.spectral_init(1, preprocessing="optimal")
for solver in (pymanopt.optimizers.TrustRegions(verbosity=0, min_gradient_norm=1e-12),
               pymanopt.optimizers.ConjugateGradient(verbosity=0, min_gradient_norm=1e-12)):
    out = solver.run(problem, initial_point=start)
    rel = Mq.dist(out.point, p.U_star) / np.linalg.norm(p.U_star)
    print(f"{type(solver).__name__:18s} {out.iterations:4d} iterations, dist(u, u*) / |u*| = "
          f"{rel:.1e}, phase of u*^* u = {np.angle(np.vdot(p.U_star, out.point)):+.3f}")
    assert rel < 1e-6

# %% [markdown]
# ### Exercise 4: phase retrieval lives on a curved space
#
# In the real case the quotient $\mathbb{R}^d_*/\{\pm1\}$ is flat: for $r = 1$ O'Neill's correction vanishes
# because a $1\times1$ skew matrix is zero. In the complex case $\Omega$ is $1\times1$ *skew-Hermitian*,
# $i\operatorname{Im}(\xi^*\eta)/\lVert u\rVert^2$, so (a) show that
# $K(\xi, \eta) = 3\operatorname{Im}(\xi^*\eta)^2 / (\lVert u\rVert^2(\lVert\xi\rVert^2\lVert\eta\rVert^2 - \operatorname{Re}(\xi^*\eta)^2))$,
# (b) check it against `PSDQuotient.sectional_curvature` on random horizontal planes, and (c) find a plane where
# the maximum $3/\lVert u\rVert^2$ is reached and one where $K = 0$
# ([§8.6](../docs/theory/hermitian.md#86-curvature-oneills-formula-with-the-real-inner-product)).

# %% [markdown]
# :::{dropdown} Solution
# (a) With $G = \lVert u\rVert^2$ the Lyapunov equation $2G\Omega = \xi^*\eta - \eta^*\xi = 2i\operatorname{Im}(\xi^*\eta)$ gives
# $\Omega = i\operatorname{Im}(\xi^*\eta)/\lVert u\rVert^2$ and $\lVert u\Omega\rVert^2 = \operatorname{Im}(\xi^*\eta)^2/\lVert u\rVert^2$; insert into
# $K = 3\lVert u\Omega\rVert^2/(\lVert\xi\rVert^2\lVert\eta\rVert^2 - \langle\xi,\eta\rangle^2)$. (c) By Cauchy–Schwarz
# $\operatorname{Im}(\xi^*\eta)^2 + \operatorname{Re}(\xi^*\eta)^2 \le \lVert\xi\rVert^2\lVert\eta\rVert^2$, with equality for
# $\eta = i\xi$; that plane is horizontal when $u^*\xi = 0$, and then $K = 3/\lVert u\rVert^2$. Real vectors at a real $u$
# have $\operatorname{Im}(\xi^*\eta) = 0$: a flat plane.
# :::

# %% tags=["solution", "hide-cell"]
d = 6
Mk = PSDQuotient(d, 1, field="complex")
u = cn(d, 1)
n2 = np.vdot(u, u).real
for _ in range(20):
    xi, eta = (Mk.horizontal_projection(u, cn(d, 1)) for _ in range(2))
    ip = np.vdot(xi, eta)
    K = 3 * ip.imag ** 2 / (n2 * (np.vdot(xi, xi).real * np.vdot(eta, eta).real - ip.real ** 2))
    assert np.isclose(Mk.sectional_curvature(u, xi, eta), K, rtol=1e-10)
zeta = cn(d, 1)
zeta = zeta - u * np.vdot(u, zeta) / n2                                  # u^* zeta = 0
assert np.isclose(Mk.sectional_curvature(u, zeta, 1j * zeta), 3 / n2, rtol=1e-12)
ur = rng.standard_normal((d, 1)) + 0j
a_, b_ = (Mk.horizontal_projection(ur, rng.standard_normal((d, 1)) + 0j) for _ in range(2))
assert abs(Mk.sectional_curvature(ur, a_, b_)) < 1e-14
print(f"max curvature 3/|u|^2 = {3 / n2:.4f} reached; real planes flat")

# %% [markdown]
# ## What to take away
#
# - Phase retrieval's ambiguity is the fibre $\mathrm{U}(1)$; the whole real toolkit carries over with
#   $\mathrm{U}(r)$, the real inner product $\operatorname{Re}\operatorname{tr}(\xi^*\eta)$, skew-Hermitian vertical
#   directions and $n_h = 2dr - r^2$.
# - The complex Isserlis identity loses the real factor 2 because $\mathbb{E}[aa^\top] = 0$.
# - The optimal preprocessing makes the spectral start informative right above $m/d = 1$; the identity
#   preprocessing needs several times more samples.
# - `quadnet verify hermitian` measures all of this at scale (spectral curves at $d = 500$, phase retrieval
#   at $d = 128$ against $2d$ and $4d - 4$).
