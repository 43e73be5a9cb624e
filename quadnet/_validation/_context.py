"""The state shared by the checks of one thread of calls: the nested-validation flag and the
trace of :func:`quadnet._validation.count_validations`.

Kept apart so that the coercions, the constraints and the decorator read one copy of it.
"""

from __future__ import annotations

import contextvars

#: True while a validated callable runs: nested validated callables skip their checks.
NESTED = contextvars.ContextVar("quadnet_nested_validation", default=False)

#: When not None, a list that records ``(callable, argument)`` for every argument checked
#: (set by :func:`quadnet._validation.count_validations`).
TRACE: list | None = None


def record(func: str, name: str) -> None:
    """Append ``(func, name)`` to the trace, if one is being recorded."""
    if TRACE is not None:
        TRACE.append((func, name))
