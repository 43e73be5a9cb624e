"""Old names kept working: module paths and top-level names of quadnet 0.1.

quadnet 0.2 moved its modules into subpackages. Code written for 0.1 keeps running:

* ``import quadnet.fact``, ``quadnet.rfm``, ``quadnet.diagnostics`` (stable paths) give a module
  with the same public names as in 0.1;
* the other 0.1 module paths (``quadnet.quotient``, ``quadnet.rates``, ...) do too, with a
  :class:`DeprecationWarning` naming the new path;
* a 0.1 top-level name that is no longer re-exported (``quadnet.lyapunov_skew``, ...) resolves
  through :func:`top_level`, with a :class:`DeprecationWarning` naming its new home.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

#: 0.1 module path -> (new modules whose public names it carries, extra renames, stable?)
MODULES: dict[str, tuple[tuple[str, ...], dict[str, str], bool]] = {
    "quadnet.fact": (("quadnet.features.fact", "quadnet.features.training",
                      "quadnet.features.counterexample"),
                     {"ConvergenceWarning": "quadnet.exceptions:ConvergenceWarning",
                      "NotCriticalWarning": "quadnet.exceptions:NotCriticalWarning"}, True),
    "quadnet.rfm": (("quadnet.features.rfm",), {}, True),
    "quadnet.diagnostics": (("quadnet.features.diagnostics",), {}, True),
    "quadnet.kernels": (("quadnet.features.kernels",),
                        {"agop": "quadnet.features.kernels:kernel_agop",
                         "fact_matrix": "quadnet.features.kernels:kernel_fact_matrix"}, False),
    "quadnet.quotient": (("quadnet.geometry.manifold",), {}, False),
    "quadnet.conformance": (("quadnet.geometry.conformance",), {}, False),
    "quadnet.rates": (("quadnet.curvature.rates",), {}, False),
    "quadnet.population": (("quadnet.sensing.population",), {}, False),
    "quadnet.bounds": (("quadnet.sensing.bounds",), {}, False),
    "quadnet.recovery": (("quadnet.sensing.recovery",),
                         {"phase_transition_cell": "quadnet.harness.cells:phase_transition_cell"},
                         False),
    "quadnet.baselines": (("quadnet.sensing.baselines",), {}, False),
    "quadnet.bregman": (("quadnet.commuting.bregman",), {}, False),
    "quadnet.sweeps": (("quadnet.harness.sweeps",), {}, False),
    "quadnet.cli": (("quadnet.harness.cli",), {}, False),
    "quadnet.checks": (("quadnet.harness.checks",), {}, False),
}


def _resolve(target: str):
    mod, _, name = target.partition(":")
    return getattr(importlib.import_module(mod), name)


def _public(modname: str) -> dict:
    mod = importlib.import_module(modname)
    return {n: getattr(mod, n) for n in getattr(mod, "__all__", ())}


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname in MODULES:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        sources, renames, stable = MODULES[module.__name__]
        names: dict = dict(_public("quadnet.exceptions"))
        for src in sources:
            names.update(_public(src))
        names.update({k: _resolve(v) for k, v in renames.items()})
        module.__dict__.update(names)
        module.__all__ = sorted(names)
        module.__doc__ = (f"Alias of {', '.join(sources)} (the quadnet 0.1 path "
                          f"{module.__name__}).")
        if not stable:
            warnings.warn(f"{module.__name__} moved to {sources[0]}; the old path is deprecated",
                          DeprecationWarning, stacklevel=2)


def install() -> None:
    """Put the alias finder on :data:`sys.meta_path` (once)."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.append(_AliasFinder())


#: 0.1 top-level names that are no longer re-exported -> where they live now.
TOP_LEVEL: dict[str, str] = {
    "AlgebraBlocks": "quadnet.commuting:AlgebraBlocks",
    "BregmanResult": "quadnet.commuting:BregmanResult",
    "ConvergenceWarning": "quadnet.exceptions:ConvergenceWarning",
    "DescentContraction": "quadnet.curvature:DescentContraction",
    "FactReport": "quadnet.features:FactReport",
    "FlowDecayRate": "quadnet.curvature:FlowDecayRate",
    "HAVE_CVXPY": "quadnet.sensing:HAVE_CVXPY",
    "IndefiniteHessianWarning": "quadnet.exceptions:IndefiniteHessianWarning",
    "InfeasibleError": "quadnet.exceptions:InfeasibleError",
    "KERNELS": "quadnet.features:KERNELS",
    "LocalCurvature": "quadnet.curvature:LocalCurvature",
    "MinTraceResult": "quadnet.commuting:MinTraceResult",
    "NFACounterexample": "quadnet.features:NFACounterexample",
    "NotAMinimiserWarning": "quadnet.exceptions:NotAMinimiserWarning",
    "NotCriticalWarning": "quadnet.exceptions:NotCriticalWarning",
    "RFMWarning": "quadnet.exceptions:RFMWarning",
    "RecoveryResult": "quadnet.sensing:RecoveryResult",
    "SDPResult": "quadnet.sensing:SDPResult",
    "SWEEPS": "quadnet.harness:SWEEPS",
    "SampleBound": "quadnet.sensing:SampleBound",
    "SpectralInitWarning": "quadnet.exceptions:SpectralInitWarning",
    "SpectralTrajectory": "quadnet.commuting:SpectralTrajectory",
    "Sweep": "quadnet.harness:Sweep",
    "SweepCellError": "quadnet.exceptions:SweepCellError",
    "SweepReport": "quadnet.harness:SweepReport",
    "SweepStoreError": "quadnet.exceptions:SweepStoreError",
    "TrainInfo": "quadnet.features:TrainInfo",
    "angle_correlation": "quadnet.features:angle_correlation",
    "available_sweeps": "quadnet.harness:available_sweeps",
    "basin_radius": "quadnet.sensing:basin_radius",
    "best_nfa_power": "quadnet.features:best_nfa_power",
    "bfact_matrix": "quadnet.features:bfact_matrix",
    "block_circulant_score": "quadnet.features:block_circulant_score",
    "bregman_projection_cvxpy": "quadnet.commuting:bregman_projection_cvxpy",
    "check_gradient": "quadnet.geometry:check_gradient",
    "check_hessian": "quadnet.geometry:check_hessian",
    "concentration_samples": "quadnet.sensing:concentration_samples",
    "cosine": "quadnet.features:cosine",
    "counterexample_prediction": "quadnet.features:counterexample_prediction",
    "distance_correlation": "quadnet.features:distance_correlation",
    "effective_operator": "quadnet.curvature:effective_operator",
    "fact_identity": "quadnet.features:fact_identity",
    "factor_hessian": "quadnet.curvature:factor_hessian",
    "feasible_support": "quadnet.commuting:feasible_support",
    "feature_covariance": "quadnet.features:feature_covariance",
    "gd_path": "quadnet.features:gd_path",
    "get_sweep": "quadnet.harness:get_sweep",
    "grad_norm_at": "quadnet.features:grad_norm_at",
    "horizontal_dimension": "quadnet.curvature:horizontal_dimension",
    "input_gradients": "quadnet.features:input_gradients",
    "kernel_matrix": "quadnet.features:kernel_matrix",
    "linear_readout_accuracy": "quadnet.features:linear_readout_accuracy",
    "local_curvature": "quadnet.curvature:local_curvature",
    "lyapunov_skew": "quadnet.geometry:lyapunov_skew",
    "nfa_cosines": "quadnet.features:nfa_cosines",
    "nfa_counterexample": "quadnet.features:nfa_counterexample",
    "objective_and_grad": "quadnet.features:objective_and_grad",
    "phase_transition_cell": "quadnet.harness:phase_transition_cell",
    "population_effective_hvp": "quadnet.sensing:population_effective_hvp",
    "population_effective_inverse": "quadnet.sensing:population_effective_inverse",
    "population_effective_spectrum": "quadnet.sensing:population_effective_spectrum",
    "predicted_contraction": "quadnet.curvature:predicted_contraction",
    "prescribed_step": "quadnet.sensing:prescribed_step",
    "psd_power": "quadnet.features:psd_power",
    "random_commuting_instance": "quadnet.commuting:random_commuting_instance",
    "random_orthogonal": "quadnet.geometry:random_orthogonal",
    "read_results": "quadnet.harness:read_results",
    "register_sweep": "quadnet.harness:register_sweep",
    "run_sweep": "quadnet.harness:run_sweep",
    "sample_bound": "quadnet.sensing:sample_bound",
    "selection_cell": "quadnet.harness:selection_cell",
    "sweep_cells": "quadnet.harness:sweep_cells",
    "sym": "quadnet.losses:sym",
    "taylor_errors": "quadnet.geometry:taylor_errors",
    "taylor_slope": "quadnet.geometry:taylor_slope",
}


def top_level(name: str):
    """Resolve a 0.1 top-level name, warning with its new home; ``AttributeError`` otherwise."""
    if name not in TOP_LEVEL:
        raise AttributeError(f"module 'quadnet' has no attribute {name!r}")
    target = TOP_LEVEL[name]
    warnings.warn(f"quadnet.{name} is deprecated; use {target.replace(':', '.')}",
                  DeprecationWarning, stacklevel=3)
    return _resolve(target)
