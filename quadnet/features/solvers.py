"""Kernel solvers for recursive feature machines: a direct Cholesky holding one ``n × n``
array, and preconditioned conjugate gradients that scale past it (quadnet theory §6).

One RFM iteration needs, at the current feature matrix ``M``, the coefficients
``A = (K + λI)⁻¹ Y`` (``n × c``), the training predictions ``K A``, the FACT matrix and (NFA)
the AGOP. The closed forms of the last two (``quadnet.features.kernels``) are sums over the
rows of the ``n × n`` matrices ``α`` and ``K``, so both solvers compute them from row blocks
recomputed on the fly (``quadnet.features.kernels.FeatureSums``), at ``O(n²d)`` per pass,
small against the solve. The three solvers:

``"direct"``
    The kernel matrix is built in place, in column blocks, in one Fortran-ordered float64
    ``n × n`` array; the ridge goes on its diagonal and a blocked Cholesky factors it in place
    (no copy; ``quadnet._lapack.cholesky_lower_inplace``: threaded ``dgemm`` updates, one-thread
    ``dpotrf`` on ``256 × 256`` blocks, so OpenBLAS's parallel ``dpotrf``, which crashes on
    some AVX-512 CPUs from ``n ≈ 16,000``, is never entered), ``dpotrs`` solves. A ridgeless
    kernel that is not numerically positive definite is rebuilt in the same array with jitter
    ``ε · mean(diag K)``, ``ε = 1e-12, 1e-10, …, 1e-4`` (with an
    :class:`~quadnet.exceptions.RFMWarning`). The
    training predictions follow from the solve itself: ``(K + λI)A = Y`` gives
    ``K A = Y − λA`` (``λ`` including any jitter). Peak memory: ``8n²`` bytes plus row-block
    temporaries of at most ``min(n²/32, 2²²)`` entries each. Cost ``n³/3`` flops.
``"iterative"``
    Preconditioned conjugate gradients (PCG) on ``(K + λI)a = y``, one independent CG per
    output column, batched so that one pass over ``K`` serves every column that has not yet
    converged. The preconditioner is the randomly pivoted Cholesky (RPCholesky) Nyström
    approximation ``K ≈ F Fᵀ`` of rank ``k`` (:func:`rpcholesky`), ``P = F Fᵀ + λI``, applied by
    the Woodbury identity ``P⁻¹v = (v − F (FᵀF + λI)⁻¹ Fᵀv) / λ`` with a Cholesky factor of the
    ``k × k`` matrix (Díaz, Epperly, Frangella, Tropp & Webber 2023, "Robust, randomized
    preconditioning for kernel ridge regression"; the same Nyström-preconditioned CG as
    Falkon, Rudi, Carratino & Rosasco 2017, with all ``n`` centres kept). Two storages:

    * ``storage="float32"``: ``K`` is held in float32 (``4n²`` bytes); each product
      ``K V`` is a float32 product per block of 1,024 rows of ``K`` (``K`` is symmetric, so a
      row block transposed is a column block), the blocks accumulated in float64. Alone, PCG
      on this ``K`` stalls at an exact float64 residual ``‖(K + λI)a − y‖/‖y‖`` of
      ``1.4–3.2·10⁻⁵`` (measured: sparse parity ``d = 50``, Gaussian ``L = 7``, ``λ = 10⁻³``,
      ``n = 3,000``, whatever the CG tolerance; the float32 rounding of ``K``, ``2⁻²⁴``
      relative per entry, times ``‖K‖‖a‖/‖y‖``). So it runs inside mixed-precision iterative
      refinement (Carson & Higham 2018): the exact residual ``R = Y − (K + λI)A`` is
      recomputed from float64 kernel rows (one ``O(n²d)`` pass), the correction
      ``(K₃₂ + λI)E = R`` is solved by PCG down to ``FLOAT32_FLOOR``, ``A ← A + E``, until
      the exact residual is ``≤ tol`` (default ``10⁻⁸``: one or two refinements). Measured
      at ``n = 2,000`` (same data): exact residual ``8·10⁻⁹``, test predictions within
      ``8·10⁻⁹`` of the float64 direct solve (``docs/rfm.md``, "Kernel solvers").
    * ``storage="recompute"``: ``K`` is never held; every product recomputes the kernel rows
      in float64 (``O(n²d)`` per product instead of ``O(n²c)``). Full float64 accuracy;
      default tolerance ``10⁻¹⁰``.

    The solve stops when every column has ``‖(K + λI)a − y‖ ≤ tol ‖y‖`` (the CG residual
    for recompute, the exact residual for float32); the exact float64 residual is then
    measured again in the feature pass and recorded in :class:`SolverInfo`. Not
    reaching ``tol`` in ``max_iter`` iterations issues a
    :class:`~quadnet.exceptions.KernelConvergenceWarning`, never a silent half-solve.
    Needs ``λ > 0``: without a ridge, ``K`` of ``n`` points is numerically singular and the
    interpolation problem is ill-posed for CG.
``"auto"``
    ``"direct"`` when its estimate fits ``memory_limit`` and ``n ≤`` :data:`DIRECT_MAX_N`
    (the measured time crossover), else ``"iterative"`` (float32 storage if it fits, else
    recompute); ``"direct"`` whenever ``λ = 0`` and it fits. A size nothing can hold raises
    :class:`~quadnet.exceptions.KernelMemoryError` before any large allocation.

Memory model (bytes, :func:`kernel_memory_estimate`): ``8n²`` (direct), ``4n²`` (float32
storage) or 0 (recompute) for ``K``; plus ``8nk`` for the RPCholesky factor, ``8 · 8 · b``
for eight row-block temporaries of ``b = min(n²/32, 2²²)`` entries, ``8n(d + 8c)`` for the
data, coefficients and CG vectors, and (AGOP) up to ``2²⁴ · 8`` for the per-point operand.
:func:`available_memory` is what the machine (and ``ulimit -v``) leaves.

Examples
--------
>>> import numpy as np
>>> from quadnet.features.rfm import sparse_parity
>>> ds = sparse_parity(10, 2, 300, n_test=10, seed=0)
>>> fit_d = fit_kernel_machine("gaussian", ds.X_train, ds.y_train, np.eye(10), 3.0,
...                            ridge=1e-3, solver="direct")
>>> fit_i = fit_kernel_machine("gaussian", ds.X_train, ds.y_train, np.eye(10), 3.0,
...                            ridge=1e-3, solver="iterative", storage="recompute")
>>> fit_i.info.converged, bool(np.allclose(fit_i.train_pred, fit_d.train_pred, atol=1e-8))
(True, True)
"""

from __future__ import annotations

import math
import numbers
import time
import warnings
from dataclasses import MISSING, dataclass, field, fields
from typing import NamedTuple

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

from quadnet._lapack import cholesky_lower_inplace
from quadnet._progress import progress_bar
from quadnet._threads import forced_single_thread
from quadnet._validation import (
    Boolean,
    Converted,
    Integer,
    Optional,
    Options,
    Real,
    Relation,
    Seed,
    available_memory,
    as_rng,
    validate_params,
)
from quadnet.exceptions import KernelConvergenceWarning, KernelMemoryError, RFMWarning
from quadnet.features.kernels import (
    ALPHA_FROM_K,
    KERNELS,
    FeatureSums,
    KernelRows,
    _table,
    alpha_from_kernel,
)

__all__ = [
    "DIRECT_MAX_N",
    "KernelFit",
    "SOLVERS",
    "SolverInfo",
    "SolverPlan",
    "available_memory",
    "choose_solver",
    "default_rank",
    "fit_kernel_machine",
    "kernel_memory_estimate",
    "kernel_predict",
    "rpcholesky",
]

#: Solver names accepted by :func:`fit_kernel_machine` and ``RecursiveFeatureMachine``.
SOLVERS = ("auto", "direct", "iterative")

#: Kernel storages of the iterative solver (``"auto"``: float32 if it fits, else recompute).
STORAGES = ("auto", "float32", "recompute")

#: Largest ``n`` for which ``solver="auto"`` picks the direct Cholesky when it fits. From
#: ``benchmarks/bench_kernel_solvers.py`` (sparse parity ``d = 50``, Gaussian ``L = 7``,
#: ``λ = 10⁻³``, 2 shared cores): one fit costs 2.4 CPU s direct against 3.9 s iterative
#: (float32, 40 CG iterations, 1 refinement) at ``n = 2,000``, and 7.4 s direct at
#: ``n = 5,000`` against 10.5 s iterative (78 CG iterations). The direct cost grows as
#: ``n³/3`` flops, the iterative one as about ``(iterations + 3) n²`` (CG passes over
#: float32 ``K`` and float64 kernel passes) with iterations growing with ``n`` at a fixed
#: rank, so they meet near ``n = 10,000`` by extrapolation from these two sizes; the larger
#: sizes were not timed on an idle machine, so re-run the benchmark before relying on the
#: exact value.
DIRECT_MAX_N = 10_000

#: Smallest default RPCholesky rank ``k`` of the iterative solver's preconditioner (capped at
#: ``n``); the default grows as ``n/16`` past ``n = 16,000`` (:func:`default_rank`).
DEFAULT_RANK = 1000


@validate_params({"n": Integer(1)}, finite_result=False)
def default_rank(n: int) -> int:
    """The default preconditioner rank at ``n`` centres: ``min(n, max(1000, n // 16))``.

    The CG iteration count falls with the rank (sparse parity ``d = 50``, ``k = 4``, Gaussian
    ``L = 7``, ``λ = 10⁻³``, ``n = 10,000``: 132 / 76 / 43 iterations at ranks 1,000 / 2,000 /
    4,000 at ``M = I``, 125 / 81 at the fifth RFM iteration), while the preconditioner's cost,
    ``O(nk²)`` flops and ``8nk`` bytes, grows with it. A CG product over float32 ``K`` costs
    ``2n²`` flops of memory-bound work, so the rank worth paying for grows with ``n``; at
    ``n/16`` the factor takes an eighth of the memory of float32 ``K``.

    Examples
    --------
    >>> default_rank(5_000), default_rank(50_000)
    (1000, 3125)
    """
    return _default_rank(int(n))


def _default_rank(n: int) -> int:
    """:func:`default_rank` on a checked ``n``."""
    return int(min(n, max(DEFAULT_RANK, n // 16)))

#: Default tolerance on the relative residual ``‖(K + λI)a − y‖/‖y‖`` per storage.
DEFAULT_TOL = {"float32": 1e-8, "recompute": 1e-10}

#: Measured floor of the exact float64 relative residual of a PCG solve with float32 ``K``
#: (sparse parity ``d = 50``, Gaussian ``L = 7``, ``λ = 10⁻³``, ``n = 3000``: ``1.4–3.2·10⁻⁵``
#: whatever the CG tolerance below it); the inner solves of the refinement stop here.
FLOAT32_FLOOR = 1e-5

#: The inner PCG solve of a refinement sweep on float32 ``K`` aims at this fraction of what the
#: exact residual needs, so that the float32 rounding of ``K`` (up to ``FLOAT32_FLOOR``
#: relative to the sweep's right-hand side) does not push the exact residual just above
#: ``tol`` and cost one more sweep (a float64 pass over ``K``). Measured at ``n = 50,000``:
#: without it, a solve to ``10⁻⁴`` stopped its PCG at ``8.6·10⁻⁵`` with an exact residual above ``10⁻⁴``
#: and needed a second sweep.
_INNER_MARGIN = 0.5

#: At most this many PCG solves (one plus refinements) in the float32 storage.
_MAX_SWEEPS = 6

#: Default iteration cap of the CG solve.
DEFAULT_MAX_ITER = 500

#: Rows of float32 ``K`` per float32 product in the float32 storage (then summed in float64).
_F32_CHUNK = 1024

#: Largest row block (entries) of any ``b × n`` temporary.
_BLOCK_MAX = 2**22

#: Elements of the per-point AGOP operand held at once (``kernels._AX_ELEMS``).
_AX_MAX = 2**24

_JITTERS = (1e-12, 1e-10, 1e-8, 1e-6, 1e-4)

#: Problems at least this large show progress when ``progress=None``.
PROGRESS_MIN_N = 10_000


# --------------------------------------------------------------------------------------------
# memory


def _block_entries(n: int) -> int:
    """Entries of one row-block temporary at ``n`` centres: ``min(n²/32, 2²²)`` (≥ ``n``)."""
    return int(max(n, min(n * n // 32, _BLOCK_MAX)))


_RIDGE_MSG = ("solver='iterative' needs ridge > 0: without a ridge the kernel matrix of n points "
              "is numerically singular and the interpolation problem is ill-posed for "
              "conjugate gradients; give ridge > 0 or use solver='direct'")


def _check_memory_limit(memory_limit, name: str = "memory_limit") -> int | None:
    """``None`` or a finite number of bytes ``> 0``, as an int."""
    if memory_limit is None:
        return None
    if isinstance(memory_limit, bool) or not isinstance(memory_limit, numbers.Real):
        raise TypeError(f"{name} must be a number of bytes or None, got "
                        f"{type(memory_limit).__name__}")
    if not math.isfinite(float(memory_limit)) or memory_limit <= 0:
        raise ValueError(f"{name} must be a finite number of bytes > 0 (or None for "
                         f"the available memory), got {memory_limit}")
    return int(memory_limit)


#: The ``memory_limit`` of the solver tables (and of ``RecursiveFeatureMachine``).
_MEMORY_LIMIT = Converted(_check_memory_limit, "None or a finite number of bytes > 0",
                         bad=(-1.0, "1GB", float("nan")))


def _iterative_needs_ridge(prefix: str = "") -> Relation:
    """The relation "``solver='iterative'`` needs ``ridge > 0``" (its message starts with
    ``prefix``)."""
    def check(a):
        return prefix + _RIDGE_MSG if a["solver"] == "iterative" and a["ridge"] == 0 else None
    return Relation(("solver", "ridge"), check, "``ridge > 0`` when ``solver='iterative'``")


_ITERATIVE_NEEDS_RIDGE = _iterative_needs_ridge()


_SIZES = {"n": Integer(1), "d": Integer(1), "c": Integer(1)}


@validate_params(_SIZES | {"solver": Options("direct", "iterative"),
                           "storage": Options("float32", "recompute"),
                           "rank": Optional(Integer(1)), "agop": Boolean()}, finite_result=False)
def kernel_memory_estimate(n: int, d: int, c: int, solver: str = "direct", *,
                           storage: str = "float32", rank: int | None = None,
                           agop: bool = False) -> int:
    """Estimated peak bytes of one RFM iteration with a given solver (quadnet theory §6).

    ``8n²`` (``"direct"``; ``16n²`` up to ``n = 2,896``, where the direct solver keeps a copy
    of ``K``), ``4n²`` (``"iterative"``, ``storage="float32"``) or 0
    (``storage="recompute"``) for the kernel matrix, plus ``8nk`` for the rank-``k``
    RPCholesky factor (iterative), ``64 b`` for eight row-block temporaries of
    ``b = min(n²/32, 2²²)`` entries, ``8n(d + 8c)`` for data, coefficients and CG vectors,
    and with ``agop`` up to ``8 min(ncd, 2²⁴)`` for the per-point AGOP operand plus its
    block ``8 · b · cd / n``. Measured against the real peaks in
    ``benchmarks/bench_kernel_solvers.py``.

    Parameters
    ----------
    n, d, c : int
        Centres, input dimension, outputs.
    solver : {"direct", "iterative"}
        Which solver.
    storage : {"float32", "recompute"}, default "float32"
        Kernel storage of the iterative solver.
    rank : int, optional
        RPCholesky rank (default :func:`default_rank`, capped at ``n``).
    agop : bool, default False
        Whether the iteration also forms the AGOP (NFA updates).

    Returns
    -------
    int
        Bytes.

    Examples
    --------
    >>> round(kernel_memory_estimate(20_000, 50, 1, "direct") / 1e9, 2)   # 8 n^2 + blocks
    3.48
    >>> kernel_memory_estimate(50_000, 50, 1, "iterative") / 1e9 < 12    # 4 n^2 + F + blocks
    True
    """
    n, d, c = int(n), int(d), int(c)
    b = _block_entries(n)
    est = 64 * b + 8 * n * (d + 8 * c)
    if agop:
        est += 8 * min(n * c * d, _AX_MAX) + 8 * (b // n + 1) * c * d
    if solver == "direct":  # K, and its kept copy for n <= 2,896 (KEEP_KERNEL_BYTES)
        return int(est + 8 * n * n * (2 if _kernel_kept(n) else 1))
    k = min(n, _default_rank(n) if rank is None else int(rank))
    return int(est + 8 * n * k + 8 * k * k + (4 * n * n if storage == "float32" else 0))


class SolverPlan(NamedTuple):
    """What :func:`choose_solver` picked: ``solver`` (``"direct"``/``"iterative"``),
    ``storage`` (``"float64"`` for direct, ``"float32"``/``"recompute"``), the ``estimate`` of
    its peak in bytes, the ``limit`` it was checked against, and the ``reason``.

    Examples
    --------
    >>> choose_solver(1000, 10, 1, ridge=1e-3, memory_limit=10**9).solver
    'direct'
    """

    solver: str
    storage: str
    estimate: int
    limit: int
    reason: str


def _gb(x: float) -> str:
    return f"{x / 1e9:.3g} GB"


@validate_params(_SIZES | {"solver": Options(*SOLVERS), "ridge": Real(0, None),
                           "memory_limit": _MEMORY_LIMIT, "storage": Options(*STORAGES),
                           "rank": Optional(Integer(1)), "agop": Boolean()},
                 relations=[_ITERATIVE_NEEDS_RIDGE], finite_result=False)
def choose_solver(n: int, d: int, c: int, *, solver: str = "auto", ridge: float = 0.0,
                  memory_limit: float | None = None, storage: str = "auto",
                  rank: int | None = None, agop: bool = False) -> SolverPlan:
    """Pick the kernel solver and storage for ``n`` centres within ``memory_limit`` bytes.

    ``"auto"``: ``"direct"`` if its estimate (:func:`kernel_memory_estimate`) fits and
    ``n ≤`` :data:`DIRECT_MAX_N` (or ``ridge = 0``, which the iterative solver cannot take);
    otherwise ``"iterative"`` with float32 storage if it fits, else with recomputed kernel
    rows; otherwise ``"direct"`` if it fits after all. ``"direct"``/``"iterative"`` are
    checked against the limit the same way.

    Parameters
    ----------
    n, d, c : int
        Centres, input dimension, outputs.
    solver : {"auto", "direct", "iterative"}
        Requested solver.
    ridge : float, default 0
        ``λ ≥ 0``; the iterative solver needs ``λ > 0``.
    memory_limit : float, optional
        Bytes (default :func:`available_memory`).
    storage : {"auto", "float32", "recompute"}
        Kernel storage of the iterative solver.
    rank : int, optional
        RPCholesky rank of the iterative solver.
    agop : bool, default False
        The iteration forms the AGOP too.

    Returns
    -------
    SolverPlan

    Raises
    ------
    KernelMemoryError
        If no allowed solver fits: the message names ``n``, the smallest estimate and the
        limit in GB.
    ValueError
        For ``solver="iterative"`` with ``ridge = 0``, or bad arguments.

    Examples
    --------
    >>> choose_solver(50_000, 50, 1, ridge=1e-3, memory_limit=16e9)[:2]
    ('iterative', 'float32')
    >>> choose_solver(5000, 50, 1, ridge=1e-3, memory_limit=10**6)    # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    quadnet.exceptions.KernelMemoryError: choose_solver: a kernel problem with n = 5000 centres ...
    """
    n, ridge, agop = int(n), float(ridge), bool(agop)
    limit = available_memory() if memory_limit is None else int(memory_limit)
    direct = kernel_memory_estimate(n, d, c, "direct", agop=agop)
    stores = ("float32", "recompute") if storage == "auto" else (storage,)
    iters = [(s, kernel_memory_estimate(n, d, c, "iterative", storage=s, rank=rank, agop=agop))
             for s in stores]
    lim = f"memory limit {_gb(limit)}"
    if solver == "direct" or (solver == "auto" and (ridge == 0 or n <= DIRECT_MAX_N)
                              and direct <= limit):
        if direct <= limit:
            why = ("requested" if solver == "direct" else
                   "ridge = 0 (the iterative solver needs a ridge)" if ridge == 0 else
                   f"n = {n} <= DIRECT_MAX_N = {DIRECT_MAX_N}")
            return SolverPlan("direct", "float64", direct, limit,
                              f"direct Cholesky, {why}; estimate {_gb(direct)} <= {lim}")
        raise KernelMemoryError(
            f"a kernel problem with n = {n} centres needs about {_gb(direct)} for the direct "
            f"solver, over the {lim}; use solver='iterative' (with ridge > 0) or raise "
            f"memory_limit", n, direct, limit)
    if ridge > 0:
        for s, est in iters:
            if est <= limit:
                return SolverPlan("iterative", s, est, limit,
                                  f"PCG with {s} kernel storage; estimate {_gb(est)} <= {lim}")
    if solver == "auto" and direct <= limit:
        return SolverPlan("direct", "float64", direct, limit,
                          f"direct Cholesky (the iterative solver does not fit); estimate "
                          f"{_gb(direct)} <= {lim}")
    alts = ", ".join(f"iterative/{s} {_gb(e)}" for s, e in iters)
    if ridge == 0:  # only the direct solver is allowed
        raise KernelMemoryError(
            f"a kernel problem with n = {n} centres needs about {_gb(direct)} for the direct "
            f"solver (the only one for ridge = 0), over the {lim}; with ridge > 0 the "
            f"iterative solver would need {alts}", n, direct, limit)
    smallest = min([est for _, est in iters] + ([direct] if solver == "auto" else []))
    raise KernelMemoryError(
        f"a kernel problem with n = {n} centres needs at least {_gb(smallest)} "
        f"(direct {_gb(direct)}, {alts}), over the {lim}", n, smallest, limit)


# --------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True)
class SolverInfo:
    """How one kernel solve went (a frozen record).

    ``solver`` and ``storage`` used; ``n``; ``iterations`` (CG iterations of the slowest
    column, 0 for direct); ``cg_residual`` (largest CG residual ``‖r‖/‖y‖`` over columns at the
    stop, ``nan`` for direct); ``residual`` (largest exact float64 relative residual
    ``‖(K + λI)a − y‖/‖y‖``, measured in the feature pass; ``nan`` for direct, exact by
    construction up to rounding); ``tol``; ``converged``; ``rank`` (RPCholesky rank);
    ``refinements`` (float32 storage: refinement sweeps after the first PCG solve); ``jitter``
    (added to ``λ`` by the direct solver, 0 if none); ``estimate`` (bytes); ``seconds``
    (solve) and ``total_seconds`` (with the feature pass); ``history`` (the largest CG
    residual after each iteration, a tuple).
    """

    solver: str
    storage: str
    n: int
    iterations: int = 0
    cg_residual: float = float("nan")
    residual: float = float("nan")
    tol: float = float("nan")
    converged: bool = True
    rank: int = 0
    refinements: int = 0
    jitter: float = 0.0
    estimate: int = 0
    seconds: float = 0.0
    total_seconds: float = 0.0
    history: tuple = field(default=(), repr=False)


class _SolveLog:
    """The fields of :class:`SolverInfo` (same names and defaults), filled one by one while a
    solve runs; :meth:`freeze` gives the record returned to the caller."""

    def __init__(self, solver: str, storage: str, n: int, **values):
        for f in fields(SolverInfo):
            if f.default is not MISSING:
                setattr(self, f.name, f.default)
        self.history: list = []
        self.solver, self.storage, self.n = solver, storage, n
        for name, value in values.items():
            setattr(self, name, value)

    def freeze(self) -> SolverInfo:
        values = {f.name: getattr(self, f.name) for f in fields(SolverInfo)}
        values["history"] = tuple(float(h) for h in self.history)
        return SolverInfo(**values)


class KernelFit(NamedTuple):
    """One kernel fit at a fixed ``M``: ``coef`` (``n × c``), ``train_pred`` (``K A``),
    ``fact`` (FACT matrix ``M B``), ``agop`` (``M Γ M`` or ``None``), ``info``
    (:class:`SolverInfo`)."""

    coef: np.ndarray
    train_pred: np.ndarray
    fact: np.ndarray
    agop: np.ndarray | None
    info: SolverInfo


# --------------------------------------------------------------------------------------------
# blocks


def _blocks(n: int, rows_per_block: int):
    for i0 in range(0, n, rows_per_block):
        yield slice(i0, min(n, i0 + rows_per_block))


def _rows_per_block(n: int, width: int | None = None, entries: int | None = None) -> int:
    """Rows of a ``b × width`` block (``width`` defaults to ``n``) of at most ``entries``
    entries (default :func:`_block_entries`; the iterative solver, which holds no ``8n²``
    array to compare with, uses the full ``2²²``: fewer, larger products)."""
    width = n if width is None else width
    entries = _block_entries(n) if entries is None else entries
    return max(1, min(n, entries // max(1, width)))


def _feature_pass(kr: KernelRows, A: np.ndarray, gamma: int, *, agop: str | None,
                  centre: bool, predictions: bool, bar, entries: int | None = None
                  ) -> FeatureSums:
    """FACT (+ AGOP per-point route, + ``K A``) from row blocks recomputed in float64."""
    n, c = A.shape
    d = kr.X.shape[1]
    sums = FeatureSums(kr.X, A, gamma, agop=agop, centre=centre, predictions=predictions)
    b = _rows_per_block(n, max(n, c * d if agop else 0), entries)
    for rows in _blocks(n, b):
        K_b, alpha_b = kr.rows(rows, want_alpha=True)
        sums.add(rows, alpha_b, K_b)
        del K_b, alpha_b
        bar.update(rows.stop - rows.start)
    return sums


# --------------------------------------------------------------------------------------------
# direct


def _fill_kernel(buf: np.ndarray, kr: KernelRows, shift: float, alpha: bool = False) -> None:
    """Write ``K + shift·I`` (or ``α``) into the Fortran-ordered ``buf`` column block by column
    block (``K`` symmetric: column block ``j`` = row block ``j`` transposed)."""
    n = buf.shape[0]
    for rows in _blocks(n, _rows_per_block(n)):
        K_b, a_b = kr.rows(rows, want_alpha=alpha)
        buf[:, rows] = (a_b if alpha else K_b).T
        del K_b, a_b
    _shift_diagonal(buf, shift)


def _shift_diagonal(buf: np.ndarray, shift: float) -> None:
    """``buf += shift·I`` in place (Fortran-ordered ``n × n``)."""
    if shift:
        buf.reshape(-1, order="F")[:: buf.shape[0] + 1] += shift


def _cholesky_in_place(buf: np.ndarray, fill, ridge: float, diag_mean: float
                       ) -> tuple[np.ndarray, float]:
    """Fill ``buf`` with ``K + (λ + jitter)I`` and factor it in place (lower Cholesky).

    ``fill(buf, shift)`` writes ``K + shift·I``. Jitter ``ε · diag_mean`` is tried when the
    ridged matrix is not numerically positive definite (with an :class:`RFMWarning`).
    Returns the factor (sharing ``buf``'s memory) and the jitter used.
    """
    for eps in (0.0,) + _JITTERS:
        jitter = eps * diag_mean
        fill(buf, ridge + jitter)  # (re)built in place: a failed factor has overwritten K
        info = cholesky_lower_inplace(buf)  # blocked: no threaded dpotrf (see _lapack)
        if info == 0:
            if eps:
                warnings.warn(f"kernel matrix is not numerically positive definite "
                              f"(ridge={ridge:g}); solved with jitter {eps:g} x mean(diag K)",
                              RFMWarning, stacklevel=4)
            return buf, jitter
        if info < 0:  # pragma: no cover - a bad argument to LAPACK
            raise RuntimeError(f"LAPACK dpotrf: illegal argument {-info}")
    raise linalg.LinAlgError("kernel matrix is not positive definite even with jitter 1e-4 x "
                             "mean(diag K); increase ridge or the bandwidth")


def _solve_factored(cf: np.ndarray, Y: np.ndarray) -> np.ndarray:
    with forced_single_thread():  # O(n² c): one thread costs little, and avoids threaded LAPACK
        A, info = lapack.dpotrs(cf, Y, lower=1)
    if info != 0:  # pragma: no cover - a bad argument to LAPACK
        raise RuntimeError(f"LAPACK dpotrs: illegal argument {-info}")
    return A


#: The direct solver keeps a copy of ``K`` (a second ``n x n`` array) when it takes at most
#: this many bytes (``n <= 2,896``): the FACT, AGOP and Gram passes then read ``K`` and
#: ``alpha`` from it instead of recomputing the kernel after the factorisation has overwritten
#: ``K`` (the same values, bit for bit). Above, the one array of the memory model is all.
KEEP_KERNEL_BYTES = 64 * 2**20


def _kernel_kept(n: int) -> bool:
    """Whether the direct solver's copy of an ``n x n`` ``K`` fits :data:`KEEP_KERNEL_BYTES`
    (it is then kept for the kernels of ``ALPHA_FROM_K``; the memory estimate counts it for
    every kernel)."""
    return 8 * n * n <= KEEP_KERNEL_BYTES


class _KeptRows:
    """Row blocks of a kept training kernel ``K`` (symmetric, Fortran-ordered), with ``α``
    from :func:`~quadnet.features.kernels.alpha_from_kernel`; the interface of
    :class:`~quadnet.features.kernels.KernelRows` that the feature passes use."""

    def __init__(self, kr: KernelRows, K: np.ndarray):
        self.kr, self.K, self.X = kr, K, kr.X

    def rows(self, rows: slice, want_alpha: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        K_b = self.K[:, rows].T  # column block of the symmetric K = its row block
        return K_b, (alpha_from_kernel(self.kr.kernel, K_b, self.kr.L) if want_alpha else None)


def _keep_kernel(kr: KernelRows, n: int) -> np.ndarray | None:
    """The training kernel as a Fortran array when it is kept (see :data:`KEEP_KERNEL_BYTES`)
    and ``α`` is a function of it; else ``None``."""
    if not _kernel_kept(n) or kr.kernel not in ALPHA_FROM_K:
        return None
    K = np.empty((n, n), order="F")
    _fill_kernel(K, kr, 0.0)
    return K


def _fill_from(K: np.ndarray):
    """``fill(buf, shift)`` of :func:`_cholesky_in_place` from a kept ``K``: the same bits as
    :func:`_fill_kernel` (which also adds the shift after writing ``K``)."""
    def fill(buf: np.ndarray, shift: float) -> None:
        np.copyto(buf, K)
        _shift_diagonal(buf, shift)
    return fill


def _direct(kr: KernelRows, Y: np.ndarray, ridge: float, gamma: int, agop: str | None,
            centre: bool, bar) -> tuple[np.ndarray, np.ndarray, FeatureSums, float]:
    n, c = Y.shape
    d = kr.X.shape[1]
    K = _keep_kernel(kr, n)
    buf = np.empty((n, n), order="F")
    fill = (lambda B, s: _fill_kernel(B, kr, s)) if K is None else _fill_from(K)
    cf, jitter = _cholesky_in_place(buf, fill, ridge, float(np.mean(kr.diagonal())) or 1.0)
    A = _solve_factored(cf, Y)
    del cf
    lam = ridge + jitter
    pred = Y - lam * A  # (K + λI)A = Y
    if agop is not None and n <= c * d:  # Gram route: α in the same array, O(n³)
        if K is None:
            _fill_kernel(buf, kr, 0.0, alpha=True)
        else:
            alpha_from_kernel(kr.kernel, K, kr.L, out=buf)
            del K
        sums = FeatureSums(kr.X, A, gamma, agop="gram", centre=centre)
        sums.set_S(buf @ A)
        for rows in _blocks(n, _rows_per_block(n)):
            sums.add(rows, buf[rows], None)
            sums.add_gram(rows, buf)
            bar.update(rows.stop - rows.start)
        del buf
    else:
        del buf
        sums = _feature_pass(kr if K is None else _KeptRows(kr, K), A, gamma, agop=agop,
                             centre=centre, predictions=False, bar=bar)
    return A, pred, sums, jitter


# --------------------------------------------------------------------------------------------
# RPCholesky


def _default_block(rank: int) -> int:
    """Pivots per RPCholesky round: ``min(100, max(10, k/20))`` (at least 20 adaptive rounds
    for ``k ≤ 2000``)."""
    return min(100, max(10, rank // 20))


def _rpcholesky(kr: KernelRows, rank: int, rng: np.random.Generator, block: int | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """Block RPCholesky of the training kernel matrix (no checks): ``F`` (``n × k'``,
    ``k' ≤ rank``) and the pivots."""
    n = kr.n
    rank = min(rank, n)
    block = _default_block(rank) if block is None else block
    diag = kr.diagonal().astype(float)
    trace0 = float(diag.sum())
    F = np.zeros((n, rank))
    pivots: list[np.ndarray] = []
    k = 0
    while k < rank:
        res = np.maximum(diag, 0.0)
        total = float(res.sum())
        if not total > 1e-14 * trace0:
            break
        m = min(block, rank - k, int(np.count_nonzero(res)))
        S = rng.choice(n, size=m, replace=False, p=res / total)
        Kc, _ = kr.block(kr.X[S], S, want_alpha=False)  # k(x_S, X): (m × n) = K[:, S]ᵀ
        G = Kc.T  # n × m
        if k:
            G = G - F[:, :k] @ F[S, :k].T
        C = G[S]
        C = 0.5 * (C + C.T)
        w, Q = np.linalg.eigh(C)
        keep = w > max(w[-1], 0.0) * 1e-10 * m if w[-1] > 0 else np.zeros(m, bool)
        if not keep.any():
            break
        Fn = G @ (Q[:, keep] / np.sqrt(w[keep]))
        j = Fn.shape[1]
        F[:, k:k + j] = Fn
        diag -= np.einsum("ij,ij->i", Fn, Fn)
        diag[S] = 0.0
        pivots.append(S)
        k += j
    return F[:, :k], (np.concatenate(pivots) if pivots else np.zeros(0, dtype=int))


@validate_params(_table("kernel", "X", "M", "bandwidth", rank=Integer(1),
                        seed=Seed(raw=True), block=Optional(Integer(1))))
def rpcholesky(kernel: str, X, M, bandwidth: float, rank: int, *,
               seed: int | np.random.Generator = 0, block: int | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """Randomly pivoted Cholesky: a rank-``k`` Nyström approximation ``K ≈ F Fᵀ`` of the kernel
    matrix ``K_ij = k_M(x_i, x_j)``, from ``O(nk)`` kernel entries.

    Block RPCholesky (Chen, Epperly, Tropp & Webber 2023, "Randomly pivoted Cholesky:
    practical approximation of a kernel matrix with few entry evaluations"): keep the
    residual diagonal ``r = diag(K − F Fᵀ)``; repeatedly draw ``b`` pivots ``S`` without
    replacement with probabilities ``r_i / Σ r``, form ``G = K[:, S] − F F[S]ᵀ`` and append
    ``G C^{−1/2}`` with ``C = G[S]`` (through its eigendecomposition, dropping eigenvalues
    below ``10⁻¹⁰ b λ_max(C)``), then ``r ← r − rowsum((G C^{−1/2})²)``. Stops early once
    ``Σ r ≤ 10⁻¹⁴ tr K``. The pivots come from a ``seed``-ed generator: same seed, same bits.

    Parameters
    ----------
    kernel : {"exp_inner", "gaussian", "laplace", "quadratic"}
        Kernel name.
    X : array_like, shape (n, d)
        Points.
    M : array_like, shape (d, d)
        Symmetric PSD Mahalanobis matrix.
    bandwidth : float
        ``L > 0``.
    rank : int
        Target rank ``k ≥ 1`` (capped at ``n``).
    seed : int or numpy.random.Generator, default 0
        Pivot stream.
    block : int, optional
        Pivots per round ``b`` (default ``min(100, max(10, k/20))``).

    Returns
    -------
    F : ndarray, shape (n, k')
        The factor, ``k' ≤ k`` columns.
    pivots : ndarray of int
        Pivot indices in the order chosen (``k'`` of them unless a round dropped a
        numerically dependent direction).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((200, 3))
    >>> F, S = rpcholesky("gaussian", X, np.eye(3), 2.0, 100, seed=1)
    >>> from quadnet.features.kernels import kernel_matrix
    >>> K = kernel_matrix("gaussian", X, X, np.eye(3), 2.0)
    >>> bool(np.linalg.norm(K - F @ F.T) < 1e-5 * np.linalg.norm(K))
    True
    >>> bool(np.array_equal(S, rpcholesky("gaussian", X, np.eye(3), 2.0, 100, seed=1)[1]))
    True
    """
    return _rpcholesky(KernelRows(kernel, X, M, bandwidth), rank, as_rng(seed, record=False),
                       block)


# --------------------------------------------------------------------------------------------
# iterative


class _Preconditioner:
    """``P⁻¹ = (F Fᵀ + λI)⁻¹`` by Woodbury: ``(v − F (FᵀF + λI)⁻¹ Fᵀ v) / λ``."""

    def __init__(self, F: np.ndarray, lam: float):
        self.F, self.lam = F, lam
        C = F.T @ F
        C[np.diag_indices_from(C)] += lam
        self.cho = linalg.cho_factor(C, lower=True, check_finite=False)

    def __call__(self, V: np.ndarray) -> np.ndarray:
        if self.F.shape[1] == 0:
            return V / self.lam
        W = linalg.cho_solve(self.cho, self.F.T @ V, check_finite=False)
        return (V - self.F @ W) / self.lam


class _Float32Operator:
    """``V ↦ (K + λI)V`` with ``K`` held in float32, built from float64 row blocks."""

    def __init__(self, kr: KernelRows, lam: float):
        n = kr.n
        self.lam = lam
        self.K = np.empty((n, n), dtype=np.float32)
        for rows in _blocks(n, _rows_per_block(n, entries=_BLOCK_MAX)):
            self.K[rows] = kr.rows(rows, want_alpha=False)[0]

    def __call__(self, V: np.ndarray) -> np.ndarray:
        out = self.lam * V
        V32 = V.astype(np.float32)
        n = self.K.shape[0]
        for j0 in range(0, n, _F32_CHUNK):
            j1 = min(n, j0 + _F32_CHUNK)
            out += self.K[j0:j1].T @ V32[j0:j1]  # K[:, j] = K[j, :]ᵀ; float32 product
        return out


class _RecomputeOperator:
    """``V ↦ (K + λI)V`` recomputing the kernel rows in float64 on every product."""

    def __init__(self, kr: KernelRows, lam: float):
        self.kr, self.lam = kr, lam

    def __call__(self, V: np.ndarray) -> np.ndarray:
        n = self.kr.n
        out = self.lam * V
        for rows in _blocks(n, _rows_per_block(n, entries=_BLOCK_MAX)):
            K_b, _ = self.kr.rows(rows, want_alpha=False)
            out[rows] += K_b @ V
        return out


def _pcg(op, prec, Y: np.ndarray, tol: float, max_iter: int, bar
         ) -> tuple[np.ndarray, int, np.ndarray, list]:
    """Preconditioned CG on each column of ``Y`` at once (batched products); ``tol`` is a
    scalar or one relative tolerance per column.

    Returns ``A``, the iterations of the slowest column, the final relative residuals
    ``‖r‖/‖y‖`` per column and the history of the largest one."""
    n, c = Y.shape
    ynorm = np.linalg.norm(Y, axis=0)
    A = np.zeros_like(Y)
    R = Y.copy()
    rel = np.where(ynorm > 0, 1.0, 0.0)
    tol = np.broadcast_to(np.asarray(tol, dtype=float), (c,))
    active = np.flatnonzero(rel > tol)
    Z = prec(R[:, active])
    P = Z.copy()
    rz = np.einsum("ij,ij->j", R[:, active], Z)
    history = [float(rel.max())]
    it = 0
    while active.size and it < max_iter:
        Q = op(P)
        a = rz / np.einsum("ij,ij->j", P, Q)
        A[:, active] += P * a
        Ra = R[:, active] - Q * a
        R[:, active] = Ra
        rel[active] = np.linalg.norm(Ra, axis=0) / ynorm[active]
        it += 1
        history.append(float(rel.max()))
        bar.update(1)
        bar.set_postfix_str(f"residual {rel.max():.2e}")
        keep = rel[active] > tol[active]
        if not keep.any():
            break
        active, P, Ra = active[keep], P[:, keep], Ra[:, keep]
        Z = prec(Ra)
        rz_new = np.einsum("ij,ij->j", Ra, Z)
        P = Z + P * (rz_new / rz[keep])
        rz = rz_new
    return A, it, rel, history


def _iterative(kr: KernelRows, Y: np.ndarray, ridge: float, storage: str, tol: float,
               max_iter: int, rank: int, rng: np.random.Generator, bar, info: _SolveLog,
               x0: np.ndarray | None = None, features=None
               ) -> tuple[np.ndarray, FeatureSums | None]:
    """PCG (recompute storage), or PCG on float32 ``K`` inside mixed-precision iterative
    refinement (float32 storage): ``R = Y − (K + λI)A`` exactly in float64 (recomputed rows),
    ``(K₃₂ + λI)E = R`` by PCG to ``max(tol/2, FLOAT32_FLOOR)``, ``A ← A + E``, until the exact
    residual is ``≤ tol``. ``x0`` (the previous RFM iteration's coefficients) starts the first
    solve from ``(K₃₂ + λI)E = Y − (K₃₂ + λI)x0`` (one float32 product, no extra float64 pass).
    ``features(A)``, if given, is the feature pass (:class:`FeatureSums` with ``K A``): a sweep
    whose inner tolerance was not floored is expected to be the last, so its exact residual
    comes from that pass, and the sums are returned with ``A`` when the residual is ``≤ tol``
    (one float64 pass over ``K`` fewer per fit; otherwise they are dropped and the loop goes
    on). Fills ``info``; warns if ``tol`` is not reached."""
    F, _ = _rpcholesky(kr, rank, rng)
    info.rank = F.shape[1]
    prec = _Preconditioner(F, ridge)
    del F
    exact = _RecomputeOperator(kr, ridge)
    ynorm = np.linalg.norm(Y, axis=0)
    safe = np.where(ynorm > 0, ynorm, 1.0)
    if storage == "recompute":
        R = Y if x0 is None else Y - exact(x0)
        rn = np.linalg.norm(R, axis=0)
        inner = tol * safe / np.where(rn > 0, rn, 1.0)
        E, it, rel, info.history = _pcg(exact, prec, R, inner, max_iter, bar)
        A = E if x0 is None else x0 + E
        rel = rel * rn / safe
        info.iterations, info.cg_residual = it, float(rel.max())
        converged = bool(rel.max() <= tol)
        worst = float(rel.max())
    else:
        op = _Float32Operator(kr, ridge)
        A = np.zeros_like(Y) if x0 is None else x0.copy()
        R = Y if x0 is None else Y - op(x0)
        worst, converged = np.inf, False
        for sweep in range(_MAX_SWEEPS):
            rn = np.linalg.norm(R, axis=0)
            inner = np.maximum(FLOAT32_FLOOR,
                               _INNER_MARGIN * tol * safe / np.where(rn > 0, rn, 1.0))
            E, it, rel, hist = _pcg(op, prec, R, inner, max_iter - info.iterations, bar)
            A += E
            info.iterations += it
            info.history += hist
            info.cg_residual = float(rel.max())
            final = features is not None and bool(np.all(inner > FLOAT32_FLOOR))
            if final:
                sums = features(A)
                R = Y - (sums.KA + ridge * A)
            else:
                R = Y - exact(A)
            new = float(np.max(np.linalg.norm(R, axis=0) / safe))
            info.refinements = sweep
            if new <= tol:
                worst, converged = new, True
                if final:
                    del op
                    info.tol, info.converged = tol, converged
                    return A, sums
                break
            if new > 0.5 * worst or info.iterations >= max_iter:  # no more progress
                worst = min(worst, new)
                break
            worst = new
        del op
    info.tol, info.converged = tol, converged
    if not converged:
        warnings.warn(KernelConvergenceWarning(
            f"PCG kernel solve ({storage} storage, n = {kr.n}, rank {info.rank}) stopped after "
            f"{info.iterations} iterations (max_iter = {max_iter}) with relative residual "
            f"{worst:.3e} > tol = {tol:g}; increase max_iter, the preconditioner rank or the "
            f"ridge", worst), stacklevel=4)
    return A, None


# --------------------------------------------------------------------------------------------
# the public fit


def _fit(kernel: str, X: np.ndarray, Y: np.ndarray, M: np.ndarray, L: float, *, ridge: float,
         plan: SolverPlan, tol: float | None, max_iter: int | None, rank: int | None,
         rng: np.random.Generator, agop: str | None, progress: bool, desc: str = "kernel fit",
         x0: np.ndarray | None = None) -> KernelFit:
    """:func:`fit_kernel_machine` on checked inputs with a chosen plan."""
    t0 = time.perf_counter()
    gamma = KERNELS[kernel]
    n, c = Y.shape
    kr = KernelRows(kernel, X, M, L)
    centre = agop == "centred"
    route = None if agop is None else "points"
    info = _SolveLog(plan.solver, plan.storage, n, estimate=plan.estimate)
    if plan.solver == "direct":
        bar = progress_bar(n, f"{desc} (direct)", progress)
        A, pred, sums, info.jitter = _direct(kr, Y, ridge, gamma, route, centre, bar)
        info.seconds = time.perf_counter() - t0
    else:
        tol = DEFAULT_TOL[plan.storage] if tol is None else tol
        max_iter = DEFAULT_MAX_ITER if max_iter is None else max_iter
        rank = _default_rank(n) if rank is None else rank
        bar = progress_bar(max_iter, f"{desc} (PCG, {plan.storage})", progress)
        def features(A, bar=progress_bar(None, "", False)):
            return _feature_pass(kr, A, gamma, agop=route, centre=centre, predictions=True,
                                 bar=bar, entries=_BLOCK_MAX)

        A, sums = _iterative(kr, Y, ridge, plan.storage, tol, max_iter, rank, rng, bar, info, x0,
                             features)
        bar.close()
        info.seconds = time.perf_counter() - t0
        bar = progress_bar(n, f"{desc} (features)", progress)
        if sums is None:
            sums = features(A, bar)
        pred = sums.KA
        ynorm = np.linalg.norm(Y, axis=0)
        resid = np.linalg.norm(pred + ridge * A - Y, axis=0)
        info.residual = float(np.max(np.where(ynorm > 0, resid / np.where(ynorm > 0, ynorm, 1),
                                              resid)))
    bar.close()
    F = sums.fact(M)
    G = sums.agop(M) if agop is not None else None
    info.total_seconds = time.perf_counter() - t0
    return KernelFit(A, pred, F, G, info.freeze())


@validate_params(_table("kernel", "X", "M", "bandwidth") | {
    "Y": _table("coef")["coef"], "ridge": Real(0, None), "solver": Options(*SOLVERS),
    "memory_limit": _MEMORY_LIMIT, "storage": Options(*STORAGES),
    "tol": Optional(Real(0, None, closed="neither")),
    "max_iter": Optional(Integer(1)), "rank": Optional(Integer(1)), "seed": Seed(raw=True),
    "agop": Options(None, "plain", "centred"), "progress": Optional(Boolean())},
    relations=[_ITERATIVE_NEEDS_RIDGE])
def fit_kernel_machine(kernel: str, X, Y, M, bandwidth: float, *, ridge: float = 0.0,
                       solver: str = "auto", memory_limit: float | None = None,
                       storage: str = "auto", tol: float | None = None,
                       max_iter: int | None = None, rank: int | None = None,
                       seed: int | np.random.Generator = 0, agop: str | None = None,
                       progress: bool | None = None) -> KernelFit:
    """Fit ``f(x) = Σ_j a_j k_M(x, x_j)`` by kernel ridge regression and form its FACT matrix
    (and AGOP): one RFM iteration at a fixed ``M`` (quadnet theory §6).

    ``A = (K + λI)⁻¹ Y`` by the solver of the module docstring; then, from row blocks,
    ``F = M B`` with ``B = Xᵀ[α ⊙ AAᵀ − γ diag(rowsum(αA ⊙ A))]X`` and the AGOP ``M Γ M``
    (closed forms in ``quadnet.features.kernels``).

    Parameters
    ----------
    kernel : {"exp_inner", "gaussian", "laplace", "quadratic"}
        Kernel name.
    X : array_like, shape (n, d)
        Training inputs.
    Y : array_like, shape (n,) or (n, c)
        Targets.
    M : array_like, shape (d, d)
        Symmetric PSD Mahalanobis matrix.
    bandwidth : float
        ``L > 0``.
    ridge : float, default 0
        ``λ ≥ 0`` (``> 0`` for the iterative solver).
    solver : {"auto", "direct", "iterative"}
        See the module docstring.
    memory_limit : float, optional
        Bytes the solve may use (default :func:`available_memory`).
    storage : {"auto", "float32", "recompute"}
        Kernel storage of the iterative solver.
    tol : float, optional
        Relative residual ``‖(K + λI)a − y‖/‖y‖`` to reach per column, measured exactly in
        float64 (default 1e-8 for float32 storage, 1e-10 for recompute).
    max_iter : int, optional
        CG iteration cap (default 500).
    rank : int, optional
        RPCholesky preconditioner rank (default :func:`default_rank`).
    seed : int or numpy.random.Generator, default 0
        RPCholesky pivot stream.
    agop : {None, "plain", "centred"}
        Also form the AGOP (centred gradients with ``"centred"``).
    progress : bool, optional
        Progress bars (default: on for ``n ≥ 10,000``).

    Returns
    -------
    KernelFit

    Raises
    ------
    KernelMemoryError
        If nothing fits ``memory_limit`` (before any large allocation).
    TypeError, ValueError
        For bad arguments, e.g. ``solver="iterative"`` with ``ridge = 0``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((50, 3)); y = X[:, 0] * X[:, 1]
    >>> fit = fit_kernel_machine("gaussian", X, y, np.eye(3), 2.0, ridge=1e-2)
    >>> fit.info.solver, fit.coef.shape, fit.fact.shape
    ('direct', (50, 1), (3, 3))
    """
    n, d = X.shape
    plan = choose_solver(n, d, Y.shape[1], solver=solver, ridge=ridge, memory_limit=memory_limit,
                         storage=storage, rank=rank, agop=agop is not None)
    show = n >= PROGRESS_MIN_N if progress is None else bool(progress)
    return _fit(kernel, X, Y, M, bandwidth, ridge=ridge, plan=plan, tol=tol, max_iter=max_iter,
                rank=rank, rng=as_rng(seed, record=False), agop=agop, progress=show)


def _predict(kernel: str, Z: np.ndarray, X: np.ndarray, coef: np.ndarray, M: np.ndarray,
             L: float) -> np.ndarray:
    kr = KernelRows(kernel, X, M, L)
    m, n = Z.shape[0], X.shape[0]
    out = np.empty((m, coef.shape[1]))
    b = max(1, min(m, _block_entries(n) // n))
    for rows in _blocks(m, b):
        out[rows] = kr.block(Z[rows], want_alpha=False)[0] @ coef
    return out


@validate_params(_table("kernel", "Z", "X", "coef", "M", "bandwidth"))
def kernel_predict(kernel: str, Z, X, coef, M, bandwidth: float) -> np.ndarray:
    """``f_c(z_i) = Σ_j a_jc k_M(z_i, x_j)`` in row blocks of ``Z`` (never an ``m × n`` array).

    Parameters
    ----------
    kernel : {"exp_inner", "gaussian", "laplace", "quadratic"}
        Kernel name.
    Z : array_like, shape (m, d)
        Evaluation points.
    X : array_like, shape (n, d)
        Centres.
    coef : array_like, shape (n,) or (n, c)
        Coefficients.
    M : array_like, shape (d, d)
        Symmetric PSD Mahalanobis matrix.
    bandwidth : float
        ``L > 0``.

    Returns
    -------
    ndarray, shape (m, c)

    Examples
    --------
    >>> import numpy as np
    >>> from quadnet.features.kernels import kernel_matrix
    >>> X = np.random.default_rng(0).standard_normal((30, 2)); a = np.ones(30)
    >>> P = kernel_predict("laplace", X[:5], X, a, np.eye(2), 1.0)
    >>> bool(np.allclose(P[:, 0], kernel_matrix("laplace", X[:5], X, np.eye(2), 1.0) @ a))
    True
    """
    return _predict(kernel, Z, X, coef, M, bandwidth)
