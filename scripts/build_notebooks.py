"""Build the executed teaching notebooks ``notebooks/NAME.ipynb`` from their text sources.

Each notebook's source is ``notebooks/NAME.py`` in jupytext's ``py:percent`` format (``# %%``
starts a code cell, ``# %% [markdown]`` a Markdown cell): the form to edit and review. This
script reads a source with jupytext, executes it with nbclient in ``notebooks/`` and writes the
``.ipynb`` with its outputs, the per-cell execution timestamps stripped and the cells numbered
``cell-00``, ``cell-01``, … (so a rebuild of an unchanged source changes no cell id or timestamp).

Usage::

    python scripts/build_notebooks.py                 # every notebook
    python scripts/build_notebooks.py quotient_geometry
    python scripts/build_notebooks.py --check         # do the committed cells match the sources?

``--check`` executes nothing; it exits 1 naming the first notebook and cell whose committed
``.ipynb`` differs from its source. ``tests/docs/test_notebooks.py`` runs the same comparison.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"

KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


def sources() -> dict[str, Path]:
    return {p.stem: p for p in sorted(NOTEBOOK_DIR.glob("*.py"))}


def read_source(path: Path):
    """The notebook of a ``py:percent`` source (cells only; no outputs)."""
    import jupytext

    try:
        nb = jupytext.read(path, fmt="py:percent")
    except Exception as exc:  # noqa: BLE001 - name the file whatever jupytext raised
        raise ValueError(f"notebook source {path.name} cannot be read as py:percent: {exc}") \
            from None
    nb.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}}
    return nb


def mismatch(name: str) -> str | None:
    """``None`` when ``notebooks/NAME.ipynb`` has exactly the cells of ``notebooks/NAME.py``
    (type, text and tags: a solution cell's ``hide-cell`` is part of the source), else a sentence naming the notebook and the first differing cell."""
    import nbformat

    src = read_source(NOTEBOOK_DIR / f"{name}.py")
    path = NOTEBOOK_DIR / f"{name}.ipynb"
    if not path.exists():
        return f"notebook {name}: {path.name} is missing (build it from {name}.py)"
    nb = nbformat.read(path, as_version=4)
    a = [(c.cell_type, c.source, list(c.metadata.get("tags", []))) for c in nb.cells]
    b = [(c.cell_type, c.source, list(c.metadata.get("tags", []))) for c in src.cells]
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return (f"notebook {name}: cell {i} ({x[0]}) of {name}.ipynb differs from its source "
                    f"{name}.py (first line there: {y[1].splitlines()[0] if y[1] else ''!r})")
    if len(a) != len(b):
        return f"notebook {name}: {name}.ipynb has {len(a)} cells, its source {len(b)}"
    return None


def build(name: str, timeout: int = 120) -> Path:
    """Execute ``notebooks/NAME.py`` and write ``notebooks/NAME.ipynb``."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = read_source(NOTEBOOK_DIR / f"{name}.py")
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    try:
        client.execute()
    except CellExecutionError as exc:
        idx = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code" and any(
            o.get("output_type") == "error" for o in c.get("outputs", []))), "?")
        raise RuntimeError(f"notebook {name}: cell {idx} failed to execute:\n{exc}") from None
    for i, cell in enumerate(nb.cells):  # timestamps and random ids would make every rebuild
        cell.metadata.pop("execution", None)  # a diff: strip the one, number the other
        cell.id = f"cell-{i:02d}"
    nbformat.validate(nb)
    path = NOTEBOOK_DIR / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", help="notebooks (default: every notebooks/*.py)")
    p.add_argument("--check", action="store_true",
                   help="compare the committed .ipynb cells with the sources; execute nothing")
    args = p.parse_args(argv)
    known = sources()
    for name in args.names or sorted(known):
        if name not in known:
            print(f"unknown notebook {name!r}; known: {sorted(known)}", file=sys.stderr)
            return 2
        if args.check:
            msg = mismatch(name)
            if msg:
                print(msg, file=sys.stderr)
                return 1
            print(f"{name}: matches its source")
        else:
            try:
                print(build(name))
            except (RuntimeError, ValueError) as exc:
                print(exc, file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
