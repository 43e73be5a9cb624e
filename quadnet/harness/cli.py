"""The ``quadnet`` command: a thin layer over :mod:`quadnet.checks` and :mod:`quadnet.sweeps`.

``quadnet verify [NAME ...] [--quick | --full] [--json FILE] [--seed N] [--figures DIR]``
runs the registered paper checks, prints one table (claim, paper, measured, tolerance,
pass) and exits 0 only when every check passes.

``quadnet figures [NAME ...] [--out DIR] [--quick] [--seed N]`` regenerates every figure
(PNG and PDF, deterministic: same seed, same bytes).

``quadnet sweep NAME [--quick] [--store DIR] [--seed N] [--workers N | --dask-local N |
--scheduler ADDRESS]`` runs or resumes a parameter sweep; ``quadnet sweep --list`` lists them.

``quadnet report FILE.json [--out FILE.md]`` turns a ``verify --json`` report into the
Markdown results table of the README.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from pathlib import Path


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for pkg in ("quadnet", "numpy", "scipy", "pymanopt", "autograd", "matplotlib"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def _fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        if not math.isfinite(x):
            return str(x)
        if x == 0 or 1e-3 <= abs(x) < 1e5:
            return f"{x:.4g}"
        return f"{x:.2e}"
    return str(x)


def _print_table(results, out=None) -> None:
    out = sys.stdout if out is None else out
    header = ("check", "claim", "paper", "measured", "tolerance", "pass")
    lines = []
    for res in results:
        for row in res.rows:
            tol = "-" if row.tolerance is None else f"{row.relation} {_fmt(row.tolerance)}"
            lines.append((res.name, row.claim, row.paper or "-", _fmt(row.measured), tol,
                          "PASS" if row.passed else "FAIL"))
        if not res.rows:
            lines.append((res.name, "(no rows)", "-", "-", "-", "FAIL"))
    widths = [max(len(h), *(len(ln[i]) for ln in lines)) if lines else len(h)
              for i, h in enumerate(header)]
    widths[1] = min(widths[1], 70)

    def fmt(cells):
        return "  ".join(c[:w].ljust(w) for c, w in zip(cells, widths)).rstrip()

    print(fmt(header), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for ln in lines:
        print(fmt(ln), file=out)


#: ``quadnet verify --quick`` must fit in this many seconds on the 2-core reference machine,
#: and each check in ``PER_CHECK_QUICK_BUDGET`` (RULES.md); reported, not enforced.
QUICK_BUDGET = 120.0
PER_CHECK_QUICK_BUDGET = 20.0


def _run_one(checks, name: str, ctx):
    """Run one check; an exception becomes a failed result (the other checks still run)."""
    try:
        return checks.run_check(name, ctx)
    except Exception as exc:  # noqa: BLE001 - reported as a failed check, with the traceback
        import traceback

        traceback.print_exc(file=sys.stderr)
        spec = checks.get(name)
        return checks.CheckResult(name, spec.claim,
                                  metrics={"error": f"{type(exc).__name__}: {exc}"})


def _report_budget(elapsed: dict[str, float], quick: bool, out=None) -> None:
    out = sys.stderr if out is None else out
    total = sum(elapsed.values())
    if not quick:
        print(f"[quadnet] total {total:.1f} s (full mode)", file=out, flush=True)
        return
    slow = {k: v for k, v in elapsed.items() if v > PER_CHECK_QUICK_BUDGET}
    verdict = "within" if total <= QUICK_BUDGET else "OVER"
    print(f"[quadnet] total {total:.1f} s: {verdict} the {QUICK_BUDGET:.0f} s quick budget",
          file=out, flush=True)
    for k, v in slow.items():
        print(f"[quadnet] check {k!r} took {v:.1f} s in quick mode, over the "
              f"{PER_CHECK_QUICK_BUDGET:.0f} s per-check budget by {v - PER_CHECK_QUICK_BUDGET:.1f} s",
              file=out, flush=True)


def _cpu_seconds() -> float:
    """CPU seconds of this process plus its finished child processes (checks may use some)."""
    t = time.process_time()
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return t
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return t + ru.ru_utime + ru.ru_stime


def _unknown_checks(checks, wanted: list[str], cmd: str) -> bool:
    names = checks.available()
    unknown = [n for n in wanted if n not in names]
    if unknown:
        print(f"quadnet {cmd}: unknown check(s) {', '.join(unknown)}; available: "
              f"{', '.join(names)}", file=sys.stderr)
    return bool(unknown)


def cmd_verify(args) -> int:
    from quadnet.harness import checks

    wanted = args.names or checks.available()
    if _unknown_checks(checks, wanted, "verify"):
        return 2
    ctx = checks.CheckContext(seed=args.seed, quick=args.quick,
                              figures_dir=Path(args.figures) if args.figures else None,
                              show_progress=sys.stderr.isatty() and not args.no_progress)
    results, elapsed, cpu = [], {}, {}
    for name in wanted:
        t0, c0 = time.perf_counter(), _cpu_seconds()
        print(f"[quadnet] running check {name!r} ({'quick' if args.quick else 'full'}) ...",
              file=sys.stderr, flush=True)
        res = _run_one(checks, name, ctx)
        elapsed[name] = time.perf_counter() - t0
        cpu[name] = _cpu_seconds() - c0
        results.append(res)
        print(f"[quadnet] {name}: {'PASS' if res.passed else 'FAIL'} in {elapsed[name]:.1f} s "
              f"(cpu {cpu[name]:.1f} s)", file=sys.stderr, flush=True)
    _print_table(results)
    ok = all(r.passed for r in results)
    print(f"\n{sum(r.passed for r in results)} of {len(results)} checks passed", flush=True)
    _report_budget(elapsed, args.quick)
    if args.json:
        report = {
            "checks": [r.as_dict() for r in results],
            "passed": ok,
            "seed": args.seed,
            "mode": "quick" if args.quick else "full",
            "versions": _versions(),
            "seconds": {k: round(v, 2) for k, v in elapsed.items()},
            "seconds_total": round(sum(elapsed.values()), 2),
            "cpu_seconds": {k: round(v, 2) for k, v in cpu.items()},
        }
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=2) + "\n")
    return 0 if ok else 1


def cmd_figures(args) -> int:
    from quadnet.harness import checks

    wanted = args.names or checks.available()
    if _unknown_checks(checks, wanted, "figures"):
        return 2
    out = Path(args.out)
    ctx = checks.CheckContext(seed=args.seed, quick=args.quick, figures_dir=out,
                              show_progress=sys.stderr.isatty() and not args.no_progress)
    failed, written = [], []
    for name in wanted:
        print(f"[quadnet] drawing the figures of {name!r} ...", file=sys.stderr, flush=True)
        res = _run_one(checks, name, ctx)
        written += res.figures
        if not res.passed:
            failed.append(name)
        for f in res.figures:
            print(f)
    print(f"{len(written)} figure files in {out}/", file=sys.stderr)
    if failed:
        print(f"quadnet figures: check(s) {', '.join(failed)} did not pass (their figures "
              "were still drawn); run quadnet verify for details", file=sys.stderr)
        return 1
    return 0


def cmd_sweep(args) -> int:
    from quadnet.harness import sweeps

    if args.list:
        for name in sweeps.available_sweeps():
            sw = sweeps.SWEEPS[name]
            nq = len(sweeps.sweep_cells(sw, quick=True))
            nf = len(sweeps.sweep_cells(sw, quick=False))
            print(f"{name:<14} {nq:>5} cells quick, {nf:>6} full   {sw.description}")
        return 0
    if not args.name:
        print("quadnet sweep: give a sweep NAME (quadnet sweep --list shows them)",
              file=sys.stderr)
        return 2
    store = args.store or str(Path("sweeps") / (args.name + ("-quick" if args.quick else "")))
    try:
        rep = sweeps.run_sweep(args.name, store, quick=args.quick, seed=args.seed,
                               workers=args.workers, dask_local=args.dask_local,
                               scheduler=args.scheduler, chunk=args.chunk,
                               progress=sys.stderr.isatty() and not args.no_progress)
    except sweeps.SweepCellError as exc:
        print(f"quadnet sweep: {exc}\nfinished cells are kept in {store}; fix the cause and "
              "rerun the same command to resume", file=sys.stderr)
        return 1
    except (ValueError, TypeError, ImportError) as exc:
        print(f"quadnet sweep: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\nquadnet sweep: interrupted; finished cells are kept in {store}; rerun the "
              "same command to resume", file=sys.stderr)
        return 130
    print(f"sweep {args.name}: {rep.n_cells} cells ({rep.skipped} already finished, {rep.ran} "
          f"run now on {rep.backend}) -> {rep.results}")
    return 0


def results_markdown(report: dict) -> str:
    """The README results table (check | claim | paper | measured | tolerance | pass) of a
    ``quadnet verify --json`` report, followed by one line on mode, seed and versions."""

    def cell(x) -> str:
        return str(x).replace("|", "\\|").replace("\n", " ")

    def num(x) -> str:
        return _fmt(x) if isinstance(x, (int, float)) or x is None else str(x)

    lines = ["| check | claim | paper | measured | tolerance | pass |",
             "|---|---|---|---|---|---|"]
    for chk in report.get("checks", []):
        rows = chk.get("rows") or [{"claim": "(no rows: " + str(chk.get("metrics", {}).get(
            "error", "the check measured nothing")) + ")", "paper": "", "measured": None,
            "tolerance": None, "relation": "", "passed": False}]
        for row in rows:
            tol = "-" if row.get("tolerance") is None else \
                f"{row.get('relation', '')} {num(row['tolerance'])}".strip()
            lines.append("| " + " | ".join(cell(c) for c in (
                chk["name"], row["claim"], row.get("paper") or "-", num(row.get("measured")),
                tol, "PASS" if row.get("passed") else "**FAIL**")) + " |")
    v = report.get("versions", {})
    tail = (f"\n_{report.get('mode', '?')} mode, seed {report.get('seed', '?')}, "
            f"quadnet {v.get('quadnet', '?')}, Python {v.get('python', '?')}, numpy "
            f"{v.get('numpy', '?')}")
    if "seconds_total" in report:
        tail += f"; {report['seconds_total']:.0f} s in all"
    return "\n".join(lines) + tail + "._\n"


def cmd_report(args) -> int:
    try:
        report = json.loads(Path(args.json_file).read_text())
    except (OSError, ValueError) as exc:
        print(f"quadnet report: cannot read {args.json_file!r} as a quadnet verify --json "
              f"report ({exc})", file=sys.stderr)
        return 2
    if not isinstance(report, dict) or not isinstance(report.get("checks"), list):
        print(f"quadnet report: {args.json_file!r} is not a quadnet verify --json report "
              "(no 'checks' list)", file=sys.stderr)
        return 2
    text = results_markdown(report)
    if args.out:
        Path(args.out).write_text(text)
    else:
        print(text, end="")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="quadnet", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    v = sub.add_parser("verify", help="reproduce the paper's claims and print measured vs claimed")
    v.add_argument("names", nargs="*", help="checks to run (default: all)")
    mode = v.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small configuration (< 2 min in all)")
    mode.add_argument("--full", action="store_true", help="paper-scale configuration (default)")
    v.add_argument("--json", metavar="FILE", help="write the report as JSON")
    v.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    v.add_argument("--figures", metavar="DIR", default="figures",
                   help="where figures go (default: figures/); '' to draw none")
    v.add_argument("--no-progress", action="store_true", help="no progress bars")
    v.set_defaults(func=cmd_verify)

    f = sub.add_parser("figures", help="regenerate every figure (PNG and PDF) deterministically")
    f.add_argument("names", nargs="*", help="checks whose figures to draw (default: all)")
    f.add_argument("--out", metavar="DIR", default="figures", help="output directory "
                   "(default: figures/)")
    f.add_argument("--quick", action="store_true", help="small configuration")
    f.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    f.add_argument("--no-progress", action="store_true", help="no progress bars")
    f.set_defaults(func=cmd_figures)

    s = sub.add_parser("sweep", help="run or resume a parameter sweep (local processes or Dask)")
    s.add_argument("name", nargs="?", help="the sweep (quadnet sweep --list shows them)")
    s.add_argument("--list", action="store_true", help="list the sweeps and exit")
    s.add_argument("--quick", action="store_true", help="the small grid")
    s.add_argument("--store", metavar="DIR", help="store directory (default: sweeps/NAME, "
                   "sweeps/NAME-quick with --quick); rerun with the same store to resume")
    s.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    backend = s.add_mutually_exclusive_group()
    backend.add_argument("--workers", type=int, default=1, metavar="N",
                         help="local worker processes (default 1; 0 runs the cells in this "
                         "process)")
    backend.add_argument("--dask-local", type=int, metavar="N",
                         help="a local Dask cluster with N one-thread worker processes")
    backend.add_argument("--scheduler", metavar="ADDRESS",
                         help="an existing Dask scheduler, e.g. tcp://host:8786")
    s.add_argument("--chunk", type=int, metavar="N", help="cells per task (default: about 8 "
                   "tasks per worker, at most 16 cells each; results do not depend on it)")
    s.add_argument("--no-progress", action="store_true", help="no progress bar")
    s.set_defaults(func=cmd_sweep)

    r = sub.add_parser("report", help="Markdown results table from a verify --json report")
    r.add_argument("json_file", metavar="FILE", help="written by quadnet verify --json FILE")
    r.add_argument("--out", metavar="FILE", help="write the table here (default: stdout)")
    r.set_defaults(func=cmd_report)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
