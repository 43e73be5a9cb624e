"""Dense references of the quotient geometry shared by tests in several folders (they share no
code with the package).

Test modules import it as ``from _geometry_reference import ...``: pytest's default
``prepend`` import mode puts the folder of ``tests/conftest.py`` (this folder, which has no
``__init__.py``) on ``sys.path`` when it loads that conftest, before it imports any test
module below it.
"""

from __future__ import annotations

import itertools

import numpy as np


def horizontal_projection(U, Z):
    """``Z - U Omega``, ``Omega`` skew with ``G Omega + Omega G = U^T Z - Z^T U`` (``G = U^T U``),
    the Lyapunov equation solved densely by Kronecker products (column-major ``vec``)."""
    r = U.shape[1]
    G = U.T @ U
    K = np.kron(np.eye(r), G) + np.kron(G, np.eye(r))
    rhs = U.T @ Z - Z.T @ U
    omega = np.linalg.solve(K, rhs.reshape(-1, order="F")).reshape(r, r, order="F")
    return Z - U @ omega


def vertical_generators(U):
    """The rows ``vec(U (E_ab - E_ba))`` (row-major ``vec``), ``a < b`` in lexicographic order:
    an ``r(r-1)/2 x dr`` array. They span the vertical space ``{U Omega : Omega skew}``, and
    the row of ``(a, b)`` applied to ``vec(xi)`` is ``(U^T xi)_ab - (U^T xi)_ba``, so their
    null space is the horizontal space."""
    d, r = U.shape
    rows = np.zeros((r * (r - 1) // 2, d * r))
    for row, (a, b) in zip(rows, itertools.combinations(range(r), 2)):
        C = np.zeros((d, r))
        C[:, b] = U[:, a]          # (U^T xi)_ab = sum_i U_ia xi_ib
        C[:, a] = -U[:, b]
        row[:] = C.reshape(-1)
    return rows
