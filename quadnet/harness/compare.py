"""``quadnet compare OLD.json NEW.json``: which rows of two ``verify --json`` reports moved.

Rows are matched by ``(check, claim)`` (the k-th row of a claim that occurs several times in a
check with the k-th in the other report). For every matched row the comparison reports

* a **status change** (``PASS -> FAIL``, ``PASS -> SKIPPED``, ...); it is a *regression*
  when the new status is worse in the order ``PASS = REPORTED < SKIPPED < FAIL``;
* a row that **crossed its tolerance**: the old value met its tolerance and the new value
  does not meet the new tolerance, or meets it only because the tolerance changed (the
  relation is re-evaluated from the numbers, so a report whose status disagrees with its
  numbers is caught too); always a regression;
* a **move**: the measured value changed by more than ``factor`` (default 10, one order of
  magnitude), or changed sign. Values within ``floor`` (default ``1e-12``) of zero count as
  ``floor``, so a row at rounding level (``0 -> 1.3e-15``) does not move while ``0 -> 5``
  does. A move is listed with its direction (``worse`` / ``better`` for rows with a
  ``<=``/``>=`` tolerance, ``?`` otherwise) and is a regression only with ``strict``
  (worse or unknown direction);
* a changed tolerance.

Rows (and checks) present in only one report are *added* or *removed*; a removed row is a
regression unless ``allow_removed`` (a claim that is no longer verified). A check that
crashed in NEW (no rows, an ``error`` metric) is one regression, not one per row.

Why factor 10: the theorem rows of the built-in checks measure errors at float64 rounding
level (``1e-16`` to ``1e-13``), which move by factors of a few between seeds, BLAS builds and
thread counts; a quick run with seed 0 against seed 1 of the ``quotient`` and ``geometry``
checks moves 0 of their 34 rows by more than 10 beyond the floor (docs/report_schema.md). An
order of magnitude is what a change of algorithm or a lost digit looks like.

Exit status: 0 nothing regressed, 1 something regressed, 2 bad input (a file that cannot be
read, is not a quadnet report, or has another schema version).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = [
    "COMPARE_SCHEMA",
    "DEFAULT_FACTOR",
    "DEFAULT_FLOOR",
    "REPORT_SCHEMA",
    "Comparison",
    "ReportError",
    "compare_reports",
    "format_comparison",
    "read_report",
    "report_schema",
    "validate_report",
]

#: The report format this quadnet writes and reads (the ``schema`` field of a report).
REPORT_SCHEMA = "quadnet-report/1"
#: The format of ``quadnet compare --format json``.
COMPARE_SCHEMA = "quadnet-compare/1"
#: A measured value that changes by more than this factor has moved.
DEFAULT_FACTOR = 10.0
#: Values within this distance of zero count as this value when measuring a move.
DEFAULT_FLOOR = 1e-12

EXIT_OK, EXIT_REGRESSED, EXIT_BAD_INPUT = 0, 1, 2
_RANK = {"PASS": 0, "REPORTED": 0, "SKIPPED": 1, "FAIL": 2}
_COMPARATORS = ("<=", ">=", "<", ">")


class ReportError(ValueError):
    """A file that is not a readable quadnet report of a known schema version."""


# ------------------------------------------------------------------------ the schema
def report_schema() -> dict:
    """The JSON Schema of the report (``quadnet/harness/schema/report.schema.json``).

    Returns
    -------
    dict

    Examples
    --------
    >>> report_schema()["properties"]["schema"]["const"]
    'quadnet-report/1'
    """
    text = resources.files("quadnet.harness").joinpath("schema", "report.schema.json")
    return json.loads(text.read_text(encoding="utf-8"))


_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _is_type(value, name: str) -> bool:
    if name in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return name == "number" or float(value).is_integer()
    return isinstance(value, _TYPES[name])


def _validate(value, schema: Mapping, root: Mapping, path: str, out: list[str]) -> None:
    """The subset of JSON Schema the report schema uses ($ref, type, const, enum,
    required, properties, items, additionalProperties, anyOf, minimum, minLength)."""
    if "$ref" in schema:
        node = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        _validate(value, node, root, path, out)
        return
    where = path or "the report"
    if "anyOf" in schema:
        for sub in schema["anyOf"]:
            trial: list[str] = []
            _validate(value, sub, root, path, trial)
            if not trial:
                break
        else:
            out.append(f"{where}: {value!r} is not one of the allowed forms")
            return
    if "const" in schema and value != schema["const"]:
        out.append(f"{where}: expected {schema['const']!r}, got {value!r}")
        return
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{where}: {value!r} is not one of {schema['enum']}")
        return
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is_type(value, t) for t in names):
            out.append(f"{where}: expected {' or '.join(names)}, got {type(value).__name__}")
            return
    if "minimum" in schema and _is_type(value, "number") and value < schema["minimum"]:
        out.append(f"{where}: {value!r} is below {schema['minimum']}")
    if "minLength" in schema and isinstance(value, str) and len(value) < schema["minLength"]:
        out.append(f"{where}: empty text")
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                out.append(f"{where}: missing field {key!r}")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key, sub in value.items():
            if key in props:
                _validate(sub, props[key], root, f"{path}.{key}" if path else key, out)
            elif isinstance(extra, Mapping):
                _validate(sub, extra, root, f"{path}.{key}" if path else key, out)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            _validate(item, schema["items"], root, f"{path}[{i}]", out)


def validate_report(report: Any, *, legacy: bool = False) -> list[str]:
    """The problems that keep ``report`` from being a ``quadnet-report/1`` report.

    Parameters
    ----------
    report : object
        A parsed JSON document.
    legacy : bool, optional
        Accept a report written before the ``schema`` field existed (quadnet 0.1 and 0.2
        pre-releases; otherwise the same fields).

    Returns
    -------
    list of str
        Empty for a valid report; else one message per problem, each with the field's path.

    Examples
    --------
    >>> validate_report({"schema": "quadnet-report/1", "checks": [], "passed": True,
    ...                  "seed": 0, "mode": "quick", "versions": {}})
    []
    >>> validate_report({"schema": "quadnet-report/1", "checks": [{"name": "x"}],
    ...                  "passed": True, "seed": 0, "mode": "fast", "versions": {}})[:2]
    ["checks[0]: missing field 'claim'", "checks[0]: missing field 'passed'"]
    """
    schema = report_schema()
    if legacy:
        schema = dict(schema, required=[k for k in schema["required"] if k != "schema"])
    out: list[str] = []
    _validate(report, schema, schema, "", out)
    return out


def read_report(path: str | Path) -> dict:
    """Read and validate a ``quadnet verify --json`` report.

    A report without a ``schema`` field (written before it existed) is accepted when its
    fields are those of ``quadnet-report/1``; its ``schema`` is then set to
    ``"quadnet-report/0"``.

    Parameters
    ----------
    path : str or pathlib.Path

    Returns
    -------
    dict

    Raises
    ------
    ReportError
        The file cannot be read, is not JSON, is not a quadnet report, or has another
        schema version; the message says which, with the file name.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"cannot read {str(path)!r}: "
                          f"{getattr(exc, 'strerror', None) or exc}") from None
    try:
        report = json.loads(text)
    except ValueError as exc:
        raise ReportError(f"{str(path)!r} is not JSON ({exc})") from None
    if not isinstance(report, dict) or not isinstance(report.get("checks"), list):
        raise ReportError(f"{str(path)!r} is not a quadnet verify --json report (no 'checks' "
                          "list)")
    tag = report.get("schema")
    if tag is not None and tag != REPORT_SCHEMA:
        raise ReportError(f"{str(path)!r} has schema {tag!r}; this quadnet reads "
                          f"{REPORT_SCHEMA!r} (and reports without a schema field)")
    problems = validate_report(report, legacy=tag is None)
    if problems:
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise ReportError(f"{str(path)!r} is not a valid {REPORT_SCHEMA} report: "
                          + "; ".join(problems[:5]) + more)
    if tag is None:
        report = dict(report, schema="quadnet-report/0")
    return report


# ------------------------------------------------------------------------ comparing
def _num(x) -> float | None:
    if x is None or isinstance(x, bool):
        return None
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def _holds(measured: float | None, tol: float | None, relation: str) -> bool | None:
    """Whether ``measured relation tol`` holds; ``None`` when there is nothing to test."""
    if tol is None or relation not in _COMPARATORS or measured is None:
        return None
    if not math.isfinite(measured):
        return False
    return {"<=": measured <= tol, ">=": measured >= tol, "<": measured < tol,
            ">": measured > tol}[relation]


def _fmt(x) -> str:
    if x is None:
        return "-"
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    if x == int(x) and abs(x) < 1e5:
        return str(int(x))
    return f"{x:.4g}" if 1e-3 <= abs(x) < 1e5 else f"{x:.2e}"


def _tol(row: Mapping) -> str:
    t = _num(row.get("tolerance"))
    return "-" if t is None else f"{row.get('relation', '')} {_fmt(t)}".strip()


def _side(row: Mapping | None) -> dict | None:
    if row is None:
        return None
    return {"status": row.get("status"), "measured": row.get("measured"),
            "tolerance": row.get("tolerance"), "relation": row.get("relation")}


@dataclass
class Comparison:
    """The result of :func:`compare_reports`.

    ``changes`` holds one dict per row (or check) that changed: ``check``, ``claim``,
    ``what`` (a list of phrases), ``regression`` (bool), ``direction``, ``ratio`` and the
    ``old``/``new`` status, measured value and tolerance.
    """

    old: dict
    new: dict
    factor: float
    floor: float
    strict: bool
    allow_removed: bool
    changes: list[dict] = field(default_factory=list)
    matched: int = 0

    @property
    def regressions(self) -> list[dict]:
        return [c for c in self.changes if c["regression"]]

    @property
    def regressed(self) -> bool:
        """Something regressed (the exit status of ``quadnet compare`` is then 1)."""
        return bool(self.regressions)

    def counts(self) -> dict[str, int]:
        kinds = ("added", "removed")
        return {"compared": self.matched, "changed": len(self.changes),
                "regressed": len(self.regressions),
                **{k: sum(c["what"][0].startswith(k) for c in self.changes) for k in kinds}}

    def as_dict(self) -> dict:
        return {"schema": COMPARE_SCHEMA, "old": _meta(self.old), "new": _meta(self.new),
                "factor": self.factor, "floor": self.floor, "strict": self.strict,
                "allow_removed": self.allow_removed, "regressed": self.regressed,
                "counts": self.counts(), "changes": self.changes}


def _meta(report: dict) -> dict:
    return {"file": report.get("_file"), "schema": report.get("schema"),
            "mode": report.get("mode"), "seed": report.get("seed"),
            "quadnet": (report.get("versions") or {}).get("quadnet")}


def _keyed(check: Mapping) -> dict[tuple[str, int], Mapping]:
    seen: dict[str, int] = {}
    out = {}
    for row in check.get("rows") or []:
        k = seen.get(row["claim"], 0)
        seen[row["claim"]] = k + 1
        out[(row["claim"], k)] = row
    return out


def _compare_rows(o: Mapping, n: Mapping, factor: float, floor: float,
                  strict: bool) -> dict | None:
    what, regression, improvement = [], False, False
    so, sn = o.get("status"), n.get("status")
    if so != sn:
        what.append(f"status {so} -> {sn}")
        regression |= _RANK.get(sn, 2) > _RANK.get(so, 2)
        improvement |= _RANK.get(sn, 2) < _RANK.get(so, 2)
    mo, mn = _num(o.get("measured")), _num(n.get("measured"))
    to, tn = _num(o.get("tolerance")), _num(n.get("tolerance"))
    ro, rn = o.get("relation", "<="), n.get("relation", "<=")
    held = _holds(mo, to, ro)
    if held is None:
        held = so == "PASS" and to is not None
    if held and sn != "SKIPPED":
        now_new, now_old = _holds(mn, tn, rn), _holds(mn, to, ro)
        if now_new is False:
            what.append(f"crossed its tolerance: {_fmt(mn)} fails {_tol(n)}")
            regression = True
        elif now_old is False and (to, ro) != (tn, rn):
            what.append(f"passes only because the tolerance changed: {_fmt(mn)} fails the "
                        f"old {_tol(o)}")
            regression = True
    if (to, ro) != (tn, rn):
        what.append(f"tolerance {_tol(o)} -> {_tol(n)}")
    ratio, direction = None, None
    if mo is not None and mn is not None and so != "SKIPPED" and sn != "SKIPPED":
        moved = False
        if not (math.isfinite(mo) and math.isfinite(mn)):
            moved = (math.isfinite(mo) != math.isfinite(mn)) or (
                not math.isnan(mo) and not math.isnan(mn) and mo != mn)
            if moved:
                what.append(f"measured {_fmt(mo)} -> {_fmt(mn)} (non-finite)")
                direction = "worse" if math.isfinite(mo) else "better"
        else:
            a, b = max(abs(mo), floor), max(abs(mn), floor)
            ratio = max(a, b) / min(a, b) if min(a, b) > 0 else (1.0 if a == b else math.inf)
            flipped = mo * mn < 0 and min(abs(mo), abs(mn)) > floor
            if ratio > factor or flipped:
                moved = True
                rel = rn if rn in _COMPARATORS else ro
                if rel in ("<=", "<"):
                    direction = "worse" if mn > mo else "better"
                elif rel in (">=", ">"):
                    direction = "worse" if mn < mo else "better"
                else:
                    direction = "?"
                how = "changed sign" if flipped else f"x{ratio:.3g}"
                what.append(f"measured {_fmt(mo)} -> {_fmt(mn)} ({how}, {direction})")
        if moved and strict and direction in ("worse", "?"):
            regression = True
    if not what:
        return None
    return {"check": None, "claim": n["claim"], "what": what, "regression": regression,
            "improvement": improvement and not regression, "direction": direction,
            "ratio": ratio if ratio is None or math.isfinite(ratio) else "inf",
            "old": _side(o), "new": _side(n)}


def compare_reports(old: dict, new: dict, *, factor: float = DEFAULT_FACTOR,
                    floor: float = DEFAULT_FLOOR, strict: bool = False,
                    allow_removed: bool = False) -> Comparison:
    """Compare two reports row by row (see the module docstring for the rules).

    Parameters
    ----------
    old, new : dict
        Reports as read by :func:`read_report`.
    factor : float, optional
        A measured value that changes by more than this factor (> 1) has moved.
    floor : float, optional
        Values within ``floor`` (>= 0) of zero count as ``floor``.
    strict : bool, optional
        A move in the worse (or an unknown) direction is a regression too.
    allow_removed : bool, optional
        Rows and checks missing from ``new`` are not regressions.

    Returns
    -------
    Comparison

    Raises
    ------
    ValueError
        For ``factor <= 1`` or a negative or non-finite ``floor``.

    Examples
    --------
    >>> row = {"claim": "trace identity", "measured": 4e-16, "tolerance": 1e-12,
    ...        "relation": "<=", "passed": True, "status": "PASS"}
    >>> rep = {"checks": [{"name": "my-identity", "rows": [row]}]}
    >>> compare_reports(rep, rep).regressed
    False
    >>> worse = {"checks": [{"name": "my-identity", "rows": [dict(row, measured=1e-3)]}]}
    >>> cmp = compare_reports(rep, worse)
    >>> cmp.regressed, cmp.changes[0]["what"][0]
    (True, 'crossed its tolerance: 1.00e-03 fails <= 1.00e-12')
    """
    factor = float(factor)
    if not math.isfinite(factor) or factor <= 1:
        raise ValueError(f"factor must be a number > 1, got {factor!r}")
    floor = float(floor)
    if not math.isfinite(floor) or floor < 0:
        raise ValueError(f"floor must be a finite number >= 0, got {floor!r}")
    cmp = Comparison(old, new, factor, floor, bool(strict), bool(allow_removed))
    old_checks = {c["name"]: c for c in old.get("checks", [])}
    new_checks = {c["name"]: c for c in new.get("checks", [])}
    for name, oc in old_checks.items():
        nc = new_checks.get(name)
        if nc is None:
            cmp.changes.append({"check": name, "claim": None,
                                "what": [f"removed check ({len(oc.get('rows') or [])} rows)"],
                                "regression": not allow_removed, "improvement": False,
                                "direction": None, "ratio": None, "old": None, "new": None})
            continue
        orows, nrows = _keyed(oc), _keyed(nc)
        if not nrows and orows:
            err = (nc.get("metrics") or {}).get("error", "the check measured nothing")
            cmp.changes.append({"check": name, "claim": None,
                                "what": [f"check {nc.get('status', 'FAIL')} with no rows: {err}"],
                                "regression": True, "improvement": False, "direction": None,
                                "ratio": None, "old": None, "new": None})
            continue
        for key, orow in orows.items():
            nrow = nrows.get(key)
            if nrow is None:
                cmp.changes.append({"check": name, "claim": key[0], "what": ["removed row"],
                                    "regression": not allow_removed, "improvement": False,
                                    "direction": None, "ratio": None, "old": _side(orow),
                                    "new": None})
                continue
            cmp.matched += 1
            change = _compare_rows(orow, nrow, factor, floor, strict)
            if change is not None:
                change["check"] = name
                cmp.changes.append(change)
        for key, nrow in nrows.items():
            if key not in orows:
                cmp.changes.append({"check": name, "claim": key[0], "what": ["added row"],
                                    "regression": False, "improvement": False,
                                    "direction": None, "ratio": None, "old": None,
                                    "new": _side(nrow)})
    for name, nc in new_checks.items():
        if name not in old_checks:
            cmp.changes.append({"check": name, "claim": None,
                                "what": [f"added check ({len(nc.get('rows') or [])} rows)"],
                                "regression": False, "improvement": False, "direction": None,
                                "ratio": None, "old": None, "new": None})
    return cmp


# ------------------------------------------------------------------------ formatting
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
        me = (f"{_fmt(_num((o or {}).get('measured')))} -> "
              f"{_fmt(_num((n or {}).get('measured')))}")
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
                lines.append("| " + " | ".join(str(x).replace("|", "\\|") for x in row) + " |")
            lines.append("")
        lines.append(f"**{_summary(cmp)}**")
        return "\n".join(lines) + "\n"
    if fmt != "text":
        raise ValueError(f"format must be text, markdown or json, got {fmt!r}")
    def side(r: dict | None) -> str:
        if r is None:
            return "-"
        tol = "" if _num(r.get("tolerance")) is None else f" ({_tol(r)})"
        return f"{r.get('status')} {_fmt(_num(r.get('measured')))}{tol}"

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


# ------------------------------------------------------------------------ the command
_HELP = """\
Rows are matched by (check, claim). Listed: status changes, rows that crossed their
tolerance, measured values that moved by more than --factor (values within --floor of zero
count as --floor), changed tolerances, added and removed rows.

regressions: a status that got worse (PASS/REPORTED < SKIPPED < FAIL), a row that crossed
its tolerance (or passes only because the tolerance changed), a removed row or check
(unless --allow-removed), a check that crashed; with --strict also a move in the worse
direction.

exit status:
  0  nothing regressed
  1  something regressed
  2  bad input: a file that cannot be read, is not a quadnet report, or has another
     schema version
"""


def add_parser(sub) -> argparse.ArgumentParser:
    """Add the ``compare`` subcommand to the ``quadnet`` parser's subparsers."""
    c = sub.add_parser("compare", help="which rows of two verify --json reports moved",
                       description=__doc__.splitlines()[0].split(": ", 1)[1], epilog=_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("old", metavar="OLD.json", help="the reference report")
    c.add_argument("new", metavar="NEW.json", help="the report to check against it")
    c.add_argument("--factor", type=float, default=DEFAULT_FACTOR,
                   help=f"a move is a change by more than this factor (default "
                   f"{DEFAULT_FACTOR:g}: one order of magnitude)")
    c.add_argument("--floor", type=float, default=DEFAULT_FLOOR,
                   help=f"values within this of zero count as it (default {DEFAULT_FLOOR:g}; "
                   "0 compares exactly)")
    c.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    c.add_argument("--strict", action="store_true",
                   help="a move in the worse direction is a regression too")
    c.add_argument("--allow-removed", action="store_true",
                   help="rows and checks missing from NEW are not regressions")
    c.set_defaults(func=cmd_compare)
    return c


def cmd_compare(args) -> int:
    """``quadnet compare``: print the comparison; 0 nothing regressed, 1 regressed, 2 bad
    input."""
    try:
        old, new = read_report(args.old), read_report(args.new)
    except ReportError as exc:
        print(f"quadnet compare: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    old["_file"], new["_file"] = str(args.old), str(args.new)
    try:
        cmp = compare_reports(old, new, factor=args.factor, floor=args.floor,
                              strict=args.strict, allow_removed=args.allow_removed)
    except ValueError as exc:
        print(f"quadnet compare: --{exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    sys.stdout.write(format_comparison(cmp, args.format))
    return EXIT_REGRESSED if cmp.regressed else EXIT_OK
