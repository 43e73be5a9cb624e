"""Every teaching notebook in notebooks/ executes top to bottom (nbclient), within its timeout.

The notebooks call the public quadnet API only, so this also tests that the API they teach
still exists. Each notebook must run in well under a minute (all together < 3 minutes).
"""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOK_DIR = Path(__file__).resolve().parents[2] / "notebooks"
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


# ---------------------------------------------------------------------------------------------
# the course: every notebook says what it assumes and teaches and links the theory it uses;
# each geometry unit has exercises whose solutions run (and assert) with the notebook

import re  # noqa: E402

DOCS = NOTEBOOK_DIR.parent / "docs"
#: the three units of the geometry track that carry exercises with executed solutions
GEOMETRY_UNITS = ("quotient_geometry", "lifts_geodesics_and_gradients",
                  "curvature_of_the_quotient")
_LINK = re.compile(r"\]\((\.\./docs/[^)#\s]+)(?:#([^)\s]+))?\)")


def _slug(heading: str) -> str:
    """MyST's anchor of a heading: math dropped (Sphinx's anchor has no formula text), lower
    case, punctuation dropped, spaces -> '-'."""
    text = re.sub(r"\$[^$]*\$", "", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    heads = re.findall(r"^#{1,3} (.+)$", page.read_text(encoding="utf-8"), flags=re.M)
    return {_slug(h) for h in heads}


def _markdown(path: Path) -> list[str]:
    return [c.source for c in nbformat.read(path, as_version=4).cells
            if c.cell_type == "markdown"]


def theory_links(path: Path) -> list[tuple[str, str | None]]:
    """The ``(../docs/PAGE.md, anchor)`` links of a notebook's text cells."""
    return [m.groups() for text in _markdown(path) for m in _LINK.finditer(text)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_opens_with_what_it_assumes_teaches_and_uses(path: Path):
    first = _markdown(path)[0]
    labels = ["**Assumes.**", "**Learning outcomes.**", "**Theory.**"]
    where = [first.find(label) for label in labels]
    assert all(i >= 0 for i in where), (
        f"{path.stem}: the first text cell lacks {[lab for lab, i in zip(labels, where) if i < 0]}")
    assert where == sorted(where), f"{path.stem}: the labels are out of order"
    outcomes = first[where[1]:where[2]]
    assert len(re.findall(r"^\s*[-*] ", outcomes, flags=re.M)) >= 3, (
        f"{path.stem}: fewer than three learning outcomes")
    assert _LINK.search(first[where[2]:]), f"{path.stem}: **Theory.** links no theory section"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_theory_links_name_existing_sections(path: Path):
    links = theory_links(path)
    assert links, f"{path.stem} links no page of the docs"
    for target, anchor in links:
        page = (NOTEBOOK_DIR / target).resolve()
        assert page.is_file(), f"{path.stem}: link to a missing page {target}"
        if anchor:
            assert anchor in _anchors(page), f"{path.stem}: {target} has no heading #{anchor}"


def test_every_theory_page_links_the_notebooks_that_use_it():
    users: dict[Path, set[str]] = {}
    for path in NOTEBOOKS:
        for target, _ in theory_links(path):
            page = (NOTEBOOK_DIR / target).resolve()
            if page.parent == DOCS / "theory":
                users.setdefault(page, set()).add(path.stem)
    assert users, "no notebook links a theory page"
    for page, names in sorted(users.items()):
        text = page.read_text(encoding="utf-8")
        missing = sorted(n for n in names if f"../tutorials/{n}.ipynb" not in text)
        assert not missing, f"docs/theory/{page.name} does not link back to {missing}"


@pytest.mark.parametrize("name", GEOMETRY_UNITS)
def test_geometry_unit_has_three_exercises_with_asserted_hidden_solutions(name: str):
    path = NOTEBOOK_DIR / f"{name}.ipynb"
    assert path.exists(), f"the geometry unit {name} has no notebook"
    cells = nbformat.read(path, as_version=4).cells
    numbers = []
    for i, cell in enumerate(cells):
        m = re.match(r"### Exercise (\d+):", cell.source) if cell.cell_type == "markdown" else None
        if not m:
            continue
        numbers.append(int(m.group(1)))
        # the solution: optional dropdown text, then a hidden code cell that asserts
        j = i + 1
        while j < len(cells) and cells[j].cell_type == "markdown" and "{dropdown}" in cells[j].source:
            j += 1
        assert j < len(cells) and cells[j].cell_type == "code", (
            f"{name}: exercise {m.group(1)} is not followed by its solution code")
        tags = set(cells[j].metadata.get("tags", []))
        assert {"solution", "hide-cell"} <= tags, (
            f"{name}: the solution of exercise {m.group(1)} is not tagged solution, hide-cell")
        assert re.search(r"^\s*assert ", cells[j].source, flags=re.M), (
            f"{name}: the solution of exercise {m.group(1)} asserts nothing")
    assert len(numbers) >= 3, f"{name} has {len(numbers)} exercises, the course asks for 3"
    assert numbers == list(range(1, len(numbers) + 1)), f"{name}: exercises numbered {numbers}"


def test_a_source_that_fails_to_execute_is_named_with_its_cell(tmp_path, monkeypatch):
    pytest.importorskip("jupytext")
    (tmp_path / "broken.py").write_text("# %% [markdown]\n# # A title\n\n# %%\nx = 1\n\n"
                                        "# %%\nraise ValueError('deliberately')\n")
    monkeypatch.setattr(build_notebooks, "NOTEBOOK_DIR", tmp_path)
    with pytest.raises(RuntimeError, match=r"notebook broken: cell 2 failed to execute"):
        build_notebooks.build("broken", timeout=60)
    assert not (tmp_path / "broken.ipynb").exists()


def test_a_source_without_its_notebook_is_named(tmp_path, monkeypatch):
    pytest.importorskip("jupytext")
    (tmp_path / "lonely.py").write_text("# %% [markdown]\n# # A title\n")
    monkeypatch.setattr(build_notebooks, "NOTEBOOK_DIR", tmp_path)
    assert build_notebooks.mismatch("lonely") == (
        "notebook lonely: lonely.ipynb is missing (build it from lonely.py)")


def test_readme_counts_the_exercises_of_each_geometry_unit():
    words = {"three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
    readme = (NOTEBOOK_DIR.parent / "README.md").read_text(encoding="utf-8")
    m = re.search(r"The first three\s+carry (\w+), (\w+) and (\w+) exercises", readme)
    assert m, "the README no longer counts the exercises of the geometry units"
    stated = [words[w] for w in m.groups()]
    counted = [sum(bool(re.match(r"### Exercise \d+:", c.source)) for c in
                   nbformat.read(NOTEBOOK_DIR / f"{n}.ipynb", as_version=4).cells
                   if c.cell_type == "markdown") for n in GEOMETRY_UNITS]
    assert stated == counted, f"README says {stated}, the notebooks have {counted}"
