"""Paper checks, one module per claim; ``quadnet verify NAME`` runs them.

Every non-underscore module of this package is imported by :func:`available` and
registers its check with :func:`quadnet.harness.register`. Checks that live outside the
package are loaded by :mod:`quadnet.harness.discovery` into the same registry
(``quadnet.harness._registry.registry``, which holds the checks, figure drawers and sweeps).
"""

from __future__ import annotations

import importlib
import pkgutil

from quadnet.harness._registry import registry
from quadnet.harness.checks._base import (
    CheckContext,
    CheckError,
    CheckResult,
    CheckSpec,
    Row,
    _checked_result,
    origin_label,
    register,
)

__all__ = [
    "CheckContext",
    "CheckError",
    "CheckResult",
    "CheckSpec",
    "Row",
    "available",
    "default_checks",
    "get",
    "register",
    "run_check",
]


def _load_all() -> None:
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


registry.add_builtin_loader(_load_all)  # loaded before any check from elsewhere is added


def available() -> list[str]:
    """Names of all registered checks, in the order ``quadnet verify`` runs them.

    Returns
    -------
    list of str
        The built-in checks and every check loaded so far (``quadnet.harness.load_checks``).

    Examples
    --------
    >>> {"geometry", "quotient"} <= set(available())
    True
    """
    registry.load_builtins()
    return registry.list_checks()


def default_checks() -> list[str]:
    """The checks a plain ``quadnet verify`` runs: :func:`available` without the heavy ones
    (registered with ``heavy=True``: ``parity`` and ``grokking``), which run when named or
    with ``quadnet verify --all``.

    Examples
    --------
    >>> "quotient" in default_checks() and "parity" not in default_checks()
    True
    """
    return [n for n in available() if not registry.get_check(n).heavy]


def get(name: str) -> CheckSpec:
    """The registered check ``name``; ``ValueError`` listing the available ones otherwise."""
    names = available()
    spec = registry.get_check(name)
    if spec is None:
        raise ValueError(f"unknown check {name!r}; available: {', '.join(names)}")
    return spec


def run_check(name: str, ctx: CheckContext | None = None) -> CheckResult:
    """Run one registered check and return its :class:`CheckResult`.

    Parameters
    ----------
    name : str
        A name of :func:`quadnet.harness.available_checks` (a built-in check, or one loaded with
        ``quadnet.harness.load_checks``).
    ctx : CheckContext, optional
        Seed, mode and figure directory (default ``CheckContext()``: seed 0, full mode, no
        figure files).

    Returns
    -------
    CheckResult
        Its ``origin`` says where the check comes from.

    Raises
    ------
    ValueError
        For an unknown name.
    CheckError
        When a check loaded from a file, module or entry point raises, or returns something
        else than a result of its own name; the message names the file or module.

    Examples
    --------
    >>> res = run_check("quotient", CheckContext(quick=True))  # doctest: +SKIP
    >>> res.status, res.origin  # doctest: +SKIP
    ('PASS', {'kind': 'built-in'})
    """
    spec = get(name)
    external = spec.origin.get("kind") in ("file", "module", "entry point")
    try:
        result = spec.run(ctx or CheckContext())
    except Exception as exc:
        # a built-in check's error, or a refused result (its message names the check already)
        if not external or getattr(exc, "check", None) == name:
            raise
        raise CheckError(f"check {name!r} ({origin_label(spec.origin)}) raised "
                         f"{type(exc).__name__}: {exc}") from exc
    # a run function not made by register (a CheckSpec built by hand) is checked here
    result = _checked_result(name, spec.run, result, origin=spec.origin,
                             takes_result=getattr(spec.run, "takes_result", False))
    result.origin = dict(spec.origin)
    return result
