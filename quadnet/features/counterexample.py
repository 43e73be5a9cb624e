"""A quadratic network where FACT holds and the NFA fails (quadnet theory §6; ``docs/fact.md``).

Construction (all choices are ours; the seed only reports the outcome
``cos(FACT, WᵀW) = 0.994`` vs ``cos(AGOP, WᵀW) < 0.068``):

* ``d = K + 1`` inputs, an orthonormal basis ``(u_1, …, u_K, u_*)`` drawn at random;
  ``x = Σ_k z_k u_k + √ρ z_* u_*`` with ``z ~ N(0, I)``: ``K`` *quiet* directions of variance 1
  and one *loud* direction of variance ``ρ``.
* target ``y = xᵀBx`` with ``B = Σ_k u_k u_kᵀ − γ u_* u_*ᵀ``: weight ``+1`` on every quiet
  direction and a *negative* weight ``−γ`` on the loud one.
* network ``f(x) = Σ_j a_j (w_jᵀx)²`` of width ``K + 1`` with fixed signed second layer
  ``a = (α, …, α, −A)``: ``K`` weak positive units and one strong negative unit.

Why it works. At a critical point ``λ w_j = −2 a_j C w_j``, so every unit is an eigenvector
of ``C`` with eigenvalue ``−λ/(2a_j)``; units with different ``a_j`` are orthogonal, and
``WᵀW = Σ_j ‖w_j‖² ŵ_jŵ_jᵀ`` while ``Q_a = Σ_j a_j‖w_j‖² ŵ_jŵ_jᵀ``. The sign of ``a`` pins
the roles: only the negative unit can produce the negative loud component, only positive
units the quiet ones. Ignoring the ``O(λ)`` shrinkage and sampling error (``Q_a ≈ B``,
``Σ̂ ≈ Σ``):

    WᵀW  ≈ (1/α) Σ_k u_k u_kᵀ + (γ/A) u_* u_*ᵀ          (the weak units must be long),
    AGOP = 4 Q_a Σ̂ Q_a ≈ 4 (Σ_k u_k u_kᵀ + γ²ρ u_* u_*ᵀ)  (the loud direction dominates),

so ``cos(WᵀW, AGOP^s) ≈ (K/α + (γ/A)(γ²ρ)^s) / (√(K/α² + γ²/A²) · √(K + (γ²ρ)^{2s}))``
(:func:`counterexample_prediction`): small for every ``s`` once ``(γ²ρ)^s ≫ √K`` and
``γ/A ≪ 1/α``. AGOP measures how strongly the *function* varies along a direction (large
along the loud, strongly weighted ``u_*``), ``WᵀW`` how much *first-layer weight* was spent
on it (large along the quiet ``u_k``, which the weak units can only reach with long
weights). FACT sees both, because it is the first-order condition itself. With the defaults
(``K = 6`` so width 7, ``α = 0.1``, ``A = 50``, ``ρ = 16``, ``γ = 25``) the prediction is
``0.0207`` for ``s = 1`` and ``0.0449`` for ``s = ½``, and trained nets match it to about 1e-3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import math

from quadnet._validation import Integer, Real, Relation, Seed, memory_guard, validate_params
from quadnet.features.fact import QuadraticNet
from quadnet._linalg import random_orthogonal

__all__ = ["NFACounterexample", "counterexample_prediction", "nfa_counterexample"]


@dataclass(frozen=True)
class NFACounterexample:
    """Data, an untrained net and the regularisation of the construction (module docstring).

    Train with ``train(ex.net0, ex.X, ex.y, ex.lam)``. ``basis`` has columns
    ``(u_1, …, u_K, u_*)``; ``params`` records ``K, α, A, ρ, γ``.

    Examples
    --------
    >>> ex = nfa_counterexample(0, n=40)
    >>> ex.y.shape, ex.lam
    ((40,), 0.001)
    """

    net0: object
    X: np.ndarray
    y: np.ndarray
    lam: float
    basis: np.ndarray
    params: dict


_POS = Real(0, None, closed="neither")
#: The parameters of the construction shared by both functions.
_SHAPE = {"quiet": Integer(1), "alpha": _POS, "A": _POS, "rho": _POS, "gamma": _POS}


@validate_params({"s": _POS} | _SHAPE)
def counterexample_prediction(s, *, quiet: int = 6, alpha: float = 0.1, A: float = 50.0,
                              rho: float = 16.0, gamma: float = 25.0) -> float:
    """Idealised ``cos(WᵀW, AGOP^s)`` of the construction (no shrinkage, ``Σ̂ = Σ``).

    ``(K/α + (γ/A)(γ²ρ)^s) / (√(K/α² + γ²/A²) · √(K + (γ²ρ)^{2s}))`` with ``K = quiet``.

    Examples
    --------
    >>> round(counterexample_prediction(1.0), 4)
    0.0207
    """
    K = quiet
    # the cosine of u = (1/α, …, 1/α, γ/A) and v = (1, …, 1, g), g = (γ²ρ)^s, each scaled by
    # its largest entry in log space: finite for every positive finite argument (no overflow
    # of g, 1/α² or (γ/A)²)
    log_g = s * (2.0 * math.log(gamma) + math.log(rho))
    lu1, lu2 = -math.log(alpha), math.log(gamma) - math.log(A)
    top = max(lu1, lu2)
    u1, u2 = math.exp(lu1 - top), math.exp(lu2 - top)
    v1, v2 = (1.0, math.exp(log_g)) if log_g <= 0 else (math.exp(-log_g), 1.0)
    cos = (K * u1 * v1 + u2 * v2) / (math.sqrt(K * u1**2 + u2**2) * math.sqrt(K * v1**2 + v2**2))
    return min(1.0, float(cos))   # u, v >= 0: in [0, 1]; rounding may reach 1 + eps


#: Peak bytes of :func:`nfa_counterexample`: the ``n × d`` float64 samples, their rotation
#: and squares and the broadcast weights (about five ``n × d`` arrays), ``d = quiet + 1``.
_COUNTEREXAMPLE_MEMORY = memory_guard(("n", "quiet"),
                                      lambda a: 40 * a["n"] * (a["quiet"] + 1),
                                      "nfa_counterexample")


def _enough_samples(a: dict):
    need = (a["quiet"] + 1) * (a["quiet"] + 2) // 2
    return None if a["n"] >= need else f"n must be >= {need}, got {a['n']}"


@validate_params({"seed": Seed(), "n": Integer()} | _SHAPE
                 | {"lam": _POS, "init_scale": _POS},
                 relations=[Relation(("n", "quiet"), _enough_samples,
                                     "n >= (quiet + 1)(quiet + 2)/2"),
                            _COUNTEREXAMPLE_MEMORY])
def nfa_counterexample(seed=0, *, n: int = 400, quiet: int = 6, alpha: float = 0.1,
                       A: float = 50.0, rho: float = 16.0, gamma: float = 25.0,
                       lam: float = 1e-3, init_scale: float = 0.3) -> NFACounterexample:
    """Draw the construction of the module docstring (width ``quiet + 1 >= 7`` by default).

    ``seed`` (int or ``numpy.random.Generator``) determines the basis, the ``n`` samples and
    the initial weights (i.i.d. ``N(0, init_scale²)``).

    Examples
    --------
    >>> ex = nfa_counterexample(0, n=40)
    >>> ex.X.shape, ex.basis.shape
    ((40, 7), (7, 7))
    """
    rng, K = seed, quiet
    d = K + 1
    basis = random_orthogonal(d, rng)
    scale = np.ones(d)
    scale[-1] = np.sqrt(rho)
    X = (rng.standard_normal((n, d)) * scale) @ basis.T
    b = np.ones(d)
    b[-1] = -gamma
    y = np.einsum("ij,ij->i", (X @ basis) ** 2, np.broadcast_to(b, (n, d)))
    a = np.r_[alpha * np.ones(K), -A]
    net0 = QuadraticNet(init_scale * rng.standard_normal((d, d)), a)
    return NFACounterexample(net0, X, y, lam, basis,
                             {"quiet": K, "alpha": alpha, "A": A, "rho": rho, "gamma": gamma})
