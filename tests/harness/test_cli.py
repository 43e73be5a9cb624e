"""The ``quadnet`` command: verify, figures, report (sweep is tested in test_sweeps.py).

Checks registered here are tiny stand-ins (names start with ``_t``) so the CLI logic is tested
in milliseconds; they are removed from the registry after each test.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from quadnet.harness import checks
from quadnet.harness.checks import CheckResult, register
from quadnet.harness.checks._base import FIGURES, REGISTRY, figure
from quadnet.harness.cli import main, results_markdown


@figure("_tpass_curve")
def _draw(data: dict):
    import matplotlib.pyplot as plt
    import numpy as np

    x = np.linspace(0.0, 1.0, data["n"])
    noise = np.asarray(data["noise"], float)
    fig, ax = plt.subplots(figsize=(3.4, 2.5))
    ax.plot(x, np.exp(-3 * x) + 0.01 * noise, label="measured")
    ax.axhline(0.5, ls="--", color="k", label="paper: 0.5")
    ax.set_xlabel("t (time units)")
    ax.set_ylabel("error")
    ax.legend()
    return fig


@pytest.fixture
def fake_checks():
    """Three stand-in checks: one passing with a figure, one failing, one raising."""

    @register("_tpass", "a claim that holds", order=-3)
    def _pass(ctx):
        res = CheckResult("_tpass", "a claim that holds")
        res.add("error | of something", 1e-14, 1e-12, paper="exact", kind="theorem",
                source="Cheng (2026) §1")
        res.add("cosine", 0.999, 0.99, relation=">=", paper="0.994")
        res.metrics["n"] = 3
        ctx.draw(res, "_tpass_curve", {"n": 200, "seed": ctx.seed,
                                        "noise": ctx.rng("figure").standard_normal(200)})
        return res

    @register("_tfail", "a claim that does not hold", order=-2)
    def _fail(ctx):
        res = CheckResult("_tfail", "a claim that does not hold")
        res.add("error", 1.0, 1e-6, paper="1e-6")
        return res

    @register("_tboom", "a check that crashes", order=-1)
    def _boom(ctx):
        raise RuntimeError("boom")

    yield ["_tpass", "_tfail", "_tboom"]
    for name in ("_tpass", "_tfail", "_tboom"):
        REGISTRY.pop(name, None)


def test_verify_passing_check_writes_json_report(fake_checks, tmp_path, capsys):
    out = tmp_path / "r.json"
    rc = main(["verify", "_tpass", "--quick", "--json", str(out), "--figures", "",
               "--seed", "7"])
    assert rc == 0
    cap = capsys.readouterr()
    assert "PASS" in cap.out and "1 check: 1 passed" in cap.out
    assert "wall time" in cap.out.splitlines()[-1]
    # quick mode ends with a note on its time, worded as a note (never as a failure)
    assert "[quadnet] note: the checks took" in cap.err and "measured reference" in cap.err
    assert "OVER" not in cap.err and "budget" not in cap.err
    rep = json.loads(out.read_text())
    assert rep["passed"] is True and rep["seed"] == 7 and rep["mode"] == "quick"
    (chk,) = rep["checks"]
    assert {"name", "claim", "passed", "status", "metrics", "figure_data"} <= set(chk)
    assert chk["metrics"] == {"n": 3} and chk["figures"] == []  # --figures '' draws nothing
    assert chk["figure_data"]["_tpass_curve"]["n"] == 200  # ... but keeps the figure's data
    assert {"numpy", "quadnet", "python"} <= set(rep["versions"])
    assert set(rep["seconds"]) == {"_tpass"} and rep["seconds_total"] >= 0


def test_verify_failure_and_crash_give_nonzero_exit_but_all_checks_run(fake_checks, tmp_path,
                                                                       capsys):
    out = tmp_path / "r.json"
    rc = main(["verify", *fake_checks, "--quick", "--json", str(out), "--figures", ""])
    assert rc == 1
    cap = capsys.readouterr()
    assert "3 checks: 1 passed, 2 failed" in cap.out
    assert "RuntimeError: boom" in cap.err  # the traceback of the crashing check is shown
    rep = json.loads(out.read_text())
    assert [c["passed"] for c in rep["checks"]] == [True, False, False]
    assert rep["checks"][2]["metrics"]["error"] == "RuntimeError: boom"


def test_unknown_check_names_are_refused(fake_checks, capsys):
    assert main(["verify", "_tpass", "no_such_check"]) == 2
    err = capsys.readouterr().err
    assert "unknown check(s) no_such_check" in err and "_tpass" in err
    assert main(["figures", "no_such_check"]) == 2
    assert "unknown check(s) no_such_check" in capsys.readouterr().err


def test_figures_are_deterministic_png_and_pdf(fake_checks, tmp_path, capsys):
    digests = []
    for run in ("a", "b"):
        assert main(["figures", "_tpass", "--quick", "--out", str(tmp_path / run)]) == 0
        files = sorted((tmp_path / run).iterdir())
        assert [f.name for f in files] == ["_tpass_curve.pdf", "_tpass_curve.png"]
        digests.append([hashlib.sha256(f.read_bytes()).hexdigest() for f in files])
    assert digests[0] == digests[1]  # same seed => byte-identical PNG and PDF
    assert main(["figures", "_tpass", "--quick", "--seed", "1", "--out", str(tmp_path / "c")]) \
        == 0
    png = (tmp_path / "c" / "_tpass_curve.png").read_bytes()
    assert hashlib.sha256(png).hexdigest() != digests[0][1]  # the seed reaches the figure
    capsys.readouterr()


def test_figures_exit_code_reports_failing_checks(fake_checks, tmp_path, capsys):
    assert main(["figures", "_tpass", "_tfail", "--quick", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "_tfail did not pass" in err
    assert "recomputed in quick mode" in err  # says plainly that it recomputes, and how
    assert (tmp_path / "_tpass_curve.png").exists()


def test_report_markdown_table(fake_checks, tmp_path, capsys):
    js = tmp_path / "r.json"
    main(["verify", *fake_checks, "--quick", "--json", str(js), "--figures", ""])
    capsys.readouterr()
    md = tmp_path / "t.md"
    assert main(["report", str(js), "--out", str(md)]) == 0
    lines = md.read_text().splitlines()
    assert lines[0] == ("| check | claim | kind | source | reference value | measured | "
                        "tolerance | status |")
    assert lines[2] == ("| _tpass | error \\| of something | theorem | Cheng (2026) §1 | exact | "
                        "1.00e-14 | <= 1.00e-12 | PASS |")
    assert lines[3] == "| _tpass | cosine | - | - | 0.994 | 0.999 | >= 0.99 | PASS |"
    assert lines[4].endswith("| **FAIL** |")
    assert "RuntimeError: boom" in lines[5]
    assert any(ln.startswith("* Cheng (2026): ") for ln in lines)  # the full reference
    assert lines[-1].startswith("_quick mode, seed 0")
    assert results_markdown(json.loads(js.read_text())) == md.read_text()


def test_report_bad_input(tmp_path, capsys):
    assert main(["report", str(tmp_path / "missing.json")]) == 2
    (tmp_path / "x.json").write_text('{"not": "a report"}')
    assert main(["report", str(tmp_path / "x.json")]) == 2
    assert "no 'checks' list" in capsys.readouterr().err


def test_every_registered_check_has_a_unique_name_and_claim():
    names = checks.available()
    assert len(names) == len(set(names))
    for name in names:
        assert checks.get(name).claim.strip()


def test_readme_api_tour_runs(tmp_path):
    """The README's Python blocks run as written (they are the users' first contact)."""
    import re
    import runpy
    import warnings
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert blocks, "README has no python block"
    saved = dict(REGISTRY)  # the "your own checks" block registers a check: undone below
    try:
        for i, block in enumerate(blocks):
            script = tmp_path / f"readme_{i}.py"
            script.write_text(block, encoding="utf-8")
            with warnings.catch_warnings():
                warnings.simplefilter("error", DeprecationWarning)  # the tour: current names
                runpy.run_path(str(script), run_name="__main__")
        assert "my-identity" in REGISTRY
    finally:
        REGISTRY.clear()
        REGISTRY.update(saved)


# ------------------------------------------------------------------ the honest report
@pytest.fixture
def report_checks():
    """Stand-ins for the report's statuses: a REPORTED row, SKIPPED rows, a long claim, a
    figure that is skipped with its rows, and a drawer that fails."""
    long_claim = ("a claim that is much longer than any column of the table, so that it must "
                  "be wrapped over several lines and never cut at seventy characters (det)")

    @register("_tskip", "a claim with rows that cannot run", order=-6)
    def _skip(ctx):
        res = CheckResult("_tskip", "a claim with rows that cannot run")
        res.add(long_claim, 1e-14, 1e-12, paper="exact", kind="theorem",
                source="Cheng (2026) §1")
        res.report("measured without a tolerance", 13.0, paper="no claim",
                   source="quadnet exploration")
        for k in range(2):
            res.skip(f"needs a solver, part {k}", "needs cvxpy; install: python -m pip "
                     "install cvxpy", paper="independent solve", source="quadnet target")
        ctx.draw(res, "_tskip_fig", {"n": 200, "noise": [0.0] * 200},
                 skip_reason="its SDP curves need cvxpy")
        return res

    @register("_tbadfig", "a check whose figure fails", order=-5)
    def _badfig(ctx):
        res = CheckResult("_tbadfig", "a check whose figure fails")
        res.add("error", 1e-14, 1e-12, paper="exact")
        ctx.draw(res, "_tbadfig_fig", {"x": 1})
        return res

    @figure("_tbadfig_fig")
    def _bad(data):
        raise RuntimeError("drawer bug")

    yield {"names": ["_tskip", "_tbadfig"], "long_claim": long_claim}
    for name in ("_tskip", "_tbadfig"):
        REGISTRY.pop(name, None)
    FIGURES.pop("_tbadfig_fig", None)


def test_reported_and_skipped_rows_are_counted_named_and_exit_3(report_checks, tmp_path,
                                                                  capsys):
    js = tmp_path / "r.json"
    rc = main(["verify", "_tskip", "--quick", "--json", str(js), "--figures",
               str(tmp_path / "figs")])
    assert rc == 3  # nothing failed, rows skipped
    out = capsys.readouterr().out
    assert "REPORTED" in out and "SKIPPED" in out
    assert ("1 check: 0 passed, 1 partly skipped: 2 rows need cvxpy (install: python -m pip "
            "install cvxpy)") in out
    assert "4 rows: 1 PASS, 0 FAIL, 1 REPORTED (measured, no tolerance), 2 SKIPPED" in out
    assert out.count("SKIPPED _tskip: needs a solver, part") == 2
    assert "python -m pip install cvxpy" in out
    assert "figure _tskip_fig (_tskip): not written: its SDP curves need cvxpy" in out
    assert not (tmp_path / "figs" / "_tskip_fig.png").exists()  # never half drawn
    rep = json.loads(js.read_text())
    rows = rep["checks"][0]["rows"]
    assert [r["status"] for r in rows] == ["PASS", "REPORTED", "SKIPPED", "SKIPPED"]
    assert rows[2]["measured"] is None and "cvxpy" in rows[2]["reason"]
    assert rep["checks"][0]["status"] == "PARTLY SKIPPED"


def test_long_claims_are_wrapped_never_cut(report_checks, capsys):
    main(["verify", "_tskip", "--quick", "--figures", ""])
    out = capsys.readouterr().out
    words = " ".join(ln.split("  ")[1] if "  " in ln else "" for ln in out.splitlines())
    for word in report_checks["long_claim"].split():
        assert word in out
    assert "(det)" in out and "seventy" in words or "seventy" in out
    assert max(len(ln) for ln in out.splitlines() if ln.startswith("_tskip")) < 170


def test_a_failing_figure_keeps_the_results(report_checks, tmp_path, capsys):
    js = tmp_path / "r.json"
    rc = main(["verify", "_tbadfig", "--quick", "--json", str(js), "--figures", str(tmp_path)])
    cap = capsys.readouterr()
    assert rc == 0  # the rows passed; the figure problem is reported, not a FAIL
    assert "figure '_tbadfig_fig' could not be drawn: RuntimeError: drawer bug" in cap.err
    rep = json.loads(js.read_text())
    assert rep["checks"][0]["rows"][0]["status"] == "PASS"
    assert "drawer bug" in rep["checks"][0]["figure_notes"]["_tbadfig_fig"]


def test_formats_markdown_latex_json(fake_checks, tmp_path, capsys):
    js = tmp_path / "r.json"
    main(["verify", "_tpass", "--quick", "--json", str(js), "--figures", ""])
    capsys.readouterr()
    assert main(["report", str(js), "--format", "latex"]) == 0
    tex = capsys.readouterr().out
    assert r"\toprule" in tex and r"\midrule" in tex and r"\bottomrule" in tex
    assert r"error $|$ of something" in tex and r"$\ge$" not in tex.split(r"\midrule")[0]
    assert main(["verify", "_tpass", "--quick", "--figures", "", "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["checks"][0]["status"] == "PASS"
    assert main(["verify", "_tpass", "--quick", "--figures", "", "--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("| check | claim | kind |")


def test_unwritable_output_fails_fast_before_any_computation(tmp_path, capsys):

    ran = []

    @register("_tslow", "would take long", order=-9)
    def _slow(ctx):
        ran.append(1)
        return CheckResult("_tslow", "would take long")

    try:
        rc = main(["verify", "--quick", "--figures", "/proc/nope", "_tslow"])
        err = capsys.readouterr().err
        assert rc == 2 and not ran          # refused before any check ran
        assert "--figures '/proc/nope' is not writable" in err
        blocker = tmp_path / "file"
        blocker.write_text("")
        assert main(["verify", "_tslow", "--json", str(blocker / "r.json")]) == 2
        assert main(["figures", "--out", "/proc/nope"]) == 2
        assert "is not writable" in capsys.readouterr().err and not ran
    finally:
        REGISTRY.pop("_tslow", None)


def test_quick_mode_draws_no_figures_by_default(fake_checks, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["verify", "_tpass", "--quick"]) == 0
    assert not (tmp_path / "figures").exists()  # the committed figures are left alone
    assert main(["verify", "_tpass", "--quick", "--figures", "qf"]) == 0
    assert (tmp_path / "qf" / "_tpass_curve.png").exists()
    capsys.readouterr()


def test_figures_from_report_redraw_without_recomputing(fake_checks, tmp_path, capsys):
    js = tmp_path / "r.json"
    assert main(["verify", "_tpass", "--quick", "--json", str(js), "--figures",
                 str(tmp_path / "a")]) == 0
    calls = []
    spec = REGISTRY["_tpass"]
    orig = spec.run
    spec.run = lambda ctx: calls.append(1) or orig(ctx)
    try:
        assert main(["figures", "--from", str(js), "--out", str(tmp_path / "b")]) == 0
    finally:
        spec.run = orig
    assert not calls  # nothing recomputed
    err = capsys.readouterr().err
    assert "nothing recomputed" in err
    for ext in ("png", "pdf"):
        a = (tmp_path / "a" / f"_tpass_curve.{ext}").read_bytes()
        b = (tmp_path / "b" / f"_tpass_curve.{ext}").read_bytes()
        assert hashlib.sha256(a).digest() == hashlib.sha256(b).digest()
    assert main(["figures", "--from", str(tmp_path / "missing.json")]) == 2


def test_help_documents_exit_codes_and_quick_figures(capsys):
    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    out = capsys.readouterr().out
    assert "exit status" in out and "3  nothing failed" in out
    assert "committed paper-scale figures" in " ".join(out.split())


def test_without_cvxpy_rows_are_skipped_and_named(tmp_path):
    """The README's first command on an install without cvxpy: the selection check (quick)
    reports SKIPPED rows with the install command and exits 3; nothing fails."""
    import subprocess
    import sys

    js = tmp_path / "r.json"
    code = ("import sys; sys.modules['cvxpy'] = None\n"
            "from quadnet.harness.cli import main\n"
            f"raise SystemExit(main(['verify', 'selection', '--quick', '--json', {str(js)!r},"
            f" '--figures', {str(tmp_path / 'f')!r}, '--no-progress']))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-2000:]
    rep = json.loads(js.read_text())
    rows = rep["checks"][0]["rows"]
    skipped = [r for r in rows if r["status"] == "SKIPPED"]
    # quick mode: 2 cvxpy comparisons in (b), the tie-split in (d), 2 x 2 exploratory rows (f)
    assert len(skipped) == 7
    assert all("python -m pip install cvxpy" in r["reason"] for r in skipped)
    assert not any(r["status"] == "FAIL" for r in rows)
    assert "1 partly skipped: 7 rows need cvxpy" in proc.stdout
    assert rep["versions"]["cvxpy"]  # recorded (installed here; hidden from the import)


# ------------------------------------------------------------------ the command table
def test_help_lists_the_commands_of_the_table_without_importing_them():
    import subprocess
    import sys

    code = ("import sys\nfrom quadnet.harness.cli import COMMANDS, main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('quadnet.harness.cli.')))\n"
            "print(list(COMMANDS))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    *helps, loaded, names = proc.stdout.rstrip("\n").split("\n")
    assert loaded == "['quadnet.harness.cli._common']"  # no command module was imported
    assert names == str(["verify", "figures", "sweep", "report", "compare", "new-check",
                         "doctor"])
    assert helps[0].startswith("usage: quadnet [-h] "
                               "{verify,figures,sweep,report,compare,new-check,doctor} ...")


def test_every_command_module_has_the_same_two_functions(capsys):
    import argparse
    import importlib

    from quadnet.harness import cli

    full = cli.build_parser()
    subparsers = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    assert list(subparsers.choices) == list(cli.COMMANDS)
    for name, info in cli.COMMANDS.items():
        module = importlib.import_module(info.module)
        assert callable(module.add_parser) and callable(module.run), name
        # the parser main builds for one command gives the same --help as the full parser
        helps = []
        for parser in (full, cli.build_parser([name])):
            with pytest.raises(SystemExit):
                parser.parse_args([name, "--help"])
            helps.append(capsys.readouterr().out)
        assert helps[0] == helps[1] and info.summary, name
        assert subparsers.choices[name].get_default("func") is module.run, name


def test_the_old_command_names_still_resolve():
    from quadnet.harness import cli, compare
    from quadnet.harness.cli import compare as compare_command
    from quadnet.harness.cli import verify

    assert cli.cmd_verify is verify.run and cli.QUICK_MEASURED is verify.QUICK_MEASURED
    assert cli.quick_time_claim is verify.quick_time_claim
    assert compare.cmd_compare is compare_command.run
    assert compare.EXIT_BAD_INPUT == compare_command.EXIT_BAD_INPUT == 2
    import argparse

    parser = argparse.ArgumentParser(prog="quadnet")
    compare.add_parser(parser.add_subparsers(dest="command"))
    assert parser.parse_args(["compare", "a", "b"]).func is compare_command.run
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        cli.nothing_here  # noqa: B018
