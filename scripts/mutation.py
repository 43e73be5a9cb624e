#!/usr/bin/env python
"""Mutation testing of one quadnet module with mutmut 3, against a chosen subset of tests.

Usage::

    nice -n 19 python scripts/mutation.py quadnet/geometry/_kernels.py \\
        tests/geometry/test_quotient.py tests/geometry/test_kernel_properties.py \\
        [--public-only] [--commit REV] [--max-children 2] [--keep DIR [--retest]]

The project is taken from a committed snapshot (``git archive REV``, default ``HEAD``: never
the working tree, which may hold half-finished edits) into a scratch directory, with a
generated ``setup.cfg`` whose ``[mutmut]`` section mutates only the target file
(``only_mutate``) and runs only the chosen tests (``pytest_add_cli_args_test_selection``).
mutmut 3 records which tests reach each mutated function and runs just those per mutant. The
commit is printed and stored in ``DIR/mutation-run.json`` with the counts.

Decorated functions. mutmut 3 does not mutate a decorated function (it cannot copy one
safely), and quadnet's public callables are decorated (``@validate_params(TABLE)``,
``@declare_params``, ``@finite_result``, ``@property``). In the scratch copy of the target,
each decorated top-level function and method of a top-level class is rewritten as the
undecorated ``def`` followed by ``name = deco1(deco2(name))`` -- what the decorator syntax
means -- so mutmut mutates the body and the decorators still wrap it (mutmut's trampoline
is what they wrap). The line structure is kept: each decorator line becomes a blank line and
the assignment takes the first blank line after the function (a line is inserted only when
there is none). The defaults in the signature of a function wrapped by ``validate_params`` are not mutated:
its wrapper binds every default from the signature it read at definition (the trampoline's,
which is the original's), so a mutant copy's default would take effect only in nested calls,
not as the same edit of the source would; the signature lines are marked and excluded
through mutmut's ``do_not_mutate_patterns``. Left decorated (so not mutated): a lone ``@staticmethod`` / ``@classmethod``
(mutmut handles those itself) and a decorator that names the function (``@x.setter``).

``--public-only`` adds ``# pragma: no mutate block`` to the private functions and classes of
the target (a top-level name that starts with ``_`` and is not in ``__all__``; a method whose
name starts with ``_`` and is not a dunder), so only the public
functions and the methods of the public classes are mutated: an affordable run that measures
the public layer.

A listed test file that is not in the snapshot is created empty, so that a later ``--retest``
can fill it in without changing mutmut's test selection (a changed selection resets every
verdict). ``--retest`` (with ``--keep DIR`` of an earlier run, the same target and test files)
copies the test files of ``--commit`` into ``DIR`` again and re-runs only the mutants that
survived or that no test reached: after tests were added (none removed or weakened, the
target's code unchanged: its docstrings may differ) a killed mutant stays killed, so this gives the score of a fresh run in a
fraction of the time. The package stays that of the first run's commit; both are recorded.

Printed at the end: the counts by outcome, the score ``killed / all mutants`` (mutants in
code no test reaches count as not killed; the score over reached mutants is printed beside
it), the survivors by function, the wall time and the load average. Exit status 0 when mutmut
ran, whatever the score. CI does not run this (minutes to hours).
"""

from __future__ import annotations

import argparse
import ast
import collections
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: mutmut 3 status words (``mutmut results --all true``) and how they count.
KILLED = {"killed", "timeout", "segfault", "caught by type check"}
NOT_REACHED = {"no tests"}
PRAGMA = "  # pragma: no mutate block"
#: marks the signature lines of a function wrapped by ``validate_params`` (``do_not_mutate_patterns``)
SIGNATURE = "  # mutation.py: validated signature"
RECORD = "mutation-run.json"


# --------------------------------------------------------------------- the source rewrite

def _public_names(tree: ast.Module) -> set[str] | None:
    """The literal ``__all__`` of a module, or None when it has none."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            try:
                return set(ast.literal_eval(node.value))
            except ValueError:
                return None
    return None


def _header_colon_line(lines: list[str], node: ast.AST) -> int:
    """The 0-based index of the line holding the ``:`` that ends a def/class header."""
    start = node.lineno - 1
    text = "".join(lines[start:])
    depth, seen = 0, False
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.NAME and tok.string in ("def", "class") and depth == 0:
            seen = True
        elif tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        elif seen and depth == 0 and tok.type == tokenize.OP and tok.string == ":":
            return start + tok.start[0] - 1
    raise ValueError(f"no header colon for line {node.lineno}")  # pragma: no cover


def _movable(fn: ast.FunctionDef) -> bool:
    decos = fn.decorator_list
    if not decos:
        return False
    if len(decos) == 1 and isinstance(decos[0], ast.Name) and decos[0].id in (
            "staticmethod", "classmethod"):
        return False   # mutmut mutates these itself
    names = {n.id for d in decos for n in ast.walk(d) if isinstance(n, ast.Name)}
    return fn.name not in names   # ``@x.setter`` needs the property bound to the name


def rewrite(src: str, public_only: bool = False) -> tuple[str, dict]:
    """The target's source with decorators moved after their functions (and, with
    ``public_only``, the private functions marked ``no mutate``); a summary of what was done."""
    tree = ast.parse(src)
    lines = src.splitlines(keepends=True)
    public = _public_names(tree)
    summary: dict = {"undecorated": [], "left_decorated": [], "excluded": [], "inserted": 0}

    def top_public(name: str) -> bool:
        return not name.startswith("_") or (public is not None and name in public)

    items: list[tuple[ast.AST, str, bool]] = []   # (node, qualname, public)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            items.append((node, node.name, top_public(node.name)))
        elif isinstance(node, ast.ClassDef):
            if public_only and not top_public(node.name):
                items.append((node, node.name, False))
                continue
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    dunder = sub.name.startswith("__") and sub.name.endswith("__")
                    items.append((sub, f"{node.name}.{sub.name}",
                                  dunder or not sub.name.startswith("_")))

    pragmas: set[int] = set()
    signature: set[int] = set()
    moves: list[tuple[int, str]] = []    # (0-based line after which the assignment goes, text)
    for node, qual, is_public in items:
        if public_only and not is_public:
            pragmas.add(_header_colon_line(lines, node))
            summary["excluded"].append(qual)
            continue
        if isinstance(node, ast.ClassDef) or not node.decorator_list:
            continue
        if not _movable(node):
            if not (len(node.decorator_list) == 1 and isinstance(node.decorator_list[0], ast.Name)):
                summary["left_decorated"].append(qual)
            continue
        expr = node.name
        for d in reversed(node.decorator_list):
            expr = f"{ast.unparse(d)}({expr})"
        indent = re.match(r"\s*", lines[node.lineno - 1]).group(0)
        for d in node.decorator_list:
            first = d.lineno - 1
            assert lines[first].lstrip().startswith("@"), (qual, lines[first])
            for i in range(first, d.end_lineno):
                lines[i] = "\n"
        moves.append((node.end_lineno - 1, f"{indent}{node.name} = {expr}  # pragma: no mutate\n"))
        if any("validate_params" in ast.unparse(d) for d in node.decorator_list):
            signature.update(range(node.lineno - 1, _header_colon_line(lines, node) + 1))
        summary["undecorated"].append(qual)
    for marks, comment in ((pragmas, PRAGMA), (signature, SIGNATURE)):
        for i in marks:
            body, nl = lines[i].rstrip("\r\n"), lines[i][len(lines[i].rstrip("\r\n")):] or "\n"
            if not body.endswith("\\"):
                lines[i] = body + comment + nl
    for end, text in sorted(moves, reverse=True):
        j = end + 1
        while j < len(lines) and lines[j].strip().startswith("#"):
            j += 1
        if j < len(lines) and not lines[j].strip():
            lines[j] = text
        else:
            lines.insert(end + 1, text)
            summary["inserted"] += 1
    out = "".join(lines)
    ast.parse(out)   # the rewrite must stay valid Python
    return out, summary


def _code(src: str) -> str:
    """The code of a module without its docstrings (a retest is valid when only they changed)."""
    tree = ast.parse(src)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


# ------------------------------------------------------------------------ the scratch copy

def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout.strip()


def _extract(commit: str, dst: Path, paths: list[str]) -> list[str]:
    """Write ``paths`` (files or folders) of ``commit`` under ``dst``; the ones absent."""
    present = [p for p in paths if _git("ls-tree", "--name-only", commit, "--", p.rstrip("/"))]
    if present:
        data = subprocess.run(["git", "archive", "--format=tar", commit, "--", *present],
                              cwd=ROOT, check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(dst, filter="data")
    return [p for p in paths if p not in present]


def _setup_cfg(target: str, tests: list[str]) -> str:
    lines = ["[mutmut]", "source_paths=", "    quadnet/", "only_mutate=", f"    {target}",
             "pytest_add_cli_args_test_selection="]
    lines += [f"    {t}" for t in tests]
    lines += ["pytest_add_cli_args=", "    -p", "    no:cacheprovider", "    -q", "    -x",
              "timeout_multiplier=10.0", "do_not_mutate_patterns=",
              "    mutation.py: validated signature", ""]
    return "\n".join(lines)


def _copy_project(dst: Path, commit: str, target: str, tests: list[str],
                  public_only: bool) -> dict:
    _extract(commit, dst, ["quadnet", "pyproject.toml", "conftest.py"])
    (dst / "tests").mkdir(exist_ok=True)
    missing = _extract(commit, dst, ["tests/__init__.py", "tests/conftest.py", *_conftests(tests),
                                     *tests])
    for t in tests:
        if t in missing:   # filled in later by --retest
            (dst / t).parent.mkdir(parents=True, exist_ok=True)
            (dst / t).write_text('"""Placeholder: not in the snapshot of this run."""\n')
    original = (dst / target).read_text()
    new, summary = rewrite(original, public_only)
    (dst / target).write_text(new)
    (dst / (target + ".orig")).write_text(original)
    # pytest settings (filterwarnings, markers) without the rest of pyproject.toml
    pp = (dst / "pyproject.toml").read_text()
    m = re.search(r"^\[tool\.pytest\.ini_options\].*?(?=^\[(?!tool\.pytest))", pp, re.S | re.M)
    ini = m.group(0) if m else ""
    ini = re.sub(r"^addopts\s*=.*$", "", ini, flags=re.M)   # no --doctest-modules here
    (dst / "pyproject.toml").write_text(ini)
    summary["placeholders"] = [t for t in tests if t in missing]
    return summary


def _conftests(tests: list[str]) -> list[str]:
    return sorted({str(Path(t).parent / "conftest.py") for t in tests} - {"tests/conftest.py"})


# ------------------------------------------------------------------------------ the results

def _statuses(cwd: Path, env: dict) -> dict[str, str]:
    out = subprocess.run([sys.executable, "-m", "mutmut", "results", "--all", "true"], cwd=cwd,
                         env=env, capture_output=True, text=True, check=False).stdout
    return {line.rsplit(":", 1)[0].strip(): line.rsplit(":", 1)[1].strip()
            for line in out.splitlines() if ":" in line and "__mutmut_" in line}


def _by_function(names: list[str]) -> dict[str, list[int]]:
    """``{function or Class.method: [mutant numbers]}`` from mutmut's mangled names
    (``module.x_name__mutmut_3``, ``module.xǁClassǁname__mutmut_3``)."""
    out: dict[str, list[int]] = collections.defaultdict(list)
    for n in names:
        fn, _, k = n.rpartition("__mutmut_")
        fn = fn.rsplit(".", 1)[-1]
        if fn.startswith("xǁ"):
            fn = fn[2:].replace("ǁ", ".")
        elif fn.startswith("x_"):
            fn = fn[2:]
        out[fn].append(int(k))
    return {k: sorted(v) for k, v in sorted(out.items())}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("target", help="the file to mutate, e.g. quadnet/geometry/_kernels.py")
    ap.add_argument("tests", nargs="+", help="test files to run against each mutant")
    ap.add_argument("--max-children", type=int, default=2)
    ap.add_argument("--commit", default="HEAD", help="the committed snapshot to test (HEAD)")
    ap.add_argument("--public-only", action="store_true",
                    help="mutate only the public functions and the methods of public classes")
    ap.add_argument("--keep", help="work in this directory (kept: mutmut resumes there)")
    ap.add_argument("--retest", action="store_true",
                    help="with --keep: refresh the tests there and re-run the survivors only")
    args = ap.parse_args(argv)
    if args.retest and not (args.keep and (Path(args.keep) / RECORD).exists()):
        ap.error("--retest needs --keep DIR of an earlier run")
    commit = _git("rev-parse", args.commit)

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="quadnet-mutmut-"))
    record_path = work / RECORD
    if not record_path.exists():
        work.mkdir(parents=True, exist_ok=True)
        summary = _copy_project(work, commit, args.target, args.tests, args.public_only)
        (work / "setup.cfg").write_text(_setup_cfg(args.target, args.tests))
        record = {"target": args.target, "tests": args.tests, "commit": commit,
                  "public_only": args.public_only, "rewrite": summary, "runs": []}
        print(f"snapshot {commit[:10]}: {len(summary['undecorated'])} decorated functions "
              f"undecorated, {len(summary['excluded'])} private excluded, "
              f"{summary['inserted']} lines inserted; left decorated: "
              f"{', '.join(summary['left_decorated']) or 'none'}")
        if summary["placeholders"]:
            print(f"placeholders (not in {commit[:10]}): {', '.join(summary['placeholders'])}")
    else:
        record = json.loads(record_path.read_text())
        if (record["target"], record["tests"]) != (args.target, args.tests):
            print(f"{work} holds a run of {record['target']} with other tests: use another DIR")
            return 1
    env = dict(os.environ, PYTHONPATH=str(work), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    names: list[str] = []
    tests_commit = record["commit"]
    if args.retest:
        now = _git("show", f"{commit}:{args.target}")
        if _code(now) != _code((work / (args.target + ".orig")).read_text()):
            print(f"the code of {args.target} at {commit[:10]} differs from the run in {work} "
                  f"({record['commit'][:10]}): start a fresh run")
            return 1
        before = {t: (work / t).read_bytes() for t in args.tests}
        _extract(commit, work, args.tests)
        changed = [t for t in args.tests if (work / t).read_bytes() != before[t]]
        if not changed:
            print("no test file changed: nothing to re-run")
            return 0
        tests_commit = commit
        # the test selection stays as it was (mutmut resets every verdict when it changes);
        # new test functions are mapped to the functions they reach by mutmut's own stats
        names = [n for n, s in _statuses(work, env).items() if s in {"survived"} | NOT_REACHED]
        print(f"re-running {len(names)} mutants that survived or were not reached "
              f"({', '.join(changed)} changed, tests at {commit[:10]})")
    load0 = os.getloadavg()[0]
    t0 = time.time()
    proc = subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children",
                           str(args.max_children), *names], cwd=work, env=env, check=False)
    wall = time.time() - t0
    load1 = os.getloadavg()[0]
    statuses = _statuses(work, env)
    counts = collections.Counter(statuses.values())
    total = len(statuses)
    killed = sum(n for s, n in counts.items() if s in KILLED)
    unreached = sum(n for s, n in counts.items() if s in NOT_REACHED)
    reached = total - unreached
    survivors = _by_function([n for n, s in statuses.items() if s == "survived"])
    print(f"\nmutmut exit status {proc.returncode}; {wall / 60:.1f} min wall; load average "
          f"{load0:.1f} -> {load1:.1f}; work dir {work}")
    print(f"package at {record['commit'][:10]}, tests at {tests_commit[:10]}"
          f"{'; public functions only' if record['public_only'] else ''}")
    for status, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {status:22s} {n}")
    if total:
        print(f"score {args.target}: killed {killed} / all {total} = {killed / total:.1%}"
              f"  (over the {reached} reached by a test: {killed / max(reached, 1):.1%})")
    for fn, ks in survivors.items():
        print(f"  survived in {fn}: {ks}")
    record["runs"].append({"retest": args.retest, "tests_commit": tests_commit,
                           "mutants": total, "killed": killed,
                           "survived": counts.get("survived", 0), "unreached": unreached,
                           "other": {s: n for s, n in counts.items()
                                     if s not in KILLED | NOT_REACHED | {"survived"}},
                           "wall_s": round(wall, 1), "load": [round(load0, 1), round(load1, 1)],
                           "survivors": survivors})
    record_path.write_text(json.dumps(record, indent=1))
    if not args.keep:
        print(f"(scratch directory left at {work} for `mutmut browse`; delete it when done)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
