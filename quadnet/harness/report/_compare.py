"""Comparing two reports row by row: :func:`compare_reports` and :class:`Comparison`.

The rules (what is a status change, a crossed tolerance, a move, a regression) are stated in
the public module :mod:`quadnet.harness.compare`, which re-exports these names;
:func:`~quadnet.harness.report._render_compare.format_comparison` renders the result.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from quadnet.harness.report._format import format_number, format_tolerance
from quadnet.harness.report._schema import COMPARE_SCHEMA

__all__ = ["DEFAULT_FACTOR", "DEFAULT_FLOOR", "Comparison", "compare_reports"]

#: A measured value that changes by more than this factor has moved.
DEFAULT_FACTOR = 10.0
#: Values within this distance of zero count as this value when measuring a move.
DEFAULT_FLOOR = 1e-12

_RANK = {"PASS": 0, "REPORTED": 0, "SKIPPED": 1, "FAIL": 2}
_COMPARATORS = ("<=", ">=", "<", ">")


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


def _tol(row: Mapping) -> str:
    return format_tolerance(_num(row.get("tolerance")), row.get("relation", ""))


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
            what.append(f"crossed its tolerance: {format_number(mn)} fails {_tol(n)}")
            regression = True
        elif now_old is False and (to, ro) != (tn, rn):
            what.append(f"passes only because the tolerance changed: {format_number(mn)} fails the "
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
                what.append(f"measured {format_number(mo)} -> {format_number(mn)} (non-finite)")
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
                what.append(f"measured {format_number(mo)} -> {format_number(mn)} ({how}, {direction})")
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
