"""``quadnet new-check NAME [--dir DIR]``: a commented template for a check of your own.

It writes two files into ``DIR`` (default: the current folder):

* ``NAME_UNDERSCORED.py``: a check registered as ``NAME`` with one theorem row and one
  figure (a drawer registered with :func:`quadnet.harness.figure`, drawn with
  :meth:`quadnet.harness.CheckContext.draw`), using the public API only;
* ``test_NAME_UNDERSCORED.py``: a pytest file that runs the check in quick mode through the
  public API and through ``quadnet verify --checks``, and redraws its figure from the report
  byte for byte.

``NAME`` must look like the built-in names: lower-case letters and digits, words separated by
single ``-`` or ``_`` (``my-identity``); it must not be the name of a built-in check, and its
module name must not hide an installed module. Existing files are never overwritten.
"""

from __future__ import annotations

import importlib.util
import keyword
import re
import sys
from pathlib import Path

__all__ = ["NAME_PATTERN", "check_name", "write_template"]

#: What a check name looks like (``my-identity``, ``mp_edge``, ``wigner2``).
NAME_PATTERN = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")

_CHECK = '''\
"""{name}: {claim}

A quadnet check of my own (written by `quadnet new-check {name}`). Run it with

    quadnet verify --checks {module}.py {name} --quick          # the small configuration
    quadnet verify --checks {module}.py {name} --json out.json  # paper scale, with figures
    quadnet figures --from out.json                             # redraw, byte for byte
    quadnet compare old.json out.json                           # which rows moved

and its test with `python -m pytest test_{module}.py`. Everything it uses is public:
`quadnet.harness.register`, `CheckResult`, `CheckContext` and `figure`.

Replace the example claim (tr(U U^T) = ||U||_F^2, an identity that holds up to rounding)
by yours: keep one `res.add(...)` per claim, with its tolerance and its source by name.
"""

import numpy as np

from quadnet.harness import CheckContext, CheckResult, figure, register

NAME = "{name}"
CLAIM = "{claim}"
# Cite the claim by name (authors, year, title); "quadnet target" for a target of your own.
SOURCE = "a textbook identity (replace by the paper you verify)"
FIGURE = "{name}-errors"  # figure stems are global: keep the check's name in front


@figure(FIGURE)
def draw_errors(data: dict):
    """Draw the figure from the JSON data stored in the report (nothing is recomputed:
    `quadnet figures --from report.json` calls this with the same data, same bytes)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3.4, 2.4))  # single-column width, in inches
    ax.semilogy(data["d"], np.maximum(data["error"], 1e-18), "o-", label="measured")
    ax.axhline(data["tolerance"], color="k", ls="--", lw=0.8, label="tolerance")
    ax.set_xlabel("dimension d")
    ax.set_ylabel("relative error")
    ax.legend()
    fig.tight_layout()
    return fig


@register(NAME, CLAIM)
def run(ctx: CheckContext, res: CheckResult) -> None:
    """The check: measure, add one row per claim to ``res``, store the figure's data.

    ``register`` makes ``res``, the check's result, with the name and the claim given
    there; ``quadnet verify`` reports what ``run`` adds to it."""
    sizes = (4, 8, 16) if ctx.quick else (4, 8, 16, 32, 64, 128)  # --quick: seconds
    tolerance = 1e-13  # float64 rounding of a sum of d r products stays far below this
    errors = []
    for d in ctx.progress(sizes, desc=NAME):
        # every random draw comes from ctx.rng(...): the same --seed gives the same bits
        U = ctx.rng("U", d).standard_normal((d, 2))
        frob2 = np.sum(U * U)
        errors.append(abs(np.trace(U @ U.T) - frob2) / frob2)
    res.add(f"max relative error of tr(U U^T) = ||U||_F^2 over d = {{sizes[0]}}..{{sizes[-1]}}",
            max(errors), tolerance, kind="theorem", source=SOURCE, paper="exact")
    # a measurement without a claim is REPORTED (it never makes the check fail)
    res.report("largest dimension", sizes[-1], source=SOURCE)
    ctx.draw(res, FIGURE, {{"d": list(sizes), "error": errors, "tolerance": tolerance}})
'''

_TEST = '''\
"""Tests of the check {name} (written by `quadnet new-check {name}`): quick mode, through
the public API and through the `quadnet` command. Run: python -m pytest test_{module}.py"""

import subprocess
import sys
from pathlib import Path

from quadnet.harness import CheckContext, load_checks, run_check
from quadnet.harness.compare import read_report

CHECK_FILE = Path(__file__).with_name("{module}.py")


def test_quick_run_passes_through_the_api(tmp_path):
    assert "{name}" in load_checks(CHECK_FILE)
    res = run_check("{name}", CheckContext(seed=0, quick=True, figures_dir=tmp_path))
    assert res.status == "PASS", [(r.claim, r.measured, r.status) for r in res.rows]
    assert (tmp_path / "{name}-errors.png").is_file()


def test_same_seed_same_numbers():
    load_checks(CHECK_FILE)
    a = run_check("{name}", CheckContext(seed=1, quick=True))
    b = run_check("{name}", CheckContext(seed=1, quick=True))
    assert [r.measured for r in a.rows] == [r.measured for r in b.rows]


def quadnet(*args, cwd):
    return subprocess.run([sys.executable, "-m", "quadnet", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def test_quick_run_passes_through_the_command(tmp_path):
    out = tmp_path / "out.json"
    proc = quadnet("verify", "--checks", str(CHECK_FILE), "{name}", "--quick", "--json",
                   str(out), "--figures", str(tmp_path / "figs"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = read_report(out)  # checks the report against its schema, too
    (check,) = report["checks"]
    assert check["name"] == "{name}" and check["status"] == "PASS"
    assert check["origin"]["kind"] == "file"
    # the figure is redrawn from the report alone, byte for byte
    proc = quadnet("figures", "--from", str(out), "--out", str(tmp_path / "again"),
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for suffix in ("png", "pdf"):
        first = (tmp_path / "figs" / f"{name}-errors.{{suffix}}").read_bytes()
        assert (tmp_path / "again" / f"{name}-errors.{{suffix}}").read_bytes() == first
'''


def check_name(name: str) -> str:
    """``name`` if it can name a new check, else ``ValueError`` saying why.

    Parameters
    ----------
    name : str
        The proposed check name.

    Returns
    -------
    str
        The module name of its file (``-`` replaced by ``_``).

    Raises
    ------
    ValueError
        For a name that is not of the form ``my-check`` / ``my_check``, that is a built-in
        check's, or whose module name is a Python keyword or an installed module's.

    Examples
    --------
    >>> check_name("my-identity")
    'my_identity'
    >>> check_name("My Check")
    Traceback (most recent call last):
    ...
    ValueError: NAME must be lower-case letters and digits, words separated by single '-' or '_' (e.g. my-identity), got 'My Check'
    """
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise ValueError("NAME must be lower-case letters and digits, words separated by "
                         f"single '-' or '_' (e.g. my-identity), got {name!r}")
    module = name.replace("-", "_")
    if keyword.iskeyword(module):
        raise ValueError(f"NAME {name!r} is a Python keyword; choose another name")
    from quadnet.harness import checks

    if name in checks.available():
        raise ValueError(f"NAME {name!r} is already the name of a check "
                         f"({checks.get(name).origin.get('kind', '?')}); choose another name")
    found = importlib.util.find_spec(module) if module not in sys.builtin_module_names else True
    if found:
        where = getattr(found, "origin", None) or "built into Python"
        raise ValueError(f"NAME {name!r}: its module name {module!r} would hide the installed "
                         f"module {where}; choose another name")
    return module


def write_template(name: str, folder: str | Path = ".",
                   claim: str = "tr(U U^T) equals the squared Frobenius norm of U"
                   ) -> list[Path]:
    """Write the check ``name`` and its test into ``folder``; return the two paths.

    Parameters
    ----------
    name : str
        The check's name (see :func:`check_name`).
    folder : str or pathlib.Path, optional
        Created if needed (default: the current folder).
    claim : str, optional
        The check's one-line claim.

    Returns
    -------
    list of pathlib.Path
        The check module and its pytest file.

    Raises
    ------
    ValueError
        For a bad ``name``, or when one of the files exists already (nothing is written).

    Examples
    --------
    >>> import tempfile
    >>> paths = write_template("demo-template", tempfile.mkdtemp())
    >>> [p.name for p in paths]
    ['demo_template.py', 'test_demo_template.py']
    """
    module = check_name(name)
    if not isinstance(claim, str) or not claim.strip() or '"' in claim or "\\" in claim:
        raise ValueError(f"claim must be one line of text without quotes or backslashes, "
                         f"got {claim!r}")
    folder = Path(folder)
    paths = [folder / f"{module}.py", folder / f"test_{module}.py"]
    existing = [str(p) for p in paths if p.exists()]
    if existing:
        raise ValueError(f"{' and '.join(existing)} already exist{'s' if len(existing) == 1 else ''}"
                         "; nothing was written (remove the file(s) or choose another NAME "
                         "or --dir)")
    folder.mkdir(parents=True, exist_ok=True)
    fields = {"name": name, "module": module, "claim": claim.strip()}
    paths[0].write_text(_CHECK.format(**fields), encoding="utf-8")
    paths[1].write_text(_TEST.format(**fields), encoding="utf-8")
    return paths
