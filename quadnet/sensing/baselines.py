r"""Convex baseline for rank-one sensing: trace minimisation (PhaseLift-type SDP), quadnet theory §4.

``min tr Q  subject to  x_i^T Q x_i = y_i (i = 1..m),  Q PSD`` solved by cvxpy (optional
extra ``quadnet[baselines]``, imported lazily). Without cvxpy, :func:`trace_min_sdp`
raises ``ImportError`` with the install hint; :data:`HAVE_CVXPY` says which. The constraint
``x_i^T Q x_i`` is written as ``sum((X Q) * X, axis=1)`` (one ``m x d`` affine expression,
no ``A_i``).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

import numpy as np

from quadnet._linalg import sym
from quadnet._validation import CvxpySolver, Instance, Real, solve_cvxpy, validate_params
from quadnet.sensing.gaussian import GaussianSensing

__all__ = ["HAVE_CVXPY", "SDPResult", "trace_min_sdp"]

#: Whether the optional dependency is installed (cvxpy itself is imported only when used:
#: it takes seconds to import).
HAVE_CVXPY = importlib.util.find_spec("cvxpy") is not None


def _cvxpy():
    try:
        import cvxpy
    except ImportError as exc:
        raise ImportError("trace_min_sdp needs cvxpy: pip install 'quadnet[baselines]'") from exc
    return cvxpy


@dataclass(frozen=True)
class SDPResult:
    """Solution of the trace-minimisation SDP: ``Q`` (symmetric PSD), solver status.

    Examples
    --------
    >>> import numpy as np
    >>> SDPResult(np.eye(2), "optimal", "CLARABEL", 9, True).converged
    True
    """

    Q: np.ndarray
    status: str
    solver: str
    iterations: int
    converged: bool


@validate_params({"problem": Instance(GaussianSensing, "a GaussianSensing instance"),
                  "solver": CvxpySolver(), "eps": Real(0, 1e-2, closed="neither")})
def trace_min_sdp(problem: GaussianSensing, *, solver: str = "CLARABEL",
                  eps: float = 1e-10) -> SDPResult:
    r"""The convex baseline: ``min tr Q`` s.t. ``A(Q) = y``, ``Q`` PSD (PhaseLift-type SDP).

    Solved with cvxpy for ``problem`` (a :class:`GaussianSensing`; quadnet theory §4).
    ``eps`` sets the solver's feasibility/gap tolerances (Clarabel: ``tol_gap_abs``,
    ``tol_gap_rel``, ``tol_feas``). Measured (cvxpy 1.9, Clarabel, d = 20): Clarabel stops
    after ~10 iterations with status ``optimal_inaccurate`` and relative errors 1e-7..1e-5
    whatever ``eps`` (the optimum is rank deficient, so interior-point accuracy is ~ the
    square root of the gap); hence the baseline's success tolerance 1e-4
    (``quadnet.sensing.recovery.SDP_SUCCESS_TOL``). The returned ``Q`` is the symmetric part of
    the solution with negative eigenvalues (solver round-off) clipped to zero.

    Parameters
    ----------
    problem : GaussianSensing
        The measurements.
    solver : str, default "CLARABEL"
        A cvxpy solver name.
    eps : float, default 1e-10
        Solver tolerance ``> 0``.

    Returns
    -------
    SDPResult

    Raises
    ------
    ImportError
        cvxpy is not installed (``pip install quadnet[baselines]``).
    SolverFailure
        A ``ValueError`` naming ``solver``: the solver reports an infeasible/unbounded or
        failed problem, or raises cvxpy's ``SolverError``.

    Examples
    --------
    The solve imports cvxpy (seconds), so it is skipped here; the argument check is not:

    >>> import numpy as np
    >>> trace_min_sdp("abc")
    Traceback (most recent call last):
        ...
    TypeError: trace_min_sdp: problem must be a GaussianSensing instance, got str
    >>> prob = GaussianSensing.random(3, 1, 12, seed=0)
    >>> res = trace_min_sdp(prob)                                # doctest: +SKIP
    >>> bool(np.linalg.norm(res.Q - prob.Q_star) < 1e-3)         # doctest: +SKIP
    True
    """
    _cp = _cvxpy()
    X, y, d = problem.X, problem.y, problem.d
    Q = _cp.Variable((d, d), PSD=True)
    constraints = [_cp.sum(_cp.multiply(X @ Q, X), axis=1) == y]
    prob = _cp.Problem(_cp.Minimize(_cp.trace(Q)), constraints)
    opts = {}
    if solver.upper() == "CLARABEL":
        opts = {"tol_gap_abs": eps, "tol_gap_rel": eps, "tol_feas": eps, "max_iter": 200}
    solve_cvxpy(prob, solver, "the trace-minimisation SDP", "trace_min_sdp", **opts)
    Qv = sym(Q.value)
    w, V = np.linalg.eigh(Qv)
    Qv = (V * np.clip(w, 0.0, None)) @ V.T
    iters = int(getattr(prob.solver_stats, "num_iters", 0) or 0)
    return SDPResult(Q=Qv, status=str(prob.status), solver=solver, iterations=iters,
                     converged=prob.status == "optimal")
