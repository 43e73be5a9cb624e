"""Constraints of the harness's public arguments that :mod:`quadnet._validation` has no class
for: names and claims (non-empty text), file stems, file-or-module sources and sweep grids.

They plug into the same declarative tables (:func:`quadnet._validation.validate_params`), so
the ``Raises`` sections and the generated bad-input tests come from them too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from quadnet._validation import Constraint

__all__ = ["Grid", "Source", "Text"]


class Text(Constraint):
    """A non-empty ``str`` (not blank, no leading or trailing whitespace); with ``stem=True``
    also usable as a file name (no path separator, no leading ``.``).

    Examples
    --------
    >>> Text().convert("trace identity", "claim", {})
    'trace identity'
    >>> Text().convert(" x", "name", {})
    Traceback (most recent call last):
        ...
    ValueError: name must not start or end with whitespace, got ' x'
    """

    def __init__(self, *, stem: bool = False):
        self.stem = stem

    def convert(self, value, name, dims):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be {self.describe()}, got {type(value).__name__}")
        if not value.strip():
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}")
        if value != value.strip():
            raise ValueError(f"{name} must not start or end with whitespace, got {value!r}")
        if self.stem:
            seps = {"/", os.sep} | ({os.altsep} if os.altsep else set())
            if any(s in value for s in seps) or value.startswith(".") or "\0" in value:
                raise ValueError(f"{name} must be a file name without a suffix (no path "
                                 f"separator, not starting with '.'), got {value!r}")
        return value

    def describe(self) -> str:
        what = "a non-empty str"
        return what + " usable as a file name (no '/', not starting with '.')" if self.stem \
            else what

    def bad_values(self):
        out = [("empty", ""), ("blank", "   "), ("None", None), ("int", 1),
               ("padded", " x ")]
        if self.stem:
            out += [("path", "a/b"), ("hidden", ".x")]
        return out


class Source(Constraint):
    """A ``str`` or :class:`os.PathLike` naming a ``.py`` file or a module; returns the
    ``str`` (``os.fspath``), non-empty."""

    def convert(self, value, name, dims):
        if not isinstance(value, (str, os.PathLike)):
            raise TypeError(f"{name} must be {self.describe()}, got {type(value).__name__}")
        text = os.fspath(value)
        if not isinstance(text, str):
            raise TypeError(f"{name} must be {self.describe()}, got a path of "
                            f"{type(text).__name__}")
        if not text.strip():
            raise ValueError(f"{name} must be {self.describe()}, got {text!r}")
        return text

    def describe(self) -> str:
        return "a non-empty str or os.PathLike (a .py file or a module name)"

    def bad_values(self):
        return [("None", None), ("int", 1), ("empty", ""), ("bytes", b"x.py")]


class Grid(Constraint):
    """``None`` or a mapping of axis names to sequences of values (the values are checked
    against the sweep's axes afterwards); returns the mapping."""

    def convert(self, value, name, dims):
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise TypeError(f"{name} must be {self.describe()}, got {type(value).__name__}")
        return value

    def describe(self) -> str:
        return "None or a mapping of axis names to sequences of values"

    def bad_values(self):
        return [("string", ""), ("int", 1), ("list", [("d", (4,))])]
