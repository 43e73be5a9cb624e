"""Resumable parameter sweeps on local processes or a Dask cluster (``quadnet sweep``).

A *sweep* is a named parameter grid (the product of its axes) cut into *cells*; each cell is
one call of a pure function ``cell(**params, seed=cell_seed) -> dict`` that returns scalar
results. The function is named by its import path
(``"quadnet.harness.cells:recovery_sweep_cell"``) and imported lazily, in the worker, so a sweep
whose module is missing does not break the others. The built-in sweeps (``quotient-gd``,
``recovery``, ``selection``, ``beyond-limits``, ``beyond-joint``, ``beyond-commutator``,
``grokking``, ``parity``) are defined in :mod:`quadnet.harness.cells`. A cell's result keys
that repeat a grid axis (or ``seed``) are dropped when their value equals the cell's own, and
refused otherwise, so ``results.csv`` never has a column twice.

:func:`run_sweep` runs the unfinished cells of a store (see :mod:`quadnet.harness._store`) on

* local processes (``workers=N``, :class:`concurrent.futures.ProcessPoolExecutor` with
  single-threaded BLAS; started by ``fork`` where the platform has it, so a script needs no
  ``if __name__ == "__main__":`` guard and a killed run leaves no named semaphores behind;
  with ``start_method="spawn"`` a missing guard is detected and explained),
* a local Dask cluster (``dask_local=N``: :class:`distributed.LocalCluster` with ``N``
  one-thread worker processes), or
* an existing Dask scheduler (``scheduler="tcp://host:8786"``; its workers must have
  quadnet installed).

Cells travel to the workers in tasks of ``chunk`` cells (default: about 8 tasks per worker,
at most 16 cells each, so that Dask's per-task overhead is amortised). Only the calling
process writes to the store: each cell of a finished task is written atomically (temporary
file + ``os.replace``) as soon as the task's result arrives, so a sweep killed at any moment
(SIGKILL included) keeps every cell that reached the store, leaves no partial file, and
resumes where it stopped; at most the tasks in flight are computed again. The cell seed
is a function of the master seed, the sweep name and the cell's parameters only (never of
the worker or of the order of completion), and results.csv holds the exact float64 values in
cell order, so the file is byte-identical for every backend, worker count and interruption.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import importlib
import itertools
import json
import os
import sys
import time
import zlib
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quadnet.harness._store import RESULTS, Store, SweepStoreError
from quadnet._validation import (Boolean, Instance, Integer, as_int, name_callable,
                                 validate_params)
from quadnet.harness._constraints import Grid
from quadnet.harness._registry import registry

from quadnet.exceptions import SweepCellError

__all__ = [
    "SWEEPS",
    "Sweep",
    "SweepReport",
    "available_sweeps",
    "cell_key",
    "cpu_seconds",
    "finished_cells",
    "get_sweep",
    "grid_tag",
    "parse_grid",
    "read_results",
    "register_sweep",
    "run_cells",
    "run_sweep",
    "sweep_cells",
]

Scalar = int | float | bool | str


@dataclass(frozen=True)
class Sweep:
    """A named parameter sweep.

    ``cell`` is ``"module:function"``; the function is called as
    ``function(**params, seed=cell_seed)`` (``seed_arg=None``: no seed argument) and returns a
    mapping of scalar results. ``quick`` and ``full`` map axis names to their values; cells
    are the product of the axes in the order given (the last axis varies fastest).
    ``seed_keys`` lists the parameters the cell seed depends on (default: all), so cells that
    differ only in the method can share an instance (common random numbers).
    ``results`` fixes the CSV order of the result fields (default: sorted names).
    ``requires`` names modules the cell function imports lazily; the sweep is unavailable
    (and says so) when one of them is missing.

    ``cell`` may also be the function itself (a module-level function, e.g. in a check file
    loaded with ``quadnet verify --checks``); it is stored as its ``"module:function"`` path,
    so the sweep still travels to worker processes by name.

    Examples
    --------
    >>> from quadnet.harness.cells import quotient_gd_cell
    >>> Sweep("demo", "a demo", cell=quotient_gd_cell, quick={"d": (4,)}, full={"d": (8,)}).cell
    'quadnet.harness.cells:quotient_gd_cell'
    """

    name: str
    description: str
    cell: str
    quick: Mapping[str, tuple]
    full: Mapping[str, tuple]
    results: tuple[str, ...] | None = None
    seed_keys: tuple[str, ...] | None = None
    seed_arg: str | None = "seed"
    requires: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if callable(self.cell):
            module = getattr(self.cell, "__module__", None)
            qual = getattr(self.cell, "__qualname__", "")
            if not module or not qual or "<" in qual or "." in qual:
                raise ValueError(f"cell must be a module-level function (or 'module:function'),"
                                 f" got {self.cell!r}")
            object.__setattr__(self, "cell", f"{module}:{qual}")
        if not isinstance(self.cell, str) or ":" not in self.cell:
            raise TypeError(f"cell must be a function or 'module:function', got {self.cell!r}")
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.description, str):
            raise TypeError(f"description must be a string, got {type(self.description).__name__}")
        module, _, attr = self.cell.partition(":")
        mod = sys.modules.get(module)
        if mod is None:
            try:
                mod = importlib.import_module(module)
            except ModuleNotFoundError as exc:
                if exc.name == module or module.startswith(f"{exc.name}."):
                    raise ValueError(f"cell {self.cell!r}: no module {module!r}") from None
                mod = None  # the module exists but needs an optional dependency (`requires`)
        if mod is not None and not callable(getattr(mod, attr, None)):
            raise ValueError(f"cell {self.cell!r}: module {module!r} has no function {attr!r}")
        accepted = _cell_parameters(getattr(mod, attr, None)) if mod is not None else None
        for which in ("quick", "full"):
            grid = getattr(self, which)
            if not isinstance(grid, Mapping):
                raise TypeError(f"{which} must be a mapping of axis names to values, got "
                                f"{type(grid).__name__}")
            for key, values in grid.items():
                check_axis(key, values, f"{which} grid")
            if accepted is not None:
                if self.seed_arg is not None and self.seed_arg in grid:
                    raise ValueError(
                        f"{which} grid of sweep {self.name!r}: axis {self.seed_arg!r} is the "
                        f"cell seed argument, which the sweep sets per cell; drop the axis")
                unknown = [k for k in grid if k not in accepted]
                if unknown:
                    raise ValueError(
                        f"{which} grid of sweep {self.name!r}: axis {unknown[0]!r} is not a "
                        f"parameter of the cell function {attr}; it takes "
                        f"{sorted(k for k in accepted if k != self.seed_arg)}")
            if self.seed_keys is not None:
                missing = [k for k in self.seed_keys if k not in grid]
                if missing:
                    raise ValueError(f"seed_keys {missing} are not axes of the {which} grid "
                                     f"{list(grid)}")

    def axes(self, quick: bool) -> dict[str, tuple]:
        return {k: tuple(v) for k, v in (self.quick if quick else self.full).items()}

    def cell_function(self) -> Callable[..., Mapping[str, Any]]:
        module, _, attr = self.cell.partition(":")
        try:
            for dep in self.requires:
                importlib.import_module(dep)
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise SweepCellError(f"sweep {self.name!r} needs {self.cell}, which is not "
                                 f"available in this installation ({exc})") from None


def _cell_parameters(fn) -> set[str] | None:
    """The keyword names ``fn`` accepts, or ``None`` when it takes ``**kwargs`` (or has no
    inspectable signature): then every axis is accepted."""
    import inspect
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


#: The registered sweeps, name -> :class:`Sweep`: the dict owned by
#: ``quadnet.harness._registry.registry`` (``registry.sweeps``), which alone changes it.
SWEEPS: dict[str, Sweep] = registry.sweeps


def register_sweep(sweep: Sweep) -> Sweep:
    """Add ``sweep`` to :data:`SWEEPS` (names are unique)."""
    if not isinstance(sweep, Sweep):
        raise TypeError(f"register_sweep: sweep must be a quadnet.harness.sweeps.Sweep, got "
                        f"{type(sweep).__name__}")
    registry.add_sweep(sweep)
    return sweep


def available_sweeps() -> list[str]:
    """Names of the registered sweeps whose cell function can be imported, sorted."""
    out = []
    for name in registry.list_sweeps():
        try:
            registry.get_sweep(name).cell_function()
        except SweepCellError:
            continue
        out.append(name)
    return out


def get_sweep(name: str) -> Sweep:
    """The registered sweep ``name``; ``ValueError`` listing the available ones otherwise."""
    try:
        return _lookup_sweep(name, "name")
    except (TypeError, ValueError) as exc:
        raise name_callable(exc, "get_sweep") from None


def _lookup_sweep(name: str, arg: str) -> Sweep:
    """The registered sweep ``name`` (the argument ``arg``; refusals not yet prefixed with the
    public callable)."""
    if not isinstance(name, str):
        raise TypeError(f"{arg} must be a sweep name (str), got {type(name).__name__}")
    sweep = registry.get_sweep(name)
    if sweep is None:
        raise ValueError(f"{arg}: unknown sweep {name!r}; available: "
                         f"{', '.join(available_sweeps())}")
    sweep.cell_function()  # a clear error now rather than in every worker
    return sweep


# ---------------------------------------------------------------------- cells and seeds
def _crc(obj: Any) -> int:
    return zlib.crc32(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode())


def cell_seed(seed: int, sweep: str, params: Mapping[str, Any]) -> int:
    """The seed of one cell: ``SeedSequence([seed, crc32(sweep), crc32(k=v) ...])`` reduced to
    one 32-bit word. It depends on nothing else (not the worker, not the completion order)."""
    import numpy as np

    words = [int(seed), _crc(sweep), *(_crc([k, params[k]]) for k in sorted(params))]
    return int(np.random.SeedSequence(words).generate_state(1, dtype=np.uint32)[0])


def check_axis(key, values, where: str = "grid") -> tuple:
    """The values of one sweep axis as a tuple, checked: a non-empty sequence of finite scalars
    (int, float, bool or str; no NaN or inf), no repeats.

    Examples
    --------
    >>> check_axis("d", [4, 8])
    (4, 8)
    >>> check_axis("d", (float("nan"),))
    Traceback (most recent call last):
        ...
    ValueError: grid axis 'd' has a non-finite value nan
    """
    import math

    if not isinstance(key, str) or not key:
        raise TypeError(f"{where} axis names must be non-empty strings, got {key!r}")
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{where} axis {key!r} must be a sequence of values, got "
                        f"{type(values).__name__}")
    vals = tuple(values)
    if not vals:
        raise ValueError(f"{where} axis {key!r} is empty")
    for v in vals:
        if not isinstance(v, (bool, int, float, str)) and not hasattr(v, "item"):
            raise TypeError(f"{where} axis {key!r} must hold int, float, bool or str values, got "
                            f"{type(v).__name__}")
        if isinstance(v, float) or (hasattr(v, "dtype") and getattr(v, "dtype").kind == "f"):
            if not math.isfinite(float(v)):
                raise ValueError(f"{where} axis {key!r} has a non-finite value {float(v)}")
    if len(set(vals)) != len(vals):
        raise ValueError(f"{where} axis {key!r} repeats a value: {vals}")
    return vals


def _axes(sweep: Sweep, quick: bool, grid: Mapping[str, tuple] | None) -> dict[str, tuple]:
    axes = sweep.axes(quick)
    if grid:
        unknown = [k for k in grid if k not in axes]
        if unknown:
            raise ValueError(f"sweep {sweep.name!r} has no axis {', '.join(map(repr, unknown))}; "
                             f"its axes are {', '.join(axes)}")
        for k, v in grid.items():
            axes[k] = check_axis(k, v, "grid")
    return axes


def _typed(value: str, like: tuple, key: str):
    """``value`` (text from ``--set``) converted to the type of the axis values ``like``."""
    kinds = {type(v) for v in like}
    try:
        if kinds <= {bool}:
            if value.lower() in ("true", "1", "yes"):
                return True
            if value.lower() in ("false", "0", "no"):
                return False
            raise ValueError(value)
        if kinds <= {int}:
            return int(value)
        if kinds <= {int, float}:
            return float(value)
    except ValueError:
        kind = " or ".join(sorted(k.__name__ for k in kinds))
        raise ValueError(f"--set {key}: {value!r} is not a {kind} (the type of the axis "
                         f"{key!r}, whose default values are {list(like)})") from None
    return value


def parse_grid(sweep: Sweep | str, grid: Mapping[str, list], *, quick: bool = False
               ) -> dict[str, tuple]:
    """Axis values given as text (``quadnet sweep NAME --set d=20,40``) converted to the types
    of the sweep's own axis values; unknown axes raise ``ValueError``.

    >>> parse_grid("quotient-gd", {"d": ["20", "40"], "eta_scale": ["0.1"]})
    {'d': (20, 40), 'eta_scale': (0.1,)}
    """
    sweep = get_sweep(sweep) if isinstance(sweep, str) else sweep
    axes = sweep.axes(quick)
    _axes(sweep, quick, {k: (0,) for k in grid})  # unknown axes -> ValueError
    return {k: tuple(_typed(str(v), axes[k], k) for v in vals) for k, vals in grid.items()}


def grid_tag(grid: Mapping[str, tuple] | None) -> str:
    """Eight hex digits naming a custom grid (used in the default store name).

    >>> len(grid_tag({"d": (20, 40)})), grid_tag({"d": (20, 40)}) == grid_tag({"d": [20, 40]})
    (8, True)
    """
    return f"{_crc({k: list(v) for k, v in sorted((grid or {}).items())}):08x}"


@validate_params({"sweep": Instance((str, Sweep), "a sweep name or a Sweep"),
                  "quick": Boolean(), "seed": Integer(0), "grid": Grid()},
                 finite_result=False)
def sweep_cells(sweep: Sweep | str, *, quick: bool = False, seed: int = 0,
                grid: Mapping[str, tuple] | None = None) -> list[dict]:
    """The cells of ``sweep`` in CSV order: ``[{"params": {...}, "seed": int}, ...]``.

    ``grid`` replaces some axes of the quick or full grid (e.g. ``{"d": (20, 40)}``); an
    unknown axis name or a bad axis value is a ``ValueError`` naming it.
    """
    sweep = _lookup_sweep(sweep, "sweep") if isinstance(sweep, str) else sweep
    axes = _axes(sweep, quick, grid)
    keys = sweep.seed_keys if sweep.seed_keys is not None else tuple(axes)
    unknown = [k for k in keys if k not in axes]
    if unknown:
        raise ValueError(f"sweep {sweep.name!r}: seed_keys {unknown} are not axes {list(axes)}")
    cells = []
    for values in itertools.product(*axes.values()):
        params = dict(zip(axes, values))
        s = cell_seed(seed, sweep.name, {k: params[k] for k in keys})
        cells.append({"params": params, "seed": s})
    return cells


def _to_scalar(key: str, v: Any) -> Scalar:
    import numpy as np

    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    if isinstance(v, str):
        return v
    raise TypeError(f"cell result {key!r} must be a scalar (int, float, bool or str), "
                    f"got {type(v).__name__}")


def _execute_cell(sweep: Sweep, params: dict[str, Any], seed: int) -> dict[str, Scalar]:
    """Run one cell (in a worker process); returns its validated scalar results. The sweep
    travels with the task, so sweeps registered outside quadnet run on workers too."""
    fn = sweep.cell_function()
    kwargs = dict(params)
    if sweep.seed_arg is not None:
        kwargs[sweep.seed_arg] = seed
    out = fn(**kwargs)
    if not isinstance(out, Mapping):
        raise TypeError(f"cell function {sweep.cell} must return a mapping, "
                        f"got {type(out).__name__}")
    own = dict(params)
    if sweep.seed_arg is not None:
        own[sweep.seed_arg] = seed
    own.setdefault("seed", seed)
    result = {}
    for k, v in out.items():
        k = str(k)
        v = _to_scalar(k, v)
        if k in own:  # a grid key (or the seed) repeated by the cell: drop it, if it agrees
            if _to_scalar(k, own[k]) != v:
                raise ValueError(f"cell function {sweep.cell} returned {k}={v!r}, but the "
                                 f"cell's own {k} is {own[k]!r}; rename the result key")
            continue
        result[k] = v
    return result


# ---------------------------------------------------------------------- backends
_ONE_THREAD = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")}


@contextlib.contextmanager
def _single_threaded_children() -> Iterator[None]:
    """Processes spawned inside this block start with one BLAS thread each (so the bits of
    a cell never depend on the thread count); the caller's environment is restored after."""
    saved = {k: os.environ.get(k) for k in _ONE_THREAD}
    os.environ.update(_ONE_THREAD)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


Chunk = list[tuple[int, dict[str, Any], int]]  # (cell index, params, cell seed) per cell


def _execute_chunk(sweep: Sweep, chunk: Chunk) -> list[tuple[int, Any]]:
    """Run the cells of one task in order; a failing cell gives its exception (the others in
    the chunk still run), so one task returns ``[(index, result dict or exception), ...]``."""
    out: list[tuple[int, Any]] = []
    for i, params, seed in chunk:
        try:
            out.append((i, _execute_cell(sweep, params, seed)))
        except Exception as exc:  # noqa: BLE001 - reported by the driver with the cell's name
            out.append((i, exc))
    return out


# A backend is a generator of (cell indices of a task, finished future). The driver sends
# ``True`` into it after a cell failed: the backend then cancels the tasks not yet started but
# still delivers those that finish, so that no finished cell is lost before the error is raised.
Backend = Generator[tuple[list[int], Any], bool | None, None]


class _Done:
    """A finished in-process task, with the interface of a future."""

    def __init__(self, value):
        self._value = value

    def result(self):
        return self._value


def _run_inline(sweep: Sweep, chunks: list[Chunk]) -> Backend:
    """``workers=0``: the cells run one after the other in the calling process."""
    for chunk in chunks:
        if (yield [c[0] for c in chunk], _Done(_execute_chunk(sweep, chunk))):
            yield  # the value of send(); then stop
            return


def _exit_with_parent(parent: int, poll: float = 0.5) -> None:
    """Worker initializer: a daemon thread ends the worker once its parent is gone (a SIGKILL
    of ``quadnet sweep`` must not leave orphaned workers computing cells nobody will save)."""
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="quadnet-exit-with-parent").start()


def _worker_init(parent: int) -> None:
    """Worker initializer: one BLAS thread (a cell's bits never depend on the thread count)
    and exit when the parent is gone."""
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        pass
    _exit_with_parent(parent)


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and of its finished child processes, such
    as the workers of :func:`run_cells` (``time.process_time`` alone would miss those).

    Examples
    --------
    >>> t = cpu_seconds()
    >>> _ = sum(i * i for i in range(10**5))
    >>> cpu_seconds() >= t
    True
    """
    t = time.process_time()
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return t
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return t + ru.ru_utime + ru.ru_stime


def run_cells(fn: Callable[[Any], Any], cells: Iterable[Any], *, workers: int = 1,
              progress: Callable[..., Iterable] | None = None, desc: str = "",
              chunksize: int = 8) -> list[Any]:
    """``[fn(cell) for cell in cells]``, each call with one BLAS thread: the runner of every
    cell a check computes (``quadnet verify``; :class:`quadnet.harness.checks._sweep_cells.
    SweepCells` computes the missing cells of a sweep through it).

    With ``workers=1`` the cells run here, in order, inside
    :func:`quadnet._threads.single_threaded`. With ``workers > 1`` they run on that many
    local worker processes (``concurrent.futures.ProcessPoolExecutor``, the start method of
    :func:`default_start_method`), each limited to one BLAS thread (two workers with two
    BLAS threads each oversubscribe two cores, and spinning OpenBLAS threads then cost many
    times the arithmetic) and ending when this process dies (a killed ``quadnet verify``
    leaves no worker computing). The results come back in the order of ``cells`` whatever
    the scheduling, so a pure ``fn`` gives the same list, bit for bit, for every
    ``workers``. Inside a daemon process (a pool worker, which cannot have children) the
    cells run here.

    Parameters
    ----------
    fn : callable
        ``fn(cell) -> result``; a module-level function when ``workers > 1`` (it travels to
        the workers by name).
    cells : iterable
        The cells (picklable when ``workers > 1``).
    workers : int, optional
        Worker processes (``1``: this process).
    progress : callable, optional
        ``progress(iterable, desc, total=n)`` wraps the results as they arrive (e.g.
        :meth:`quadnet.harness.CheckContext.progress`).
    desc : str, optional
        The name of the loop, for ``progress``.
    chunksize : int, optional
        Cells sent to a worker at a time (``workers > 1``).

    Returns
    -------
    list
        ``fn(cell)`` for every cell, in order.

    Raises
    ------
    ValueError
        For ``workers`` or ``chunksize`` below 1.

    Examples
    --------
    >>> import numpy as np
    >>> def cell(t):  # a pure cell: its result depends on t only
    ...     return float(np.linalg.norm(np.random.default_rng([0, t]).standard_normal((4, 4))))
    >>> out = run_cells(cell, range(3))
    >>> out == [cell(t) for t in range(3)]  # in the order of the cells, the same bits
    True
    """
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    from quadnet._threads import single_threaded

    # checked here, not by validate_params: the cells run inside this call, and a validated
    # callable called inside another one skips its own checks and coercions
    if not callable(fn):
        raise TypeError(f"run_cells: fn must be a callable fn(cell), got {type(fn).__name__}")
    for name, value in (("workers", workers), ("chunksize", chunksize)):
        try:
            as_int(value, name, minimum=1)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"run_cells: {exc}") from None
    cells = list(cells)
    show = progress if progress is not None else (lambda it, desc="", total=None: it)
    if workers > 1 and not mp.current_process().daemon and len(cells) > 1:
        with _single_threaded_children(), ProcessPoolExecutor(
                workers, mp_context=mp.get_context(default_start_method()),
                initializer=_worker_init, initargs=(os.getpid(),)) as pool:
            return list(show(pool.map(fn, cells, chunksize=chunksize), desc,
                             total=len(cells)))
    with single_threaded():
        return [fn(cell) for cell in show(cells, desc, total=len(cells))]


def default_start_method() -> str:
    """``"fork"`` where the platform has it (no main-module guard needed, no named
    semaphores to leak when the driver is killed), else ``"spawn"``.

    >>> default_start_method() in ("fork", "spawn")
    True
    """
    import multiprocessing as mp

    return "fork" if "fork" in mp.get_all_start_methods() else "spawn"


_GUARD_HELP = ('the worker processes could not start. With the "spawn" start method every '
               "worker re-imports your script, so the call to run_sweep must sit under\n"
               '    if __name__ == "__main__":\n'
               "        run_sweep(...)\n"
               'Add that guard, or use start_method="fork" (the default where available), '
               "or workers=0 to run in this process.")


def _unguarded_spawn_child() -> bool:
    """True inside a spawned worker that is re-importing the user's script (the script
    called run_sweep at module level, without the main-module guard)."""
    import multiprocessing as mp

    proc = mp.current_process()
    return bool(getattr(proc, "_inheriting", False)) or (
        mp.parent_process() is not None and sys.modules.get("__main__") is not None
        and getattr(sys.modules["__main__"], "__name__", "") == "__mp_main__")


def _run_local(sweep: Sweep, chunks: list[Chunk], workers: int,
               start_method: str | None = None) -> Backend:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    method = start_method or default_start_method()
    with _single_threaded_children(), ProcessPoolExecutor(
            max_workers=workers, mp_context=mp.get_context(method),
            initializer=_worker_init, initargs=(os.getpid(),)) as pool:
        futures = {pool.submit(_execute_chunk, sweep, chunk): [c[0] for c in chunk]
                   for chunk in chunks}
        drained = False
        try:
            for fut in as_completed(futures):
                if fut.cancelled():
                    continue
                if (yield futures[fut], fut):
                    for f in futures:
                        f.cancel()
                    yield  # the value of send()
            drained = True  # then leaving the with-block joins the idle workers
        finally:
            if not drained:  # interrupted: do not wait for the running tasks
                pool.shutdown(wait=False, cancel_futures=True)


def _run_dask(sweep: Sweep, chunks: list[Chunk], *, n_local: int | None,
              address: str | None) -> Backend:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:  # pragma: no cover - checked by run_sweep before the store exists
        raise ImportError(_DASK_HELP) from None
    import logging

    with contextlib.ExitStack() as stack:
        if address is not None:
            try:
                client = stack.enter_context(Client(address, timeout="10s"))
            except OSError as exc:
                raise ValueError(f"scheduler: cannot connect to {address!r} ({exc})") from None
        else:
            import dask

            # Quieter housekeeping for CPU-bound cells on few cores: no statistical profiler
            # (samples every 10 ms), slower memory/system monitors and event-loop ticks, no
            # work stealing (tasks are uniform and queued on the scheduler anyway). Measured
            # 15-30% more throughput on 2 cores (benchmarks/bench_sweep.py).
            stack.enter_context(dask.config.set({
                "distributed.worker.profile.enabled": False,
                "distributed.worker.memory.monitor-interval": "2s",
                "distributed.admin.system-monitor.interval": "2s",
                "distributed.admin.tick.interval": "500ms",
                "distributed.scheduler.work-stealing": False,
            }))
            cluster = stack.enter_context(LocalCluster(
                n_workers=n_local, threads_per_worker=1, processes=True,
                dashboard_address=None, silence_logs=logging.CRITICAL))
            client = stack.enter_context(Client(cluster))
        futures = [client.submit(_execute_chunk, sweep, chunk, pure=False,
                                 key=f"quadnet-{sweep.name}-{chunk[0][0]:06d}-{len(chunk)}")
                   for chunk in chunks]
        where = {fut.key: [c[0] for c in chunk] for fut, chunk in zip(futures, chunks)}
        try:
            for fut in as_completed(futures):
                if fut.cancelled():
                    continue
                if (yield where[fut.key], fut):
                    client.cancel([f for f in futures if not f.done()])
                    yield
        finally:
            client.cancel(futures)


def _broken_unguarded(exc: BaseException, workers, dask_local, scheduler,
                      start_method) -> bool:
    """A broken pool of spawned workers started from a script file: almost always the
    missing main-module guard."""
    from concurrent.futures.process import BrokenProcessPool

    if not isinstance(exc, BrokenProcessPool) or dask_local or scheduler or not workers:
        return False
    main = sys.modules.get("__main__")
    return (start_method or default_start_method()) != "fork" and \
        getattr(main, "__file__", None) is not None


def _cell_error(name: str, i: int, cell: dict, exc: BaseException) -> SweepCellError:
    if isinstance(exc, SweepCellError):
        return exc
    err = SweepCellError(f"sweep {name!r}: cell {i} {cell['params']} (seed {cell['seed']}) "
                         f"failed: {type(exc).__name__}: {exc}")
    err.__cause__ = exc
    return err


def _chunks(todo: list[tuple[int, dict]], chunk: int) -> list[Chunk]:
    cells = [(i, c["params"], c["seed"]) for i, c in todo]
    return [cells[k:k + chunk] for k in range(0, len(cells), chunk)]


def auto_chunk(n_todo: int, n_workers: int) -> int:
    """Cells per task: about 8 tasks per worker, at most 16 cells per task (so a killed run
    loses at most 16 cells' worth of unsaved work per worker and progress stays smooth)."""
    return max(1, min(16, n_todo // (8 * max(1, n_workers))))


# ---------------------------------------------------------------------- the driver
@dataclass(frozen=True)
class SweepReport:
    """What :func:`run_sweep` did: the store, how many cells there are, how many were
    already finished (skipped on resume) and how many ran now (a frozen record)."""

    store: Path
    n_cells: int
    skipped: int
    ran: int
    results: Path
    backend: str = ""


def _manifest(sweep: Sweep, quick: bool, seed: int, cells: list[dict],
              grid: Mapping[str, tuple] | None = None) -> dict[str, Any]:
    from quadnet import __version__

    fingerprint = hashlib.sha256(json.dumps(cells, sort_keys=True).encode()).hexdigest()
    return {"sweep": sweep.name, "cell_function": sweep.cell, "quick": bool(quick),
            "seed": int(seed),
            "axes": {k: list(v) for k, v in _axes(sweep, quick, grid).items()},
            "n_cells": len(cells), "cells_sha256": fingerprint,
            "quadnet_version": __version__}


_DASK_HELP = "Dask backends need dask.distributed: python -m pip install 'quadnet[dask]'"


def _require_dask() -> None:
    """Raise ImportError (with the install command) unless dask.distributed imports."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ImportError(_DASK_HELP) from None


def _probe_scheduler(address: str) -> None:
    """A ``tcp://host:port`` scheduler that accepts no connection is refused (ValueError)
    before anything is created; other schemes are left to the Dask client."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    if parts.scheme != "tcp":
        return
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host or not port:
        raise ValueError(f"scheduler must be an address such as 'tcp://host:8786', got "
                         f"{address!r}")
    try:
        socket.create_connection((host, port), timeout=10).close()
    except OSError as exc:
        raise ValueError(f"scheduler: cannot connect to {address!r} "
                         f"({exc.strerror or exc}); nothing was created") from None


def check_store_path(store) -> None:
    """Refuse (:class:`SweepStoreError`) a store that could not be created or written,
    without creating anything: the path, or its nearest existing parent, must be a
    writable directory."""
    if not isinstance(store, (str, os.PathLike)):
        raise TypeError(f"store must be a path (str or os.PathLike), got {type(store).__name__}")
    path = Path(store)
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        if probe == path:
            raise SweepStoreError(f"store {str(path)!r} exists and is not a directory")
        raise SweepStoreError(f"store {str(path)!r} is not writable (it cannot be created: "
                              f"{str(probe)!r} is not a directory); choose a directory you "
                              "can write to with --store")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise SweepStoreError(f"store {str(path)!r} is not writable ({str(probe)!r}: "
                              "permission denied); choose a directory you can write to with "
                              "--store")


def _backend(sweep: Sweep, chunks: list[Chunk], workers: int, dask_local: int | None,
             scheduler: str | None, start_method: str | None
             ) -> tuple[str, Callable[[], Backend]]:
    """The backend's name (for :class:`SweepReport`) and a function starting it."""
    if scheduler is not None:
        return f"dask scheduler {scheduler}", \
            (lambda: _run_dask(sweep, chunks, n_local=None, address=scheduler))
    if dask_local is not None:
        return f"dask LocalCluster({dask_local})", \
            (lambda: _run_dask(sweep, chunks, n_local=dask_local, address=None))
    if workers == 0:
        return "this process", (lambda: _run_inline(sweep, chunks))
    method = start_method or default_start_method()
    return f"{workers} local process(es) ({method})", \
        (lambda: _run_local(sweep, chunks, workers, method))


def _drive(sweep: Sweep, runner: Callable[[], Backend], cells: list[dict], st: Store,
           done: dict, skipped: int, *, progress: bool, guard: tuple) -> None:
    """Run the backend, writing each finished cell into the store (and ``done``) as its task
    arrives; after a failed cell no new cell starts, the finished ones are kept, and the
    first failure is raised."""
    from tqdm import tqdm

    with tqdm(total=len(cells), initial=skipped, desc=f"sweep {sweep.name}", unit="cell",
              disable=not progress, leave=False) as bar:
        gen, error = runner(), None
        try:
            for indices, fut in gen:
                try:
                    outs = fut.result()
                except Exception as exc:  # noqa: BLE001 - the task itself died
                    if _broken_unguarded(exc, *guard):
                        raise RuntimeError(f"sweep {sweep.name!r}: {_GUARD_HELP}") from None
                    outs = [(i, exc) for i in indices]
                for i, result in outs:
                    if isinstance(result, BaseException):
                        if error is None:  # stop starting cells; keep those that finish
                            error = _cell_error(sweep.name, i, cells[i], result)
                            with contextlib.suppress(StopIteration):
                                gen.send(True)
                        continue
                    rec = {"index": i, "params": cells[i]["params"],
                           "seed": cells[i]["seed"], "result": result}
                    st.write_cell(i, rec)
                    done[i] = rec
                    bar.update(1)
        finally:
            gen.close()
        if error is not None:
            raise error


def run_sweep(name: str | Sweep, store, *, quick: bool = False, seed: int = 0, workers: int = 1,
              dask_local: int | None = None, scheduler: str | None = None,
              chunk: int | None = None, progress: bool = True,
              grid: Mapping[str, tuple] | None = None,
              start_method: str | None = None) -> SweepReport:
    """Run (or resume) the sweep ``name`` (a registered name or a :class:`Sweep`) into the
    directory ``store``; return a report.

    Every argument, the backend's dependencies (dask.distributed for ``dask_local`` or
    ``scheduler``; a ``tcp://`` scheduler must accept a connection) and the store path are
    checked before anything is created, so a refused run leaves no store behind. Cells
    already in the store are skipped; the others run on ``workers`` local processes
    (``workers=0``: serially in this process, e.g. for debugging), on a local Dask cluster
    of ``dask_local`` workers, or on the Dask ``scheduler`` at that
    address (give at most one of ``dask_local``/``scheduler``). ``chunk`` cells go into one
    task (default ``auto_chunk``; every cell is still saved on its own, and the results do
    not depend on the chunking). When every cell is done,
    ``store/results.csv`` is (re)written. Raises ``ValueError`` for an unknown sweep,
    :class:`SweepStoreError` (a ``ValueError``) for an unwritable store or one made by a
    different sweep/parameters, and :class:`SweepCellError` when a cell fails (the cells
    finished before it stay in the store).

    ``grid`` replaces axes of the quick/full grid (``{"d": (20, 40), "r": (1, 2)}``; the
    store's manifest records it, so a custom grid needs its own store). ``start_method`` of
    the local processes: default ``default_start_method`` (``"fork"`` on Linux and
    macOS' POSIX builds that offer it). With ``"spawn"`` the calling script must guard the
    call with ``if __name__ == "__main__":``; a missing guard raises a ``RuntimeError`` that
    says so (the workers exit quietly instead of printing tracebacks). ``progress`` shows a
    tqdm bar of finished cells.
    """
    if _unguarded_spawn_child():
        print("quadnet: run_sweep was called while a spawned worker re-imported the main "
              "script (no `if __name__ == \"__main__\":` guard); this worker exits.",
              file=sys.stderr, flush=True)
        raise SystemExit(1)
    try:
        sweep, workers, dask_local, chunk = _run_arguments(name, workers, dask_local, scheduler,
                                                           chunk, start_method)
    except (TypeError, ValueError) as exc:
        raise name_callable(exc, "run_sweep") from None
    cells = sweep_cells(sweep, quick=quick, seed=seed, grid=grid)
    # everything is checked before the store is touched: a refused run leaves nothing behind
    if dask_local is not None or scheduler is not None:
        _require_dask()
    try:
        if scheduler is not None:
            _probe_scheduler(scheduler)
        check_store_path(store)
    except (TypeError, ValueError) as exc:
        raise name_callable(exc, "run_sweep") from None
    st = Store.open(store, _manifest(sweep, quick, seed, cells, grid))
    done = st.finished(cells)
    todo = [(i, c) for i, c in enumerate(cells) if i not in done]
    skipped = len(done)
    n_par = dask_local or (workers if scheduler is None else 8)
    if chunk is None:
        chunk = auto_chunk(len(todo), n_par) if workers or dask_local or scheduler else 1
    chunks = _chunks(todo, chunk)
    backend, runner = _backend(sweep, chunks, workers, dask_local, scheduler, start_method)
    if todo:
        guard = (workers, dask_local, scheduler, start_method)
        _drive(sweep, runner, cells, st, done, skipped, progress=progress, guard=guard)
    records = [done[i] for i in range(len(cells))]
    if sweep.results is not None:
        names = list(sweep.results)
    else:
        names = sorted({k for r in records for k in r["result"]})
    params = list(cells[0]["params"]) if cells else []
    out = st.write_results(records, params, names)
    return SweepReport(Path(store), len(cells), skipped, len(todo), out, backend)


def _run_arguments(name, workers, dask_local, scheduler, chunk, start_method) -> tuple:
    """The checked arguments of :func:`run_sweep` before its cells: ``(sweep, workers,
    dask_local, chunk)``."""
    if start_method is not None and start_method not in ("fork", "spawn", "forkserver"):
        raise ValueError(f"start_method must be 'fork', 'spawn' or 'forkserver', got "
                         f"{start_method!r}")
    sweep = name if isinstance(name, Sweep) else _lookup_sweep(name, "name")
    sweep.cell_function()  # a missing module is reported here, not in every worker
    workers = as_int(workers, "workers", minimum=0)
    if dask_local is not None and scheduler is not None:
        raise ValueError("give at most one of dask_local and scheduler")
    if dask_local is not None:
        dask_local = as_int(dask_local, "dask_local", minimum=1)
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler):
        raise ValueError(f"scheduler must be an address such as 'tcp://host:8786', "
                         f"got {scheduler!r}")
    if chunk is not None:
        chunk = as_int(chunk, "chunk", minimum=1)
    return sweep, workers, dask_local, chunk


def read_results(store) -> list[dict[str, Scalar]]:
    """The rows of ``store/results.csv`` with numbers parsed (``true``/``false`` -> bool)."""
    if not isinstance(store, (str, os.PathLike)):
        raise TypeError(f"read_results: store must be a path (str or os.PathLike), got "
                        f"{type(store).__name__}")
    path = Path(store) / RESULTS
    if not path.exists():
        raise SweepStoreError(f"{path} does not exist: the sweep in {str(store)!r} is not "
                              "finished (run quadnet sweep again to resume it)")

    def parse(s: str) -> Scalar:
        if s in ("true", "false"):
            return s == "true"
        for conv in (int, float):
            try:
                return conv(s)
            except ValueError:
                pass
        return s

    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        header = reader.fieldnames or []
        dup = sorted({k for k in header if header.count(k) > 1})
        if dup:
            raise SweepStoreError(f"{path} repeats the column(s) {', '.join(dup)}; it was "
                                  "written by an older quadnet - rerun the sweep into a new "
                                  "store")
        return [{k: parse(v) for k, v in row.items()} for row in reader]


def finished_cells(name: str, roots, seed: int) -> dict[tuple[str, int], dict[str, Scalar]]:
    """The finished cells of sweep ``name`` in every store found under ``roots``, complete or
    not: ``{(canonical params, cell seed): result}``.

    ``roots`` is a directory or a list of them; each is a store itself or holds stores
    (``sweeps/NAME``, ``sweeps/NAME-custom-HASH``, ...). Only stores whose manifest names the
    sweep ``name`` and the master ``seed`` are read; a cell's seed depends only on the master
    seed, the sweep and its parameters, so the same cell found in two stores is the same
    computation (the first one read is kept). Unreadable files are ignored: the cells are
    then computed again.

    >>> finished_cells("parity", ["no-such-directory"], 0)
    {}
    """
    if isinstance(roots, (str, os.PathLike)):
        roots = [roots]
    seed = as_int(seed, "seed", minimum=0)
    stores: list[Path] = []
    for root in map(Path, roots):
        if (root / "manifest.json").is_file():
            stores.append(root)
        elif root.is_dir():
            stores += sorted(p for p in root.iterdir() if (p / "manifest.json").is_file())
    out: dict[tuple[str, int], dict[str, Scalar]] = {}
    for store in stores:
        try:
            man = json.loads((store / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if man.get("sweep") != name or man.get("seed") != seed:
            continue
        for path in sorted((store / "cells").glob("[0-9]*.json")):
            try:
                rec = json.loads(path.read_text(encoding="utf-8"))
                key = (json.dumps(rec["params"], sort_keys=True), int(rec["seed"]))
            except (OSError, ValueError, KeyError, TypeError):
                continue
            out.setdefault(key, rec["result"])
    return out


def cell_key(name: str, params: Mapping[str, Any], seed: int) -> tuple[str, int]:
    """The key of a cell of the registered sweep ``name`` in :func:`finished_cells`: its
    canonical parameters and its cell seed (:func:`cell_seed` of the sweep's ``seed_keys``)."""
    sweep = get_sweep(name)
    keys = sweep.seed_keys if sweep.seed_keys is not None else tuple(params)
    s = cell_seed(seed, sweep.name, {k: params[k] for k in keys})
    return json.dumps(dict(params), sort_keys=True), s
