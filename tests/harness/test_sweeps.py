"""Resumable sweeps: determinism across backends, SIGKILL + resume, store refusal, bad input.

Every comparison here is byte-for-byte (no tolerance): results.csv holds the exact float64
values, and a cell's value depends only on the master seed and the cell's parameters.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from quadnet.harness import cells as _sweep_defs
from quadnet.harness import sweeps
from quadnet.harness.sweeps import (
    Sweep,
    SweepCellError,
    SweepStoreError,
    read_results,
    run_sweep,
    sweep_cells,
)

# A tiny sweep (8 cells of ~10 ms) for the backend and bad-input tests.
TINY = Sweep(
    name="tiny-gd",
    description="test sweep",
    cell="quadnet.harness.cells:quotient_gd_cell",
    quick={"d": (3, 4), "r": (1, 2), "eta_scale": (0.2,), "trial": (0, 1), "steps": (40,)},
    full={"d": (3,), "r": (1,), "eta_scale": (0.2,), "trial": (0,), "steps": (40,)},
    results=("eta", "final_loss", "rel_dist", "diverged"),
    seed_keys=("d", "r", "trial"),
)


def _run(store, **kw):
    kw.setdefault("workers", 0)  # in this process unless a test is about the backends
    return run_sweep(TINY, store, quick=True, progress=False, **kw)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> bytes:
    store = tmp_path_factory.mktemp("ref") / "store"
    rep = _run(store, workers=1)
    assert rep.ran == rep.n_cells == 8 and rep.skipped == 0
    return (store / "results.csv").read_bytes()


# ---------------------------------------------------------------------- cells and seeds
def test_cells_are_deterministic_and_share_seeds_along_non_seed_axes():
    a = sweep_cells("quotient-gd", quick=True, seed=3)
    b = sweep_cells("quotient-gd", quick=True, seed=3)
    assert a == b
    by = {(c["params"]["d"], c["params"]["r"], c["params"]["trial"], c["params"]["eta_scale"]):
          c["seed"] for c in a}
    # seed_keys = (d, r, trial): both step sizes see the same instance ...
    assert by[(3, 1, 0, 0.1)] == by[(3, 1, 0, 0.3)]
    # ... and different trials / master seeds see different ones
    assert by[(3, 1, 0, 0.1)] != by[(3, 1, 1, 0.1)]
    assert a[0]["seed"] != sweep_cells("quotient-gd", quick=True, seed=4)[0]["seed"]


def test_results_csv_is_sorted_one_row_per_cell_without_timing(reference, tmp_path):
    lines = reference.decode().splitlines()
    assert lines[0] == "d,r,eta_scale,trial,steps,seed,eta,final_loss,rel_dist,diverged"
    rows = [ln.split(",") for ln in lines[1:]]
    assert len(rows) == 8
    keys = [(int(r[0]), int(r[1]), int(r[3])) for r in rows]
    assert keys == sorted(keys)
    assert not any("time" in h or "sec" in h for h in lines[0].split(","))


def test_read_results_parses_exact_values(reference, tmp_path):
    store = tmp_path / "s"
    _run(store)
    rows = read_results(store)
    assert len(rows) == 8 and rows[0]["diverged"] is False
    cell = sweep_cells(TINY, quick=True)[0]
    direct = _sweep_defs.quotient_gd_cell(**cell["params"], seed=cell["seed"])
    assert rows[0]["final_loss"] == direct["final_loss"]  # repr round-trips float64 exactly


# ---------------------------------------------------------------------- backends
def test_workers_2_and_in_process_identical_to_workers_1(reference, tmp_path):
    _run(tmp_path / "w2", workers=2)
    assert (tmp_path / "w2" / "results.csv").read_bytes() == reference
    _run(tmp_path / "w0", workers=0)
    assert (tmp_path / "w0" / "results.csv").read_bytes() == reference
    _run(tmp_path / "c3", workers=2, chunk=3)  # 3 cells per task: chunking changes nothing
    assert (tmp_path / "c3" / "results.csv").read_bytes() == reference


def test_dask_local_2_identical_to_workers_1(reference, tmp_path):
    pytest.importorskip("distributed")
    rep = _run(tmp_path / "dask", dask_local=2)
    assert "dask" in rep.backend
    assert (tmp_path / "dask" / "results.csv").read_bytes() == reference


def test_resume_skips_finished_cells_and_cleans_stray_temporaries(reference, tmp_path):
    store = tmp_path / "s"
    _run(store)
    for i in (1, 5, 6):  # as if a run had been killed before these cells finished
        (store / "cells" / f"{i:06d}.json").unlink()
    (store / "results.csv").unlink()
    (store / "cells" / ".tmp-000001.json-999").write_text('{"half a')  # a killed write
    rep = _run(store, workers=2)
    assert (rep.skipped, rep.ran) == (5, 3) and "2 local" in rep.backend
    assert (store / "results.csv").read_bytes() == reference
    assert not list((store / "cells").glob(".tmp-*"))
    assert _run(store).ran == 0  # a finished store runs nothing


# ---------------------------------------------------------------------- SIGKILL
def _sweep_cmd(store: Path, workers: int, start_method: str | None = None) -> list[str]:
    cmd = [sys.executable, "-m", "quadnet", "sweep", "quotient-gd", "--quick", "--store",
           str(store), "--workers", str(workers), "--no-progress"]
    return cmd + (["--start-method", start_method] if start_method else [])


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(c) for c in path.read_text().split()] if path.exists() else []


def _alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(") ")[-1][:1] not in ("Z", "X")


def _kill_after(store: Path, n_cells: int, workers: int, timeout: float = 120.0,
                stderr: Path | None = None, start_method: str | None = None) -> int:
    """Start the sweep in its own process group and SIGKILL its main process as soon as at
    least ``n_cells`` cells are on disk. Its worker processes must then exit by themselves
    (asserted); the group is killed afterwards in any case. Returns the main return code.
    ``stderr``: a file that receives the stderr of the whole process group (the sweep, its
    workers and multiprocessing's resource tracker)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    err = open(stderr, "w") if stderr is not None else subprocess.DEVNULL  # noqa: SIM115
    proc = subprocess.Popen(_sweep_cmd(store, workers, start_method), env=env,
                            start_new_session=True, stdout=subprocess.DEVNULL, stderr=err)
    t0 = time.monotonic()
    orphans: list[int] = []
    try:
        while time.monotonic() - t0 < timeout and proc.poll() is None:
            cells = list((store / "cells").glob("0*.json")) if (store / "cells").exists() else []
            if len(cells) >= n_cells:
                break
            time.sleep(0.01)
        if proc.poll() is None:
            orphans = _children(proc.pid)
            proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 20.0  # workers poll for their parent every 0.5 s
        while any(_alive(p) for p in orphans) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(p) for p in orphans), "worker processes outlived a killed sweep"
        if stderr is not None:  # give a resource tracker time to report what leaked
            time.sleep(1.5)
    finally:
        if stderr is not None:
            err.close()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode


def test_sigkill_then_resume_gives_identical_results(tmp_path):
    ref = tmp_path / "ref"
    run_sweep("quotient-gd", ref, quick=True, workers=0, progress=False)
    expected = (ref / "results.csv").read_bytes()
    n = len(sweep_cells("quotient-gd", quick=True))

    store = tmp_path / "killed"
    # killed twice at different points: once with a worker pool, once running in-process
    for target, workers in ((3, 2), (11, 0)):
        log = tmp_path / f"stderr-{workers}.txt"
        rc = _kill_after(store, target, workers, stderr=log)
        assert "leaked semaphore" not in log.read_text(), log.read_text()
        assert "Traceback" not in log.read_text(), log.read_text()
        assert rc == -signal.SIGKILL, "the sweep finished before it could be killed"
        cells = sorted((store / "cells").glob("0*.json"))
        assert target <= len(cells) < n
        for p in cells:  # no finished cell is corrupt: each parses and names its params
            rec = json.loads(p.read_text())
            assert set(rec) == {"index", "params", "seed", "result"}
        assert not (store / "results.csv").exists()
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run(_sweep_cmd(store, 2), env=env, capture_output=True, text=True,
                         timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    assert "leaked" not in out.stderr and "Traceback" not in out.stderr
    assert f"{n} cells" in out.stdout and "already finished" in out.stdout
    assert (store / "results.csv").read_bytes() == expected


# ---------------------------------------------------------------------- bad input
def test_store_made_by_another_sweep_or_parameters_is_refused(reference, tmp_path):
    store = tmp_path / "s"
    _run(store)
    before = sorted(p.name for p in (store / "cells").iterdir())
    with pytest.raises(SweepStoreError, match="seed: store has 0, this run 1"):
        _run(store, seed=1)
    with pytest.raises(SweepStoreError, match="quick"):
        run_sweep(TINY, store, quick=False, progress=False)
    with pytest.raises(SweepStoreError, match="sweep: store has"):
        run_sweep("quotient-gd", store, quick=True, progress=False)
    assert sorted(p.name for p in (store / "cells").iterdir()) == before  # nothing mixed in
    assert (store / "results.csv").read_bytes() == reference


def test_foreign_or_unwritable_store_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(SweepStoreError, match="without a quadnet manifest"):
        _run(tmp_path)
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    with pytest.raises(SweepStoreError, match="not a directory"):
        _run(a_file)
    with pytest.raises(SweepStoreError, match="not writable"):
        _run(a_file / "store")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "manifest.json").write_text("{not json")
    with pytest.raises(SweepStoreError, match="unreadable manifest"):
        _run(tmp_path / "bad")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root ignores directory permissions")
def test_read_only_directory_is_refused(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(SweepStoreError, match="not writable"):
            _run(ro / "store")
    finally:
        ro.chmod(0o700)


def test_corrupt_or_mismatched_cell_file_is_refused(tmp_path):
    store = tmp_path / "s"
    _run(store)
    p = store / "cells" / "000002.json"
    rec = json.loads(p.read_text())
    rec["params"]["d"] = 99
    p.write_text(json.dumps(rec))
    with pytest.raises(SweepStoreError, match="refusing to mix"):
        _run(store)
    p.write_text("{truncated")
    with pytest.raises(SweepStoreError, match="corrupt"):
        _run(store)


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="unknown sweep 'nope'; available: .*quotient-gd"):
        run_sweep("nope", tmp_path / "s")
    with pytest.raises(ValueError, match="workers"):
        _run(tmp_path / "s", workers=-1)
    with pytest.raises(ValueError, match="chunk"):
        _run(tmp_path / "s", chunk=0)
    with pytest.raises(ValueError, match="at most one"):
        _run(tmp_path / "s", dask_local=2, scheduler="tcp://127.0.0.1:1")
    with pytest.raises(ValueError, match="seed"):
        _run(tmp_path / "s", seed=-1)
    with pytest.raises(ValueError, match="no module 'quadnet.no_such_module'"):
        Sweep("missing", "", "quadnet.no_such_module:cell", {"a": (1,)}, {"a": (1,)})
    # a cell module that needs a missing optional dependency is built, and refused on running
    needs = Sweep("needs", "", "quadnet.harness.cells:quotient_gd_cell", {"d": (3,)},
                  {"d": (3,)}, requires=("quadnet_no_such_dependency",))
    with pytest.raises(SweepCellError, match="not available"):
        run_sweep(needs, tmp_path / "m", progress=False)
    with pytest.raises(TypeError, match="Sweep"):
        sweeps.register_sweep("quotient-gd")


def test_failing_cell_names_the_cell_and_keeps_finished_ones(tmp_path):
    # r = 4 > d = 3 makes quotient_gd_cell raise ValueError in the last cell only
    bad = Sweep("bad", "", "quadnet.harness.cells:quotient_gd_cell",
                quick={"d": (3,), "r": (1, 2, 4), "eta_scale": (0.2,), "trial": (0,),
                       "steps": (10,)}, full={})
    with pytest.raises(SweepCellError, match=r"cell 2 \{'d': 3, 'r': 4.*r must satisfy 1 <= r <= d, got r = 4 > d = 3"):
        # one task holds all three cells: the two good ones are still saved
        run_sweep(bad, tmp_path / "s", quick=True, progress=False, workers=0, chunk=3)
    assert sorted(p.name for p in (tmp_path / "s" / "cells").glob("0*.json")) == \
        ["000000.json", "000001.json"]
    assert not (tmp_path / "s" / "results.csv").exists()


def test_non_scalar_cell_result_is_rejected(tmp_path):
    bad = Sweep("bad-result", "", "builtins:round", quick={"number": (1.5,)}, full={},
                seed_arg=None)
    with pytest.raises(SweepCellError, match="must return a mapping"):
        run_sweep(bad, tmp_path / "s", quick=True, progress=False)
    assert sweeps._to_scalar("x", 1.5) == 1.5
    with pytest.raises(TypeError, match="'x' must be a scalar"):
        sweeps._to_scalar("x", [1.0])


def test_cli_sweep_list_and_errors(tmp_path, capsys):
    from quadnet.harness.cli import main

    assert main(["sweep", "--list"]) == 0
    out = capsys.readouterr().out
    assert "quotient-gd" in out
    assert main(["sweep", "nope", "--store", str(tmp_path / "s")]) == 2
    assert "unknown sweep 'nope'" in capsys.readouterr().err
    assert main(["sweep"]) == 2
    (tmp_path / "f").write_text("")
    assert main(["sweep", "quotient-gd", "--quick", "--store", str(tmp_path / "f" / "x")]) == 2
    assert "not writable" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse: the backends are mutually exclusive
        main(["sweep", "quotient-gd", "--workers", "2", "--dask-local", "2"])


# ---------------------------------------------------------------------- the science sweeps
def test_selection_sweep_quick_runs_and_approaches_min_trace(tmp_path):
    pytest.importorskip("quadnet.commuting")
    rep = run_sweep("selection", tmp_path / "s", quick=True, workers=0, progress=False)
    rows = read_results(rep.store)
    assert len(rows) == rep.n_cells == 28
    for inst in {r["instance"] for r in rows}:
        mine = sorted((r for r in rows if r["instance"] == inst), key=lambda r: r["log_inv_eps"])
        assert len({r["seed"] for r in mine}) == 1  # one instance per row of eps
        # quadnet theory §5: the limit from eps*1 tends to the minimum-trace interpolant as eps -> 0
        assert mine[-1]["trace_gap"] < mine[0]["trace_gap"]


def test_recovery_sweep_quick_cells_match_the_cell_function(tmp_path):
    pytest.importorskip("quadnet.sensing.recovery")
    cells = sweep_cells("recovery", quick=True)
    assert len(cells) == 60 and len({c["seed"] for c in cells}) == 1  # one master seed
    cell = cells[-1]  # d = 8, r = 2, ratio 4: m = 4 n_h
    out = sweeps._execute_cell(sweeps.get_sweep("recovery"), cell["params"], cell["seed"])
    assert out["m"] == 4 * out["n_h"] == 4 * 15
    direct = _sweep_defs.phase_transition_cell(8, 2, 60, cell["params"]["trial"], "spectral",
                                            "lbfgs", cell["seed"])
    assert out["rel_error"] == direct["rel_error"] and out["success"] is direct["success"]


def test_scheduler_address_backend_identical(reference, tmp_path):
    distributed = pytest.importorskip("distributed")
    # an in-process cluster (threads) stands in for a remote scheduler: the code path is the
    # same ``Client(address)``; it starts in about a second
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        rep = _run(tmp_path / "sched", scheduler=cluster.scheduler_address, chunk=2)
        address = cluster.scheduler_address
    assert rep.backend == f"dask scheduler {address}"
    assert (tmp_path / "sched" / "results.csv").read_bytes() == reference


# ---------------------------------------------------------------------- sweep API traps
_SCRIPT = """
from quadnet.harness.sweeps import Sweep, run_sweep
TINY = Sweep(name="tiny-gd", description="t", cell="quadnet.harness.cells:quotient_gd_cell",
             quick={{"d": (3, 4), "r": (1,), "eta_scale": (0.2,), "trial": (0, 1),
                     "steps": (40,)}}, full={{"d": (3,), "r": (1,), "eta_scale": (0.2,),
                     "trial": (0,), "steps": (40,)}})
rep = run_sweep(TINY, {store!r}, quick=True, workers=2, progress=False{extra})
print("cells", rep.n_cells)
"""


def test_script_without_main_guard_runs_or_gets_a_clear_message(tmp_path):
    """A script calling run_sweep(workers=2) at module level, without the
    ``if __name__ == "__main__":`` guard: with the default start method (fork) it simply
    works; with spawn it stops with one clear message instead of pages of tracebacks."""
    root = str(Path(__file__).resolve().parents[2])  # quadnet importable without installing
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])]))
    script = tmp_path / "unguarded.py"
    script.write_text(_SCRIPT.format(store=str(tmp_path / "a"), extra=""))
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0 and "cells 4" in out.stdout, out.stderr
    script.write_text(_SCRIPT.format(store=str(tmp_path / "b"),
                                     extra=', start_method="spawn"'))
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode != 0
    assert 'if __name__ == "__main__":' in out.stderr
    assert "BrokenProcessPool" not in out.stderr and "SweepCellError" not in out.stderr
    assert out.stderr.count("Traceback") <= 1, out.stderr  # one short one, not pages


def test_cell_keys_repeating_the_grid_are_dropped_or_refused(tmp_path):
    """The public phase_transition_cell returns d, r, m, trial, seed, ... again: the CSV has
    every column once; a cell contradicting its own grid value is refused."""
    sw = Sweep(name="pt", description="t", cell="quadnet.harness.cells:phase_transition_cell",
               quick={"d": (4,), "r": (1,), "m": (12,), "trial": (0, 1)}, full={"d": (4,)})
    rep = run_sweep(sw, tmp_path / "s", quick=True, workers=0, progress=False)
    header = (rep.store / "results.csv").read_text().splitlines()[0].split(",")
    assert len(header) == len(set(header))
    assert header[:5] == ["d", "r", "m", "trial", "seed"] and "success" in header
    rows = read_results(rep.store)
    assert [r["trial"] for r in rows] == [0, 1] and all(r["n_h"] == 4 for r in rows)
    (tmp_path / "celldup.py").write_text(
        "def cell(d, seed):\n    return {'d': d + 1, 'x': 1.0}\n"
        "def same(d, seed):\n    return {'d': d, 'seed': seed, 'x': 2.0}\n")
    sys.path.insert(0, str(tmp_path))
    try:
        same = Sweep(name="same", description="t", cell="celldup:same", quick={"d": (1, 2)},
                     full={"d": (1,)})
        rep = run_sweep(same, tmp_path / "ok", quick=True, workers=0, progress=False)
        assert (rep.store / "results.csv").read_text().splitlines()[0] == "d,seed,x"
        bad = Sweep(name="bad", description="t", cell="celldup:cell", quick={"d": (1,)},
                    full={"d": (1,)})
        with pytest.raises(SweepCellError, match="returned d=2, but the cell's own d is 1"):
            run_sweep(bad, tmp_path / "b", quick=True, workers=0, progress=False)
    finally:
        sys.path.remove(str(tmp_path))
    (tmp_path / "dup").mkdir()
    (tmp_path / "dup" / "results.csv").write_text("d,r,d\n1,2,1\n")
    with pytest.raises(SweepStoreError, match="repeats the column"):
        read_results(tmp_path / "dup")


def test_cli_custom_grid(tmp_path, capsys):
    from quadnet.harness.cli import main

    store = tmp_path / "g"
    assert main(["sweep", "quotient-gd", "--quick", "--set", "d=3,6", "--set", "r=1",
                 "--set", "trial=0", "--workers", "0", "--store", str(store),
                 "--no-progress"]) == 0
    assert "custom grid" in capsys.readouterr().err
    rows = read_results(store)
    assert sorted({r["d"] for r in rows}) == [3, 6] and {r["r"] for r in rows} == {1}
    assert len(rows) == 2 * 1 * 2 * 1  # d x r x eta_scale (quick: 2) x trial
    manifest = json.loads((store / "manifest.json").read_text())
    assert manifest["axes"]["d"] == [3, 6]
    # the same cells as the library call with the same grid
    ref = run_sweep("quotient-gd", tmp_path / "lib", quick=True, workers=0, progress=False,
                    grid={"d": (3, 6), "r": (1,), "trial": (0,)})
    assert (ref.store / "results.csv").read_bytes() == (store / "results.csv").read_bytes()
    assert main(["sweep", "quotient-gd", "--set", "nope=1"]) == 2
    assert "has no axis 'nope'" in capsys.readouterr().err
    assert main(["sweep", "quotient-gd", "--set", "d=x"]) == 2
    assert "is not a int" in capsys.readouterr().err
    assert main(["sweep", "quotient-gd", "--set", "d"]) == 2


# ---------------------------------------------------------------------- refused before any file
def test_missing_dask_is_refused_before_the_store_is_created(tmp_path, monkeypatch, capsys):
    """`quadnet sweep recovery --store DIR --dask-local 2` without dask: exit 2, a message
    with the install command, and no DIR."""
    from quadnet.harness.cli import main

    for mod in ("distributed", "dask"):
        monkeypatch.setitem(sys.modules, mod, None)  # import fails as if not installed
    store = tmp_path / "DIR"
    assert main(["sweep", "recovery", "--store", str(store), "--dask-local", "2"]) == 2
    err = capsys.readouterr().err
    assert ("quadnet sweep: Dask backends need dask.distributed: python -m pip install "
            "'quadnet[dask]'") in err
    assert not store.exists()
    with pytest.raises(ImportError, match=r"pip install 'quadnet\[dask\]'"):
        _run(tmp_path / "api", scheduler="tcp://127.0.0.1:1")
    assert not (tmp_path / "api").exists()


def test_bad_store_scheduler_or_chunk_leave_nothing_behind(tmp_path, capsys):
    from quadnet.harness.cli import main

    pytest.importorskip("distributed")
    with socket.socket() as sock:  # a port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ValueError, match=f"scheduler: cannot connect to 'tcp://127.0.0.1:"
                                         f"{port}'.*nothing was created"):
        _run(tmp_path / "s", scheduler=f"tcp://127.0.0.1:{port}")
    with pytest.raises(ValueError, match="scheduler must be an address such as"):
        _run(tmp_path / "s", scheduler="tcp://no-port-here")
    with pytest.raises(ValueError, match="chunk"):
        _run(tmp_path / "s", chunk=0)
    assert not (tmp_path / "s").exists()
    (tmp_path / "file").write_text("")
    with pytest.raises(SweepStoreError, match="not writable .it cannot be created: .*file' is not a directory"):
        _run(tmp_path / "file" / "a" / "b")
    assert main(["sweep", "quotient-gd", "--quick", "--set", "d=x", "--store",
                 str(tmp_path / "g")]) == 2
    assert "d" in capsys.readouterr().err and not (tmp_path / "g").exists()


def test_sweep_definitions_are_checked_when_built():
    from quadnet.harness.sweeps import Sweep, sweep_cells

    ok = {"d": (4,)}
    cell = "quadnet.harness.cells:quotient_gd_cell"
    with pytest.raises(ValueError, match=r"no module 'quadnet.nope'"):
        Sweep("demo", "d", cell="quadnet.nope:cell", quick=ok, full=ok)
    with pytest.raises(ValueError, match=r"has no function 'nope'"):
        Sweep("demo", "d", cell="quadnet.harness.cells:nope", quick=ok, full=ok)
    with pytest.raises(ValueError, match=r"quick grid axis 'd' has a non-finite value nan"):
        Sweep("demo", "d", cell=cell, quick={"d": (float("nan"),)}, full=ok)
    with pytest.raises(ValueError, match=r"full grid axis 'd' is empty"):
        Sweep("demo", "d", cell=cell, quick=ok, full={"d": ()})
    with pytest.raises(ValueError, match=r"seed_keys \['r'\] are not axes"):
        Sweep("demo", "d", cell=cell, quick=ok, full=ok, seed_keys=("r",))
    with pytest.raises(ValueError, match=r"grid axis 'd' has a non-finite value nan"):
        sweep_cells("quotient-gd", grid={"d": (float("nan"),)})
    with pytest.raises(ValueError, match=r"grid axis 'd' repeats a value"):
        sweep_cells("quotient-gd", grid={"d": (3, 3)})


# ------------------------------------------------------------- bad arguments of the public API
@pytest.mark.parametrize("kwargs, error, match", [
    ({"grid": ""}, TypeError, r"grid must be None or a mapping .* got str"),
    ({"grid": 1}, TypeError, r"grid must be None or a mapping .* got int"),
    ({"grid": [("d", (4,))]}, TypeError, r"grid must be None or a mapping .* got list"),
    ({"quick": __import__("numpy").array([True, False])}, TypeError,
     r"quick must be a bool, got ndarray"),
    ({"quick": "False"}, TypeError, r"quick must be a bool, got str"),
    ({"quick": None}, TypeError, r"quick must be a bool, got NoneType"),
    ({"seed": -1}, ValueError, r"seed must be >= 0, got -1"),
    ({"sweep": 3}, TypeError, r"sweep must be a sweep name or a Sweep, got int"),
])
def test_sweep_cells_refuses_bad_arguments(kwargs, error, match):
    args = {"sweep": TINY, "quick": True, **kwargs}
    with pytest.raises(error, match=match):
        sweep_cells(args.pop("sweep"), **args)


def test_sweep_report_is_frozen(tmp_path):
    import dataclasses

    rep = _run(tmp_path / "store")
    with pytest.raises(dataclasses.FrozenInstanceError):
        rep.ran = 0


_GD = {"d": 4, "r": 1, "eta_scale": 0.5, "trial": 0, "steps": 3, "seed": 0}


@pytest.mark.parametrize("kwargs, error, match", [
    ({"eta_scale": 1e300}, ValueError, r"eta_scale must be a finite real number in \(0, 10\]"),
    ({"eta_scale": 0.0}, ValueError, r"eta_scale must be a finite real number in \(0, 10\]"),
    ({"r": 5}, ValueError, r"r must satisfy 1 <= r <= d, got r = 5 > d = 4"),
    ({"d": 10**9}, MemoryError, r"d = 1000000000, r = 1: the target T .* needs about"),
    ({"d": 10**12}, ValueError, r"d = 1000000000000, r = 1: .* GiB"),
    ({"steps": 0}, ValueError, r"steps must be >= 1, got 0"),
    ({"seed": "abc"}, TypeError, r"seed must be an integer, got str"),
])
def test_quotient_gd_cell_refuses_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        _sweep_defs.quotient_gd_cell(**{**_GD, **kwargs})


def test_quotient_gd_cell_reports_divergence_inside_its_range():
    """At the largest eta_scale allowed, the iteration diverges and says so (the nan loss is
    the documented divergence record, with diverged = True), it does not fail."""
    out = _sweep_defs.quotient_gd_cell(**{**_GD, "eta_scale": _sweep_defs.MAX_ETA_SCALE,
                                          "steps": 200})
    assert out["diverged"] is True and out["final_loss"] != out["final_loss"]


_SEL = {"instance": 0, "log_inv_eps": 2.0, "d": 6, "m": 3, "instance_seed": 0}


@pytest.mark.parametrize("kwargs, error, match", [
    ({"log_inv_eps": 1e300}, ValueError,
     r"log_inv_eps must be a finite real number in \(0, 1e\+06\], got 1e\+300"),
    ({"log_inv_eps": 0.0}, ValueError, r"log_inv_eps must be a finite real number in \(0, 1e\+06\]"),
    ({"m": 6}, ValueError, r"m must be <= d - 1 = 5, got 6"),
    ({"d": 1}, ValueError, r"d must be >= 2, got 1"),
    ({"instance": -1}, ValueError, r"instance must be >= 0, got -1"),
])
def test_selection_sweep_cell_refuses_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        _sweep_defs.selection_sweep_cell(**{**_SEL, **kwargs})


def test_selection_cell_at_its_largest_log_inv_eps_still_selects_the_min_trace_solution():
    """At log(1/eps) = MAX_LOG_INV_EPS the limit is the minimum-trace solution to the rounding
    of the start's offset (2.2e-16 * 1e6 ~ 2e-10 in log q; measured 5e-11 to 1e-10 on d = 24)."""
    out = _sweep_defs.selection_cell(None, 0, d=6, m=3,
                                     log_inv_eps=_sweep_defs.MAX_LOG_INV_EPS)
    assert out["dist"] < 1e-8 and abs(out["trace_gap"]) < 1e-8 * out["min_trace"]
    with pytest.raises(TypeError, match="give exactly one of eps or log_inv_eps"):
        _sweep_defs.selection_cell(0.1, 0, d=6, m=3, log_inv_eps=2.0)
    with pytest.raises(ValueError, match=r"eps must be a finite real number in \(0, 1\), got 1.0"):
        _sweep_defs.selection_cell(1.0, 0, d=6, m=3)


@pytest.mark.parametrize("which", ["quick", "full"])
def test_an_axis_the_cell_function_does_not_take_is_refused_when_built(which):
    from quadnet.harness.cells import quotient_gd_cell
    from quadnet.harness.sweeps import Sweep
    grids = {"quick": {"d": (4,)}, "full": {"d": (8,)}}
    grids[which] = {"bogus_axis": (1,)}
    with pytest.raises(ValueError) as err:
        Sweep("demo", "a demo", cell=quotient_gd_cell, **grids)
    assert str(err.value) == (
        f"{which} grid of sweep 'demo': axis 'bogus_axis' is not a parameter of the cell "
        "function quotient_gd_cell; it takes ['d', 'eta_scale', 'r', 'steps', 'trial']")


def test_the_seed_argument_is_not_an_axis():
    from quadnet.harness.cells import quotient_gd_cell
    from quadnet.harness.sweeps import Sweep
    with pytest.raises(ValueError) as err:
        Sweep("demo", "a demo", cell=quotient_gd_cell, quick={"seed": (1,)}, full={"d": (8,)})
    assert str(err.value) == ("quick grid of sweep 'demo': axis 'seed' is the cell seed "
                              "argument, which the sweep sets per cell; drop the axis")
