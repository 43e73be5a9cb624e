"""Shared machinery of the checks: rows, results, the run context and the registries.

A *check* reproduces one group of claims. It is a function ``run(ctx: CheckContext) ->
CheckResult`` registered with :func:`register` in a module of ``quadnet.harness.checks``;
the package imports every such module, so adding a check is adding one file.

Every measured number goes into a :class:`Row`: the claim, where the claim comes from
(``source``: a citation such as Cheng (2026) "Quotient Dynamics, Effective Curvature, and
Implicit Bias in Positive Quadratic Networks", or "quadnet target" for quadnet's own targets),
the reference value (``paper``), the measured value, the tolerance and a status:

* ``PASS`` / ``FAIL``: the measured value meets / misses its tolerance;
* ``REPORTED``: a measurement with no tolerance (an exploration, or a number quoted for
  comparison); it never makes a check pass or fail by itself;
* ``SKIPPED``: the row could not run (``reason`` says why, e.g. a missing optional
  dependency, with the command that installs it).

A check passes when it has at least one row that ran, no row failed and none was skipped.
Randomness comes only from ``ctx.rng(...)``, so the same ``--seed`` gives the same numbers
bit for bit. Figures are drawn by drawers registered with :func:`figure` from JSON-able data
(:meth:`CheckContext.draw`), so ``quadnet figures --from report.json`` redraws them from a
saved report without recomputing, byte for byte the same.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import math
import os
import sys
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "FIGURES",
    "KINDS",
    "REGISTRY",
    "STATUSES",
    "CheckContext",
    "CheckResult",
    "CheckSpec",
    "Row",
    "figure",
    "have_module",
    "register",
    "rel_diff",
]

#: The statuses of a row (see the module docstring).
STATUSES = ("PASS", "FAIL", "REPORTED", "SKIPPED")
#: What a row checks: a ``theorem`` (or proposition) of a cited paper, a ``target`` (a
#: number a paper reports, or a quadnet target), or an ``exploration`` (no claim).
KINDS = ("theorem", "target", "exploration", "")

#: Citations used by the built-in checks (one spelling everywhere).
CHENG = ('Cheng (2026) "Quotient Dynamics, Effective Curvature, and Implicit Bias in Positive '
         'Quadratic Networks"')
FACT_PAPER = ('Boix-Adsera et al. (2025) "The Features at Convergence Theorem" '
              "(arXiv:2507.05644)")
RFM_PAPER = "Radhakrishnan et al. (2024), Science 383"
QUADNET = "quadnet target"


@dataclass
class Row:
    """One measured line of a check's table.

    ``passed`` is decided by the check (``measured <= tolerance`` for an error,
    ``measured >= tolerance`` for a cosine, ...); ``relation`` says which, for the table.
    ``status`` is derived when not given: ``PASS``/``FAIL`` from ``passed`` when there is a
    tolerance; ``REPORTED`` (or ``FAIL`` if ``passed`` is false) when there is none.
    """

    claim: str
    measured: float
    tolerance: float | None
    passed: bool
    paper: str = ""
    relation: str = "<="
    status: str | None = None
    reason: str = ""
    source: str = ""
    kind: str = ""

    def __post_init__(self) -> None:
        if self.status is None:
            if not self.passed:
                self.status = "FAIL"
            else:
                self.status = "PASS" if self.tolerance is not None else "REPORTED"
        if self.status not in STATUSES:
            raise ValueError(f"Row status must be one of {STATUSES}, got {self.status!r}")
        if self.status in ("REPORTED", "SKIPPED"):
            self.passed = True  # neither makes the check fail; the check's status says more
        elif self.status == "FAIL":
            self.passed = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "paper": self.paper,
            "source": self.source,
            "kind": self.kind,
            "measured": None if self.status == "SKIPPED" else _json_number(self.measured),
            "tolerance": _json_number(self.tolerance),
            "relation": self.relation,
            "passed": bool(self.passed),
            "status": self.status,
            "reason": self.reason,
        }


def rel_diff(a, b) -> float:
    """``||a - b|| / ||b||`` (Frobenius / Euclidean), the relative difference the checks report."""
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(b))


def have_module(name: str) -> bool:
    """True when ``import name`` works (an installed optional dependency such as cvxpy).

    Parameters
    ----------
    name : str
        A module name.

    Returns
    -------
    bool

    Examples
    --------
    >>> have_module("numpy"), have_module("no_such_module_quadnet")
    (True, False)
    """
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def _json_number(x):
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else repr(x)


@dataclass
class CheckResult:
    """What a check returns: its rows, free-form metrics and the figures it drew.

    ``figure_data`` holds, per figure stem, the JSON-able data its drawer needs (so a saved
    report redraws the figure); ``figure_notes`` says why a figure was not written.
    """

    name: str
    claim: str
    rows: list[Row] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    figures: list[str] = field(default_factory=list)
    exploratory: bool = False
    figure_data: dict[str, Any] = field(default_factory=dict)
    figure_notes: dict[str, str] = field(default_factory=dict)

    @property
    def skipped(self) -> list[Row]:
        return [r for r in self.rows if r.status == "SKIPPED"]

    @property
    def failed(self) -> list[Row]:
        return [r for r in self.rows if r.status == "FAIL"]

    @property
    def status(self) -> str:
        """``PASS``, ``FAIL`` (a row failed, or nothing ran) or ``PARTLY SKIPPED``."""
        ran = [r for r in self.rows if r.status != "SKIPPED"]
        if not ran or self.failed:
            return "FAIL"
        return "PARTLY SKIPPED" if self.skipped else "PASS"

    @property
    def passed(self) -> bool:
        """No row failed and every row ran (a partly skipped check has not passed)."""
        return self.status == "PASS"

    def add(self, claim: str, measured: float, tolerance: float | None, *, relation: str = "<=",
            paper: str = "", passed: bool | None = None, source: str = "", kind: str = "",
            status: str | None = None, reason: str = "") -> Row:
        """Append a row; ``passed`` defaults to comparing ``measured`` with ``tolerance``.

        A row without a tolerance is ``REPORTED`` (give ``passed=False`` to make a failed
        sanity condition a ``FAIL``).
        """
        measured = float(measured)
        if kind not in KINDS:
            raise ValueError(f"add: kind must be one of {KINDS}, got {kind!r}")
        if passed is None:
            if tolerance is None:
                passed = math.isfinite(measured) or status == "SKIPPED"
            elif not math.isfinite(measured):
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
        row = Row(claim, measured, tolerance, bool(passed), paper, relation, status, reason,
                  source, kind)
        self.rows.append(row)
        return row

    def report(self, claim: str, measured: float, *, paper: str = "", source: str = "",
               kind: str = "exploration", passed: bool = True) -> Row:
        """Append a ``REPORTED`` row (no tolerance; ``passed=False`` for a failed sanity
        condition makes it ``FAIL``).

        Examples
        --------
        >>> res = CheckResult("demo", "a claim")
        >>> res.report("errors after 35 iterations", 13, source="quadnet exploration").status
        'REPORTED'
        >>> res.status
        'PASS'
        """
        return self.add(claim, measured, None, relation="=", paper=paper, source=source,
                        kind=kind, passed=passed)

    def skip(self, claim: str, reason: str, *, tolerance: float | None = None,
             relation: str = "<=", paper: str = "", source: str = "", kind: str = "") -> Row:
        """Append a ``SKIPPED`` row: the claim could not be measured, for ``reason``.

        A check with a skipped row has status ``PARTLY SKIPPED`` (it has not passed).

        Examples
        --------
        >>> res = CheckResult("demo", "a claim")
        >>> _ = res.add("error", 1e-14, 1e-12, kind="theorem", source="Cheng (2026) §1")
        >>> res.skip("vs an SDP", "needs cvxpy; install: python -m pip install cvxpy").status
        'SKIPPED'
        >>> res.status, res.passed
        ('PARTLY SKIPPED', False)
        """
        return self.add(claim, math.nan, tolerance, relation=relation, paper=paper,
                        source=source, kind=kind, status="SKIPPED", reason=reason, passed=True)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "claim": self.claim,
            "passed": self.passed,
            "status": self.status,
            "exploratory": self.exploratory,
            "rows": [r.as_dict() for r in self.rows],
            "metrics": _jsonable(self.metrics),
            "figures": list(self.figures),
            "figure_data": self.figure_data,
            "figure_notes": dict(self.figure_notes),
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


def _plain(obj):
    """JSON-able copy of figure data: arrays to lists, non-finite floats to ``None``
    (``np.asarray(x, float)`` turns ``None`` back into ``nan``)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    return obj


#: Figure drawers: stem -> ``draw(data) -> matplotlib Figure`` (see :func:`figure`).
FIGURES: dict[str, Callable[[dict], Any]] = {}

#: Single-column paper width in inches: every built-in figure is drawn at this width.
COLUMN_WIDTH = 3.4
#: The Okabe & Ito (2008) colour-blind-safe palette, in the order the figures use it.
OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#E69F00", "#56B4E9", "#CC79A7", "#000000",
             "#F0E442")
#: Matplotlib settings of the built-in figures (7 pt text at single-column width).
STYLE = {
    "font.size": 7.0, "axes.titlesize": 7.0, "axes.labelsize": 7.0, "xtick.labelsize": 6.5,
    "ytick.labelsize": 6.5, "legend.fontsize": 6.0, "legend.frameon": False,
    "lines.linewidth": 1.0, "lines.markersize": 3.0, "axes.linewidth": 0.6,
    "xtick.major.width": 0.6, "ytick.major.width": 0.6, "figure.dpi": 150,
    "image.cmap": "cividis", "mathtext.fontset": "dejavusans",
}


def figure(stem: str):
    """Decorator: register ``draw(data: dict) -> Figure`` as the drawer of figure ``stem``.

    The data is the JSON form stored in the report, so a saved report redraws the figure
    (``quadnet figures --from report.json``) with the same bytes as ``quadnet verify``.
    The drawer runs under :data:`STYLE` with the :data:`OKABE_ITO` colour cycle.
    """

    def deco(fn):
        if stem in FIGURES and FIGURES[stem].__qualname__ != fn.__qualname__:
            raise ValueError(f"figure {stem!r} is registered twice")

        def styled(data):
            import matplotlib.pyplot as plt
            from cycler import cycler

            with plt.rc_context({**STYLE, "axes.prop_cycle": cycler(color=list(OKABE_ITO))}):
                return fn(data)

        styled.__qualname__ = fn.__qualname__
        styled.__wrapped__ = fn
        FIGURES[stem] = styled
        return fn

    return deco


def floor_note(ax, floor: float, *, what: str = "exact zeros") -> None:
    """Mark a log axis floor: a dotted line at ``floor`` labelled with what it stands for
    (values below it, e.g. exact zeros, are drawn on it)."""
    ax.axhline(floor, color="0.5", ls=":", lw=0.7)
    ax.annotate(f"{what} drawn at {floor:.0e}", (0.99, floor), xycoords=("axes fraction", "data"),
                xytext=(0, -1.5), textcoords="offset points", ha="right", va="top",
                fontsize=5.5, color="0.35")


@dataclass
class CheckContext:
    """Everything a check may depend on besides its own code.

    ``quick`` selects the small configuration (each check in about 20 s on two cores);
    otherwise the paper-scale one runs. ``figures_dir`` is where figures go (``None``: none
    are drawn, but their data is still stored in the result).
    """

    seed: int = 0
    quick: bool = False
    figures_dir: Path | None = None
    show_progress: bool = False
    figure_errors: list[str] = field(default_factory=list)

    def rng(self, *keys: int | str) -> np.random.Generator:
        """A generator determined by the run seed and ``keys`` (strings hashed stably)."""
        ints = [int(self.seed)]
        for k in keys:
            ints.append(zlib.crc32(k.encode()) if isinstance(k, str) else int(k))
        return np.random.default_rng(ints)

    def progress(self, iterable: Iterable, desc: str = "", total: int | None = None) -> Iterable:
        """``iterable`` wrapped in a tqdm bar (on stderr) when progress is switched on."""
        from tqdm.auto import tqdm

        return tqdm(iterable, desc=desc, total=total, disable=not self.show_progress,
                    leave=False, position=1, dynamic_ncols=True)

    def draw(self, result: CheckResult, stem: str, data: dict, *,
             skip_reason: str | None = None) -> list[str]:
        """Store the data of figure ``stem`` in ``result`` and draw it with its registered
        drawer into ``figures_dir``.

        ``skip_reason``: part of the figure's data could not be computed (e.g. a skipped
        row); the figure is then not written at all (never half drawn) and the reason is
        noted. A drawer or a write that fails is reported on stderr and noted in the result;
        the rows are kept.
        """
        if skip_reason:
            result.figure_notes[stem] = f"not written: {skip_reason}"
            return []
        plain = json.loads(json.dumps(_plain(data)))
        result.figure_data[stem] = plain
        if self.figures_dir is None:
            return []
        try:
            fig = FIGURES[stem](plain)
        except Exception as exc:  # noqa: BLE001 - a figure never discards the results
            msg = f"figure {stem!r} could not be drawn: {type(exc).__name__}: {exc}"
            self.figure_errors.append(msg)
            result.figure_notes[stem] = msg
            print(f"[quadnet] {msg}", file=sys.stderr, flush=True)
            return []
        paths = self.savefig(fig, stem)
        if not paths:
            result.figure_notes[stem] = self.figure_errors[-1] if self.figure_errors else \
                "not written"
        result.figures += paths
        return paths

    def savefig(self, fig, stem: str) -> list[str]:
        """Write ``fig`` as ``stem.png`` and ``stem.pdf`` deterministically; return the paths.

        A write that fails is reported (stderr and ``figure_errors``) and gives ``[]``.
        """
        import matplotlib.pyplot as plt

        if self.figures_dir is None:
            plt.close(fig)
            return []
        out = Path(self.figures_dir)
        paths = []
        try:
            out.mkdir(parents=True, exist_ok=True)
            for ext, meta in (("png", {"Software": None}),
                              ("pdf", {"CreationDate": None, "ModDate": None, "Producer": None,
                                       "Creator": None})):
                path = out / f"{stem}.{ext}"
                tmp = out / f".{stem}.{os.getpid()}.tmp.{ext}"
                fig.savefig(tmp, format=ext, metadata=meta, dpi=150, bbox_inches="tight")
                os.replace(tmp, path)
                paths.append(str(path))
        except Exception as exc:  # noqa: BLE001 - a figure never discards the results
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else \
                f"{type(exc).__name__}: {exc}"
            msg = f"figure {stem!r} not written to {str(out)!r}: {why}"
            for path in paths:  # never leave half of a figure's files behind
                with contextlib.suppress(OSError):
                    Path(path).unlink()
            self.figure_errors.append(msg)
            print(f"[quadnet] {msg}", file=sys.stderr, flush=True)
            paths = []
        finally:
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
