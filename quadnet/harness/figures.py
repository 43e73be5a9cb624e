"""Figures from a saved report: :func:`draw_figure` and :func:`figure_names`.

Every figure of ``quadnet verify`` is drawn from JSON-able data that the report stores
(``verify --json FILE``: ``checks[i]["figure_data"][name]``), so a figure can be redrawn at
any size and in another style without recomputing anything and without private code.
``quadnet figures --from FILE --width IN --height IN --format pdf,png,svg --style
paper|slides`` is the same from the command line.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from quadnet.harness._registry import registry
from quadnet.harness.report import ReportError, read_report

__all__ = ["draw_figure", "figure_names"]


def _drawers() -> dict:
    """The registered figure drawers (importing every check module registers them)."""
    from quadnet.harness import checks

    checks.available()
    return registry.figures


def figure_names() -> list[str]:
    """Names of the figures :func:`draw_figure` can draw (the stems of the files in
    ``figures/``), sorted.

    Returns
    -------
    list of str

    Examples
    --------
    >>> names = figure_names()
    >>> "rfm_grokking" in names and "quotient_identities" in names
    True
    """
    return sorted(n for n in _drawers() if not n.startswith("_"))


def _load_report(report) -> dict:
    """A report given as a dict, or read from a path with :func:`read_report` (which checks
    the schema)."""
    if isinstance(report, (str, os.PathLike)):
        try:
            return read_report(report)
        except ReportError as exc:
            raise ReportError(f"report: {exc}") from None
    if not isinstance(report, Mapping):
        raise TypeError("report must be a quadnet verify --json report (a dict) or the path "
                        f"of one, got {type(report).__name__}")
    if not isinstance(report.get("checks"), list):
        raise ValueError("report is not a quadnet verify --json report (no 'checks' list)")
    return report  # type: ignore[return-value]


def figure_data(name: str, report) -> tuple[dict, dict]:
    """The stored data of figure ``name`` in ``report`` and the check entry holding it.

    Raises
    ------
    ValueError
        When no check of the report stored data for ``name`` (the message says which
        figures the report has and how to make a report that has ``name``).
    """
    report = _load_report(report)
    have = []
    for chk in report["checks"]:
        data = chk.get("figure_data") or {}
        if name in data:
            return data[name], chk
        have += list(data)
    note = ""
    for chk in report["checks"]:
        if name in (chk.get("figure_notes") or {}):
            note = f" (check {chk.get('name')!r}: {chk['figure_notes'][name]})"
    check = name.split("_", 1)[0]
    raise ValueError(f"the report holds no data for figure {name!r}{note}; it has "
                     f"{', '.join(sorted(have)) or 'no figure data'}. A report with it: "
                     f"quadnet verify {check} --json FILE")


def _size(value, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what} must be a number of inches, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value) or not 0.0 < value <= 50.0:
        raise ValueError(f"{what} must be between 0 and 50 inches, got {value!r}")
    return value


def _formats(formats) -> tuple[str, ...]:
    from quadnet.harness.checks._base import FIGURE_FORMATS

    if isinstance(formats, str):
        formats = formats.split(",")
    if not isinstance(formats, Iterable):
        raise TypeError(f"formats must be a sequence of {', '.join(FIGURE_FORMATS)}, got "
                        f"{type(formats).__name__}")
    out = []
    for f in formats:
        f = str(f).strip().lower().lstrip(".")
        if f not in FIGURE_FORMATS:
            raise ValueError(f"formats: {f!r} is not one of {', '.join(FIGURE_FORMATS)}")
        if f not in out:
            out.append(f)
    if not out:
        raise ValueError(f"formats must name at least one of {', '.join(FIGURE_FORMATS)}")
    return tuple(out)


def check_figure_options(*, width=None, height=None, style="paper",
                         formats=("pdf", "png")) -> dict[str, Any]:
    """``width``, ``height``, ``style`` and ``formats`` checked and normalised (the
    ``figure_options`` of a :class:`~quadnet.harness.checks.CheckContext`)."""
    from quadnet.harness.checks._base import STYLES

    if style not in STYLES:
        raise ValueError(f"style must be one of {', '.join(STYLES)}, got {style!r}")
    return {"width": _size(width, "width"), "height": _size(height, "height"),
            "style": style, "formats": _formats(formats)}


def draw_figure(name: str, report, *, width: float | None = None,
                height: float | None = None, style: str = "paper",
                formats: Iterable[str] = ("pdf", "png"), out: str | os.PathLike | None = None):
    """Draw figure ``name`` from the data stored in a ``quadnet verify --json`` report.

    Nothing is recomputed. With the defaults the figure is byte for byte the one
    ``quadnet verify`` wrote (``figures/NAME.png`` and ``.pdf``: single-column width, 3.4 in,
    7 pt text, cropped to the drawing). A ``width`` and/or ``height`` in inches lays the
    figure out again at that size, and the written page is exactly that big (a PDF's
    MediaBox is ``72 * width`` by ``72 * height`` points); given only one, the other keeps
    the figure's aspect ratio. ``style="slides"`` draws fonts and lines about twice as large
    and, without a size, on a 16:9 page of 10 x 5.625 in.

    Parameters
    ----------
    name : str
        A figure name, one of :func:`figure_names` (e.g. ``"rfm_grokking"``).
    report : dict or str or path-like
        A report written by ``quadnet verify --json FILE`` (a quick-mode report draws the
        quick configuration), or the path of one.
    width, height : float, optional
        Size in inches, each in (0, 50].
    style : {"paper", "slides"}
    formats : sequence of {"pdf", "png", "svg"}, or a comma-separated str
        The files written when ``out`` is given.
    out : str or path-like, optional
        A folder: ``out/NAME.EXT`` is written for each format (deterministically: the same
        report gives the same bytes). Without it the figure is returned.

    Returns
    -------
    matplotlib.figure.Figure or list of str
        The figure (``out=None``; close it with ``matplotlib.pyplot.close``), else the paths
        written, in the order png, pdf, svg.

    Raises
    ------
    ValueError
        Unknown ``name``, ``style`` or format; a size out of range; a report that is not
        one or holds no data for ``name`` (the message says how to make one).
    TypeError
        ``report`` or a size of the wrong type.

    Examples
    --------
    >>> import tempfile
    >>> from quadnet.harness import draw_figure
    >>> report = {"checks": [{"name": "selection", "figure_data": {"selection_eta": {
    ...     "etas": [0.1, 0.05, 0.025], "deviation": [1e-2, 5e-3, 2.5e-3], "slope": 1.0}}}]}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     paths = draw_figure("selection_eta", report, width=6.0, out=tmp)
    ...     [p.rsplit("/", 1)[-1] for p in paths]
    ['selection_eta.png', 'selection_eta.pdf']
    """
    drawers = _drawers()
    if not isinstance(name, str):
        raise TypeError(f"name must be a figure name (str), got {type(name).__name__}")
    if name not in drawers:
        raise ValueError(f"unknown figure {name!r}; figures: {', '.join(figure_names())}")
    opts = check_figure_options(width=width, height=height, style=style, formats=formats)
    data, chk = figure_data(name, report)
    from quadnet.harness.checks._base import CheckContext, CheckResult, render_figure

    if out is None:
        return render_figure(name, data, width=opts["width"], height=opts["height"],
                             style=opts["style"])
    ctx = CheckContext(figures_dir=Path(out), figure_options=opts)
    res = CheckResult(str(chk.get("name", "")), str(chk.get("claim", "")))
    paths = ctx.draw(res, name, data)
    if ctx.figure_errors:
        raise RuntimeError(ctx.figure_errors[-1])
    return paths
