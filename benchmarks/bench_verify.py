"""Time ``quadnet verify --quick`` and, with ``--full``, the paper-scale run.

Runs the command in a fresh process exactly as a user would (figures off, JSON report to a
temporary file) and prints the wall time of the whole command, the wall and CPU seconds of
each check, the load average before and after, and (quick mode) the ratio to the measured
reference ``quadnet.harness.cli.QUICK_MEASURED``, the number the README and ``--help``
quote. Wall time on a shared machine includes waiting for the CPU; the CPU column is what
the check itself costs.

Usage: ``python benchmarks/bench_verify.py [--full] [--json FILE] [NAME ...]`` (``--json`` keeps
the report, e.g. for ``quadnet report FILE``).
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


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*")
    p.add_argument("--full", action="store_true")
    p.add_argument("--json", metavar="FILE", help="also keep the verify --json report here")
    args = p.parse_args()
    mode = "--full" if args.full else "--quick"
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
