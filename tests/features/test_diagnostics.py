"""Tests of quadnet.diagnostics (quadnet theory §6: representation diagnostics)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quadnet.features.diagnostics import (
    angle_correlation,
    distance_correlation,
    effective_rank,
    feature_covariance,
    linear_readout_accuracy,
)
from quadnet.features.rfm import RecursiveFeatureMachine, modular_arithmetic


def _orthogonal(rng, k):
    Q, R = np.linalg.qr(rng.standard_normal((k, k)))
    return Q * np.sign(np.diag(R))


def test_effective_rank_extremes():
    assert effective_rank(np.eye(6)) == pytest.approx(6.0, rel=1e-12)
    assert effective_rank(np.diag([3.0, 0.0, 0.0])) == pytest.approx(1.0, rel=1e-12)
    # two equal eigenvalues and one zero: exp(log 2) = 2
    assert effective_rank([1.0, 1.0, 0.0]) == pytest.approx(2.0, rel=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), k=st.integers(1, 8), r=st.integers(1, 8),
       scale=st.floats(1e-3, 1e3))
def test_effective_rank_bounds_and_invariances(seed, k, r, scale):
    rng = np.random.default_rng(seed)
    r = min(r, k)
    B = rng.standard_normal((k, r))
    C = B @ B.T
    er = effective_rank(C)
    # 1 <= exp(H) <= number of nonzero eigenvalues (rounding 1e-9 relative)
    assert 1.0 - 1e-9 <= er <= r * (1 + 1e-9)
    # invariant to scale and to orthogonal change of basis (eigenvalues unchanged)
    Q = _orthogonal(rng, k)
    assert effective_rank(scale * Q @ C @ Q.T) == pytest.approx(er, rel=1e-8)
    assert effective_rank(np.linalg.eigvalsh(C)) == pytest.approx(er, rel=1e-8)


def test_effective_rank_errors():
    with pytest.raises(ValueError, match="positive semidefinite"):
        effective_rank(np.diag([1.0, -0.5]))
    with pytest.raises(ValueError, match="zero"):
        effective_rank(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="symmetric"):
        effective_rank(np.array([[1.0, 2.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="square"):
        effective_rank(np.ones((2, 3)))
    with pytest.raises(ValueError, match="non-finite"):
        effective_rank([1.0, np.nan])


def test_feature_covariance():
    rng = np.random.default_rng(0)
    Phi = rng.standard_normal((40, 3)) + 5.0
    np.testing.assert_allclose(feature_covariance(Phi), np.cov(Phi.T, bias=True), atol=1e-12)


def test_linear_readout_separable_and_kinds():
    rng = np.random.default_rng(1)
    Phi = rng.standard_normal((400, 5))
    w = rng.standard_normal(5)
    w /= np.linalg.norm(w)
    Phi = Phi[np.abs(Phi @ w) > 0.5][:200]  # margin 0.5 around the separating hyperplane
    labels = (Phi @ w > 0).astype(int)
    tr, te = slice(0, 150), slice(150, None)
    # a separable problem with margin 0.5, 150 points in 5-d: the least-squares direction is
    # within ~sqrt(5/150) rad of w, so it misclassifies at most a point or two of 50
    assert linear_readout_accuracy(Phi[tr], labels[tr], Phi[te], labels[te]) >= 0.96
    signs = 2.0 * labels[:, None] - 1.0
    assert linear_readout_accuracy(Phi[tr], signs[tr], Phi[te], signs[te]) >= 0.96
    onehot = np.eye(2)[labels]
    assert linear_readout_accuracy(Phi[tr], onehot[tr], Phi[te], onehot[te], ridge=0.0) >= 0.96
    # the class means differ only through w: features orthogonal to w carry no information
    P = np.eye(5) - np.outer(w, w) / (w @ w)
    acc = linear_readout_accuracy(Phi[tr] @ P, labels[tr], Phi[te] @ P, labels[te])
    assert acc <= 0.8  # chance is ~0.5; 50 test points give a std of ~0.07


def test_linear_readout_errors():
    Phi = np.ones((4, 2))
    with pytest.raises(ValueError, match="y_train must have 4 rows"):
        linear_readout_accuracy(Phi, [0, 1, 0], Phi, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="Phi_test"):
        linear_readout_accuracy(Phi, [0, 1, 0, 1], np.ones((4, 3)), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="integer class labels"):
        linear_readout_accuracy(Phi, [0.5, 1, 0, 1], Phi, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="ridge"):
        linear_readout_accuracy(Phi, [0, 1, 0, 1], Phi, [0, 1, 0, 1], ridge=-1.0)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(4, 30), k=st.integers(2, 6),
       scale=st.floats(0.1, 10.0))
def test_correlations_of_similarities_are_one(seed, n, k, scale):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, k))
    Q = _orthogonal(rng, k)
    shift = rng.standard_normal(k)
    # a scaled isometry preserves distances up to scale; rotation preserves angles exactly
    assert distance_correlation(X, scale * X @ Q + shift) == pytest.approx(1.0, abs=1e-9)
    assert angle_correlation(X, scale * X @ Q) == pytest.approx(1.0, abs=1e-9)


def test_correlation_errors_and_noise():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 4))
    Z = rng.standard_normal((300, 4))
    # independent point clouds: ~45k pairs, correlation ~0 (pairs are dependent, so use a
    # loose 0.1 rather than 1/sqrt(#pairs))
    assert abs(distance_correlation(X, Z)) < 0.1
    with pytest.raises(ValueError, match="at least 3"):
        distance_correlation(X[:2], Z[:2])
    with pytest.raises(ValueError, match="Phi must have shape"):
        angle_correlation(X, Z[:10])
    Zz = Z.copy()
    Zz[0] = 0.0
    with pytest.raises(ValueError, match="zero row"):
        angle_correlation(X, Zz)
    with pytest.raises(ValueError, match="constant"):
        distance_correlation(X[:3], np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(0.75)]]))


def test_diagnostics_of_rfm_features():
    # learned features M^{1/2}x: pairwise feature distances are the M-distances of the inputs
    D = modular_arithmetic(11, "add", 0.8, seed=0)
    m = RecursiveFeatureMachine(kernel="exp_inner", bandwidth=3.0, iters=4).fit(D.X_train,
                                                                               D.y_train)
    Phi = m.features(D.X_test)
    diff = D.X_test[0] - D.X_test[1]
    assert np.linalg.norm(Phi[0] - Phi[1]) ** 2 == pytest.approx(diff @ m.M_ @ diff, rel=1e-10)
    er = effective_rank(feature_covariance(m.features(D.X_train)))
    assert 1.0 <= er <= D.X_train.shape[1]


# ------------------------------------------------------------- extreme and malformed arguments
def test_correlations_are_scale_invariant_up_to_overflow():
    from quadnet.features.diagnostics import angle_correlation
    rng = np.random.default_rng(0)
    X, Phi = rng.standard_normal((10, 3)), rng.standard_normal((10, 5))
    for fn in (distance_correlation, angle_correlation):
        ref = fn(X, Phi)
        for s in (1e300, 1e-300):
            assert fn(X * s, Phi) == pytest.approx(ref, rel=1e-9, abs=1e-12)
            assert fn(X, Phi * s) == pytest.approx(ref, rel=1e-9, abs=1e-12)


def test_feature_covariance_refuses_overflow_and_non_bool_centre():
    Phi = np.random.default_rng(0).standard_normal((6, 3))
    with pytest.raises(ValueError, match=r"feature_covariance produced a non-finite result.*"
                                         r"Phi \(max \|entry\|"):
        feature_covariance(Phi * 1e300)
    for bad in (np.array([True, False]), "False", 2, None):
        with pytest.raises(TypeError, match=r"centre must be a bool"):
            feature_covariance(Phi, centre=bad)


def test_linear_readout_refuses_scalar_labels_and_overflowing_features():
    from quadnet.features.diagnostics import linear_readout_accuracy
    rng = np.random.default_rng(0)
    Phi, lab = rng.standard_normal((10, 3)), np.arange(10) % 2
    for bad in (True, 0.0):
        with pytest.raises(ValueError, match=r"y_train must be 1-d labels or a 2-d target "
                                             r"matrix, got a scalar"):
            linear_readout_accuracy(Phi, bad, Phi, lab)
    with pytest.raises(ValueError, match=r"Gram matrix of the training features is not finite"
                                         r".*Phi_train"):
        linear_readout_accuracy(Phi * 1e300, lab, Phi, lab)
