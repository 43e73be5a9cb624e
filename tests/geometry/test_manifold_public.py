"""PSDQuotient's public methods, option by option, against independent references (the
lift against the dense minimum-norm least-squares solution of xi U^T + U xi^T = Qdot).

Tolerances: the dense solve and the closed form agree to rounding of a (dr x d^2) least-squares
problem with condition number <= 1e3 here, so 1e-10 relative."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import quadnet as qn
from quadnet.testing import dense_differential

RNG = np.random.default_rng(13)


def _dense_lift(U, Qdot):
    """Minimum-norm least squares of vec(xi U^T + U xi^T) = vec(Qdot) over xi (d x r)."""
    xi, *_ = np.linalg.lstsq(dense_differential(U), Qdot.ravel(), rcond=1e-12)
    return xi.reshape(U.shape)


@pytest.mark.parametrize("rank", [1, 2])
def test_lift_is_the_dense_minimum_norm_solution_and_reports_the_residual(rank):
    M = qn.PSDQuotient(4, 2)
    U = RNG.standard_normal((4, 2))
    if rank == 1:
        U[:, 1] = 0.5 * U[:, 0]
    S = RNG.standard_normal((4, 4))
    Qdot = S + S.T
    xi, res = M.lift(U, Qdot, return_residual=np.True_)           # a numpy bool is a bool
    ref = _dense_lift(U, Qdot)
    assert np.allclose(xi, ref, rtol=0, atol=1e-10 * np.linalg.norm(ref))
    P = U @ np.linalg.pinv(U)
    assert res == pytest.approx(np.linalg.norm((np.eye(4) - P) @ Qdot @ (np.eye(4) - P)),
                                rel=1e-10)
    assert isinstance(M.lift(U, Qdot), np.ndarray)               # no residual by default
    msg = (f"Qdot is not in the image of D pi(U): ||(I - Pi) Qdot (I - Pi)||_F = {res:.3e} > "
           f"1e-10 ||Qdot||_F (U has rank {rank})")
    with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
        M.lift(U, Qdot, exact=np.True_)


def test_lift_exact_threshold_is_relative_to_qdot():
    """A tangent Qdot plus an off-image part of relative size 1e-12 is exact enough at any
    scale of Qdot (the threshold is 1e-10 ||Qdot||_F)."""
    M = qn.PSDQuotient(4, 2)
    U = RNG.standard_normal((4, 2))
    xi = RNG.standard_normal((4, 2))
    T = xi @ U.T + U @ xi.T
    n = np.linalg.svd(U)[0][:, 2:]                                # the normal space of range U
    off = n @ np.diag([1.0, -1.0]) @ n.T
    for scale in (1e-6, 1.0, 1e6):
        Qdot = scale * (T + 1e-12 * np.linalg.norm(T) * off / np.linalg.norm(off))
        out = M.lift(U, Qdot, exact=True)
        assert np.allclose(out, scale * M.horizontal_projection(U, xi), rtol=0,
                           atol=1e-8 * scale * np.linalg.norm(xi))


def test_lift_refuses_bad_flags_shapes_and_overflow_by_name():
    M = qn.PSDQuotient(3, 2)
    U = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    with pytest.raises(TypeError, match=r"^exact must be a bool, got str$"):
        M.lift(U, np.eye(3), exact="yes")
    with pytest.raises(TypeError, match=r"^return_residual must be a bool, got int$"):
        M.lift(U, np.eye(3), return_residual=1)
    with pytest.raises(ValueError, match=r"^Qdot must be \(3, 3\), got shape \(2, 2\)$"):
        M.lift(U, np.eye(2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match=r"^lift: the result is not finite \(overflow of "
                                             r"finite inputs\)$"):
            M.lift(1e-200 * U, 1e300 * np.diag([1.0, 1.0, 0.0]))
