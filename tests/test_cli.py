"""The ``quadnet`` command: verify, figures, report (sweep is tested in test_sweeps.py).

Checks registered here are tiny stand-ins (names start with ``_t``) so the CLI logic is tested
in milliseconds; they are removed from the registry after each test.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from quadnet.harness import checks
from quadnet.harness.checks import CheckContext, CheckResult, register
from quadnet.harness.checks._base import REGISTRY
from quadnet.harness.cli import main, results_markdown


def _draw(ctx: CheckContext, stem: str) -> list[str]:
    import matplotlib.pyplot as plt
    import numpy as np

    x = np.linspace(0.0, 1.0, 200)
    noise = ctx.rng("figure").standard_normal(200)
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot(x, np.exp(-3 * x) + 0.01 * noise, label="measured")
    ax.axhline(0.5, ls="--", color="k", label="paper: 0.5")
    ax.set_xlabel("t (time units)")
    ax.set_ylabel("error")
    ax.legend()
    return ctx.savefig(fig, stem)


@pytest.fixture
def fake_checks():
    """Three stand-in checks: one passing with a figure, one failing, one raising."""

    @register("_tpass", "a claim that holds", order=-3)
    def _pass(ctx):
        res = CheckResult("_tpass", "a claim that holds")
        res.add("error | of something", 1e-14, 1e-12, paper="exact")
        res.add("cosine", 0.999, 0.99, relation=">=", paper="0.994")
        res.metrics["n"] = 3
        res.figures += _draw(ctx, "_tpass_curve")
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
    assert "PASS" in cap.out and "1 of 1 checks passed" in cap.out
    assert "quick budget" in cap.err  # the --quick budget line
    rep = json.loads(out.read_text())
    assert rep["passed"] is True and rep["seed"] == 7 and rep["mode"] == "quick"
    (chk,) = rep["checks"]
    assert {"name", "claim", "passed", "metrics"} <= set(chk)
    assert chk["metrics"] == {"n": 3} and chk["figures"] == []  # --figures '' draws nothing
    assert {"numpy", "quadnet", "python"} <= set(rep["versions"])
    assert set(rep["seconds"]) == {"_tpass"} and rep["seconds_total"] >= 0


def test_verify_failure_and_crash_give_nonzero_exit_but_all_checks_run(fake_checks, tmp_path,
                                                                       capsys):
    out = tmp_path / "r.json"
    rc = main(["verify", *fake_checks, "--quick", "--json", str(out), "--figures", ""])
    assert rc == 1
    cap = capsys.readouterr()
    assert "1 of 3 checks passed" in cap.out
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
    assert "_tfail did not pass" in capsys.readouterr().err
    assert (tmp_path / "_tpass_curve.png").exists()


def test_report_markdown_table(fake_checks, tmp_path, capsys):
    js = tmp_path / "r.json"
    main(["verify", *fake_checks, "--quick", "--json", str(js), "--figures", ""])
    capsys.readouterr()
    md = tmp_path / "t.md"
    assert main(["report", str(js), "--out", str(md)]) == 0
    lines = md.read_text().splitlines()
    assert lines[0] == "| check | claim | paper | measured | tolerance | pass |"
    assert lines[2] == "| _tpass | error \\| of something | exact | 1.00e-14 | <= 1.00e-12 | PASS |"
    assert lines[3] == "| _tpass | cosine | 0.994 | 0.999 | >= 0.99 | PASS |"
    assert lines[4].endswith("| **FAIL** |")
    assert "RuntimeError: boom" in lines[5]
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
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert blocks, "README has no python block"
    for i, block in enumerate(blocks):
        script = tmp_path / f"readme_{i}.py"
        script.write_text(block, encoding="utf-8")
        runpy.run_path(str(script), run_name="__main__")
