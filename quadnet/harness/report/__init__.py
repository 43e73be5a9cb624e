"""The report of ``quadnet verify --json``: its schema, reading, writing and rendering.

One owner for everything a report is:

* the format (:data:`REPORT_SCHEMA`, the JSON Schema :func:`report_schema` of
  ``quadnet/harness/schema/``, :func:`validate_report`; docs/report_schema.md);
* reading: :func:`read_report`, the only reader of report files, which always checks the
  schema and raises :class:`ReportError` naming the file;
* writing: :func:`write_json_atomic` (a run stopped at any moment leaves a whole file);
* rendering: :func:`format_report` (text, Markdown, LaTeX, JSON) and :class:`TableStream`
  (the same table, check by check, while ``quadnet verify`` runs); comparisons
  (:func:`compare_reports`, :func:`format_comparison`). Every table formats its numbers
  with :func:`format_number` and every duration with :func:`format_duration`.

The modules behind these names are private (``_schema``, ``_read``, ``_write``, ``_format``,
``_render``, ``_compare``, ``_render_compare``); import the names from here. The public
module :mod:`quadnet.harness.compare` re-exports the schema, reading and comparison names.
"""

# ruff: noqa: I001  (one re-export per line, grouped by module)

from quadnet.harness.report._schema import (
    COMPARE_SCHEMA as COMPARE_SCHEMA,
    REPORT_SCHEMA as REPORT_SCHEMA,
    report_schema as report_schema,
    validate_report as validate_report,
)
from quadnet.harness.report._read import (
    ReportError as ReportError,
    read_report as read_report,
)
from quadnet.harness.report._write import (
    write_json_atomic as write_json_atomic,
)
from quadnet.harness.report._format import (
    format_duration as format_duration,
    format_number as format_number,
    format_tolerance as format_tolerance,
)
from quadnet.harness.report._render import (
    REFERENCES as REFERENCES,
    TableStream as TableStream,
    format_report as format_report,
    results_latex as results_latex,
    results_markdown as results_markdown,
    results_text as results_text,
    summary_lines as summary_lines,
)
from quadnet.harness.report._compare import (
    DEFAULT_FACTOR as DEFAULT_FACTOR,
    DEFAULT_FLOOR as DEFAULT_FLOOR,
    Comparison as Comparison,
    compare_reports as compare_reports,
)
from quadnet.harness.report._render_compare import (
    format_comparison as format_comparison,
)

__all__ = [
    "COMPARE_SCHEMA",
    "DEFAULT_FACTOR",
    "DEFAULT_FLOOR",
    "REFERENCES",
    "REPORT_SCHEMA",
    "Comparison",
    "ReportError",
    "TableStream",
    "compare_reports",
    "format_comparison",
    "format_duration",
    "format_number",
    "format_report",
    "format_tolerance",
    "read_report",
    "report_schema",
    "results_latex",
    "results_markdown",
    "results_text",
    "summary_lines",
    "validate_report",
    "write_json_atomic",
]
