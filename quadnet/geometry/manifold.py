r"""Quotient geometry of rank-r PSD matrices, :math:`M_r^+ \cong F_{d,r} / O(r)` (THEORY.md §1).

A point is represented by a full-column-rank factor ``U`` (``d x r``); the predictor is
``Q = U U^T``. All ``U R`` with ``R`` in ``O(r)`` represent the same point (the *fibre*).
Tangent vectors are represented by their *horizontal lifts*: ``d x r`` matrices ``xi`` with
``U^T xi`` symmetric. The metric is the Frobenius inner product of horizontal lifts
(Bures–Wasserstein up to a constant factor).

Lyapunov solves. Every projection needs the skew ``Omega`` with
``G Omega + Omega G = K`` (``G = U^T U``, ``K`` skew). With ``G = E diag(s) E^T`` this is
``Omega = E [ (E^T K E)_{ij} / (s_i + s_j) ] E^T``: one ``r x r`` symmetric eigendecomposition,
``O(d r^2 + r^3)``, exact for a symmetric positive-definite ``G``. Conditioning: the divisor
is at least ``2 sigma_min(U)^2``, so the solve amplifies errors by at most
``kappa(U)^2``; factors with ``sigma_min/sigma_max <= RANK_RTOL`` (``1e-10``) are refused with a
``ValueError`` because the quotient is not a manifold there (the rank-deficient boundary).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from pymanopt.manifolds.manifold import Manifold

from quadnet.geometry._kernels import horizontal_dim, vertical_dim
from quadnet._validation import as_factor, as_int, as_matrix, as_symmetric, vec

__all__ = ["PSDQuotient", "align", "bures_wasserstein", "horizontal_dimension", "lyapunov_skew"]


def horizontal_dimension(d: int, r: int) -> int:
    """``n_h = d r - r(r-1)/2 = dim M_r^+`` (quadnet theory §1).

    Examples
    --------
    >>> horizontal_dimension(5, 2)
    9
    """
    d = as_int(d, "d", minimum=1)
    r = as_int(r, "r", minimum=1, maximum=d)
    return horizontal_dim(d, r)


def _eig_gram(U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s, E = np.linalg.eigh(U.T @ U)
    return s, E


def lyapunov_skew(U: np.ndarray, K: np.ndarray, eig=None) -> np.ndarray:
    """Solve ``(U^T U) Omega + Omega (U^T U) = K`` by the eigendecomposition of ``U^T U``.

    ``K`` skew gives ``Omega`` skew; ``K`` symmetric gives ``Omega`` symmetric. ``eig``, if
    given, is ``numpy.linalg.eigh(U.T @ U)`` computed once by a caller that solves many
    equations at the same ``U`` (matrix-free Hessians). See the module docstring for
    conditioning.
    """
    s, E = _eig_gram(U) if eig is None else eig
    Kt = E.T @ K @ E
    return E @ (Kt / (s[:, None] + s[None, :])) @ E.T


def align(U, V) -> np.ndarray:
    r"""Procrustes alignment over ``O(r)``: ``argmin_{R in O(r)} ||U R - V||_F = A B^T``.

    ``U^T V = A Sigma B^T`` (SVD). Improper rotations (``det R = -1``) are allowed: aligning
    over ``SO(r)`` only, as geomstats does, gives wrong quotient distances (THEORY.md §7).
    """
    U = as_matrix(U, "U")
    V = as_matrix(V, "V", shape=U.shape)
    A, _, Bt = np.linalg.svd(U.T @ V)
    return A @ Bt


def bures_wasserstein(Q1, Q2) -> float:
    r"""Bures–Wasserstein distance of PSD matrices from their square roots (no factors).

    ``d^2 = tr Q1 + tr Q2 - 2 tr (Q1^{1/2} Q2 Q1^{1/2})^{1/2}``. An independent route to
    :meth:`PSDQuotient.dist` used by the conformance suite.
    """
    Q1 = as_symmetric(Q1, "Q1")
    Q2 = as_symmetric(Q2, "Q2", Q1.shape[0])
    w, E = np.linalg.eigh(Q1)
    root1 = (E * np.sqrt(np.clip(w, 0, None))) @ E.T
    mid = np.linalg.eigvalsh(root1 @ Q2 @ root1)
    mid[mid < 1e-14 * max(mid.max(), 0.0)] = 0.0  # rank-deficient product: rounding noise
    val = np.trace(Q1) + np.trace(Q2) - 2 * np.sum(np.sqrt(np.clip(mid, 0, None)))
    return float(np.sqrt(max(val, 0.0)))


class PSDQuotient(Manifold):
    r"""The manifold :math:`M_r^+` of ``d x d`` PSD matrices of rank ``r`` as ``F_{d,r}/O(r)``.

    Points: full-column-rank ``U`` (``d x r``), predictor ``Q = U U^T``.
    Vertical space ``V_U = {U Omega : Omega^T = -Omega}`` (dimension ``r(r-1)/2``).
    Horizontal space ``H_U = {xi : U^T xi symmetric}`` (dimension
    ``n_h = d r - r(r-1)/2 = dim M_r^+``). Metric: Frobenius on horizontal lifts.

    Unlike pymanopt's ``PSDFixedRank`` (THEORY.md §7), the Riemannian Hessian projects its
    input direction too (``P_h o Hess o P_h``), ``exp``/``retraction`` refuse to leave the
    full-rank stratum, and ``log``/``dist`` align over the full ``O(r)``.

    Args:
        d: ambient dimension (rows of ``U``).
        r: rank (columns of ``U``), ``1 <= r <= d``.
        seed: seed or ``numpy.random.Generator`` for :meth:`random_point` and
            :meth:`random_tangent_vector` (each also accepts its own ``rng``).
    """

    def __init__(self, d: int, r: int, seed=None):
        d = as_int(d, "d", minimum=1)
        r = as_int(r, "r", minimum=1)
        if r > d:
            raise ValueError(f"r must satisfy 1 <= r <= d, got r = {r} > d = {d}")
        self.d, self.r = d, r
        self._rng = np.random.default_rng(seed)
        super().__init__(f"PSDQuotient(d={d}, r={r})", horizontal_dim(d, r))

    # ------------------------------------------------------------------ helpers
    def _point(self, U, name: str = "U") -> np.ndarray:
        return as_factor(U, name, d=self.d, r=self.r)

    def _vector(self, Z, name: str) -> np.ndarray:
        return as_matrix(Z, name, shape=(self.d, self.r))

    @property
    def typical_dist(self) -> float:
        return float(np.sqrt(self.dim))

    # ------------------------------------------------------------ fibre bundle
    def predictor(self, U) -> np.ndarray:
        """``pi(U) = U U^T``."""
        U = self._point(U)
        return U @ U.T

    def differential(self, U, xi) -> np.ndarray:
        """``D pi(U)[xi] = xi U^T + U xi^T``; its kernel is the vertical space."""
        U = self._point(U)
        xi = self._vector(xi, "xi")
        P = xi @ U.T
        return P + P.T

    def vertical_projection(self, U, Z) -> np.ndarray:
        """``P_v(Z) = U Omega`` with ``(U^T U) Omega + Omega (U^T U) = U^T Z - Z^T U``."""
        U = self._point(U)
        Z = self._vector(Z, "Z")
        K = U.T @ Z
        return U @ lyapunov_skew(U, K - K.T)

    def horizontal_projection(self, U, Z) -> np.ndarray:
        """``P_h(Z) = Z - P_v(Z)``, the Frobenius-orthogonal projection onto ``H_U``."""
        return self._vector(Z, "Z") - self.vertical_projection(U, Z)

    def projection(self, point, vector) -> np.ndarray:
        """pymanopt's tangent projection: the horizontal projection."""
        return self.horizontal_projection(point, vector)

    to_tangent_space = projection

    def lift(self, U, Qdot) -> np.ndarray:
        r"""Horizontal lift of a tangent vector ``Qdot`` at ``Q = U U^T``.

        The unique ``xi`` in ``H_U`` with ``xi U^T + U xi^T = Qdot``:
        ``xi = P_h(Qdot U G^{-1} - 1/2 U G^{-1} U^T Qdot U G^{-1})``, ``G = U^T U``.
        The bracket has differential ``Qdot - (I-P) Qdot (I-P)`` (``P = U G^{-1} U^T``),
        which is ``Qdot`` for tangent ``Qdot``; for a symmetric ``Qdot`` off the tangent space
        this is the lift of its orthogonal projection onto ``T_Q M_r^+``.
        """
        U = self._point(U)
        Qdot = as_symmetric(Qdot, "Qdot", self.d)
        G_inv = np.linalg.inv(U.T @ U)
        B = Qdot @ U @ G_inv
        xi0 = B - 0.5 * U @ (G_inv @ (U.T @ B))
        return self.horizontal_projection(U, xi0)

    def align(self, U, V) -> np.ndarray:
        """``R = argmin_{R in O(r)} ||U R - V||_F`` (see :func:`align`)."""
        return align(self._point(U), self._point(V, "V"))

    def horizontal_basis(self, U) -> np.ndarray:
        """A ``(d r) x n_h`` matrix whose columns are a Frobenius-orthonormal basis of ``H_U``.

        Row-major vectorisation (:func:`quadnet._validation.vec`). Built as the orthogonal
        complement, by a full QR, of the vertical vectors ``vec(U (e_a e_b^T - e_b e_a^T))``.
        """
        U = self._point(U)
        d, r = self.d, self.r
        k = vertical_dim(r)
        if k == 0:
            return np.eye(d * r)
        vert = np.empty((d * r, k))
        col = 0
        for a in range(r):
            for b in range(a + 1, r):
                Om = np.zeros((r, r))
                Om[a, b], Om[b, a] = 1.0, -1.0
                vert[:, col] = vec(U @ Om)
                col += 1
        Qfull, _ = scipy.linalg.qr(vert, mode="full")
        return Qfull[:, k:]

    # ------------------------------------------------------------------ metric
    def inner_product(self, point, tangent_vector_a, tangent_vector_b) -> float:
        """``g_Q(xi, eta) = <xi, eta>_F`` on horizontal lifts."""
        return float(np.tensordot(tangent_vector_a, tangent_vector_b, axes=2))

    def norm(self, point, tangent_vector) -> float:
        return float(np.linalg.norm(tangent_vector))

    def dist(self, point_a, point_b) -> float:
        """``dist(Q1, Q2) = min_{R in O(r)} ||U1 R - U2||_F`` (Bures–Wasserstein)."""
        U = self._point(point_a, "point_a")
        V = self._point(point_b, "point_b")
        return float(np.linalg.norm(U @ align(U, V) - V))

    # ------------------------------------------------------- maps and motion
    def _checked_point(self, W, what: str) -> np.ndarray:
        try:
            return self._point(W, what)
        except ValueError as exc:
            raise ValueError(f"{what} leaves the full-rank stratum: {exc}") from None

    def exp(self, point, tangent_vector) -> np.ndarray:
        """``U + xi``: horizontal lines project to geodesics of ``M_r^+`` (Massart–Absil) while
        they stay full rank; a result that loses rank raises ``ValueError``."""
        U = self._point(point, "point")
        return self._checked_point(U + self._vector(tangent_vector, "tangent_vector"),
                                   "exp(point, tangent_vector)")

    def retraction(self, point, tangent_vector) -> np.ndarray:
        """Same as :meth:`exp` (a second-order retraction)."""
        return self.exp(point, tangent_vector)

    def log(self, point_a, point_b) -> np.ndarray:
        """``log_U(V) = V R - U`` with ``R = align(V, U)``; horizontal at ``U``
        (``U^T V R`` is symmetric PSD) and ``exp(U, log_U(V)) = V R`` represents ``V V^T``."""
        U = self._point(point_a, "point_a")
        V = self._point(point_b, "point_b")
        return V @ align(V, U) - U

    def transport(self, point_a, point_b, tangent_vector) -> np.ndarray:
        """Vector transport by horizontal projection at ``point_b``."""
        return self.horizontal_projection(point_b, tangent_vector)

    def random_point(self, rng=None) -> np.ndarray:
        """A Gaussian ``d x r`` factor (full rank with probability one)."""
        gen = self._rng if rng is None else np.random.default_rng(rng)
        return gen.standard_normal((self.d, self.r))

    def random_tangent_vector(self, point, rng=None) -> np.ndarray:
        """A unit-norm horizontal vector: the projection of a Gaussian, normalised."""
        gen = self._rng if rng is None else np.random.default_rng(rng)
        xi = self.horizontal_projection(point, gen.standard_normal((self.d, self.r)))
        return xi / np.linalg.norm(xi)

    def zero_vector(self, point) -> np.ndarray:
        return np.zeros((self.d, self.r))

    def euclidean_to_riemannian_gradient(self, point, euclidean_gradient) -> np.ndarray:
        """``P_h(egrad)`` (already horizontal for an O(r)-invariant cost)."""
        return self.horizontal_projection(point, euclidean_gradient)

    def euclidean_to_riemannian_hessian(self, point, euclidean_gradient, euclidean_hessian,
                                        tangent_vector) -> np.ndarray:
        """``P_h(ehess[P_h xi])`` for an ``O(r)``-invariant cost, from ``ehess[xi]``.

        pymanopt evaluates the Euclidean Hessian at the raw direction ``xi`` before calling
        this. Differentiating the invariance ``grad L(U R) = grad L(U) R`` along
        ``R = exp(t Omega)`` gives ``ehess[U Omega] = egrad Omega``, so with
        ``P_v(xi) = U Omega``::

            ehess[P_h xi] = ehess[xi] - egrad Omega.

        The input direction is thus projected exactly (pymanopt's ``PSDFixedRank`` only
        projects the output and returns ``P_h(egrad Omega) != 0`` for vertical ``xi``,
        THEORY.md §7). The connection term ``D P_h[xi](egrad)`` is vertical and vanishes
        under the outer ``P_h``.
        """
        U = self._point(point, "point")
        xi = self._vector(tangent_vector, "tangent_vector")
        egrad = self._vector(euclidean_gradient, "euclidean_gradient")
        ehess = self._vector(euclidean_hessian, "euclidean_hessian")
        K = U.T @ xi
        Omega = lyapunov_skew(U, K - K.T)
        return self.horizontal_projection(U, ehess - egrad @ Omega)
