"""The notebooks of ``notebooks/`` as the documentation's tutorials.

* At ``builder-inited`` every ``<root>/notebooks/*.ipynb`` is copied to ``docs/tutorials/``
  (Sphinx reads sources below its source folder only); copies of notebooks that no longer
  exist are removed. The copies are build products (``.gitignore``). A notebook links the
  theory as ``[§1.5](../docs/theory/quotient.md#15-horizontal-lifts)``, the path that works
  beside the repository's ``notebooks/`` folder; in the copy, one folder down from the docs
  root, the link becomes ``../theory/quotient.md#...`` (:func:`docs_links`), which Sphinx
  resolves and checks (``-n -W``: a missing page or heading fails the build).
* The ``notebook-toctree`` directive is a toctree of the notebooks of its folder: the names
  listed in it first, in that order, then every other notebook alphabetically. A listed name
  without a notebook is left out, so adding, renaming or removing a notebook never breaks the
  build.
"""

from __future__ import annotations

from pathlib import Path

from docutils.statemachine import StringList
from sphinx.directives.other import TocTree


def docs_links(text: str) -> str:
    """``](../docs/PAGE)`` -> ``](../PAGE)``: a notebook's links as seen from ``docs/tutorials/``."""
    return text.replace("](../docs/", "](../")


def copy_notebooks(app) -> None:
    src = Path(app.config.quadnet_notebooks_dir)
    dst = Path(app.srcdir) / "tutorials"
    dst.mkdir(exist_ok=True)
    wanted = {p.name: p for p in sorted(src.glob("*.ipynb"))}
    for name, path in wanted.items():
        target = dst / name
        text = docs_links(path.read_text(encoding="utf-8"))
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")  # unchanged copies keep their mtime
    for stale in dst.glob("*.ipynb"):
        if stale.name not in wanted:
            stale.unlink()


class NotebookToctree(TocTree):
    """``toctree`` over the notebooks next to the current page (listed ones first)."""

    def run(self):
        env = self.state.document.settings.env
        folder = env.docname.rpartition("/")[0]
        prefix = f"{folder}/" if folder else ""
        present = sorted(
            doc[len(prefix):] for doc in env.found_docs
            if doc.startswith(prefix) and "/" not in doc[len(prefix):]
            and Path(env.doc2path(doc)).suffix == ".ipynb"
        )
        listed = [line.strip() for line in self.content if line.strip()]
        order = [n for n in listed if n in present] + [n for n in present if n not in listed]
        source = self.content.source(0) if self.content else env.docname
        self.content = StringList(order, source=source)
        return super().run()


def setup(app):
    app.add_config_value("quadnet_notebooks_dir", "", "env")
    app.connect("builder-inited", copy_notebooks, priority=50)
    app.add_directive("notebook-toctree", NotebookToctree)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
