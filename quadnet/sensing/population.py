r"""The population effective Hessian of Gaussian rank-one sensing (quadnet theory §4).

Population form (quadnet theory §4). For Gaussian rank-one sensing the population loss has, at a
zero-residual point ``Q* = U U^T``, the Hessian form ``2 ||zeta||_F^2 + tr(zeta)^2``,
``zeta = xi U^T + U xi^T``, i.e. the operator ``xi -> 2 T(zeta) U = 4 (xi G + U xi^T U) +
4 tr(U^T xi) U`` with ``G = U^T U``. Its spectrum in terms of the eigenvalues ``g_1..g_r`` of
``G`` (derivation in ``docs/curvature.md``):

* ``4 g_j`` with multiplicity ``d - r`` each (``j = 1..r``; directions ``P_perp B``);
* ``4 (g_i + g_j)`` for ``i < j`` (the ``r(r-1)/2`` symmetric off-diagonal directions);
* the ``r`` eigenvalues of ``8 diag(g) + 4 w w^T``, ``w = sqrt(g)`` (the diagonal directions);

``r = 1``: ``4 ||u||^2`` (``d - 1`` times) and ``12 ||u||^2``.

Derivations (spectrum and explicit inverse) in ``docs/curvature.md`` §2 and §4. The inverse is
the ``"population"`` preconditioner of :func:`quadnet.effective_spectrum`.
"""

from __future__ import annotations

import numpy as np

from quadnet._linalg import sym
from quadnet._validation import RANK_RTOL, Array, Bind, Boolean, Factor, validate_params
from quadnet.geometry.manifold import PSDQuotient

__all__ = [
    "PopulationInverse",
    "population_effective_hessian",
    "population_effective_hvp",
    "population_effective_inverse",
    "population_effective_spectrum",
]


def _population_hvp(U: np.ndarray, Xi: np.ndarray) -> np.ndarray:
    """``4 (xi G + U xi^T U) + 4 tr(U^T xi) U`` for one ``xi`` or a stack ``(n, d, r)`` (unchecked)."""
    UtXi = U.T @ Xi
    out = 4.0 * (Xi @ (U.T @ U) + U @ np.swapaxes(UtXi, -1, -2))
    out += 4.0 * np.trace(UtXi, axis1=-2, axis2=-1)[..., None, None] * U
    return out


@validate_params({"U": Factor(full_rank=False), "xi": Array(shape=("d", "r"))})
def population_effective_hvp(U, xi) -> np.ndarray:
    r"""The population Hessian operator of Gaussian sensing at ``Q* = U U^T`` (quadnet theory §4).

    ``xi -> 2 T(zeta) U = 4 (xi G + U xi^T U) + 4 tr(U^T xi) U``, ``zeta = xi U^T + U xi^T``,
    ``G = U^T U``, ``T(H) = 2 H + tr(H) I``: the operator of the form ``2 ||zeta||^2 + tr(zeta)^2``
    (``O(d r^2)``, never ``d x d``). Vertical ``xi`` give ``zeta = 0`` and hence zero.

    Parameters
    ----------
    U : array_like, shape (d, r)
        A factor of full column rank.
    xi : array_like, shape (d, r)
        A direction.

    Returns
    -------
    numpy.ndarray, shape (d, r)
        ``2 T(zeta) U``, the population Hessian of the factor loss applied to ``xi``.

    Examples
    --------
    >>> import numpy as np
    >>> population_effective_hvp(np.array([[1.0], [0.0]]), np.array([[1.0], [0.0]])).ravel().tolist()
    [12.0, 0.0]
    """
    return _population_hvp(U, xi)


@validate_params({"U": Factor()})
def population_effective_hessian(U) -> np.ndarray:
    r"""The population effective Hessian of Gaussian sensing, an ``n_h x n_h`` matrix.

    In the basis ``PSDQuotient.horizontal_basis(U)`` of ``H_U`` (``n_h = d r - r(r-1)/2``), the
    matrix of the quadratic form (quadnet theory §3, §4)

    .. math:: \xi \mapsto 2 \|\zeta\|_F^2 + \operatorname{tr}(\zeta)^2,
              \qquad \zeta = \xi U^\top + U \xi^\top ,

    i.e. ``H_pop xi = 2 T(zeta) U`` (:func:`population_effective_hvp`); its spectrum is
    :func:`population_effective_spectrum`.

    Parameters
    ----------
    U : array_like, shape (d, r)
        A factor of full column rank.

    Returns
    -------
    numpy.ndarray, shape (n_h, n_h)
        Symmetric positive definite.


    Examples
    --------
    >>> import numpy as np
    >>> population_effective_hessian(np.array([[1.0], [0.0]]))
    array([[12.,  0.],
           [ 0.,  4.]])
    """
    d, r = U.shape
    B = PSDQuotient(d, r).horizontal_basis(U)
    out = _population_hvp(U, B.T.reshape(-1, d, r))             # one column per basis vector
    return sym(B.T @ out.reshape(len(out), -1).T)


@validate_params({"U": Factor(), "grouped": Boolean()})
def population_effective_spectrum(U, *, grouped: bool = False):
    r"""Closed-form spectrum of the population effective Hessian at ``Q* = U U^T``.

    With ``g_1 <= ... <= g_r`` the eigenvalues of ``G = U^T U`` (derivation in
    ``docs/curvature.md``):

    * ``"normal"``: ``4 g_j``, each with multiplicity ``d - r``;
    * ``"offdiagonal"``: ``4 (g_i + g_j)``, ``i < j``;
    * ``"diagonal"``: the eigenvalues of ``8 diag(g) + 4 sqrt(g) sqrt(g)^T`` (they interlace
      ``8 g``; for equal ``g_j = g``: ``8 g`` (``r - 1`` times) and ``(8 + 4 r) g``).

    ``r = 1``: ``4 ||u||^2`` (``d - 1`` times) and ``12 ||u||^2``. The smallest is
    ``4 g_1 = 4 sigma_min(U)^2`` when ``d > r``.

    Returns all ``n_h`` eigenvalues ascending, or with ``grouped=True`` a dict of the three
    groups (``"normal"`` lists each ``4 g_j`` once; key ``"multiplicity_normal"`` = ``d - r``).

    Parameters
    ----------
    U : array_like, shape (d, r)
        A factor of full column rank.
    grouped : bool, default False
        Return the three groups of the closed form instead of one sorted array.

    Returns
    -------
    numpy.ndarray or dict


    Examples
    --------
    >>> import numpy as np
    >>> population_effective_spectrum(np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])).tolist()
    [4.0, 4.0, 8.0, 8.0, 16.0]
    """
    d, r = U.shape
    g = np.linalg.eigvalsh(U.T @ U)
    normal = 4.0 * g
    iu = np.triu_indices(r, 1)
    offdiag = np.sort(4.0 * (g[:, None] + g[None, :])[iu])
    w = np.sqrt(g)
    diag = np.linalg.eigvalsh(8.0 * np.diag(g) + 4.0 * np.outer(w, w))
    if grouped:
        return {"normal": normal, "multiplicity_normal": d - r, "offdiagonal": offdiag,
                "diagonal": diag}
    return np.sort(np.concatenate([np.repeat(normal, d - r), offdiag, diag]))


class PopulationInverse:
    r"""The inverse population effective Hessian at ``U``, applied in ``O(d r^2 + r^3)``.

    ``Z -> H_pop^{-1} P_h Z`` on the horizontal space ``H_U`` (quadnet theory §3, §4; see
    :func:`population_effective_inverse` for the derivation): one thin SVD ``U = W S V^T`` at
    construction, then a Lyapunov projection, a diagonal solve with a Sherman-Morrison
    correction and a scaling of the part orthogonal to ``range(U)``. It is the preconditioner
    that :meth:`GaussianSensing.default_preconditioner` returns.

    Parameters
    ----------
    U : array_like, shape (d, r)
        A factor of full column rank.


    Examples
    --------
    >>> import numpy as np
    >>> from quadnet import PSDQuotient
    >>> from quadnet.sensing import population_effective_hvp
    >>> U = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    >>> Z = np.arange(6.0).reshape(3, 2)
    >>> xi = PopulationInverse(U)(Z)
    >>> Zh = PSDQuotient(3, 2).horizontal_projection(U, Z)
    >>> bool(np.allclose(population_effective_hvp(U, xi), Zh))
    True
    """

    @validate_params({"U": Factor()})
    def __init__(self, U):
        # the rank test also runs inside validated calls (the preconditioner of a
        # rank-deficient point), where the table's check is skipped
        self.W, self.s, self.Vt = np.linalg.svd(U, full_matrices=False)
        if not self.s[-1] > RANK_RTOL * self.s[0]:
            raise ValueError(f"U is numerically rank deficient: sigma_min/sigma_max = "
                             f"{self.s[-1] / max(self.s[0], np.finfo(float).tiny):.3e} <= "
                             f"{RANK_RTOL:g}; the population inverse needs full column rank")
        with np.errstate(over="ignore", under="ignore"):
            self.g = self.s**2
            self.gsum = self.g[:, None] + self.g[None, :]
        if not (np.all(np.isfinite(self.gsum)) and self.g[-1] > 0):
            raise ValueError(f"U has singular values in [{self.s[-1]:.3g}, {self.s[0]:.3g}]: "
                             f"their squares (the population Hessian's scale) leave the float64 "
                             f"range; rescale U")
        self.d, self.r = U.shape

    @validate_params({"self": Bind(d="d", r="r"), "Z": Array(shape=("d", "r"))})
    def __call__(self, Z: np.ndarray) -> np.ndarray:
        s, g, r = self.s, self.g, self.r
        Zt = Z @ self.Vt.T                           # xi V = W A + W_perp B
        A = self.W.T @ Zt
        R = Zt - self.W @ A                          # W_perp B, without forming W_perp
        K = s[:, None] * A
        A = A - s[:, None] * ((K - K.T) / self.gsum)  # P_h: S A symmetric (Lyapunov in V-frame)
        C = s[:, None] * A
        C = sym(C)                                  # C' = S A' (symmetric to rounding)
        Cn = C / (4.0 * self.gsum)                   # off-diagonal: C_ij = C'_ij / (4 (g_i + g_j))
        c = np.diag(C) / (8.0 * g)                   # diagonal: (8 diag(g) + 4 g 1^T)^{-1} c'
        c -= 0.5 * c.sum() / (1.0 + 0.5 * r)         # Sherman-Morrison
        np.fill_diagonal(Cn, c)
        out = self.W @ (Cn / s[:, None]) + R / (4.0 * g)   # A = S^{-1} C; B_j = B'_j / (4 g_j)
        return out @ self.Vt


@validate_params({"U": Factor(), "eta": Array(shape=("d", "r"))})
def population_effective_inverse(U, eta) -> np.ndarray:
    r"""``xi = H_pop^{-1} P_h(eta)``: the inverse of the population effective Hessian on ``H_U``.

    ``H_pop xi = 2 T(zeta) U`` (:func:`population_effective_hvp`, quadnet theory §4) maps ``H_U``
    to itself and is SPD there for full-rank ``U``. With the thin SVD ``U = W S V^T``
    (``g = s^2``) write ``xi V = W A + W_perp B``; horizontality is ``C = S A`` symmetric and

    * ``B -> 4 B diag(g)`` (column ``j`` times ``4 g_j``);
    * ``C -> 4 (C G + G C) + 4 tr(C) G``: off-diagonal ``C_ij -> 4 (g_i + g_j) C_ij``,
      diagonal ``c -> (8 diag(g) + 4 g 1^T) c``,

    so the inverse is explicit (Sherman–Morrison on the diagonal:
    ``c = c'/(8 g) - (1/2) 1 sum_k (c'_k / (8 g_k)) / (1 + r/2)``), ``O(d r^2 + r^3)``,
    ``W_perp`` never formed (docs/curvature.md §4). ``eta`` is first projected on ``H_U``.
    Used as the ``"population"`` preconditioner of :func:`effective_spectrum`.

    Parameters
    ----------
    U : array_like, shape (d, r)
        A factor of full column rank.
    eta : array_like, shape (d, r)
        The right-hand side (projected onto ``H_U`` first).

    Returns
    -------
    numpy.ndarray, shape (d, r)
        The horizontal ``xi`` with ``H_pop xi = P_h(eta)``.


    Examples
    --------
    >>> import numpy as np
    >>> population_effective_inverse(np.array([[1.0], [0.0]]), np.array([[12.0], [0.0]])).ravel().tolist()
    [1.0, 0.0]
    """
    return PopulationInverse(U)(eta)
