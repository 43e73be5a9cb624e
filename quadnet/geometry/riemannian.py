r"""Curvature and parallel transport of :math:`M_r^+ \cong F_{d,r}/O(r)` (quadnet theory §1).

The projection ``pi(U) = U U^T`` from the flat space ``R^{d x r}`` (Frobenius metric) to
``M_r^+`` (quotient metric, i.e. Bures–Wasserstein) is a Riemannian submersion on the
full-rank stratum. Everything here follows from that fact and O'Neill (1966), "The fundamental
equations of a submersion", Michigan Math. J. 13:

* **Sectional curvature.** For horizontal ``xi, eta`` at ``U``, O'Neill's formula with a flat
  total space reads ``K(xi, eta) = (3/4) ||[X, Y]^v||^2 / |X ^ Y|^2`` for horizontal
  extensions ``X, Y``. The vertical part of the bracket is ``2 A_xi eta`` with
  ``A_xi eta = P_v(D_xi Y) = -U Omega`` and ``(U^T U) Omega + Omega (U^T U) = xi^T eta -
  eta^T xi`` (differentiate ``P_h(U) eta`` in ``U`` along ``xi``; ``Omega(U, eta) = 0`` because
  ``eta`` is horizontal). Hence::

      K(xi, eta) = 3 ||U Omega||_F^2 / (||xi||^2 ||eta||^2 - <xi, eta>^2).

  In the right singular basis ``E`` of ``U`` (``U = P diag(sigma) E^T``, ``lambda = sigma^2``)
  this is ``3 sum_{a<b} C_ab^2 / (lambda_a + lambda_b) / |xi ^ eta|^2`` with
  ``C = E^T (xi^T eta - eta^T xi) E``.
* **Ricci and scalar curvature.** ``Ric(xi, xi) = 3 sum_i ||A_xi e_i||^2 = 3 ||A_xi^*||_HS^2``
  with ``A_xi^*(U W) = -P_h(xi W)`` on the vertical space, whose orthonormal basis is
  ``U W_ab / sqrt(lambda_a + lambda_b)``, ``W_ab = E (e_a e_b^T - e_b e_a^T) E^T``::

      Ric(xi, eta) = 3 sum_{a<b} <P_h(xi W_ab), P_h(eta W_ab)> / (lambda_a + lambda_b),

      scal = 6 sum_{a<b} [d - r + 1 + sum_{i != a,b} lambda_a lambda_b /
                          ((lambda_a + lambda_i)(lambda_b + lambda_i))] / (lambda_a + lambda_b).

* **Bounds** (``r >= 2``): ``0 <= K <= 3 / (lambda_{r-1} + lambda_r)`` and
  ``0 <= Ric(xi, xi) / ||xi||^2 <= 3 sum_{b < r} 1 / (lambda_b + lambda_r)`` (eigenvalues of
  ``Q`` in decreasing order); the sectional bound is attained for every ``d >= r``, the Ricci
  bound when ``d > r``, and ``K = Ric = 0`` along the radial direction ``xi = U`` (``M_r^+``
  is a cone). ``r = 1``: ``K = 0``.
  The bounds stay finite when only ``sigma_r -> 0`` and grow like ``1/(lambda_{r-1} +
  lambda_r)`` when the two smallest singular values vanish together.
* **Parallel transport** along the horizontal geodesic ``U(s) = U + s xi``: the horizontal lift
  ``V(s)`` of a parallel field has vertical derivative (``nabla_X Y = P_h(D_X Y)`` for a
  submersion). Differentiating ``U(s)^T V(s)`` symmetric with ``V' = -U(s) Omega(s)`` gives the
  linear ODE::

      V'(s) = -U(s) Omega(s),   (G(s) Omega + Omega G(s)) = xi^T V - V^T xi,  G(s) = U(s)^T U(s),

  integrated with scipy's ``DOP853`` (an explicit Runge–Kutta method of order 8, Hairer,
  Nørsett & Wanner 1993) at ``rtol = 1e-13``.

* **Complex factors** (the Hermitian quotient ``C^{d x r} / U(r)``, real inner product
  ``<xi, eta> = Re tr(xi^* eta)``): the same derivation with ``A^*`` for ``A^T`` --
  ``D_xi Y = -U DOmega[xi]`` with ``G DOmega + DOmega G = xi^* eta - eta^* xi`` (skew-Hermitian),
  so ``K(xi, eta) = 3 ||U Omega||^2 / (||xi||^2 ||eta||^2 - <xi, eta>^2)`` with that ``Omega``.
  The vertical space is spanned by ``U W`` over a basis of the skew-Hermitian matrices, in the
  right singular basis ``E``: ``E (e_a e_b^T - e_b e_a^T) E^*`` and ``i E (e_a e_b^T + e_b e_a^T)
  E^*`` (``a < b``, ``||U W||^2 = lambda_a + lambda_b``) and ``i E e_a e_a^T E^*``
  (``||U W||^2 = lambda_a``); the Ricci form sums over all of them,
  ``Ric(xi, eta) = 3 sum_W <P_h(xi W), P_h(eta W)> / ||U W||^2``, and the scalar curvature, its
  trace over an orthonormal basis of ``H_U`` (``[A; B]`` with ``Sigma A`` Hermitian in the
  singular bases; the ``B`` block gives ``2 (d - r) ||W||^2``, the ``A`` block
  ``2 + 4 s_ab`` for each off-diagonal ``W`` and ``2 sum_{i != a} lambda_a^2 /
  (lambda_a + lambda_i)^2`` for ``i E e_a e_a^T E^*``), is::

      scal = 12 sum_{a<b} [2 (d - r) + 1 + 2 s_ab] / (lambda_a + lambda_b)
             + 6 sum_a [d - r + sum_{i != a} lambda_a^2 / (lambda_a + lambda_i)^2] / lambda_a,
      s_ab = sum_{i != a,b} lambda_a lambda_b / ((lambda_a + lambda_i)(lambda_b + lambda_i)).

  Unlike the real case, ``r = 1`` is curved
  (``C^d / U(1)`` is the cone over complex projective space): ``K(xi, i xi) > 0`` for ``xi``
  orthogonal to ``U``. Parallel transport solves the same ODE in complex arithmetic.

Derivations, the checks and the figures: ``docs/riemannian.md`` and ``quadnet verify geometry``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.integrate
import scipy.linalg

from quadnet._docstrings import fill
from quadnet._linalg import sym
from quadnet._validation import (RANK_RTOL, Array, Boolean, Factor, Optional, Real, Sequence,
                                 Symmetric, validate_params)
import quadnet.geometry._kernels as K

__all__ = [
    "CurvatureBounds",
    "bures_wasserstein_sectional_curvature",
    "curvature_bounds",
    "distance_expansion_curvature",
    "holonomy",
    "parallel_transport",
    "ricci_curvature",
    "scalar_curvature",
    "sectional_curvature",
]

#: Parameter entries that several functions below document identically (``{{name}}`` lines).
_DOC = {"U": """U : array_like, shape (d, r)
    Full-column-rank factor."""}

#: Relative size of a vertical component (``||P_v xi|| / ||xi||``) above which a direction is
#: refused as not horizontal.
HORIZONTAL_RTOL = 1e-8
#: ``|xi ^ eta| / (||xi|| ||eta||)`` below which two directions are refused as parallel.
PARALLEL_RTOL = 1e-10


# ------------------------------------------------------------------ raw kernels
def _vertical_part(U: np.ndarray, Z: np.ndarray) -> np.ndarray:
    return K.vertical_part(K.frame(U), Z)


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """The real inner product ``Re tr(a^* b)`` (``tr(a^T b)`` for real arrays)."""
    if a.dtype.kind == "c" or b.dtype.kind == "c":
        return float(np.vdot(a, b).real)
    return float(np.sum(a * b))


def _promote(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """All arrays complex128 when one of them is complex (a real factor is a point of the
    complex quotient too), else as given."""
    if any(a.dtype.kind == "c" for a in arrays):
        return tuple(a.astype(np.complex128, copy=False) for a in arrays)
    return arrays


def _plane(xi: np.ndarray, eta: np.ndarray) -> tuple[float, float]:
    """``(|xi ^ eta|^2, |xi ^ eta| / (||xi|| ||eta||))`` without cancellation.

    ``|xi ^ eta| = ||xi|| ||eta_perp||`` with ``eta_perp = eta - (<eta, xi>/||xi||^2) xi``
    (one Gram-Schmidt step): an exactly parallel pair gives ``eta_perp`` at rounding level
    (``~ eps ||eta||``), where ``||xi||^2 ||eta||^2 - <xi, eta>^2`` cancels to any sign.
    The one area used both by the parallel test and by the curvature formulas.
    """
    nx2 = _dot(xi, xi)
    if nx2 == 0.0:
        return 0.0, 0.0
    perp = eta - (_dot(xi, eta) / nx2) * xi
    np2 = _dot(perp, perp)
    ne2 = _dot(eta, eta)
    rel = math.sqrt(np2 / ne2) if ne2 > 0 else 0.0
    return nx2 * np2, rel


def _sectional(U: np.ndarray, xi: np.ndarray, eta: np.ndarray) -> float:
    """O'Neill's formula on raw horizontal ``xi, eta`` (no checks)."""
    C = K.ct(xi) @ eta
    UO = U @ K.lyapunov(K.frame(U), C - K.ct(C))
    return 3.0 * _dot(UO, UO) / _plane(xi, eta)[0]


def _gram_eig_desc(U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues ``lambda = sigma^2`` of ``U^T U`` in decreasing order and the vectors ``E``."""
    s, E = np.linalg.eigh(K.ct(U) @ U)
    return s[::-1], E[:, ::-1]


def _skew_basis(E: np.ndarray, lam: np.ndarray):
    """``(W, ||U W||^2)`` over the orthogonal basis of the vertical generators in the eigenbasis
    ``E`` of ``U^* U``: ``E (e_a e_b^T - e_b e_a^T) E^*`` (``a < b``) and, for complex ``E``,
    also ``i E (e_a e_b^T + e_b e_a^T) E^*`` and ``i E e_a e_a^T E^*``."""
    r = lam.size
    cx = E.dtype.kind == "c"
    for a in range(r):
        if cx:
            W = 1j * np.outer(E[:, a], E[:, a].conj())
            yield W, lam[a]
        for b in range(a + 1, r):
            A = np.outer(E[:, a], E[:, b].conj())
            yield A - K.ct(A), lam[a] + lam[b]
            if cx:
                yield 1j * (A + K.ct(A)), lam[a] + lam[b]


def _ricci_form(U: np.ndarray, Xs: np.ndarray, Ys: np.ndarray) -> np.ndarray:
    """``Ric(X_j, Y_k)`` for stacks ``Xs`` (p, d, r) and ``Ys`` (q, d, r) by the vertical-basis
    formula ``3 sum_{a<b} <P_h(X W_ab), P_h(Y W_ab)> / (lambda_a + lambda_b)``."""
    lam, E = _gram_eig_desc(U)
    out = np.zeros((Xs.shape[0], Ys.shape[0]))
    fr = K.frame(U)
    for W, n2 in _skew_basis(E, lam):
        PX = np.array([K.horizontal_part(fr, X @ W) for X in Xs])
        PY = PX if Ys is Xs else np.array([K.horizontal_part(fr, Y @ W) for Y in Ys])
        out += np.tensordot(PX.conj(), PY, axes=([1, 2], [1, 2])).real / n2
    return 3.0 * out


def _scalar_closed_form(lam: np.ndarray, d: int) -> float:
    r = lam.size
    total = 0.0
    for a in range(r):
        for b in range(a + 1, r):
            rest = np.delete(lam, [a, b])
            inner = np.sum(lam[a] * lam[b] / ((lam[a] + rest) * (lam[b] + rest)))
            total += (d - r + 1 + inner) / (lam[a] + lam[b])
    return float(6.0 * total)


def _scalar_closed_form_complex(lam: np.ndarray, d: int) -> float:
    """The Hermitian quotient's scalar curvature (``docs``: module docstring)."""
    r = lam.size
    total = 0.0
    for a in range(r):
        rest = np.delete(lam, a)
        total += 6.0 * ((d - r) + float(np.sum(lam[a] ** 2 / (lam[a] + rest) ** 2))) / lam[a]
        for b in range(a + 1, r):
            rest = np.delete(lam, [a, b])
            inner = float(np.sum(lam[a] * lam[b] / ((lam[a] + rest) * (lam[b] + rest))))
            total += 12.0 * (2 * (d - r) + 1 + 2 * inner) / (lam[a] + lam[b])
    return total


def _transport_rhs(U: np.ndarray, xi: np.ndarray):
    d, r = U.shape

    def rhs(s, y):
        V = y.reshape(d, r)
        Us = U + s * xi
        C = K.ct(xi) @ V
        return (-(Us @ K.lyapunov(K.frame(Us), C - K.ct(C)))).reshape(-1)

    return rhs


def _transport(U: np.ndarray, xi: np.ndarray, V: np.ndarray, t: float, rtol: float,
               atol: float) -> np.ndarray:
    if t == 0.0:
        return V.copy()
    sol = scipy.integrate.solve_ivp(_transport_rhs(U, xi), (0.0, t), V.reshape(-1),
                                    method="DOP853", rtol=rtol, atol=atol)
    if not sol.success:  # e.g. xi ~ 1e300: a segment far longer than |U| (DOP853 step underflow)
        ratio = abs(t) * K.fro_norm(xi) / max(K.fro_norm(U), 1e-300)
        raise ValueError(f"parallel_transport: the ODE solver failed on the segment U + s xi, "
                         f"0 <= s <= t (|t xi| / |U| = {ratio:.3g}): {sol.message}; give a "
                         f"shorter xi or t, or split the segment")
    return sol.y[:, -1].reshape(U.shape)


# ------------------------------------------------------------------ validation
def _as_horizontal(U: np.ndarray, Z: np.ndarray, name: str, project: bool) -> np.ndarray:
    """``Z`` (a checked ``d x r`` array) if horizontal at ``U``, its projection if ``project``."""
    nz = K.fro_norm(Z)          # no underflow of the squares for entries ~1e-300
    if nz == 0.0:
        raise ValueError(f"{name} must be a nonzero tangent vector, got the zero matrix")
    Zv = _vertical_part(U, Z)
    if project:
        return Z - Zv
    rel = K.fro_norm(Zv) / nz
    if rel > HORIZONTAL_RTOL:
        form = (f"U^* {name} must be Hermitian" if U.dtype.kind == "c" else
                f"U^T {name} must be symmetric")
        raise ValueError(
            f"{name} is not horizontal at U: ||P_v({name})|| / ||{name}|| = {rel:.3e} > "
            f"{HORIZONTAL_RTOL:g} ({form}); pass project=True to use its horizontal projection")
    return Z


def _horizontal_pair(U, xi, eta, project: bool):
    """``(U, xi, eta)`` in one field (complex if one of them is), both directions checked
    horizontal at ``U`` (or projected, with ``project``)."""
    U, xi, eta = _promote(U, xi, eta)
    return U, _as_horizontal(U, xi, "xi", project), _as_horizontal(U, eta, "eta", project)


def _check_plane(xi: np.ndarray, eta: np.ndarray) -> None:
    area2, rel = _plane(xi, eta)
    if not (rel > PARALLEL_RTOL and area2 > 0.0):
        raise ValueError(
            f"xi and eta are parallel (|xi ^ eta| / (||xi|| ||eta||) = {rel:.3e} <= "
            f"{PARALLEL_RTOL:g}): the sectional curvature of a degenerate plane is undefined")


# ------------------------------------------------------------------ public API
_DR = Array(shape=("d", "r"), allow_complex=True)
_U = Factor(allow_complex=True)
#: The constraint tables of the curvature functions (the PSDQuotient methods reuse them).
#: Real or complex factors and directions: complex ones are the Hermitian quotient.
PLANE = {"U": _U, "xi": _DR, "eta": _DR, "project": Boolean()}
#: ODE tolerances of the transports: ``rtol`` in ``[1e-14, 1e-3]`` (scipy's ``solve_ivp``
#: raises anything below ``100 eps`` silently to it; above ``1e-3`` a transport is not one).
TRANSPORT = {"U": _U, "xi": _DR, "v": _DR, "t": Real(), "project": Boolean(),
             "rtol": Real(1e-14, 1e-3), "atol": Optional(Real(0, 1e-3, closed="neither"))}


@validate_params(PLANE)
@fill(_DOC)
def sectional_curvature(U, xi, eta, *, project: bool = False) -> float:
    r"""Sectional curvature of ``M_r^+`` at ``Q = U U^T`` on the plane of horizontal ``xi, eta``.

    O'Neill's formula for the Riemannian submersion ``U -> U U^T`` from flat ``R^{d x r}``
    (quadnet theory §1; O'Neill 1966)::

        K(xi, eta) = 3 ||U Omega||_F^2 / (||xi||^2 ||eta||^2 - <xi, eta>^2),
        (U^T U) Omega + Omega (U^T U) = xi^T eta - eta^T xi.

    ``r = 1`` gives ``K = 0`` exactly (``Omega`` is a ``1 x 1`` skew matrix). The metric is the
    Bures–Wasserstein one, normalised so that the distance is ``min_R ||U_1 R - U_2||_F``.

    Parameters
    ----------
    {{U}}
    xi, eta : array_like, shape (d, r)
        Horizontal lifts (``U^T xi`` symmetric) spanning a plane.
    project : bool, default False
        ``False``: a direction with a vertical part above ``1e-8`` (relative) raises.
        ``True``: its horizontal projection is used instead.

    Returns
    -------
    float
        ``K >= 0``, invariant under ``(U, xi, eta) -> (U R, xi R, eta R)`` for ``R`` in ``O(r)``.

    Raises
    ------
    ValueError
        ``U`` rank deficient, a direction zero or not horizontal (``project=False``), or
        ``xi, eta`` parallel (the curvature of a degenerate plane is undefined).

    Examples
    --------
    >>> import numpy as np
    >>> U = np.diag([1.0, 2.0])                  # lambda = (1, 4)
    >>> xi = np.array([[0., 1.], [0.5, 0.]])     # U^T xi symmetric
    >>> eta = np.diag([1.0, 0.0])
    >>> round(sectional_curvature(U, xi, eta), 12)   # 3 (1/25 + 4/25) / 1.25
    0.48
    >>> sectional_curvature(np.ones((3, 1)), np.array([[1.], [-1.], [0.]]),
    ...                     np.array([[1.], [1.], [-2.]]))
    0.0
    """
    U, xi, eta = _horizontal_pair(U, xi, eta, project)
    # K does not depend on the lengths of xi and eta: unit vectors keep |xi ^ eta|^2 from
    # underflowing (entries ~1e-150) or overflowing (~1e150)
    xi, eta = xi / K.fro_norm(xi), eta / K.fro_norm(eta)
    _check_plane(xi, eta)
    return _sectional(U, xi, eta)


@validate_params({"U": _U, "xi": Optional(_DR), "eta": Optional(_DR),
                  "project": Boolean()})
@fill(_DOC)
def ricci_curvature(U, xi=None, eta=None, *, project: bool = False):
    r"""Ricci curvature of ``M_r^+`` at ``U U^T``: the form ``Ric(xi, eta)`` or its matrix.

    ``Ric(xi, xi) = sum_i K(xi, e_i) |xi ^ e_i|^2`` over an orthonormal basis of ``H_U``; by
    O'Neill's ``A``-tensor (quadnet theory §1, ``docs/riemannian.md``)::

        Ric(xi, eta) = 3 sum_{a<b} <P_h(xi W_ab), P_h(eta W_ab)> / (lambda_a + lambda_b),

    ``W_ab = E (e_a e_b^T - e_b e_a^T) E^T`` with ``U^T U = E diag(lambda) E^T``.

    Parameters
    ----------
    {{U}}
    xi, eta : array_like, shape (d, r), optional
        Horizontal directions. Both omitted: the ``n_h x n_h`` matrix of ``Ric`` in the
        orthonormal basis :meth:`PSDQuotient.horizontal_basis` (row-major columns).
        ``eta`` omitted: ``Ric(xi, xi)``.
    project : bool, default False
        Project non-horizontal directions instead of raising.

    Returns
    -------
    float or numpy.ndarray
        ``Ric(xi, eta)``, or the symmetric positive-semidefinite matrix of ``Ric``.

    Raises
    ------
    ValueError
        ``U`` rank deficient; a direction zero or not horizontal (``project=False``);
        ``eta`` given without ``xi``.

    Examples
    --------
    >>> import numpy as np
    >>> U = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    >>> R = ricci_curvature(U)
    >>> R.shape, bool(np.all(np.linalg.eigvalsh(R) > -1e-12))
    ((5, 5), True)
    >>> bool(abs(np.trace(R) - scalar_curvature(U)) < 1e-12)
    True
    >>> ricci_curvature(U, U)                     # the radial (cone) direction is flat
    0.0
    """
    if any(a is not None and a.dtype.kind == "c" for a in (U, xi, eta)):
        U, xi, eta = (None if a is None else a.astype(np.complex128) for a in (U, xi, eta))
    if xi is None:
        if eta is not None:
            raise ValueError("ricci_curvature: eta given without xi")
        d, r = U.shape
        B = K.horizontal_basis(K.frame(U))
        Xs = B.T.reshape(-1, d, r)
        R = _ricci_form(U, Xs, Xs)
        return sym(R)
    xi = _as_horizontal(U, xi, "xi", project)
    eta_arr = xi if eta is None else _as_horizontal(U, eta, "eta", project)
    val = float(_ricci_form(U, xi[None], eta_arr[None])[0, 0])
    return 0.0 if val == 0.0 else val


@validate_params({"U": _U})
@fill(_DOC)
def scalar_curvature(U) -> float:
    r"""Scalar curvature of ``M_r^+`` at ``U U^T`` in closed form in ``lambda = sigma(U)^2``.

    The trace of :func:`ricci_curvature` over ``H_U`` (quadnet theory §1,
    ``docs/riemannian.md``)::

        scal = 6 sum_{a<b} [d - r + 1 + sum_{i != a,b} lambda_a lambda_b /
                           ((lambda_a + lambda_i)(lambda_b + lambda_i))] / (lambda_a + lambda_b).

    Complex factors (the Hermitian quotient): the closed form of the module docstring, with the
    extra vertical directions of ``U(r)`` (``r = 1`` gives ``6 (d - 1) / lambda_1``).

    Parameters
    ----------
    {{U}}

    Returns
    -------
    float
        ``scal >= 0``; ``0`` for ``r = 1``.

    Examples
    --------
    >>> import numpy as np
    >>> scalar_curvature(np.diag([1.0, 1.0]))   # 6 (2 - 2 + 1) / (1 + 1)
    3.0
    >>> scalar_curvature(np.ones((4, 1)))
    0.0
    """
    lam, _ = _gram_eig_desc(U)
    if U.dtype.kind == "c":
        return _scalar_closed_form_complex(lam, U.shape[0])
    return float(_scalar_closed_form(lam, U.shape[0]))


@dataclass(frozen=True)
class CurvatureBounds:
    """Curvature bounds at ``U U^T`` from the singular values of ``U`` (see
    :func:`curvature_bounds`).

    Attributes
    ----------
    sigma : numpy.ndarray
        Singular values of ``U``, decreasing.
    sectional_min, sectional_max : float
        ``0`` and ``3 / (lambda_{r-1} + lambda_r)`` (both 0 for ``r = 1``).
    ricci_max : float
        ``3 sum_{b < r} 1 / (lambda_b + lambda_r)``, the largest eigenvalue bound of ``Ric``.
    scalar : float
        The exact :func:`scalar_curvature`.
    ricci_attained : bool
        Whether ``ricci_max`` is attained (``d > r``); ``sectional_max`` always is (``r >= 2``).
    extremal_plane : tuple of numpy.ndarray or None
        Orthonormal horizontal ``(xi, eta)`` with ``K(xi, eta) = sectional_max`` (``None`` for
        ``r = 1``).
    """

    sigma: np.ndarray
    sectional_min: float
    sectional_max: float
    ricci_max: float
    scalar: float
    ricci_attained: bool
    extremal_plane: tuple | None


@validate_params({"U": Factor()})
@fill(_DOC)
def curvature_bounds(U) -> CurvatureBounds:
    r"""Bounds on the sectional and Ricci curvature at ``U U^T`` from ``sigma(U)``.

    With ``lambda_1 >= ... >= lambda_r`` the eigenvalues of ``Q = U U^T`` (``sigma^2``) and
    ``r >= 2`` (quadnet theory §1, derived in ``docs/riemannian.md``)::

        0 <= K(xi, eta) <= 3 / (lambda_{r-1} + lambda_r),
        0 <= Ric(xi, xi) / ||xi||^2 <= 3 sum_{b < r} 1 / (lambda_b + lambda_r).

    The sectional bound is attained for every ``d >= r >= 2``: with the thin SVD
    ``U = P diag(sigma) E^T``, ``a = r-1``, ``b = r`` and ``n = sqrt(lambda_a + lambda_b)``,
    ``xi = P (sigma_b e_a e_b^T + sigma_a e_b e_a^T) E^T / n`` and
    ``eta = P (sigma_a e_b e_b^T - sigma_b e_a e_a^T) E^T / n`` give ``xi^T eta - eta^T xi =
    E (e_a e_b^T - e_b e_a^T) E^T`` (returned as ``extremal_plane``). The Ricci bound is
    attained when ``d > r`` (``xi = x e_r^T E^T`` with ``x`` orthogonal to the range of ``U``).
    Both lower bounds are attained along the radial direction ``xi = U``. For ``r = 1`` every
    bound is 0. Real factors only: a complex factor is refused naming ``U`` (on the Hermitian
    quotient ``r = 1`` is curved and these bounds do not hold).

    Parameters
    ----------
    {{U}}

    Returns
    -------
    CurvatureBounds
        ``sigma``, ``sectional_min``, ``sectional_max``, ``ricci_max``, ``scalar``,
        ``ricci_attained``, ``extremal_plane``.

    Examples
    --------
    >>> import numpy as np
    >>> U = np.diag([2.0, 1.0, 0.0])[:, :2]
    >>> b = curvature_bounds(U)
    >>> round(b.sectional_max, 12), round(b.ricci_max, 12), b.ricci_attained
    (0.6, 0.6, True)
    >>> round(sectional_curvature(U, *b.extremal_plane), 12)
    0.6
    """
    P, sig, Et = np.linalg.svd(U, full_matrices=False)
    lam = sig ** 2
    r = lam.size
    if r == 1:
        smax = rmax = 0.0
        plane = None
    else:
        smax = 3.0 / (lam[-2] + lam[-1])
        rmax = 3.0 * float(np.sum(1.0 / (lam[:-1] + lam[-1])))
        a, b = r - 2, r - 1
        n = np.sqrt(lam[a] + lam[b])
        S1 = np.zeros((r, r))
        S1[a, b], S1[b, a] = sig[b] / n, sig[a] / n
        S2 = np.zeros((r, r))
        S2[a, a], S2[b, b] = -sig[b] / n, sig[a] / n
        plane = (P @ S1 @ Et, P @ S2 @ Et)
    return CurvatureBounds(sig, 0.0, float(smax), float(rmax),
                           _scalar_closed_form(lam, U.shape[0]), U.shape[0] > r, plane)


@validate_params({"Sigma": Symmetric("n", psd=True, allow_complex=True),
                  "X": Symmetric("n", allow_complex=True), "Y": Symmetric("n", allow_complex=True)})
def bures_wasserstein_sectional_curvature(Sigma, X, Y) -> float:
    r"""Sectional curvature of the Bures–Wasserstein metric on SPD matrices, in SPD coordinates.

    The closed form in the eigenvalues of the covariance (Takatsu (2011) "Wasserstein geometry
    of Gaussian measures", Osaka J. Math. 48), written for the metric
    ``g_Sigma(X, Y) = tr(L_X Sigma L_Y)`` with ``Sigma L_X + L_X Sigma = X`` (Bhatia, Jain &
    Lim (2019) "On the Bures–Wasserstein distance between positive definite matrices")::

        K(X, Y) = 3 sum_{i<j} lambda_i lambda_j [L_X, L_Y]_ij^2 / (lambda_i + lambda_j)
                  / (g(X, X) g(Y, Y) - g(X, Y)^2),

    entries in the eigenbasis of ``Sigma = E diag(lambda) E^T``. An independent route to
    :func:`sectional_curvature` for ``r = d`` (no factor, no horizontal lift: ``L_X`` from
    :func:`scipy.linalg.solve_sylvester`).

    Hermitian ``Sigma``, ``X``, ``Y`` (the complex quotient at ``r = d``): the metric
    ``Re tr(L_X Sigma L_Y)`` and the same sum over all pairs, ``i = j`` included --
    ``[L_X, L_Y]`` is skew-Hermitian, with an imaginary diagonal that vanishes in the real case::

        K(X, Y) = (3/2) sum_{i,j} lambda_i lambda_j |[L_X, L_Y]_ij|^2 / (lambda_i + lambda_j)
                  / (g(X, X) g(Y, Y) - g(X, Y)^2)

    (derived from O'Neill's formula with ``U = Sigma^{1/2}``; checked against
    :func:`sectional_curvature` in ``tests/geometry/test_hermitian.py``).

    Parameters
    ----------
    Sigma : array_like, shape (d, d)
        Symmetric (Hermitian) positive-definite matrix.
    X, Y : array_like, shape (d, d)
        Symmetric (Hermitian) tangent vectors spanning a plane.

    Returns
    -------
    float
        ``K(X, Y) >= 0`` (the metric is non-negatively curved).

    Raises
    ------
    ValueError
        ``Sigma`` not symmetric positive definite, ``X``/``Y`` not symmetric, or parallel.

    Examples
    --------
    >>> import numpy as np
    >>> S = np.diag([1.0, 4.0])
    >>> X = np.array([[0., 3.], [3., 0.]]); Y = np.diag([2.0, 0.0])
    >>> round(bures_wasserstein_sectional_curvature(S, X, Y), 12)  # = the factor route
    0.48
    """
    n = Sigma.shape[0]
    lam, E = np.linalg.eigh(Sigma)
    if not lam[0] > 1e-12 * max(lam[-1], 0.0) or lam[-1] <= 0:
        raise ValueError("Sigma must be symmetric positive definite")
    # K is invariant under X -> aX, Y -> bY and K(c Sigma) = K(Sigma) / c: work at unit scale
    # so that g(X, X) g(Y, Y) neither overflows nor underflows for entries near 1e+-300
    for name, Z in (("X", X), ("Y", Y)):
        if not np.any(Z):
            raise ValueError(f"{name} is zero: the sectional curvature is undefined")
    c = float(lam[-1])
    Sigma, lam = Sigma / c, lam / c
    X, Y = X / np.abs(X).max(), Y / np.abs(Y).max()
    LX = scipy.linalg.solve_sylvester(Sigma, Sigma, X)
    LY = scipy.linalg.solve_sylvester(Sigma, Sigma, Y)
    cx = any(A.dtype.kind == "c" for A in (Sigma, X, Y))
    if cx:                  # Re tr(L_A Sigma L_B^*), L Hermitian
        gXX, gYY, gXY = (float(np.trace(A @ Sigma @ K.ct(B)).real)
                         for A, B in ((LX, LX), (LY, LY), (LX, LY)))
    else:
        gXX = float(np.trace(LX @ Sigma @ LX))
        gYY = float(np.trace(LY @ Sigma @ LY))
        gXY = float(np.trace(LX @ Sigma @ LY))
    area2 = gXX * gYY - gXY ** 2
    if not area2 > (PARALLEL_RTOL ** 2) * gXX * gYY:
        raise ValueError("X and Y are parallel: the sectional curvature is undefined")
    C = K.ct(E) @ (LX @ LY - LY @ LX) @ E
    if cx:
        li, lj = lam[:, None], lam[None, :]
        return float(1.5 * np.sum(li * lj * np.abs(C) ** 2 / (li + lj)) / area2) / c
    iu = np.triu_indices(n, 1)
    li, lj = lam[iu[0]], lam[iu[1]]
    return float(3.0 * np.sum(li * lj * C[iu] ** 2 / (li + lj)) / area2) / c


@validate_params(TRANSPORT)
@fill(_DOC)
def parallel_transport(U, xi, v, t=1.0, *, project: bool = False, rtol: float = 1e-13,
                       atol: float | None = None) -> np.ndarray:
    r"""Levi-Civita parallel transport of ``v`` along the geodesic ``U + s xi``, ``s in [0, t]``.

    The horizontal lift ``V(s)`` of the parallel field has a vertical derivative (quadnet
    theory §1; O'Neill 1966: ``nabla_X Y = P_h(D_X Y)``), which with ``U(s)^T V(s)`` symmetric
    gives the linear ODE::

        V' = -U(s) Omega,   G(s) Omega + Omega G(s) = xi^T V - V^T xi,   G(s) = U(s)^T U(s),

    solved by scipy's ``DOP853`` (explicit Runge–Kutta of order 8) at ``rtol``. The result is
    horizontal at ``U + t xi`` and ``||V(t)|| = ||v||``, ``<V_1(t), V_2(t)> = <v_1, v_2>``
    to the integration tolerance; ``v = xi`` is transported to itself exactly. pymanopt's
    projection transport ``P_h(U + t xi)[v]`` agrees to first order only (``O(t^2)``).

    Parameters
    ----------
    {{U}}
    xi : array_like, shape (d, r)
        Horizontal velocity of the geodesic.
    v : array_like, shape (d, r)
        Horizontal vector at ``U`` to transport.
    t : float, default 1.0
        End time; ``U + s xi`` must stay full rank on ``[0, t]`` (``t`` may be negative).
    project : bool, default False
        Project ``xi`` and ``v`` onto ``H_U`` instead of raising when they are not horizontal.
    rtol, atol : float
        ODE tolerances; ``atol`` defaults to ``1e-15 ||v||``.

    Returns
    -------
    numpy.ndarray, shape (d, r)
        The transported vector, horizontal at ``U + t xi``.

    Raises
    ------
    ValueError
        ``U`` or ``U + s xi`` rank deficient on ``[0, t]``; ``xi`` or ``v`` not horizontal
        (``project=False``); ``t`` not finite; tolerances not positive.

    Examples
    --------
    >>> import numpy as np
    >>> U = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    >>> xi = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
    >>> v = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 1.0]])
    >>> V = parallel_transport(U, xi, v, 1.0)
    >>> W = U + xi
    >>> bool(np.allclose(W.T @ V, (W.T @ V).T)), round(float(np.linalg.norm(V)), 10)
    (True, 1.0)
    """
    U, xi, v = _promote(U, xi, v)
    xi = _as_horizontal(U, xi, "xi", project)
    if K.fro_norm(v) == 0.0:    # (fro_norm: no underflow of the squares for |v| ~ 1e-200)
        return np.zeros_like(v)
    v = _as_horizontal(U, v, "v", project)
    nv = K.fro_norm(v)
    _check_segment(U, xi, t)
    if not 1e-100 <= nv <= 1e100:
        # transport is linear in v: move a unit vector and scale back, so that neither the
        # solver's error norm nor its absolute tolerance under- or overflows
        atol = 1e-15 if atol is None else atol / nv
        return nv * _transport(U, xi, v / nv, t, rtol, atol)
    atol = 1e-15 * nv if atol is None else atol
    return _transport(U, xi, v, t, rtol, atol)


def _check_segment(U: np.ndarray, xi: np.ndarray, t: float, max_evals: int = 4000) -> None:
    """Certify that ``U + s xi`` has full rank for every ``s`` in ``[0, t]``.

    ``sigma_min(U + s xi)`` is Lipschitz in ``s`` with constant ``L = ||xi||_2``, so an interval
    ``[a, b]`` is safe when ``sigma_min(a) + sigma_min(b) > L (b - a)``; other intervals are
    bisected. A point with ``sigma_min <= RANK_RTOL sigma_max`` (the rank test of
    :func:`quadnet._validation.as_factor`), or more than ``max_evals`` evaluations, raises.
    """
    L = float(np.linalg.norm(xi, 2))

    def smin(s):
        sv = np.linalg.svd(U + s * xi, compute_uv=False)
        if not sv[-1] > RANK_RTOL * sv[0]:
            ratio = sv[-1] / sv[0] if sv[0] > 0 else 0.0
            raise ValueError(f"the geodesic U + s xi leaves the full-rank stratum at s = {s:.6g} "
                             f"in [0, {t:g}] (sigma_min/sigma_max = {ratio:.2e})")
        return sv[-1]

    stack = [(0.0, smin(0.0), t, smin(t))]
    evals = 2
    while stack:
        a, sa, b, sb = stack.pop()
        if sa + sb > L * abs(b - a):
            continue
        if evals >= max_evals:
            raise ValueError(f"the geodesic U + s xi comes within rounding of the rank boundary "
                             f"near s = {0.5 * (a + b):.6g} in [0, {t:g}]")
        m = 0.5 * (a + b)
        sm = smin(m)
        evals += 1
        stack += [(a, sa, m, sm), (m, sm, b, sb)]


@validate_params({"U": _U, "xi": _DR, "eta": _DR, "eps": Real(0, None, closed="neither"),
                  "rtol": TRANSPORT["rtol"]})
@fill(_DOC)
def holonomy(U, xi, eta, eps: float, *, rtol: float = 1e-13) -> dict:
    r"""Holonomy of parallel transport around the geodesic quadrilateral with corners
    ``U, U + eps xi, U + eps (xi + eta), U + eps eta`` (in this order).

    Each side is the quotient geodesic between consecutive corners (its velocity is
    :meth:`PSDQuotient.log`); ``eta`` is transported once around and brought back to ``U``'s
    fibre representative by alignment. For orthonormal horizontal ``xi, eta`` the loop encloses
    area ``A = eps^2 (1 + O(eps^2))`` and the transported ``eta`` turns (from ``eta`` towards
    ``-xi``, the sense of the loop) by the angle ``K(xi, eta) A + o(A)`` (the curvature
    operator, quadnet theory §1; ``docs/riemannian.md``). Against ``K`` at the corner ``U``
    the relative error is ``O(eps)`` (``K`` varies along the loop); against ``K`` at the
    centre ``U + eps (xi + eta)/2`` it is ``O(eps^2)``.

    Parameters
    ----------
    {{U}}
    xi, eta : array_like, shape (d, r)
        Horizontal directions at ``U``; they are orthonormalised (Gram–Schmidt) first.
    eps : float
        Side length, ``> 0``.
    rtol : float
        Tolerance of each transport.

    Returns
    -------
    dict
        ``angle`` (``atan2(-<Hol eta, xi>, <Hol eta, eta>)``), ``area`` (``eps^2``), ``K``
        (:func:`sectional_curvature` at ``U``), ``K_centre`` (at the centre of the loop),
        ``norm_drift`` (``| ||Hol eta|| - 1 |``) and ``transported`` (the vector).

    Raises
    ------
    ValueError
        As :func:`sectional_curvature`; ``eps`` not positive; a side leaving the stratum.

    Examples
    --------
    >>> import numpy as np
    >>> U = np.array([[1.0, 0.0], [0.0, 1.5], [0.0, 0.0]])
    >>> xi = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
    >>> eta = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 1.0]])
    >>> h = holonomy(U, xi, eta, 1e-2)
    >>> bool(abs(h["angle"] / (h["K_centre"] * h["area"]) - 1) < 1e-3)
    True
    """
    U, xi, eta = _horizontal_pair(U, xi, eta, False)
    e1 = xi / K.fro_norm(xi)             # scaled norms: no overflow of |xi|^2 (xi ~ 1e300)
    e2 = eta / K.fro_norm(eta)           # and the plane test on unit vectors (no underflow)
    _check_plane(e1, e2)
    e2 = e2 - _dot(e1, e2) * e1
    e2 = e2 / K.fro_norm(e2)
    corners = [U + eps * e1, U + eps * (e1 + e2), U + eps * e2, U]
    W, V = U, e2.copy()
    for C in corners:
        C_al = C @ K.procrustes(C, W)          # representative of C nearest to W
        vel = C_al - W                   # log_W(C): horizontal at W
        vel = vel - _vertical_part(W, vel)  # rounding-level clean-up
        _check_segment(W, vel, 1.0)
        V = _transport(W, vel, V, 1.0, rtol, 1e-16)
        W = W + vel
    R = K.procrustes(W, U)                      # W R = U (W is U's fibre point after the loop)
    V = V @ R
    Cm = U + 0.5 * eps * (e1 + e2)       # centre of the loop, for the O(eps^2) comparison
    c1, c2 = e1 - _vertical_part(Cm, e1), e2 - _vertical_part(Cm, e2)
    return {"angle": float(np.arctan2(-_dot(e1, V), _dot(e2, V))), "area": eps ** 2,
            "K": _sectional(U, e1, e2), "K_centre": _sectional(Cm, c1, c2),
            "norm_drift": abs(float(np.linalg.norm(V)) - 1.0), "transported": V}


@validate_params({"U": _U, "xi": _DR, "eta": _DR,
                  "scales": Optional(Sequence(Real(0, None, closed="neither")))})
@fill(_DOC)
def distance_expansion_curvature(U, xi, eta, *, scales=None) -> float:
    r"""Sectional curvature from quadnet's own distance, by the geodesic-spread expansion.

    For unit horizontal ``xi, eta`` at angle ``theta`` (quadnet theory §1; e.g. do Carmo,
    "Riemannian Geometry", ch. 5; the geodesics are ``U + s xi``, Massart & Absil 2020)::

        dist(U + s xi, U + t eta)^2 = s^2 + t^2 - 2 s t cos(theta) - (K/3) s^2 t^2 sin^2(theta)
                                      + O(5).

    ``K`` depends on the plane only, so ``eta`` is first made orthonormal to ``xi``
    (``theta = pi/2``, the best-conditioned pair). With ``s = t = h`` and the average over
    ``h`` and ``-h`` (the odd fifth-order terms cancel),
    ``g(h) = [2h^2 - dist^2] / h^4 = K/3 + b h^2 + c h^4 + ...``; ``K`` is read off by
    Richardson extrapolation (exact polynomial fit in ``h^2``) over ``scales``. Only
    :meth:`PSDQuotient.dist` (an SVD alignment) is used: no Lyapunov solve.

    Parameters
    ----------
    {{U}}
    xi, eta : array_like, shape (d, r)
        Horizontal, not parallel; they are normalised.
    scales : sequence of float, optional
        The ``h`` values (at least one; ``len(scales)`` terms of the fit). Default
        ``(0.2, 0.1, 0.05) x min(1, sigma_min(U))``: the expansion holds for ``h`` well
        inside the distance ``sigma_min(U)`` to the rank boundary, and larger steps keep the
        rounding of ``dist^2`` (``~1e-16 h``) small against the signal ``K h^4 / 3``.

    Returns
    -------
    float
        The extrapolated ``K``. With the default scales the relative error was at most
        ``1e-5`` on 300 random planes with ``sigma(U)`` in ``[0.3, 2]`` and ``K`` down to
        ``3e-7`` (median ``7e-10``).

    Raises
    ------
    ValueError
        As :func:`sectional_curvature`; scales not positive.

    Examples
    --------
    >>> import numpy as np
    >>> U = np.diag([1.0, 2.0]); xi = np.array([[0., 1.], [0.5, 0.]]); eta = np.diag([1., 0.])
    >>> bool(abs(distance_expansion_curvature(U, xi, eta) / 0.48 - 1) < 1e-5)
    True
    """
    # K(c U) = K(U) / c^2 with the steps scaled by c: far from 1 (max |entry| beyond 1e+-100,
    # where dist^2 over- or underflows) work at c = 2^-k, exact in binary
    top = float(np.abs(U).max())
    if not 1e-100 <= top <= 1e100:
        k = math.frexp(top)[1]
        hs = None if scales is None else tuple(math.ldexp(h, -k) for h in scales)
        Kn = distance_expansion_curvature(math.ldexp(1.0, -k) * U, xi, eta, scales=hs)
        try:
            out = math.ldexp(Kn, -2 * k) if Kn != 0.0 else 0.0
        except OverflowError:
            out = math.inf
        if Kn != 0.0 and not (out != 0.0 and math.isfinite(out)):
            raise ValueError(f"U has entries up to {top:.3g}: its sectional curvature "
                             f"({Kn:.3g} x 2^{-2 * k}) is outside the float64 range; rescale U "
                             f"(K(c U) = K(U) / c^2)")
        return out
    U, xi, eta = _horizontal_pair(U, xi, eta, False)
    _check_plane(xi, eta)
    if scales is None:
        smin = float(np.linalg.svd(U, compute_uv=False)[-1])
        scales = tuple(np.array([0.2, 0.1, 0.05]) * min(1.0, smin))
    hs = np.array(scales, dtype=float)
    xi = xi / np.linalg.norm(xi)
    eta = eta - _dot(xi, eta) * xi
    eta = eta / np.linalg.norm(eta)
    g = []
    for h in hs:
        vals = [2 * h * h - _dist(U + sg * h * xi, U + sg * h * eta) ** 2 for sg in (1.0, -1.0)]
        g.append(0.5 * sum(vals) / h ** 4)
    A = np.vander(hs ** 2, hs.size, increasing=True)
    return 3.0 * float(np.linalg.solve(A, np.array(g))[0])


def _dist(U: np.ndarray, V: np.ndarray) -> float:
    """The quotient distance ``min_R ||U R - V||_F`` (the kernel route of
    :meth:`quadnet.PSDQuotient.dist`)."""
    return K.fro_norm(U @ K.procrustes(U, V) - V)
