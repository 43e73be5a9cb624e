"""Fibre-bundle kernels on raw arrays (quadnet theory §1): no validation, called by the
public :class:`quadnet.PSDQuotient` methods and by other layers after they validated."""

from __future__ import annotations

__all__ = ["horizontal_dim", "vertical_dim"]


def vertical_dim(r: int, k: int | None = None) -> int:
    """``dim V_U = r(r-1)/2 - (r-k)(r-k-1)/2`` for a ``d x r`` factor of rank ``k``
    (``k = r``, the full-rank stratum, by default)."""
    k = r if k is None else k
    return r * (r - 1) // 2 - (r - k) * (r - k - 1) // 2


def horizontal_dim(d: int, r: int, k: int | None = None) -> int:
    """``dim H_U = d r - dim V_U``; at full rank ``n_h = d r - r(r-1)/2 = dim M_r^+``."""
    return d * r - vertical_dim(r, k)
