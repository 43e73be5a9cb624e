"""Recursive feature machines (RFM) with FACT and NFA updates (quadnet theory §6).

An RFM alternates two steps, starting from ``M_0 = I``:

1. fit the kernel machine ``f(x) = Σ_j a_j k_M(x, x_j)`` by (ridgeless) kernel regression,
   ``A = (K_M + λI)⁻¹ Y`` (``λ = ridge``, default 0);
2. update the feature matrix from the fitted machine (closed forms in ``quadnet.features.kernels``):

   * ``update="nfa"``: ``M ← AGOP^s`` (``s = agop_power``, default ½; centred gradients by
     default), the neural feature ansatz;
   * ``update="fact"``: ``M ← (F Fᵀ)^{1/2}`` (``fact_form="ffT"``) or ``M ← (F M² Fᵀ)^{1/4}``
     (``fact_form="fm"``), which equals ``(F M)^{1/2}`` whenever ``F M = M B M ⪰ 0``
     (``docs/rfm.md``); ``F`` is the FACT matrix of the kernel machine.

   then (``normalize="trace"``) ``M ← d · M / tr M``, so every iterate has the trace of ``M_0 = I``.

A fixed point of the FACT update satisfies ``WᵀW = FACT`` for ``W = M^{1/2}`` up to scale; the
recorded *fixed-point residual* is ``‖F/‖F‖_F − M/‖M‖_F‖_F``.

Also here: the two data sets of Boix-Adsera, Mallinar, Simon & Belkin (2025), modular arithmetic with one-hot inputs
``e_a ⊕ e_b`` and sparse parity, and the block-circulant score of a learned ``M``.
"""

from __future__ import annotations

import inspect
from typing import Any, NamedTuple

import numpy as np

from quadnet._linalg import psd_power, sym
from quadnet._validation import (
    Array,
    Boolean,
    Integer,
    Optional,
    Options,
    Real,
    Relation,
    Seed,
    as_array,
    as_matrix,
    as_rng,
    fit_context,
    name_callable,
    name_method,
    named_call,
    validate_params,
)
from quadnet._validation import (
    NonFiniteResultError,
    _overflow_error,
    _linalg_failure,
    memory_guard,
)
from quadnet.exceptions import DegenerateFeaturesError
from quadnet.features.kernels import BANDWIDTH, KERNELS
from quadnet.features.solvers import (
    PROGRESS_MIN_N,
    SOLVERS,
    STORAGES,
    SolverPlan,
    _MEMORY_LIMIT,
    _cholesky_in_place,
    _fit,
    _iterative_needs_ridge,
    _predict,
    _solve_factored,
    choose_solver,
    progress_bar,
)

from quadnet.exceptions import RFMWarning as RFMWarning  # also importable from here

__all__ = [
    "Dataset",
    "RecursiveFeatureMachine",
    "block_circulant_score",
    "modular_arithmetic",
    "sparse_parity",
]

UPDATES = ("fact", "nfa")
FACT_FORMS = ("ffT", "fm")
NORMALIZATIONS = ("trace", None)


# --------------------------------------------------------------------------------------------
# data


class _DatasetFields(NamedTuple):
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    info: dict


class Dataset(_DatasetFields):
    r"""A train/test split, as the dataset generators return it, or as a user builds it.

    Fields ``X_train`` ``(n, d)``, ``y_train`` ``(n, c)``, ``X_test`` ``(m, d)``, ``y_test``
    ``(m, c)`` (finite float64 arrays; 1-d targets become one column) and ``info`` (a dict:
    the generating parameters, ``p``/``op`` and the integer pairs for
    :func:`modular_arithmetic`, ``support`` for :func:`sparse_parity`). Built by hand, it is
    checked like any public input: non-finite entries, a transposed or mismatched array (rows of
    targets against rows of inputs, the input width of the two halves, the number of target
    columns) raise a ``ValueError`` naming the array.

    Examples
    --------
    >>> ds = modular_arithmetic(5, seed=0)
    >>> ds.X_train.shape, ds.y_train.shape, ds.info["op"]
    ((12, 10), (12, 5), 'add')
    >>> import numpy as np
    >>> Dataset(np.ones((3, 2)), np.ones(3), np.ones((2, 2)), np.ones(4), {})
    Traceback (most recent call last):
        ...
    ValueError: Dataset: y_test must have one row per row of X_test: got 4 rows for 2 inputs
    """

    __slots__ = ()

    def __new__(cls, X_train, y_train, X_test, y_test, info=None):
        try:
            fields = _dataset_fields(X_train, y_train, X_test, y_test, info)
        except (TypeError, ValueError) as exc:
            raise name_callable(exc, "Dataset") from None
        return super().__new__(cls, *fields)


def _dataset_fields(X_train, y_train, X_test, y_test, info) -> tuple:
    """The checked fields of a :class:`Dataset`."""
    X_train = as_matrix(X_train, "X_train")
    X_test = as_matrix(X_test, "X_test", allow_empty=True)
    if X_test.shape[1] != X_train.shape[1]:
        raise ValueError(f"X_test must have the {X_train.shape[1]} columns of X_train, got "
                         f"shape {X_test.shape}")
    ys = []
    for name, y, X, xname in (("y_train", y_train, X_train, "X_train"),
                              ("y_test", y_test, X_test, "X_test")):
        arr = as_array(y, name)
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.ndim != 2:
            raise ValueError(f"{name} must be 1- or 2-dimensional, got shape {arr.shape}")
        if arr.shape[0] != X.shape[0]:
            raise ValueError(f"{name} must have one row per row of {xname}: got "
                             f"{arr.shape[0]} rows for {X.shape[0]} inputs")
        ys.append(arr)
    if ys[0].shape[1] != ys[1].shape[1]:
        raise ValueError(f"y_test must have the {ys[0].shape[1]} columns of y_train, got "
                         f"{ys[1].shape[1]}")
    if info is None:
        info = {}
    if not isinstance(info, dict):
        raise TypeError(f"info must be a dict, got {type(info).__name__}")
    return X_train, ys[0], X_test, ys[1], info


_OPS = {
    "add": lambda a, b, p: (a + b) % p,
    "sub": lambda a, b, p: (a - b) % p,
    "mul": lambda a, b, p: (a * b) % p,
    "div": lambda a, b, p: (a * pow_mod_inverse(b, p)) % p,
}


def pow_mod_inverse(b: np.ndarray, p: int) -> np.ndarray:
    """``b⁻¹ mod p`` elementwise (``p`` prime, ``b ≠ 0``), by Fermat: ``b^{p−2} mod p``."""
    return np.array([pow(int(v), p - 2, p) for v in np.ravel(b)], dtype=np.int64).reshape(
        np.shape(b))


def _is_prime(p: int) -> bool:
    return p >= 2 and all(p % q for q in range(2, int(p**0.5) + 1))


#: Peak bytes of :func:`modular_arithmetic`: the ``p² × 2p`` inputs and ``p² × p`` targets in
#: float64, built once and copied into the two halves (``2 · 8 · 3p³``), plus the ``p × p``
#: identity and the integer pairs, labels and permutation (about ``64 p²``).
_MODULAR_MEMORY = memory_guard(("p",), lambda a: 48 * a["p"] ** 3 + 64 * a["p"] ** 2,
                               "modular_arithmetic")

#: Peak bytes of :func:`sparse_parity`: the ``(n + n_test) × d`` float64 inputs drawn once and
#: copied into the two halves, and the labels.
_PARITY_MEMORY = memory_guard(("d", "n", "n_test"),
                              lambda a: 16 * (a["n"] + a["n_test"]) * (a["d"] + 1),
                              "sparse_parity")


def _fraction_in_unit(a: dict):
    frac = a["train_fraction"]
    return None if frac < 1 else f"train_fraction must lie in (0, 1), got {frac}"


def _div_needs_prime(a: dict):
    p = a["p"]
    return f"op='div' needs a prime p, got p={p}" if a["op"] == "div" and not _is_prime(p) \
        else None


@validate_params({"p": Integer(2), "op": Options(*_OPS),
                  "train_fraction": Real(0, None, closed="neither"), "seed": Seed()},
                 relations=[Relation(("train_fraction",), _fraction_in_unit,
                                     "train_fraction in (0, 1)"),
                            _MODULAR_MEMORY,
                            Relation(("p", "op"), _div_needs_prime, "p prime for op='div'")])
def modular_arithmetic(p: int, op: str = "add", train_fraction: float = 0.5, *,
                       seed: int | np.random.Generator = 0) -> Dataset:
    r"""Modular arithmetic with one-hot inputs (Boix-Adsera, Mallinar, Simon & Belkin 2025, §6 of
    quadnet theory).

    All pairs ``(a, b)`` in ``Z_p^2`` as one-hot inputs ``e_a ⊕ e_b`` in ``R^{2p}`` with
    one-hot targets ``e_{a∘b mod p}`` in ``R^p``, split uniformly at random.

    Parameters
    ----------
    p : int
        Modulus ``>= 2`` (prime for ``op="div"``).
    op : {"add", "sub", "mul", "div"}
        The operation (``div`` drops ``b = 0``).
    train_fraction : float, default 0.5
        Fraction of pairs in the training half, in ``(0, 1)``.
    seed : int or numpy.random.Generator, default 0
        The split's random stream.

    Returns
    -------
    Dataset
        ``info`` holds ``p``, ``op`` and the integer pairs/labels of both halves.

    Raises
    ------
    TypeError, ValueError
        For bad arguments.

    Examples
    --------
    >>> ds = modular_arithmetic(5, seed=0)
    >>> ds.X_train.shape[0] + ds.X_test.shape[0]      # all 25 pairs
    25
    >>> bool((ds.X_train.sum(axis=1) == 2).all())     # two one-hot blocks
    True
    """
    frac, rng = train_fraction, seed
    a, b = (g.ravel() for g in np.meshgrid(np.arange(p), np.arange(p), indexing="ij"))
    if op == "div":
        a, b = a[b != 0], b[b != 0]
    labels = _OPS[op](a, b, p)
    N = a.size
    n_train = round(frac * N)
    if not 1 <= n_train < N:
        raise ValueError(f"train_fraction={train_fraction} leaves an empty split of {N} pairs")
    perm = rng.permutation(N)
    eye = np.eye(p)
    X = np.hstack([eye[a], eye[b]])
    Y = eye[labels]
    tr, te = perm[:n_train], perm[n_train:]
    info = {"p": p, "op": op, "pairs_train": np.stack([a[tr], b[tr]], 1),
            "pairs_test": np.stack([a[te], b[te]], 1), "labels_train": labels[tr],
            "labels_test": labels[te]}
    return Dataset(X[tr], Y[tr], X[te], Y[te], info)


def _support_fits(a: dict):
    return None if a["k"] <= a["d"] else f"k must be <= {a['d']}, got {a['k']}"


@validate_params({"d": Integer(1), "k": Integer(1), "n": Integer(1), "n_test": Integer(1),
                  "seed": Seed()},
                 relations=[Relation(("k", "d"), _support_fits, "k <= d"), _PARITY_MEMORY])
def sparse_parity(d: int, k: int, n: int, *, n_test: int = 2000,
                  seed: int | np.random.Generator = 0) -> Dataset:
    r"""Sparse parity: ``x`` uniform on ``{±1}^d``, ``y = prod_{j in S} x_j`` for a uniformly
    random support ``|S| = k`` (the second data set of quadnet theory §6).

    Parameters
    ----------
    d : int
        Input dimension ``>= 1``.
    k : int
        Support size, ``1 <= k <= d``.
    n : int
        Training samples ``>= 1``.
    n_test : int, default 2000
        Test samples ``>= 1``.
    seed : int or numpy.random.Generator, default 0
        The random stream.

    Returns
    -------
    Dataset
        Targets of shape ``(n, 1)``; ``info["support"]`` is the sorted support ``S``.

    Raises
    ------
    TypeError, ValueError
        For bad arguments.

    Examples
    --------
    >>> import numpy as np
    >>> ds = sparse_parity(6, 2, 20, n_test=10, seed=0)
    >>> S = ds.info["support"]
    >>> bool(np.array_equal(ds.y_train[:, 0], ds.X_train[:, S].prod(axis=1)))
    True
    """
    rng = seed
    support = np.sort(rng.choice(d, size=k, replace=False))
    X = rng.choice(np.array([-1.0, 1.0]), size=(n + n_test, d))
    y = np.prod(X[:, support], axis=1, keepdims=True)
    return Dataset(X[:n], y[:n], X[n:], y[n:], {"d": d, "k": k, "support": support})


# --------------------------------------------------------------------------------------------
# diagnostics of M and predictions


def accuracy(Y_pred, Y_true) -> float:
    """Classification accuracy: argmax agreement for ``c > 1`` outputs, sign agreement for one."""
    P = np.asarray(Y_pred, dtype=float)
    T = np.asarray(Y_true, dtype=float)
    if P.ndim == 1:
        P = P[:, None]
    if T.ndim == 1:
        T = T[:, None]
    if P.shape != T.shape:
        raise ValueError(f"Y_pred and Y_true must have the same shape, got {P.shape}, {T.shape}")
    if P.shape[1] == 1:
        return float(np.mean(np.sign(P[:, 0]) == np.sign(T[:, 0])))
    return float(np.mean(P.argmax(axis=1) == T.argmax(axis=1)))


def _circulant_energy(B: np.ndarray) -> float:
    """Energy of the orthogonal projection of a ``p × p`` block onto circulant matrices
    (constant along ``(i − j) mod p``): ``Σ_k (sum of diagonal k)² / p``."""
    p = B.shape[0]
    i, j = np.indices((p, p))
    sums = np.bincount(((i - j) % p).ravel(), weights=B.ravel(), minlength=p)
    return float(np.sum(sums**2) / p)


def _circulant_blocks(a: dict):
    M, p = a["M"], a["p"]
    d = M.shape[0]
    if M.shape != (d, d):
        return f"M must be square, got shape {M.shape}"
    p = d // 2 if p is None else p
    return None if 2 * p == d else f"M must be 2p x 2p for p={p}, got shape {M.shape}"


@validate_params({"M": Array(ndim=2), "p": Optional(Integer(1))},
                 relations=[Relation(("M", "p"), _circulant_blocks, "M is 2p x 2p")])
def block_circulant_score(M, p: int | None = None) -> float:
    """How block-circulant ``M`` is: the fraction of the Frobenius energy of ``M`` that lies in
    matrices whose four ``p × p`` blocks are circulant (constant along ``(i − j) mod p``), after
    removing the main diagonal and each block's mean off it (a constant block is trivially
    circulant). RFM on ``(a + b) mod p`` with inputs ``e_a ⊕ e_b`` learns Fourier features
    ``e^{iωa} + e^{iωb}``, whose ``M`` is block-circulant; for subtraction reverse the order of
    the ``b`` coordinates first. 1 = exactly block-circulant; about ``1/p`` for noise; the
    identity (``M_0``) scores 0. ``p`` defaults to ``d/2``.

    Examples
    --------
    >>> import numpy as np
    >>> block_circulant_score(np.eye(4), 2)
    0.0
    """
    p = M.shape[0] // 2 if p is None else p
    Mt = M - np.diag(np.diag(M))
    scale = float(np.max(np.abs(Mt))) if Mt.size else 0.0
    if scale > 0:  # the score is scale invariant; this keeps the squares finite for any M
        Mt = Mt / scale
    total = kept = 0.0
    for r in range(2):
        for s in range(2):
            B = Mt[r * p:(r + 1) * p, s * p:(s + 1) * p]
            off = ~np.eye(p, dtype=bool) if r == s else np.ones((p, p), dtype=bool)
            B = np.where(off, B - (B[off].mean() if off.any() else 0.0), 0.0)
            total += float(np.sum(B**2))
            kept += _circulant_energy(B)
    return kept / total if total > 0 else 0.0


# --------------------------------------------------------------------------------------------
# the updates


def sqrt_psd_update(G: np.ndarray, power: float) -> np.ndarray:
    """``(G Gᵀ)^{power/2} = U Σ^power Uᵀ`` from the SVD ``G = U Σ Vᵀ`` (no squaring of ``G``).

    FACT updates: ``G = F``, ``power = 1`` gives ``(F Fᵀ)^{1/2}``; ``G = F M``, ``power = ½``
    gives ``(F M² Fᵀ)^{1/4}``.
    """
    U, s, _ = np.linalg.svd(G)
    return (U * s**power) @ U.T


def _normalise(M: np.ndarray, how: str | None) -> np.ndarray:
    if how is None:
        return M
    tr = float(np.trace(M))
    if not tr > 0:
        raise _ZeroTrace("the RFM update produced a feature matrix with zero trace "
                         "(all gradients vanished); cannot trace-normalise")
    return M * (M.shape[0] / tr)


class _ZeroTrace(FloatingPointError):
    """Internal: a zero-trace update; :meth:`RecursiveFeatureMachine.fit` re-raises it as a
    :class:`~quadnet.exceptions.DegenerateFeaturesError` naming the arguments."""


class _Overflow(FloatingPointError):
    """Internal: a non-finite kernel fit; re-raised by ``fit`` naming the arguments."""


def _finite(*arrays) -> bool:
    return all(a is None or bool(np.all(np.isfinite(a))) for a in arrays)


def _nonfinite_error(what: str, args: dict) -> NonFiniteResultError:
    return _overflow_error(what, args, "rescale the data to moderate magnitudes")


def _relative_gap(A: np.ndarray, B: np.ndarray) -> float:
    """``‖A/‖A‖_F − B/‖B‖_F‖_F`` (0 when both vanish)."""
    na, nb = np.linalg.norm(A), np.linalg.norm(B)
    if na == 0 or nb == 0:
        return float(na != nb)
    return float(np.linalg.norm(A / na - B / nb))


# --------------------------------------------------------------------------------------------
# the kernel solve


def solve_kernel(K: np.ndarray, Y: np.ndarray, ridge: float) -> np.ndarray:
    """``(K + λI)⁻¹ Y`` by Cholesky, for an explicitly formed kernel matrix ``K`` (left intact).

    The same in-place LAPACK factorisation as the direct solver of
    ``quadnet.features.solvers`` on one Fortran-ordered copy of ``K``. If ``K + λI`` is not
    numerically positive definite (a singular kernel matrix in a ridgeless solve), the copy is
    refilled with jitter ``ε · mean(diag K)``, ``ε = 1e-12, 1e-10, …, 1e-4``, with a warning
    (:class:`RFMWarning`): the result then approximates the minimum-norm interpolant, the
    ``λ → 0`` limit of kernel ridge regression.
    """
    K = np.asarray(K, dtype=float)
    n = K.shape[0]
    buf = np.empty((n, n), order="F")

    def fill(B: np.ndarray, shift: float) -> None:
        B[...] = K
        if shift:
            B.reshape(-1, order="F")[:: n + 1] += shift

    cf, _ = _cholesky_in_place(buf, fill, float(ridge), float(np.mean(np.diag(K))) or 1.0)
    return _solve_factored(cf, np.asarray(Y, dtype=float))


# --------------------------------------------------------------------------------------------
# the estimator


class RecursiveFeatureMachine:
    """Recursive feature machine: kernel regression with a learned Mahalanobis matrix ``M``.

    Parameters
    ----------
    kernel : ``"exp_inner"``, ``"gaussian"``, ``"laplace"`` or ``"quadratic"``
        (formulas in ``quadnet.features.kernels``).
    bandwidth : ``L > 0``.
    update : ``"fact"`` (``M`` from the FACT matrix) or ``"nfa"`` (``M ← AGOP^s``).
    fact_form : ``"ffT"`` (``M ← (FFᵀ)^{1/2}``) or ``"fm"`` (``M ← (FM²Fᵀ)^{1/4} = (FM)^{1/2}``).
    iters : number of updates of ``M``; the final predictor uses ``M_iters``.
    normalize : ``"trace"`` (``tr M = d`` after each update) or ``None``.
    ridge : ``λ ≥ 0`` added to the kernel matrix (0: ridgeless interpolation).
    centre_agop : centre the gradients over the data before forming the AGOP (NFA only).
    agop_power : ``s`` in ``M ← AGOP^s`` (NFA only).
    block_size : ``p`` for the block-circulant score in ``history_`` (default ``d/2`` for even
        ``d``; ``0`` switches it off).
    solver : ``"auto"``, ``"direct"`` or ``"iterative"``, the kernel solver of each iteration
        (``quadnet.features.solvers``): ``"direct"`` = in-place Cholesky holding one ``n × n``
        float64 array; ``"iterative"`` = conjugate gradients preconditioned by randomly pivoted
        Cholesky (Díaz, Epperly, Frangella, Tropp & Webber 2023), needs ``ridge > 0``;
        ``"auto"`` = direct while it fits ``memory_limit`` and ``n ≤ DIRECT_MAX_N``, else
        iterative. The FACT matrix, AGOP and predictions are formed from row blocks.
    memory_limit : bytes the solver may use (``None``: ``available_memory()``, which honours
        ``ulimit -v``); a problem nothing can hold raises ``KernelMemoryError`` before
        allocating.
    storage : kernel storage of the iterative solver, ``"auto"`` (float32 if it fits),
        ``"float32"`` (``4n²`` bytes, float64 accuracy by iterative refinement) or
        ``"recompute"`` (``K`` never held).
    tol : relative residual ``‖(K + λI)a − y‖/‖y‖`` the iterative solver reaches per output
        (default 1e-8 with float32 storage, 1e-10 recomputing).
    feature_tol : relative residual of the iterative solves whose only use is the next ``M``
        (every fit but the one whose coefficients are kept; ``None``: ``tol``). A loose value
        (e.g. ``1e-4``) saves most of the conjugate-gradient work of a fit; the kept fit is
        always solved to ``tol`` (with ``early_stopping``, the best iterate is solved again to
        ``tol``, warm-started, after the loop). Ignored by the direct solver.
    cg_max_iter : iteration cap of the iterative solver (default 500).
    preconditioner_rank : RPCholesky rank ``k`` of the iterative solver (default
        ``min(n, max(1000, n // 16))``, :func:`~quadnet.features.solvers.default_rank`).
    early_stopping : ``None`` (run all ``iters`` updates) or a multiplier ``μ ≥ 1``: with
        validation data (``fit(X, Y, X_val, Y_val)``) the fit stops at the first iteration
        whose validation MSE exceeds ``μ ×`` the smallest so far, and ``M_``/``coef_`` are those
        of the iteration with the smallest validation MSE (``best_iter_``), the rule of xRFM
        (Beaglehole et al. 2025; ``μ = 1.1`` there).
    seed : int or Generator for the RPCholesky pivots (same seed, same fit).
    progress : progress bars per RFM iteration and inside each solve (``None``: on for
        ``n ≥ 10,000``; plain lines on stderr when it is not a terminal).

    Fitted attributes: ``M_`` (``d × d``), ``coef_`` (``n × c``), ``X_fit_``, ``n_iter_`` (the
    last iteration fitted), ``best_iter_`` (the iteration whose ``M_t`` and coefficients are
    kept: ``n_iter_``, or the smallest validation MSE with ``early_stopping``), ``history_``
    (dict of per-iteration lists, index ``t`` = machine
    fitted with ``M_t``: ``train_acc``, ``train_mse``, ``val_acc``, ``val_mse`` (if validation
    data given), ``circulant_score``, ``fixed_point_residual`` ``‖F/‖F‖ − M/‖M‖‖``,
    ``update_change`` ``‖M_{t+1}/‖·‖ − M_t/‖·‖‖``), ``solver_plan_`` (the
    :class:`~quadnet.features.solvers.SolverPlan`) and ``solver_info_`` (one
    :class:`~quadnet.features.solvers.SolverInfo` per kernel fit: iterations, residual, times;
    one more, the final solve of the kept iterate, with ``early_stopping`` and
    ``feature_tol``).

    The constructor and :meth:`set_params` only store the parameters; :meth:`fit` checks them
    against the table ``_parameter_constraints`` and its relations ``_parameter_relations``
    (scikit-learn's convention), once per fit (not when a validated callable calls it: its own
    table checked what it forwards).

    Raises
    ------
    TypeError, ValueError
        For bad hyper-parameters (checked by :meth:`fit`) or data.
    KernelMemoryError
        (:meth:`fit`) when no solver fits ``memory_limit``.

    Examples
    --------
    >>> ds = modular_arithmetic(5, seed=0)
    >>> rfm = RecursiveFeatureMachine(iters=2).fit(ds.X_train, ds.y_train)
    >>> rfm.M_.shape, rfm.score(ds.X_train, ds.y_train)      # ridgeless: interpolates
    ((10, 10), 1.0)
    """

    def __init__(self, kernel: str = "gaussian", bandwidth: float = 1.0, update: str = "fact",
                 fact_form: str = "ffT", iters: int = 10, normalize: str | None = "trace",
                 ridge: float = 0.0, centre_agop: bool = True, agop_power: float = 0.5,
                 block_size: int | None = None, solver: str = "auto",
                 memory_limit: float | None = None, storage: str = "auto",
                 tol: float | None = None, feature_tol: float | None = None,
                 cg_max_iter: int | None = None,
                 preconditioner_rank: int | None = None, early_stopping: float | None = None,
                 seed: int | np.random.Generator = 0, progress: bool | None = None):
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.update = update
        self.fact_form = fact_form
        self.iters = iters
        self.normalize = normalize
        self.ridge = ridge
        self.centre_agop = centre_agop
        self.agop_power = agop_power
        self.block_size = block_size
        self.solver = solver
        self.memory_limit = memory_limit
        self.storage = storage
        self.tol = tol
        self.feature_tol = feature_tol
        self.cg_max_iter = cg_max_iter
        self.preconditioner_rank = preconditioner_rank
        self.early_stopping = early_stopping
        self.seed = seed
        self.progress = progress

    # -- scikit-learn protocol ---------------------------------------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p for p in sig.parameters if p != "self"]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor parameters (scikit-learn protocol).

        Examples
        --------
        >>> RecursiveFeatureMachine(iters=3).get_params()['iters']
        3
        """
        return {k: getattr(self, k) for k in self._param_names()}

    def set_params(self, **params) -> RecursiveFeatureMachine:
        """Set constructor parameters (scikit-learn protocol); unknown names are an error.

        Examples
        --------
        >>> RecursiveFeatureMachine().set_params(iters=4).iters
        4
        """
        names = self._param_names()
        for k, v in params.items():
            if k not in names:
                raise ValueError(f"RecursiveFeatureMachine.set_params: unknown parameter {k!r}; "
                                 f"valid: {', '.join(names)}")
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"RecursiveFeatureMachine({args})"

    #: The constructor's parameter constraints (one declarative table, in the spirit of
    #: scikit-learn's ``_parameter_constraints``), checked by :meth:`fit` (``fit_context``)
    #: with the relations of ``_parameter_relations``.
    _parameter_constraints: dict = {
        "kernel": Options(*KERNELS),
        "bandwidth": BANDWIDTH,
        "update": Options(*UPDATES),
        "fact_form": Options(*FACT_FORMS),
        "iters": Integer(0, None),
        "normalize": Options(*NORMALIZATIONS),
        "ridge": Real(0, None),
        "centre_agop": Boolean(),
        "agop_power": Real(0, None, closed="neither"),
        "block_size": Optional(Integer(0, None)),
        "solver": Options(*SOLVERS),
        "memory_limit": _MEMORY_LIMIT,
        "storage": Options(*STORAGES),
        "tol": Optional(Real(0, None, closed="neither")),
        "feature_tol": Optional(Real(0, 1, closed="neither")),
        "cg_max_iter": Optional(Integer(1, None)),
        "preconditioner_rank": Optional(Integer(1, None)),
        "early_stopping": Optional(Real(1, None)),
        "seed": Seed(raw=True),
        "progress": Optional(Boolean()),
    }

    #: The relations between the parameters, checked by :meth:`fit` after the table.
    _parameter_relations: tuple = (_iterative_needs_ridge("ridge = 0 with "),)

    # -- fitting -----------------------------------------------------------------------------
    def _targets(self, X: np.ndarray, Y, name: str, fitted: bool = False) -> np.ndarray:
        Y = np.asarray(Y) if not isinstance(Y, (str, bytes)) else Y
        if isinstance(Y, np.ndarray) and Y.ndim == 1:
            Y = Y[:, None]
        Y = as_matrix(Y, name)
        if Y.shape[0] != X.shape[0]:
            raise ValueError(f"{name} must have one row per input row: got {Y.shape[0]} rows "
                             f"for {X.shape[0]} inputs")
        if fitted:
            self._check_fitted()
            c = self.coef_.shape[1]
            if Y.shape[1] != c:
                raise ValueError(f"{name} must have {c} column{'s' if c != 1 else ''} (the "
                                 f"outputs of the fitted machine), got {Y.shape[1]}")
        return Y

    def _plan(self, n: int, d: int, c: int) -> SolverPlan:
        """The solver for ``n`` centres (raises ``KernelMemoryError`` before allocating)."""
        return choose_solver(n, d, c, solver=self.solver, ridge=float(self.ridge),
                             memory_limit=self.memory_limit, storage=self.storage,
                             rank=self.preconditioner_rank,
                             agop=self.update == "nfa" and int(self.iters) > 0)

    def _step(self, X: np.ndarray, Y: np.ndarray, M: np.ndarray, *, last: bool = False,
              plan: SolverPlan | None = None, rng: np.random.Generator | None = None,
              progress: bool = False, desc: str = "kernel fit", x0: np.ndarray | None = None,
              tol: float | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """One RFM iteration at ``M`` (the loop body of :meth:`fit`, inputs already checked):
        the coefficients ``A``, the training predictions ``K A``, the FACT matrix ``F`` and the
        next ``M`` (``None`` if ``last``), from one kernel solve and one pass over row blocks
        (``quadnet.features.solvers``). The solve's :class:`SolverInfo` is ``self._last_info``.
        ``x0``: the previous iteration's coefficients, the iterative solver's starting point;
        ``tol``: the iterative solver's tolerance (default ``self.tol``)."""
        if plan is None:
            plan = self._plan(X.shape[0], X.shape[1], Y.shape[1])
        rng = as_rng(self.seed, "seed", record=False) if rng is None else rng
        nfa = self.update == "nfa" and not last
        agop = ("centred" if self.centre_agop else "plain") if nfa else None
        fit = _fit(self.kernel, X, Y, M, float(self.bandwidth), ridge=float(self.ridge),
                   plan=plan, tol=self.tol if tol is None else tol, max_iter=self.cg_max_iter,
                   rank=self.preconditioner_rank, rng=rng, agop=agop, progress=progress,
                   desc=desc, x0=x0)
        self._last_info = fit.info
        A, P, F = fit.coef, fit.train_pred, fit.fact
        if not _finite(A, P, F, fit.agop):
            raise _Overflow("the kernel fit")
        if last:
            return A, P, F, None
        if self.update == "nfa":
            Mn = psd_power(sym(fit.agop), float(self.agop_power), name="AGOP")
        elif self.fact_form == "ffT":
            Mn = sqrt_psd_update(F, 1.0)
        else:
            Mn = sqrt_psd_update(F @ M, 0.5)
        return A, P, F, _normalise(sym(Mn), self.normalize)

    @fit_context
    def fit(self, X, Y, X_val=None, Y_val=None, *, callback=None) -> RecursiveFeatureMachine:
        """Run ``iters`` RFM updates from ``M_0 = I``; record ``history_`` (validation metrics
        when ``X_val``/``Y_val`` are given).

        The parameters are checked here, against ``_parameter_constraints`` and
        ``_parameter_relations``, before the data.

        ``callback(t, history)``, if given, is called once the machine fitted with ``M_t`` is
        recorded (``history`` holds ``t + 1`` entries per list), except for the last iteration
        and for the one at which ``early_stopping`` ends the fit; a true return value stops the
        fit there, with ``M_ = M_t``. ``n_iter_`` is the last ``t`` fitted.

        Examples
        --------
        >>> ds = modular_arithmetic(5, seed=0)
        >>> rfm = RecursiveFeatureMachine(iters=1).fit(ds.X_train, ds.y_train)
        >>> len(rfm.history_['train_acc'])
        2
        >>> stop = lambda t, h: h["train_acc"][-1] == 1.0       # stop once it interpolates
        >>> RecursiveFeatureMachine(iters=5).fit(ds.X_train, ds.y_train, callback=stop).n_iter_
        0
        >>> es = RecursiveFeatureMachine(iters=8, ridge=1e-3, early_stopping=1.1)
        >>> es = es.fit(ds.X_train, ds.y_train, ds.X_test, ds.y_test)
        >>> bool(es.history_["val_mse"][es.best_iter_] == min(es.history_["val_mse"]))
        True
        """
        X, Y, X_val, Y_val, has_val, p = named_call(self, self._fit_arguments, X, Y, X_val,
                                                    Y_val, callback)
        args = {"X": X, "Y": Y, "ridge": float(self.ridge), "bandwidth": float(self.bandwidth)}
        try:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                return self._fit_checked(X, Y, X_val, Y_val, has_val, p, callback)
        except _Overflow as exc:
            raise _nonfinite_error("RecursiveFeatureMachine.fit: the kernel fit (coefficients, "
                                   "predictions or FACT matrix)", args) from exc
        except _ZeroTrace as exc:
            scales = ", ".join(f"max |{k}| = {float(np.max(np.abs(v))):.3g}"
                               for k, v in args.items() if k in ("X", "Y"))
            raise DegenerateFeaturesError(
                f"RecursiveFeatureMachine.fit: {exc} ({scales}, ridge = {self.ridge:g}); X and "
                f"Y must not be zero or numerically tiny, and ridge must not swamp the kernel "
                f"matrix (entries of order 1)") from exc
        except np.linalg.LinAlgError as exc:
            raise _linalg_failure("RecursiveFeatureMachine.fit", exc, args) from exc

    def _fit_arguments(self, X, Y, X_val, Y_val, callback) -> tuple:
        """The checked arguments of :meth:`fit`: ``(X, Y, X_val, Y_val, has_val, p)``."""
        if callback is not None and not callable(callback):
            raise TypeError(f"callback must be callable, got {type(callback).__name__}")
        X = as_matrix(X, "X")
        Y = self._targets(X, Y, "Y")
        n, d = X.shape
        if n < 1 or d < 1:
            raise ValueError(f"X must have at least one row and column, got shape {X.shape}")
        has_val = X_val is not None or Y_val is not None
        if self.early_stopping is not None and not has_val:
            raise ValueError(f"early_stopping={self.early_stopping!r} needs validation data: "
                             "call fit(X, Y, X_val, Y_val)")
        if has_val:
            if X_val is None or Y_val is None:
                raise ValueError("give both X_val and Y_val, or neither")
            X_val = as_matrix(X_val, "X_val", shape=(None, d))
            Y_val = self._targets(X_val, Y_val, "Y_val")
            if Y_val.shape[1] != Y.shape[1]:
                raise ValueError(f"Y_val must have {Y.shape[1]} columns like Y, got "
                                 f"{Y_val.shape[1]}")
        p = self.block_size
        if p is None:
            p = d // 2 if d % 2 == 0 and d >= 2 else 0
        if p and 2 * p != d:
            raise ValueError(f"block_size={p} needs d = 2 * block_size, got d={d}")
        return X, Y, X_val, Y_val, has_val, p

    def _fit_checked(self, X, Y, X_val, Y_val, has_val, p, callback):
        """The RFM loop of :meth:`fit` on checked arguments."""
        n, d = X.shape
        self.n_features_in_ = d
        hist: dict[str, list] = {k: [] for k in ("train_acc", "train_mse", "val_acc", "val_mse",
                                                 "circulant_score", "fixed_point_residual",
                                                 "update_change")}
        plan = self._plan(n, d, Y.shape[1])  # before any n x n allocation
        rng = as_rng(self.seed, "seed", record=False)
        show = n >= PROGRESS_MIN_N if self.progress is None else bool(self.progress)
        M = np.eye(d)
        iters = int(self.iters)
        self.solver_plan_ = plan
        infos = []
        bar = progress_bar(iters + 1, f"RFM ({plan.solver}, n = {n})", show, leave=True)
        A = None  # the previous iteration's coefficients: the iterative solver's start
        mult = None if self.early_stopping is None else float(self.early_stopping)
        best = None  # (validation MSE, t, M_t, coefficients) of the best iterate so far
        iterative = plan.solver == "iterative"
        # solves that only feed the next M may stop at feature_tol; the kept one reaches tol
        loose = (None if not iterative or self.feature_tol is None
                 else float(self.feature_tol))
        for t in range(iters + 1):
            A, P, F, Mn = self._step(X, Y, M, last=t == iters, plan=plan, rng=rng,
                                     progress=show, desc=f"RFM iteration {t}",
                                     x0=A if iterative else None,
                                     tol=loose if (t < iters or mult is not None) else None)
            infos.append(self._last_info)
            self.M_, self.coef_, self.X_fit_ = M, A, X
            hist["train_acc"].append(accuracy(P, Y))
            hist["train_mse"].append(float(np.mean((P - Y) ** 2)))
            if has_val:
                Pv = self._predict_checked(X_val, "X_val")
                hist["val_acc"].append(accuracy(Pv, Y_val))
                hist["val_mse"].append(float(np.mean((Pv - Y_val) ** 2)))
                if not np.isfinite(hist["val_mse"][-1]):
                    raise _nonfinite_error("RecursiveFeatureMachine.fit: the validation MSE",
                                           {"X_val": X_val, "Y_val": Y_val})
            hist["circulant_score"].append(block_circulant_score(M, p) if p else None)
            hist["fixed_point_residual"].append(_relative_gap(F, M))
            self.n_iter_ = self.best_iter_ = t
            stop = False
            if mult is not None:
                v = hist["val_mse"][-1]
                stop = best is not None and v > mult * best[0]
                if best is None or v < best[0]:
                    best = (v, t, M, A)
            if stop or t == iters or (callback is not None and callback(t, hist)):
                break
            hist["update_change"].append(_relative_gap(Mn, M))
            bar.update(1)
            bar.set_postfix_str(f"train acc {hist['train_acc'][-1]:.3f}")
            M = Mn
        bar.update(1)
        bar.close()
        if best is not None:  # early_stopping: keep the iterate of smallest validation MSE
            _, self.best_iter_, self.M_, self.coef_ = best
            if loose is not None:  # its solve stopped at feature_tol: finish it to tol
                self.coef_ = self._step(X, Y, self.M_, last=True, plan=plan, rng=rng,
                                        progress=show, desc=f"RFM iteration {self.best_iter_}",
                                        x0=self.coef_)[0]
                infos.append(self._last_info)
        self.solver_info_ = infos
        if not has_val:
            del hist["val_acc"], hist["val_mse"]
        self.history_ = hist
        return self

    # -- prediction --------------------------------------------------------------------------
    def _inputs(self, X) -> np.ndarray:
        """``X`` checked against the fitted input width, refused in the name of the public
        method that was called."""
        return named_call(self, as_matrix, X, "X", shape=(None, self.n_features_in_))

    def _inputs_targets(self, X, Y) -> tuple[np.ndarray, np.ndarray]:
        """``X`` and ``Y`` of :meth:`score` and :meth:`accuracy`, refused in their name."""
        try:
            X = as_matrix(X, "X")
            return X, self._targets(X, Y, "Y", fitted=True)
        except (TypeError, ValueError) as exc:
            raise name_method(exc, self) from None

    def _check_fitted(self) -> None:
        if not hasattr(self, "coef_"):
            raise RuntimeError("this RecursiveFeatureMachine is not fitted yet; call fit first")

    def predict(self, X) -> np.ndarray:
        """``f(x) = Σ_j a_j k_{M_}(x, x_j)`` for each row, an ``m × c`` array (computed in row
        blocks of ``X``, never an ``m × n`` kernel matrix).

        Examples
        --------
        >>> ds = modular_arithmetic(5, seed=0)
        >>> rfm = RecursiveFeatureMachine(iters=1).fit(ds.X_train, ds.y_train)
        >>> rfm.predict(ds.X_test).shape
        (13, 5)
        """
        self._check_fitted()
        X = self._inputs(X)
        return self._predict_checked(X, "X")

    def _predict_checked(self, X: np.ndarray, name: str) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            P = _predict(self.kernel, X, self.X_fit_, self.coef_, self.M_,
                         float(self.bandwidth))
        if not _finite(P):
            raise _nonfinite_error(f"RecursiveFeatureMachine.predict: the prediction at {name}",
                                   {name: X})
        return P

    def score(self, X, Y) -> float:
        """Coefficient of determination ``R²`` averaged over outputs (scikit-learn convention).

        Examples
        --------
        >>> ds = modular_arithmetic(5, seed=0)
        >>> rfm = RecursiveFeatureMachine(iters=1).fit(ds.X_train, ds.y_train)
        >>> rfm.score(ds.X_train, ds.y_train)       # ridgeless: interpolates
        1.0
        """
        X, Y = self._inputs_targets(X, Y)
        P = self.predict(X)
        with np.errstate(over="ignore", invalid="ignore"):
            ss_res = np.sum((Y - P) ** 2, axis=0)
            ss_tot = np.sum((Y - Y.mean(axis=0)) ** 2, axis=0)
        if np.any(ss_tot == 0):
            raise ValueError("RecursiveFeatureMachine.score: a target column of Y is constant, "
                             "R² is undefined")
        if not (_finite(ss_res, ss_tot)):
            raise _nonfinite_error("RecursiveFeatureMachine.score: the sum of squares",
                                   {"X": X, "Y": Y})
        return float(np.mean(1.0 - ss_res / ss_tot))

    def accuracy(self, X, Y) -> float:
        """Classification accuracy of :meth:`predict` (argmax, or sign for one output).

        Examples
        --------
        >>> ds = modular_arithmetic(5, seed=0)
        >>> rfm = RecursiveFeatureMachine(iters=1).fit(ds.X_train, ds.y_train)
        >>> rfm.accuracy(ds.X_train, ds.y_train)
        1.0
        """
        X, Y = self._inputs_targets(X, Y)
        return accuracy(self.predict(X), Y)

    def features(self, X) -> np.ndarray:
        """Learned features ``M^{1/2} x`` (rows), the representation the kernel sees.

        Examples
        --------
        >>> ds = modular_arithmetic(5, seed=0)
        >>> rfm = RecursiveFeatureMachine(iters=1).fit(ds.X_train, ds.y_train)
        >>> rfm.features(ds.X_test).shape
        (13, 10)
        """
        self._check_fitted()
        X = self._inputs(X)
        return X @ psd_power(sym(self.M_), 0.5, name="M_")

