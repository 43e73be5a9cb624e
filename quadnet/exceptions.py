"""The warning and error classes of quadnet's numerical layers, in one place.

Every quadnet warning class is here (renamed names also issue Python's DeprecationWarning).
The errors of argument checking live in :mod:`quadnet._validation` (``NonFiniteResultError``,
``SizeTooLargeError``, ``SolverFailure``, ``LinAlgFailure``), and the harness's ``CheckError``
(:mod:`quadnet.harness.checks._base`) and ``ReportError`` (:mod:`quadnet.harness.compare`)
beside the code that raises them.

Errors subclass :class:`ValueError` (bad numbers or a failed numerical premise) or
:class:`RuntimeError` (a failure inside harness machinery), so ``except ValueError`` keeps
working for callers who do not care about the specific class. Warnings subclass
:class:`QuadnetWarning`, so ``warnings.simplefilter("error", quadnet.exceptions.QuadnetWarning)``
turns every quadnet warning into an error at once.

Examples
--------
>>> from quadnet.exceptions import DivergenceError
>>> issubclass(DivergenceError, ValueError)
True
"""

from __future__ import annotations

__all__ = [
    "ConvergenceWarning",
    "DegenerateFeaturesError",
    "DivergenceError",
    "IndefiniteHessianWarning",
    "InfeasibleError",
    "KernelConvergenceWarning",
    "KernelMemoryError",
    "NotAMinimiserWarning",
    "NotCriticalWarning",
    "QuadnetWarning",
    "RFMWarning",
    "RankDeficientSpectrumWarning",
    "SpectralInitWarning",
    "SweepCellError",
    "SweepStoreError",
]


class QuadnetWarning(UserWarning):
    """Base class of every warning quadnet issues."""


class NotCriticalWarning(QuadnetWarning):
    """A statement that holds only at a critical point was asked for away from one.

    Raised by FACT measurements (the identity holds at critical points of the regularised
    objective) and by the local-rate tools (rates are predicted at minimisers). ``grad_norm``
    is the gradient norm that triggered it (``nan`` when the caller did not supply one).
    """

    def __init__(self, message: str, grad_norm: float = float("nan")):
        super().__init__(message)
        self.grad_norm = float(grad_norm)


#: Former name of :class:`NotCriticalWarning` in the local-rate tools (same class).
NotAMinimiserWarning = NotCriticalWarning


class IndefiniteHessianWarning(QuadnetWarning):
    """The effective Hessian has a negative eigenvalue: the point is not a local minimiser."""


class RankDeficientSpectrumWarning(QuadnetWarning):
    """At a rank-deficient factor the extreme eigenvalue of the signal block (what
    ``effective_spectrum(...).eigenvalues`` reports) is not the extreme eigenvalue of the whole
    effective Hessian: the excess block of the idle columns holds a (non-structural) eigenvalue
    beyond it. ``overall_eigenvalues`` and ``overall_parts`` of the result name both."""


class ConvergenceWarning(QuadnetWarning):
    """An iterative method stopped before its tolerance; ``grad_norm`` says where."""

    def __init__(self, message: str, grad_norm: float = float("nan")):
        super().__init__(message)
        self.grad_norm = float(grad_norm)


class SpectralInitWarning(QuadnetWarning):
    """The spectral estimate ``T^{-1}(M)`` has fewer than ``r`` positive eigenvalues."""


class RFMWarning(QuadnetWarning):
    """A numerical fallback happened in a recursive feature machine (e.g. a singular kernel)."""


class KernelConvergenceWarning(ConvergenceWarning, RFMWarning):
    """An iterative kernel solve stopped at ``max_iter`` above its residual tolerance.

    ``residual`` is the largest relative residual ``‖(K + λI)a − y‖ / ‖y‖`` over the output
    columns when it stopped (also available as ``grad_norm``, the :class:`ConvergenceWarning`
    field).
    """

    def __init__(self, message: str, residual: float = float("nan")):
        super().__init__(message, residual)
        self.residual = float(residual)


class KernelMemoryError(MemoryError, ValueError):
    """A kernel problem that no solver can hold within the memory limit.

    Raised before any large allocation. ``n`` is the number of centres, ``estimate`` the
    smallest estimated peak in bytes over the solvers allowed, ``limit`` the limit in bytes.
    A :class:`MemoryError` and a :class:`ValueError`, so either ``except`` catches it.
    """

    def __init__(self, message: str, n: int = 0, estimate: int = 0, limit: int = 0):
        super().__init__(message)
        self.n, self.estimate, self.limit = int(n), int(estimate), int(limit)


class DegenerateFeaturesError(ValueError, FloatingPointError):
    """A recursive feature machine update produced a feature matrix with zero trace (every
    input gradient vanished, e.g. for zero or numerically tiny data, or a ridge so large that
    the coefficients vanish), so ``M`` cannot be trace-normalised. The message names the data
    and ``ridge``; a ``ValueError`` and, as before, a ``FloatingPointError``."""


class DivergenceError(ValueError):
    """A step size or an integration that diverges (non-finite or exploding iterates)."""


class InfeasibleError(ValueError):
    """``A diag(m) q = y`` has no solution ``q >= 0``.

    ``certificate`` is a Farkas vector ``nu`` with ``(A diag(m))^T nu <= 0`` and
    ``y^T nu > 0`` (then ``y^T nu = nu^T A diag(m) q <= 0`` for every ``q >= 0``: contradiction).
    """

    def __init__(self, message: str, certificate=None):
        super().__init__(message)
        self.certificate = certificate


class SweepStoreError(ValueError):
    """A sweep store that cannot be used: unwritable, or made by a different sweep or grid."""


class SweepCellError(RuntimeError):
    """A sweep cell function raised; the message names the cell and its parameters."""
