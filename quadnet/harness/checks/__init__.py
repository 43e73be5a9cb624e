"""Paper checks, one module per claim; ``quadnet verify NAME`` runs them.

Every non-underscore module of this package is imported by :func:`available` and
registers its check with :func:`quadnet.checks._base.register`.
"""

from __future__ import annotations

import importlib
import pkgutil

from quadnet.harness.checks._base import REGISTRY, CheckContext, CheckResult, CheckSpec, Row, register

__all__ = [
    "CheckContext",
    "CheckResult",
    "CheckSpec",
    "Row",
    "available",
    "get",
    "register",
    "run_check",
]


def _load_all() -> None:
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


def available() -> list[str]:
    """Names of all registered checks, in the order ``quadnet verify`` runs them."""
    _load_all()
    return [s.name for s in sorted(REGISTRY.values(), key=lambda s: (s.order, s.name))]


def get(name: str) -> CheckSpec:
    names = available()
    if name not in REGISTRY:
        raise ValueError(f"unknown check {name!r}; available: {', '.join(names)}")
    return REGISTRY[name]


def run_check(name: str, ctx: CheckContext | None = None) -> CheckResult:
    """Run one registered check and return its :class:`CheckResult`."""
    spec = get(name)
    result = spec.run(ctx or CheckContext())
    if result.name != name:
        raise RuntimeError(f"check {name!r} returned a result named {result.name!r}")
    return result
