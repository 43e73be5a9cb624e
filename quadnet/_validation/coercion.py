"""The coercions of the public boundary: ``as_*`` turn one argument into the type the kernels
take (float64 arrays, Python scalars, a Generator, a cvxpy solver name) or raise a
``TypeError``/``ValueError`` naming it; and the one vectorisation convention (quadnet theory §0).

The constraint classes of :mod:`quadnet._validation.constraints` are built on these functions,
and every call of one is recorded by :func:`quadnet._validation.count_validations` (except the
``record=False`` / ``field=True`` uses, which convert a value that was already checked or
belongs to a result record).
"""

from __future__ import annotations

import numbers

import numpy as np

from quadnet._validation._context import record as _record

__all__ = [
    "RANK_RTOL",
    "as_array",
    "as_directions",
    "as_factor",
    "as_int",
    "as_matrix",
    "as_positive",
    "as_rng",
    "as_solver",
    "as_square",
    "as_symmetric",
    "installed_solvers",
    "rank_deficiency",
    "record_array",
    "renamed_keyword",
    "to_rng",
    "unvec",
    "vec",
]

#: A factor whose smallest singular value is below ``RANK_RTOL`` times its largest is
#: treated as rank deficient: the Lyapunov solves of the quotient geometry would then
#: divide by ``2 sigma_min^2 <= 2e-20 sigma_max^2`` and lose every significant digit.
RANK_RTOL = 1e-10


def as_array(x, name: str, *, ndim: int | None = None, shape: tuple | None = None,
             finite: bool = True, field: bool = False, allow_complex: bool = False
             ) -> np.ndarray:
    """``x`` as a float64 array, checked for type, number of dimensions, shape, finiteness.

    A complex array is refused (``TypeError`` naming ``name``: never cast to its real part)
    unless ``allow_complex``, which returns it as complex128 (a real one stays float64).

    ``shape`` may contain ``None`` for a free axis. ``field=True`` checks a stored field of a
    result record (a trajectory's ``t``, ``loss``, ``U``): the check is not recorded by
    :func:`~quadnet._validation.count_validations` (building a record is not a public call),
    a bare bool is refused, and a complex dtype is refused as any other non-real dtype.

    Examples
    --------
    >>> as_array([1, 2], "x").dtype
    dtype('float64')
    >>> as_array([1.0, float("nan")], "x")
    Traceback (most recent call last):
        ...
    ValueError: x has 1 non-finite entries (NaN or inf)
    >>> as_array([[1.0]], "t", ndim=1, field=True)
    Traceback (most recent call last):
        ...
    ValueError: t must be 1-dimensional, got shape (1, 1)
    """
    if not field:
        _record("as_array", name)
    what = "complex numbers" if allow_complex else "real numbers"
    if isinstance(x, (str, bytes)) or x is None or (field and isinstance(x, (bool, np.bool_))):
        raise TypeError(f"{name} must be an array of {what}, got {type(x).__name__}")
    try:
        arr = np.asarray(x)
    except Exception as exc:  # pragma: no cover - exotic inputs
        raise TypeError(f"{name} must be an array of {what}: {exc}") from exc
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool) \
            or (field and np.iscomplexobj(arr)):
        raise TypeError(f"{name} must be an array of {what}, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        if not allow_complex:
            raise TypeError(f"{name} must be real, got complex dtype {arr.dtype} (the real field "
                            f"is declared; the imaginary part is never dropped)")
        arr = arr.astype(np.complex128, copy=False)
    else:
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


def record_array(x, name: str, ndim: int) -> np.ndarray:
    """``as_array(x, name, ndim=ndim, field=True)``, under its former name (a stored field of a
    result record).

    Examples
    --------
    >>> record_array([0, 1.5], "t", 1).tolist()
    [0.0, 1.5]
    """
    return as_array(x, name, ndim=ndim, field=True)


def as_matrix(x, name: str, *, shape: tuple | None = None, allow_empty: bool = False,
              allow_complex: bool = False) -> np.ndarray:
    """A finite float64 2-d array, with no zero-length axis unless ``allow_empty``
    (complex128 for a complex ``x`` with ``allow_complex``, see :func:`as_array`).

    Examples
    --------
    >>> as_matrix([[1.0]], "A").shape
    (1, 1)
    """
    arr = as_array(x, name, ndim=2, shape=shape, allow_complex=allow_complex)
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


def as_square(x, name: str, n: int | None = None, *, allow_complex: bool = False) -> np.ndarray:
    arr = as_matrix(x, name, allow_complex=allow_complex)
    if arr.shape[0] != arr.shape[1] or (n is not None and arr.shape[0] != n):
        want = f"({n}, {n})" if n is not None else "square"
        raise ValueError(f"{name} must be {want}, got shape {arr.shape}")
    return arr


def as_symmetric(x, name: str, n: int | None = None, *, rtol: float = 1e-10,
                 allow_complex: bool = False) -> np.ndarray:
    """A finite square float64 array that is symmetric up to ``rtol`` (relative, Frobenius).

    Returns the exact symmetric part, so later algebra is symmetric to the last bit. With
    ``allow_complex`` a complex ``x`` must be Hermitian (``x^*`` for ``x^T``) and its exact
    Hermitian part is returned, complex128.
    """
    arr = as_square(x, name, n, allow_complex=allow_complex)
    cx = arr.dtype.kind == "c"
    arrT = arr.conj().T if cx else arr.T
    with np.errstate(over="ignore"):
        scale = np.linalg.norm(arr)
        asym = np.linalg.norm(arr - arrT)
    if not (np.isfinite(scale) and np.isfinite(asym)):   # entries near 1.8e308: rescale first
        m = float(np.abs(arr).max())
        scale, asym = np.linalg.norm(arr / m), np.linalg.norm(arr / m - arrT / m)
    if asym > rtol * max(scale, np.finfo(float).tiny):
        what, star = ("Hermitian", "*") if cx else ("symmetric", "T")
        raise ValueError(
            f"{name} must be {what}: ||{name} - {name}^{star}||_F / ||{name}||_F = "
            f"{asym / scale:.3e} > {rtol:g}"
        )
    # = quadnet._linalg.sym, halved first so entries near 1.8e308 do not overflow (no import:
    # _validation sits beside _linalg)
    return 0.5 * arr + 0.5 * arrT


def rank_deficiency(U: np.ndarray) -> float:
    """``sigma_min / sigma_max`` of ``U`` (0 for the zero matrix)."""
    s = np.linalg.svd(U, compute_uv=False)
    return float(s[-1] / s[0]) if s[0] > 0 else 0.0


def as_factor(U, name: str = "U", *, d: int | None = None, r: int | None = None,
              full_rank: bool = True, rtol: float = RANK_RTOL, allow_complex: bool = False
              ) -> np.ndarray:
    """A finite ``d x r`` float64 factor with ``r <= d``, of full column rank if asked
    (complex128 for a complex ``U`` with ``allow_complex``).

    Full rank is numerical: ``sigma_min(U) > rtol * sigma_max(U)``.

    Examples
    --------
    >>> import numpy as np
    >>> as_factor(np.ones((3, 2)), "U")                  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: U is numerically rank deficient: sigma_min/sigma_max = ... <= 1e-10; ...
    """
    arr = as_matrix(U, name, shape=(d, r), allow_complex=allow_complex)
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


def as_rng(seed, name: str = "seed", *, record: bool = True) -> np.random.Generator:
    """A :class:`numpy.random.Generator` from ``seed``.

    Accepted: ``None`` (fresh entropy), an int ``>= 0``, a sequence of ints ``>= 0`` (a
    ``SeedSequence`` entropy, e.g. ``[base, trial]`` for a sweep cell), a
    :class:`numpy.random.SeedSequence`, or a Generator. A Generator is returned as it is (so
    a caller's stream advances); an int or a sequence seeds a new PCG64 stream, so the same
    seed gives the same numbers bit for bit. Anything else (``"abc"``, ``-1``, ``1.5``,
    ``True``) is a ``TypeError``/``ValueError`` naming ``name``. ``record=False`` converts a seed
    that a ``Seed(raw=True)`` constraint already checked: the same checks, not recorded again by
    :func:`~quadnet._validation.count_validations` (:func:`to_rng`).

    Examples
    --------
    >>> bool(as_rng(3).integers(100) == as_rng(3).integers(100))
    True
    >>> as_rng(-1)
    Traceback (most recent call last):
        ...
    ValueError: seed must be an int >= 0, got -1
    """
    if record:
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


def to_rng(seed, name: str = "seed") -> np.random.Generator:
    """``as_rng(seed, name, record=False)``, under its former name: a Generator from a seed
    already checked by a ``Seed(raw=True)`` constraint.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> to_rng(rng) is rng
    True
    """
    return as_rng(seed, name, record=False)


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


def installed_solvers() -> tuple[str, ...] | None:
    """The names of the installed cvxpy solvers (``cvxpy.installed_solvers()``), or ``None``
    when cvxpy is not installed (the callable that needs it then raises ``ImportError``).

    cvxpy is imported on the first call only (it takes seconds to import)."""
    try:
        import cvxpy
    except ImportError:  # pragma: no cover - cvxpy missing
        return None
    return tuple(cvxpy.installed_solvers())


def as_solver(value, name: str = "solver", *, allow_none: bool = False):
    """A cvxpy solver name among the installed ones (:func:`installed_solvers`), upper-cased
    (case-insensitive); ``None`` (cvxpy's choice) when ``allow_none``. Refused before cvxpy is
    called, so an unknown name is a ``ValueError`` naming ``name`` rather than cvxpy's
    ``SolverError``. Without cvxpy the name is returned upper-cased, unchecked."""
    _record("as_solver", name)
    if value is None and allow_none:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a cvxpy solver name (a str), got {type(value).__name__}")
    installed = installed_solvers()
    if installed is not None and value.upper() not in installed:
        raise ValueError(f"{name} must be one of the installed cvxpy solvers {list(installed)}, "
                         f"got {value!r}")
    return value.upper()
