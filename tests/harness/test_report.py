"""``quadnet.harness.report``: one reader, one writer, one set of renderers and formatters.

Every command that reads a report (``report``, ``figures --from``, ``verify --resume``,
``compare``) reads it with :func:`read_report`, so each refuses the same files with the same
message naming the file; the tables of ``verify``, ``report`` and ``compare`` print numbers
with one formatter, and durations go through one formatter.
"""

from __future__ import annotations

import json

import pytest

from quadnet.harness import compare, draw_figure, report
from quadnet.harness.checks import CheckResult, register
from quadnet.harness.checks._base import REGISTRY
from quadnet.harness.cli import main


def _valid(**extra) -> dict:
    return {"schema": "quadnet-report/1", "checks": [], "passed": True, "seed": 0,
            "mode": "quick", "versions": {}, **extra}


def _bad_files(tmp_path) -> dict:
    files = {"text.json": "not json", "list.json": "[1, 2]",
             "nochecks.json": json.dumps({"not": "a report"}),
             "future.json": json.dumps(_valid(schema="quadnet-report/2")),
             "broken.json": json.dumps(_valid(mode="fast"))}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return {name: tmp_path / name for name in [*files, "missing.json"]}


def test_every_reader_refuses_the_same_files_with_the_same_message(tmp_path, capsys):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_valid()))
    commands = {
        "report": lambda f: ["report", str(f)],
        "figures": lambda f: ["figures", "--from", str(f), "--out", str(tmp_path / "figs")],
        "verify": lambda f: ["verify", "quotient", "--quick", "--figures", "", "--resume",
                             str(f)],
        "compare": lambda f: ["compare", str(good), str(f)],
    }
    for name, path in _bad_files(tmp_path).items():
        if name == "missing.json":
            continue  # verify --resume starts a new report there: below
        with pytest.raises(report.ReportError) as info:
            report.read_report(path)
        message = str(info.value)
        assert repr(str(path)) in message, message  # the message names the file
        for cmd, argv in commands.items():
            assert main(argv(path)) == 2, (cmd, name)
            err = capsys.readouterr().err
            assert message in err, (cmd, name, err)
    missing = tmp_path / "missing.json"
    for cmd in ("report", "figures", "compare"):
        assert main(commands[cmd](missing)) == 2, cmd
        assert f"cannot read {str(missing)!r}: No such file" in capsys.readouterr().err


def test_messages_of_the_readers(tmp_path, capsys):
    bad = _bad_files(tmp_path)
    assert main(["report", str(bad["broken.json"])]) == 2
    assert capsys.readouterr().err == (
        f"quadnet report: {str(bad['broken.json'])!r} is not a valid quadnet-report/1 report: "
        "mode: 'fast' is not one of ['quick', 'full']\n")
    assert main(["verify", "quotient", "--resume", str(bad["nochecks.json"])]) == 2
    assert capsys.readouterr().err == (
        f"quadnet verify: --resume {str(bad['nochecks.json'])!r} is not a quadnet verify "
        "--json report (no 'checks' list)\n")
    assert main(["figures", "--from", str(bad["future.json"]), "--out",
                 str(tmp_path / "f")]) == 2
    assert capsys.readouterr().err == (
        f"quadnet figures: --from {str(bad['future.json'])!r} has schema 'quadnet-report/2'; "
        "this quadnet reads 'quadnet-report/1' (and reports without a schema field)\n")
    with pytest.raises(report.ReportError, match=r"^report: .* is not JSON"):
        draw_figure("selection_eta", bad["text.json"])


def test_a_report_without_the_schema_field_is_read_everywhere(tmp_path, capsys):
    legacy = tmp_path / "legacy.json"
    legacy.write_text(json.dumps({k: v for k, v in _valid().items() if k != "schema"}))
    assert report.read_report(legacy)["schema"] == "quadnet-report/0"
    assert main(["report", str(legacy), "--format", "text"]) == 0
    assert main(["figures", "--from", str(legacy), "--out", str(tmp_path / "f")]) == 0
    assert main(["compare", str(legacy), str(legacy)]) == 0
    capsys.readouterr()


def test_the_old_names_are_the_report_package_objects():
    from quadnet.harness import cli

    assert compare.REPORT_SCHEMA == cli.REPORT_SCHEMA == report.REPORT_SCHEMA
    for name in ("ReportError", "read_report", "report_schema", "validate_report",
                 "compare_reports", "format_comparison", "Comparison", "COMPARE_SCHEMA",
                 "DEFAULT_FACTOR", "DEFAULT_FLOOR"):
        assert getattr(compare, name) is getattr(report, name), name
    for name in ("write_json_atomic", "format_report", "results_text", "results_markdown",
                 "results_latex", "summary_lines", "REFERENCES"):
        assert getattr(cli, name) is getattr(report, name), name


def test_one_duration_formatter():
    from quadnet.harness import cli

    from quadnet import _progress

    assert _progress.format_duration is report.format_duration  # the progress lines' ETA
    wall = cli.QUICK_MEASURED["wall_seconds"]
    assert f"; {report.format_duration(wall)} wall measured on" in cli.quick_time_claim()
    assert [report.format_duration(s) for s in (0.4, 89.4, 90.0, 150.0, 5399.0, 5400.0)] == \
        ["0 s", "89 s", "2 min", "2 min", "90 min", "1.5 h"]


@pytest.fixture
def number_rows():
    @register("_tnum", "numbers of every size", order=-30)
    def _num(ctx):
        res = CheckResult("_tnum", "numbers of every size")
        for claim, x in (("zero", 0.0), ("int", 42.0), ("mid", 0.99412), ("tiny", 1.5e-14),
                         ("big", 123456.0), ("neg", -2.5e-4)):
            res.add(claim, x, 1e6, relation="<=")
        return res

    yield
    REGISTRY.pop("_tnum", None)


def test_one_number_formatter_for_verify_report_and_compare(number_rows, tmp_path, capsys):
    js = tmp_path / "r.json"
    assert main(["verify", "_tnum", "--quick", "--figures", "", "--format", "markdown",
                 "--json", str(js), "--no-progress"]) == 0
    streamed = capsys.readouterr().out
    saved = report.read_report(js)
    expected = [report.format_number(x) for x in (0.0, 42.0, 0.99412, 1.5e-14, 123456.0,
                                                  -2.5e-4)]
    assert expected == ["0", "42", "0.9941", "1.50e-14", "1.23e+05", "-2.50e-04"]
    rows = [ln.split(" | ") for ln in streamed.splitlines() if ln.startswith("| _tnum")]
    assert [r[5] for r in rows] == expected
    assert [r[6] for r in rows] == ["<= 1.00e+06"] * 6
    assert streamed == report.format_report(saved, "markdown")  # the same renderer
    moved = json.loads(js.read_text())
    for row in moved["checks"][0]["rows"]:
        row["measured"] = row["measured"] * 1000 + 1.0
    other = tmp_path / "moved.json"
    other.write_text(json.dumps(moved))
    assert main(["compare", str(js), str(other)]) == 1
    out = capsys.readouterr().out
    assert "measured 1.23e+05 -> 1.23e+08" in out and "old PASS 0.9941 (<= 1.00e+06)" in out
