r"""An explicit sufficient sample size for Gaussian rank-one sensing (quadnet theory §4).

The guarantee chain, with every constant (full derivation in ``docs/sample_bound.md``).
Notation: ``Q* = U* U*^T`` of rank ``r`` with eigenvalues ``sigma_1 >= ... >= sigma_r > 0``,
``kappa = sigma_1 / sigma_r``; ``T_m``, ``T`` the empirical and population normal operators
on ``Sym(d)`` (Frobenius inner product), ``Delta = T_m - T``; ``dist(U, U*) =
min_{R in O(r)} ||U R - U*||_F``; the loss is ``L(U) = 1/2 <E, T_m(E)>``, ``E = U U^T - Q*``
(noiseless data).

1. Concentration (second moment). ``Z = A (x) A`` (``H -> <A, H> A``, ``A = x x^T``) has
   Hilbert–Schmidt norm ``||x||^4``, so ``E ||Delta||_HS^2 = (E ||x||^8 - ||T||_HS^2) / m
   <= d (d+2) (d+4) (d+6) / m`` (moments of chi-square). Markov:
   ``P(||Delta||_op > delta) <= d (d+2) (d+4) (d+6) / (m delta^2)``.
2. Conditioning. ``T`` has eigenvalues ``2`` (on the traceless matrices) and ``d + 2`` (on
   ``I``), so on ``||Delta||_op <= delta`` every eigenvalue of ``T_m`` lies in
   ``[alpha, beta] = [2 - delta, d + 2 + delta]`` and ``||T^{-1}||_op = 1/2``.
3. Spectral start. ``Q_hat = T^{-1}(M) = Q* + T^{-1} Delta(Q*)``, so
   ``||Q_hat - Q*||_F <= delta ||Q*||_F / 2``; the top-r positive part ``Q_0`` is the nearest
   PSD rank-``<= r`` matrix to ``Q_hat``, hence ``||Q_0 - Q*||_F <= delta ||Q*||_F
   <= delta sqrt(r) sigma_1``, and ``dist(U_0, U*)^2 <= ||Q_0 - Q*||_F^2 / (2 (sqrt 2 - 1)
   sigma_r)`` (Tu et al. 2016, Lemma 5.4).
4. Basin. For an aligned ``H = U - U*`` (``U*^T H`` symmetric) with ``||H||_F <= rho
   sqrt(sigma_r)``: ``||E||_F >= (sqrt 2 - rho) sqrt(sigma_r) ||H||_F`` and
   ``<grad L(U), H> = <T_m E, E> + <T_m E, H H^T> >= (alpha - beta rho / (sqrt 2 - rho)) ||E||^2
   >= (alpha / 2) ||E||_F^2`` as soon as ``rho <= sqrt 2 alpha / (2 beta + alpha)``. With
   ``delta <= 1`` (``alpha >= 1``, ``beta <= d + 3``) the radius ``rho = sqrt 2 / (2 d + 7)``
   works for every such instance.
5. Rates. ``||grad L(U)||_F <= 2 beta (1 + rho) sqrt(sigma_1) ||E||_F``. Gradient descent with
   ``eta = alpha / (8 beta^2 (1 + rho)^2 sigma_1)`` gives ``dist_{k+1}^2 <= (1 - c) dist_k^2``,
   ``c = eta alpha (sqrt 2 - rho)^2 sigma_r / 2``; the flow gives
   ``dist(t) <= exp(-gamma t) dist(0)``, ``gamma = alpha (sqrt 2 - rho)^2 sigma_r / 2``.
6. Chain. The start is in the basin when ``delta sqrt(r) kappa <= rho sqrt(2 (sqrt 2 - 1))``;
   so ``delta = min(1, sqrt(2 (sqrt 2 - 1)) rho / (kappa sqrt r))`` and, with failure
   probability ``p``,

       m >= d (d+2) (d+4) (d+6) / (p delta^2)
         = d (d+2) (d+4) (d+6) (2d+7)^2 r kappa^2 / (4 (sqrt 2 - 1) p)

   samples suffice: ``O(r kappa^2 d^6 / p)``, deliberately conservative (the paper's chain
   scales like ``r^2 d^8``); experiments need ``m ~ 2 n_h``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from quadnet._docstrings import fill
from quadnet._validation import R_LE_D, Integer, Real, validate_params

#: Largest dimension the bounds accept: ``d (d+2) (d+4) (d+6)`` stays a float64 (``~1e48``).
D_MAX = 10**12
_D = Integer(1, D_MAX)
_PROBABILITY = Real(0, 1, closed="neither")

#: Parameter entries documented identically by several bounds (``{{name}}`` in a docstring).
_DOC = {"failure_probability": """failure_probability : float, default 0.1
    ``p`` in ``(0, 1)``: the guarantee holds with probability ``>= 1 - p`` over the design."""}


_R_LE_D = R_LE_D  # the one r <= d relation (quadnet._validation)

__all__ = [
    "SampleBound",
    "basin_radius",
    "concentration_samples",
    "prescribed_step",
    "sample_bound",
    "sufficient_sample_size",
]

_TU = math.sqrt(2.0 * (math.sqrt(2.0) - 1.0))  # Tu et al. (2016) Lemma 5.4 constant


def _moment8(d: int) -> int:
    """``E ||x||^8 = d (d+2) (d+4) (d+6)`` for ``x ~ N(0, I_d)``."""
    return d * (d + 2) * (d + 4) * (d + 6)


@validate_params({"d": _D, "delta": Real(0, None, closed="neither"),
                  "failure_probability": _PROBABILITY})
@fill(_DOC)
def concentration_samples(d: int, delta: float, failure_probability: float = 0.1) -> int:
    """Smallest ``m`` with ``P(||T_m - T||_op > delta) <= failure_probability`` by step 1:
    ``m = ceil(d (d+2) (d+4) (d+6) / (p delta^2))``.

    Parameters
    ----------
    d : int
        Dimension ``>= 1``.
    delta : float
        Concentration level ``> 0``.
    {{failure_probability}}

    Returns
    -------
    int
        The sample size ``m``.

    Examples
    --------
    >>> concentration_samples(3, 0.5)
    37800
    """
    return _concentration_samples(d, delta, failure_probability)


def _concentration_samples(d: int, delta: float, p: float) -> int:
    m = float(_moment8(d)) / p / delta / delta
    if not math.isfinite(m):
        raise ValueError(f"delta = {delta!r}, failure_probability = {p!r}: the sample count "
                         f"d (d+2) (d+4) (d+6) / (p delta^2) overflows float64 at d = {d}")
    return math.ceil(m)


@validate_params({"d": _D})
def basin_radius(d: int) -> float:
    """``rho = sqrt 2 / (2 d + 7)``: the basin is ``dist(U, U*) <= rho sqrt(sigma_r)`` (step 4).

    Parameters
    ----------
    d : int
        Dimension ``>= 1``.

    Returns
    -------
    float
        ``rho = sqrt(2) / (2 d + 7)``.

    Examples
    --------
    >>> round(basin_radius(3), 6)
    0.108786
    """
    return math.sqrt(2.0) / (2 * d + 7)


@validate_params({"d": _D, "sigma_1": Real(0, None, closed="neither"), "delta": Real(0, 1)})
def prescribed_step(d: int, sigma_1: float, delta: float = 0.0) -> float:
    """``eta = alpha / (8 beta^2 (1 + rho)^2 sigma_1)``, ``alpha = 2 - delta``,
    ``beta = d + 2 + delta``, ``rho`` = :func:`basin_radius` (step 5).

    ``sigma_1 = ||Q*||_2`` (in practice estimated, e.g. from the spectral start);
    ``delta`` in ``[0, 1]`` is the concentration level (0: the population operator).

    Parameters
    ----------
    d : int
        Dimension ``>= 1``.
    sigma_1 : float
        Largest eigenvalue ``> 0`` of ``Q*``.
    delta : float, default 0.0
        Concentration level in ``[0, 1]``.

    Returns
    -------
    float


    Examples
    --------
    >>> round(prescribed_step(3, 1.0), 6)
    0.008134
    """
    alpha, beta, rho = 2.0 - delta, d + 2.0 + delta, basin_radius(d)
    return alpha / (8.0 * beta * beta * (1.0 + rho) ** 2 * sigma_1)


@dataclass(frozen=True)
class SampleBound:
    """Every quantity of the guarantee chain for one ``(d, r, kappa, p)`` (module docstring).

    ``step`` and ``gd_contraction``/``flow_rate`` are for ``sigma_1 = 1``: the step scales
    like ``1/sigma_1`` and the flow rate like ``sigma_r = 1/kappa`` times that.

    Examples
    --------
    >>> b = sample_bound(3, 1)
    >>> b.m == sufficient_sample_size(3, 1), b.d, b.r
    (True, 3, 1)
    """

    d: int
    r: int
    kappa: float
    failure_probability: float
    m: int
    delta: float
    rho: float
    alpha: float
    beta: float
    step: float
    gd_contraction: float
    flow_rate: float


@validate_params({"d": _D, "r": Integer(1), "kappa": Real(1), "failure_probability": _PROBABILITY},
                 relations=[_R_LE_D])
@fill(_DOC)
def sample_bound(d: int, r: int, *, kappa: float = 1.0,
                 failure_probability: float = 0.1) -> SampleBound:
    """The full guarantee chain (module docstring, steps 1–6) as a :class:`SampleBound`.

    Parameters
    ----------
    d, r : int
        Sizes, ``1 <= r <= d``.
    kappa : float, default 1.0
        Condition number ``>= 1``.
    {{failure_probability}}

    Returns
    -------
    SampleBound
        Every constant of the chain; ``.m`` is :func:`sufficient_sample_size`.

    Examples
    --------
    >>> sample_bound(3, 1).m == sufficient_sample_size(3, 1)
    True
    """
    p = failure_probability
    rho = basin_radius(d)
    delta = min(1.0, _TU * rho / (kappa * math.sqrt(r)))
    alpha, beta = 2.0 - delta, d + 2.0 + delta
    step = prescribed_step(d, 1.0, delta)
    sigma_r = 1.0 / kappa
    s2 = (math.sqrt(2.0) - rho) ** 2
    return SampleBound(d=d, r=r, kappa=kappa, failure_probability=p,
                       m=_concentration_samples(d, delta, p), delta=delta, rho=rho,
                       alpha=alpha, beta=beta, step=step,
                       gd_contraction=1.0 - step * alpha * s2 * sigma_r / 2.0,
                       flow_rate=alpha * s2 * sigma_r / 2.0)


@validate_params({"d": _D, "r": Integer(1), "kappa": Real(1), "failure_probability": _PROBABILITY},
                 relations=[_R_LE_D])
@fill(_DOC)
def sufficient_sample_size(d: int, r: int, *, kappa: float = 1.0,
                           failure_probability: float = 0.1) -> int:
    r"""A number of samples that suffices for spectral start plus linear convergence.

    From the guarantee chain of the module docstring (quadnet theory §4):

    .. math:: m = \left\lceil \frac{d (d+2) (d+4) (d+6)}{p\, \delta^2} \right\rceil,
              \quad \delta = \min\left(1, \frac{\sqrt{2(\sqrt2 - 1)}\, \rho}{\kappa \sqrt r}\right),
              \quad \rho = \frac{\sqrt 2}{2d + 7} :

    with probability ``>= 1 - p`` over ``X`` (noiseless data, ``kappa = sigma_1 / sigma_r`` of
    ``Q*``) the spectral start lies within ``rho sqrt(sigma_r)`` of ``U*`` and gradient
    descent with :func:`prescribed_step` converges linearly, the flow exponentially. The bound
    is explicit, not tight (experiments need ``m ~ 2 n_h``).

    Parameters
    ----------
    d, r : int
        Sizes, ``1 <= r <= d``.
    kappa : float, default 1.0
        Condition number ``>= 1`` of ``Q*``.
    {{failure_probability}}

    Returns
    -------
    int
        The sample size ``m`` of the formula above (``sample_bound(...).m``).

    Examples
    --------
    >>> sufficient_sample_size(3, 1)
    963905
    """
    return sample_bound(d, r, kappa=kappa, failure_probability=failure_probability).m
