"""FACT, bFACT and AGOP for quadratic and deep linear networks (THEORY.md §6).

The *Features at Convergence Theorem* (FACT): if ``θ`` is a critical point of the
weight-decayed objective

    J(θ) = (1/n) Σ_i ½‖f(x_i; θ) − y_i‖² + (λ/2)‖θ‖²_F,

and a weight matrix ``W`` enters the model only through ``W h(x)``, then

    WᵀW = FACT := −(1/(nλ)) Σ_i (∇_h ℓ_i) h_iᵀ,     WWᵀ = bFACT := −(1/(nλ)) Σ_i (W h_i)(∇_{Wh} ℓ_i)ᵀ.

Proof in one line: ``∇_W J = λW + (1/n) Σ_i (∇_{Wh}ℓ_i) h_iᵀ`` and ``Wᵀ∇_{Wh}ℓ_i = ∇_h ℓ_i``,
so at *any* point (critical or not)

    WᵀW − FACT = Wᵀ(∇_W J)/λ,       WWᵀ − bFACT = W(∇_W J)ᵀ/λ,                  (★)

which is zero at a critical point and otherwise bounded by ``‖W‖₂ ‖∇_W J‖_F / λ``.
For the positive quadratic network (``a = 1``, ``U = Wᵀ``) (★) reads
``WᵀW − FACT = U(∇_U J)ᵀ/λ`` as in THEORY.md §6; :func:`fact_identity` reports both
sides, the bound and the gradient norm.

The neural feature ansatz (NFA) instead posits ``WᵀW ∝ AGOP^s`` with
``AGOP = (1/n) Σ_i J_f(x_i)ᵀ J_f(x_i)`` (for scalar ``f``: ``∇f ∇fᵀ``).

Closed forms implemented here (derivations in ``docs/fact.md``):

* quadratic network ``f(x) = Σ_j a_j (w_jᵀx)² = xᵀ Q_a x``, ``Q_a = WᵀD_aW``, residuals
  ``r_i = f(x_i) − y_i``, ``C = (1/n) Σ r_i x_i x_iᵀ``, ``Σ̂ = (1/n) Σ x_i x_iᵀ``:
  ``FACT = −(2/λ) Q_a C``, ``bFACT = −(2/λ) W C Wᵀ D_a``, ``AGOP = 4 Q_a Σ̂ Q_a``;
* deep linear network ``f(x) = W_L ⋯ W_1 x`` (``Ws[0] = W_1``), for layer ``l`` write
  ``A = W_L⋯W_{l+1}`` (after), ``B = W_{l−1}⋯W_1`` (before), ``R = (1/n) Σ r_i x_iᵀ``:
  ``FACT_l = −(1/λ) W_lᵀ Aᵀ R Bᵀ``, ``bFACT_l = −(1/λ) W_l B Rᵀ A``,
  ``AGOP = PᵀP`` with ``P = W_L⋯W_1`` (the input gradients do not depend on ``x``).

Training (:func:`train`) lives in :mod:`quadnet._fact_train`; the paper check in
:mod:`quadnet.checks.fact`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from quadnet._validation import as_array, as_int, as_matrix, as_positive, as_symmetric

from quadnet.exceptions import NotCriticalWarning

__all__ = [
    "DeepLinearNet",
    "QuadraticNet",
    "TrainInfo",
    "agop",
    "best_nfa_power",
    "bfact_matrix",
    "cosine",
    "fact_matrix",
    "nfa_cosines",
    "psd_power",
]


@dataclass(frozen=True)
class TrainInfo:
    """Where :func:`train` stopped.

    ``grad_norm`` is the Euclidean norm of the full gradient ``∇_θ J`` (all trained weights),
    ``converged`` is ``grad_norm <= gtol``; ``stages`` lists (method, iterations, grad norm).
    """

    grad_norm: float
    objective: float
    converged: bool
    gtol: float
    n_iter: int
    stages: tuple = ()
    message: str = ""


@dataclass(frozen=True, eq=False)
class QuadraticNet:
    """Two-layer quadratic-activation network ``f(x) = Σ_j a_j (w_jᵀx)² = xᵀ WᵀD_aW x``.

    ``W`` is ``width × d`` (row ``j`` is neuron ``w_j``); ``a`` (length ``width``) is fixed
    and not trained; ``a=None`` means ``a = 1``, the positive network ``f_U`` with ``U = Wᵀ``
    (THEORY.md §0, §6). ``info`` is set on nets returned by :func:`train`.
    """

    W: np.ndarray
    a: np.ndarray | None = None
    info: TrainInfo | None = field(default=None, compare=False)

    def __post_init__(self):
        W = as_matrix(self.W, "W").copy()
        if W.shape[0] == 0 or W.shape[1] == 0:
            raise ValueError(f"W must be a non-empty width x d matrix, got shape {W.shape}")
        if self.a is None:
            a = np.ones(W.shape[0])
        else:
            a = as_array(self.a, "a", ndim=1, shape=(W.shape[0],)).copy()
        W.setflags(write=False)
        a.setflags(write=False)
        object.__setattr__(self, "W", W)
        object.__setattr__(self, "a", a)

    @property
    def width(self) -> int:
        return self.W.shape[0]

    @property
    def d(self) -> int:
        return self.W.shape[1]

    @property
    def Q(self) -> np.ndarray:
        """``Q_a = WᵀD_aW`` (symmetric ``d × d``): ``f(x) = xᵀ Q_a x``."""
        Q = self.W.T @ (self.a[:, None] * self.W)
        return 0.5 * (Q + Q.T)

    def __call__(self, X) -> np.ndarray:
        X = _check_X(X, self.d)
        return (X @ self.W.T) ** 2 @ self.a

    def params(self) -> tuple[np.ndarray, ...]:
        """The trained weights (``W`` only: ``a`` is fixed)."""
        return (self.W,)

    def with_params(self, params, info: TrainInfo | None = None) -> QuadraticNet:
        (W,) = params
        return QuadraticNet(W, self.a, info)


@dataclass(frozen=True, eq=False)
class DeepLinearNet:
    """Deep linear network ``f(x) = W_L ⋯ W_2 W_1 x`` with ``Ws[0] = W_1`` (``d_1 × d``).

    Outputs are ``c = Ws[-1].shape[0]``-dimensional; ``__call__`` returns an ``n × c`` array.
    """

    Ws: tuple
    info: TrainInfo | None = field(default=None, compare=False)

    def __post_init__(self):
        if isinstance(self.Ws, np.ndarray) or not hasattr(self.Ws, "__len__"):
            raise TypeError("Ws must be a sequence of matrices (Ws[0] is the first layer)")
        if len(self.Ws) < 1:
            raise ValueError("Ws must contain at least one matrix")
        Ws = []
        for l, Wl in enumerate(self.Ws):
            Wl = as_matrix(Wl, f"Ws[{l}]").copy()
            if Wl.size == 0:
                raise ValueError(f"Ws[{l}] must be non-empty, got shape {Wl.shape}")
            if l > 0 and Wl.shape[1] != Ws[-1].shape[0]:
                raise ValueError(f"Ws[{l}] must have {Ws[-1].shape[0]} columns (the output size "
                                 f"of Ws[{l - 1}]), got shape {Wl.shape}")
            Wl.setflags(write=False)
            Ws.append(Wl)
        object.__setattr__(self, "Ws", tuple(Ws))

    @property
    def depth(self) -> int:
        return len(self.Ws)

    @property
    def d(self) -> int:
        return self.Ws[0].shape[1]

    @property
    def c(self) -> int:
        return self.Ws[-1].shape[0]

    @property
    def P(self) -> np.ndarray:
        """End-to-end matrix ``P = W_L ⋯ W_1`` (``c × d``)."""
        return _chain(self.Ws, 0, self.depth, self.d)

    def __call__(self, X) -> np.ndarray:
        X = _check_X(X, self.d)
        return X @ self.P.T

    def params(self) -> tuple[np.ndarray, ...]:
        return self.Ws

    def with_params(self, params, info: TrainInfo | None = None) -> DeepLinearNet:
        return DeepLinearNet(tuple(params), info)


# ----------------------------------------------------------------------------- checks


def _check_X(X, d: int) -> np.ndarray:
    X = as_matrix(X, "X")
    if X.shape[1] != d:
        raise ValueError(f"X must have shape (n, {d}) to match the net's input size, got {X.shape}")
    if X.shape[0] == 0:
        raise ValueError("X must contain at least one sample")
    return X


def _check_net(net) -> None:
    if not isinstance(net, (QuadraticNet, DeepLinearNet)):
        raise TypeError(f"net must be a QuadraticNet or DeepLinearNet, got {type(net).__name__}")


def _check_data(net, X, y) -> tuple[np.ndarray, np.ndarray]:
    """``X`` (n × d) and ``y`` as an ``n``-vector (quadratic) or ``n × c`` (deep linear)."""
    _check_net(net)
    X = _check_X(X, net.d)
    n = X.shape[0]
    if isinstance(net, QuadraticNet):
        y = as_array(y, "y", ndim=1, shape=(n,))
    else:
        y = as_array(y, "y")
        if y.ndim == 1 and net.c == 1:
            y = y[:, None]
        if y.shape != (n, net.c):
            raise ValueError(f"y must have shape ({n}, {net.c}) (or ({n},) for one output), "
                             f"got {y.shape}")
    return X, y


def _check_layer(net, layer) -> int:
    layer = as_int(layer, "layer", minimum=0)
    top = 0 if isinstance(net, QuadraticNet) else net.depth - 1
    if layer > top:
        kind = "a QuadraticNet has one trained layer (0)" if top == 0 else \
            f"this DeepLinearNet has layers 0..{top}"
        raise ValueError(f"layer must be in 0..{top}: {kind}; got {layer}")
    return layer


def _chain(Ws, lo: int, hi: int, dim: int) -> np.ndarray:
    """``W_hi ⋯ W_{lo+1}`` in 1-based terms, i.e. ``Ws[hi-1] @ ... @ Ws[lo]``; identity if empty."""
    M = np.eye(dim)
    for Wl in Ws[lo:hi]:
        M = Wl @ M
    return M


# ----------------------------------------------------------------------------- residual statistics


def _residuals(net, X, y) -> np.ndarray:
    """``r_i = f(x_i) − y_i``: shape ``(n,)`` (quadratic) or ``(n, c)`` (deep linear)."""
    return net(X) - y


def _moment_C(X: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``C = (1/n) Σ r_i x_i x_iᵀ`` (symmetric), without forming any ``n × d × d`` array."""
    C = (X * r[:, None]).T @ X / X.shape[0]
    return 0.5 * (C + C.T)


# ----------------------------------------------------------------------------- FACT / bFACT / AGOP


def fact_matrix(net, X, y, lam, layer: int = 0) -> np.ndarray:
    """FACT of layer ``layer``: ``−(1/(nλ)) Σ_i (∇_h ℓ_i) h_iᵀ`` (THEORY.md §6).

    Quadratic net: ``−(2/λ) Q_a C``. Deep linear net: ``−(1/λ) W_lᵀ Aᵀ R Bᵀ`` (see the module
    docstring). Equals ``WᵀW`` at a critical point of ``J``; the matrix is not symmetric
    elsewhere. Shape ``d_in × d_in`` of the layer's input.
    """
    lam = as_positive(lam, "lam")
    X, y = _check_data(net, X, y)
    layer = _check_layer(net, layer)
    r = _residuals(net, X, y)
    if isinstance(net, QuadraticNet):
        return -(2.0 / lam) * net.Q @ _moment_C(X, r)
    A, Wl, B, R = _linear_parts(net, layer, X, r)
    return -(1.0 / lam) * Wl.T @ A.T @ R @ B.T


def bfact_matrix(net, X, y, lam, layer: int = 0) -> np.ndarray:
    """bFACT of layer ``layer``: ``−(1/(nλ)) Σ_i (W h_i)(∇_{Wh} ℓ_i)ᵀ`` (THEORY.md §6).

    Quadratic net: ``−(2/λ) W C Wᵀ D_a`` (``width × width``). Deep linear net:
    ``−(1/λ) W_l B Rᵀ A``. Equals ``WWᵀ`` at a critical point of ``J``.
    """
    lam = as_positive(lam, "lam")
    X, y = _check_data(net, X, y)
    layer = _check_layer(net, layer)
    r = _residuals(net, X, y)
    if isinstance(net, QuadraticNet):
        return -(2.0 / lam) * (net.W @ _moment_C(X, r) @ net.W.T) * net.a[None, :]
    A, Wl, B, R = _linear_parts(net, layer, X, r)
    return -(1.0 / lam) * Wl @ B @ R.T @ A


def _linear_parts(net: DeepLinearNet, layer: int, X, r):
    """``(A, W_l, B, R)`` with ``A = W_L⋯W_{l+1}``, ``B = W_{l−1}⋯W_1``, ``R = (1/n) Σ r_i x_iᵀ``."""
    Ws = net.Ws
    B = _chain(Ws, 0, layer, net.d)
    A = _chain(Ws, layer + 1, net.depth, Ws[layer].shape[0])
    R = r.T @ X / X.shape[0]
    return A, Ws[layer], B, R


def agop(net, X, layer: int = 0) -> np.ndarray:
    """Average gradient outer product ``(1/n) Σ_i J_iᵀ J_i`` w.r.t. the input of layer ``layer``.

    ``J_i`` is the Jacobian of ``f`` w.r.t. the layer input ``h`` at sample ``i`` (the input
    ``x`` for ``layer=0``). Quadratic net: ``∇_x f = 2 Q_a x``, so ``AGOP = 4 Q_a Σ̂ Q_a``.
    Deep linear net: ``J = W_L⋯W_{l+1}W_l`` is constant, ``AGOP = JᵀJ`` (``PᵀP`` for layer 0).
    """
    _check_net(net)
    X = _check_X(X, net.d)
    layer = _check_layer(net, layer)
    if isinstance(net, QuadraticNet):
        Q = net.Q
        G = 4.0 * Q @ (X.T @ X / X.shape[0]) @ Q
    else:
        J = _chain(net.Ws, layer, net.depth, net.Ws[layer].shape[1])
        G = J.T @ J
    return 0.5 * (G + G.T)


# ----------------------------------------------------------------------------- comparisons


def cosine(A, B) -> float:
    """Frobenius cosine ``⟨A,B⟩ / (‖A‖_F ‖B‖_F)`` (THEORY.md §0); ``ValueError`` for a zero matrix."""
    A = as_array(A, "A")
    B = as_array(B, "B")
    if A.shape != B.shape:
        raise ValueError(f"A and B must have the same shape, got {A.shape} and {B.shape}")
    na, nb = np.linalg.norm(A), np.linalg.norm(B)
    if na == 0 or nb == 0:
        which = "A" if na == 0 else "B"
        raise ValueError(f"cosine is undefined: {which} is the zero matrix")
    return float(np.clip(np.vdot(A, B) / (na * nb), -1.0, 1.0))


def psd_power(G, s) -> np.ndarray:
    """``G^s`` of a symmetric PSD matrix via its eigendecomposition (``s > 0``).

    Eigenvalues below ``n·eps·λ_max`` (rounding of a PSD matrix) are set to zero first; a
    genuinely negative eigenvalue raises ``ValueError``.
    """
    G = as_symmetric(G, "G")
    s = as_positive(s, "s")
    w, V = np.linalg.eigh(G)
    tol = G.shape[0] * np.finfo(float).eps * max(abs(w).max(), np.finfo(float).tiny)
    if w.min() < -100 * tol:
        raise ValueError(f"G must be positive semidefinite, smallest eigenvalue {w.min():.3e}")
    w = np.where(w > tol, w, 0.0)
    return (V * w**s) @ V.T


def nfa_cosines(WtW, G, powers) -> np.ndarray:
    """``cos(WᵀW, AGOP^s)`` for each ``s`` in ``powers`` (the NFA's prediction at power ``s``)."""
    powers = as_array(powers, "powers", ndim=1)
    return np.array([cosine(WtW, psd_power(G, float(s))) for s in powers])


def best_nfa_power(WtW, G, bounds: tuple[float, float] = (0.02, 2.0)) -> tuple[float, float]:
    """``argmax_s cos(WᵀW, AGOP^s)`` over ``s ∈ bounds`` and the maximal cosine.

    A bounded scalar search (scipy ``minimize_scalar``, ``xatol = 1e-6``) after a grid of 60
    powers to pick the bracket, so a multimodal curve cannot trap it.
    """
    from scipy.optimize import minimize_scalar

    lo, hi = (as_positive(b, "bounds") for b in bounds)
    if not lo < hi:
        raise ValueError(f"bounds must satisfy lo < hi, got {bounds}")
    grid = np.geomspace(lo, hi, 60)
    cs = nfa_cosines(WtW, G, grid)
    k = int(np.argmax(cs))
    a, b = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
    res = minimize_scalar(lambda s: -cosine(WtW, psd_power(G, s)), bounds=(a, b),
                          method="bounded", options={"xatol": 1e-6})
    if -res.fun >= cs[k]:
        return float(res.x), float(-res.fun)
    return float(grid[k]), float(cs[k])
