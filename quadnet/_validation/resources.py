"""What the machine can still allocate, and the relation that refuses sizes beyond it.

:func:`available_memory` reads ``/proc/meminfo``, ``/proc/self/status`` and the address-space
limit (``ulimit -v``, ``RLIMIT_AS``); :func:`memory_guard` builds the :class:`Relation` of a
constraint table that refuses, before anything is allocated, a size whose memory estimate
exceeds it (:class:`~quadnet.exceptions.SizeTooLargeError`, naming the sizes).
"""

from __future__ import annotations

import math as _math
import os
import resource

from quadnet._validation.constraints import Relation
from quadnet.exceptions import SizeTooLargeError

__all__ = ["available_memory", "memory_guard"]


def _proc_bytes(path: str, key: str) -> int | None:
    """The ``key: N kB`` field of a ``/proc`` file in bytes (``None`` if absent or unreadable)."""
    try:
        with open(path, encoding="ascii") as fh:
            for line in fh:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _meminfo_available() -> int | None:
    return _proc_bytes("/proc/meminfo", "MemAvailable:")


def _vm_size() -> int | None:
    return _proc_bytes("/proc/self/status", "VmSize:")


def available_memory() -> int:
    """Bytes this process can still allocate: the smaller of the machine's available memory
    and what the address-space limit (``ulimit -v``) leaves.

    * machine: ``MemAvailable`` of ``/proc/meminfo`` (Linux), else available physical pages
      (``os.sysconf("SC_AVPHYS_PAGES")``), else total physical memory;
    * limit: the soft ``RLIMIT_AS`` minus the current virtual size (``VmSize`` of
      ``/proc/self/status``), when a limit is set.

    Returns
    -------
    int
        Bytes (at least 0). ``2**63 − 1`` if nothing can be determined.

    Examples
    --------
    >>> available_memory() > 0
    True
    """
    avail = _meminfo_available()
    if avail is None:
        for key in ("SC_AVPHYS_PAGES", "SC_PHYS_PAGES"):
            try:
                avail = os.sysconf(key) * os.sysconf("SC_PAGE_SIZE")
                break
            except (ValueError, OSError, AttributeError):
                continue
    if avail is None or avail <= 0:
        avail = 2**63 - 1
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ValueError, OSError):  # pragma: no cover - no address-space limit here
        soft = resource.RLIM_INFINITY
    if soft != resource.RLIM_INFINITY and soft > 0:
        used = _vm_size()
        if used is None:  # pragma: no cover - off Linux: the peak RSS as a lower bound
            used = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        avail = min(avail, soft - used)
    return max(0, int(avail))


def memory_guard(names: tuple[str, ...], estimate, what: str) -> Relation:
    """A :class:`Relation` refusing sizes whose memory ``estimate(args)`` (bytes) exceeds
    :func:`available_memory`, before anything is allocated; the message names the sizes."""

    def check(args):
        try:
            need = float(estimate(args))
        except OverflowError:
            need = _math.inf
        if need <= 0.5 * 2 ** 40 and need <= available_memory():
            return None
        have = available_memory()
        sizes = ", ".join(f"{n} = {args[n]!r}" for n in names if not hasattr(args[n], "shape"))
        raise SizeTooLargeError(
            f"{sizes or ', '.join(names)}: {what} needs about {need / 2**30:.3g} GiB, more than "
            f"the {have / 2**30:.3g} GiB available; use smaller sizes")

    return Relation(names, check, f"{what} must fit in the available memory "
                                  f"(estimated before allocating)")
