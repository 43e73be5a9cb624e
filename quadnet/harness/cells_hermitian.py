"""The cells of the ``hermitian`` check: one recovery trial of complex Gaussian sensing.

A cell is a pure function of its arguments (quadnet theory §8): the instance is
``GaussianSensing.random(d, r, m, seed=[seed, d, r, m, trial], field="complex")`` (so every
start and method of a trial sees the same data) and a small random start draws from
``[seed, d, r, m, trial, 1]``. The ``hermitian`` check runs its cells through
:func:`quadnet.harness.sweeps.run_cells`, so the numbers do not depend on the number of
workers. The module sits beside :mod:`quadnet.harness.cells` (the real-field cells).
"""

from __future__ import annotations

import warnings


from quadnet._validation import as_int
from quadnet.exceptions import DivergenceError, SpectralInitWarning
from quadnet.sensing.gaussian import GaussianSensing, relative_error
from quadnet.sensing.recovery import CELL_MAX_ITER, SUCCESS_TOL, recover

__all__ = ["STARTS", "complex_dimension", "hermitian_recovery_cell"]

#: The starts of a cell: the spectral start with the optimal preprocessing of Luo, Alghamdi &
#: Lu (2019), the spectral start with the identity preprocessing (the moment estimator, the
#: start of Wirtinger flow), and a small random start.
STARTS = ("spectral-optimal", "spectral-identity", "small")


def complex_dimension(d: int, r: int) -> int:
    """``n_h = 2 d r - r^2``, the real dimension of rank-``r`` Hermitian PSD ``d x d`` matrices
    (quadnet theory §8.3).

    >>> complex_dimension(128, 1), complex_dimension(4, 4)
    (255, 16)
    """
    d = as_int(d, "d", minimum=1)
    r = as_int(r, "r", minimum=1, maximum=d)
    return 2 * d * r - r * r


def _start(prob: GaussianSensing, r: int, start: str):
    if start == "small":
        return "small"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SpectralInitWarning)
        return prob.spectral_init(r, strict=False, preprocessing=start.split("-", 1)[1])


def hermitian_recovery_cell(d: int, r: int, m: int, trial: int, start: str = "spectral-optimal",
                            method: str = "lbfgs", seed: int = 0, *, restarts: int = 0,
                            max_iter: int = CELL_MAX_ITER) -> dict:
    """One trial of complex Gaussian sensing recovery (quadnet theory §8.11).

    Parameters
    ----------
    d, r, m : int
        Dimension, rank of the planted ``Q* = U* U*^*`` and number of measurements.
    trial : int
        The trial's index (part of the instance seed).
    start : {"spectral-optimal", "spectral-identity", "small"}
        The start (:data:`STARTS`).
    method : {"gd", "lbfgs", "trust-regions"}
        The method of :func:`quadnet.sensing.recover`.
    seed : int
        The sweep's seed.
    restarts : int, optional
        Restarts from small random starts while the loss does not interpolate
        (:func:`quadnet.sensing.recover`).
    max_iter : int, optional
        The iteration budget of each run (default ``CELL_MAX_ITER``; gradient descent from the
        spectral start needs about 9,000 steps at ``d = 128``, measured).

    Returns
    -------
    dict
        The arguments, ``n_h = 2dr - r^2``, ``success`` (relative error ``<= SUCCESS_TOL``),
        ``rel_error`` (``inf`` when the start could not be formed or the iteration diverged),
        ``iterations``, ``converged``, ``diverged`` and ``failure`` (why no factor came out,
        else ``""``).

    Examples
    --------
    >>> cell = hermitian_recovery_cell(6, 1, 48, 0, "spectral-optimal", "lbfgs", 0)
    >>> cell["success"], cell["n_h"]
    (True, 11)
    """
    d = as_int(d, "d", minimum=1)
    r = as_int(r, "r", minimum=1, maximum=d)
    m = as_int(m, "m", minimum=1)
    trial = as_int(trial, "trial", minimum=0)
    seed = as_int(seed, "seed", minimum=0)
    restarts = as_int(restarts, "restarts", minimum=0)
    max_iter = as_int(max_iter, "max_iter", minimum=1)
    if start not in STARTS:
        raise ValueError(f"start must be one of {STARTS}, got {start!r}")
    prob = GaussianSensing.random(d, r, m, seed=[seed, d, r, m, trial], field="complex")
    out = {"d": d, "r": r, "m": m, "trial": trial, "start": start, "method": method,
           "seed": seed, "restarts": restarts, "max_iter": max_iter, "n_h": complex_dimension(d, r)}
    Q, iterations, converged, diverged, failure = None, 0, False, False, ""
    try:
        init = _start(prob, r, start)
        res = recover(prob, r, method=method, init=init, seed=[seed, d, r, m, trial, 1],
                      restarts=restarts, max_iter=max_iter)
        Q, iterations, converged = res.Q, res.iterations, res.converged
    except DivergenceError:
        diverged, failure = True, "diverged"
    except ValueError as err:  # e.g. no positive eigenvalue for the spectral start
        failure = str(err)
    err = float("inf") if Q is None else relative_error(Q, prob.Q_star)
    out.update(success=bool(err <= SUCCESS_TOL), rel_error=err, iterations=int(iterations),
               converged=bool(converged), diverged=diverged, failure=failure)
    return out
