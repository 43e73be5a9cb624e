r"""Quotient geometry of PSD matrices, :math:`M_r^+ \cong F_{d,r} / O(r)`, at every factor
(quadnet theory §1; the rank-deficient strata in ``docs/stratified.md``).

A point is represented by a factor ``U`` (``d x r``); the predictor is ``Q = U U^T``. All
``U R`` with ``R`` in ``O(r)`` represent the same point (the *fibre*). Tangent vectors are
represented by horizontal lifts: ``d x r`` matrices ``xi`` with ``U^T xi`` symmetric. The metric
is the Frobenius inner product of horizontal lifts (Bures–Wasserstein, Massart & Absil 2020).

Every method accepts any finite ``d x r`` factor of numerical rank ``k <= r`` (``U = 0``
included): ``rank(U) = #{i : sigma_i(U) > rank_rtol * sigma_max(U)}`` with the one tolerance
``quadnet._validation.RANK_RTOL`` (``1e-10``) unless the manifold is built with another.
The projections are the orthogonal projections onto ``V_U = {U Omega : Omega skew}`` (dimension
``r(r-1)/2 - (r-k)(r-k-1)/2``) and its complement ``H_U``, through the minimum-norm solution
of the (possibly singular) Lyapunov equation ``G Omega + Omega G = U^T Z - Z^T U``
(``G = U^T U``). All work at a point goes through one eigendecomposition of ``G`` (or one SVD
of ``U`` when ``kappa(U) >= 100``), see ``quadnet.geometry._kernels``.

With ``field="complex"`` the factors are complex (``U`` in ``C^{d x r}``, ``Q = U U^*``
Hermitian PSD, fibres ``U R`` with ``R`` unitary) and every formula above holds with ``A^*``
for ``A^T``, skew-Hermitian ``Omega`` and the real inner product ``Re tr(xi^* eta)``; the
kernels are shared (``quadnet.geometry._kernels`` is field-generic).

Validation happens once, at the public methods: a non-array, a wrong shape or a non-finite
entry raises ``TypeError``/``ValueError`` naming the argument. For speed the structural
checks (type, dtype, shape) run first and finiteness is checked once on the result (a NaN or
inf in an input always reaches the result); a non-finite result re-runs the full checks,
which name the offending argument.
"""

from __future__ import annotations

import math

import numpy as np
from pymanopt.manifolds.manifold import Manifold

from quadnet._validation import (R_LE_D, RANK_RTOL, Array, Bind, Boolean, Converted, Factor,
                                 Integer, Optional, Real, Relation, Seed, Symmetric, as_array,
                                 as_factor, as_matrix, as_rng, as_symmetric, declare_params,
                                 name_method, named_call, nested, rank_at_most_dimension,
                                 validate_params)
import quadnet.geometry._kernels as _k
from quadnet.geometry._kernels import horizontal_dim, vertical_dim

__all__ = ["PSDQuotient", "align", "bures_wasserstein", "horizontal_dimension", "lyapunov_skew"]

_F64 = np.dtype(np.float64)
_C128 = np.dtype(np.complex128)
#: The fields of :class:`PSDQuotient`: real factors (``O(r)`` fibres) or complex ones (``U(r)``).
FIELDS = ("real", "complex")


def _as_field(value, name: str) -> str:
    """``"real"`` or ``"complex"``; anything else is a ``ValueError`` naming ``name``."""
    if isinstance(value, str) and value in FIELDS:
        return value
    raise ValueError(f"{name} must be 'real' or 'complex', got {value!r}")


_FIELD = Converted(_as_field, "``'real'`` or ``'complex'``",
                   bad=[("unknown", "quaternion"), ("None", None), ("int", 3)],
                   raises=(ValueError,))
_FIELD_OR_NONE = Converted(lambda v, name: None if v is None else _as_field(v, name),
                           "``None`` (from the data), ``'real'`` or ``'complex'``",
                           bad=[("unknown", "quaternion"), ("int", 3)], raises=(ValueError,))


def _declared(field: str | None, **arrays) -> None:
    """Refuse a complex array where ``field="real"`` is declared (``TypeError`` naming it)."""
    if field == "real":
        for name, a in arrays.items():
            if a.dtype.kind == "c":
                raise TypeError(f"{name} must be real (field='real' is declared), got complex "
                                f"dtype {a.dtype}; pass field='complex' or None")


#: The inline check of the bool flags (a ``TypeError`` for ``'False'``, ``2``, ``None``...).
_BOOLEAN = Boolean()


def _finite(a: np.ndarray) -> bool:
    """All entries finite (real or complex128 ``a``): see :func:`_finite_real`."""
    return _finite_real(a.ravel().view(np.float64) if a.dtype is _C128 else a)


def _finite_real(a: np.ndarray) -> bool:
    """All entries of a real array finite: one dot product (NaN/inf propagate into it), exact
    fallback."""
    v = a.ravel()
    try:
        if math.isfinite(v.dot(v)):
            return True
    except (RuntimeWarning, FloatingPointError):  # overflow of |a| > 1e154 under -W error
        pass
    return bool(np.isfinite(a).all())


_r_at_most_d = rank_at_most_dimension  # the one r <= d check (quadnet._validation)
_R_LE_D = R_LE_D


def _k_at_most_r(a):
    if a["k"] is not None and a["k"] > a["r"]:
        return f"k must satisfy 0 <= k <= r, got k = {a['k']} > r = {a['r']}"
    return None


@validate_params({"d": Integer(1), "r": Integer(1), "k": Optional(Integer(0)), "field": _FIELD},
                 relations=[_R_LE_D, Relation(("k", "r"), _k_at_most_r, "``k <= r``")])
def horizontal_dimension(d: int, r: int, k: int | None = None, *, field: str = "real") -> int:
    r"""Dimension of the horizontal space ``H_U`` at a ``d x r`` factor of rank ``k``.

    ``dim H_U = d r - r(r-1)/2 + (r-k)(r-k-1)/2`` (quadnet theory §1 and
    ``docs/stratified.md``); at full rank (``k = r``, the default) this is
    ``n_h = d r - r(r-1)/2 = dim M_r^+``. Complex factors (``field="complex"``, skew-Hermitian
    vertical generators): ``2 d r - r^2 + (r-k)^2``, ``2 d r - r^2`` at full rank.

    Parameters
    ----------
    d, r : int
        Ambient dimension and width, ``1 <= r <= d``.
    k : int, optional
        Rank of the factor, ``0 <= k <= r`` (default ``r``).
    field : {"real", "complex"}
        The field of the factor.

    Returns
    -------
    int

    Raises
    ------
    TypeError, ValueError
        For non-integer or out-of-range sizes.

    Examples
    --------
    >>> horizontal_dimension(5, 2)
    9
    >>> horizontal_dimension(5, 3, k=1)   # dim V_U = 3 - 1 = 2
    13
    >>> horizontal_dimension(5, 2, field="complex")     # 2 d r - r^2
    16
    """
    return horizontal_dim(d, r, r if k is None else k, field)


def _eig_pair(value, name: str):
    """``None``, a :class:`_kernels.Frame`, or the pair ``(values, vectors)`` as float64 arrays."""
    if value is None or isinstance(value, _k.Frame):
        return value
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        what = type(value).__name__ if not isinstance(value, (tuple, list)) else \
            f"a sequence of length {len(value)}"
        raise TypeError(f"{name} must be None or the pair (values, vectors) returned by "
                        f"numpy.linalg.eigh(U.T @ U), got {what}")
    return (as_array(value[0], f"{name}[0] (the eigenvalues)", ndim=1),
            as_array(value[1], f"{name}[1] (the eigenvectors)", ndim=2, allow_complex=True))


#: Residual of ``(U^T U) E = E diag(s)`` and of ``E^T E = I`` (relative) above which ``eig`` is
#: not an eigendecomposition of ``U^T U`` (``eigh`` itself leaves ~1e-15).
EIG_RTOL = 1e-8


def _eig_matches(a) -> str | None:
    eig, U = a["eig"], a["U"]
    if eig is None or isinstance(eig, _k.Frame):
        return None
    (s, E), r = eig, U.shape[1]
    if s.shape != (r,) or E.shape != (r, r):
        return (f"eig must be (values, vectors) of shapes ({r},) and ({r}, {r}) for U with r = {r}, "
                f"got {s.shape} and {E.shape}")
    if np.any(np.diff(s) < 0):
        return "eig[0] (the eigenvalues) must be in ascending order, as numpy.linalg.eigh returns"
    with np.errstate(over="ignore", invalid="ignore"):
        G = _k.ct(U) @ U
        scale = max(float(np.linalg.norm(G)), np.finfo(float).tiny)
        res = float(np.linalg.norm(G @ E - E * s)) / scale
        orth = float(np.linalg.norm(_k.ct(E) @ E - np.eye(r)))
    if math.isfinite(scale) and not (res <= EIG_RTOL and orth <= EIG_RTOL):
        return (f"eig is not an eigendecomposition of U^T U: ||G E - E diag(s)|| / ||G|| = "
                f"{res:.3g}, ||E^T E - I|| = {orth:.3g} (> {EIG_RTOL:g}); pass "
                f"numpy.linalg.eigh(U.T @ U) or None")
    return None


_EIG = Converted(_eig_pair, "None or the pair (values, vectors) of numpy.linalg.eigh(U.T @ U)",
                 bad=[("string", "abc"), ("float", float("nan")), ("matrix", np.eye(2))])


@validate_params({"U": Factor(full_rank=False, allow_complex=True),
                  "K": Array(shape=("r", "r"), allow_complex=True),
                  "eig": _EIG, "exact": Boolean()},
                 relations=[Relation(("U", "eig"), _eig_matches,
                                     "``eig`` is ``None`` or ``numpy.linalg.eigh(U.T @ U)`` "
                                     "(shapes ``(r,)``, ``(r, r)``)")])
def lyapunov_skew(U, K, eig=None, *, exact: bool = True) -> np.ndarray:
    r"""Minimum-norm solution ``Omega`` of ``(U^T U) Omega + Omega (U^T U) = K``.

    In the eigenbasis ``G = U^T U = E diag(s) E^T``:
    ``Omega = E [ (E^T K E)_ij / (s_i + s_j) ] E^T``, with the pairs whose singular values
    are both at or below ``RANK_RTOL * sigma_max(U)`` set to 0 -- the minimum-norm
    (pseudo-inverse) solution, which is the exact solution at full rank (quadnet theory §1,
    ``docs/stratified.md``). ``K`` skew gives ``Omega`` skew, ``K`` symmetric gives ``Omega``
    symmetric. Any finite factor is accepted (``U = 0`` gives ``Omega = 0``). Complex ``U``
    (the Hermitian quotient): ``G = U^* U``, ``E^*`` for ``E^T``, ``K`` skew-Hermitian gives
    ``Omega`` skew-Hermitian.

    Parameters
    ----------
    U : array_like, shape (d, r)
        Finite factor, any rank.
    K : array_like, shape (r, r)
        Right-hand side.
    eig : tuple or Frame, optional
        ``numpy.linalg.eigh(U.T @ U)`` computed once by a caller solving many equations at
        the same ``U`` (ignored in favour of an SVD of ``U`` when ``kappa(U) >= 100``), or the
        point's ``quadnet.geometry._kernels.Frame`` (``_kernels.frame(U)``, for callers inside
        ``quadnet.geometry``).
    exact : bool
        If true (default), raise ``ValueError`` when ``K`` is not in the range of the
        Lyapunov operator (its entries on the dropped pairs exceed ``1e-10 ||K||_F``: only
        possible at rank ``<= r - 2`` for skew ``K``, or rank ``< r`` for symmetric ``K``);
        if false, return the minimum-norm least-squares solution.

    Returns
    -------
    ndarray, shape (r, r)

    Raises
    ------
    TypeError, ValueError
        Non-array, wrong-shape or non-finite ``U`` or ``K``; with ``exact``, a ``K`` outside
        the range of the operator (e.g. ``U = 0`` and ``K != 0``).

    Examples
    --------
    >>> import numpy as np
    >>> U = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    >>> Om = lyapunov_skew(U, np.array([[0.0, 5.0], [-5.0, 0.0]]))
    >>> print(np.round(Om, 12))
    [[ 0.  1.]
     [-1.  0.]]
    >>> Om = lyapunov_skew(np.ones((3, 2)), np.array([[0.0, 1.0], [-1.0, 0.0]]))  # rank 1: solvable
    >>> round(float(Om[0, 1]), 12), bool(np.allclose(Om, -Om.T))      # 1 / (0 + 6)
    (0.166666666667, True)
    >>> bool(lyapunov_skew(np.zeros((3, 2)), np.array([[0.0, 1.0], [-1.0, 0.0]]),
    ...                    exact=False).any())
    False
    """
    r = U.shape[1]
    fr = _k.frame(U) if eig is None else _k.frame_from_eig(U, eig)
    if exact and fr.rank < r:
        Kt = _k.ct(fr.E) @ K @ fr.E
        miss = float(np.linalg.norm(Kt[fr.inv == 0.0]))
        if miss > 1e-10 * _k.fro_norm(K):
            raise ValueError(f"K is not in the range of the Lyapunov operator at U (rank "
                             f"{fr.rank} < r = {r}): residual {miss:.3e}; pass exact=False for "
                             "the minimum-norm least-squares solution")
    out = _k.lyapunov(fr, K)
    if not _finite(out):
        raise ValueError("lyapunov_skew: the solution overflows (||K|| / sigma_kept^2 > 1e308)")
    return out


@validate_params({"U": Array(shape=("d", "r"), allow_complex=True),
                  "V": Array(shape=("d", "r"), allow_complex=True), "field": _FIELD_OR_NONE})
def align(U, V, *, field: str | None = None) -> np.ndarray:
    r"""Procrustes alignment over ``O(r)``: ``argmin_{R in O(r)} ||U R - V||_F = A B^T``.

    ``U^T V = A Sigma B^T`` (SVD), quadnet theory §1. Improper rotations (``det R = -1``)
    are allowed: aligning over ``SO(r)`` only, as geomstats does, gives wrong quotient
    distances (quadnet theory §7). Any rank is accepted (``R`` is then one of the minimisers).
    Complex factors (the Hermitian quotient ``C^{d x r} / U(r)``): the minimiser over the
    unitary group ``U(r)``, ``A B^*`` with ``U^* V = A Sigma B^*`` (the unitary polar factor of
    ``U^* V``; ``||U R - V||^2 = ||U||^2 + ||V||^2 - 2 Re tr(R^* U^* V)``, at most
    ``||U^* V||_*``).

    Parameters
    ----------
    U, V : array_like, shape (d, r)
        Finite factors of the same shape, real or complex.
    field : {None, "real", "complex"}
        ``None``: from the data (complex if either factor is). ``"real"``: a complex factor
        is refused (``TypeError`` naming it).

    Returns
    -------
    ndarray, shape (r, r)
        An orthogonal (unitary) matrix.

    Raises
    ------
    TypeError, ValueError
        Non-array, mismatched or non-finite factors.

    Examples
    --------
    >>> import numpy as np
    >>> U = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    >>> R = np.array([[0.0, 1.0], [1.0, 0.0]])            # improper
    >>> bool(np.allclose(align(U, U @ R), R))
    True
    >>> W = np.diag([1j, -1.0])                          # unitary
    >>> bool(np.allclose(align(U + 0j, U @ W), W))
    True
    """
    _declared(field, U=U, V=V)
    return _k.procrustes(U, V)


def _psd(Q: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``Q`` (symmetric/Hermitian), its eigenvalues with rounding-level ones zeroed, and its
    eigenvectors; an eigenvalue below ``-10 n eps lambda_max`` is refused naming ``name``."""
    w, E = np.linalg.eigh(Q)
    top = max(float(np.abs(w).max()), np.finfo(float).tiny)
    noise = 10 * Q.shape[0] * np.finfo(float).eps * top
    if w[0] < -noise:
        raise ValueError(f"{name} must be positive semidefinite, smallest eigenvalue "
                         f"{w[0]:.3e} (largest {w[-1]:.3e})")
    return Q, np.where(w > noise, w, 0.0), E


def _bw_transport(Q1, Q2, w, E) -> float | None:
    """``d^2 = tr(Y Q1^{-1} Y)``, ``Y = (Q1^{1/2} Q2 Q1^{1/2})^{1/2} - Q1`` by the fixed point
    ``Y = L^{-1}(X - Y^2)`` in the eigenbasis of ``Q1`` (``None`` if not applicable)."""
    if w[0] <= 1e-8 * w[-1]:
        return None
    D = _k.ct(E) @ (Q2 - Q1) @ E
    rt = np.sqrt(w)
    X = rt[:, None] * D * rt[None, :]
    den = w[:, None] + w[None, :]
    Y = X / den
    if np.linalg.norm(Y, 2) > 0.25 * w[0]:
        return None
    for _ in range(200):
        Yn = (X - Y @ Y) / den
        delta = np.linalg.norm(Yn - Y)
        Y = Yn
        if delta <= 1e-17 * np.linalg.norm(Y) or delta == 0.0:
            break
    Ya = Y if Y.dtype.kind != "c" else np.abs(Y)      # tr(Y Q1^-1 Y^*) = sum |Y_ij|^2 / w_j
    return float(math.sqrt(float(np.sum(Ya * Ya / w[None, :]))))


@validate_params({"Q1": Symmetric("n", allow_complex=True), "Q2": Symmetric("n", allow_complex=True),
                  "field": _FIELD_OR_NONE})
def bures_wasserstein(Q1, Q2, *, field: str | None = None) -> float:
    r"""Bures–Wasserstein distance of PSD matrices, from the matrices alone (no factors).

    ``d(Q1, Q2)^2 = tr Q1 + tr Q2 - 2 tr (Q1^{1/2} Q2 Q1^{1/2})^{1/2}`` (Bhatia, Jain & Lim
    2019), the independent oracle for :meth:`PSDQuotient.dist` (quadnet theory §1). The trace
    formula cancels catastrophically for nearly equal points, so two cancellation-free routes
    are used instead (``docs/stratified.md``):

    * **transport route** (the base point -- the better conditioned of ``Q1``, ``Q2`` -- is
      positive definite with ``kappa <= 1e8`` and ``||Y||_2 <= lambda_min / 4``):
      ``d^2 = tr(Y Q1^{-1} Y)`` with ``Y = (Q1^{1/2} Q2 Q1^{1/2})^{1/2} - Q1`` solved from
      ``Q1 Y + Y Q1 + Y^2 = Q1^{1/2} (Q2 - Q1) Q1^{1/2}`` by fixed-point iteration: relative
      error ``~ eps kappa(Q1)`` at any distance (checked against 50-digit mpmath);
    * **factor route** otherwise: ``Q_i = S_i S_i^T`` from the eigendecompositions (rounding
      eigenvalues ``<= 10 n eps lambda_max`` zeroed), ``d = ||S1 R - S2||_F`` at the Procrustes
      ``R``. Accurate to ``~ eps ||Q||^{1/2}`` relative to the distance when the spectra are
      well separated from zero; near a singular ``Q`` the distance is only Hölder-1/2 in
      ``Q`` and an input rounding of ``eps ||Q||`` moves it by up to ``~ (n eps ||Q||)^{1/2}``.

    Complex input: the same formula and routes for Hermitian positive semidefinite matrices
    (``E^*`` for ``E^T``, the unitary Procrustes of :func:`align`), the distance of the
    Hermitian quotient ``C^{d x r} / U(r)``.

    Parameters
    ----------
    Q1, Q2 : array_like, shape (n, n)
        Symmetric (complex: Hermitian) positive semidefinite matrices.
    field : {None, "real", "complex"}
        ``None``: from the data. ``"real"``: a complex matrix is refused naming it.

    Returns
    -------
    float
        ``d(Q1, Q2) >= 0``.

    Raises
    ------
    ValueError
        A matrix that is not positive semidefinite (an eigenvalue below
        ``-10 n eps lambda_max``; the message gives its smallest and largest eigenvalues).

    Examples
    --------
    >>> import numpy as np
    >>> Q = np.diag([4.0, 1.0])
    >>> round(bures_wasserstein(Q, np.diag([1.0, 1.0])), 12)   # |2 - 1|
    1.0
    >>> d = bures_wasserstein(Q, Q + 1e-10 * np.diag([4.0, 0.0]))  # exact: 1e-10 (1st order)
    >>> bool(abs(d - 1e-10) < 1e-15)
    True
    >>> H = np.array([[2.0, 1j], [-1j, 2.0]])                    # Hermitian PSD, eigenvalues 1, 3
    >>> round(bures_wasserstein(H, np.eye(2)) ** 2, 12)       # (1 - 1)^2 + (sqrt 3 - 1)^2
    0.535898384862
    """
    _declared(field, Q1=Q1, Q2=Q2)
    # d(c Q1, c Q2) = sqrt(c) d(Q1, Q2): far from 1 (entries beyond 1e+-100, where the
    # products Y^2 and S1^T S2 below would overflow or underflow) work at c = 4^-k with
    # max |entry| near 1; powers of two scale exactly
    top = max(float(np.abs(Q1).max()), float(np.abs(Q2).max()))
    if top > 0.0 and not 1e-100 <= top <= 1e100:
        k = math.frexp(top)[1] // 2
        return math.ldexp(bures_wasserstein(math.ldexp(1.0, -2 * k) * Q1,
                                            math.ldexp(1.0, -2 * k) * Q2), k)
    Q1, w1, E1 = _psd(Q1, "Q1")
    Q2, w2, E2 = _psd(Q2, "Q2")
    if w1[-1] == 0.0 or w2[-1] == 0.0:
        return float(math.sqrt(float(np.sum(w1)) + float(np.sum(w2))))
    k1 = w1[0] / w1[-1]
    k2 = w2[0] / w2[-1]
    out = (_bw_transport(Q1, Q2, w1, E1) if k1 >= k2 else _bw_transport(Q2, Q1, w2, E2))
    if out is not None:
        return out
    S1 = E1 * np.sqrt(w1)
    S2 = E2 * np.sqrt(w2)
    return _k.fro_norm(S1 @ _k.procrustes(S1, S2) - S2)


_DR = Array(shape=("d", "r"))
_SELF = Bind(d="d", r="r")
#: The curvature methods' arguments: real or complex, then matched to the manifold's field.
_DRX = Array(shape=("d", "r"), allow_complex=True)
_UX = Factor(allow_complex=True)


def _same_field(*names: str) -> Relation:
    """A complex array given to a method of a ``field="real"`` manifold: ``TypeError``."""
    def check(a):
        if a["self"].field == "complex":
            return None
        for n in names:
            x = a.get(n)
            if x is not None and x.dtype.kind == "c":
                return (f"{n} must be real on a PSDQuotient with field='real', got complex dtype "
                        f"{x.dtype} (build the manifold with field='complex')")
        return None
    return Relation(("self",) + names, check, "complex arrays only when ``field='complex'``",
                    error=TypeError)


class PSDQuotient(Manifold):
    r"""The quotient :math:`F_{d,r}/O(r)` of ``d x r`` factors, a pymanopt ``Manifold``.

    Points: ``d x r`` factors ``U`` of any rank ``k <= r`` (quadnet theory §1 on the
    full-rank stratum ``M_r^+``, ``docs/stratified.md`` on the strata ``k < r``), predictor
    ``Q = U U^T``. Vertical space ``V_U = {U Omega : Omega^T = -Omega}`` of dimension
    ``r(r-1)/2 - (r-k)(r-k-1)/2``; horizontal space ``H_U = {xi : U^T xi symmetric}``, its
    Frobenius-orthogonal complement. Metric: Frobenius on horizontal lifts. ``dim`` is the
    dimension of ``M_r^+`` (``n_h = d r - r(r-1)/2``); the dimension at a rank-deficient
    point is :meth:`vertical_dimension` / :func:`horizontal_dimension`.

    Unlike pymanopt's ``PSDFixedRank`` (quadnet theory §7), the Riemannian Hessian projects
    its input direction too (``P_h o Hess o P_h``), ``log``/``dist`` align over the full
    ``O(r)``, and every operation is defined (and continuous where the geometry is, see
    ``docs/stratified.md``) on rank-deficient factors; ``exp``/``retraction`` never refuse.

    Parameters
    ----------
    d : int
        Ambient dimension (rows of ``U``).
    r : int
        Width (columns of ``U``), ``1 <= r <= d``.
    seed : int or numpy.random.Generator, optional
        Stream for :meth:`random_point` and :meth:`random_tangent_vector` (each also accepts
        its own ``rng``).
    field : {"real", "complex"}
        ``"real"`` (default): real factors, the quotient by ``O(r)``. ``"complex"``: complex
        factors ``U`` in ``C^{d x r}`` of Hermitian PSD ``Q = U U^*``, the quotient by the
        unitary group ``U(r)`` with the real inner product ``Re tr(xi^* eta)``: vertical space
        ``{U Omega : Omega^* = -Omega}`` (``r^2 - (r-k)^2`` real dimensions at rank ``k``),
        horizontal space ``{xi : U^* xi Hermitian}``, ``dim = 2 d r - r^2``, alignment by the
        unitary polar factor of ``U^* V``; every formula of the real case with ``A^*`` for
        ``A^T``. Points and tangent vectors are complex128 arrays (a real array is accepted
        and returned complex); on ``field="real"`` a complex array is refused (``TypeError``
        naming it, never a dropped imaginary part).
    rank_rtol : float, optional
        The numerical-rank tolerance in ``(0, 1)`` (default ``RANK_RTOL = 1e-10``).

    Attributes
    ----------
    field : str
        ``"real"`` or ``"complex"``.

    Raises
    ------
    TypeError, ValueError
        Bad sizes, seed, field or tolerance.

    Examples
    --------
    >>> import numpy as np
    >>> M = PSDQuotient(4, 3, seed=0)
    >>> U = np.zeros((4, 3)); U[0, 0], U[1, 1] = 1.0, 2.0      # rank 2 < r = 3
    >>> M.rank(U), M.vertical_dimension(U)
    (2, 3)
    >>> Z = M.random_point()
    >>> h = M.horizontal_projection(U, Z)
    >>> S = U.T @ h
    >>> bool(np.allclose(S, S.T))
    True
    >>> H = PSDQuotient(4, 2, seed=0, field="complex")           # C^{4 x 2} / U(2)
    >>> H.dim, H.random_point().dtype
    (12, dtype('complex128'))
    """

    @validate_params({"d": Integer(1), "r": Integer(1), "seed": Seed(), "field": _FIELD,
                      "rank_rtol": Real(0, 1, closed="neither")}, relations=[_R_LE_D])
    def __init__(self, d: int, r: int, seed=None, *, field: str = "real",
                 rank_rtol: float = RANK_RTOL):
        self.d, self.r = d, r
        self.rank_rtol = rank_rtol
        self._shape = (d, r)
        self._rng = seed
        self.field = field
        self._complex = field == "complex"
        self._dtype = _C128 if self._complex else _F64
        self._isfinite = _finite if self._complex else _finite_real
        name = f"PSDQuotient(d={d}, r={r}{', field=complex' if self._complex else ''})"
        super().__init__(name, horizontal_dim(d, r, field=field))

    # ------------------------------------------------------------ validation
    def _arr(self, x, name: str) -> np.ndarray:
        """A finite float64 (complex field: complex128) ``d x r`` array (fast path for an
        exact-type ndarray)."""
        if (type(x) is np.ndarray and x.dtype == self._dtype and x.shape == self._shape
                and np.isfinite(x).all()):
            return x
        return self._coerce(named_call(self, as_matrix, x, name, shape=self._shape,
                                       allow_complex=self._complex))

    def _shaped(self, x, name: str) -> np.ndarray:
        """Type, dtype and shape only: finiteness is then checked on the result."""
        if type(x) is np.ndarray and x.dtype == self._dtype and x.shape == self._shape:
            return x
        return self._coerce(named_call(self, as_matrix, x, name, shape=self._shape,
                                       allow_complex=self._complex))

    def _coerce(self, a: np.ndarray) -> np.ndarray:
        """A checked array in the manifold's dtype (a real array on the complex field is one of
        its points, cast to complex128; the real field refused complex ones before)."""
        return a if a.dtype == self._dtype else a.astype(self._dtype)

    def _full(self, named: dict) -> None:
        for name, x in named.items():
            named_call(self, as_matrix, x, name, shape=self._shape, allow_complex=self._complex)

    def _out(self, out: np.ndarray, **named) -> np.ndarray:
        if self._isfinite(out):
            return out
        self._refuse(named)

    def _refuse(self, named: dict, why: str = " (overflow of finite inputs)"):
        """A non-finite result: the full checks name a non-finite argument, else overflow."""
        self._full(named)
        raise name_method(ValueError(f"the result is not finite{why}"), self)

    def _step(self, U, xi) -> np.ndarray:
        """``U + xi`` with one finiteness test of the result (inlined fast path)."""
        dt = self._dtype
        if (type(U) is np.ndarray and type(xi) is np.ndarray and U.dtype is dt
                and xi.dtype is dt and U.shape == self._shape and xi.shape == self._shape):
            try:
                with np.errstate(over="ignore", invalid="ignore"):  # overflow: refused below
                    W = U + xi
                v = W.ravel() if dt is _F64 else W.ravel().view(np.float64)
                if math.isfinite(v.dot(v)):
                    return W
            except (RuntimeWarning, FloatingPointError):  # inf - inf, overflow (-W error)
                W = None
        U = self._shaped(U, "point")
        xi = self._shaped(xi, "tangent_vector")
        with np.errstate(all="ignore"):
            W = U + xi
        return self._out(W, point=U, tangent_vector=xi)

    def _frame(self, U: np.ndarray) -> _k.Frame:
        return _k.frame(U, self.rank_rtol)

    def _guard(self, kernel, U: np.ndarray, Z: np.ndarray) -> np.ndarray:
        """``kernel(frame(U), Z)`` for a checked ``U``; a non-finite ``Z`` (inf * 0 warns
        under ``-W error``) gives NaN, which :meth:`_out` turns into the argument's error."""
        try:
            return kernel(_k.frame(U, self.rank_rtol), Z)
        except (RuntimeWarning, FloatingPointError, np.linalg.LinAlgError):
            return np.full(U.shape, np.nan)

    def _as_rng(self, rng) -> np.random.Generator:
        return named_call(self, as_rng, rng, "rng", record=not nested())

    def _point(self, U, name: str = "U") -> np.ndarray:
        if nested() and type(U) is np.ndarray and U.dtype == self._dtype:
            return U                     # checked once by the validated caller
        return self._coerce(named_call(self, as_factor, U, name, d=self.d, r=self.r,
                                       full_rank=False, allow_complex=self._complex))

    @property
    def typical_dist(self) -> float:
        r"""``10 + r``, as pymanopt 2.2.1's ``PSDFixedRank`` (pymanopt's TrustRegions takes it
        as its default maximal radius and an eighth of it as the initial one).

        Matching it makes TrustRegions take the same steps on both manifolds: on
        ``FrobeniusLoss(T)`` with a rank-2 optimum, ``PSDQuotient(7, 3)``, 8 seeds, 70
        iterations in total on each, against 80 with ``sqrt(dim)`` (quadnet target:
        pymanopt users get the behaviour they know). ``sqrt(dim)`` would track the distance
        between two :meth:`random_point` draws better (``E dist^2 ~ 2 d r``), but the radius
        only seeds the trust-region adaptation.

        Examples
        --------
        >>> PSDQuotient(5, 2).typical_dist
        12.0
        """
        return 10.0 + self.r

    # ------------------------------------------------------------ strata
    @declare_params({"U": _DR})
    def rank(self, U) -> int:
        r"""Numerical rank ``#{i : sigma_i(U) > rank_rtol * sigma_max(U)}`` (0 for ``U = 0``).

        Parameters
        ----------
        U : array_like, shape (d, r)

        Returns
        -------
        int
            The numerical rank ``k`` of ``U``, ``0 <= k <= r``.

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(3, 2)
        >>> M.rank(np.eye(3)[:, :2] * [1.0, 1e-12]), M.rank(np.zeros((3, 2)))
        (1, 0)
        """
        U = self._point(U)
        fr = _k.frame(U, self.rank_rtol)
        return fr.rank

    @declare_params({"U": _DR})
    def vertical_dimension(self, U) -> int:
        r"""``dim V_U = r(r-1)/2 - (r-k)(r-k-1)/2`` at a factor of rank ``k``
        (``docs/stratified.md``).

        Parameters
        ----------
        U : array_like, shape (d, r)

        Returns
        -------
        int
            ``dim V_U``.

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(5, 4)
        >>> [M.vertical_dimension(np.eye(5, 4) * ([1.0] * k + [0.0] * (4 - k))) for k in range(5)]
        [0, 3, 5, 6, 6]
        """
        return vertical_dim(self.r, self.rank(U), self.field)

    # ------------------------------------------------------------ fibre bundle
    @declare_params({"U": _DR})
    def predictor(self, U) -> np.ndarray:
        """``pi(U) = U U^T`` (quadnet theory §1).

        Parameters
        ----------
        U : array_like, shape (d, r)

        Returns
        -------
        ndarray, shape (d, d)
            ``U U^T`` (``U U^*`` on the complex field), positive semidefinite.

        Examples
        --------
        >>> import numpy as np
        >>> PSDQuotient(2, 1).predictor(np.array([[1.0], [2.0]])).tolist()
        [[1.0, 2.0], [2.0, 4.0]]
        """
        U = self._point(U)
        if nested():
            return U @ _k.ct(U)
        with np.errstate(over="ignore", invalid="ignore"):
            Q = U @ _k.ct(U)
        if not _finite(Q):
            raise name_method(ValueError(f"U U^T overflows float64 (U has entries up to "
                                         f"{float(np.max(np.abs(U))):.3g}); rescale U"), self)
        return Q

    @declare_params({"U": _DR, "xi": _DR})
    def differential(self, U, xi) -> np.ndarray:
        """``D pi(U)[xi] = xi U^T + U xi^T``; its kernel contains the vertical space (equals
        it at full rank; at rank ``k < r`` it also contains ``P_perp D E_0^T``,
        ``docs/stratified.md``).

        Parameters
        ----------
        U, xi : array_like, shape (d, r)

        Returns
        -------
        ndarray, shape (d, d)
            Symmetric.

        Examples
        --------
        >>> import numpy as np
        >>> U = np.array([[1.0], [0.0]])
        >>> PSDQuotient(2, 1).differential(U, np.array([[0.0], [1.0]])).tolist()
        [[0.0, 1.0], [1.0, 0.0]]
        """
        U = self._arr(U, "U")
        xi = self._arr(xi, "xi")
        with np.errstate(over="ignore", invalid="ignore"):   # an overflow is refused below
            P = xi @ _k.ct(U)
            P = P + _k.ct(P)
        return self._out(P, U=U, xi=xi)

    @declare_params({"U": _DR, "Z": _DR})
    def vertical_projection(self, U, Z) -> np.ndarray:
        r"""Orthogonal projection onto ``V_U = {U Omega : Omega skew}`` at any rank.

        ``P_v(Z) = P [sigma_i (sigma_i Zt_ij - sigma_j Zt_ji) / (sigma_i^2 + sigma_j^2)] E^T``
        with ``U = P diag(sigma) E^T``, ``Zt = P^T Z E`` and the pairs with both singular
        values below the rank tolerance set to 0 (the minimum-norm Lyapunov solution,
        quadnet theory §1, ``docs/stratified.md``). Every coefficient is bounded by 1, so the
        error is ``<= c eps sigma_max / (sigma_{r-1}^2 + sigma_r^2)^{1/2}`` relative to
        ``||Z||`` (``c eps kappa(U)^2`` on the Gram route, taken only when ``kappa(U) < 100``).

        Parameters
        ----------
        U, Z : array_like, shape (d, r)

        Returns
        -------
        ndarray, shape (d, r)
            ``P_v(Z)``, in ``V_U``.

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(3, 2)
        >>> U = np.eye(3)[:, :2]
        >>> M.vertical_projection(U, np.array([[0.0, 2.0], [0.0, 0.0], [1.0, 1.0]])).tolist()
        [[0.0, 1.0], [-1.0, 0.0], [0.0, 0.0]]
        """
        U = self._shaped(U, "U")
        Z = self._shaped(Z, "Z")
        return self._out(self._guard(_k.vertical_part, U, Z), U=U, Z=Z)

    @declare_params({"U": _DR, "Z": _DR})
    def horizontal_projection(self, U, Z) -> np.ndarray:
        r"""``P_h(Z) = Z - P_v(Z)``, the orthogonal projection onto ``H_U = {xi : U^T xi sym}``
        (any rank; see :meth:`vertical_projection` for the formula and its error bound).

        Parameters
        ----------
        U, Z : array_like, shape (d, r)

        Returns
        -------
        ndarray, shape (d, r)
            ``P_h(Z)``, horizontal at ``U``.

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(3, 2)
        >>> U = np.eye(3)[:, :2]
        >>> M.horizontal_projection(U, np.array([[0.0, 2.0], [0.0, 0.0], [1.0, 1.0]])).tolist()
        [[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]
        """
        U = self._shaped(U, "U")
        Z = self._shaped(Z, "Z")
        return self._out(self._guard(_k.horizontal_part, U, Z),
                         U=U, Z=Z)

    @declare_params({"point": _DR, "vector": _DR})
    def projection(self, point, vector) -> np.ndarray:
        """``P_h(vector)`` at ``point``: :meth:`horizontal_projection` under pymanopt's name
        (its tangent projection), with the same result.

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(3, 2)
        >>> U = np.eye(3)[:, :2]
        >>> M.projection(U, np.ones((3, 2))).tolist()
        [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]
        """
        point = self._shaped(point, "point")
        vector = self._shaped(vector, "vector")
        return self._out(self._guard(_k.horizontal_part, point, vector),
                         point=point, vector=vector)

    to_tangent_space = projection

    @declare_params({"U": _DR, "Qdot": Symmetric("d"), "exact": Boolean(),
                     "return_residual": Boolean()})
    def lift(self, U, Qdot, exact: bool = False, *, return_residual: bool = False):
        r"""Minimum-norm horizontal lift of a symmetric ``Qdot`` at ``Q = U U^T``, any rank
        (complex field: a Hermitian ``Qdot``, ``U^*`` for ``U^T``).

        The minimum-norm least-squares solution of ``xi U^T + U xi^T = Qdot``; it is
        horizontal. With the rank-``k`` SVD ``U = P_k diag(sigma_k) E_k^T`` and
        ``Pi = P_k P_k^T`` (``docs/stratified.md``)::

            xi = [P_k A + (I - Pi) Qdot P_k diag(1/sigma_k)] E_k^T,
            A_ij = (P_k^T Qdot P_k)_ij sigma_j / (sigma_i^2 + sigma_j^2).

        At full rank it is the unique horizontal lift of quadnet theory §1 for tangent
        ``Qdot``. ``Qdot`` is in the image of ``D pi(U)`` iff ``(I - Pi) Qdot (I - Pi) = 0``;
        otherwise the result is the lift of the orthogonal projection of ``Qdot`` onto that
        image, and the residual ``||(I - Pi) Qdot (I - Pi)||_F`` is reported. At ``k < r`` the
        horizontal preimage is not unique (add any ``(I - Pi) D E_0^T``); this is the one of
        minimum norm.

        Parameters
        ----------
        U : array_like, shape (d, r)
        Qdot : array_like, shape (d, d)
            Symmetric.
        exact : bool
            If true, raise ``ValueError`` when the residual exceeds ``1e-10 ||Qdot||_F``.
        return_residual : bool
            If true, return ``(xi, residual)``.

        Returns
        -------
        ndarray, shape (d, r), or (ndarray, float)

        Raises
        ------
        TypeError, ValueError
            Bad input, or an inexact ``Qdot`` with ``exact=True``.

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(2, 2)
        >>> U = np.diag([1.0, 0.0])                                # rank 1
        >>> xi, res = M.lift(U, np.array([[2.0, 1.0], [1.0, 3.0]]), return_residual=True)
        >>> xi.tolist(), res                                       # [[1, 0], [1, 0]], 3
        ([[1.0, 0.0], [1.0, 0.0]], 3.0)
        """
        try:
            if type(exact) is not bool:
                exact = _BOOLEAN.convert(exact, "exact", {})
            if type(return_residual) is not bool:
                return_residual = _BOOLEAN.convert(return_residual, "return_residual", {})
            U = self._point(U)
            Qdot = as_symmetric(Qdot, "Qdot", self.d, allow_complex=self._complex)
        except (TypeError, ValueError) as e:
            raise name_method(e, self) from None
        xi, res = _k.lift(_k.frame(U, self.rank_rtol), Qdot)
        if not _finite(xi):
            raise name_method(ValueError("the result is not finite (overflow of finite inputs)"),
                              self)
        if exact and res > 1e-10 * _k.fro_norm(Qdot):
            raise name_method(ValueError(
                f"Qdot is not in the image of D pi(U): ||(I - Pi) Qdot (I - Pi)||_F = {res:.3e} "
                f"> 1e-10 ||Qdot||_F (U has rank {self.rank(U)})"), self)
        return (xi, res) if return_residual else xi

    @declare_params({"U": _DR, "V": _DR})
    def align(self, U, V) -> np.ndarray:
        """``R = argmin_{R in O(r)} ||U R - V||_F`` (see :func:`align`).

        Parameters
        ----------
        U, V : array_like, shape (d, r)

        Returns
        -------
        ndarray, shape (r, r)
            Orthogonal.

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(2, 2)
        >>> M.align(np.eye(2), -np.eye(2)).tolist()
        [[-1.0, 0.0], [0.0, -1.0]]
        """
        U = self._arr(U, "U")
        V = self._arr(V, "V")
        return self._out(_k.procrustes(U, V), U=U, V=V)

    @declare_params({"U": _DR})
    def vertical_basis(self, U) -> np.ndarray:
        r"""Frobenius-orthonormal basis of ``V_U``, ``(d r) x dim V_U`` (row-major ``vec``).

        Columns: the normalised ``U (E_i E_j^T - E_j E_i^T)`` over the pairs of right
        singular vectors that are not both in the numerical kernel (``docs/stratified.md``).

        Parameters
        ----------
        U : array_like, shape (d, r)

        Returns
        -------
        ndarray, shape (d r, dim V_U)
            Orthonormal columns, each a ``vec(U Omega)`` with ``Omega`` skew.

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(4, 3)
        >>> B = M.vertical_basis(np.eye(4, 3) * [1.0, 0.0, 0.0])   # rank 1: dim V_U = 2
        >>> B.shape, bool(np.allclose(B.T @ B, np.eye(2)))
        ((12, 2), True)
        """
        U = self._point(U)
        return _k.vertical_basis(_k.frame(U, self.rank_rtol))

    @declare_params({"U": _DR})
    def horizontal_basis(self, U) -> np.ndarray:
        r"""Frobenius-orthonormal basis of ``H_U``: ``(d r) x (d r - dim V_U)`` (row-major
        ``quadnet._validation.vec``), the orthogonal complement of :meth:`vertical_basis`
        by one full QR. ``n_h`` columns at full rank (quadnet theory §1, §3).

        Parameters
        ----------
        U : array_like, shape (d, r)

        Returns
        -------
        ndarray, shape (d r, dim H_U)
            Orthonormal columns, orthogonal to every ``vec(U Omega)``.

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(5, 2)
        >>> B = M.horizontal_basis(np.eye(5, 2))
        >>> B.shape, bool(np.allclose(B.T @ B, np.eye(9)))
        ((10, 9), True)
        """
        U = self._point(U)
        return _k.horizontal_basis(_k.frame(U, self.rank_rtol))

    # ------------------------------------------------------------------ metric
    @declare_params({"point": _DR, "tangent_vector_a": _DR, "tangent_vector_b": _DR})
    def inner_product(self, point, tangent_vector_a, tangent_vector_b) -> float:
        """``g_Q(xi, eta) = <xi, eta>_F`` on horizontal lifts (quadnet theory §1); on the complex
        field the real inner product ``Re tr(xi^* eta)``.

        Parameters
        ----------
        point : array_like, shape (d, r)
        tangent_vector_a, tangent_vector_b : array_like, shape (d, r)

        Returns
        -------
        float
            ``Re tr(xi^* eta)`` (``tr(xi^T eta)`` on the real field).

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(2, 1)
        >>> M.inner_product(np.ones((2, 1)), np.ones((2, 1)), np.full((2, 1), 2.0))
        4.0
        """
        self._arr(point, "point")
        a = self._shaped(tangent_vector_a, "tangent_vector_a")
        b = self._shaped(tangent_vector_b, "tangent_vector_b")
        try:
            if self._complex:      # Re tr(a^* b) = <(Re a, Im a), (Re b, Im b)>: one real dot
                out = float(a.reshape(-1).view(np.float64) @ b.reshape(-1).view(np.float64))
            else:
                out = float(a.reshape(-1) @ b.reshape(-1))
        except (RuntimeWarning, FloatingPointError):
            out = math.nan
        if math.isfinite(out):
            return out
        self._refuse({"tangent_vector_a": a, "tangent_vector_b": b})

    @declare_params({"point": _DR, "tangent_vector": _DR})
    def norm(self, point, tangent_vector) -> float:
        """``||xi||_F`` (computed without overflow).

        Parameters
        ----------
        point, tangent_vector : array_like, shape (d, r)

        Returns
        -------
        float
            ``||xi||_F >= 0``.

        Examples
        --------
        >>> import numpy as np
        >>> PSDQuotient(2, 1).norm(np.ones((2, 1)), np.array([[3.0], [4.0]]))
        5.0
        """
        self._arr(point, "point")
        xi = self._shaped(tangent_vector, "tangent_vector")
        out = _k.fro_norm(xi)
        if math.isfinite(out):
            return out
        self._refuse({"tangent_vector": xi}, "")

    @declare_params({"point_a": _DR, "point_b": _DR})
    def dist(self, point_a, point_b) -> float:
        """``dist(Q1, Q2) = min_{R in O(r)} ||U1 R - U2||_F`` (Bures–Wasserstein, quadnet
        theory §1; the minimum over ``U(r)`` on the complex field), computed as the norm of the aligned difference (no cancellation: relative
        error ``~ eps ||U|| / dist``, where the trace formula has ``eps ||U||^2 / dist^2``).

        Parameters
        ----------
        point_a, point_b : array_like, shape (d, r)

        Returns
        -------
        float
            ``dist(Q1, Q2) >= 0``.

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(3, 2)
        >>> U = np.eye(3)[:, :2]
        >>> M.dist(U, -U), M.dist(U, 2 * U)
        (0.0, 1.4142135623730951)
        """
        U = self._shaped(point_a, "point_a")
        V = self._shaped(point_b, "point_b")
        try:
            out = _k.fro_norm(U @ _k.procrustes(U, V) - V)
        except (RuntimeWarning, FloatingPointError, np.linalg.LinAlgError):
            out = math.nan
        if math.isfinite(out):
            return out
        self._refuse({"point_a": U, "point_b": V})

    # ------------------------------------------------------- maps and motion
    @declare_params({"point": _DR, "tangent_vector": _DR})
    def exp(self, point, tangent_vector) -> np.ndarray:
        """``U + xi``: a horizontal line projects to a geodesic of ``M_r^+`` (Massart & Absil
        2020) while it stays full rank; it is a point of the total space at every rank, so
        this never refuses (optimisers run through and onto the boundary).

        Parameters
        ----------
        point, tangent_vector : array_like, shape (d, r)

        Returns
        -------
        ndarray, shape (d, r)
            ``U + xi``.

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(2, 1)
        >>> M.exp(np.ones((2, 1)), -np.ones((2, 1))).tolist()      # onto U = 0
        [[0.0], [0.0]]
        """
        return self._step(point, tangent_vector)

    @declare_params({"point": _DR, "tangent_vector": _DR})
    def retraction(self, point, tangent_vector) -> np.ndarray:
        """``U + xi``: :meth:`exp` under pymanopt's name (a second-order retraction), with the
        same parameters and result.

        Examples
        --------
        >>> import numpy as np
        >>> PSDQuotient(2, 1).retraction(np.ones((2, 1)), np.ones((2, 1))).tolist()
        [[2.0], [2.0]]
        """
        return self._step(point, tangent_vector)

    @declare_params({"point_a": _DR, "point_b": _DR})
    def log(self, point_a, point_b) -> np.ndarray:
        """``log_U(V) = V R - U`` with ``R = align(V, U)``: horizontal at ``U`` (``U^T V R`` is
        symmetric PSD at any rank), ``exp(U, log_U V) = V R`` represents ``V V^T`` and
        ``||log_U V|| = dist(U, V)``.

        Parameters
        ----------
        point_a, point_b : array_like, shape (d, r)

        Returns
        -------
        ndarray, shape (d, r)
            Horizontal at ``point_a``.

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(2, 2)
        >>> M.log(np.eye(2), -2 * np.eye(2)).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
        """
        U = self._shaped(point_a, "point_a")
        V = self._shaped(point_b, "point_b")
        try:
            out = V @ _k.procrustes(V, U) - U
        except (RuntimeWarning, FloatingPointError, np.linalg.LinAlgError):
            out = np.full(U.shape, np.nan)
        return self._out(out, point_a=U, point_b=V)

    @declare_params({"point_a": _DR, "point_b": _DR})
    def pair_mean(self, point_a, point_b) -> np.ndarray:
        r"""Geodesic midpoint ``(U + V R) / 2``, ``R = align(V, U)``: the point
        ``exp(U, log_U(V) / 2)`` half-way along the minimising horizontal segment
        (pymanopt's NelderMead uses it).

        Parameters
        ----------
        point_a, point_b : array_like, shape (d, r)

        Returns
        -------
        ndarray, shape (d, r)
            A factor of the geodesic midpoint of ``U U^T`` and ``V V^T``.

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(2, 2)
        >>> M.pair_mean(np.eye(2), -3 * np.eye(2)).tolist()        # -3 I ~ 3 I
        [[2.0, 0.0], [0.0, 2.0]]
        """
        U = self._arr(point_a, "point_a")
        V = self._arr(point_b, "point_b")
        with np.errstate(over="ignore", invalid="ignore"):   # an overflow is refused below
            out = 0.5 * (U + V @ _k.procrustes(V, U))
        return self._out(out, point_a=U, point_b=V)

    @declare_params({"point_a": _DR, "point_b": _DR, "tangent_vector": _DR})
    def transport(self, point_a, point_b, tangent_vector) -> np.ndarray:
        """Vector transport by horizontal projection at ``point_b``.

        Parameters
        ----------
        point_a, point_b, tangent_vector : array_like, shape (d, r)

        Returns
        -------
        ndarray, shape (d, r)
            Horizontal at ``point_b``.

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(2, 2)
        >>> M.transport(np.eye(2), np.eye(2), np.array([[0.0, 1.0], [0.0, 0.0]])).tolist()
        [[0.0, 0.5], [0.5, 0.0]]
        """
        self._arr(point_a, "point_a")
        V = self._shaped(point_b, "point_b")
        xi = self._shaped(tangent_vector, "tangent_vector")
        return self._out(self._guard(_k.horizontal_part, V, xi),
                         point_b=V, tangent_vector=xi)

    @declare_params({"rng": Optional(Seed())})
    def random_point(self, rng=None) -> np.ndarray:
        """A standard Gaussian ``d x r`` factor (full rank with probability one); on the complex
        field ``CN(0, 1)`` entries ``(g_1 + i g_2) / sqrt(2)`` from one draw ``g`` of shape
        ``(2, d, r)`` (same seed, same bits).

        Parameters
        ----------
        rng : int or numpy.random.Generator, optional
            Defaults to the manifold's own stream.

        Returns
        -------
        ndarray, shape (d, r)

        Examples
        --------
        >>> PSDQuotient(3, 2, seed=0).random_point().shape
        (3, 2)
        """
        gen = self._rng if rng is None else self._as_rng(rng)
        return self._gaussian(gen) if self._complex else gen.standard_normal(self._shape)

    def _gaussian(self, gen: np.random.Generator) -> np.ndarray:
        """A ``d x r`` complex Gaussian, ``CN(0, 1)`` entries ``(g_1 + i g_2) / sqrt(2)`` from one
        draw ``g`` of shape ``(2, d, r)`` (``E|z|^2 = 1``, so ``E ||U||_F^2 = d r`` as for the real
        field's ``N(0, 1)`` entries)."""
        g = gen.standard_normal((2,) + self._shape)
        return (g[0] + 1j * g[1]) * math.sqrt(0.5)

    @declare_params({"point": _DR, "rng": Optional(Seed())})
    def random_tangent_vector(self, point, rng=None) -> np.ndarray:
        """A unit-norm horizontal vector: the projection of a Gaussian, normalised.

        Parameters
        ----------
        point : array_like, shape (d, r)
        rng : int or numpy.random.Generator, optional

        Returns
        -------
        ndarray, shape (d, r)
            Horizontal at ``point``, of unit norm.

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(3, 2, seed=0)
        >>> round(M.norm(np.eye(3, 2), M.random_tangent_vector(np.eye(3, 2))), 12)
        1.0
        """
        point = self._point(point, "point")
        gen = self._rng if rng is None else self._as_rng(rng)
        fr = _k.frame(point, self.rank_rtol)
        xi = _k.horizontal_part(fr, self._gaussian(gen) if self._complex else
                                gen.standard_normal(self._shape))
        return xi / _k.fro_norm(xi)

    @declare_params({"point": _DR})
    def zero_vector(self, point) -> np.ndarray:
        """The zero tangent vector.

        Parameters
        ----------
        point : array_like, shape (d, r)

        Returns
        -------
        ndarray, shape (d, r)
            Zeros.

        Examples
        --------
        >>> import numpy as np
        >>> PSDQuotient(2, 1).zero_vector(np.ones((2, 1))).tolist()
        [[0.0], [0.0]]
        """
        self._arr(point, "point")
        return np.zeros(self._shape, dtype=self._dtype)

    @declare_params({"point": _DR, "tangent_vector": _DR})
    def embedding(self, point, tangent_vector) -> np.ndarray:
        """The tangent vector as a ``d x r`` matrix of the total space (its horizontal lift).

        Parameters
        ----------
        point, tangent_vector : array_like, shape (d, r)

        Returns
        -------
        ndarray, shape (d, r)
            A copy of ``tangent_vector``.

        Examples
        --------
        >>> import numpy as np
        >>> PSDQuotient(2, 1).embedding(np.ones((2, 1)), np.zeros((2, 1))).tolist()
        [[0.0], [0.0]]
        """
        self._arr(point, "point")
        return self._arr(tangent_vector, "tangent_vector").copy()

    @declare_params({"point": _DR, "euclidean_gradient": _DR})
    def euclidean_to_riemannian_gradient(self, point, euclidean_gradient) -> np.ndarray:
        """``P_h(egrad)`` (already horizontal for an ``O(r)``-invariant cost).

        Parameters
        ----------
        point, euclidean_gradient : array_like, shape (d, r)

        Returns
        -------
        ndarray, shape (d, r)
            The Riemannian gradient, horizontal at ``point``.

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(2, 2)
        >>> g = np.array([[0.0, 1.0], [0.0, 0.0]])
        >>> M.euclidean_to_riemannian_gradient(np.eye(2), g).tolist()
        [[0.0, 0.5], [0.5, 0.0]]
        """
        U = self._shaped(point, "point")
        g = self._shaped(euclidean_gradient, "euclidean_gradient")
        return self._out(self._guard(_k.horizontal_part, U, g), point=U, euclidean_gradient=g)

    @declare_params({"point": _DR,
                     "euclidean_gradient": _DR,
                     "euclidean_hessian": _DR,
                     "tangent_vector": _DR})
    def euclidean_to_riemannian_hessian(self, point, euclidean_gradient, euclidean_hessian,
                                        tangent_vector) -> np.ndarray:
        """``P_h(ehess[P_h xi])`` for an ``O(r)``-invariant cost, from ``ehess[xi]``.

        pymanopt evaluates the Euclidean Hessian at the raw direction ``xi`` before calling
        this. Differentiating the invariance ``grad L(U R) = grad L(U) R`` along
        ``R = exp(t Omega)`` gives ``ehess[U Omega] = egrad Omega`` for every skew
        ``Omega``, so with ``P_v(xi) = U Omega`` (the minimum-norm ``Omega``, any rank)::

            ehess[P_h xi] = ehess[xi] - egrad Omega.

        The input direction is thus projected exactly (pymanopt's ``PSDFixedRank`` only
        projects the output, quadnet theory §7). The connection term is vertical and
        vanishes under the outer ``P_h``.

        Parameters
        ----------
        point, euclidean_gradient, euclidean_hessian, tangent_vector : array_like, shape (d, r)

        Returns
        -------
        ndarray, shape (d, r)
            The Riemannian Hessian applied to ``tangent_vector``, horizontal at ``point``.

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(2, 2)
        >>> U, g = np.diag([1.0, 2.0]), np.diag([1.0, 1.0])
        >>> v = M.vertical_projection(U, np.array([[0.0, 1.0], [0.0, 0.0]]))
        >>> H = M.euclidean_to_riemannian_hessian(U, g, g @ np.array([[0.0, 0.2], [-0.2, 0.0]]), v)
        >>> bool(np.allclose(H, 0.0))                         # zero on a vertical direction
        True
        """
        U = self._arr(point, "point")
        xi = self._arr(tangent_vector, "tangent_vector")
        egrad = self._arr(euclidean_gradient, "euclidean_gradient")
        ehess = self._arr(euclidean_hessian, "euclidean_hessian")
        fr = self._frame(U)
        Omega = _k.vertical_generator(fr, xi)
        try:  # an overflow of finite inputs is refused by _out, also under -W error
            with np.errstate(over="ignore", invalid="ignore"):
                H = _k.horizontal_part(fr, ehess - egrad @ Omega)
        except (RuntimeWarning, FloatingPointError, np.linalg.LinAlgError):
            H = np.full(U.shape, np.nan)
        return self._out(H, point=U, tangent_vector=xi,
                         euclidean_gradient=egrad, euclidean_hessian=ehess)


    # ------------------------------------------------------ curvature, transport
    @validate_params({"self": _SELF, "U": _UX, "xi": _DRX, "eta": _DRX, "project": Boolean()},
                     relations=[_same_field("U", "xi", "eta")])
    def sectional_curvature(self, U, xi, eta, *, project: bool = False) -> float:
        """Sectional curvature at ``U U^T`` of the plane of horizontal ``xi, eta`` (O'Neill).

        ``K = 3 ||U Omega||^2 / (||xi||^2 ||eta||^2 - <xi, eta>^2)`` with
        ``G Omega + Omega G = xi^T eta - eta^T xi``, ``G = U^T U`` (quadnet theory §1;
        derivation in ``docs/riemannian.md``). See
        :func:`quadnet.geometry.riemannian.sectional_curvature`.

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(2, 2)
        >>> round(M.sectional_curvature(np.diag([1.0, 2.0]), np.array([[0., 1.], [0.5, 0.]]),
        ...                             np.diag([1.0, 0.0])), 12)
        0.48
        """
        from quadnet.geometry.riemannian import sectional_curvature

        return sectional_curvature(self._coerce(U), xi, eta, project=project)

    @validate_params({"self": _SELF, "U": _UX, "xi": Optional(_DRX), "eta": Optional(_DRX),
                      "project": Boolean()}, relations=[_same_field("U", "xi", "eta")])
    def ricci_curvature(self, U, xi=None, eta=None, *, project: bool = False):
        """Ricci curvature ``Ric(xi, eta)`` at ``U U^T``, or its matrix in
        :meth:`horizontal_basis` when no direction is given.

        See :func:`quadnet.geometry.riemannian.ricci_curvature`.

        Examples
        --------
        >>> import numpy as np
        >>> PSDQuotient(3, 2).ricci_curvature(np.eye(3, 2)).shape
        (5, 5)
        """
        from quadnet.geometry.riemannian import ricci_curvature

        return ricci_curvature(self._coerce(U), xi, eta, project=project)

    @validate_params({"self": _SELF, "U": _UX}, relations=[_same_field("U")])
    def scalar_curvature(self, U) -> float:
        """Scalar curvature at ``U U^T``, in closed form in the singular values of ``U`` (complex
        field: the trace of the Ricci form).

        See :func:`quadnet.geometry.riemannian.scalar_curvature`.

        Examples
        --------
        >>> import numpy as np
        >>> PSDQuotient(2, 2).scalar_curvature(np.eye(2))
        3.0
        """
        from quadnet.geometry.riemannian import scalar_curvature

        return scalar_curvature(self._coerce(U))

    @validate_params({"self": _SELF, "U": _UX, "xi": _DRX, "v": _DRX, "t": Real(),
                      "project": Boolean(), "rtol": Real(1e-14, 1e-3),
                      "atol": Optional(Real(0, 1e-3, closed="neither"))},
                     relations=[_same_field("U", "xi", "v")])
    def parallel_transport(self, U, xi, v, t=1.0, *, project: bool = False, rtol: float = 1e-13,
                           atol: float | None = None):
        """Levi-Civita transport of ``v`` from ``U`` to ``U + t xi`` along ``U + s xi``.

        Solves ``V' = -U(s) Omega`` with ``G(s) Omega + Omega G(s) = xi^T V - V^T xi``
        (DOP853, order 8), the horizontal field whose derivative is vertical. See
        :func:`quadnet.geometry.riemannian.parallel_transport`.

        Examples
        --------
        >>> import numpy as np
        >>> M = PSDQuotient(3, 2)
        >>> U, xi = np.eye(3, 2), np.array([[0., 0.], [0., 0.], [1., 0.]])
        >>> bool(np.allclose(M.parallel_transport(U, xi, xi, 0.5), xi))
        True
        """
        from quadnet.geometry.riemannian import parallel_transport

        return parallel_transport(self._coerce(U), xi, v, t, project=project, rtol=rtol,
                                  atol=atol)
