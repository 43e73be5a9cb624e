"""Shared machinery of the paper checks: results, the run context and the registry.

A *check* reproduces one claim of the paper (or of the FACT seed documents). It is a
function ``run(ctx: CheckContext) -> CheckResult`` registered with :func:`register`
in a module of :mod:`quadnet.checks`; the package imports every such module, so adding
a check is adding one file (see ``docs/ARCHITECTURE.md``).

Every measured number goes into a :class:`Row` (claim, the paper's figure, measured,
tolerance, pass); the check passes when all its rows pass. Randomness comes only from
``ctx.rng(...)``, so the same ``--seed`` gives the same numbers bit for bit.
"""

from __future__ import annotations

import math
import os
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["REGISTRY", "CheckContext", "CheckResult", "CheckSpec", "Row", "register"]


@dataclass
class Row:
    """One measured line of a check's table.

    ``passed`` is decided by the check (``measured <= tolerance`` for an error,
    ``measured >= tolerance`` for a cosine, ...); ``relation`` says which, for the table.
    """

    claim: str
    measured: float
    tolerance: float | None
    passed: bool
    paper: str = ""
    relation: str = "<="

    def as_dict(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "paper": self.paper,
            "measured": _json_number(self.measured),
            "tolerance": _json_number(self.tolerance),
            "relation": self.relation,
            "passed": bool(self.passed),
        }


def rel_diff(a, b) -> float:
    """``||a - b|| / ||b||`` (Frobenius / Euclidean), the relative difference the checks report."""
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(b))


def _json_number(x):
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else repr(x)


@dataclass
class CheckResult:
    """What a check returns: its rows, free-form metrics and the figures it drew."""

    name: str
    claim: str
    rows: list[Row] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    figures: list[str] = field(default_factory=list)
    exploratory: bool = False

    @property
    def passed(self) -> bool:
        return bool(self.rows) and all(r.passed for r in self.rows)

    def add(self, claim: str, measured: float, tolerance: float | None, *, relation: str = "<=",
            paper: str = "", passed: bool | None = None) -> Row:
        """Append a row; ``passed`` defaults to comparing ``measured`` with ``tolerance``."""
        measured = float(measured)
        if passed is None:
            if tolerance is None:
                raise ValueError("add: give `passed` when there is no tolerance")
            if not math.isfinite(measured):
                passed = False
            elif relation == "<=":
                passed = measured <= tolerance
            elif relation == ">=":
                passed = measured >= tolerance
            elif relation == "<":
                passed = measured < tolerance
            elif relation == ">":
                passed = measured > tolerance
            else:
                raise ValueError(f"add: unknown relation {relation!r}")
        row = Row(claim, measured, tolerance, bool(passed), paper, relation)
        self.rows.append(row)
        return row

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "claim": self.claim,
            "passed": self.passed,
            "exploratory": self.exploratory,
            "rows": [r.as_dict() for r in self.rows],
            "metrics": _jsonable(self.metrics),
            "figures": list(self.figures),
        }


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return _json_number(obj)
    return obj


@dataclass
class CheckContext:
    """Everything a check may depend on besides its own code.

    ``quick`` selects the small configuration (the whole ``quadnet verify --quick``
    fits in two minutes on two cores); otherwise the paper-scale one runs.
    """

    seed: int = 0
    quick: bool = False
    figures_dir: Path | None = None
    show_progress: bool = False

    def rng(self, *keys: int | str) -> np.random.Generator:
        """A generator determined by the run seed and ``keys`` (strings hashed stably)."""
        ints = [int(self.seed)]
        for k in keys:
            ints.append(zlib.crc32(k.encode()) if isinstance(k, str) else int(k))
        return np.random.default_rng(ints)

    def progress(self, iterable: Iterable, desc: str = "", total: int | None = None) -> Iterable:
        from tqdm.auto import tqdm

        return tqdm(iterable, desc=desc, total=total, disable=not self.show_progress, leave=False)

    def savefig(self, fig, stem: str) -> list[str]:
        """Write ``fig`` as ``stem.png`` and ``stem.pdf`` deterministically; return the paths."""
        import matplotlib.pyplot as plt

        if self.figures_dir is None:
            plt.close(fig)
            return []
        out = Path(self.figures_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for ext, meta in (("png", {"Software": None}),
                          ("pdf", {"CreationDate": None, "ModDate": None, "Producer": None,
                                   "Creator": None})):
            path = out / f"{stem}.{ext}"
            tmp = out / f".{stem}.{os.getpid()}.tmp.{ext}"
            fig.savefig(tmp, format=ext, metadata=meta, dpi=120, bbox_inches="tight")
            os.replace(tmp, path)
            paths.append(str(path))
        plt.close(fig)
        return paths


@dataclass
class CheckSpec:
    name: str
    claim: str
    run: Callable[[CheckContext], CheckResult]
    order: int = 100


REGISTRY: dict[str, CheckSpec] = {}


def register(name: str, claim: str, order: int = 100):
    """Decorator: register ``run(ctx) -> CheckResult`` as the check ``name``."""

    def deco(fn: Callable[[CheckContext], CheckResult]):
        if name in REGISTRY and REGISTRY[name].run is not fn:
            raise ValueError(f"check {name!r} is registered twice")
        REGISTRY[name] = CheckSpec(name, claim, fn, order)
        return fn

    return deco
