r"""Effective curvature: the Hessian of ``L(U) = ell(U U^T)`` on the horizontal space (quadnet theory §3-4).

Definitions (quadnet theory §3). With ``B`` a ``(d r) x n_h`` Frobenius-orthonormal basis of the
horizontal space ``H_U = {xi : U^T xi symmetric}`` (:meth:`quadnet.PSDQuotient.horizontal_basis`,
row-major vectorisation), the *effective Hessian* is

    H_eff = B^T  D^2 L(U)  B            (an n_h x n_h symmetric matrix),

``D^2 L(U)[xi] = 2 S xi + 2 DS[xi U^T + U xi^T] U`` (:meth:`quadnet.Loss.factor_hvp`), residual
term ``2 S xi`` included, so it is meaningful at any full-rank ``U``, not only at minimisers.

* Quotient meaning. The total space ``R^{d x r}`` is Euclidean, so the Riemannian Hessian of
  the induced function on ``M_r^+`` has the horizontal lift ``P_h(D^2 L(U)[xi])`` for horizontal
  ``xi`` (Absil–Mahony–Sepulchre, Prop. 5.3.3; the connection term is vertical). Since the
  quotient metric is Frobenius on horizontal lifts, the eigenvalues of ``H_eff`` are the
  generalised eigenvalues of the Hessian with respect to the quotient metric, at every ``U``.
  ``H_eff`` does not depend on the representative: at ``U R`` the basis ``B`` rotates with
  ``xi -> xi R`` and the spectrum is unchanged.
* Vertical kernel. ``L(U R) = L(U)`` gives ``D^2 L(U)[U Omega] = grad L(U) Omega``, which is zero at
  a critical point: there the full factor Hessian (:func:`factor_hessian`, ``dr x dr``) is
  ``H_eff`` plus ``r(r-1)/2`` exact zeros on ``V_U``. Away from critical points the full Hessian
  mixes ``V_U`` and ``H_U``; only ``H_eff`` is the curvature of the quotient.
* Gram form. For a least-squares loss ``ell(Q) = (1/(2m)) sum_i (<A_i, Q> - y_i)^2`` at a
  zero-residual point (``S = 0``), ``xi^T H_eff xi = (1/m) sum_i <A_i, xi U^T + U xi^T>^2``: the
  measurement Gram form on ``T_Q M_r^+`` (``Qdot = xi U^T + U xi^T``), read with the quotient
  metric ``g(Qdot, Qdot) = ||xi||_F^2``. Its eigenvalues are therefore the generalised
  eigenvalues of the Gram form against ``g``; ``H_eff`` is positive definite exactly when the
  measurements are injective on ``T_Q M_r^+`` (generically when ``m >= n_h``).

Matrix-free spectrum. :func:`effective_operator` acts on ``R^{d r}`` as
``P_h o D^2 L(U) o P_h + sigma P_v``: on ``H_U`` it is ``H_eff``, on ``V_U`` the multiple
``sigma I``. :func:`effective_spectrum` runs ARPACK (:func:`scipy.sparse.linalg.eigsh`) on it from
a horizontal start, with ``sigma`` set to the Rayleigh quotient of that start (about the mean
eigenvalue, i.e. mid-spectrum), so the ``r(r-1)/2`` vertical directions are never among the
extreme eigenvalues wanted; returned vectors are checked to be horizontal, and the call is
repeated with ``sigma`` moved past the returned eigenvalues if one is not. No basis of ``H_U``
is formed: one matvec is one factor HVP plus two ``O(d r^2 + r^3)`` projections. With a
preconditioner (``"population"``: :func:`population_effective_inverse`, the explicit inverse of
the Gaussian-sensing population effective Hessian on ``H_U``) the smallest eigenpairs come
from LOBPCG with ``V_U`` as constraints instead (derivation and costs in
``docs/curvature.md`` §4).

The Gaussian-sensing population form and its closed-form spectrum and inverse (the
"population" preconditioner) are in :mod:`quadnet.sensing.population`.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse.linalg as spla

from quadnet._linalg import sym
from quadnet._validation import (RANK_RTOL, Boolean, Converted, Factor, Integer, Optional,
                                 Options, Real, Seed, as_factor, as_matrix, memory_guard,
                                 renamed_keyword, to_rng, validate_params)
from quadnet.exceptions import RankDeficientSpectrumWarning
from quadnet.losses import GRADIENT_FINITE, LOSS
from quadnet.geometry.manifold import horizontal_dimension
from quadnet.losses import Loss, as_loss
from quadnet.geometry.manifold import PSDQuotient

__all__ = [
    "BoundarySpectrum",
    "EffectiveSpectrum",
    "boundary_spectrum",
    "effective_hessian",
    "effective_operator",
    "effective_spectrum",
    "factor_hessian",
    "gram_effective_spectrum",
    "horizontal_dimension",
]

#: Relative asymmetry of a Hessian built from HVPs above which the loss's HVP is refused:
#: a correct HVP is symmetric to rounding (~1e-15 relative), a wrong one is off by O(1).
_ASYM_RTOL = 1e-8
_COLUMN_BLOCK = 128               # directions per hvp_at call when building dense Hessians


# ----------------------------------------------------------------------------- helpers
_check_loss = as_loss


def _point(loss: Loss, U) -> np.ndarray:
    return as_factor(U, "U", d=loss.d)


def _dense_guard(what: str, size):
    """Refuse a dense Hessian whose ``size(d, r)`` x ``size(d, r)`` float64 matrix (plus the
    same again for the HVP columns) would not fit in memory."""
    return memory_guard(("U",), lambda a: 16.0 * float(size(*a["U"].shape)) ** 2, what)


_FACTOR_ANY = Factor(full_rank=False)


def _symmetrised(H: np.ndarray, what: str) -> np.ndarray:
    scale = np.linalg.norm(H)
    asym = np.linalg.norm(H - H.T)
    if scale > 0 and asym > _ASYM_RTOL * scale:
        raise ValueError(
            f"loss.factor_hvp is not symmetric: the {what} built from it has relative asymmetry "
            f"{asym / scale:.2e} > {_ASYM_RTOL:g}; check the loss's hessian_vector/factor_hvp"
        )
    return sym(H)


def _hvp_columns(loss: Loss, U: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """``[vec D^2 L(U)[unvec b_j]]_j`` for the columns ``b_j`` of ``basis``.

    One HVP per column through ``loss.hvp_at(U)`` (per-point work once, batched where the
    loss supports it), ``_COLUMN_BLOCK`` columns per call to bound the scratch memory.
    """
    d, r = U.shape
    hvp = loss.hvp_at(U)
    out = np.empty((d * r, basis.shape[1]))
    for s in range(0, basis.shape[1], _COLUMN_BLOCK):
        cols = basis[:, s:s + _COLUMN_BLOCK]
        Y = np.asarray(hvp(cols.T.reshape(-1, d, r)), dtype=np.float64)
        out[:, s:s + cols.shape[1]] = Y.reshape(cols.shape[1], d * r).T
    return out


# ------------------------------------------------------------------------ dense forms
@validate_params({"loss": LOSS, "U": _FACTOR_ANY, "return_basis": Boolean()},
                 relations=[_dense_guard("the dense effective Hessian (n_h x n_h, n_h <= d r)",
                                         lambda d, r: d * r)])
def effective_hessian(loss: Loss, U, *, return_basis: bool = False):
    r"""The effective Hessian ``B^T D^2 L(U) B`` (``n_h x n_h``) in ``PSDQuotient.horizontal_basis(U)``.

    quadnet theory §3. Valid at any ``U``, of any rank (residual term ``2 S xi`` included); its
    eigenvalues are the generalised eigenvalues of the Hessian against the quotient metric
    (module docstring). Costs ``n_h`` HVPs through ``loss.hvp_at(U)`` (batched, BLAS-3, for
    :class:`quadnet.GaussianSensing`); for large ``n_h`` use :func:`effective_spectrum`.
    At a factor of rank ``k < r`` the basis is the rank-aware one of
    :meth:`quadnet.PSDQuotient.horizontal_basis` (``dim H_U = d r - r(r-1)/2 +
    (r-k)(r-k-1)/2``) and the matrix is block diagonal in the signal/excess split of
    :func:`boundary_spectrum`, which also counts its structural zeros. Its eigenvalues are then
    the union of both blocks', so its smallest one may be an excess eigenvalue: it equals
    ``effective_spectrum(loss, U).overall_eigenvalues[0]``, while
    ``effective_spectrum(loss, U).eigenvalues[0]`` is the signal block's smallest
    (``boundary_spectrum(loss, U)`` names both parts densely).

    Parameters
    ----------
    loss : quadnet.Loss
    U : (d, r) array_like
        Finite factor of any rank.
    return_basis : bool
        Also return the ``(d r) x n_h`` basis ``B``.

    Returns
    -------
    H : ndarray, shape (n_h, n_h)
    B : ndarray, shape (d r, n_h), only with ``return_basis``

    Raises
    ------
    TypeError
        ``loss`` is not a Loss.
    ValueError
        ``U`` is not a finite ``d x r`` factor of the loss's dimension, or the loss's HVP is
        not symmetric.

    Examples
    --------
    >>> import numpy as np
    >>> from quadnet import FrobeniusLoss
    >>> U = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]])    # rank 1 < r = 2
    >>> H = effective_hessian(FrobeniusLoss(U @ U.T), U)
    >>> H.shape, np.round(np.linalg.eigvalsh(H), 12).tolist()   # 2 structural zeros
    ((5, 5), [0.0, 0.0, 2.0, 2.0, 4.0])
    """
    d, r = U.shape
    B = PSDQuotient(d, r).horizontal_basis(U)
    H = _symmetrised(B.T @ _hvp_columns(loss, U, B), "effective Hessian")
    return (H, B) if return_basis else H


@validate_params({"loss": LOSS, "U": _FACTOR_ANY},
                 relations=[_dense_guard("the dense factor Hessian (d r x d r)",
                                         lambda d, r: d * r)])
def factor_hessian(loss: Loss, U) -> np.ndarray:
    r"""The full Euclidean Hessian of ``L`` at ``U`` as a ``(d r) x (d r)`` matrix (row-major vec).

    Built from ``d r`` factor HVPs on the standard basis. At a critical point it has the
    ``r(r-1)/2`` vertical zero eigenvalues besides the spectrum of :func:`effective_hessian`.
    ``U`` may be rank deficient here (no quotient structure is used).

    Examples
    --------
    >>> import numpy as np
    >>> from quadnet import FrobeniusLoss
    >>> factor_hessian(FrobeniusLoss(np.eye(2)), np.array([[1.0], [0.0]])).round(12).tolist()
    [[4.0, 0.0], [0.0, 0.0]]
    """
    n = U.size
    return _symmetrised(_hvp_columns(loss, U, np.eye(n)), "factor Hessian")


# --------------------------------------------------------------------- matrix-free
class _EffectiveOperator(spla.LinearOperator):
    """``v -> vec(P_h D^2 L(U)[P_h Z] + sigma P_v Z)``, ``Z = unvec(v)``; counts HVPs."""

    def __init__(self, loss: Loss, U: np.ndarray, vertical_shift: float, hvp=None):
        d, r = U.shape
        super().__init__(dtype=np.float64, shape=(d * r, d * r))
        self.U, self.sigma = U, float(vertical_shift)
        self._quotient = PSDQuotient(d, r)
        self._hvp = loss.hvp_at(U) if hvp is None else hvp
        self.n_hvp = 0

    def vertical(self, Z: np.ndarray) -> np.ndarray:
        """``P_v(Z) = U Omega``, ``(U^T U) Omega + Omega (U^T U) = U^T Z - Z^T U``
        (:meth:`PSDQuotient.vertical_projection`)."""
        return self._quotient.vertical_projection(self.U, Z)

    def hvp(self, xi: np.ndarray) -> np.ndarray:
        """``D^2 L(U)[xi]`` for one ``d x r`` direction or a ``(b, d, r)`` stack (counted)."""
        self.n_hvp += 1 if xi.ndim == 2 else xi.shape[0]
        return np.asarray(self._hvp(xi), dtype=np.float64)

    def _matvec(self, v):
        return self._matmat(np.asarray(v, dtype=np.float64).reshape(-1, 1))[:, 0]

    def _matmat(self, V):
        """All columns at once: one batched ``hvp_at`` call, projections per column."""
        d, r = self.U.shape
        Z = np.asarray(V, dtype=np.float64).T.reshape(-1, d, r)
        Zv = np.stack([self.vertical(z) for z in Z])
        Y = self.hvp(Z - Zv)
        out = Y - np.stack([self.vertical(y) for y in Y])
        if self.sigma != 0.0:
            out = out + self.sigma * Zv
        return out.reshape(len(Z), d * r).T

    def _rmatvec(self, v):
        return self._matvec(v)


@validate_params({"loss": LOSS, "U": Factor(), "vertical_shift": Real()}, finite_result=False)
def effective_operator(loss: Loss, U, *, vertical_shift: float = 0.0) -> spla.LinearOperator:
    r"""``P_h o D^2 L(U) o P_h + sigma P_v`` as a :class:`scipy.sparse.linalg.LinearOperator` on ``R^{d r}``.

    Symmetric; equal to the effective Hessian on ``H_U`` and to ``vertical_shift * I`` on
    ``V_U`` (quadnet theory §3, §7: the input direction is projected too, unlike pymanopt's
    ``PSDFixedRank``). The attribute ``n_hvp`` counts factor HVPs.
    """
    return _EffectiveOperator(loss, U, vertical_shift)


@dataclass(frozen=True)
class EffectiveSpectrum:
    """Extreme eigenpairs of the effective Hessian from :func:`effective_spectrum`.

    Attributes:
        eigenvalues: the ``k`` eigenvalues, ascending.
        eigenvectors: ``(k, d, r)`` unit horizontal eigenvectors (``None`` if not asked).
        residual_norms: ``||H_eff x - lambda x||_F`` per pair; for a symmetric operator
            ``|lambda - lambda_true| <= residual`` (some true eigenvalue lies that close).
        which: ``"smallest"`` or ``"largest"``.
        n_h: dimension of the horizontal space.
        n_hvp: factor HVPs used (including the residual check).
        vertical_shift: the ``sigma`` placed on the vertical directions (``eigsh`` path;
            ``0.0`` on the ``lobpcg`` path, where vertical directions are constraints).
        method: ``"eigsh"`` (ARPACK Lanczos) or ``"lobpcg"`` (preconditioned).
        rank: numerical rank ``k`` of ``U``. At ``k < r`` the eigenpairs are those of the
            *signal* block ``H_eff(U_k)`` (:class:`BoundarySpectrum`; eigenvectors
            ``xi_1 V_k^T``), ``excess_eigenvalues`` the eigenvalues of the excess block
            ``2 W_0^T S W_0`` (each of multiplicity ``r - k``) and ``structural_zeros``
            the number of zero modes they contribute (:func:`boundary_spectrum`).
        overall_eigenvalues: the ``k`` smallest (or largest) eigenvalues of the *whole*
            effective Hessian, signal and excess blocks together, ascending: the same numbers
            as ``numpy.linalg.eigvalsh(effective_hessian(loss, U))[:k]`` (or ``[-k:]``).
            Equal to ``eigenvalues`` at full rank.
        overall_parts: for each of ``overall_eigenvalues``, the block it comes from,
            ``"signal"`` or ``"excess"``.
        note: at ``k < r``, one sentence naming both parts with their extreme values (empty
            at full rank). When the excess block holds a non-structural eigenvalue beyond the
            signal block's, the call also warns (:class:`quadnet.exceptions.RankDeficientSpectrumWarning`).

    "The smallest eigenvalue of the effective Hessian" at a rank-deficient ``U`` is
    ``overall_eigenvalues[0]`` (``which="smallest"``); ``eigenvalues[0]`` is the smallest on
    the signal part, the one that sets the exponential rates of the signal directions.
    """

    eigenvalues: np.ndarray
    eigenvectors: np.ndarray | None
    residual_norms: np.ndarray
    which: str
    n_h: int
    n_hvp: int
    vertical_shift: float
    method: str = "eigsh"
    rank: int | None = None
    structural_zeros: int = 0
    excess_eigenvalues: np.ndarray | None = None
    overall_eigenvalues: np.ndarray | None = None
    overall_parts: tuple[str, ...] = ()
    note: str = ""

    def __post_init__(self):
        if self.overall_eigenvalues is None:   # full rank: the whole operator's eigenvalues
            # frozen: the defaults are set once here, through object.__setattr__
            overall = np.asarray(self.eigenvalues)
            object.__setattr__(self, "overall_eigenvalues", overall)
            object.__setattr__(self, "overall_parts", ("signal",) * len(overall))

    @property
    def error_bound(self) -> np.ndarray:
        """Absolute bound on each eigenvalue's error (the residual norm, Weyl/Bauer–Fike)."""
        return self.residual_norms

    @property
    def has_negative(self) -> bool:
        """Whether some returned eigenvalue is negative beyond its error bound (not a minimum)."""
        return bool(np.any(self.eigenvalues < -self.residual_norms))


def _start_vector(op: _EffectiveOperator, rng: np.random.Generator) -> np.ndarray:
    Z = rng.standard_normal(op.U.shape)
    Z = Z - op.vertical(Z)
    return (Z / np.linalg.norm(Z)).reshape(-1)


def _vertical_basis(U: np.ndarray) -> np.ndarray | None:
    """Orthonormal ``(d r) x dim V_U`` basis of ``V_U`` (:meth:`PSDQuotient.vertical_basis`);
    ``None`` when ``V_U = 0`` (LOBPCG's "no constraints")."""
    B = PSDQuotient(*U.shape).vertical_basis(U)
    return B if B.shape[1] else None


def _resolve_preconditioner(loss: Loss, U: np.ndarray, preconditioner, which: str):
    """The horizontal map ``Z -> M Z`` for the lobpcg path, or ``None`` for the eigsh path."""
    if preconditioner is None or which == "largest":
        return None                 # "largest": the population inverse damps the wanted end
    if callable(preconditioner):
        d, r = U.shape

        def user(Z: np.ndarray) -> np.ndarray:
            out = as_matrix(preconditioner(Z), "preconditioner(Z)", shape=(d, r))
            return out
        return user
    if preconditioner == "auto":
        return loss.default_preconditioner(U)
    if isinstance(preconditioner, str) and preconditioner in PRECONDITIONERS:
        return PRECONDITIONERS[preconditioner](U)
    raise ValueError(f"preconditioner must be None, 'auto', a callable or one of "
                     f"{sorted(PRECONDITIONERS)}, got {preconditioner!r}")


#: Named preconditioners for :func:`effective_spectrum`: ``name -> factory(U) -> (Z -> M Z)``.
#: Specific layers register theirs (:mod:`quadnet.sensing` registers ``"population"``, the
#: inverse of the Gaussian-sensing population effective Hessian), so this generic module
#: imports none of them.
PRECONDITIONERS: dict = {}


def register_preconditioner(name: str, factory) -> None:
    """Make ``preconditioner=name`` in :func:`effective_spectrum` mean ``factory(U)``.

    ``factory(U)`` returns a map ``Z -> M Z`` on horizontal ``d x r`` matrices approximating the
    inverse of the effective Hessian at ``U`` (symmetric positive definite on ``H_U``).
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string, got {name!r}")
    if not callable(factory):
        raise TypeError(f"factory must be callable, got {type(factory).__name__}")
    PRECONDITIONERS[name] = factory


def _eigsh_pairs(op: _EffectiveOperator, v0, k, which, tol, ncv, max_iter):
    d, r = op.U.shape
    op.sigma = float(v0 @ op.matvec(v0))          # Rayleigh quotient: about the mean eigenvalue
    mode = "SA" if which == "smallest" else "LA"
    for attempt in range(40):
        try:
            vals, vecs = spla.eigsh(op, k=k, which=mode, v0=v0, tol=tol, ncv=ncv,
                                    maxiter=max_iter)
        except spla.ArpackNoConvergence as exc:
            raise RuntimeError(
                f"effective_spectrum: ARPACK did not converge ({len(exc.eigenvalues)} of k = {k} "
                f"eigenvalues after {op.n_hvp} HVPs); raise max_iter or ncv, or loosen tol"
            ) from None
        order = np.argsort(vals)
        vals, vecs = vals[order], vecs[:, order]
        vert = np.array([np.linalg.norm(op.vertical(vecs[:, j].reshape(d, r)))
                         for j in range(k)])
        if np.all(vert <= 1e-6):
            return vals, vecs
        # a vertical direction (eigenvalue sigma) is among the k wanted: move sigma past the
        # returned values by a spread doubling per attempt (only happens for k ~ n_h / 2 or more)
        spread = 2.0**attempt * max(vals[-1] - vals[0], abs(vals[0]), abs(vals[-1]),
                                    np.finfo(float).tiny)
        op.sigma = vals[-1] + spread if which == "smallest" else vals[0] - spread
    raise RuntimeError("effective_spectrum: vertical directions kept entering the wanted "
                       "eigenvalues; use effective_hessian")  # pragma: no cover


#: ``precision="mixed"``: the float32 stage stops at ``MIXED_FLOOR`` times the measured relative
#: error of one float32 product (times the scale of ``tol``), or at ``tol`` if that is larger.
MIXED_FLOOR = 10.0


def _lobpcg_pairs(op: _EffectiveOperator, prec, X0, tol_abs, max_iter, stall_ok=False):
    """Smallest pairs by LOBPCG, preconditioner ``prec`` on ``H_U``, ``V_U`` as constraints.

    ``stall_ok``: a run that stops above ``tol_abs`` returns its pairs instead of raising (the
    float32 stage of ``precision="mixed"``, which float64 iterations then finish)."""
    d, r = op.U.shape
    n = d * r

    def hmat(V):
        return op.matmat(V)

    def mmat(V):
        out = np.empty_like(V)
        for j in range(V.shape[1]):
            Z = V[:, j].reshape(d, r)
            Zv = op.vertical(Z)
            out[:, j] = (prec(Z - Zv) + Zv).reshape(-1)   # identity on V_U: SPD on R^{dr}
        return out

    A = spla.LinearOperator((n, n), matvec=lambda v: hmat(v.reshape(-1, 1))[:, 0],
                            matmat=hmat, dtype=np.float64)
    M = spla.LinearOperator((n, n), matvec=lambda v: mmat(v.reshape(-1, 1))[:, 0],
                            matmat=mmat, dtype=np.float64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vals, vecs = spla.lobpcg(A, X0, M=M, Y=_vertical_basis(op.U), tol=tol_abs,
                                 maxiter=max_iter, largest=False)
    for w in caught:
        if "not reaching the requested tolerance" in str(w.message) and not stall_ok:
            raise RuntimeError(f"effective_spectrum: lobpcg did not converge after {op.n_hvp} "
                               f"HVPs ({max_iter} iterations); raise max_iter or loosen tol")
    vals = np.atleast_1d(vals)
    order = np.argsort(vals)
    return vals[order], np.asarray(vecs).reshape(n, -1)[:, order]


def _preconditioner_value(value, name):
    if value is None or callable(value) or (isinstance(value, str) and (
            value == "auto" or value in PRECONDITIONERS)):
        return value
    raise (TypeError if not isinstance(value, str) else ValueError)(
        f"{name} must be None, 'auto', a callable or one of {sorted(PRECONDITIONERS)}, got "
        f"{value!r}")


_PRECONDITIONER = Converted(_preconditioner_value,
                            "None, 'auto', a callable or a registered preconditioner name",
                            bad=[("unknown name", "__nope__"), ("int", 3)])


@validate_params({"loss": LOSS, "U": _FACTOR_ANY, "k": Integer(1), "which":
                  Options("smallest", "largest"), "tol": Optional(Real(0, 1, closed="left")),
                  "ncv": Optional(Integer(2)), "max_iter": Optional(Integer(1, 10**7)),
                  "seed": Seed(raw=True), "return_vectors": Boolean(),
                  "preconditioner": _PRECONDITIONER, "maxiter": Optional(Integer(1, 10**7)),
                  "precision": Options("double", "mixed")},
                 relations=[GRADIENT_FINITE])
def effective_spectrum(loss: Loss, U, k: int = 1, which: str = "smallest", *,
                       tol: float | None = None, ncv: int | None = None,
                       max_iter: int | None = None, seed=0, return_vectors: bool = True,
                       preconditioner=None, maxiter: int | None = None,
                       precision: str = "double") -> EffectiveSpectrum:
    r"""The ``k`` smallest or largest eigenvalues of the effective Hessian, matrix-free.

    Two solvers; neither forms a basis of ``H_U``.

    * ``preconditioner=None`` (default), or ``which="largest"``: ARPACK Lanczos
      (:func:`scipy.sparse.linalg.eigsh`, ``which="SA"``/``"LA"``) on
      :func:`effective_operator` (module docstring: the start vector is horizontal and the
      vertical shift is the start's Rayleigh quotient, so the ``r(r-1)/2``-fold vertical
      eigenvalue sits mid-spectrum; every returned vector is checked to be horizontal).
      ``tol`` (default ``1e-10``) is ARPACK's relative stopping tolerance on the Ritz residual.
    * ``preconditioner`` given and ``which="smallest"``: LOBPCG
      (:func:`scipy.sparse.linalg.lobpcg`) on ``R^{d r}`` with the vertical space ``V_U`` as
      constraints (an orthonormal basis of ``vec(U Omega_ab)``, ``a < b``) and the
      preconditioner applied to horizontal residuals. ``"population"`` is
      :func:`population_effective_inverse` (the exact inverse of the Gaussian-sensing
      population effective Hessian at ``U``, ``O(d r^2 + r^3)`` per application; SPD on
      ``H_U`` at every full-rank ``U``, so valid away from minimisers too); ``"auto"`` uses it
      for :class:`quadnet.GaussianSensing` losses and ARPACK otherwise; a callable maps a
      horizontal ``d x r`` array to ``M Z`` for a user SPD ``M ~ H_eff^{-1}``. ``tol``
      (default ``1e-6``) is the residual tolerance relative to ``||H_eff x0||`` for the random
      unit horizontal start ``x0`` (about the RMS eigenvalue); the eigenvalue error is of
      order ``residual^2 / gap``, so ``1e-6`` gives ~1e-10 relative eigenvalues on the
      sensing benchmark (docs/curvature.md §4). Used only if ``n_h >= 5 k`` (else ARPACK).

    ``residual_norms`` are recomputed afterwards with one HVP per pair, so ``error_bound``
    is an a-posteriori guarantee on both paths.

    ``precision="mixed"`` (LOBPCG path, for a loss with
    :meth:`~quadnet.Loss.single_precision_hvp_at`, e.g. :class:`quadnet.GaussianSensing`)
    iterates with float32 Hessian-vector products, then continues LOBPCG in float64 from the
    float32 vectors until ``tol`` holds in float64, and returns float64 Rayleigh quotients with
    float64 residuals: the same guarantee as ``"double"``, at about half the cost per product
    where reading the data is the cost (docs/curvature.md §4). Negative eigenvalues are returned as they are
    (see :attr:`EffectiveSpectrum.has_negative`).

    At a rank-deficient ``U`` (rank ``k < r``) the solver runs on the signal block, the
    effective Hessian of ``U_k = U V_k`` (exactly the signal part, :class:`BoundarySpectrum`),
    and the excess block is reported separately (:attr:`EffectiveSpectrum.rank`,
    ``structural_zeros``, ``excess_eigenvalues``). ``eigenvalues`` are then the signal
    block's, which need not be the extreme eigenvalues of the whole effective Hessian (those of
    ``numpy.linalg.eigvalsh(effective_hessian(loss, U))``): ``overall_eigenvalues`` are, with
    ``overall_parts`` naming the block of each and ``note`` saying both in words; when an excess
    eigenvalue that is not a structural zero lies beyond the signal block's, the call warns
    with :class:`quadnet.exceptions.RankDeficientSpectrumWarning`.

    Args:
        loss: any :class:`quadnet.Loss`; U: ``d x r`` factor of any rank ``>= 1``.
        k: number of eigenvalues, ``1 <= k <= n_h - 1`` (all of them: use
            ``numpy.linalg.eigvalsh(effective_hessian(loss, U))``).
        which: ``"smallest"`` or ``"largest"`` (algebraic).
        tol: stopping tolerance (see above; ``None`` = the solver's default).
        ncv: ARPACK's Lanczos basis size (default ``max(2k + 1, 20)`` capped at ``d r``).
        max_iter: ARPACK restarts / LOBPCG iterations (LOBPCG default 1000). The former
            name ``maxiter=`` is still accepted with a :class:`DeprecationWarning`.
        seed: seed or Generator for the start vector(s) (same seed, same bits).
        return_vectors: return the eigenvectors as ``(k, d, r)`` horizontal matrices.
        preconditioner: ``None`` | ``"auto"`` | ``"population"`` | callable (see above).
        precision: ``"double"`` (default) or ``"mixed"`` (see above; needs a preconditioner,
            ``which="smallest"`` and a loss with a float32 HVP).

    Raises:
        ValueError: bad ``k``, ``which``, ``tol``, ``ncv``, ``max_iter``, ``preconditioner``.
        TypeError: both ``max_iter=`` and its former name ``maxiter=`` given.
        RuntimeError: the eigensolver did not converge (message says what to change).

    Examples
    --------
    At an over-parameterised minimiser (width 3, rank 1) the solver runs on the signal block and
    the idle columns' flat directions are counted separately:

    >>> import numpy as np
    >>> from quadnet import FrobeniusLoss
    >>> U = np.zeros((4, 3)); U[0, 0] = 1.0
    >>> sp = effective_spectrum(FrobeniusLoss(U @ U.T), U, k=1)
    >>> sp.rank, sp.structural_zeros, round(float(sp.eigenvalues[0]), 10)
    (1, 6, 2.0)
    >>> sp.overall_parts, round(abs(float(sp.overall_eigenvalues[0])), 10)  # the whole operator
    (('excess',), 0.0)
    """
    max_iter = renamed_keyword(max_iter, maxiter, "max_iter", "maxiter", "effective_spectrum")
    sp = _split(U)
    if sp.rank < U.shape[1]:
        if sp.rank == 0:
            raise ValueError("effective_spectrum: U = 0 has no signal part; use "
                             "boundary_spectrum")
        out = effective_spectrum(loss, sp.U_k, k, which, tol=tol, ncv=ncv, max_iter=max_iter,
                                 seed=seed, return_vectors=return_vectors,
                                 preconditioner=preconditioner, precision=precision)
        excess = np.linalg.eigvalsh(_excess_block(loss, U, sp))
        scale = max(float(np.max(np.abs(out.eigenvalues))), float(np.max(np.abs(excess))),
                    np.finfo(float).tiny)
        out = dataclasses.replace(
            out, structural_zeros=(U.shape[1] - sp.rank) * int(
                np.count_nonzero(np.abs(excess) <= ZERO_RTOL * scale)),
            excess_eigenvalues=excess, rank=sp.rank,
            n_h=horizontal_dimension(*U.shape, sp.rank),
            eigenvectors=None if out.eigenvectors is None else out.eigenvectors @ sp.V_k.T)
        return dataclasses.replace(out, **_both_parts(out, U.shape[1], scale))
    d, r = U.shape
    n_h = horizontal_dimension(d, r)
    if n_h < 2:
        raise ValueError(f"effective_spectrum needs n_h >= 2 (got n_h = {n_h} for d = {d}, "
                         f"r = {r}); use effective_hessian")
    if k > n_h - 1:
        raise ValueError(f"k must be <= n_h - 1 = {n_h - 1} (d = {d}, r = {r}), got {k}")
    if ncv is not None:
        if not k + 1 <= ncv <= d * r:
            raise ValueError(f"ncv must be in [k + 1, d r] = [{k + 1}, {d * r}], got {ncv}")
    else:
        ncv = min(max(2 * k + 1, 20), d * r)
    prec = _resolve_preconditioner(loss, U, preconditioner, which)
    if n_h < 5 * k:
        prec = None
    hvp32 = None
    if precision == "mixed":
        if prec is None:
            raise ValueError("precision='mixed' runs LOBPCG: give a preconditioner (and "
                             "which='smallest', n_h >= 5 k)")
        hvp32 = loss.single_precision_hvp_at(U)
        if hvp32 is None:
            raise ValueError(f"precision='mixed' needs a loss with a float32 Hessian-vector "
                             f"product (single_precision_hvp_at); {type(loss).__name__} has "
                             f"none")
    rng = to_rng(seed)

    op = _EffectiveOperator(loss, U, 0.0)
    if prec is None:
        v0 = _start_vector(op, rng)
        vals, vecs = _eigsh_pairs(op, v0, k, which, 1e-10 if tol is None else float(tol),
                                  ncv, max_iter)
        method, sigma = "eigsh", op.sigma
    else:
        X0 = np.column_stack([_start_vector(op, rng) for _ in range(k)])
        scale = float(np.linalg.norm(op.matvec(X0[:, 0])))
        if not np.isfinite(scale):
            raise ValueError("effective_spectrum: non-finite eigenvalues (the loss's HVP is "
                             "not finite)")
        tol_abs = (1e-6 if tol is None else float(tol)) * scale
        iters = 1000 if max_iter is None else max_iter
        if hvp32 is not None:        # iterate in float32, then finish in float64
            op32 = _EffectiveOperator(loss, U, 0.0, hvp=hvp32)
            x = X0[:, 0]
            eps32 = float(np.linalg.norm(op32.matvec(x) - op.matvec(x))) / scale
            # the float32 residuals are noise below ~ eps32 * ||H||: stop the float32 stage
            # well above that floor, and let float64 iterations take it to tol
            _, X0 = _lobpcg_pairs(op32, prec, X0, max(tol_abs, MIXED_FLOOR * eps32 * scale),
                                  iters, stall_ok=True)
            op.n_hvp += op32.n_hvp
        vals, vecs = _lobpcg_pairs(op, prec, X0, tol_abs, iters)
        method, sigma = ("lobpcg" if hvp32 is None else "lobpcg-mixed"), 0.0

    X = np.empty((k, d, r))
    res = np.empty(k)
    for j in range(k):
        Z = vecs[:, j].reshape(d, r)
        Z = Z - op.vertical(Z)                       # exactly horizontal (was to ~1e-6)
        Z /= np.linalg.norm(Z)
        X[j] = Z
        HZ = op.hvp(Z)
        HZ = HZ - op.vertical(HZ)
        if hvp32 is not None:                        # the float64 Rayleigh quotient
            vals[j] = float(np.sum(Z * HZ))
        res[j] = np.linalg.norm(HZ - vals[j] * Z)
    if not np.all(np.isfinite(vals)) or not np.all(np.isfinite(res)):
        raise ValueError("effective_spectrum: non-finite eigenvalues (the loss's HVP is not finite)")
    return EffectiveSpectrum(vals, X if return_vectors else None, res, which, n_h, op.n_hvp,
                             sigma, method, rank=r)


def _both_parts(out: EffectiveSpectrum, r: int, scale: float) -> dict:
    """The fields ``overall_eigenvalues``/``overall_parts``/``note`` of a rank-deficient result;
    warns when the signal block's extreme eigenvalue is not the whole operator's.

    The ``k`` extreme eigenvalues of ``H_eff(U_k) (+) (I_{r-k} (x) E)`` lie among the ``k``
    extreme ones of the signal block and the excess eigenvalues repeated ``r - k`` times, so
    merging the two lists is exact.
    """
    k, excess, sig = out.rank, out.excess_eigenvalues, np.asarray(out.eigenvalues)
    vals = np.concatenate([sig, np.repeat(excess, r - k)])
    parts = np.array(["signal"] * sig.size + ["excess"] * (excess.size * (r - k)))
    order = np.argsort(vals, kind="stable")
    keep = order[:sig.size] if out.which == "smallest" else order[vals.size - sig.size:]
    overall = vals[keep]
    low = out.which == "smallest"
    ext_sig, ext_exc = (sig[0], excess[0]) if low else (sig[-1], excess[-1])
    word = "smallest" if low else "largest"
    beyond = ext_exc < ext_sig if low else ext_exc > ext_sig
    structural = abs(ext_exc) <= ZERO_RTOL * scale
    note = (f"U has rank {k} < r = {r}: `eigenvalues` are the signal block's ({word} "
                f"{ext_sig:.6g}); the excess block of the {r - k} idle column(s) has {word} "
                f"eigenvalue {ext_exc:.6g}{' (a structural zero)' if structural else ''}, so "
                f"the {word} eigenvalue of the whole effective Hessian is "
                f"{overall[0 if low else -1]:.6g} "
                f"({'excess' if beyond else 'signal'}; `overall_eigenvalues`)")
    if beyond and not structural:
        warnings.warn(note, RankDeficientSpectrumWarning, stacklevel=4)
    return {"overall_eigenvalues": overall, "overall_parts": tuple(parts[keep].tolist()),
            "note": note}


# --------------------------------------------------------------- the rank boundary
@dataclass
class _Split:
    """A ``d x r`` factor of numerical rank ``k`` split as ``U = U_k V_k^T`` (``U_k = U V_k``).

    ``V_k`` (``r x k``) and ``V_0`` (``r x (r-k)``) are right singular vectors (kept and
    numerical kernel), ``W_0`` (``d x (d-k)``) an orthonormal basis of ``range(U)^perp``.
    """

    rank: int
    U_k: np.ndarray
    V_k: np.ndarray
    V_0: np.ndarray
    W_0: np.ndarray


def _split(U: np.ndarray) -> _Split:
    d, r = U.shape
    W, s, Vt = np.linalg.svd(U, full_matrices=True)
    k = int(np.count_nonzero(s > RANK_RTOL * s[0])) if s[0] > 0 else 0
    V = Vt.T
    return _Split(k, U @ V[:, :k], V[:, :k], V[:, k:], W[:, k:])


def _excess_block(loss: Loss, U: np.ndarray, sp: _Split) -> np.ndarray:
    """``2 W_0^T S W_0``: the effective Hessian on each idle column (docs/overparam.md)."""
    S = np.asarray(loss.gradient(U @ U.T), dtype=np.float64)
    E = 2.0 * (sp.W_0.T @ S @ sp.W_0)
    return sym(E)


#: Default relative tolerance below which an excess eigenvalue counts as a structural zero.
ZERO_RTOL = 1e-8


@dataclass(frozen=True)
class BoundarySpectrum:
    r"""The effective spectrum at a factor of rank ``k <= r``, split by the block structure.

    At ``U = U_k V_k^T`` (rank ``k``) the horizontal space is the orthogonal sum of the
    *signal* part ``{xi_1 V_k^T : xi_1 in H_{U_k}}`` and the *excess* part
    ``{N V_0^T : W_0^T W_0 N = N}`` (the ``r - k`` idle columns, each in ``range(U)^perp``), and the effective
    Hessian is block diagonal there (docs/overparam.md, quadnet theory §3):

    .. math:: H_\mathrm{eff}(U) = H_\mathrm{eff}(U_k) \oplus
              \big(I_{r-k} \otimes 2\,W_0^\top S W_0\big).

    Attributes
    ----------
    rank : int
        Numerical rank ``k`` (``sigma_i > RANK_RTOL sigma_max``, :data:`quadnet._validation.RANK_RTOL`).
    n_h : int
        ``dim H_U = d r - r(r-1)/2 + (r-k)(r-k-1)/2``.
    signal : ndarray
        Eigenvalues of ``H_eff(U_k)`` (ascending, ``d k - k(k-1)/2`` of them).
    excess : ndarray
        Eigenvalues of ``2 W_0^T S W_0`` (ascending, ``d - k``), each of multiplicity ``r - k``.
    structural_zeros : int
        ``(r - k)`` times the number of excess eigenvalues with ``|mu| <= zero_rtol *
        scale`` (``scale = max |eigenvalue|`` of both blocks): the flat directions of the idle
        columns. ``(r - k)(d - k)`` at a zero-residual minimiser (``S = 0``).
    zero_rtol : float
    """

    rank: int
    n_h: int
    signal: np.ndarray
    excess: np.ndarray
    structural_zeros: int
    zero_rtol: float
    width: int

    @property
    def eigenvalues(self) -> np.ndarray:
        """All ``n_h`` eigenvalues of the effective Hessian (ascending, with multiplicities)."""
        return np.sort(np.concatenate([self.signal, np.repeat(self.excess, self.width - self.rank)]))

    @property
    def lambda_min_signal(self) -> float:
        """Smallest non-structural eigenvalue on the signal part (``nan`` if ``k = 0``)."""
        return float(self.signal[0]) if self.signal.size else float("nan")

    @property
    def has_negative(self) -> bool:
        """Some eigenvalue (signal or excess) is negative beyond ``zero_rtol`` (a saddle)."""
        scale = max(np.max(np.abs(self.eigenvalues), initial=0.0), np.finfo(float).tiny)
        return bool(np.any(self.eigenvalues < -self.zero_rtol * scale))


@validate_params({"loss": LOSS, "U": _FACTOR_ANY, "zero_rtol": Real(0, 1, closed="neither")},
                 relations=[_dense_guard("the dense effective Hessian (n_h x n_h)",
                                         lambda d, r: d * r)])
def boundary_spectrum(loss: Loss, U, *, zero_rtol: float = ZERO_RTOL) -> BoundarySpectrum:
    r"""Dense effective spectrum at a factor of any rank, with the structural zeros counted.

    The block structure of :class:`BoundarySpectrum` holds at every ``U`` (not only at
    critical points): for ``xi = [xi_1, 0]`` (in the gauge ``U = [U_k, 0]``),
    ``D^2 L(U)[xi] = [D^2 L_k(U_k)[xi_1], 0]`` with ``L_k(U_k) = ell(U_k U_k^T)``; for
    ``xi = [0, N]`` with ``U_k^T N = 0``, ``xi U^T = 0`` so ``D^2 L(U)[xi] = [0, 2 S N]``, and
    the horizontal projection keeps ``(I - W_k W_k^T) 2 S N``. Meaning of the zeros: an idle
    column moved along ``ker(W_0^T S W_0)`` changes the loss only at fourth order
    (``ell(Q + N N^T)``), so gradient flow shrinks it algebraically (``1/(4t)`` for
    :class:`quadnet.FrobeniusLoss`) instead of exponentially; they are not gauge directions
    (those are the vertical space, already removed) and no choice of quotient removes them.

    Parameters
    ----------
    loss : quadnet.Loss
    U : (d, r) array_like
        Finite factor of any rank ``k <= r``.
    zero_rtol : float
        Relative threshold of a structural zero, in ``(0, 1)``.

    Returns
    -------
    BoundarySpectrum

    Raises
    ------
    TypeError
        ``loss`` is not a Loss.
    ValueError
        ``U`` is not a finite ``d x r`` array, ``zero_rtol`` not in ``(0, 1)``, or the HVP is
        not symmetric.

    Examples
    --------
    >>> import numpy as np
    >>> from quadnet import FrobeniusLoss
    >>> T = np.diag([2.0, 1.0, 0.0, 0.0])
    >>> U = np.zeros((4, 3)); U[0, 0], U[1, 1] = np.sqrt(2.0), 1.0   # rank-2 minimiser, r = 3
    >>> sp = boundary_spectrum(FrobeniusLoss(T), U)
    >>> sp.rank, sp.n_h, sp.structural_zeros, round(sp.lambda_min_signal, 12)
    (2, 9, 2, 2.0)
    """
    d, r = U.shape
    sp = _split(U)
    k = sp.rank
    signal = (np.linalg.eigvalsh(effective_hessian(loss, sp.U_k)) if k > 0 else np.empty(0))
    excess = np.linalg.eigvalsh(_excess_block(loss, U, sp)) if k < r else np.empty(0)
    scale = max(np.max(np.abs(signal), initial=0.0), np.max(np.abs(excess), initial=0.0),
                np.finfo(float).tiny)
    zeros = (r - k) * int(np.count_nonzero(np.abs(excess) <= zero_rtol * scale))
    return BoundarySpectrum(k, horizontal_dimension(d, r, k), signal, excess, zeros,
                            zero_rtol, r)


# ------------------------------------------------------------------ structured Gram route
@validate_params({"loss": LOSS, "U": Factor(), "k": Integer(1), "return_vectors": Boolean()},
                 relations=[_dense_guard("the Gram-route Hessian (d r x d r)",
                                         lambda d, r: d * r), GRADIENT_FINITE])
def gram_effective_spectrum(loss: Loss, U, k: int = 1, *,
                            return_vectors: bool = True) -> EffectiveSpectrum:
    r"""The ``k`` smallest effective eigenvalues from the loss's Gram factor: one GEMM, one ``eigh``.

    For a least-squares loss ``ell(Q) = 1/(2m) sum_i (<A_i, Q> - y_i)^2`` the factor Hessian is

    .. math:: D^2 L(U) = K^\top K + 2 S \otimes I_r, \qquad
              K_i = \tfrac{1}{\sqrt m}\,\mathrm{vec}\big(A_i U + A_i^\top U\big)

    (row-major ``vec``; quadnet theory §3: the Gauss-Newton part is the measurement Gram form
    ``(1/m) sum_i <A_i, xi U^T + U xi^T>^2``). For rank-one sensing ``A_i = x_i x_i^T`` the
    rows are ``(2/sqrt m) vec(x_i (U^T x_i)^T)``. The loss supplies ``K`` through the hook
    ``loss.gram_factor(U)`` (an ``(m, d r)`` array); this module never looks inside the loss.
    Then ``H = K^T K + 2 S (x) I_r`` costs one ``(d r) x m x (d r)`` product (BLAS ``syrk``,
    ``m (d r)^2`` flops), and the effective
    spectrum is that of ``P_h H P_h + sigma P_v`` with ``sigma = 2 ||H||_F + 1`` above every
    eigenvalue, ``P_v = V V^T`` from :meth:`quadnet.PSDQuotient.vertical_basis`: its ``k``
    smallest eigenvalues (LAPACK ``evr``, only those computed) are the ``k`` smallest of the
    effective Hessian at any ``U`` (at a critical point with ``H_eff >= 0`` they are the
    eigenvalues of ``H`` from index ``r(r-1)/2`` on, the vertical zeros coming first).
    Memory ``m d r + (d r)^2`` doubles, so meant for ``d r`` up to a few thousand; above,
    use the matrix-free :func:`effective_spectrum`. Residual norms are recomputed with one
    HVP per pair, as in :func:`effective_spectrum`.

    Parameters
    ----------
    loss : quadnet.Loss
        A loss with a ``gram_factor(U)`` method.
    U : (d, r) array_like
        Full-column-rank factor (at a rank-deficient ``U`` use :func:`boundary_spectrum`).
    k : int
        Number of smallest eigenvalues, ``1 <= k <= n_h``.
    return_vectors : bool

    Returns
    -------
    EffectiveSpectrum
        ``method = "gram"``, ``n_hvp = k`` (the residual check).

    Raises
    ------
    TypeError
        ``loss`` is not a Loss, or has no ``gram_factor``.
    ValueError
        Bad ``U`` or ``k``, or ``gram_factor`` returned the wrong shape or non-finite values.

    Examples
    --------
    >>> import numpy as np
    >>> from quadnet import FrobeniusLoss
    >>> class Entrywise(FrobeniusLoss):     # 1/2 sum_ab (Q_ab - T_ab)^2: rows d(Q_ab)/d vec(U)
    ...     def gram_factor(self, U):
    ...         d, r = U.shape
    ...         K = np.einsum("ac,bj->abcj", np.eye(d), U) + np.einsum("bc,aj->abcj", np.eye(d), U)
    ...         return K.reshape(d * d, d * r)
    >>> U = np.array([[2.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    >>> loss = Entrywise(U @ U.T)
    >>> g = gram_effective_spectrum(loss, U, k=2)
    >>> bool(np.allclose(g.eigenvalues, np.linalg.eigvalsh(effective_hessian(loss, U))[:2]))
    True
    """
    import scipy.linalg
    import scipy.linalg.blas

    d, r = U.shape
    n_h = horizontal_dimension(d, r)
    if k > n_h:
        raise ValueError(f"k must be <= n_h = {n_h} (d = {d}, r = {r}), got {k}")
    hook = getattr(loss, "gram_factor", None)
    if not callable(hook):
        raise TypeError(f"gram_effective_spectrum needs a loss with a gram_factor(U) method; "
                        f"{type(loss).__name__} has none (use effective_spectrum)")
    K = np.asarray(hook(U), dtype=np.float64)
    if K.ndim != 2 or K.shape[1] != d * r or not np.all(np.isfinite(K)):
        raise ValueError(f"loss.gram_factor(U) must be a finite (m, {d * r}) array, got shape "
                         f"{K.shape}")
    # one symmetric rank-m update (BLAS syrk: half the flops of K^T K), upper triangle
    H = scipy.linalg.blas.dsyrk(1.0, np.asfortranarray(K.T) if not K.flags.c_contiguous
                                else K.T, trans=0)
    H = np.triu(H) + np.triu(H, 1).T
    S2 = 2.0 * np.asarray(loss.gradient(U @ U.T), dtype=np.float64)
    if np.any(S2):
        H += np.kron(S2, np.eye(r))
    V = PSDQuotient(d, r).vertical_basis(U)
    if V.shape[1]:
        HV = H @ V
        VtHV = V.T @ HV
        H = H - V @ HV.T - HV @ V.T + V @ VtHV @ V.T
        H += (2.0 * np.linalg.norm(H) + 1.0) * (V @ V.T)
    H = sym(H)
    vals, vecs = scipy.linalg.eigh(H, subset_by_index=[0, k - 1], driver="evr")
    X = np.empty((k, d, r))
    res = np.empty(k)
    hvp = loss.hvp_at(U)
    vert = PSDQuotient(d, r)
    for j in range(k):
        Z = vert.horizontal_projection(U, vecs[:, j].reshape(d, r))
        Z /= np.linalg.norm(Z)
        X[j] = Z
        HZ = vert.horizontal_projection(U, np.asarray(hvp(Z), dtype=np.float64))
        res[j] = np.linalg.norm(HZ - vals[j] * Z)
    if not (np.all(np.isfinite(vals)) and np.all(np.isfinite(res))):
        raise ValueError("gram_effective_spectrum: non-finite eigenvalues")
    return EffectiveSpectrum(vals, X if return_vectors else None, res, "smallest", n_h, k, 0.0,
                             "gram", rank=r)
