"""The one registry of the harness: its checks, figure drawers and sweeps.

Modelled on pluggy's ``PluginManager`` (the plugin registry of pytest): one object holds
everything registered, and code from elsewhere (a ``--checks`` file or module, an entry point
of an installed package) is loaded *into* it by its own methods. :data:`registry` is that
object; nothing else adds to or removes from its tables:

* ``quadnet.harness.register`` (a check), ``figure`` (a drawer) and ``register_sweep`` (a
  sweep) call :meth:`Registry.add_check`, :meth:`~Registry.add_figure` and
  :meth:`~Registry.add_sweep`;
* :mod:`quadnet.harness.discovery` loads files, modules and entry points with
  :meth:`~Registry.load_file`, :meth:`~Registry.load_module` and
  :meth:`~Registry.load_entry_point`: the checks registered while the code is imported are
  collected, then added with the code's origin by :meth:`~Registry.adopt`, which refuses a
  name that another check has (naming the source) without losing the source's other checks;
  :meth:`~Registry.unload_module` forgets a module's drawers and sweeps.

The tables are plain dicts owned by the registry, and the old module-level names are the same
objects: ``quadnet.harness.checks._base.REGISTRY is registry.checks``, ``_base.FIGURES is
registry.figures`` and ``quadnet.harness.SWEEPS is registry.sweeps``. The registry knows no
check, drawer or sweep type (those live in ``checks/_base`` and ``sweeps``, which import this
module), so it sits below every other harness module.

Examples
--------
>>> from quadnet.harness._registry import Registry
>>> from quadnet.harness.checks import CheckSpec
>>> reg = Registry()
>>> def run(ctx):
...     pass
>>> reg.add_check(CheckSpec("b-check", "a claim", run, order=5))
>>> reg.add_check(CheckSpec("a-check", "a claim", run, order=5))
>>> reg.list_checks()
['a-check', 'b-check']
>>> with reg.collecting() as pending:  # registrations made here wait for adopt()
...     reg.add_check(CheckSpec("c-check", "a claim", run))
>>> "c-check" in reg.checks, [s.name for s in pending]
(False, ['c-check'])
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["Registry", "origin_label", "registry"]


def origin_label(origin: dict[str, Any]) -> str:
    """Where a check comes from, in words (``quadnet verify --list``, error messages).

    Parameters
    ----------
    origin : dict
        A check's origin (``CheckSpec.origin``).

    Returns
    -------
    str

    Examples
    --------
    >>> origin_label({"kind": "built-in"})
    'built-in'
    >>> origin_label({"kind": "file", "path": "/home/me/mychecks.py", "module": "mychecks"})
    'file /home/me/mychecks.py'
    >>> origin_label({"kind": "entry point", "dist": "mp-checks", "version": "1.0",
    ...               "entry_point": "mp = mp_checks"})
    'entry point mp = mp_checks of mp-checks 1.0'
    """
    kind = origin.get("kind", "unknown")
    if kind == "file":
        return f"file {origin.get('path', '?')}"
    if kind in ("module", "python"):
        return f"module {origin.get('module', '?')}"
    if kind == "entry point":
        dist = " ".join(str(x) for x in (origin.get("dist"), origin.get("version")) if x)
        return f"entry point {origin.get('entry_point', '?')} of {dist or '?'}"
    return str(kind)


class Registry:
    """The checks, figure drawers and sweeps of the harness, and what was loaded into them.

    ``checks`` maps a name to its ``CheckSpec``, ``figures`` a stem to its drawer, ``sweeps``
    a name to its ``Sweep``; ``sources`` records, per loaded file, module or entry point, the
    result of loading it (kept by :mod:`quadnet.harness.discovery`, so that loading it again
    does nothing). Read the dicts freely; change them only through the methods.
    """

    def __init__(self) -> None:
        self.checks: dict[str, Any] = {}
        self.figures: dict[str, Callable[[dict], Any]] = {}
        self.sweeps: dict[str, Any] = {}
        self.sources: dict[tuple, Any] = {}
        self._pending: list[Any] | None = None
        self._builtins: list[Callable[[], None]] = []

    # ------------------------------------------------------------------ built-in checks
    def add_builtin_loader(self, load: Callable[[], None]) -> None:
        """``load()`` imports built-in checks; it runs before code from elsewhere is added,
        so that a clash with a built-in name is found at once."""
        if load not in self._builtins:
            self._builtins.append(load)

    def load_builtins(self) -> None:
        """Import the built-in checks (every loader of :meth:`add_builtin_loader`)."""
        for load in list(self._builtins):
            load()

    # ------------------------------------------------------------------ checks
    def add_check(self, spec: Any) -> None:
        """Register the check ``spec`` (a ``CheckSpec``): collected while :meth:`collecting`,
        else added; a name that another run function has is a ``ValueError``."""
        if self._pending is not None:
            self._pending.append(spec)
            return
        if spec.origin.get("kind") != "built-in":
            self.load_builtins()
        old = self.checks.get(spec.name)
        if old is not None and old.run is not spec.run:
            raise ValueError(f"check {spec.name!r} is registered twice (first by "
                             f"{old.run.__module__})")
        self.checks[spec.name] = spec

    def get_check(self, name: str, default: Any = None) -> Any:
        """The check ``name`` (its ``CheckSpec``), or ``default``."""
        return self.checks.get(name, default)

    def list_checks(self) -> list[str]:
        """The names of the registered checks, sorted by ``(order, name)`` (the run order)."""
        return [s.name for s in sorted(self.checks.values(), key=lambda s: (s.order, s.name))]

    def remove_check(self, name: str) -> Any:
        """Forget the check ``name``; its spec, or ``None`` if there was none."""
        return self.checks.pop(name, None)

    def add_error_check(self, spec: Any) -> None:
        """Add the failed entry standing for a source that could not be loaded."""
        self.checks[spec.name] = spec

    # ------------------------------------------------------------------ loading
    @contextlib.contextmanager
    def collecting(self) -> Iterator[list[Any]]:
        """Checks registered inside the block are collected in the list yielded, not added
        (:meth:`adopt` adds them with their origin)."""
        self.load_builtins()  # built-ins first: their registrations never land in the list
        saved, self._pending = self._pending, []
        try:
            yield self._pending
        finally:
            self._pending = saved

    def adopt(self, specs: list[Any], origin: dict[str, Any]) -> tuple[list[str], list[str]]:
        """Add the collected ``specs`` with ``origin``; the names added and the errors of the
        names refused (taken by a built-in check or by a check loaded before)."""
        label = origin_label(origin)
        added, errors = [], []
        for spec in specs:
            if spec.origin.get("kind") == "built-in":  # a quadnet module imported by user code
                self.checks.setdefault(spec.name, spec)
                continue
            old = self.checks.get(spec.name)
            if old is not None and old.run is not spec.run:
                what = ("a built-in check" if old.origin.get("kind") == "built-in"
                        else f"a check already loaded from {origin_label(old.origin)}")
                errors.append(f"check {spec.name!r} in {label} has the name of {what}; "
                              f"give it another name in register(...)")
                continue
            spec.origin = dict(origin)
            self.checks[spec.name] = spec
            if spec.name not in added:
                added.append(spec.name)
        return added, errors

    def checks_of_module(self, module: str) -> list[Any]:
        """The registered checks whose run function is defined in ``module``."""
        return [s for s in self.checks.values()
                if getattr(s.run, "__module__", None) == module]

    def load_file(self, path: Path, modname: str) -> tuple[list[Any], BaseException | None]:
        """Import the file ``path`` as module ``modname``, collecting its checks; the checks
        and the exception it raised (then the module is not kept in ``sys.modules``)."""
        spec = importlib.util.spec_from_file_location(modname, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[modname] = module
        with self.collecting() as pending:
            try:
                spec.loader.exec_module(module)
            except Exception as exc:  # noqa: BLE001 - the caller names the file
                sys.modules.pop(modname, None)
                return [], exc
        return pending, None

    def load_module(self, name: str) -> tuple[types.ModuleType | None, list[Any],
                                               BaseException | None]:
        """Import the module ``name``, collecting its checks; the module (``None`` if it
        raised), the checks and the exception."""
        with self.collecting() as pending:
            try:
                module = importlib.import_module(name)
            except Exception as exc:  # noqa: BLE001 - the caller names the module
                return None, [], exc
        return module, pending, None

    def load_entry_point(self, ep: Any) -> tuple[list[Any], BaseException | None]:
        """Load the entry point ``ep`` (a module is imported, a callable is imported and
        called with no argument), collecting its checks; the checks and the exception."""
        with self.collecting() as pending:
            try:
                obj = ep.load()
                if not isinstance(obj, types.ModuleType):
                    if not callable(obj):
                        raise TypeError(f"{ep.value} is neither a module nor a callable")
                    obj()
            except Exception as exc:  # noqa: BLE001 - the caller names the distribution
                return [], exc
        return pending, None

    def unload_module(self, module: str) -> None:
        """Forget the figure drawers and the sweeps defined in ``module``."""
        for stem in [s for s, fn in self.figures.items() if fn.__module__ == module]:
            del self.figures[stem]
        for name in [n for n, sw in self.sweeps.items() if sw.cell.partition(":")[0] == module]:
            del self.sweeps[name]

    def record_source(self, key: tuple, result: Any) -> Any:
        """Note that the source ``key`` was loaded, with ``result``; returns ``result``."""
        self.sources[key] = result
        return result

    def forget_source(self, key: tuple) -> Any:
        """Forget the loaded source ``key``; its result, or ``None``."""
        return self.sources.pop(key, None)

    # ------------------------------------------------------------------ figures
    def add_figure(self, stem: str, draw: Callable[[dict], Any]) -> None:
        """Register ``draw`` as the drawer of figure ``stem``; a stem another drawer (of
        another name) has is a ``ValueError``."""
        old = self.figures.get(stem)
        if old is not None and old.__qualname__ != draw.__qualname__:
            raise ValueError(f"figure {stem!r} is registered twice (already drawn by "
                             f"{old.__module__}.{old.__qualname__}); choose another stem")
        self.figures[stem] = draw

    def get_figure(self, stem: str) -> Callable[[dict], Any]:
        """The drawer of figure ``stem`` (``KeyError`` if there is none)."""
        return self.figures[stem]

    def list_figures(self) -> list[str]:
        """The stems of the registered drawers, sorted."""
        return sorted(self.figures)

    def remove_figure(self, stem: str) -> Any:
        """Forget the drawer of ``stem``; the drawer, or ``None``."""
        return self.figures.pop(stem, None)

    # ------------------------------------------------------------------ sweeps
    def add_sweep(self, sweep: Any) -> None:
        """Register ``sweep`` (a ``Sweep``); a name that an unequal sweep has is a
        ``ValueError``."""
        if sweep.name in self.sweeps and self.sweeps[sweep.name] != sweep:
            raise ValueError(f"sweep {sweep.name!r} is registered twice")
        self.sweeps[sweep.name] = sweep

    def get_sweep(self, name: str, default: Any = None) -> Any:
        """The sweep ``name``, or ``default``."""
        return self.sweeps.get(name, default)

    def list_sweeps(self) -> list[str]:
        """The names of the registered sweeps, sorted."""
        return sorted(self.sweeps)

    def remove_sweep(self, name: str) -> Any:
        """Forget the sweep ``name``; the sweep, or ``None``."""
        return self.sweeps.pop(name, None)


#: The registry of this process: every check, figure drawer and sweep of the harness.
registry = Registry()
