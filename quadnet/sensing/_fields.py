r"""Coercions of complex arguments for complex rank-one sensing (quadnet theory §4, complex case).

The real boundary (:mod:`quadnet._validation`) refuses every complex array naming it. The
complex sensing problem takes complex designs, factors, directions and Hermitian matrices;
these converters do for them what ``as_array`` / ``as_factor`` / ``as_symmetric`` do for real
ones: a finite ``complex128`` array of the right shape, or a ``TypeError`` / ``ValueError``
naming the argument. A real array is accepted and cast (a real matrix is a complex one), never
the other way round.
"""

from __future__ import annotations

import numpy as np

from quadnet._validation import RANK_RTOL, Converted, Options, Relation, as_array, as_factor

__all__ = [
    "FIELDS",
    "FIELD",
    "as_complex",
    "as_complex_directions",
    "as_complex_factor",
    "as_hermitian",
    "as_hermitian_or_symmetric",
    "field_matches",
    "herm",
]

#: The two number fields of the sensing problem (``field=`` everywhere).
FIELDS = ("real", "complex")

#: The constraint-table entry of a ``field`` argument.
FIELD = Options(*FIELDS)


def herm(A: np.ndarray) -> np.ndarray:
    """``(A + A^*) / 2``, the Hermitian part (exactly Hermitian: diagonal real to the last bit)."""
    return 0.5 * (A + A.conj().T)


def as_complex(x, name: str, *, ndim: int | None = None, shape: tuple | None = None,
               allow_empty: bool = False) -> np.ndarray:
    """``x`` as a finite ``complex128`` array (real input is cast), checked for type and shape.

    Examples
    --------
    >>> as_complex([1, 2j], "x").dtype
    dtype('complex128')
    >>> as_complex("abc", "x")
    Traceback (most recent call last):
        ...
    TypeError: x must be an array of complex numbers, got str
    """
    arr = as_array(x, name, ndim=ndim, shape=shape, allow_complex=True)
    if not allow_empty and arr.size == 0:
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    return arr.astype(np.complex128, copy=False)


def as_complex_factor(U, name: str = "U", *, d: int | None = None, r: int | None = None,
                      full_rank: bool = False, rtol: float = RANK_RTOL) -> np.ndarray:
    """A finite complex ``d x r`` factor with ``1 <= r <= d`` (full column rank if asked).

    Examples
    --------
    >>> as_complex_factor([[1j], [0.0]], "U").shape
    (2, 1)
    """
    arr = as_factor(U, name, d=d, r=r, full_rank=full_rank, rtol=rtol, allow_complex=True)
    return arr.astype(np.complex128, copy=False)


def as_complex_directions(x, name: str, shape: tuple[int, int]) -> tuple[np.ndarray, bool]:
    """One complex ``shape`` direction or a stack ``(b, *shape)``, as ``(stack, single)``."""
    arr = as_complex(x, name)
    shape = tuple(shape)
    if arr.shape == shape:
        return arr[None], True
    if arr.ndim != 3 or arr.shape[1:] != shape:
        raise ValueError(f"{name} must have shape {shape} or (b, {shape[0]}, {shape[1]}) with "
                         f"b >= 1, got {arr.shape}")
    return arr, False


def _defect(arr: np.ndarray, other: np.ndarray) -> tuple[float, float]:
    with np.errstate(over="ignore"):
        scale, asym = np.linalg.norm(arr), np.linalg.norm(arr - other)
    if not (np.isfinite(scale) and np.isfinite(asym)):   # entries near 1.8e308: rescale first
        m = float(np.abs(arr).max())
        scale, asym = np.linalg.norm(arr / m), np.linalg.norm(arr / m - other / m)
    return scale, asym


def as_hermitian(x, name: str, n: int | None = None, *, rtol: float = 1e-10) -> np.ndarray:
    """A finite square ``complex128`` matrix, Hermitian up to ``rtol`` (relative, Frobenius);
    returns its exact Hermitian part.

    Examples
    --------
    >>> as_hermitian([[1.0, 1j], [1j, 1.0]], "H")       # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: H must be Hermitian: ||H - H^*||_F / ||H||_F = 1.414e+00 > 1e-10
    """
    arr = as_complex(x, name, ndim=2)
    if arr.shape[0] != arr.shape[1] or (n is not None and arr.shape[0] != n):
        want = f"({n}, {n})" if n is not None else "square"
        raise ValueError(f"{name} must be {want}, got shape {arr.shape}")
    scale, asym = _defect(arr, arr.conj().T)
    if asym > rtol * max(scale, np.finfo(float).tiny):
        raise ValueError(f"{name} must be Hermitian: ||{name} - {name}^*||_F / ||{name}||_F = "
                         f"{asym / scale:.3e} > {rtol:g}")
    return 0.5 * arr + 0.5 * arr.conj().T


def as_hermitian_or_symmetric(x, name: str) -> np.ndarray:
    """A real symmetric matrix as float64, or a complex Hermitian one as complex128.

    Which one is decided by the dtype of ``x``; a ``field`` argument beside it is checked by
    :func:`field_matches`.
    """
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"{name} must be a real symmetric or complex Hermitian matrix, got "
                        f"{type(x).__name__}")
    if np.iscomplexobj(x):
        return as_hermitian(x, name)
    from quadnet._validation import as_symmetric

    return as_symmetric(x, name)


def field_matches(names: tuple[str, ...]) -> Relation:
    """The relation "no complex array among ``names`` when ``field='real'``" (a TypeError)."""

    def check(args) -> str | None:
        if args["field"] != "real":
            return None
        for n in names:
            if np.iscomplexobj(args[n]):
                return (f"{n} is complex (dtype {np.asarray(args[n]).dtype}) but field='real' "
                        f"is declared; pass field='complex' for complex data")
        return None

    return Relation(("field", *names), check, "a complex " + " or ".join(
        f"``{n}``" for n in names) + " needs ``field='complex'``", error=TypeError)


#: Table entries of the complex sensing methods.
COMPLEX_FACTOR = Converted(lambda v, name: as_complex_factor(v, name),
                           "a finite complex d x r array, 1 <= r <= d",
                           bad=[("string", "abc"), ("None", None), ("1-d", np.ones(3)),
                                ("nan", np.full((3, 1), np.nan))])
HERMITIAN = Converted(lambda v, name: as_hermitian(v, name),
                      "a finite complex Hermitian matrix",
                      bad=[("string", "abc"), ("None", None), ("non-square", np.ones((2, 3))),
                           ("non-Hermitian", np.array([[1.0, 1j], [1j, 1.0]])),
                           ("nan", np.full((2, 2), np.nan))])
HERMITIAN_OR_SYMMETRIC = Converted(
    as_hermitian_or_symmetric, "a finite real symmetric or complex Hermitian matrix",
    bad=[("string", "abc"), ("None", None), ("non-square", np.ones((2, 3))),
         ("non-symmetric", np.array([[1.0, 2.0], [0.0, 1.0]])),
         ("non-Hermitian", np.array([[1.0, 1j], [1j, 1.0]])), ("nan", np.full((2, 2), np.nan))])
