"""Progress on stderr: the one implementation the harness and the kernel solvers share.

Two kinds of callers report progress:

* the loops of a check (:meth:`quadnet.harness.CheckContext.progress`), through
  :func:`iterate` and :func:`activity`: with a terminal, nested tqdm bars (each loop one
  line below the loop around it); without one, plain lines for the whole stack of running
  loops, e.g. ``[quadnet] recovery: phase transition 830/1760 cells, ETA 4 min; inner 2/5``,
  one when the outermost loop starts, then at most, and while work goes on (a heartbeat
  thread) at least, every :data:`PROGRESS_INTERVAL` seconds, and one when it ends
  (``... 1760/1760 cells done in 9 min``); a check without loops still gets
  ``[quadnet] recovery: running, 3.0 min so far``;
* a long solve (``quadnet.features.solvers``, ``RecursiveFeatureMachine``), through
  :func:`progress_bar`: an object with ``update``, ``set_postfix_str`` and ``close`` that is
  a tqdm bar on a terminal, plain lines such as ``[quadnet] kernel fit (direct): 262/16000
  (22 s)`` otherwise (at most one per 10 s, or one per step with ``leave=True``), and does
  nothing when not enabled.

Every line goes through one writer (:func:`emit`: stderr, flushed, under one lock, which
also times the heartbeat), every bar through :func:`tqdm` (``tqdm.auto``, imported only when
a bar is drawn), and every duration a person reads through :func:`format_duration`.

Examples
--------
>>> from quadnet._progress import format_duration, iterate
>>> sum(iterate(range(4), "demo"))  # neither bars nor lines asked for: the iterable itself
6
>>> format_duration(240.0)
'4 min'
"""

from __future__ import annotations

import contextlib
import math
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

__all__ = [
    "PROGRESS_INTERVAL",
    "activity",
    "emit",
    "format_duration",
    "iterate",
    "progress_bar",
    "tqdm",
]

#: Plain progress lines of the harness (no terminal) are written at most, and while work goes
#: on at least, every this many seconds.
PROGRESS_INTERVAL = 60.0
#: The plain lines of :func:`progress_bar` are written at most every this many seconds.
SOLVER_INTERVAL = 10.0

_ACTIVE: list[_Frame] = []  # the loops reporting plain lines, outermost first
_LOCK = threading.RLock()
_STATE = {"last": -math.inf, "thread": None, "bars": 0}


def format_duration(seconds: float) -> str:
    """``40 s``, ``4 min``, ``1.5 h``: a duration as a person reads it.

    Examples
    --------
    >>> [format_duration(s) for s in (36.9, 89.4, 240.0, 5400.0)]
    ['37 s', '89 s', '4 min', '1.5 h']
    """
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def tqdm(*args, **kwargs):
    """A ``tqdm.auto.tqdm`` bar (tqdm is imported only when a bar is drawn)."""
    from tqdm.auto import tqdm as _tqdm

    return _tqdm(*args, **kwargs)


def emit(line: str) -> None:
    """Write one progress line to stderr (flushed) and note when, for the heartbeat."""
    with _LOCK:
        print(line, file=sys.stderr, flush=True)
        _STATE["last"] = time.monotonic()


# ----------------------------------------------------------------------------- the loops
@dataclass
class _Frame:
    """One running loop (or, ``is_check``, one running check) and how far it got."""

    desc: str
    total: int | None
    unit: str
    is_check: bool = False
    check: str = ""
    n: int = 0
    post: str = ""
    t0: float = field(default_factory=time.monotonic)

    def text(self, now: float) -> str:
        """``desc n/total unit, ETA ...``: this loop's part of a status line."""
        if self.is_check:
            return ""
        unit = f" {self.unit}" if self.unit else ""
        out = f"{self.desc} {self.n}/{self.total}{unit}" if self.total is not None else \
            f"{self.desc} {self.n}{unit}"
        if self.total and 0 < self.n < self.total:
            out += f", ETA {format_duration((now - self.t0) / self.n * (self.total - self.n))}"
        return out.strip()

    def counter(self, now: float) -> str:
        """``[quadnet] desc: n/total post (elapsed s)``: the line of a solve."""
        tot = f"/{self.total}" if self.total else ""
        return f"[quadnet] {self.desc}: {self.n}{tot} {self.post} ({now - self.t0:.0f} s)"


def _status(now: float, final: _Frame | None = None) -> str:
    """One line for the whole stack of active loops (``check: outer 3/10, ETA 2 min; inner
    5/20``), or the final line of the outermost loop ``final``."""
    frames = list(_ACTIVE)
    check = next((f.desc for f in frames if f.is_check), "")
    check = check or next((f.check for f in frames if f.check), "")
    if final is not None:
        unit = f" {final.unit}" if final.unit else ""
        body = f"{final.desc} {final.n}{'/' + str(final.total) if final.total is not None else ''}" \
               f"{unit} done in {format_duration(now - final.t0)}".strip()
    else:
        parts = [f.text(now) for f in frames if not f.is_check]
        body = "; ".join(p for p in parts if p)
        if not body:
            top = next(f for f in frames if f.is_check)
            body = f"running, {format_duration(now - top.t0)} so far"
    return f"[quadnet] {check}: {body}" if check else f"[quadnet] {body}"


def _heartbeat(stop: threading.Event) -> None:
    """Write the status line whenever none was written for ``PROGRESS_INTERVAL``
    seconds (a step of a loop, or a check without loops, that takes long)."""
    while not stop.wait(max(min(PROGRESS_INTERVAL / 4, 5.0), 0.01)):
        with _LOCK:
            if not _ACTIVE:
                return
            now = time.monotonic()
            if PROGRESS_INTERVAL > 0 and now - _STATE["last"] >= PROGRESS_INTERVAL:
                emit(_status(now))


def _push(frame: _Frame) -> None:
    with _LOCK:
        _ACTIVE.append(frame)
        if _STATE["thread"] is None:
            stop = threading.Event()
            thread = threading.Thread(target=_heartbeat, args=(stop,), daemon=True,
                                      name="quadnet-progress")
            _STATE["thread"] = (thread, stop)
            _STATE["last"] = time.monotonic()
            thread.start()


def _pop(frame: _Frame) -> None:
    with _LOCK:
        if frame in _ACTIVE:
            _ACTIVE.remove(frame)
        if not _ACTIVE and _STATE["thread"] is not None:
            thread, stop = _STATE["thread"]
            _STATE["thread"] = None
            stop.set()


def _bars(iterable: Iterable, desc: str, total: int | None, unit: str) -> Iterator:
    """Iterate ``iterable`` under a tqdm bar one line below the bar of the enclosing loop."""
    with _LOCK:
        _STATE["bars"] = depth = _STATE["bars"] + 1
    try:
        with tqdm(iterable, desc=desc, total=total, leave=False, position=depth,
                  dynamic_ncols=True, unit=unit or "it") as bar:
            yield from bar
    finally:
        with _LOCK:
            _STATE["bars"] = depth - 1


def _lines(iterable: Iterable, check: str, desc: str, total: int | None,
           unit: str) -> Iterator:
    """Iterate ``iterable`` and write plain progress lines (see the module docstring)."""
    if total is None:
        try:
            total = len(iterable)  # type: ignore[arg-type]
        except TypeError:
            total = None
    frame = _Frame(desc, total, unit, check=check)
    outermost = not any(not f.is_check for f in _ACTIVE)
    _push(frame)
    it = iter(iterable)
    try:
        if outermost:
            emit(_status(time.monotonic()))
        for item in it:
            yield item
            frame.n += 1
            now = time.monotonic()
            if now - _STATE["last"] >= PROGRESS_INTERVAL:
                emit(_status(now))
        if outermost:
            emit(_status(time.monotonic(), final=frame))
    finally:
        _pop(frame)
        close = getattr(it, "close", None)
        if close is not None:  # e.g. Executor.map: cancels the work not started yet
            close()


def iterate(iterable: Iterable, desc: str = "", total: int | None = None, *, unit: str = "",
            bars: bool = False, lines: bool = False, check: str = "") -> Iterable:
    """``iterable``, with its progress as tqdm ``bars`` or as plain ``lines`` (named after
    ``check``), or ``iterable`` itself when neither is asked for.

    Examples
    --------
    >>> list(iterate("abc", "letters"))
    ['a', 'b', 'c']
    """
    if bars:
        return _bars(iterable, desc, total, unit)
    if lines:
        return _lines(iterable, check, desc, total, unit)
    return iterable


@contextlib.contextmanager
def activity(name: str, *, lines: bool = True) -> Iterator[None]:
    """Run the block as check ``name``: with ``lines``, the heartbeat writes
    ``[quadnet] NAME: running, 3.0 min so far`` while no loop of it reports progress."""
    frame = _Frame(name, None, "", is_check=True) if lines else None
    if frame is not None:
        _push(frame)
    try:
        yield
    finally:
        if frame is not None:
            _pop(frame)


# ----------------------------------------------------------------------------- the solves
class _NoBar:
    """A do-nothing progress bar."""

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, s: str) -> None:
        pass

    def close(self) -> None:
        pass


class _LineBar:
    """Plain progress lines on stderr (no terminal): at most one per ``every`` seconds."""

    def __init__(self, total: int | None, desc: str, every: float = SOLVER_INTERVAL):
        self.frame = _Frame(desc, total, "")
        self.every = every
        self.last = self.frame.t0

    def update(self, n: int = 1) -> None:
        self.frame.n += n
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now
            emit(self.frame.counter(now))

    def set_postfix_str(self, s: str) -> None:
        self.frame.post = s

    def close(self) -> None:
        now = time.monotonic()
        if now - self.frame.t0 >= self.every:
            emit(self.frame.counter(now))


def progress_bar(total: int | None, desc: str, enabled: bool, *, leave: bool = False):
    """A tqdm bar on a terminal, plain lines on stderr otherwise, nothing if not ``enabled``.

    Examples
    --------
    >>> bar = progress_bar(10, "kernel fit (direct)", False)
    >>> bar.update(3); bar.set_postfix_str("residual 1e-3"); bar.close()  # writes nothing
    """
    if not enabled:
        return _NoBar()
    if sys.stderr.isatty():
        return tqdm(total=total, desc=desc, leave=leave, dynamic_ncols=True)
    return _LineBar(total, desc, every=0.0 if leave else SOLVER_INTERVAL)
