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
    # a DeprecationWarning or any quadnet warning raised while the notebook runs is an error
    nb.cells.insert(0, nbformat.v4.new_code_cell(
        "import warnings\nfrom quadnet.exceptions import QuadnetWarning\n"
        "warnings.simplefilter('error', DeprecationWarning)\n"
        "warnings.simplefilter('error', QuadnetWarning)"))
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    client.execute()  # raises CellExecutionError naming the failing cell
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    warned = [o.get("text", "") for c in nb.cells if c.cell_type == "code"
              for o in c.get("outputs", []) if o.get("name") == "stderr" and "Warning" in
              o.get("text", "")]
    assert not warned, f"{path.name} printed warnings: {warned[:2]}"


# ---------------------------------------------------------------------------------------------
# text sources (jupytext py:percent): every committed notebook is its source, executed

import importlib.util  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "build_notebooks", NOTEBOOK_DIR.parent / "scripts" / "build_notebooks.py")
build_notebooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_notebooks)


def test_every_notebook_has_a_text_source_and_every_source_a_notebook():
    stems = {p.stem for p in NOTEBOOKS}
    assert stems == set(build_notebooks.sources()), (
        f"without a source: {sorted(stems - set(build_notebooks.sources()))}; "
        f"without a notebook: {sorted(set(build_notebooks.sources()) - stems)}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_notebook_matches_its_source(path: Path):
    pytest.importorskip("jupytext")
    assert build_notebooks.mismatch(path.stem) is None


def test_a_changed_source_is_named_with_its_cell(tmp_path, monkeypatch):
    pytest.importorskip("jupytext")
    name = NOTEBOOKS[0].stem
    (tmp_path / f"{name}.ipynb").write_bytes(NOTEBOOKS[0].read_bytes())
    text = (NOTEBOOK_DIR / f"{name}.py").read_text().splitlines(True)
    first_code = next(i for i, line in enumerate(text) if line.rstrip() == "# %%")
    text.insert(first_code + 1, "x_changed = 1\n")
    (tmp_path / f"{name}.py").write_text("".join(text))
    monkeypatch.setattr(build_notebooks, "NOTEBOOK_DIR", tmp_path)
    msg = build_notebooks.mismatch(name)
    assert msg is not None and msg.startswith(f"notebook {name}: cell ")
    assert "differs from its source" in msg and "x_changed = 1" in msg


def test_notebooks_readme_orders_every_notebook_as_the_docs_do():
    import re
    readme = (NOTEBOOK_DIR / "README.md").read_text()
    listed = re.findall(r"^\d+\. `([a-z_]+)`", readme, flags=re.M)
    index = (NOTEBOOK_DIR.parent / "docs" / "tutorials" / "index.md").read_text()
    tree = index.split("{notebook-toctree}", 1)[1].split("```", 1)[0]
    toctree = [line.strip() for line in tree.splitlines()
               if line.strip() and not line.strip().startswith(":")]
    assert listed == toctree
    assert sorted(listed) == sorted(p.stem for p in NOTEBOOKS)
