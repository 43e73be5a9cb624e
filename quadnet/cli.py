"""The ``quadnet`` command: a thin layer over :mod:`quadnet.checks`.

``quadnet verify [NAME ...] [--quick | --full] [--json FILE] [--seed N] [--figures DIR]``
runs the registered paper checks, prints one table (claim, paper, measured, tolerance,
pass) and exits 0 only when every check passes.
"""

from __future__ import annotations

import argparse
import json
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
        if x != x or x in (float("inf"), float("-inf")):
            return str(x)
        if x == 0 or 1e-3 <= abs(x) < 1e5:
            return f"{x:.4g}"
        return f"{x:.2e}"
    return str(x)


def _print_table(results, out=sys.stdout) -> None:
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


def cmd_verify(args) -> int:
    from . import checks

    names = checks.available()
    wanted = args.names or names
    unknown = [n for n in wanted if n not in names]
    if unknown:
        print(f"quadnet verify: unknown check(s) {', '.join(unknown)}; available: "
              f"{', '.join(names)}", file=sys.stderr)
        return 2
    ctx = checks.CheckContext(seed=args.seed, quick=args.quick,
                              figures_dir=Path(args.figures) if args.figures else None,
                              show_progress=sys.stderr.isatty() and not args.no_progress)
    results, elapsed = [], {}
    for name in wanted:
        t0 = time.perf_counter()
        print(f"[quadnet] running check {name!r} ({'quick' if args.quick else 'full'}) ...",
              file=sys.stderr, flush=True)
        res = checks.run_check(name, ctx)
        elapsed[name] = time.perf_counter() - t0
        results.append(res)
        print(f"[quadnet] {name}: {'PASS' if res.passed else 'FAIL'} in {elapsed[name]:.1f} s",
              file=sys.stderr, flush=True)
    _print_table(results)
    ok = all(r.passed for r in results)
    print(f"\n{sum(r.passed for r in results)} of {len(results)} checks passed", flush=True)
    if args.json:
        report = {
            "checks": [r.as_dict() for r in results],
            "passed": ok,
            "seed": args.seed,
            "mode": "quick" if args.quick else "full",
            "versions": _versions(),
            "seconds": {k: round(v, 2) for k, v in elapsed.items()},
        }
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=2) + "\n")
    return 0 if ok else 1


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
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
