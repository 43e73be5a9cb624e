r"""Group-Fourier diagnostics of a feature matrix learned on modular arithmetic (quadnet theory §6).

On ``a ∘ b mod p`` with one-hot inputs ``e_a ⊕ e_b`` each operation is addition in a cyclic
group once the residues are put in the right order:

* ``add``: ``Z_p`` in the natural order, ``a + b``;
* ``sub``: ``a + (−b)``, so the ``b`` block is read in the order ``b = −0, −1, −2, …``;
* ``mul``: the multiplicative group ``Z_p^*`` (cyclic of order ``p − 1``, ``p`` prime) in the
  order of the discrete logarithm, ``a = g^0, g^1, …`` for the smallest primitive root ``g``
  (the residue 0 is dropped);
* ``div``: as ``mul`` with the ``b`` block read as ``b = g^{−0}, g^{−1}, …``.

In that order the features RFM learns are the characters ``χ_ω(a) = e^{2πiωa/m}`` of the group
(``m = p`` or ``p − 1``; Boix-Adsera et al. (2025), Mallinar et al. (2024)), and the learned
``M`` is block-circulant. :func:`group_circulant_score` is
:func:`quadnet.features.rfm.block_circulant_score` in that order; :func:`fourier_spectrum`
gives ``λ_ω = |χ_ωᴴ B χ_ω| / m`` for the block ``B = M_ab`` coupling the two operands (or a
diagonal block), i.e. how much of ``M`` each frequency holds.
"""

from __future__ import annotations

import numpy as np

from quadnet._validation import Array, Integer, Options, Relation, memory_guard, validate_params
from quadnet.features.rfm import block_circulant_score

__all__ = ["fourier_spectrum", "group_circulant_score", "group_order", "primitive_root"]

OPS = ("add", "sub", "mul", "div")


@validate_params({"p": Integer(2)})
def primitive_root(p: int) -> int:
    """The smallest primitive root modulo a prime ``p`` (a generator of ``Z_p^*``).

    Examples
    --------
    >>> primitive_root(7), primitive_root(31), primitive_root(47)
    (3, 3, 5)
    """
    if p == 2:
        return 1
    m = p - 1
    factors, q, r = set(), 2, m
    while q * q <= r:
        while r % q == 0:
            factors.add(q)
            r //= q
        q += 1
    if r > 1:
        factors.add(r)
    for g in range(2, p):
        if all(pow(g, m // f, p) != 1 for f in factors):
            if pow(g, m, p) != 1:  # p not prime
                break
            return g
    raise ValueError(f"p must be prime, got {p}")


#: Peak bytes of :func:`group_order`: two int64 arrays of length ``p`` and, for mul/div, the
#: Python list of ``p − 1`` ints they are built from (about 36 bytes an entry).
_ORDER_MEMORY = memory_guard(("p",), lambda a: 88 * a["p"], "group_order")


#: The group operations, as a table entry.
OP = Options(*OPS)


@validate_params({"p": Integer(2), "op": OP}, relations=[_ORDER_MEMORY])
def group_order(p: int, op: str) -> tuple[np.ndarray, np.ndarray]:
    """The residues of the ``a`` and ``b`` blocks in the order that makes ``op`` a cyclic shift.

    Returns two integer arrays of length ``m`` (``p`` for add/sub, ``p − 1`` for mul/div): the
    coordinates of ``e_a`` and of ``e_b`` in the group order (see the module docstring).

    Examples
    --------
    >>> [o.tolist() for o in group_order(5, "sub")]
    [[0, 1, 2, 3, 4], [0, 4, 3, 2, 1]]
    >>> [o.tolist() for o in group_order(5, "div")]      # 2 generates Z_5^*
    [[1, 2, 4, 3], [1, 3, 4, 2]]
    """
    if op in ("add", "sub"):
        a = np.arange(p)
        return a, (a if op == "add" else (-a) % p)
    g = primitive_root(p)
    a = np.array([pow(g, t, p) for t in range(p - 1)], dtype=np.int64)
    return a, (a if op == "mul" else np.array([pow(g, (-t) % (p - 1), p)
                                                for t in range(p - 1)], dtype=np.int64))


def _two_blocks(a: dict):
    p, got = a["p"], a["M"].shape
    if got != (2 * p, 2 * p):
        return f"M must be 2p x 2p = {2 * p} x {2 * p} for p={p}, got {got}"
    return None


#: The table of the functions of a feature matrix ``M`` in the group order of ``op``.
_REORDER = {"M": Array(ndim=2), "p": Integer(2), "op": OP}
_BLOCKS = [Relation(("M", "p"), _two_blocks, "M is 2p x 2p")]


def _reorder(M: np.ndarray, p: int, op: str) -> tuple[np.ndarray, int]:
    a, b = group_order(p, op)
    idx = np.concatenate([a, p + b])
    return M[np.ix_(idx, idx)], a.size


@validate_params(_REORDER, relations=_BLOCKS)
def group_circulant_score(M, p: int, op: str) -> float:
    """:func:`quadnet.features.rfm.block_circulant_score` of ``M`` with its coordinates in the
    group order of ``op`` (:func:`group_order`): 1 = the learned features are group characters.

    Examples
    --------
    >>> import numpy as np
    >>> p = 7
    >>> a, b = group_order(p, "mul")
    >>> chi = np.exp(2j * np.pi * np.arange(p - 1) / (p - 1))     # frequency 1 of Z_7^*
    >>> v = np.zeros(2 * p, complex); v[a] = chi; v[p + b] = chi
    >>> M = np.real(np.outer(v, v.conj()))
    >>> round(group_circulant_score(M, p, "mul"), 12), block_circulant_score(M, p) < 0.5
    (1.0, True)
    """
    Mr, m = _reorder(M, p, op)
    return block_circulant_score(Mr, m)


@validate_params(_REORDER | {"block": Options("cross", "diag")}, relations=_BLOCKS)
def fourier_spectrum(M, p: int, op: str, block: str = "cross") -> np.ndarray:
    r"""Frequency content of a block of ``M`` in the group order of ``op``:
    ``λ_ω = |χ_ωᴴ B χ_ω| / m``, ``χ_ω(t) = e^{2πiωt/m}``, for ``ω = 0, …, ⌊m/2⌋``
    (``ω`` and ``m − ω`` give the same value for a real ``B`` and are merged).

    ``block="cross"`` (default): ``B = M_ab``, the coupling of the ``a`` and ``b`` coordinates;
    a feature ``χ_ω(a) + c χ_ω(b)`` (``|c| = 1``) adds ``m`` to ``λ_ω`` and nothing to the other
    frequencies, and ``M = I`` has ``λ = 0``. ``block="diag"``: ``B = M_aa`` (for a circulant
    ``B`` these are its eigenvalues; ``Σ_ω λ_ω`` over all ``m`` is ``tr B``).

    Examples
    --------
    >>> import numpy as np
    >>> np.round(fourier_spectrum(np.eye(10), 5, "add", block="diag"), 12).tolist()
    [1.0, 1.0, 1.0]
    >>> t = np.arange(5); v = np.concatenate([np.cos(4 * np.pi * t / 5)] * 2)
    >>> np.round(fourier_spectrum(np.outer(v, v), 5, "add"), 12).tolist()   # frequency 2 only
    [0.0, 0.0, 1.25]
    """
    Mr, m = _reorder(M, p, op)
    B = Mr[:m, m:] if block == "cross" else Mr[:m, :m]
    t = np.arange(m)
    F = np.exp(2j * np.pi * np.outer(np.arange(m // 2 + 1), t) / m)   # rows χ_ω
    return np.abs(np.einsum("wi,ij,wj->w", F.conj(), B, F)) / m
