# %% [markdown]
# # Quotient geometry of positive quadratic networks
#
# A positive quadratic network is $f_U(x) = x^\top U U^\top x = \|U^\top x\|^2$ with a factor
# $U \in \mathbb{R}^{d\times r}$. Only the **predictor** $Q = UU^\top$ matters, and
# $UU^\top = VV^\top$ exactly when $V = UR$ for an orthogonal $R \in O(r)$. So the parameter space
# is the set of full-rank factors modulo $O(r)$: the manifold $M_r^+$ of rank-$r$ PSD matrices
# (quadnet theory §1).
#
# This notebook draws that geometry for $d = 2$, where everything fits in three dimensions:
#
# 1. the PSD cone of $2\times 2$ matrices and its rank-one boundary;
# 2. the **fibre** $\{UR : R \in O(2)\}$ of a predictor: two circles;
# 3. **vertical** directions (along the fibre: the predictor does not move) versus
#    **horizontal** ones (orthogonal to the fibre: the predictor moves, and the metric is measured);
# 4. the quotient distance $\min_R \|UR - V\|_F$ and why alignment must range over all of $O(r)$.

# %%
import numpy as np
import matplotlib.pyplot as plt
import quadnet
from quadnet import PSDQuotient, align

rng = np.random.default_rng(0)
plt.rcParams["figure.dpi"] = 80

def cone_coords(Q):
    # a symmetric 2x2 matrix [[a, b], [b, c]] as a point (x, y, z) = ((a - c)/2, b, (a + c)/2);
    # it is PSD iff z >= sqrt(x^2 + y^2): the PSD cone is a round cone in these coordinates
    Q = np.asarray(Q)
    return np.array([(Q[..., 0, 0] - Q[..., 1, 1]) / 2, Q[..., 0, 1], (Q[..., 0, 0] + Q[..., 1, 1]) / 2])


# %% [markdown]
# ## 1. The PSD cone of $2\times 2$ matrices
#
# In the coordinates above, $\det Q = z^2 - x^2 - y^2$ and $\operatorname{tr} Q = 2z$, so PSD
# matrices form the solid round cone $z \ge \sqrt{x^2+y^2}$. Its boundary (minus the apex) is
# $M_1^+$, the rank-one matrices $uu^\top$; its interior is $M_2^+$. A rank-one factor
# $u = \rho(\cos\theta, \sin\theta)$ lands on the boundary at height $z = \rho^2/2$ and angle
# $2\theta$: the map $u \mapsto uu^\top$ wraps the plane twice around the cone, which is the
# fibre $\{u, -u\}$ of $O(1) = \{\pm 1\}$.

# %%
fig = plt.figure(figsize=(11, 4.6))
ax = fig.add_subplot(1, 2, 1, projection="3d")
t, h = np.meshgrid(np.linspace(0, 2 * np.pi, 60), np.linspace(0, 1, 12))
ax.plot_surface(h * np.cos(t), h * np.sin(t), h, alpha=0.25, color="tab:blue", linewidth=0)
# rank-one factors on a circle of radius sqrt(2) map to the circle z = 1 on the boundary
theta = np.linspace(0, np.pi, 9)[:-1]
for th, c in zip(theta, plt.cm.viridis(np.linspace(0, 1, len(theta)))):
    u = np.sqrt(2) * np.array([np.cos(th), np.sin(th)])
    ax.scatter(*cone_coords(np.outer(u, u)), color=c, s=40)
# a few rank-two predictors U U^T (interior points)
for _ in range(25):
    U = 0.6 * rng.standard_normal((2, 2))
    ax.scatter(*cone_coords(U @ U.T), color="0.3", s=8)
ax.set_xlabel("x = (a - c)/2"); ax.set_ylabel("y = b"); ax.set_zlabel("z = (a + c)/2")
ax.set_title("PSD cone: boundary = rank one, interior = rank two")

ax2 = fig.add_subplot(1, 2, 2)
for th, c in zip(theta, plt.cm.viridis(np.linspace(0, 1, len(theta)))):
    u = np.sqrt(2) * np.array([np.cos(th), np.sin(th)])
    ax2.scatter(*u, color=c, s=40); ax2.scatter(*(-u), color=c, s=40, marker="s")
    ax2.plot([u[0], -u[0]], [u[1], -u[1]], color=c, lw=0.6)
ax2.set_aspect("equal"); ax2.set_xlabel("$u_1$"); ax2.set_ylabel("$u_2$")
ax2.set_title("factors $u$ and $-u$ (same colour) give the same $uu^T$")
plt.tight_layout(); plt.show()

# %% [markdown]
# ## 2. Fibres are circles
#
# Take a full-rank $U \in \mathbb{R}^{2\times 2}$. Rotations $R(\phi) = \cos\phi\, I + \sin\phi\, J$
# with $J = \begin{pmatrix}0 & -1\\ 1 & 0\end{pmatrix}$ give
# $$U R(\phi) = \cos\phi\; U + \sin\phi\; UJ, \qquad \langle U, UJ\rangle_F = \operatorname{tr}(U^\top U J) = 0,
# \quad \|UJ\|_F = \|U\|_F,$$
# so the rotations move $U$ on an exact circle of radius $\|U\|_F$ in the plane spanned by $U$ and
# $UJ$. The reflections $UR$ with $\det R = -1$ form a second, disjoint circle. Every point of both
# circles has the same predictor $UU^\top$. Let us check that numerically and draw the circles for
# three predictors of growing size.

# %%
M = PSDQuotient(2, 2)
J = np.array([[0.0, -1.0], [1.0, 0.0]])
Fl = np.diag([1.0, -1.0])            # a reflection
phi = np.linspace(0, 2 * np.pi, 200)

U = rng.standard_normal((2, 2))
Q = M.predictor(U)
spread = max(np.linalg.norm(M.predictor(U @ (np.cos(p) * np.eye(2) + np.sin(p) * J)) - Q) for p in phi)
print(f"max over the fibre of ||pi(U R) - pi(U)||_F = {spread:.2e}   (zero up to rounding)")
print(f"<U, UJ>_F = {np.sum(U * (U @ J)):.2e},  ||UJ|| - ||U|| = {np.linalg.norm(U @ J) - np.linalg.norm(U):.2e}")

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
ax.set_xlabel(r"$\langle UR, U\rangle_F / \|U\|_F$"); ax.set_ylabel(r"$\langle UR, UJ\rangle_F / \|U\|_F$")
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
# At $U$ the **vertical space** $V_U = \{U\Omega : \Omega^\top = -\Omega\}$ is the tangent line of
# the fibre (here spanned by $UJ$): moving along it does not change the predictor, because
# $D\pi(U)[U\Omega] = U\Omega U^\top + U\Omega^\top U^\top = 0$. The **horizontal space**
# $H_U = \{\xi : U^\top\xi \text{ symmetric}\}$ is its Frobenius-orthogonal complement, of dimension
# $dr - r(r-1)/2 = 3 = \dim M_2^+$. Horizontal vectors are the lifts of tangent vectors of $M_r^+$;
# the metric of the quotient is the Frobenius inner product of horizontal lifts.
#
# `PSDQuotient` splits any direction $Z$ into the two parts; we check the defining properties.

# %%
Z = rng.standard_normal((2, 2))
Zv = M.vertical_projection(U, Z)
Zh = M.horizontal_projection(U, Z)
print("Z = Zv + Zh:                 ", np.allclose(Zv + Zh, Z))
print("<Zv, Zh>_F                    = %.1e" % np.sum(Zv * Zh))
print("U^T Zh symmetric (horizontal): asymmetry %.1e" % np.linalg.norm(U.T @ Zh - Zh.T @ U))
print("D pi(U)[Zv] (vertical)        = %.1e" % np.linalg.norm(M.differential(U, Zv)))
print("dim H_U                       =", M.horizontal_basis(U).shape[1], "= dim M_2^+ =", M.dim)

# %% [markdown]
# Moving a little along a vertical direction leaves the predictor where it is (to second order:
# the straight line leaves the circle), while the same step along a horizontal direction moves
# it at first order. The plot shows $\|\pi(U + tZ) - \pi(U)\|_F$ against $t$ for a unit vertical and
# a unit horizontal direction: slope 2 versus slope 1 on log axes.

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
# ## 4. Quotient distance and alignment over all of $O(r)$
#
# The distance between predictors is $\operatorname{dist}(Q_1, Q_2) = \min_{R\in O(r)} \|U_1R - U_2\|_F$,
# reached at the Procrustes rotation $R = AB^\top$ ($U_1^\top U_2 = A\Sigma B^\top$); it is the
# Bures–Wasserstein distance. The minimum must run over **all** of $O(r)$, reflections included:
# restricting to $SO(r)$ (as geomstats does) overestimates the distance whenever the best $R$ has
# determinant $-1$, which happens for a sizeable fraction of random pairs (6 of the 20 drawn below;
# quadnet theory §7). It does not depend
# on which representatives of the two fibres we pick.

# %%
angles = np.linspace(0, 2 * np.pi, 20001)
rotations = np.cos(angles)[:, None, None] * np.eye(2) + np.sin(angles)[:, None, None] * J

def dist_SO(U1, U2):
    # best rotation with det = +1 only (the geomstats convention), by brute force over angles
    return np.linalg.norm(U1 @ rotations - U2, axis=(1, 2)).min()

wrong = 0
for k in range(20):
    U1, U2 = rng.standard_normal((2, 2, 2))
    d_O = M.dist(U1, U2)
    R = align(U1, U2)
    d_BW = quadnet.bures_wasserstein(U1 @ U1.T, U2 @ U2.T)
    assert abs(d_O - d_BW) < 1e-8 and abs(d_O - np.linalg.norm(U1 @ R - U2)) < 1e-12
    # invariance: other representatives of the same two fibres give the same distance
    R1, R2 = quadnet.geometry.random_orthogonal(2, rng), quadnet.geometry.random_orthogonal(2, rng)
    assert abs(M.dist(U1 @ R1, U2 @ R2) - d_O) < 1e-10
    wrong += dist_SO(U1, U2) > d_O + 1e-6
print(f"O(2) distance = Bures-Wasserstein distance on 20 random pairs; the SO(2)-only distance "
      f"is too large for {wrong} of them")

# %% [markdown]
# ### What to take away
#
# * The factor space is a fibre bundle over $M_r^+$: fibres are $O(r)$-orbits (for $r = 2$: two
#   circles), the vertical directions are the fibre's tangents, the horizontal ones carry the
#   geometry.
# * Gradients of any $L(U) = \ell(UU^\top)$ are horizontal ($\nabla L = 2SU$ and $U^\top S U$ is
#   symmetric), which is why factor gradient flow *is* Riemannian gradient flow on $M_r^+$
#   (quadnet theory §2); see the `curvature_and_rates` notebook for what the curvature of the loss does
#   along the horizontal directions.
