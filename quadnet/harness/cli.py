"""The ``quadnet`` command: a thin layer over ``quadnet.harness.checks`` and the sweeps.

``quadnet verify [NAME ...] [--quick] [--format text|markdown|latex|json] [--json FILE]
[--resume FILE] [--seed N] [--figures DIR]`` runs the registered checks and prints one table
(claim, kind, source, reference value, measured, tolerance, status), check by check as each
finishes, then a summary line and the wall time. ``--json FILE`` is rewritten atomically after
every check; ``--resume FILE`` skips the checks FILE already holds (same version, seed and
mode); SIGINT and SIGTERM stop the run with the finished checks saved.

``quadnet figures [NAME ...] [--from REPORT.json] [--out DIR] [--width IN] [--height IN]
[--format pdf,png,svg] [--style paper|slides]`` redraws the figures from a saved report
without recomputing (``--from``), or recomputes them (and says so).

``quadnet sweep NAME [--quick] [--set KEY=V1,V2 ...] [--store DIR] [--workers N | --dask-local
N | --scheduler ADDRESS]`` runs or resumes a parameter sweep; ``quadnet sweep --list`` lists
them.

``quadnet report FILE.json [--format markdown|latex|json|text] [--out FILE]`` turns a
``verify --json`` report into a results table.

``verify``, ``figures`` and ``sweep`` take ``--checks FILE_OR_MODULE`` (checks of one's own,
:mod:`quadnet.harness.discovery`); ``quadnet verify --list`` lists every check with its origin.
``quadnet compare OLD.json NEW.json`` (:mod:`quadnet.harness.compare`) lists the rows that
moved; ``quadnet new-check NAME`` (:mod:`quadnet.harness.newcheck`) writes a template check.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import platform
import signal
import sys
import threading
import time
from pathlib import Path

from quadnet.harness.report import (
    REFERENCES,  # noqa: F401 - the old home of these names
    REPORT_SCHEMA,
    ReportError,
    TableStream,
    format_duration,
    format_report,
    read_report,
    results_latex,  # noqa: F401
    results_markdown,  # noqa: F401
    results_text,  # noqa: F401
    summary_lines,  # noqa: F401
    write_json_atomic,
)

#: Exit codes of ``quadnet verify`` (also in ``--help``); a run stopped by a signal exits
#: with 128 + the signal number (``EXIT_SIGINT`` for Ctrl-C, ``EXIT_SIGTERM``).
EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_SKIPPED = 0, 1, 2, 3
EXIT_SIGINT, EXIT_SIGTERM = 130, 143

_EXIT_HELP = """\
exit status:
  0  every row ran and every check passed
  1  a row failed or a check crashed (the other checks still ran)
  2  usage error: unknown check, bad option, unwritable output path (nothing was computed)
  3  nothing failed, but some rows were SKIPPED (a missing optional dependency: the summary
     names the rows and the install command)
  130, 143  stopped by Ctrl-C (SIGINT) or SIGTERM; the finished checks are saved in --json
     FILE, and `quadnet verify --resume FILE` runs the rest
"""

_FIGURES_EXIT_HELP = """\
exit status:
  0  every figure was drawn (and, when recomputed, no check failed)
  1  a drawer failed, a recomputed check failed, or a figure of the report has no drawer
     in this quadnet
  2  usage error: bad option, unknown check or figure name, unwritable --out, a file that
     is not a verify --json report (nothing was drawn)
  130, 143  stopped by Ctrl-C (SIGINT) or SIGTERM; the figure files written so far are kept
"""

def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for pkg in ("quadnet", "numpy", "scipy", "pymanopt", "autograd", "matplotlib", "cvxpy"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


# ------------------------------------------------------------------ helpers
def _writable_dir(path: str, what: str) -> str | None:
    """``None`` if ``path`` is (or can be made) a writable directory, else a clear message."""
    p = Path(path)
    try:
        if p.exists() and not p.is_dir():
            return f"{what} {path!r} exists and is not a directory"
        p.mkdir(parents=True, exist_ok=True)
        probe = p / f".quadnet-write-probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        return f"{what} {path!r} is not writable ({exc.strerror or exc}); choose a " \
               "directory you can write to"
    return None


def _writable_file(path: str, what: str) -> str | None:
    parent = Path(path).parent
    err = _writable_dir(str(parent), f"the directory of {what}")
    if err is None and Path(path).is_dir():
        return f"{what} {path!r} is a directory"
    return err


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


#: What ``quadnet verify --quick`` took, measured (``/usr/bin/time``, quadnet 0.2.0.dev0, the
#: nine checks): CPU seconds (user + sys, children included, ``/usr/bin/time``) and wall
#: seconds on a 2-core machine at a 1-minute load of 0.7-0.8 (2026-12-02). The one quick-mode time claim: ``--help``, the
#: end-of-run note, the README and Getting started say the same. Wall time grows with the
#: load; it is a note, never a limit.
QUICK_MEASURED = {"cpu_seconds": 36.8, "wall_seconds": 36.9, "load": "0.7-0.8",
                  "machine": "a 2-core machine"}


#: Names of quadnet 0.2 (a quick-mode time it aimed at); kept so that scripts importing them
#: still run. Nothing compares a run with them any more.
QUICK_BUDGET, PER_CHECK_QUICK_BUDGET = 120.0, 20.0


def quick_time_claim() -> str:
    """The measured quick-mode time as one phrase (``--help`` and the end-of-run note).

    Examples
    --------
    >>> quick_time_claim()
    'about 40 CPU-seconds for the nine checks; 37 s wall measured on a 2-core machine at load 0.7-0.8, longer when the machine is busier'
    """
    m = QUICK_MEASURED
    return (f"about {round(m['cpu_seconds'], -1):.0f} CPU-seconds for the nine checks; "
            f"{format_duration(m['wall_seconds'])} wall measured on {m['machine']} at load "
            f"{m['load']}, longer when the machine is busier")


def _quick_note(report: dict, out=None) -> None:
    """After a quick run: how long it took, next to the measured reference (a note only)."""
    out = sys.stderr if out is None else out
    wall = sum(c.get("run", {}).get("seconds", 0.0) for c in report["checks"])
    cpu = sum(c.get("run", {}).get("cpu_seconds", 0.0) for c in report["checks"])
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"[quadnet] note: the checks took {wall:.1f} s wall, {cpu:.1f} s CPU in quick mode "
          f"(load now {load:.1f}; measured reference: {quick_time_claim()})", file=out,
          flush=True)


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


def _progress_on(args) -> bool:
    if getattr(args, "progress", False):
        return True
    return sys.stderr.isatty() and not args.no_progress


def _exit_code(report: dict) -> int:
    st = [c.get("status") or ("PASS" if c.get("passed") else "FAIL") for c in report["checks"]]
    if "FAIL" in st:
        return EXIT_FAIL
    return EXIT_SKIPPED if "PARTLY SKIPPED" in st else EXIT_OK


# ------------------------------------------------------------------ verify: save, resume, stop
class Interrupted(KeyboardInterrupt):
    """A signal (SIGTERM, or SIGINT as ``KeyboardInterrupt``) stopped ``quadnet verify``."""

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signum)
        self.signum = signum


def _raise_interrupted(signum, frame):  # noqa: ARG001 - the signal handler signature
    raise Interrupted(signum)


@contextlib.contextmanager
def _stop_on_sigterm():
    """SIGTERM raises :class:`Interrupted` in the main thread (as Ctrl-C raises
    ``KeyboardInterrupt``), so a terminated run stops where a Ctrl-C would."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGTERM, _raise_interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _run_key(chk: dict, report: dict) -> dict:
    """The quadnet version, seed and mode a saved check ran with (a report written before
    the per-check record falls back to the report's own)."""
    run = chk.get("run") or {}
    return {"version": run.get("quadnet", report.get("versions", {}).get("quadnet")),
            "seed": run.get("seed", report.get("seed")),
            "mode": run.get("mode", report.get("mode"))}


def _load_resume(path: str) -> tuple[dict | None, str | None]:
    """The report to resume from (``None`` if the file does not exist yet), or an error."""
    if not Path(path).exists():
        return None, None
    try:
        return read_report(path), None
    except ReportError as exc:
        return None, f"--resume {exc}"


def _plan_resume(prior: dict, path: str, wanted: list[str], now: dict) -> tuple[dict, list]:
    """Split the checks of ``prior`` into those kept (same version, seed and mode as ``now``)
    and the rest, saying which and why on stderr. Returns (kept by name, messages)."""
    kept, redo, dropped = {}, [], []
    for chk in prior["checks"]:
        name = chk.get("name") if isinstance(chk, dict) else None
        if not isinstance(name, str):
            continue
        key = _run_key(chk, prior)
        if "run" not in chk:  # a report written before the per-check record
            chk = {**chk, "run": {"quadnet": key["version"], "seed": key["seed"],
                                  "mode": key["mode"],
                                  "seconds": (prior.get("seconds") or {}).get(name) or 0.0,
                                  "cpu_seconds": (prior.get("cpu_seconds") or {}).get(name)
                                  or 0.0}}
        diff = [f"{k} {key[k]} there, {now[k]} now" for k in ("version", "seed", "mode")
                if key[k] != now[k]]
        if not diff:
            kept[name] = chk
        elif name in wanted:
            redo.append(f"{name} ({'; '.join(diff)})")
        else:
            dropped.append(f"{name} ({'; '.join(diff)})")
    msgs = []
    skip = [n for n in wanted if n in kept]
    if skip:
        msgs.append(f"resume: skipping {', '.join(skip)} (already in {path}, same "
                    "version/seed/mode)")
    if redo:
        msgs.append(f"resume: re-running {', '.join(redo)}")
    if dropped:
        msgs.append(f"resume: leaving out of the report {', '.join(dropped)} (not asked "
                    "for, and ran with other settings)")
    todo = [n for n in wanted if n not in kept]
    msgs.append(f"resume: running {', '.join(todo)}" if todo else
                "resume: nothing left to run")
    return kept, msgs


def _resume_command(args, path: str) -> str:
    parts = ["quadnet verify", *args.names, "--resume", path]
    if args.quick:
        parts.append("--quick")
    if args.seed:
        parts.append(f"--seed {args.seed}")
    if args.figures is not None:
        parts.append(f"--figures {args.figures!r}" if args.figures == "" else
                     f"--figures {args.figures}")
    return " ".join(parts)


# ------------------------------------------------------------------ commands
def cmd_verify(args) -> int:
    t_start = time.perf_counter()
    from quadnet.harness import discovery  # user checks: --checks and quadnet.checks entry points

    load_errors = discovery.load_for_command(args.checks, "verify")
    if load_errors is None:
        return EXIT_USAGE
    if args.list:
        sys.stdout.write(discovery.format_list("json" if args.format == "json" else "text"))
        return EXIT_FAIL if load_errors else EXIT_OK
    figures = args.figures
    if figures is None:
        figures = "" if args.quick else "figures"
    if figures:
        err = _writable_dir(figures, "--figures")
        if err:
            print(f"quadnet verify: {err}", file=sys.stderr)
            return EXIT_USAGE
    prior = None
    if args.resume:
        prior, err = _load_resume(args.resume)
        if err:
            print(f"quadnet verify: {err}", file=sys.stderr)
            return EXIT_USAGE
    out_json = args.json or args.resume
    if out_json:
        err = _writable_file(out_json, "--json" if args.json else "--resume")
        if err:
            print(f"quadnet verify: {err}", file=sys.stderr)
            return EXIT_USAGE

    from tqdm.auto import tqdm

    from quadnet.harness import checks

    registered = checks.available()
    default = registered if args.all else checks.default_checks()
    wanted = list(args.names or (prior or {}).get("requested") or default)
    wanted = wanted + [n for n in load_errors if n not in wanted]  # failed sources: FAIL rows
    if _unknown_checks(checks, wanted, "verify"):
        return EXIT_USAGE
    mode = "quick" if args.quick else "full"
    versions = _versions()
    now = {"version": versions["quadnet"], "seed": args.seed, "mode": mode}
    kept: dict[str, dict] = {}
    if args.resume and prior is None:
        print(f"[quadnet] resume: {args.resume} does not exist yet, so every check runs",
              file=sys.stderr, flush=True)
    elif prior is not None:
        kept, msgs = _plan_resume(prior, args.resume, wanted, now)
        for msg in msgs:
            print(f"[quadnet] {msg}", file=sys.stderr, flush=True)
    todo = [n for n in wanted if n not in kept]
    show = _progress_on(args)
    ctx = checks.CheckContext(seed=args.seed, quick=args.quick,
                              figures_dir=Path(figures) if figures else None,
                              show_progress=show,
                              progress_lines=not show and not args.no_progress)
    print(f"[quadnet] verify: {len(todo)} check{'' if len(todo) == 1 else 's'}"
          f"{f' (of {len(wanted)})' if kept else ''} in {mode} mode, seed {args.seed}; figures "
          f"{'into ' + figures + '/' if figures else 'not drawn'}"
          f"{'; report saved after each check in ' + out_json if out_json else ''}",
          file=sys.stderr, flush=True)
    order = {n: i for i, n in enumerate(registered)}
    extra = [c["name"] for c in (prior or {}).get("checks", [])
             if c.get("name") in kept and c["name"] not in wanted]
    done: dict[str, dict] = dict(kept)
    stream = TableStream(args.format, wanted + extra)

    def report_now(complete: bool, interrupted: str | None = None) -> dict:
        names = sorted(done, key=lambda n: (n not in wanted, order.get(n, len(order)),
                                            (wanted + extra).index(n)))
        chks = [done[n] for n in names]
        rep = {
            "schema": REPORT_SCHEMA,
            "checks": chks,
            "passed": bool(chks) and all(c.get("passed") for c in chks),
            "complete": complete,
            "seed": args.seed,
            "mode": mode,
            "versions": versions,
            "requested": wanted,
            "seconds": {c["name"]: c.get("run", {}).get("seconds") for c in chks},
            "seconds_total": round(sum(c["run"].get("seconds") or 0.0 for c in chks
                                       if c["name"] in kept)
                                   + time.perf_counter() - t_start, 2),
            "cpu_seconds": {c["name"]: c.get("run", {}).get("cpu_seconds") for c in chks},
        }
        if interrupted:
            rep["interrupted"] = interrupted
        return rep

    def save(rep: dict) -> None:
        if out_json:
            write_json_atomic(out_json, rep)

    current = None
    try:
        with _stop_on_sigterm():
            for name in wanted:
                if name in kept:
                    stream.check(kept[name])
            bar = tqdm(todo, desc="verify", unit="check", disable=not show, position=0,
                       dynamic_ncols=True)
            for name in bar:
                current = name
                bar.set_postfix_str(name)
                t0, c0 = time.perf_counter(), _cpu_seconds()
                if not show:
                    print(f"[quadnet] running check {name!r} ({mode}) ...", file=sys.stderr,
                          flush=True)
                with ctx.activity(name):
                    res = _run_one(checks, name, ctx)
                wall, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
                chk = res.as_dict()
                chk["run"] = {"quadnet": versions["quadnet"], "seed": args.seed, "mode": mode,
                              "seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
                              "finished": datetime.datetime.now(datetime.timezone.utc)
                              .isoformat(timespec="seconds")}
                done[name] = chk
                save(report_now(complete=False))
                current = None
                bar.write(f"[quadnet] {name}: {res.status} in {wall:.1f} s (cpu {cpu:.1f} s)",
                          file=sys.stderr)
                stream.check(chk)
            bar.close()
            report = report_now(complete=True)
            save(report)
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        sig = signal.Signals(signum).name
        report = report_now(complete=False, interrupted=sig)
        with contextlib.suppress(KeyboardInterrupt):
            save(report)
            stream.end(report)
        finished = ", ".join(report["seconds"]) or "none"
        where = f" during check {current!r}" if current else ""
        if out_json:
            print(f"\nquadnet verify: stopped by {sig}{where}; the finished checks ({finished}) "
                  f"are saved in {out_json}; continue with: {_resume_command(args, out_json)}",
                  file=sys.stderr, flush=True)
        else:
            print(f"\nquadnet verify: stopped by {sig}{where}; finished checks: {finished} "
                  "(their rows are printed above, nothing was saved: with --json FILE every "
                  "finished check is saved and `quadnet verify --resume FILE` continues)",
                  file=sys.stderr, flush=True)
        return 128 + int(signum)
    stream.end(report)
    if args.quick:
        _quick_note(report)
    return _exit_code(report)


def _figure_options(args) -> dict:
    """The --width/--height/--format/--style of ``quadnet figures``, checked."""
    from quadnet.harness.figures import check_figure_options

    return check_figure_options(width=args.width, height=args.height, style=args.style,
                                formats=args.fig_format)


def cmd_figures(args) -> int:
    try:
        opts = _figure_options(args)
    except (TypeError, ValueError) as exc:
        print(f"quadnet figures: {exc}", file=sys.stderr)
        return EXIT_USAGE
    err = _writable_dir(args.out, "--out")
    if err:
        print(f"quadnet figures: {err}", file=sys.stderr)
        return EXIT_USAGE
    from quadnet.harness import checks, discovery

    out = Path(args.out)
    if args.from_report:
        return _figures_from_report(checks, args, out, opts)
    if discovery.load_for_command(args.checks, "figures") is None:
        return EXIT_USAGE
    wanted = args.names or checks.available()
    if _unknown_checks(checks, wanted, "figures"):
        return EXIT_USAGE
    mode = "quick" if args.quick else "full"
    print(f"[quadnet] figures: no --from report given, so the checks are recomputed in {mode} "
          f"mode (seed {args.seed}); `quadnet figures --from report.json` redraws without "
          "recomputing", file=sys.stderr, flush=True)
    show = _progress_on(args)
    ctx = checks.CheckContext(seed=args.seed, quick=args.quick, figures_dir=out,
                              show_progress=show, figure_options=opts,
                              progress_lines=not show and not args.no_progress)
    failed, written = [], []
    try:
        with _stop_on_sigterm():
            for name in wanted:
                print(f"[quadnet] recomputing check {name!r} ({mode}) for its figures ...",
                      file=sys.stderr, flush=True)
                with ctx.activity(name):
                    res = _run_one(checks, name, ctx)
                written += res.figures
                if res.status == "FAIL":
                    failed.append(name)
                for f in res.figures:
                    print(f)
                for stem, note in res.figure_notes.items():
                    print(f"[quadnet] figure {stem}: {note}", file=sys.stderr)
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        print(f"\nquadnet figures: stopped by {signal.Signals(signum).name}; the "
              f"{len(written)} figure files written so far are kept in {out}/",
              file=sys.stderr, flush=True)
        return 128 + int(signum)
    print(f"{len(written)} figure files written in {out}/", file=sys.stderr)
    if ctx.figure_errors:
        return EXIT_FAIL
    if failed:
        print(f"quadnet figures: check(s) {', '.join(failed)} did not pass; their figures "
              "show what was measured; run quadnet verify for details", file=sys.stderr)
        return EXIT_FAIL
    return EXIT_OK


def _figures_from_report(checks, args, out: Path, opts: dict) -> int:
    from quadnet.harness import discovery  # user drawers: --checks, entry points, the report
    from quadnet.harness.figures import _drawers

    try:
        report = read_report(args.from_report)
    except ReportError as exc:
        print(f"quadnet figures: --from {exc}", file=sys.stderr)
        return EXIT_USAGE
    checks.available()  # registers every check module, hence every figure drawer
    if discovery.load_for_report(args.checks, report) is None:
        return EXIT_USAGE
    drawers = _drawers()
    stems_in = {s for c in report["checks"] for s in (c.get("figure_data") or {})}
    known = {c.get("name") for c in report["checks"]} | stems_in
    unknown = [n for n in args.names if n not in known]
    if unknown:
        print(f"quadnet figures: {', '.join(unknown)} not in {args.from_report} (its checks: "
              f"{', '.join(c.get('name', '?') for c in report['checks'])}; its figures: "
              f"{', '.join(sorted(stems_in)) or 'none'})", file=sys.stderr)
        return EXIT_USAGE
    wanted = set(args.names)
    ctx = checks.CheckContext(seed=report.get("seed", 0), quick=report.get("mode") == "quick",
                              figures_dir=out, figure_options=opts)
    written, missing = [], []
    for chk in report["checks"]:
        data = chk.get("figure_data") or {}
        whole = not wanted or chk.get("name") in wanted
        if not whole and not wanted & set(data):
            continue
        stems = {Path(f).stem for f in chk.get("figures") or []}
        if whole and stems - set(data):
            print(f"[quadnet] check {chk['name']!r} stored no data for "
                  f"{', '.join(sorted(stems - set(data)))}; redraw those with "
                  f"`quadnet figures {chk['name']}` (recomputes)", file=sys.stderr)
        for stem, note in (chk.get("figure_notes") or {}).items():
            if stem not in data and (whole or stem in wanted):
                print(f"[quadnet] figure {stem} ({chk['name']}): {note}", file=sys.stderr)
        for stem, d in data.items():
            if not whole and stem not in wanted:
                continue
            if stem not in drawers:
                missing.append(stem)
                continue
            res = checks.CheckResult(chk["name"], chk.get("claim", ""))
            ctx.draw(res, stem, d)
            written += res.figures
            for f in res.figures:
                print(f)
    print(f"{len(written)} figure files redrawn from {args.from_report} "
          f"({report.get('mode', '?')} mode report, nothing recomputed) in {out}/",
          file=sys.stderr)
    if missing:
        print(f"quadnet figures: no drawer for {', '.join(missing)} in this quadnet",
              file=sys.stderr)
    return EXIT_FAIL if ctx.figure_errors or missing else EXIT_OK


def _parse_set(items: list[str]) -> dict[str, list[str]]:
    grid: dict[str, list[str]] = {}
    for item in items or []:
        key, sep, values = item.partition("=")
        if not sep or not key.strip() or not values.strip():
            raise ValueError(f"--set expects KEY=V1,V2,..., got {item!r}")
        grid[key.strip()] = [v.strip() for v in values.split(",") if v.strip()]
    return grid


def cmd_sweep(args) -> int:
    from quadnet.harness import discovery, sweeps

    if discovery.load_for_command(args.checks, "sweep") is None:  # sweeps of user checks
        return EXIT_USAGE
    if args.list:
        for name in sweeps.available_sweeps():
            sw = sweeps.SWEEPS[name]
            nq = len(sweeps.sweep_cells(sw, quick=True))
            nf = len(sweeps.sweep_cells(sw, quick=False))
            axes = ", ".join(f"{k}={','.join(map(str, v))}" for k, v in sw.axes(True).items())
            print(f"{name:<14} {nq:>5} cells quick, {nf:>6} full   {sw.description}\n"
                  f"{'':<14} quick grid: {axes}")
        return EXIT_OK
    if not args.name:
        print("quadnet sweep: give a sweep NAME (quadnet sweep --list shows them)",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        grid = _parse_set(args.set)
        if grid:
            grid = sweeps.parse_grid(args.name, grid, quick=args.quick)
    except (ValueError, TypeError) as exc:
        print(f"quadnet sweep: {exc}", file=sys.stderr)
        return EXIT_USAGE
    suffix = ("-quick" if args.quick else "") + \
        (f"-custom-{sweeps.grid_tag(grid)}" if grid else "")
    store = args.store or str(Path("sweeps") / (args.name + suffix))
    if grid:
        print(f"[quadnet] sweep {args.name}: custom grid {grid} (other axes from the "
              f"{'quick' if args.quick else 'full'} grid) -> {store}", file=sys.stderr)
    try:
        rep = sweeps.run_sweep(args.name, store, quick=args.quick, seed=args.seed,
                               workers=args.workers, dask_local=args.dask_local,
                               scheduler=args.scheduler, chunk=args.chunk, grid=grid or None,
                               start_method=args.start_method,
                               progress=_progress_on(args))
    except sweeps.SweepCellError as exc:
        print(f"quadnet sweep: {exc}\nfinished cells are kept in {store}; fix the cause and "
              "rerun the same command to resume", file=sys.stderr)
        return EXIT_FAIL
    except (ValueError, TypeError, ImportError) as exc:
        print(f"quadnet sweep: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except RuntimeError as exc:  # e.g. spawned workers that could not start
        print(f"quadnet sweep: {exc}", file=sys.stderr)
        return EXIT_FAIL
    except KeyboardInterrupt:
        print(f"\nquadnet sweep: interrupted; finished cells are kept in {store}; rerun the "
              "same command to resume", file=sys.stderr)
        return 130
    print(f"sweep {args.name}: {rep.n_cells} cells ({rep.skipped} already finished, {rep.ran} "
          f"run now on {rep.backend}) -> {rep.results}")
    return EXIT_OK


def cmd_report(args) -> int:
    try:
        report = read_report(args.json_file)
    except ReportError as exc:
        print(f"quadnet report: {exc}", file=sys.stderr)
        return EXIT_USAGE
    text = format_report(report, args.format)
    if args.out:
        err = _writable_file(args.out, "--out")
        if err:
            print(f"quadnet report: {err}", file=sys.stderr)
            return EXIT_USAGE
        Path(args.out).write_text(text)
    else:
        print(text, end="")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="quadnet", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    fmt = ("text", "markdown", "latex", "json")

    v = sub.add_parser(
        "verify", help="reproduce the claims and print measured vs claimed",
        description="Run the checks and print every claim: kind (theorem of a cited paper, "
        "target, exploration), source, reference value, measured value, tolerance and status "
        "(PASS, FAIL, REPORTED = measured without a tolerance, SKIPPED = could not run, with "
        "the reason and the install command). The rows of each check are printed as soon as "
        "it finishes. Ctrl-C or SIGTERM stops the run: the finished checks stay in --json "
        "FILE and `quadnet verify --resume FILE` continues (exit status 130 / 143).",
        epilog=_EXIT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    v.add_argument("names", nargs="*", help="checks to run (default: all)")
    mode = v.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true",
                      help=f"small configuration ({quick_time_claim()}); draws no figures "
                      "unless --figures DIR is given, so the committed paper-scale figures "
                      "in figures/ are left alone")
    mode.add_argument("--full", action="store_true", help="paper-scale configuration (default)")
    v.add_argument("--format", choices=fmt, default="text",
                   help="table format on stdout (default text; latex uses booktabs)")
    v.add_argument("--json", metavar="FILE", help="also write the full report (rows, metrics, "
                   "figure data, and per check the version, seed, mode and wall/CPU seconds) "
                   "as JSON, rewritten atomically after each check, so a run that is stopped "
                   "keeps every finished check; `quadnet figures --from FILE` redraws from it")
    v.add_argument("--resume", metavar="FILE", help="continue the report FILE: skip the checks "
                   "it holds that ran with this quadnet version, seed and mode (re-run the "
                   "others, saying why) and write the merged report to FILE (or to --json); "
                   "without NAMEs, the checks FILE was asked for")
    v.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    v.add_argument("--figures", metavar="DIR", default=None,
                   help="where figures go (default: figures/ in full mode, none in quick "
                   "mode); '' draws none. Checked for writability before anything runs")
    v.add_argument("--progress", action="store_true",
                   help="progress bars even when stderr is not a terminal (without a "
                   "terminal, plain progress lines are written at least once a minute)")
    v.add_argument("--no-progress", action="store_true", help="no progress bars or lines")
    v.add_argument("--checks", action="append", metavar="FILE_OR_MODULE",
                   help="also load the checks of this .py file or importable module "
                   "(repeatable); they are then named like the built-in ones")
    v.add_argument("--all", action="store_true",
                   help="also run the heavy checks (parity, grokking), which a plain "
                   "`quadnet verify` leaves out; they also run when named")
    v.add_argument("--list", action="store_true",
                   help="list every check with its claim and where it comes from, and exit")
    v.set_defaults(func=cmd_verify)

    f = sub.add_parser(
        "figures", help="redraw the figures from a saved report, or recompute them",
        description="With --from REPORT.json (written by quadnet verify --json) the figures "
        "are redrawn from the data stored in the report, without recomputing anything. "
        "Without --from the checks are recomputed (full mode unless --quick) and say so.",
        epilog=_FIGURES_EXIT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    f.add_argument("names", nargs="*", help="checks whose figures to draw, or (with --from) "
                   "figure names such as rfm_grokking (default: all)")
    f.add_argument("--from", dest="from_report", metavar="REPORT.json",
                   help="redraw from this verify --json report (no recomputation)")
    f.add_argument("--out", metavar="DIR", default="figures",
                   help="output directory (default: figures/)")
    f.add_argument("--width", type=float, metavar="IN", help="figure width in inches (default: "
                   "each figure's own, 3.4 in for the single-column figures); the page is "
                   "exactly this wide")
    f.add_argument("--height", type=float, metavar="IN", help="figure height in inches "
                   "(default: keeps the aspect ratio)")
    f.add_argument("--format", dest="fig_format", default="pdf,png", metavar="pdf,png,svg",
                   help="file formats, comma-separated (default pdf,png)")
    f.add_argument("--style", choices=("paper", "slides"), default="paper",
                   help="paper: the committed figures (7 pt text; byte-identical at the default "
                   "size); slides: fonts and lines twice as large on a 16:9 page")
    f.add_argument("--quick", action="store_true", help="recompute in the small configuration")
    f.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    f.add_argument("--progress", action="store_true", help="progress bars even without a tty")
    f.add_argument("--no-progress", action="store_true", help="no progress bars")
    f.add_argument("--checks", action="append", metavar="FILE_OR_MODULE",
                   help="load the checks (and figure drawers) of this file or module "
                   "(repeatable); with --from, a check file recorded in the report is "
                   "loaded by itself when it is unchanged")
    f.set_defaults(func=cmd_figures)

    s = sub.add_parser("sweep", help="run or resume a parameter sweep (local processes or Dask)")
    s.add_argument("name", nargs="?", help="the sweep (quadnet sweep --list shows them)")
    s.add_argument("--list", action="store_true", help="list the sweeps and exit")
    s.add_argument("--quick", action="store_true", help="the small grid")
    s.add_argument("--set", action="append", metavar="KEY=V1,V2",
                   help="replace one axis of the grid, e.g. --set d=20,40 --set r=1,2 "
                   "(repeatable; values take the type of the axis)")
    s.add_argument("--store", metavar="DIR", help="store directory (default: sweeps/NAME, "
                   "with -quick and -custom-HASH suffixes); rerun with the same store to "
                   "resume")
    s.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    backend = s.add_mutually_exclusive_group()
    backend.add_argument("--workers", type=int, default=1, metavar="N",
                         help="local worker processes (default 1; 0 runs the cells in this "
                         "process)")
    backend.add_argument("--dask-local", type=int, metavar="N",
                         help="a local Dask cluster with N one-thread worker processes")
    backend.add_argument("--scheduler", metavar="ADDRESS",
                         help="an existing Dask scheduler, e.g. tcp://host:8786")
    s.add_argument("--start-method", choices=("fork", "spawn", "forkserver"),
                   help="how local worker processes start (default: fork where available)")
    s.add_argument("--chunk", type=int, metavar="N", help="cells per task (default: about 8 "
                   "tasks per worker, at most 16 cells each; results do not depend on it)")
    s.add_argument("--progress", action="store_true", help="progress bar even without a tty")
    s.add_argument("--no-progress", action="store_true", help="no progress bar")
    s.add_argument("--checks", action="append", metavar="FILE_OR_MODULE",
                   help="load the sweeps registered by this file or module (repeatable)")
    s.set_defaults(func=cmd_sweep)

    r = sub.add_parser("report", help="results table from a verify --json report")
    r.add_argument("json_file", metavar="FILE", help="written by quadnet verify --json FILE")
    r.add_argument("--format", choices=fmt, default="markdown",
                   help="table format (default markdown)")
    r.add_argument("--out", metavar="FILE", help="write the table here (default: stdout)")
    r.set_defaults(func=cmd_report)

    from quadnet.harness import compare, doctor, newcheck

    compare.add_parser(sub)
    newcheck.add_parser(sub)
    doctor.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
