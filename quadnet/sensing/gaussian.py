r"""Gaussian rank-one sensing (quadnet theory §4).

Data ``x_i ~ N(0, I_d)`` i.i.d. (rows of ``X``, ``m x d``), measurement matrices
``A_i = x_i x_i^T`` and ``y_i = x_i^T Q* x_i (+ noise)``. The binding normalisation is

    L(U) = (1/(2m)) sum_i (||U^T x_i||^2 - y_i)^2,

so with residuals ``res_i = x_i^T Q x_i - y_i``:

* ``S = sym grad ell(Q) = (1/m) sum_i res_i A_i = (1/m) X^T diag(res) X``;
* ``grad L(U) = 2 S U = (2/m) X^T (res * (X U))``;
* ``ell`` is quadratic in ``Q`` and ``DS[H] = T_m(H) = (1/m) sum_i <A_i, H> A_i``
  (the empirical normal operator);
* ``D^2 L(U)[xi] = 2 S xi + 2 T_m(xi U^T + U xi^T) U
  = (2/m) X^T (res * (X xi) + a * (X U))`` with ``a_i = 2 <(X xi)_i, (X U)_i>``
  (``<A_i, xi U^T + U xi^T> = 2 (x_i^T xi)(U^T x_i)``).

The factor paths never form an ``A_i``, a ``d x d`` matrix or an ``m x d x d`` array: each
costs two or three ``O(m d r)`` products (``X U``, ``X xi``, ``X^T W``) and ``O(m r)``
memory besides ``X``. Predictor-level methods (``value``, ``gradient``, ``hessian_vector``,
``normal_operator``) cost ``O(m d^2)`` and one ``m x d`` temporary.

Population operator: ``T(H) = E[(x^T H x) x x^T] = 2 H + tr(H) I`` (Isserlis), inverse
``T^{-1}(Y) = (Y - tr(Y)/(d+2) I) / 2``.
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import scipy.linalg

from quadnet._docstrings import fill
from quadnet._linalg import rel_diff, sym
from quadnet._validation import (
    Array,
    Bind,
    Boolean,
    Converted,
    Integer,
    Instance,
    Options,
    Real,
    Relation,
    rank_at_most_dimension,
    Seed,
    as_directions,
    declare_params,
    memory_guard,
    to_rng,
    nested,
    validate_params,
)
from quadnet.losses import FACTOR_U, TANGENT_XI, Loss, finite_result
from quadnet.sensing._fields import FIELD, HERMITIAN_OR_SYMMETRIC, field_matches
from quadnet.sensing.population import PopulationInverse

from quadnet.exceptions import SpectralInitWarning

__all__ = [
    "GaussianSensing",
    "inverse_population_normal_operator",
    "population_normal_operator",
    "spectral_init",
]

#: The parameters the real and complex spectral starts document alike (``{{spectral_start}}``).
_SPECTRAL_DOC = {"spectral_start": """r : int
    Rank, ``1 <= r <= d``.
strict : bool, default True
    Raise (rather than pad) when fewer than ``r`` eigenvalues are positive.
method : {"auto", "lanczos", "dense"}
    The eigensolver route."""}


#: ``spectral_init(method="auto")`` uses Lanczos from this dimension on. Measured by
#: ``benchmarks/bench_sensing.py --spectral-only`` (r = 5, one BLAS thread, CPU time, load
#: 6.6-9): Lanczos / dense = 1.91 at (d, m) = (400, 20000), 1.46 at (700, 20000), 1.02 at
#: (1000, 20000), 0.75 at (2000, 8000); peak temporaries 0.2-1.1 MiB against 15-47 MiB for the
#: dense route (row-blocked adjoint, (d, m) = (400, 20000) and (1000, 20000)).
LANCZOS_MIN_D = 1000

#: Rows of ``X`` per block in the Lanczos products (512 x d float64: 1.6 MB at d = 400).
LANCZOS_ROWS = 512

#: Scratch entries (float64) per block of directions in :meth:`GaussianSensing.hvp_at`.
HVP_SCRATCH_ENTRIES = 1 << 22
#: Bytes of ``X`` per row block of one Hessian-vector product: both products with a block of
#: ``X`` run while it is in cache, so ``X`` is read from memory once per product, not twice
#: (``benchmarks/bench_curvature.py --hvp-only``: 0.094 s against 0.129-0.16 s at
#: ``d = 1000, m = 100,000, r = 10``).
HVP_ROW_BLOCK_BYTES = 1 << 23


@validate_params({"field": FIELD, "H": HERMITIAN_OR_SYMMETRIC},
                 relations=[field_matches(("H",))])
def population_normal_operator(H, *, field: str = "real") -> np.ndarray:
    r"""The population normal operator of Gaussian rank-one sensing (quadnet theory §4).

    .. math:: T(H) = \mathbb E\left[(x^\top H x)\, x x^\top\right] = 2H + \operatorname{tr}(H) I,
              \qquad x \sim N(0, I_d) \quad (\texttt{field="real"}),

    .. math:: T(H) = \mathbb E\left[(a^* H a)\, a a^*\right] = H + \operatorname{tr}(H) I,
              \qquad a \sim CN(0, I_d) \quad (\texttt{field="complex"}).

    Both are Isserlis' theorem (Isserlis 1918; Wick 1950). Real: the fourth moment
    ``E[x_a x_b x_c x_e]`` is the sum over the three pairings, giving
    ``tr(H) delta_ce + H_ce + H_ec``. Complex (``a = (g + i h)/sqrt 2``, ``g, h ~ N(0, I)``
    independent, so ``E a a^* = I`` and ``E a a^T = 0``): only pairings of an ``a`` with an
    ``conj(a)`` survive, ``E[conj(a_i) a_j a_p conj(a_q)] = delta_ij delta_pq +
    delta_iq delta_jp``, one pairing fewer, hence ``H`` once instead of twice.

    Parameters
    ----------
    H : array_like, shape (d, d)
        Symmetric (``field="real"``) or Hermitian (``field="complex"``; a real symmetric
        ``H`` is accepted there too).
    field : {"real", "complex"}, default "real"
        The field of the design. A complex ``H`` with ``field="real"`` is refused naming ``H``.

    Returns
    -------
    numpy.ndarray, shape (d, d)
        float64 for a real ``H``, complex128 for a complex one.

    Examples
    --------
    >>> import numpy as np
    >>> population_normal_operator(np.eye(2))
    array([[4., 0.],
           [0., 4.]])
    >>> population_normal_operator(np.array([[1.0, 1j], [-1j, 0.0]]), field="complex")
    array([[2.+0.j, 0.+1.j],
           [0.-1.j, 1.+0.j]])
    """
    scale = 2.0 if field == "real" else 1.0
    return scale * H + np.trace(H) * np.eye(H.shape[0])


@validate_params({"field": FIELD, "Y": HERMITIAN_OR_SYMMETRIC},
                 relations=[field_matches(("Y",))])
def inverse_population_normal_operator(Y, *, field: str = "real") -> np.ndarray:
    r"""Inverse of the population normal operator (quadnet theory §4).

    .. math:: T^{-1}(Y) = \tfrac12 \left(Y - \frac{\operatorname{tr} Y}{d+2} I\right)
              \quad (\texttt{field="real"}), \qquad
              T^{-1}(Y) = Y - \frac{\operatorname{tr} Y}{d+1} I
              \quad (\texttt{field="complex"}).

    Real: ``tr T(H) = (d+2) tr H``, so ``tr H = tr Y / (d+2)`` and ``H = (Y - tr(H) I) / 2``.
    Complex: ``tr T(H) = (d+1) tr H``, so ``H = Y - tr(Y)/(d+1) I``.

    Parameters
    ----------
    Y : array_like, shape (d, d)
        Symmetric (``field="real"``) or Hermitian (``field="complex"``).
    field : {"real", "complex"}, default "real"
        The field of the design (see :func:`population_normal_operator`).

    Returns
    -------
    numpy.ndarray, shape (d, d)
        The ``H`` with ``T(H) = Y`` (symmetric or Hermitian, as ``Y``).

    Examples
    --------
    >>> import numpy as np
    >>> H = np.array([[1.0, 2.0], [2.0, -1.0]])
    >>> bool(np.allclose(inverse_population_normal_operator(population_normal_operator(H)), H))
    True
    >>> Hc = np.array([[1.0, 2j], [-2j, -1.0]])
    >>> Tc = population_normal_operator(Hc, field="complex")
    >>> bool(np.allclose(inverse_population_normal_operator(Tc, field="complex"), Hc))
    True
    """
    if field == "complex":
        return _inverse_population_normal_operator_complex(Y)
    return _inverse_population_normal_operator(Y)


def _inverse_population_normal_operator(Y: np.ndarray) -> np.ndarray:
    d = Y.shape[0]
    return 0.5 * (Y - (np.trace(Y) / (d + 2)) * np.eye(d))


def _inverse_population_normal_operator_complex(Y: np.ndarray) -> np.ndarray:
    d = Y.shape[0]
    return Y - (np.trace(Y) / (d + 1)) * np.eye(d)


def _nonzero_star(args) -> str | None:
    return None if np.any(args["Q_star"]) else "Q_star must be nonzero to define a relative error"


def _real_or_complex(value, name: str) -> np.ndarray:
    if np.iscomplexobj(value) and not isinstance(value, (str, bytes)):
        from quadnet.sensing._fields import as_complex

        return as_complex(value, name, ndim=2)
    from quadnet._validation import as_matrix

    return as_matrix(value, name)


_MATRIX = Converted(_real_or_complex, "a finite real or complex matrix",
                    bad=[("string", "abc"), ("None", None), ("1-d", np.ones(3)),
                         ("nan", np.full((2, 2), np.nan))])


def _same_shape(args) -> str | None:
    a, b = args["Q"].shape, args["Q_star"].shape
    return None if a == b else f"Q and Q_star must have the same shape, got {a} and {b}"


@validate_params({"Q": _MATRIX, "Q_star": _MATRIX},
                 relations=[Relation(("Q", "Q_star"), _same_shape, "the same shape"),
                            Relation(("Q_star",), _nonzero_star, "``Q_star`` is nonzero")])
def relative_error(Q, Q_star) -> float:
    """``||Q - Q*||_F / ||Q*||_F`` (the recovery error used throughout; real or complex).

    Examples
    --------
    >>> relative_error([[2.0]], [[1.0]])
    1.0
    >>> round(relative_error([[1j]], [[1.0]]), 12)        # |i - 1|
    1.414213562373
    """
    if not np.any(Q_star):
        raise ValueError("Q_star must be nonzero to define a relative error")
    if np.iscomplexobj(Q) or np.iscomplexobj(Q_star):
        s = float(np.max(np.abs(Q_star)))
        return float(np.linalg.norm(Q / s - Q_star / s) / np.linalg.norm(Q_star / s))
    return rel_diff(Q, Q_star)


#: The problem class of each field: ``"complex"`` is registered by
#: :mod:`quadnet.sensing.complex_gaussian` (imported with the package), so that this module
#: does not import it.
FIELD_CLASSES: dict[str, type] = {}

#: The preprocessings of the spectral initialiser (``spectral_init(preprocessing=...)``).
PREPROCESSINGS = ("identity", "optimal")


def _real_preprocessing(args) -> str | None:
    if args["preprocessing"] == "identity":
        return None
    return ("preprocessing='optimal' (Luo, Alghamdi & Lu 2019) is implemented for complex "
            "Gaussian designs (field='complex'); a real design takes "
            "preprocessing='identity'")


def _one_y_per_row(args) -> str | None:
    m, n = args["X"].shape[0], args["y"].shape[0]
    if m != n:
        return f"y must have one entry per row of X: len(y) = {n} but X has m = {m} rows"
    return None


_r_le_d = rank_at_most_dimension  # the one r <= d check (quadnet._validation)


def _random_bytes(args) -> float:
    d, r, m = args["d"], args["r"], args["m"]
    # X (m x d), X U* (m x r), y and the noise (m each), U* and Q* (d x r, d x d), as float64
    words = 8.0 * (m * d + m * r + 2 * m + d * r + d * d)
    return 2.0 * words if args.get("field") == "complex" else words


def _eigensolver(method: str, d: int, r: int) -> str:
    """The route of ``spectral_init(method=...)``: ``"auto"`` is Lanczos from
    ``d >= LANCZOS_MIN_D`` (and ``r < d - 1``), and ARPACK needs ``r < d - 1`` in any case."""
    if method == "auto":
        method = "lanczos" if d >= LANCZOS_MIN_D and r < d - 1 else "dense"
    if method == "lanczos" and r >= d - 1:
        method = "dense"   # ARPACK needs k < n - 1
    return method


#: The folder of the quadnet package: a warning names the first frame outside it.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _caller_stacklevel() -> int:
    """The ``stacklevel`` of a ``warnings.warn`` in the function calling this one that names
    the first frame outside the package (the user's call, through any validated wrapper and
    any entry point: the method and the module function differ in depth)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def _spectral_start(lam: np.ndarray, V: np.ndarray, r: int, strict: bool,
                    matrix: str) -> np.ndarray:
    """``V diag(sqrt(lam))`` from top-``r`` eigenpairs (decreasing) of the matrix named by
    ``matrix``. Fewer than ``r`` positive eigenvalues: ``ValueError`` naming ``r``, or with
    ``strict=False`` a :class:`SpectralInitWarning` (at the caller's line outside the package)
    and padding by ``1e-6 lambda_max``; none positive: ``ValueError`` whatever ``strict`` says."""
    npos = int(np.sum(lam > 0))
    if npos < r:
        msg = (f"spectral initialiser: {matrix} has only {npos} positive eigenvalue(s) "
               f"among its top r = {r}; the measurements do not determine a rank-{r} start")
        if strict or npos == 0:
            raise ValueError(msg + (" (pass strict=False to pad)" if npos else ""))
        warnings.warn(msg + "; padding with 1e-6 * lambda_max", SpectralInitWarning,
                      stacklevel=_caller_stacklevel())
        lam = np.where(lam > 0, lam, 1e-6 * lam[0])
    return V * np.sqrt(lam)


class GaussianSensing(Loss):
    r"""Rank-one Gaussian sensing loss (quadnet theory §4), in ``O(m d r)`` per factor call.

    .. math:: L(U) = \frac{1}{2m} \sum_{i=1}^m \left(\|U^\top x_i\|^2 - y_i\right)^2,
              \qquad A_i = x_i x_i^\top,

    with the predictor-level loss ``ell(Q) = (1/(2m)) ||A(Q) - y||^2``. No ``m x d x d`` array
    and no per-measurement ``d x d`` matrix is ever formed.

    With ``field="complex"`` the design is complex, rows ``a_i^*``, and the instance is the
    complex problem ``y_i = a_i^* Q a_i = ||U^* a_i||^2`` with Hermitian ``Q = U U^*``
    (:class:`quadnet.sensing.complex_gaussian.ComplexGaussianSensing`, a subclass; same
    loss normalisation ``1/(2m)``, gradients for the real inner product ``Re tr(xi^* eta)``).

    Parameters
    ----------
    X : array_like, shape (m, d)
        Design, rows ``x_i`` (finite). Stored C-contiguous float64, not copied when already so
        (complex128 for ``field="complex"``). A complex ``X`` with ``field="real"`` is refused
        naming ``X``.
    y : array_like, shape (m,)
        Measurements (finite, real).
    field : {"real", "complex"}, default "real"
        The field of the design.

    Attributes
    ----------
    X, y, m, d
        The data and its sizes.
    U_star, Q_star : numpy.ndarray or None
        The planted truth for :meth:`random` instances, ``None`` otherwise.
    noise : float
        Standard deviation of the additive noise of :meth:`random` (0 otherwise).

    Examples
    --------
    >>> import numpy as np
    >>> prob = GaussianSensing.random(5, 2, 60, seed=0)
    >>> prob.factor_value(prob.U_star)
    0.0
    >>> bool(np.allclose(prob.factor_gradient(prob.U_star), 0.0))
    True
    >>> pr = GaussianSensing.random(5, 1, 40, seed=0, field="complex")   # phase retrieval
    >>> pr.field, pr.X.dtype, pr.factor_value(pr.U_star * 1j)            # U(1) invariance
    ('complex', dtype('complex128'), 0.0)
    """

    #: The field of the design (``"real"`` here; ``"complex"`` for a complex design).
    field = "real"
    #: The dtype of the design and the factors, and the one of :meth:`single_precision_hvp_at`.
    _DTYPE = np.float64
    _LOW_DTYPE = np.float32

    def __new__(cls, *args, **kwargs):
        # GaussianSensing(X, y, field="complex") is the complex problem (quadnet.sensing.
        # complex_gaussian); pickling calls __new__(cls) alone, so arguments are optional
        if cls is GaussianSensing:
            field = kwargs.get("field", "real")
            if field == "complex":
                return object.__new__(FIELD_CLASSES["complex"])
            X = args[0] if args else kwargs.get("X")
            if field == "real" and isinstance(X, np.ndarray) and np.iscomplexobj(X):
                raise TypeError(f"GaussianSensing: X is complex (dtype {X.dtype}) but "
                                f"field='real' is declared; pass field='complex' for a "
                                f"complex design")
        return object.__new__(cls)

    @validate_params({"field": FIELD, "X": Array(shape=("m", "d")), "y": Array(ndim=1)},
                     relations=[Relation(("X", "y"), _one_y_per_row,
                                         "``len(y)`` equals the number of rows of ``X``")])
    def __init__(self, X, y, *, field: str = "real"):
        self.X = np.ascontiguousarray(X, dtype=float)   # checked once (also when nested)
        self.y = np.ascontiguousarray(y, dtype=float)
        self.m, self.d = m, d = self.X.shape
        self.U_star: np.ndarray | None = None
        self.Q_star: np.ndarray | None = None
        self.noise = 0.0

    @classmethod
    @validate_params({"d": Integer(1), "r": Integer(1), "m": Integer(1), "seed": Seed(),
                      "noise": Real(0), "field": FIELD},
                     relations=[Relation(("r", "d"), _r_le_d, "``r <= d``"),
                                memory_guard(("d", "r", "m"), _random_bytes,
                                             "the design X (m x d float64) and the planted "
                                             "truth")])
    def random(cls, d: int, r: int, m: int, *, seed=None, noise: float = 0.0,
               field: str = "real") -> GaussianSensing:
        r"""A planted instance: ``U*`` with i.i.d. ``N(0, 1/d)`` entries, ``X`` i.i.d. ``N(0, 1)``.

        ``y_i = ||U*^T x_i||^2 + noise * g_i`` with ``g_i ~ N(0, 1)`` (quadnet theory §4). Draw
        order from the stream of ``seed``: ``U*``, then ``X``, then the noise (only if
        ``noise > 0``), so the same seed gives the same bits.

        ``field="complex"``: ``U*`` has i.i.d. ``CN(0, 1/d)`` entries and the rows of ``X`` are
        ``a_i^*`` with ``a_i ~ CN(0, I_d)`` (real and imaginary parts i.i.d. ``N(0, 1/2)``,
        so ``E a a^* = I`` and ``E ||U*||_F^2 = r`` as in the real case); ``y_i =
        ||U*^* a_i||^2 + noise * g_i``, still real. Each complex array is drawn as one block
        of ``2 n`` standard normals read as interleaved (real, imaginary) pairs, in the same
        order ``U*``, ``X``, noise.

        Parameters
        ----------
        d, r, m : int
            Sizes, ``1 <= r <= d``, ``m >= 1``.
        seed : int, sequence of ints or numpy.random.Generator, optional
            The random stream (:func:`quadnet._validation.as_rng`).
        noise : float, default 0.0
            Noise standard deviation ``>= 0``.
        field : {"real", "complex"}, default "real"
            The field of ``U*`` and of the design.

        Returns
        -------
        GaussianSensing

        Examples
        --------
        >>> a = GaussianSensing.random(4, 1, 10, seed=3)
        >>> b = GaussianSensing.random(4, 1, 10, seed=3)
        >>> bool((a.X == b.X).all()), a.X.shape
        (True, (10, 4))
        """
        rng = to_rng(seed)   # a Generator also when called nested (table skipped)
        if field == "complex":
            return FIELD_CLASSES["complex"]._random_instance(d, r, m, rng, noise)
        U_star = rng.standard_normal((d, r)) / np.sqrt(d)
        X = rng.standard_normal((m, d))
        XU = X @ U_star
        y = np.einsum("ij,ij->i", XU, XU)
        if noise > 0:
            y = y + noise * rng.standard_normal(m)
        prob = cls(X, y)
        prob.U_star, prob.Q_star, prob.noise = U_star, U_star @ U_star.T, noise
        return prob

    # ------------------------------------------------------------ measurement map
    def measure(self, Q) -> np.ndarray:
        """``A(Q)_i = <A_i, Q> = x_i^T Q x_i`` for symmetric ``Q`` (``O(m d^2)``).

        Examples
        --------
        >>> import numpy as np
        >>> prob = GaussianSensing(np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([1.0, 4.0]))
        >>> prob.measure(np.eye(2)).tolist()          # |x_i|^2
        [1.0, 2.0]
        """
        return self._measure(self._predictor(Q))

    def _measure(self, Q: np.ndarray) -> np.ndarray:
        return np.einsum("ij,ij->i", self.X @ Q, self.X)

    def _adjoint(self, w: np.ndarray) -> np.ndarray:
        """``(1/m) sum_i w_i A_i = (1/m) X^T diag(w) X`` (symmetric to the last bit)."""
        X, b = self.X, 8 * LANCZOS_ROWS
        if self.m <= b:
            G = X.T @ (w[:, None] * X)
        else:  # row blocks: an (8 * 512) x d scratch instead of an m x d one
            G = np.zeros((self.d, self.d))
            for s in range(0, self.m, b):
                G += X[s:s + b].T @ (w[s:s + b, None] * X[s:s + b])
        return sym(G / self.m)

    def normal_operator(self, H) -> np.ndarray:
        """Empirical normal operator ``T_m(H) = (1/m) sum_i <A_i, H> A_i``.

        Examples
        --------
        >>> import numpy as np
        >>> prob = GaussianSensing(np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([1.0, 4.0]))
        >>> prob.normal_operator(np.eye(2)).tolist()
        [[1.5, 1.0], [1.0, 1.0]]
        """
        return self._adjoint(self._measure(self._sym_direction(H)))

    # ------------------------------------------------------------ predictor level
    @finite_result("Q")
    def value(self, Q) -> float:
        """``ell(Q) = (1/(2m)) ||A(Q) - y||^2``."""
        res = self.measure(Q) - self.y
        return float(res @ res) / (2 * self.m)

    def gradient(self, Q) -> np.ndarray:
        """``S = (1/m) sum_i (A(Q)_i - y_i) A_i``."""
        return self._adjoint(self.measure(Q) - self.y)

    def hessian_vector(self, Q, H) -> np.ndarray:
        """``DS[H] = T_m(H)`` (``ell`` is quadratic, so independent of ``Q``)."""
        self._predictor(Q)
        return self._adjoint(self._measure(self._sym_direction(H)))

    # --------------------------------------------------------------- factor level
    # the field hooks of the factor paths (the complex problem overrides them)
    @staticmethod
    def _coords(A: np.ndarray) -> np.ndarray:
        """The real coordinates of ``A`` (``A`` itself here)."""
        return A

    @staticmethod
    def _xt(X: np.ndarray, W: np.ndarray) -> np.ndarray:
        """``X^T W`` (``X^* W`` for a complex design)."""
        return X.T @ W

    def _directions(self, xi, shape: tuple[int, int]):
        """``(stack, single)``: one direction or a stack of them, checked."""
        return as_directions(xi, "xi", shape)

    def _residual(self, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        XU = self.X @ U
        v = self._coords(XU)
        res = np.einsum("ij,ij->i", v, v)
        res -= self.y
        return XU, res

    @declare_params({"U": FACTOR_U})
    @finite_result("U")
    def factor_value(self, U) -> float:
        """``L(U)`` in ``O(m d r)``."""
        _, res = self._residual(self._factor(U))
        return float(res @ res) / (2 * self.m)

    @declare_params({"U": FACTOR_U})
    @finite_result("U")
    def factor_gradient(self, U) -> np.ndarray:
        """``grad L(U) = (2/m) X^T (res * (X U))`` in ``O(m d r)``."""
        return self._value_and_gradient(self._factor(U))[1]

    @declare_params({"U": FACTOR_U})
    @finite_result("U")
    def factor_value_and_gradient(self, U) -> tuple[float, np.ndarray]:
        """``(L(U), grad L(U))`` sharing the product ``X U`` (for quasi-Newton methods).

        Examples
        --------
        >>> import numpy as np
        >>> prob = GaussianSensing(np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([1.0, 4.0]))
        >>> U = np.array([[1.0], [1.0]])
        >>> val, g = prob.factor_value_and_gradient(U)
        >>> val == prob.factor_value(U), bool(np.array_equal(g, prob.factor_gradient(U)))
        (True, True)
        """
        return self._value_and_gradient(self._factor(U))

    def _value_and_gradient(self, U: np.ndarray) -> tuple[float, np.ndarray]:
        """Unchecked ``(L(U), grad L(U))`` for a validated ``d x r`` float64 ``U`` (inner loops)."""
        XU, res = self._residual(U)
        val = float(res @ res) / (2 * self.m)
        XU *= res[:, None]
        G = self._xt(self.X, XU)
        G *= 2.0 / self.m
        return val, G

    @declare_params({"U": FACTOR_U, "xi": TANGENT_XI})
    @finite_result("U")
    def factor_hvp(self, U, xi) -> np.ndarray:
        """``D^2 L(U)[xi] = (2/m) X^T (res * (X xi) + a * (X U))``, ``a_i = 2 <(X xi)_i, (X U)_i>``.

        Equals ``2 S xi + 2 T_m(xi U^T + U xi^T) U`` (module docstring), in ``O(m d r)``.
        One direction of :meth:`hvp_at`.
        """
        U = self._factor(U)
        xi = self._tangent(xi, U)
        return self._hvp_columns(*self._residual(U), np.asarray(xi, dtype=self._DTYPE))

    def _hvp_columns(self, XU: np.ndarray, res: np.ndarray, W: np.ndarray,
                     X: np.ndarray | None = None) -> np.ndarray:
        """The formula of :meth:`factor_hvp` on ``W = [xi_1 ... xi_c]`` (``d x c r``), all at once.

        Two products with each row block of ``X`` (``HVP_ROW_BLOCK_BYTES``: the block is still
        in cache for the second), BLAS-3 when ``c > 1``; returns ``[D^2 L(U)[xi_1] ...]``.
        ``X`` (default ``self.X``) may be the single-precision copy; ``XU``, ``res`` and
        ``W`` must then be single precision too, and so is the result.
        """
        m, r = self.m, XU.shape[1]
        X = self.X if X is None else X
        rows = max(256, HVP_ROW_BLOCK_BYTES // (X.itemsize * X.shape[1]))
        out = None
        for s in range(0, m, rows):
            Xb, XUb = X[s:s + rows], XU[s:s + rows]
            XW = Xb @ W
            V = XW.reshape(len(Xb), -1, r)                    # (rows, c, r) view
            a = 2.0 * np.einsum("ick,ik->ic", self._coords(V), self._coords(XUb))
            V *= res[s:s + rows, None, None]
            V += a[:, :, None] * XUb[:, None, :]
            part = self._xt(Xb, XW)
            if out is None:
                out = part
            else:
                out += part
        out *= 2.0 / m
        return out

    @declare_params({"U": FACTOR_U})
    def single_precision_hvp_at(self, U):
        """:meth:`hvp_at` with ``X``, ``X U``, the residuals and the directions in float32.

        The products read half the bytes of the float64 ones (``X`` is the cost); results are
        returned as float64. The float32 copy of ``X`` (``4 m d`` bytes) is made on the first
        call and kept. ``X U`` and the residuals are computed in float64 and rounded, so the
        relative error of a product is a few float32 roundings (``~1e-7``, at most ``1e-5``
        in the tests), whatever ``m``. :func:`quadnet.effective_spectrum` with
        ``precision="mixed"`` iterates with it and measures in float64.

        Examples
        --------
        >>> import numpy as np
        >>> prob = GaussianSensing.random(20, 2, 500, seed=0)
        >>> xi = np.random.default_rng(1).standard_normal((20, 2))
        >>> h64, h32 = prob.hvp_at(prob.U_star)(xi), prob.single_precision_hvp_at(prob.U_star)(xi)
        >>> h32.dtype, bool(np.linalg.norm(h32 - h64) <= 1e-5 * np.linalg.norm(h64))
        (dtype('float64'), True)
        """
        U = self._factor(U)
        if getattr(self, "_X_low", None) is None:
            self._X_low = self.X.astype(self._LOW_DTYPE)
        XU, res = self._residual(U)
        return self._hvp_map(XU.astype(self._LOW_DTYPE), res.astype(np.float32), self._X_low)

    def _hvp_map(self, XU: np.ndarray, res: np.ndarray, X: np.ndarray | None = None):
        """``xi -> D^2 L(U)[xi]`` on one direction or a stack, in blocks of directions; with a
        single-precision ``X`` (and ``XU``, ``res``) the directions are rounded to it too."""
        d, r = self.d, XU.shape[1]
        words = np.dtype(self._DTYPE).itemsize // 8        # float64 words per entry
        block = max(1, HVP_SCRATCH_ENTRIES // (words * self.m * r))
        low = X is not None and X.dtype == self._LOW_DTYPE

        def apply(xi) -> np.ndarray:
            if nested() and isinstance(xi, np.ndarray) and xi.ndim in (2, 3):
                stack, single = (xi[None], True) if xi.ndim == 2 else (xi, False)
            else:
                stack, single = self._directions(xi, (d, r))
            if single and not low:
                return self._hvp_columns(XU, res, stack[0].astype(self._DTYPE, copy=False))
            out = np.empty(stack.shape, dtype=self._DTYPE)
            for s in range(0, len(stack), block):
                Z = stack[s:s + block].astype(self._LOW_DTYPE if low else self._DTYPE, copy=False)
                G = self._hvp_columns(XU, res, Z.transpose(1, 0, 2).reshape(d, -1), X)
                out[s:s + block] = G.reshape(d, len(Z), r).transpose(1, 0, 2)
            return out[0] if single else out
        return apply

    @declare_params({"U": FACTOR_U})
    def hvp_at(self, U):
        """``xi -> D^2 L(U)[xi]`` (formula of :meth:`factor_hvp`) with ``X U`` and ``res`` computed once.

        Takes one ``d x r`` direction or a stack ``(b, d, r)``. A stack is applied in blocks
        of ``c`` directions with two GEMMs each, ``X (d x c r)`` and ``X^T (m x c r)``
        (BLAS-3; ``c r m <= HVP_SCRATCH_ENTRIES = 2^22``: two 32 MB temporaries), instead of
        ``2 b`` thin products. Cost ``O(m d r)`` per direction either way; never an
        ``m x d x d`` array.

        Examples
        --------
        >>> import numpy as np
        >>> prob = GaussianSensing(np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([1.0, 4.0]))
        >>> U = np.array([[1.0], [1.0]]); xi = np.array([[1.0], [0.0]])
        >>> bool(np.allclose(prob.hvp_at(U)(xi), prob.factor_hvp(U, xi)))
        True
        """
        U = self._factor(U)
        return self._hvp_map(*self._residual(U))

    @validate_params({"self": Bind(d="d"), "U": FACTOR_U},
                     relations=[memory_guard(("U",), lambda a: 16.0 * a["self"].m * a["U"].size,
                                             "the Gram factor K (m x d r float64)")])
    def gram_factor(self, U) -> np.ndarray:
        r"""The measurement Gram factor ``K`` at ``U``: rows ``(2/sqrt m) vec(x_i (U^T x_i)^T)``.

        The Gauss-Newton part of the factor Hessian is ``K^T K`` (quadnet theory §3, §4):

        .. math:: \frac1m \sum_i \langle A_i, \xi U^\top + U \xi^\top \rangle^2
                  = \frac4m \sum_i \langle x_i (U^\top x_i)^\top, \xi \rangle^2
                  = \|K \operatorname{vec}(\xi)\|^2 ,

        so ``D^2 L(U) = K^T K + 2 S (x) I_r``; :func:`quadnet.curvature.gram_effective_spectrum`
        uses it (one ``K^T K`` product instead of ``n_h`` Hessian-vector products). Memory
        ``m d r`` doubles.

        Parameters
        ----------
        U : array_like, shape (d, r)

        Returns
        -------
        numpy.ndarray, shape (m, d r)
            Row-major ``vec`` of each ``x_i (U^T x_i)^T``, scaled by ``2 / sqrt(m)``.

        Examples
        --------
        >>> import numpy as np
        >>> prob = GaussianSensing.random(4, 2, 30, seed=0)
        >>> K = prob.gram_factor(prob.U_star)       # at U*: residual 0, so D^2 L = K^T K
        >>> xi = np.arange(8.0).reshape(4, 2)
        >>> bool(np.allclose(K.T @ (K @ xi.ravel()), prob.factor_hvp(prob.U_star, xi).ravel()))
        True
        """
        XU = self.X @ U
        m, d = self.X.shape
        K = self.X[:, :, None] * XU[:, None, :]
        K *= 2.0 / np.sqrt(m)
        return K.reshape(m, d * U.shape[1])

    # ------------------------------------------------------------ initialisation
    @declare_params({"U": FACTOR_U})
    def default_preconditioner(self, U):
        """The inverse of the population effective Hessian at ``U`` (quadnet theory §4).

        Used by ``effective_spectrum(..., preconditioner="auto")``; see
        :class:`quadnet.PopulationInverse`.
        """
        return PopulationInverse(self._factor(U))

    def moment_matrix(self) -> np.ndarray:
        """``M = (1/m) sum_i y_i x_i x_i^T`` (``= T_m(Q*)`` without noise).

        Examples
        --------
        >>> import numpy as np
        >>> prob = GaussianSensing(np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([1.0, 4.0]))
        >>> prob.moment_matrix().tolist()             # (1/m) sum y_i x_i x_i^T
        [[2.5, 2.0], [2.0, 2.0]]
        """
        return self._adjoint(self.y)

    @validate_params({"self": Bind(d="d"), "r": Integer(1), "strict": Boolean(),
                      "method": Options("auto", "lanczos", "dense"),
                      "preprocessing": Options(*PREPROCESSINGS)},
                     relations=[Relation(("r",), _r_le_d, "``r <= d``"),
                                Relation(("preprocessing",), _real_preprocessing,
                                         "``preprocessing='identity'`` for a real design")])
    @fill(_SPECTRAL_DOC)
    def spectral_init(self, r: int, *, strict: bool = True, method: str = "auto",
                      preprocessing: str = "identity") -> np.ndarray:
        r"""Spectral (moment) initialiser ``U_0 = V_r diag(sqrt(lambda_r))`` (quadnet theory §4).

        ``(lambda_r, V_r)`` are the top-``r`` eigenpairs of ``Q_hat = T^{-1}(M)``, with the
        moment matrix ``M = (1/m) sum_i y_i x_i x_i^T`` and
        ``T^{-1}(Y) = (Y - tr(Y)/(d+2) I) / 2``. On ``vec`` the inverse normal operator is
        ``1/2`` times the identity minus a rank-one term (``vec(I) vec(I)^T / (d+2)``); applied
        to ``M`` the rank-one term is a multiple of ``I``, so

        .. math:: \hat Q = \tfrac12 \left(M - c I\right), \quad
                  c = \frac{\operatorname{tr} M}{d+2} = \frac{1}{m(d+2)} \sum_i y_i \|x_i\|^2,

        which has the eigenvectors of ``M`` and eigenvalues ``(mu - c) / 2``. Two routes:

        * ``"lanczos"``: ARPACK (``scipy.sparse.linalg.eigsh``, ``which="LA"``,
          ``tol = 1e-10``, start vector ``1``) on ``v -> (X^T (y * X v) / m - c v) / 2``:
          ``O(m d)`` per product, never a ``d x d`` matrix;
        * ``"dense"``: forms ``M`` (one ``O(m d^2)`` GEMM) and takes the top-``r`` pairs by
          ``scipy.linalg.eigh``.

        ``"auto"`` (default) takes ``"lanczos"`` for ``d >= LANCZOS_MIN_D = 1000`` (and
        ``r < d - 1``), else ``"dense"``. Each Lanczos product streams all of ``X`` once (in
        cache-sized row blocks), and the top-``r`` gap of ``T^{-1}(M)`` is modest (ARPACK
        takes 55-110 products), so the route is memory-bound: ``benchmarks/bench_sensing.py``
        measured it 1.91x the CPU time of the dense route's one GEMM at ``d = 400,
        m = 20000``, equal at ``d = 1000`` and 0.75x at ``d = 2000``, with temporaries of
        ``O(m + d r)`` (0.2-1.1 MiB) instead of the dense route's row-block scratch and
        ``d x d`` matrix (15-47 MiB at ``d = 400``-``1000``). Both routes give the same start to ``1e-13``-``1e-10``
        relative in ``U_0 U_0^T``.

        If fewer than ``r`` of the eigenvalues are positive the positive part has rank
        ``< r`` and no full-rank ``d x r`` factor represents it: with ``strict=True``
        (default) a ``ValueError`` naming ``r`` is raised; with ``strict=False`` a
        :class:`~quadnet.exceptions.SpectralInitWarning` is issued and the non-positive
        eigenvalues are replaced by ``1e-6 lambda_max`` (a nearly rank-deficient but valid
        start). If none is positive, ``ValueError`` always.

        Parameters
        ----------
        {{spectral_start}}
        preprocessing : {"identity"}, default "identity"
            The weights ``T(y_i)`` of the moment matrix: ``"identity"`` is ``T(y) = y`` (the
            estimator above). ``"optimal"`` (Luo, Alghamdi & Lu 2019) is implemented for
            complex designs only (``field="complex"``) and refused here naming
            ``preprocessing``.

        Returns
        -------
        numpy.ndarray, shape (d, r)

        Raises
        ------
        ValueError
            For a moment matrix without ``r`` positive eigenvalues (see above).

        Examples
        --------
        >>> import numpy as np
        >>> prob = GaussianSensing.random(6, 1, 400, seed=0)
        >>> U0 = prob.spectral_init(1)
        >>> Ud = prob.spectral_init(1, method="dense")
        >>> U0.shape, bool(np.allclose(U0 @ U0.T, Ud @ Ud.T, atol=1e-9))
        ((6, 1), True)
        """
        refused = self._preprocessing_refusal(preprocessing)
        if refused:   # also inside validated callers, where the table is skipped
            raise ValueError(refused)
        if _eigensolver(method, self.d, r) == "dense":
            Q_hat = _inverse_population_normal_operator(self.moment_matrix())
            lam, V = scipy.linalg.eigh(Q_hat, subset_by_index=[self.d - r, self.d - 1])
        else:
            lam, V = self._spectral_lanczos(r)
        order = np.argsort(lam)[::-1]
        return _spectral_start(lam[order], V[:, order], r, strict, "T^-1(M)")

    def _preprocessing_refusal(self, preprocessing: str) -> str | None:
        """Why ``preprocessing`` cannot run on this problem, or ``None``."""
        return _real_preprocessing({"preprocessing": preprocessing})

    def _spectral_lanczos(self, r: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``r`` eigenpairs of ``T^{-1}(M)`` by ARPACK on ``O(m d)`` products.

        A product ``v -> X^T (y * (X v)) / m`` runs over row blocks of ``LANCZOS_ROWS`` rows,
        so each block of ``X`` is read from memory once and reused from cache (1.5x faster
        than two full passes at ``d = 400``, measured); ``ncv = max(2 r + 1, 30)``.
        """
        import scipy.sparse.linalg as spla

        X, y, m, d = self.X, self.y, self.m, self.d
        c = float(y @ np.einsum("ij,ij->i", X, X)) / (m * (d + 2))
        b = LANCZOS_ROWS

        def matvec(v: np.ndarray) -> np.ndarray:
            v = np.asarray(v, dtype=float).ravel()
            out = np.zeros(d)
            for s in range(0, m, b):
                Xs = X[s:s + b]
                out += Xs.T @ (y[s:s + b] * (Xs @ v))
            return 0.5 * (out / m - c * v)

        op = spla.LinearOperator((d, d), matvec=matvec, dtype=float)
        ncv = min(d, max(2 * r + 1, 30))
        return spla.eigsh(op, k=r, which="LA", tol=1e-10, v0=np.ones(d), ncv=ncv)


def _preprocessing_field(args) -> str | None:
    return args["problem"]._preprocessing_refusal(args["preprocessing"])


@validate_params({"problem": Instance(GaussianSensing, "a GaussianSensing instance",
                                      dims={"d": "d"}),
                  "r": Integer(1), "preprocessing": Options(*PREPROCESSINGS),
                  "strict": Boolean(), "method": Options("auto", "lanczos", "dense")},
                 relations=[Relation(("r", "problem"), lambda a: _r_le_d(
                     {"r": a["r"], "d": a["problem"].d}), "``r <= d``"),
                            Relation(("problem", "preprocessing"), _preprocessing_field,
                                     "``preprocessing='optimal'`` needs a complex design with "
                                     "``m > d``")])
def spectral_init(problem: GaussianSensing, r: int, *, preprocessing: str = "identity",
                  strict: bool = True, method: str = "auto") -> np.ndarray:
    r"""The spectral start of a sensing problem: ``problem.spectral_init(r, ...)`` as a function.

    ``preprocessing="identity"`` weights the moment matrix by ``y_i`` and inverts the
    population operator (real: :meth:`GaussianSensing.spectral_init`; complex:
    ``T^{-1}(M) = M - tr(M)/(d+1) I``). ``preprocessing="optimal"`` (complex designs, ``m > d``)
    weights it by ``(y - 1)/(y + sqrt(m/d) - 1)`` with ``y`` divided by its mean (Luo,
    Alghamdi & Lu 2019), the preprocessing that reaches the weak-recovery threshold
    ``m/d = 1`` of complex Gaussian designs (Mondelli & Montanari 2019), and fits the
    magnitudes to the data on the eigenvectors it gives
    (:meth:`quadnet.sensing.complex_gaussian.ComplexGaussianSensing.spectral_init`).

    Parameters
    ----------
    problem : GaussianSensing
        A real or complex sensing problem.
    r : int
        Rank, ``1 <= r <= d``.
    preprocessing : {"identity", "optimal"}, default "identity"
        The weights of the spectral matrix.
    strict : bool, default True
        Raise (rather than pad) when fewer than ``r`` eigenvalues are positive.
    method : {"auto", "lanczos", "dense"}
        The eigensolver route.

    Returns
    -------
    numpy.ndarray, shape (d, r)
        float64 for a real problem, complex128 for a complex one.

    Examples
    --------
    >>> import numpy as np
    >>> prob = GaussianSensing.random(16, 1, 128, seed=0, field="complex")
    >>> u = spectral_init(prob, 1, preprocessing="optimal")
    >>> x = prob.U_star
    >>> bool(abs(np.vdot(u, x)) ** 2 > 0.5 * np.vdot(u, u).real * np.vdot(x, x).real)
    True
    >>> spectral_init(GaussianSensing.random(4, 1, 40, seed=0), 1).dtype
    dtype('float64')
    """
    return problem.spectral_init(r, strict=strict, method=method, preprocessing=preprocessing)
