"""Writing a report: atomically, so that a reader or a run stopped at any moment sees the
old file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

__all__ = ["write_json_atomic"]


def write_json_atomic(path: str | os.PathLike, obj) -> None:
    """Write ``obj`` as JSON to ``path`` atomically: a temporary file in the same folder,
    flushed to disk, then renamed over ``path``. A reader (or a run killed at any moment)
    sees the old file or the new one, never half of one.

    Examples
    --------
    >>> import tempfile, json, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "r.json"
    ...     write_json_atomic(path, {"checks": []})
    ...     json.loads(path.read_text()), sorted(p.name for p in pathlib.Path(tmp).iterdir())
    ({'checks': []}, ['r.json'])
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(obj, indent=2) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
