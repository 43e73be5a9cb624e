"""``quadnet verify``: plan the run, run the checks, save the report after each one.

:func:`run` is the command: it loads the checks of one's own (``--checks``, entry points),
answers ``--list``, then :func:`plan` decides everything before a check runs (the output
paths are checked, ``--resume FILE`` is read and split into the checks kept and those to run)
and :func:`run_checks` runs them, streaming the table
(:class:`~quadnet.harness.report.TableStream`) and saving the report with :func:`save` after
every check. SIGINT and SIGTERM stop the run with the finished checks saved.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import platform
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from quadnet.harness import checks, discovery
from quadnet.harness.cli import _common
from quadnet.harness.cli._common import (
    EXIT_FAIL,
    EXIT_OK,
    EXIT_SKIPPED,
    EXIT_USAGE,
    progress_on,
    stop_on_sigterm,
    unknown_checks,
    writable_dir,
    writable_file,
)
from quadnet.harness.report import (
    REPORT_SCHEMA,
    ReportError,
    TableStream,
    format_duration,
    read_report,
    write_json_atomic,
)
from quadnet.harness.sweeps import cpu_seconds

__all__ = ["PER_CHECK_QUICK_BUDGET", "QUICK_BUDGET", "QUICK_MEASURED", "Plan", "add_parser",
           "plan", "quick_time_claim", "run", "run_checks", "save"]

EXIT_HELP = """\
exit status:
  0  every row ran and every check passed
  1  a row failed or a check crashed (the other checks still ran)
  2  usage error: unknown check, bad option, unwritable output path (nothing was computed)
  3  nothing failed, but some rows were SKIPPED (a missing optional dependency: the summary
     names the rows and the install command)
  130, 143  stopped by Ctrl-C (SIGINT) or SIGTERM; the finished checks are saved in --json
     FILE, and `quadnet verify --resume FILE` runs the rest
"""

#: What ``quadnet verify --quick`` took, measured (``/usr/bin/time``, the ten default checks):
#: CPU seconds (user + sys, children included, ``/usr/bin/time``) and wall seconds on a 2-core
#: machine at a 1-minute load of 0.6 (2026-12-02). The one quick-mode time claim: ``--help``, the
#: end-of-run note, the README and Getting started say the same. Wall time grows with the
#: load; it is a note, never a limit.
QUICK_MEASURED = {"cpu_seconds": 12.7, "wall_seconds": 12.6, "load": "0.6",
                  "machine": "a 2-core machine"}


#: Names of quadnet 0.2 (a quick-mode time it aimed at); kept so that scripts importing them
#: still run. Nothing compares a run with them any more.
QUICK_BUDGET, PER_CHECK_QUICK_BUDGET = 120.0, 20.0


def quick_time_claim() -> str:
    """The measured quick-mode time as one phrase (``--help`` and the end-of-run note).

    Examples
    --------
    >>> quick_time_claim()
    'about 10 CPU-seconds for the ten default checks; 13 s wall measured on a 2-core machine at load 0.6, longer when the machine is busier'
    """
    m = QUICK_MEASURED
    return (f"about {round(m['cpu_seconds'], -1):.0f} CPU-seconds for the ten default checks; "
            f"{format_duration(m['wall_seconds'])} wall measured on {m['machine']} at load "
            f"{m['load']}, longer when the machine is busier")


# ------------------------------------------------------------------ the parser
def add_parser(sub, name: str, summary: str) -> argparse.ArgumentParser:
    """The ``verify`` subcommand of the ``quadnet`` parser's subparsers ``sub``."""
    v = sub.add_parser(
        name, help=summary,
        description="Run the checks and print every claim: kind (theorem of a cited paper, "
        "target, exploration), source, reference value, measured value, tolerance and status "
        "(PASS, FAIL, REPORTED = measured without a tolerance, SKIPPED = could not run, with "
        "the reason and the install command). The rows of each check are printed as soon as "
        "it finishes. Ctrl-C or SIGTERM stops the run: the finished checks stay in --json "
        "FILE and `quadnet verify --resume FILE` continues (exit status 130 / 143).",
        epilog=EXIT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    v.add_argument("names", nargs="*", help="checks to run (default: all)")
    mode = v.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true",
                      help=f"small configuration ({quick_time_claim()}); draws no figures "
                      "unless --figures DIR is given, so the committed paper-scale figures "
                      "in figures/ are left alone")
    mode.add_argument("--full", action="store_true", help="paper-scale configuration (default)")
    v.add_argument("--format", choices=("text", "markdown", "latex", "json"), default="text",
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
    return v


# ------------------------------------------------------------------ the command
def run(args) -> int:
    """``quadnet verify``: the exit status (0 / 1 / 2 / 3, 128 + signal; ``--help``)."""
    t_start = time.perf_counter()
    load_errors = discovery.load_for_command(args.checks, "verify")
    if load_errors is None:
        return EXIT_USAGE
    if args.list:
        sys.stdout.write(discovery.format_list("json" if args.format == "json" else "text"))
        return EXIT_FAIL if load_errors else EXIT_OK
    planned = plan(args, load_errors, t_start)
    if isinstance(planned, int):
        return planned
    return run_checks(args, planned)


# ------------------------------------------------------------------ plan
@dataclass
class Plan:
    """What a ``quadnet verify`` run does, decided before any check runs."""

    wanted: list[str]  # the checks asked for, in that order
    todo: list[str]  # those that run (the others are kept from --resume FILE)
    kept: dict[str, dict]  # name -> check entry of --resume FILE, kept as it is
    extra: list[str]  # kept checks that were not asked for (last in the report)
    order: dict[str, int]  # the order of quadnet verify --list
    mode: str  # "quick" or "full"
    seed: int
    versions: dict[str, str]
    figures: str  # the figures directory; "" draws none
    out_json: str | None  # where the report is saved after each check
    t_start: float  # time.perf_counter() when the command started
    done: dict[str, dict] = field(default_factory=dict)  # name -> check entry, kept ones first

    def __post_init__(self) -> None:
        self.done = {**self.kept, **self.done}

    def report(self, *, complete: bool, interrupted: str | None = None) -> dict:
        """The report of the checks done so far (the order of ``quadnet verify --list``,
        then the kept checks that were not asked for)."""
        wanted, names_all = self.wanted, self.wanted + self.extra
        names = sorted(self.done, key=lambda n: (n not in wanted,
                                                 self.order.get(n, len(self.order)),
                                                 names_all.index(n)))
        chks = [self.done[n] for n in names]
        rep = {
            "schema": REPORT_SCHEMA,
            "checks": chks,
            "passed": bool(chks) and all(c.get("passed") for c in chks),
            "complete": complete,
            "seed": self.seed,
            "mode": self.mode,
            "versions": self.versions,
            "requested": wanted,
            "seconds": {c["name"]: c.get("run", {}).get("seconds") for c in chks},
            "seconds_total": round(sum(c["run"].get("seconds") or 0.0 for c in chks
                                       if c["name"] in self.kept)
                                   + time.perf_counter() - self.t_start, 2),
            "cpu_seconds": {c["name"]: c.get("run", {}).get("cpu_seconds") for c in chks},
        }
        if interrupted:
            rep["interrupted"] = interrupted
        return rep


def plan(args, load_errors: list[str], t_start: float) -> Plan | int:
    """Check the output paths, read ``--resume FILE`` and choose the checks to run (saying
    on stderr which are kept and why the others run); an exit status when the run is
    refused (nothing was computed)."""
    figures = args.figures
    if figures is None:
        figures = "" if args.quick else "figures"
    if figures:
        err = writable_dir(figures, "--figures")
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
        err = writable_file(out_json, "--json" if args.json else "--resume")
        if err:
            print(f"quadnet verify: {err}", file=sys.stderr)
            return EXIT_USAGE

    registered = checks.available()
    default = registered if args.all else checks.default_checks()
    wanted = list(args.names or (prior or {}).get("requested") or default)
    wanted = wanted + [n for n in load_errors if n not in wanted]  # failed sources: FAIL rows
    if unknown_checks(checks, wanted, "verify"):
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
    extra = [c["name"] for c in (prior or {}).get("checks", [])
             if c.get("name") in kept and c["name"] not in wanted]
    return Plan(wanted=wanted, todo=[n for n in wanted if n not in kept], kept=kept,
                extra=extra, order={n: i for i, n in enumerate(registered)}, mode=mode,
                seed=args.seed, versions=versions, figures=figures, out_json=out_json,
                t_start=t_start)


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for pkg in ("quadnet", "numpy", "scipy", "pymanopt", "autograd", "matplotlib", "cvxpy"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def _load_resume(path: str) -> tuple[dict | None, str | None]:
    """The report to resume from (``None`` if the file does not exist yet), or an error."""
    if not Path(path).exists():
        return None, None
    try:
        return read_report(path), None
    except ReportError as exc:
        return None, f"--resume {exc}"


def _run_key(chk: dict, report: dict) -> dict:
    """The quadnet version, seed and mode a saved check ran with (a report written before
    the per-check record falls back to the report's own)."""
    run = chk.get("run") or {}
    return {"version": run.get("quadnet", report.get("versions", {}).get("quadnet")),
            "seed": run.get("seed", report.get("seed")),
            "mode": run.get("mode", report.get("mode"))}


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


# ------------------------------------------------------------------ run
def run_checks(args, planned: Plan) -> int:
    """Run the checks of ``planned.todo``, print their rows as each finishes and save the
    report after each; the exit status."""
    from quadnet._progress import tqdm

    p = planned
    show = progress_on(args)
    ctx = checks.CheckContext(seed=p.seed, quick=args.quick,
                              figures_dir=Path(p.figures) if p.figures else None,
                              show_progress=show,
                              progress_lines=not show and not args.no_progress)
    print(f"[quadnet] verify: {len(p.todo)} check{'' if len(p.todo) == 1 else 's'}"
          f"{f' (of {len(p.wanted)})' if p.kept else ''} in {p.mode} mode, seed {p.seed}; "
          f"figures {'into ' + p.figures + '/' if p.figures else 'not drawn'}"
          f"{'; report saved after each check in ' + p.out_json if p.out_json else ''}",
          file=sys.stderr, flush=True)
    stream = TableStream(args.format, p.wanted + p.extra)
    current = None
    try:
        with stop_on_sigterm():
            for name in p.wanted:
                if name in p.kept:
                    stream.check(p.kept[name])
            bar = tqdm(p.todo, desc="verify", unit="check", disable=not show, position=0,
                       dynamic_ncols=True)
            for name in bar:
                current = name
                bar.set_postfix_str(name)
                t0, c0 = time.perf_counter(), cpu_seconds()
                if not show:
                    print(f"[quadnet] running check {name!r} ({p.mode}) ...", file=sys.stderr,
                          flush=True)
                with ctx.activity(name):
                    res = _common.run_one(checks, name, ctx)
                wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
                chk = res.as_dict()
                chk["run"] = {"quadnet": p.versions["quadnet"], "seed": p.seed, "mode": p.mode,
                              "seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
                              "finished": datetime.datetime.now(datetime.timezone.utc)
                              .isoformat(timespec="seconds")}
                p.done[name] = chk
                save(p, p.report(complete=False))
                current = None
                bar.write(f"[quadnet] {name}: {res.status} in {wall:.1f} s (cpu {cpu:.1f} s)",
                          file=sys.stderr)
                stream.check(chk)
            bar.close()
            report = p.report(complete=True)
            save(p, report)
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        sig = signal.Signals(signum).name
        report = p.report(complete=False, interrupted=sig)
        with contextlib.suppress(KeyboardInterrupt):
            save(p, report)
            stream.end(report)
        finished = ", ".join(report["seconds"]) or "none"
        where = f" during check {current!r}" if current else ""
        if p.out_json:
            print(f"\nquadnet verify: stopped by {sig}{where}; the finished checks ({finished}) "
                  f"are saved in {p.out_json}; continue with: "
                  f"{_resume_command(args, p.out_json)}", file=sys.stderr, flush=True)
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


def _quick_note(report: dict, out=None) -> None:
    """After a quick run: how long it took, next to the measured reference (a note only)."""
    out = sys.stderr if out is None else out
    wall = sum(c.get("run", {}).get("seconds", 0.0) for c in report["checks"])
    cpu = sum(c.get("run", {}).get("cpu_seconds", 0.0) for c in report["checks"])
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"[quadnet] note: the checks took {wall:.1f} s wall, {cpu:.1f} s CPU in quick mode "
          f"(load now {load:.1f}; measured reference: {quick_time_claim()})", file=out,
          flush=True)


def _exit_code(report: dict) -> int:
    st = [c.get("status") or ("PASS" if c.get("passed") else "FAIL") for c in report["checks"]]
    if "FAIL" in st:
        return EXIT_FAIL
    return EXIT_SKIPPED if "PARTLY SKIPPED" in st else EXIT_OK


# ------------------------------------------------------------------ save
def save(planned: Plan, report: dict) -> None:
    """Write ``report`` to the plan's ``--json`` / ``--resume`` FILE, atomically (nothing
    without one)."""
    if planned.out_json:
        write_json_atomic(planned.out_json, report)
