"""The one bad-value generator: the values one entry of a constraint table must refuse.

:func:`bad_values` reads a table entry (a :class:`~quadnet._validation.constraints.Constraint`)
and, given the argument's valid value, yields :class:`BadValue` records: the value, the
exception types the call must raise and a regular expression its message must contain (the
argument's name, after the callable's name when the callable is checked by its table). Two
sources feed it:

* the constraint's own :meth:`~quadnet._validation.constraints.Constraint.bad_values`
  (labels ``table-...``), which do not depend on the valid value;
* perturbations of the valid value, by the kind of value the constraint describes
  (:func:`kind_of`): a NaN or an inf entry, strings, complex and object arrays, one
  dimension too many, empty arrays, ``r > d`` factors; NaN, inf, complex, zero, negative and
  out-of-range numbers; ``"abc"``, ``-1`` and ``1.5`` seeds; unknown options.

A hand-checked callable without a table names the kind of each argument instead (``kind=``):
its inline checks must refuse what the equivalent table entry would. :func:`accepted_values`
lists the variants of a valid value that must be accepted (a list for an array, a Generator for
a seed). The bad-input tests of every public callable and of the tables themselves use this
generator.

Examples
--------
>>> from quadnet._validation import Real
>>> [(b.label, b.value) for b in bad_values(Real(0, None, closed="neither"), "eta", 0.1)][-3:]
[('complex', (1+1j)), ('zero', 0.0), ('negative', -1.0)]
>>> b = next(bad_values(Real(0, None, closed="neither"), "eta", qualname="step"))
>>> b.label, b.error, b.match
('table-string', (<class 'TypeError'>,), 'step: .*eta')
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from quadnet._validation import constraints as _c
from quadnet._validation.decorator import callable_name

__all__ = ["BadValue", "accepted_values", "bad_values", "kind_of"]

#: the labels of perturbations that change a shape: a call may blame the clash on another
#: argument (the one whose size was bound first)
SHAPE_LABELS = ("empty", "ndim", "r>d", "table-wrong ndim", "table-1-d", "table-r > d",
                "table-r = 0", "table-non-square")

_MISSING = object()


@dataclass(frozen=True)
class BadValue:
    """One bad value of one argument and what the call must do with it.

    ``error`` is the tuple of exception types the call must raise; ``match`` a regular
    expression the message must contain (``re.search``); ``blame_other`` is True when the
    value changes a shape, so the message may name the other argument of the clash instead;
    ``refused`` is False for a variant that may also be accepted (an int or a bool array: its
    values may be valid), in which case only a refusal's message is checked.
    """

    label: str
    value: Any
    error: tuple
    match: str
    blame_other: bool = False
    refused: bool = True


#: the labels of :meth:`~quadnet._validation.constraints.Constraint.bad_values` whose values
#: are of a wrong type (a ``TypeError``); the other values of the constraint classes of
#: :mod:`~quadnet._validation.constraints` have the right type and a wrong value (``ValueError``)
WRONG_TYPE = frozenset({"string", "None", "complex", "bool", "array", "object", "float", "int"})


def _error_of(constraint, label: str) -> tuple:
    """The exception type a table entry raises for its own bad value ``label``: by the label
    for the constraint classes of this package, the entry's ``raises`` for a converter."""
    inner = constraint
    while isinstance(inner, _c.Optional):
        inner = inner.inner
    if type(inner).__module__ != _c.__name__ or isinstance(inner, _c.Converted):
        return tuple(constraint.raises)
    return (TypeError,) if label in WRONG_TYPE else (ValueError,)


def kind_of(constraint, valid=_MISSING) -> str | None:
    """The kind of value a constraint describes, which picks the perturbations of the valid
    value: ``"array"``, ``"factor"``, ``"times"``, ``"positive"``, ``"nonneg"``, ``"unit"``,
    ``"real"``, ``"count"``, ``"int"``, ``"seed"``, ``"str"``, ``"callable"``, ``"object"``
    or None (no perturbations).

    Examples
    --------
    >>> from quadnet._validation import Factor, Integer, Real
    >>> kind_of(Factor()), kind_of(Integer(1)), kind_of(Real(0, 1, closed="neither"))
    ('factor', 'count', 'unit')
    """
    if isinstance(constraint, _c.Optional):
        return kind_of(constraint.inner, valid)
    if isinstance(constraint, _c.Factor):
        return "factor"
    if isinstance(constraint, (_c.Array, _c.Symmetric, _c.Directions)):
        return "array"
    if isinstance(constraint, _c.TimeGrid):
        return "times"
    if isinstance(constraint, _c.Real):
        low, high, closed = constraint.low, constraint.high, constraint.closed
        if low == 0 and high == 1 and closed == "neither":
            return "unit"
        if low == 0 and high is None:
            return "positive" if closed in ("right", "neither") else "nonneg"
        return "real"
    if isinstance(constraint, _c.Integer):
        return "count" if constraint.low is not None and constraint.low >= 0 else "int"
    if isinstance(constraint, _c.Seed):
        return "seed"
    if isinstance(constraint, (_c.Options, _c.CvxpySolver)):
        return "str"
    if isinstance(constraint, _c.IsCallable):
        return "callable"
    if isinstance(constraint, (_c.Instance, _c.Sequence)):
        return "object"
    if isinstance(constraint, _c.Bind):
        return None
    if valid is not _MISSING and isinstance(valid, np.ndarray):  # a Converted array
        return "array"
    return "object"


def _array_perturbations(kind: str, value) -> list[tuple[str, Any]]:
    a = np.asarray(value)
    cx = np.iscomplexobj(a)  # a complex valid value (a complex field): keep its dtype
    a = a.astype(complex if cx else float)
    out = [("str", "abc"), ("none", None), ("object-array", a.astype(object)),
           ("list-of-str", np.full(a.shape, "a").tolist())]
    if not cx:
        out.insert(3, ("complex-array", a + 1j))
    if kind != "labels" and a.size:
        nan, inf = a.copy(), a.copy()
        nan.flat[a.size // 2] = np.nan
        inf.flat[0] = np.inf
        out += [("nan", nan), ("inf", inf)]
    out += [("ndim+2", a[None, None]), ("empty", np.empty((0,) + a.shape[1:]))]
    if a.ndim == 2:
        out.append(("empty-cols", np.empty((a.shape[0], 0))))
    if kind == "factor":
        d, r = a.shape
        out.append(("r>d", np.ones((r, d + r))))
    return out


def _perturbations(kind: str, value) -> list[tuple[str, Any]]:
    """``(label, bad value)`` pairs derived from a valid ``value`` of this kind."""
    if kind in ("array", "factor", "times", "labels"):
        return _array_perturbations(kind, value)
    if kind in ("positive", "nonneg", "unit", "real"):
        return ([("str", "x"), ("nan", np.nan), ("inf", np.inf), ("complex", 1 + 1j)]
                + {"positive": [("zero", 0.0), ("negative", -1.0)],
                   "unit": [("zero", 0.0), ("negative", -1.0), ("one-or-more", 1.5)],
                   "nonneg": [("negative", -1.0)]}.get(kind, []))
    if kind in ("count", "int"):
        return [("str", "x"), ("float", 1.5), ("nan", np.nan)] + (
            [("negative", -1)] if kind == "count" else [])
    if kind in ("seed", "intseed"):
        return [("str", "abc"), ("negative", -1), ("float", 1.5)]
    if kind == "str":
        return [("unknown", "no-such-option"), ("int", 3)]
    if kind == "pair":
        return [("str", "abc"), ("none", None), ("one", (1.0,)), ("nan", (0.1, np.nan)),
                ("str-entry", (0.1, "x"))]
    if kind in ("object", "callable"):
        return [("str", "abc"), ("int", 3)]
    return []


def _either(kind: str, value) -> list[tuple[str, Any]]:
    """Int and bool arrays: accepted, or refused with an error naming the argument (their
    values may be invalid, e.g. a rank-deficient rounding of a factor)."""
    if kind in ("array", "factor") and isinstance(value, np.ndarray) and value.size:
        a = np.asarray(value).real.astype(float)  # (of a complex value: its real part)
        return [("int-array", np.round(3 * a).astype(np.int64)), ("bool-array", a > 0)]
    return []


def bad_values(constraint, name: str, valid=_MISSING, *, kind: str | None = None,
               qualname: str | None = None, optional: bool = False) -> Iterator[BadValue]:
    """Yield the bad values of argument ``name`` under one table entry.

    Parameters
    ----------
    constraint : Constraint or None
        The table entry (``func.__quadnet_constraints__[name]``); None for a hand-checked
        argument, which then needs ``kind``.
    name : str
        The argument's name, which every message must contain.
    valid : object, optional
        A valid value of the argument; without it only the constraint's own bad values are
        yielded.
    kind : str, optional
        The kind of value, when it is not the one the constraint describes (:func:`kind_of`).
    qualname : str, optional
        The callable's qualified name, which the message of the entry's own bad values must
        start with, before ``name`` (the callables checked by their table:
        :func:`~quadnet._validation.name_callable`). A perturbation of the valid value may pass
        the entry and be refused later, in the body: its message must name the argument.
    optional : bool, default False
        ``None`` is a valid value (the argument defaults to it): no ``None`` perturbation.

    Yields
    ------
    BadValue

    Examples
    --------
    >>> from quadnet._validation import Integer
    >>> [(b.label, b.value) for b in bad_values(Integer(0), "steps", 3)]  # doctest: +NORMALIZE_WHITESPACE
    [('table-float', 1.5), ('table-string', '3'), ('table-None', None), ('table-bool', True),
     ('table-below', -1), ('str', 'x'), ('float', 1.5), ('nan', nan), ('negative', -1)]
    """
    who = re.escape(name) if qualname is None else (
        re.escape(callable_name(qualname)) + ": .*" + re.escape(name))
    if constraint is not None and constraint.record:
        for entry in constraint.bad_values():
            label, value = entry[0], entry[1]
            error = _error_of(constraint, label)
            label = f"table-{label}"
            yield BadValue(label, value, error, who, label.startswith(SHAPE_LABELS))
    if valid is _MISSING:
        return
    kind = kind or kind_of(constraint, valid)
    if kind is None:
        return
    complex_ok = getattr(getattr(constraint, "inner", constraint), "allow_complex", False)
    for label, value in _perturbations(kind, valid):
        if label == "none" and optional or label == "complex-array" and complex_ok:
            continue                    # None is valid / a complex array is (allow_complex)
        yield BadValue(label, value, (TypeError, ValueError), re.escape(name),
                       label.startswith(SHAPE_LABELS))
    for label, value in _either(kind, valid):
        yield BadValue(f"either-{label}", value, (TypeError, ValueError), re.escape(name),
                       True, refused=False)


def accepted_values(kind: str | None, value) -> list[tuple[str, Any]]:
    """Variants of a valid value that must be accepted: the list of an array, a Generator for
    a seed.

    Examples
    --------
    >>> accepted_values("array", np.eye(2))
    [('list', [[1.0, 0.0], [0.0, 1.0]])]
    """
    if kind in ("array", "factor") and isinstance(value, np.ndarray) and value.size:
        return [("list", value.tolist())]
    if kind == "seed":
        return [("generator", np.random.default_rng(0))]
    return []
