"""The built-in sweeps of ``quadnet sweep`` and their cell functions (see :mod:`quadnet.sweeps`).

* ``quotient-gd``: factor gradient descent on ``1/2 ||U U^T - T||_F^2`` (foundation API only);
* ``recovery``: the Gaussian sensing phase transition (:mod:`quadnet.recovery`, issue 3);
* ``selection``: the small-initialisation selection law in the commuting case
  (:mod:`quadnet.commuting`, issue 5).

The cell functions import their feature modules lazily, so a missing module makes only its
sweep unavailable.
"""

from __future__ import annotations

import math

from ._validation import as_int
from .sweeps import Scalar, Sweep, register_sweep

__all__ = ["quotient_gd_cell", "recovery_sweep_cell", "selection_sweep_cell"]


def quotient_gd_cell(d: int, r: int, eta_scale: float, trial: int, steps: int,
                     seed: int) -> dict[str, Scalar]:
    """Factor gradient descent on ``L(U) = 1/2 ||U U^T - T||_F^2``, ``T = U* U*^T`` (THEORY §2).

    ``U*`` and the start ``U_0`` are Gaussian ``d x r`` (``U_0`` scaled by 1/2) drawn from
    ``seed``; the step is ``eta = eta_scale / ||T||_2``. Returns the final loss, the quotient
    distance ``min_R ||U R - U*||_F`` relative to ``||U*||_F`` after ``steps`` steps, and whether
    the iteration diverged (then the loss and distance are ``nan`` and ``diverged`` is true).
    ``trial`` only labels the cell (the seed already differs between trials).
    """
    import numpy as np

    from .dynamics import DivergenceError, gradient_descent
    from .losses import FrobeniusLoss
    from .quotient import PSDQuotient

    d = as_int(d, "d", minimum=1)
    r = as_int(r, "r", minimum=1)
    if r > d:
        raise ValueError(f"r must be at most d = {d}, got {r}")
    steps = as_int(steps, "steps", minimum=1)
    rng = np.random.default_rng(as_int(seed, "seed", minimum=0))
    U_star = rng.standard_normal((d, r))
    U0 = 0.5 * rng.standard_normal((d, r))
    T = U_star @ U_star.T
    eta = float(eta_scale) / float(np.linalg.norm(T, 2))
    try:
        traj = gradient_descent(FrobeniusLoss(T), U0, eta, steps, record_every=steps)
    except DivergenceError:
        return {"eta": eta, "final_loss": math.nan, "rel_dist": math.nan, "diverged": True}
    U = traj.U[-1]
    rel = PSDQuotient(d, r).dist(U, U_star) / float(np.linalg.norm(U_star))
    return {"eta": eta, "final_loss": float(traj.loss[-1]), "rel_dist": rel, "diverged": False}


register_sweep(Sweep(
    name="quotient-gd",
    description="factor gradient descent on 1/2||UU^T - T||_F^2 vs step size (foundation API)",
    cell="quadnet._sweep_defs:quotient_gd_cell",
    quick={"d": (3, 5), "r": (1, 2), "eta_scale": (0.1, 0.3), "trial": (0, 1, 2),
           "steps": (500,)},
    full={"d": (3, 5, 8, 12), "r": (1, 2, 3), "eta_scale": (0.05, 0.1, 0.2, 0.3, 0.4, 0.5),
          "trial": tuple(range(10)), "steps": (3000,)},
    results=("eta", "final_loss", "rel_dist", "diverged"),
    seed_keys=("d", "r", "trial"),
))


def recovery_sweep_cell(d: int, r: int, ratio: float, trial: int, init: str, method: str,
                  seed: int) -> dict[str, Scalar]:
    """One trial of the sensing phase transition (THEORY.md §4) with ``m = round(ratio n_h)``
    measurements, ``n_h = dr - r(r-1)/2``: :func:`quadnet.recovery.phase_transition_cell`
    (imported here, lazily). The instance depends on ``(seed, d, r, m, trial)`` only, so every
    init and method of a trial sees the same data."""
    from .recovery import phase_transition_cell

    d = as_int(d, "d", minimum=1)
    r = as_int(r, "r", minimum=1, maximum=d)
    n_h = d * r - r * (r - 1) // 2
    m = max(1, round(float(ratio) * n_h))
    out = phase_transition_cell(d, r, m, trial, init=init, method=method, seed=seed)
    return {"m": m, **{k: out[k] for k in _RECOVERY_RESULTS[1:]}}


_RECOVERY_RESULTS = ("m", "n_h", "success", "rel_error", "iterations", "converged", "diverged")


def selection_sweep_cell(instance: int, log_inv_eps: float, d: int, m: int,
                         instance_seed: int) -> dict[str, Scalar]:
    """One cell of the small-initialisation selection sweep (THEORY.md §5): the flow's limit
    from ``q0 = eps 1``, ``eps = exp(-log_inv_eps)``, against the minimum-trace interpolant, by
    :func:`quadnet.commuting.selection_cell` (imported here, lazily). ``instance`` labels the
    random instance; its seed ``instance_seed`` is the cell seed (shared by all ``eps``)."""
    from .commuting import selection_cell as cell

    out = cell(None, instance_seed, d=d, m=m, log_inv_eps=log_inv_eps)
    return {k: out[k] for k in _SELECTION_RESULTS}


_SELECTION_RESULTS = ("eps", "trace", "min_trace", "trace_gap", "dist", "entropy_bound",
                      "kkt_residual", "iterations", "face_dimension")

register_sweep(Sweep(
    name="recovery",
    description="Gaussian rank-one sensing phase transition: success vs m / n_h (issue 3)",
    cell="quadnet._sweep_defs:recovery_sweep_cell",
    quick={"d": (8,), "r": (1, 2), "ratio": (1.0, 1.5, 2.0, 2.5, 3.0, 4.0),
           "trial": tuple(range(5)), "init": ("spectral",), "method": ("lbfgs",)},
    full={"d": (10, 20), "r": (1, 2, 3),
          "ratio": (0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0, 3.5, 4.0),
          "trial": tuple(range(20)), "init": ("spectral", "small"), "method": ("lbfgs",)},
    results=_RECOVERY_RESULTS,
    requires=("quadnet.recovery",),
    seed_keys=(),  # one master seed: the instance is drawn from (seed, d, r, m, trial)
))

register_sweep(Sweep(
    name="selection",
    description="commuting case: limit from eps*I vs the minimum-trace interpolant as eps -> 0",
    cell="quadnet._sweep_defs:selection_sweep_cell",
    quick={"instance": (0, 1, 2, 3), "log_inv_eps": (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0),
           "d": (24,), "m": (6,)},
    full={"instance": tuple(range(20)),
          "log_inv_eps": tuple(float(2.0 ** k) for k in range(13)), "d": (24,), "m": (6,)},
    results=_SELECTION_RESULTS,
    seed_keys=("instance",),
    seed_arg="instance_seed",
    requires=("quadnet.commuting",),
))
