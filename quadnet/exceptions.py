"""The warning and error classes of quadnet, in one place.

Every quadnet warning class is here, and every error class quadnet raises to its callers
outside the harness (renamed names also issue Python's DeprecationWarning): the errors of the
numerical layers (``DivergenceError``, ``KernelMemoryError``, ...) and those of argument
checking (``NonFiniteResultError``, ``SizeTooLargeError``, ``SolverFailure``,
``LinAlgFailure``, raised by :mod:`quadnet._validation` and still importable from there). The
harness keeps three classes beside the code that raises them: ``CheckError``
(``quadnet.harness.checks._base``), ``ReportError`` (``quadnet.harness.report``, also
importable from ``quadnet.harness.compare``) and ``Interrupted``, the ``KeyboardInterrupt`` of
``quadnet verify``'s signal handler (``quadnet.harness.cli``). Private signals that never leave
their module (``quadnet.dynamics._NonFiniteRHS``, ``quadnet.features.rfm._ZeroTrace`` and
``_Overflow``) are caught there and re-raised as one of the classes below.

This module imports nothing from quadnet: it is the lowest layer, below
:mod:`quadnet._validation`, so every other module can raise its classes.

Errors subclass :class:`ValueError` (bad numbers or a failed numerical premise) or
:class:`RuntimeError` (a failure inside harness machinery), so ``except ValueError`` keeps
working for callers who do not care about the specific class. Warnings subclass
:class:`QuadnetWarning`, so ``warnings.simplefilter("error", quadnet.exceptions.QuadnetWarning)``
turns every quadnet warning into an error at once.

Examples
--------
>>> from quadnet.exceptions import DivergenceError, SizeTooLargeError
>>> issubclass(DivergenceError, ValueError), issubclass(SizeTooLargeError, MemoryError)
(True, True)
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "ConvergenceWarning",
    "DegenerateFeaturesError",
    "DivergenceError",
    "IndefiniteHessianWarning",
    "InfeasibleError",
    "KernelConvergenceWarning",
    "KernelMemoryError",
    "LinAlgFailure",
    "NonFiniteResultError",
    "NotAMinimiserWarning",
    "NotCriticalWarning",
    "QuadnetWarning",
    "RFMWarning",
    "RankDeficientSpectrumWarning",
    "SizeTooLargeError",
    "SolverFailure",
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


# ------------------------------------------------------------------ errors of argument checking
# (raised by quadnet._validation at the public boundary; also importable from there)


class NonFiniteResultError(ValueError, FloatingPointError):
    """A validated callable produced a non-finite result from finite arguments (overflow).

    It is a ``ValueError`` (bad, extreme input) and a ``FloatingPointError``; the message names
    the arguments whose magnitude is extreme.
    """


class SizeTooLargeError(MemoryError, ValueError):
    """A size whose memory estimate exceeds what the machine can allocate (refused up front).

    A :class:`MemoryError` and a :class:`ValueError`; the message names the sizes.
    """


class SolverFailure(ValueError):
    """A third-party solver failed (cvxpy's ``SolverError``); the message names ``solver``."""


class LinAlgFailure(np.linalg.LinAlgError):
    """A LAPACK failure (``numpy.linalg.LinAlgError``, e.g. "SVD did not converge") inside a
    validated callable, re-raised naming the arguments; ``LinAlgError`` is a ``ValueError``."""
