"""Features at convergence: FACT, bFACT and AGOP for quadratic and deep linear nets, recursive feature machines, representation diagnostics (quadnet theory §6).

Every public name of the subpackage is re-exported here, one per line.
"""

# ruff: noqa: I001  (one re-export per line, grouped by module in theory order)

from quadnet.features.fact import (
    DeepLinearNet as DeepLinearNet,
    QuadraticNet as QuadraticNet,
    TrainInfo as TrainInfo,
    agop as agop,
    best_nfa_power as best_nfa_power,
    bfact_matrix as bfact_matrix,
    cosine as cosine,
    fact_matrix as fact_matrix,
    nfa_cosines as nfa_cosines,
    psd_power as psd_power,
)
from quadnet.features.training import (
    FactReport as FactReport,
    NetTrajectory as NetTrajectory,
    fact_identity as fact_identity,
    gd_path as gd_path,
    grad_norm_at as grad_norm_at,
    objective_and_grad as objective_and_grad,
    train as train,
)
from quadnet.features.counterexample import (
    NFACounterexample as NFACounterexample,
    counterexample_prediction as counterexample_prediction,
    nfa_counterexample as nfa_counterexample,
)
from quadnet.features.kernels import (
    KERNELS as KERNELS,
    kernel_agop as kernel_agop,
    kernel_fact_matrix as kernel_fact_matrix,
    input_gradients as input_gradients,
    kernel_matrix as kernel_matrix,
)
from quadnet.features.solvers import (
    DIRECT_MAX_N as DIRECT_MAX_N,
    KernelFit as KernelFit,
    SOLVERS as SOLVERS,
    SolverInfo as SolverInfo,
    SolverPlan as SolverPlan,
    available_memory as available_memory,
    choose_solver as choose_solver,
    default_rank as default_rank,
    fit_kernel_machine as fit_kernel_machine,
    kernel_memory_estimate as kernel_memory_estimate,
    kernel_predict as kernel_predict,
    rpcholesky as rpcholesky,
)
from quadnet.features.rfm import (
    Dataset as Dataset,
    RecursiveFeatureMachine as RecursiveFeatureMachine,
    block_circulant_score as block_circulant_score,
    modular_arithmetic as modular_arithmetic,
    sparse_parity as sparse_parity,
)
from quadnet.features.fourier import (
    fourier_spectrum as fourier_spectrum,
    group_circulant_score as group_circulant_score,
    group_order as group_order,
    primitive_root as primitive_root,
)
from quadnet.features.diagnostics import (
    angle_correlation as angle_correlation,
    distance_correlation as distance_correlation,
    effective_rank as effective_rank,
    feature_covariance as feature_covariance,
    linear_readout_accuracy as linear_readout_accuracy,
)

__all__ = [
    "DIRECT_MAX_N",
    "Dataset",
    "DeepLinearNet",
    "FactReport",
    "KERNELS",
    "KernelFit",
    "NFACounterexample",
    "NetTrajectory",
    "QuadraticNet",
    "RecursiveFeatureMachine",
    "SOLVERS",
    "SolverInfo",
    "SolverPlan",
    "TrainInfo",
    "agop",
    "angle_correlation",
    "available_memory",
    "best_nfa_power",
    "bfact_matrix",
    "block_circulant_score",
    "choose_solver",
    "default_rank",
    "cosine",
    "counterexample_prediction",
    "distance_correlation",
    "effective_rank",
    "fact_identity",
    "fact_matrix",
    "feature_covariance",
    "fit_kernel_machine",
    "fourier_spectrum",
    "gd_path",
    "grad_norm_at",
    "group_circulant_score",
    "group_order",
    "input_gradients",
    "kernel_agop",
    "kernel_fact_matrix",
    "kernel_matrix",
    "kernel_memory_estimate",
    "kernel_predict",
    "linear_readout_accuracy",
    "modular_arithmetic",
    "nfa_cosines",
    "nfa_counterexample",
    "objective_and_grad",
    "primitive_root",
    "psd_power",
    "rpcholesky",
    "sparse_parity",
    "train",
]
