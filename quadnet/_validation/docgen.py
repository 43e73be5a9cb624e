r"""The ``Raises`` section of a validated callable's docstring, generated from its table.

:func:`raises_text` writes the ``TypeError, ValueError`` entry (one line per argument, from
``Constraint.describe``, and one per relation); :func:`with_raises` puts it into a numpydoc
docstring: in place of a hand-written generic ``TypeError, ValueError`` entry of an existing
``Raises`` section (other entries, such as a ``ValueError`` stating a specific condition, are kept), or as a new ``Raises`` section before ``Warns``,
``See Also``, ``Notes``, ``References`` or ``Examples``.

Examples
--------
>>> from quadnet._validation.constraints import Integer
>>> doc = "Run.\n\n    Notes\n    -----\n    Fast.\n    "
>>> print(with_raises(doc, {"steps": Integer(0)}, ()))
Run.
<BLANKLINE>
    Raises
    ------
    TypeError, ValueError
        If an argument is not as follows (the message names it):
<BLANKLINE>
        - ``steps``: an integer >= 0.
<BLANKLINE>
    Notes
    -----
    Fast.
<BLANKLINE>
"""

from __future__ import annotations

import re as _re

__all__ = ["raises_text", "with_raises"]


_SECTION = _re.compile(r"^(\s*)([A-Z][A-Za-z ]+)\n\1-{3,}\s*$", _re.M)
_AFTER_RAISES = ("Warns", "Warnings", "See Also", "Notes", "References", "Examples")


def raises_text(constraints: dict, relations=()) -> list[str]:
    """The generated ``Raises`` entry (unindented lines) for a constraint table."""
    lines = ["TypeError, ValueError",
             "    If an argument is not as follows (the message names it):", ""]
    for name, c in constraints.items():
        lines.append(f"    - ``{name}``: {c.describe()};")
    for rel in relations:
        lines.append(f"    - {rel.describe()};")
    if len(lines) > 3:
        lines[-1] = lines[-1][:-1] + "."
    return lines


def with_raises(doc: str | None, constraints: dict, relations) -> str | None:
    """``doc`` with its ``TypeError, ValueError`` entry of ``Raises`` generated from the table."""
    if not doc or not constraints:
        return doc
    headers = list(_SECTION.finditer(doc))
    indent = headers[0].group(1) if headers else ""
    if not headers:
        body_lines = [ln for ln in doc.splitlines()[1:] if ln.strip()]
        if body_lines:
            indent = min((len(ln) - len(ln.lstrip()) for ln in body_lines), default=0) * " "
    entry = [indent + ln if ln else "" for ln in raises_text(constraints, relations)]
    raises = [h for h in headers if h.group(2).strip() == "Raises"]
    if raises:
        h = raises[0]
        nxt = [x for x in headers if x.start() > h.start()]
        end = nxt[0].start() if nxt else len(doc)
        body = doc[h.end():end]
        # drop an existing generic "TypeError, ValueError" entry; a lone "ValueError" or
        # "TypeError" entry states a specific condition (e.g. a direction not horizontal) and stays
        kept, skipping = [], False
        for ln in body.split("\n"):
            stripped = ln.strip()
            is_head = ln.startswith(indent) and stripped and not ln[len(indent):].startswith(" ")
            if is_head:
                skipping = stripped.rstrip(":") in ("TypeError, ValueError", "ValueError, TypeError")
            if not skipping:
                kept.append(ln)
        rest = "\n".join(kept).strip("\n")
        new_body = "\n" + "\n".join(entry) + ("\n" + rest if rest.strip() else "") + "\n\n"
        return doc[:h.end()] + new_body + indent + doc[end:].lstrip(" ") if nxt else (
            doc[:h.end()] + new_body.rstrip() + "\n" + indent)
    section = [indent + "Raises", indent + "------"] + entry + [""]
    after = [x for x in headers if x.group(2).strip() in _AFTER_RAISES]
    if after:
        pos = after[0].start()
        # insert at the start of that header's line
        return doc[:pos].rstrip(" ") + "\n".join(section) + "\n" + doc[pos:].lstrip("\n")
    return doc.rstrip() + "\n\n" + "\n".join(section) + "\n" + indent
