"""Turn a ``quadnet verify --json FILE`` report into the README's Markdown results table.

Usage: ``python scripts/make_results_table.py REPORT.json [--out TABLE.md]``
(the same as ``quadnet report REPORT.json [--out TABLE.md]``).
"""

from __future__ import annotations

import sys

from quadnet.harness.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["report", *sys.argv[1:]]))
