"""The RFM recipes of the checks ``rfm``, ``grokking`` and ``parity``, in one place.

* :data:`FACT_CFG`: FACT-RFM of Boix-Adsera et al. (2025) on modular arithmetic (exponential
  inner-product kernel, ``L = 3``, ``M ← (FFᵀ)^{1/2}`` trace-normalised, ridgeless);
* :data:`NFA_CFG`: NFA-RFM of Radhakrishnan et al. (2024) (Gaussian kernel, ``L = 2.5``,
  centred ``AGOP^{1/2}``, ridgeless);
* :data:`PARITY_CFG`: sparse parity (Gaussian kernel, ``L = 7`` on ``±1`` inputs, which is
  ``L = 7/√d`` on the ``±1/√d`` inputs of Boix-Adsera et al. (2025)).

:data:`SOLVER_CFG` is merged into every recipe a sweep cell builds, so a kernel-solver option
(e.g. ``{"solver": "auto"}``) is set for all of them in one line. :data:`METHODS` names the
grokking recipes a sweep cell accepts (the two above and the variants tried on small moduli).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "FACT_CFG",
    "METHODS",
    "NFA_CFG",
    "PARITY_CFG",
    "PARITY_RIDGE",
    "SOLVER_CFG",
    "STAY",
    "reach_and_stay",
    "threshold",
]

FACT_CFG = {"kernel": "exp_inner", "bandwidth": 3.0, "update": "fact", "fact_form": "ffT",
            "normalize": "trace", "ridge": 0.0}
NFA_CFG = {"kernel": "gaussian", "bandwidth": 2.5, "update": "nfa", "centre_agop": True,
           "normalize": None, "ridge": 0.0}
PARITY_CFG = {"kernel": "gaussian", "bandwidth": 7.0, "ridge": 0.0, "block_size": 0}
#: The ridge of the ``parity`` check's recipe at every ``n`` (an iterative kernel solver needs
#: ``ridge > 0``; the ``parity`` check measures that it leaves the thresholds unchanged).
PARITY_RIDGE = 1e-3
#: Options of the kernel solve merged into every recipe a sweep cell builds (empty: the
#: estimator's default solve).
SOLVER_CFG: dict = {}
#: "stays at 100%" = every later iterate up to the horizon, at least STAY of them
STAY = 5

#: Grokking recipes by name: the two of the ``rfm`` check and variants tried on small ``p``.
METHODS = {
    "fact": FACT_CFG,
    "nfa": NFA_CFG,
    "fact_ridge1e-3": dict(FACT_CFG, ridge=1e-3),
    "fact_ridge1e-2": dict(FACT_CFG, ridge=1e-2),
    "fact_L2": dict(FACT_CFG, bandwidth=2.0),
    "fact_L4": dict(FACT_CFG, bandwidth=4.0),
    "fact_fm": dict(FACT_CFG, fact_form="fm"),
    "fact_gaussian": dict(FACT_CFG, kernel="gaussian", bandwidth=2.5),
    "nfa_ridge1e-3": dict(NFA_CFG, ridge=1e-3),
}


def reach_and_stay(acc) -> int | None:
    """First iteration from which test accuracy is 100% up to the end (≥ STAY iterations).

    Examples
    --------
    >>> reach_and_stay([0.5, 1.0, 0.9] + [1.0] * 6)
    3
    >>> reach_and_stay([0.5] + [1.0] * 5) is None      # 5 iterates at 100%: one too few
    True
    """
    a = np.asarray(acc)
    for t in range(len(a) - STAY):
        if np.all(a[t:] == 1.0):
            return t
    return None


def threshold(sizes, acc, level: float = 0.99) -> float:
    """Smallest size from which every larger size reaches ``level`` (inf if none).

    ``acc[i]`` is the accuracy at ``sizes[i]`` (``sizes`` increasing); a ``nan`` (a size that
    did not run) counts as not reaching ``level``.

    Examples
    --------
    >>> threshold([250, 500, 1000], [0.6, 0.995, 1.0])
    500.0
    >>> threshold([250, 500, 1000], [0.995, 0.6, 1.0])
    1000.0
    >>> threshold([250, 500], [0.6, 0.7])
    inf
    """
    acc = np.asarray(acc, float)
    for i, n in enumerate(sizes):
        if np.all(acc[i:] >= level):
            return float(n)
    return float("inf")
