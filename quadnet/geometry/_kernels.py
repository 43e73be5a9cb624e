r"""Fibre-bundle kernels on raw arrays (quadnet theory §1; stratified geometry in
``docs/stratified.md``): no validation, called by the public :class:`quadnet.PSDQuotient`
methods and by other layers after they validated their arguments.

Every geometric operation at a factor ``U`` goes through one :class:`Frame`, built once per
point by :func:`frame`: the right singular vectors ``E`` and singular values ``sigma`` of ``U``
(from one ``eigh(U^T U)`` when ``U`` is well conditioned, from one thin SVD of ``U`` otherwise),
its numerical rank and the minimum-norm inverse of the Lyapunov operator
``Omega -> G Omega + Omega G`` (``G = U^T U``) in that basis. The rank test, every Lyapunov solve,
both projections, the lift and the vertical basis at that point reuse it.

Conventions (quadnet theory §1, ``docs/stratified.md``):

* ``U = P diag(sigma) E^T`` (thin SVD), ``Zt = P^T Z E``;
* rank ``k = #{i : sigma_i > RANK_RTOL * sigma_max}`` -- the one rank tolerance;
* a pair ``(i, j)`` is *kept* unless both ``sigma_i`` and ``sigma_j`` are at or below the
  tolerance; the minimum-norm Lyapunov solution sets the dropped pairs to zero;
* ``P_v(Z) = P [sigma_i (sigma_i Zt_ij - sigma_j Zt_ji) / (sigma_i^2 + sigma_j^2)] E^T``, whose
  coefficients are bounded by 1 whatever the conditioning of ``U``.

Every kernel is field-generic: a complex factor (the Hermitian quotient ``C^{d x r} / U(r)``,
``PSDQuotient(d, r, field="complex")``) runs the same formulas with the conjugate transpose
``A^*`` for ``A^T`` (:func:`ct`), skew-Hermitian ``Omega`` and the real inner product
``Re tr(A^* B)``; the complex dtype flows through, real factors take the transposes they took
before.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.linalg.blas import dnrm2 as _dnrm2

from quadnet._validation import RANK_RTOL

__all__ = [
    "GRAM_RTOL",
    "RANK_RTOL",
    "Frame",
    "ct",
    "fro_norm",
    "frame",
    "frame_from_eig",
    "horizontal_basis",
    "horizontal_dim",
    "horizontal_part",
    "lift",
    "lyapunov",
    "procrustes",
    "vertical_basis",
    "vertical_dim",
    "vertical_generator",
    "vertical_part",
]

#: ``eigh(U^T U)`` is used (instead of an SVD of ``U``) only when its smallest eigenvalue
#: exceeds ``GRAM_RTOL`` times its largest (``kappa(U) < 100``): the Gram route then carries an
#: error ``<= c eps kappa(U)^2 <= 1e4 c eps``; below that the SVD route (error
#: ``c eps sigma_max / sigma_{(r-1)}``, ``docs/stratified.md``) takes over.
GRAM_RTOL = 1e-4

_BIG, _SMALL = 1e150, 1e-150  # outside [_SMALL, _BIG]^2 the Gram matrix over/underflows
_F64 = np.dtype(np.float64)


def vertical_dim(r: int, k: int | None = None, field: str = "real") -> int:
    """``dim V_U = r(r-1)/2 - (r-k)(r-k-1)/2`` for a ``d x r`` factor of rank ``k``
    (``k = r``, the full-rank stratum, by default; ``docs/stratified.md`` derives it).

    Complex field: ``Omega`` skew-Hermitian, ``r^2`` real dimensions, of which the block of the
    ``r - k`` null directions (``(r-k)^2``) is dropped: ``dim V_U = r^2 - (r-k)^2``."""
    k = r if k is None else k
    if field == "complex":
        return r * r - (r - k) * (r - k)
    return r * (r - 1) // 2 - (r - k) * (r - k - 1) // 2


def horizontal_dim(d: int, r: int, k: int | None = None, field: str = "real") -> int:
    """``dim H_U = d r - dim V_U``; at full rank ``n_h = d r - r(r-1)/2 = dim M_r^+``
    (complex field: ``2 d r - dim V_U``, ``2 d r - r^2`` at full rank)."""
    return (2 if field == "complex" else 1) * d * r - vertical_dim(r, k, field)


def ct(A: np.ndarray) -> np.ndarray:
    """``A^*``: the conjugate transpose of a complex array, the transpose (a view) of a real
    one (the one place where the two fields differ in the kernels)."""
    return A.conj().T if A.dtype.kind == "c" else A.T


class Frame(NamedTuple):
    """Everything the geometry needs at one factor, computed once (see :func:`frame`).

    ``Un = U / scale`` (``scale = 1`` unless ``U`` would over/underflow its Gram matrix),
    ``sigma`` the singular values of ``Un`` (any order, matching the columns of ``E``),
    ``s = sigma**2``, ``P`` the left singular vectors (``None`` on the Gram route, where
    ``P = Un E / sigma`` is formed only if needed), ``rank`` the numerical rank, ``tol`` the
    absolute singular-value threshold, ``inv`` the ``r x r`` array ``1/(s_i + s_j)`` with the
    dropped pairs set to 0, ``cx`` whether the factor is complex and ``Eh = E^*`` (``E^T`` for a
    real factor: the transpose the kernels take, formed once per point).
    """

    Un: np.ndarray
    scale: float
    sigma: np.ndarray
    s: np.ndarray
    E: np.ndarray
    P: np.ndarray | None
    rank: int
    tol: float
    inv: np.ndarray
    cx: bool = False
    Eh: np.ndarray | None = None


def _pair_inverse(sigma: np.ndarray, s: np.ndarray, tol: float) -> np.ndarray:
    den = s[:, None] + s[None, :]
    keep = np.maximum(sigma[:, None], sigma[None, :]) > tol
    inv = np.zeros_like(den)
    np.divide(1.0, den, out=inv, where=keep)
    return inv


def frame(U: np.ndarray, rtol: float = RANK_RTOL) -> Frame:
    """The :class:`Frame` of a finite ``d x r`` factor (one ``eigh`` or one SVD)."""
    d, r = U.shape
    cx = U.dtype is not _F64 and U.dtype.kind == "c"     # one identity test on the real path
    s, E = np.linalg.eigh((U.conj().T if cx else U.T) @ U)
    if not _SMALL**2 * r < s[-1] < _BIG**2:       # rare: zero, tiny or huge factor
        m = float(np.abs(U).max())
        if m == 0.0:
            z, eye = np.zeros(r), np.eye(r, dtype=U.dtype)
            return Frame(U, 1.0, z, z, eye, np.eye(d, r, dtype=U.dtype), 0, 0.0,
                         np.zeros((r, r)), cx, eye)
        return _svd_frame(U / m, m, rtol)
    if s[0] > GRAM_RTOL * s[-1]:                  # well conditioned: the Gram route
        sigma = np.sqrt(s)
        return Frame(U, 1.0, sigma, s, E, None, r, rtol * float(sigma[-1]),
                     1.0 / (s[:, None] + s[None, :]), cx, E.conj().T if cx else E.T)
    if not 1e-100 < s[-1] < 1e100:  # ill-conditioned and small/large: a kept s_i = sigma_i^2
        m = float(np.abs(U).max())  # (down to rtol^2 s_max) would underflow 1/(s_i + s_j)
        return _svd_frame(U / m, m, rtol)
    return _svd_frame(U, 1.0, rtol)


def _svd_frame(Un: np.ndarray, scale: float, rtol: float) -> Frame:
    P, sigma, Wt = np.linalg.svd(Un, full_matrices=False)
    tol = rtol * float(sigma[0])
    s = sigma * sigma
    rank = int(np.count_nonzero(sigma > tol))
    cx = Un.dtype.kind == "c"
    return Frame(Un, scale, sigma, s, ct(Wt), P, rank, tol, _pair_inverse(sigma, s, tol), cx,
                 Wt)


def frame_from_eig(U: np.ndarray, eig, rtol: float = RANK_RTOL) -> Frame:
    """A :class:`Frame` from a caller's ``numpy.linalg.eigh(U.T @ U)`` (Gram route), or from
    the SVD of ``U`` when that eigendecomposition is too ill-conditioned to trust (a
    :class:`Frame` is returned as it is)."""
    if isinstance(eig, Frame):
        return eig
    s, E = eig
    if s[-1] > 0 and s[0] > GRAM_RTOL * s[-1] and _SMALL**2 < s[-1] < _BIG**2:
        sigma = np.sqrt(s)
        cx = U.dtype.kind == "c" or E.dtype.kind == "c"
        return Frame(U, 1.0, sigma, s, E, None, U.shape[1], rtol * float(sigma[-1]),
                     1.0 / (s[:, None] + s[None, :]), cx, E.conj().T if cx else E.T)
    return frame(U, rtol)


def _left(fr: Frame) -> np.ndarray:
    """Left singular vectors ``P`` (``d x r``; columns of rank-dropped values arbitrary)."""
    if fr.P is not None:
        return fr.P
    return (fr.Un @ fr.E) / fr.sigma


def lyapunov(fr: Frame, K: np.ndarray) -> np.ndarray:
    """Minimum-norm solution of ``(U^T U) Omega + Omega (U^T U) = K`` (``K`` skew or symmetric).

    ``Omega = E [ (E^T K E)_ij / (s_i + s_j) ] E^T`` over kept pairs, 0 on dropped pairs
    (``K`` in the units of ``U^T U``; the frame's scaling is undone).
    """
    W = fr.E @ ((fr.Eh @ K @ fr.E) * fr.inv) @ fr.Eh
    if fr.scale == 1.0:  # the common case: no rescaled frame, no division
        return W
    # divided twice: scale**2 over/underflows for the rescaled frames (scale ~1e200, 1e-200)
    return W / fr.scale / fr.scale


def _omega_tilde(fr: Frame, Z: np.ndarray) -> np.ndarray:
    """``Omega`` of ``P_v(Z) = Un Omega`` in the ``E`` basis (minimum norm)."""
    cx = fr.cx                  # Z in the field of the frame (a complex Z needs a complex U)
    if fr.P is None:
        A = fr.Un @ fr.E
        Kt = (A.conj().T if cx else A.T) @ (Z @ fr.E)
    else:
        Kt = fr.sigma[:, None] * ((fr.P.conj().T if cx else fr.P.T) @ Z @ fr.E)
    return (Kt - (Kt.conj().T if cx else Kt.T)) * fr.inv


def vertical_generator(fr: Frame, Z: np.ndarray) -> np.ndarray:
    """The minimum-norm skew (skew-Hermitian) ``Omega`` with ``P_v(Z) = U Omega``."""
    return (fr.E @ _omega_tilde(fr, Z) @ fr.Eh) / fr.scale


def vertical_part(fr: Frame, Z: np.ndarray) -> np.ndarray:
    """``P_v(Z)``: the orthogonal projection onto ``V_U = {U Omega : Omega skew}``."""
    Wt = _omega_tilde(fr, Z)
    if fr.P is None:
        return fr.Un @ (fr.E @ Wt @ fr.Eh)
    return fr.P @ ((fr.sigma[:, None] * Wt) @ fr.Eh)


def horizontal_part(fr: Frame, Z: np.ndarray) -> np.ndarray:
    """``P_h(Z) = Z - P_v(Z)``: the orthogonal projection onto ``H_U = {xi : U^T xi sym}``."""
    return Z - vertical_part(fr, Z)


def lift(fr: Frame, Qdot: np.ndarray) -> tuple[np.ndarray, float]:
    r"""Minimum-norm least-squares solution ``xi`` of ``xi U^T + U xi^T = Qdot`` (horizontal).

    With ``P_k, sigma_k, E_k`` the rank-``k`` part of the SVD and ``Pi = P_k P_k^T``:
    ``xi = [P_k A + (I - Pi) Qdot P_k diag(1/sigma_k)] E_k^T``,
    ``A_ij = (P_k^T Qdot P_k)_ij sigma_j / (sigma_i^2 + sigma_j^2)``. Returns ``(xi, res)``
    with ``res = ||(I - Pi) Qdot (I - Pi)||_F``, the distance of ``Qdot`` to the image of
    ``D pi(U)``.
    """
    keep = fr.sigma > fr.tol
    P = _left(fr)[:, keep]
    sig, E = fr.sigma[keep], fr.E[:, keep]
    Ph = ct(P)
    M = Qdot @ P                                  # d x k
    top = Ph @ M                                  # k x k, symmetric (Hermitian)
    C = M - P @ top                               # (I - Pi) Qdot P_k
    A = top * (sig[None, :] / (sig[:, None] ** 2 + sig[None, :] ** 2))
    xi = (P @ A + C / sig[None, :]) @ ct(E) / fr.scale
    R = Qdot - P @ ct(M)                          # (I - Pi) Qdot (Qdot = Qdot^*)
    res = fro_norm(R - (R @ P) @ Ph)
    return xi, res


def vertical_basis(fr: Frame) -> np.ndarray:
    r"""Frobenius-orthonormal basis of ``V_U``, ``(d r) x dim V_U`` (row-major ``vec``).

    One column per kept pair ``i < j``:
    ``P (sigma_i e_i e_j^T - sigma_j e_j e_i^T) E^T / sqrt(sigma_i^2 + sigma_j^2)``, i.e. the
    normalised ``U (E_i E_j^T - E_j E_i^T)``; different pairs occupy different entries of
    ``P^T Z E``, so the columns are orthonormal by construction (no QR).
    """
    d, r = fr.Un.shape
    P, sig, E = _left(fr), fr.sigma, fr.E
    cx = E.dtype.kind == "c"
    Ec = E.conj() if cx else E
    cols = []
    for i in range(r):
        if cx and sig[i] > fr.tol:                # Omega = i E_i E_i^*: U Omega = i sigma_i P_i E_i^*
            cols.append(1j * np.outer(P[:, i], Ec[:, i]).reshape(-1))
        for j in range(i + 1, r):
            if max(sig[i], sig[j]) <= fr.tol:
                continue
            n = math.hypot(sig[i], sig[j])
            a, b = np.outer(P[:, i], Ec[:, j]), np.outer(P[:, j], Ec[:, i])
            cols.append(((sig[i] / n) * a - (sig[j] / n) * b).reshape(-1))
            if cx:                                # Omega = i (E_i E_j^* + E_j E_i^*)
                cols.append((1j * ((sig[i] / n) * a + (sig[j] / n) * b)).reshape(-1))
    if not cols:
        return np.zeros((d * r, 0), dtype=E.dtype)
    return np.array(cols).T


def horizontal_basis(fr: Frame) -> np.ndarray:
    """Frobenius-orthonormal basis of ``H_U``, ``(d r) x (d r - dim V_U)``: the orthogonal
    complement of :func:`vertical_basis` by one full QR (the identity when ``V_U = 0``).

    Complex factor: ``(d r) x (2 d r - dim V_U)`` complex columns, orthonormal for the real
    inner product (``Re(B^* B) = I``): the complement is taken in the real-ified space
    ``vec(Z) -> [Re vec(Z), Im vec(Z)]``, of dimension ``2 d r``."""
    d, r = fr.Un.shape
    V = vertical_basis(fr)
    if V.dtype.kind == "c":
        n = d * r
        if V.shape[1] == 0:
            return np.concatenate([np.eye(n), 1j * np.eye(n)], axis=1)
        Qfull, _ = np.linalg.qr(np.concatenate([V.real, V.imag]), mode="complete")
        B = Qfull[:, V.shape[1]:]
        return B[:n] + 1j * B[n:]
    if V.shape[1] == 0:
        return np.eye(d * r)
    Qfull, _ = np.linalg.qr(V, mode="complete")
    return Qfull[:, V.shape[1]:]


def procrustes(U: np.ndarray, V: np.ndarray) -> np.ndarray:
    r"""``argmin_{R in O(r)} ||U R - V||_F = A B^T`` with ``U^T V = A Sigma B^T`` (improper ``R``
    allowed). The one Procrustes of quadnet; ``U^T V`` is rescaled when it would
    over/underflow (the minimiser is invariant under positive scaling). Complex factors:
    ``argmin`` over ``U(r)``, ``A B^*`` from the SVD of ``U^* V`` (the unitary polar factor).

    ``U`` and ``V`` may be stacks (``(k, d, r)``, broadcast against each other): the result
    is then the ``(k, r, r)`` stack of the minimisers, from one batched SVD.
    """
    if U.ndim != 2 or V.ndim != 2:
        # stacks: every slice rescaled to max |entry| = 1 (two divisions, negligible beside the
        # batched SVD), so no slice's U^T V over/underflows whatever the scales in the stack
        mu = np.abs(U).max(axis=(-2, -1), keepdims=True)
        mv = np.abs(V).max(axis=(-2, -1), keepdims=True)
        Un = U / np.where(mu > 0, mu, 1.0)
        M = np.swapaxes(Un.conj() if Un.dtype.kind == "c" else Un, -1, -2) @ (
            V / np.where(mv > 0, mv, 1.0))
        A, _, Bt = np.linalg.svd(M, full_matrices=M.shape[-1] == M.shape[-2])
        return A @ Bt  # r x q widths: the partial isometry of the thin SVD
    try:
        A, sv, Bt = np.linalg.svd((U.T if U.dtype is _F64 or U.dtype.kind != "c" else U.conj().T)
                                  @ V, full_matrices=U.shape[1] == V.shape[1])
        ok = _SMALL**2 < sv[0] < _BIG**2
    except (np.linalg.LinAlgError, RuntimeWarning, FloatingPointError):
        ok = False                                # overflow to inf (warns under -W error), NaN
    if not ok:
        mu, mv = float(np.abs(U).max()), float(np.abs(V).max())
        if not (mu > 0 and mv > 0 and math.isfinite(mu) and math.isfinite(mv)):
            return np.eye(U.shape[1]) if mu == 0 or mv == 0 else np.full((U.shape[1],) * 2, np.nan)
        A, sv, Bt = np.linalg.svd(ct(U / mu) @ (V / mv), full_matrices=U.shape[1] == V.shape[1])
    return A @ Bt


#: Up to this many entries :func:`fro_norm` calls BLAS ``dnrm2`` (0.6 µs at ``10 x 2``
#: against 3 µs for ``numpy.linalg.norm``); above, ``dnrm2``'s scaled loop is slower than
#: numpy's dot (16.6 against 5.4 µs at ``1000 x 20``), so numpy's norm is used and rescaled.
_NRM2_MAX = 4096


def fro_norm(A: np.ndarray) -> float:
    """``||A||_F`` without overflow or underflow of the squares: BLAS ``dnrm2`` (scaled
    accumulation) for small arrays; for large ones numpy's norm, recomputed on ``A / max|A|``
    when the squares over/underflow. ``inf``/``NaN`` in, the same out (callers check)."""
    v = A.reshape(-1)
    if v.size == 0:
        return 0.0
    if v.dtype != np.float64:
        if v.dtype.kind == "c":      # ||z|| = ||(Re z, Im z)||: the float64 view of complex128
            v = np.ascontiguousarray(v, dtype=np.complex128).view(np.float64)
        else:
            v = v.astype(np.float64)
    if v.size <= _NRM2_MAX:
        return float(_dnrm2(v))
    try:
        n = float(np.linalg.norm(v))
    except (RuntimeWarning, FloatingPointError):  # overflow of the squares under -W error
        n = math.inf
    if 1e-140 < n < 1e140 or n == 0.0 and not v.any():
        return n
    m = float(np.abs(v).max())
    if m == 0.0 or not math.isfinite(m):
        return m
    return m * float(np.linalg.norm(v / m))
