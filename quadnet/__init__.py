"""quadnet: the geometry of positive quadratic networks ``f_U(x) = x^T U U^T x``.

The predictor ``Q = U U^T`` lives on the manifold of rank-r PSD matrices, the quotient
of full-rank factors by ``O(r)``; see ``THEORY.md`` for the binding conventions and
``docs/ARCHITECTURE.md`` for the map of modules.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from . import (
    baselines,
    bounds,
    bregman,
    commuting,
    conformance,
    curvature,
    diagnostics,
    dynamics,
    fact,
    losses,
    population,
    quotient,
    rates,
    recovery,
    rfm,
    sensing,
    sweeps,
)
from .baselines import *
from .bounds import *
from .bregman import *
from .commuting import *
from .conformance import *
from .curvature import *
from .diagnostics import *
from .dynamics import *
from .fact import *
from .losses import *
from .population import *
from .quotient import *
from .rates import *
from .recovery import *
from .rfm import *
from .sensing import *
from .sweeps import *

try:
    __version__ = _version("quadnet")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

#: The public API: the union of the feature modules' ``__all__`` (one module per THEORY.md section).
_MODULES = (quotient, losses, dynamics, conformance, sensing, bounds, recovery, baselines,
            curvature, population, rates, commuting, bregman, fact, rfm, diagnostics, sweeps)
__all__ = [name for module in _MODULES for name in module.__all__]
