"""Rendering a comparison of two reports (``quadnet compare``): text, Markdown or JSON.

Numbers and tolerances go through the formatters of the report tables
(:mod:`quadnet.harness.report._format`).
"""

from __future__ import annotations

import json

from quadnet.harness.report._compare import Comparison, _meta, _num, _tol
from quadnet.harness.report._format import format_number, markdown_cell

__all__ = ["format_comparison"]


def _label(c: dict) -> str:
    return c["check"] + (f": {c['claim']}" if c["claim"] else "")


def _tag(c: dict) -> str:
    if c["regression"]:
        return "REGRESSED"
    if c.get("improvement"):
        return "improved"
    return c["what"][0].split()[0] if c["what"][0].startswith(("added", "removed")) else "changed"


def _header(cmp: Comparison) -> list[str]:
    def side(r: dict) -> str:
        m = _meta(r)
        return (f"{m['file'] or '?'} ({m['mode'] or '?'} mode, seed {m['seed']}, quadnet "
                f"{m['quadnet'] or '?'}, {m['schema']})")

    lines = [f"old: {side(cmp.old)}", f"new: {side(cmp.new)}",
             f"a move is a change by more than x{cmp.factor:g} (values within {cmp.floor:g} "
             f"of zero count as {cmp.floor:g})" + ("; strict: worse moves regress"
                                                   if cmp.strict else "")]
    mo, mn = cmp.old.get("mode"), cmp.new.get("mode")
    if mo and mn and mo != mn:
        lines.append(f"note: {mo} mode against {mn} mode: the configurations differ, so "
                     "values are expected to move")
    return lines


def _summary(cmp: Comparison) -> str:
    c = cmp.counts()
    verdict = "REGRESSED" if cmp.regressed else "nothing regressed"
    return (f"{c['compared']} rows compared, {c['changed']} changed: {c['regressed']} "
            f"regressed, {c['added']} added, {c['removed']} removed -> {verdict}")


def format_comparison(cmp: Comparison, fmt: str = "text") -> str:
    """A :class:`Comparison` as ``text``, ``markdown`` or ``json``.

    Regressions come first, then the other changes, each with its check, claim, old and new
    status, measured value and tolerance.

    Examples
    --------
    >>> from quadnet.harness.report import compare_reports
    >>> rep = {"checks": [{"name": "c", "rows": [{"claim": "x", "measured": 1.0,
    ...        "tolerance": None, "relation": "=", "passed": True, "status": "REPORTED"}]}]}
    >>> print(format_comparison(compare_reports(rep, rep)).splitlines()[-1])
    1 rows compared, 0 changed: 0 regressed, 0 added, 0 removed -> nothing regressed
    """
    ordered = sorted(cmp.changes, key=lambda c: (not c["regression"], not c.get("improvement")))
    if fmt == "json":
        return json.dumps(dict(cmp.as_dict(), changes=ordered), indent=2) + "\n"

    def cells(c: dict) -> tuple[str, str, str, str]:
        o, n = c["old"], c["new"]
        st = f"{(o or {}).get('status') or '-'} -> {(n or {}).get('status') or '-'}"
        me = (f"{format_number(_num((o or {}).get('measured')))} -> "
              f"{format_number(_num((n or {}).get('measured')))}")
        tol = f"{_tol(o) if o else '-'} -> {_tol(n) if n else '-'}"
        return st, me, tol, "; ".join(c["what"])

    if fmt == "markdown":
        lines = [f"- {ln}" for ln in _header(cmp)] + [""]
        if ordered:
            lines += ["| | check | claim | status | measured | tolerance | what |",
                      "|---|---|---|---|---|---|---|"]
            for c in ordered:
                tag = "**REGRESSED**" if c["regression"] else _tag(c)
                row = (tag, c["check"], c["claim"] or "(whole check)", *cells(c))
                lines.append("| " + " | ".join(markdown_cell(x) for x in row) + " |")
            lines.append("")
        lines.append(f"**{_summary(cmp)}**")
        return "\n".join(lines) + "\n"
    if fmt != "text":
        raise ValueError(f"format must be text, markdown or json, got {fmt!r}")
    def side(r: dict | None) -> str:
        if r is None:
            return "-"
        tol = "" if _num(r.get("tolerance")) is None else f" ({_tol(r)})"
        return f"{r.get('status')} {format_number(_num(r.get('measured')))}{tol}"

    lines = _header(cmp) + [""]
    for c in ordered:
        lines.append(f"{_tag(c):<9}  {_label(c)}")
        lines.append(f"{'':<9}  {'; '.join(c['what'])}")
        if c["old"] or c["new"]:
            lines.append(f"{'':<9}  old {side(c['old'])}, new {side(c['new'])}")
    if ordered:
        lines.append("")
    lines.append(_summary(cmp))
    return "\n".join(lines) + "\n"
