"""Build (and execute) the teaching notebooks of ``notebooks/`` from the cells below.

Usage: ``python scripts/build_notebooks.py [NAME ...] [--no-execute]``. Each notebook is
written with nbformat, executed top to bottom with nbclient (so the committed copy shows its
pictures) and saved with the execution timestamps removed. The notebooks call the public
quadnet API only; tests/test_notebooks.py executes every ``notebooks/*.ipynb`` again.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS: dict[str, list[tuple[str, str]]] = {}


def notebook(name: str):
    def deco(fn):
        NOTEBOOKS[name] = fn()
        return fn
    return deco


def md(text: str) -> tuple[str, str]:
    return ("md", text.strip("\n"))


def code(text: str) -> tuple[str, str]:
    return ("code", text.strip("\n"))


# =============================================================================== quotient
@notebook("quotient_geometry")
def _quotient():
    return [
        md(r"""
# Quotient geometry of positive quadratic networks

A positive quadratic network is $f_U(x) = x^\top U U^\top x = \|U^\top x\|^2$ with a factor
$U \in \mathbb{R}^{d\times r}$. Only the **predictor** $Q = UU^\top$ matters, and
$UU^\top = VV^\top$ exactly when $V = UR$ for an orthogonal $R \in O(r)$. So the parameter space
is the set of full-rank factors modulo $O(r)$: the manifold $M_r^+$ of rank-$r$ PSD matrices
(quadnet theory §1).

This notebook draws that geometry for $d = 2$, where everything fits in three dimensions:

1. the PSD cone of $2\times 2$ matrices and its rank-one boundary;
2. the **fibre** $\{UR : R \in O(2)\}$ of a predictor: two circles;
3. **vertical** directions (along the fibre: the predictor does not move) versus
   **horizontal** ones (orthogonal to the fibre: the predictor moves, and the metric is measured);
4. the quotient distance $\min_R \|UR - V\|_F$ and why alignment must range over all of $O(r)$.
"""),
        code(r"""
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
"""),
        md(r"""
## 1. The PSD cone of $2\times 2$ matrices

In the coordinates above, $\det Q = z^2 - x^2 - y^2$ and $\operatorname{tr} Q = 2z$, so PSD
matrices form the solid round cone $z \ge \sqrt{x^2+y^2}$. Its boundary (minus the apex) is
$M_1^+$, the rank-one matrices $uu^\top$; its interior is $M_2^+$. A rank-one factor
$u = \rho(\cos\theta, \sin\theta)$ lands on the boundary at height $z = \rho^2/2$ and angle
$2\theta$: the map $u \mapsto uu^\top$ wraps the plane twice around the cone, which is the
fibre $\{u, -u\}$ of $O(1) = \{\pm 1\}$.
"""),
        code(r"""
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
"""),
        md(r"""
## 2. Fibres are circles

Take a full-rank $U \in \mathbb{R}^{2\times 2}$. Rotations $R(\phi) = \cos\phi\, I + \sin\phi\, J$
with $J = \begin{pmatrix}0 & -1\\ 1 & 0\end{pmatrix}$ give
$$U R(\phi) = \cos\phi\; U + \sin\phi\; UJ, \qquad \langle U, UJ\rangle_F = \operatorname{tr}(U^\top U J) = 0,
\quad \|UJ\|_F = \|U\|_F,$$
so the rotations move $U$ on an exact circle of radius $\|U\|_F$ in the plane spanned by $U$ and
$UJ$. The reflections $UR$ with $\det R = -1$ form a second, disjoint circle. Every point of both
circles has the same predictor $UU^\top$. Let us check that numerically and draw the circles for
three predictors of growing size.
"""),
        code(r"""
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
"""),
        md(r"""
## 3. Vertical versus horizontal

At $U$ the **vertical space** $V_U = \{U\Omega : \Omega^\top = -\Omega\}$ is the tangent line of
the fibre (here spanned by $UJ$): moving along it does not change the predictor, because
$D\pi(U)[U\Omega] = U\Omega U^\top + U\Omega^\top U^\top = 0$. The **horizontal space**
$H_U = \{\xi : U^\top\xi \text{ symmetric}\}$ is its Frobenius-orthogonal complement, of dimension
$dr - r(r-1)/2 = 3 = \dim M_2^+$. Horizontal vectors are the lifts of tangent vectors of $M_r^+$;
the metric of the quotient is the Frobenius inner product of horizontal lifts.

`PSDQuotient` splits any direction $Z$ into the two parts; we check the defining properties.
"""),
        code(r"""
Z = rng.standard_normal((2, 2))
Zv = M.vertical_projection(U, Z)
Zh = M.horizontal_projection(U, Z)
print("Z = Zv + Zh:                 ", np.allclose(Zv + Zh, Z))
print("<Zv, Zh>_F                    = %.1e" % np.sum(Zv * Zh))
print("U^T Zh symmetric (horizontal): asymmetry %.1e" % np.linalg.norm(U.T @ Zh - Zh.T @ U))
print("D pi(U)[Zv] (vertical)        = %.1e" % np.linalg.norm(M.differential(U, Zv)))
print("dim H_U                       =", M.horizontal_basis(U).shape[1], "= dim M_2^+ =", M.dim)
"""),
        md(r"""
Moving a little along a vertical direction leaves the predictor where it is (to second order:
the straight line leaves the circle), while the same step along a horizontal direction moves
it at first order. The plot shows $\|\pi(U + tZ) - \pi(U)\|_F$ against $t$ for a unit vertical and
a unit horizontal direction: slope 2 versus slope 1 on log axes.
"""),
        code(r"""
xv = M.vertical_projection(U, Z); xv /= np.linalg.norm(xv)
xh = M.horizontal_projection(U, Z); xh /= np.linalg.norm(xh)
ts = np.logspace(-4, 0, 30)
dv = [np.linalg.norm((U + t * xv) @ (U + t * xv).T - Q) for t in ts]
dh = [np.linalg.norm((U + t * xh) @ (U + t * xh).T - Q) for t in ts]
fig, ax = plt.subplots(figsize=(5.5, 4))
ax.loglog(ts, dh, label="horizontal step: moves Q at first order")
ax.loglog(ts, dv, label="vertical step: only second order (t^2 ||xi||^2)")
ax.loglog(ts, ts ** 2, "k:", lw=0.8, label="t^2")
ax.set_xlabel("step length t"); ax.set_ylabel(r"$\|\pi(U + t\xi) - \pi(U)\|_F$")
ax.legend(fontsize=8); plt.show()
print("slopes (log-log, small t): horizontal %.2f, vertical %.2f"
      % (np.polyfit(np.log(ts[:10]), np.log(dh[:10]), 1)[0], np.polyfit(np.log(ts[:10]), np.log(dv[:10]), 1)[0]))
"""),
        md(r"""
## 4. Quotient distance and alignment over all of $O(r)$

The distance between predictors is $\operatorname{dist}(Q_1, Q_2) = \min_{R\in O(r)} \|U_1R - U_2\|_F$,
reached at the Procrustes rotation $R = AB^\top$ ($U_1^\top U_2 = A\Sigma B^\top$); it is the
Bures–Wasserstein distance. The minimum must run over **all** of $O(r)$, reflections included:
restricting to $SO(r)$ (as geomstats does) overestimates the distance whenever the best $R$ has
determinant $-1$, which happens for a sizeable fraction of random pairs (6 of the 20 drawn below;
quadnet theory §7). It does not depend
on which representatives of the two fibres we pick.
"""),
        code(r"""
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
"""),
        md(r"""
### What to take away

* The factor space is a fibre bundle over $M_r^+$: fibres are $O(r)$-orbits (for $r = 2$: two
  circles), the vertical directions are the fibre's tangents, the horizontal ones carry the
  geometry.
* Gradients of any $L(U) = \ell(UU^\top)$ are horizontal ($\nabla L = 2SU$ and $U^\top S U$ is
  symmetric), which is why factor gradient flow *is* Riemannian gradient flow on $M_r^+$
  (quadnet theory §2); see the `curvature_and_rates` notebook for what the curvature of the loss does
  along the horizontal directions.
"""),
    ]


# =============================================================================== curvature
@notebook("curvature_and_rates")
def _curvature():
    return [
        md(r"""
# Effective curvature and local rates

Because $L(U) = \ell(UU^\top)$ is constant along fibres, its Hessian always has
$r(r-1)/2$ flat directions at a minimiser: the vertical ones. They carry no information about
the problem. The curvature that matters is the **effective Hessian**, the Hessian restricted to
the horizontal space $H_U$ (quadnet theory §3):
$$H_{\rm eff} = B^\top\, D^2L(U)\, B, \qquad B \text{ an orthonormal basis of } H_U .$$
Its smallest eigenvalue $\lambda_{\min}$ sets the local rate of gradient flow,
$\|Q(t) - Q^\star\|_F \asymp e^{-\lambda_{\min} t}$, and its spectrum sets the per-step
contraction $\max_i|1 - \eta\lambda_i|$ of gradient descent. We measure both on Gaussian sensing.
"""),
        code(r"""
import numpy as np
import matplotlib.pyplot as plt
import quadnet
from quadnet import GaussianSensing, PSDQuotient
from quadnet.curvature import effective_hessian, factor_hessian, effective_spectrum
from quadnet.sensing import population_effective_spectrum

plt.rcParams["figure.dpi"] = 80
d, r = 6, 2
n_h = d * r - r * (r - 1) // 2
prob = GaussianSensing.random(d, r, 40 * n_h, seed=0)
U_star = prob.U_star                     # the planted factor: a zero-residual minimiser
print(f"d = {d}, r = {r}: n_h = {n_h}, m = {prob.m}")
"""),
        md(r"""
## 1. Vertical zeros versus horizontal curvature

At the planted minimiser the full $dr\times dr$ factor Hessian has exactly $r(r-1)/2 = 1$ zero
eigenvalue (the fibre direction $U\Omega$); the effective Hessian is that spectrum with the zero
removed.
"""),
        code(r"""
full = np.linalg.eigvalsh(factor_hessian(prob, U_star))
eff = np.linalg.eigvalsh(effective_hessian(prob, U_star))
print("factor Hessian eigenvalues:   ", np.round(full, 4))
print("effective Hessian eigenvalues:", np.round(eff, 4))
"""),
        md(r"""
## 2. Empirical curvature converges to the population formula

For Gaussian sensing the population effective Hessian at $Q^\star = U^\star U^{\star\top}$ is the form
$2\|\zeta\|_F^2 + \operatorname{tr}(\zeta)^2$, $\zeta = \xi U^{\star\top} + U^\star\xi^\top$, with a closed-form
spectrum in terms of the eigenvalues $g_j$ of $U^{\star\top}U^\star$ ($4g_j$, $4(g_i+g_j)$ and the
eigenvalues of $8\operatorname{diag}(g) + 4\sqrt g\sqrt g^\top$). The empirical effective Hessian
approaches it as $m$ grows.
"""),
        code(r"""
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
"""),
        md(r"""
## 3. The flow's rate is $\lambda_{\min}$

Start gradient flow close to $U^\star$ and fit the exponential decay of
$\|Q(t) - Q^\star\|_F$; compare with $\lambda_{\min}(H_{\rm eff})$, computed matrix-free by
`effective_spectrum` (Lanczos on the horizontal space, with an a-posteriori error bound).
"""),
        code(r"""
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
"""),
        md(r"""
## 4. Gradient descent contracts by $\max_i |1 - \eta\lambda_i|$ per step

For $\eta < 2/\lambda_{\max}$ the error of gradient descent shrinks each step by the factor
$\rho(\eta) = \max_i |1-\eta\lambda_i|$, smallest at $\eta^\star = 2/(\lambda_{\min}+\lambda_{\max})$;
beyond $2/\lambda_{\max}$ it diverges.
"""),
        code(r"""
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
"""),
    ]


# =============================================================================== sensing
@notebook("sensing_phase_transition")
def _sensing():
    return [
        md(r"""
# Gaussian rank-one sensing and its phase transition

We observe $y_i = x_i^\top Q^\star x_i$ for Gaussian $x_i \sim N(0, I_d)$, $i = 1..m$, with a
planted rank-$r$ PSD $Q^\star = U^\star U^{\star\top}$, and fit a positive quadratic network by
minimising (quadnet theory §4)
$$L(U) = \frac{1}{2m}\sum_{i=1}^m \big(\|U^\top x_i\|^2 - y_i\big)^2 .$$
Each measurement is the rank-one matrix $A_i = x_ix_i^\top$, but no $d\times d$ matrix per
sample is ever formed: one gradient costs $O(mdr)$.

The degrees of freedom are $n_h = dr - r(r-1)/2 = \dim M_r^+$: no method can recover $Q^\star$
from fewer samples. How many more does it take in practice, and how does that compare with the
paper's (deliberately conservative) sufficient sample size?
"""),
        code(r"""
import tempfile
import warnings
import numpy as np
import matplotlib.pyplot as plt
import quadnet
from quadnet import GaussianSensing, population_normal_operator
from quadnet import recover, sufficient_sample_size

plt.rcParams["figure.dpi"] = 80
d, r = 10, 2
n_h = d * r - r * (r - 1) // 2
prob = GaussianSensing.random(d, r, 3 * n_h, seed=0)
relerr = lambda Q: np.linalg.norm(Q - prob.Q_star) / np.linalg.norm(prob.Q_star)
print(f"d = {d}, r = {r}: n_h = {n_h} degrees of freedom, m = {prob.m} measurements")
"""),
        md(r"""
## The normal operator concentrates

The least-squares geometry is governed by $T_m(H) = \frac1m\sum_i \langle A_i, H\rangle A_i$,
whose expectation is $T(H) = 2H + \operatorname{tr}(H)\,I$. Its fluctuation around $T$ shrinks
like $1/\sqrt m$, which drives every guarantee of the paper (it needs it uniformly over all
symmetric $H$, hence many samples).
"""),
        code(r"""
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
"""),
        md(r"""
## Spectral start, then descent

The moment matrix $M = \frac1m\sum_i y_i x_ix_i^\top$ estimates $T(Q^\star) = 2Q^\star +
\operatorname{tr}(Q^\star) I$; inverting $T$ and keeping the top-$r$ eigenpairs gives the spectral
start $U_0$. From there L-BFGS and gradient descent converge linearly to $Q^\star$ (the
local rate is set by the effective Hessian, see `curvature_and_rates`).
"""),
        code(r"""
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
"""),
        md(r"""
## The phase transition, as a resumable sweep

Success ($\|Q - Q^\star\|_F \le 10^{-6}\|Q^\star\|_F$) against $m/n_h$ over independent trials
is a parameter sweep: `quadnet.harness.run_sweep("recovery", store)` cuts it into cells, runs them (here in
this process; `workers=2`, `dask_local=2` or a Dask `scheduler` address for more), writes each
finished cell to the store atomically and collects `results.csv`. The same command line is
`quadnet sweep recovery --quick --store DIR`; rerunning it resumes a killed sweep.
"""),
        code(r"""
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
"""),
        md(r"""
The quick grid has only 5 trials per point, so the curve is noisy. A failure well above the
threshold is a trial where L-BFGS stopped at a stationary point that does not interpolate
(relative error of order one, not a slightly-too-large one); `recover(..., restarts=k)` restarts
from small random starts in that case. The full grid (`quadnet sweep recovery`) uses 20 trials,
d = 10 and 20, r = 1, 2, 3 and both initialisations.
"""),
        md(r"""
## The sufficient sample size of the guarantee

The paper's guarantee chain (full-space concentration $\Rightarrow$ spectral start in the basin
$\Rightarrow$ linear convergence) yields an explicit sample size that scales like $r^2 d^8$.
`sufficient_sample_size` prints quadnet's own chain of the same shape, whose bound scales like
$r\kappa^2 d^6/p$ (linear in $r$; quadnet theory §4.7). Experiments succeed with a few times $n_h$.
"""),
        code(r"""
for dd, rr in ((10, 1), (10, 2), (20, 2)):
    nh = dd * rr - rr * (rr - 1) // 2
    bound = sufficient_sample_size(dd, rr)
    print(f"d = {dd:2d}, r = {rr}: n_h = {nh:3d}, sufficient m = {bound:.2e} "
          f"= {bound / nh:.1e} x n_h  (experiments: ~2-3 x n_h)")
"""),
    ]


# =============================================================================== commuting
@notebook("implicit_bias_commuting")
def _commuting():
    return [
        md(r"""
# Implicit bias when the measurements commute

If all measurement matrices share one eigenbasis, $A_i = V\operatorname{diag}(a_i)V^\top$, and the
start is in their algebra (e.g. $Q_0 = \varepsilon I$), the factor gradient flow never leaves it:
$Q(t) = V\operatorname{diag}(q(t))V^\top$ with
$$\dot q = -4\,\nabla\tilde\ell(q)\odot q \quad\Longleftrightarrow\quad
\tfrac{d}{dt}\log q = -4\nabla\tilde\ell(q),$$
a **mirror flow** for the entropy $\varphi(q) = \sum_j q_j\log q_j - q_j$ (quadnet theory §5). Its limit
is therefore a **Bregman projection** of the start onto the interpolating set
$\{q \ge 0: Aq = y\}$, and as $\varepsilon \to 0$ it selects the minimum-trace interpolant.
We check each statement numerically.
"""),
        code(r"""
import numpy as np
import matplotlib.pyplot as plt
import quadnet
from quadnet.commuting import CommutingSensing, random_commuting_instance
from quadnet.harness.cells import selection_cell
from quadnet.commuting import bregman_projection, min_trace_solution

plt.rcParams["figure.dpi"] = 80
rng = np.random.default_rng(0)
d, m = 8, 3
inst = random_commuting_instance(0, d=d, m=m)      # spectra a_i, y = A q* with q* > 0
A, y = inst["spectra"], inst["y"]
V = quadnet.geometry.random_orthogonal(d, rng)              # the common eigenbasis
loss = CommutingSensing(V, A, y)
print(f"{m} commuting measurements of {d} x {d} PSD predictors")
"""),
        md(r"""
## 1. The factor flow stays in the algebra and is the mirror flow

Run the *factor* gradient flow $\dot U = -2SU$ from $U_0 = \sqrt\varepsilon\, I$ and the
*spectral* mirror flow from $q_0 = \varepsilon\mathbf 1$; compare.
"""),
        code(r"""
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
"""),
        md(r"""
## 2. The limit is the Bregman projection of the start

$q_\infty = \arg\min\{D(q, q_0) : Aq = y,\ q\ge 0\}$ with
$D(q,q_0) = \sum_j q_j\log(q_j/q_{0,j}) - q_j + q_{0,j}$, computed by a Newton method on the
dual (`quadnet.bregman.bregman_projection`).
"""),
        code(r"""
for q0 in (eps * np.ones(d), rng.uniform(0.01, 1.0, d)):
    lim = loss.mirror_flow(q0, np.array([0.0, 1e4])).q[-1]
    proj = loss.selection_limit(q0)
    print(f"start in [{q0.min():.2f}, {q0.max():.2f}]: ||flow limit - Bregman projection|| / ||q|| = "
          f"{np.linalg.norm(lim - proj.q) / np.linalg.norm(proj.q):.1e}")
"""),
        md(r"""
## 3. Small initialisation selects the minimum-trace interpolant

With $q_0 = \varepsilon\mathbf 1$, $D(q, q_0) = H(q) + \log(1/\varepsilon)\,\operatorname{tr} q +
\text{const}$, so as $\varepsilon\to0$ the trace term wins: the limit tends to
$\arg\min\{\operatorname{tr} q : Aq = y, q\ge0\}$ (an LP), with the trace gap bounded by
$(H(q_{\rm mt}) - H(q_\varepsilon))/\log(1/\varepsilon)$. `selection_cell` is the unit of the
`selection` sweep (`quadnet sweep selection --quick --store DIR`).
"""),
        code(r"""
Ls = [1, 2, 4, 8, 16, 32, 64]
cells = [selection_cell(None, 0, d=d, m=m, log_inv_eps=L) for L in Ls]
fig, ax = plt.subplots(figsize=(5.5, 3.8))
ax.semilogy(Ls, [max(c["trace_gap"], 1e-17) for c in cells], "o-", label="tr q_eps - min trace")
ax.semilogy(Ls, [max(c["entropy_bound"], 1e-17) for c in cells], "s--", label="entropy bound")
ax.semilogy(Ls, [max(c["dist"], 1e-17) for c in cells], "^-", label="||q_eps - q_mt|| / ||q_mt||")
ax.set_xlabel("log(1/eps)"); ax.set_ylabel("gap"); ax.legend(fontsize=8)
plt.show()
print("minimum trace (LP):", cells[0]["min_trace"], "; face dimension:", cells[0]["face_dimension"])
"""),
        md(r"""
## 4. Finite steps: gradient descent is off by $O(\eta)$

Factor gradient descent in these coordinates is $q_{k+1} = (1 - 2\eta g_k)^2\odot q_k$. Its
limit differs from the flow's Bregman projection by a term proportional to the step.
"""),
        code(r"""
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
"""),
    ]


# ===================================================================== curvature of the quotient
@notebook("curvature_of_the_quotient")
def _curvature_of_the_quotient():
    return [
        md(r"""
# Curvature of the quotient

The map $U \mapsto UU^\top$ from flat factors $\mathbb{R}^{d\times r}$ to the rank-$r$ PSD matrices
$\mathcal{M}_r^+$ is a Riemannian submersion (quadnet theory §1). O'Neill (1966) says what that does
to curvature: a flat total space gives a quotient whose sectional curvature is **three times the
squared norm of O'Neill's tensor** $A_\xi\eta = \tfrac12[\xi,\eta]^{\mathrm v}$ of horizontal lifts, that is
$\tfrac34\|[\xi,\eta]^{\mathrm v}\|^2$ over the squared area of the plane; below, $U\Omega = A_\xi\eta$. For horizontal $\xi, \eta$ at $U$,
$$K(\xi,\eta) = \frac{3\,\|U\Omega\|_F^2}{\|\xi\|^2\|\eta\|^2 - \langle\xi,\eta\rangle^2},\qquad
(U^\top U)\Omega + \Omega(U^\top U) = \xi^\top\eta - \eta^\top\xi .$$
The derivation, the Ricci and scalar curvature and the bounds are in `docs/riemannian.md`.
This notebook looks at four pictures of that curvature:

1. $K$ over random planes against $\sigma_{\min}(U)$, with the bound $3/(\lambda_{r-1}+\lambda_r)$;
2. geodesic triangles and the Toponogov comparison (nonnegative curvature);
3. holonomy of parallel transport around a small loop against $K\times$ area;
4. a barycentre of three rank-one points in $d = 2$, drawn on the PSD cone.
"""),
        code(r"""
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
"""),
        md(r"""
## 1. Curvature against the distance to the rank boundary

In the singular basis, $K = 3\sum_{a<b} C_{ab}^2/(\lambda_a+\lambda_b)\,/\,|\xi\wedge\eta|^2$ with
$C = \xi^\top\eta - \eta^\top\xi$, and $\sum_{a<b}C_{ab}^2 \le 1$ for an orthonormal pair. So
$$0 \le K \le \frac{3}{\lambda_{r-1} + \lambda_r},$$
attained for every $d \ge r$ (`curvature_bounds(U).extremal_plane`). The denominator involves the **two** smallest eigenvalues of $Q$: when only
$\sigma_r \to 0$ (approaching rank $r-1$) the curvature stays bounded by $3/\lambda_{r-1}$; it blows up
when $\sigma_{r-1}$ and $\sigma_r$ vanish together. Below: $d = 5$, $r = 3$, 30 random planes per point.
"""),
        code(r"""
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
"""),
        md(r"""
## 2. Geodesic triangles: Toponogov comparison

Nonnegative curvature makes triangles *fatter* than their Euclidean comparison triangles. In the
form of Alexandrov spaces (the Wasserstein space is one, Ambrosio, Gigli & Savaré 2008, §7.3), the
distance from a vertex $A$ to the midpoint $m$ of the opposite side satisfies

$$\operatorname{dist}(A,m)^2 \ge \tfrac12\operatorname{dist}(A,B)^2 + \tfrac12\operatorname{dist}(A,C)^2 - \tfrac14\operatorname{dist}(B,C)^2,$$

with equality in the plane. For small triangles the angle sum exceeds $\pi$ by about $K\times$ area
(Gauss–Bonnet). Geodesics are straight in factor space once the endpoints are aligned: the side
from $B$ to $C$ is $B + t(C R - B)$, $R$ = `align(C, B)`.
"""),
        code(r"""
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
"""),
        md(r"""
## 3. Parallel transport and holonomy

Along the geodesic $U + s\xi$ the lift $V(s)$ of a parallel field is horizontal with vertical
derivative: $V' = -U(s)\Omega$, $G(s)\Omega + \Omega G(s) = \xi^\top V - V^\top\xi$. quadnet integrates it
with an order-8 Runge–Kutta method (DOP853). Transport around a small geodesic square of side
$\varepsilon$ turns a vector by the angle $K\cdot A$, $A = \varepsilon^2$: the relative error is
$O(\varepsilon)$ against $K$ at the corner and $O(\varepsilon^2)$ against $K$ at the centre of the loop.
pymanopt's projection transport $P_h(U+t\xi)v$ agrees with parallel transport only to $O(t^2)$.
"""),
        code(r"""
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
"""),
        md(r"""
## 4. A barycentre of three rank-one points, on the cone

A symmetric $2\times2$ matrix $\begin{pmatrix} a & b\\ b & c\end{pmatrix}$ is drawn at
$(x, y, z) = ((a-c)/2,\ b,\ (a+c)/2)$: the PSD matrices fill the solid round cone
$z \ge \sqrt{x^2+y^2}$ and the rank-one ones, $\mathcal{M}_1^+$, are its surface. `bw_barycenter`
minimises $\sum_i w_i\operatorname{dist}(Q, Q_i)^2$ **within** $\mathcal{M}_r^+$ by the fixed-point iteration
$U \leftarrow \sum_i w_i U_i\,\mathrm{align}(U_i, U)$ (Álvarez-Esteban et al. 2016 in factor form), so
the barycentre of rank-one points is a rank-one point on the surface, and its geodesics to the
three points run along the surface. Is it also the barycentre among *all* PSD matrices? Run the
fixed point in matrix form, $S \leftarrow S^{-1/2}\bigl(\sum_i w_i (S^{1/2}Q_iS^{1/2})^{1/2}\bigr)^2 S^{-1/2}$,
from the identity (inside the cone): its iterates (red) run to the same point on the surface.
"""),
        code(r"""
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
cands = [bw_barycenter(Us, w, init=U0) for U0 in Us]
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
"""),
    ]


# ================================================================== verify your own claim
_MP_CHECKS = r'''"""marchenko-pastur: the spectrum of a sample covariance matrix (a check of one's own).

Marchenko & Pastur (1967): for X (m x d) with i.i.d. N(0, 1) entries and d/m -> gamma in
(0, 1], the eigenvalues of S = X^T X / m are distributed, in the limit, with the density

    p(x) = sqrt((b - x)(x - a)) / (2 pi gamma x)  on  [a, b],  a, b = (1 -+ sqrt(gamma))^2.

Geman (1980): the largest eigenvalue tends to the upper edge b = (1 + sqrt(gamma))^2 almost
surely. Johnstone (2001): it fluctuates around it on the Tracy-Widom scale sigma ~ m^(-2/3).
"""

import math
from pathlib import Path

import numpy as np
from scipy import integrate

from quadnet.harness import (CheckResult, Sweep, figure, read_results, register,
                             register_sweep, run_sweep)

NAME = "marchenko-pastur"
CLAIM = ("the spectrum of X^T X / m follows the Marchenko-Pastur law and its largest "
         "eigenvalue tends to (1 + sqrt(d/m))^2")
MP = 'Marchenko & Pastur (1967) "Distribution of eigenvalues for some sets of random matrices"'
GEMAN = 'Geman (1980) "A limit theorem for the norm of random matrices"'
JOHNSTONE = ('Johnstone (2001) "On the distribution of the largest eigenvalue in principal '
             'components analysis"')
GAMMA = 0.25  # d / m


def sample_covariance(X):
    """S = X^T X / m for the m x d data matrix X."""
    return X.T @ X / X.shape[0]


def mp_edges(gamma):
    return (1 - math.sqrt(gamma)) ** 2, (1 + math.sqrt(gamma)) ** 2


def mp_cdf(x, gamma):
    """The Marchenko-Pastur distribution function, by quadrature in x = a + (b - a) sin^2 t
    (the substitution removes the square-root endpoints, so the integrand is smooth)."""
    a, b = mp_edges(gamma)

    def density_t(t):
        s, c = math.sin(t), math.cos(t)
        return (b - a) ** 2 * s * s * c * c / (math.pi * gamma * (a + (b - a) * s * s))

    def one(v):
        if v <= a:
            return 0.0
        if v >= b:
            return 1.0
        return integrate.quad(density_t, 0.0, math.asin(math.sqrt((v - a) / (b - a))))[0]

    return np.array([one(v) for v in np.atleast_1d(x)])


def tracy_widom_scale(m, d):
    """Johnstone's (2001) centring mu and scale sigma of the largest eigenvalue of X^T X / m."""
    s = math.sqrt(m - 1) + math.sqrt(d)
    return s * s / m, s * (1 / math.sqrt(m - 1) + 1 / math.sqrt(d)) ** (1 / 3) / m


def mp_edge_cell(d, gamma, trial, seed):
    """One cell of the sweep: the largest eigenvalue of one d x d sample covariance."""
    m = round(d / gamma)
    X = np.random.default_rng(seed).standard_normal((m, d))
    lam = np.linalg.eigvalsh(sample_covariance(X))[-1]
    edge = mp_edges(d / m)[1]
    return {"m": m, "lambda_max": float(lam), "rel_error": abs(lam / edge - 1)}


register_sweep(Sweep(
    "mp-edge", "largest eigenvalue of X^T X / m against the Marchenko-Pastur edge",
    cell=mp_edge_cell,
    quick={"d": (25, 50, 100, 200), "gamma": (GAMMA,), "trial": tuple(range(16))},
    full={"d": (25, 50, 100, 200, 400, 800), "gamma": (GAMMA,), "trial": tuple(range(32))}))


@figure("marchenko-pastur")
def draw(data):
    import matplotlib.pyplot as plt

    a, b = mp_edges(data["gamma"])
    x = np.linspace(a, b, 400)[1:-1]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(6.8, 2.5))
    ax1.hist(data["eigenvalues"], bins=40, density=True, color="0.75", label="eigenvalues")
    ax1.plot(x, np.sqrt((b - x) * (x - a)) / (2 * np.pi * data["gamma"] * x),
             label="Marchenko-Pastur")
    ax1.axvline(b, color="k", ls=":", lw=0.8)
    ax1.set_xlabel(f"eigenvalue of $X^T X/m$ (d = {data['d']}, m = {data['m']})")
    ax1.legend()
    d = np.asarray(data["sweep_d"], float)
    ax2.loglog(d, data["sweep_mean_rel_error"], "o-", label="mean over trials")
    ax2.loglog(d, data["sweep_mean_rel_error"][0] * (d / d[0]) ** (-2 / 3), "k--", lw=0.8,
               label="slope -2/3")
    ax2.set_xlabel("d (m = d / %g)" % data["gamma"])
    ax2.set_ylabel(r"$|\lambda_{max} / b - 1|$")
    ax2.legend()
    fig.tight_layout()
    return fig


@register(NAME, CLAIM)
def run(ctx):
    res = CheckResult(NAME, CLAIM)
    d = 200 if ctx.quick else 800
    m = round(d / GAMMA)
    X = ctx.rng("X").standard_normal((m, d))
    eig = np.linalg.eigvalsh(sample_covariance(X))
    # Kolmogorov distance between the empirical spectrum and the law (both one-sided gaps)
    F = mp_cdf(eig, d / m)
    k = np.arange(1, d + 1)
    ks = max(np.max(k / d - F), np.max(F - (k - 1) / d))
    # finite-size tolerances of this tutorial (the theorem is a limit): seeds 0-2 measured
    # 0.011-0.013 at d = 200 and 0.004 at d = 800
    res.add(f"Kolmogorov distance, spectrum vs Marchenko-Pastur law (d = {d}, m = {m})", ks,
            0.05 if ctx.quick else 0.02, kind="theorem", source=MP, paper="-> 0")
    a, b = mp_edges(d / m)
    mu, sigma = tracy_widom_scale(m, d)
    # six Tracy-Widom scales: the Tracy-Widom law puts less than 1e-6 of its mass beyond
    res.add(f"largest eigenvalue vs (1 + sqrt(d/m))^2, relative (d = {d})", abs(eig[-1] / b - 1),
            6 * sigma / b, kind="theorem", source=GEMAN, paper="-> 0")
    store = Path("sweeps") / f"mp-edge-{'quick' if ctx.quick else 'full'}-seed{ctx.seed}"
    rep = run_sweep("mp-edge", store, quick=ctx.quick, seed=ctx.seed, workers=0,
                    progress=ctx.show_progress)
    rows = read_results(store)
    ds = sorted({r["d"] for r in rows})
    mean = [float(np.mean([r["rel_error"] for r in rows if r["d"] == v])) for v in ds]
    slope = np.polyfit(np.log(ds), np.log(mean), 1)[0]
    res.report(f"slope of log mean |lambda_max / b - 1| against log d, d = {ds[0]}..{ds[-1]}",
               slope, paper="-2/3", source=JOHNSTONE)
    res.metrics.update(sweep_cells=rep.n_cells, sweep_cells_resumed=rep.skipped)
    ctx.draw(res, "marchenko-pastur", {"eigenvalues": eig, "gamma": d / m, "d": d, "m": m,
                                        "sweep_d": ds, "sweep_mean_rel_error": mean})
    return res
'''


@notebook("verify_your_own_claim")
def _own_claim():
    return [
        md(r"""
# Verify your own claim: the Marchenko–Pastur law

quadnet's harness (`quadnet verify`) is not only for the claims that ship with quadnet. A check
of your own is a Python file that uses the public API of `quadnet.harness` — `register`,
`CheckResult`, `CheckContext`, `figure`, `register_sweep` — and runs with
`quadnet verify --checks FILE`, with everything the built-in checks have: the results table,
the JSON, Markdown and LaTeX reports, figures redrawn byte for byte from a report, resumable
sweeps, seeded streams, and `quadnet compare` between two reports.

This tutorial verifies a classical result that quadnet does not ship. Let $X$ be an
$m\times d$ matrix of independent $N(0,1)$ entries and $S = X^\top X/m$ its sample covariance.
As $m, d\to\infty$ with $d/m\to\gamma\in(0,1]$:

* **Marchenko & Pastur (1967)**, "Distribution of eigenvalues for some sets of random
  matrices": the eigenvalues of $S$ are distributed with the density
  $$p_\gamma(x) = \frac{\sqrt{(b-x)(x-a)}}{2\pi\gamma x}\ \text{ on } [a,b],\qquad
  a, b = (1\mp\sqrt\gamma)^2;$$
* **Geman (1980)**, "A limit theorem for the norm of random matrices": the largest eigenvalue
  tends to the edge $b = (1+\sqrt{d/m})^2$ almost surely;
* **Johnstone (2001)**, "On the distribution of the largest eigenvalue in principal components
  analysis": it fluctuates around it on the Tracy–Widom scale $\sigma \propto m^{-2/3}$, so
  $|\lambda_{\max}/b - 1|$ shrinks like $d^{-2/3}$ at fixed $\gamma$.

The check has two theorem rows with tolerances, one measurement without a tolerance, a
sweep, and a figure drawn from the data stored in the report. Everything runs in a scratch
folder.
"""),
        code(r"""
import contextlib, io, os, shlex, tempfile
from pathlib import Path
from IPython.display import Image, display

import quadnet.harness as qh
from quadnet.harness.cli import main as quadnet_main

os.chdir(tempfile.mkdtemp(prefix="quadnet-own-claim-"))   # a scratch folder

def sh(command, cwd="."):
    # run a `quadnet ...` command line as typed in a shell (here in this kernel, without
    # starting Python again); show what it prints and its exit status
    assert command.startswith("quadnet ")
    err, here = io.StringIO(), os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stderr(err):
            rc = quadnet_main(shlex.split(command)[1:])
    finally:
        os.chdir(here)
    if rc not in (0, 1):
        print(err.getvalue())
    print(f"[exit status {rc}]")
"""),
        md(r"""
## 1. The check: one file

`quadnet new-check NAME` writes a commented template of such a file (and a pytest file for
it); here is the finished one. The parts:

* `@register(NAME, CLAIM)` makes `run(ctx)` the check `marchenko-pastur`;
* every random draw comes from `ctx.rng(...)`, so the same `--seed` gives the same bits;
* `res.add(claim, measured, tolerance, kind="theorem", source=...)` is one row of the table:
  PASS or FAIL against the tolerance, with the source cited by name; `res.report(...)` is a
  measurement without a tolerance (REPORTED);
* `register_sweep(Sweep(..., cell=mp_edge_cell, ...))` declares a parameter grid of pure
  cells; `run_sweep` runs the unfinished cells into a store folder and **resumes** from it;
* `@figure(STEM)` registers a drawer that gets only JSON data: `ctx.draw(res, STEM, data)`
  stores the data in the report and draws it, so `quadnet figures --from report.json` redraws
  the same bytes later without recomputing anything.
"""),
        code("%%writefile mp_checks.py\n" + _MP_CHECKS),
        md(r"""
## 2. Run it from Python

`load_checks` imports the file (as the module `mp_checks`) and registers its checks next to
the built-in ones; `run_check` runs one in a `CheckContext` (seed, quick mode, where figures
go).
"""),
        code(r"""
print(qh.load_checks("mp_checks.py"))
res = qh.run_check("marchenko-pastur", qh.CheckContext(seed=0, quick=True, figures_dir=Path("figs")))
for row in res.rows:
    tol = "-" if row.tolerance is None else f"{row.relation} {row.tolerance:.3g}"
    print(f"{row.status:9} {row.measured:10.4g}  {tol:>9}  {row.claim}")
print(res.status, res.metrics, res.origin["kind"])
display(Image("figs/marchenko-pastur.png"))
"""),
        md(r"""
Both theorem rows pass with room to spare at $d = 200$; the slope of the sweep is close to
Johnstone's $-2/3$ (it is REPORTED: a trend from 16 trials per size is too noisy for a
tolerance). Run the check again: the sweep's 64 cells are already in its store, so they are
read back, not recomputed — the same mechanism resumes a long sweep that was interrupted.
"""),
        code(r"""
again = qh.run_check("marchenko-pastur", qh.CheckContext(seed=0, quick=True))
print(again.metrics)
print("same numbers:", [r.measured for r in again.rows] == [r.measured for r in res.rows])
"""),
        md(r"""
## 3. The command line, a report, and a figure redrawn from it

The same check from a shell, for two seeds, each with a JSON report. The report follows the
versioned schema `quadnet-report/1` (see the report format page) and records where the
check came from, so `quadnet figures --from` finds the drawer again (it reloads the file if
it is unchanged; otherwise pass `--checks mp_checks.py`).
"""),
        code(r"""
sh("quadnet verify --checks mp_checks.py marchenko-pastur --quick --json seed0.json --figures figs0")
"""),
        code(r"""
sh("quadnet verify --checks mp_checks.py marchenko-pastur --quick --seed 1 --json seed1.json --figures figs1")
sh("quadnet figures --from seed0.json --out redrawn")
print("redrawn byte for byte:", all(
    (Path("redrawn") / f).read_bytes() == (Path("figs0") / f).read_bytes()
    for f in ("marchenko-pastur.png", "marchenko-pastur.pdf")))
"""),
        md(r"""
## 4. Compare two runs

`quadnet compare OLD.json NEW.json` matches rows by (check, claim) and lists status changes,
rows that crossed their tolerance, and measured values that moved by more than `--factor`
(default 10; values within `--floor` = 1e-12 of zero count as 1e-12). Its exit status is 0
when nothing regressed, 1 when something did, 2 for a file that is not a quadnet report — so
a paper's CI can run it against a committed baseline. Two seeds: the numbers differ, nothing
moves by an order of magnitude, nothing regressed.
"""),
        code(r"""
sh("quadnet compare seed0.json seed1.json")
"""),
        md(r"""
Now a deliberately broken version, as a colleague's checkout might have it: the sample
covariance divided by $d$ instead of $m$ (`X.shape[1]` for `X.shape[0]`), which scales the
spectrum by $m/d = 4$. It lives in its own folder (so its sweep gets its own store: a store is
keyed by the sweep's name, grid and seed, not by the code — after changing a cell function,
start a new store). `compare` names the rows that regressed and exits with status 1.
"""),
        code(r"""
Path("broken").mkdir(exist_ok=True)
code = Path("mp_checks.py").read_text()
assert code.count("X.shape[0]") == 1
Path("broken/mp_checks.py").write_text(code.replace("X.shape[0]", "X.shape[1]"))
qh.unload_checks("mp_checks.py")   # this kernel forgets the good version (a shell would not need this)
sh("quadnet verify --checks mp_checks.py marchenko-pastur --quick --json broken.json --figures ''", cwd="broken")
sh("quadnet compare seed0.json broken/broken.json")
"""),
        md(r"""
The same comparison as Markdown, e.g. for a comment on a pull request:
"""),
        code(r"""
sh("quadnet compare seed0.json broken/broken.json --format markdown")
"""),
        md(r"""
## Where to go from here

* `quadnet new-check my-claim` writes the template of such a check and a pytest file that runs
  it in quick mode (through the API and the command line) and redraws its figure.
* `quadnet verify --list` shows every check with where it comes from (built-in, a file, a
  module, an installed package).
* A package of checks declares them in the `quadnet.checks` entry-point group of its
  `pyproject.toml` (`[project.entry-points."quadnet.checks"]`, `name = "mypkg.checks"`);
  once it is installed, `quadnet verify` finds them without `--checks`.
* `quadnet sweep --checks mp_checks.py mp-edge --workers 2` runs the sweep alone, on local
  processes or Dask.
"""),
    ]


# =============================================================================== driver
def build(name: str, execute: bool = True, timeout: int = 120) -> Path:
    cells = [new_markdown_cell(src) if kind == "md" else new_code_cell(src)
             for kind, src in NOTEBOOKS[name]]
    nb = new_notebook(cells=cells, metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}})
    path = ROOT / "notebooks" / f"{name}.ipynb"
    if execute:
        from nbclient import NotebookClient

        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
        for cell in nb.cells:  # timestamps would make every rebuild a diff
            cell.metadata.pop("execution", None)
    nbformat.validate(nb)
    path.parent.mkdir(exist_ok=True)
    nbformat.write(nb, path)
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", help=f"notebooks (default: all of {sorted(NOTEBOOKS)})")
    p.add_argument("--no-execute", action="store_true")
    args = p.parse_args(argv)
    for name in args.names or sorted(NOTEBOOKS):
        if name not in NOTEBOOKS:
            print(f"unknown notebook {name!r}; known: {sorted(NOTEBOOKS)}", file=sys.stderr)
            return 2
        print(build(name, execute=not args.no_execute))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
