"""What the commands share: exit codes, output-path checks, signals, running one check."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from pathlib import Path

__all__ = ["EXIT_FAIL", "EXIT_OK", "EXIT_SIGINT", "EXIT_SIGTERM", "EXIT_SKIPPED", "EXIT_USAGE",
           "Interrupted", "progress_on", "run_one", "stop_on_sigterm", "unknown_checks",
           "writable_dir", "writable_file"]

#: Exit codes of ``quadnet verify`` (also in ``--help``); a run stopped by a signal exits
#: with 128 + the signal number (``EXIT_SIGINT`` for Ctrl-C, ``EXIT_SIGTERM``).
EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_SKIPPED = 0, 1, 2, 3
EXIT_SIGINT, EXIT_SIGTERM = 130, 143


# ------------------------------------------------------------------ output paths
def writable_dir(path: str, what: str) -> str | None:
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


def writable_file(path: str, what: str) -> str | None:
    """``None`` if the file ``path`` can be written, else a clear message."""
    parent = Path(path).parent
    err = writable_dir(str(parent), f"the directory of {what}")
    if err is None and Path(path).is_dir():
        return f"{what} {path!r} is a directory"
    return err


# ------------------------------------------------------------------ running checks
def run_one(checks, name: str, ctx):
    """Run one check; an exception becomes a failed result (the other checks still run)."""
    try:
        return checks.run_check(name, ctx)
    except Exception as exc:  # noqa: BLE001 - reported as a failed check, with the traceback
        import traceback

        traceback.print_exc(file=sys.stderr)
        spec = checks.get(name)
        return checks.CheckResult(name, spec.claim,
                                  metrics={"error": f"{type(exc).__name__}: {exc}"})


def unknown_checks(checks, wanted: list[str], cmd: str) -> bool:
    """Whether ``wanted`` names a check that is not registered (then said on stderr)."""
    names = checks.available()
    unknown = [n for n in wanted if n not in names]
    if unknown:
        print(f"quadnet {cmd}: unknown check(s) {', '.join(unknown)}; available: "
              f"{', '.join(names)}", file=sys.stderr)
    return bool(unknown)


def progress_on(args) -> bool:
    """Progress bars: with ``--progress``, else when stderr is a terminal and no
    ``--no-progress`` was given."""
    if getattr(args, "progress", False):
        return True
    return sys.stderr.isatty() and not args.no_progress


# ------------------------------------------------------------------ signals
class Interrupted(KeyboardInterrupt):
    """A signal (SIGTERM, or SIGINT as ``KeyboardInterrupt``) stopped ``quadnet verify``."""

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signum)
        self.signum = signum


def _raise_interrupted(signum, frame):  # noqa: ARG001 - the signal handler signature
    raise Interrupted(signum)


@contextlib.contextmanager
def stop_on_sigterm():
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
