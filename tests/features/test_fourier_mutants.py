"""Properties of quadnet.features.fourier against independent references.

Written for mutation testing of ``quadnet/features/fourier.py`` (``scripts/mutation.py
--public-only``): primitive roots against a brute-force order computation, the group orders by
the defining property (the operation becomes a cyclic shift), the circulant score against an
explicit permutation matrix, and the spectrum against a per-frequency loop.
"""

from __future__ import annotations

import numpy as np
import pytest

from quadnet.features.fourier import (
    fourier_spectrum,
    group_circulant_score,
    group_order,
    primitive_root,
)
from quadnet.features.rfm import block_circulant_score

# 3631 - 1 = 2 * 3 * 5 * 11^2: its factor 11 is found only when the trial division runs up to
# q * q == r (the smallest primitive root is then not confused with an element of order 330)
PRIMES = [2, 3, 5, 7, 11, 13, 23, 31, 41, 47, 3631]


def _order(g, p):
    k, x = 1, g % p
    while x != 1:
        x, k = x * g % p, k + 1
    return k


@pytest.mark.parametrize("p", PRIMES)
def test_primitive_root_is_the_smallest_generator(p):
    g = primitive_root(p)
    if p == 2:
        assert g == 1
        return
    assert _order(g, p) == p - 1
    assert all(_order(h, p) < p - 1 for h in range(2, g))


def test_primitive_roots_of_every_prime_below_400():
    # every factor of p - 1 is checked (p - 1 = 2 * 9 for p = 19, 4 * 9 for 37, 8 * 9 * ...)
    primes = [p for p in range(3, 400) if all(p % q for q in range(2, int(p**0.5) + 1))]
    for p in primes:
        g = primitive_root(p)
        assert _order(g, p) == p - 1, p
        assert all(_order(h, p) < p - 1 for h in range(2, g)), p


@pytest.mark.parametrize("p", [4, 6, 8, 9, 15, 21, 25])
def test_primitive_root_refuses_a_composite(p):
    with pytest.raises(ValueError, match=rf"^primitive_root: p must be prime, got {p}$"):
        primitive_root(p)


def _ops(op, p):
    return {"add": lambda a, b: (a + b) % p, "sub": lambda a, b: (a - b) % p,
            "mul": lambda a, b: (a * b) % p, "div": lambda a, b: (a * pow(b, p - 2, p)) % p}[op]


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("p", [3, 5, 7, 11])
def test_group_order_makes_the_operation_a_cyclic_shift(op, p):
    a, b = group_order(p, op)
    m = p if op in ("add", "sub") else p - 1
    assert a.shape == b.shape == (m,)
    assert sorted(a.tolist()) == sorted(b.tolist()) == (list(range(p)) if m == p
                                                          else list(range(1, p)))
    assert a[0] == (0 if m == p else 1) and b[0] == a[0]
    f = _ops(op, p)
    for i in range(m):
        for j in range(m):
            assert f(int(a[i]), int(b[j])) == int(a[(i + j) % m])


def test_group_order_of_two_and_composites():
    for op in ("mul", "div"):
        a, b = group_order(2, op)
        assert a.tolist() == b.tolist() == [1]
    with pytest.raises(ValueError, match=r"p must be prime, got 9$"):
        group_order(9, "mul")
    assert group_order(9, "add")[0].tolist() == list(range(9))


def _perm(p, op):
    a, b = group_order(p, op)
    idx = np.concatenate([a, p + b])
    P = np.zeros((len(idx), 2 * p))
    P[np.arange(len(idx)), idx] = 1.0
    return P, len(a)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_group_circulant_score_is_the_score_after_the_permutation(op):
    p = 7
    rng = np.random.default_rng(0)
    R = rng.standard_normal((2 * p, 2 * p))
    M = R @ R.T
    P, m = _perm(p, op)
    assert group_circulant_score(M, p, op) == pytest.approx(block_circulant_score(P @ M @ P.T, m),
                                                           rel=1e-12)
    # a character of the group: score 1
    a, b = group_order(p, op)
    chi = np.exp(2j * np.pi * np.arange(m) / m)
    v = np.zeros(2 * p, complex)
    v[a], v[p + b] = chi, chi
    assert group_circulant_score(np.real(np.outer(v, v.conj())), p, op) == pytest.approx(
        1.0, abs=1e-12)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("block", ["cross", "diag"])
def test_fourier_spectrum_against_a_per_frequency_loop(op, block):
    p = 7
    rng = np.random.default_rng(1)
    M = rng.standard_normal((2 * p, 2 * p))
    P, m = _perm(p, op)
    Mr = P @ M @ P.T
    B = Mr[:m, m:] if block == "cross" else Mr[:m, :m]
    want = []
    for w in range(m // 2 + 1):
        chi = np.array([np.exp(2j * np.pi * w * t / m) for t in range(m)])
        want.append(abs(chi.conj() @ B @ chi) / m)
    got = fourier_spectrum(M, p, op, block)
    assert got.shape == (m // 2 + 1,)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)
    if block == "cross":
        np.testing.assert_allclose(fourier_spectrum(M, p, op), got)


def test_fourier_spectrum_closed_forms():
    np.testing.assert_allclose(fourier_spectrum(np.eye(10), 5, "add", block="diag"), [1, 1, 1])
    np.testing.assert_allclose(fourier_spectrum(np.eye(10), 5, "add"), [0, 0, 0], atol=1e-15)
    t = np.arange(5)
    v = np.concatenate([np.cos(4 * np.pi * t / 5)] * 2)
    np.testing.assert_allclose(fourier_spectrum(np.outer(v, v), 5, "add"), [0, 0, 1.25],
                               atol=1e-12)


def test_refusals():
    with pytest.raises(ValueError, match=r"^group_circulant_score: M must be 2p x 2p = 6 x 6 for "
                                         r"p=3, got \(4, 4\)$"):
        group_circulant_score(np.eye(4), 3, "add")
    with pytest.raises(ValueError, match=r"^fourier_spectrum: block must be one of 'cross', "
                                         r"'diag', got 'x'$"):
        fourier_spectrum(np.eye(6), 3, "add", "x")
