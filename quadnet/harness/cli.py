"""The ``quadnet`` command: a thin layer over ``quadnet.harness.checks`` and the sweeps.

``quadnet verify [NAME ...] [--quick] [--format text|markdown|latex|json] [--json FILE]
[--seed N] [--figures DIR]`` runs the registered checks and prints one table (claim, kind,
source, reference value, measured, tolerance, status), a summary line and the wall time.

``quadnet figures [NAME ...] [--from REPORT.json] [--out DIR]`` redraws the figures from a
saved report without recomputing (``--from``), or recomputes them (and says so).

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
import json
import math
import os
import platform
import sys
import textwrap
import time
from pathlib import Path

#: The version tag of the ``--json`` report (docs/report_schema.md,
#: quadnet/harness/schema/report.schema.json).
REPORT_SCHEMA = "quadnet-report/1"

#: Exit codes of ``quadnet verify`` (also in ``--help``).
EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_SKIPPED = 0, 1, 2, 3

_EXIT_HELP = """\
exit status:
  0  every row ran and every check passed
  1  a row failed or a check crashed (the other checks still ran)
  2  usage error: unknown check, bad option, unwritable output path (nothing was computed)
  3  nothing failed, but some rows were SKIPPED (a missing optional dependency: the summary
     names the rows and the install command)
"""

#: Short citation -> full reference, printed under the table for the names the rows use.
REFERENCES = {
    "Cheng (2026)": 'Cheng (2026), "Quotient Dynamics, Effective Curvature, and Implicit Bias '
                    'in Positive Quadratic Networks"',
    "Boix-Adsera et al. (2025)": 'Boix-Adsera, Mallinar, Simon & Belkin (2025), "The Features '
                                 'at Convergence Theorem", arXiv:2507.05644',
    "Radhakrishnan et al. (2024)": 'Radhakrishnan, Beaglehole, Pandit & Belkin (2024), '
                                   '"Mechanism for feature learning in neural networks and '
                                   'backpropagation-free machine learning models", Science 383',
    "quadnet target": "a target quadnet sets itself (no paper makes this claim)",
}


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for pkg in ("quadnet", "numpy", "scipy", "pymanopt", "autograd", "matplotlib", "cvxpy"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def _fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, (int, float)):
        x = float(x)
        if not math.isfinite(x):
            return str(x)
        if x == int(x) and abs(x) < 1e5:
            return str(int(x))
        if 1e-3 <= abs(x) < 1e5:
            return f"{x:.4g}"
        return f"{x:.2e}"
    return str(x)


# ------------------------------------------------------------------ report rows
def _rows(report: dict) -> list[dict]:
    """One flat dict per table row (a check without rows gives one FAIL row)."""
    out = []
    for chk in report.get("checks", []):
        rows = chk.get("rows") or [{
            "claim": "(no rows: " + str(chk.get("metrics", {}).get(
                "error", "the check measured nothing")) + ")",
            "paper": "", "measured": None, "tolerance": None, "relation": "",
            "passed": False, "status": "FAIL"}]
        for row in rows:
            status = row.get("status") or ("PASS" if row.get("passed") else "FAIL")
            tol = row.get("tolerance")
            tol = "-" if tol is None else f"{row.get('relation', '')} {_fmt(tol)}".strip()
            measured = row.get("measured")
            out.append({"check": chk["name"], "claim": row["claim"],
                        "kind": row.get("kind") or "-", "source": row.get("source") or "-",
                        "paper": row.get("paper") or "-",
                        "measured": "-" if status == "SKIPPED" else _fmt(measured),
                        "tolerance": tol, "status": status, "reason": row.get("reason", "")})
    return out


def _count(report: dict) -> dict:
    rows = _rows(report)
    by = {s: sum(r["status"] == s for r in rows) for s in ("PASS", "FAIL", "REPORTED",
                                                             "SKIPPED")}
    return {"rows": len(rows), **by}


def summary_lines(report: dict) -> list[str]:
    """The summary under the table: checks passed/failed/partly skipped, row counts, every
    SKIPPED row with its reason, figures not written, and the wall time."""
    checks = report.get("checks", [])
    st = [c.get("status") or ("PASS" if c.get("passed") else "FAIL") for c in checks]
    n_pass, n_fail, n_skip = st.count("PASS"), st.count("FAIL"), st.count("PARTLY SKIPPED")
    c = _count(report)
    parts = [f"{n_pass} passed"]
    if n_fail:
        parts.append(f"{n_fail} failed")
    head = f"{len(checks)} check{'' if len(checks) == 1 else 's'}: " + ", ".join(parts)
    skipped = [r for r in _rows(report) if r["status"] == "SKIPPED"]
    if n_skip:
        reasons: dict[str, list] = {}
        for r in skipped:
            why, _, how = r["reason"].partition(";")
            why = why.strip()
            why = "need " + why[6:] if why.startswith("needs ") else why
            reasons.setdefault(why, [0, how.strip()])[0] += 1
        head += f", {n_skip} partly skipped: " + "; ".join(
            f"{n} row{'' if n == 1 else 's'} {why}" + (f" ({how})" if how else "")
            for why, (n, how) in reasons.items())
    lines = [head,
             f"{c['rows']} rows: {c['PASS']} PASS, {c['FAIL']} FAIL, {c['REPORTED']} REPORTED "
             f"(measured, no tolerance), {c['SKIPPED']} SKIPPED"]
    for r in skipped:
        lines.append(f"  SKIPPED {r['check']}: {r['claim']} ({r['reason']})")
    for chk in checks:
        for stem, note in (chk.get("figure_notes") or {}).items():
            lines.append(f"  figure {stem} ({chk['name']}): {note}")
    if "seconds_total" in report:
        lines.append(f"wall time {report['seconds_total']:.1f} s "
                     f"({report.get('mode', '?')} mode, seed {report.get('seed', '?')})")
    return lines


def _references_used(report: dict) -> list[str]:
    text = " ".join(r["source"] + " " + r["paper"] + " " + r["claim"] for r in _rows(report))
    return [f"{k}: {v}" for k, v in REFERENCES.items() if k in text]


def results_text(report: dict, width: int | None = None) -> str:
    """Plain-text table with wrapped (never cut) claim and source columns."""
    rows = _rows(report)
    cols = [("check", 9, False), ("claim", 50, True), ("kind", 11, False),
            ("source", 24, True), ("paper", 20, True), ("measured", 9, False),
            ("tolerance", 11, False), ("status", 8, False)]
    head = {"check": "check", "claim": "claim", "kind": "kind", "source": "source",
            "paper": "reference value", "measured": "measured", "tolerance": "tolerance",
            "status": "status"}
    widths = {}
    for key, w, wrap in cols:
        longest = max([len(head[key])] + [len(r[key]) for r in rows])
        widths[key] = min(w, longest) if wrap else longest
    out = []

    def emit(cells: dict) -> None:
        wrapped = {k: (textwrap.wrap(cells[k], widths[k], break_long_words=True,
                                     break_on_hyphens=False) or [""])
                   for k, _, _ in cols}
        for i in range(max(len(v) for v in wrapped.values())):
            out.append("  ".join((wrapped[k][i] if i < len(wrapped[k]) else "").ljust(widths[k])
                                 for k, _, _ in cols).rstrip())

    emit(head)
    out.append("  ".join("-" * widths[k] for k, _, _ in cols))
    for r in rows:
        emit(r)
    out.append("")
    out += _references_used(report)
    out.append("")
    out += summary_lines(report)
    return "\n".join(out) + "\n"


def results_markdown(report: dict) -> str:
    """The Markdown results table (check | claim | kind | source | reference value | measured
    | tolerance | status) of a ``quadnet verify --json`` report, then the references, the
    summary and one line on mode, seed and versions."""

    def cell(x) -> str:
        return str(x).replace("|", "\\|").replace("\n", " ")

    lines = ["| check | claim | kind | source | reference value | measured | tolerance | "
             "status |", "|---|---|---|---|---|---|---|---|"]
    for r in _rows(report):
        status = r["status"] if r["status"] != "FAIL" else "**FAIL**"
        if r["status"] == "SKIPPED":
            status = f"SKIPPED ({r['reason']})"
        lines.append("| " + " | ".join(cell(c) for c in (
            r["check"], r["claim"], r["kind"], r["source"], r["paper"], r["measured"],
            r["tolerance"], status)) + " |")
    lines.append("")
    lines += [f"* {ref}" for ref in _references_used(report)]
    lines.append("")
    lines += [f"- {ln.strip()}" for ln in summary_lines(report)]
    v = report.get("versions", {})
    tail = (f"\n_{report.get('mode', '?')} mode, seed {report.get('seed', '?')}, "
            f"quadnet {v.get('quadnet', '?')}, Python {v.get('python', '?')}, numpy "
            f"{v.get('numpy', '?')}, cvxpy {v.get('cvxpy', '?')}")
    if "seconds_total" in report:
        tail += f"; {report['seconds_total']:.0f} s in all"
    return "\n".join(lines) + "\n" + tail + "._\n"


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
          "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\^{}",
          "≤": r"$\le$", "≥": r"$\ge$", "±": r"$\pm$", "×": r"$\times$", "≈": r"$\approx$",
          "→": r"$\to$", "λ": r"$\lambda$", "η": r"$\eta$", "ε": r"$\varepsilon$",
          "‖": r"$\|$", "ᵀ": r"$^\top$", "√": r"$\surd$", "<": r"$<$", ">": r"$>$",
          "|": r"$|$", "≠": r"$\ne$", "∈": r"$\in$", "★": r"$\star$", "§": r"\S{}",
          "−": "-", "²": r"$^2$", "ζ": r"$\zeta$"}


def _tex(s: str) -> str:
    out, s, i = [], str(s), 0
    while i < len(s):
        two = s[i:i + 2]
        if two in ("<=", ">="):
            out.append(r"$\le$" if two == "<=" else r"$\ge$")
            i += 2
            continue
        out.append(_LATEX.get(s[i], s[i]))
        i += 1
    return "".join(out)


def results_latex(report: dict) -> str:
    """A LaTeX ``longtable`` with ``booktabs`` rules (needs ``\\usepackage{booktabs,
    longtable}``), wrapped claim and source columns, and the summary as a table note."""
    lines = [r"% generated by quadnet report --format latex; needs \usepackage{booktabs,longtable}",
             r"\begingroup\footnotesize",
             r"\begin{longtable}{@{}l p{0.34\linewidth} l p{0.14\linewidth} "
             r"p{0.12\linewidth} r l l@{}}",
             r"\toprule",
             r"check & claim & kind & source & reference & measured & tolerance & status \\",
             r"\midrule", r"\endhead"]
    prev = None
    for r in _rows(report):
        if prev is not None and r["check"] != prev:
            lines.append(r"\midrule")
        prev = r["check"]
        status = r["status"] if r["status"] != "SKIPPED" else f"SKIPPED ({r['reason']})"
        lines.append(" & ".join(_tex(c) for c in (
            r["check"], r["claim"], r["kind"], r["source"], r["paper"], r["measured"],
            r["tolerance"], status)) + r" \\")
    lines += [r"\bottomrule", r"\end{longtable}"]
    lines += [_tex(ln) + r"\\" for ln in _references_used(report) + summary_lines(report)]
    lines.append(r"\endgroup")
    return "\n".join(lines) + "\n"


def format_report(report: dict, fmt: str) -> str:
    """The report as ``text``, ``markdown``, ``latex`` (booktabs) or ``json``.

    Parameters
    ----------
    report : dict
        A ``quadnet verify --json`` report.
    fmt : {"text", "markdown", "latex", "json"}

    Returns
    -------
    str

    Raises
    ------
    ValueError
        For another ``fmt``.

    Examples
    --------
    >>> rep = {"checks": [{"name": "demo", "status": "PASS", "rows": [
    ...     {"claim": "error", "measured": 1e-14, "tolerance": 1e-12, "relation": "<=",
    ...      "status": "PASS", "source": "Cheng (2026) §1", "kind": "theorem"}]}]}
    >>> print(format_report(rep, "markdown").splitlines()[2])
    | demo | error | theorem | Cheng (2026) §1 | - | 1.00e-14 | <= 1.00e-12 | PASS |
    >>> "toprule" in format_report(rep, "latex")
    True
    """
    if fmt == "json":
        return json.dumps(report, indent=2) + "\n"
    if fmt == "markdown":
        return results_markdown(report)
    if fmt == "latex":
        return results_latex(report)
    if fmt == "text":
        return results_text(report)
    raise ValueError(f"format must be text, markdown, latex or json, got {fmt!r}")


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


#: ``quadnet verify --quick`` should fit in this many seconds on the 2-core reference
#: machine, and each check in ``PER_CHECK_QUICK_BUDGET``; reported, not enforced.
QUICK_BUDGET = 120.0
PER_CHECK_QUICK_BUDGET = 20.0


def _report_budget(elapsed: dict[str, float], quick: bool, out=None) -> None:
    out = sys.stderr if out is None else out
    total = sum(elapsed.values())
    if not quick:
        return
    slow = {k: v for k, v in elapsed.items() if v > PER_CHECK_QUICK_BUDGET}
    verdict = "within" if total <= QUICK_BUDGET else "OVER"
    print(f"[quadnet] total {total:.1f} s: {verdict} the {QUICK_BUDGET:.0f} s quick budget",
          file=out, flush=True)
    for k, v in slow.items():
        print(f"[quadnet] check {k!r} took {v:.1f} s in quick mode, over the "
              f"{PER_CHECK_QUICK_BUDGET:.0f} s per-check budget by "
              f"{v - PER_CHECK_QUICK_BUDGET:.1f} s", file=out, flush=True)


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
    for path, what in ((figures, "--figures"),):
        if path:
            err = _writable_dir(path, what)
            if err:
                print(f"quadnet verify: {err}", file=sys.stderr)
                return EXIT_USAGE
    if args.json:
        err = _writable_file(args.json, "--json")
        if err:
            print(f"quadnet verify: {err}", file=sys.stderr)
            return EXIT_USAGE

    from tqdm.auto import tqdm

    from quadnet.harness import checks

    wanted = args.names or checks.available()
    wanted = wanted + [n for n in load_errors if n not in wanted]  # failed sources: FAIL rows
    if _unknown_checks(checks, wanted, "verify"):
        return EXIT_USAGE
    show = _progress_on(args)
    ctx = checks.CheckContext(seed=args.seed, quick=args.quick,
                              figures_dir=Path(figures) if figures else None,
                              show_progress=show)
    mode = "quick" if args.quick else "full"
    print(f"[quadnet] verify: {len(wanted)} checks in {mode} mode, seed {args.seed}; figures "
          f"{'into ' + figures + '/' if figures else 'not drawn'}", file=sys.stderr, flush=True)
    results, elapsed, cpu = [], {}, {}
    bar = tqdm(wanted, desc="verify", unit="check", disable=not show, position=0,
               dynamic_ncols=True)
    for name in bar:
        bar.set_postfix_str(name)
        t0, c0 = time.perf_counter(), _cpu_seconds()
        if not show:
            print(f"[quadnet] running check {name!r} ({mode}) ...", file=sys.stderr, flush=True)
        res = _run_one(checks, name, ctx)
        elapsed[name] = time.perf_counter() - t0
        cpu[name] = _cpu_seconds() - c0
        results.append(res)
        bar.write(f"[quadnet] {name}: {res.status} in {elapsed[name]:.1f} s "
                  f"(cpu {cpu[name]:.1f} s)", file=sys.stderr)
    bar.close()
    report = {
        "schema": REPORT_SCHEMA,
        "checks": [r.as_dict() for r in results],
        "passed": all(r.passed for r in results),
        "seed": args.seed,
        "mode": mode,
        "versions": _versions(),
        "seconds": {k: round(v, 2) for k, v in elapsed.items()},
        "seconds_total": round(time.perf_counter() - t_start, 2),
        "cpu_seconds": {k: round(v, 2) for k, v in cpu.items()},
    }
    if args.json:
        path = Path(args.json)
        path.write_text(json.dumps(report, indent=2) + "\n")
    sys.stdout.write(format_report(report, args.format))
    sys.stdout.flush()
    _report_budget(elapsed, args.quick)
    return _exit_code(report)


def cmd_figures(args) -> int:
    err = _writable_dir(args.out, "--out")
    if err:
        print(f"quadnet figures: {err}", file=sys.stderr)
        return EXIT_USAGE
    from quadnet.harness import checks, discovery

    out = Path(args.out)
    if args.from_report:
        return _figures_from_report(checks, args, out)
    if discovery.load_for_command(args.checks, "figures") is None:
        return EXIT_USAGE
    wanted = args.names or checks.available()
    if _unknown_checks(checks, wanted, "figures"):
        return EXIT_USAGE
    mode = "quick" if args.quick else "full"
    print(f"[quadnet] figures: no --from report given, so the checks are recomputed in {mode} "
          f"mode (seed {args.seed}); `quadnet figures --from report.json` redraws without "
          "recomputing", file=sys.stderr, flush=True)
    ctx = checks.CheckContext(seed=args.seed, quick=args.quick, figures_dir=out,
                              show_progress=_progress_on(args))
    failed, written = [], []
    for name in wanted:
        print(f"[quadnet] recomputing check {name!r} ({mode}) for its figures ...",
              file=sys.stderr, flush=True)
        res = _run_one(checks, name, ctx)
        written += res.figures
        if res.status == "FAIL":
            failed.append(name)
        for f in res.figures:
            print(f)
        for stem, note in res.figure_notes.items():
            print(f"[quadnet] figure {stem}: {note}", file=sys.stderr)
    print(f"{len(written)} figure files written in {out}/", file=sys.stderr)
    if ctx.figure_errors:
        return EXIT_FAIL
    if failed:
        print(f"quadnet figures: check(s) {', '.join(failed)} did not pass; their figures "
              "show what was measured; run quadnet verify for details", file=sys.stderr)
        return EXIT_FAIL
    return EXIT_OK


def _figures_from_report(checks, args, out: Path) -> int:
    try:
        report = json.loads(Path(args.from_report).read_text())
        assert isinstance(report, dict) and isinstance(report.get("checks"), list)
    except (OSError, ValueError, AssertionError) as exc:
        print(f"quadnet figures: cannot read {args.from_report!r} as a quadnet verify --json "
              f"report ({exc or 'no checks list'})", file=sys.stderr)
        return EXIT_USAGE
    checks.available()  # registers every check module, hence every figure drawer
    from quadnet.harness import discovery  # user drawers: --checks, entry points, the report

    if discovery.load_for_report(args.checks, report) is None:
        return EXIT_USAGE
    from quadnet.harness.checks._base import FIGURES

    ctx = checks.CheckContext(seed=report.get("seed", 0), quick=report.get("mode") == "quick",
                              figures_dir=out)
    wanted = set(args.names or [c["name"] for c in report["checks"]])
    written, missing = [], []
    for chk in report["checks"]:
        if chk["name"] not in wanted:
            continue
        data = chk.get("figure_data") or {}
        stems = {Path(f).stem for f in chk.get("figures") or []}
        if stems - set(data):
            print(f"[quadnet] check {chk['name']!r} stored no data for "
                  f"{', '.join(sorted(stems - set(data)))}; redraw those with "
                  f"`quadnet figures {chk['name']}` (recomputes)", file=sys.stderr)
        for stem, note in (chk.get("figure_notes") or {}).items():
            if stem not in data:
                print(f"[quadnet] figure {stem} ({chk['name']}): {note}", file=sys.stderr)
        for stem, d in data.items():
            if stem not in FIGURES:
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
        report = json.loads(Path(args.json_file).read_text())
    except (OSError, ValueError) as exc:
        print(f"quadnet report: cannot read {args.json_file!r} as a quadnet verify --json "
              f"report ({exc})", file=sys.stderr)
        return EXIT_USAGE
    if not isinstance(report, dict) or not isinstance(report.get("checks"), list):
        print(f"quadnet report: {args.json_file!r} is not a quadnet verify --json report "
              "(no 'checks' list)", file=sys.stderr)
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
        "the reason and the install command).",
        epilog=_EXIT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    v.add_argument("names", nargs="*", help="checks to run (default: all)")
    mode = v.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true",
                      help="small configuration (about 20 s per check); draws no figures "
                      "unless --figures DIR is given, so the committed paper-scale figures "
                      "in figures/ are left alone")
    mode.add_argument("--full", action="store_true", help="paper-scale configuration (default)")
    v.add_argument("--format", choices=fmt, default="text",
                   help="table format on stdout (default text; latex uses booktabs)")
    v.add_argument("--json", metavar="FILE", help="also write the full report (rows, metrics, "
                   "figure data) as JSON; `quadnet figures --from FILE` redraws from it")
    v.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    v.add_argument("--figures", metavar="DIR", default=None,
                   help="where figures go (default: figures/ in full mode, none in quick "
                   "mode); '' draws none. Checked for writability before anything runs")
    v.add_argument("--progress", action="store_true",
                   help="progress bars even when stderr is not a terminal")
    v.add_argument("--no-progress", action="store_true", help="no progress bars")
    v.add_argument("--checks", action="append", metavar="FILE_OR_MODULE",
                   help="also load the checks of this .py file or importable module "
                   "(repeatable); they are then named like the built-in ones")
    v.add_argument("--list", action="store_true",
                   help="list every check with its claim and where it comes from, and exit")
    v.set_defaults(func=cmd_verify)

    f = sub.add_parser(
        "figures", help="redraw the figures from a saved report, or recompute them",
        description="With --from REPORT.json (written by quadnet verify --json) the figures "
        "are redrawn from the data stored in the report, without recomputing anything. "
        "Without --from the checks are recomputed (full mode unless --quick) and say so.",
        epilog=_EXIT_HELP.replace("some rows were SKIPPED", "a row was SKIPPED"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    f.add_argument("names", nargs="*", help="checks whose figures to draw (default: all)")
    f.add_argument("--from", dest="from_report", metavar="REPORT.json",
                   help="redraw from this verify --json report (no recomputation)")
    f.add_argument("--out", metavar="DIR", default="figures",
                   help="output directory (default: figures/)")
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

    from quadnet.harness import compare, newcheck

    compare.add_parser(sub)
    newcheck.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
