"""The built-in sweeps of ``quadnet sweep`` and their cell functions (see ``quadnet.harness.sweeps``).

* ``quotient-gd``: factor gradient descent on ``1/2 ||U U^T - T||_F^2`` (foundation API only);
* ``recovery``: the Gaussian sensing phase transition (:mod:`quadnet.sensing.recovery`);
* ``selection``: the small-initialisation selection law in the commuting case
  (:mod:`quadnet.commuting`);
* ``beyond-limits``, ``beyond-joint``, ``beyond-commutator``: the experiments (a), (d) and (c)
  of the ``beyond`` check (:mod:`quadnet.commuting.greedy`, ``quadnet.commuting.experiments``);
* ``grokking``, ``parity``: the recursive-feature-machine fits of the heavy checks of the same
  names (:mod:`quadnet.features.rfm`).

The cell functions import their feature modules lazily, so a missing module makes only its
sweep unavailable.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from quadnet._validation import (R_LE_D, Integer, Optional, Options, Real, Relation, as_int,
                                 as_positive, memory_guard, validate_params)
from quadnet.commuting.algebra import random_commuting_instance
from quadnet.commuting.bregman import bregman_projection, min_trace_solution
from quadnet.exceptions import DivergenceError, SpectralInitWarning
from quadnet.geometry import horizontal_dimension
from quadnet.harness.sweeps import Scalar, Sweep, register_sweep
from quadnet.sensing.gaussian import GaussianSensing, relative_error
from quadnet.sensing.recovery import CELL_MAX_ITER, SDP_SUCCESS_TOL, SUCCESS_TOL, recover

__all__ = [
    "MAX_ETA_SCALE",
    "MAX_LOG_INV_EPS",
    "phase_transition_cell",
    "quotient_gd_cell",
    "recovery_sweep_cell",
    "selection_cell",
    "selection_sweep_cell",
]


#: Largest ``eta_scale`` of :func:`quotient_gd_cell`. Gradient descent with
#: ``eta = eta_scale / ||T||_2`` already diverges from ``eta_scale = 1.5`` (every start tried,
#: d = 3 to 30), so larger values only measure a divergence; far beyond, ``eta`` itself is
#: absurd (``eta_scale = 1e300`` overflows the first step).
MAX_ETA_SCALE = 10.0


def _quotient_gd_bytes(args) -> float:
    # T = U* U*^T, the residual U U^T - T and the SVD of T (for ||T||_2): a few d x d arrays
    d, r = args["d"], args["r"]
    return 8.0 * (5.0 * d * d + 6.0 * d * r)


@validate_params({"d": Integer(1), "r": Integer(1),
                  "eta_scale": Real(0, MAX_ETA_SCALE, closed="right"), "trial": Integer(0),
                  "steps": Integer(1), "seed": Integer(0)},
                 relations=[R_LE_D,
                            memory_guard(("d", "r"), _quotient_gd_bytes,
                                         "the target T and the iterates (d x d float64)")])
def quotient_gd_cell(d: int, r: int, eta_scale: float, trial: int, steps: int,
                     seed: int) -> dict[str, Scalar]:
    """Factor gradient descent on ``L(U) = 1/2 ||U U^T - T||_F^2``, ``T = U* U*^T`` (quadnet theory §2).

    ``U*`` and the start ``U_0`` are Gaussian ``d x r`` (``U_0`` scaled by 1/2) drawn from
    ``seed``; the step is ``eta = eta_scale / ||T||_2`` with ``eta_scale <= MAX_ETA_SCALE``.
    Returns the final loss, the quotient distance ``min_R ||U R - U*||_F`` relative to
    ``||U*||_F`` after ``steps`` steps, and whether the iteration diverged (then the loss and
    distance are ``nan`` and ``diverged`` is true). ``trial`` only labels the cell (the seed
    already differs between trials).
    """
    from quadnet.dynamics import gradient_descent
    from quadnet.geometry.manifold import PSDQuotient
    from quadnet.losses import FrobeniusLoss

    rng = np.random.default_rng(seed)
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


#: The memory guard of the sensing instance a cell draws (that of ``GaussianSensing.random``,
#: whose own checks a validated cell skips).
_SENSING_MEMORY = GaussianSensing.random.__quadnet_relations__[1]
#: The starts and methods of a sensing cell: those of :func:`recover` (a cell stores scalars, so
#: no start array) and the convex baseline ``"sdp"``, which takes no start (``init="-"`` in the
#: rows of ``verify recovery``).
_INIT = Options("spectral", "small", "-")
_METHOD = Options(*recover.__quadnet_constraints__["method"].choices, "sdp")
_SIZES = {"d": Integer(1), "r": Integer(1)}


@validate_params(_SIZES | {"m": Integer(1), "trial": Integer(0), "init": _INIT,
                           "method": _METHOD, "seed": Integer(0),
                           "restarts": recover.__quadnet_constraints__["restarts"]},
                 relations=[R_LE_D, _SENSING_MEMORY])
def phase_transition_cell(d: int, r: int, m: int, trial: int, init: str = "spectral",
                          method: str = "lbfgs", seed: int = 0, *, restarts: int = 0) -> dict:
    """One trial of the phase-transition sweep; a pure function of its arguments.

    The instance is ``GaussianSensing.random(d, r, m, seed=[seed, d, r, m, trial])`` (so all
    inits and methods of a trial see the same data); the ``"small"`` start draws from
    ``[seed, d, r, m, trial, 1]``. ``method`` may also be ``"sdp"`` (the convex baseline of
    :mod:`quadnet.sensing.baselines`; ``init`` ignored, ``"-"`` by convention; needs cvxpy). ``restarts`` is passed to
    :func:`recover` (restarts from small random starts while the loss is not interpolating).

    Returns a JSON-able dict: the arguments, ``n_h``, ``success`` (relative error
    ``<= success_tol``: ``quadnet.sensing.recovery.SUCCESS_TOL``, or ``quadnet.sensing.recovery.SDP_SUCCESS_TOL`` for ``"sdp"``),
    ``rel_error`` (``inf`` when diverged or the solver failed), ``iterations``,
    ``converged``, ``diverged``, ``success_tol`` and ``kappa = sigma_1(Q*) / sigma_r(Q*)``.
    Budget: ``CELL_MAX_ITER`` iterations per run.
    """
    prob = GaussianSensing.random(d, r, m, seed=[seed, d, r, m, trial])
    out = {"d": d, "r": r, "m": m, "trial": trial, "init": init, "method": method, "seed": seed,
           "restarts": restarts, "n_h": horizontal_dimension(d, r)}
    diverged, tol = False, SUCCESS_TOL
    if method == "sdp":
        from quadnet.sensing.baselines import trace_min_sdp

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # cvxpy "may be inaccurate"
            try:
                sol = trace_min_sdp(prob)
                Q, iterations, converged = sol.Q, sol.iterations, sol.converged
            except ValueError:  # solver failure: counted as a failed trial
                Q, iterations, converged = None, 0, False
        tol = SDP_SUCCESS_TOL
    else:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SpectralInitWarning)
                res = recover(prob, r, method=method, init=init, seed=[seed, d, r, m, trial, 1],
                              restarts=restarts, max_iter=CELL_MAX_ITER)
            Q, iterations, converged = res.Q, res.iterations, res.converged
        except DivergenceError:
            Q, iterations, converged, diverged = None, 0, False, True
    err = float("inf") if Q is None else relative_error(Q, prob.Q_star)
    out.update(success=bool(err <= tol), rel_error=err, iterations=int(iterations),
               converged=bool(converged), diverged=diverged, success_tol=tol,
               kappa=float(np.linalg.cond(prob.U_star) ** 2))
    return out


def _entropy(q: np.ndarray, w: np.ndarray) -> float:
    """``H(q) = sum q log(q/w) - q`` (``0 log 0 = 0``)."""
    pos = q > 0
    return float(np.sum(q[pos] * np.log(q[pos] / w[pos])) - q.sum())


#: Largest ``log_inv_eps = log(1/eps)`` of the selection cells. The start enters the Bregman
#: projection as ``log q0 = log w - log_inv_eps``, and its dual variables cancel that offset
#: only to its rounding ``2.2e-16 * log_inv_eps``: the distance to the minimum-trace solution
#: is ~1e-10 at 1e6 and ~1e-8 at 1e8 (three instances, d = 24, m = 6), and Newton no longer
#: converges at 1e10. 1e6 (``eps = exp(-1e6)``) is far past the sweeps' 2**12.
MAX_LOG_INV_EPS = 1e6

_INSTANCE = random_commuting_instance.__quadnet_constraints__
_SELECTION = {"d": _INSTANCE["d"], "m": _INSTANCE["m"],
              "log_inv_eps": Real(0, MAX_LOG_INV_EPS, closed="right")}


def _one_eps(args) -> str | None:
    if (args["eps"] is None) == (args["log_inv_eps"] is None):
        return "give exactly one of eps or log_inv_eps"
    return None


@validate_params({"eps": Optional(Real(0, 1, closed="neither")), "instance_seed": Integer(0)}
                 | _SELECTION | {"log_inv_eps": Optional(_SELECTION["log_inv_eps"])},
                 relations=[Relation(("eps", "log_inv_eps"), _one_eps,
                                     "exactly one of ``eps`` and ``log_inv_eps``",
                                     error=TypeError),
                            *random_commuting_instance.__quadnet_relations__])
def selection_cell(eps: float | None, instance_seed: int, *, d: int = 24, m: int = 6,
                   log_inv_eps: float | None = None) -> dict:
    r"""One cell of the small-initialisation sweep (quadnet theory §5): a pure function.

    On :func:`random_commuting_instance` ``(instance_seed, d, m)`` computes the flow's limit from
    ``q0 = eps * 1`` (the Bregman projection, start passed in log form, so ``log_inv_eps`` may
    go beyond ``eps = 1e-308``) and compares it with :func:`quadnet.min_trace_solution`.

    Returns a dict of floats: ``log_inv_eps``, ``trace``, ``min_trace``, ``trace_gap``
    (``tr q_eps - tr q_mt``), ``dist`` (``||q_eps - q_mt|| / ||q_mt||``), ``entropy_bound``
    (``(H(q_mt) - H(q_eps)) / log(1/eps)``, which bounds ``trace_gap`` because
    ``D(q, eps 1) = H(q) + log(1/eps) tr q + const``), ``kkt_residual``, ``iterations``.
    """
    L = float(-np.log(eps)) if eps is not None else log_inv_eps
    inst = random_commuting_instance(instance_seed, d, m)
    A, y, w = inst["spectra"], inst["y"], inst["w"]
    br = bregman_projection(A, y, log_q0=np.log(w) - L)
    mt = min_trace_solution(A, y, weights=w)
    q, qm = br.q, mt.q
    return {"eps": float(np.exp(-L)), "log_inv_eps": L, "instance_seed": int(instance_seed),
            "d": d, "m": m, "trace": float(q.sum()), "min_trace": mt.trace,
            "trace_gap": float(q.sum() - mt.trace),
            "dist": float(np.linalg.norm(q - qm) / np.linalg.norm(qm)),
            "entropy_bound": float((_entropy(qm, w) - _entropy(q, w)) / L),
            "kkt_residual": br.kkt_residual, "iterations": br.iterations,
            "face_dimension": mt.face_dimension,
            "min_reduced_cost": mt.info["min_reduced_cost_off_face"]}


register_sweep(Sweep(
    name="quotient-gd",
    description="factor gradient descent on 1/2||UU^T - T||_F^2 vs step size (foundation API)",
    cell="quadnet.harness.cells:quotient_gd_cell",
    quick={"d": (3, 5), "r": (1, 2), "eta_scale": (0.1, 0.3), "trial": (0, 1, 2),
           "steps": (500,)},
    full={"d": (3, 5, 8, 12), "r": (1, 2, 3), "eta_scale": (0.05, 0.1, 0.2, 0.3, 0.4, 0.5),
          "trial": tuple(range(10)), "steps": (3000,)},
    results=("eta", "final_loss", "rel_dist", "diverged"),
    seed_keys=("d", "r", "trial"),
))


@validate_params(_SIZES | {"ratio": Real(0, None, closed="neither"), "trial": Integer(0),
                           "init": _INIT, "method": _METHOD, "seed": Integer(0)},
                 relations=[R_LE_D])
def recovery_sweep_cell(d: int, r: int, ratio: float, trial: int, init: str, method: str,
                  seed: int) -> dict[str, Scalar]:
    """One trial of the sensing phase transition (quadnet theory §4) with ``m = round(ratio n_h)``
    measurements, ``n_h = dr - r(r-1)/2``: :func:`phase_transition_cell`
    (imported here, lazily). The instance depends on ``(seed, d, r, m, trial)`` only, so every
    init and method of a trial sees the same data."""
    n_h = horizontal_dimension(d, r)
    m = max(1, round(ratio * n_h))
    _SENSING_MEMORY({"d": d, "r": r, "m": m})   # the nested cell skips its checks
    out = phase_transition_cell(d, r, m, trial, init=init, method=method, seed=seed)
    return {"m": m, **{k: out[k] for k in _RECOVERY_RESULTS[1:]}}


_RECOVERY_RESULTS = ("m", "n_h", "success", "rel_error", "iterations", "converged", "diverged")


@validate_params({"instance": Integer(0)} | _SELECTION | {"instance_seed": Integer(0)},
                 relations=random_commuting_instance.__quadnet_relations__)
def selection_sweep_cell(instance: int, log_inv_eps: float, d: int, m: int,
                         instance_seed: int) -> dict[str, Scalar]:
    """One cell of the small-initialisation selection sweep (quadnet theory §5): the flow's limit
    from ``q0 = eps 1``, ``eps = exp(-log_inv_eps)``, against the minimum-trace interpolant, by
    :func:`selection_cell` (imported here, lazily). ``instance`` labels the
    random instance; its seed ``instance_seed`` is the cell seed (shared by all ``eps``)."""
    out = selection_cell(None, instance_seed, d=d, m=m, log_inv_eps=log_inv_eps)
    return {k: out[k] for k in _SELECTION_RESULTS}


_SELECTION_RESULTS = ("eps", "trace", "min_trace", "trace_gap", "dist", "entropy_bound",
                      "kkt_residual", "iterations", "face_dimension")

register_sweep(Sweep(
    name="recovery",
    description="Gaussian rank-one sensing phase transition: success vs m / n_h",
    cell="quadnet.harness.cells:recovery_sweep_cell",
    quick={"d": (8,), "r": (1, 2), "ratio": (1.0, 1.5, 2.0, 2.5, 3.0, 4.0),
           "trial": tuple(range(5)), "init": ("spectral",), "method": ("lbfgs",)},
    full={"d": (10, 20), "r": (1, 2, 3),
          "ratio": (0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0, 3.5, 4.0),
          "trial": tuple(range(20)), "init": ("spectral", "small"), "method": ("lbfgs",)},
    results=_RECOVERY_RESULTS,
    requires=("quadnet.sensing.recovery",),
    seed_keys=(),  # one master seed: the instance is drawn from (seed, d, r, m, trial)
))

register_sweep(Sweep(
    name="selection",
    description="commuting case: limit from eps*I vs the minimum-trace interpolant as eps -> 0",
    cell="quadnet.harness.cells:selection_sweep_cell",
    quick={"instance": (0, 1, 2, 3), "log_inv_eps": (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0),
           "d": (24,), "m": (6,)},
    full={"instance": tuple(range(20)),
          "log_inv_eps": tuple(float(2.0 ** k) for k in range(13)), "d": (24,), "m": (6,)},
    results=_SELECTION_RESULTS,
    seed_keys=("instance",),
    seed_arg="instance_seed",
    requires=("quadnet.commuting.algebra",),
))


# ----------------------------------------------------- beyond the commuting laws (verify beyond)
def beyond_limit_cell(kind: str, instance: int, log10_inv_eps: float,
                      instance_seed: int) -> dict[str, Scalar]:
    r"""One ``(instance, eps)`` cell of experiment (a) of ``quadnet verify beyond``: a pure function.

    The instance is :func:`quadnet.commuting.experiments.gaussian_symmetric_instance`
    ``(instance_seed)`` (``kind="gaussian"``: ``d = 5``, ``m = 6``, planted rank 1) or rank-one
    sensing ``GaussianSensing.random(5, 1, 6, seed=[instance_seed, 11])`` (``kind="rankone"``,
    its ``O(m d r)`` factor gradient). Computes GLRL (Li, Luo & Lyu, ICLR 2021) and the factor
    flow limit from ``sqrt(eps) I``, ``eps = 10^-log10_inv_eps`` (each flow capped at
    ``5e3 / ||S_0||_2`` time units), and returns their relative distance, the traces, the flow's
    convergence status and the GLRL exponent ``prod_k (1 - mu_2/mu_1)``. ``instance`` labels
    the instance; ``instance_seed`` (the cell seed) is shared by all ``eps`` of an instance.
    """
    import warnings as _w

    from quadnet.commuting.experiments import gaussian_symmetric_instance
    from quadnet.commuting.greedy import greedy_low_rank_learning, small_init_limit
    from quadnet.exceptions import ConvergenceWarning

    if kind not in ("gaussian", "rankone"):
        raise ValueError(f"kind must be 'gaussian' or 'rankone', got {kind!r}")
    seed = as_int(instance_seed, "instance_seed", minimum=0)
    L10 = as_positive(log10_inv_eps, "log10_inv_eps")
    loss = (gaussian_symmetric_instance(seed) if kind == "gaussian"
            else GaussianSensing.random(5, 1, 6, seed=[seed, 11]))
    scale = float(np.linalg.norm(loss.gradient(np.zeros((5, 5))), 2))
    with _w.catch_warnings():
        _w.simplefilter("ignore", ConvergenceWarning)
        g = greedy_low_rank_learning(loss, 5, eps=1e-14, max_stage_time=5e3 / scale)
        res = small_init_limit(loss, 5, 10.0 ** (-L10), max_time=5e3 / scale)
    dist = float(np.linalg.norm(res.Q - g.Q) / np.linalg.norm(g.Q))
    return {"eps": 10.0 ** (-L10), "dist_glrl": dist, "trace": float(np.trace(res.Q)),
            "glrl_trace": float(np.trace(g.Q)), "glrl_rank": g.rank,
            "alpha_glrl": g.predicted_exponent, "status": res.report.status,
            "loss_rel": res.report.loss_rel}


def beyond_joint_cell(instance: int, eta_scale: float, log_inv_eps: float,
                      instance_seed: int) -> dict[str, Scalar]:
    r"""One ``(eta, eps)`` cell of the commuting joint limit (experiment (d) of ``verify beyond``):
    :func:`quadnet.commuting.experiments.joint_limit` on ``random_commuting_instance``
    ``(instance_seed, 24, 6)``; ``instance`` labels the instance (its seed is the cell seed)."""
    from quadnet.commuting.experiments import joint_limit

    out = joint_limit(eta_scale, log_inv_eps, as_int(instance_seed, "instance_seed", minimum=0))
    return {k: out[k] for k in _BEYOND_JOINT_RESULTS}


_BEYOND_JOINT_RESULTS = ("eta", "dist_min_trace", "identity_error", "dist_weighted_lp",
                         "lp_vs_min_trace", "steps", "converged")


def beyond_commutator_cell(path: int, t: float, instance_seed: int) -> dict[str, Scalar]:
    r"""One point ``t`` of the commuting -> non-commuting path (experiment (c) of ``verify
    beyond``): :func:`quadnet.commuting.experiments.commutator_path` ``(instance_seed, [0, t])``
    (the ``t = 0`` point is the warm start of the von Neumann projection); ``path`` labels it."""
    from quadnet.commuting.experiments import commutator_path

    t = as_positive(t, "t", allow_zero=True)
    row = commutator_path(as_int(instance_seed, "instance_seed", minimum=0), [0.0, t])["rows"][-1]
    return {k: row[k] for k in ("commutator", "deviation", "trace_flow", "trace_vn", "status")}


def _beyond_sweep(name: str, cell: str, requires: str, **fields) -> None:
    """Register a sweep of the ``beyond`` check: its cells take the instance seed as
    ``instance_seed`` and need the module ``requires``."""
    register_sweep(Sweep(name=name, cell=f"quadnet.harness.cells:{cell}",
                         seed_arg="instance_seed", requires=(requires,), **fields))


_beyond_sweep(
    "beyond-limits", "beyond_limit_cell", "quadnet.commuting.greedy",
    description="non-commuting sensing: small-initialisation flow limit vs GLRL as eps -> 0",
    quick={"kind": ("gaussian",), "instance": (0, 1), "log10_inv_eps": (3.0, 12.0, 30.0)},
    full={"kind": ("gaussian", "rankone"), "instance": tuple(range(10)),
          "log10_inv_eps": (3.0, 6.0, 9.0, 12.0, 16.0, 20.0, 25.0, 30.0)},
    results=("eps", "dist_glrl", "trace", "glrl_trace", "glrl_rank", "alpha_glrl", "status",
             "loss_rel"),
    seed_keys=("kind", "instance"),
)

_beyond_sweep(
    "beyond-joint", "beyond_joint_cell", "quadnet.commuting.experiments",
    description="commuting case: factor descent at fixed eta as eps -> 0 (joint limit)",
    quick={"instance": (0,), "eta_scale": (0.1, 0.4), "log_inv_eps": (8.0, 32.0, 128.0)},
    full={"instance": (0, 1, 2), "eta_scale": (0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6),
          "log_inv_eps": (4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0)},
    results=_BEYOND_JOINT_RESULTS,
    seed_keys=("instance",),
)

_beyond_sweep(
    "beyond-commutator", "beyond_commutator_cell", "quadnet.commuting.experiments",
    description="rotate one commuting measurement: deviation from the Bregman law vs commutator",
    quick={"path": (0,), "t": (1e-4, 1e-3, 1e-2)},
    full={"path": (0, 1, 2), "t": (1e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1)},
    results=("commutator", "deviation", "trace_flow", "trace_vn", "status"),
    seed_keys=("path",),
)


# ----------------------------------------------- recursive feature machines (verify grokking/parity)
_GROKKING_RESULTS = ("reach", "iterations", "stopped_early", "n_train", "n_test", "final_wrong",
                     "min_wrong", "final_train_acc", "circulant", "group_circulant",
                     "coupled_frequencies", "fourier_neff", "top_frequencies", "wrong_curve")


def grokking_cell(op: str, p: int, frac: float, method: str, trial: int, iters: int,
                  seed: int) -> dict[str, Scalar]:
    r"""One RFM run on ``a ∘ b mod p`` (quadnet theory §6), stopped early once it has grokked.

    The split is :func:`quadnet.features.rfm.modular_arithmetic` ``(p, op, frac, seed=seed)``
    (``trial`` only labels it: the seed differs between trials and is shared by the methods);
    the recipe is ``quadnet.harness.recipes.METHODS[method]`` (``"fact"``: FACT-RFM of
    Boix-Adsera et al. (2025); ``"nfa"``: NFA-RFM of Radhakrishnan et al. (2024)) merged with
    ``SOLVER_CFG``. The run stops at the horizon ``iters`` or as soon as the last ``STAY + 1``
    iterates have 100% test accuracy (``stopped_early``). ``reach`` is the reach-and-stay
    iteration of the ``rfm`` check (:func:`quadnet.harness.recipes.reach_and_stay`) on the run:
    the first of those ``STAY + 1`` iterates, also when they end exactly at the horizon
    (``-1``: not reached).

    Returns ``iterations`` (last ``t`` fitted), ``n_train``/``n_test``, ``final_wrong`` and
    ``min_wrong`` (wrong test points at the end / at the best iterate), ``final_train_acc``,
    ``circulant`` (:func:`~quadnet.features.rfm.block_circulant_score` of the final ``M``),
    ``group_circulant`` (:func:`~quadnet.features.fourier.group_circulant_score`, the same in the
    order in which ``op`` is a cyclic group), from the operand coupling ``λ_ω``
    (:func:`~quadnet.features.fourier.fourier_spectrum`, ``ω = 1 … ⌊m/2⌋``):
    ``coupled_frequencies`` (how many have ``λ_ω ≥ max λ / 2``), ``fourier_neff`` (``exp`` of the
    entropy of the normalised ``λ_ω``: the effective number of coupled frequencies) and
    ``top_frequencies`` (the four largest, as text) and ``wrong_curve`` (wrong test
    points at every iteration, as text).
    """
    from quadnet.features.fourier import fourier_spectrum, group_circulant_score
    from quadnet.features.rfm import RecursiveFeatureMachine, block_circulant_score, \
        modular_arithmetic
    from quadnet.harness.recipes import METHODS, SOLVER_CFG, STAY, reach_and_stay

    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    p = as_int(p, "p", minimum=2)
    iters = as_int(iters, "iters", minimum=1)
    as_int(trial, "trial", minimum=0)
    data = modular_arithmetic(p, op, frac, seed=as_int(seed, "seed", minimum=0))

    def grokked(t, hist):
        acc = hist["val_acc"]
        return len(acc) > STAY and all(a == 1.0 for a in acc[-STAY - 1:])

    m = RecursiveFeatureMachine(iters=iters, block_size=0, **{**METHODS[method], **SOLVER_CFG})
    m.fit(data.X_train, data.y_train, data.X_test, data.y_test, callback=grokked)
    acc = m.history_["val_acc"]
    n_test = len(data.y_test)
    wrong = [round((1 - a) * n_test) for a in acc]
    stopped = m.n_iter_ < iters
    reach = reach_and_stay(acc)     # also when the last STAY + 1 iterates end at the horizon
    spec = fourier_spectrum(m.M_, p, op)[1:]
    q = spec / (spec.sum() or 1.0)
    neff = float(np.exp(-np.sum(q[q > 0] * np.log(q[q > 0])))) if spec.sum() > 0 else 0.0
    top = np.argsort(-spec, kind="stable")[:4] + 1
    return {"reach": -1 if reach is None else int(reach), "iterations": int(m.n_iter_),
            "stopped_early": bool(stopped), "n_train": int(len(data.y_train)),
            "n_test": int(n_test), "final_wrong": int(wrong[-1]), "min_wrong": int(min(wrong)),
            "final_train_acc": float(m.history_["train_acc"][-1]),
            "circulant": block_circulant_score(m.M_, p),
            "group_circulant": group_circulant_score(m.M_, p, op),
            "coupled_frequencies": int(np.sum(spec >= spec.max() / 2)) if spec.max() > 0 else 0,
            "fourier_neff": neff,
            "top_frequencies": " ".join(map(str, top.tolist())),
            "wrong_curve": " ".join(map(str, wrong))}


_PARITY_RESULTS = ("test_acc", "train_acc", "support")


def parity_cell(k: int, n: int, trial: int, method: str, ridge: float, seed: int, *,
                d: int = 50, n_test: int = 1000, iters: int = 12) -> dict[str, Scalar]:
    r"""One RFM fit on sparse parity (quadnet theory §6): ``d = 50``, support size ``k``, ``n``
    training and ``n_test`` test points from :func:`quadnet.features.rfm.sparse_parity`
    ``(d, k, n, seed=seed)`` (``trial`` only labels it; the seed is shared by the methods and
    ridges), fitted by ``iters`` updates of ``method`` (``"fact"`` or ``"nfa"``) with
    ``quadnet.harness.recipes.PARITY_CFG`` (Gaussian kernel, ``L = 7``), ``ridge`` and
    ``SOLVER_CFG``. Returns the test and training accuracy and the support (as text).
    """
    from quadnet.features.rfm import RecursiveFeatureMachine, sparse_parity
    from quadnet.harness.recipes import PARITY_CFG, SOLVER_CFG

    if method not in ("fact", "nfa"):
        raise ValueError(f"method must be 'fact' or 'nfa', got {method!r}")
    as_int(trial, "trial", minimum=0)
    data = sparse_parity(d, k, n, n_test=n_test, seed=as_int(seed, "seed", minimum=0))
    cfg = {**PARITY_CFG, "ridge": as_positive(ridge, "ridge", allow_zero=True), **SOLVER_CFG}
    m = RecursiveFeatureMachine(update=method, iters=iters, **cfg)
    m.fit(data.X_train, data.y_train)
    return {"test_acc": m.accuracy(data.X_test, data.y_test),
            "train_acc": m.accuracy(data.X_train, data.y_train),
            "support": " ".join(map(str, data.info["support"].tolist()))}


#: The moduli and training fractions of the grokking phase diagram (paper-scale grid).
GROKKING_P = (31, 37, 41, 43, 47, 53, 61, 71, 83, 97)
GROKKING_FRAC = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
#: The sparse-parity sample sizes (the grid of Boix-Adsera et al. (2025), 250 to 50,000).
PARITY_N = (250, 500, 1000, 2500, 5000, 10000, 20000, 50000)

register_sweep(Sweep(
    name="grokking",
    description="RFM on a∘b mod p: iteration of 100% test accuracy vs p, train fraction, op",
    cell="quadnet.harness.cells:grokking_cell",
    quick={"op": ("add", "sub", "mul", "div"), "p": (13, 23), "frac": (0.5, 0.75),
           "method": ("fact", "nfa"), "trial": (0,), "iters": (24,)},
    full={"op": ("add", "sub", "mul", "div"), "p": GROKKING_P, "frac": GROKKING_FRAC,
          "method": ("fact", "nfa"), "trial": (0,), "iters": (40,)},
    results=_GROKKING_RESULTS,
    seed_keys=("op", "p", "frac", "trial"),
    requires=("quadnet.features.rfm",),
))

register_sweep(Sweep(
    name="parity",
    description="RFM on sparse parity d=50: test accuracy vs n for k = 1..4, FACT and NFA",
    cell="quadnet.harness.cells:parity_cell",
    quick={"k": (1, 2, 3), "n": (250, 500, 1000, 2000), "trial": (0,),
           "method": ("fact", "nfa"), "ridge": (1e-3,)},
    full={"k": (1, 2, 3, 4), "n": PARITY_N, "trial": (0, 1), "method": ("fact", "nfa"),
          "ridge": (1e-3,)},
    results=_PARITY_RESULTS,
    seed_keys=("k", "n", "trial"),
    requires=("quadnet.features.rfm",),
))
