"""Input validation and the one vectorisation convention (quadnet theory §0).

Every public function checks its inputs with these helpers, so that bad input gets a
``TypeError``/``ValueError`` naming the argument and what was expected, never a NaN.
"""

from __future__ import annotations

import contextlib as _contextlib
import contextvars as _contextvars
import functools as _functools
import inspect as _inspect
import math as _math
import os
import resource
import re as _re
import numbers

import numpy as np

# the errors of argument checking live in quadnet.exceptions (re-exported here)
from quadnet.exceptions import (LinAlgFailure, NonFiniteResultError, SizeTooLargeError,
                                SolverFailure)

__all__ = [
    "RANK_RTOL",
    "as_array",
    "as_directions",
    "as_factor",
    "as_int",
    "as_matrix",
    "as_positive",
    "as_rng",
    "as_square",
    "as_symmetric",
    "rank_deficiency",
    "renamed_keyword",
    "unvec",
    "vec",
]

#: A factor whose smallest singular value is below ``RANK_RTOL`` times its largest is
#: treated as rank deficient: the Lyapunov solves of the quotient geometry would then
#: divide by ``2 sigma_min^2 <= 2e-20 sigma_max^2`` and lose every significant digit.
RANK_RTOL = 1e-10


def as_array(x, name: str, *, ndim: int | None = None, shape: tuple | None = None,
             finite: bool = True) -> np.ndarray:
    """``x`` as a float64 array, checked for type, number of dimensions, shape, finiteness.

    ``shape`` may contain ``None`` for a free axis.

    Examples
    --------
    >>> as_array([1, 2], "x").dtype
    dtype('float64')
    >>> as_array([1.0, float("nan")], "x")
    Traceback (most recent call last):
        ...
    ValueError: x has 1 non-finite entries (NaN or inf)
    """
    _record("as_array", name)
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"{name} must be an array of real numbers, got {type(x).__name__}")
    try:
        arr = np.asarray(x)
    except Exception as exc:  # pragma: no cover - exotic inputs
        raise TypeError(f"{name} must be an array of real numbers: {exc}") from exc
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real, got complex dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=False)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if shape is not None and (arr.ndim != len(shape) or any(
            s is not None and s != a for s, a in zip(shape, arr.shape))):
        want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
        raise ValueError(f"{name} must have shape {want}, got {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{name} has {bad} non-finite entries (NaN or inf)")
    return arr


def as_matrix(x, name: str, *, shape: tuple | None = None, allow_empty: bool = False
              ) -> np.ndarray:
    """A finite float64 2-d array, with no zero-length axis unless ``allow_empty``.

    Examples
    --------
    >>> as_matrix([[1.0]], "A").shape
    (1, 1)
    """
    arr = as_array(x, name, ndim=2, shape=shape)
    if not allow_empty and arr.size == 0:
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    return arr


def as_directions(x, name: str, shape: tuple[int, int]) -> tuple[np.ndarray, bool]:
    """``x`` of shape ``shape`` or ``(b, *shape)`` (``b >= 1``) as a float64 stack ``(b, *shape)``.

    Returns ``(stack, single)`` with ``single`` true when ``x`` was one ``shape`` array.
    """
    arr = as_array(x, name)
    shape = tuple(shape)
    if arr.shape == shape:
        return arr[None], True
    if arr.ndim != 3 or arr.shape[1:] != shape or arr.shape[0] < 1:
        raise ValueError(f"{name} must have shape {shape} or (b, {shape[0]}, {shape[1]}) with "
                         f"b >= 1, got {arr.shape}")
    return arr, False


def as_square(x, name: str, n: int | None = None) -> np.ndarray:
    arr = as_matrix(x, name)
    if arr.shape[0] != arr.shape[1] or (n is not None and arr.shape[0] != n):
        want = f"({n}, {n})" if n is not None else "square"
        raise ValueError(f"{name} must be {want}, got shape {arr.shape}")
    return arr


def as_symmetric(x, name: str, n: int | None = None, *, rtol: float = 1e-10) -> np.ndarray:
    """A finite square float64 array that is symmetric up to ``rtol`` (relative, Frobenius).

    Returns the exact symmetric part, so later algebra is symmetric to the last bit.
    """
    arr = as_square(x, name, n)
    with np.errstate(over="ignore"):
        scale = np.linalg.norm(arr)
        asym = np.linalg.norm(arr - arr.T)
    if not (np.isfinite(scale) and np.isfinite(asym)):   # entries near 1.8e308: rescale first
        m = float(np.abs(arr).max())
        scale, asym = np.linalg.norm(arr / m), np.linalg.norm(arr / m - arr.T / m)
    if asym > rtol * max(scale, np.finfo(float).tiny):
        raise ValueError(
            f"{name} must be symmetric: ||{name} - {name}^T||_F / ||{name}||_F = "
            f"{asym / scale:.3e} > {rtol:g}"
        )
    # = quadnet._linalg.sym, halved first so entries near 1.8e308 do not overflow (no import:
    # _validation sits beside _linalg)
    return 0.5 * arr + 0.5 * arr.T


def rank_deficiency(U: np.ndarray) -> float:
    """``sigma_min / sigma_max`` of ``U`` (0 for the zero matrix)."""
    s = np.linalg.svd(U, compute_uv=False)
    return float(s[-1] / s[0]) if s[0] > 0 else 0.0


def as_factor(U, name: str = "U", *, d: int | None = None, r: int | None = None,
              full_rank: bool = True, rtol: float = RANK_RTOL) -> np.ndarray:
    """A finite ``d x r`` float64 factor with ``r <= d``, of full column rank if asked.

    Full rank is numerical: ``sigma_min(U) > rtol * sigma_max(U)``.

    Examples
    --------
    >>> import numpy as np
    >>> as_factor(np.ones((3, 2)), "U")                  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: U is numerically rank deficient: sigma_min/sigma_max = ... <= 1e-10; ...
    """
    arr = as_matrix(U, name, shape=(d, r))
    dd, rr = arr.shape
    if rr > dd:
        raise ValueError(f"{name} must have at most as many columns as rows (r <= d), got shape "
                         f"{arr.shape}")
    if rr == 0:
        raise ValueError(f"{name} must have at least one column, got shape {arr.shape}")
    if full_rank:
        ratio = rank_deficiency(arr)
        if not ratio > rtol:
            raise ValueError(
                f"{name} is numerically rank deficient: sigma_min/sigma_max = {ratio:.3e} "
                f"<= {rtol:g}; the quotient geometry needs full column rank {rr}"
            )
    return arr


def as_positive(x, name: str, *, allow_zero: bool = False) -> float:
    """A finite positive real scalar (``> 0``, or ``>= 0`` with ``allow_zero``).

    Examples
    --------
    >>> as_positive(2, "eta")
    2.0
    """
    _record("as_positive", name)
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}")
    x = float(x)
    if not np.isfinite(x) or x < 0 or (x == 0 and not allow_zero):
        want = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {want}, got {x}")
    return x


def as_int(x, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer in ``[minimum, maximum]``.

    Examples
    --------
    >>> as_int(3, "steps", minimum=0)
    3
    """
    _record("as_int", name)
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(x).__name__}")
    x = int(x)
    if minimum is not None and x < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {x}")
    if maximum is not None and x > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {x}")
    return x


def vec(Z: np.ndarray) -> np.ndarray:
    """Row-major vectorisation of a matrix (quadnet theory §0): ``Z.reshape(-1)``."""
    return np.ascontiguousarray(Z).reshape(-1)


def unvec(v: np.ndarray, d: int, r: int) -> np.ndarray:
    """Inverse of :func:`vec` for a ``d x r`` matrix."""
    return np.asarray(v).reshape(d, r)


def as_rng(seed, name: str = "seed") -> np.random.Generator:
    """A :class:`numpy.random.Generator` from ``seed``.

    Accepted: ``None`` (fresh entropy), an int ``>= 0``, a sequence of ints ``>= 0`` (a
    ``SeedSequence`` entropy, e.g. ``[base, trial]`` for a sweep cell), a
    :class:`numpy.random.SeedSequence`, or a Generator. A Generator is returned as it is (so
    a caller's stream advances); an int or a sequence seeds a new PCG64 stream, so the same
    seed gives the same numbers bit for bit. Anything else (``"abc"``, ``-1``, ``1.5``,
    ``True``) is a ``TypeError``/``ValueError`` naming ``name``.

    Examples
    --------
    >>> bool(as_rng(3).integers(100) == as_rng(3).integers(100))
    True
    >>> as_rng(-1)
    Traceback (most recent call last):
        ...
    ValueError: seed must be an int >= 0, got -1
    """
    _record("as_rng", name)
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    want = "None, an int >= 0, a sequence of ints >= 0 or a numpy.random.Generator"
    if isinstance(seed, (list, tuple, np.ndarray)) and not isinstance(seed, (str, bytes)):
        items = list(np.asarray(seed, dtype=object).ravel())
        if not items or any(isinstance(v, bool) or not isinstance(v, numbers.Integral)
                            for v in items):
            raise TypeError(f"{name} must be {want}, got a sequence with non-integer entries")
        if any(v < 0 for v in items):
            raise ValueError(f"{name} must hold ints >= 0, got {seed!r}")
        return np.random.default_rng([int(v) for v in items])
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{name} must be {want}, got {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"{name} must be an int >= 0, got {seed}")
    return np.random.default_rng(int(seed))


def renamed_keyword(new_value, old_value, new: str, old: str, func: str, *,
                    default=None, stacklevel: int = 3):
    """Resolve a keyword renamed from ``old`` to ``new`` (the old one still accepted).

    Returns ``old_value`` with a :class:`DeprecationWarning` when only the old keyword was
    given, ``new_value`` otherwise (``default`` when neither was); both given is a
    ``TypeError``. ``None`` means "not given" for either.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     renamed_keyword(None, 0.1, "eta", "lr", "gd_path")
    0.1
    >>> w[0].category.__name__
    'DeprecationWarning'
    """
    import warnings

    if old_value is None:
        return default if new_value is None else new_value
    if new_value is not None:
        raise TypeError(f"{func}() got both {new}= and its former name {old}=; pass {new}= only")
    warnings.warn(f"{func}({old}=...) is deprecated; use {new}=", DeprecationWarning,
                  stacklevel=stacklevel)
    return old_value


# ============================================================================================
# The declarative constraint table (in the spirit of scikit-learn's ``_parameter_constraints``
# and ``validate_params``)
#
# A public callable states its arguments' constraints once, as a dict ``{name: Constraint}``
# handed to :func:`validate_params`. The same table drives
#
# * the checks at the public boundary (a wrapper generated once per callable, with the
#   callable's own signature, so the per-call overhead is one converter call per argument);
# * the ``Raises`` section of the docstring (generated from ``Constraint.describe``);
# * the generated bad-input tests (``Constraint.bad_values``, read from
#   ``func.__quadnet_constraints__``).
#
# Validation happens once: while a validated callable runs, nested validated callables skip
# their checks (a context variable, as scikit-learn's ``prefer_skip_nested_validation``), so a
# public function that calls another public function, or an ODE right-hand side that calls a
# public loss method, does not check again. :func:`count_validations` records every check.
# ============================================================================================


__all__ += [
    "Array",
    "Boolean",
    "Constraint",
    "Converted",
    "Factor",
    "Integer",
    "NonFiniteResultError",
    "Optional",
    "Options",
    "Real",
    "Relation",
    "Seed",
    "Symmetric",
    "TimeGrid",
    "count_validations",
    "validate_params",
    "declare_params",
    "Instance",
    "Bind",
    "IsCallable",
    "Directions",
    "Sequence",
    "SizeTooLargeError",
    "available_memory",
    "memory_guard",
    "nested",
    "to_rng",
    "as_solver",
    "CvxpySolver",
    "LinAlgFailure",
    "solver_failure",
    "SolverFailure",
]

#: True while a validated callable runs: nested validated callables skip their checks.
_NESTED = _contextvars.ContextVar("quadnet_nested_validation", default=False)
#: When not None, a list that records ``(callable, argument)`` for every argument checked.
_TRACE: list | None = None


def _record(func: str, name: str) -> None:
    if _TRACE is not None:
        _TRACE.append((func, name))


@_contextlib.contextmanager
def count_validations():
    """Record every argument check made inside the block: a list of ``(callable, argument)``.

    Both the table-driven checks of :func:`validate_params` and direct calls of the ``as_*``
    helpers are recorded, so a test can assert that one public call checks each argument once.

    Examples
    --------
    >>> with count_validations() as seen:
    ...     _ = as_positive(1.0, "eta")
    >>> seen
    [('as_positive', 'eta')]
    """
    global _TRACE
    previous, _TRACE = _TRACE, []
    try:
        yield _TRACE
    finally:
        _TRACE = previous


class Constraint:
    """One argument's constraint: converts a valid value, raises for an invalid one.

    Subclasses implement :meth:`convert` (``TypeError``/``ValueError`` naming the argument),
    :meth:`describe` (for the generated ``Raises`` section) and :meth:`bad_values` (for the
    generated bad-input tests). ``dims`` is shared by the arguments of one call: a constraint
    binds symbolic sizes there (``"d"``, ``"r"``, ``"n"``) and later ones must agree.
    """

    #: the exception types :meth:`convert` raises
    raises: tuple[type, ...] = (TypeError, ValueError)
    #: whether :func:`count_validations` records this argument
    record: bool = True

    def convert(self, value, name: str, dims: dict):  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def bad_values(self) -> list[tuple[str, object]]:
        """``(label, value)`` pairs this constraint must refuse (given valid other arguments)."""
        return []


def _fmt_bound(x) -> str:
    return "inf" if x is None else f"{x:g}"


class Real(Constraint):
    """A real scalar (not a bool, a string or complex) in an interval; returns a ``float``.

    ``closed`` is ``"both"``, ``"left"``, ``"right"`` or ``"neither"``; ``None`` bounds are
    infinite. NaN is always refused, ``±inf`` unless ``finite=False`` (and inside the interval).

    Examples
    --------
    >>> Real(0, None, closed="neither").convert(2, "eta", {})
    2.0
    >>> Real(0, 1, closed="neither").convert(0.0, "rtol", {})
    Traceback (most recent call last):
        ...
    ValueError: rtol must be a finite real number in (0, 1), got 0.0
    """

    def __init__(self, low=None, high=None, *, closed: str = "both", finite: bool = True):
        if closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"closed must be 'both', 'left', 'right' or 'neither', got {closed!r}")
        self.low, self.high, self.closed, self.finite = low, high, closed, finite

    def interval(self) -> str:
        lo = "[" if self.closed in ("both", "left") and self.low is not None else "("
        hi = "]" if self.closed in ("both", "right") and self.high is not None else ")"
        low = "-inf" if self.low is None else f"{self.low:g}"
        return f"{lo}{low}, {_fmt_bound(self.high)}{hi}"

    def _inside(self, x: float) -> bool:
        if self.low is not None and (x < self.low or (x == self.low and self.closed in (
                "right", "neither"))):
            return False
        if self.high is not None and (x > self.high or (x == self.high and self.closed in (
                "left", "neither"))):
            return False
        return True

    def want(self) -> str:
        """What is expected, in the wording of :func:`as_positive` for the half-lines."""
        fin = "finite and " if self.finite else ""
        if self.low == 0 and self.high is None:
            return fin + ("> 0" if self.closed in ("right", "neither") else ">= 0")
        return f"a {'finite ' if self.finite else ''}real number in {self.interval()}"

    def convert(self, value, name, dims):
        if type(value) is not float and (isinstance(value, (bool, np.bool_))
                                         or not isinstance(value, numbers.Real)):
            raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
        x = float(value)
        if x != x or (self.finite and not _math.isfinite(x)) or not self._inside(x):
            raise ValueError(f"{name} must be {self.want()}, got {x!r}")
        return x

    def describe(self) -> str:
        want = self.want()
        return want if want.startswith("a ") else "a real number, " + want

    def bad_values(self):
        out = [("string", "0.1"), ("None", None), ("complex", 1 + 1j), ("bool", True),
               ("nan", float("nan")), ("array", np.ones(2))]
        if self.finite:
            out += [("inf", float("inf")), ("-inf", -float("inf"))]
        if self.low is not None:
            out.append(("below", self.low - max(1.0, abs(self.low))))
            if self.closed in ("right", "neither"):
                out.append(("at lower bound", self.low))
        if self.high is not None:
            out.append(("above", self.high + max(1.0, abs(self.high))))
            if self.closed in ("left", "neither"):
                out.append(("at upper bound", self.high))
        return out


class Integer(Constraint):
    """An integer (not a bool or a float) in ``[low, high]``; returns an ``int``.

    Examples
    --------
    >>> Integer(0).convert(3, "steps", {})
    3
    >>> Integer(1).convert(1.5, "steps", {})
    Traceback (most recent call last):
        ...
    TypeError: steps must be an integer, got float
    """

    def __init__(self, low: int | None = None, high: int | None = None, *, dim: str | None = None):
        self.low, self.high, self.dim = low, high, dim

    def convert(self, value, name, dims):
        x = as_int(value, name, minimum=self.low, maximum=self.high)
        if self.dim is not None:
            _bind(dims, self.dim, x, name)
        return x

    def describe(self) -> str:
        if self.low is not None and self.high is not None:
            return f"an integer in [{self.low}, {self.high}]"
        if self.low is not None:
            return f"an integer >= {self.low}"
        if self.high is not None:
            return f"an integer <= {self.high}"
        return "an integer"

    def bad_values(self):
        out = [("float", 1.5), ("string", "3"), ("None", None), ("bool", True)]
        if self.low is not None:
            out.append(("below", self.low - 1))
        if self.high is not None:
            out.append(("above", self.high + 1))
        return out


class Boolean(Constraint):
    """``True`` or ``False`` (a Python or numpy bool); returns a ``bool``."""

    def convert(self, value, name, dims):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
        return bool(value)

    def describe(self) -> str:
        return "a bool"

    def bad_values(self):
        return [("string", "yes"), ("int", 2), ("None", None)]


class Options(Constraint):
    """One of a fixed set of values (usually strings); returns the value.

    Examples
    --------
    >>> Options("auto", "direct").convert("auto", "solver", {})
    'auto'
    >>> Options("auto", "direct").convert(None, "solver", {})
    Traceback (most recent call last):
        ...
    TypeError: solver must be one of 'auto', 'direct', got NoneType
    """

    def __init__(self, *choices):
        self.choices = tuple(choices)

    def _listing(self) -> str:
        return ", ".join(repr(c) for c in self.choices)

    def convert(self, value, name, dims):
        strings = all(isinstance(c, str) for c in self.choices)
        if strings and not isinstance(value, str):
            raise TypeError(f"{name} must be one of {self._listing()}, got "
                            f"{type(value).__name__}")
        try:
            ok = value in self.choices and not isinstance(value, (bool, np.bool_)) or any(
                value is c for c in self.choices)
        except Exception:  # unhashable or odd comparisons
            ok = False
        if not ok:
            raise ValueError(f"{name} must be one of {self._listing()}, got {value!r}")
        return value

    def describe(self) -> str:
        return f"one of {self._listing()}"

    def bad_values(self):
        out = [("unknown option", "__not_an_option__")]
        if all(isinstance(c, str) for c in self.choices):
            out.append(("int", 3))
            if None not in self.choices:
                out.append(("None", None))
        return out


class Optional(Constraint):
    """``None`` or a value meeting ``inner``.

    Examples
    --------
    >>> Optional(Integer(1)).convert(None, "memory_limit", {}) is None
    True
    """

    def __init__(self, inner: Constraint):
        self.inner = inner
        self.raises = inner.raises

    def convert(self, value, name, dims):
        return None if value is None else self.inner.convert(value, name, dims)

    def describe(self) -> str:
        return f"None or {self.inner.describe()}"

    def bad_values(self):
        return [(lbl, v) for lbl, v in self.inner.bad_values() if v is not None]


def _bind(dims: dict, key, size: int, name: str) -> None:
    """Bind the symbolic size ``key`` to ``size``, or check it against an earlier binding."""
    if not isinstance(key, str):
        if key != size:
            raise ValueError(f"{name} must have size {key} along this axis, got {size}")
        return
    have = dims.get(key)
    if have is None:
        dims[key] = size
        dims.setdefault("_from_" + key, name)
    elif have != size:
        other = dims.get("_from_" + key, "an earlier argument")
        raise ValueError(f"{name} has {key} = {size}, but {other} has {key} = {have} "
                         f"(mismatched shapes)")


def _shape_text(shape) -> str:
    return "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"


class Array(Constraint):
    """A real array as float64, checked for dimensions, (symbolic) shape and finiteness.

    ``shape`` entries are ints, ``None`` (free) or names (``"d"``) bound across the arguments of
    one call. ``nonnegative`` refuses negative entries.

    Examples
    --------
    >>> dims = {}
    >>> Array(shape=("n", "d")).convert([[1, 2]], "X", dims).shape, dims["d"]
    ((1, 2), 2)
    >>> Array(shape=("m", "d")).convert([[1, 2, 3]], "Z", dims)
    Traceback (most recent call last):
        ...
    ValueError: Z has d = 3, but X has d = 2 (mismatched shapes)
    """

    def __init__(self, *, ndim: int | None = None, shape: tuple | None = None,
                 finite: bool = True, allow_empty: bool = False, nonnegative: bool = False):
        if shape is not None:
            ndim = len(shape)
        self.ndim, self.shape, self.finite = ndim, shape, finite
        self.allow_empty, self.nonnegative = allow_empty, nonnegative

    def convert(self, value, name, dims):
        arr = as_array(value, name, ndim=self.ndim, finite=self.finite)
        if not self.allow_empty and arr.size == 0:
            raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
        if self.shape is not None:
            for key, size in zip(self.shape, arr.shape):
                if key is not None:
                    _bind(dims, key, size, name)
        if self.nonnegative and np.any(arr < 0):
            raise ValueError(f"{name} must have entries >= 0, got minimum {arr.min():g}")
        return arr

    def describe(self) -> str:
        parts = ["a "]
        if self.finite:
            parts.append("finite ")
        parts.append("real array")
        if self.shape is not None:
            parts.append(f" of shape {_shape_text(self.shape)}")
        elif self.ndim is not None:
            parts.append(f" with {self.ndim} dimension{'s' if self.ndim != 1 else ''}")
        if self.nonnegative:
            parts.append(", entries >= 0")
        return "".join(parts)

    def bad_values(self):
        out = [("string", "abc"), ("None", None), ("complex", np.ones((2, 2)) * 1j),
               ("object", np.array([object()], dtype=object))]
        if self.ndim is not None:
            out.append(("wrong ndim", np.ones((2,) * (self.ndim + 1))))
        return out


class Symmetric(Constraint):
    """A finite real symmetric ``n x n`` matrix (returns its exact symmetric part); with
    ``psd=True`` also positive semidefinite up to ``psd_rtol`` times its largest |eigenvalue|.

    Examples
    --------
    >>> Symmetric(psd=True).convert([[1.0, 2.0], [2.0, 1.0]], "M", {})
    Traceback (most recent call last):
        ...
    ValueError: M must be positive semidefinite: smallest eigenvalue -1 < -1e-12 x 3
    """

    def __init__(self, n=None, *, psd: bool = False, rtol: float = 1e-10,
                 psd_rtol: float = 1e-12):
        self.n, self.psd, self.rtol, self.psd_rtol = n, psd, rtol, psd_rtol

    def convert(self, value, name, dims):
        arr = as_square(value, name)
        if self.n is not None:
            _bind(dims, self.n, arr.shape[0], name)
        arr = as_symmetric(arr, name, rtol=self.rtol)
        if self.psd:
            w = np.linalg.eigvalsh(arr)
            scale = float(np.max(np.abs(w))) if w.size else 0.0
            if w.size and w[0] < -self.psd_rtol * scale:
                raise ValueError(f"{name} must be positive semidefinite: smallest eigenvalue "
                                 f"{w[0]:.3g} < -{self.psd_rtol:g} x {scale:.3g}")
        return arr

    def describe(self) -> str:
        what = "symmetric positive semidefinite" if self.psd else "symmetric"
        size = f" {self.n} x {self.n}" if self.n is not None else ""
        return f"a finite real {what}{size} matrix"

    def bad_values(self):
        out = [("string", "abc"), ("None", None), ("non-square", np.ones((2, 3))),
               ("non-symmetric", np.array([[1.0, 2.0], [0.0, 1.0]])),
               ("nan", np.full((2, 2), np.nan))]
        if self.psd:
            out.append(("indefinite", np.array([[1.0, 0.0], [0.0, -1.0]])))
        return out


class Factor(Constraint):
    """A finite ``d x r`` factor with ``1 <= r <= d`` (:func:`as_factor`), of full column rank
    if ``full_rank``; binds the sizes ``d`` and ``r`` (names given by ``d=``/``r=``)."""

    def __init__(self, *, d="d", r="r", full_rank: bool = True, rtol: float = RANK_RTOL):
        self.d, self.r, self.full_rank, self.rtol = d, r, full_rank, rtol

    def convert(self, value, name, dims):
        dd = dims.get(self.d) if isinstance(self.d, str) else self.d
        rr = dims.get(self.r) if isinstance(self.r, str) else self.r
        arr = as_factor(value, name, d=dd, r=rr, full_rank=self.full_rank, rtol=self.rtol)
        if self.d is not None:
            _bind(dims, self.d, arr.shape[0], name)
        if self.r is not None:
            _bind(dims, self.r, arr.shape[1], name)
        return arr

    def describe(self) -> str:
        rank = ", of full column rank" if self.full_rank else ""
        return f"a finite real {self.d} x {self.r} factor with {self.r} <= {self.d}{rank}"

    def bad_values(self):
        out = [("string", "abc"), ("None", None), ("nan", np.full((3, 2), np.nan)),
               ("1-d", np.ones(3)), ("r > d", np.ones((2, 3))), ("r = 0", np.ones((3, 0)))]
        if self.full_rank:
            out.append(("rank deficient", np.ones((3, 2))))
        return out


class TimeGrid(Constraint):
    """A finite, strictly increasing 1-d array of times ``>= 0`` with at least ``min_points``
    entries (the output grid of a flow).

    Examples
    --------
    >>> TimeGrid().convert([0.0, 1.0], "times", {})
    array([0., 1.])
    >>> TimeGrid().convert([1.0, 0.5], "times", {})
    Traceback (most recent call last):
        ...
    ValueError: times must be strictly increasing, got a step of -0.5 at index 0
    """

    def __init__(self, *, min_points: int = 2, nonnegative: bool = True):
        self.min_points, self.nonnegative = min_points, nonnegative

    def convert(self, value, name, dims):
        t = as_array(value, name, ndim=1)
        if t.size < self.min_points:
            raise ValueError(f"{name} must have at least {self.min_points} entries, got {t.size}")
        if self.nonnegative and t.size and t[0] < 0:
            raise ValueError(f"{name} must be >= 0, got {t[0]!r} at index 0")
        steps = np.diff(t)
        if steps.size and not np.all(steps > 0):
            i = int(np.argmax(~(steps > 0)))
            raise ValueError(f"{name} must be strictly increasing, got a step of {steps[i]:g} "
                             f"at index {i}")
        return t

    def describe(self) -> str:
        sign = " >= 0" if self.nonnegative else ""
        return (f"a finite strictly increasing 1-d array of times{sign} with at least "
                f"{self.min_points} entries")

    def bad_values(self):
        out = [("string", "abc"), ("None", None), ("decreasing", np.array([1.0, 0.5])),
               ("repeated", np.array([0.0, 0.0, 1.0])), ("nan", np.array([0.0, np.nan])),
               ("2-d", np.ones((2, 2)))]
        if self.nonnegative:
            out.append(("negative", np.array([-1.0, 0.0, 1.0])))
        return out


class Seed(Constraint):
    """A seed for :func:`as_rng`: ``None``, an int ``>= 0``, a sequence of such ints, a
    ``SeedSequence`` or a ``numpy.random.Generator``; returns a Generator.

    With ``raw=True`` the seed is checked but returned as given, for a callable that hands the
    same seed on to several others (each then starts the same stream); the body turns it into a
    Generator with :func:`to_rng` (no second check).
    """

    def __init__(self, *, raw: bool = False):
        self.raw = raw

    def convert(self, value, name, dims):
        gen = as_rng(value, name)
        return value if self.raw else gen

    def describe(self) -> str:
        return "None, an int >= 0, a sequence of ints >= 0 or a numpy.random.Generator"

    def bad_values(self):
        return [("string", "abc"), ("negative", -1), ("float", 1.5), ("bool", True)]


class Converted(Constraint):
    """Any other constraint, given as a converter ``fn(value, name) -> value``.

    ``description`` goes into the ``Raises`` section; ``bad`` lists values ``fn`` refuses.
    ``dims`` maps symbolic sizes to attribute names of the converted value (``{"d": "d"}``
    binds ``dims["d"] = value.d``).
    """

    def __init__(self, fn, description: str, *, bad=(), dims: dict | None = None,
                 raises: tuple[type, ...] = (TypeError, ValueError)):
        self.fn, self.description, self.bad, self.dims_of = fn, description, list(bad), dims
        self.raises = raises

    def convert(self, value, name, dims):
        out = self.fn(value, name)
        if self.dims_of:
            for key, attr in self.dims_of.items():
                size = getattr(out, attr, None)
                if isinstance(size, numbers.Integral):
                    _bind(dims, key, int(size), name)
        return out

    def describe(self) -> str:
        return self.description

    def bad_values(self):
        return list(self.bad)


class Instance(Constraint):
    """An instance of ``cls`` (or of one of a tuple of classes); returned unchanged.

    ``dims`` maps symbolic sizes to attributes of the instance (``{"d": "d"}``).

    Examples
    --------
    >>> Instance(int, "an int").convert("x", "n", {})
    Traceback (most recent call last):
        ...
    TypeError: n must be an int, got str
    """

    def __init__(self, cls, description: str, *, dims: dict | None = None):
        self.cls, self.description, self.dims_of = cls, description, dims

    def convert(self, value, name, dims):
        if not isinstance(value, self.cls):
            raise TypeError(f"{name} must be {self.description}, got {type(value).__name__}")
        if self.dims_of:
            for key, attr in self.dims_of.items():
                size = getattr(value, attr, None)
                if isinstance(size, numbers.Integral):
                    _bind(dims, key, int(size), name)
        return value

    def describe(self) -> str:
        return self.description

    def bad_values(self):
        return [("string", "abc"), ("int", 3)]


class Bind(Constraint):
    """Binds symbolic sizes from attributes of the argument (``self`` of a method: ``{"d": "d",
    "r": "r"}``); no check, not counted as a validation."""

    record = False

    def __init__(self, **attrs):
        self.attrs = attrs

    def convert(self, value, name, dims):
        for key, attr in self.attrs.items():
            size = getattr(value, attr, None)
            if isinstance(size, numbers.Integral):
                _bind(dims, key, int(size), "the " + type(value).__name__)
        return value

    def describe(self) -> str:
        return ""


class IsCallable(Constraint):
    """A callable; returned unchanged."""

    def __init__(self, what: str = "a callable"):
        self.what = what

    def convert(self, value, name, dims):
        if not callable(value):
            raise TypeError(f"{name} must be {self.what}, got {type(value).__name__}")
        return value

    def describe(self) -> str:
        return self.what

    def bad_values(self):
        return [("string", "abc"), ("int", 3)]


class Directions(Constraint):
    """One ``shape`` direction or a stack ``(b, *shape)`` (``b >= 1``) as a float64 stack
    (:func:`as_directions`); returns ``(stack, single)``."""

    def __init__(self, shape=("d", "r")):
        self.shape = tuple(shape)

    def convert(self, value, name, dims):
        shape = tuple(dims.get(s) if isinstance(s, str) else s for s in self.shape)
        if any(s is None for s in shape):
            arr = as_array(value, name)
            if arr.ndim == 2:
                shape = arr.shape
            elif arr.ndim == 3:
                shape = arr.shape[1:]
            else:
                raise ValueError(f"{name} must have shape {_shape_text(self.shape)} or (b, "
                                 f"{', '.join(map(str, self.shape))}), got {arr.shape}")
        return as_directions(value, name, shape)

    def describe(self) -> str:
        inner = ", ".join(map(str, self.shape))
        return f"a finite real array of shape ({inner}) or a stack (b, {inner}), b >= 1"

    def bad_values(self):
        return [("string", "abc"), ("None", None), ("1-d", np.ones(3)),
                ("4-d", np.ones((1, 1, 2, 2))), ("nan", np.full((1, 2, 2), np.nan))]


class Sequence(Constraint):
    """A non-empty sequence whose items each meet ``item`` (``name[i]`` in messages); returns a
    tuple."""

    def __init__(self, item: Constraint, *, min_len: int = 1):
        self.item, self.min_len = item, min_len

    def convert(self, value, name, dims):
        if isinstance(value, (str, bytes)) or value is None or not hasattr(value, "__iter__"):
            raise TypeError(f"{name} must be a sequence, got {type(value).__name__}")
        items = list(value)
        if len(items) < self.min_len:
            raise ValueError(f"{name} must have at least {self.min_len} entries, got {len(items)}")
        return tuple(self.item.convert(v, f"{name}[{i}]", dims) for i, v in enumerate(items))

    def describe(self) -> str:
        return f"a sequence of at least {self.min_len} entries, each {self.item.describe()}"

    def bad_values(self):
        return [("string", "abc"), ("None", None), ("empty", ())]


def as_solver(value, name: str = "solver", *, allow_none: bool = False):
    """A cvxpy solver name among the installed ones (``cvxpy.installed_solvers()``), upper-cased;
    ``None`` (cvxpy's choice) when ``allow_none``. Refused before cvxpy is called, so an unknown
    name is a ``ValueError`` naming ``name`` rather than cvxpy's ``SolverError``."""
    _record("as_solver", name)
    if value is None and allow_none:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a cvxpy solver name (a str), got {type(value).__name__}")
    try:
        import cvxpy

        installed = list(cvxpy.installed_solvers())
    except ImportError:  # pragma: no cover - cvxpy missing: the caller raises ImportError
        return value.upper()
    if value.upper() not in installed:
        raise ValueError(f"{name} must be one of the installed cvxpy solvers {installed}, got "
                         f"{value!r}")
    return value.upper()


class CvxpySolver(Options):
    """A cvxpy solver name: :class:`Options` over ``cvxpy.installed_solvers()``, read when first
    checked (cvxpy takes seconds to import); case-insensitive, returned upper-cased. ``None``
    (cvxpy's own choice) is accepted with ``allow_none=True``.

    Examples
    --------
    >>> CvxpySolver().describe()
    'one of the installed cvxpy solvers (cvxpy.installed_solvers())'
    """

    def __init__(self, *, allow_none: bool = False):
        self.allow_none = allow_none

    @property
    def choices(self) -> tuple:
        try:
            import cvxpy
        except ImportError:  # pragma: no cover - the callable raises ImportError itself
            return ()
        return tuple(cvxpy.installed_solvers())

    def convert(self, value, name, dims):
        return as_solver(value, name, allow_none=self.allow_none)

    def describe(self) -> str:
        none = "None (cvxpy's choice) or " if self.allow_none else ""
        return f"{none}one of the installed cvxpy solvers (cvxpy.installed_solvers())"

    def bad_values(self):
        out = [("unknown solver", "__NOT_A_SOLVER__"), ("int", 3)]
        if not self.allow_none:
            out.append(("None", None))
        return out


def solver_failure(solver, exc: BaseException, what: str) -> SolverFailure:
    """A :class:`SolverFailure` naming ``solver`` for a third-party solver failure (cvxpy's
    ``SolverError``), to be raised ``from exc``."""
    return SolverFailure(f"solver = {solver!r} failed on {what}: {type(exc).__name__}: {exc}; "
                      f"try another installed cvxpy solver")


def to_rng(seed) -> np.random.Generator:
    """A Generator from a seed already checked by a ``Seed(raw=True)`` constraint (no record)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    if isinstance(seed, (list, tuple, np.ndarray)):
        return np.random.default_rng([int(v) for v in np.asarray(seed, dtype=object).ravel()])
    return np.random.default_rng(int(seed))


def nested() -> bool:
    """True while a validated callable runs (its nested validated calls skip their checks).

    Hand-written fast checks (e.g. the factor checks of :class:`quadnet.Loss`) skip too.
    """
    return _NESTED.get()


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



def memory_guard(names: tuple[str, ...], estimate, what: str) -> "Relation":
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


class Relation:
    """A condition on several (converted) arguments: ``check(args) -> None`` or an error
    message, raised as ``ValueError`` (``TypeError`` with ``error=TypeError``).

    Examples
    --------
    >>> rel = Relation(("lo", "hi"), lambda a: None if a["lo"] < a["hi"] else
    ...                "lo must be < hi", "lo < hi")
    >>> rel.describe()
    'lo < hi'
    """

    def __init__(self, names: tuple[str, ...], check, description: str, *,
                 error: type = ValueError):
        self.names, self.check, self.description, self.error = tuple(names), check, description, error

    def __call__(self, args: dict) -> None:
        msg = self.check(args)
        if msg:
            raise self.error(msg)

    def describe(self) -> str:
        return self.description


# ------------------------------------------------------------------------------ the decorator

def _extreme_arguments(args: dict) -> list[str]:
    """The arguments whose magnitude could make a finite computation overflow."""
    out = []
    for name, v in args.items():
        try:
            if isinstance(v, (bool, np.bool_)):
                continue
            if isinstance(v, numbers.Real):
                x = abs(float(v))
                if x >= 1e100 or 0 < x <= 1e-100:
                    out.append(f"{name}={float(v):g}")
            elif isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.size:
                x = float(np.max(np.abs(v)))
                if x >= 1e100:
                    out.append(f"{name} (max |entry| {x:.3g})")
        except Exception:  # pragma: no cover - exotic objects
            continue
    return out


def _nonfinite(res, depth: int = 0) -> bool:
    """Does a result hold a non-finite float (in an array, a float, or a tuple/dataclass)?"""
    if isinstance(res, np.ndarray):
        return res.dtype.kind in "fc" and not np.all(np.isfinite(res))
    if isinstance(res, (float, np.floating, complex, np.complexfloating)):
        return not np.isfinite(res)
    if depth >= 1:
        return False
    if isinstance(res, tuple):
        return any(_nonfinite(v, depth + 1) for v in res)
    fields = getattr(res, "__dataclass_fields__", None)
    if fields:
        return any(_nonfinite(getattr(res, f, None), depth + 1) for f in fields)
    return False


def _linalg_failure(qualname: str, exc: BaseException, args: dict) -> LinAlgFailure:
    extreme = _extreme_arguments(args)
    arrays = [n for n, v in args.items() if isinstance(v, np.ndarray)]
    blame = (", ".join(extreme) if extreme else ", ".join(arrays)) or "the arguments"
    return LinAlgFailure(f"{qualname}: LAPACK failed ({exc}) on {blame}; the matrices are too "
                         f"extreme or ill-conditioned for this computation")


def _overflow_error(what: str, args: dict, hint: str) -> NonFiniteResultError:
    """The error for a non-finite ``what`` computed from finite ``args``: names the extreme
    arguments (all of ``args`` if none is extreme) and ends with ``hint``."""
    blame = ", ".join(_extreme_arguments(args)) or ", ".join(args)
    return NonFiniteResultError(f"{what} is not finite (float64 overflow) for {blame}; {hint}")


def _check_result(qualname: str, res, args: dict):
    if _nonfinite(res):
        extreme = _extreme_arguments(args)
        blame = ("; the extreme arguments: " + ", ".join(extreme)) if extreme else (
            "; the arguments are finite but the computation overflowed")
        raise NonFiniteResultError(f"{qualname} produced a non-finite result (overflow or an "
                                   f"undefined operation){blame}")
    return res


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


def _with_raises(doc: str | None, constraints: dict, relations) -> str | None:
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
        # drop an existing generic "TypeError, ValueError" / "ValueError" / "TypeError" entry
        kept, skipping = [], False
        for ln in body.split("\n"):
            stripped = ln.strip()
            is_head = ln.startswith(indent) and stripped and not ln[len(indent):].startswith(" ")
            if is_head:
                skipping = stripped.rstrip(":") in ("TypeError, ValueError", "ValueError, TypeError",
                                                    "TypeError", "ValueError")
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


def validate_params(constraints: dict, *, relations=(), finite_result: bool = True):
    """Decorate a public callable with its declarative constraint table.

    Parameters
    ----------
    constraints : dict
        ``{argument name: Constraint}``, in the order the arguments are checked (symbolic sizes
        bind in that order). Arguments not listed are passed through unchecked.
    relations : sequence of Relation
        Conditions between converted arguments, checked after every argument.
    finite_result : bool, default True
        Refuse a non-finite result (an overflow from finite but extreme arguments) with a
        :class:`NonFiniteResultError` naming the extreme arguments; numpy's floating-point
        warnings are silenced inside the call, since the result is checked instead.

    Returns
    -------
    callable
        A wrapper with the same signature that converts each argument once, then calls the
        function with the converted values, with nested validation switched off. The table is
        ``wrapper.__quadnet_constraints__`` and the docstring's ``Raises`` section lists it.

    Examples
    --------
    >>> @validate_params({"eta": Real(0, None, closed="neither"), "steps": Integer(0)})
    ... def run(eta, steps=1):
    ...     return eta * steps
    >>> run(0.5, steps=4)
    2.0
    >>> run(-1.0)
    Traceback (most recent call last):
        ...
    ValueError: eta must be finite and > 0, got -1.0
    >>> run.__quadnet_constraints__["steps"].describe()
    'an integer >= 0'
    """
    constraints = dict(constraints)
    relations = tuple(relations)

    def deco(fn):
        sig = _inspect.signature(fn)
        params = sig.parameters
        unknown = [n for n in constraints if n not in params]
        if unknown:
            raise TypeError(f"validate_params({fn.__qualname__}): no parameter named "
                            f"{', '.join(unknown)}")
        qualname = fn.__qualname__
        simple = not any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params.values())
        order = [n for n in params if n in constraints]
        recorded = [n for n in order if constraints[n].record]

        def _validate(values: dict) -> dict:
            global _TRACE
            trace = _TRACE
            if trace is not None:
                _TRACE = None  # the helpers a converter calls are not counted again
            try:
                dims: dict = {}
                name = None
                try:
                    for name in order:
                        values[name] = constraints[name].convert(values[name], name, dims)
                    if relations:
                        for rel in relations:
                            name = ", ".join(rel.names)
                            rel(values)
                except np.linalg.LinAlgError as exc:
                    raise LinAlgFailure(f"{name}: checking it failed in LAPACK ({exc}); its "
                                        f"entries are extreme or not finite-conditioned") from exc
            finally:
                if trace is not None:
                    _TRACE = trace
                    trace.extend((qualname, name) for name in recorded)
            return values

        def _run(call, args):
            tok = _NESTED.set(True)
            try:
                if finite_result:
                    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                        return call()
                return call()
            except np.linalg.LinAlgError as exc:
                if isinstance(exc, LinAlgFailure):
                    raise
                raise _linalg_failure(qualname, exc, args) from exc
            finally:
                _NESTED.reset(tok)

        if simple:
            # generated wrapper with the callable's own signature: no inspect.bind per call
            ns = {"_fn": fn, "_NESTED": _NESTED, "_validate": _validate, "_run": _run,
                  "_check_result": _check_result, "_qualname": qualname}
            head, call, names = [], [], []
            star_done = False
            for p in params.values():
                if p.kind == p.KEYWORD_ONLY and not star_done:
                    head.append("*")
                    star_done = True
                if p.default is p.empty:
                    head.append(p.name)
                else:
                    ns[f"_d_{p.name}"] = p.default
                    head.append(f"{p.name}=_d_{p.name}")
                if p.kind == p.POSITIONAL_ONLY:
                    pass
                call.append(p.name if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                            else f"{p.name}={p.name}")
                names.append(p.name)
            posonly = [p.name for p in params.values() if p.kind == p.POSITIONAL_ONLY]
            if posonly:
                head.insert(len(posonly), "/")
            checked = ", ".join(f"{n!r}: {n}" for n in order)
            unpack = "".join(f"    {n} = _v[{n!r}]\n" for n in order)
            allargs = ", ".join(f"{n!r}: {n}" for n in names)
            src = (f"def wrapper({', '.join(head)}):\n"
                   f"    if _NESTED.get():\n"
                   f"        return _fn({', '.join(call)})\n"
                   f"    _v = _validate({{{checked}}})\n"
                   f"{unpack}"
                   f"    _res = _run(lambda: _fn({', '.join(call)}), _v)\n")
            if finite_result:
                src += f"    return _check_result(_qualname, _res, {{{allargs}}})\n"
            else:
                src += "    return _res\n"
            exec(src, ns)  # noqa: S102 - generated from the signature above, no user input
            wrapper = _functools.wraps(fn)(ns["wrapper"])
        else:
            @_functools.wraps(fn)
            def wrapper(*args, **kwargs):
                if _NESTED.get():
                    return fn(*args, **kwargs)
                bound = sig.bind(*args, **kwargs)
                bound.apply_defaults()
                values = _validate(dict(bound.arguments))
                bound.arguments.update({n: values[n] for n in order})
                res = _run(lambda: fn(*bound.args, **bound.kwargs), values)
                return _check_result(qualname, res, dict(bound.arguments)) if finite_result \
                    else res

        wrapper.__signature__ = sig
        wrapper.__quadnet_constraints__ = constraints
        wrapper.__quadnet_relations__ = relations
        wrapper.__doc__ = _with_raises(fn.__doc__, {n: constraints[n] for n in recorded},
                                       relations)
        wrapper.__wrapped__ = fn
        return wrapper

    return deco


def declare_params(constraints: dict, *, relations=()):
    """Attach a constraint table to a callable that keeps its own hand-written checks.

    For the hottest tiny methods (e.g. ``PSDQuotient.retraction`` at a few microseconds), where
    the generated wrapper of :func:`validate_params` would cost more than the work: the table
    still drives the ``Raises`` section and the generated bad-input tests, and the test suite
    checks that the inline checks refuse every value the table's constraints refuse.

    Examples
    --------
    >>> @declare_params({"x": Real(0)})
    ... def f(x):
    ...     return as_positive(x, "x", allow_zero=True)
    >>> f.__quadnet_constraints__["x"].describe()
    'a real number, finite and >= 0'
    """
    constraints = dict(constraints)
    relations = tuple(relations)

    def deco(fn):
        params = _inspect.signature(fn).parameters
        unknown = [n for n in constraints if n not in params]
        if unknown:
            raise TypeError(f"declare_params({fn.__qualname__}): no parameter named "
                            f"{', '.join(unknown)}")
        fn.__quadnet_constraints__ = constraints
        fn.__quadnet_relations__ = relations
        fn.__quadnet_inline__ = True
        fn.__doc__ = _with_raises(fn.__doc__, {n: c for n, c in constraints.items() if c.record},
                                  relations)
        return fn

    return deco


__all__ += ["record_array"]


def record_array(x, name: str, ndim: int) -> np.ndarray:
    """A stored field of a trajectory as a finite float64 array with ``ndim`` dimensions.

    Examples
    --------
    >>> record_array([0, 1.5], "t", 1).tolist()
    [0.0, 1.5]
    >>> record_array([[1.0]], "t", 1)
    Traceback (most recent call last):
        ...
    ValueError: t must be 1-dimensional, got shape (1, 1)
    """
    if isinstance(x, (str, bytes)) or x is None or isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be an array of real numbers, got {type(x).__name__}")
    arr = np.asarray(x)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool) \
            or np.iscomplexobj(arr):
        raise TypeError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=False)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = int(arr.size - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{name} has {bad} non-finite entries (NaN or inf)")
    return arr
