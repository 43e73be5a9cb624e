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
from quadnet._validation.badvalues import BadValue, accepted_values, bad_values, kind_of
from quadnet._validation.coercion import (
    RANK_RTOL,
    as_array,
    as_directions,
    as_factor,
    as_int,
    as_matrix,
    as_positive,
    as_rng,
    as_solver,
    as_square,
    as_symmetric,
    installed_solvers,
    rank_deficiency,
    record_array,
    renamed_keyword,
    to_rng,
    unvec,
    vec,
)
from quadnet._validation.constraints import (
    Array,
    Bind,
    Boolean,
    Constraint,
    Converted,
    CvxpySolver,
    Directions,
    Factor,
    Instance,
    Integer,
    IsCallable,
    Optional,
    Options,
    Real,
    Relation,
    Seed,
    Sequence,
    Symmetric,
    TimeGrid,
    _bind as _bind,
)
from quadnet._validation.decorator import (
    _check_result as _check_result,
    _extreme_arguments as _extreme_arguments,
    _linalg_failure as _linalg_failure,
    _nonfinite as _nonfinite,
    _overflow_error as _overflow_error,
    count_validations,
    declare_params,
    finite_result,
    fit_context,
    name_callable,
    nested,
    solve_cvxpy,
    solver_failure,
    validate_estimator,
    validate_params,
)
from quadnet._validation.docgen import raises_text
from quadnet._validation.resources import available_memory, memory_guard
from quadnet.exceptions import (
    LinAlgFailure,
    NonFiniteResultError,
    SizeTooLargeError,
    SolverFailure,
)

__all__ = [
    "RANK_RTOL",
    "Array",
    "BadValue",
    "Bind",
    "Boolean",
    "Constraint",
    "Converted",
    "CvxpySolver",
    "Directions",
    "Factor",
    "Instance",
    "Integer",
    "IsCallable",
    "LinAlgFailure",
    "NonFiniteResultError",
    "Optional",
    "Options",
    "Real",
    "Relation",
    "Seed",
    "Sequence",
    "SizeTooLargeError",
    "SolverFailure",
    "Symmetric",
    "TimeGrid",
    "accepted_values",
    "as_array",
    "as_directions",
    "as_factor",
    "as_int",
    "as_matrix",
    "as_positive",
    "as_rng",
    "as_solver",
    "as_square",
    "as_symmetric",
    "available_memory",
    "bad_values",
    "count_validations",
    "declare_params",
    "finite_result",
    "fit_context",
    "installed_solvers",
    "kind_of",
    "memory_guard",
    "name_callable",
    "nested",
    "raises_text",
    "rank_deficiency",
    "record_array",
    "renamed_keyword",
    "solve_cvxpy",
    "solver_failure",
    "to_rng",
    "unvec",
    "validate_estimator",
    "validate_params",
    "vec",
]
