# %% [markdown]
# # Quotient geometry of positive quadratic networks
#
# **Assumes.** Linear algebra: orthogonal matrices and $\det R = \pm 1$, rank and kernels, the
# Frobenius inner product $\langle A, B\rangle = \operatorname{tr}(A^\top B)$, the singular value
# decomposition and the polar decomposition (the orthogonal Procrustes problem is solved from an
# SVD). No differential geometry is needed beyond velocities of curves.
#
# **Learning outcomes.** After this unit you can
#
# - explain why $f_U$ depends on $U$ only through the predictor $Q = UU^\top$, and describe the fibre
#   $\pi^{-1}(Q) = \{UR : R \in O(r)\}$ with its two components $\det R = \pm 1$;
# - read the PSD cone of $2\times 2$ matrices: its boundary is $\mathcal{M}_1^+$, its interior
#   $\mathcal{M}_2^+$;
# - derive the vertical space $\mathcal{V}_U = \{U\Omega : \Omega \in \mathrm{Skew}(r)\}$, its dimension
#   $r(r-1)/2$ and the horizontal space $\mathcal{H}_U$, and compute both with `PSDQuotient`;
# - check numerically that the horizontal projection $P_h$ (a Lyapunov solve) is an orthogonal
#   projection;
# - compute the quotient distance by Procrustes alignment and show that it is the Bures–Wasserstein
#   distance and does not depend on the representatives;
# - explain, derive and measure why the alignment must range over all of $O(r)$: over $SO(r)$ it fails
#   for half of all Gaussian pairs.
#
# **Theory.** [§0.2 The spaces](../docs/theory/notation.md#02-the-spaces),
# [§0.6 Groups and symbols used later](../docs/theory/notation.md#06-groups-and-symbols-used-later),
# [§1.1 The projection and its fibres](../docs/theory/quotient.md#11-the-projection-and-its-fibres),
# [§1.2 Alignment: the closest point of a fibre](../docs/theory/quotient.md#12-alignment-the-closest-point-of-a-fibre),
# [§1.3 Vertical and horizontal spaces](../docs/theory/quotient.md#13-vertical-and-horizontal-spaces),
# [§1.4 The horizontal projection is a Lyapunov solve](../docs/theory/quotient.md#14-the-horizontal-projection-is-a-lyapunov-solve),
# [§1.6 The quotient metric and Bures–Wasserstein](../docs/theory/quotient.md#16-the-quotient-metric-and-bureswasserstein),
# [§1.8 Distance](../docs/theory/quotient.md#18-distance),
# [§7.4 geomstats `RankKPSDMatrices`: alignment over $SO(k)$](../docs/theory/pitfalls.md#74-geomstats-rankkpsdmatrices-alignment-over--and-the-dimension).
# The construction is the one of Journée, Bach, Absil & Sepulchre (2010), in the language of
# quotient manifolds of Absil, Mahony & Sepulchre (2008, ch. 3) and Boumal (2023), *An Introduction
# to Optimization on Smooth Manifolds*, ch. 9.
#
# A positive quadratic network is $f_U(x) = x^\top U U^\top x = \|U^\top x\|^2$ with a factor
# $U \in \mathbb{R}^{d\times r}$. Only the **predictor** $Q = \pi(U) = UU^\top$ matters, and
# $UU^\top = U'U'^\top$ exactly when $U' = UR$ for an orthogonal $R \in O(r)$ (for full-rank factors,
# [§1.1](../docs/theory/quotient.md#11-the-projection-and-its-fibres)). So the parameter space is the
# full-rank stratum $\mathcal{F}_{d,r}$ modulo $O(r)$: the manifold $\mathcal{M}_r^+$ of rank-$r$ PSD
# matrices, of dimension $n_h = dr - r(r-1)/2$.
#
# This notebook draws that geometry for $d = 2$, where everything fits in three dimensions:
#
# 1. the PSD cone of $2\times 2$ matrices and its rank-one boundary;
# 2. the **fibre** $\{UR : R \in O(2)\}$ of a predictor: two circles;
# 3. **vertical** directions (along the fibre: the predictor does not move) versus
#    **horizontal** ones (orthogonal to the fibre: the predictor moves, and the metric is measured);
# 4. the quotient distance $\min_R \|UR - U'\|_F$ and why alignment must range over all of $O(r)$.
#
# Exercises 1–4 (solutions hidden below each one) derive and check the same facts in general $d, r$.

# %%
import numpy as np
import matplotlib.pyplot as plt
import scipy.linalg
import quadnet
from quadnet import PSDQuotient, align
from quadnet.geometry import random_orthogonal
from quadnet.plotting import NOTEBOOK_DPI, draw_psd_cone, psd_cone_coords

rng = np.random.default_rng(0)
plt.rcParams["figure.dpi"] = NOTEBOOK_DPI

# %% [markdown]
# ## 1. The PSD cone of $2\times 2$ matrices
#
# `quadnet.plotting.psd_cone_coords` draws a symmetric $\begin{pmatrix} a & b\\ b & c\end{pmatrix}$ at
# $(x, y, z) = ((a - c)/2,\ b,\ (a + c)/2)$. Then $\det Q = z^2 - x^2 - y^2$ and
# $\operatorname{tr} Q = 2z$, so PSD matrices form the solid round cone $z \ge \sqrt{x^2+y^2}$ (drawn by
# `draw_psd_cone`). Its boundary (minus the apex) is $\mathcal{M}_1^+$, the rank-one matrices $uu^\top$;
# its interior is $\mathcal{M}_2^+$ ([§0.2](../docs/theory/notation.md#02-the-spaces)). A rank-one factor
# $u = \rho(\cos\theta, \sin\theta)$ lands on the boundary at height $z = \rho^2/2$ and angle
# $2\theta$: the map $u \mapsto uu^\top$ wraps the plane twice around the cone, which is the
# fibre $\{u, -u\}$ of $O(1) = \{\pm 1\}$.

# %%
fig = plt.figure(figsize=(11, 4.6))
ax = fig.add_subplot(1, 2, 1, projection="3d")
draw_psd_cone(ax, 1.0, color="tab:blue", alpha=0.25)
# rank-one factors on a circle of radius sqrt(2) map to the circle z = 1 on the boundary
theta = np.linspace(0, np.pi, 9)[:-1]
for th, c in zip(theta, plt.cm.viridis(np.linspace(0, 1, len(theta)))):
    u = np.sqrt(2) * np.array([np.cos(th), np.sin(th)])
    ax.scatter(*psd_cone_coords(np.outer(u, u)), color=c, s=40)
# a few rank-two predictors U U^T (interior points)
for _ in range(25):
    U = 0.6 * rng.standard_normal((2, 2))
    ax.scatter(*psd_cone_coords(U @ U.T), color="0.3", s=8)
ax.set_title("PSD cone: boundary = rank one, interior = rank two")

ax2 = fig.add_subplot(1, 2, 2)
for th, c in zip(theta, plt.cm.viridis(np.linspace(0, 1, len(theta)))):
    u = np.sqrt(2) * np.array([np.cos(th), np.sin(th)])
    ax2.scatter(*u, color=c, s=40); ax2.scatter(*(-u), color=c, s=40, marker="s")
    ax2.plot([u[0], -u[0]], [u[1], -u[1]], color=c, lw=0.6)
ax2.set_aspect("equal"); ax2.set_xlabel("$u_1$"); ax2.set_ylabel("$u_2$")
ax2.set_title("factors $u$ and $-u$ (same colour) give the same $uu^T$")
plt.tight_layout(); plt.show()
x, y, z = psd_cone_coords(np.outer([1.0, 1.0], [1.0, 1.0]))
print(f"u = (1, 1): (x, y, z) = ({x:.1f}, {y:.1f}, {z:.1f}), on the boundary z = sqrt(x^2 + y^2)")

# %% [markdown]
# ## 2. Fibres are circles
#
# Take a full-rank $U \in \mathbb{R}^{2\times 2}$. Rotations $R(\phi) = \cos\phi\, I + \sin\phi\, J$
# with $J = \begin{pmatrix}0 & -1\\ 1 & 0\end{pmatrix}$ give
# $$U R(\phi) = \cos\phi\; U + \sin\phi\; UJ, \qquad \langle U, UJ\rangle = \operatorname{tr}(U^\top U J) = 0,
# \quad \|UJ\|_F = \|U\|_F,$$
# so the rotations move $U$ on an exact circle of radius $\|U\|_F$ in the plane spanned by $U$ and
# $UJ$ ($\operatorname{tr}(GJ) = 0$ because $G = U^\top U$ is symmetric and $J$ skew). The reflections
# $UR$ with $\det R = -1$ form a second, disjoint circle
# ([§1.1](../docs/theory/quotient.md#11-the-projection-and-its-fibres): the fibre has two connected
# components). Every point of both circles has the same predictor $UU^\top$. Let us check that
# numerically and draw the circles for three predictors of growing size.

# %%
M = PSDQuotient(2, 2)
J = np.array([[0.0, -1.0], [1.0, 0.0]])
Fl = np.diag([1.0, -1.0])            # a reflection
phi = np.linspace(0, 2 * np.pi, 200)

U = rng.standard_normal((2, 2))
Q = M.predictor(U)
spread = max(np.linalg.norm(M.predictor(U @ (np.cos(p) * np.eye(2) + np.sin(p) * J)) - Q) for p in phi)
print(f"max over the fibre of ||pi(U R) - pi(U)||_F = {spread:.2e}   (zero up to rounding)")
print(f"<U, UJ> = {np.sum(U * (U @ J)):.2e},  ||UJ|| - ||U|| = {np.linalg.norm(U @ J) - np.linalg.norm(U):.2e}")

fig, ax = plt.subplots(figsize=(5.5, 5.5))
e1 = U / np.linalg.norm(U); e2 = U @ J / np.linalg.norm(U)   # orthonormal frame of the circle
for scale, c in zip((0.5, 1.0, 1.5), ("tab:blue", "tab:orange", "tab:green")):
    pts = [scale * U @ (np.cos(p) * np.eye(2) + np.sin(p) * J) for p in phi]
    ax.plot([np.sum(P * e1) for P in pts], [np.sum(P * e2) for P in pts], color=c,
            label=f"fibre of {scale}^2 UU^T (radius {scale * np.linalg.norm(U):.2f})")
n = np.linalg.norm(U)
ax.scatter([n], [0.0], color="k", zorder=3, label="U")
ax.annotate("", xy=(n, 0.6), xytext=(n, 0), arrowprops=dict(arrowstyle="->", color="crimson", lw=2))
ax.annotate("", xy=(n + 0.6, 0), xytext=(n, 0), arrowprops=dict(arrowstyle="->", color="navy", lw=2))
ax.text(n + 0.05, 0.65, "vertical UJ\n(predictor fixed)", color="crimson", fontsize=8)
ax.text(n + 0.1, -0.55, "horizontal U\n(scales Q)", color="navy", fontsize=8)
ax.set_aspect("equal"); ax.legend(loc="lower left", fontsize=8)
ax.set_xlabel(r"$\langle UR, U\rangle / \|U\|_F$"); ax.set_ylabel(r"$\langle UR, UJ\rangle / \|U\|_F$")
ax.set_title("SO(2) part of the fibres {UR}: concentric circles")
plt.show()
W = U @ Fl
gap = min(np.linalg.norm(W @ (np.cos(p) * np.eye(2) + np.sin(p) * J) - U) for p in phi)
print(f"the det = -1 component U Fl R(phi) is a second circle with the same predictor "
      f"(||pi(U Fl) - pi(U)|| = {np.linalg.norm(M.predictor(W) - Q):.1e}), "
      f"at Frobenius distance {gap:.2f} from U")

# %% [markdown]
# ## 3. Vertical versus horizontal
#
# The differential of $\pi$ sends a factor velocity $\xi$ to the predictor velocity
# $\zeta = D\pi(U)[\xi] = \xi U^\top + U\xi^\top$ (`PSDQuotient.differential`). At $U$ the
# **vertical space** $\mathcal{V}_U = \{U\Omega : \Omega \in \mathrm{Skew}(r)\}$ is the tangent space of
# the fibre (here the line spanned by $UJ$): moving along it does not change the predictor, because
# $D\pi(U)[U\Omega] = U\Omega U^\top + U\Omega^\top U^\top = 0$. The **horizontal space**
# $\mathcal{H}_U = \{\xi : U^\top\xi \text{ symmetric}\}$ is its Frobenius-orthogonal complement, of
# dimension $n_h = dr - r(r-1)/2 = 3 = \dim \mathcal{M}_2^+$
# ([§1.3](../docs/theory/quotient.md#13-vertical-and-horizontal-spaces)). Horizontal vectors are the
# lifts of tangent vectors of $\mathcal{M}_r^+$; the metric of the quotient is the Frobenius inner
# product of horizontal lifts ([§1.6](../docs/theory/quotient.md#16-the-quotient-metric-and-bureswasserstein)).
#
# `PSDQuotient` splits any direction $Z$ into the two parts $Z = P_h(Z) + P_v(Z)$; $P_h$ is computed by
# a Lyapunov solve ([§1.4](../docs/theory/quotient.md#14-the-horizontal-projection-is-a-lyapunov-solve)).
# We check the defining properties.

# %%
Z = rng.standard_normal((2, 2))
Zv = M.vertical_projection(U, Z)
Zh = M.horizontal_projection(U, Z)
print("Z = P_v(Z) + P_h(Z):           ", np.allclose(Zv + Zh, Z))
print("<P_v(Z), P_h(Z)>              = %.1e" % np.sum(Zv * Zh))
print("U^T P_h(Z) symmetric:           asymmetry %.1e" % np.linalg.norm(U.T @ Zh - Zh.T @ U))
print("D pi(U)[P_v(Z)]               = %.1e" % np.linalg.norm(M.differential(U, Zv)))
print("dim H_U                       =", M.horizontal_basis(U).shape[1], "= dim M_2^+ =", M.dim)

# %% [markdown]
# Moving a little along a vertical direction leaves the predictor where it is up to second order
# (the straight line $U + tU\Omega$ leaves the circle, and moves $Q$ by exactly $t^2 U\Omega\Omega^\top
# U^\top$), while the same step along a horizontal direction moves it at first order. The plot shows
# $\|\pi(U + t\xi) - \pi(U)\|_F$ against $t$ for a unit vertical and a unit horizontal direction $\xi$;
# the printed log-log slopes are 1 and 2.

# %%
xv = M.vertical_projection(U, Z); xv /= np.linalg.norm(xv)
xh = M.horizontal_projection(U, Z); xh /= np.linalg.norm(xh)
ts = np.logspace(-4, 0, 30)
dv = [np.linalg.norm((U + t * xv) @ (U + t * xv).T - Q) for t in ts]
dh = [np.linalg.norm((U + t * xh) @ (U + t * xh).T - Q) for t in ts]
fig, ax = plt.subplots(figsize=(5.5, 4))
ax.loglog(ts, dh, label="horizontal step: moves Q at first order")
ax.loglog(ts, dv, label="vertical step: only second order (t^2 ||xi xi^T||_F)")
ax.loglog(ts, ts ** 2, "k:", lw=0.8, label="t^2")
ax.set_xlabel("step length t"); ax.set_ylabel(r"$\|\pi(U + t\xi) - \pi(U)\|_F$")
ax.legend(fontsize=8); plt.show()
print("slopes (log-log, small t): horizontal %.2f, vertical %.2f"
      % (np.polyfit(np.log(ts[:10]), np.log(dh[:10]), 1)[0], np.polyfit(np.log(ts[:10]), np.log(dv[:10]), 1)[0]))

# %% [markdown]
# ### Exercise 1: the vertical space is exactly the kernel of $D\pi(U)$
#
# (a) Show that $U\Omega$ is the velocity at $t = 0$ of the curve $t \mapsto Ue^{t\Omega}$ in the fibre,
# and that $D\pi(U)[U\Omega] = 0$ for every skew $\Omega$. (b) Show conversely that every $\xi$ with
# $D\pi(U)[\xi] = 0$ is of the form $U\Omega$ with $\Omega$ skew, so that
# $\dim\mathcal{V}_U = \dim\mathrm{Skew}(r) = r(r-1)/2$. (c) Check it numerically for several $(d, r)$:
# write $D\pi(U)$ as a $d^2\times dr$ matrix (row-major, [§0.3](../docs/theory/notation.md#03-vectorisation-is-row-major)),
# count its numerically zero singular values, and compare with $r(r-1)/2$, with
# `PSDQuotient.vertical_basis` and with $dr - n_h$.

# %% [markdown]
# :::{dropdown} Solution
# (a) $\frac{d}{dt}Ue^{t\Omega}\big|_{t=0} = U\Omega$, and $Ue^{t\Omega}$ stays in the fibre because
# $e^{t\Omega}$ is orthogonal for skew $\Omega$ ($(e^{t\Omega})^\top e^{t\Omega} = e^{-t\Omega}e^{t\Omega} = I$).
# Directly: $D\pi(U)[U\Omega] = U\Omega U^\top + U\Omega^\top U^\top = U(\Omega + \Omega^\top)U^\top = 0$.
#
# (b) Let $\xi U^\top + U\xi^\top = 0$ and $G = U^\top U$ (invertible at full rank). Multiply on the right
# by $UG^{-1}$: $\xi + U\xi^\top UG^{-1} = 0$, i.e. $\xi = U\Omega$ with $\Omega = -\xi^\top UG^{-1}$. Substituting,
# $U(\Omega + \Omega^\top)U^\top = 0$; multiplying by $G^{-1}U^\top$ on the left and $UG^{-1}$ on the right gives
# $\Omega + \Omega^\top = 0$. The map $\Omega \mapsto U\Omega$ is injective ($U$ has a left inverse), so
# $\dim\mathcal{V}_U = \dim\mathrm{Skew}(r) = r(r-1)/2$, and by rank–nullity the image of $D\pi(U)$ has
# dimension $dr - r(r-1)/2 = n_h$ ([§1.3](../docs/theory/quotient.md#13-vertical-and-horizontal-spaces)).
# :::

# %% tags=["solution", "hide-cell"]
def dpi_matrix(M, U):
    """The d^2 x dr matrix of D pi(U): column i r + j is D pi(U)[E_ij] (row-major vec, §0.3)."""
    d, r = U.shape
    cols = []
    for k in range(d * r):
        E = np.zeros(d * r); E[k] = 1.0
        cols.append(M.differential(U, E.reshape(d, r)).reshape(-1))
    return np.array(cols).T

rng1 = np.random.default_rng(1)
print(" d  r | zero sing. values  r(r-1)/2  vertical_basis  dr - n_h | smallest kept / largest dropped")
for d, r in [(2, 2), (4, 1), (4, 2), (5, 3), (6, 6)]:
    M_ = PSDQuotient(d, r)
    U_ = rng1.standard_normal((d, r))
    s = np.linalg.svd(dpi_matrix(M_, U_), compute_uv=False)
    smin_U = np.linalg.svd(U_, compute_uv=False)[-1]
    # D pi(U) on H_U has smallest singular value >= sqrt(2) sigma_min(U) (||xi U^T + U xi^T||^2 =
    # 2||xi U^T||^2 + 2||U^T xi||^2 for horizontal xi), while the kernel's singular values are
    # rounding, ~ eps ||U||: a threshold of 1e-8 ||U|| separates the two by many orders
    n_zero = int(np.sum(s < 1e-8 * np.linalg.norm(U_)))
    assert s[s >= 1e-8 * np.linalg.norm(U_)].min() >= np.sqrt(2) * smin_U * (1 - 1e-12)
    assert n_zero == r * (r - 1) // 2 == M_.vertical_basis(U_).shape[1] == d * r - M_.dim
    dropped = s[-1] if n_zero else float("nan")
    print(f"{d:2d} {r:2d} | {n_zero:17d} {r * (r - 1) // 2:9d} {M_.vertical_basis(U_).shape[1]:15d}"
          f" {d * r - M_.dim:9d} | {s[len(s) - n_zero - 1]:.2f} / {dropped:.1e}")
    # (a): U Omega is the velocity of U expm(t Omega), and D pi(U) kills it
    A = rng1.standard_normal((r, r)); Om = A - A.T
    t = 1e-7
    fd = (U_ @ scipy.linalg.expm(t * Om) - U_) / t
    # forward difference: truncation t ||U Omega^2|| / 2 ~ 1e-7 * O(10), rounding eps ||U|| / t ~ 1e-9
    assert np.linalg.norm(fd - U_ @ Om) <= t * np.linalg.norm(U_ @ Om @ Om) + 1e-8 * np.linalg.norm(U_)
    # D pi(U)[U Omega] is sym(U Omega U^T) in floating point: rounding ~ eps ||U||^2 ||Omega|| (x dr)
    assert np.linalg.norm(M_.differential(U_, U_ @ Om)) <= 1e-13 * np.linalg.norm(U_) ** 2 * np.linalg.norm(Om)

# %% [markdown]
# ### Exercise 2: the horizontal projection is orthogonal and idempotent
#
# At a random $U \in \mathbb{R}^{5\times 3}$ build the $dr\times dr$ matrix $\mathsf{P}$ of
# $Z \mapsto P_h(Z)$ (row-major). Check that it is an **orthogonal** projection: $\mathsf{P}^2 = \mathsf{P}$
# (idempotent) and $\mathsf{P}^\top = \mathsf{P}$ (self-adjoint for the Frobenius inner product), of
# trace $n_h$, with range in $\mathcal{H}_U$ and $P_h(U\Omega) = 0$; that it equals $BB^\top$ for the
# orthonormal basis $B$ = `horizontal_basis(U)`; and that it is equivariant,
# $P_h^{UR}(ZR) = P_h^U(Z)R$, also for $\det R = -1$
# ([§1.4](../docs/theory/quotient.md#14-the-horizontal-projection-is-a-lyapunov-solve)). What tolerance
# is reasonable, given how the Lyapunov solve amplifies rounding?

# %% [markdown]
# :::{dropdown} Solution
# $P_h(Z) = Z - U\Omega$ with $G\Omega + \Omega G = U^\top Z - Z^\top U$. The solution $\Omega$ is the unique
# skew matrix making $U^\top(Z - U\Omega)$ symmetric, so $P_h(Z) \in \mathcal{H}_U$; if $Z$ is already
# horizontal the right-hand side vanishes, $\Omega = 0$ and $P_h(Z) = Z$: hence $P_h^2 = P_h$. The
# removed part $U\Omega$ is vertical, and $\mathcal{V}_U \perp \mathcal{H}_U$ (§1.3), so
# $\langle P_h Z, W\rangle = \langle P_h Z, P_h W\rangle = \langle Z, P_h W\rangle$: $P_h$ is self-adjoint,
# i.e. an orthogonal projection, and its trace is the dimension of its range, $n_h$. Any orthonormal
# basis $B$ of the range gives the same projection $BB^\top$. Equivariance: at $UR$ the Gram matrix is
# $R^\top GR$ and the right-hand side is $R^\top(U^\top Z - Z^\top U)R$, so $\Omega$ becomes $R^\top\Omega R$
# and $P_h^{UR}(ZR) = ZR - UR R^\top\Omega R = P_h^U(Z)R$; nothing uses $\det R$.
#
# The Lyapunov divisors are $\lambda_i(G) + \lambda_j(G) \ge 2\sigma_{\min}(U)^2$ while the data scale with
# $\sigma_{\max}(U)^2$, so rounding is amplified by at most $\kappa(U)^2$, $\kappa(U) = \sigma_{\max}(U)/\sigma_{\min}(U)$
# (§1.4): a tolerance of $10^3\,\epsilon_{\mathrm{mach}}\,\kappa(U)^2$ ($\epsilon_{\mathrm{mach}} = 2.2\times10^{-16}$) leaves room
# for the $O(dr)$ terms of each sum.
# :::

# %% tags=["solution", "hide-cell"]
rng2 = np.random.default_rng(2)
d, r = 5, 3
M5 = PSDQuotient(d, r)
U5 = rng2.standard_normal((d, r))
sv = np.linalg.svd(U5, compute_uv=False)
kappa = sv[0] / sv[-1]
tol = 1e3 * np.finfo(float).eps * kappa ** 2        # rounding amplified by kappa^2 (§1.4), x O(dr)

Pmat = np.array([M5.horizontal_projection(U5, E.reshape(d, r)).reshape(-1)
                 for E in np.eye(d * r)]).T         # column k = vec(P_h(E_k))
B = M5.horizontal_basis(U5)
checks = {
    "idempotent ||P^2 - P||": np.linalg.norm(Pmat @ Pmat - Pmat),
    "self-adjoint ||P^T - P||": np.linalg.norm(Pmat.T - Pmat),
    "|trace P - n_h|": abs(np.trace(Pmat) - M5.dim),
    "||P - B B^T||": np.linalg.norm(Pmat - B @ B.T),
}
Zs = rng2.standard_normal((20, d, r))
A = rng2.standard_normal((20, r, r)); Oms = A - A.transpose(0, 2, 1)
checks["max asymmetry of U^T P_h(Z)"] = max(np.linalg.norm(U5.T @ M5.horizontal_projection(U5, Z_)
                                                           - (U5.T @ M5.horizontal_projection(U5, Z_)).T)
                                            / np.linalg.norm(Z_) for Z_ in Zs)
checks["max ||P_h(U Omega)|| / ||U Omega||"] = max(np.linalg.norm(M5.horizontal_projection(U5, U5 @ O_))
                                                   / np.linalg.norm(U5 @ O_) for O_ in Oms)
eq = []
for improper in (False, True):
    R = random_orthogonal(r, rng2, improper=improper)
    eq += [np.linalg.norm(M5.horizontal_projection(U5 @ R, Z_ @ R) - M5.horizontal_projection(U5, Z_) @ R)
           / np.linalg.norm(Z_) for Z_ in Zs]
checks["max equivariance error (det R = +1 and -1)"] = max(eq)
print(f"kappa(U) = {kappa:.2f}, tolerance 1e3 eps kappa^2 = {tol:.1e}")
for name, val in checks.items():
    print(f"  {name:45s} {val:.1e}")
    assert val <= tol, name

# %% [markdown]
# ## 4. Quotient distance and alignment over all of $O(r)$
#
# The distance between predictors is $\operatorname{dist}(Q_1, Q_2) = \min_{R\in O(r)} \|U_1R - U_2\|_F$,
# reached at the Procrustes rotation $R = \operatorname{align}(U_1, U_2) = Y_1Y_2^\top$
# ($U_1^\top U_2 = Y_1\Sigma Y_2^\top$ an SVD, [§1.2](../docs/theory/quotient.md#12-alignment-the-closest-point-of-a-fibre));
# it is the Bures–Wasserstein distance of Bhatia, Jain & Lim (2019)
# ([§1.8](../docs/theory/quotient.md#18-distance)). The minimum must run over **all** of $O(r)$,
# reflections included. Since $\det(Y_1Y_2^\top) = \operatorname{sign}\det(U_1^\top U_2)$, the best $R$ is a
# reflection whenever $\det(U_1^\top U_2) < 0$, and then restricting to $SO(r)$ (as geomstats's
# `RankKPSDMatrices` does, [§7.4](../docs/theory/pitfalls.md#74-geomstats-rankkpsdmatrices-alignment-over--and-the-dimension))
# overestimates the distance. For Gaussian pairs that is half of them (Exercise 4 derives the value and
# measures it on enough pairs to resolve it); the loop below counts it on a handful. The
# distance does not depend on which representatives of the two fibres we pick (the loop asserts it).

# %%
angles = np.linspace(0, 2 * np.pi, 20001)
rotations = np.cos(angles)[:, None, None] * np.eye(2) + np.sin(angles)[:, None, None] * J

def dist_SO(U1, U2):
    # best rotation with det = +1 only (the geomstats convention), by brute force over angles
    return np.linalg.norm(U1 @ rotations - U2, axis=(1, 2)).min()

n_pairs, wrong = 20, 0
for k in range(n_pairs):
    U1, U2 = rng.standard_normal((2, 2, 2))
    d_O = M.dist(U1, U2)
    R = align(U1, U2)
    d_BW = quadnet.bures_wasserstein(U1 @ U1.T, U2 @ U2.T)
    assert abs(d_O - d_BW) < 1e-8 and abs(d_O - np.linalg.norm(U1 @ R - U2)) < 1e-12
    # invariance: other representatives of the same two fibres give the same distance
    R1, R2 = random_orthogonal(2, rng), random_orthogonal(2, rng)
    assert abs(M.dist(U1 @ R1, U2 @ R2) - d_O) < 1e-10
    wrong += dist_SO(U1, U2) > d_O + 1e-6
print(f"O(2) distance = Bures-Wasserstein distance on {n_pairs} random pairs; the SO(2)-only distance "
      f"is too large for {wrong} of them (p = 1/2 would give {n_pairs / 2:.0f} +- {np.sqrt(n_pairs) / 2:.1f}, "
      f"Exercise 4)")

# %% [markdown]
# ### Exercise 3: the distance is a function of the predictors
#
# For $d = 4$, $r = 3$ and many random pairs, check that $\operatorname{dist}(U_1R_1, U_2R_2) =
# \operatorname{dist}(U_1, U_2)$ for Haar-random $R_1, R_2 \in O(3)$ of both determinants, that
# $\operatorname{dist}(U, UR) = 0$, that the distance is symmetric and satisfies the triangle inequality,
# and that it equals the Bures–Wasserstein trace formula (`quadnet.bures_wasserstein`, computed from
# matrix square roots of the predictors, no factor). Then show that the $SO(2)$-only distance is *not*
# a function of the predictors: $\operatorname{dist}_{SO}(U, UF) > 0$ for a reflection $F$.

# %% [markdown]
# :::{dropdown} Solution
# $\|U_1R_1R - U_2R_2\|_F = \|U_1(R_1RR_2^\top) - U_2\|_F$ and $R \mapsto R_1RR_2^\top$ is a bijection of
# $O(r)$, so the two minima coincide. The same argument fails for $SO(r)$ when $\det(R_1R_2) = -1$:
# $R\mapsto R_1RR_2^\top$ then maps $SO(r)$ onto the other component. For $r = 2$ the $SO(2)$ minimum has a
# closed form: with $C = U_1^\top U_2$, $\operatorname{tr}(R(\phi)^\top C) = \cos\phi\,(C_{11}+C_{22}) +
# \sin\phi\,(C_{21}-C_{12})$, whose maximum over $\phi$ is $\sqrt{(C_{11}+C_{22})^2 + (C_{21}-C_{12})^2}$, so
# $\operatorname{dist}_{SO}^2 = \|U_1\|_F^2 + \|U_2\|_F^2 - 2\sqrt{(C_{11}+C_{22})^2 + (C_{21}-C_{12})^2}$.
# For $U_2 = UF$, $C = GF$ with $G = U^\top U$, and, with $\lambda_1(G) \le \lambda_2(G)$ its eigenvalues,
# $\operatorname{dist}_{SO}^2 = 2\|U\|_F^2 - 2(\lambda_2(G) - \lambda_1(G)) = 4\lambda_1(G) > 0$.
# :::

# %% tags=["solution", "hide-cell"]
rng3 = np.random.default_rng(3)
M43 = PSDQuotient(4, 3)
errs = {"representatives": 0.0, "dist(U, UR)": 0.0, "symmetry": 0.0, "BW formula": 0.0,
        "triangle: max (d13 - d12 - d23)": -np.inf}      # <= 0: the inequality holds
for _ in range(300):
    U1, U2, U3 = rng3.standard_normal((3, 4, 3))
    scale = np.linalg.norm(U1) + np.linalg.norm(U2)
    d12 = M43.dist(U1, U2)
    for improper in (False, True):
        R1 = random_orthogonal(3, rng3, improper=improper)
        R2 = random_orthogonal(3, rng3)
        errs["representatives"] = max(errs["representatives"], abs(M43.dist(U1 @ R1, U2 @ R2) - d12) / scale)
        errs["dist(U, UR)"] = max(errs["dist(U, UR)"], M43.dist(U1, U1 @ R1) / np.linalg.norm(U1))
    errs["symmetry"] = max(errs["symmetry"], abs(M43.dist(U2, U1) - d12) / scale)
    errs["BW formula"] = max(errs["BW formula"],
                             abs(quadnet.bures_wasserstein(U1 @ U1.T, U2 @ U2.T) - d12) / d12)
    errs["triangle: max (d13 - d12 - d23)"] = max(errs["triangle: max (d13 - d12 - d23)"],
                                                  (M43.dist(U1, U3) - d12 - M43.dist(U2, U3)) / scale)
print("300 triples; errors relative to ||U1|| + ||U2|| (the BW formula: relative to dist)")
for name, val in errs.items():
    print(f"  {name:32s} {val:.1e}")
# the aligned difference U1 R - U2 is computed with relative rounding ~ eps ||U|| / dist (its
# docstring): 1e-12 of the factor scale leaves a factor ~50 for the SVD and the sums
assert max(errs["representatives"], errs["dist(U, UR)"], errs["symmetry"],
           errs["triangle: max (d13 - d12 - d23)"]) < 1e-12
# the trace formula cancels: relative error ~ eps ||U||^2 / dist^2 (§1.8); the pairs here have
# dist^2 ~ ||U||^2, and square roots of a PSD matrix add a few digits of loss: 1e-10
assert errs["BW formula"] < 1e-10

def dist_SO2(U1, U2):
    """min over SO(2) of ||U1 R - U2||_F in closed form (the dropdown)."""
    C = U1.T @ U2
    m = np.hypot(C[0, 0] + C[1, 1], C[1, 0] - C[0, 1])
    return np.sqrt(max(np.sum(U1 ** 2) + np.sum(U2 ** 2) - 2 * m, 0.0))

U = rng3.standard_normal((3, 2))
brute = np.linalg.norm(U @ rotations - U @ Fl, axis=(1, 2)).min()
lam_min = np.linalg.eigvalsh(U.T @ U)[0]
print(f"SO(2)-only 'distance' from U to U F (same predictor): closed form {dist_SO2(U, U @ Fl):.6f}, "
      f"brute force over {len(angles)} angles {brute:.6f}, 2 sqrt(lambda_min(G)) = {2 * np.sqrt(lam_min):.6f}; "
      f"O(2) distance {PSDQuotient(3, 2).dist(U, U @ Fl):.1e}")
# closed form against the derivation: rounding only (1e-12); the grid of spacing 3e-4 rad misses
# the optimum by <= 1.6e-4 rad, a second-order error ~ ||U||^2 (1.6e-4)^2 / dist: 1e-6 is ample
assert abs(dist_SO2(U, U @ Fl) - 2 * np.sqrt(lam_min)) < 1e-12
assert abs(brute - dist_SO2(U, U @ Fl)) < 1e-6 and dist_SO2(U, U @ Fl) > 0.1

# %% [markdown]
# ### Exercise 4: how often does $SO(r)$ alignment fail?
#
# Draw $U_1, U_2 \in \mathbb{R}^{2\times 2}$ with independent standard Gaussian entries (the distribution
# of the loop above). (a) Derive the probability $p$ that the optimal alignment $\operatorname{align}(U_1, U_2)$
# has determinant $-1$, and show that exactly then the $SO(2)$-only distance is strictly larger than
# the quotient distance. (b) Measure the failure rate on enough pairs that its binomial standard error
# $\sqrt{p(1-p)/N}$ resolves it to about one percent, check pair by pair that the failures are the pairs
# with $\det \operatorname{align} = -1$, and compare with a much larger independent sample.

# %% [markdown]
# :::{dropdown} Solution
# (a) With $C = U_1^\top U_2 = Y_1\Sigma Y_2^\top$, $\det(Y_1Y_2^\top) = \det Y_1\,\det Y_2 = \operatorname{sign}\det C$
# (as $\det C = \det Y_1\,\det\Sigma\,\det Y_2$ and $\det\Sigma > 0$), and here
# $\det C = \det U_1\,\det U_2$. The map $U_2 \mapsto U_2F$, $F = \operatorname{diag}(1, -1)$, preserves
# the Gaussian distribution and flips the sign of $\det C$, and $\det C = 0$ has probability zero, so
# $$p = P(\det\operatorname{align}(U_1, U_2) = -1) = \tfrac12$$
# exactly (the same argument works for any $d \ge r$). When $\det C < 0$, the best
# rotation in $SO(2)$ gives $\operatorname{tr}(R^\top C) \le \sigma_1 - \sigma_2$ (the maximum of
# $\operatorname{tr}(\Sigma W)$ over $W$ with $\det W = -1$), against $\sigma_1 + \sigma_2$ over $O(2)$, so
# $\operatorname{dist}_{SO}^2 - \operatorname{dist}^2 = 4\sigma_2(C) > 0$ almost surely; when
# $\det C > 0$ the optimum is already in $SO(2)$ and the two agree.
#
# (b) With $N = 4000$ pairs the standard error is $\sqrt{0.25/4000} \approx 0.008$. The larger sample
# uses the criterion $\det U_1\det U_2 < 0$ from (a) on $10^6$ fresh pairs (standard error $5\times10^{-4}$).
# :::

# %% tags=["solution", "hide-cell"]
rng4 = np.random.default_rng(4)
N = 4000
failed, improper, excess = np.zeros(N, bool), np.zeros(N, bool), []
for k in range(N):
    U1, U2 = rng4.standard_normal((2, 2, 2))
    d_O = M.dist(U1, U2)
    gap_k = dist_SO2(U1, U2) - d_O
    # the excess is 4 sigma_2(C) / (dist_SO + dist) > 0 when det C < 0; rounding of either distance
    # is ~ eps ||U||: 1e-9 separates "equal" from "larger" with a margin of 1e6 on both sides
    failed[k] = gap_k > 1e-9
    improper[k] = np.linalg.det(align(U1, U2)) < 0
    if failed[k]:
        excess.append(gap_k / d_O)
count = int(failed.sum())
rate = count / N
se = np.sqrt(0.5 * 0.5 / N)
print(f"SO(2)-only distance too large for {count} of {N} pairs: rate {rate:.4f} +- {se:.4f} (binomial s.e.)")
print(f"pairs where the failure and det align = -1 disagree: {int(np.sum(failed != improper))}; "
      f"smallest relative excess among failures {min(excess):.1e}, median {np.median(excess):.1%}")
assert np.array_equal(failed, improper)
assert abs(rate - 0.5) < 4 * se                  # within 4 standard errors of the derived p = 1/2

big = np.random.default_rng(40).standard_normal((10**6, 2, 2, 2))
dets = np.linalg.det(big[:, 0]) * np.linalg.det(big[:, 1])
rate_big = float(np.mean(dets < 0))
se_big = np.sqrt(0.25 / 10**6)
print(f"independent sample of 10^6 pairs (det U1 det U2 < 0): rate {rate_big:.4f} +- {se_big:.4f}")
assert abs(rate_big - 0.5) < 4 * se_big
assert abs(rate - rate_big) < 4 * np.hypot(se, se_big)

# %% [markdown]
# ### What to take away
#
# * The factor space is a fibre bundle over $\mathcal{M}_r^+$: fibres are $O(r)$-orbits (for $r = 2$: two
#   circles), the vertical directions $\mathcal{V}_U$ are the fibre's tangents, the horizontal ones
#   $\mathcal{H}_U$ carry the geometry, and $P_h$ is the orthogonal projection onto them.
# * The quotient distance is a minimum over the whole fibre, $O(r)$ with its reflections; over $SO(r)$
#   alone it is wrong for half of all Gaussian pairs.
# * Gradients of any $L(U) = \ell(UU^\top)$ are horizontal ($\nabla L = 2SU$ and $U^\top S U$ is symmetric,
#   [§2.2](../docs/theory/dynamics.md#22-the-factor-gradient-is--and-it-is-horizontal)), which is why
#   factor gradient flow *is* Riemannian gradient flow on $\mathcal{M}_r^+$. The next unit,
#   `lifts_geodesics_and_gradients`, builds lifts, the metric, geodesics, exp/log and Riemannian
#   gradients and Hessians on this picture; `curvature_of_the_quotient` then measures how curved the
#   quotient is.
