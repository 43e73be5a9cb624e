"""Sphinx configuration of the quadnet documentation.

Build (offline, zero warnings)::

    python -m sphinx -W --keep-going -n -b html docs docs/_build/html

At build time this configuration

* writes the API reference ``api/*.rst`` from ``quadnet.__all__`` (``_ext/quadnet_apigen.py``);
* copies ``../notebooks/*.ipynb`` to ``tutorials/`` (rendered with their stored outputs; a
  notebook committed without any output is executed);
* serves MathJax 3 from the build itself (``_static/mathjax``), never from a CDN;
* writes the titles of the search index and of the browser tab as plain Unicode text (a
  formula in a heading cannot be typeset there; ``_ext/quadnet_plaintitles.py``).

Nothing here touches the network.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# document the working tree, not whichever quadnet happens to be installed
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))

import quadnet  # noqa: E402

# -- project ---------------------------------------------------------------------------------
project = "quadnet"
author = "the quadnet developers"
copyright = "2026, the quadnet developers"
release = quadnet.__version__
if release.startswith("0.0.0"):  # a checkout that was never pip-installed: read pyproject
    import tomllib

    release = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
version = ".".join(release.split(".")[:2])

# -- extensions ------------------------------------------------------------------------------
extensions = [
    "myst_nb",  # Markdown (MyST) pages and Jupyter notebooks; brings myst-parser
    "sphinx_design",  # the {dropdown} of the exercises' written solutions (hidden by default)
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",  # Google sections ("Args:") first, then
    "numpydoc",  # NumPy sections ("Parameters" / "----------")
    "sphinx.ext.mathjax",
    "sphinx.ext.extlinks",
    "sphinx.ext.viewcode",
    "quadnet_apigen",  # docs/_ext: api/*.rst from __all__
    "quadnet_tutorials",  # docs/_ext: ../notebooks/*.ipynb -> tutorials/, notebook-toctree
    "quadnet_plaintitles",  # docs/_ext: formulas of titles as Unicode in search and <title>
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "_data",
    "_templates",
    "_ext",
    "**.ipynb_checkpoints",
    "jupyter_execute",
    "RESULTS.md",  # included by results.md
    "Thumbs.db",
    ".DS_Store",
]
nitpicky = True
# links written to RESULTS.md (the generated table) land on the page that includes it
quadnet_doc_aliases = {"RESULTS": "results"}

# -- MyST / notebooks ------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3  # `[text](page.md#a-heading)` links work
myst_dmath_double_inline = True
nb_merge_streams = True
quadnet_notebooks_dir = str(ROOT / "notebooks")  # copied to tutorials/ at build time


def _has_outputs(path: Path) -> bool:
    import json

    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    return any(c.get("outputs") for c in cells if c.get("cell_type") == "code")


# The notebooks are committed with their outputs (scripts/build_notebooks.py executes their
# notebooks/*.py sources):
# those are rendered as stored. Only a notebook committed with no output at all is executed
# here, so that every tutorial shows its results.
nb_execution_mode = "auto"
nb_execution_excludepatterns = [
    f"tutorials/{p.name}" for p in sorted((ROOT / "notebooks").glob("*.ipynb")) if _has_outputs(p)
]
nb_execution_timeout = 180
nb_execution_show_tb = True

# -- autodoc / autosummary / numpydoc --------------------------------------------------------
autosummary_generate = True  # replaced by the list of api pages in quadnet_apigen
autosummary_generate_overwrite = True
autosummary_imported_members = False
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "signature"
autodoc_typehints_format = "short"
autodoc_preserve_defaults = True
autodoc_inherit_docstrings = False  # a base class's docstring is not this method's
add_module_names = False
python_display_short_literal_types = True

# The docstrings use both styles: Google sections ("Args:", "Returns:", "Attributes:") and
# NumPy sections ("Parameters" over "----------"). napoleon (listed first, so it runs first)
# turns the Google sections into reST fields; numpydoc then renders the NumPy sections.
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_include_init_with_doc = False
napoleon_use_param = True
napoleon_use_rtype = True
napoleon_use_ivar = True  # "Attributes:" as fields: no second description of a member
napoleon_preprocess_types = False
napoleon_attr_annotations = True

numpydoc_show_class_members = False  # the class template lists the methods itself
numpydoc_show_inherited_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False
numpydoc_use_plots = False
numpydoc_validation_checks: set[str] = set()

# names from other projects in signatures: shown as text (the build is offline, so no
# intersphinx inventories; see extlinks below for hand-written links)
_EXTERNAL = (
    r"(np|numpy|scipy|sp|pymanopt|autograd|matplotlib|mpl|cvxpy|dask|distributed|pandas|tqdm"
    r"|typing|typing_extensions|collections|abc|pathlib|os|concurrent|multiprocessing"
    r"|numbers|types|enum|dataclasses|functools|io|json|logging|random|warnings|re)"
)
nitpick_ignore_regex = [
    (r"py:(class|obj|data|exc|func|meth|attr|mod)", _EXTERNAL + r"(\..*)?"),
    (r"py:(class|obj|data)", r"(NDArray|ArrayLike|DTypeLike|ndarray|Generator|"
     r"Callable|Iterable|Iterator|Sequence|Mapping|MutableMapping|Any|Literal|Optional|Union|"
     r"Path|PathLike|Self|TypeAlias|Protocol|Manifold|Problem|Axes|Figure|SeedSequence|"
     r"BitGenerator|LinearOperator|spmatrix|sparray|Client|Future)"),
    # a dataclass field typed ``dict[str, Any]`` is split at the comma in its signature
    (r"py:class", r"dict\[str"),
    # private names (``_helper``, ``quadnet._validation.vec``) have no page by design
    (r"py:.*", r"(.*\.)?_[A-Za-z0-9][^.]*(\..*)?"),
    # builtins written as types (``int``, ``float``, ``None``, ...)
    (r"py:(class|obj|data|exc)", r"(int|float|complex|bool|str|bytes|object|list|tuple|dict|"
     r"set|frozenset|type|None|NoneType|Ellipsis|slice|range|BaseException|Exception|"
     r"RuntimeWarning|UserWarning|DeprecationWarning|ValueError|TypeError|RuntimeError|"
     r"ArithmeticError|FloatingPointError|LinAlgError|Warning)"),
]

extlinks = {
    "numpy": ("https://numpy.org/doc/stable/reference/generated/%s.html", "%s"),
    "scipy": ("https://docs.scipy.org/doc/scipy/reference/generated/%s.html", "%s"),
    "pymanopt": ("https://pymanopt.org/docs/stable/%s", "pymanopt: %s"),
    "doi": ("https://doi.org/%s", "doi:%s"),
    "arxiv": ("https://arxiv.org/abs/%s", "arXiv:%s"),
}

# -- HTML ------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"quadnet {release}"
html_static_path = ["_static"]
html_css_files = ["quadnet.css"]
html_show_sourcelink = False
html_copy_source = False
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 5,
    "navbar_align": "left",
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_context = {"default_mode": "light"}


# -- offline MathJax -------------------------------------------------------------------------
def _mathjax_dir() -> Path:
    """The MathJax 3 tree shipped by the ``sphinx-mathjax-offline`` wheel (pip)."""
    for entry in map(Path, sys.path):
        cand = entry / "sphinx-mathjax-offline" / "static"
        if (cand / "mathjax" / "tex-chtml.js").is_file():
            return cand
    raise RuntimeError(
        "MathJax for the offline build is missing: python -m pip install '.[docs]' "
        "(it comes from the sphinx-mathjax-offline package)"
    )


# ``<static>/mathjax`` is copied to ``_build/html/_static/mathjax``
html_static_path.append(str(_mathjax_dir()))
mathjax_path = "mathjax/tex-chtml.js"  # relative to _static: served by the site itself


def setup(app):
    # MathJax on every page, not only on pages whose body has a formula: titles with math
    # also appear in the navigation and in the previous/next links of other pages
    app.set_html_assets_policy("always")
