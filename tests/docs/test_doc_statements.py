"""What the README and the documentation pages say the code does, executed.

Each test re-asserts one statement of a page (the page and the sentence are named in the
docstring), so a change of behaviour shows up here rather than as a stale sentence. Every test
is small (well under two seconds).
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import quadnet as qn

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _text(rel: str) -> str:
    return (ROOT / rel).read_text(encoding="utf-8")


def _backticked(text: str) -> set[str]:
    return set(re.findall(r"`([A-Za-z_][A-Za-z0-9_-]*)`", text))


# --------------------------------------------------------------------------- names and lists
def test_readme_figure_names_are_figure_names():
    """README, "Figures": "Figure names (`figure_names()`): ..." lists every name, and so does
    the table of docs/figure_api.md (plus the three `beyond_*` figures drawn by their check)."""
    from quadnet.harness import figure_names

    readme = _text("README.md")
    para = readme[readme.index("Figure names (`figure_names()`)"):]
    para = para[:para.index("\n\n")]
    listed = {n for n in _backticked(para) if "_" in n and not n.startswith("beyond")}
    listed.discard("figure_names")
    assert listed == set(figure_names())

    table = re.findall(r"^\| `([a-z_A-Z]+)` \|", _text("docs/figure_api.md"), flags=re.M)
    assert set(table) == set(figure_names())


def test_readme_lists_every_built_in_sweep():
    """README, "Sweeps": "`quadnet sweep --list`: `recovery`, ...; `selection`, ...; ..."."""
    from quadnet.harness import available_sweeps

    readme = _text("README.md")
    para = readme[readme.index("(`quadnet sweep --list`:"):]
    para = para[:para.index(") cut into cells")]
    assert _backticked(para) - {"beyond"} == set(available_sweeps())


def test_cells_module_docstring_lists_every_built_in_sweep():
    """quadnet.harness.cells and quadnet.harness.sweeps name every built-in sweep."""
    from quadnet.harness import available_sweeps, cells, sweeps

    for mod in (cells, sweeps):
        assert set(available_sweeps()) <= _backticked(mod.__doc__.replace("``", "`")), mod


def test_architecture_counts_the_top_level_names():
    """docs/ARCHITECTURE.md: "The top level `quadnet` re-exports 48 starting names"."""
    names = [n for n in qn.__all__ if not isinstance(getattr(qn, n), type(qn))]
    m = re.search(r"re-exports (\d+) starting names", _text("docs/ARCHITECTURE.md"))
    assert m and int(m.group(1)) == len(names)


def test_readme_subpackages_are_the_subpackages():
    """README, "API tour": "everything else is `quadnet.<subpackage>.<name>` (...)"."""
    readme = _text("README.md")
    para = readme[readme.index("`quadnet.<subpackage>.<name>` ("):]
    para = para[:para.index(")")]
    subs = {n for n in qn.__all__ if isinstance(getattr(qn, n), type(qn))}
    assert _backticked(para) == subs


def test_notebooks_extra_is_what_the_pages_name():
    """README and docs/getting_started.md: the `notebooks` extra is "nbclient, nbformat,
    ipykernel, jupytext"; getting started lists the install's dependencies."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    meta = tomllib.loads(_text("pyproject.toml"))["project"]
    extra = {re.split(r"[<>=\[ ]", r)[0] for r in meta["optional-dependencies"]["notebooks"]}
    assert extra == {"nbclient", "nbformat", "ipykernel", "jupytext"}
    for page in ("README.md", "docs/getting_started.md"):
        assert all(p in _text(page) for p in extra), page
    deps = {re.split(r"[<>=\[ ]", r)[0].lower() for r in meta["dependencies"]}
    gs = _text("docs/getting_started.md").lower()
    assert all(d in gs for d in deps), deps


# --------------------------------------------------------------------------- docs/riemannian.md
def test_bw_barycenter_bad_input_of_riemannian_page():
    """docs/riemannian.md §6, "Bad input": weights negative, of the wrong length or not
    summing to 1, shapes that differ, an indefinite matrix and a `tol` outside [1e-15, 1e-2]
    raise `ValueError`; factors of any rank are accepted with `inputs="factors"`; only the
    former call form refuses a rank-deficient factor (with a DeprecationWarning)."""
    rng = np.random.default_rng(0)
    Us = list(rng.standard_normal((3, 5, 2)))
    for bad in (dict(weights=[1.5, -0.25, -0.25]), dict(weights=[0.5, 0.5]),
                dict(weights=[0.5, 0.5, 0.5]), dict(tol=1e-16), dict(tol=0.1)):
        with pytest.raises(ValueError):
            qn.bw_barycenter(Us, inputs="factors", **bad)
    with pytest.raises(ValueError):
        qn.bw_barycenter(Us[:2] + [np.ones((5, 1))], inputs="factors")
    with pytest.raises(ValueError):
        qn.bw_barycenter([np.diag([1.0, -1.0]), np.eye(2)], inputs="matrices")
    deficient = [np.column_stack([Us[0][:, 0], np.zeros(5)])] + Us[1:]
    b = qn.bw_barycenter(deficient, inputs="factors")
    assert b.converged and b.dual_min > -1e-9
    with pytest.warns(DeprecationWarning, match="inputs="), pytest.raises(ValueError):
        qn.bw_barycenter(deficient)


def test_bw_barycenter_max_rank_is_the_within_rank_mean():
    """docs/riemannian.md §6: the former call form "still returns the within-rank mean (as
    `max_rank=r`)"; the result carries `rank`, `dual_min`, `objective`, ..."""
    rng = np.random.default_rng(2)
    Us, w = rng.standard_normal((5, 8, 2)), rng.dirichlet(np.ones(5))
    within = qn.bw_barycenter(Us, w, inputs="factors", max_rank=2)
    with pytest.warns(DeprecationWarning):
        former = qn.bw_barycenter(Us, w)
    np.testing.assert_allclose(former.Q, within.Q, atol=1e-12)
    full = qn.bw_barycenter(Us, w, inputs="factors")
    assert full.rank == 3 and within.rank == 2 and full.objective < within.objective
    for field in ("U", "Q", "rank", "converged", "iterations", "residual", "objective",
                  "dual_min", "history"):
        assert hasattr(full, field)


def test_sectional_curvature_bad_input_of_riemannian_page():
    """docs/riemannian.md §1, "Bad input": `sectional_curvature` raises `ValueError` for a
    vertical part above 1e-8 relative (`project=True` projects instead), a zero direction and
    parallel directions."""
    from quadnet.geometry import sectional_curvature

    M = qn.PSDQuotient(5, 3, seed=0)
    U = M.random_point()
    rng = np.random.default_rng(1)
    xi, eta = (M.horizontal_projection(U, rng.standard_normal((5, 3))) for _ in range(2))
    Om = np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match="horizontal"):
        sectional_curvature(U, xi + U @ Om, eta)
    assert sectional_curvature(U, xi + U @ Om, eta, project=True) == pytest.approx(
        sectional_curvature(U, xi, eta), rel=1e-10)
    with pytest.raises(ValueError, match="nonzero"):
        sectional_curvature(U, 0 * xi, eta)
    with pytest.raises(ValueError, match="parallel"):
        sectional_curvature(U, xi, 2 * xi)


# --------------------------------------------------------------------------- docs/stratified.md
def test_stratified_page_refusals():
    """docs/stratified.md: `rank_rtol` outside (0, 1) is a `ValueError`; `lift(exact=True)`
    raises when the residual exceeds 1e-10 ||Qdot||; `lyapunov_skew` raises on a dropped pair
    unless `exact=False`; a non-PSD input of `bures_wasserstein` is a `ValueError`; `exp` and
    `retraction` never refuse a finite step (rank 0 included), only a non-finite one."""
    for bad in (0.0, 1.0, -1.0, 1.5):
        with pytest.raises(ValueError, match="rank_rtol"):
            qn.PSDQuotient(5, 3, rank_rtol=bad)
    M = qn.PSDQuotient(5, 3, seed=0)
    U = M.random_point()
    U1 = U.copy()
    U1[:, 1:] = 0.0
    Q = np.random.default_rng(0).standard_normal((5, 5))
    Q = Q + Q.T
    with pytest.raises(ValueError, match="image"):
        M.lift(U1, Q, exact=True)
    xi, res = M.lift(U1, Q, return_residual=True)
    assert res > 1e-10 * np.linalg.norm(Q) and np.all(np.isfinite(xi))
    K = np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
    with pytest.raises(ValueError, match="exact=False"):
        qn.geometry.lyapunov_skew(U1, K)
    assert np.all(np.isfinite(qn.geometry.lyapunov_skew(U1, K, exact=False)))
    with pytest.raises(ValueError, match="positive semidefinite"):
        qn.bures_wasserstein(np.diag([1.0, -1.0]), np.eye(2))
    np.testing.assert_array_equal(M.exp(np.zeros((5, 3)), np.ones((5, 3))), np.ones((5, 3)))
    np.testing.assert_array_equal(M.retraction(U1, U), U1 + U)
    with pytest.raises(ValueError, match="non-finite"):
        M.retraction(U, np.full((5, 3), np.nan))


# --------------------------------------------------------------------------- docs/noncommuting.md
def test_the_factor_flows_integrator_is_the_one_the_page_names():
    """docs/noncommuting.md: "integrates the factor flow (LSODA, ... `rtol = 1e-11`, absolute
    tolerance 1e-14 sqrt(eps)"; its agreement with DOP853 is
    tests/commuting/test_noncommuting.py::test_lsoda_flow_limits_agree_with_dop853."""
    import inspect

    from quadnet.commuting import greedy

    text = (ROOT / "docs" / "noncommuting.md").read_text(encoding="utf-8")
    assert f"integrates the factor flow ({greedy.FLOW_METHOD}," in text
    assert inspect.signature(qn.small_init_limit).parameters["rtol"].default == 1e-11
    assert "1e-3 * rtol * float(np.max(np.abs(U)))" in inspect.getsource(greedy._flow)


def test_glrl_budget_statuses_warn():
    """docs/noncommuting.md §2: GLRL stops with `interpolating`, `stationary`, `rank_budget` or
    `stage_budget`; "the last two are reported statuses with a `ConvergenceWarning`"."""
    from quadnet.exceptions import ConvergenceWarning

    loss = qn.FrobeniusLoss(np.diag([3.0, 1.0, -1.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert qn.greedy_low_rank_learning(loss, 3).status == "stationary"
    with pytest.warns(ConvergenceWarning, match="rank budget"):
        g = qn.greedy_low_rank_learning(loss, 3, max_rank=1)
    assert g.status == "rank_budget" and np.all(np.isfinite(g.Q))
    with pytest.warns(ConvergenceWarning, match="max_stage_time"):
        g = qn.greedy_low_rank_learning(loss, 3, max_stage_time=1e-3)
    assert g.status == "stage_budget" and np.all(np.isfinite(g.Q))


# --------------------------------------------------------------------------- docs/rfm.md §8
def test_kernel_solver_numbers_of_rfm_page():
    """docs/rfm.md §8: `DIRECT_MAX_N = 10,000`; `KernelMemoryError` is a `MemoryError` and a
    `ValueError`; the memory-model table; `k = min(n, max(1000, n/16))`; `tol = 1e-8` (float32
    storage) and `1e-10` (recompute) by default."""
    from quadnet.exceptions import KernelMemoryError
    from quadnet.features import solvers

    assert solvers.DIRECT_MAX_N == 10_000
    assert issubclass(KernelMemoryError, MemoryError) and issubclass(KernelMemoryError, ValueError)
    est = solvers.kernel_memory_estimate
    table = {20_000: (3.48, 2.09, 0.49), 50_000: (20.3, 11.6, 1.62)}
    for n, (direct, f32, rec) in table.items():
        assert round(est(n, 50, 1, "direct") / 1e9, 2 if direct < 10 else 1) == direct
        assert round(est(n, 50, 1, "iterative", storage="float32") / 1e9,
                     2 if f32 < 10 else 1) == f32
        assert round(est(n, 50, 1, "iterative", storage="recompute") / 1e9, 2) == rec
    for n in (500, 5_000, 20_000, 50_000):
        assert solvers.default_rank(n) == min(n, max(1000, n // 16))
    assert solvers.DEFAULT_TOL == {"float32": 1e-8, "recompute": 1e-10}
    with pytest.raises(KernelMemoryError, match="n = 5000"):
        solvers.choose_solver(5000, 50, 1, ridge=1e-3, memory_limit=10**6)


# --------------------------------------------------------------------------- docs/fact.md
def test_fact_page_training_statements():
    """docs/fact.md §1 and §6: `fact_identity` warns `NotCriticalWarning` (carrying
    `grad_norm`) away from a critical point; `gd_path` takes `eta` (the former `lr` warns)."""
    from quadnet.exceptions import NotCriticalWarning
    from quadnet.features import QuadraticNet, fact_identity, gd_path

    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 3))
    y = X[:, 0] ** 2
    net = QuadraticNet(rng.standard_normal((2, 3)))
    with pytest.warns(NotCriticalWarning) as rec:
        fact_identity(net, X, y, 1e-2)
    assert rec[0].message.grad_norm > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotCriticalWarning)
        a = gd_path(net, X, y, 1e-2, eta=5e-3, steps=3)
        with pytest.warns(DeprecationWarning, match="lr"):
            b = gd_path(net, X, y, 1e-2, lr=5e-3, steps=3)
    np.testing.assert_array_equal(a.loss, b.loss)


# --------------------------------------------------------------------------- docs/grokking_parity.md
def test_sweep_cell_environment_of_grokking_parity_page(monkeypatch):
    """docs/grokking_parity.md §1: the checks read stores under `sweeps/` (or
    `$QUADNET_SWEEPS`); with `QUADNET_CHECK_COMPUTE=0` nothing is computed; the parity check's
    limit `QUADNET_PARITY_MAX_N` defaults to 20,000."""
    import inspect

    from quadnet.harness.checks import _sweep_cells, parity

    monkeypatch.delenv("QUADNET_SWEEPS", raising=False)
    monkeypatch.delenv("QUADNET_CHECK_COMPUTE", raising=False)
    assert _sweep_cells.sweeps_dir() == "sweeps" and _sweep_cells.compute_missing()
    monkeypatch.setenv("QUADNET_SWEEPS", "/somewhere/else")
    monkeypatch.setenv("QUADNET_CHECK_COMPUTE", "0")
    assert _sweep_cells.sweeps_dir() == "/somewhere/else" and not _sweep_cells.compute_missing()
    assert parity.DEFAULT_MAX_N == 20_000 and "QUADNET_PARITY_MAX_N" in inspect.getsource(parity._max_n)
    plan, err = parity._solver_plan(5000, "fact")
    assert plan is not None and err is None


def test_parity_default_run_of_readme_and_grokking_parity_page():
    """README "Sparse parity" and docs/grokking_parity.md §6: the committed report of the
    default `quadnet verify parity` (seed 0) has every row measured (no SKIPPED), the
    thresholds of the tables, FACT-RFM's k = 4 threshold confirmed at 20,000, and ran within
    the quadnet target of 45 CPU-minutes."""
    rep = json.loads(_text("benchmarks/results/parity_default/report.json"))
    (c,) = rep["checks"]
    assert c["name"] == "parity" and rep["mode"] == "full" and rep["seed"] == 0
    assert c["status"] == "PASS" and not [r for r in c["rows"] if r["status"] == "SKIPPED"]
    th = c["metrics"]["thresholds"]
    assert th["fact"] == {"1": 250.0, "2": 250.0, "3": 1000.0, "4": 10000.0}
    assert th["nfa"] == {"1": 250.0, "2": 250.0, "3": 2500.0, "4": "inf"}
    assert c["metrics"]["largest_n_run"] == {"fact": {"1": 500, "2": 500, "3": 2500, "4": 20000},
                                             "nfa": {"1": 500, "2": 500, "3": 5000, "4": 10000}}
    acc = c["metrics"]["test_accuracy"]
    assert min(acc["fact"]["4"][5] + acc["fact"]["4"][6]) == 1.0  # 10,000 and 20,000
    assert 0.46 <= min(acc["nfa"]["4"][5]) and max(acc["nfa"]["4"][5]) <= 0.52
    cpu = rep["cpu_seconds"]["parity"]
    assert cpu <= 45 * 60 and c["metrics"]["cells_computed"] == 84
    assert "computes its 84 cells (60 with ridge `1e-3`, 24 ridgeless)" in _text(
        "docs/grokking_parity.md")
    readme = _text("README.md")
    assert "| 4 | 10,000 (confirmed at 20,000; 100 % on both seeds at both sizes) |" in readme
    assert "not reached up to 10,000 (0.465–0.511)" in readme
    ridge = c["metrics"]["ridge_comparison"]
    assert ridge["cells"] == 24 and round(ridge["max_abs_acc_diff"], 3) <= 0.003
    assert "at most 0.003 in test accuracy over 24 fits" in readme
    # the README quotes /usr/bin/time's 1,139 CPU-s: the report's clock plus the imports
    assert 1130 <= cpu <= 1139 and "1,139 CPU-s" in readme


# --------------------------------------------------------------------------- report and CLI
def _my_identity_file(tmp_path: Path) -> Path:
    text = _text("docs/tutorials/own_checks.md")
    block = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)[0]
    path = tmp_path / "mychecks.py"
    path.write_text(block, encoding="utf-8")
    return path


def _documented_fields(section: str) -> set[str]:
    """The backticked first cells of the table under ``section`` of docs/report_schema.md."""
    text = _text("docs/report_schema.md")
    part = text[text.index(section):]
    part = part[:part.index("\n\n", part.index("|---"))]
    fields = set()
    for line in part.splitlines():
        if line.startswith("| `"):
            fields |= set(re.findall(r"`([a-z_0-9]+)`", line.split("|")[1]))
    return fields


def test_report_fields_are_the_documented_ones(tmp_path, monkeypatch):
    """docs/report_schema.md: its tables name every field `quadnet verify --json` writes (top
    level, check, `origin`, row), `schema` is "quadnet-report/1"; the check of
    docs/tutorials/own_checks.md passes, with exit status 0."""
    from quadnet.harness import unload_checks
    from quadnet.harness.cli import main

    check = _my_identity_file(tmp_path)
    out = tmp_path / "out.json"
    monkeypatch.chdir(tmp_path)
    try:
        code = main(["verify", "--checks", str(check), "my-identity", "--json", str(out),
                     "--figures", "", "--no-progress"])
    finally:
        unload_checks(str(check))
    assert code == 0
    rep = json.loads(out.read_text())
    assert rep["schema"] == "quadnet-report/1"
    assert set(rep) <= _documented_fields("## Top level")
    chk = rep["checks"][0]
    assert chk["status"] == "PASS" and set(chk) <= _documented_fields("## A check")
    assert set(chk["origin"]) <= _documented_fields("### `origin`")
    assert set(chk["rows"][0]) <= _documented_fields("## A row")
    assert set(chk["run"]) == {"quadnet", "seed", "mode", "seconds", "cpu_seconds", "finished"}


def test_verify_refuses_an_unwritable_json_path_with_status_2(tmp_path, monkeypatch, capsys):
    """README: "2 for a usage error (e.g. an unwritable `--figures` or `--json` path, caught
    before anything is computed)"; an unknown check name is a usage error too."""
    from quadnet.harness.cli import main

    monkeypatch.chdir(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    assert main(["verify", "quotient", "--json", str(blocker / "r.json"), "--figures", ""]) == 2
    assert main(["verify", "quotient", "--figures", str(blocker / "figs")]) == 2
    assert main(["verify", "no-such-check", "--figures", ""]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]
    assert "not writable" in capsys.readouterr().err


def test_doctor_exit_status(monkeypatch, capsys):
    """README, "Reporting a problem": `quadnet doctor` "exits 1 when a probe crashed or
    failed" (0 otherwise, a probe that is too slow included)."""
    import argparse

    from quadnet.harness import doctor
    from quadnet.harness.cli import doctor as doctor_command

    args = argparse.Namespace(probe=True, probe_size=10, timeout=1.0, json=True)
    for status, code in (("ok", 0), ("too slow (> 1 s)", 0), ("crashed (SIGSEGV)", 1),
                         ("failed (exit 1: boom)", 1)):
        monkeypatch.setattr(doctor, "run_probes", lambda status=status, **_: [
            {"probe": "threaded dpotrf n=10", "status": status, "wall_s": 0.0}])
        assert doctor_command.run(args) == code, status
    assert doctor_command.run(argparse.Namespace(probe=False, probe_size=None, timeout=1.0,
                                                 json=True)) == 0
    capsys.readouterr()


def test_figures_help_states_its_own_exit_statuses(tmp_path, capsys):
    """`quadnet figures --help`: exit 0 / 1 / 2 / 130, 143, never the 3 of verify (figures
    never exits 3) and no --json (figures writes none); an unknown figure name is 2."""
    from quadnet.harness.cli import main

    with pytest.raises(SystemExit):
        main(["figures", "--help"])
    epilog = capsys.readouterr().out.split("exit status:")[1]
    assert "saved in --json" not in epilog and not re.search(r"^\s+3\s", epilog, flags=re.M)
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"schema": "quadnet-report/1", "checks": [], "passed": True,
                                  "seed": 0, "mode": "quick", "versions": {}}))
    assert main(["figures", "--from", str(report), "no_such_figure",
                 "--out", str(tmp_path / "f")]) == 2
    capsys.readouterr()


def test_effective_spectrum_solver_choice_of_curvature_page():
    """docs/curvature.md §4: ARPACK for `preconditioner=None` (the default) and always for
    `which="largest"`; LOBPCG for `"population"`, or `"auto"` on `GaussianSensing` with
    `which="smallest"` (another loss has no population preconditioner: ARPACK)."""
    import inspect

    prob = qn.GaussianSensing.random(6, 2, 60, seed=0)
    U = prob.U_star
    assert inspect.signature(qn.effective_spectrum).parameters["preconditioner"].default is None

    def method(loss, V, **kw):
        return qn.effective_spectrum(loss, V, k=1, **kw).method

    assert method(prob, U) == "eigsh"
    for pc in (None, "auto", "population"):
        assert method(prob, U, which="largest", preconditioner=pc) == "eigsh"
    assert method(prob, U, preconditioner="auto") == "lobpcg"
    assert method(prob, U, preconditioner="population") == "lobpcg"
    frob = qn.FrobeniusLoss(np.diag([3.0, 2.0, 0.0, 0.0]))
    assert method(frob, np.eye(4, 2) * np.sqrt([3.0, 2.0]), preconditioner="auto") == "eigsh"


def test_refused_sweep_exits_2_and_leaves_nothing(tmp_path, capsys):
    """README, "Sweeps": "Everything is checked before the store is created (the grid values,
    the store path, ...): a refused sweep exits with status 2 and leaves nothing on disk"."""
    from quadnet.harness.cli import main

    store = tmp_path / "store"
    assert main(["sweep", "quotient-gd", "--quick", "--set", "d=abc", "--store", str(store)]) == 2
    assert main(["sweep", "quotient-gd", "--quick", "--set", "nosuch=1",
                 "--store", str(store)]) == 2
    assert not store.exists()
    capsys.readouterr()


def test_a_store_of_other_parameters_is_refused(tmp_path, capsys):
    """README, "Sweeps": "A store made by another sweep or other parameters is refused"; the
    same command again resumes (here: nothing left to run)."""
    from quadnet.harness.cli import main

    store = str(tmp_path / "store")
    one = ["--quick", "--set", "d=3", "--set", "r=1", "--set", "trial=0", "--set",
           "eta_scale=0.1", "--store", store, "--workers", "0", "--no-progress"]
    assert main(["sweep", "quotient-gd", *one]) == 0
    assert main(["sweep", "quotient-gd", *one]) == 0
    assert "1 already finished" in capsys.readouterr().out
    other = [a if a != "r=1" else "r=2" for a in one]
    assert main(["sweep", "quotient-gd", *other]) == 2
    assert main(["sweep", "selection", "--quick", "--store", store, "--workers", "0"]) == 2
    assert "refusing to mix results" in capsys.readouterr().err


def test_subpackages_re_export_what_their_docstrings_say():
    """The docstrings of quadnet.geometry, curvature, sensing, commuting and features: "Every
    public name of the subpackage is re-exported here" (with the exceptions they name)."""
    import importlib
    import pkgutil

    for sub in ("geometry", "curvature", "sensing", "commuting", "features"):
        pkg = importlib.import_module(f"quadnet.{sub}")
        assert "Every public name of the subpackage" in pkg.__doc__
        for info in pkgutil.iter_modules(pkg.__path__):
            if info.name.startswith("_") or info.ispkg:
                continue
            mod = importlib.import_module(f"quadnet.{sub}.{info.name}")
            for name in getattr(mod, "__all__", ()):
                if name not in pkg.__all__:
                    assert f"quadnet.{sub}.{info.name}" in pkg.__doc__.replace("\n", " "), \
                        (sub, info.name, name)


def test_readme_api_tour_runs():
    """README, "API tour": the tour's Python block runs as printed (its asserts included),
    without a deprecation or a quadnet warning."""
    import warnings

    from quadnet.exceptions import QuadnetWarning

    text = _text("README.md")
    tour = text.split("## API tour", 1)[1]
    block = re.findall(r"^```python\n(.*?)^```", tour, flags=re.S | re.M)[0]
    assert 'field="complex"' in block
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        warnings.simplefilter("error", QuadnetWarning)
        exec(compile(block, "README.md (API tour)", "exec"), namespace)
    assert namespace["lim"].converged and namespace["fit"].converged
