"""FACT, bFACT and AGOP for quadratic and deep linear networks (quadnet theory §6).

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
``WᵀW − FACT = U(∇_U J)ᵀ/λ`` as in quadnet theory §6; :func:`fact_identity` reports the
cosines and errors of both identities, the bound and the gradient norm (the matrices come from
:func:`fact_matrix` and :func:`bfact_matrix`).

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

Training (:func:`~quadnet.features.training.train`) lives in :mod:`quadnet.features.training`;
the paper check in :mod:`quadnet.harness.checks.fact`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from quadnet._docstrings import fill
from quadnet._linalg import cosine as _cosine
from quadnet._linalg import eigh_power as _eigh_power
from quadnet._linalg import psd_eigh as _psd_eigh
from quadnet._linalg import psd_power as _psd_power
from quadnet._linalg import sym
from quadnet._validation import (
    Array,
    Converted,
    Instance,
    Integer,
    Optional,
    Real,
    Relation,
    Symmetric,
    _overflow_error,
    as_array,
    as_int,
    as_matrix,
    as_positive,
    name_callable,
    validate_params,
)


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

    Examples
    --------
    >>> TrainInfo(grad_norm=1e-10, objective=0.5, converged=True, gtol=1e-9, n_iter=3).converged
    True
    """

    grad_norm: float
    objective: float
    converged: bool
    gtol: float
    n_iter: int
    stages: tuple = ()
    message: str = ""


class _CheckedNet:
    """Runs the net's ``_check`` after the dataclass fields are set; a refusal names the class
    (``QuadraticNet: W must be ...``)."""

    def __post_init__(self):
        try:
            self._check()
        except (TypeError, ValueError) as exc:
            raise name_callable(exc, type(self).__name__) from None


@dataclass(frozen=True, eq=False)
class QuadraticNet(_CheckedNet):
    r"""Two-layer quadratic-activation network (quadnet theory §0, §6).

    .. math:: f(x) = \sum_j a_j (w_j^\top x)^2 = x^\top W^\top D_a W x

    ``W`` is ``width x d`` (row ``j`` is neuron ``w_j``); ``a`` (length ``width``) is fixed
    and not trained; ``a=None`` means ``a = 1``, the positive network ``f_U`` with ``U = W^T``.
    ``info`` is set on nets returned by :func:`train`.

    Parameters
    ----------
    W : array_like, shape (width, d)
        First-layer weights.
    a : array_like, shape (width,), optional
        Fixed output weights (default all 1).
    info : TrainInfo, optional
        Training report.

    Raises
    ------
    TypeError, ValueError
        For non-finite or mis-shaped weights.

    Examples
    --------
    >>> import numpy as np
    >>> net = QuadraticNet(np.eye(2))
    >>> net(np.array([[1.0, 2.0]])).tolist()          # 1^2 + 2^2
    [5.0]
    >>> net.Q.tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """

    W: np.ndarray
    a: np.ndarray | None = None
    info: TrainInfo | None = field(default=None, compare=False)

    def _check(self):
        _INFO.convert(self.info, "info", {})
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
        return sym(Q)

    def __call__(self, X) -> np.ndarray:
        X = _check_X(X, self.d)
        with np.errstate(over="ignore", invalid="ignore"):
            out = (X @ self.W.T) ** 2 @ self.a
        return _finite_output(out, "QuadraticNet.__call__: the output", {"X": X, "W": self.W})

    def params(self) -> tuple[np.ndarray, ...]:
        """The trained weights (``W`` only: ``a`` is fixed)."""
        return (self.W,)

    def with_params(self, params, info: TrainInfo | None = None) -> QuadraticNet:
        """The same net with weights ``params = (W,)`` (as :meth:`params` returns them).

        Examples
        --------
        >>> import numpy as np
        >>> float(QuadraticNet(np.eye(2)).with_params((2 * np.eye(2),)).W[0, 0])
        2.0
        """
        try:
            W, = _param_tuple(params, 1)
            W = as_matrix(W, "params[0]")
            if W.shape[0] != self.width:
                raise ValueError(f"params[0] must have {self.width} rows (one per output "
                                 f"weight a_j), got shape {W.shape}")
            _INFO.convert(info, "info", {})
        except (TypeError, ValueError) as exc:
            raise name_callable(exc, "QuadraticNet.with_params") from None
        return QuadraticNet(W, self.a, info)


@dataclass(frozen=True, eq=False)
class DeepLinearNet(_CheckedNet):
    r"""Deep linear network ``f(x) = W_L ... W_2 W_1 x`` with ``Ws[0] = W_1`` (``d_1 x d``).

    Outputs are ``c = Ws[-1].shape[0]``-dimensional; ``__call__`` returns an ``n x c`` array
    (quadnet theory §6).

    Parameters
    ----------
    Ws : tuple of array_like
        The layers, ``Ws[l]`` of shape ``(d_{l+1}, d_l)`` (consecutive shapes must chain).
    info : TrainInfo, optional
        Training report.

    Raises
    ------
    TypeError, ValueError
        For non-finite weights or shapes that do not chain.

    Examples
    --------
    >>> import numpy as np
    >>> net = DeepLinearNet((np.eye(2), np.array([[1.0, 1.0]])))
    >>> net(np.array([[1.0, 2.0]])).tolist(), net.depth
    ([[3.0]], 2)
    """

    Ws: tuple
    info: TrainInfo | None = field(default=None, compare=False)

    def _check(self):
        _INFO.convert(self.info, "info", {})
        if isinstance(self.Ws, np.ndarray) or not hasattr(self.Ws, "__len__"):
            raise TypeError("Ws must be a sequence of matrices (Ws[0] is the first layer)")
        if len(self.Ws) < 1:
            raise ValueError("Ws must contain at least one matrix")
        Ws = []
        for k, Wl in enumerate(self.Ws):
            Wl = as_matrix(Wl, f"Ws[{k}]").copy()
            if Wl.size == 0:
                raise ValueError(f"Ws[{k}] must be non-empty, got shape {Wl.shape}")
            if k > 0 and Wl.shape[1] != Ws[-1].shape[0]:
                raise ValueError(f"Ws[{k}] must have {Ws[-1].shape[0]} columns (the output size "
                                 f"of Ws[{k - 1}]), got shape {Wl.shape}")
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
        with np.errstate(over="ignore", invalid="ignore"):
            out = X @ self.P.T
        return _finite_output(out, "DeepLinearNet.__call__: the output", {"X": X})

    def params(self) -> tuple[np.ndarray, ...]:
        return self.Ws

    def with_params(self, params, info: TrainInfo | None = None) -> DeepLinearNet:
        """The same architecture with weights ``params = (W_1, ..., W_L)``.

        Examples
        --------
        >>> import numpy as np
        >>> net = DeepLinearNet((np.eye(2), np.ones((1, 2))))
        >>> net.with_params((np.eye(2), 2 * np.ones((1, 2)))).P.tolist()
        [[2.0, 2.0]]
        """
        try:
            Ws = _param_tuple(params, self.depth)
            _INFO.convert(info, "info", {})
            net = object.__new__(DeepLinearNet)
            object.__setattr__(net, "Ws", Ws)
            object.__setattr__(net, "info", info)
            net._check()
        except (TypeError, ValueError) as exc:  # name the argument passed here
            raise name_callable(type(exc)(str(exc).replace("Ws[", "params[")),
                                "DeepLinearNet.with_params") from exc
        return net


# ----------------------------------------------------------------------------- checks


#: The ``info`` of a net: a :class:`TrainInfo` or ``None``.
_INFO = Optional(Instance(TrainInfo, "a TrainInfo or None"))


def _finite_output(out: np.ndarray, what: str, args: dict) -> np.ndarray:
    """``out`` if finite, else a :class:`NonFiniteResultError` naming the extreme arguments."""
    if not np.all(np.isfinite(out)):
        raise _overflow_error(what, args, "rescale the inputs or weights")
    return out


def _param_tuple(params, k: int) -> tuple:
    if isinstance(params, (str, bytes, np.ndarray)) or not hasattr(params, "__len__"):
        raise TypeError(f"params must be a tuple of {k} weight matrices, got "
                        f"{type(params).__name__}")
    if len(params) != k:
        raise ValueError(f"params must hold {k} weight matrices, got {len(params)}")
    return tuple(params)


def _check_X(X, d: int) -> np.ndarray:
    X = as_matrix(X, "X")
    if X.shape[1] != d:
        raise ValueError(f"X must have shape (n, {d}) to match the net's input size, got {X.shape}")
    if X.shape[0] == 0:
        raise ValueError("X must contain at least one sample")
    return X


def _data_fits(args) -> str | None:
    """The relation of a net's data: ``X`` is ``n × d`` with ``n >= 1``, ``y`` one entry per
    sample (quadratic) or ``n × c`` (deep linear; ``(n,)`` for ``c = 1``)."""
    net, X, y = args["net"], args["X"], args["y"]
    if X.shape[1] != net.d:
        return f"X must have shape (n, {net.d}) to match the net's input size, got {X.shape}"
    n = X.shape[0]
    if n == 0:
        return "X must contain at least one sample"
    if y is None:
        return None
    if isinstance(net, QuadraticNet):
        return None if y.shape == (n,) else f"y must have shape ({n},), got {y.shape}"
    if y.shape == (n, net.c) or (net.c == 1 and y.shape == (n,)):
        return None
    return f"y must have shape ({n}, {net.c}) (or ({n},) for one output), got {y.shape}"


def _targets(net, y: np.ndarray) -> np.ndarray:
    """``y`` of checked data as the net's outputs (a column for one deep-linear output)."""
    return y[:, None] if isinstance(net, DeepLinearNet) and y.ndim == 1 else y


#: The table of a net's data (``y`` omitted by :func:`agop`), checked against the net by one
#: relation.
DATA = {"X": Array(ndim=2), "y": Array()}
DATA_FITS = Relation(("net", "X", "y"), _data_fits,
                     "``X`` is ``n × d`` (``n >= 1``, ``d`` the net's input size) and ``y`` "
                     "has one entry (quadratic net) or one row of ``c`` outputs per sample")
X_FITS = Relation(("net", "X"), lambda a: _data_fits({**a, "y": None}),
                  "``X`` is ``n × d`` (``n >= 1``, ``d`` the net's input size)")


#: A network argument.
NET = Instance((QuadraticNet, DeepLinearNet), "a QuadraticNet or DeepLinearNet")
_POS = Real(0, None, closed="neither")


def _layer_in_range(a: dict):
    """The relation of a ``layer`` argument: a layer of ``net``."""
    net, layer = a["net"], a["layer"]
    top = 0 if isinstance(net, QuadraticNet) else net.depth - 1
    if layer > top:
        kind = "a QuadraticNet has one trained layer (0)" if top == 0 else \
            f"this DeepLinearNet has layers 0..{top}"
        return f"layer must be in 0..{top}: {kind}; got {layer}"
    return None


_LAYER = [Relation(("net", "layer"), _layer_in_range, "layer is a layer of net (0 .. depth - 1)")]


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
    return sym(C)


# ----------------------------------------------------------------------------- FACT / bFACT / AGOP

#: Parameter entries that :func:`fact_matrix` and :func:`agop` document identically.
_DOC = {
    "net": """net : QuadraticNet or DeepLinearNet
    The network.""",
    "X": """X : array_like, shape (n, d)
    Inputs.""",
    "layer": """layer : int, default 0
    Layer index (``0 <= layer < depth``).""",
}


@validate_params({"net": NET} | DATA | {"lam": _POS, "layer": Integer(0)},
                 relations=[DATA_FITS, *_LAYER])
@fill(_DOC)
def fact_matrix(net, X, y, lam, layer: int = 0) -> np.ndarray:
    r"""The FACT matrix of layer ``layer`` (Boix-Adsera, Mallinar, Simon & Belkin 2025).

    .. math:: \mathrm{FACT} = -\frac{1}{n \lambda} \sum_i (\nabla_h \ell_i)\, h_i^\top

    (quadnet theory §6). Quadratic net: ``-(2/lambda) Q_a C``; deep linear net:
    ``-(1/lambda) W_l^T A^T R B^T`` (module docstring). It equals ``W^T W`` at a critical
    point of ``J`` (the theorem); the matrix is not symmetric elsewhere.

    Parameters
    ----------
    {{net}}
    {{X}}
    y : array_like, shape (n,) or (n, c)
        Targets.
    lam : float
        Weight decay ``> 0``.
    {{layer}}

    Returns
    -------
    numpy.ndarray, shape (d_layer, d_layer)

    Raises
    ------
    TypeError, ValueError
        For a bad net, data, ``lam`` or layer.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); y = np.array([2.0, 2.0])
    >>> net = QuadraticNet(np.eye(2))                  # f(x) = |x|^2 = 1 < y: residual -1
    >>> fact_matrix(net, X, y, 1.0)
    array([[1., 0.],
           [0., 1.]])
    """
    y = _targets(net, y)
    r = _residuals(net, X, y)
    if isinstance(net, QuadraticNet):
        return _over_lam(-2.0 * net.Q @ _moment_C(X, r), lam, "fact_matrix")
    A, Wl, B, R = _linear_parts(net, layer, X, r)
    return _over_lam(-(Wl.T @ A.T @ R @ B.T), lam, "fact_matrix")


@validate_params({"net": NET} | DATA | {"lam": _POS, "layer": Integer(0)},
                 relations=[DATA_FITS, *_LAYER])
def bfact_matrix(net, X, y, lam, layer: int = 0) -> np.ndarray:
    """bFACT of layer ``layer``: ``−(1/(nλ)) Σ_i (W h_i)(∇_{Wh} ℓ_i)ᵀ`` (quadnet theory §6).

    Quadratic net: ``−(2/λ) W C Wᵀ D_a`` (``width × width``). Deep linear net:
    ``−(1/λ) W_l B Rᵀ A``. Equals ``WWᵀ`` at a critical point of ``J``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); y = np.array([2.0, 2.0])
    >>> bfact_matrix(QuadraticNet(np.eye(2)), X, y, 1.0).round(12).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    y = _targets(net, y)
    r = _residuals(net, X, y)
    if isinstance(net, QuadraticNet):
        return _over_lam(-2.0 * (net.W @ _moment_C(X, r) @ net.W.T) * net.a[None, :], lam,
                         "bfact_matrix")
    A, Wl, B, R = _linear_parts(net, layer, X, r)
    return _over_lam(-(Wl @ B @ R.T @ A), lam, "bfact_matrix")


def _over_lam(M: np.ndarray, lam: float, what: str) -> np.ndarray:
    """``M / lam``, refusing an overflow (a tiny but positive ``lam``) instead of ``inf``."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = M / lam
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{what}: lam = {lam:g} is too small: the matrix / lam overflows "
                         f"float64 (max |entry| before dividing {float(np.abs(M).max()):.3g})")
    return out


def _linear_parts(net: DeepLinearNet, layer: int, X, r):
    """``(A, W_l, B, R)`` with ``A = W_L⋯W_{l+1}``, ``B = W_{l−1}⋯W_1``, ``R = (1/n) Σ r_i x_iᵀ``."""
    Ws = net.Ws
    B = _chain(Ws, 0, layer, net.d)
    A = _chain(Ws, layer + 1, net.depth, Ws[layer].shape[0])
    R = r.T @ X / X.shape[0]
    return A, Ws[layer], B, R


@validate_params({"net": NET, "X": DATA["X"], "layer": Integer(0)},
                 relations=[X_FITS, *_LAYER])
@fill(_DOC)
def agop(net, X, layer: int = 0) -> np.ndarray:
    r"""Average gradient outer product with respect to the input of layer ``layer``.

    .. math:: \mathrm{AGOP} = \frac1n \sum_i J_i^\top J_i ,

    ``J_i`` the Jacobian of ``f`` w.r.t. the layer input ``h`` at sample ``i`` (the input ``x``
    for ``layer=0``; quadnet theory §6). Quadratic net: ``grad_x f = 2 Q_a x``, so
    ``AGOP = 4 Q_a Sigma_hat Q_a``. Deep linear net: ``J = W_L ... W_{l+1} W_l`` is constant,
    ``AGOP = J^T J`` (``P^T P`` for layer 0).

    Parameters
    ----------
    {{net}}
    {{X}}
    {{layer}}

    Returns
    -------
    numpy.ndarray, shape (d_layer, d_layer)
        Symmetric PSD.

    Raises
    ------
    TypeError, ValueError
        For a bad net, data or layer.

    Examples
    --------
    >>> import numpy as np
    >>> net = QuadraticNet(np.eye(2))
    >>> agop(net, np.array([[1.0, 0.0], [0.0, 1.0]]))    # 4 Q (X^T X / n) Q = 2 I
    array([[2., 0.],
           [0., 2.]])
    """
    with np.errstate(over="ignore", invalid="ignore"):
        if isinstance(net, QuadraticNet):
            Q = net.Q
            G = 4.0 * Q @ (X.T @ X / X.shape[0]) @ Q
        else:
            J = _chain(net.Ws, layer, net.depth, net.Ws[layer].shape[1])
            G = J.T @ J
        G = sym(G)
    return _finite_output(G, "agop: the AGOP", {"X": X} | {
        f"net.params()[{k}]": W for k, W in enumerate(net.params())})


# ----------------------------------------------------------------------------- comparisons


def _same_shape(a: dict):
    A, B = a["A"], a["B"]
    if A.shape != B.shape:
        return f"A and B must have the same shape, got {A.shape} and {B.shape}"
    return None


@validate_params({"A": Array(allow_empty=True), "B": Array(allow_empty=True)},
                 relations=[Relation(("A", "B"), _same_shape, "A and B have the same shape")])
def cosine(A, B) -> float:
    r"""Frobenius cosine of two arrays of the same shape (quadnet theory §0).

    .. math:: \cos(A, B) = \langle A, B \rangle_F / (\|A\|_F \|B\|_F)

    Parameters
    ----------
    A, B : array_like
        Finite real arrays of the same shape, neither zero.

    Returns
    -------
    float
        In ``[-1, 1]``.

    Raises
    ------
    TypeError, ValueError
        For non-real or non-finite input, a shape mismatch, or a zero array (the cosine is
        undefined).

    Examples
    --------
    >>> import numpy as np
    >>> cosine(np.eye(2), np.array([[2.0, 0.0], [0.0, 2.0]]))
    1.0
    """
    return _cosine(A, B)


@validate_params({"G": Symmetric(), "s": _POS})
def psd_power(G, s) -> np.ndarray:
    r"""``G^s`` of a symmetric positive semidefinite matrix, ``s > 0``.

    .. math:: G^s = V \operatorname{diag}(\lambda^s) V^\top, \qquad G = V \operatorname{diag}(\lambda) V^\top

    Eigenvalues below ``n eps lambda_max`` (rounding of a PSD matrix) are set to zero first;
    a genuinely negative eigenvalue raises. The kernel is ``quadnet._linalg.psd_power``
    (the one implementation of PSD powers and square roots in quadnet).

    Parameters
    ----------
    G : array_like, shape (n, n)
        Symmetric PSD matrix.
    s : float
        Power, ``> 0``.

    Returns
    -------
    numpy.ndarray, shape (n, n)

    Raises
    ------
    TypeError, ValueError
        For a non-symmetric or non-finite ``G``, a negative eigenvalue, ``s <= 0``, or an
        ``s`` whose result overflows float64 (``lambda_max^s > 1e308 / n``: the message names
        ``s`` and ``G``; eigenvalues ``<= 1`` never overflow, and ``lambda^s`` below the
        smallest float rounds to 0).

    Examples
    --------
    >>> import numpy as np
    >>> psd_power(np.diag([4.0, 9.0]), 0.5)
    array([[2., 0.],
           [0., 3.]])
    """
    return _psd_power(G, s, name="G")


def _pair(a: dict):
    """The relation of :func:`nfa_cosines` and :func:`best_nfa_power`."""
    WtW, G = a["WtW"], a["G"]
    n = WtW.shape[0]
    if G.shape != (n, n):
        return f"G must be ({n}, {n}), got shape {G.shape}"
    if not np.any(WtW):
        return "WtW is the zero matrix: its cosine with AGOP^s is undefined"
    return None


_PAIR = {"WtW": Symmetric(), "G": Symmetric()}
_PAIR_REL = Relation(("WtW", "G"), _pair, "G has the shape of WtW, and WtW is not zero")


def _powers(a: dict):
    powers = a["powers"]
    if powers.size == 0:
        return "powers must contain at least one power"
    if np.any(powers <= 0):
        return f"powers must be > 0, got min {powers.min():.3g}"
    return None


def _as_bounds(bounds, name: str) -> tuple[float, float]:
    if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__len__") or len(bounds) != 2:
        raise TypeError(f"{name} must be a pair (lo, hi) of positive numbers, got {bounds!r}")
    lo, hi = (as_positive(b, name) for b in bounds)
    if not lo < hi:
        raise ValueError(f"{name} must satisfy lo < hi, got {bounds}")
    return lo, hi


_BOUNDS = Converted(_as_bounds, "a pair (lo, hi) of finite numbers 0 < lo < hi",
                    bad=[("string", "ab"), ("None", None), ("one number", (0.5,)),
                         ("non-positive", (0.0, 1.0)), ("reversed", (1.0, 0.5)),
                         ("nan", (float("nan"), 1.0))])


@validate_params(_PAIR | {"powers": Array(ndim=1, allow_empty=True)},
                 relations=[_PAIR_REL, Relation(("powers",), _powers, "powers > 0, k >= 1")])

def nfa_cosines(WtW, G, powers) -> np.ndarray:
    r"""``cos(WᵀW, AGOP^s)`` for each ``s`` in ``powers``: the NFA's prediction at power ``s``.

    The neural feature ansatz (Radhakrishnan et al. 2024) predicts ``WᵀW ∝ AGOP^s`` with
    ``s = 1/2``; quadnet theory §6 compares it with FACT.

    Parameters
    ----------
    WtW : array_like, shape (d, d)
        Symmetric, non-zero (the Gram matrix of the first-layer weights).
    G : array_like, shape (d, d)
        Symmetric PSD (the AGOP).
    powers : array_like, shape (k,)
        Powers ``s > 0`` (``k >= 1``).

    Returns
    -------
    numpy.ndarray, shape (k,)

    Raises
    ------
    TypeError, ValueError
        For bad matrices or powers.

    Examples
    --------
    >>> import numpy as np
    >>> G = np.diag([4.0, 1.0])
    >>> nfa_cosines(np.diag([2.0, 1.0]), G, [0.5, 1.0]).round(6)
    array([1.      , 0.976187])
    """
    w, V = _psd_eigh(G, name="G")   # one eigendecomposition serves every power
    return np.array([_cosine(WtW, _eigh_power(w, V, float(s), unit=True)) for s in powers])


@validate_params(_PAIR | {"bounds": _BOUNDS}, relations=[_PAIR_REL])
def best_nfa_power(WtW, G, bounds: tuple[float, float] = (0.02, 2.0)) -> tuple[float, float]:
    r"""``argmax_s cos(WᵀW, AGOP^s)`` over ``s`` in ``bounds``, and the maximal cosine.

    A bounded scalar search (scipy ``minimize_scalar``, ``xatol = 1e-6``) after a log grid of
    powers (60, or 20 per decade of ``bounds`` if that is more) to pick the bracket, so a
    multimodal curve cannot trap it and a wide bracket cannot step over the peak (quadnet
    theory §6).

    Parameters
    ----------
    WtW : array_like, shape (d, d)
        Symmetric, non-zero.
    G : array_like, shape (d, d)
        Symmetric PSD (the AGOP).
    bounds : (float, float), default (0.02, 2.0)
        ``0 < lo < hi``.

    Returns
    -------
    (float, float)
        The best power and its cosine.

    Raises
    ------
    TypeError, ValueError
        For bad matrices, or ``bounds`` that are not two finite numbers ``0 < lo < hi``.

    Examples
    --------
    >>> import numpy as np
    >>> s, c = best_nfa_power(np.diag([2.0, 1.0]), np.diag([4.0, 1.0]))
    >>> round(s, 4), round(c, 8)
    (0.5, 1.0)
    """
    from scipy.optimize import minimize_scalar

    lo, hi = bounds
    w, V = _psd_eigh(G, name="G")

    def cos_at(s: float) -> float:   # one eigendecomposition serves every power
        return _cosine(WtW, _eigh_power(w, V, s, unit=True))

    # 60 powers, or 20 per decade for a wider bracket (the cosine peak is about a decade
    # wide; 60 points over (0.02, 1e300) step by 1e5 and miss it)
    grid = np.geomspace(lo, hi, max(60, int(np.ceil(20 * np.log10(hi / lo))) + 1))
    cs = np.array([cos_at(s) for s in grid])
    k = int(np.argmax(cs))
    a, b = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
    res = minimize_scalar(lambda s: -cos_at(s), bounds=(a, b),
                          method="bounded", options={"xatol": 1e-6})
    if -res.fun >= cs[k]:
        return float(res.x), float(-res.fun)
    return float(grid[k]), float(cs[k])
