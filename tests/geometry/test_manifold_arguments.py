"""The argument handling of ``PSDQuotient``'s methods and the Bures-Wasserstein kernels.

Every array argument of every method, one at a time: a list, an ``int`` array and a
``float32`` array give the same float64 result as the float64 array (values exact in all
three); a NaN, an inf or a wrong shape raises ``ValueError`` naming that argument; a
finite input whose result overflows raises naming the method. The Bures-Wasserstein kernels
against 50-digit mpmath, the PSD test's rounding threshold, and the two routes' switching
conditions (quadnet theory §1, ``docs/stratified.md``).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import quadnet as qn
from quadnet.geometry import manifold as mf

M = qn.PSDQuotient(3, 2)
U0 = np.array([[1.0, 0.5], [0.0, 2.0], [1.5, -1.0]])
V0 = np.array([[2.0, 0.0], [0.5, 1.0], [-1.0, 1.0]])
X0 = np.array([[0.5, 0.0], [1.0, -0.5], [0.0, 1.0]])
W0 = np.array([[0.0, 1.0], [-0.5, 0.5], [1.0, 0.0]])

# method, argument names, arguments (all d x r)
CASES = [
    ("differential", ("U", "xi"), (U0, X0)),
    ("vertical_projection", ("U", "Z"), (U0, X0)),
    ("horizontal_projection", ("U", "Z"), (U0, X0)),
    ("projection", ("point", "vector"), (U0, X0)),
    ("align", ("U", "V"), (U0, V0)),
    ("inner_product", ("point", "tangent_vector_a", "tangent_vector_b"), (U0, X0, W0)),
    ("norm", ("point", "tangent_vector"), (U0, X0)),
    ("dist", ("point_a", "point_b"), (U0, V0)),
    ("exp", ("point", "tangent_vector"), (U0, X0)),
    ("retraction", ("point", "tangent_vector"), (U0, X0)),
    ("log", ("point_a", "point_b"), (U0, V0)),
    ("pair_mean", ("point_a", "point_b"), (U0, V0)),
    ("transport", ("point_a", "point_b", "tangent_vector"), (U0, V0, X0)),
    ("embedding", ("point", "tangent_vector"), (U0, X0)),
    ("euclidean_to_riemannian_gradient", ("point", "euclidean_gradient"), (U0, X0)),
    ("euclidean_to_riemannian_hessian",
     ("point", "euclidean_gradient", "euclidean_hessian", "tangent_vector"), (U0, X0, W0, V0)),
    ("rank", ("U",), (U0,)),
    ("vertical_dimension", ("U",), (U0,)),
    ("predictor", ("U",), (U0,)),
    ("vertical_basis", ("U",), (U0,)),
    ("horizontal_basis", ("U",), (U0,)),
    ("zero_vector", ("point",), (U0,)),
]
IDS = [c[0] for c in CASES]


def _call(method, args):
    return getattr(M, method)(*args)


def _same(a, b):
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and b.dtype == np.float64 and b.shape == a.shape
        np.testing.assert_array_equal(a, b)
    else:
        assert type(a) is type(b) and a == b


@pytest.mark.parametrize("method, names, args", CASES, ids=IDS)
def test_every_array_argument_converts_lists_ints_and_float32(method, names, args):
    ref = _call(method, args)
    for i in range(len(args)):
        for conv in (lambda a: a.tolist(), lambda a: (2 * a).astype(np.int64) / 2,
                     lambda a: a.astype(np.float32)):
            new = list(args)
            new[i] = conv(args[i])
            _same(ref, _call(method, new))
    if isinstance(ref, np.ndarray):
        assert ref.dtype == np.float64


@pytest.mark.parametrize("method, names, args", CASES, ids=IDS)
def test_every_array_argument_refuses_nan_inf_and_shapes_naming_it(method, names, args):
    for i, name in enumerate(names):
        for bad in (np.nan, np.inf):
            new = [a.copy() for a in args]
            new[i][1, 0] = bad
            with pytest.raises(ValueError, match=rf"^PSDQuotient\.{method}: {name} has 1 non-finite entries \(NaN or "
                                                 rf"inf\)$"):
                _call(method, new)
        new = list(args)
        new[i] = np.ones((2, 2))
        with pytest.raises(ValueError, match=rf"^PSDQuotient\.{method}: {name} must have shape \(3, 2\), "
                                             rf"got \(2, 2\)$"):
            _call(method, new)


@pytest.mark.parametrize("method, args", [
    ("exp", (1e308 * np.ones((3, 2)), 1e308 * np.ones((3, 2)))),
    ("retraction", (-1e308 * np.ones((3, 2)), -1e308 * np.ones((3, 2)))),
    ("differential", (1e200 * U0, 1e200 * X0)),
    ("pair_mean", (1e308 * np.ones((3, 2)), 1e308 * np.ones((3, 2)))),
])
def test_an_overflowing_result_of_finite_arguments_names_the_method(method, args):
    with pytest.raises(ValueError, match=rf"^PSDQuotient\.{method}: the result is not finite \(overflow of "
                                         rf"finite inputs\)$"):
        _call(method, args)


def test_retraction_is_the_sum_and_keeps_no_alias():
    W = M.retraction(U0, X0)
    np.testing.assert_array_equal(W, U0 + X0)
    assert W is not U0 and W is not X0
    np.testing.assert_array_equal(M.exp(U0.tolist(), X0), U0 + X0)


def test_rank_deficient_points_are_points():
    U = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]])       # rank 1 < r = 2
    assert M.rank(U) == 1 and M.vertical_dimension(U) == 1
    np.testing.assert_array_equal(M.predictor(U), U @ U.T)
    with pytest.raises(ValueError, match=r"^PSDQuotient\.rank: U must have shape \(3, 2\), got \(3, 1\)$"):
        M.rank(np.ones((3, 1)))


def test_lift_checks_its_point_and_matrix():
    Qdot = M.differential(U0, M.horizontal_projection(U0, X0))
    np.testing.assert_allclose(M.differential(U0, M.lift(U0, Qdot)), Qdot, atol=1e-13)
    with pytest.raises(ValueError, match=r"^PSDQuotient\.lift: U has 1 non-finite entries"):
        M.lift(np.where(U0 == 0.0, np.nan, U0), Qdot)
    with pytest.raises(ValueError, match=r"^PSDQuotient\.lift: Qdot has 9 non-finite entries"):
        M.lift(U0, np.full((3, 3), np.nan))


def test_size_relations_name_both_sizes():
    assert mf._r_at_most_d({"d": 3, "r": 3}) is None
    assert mf._r_at_most_d({"d": 3, "r": 4}) == "r must satisfy 1 <= r <= d, got r = 4 > d = 3"
    assert mf._k_at_most_r({"k": None, "r": 2}) is None
    assert mf._k_at_most_r({"k": 2, "r": 2}) is None
    assert mf._k_at_most_r({"k": 3, "r": 2}) == "k must satisfy 0 <= k <= r, got k = 3 > r = 2"
    with pytest.raises(ValueError, match=r"^PSDQuotient: r must satisfy 1 <= r <= d, got r = 4 > d = 3$"):
        qn.PSDQuotient(3, 4)
    with pytest.raises(ValueError, match=r"^horizontal_dimension: k must satisfy 0 <= k <= r, got k = 3 > r = 2$"):
        mf.horizontal_dimension(4, 2, 3)


def test_finite_is_exact_on_both_paths():
    assert mf._finite(np.array([1.0, -2.0]))
    assert mf._finite(np.array([1e200, 1e200]))        # the dot product overflows: exact fallback
    assert mf._finite(np.zeros(0))
    assert not mf._finite(np.array([1.0, np.nan]))
    assert not mf._finite(np.array([np.inf, 1.0]))
    assert not mf._finite(np.array([1e200, np.inf]))


# ------------------------------------------------------------ Bures-Wasserstein kernels
def _mp_bw(A, B) -> float:
    with mpmath.workdps(50):
        A, B = mpmath.matrix(A.tolist()), mpmath.matrix(B.tolist())
        rA = mpmath.sqrtm(A)
        C = mpmath.sqrtm(rA * B * rA)
        tr = sum(A[i, i] + B[i, i] - 2 * mpmath.re(C[i, i]) for i in range(A.rows))
        return float(mpmath.sqrt(max(tr, 0)))


def test_psd_rounding_threshold_and_message():
    Q = np.diag([1.0, -5e-16, 0.5])                 # -5e-16 >= -10 n eps: rounding, zeroed
    Q_, w, E = mf._psd(Q, "Q1")
    assert Q_ is Q
    np.testing.assert_array_equal(w, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(np.abs(E), np.eye(3)[:, [1, 2, 0]], atol=0)
    w = mf._psd(np.diag([1.0, 6e-15, 0.5]), "Q1")[1]     # 6e-15 <= 10 n eps = 6.7e-15
    np.testing.assert_array_equal(w, [0.0, 0.5, 1.0])
    w = mf._psd(np.diag([1.0, 7e-15, 0.5]), "Q1")[1]
    np.testing.assert_array_equal(w, [7e-15, 0.5, 1.0])
    with pytest.raises(ValueError, match=r"^Q2 must be positive semidefinite, smallest "
                                         r"eigenvalue -1\.000e-14 \(largest 1\.000e\+00\)$"):
        mf._psd(np.diag([1.0, -1e-14, 0.5]), "Q2")
    assert mf._psd(np.zeros((2, 2)), "Q1")[1].tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match=r"smallest eigenvalue -1\.000e-300"):
        mf._psd(np.diag([-1e-300, 0.0]), "Q1")


def test_transport_route_conditions():
    w = np.array([1.0, 2.0])
    E = np.eye(2)
    Q1 = np.diag(w)
    # kappa(Q1) > 1e8 or a far Q2 (||Y||_2 > lambda_min / 4): not applicable
    assert mf._bw_transport(np.diag([1e-9, 1.0]), np.eye(2), np.array([1e-9, 1.0]), E) is None
    assert mf._bw_transport(Q1, np.diag([9.0, 2.0]), w, E) is None
    # first-order Y = X / (l_i + l_j) with X = Q1^1/2 (Q2 - Q1) Q1^1/2: exactly at
    # lambda_min / 4 it is applicable (then d = |sqrt(1.5) - 1|)
    near = np.diag([1.5, 2.0])
    assert mf._bw_transport(Q1, near, w, E) == pytest.approx(math.sqrt(1.5) - 1, rel=1e-14)
    assert mf._bw_transport(Q1, np.diag([1.5000001, 2.0]), w, E) is None
    assert mf._bw_transport(Q1, Q1, w, E) == 0.0
    kap = np.array([1e-8, 1.0])                       # kappa exactly 1e8: not applicable
    assert mf._bw_transport(np.diag(kap), np.diag(kap), kap, E) is None
    kap = np.array([1.0000001e-8, 1.0])
    assert mf._bw_transport(np.diag(kap), np.diag(kap), kap, E) == 0.0
    # the same thresholds at another scale and size: kappa = lambda_max / lambda_min
    for kap in (np.array([2e-8, 2.0]), np.array([1e-8, 0.5, 1.0])):
        Ek = np.eye(kap.size)
        assert mf._bw_transport(np.diag(kap), np.diag(kap), kap, Ek) is None
        k2 = np.array([1.01 * kap[0], *kap[1:]])      # just better conditioned: applicable
        assert mf._bw_transport(np.diag(k2), np.diag(k2), k2, Ek) == 0.0
    c = 4.0                                            # lambda_min / 4 = 1 at Q1 = 4 diag(1, 2)
    assert mf._bw_transport(c * Q1, c * near, c * w, E) == pytest.approx(
        2.0 * (math.sqrt(1.5) - 1), rel=1e-14)
    # the test is on the spectral norm: Y = diag(1/4, 1/4) has Frobenius norm 0.35 > 1/4
    assert mf._bw_transport(np.eye(2), 1.5 * np.eye(2), np.ones(2), E) == pytest.approx(
        math.sqrt(2.0) * (math.sqrt(1.5) - 1), rel=1e-14)


@pytest.mark.parametrize("seed", range(4))
def test_transport_route_against_mpmath(seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((3, 3))
    Q1 = A @ A.T + 0.5 * np.eye(3)
    H = rng.standard_normal((3, 3))
    for step in (1e-1, 1e-3, 1e-8):
        Q2 = Q1 + step * (H + H.T)
        w, E = np.linalg.eigh(Q1)
        d = mf._bw_transport(Q1, Q2, w, E)
        ref = _mp_bw(Q1, Q2)
        if step < 1e-2:                                 # near: the transport route applies
            assert d is not None
        if d is not None:
            assert d == pytest.approx(ref, rel=1e-12)
        assert qn.bures_wasserstein(Q1, Q2) == pytest.approx(ref, rel=1e-10)
        assert qn.bures_wasserstein(Q2, Q1) == pytest.approx(ref, rel=1e-10)


def test_factor_route_and_singular_points_against_mpmath():
    rng = np.random.default_rng(9)
    A = rng.standard_normal((3, 2))
    Q1 = A @ A.T                                      # rank 2: factor route
    B = rng.standard_normal((3, 3))
    Q2 = B @ B.T
    with mpmath.workdps(50):   # tr (Q1^1/2 Q2 Q1^1/2)^1/2 = sum sigma(Q2^1/2 A) for Q1 = A A^T
        S = mpmath.sqrtm(mpmath.matrix(Q2.tolist())) * mpmath.matrix(A.tolist())
        nuc = sum(mpmath.svd_r(S, compute_uv=False))
        ref = float(mpmath.sqrt(np.trace(Q1) + mpmath.fsum(Q2[i, i] for i in range(3))
                                - 2 * nuc))
    assert qn.bures_wasserstein(Q1, Q2) == pytest.approx(ref, rel=1e-8)
    assert qn.bures_wasserstein(Q2, Q1) == pytest.approx(ref, rel=1e-8)
    # one zero matrix: d^2 = tr Q
    assert qn.bures_wasserstein(np.zeros((3, 3)), Q2) == pytest.approx(math.sqrt(np.trace(Q2)),
                                                                        rel=1e-15)
    assert qn.bures_wasserstein(Q2, np.zeros((3, 3))) == pytest.approx(math.sqrt(np.trace(Q2)),
                                                                        rel=1e-15)
    assert qn.bures_wasserstein(np.zeros((2, 2)), np.zeros((2, 2))) == 0.0
    # far apart, well conditioned: factor route after the transport test fails
    Q3 = np.diag([1.0, 2.0, 3.0])
    assert qn.bures_wasserstein(Q3, 100 * Q3) == pytest.approx(9 * math.sqrt(6.0), rel=1e-14)


def test_the_manifolds_rank_tolerance_is_the_one_its_kernels_use():
    from quadnet.geometry import _kernels as K
    rng = np.random.default_rng(2)
    Q, _ = np.linalg.qr(rng.standard_normal((4, 3)))
    U = Q * np.array([1.0, 1e-5, 1e-6])                 # rank 1 at rank_rtol = 1e-3
    Z, G, H, xi = (rng.standard_normal((4, 3)) for _ in range(4))
    loose, strict = qn.PSDQuotient(4, 3, rank_rtol=1e-3), qn.PSDQuotient(4, 3)
    fr = K.frame(U, 1e-3)
    np.testing.assert_allclose(loose.vertical_projection(U, Z), K.vertical_part(fr, Z),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(loose.euclidean_to_riemannian_hessian(U, G, H, xi),
                               K.horizontal_part(fr, H - G @ K.vertical_generator(fr, xi)),
                               rtol=1e-12, atol=1e-12)
    # the tolerance matters here: the strict manifold sees rank 3 and projects differently
    assert np.abs(loose.vertical_projection(U, Z) - strict.vertical_projection(U, Z)).max() > 0.1


def test_random_tangent_vector_names_its_point():
    with pytest.raises(ValueError, match=r"^PSDQuotient\.random_tangent_vector: point has 1 non-finite entries "
                                         r"\(NaN or inf\)$"):
        M.random_tangent_vector(np.where(U0 == 0.0, np.nan, U0))
    with pytest.raises(ValueError, match=r"^PSDQuotient\.random_tangent_vector: point must have shape \(3, 2\), "
                                         r"got \(2, 2\)$"):
        M.random_tangent_vector(np.ones((2, 2)))


def test_psd_threshold_is_strict_on_both_sides():
    # noise = 10 n eps lambda_max = 20 eps exactly for n = 2, lambda_max = 1: an eigenvalue of
    # exactly -noise is rounding (kept as PSD), one of exactly +noise is zeroed
    eps = np.finfo(float).eps
    np.testing.assert_array_equal(mf._psd(np.diag([1.0, -20 * eps]), "Q1")[1], [0.0, 1.0])
    np.testing.assert_array_equal(mf._psd(np.diag([1.0, 20 * eps]), "Q1")[1], [0.0, 1.0])
    np.testing.assert_array_equal(mf._psd(np.diag([1.0, 21 * eps]), "Q1")[1], [21 * eps, 1.0])
    with pytest.raises(ValueError, match=r"^Q1 must be positive semidefinite"):
        mf._psd(np.diag([1.0, -21 * eps]), "Q1")


def test_riemannian_hessian_refuses_an_overflow_by_name_also_under_warnings_as_errors():
    import warnings

    M3 = qn.PSDQuotient(3, 3)
    U = np.eye(3)
    xi = np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    # ehess - egrad Omega = -1.7e308 - 1e308 overflows; every input is finite
    args = (U, 1e308 * U, np.full((3, 3), -1.7e308), xi)
    for mode in ("default", "error"):
        with warnings.catch_warnings():
            warnings.simplefilter(mode)
            with pytest.raises(ValueError, match=r"^PSDQuotient\.euclidean_to_riemannian_hessian: "
                                                 r"the result is not finite \(overflow of finite "
                                                 r"inputs\)$"):
                M3.euclidean_to_riemannian_hessian(*args)
