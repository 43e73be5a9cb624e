r"""Complex rank-one Gaussian sensing; ``r = 1`` is phase retrieval (quadnet theory §4, complex case).

Data ``a_i ~ CN(0, I_d)`` i.i.d. (real and imaginary parts i.i.d. ``N(0, 1/2)``: ``E a a^* = I``,
``E a a^T = 0``); the design ``X`` (``m x d``, complex) has rows ``a_i^*``; measurement
matrices ``A_i = a_i a_i^*`` (Hermitian, rank one) and, for a Hermitian PSD ``Q* = U* U*^*``,

    y_i = a_i^* Q* a_i = ||U*^* a_i||^2 = ||(X U*)_i||^2    (real).

The loss keeps the normalisation of the real case (quadnet theory §4, binding):

    L(U) = (1/(2m)) sum_i (||U^* a_i||^2 - y_i)^2,    res_i = ||(X U)_i||^2 - y_i,

for complex ``d x r`` factors ``U``; ``L(U W) = L(U)`` for every unitary ``W`` (the fibre is
``U(r)``, connected). Derivatives are taken for the real inner product
``<xi, eta> = Re tr(xi^* eta)`` on ``C^{d x r}`` (``C^{d x r}`` as ``R^{2dr}``; the float view of
a complex array is its real coordinate vector), so that ``dL(U + t xi)/dt = Re tr(grad^* xi)``:

* ``dres_i[xi] = a_i^*(xi U^* + U xi^*) a_i = 2 Re <(X xi)_i, (X U)_i>``, the sum over ``k``
  of ``Re((X xi)_ik conj((X U)_ik))``;
* ``S = (1/m) sum_i res_i A_i = (1/m) X^* diag(res) X`` (Hermitian) and
  ``grad L(U) = 2 S U = (2/m) X^* (res * (X U))`` -- the Wirtinger gradient ``2 dL/d conj(U)``;
* ``D^2 L(U)[xi] = (2/m) X^* (res * (X xi) + dres[xi] * (X U))``, self-adjoint for
  ``Re tr(xi^* eta)``.

Only the thin products ``X U``, ``X xi`` and ``X^* W`` are formed (``X^* W`` as
``conj(X^T conj(W))``: no conjugate copy of ``X``), ``O(m d r)`` complex work per call -- a
complex multiply-add is four real ones -- and never an ``A_i``, a ``d x d`` matrix or an
``m x d x d`` array on the factor paths.

Population operator (complex Isserlis): ``T(H) = E[(a^* H a) a a^*] = H + tr(H) I``
(:func:`quadnet.population_normal_operator` with ``field="complex"``).
"""

from __future__ import annotations

import contextlib

import numpy as np
import scipy.linalg

from quadnet._threads import single_threaded
from quadnet._docstrings import fill
from quadnet._validation import (
    Array,
    Bind,
    Boolean,
    Converted,
    Integer,
    Options,
    Real,
    Relation,
    declare_params,
    memory_guard,
    validate_params,
)
from quadnet.sensing._fields import (
    COMPLEX_FACTOR,
    as_complex,
    as_complex_directions,
    as_complex_factor,
    as_hermitian,
    herm,
)
from quadnet.sensing.gaussian import (
    FIELD_CLASSES,
    LANCZOS_ROWS,
    PREPROCESSINGS,
    _SPECTRAL_DOC,
    GaussianSensing,
    _eigensolver,
    _one_y_per_row,
    _r_le_d,
    _spectral_start,
)

__all__ = ["ComplexGaussianSensing", "optimal_preprocessing"]

_DESIGN = Converted(lambda v, name: as_complex(v, name, ndim=2),
                    "a finite complex m x d array (rows a_i^*)",
                    bad=[("string", "abc"), ("None", None), ("1-d", np.ones(3)),
                         ("nan", np.full((2, 2), np.nan))])
_DIRECTION = Converted(lambda v, name: as_complex(v, name, ndim=2),
                       "a finite complex d x r array",
                       bad=[("string", "abc"), ("None", None), ("1-d", np.ones(3))])


def _fview(A: np.ndarray) -> np.ndarray:
    """The real coordinates of a C-contiguous complex array: last axis doubled (re, im)."""
    return A.view(A.real.dtype)


def _xh(X: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``X^* W`` as ``conj(X^T conj(W))``, conjugating the ``m x k`` scratch ``W`` in place."""
    np.conjugate(W, out=W)
    out = X.T @ W
    np.conjugate(out, out=out)
    return out


def _positive_mean(args) -> str | None:
    mean = float(np.mean(args["y"]))
    return None if mean > 0 else f"y must have a positive mean, got mean {mean:.3g}"


@validate_params({"y": Array(ndim=1), "delta": Real(1.0, closed="neither")},
                 relations=[Relation(("y",), _positive_mean, "``y`` with a positive mean")])
def optimal_preprocessing(y, delta: float) -> np.ndarray:
    r"""The optimal spectral preprocessing of Luo, Alghamdi & Lu (2019), complex Gaussian design.

    .. math:: \mathcal T^*(\hat y) = \frac{\hat y - 1}{\hat y + \sqrt\delta - 1},
              \qquad \hat y_i = \frac{\max(y_i, 0)}{\operatorname{mean}(y)},
              \qquad \delta = m / d > 1 .

    The formula is stated for a unit-norm signal and ``a_i ~ CN(0, I/d)``-type normalisations
    in which ``E y = 1``; dividing by the sample mean puts any scale in that form
    (``E y_i = tr Q*``). Mondelli & Montanari (2019) show that no preprocessing gives a
    spectral estimator correlated with the signal below ``delta = 1`` for complex Gaussian
    designs (``1/2`` for real ones), and that this one does above it; Luo, Alghamdi & Lu (2019)
    show it maximises the limiting overlap at every ``delta``. For ``delta > 1`` the
    denominator is at least ``sqrt(delta) - 1 > 0``: the weights lie in
    ``[-1/(sqrt(delta) - 1), 1)``.

    Parameters
    ----------
    y : numpy.ndarray, shape (m,)
        Measurements with a positive mean.
    delta : float
        ``m / d``, larger than 1.

    Returns
    -------
    numpy.ndarray, shape (m,)
        The weights ``T*(yhat_i)``, in ``[-1/(sqrt(delta) - 1), 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> optimal_preprocessing(np.array([1.0, 3.0]), 4.0).tolist()   # y/mean = 0.5, 1.5
    [-0.3333333333333333, 0.2]
    """
    yhat = np.maximum(y, 0.0) / float(np.mean(y))
    return (yhat - 1.0) / (yhat + np.sqrt(delta) - 1.0)


def random_complex_instance(d: int, r: int, m: int, rng, noise: float):
    """The body of ``GaussianSensing.random(..., field="complex")`` (arguments checked there)."""
    U_star = rng.standard_normal(2 * d * r).view(np.complex128).reshape(d, r) / np.sqrt(2 * d)
    X = rng.standard_normal(2 * m * d).view(np.complex128).reshape(m, d) / np.sqrt(2.0)
    v = _fview(X @ U_star)
    y = np.einsum("ij,ij->i", v, v)
    if noise > 0:
        y = y + noise * rng.standard_normal(m)
    prob = ComplexGaussianSensing(X, y)
    prob.U_star, prob.Q_star, prob.noise = U_star, U_star @ U_star.conj().T, noise
    return prob


#: A complex problem with at most this many entries of ``X`` runs :func:`recover` and its
#: spectral start with one BLAS thread: OpenBLAS threads ``zgemv`` (the ``r = 1`` products)
#: and the LAPACK eigensolver at far smaller sizes than ``dgemv``, and on a loaded two-core
#: machine a threaded call waits for the second core. Measured at load 6-7: ``X u`` at
#: ``(m, d) = (512, 128)`` 16.6 ms threaded against 19 us on one thread; ``eigh`` of the
#: ``128 x 128`` spectral matrix 294 ms against 3.3 ms.
SINGLE_THREAD_ENTRIES = 1 << 22


def threads_for(problem: GaussianSensing):
    """The BLAS thread context of a solve on ``problem`` (:data:`SINGLE_THREAD_ENTRIES`)."""
    if problem.field == "complex" and problem.m * problem.d <= SINGLE_THREAD_ENTRIES:
        return single_threaded()
    return contextlib.nullcontext()


def _preprocessing_ok(args) -> str | None:
    prob, pre = args["self"], args["preprocessing"]
    if pre == "optimal" and not prob.m > prob.d:
        return (f"preprocessing='optimal' needs m > d (delta = m/d = {prob.m}/{prob.d} <= 1: "
                f"the weights (y - 1)/(y + sqrt(delta) - 1) have a pole, and no spectral "
                f"estimator correlates with the signal below delta = 1, Mondelli & Montanari "
                f"2019); use preprocessing='identity'")
    if pre == "optimal" and not float(np.mean(prob.y)) > 0:
        return "preprocessing='optimal' needs mean(y) > 0 to normalise the measurements"
    return None


class ComplexGaussianSensing(GaussianSensing):
    r"""Complex rank-one Gaussian sensing (phase retrieval for ``r = 1``), ``O(m d r)`` per call.

    .. math:: L(U) = \frac{1}{2m} \sum_{i=1}^m \left(\|U^* a_i\|^2 - y_i\right)^2,
              \qquad A_i = a_i a_i^*, \quad U \in \mathbb C^{d\times r},

    the loss normalisation of the real case; gradients and Hessian-vector products are for
    the real inner product ``Re tr(xi^* eta)`` (module docstring). Made by
    ``GaussianSensing(X, y, field="complex")`` or
    ``GaussianSensing.random(d, r, m, seed=..., field="complex")``; it is a
    :class:`quadnet.GaussianSensing` (every method of the real problem, on complex arrays).

    Parameters
    ----------
    X : array_like, shape (m, d)
        Complex design, rows ``a_i^*`` (finite; a real ``X`` is cast). Stored C-contiguous
        complex128.
    y : array_like, shape (m,)
        Real measurements (finite).
    field : {"complex"}
        The field (this class is the complex one).

    Examples
    --------
    >>> import numpy as np
    >>> from quadnet import GaussianSensing
    >>> prob = GaussianSensing.random(6, 1, 48, seed=0, field="complex")
    >>> type(prob).__name__, prob.factor_value(prob.U_star * np.exp(0.7j))
    ('ComplexGaussianSensing', 0.0)
    >>> bool(np.allclose(prob.y, prob.measure(prob.Q_star)))
    True
    """

    field = "complex"
    _DTYPE = np.complex128
    _LOW_DTYPE = np.complex64
    _coords = staticmethod(_fview)
    _xt = staticmethod(_xh)

    @validate_params({"field": Options("complex"), "X": _DESIGN, "y": Array(ndim=1)},
                     relations=[Relation(("X", "y"), _one_y_per_row,
                                         "``len(y)`` equals the number of rows of ``X``")])
    def __init__(self, X, y, *, field: str = "complex"):
        self.X = np.ascontiguousarray(X, dtype=np.complex128)
        self.y = np.ascontiguousarray(y, dtype=float)
        self.m, self.d = self.X.shape
        self.U_star: np.ndarray | None = None
        self.Q_star: np.ndarray | None = None
        self.noise = 0.0

    # ------------------------------------------------------------ checks (complex)
    def _factor(self, U) -> np.ndarray:
        return self._checked(U, as_complex_factor, "U", d=self.d)

    def _tangent(self, xi, U: np.ndarray) -> np.ndarray:
        return self._checked(xi, as_complex, "xi", ndim=2, shape=U.shape)

    def _gram(self, U: np.ndarray) -> np.ndarray:
        return U @ U.conj().T

    def _predictor(self, Q) -> np.ndarray:
        return self._checked(Q, as_hermitian, "Q", self.d)

    def _sym_direction(self, H, name: str = "H") -> np.ndarray:
        return self._checked(H, as_hermitian, name, self.d)

    def _directions(self, xi, shape: tuple[int, int]):
        return as_complex_directions(xi, "xi", shape)

    # ------------------------------------------------------------ measurement map
    def measure(self, Q) -> np.ndarray:
        """``A(Q)_i = a_i^* Q a_i`` for Hermitian ``Q`` (real; ``O(m d^2)``).

        Examples
        --------
        >>> import numpy as np
        >>> from quadnet import GaussianSensing
        >>> prob = GaussianSensing(np.array([[1.0, 1j]]), np.array([2.0]), field="complex")
        >>> prob.measure(np.eye(2)).tolist()        # ||a||^2
        [2.0]
        """
        return self._measure(self._predictor(Q))

    def _measure(self, Q: np.ndarray) -> np.ndarray:
        # a_i^* Q a_i = sum_k (X Q)_ik conj(X_ik); its real part is a dot of float views
        XQ = np.ascontiguousarray(self.X @ Q, dtype=np.complex128)
        return np.einsum("ij,ij->i", _fview(XQ), _fview(self.X))

    def _adjoint(self, w: np.ndarray) -> np.ndarray:
        """``(1/m) sum_i w_i a_i a_i^* = (1/m) X^* diag(w) X`` (Hermitian to the last bit)."""
        X, b = self.X, 8 * LANCZOS_ROWS
        G = np.zeros((self.d, self.d), dtype=np.complex128)
        for s in range(0, self.m, b):   # X^T diag(w) conj(X) = conj(X^* diag(w) X), w real
            Wb = w[s:s + b, None] * X[s:s + b]
            np.conjugate(Wb, out=Wb)
            G += X[s:s + b].T @ Wb
        np.conjugate(G, out=G)
        return herm(G / self.m)

    def normal_operator(self, H) -> np.ndarray:
        """Empirical normal operator ``T_m(H) = (1/m) sum_i (a_i^* H a_i) a_i a_i^*``.

        Its expectation is ``T(H) = H + tr(H) I`` (``population_normal_operator(H,
        field="complex")``).

        Examples
        --------
        >>> import numpy as np
        >>> from quadnet import GaussianSensing
        >>> prob = GaussianSensing(np.array([[1.0, 1j]]), np.array([2.0]), field="complex")
        >>> prob.normal_operator(np.eye(2))         # 2 a a^*, a = (1, -i)
        array([[2.+0.j, 0.+2.j],
               [0.-2.j, 2.+0.j]])
        """
        return self._adjoint(self._measure(self._sym_direction(H)))

    # --------------------------------------------------------------- factor level
    @declare_params({"U": COMPLEX_FACTOR})
    def factor_value(self, U) -> float:
        """``L(U) = (1/(2m)) sum_i (||U^* a_i||^2 - y_i)^2`` in ``O(m d r)``."""
        return super().factor_value(U)

    @declare_params({"U": COMPLEX_FACTOR})
    def factor_gradient(self, U) -> np.ndarray:
        """``grad L(U) = (2/m) X^* (res * (X U))`` for ``Re tr(xi^* eta)``, in ``O(m d r)``.

        Examples
        --------
        >>> import numpy as np
        >>> from quadnet import GaussianSensing
        >>> prob = GaussianSensing.random(4, 1, 30, seed=1, field="complex")
        >>> U = prob.U_star + 0.1j
        >>> xi = np.ones((4, 1)) * (1 - 2j)
        >>> t = 1e-6                       # dL(U + t xi)/dt = Re tr(grad^* xi)
        >>> fd = (prob.factor_value(U + t * xi) - prob.factor_value(U - t * xi)) / (2 * t)
        >>> bool(np.isclose(fd, np.real(np.vdot(prob.factor_gradient(U), xi)), rtol=1e-6))
        True
        """
        return super().factor_gradient(U)

    @declare_params({"U": COMPLEX_FACTOR})
    def factor_value_and_gradient(self, U) -> tuple[float, np.ndarray]:
        """``(L(U), grad L(U))`` sharing the product ``X U``."""
        return super().factor_value_and_gradient(U)

    @declare_params({"U": COMPLEX_FACTOR, "xi": _DIRECTION})
    def factor_hvp(self, U, xi) -> np.ndarray:
        """``D^2 L(U)[xi] = (2/m) X^* (res * (X xi) + dres * (X U))``, ``dres_i = 2 Re <(X xi)_i, (X U)_i>``.

        Self-adjoint for ``Re tr(xi^* eta)``; one direction of :meth:`hvp_at`.
        """
        return super().factor_hvp(U, xi)

    @declare_params({"U": COMPLEX_FACTOR})
    def hvp_at(self, U):
        """``xi -> D^2 L(U)[xi]`` (:meth:`factor_hvp`) with ``X U`` and ``res`` computed once.

        Takes one complex ``d x r`` direction or a stack ``(b, d, r)``; a stack runs in blocks
        of directions with two complex GEMMs each.

        Examples
        --------
        >>> import numpy as np
        >>> from quadnet import GaussianSensing
        >>> prob = GaussianSensing.random(4, 1, 30, seed=1, field="complex")
        >>> xi = np.ones((2, 4, 1)) * np.array([1j, 1.0])[:, None, None]
        >>> H = prob.hvp_at(prob.U_star)(xi)
        >>> bool(np.allclose(H[0], prob.factor_hvp(prob.U_star, xi[0])))
        True
        """
        return super().hvp_at(U)

    @declare_params({"U": COMPLEX_FACTOR})
    def single_precision_hvp_at(self, U):
        """:meth:`hvp_at` with ``X``, ``X U``, the residuals and the directions in complex64.

        The complex64 copy of ``X`` (``8 m d`` bytes) is made on the first call and kept;
        results are complex128 (relative error a few float32 roundings).
        """
        return super().single_precision_hvp_at(U)

    @validate_params({"self": Bind(d="d"), "U": COMPLEX_FACTOR},
                     relations=[memory_guard(("U",), lambda a: 32.0 * a["self"].m * a["U"].size,
                                             "the Gram factor K (m x 2 d r float64)")])
    def gram_factor(self, U) -> np.ndarray:
        r"""The measurement Gram factor in real coordinates: ``K^T K`` is the Gauss-Newton part.

        Row ``i`` is ``(2/sqrt m)`` times the real coordinates (float view) of
        ``conj(X_i)^T (X U)_i``, the gradient of ``res_i`` for ``Re tr(xi^* eta)``, so
        ``||K v||^2 = (1/m) sum_i dres_i[xi]^2`` for ``v`` the float view of ``xi``.

        Returns
        -------
        numpy.ndarray, shape (m, 2 d r)

        Examples
        --------
        >>> import numpy as np
        >>> from quadnet import GaussianSensing
        >>> prob = GaussianSensing.random(3, 1, 20, seed=0, field="complex")
        >>> K = prob.gram_factor(prob.U_star)           # at U*: D^2 L = K^T K
        >>> xi = np.array([[1.0 + 2j], [0.5j], [-1.0]])
        >>> hv = prob.factor_hvp(prob.U_star, xi)
        >>> bool(np.allclose(K.T @ (K @ xi.view(float).ravel()), hv.view(float).ravel()))
        True
        """
        XU = self.X @ U
        m, d = self.X.shape
        K = np.conj(self.X)[:, :, None] * XU[:, None, :]
        K *= 2.0 / np.sqrt(m)
        return _fview(np.ascontiguousarray(K)).reshape(m, 2 * d * U.shape[1])

    @declare_params({"U": COMPLEX_FACTOR})
    def default_preconditioner(self, U):
        """``None``: no population inverse is implemented for the complex quotient (ARPACK)."""
        self._factor(U)
        return None

    # ------------------------------------------------------------ initialisation
    @validate_params({"self": Bind(d="d"), "r": Integer(1), "strict": Boolean(),
                      "method": Options("auto", "lanczos", "dense"),
                      "preprocessing": Options(*PREPROCESSINGS)},
                     relations=[Relation(("r",), _r_le_d, "``r <= d``"),
                                Relation(("self", "preprocessing"), _preprocessing_ok,
                                         "``m > d`` and ``mean(y) > 0`` for "
                                         "``preprocessing='optimal'``")])
    @fill(_SPECTRAL_DOC)
    def spectral_init(self, r: int, *, strict: bool = True, method: str = "auto",
                      preprocessing: str = "identity") -> np.ndarray:
        r"""Spectral initialiser of the complex problem (quadnet theory §4, complex case).

        ``preprocessing="identity"``: the moment estimator, as in the real case with the
        complex population inverse,

        .. math:: \hat Q = T^{-1}(M) = M - c I, \qquad M = \frac1m \sum_i y_i a_i a_i^*,
                  \qquad c = \frac{\operatorname{tr} M}{d+1},

        unbiased (``E M = T(Q*) = Q* + tr(Q*) I``); ``U_0 = V_r diag(sqrt(lambda_r))`` from
        its top-``r`` eigenpairs.

        ``preprocessing="optimal"`` (Luo, Alghamdi & Lu 2019; weak threshold ``m/d = 1``,
        Mondelli & Montanari 2019): the directions ``V_r`` are the top-``r`` eigenvectors of

        .. math:: D = \frac1m \sum_i \mathcal T^*(\hat y_i)\, a_i a_i^*,

        with the weights of :func:`optimal_preprocessing`; ``D`` is not an estimator of
        ``Q*`` (its eigenvalues carry no scale), so the magnitudes are fitted to the data on
        that subspace: ``B = argmin_B sum_i (a_i^* V_r B V_r^* a_i - y_i)^2`` over Hermitian
        ``r x r`` ``B`` (a linear least-squares problem in ``r^2`` real unknowns,
        ``O(m r^4)``), and ``U_0 = V_r W diag(sqrt(beta))`` from ``B = W diag(beta) W^*``.
        Needs ``m > d``.

        Routes (``method``): ``"dense"`` forms the ``d x d`` matrix by
        ``X^* (w * X) / m`` (``O(m d^2)``) and calls ``scipy.linalg.eigh``; ``"lanczos"`` runs
        ARPACK (``eigsh``, ``which="LA"``) on ``v -> X^* (w * (X v)) / m`` (``O(m d)`` per
        product); ``"auto"`` takes Lanczos from ``d >= LANCZOS_MIN_D``. Fewer than ``r``
        positive eigenvalues (of ``Q_hat`` or ``B``): ``ValueError`` naming ``r``, or with
        ``strict=False`` a :class:`SpectralInitWarning` and padding by ``1e-6`` times the
        largest, as in the real case.

        Parameters
        ----------
        {{spectral_start}}
        preprocessing : {"identity", "optimal"}, default "identity"
            The weights of the spectral matrix.

        Returns
        -------
        numpy.ndarray, shape (d, r), complex128

        Examples
        --------
        >>> import numpy as np
        >>> from quadnet import GaussianSensing
        >>> prob = GaussianSensing.random(20, 1, 160, seed=0, field="complex")
        >>> u = prob.spectral_init(1, preprocessing="optimal")
        >>> x = prob.U_star
        >>> overlap = abs(np.vdot(u, x)) ** 2 / (np.vdot(u, u).real * np.vdot(x, x).real)
        >>> bool(overlap > 0.5)
        True
        """
        refused = self._preprocessing_refusal(preprocessing)
        if refused:   # also inside validated callers, where the table is skipped
            raise ValueError(refused)
        with threads_for(self):
            return self._spectral(r, strict, method, preprocessing)

    def _spectral(self, r: int, strict: bool, method: str, preprocessing: str) -> np.ndarray:
        if preprocessing == "identity":
            w, shift = self.y, float(self.y @ self._row_norms2()) / (self.m * (self.d + 1))
        else:
            w, shift = optimal_preprocessing(self.y, self.m / self.d), 0.0
        lam, V = self._top_eigenpairs(w, shift, r, method)
        if preprocessing == "optimal":
            beta, Wb = self._fit_magnitudes(V)
            return _spectral_start(beta, V @ Wb, r, strict, "the magnitude fit B")
        return _spectral_start(lam, V, r, strict, "T^-1(M)")

    def _preprocessing_refusal(self, preprocessing: str) -> str | None:
        return _preprocessing_ok({"self": self, "preprocessing": preprocessing})

    @staticmethod
    def _random_instance(d: int, r: int, m: int, rng, noise: float):
        """:func:`random_complex_instance` (``GaussianSensing.random(..., field="complex")``)."""
        return random_complex_instance(d, r, m, rng, noise)

    def _row_norms2(self) -> np.ndarray:
        v = _fview(self.X)
        return np.einsum("ij,ij->i", v, v)

    def _top_eigenpairs(self, w: np.ndarray, shift: float, r: int, method: str):
        """Top-``r`` eigenpairs (decreasing) of ``X^* diag(w) X / m - shift I``."""
        d = self.d
        if _eigensolver(method, d, r) == "dense":
            lam, V = scipy.linalg.eigh(self._adjoint(w), subset_by_index=[d - r, d - 1])
            lam = lam - shift
        else:
            lam, V = self._lanczos(w, shift, r)
        order = np.argsort(lam)[::-1]
        return lam[order], np.ascontiguousarray(V[:, order])

    def _lanczos(self, w: np.ndarray, shift: float, r: int):
        import scipy.sparse.linalg as spla

        X, m, d, b = self.X, self.m, self.d, LANCZOS_ROWS

        def matvec(v: np.ndarray) -> np.ndarray:
            v = np.asarray(v, dtype=np.complex128).ravel()
            out = np.zeros(d, dtype=np.complex128)
            for s in range(0, m, b):
                Xs = X[s:s + b]
                t = w[s:s + b] * (Xs @ v)
                out += Xs.T @ np.conj(t)
            return np.conj(out) / m - shift * v

        op = spla.LinearOperator((d, d), matvec=matvec, dtype=np.complex128)
        ncv = min(d, max(2 * r + 1, 30))
        return spla.eigsh(op, k=r, which="LA", tol=1e-10, v0=np.ones(d, dtype=np.complex128),
                          ncv=ncv)

    def _fit_magnitudes(self, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``B = argmin sum_i (z_i^* B z_i - y_i)^2`` over Hermitian ``B``, ``z_i = V^* a_i``;
        returns its eigenpairs, decreasing."""
        r = V.shape[1]
        Z = np.conj(self.X @ V)                       # row i: z_i^T = (V^* a_i)^T
        F = np.conj(Z)[:, :, None] * Z[:, None, :]    # z_i^* B z_i = Re <conj(F_i), B>
        A = np.concatenate([F.real.reshape(len(F), -1), F.imag.reshape(len(F), -1)], axis=1)
        coef = np.linalg.lstsq(A, self.y, rcond=None)[0]
        B = herm((coef[:r * r] - 1j * coef[r * r:]).reshape(r, r))   # Re(F B) = F_re B_re - F_im B_im
        beta, Wb = np.linalg.eigh(B)
        return beta[::-1], Wb[:, ::-1]


FIELD_CLASSES["complex"] = ComplexGaussianSensing
