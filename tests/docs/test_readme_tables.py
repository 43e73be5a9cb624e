"""The README's headline results table cannot drift from the generated ``docs/RESULTS.md``.

Every row of a README table whose header is the report's header (check, claim, kind, source,
reference value, measured, tolerance, status) must be, byte for byte, the row of
``docs/RESULTS.md`` with the same check and claim, and have as many cells as the header.
Every pipe table of the README and of the docs pages has as many cells in each row as in its
header.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEADER = "| check | claim | kind | source | reference value | measured | tolerance | status |"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def _tables(text: str) -> list[list[str]]:
    """Rows (header and separator dropped) of every table whose header is ``HEADER``."""
    out, rows, inside = [], None, False
    for line in text.splitlines():
        if line.strip() == HEADER:
            rows, inside = [], True
            out.append(rows)
            continue
        if inside:
            if not line.startswith("|"):
                inside = False
            elif not line.startswith("|---"):
                rows.append(line)
    return out


def test_readme_headline_rows_equal_their_results_rows():
    readme = (ROOT / "README.md").read_text()
    results = (ROOT / "docs" / "RESULTS.md").read_text()
    ref = {}
    for table in _tables(results):
        for line in table:
            c = _cells(line)
            ref[(c[0], c[1])] = line
    tables = _tables(readme)
    assert tables, "the README has no headline results table"
    n_head = len(_cells(HEADER))
    checked = 0
    for table in tables:
        for line in table:
            c = _cells(line)
            assert len(c) == n_head, f"README row has {len(c)} cells, header {n_head}: {line}"
            assert (c[0], c[1]) in ref, f"README row not in docs/RESULTS.md: {line}"
            assert line == ref[(c[0], c[1])], f"README row differs from docs/RESULTS.md: {line}"
            checked += 1
    assert checked >= 10


def test_results_rows_have_as_many_cells_as_the_header():
    results = (ROOT / "docs" / "RESULTS.md").read_text()
    for table in _tables(results):
        for line in table:
            assert len(_cells(line)) == len(_cells(HEADER)), line


def test_the_readme_test_command_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = next(line.strip() for line in readme.splitlines()
                   if line.startswith('python -m pip install -e ".[test]"'))
    assert command in ci.splitlines(), f"README: {command!r}; .ci/run does not run it"
    assert "pytest-xdist" in (ROOT / "pyproject.toml").read_text() or "-n " not in command


def _markdown_tables(text: str):
    """``(line number, header cells, row cells)`` for every row of every pipe table outside
    code fences: cells split on unescaped ``|``, as GitHub and MyST split them (a ``|``
    inside ``$...$`` or backticks splits too, so it must be written ``\\|`` or ``\\lvert``)."""
    fence, header = None, None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            marker = stripped[:3]
            fence = None if fence == marker else (fence or marker)
            header = None
            continue
        if fence or not stripped.startswith("|"):
            header = None
            continue
        cells = len(_cells(stripped))
        if header is None:
            header = cells
        else:  # the delimiter row too: with another count there is no table at all
            yield number, header, cells


def test_every_markdown_table_row_has_as_many_cells_as_its_header():
    """A row with a cell too many shifts its numbers under the wrong column; a header with a
    split formula makes the whole table render as a paragraph of pipes."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    files = [f for f in files if "_build" not in f.parts]
    bad = [f"{f.relative_to(ROOT)}:{n}: {cells} cells under a {header}-cell header"
           for f in files for n, header, cells in _markdown_tables(f.read_text("utf-8"))
           if cells != header]
    assert not bad, "\n".join(bad)
    rows = list(_markdown_tables("| a | b |\n|---|---|\n| 1 | 2 | 3 |\n| $x|y$ | 2 |\n"))
    assert rows == [(2, 2, 2), (3, 2, 3), (4, 2, 3)]
