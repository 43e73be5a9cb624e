"""``quadnet figures``: redraw the figures from a saved report, or recompute them.

With ``--from REPORT.json`` (read with :func:`~quadnet.harness.report.read_report`) every
figure is redrawn from the data the report stores, without recomputing; without it the checks
are recomputed and draw their figures.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from quadnet.harness import checks, discovery
from quadnet.harness.cli import _common
from quadnet.harness.cli._common import (
    EXIT_FAIL,
    EXIT_OK,
    EXIT_USAGE,
    progress_on,
    stop_on_sigterm,
    unknown_checks,
    writable_dir,
)
from quadnet.harness.figures import _drawers, check_figure_options
from quadnet.harness.report import ReportError, read_report

__all__ = ["add_parser", "run"]

EXIT_HELP = """\
exit status:
  0  every figure was drawn (and, when recomputed, no check failed)
  1  a drawer failed, a recomputed check failed, or a figure of the report has no drawer
     in this quadnet
  2  usage error: bad option, unknown check or figure name, unwritable --out, a file that
     is not a verify --json report (nothing was drawn)
  130, 143  stopped by Ctrl-C (SIGINT) or SIGTERM; the figure files written so far are kept
"""


def add_parser(sub, name: str, summary: str) -> argparse.ArgumentParser:
    """The ``figures`` subcommand of the ``quadnet`` parser's subparsers ``sub``."""
    f = sub.add_parser(
        name, help=summary,
        description="With --from REPORT.json (written by quadnet verify --json) the figures "
        "are redrawn from the data stored in the report, without recomputing anything. "
        "Without --from the checks are recomputed (full mode unless --quick) and say so.",
        epilog=EXIT_HELP,
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
    return f


def _figure_options(args) -> dict:
    """The --width/--height/--format/--style of ``quadnet figures``, checked."""
    return check_figure_options(width=args.width, height=args.height, style=args.style,
                                formats=args.fig_format)


def run(args) -> int:
    """``quadnet figures``: the exit status (0 / 1 / 2, 128 + signal; ``--help``)."""
    try:
        opts = _figure_options(args)
    except (TypeError, ValueError) as exc:
        print(f"quadnet figures: {exc}", file=sys.stderr)
        return EXIT_USAGE
    err = writable_dir(args.out, "--out")
    if err:
        print(f"quadnet figures: {err}", file=sys.stderr)
        return EXIT_USAGE
    out = Path(args.out)
    if args.from_report:
        return _figures_from_report(args, out, opts)
    if discovery.load_for_command(args.checks, "figures") is None:
        return EXIT_USAGE
    wanted = args.names or checks.available()
    if unknown_checks(checks, wanted, "figures"):
        return EXIT_USAGE
    mode = "quick" if args.quick else "full"
    print(f"[quadnet] figures: no --from report given, so the checks are recomputed in {mode} "
          f"mode (seed {args.seed}); `quadnet figures --from report.json` redraws without "
          "recomputing", file=sys.stderr, flush=True)
    show = progress_on(args)
    ctx = checks.CheckContext(seed=args.seed, quick=args.quick, figures_dir=out,
                              show_progress=show, figure_options=opts,
                              progress_lines=not show and not args.no_progress)
    failed, written = [], []
    try:
        with stop_on_sigterm():
            for name in wanted:
                print(f"[quadnet] recomputing check {name!r} ({mode}) for its figures ...",
                      file=sys.stderr, flush=True)
                with ctx.activity(name):
                    res = _common.run_one(checks, name, ctx)
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


def _figures_from_report(args, out: Path, opts: dict) -> int:
    """``quadnet figures --from REPORT.json``: redraw from the report's data (user drawers:
    ``--checks``, entry points, and a check file the report records)."""
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
