"""Gaussian rank-one sensing: the O(mdr) loss, population operator and effective Hessian, the sample-size bound, recovery and the SDP baseline (quadnet theory §4).

Every public name of the subpackage is re-exported here, one per line.
"""

# ruff: noqa: I001  (one re-export per line, grouped by module in theory order)

from quadnet.sensing.gaussian import (
    GaussianSensing as GaussianSensing,
    inverse_population_normal_operator as inverse_population_normal_operator,
    population_normal_operator as population_normal_operator,
    spectral_init as spectral_init,
)
from quadnet.sensing import complex_gaussian as complex_gaussian  # registers field="complex"
from quadnet.sensing.complex_gaussian import (
    ComplexGaussianSensing as ComplexGaussianSensing,
    optimal_preprocessing as optimal_preprocessing,
)
from quadnet.sensing.population import (
    PopulationInverse as PopulationInverse,
    population_effective_hessian as population_effective_hessian,
    population_effective_hvp as population_effective_hvp,
    population_effective_inverse as population_effective_inverse,
    population_effective_spectrum as population_effective_spectrum,
)
from quadnet.sensing.bounds import (
    SampleBound as SampleBound,
    basin_radius as basin_radius,
    concentration_samples as concentration_samples,
    prescribed_step as prescribed_step,
    sample_bound as sample_bound,
    sufficient_sample_size as sufficient_sample_size,
)
from quadnet.sensing.recovery import (
    RecoveryResult as RecoveryResult,
    recover as recover,
)
from quadnet.sensing.baselines import (
    HAVE_CVXPY as HAVE_CVXPY,
    SDPResult as SDPResult,
    trace_min_sdp as trace_min_sdp,
)

from quadnet.curvature.hessian import register_preconditioner as _register_preconditioner

_register_preconditioner("population", PopulationInverse)

__all__ = [
    "ComplexGaussianSensing",
    "PopulationInverse",
    "GaussianSensing",
    "HAVE_CVXPY",
    "RecoveryResult",
    "SDPResult",
    "SampleBound",
    "basin_radius",
    "concentration_samples",
    "inverse_population_normal_operator",
    "optimal_preprocessing",
    "population_effective_hessian",
    "population_effective_hvp",
    "population_effective_inverse",
    "population_effective_spectrum",
    "population_normal_operator",
    "prescribed_step",
    "recover",
    "sample_bound",
    "spectral_init",
    "sufficient_sample_size",
    "trace_min_sdp",
]
