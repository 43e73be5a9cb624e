"""The one registry of the harness: its checks, figure drawers and sweeps.

Modelled on pluggy's ``PluginManager`` (the plugin registry of pytest): one object holds
everything registered, and code from elsewhere (a ``--checks`` file or module, an entry point
of an installed package) is loaded *into* it by its own methods. :data:`registry` is that
object; nothing else adds to or removes from its tables:

* ``quadnet.harness.register`` (a check), ``figure`` (a drawer) and ``register_sweep`` (a
  sweep) call :meth:`Registry.add_check`, :meth:`~Registry.add_figure` and
  :meth:`~Registry.add_sweep`;
* :mod:`quadnet.harness.discovery` (``--checks``, :func:`quadnet.harness.load_checks`, the
  ``quadnet.checks`` entry points) calls :meth:`~Registry.load_file`,
  :meth:`~Registry.load_module`, :meth:`~Registry.load_entry_points` and
  :meth:`~Registry.unload`: the checks registered while the code is imported are collected
  (:meth:`~Registry.collecting`), then added with the code's origin by
  :meth:`~Registry.adopt`, which refuses a name that another check has (naming the source)
  without losing the source's other checks; ``sources`` keeps one :class:`LoadResult` per
  file, module or entry point loaded.

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
import hashlib
import importlib
import importlib.metadata
import importlib.util
import keyword
import os
import re
import sys
import traceback
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["LoadResult", "Registry", "origin_label", "registry", "sha256_of"]


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


@dataclass
class LoadResult:
    """What loading one source did: the checks it registered and the errors it met.

    ``source`` is the file, module or entry point as given; ``origin`` the dict recorded
    with its checks; ``error_check`` the name of the failed report entry standing for its
    errors (command line only).
    """

    source: str
    origin: dict[str, Any]
    checks: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    traceback: str = ""
    error_check: str | None = None
    exception: BaseException | None = field(default=None, repr=False)
    added_path: str | None = field(default=None, repr=False)


def sha256_of(path: str | os.PathLike | None) -> str | None:
    """The SHA-256 of the file ``path`` (``None`` without a readable file)."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest() if path else None
    except OSError:
        return None


def _import_failed(res: LoadResult, exc: BaseException) -> None:
    res.exception = exc
    res.traceback = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    res.errors.append(f"could not load {origin_label(res.origin)}: {type(exc).__name__}: {exc}")


def _same_run(a: Callable, b: Callable) -> bool:
    """Whether two registered run functions are one check function (``register`` wraps the
    function it decorates, so the same function registered twice gives two wrappers)."""
    return a is b or getattr(a, "__wrapped__", a) is getattr(b, "__wrapped__", b)


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


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
        if old is not None and not _same_run(old.run, spec.run):
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
            if old is not None and not _same_run(old.run, spec.run):
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

    def _adopt(self, specs: list[Any], res: LoadResult) -> None:
        added, errors = self.adopt(specs, res.origin)
        res.errors += errors
        res.checks += [n for n in added if n not in res.checks]

    def load_file(self, source: str) -> LoadResult:
        """Load the checks of the Python file ``source`` (imported as the module named by its
        stem, its folder first on ``sys.path``) into the registry; loading it again returns
        the same result. A missing or non-``.py`` file is a ``ValueError``; a file that
        raises or clashes gives a result with ``errors``."""
        path = Path(source).expanduser().resolve()
        key = ("file", str(path))
        if key in self.sources:
            return self.sources[key]
        modname = path.stem
        res = LoadResult(source, {"kind": "file", "path": str(path), "module": modname,
                                  "sha256": sha256_of(path)})
        if not path.is_file():
            raise ValueError(f"--checks source: no such file {source!r}")
        if path.suffix != ".py":
            raise ValueError(f"--checks source: {source!r} is not a Python file (.py)")
        if not modname.isidentifier() or keyword.iskeyword(modname):
            res.errors.append(f"could not load {origin_label(res.origin)}: its name must be a "
                              f"Python module name (letters, digits and _), so that its cell "
                              f"functions can be imported; rename it, e.g. to "
                              f"{re.sub(r'[^0-9A-Za-z_]', '_', modname)}.py")
            return self._record(key, res)
        existing = sys.modules.get(modname)
        if existing is not None:
            where = getattr(existing, "__file__", None)
            if where and Path(where).resolve() == path:  # imported before (e.g. by a test)
                self._adopt(self.checks_of_module(modname), res)
            else:
                res.errors.append(f"could not load {origin_label(res.origin)}: the module name "
                                  f"{modname!r} is already taken by "
                                  f"{where or 'a built-in module'}; rename the file")
            return self._record(key, res)
        found = importlib.util.find_spec(modname)
        if found is not None and found.origin and Path(found.origin).resolve() != path:
            res.errors.append(f"could not load {origin_label(res.origin)}: its module name "
                              f"{modname!r} is also the name of the installed module "
                              f"{found.origin}; rename the file")
            return self._record(key, res)
        folder = str(path.parent)
        added = folder not in sys.path
        if added:
            sys.path.insert(0, folder)
            res.added_path = folder
        spec = importlib.util.spec_from_file_location(modname, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[modname] = module
        with self.collecting() as pending:
            try:
                spec.loader.exec_module(module)
            except Exception as exc:  # noqa: BLE001 - reported with the file's name
                sys.modules.pop(modname, None)
                if added:
                    with contextlib.suppress(ValueError):
                        sys.path.remove(folder)
                    res.added_path = None
                _import_failed(res, exc)
                pending = []
        self._adopt(pending, res)
        return self._record(key, res)

    def load_module(self, source: str) -> LoadResult:
        """Load the checks of the importable module ``source`` into the registry; loading
        it again returns the same result. A name that is not importable is a
        ``ValueError``; a module that raises or clashes gives a result with ``errors``."""
        key = ("module", source)
        if key in self.sources:
            return self.sources[key]
        if not all(part.isidentifier() for part in source.split(".")):
            raise ValueError(f"--checks source: {source!r} is neither a .py file nor a module "
                             "name")
        res = LoadResult(source, {"kind": "module", "module": source})
        before = source in sys.modules
        with self.collecting() as pending:
            try:
                module = importlib.import_module(source)
            except ModuleNotFoundError as exc:
                if exc.name is not None and (source == exc.name
                                             or source.startswith(exc.name + ".")):
                    raise ValueError(f"--checks source: no file and no importable module "
                                     f"{source!r} ({exc})") from None
                _import_failed(res, exc)
                module = None
            except Exception as exc:  # noqa: BLE001 - reported with the module's name
                _import_failed(res, exc)
                module = None
        if module is not None:
            res.origin["path"] = getattr(module, "__file__", None)
            res.origin["sha256"] = sha256_of(res.origin["path"])
            self._adopt(pending + (self.checks_of_module(source) if before else []), res)
        return self._record(key, res)

    def load_entry_points(self, group: str) -> list[LoadResult]:
        """Load every entry point of ``group`` into the registry (as pluggy's
        ``load_setuptools_entrypoints``): each distribution ``importlib.metadata`` finds is
        visited once (the first copy on ``sys.path`` wins); a module entry point is
        imported, a callable one imported and called with no argument. One result per entry
        point (loaded before: the same result); a failure is in its ``errors``, with the
        distribution's name."""
        out, seen = [], set()
        for dist in list(importlib.metadata.distributions()):
            name = dist.metadata["Name"] or "?"
            if _canonical(name) in seen:  # a second copy further down sys.path is shadowed
                continue
            seen.add(_canonical(name))
            for ep in dist.entry_points:
                if ep.group != group:
                    continue
                key = ("entry point", _canonical(name), ep.name)
                if key in self.sources:
                    out.append(self.sources[key])
                    continue
                res = LoadResult(f"{ep.name} = {ep.value}", {
                    "kind": "entry point", "dist": name, "version": dist.version,
                    "entry_point": f"{ep.name} = {ep.value}", "module": ep.module})
                with self.collecting() as pending:
                    try:
                        obj = ep.load()
                        if not isinstance(obj, types.ModuleType):
                            if not callable(obj):
                                raise TypeError(f"{ep.value} is neither a module nor a "
                                                "callable")
                            obj()
                    except Exception as exc:  # noqa: BLE001 - reported with the dist's name
                        _import_failed(res, exc)
                        pending = []
                mod = sys.modules.get(ep.module)
                res.origin["path"] = getattr(mod, "__file__", None)
                res.origin["sha256"] = sha256_of(res.origin["path"])
                self._adopt(pending, res)
                out.append(self._record(key, res))
        return out

    def _record(self, key: tuple, res: LoadResult) -> LoadResult:
        self.sources[key] = res
        return res

    def unload(self, key: tuple) -> list[str]:
        """Forget the loaded source ``key`` (``("file", PATH)`` or ``("module", NAME)``): its
        checks (and its failed entry), the drawers and sweeps of its module, the module of a
        file and the folder it put on ``sys.path``; the names of the checks removed."""
        res = self.sources.pop(key, None)
        if res is None:
            return []
        module = res.origin.get("module")
        removed = [n for n in res.checks if self.checks.pop(n, None) is not None]
        if res.error_check:
            self.checks.pop(res.error_check, None)
        if module:
            self.unload_module(module)
            if res.origin.get("kind") == "file":
                sys.modules.pop(module, None)
        if res.added_path:
            with contextlib.suppress(ValueError):
                sys.path.remove(res.added_path)
        return removed

    def unload_module(self, module: str) -> None:
        """Forget the figure drawers and the sweeps defined in ``module``."""
        for stem in [s for s, fn in self.figures.items() if fn.__module__ == module]:
            del self.figures[stem]
        for name in [n for n, sw in self.sweeps.items() if sw.cell.partition(":")[0] == module]:
            del self.sweeps[name]

    def add_error_check(self, spec: Any, res: LoadResult) -> None:
        """Add ``spec``, the failed report entry standing for the errors of the source
        ``res`` (so that a run reports them), and note its name in ``res``."""
        self.checks[spec.name] = spec
        res.error_check = spec.name

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
