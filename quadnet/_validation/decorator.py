"""The decorators that apply a constraint table, and the checks of a validated call's result.

:func:`validate_params` checks a public callable's arguments once, at its boundary, then runs
it with the nested flag set (:func:`nested`: the validated callables and the hand-written fast
checks it reaches skip their checks, as scikit-learn skips nested parameter validation), and
checks its result: a non-finite result from finite arguments is a
:class:`~quadnet.exceptions.NonFiniteResultError` naming the extreme arguments, a LAPACK
failure a :class:`~quadnet.exceptions.LinAlgFailure`. :func:`declare_params` attaches a table
to a callable that keeps its own inline checks, and :func:`finite_result` is the result check
of such methods (the :class:`quadnet.Loss` methods). :func:`fit_context` checks an estimator's
parameter table in ``fit`` (scikit-learn's ``_fit_context``). :func:`count_validations`
records every check made.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import numbers
import re
import sys
import warnings

import numpy as np

from quadnet._validation import _context
from quadnet._validation.docgen import with_raises
from quadnet.exceptions import LinAlgFailure, NonFiniteResultError, SolverFailure

__all__ = [
    "count_validations",
    "declare_params",
    "finite_result",
    "fit_context",
    "name_callable",
    "name_method",
    "named_call",
    "nested",
    "solve_cvxpy",
    "solver_failure",
    "validate_estimator",
    "validate_params",
]


@contextlib.contextmanager
def count_validations():
    """Record every argument check made inside the block: a list of ``(callable, argument)``.

    Both the table-driven checks of :func:`validate_params` and direct calls of the ``as_*``
    helpers are recorded, so a test can assert that one public call checks each argument once.

    Examples
    --------
    >>> from quadnet._validation import as_positive
    >>> with count_validations() as seen:
    ...     _ = as_positive(1.0, "eta")
    >>> seen
    [('as_positive', 'eta')]
    """
    previous, _context.TRACE = _context.TRACE, []
    try:
        yield _context.TRACE
    finally:
        _context.TRACE = previous


def nested() -> bool:
    """True while a validated callable runs (its nested validated calls skip their checks).

    Hand-written fast checks (e.g. the factor checks of :class:`quadnet.Loss`) skip too.

    Examples
    --------
    >>> nested()
    False
    """
    return _context.NESTED.get()


def solver_failure(solver, exc: BaseException, what: str) -> SolverFailure:
    """A :class:`~quadnet.exceptions.SolverFailure` naming ``solver`` for a third-party solver
    failure (cvxpy's ``SolverError``), to be raised ``from exc``."""
    return SolverFailure(f"solver = {solver!r} failed on {what}: {type(exc).__name__}: {exc}; "
                         f"try another installed cvxpy solver")


def solve_cvxpy(prob, solver, what: str, caller: str, **opts) -> None:
    """Solve the cvxpy problem ``prob`` with ``solver`` (``opts`` go to ``prob.solve``), with
    the failures translated at the boundary: cvxpy's ``SolverError`` becomes a
    :class:`~quadnet.exceptions.SolverFailure` naming ``solver`` and ``what`` (the problem), a
    status other than ``"optimal"``/``"optimal_inaccurate"`` (or no value) a ``ValueError``
    starting with ``caller``. cvxpy's "solution may be inaccurate" warnings are silenced: the
    status reports it."""
    import cvxpy as cp

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            prob.solve(solver=solver, **opts)
        except cp.error.SolverError as exc:
            raise solver_failure(solver, exc, what) from exc
    if prob.status not in ("optimal", "optimal_inaccurate") or any(
            v.value is None for v in prob.variables()):
        raise ValueError(f"{caller}: solver = {solver!r} returned status {prob.status!r}")


# ------------------------------------------------------------------------- the result checks

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


#: A method name as a mutation-testing tool rewrites it (``xǁClassǁmethod__mutmut_orig``):
#: the name the message must give is ``method``.
_REWRITTEN = re.compile(r"^.*ǁ|__mutmut_\w+$")


#: The prefix of a message that may name a callable (``"f: ..."``, ``"Class.method: ..."``,
#: ``"f(): ..."``); it does when it is dotted, called, or the name of a validated callable
#: (:data:`_VALIDATED`), e.g. the refusal of a nested validated call; ``"errs: ..."`` names an
#: argument and is prefixed.
_NAMED = re.compile(r"^([A-Za-z_][\w.]*)(\(\))?: ")
#: The names (:func:`callable_name`) of the callables wrapped by :func:`validate_params`.
_VALIDATED: set[str] = set()


def _names_a_callable(exc: BaseException) -> bool:
    m = _NAMED.match(exc.args[0]) if exc.args and isinstance(exc.args[0], str) else None
    return m is not None and ("." in m[1] or m[2] is not None or m[1] in _VALIDATED)


def name_method(exc: BaseException, owner, *, depth: int = 8) -> BaseException:
    """Prefix an inline argument check's error with the public method of ``owner`` that made
    it, ``"Class.method: ..."`` (:func:`name_callable`), in place.

    The hand-checked hot methods (the :func:`declare_params` ones) check their arguments
    through small private helpers that do not know which method called them; the method named
    is the outermost frame within ``depth`` frames from the caller up that runs a public method
    of ``owner``'s class on ``owner`` itself (the one called from outside, e.g. ``value`` when
    ``value`` checks through ``measure``). Only the error path reads the stack, so the checks
    cost nothing more when the arguments are valid. The message is left as it is when no such
    frame is found.

    Examples
    --------
    >>> class Box:
    ...     def _check(self, x):
    ...         try:
    ...             return float(x)
    ...         except ValueError as e:
    ...             raise name_method(ValueError(f"x must be a number, got {x!r}"), self) from e
    ...     def grow(self, x):
    ...         return 2.0 * self._check(x)
    >>> Box().grow("two")
    Traceback (most recent call last):
        ...
    ValueError: Box.grow: x must be a number, got 'two'
    """
    frame, found, cls = sys._getframe(1), None, type(owner)
    for _ in range(depth):
        if frame is None:
            break
        name = _REWRITTEN.sub("", frame.f_code.co_name)
        if (not name.startswith(("_", "<")) and frame.f_locals.get("self") is owner
                and callable(getattr(cls, name, None))):
            found = name
        frame = frame.f_back
    return exc if found is None else name_callable(exc, f"{cls.__name__}.{found}")


def named_call(owner, fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, with a ``TypeError`` or ``ValueError`` it raises named by the
    public method of ``owner`` that was called (:func:`name_method`): the one form of a
    method's inline check (``named_call(self, as_matrix, x, "x")``) or of a method handing its
    arguments to another callable.

    Examples
    --------
    >>> from quadnet._validation import as_positive
    >>> class Box:
    ...     def grow(self, x):
    ...         return 2.0 * named_call(self, as_positive, x, "x")
    >>> Box().grow(-1.0)
    Traceback (most recent call last):
        ...
    ValueError: Box.grow: x must be finite and > 0, got -1.0
    """
    try:
        return fn(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise name_method(e, owner) from None


def finite_result(arg: str):
    """Refuse a non-finite result of a hand-checked method called on finite ``arg`` (an
    overflow, e.g. ``U * 1e300``) with a :class:`~quadnet.exceptions.NonFiniteResultError`
    naming ``arg``: the result check of :func:`validate_params` for the :class:`quadnet.Loss`
    methods, which check their own arguments (``declare_params``).

    Skipped when nested (inner loops check their own iterates against ``BLOWUP``), so an ODE
    right-hand side or a descent step pays one context-variable read.

    Examples
    --------
    >>> class Scale:
    ...     @finite_result("U")
    ...     def square(self, U):
    ...         return np.asarray(U) ** 2
    >>> Scale().square(np.array([1e200]))
    Traceback (most recent call last):
        ...
    quadnet.exceptions.NonFiniteResultError: Scale.square: the result overflows float64 at this U (max |entry| 1e+200); rescale U
    """

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(self, *args, **kwargs):
            if _context.NESTED.get():
                return fn(self, *args, **kwargs)
            try:
                with np.errstate(over="ignore", invalid="ignore"):
                    out = fn(self, *args, **kwargs)
            except (TypeError, ValueError) as e:  # an argument refused by the method's checks
                raise name_callable(e, f"{type(self).__name__}.{fn.__name__}") from None
            vals = out if isinstance(out, tuple) else (out,)
            if not all(np.all(np.isfinite(v)) for v in vals):
                x = args[0] if args else kwargs.get(arg)
                try:
                    big = f" (max |entry| {float(np.max(np.abs(np.asarray(x, dtype=float)))):.3g})"
                except (TypeError, ValueError):  # pragma: no cover - x was checked by fn
                    big = ""
                raise NonFiniteResultError(
                    f"{type(self).__name__}.{fn.__name__}: the result overflows float64 at this "
                    f"{arg}{big}; rescale {arg}")
            return out
        return wrapper
    return deco


def callable_name(qualname: str) -> str:
    """The name an argument error gives a callable: its qualified name without the enclosing
    function's ``<locals>``, a constructor under its class's name.

    Examples
    --------
    >>> callable_name("test.<locals>.Box.__init__"), callable_name("PSDQuotient.exp")
    ('Box', 'PSDQuotient.exp')
    """
    return qualname.rpartition("<locals>.")[2].removesuffix(".__init__")


def name_callable(exc: BaseException, qualname: str) -> BaseException:
    """Prefix the message of an argument error with the callable that refused it,
    ``"qualname: ..."`` (scikit-learn's "The 'x' parameter of f must be ..."), in place: the
    exception keeps its type, its attributes and the rest of its message.

    Left as it is when its message already starts with ``qualname`` or is not one string.

    Examples
    --------
    >>> str(name_callable(ValueError("eta must be > 0, got 0.0"), "step"))
    'step: eta must be > 0, got 0.0'
    """
    qualname = callable_name(qualname)
    args = exc.args
    if len(args) >= 1 and isinstance(args[0], str) and not args[0].startswith(qualname):
        exc.args = (f"{qualname}: {args[0]}",) + args[1:]
    return exc


def _steps(constraints: dict, order) -> tuple:
    """``(name, converter)`` for each name of ``order``: the converters bound once, when the
    table is applied, not looked up at every call."""
    return tuple((name, constraints[name].convert) for name in order)


def _check_table(steps: tuple, recorded: list, relations: tuple, qualname: str,
                 values: dict) -> dict:
    """Convert ``values[name]`` in place for each ``(name, converter)`` of ``steps``, then
    check ``relations``; record the ``recorded`` names for :func:`count_validations` (not the
    helpers the converters call). A LAPACK failure while checking becomes a ``LinAlgFailure``
    naming the argument. Every error names the argument and starts with ``qualname``
    (:func:`name_callable`)."""
    trace = _context.TRACE
    if trace is not None:
        _context.TRACE = None  # the helpers a converter calls are not counted again
    dims: dict = {}
    name = None
    try:
        for name, convert in steps:
            values[name] = convert(values[name], name, dims)
        for rel in relations:
            name = ", ".join(rel.names)
            rel(values)
    except np.linalg.LinAlgError as exc:
        raise name_callable(LinAlgFailure(
            f"{name}: checking it failed in LAPACK ({exc}); its entries are extreme or "
            f"not finite-conditioned"), qualname) from exc
    except (TypeError, ValueError) as exc:
        name_callable(exc, qualname)
        raise
    finally:
        if trace is not None:
            _context.TRACE = trace
            trace.extend((qualname, n) for n in recorded)
    return values


def _table_of(fn, constraints: dict, kind: str):
    sig = inspect.signature(fn)
    unknown = [n for n in constraints if n not in sig.parameters]
    if unknown:
        raise TypeError(f"{kind}({fn.__qualname__}): no parameter named {', '.join(unknown)}")
    return sig


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
        :class:`~quadnet.exceptions.NonFiniteResultError` naming the extreme arguments;
        numpy's floating-point warnings are silenced inside the call, since the result is
        checked instead.

    Returns
    -------
    callable
        A wrapper with the same signature (``__signature__``) that converts each argument
        once, then calls the function with the converted values, with nested validation
        switched off. Called while another validated callable runs, it calls the function
        directly. The table is ``wrapper.__quadnet_constraints__`` and the docstring's
        ``Raises`` section lists it.

    Examples
    --------
    >>> from quadnet._validation import Integer, Real
    >>> @validate_params({"eta": Real(0, None, closed="neither"), "steps": Integer(0)})
    ... def run(eta, steps=1):
    ...     return eta * steps
    >>> run(0.5, steps=4)
    2.0
    >>> run(-1.0)
    Traceback (most recent call last):
        ...
    ValueError: run: eta must be finite and > 0, got -1.0
    >>> run.__quadnet_constraints__["steps"].describe()
    'an integer >= 0'
    """
    constraints = dict(constraints)
    relations = tuple(relations)

    def deco(fn):
        sig = _table_of(fn, constraints, "validate_params")
        params = sig.parameters
        qualname = fn.__qualname__
        order = [n for n in params if n in constraints]
        recorded = [n for n in order if constraints[n].record]
        check = functools.partial(_check_table, _steps(constraints, order), recorded,
                                  relations, qualname)
        NESTED = _context.NESTED
        varargs = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params.values())
        positional = tuple(n for n, p in params.items()
                           if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
        posonly = tuple(n for n, p in params.items() if p.kind == p.POSITIONAL_ONLY)
        keywords = frozenset(n for n in params if n not in posonly)
        defaults = {n: p.default for n, p in params.items() if p.default is not p.empty}
        n_pos, n_params = len(positional), len(params)

        def bind(args, kwargs):
            """``(bound, kwargs, values)``: ``values`` maps every parameter to its argument
            (converted in place later); ``fn`` is called with ``**kwargs``, the same dict, or,
            when it has positional-only or variadic parameters, through ``bound`` (the
            ``BoundArguments`` of ``Signature.bind``; ``kwargs`` is then ``None``)."""
            if varargs or posonly:
                try:
                    bound = sig.bind(*args, **kwargs)
                except TypeError as exc:
                    raise TypeError(f"{qualname}(): {exc}") from None
                bound.apply_defaults()
                return bound, None, dict(bound.arguments)
            values = dict(zip(positional, args))
            if len(args) > n_pos:
                raise refuse(args, kwargs) from None
            if kwargs:
                given = len(values)
                values.update(kwargs)
                if len(values) != given + len(kwargs) or not kwargs.keys() <= keywords:
                    raise refuse(args, kwargs) from None
            if len(values) != n_params:
                for name, default in defaults.items():
                    values.setdefault(name, default)
                if len(values) != n_params:
                    raise refuse(args, kwargs) from None
            return None, values, values

        def refuse(args, kwargs) -> TypeError:
            """The ``TypeError`` of ``Signature.bind`` for a call the signature refuses."""
            try:
                sig.bind(*args, **kwargs)
            except TypeError as exc:
                return TypeError(f"{qualname}(): {exc}")
            return TypeError(f"{qualname}(): cannot bind {args!r}, {kwargs!r}")  # pragma: no cover

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if NESTED.get():
                return fn(*args, **kwargs)
            # bound by hand when the signature allows it: Signature.bind costs more than most
            # checks
            bound, call_kwargs, values = bind(args, kwargs)
            check(values)
            if bound is not None:
                bound.arguments.update({n: values[n] for n in order})
                args, call_kwargs = bound.args, bound.kwargs
            else:
                args = ()
            token = NESTED.set(True)
            try:
                if finite_result:
                    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                        res = fn(*args, **call_kwargs)
                else:
                    res = fn(*args, **call_kwargs)
            except np.linalg.LinAlgError as exc:
                if isinstance(exc, LinAlgFailure):
                    raise
                blame = values if varargs else {n: values[n] for n in order}
                raise _linalg_failure(qualname, exc, blame) from exc
            except (TypeError, ValueError) as exc:  # a refusal of the body's own checks
                if not _names_a_callable(exc):
                    name_callable(exc, qualname)
                raise
            finally:
                NESTED.reset(token)
            if finite_result and _nonfinite(res):  # the arguments in signature order
                _check_result(qualname, res, {n: values[n] for n in params if n in values}
                              if bound is None else dict(bound.arguments))
            return res

        _VALIDATED.add(callable_name(qualname))
        wrapper.__signature__ = sig
        wrapper.__quadnet_constraints__ = constraints
        wrapper.__quadnet_relations__ = relations
        wrapper.__doc__ = with_raises(fn.__doc__, {n: constraints[n] for n in recorded},
                                      relations)
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
    >>> from quadnet._validation import Real, as_positive
    >>> @declare_params({"x": Real(0)})
    ... def f(x):
    ...     return as_positive(x, "x", allow_zero=True)
    >>> f.__quadnet_constraints__["x"].describe()
    'a real number, finite and >= 0'
    """
    constraints = dict(constraints)
    relations = tuple(relations)

    def deco(fn):
        params = inspect.signature(fn).parameters
        unknown = [n for n in constraints if n not in params]
        if unknown:
            raise TypeError(f"declare_params({fn.__qualname__}): no parameter named "
                            f"{', '.join(unknown)}")
        fn.__quadnet_constraints__ = constraints
        fn.__quadnet_relations__ = relations
        fn.__quadnet_inline__ = True
        fn.__doc__ = with_raises(fn.__doc__, {n: c for n, c in constraints.items() if c.record},
                                 relations)
        return fn

    return deco


def validate_estimator(estimator) -> dict:
    """Check an estimator's parameters against its class's table: every entry of
    ``_parameter_constraints`` (read with ``getattr``), then the ``_parameter_relations``.

    Returns the converted values; the estimator itself is not changed (its constructor and
    ``set_params`` only store, as in scikit-learn). Recorded by :func:`count_validations`
    under the class name.

    Examples
    --------
    >>> from quadnet._validation import Integer, Relation
    >>> class Machine:
    ...     _parameter_constraints = {"iters": Integer(0), "warm": Integer(0)}
    ...     _parameter_relations = (Relation(("iters", "warm"), lambda a: None if a["warm"]
    ...                             <= a["iters"] else "warm must be <= iters", "warm <= iters"),)
    ...     def __init__(self, iters=10, warm=0):
    ...         self.iters, self.warm = iters, warm
    >>> validate_estimator(Machine(iters=3))
    {'iters': 3, 'warm': 0}
    >>> validate_estimator(Machine(iters=3, warm=5))
    Traceback (most recent call last):
        ...
    ValueError: Machine: warm must be <= iters
    """
    cls = type(estimator)
    constraints = cls._parameter_constraints
    relations = tuple(getattr(cls, "_parameter_relations", ()))
    order = list(constraints)
    values = {name: getattr(estimator, name) for name in order}
    recorded = [n for n in order if constraints[n].record]
    return _check_table(_steps(constraints, order), recorded, relations, cls.__qualname__,
                        values)


def fit_context(fit):
    """Decorate an estimator's ``fit`` (scikit-learn's ``_fit_context``): check the parameters
    once (:func:`validate_estimator`), then run ``fit`` with the nested flag set, so that the
    validated callables it reaches skip their checks. Called while a validated callable runs,
    ``fit`` runs directly (its caller's table checked what it forwards).

    Examples
    --------
    >>> from quadnet._validation import Integer
    >>> class Machine:
    ...     _parameter_constraints = {"iters": Integer(0)}
    ...     def __init__(self, iters=10):
    ...         self.iters = iters
    ...     @fit_context
    ...     def fit(self):
    ...         return nested()
    >>> Machine().fit()
    True
    >>> Machine(iters=-1).fit()
    Traceback (most recent call last):
        ...
    ValueError: Machine: iters must be >= 0, got -1
    """

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        if _context.NESTED.get():
            return fit(self, *args, **kwargs)
        validate_estimator(self)
        token = _context.NESTED.set(True)
        try:
            return fit(self, *args, **kwargs)
        finally:
            _context.NESTED.reset(token)

    return wrapper
