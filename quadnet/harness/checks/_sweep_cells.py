"""Cells of a registered sweep inside a check: read from sweep stores, or computed here.

A check that aggregates a sweep (``grokking``, ``parity``) lists the cells it needs; those
already finished in a store under the sweeps directory (``$QUADNET_SWEEPS``, default
``sweeps/`` in the working directory, where ``quadnet sweep`` writes) are read, the others
are computed in this process with one BLAS thread, exactly as a sweep worker computes them
(same cell seed, same bits). So a grid spread over a cluster with ``quadnet sweep NAME
--set ...`` is picked up by the next ``quadnet verify NAME``.

``QUADNET_CHECK_COMPUTE=0`` (stores only): cells not found in a store are not computed;
the check lists them in a SKIPPED row (for a report assembled from cluster runs).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from quadnet.harness.sweeps import (
    _execute_cell, cell_key, cpu_seconds, finished_cells, get_sweep, run_cells)

__all__ = ["SweepCells", "compute_missing", "sweeps_dir"]


def compute_missing() -> bool:
    """False when ``QUADNET_CHECK_COMPUTE=0``: the checks then only read sweep stores."""
    return os.environ.get("QUADNET_CHECK_COMPUTE", "1").strip() not in ("0", "false", "no")


def sweeps_dir() -> str:
    """Where the checks look for sweep stores: ``$QUADNET_SWEEPS`` or ``sweeps``."""
    return os.environ.get("QUADNET_SWEEPS", "sweeps")


class SweepCells:
    """The cells of sweep ``name`` a check needs, by parameters (see the module docstring).

    ``read_stores=False`` (quick mode) computes every cell here. ``cpu_seconds`` /
    ``wall_seconds`` add up the cells computed here; ``from_store`` counts those read.
    """

    def __init__(self, name: str, seed: int, *, read_stores: bool = True):
        self.name = name
        self.seed = int(seed)
        self.sweep = get_sweep(name)
        self.stored = finished_cells(name, [sweeps_dir()], self.seed) if read_stores else {}
        self.results: dict[tuple[str, int], dict[str, Any]] = {}
        self.from_store = 0
        self.computed = 0
        self.compute = compute_missing() or not read_stores
        self.missing: list[dict[str, Any]] = []
        self.cpu_seconds = 0.0
        self.wall_seconds = 0.0

    def metrics(self) -> dict[str, Any]:
        """The report metrics of the cells: how many were read and computed, and the CPU and
        wall seconds the computed ones took."""
        return {"cells_from_store": self.from_store, "cells_computed": self.computed,
                "cell_cpu_seconds": self.cpu_seconds, "cell_wall_seconds": self.wall_seconds}

    def key(self, params: Mapping[str, Any]) -> tuple[str, int]:
        return cell_key(self.name, params, self.seed)

    def get(self, params: Mapping[str, Any]) -> dict[str, Any] | None:
        """The result of the cell ``params`` if it is known (stored or computed), else None."""
        k = self.key(params)
        if k in self.results:
            return self.results[k]
        if k in self.stored:
            self.results[k] = self.stored[k]
            self.from_store += 1
            return self.results[k]
        return None

    def run(self, params: Mapping[str, Any]) -> dict[str, Any] | None:
        """The result of the cell ``params``: from a store, or computed now (None: not in a
        store and not computed, ``QUADNET_CHECK_COMPUTE=0``; recorded in ``missing``)."""
        return self.run_all([params])[0]

    def run_all(self, cells: Iterable[Mapping[str, Any]], progress: Callable | None = None,
                desc: str = "", workers: int = 1) -> list[dict[str, Any] | None]:
        """The results of ``cells`` (as :meth:`run`, in order): the known ones read, the
        others computed by :func:`quadnet.harness.sweeps.run_cells` (in this process, or on
        ``workers`` local processes), one BLAS thread each, exactly as a sweep worker computes
        them: the same bits for every ``workers``."""
        cells = [dict(c) for c in cells]
        todo: dict[tuple[str, int], dict[str, Any]] = {}
        for c in cells:
            if self.get(c) is not None:
                continue
            if not self.compute:
                if c not in self.missing:
                    self.missing.append(c)
                continue
            todo.setdefault(self.key(c), c)
        if todo:
            t0, w0 = cpu_seconds(), time.perf_counter()
            outs = run_cells(_compute_cell, [(self.sweep, c, k[1]) for k, c in todo.items()],
                             progress=progress, desc=desc, workers=workers, chunksize=1)
            self.cpu_seconds += cpu_seconds() - t0
            self.wall_seconds += time.perf_counter() - w0
            self.computed += len(outs)
            self.results.update(zip(todo, outs))
        return [self.results.get(self.key(c)) for c in cells]


def _compute_cell(job: tuple) -> dict[str, Any]:
    sweep, params, seed = job
    return _execute_cell(sweep, params, seed)
