"""quadnet: the geometry of positive quadratic networks ``f_U(x) = x^T U U^T x``.

The predictor ``Q = U U^T`` lives on the manifold of rank-r PSD matrices, the quotient
of full-rank factors by ``O(r)``; see ``THEORY.md`` for the binding conventions and
``docs/ARCHITECTURE.md`` for the map of modules.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from . import quotient, losses, dynamics, conformance
from .quotient import *  # noqa: F401,F403
from .losses import *  # noqa: F401,F403
from .dynamics import *  # noqa: F401,F403
from .conformance import *  # noqa: F401,F403
# --- feature modules: one import block per module, added below this line ---
from . import curvature, rates
from .curvature import *  # noqa: F401,F403
from .rates import *  # noqa: F401,F403
from . import bregman, commuting
from .bregman import *  # noqa: F401,F403
from .commuting import *  # noqa: F401,F403
from . import sweeps
from .sweeps import *  # noqa: F401,F403
from . import rfm, diagnostics
from .rfm import *  # noqa: F401,F403
from .diagnostics import *  # noqa: F401,F403
from . import fact
from .fact import *  # noqa: F401,F403
from . import sensing
from .sensing import *  # noqa: F401,F403
from . import bounds, recovery, baselines
from .bounds import *  # noqa: F401,F403
from .recovery import *  # noqa: F401,F403
from .baselines import *  # noqa: F401,F403

try:
    __version__ = _version("quadnet")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

__all__ = [
    *quotient.__all__,
    *losses.__all__,
    *dynamics.__all__,
    *conformance.__all__,
    # --- feature modules' __all__, added below this line ---
    *curvature.__all__,
    *rates.__all__,
    *bregman.__all__,
    *commuting.__all__,
    *sweeps.__all__,
    *rfm.__all__,
    *diagnostics.__all__,
    *fact.__all__,
    *sensing.__all__,
    *bounds.__all__,
    *recovery.__all__,
    *baselines.__all__,
]
