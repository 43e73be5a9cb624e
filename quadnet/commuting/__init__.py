"""Selection laws of small initialisation: commuting measurements, the entropy mirror flow, Bregman projection and the minimum-trace limit (quadnet theory §5).

Every public name of the subpackage is re-exported here, one per line.
"""

from quadnet.commuting.algebra import (
    AlgebraBlocks as AlgebraBlocks,
    CommutingSensing as CommutingSensing,
    SpectralTrajectory as SpectralTrajectory,
    random_commuting_instance as random_commuting_instance,
)
from quadnet.commuting.bregman import (
    BregmanResult as BregmanResult,
    MinTraceResult as MinTraceResult,
    bregman_divergence as bregman_divergence,
    bregman_projection as bregman_projection,
    bregman_projection_cvxpy as bregman_projection_cvxpy,
    feasible_support as feasible_support,
    min_trace_solution as min_trace_solution,
)

__all__ = [
    "AlgebraBlocks",
    "BregmanResult",
    "CommutingSensing",
    "MinTraceResult",
    "SpectralTrajectory",
    "bregman_divergence",
    "bregman_projection",
    "bregman_projection_cvxpy",
    "feasible_support",
    "min_trace_solution",
    "random_commuting_instance",
]
