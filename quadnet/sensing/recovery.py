r"""Recovery of ``Q* = U* U*^T`` from rank-one measurements (quadnet theory §4).

:func:`recover` minimises ``L(U) = (1/(2m)) sum_i (||U^T x_i||^2 - y_i)^2`` over ``d x r``
factors with one of

* ``"gd"``: gradient descent ``U <- U - eta grad L(U)`` with ``eta="tuned"`` (``1 / lambda_max``
  of the Hessian at the spectral start, by Lanczos on :meth:`GaussianSensing.factor_hvp`),
  ``eta="prescribed"`` (the step of the guarantee, :func:`quadnet.sensing.bounds.prescribed_step`, with
  ``sigma_1`` estimated by the top eigenvalue of the spectral estimate) or a number;
* ``"lbfgs"``: L-BFGS on the factor, :func:`scipy.optimize.minimize` (``L-BFGS-B`` without
  bounds), value and gradient from one product ``X U``;
* ``"trust-regions"``: pymanopt's Riemannian trust regions on :class:`quadnet.PSDQuotient`
  via :func:`quadnet.pymanopt_problem` (exact Hessian-vector products);

from ``init="spectral"`` (:meth:`GaussianSensing.spectral_init`), ``"small"`` (i.i.d.
Gaussian scaled to ``init_scale * sqrt(mean(y) / (d r))``; ``E y = tr Q* = ||U*||_F^2``) or a
given ``d x r`` array.

Stopping rule (all methods): the scale-free gradient ``||grad L(U)||_F / g_0 <= gtol`` with
``g_0 = 2 rms(y)^{3/2}`` (``grad L = 2 S U`` with ``S ~ y`` and ``U ~ y^{1/2}``), or the
iteration budget. ``converged`` reports that rule, not success: recovery is judged
against ``Q*`` by :func:`quadnet.sensing.gaussian.relative_error`.

Divergence (non-finite or exploding iterates, e.g. too large a step ``eta``) raises
:class:`quadnet.DivergenceError` naming the step, never returns NaN.

The pure unit of work of the phase-transition sweep is :func:`quadnet.harness.cells.phase_transition_cell`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.optimize
import scipy.sparse.linalg

from quadnet._linalg import sym
from quadnet._validation import (
    Boolean,
    Converted,
    Instance,
    Integer,
    Optional,
    Options,
    Real,
    Relation,
    Seed,
    as_array,
    as_factor,
    to_rng,
    validate_params,
)
from quadnet.sensing.bounds import prescribed_step
from quadnet.dynamics import BLOWUP, DivergenceError
from quadnet.sensing._fields import as_complex, as_complex_factor
from quadnet.sensing.complex_gaussian import threads_for
from quadnet.sensing.gaussian import PREPROCESSINGS, GaussianSensing, SpectralInitWarning

# Constants (METHODS, INITS, SUCCESS_TOL, SDP_SUCCESS_TOL, CELL_MAX_ITER) stay module-level:
# ``quadnet.sensing.recovery.SUCCESS_TOL``, not re-exported at the package top level.
__all__ = ["RecoveryResult", "recover"]

METHODS = ("gd", "lbfgs", "trust-regions")
INITS = ("spectral", "small")
#: A trial succeeds when ``||Q - Q*||_F / ||Q*||_F <= SUCCESS_TOL`` (quadnet target).
SUCCESS_TOL = 1e-6
#: Success tolerance for the SDP baseline: interior-point solutions of the rank-deficient
#: optimum are accurate to ~ sqrt(solver tolerance), 1e-7..1e-5 at d = 20 (measured).
SDP_SUCCESS_TOL = 1e-4
#: Iteration budget of one phase-transition cell (successful L-BFGS runs need 100-400).
CELL_MAX_ITER = 2000
#: Largest ``max_iter`` accepted: 10^6 gradient steps already run for minutes at moderate
#: sizes; a larger budget is a run without end, not a tolerance.
MAX_ITER_LIMIT = 10**6
#: Largest number of restarts accepted.
MAX_RESTARTS = 1000


@dataclass(frozen=True)
class RecoveryResult:
    """Outcome of :func:`recover`.

    Attributes:
        U: final factor (``d x r``, finite); ``Q`` its predictor ``U U^T``.
        converged: the stopping rule (relative gradient ``<= gtol``) was met.
        iterations: iterations of the method (steps, L-BFGS iterations, TR outer iterations).
        history: ``{"loss": [...], "grad_norm": [...], "restarts": k}``: per iteration for
            gd and lbfgs (``grad_norm`` is the relative gradient of the stopping rule); for
            trust regions ``loss`` is per cost evaluation and ``grad_norm`` only the final one
            (pymanopt 2.2 keeps no iteration log for TrustRegions).
        method, init: what ran; ``eta`` for ``"gd"``; ``message`` from the optimiser.
    """

    U: np.ndarray
    converged: bool
    iterations: int
    history: dict = field(default_factory=dict)
    method: str = ""
    init: str = ""
    eta: float | None = None
    message: str = ""

    @property
    def Q(self) -> np.ndarray:
        """``U U^*`` (``U U^T`` for a real factor)."""
        return self.U @ self.U.T.conj()


def _grad_scale(problem: GaussianSensing) -> float:
    rms = float(np.sqrt(np.mean(problem.y ** 2)))
    return 2.0 * rms ** 1.5 if rms > 0 else 1.0


def _initial_factor(problem: GaussianSensing, r: int, init, init_scale: float, rng,
                    preprocessing: str = "identity"):
    cplx = problem.field == "complex"
    if isinstance(init, str):
        if init == "spectral":
            return problem.spectral_init(r, strict=False, preprocessing=preprocessing), "spectral"
        if init == "small":
            scale = init_scale * np.sqrt(max(float(np.mean(problem.y)), 0.0) / (problem.d * r))
            if scale == 0:
                raise ValueError("init='small' needs mean(y) > 0 to set its scale")
            if cplx:   # CN(0, 1) entries: E |U_jk|^2 = 1 as in the real case
                z = rng.standard_normal(2 * problem.d * r).view(np.complex128)
                return scale / np.sqrt(2.0) * z.reshape(problem.d, r), "small"
            return scale * rng.standard_normal((problem.d, r)), "small"
        raise ValueError(f"init must be one of {INITS} or a d x r array, got {init!r}")
    return np.array(init, dtype=complex if cplx else float), "array"


def _as_vector(U: np.ndarray) -> np.ndarray:
    """The real coordinates of a factor (the float view of a complex one), as a copy."""
    U = np.ascontiguousarray(U)
    return (U.view(np.float64) if np.iscomplexobj(U) else U).reshape(-1).copy()


def _as_factor(v: np.ndarray, shape: tuple[int, int], cplx: bool) -> np.ndarray:
    v = np.ascontiguousarray(v, dtype=np.float64)
    return v.view(np.complex128).reshape(shape) if cplx else v.reshape(shape)


def _lambda_max(problem: GaussianSensing, U: np.ndarray) -> float:
    """Largest eigenvalue of the factor Hessian at ``U`` (Lanczos on ``hvp_at(U)``)."""
    cplx = np.iscomplexobj(U)
    n = U.size * (2 if cplx else 1)              # real coordinates of C^{d x r}: R^{2 d r}
    hvp = problem.hvp_at(U)
    op = scipy.sparse.linalg.LinearOperator(
        (n, n), matvec=lambda v: _as_vector(hvp(_as_factor(v, U.shape, cplx))), dtype=float)
    if n <= 3:
        dense = np.column_stack([op.matvec(e) for e in np.eye(n)])
        return float(np.linalg.eigvalsh(sym(dense))[-1])
    v0 = np.full(n, 1.0 / np.sqrt(n))
    return float(scipy.sparse.linalg.eigsh(op, k=1, which="LA", v0=v0, tol=1e-3,
                                           return_eigenvectors=False)[0])


def _spectral_quiet(problem: GaussianSensing, r: int, preprocessing: str) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SpectralInitWarning)
        return problem.spectral_init(r, strict=False, preprocessing=preprocessing)


def _step(problem: GaussianSensing, r: int, eta, preprocessing: str = "identity") -> float:
    if isinstance(eta, str):
        Us = _spectral_quiet(problem, r, preprocessing)
        if eta == "tuned":
            lam = _lambda_max(problem, Us)
            if not lam > 0:
                raise ValueError(f"eta='tuned': the Hessian at the spectral start has "
                                 f"lambda_max = {lam:g} <= 0; give eta as a number")
            return 1.0 / lam
        if eta == "prescribed":
            return prescribed_step(problem.d, float(np.linalg.norm(Us, 2) ** 2))
        raise ValueError(f"eta must be 'tuned', 'prescribed' or a positive number, got {eta!r}")
    return eta


def _diverged_msg(k: int, eta: float, what: str) -> str:
    return (f"gradient descent diverged at step {k} with eta = {eta:g}: {what}; use a smaller "
            "step size eta (e.g. eta='tuned')")


def _gd(problem, U, eta, max_iter, gtol, g0):
    """Factor gradient descent with the relative stopping rule ``||g|| / g0 <= gtol``.

    Not :func:`quadnet.dynamics.gradient_descent`: this loop records the loss and the
    relative gradient at every step from one fused value-and-gradient evaluation (that one
    records the loss only, from a second evaluation) and tests the rule before the step;
    the divergence threshold is the shared :data:`quadnet.dynamics.BLOWUP`.
    """
    hist_loss, hist_g = [], []
    converged = False
    k = 0
    for k in range(max_iter + 1):
        with np.errstate(over="ignore", invalid="ignore"):
            val, g = problem._value_and_gradient(U)
            gn = float(np.linalg.norm(g)) / g0
        if not (np.isfinite(val) and np.isfinite(gn)):
            raise DivergenceError(_diverged_msg(k, eta, "the loss or gradient overflowed"))
        hist_loss.append(val)
        hist_g.append(gn)
        if gn <= gtol:
            converged = True
            break
        if k == max_iter:
            break
        U = U - eta * g
        if np.max(np.abs(U)) > BLOWUP:
            raise DivergenceError(_diverged_msg(k + 1, eta, "the iterate exceeds 1e100"))
    return U, converged, k, {"loss": hist_loss, "grad_norm": hist_g}, ""


def _lbfgs(problem, U0, max_iter, gtol, g0, memory):
    """L-BFGS on the real coordinates of ``U`` (the float view of a complex factor: the
    gradient for ``Re tr(xi^* eta)`` is the gradient in those coordinates)."""
    shape, cplx = U0.shape, np.iscomplexobj(U0)
    last = {"x": None, "g": None}

    def fun(v):
        with np.errstate(over="ignore", invalid="ignore"):
            val, g = problem._value_and_gradient(_as_factor(v, shape, cplx))
        if not (np.isfinite(val) and np.all(np.isfinite(g))):
            return np.inf, np.zeros_like(v)
        last["x"], last["g"] = v.copy(), g
        return val, _as_vector(g)

    val0, grad0 = problem.factor_value_and_gradient(U0)
    hist = {"loss": [val0], "grad_norm": [float(np.linalg.norm(grad0)) / g0]}

    def callback(intermediate_result):
        x = intermediate_result.x
        g = last["g"] if last["x"] is not None and np.array_equal(last["x"], x) else \
            problem._value_and_gradient(_as_factor(x, shape, cplx))[1]
        hist["loss"].append(float(intermediate_result.fun))
        hist["grad_norm"].append(float(np.linalg.norm(g)) / g0)

    # L-BFGS-B stops on max_i |g_i| <= gtol_abs; our rule is on ||g||_F, which is at most
    # sqrt(d r) times larger, so iterate to the stricter gtol_abs and then test our rule.
    gtol_abs = gtol * g0 / np.sqrt(U0.size)
    res = scipy.optimize.minimize(fun, _as_vector(U0), jac=True, method="L-BFGS-B",
                                  callback=callback,
                                  options={"maxiter": max_iter, "maxcor": memory, "ftol": 0.0,
                                           "gtol": gtol_abs, "maxls": 50})
    U = _as_factor(res.x, shape, cplx)
    if not np.all(np.isfinite(U)) or np.max(np.abs(U)) > BLOWUP:
        raise DivergenceError(f"L-BFGS diverged: {res.message}")
    gn = float(np.linalg.norm(problem.factor_gradient(U))) / g0
    return U, gn <= gtol, int(res.nit), hist, str(res.message)


def _recorder(problem: GaussianSensing) -> GaussianSensing:
    """A copy of ``problem`` sharing its data (no copy of ``X``) that records every cost
    evaluation in ``costs``; of ``problem``'s own class (real or complex)."""
    base = type(problem)

    class _Recorder(base):
        def __init__(self):
            self.__dict__.update(problem.__dict__)
            self.costs: list[float] = []

        def factor_value(self, U) -> float:
            val = base.factor_value(self, U)
            self.costs.append(val)
            return val

    return _Recorder()


def _trust_regions(problem, U0, max_iter, gtol, g0):
    import pymanopt

    from quadnet.losses import pymanopt_problem
    from quadnet.geometry.manifold import PSDQuotient

    if problem.field == "complex":
        manifold = PSDQuotient(problem.d, U0.shape[1], field="complex")
    else:
        manifold = PSDQuotient(problem.d, U0.shape[1])
    rec = _recorder(problem)
    opt = pymanopt.optimizers.TrustRegions(max_iterations=max_iter, min_gradient_norm=gtol * g0,
                                           min_step_size=0.0, max_cost_evaluations=10 * max_iter,
                                           max_time=np.inf, verbosity=0)
    res = opt.run(pymanopt_problem(rec, manifold), initial_point=U0)
    U = np.asarray(res.point, dtype=complex if problem.field == "complex" else float)
    if not np.all(np.isfinite(U)) or np.max(np.abs(U)) > BLOWUP:
        raise DivergenceError(f"trust regions diverged: {res.stopping_criterion}")
    gn = float(np.linalg.norm(problem.factor_gradient(U))) / g0
    hist = {"loss": rec.costs, "grad_norm": [gn]}
    return U, gn <= gtol, int(res.iterations), hist, str(res.stopping_criterion)


def _as_init(value, name: str):
    if isinstance(value, str):
        if value not in INITS:
            raise ValueError(f"{name} must be one of {INITS} or a d x r array, got {value!r}")
        return value
    if np.iscomplexobj(value):      # for a complex problem; refused on a real one below
        return as_complex(value, name, ndim=2)
    return as_array(value, name, ndim=2)


def _as_eta(value, name: str):
    if isinstance(value, str):
        if value not in ("tuned", "prescribed"):
            raise ValueError(f"{name} must be 'tuned', 'prescribed' or a positive number, got "
                             f"{value!r}")
        return value
    return Real(0, None, closed="neither").convert(value, name, {})


def _r_and_init(args) -> None:
    d, r = args["problem"].d, args["r"]
    if r > d:
        return f"r must satisfy 1 <= r <= d, got r = {r} > d = {d}"
    init, cplx = args["init"], args["problem"].field == "complex"
    if not isinstance(init, str):
        if np.iscomplexobj(init) and not cplx:
            raise TypeError("init is a complex array but the problem is real (field='real'); "
                            "give a real d x r start")
        args["init"] = (as_complex_factor(init, "init", d=d, r=r, full_rank=True) if cplx
                        else as_factor(init, "init", d=d, r=r))
    if args["eta"] == "prescribed" and cplx:
        return ("eta='prescribed' is the step of the real guarantee chain (quadnet theory §4); "
                "for a complex problem give eta='tuned' or a number")
    return None


_RECOVER = {
    "problem": Instance(GaussianSensing, "a GaussianSensing instance"),
    "r": Integer(1),
    "method": Options(*METHODS),
    "init": Converted(_as_init, "'spectral', 'small' or a finite full-rank d x r array",
                      bad=[("unknown", "nope"), ("None", None), ("1-d", np.ones(3)),
                           ("nan", np.full((4, 2), np.nan))]),
    "eta": Converted(_as_eta, "'tuned', 'prescribed' or a finite real number > 0",
                     bad=[("unknown", "nope"), ("None", None), ("zero", 0.0), ("nan", np.nan),
                          ("inf", np.inf), ("complex", 1j)]),
    "max_iter": Optional(Integer(1, MAX_ITER_LIMIT)),
    "gtol": Real(0, None, closed="neither"),
    "init_scale": Real(0, None, closed="neither"),
    "seed": Seed(),
    "lbfgs_memory": Integer(1, 1000),
    "restarts": Integer(0, MAX_RESTARTS),
    "restart_tol": Real(0),
    "reduce_rank": Boolean(),
    "rank_gap": Real(1, None, closed="neither"),
    "preprocessing": Options(*PREPROCESSINGS),
}


@validate_params(_RECOVER, relations=[Relation(("r", "init", "eta"), _r_and_init,
                                               "``r <= d``; an ``init`` array is ``d x r`` of "
                                               "full column rank")])
def recover(problem: GaussianSensing, r: int, method: str = "lbfgs", init="spectral", *,
            eta="tuned", max_iter: int | None = None, gtol: float = 1e-13,
            init_scale: float = 1e-3, seed=None, lbfgs_memory: int = 20, restarts: int = 0,
            restart_tol: float = 1e-20, reduce_rank: bool = False,
            rank_gap: float = 10.0, preprocessing: str = "identity") -> RecoveryResult:
    """Minimise the sensing loss over ``d x r`` factors (module docstring).

    Args:
        problem: a :class:`GaussianSensing` instance.
        r: rank of the factor, ``1 <= r <= d``.
        method: ``"gd"``, ``"lbfgs"`` or ``"trust-regions"``.
        init: ``"spectral"``, ``"small"`` or a ``d x r`` full-rank array. A spectral start
            with fewer than ``r`` positive eigenvalues is padded with a
            :class:`SpectralInitWarning` (see :meth:`GaussianSensing.spectral_init`).
        eta: step of ``"gd"``: ``"tuned"``, ``"prescribed"`` or a positive number.
        max_iter: iteration budget (default 20000 for gd, 5000 for lbfgs, 500 for
            trust regions; at most ``MAX_ITER_LIMIT = 10**6``).
        gtol: stopping tolerance on ``||grad L||_F / (2 rms(y)^{3/2})``.
        init_scale: relative scale of ``init="small"``.
        seed: seed or Generator for ``init="small"``.
        lbfgs_memory: number of L-BFGS correction pairs.
        restarts: at most this many restarts from a fresh ``"small"`` start while the
            relative loss ``L(U) / L(0)`` exceeds ``restart_tol`` (a non-interpolating
            stationary point: noiseless data only); the lowest-loss run is returned and
            ``history["restarts"]`` says how many were used, ``iterations`` counts all runs.
        reduce_rank: over-parameterised widths (``r`` above the rank of ``Q*``). Near a
            minimiser of rank ``k < r`` the ``r - k`` idle columns are flat directions of the
            effective Hessian (structural zeros, :func:`quadnet.curvature.boundary_spectrum`),
            along which every method converges only algebraically (``~1/t`` for the flow,
            docs/overparam.md). With ``reduce_rank=True`` the factor found at width ``r`` is
            cut at its largest singular-value gap ``sigma_k / sigma_{k+1} >= rank_gap`` (the
            rank staircase, read from the data; ``Q*`` is not used) and the same method is
            continued on the ``d x k`` factor ``W_k diag(sigma_k)``, where the minimiser is
            non-degenerate and convergence is linear; the result is padded back to ``d x r``
            with zero columns. ``history["rank"]`` is ``k`` (``r`` when no gap was found) and
            ``history["width_run"]`` summarises the width-``r`` run
            (its final loss and singular values).
        rank_gap: the smallest singular-value ratio accepted as a rank gap (``> 1``).
        preprocessing: the weights of the spectral start (``init="spectral"`` and the
            ``eta`` rules): ``"identity"`` or, for a complex problem with ``m > d``,
            ``"optimal"`` (Luo, Alghamdi & Lu 2019; :func:`quadnet.sensing.spectral_init`).

    A complex problem (``GaussianSensing.random(..., field="complex")``; phase retrieval for
    ``r = 1``) runs every method on complex factors: gd and lbfgs on the real coordinates of
    ``C^{d x r}`` (the float view; gradients for ``Re tr(xi^* eta)``), trust regions on
    ``PSDQuotient(d, r, field="complex")``; ``init="small"`` draws ``CN(0, 1)`` entries. The
    returned ``Q`` is ``U U^*``.

    Raises:
        DivergenceError: the iterates became non-finite or exceeded ``1e100`` (message names
            the step ``eta``).

    Examples
    --------
    Width ``r = d = 8`` for a rank-2 target (over-parameterised), small start:

    >>> import numpy as np
    >>> from quadnet import GaussianSensing
    >>> from quadnet.sensing.gaussian import relative_error
    >>> p = GaussianSensing.random(8, 2, 64, seed=0)
    >>> out = recover(p, 8, init="small", init_scale=1e-6, seed=0, max_iter=400,
    ...               reduce_rank=True)
    >>> out.history["rank"], bool(relative_error(out.Q, p.U_star @ p.U_star.T) < 1e-10)
    (2, True)
    """
    with threads_for(problem):
        return _recover(problem, r, method, init, eta, max_iter, gtol, init_scale, seed,
                        lbfgs_memory, restarts, restart_tol, reduce_rank, rank_gap,
                        preprocessing)


def _recover(problem, r, method, init, eta, max_iter, gtol, init_scale, seed, lbfgs_memory,
             restarts, restart_tol, reduce_rank, rank_gap, preprocessing) -> RecoveryResult:
    """The body of :func:`recover` (arguments checked there)."""
    default_iter = {"gd": 20000, "lbfgs": 5000, "trust-regions": 500}[method]
    max_iter = default_iter if max_iter is None else max_iter
    rng = to_rng(seed)   # a Generator also when called nested (table skipped)
    U0, init_name = _initial_factor(problem, r, init, init_scale, rng, preprocessing)
    g0 = _grad_scale(problem)
    step = _step(problem, r, eta, preprocessing) if method == "gd" else None
    loss0 = float(problem.y @ problem.y) / (2 * problem.m)  # L(0)
    best, total_it, used = None, 0, 0

    def solve(start):
        if method == "gd":
            return _gd(problem, start, step, max_iter, gtol, g0)
        if method == "lbfgs":
            return _lbfgs(problem, start, max_iter, gtol, g0, lbfgs_memory)
        return _trust_regions(problem, start, max_iter, gtol, g0)

    while True:
        run = solve(U0)
        total_it += run[2]
        rel_loss = problem.factor_value(run[0]) / loss0 if loss0 > 0 else 0.0
        if best is None or rel_loss < best[0]:
            best = (rel_loss, run)
        if rel_loss <= restart_tol or used == restarts:
            break
        used += 1
        U0, _ = _initial_factor(problem, r, "small", init_scale, rng)
    U, conv, _, hist, msg = best[1]
    hist = dict(hist, restarts=used, rank=r)
    if reduce_rank and r > 1:
        W, sv, _ = np.linalg.svd(U, full_matrices=False)
        ratios = sv[:-1] / np.maximum(sv[1:], np.finfo(float).tiny)
        k = int(np.argmax(ratios)) + 1
        hist["width_run"] = {"loss": float(problem.factor_value(U)),
                             "singular_values": sv.tolist(), "iterations": int(total_it)}
        if sv[0] > 0 and ratios[k - 1] >= rank_gap:
            Uk = W[:, :k] * sv[:k]
            run = solve(Uk)
            total_it += run[2]
            U = np.zeros_like(U)
            U[:, :k] = run[0]
            conv, msg = run[1], run[4]
            hist = dict(hist, rank=k, loss=hist["loss"] + run[3]["loss"],
                        grad_norm=hist["grad_norm"] + run[3]["grad_norm"])
    return RecoveryResult(U=U, converged=bool(conv), iterations=int(total_it), history=hist,
                          method=method, init=init_name, eta=step, message=msg)
