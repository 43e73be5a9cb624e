"""Checks of one's own: the public API, discovery (files, modules, entry points), the report
schema, ``quadnet compare`` and ``quadnet new-check``.

Commands that must behave as in a fresh shell (the snippet of the README, entry points, the
generated template, redrawing from a report) run in subprocesses; the others call
``quadnet.harness.cli.main`` in this process and forget every loaded source afterwards.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import quadnet.harness as harness
from quadnet.harness import compare, discovery
from quadnet.harness.checks import _base
from quadnet.harness.cli import main

ROOT = Path(__file__).resolve().parents[2]

SNIPPET = '''\
# mychecks.py
import numpy as np
from quadnet.harness import CheckResult, register

@register("my-identity", "tr(U U^T) equals the squared Frobenius norm of U")
def run(ctx):
    res = CheckResult("my-identity", "tr(U U^T) equals the squared Frobenius norm of U")
    U = ctx.rng("U").standard_normal((6, 2))
    res.add("trace identity", abs(np.trace(U @ U.T) - np.sum(U * U)), 1e-12,
            kind="theorem", source="a textbook identity")
    return res
'''

WITH_FIGURE = '''\
import numpy as np
from quadnet.harness import CheckResult, figure, register

@figure("fig-check-curve")
def draw(data):
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(3.4, 2.4))
    ax.plot(data["x"], data["y"], "o-")
    ax.set_xlabel("x")
    return fig

@register("fig-check", "a check with a figure")
def run(ctx):
    res = CheckResult("fig-check", "a check with a figure")
    y = ctx.rng("y").standard_normal(20)
    res.add("mean of 20 normals", abs(y.mean()), 1.0, kind="exploration", source="quadnet target")
    ctx.draw(res, "fig-check-curve", {"x": np.arange(20), "y": y})
    return res
'''


def env_with(*paths: Path | str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *map(str, paths)])
    env.pop("QUADNET_DISABLE_CHECK_AUTOLOAD", None)
    return env


def quadnet(*args, cwd, env=None, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "quadnet", *map(str, args)], cwd=cwd,
                          env=env or env_with(), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture(autouse=True)
def forget_user_checks():
    """Every source loaded by a test is forgotten after it (checks, drawers, modules)."""
    yield
    for key in list(discovery._LOADED):
        res = discovery._LOADED.get(key)
        if key[0] == "entry point":
            discovery._LOADED.pop(key, None)
            for n in res.checks + ([res.error_check] if res.error_check else []):
                _base.REGISTRY.pop(n, None)
        else:
            discovery.unload_checks(key[1])
            if res.error_check:
                _base.REGISTRY.pop(res.error_check, None)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


# ------------------------------------------------------------------------ the public API
def test_public_names_are_the_internal_objects():
    for name in ("register", "CheckContext", "CheckResult", "Row", "figure", "CheckError"):
        assert getattr(harness, name) is getattr(_base, name), name
    from quadnet.harness import checks, sweeps

    assert harness.register_sweep is sweeps.register_sweep
    assert harness.run_check is checks.run_check
    assert harness.available_checks is checks.available
    assert {"register", "CheckContext", "CheckResult", "Row", "figure", "register_sweep",
            "run_sweep", "load_checks", "run_check"} <= set(harness.__all__)


def test_add_works_as_in_the_snippet_and_rejects_bad_kind():
    res = harness.CheckResult("x", "y")
    row = res.add("trace identity", 3e-16, 1e-12, kind="theorem", source="a textbook identity")
    assert (row.status, row.kind, row.source, row.tolerance) == ("PASS", "theorem",
                                                                 "a textbook identity", 1e-12)
    assert res.add("blows up", float("nan"), 1e-12).status == "FAIL"  # never passes silently
    with pytest.raises(ValueError, match="kind must be one of"):
        res.add("x", 1.0, 1.0, kind="lemma")


# ------------------------------------------------------------------------ the snippet
def test_snippet_runs_with_checks_file_and_no_edit_of_quadnet(tmp_path):
    write(tmp_path, "mychecks.py", SNIPPET)
    proc = quadnet("verify", "--checks", "mychecks.py", "my-identity", "--json", "out.json",
                   "--figures", "", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "my-identity" in proc.stdout and "PASS" in proc.stdout
    rep = json.loads((tmp_path / "out.json").read_text())
    (chk,) = rep["checks"]
    assert rep["schema"] == "quadnet-report/1"
    assert chk["name"] == "my-identity" and chk["status"] == "PASS"
    assert chk["rows"][0]["kind"] == "theorem" and chk["rows"][0]["measured"] < 1e-12
    assert chk["origin"]["kind"] == "file"
    assert chk["origin"]["path"] == str((tmp_path / "mychecks.py").resolve())
    assert compare.validate_report(rep) == []


def test_list_shows_every_check_with_where_it_comes_from(tmp_path, capsys, monkeypatch):
    f = write(tmp_path, "mychecks.py", SNIPPET)
    write(tmp_path / "pkgdir", "userpkg_t/__init__.py", "")
    write(tmp_path / "pkgdir", "userpkg_t/more.py", WITH_FIGURE)
    monkeypatch.syspath_prepend(str(tmp_path / "pkgdir"))
    assert main(["verify", "--checks", str(f), "--checks", "userpkg_t.more", "--list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert any(ln.startswith("quotient") and "built-in" in ln for ln in lines)
    assert any(ln.startswith("my-identity") and f"file {f.resolve()}" in ln for ln in lines)
    assert any(ln.startswith("fig-check") and "module userpkg_t.more" in ln for ln in lines)
    assert "tr(U U^T) equals the squared Frobenius norm of U" in out
    # every module of quadnet.harness.checks not starting with "_" is one built-in check
    import pkgutil

    from quadnet.harness import checks
    n_builtin = sum(not m.name.startswith("_") for m in pkgutil.iter_modules(checks.__path__))
    assert f"({n_builtin} built-in, 2 loaded" in lines[-1]
    assert main(["verify", "--list", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["name"]: r["origin"]["kind"] for r in rows}["fig-check"] == "module"


def test_loading_twice_is_a_no_op_and_load_checks_reports_names(tmp_path):
    f = write(tmp_path, "mychecks.py", SNIPPET)
    assert harness.load_checks(f) == ["my-identity"]
    assert harness.load_checks(str(f)) == ["my-identity"]
    res = harness.run_check("my-identity", harness.CheckContext(seed=3))
    again = harness.run_check("my-identity", harness.CheckContext(seed=3))
    assert res.rows[0].measured == again.rows[0].measured  # same seed, same bits
    assert res.origin["kind"] == "file" and res.origin["sha256"]
    assert harness.unload_checks(f) == ["my-identity"]
    assert "my-identity" not in harness.available_checks()
    assert "mychecks" not in sys.modules


# ------------------------------------------------------------------------ errors
def test_failing_sources_are_named_and_the_other_checks_still_run(tmp_path, capsys):
    good = write(tmp_path, "mychecks.py", SNIPPET)
    broken = write(tmp_path, "broken_checks.py", "import numpy\nx = 1 / 0\n")
    clash = write(tmp_path, "clash_checks.py", '''
        from quadnet.harness import CheckResult, register

        @register("geometry", "pretends to be the built-in check")
        def run(ctx):
            return CheckResult("geometry", "x")

        @register("raises-in-run", "a check that raises")
        def run2(ctx):
            raise ValueError("bad input in my check")
        ''')
    twin = write(tmp_path / "other", "twin_checks.py", SNIPPET)
    out = tmp_path / "r.json"
    rc = main(["verify", "--quick", "--figures", "", "--json", str(out), "--checks", str(good),
               "--checks", str(broken), "--checks", str(clash), "--checks", str(twin),
               "my-identity", "raises-in-run"])
    assert rc == 1
    cap = capsys.readouterr()
    assert f"could not load file {broken.resolve()}: ZeroDivisionError: division by zero" \
        in cap.err
    assert "x = 1 / 0" in cap.err  # the traceback of the import
    assert (f"check 'geometry' in file {clash.resolve()} has the name of a built-in check"
            in cap.err)
    assert (f"check 'my-identity' in file {twin.resolve()} has the name of a check already "
            f"loaded from file {good.resolve()}") in cap.err
    rep = json.loads(out.read_text())
    by = {c["name"]: c for c in rep["checks"]}
    assert by["my-identity"]["status"] == "PASS"  # the good check still ran and passed
    assert by["raises-in-run"]["status"] == "FAIL"
    assert by["raises-in-run"]["metrics"]["error"] == (
        f"CheckError: check 'raises-in-run' (file {clash.resolve()}) raised ValueError: bad "
        "input in my check")
    for name in ("broken_checks.py", "clash_checks.py", "twin_checks.py"):
        assert by[name]["status"] == "FAIL" and by[name]["rows"] == []
        assert by[name]["origin"]["load_error"]
    assert "ZeroDivisionError" in by["broken_checks.py"]["metrics"]["error"]
    assert compare.validate_report(rep) == []
    # the built-in check of that name is untouched
    assert harness.checks.get("geometry").origin == {"kind": "built-in"}


def test_load_checks_raises_naming_the_file(tmp_path):
    broken = write(tmp_path, "broken_two.py", "raise RuntimeError('no luck')\n")
    with pytest.raises(harness.CheckError, match=r"could not load file .*broken_two\.py: "
                       r"RuntimeError: no luck") as info:
        harness.load_checks(broken)
    assert isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(ValueError, match="no such file"):
        harness.load_checks(tmp_path / "missing.py")
    with pytest.raises(ValueError, match="no file and no importable module 'no_such_mod_q'"):
        harness.load_checks("no_such_mod_q")
    with pytest.raises(ValueError, match="neither a .py file nor a module name"):
        harness.load_checks("not a module")


def test_a_module_whose_dependency_is_missing_is_a_load_error(tmp_path, monkeypatch):
    # the module's name starts with the missing one's: still "its dependency is missing"
    write(tmp_path, "qdep_checks.py", "import qdep\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(harness.CheckError, match="could not load module qdep_checks: "
                       "ModuleNotFoundError: No module named 'qdep'"):
        harness.load_checks("qdep_checks")


def test_file_names_that_cannot_be_modules_are_refused(tmp_path):
    bad = write(tmp_path, "my-checks.py", SNIPPET)
    with pytest.raises(harness.CheckError, match=r"rename it, e.g. to my_checks\.py"):
        harness.load_checks(bad)
    shadow = write(tmp_path, "json.py", SNIPPET)
    with pytest.raises(harness.CheckError, match="module name 'json' is already taken"):
        harness.load_checks(shadow)


def test_missing_checks_file_is_a_usage_error(tmp_path, capsys):
    assert main(["verify", "--checks", str(tmp_path / "nope.py"), "--quick"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_check_returning_the_wrong_thing_names_its_file(tmp_path):
    f = write(tmp_path, "wrong_return.py", '''
        from quadnet.harness import register

        @register("wrong-return", "returns a dict")
        def run(ctx):
            return {"rows": []}
        ''')
    harness.load_checks(f)
    with pytest.raises(harness.CheckError, match=r"'wrong-return' \(file .*wrong_return\.py\)"
                       r" returned dict, not a CheckResult"):
        harness.run_check("wrong-return")


# ------------------------------------------------------------------------ entry points
def _dist(folder: Path, dist: str, eps: dict[str, str], modules: dict[str, str]) -> None:
    info = folder / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[quadnet.checks]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()))
    for name, text in modules.items():
        write(folder, name, text)


def test_entry_points_are_loaded_like_pytest_plugins(tmp_path):
    site = tmp_path / "site"
    _dist(site, "demo-checks", {"demo": "demo_checks_ep", "setup": "demo_checks_fn:setup"}, {
        "demo_checks_ep.py": SNIPPET,
        "demo_checks_fn.py": '''
            from quadnet.harness import CheckResult, register

            def setup():
                @register("ep-callable", "registered by a callable entry point")
                def run(ctx):
                    res = CheckResult("ep-callable", "registered by a callable entry point")
                    res.add("one", 1.0, 1.0)
                    return res
            ''',
    })
    _dist(site, "broken-checks", {"bad": "broken_ep_mod"},
          {"broken_ep_mod.py": "raise ImportError('missing dependency foo')\n"})
    env = env_with(site)
    proc = quadnet("verify", "--list", cwd=tmp_path, env=env)
    assert proc.returncode == 1, proc.stderr  # the broken distribution fails the listing
    lines = proc.stdout.splitlines()
    assert any(ln.startswith("my-identity") and
               "entry point demo = demo_checks_ep of demo-checks 1.0" in ln for ln in lines)
    assert any(ln.startswith("ep-callable") and "demo-checks 1.0" in ln for ln in lines)
    assert ("could not load entry point bad = broken_ep_mod of broken-checks 1.0: "
            "ImportError: missing dependency foo") in proc.stderr
    out = tmp_path / "ep.json"
    proc = quadnet("verify", "my-identity", "ep-callable", "--quick", "--figures", "",
                   "--json", out, cwd=tmp_path, env=env)
    assert proc.returncode == 1  # the broken entry point is a FAIL entry of the report ...
    rep = json.loads(out.read_text())
    by = {c["name"]: c for c in rep["checks"]}
    assert by["my-identity"]["status"] == "PASS"  # ... and the others still ran
    assert by["ep-callable"]["status"] == "PASS"
    assert by["my-identity"]["origin"]["dist"] == "demo-checks"
    assert by["entry point bad"]["status"] == "FAIL"
    assert compare.validate_report(rep) == []
    env["QUADNET_DISABLE_CHECK_AUTOLOAD"] = "1"
    proc = quadnet("verify", "--list", cwd=tmp_path, env=env)
    assert proc.returncode == 0 and "my-identity" not in proc.stdout


# ------------------------------------------------------------------------ figures
def test_figures_from_report_redraw_a_user_figure_byte_for_byte(tmp_path):
    f = write(tmp_path, "figchecks.py", WITH_FIGURE)
    out = tmp_path / "out.json"
    proc = quadnet("verify", "--checks", f, "fig-check", "--quick", "--figures",
                   tmp_path / "figs", "--json", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    first = {s: (tmp_path / "figs" / f"fig-check-curve.{s}").read_bytes() for s in ("png", "pdf")}
    # a fresh process loads the drawer from the origin recorded in the report
    proc = quadnet("figures", "--from", out, "--out", tmp_path / "again", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "recorded in the report, same SHA-256" in proc.stderr
    for s, data in first.items():
        assert (tmp_path / "again" / f"fig-check-curve.{s}").read_bytes() == data
    # an edited file is not loaded behind the user's back; --checks loads it explicitly
    f.write_text(WITH_FIGURE + "\n# edited\n")
    proc = quadnet("figures", "--from", out, "--out", tmp_path / "third", cwd=tmp_path)
    assert proc.returncode == 1 and "changed since the report was written" in proc.stderr
    assert f"pass --checks {f.resolve()}" in proc.stderr
    proc = quadnet("figures", "--from", out, "--out", tmp_path / "third", "--checks", f,
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "third" / "fig-check-curve.png").read_bytes() == first["png"]


# ------------------------------------------------------------------------ sweeps
SWEEP_FILE = '''
from quadnet.harness import Sweep, register_sweep

def square_cell(x, trial, seed):
    import numpy as np
    return {"y": x * x + 0.0 * np.random.default_rng(seed).standard_normal()}

register_sweep(Sweep("user-squares", "x^2 on a grid", cell=square_cell,
                     quick={"x": (1, 2, 3), "trial": (0,)}, full={"x": (1, 2), "trial": (0, 1)}))
'''


def test_a_user_sweep_runs_resumably_in_worker_processes(tmp_path):
    f = write(tmp_path, "user_sweeps.py", SWEEP_FILE)
    harness.load_checks(f)
    assert harness.SWEEPS["user-squares"].cell == "user_sweeps:square_cell"
    rep = harness.run_sweep("user-squares", tmp_path / "store", quick=True, workers=1,
                            progress=False)
    assert (rep.n_cells, rep.ran) == (3, 3)
    assert [r["y"] for r in harness.read_results(tmp_path / "store")] == [1.0, 4.0, 9.0]
    again = harness.run_sweep("user-squares", tmp_path / "store", quick=True, workers=0,
                              progress=False)
    assert (again.skipped, again.ran) == (3, 0)  # resumed: nothing recomputed
    proc = quadnet("sweep", "--checks", f, "user-squares", "--quick", "--store",
                   tmp_path / "cli-store", "--workers", "1", "--start-method", "spawn",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "cli-store" / "results.csv").read_text() == \
        (tmp_path / "store" / "results.csv").read_text()


def test_sweep_cell_must_be_a_module_level_function():
    def local(x, seed):
        return {"y": x}

    with pytest.raises(ValueError, match="cell must be a module-level function"):
        harness.Sweep("bad", "", cell=local, quick={"x": (1,)}, full={"x": (1,)})


# ------------------------------------------------------------------------ the schema
@pytest.fixture(scope="module")
def builtin_report(tmp_path_factory) -> dict:
    """A real quick report of two built-in checks (about 20 s on two cores)."""
    out = tmp_path_factory.mktemp("rep") / "qg.json"
    assert main(["verify", "--quick", "quotient", "geometry", "--figures", "", "--json",
                 str(out), "--no-progress"]) == 0
    return json.loads(out.read_text())


def _jsonschema_errors(report) -> list[str]:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(compare.report_schema())
    return [e.message for e in validator.iter_errors(report)]


def test_the_schema_is_a_valid_json_schema_shipped_as_package_data():
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(compare.report_schema())
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    globs = data["package-data"]["quadnet.harness"]
    files = sorted(p.relative_to(ROOT / "quadnet" / "harness").as_posix()
                   for g in globs for p in (ROOT / "quadnet" / "harness").glob(g))
    assert files == ["schema/report.schema.json"]


def test_real_reports_validate_against_the_schema(builtin_report, tmp_path, capsys):
    assert builtin_report["schema"] == "quadnet-report/1"
    assert len(builtin_report["checks"]) == 2
    assert _jsonschema_errors(builtin_report) == []
    assert compare.validate_report(builtin_report) == []
    f = write(tmp_path, "figchecks.py", WITH_FIGURE)
    out = tmp_path / "user.json"
    assert main(["verify", "--checks", str(f), "fig-check", "--quick", "--figures", "",
                 "--json", str(out)]) == 0
    user = json.loads(out.read_text())
    assert _jsonschema_errors(user) == [] and compare.validate_report(user) == []


MUTATIONS = [
    ("schema", lambda r: r.update(schema="quadnet-report/2")),
    ("no checks", lambda r: r.pop("checks")),
    ("mode", lambda r: r.update(mode="fast")),
    ("seed", lambda r: r.update(seed=-1)),
    ("seed type", lambda r: r.update(seed="0")),
    ("row status", lambda r: r["checks"][0]["rows"][0].update(status="OK")),
    ("row measured", lambda r: r["checks"][0]["rows"][0].update(measured="small")),
    ("row passed", lambda r: r["checks"][0]["rows"][0].update(passed="yes")),
    ("row claim", lambda r: r["checks"][0]["rows"][0].pop("claim")),
    ("check name", lambda r: r["checks"][0].update(name="")),
    ("check status", lambda r: r["checks"][0].update(status="SKIPPED")),
    ("figure data", lambda r: r["checks"][0].update(figure_data={"x": [1, 2]})),
    ("origin kind", lambda r: r["checks"][0].update(origin={"kind": "elsewhere"})),
]


@pytest.mark.parametrize("what,mutate", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_the_runtime_validator_agrees_with_jsonschema(builtin_report, what, mutate):
    bad = copy.deepcopy(builtin_report)
    mutate(bad)
    assert _jsonschema_errors(bad), what
    assert compare.validate_report(bad), what


def test_non_finite_values_are_valid(builtin_report):
    rep = copy.deepcopy(builtin_report)
    rep["checks"][0]["rows"][0]["measured"] = "nan"
    rep["checks"][0]["rows"][1]["tolerance"] = None
    assert _jsonschema_errors(rep) == [] and compare.validate_report(rep) == []


# ------------------------------------------------------------------------ compare
def _save(tmp_path: Path, name: str, report: dict) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(report))
    return path


def test_compare_a_report_with_itself_finds_nothing(builtin_report, tmp_path, capsys):
    p = _save(tmp_path, "a.json", builtin_report)
    assert main(["compare", str(p), str(p)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == ("34 rows compared, 0 changed: 0 regressed, 0 added, "
                                    "0 removed -> nothing regressed")


def test_compare_names_a_row_pushed_past_its_tolerance(builtin_report, tmp_path, capsys):
    new = copy.deepcopy(builtin_report)
    row = next(r for r in new["checks"][1]["rows"] if r["tolerance"] is not None
               and r["relation"] == "<=" and r["status"] == "PASS")
    row["measured"] = row["tolerance"] * 3  # the status field still says PASS
    a, b = _save(tmp_path, "a.json", builtin_report), _save(tmp_path, "b.json", new)
    assert main(["compare", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert f"REGRESSED  geometry: {row['claim']}" in out
    assert "crossed its tolerance" in out
    assert "1 regressed" in out.splitlines()[-1]
    assert main(["compare", str(a), str(b), "--format", "json"]) == 1
    res = json.loads(capsys.readouterr().out)
    assert res["schema"] == "quadnet-compare/1" and res["regressed"] is True
    (reg,) = [c for c in res["changes"] if c["regression"]]
    assert (reg["check"], reg["claim"]) == ("geometry", row["claim"])
    assert main(["compare", str(a), str(b), "--format", "markdown"]) == 1
    md = capsys.readouterr().out
    assert "| **REGRESSED** | geometry |" in md and md.rstrip().endswith("REGRESSED**")


def _tiny(*rows, name="c") -> dict:
    return {"schema": "quadnet-report/1", "passed": True, "seed": 0, "mode": "quick",
            "versions": {}, "checks": [{"name": name, "claim": "", "passed": True,
                                        "status": "PASS", "rows": list(rows), "metrics": {},
                                        "figures": [], "figure_data": {},
                                        "figure_notes": {}}]}


def _row(claim, measured, tol=1e-12, relation="<=", status=None):
    if status is None:
        status = "REPORTED" if tol is None else "PASS"
    return {"claim": claim, "measured": measured, "tolerance": tol, "relation": relation,
            "passed": status != "FAIL", "status": status}


def test_compare_rules_on_small_reports():
    old = _tiny(_row("err", 1e-11, 1e-8), _row("rounding", 1e-15),
                _row("count", 0.0, None, "="), _row("zero", 0.0),
                _row("cos", 0.999, 0.99, ">="), _row("gone", 1.0, None, "="),
                _row("loosened", 1e-14, 1e-12))
    new = _tiny(_row("err", 5e-9, 1e-8), _row("rounding", 5e-13),
                _row("count", 5.0, None, "="), _row("zero", 1.3e-15),
                _row("cos", 0.95, 0.99, ">=", status="FAIL"), _row("added", 2.0, None, "="),
                _row("loosened", 1e-10, 1e-8))
    cmp = compare.compare_reports(old, new)
    by = {c["claim"]: c for c in cmp.changes}
    assert "zero" not in by  # 0 -> 1.3e-15 is below the floor: not a move
    assert "rounding" not in by  # nor is 1e-15 -> 5e-13
    assert by["err"]["what"] == ["measured 1.00e-11 -> 5.00e-09 (x500, worse)"]
    assert not by["err"]["regression"]  # moved, still within its tolerance
    assert by["count"]["what"][0].startswith("measured 0 -> 5 (x5e+12, ?)")
    assert by["cos"]["regression"] and by["cos"]["what"][0] == "status PASS -> FAIL"
    assert by["gone"]["regression"] and by["gone"]["what"] == ["removed row"]
    assert not by["added"]["regression"]
    assert by["loosened"]["regression"]
    assert by["loosened"]["what"][0].startswith("passes only because the tolerance changed")
    assert sorted(c["claim"] for c in cmp.regressions) == ["cos", "gone", "loosened"]
    strict = compare.compare_reports(old, new, strict=True, allow_removed=True)
    assert sorted(c["claim"] for c in strict.regressions) == ["cos", "count", "err",
                                                              "loosened"]
    exact = compare.compare_reports(old, new, floor=0.0)
    assert {"zero", "rounding"} <= {c["claim"] for c in exact.changes}
    improved = compare.compare_reports(new, old, allow_removed=True)
    assert {c["claim"] for c in improved.changes if c["improvement"]} == {"cos"}
    with pytest.raises(ValueError, match="factor must be a number > 1"):
        compare.compare_reports(old, new, factor=1.0)


def test_compare_flags_a_crashed_or_missing_check():
    old = _tiny(_row("err", 1e-15), _row("err2", 1e-15))
    crashed = copy.deepcopy(old)
    crashed["checks"][0].update(rows=[], status="FAIL", metrics={"error": "ValueError: x"})
    cmp = compare.compare_reports(old, crashed)
    assert [c["what"] for c in cmp.changes] == [["check FAIL with no rows: ValueError: x"]]
    assert cmp.regressed
    other = _tiny(_row("err", 1e-15), name="d")
    cmp = compare.compare_reports(old, other)
    assert [c["what"][0] for c in cmp.changes] == ["removed check (2 rows)",
                                                   "added check (1 rows)"]
    assert compare.compare_reports(old, other, allow_removed=True).regressed is False


def test_compare_bad_input_exits_2_with_a_clear_message(builtin_report, tmp_path, capsys):
    good = _save(tmp_path, "good.json", builtin_report)
    (tmp_path / "text.json").write_text("not json")
    _save(tmp_path, "list.json", [1, 2])
    _save(tmp_path, "future.json", dict(builtin_report, schema="quadnet-report/2"))
    broken = copy.deepcopy(builtin_report)
    broken["checks"][0]["rows"][0]["status"] = "OK"
    _save(tmp_path, "broken.json", broken)
    cases = {"missing.json": "cannot read", "text.json": "is not JSON",
             "list.json": "is not a quadnet verify --json report",
             "future.json": "has schema 'quadnet-report/2'; this quadnet reads "
                            "'quadnet-report/1'",
             "broken.json": "is not a valid quadnet-report/1 report: "
                            "checks[0].rows[0].status: 'OK' is not one of"}
    for name, message in cases.items():
        assert main(["compare", str(good), str(tmp_path / name)]) == 2, name
        assert message in capsys.readouterr().err, name
    assert main(["compare", str(good), str(good), "--factor", "0.5"]) == 2
    assert "factor must be a number > 1" in capsys.readouterr().err


def test_compare_reads_reports_written_before_the_schema_field(builtin_report, tmp_path,
                                                                capsys):
    legacy = {k: v for k, v in builtin_report.items() if k != "schema"}
    for chk in legacy["checks"]:
        chk.pop("origin")
    a, b = _save(tmp_path, "old.json", legacy), _save(tmp_path, "new.json", builtin_report)
    assert main(["compare", str(a), str(b)]) == 0
    assert "quadnet-report/0" in capsys.readouterr().out


# ------------------------------------------------------------------------ new-check
def test_new_check_template_passes_its_own_test(tmp_path):
    proc = quadnet("new-check", "my-claim", "--dir", tmp_path / "mine", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    check, test = tmp_path / "mine" / "my_claim.py", tmp_path / "mine" / "test_my_claim.py"
    assert proc.stdout.split() == [str(check), str(test)]
    text = check.read_text()
    assert '@register(NAME, CLAIM)' in text and "@figure(FIGURE)" in text
    assert 'kind="theorem"' in text and "ctx.draw(" in text
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(test)], cwd=tmp_path / "mine", env=env_with(),
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 passed" in run.stdout


@pytest.mark.parametrize("name,message", [
    ("My Check", "NAME must be lower-case letters and digits"),
    ("my--check", "NAME must be lower-case letters and digits"),
    ("9lives", "NAME must be lower-case letters and digits"),
    ("geometry", "NAME 'geometry' is already the name of a check"),
    ("import", "NAME 'import' is a Python keyword"),
    ("json", "would hide the installed module"),
])
def test_new_check_validates_the_name(tmp_path, capsys, name, message):
    assert main(["new-check", name, "--dir", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_new_check_never_overwrites(tmp_path, capsys):
    assert main(["new-check", "mine-once", "--dir", str(tmp_path)]) == 0
    (tmp_path / "test_mine_once.py").write_text("# my own edits\n")
    capsys.readouterr()
    assert main(["new-check", "mine-once", "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "already exist; nothing was written" in err and "mine_once.py" in err
    assert (tmp_path / "test_mine_once.py").read_text() == "# my own edits\n"


# ------------------------------------------------------- bad arguments of the public check API
@pytest.mark.parametrize("kwargs, error, match", [
    ({"name": ""}, ValueError, r"name must be a non-empty str, got ''"),
    ({"name": None}, TypeError, r"name must be a non-empty str, got NoneType"),
    ({"name": 1}, TypeError, r"name must be a non-empty str, got int"),
    ({"name": " x"}, ValueError, r"name must not start or end with whitespace"),
    ({"claim": ""}, ValueError, r"claim must be a non-empty str, got ''"),
    ({"claim": "   "}, ValueError, r"claim must be a non-empty str, got '   '"),
    ({"claim": None}, TypeError, r"claim must be a non-empty str, got NoneType"),
    ({"order": 2.5}, TypeError, r"order must be an integer, got float"),
    ({"order": float("nan")}, TypeError, r"order must be an integer, got float"),
    ({"order": "3"}, TypeError, r"order must be an integer, got str"),
    ({"order": 1 + 0j}, TypeError, r"order must be an integer, got complex"),
    ({"order": True}, TypeError, r"order must be an integer, got bool"),
    ({"heavy": "False"}, TypeError, r"heavy must be a bool, got str"),
    ({"heavy": None}, TypeError, r"heavy must be a bool, got NoneType"),
    ({"heavy": 2}, TypeError, r"heavy must be a bool, got int"),
])
def test_register_refuses_bad_arguments_before_registering(kwargs, error, match):
    args = {"name": "_tbadarg", "claim": "a claim", **kwargs}
    before = dict(_base.REGISTRY)
    with pytest.raises(error, match=match):
        harness.register(args.pop("name"), args.pop("claim"), **args)
    assert _base.REGISTRY == before


def test_register_accepts_negative_order_and_numpy_bool():
    """A negative order runs a check before the built-in ones (0 to 100): it is valid."""
    import numpy as np

    @harness.register("_tnegorder", "a claim", order=-7, heavy=np.bool_(False))
    def run(ctx):  # pragma: no cover - only registered
        raise AssertionError
    try:
        spec = _base.REGISTRY["_tnegorder"]
        assert spec.order == -7 and spec.heavy is False
    finally:
        del _base.REGISTRY["_tnegorder"]


@pytest.mark.parametrize("stem, error, match", [
    ("", ValueError, r"stem must be a non-empty str usable as a file name"),
    (None, TypeError, r"stem must be a non-empty str usable as a file name.*got NoneType"),
    (1, TypeError, r"stem must be .* got int"),
    ("a/b", ValueError, r"stem must be a file name without a suffix .* got 'a/b'"),
    (".hidden", ValueError, r"stem must be a file name without a suffix"),
])
def test_figure_refuses_bad_stems(stem, error, match):
    before = dict(_base.FIGURES)
    with pytest.raises(error, match=match):
        harness.figure(stem)
    assert _base.FIGURES == before


@pytest.mark.parametrize("fn", [harness.load_checks, harness.unload_checks])
@pytest.mark.parametrize("source, error, match", [
    (None, TypeError, r"source must be a non-empty str or os.PathLike .* got NoneType"),
    (1, TypeError, r"source must be a non-empty str or os.PathLike .* got int"),
    (b"x.py", TypeError, r"source must be .* got bytes"),
    ("", ValueError, r"source must be a non-empty str or os.PathLike .* got ''"),
])
def test_load_checks_names_a_bad_source(fn, source, error, match):
    with pytest.raises(error, match=match):
        fn(source)


def test_checks_registered_while_loading_a_file_are_still_checked(tmp_path):
    """load_checks does not switch the checks of the file's own register calls off."""
    path = tmp_path / "bad_order_checks.py"
    path.write_text("from quadnet.harness import register\n"
                    "@register('_tbadorder', 'a claim', order='3')\n"
                    "def run(ctx):\n    pass\n")
    try:
        with pytest.raises(harness.CheckError, match=r"order must be an integer, got str"):
            harness.load_checks(path)
        assert "_tbadorder" not in _base.REGISTRY
    finally:
        harness.unload_checks(path)


def test_load_checks_missing_file_names_source(tmp_path):
    with pytest.raises(ValueError, match=r"--checks source: no such file '.*missing_checks\.py'"):
        harness.load_checks(tmp_path / "missing_checks.py")
