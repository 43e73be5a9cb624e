r"""Losses on predictors and their lift to factors (quadnet theory §2).

A loss ``ell`` on symmetric ``d x d`` matrices defines ``L(U) = ell(U U^T)``. With
``S = sym grad ell(Q)``:

* ``grad L(U) = 2 S U`` (horizontal: ``U^T grad L = 2 U^T S U`` is symmetric);
* ``D^2 L(U)[xi] = 2 S xi + 2 DS[xi U^T + U xi^T] U`` with ``DS[H] = sym Hess ell(Q)[H]``.

Subclasses of :class:`Loss` implement ``value``, ``gradient`` and ``hessian_vector`` on
predictors; the factor-level methods are derived here once and may be overridden by faster
paths (e.g. ``O(m d r)`` sensing losses).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

import numpy as np

from quadnet._linalg import sym as _sym
from quadnet._validation import (
    Array,
    Converted,
    Factor,
    Integer,
    IsCallable,
    NonFiniteResultError,
    Optional,
    Relation,
    Symmetric,
    as_array,
    as_directions,
    as_factor,
    as_matrix,
    as_square,
    as_symmetric,
    declare_params,
    finite_result,
    named_call,
    nested,
    validate_params,
)

__all__ = [
    "AutogradLoss",
    "FrobeniusLoss",
    "Loss",
    "MeasurementLoss",
    "as_loss",
    "pymanopt_problem",
    "sym",
]


_SQUARE = Converted(lambda v, name: as_square(v, name), "a finite real square matrix",
                    bad=[("string", "abc"), ("None", None), ("non-square", np.ones((2, 3))),
                         ("1-d", np.ones(3)), ("nan", np.full((2, 2), np.nan))])


@validate_params({"A": _SQUARE})
def sym(A) -> np.ndarray:
    r"""Symmetric part of a square matrix.

    .. math:: \operatorname{sym}(A) = \tfrac12 (A + A^\top)

    the projection onto symmetric matrices in the Frobenius inner product (quadnet theory §0).
    Internal code calls the unchecked kernel ``quadnet._linalg.sym``.

    Parameters
    ----------
    A : array_like, shape (n, n)
        A finite real square matrix.

    Returns
    -------
    numpy.ndarray, shape (n, n)
        ``(A + A^T) / 2`` in float64.

    Examples
    --------
    >>> import numpy as np
    >>> sym(np.array([[1.0, 2.0], [0.0, 3.0]]))
    array([[1., 1.],
           [1., 3.]])
    """
    return _sym(A)


def stacked_directions(one: Callable[[np.ndarray], np.ndarray], shape: tuple[int, int]
                       ) -> Callable[[np.ndarray], np.ndarray]:
    """Lift ``one: (d, r) -> (d, r)`` to a direction ``(d, r)`` or a stack ``(b, d, r)``.

    Inputs are checked by :func:`quadnet._validation.as_directions`. Used by
    :meth:`Loss.hvp_at`.
    """
    def apply(xi) -> np.ndarray:
        if nested() and isinstance(xi, np.ndarray) and xi.ndim in (2, 3):
            stack, single = (xi[None], True) if xi.ndim == 2 else (xi, False)
        else:
            stack, single = as_directions(xi, "xi", shape)
        return one(stack[0]) if single else np.stack([one(z) for z in stack])
    return apply


#: The declared tables of the factor-level loss methods (checked inline, skipped when nested).
FACTOR_U = Factor(full_rank=False)
TANGENT_XI = Array(shape=("d", "r"))


class Loss(ABC):
    r"""The loss protocol: a smooth ``ell`` on symmetric matrices and its lift ``L(U) = ell(U U^T)``.

    Subclasses implement the predictor level, ``value(Q) = ell(Q)``,
    ``gradient(Q) = S = sym grad ell(Q)`` and ``hessian_vector(Q, H) = DS(Q)[H]``; the factor
    level is derived here once (quadnet theory §2):

    .. math:: \nabla L(U) = 2 S U, \qquad
              D^2 L(U)[\xi] = 2 S \xi + 2\, DS[\xi U^\top + U \xi^\top]\, U .

    Attributes
    ----------
    d : int or None
        Dimension of the predictor (``Q`` is ``d x d``), or ``None`` if any.

    Raises
    ------
    TypeError
        ``Loss`` itself is abstract; instantiate a subclass.

    Examples
    --------
    >>> import numpy as np
    >>> class Half(Loss):
    ...     d = 2
    ...     def value(self, Q): return 0.5 * float(np.sum(Q * Q))
    ...     def gradient(self, Q): return np.asarray(Q, dtype=float)
    ...     def hessian_vector(self, Q, H): return np.asarray(H, dtype=float)
    >>> Half().factor_gradient(np.array([[1.0], [0.0]])).ravel().tolist()  # 2 (U U^T) U
    [2.0, 0.0]
    """

    d: int | None = None

    # ------------------------------------------------------------- predictor level
    @abstractmethod
    def value(self, Q: np.ndarray) -> float:
        """``ell(Q)``."""

    @abstractmethod
    def gradient(self, Q: np.ndarray) -> np.ndarray:
        """``S = sym grad ell(Q)`` (symmetric ``d x d``)."""

    @abstractmethod
    def hessian_vector(self, Q: np.ndarray, H: np.ndarray) -> np.ndarray:
        """``DS(Q)[H] = sym Hess ell(Q)[H]`` for symmetric ``H``."""

    # ---------------------------------------------------------------- factor level
    # Checks of the public loss methods. Inside a validated quadnet callable (an ODE right-hand
    # side, a descent loop, a solver iteration) the arguments are quadnet's own arrays, already
    # checked once at the boundary: these return them as they are (quadnet._validation.nested).
    def _checked(self, value, convert, *args, **kwargs):
        """``convert(value, *args, **kwargs)`` at the public boundary, ``value`` as it is when
        nested; a refusal names the method that was called (:func:`name_method`)."""
        return value if nested() else named_call(self, convert, value, *args, **kwargs)

    def _factor(self, U) -> np.ndarray:
        return self._checked(U, as_factor, "U", d=self.d, full_rank=False)

    def _tangent(self, xi, U: np.ndarray) -> np.ndarray:
        return self._checked(xi, as_matrix, "xi", shape=U.shape)

    def _gram(self, U: np.ndarray) -> np.ndarray:
        """``Q = U U^T``, refused naming ``U`` when it overflows (at the public boundary only)."""
        if nested():
            return U @ U.T
        with np.errstate(over="ignore", invalid="ignore"):
            Q = U @ U.T
        if not np.all(np.isfinite(Q)):
            raise NonFiniteResultError(
                f"U has entries up to {float(np.max(np.abs(U))):.3g}: the predictor U U^T "
                f"overflows float64; rescale U")
        return Q

    def _sym_direction(self, H, name: str = "H") -> np.ndarray:
        return self._checked(H, as_symmetric, name, self.d)

    @declare_params({"U": FACTOR_U})
    @finite_result("U")
    def factor_value(self, U) -> float:
        """``L(U) = ell(U U^T)``.

        Examples
        --------
        >>> import numpy as np
        >>> loss = FrobeniusLoss(np.diag([1.0, 0.0]))
        >>> U = np.array([[2.0], [0.0]])
        >>> loss.factor_value(U)                    # 1/2 (4 - 1)^2
        4.5
        """
        U = self._factor(U)
        return float(self.value(self._gram(U)))

    @declare_params({"U": FACTOR_U})
    @finite_result("U")
    def factor_gradient(self, U) -> np.ndarray:
        """``grad L(U) = 2 S U``.

        Examples
        --------
        >>> import numpy as np
        >>> loss = FrobeniusLoss(np.diag([1.0, 0.0]))
        >>> U = np.array([[2.0], [0.0]])
        >>> loss.factor_gradient(U).ravel().tolist()   # 2 (U U^T - T) U
        [12.0, 0.0]
        """
        U = self._factor(U)
        return 2.0 * self.gradient(self._gram(U)) @ U

    @declare_params({"U": FACTOR_U, "xi": TANGENT_XI})
    @finite_result("U")
    def factor_hvp(self, U, xi) -> np.ndarray:
        """``D^2 L(U)[xi] = 2 S xi + 2 DS[xi U^T + U xi^T] U`` (one direction; see :meth:`hvp_at`).

        Examples
        --------
        >>> import numpy as np
        >>> loss = FrobeniusLoss(np.diag([1.0, 0.0]))
        >>> U = np.array([[2.0], [0.0]])
        >>> loss.factor_hvp(U, np.array([[1.0], [0.0]])).ravel().tolist()   # 2 S xi + 2 (4 xi1) U
        [22.0, 0.0]
        """
        U = self._factor(U)
        # the formula itself when hvp_at is this class's: an override of factor_hvp that calls
        # super().factor_hvp must not be dispatched back to itself by hvp_at
        hvp = self._formula_hvp_at(U) if type(self).hvp_at is Loss.hvp_at else self.hvp_at(U)
        return hvp(self._tangent(xi, U))

    @declare_params({"U": FACTOR_U})
    def hvp_at(self, U) -> Callable[[np.ndarray], np.ndarray]:
        """The map ``xi -> D^2 L(U)[xi]`` with the work that depends on ``U`` alone done once.

        For many Hessian-vector products at one point (dense Hessians, eigensolvers). The
        returned map takes one ``d x r`` direction or a stack ``(b, d, r)`` and returns the same
        shape. Here: ``S = sym grad ell(U U^T)`` is computed once, then
        ``xi -> 2 S xi + 2 DS[xi U^T + U xi^T] U`` per direction; a subclass that overrides
        :meth:`factor_hvp` (but not this) gets its override applied per direction. Subclasses
        with a batched kernel override this (e.g. :class:`quadnet.GaussianSensing`: one
        ``X (d x b r)`` product per block instead of ``b`` thin ones).

        Examples
        --------
        >>> import numpy as np
        >>> loss = FrobeniusLoss(np.diag([1.0, 0.0]))
        >>> U = np.array([[2.0], [0.0]])
        >>> H = loss.hvp_at(U)
        >>> H(np.ones((3, 2, 1))).shape             # a stack of three directions
        (3, 2, 1)
        """
        U = self._factor(U)
        if type(self).factor_hvp is not Loss.factor_hvp:
            return stacked_directions(lambda xi: self.factor_hvp(U, xi), U.shape)
        return self._formula_hvp_at(U)

    def _formula_hvp_at(self, U: np.ndarray):
        """``xi -> 2 S xi + 2 DS[xi U^T + U xi^T] U`` from the predictor-level methods."""
        Q = self._gram(U)
        S2 = 2.0 * self.gradient(Q)

        def one(xi: np.ndarray) -> np.ndarray:
            P = xi @ U.T
            return S2 @ xi + 2.0 * self.hessian_vector(Q, P + P.T) @ U
        return stacked_directions(one, U.shape)

    @declare_params({"U": FACTOR_U})
    def single_precision_hvp_at(self, U):
        """A float32 version of :meth:`hvp_at`, or ``None`` when the loss has none (here).

        ``effective_spectrum(..., precision="mixed")`` iterates with it and then finishes, and
        measures every returned eigenvalue and residual, with :meth:`hvp_at` in float64. A loss
        whose Hessian-vector product is bound by reading its data overrides it
        (:class:`quadnet.GaussianSensing`: float32 ``X``, half the bytes per product).

        Examples
        --------
        >>> import numpy as np
        >>> FrobeniusLoss(np.eye(2)).single_precision_hvp_at(np.ones((2, 1))) is None
        True
        """
        self._factor(U)
        return None

    @declare_params({"U": FACTOR_U})
    def default_preconditioner(self, U):
        """The preconditioner ``preconditioner="auto"`` uses for :func:`quadnet.effective_spectrum`.

        A map ``Z -> M Z`` on horizontal directions at ``U`` approximating the inverse
        effective Hessian, or ``None`` (no preconditioner: ARPACK). Losses with a known
        population form override it (:class:`quadnet.GaussianSensing` returns the inverse of
        its population effective Hessian).

        Examples
        --------
        >>> import numpy as np
        >>> loss = FrobeniusLoss(np.diag([1.0, 0.0]))
        >>> U = np.array([[2.0], [0.0]])
        >>> loss.default_preconditioner(U) is None
        True
        """
        self._factor(U)
        return None

    def _predictor(self, Q) -> np.ndarray:
        return self._checked(Q, as_symmetric, "Q", self.d)


def as_loss(loss, name: str = "loss") -> Loss:
    """``loss`` if it implements the :class:`Loss` protocol, else a ``TypeError`` naming ``name``.

    Examples
    --------
    >>> import numpy as np
    >>> as_loss(FrobeniusLoss(np.eye(2))).d
    2
    """
    if not isinstance(loss, Loss):
        raise TypeError(f"{name} must implement the quadnet.Loss protocol, got "
                        f"{type(loss).__name__}")
    return loss


#: The constraint-table entry of a ``loss`` argument (quadnet._validation.validate_params): a
#: :class:`Loss`, binding the size ``d`` of the other arguments to ``loss.d``.
LOSS = Converted(as_loss, "an object implementing the quadnet.Loss protocol",
                 bad=[("int", 3), ("None", None), ("string", "loss")], dims={"d": "d"})


def _gradient_finite(a) -> None:
    """One public ``loss.factor_gradient(U)``: its own checks refuse an overflowing ``U U^T`` or
    gradient naming ``U`` (e.g. ``U * 1e300``), before a solver meets the NaNs."""
    a["loss"].factor_gradient(a["U"])


#: The relation of a curvature routine's ``loss`` and ``U``: the gradient at ``U`` is finite.
GRADIENT_FINITE = Relation(("loss", "U"), _gradient_finite,
                           "``loss.factor_gradient(U)`` is finite (``U U^T`` and the gradient "
                           "do not overflow)")


class FrobeniusLoss(Loss):
    r"""``ell(Q) = 1/2 ||Q - T||_F^2`` for a symmetric target ``T``: ``S = Q - T``, ``DS[H] = H``.

    The simplest test loss (quadnet theory §2): its minimisers over ``M_r^+`` are the best
    rank-``r`` PSD approximations of ``T`` (Eckart & Young 1936 on the positive eigenvalues).

    Parameters
    ----------
    target : array_like, shape (d, d)
        Finite real symmetric matrix ``T``.

    Examples
    --------
    >>> import numpy as np
    >>> loss = FrobeniusLoss(np.diag([4.0, 1.0]))
    >>> loss.factor_value(np.array([[2.0], [0.0]]))     # residual diag(0, 1)
    0.5
    """

    @validate_params({"target": Symmetric("d")})
    def __init__(self, target):
        self.target = np.asarray(target, dtype=float)   # checked once (also when nested)
        self.d = self.target.shape[0]

    @finite_result("Q")
    def value(self, Q) -> float:
        return 0.5 * float(np.sum((self._predictor(Q) - self.target) ** 2))

    def gradient(self, Q) -> np.ndarray:
        return self._predictor(Q) - self.target

    def hessian_vector(self, Q, H) -> np.ndarray:
        self._predictor(Q)
        return self._sym_direction(H)


def _symmetric_stack(value, name: str) -> np.ndarray:
    A = as_array(value, name, ndim=3)
    m, d, d2 = A.shape
    if d != d2 or m == 0 or d == 0:
        raise ValueError(f"{name} must have shape (m, d, d) with m, d >= 1, got {A.shape}")
    if np.linalg.norm(A - A.transpose(0, 2, 1)) > 1e-10 * np.linalg.norm(A):
        raise ValueError(f"{name} must hold symmetric matrices A_i = A_i^T")
    return A


_SYMMETRIC_STACK = Converted(
    lambda v, name: _symmetric_stack(v, name),
    "a finite real (m, d, d) array of symmetric matrices",
    bad=[("string", "abc"), ("None", None), ("2-d", np.eye(2)), ("non-square", np.ones((1, 2, 3))),
         ("non-symmetric", np.array([[[1.0, 2.0], [0.0, 1.0]]])), ("nan", np.full((1, 2, 2), np.nan)),
         ("empty", np.ones((0, 2, 2)))])


def _one_y_per_a(args) -> str | None:
    m, n = args["A"].shape[0], args["y"].shape[0]
    if m != n:
        return (f"y must have one entry per matrix of A: len(y) = {n} but A has m = {m} "
                f"matrices")
    return None


_ONE_Y_PER_A = Relation(("A", "y"), _one_y_per_a, "``len(y)`` equals the number of matrices "
                        "in ``A``")


class MeasurementLoss(Loss):
    r"""Least squares on general linear measurements (quadnet theory §2, §4).

    .. math:: \ell(Q) = \frac{1}{2m} \sum_i (\langle A_i, Q \rangle - y_i)^2, \qquad
              S = \frac1m \sum_i \mathrm{res}_i A_i, \qquad
              DS[H] = \frac1m \sum_i \langle A_i, H \rangle A_i .

    ``A`` is an ``(m, d, d)`` array of symmetric matrices, so memory is ``m d^2``: meant for
    small dense problems and as an independent reference. Rank-one Gaussian sensing has its
    own ``O(m d r)`` loss (:class:`quadnet.GaussianSensing`).

    Parameters
    ----------
    A : array_like, shape (m, d, d)
        Symmetric measurement matrices.
    y : array_like, shape (m,)
        Measurements.

    Examples
    --------
    >>> import numpy as np
    >>> loss = MeasurementLoss(np.eye(2)[None], np.array([2.0]))   # <I, Q> = tr Q = 2
    >>> loss.factor_value(np.array([[1.0], [1.0]]))
    0.0
    """

    @validate_params({"A": _SYMMETRIC_STACK, "y": Array(ndim=1)},
                     relations=[_ONE_Y_PER_A])
    def __init__(self, A, y):
        A = np.asarray(A, dtype=float)
        m, d, _ = A.shape
        self.y = np.asarray(y, dtype=float)
        self.A = _sym(A)
        self._flat = self.A.reshape(m, d * d)
        self.m, self.d = m, d

    def residual(self, Q) -> np.ndarray:
        """``<A_i, Q> - y_i`` for each measurement."""
        return self._flat @ self._predictor(Q).reshape(-1) - self.y

    @finite_result("Q")
    def value(self, Q) -> float:
        res = self.residual(Q)
        return float(res @ res) / (2 * self.m)

    def gradient(self, Q) -> np.ndarray:
        return (self.residual(Q) @ self._flat).reshape(self.d, self.d) / self.m

    def hessian_vector(self, Q, H) -> np.ndarray:
        self._predictor(Q)
        H = self._sym_direction(H)
        return ((self._flat @ H.reshape(-1)) @ self._flat).reshape(self.d, self.d) / self.m


class AutogradLoss(Loss):
    r"""Wrap any autograd-differentiable ``fn(Q) -> scalar`` as a :class:`Loss`.

    Gradient and Hessian-vector products come from :mod:`autograd` (reverse over forward
    composition ``grad(<grad fn(Q), H>)``) and are symmetrised: ``S = sym grad fn``
    (quadnet theory §2).

    Parameters
    ----------
    fn : callable
        ``fn(Q) -> float`` written with ``autograd.numpy``.
    d : int, optional
        Dimension of ``Q`` (``>= 1``); ``None`` accepts any.

    Examples
    --------
    >>> import numpy as np
    >>> loss = AutogradLoss(lambda Q: 0.5 * (Q[0, 0] - 1.0) ** 2, d=2)
    >>> loss.factor_gradient(np.array([[2.0], [0.0]])).ravel().tolist()   # 2 S U, S = 3 e1 e1^T
    [12.0, 0.0]
    """

    @validate_params({"fn": IsCallable("a callable fn(Q) -> float"), "d": Optional(Integer(1))})
    def __init__(self, fn: Callable, d: int | None = None):
        import autograd

        self.fn = fn
        self.d = d
        self._grad = autograd.grad(fn)
        self._hvp = autograd.grad(lambda Q, H: np.sum(self._grad(Q) * H))

    def value(self, Q) -> float:
        val = float(self.fn(self._predictor(Q)))
        if not np.isfinite(val):
            raise ValueError(f"fn(Q) is not finite ({val})")
        return val

    def gradient(self, Q) -> np.ndarray:
        return _sym(np.asarray(self._grad(self._predictor(Q)), dtype=float))

    def hessian_vector(self, Q, H) -> np.ndarray:
        Q = self._predictor(Q)
        H = self._checked(H, as_symmetric, "H", Q.shape[0])
        return _sym(np.asarray(self._hvp(Q, H), dtype=float))


class _FactorManifold:
    """A pymanopt manifold of ``d x r`` factors with its sizes (what :func:`pymanopt_problem`
    needs of it): quadnet's :class:`~quadnet.PSDQuotient`, or pymanopt's own ``PSDFixedRank``."""

    def __init__(self, manifold, d: int, r: int):
        self.manifold, self.d, self.r = manifold, d, r


def _as_manifold(value, name: str):
    d, r = getattr(value, "d", None), getattr(value, "r", None)
    if isinstance(d, int) and isinstance(r, int) and callable(
            getattr(value, "horizontal_projection", None)):
        return _FactorManifold(value, d, r)
    import pymanopt

    if isinstance(value, pymanopt.manifolds.manifold.Manifold):
        shape = np.shape(value.random_point())
        if len(shape) == 2:
            return _FactorManifold(value, int(shape[0]), int(shape[1]))
    raise TypeError(f"{name} must be a quadnet.PSDQuotient or a pymanopt manifold of d x r "
                    f"factors (such as pymanopt.manifolds.PSDFixedRank), got "
                    f"{type(value).__name__}")


@validate_params({"loss": LOSS,
                  "manifold": Converted(_as_manifold, "a quadnet.PSDQuotient (or a pymanopt "
                                        "manifold of d x r factors) of the same d",
                                        bad=[("string", "abc"), ("None", None), ("int", 3)],
                                        dims={"d": "d"})})
def pymanopt_problem(loss: Loss, manifold):
    r"""A :class:`pymanopt.Problem` for ``L(U) = ell(U U^T)`` on ``manifold``.

    Cost, Euclidean gradient and Euclidean Hessian come from the loss's factor methods (real or
    complex factors: a complex loss such as ``GaussianSensing(..., field="complex")`` on
    ``PSDQuotient(d, r, field="complex")``); the manifold turns them into Riemannian ones (with the input direction projected, see
    :meth:`quadnet.PSDQuotient.euclidean_to_riemannian_hessian`; quadnet theory §1, §7).

    Parameters
    ----------
    loss : Loss
        The loss.
    manifold : quadnet.PSDQuotient or pymanopt manifold of ``d x r`` factors
        The manifold (its ``d`` must match ``loss.d``). pymanopt's ``PSDFixedRank`` is
        accepted, to compare against it: its Riemannian Hessian misses a term (quadnet theory
        §7.2).

    Returns
    -------
    pymanopt.Problem

    Examples
    --------
    >>> import numpy as np
    >>> from quadnet import PSDQuotient
    >>> prob = pymanopt_problem(FrobeniusLoss(np.eye(3)), PSDQuotient(3, 1))
    >>> float(prob.cost(np.array([[1.0], [0.0], [0.0]])))     # 1/2 ||diag(0, 1, 1)||^2
    1.0
    >>> import pymanopt
    >>> fixed = pymanopt_problem(FrobeniusLoss(np.eye(3)), pymanopt.manifolds.PSDFixedRank(3, 1))
    >>> float(fixed.cost(np.array([[1.0], [0.0], [0.0]])))
    1.0

    The complex case (phase retrieval, quadnet theory §4): a complex loss on the complex
    quotient, built the same way; the Euclidean gradient is the one for ``Re tr(xi^* eta)``.

    >>> from quadnet import GaussianSensing
    >>> pr = GaussianSensing.random(4, 1, 24, seed=0, field="complex")
    >>> cp = pymanopt_problem(pr, PSDQuotient(4, 1, field="complex"))
    >>> float(cp.cost(pr.U_star * 1j))                         # U(1)-invariant
    0.0
    """
    import pymanopt

    manifold = manifold.manifold if isinstance(manifold, _FactorManifold) else manifold

    @pymanopt.function.numpy(manifold)
    def cost(U):
        return loss.factor_value(U)

    @pymanopt.function.numpy(manifold)
    def euclidean_gradient(U):
        return loss.factor_gradient(U)

    @pymanopt.function.numpy(manifold)
    def euclidean_hessian(U, xi):
        return loss.factor_hvp(U, xi)

    return pymanopt.Problem(manifold, cost, euclidean_gradient=euclidean_gradient,
                            euclidean_hessian=euclidean_hessian)
