"""Every teaching notebook in notebooks/ executes top to bottom (nbclient), within its timeout.

The notebooks call the public quadnet API only, so this also tests that the API they teach
still exists. Each notebook must run in well under a minute (all together < 3 minutes).
"""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
#: seconds per cell; a whole notebook is meant to take < 60 s on the 2-core machine
CELL_TIMEOUT = 120


def test_there_are_teaching_notebooks():
    assert len(NOTEBOOKS) >= 1, f"no notebooks in {NOTEBOOK_DIR}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path: Path):
    nb = nbformat.read(path, as_version=4)
    assert any(c.cell_type == "markdown" for c in nb.cells), "a teaching notebook explains"
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    client.execute()  # raises CellExecutionError naming the failing cell
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
