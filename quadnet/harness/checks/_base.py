"""Shared machinery of the checks: rows, results, the run context, register and figure.

A *check* reproduces one group of claims. It is a function ``run(ctx: CheckContext, res:
CheckResult)`` registered with :func:`register`, which makes ``res`` with the check's name
and claim (so they are written once); ``run`` fills it. (A function ``run(ctx) ->
CheckResult`` that builds its own result is accepted too.) The built-in checks live in the modules of
``quadnet.harness.checks`` (the package imports every such module); a check of your own lives
in any Python file or module and is loaded by ``quadnet verify --checks FILE_OR_MODULE`` or
by an installed package's ``quadnet.checks`` entry point (:mod:`quadnet.harness.discovery`).
The public names are re-exported, as the same objects, by :mod:`quadnet.harness`. The checks
and the drawers are kept by the one registry, ``quadnet.harness._registry.registry``
(:data:`REGISTRY` and :data:`FIGURES` are its dicts); progress goes through
``quadnet._progress``.

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
import functools
import importlib
import inspect
import io
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

from quadnet import _progress
from quadnet._validation import Boolean, Integer, validate_params
from quadnet.harness._constraints import Text
from quadnet.harness._registry import origin_label, registry
from quadnet.harness.report._format import QUADNET_SOURCE

__all__ = [
    "FIGURES",
    "FIGURE_FORMATS",
    "KINDS",
    "REGISTRY",
    "STATUSES",
    "STYLES",
    "CheckContext",
    "CheckError",
    "CheckResult",
    "CheckSpec",
    "Row",
    "figure",
    "have_module",
    "origin_label",
    "register",
    "rel_diff",
    "render_figure",
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
QUADNET = QUADNET_SOURCE
#: The keywords of a row that checks a quadnet target: ``res.add(..., **QUADNET_TARGET)``.
QUADNET_TARGET = {"kind": "target", "source": QUADNET}


@dataclass
class Row:
    """One measured line of a check's table (made by :meth:`CheckResult.add`).

    ``passed`` is decided by the check (``measured <= tolerance`` for an error,
    ``measured >= tolerance`` for a cosine, ...); ``relation`` says which, for the table.
    ``status`` is derived when not given: ``PASS``/``FAIL`` from ``passed`` when there is a
    tolerance; ``REPORTED`` (or ``FAIL`` if ``passed`` is false) when there is none.

    Parameters
    ----------
    claim : str
        What the row measures, e.g. ``"trace identity"``; rows are matched across reports
        by ``(check name, claim)`` (``quadnet compare``), so keep it stable.
    measured : float
        The measured value (``nan`` for a skipped row).
    tolerance : float or None
        The bound the value must meet (``None``: a measurement without a claim).
    passed : bool
        Whether ``measured`` meets ``tolerance``.
    paper : str, optional
        The reference value as the source states it (e.g. ``"0.994"``, ``"exact"``).
    relation : str, optional
        ``"<="`` (default), ``">="``, ``"<"``, ``">"`` or ``"="`` (reported rows).
    status : {"PASS", "FAIL", "REPORTED", "SKIPPED"}, optional
        Derived from ``passed`` and ``tolerance`` when not given.
    reason : str, optional
        Why a row was skipped (with the command that installs what is missing).
    source : str, optional
        Where the claim comes from: a citation by name, or ``"quadnet target"``.
    kind : {"theorem", "target", "exploration", ""}, optional
        A theorem (or proposition) of the cited source, a number it reports, or no claim.

    Examples
    --------
    >>> Row("trace identity", 3e-16, 1e-12, True, kind="theorem").status
    'PASS'
    >>> Row("iterations", 35, None, True).status
    'REPORTED'
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
    """What a check produces: its rows, free-form metrics and the figures it drew.

    :func:`register` makes it, with the check's name and claim, and passes it to the check's
    ``run(ctx, res)``. ``figure_data`` holds, per figure stem, the JSON-able data its drawer
    needs (so a saved report redraws the figure); ``figure_notes`` says why a figure was not
    written. It is a builder, mutable on purpose: :meth:`add`, :meth:`report`, :meth:`skip`
    and :meth:`CheckContext.draw` fill it while the check runs.

    Parameters
    ----------
    name : str
        The check's registered name (:func:`register` sets it); ``run_check`` refuses
        another.
    claim : str
        The check's one-line claim.
    rows : list of Row, optional
        Filled by :meth:`add`, :meth:`report` and :meth:`skip`.
    metrics : dict, optional
        Free-form JSON-able numbers kept in the report (not compared, not tabulated).
    figures : list of str, optional
        Paths of the figure files written (filled by :meth:`CheckContext.draw`).
    exploratory : bool, optional
        Marks a check that makes no claim of its own.
    figure_data : dict, optional
        Per figure stem, the data its drawer was given (filled by :meth:`CheckContext.draw`).
    figure_notes : dict, optional
        Per figure stem, why it was not written.
    origin : dict or None, optional
        Where the check comes from (set by ``run_check``; see :mod:`quadnet.harness.discovery`).

    Examples
    --------
    The result a check fills (``register`` makes it; the name and claim are written once):

    >>> import numpy as np
    >>> @register("my-identity", "tr(U U^T) equals the squared Frobenius norm of U")
    ... def run(ctx, res):
    ...     U = ctx.rng("U").standard_normal((6, 2))
    ...     row = res.add("trace identity", abs(np.trace(U @ U.T) - np.sum(U * U)), 1e-12,
    ...                   kind="theorem", source="a textbook identity")
    >>> res = run(CheckContext(quick=True))
    >>> res.name, [row.status for row in res.rows], res.status
    ('my-identity', ['PASS'], 'PASS')
    >>> _ = registry.remove_check("my-identity")  # (the doctest cleans up after itself)

    Made directly, e.g. to try a row:

    >>> CheckResult("demo", "a claim").add("error", 1e-14, 1e-12).status
    'PASS'
    """

    name: str
    claim: str
    rows: list[Row] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    figures: list[str] = field(default_factory=list)
    exploratory: bool = False
    figure_data: dict[str, Any] = field(default_factory=dict)
    figure_notes: dict[str, str] = field(default_factory=dict)
    origin: dict[str, Any] | None = None

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
        sanity condition a ``FAIL``). A non-finite ``measured`` never passes a tolerance.

        Parameters
        ----------
        claim : str
            What the row measures (stable across runs: reports are compared by it).
        measured : float
            The measured value.
        tolerance : float or None
            The bound; ``None`` makes a ``REPORTED`` row.
        relation : {"<=", ">=", "<", ">"}, optional
            How ``measured`` must compare with ``tolerance`` (default ``"<="``).
        paper : str, optional
            The reference value as the source states it.
        passed : bool, optional
            Overrides the comparison (for a claim that is not one inequality).
        source : str, optional
            The citation by name (``'Marchenko & Pastur (1967)'``) or ``"quadnet target"``.
        kind : {"theorem", "target", "exploration", ""}, optional
            What the row checks.
        status : str, optional
            An explicit status (``"SKIPPED"``; see :meth:`skip`).
        reason : str, optional
            Why the row was skipped.

        Returns
        -------
        Row
            The appended row.

        Raises
        ------
        ValueError
            For an unknown ``kind`` or ``relation``.

        Examples
        --------
        >>> res = CheckResult("demo", "a claim")
        >>> res.add("error", 1e-14, 1e-12, kind="theorem", source="a textbook identity").status
        'PASS'
        >>> res.add("cosine", 0.97, 0.99, relation=">=", paper="0.994").status
        'FAIL'
        >>> res.status
        'FAIL'
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

        Parameters
        ----------
        claim : str
            What the row measures.
        measured : float
            The measured value.
        paper : str, optional
            A reference value quoted for comparison.
        source : str, optional
            The citation by name.
        kind : str, optional
            Default ``"exploration"``.
        passed : bool, optional
            ``False`` turns the row into a ``FAIL``.

        Returns
        -------
        Row
            The appended row: ``REPORTED``, or ``FAIL`` when ``passed=False``.

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

        Parameters
        ----------
        claim : str
            The claim that could not be measured.
        reason : str
            Why, with the command that fixes it (``"needs cvxpy; install: ..."``).
        tolerance, relation, paper, source, kind
            As in :meth:`add` (kept in the table).

        Returns
        -------
        Row
            The appended ``SKIPPED`` row (``measured`` is NaN, ``null`` in the JSON report).

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
            "origin": dict(self.origin or _origin_of(self.name)),
        }


def _json_tree(obj, number: Callable[[float], Any]):
    """JSON-able copy of ``obj``: arrays to lists, numpy scalars to Python ones, dict keys to
    str, and every float through ``number``."""
    if isinstance(obj, dict):
        return {str(k): _json_tree(v, number) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_tree(v, number) for v in obj]
    if isinstance(obj, np.ndarray):
        return _json_tree(obj.tolist(), number)
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return number(obj)
    return obj


def _jsonable(obj):
    """JSON-able copy of metrics: non-finite floats become their ``repr`` (``'nan'``)."""
    return _json_tree(obj, _json_number)


def _plain(obj):
    """JSON-able copy of figure data: arrays to lists, non-finite floats to ``None``
    (``np.asarray(x, float)`` turns ``None`` back into ``nan``)."""
    return _json_tree(obj, lambda x: float(x) if math.isfinite(x) else None)


#: Figure drawers: stem -> ``draw(data) -> matplotlib Figure`` (see :func:`figure`); the dict
#: owned by ``quadnet.harness._registry.registry`` (``registry.figures``).
FIGURES: dict[str, Callable[[dict], Any]] = registry.figures

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


@validate_params({"stem": Text(stem=True)}, finite_result=False)
def figure(stem: str):
    """Decorator: register ``draw(data: dict) -> Figure`` as the drawer of figure ``stem``.

    The data is the JSON form stored in the report, so a saved report redraws the figure
    (``quadnet figures --from report.json``) with the same bytes as ``quadnet verify``.
    The drawer runs under ``STYLE`` with the Okabe & Ito (2008) colour cycle; a check
    calls it through :meth:`CheckContext.draw`, never directly. A stem that another drawer
    already has is a ``ValueError`` when the decorator is applied.

    Parameters
    ----------
    stem : str
        The figure's name: its files are ``stem.png`` and ``stem.pdf``. Stems are global
        (one drawer per stem across all checks), so prefix them with the check's name.

    Returns
    -------
    callable
        The decorator; it returns the drawer unchanged.

    Examples
    --------
    >>> @figure("demo-errors")
    ... def draw_errors(data):
    ...     import matplotlib.pyplot as plt
    ...     fig, ax = plt.subplots(figsize=(COLUMN_WIDTH, 2.4))
    ...     ax.semilogy(data["d"], data["error"], "o-")
    ...     return fig
    >>> "demo-errors" in FIGURES
    True
    >>> _ = registry.remove_figure("demo-errors")  # (the doctest cleans up after itself)
    """

    def deco(fn):
        def styled(data):
            import matplotlib.pyplot as plt
            from cycler import cycler

            with plt.rc_context({**STYLE, "axes.prop_cycle": cycler(color=list(OKABE_ITO))}):
                return fn(data)

        styled.__qualname__ = fn.__qualname__
        styled.__module__ = fn.__module__
        styled.__wrapped__ = fn
        registry.add_figure(stem, styled)
        return fn

    return deco


def floor_note(ax, floor: float, *, what: str = "exact zeros") -> None:
    """Mark a log axis floor: a dotted line at ``floor`` labelled with what it stands for
    (values below it, e.g. exact zeros, are drawn on it)."""
    ax.axhline(floor, color="0.5", ls=":", lw=0.7)
    ax.annotate(f"{what} drawn at {floor:.0e}", (0.99, floor), xycoords=("axes fraction", "data"),
                xytext=(0, -1.5), textcoords="offset points", ha="right", va="top",
                fontsize=5.5, color="0.35")


def curvature_routes_panel(ax, series, levels, title: str) -> None:
    """Log-log panel of how far other routes to the sectional curvature ``K`` are from
    O'Neill's formula: ``|K_other / K - 1|`` (floored at ``1e-17``: exact agreement is drawn
    there) against ``K``, one marker per entry ``(K, K_other, marker, label)`` of ``series``,
    a dashed line at each ``(level, color)`` of ``levels`` (the tolerances), and a legend."""
    for K, other, marker, label in series:
        ax.loglog(K, np.maximum(np.abs(other / K - 1), 1e-17), marker, label=label)
    for level, color in levels:
        ax.axhline(level, color=color, ls="--", lw=0.7)
    ax.set(xlabel="$K$ by O'Neill's formula", ylabel="relative difference", title=title)
    ax.legend()


#: Matplotlib settings of the ``slides`` style: the :data:`STYLE` of the paper figures with
#: fonts, lines and markers about twice as large, for a figure shown on a 16:9 slide.
SLIDES_STYLE = {
    **STYLE,
    "font.size": 14.0, "axes.titlesize": 14.0, "axes.labelsize": 14.0, "xtick.labelsize": 12.0,
    "ytick.labelsize": 12.0, "legend.fontsize": 12.0, "lines.linewidth": 2.0,
    "lines.markersize": 6.0, "axes.linewidth": 1.0, "xtick.major.width": 1.0,
    "ytick.major.width": 1.0, "xtick.major.size": 5.0, "ytick.major.size": 5.0,
}
#: The figure styles: ``paper`` (single-column figures, the committed ones) and ``slides``.
STYLES = {"paper": STYLE, "slides": SLIDES_STYLE}
#: Size in inches of a ``slides`` figure when no size is asked for: a 16:9 page, made taller
#: (1.5 times the paper height) for figures of stacked panels.
SLIDES_SIZE = (10.0, 5.625)
#: The file formats a figure can be written in.
FIGURE_FORMATS = ("png", "pdf", "svg")


def _scale_small_text(fig, factor: float) -> None:
    """Enlarge the texts a drawer sized explicitly below the paper font size (annotations,
    notes) by ``factor``, as the ``slides`` style enlarges the others."""
    from matplotlib.text import Text

    for text in fig.findobj(Text):
        if text.get_text() and text.get_fontsize() < STYLE["xtick.labelsize"]:
            text.set_fontsize(text.get_fontsize() * factor)


def render_figure(stem: str, data: dict, *, width: float | None = None,
                  height: float | None = None, style: str = "paper"):
    """Draw figure ``stem`` from its stored ``data`` and return the matplotlib Figure.

    With the defaults (``paper`` style, no size) this is exactly the figure ``quadnet
    verify`` writes. A ``width`` or ``height`` (inches) resizes the figure and it is laid out
    again at that size (only one given: the other keeps the figure's aspect ratio); the
    files written with ``exact_size=True`` (:meth:`CheckContext.savefig`) are then exactly
    that big. ``style="slides"`` uses :data:`SLIDES_STYLE` (and enlarges the small
    annotations as much) and, without a size, :data:`SLIDES_SIZE`: 10 in wide, 5.625 in
    high (16:9) or 1.5 times the paper height if that is more. Arguments are checked by
    :func:`quadnet.harness.draw_figure`.
    """
    if style == "paper" and width is None and height is None:
        return registry.get_figure(stem)(data)
    import matplotlib.pyplot as plt
    from cycler import cycler

    drawer = registry.get_figure(stem)
    draw = getattr(drawer, "__wrapped__", drawer)
    with plt.rc_context({**STYLES[style], "axes.prop_cycle": cycler(color=list(OKABE_ITO))}):
        fig = draw(data)
        w0, h0 = fig.get_size_inches()
        if style == "slides":
            _scale_small_text(fig, SLIDES_STYLE["font.size"] / STYLE["font.size"])
            if width is None and height is None:  # 16:9, or taller for stacked panels
                width, height = SLIDES_SIZE[0], max(SLIDES_SIZE[1], 1.5 * h0)
        if width is None:
            width = w0 * height / h0
        if height is None:
            height = h0 * width / w0
        fig.set_size_inches(width, height)
        if fig.get_layout_engine() is None:  # drawn with tight_layout: lay it out again
            fig.tight_layout()
    return fig


@dataclass
class CheckContext:
    """Everything a check may depend on besides its own code.

    ``quick`` selects the small configuration; otherwise the paper-scale one runs.
    ``figures_dir`` is where figures go (``None``: none are drawn, but their data is still
    stored in the result). ``show_progress`` draws tqdm bars on stderr; ``progress_lines``
    writes plain, time-throttled progress lines instead (for a stderr that is not a
    terminal: a log file, a batch job); ``name`` is the check being run (set by
    :meth:`activity`). ``figure_options`` (``width``, ``height``, ``style``, ``formats``;
    see :func:`quadnet.harness.draw_figure`) changes how figures are drawn; without it they
    are the committed paper figures, PNG and PDF. It is mutable on purpose: :meth:`activity`
    sets ``name`` for the duration of a check and :meth:`draw` appends to ``figure_errors``.

    Parameters
    ----------
    seed : int, optional
        The run's master seed (``quadnet verify --seed``); :meth:`rng` derives every stream
        from it.
    quick : bool, optional
        The small configuration (``--quick``).
    figures_dir : pathlib.Path or None, optional
        Where :meth:`draw` writes figures (``None``: data only).
    show_progress : bool, optional
        Show the bars of :meth:`progress`.
    figure_errors : list of str, optional
        Filled with the figures that could not be drawn or written.
    progress_lines : bool, optional
        Plain, time-throttled progress lines on stderr instead of bars.
    name : str, optional
        The check being run (set by :meth:`activity`).
    figure_options : dict, optional
        ``width``, ``height``, ``style``, ``formats`` for the figures drawn.

    Examples
    --------
    >>> ctx = CheckContext(seed=3, quick=True)
    >>> a, b = ctx.rng("U").standard_normal(2), ctx.rng("U").standard_normal(2)
    >>> bool((a == b).all())  # the same keys give the same stream, bit for bit
    True
    >>> sum(ctx.progress(range(4), desc="sizes"))
    6
    """

    seed: int = 0
    quick: bool = False
    figures_dir: Path | None = None
    show_progress: bool = False
    figure_errors: list[str] = field(default_factory=list)
    progress_lines: bool = False
    name: str = ""
    figure_options: dict[str, Any] = field(default_factory=dict)

    def rng(self, *keys: int | str) -> np.random.Generator:
        """A generator determined by the run seed and ``keys`` (strings hashed stably).

        Parameters
        ----------
        *keys : int or str
            Name the stream (``ctx.rng("U", d, trial)``); strings are hashed with CRC-32,
            so the stream never depends on Python's hash seed or on the order of calls.

        Returns
        -------
        numpy.random.Generator

        Examples
        --------
        >>> ctx = CheckContext(seed=0)
        >>> int(ctx.rng("U", 4).integers(100)) == int(ctx.rng("U", 4).integers(100))
        True
        >>> int(ctx.rng("U", 4).integers(100)) == int(ctx.rng("U", 5).integers(100))
        False
        """
        ints = [int(self.seed)]
        for k in keys:
            ints.append(zlib.crc32(k.encode()) if isinstance(k, str) else int(k))
        return np.random.default_rng(ints)

    def progress(self, iterable: Iterable, desc: str = "", total: int | None = None, *,
                 unit: str = "") -> Iterable:
        """``iterable``, reporting its progress on stderr when progress is switched on.

        With ``show_progress`` a tqdm bar is drawn (nested calls get their own line). With
        ``progress_lines`` (stderr is not a terminal) plain lines are written instead: one
        when the outermost loop starts, then at most every ``PROGRESS_INTERVAL`` seconds
        (``quadnet._progress``; also while one step takes long) and one when the outermost
        loop ends, e.g.
        ``recovery: phase transition 830/1760 cells, ETA 4 min``. Nested calls (a loop
        inside a loop) extend the line of the outer one. Otherwise ``iterable`` is returned
        as it is.

        Examples
        --------
        >>> ctx = CheckContext()
        >>> sum(ctx.progress(range(4), desc="demo"))
        6
        """
        return _progress.iterate(iterable, desc, total, unit=unit, bars=self.show_progress,
                                 lines=self.progress_lines, check=self.name)

    @contextlib.contextmanager
    def activity(self, name: str):
        """Run the block as check ``name``: the progress lines it writes (see
        :meth:`progress`) start with ``name``, and with ``progress_lines`` a line such as
        ``recovery: running, 3.0 min so far`` is written at least every
        ``PROGRESS_INTERVAL`` seconds even when the check reports no progress itself."""
        previous, self.name = self.name, name
        try:
            with _progress.activity(name, lines=self.progress_lines):
                yield self
        finally:
            self.name = previous

    def draw(self, result: CheckResult, stem: str, data: dict, *,
             skip_reason: str | None = None) -> list[str]:
        """Store the data of figure ``stem`` in ``result`` and draw it with its registered
        drawer into ``figures_dir``.

        ``skip_reason``: part of the figure's data could not be computed (e.g. a skipped
        row); the figure is then not written at all (never half drawn) and the reason is
        noted. A drawer or a write that fails is reported on stderr and noted in the result;
        the rows are kept.

        Parameters
        ----------
        result : CheckResult
            The check's result; the data is stored in its ``figure_data``.
        stem : str
            A stem registered with :func:`figure`.
        data : dict
            JSON-able data (arrays become lists; non-finite floats become ``None``).
        skip_reason : str, optional
            Do not draw, and note why.

        Returns
        -------
        list of str
            The files written (none without ``figures_dir``).

        Examples
        --------
        >>> res = CheckResult("demo", "a claim")
        >>> CheckContext().draw(res, "any-stem", {"d": np.arange(3)})  # no figures_dir
        []
        >>> res.figure_data
        {'any-stem': {'d': [0, 1, 2]}}
        """
        if skip_reason:
            result.figure_notes[stem] = f"not written: {skip_reason}"
            return []
        plain = json.loads(json.dumps(_plain(data)))
        result.figure_data[stem] = plain
        if self.figures_dir is None:
            return []
        opts = self.figure_options
        try:
            fig = render_figure(stem, plain, width=opts.get("width"), height=opts.get("height"),
                                style=opts.get("style", "paper"))
        except Exception as exc:  # noqa: BLE001 - a figure never discards the results
            msg = f"figure {stem!r} could not be drawn: {type(exc).__name__}: {exc}"
            self.figure_errors.append(msg)
            result.figure_notes[stem] = msg
            print(f"[quadnet] {msg}", file=sys.stderr, flush=True)
            return []
        sized = opts.get("width") is not None or opts.get("height") is not None or \
            opts.get("style", "paper") != "paper"
        paths = self.savefig(fig, stem, formats=opts.get("formats", ("png", "pdf")),
                             exact_size=sized)
        if not paths:
            result.figure_notes[stem] = self.figure_errors[-1] if self.figure_errors else \
                "not written"
        result.figures += paths
        return paths

    def savefig(self, fig, stem: str, *, formats: Iterable[str] | None = None,
                exact_size: bool = False) -> list[str]:
        """Write ``fig`` as ``stem.png``, ``stem.pdf`` (and ``stem.svg``, in ``formats``)
        deterministically, each file atomically; return the paths.

        The files are written in the order png, pdf, svg (the PNG is drawn even when not
        asked for), so each file has the same bytes whichever formats are asked for;
        ``formats`` defaults to those of ``figure_options`` (PNG and PDF).

        The page is cropped to the drawing (``bbox_inches="tight"``, the committed figures)
        unless ``exact_size``: then it is exactly the figure's size (a PDF MediaBox of 72
        points per inch). A write that fails is reported (stderr and ``figure_errors``) and
        gives ``[]``.

        Parameters
        ----------
        fig : matplotlib.figure.Figure
            Closed after writing.
        stem : str
            The file name without suffix.

        Returns
        -------
        list of str
            The paths written, or ``[]`` (no ``figures_dir``, or the write failed).

        Examples
        --------
        >>> import matplotlib.pyplot as plt
        >>> CheckContext().savefig(plt.figure(), "unused")  # no figures_dir: nothing written
        []
        """
        import matplotlib.pyplot as plt

        if self.figures_dir is None:
            plt.close(fig)
            return []
        out = Path(self.figures_dir)
        paths = []
        meta = {"png": {"Software": None},
                "pdf": {"CreationDate": None, "ModDate": None, "Producer": None,
                        "Creator": None},
                "svg": {"Date": None, "Creator": None}}
        if formats is None:  # a check drawing directly: the formats asked for the run
            formats = self.figure_options.get("formats", ("png", "pdf"))
        formats = [ext for ext in FIGURE_FORMATS if ext in set(formats)]
        try:
            out.mkdir(parents=True, exist_ok=True)
            if formats and formats[0] != "png":
                # the PNG is drawn first whatever is asked for: a layout engine settles on
                # the first draw, so every file has the bytes it has next to the PNG
                fig.savefig(io.BytesIO(), format="png", metadata=meta["png"], dpi=150,
                            bbox_inches=None if exact_size else "tight")
            for ext in formats:
                path = out / f"{stem}.{ext}"
                tmp = out / f".{stem}.{os.getpid()}.tmp.{ext}"
                stable = plt.rc_context({"svg.hashsalt": "quadnet"}) if ext == "svg" else \
                    contextlib.nullcontext()  # SVG element ids from a fixed salt
                with stable:
                    fig.savefig(tmp, format=ext, metadata=meta[ext], dpi=150,
                                bbox_inches=None if exact_size else "tight")
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


class CheckError(RuntimeError):
    """A check loaded from outside quadnet raised, or returned something else than its
    :class:`CheckResult`; the message names the check and the file or module it came from."""


BUILT_IN: dict[str, Any] = {"kind": "built-in"}


@dataclass
class CheckSpec:
    """A registered check: its name, claim, run function, order and origin.

    ``origin`` says where it comes from: ``{"kind": "built-in"}``, or (set by
    :mod:`quadnet.harness.discovery`) ``{"kind": "file", "path": ..., "module": ...,
    "sha256": ...}``, ``{"kind": "module", ...}`` or ``{"kind": "entry point", "dist": ...,
    "entry_point": ..., ...}``.
    """

    name: str
    claim: str
    run: Callable[[CheckContext], CheckResult]
    order: int = 100
    origin: dict[str, Any] = field(default_factory=lambda: dict(BUILT_IN))
    #: run only when named (or with ``quadnet verify --all``): a check whose full mode costs
    #: far more than the others (the sparse-parity and grokking sweeps)
    heavy: bool = False


#: The registered checks, name -> :class:`CheckSpec`: the dict owned by
#: ``quadnet.harness._registry.registry`` (``registry.checks``), which alone changes it.
REGISTRY: dict[str, CheckSpec] = registry.checks


def _default_origin(fn) -> dict[str, Any]:
    module = getattr(fn, "__module__", "") or ""
    if module == "quadnet" or module.startswith("quadnet."):
        return dict(BUILT_IN)
    return {"kind": "python", "module": module}


def _origin_of(name: str) -> dict[str, Any]:
    spec = registry.get_check(name)
    return dict(spec.origin) if spec is not None else {"kind": "unknown"}


def _function_name(fn) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def _takes_result(name: str, fn) -> bool:
    """True for ``run(ctx, res)``, False for ``run(ctx)`` (decided by the signature);
    ``TypeError`` naming the function for any other signature."""
    if not callable(fn):
        raise TypeError(f"register({name!r}): the check must be a function run(ctx, res) or "
                        f"run(ctx), got {type(fn).__name__}")
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # no inspectable signature: called as run(ctx)
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p for p in params if p.kind in positional and p.default is p.empty]
    keyword = [p.name for p in params
               if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is p.empty]
    if len(required) > 2 or keyword:
        raise TypeError(f"register({name!r}): the check function {_function_name(fn)} must "
                        f"take (ctx, res) or (ctx), but its signature is "
                        f"{inspect.signature(fn)}")
    return len(required) == 2


def _checked_result(name: str, fn, out, *, takes_result: bool, origin: dict | None = None
                    ) -> CheckResult:
    """``out`` if it is a :class:`CheckResult` named ``name``, else a :class:`CheckError`
    naming the check, where it comes from and its run function ``fn``."""
    if isinstance(out, CheckResult) and out.name == name:
        return out
    if origin is None:
        spec = registry.get_check(name)
        origin = spec.origin if spec is not None and getattr(spec.run, "__wrapped__", None) \
            is fn else _default_origin(fn)
    where = f"check {name!r} ({origin_label(origin)})"
    how = ("fill the res it is given and return it or None" if takes_result else
           "return the CheckResult it builds, or be written run(ctx, res) and fill the res "
           "that register makes")
    if isinstance(out, CheckResult):
        err = CheckError(f"{where} returned a result named {out.name!r}: its run function "
                         f"{_function_name(fn)} must {how}")
    else:
        err = CheckError(f"{where} returned {type(out).__name__}, not a CheckResult: its run "
                         f"function {_function_name(fn)} must {how}")
    err.check = name  # raised for this check's result (run_check passes it on as it is)
    raise err


def _check_runner(name: str, claim: str, fn) -> Callable[..., CheckResult]:
    """``fn`` as the registered run function: ``run(ctx) -> CheckResult`` whichever form
    ``fn`` has; for ``fn(ctx, res)`` it makes ``res = CheckResult(name, claim)`` first."""
    takes_result = _takes_result(name, fn)

    @functools.wraps(fn)
    def run(ctx: CheckContext, res: CheckResult | None = None) -> CheckResult:
        if takes_result:
            res = CheckResult(name, claim) if res is None else res
            out = fn(ctx, res)
            out = res if out is None else out
        elif res is not None:
            raise TypeError(f"check {name!r}: its run function {_function_name(fn)} takes "
                            "(ctx) and makes its own CheckResult; call it as run(ctx)")
        else:
            out = fn(ctx)
        return _checked_result(name, fn, out, takes_result=takes_result)

    run.takes_result = takes_result
    return run


@validate_params({"name": Text(), "claim": Text(), "order": Integer(), "heavy": Boolean()},
                 finite_result=False)
def register(name: str, claim: str, order: int = 100, *, heavy: bool = False):
    """Decorator: register ``run(ctx, res)`` (or ``run(ctx) -> CheckResult``) as the check
    ``name``.

    The check's name and claim are written once, here: ``register`` makes the result,
    ``res = CheckResult(name, claim)``, and passes it to ``run(ctx, res)``, which fills it
    (:meth:`CheckResult.add`, :meth:`~CheckResult.report`, :meth:`~CheckResult.skip`,
    :meth:`CheckContext.draw`) and returns it or ``None``. A function of one argument,
    ``run(ctx)``, builds and returns its own :class:`CheckResult` (the older form, still
    accepted); the form is told by the signature.

    ``quadnet verify NAME`` then runs it like a built-in check: its rows go into the table,
    the JSON, Markdown and LaTeX reports, and its figures can be redrawn from a report.
    A name that another check already has is a ``ValueError`` when the decorator is applied
    (loaded through ``--checks`` or an entry point, the check is refused with an error naming
    its file instead).

    Parameters
    ----------
    name : str
        The check's name (``quadnet verify NAME``); it must differ from every other check's.
    claim : str
        One line saying what the check verifies (``quadnet verify --list`` shows it).
    order : int, optional
        Checks run sorted by ``(order, name)``; the built-in ones use 0 to 100, so a
        negative ``order`` runs a check before all of them.
    heavy : bool, optional
        Leave the check out of a plain ``quadnet verify`` (it runs when named, or with
        ``--all``): for checks whose full mode takes far longer than the others.

    Returns
    -------
    callable
        The decorator. It returns the registered run function, ``run(ctx) ->
        CheckResult`` in both forms (``functools.wraps`` of the one decorated, which is its
        ``__wrapped__``).

    Raises
    ------
    TypeError
        When the decorated function takes neither ``(ctx, res)`` nor ``(ctx)``.
    CheckError
        When the run function returns something else than a :class:`CheckResult` of the
        check's name (``None`` is the result ``res`` of the two-argument form); the message
        names the check, its origin and the function.

    Examples
    --------
    >>> import numpy as np
    >>> @register("demo-trace", "tr(U U^T) equals the squared Frobenius norm of U")
    ... def run(ctx, res):
    ...     U = ctx.rng("U").standard_normal((6, 2))
    ...     res.add("trace identity", abs(np.trace(U @ U.T) - np.sum(U * U)), 1e-12,
    ...             kind="theorem", source="a textbook identity")
    >>> res = run(CheckContext(quick=True))
    >>> res.name, res.claim, res.status
    ('demo-trace', 'tr(U U^T) equals the squared Frobenius norm of U', 'PASS')
    >>> @register("demo-dict", "returns the wrong thing")
    ... def run_dict(ctx):
    ...     return {"rows": []}
    >>> run_dict(CheckContext())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    quadnet.harness.checks._base.CheckError: check 'demo-dict' (built-in) returned dict, ...
    >>> for n in ("demo-trace", "demo-dict"):  # (the doctest cleans up after itself)
    ...     _ = registry.remove_check(n)
    """

    def deco(fn: Callable[..., CheckResult | None]) -> Callable[..., CheckResult]:
        run = _check_runner(name, claim, fn)
        # collected instead while discovery loads a file (see Registry.collecting); a check
        # not of quadnet first has the built-in checks loaded, so that a clash is found here
        registry.add_check(CheckSpec(name, claim, run, order, _default_origin(fn), heavy=heavy))
        return run

    return deco
