"""The layout: layer contracts (import-linter), private imports, the public surface, aliases,
and the test tree, which mirrors the package."""

from __future__ import annotations

import ast
import importlib
import pathlib
import re
import subprocess
import sys
import warnings

import pytest

import quadnet

ROOT = pathlib.Path(__file__).resolve().parents[1]
PKG = ROOT / "quadnet"


def test_import_linter_contracts_are_kept():
    """The layering written in pyproject.toml ([tool.importlinter]) holds for every import,
    including imports inside functions."""
    code = "from importlinter.cli import lint_imports_command as c; c(['--no-cache'])"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True)
    assert "0 broken" in proc.stdout, proc.stdout + proc.stderr
    assert proc.returncode == 0


def _subpackage(path: pathlib.Path) -> str:
    rel = path.relative_to(PKG).parts
    return rel[0] if len(rel) > 1 else ""


def test_private_names_are_imported_only_inside_their_subpackage():
    offenders = []
    for path in PKG.rglob("*.py"):
        tree = ast.parse(path.read_text())
        here = _subpackage(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                    and node.module.startswith("quadnet."):
                parts = node.module.split(".")
                there = parts[1] if len(parts) > 2 else ""
                if there == here or parts[1] in ("_linalg", "_validation"):
                    continue
                for alias in node.names:
                    if alias.name.startswith("_") or any(p.startswith("_") for p in parts[2:]):
                        offenders.append(f"{path.relative_to(ROOT)}: {node.module}.{alias.name}")
    assert offenders == []


def test_top_level_is_a_short_explicit_list():
    names = [n for n in quadnet.__all__ if not isinstance(getattr(quadnet, n), type(quadnet))]
    assert 30 <= len(names) <= 50
    assert len(set(quadnet.__all__)) == len(quadnet.__all__)
    src = (PKG / "__init__.py").read_text()
    assert "import *" not in src
    for n in quadnet.__all__:
        assert hasattr(quadnet, n)


@pytest.mark.parametrize("pkg", ["geometry", "curvature", "sensing", "commuting", "features",
                                 "harness"])
def test_subpackages_reexport_explicitly(pkg):
    mod = importlib.import_module(f"quadnet.{pkg}")
    assert "import *" not in pathlib.Path(mod.__file__).read_text()
    for n in mod.__all__:
        assert hasattr(mod, n), (pkg, n)


BINDING_TOP = ["PSDQuotient", "check_manifold", "AutogradLoss", "FrobeniusLoss",
               "pymanopt_problem", "gradient_descent", "gradient_flow", "congruence_step",
               "effective_hessian", "effective_spectrum", "population_effective_hessian",
               "GaussianSensing", "recover", "sufficient_sample_size",
               "population_normal_operator", "inverse_population_normal_operator",
               "CommutingSensing", "bregman_projection", "min_trace_solution",
               "RecursiveFeatureMachine"]


def test_stable_names_resolve_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in BINDING_TOP:
            assert n in quadnet.__all__
            getattr(quadnet, n)
        fact = importlib.import_module("quadnet.fact")
        for n in ["QuadraticNet", "DeepLinearNet", "fact_matrix", "bfact_matrix", "agop", "train"]:
            assert getattr(fact, n) is getattr(quadnet.features, n)
        rfm = importlib.import_module("quadnet.rfm")
        for n in ["RecursiveFeatureMachine", "modular_arithmetic", "sparse_parity"]:
            assert getattr(rfm, n) is getattr(quadnet.features, n)
        diag = importlib.import_module("quadnet.diagnostics")
        assert diag.effective_rank is quadnet.features.effective_rank


def test_old_names_warn_and_resolve_to_the_new_objects():
    with pytest.warns(DeprecationWarning, match="quadnet.geometry"):
        f = quadnet.lyapunov_skew
    assert f is quadnet.geometry.lyapunov_skew
    with pytest.warns(DeprecationWarning, match="quadnet.sensing.recovery"):
        mod = importlib.import_module("quadnet.recovery")
    assert mod.recover is quadnet.recover
    with pytest.raises(AttributeError, match="no attribute"):
        quadnet.not_a_name  # noqa: B018


def test_architecture_page_draws_the_checked_layers():
    """docs/ARCHITECTURE.md's layer block is the import-linter contract, line for line."""
    import tomllib

    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contract = next(c for c in conf["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    page = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    block = page.split("```text\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert [line.strip() for line in block] == contract["layers"]
    for layer in contract["layers"]:
        for pkg in layer.split(" | "):
            assert f"`{pkg}`" in page, pkg


def test_every_old_name_and_module_path_still_resolves():
    """Each quadnet 0.1 top-level name and module path resolves (with its DeprecationWarning)."""
    from quadnet import _aliases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name in _aliases.TOP_LEVEL:
            assert getattr(quadnet, name) is not None, name
        for path in _aliases.MODULES:
            mod = importlib.import_module(path)
            assert mod.__all__ and all(hasattr(mod, n) for n in mod.__all__), path


#: test directories that are not a subpackage of quadnet: the cross-cutting argument checks of
#: every public callable, and the statements of the documentation
TEST_DIRS_OUTSIDE_THE_PACKAGE = {"validation", "docs"}
#: words that name how a test file came about rather than what it tests
CAMPAIGN_WORDS = {"parts", "findings", "campaign", "campaigns", "round", "batch", "misc",
                  "extra", "more", "new", "fixes", "followup", "review", "todo", "wip"}


def test_test_tree_mirrors_the_package():
    """Every directory of tests/ is a subpackage of quadnet (or ``validation``, ``docs``), and
    every top-level test file is named after a module of quadnet (or the architecture)."""
    tests = ROOT / "tests"
    subpackages = {p.name for p in PKG.iterdir() if (p / "__init__.py").is_file()}
    dirs = {p.name for p in tests.iterdir() if p.is_dir() and p.name != "__pycache__"
            and not p.name.startswith(".")}
    assert dirs - subpackages - TEST_DIRS_OUTSIDE_THE_PACKAGE == set()
    modules = {p.stem.lstrip("_") for p in PKG.glob("*.py")} | {"architecture"}
    top = {p.stem.removeprefix("test_") for p in tests.glob("test_*.py")}
    assert top - modules == set(), "top-level test files must be named after a quadnet module"


def test_test_files_are_named_by_their_subject():
    """No ``_parts``, ``_findings``, ``_campaign``, ``..._boundary`` names: a test file says
    what it tests."""
    offenders = []
    for path in (ROOT / "tests").rglob("test_*.py"):
        words = path.stem.removeprefix("test_").split("_")
        if CAMPAIGN_WORDS & set(words) or words[-1] == "boundary" or re.search(r"\d+$",
                                                                                path.stem):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
