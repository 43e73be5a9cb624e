"""``quadnet verify`` streams, saves after every check, resumes and stops cleanly.

The checks are tiny stand-ins (names start with ``_t``), registered here (in-process tests)
or in a child script (the tests that send signals or kill the run); a stand-in that must be
"in the middle of its work" waits for the test, never for a clock.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from quadnet import _progress
from quadnet.harness.checks import CheckResult, register
from quadnet.harness.checks._base import REGISTRY
from quadnet.harness.cli import main, write_json_atomic

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def two_checks():
    """``_ta`` then ``_tb``; each records that it ran, ``_tb`` prints when it starts."""
    ran = []

    @register("_ta", "first claim", order=-20)
    def _a(ctx):
        ran.append("_ta")
        res = CheckResult("_ta", "first claim")
        res.add("error of the first check", 1e-14, 1e-12, paper="exact", kind="theorem",
                source="Cheng (2026) §1")
        return res

    @register("_tb", "second claim", order=-19)
    def _b(ctx):
        ran.append("_tb")
        print("MARK: _tb started", flush=True)
        res = CheckResult("_tb", "second claim")
        res.add("cosine of the second check", 0.999, 0.99, relation=">=")
        return res

    yield ran
    for name in ("_ta", "_tb"):
        REGISTRY.pop(name, None)


# ------------------------------------------------------------------ streaming
@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_rows_of_a_check_are_printed_before_the_next_check_starts(two_checks, fmt, capsys):
    assert main(["verify", "_ta", "_tb", "--quick", "--figures", "", "--format", fmt]) == 0
    out = capsys.readouterr().out
    first, mark = out.index("error of the first check"), out.index("MARK: _tb started")
    second = out.index("cosine of the second check")
    assert first < mark < second
    assert out.count("| check | claim |" if fmt == "markdown" else "reference value") == 1
    assert "2 checks: 2 passed" in out and "wall time" in out.splitlines()[-1 if fmt == "text"
                                                                           else -3]


def test_streamed_markdown_equals_the_report_table(two_checks, tmp_path, capsys):
    from quadnet.harness.cli import results_markdown

    js = tmp_path / "r.json"
    main(["verify", "_ta", "_tb", "--quick", "--figures", "", "--format", "markdown",
          "--json", str(js)])
    out = capsys.readouterr().out.replace("MARK: _tb started\n", "")
    rep = json.loads(js.read_text())
    # the same table, except the total wall time, which grows while the summary is printed
    strip = [ln for ln in out.splitlines() if "wall time" not in ln and "in all" not in ln]
    want = [ln for ln in results_markdown(rep).splitlines()
            if "wall time" not in ln and "in all" not in ln]
    assert strip == want


def test_latex_and_json_are_printed_once_at_the_end(two_checks, capsys):
    assert main(["verify", "_ta", "_tb", "--quick", "--figures", "", "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert out.index("MARK: _tb started") < out.index("{")  # the document comes last
    rep = json.loads(out[out.index("{"):])
    assert [c["name"] for c in rep["checks"]] == ["_ta", "_tb"] and rep["complete"] is True


# ------------------------------------------------------------------ the saved report
def test_report_records_version_seed_mode_and_times_per_check(two_checks, tmp_path, capsys):
    import quadnet

    js = tmp_path / "r.json"
    assert main(["verify", "_ta", "_tb", "--quick", "--figures", "", "--json", str(js),
                 "--seed", "5"]) == 0
    rep = json.loads(js.read_text())
    assert rep["complete"] is True and rep["requested"] == ["_ta", "_tb"]
    for chk in rep["checks"]:
        run = chk["run"]
        assert run["quadnet"] == quadnet.__version__ and run["seed"] == 5
        assert run["mode"] == "quick"
        assert run["seconds"] >= 0 and run["cpu_seconds"] >= 0 and "T" in run["finished"]
    assert set(rep["seconds"]) == set(rep["cpu_seconds"]) == {"_ta", "_tb"}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left
    assert "report saved after each check in" in capsys.readouterr().err


def test_write_json_atomic_keeps_the_old_file_when_the_write_fails(tmp_path):
    path = tmp_path / "r.json"
    write_json_atomic(path, {"checks": [1]})
    with pytest.raises(TypeError):
        write_json_atomic(path, {"checks": [object()]})  # not JSON-able: fails mid-way
    assert json.loads(path.read_text()) == {"checks": [1]}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


# ------------------------------------------------------------------ resume
def test_resume_skips_exactly_the_finished_checks_and_says_so(two_checks, tmp_path, capsys):
    js = tmp_path / "r.json"
    assert main(["verify", "_ta", "--quick", "--figures", "", "--json", str(js)]) == 0
    assert two_checks == ["_ta"]
    capsys.readouterr()
    assert main(["verify", "_ta", "_tb", "--quick", "--figures", "", "--resume", str(js)]) == 0
    assert two_checks == ["_ta", "_tb"]  # _ta did not run again
    cap = capsys.readouterr()
    assert (f"[quadnet] resume: skipping _ta (already in {js}, same version/seed/mode)"
            in cap.err)
    assert "[quadnet] resume: running _tb" in cap.err
    assert "error of the first check" in cap.out  # the kept rows are in the table too
    rep = json.loads(js.read_text())  # the merged report went back to FILE
    assert [c["name"] for c in rep["checks"]] == ["_ta", "_tb"] and rep["complete"]


def test_resume_without_names_runs_the_checks_the_report_was_asked_for(two_checks, tmp_path,
                                                                        capsys):
    js = tmp_path / "r.json"
    rep = {"schema": "quadnet-report/1", "checks": [], "passed": True, "requested": ["_ta", "_tb"],
           "seed": 0, "mode": "quick", "versions": {}}
    js.write_text(json.dumps(rep))
    assert main(["verify", "--quick", "--figures", "", "--resume", str(js)]) == 0
    assert two_checks == ["_ta", "_tb"]
    capsys.readouterr()
    assert main(["verify", "--quick", "--figures", "", "--resume", str(js)]) == 0
    assert two_checks == ["_ta", "_tb"]  # all done: nothing ran
    assert "resume: nothing left to run" in capsys.readouterr().err


def test_resume_reruns_checks_of_another_seed_or_mode_and_says_why(two_checks, tmp_path,
                                                                   capsys):
    js = tmp_path / "r.json"
    main(["verify", "_ta", "_tb", "--quick", "--figures", "", "--json", str(js)])
    capsys.readouterr()
    out = tmp_path / "merged.json"
    assert main(["verify", "_ta", "--quick", "--figures", "", "--seed", "3", "--resume",
                 str(js), "--json", str(out)]) == 0
    err = capsys.readouterr().err
    assert "resume: re-running _ta (seed 0 there, 3 now)" in err
    # _tb was not asked for and ran with another seed: it is not mixed into the new report
    assert "leaving out of the report _tb (seed 0 there, 3 now)" in err
    assert [c["name"] for c in json.loads(out.read_text())["checks"]] == ["_ta"]
    assert two_checks == ["_ta", "_tb", "_ta"]
    main(["verify", "_tb", "--figures", "", "--resume", str(js), "--json", str(out)])
    assert "resume: re-running _tb (mode quick there, full now)" in capsys.readouterr().err


def test_resume_refuses_a_file_that_is_not_a_report(two_checks, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a report"}')
    assert main(["verify", "_ta", "--resume", str(bad)]) == 2
    assert "is not a quadnet verify --json report (no 'checks' list)" in \
        capsys.readouterr().err
    assert two_checks == []  # refused before anything ran
    new = tmp_path / "new.json"
    assert main(["verify", "_ta", "--quick", "--figures", "", "--resume", str(new)]) == 0
    assert "does not exist yet, so every check runs" in capsys.readouterr().err
    assert json.loads(new.read_text())["checks"][0]["name"] == "_ta"


# ------------------------------------------------------------------ progress lines
def test_progress_lines_without_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr(_progress, "PROGRESS_INTERVAL", 0.0)  # a line at every step

    @register("_tprog", "a check with nested loops", order=-18)
    def _prog(ctx):
        res = CheckResult("_tprog", "a check with nested loops")
        for _ in ctx.progress(range(3), "outer", unit="cells"):
            for _ in ctx.progress(range(2), "inner"):
                pass
        res.add("error", 0.0, 1e-12)
        return res

    try:
        assert main(["verify", "_tprog", "--quick", "--figures", ""]) == 0
        err = capsys.readouterr().err.splitlines()
        assert main(["verify", "_tprog", "--quick", "--figures", "", "--no-progress"]) == 0
        quiet = capsys.readouterr().err
    finally:
        REGISTRY.pop("_tprog", None)
    lines = [ln for ln in err if ln.startswith("[quadnet] _tprog: ") and "PASS in" not in ln]
    assert lines[0] == "[quadnet] _tprog: outer 0/3 cells"  # the first line, at the start
    assert lines[-1].startswith("[quadnet] _tprog: outer 3/3 cells done in ")  # the last
    assert any(ln.startswith("[quadnet] _tprog: outer 1/3 cells, ETA ") for ln in lines)
    # a nested loop extends the line of the loop around it
    assert any(ln.startswith("[quadnet] _tprog: outer 2/3 cells, ETA ") and
               ln.endswith("; inner 2/2") for ln in lines)
    assert "inner" not in lines[-1] and not any("done" in ln for ln in lines[:-1])
    assert "_tprog: outer" not in quiet
    assert not _progress._ACTIVE  # nothing left on the stack of loops


def test_a_line_is_written_while_one_step_takes_long(monkeypatch, capsys):
    """Between two steps (or in a check without loops) the heartbeat writes the line."""
    monkeypatch.setattr(_progress, "PROGRESS_INTERVAL", 0.05)

    @register("_theart", "a check that works without reporting", order=-17)
    def _heart(ctx):
        last = _progress._STATE["last"]
        deadline = time.monotonic() + 60
        while _progress._STATE["last"] == last and time.monotonic() < deadline:
            time.sleep(0.01)  # wait for the heartbeat, not for a clock
        res = CheckResult("_theart", "a check that works without reporting")
        res.add("heartbeat seen", float(_progress._STATE["last"] != last), 1.0, relation=">=")
        return res

    try:
        assert main(["verify", "_theart", "--quick", "--figures", ""]) == 0
    finally:
        REGISTRY.pop("_theart", None)
    err = capsys.readouterr().err
    assert "[quadnet] _theart: running, 0 s so far" in err


# ------------------------------------------------------------------ kill, SIGTERM, SIGINT
CHILD = """
import os, signal, sys, time
from pathlib import Path
signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal
from quadnet.harness.checks import CheckResult, register
log = Path(sys.argv[1])

# a check that logs its start, waits while asked to (the slow one), then passes
def logged_check(name, claim, order, which, wait=False):
    @register(name, claim, order=order)
    def run(ctx):
        with log.open("a") as fh:
            fh.write(name + "\\n")
        while wait and os.environ.get("QUADNET_TEST_BLOCK") and not Path(str(log) + ".go").exists():
            time.sleep(0.02)
        res = CheckResult(name, claim)
        res.add(f"error of the {which} check", 1e-14, 1e-12)
        return res

logged_check("_tfirst", "finishes at once", -30, "first")
logged_check("_tslow", "waits until the test lets it go", -29, "slow", wait=True)
logged_check("_tlast", "runs after the slow one", -28, "last")

from quadnet.harness.cli import main
raise SystemExit(main(["verify", "_tfirst", "_tslow", "_tlast", "--quick", "--figures", "",
                       *sys.argv[2:]]))
"""


def _start(tmp_path, *args, block=True):
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(CHILD))
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("QUADNET_TEST_BLOCK", None)
    if block:
        env["QUADNET_TEST_BLOCK"] = "1"
    return subprocess.Popen([sys.executable, str(script), str(tmp_path / "log"), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _wait_until_slow_check_runs(proc, tmp_path):
    log = tmp_path / "log"
    deadline = time.monotonic() + 240
    while "_tslow" not in (log.read_text() if log.exists() else ""):
        if proc.poll() is not None or time.monotonic() > deadline:
            out, err = proc.communicate()
            pytest.fail(f"the child did not reach the slow check:\n{out}\n{err}")
        time.sleep(0.02)


def test_a_killed_run_keeps_every_finished_check(tmp_path):
    js = tmp_path / "r.json"
    proc = _start(tmp_path, "--json", str(js))
    _wait_until_slow_check_runs(proc, tmp_path)
    proc.kill()  # SIGKILL: no handler runs; the report written after _tfirst is what is left
    out, _ = proc.communicate(timeout=60)
    rep = json.loads(js.read_text())
    assert [c["name"] for c in rep["checks"]] == ["_tfirst"] and rep["complete"] is False
    assert "error of the first check" in out  # its rows were printed when it finished
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".r.json")]


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_sigterm_and_sigint_stop_cleanly_and_resume_runs_the_rest(tmp_path, sig, code):
    js = tmp_path / "r.json"
    proc = _start(tmp_path, "--json", str(js))
    _wait_until_slow_check_runs(proc, tmp_path)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    name = signal.Signals(sig).name
    assert proc.returncode == code, err
    assert (f"quadnet verify: stopped by {name} during check '_tslow'; the finished checks "
            f"(_tfirst) are saved in {js}; continue with: quadnet verify _tfirst _tslow _tlast "
            f"--resume {js} --quick --figures ''") in err
    assert "Traceback" not in err
    rep = json.loads(js.read_text())
    assert [c["name"] for c in rep["checks"]] == ["_tfirst"]
    assert rep["complete"] is False and rep["interrupted"] == name
    assert "1 check: 1 passed" in out  # the summary of what finished
    if sig == signal.SIGINT:
        return  # resuming is the same after either signal
    # resume: only the unfinished checks run
    proc = _start(tmp_path, "--resume", str(js), block=False)
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    assert (f"resume: skipping _tfirst (already in {js}, same version/seed/mode)") in err
    assert (tmp_path / "log").read_text().split() == ["_tfirst", "_tslow", "_tslow", "_tlast"]
    rep = json.loads(js.read_text())
    assert [c["name"] for c in rep["checks"]] == ["_tfirst", "_tslow", "_tlast"]
    assert rep["complete"] is True and "interrupted" not in rep


def test_an_interrupted_run_without_json_says_nothing_was_saved(two_checks, capsys):
    @register("_tctrlc", "stopped by Ctrl-C", order=-19)  # between _ta and _tb
    def _ctrlc(ctx):
        raise KeyboardInterrupt

    try:
        rc = main(["verify", "_ta", "_tctrlc", "_tb", "--quick", "--figures", ""])
    finally:
        REGISTRY.pop("_tctrlc", None)
    cap = capsys.readouterr()
    assert rc == 130 and two_checks == ["_ta"]
    assert "stopped by SIGINT during check '_tctrlc'; finished checks: _ta" in cap.err
    assert "nothing was saved: with --json FILE every finished check is saved" in cap.err
    assert "error of the first check" in cap.out and "1 check: 1 passed" in cap.out
