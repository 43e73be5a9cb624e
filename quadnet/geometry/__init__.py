"""Quotient geometry of M_r^+ ≅ F_{d,r}/O(r) at every factor (full rank and the rank-deficient strata): the fibre-bundle kernels, the pymanopt manifold, conformance diagnostics, curvature, parallel transport and Bures–Wasserstein barycentres (quadnet theory §1, §7; docs/stratified.md, docs/riemannian.md); the same for the Hermitian quotient C^{d x r}/U(r) of complex factors (``PSDQuotient(d, r, field="complex")``, Hermitian input to the free functions).

Every public name of the subpackage is re-exported here, one per line, except
``quadnet.geometry.barycenter.transport_maps``.
"""

# ruff: noqa: I001  (one re-export per line, grouped by module in theory order)

from quadnet.geometry.manifold import (
    PSDQuotient as PSDQuotient,
    align as align,
    bures_wasserstein as bures_wasserstein,
    horizontal_dimension as horizontal_dimension,
    lyapunov_skew as lyapunov_skew,
)
from quadnet.geometry.barycenter import (
    BWBarycenter as BWBarycenter,
    bw_barycenter as bw_barycenter,
)
from quadnet.geometry.riemannian import (
    CurvatureBounds as CurvatureBounds,
    bures_wasserstein_sectional_curvature as bures_wasserstein_sectional_curvature,
    curvature_bounds as curvature_bounds,
    distance_expansion_curvature as distance_expansion_curvature,
    holonomy as holonomy,
    parallel_transport as parallel_transport,
    ricci_curvature as ricci_curvature,
    scalar_curvature as scalar_curvature,
    sectional_curvature as sectional_curvature,
)
from quadnet.geometry.conformance import (
    BOUNDARY_EXCEPTIONS as BOUNDARY_EXCEPTIONS,
    check_gradient as check_gradient,
    check_hessian as check_hessian,
    check_manifold as check_manifold,
    compare_pymanopt_optimisers as compare_pymanopt_optimisers,
    eckart_young_value as eckart_young_value,
    random_orthogonal as random_orthogonal,
    taylor_errors as taylor_errors,
    taylor_slope as taylor_slope,
)

__all__ = [
    "BOUNDARY_EXCEPTIONS",
    "BWBarycenter",
    "CurvatureBounds",
    "PSDQuotient",
    "align",
    "bures_wasserstein",
    "bures_wasserstein_sectional_curvature",
    "bw_barycenter",
    "check_gradient",
    "check_hessian",
    "check_manifold",
    "compare_pymanopt_optimisers",
    "curvature_bounds",
    "distance_expansion_curvature",
    "eckart_young_value",
    "holonomy",
    "horizontal_dimension",
    "lyapunov_skew",
    "parallel_transport",
    "random_orthogonal",
    "ricci_curvature",
    "scalar_curvature",
    "sectional_curvature",
    "taylor_errors",
    "taylor_slope",
]
