"""Effective curvature: the Hessian on the horizontal space, its spectrum, and measured local rates (quadnet theory §3).

Every public name of the subpackage is re-exported here, one per line.
"""

# ruff: noqa: I001  (one re-export per line, grouped by module in theory order)

from quadnet.curvature.hessian import (
    BoundarySpectrum as BoundarySpectrum,
    EffectiveSpectrum as EffectiveSpectrum,
    boundary_spectrum as boundary_spectrum,
    effective_hessian as effective_hessian,
    effective_operator as effective_operator,
    effective_spectrum as effective_spectrum,
    factor_hessian as factor_hessian,
    gram_effective_spectrum as gram_effective_spectrum,
    horizontal_dimension as horizontal_dimension,
)
from quadnet.curvature.rates import (
    DescentContraction as DescentContraction,
    FlowDecayRate as FlowDecayRate,
    LocalCurvature as LocalCurvature,
    descent_contraction as descent_contraction,
    flow_decay_rate as flow_decay_rate,
    local_curvature as local_curvature,
    predicted_contraction as predicted_contraction,
)

__all__ = [
    "BoundarySpectrum",
    "DescentContraction",
    "EffectiveSpectrum",
    "boundary_spectrum",
    "FlowDecayRate",
    "LocalCurvature",
    "descent_contraction",
    "effective_hessian",
    "effective_operator",
    "effective_spectrum",
    "factor_hessian",
    "flow_decay_rate",
    "gram_effective_spectrum",
    "horizontal_dimension",
    "local_curvature",
    "predicted_contraction",
]
