# %% [markdown]
# # Curvature of the quotient
#
# The map $U \mapsto UU^\top$ from flat factors $\mathbb{R}^{d\times r}$ to the rank-$r$ PSD matrices
# $\mathcal{M}_r^+$ is a Riemannian submersion (quadnet theory §1). O'Neill (1966) says what that does
# to curvature: a flat total space gives a quotient whose sectional curvature is **three times the
# squared norm of O'Neill's tensor** $A_\xi\eta = \tfrac12[\xi,\eta]^{\mathrm v}$ of horizontal lifts, that is
# $\tfrac34\|[\xi,\eta]^{\mathrm v}\|^2$ over the squared area of the plane; below, $U\Omega = A_\xi\eta$. For horizontal $\xi, \eta$ at $U$,
# $$K(\xi,\eta) = \frac{3\,\|U\Omega\|_F^2}{\|\xi\|^2\|\eta\|^2 - \langle\xi,\eta\rangle^2},\qquad
# (U^\top U)\Omega + \Omega(U^\top U) = \xi^\top\eta - \eta^\top\xi .$$
# The derivation, the Ricci and scalar curvature and the bounds are in `docs/riemannian.md`.
# This notebook looks at four pictures of that curvature:
#
# 1. $K$ over random planes against $\sigma_{\min}(U)$, with the bound $3/(\lambda_{r-1}+\lambda_r)$;
# 2. geodesic triangles and the Toponogov comparison (nonnegative curvature);
# 3. holonomy of parallel transport around a small loop against $K\times$ area;
# 4. a barycentre of three rank-one points in $d = 2$, drawn on the PSD cone.

# %%
import numpy as np
import matplotlib.pyplot as plt
from quadnet import PSDQuotient
from quadnet.geometry.riemannian import (
    sectional_curvature, distance_expansion_curvature, bures_wasserstein_sectional_curvature,
    curvature_bounds, ricci_curvature, scalar_curvature, parallel_transport, holonomy)
from quadnet.geometry.barycenter import bw_barycenter

plt.rcParams["figure.dpi"] = 80
rng = np.random.default_rng(0)

def point(d, r, sigma, rng):
    # a factor with prescribed singular values and random singular vectors
    P = np.linalg.qr(rng.standard_normal((d, r)))[0]
    E = np.linalg.qr(rng.standard_normal((r, r)))[0]
    return (P * np.asarray(sigma, float)) @ E.T

# one plane, three routes: O'Neill, the distance expansion, the SPD closed form (r = d)
d = r = 3
M = PSDQuotient(d, r)
U = point(d, r, [1.5, 1.0, 0.6], rng)
xi, eta = M.random_tangent_vector(U, rng), M.random_tangent_vector(U, rng)
K = sectional_curvature(U, xi, eta)
print(f"O'Neill                  K = {K:.12f}")
print(f"distance expansion       K = {distance_expansion_curvature(U, xi, eta):.12f}")
print(f"SPD closed form (Takatsu) K = "
      f"{bures_wasserstein_sectional_curvature(U @ U.T, M.differential(U, xi), M.differential(U, eta)):.12f}")
print("r = 1 is flat:", sectional_curvature(np.ones((3, 1)), np.array([[1.], [-1.], [0.]]),
                                          np.array([[1.], [1.], [-2.]])))
print(f"scalar curvature {scalar_curvature(U):.6f} = trace of Ricci {np.trace(ricci_curvature(U)):.6f}")

# %% [markdown]
# ## 1. Curvature against the distance to the rank boundary
#
# In the singular basis, $K = 3\sum_{a<b} C_{ab}^2/(\lambda_a+\lambda_b)\,/\,|\xi\wedge\eta|^2$ with
# $C = \xi^\top\eta - \eta^\top\xi$, and $\sum_{a<b}C_{ab}^2 \le 1$ for an orthonormal pair. So
# $$0 \le K \le \frac{3}{\lambda_{r-1} + \lambda_r},$$
# attained for every $d \ge r$ (`curvature_bounds(U).extremal_plane`). The denominator involves the **two** smallest eigenvalues of $Q$: when only
# $\sigma_r \to 0$ (approaching rank $r-1$) the curvature stays bounded by $3/\lambda_{r-1}$; it blows up
# when $\sigma_{r-1}$ and $\sigma_r$ vanish together. Below: $d = 5$, $r = 3$, 30 random planes per point.

# %%
d, r = 5, 3
M = PSDQuotient(d, r)
s_grid = np.logspace(-3, 0, 13)
fig, ax = plt.subplots(figsize=(6, 4))
for sig_of, label, c in ((lambda s: [1.0, 0.5, s], r"$\sigma = (1, 0.5, s)$", "C0"),
                         (lambda s: [1.0, s, s], r"$\sigma = (1, s, s)$", "C1")):
    bounds = []
    for s in s_grid:
        U = point(d, r, sig_of(s), rng)
        Ks = [sectional_curvature(U, M.random_tangent_vector(U, rng), M.random_tangent_vector(U, rng))
              for _ in range(30)]
        ax.loglog([s] * len(Ks), Ks, ".", color=c, alpha=0.4, ms=3)
        bounds.append(curvature_bounds(U).sectional_max)
    ax.loglog(s_grid, bounds, "-", color=c, label=f"bound $3/(\\lambda_{{r-1}}+\\lambda_r)$, {label}")
ax.set(xlabel=r"$\sigma_{\min}(U)$", ylabel="sectional curvature $K$",
       title="K over random planes (dots) and the bound (lines)")
ax.legend(); plt.show()

# %% [markdown]
# ## 2. Geodesic triangles: Toponogov comparison
#
# Nonnegative curvature makes triangles *fatter* than their Euclidean comparison triangles. In the
# form of Alexandrov spaces (the Wasserstein space is one, Ambrosio, Gigli & Savaré 2008, §7.3), the
# distance from a vertex $A$ to the midpoint $m$ of the opposite side satisfies
#
# $$\operatorname{dist}(A,m)^2 \ge \tfrac12\operatorname{dist}(A,B)^2 + \tfrac12\operatorname{dist}(A,C)^2 - \tfrac14\operatorname{dist}(B,C)^2,$$
#
# with equality in the plane. For small triangles the angle sum exceeds $\pi$ by about $K\times$ area
# (Gauss–Bonnet). Geodesics are straight in factor space once the endpoints are aligned: the side
# from $B$ to $C$ is $B + t(C R - B)$, $R$ = `align(C, B)`.

# %%
excess, K_area, angle_excess = [], [], []
for i in range(300):
    r = 1 + i % 3; d = r + 1
    M = PSDQuotient(d, r)
    A, B, C = (rng.standard_normal((d, r)) for _ in range(3))
    m = 0.5 * (B + C @ M.align(C, B))
    lhs = M.dist(A, m) ** 2
    rhs = 0.5 * M.dist(A, B) ** 2 + 0.5 * M.dist(A, C) ** 2 - 0.25 * M.dist(B, C) ** 2
    excess.append((lhs - rhs) / lhs)
for i in range(60):
    d, r = 4, 2 + i % 2
    M = PSDQuotient(d, r)
    U = point(d, r, rng.uniform(0.5, 2, r), rng)
    xi, eta = M.random_tangent_vector(U, rng), M.random_tangent_vector(U, rng)
    P = [U, U + 0.03 * xi, U + 0.03 * eta]
    def ang(X, Y, Z):
        a, b = M.log(X, Y), M.log(X, Z)
        return np.arccos(np.clip(np.sum(a * b) / np.linalg.norm(a) / np.linalg.norm(b), -1, 1))
    tot = sum(ang(P[j], P[(j + 1) % 3], P[(j + 2) % 3]) for j in range(3))
    a, b, c = (M.dist(P[j], P[(j + 1) % 3]) for j in range(3))
    s = (a + b + c) / 2
    K_area.append(sectional_curvature(U, xi, eta) * np.sqrt(s * (s - a) * (s - b) * (s - c)))
    angle_excess.append(tot - np.pi)
fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
a1.hist(excess, bins=30); a1.axvline(0, color="k", lw=0.8)
a1.set(xlabel="relative excess of dist(A, m)$^2$ over the comparison value",
       ylabel="triangles", title=f"300 random triangles: min excess {min(excess):.1e}")
a2.loglog(K_area, angle_excess, "o", ms=3)
lim = [min(K_area), max(K_area)]; a2.loglog(lim, lim, "k--", lw=0.8, label="angle excess = K x area")
a2.set(xlabel="K x area", ylabel=r"angle sum $-\ \pi$", title="small triangles (side 0.03)")
a2.legend(); plt.tight_layout(); plt.show()
print("median (angle excess)/(K x area):", np.round(np.median(np.array(angle_excess) / K_area), 4))

# %% [markdown]
# ## 3. Parallel transport and holonomy
#
# Along the geodesic $U + s\xi$ the lift $V(s)$ of a parallel field is horizontal with vertical
# derivative: $V' = -U(s)\Omega$, $G(s)\Omega + \Omega G(s) = \xi^\top V - V^\top\xi$. quadnet integrates it
# with an order-8 Runge–Kutta method (DOP853). Transport around a small geodesic square of side
# $\varepsilon$ turns a vector by the angle $K\cdot A$, $A = \varepsilon^2$: the relative error is
# $O(\varepsilon)$ against $K$ at the corner and $O(\varepsilon^2)$ against $K$ at the centre of the loop.
# pymanopt's projection transport $P_h(U+t\xi)v$ agrees with parallel transport only to $O(t^2)$.

# %%
d, r = 4, 2
M = PSDQuotient(d, r)
U = point(d, r, [1.2, 0.5], rng)
xi, eta = M.random_tangent_vector(U, rng), M.random_tangent_vector(U, rng)
eps = np.array([0.08, 0.04, 0.02, 0.01, 0.005])
hs = [holonomy(U, xi, eta, e) for e in eps]
angle = np.array([h["angle"] for h in hs]); KA = np.array([h["K"] * h["area"] for h in hs])
KcA = np.array([h["K_centre"] * h["area"] for h in hs])
err0, errc = np.abs(angle / KA - 1), np.abs(angle / KcA - 1)
v = M.random_tangent_vector(U, rng)
ts = np.array([0.16, 0.08, 0.04, 0.02, 0.01])
gap = [np.linalg.norm(parallel_transport(U, xi, v, t) - M.transport(U, U + t * xi, v)) for t in ts]
fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
a1.loglog(KA, angle, "o-", label="holonomy angle"); a1.loglog(KA, KA, "k--", lw=0.8, label="K x A")
a1.set(xlabel="K x enclosed area", ylabel="rotation angle", title="holonomy of a small loop")
a1.legend()
a2.loglog(eps, err0, "o-", label=f"vs K at the corner (order {np.polyfit(np.log(eps), np.log(err0), 1)[0]:.2f})")
a2.loglog(eps, errc, "s-", label=f"vs K at the centre (order {np.polyfit(np.log(eps), np.log(errc), 1)[0]:.2f})")
a2.loglog(ts, gap, "^-", label=f"projection vs parallel transport, t (order {np.polyfit(np.log(ts), np.log(gap), 1)[0]:.2f})")
a2.set(xlabel=r"loop side $\varepsilon$ / transport time $t$", ylabel="relative error / difference")
a2.legend(fontsize=8); plt.tight_layout(); plt.show()
V1, V2 = parallel_transport(U, xi, xi, 0.7), parallel_transport(U, xi, v, 0.7)
print("velocity transported to itself:", np.linalg.norm(V1 - xi),
      "| norm kept:", abs(np.linalg.norm(V2) - 1))


# %% [markdown]
# ## 4. A barycentre of three rank-one points, on the cone
#
# A symmetric $2\times2$ matrix $\begin{pmatrix} a & b\\ b & c\end{pmatrix}$ is drawn at
# $(x, y, z) = ((a-c)/2,\ b,\ (a+c)/2)$: the PSD matrices fill the solid round cone
# $z \ge \sqrt{x^2+y^2}$ and the rank-one ones, $\mathcal{M}_1^+$, are its surface. `bw_barycenter`
# minimises $\sum_i w_i\operatorname{dist}(Q, Q_i)^2$ **within** $\mathcal{M}_r^+$ by the fixed-point iteration
# $U \leftarrow \sum_i w_i U_i\,\mathrm{align}(U_i, U)$ (Álvarez-Esteban et al. 2016 in factor form), so
# the barycentre of rank-one points is a rank-one point on the surface, and its geodesics to the
# three points run along the surface. Is it also the barycentre among *all* PSD matrices? Run the
# fixed point in matrix form, $S \leftarrow S^{-1/2}\bigl(\sum_i w_i (S^{1/2}Q_iS^{1/2})^{1/2}\bigr)^2 S^{-1/2}$,
# from the identity (inside the cone): its iterates (red) run to the same point on the surface.

# %%
def cone(Q):
    Q = np.asarray(Q)
    return np.array([(Q[..., 0, 0] - Q[..., 1, 1]) / 2, Q[..., 0, 1], (Q[..., 0, 0] + Q[..., 1, 1]) / 2])

def psd_sqrt(S):
    w, E = np.linalg.eigh(S)
    return (E * np.sqrt(np.clip(w, 0, None))) @ E.T

angles = np.array([0.2, 1.3, 2.4])
Us = [np.array([[np.cos(t)], [np.sin(t)]]) * rho for t, rho in zip(angles, [1.0, 1.3, 0.8])]
w = np.array([0.5, 0.3, 0.2])
# M_1^+ is a cone over a circle: the fixed point can stop at a local minimum, so try every start
cands = [bw_barycenter(Us, w, init=U0, inputs="factors", max_rank=1) for U0 in Us]
b = min(cands, key=lambda c: c.objective)
print("rank-one barycentre:", b.report)

S = np.eye(2)                                   # matrix fixed point over all PSD matrices
Qs = [U @ U.T for U in Us]
path = [S]
for _ in range(2000):
    R = psd_sqrt(S); Ri = np.linalg.pinv(R)
    T = sum(wi * psd_sqrt(R @ Q @ R) for wi, Q in zip(w, Qs))
    S_new = Ri @ T @ T @ Ri
    path.append(S_new)
    if np.linalg.norm(S_new - S) < 1e-15: S = S_new; break
    S = S_new
print(f"matrix fixed point after {len(path) - 1} steps: eigenvalues {np.round(np.linalg.eigvalsh(S), 8)}, "
      f"||S - Q_rank-one|| = {np.linalg.norm(S - b.Q):.1e}")

fig = plt.figure(figsize=(7, 6)); ax = fig.add_subplot(projection="3d")
th, z = np.meshgrid(np.linspace(0, 2 * np.pi, 60), np.linspace(0, 1.0, 12))
ax.plot_surface(z * np.cos(th), z * np.sin(th), z, alpha=0.12, color="gray", linewidth=0)
M1 = PSDQuotient(2, 1)
for U, c in zip(Us, ["C0", "C1", "C2"]):
    X = cone(U @ U.T); ax.scatter(*X, color=c, s=40)
    V = U @ M1.align(U, b.U)                    # aligned: the geodesic is the factor segment
    seg = np.array([cone(np.outer(u, u)) for u in
                    [(1 - t) * b.U[:, 0] + t * V[:, 0] for t in np.linspace(0, 1, 40)]])
    ax.plot(*seg.T, color=c, lw=1.5)
ax.scatter(*cone(b.Q), color="k", s=60, marker="*", label="barycentre in $M_1^+$ (on the surface)")
P = np.array([cone(Sk) for Sk in path[:60]])
ax.plot(*P.T, ".-", color="C3", ms=3, lw=0.8, label="matrix fixed point from $I$ (all PSD matrices)")
ax.set(xlabel="(a - c)/2", ylabel="b", zlabel="(a + c)/2", title="three rank-one points, weights 0.5, 0.3, 0.2")
ax.legend(loc="upper left", fontsize=8); plt.show()
