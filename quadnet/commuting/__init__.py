"""Selection laws of small initialisation: commuting measurements, the entropy mirror flow, Bregman projection and the minimum-trace limit (quadnet theory §5); beyond them, greedy low-rank learning and the small-initialisation limit for any loss (``quadnet.commuting.greedy``; the experiments of ``quadnet verify beyond`` are the module
``quadnet.commuting.experiments``).

Every public name of the subpackage except those of ``quadnet.commuting.experiments`` is
re-exported here, one per line.
"""

# ruff: noqa: I001  (one re-export per line, grouped by module in theory order)

from quadnet.commuting.algebra import (
    AlgebraBlocks as AlgebraBlocks,
    CommutingSensing as CommutingSensing,
    SpectralTrajectory as SpectralTrajectory,
    random_commuting_instance as random_commuting_instance,
)
from quadnet.commuting.greedy import (
    GLRLResult as GLRLResult,
    GLRLStage as GLRLStage,
    LimitReport as LimitReport,
    MinTraceSDP as MinTraceSDP,
    SmallInitResult as SmallInitResult,
    greedy_low_rank_learning as greedy_low_rank_learning,
    min_trace_interpolant as min_trace_interpolant,
    small_init_limit as small_init_limit,
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
    "GLRLResult",
    "GLRLStage",
    "LimitReport",
    "MinTraceResult",
    "MinTraceSDP",
    "SmallInitResult",
    "SpectralTrajectory",
    "bregman_divergence",
    "bregman_projection",
    "bregman_projection_cvxpy",
    "feasible_support",
    "greedy_low_rank_learning",
    "min_trace_interpolant",
    "min_trace_solution",
    "random_commuting_instance",
    "small_init_limit",
]
