"""``quadnet doctor`` / ``quadnet.show_config``: the report a bug report asks for."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import scipy

import quadnet
from quadnet.harness import doctor


def test_show_config_reports_versions_blas_and_cpu():
    buf = io.StringIO()
    info = quadnet.show_config(file=buf)
    text = buf.getvalue()
    assert info["quadnet"] == quadnet.__version__
    assert info["packages"]["numpy"] == np.__version__
    assert info["packages"]["scipy"] == scipy.__version__
    assert f"numpy          {np.__version__}" in text
    assert "BLAS / LAPACK (threadpoolctl):" in text
    # threadpoolctl sees at least one BLAS with a thread count
    assert any(isinstance(p.get("num_threads"), int) for p in info["blas"])
    assert "CPU: " in text and "memory: MemTotal" in text


def test_doctor_cli_json_and_small_probes_run_cleanly(default_blas_threads):
    proc = subprocess.run([sys.executable, "-m", "quadnet", "doctor", "--json", "--probe",
                           "--probe-size", "600"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    names = [p["probe"] for p in info["probes"]]
    assert names == ["threaded dpotrf n=600", "blocked Cholesky n=600", "threaded dsyevd n=600"]
    assert all(p["status"] == "ok" for p in info["probes"]), info["probes"]


def test_a_crashing_probe_is_reported_not_suffered(monkeypatch):
    monkeypatch.setattr(doctor, "PROBES", (("threaded dpotrf", "n", 10),))
    monkeypatch.setitem(doctor._PROBE_CODE, "threaded dpotrf",
                        "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    out = io.StringIO()
    rows = doctor.run_probes(out=out)
    assert rows[0]["status"] == "crashed (SIGSEGV)"
    assert "threaded dpotrf n=10" in out.getvalue()


def test_a_slow_probe_is_reported_too_slow(monkeypatch):
    monkeypatch.setattr(doctor, "PROBES", (("threaded dsyevd", "n", 10),))
    monkeypatch.setitem(doctor._PROBE_CODE, "threaded dsyevd", "import time\ntime.sleep(30)\n")
    rows = doctor.run_probes(timeout=1.0)
    assert rows[0]["status"] == "too slow (> 1 s)"


def test_a_failing_probe_names_its_error(monkeypatch):
    monkeypatch.setattr(doctor, "PROBES", (("threaded dsyevd", "n", 10),))
    monkeypatch.setitem(doctor._PROBE_CODE, "threaded dsyevd", "raise MemoryError('no room')\n")
    rows = doctor.run_probes()
    assert rows[0]["status"] == "failed (exit 1: MemoryError: no room)"
