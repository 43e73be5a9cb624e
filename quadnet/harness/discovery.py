"""Checks that live outside quadnet: loading them from files, modules and entry points.

A check of your own is a function registered with :func:`quadnet.harness.register` in any
Python file or module. It is loaded, and then named like a built-in check, by

* ``quadnet verify --checks FILE_OR_MODULE`` (repeatable; also ``quadnet figures`` and
  ``quadnet sweep``), or :func:`load_checks` from Python: a path ending in ``.py`` is
  imported as the module named by its stem, with its folder put first on ``sys.path`` (as
  pytest's default ``prepend`` import mode does with test files), so that the cell functions
  of its sweeps can be imported by name in worker processes; anything else is imported as a
  module name;
* the ``quadnet.checks`` entry-point group of an installed package, modelled on pytest's
  ``pytest11`` plugins (pluggy's ``load_setuptools_entrypoints``): every distribution that
  ``importlib.metadata.distributions()`` finds is visited once (the first copy on ``sys.path``
  wins), and each of its entry points in the group is loaded: a module (``name = pkg.checks``)
  is imported, a callable (``name = pkg.checks:setup``) is imported and called with no
  argument. Entry points are loaded by every ``quadnet verify``, ``figures`` and ``sweep``
  run; ``QUADNET_DISABLE_CHECK_AUTOLOAD=1`` switches that off (like
  ``PYTEST_DISABLE_PLUGIN_AUTOLOAD``).

Every loaded check records its *origin* (``{"kind": "file", "path", "module", "sha256"}``,
``{"kind": "module", ...}`` or ``{"kind": "entry point", "dist", "version", "entry_point",
...}``); the report keeps it per check, ``quadnet verify --list`` shows it, and
``quadnet figures --from REPORT`` uses it to load the drawers of a file-based check again
when the file is still there with the same SHA-256 (otherwise it says which ``--checks`` to
pass).

Sources are loaded into the one registry of the harness,
``quadnet.harness._registry.registry``, by its own methods (``load_file``,
``load_module``, ``load_entry_points``, ``unload``); this module chooses what to load, checks
the arguments and reports the errors, and changes no table itself.

A source that cannot be loaded (it raises on import, or a check in it has the name of a
built-in check or of a check loaded before) gives an error naming the file or module. From
the command line it becomes a failed entry of the report, named after the source, so the
other checks still run and the exit status is non-zero; :func:`load_checks` raises.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

from quadnet._validation import declare_params
from quadnet.harness import checks as _checks
from quadnet.harness._constraints import Source
from quadnet.harness._registry import LoadResult, origin_label, registry, sha256_of
from quadnet.harness.checks._base import CheckError, CheckResult, CheckSpec

__all__ = [
    "AUTOLOAD_ENV",
    "GROUP",
    "LoadResult",
    "check_origin",
    "list_checks",
    "load_checks",
    "load_entry_points",
    "unload_checks",
]

#: The entry-point group an installed package declares its checks in.
GROUP = "quadnet.checks"
#: Set this environment variable (to anything but ``""`` or ``0``) to load no entry points.
AUTOLOAD_ENV = "QUADNET_DISABLE_CHECK_AUTOLOAD"

#: Every source loaded in this process (loading it again returns the same result): the dict
#: ``registry.sources`` of ``quadnet.harness._registry.registry``.
_LOADED: dict[tuple, LoadResult] = registry.sources


def _is_file_source(source: str) -> bool:
    return source.endswith(".py") or os.sep in source or "/" in source or Path(source).is_file()


_SOURCE = Source()


def _load(source: str | os.PathLike) -> LoadResult:
    source = os.fspath(source)
    if not isinstance(source, str) or not source:
        raise ValueError(f"--checks expects a .py file or a module name, got {source!r}")
    return registry.load_file(source) if _is_file_source(source) else \
        registry.load_module(source)


# declared, checked inline: a validated wrapper would switch off the checks of the
# ``register`` calls made while the user's file is imported (nested validation is skipped)
@declare_params({"source": _SOURCE})
def load_checks(source: str | os.PathLike) -> list[str]:
    """Load the checks (and their figure drawers and sweeps) of a file or module.

    Loading the same source again does nothing and returns the same names. A missing file,
    or a name that is neither a file nor an importable module, is a ``ValueError``
    (``--checks source: no such file ...``).

    Parameters
    ----------
    source : str or os.PathLike
        A ``.py`` file (imported as the module named by its stem, its folder first on
        ``sys.path``) or an importable module name such as ``"mypkg.checks"``.

    Returns
    -------
    list of str
        The names of the checks it registered; ``quadnet.harness.run_check`` runs them.

    Raises
    ------
    CheckError
        When the source raises on import (chained to that exception) or one of its checks
        has the name of another check (its other checks are registered); the message names
        the file or module.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "doc_trace_checks.py").write_text('''
    ... import numpy as np
    ... from quadnet.harness import register
    ...
    ... @register("doc-trace", "tr(U U^T) equals the squared Frobenius norm of U")
    ... def run(ctx, res):
    ...     U = ctx.rng("U").standard_normal((6, 2))
    ...     res.add("trace identity", abs(np.trace(U @ U.T) - np.sum(U * U)), 1e-12,
    ...             kind="theorem", source="a textbook identity")
    ... ''')
    >>> load_checks(folder / "doc_trace_checks.py")
    ['doc-trace']
    >>> from quadnet.harness import CheckContext, run_check
    >>> res = run_check("doc-trace", CheckContext(quick=True))
    >>> res.status, res.origin["kind"], res.origin["module"]
    ('PASS', 'file', 'doc_trace_checks')
    >>> unload_checks(folder / "doc_trace_checks.py")
    ['doc-trace']
    """
    res = _load(_SOURCE.convert(source, "source", {}))
    if res.errors:
        raise CheckError("; ".join(res.errors)) from res.exception
    return list(res.checks)


@declare_params({"source": _SOURCE})
def unload_checks(source: str | os.PathLike) -> list[str]:
    """Forget what :func:`load_checks` loaded from ``source``: its checks, figure drawers,
    sweeps and module (so that an edited file can be loaded again, e.g. in a notebook).

    Parameters
    ----------
    source : str or os.PathLike
        As given to :func:`load_checks`.

    Returns
    -------
    list of str
        The names of the checks removed (``[]`` if ``source`` was not loaded).

    Examples
    --------
    >>> unload_checks("no_such_module_was_loaded")
    []
    """
    source = _SOURCE.convert(source, "source", {})
    key = (("file", str(Path(source).expanduser().resolve())) if _is_file_source(source)
           else ("module", source))
    return registry.unload(key)


def _autoload_disabled() -> bool:
    return os.environ.get(AUTOLOAD_ENV, "").strip() not in ("", "0")


def load_entry_points() -> list[LoadResult]:
    """Load every entry point of the ``quadnet.checks`` group (see the module docstring).

    Nothing is loaded when ``QUADNET_DISABLE_CHECK_AUTOLOAD`` is set. An entry point that
    fails is reported in its :class:`LoadResult` (nothing raises), with the distribution's
    name in the message.

    Returns
    -------
    list of LoadResult
        One per entry point, in the order of ``importlib.metadata.distributions()``.

    Examples
    --------
    >>> all(r.origin["kind"] == "entry point" for r in load_entry_points())
    True
    """
    return [] if _autoload_disabled() else registry.load_entry_points(GROUP)


def check_origin(name: str) -> dict[str, Any]:
    """Where the registered check ``name`` comes from (a copy of its origin dict).

    Examples
    --------
    >>> check_origin("quotient")
    {'kind': 'built-in'}
    """
    return dict(_checks.get(name).origin)


def list_checks() -> list[dict[str, Any]]:
    """Every registered check as ``{"name", "claim", "origin", "from"}``, in run order.

    ``from`` is the origin in words (``"built-in"``, ``"file /path/mychecks.py"``, ...).

    Examples
    --------
    >>> rows = list_checks()
    >>> next(r for r in rows if r["name"] == "quotient")["from"]
    'built-in'
    """
    specs = [registry.get_check(n) for n in _checks.available()]
    return [{"name": s.name, "claim": s.claim, "origin": dict(s.origin),
             "from": origin_label(s.origin)} for s in specs]


# ------------------------------------------------------------------------------ the CLI
def _error_check(res: LoadResult) -> str:
    """A failed report entry standing for ``res``'s errors (so the run reports them)."""
    if res.error_check:
        return res.error_check
    kind = res.origin.get("kind")
    base = (Path(res.origin["path"]).name if kind == "file" else
            res.origin.get("module") if kind == "module" else
            f"entry point {res.source.split(' = ')[0]}")
    name, i = base, 2
    while registry.get_check(name) is not None:
        name, i = f"{base} ({i})", i + 1
    message = "; ".join(res.errors)
    claim = f"the checks of {origin_label(res.origin)} load"

    def run(ctx, _name=name, _claim=claim, _message=message):
        return CheckResult(_name, _claim, metrics={"error": _message})

    registry.add_error_check(CheckSpec(name, claim, run, -10**9,
                                       {**res.origin, "load_error": message}), res)
    return name


def load_for_command(sources: list[str] | None, command: str) -> list[str] | None:
    """Load the entry points and ``--checks`` sources for ``quadnet COMMAND``.

    Errors are printed (with the traceback of a source that raised) and each failed source
    becomes a failed report entry; returns their names, or ``None`` after a usage error
    (a missing file: nothing should run).
    """
    results = load_entry_points()
    for source in sources or []:
        try:
            results.append(_load(source))
        except ValueError as exc:
            print(f"quadnet {command}: {exc}", file=sys.stderr)
            return None
    failed = []
    for res in results:
        if not res.errors:
            continue
        new = res.error_check is None
        name = _error_check(res)
        if new:
            if res.traceback:
                sys.stderr.write(res.traceback)
            for err in res.errors:
                print(f"quadnet {command}: {err}", file=sys.stderr)
        if name not in failed:
            failed.append(name)
    return failed


def format_list(fmt: str = "text") -> str:
    """``quadnet verify --list``: every check, where it comes from, and its claim."""
    rows = list_checks()
    if fmt == "json":
        return json.dumps(rows, indent=2) + "\n"
    width = max([len(r["name"]) for r in rows] + [5])
    out = []
    for r in rows:
        where = r["from"]
        if "load_error" in r["origin"]:
            where += "  LOAD ERROR: " + r["origin"]["load_error"]
        spec = registry.get_check(r["name"])
        if spec is not None and spec.heavy:
            where += "  (heavy: runs when named, or with --all)"
        out.append(f"{r['name']:<{width}}  {where}")
        out += textwrap.wrap(r["claim"], 88, initial_indent=" " * (width + 4),
                             subsequent_indent=" " * (width + 4))
    n_user = sum(r["origin"].get("kind") != "built-in" for r in rows)
    out.append(f"{len(rows)} checks ({len(rows) - n_user} built-in, {n_user} loaded from "
               "--checks or the quadnet.checks entry points)")
    return "\n".join(out) + "\n"


def load_for_report(sources: list[str] | None, report: dict) -> list[str] | None:
    """``quadnet figures --from REPORT``: load ``--checks``, the entry points and the
    checks the report names that are not registered yet, from their recorded origin.

    A file is loaded again only if it is still at the recorded path with the recorded
    SHA-256 (the code that wrote the report); otherwise the message says what to pass.
    """
    failed = load_for_command(sources, "figures")
    if failed is None:
        return None
    for chk in report.get("checks", []):
        origin = chk.get("origin") if isinstance(chk, dict) else None
        if not isinstance(origin, dict) or registry.get_check(chk.get("name")) is not None:
            continue
        kind, name = origin.get("kind"), chk.get("name")
        if kind == "file":
            path, sha = origin.get("path"), origin.get("sha256")
            if not path or not Path(path).is_file():
                print(f"[quadnet] check {name!r} came from {path}, which no longer exists; "
                      f"pass --checks FILE to redraw its figures", file=sys.stderr)
                continue
            if sha and sha256_of(path) != sha:
                print(f"[quadnet] check {name!r} came from {path}, which changed since the "
                      f"report was written; pass --checks {path} to redraw its figures with "
                      "the current code", file=sys.stderr)
                continue
            print(f"[quadnet] loading check {name!r} from {path} (recorded in the report, "
                  "same SHA-256)", file=sys.stderr)
            res = _load(path)
        elif kind == "module" and origin.get("module"):
            try:
                res = _load(origin["module"])
            except ValueError as exc:
                print(f"[quadnet] check {name!r}: {exc}", file=sys.stderr)
                continue
        else:
            continue
        for err in res.errors:
            print(f"quadnet figures: {err}", file=sys.stderr)
    return failed
