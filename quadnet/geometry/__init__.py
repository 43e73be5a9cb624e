"""Quotient geometry of M_r^+ ≅ F_{d,r}/O(r): the fibre-bundle kernels, the pymanopt manifold, conformance diagnostics (quadnet theory §1, §7).

Every public name of the subpackage is re-exported here, one per line.
"""

from quadnet.geometry.manifold import (
    PSDQuotient as PSDQuotient,
    align as align,
    bures_wasserstein as bures_wasserstein,
    horizontal_dimension as horizontal_dimension,
    lyapunov_skew as lyapunov_skew,
)
from quadnet.geometry.conformance import (
    check_gradient as check_gradient,
    check_hessian as check_hessian,
    check_manifold as check_manifold,
    random_orthogonal as random_orthogonal,
    taylor_errors as taylor_errors,
    taylor_slope as taylor_slope,
)

__all__ = [
    "PSDQuotient",
    "align",
    "bures_wasserstein",
    "check_gradient",
    "check_hessian",
    "check_manifold",
    "horizontal_dimension",
    "lyapunov_skew",
    "random_orthogonal",
    "taylor_errors",
    "taylor_slope",
]
