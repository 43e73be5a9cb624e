"""The guarantee chain of ``quadnet.sensing.bounds`` (quadnet theory §4) against its formulas.

Every public function is checked against the closed form written out again here: the sample
count in exact rational arithmetic (``fractions.Fraction`` of the float arguments, so the
ceiling is the exact one), the basin radius, the prescribed step and each field of
:class:`SampleBound`, including the Tu et al. (2016) Lemma 5.4 constant
``sqrt(2 (sqrt 2 - 1))``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from quadnet.sensing.bounds import (
    basin_radius,
    concentration_samples,
    prescribed_step,
    sample_bound,
    sufficient_sample_size,
)

TU = math.sqrt(2.0 * (math.sqrt(2.0) - 1.0))


def _exact_count(d, delta, p):
    m = Fraction(d * (d + 2) * (d + 4) * (d + 6)) / (Fraction(p) * Fraction(delta) ** 2)
    assert abs(m - round(m)) > Fraction(1, 10**6), "too close to an integer for this test"
    return math.ceil(m)


@pytest.mark.parametrize("d, delta, p", [(1, 0.3, 0.1), (3, 0.7, 0.05), (5, 0.013, 0.5),
                                         (12, 1.7, 0.9), (2, 1.1e-3, 0.3)])
def test_concentration_samples_is_the_exact_ceiling(d, delta, p):
    assert concentration_samples(d, delta, p) == _exact_count(d, delta, p)
    assert concentration_samples(d, delta, failure_probability=p) == _exact_count(d, delta, p)


def test_concentration_samples_default_probability_is_one_tenth():
    assert concentration_samples(4, 0.3) == _exact_count(4, 0.3, 0.1)
    assert concentration_samples(3, 0.5) == 37800


def test_concentration_samples_refuses_an_overflowing_count():
    with pytest.raises(ValueError, match=r"delta = 1e-200, failure_probability = 0.1: the sample "
                                         r"count .* overflows float64 at d = 3"):
        concentration_samples(3, 1e-200)


@pytest.mark.parametrize("d", [1, 2, 3, 10, 1000])
def test_basin_radius_and_step_formulas(d):
    rho = math.sqrt(2.0) / (2 * d + 7)
    assert basin_radius(d) == pytest.approx(rho, rel=1e-15)
    for sigma_1 in (1.0, 0.25, 40.0):
        for delta in (0.0, 0.3, 1.0):
            want = (2.0 - delta) / (8.0 * (d + 2.0 + delta) ** 2 * (1.0 + rho) ** 2 * sigma_1)
            assert prescribed_step(d, sigma_1, delta) == pytest.approx(want, rel=1e-14)
        assert prescribed_step(d, sigma_1) == pytest.approx(
            2.0 / (8.0 * (d + 2.0) ** 2 * (1.0 + rho) ** 2 * sigma_1), rel=1e-14)


@pytest.mark.parametrize("d, r, kappa, p", [(3, 1, 1.0, 0.1), (6, 2, 3.0, 0.05),
                                            (10, 10, 1.5, 0.5), (4, 3, 20.0, 0.01)])
def test_sample_bound_fields_follow_the_chain(d, r, kappa, p):
    b = sample_bound(d, r, kappa=kappa, failure_probability=p)
    rho = math.sqrt(2.0) / (2 * d + 7)
    delta = min(1.0, TU * rho / (kappa * math.sqrt(r)))
    alpha, beta = 2.0 - delta, d + 2.0 + delta
    step = alpha / (8.0 * beta ** 2 * (1.0 + rho) ** 2)
    s2 = (math.sqrt(2.0) - rho) ** 2
    assert (b.d, b.r, b.kappa, b.failure_probability) == (d, r, kappa, p)
    for got, want in ((b.rho, rho), (b.delta, delta), (b.alpha, alpha), (b.beta, beta),
                      (b.step, step), (b.flow_rate, alpha * s2 / kappa / 2.0),
                      (b.gd_contraction, 1.0 - step * alpha * s2 / kappa / 2.0)):
        assert got == pytest.approx(want, rel=1e-13)
    assert 0.0 < b.gd_contraction < 1.0 and b.flow_rate > 0.0
    m = Fraction(d * (d + 2) * (d + 4) * (d + 6)) / (Fraction(p) * Fraction(b.delta) ** 2)
    assert b.m == math.ceil(m)
    assert sufficient_sample_size(d, r, kappa=kappa, failure_probability=p) == b.m


def test_sample_bound_defaults_are_kappa_one_and_one_tenth():
    b = sample_bound(5, 2)
    assert (b.kappa, b.failure_probability) == (1.0, 0.1)
    assert sufficient_sample_size(5, 2) == b.m
    # a worse condition number or a smaller failure probability needs more samples
    assert sufficient_sample_size(5, 2, kappa=2.0) > b.m
    assert sufficient_sample_size(5, 2, failure_probability=0.01) > b.m
    assert sufficient_sample_size(3, 1) == 963905
