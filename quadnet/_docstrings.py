"""Shared docstring pieces: a parameter entry that several callables document identically is
written once and substituted into each docstring, in the manner of scipy's ``doccer``.

A line holding only ``{{name}}`` (with any indentation) is replaced by the piece ``name``,
dedented and re-indented to that line's indentation. Nothing else in the docstring changes, so
the substituted text is what ``help()``, Sphinx and the doctests see. This module imports
nothing from quadnet (it sits below every layer).

Examples
--------
>>> pieces = {"x": '''x : float
...     The point.'''}
>>> @fill(pieces)
... def f(x):
...     '''Identity.
...
...     Parameters
...     ----------
...     {{x}}
...     '''
>>> f.__doc__.splitlines()[4:6] == ['    x : float', '        The point.']
True
"""

from __future__ import annotations

import re
import textwrap

__all__ = ["fill", "substitute"]

_PLACE = re.compile(r"^([ \t]*)\{\{(\w+)\}\}[ \t]*$", re.MULTILINE)


def substitute(doc: str | None, pieces: dict[str, str]) -> str | None:
    """``doc`` with every ``{{name}}`` line replaced by ``pieces[name]`` at that indentation.

    Raises ``KeyError`` naming an unknown piece (a misspelt placeholder is never left in).

    Examples
    --------
    >>> substitute("A.\\n\\n  {{p}}\\n", {"p": "p : int\\n    Count."}) == (
    ...     "A.\\n\\n  p : int\\n      Count.\\n")
    True
    """
    if doc is None:            # python -OO strips docstrings
        return None

    def put(match: re.Match) -> str:
        indent, name = match.groups()
        if name not in pieces:
            raise KeyError(f"docstring piece {name!r} is not defined (known: {sorted(pieces)})")
        lines = textwrap.dedent(pieces[name]).strip("\n").splitlines()
        return "\n".join(indent + ln if ln else "" for ln in lines)

    return _PLACE.sub(put, doc)


def fill(pieces: dict[str, str]):
    """Decorator: ``obj.__doc__ = substitute(obj.__doc__, pieces)``; apply it innermost (below
    the validation decorators, which read the docstring to add its ``Raises`` entry).

    Examples
    --------
    >>> @fill({"n": "n : int"})
    ... def g(n):
    ...     '''{{n}}'''
    >>> g.__doc__
    'n : int'
    """
    def decorate(obj):
        obj.__doc__ = substitute(obj.__doc__, pieces)
        return obj
    return decorate
