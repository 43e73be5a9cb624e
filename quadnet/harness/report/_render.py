"""Rendering a report: the results table as text, Markdown, LaTeX (booktabs) or JSON.

:func:`format_report` renders a whole report (``quadnet report``); :class:`TableStream`
prints the same table check by check while ``quadnet verify`` runs, so that the streamed
table and the one rendered afterwards from the saved report are the same lines. Numbers go
through :func:`~quadnet.harness.report._format.format_number`, the formatter of every table.
"""

from __future__ import annotations

import json
import sys
import textwrap

from quadnet.harness.report._format import (
    QUADNET_SOURCE,
    format_number,
    format_tolerance,
    latex_cell,
    markdown_cell,
)

__all__ = ["REFERENCES", "TableStream", "format_report", "results_latex", "results_markdown",
           "results_text", "summary_lines"]

#: Short citation -> full reference, printed under the table for the names the rows use.
REFERENCES = {
    "Cheng (2026)": 'Cheng (2026), "Quotient Dynamics, Effective Curvature, and Implicit Bias '
                    'in Positive Quadratic Networks"',
    "Boix-Adsera et al. (2025)": 'Boix-Adsera, Mallinar, Simon & Belkin (2025), "The Features '
                                 'at Convergence Theorem", arXiv:2507.05644',
    "Radhakrishnan et al. (2024)": 'Radhakrishnan, Beaglehole, Pandit & Belkin (2024), '
                                   '"Mechanism for feature learning in neural networks and '
                                   'backpropagation-free machine learning models", Science 383',
    QUADNET_SOURCE: "a target quadnet sets itself (no paper makes this claim)",
}


def _rows(report: dict) -> list[dict]:
    """One flat dict per table row (a check without rows gives one FAIL row)."""
    out = []
    for chk in report.get("checks", []):
        rows = chk.get("rows") or [{
            "claim": "(no rows: " + str(chk.get("metrics", {}).get(
                "error", "the check measured nothing")) + ")",
            "paper": "", "measured": None, "tolerance": None, "relation": "",
            "passed": False, "status": "FAIL"}]
        for row in rows:
            status = row.get("status") or ("PASS" if row.get("passed") else "FAIL")
            tol = format_tolerance(row.get("tolerance"), row.get("relation", ""))
            measured = row.get("measured")
            out.append({"check": chk["name"], "claim": row["claim"],
                        "kind": row.get("kind") or "-", "source": row.get("source") or "-",
                        "paper": row.get("paper") or "-",
                        "measured": "-" if status == "SKIPPED" else format_number(measured),
                        "tolerance": tol, "status": status, "reason": row.get("reason", "")})
    return out


def _count(report: dict) -> dict:
    rows = _rows(report)
    by = {s: sum(r["status"] == s for r in rows) for s in ("PASS", "FAIL", "REPORTED",
                                                             "SKIPPED")}
    return {"rows": len(rows), **by}


def summary_lines(report: dict) -> list[str]:
    """The summary under the table: checks passed/failed/partly skipped, row counts, every
    SKIPPED row with its reason, figures not written, and the wall time."""
    checks = report.get("checks", [])
    st = [c.get("status") or ("PASS" if c.get("passed") else "FAIL") for c in checks]
    n_pass, n_fail, n_skip = st.count("PASS"), st.count("FAIL"), st.count("PARTLY SKIPPED")
    c = _count(report)
    parts = [f"{n_pass} passed"]
    if n_fail:
        parts.append(f"{n_fail} failed")
    head = f"{len(checks)} check{'' if len(checks) == 1 else 's'}: " + ", ".join(parts)
    skipped = [r for r in _rows(report) if r["status"] == "SKIPPED"]
    if n_skip:
        reasons: dict[str, list] = {}
        for r in skipped:
            why, _, how = r["reason"].partition(";")
            why = why.strip()
            why = "need " + why[6:] if why.startswith("needs ") else why
            reasons.setdefault(why, [0, how.strip()])[0] += 1
        head += f", {n_skip} partly skipped: " + "; ".join(
            f"{n} row{'' if n == 1 else 's'} {why}" + (f" ({how})" if how else "")
            for why, (n, how) in reasons.items())
    lines = [head,
             f"{c['rows']} rows: {c['PASS']} PASS, {c['FAIL']} FAIL, {c['REPORTED']} REPORTED "
             f"(measured, no tolerance), {c['SKIPPED']} SKIPPED"]
    for r in skipped:
        lines.append(f"  SKIPPED {r['check']}: {r['claim']} ({r['reason']})")
    for chk in checks:
        for stem, note in (chk.get("figure_notes") or {}).items():
            lines.append(f"  figure {stem} ({chk['name']}): {note}")
    if "seconds_total" in report:
        lines.append(f"wall time {report['seconds_total']:.1f} s "
                     f"({report.get('mode', '?')} mode, seed {report.get('seed', '?')})")
    return lines


def _references_used(report: dict) -> list[str]:
    text = " ".join(r["source"] + " " + r["paper"] + " " + r["claim"] for r in _rows(report))
    return [f"{k}: {v}" for k, v in REFERENCES.items() if k in text]


_TEXT_COLS = [("check", 9, False), ("claim", 50, True), ("kind", 11, False),
              ("source", 24, True), ("paper", 20, True), ("measured", 9, False),
              ("tolerance", 11, False), ("status", 8, False)]
_TEXT_HEAD = {"check": "check", "claim": "claim", "kind": "kind", "source": "source",
              "paper": "reference value", "measured": "measured", "tolerance": "tolerance",
              "status": "status"}


def _text_widths(rows: list[dict] | None = None, names: list[str] = ()) -> dict[str, int]:
    """Column widths: from ``rows`` (the whole table), or fixed ones for a table printed
    check by check (the widest value each column can take; ``names``: the checks)."""
    if rows is None:
        widths = {key: w for key, w, _ in _TEXT_COLS}
        widths["check"] = max([len("check")] + [len(n) for n in names])
        return widths
    widths = {}
    for key, w, wrap in _TEXT_COLS:
        longest = max([len(_TEXT_HEAD[key])] + [len(r[key]) for r in rows])
        widths[key] = min(w, longest) if wrap else longest
    return widths


def _text_lines(rows: list[dict], widths: dict[str, int], *, head: bool) -> list[str]:
    out = []

    def emit(cells: dict) -> None:
        wrapped = {k: (textwrap.wrap(cells[k], widths[k], break_long_words=True,
                                     break_on_hyphens=False) or [""])
                   for k, _, _ in _TEXT_COLS}
        for i in range(max(len(v) for v in wrapped.values())):
            out.append("  ".join((wrapped[k][i] if i < len(wrapped[k]) else "").ljust(widths[k])
                                 for k, _, _ in _TEXT_COLS).rstrip())

    if head:
        emit(_TEXT_HEAD)
        out.append("  ".join("-" * widths[k] for k, _, _ in _TEXT_COLS))
    for r in rows:
        emit(r)
    return out


def _text_tail(report: dict) -> list[str]:
    return ["", *_references_used(report), "", *summary_lines(report)]


def results_text(report: dict, width: int | None = None) -> str:
    """Plain-text table with wrapped (never cut) claim and source columns."""
    rows = _rows(report)
    out = _text_lines(rows, _text_widths(rows), head=True) + _text_tail(report)
    return "\n".join(out) + "\n"


_MD_HEAD = ["| check | claim | kind | source | reference value | measured | tolerance | "
            "status |", "|---|---|---|---|---|---|---|---|"]


def _md_rows(rows: list[dict]) -> list[str]:
    lines = []
    for r in rows:
        status = r["status"] if r["status"] != "FAIL" else "**FAIL**"
        if r["status"] == "SKIPPED":
            status = f"SKIPPED ({r['reason']})"
        lines.append("| " + " | ".join(markdown_cell(c) for c in (
            r["check"], r["claim"], r["kind"], r["source"], r["paper"], r["measured"],
            r["tolerance"], status)) + " |")
    return lines


def _md_tail(report: dict) -> str:
    lines = [""]
    lines += [f"* {ref}" for ref in _references_used(report)]
    lines.append("")
    lines += [f"- {ln.strip()}" for ln in summary_lines(report)]
    v = report.get("versions", {})
    tail = (f"\n_{report.get('mode', '?')} mode, seed {report.get('seed', '?')}, "
            f"quadnet {v.get('quadnet', '?')}, Python {v.get('python', '?')}, numpy "
            f"{v.get('numpy', '?')}, cvxpy {v.get('cvxpy', '?')}")
    if "seconds_total" in report:
        tail += f"; {report['seconds_total']:.0f} s in all"
    return "\n".join(lines) + "\n" + tail + "._\n"


def results_markdown(report: dict) -> str:
    """The Markdown results table (check | claim | kind | source | reference value | measured
    | tolerance | status) of a ``quadnet verify --json`` report, then the references, the
    summary and one line on mode, seed and versions."""
    return "\n".join(_MD_HEAD + _md_rows(_rows(report))) + "\n" + _md_tail(report)


def results_latex(report: dict) -> str:
    """A LaTeX ``longtable`` with ``booktabs`` rules (needs ``\\usepackage{booktabs,
    longtable}``), wrapped claim and source columns, and the summary as a table note."""
    lines = [r"% generated by quadnet report --format latex; needs \usepackage{booktabs,longtable}",
             r"\begingroup\footnotesize",
             r"\begin{longtable}{@{}l p{0.34\linewidth} l p{0.14\linewidth} "
             r"p{0.12\linewidth} r l l@{}}",
             r"\toprule",
             r"check & claim & kind & source & reference & measured & tolerance & status \\",
             r"\midrule", r"\endhead"]
    prev = None
    for r in _rows(report):
        if prev is not None and r["check"] != prev:
            lines.append(r"\midrule")
        prev = r["check"]
        status = r["status"] if r["status"] != "SKIPPED" else f"SKIPPED ({r['reason']})"
        lines.append(" & ".join(latex_cell(c) for c in (
            r["check"], r["claim"], r["kind"], r["source"], r["paper"], r["measured"],
            r["tolerance"], status)) + r" \\")
    lines += [r"\bottomrule", r"\end{longtable}"]
    lines += [latex_cell(ln) + r"\\" for ln in _references_used(report) + summary_lines(report)]
    lines.append(r"\endgroup")
    return "\n".join(lines) + "\n"


def format_report(report: dict, fmt: str) -> str:
    """The report as ``text``, ``markdown``, ``latex`` (booktabs) or ``json``.

    Parameters
    ----------
    report : dict
        A ``quadnet verify --json`` report.
    fmt : {"text", "markdown", "latex", "json"}

    Returns
    -------
    str

    Raises
    ------
    ValueError
        For another ``fmt``.

    Examples
    --------
    >>> rep = {"checks": [{"name": "demo", "status": "PASS", "rows": [
    ...     {"claim": "error", "measured": 1e-14, "tolerance": 1e-12, "relation": "<=",
    ...      "status": "PASS", "source": "Cheng (2026) §1", "kind": "theorem"}]}]}
    >>> print(format_report(rep, "markdown").splitlines()[2])
    | demo | error | theorem | Cheng (2026) §1 | - | 1.00e-14 | <= 1.00e-12 | PASS |
    >>> "toprule" in format_report(rep, "latex")
    True
    """
    if fmt == "json":
        return json.dumps(report, indent=2) + "\n"
    if fmt == "markdown":
        return results_markdown(report)
    if fmt == "latex":
        return results_latex(report)
    if fmt == "text":
        return results_text(report)
    raise ValueError(f"format must be text, markdown, latex or json, got {fmt!r}")


class TableStream:
    """The table on stdout, check by check: text and Markdown rows are printed as soon as
    a check finishes; LaTeX and JSON (one document each) are printed at the end.

    ``names`` are the checks the table may hold (the text columns get fixed widths, the
    widest each can take). ``check(chk)`` prints the rows of one finished check (a dict of
    the report's ``checks`` list), ``end(report)`` the references and the summary.
    """

    def __init__(self, fmt: str, names: list[str], out=None):
        self.fmt, self.out, self.started = fmt, out or sys.stdout, False
        self.widths = _text_widths(None, names)

    def _write(self, lines: list[str]) -> None:
        if lines:
            self.out.write("\n".join(lines) + "\n")
        self.out.flush()

    def check(self, chk: dict) -> None:
        if self.fmt not in ("text", "markdown"):
            return
        rows = _rows({"checks": [chk]})
        if self.fmt == "text":
            lines = _text_lines(rows, self.widths, head=not self.started)
        else:
            lines = ([] if self.started else list(_MD_HEAD)) + _md_rows(rows)
        self.started = True
        self._write(lines)

    def end(self, report: dict) -> None:
        if self.fmt == "text":
            self._write(([] if self.started else _text_lines([], self.widths, head=True))
                        + _text_tail(report))
        elif self.fmt == "markdown":
            if not self.started:
                self._write(list(_MD_HEAD))
            self.out.write(_md_tail(report))
            self.out.flush()
        else:
            self.out.write(format_report(report, self.fmt))
            self.out.flush()
