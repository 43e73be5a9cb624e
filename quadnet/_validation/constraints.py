"""The constraint classes of the declarative tables (in the spirit of scikit-learn's
``_parameter_constraints``).

A :class:`Constraint` describes what one argument must be: :meth:`~Constraint.convert` checks a
value and returns it converted (through the coercions of :mod:`quadnet._validation.coercion`),
:meth:`~Constraint.describe` says it in words (the generated ``Raises`` sections of
:mod:`quadnet._validation.docgen`) and :meth:`~Constraint.bad_values` lists values it refuses
(the generated bad-input tests). A :class:`Relation` is a condition between several converted
arguments. Neither runs by itself: :func:`quadnet._validation.validate_params` applies a table.
"""

from __future__ import annotations

import math as _math
import numbers

import numpy as np

from quadnet._validation.coercion import (
    RANK_RTOL,
    as_array,
    as_directions,
    as_factor,
    as_int,
    as_rng,
    as_solver,
    as_square,
    as_symmetric,
    installed_solvers,
)

__all__ = [
    "Array",
    "Bind",
    "Boolean",
    "Constraint",
    "Converted",
    "CvxpySolver",
    "Directions",
    "Factor",
    "Instance",
    "Integer",
    "IsCallable",
    "Optional",
    "Options",
    "R_LE_D",
    "Real",
    "Relation",
    "rank_at_most_dimension",
    "Seed",
    "Sequence",
    "Symmetric",
    "TimeGrid",
]


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
        self._strings = all(isinstance(c, str) for c in self.choices)

    def _listing(self) -> str:
        return ", ".join(repr(c) for c in self.choices)

    def convert(self, value, name, dims):
        if type(value) is str and value in self.choices:  # the common case
            return value
        if self._strings and not isinstance(value, str):
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


def _bind_attributes(dims: dict, attrs: dict | None, obj, name: str) -> None:
    """``_bind(dims, key, obj.<attr>)`` for each ``key: attr`` of ``attrs`` whose attribute is an
    integer (the sizes an object carries: ``{"d": "d"}``)."""
    for key, attr in (attrs or {}).items():
        size = getattr(obj, attr, None)
        if isinstance(size, numbers.Integral):
            _bind(dims, key, int(size), name)


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
                 finite: bool = True, allow_empty: bool = False, nonnegative: bool = False,
                 allow_complex: bool = False):
        if shape is not None:
            ndim = len(shape)
        self.ndim, self.shape, self.finite = ndim, shape, finite
        self.allow_empty, self.nonnegative = allow_empty, nonnegative
        self.allow_complex = allow_complex

    def convert(self, value, name, dims):
        arr = as_array(value, name, ndim=self.ndim, finite=self.finite,
                       allow_complex=self.allow_complex)
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
        parts.append("real or complex array" if self.allow_complex else "real array")
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
        if self.allow_complex:
            out.pop(2)
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
                 psd_rtol: float = 1e-12, allow_complex: bool = False):
        self.n, self.psd, self.rtol, self.psd_rtol = n, psd, rtol, psd_rtol
        self.allow_complex = allow_complex   # a complex matrix must then be Hermitian

    def convert(self, value, name, dims):
        arr = as_square(value, name, allow_complex=self.allow_complex)
        if self.n is not None:
            _bind(dims, self.n, arr.shape[0], name)
        arr = as_symmetric(arr, name, rtol=self.rtol, allow_complex=self.allow_complex)
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
        if self.allow_complex:
            return f"a finite real {what} or complex Hermitian{what[9:]}{size} matrix"
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

    def __init__(self, *, d="d", r="r", full_rank: bool = True, rtol: float = RANK_RTOL,
                 allow_complex: bool = False):
        self.d, self.r, self.full_rank, self.rtol = d, r, full_rank, rtol
        self.allow_complex = allow_complex

    def convert(self, value, name, dims):
        dd = dims.get(self.d) if isinstance(self.d, str) else self.d
        rr = dims.get(self.r) if isinstance(self.r, str) else self.r
        arr = as_factor(value, name, d=dd, r=rr, full_rank=self.full_rank, rtol=self.rtol,
                        allow_complex=self.allow_complex)
        if self.d is not None:
            _bind(dims, self.d, arr.shape[0], name)
        if self.r is not None:
            _bind(dims, self.r, arr.shape[1], name)
        return arr

    def describe(self) -> str:
        rank = ", of full column rank" if self.full_rank else ""
        field = "real or complex" if self.allow_complex else "real"
        return f"a finite {field} {self.d} x {self.r} factor with {self.r} <= {self.d}{rank}"

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
    Generator with :func:`~quadnet._validation.coercion.to_rng` (no second record).
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
        _bind_attributes(dims, self.dims_of, out, name)
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
        _bind_attributes(dims, self.dims_of, value, name)
        return value

    def describe(self) -> str:
        return self.description

    def bad_values(self):
        return [(label, v) for label, v in (("string", "abc"), ("int", 3))
                if not isinstance(v, self.cls)]


class Bind(Constraint):
    """Binds symbolic sizes from attributes of the argument (``self`` of a method: ``{"d": "d",
    "r": "r"}``); no check, not counted as a validation."""

    record = False

    def __init__(self, **attrs):
        self.attrs = attrs

    def convert(self, value, name, dims):
        _bind_attributes(dims, self.attrs, value, "the " + type(value).__name__)
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


class CvxpySolver(Constraint):
    """A cvxpy solver name among :func:`~quadnet._validation.coercion.installed_solvers` (read
    when first checked: cvxpy takes seconds to import), case-insensitive, returned upper-cased
    (:func:`~quadnet._validation.coercion.as_solver`). ``None`` (cvxpy's own choice) is
    accepted with ``allow_none=True``.

    Examples
    --------
    >>> CvxpySolver().describe()
    'one of the installed cvxpy solvers (cvxpy.installed_solvers())'
    """

    def __init__(self, *, allow_none: bool = False):
        self.allow_none = allow_none

    @property
    def choices(self) -> tuple:
        """The accepted names (empty without cvxpy)."""
        return installed_solvers() or ()

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


def rank_at_most_dimension(args: dict) -> str | None:
    """The check of :data:`R_LE_D`: ``None`` when ``r <= d``, else the message. ``d`` is an
    argument or, for a method of an object of dimension ``d``, the ``d`` of ``self``.

    Examples
    --------
    >>> rank_at_most_dimension({"r": 4, "d": 3})
    'r must satisfy 1 <= r <= d, got r = 4 > d = 3'
    >>> rank_at_most_dimension({"r": 3, "d": 3}) is None
    True
    """
    r = args["r"]
    d = args["d"] if "d" in args else args["self"].d
    return None if r <= d else f"r must satisfy 1 <= r <= d, got r = {r} > d = {d}"


#: The relation ``r <= d`` of a rank and a dimension: one check and one message for every
#: callable that takes both (a callable with ``d`` from ``self`` builds its own ``Relation``
#: on :func:`rank_at_most_dimension`).
R_LE_D = Relation(("r", "d"), rank_at_most_dimension, "``r <= d``")
