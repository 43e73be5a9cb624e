# %% [markdown]
# # Lifts, geodesics and gradients on the quotient
#
# The previous unit built the quotient $\mathcal{M}_r^+ \cong \mathcal{F}_{d,r}/O(r)$: fibres
# $\{UR : R \in O(r)\}$, vertical directions $U\Omega$ along them and horizontal directions
# $\xi$ (with $U^\top\xi$ symmetric) across them. This unit does calculus with that picture. A tangent
# vector $\dot Q$ of the predictor manifold is *represented* by a horizontal $d\times r$ matrix, its
# lift; lengths are Frobenius norms of lifts; geodesics are straight lines $U + t\xi$ in factor space;
# and the Riemannian gradient and Hessian of a loss are read off its ordinary factor derivatives.
# Every statement is computed, printed or asserted below, and the last section runs pymanopt's
# solvers on quadnet's `PSDQuotient` beside pymanopt's own `PSDFixedRank`.
#
# **Assumes.** The `quotient_geometry` notebook (fibres, $\mathcal{V}_U$ and $\mathcal{H}_U$, the
# horizontal projection $P_h$, alignment over all of $O(r)$); linear algebra: eigen- and singular
# value decompositions, the Frobenius inner product $\langle A, B\rangle = \operatorname{tr}(A^\top B)$,
# Lyapunov equations $G\Omega + \Omega G = K$; first and second derivatives of a function along a curve.
#
# **Learning outcomes.** After this unit you can
#
# - compute the horizontal lift of a tangent vector $\dot Q$, by hand (a block decomposition and one
#   Lyapunov solve) and with `PSDQuotient.lift`, and explain why it is unique and the shortest
#   preimage;
# - show that the Frobenius inner product of lifts is a well-defined metric on $\mathcal{M}_r^+$ and
#   identify it with the Bures–Wasserstein metric;
# - use $\exp(U, \xi) = U + \xi$ and the logarithm by alignment, and say exactly where a horizontal line
#   stops being a minimising geodesic or leaves the rank-$r$ stratum, and what the code returns there;
# - compute the Bures–Wasserstein distance in three independent ways and say which one is accurate
#   for nearby points;
# - verify a Riemannian gradient and Hessian by Taylor slopes 2 and 3, and read a failed slope;
# - run pymanopt's optimisers on `PSDQuotient` and `PSDFixedRank`, and explain where `PSDFixedRank`'s
#   Riemannian Hessian is wrong and when that matters.
#
# **Theory.** [§0.4 Inner products, norms, cosines](../docs/theory/notation.md#04-inner-products-norms-cosines),
# [§1.3 Vertical and horizontal spaces](../docs/theory/quotient.md#13-vertical-and-horizontal-spaces),
# [§1.4 The horizontal projection is a Lyapunov solve](../docs/theory/quotient.md#14-the-horizontal-projection-is-a-lyapunov-solve),
# [§1.5 Horizontal lifts](../docs/theory/quotient.md#15-horizontal-lifts),
# [§1.6 The quotient metric and Bures–Wasserstein](../docs/theory/quotient.md#16-the-quotient-metric-and-bureswasserstein),
# [§1.7 Geodesics, exp and log](../docs/theory/quotient.md#17-geodesics-exp-and-log),
# [§1.8 Distance](../docs/theory/quotient.md#18-distance),
# [§2.3 The factor Hessian](../docs/theory/dynamics.md#23-the-factor-hessian),
# [§2.4 Factor gradient flow is the Riemannian gradient flow](../docs/theory/dynamics.md#24-factor-gradient-flow-is-the-riemannian-gradient-flow),
# [§3.2 Why it is the curvature of the quotient](../docs/theory/curvature.md#32-why-it-is-the-curvature-of-the-quotient),
# [§3.3 The vertical kernel at critical points](../docs/theory/curvature.md#33-the-vertical-kernel-at-critical-points),
# [§7.2 pymanopt `PSDFixedRank`: the Riemannian Hessian](../docs/theory/pitfalls.md#72-pymanopt-psdfixedrank-the-riemannian-hessian),
# and, for rank-deficient factors, [What still holds at the boundary, and what does not](../docs/stratified.md#what-still-holds-at-the-boundary-and-what-does-not).
# The geometry is that of Journée, Bach, Absil & Sepulchre (2010), "Low-rank optimization on the cone
# of positive semidefinite matrices", with the geodesics of Massart & Absil (2020), "Quotient geometry
# with simple geodesics for the manifold of fixed-rank positive-semidefinite matrices"; the general
# theory of Riemannian quotients is in Absil, Mahony & Sepulchre (2008), *Optimization Algorithms on
# Matrix Manifolds* (ch. 3 and 5) and Boumal (2023), *An Introduction to Optimization on Smooth
# Manifolds*, ch. 9. Full entries are on the [references](../docs/references.md) page.
#
# *Symbols.* As in quadnet theory [§0](../docs/theory/notation.md):
# $U \in \mathbb{R}^{d\times r}$, $Q = UU^\top$, $U'$ and $Q' = U'U'^\top$ a second factor and its predictor,
# $G = U^\top U$, $\Pi_Q = UG^{-1}U^\top$ (the orthogonal projector onto $\operatorname{range} Q$), $\xi, \eta$
# horizontal lifts, $\Omega$ skew, $\Xi$ a symmetric $d\times d$ matrix with $\Xi Q + Q\Xi = \dot Q$,
# $n_h = dr - r(r-1)/2$, $L(U) = \ell(UU^\top)$ the factor lift of a loss $\ell$, $Q_{\mathrm{tgt}}$ the target of
# the test loss $\ell(Q) = \tfrac12\lVert Q - Q_{\mathrm{tgt}}\rVert_F^2$, $\lambda$ eigenvalues of the Riemannian
# Hessian. One letter carries two meanings here: $\eta$ is a second horizontal lift in Sections 2–3 and a step
# size in Exercise 4 (as in quadnet theory §2.5). Letters not listed ($K$, $N$, $Y$, $\mu$, $\tau$, ...) are local to
# the section that introduces them.

# %%
import numpy as np
import matplotlib.pyplot as plt
import scipy.linalg
import pymanopt
import quadnet
from quadnet import FrobeniusLoss, GaussianSensing, PSDQuotient
from quadnet.geometry import (check_gradient, check_hessian, eckart_young_value,
                              horizontal_dimension, random_orthogonal, taylor_slope)
from quadnet.plotting import NOTEBOOK_DPI, draw_psd_cone, psd_cone_coords

rng = np.random.default_rng(0)
plt.rcParams["figure.dpi"] = NOTEBOOK_DPI
EPS = np.finfo(float).eps

d, r = 5, 2
M = PSDQuotient(d, r, seed=0)
print(f"d = {d}, r = {r}: n_h = dr - r(r-1)/2 = {d * r - r * (r - 1) // 2}, "
      f"M.dim = {M.dim}, horizontal_dimension(d, r) = {horizontal_dimension(d, r)}")

# %% [markdown]
# ## 1. Horizontal lifts
#
# A curve $U(t)$ of factors moves its predictor with velocity
# $\dot Q = D\pi(U)[\xi] = \xi U^\top + U\xi^\top$, $\xi = \dot U(0)$. Conversely, given a tangent vector
# $\dot Q$ at $Q = UU^\top$, which $\xi$ produce it? Split $\xi$ into its part in the column space of
# $U$ and the rest, $\xi = UK + N$ with $K \in \mathbb{R}^{r\times r}$ and $U^\top N = 0$. Then
#
# $$
# \xi U^\top + U\xi^\top = U(K + K^\top)U^\top + NU^\top + UN^\top ,
# $$
#
# and comparing the blocks of both sides under $\Pi_Q$ and $I - \Pi_Q$:
#
# * range–range: $U(K + K^\top)U^\top = \Pi_Q\dot Q\Pi_Q$, i.e. $K + K^\top = Y := G^{-1}U^\top\dot Q\,UG^{-1}$;
# * off-range–range: $NU^\top = (I-\Pi_Q)\dot Q\Pi_Q$, i.e. $N = (I-\Pi_Q)\dot Q\,UG^{-1}$;
# * off-range–off-range: $0 = (I-\Pi_Q)\dot Q(I-\Pi_Q)$. This is not a condition on $\xi$ but on $\dot Q$: it is
#   exactly the statement that $\dot Q$ is tangent to $\mathcal{M}_r^+$
#   ([§1.3](../docs/theory/quotient.md#13-vertical-and-horizontal-spaces)).
#
# Only the symmetric part of $K$ is fixed, so write $K = Y/2 + \Omega$ with $\Omega$ skew: the solutions form
# an affine space $\xi_0 + \{U\Omega\}$, a particular solution plus the vertical space. Asking for $\xi$
# **horizontal**, $U^\top\xi = GK$ symmetric, picks one $\Omega$: $G(Y/2 + \Omega) = (Y/2 - \Omega)G$, that is
#
# $$
# G\Omega + \Omega G = \tfrac12 (YG - GY),
# $$
#
# a Lyapunov equation with skew right-hand side and positive definite $G$, so it has exactly one (skew)
# solution ([§1.4](../docs/theory/quotient.md#14-the-horizontal-projection-is-a-lyapunov-solve)). The
# **horizontal lift** $\xi = U(Y/2 + \Omega) + N$ is therefore unique: any other solution of
# $\xi U^\top + U\xi^\top = \dot Q$ differs from it by a vertical $U\Omega'$
# ([§1.5](../docs/theory/quotient.md#15-horizontal-lifts)). We build it from these three formulas with
# scipy and compare with `PSDQuotient.lift`.

# %%
U = rng.standard_normal((d, r))
Q = M.predictor(U)
G = U.T @ U
Gi = np.linalg.inv(G)
Pi = U @ Gi @ U.T                                   # projector onto range(Q)
I = np.eye(d)
Qdot = M.differential(U, rng.standard_normal((d, r)))   # a tangent vector: the velocity of a curve
print(f"tangency  ||(I-Pi) Qdot (I-Pi)||_F = {np.linalg.norm((I - Pi) @ Qdot @ (I - Pi)):.1e}")

Y = Gi @ U.T @ Qdot @ U @ Gi                       # K + K^T = Y
N = (I - Pi) @ Qdot @ U @ Gi                        # the off-range part
Om = scipy.linalg.solve_continuous_lyapunov(G, (Y @ G - G @ Y) / 2)   # G Om + Om G = (YG - GY)/2
xi_own = U @ (Y / 2 + Om) + N
xi = M.lift(U, Qdot)

kappa = np.linalg.cond(U)
tol = 1e3 * EPS * kappa ** 2       # Lyapunov solves amplify rounding by <= kappa(U)^2 (§1.4), x O(dr)
res = np.linalg.norm(M.differential(U, xi) - Qdot) / np.linalg.norm(Qdot)
asym = np.linalg.norm(U.T @ xi - xi.T @ U) / (np.linalg.norm(U) * np.linalg.norm(xi))
agree = np.linalg.norm(xi_own - xi) / np.linalg.norm(xi)
print(f"kappa(U) = {kappa:.2f}, tolerance {tol:.1e}")
print(f"residual  ||D pi(U)[xi] - Qdot|| / ||Qdot||  = {res:.1e}")
print(f"horizontality of the lift, ||U^T xi - xi^T U|| = {asym:.1e} (relative)")
print(f"hand-built lift vs PSDQuotient.lift          = {agree:.1e} (relative)")
print(f"Omega skew: ||Omega + Omega^T|| = {np.linalg.norm(Om + Om.T):.1e}")
assert res < tol and asym < tol and agree < tol

# %% [markdown]
# **Uniqueness, measured.** Write $D\pi(U)$ as a $d^2\times dr$ matrix (row-major vectorisation,
# [§0.3](../docs/theory/notation.md#03-vectorisation-is-row-major)), take *some* solution of the linear
# system, e.g. the least-squares one plus an arbitrary kernel vector. It solves the equation just as
# well, but it is not horizontal; its difference from the lift is vertical, and its horizontal part *is*
# the lift.

# %%
Dpi = np.column_stack([M.differential(U, E.reshape(d, r)).ravel() for E in np.eye(d * r)])
kernel = scipy.linalg.null_space(Dpi)               # numerical kernel of D pi(U)
print(f"dim ker D pi(U) = {kernel.shape[1]} = r(r-1)/2 = {r * (r - 1) // 2}")
xi_any = (np.linalg.lstsq(Dpi, Qdot.ravel(), rcond=None)[0]
          + kernel @ rng.standard_normal(kernel.shape[1])).reshape(d, r)
diff = xi_any - xi
print(f"another solution: residual {np.linalg.norm(M.differential(U, xi_any) - Qdot):.1e}, "
      f"asymmetry of U^T xi_any {np.linalg.norm(U.T @ xi_any - xi_any.T @ U):.2f} (not horizontal)")
print(f"xi_any - xi is vertical: ||P_h(xi_any - xi)|| = "
      f"{np.linalg.norm(M.horizontal_projection(U, diff)):.1e} of ||xi_any - xi|| = {np.linalg.norm(diff):.2f}")
print(f"P_h(xi_any) = lift: {np.linalg.norm(M.horizontal_projection(U, xi_any) - xi):.1e}")
assert kernel.shape[1] == r * (r - 1) // 2
assert np.linalg.norm(M.horizontal_projection(U, diff)) < tol * np.linalg.norm(diff)
assert np.linalg.norm(M.horizontal_projection(U, xi_any) - xi) < tol * np.linalg.norm(xi)

# %% [markdown]
# **A symmetric matrix that is not tangent.** For $d > r$ not every symmetric $\dot Q$ is tangent: the
# block $(I-\Pi_Q)\dot Q(I-\Pi_Q)$ cannot be produced by any $\xi$. `lift` then returns the lift of the orthogonal
# projection of $\dot Q$ onto $T_Q\mathcal{M}_r^+$ (that is, it drops that block) and, on request, the size of the
# dropped block; with `exact=True` it refuses.

# %%
H_sym = rng.standard_normal((d, d)); H_sym = H_sym + H_sym.T
xi_H, dropped = M.lift(U, H_sym, return_residual=True)
block = (I - Pi) @ H_sym @ (I - Pi)
print(f"residual reported {dropped:.6f} = ||(I-Pi) H_sym (I-Pi)||_F = {np.linalg.norm(block):.6f}")
print(f"D pi(U)[lift] = H_sym - (I-Pi) H_sym (I-Pi): error {np.linalg.norm(M.differential(U, xi_H) - (H_sym - block)):.1e}")
try:
    M.lift(U, H_sym, exact=True)
except ValueError as err:
    print("exact=True:", err)
assert abs(dropped - np.linalg.norm(block)) < 1e-12 * np.linalg.norm(H_sym)
assert np.linalg.norm(M.differential(U, xi_H) - (H_sym - block)) < tol * np.linalg.norm(H_sym)

# %% [markdown]
# ### Exercise 1: the lift is the shortest preimage
#
# Show that among all $\xi$ with $\xi U^\top + U\xi^\top = \dot Q$, the horizontal lift has the smallest
# Frobenius norm, and that $\lVert \xi + U\Omega\rVert_F^2 = \lVert\xi\rVert_F^2 + \lVert U\Omega\rVert_F^2$
# for every skew $\Omega$. Then check it numerically at $d = 4$, $r = 3$ (three vertical directions):
# starting from a non-horizontal solution $\xi'$, minimise $\lVert\xi' - U\Omega\rVert_F$ over skew $\Omega$
# by linear least squares in a basis of $\mathrm{Skew}(3)$, and compare the minimiser with
# `PSDQuotient.lift`.

# %% [markdown]
# :::{dropdown} Solution
# All solutions are $\xi + U\Omega$, $\Omega$ skew (Section 1). For horizontal $\xi$,
# $\langle\xi, U\Omega\rangle = \operatorname{tr}(\xi^\top U\Omega) = \langle U^\top\xi, \Omega\rangle = 0$, because a
# symmetric matrix ($U^\top\xi$) is Frobenius-orthogonal to a skew one. So
# $\lVert\xi + U\Omega\rVert^2 = \lVert\xi\rVert^2 + \lVert U\Omega\rVert^2 \ge \lVert\xi\rVert^2$, with equality iff
# $U\Omega = 0$, i.e. $\Omega = 0$ at full rank. Minimising $\lVert\xi' - U\Omega\rVert$ over $\Omega$ is the
# orthogonal projection of $\xi'$ onto $\mathcal{H}_U$: its residual is $P_h(\xi') = \xi$. (At a rank-deficient
# $U$ the preimage is no longer unique even among horizontal matrices, and `lift` returns the minimum-norm
# one, [stratified geometry](../docs/stratified.md#the-lift-minimum-norm-with-a-residual).)
# :::

# %% tags=["solution", "hide-cell"]
rng1 = np.random.default_rng(1)
M43 = PSDQuotient(4, 3)
U1 = rng1.standard_normal((4, 3))
Qdot1 = M43.differential(U1, rng1.standard_normal((4, 3)))
lift1 = M43.lift(U1, Qdot1)
skews = []                                   # a basis of Skew(3): E_ab - E_ba, a < b
for a in range(3):
    for b in range(a + 1, 3):
        S_ab = np.zeros((3, 3)); S_ab[a, b], S_ab[b, a] = 1.0, -1.0
        skews.append(S_ab)
A = rng1.standard_normal((3, 3))
xi_prime = lift1 + U1 @ (A - A.T)            # another preimage, not horizontal
design = np.column_stack([(U1 @ S_ab).ravel() for S_ab in skews])
coef = np.linalg.lstsq(design, xi_prime.ravel(), rcond=None)[0]
shortest = xi_prime - (design @ coef).reshape(4, 3)
Om1 = sum(c * S_ab for c, S_ab in zip(coef, skews))
pyth = np.linalg.norm(xi_prime) ** 2 - np.linalg.norm(lift1) ** 2 - np.linalg.norm(U1 @ Om1) ** 2
print(f"||xi'|| = {np.linalg.norm(xi_prime):.4f} > ||lift|| = {np.linalg.norm(lift1):.4f}")
print(f"least-squares minimiser vs lift: {np.linalg.norm(shortest - lift1):.1e}; "
      f"Pythagoras defect {pyth:.1e}")
# the least-squares problem and the Lyapunov solve inside lift both lose ~kappa(U)^2 eps digits;
# kappa(U1) is a few here, so 1e-12 relative leaves two orders of margin
assert np.linalg.norm(shortest - lift1) < 1e-12 * np.linalg.norm(lift1)
assert abs(pyth) < 1e-12 * np.linalg.norm(xi_prime) ** 2
assert np.linalg.norm(M43.differential(U1, xi_prime) - Qdot1) < 1e-12 * np.linalg.norm(Qdot1)

# %% [markdown]
# ## 2. The metric on lifts is Bures–Wasserstein
#
# The quotient metric is $\langle\dot Q_1, \dot Q_2\rangle_Q = \langle \xi_1, \xi_2\rangle$, the Frobenius inner product
# of the horizontal lifts at $U$ ([§1.6](../docs/theory/quotient.md#16-the-quotient-metric-and-bureswasserstein)).
# It must not depend on which point $UR$ of the fibre we lift at. At $UR$ the lift of the same $\dot Q$ is
# $\xi R$: it is horizontal, $(UR)^\top\xi R = R^\top(U^\top\xi)R$ is symmetric, and it produces $\dot Q$,
# $\xi R(UR)^\top + UR(\xi R)^\top = \xi U^\top + U\xi^\top$; by uniqueness it *is* the lift. Then
# $\langle\xi_1R, \xi_2R\rangle = \operatorname{tr}(R^\top\xi_1^\top\xi_2R) = \langle\xi_1, \xi_2\rangle$, for every
# $R \in O(r)$, reflections included.
#
# **In predictor terms.** A horizontal $\xi$ can be written $\xi = \Xi U$ with $\Xi$ symmetric (quadnet theory
# §1.5 gives an explicit $\Xi$). Then $\dot Q = \Xi UU^\top + UU^\top\Xi = \Xi Q + Q\Xi$, and
#
# $$
# \lVert\xi\rVert_F^2 = \operatorname{tr}(U^\top\Xi^2U) = \operatorname{tr}(\Xi Q\Xi)
# = \tfrac12\operatorname{tr}\big(\Xi(\Xi Q + Q\Xi)\big) = \tfrac12\langle\Xi, \dot Q\rangle .
# $$
#
# For positive definite $Q$ ($r = d$), $\Xi$ is *the* solution of the Lyapunov equation $\Xi Q + Q\Xi = \dot Q$, and
# $\lVert\dot Q\rVert_Q^2 = \tfrac12\langle\Xi, \dot Q\rangle$ is the Bures–Wasserstein metric (Bhatia, Jain &
# Lim, 2019, "On the Bures-Wasserstein distance between positive definite matrices"). For $r < d$ the
# equation has many symmetric solutions, but they differ by some $(I-\Pi_Q)\Delta(I-\Pi_Q)$, which is orthogonal to every
# tangent $\dot Q$, so $\tfrac12\langle\Xi, \dot Q\rangle$ is the same for all of them. We check the three
# claims: lifts rotate with the fibre, the metric does not, and it equals the predictor formula (with $\Xi$
# from a least-squares solve of the $d^2\times d^2$ Kronecker system for $r < d$, and from scipy's
# Lyapunov solver for $r = d$).

# %%
Qdot2 = M.differential(U, rng.standard_normal((d, r)))
eta = M.lift(U, Qdot2)
g12 = M.inner_product(U, xi, eta)
for improper in (False, True):
    R = random_orthogonal(r, rng, improper=improper)
    xi_R, eta_R = M.lift(U @ R, Qdot), M.lift(U @ R, Qdot2)
    print(f"det R = {np.linalg.det(R):+.0f}: ||lift at UR - xi R|| = {np.linalg.norm(xi_R - xi @ R):.1e}, "
          f"<xi R, eta R> - <xi, eta> = {M.inner_product(U @ R, xi_R, eta_R) - g12:.1e}")
    assert np.linalg.norm(xi_R - xi @ R) < tol * np.linalg.norm(xi)
    assert abs(M.inner_product(U @ R, xi_R, eta_R) - g12) < tol * np.linalg.norm(xi) * np.linalg.norm(eta)


def lyapunov_lstsq(Q, Qdot):
    """A symmetric Xi with Xi Q + Q Xi = Qdot: min-norm least squares on the row-major Kronecker form."""
    n = Q.shape[0]
    op = np.kron(Q, np.eye(n)) + np.kron(np.eye(n), Q)    # vec(Q Xi + Xi Q), row-major (§0.3)
    return np.linalg.lstsq(op, Qdot.ravel(), rcond=None)[0].reshape(n, n)


Xi1, Xi2 = lyapunov_lstsq(Q, Qdot), lyapunov_lstsq(Q, Qdot2)
print(f"r < d: residual ||Xi Q + Q Xi - Qdot|| = {np.linalg.norm(Xi1 @ Q + Q @ Xi1 - Qdot):.1e}, "
      f"||Xi - Xi^T|| = {np.linalg.norm(Xi1 - Xi1.T):.1e}")
print(f"  <xi, eta> = {g12:.12f}\n  <Xi1, Qdot2>/2 = {0.5 * np.sum(Xi1 * Qdot2):.12f}\n"
      f"  <Xi2, Qdot1>/2 = {0.5 * np.sum(Xi2 * Qdot):.12f}")
assert abs(0.5 * np.sum(Xi1 * Qdot2) - g12) < 1e-10 * abs(g12)   # lstsq: ~eps ||Q|| / (smallest nonzero eigenvalue)
assert abs(0.5 * np.sum(Xi2 * Qdot) - g12) < 1e-10 * abs(g12)
D_sym = rng.standard_normal((d, d)); D_sym = D_sym + D_sym.T
Xi_alt = Xi1 + (I - Pi) @ D_sym @ (I - Pi)               # another symmetric solution
print(f"  another solution Xi1 + (I-Pi) D (I-Pi): residual {np.linalg.norm(Xi_alt @ Q + Q @ Xi_alt - Qdot):.1e}, "
      f"<Xi_alt, Qdot2>/2 = {0.5 * np.sum(Xi_alt * Qdot2):.12f}")
assert np.linalg.norm(Xi_alt @ Q + Q @ Xi_alt - Qdot) < 1e-12 * np.linalg.norm(D_sym) * np.linalg.norm(Q)
assert abs(0.5 * np.sum(Xi_alt * Qdot2) - g12) < 1e-10 * abs(g12)

# r = d: Q positive definite, Xi from scipy's Lyapunov solver (Q Xi + Xi Q = Qdot)
M3 = PSDQuotient(3, 3)
U3 = rng.standard_normal((3, 3))
Q3 = U3 @ U3.T
Qdot3 = M3.differential(U3, rng.standard_normal((3, 3)))
Xi3 = scipy.linalg.solve_continuous_lyapunov(Q3, Qdot3)
bw_metric = 0.5 * np.sum(Xi3 * Qdot3)
lift_norm2 = np.linalg.norm(M3.lift(U3, Qdot3)) ** 2
print(f"r = d = 3: Bures-Wasserstein metric <Xi, Qdot>/2 = {bw_metric:.12f}, ||lift||^2 = {lift_norm2:.12f}")
assert abs(bw_metric - lift_norm2) < 1e3 * EPS * np.linalg.cond(Q3) * lift_norm2

# %% [markdown]
# ## 3. Geodesics, exp and log
#
# The total space $\mathbb{R}^{d\times r}$ is flat, so its geodesics are straight lines. A line that
# starts horizontal stays horizontal: $(U + t\xi)^\top\xi = U^\top\xi + t\,\xi^\top\xi$ is symmetric for all $t$.
# For a Riemannian submersion, a geodesic of the total space that is horizontal at one point is
# horizontal everywhere and projects to a geodesic of the base (O'Neill, 1966; Absil, Mahony & Sepulchre,
# 2008, ch. 3 and 5; Boumal, 2023, ch. 9). The reason in one line: a curve in $\mathcal{M}_r^+$ and its
# horizontal lift have the same length (the metric is Frobenius on lifts), and the horizontal segment is
# locally the shortest of all factor curves, in particular of all lifts. Hence
# ([§1.7](../docs/theory/quotient.md#17-geodesics-exp-and-log); Massart & Absil, 2020)
#
# $$
# \exp(U, \xi) = U + \xi, \qquad Q(t) = (U + t\xi)(U + t\xi)^\top = Q + t\,\dot Q + t^2\,\xi\xi^\top :
# $$
#
# geodesics of $\mathcal{M}_r^+$ are quadratic curves of predictors, travelled at constant speed
# $\lVert\xi\rVert$. The **logarithm** $\log_U(U') = U'R - U$, $R = \operatorname{align}(U', U)$, is the aligned
# difference: horizontal at $U$ because $U^\top U'R$ is symmetric positive semidefinite at the Procrustes
# optimum ([§1.2](../docs/theory/quotient.md#12-alignment-the-closest-point-of-a-fibre)).

# %%
ts = np.linspace(0.0, 2.0, 9)
line_asym = max(np.linalg.norm((U + t * xi).T @ xi - xi.T @ (U + t * xi)) for t in ts)
quad_err = max(np.linalg.norm(M.predictor(M.exp(U, t * xi)) - (Q + t * Qdot + t ** 2 * xi @ xi.T))
               for t in ts)
print(f"exp(U, xi) == U + xi exactly: {np.array_equal(M.exp(U, xi), U + xi)}; "
      f"retraction is the same map: {np.array_equal(M.retraction(U, xi), M.exp(U, xi))}")
print(f"the line stays horizontal: max_t ||(U + t xi)^T xi - sym|| = {line_asym:.1e}")
print(f"Q(t) = Q + t Qdot + t^2 xi xi^T: max error {quad_err:.1e}")
small = 0.05 * xi / np.linalg.norm(xi)
print(f"unit speed: dist(U, U + 0.05 xi/|xi|) = {M.dist(U, M.exp(U, small)):.15f}")

U_other = rng.standard_normal((d, r))
Lg = M.log(U, U_other)
ExpLog = M.exp(U, Lg)
print(f"log_U(U') horizontal: asymmetry {np.linalg.norm(U.T @ Lg - Lg.T @ U):.1e}; "
      f"exp(U, log_U U') represents U' U'^T: {np.linalg.norm(ExpLog @ ExpLog.T - U_other @ U_other.T):.1e}; "
      f"||log_U U'|| - dist(U, U') = {M.norm(U, Lg) - M.dist(U, U_other):.1e}")
short = 0.3 * xi
print(f"log_U(exp(U, 0.3 xi)) = 0.3 xi: error {np.linalg.norm(M.log(U, M.exp(U, short)) - short):.1e}")
scale = np.linalg.norm(U) + np.linalg.norm(U_other)
assert line_asym < 1e-13 * np.linalg.norm(xi) * (np.linalg.norm(U) + 2 * np.linalg.norm(xi))
assert quad_err < 1e-13 * (np.linalg.norm(U) + 2 * np.linalg.norm(xi)) ** 2
assert abs(M.dist(U, M.exp(U, small)) - 0.05) < 1e-14        # norm of a 5 x 2 array: a few eps
assert np.linalg.norm(ExpLog @ ExpLog.T - U_other @ U_other.T) < 1e-13 * scale ** 2
assert abs(M.norm(U, Lg) - M.dist(U, U_other)) < 1e-13 * scale
assert np.linalg.norm(M.log(U, M.exp(U, short)) - short) < 1e-13 * scale

# %% [markdown]
# **When the line leaves the rank-$r$ stratum.** Nothing keeps $U + t\xi$ at full rank. In $d = r = 2$ the
# factor $U + t\xi = U(I + tG^{-1}U^\top\xi)$ is singular exactly when $-1/t$ is an eigenvalue of $G^{-1}U^\top\xi$
# (these eigenvalues are real: the matrix is similar to the symmetric $G^{-1/2}U^\top\xi\, G^{-1/2}$). Take a
# horizontal $\xi$ for which one eigenvalue $\mu_{\min}$ is negative; at $t_c = -1/\mu_{\min}$ the predictor
# $Q(t_c)$ has rank one, a point of the boundary of the PSD cone. The code **never refuses**:
# `exp` returns $U + t_c\xi$, a factor of numerical rank 1, and `PSDQuotient`'s other methods accept
# it (they are defined on every stratum, [stratified geometry](../docs/stratified.md#what-still-holds-at-the-boundary-and-what-does-not));
# `exp(U, -U)` returns the zero factor, the apex of the cone. pymanopt's `PSDFixedRank.exp` returns the
# same arrays. Past $t_c$ the line re-enters the interior, but it is no longer a shortest path: the
# distance from $Q(0)$ falls below the length $t\lVert\xi\rVert$ travelled. Exercise 2 shows where and why.

# %%
M2 = PSDQuotient(2, 2)
U2 = np.diag([1.0, 0.6])
Xi_dir = np.array([[0.3, 0.4], [0.4, -0.8]])   # xi = Xi U with Xi symmetric is horizontal (§1.5)
xi2 = Xi_dir @ U2
mu = np.linalg.eigvals(np.linalg.solve(U2.T @ U2, U2.T @ xi2)).real
t_c = -1.0 / mu.min()
assert np.linalg.norm(U2.T @ xi2 - xi2.T @ U2) == 0.0 and mu.min() < 0
W_c = M2.exp(U2, t_c * xi2)
print(f"eigenvalues of G^-1 U^T xi: {np.round(np.sort(mu), 4)};  t_c = {t_c:.4f}")
print(f"exp(U, t_c xi): singular values {np.linalg.svd(W_c, compute_uv=False)}, M.rank = {M2.rank(W_c)}")
print(f"lift and projection still run there: ||P_h(W_c, xi)|| = "
      f"{np.linalg.norm(M2.horizontal_projection(W_c, xi2)):.4f}, vertical dimension "
      f"{M2.vertical_dimension(W_c)} (rank-1 stratum)")
print("exp(U, -U) =", M2.exp(U2, -U2).tolist(), " rank", M2.rank(M2.exp(U2, -U2)))
fixed = pymanopt.manifolds.PSDFixedRank(2, 2)
print("PSDFixedRank.exp gives the same arrays:",
      np.array_equal(fixed.exp(U2, t_c * xi2), W_c), np.array_equal(fixed.exp(U2, -U2), M2.exp(U2, -U2)))
assert M2.rank(W_c) == 1 and M2.rank(M2.exp(U2, -U2)) == 0

tt = np.linspace(0.0, 2.2 * t_c, 89)
Q0 = U2 @ U2.T
path = np.array([M2.predictor(M2.exp(U2, t * xi2)) for t in tt])
dist_alg = np.array([M2.dist(U2, M2.exp(U2, t * xi2)) for t in tt])
dist_bw = np.array([quadnet.bures_wasserstein(Q0, Qt) for Qt in path])
length = tt * np.linalg.norm(xi2)

fig = plt.figure(figsize=(11, 4.4))
ax = fig.add_subplot(1, 2, 1, projection="3d")
draw_psd_cone(ax, height=float(psd_cone_coords(path)[2].max()) * 1.05)
before, after = tt <= t_c, tt >= t_c
ax.plot(*psd_cone_coords(path[before]), color="tab:blue", lw=2, label="$Q(t)$, $t \\leq t_c$")
ax.plot(*psd_cone_coords(path[after]), color="tab:red", lw=2, label="$Q(t)$, $t \\geq t_c$")
ax.scatter(*psd_cone_coords(Q0), color="k", s=30, label="$Q(0)$")
ax.scatter(*psd_cone_coords(M2.predictor(W_c)), color="tab:orange", s=50, label="rank one at $t_c$")
ax.set_title("a geodesic touches the rank-one boundary")
ax.legend(fontsize=8, loc="upper left")
ax2 = fig.add_subplot(1, 2, 2)
ax2.plot(tt, length, "k--", lw=1, label=r"length travelled $t\|\xi\|$")
ax2.plot(tt, dist_alg, color="tab:blue", lw=2, label="PSDQuotient.dist")
ax2.plot(tt[::4], dist_bw[::4], "o", ms=4, color="tab:orange", label="bures_wasserstein (matrices only)")
ax2.axvline(t_c, color="0.5", lw=0.8)
ax2.text(t_c, 0.05, "  $t_c$: rank 1", color="0.3")
ax2.set_xlabel("t"); ax2.set_ylabel(r"dist$(Q(0), Q(t))$")
ax2.set_title("shortest only up to the rank loss")
ax2.legend(fontsize=8)
plt.tight_layout(); plt.show()

gap_after = (length - dist_alg)[tt > 1.1 * t_c].min()
print(f"max |dist - t|xi|| for t <= t_c: {np.abs(dist_alg - length)[before].max():.1e}; "
      f"min (t|xi| - dist) for t > 1.1 t_c: {gap_after:.3f}")
print(f"PSDQuotient.dist vs bures_wasserstein: max difference {np.abs(dist_alg - dist_bw).max():.1e}")
assert np.abs(dist_alg - length)[before].max() < 1e-12        # Procrustes of 2 x 2 arrays: a few eps
assert gap_after > 1e-3
# near the singular Q(t_c) the matrix-only oracle is Hölder-1/2: an input rounding eps ||Q|| can move it
# by ~ (n eps ||Q||)^(1/2) ~ 1e-8 (docs/stratified.md), so 1e-7 is the honest tolerance here
assert np.abs(dist_alg - dist_bw).max() < 1e-7

# %% [markdown]
# ### Exercise 2: where a horizontal line stops minimising
#
# Let $\xi$ be horizontal at $U$ and $t_c = -1/\mu_{\min}$, $\mu_{\min}$ the smallest eigenvalue of
# $G^{-1}U^\top\xi$ ($t_c = \infty$ if $\mu_{\min} \ge 0$). Prove that
# $\operatorname{dist}(UU^\top, Q(t)) = t\lVert\xi\rVert$ exactly for $0 \le t \le t_c$ and
# $\operatorname{dist} < t\lVert\xi\rVert$ for $t > t_c$. Show that for $d = r$ the factor $U + t\xi$ loses rank
# at $t_c$, whereas for $d > r$ a generic horizontal line keeps full rank through $t_c$: the end of
# minimality is then not a rank loss. Check both numerically, for $(d, r) = (3, 3)$ and $(5, 2)$.

# %% [markdown]
# :::{dropdown} Solution
# By the Procrustes argument ([§1.2](../docs/theory/quotient.md#12-alignment-the-closest-point-of-a-fibre)),
# $\operatorname{dist}^2 = \lVert U\rVert^2 + \lVert U + t\xi\rVert^2 - 2\lVert U^\top(U + t\xi)\rVert_*$, with
# $\lVert\cdot\rVert_*$ the nuclear norm (sum of singular values). Here $U^\top(U + t\xi) = G + tU^\top\xi$ is
# symmetric. For a symmetric matrix the nuclear norm is the sum of the absolute eigenvalues, which equals the
# trace iff it is positive semidefinite and exceeds it otherwise. With the trace,
# $\lVert U\rVert^2 + \lVert U + t\xi\rVert^2 - 2\operatorname{tr}(G + tU^\top\xi) = \lVert t\xi\rVert^2$. So
# $\operatorname{dist} = t\lVert\xi\rVert$ iff $G + tU^\top\xi \succeq 0$ and $\operatorname{dist} < t\lVert\xi\rVert$
# otherwise. Finally $G + tU^\top\xi = G^{1/2}(I + tG^{-1/2}U^\top\xi G^{-1/2})G^{1/2}$ is PSD iff $1 + t\mu \ge 0$
# for every eigenvalue $\mu$ of $G^{-1/2}U^\top\xi G^{-1/2}$, which has the eigenvalues of $G^{-1}U^\top\xi$: iff
# $t \le t_c$.
#
# Rank: since $\Pi_Q\xi = UG^{-1}U^\top\xi$, we have $\xi = UG^{-1}U^\top\xi + (I - \Pi_Q)\xi$, so
# $U + t\xi = U(I + tG^{-1}U^\top\xi) + t(I-\Pi_Q)\xi$. The two terms have orthogonal column spaces, so a vector
# $v$ is in the kernel iff $(I + tG^{-1}U^\top\xi)v = 0$ **and** $(I-\Pi_Q)\xi v = 0$. For $d = r$, $I - \Pi_Q = 0$ and the
# first condition holds at $t = t_c$ with $v$ the eigenvector of $\mu_{\min}$. For $d > r$ the second condition
# asks the $d - r$ numbers $(I-\Pi_Q)\xi v$ to vanish as well, which fails for a generic $\xi$: the line passes the
# cut point at full rank. (Beyond $t_c$ it is still a geodesic — a horizontal line at full rank — just no
# longer a shortest one.)
# :::

# %% tags=["solution", "hide-cell"]
rng2 = np.random.default_rng(2)
for dd, rr in [(3, 3), (5, 2)]:
    Mx = PSDQuotient(dd, rr)
    for _ in range(20):                       # a horizontal direction with a negative eigenvalue
        Ux = rng2.standard_normal((dd, rr))
        xx = Mx.random_tangent_vector(Ux, rng2)
        mux = np.linalg.eigvals(np.linalg.solve(Ux.T @ Ux, Ux.T @ xx)).real
        if mux.min() < 0:
            break
    tcx = -1.0 / mux.min()
    tgrid = tcx * np.array([0.25, 0.5, 0.9, 1.0, 1.1, 1.5, 2.0])
    excess = np.array([tt_ * np.linalg.norm(xx) - Mx.dist(Ux, Ux + tt_ * xx) for tt_ in tgrid])
    smin_c = np.linalg.svd(Ux + tcx * xx, compute_uv=False)[-1]
    print(f"(d, r) = ({dd}, {rr}): t_c = {tcx:.3f}; t|xi| - dist at t/t_c = {tgrid / tcx}: "
          f"{np.array2string(excess, precision=2)};  sigma_min(U + t_c xi) = {smin_c:.1e}")
    # up to t_c the distance is the norm of the same difference array: equal to a few eps
    assert np.all(np.abs(excess[:4]) < 1e-12 * (np.linalg.norm(Ux) + tcx * np.linalg.norm(xx)))
    # past t_c the excess is of order (t - t_c)^2 |mu| ||U||: 1e-6 is far below it and far above rounding
    assert np.all(excess[4:] > 1e-6)
    if dd == rr:
        assert smin_c < 1e-12 * np.linalg.norm(Ux)   # rank loss at t_c, up to rounding
    else:
        assert smin_c > 1e-3                         # the generic line keeps full rank at t_c

# %% [markdown]
# ## 4. The distance
#
# $\operatorname{dist}(Q, Q') = \min_{R\in O(r)}\lVert UR - U'\rVert_F$
# ([§1.8](../docs/theory/quotient.md#18-distance)). Expanding,
# $\lVert UR - U'\rVert^2 = \operatorname{tr}Q + \operatorname{tr}Q' - 2\operatorname{tr}(R^\top U^\top U')$,
# and the largest value of $\operatorname{tr}(R^\top K)$ over orthogonal $R$ is the nuclear norm
# $\lVert K\rVert_*$ (Procrustes). The singular values of $K = U^\top U'$ are the square roots of the
# eigenvalues of $K^\top K = U'^\top QU' = (Q^{1/2}U')^\top(Q^{1/2}U')$, whose nonzero eigenvalues are
# those of $(Q^{1/2}U')(Q^{1/2}U')^\top = Q^{1/2}Q'Q^{1/2}$. So
# $\lVert U^\top U'\rVert_* = \operatorname{tr}(Q^{1/2}Q'Q^{1/2})^{1/2}$ and
#
# $$
# \operatorname{dist}(Q, Q')^2 = \operatorname{tr}Q + \operatorname{tr}Q' - 2\operatorname{tr}\big(Q^{1/2}Q'Q^{1/2}\big)^{1/2},
# $$
#
# the Bures–Wasserstein distance of Bhatia, Jain & Lim (2019). We compute the right-hand side with
# `scipy.linalg.sqrtm` for positive definite pairs, and compare with `PSDQuotient.dist` (the aligned
# difference) and `quadnet.bures_wasserstein` (which sees only the matrices). For rank-deficient $Q$ ($r < d$) we
# take the square roots from `numpy.linalg.eigh` instead, and we must set the eigenvalues at rounding level to
# zero: otherwise $Q^{1/2}Q'Q^{1/2}$ keeps $d - r$ eigenvalues of size $\varepsilon\lVert Q\rVert$ instead of 0, and
# their square roots, of size $\sqrt{\varepsilon\lVert Q\rVert} \approx 10^{-8}$, enter the trace. Near a singular
# matrix the square root is only Hölder-$1/2$; the last column below shows the damage.

# %%
def trace_formula(Q1, Q2, sqrt):
    s1 = sqrt(Q1)
    return np.sqrt(max(np.trace(Q1) + np.trace(Q2) - 2 * np.trace(sqrt(s1 @ Q2 @ s1)).real, 0.0))


def psd_sqrt(A_psd, zero_rounding=True):
    """Square root of a PSD matrix by eigh; eigenvalues <= 10 n eps max are set to zero (or, with
    zero_rounding=False, only the negative ones)."""
    w, E = np.linalg.eigh((A_psd + A_psd.T) / 2)
    cut = 10 * A_psd.shape[0] * EPS * w.max() if zero_rounding else 0.0
    return (E * np.sqrt(np.where(w > cut, w, 0.0))) @ E.T


def psd_sqrt_raw(A_psd):
    return psd_sqrt(A_psd, zero_rounding=False)


print("(d, r)   PSDQuotient.dist   bures_wasserstein   trace formula     nuclear-norm form  "
      "| eigenvalues not zeroed")
for dd, rr, sqrt in [(4, 4, scipy.linalg.sqrtm), (5, 2, psd_sqrt)]:
    Mx = PSDQuotient(dd, rr)
    for _ in range(2):
        A1, A2 = rng.standard_normal((2, dd, rr))
        Q1, Q2 = A1 @ A1.T, A2 @ A2.T
        row = (Mx.dist(A1, A2), quadnet.bures_wasserstein(Q1, Q2), trace_formula(Q1, Q2, sqrt),
               np.sqrt(np.trace(Q1) + np.trace(Q2)
                       - 2 * np.linalg.svd(A1.T @ A2, compute_uv=False).sum()))
        raw = f"{abs(trace_formula(Q1, Q2, psd_sqrt_raw) - row[0]):9.1e}" if rr < dd else "      -"
        print(f"({dd}, {rr})  " + "  ".join(f"{v:17.13f}" for v in row) + f"  | error {raw}")
        # the trace formula cancels: its error is ~ eps tr(Q) / dist, 1e-10 relative is ample here
        assert max(row) - min(row) < 1e-10 * row[0]

# %% [markdown]
# **Which route to trust for nearby points.** The trace formula subtracts numbers of size
# $\operatorname{tr}Q$ to get $\operatorname{dist}^2$, so it loses about $\varepsilon\operatorname{tr}Q/\operatorname{dist}^2$
# in relative accuracy: hopeless below $\operatorname{dist}\approx 10^{-8}$. Along a short geodesic the
# exact answer is known, $\operatorname{dist}(Q, Q(s)) = s\lVert\xi\rVert$ (Section 3), which makes a clean test.
# No method can beat one limit: storing $U + s\xi$ in floating point already moves it by about
# $\varepsilon\lVert U\rVert_F$, i.e. by $\varepsilon\lVert U\rVert_F/\operatorname{dist}$ relative to the distance. The aligned
# difference and `bures_wasserstein` stay at that level (`PSDQuotient.dist` documents exactly this error);
# the trace formula is worse by a factor of order $\lVert U\rVert/\operatorname{dist}$.

# %%
A1 = rng.standard_normal((4, 4))
M4 = PSDQuotient(4, 4)
x4 = M4.random_tangent_vector(A1, rng)                # unit horizontal direction
print("     s    input rounding   trace formula   PSDQuotient.dist   bures_wasserstein   (relative errors)")
for s in 10.0 ** -np.arange(1, 8):
    B1 = A1 + s * x4
    exact = s                                          # = s ||x4||, a shortest geodesic for small s
    floor_s = EPS * np.linalg.norm(A1) / exact         # relative effect of rounding the stored B1
    errs = [abs(v - exact) / exact for v in (trace_formula(A1 @ A1.T, B1 @ B1.T, scipy.linalg.sqrtm),
                                             M4.dist(A1, B1),
                                             quadnet.bures_wasserstein(A1 @ A1.T, B1 @ B1.T))]
    print(f"  {s:.0e}     {floor_s:9.1e}      {errs[0]:9.1e}       {errs[1]:9.1e}          {errs[2]:9.1e}")
    # both cancellation-free routes stay within 10x the input-rounding level (docs/stratified.md)
    assert errs[1] < 10 * floor_s and errs[2] < 10 * floor_s
assert errs[0] > 1e3 * floor_s                 # while the trace formula has lost most digits

# %% [markdown]
# ### Exercise 3: the metric is the second-order term of the distance
#
# For any direction $Z \in \mathbb{R}^{d\times r}$, horizontal or not, show that
# $\operatorname{dist}(\pi(U), \pi(U + tZ)) = t\lVert P_h Z\rVert_F + O(t^2)$: to first order only the
# horizontal part of a step moves the predictor, and it moves it by its Frobenius length. Check it for a
# random $Z$ and for a purely vertical $Z$, with an error that shrinks linearly in $t$.

# %% [markdown]
# :::{dropdown} Solution
# Split $Z = Z_h + U\Omega$. Since $e^{t\Omega}$ is orthogonal, $U + tU\Omega = Ue^{t\Omega} + O(t^2)$, hence
# $U + tZ = (U + tZ_he^{-t\Omega})e^{t\Omega} + O(t^2) = (U + tZ_h)e^{t\Omega} + O(t^2)$. The factor $e^{t\Omega}$ does not
# change the predictor, and the distance is Lipschitz in the factor (it is a minimum of Frobenius norms), so
# $\operatorname{dist}(\pi(U), \pi(U + tZ)) = \operatorname{dist}(\pi(U), \pi(U + tZ_h)) + O(t^2) = t\lVert Z_h\rVert + O(t^2)$,
# the last step by the geodesic property of Section 3. Dividing by $t$, the error is $O(t)$: slope 1 on a log-log
# plot. For vertical $Z$ the limit is 0: a vertical step only moves the predictor at second order.
# :::

# %% tags=["solution", "hide-cell"]
rng3 = np.random.default_rng(3)
Z = rng3.standard_normal((d, r))
Zv = M.vertical_projection(U, Z)
for name, Zx in (("random Z", Z), ("vertical Z", Zv)):
    target = np.linalg.norm(M.horizontal_projection(U, Zx))
    steps = np.array([1e-2, 1e-3, 1e-4])
    gaps = np.array([abs(M.dist(U, U + s * Zx) / s - target) for s in steps])
    print(f"{name}: ||P_h Z|| = {target:.6f}; |dist/t - ||P_h Z||| at t = {steps}: {gaps}")
    # O(t): each decade of t removes a decade of error (factor 10 +- 20%), and at t = 1e-4 the error
    # is far above rounding (eps ||U|| / t ~ 1e-12)
    assert np.all(gaps[1:] < 0.12 * gaps[:-1]) and np.all(gaps[1:] > 0.08 * gaps[:-1])
    assert gaps[-1] < 1e-3 * max(target, np.linalg.norm(Zx))

# %% [markdown]
# ## 5. Riemannian gradient and Hessian, checked by Taylor slopes
#
# Take a loss on predictors, $\ell$, and its factor lift $L(U) = \ell(UU^\top)$; quadnet normalises the test
# loss as $\ell(Q) = \tfrac12\lVert Q - Q_{\mathrm{tgt}}\rVert_F^2$ (a factor $\tfrac14$ instead would only rescale gradient and
# Hessian). The Riemannian gradient of $\ell$ at $Q$ is the tangent vector $\operatorname{grad}\ell$ with
# $\langle\operatorname{grad}\ell, \dot Q\rangle_Q = D\ell(Q)[\dot Q]$. Lifting, $D\ell(Q)[\xi U^\top + U\xi^\top] = \langle\nabla L(U), \xi\rangle$
# for every horizontal $\xi$, so the lift of the gradient is the horizontal part of $\nabla L(U) = 2SU$, which
# is all of it since $U^\top SU$ is symmetric (quadnet theory §2.2 and
# [§2.4](../docs/theory/dynamics.md#24-factor-gradient-flow-is-the-riemannian-gradient-flow)). The lift of the
# Riemannian Hessian is $\xi \mapsto P_h(\nabla^2L(U)[\xi])$ for horizontal $\xi$, the projected Euclidean Hessian
# ([§2.3](../docs/theory/dynamics.md#23-the-factor-hessian),
# [§3.2](../docs/theory/curvature.md#32-why-it-is-the-curvature-of-the-quotient); Absil, Mahony & Sepulchre,
# 2008, ch. 5; Boumal, 2023, ch. 9).
#
# **The test.** Along $c(t) = U + t\xi$, a geodesic of the quotient (Section 3),
# $\psi(t) = L(U + t\xi)$ has $\psi'(0) = \langle\operatorname{grad}, \xi\rangle$ and
# $\psi''(0) = \langle\xi, \nabla^2L(U)[\xi]\rangle = \langle\operatorname{Hess}[\xi], \xi\rangle$ (for horizontal $\xi$
# the projection $P_h$ changes nothing in this pairing). So the remainders
#
# $$
# e_1(t) = |\psi(t) - \psi(0) - t\langle\operatorname{grad}, \xi\rangle| = O(t^2), \qquad
# e_2(t) = |\psi(t) - \psi(0) - t\langle\operatorname{grad}, \xi\rangle - \tfrac{t^2}{2}\langle\operatorname{Hess}[\xi], \xi\rangle| = O(t^3)
# $$
#
# have slopes 2 and 3 on a log-log plot, until rounding ($\sim\varepsilon|\psi(0)|$) takes over at small $t$. A wrong
# gradient leaves an $O(t)$ remainder: slope 1. This is Manopt's `checkgradient`/`checkhessian` test, which
# quadnet reproduces as `check_gradient` and `check_hessian` (quadnet theory §7.5). We draw it by hand for the
# Frobenius loss and for Gaussian rank-one sensing (quadnet theory §4), with a gradient deliberately
# halved as a counterexample, and fit the slopes with `taylor_slope`, which drops points within $100\times$ the
# rounding level.

# %%
V_tgt = random_orthogonal(d, rng)
Q_tgt = V_tgt @ np.diag([3.0, 2.0, -0.5, -1.0, -2.0]) @ V_tgt.T    # best rank-2 PSD part: 3, 2
losses = {"Frobenius loss 1/2 ||Q - Q_tgt||^2": FrobeniusLoss(Q_tgt),
          "Gaussian sensing, m = 60": GaussianSensing.random(d, r, 60, seed=0)}
U5 = rng.standard_normal((d, r))
xi5 = M.random_tangent_vector(U5, rng)
tgrid = np.logspace(-7, 0, 36)

fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for ax, (name, loss) in zip(axes, losses.items()):
    grad = M.euclidean_to_riemannian_gradient(U5, loss.factor_gradient(U5))
    hess = M.euclidean_to_riemannian_hessian(U5, loss.factor_gradient(U5), loss.factor_hvp(U5, xi5), xi5)
    f0 = loss.factor_value(U5)
    slope1, slope2 = M.inner_product(U5, grad, xi5), M.inner_product(U5, hess, xi5)
    phi = np.array([loss.factor_value(M.retraction(U5, t * xi5)) for t in tgrid])
    e1 = np.abs(phi - f0 - tgrid * slope1)
    e2 = np.abs(phi - f0 - tgrid * slope1 - 0.5 * tgrid ** 2 * slope2)
    e_bad = np.abs(phi - f0 - tgrid * 0.5 * slope1)                 # a gradient off by a factor 2
    floor = 10 * EPS * max(abs(f0), 1.0)
    s1, s2, s_bad = (taylor_slope(tgrid, e, floor) for e in (e1, e2, e_bad))
    ax.loglog(tgrid, e1, "o-", ms=3, label=f"first order, slope {s1:.3f}")
    ax.loglog(tgrid, e2, "s-", ms=3, label=f"with the Hessian, slope {s2:.3f}")
    ax.loglog(tgrid, e_bad, "^-", ms=3, label=f"halved gradient, slope {s_bad:.3f}")
    ax.axhline(100 * floor, color="0.6", lw=0.8, ls=":", label="100 x rounding level")
    ax.set_xlabel("t"); ax.set_ylabel("Taylor remainder"); ax.set_title(name, fontsize=10)
    ax.legend(fontsize=8)
    cg = check_gradient(M, loss, U5, xi5)
    ch = check_hessian(M, loss, U5, xi5, eta=M.random_tangent_vector(U5, rng))
    print(f"{name}: fitted slopes {s1:.4f}, {s2:.4f} (halved gradient {s_bad:.4f}); "
          f"check_gradient {cg:.4f}, check_hessian {ch['slope']:.4f}, "
          f"symmetry {ch['symmetry']:.1e}, Hessian on a vertical direction {ch['vertical']:.1e}")
    # slopes of exact polynomial-in-t remainders fitted over 6 points: within 0.1 of the theory
    assert abs(s1 - 2) < 0.1 and abs(s2 - 3) < 0.1 and abs(s_bad - 1) < 0.1
    assert abs(cg - 2) < 0.1 and abs(ch["slope"] - 3) < 0.1
    assert ch["symmetry"] < 1e-12 and ch["vertical"] < 1e-12   # both are rounding-level identities
plt.tight_layout(); plt.show()

# %% [markdown]
# ### Exercise 4: the step size at which gradient descent diverges
#
# Gradient descent $U_{k+1} = U_k - \eta\nabla L(U_k)$ on $L(U) = \tfrac12\lVert UU^\top - Q_{\mathrm{tgt}}\rVert_F^2$, started near
# a minimiser $\bar U$ with predictor $\bar Q = \bar U\bar U^\top$ (the top $r$ eigenpairs of $Q_{\mathrm{tgt}}$, assumed
# positive). (a) Show that it is locally stable iff $\eta < 2/\lambda_{\max}$, $\lambda_{\max}$ the largest eigenvalue of the
# Riemannian Hessian at $\bar Q$, and that above that the distance to $\bar Q$ grows by $|1 - \eta\lambda_{\max}|$ per step.
# (b) Show that the eigenvalues are $2(\tau_i + \tau_j)$, $i \le j \le r$, and $2(\tau_i - \tau_l)$, $i \le r < l$, where
# $\tau_1 \ge \dots \ge \tau_d$ are the eigenvalues of $Q_{\mathrm{tgt}}$, listed *decreasingly* in this exercise only. (c) Verify:
# compute the Hessian spectrum from `horizontal_basis` and `factor_hvp`, compare with (b) and with
# `quadnet.effective_hessian`, and run descent at $0.95 \cdot 2/\lambda_{\max}$ and $1.05 \cdot 2/\lambda_{\max}$.

# %% [markdown]
# :::{dropdown} Solution
# (a) Write $U_k = \bar U + e_k$. Then $e_{k+1} = e_k - \eta\nabla^2L(\bar U)[e_k] + O(\lVert e_k\rVert^2)$. At a critical point
# $\nabla^2L(\bar U)$ maps vertical vectors to $\nabla L\,\Omega = 0$ and, being symmetric, maps $\mathcal{H}_{\bar U}$ into
# itself, where it is the Riemannian Hessian ([§3.3](../docs/theory/curvature.md#33-the-vertical-kernel-at-critical-points)).
# A vertical error is a motion along the fibre and costs nothing; a horizontal eigen-direction with eigenvalue
# $\lambda$ is multiplied by $1 - \eta\lambda$ per step. All $|1 - \eta\lambda| < 1$ iff $0 < \eta < 2/\lambda_{\max}$ (with every
# $\lambda > 0$); above it the top mode grows by $|1 - \eta\lambda_{\max}| > 1$ until nonlinear terms stop it.
#
# (b) Let $Q_{\mathrm{tgt}} = \sum_l\tau_lv_lv_l^\top$, $V_r = [v_1, \dots, v_r]$, $\Lambda = \operatorname{diag}(\tau_1, \dots, \tau_r)$ and
# $\bar U = V_r\Lambda^{1/2}$ (all local to this exercise). At the minimiser
# $S = \bar Q - Q_{\mathrm{tgt}} = -\sum_{l>r}\tau_lv_lv_l^\top$ and the Hessian form is
# $\langle\xi, \nabla^2L\,\xi\rangle = 2\langle S, \xi\xi^\top\rangle + \lVert\xi\bar U^\top + \bar U\xi^\top\rVert^2$ (§2.3).
# *In-range directions* $\xi = V_rK$ with $Y = \Lambda^{1/2}K$ symmetric (horizontality): $S$ vanishes on the range,
# the velocity has entries $Y_{ij}(\tau_i + \tau_j)/\sqrt{\tau_i\tau_j}$ in the basis $V_r$, and
# $\lVert\xi\rVert^2 = \sum_{ij}Y_{ij}^2/\tau_i$; for the pair $Y_{ij} = Y_{ji}$ the Rayleigh quotient is $2(\tau_i + \tau_j)$
# (for $i = j$: $4\tau_i$). *Off-range directions* $\xi = v_le_i^\top$, $l > r$ (horizontal, since $\bar U^\top v_l = 0$):
# $\lVert\xi\bar U^\top + \bar U\xi^\top\rVert^2 = 2\lVert\bar Ue_i\rVert^2 = 2\tau_i$ and $2\langle S, \xi\xi^\top\rangle = -2\tau_l$, so the
# quotient is $2(\tau_i - \tau_l)$. These $r(r+1)/2 + r(d - r) = n_h$ directions are mutually orthogonal for both forms, so
# they are the eigenvectors. Hence $\lambda_{\max} = \max\{4\tau_1,\ 2(\tau_1 - \tau_d)\}$ and the threshold is $2/\lambda_{\max}$.
# :::

# %% tags=["solution", "hide-cell"]
rng4 = np.random.default_rng(4)
A4 = rng4.standard_normal((d, d)); Q_tgt4 = A4 + A4.T
tau, V_T = np.linalg.eigh(Q_tgt4)
tau, V_T = tau[::-1], V_T[:, ::-1]                  # descending
assert tau[r - 1] > 0                                 # the top r eigenvalues are positive
loss4 = FrobeniusLoss(Q_tgt4)
U_bar = V_T[:, :r] * np.sqrt(tau[:r])
B = M.horizontal_basis(U_bar)
H_eff = B.T @ np.column_stack([loss4.factor_hvp(U_bar, b.reshape(d, r)).ravel() for b in B.T])
spec = np.linalg.eigvalsh((H_eff + H_eff.T) / 2)
theory = np.sort([2 * (tau[i] + tau[j]) for i in range(r) for j in range(i, r)]
                 + [2 * (tau[i] - tau[k]) for i in range(r) for k in range(r, d)])
print("Hessian spectrum at Q_bar:", np.round(spec, 6))
print("closed form (b):       ", np.round(theory, 6))
# n_h HVPs and a 9 x 9 eigvalsh: rounding ~ eps ||Q_tgt||^2, far below 1e-10
assert np.allclose(spec, theory, rtol=0, atol=1e-10)
assert np.allclose(spec, np.linalg.eigvalsh(quadnet.effective_hessian(loss4, U_bar)), rtol=0, atol=1e-10)
lam_max = spec[-1]
eta_c = 2 / lam_max
print(f"lambda_max = {lam_max:.6f} = max(4 tau_1, 2(tau_1 - tau_d)) = "
      f"{max(4 * tau[0], 2 * (tau[0] - tau[-1])):.6f};  eta_c = 2/lambda_max = {eta_c:.6f}")

U_init = U_bar + 1e-6 * rng4.standard_normal((d, r))
for factor in (0.95, 1.05):
    eta_ = factor * eta_c
    Uk, dists = U_init.copy(), []
    for k in range(300):
        Uk = Uk - eta_ * loss4.factor_gradient(Uk)
        dists.append(M.dist(Uk, U_bar))
    dists = np.array(dists)
    rate = np.exp(np.polyfit(np.arange(20, 60), np.log(dists[20:60]), 1)[0])
    predicted = max(abs(1 - eta_ * lam) for lam in spec)
    print(f"eta = {factor} eta_c: per-step factor measured {rate:.5f}, predicted {predicted:.5f}; "
          f"dist at steps 20 / 60 / 300: {dists[20]:.1e} / {dists[60]:.1e} / {dists[-1]:.1e}")
    # steps 20-60 sit in the linear regime (dist <= 1e-3, so the O(dist^2) terms are ~1e-3 relative):
    # the fitted factor agrees with max |1 - eta lambda| to better than 1 %
    assert abs(rate - predicted) < 0.01 * predicted and dists[20:60].max() < 1e-3
    if factor < 1:
        assert dists[-1] < 1e-12             # converged (rounding level of ||U_bar|| ~ 3)
    else:
        assert dists[-1] > 1e-2              # repelled: the minimiser is unstable at this step

# %% [markdown]
# ## 6. pymanopt's optimisers on `PSDQuotient` and on `PSDFixedRank`
#
# pymanopt (Townsend, Koep & Weichwald, 2016) runs its solvers on any object with its `Manifold`
# interface. `PSDQuotient` is one; pymanopt's own `PSDFixedRank` implements the same geometry of Journée,
# Bach, Absil & Sepulchre (2010): the same horizontal projection, Frobenius metric, $\exp = U + \xi$ and
# logarithm by alignment over $O(r)$. They differ in the Riemannian Hessian (below). We give both the
# identical `pymanopt.Problem` — the cost, Euclidean gradient and Euclidean Hessian of one quadnet loss —
# from the identical start, and run steepest descent, conjugate gradients and trust regions, with a target
# $Q_{\mathrm{tgt}}$ whose best rank-$r$ PSD approximation has rank $r$, so both stay on the full-rank stratum.
# `quadnet.pymanopt_problem(loss, manifold)` builds that problem on either manifold.

# %%
loss6 = FrobeniusLoss(Q_tgt)
print("eigenvalues of Q_tgt:", np.round(np.linalg.eigvalsh(Q_tgt), 3), "(at least r = 2 positive)")
assert np.sum(np.linalg.eigvalsh(Q_tgt) > 0) >= r
ours = quadnet.pymanopt_problem(loss6, M)
theirs = quadnet.pymanopt_problem(loss6, pymanopt.manifolds.PSDFixedRank(d, r))
Ux = rng.standard_normal((d, r))
g_ours, g_theirs = ours.riemannian_gradient(Ux), theirs.riemannian_gradient(Ux)
gap = np.linalg.norm(g_ours - g_theirs) / np.linalg.norm(g_ours)
print(f"the same cost on both manifolds: {ours.cost(Ux) == theirs.cost(Ux)}; Riemannian "
      f"gradients agree to {gap:.1e} (relative)")
assert ours.cost(Ux) == theirs.cost(Ux) and gap < 1e-13   # two roundings of one projection

reference = eckart_young_value(Q_tgt, r)
U0 = rng.standard_normal((d, r))
rows, logs, ends = [], {}, {}
for name in ("SteepestDescent", "ConjugateGradient", "TrustRegions"):
    for label, man in (("PSDQuotient", PSDQuotient(d, r)), ("PSDFixedRank", pymanopt.manifolds.PSDFixedRank(d, r))):
        opt = getattr(pymanopt.optimizers, name)(verbosity=0, max_iterations=500, log_verbosity=2)
        res = opt.run(quadnet.pymanopt_problem(loss6, man), initial_point=U0.copy())
        costs = (res.log["iterations"] or {}).get("cost", [])
        if len(costs):                                  # TrustRegions logs no iterations
            logs[name, label] = np.array(costs)
        ends[name, label] = res.point
        rows.append((name, label, res.iterations, (res.cost - reference) / reference))
print(f"\nreference (Eckart-Young) value {reference:.12f}")
print(f"{'optimiser':18s} {'manifold':13s} {'iterations':>10s}   relative cost error")
for name, label, its, err in rows:
    print(f"{name:18s} {label:13s} {its:10d}   {err:.1e}")
    assert abs(err) < 1e-10                    # both reach the Eckart-Young value (gradient tol 1e-6)
for name in ("SteepestDescent", "ConjugateGradient", "TrustRegions"):
    gap = M.dist(ends[name, "PSDQuotient"], ends[name, "PSDFixedRank"])
    line = f"{name}: final points {gap:.1e} apart (quotient distance)"
    if (name, "PSDQuotient") in logs:
        a, b = logs[name, "PSDQuotient"], logs[name, "PSDFixedRank"]
        k = min(len(a), len(b), 8)
        line += f"; the first {k} costs agree to {np.abs(a[:k] - b[:k]).max():.1e}"
        assert np.abs(a[:k] - b[:k]).max() < 1e-10 * a[0]
    print(line)
    assert gap < 1e-5                          # both stop at gradient norm 1e-6 near one minimiser
its = {(n, l): i for n, l, i, _ in rows}
assert all(its[n, "PSDQuotient"] == its[n, "PSDFixedRank"]
           for n in ("SteepestDescent", "ConjugateGradient", "TrustRegions"))

# %% [markdown]
# The two manifolds take the same steps: the logged costs agree to rounding, the iteration counts are
# equal and the final points coincide to the stopping tolerance.
#
# **The Hessian pitfall** ([§7.2](../docs/theory/pitfalls.md#72-pymanopt-psdfixedrank-the-riemannian-hessian)).
# pymanopt evaluates the Euclidean Hessian $\nabla^2L(U)[\xi]$ at the direction $\xi$ it is given, and
# `PSDFixedRank.euclidean_to_riemannian_hessian` returns $P_h(\nabla^2L(U)[\xi])$: only the output is projected.
# A vertical $\xi = U\Omega$ represents the **zero** tangent vector, so the Hessian should return zero on it. But
# differentiating the invariance $\nabla L(Ue^{s\Omega}) = \nabla L(U)e^{s\Omega}$ at $s = 0$ gives
# $\nabla^2L(U)[U\Omega] = \nabla L(U)\,\Omega$ ([§2.3](../docs/theory/dynamics.md#23-the-factor-hessian)), so
# `PSDFixedRank` returns $P_h(\nabla L(U)\Omega)$, nonzero away from critical points. `PSDQuotient` projects the
# input too, computing $P_h(\nabla^2L[\xi] - \nabla L\,\Omega)$ with $G\Omega + \Omega G = U^\top\xi - \xi^\top U$, i.e.
# $P_h\circ\nabla^2L\circ P_h$. On horizontal $\xi$ the two agree exactly ($\Omega = 0$). We measure:
#
# 1. the two Hessians on a horizontal and on a vertical direction, and the formula $P_h(\nabla L\,\Omega)$;
# 2. quadnet's `check_hessian` on both (a small adapter exposes `PSDFixedRank` under the names the checker
#    reads): the Taylor slope cannot see the difference, the vertical test can;
# 3. the Hessian assembled as a $dr\times dr$ matrix on the ambient basis $E_{ij}$ — what a user gets when asking
#    for "the Hessian matrix" — at a point near the minimiser;
# 4. why the trust-region runs above were unaffected: the directions pymanopt's truncated CG feeds the
#    Hessian are horizontal.

# %%
fixed = pymanopt.manifolds.PSDFixedRank(d, r)
pQ, pF = quadnet.pymanopt_problem(loss6, M), quadnet.pymanopt_problem(loss6, fixed)
U6 = rng.standard_normal((d, r))
h6 = M.random_tangent_vector(U6, rng)
Om6 = np.array([[0.0, 1.0], [-1.0, 0.0]])
v6 = U6 @ Om6 / np.linalg.norm(U6 @ Om6)                 # unit vertical direction
grad6 = loss6.factor_gradient(U6)
print(f"horizontal direction: ||Hess_F - Hess_Q|| = "
      f"{np.linalg.norm(pF.riemannian_hessian(U6, h6) - pQ.riemannian_hessian(U6, h6)):.1e}")
HvF, HvQ = pF.riemannian_hessian(U6, v6), pQ.riemannian_hessian(U6, v6)
predicted = M.horizontal_projection(U6, grad6 @ Om6 / np.linalg.norm(U6 @ Om6))
print(f"unit vertical direction: ||Hess_F|| = {np.linalg.norm(HvF):.3f}, ||Hess_Q|| = {np.linalg.norm(HvQ):.1e}, "
      f"||Hess_F - P_h(grad L Omega)|| = {np.linalg.norm(HvF - predicted):.1e}")
w_T, V_T6 = np.linalg.eigh(Q_tgt)
U_min = V_T6[:, -r:] * np.sqrt(w_T[-r:])                 # the minimiser (top r eigenpairs of Q_tgt)
v_min = U_min @ Om6 / np.linalg.norm(U_min @ Om6)
print(f"  the error is P_h(grad L Omega), so it vanishes with the gradient: at the minimiser "
      f"||grad L|| = {np.linalg.norm(loss6.factor_gradient(U_min)):.1e} and "
      f"||Hess_F[vertical]|| = {np.linalg.norm(pF.riemannian_hessian(U_min, v_min)):.1e}")
assert np.linalg.norm(pF.riemannian_hessian(U6, h6) - pQ.riemannian_hessian(U6, h6)) < 1e-12 * np.linalg.norm(HvF)
assert np.linalg.norm(HvQ) < 1e-12 * np.linalg.norm(grad6) and np.linalg.norm(HvF) > 0.1
assert np.linalg.norm(HvF - predicted) < 1e-12 * np.linalg.norm(grad6)


class FixedRankView:
    """pymanopt's PSDFixedRank under the attribute names quadnet's checkers read (d, r, dim, ...)."""

    def __init__(self, d, r):
        self.man = pymanopt.manifolds.PSDFixedRank(d, r)
        self.d, self.r, self.dim = d, r, self.man.dim

    def projection(self, U, Z):
        return self.man.projection(U, Z)

    horizontal_projection = projection

    def vertical_projection(self, U, Z):
        return Z - self.man.projection(U, Z)

    def retraction(self, U, xi):
        return self.man.retraction(U, xi)

    def inner_product(self, U, a, b):
        return self.man.inner_product(U, a, b)

    def euclidean_to_riemannian_gradient(self, U, egrad):
        return self.man.euclidean_to_riemannian_gradient(U, egrad)

    def euclidean_to_riemannian_hessian(self, U, egrad, ehess, xi):
        return self.man.euclidean_to_riemannian_hessian(U, egrad, ehess, xi)

    def random_point(self):
        return np.random.default_rng(0).standard_normal((self.d, self.r))


e6 = M.random_tangent_vector(U6, rng)
for label, man in (("PSDQuotient ", M), ("PSDFixedRank", FixedRankView(d, r))):
    out = check_hessian(man, loss6, U6, h6, eta=e6)
    print(f"check_hessian on {label}: slope {out['slope']:.4f}, symmetry {out['symmetry']:.1e}, "
          f"vertical {out['vertical']:.1e}")
    assert abs(out["slope"] - 3) < 0.1             # both pass the Taylor test along horizontal xi
    assert (out["vertical"] < 1e-12) == (label.strip() == "PSDQuotient")

# %% [markdown]
# Now the assembled matrix, at a point near the minimiser where the true (effective) Hessian is positive
# definite. The $dr\times dr$ matrix of `PSDQuotient`'s Hessian is symmetric with eigenvalues "effective
# spectrum plus $r(r-1)/2$ zeros". `PSDFixedRank`'s is not symmetric. Its eigenvalues happen to be right (in the
# splitting $\mathcal{H}_U\oplus\mathcal{V}_U$ the matrix is block upper triangular: outputs are horizontal), but its
# symmetric part — what `eigh`, a Lanczos solver or a "is this a minimum?" test works with — has a spurious
# negative eigenvalue.

# %%
U7 = U_min + 0.1 * rng.standard_normal((d, r))


def ambient_matrix(problem, U):
    """Column i r + j is the Riemannian Hessian applied to the basis matrix E_ij (row-major, §0.3)."""
    return np.column_stack([problem.riemannian_hessian(U, E.reshape(U.shape)).ravel()
                            for E in np.eye(U.size)])


HQ, HF = ambient_matrix(pQ, U7), ambient_matrix(pF, U7)
eff = np.linalg.eigvalsh(quadnet.effective_hessian(loss6, U7))
print(f"effective Hessian at U (n_h = {eff.size}): smallest eigenvalues {np.round(eff[:3], 4)}")
for label, H in (("PSDQuotient ", HQ), ("PSDFixedRank", HF)):
    sym_eigs = np.linalg.eigvalsh((H + H.T) / 2)
    eigs = np.sort(np.linalg.eigvals(H).real)
    print(f"{label}: ||H - H^T||/||H|| = {np.linalg.norm(H - H.T) / np.linalg.norm(H):.1e}; "
          f"symmetric part, 3 smallest eigenvalues {np.array2string(sym_eigs[:3], precision=4, suppress_small=True)}; "
          f"eigenvalues of H match 'effective + zeros': "
          f"{np.allclose(eigs, np.sort(np.r_[eff, np.zeros(r * (r - 1) // 2)]), atol=1e-9)}")
assert eff[0] > 0                                     # a genuine local minimum region
assert np.linalg.norm(HQ - HQ.T) < 1e-12 * np.linalg.norm(HQ)
assert np.linalg.eigvalsh((HF + HF.T) / 2)[0] < -1e-3 # the symmetrised PSDFixedRank matrix is indefinite

# %% [markdown]
# Finally, trust regions. Inside its truncated conjugate-gradient loop pymanopt applies the Hessian to
# the gradient and to combinations of earlier Hessian outputs, all horizontal; then $\Omega = 0$ and the output-only
# projection is harmless. We record the vertical fraction $\lVert P_v\xi\rVert/\lVert\xi\rVert$ of every direction
# trust regions hands the Hessian on `PSDFixedRank`.

# %%
seen = []


class RecordingLoss(FrobeniusLoss):
    """The same loss; each Hessian-vector product records the vertical fraction of its direction."""

    def factor_hvp(self, U, xi):
        seen.append(np.linalg.norm(M.vertical_projection(U, xi)) / max(np.linalg.norm(xi), 1e-300))
        return super().factor_hvp(U, xi)


res = pymanopt.optimizers.TrustRegions(verbosity=0, max_iterations=500).run(
    quadnet.pymanopt_problem(RecordingLoss(Q_tgt), fixed), initial_point=U0.copy())
print(f"TrustRegions on PSDFixedRank: {res.iterations} iterations, {len(seen)} Hessian applications, "
      f"largest vertical fraction of a direction {max(seen):.1e}")
# horizontal to rounding: pymanopt's projection (Bartels-Stewart) leaves ~eps kappa(U)^2 of vertical
# part, which tCG's recursions can grow by a few orders; 1e-8 would still be a harmless Hessian error
assert max(seen) < 1e-8

# %% [markdown]
# So the pitfall is invisible to the solvers that only feed horizontal directions and to a Taylor test
# along a horizontal direction. It shows up in Hessian checks that probe vertical directions, in spectra
# and definiteness tests computed on the ambient space, and in any code that hands the Hessian a direction
# that has not been projected first.

# %% [markdown]
# ### Exercise 5: repair pymanopt's Hessian rule
#
# Write the corrected conversion `hess_fixed(U, egrad, ehess, xi)` using only `PSDFixedRank.projection`
# and one Lyapunov solve, from the identity $\nabla^2L[P_h\xi] = \nabla^2L[\xi] - \nabla L\,\Omega$. Check that it vanishes
# on vertical directions, agrees with `PSDQuotient.euclidean_to_riemannian_hessian` on random (non-horizontal)
# directions, and makes the assembled ambient matrix of Section 6 symmetric with a positive semidefinite
# symmetric part.

# %% [markdown]
# :::{dropdown} Solution
# Split $\xi = P_h\xi + U\Omega$ with $G\Omega + \Omega G = U^\top\xi - \xi^\top U$ (quadnet theory §1.4). By linearity and the
# invariance identity, $\nabla^2L[P_h\xi] = \nabla^2L[\xi] - \nabla^2L[U\Omega] = \texttt{ehess} - \texttt{egrad}\,\Omega$, so
# the correct Riemannian Hessian $P_h\nabla^2L[P_h\xi]$ is `projection(U, ehess - egrad @ Omega)`: no second Hessian
# evaluation is needed. On a vertical $\xi = U\Omega$ it gives $P_h(\nabla L\,\Omega - \nabla L\,\Omega) = 0$. The assembled
# matrix is then $P_h\nabla^2L P_h$ in the ambient basis, which is symmetric because $P_h$ is an orthogonal projection
# and $\nabla^2L$ is symmetric; its nonzero eigenvalues are those of the effective Hessian, positive near this minimiser.
# :::

# %% tags=["solution", "hide-cell"]
def hess_fixed(U, egrad, ehess, xi):
    """P_h(ehess[P_h xi]) from ehess[xi]: pymanopt's projection plus one Lyapunov solve."""
    G_ = U.T @ U
    Omega = scipy.linalg.solve_continuous_lyapunov(G_, U.T @ xi - xi.T @ U)
    return fixed.projection(U, ehess - egrad @ Omega)


rng5 = np.random.default_rng(5)
g7 = loss6.factor_gradient(U7)
worst = 0.0
for _ in range(5):
    z = rng5.standard_normal((d, r))
    a = hess_fixed(U7, g7, loss6.factor_hvp(U7, z), z)
    b = M.euclidean_to_riemannian_hessian(U7, g7, loss6.factor_hvp(U7, z), z)
    worst = max(worst, np.linalg.norm(a - b) / np.linalg.norm(b))
vert = U7 @ Om6
zero = hess_fixed(U7, g7, loss6.factor_hvp(U7, vert), vert)
H_rep = np.column_stack([hess_fixed(U7, g7, loss6.factor_hvp(U7, E.reshape(d, r)), E.reshape(d, r)).ravel()
                         for E in np.eye(d * r)])
sym_min = np.linalg.eigvalsh((H_rep + H_rep.T) / 2)[0]
print(f"repaired vs PSDQuotient on random directions: {worst:.1e} (relative)")
print(f"repaired Hessian on a vertical direction: {np.linalg.norm(zero):.1e}")
print(f"assembled repaired matrix: asymmetry {np.linalg.norm(H_rep - H_rep.T) / np.linalg.norm(H_rep):.1e}, "
      f"smallest eigenvalue of its symmetric part {sym_min:.1e}")
# Bartels-Stewart and eigh solve the same Lyapunov equation: they differ by ~kappa(U)^2 eps relative
tol7 = 1e3 * EPS * np.linalg.cond(U7) ** 2
assert worst < tol7
assert np.linalg.norm(zero) < tol7 * np.linalg.norm(g7) * np.linalg.norm(vert)
assert np.linalg.norm(H_rep - H_rep.T) < tol7 * np.linalg.norm(H_rep)
assert sym_min > -tol7 * np.linalg.norm(H_rep)        # only the r(r-1)/2 zeros at the bottom

# %% [markdown]
# ### What to take away
#
# * A tangent vector of $\mathcal{M}_r^+$ is a horizontal $d\times r$ matrix: the unique, and shortest, solution of
#   $\xi U^\top + U\xi^\top = \dot Q$. At $UR$ it is $\xi R$; lengths do not depend on the representative, and in
#   predictor terms they are the Bures–Wasserstein metric.
# * Geodesics are straight: $\exp(U, \xi) = U + \xi$, $\log$ by alignment. The segment is a shortest path up to
#   $t_c = -1/\mu_{\min}(G^{-1}U^\top\xi)$, where it loses rank if $d = r$; the code returns whatever factor the line
#   reaches, rank-deficient or zero.
# * Distances: the aligned difference and `bures_wasserstein` agree with the trace formula, and stay accurate
#   where the trace formula cancels.
# * The Riemannian gradient is the factor gradient $2SU$; the Hessian is $P_h\nabla^2L$ on horizontal vectors.
#   Taylor slopes 2 and 3 check both; a check on vertical directions is what catches a Hessian that is
#   right only on the tangent space.
# * Next: the [curvature of the quotient](curvature_of_the_quotient.ipynb), where the vertical part of the
#   bracket of two horizontal directions — the $\Omega$ of a Lyapunov solve once more — becomes O'Neill's
#   sectional curvature.
