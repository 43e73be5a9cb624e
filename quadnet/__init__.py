"""quadnet: the geometry of positive quadratic networks ``f_U(x) = x^T U U^T x``.

The predictor ``Q = U U^T`` lives on the manifold ``M_r^+`` of rank-r PSD matrices, the
quotient of full-rank factors by ``O(r)`` (quadnet theory §1, ``docs/theory/quotient.md``).
The top level re-exports the names a researcher starts from; everything else is reached as
``quadnet.<subpackage>.<name>``. The subpackages follow the theory: :mod:`quadnet.geometry`
(§1), :mod:`quadnet.losses` and :mod:`quadnet.dynamics` (§2), :mod:`quadnet.curvature` (§3),
:mod:`quadnet.sensing` (§4), :mod:`quadnet.commuting` (§5), :mod:`quadnet.features` (§6), and
the reproduction :mod:`quadnet.harness`. See ``docs/ARCHITECTURE.md`` for the layers.

Examples
--------
>>> import numpy as np
>>> import quadnet as qn
>>> M = qn.PSDQuotient(4, 2)
>>> U = np.arange(8.0).reshape(4, 2)
>>> float(round(M.dist(U, U @ np.array([[0.0, 1.0], [1.0, 0.0]])), 12))
0.0
"""

# ruff: noqa: I001  (imports follow the theory order, not the alphabet)
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from quadnet import _aliases
from quadnet import exceptions as exceptions
from quadnet import geometry as geometry
from quadnet import losses as losses
from quadnet import dynamics as dynamics
from quadnet import curvature as curvature
from quadnet import sensing as sensing
from quadnet import commuting as commuting
from quadnet import features as features
from quadnet import harness as harness
from quadnet import plotting as plotting
# geometry (§1)
from quadnet.geometry import PSDQuotient as PSDQuotient
from quadnet.geometry import align as align
from quadnet.geometry import bures_wasserstein as bures_wasserstein
from quadnet.geometry import bw_barycenter as bw_barycenter
from quadnet.geometry import check_manifold as check_manifold
# losses and dynamics (§2)
from quadnet.losses import AutogradLoss as AutogradLoss
from quadnet.losses import FrobeniusLoss as FrobeniusLoss
from quadnet.losses import Loss as Loss
from quadnet.losses import MeasurementLoss as MeasurementLoss
from quadnet.losses import pymanopt_problem as pymanopt_problem
from quadnet.dynamics import Trajectory as Trajectory
from quadnet.dynamics import congruence_recursion as congruence_recursion
from quadnet.dynamics import congruence_step as congruence_step
from quadnet.dynamics import factorization_flow as factorization_flow
from quadnet.dynamics import gradient_descent as gradient_descent
from quadnet.dynamics import gradient_flow as gradient_flow
from quadnet.dynamics import predictor_flow as predictor_flow
# curvature (§3)
from quadnet.curvature import EffectiveSpectrum as EffectiveSpectrum
from quadnet.curvature import descent_contraction as descent_contraction
from quadnet.curvature import effective_hessian as effective_hessian
from quadnet.curvature import effective_spectrum as effective_spectrum
from quadnet.curvature import flow_decay_rate as flow_decay_rate
# sensing (§4)
from quadnet.sensing import GaussianSensing as GaussianSensing
from quadnet.sensing import PopulationInverse as PopulationInverse
from quadnet.sensing import inverse_population_normal_operator as inverse_population_normal_operator
from quadnet.sensing import population_effective_hessian as population_effective_hessian
from quadnet.sensing import population_normal_operator as population_normal_operator
from quadnet.sensing import recover as recover
from quadnet.sensing import sufficient_sample_size as sufficient_sample_size
from quadnet.sensing import trace_min_sdp as trace_min_sdp
# commuting measurements (§5)
from quadnet.commuting import CommutingSensing as CommutingSensing
from quadnet.commuting import bregman_divergence as bregman_divergence
from quadnet.commuting import bregman_projection as bregman_projection
from quadnet.commuting import greedy_low_rank_learning as greedy_low_rank_learning
from quadnet.commuting import min_trace_solution as min_trace_solution
from quadnet.commuting import small_init_limit as small_init_limit
# features (§6)
from quadnet.features import Dataset as Dataset
from quadnet.features import DeepLinearNet as DeepLinearNet
from quadnet.features import QuadraticNet as QuadraticNet
from quadnet.features import RecursiveFeatureMachine as RecursiveFeatureMachine
from quadnet.features import agop as agop
from quadnet.features import effective_rank as effective_rank
from quadnet.features import fact_matrix as fact_matrix
from quadnet.features import modular_arithmetic as modular_arithmetic
from quadnet.features import sparse_parity as sparse_parity
from quadnet.features import train as train
# errors
from quadnet.exceptions import DivergenceError as DivergenceError

try:
    __version__ = _version("quadnet")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

_aliases.install()

__all__ = [
    # subpackages
    "commuting",
    "curvature",
    "dynamics",
    "exceptions",
    "features",
    "geometry",
    "harness",
    "plotting",
    "losses",
    "sensing",
    # geometry
    "PSDQuotient",
    "align",
    "bures_wasserstein",
    "bw_barycenter",
    "check_manifold",
    # losses and dynamics
    "AutogradLoss",
    "FrobeniusLoss",
    "Loss",
    "MeasurementLoss",
    "Trajectory",
    "congruence_recursion",
    "congruence_step",
    "factorization_flow",
    "gradient_descent",
    "gradient_flow",
    "predictor_flow",
    "pymanopt_problem",
    # curvature
    "EffectiveSpectrum",
    "descent_contraction",
    "effective_hessian",
    "effective_spectrum",
    "flow_decay_rate",
    # sensing
    "GaussianSensing",
    "PopulationInverse",
    "inverse_population_normal_operator",
    "population_effective_hessian",
    "population_normal_operator",
    "recover",
    "sufficient_sample_size",
    "trace_min_sdp",
    # commuting
    "CommutingSensing",
    "bregman_divergence",
    "bregman_projection",
    "greedy_low_rank_learning",
    "min_trace_solution",
    "small_init_limit",
    # features
    "Dataset",
    "DeepLinearNet",
    "QuadraticNet",
    "RecursiveFeatureMachine",
    "agop",
    "effective_rank",
    "fact_matrix",
    "modular_arithmetic",
    "sparse_parity",
    "train",
    # errors
    "DivergenceError",
    # configuration
    "show_config",
]


def show_config(*, probe: bool = False, file=None) -> dict:
    """Print the versions, BLAS/LAPACK builds and thread counts, CPU flags and memory limits
    quadnet runs with (``quadnet doctor``), and return them as a dict; ``probe=True`` also runs
    the crash canaries in child processes (the ``quadnet doctor --probe`` command)."""
    if not isinstance(probe, bool):
        raise TypeError(f"show_config: probe must be True or False, got {probe!r}")
    if file is not None and not callable(getattr(file, "write", None)):
        raise TypeError(f"show_config: file must be None or a text stream with a write "
                        f"method, got {type(file).__name__}")
    from quadnet.harness.doctor import show_config as _show

    return _show(probe=probe, file=file)


def __getattr__(name: str):
    """quadnet 0.1 top-level names that moved: resolved with a ``DeprecationWarning``."""
    return _aliases.top_level(name)


def __dir__():
    return sorted(set(globals()) | set(__all__))
