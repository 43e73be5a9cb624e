"""The on-disk store of a parameter sweep: a manifest, one file per finished cell, results.csv.

Layout of a store directory::

    manifest.json      what the store holds: sweep name, parameters, seed, quadnet version
    cells/000017.json  one finished cell (its parameters, seed and result), written atomically
    results.csv        one row per cell, written when every cell is done

Every file is written to a temporary name in the same directory, flushed, ``fsync``-ed and
moved into place with :func:`os.replace` (atomic on POSIX). A process killed at any moment
(SIGKILL included) therefore leaves only complete cell files plus, at worst, a stray
``.tmp-*`` file that the next run deletes; no finished cell is lost and none is corrupt.

``results.csv`` contains no timing and nothing that depends on the order cells finished
in, so the same sweep and seed give a byte-identical file whatever the backend, the
number of workers or the interruptions.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from typing import Any

from quadnet.exceptions import SweepStoreError

__all__ = ["Store"]

MANIFEST = "manifest.json"
RESULTS = "results.csv"
CELLS = "cells"
FORMAT = 1


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file, ``fsync`` and :func:`os.replace`."""
    tmp = path.parent / f".tmp-{path.name}-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True)


def format_value(v: Any) -> str:
    """The CSV text of one value: ``repr`` for floats (shortest round-trip form, so the file
    holds the exact float64 bits), lower-case ``true``/``false`` for booleans."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return repr(v)
    if v is None:
        return ""
    return str(v)


class Store:
    """A sweep store directory (see the module docstring).

    ``Store.open(path, manifest)`` creates the store or checks that an existing one was made
    by the same sweep with the same parameters, seed and quadnet version; otherwise it raises
    :class:`SweepStoreError` and touches nothing.
    """

    def __init__(self, path: Path, manifest: dict[str, Any]):
        self.path = path
        self.manifest = manifest
        self.cells_dir = path / CELLS

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, path, manifest: dict[str, Any]) -> Store:
        path = Path(path)
        if path.exists() and not path.is_dir():
            raise SweepStoreError(f"store {str(path)!r} exists and is not a directory")
        manifest = dict(manifest, format=FORMAT)
        mpath = path / MANIFEST
        if mpath.exists():
            try:
                old = json.loads(mpath.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise SweepStoreError(f"store {str(path)!r} has an unreadable manifest.json "
                                      f"({exc}); it was not made by quadnet sweep") from None
            diffs = [k for k in sorted(set(old) | set(manifest))
                     if _canonical(old.get(k)) != _canonical(manifest.get(k))]
            if len(diffs) > 1 and "cells_sha256" in diffs:  # implied by the readable ones
                diffs.remove("cells_sha256")
            if diffs:
                detail = "; ".join(f"{k}: store has {_short(old.get(k))}, this run "
                                   f"{_short(manifest.get(k))}" for k in diffs)
                raise SweepStoreError(
                    f"store {str(path)!r} was made by a different sweep or different "
                    f"parameters ({detail}); refusing to mix results - use a new --store")
        elif path.is_dir() and _has_foreign_files(path):
            raise SweepStoreError(f"store {str(path)!r} is a non-empty directory without a "
                                  "quadnet manifest.json; refusing to write into it")
        try:
            (path / CELLS).mkdir(parents=True, exist_ok=True)
            probe = path / CELLS / f".tmp-probe-{os.getpid()}"
            probe.write_text("")
            probe.unlink()
        except OSError as exc:
            raise SweepStoreError(
                f"store {str(path)!r} is not writable ({exc.strerror or exc}); "
                "choose a directory you can write to with --store") from None
        if not mpath.exists():
            atomic_write_text(mpath, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        store = cls(path, manifest)
        store._remove_stray_temporaries()
        return store

    def _remove_stray_temporaries(self) -> None:
        for d in (self.path, self.cells_dir):
            for p in d.glob(".tmp-*"):
                try:
                    p.unlink()
                except FileNotFoundError:  # another process resuming the same store
                    pass

    # ------------------------------------------------------------------ cells
    def cell_path(self, index: int) -> Path:
        return self.cells_dir / f"{index:06d}.json"

    def finished(self, expected: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
        """The finished cells among ``expected`` (index -> record). A cell file whose
        parameters do not match the expected cell raises :class:`SweepStoreError`."""
        done = {}
        for index, cell in enumerate(expected):
            p = self.cell_path(index)
            if not p.exists():
                continue
            try:
                rec = json.loads(p.read_text(encoding="utf-8"))
            except ValueError as exc:
                raise SweepStoreError(f"cell file {p} is corrupt ({exc}); it was not "
                                      "written by quadnet sweep") from None
            if _canonical(rec.get("params")) != _canonical(cell["params"]) \
                    or rec.get("seed") != cell["seed"]:
                raise SweepStoreError(f"cell file {p} holds parameters {rec.get('params')} "
                                      f"but cell {index} is {cell['params']}; refusing to mix")
            done[index] = rec
        return done

    def write_cell(self, index: int, record: dict[str, Any]) -> None:
        atomic_write_text(self.cell_path(index),
                          json.dumps(record, sort_keys=True, allow_nan=True) + "\n")

    # ------------------------------------------------------------------ results
    def write_results(self, records: list[dict[str, Any]], param_names: list[str],
                      result_names: list[str]) -> Path:
        """Write ``results.csv``: one row per cell in cell order, columns = parameters,
        ``seed``, then the result fields in the sweep's declared order."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow([*param_names, "seed", *result_names])
        for rec in records:
            w.writerow([*(format_value(rec["params"][k]) for k in param_names),
                        format_value(rec["seed"]),
                        *(format_value(rec["result"].get(k)) for k in result_names)])
        out = self.path / RESULTS
        atomic_write_text(out, buf.getvalue())
        return out


def _has_foreign_files(path: Path) -> bool:
    """True when ``path`` holds anything besides an empty ``cells/`` and stray temporaries
    (what a run killed before it wrote its manifest leaves behind)."""
    for p in path.iterdir():
        if p.name.startswith(".tmp-"):
            continue
        if p.name == CELLS and p.is_dir() and all(q.name.startswith(".tmp-")
                                                  for q in p.iterdir()):
            continue
        return True
    return False


def _short(v: Any, n: int = 80) -> str:
    s = _canonical(v)
    return s if len(s) <= n else s[: n - 3] + "..."
