"""``quadnet.sensing.population``: the rank rule of ``PopulationInverse`` at its threshold
(found by mutation testing).

Full column rank is ``sigma_min > RANK_RTOL * sigma_max`` (``quadnet._validation``). A
diagonal factor has its diagonal as exact singular values (LAPACK's SVD of a diagonal matrix
is exact), so the threshold can be hit to the last bit: ``sigma_min = fl(RANK_RTOL *
sigma_max)`` is not above it. The argument table tests the rounded ratio
``fl(sigma_min / sigma_max) > RANK_RTOL``, which rounds up for some ``sigma_max`` and lets
such a factor through; the constructor's own test refuses it with its message.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from quadnet._validation import RANK_RTOL
from quadnet.sensing.population import PopulationInverse


def _at_threshold():
    """A ``sigma_max`` in [1, 4] for which the ratio test and the product test disagree."""
    for s0 in np.linspace(1.0, 4.0, 3001):
        s1 = RANK_RTOL * s0
        if s1 / s0 > RANK_RTOL:
            return float(s0), float(s1)
    pytest.skip("no sigma_max in [1, 4] where the rounded ratio exceeds the threshold")


def _diagonal(*s, d=5):
    U = np.zeros((d, len(s)))
    U[np.arange(len(s)), np.arange(len(s))] = s
    return U


def test_a_factor_exactly_at_the_rank_threshold_is_refused_by_name():
    s0, s1 = _at_threshold()
    U = _diagonal(s0, 0.5, s1)          # sigma = (s0, 0.5, s1): the middle one is neither end
    np.testing.assert_array_equal(np.linalg.svd(U, compute_uv=False), [s0, 0.5, s1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")                # the refusal alone, no warning with it
        with pytest.raises(ValueError, match=r"^PopulationInverse: U is numerically rank deficient: "
                                             r"sigma_min/sigma_max = 1\.000e-10 <= 1e-10; the "
                                             r"population inverse needs full column rank$"):
            PopulationInverse(U)


def test_a_factor_just_above_the_rank_threshold_is_accepted():
    s0, s1 = _at_threshold()
    above = float(np.nextafter(s1, np.inf))
    P = PopulationInverse(_diagonal(s0, 0.5, above))
    assert (P.d, P.r) == (5, 3)
    np.testing.assert_array_equal(P.s, [s0, 0.5, above])
    np.testing.assert_array_equal(P.g, P.s ** 2)
