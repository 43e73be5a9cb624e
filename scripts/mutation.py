#!/usr/bin/env python
"""Mutation testing of one quadnet module with mutmut 3, against a chosen subset of tests.

Usage::

    nice -n 19 python scripts/mutation.py quadnet/geometry/_kernels.py \\
        tests/geometry/test_quotient.py tests/geometry/test_kernel_properties.py [--max-children 2] [--keep DIR]

The project is copied to a scratch directory (``quadnet/``, the chosen tests, ``conftest.py``)
with a generated ``setup.cfg`` whose ``[mutmut]`` section mutates only the target file
(``only_mutate``) and runs only the chosen tests (``pytest_add_cli_args_test_selection``), so
the working tree and ``pyproject.toml`` are never touched. mutmut 3 records which tests reach
each mutated function and runs just those per mutant.

``--retest`` (with ``--keep DIR`` of an earlier run, the same target and test files) copies the
changed test files into ``DIR`` again and re-runs only the mutants that survived or that no test
reached: after tests were added (none removed or weakened, the target unchanged) a killed
mutant stays killed, so this gives the score of a fresh run in a fraction of the time.

Printed at the end: the counts by outcome and the score ``killed / all mutants`` (mutants in
code no test reaches count as not killed; the score over reached mutants is printed beside it).
Exit status 0 when mutmut ran, whatever the score. CI does not run this (minutes to hours).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: mutmut 3 status words (``mutmut results --all true``) and how they count.
KILLED = {"killed", "timeout", "segfault", "caught by type check"}
NOT_REACHED = {"no tests"}


def _setup_cfg(target: str, tests: list[str]) -> str:
    lines = ["[mutmut]", "source_paths=", "    quadnet/", "only_mutate=", f"    {target}",
             "pytest_add_cli_args_test_selection="]
    lines += [f"    {t}" for t in tests]
    lines += ["pytest_add_cli_args=", "    -p", "    no:cacheprovider", "    -q", "    -x",
              "timeout_multiplier=10.0", "also_copy=", "    conftest.py", ""]
    return "\n".join(lines)


def _copy_project(dst: Path, tests: list[str]) -> None:
    shutil.copytree(ROOT / "quadnet", dst / "quadnet",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (dst / "tests").mkdir()
    for extra in ("tests/__init__.py", "tests/conftest.py"):
        if (ROOT / extra).exists():
            shutil.copy2(ROOT / extra, dst / extra)
    for t in tests:
        shutil.copy2(ROOT / t, dst / t)
    for extra in ("conftest.py",):
        if (ROOT / extra).exists():
            shutil.copy2(ROOT / extra, dst / extra)
    # pytest settings (filterwarnings, markers) without the rest of pyproject.toml
    pp = (ROOT / "pyproject.toml").read_text()
    m = re.search(r"^\[tool\.pytest\.ini_options\].*?(?=^\[(?!tool\.pytest))", pp, re.S | re.M)
    ini = m.group(0) if m else ""
    ini = re.sub(r"^addopts\s*=.*$", "", ini, flags=re.M)   # no --doctest-modules here
    (dst / "pyproject.toml").write_text(ini)


def _results(cwd: Path, env: dict) -> collections.Counter:
    out = subprocess.run([sys.executable, "-m", "mutmut", "results", "--all", "true"], cwd=cwd,
                         env=env, capture_output=True, text=True, check=False).stdout
    counts: collections.Counter = collections.Counter()
    for line in out.splitlines():
        if ":" in line and "__mutmut_" in line:
            counts[line.rsplit(":", 1)[1].strip()] += 1
    return counts


def _names(cwd: Path, env: dict, statuses: set[str]) -> list[str]:
    """The mutants whose last status is one of ``statuses``."""
    out = subprocess.run([sys.executable, "-m", "mutmut", "results", "--all", "true"], cwd=cwd,
                         env=env, capture_output=True, text=True, check=False).stdout
    return [line.rsplit(":", 1)[0].strip() for line in out.splitlines()
            if "__mutmut_" in line and line.rsplit(":", 1)[1].strip() in statuses]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("target", help="the file to mutate, e.g. quadnet/geometry/_kernels.py")
    ap.add_argument("tests", nargs="+", help="test files to run against each mutant")
    ap.add_argument("--max-children", type=int, default=2)
    ap.add_argument("--keep", help="work in this directory (kept: mutmut resumes there)")
    ap.add_argument("--retest", action="store_true",
                    help="with --keep: refresh the tests there and re-run the survivors only")
    args = ap.parse_args(argv)
    if args.retest and not (args.keep and (Path(args.keep) / "setup.cfg").exists()):
        ap.error("--retest needs --keep DIR of an earlier run")

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="quadnet-mutmut-"))
    if not (work / "setup.cfg").exists():
        work.mkdir(parents=True, exist_ok=True)
        _copy_project(work, args.tests)
        (work / "setup.cfg").write_text(_setup_cfg(args.target, args.tests))
    env = dict(os.environ, PYTHONPATH=str(work), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    names: list[str] = []
    if args.retest:
        if (ROOT / args.target).read_text() != (work / args.target).read_text():
            print(f"{args.target} changed since the run in {work}: start a fresh run")
            return 1
        changed = [t for t in args.tests if not (work / t).exists()
                   or (work / t).read_bytes() != (ROOT / t).read_bytes()]
        for t in changed:
            shutil.copy2(ROOT / t, work / t)
        if not changed:
            print("no test file changed: nothing to re-run")
            return 0
        # the test selection stays as it was (mutmut resets every verdict when it changes);
        # new test functions are mapped to the functions they reach by mutmut's own stats
        names = _names(work, env, {"survived"} | NOT_REACHED)
        print(f"re-running {len(names)} mutants that survived or were not reached "
              f"({', '.join(changed)} changed)")
    t0 = time.time()
    proc = subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children",
                           str(args.max_children), *names], cwd=work, env=env, check=False)
    wall = time.time() - t0
    counts = _results(work, env)
    total = sum(counts.values())
    killed = sum(n for s, n in counts.items() if s in KILLED)
    reached = total - sum(n for s, n in counts.items() if s in NOT_REACHED)
    print(f"\nmutmut exit status {proc.returncode}; {wall / 60:.1f} min wall; work dir {work}")
    for status, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {status:22s} {n}")
    if total:
        print(f"score {args.target}: killed {killed} / all {total} = {killed / total:.1%}"
              f"  (over the {reached} reached by a test: {killed / max(reached, 1):.1%})")
    if not args.keep:
        print(f"(scratch directory left at {work} for `mutmut browse`; delete it when done)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
