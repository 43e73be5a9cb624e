"""Argument checking at the public boundary, and the one vectorisation convention (quadnet
theory §0).

Every public callable checks its arguments once, so that bad input gets a
``TypeError``/``ValueError`` naming the argument and what was expected, never a NaN. The
package is split by job:

* :mod:`~quadnet._validation.coercion`: the ``as_*`` coercions of one argument (``as_array``,
  ``as_factor``, ``as_rng``, ``as_solver``, ...), ``vec``/``unvec`` and ``renamed_keyword``;
* :mod:`~quadnet._validation.constraints`: the :class:`Constraint` classes of the declarative
  tables (``Real``, ``Integer``, ``Array``, ``Factor``, ``Seed``, ``CvxpySolver``, ...) and
  :class:`Relation`;
* :mod:`~quadnet._validation.decorator`: :func:`validate_params` and :func:`declare_params`,
  which apply a table, :func:`fit_context` (an estimator's table, checked in ``fit``), the
  nested-validation skip (:func:`nested`), the checks of a result and
  :func:`count_validations`;
* :mod:`~quadnet._validation.docgen`: the ``Raises`` sections generated from a table;
* :mod:`~quadnet._validation.badvalues`: :func:`bad_values`, the one bad-value generator of the
  tests, driven by a table entry;
* :mod:`~quadnet._validation.resources`: :func:`available_memory` (``/proc``, ``ulimit -v``)
  and :func:`memory_guard`, the relation that refuses sizes that cannot be allocated.

The error classes it raises are defined in :mod:`quadnet.exceptions` and re-exported here.
Every name below is importable from ``quadnet._validation`` itself.

Examples
--------
>>> from quadnet._validation import Real, validate_params
>>> @validate_params({"eta": Real(0, None, closed="neither")})
... def step(eta):
...     return 2 * eta
>>> step(0)
Traceback (most recent call last):
    ...
ValueError: step: eta must be finite and > 0, got 0.0
"""

from __future__ import annotations

# private names that modules and tests elsewhere in quadnet import from here
from quadnet._validation._context import NESTED as _NESTED  # noqa: F401
from quadnet._validation._context import record as _record  # noqa: F401
from quadnet._validation import badvalues, coercion, constraints, decorator, docgen, resources
# each submodule's public names, as its own ``__all__`` declares them (star imports: the names
# are written once, where they are defined)
from quadnet._validation.badvalues import *  # noqa: F403
from quadnet._validation.coercion import *  # noqa: F403
from quadnet._validation.constraints import *  # noqa: F403
from quadnet._validation.constraints import _bind as _bind
from quadnet._validation.decorator import *  # noqa: F403
from quadnet._validation.decorator import (
    _check_result as _check_result,
    _extreme_arguments as _extreme_arguments,
    _linalg_failure as _linalg_failure,
    _nonfinite as _nonfinite,
    _overflow_error as _overflow_error,
)
from quadnet._validation.docgen import *  # noqa: F403
from quadnet._validation.resources import *  # noqa: F403
from quadnet.exceptions import (
    LinAlgFailure as LinAlgFailure,
    NonFiniteResultError as NonFiniteResultError,
    SizeTooLargeError as SizeTooLargeError,
    SolverFailure as SolverFailure,
)

# the public names: the submodules' own ``__all__`` and the re-exported error classes
__all__ = sorted({
    *badvalues.__all__, *coercion.__all__, *constraints.__all__, *decorator.__all__,
    *docgen.__all__, *resources.__all__,
    "LinAlgFailure", "NonFiniteResultError", "SizeTooLargeError", "SolverFailure",
})
