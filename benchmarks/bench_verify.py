"""Time ``quadnet verify --quick`` and, with ``--full``, the paper-scale run.

Runs the command in a fresh process exactly as a user would (figures off, JSON report to a
temporary file) and prints the wall time of the whole command, the wall and CPU seconds of
each check, the load average before and after, and (quick mode) the ratio to the measured
reference ``quadnet.harness.cli.QUICK_MEASURED``, the number the README and ``--help``
quote. Wall time on a shared machine includes waiting for the CPU; the CPU column is what
the check itself costs.

Usage: ``python benchmarks/bench_verify.py [--full] [--json FILE] [NAME ...]`` (``--json`` keeps
the report, e.g. for ``quadnet report FILE``).

``--against DIR`` compares with another checkout (e.g. ``git worktree add /tmp/old a8f6ba4``):
for each named check it runs the check in that version (``PYTHONPATH=DIR``) and then in this
one, one after the other and never two at once, so both see the same load, and prints per
run the CPU seconds of the process and its children (user + sys, ``os.wait4``), the wall
seconds and the 1-minute load average just before; ``--keep DIR`` keeps each run's report
as ``DIR/NAME.old.json`` / ``DIR/NAME.new.json``, ``--nice N`` runs them under ``nice -n N``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from quadnet.harness.cli import QUICK_MEASURED


def _timed_run(name: str, mode: str, pythonpath: str, report: Path, nice: int
               ) -> dict[str, float]:
    """One ``quadnet verify NAME`` in a fresh process: CPU (user + sys, children included),
    wall seconds and the 1-minute load average just before."""
    env = dict(os.environ, PYTHONPATH=pythonpath)
    cmd = ["nice", "-n", str(nice), sys.executable, "-m", "quadnet", "verify", name, mode,
           "--json", str(report), "--figures", "", "--no-progress"]
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            cwd=tempfile.gettempdir())
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) not in (0, 3):   # 3: some rows skipped
        print(err[-2000:], file=sys.stderr)
    return {"cpu": usage.ru_utime + usage.ru_stime, "user": usage.ru_utime,
            "sys": usage.ru_stime, "wall": wall, "load": load,
            "exit": os.waitstatus_to_exitcode(status)}


def against(names: list[str], mode: str, old: str, keep: str | None, nice: int) -> int:
    """Old then new, check by check (``--against``)."""
    new = str(Path(__file__).resolve().parents[1])
    out = Path(keep) if keep else Path(tempfile.mkdtemp())
    out.mkdir(parents=True, exist_ok=True)
    print(f"{'check':<10} {'version':<4} {'CPU s':>8} {'wall s':>8} {'load':>5} exit")
    total = {"old": 0.0, "new": 0.0}
    for name in names:
        for tag, path in (("old", old), ("new", new)):
            r = _timed_run(name, mode, path, out / f"{name}.{tag}.json", nice)
            total[tag] += r["cpu"]
            print(f"{name:<10} {tag:<4} {r['cpu']:8.1f} {r['wall']:8.1f} {r['load']:5.2f} "
                  f"{r['exit']}  ({time.strftime('%H:%M:%S')}, user {r['user']:.1f}, "
                  f"sys {r['sys']:.1f})", flush=True)
    print(f"{'total':<10} old {total['old']:.1f} new {total['new']:.1f} CPU s, ratio "
          f"{total['new'] / max(total['old'], 1e-9):.3f}")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*")
    p.add_argument("--full", action="store_true")
    p.add_argument("--json", metavar="FILE", help="also keep the verify --json report here")
    p.add_argument("--against", metavar="DIR", help="interleave with the checkout in DIR")
    p.add_argument("--keep", metavar="DIR", help="with --against: keep the reports here")
    p.add_argument("--nice", type=int, default=0, help="with --against: nice -n N")
    args = p.parse_args()
    mode = "--full" if args.full else "--quick"
    if args.against:
        if not args.names:
            p.error("--against needs the check names")
        return against(args.names, mode, args.against, args.keep, args.nice)
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "verify.json"
        cmd = [sys.executable, "-m", "quadnet", "verify", *args.names, mode, "--json",
               str(report), "--figures", "", "--no-progress"]
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
        if not report.exists():
            print(proc.stdout, proc.stderr, sep="\n")
            return 1
        rep = json.loads(report.read_text())
        if args.json:
            Path(args.json).write_text(report.read_text())
    print(f"quadnet verify {mode}: exit code {proc.returncode}, {wall:.1f} s wall for the whole "
          f"command (interpreter start and imports included); 1-min load before: {load:.1f}")
    print(f"{'check':<12} {'pass':<5} {'wall s':>8} {'cpu s':>8}")
    for chk in rep["checks"]:
        name = chk["name"]
        print(f"{name:<12} {'yes' if chk['passed'] else 'NO':<5} {rep['seconds'][name]:8.1f} "
              f"{rep.get('cpu_seconds', {}).get(name, float('nan')):8.1f}")
    total = rep["seconds_total"]
    print(f"{'all checks':<12} {'yes' if rep['passed'] else 'NO':<5} {total:8.1f} "
          f"{sum(rep.get('cpu_seconds', {}).values()):8.1f}")
    print(f"1-min load after: {os.getloadavg()[0]:.1f}")
    if not args.full:
        cpu = sum(rep.get("cpu_seconds", {}).values())
        print(f"\nCPU seconds / measured reference ({QUICK_MEASURED['cpu_seconds']:.0f} s) = "
              f"{cpu / QUICK_MEASURED['cpu_seconds']:.2f}; wall / reference "
              f"({QUICK_MEASURED['wall_seconds']:.0f} s at load {QUICK_MEASURED['load']}) = "
              f"{wall / QUICK_MEASURED['wall_seconds']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
