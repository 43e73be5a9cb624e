"""Reading a report: :func:`read_report`, the one reader of ``verify --json`` files.

``quadnet report``, ``quadnet figures --from``, ``quadnet verify --resume``, ``quadnet
compare`` and :func:`quadnet.harness.draw_figure` (given a path) all read reports through it,
so every one of them refuses the same files with the same messages.
"""

from __future__ import annotations

import json
from pathlib import Path

from quadnet.harness.report._schema import REPORT_SCHEMA, validate_report

__all__ = ["ReportError", "read_report"]


class ReportError(ValueError):
    """A file that is not a readable quadnet report of a known schema version."""


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
