"""Properties of quadnet.features.diagnostics against independent references.

Written for mutation testing of ``quadnet/features/diagnostics.py`` (``scripts/mutation.py
--public-only``): the covariance against ``numpy.cov``, the effective rank against
``scipy.stats.entropy``, the read-out against a least-squares fit written with an explicit
intercept column, the correlations against ``scipy.spatial.distance.pdist`` and
``numpy.corrcoef``, and every refusal by its message.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.spatial.distance import pdist
from scipy.stats import entropy

from quadnet._validation import NonFiniteResultError
from quadnet.features.diagnostics import (
    angle_correlation,
    distance_correlation,
    effective_rank,
    feature_covariance,
    linear_readout_accuracy,
)


def test_feature_covariance_against_numpy():
    Phi = np.random.default_rng(0).standard_normal((9, 3)) + 2.0
    np.testing.assert_allclose(feature_covariance(Phi), np.cov(Phi.T, bias=True), rtol=1e-12)
    np.testing.assert_allclose(feature_covariance(Phi, centre=False), Phi.T @ Phi / 9,
                               rtol=1e-12)
    assert feature_covariance(np.array([[1.0], [3.0]])).tolist() == [[1.0]]


def test_effective_rank_against_the_entropy_of_the_spectrum():
    rng = np.random.default_rng(1)
    lam = np.array([3.0, 1.0, 0.5, 0.0])
    assert effective_rank(lam) == pytest.approx(np.exp(entropy(lam)), rel=1e-12)
    V = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    C = (V * lam) @ V.T
    assert effective_rank(C) == pytest.approx(np.exp(entropy(lam)), rel=1e-10)
    assert effective_rank(np.eye(5)) == pytest.approx(5.0, rel=1e-12)
    assert effective_rank([2.0]) == 1.0
    assert effective_rank(np.diag([1.0, 0.0])) == pytest.approx(1.0, rel=1e-12)
    # rounding-level negative eigenvalues are clipped, not refused
    assert effective_rank([1.0, 1.0, -1e-12]) == pytest.approx(2.0, rel=1e-12)
    assert effective_rank([1.0, 1.0, -0.5e-10]) == pytest.approx(2.0, rel=1e-9)
    # a symmetric matrix up to 1e-12 relative is accepted
    A = np.array([[2.0, 1.0], [1.0 + 1e-12, 2.0]])
    assert effective_rank(A) == pytest.approx(np.exp(entropy([3.0, 1.0])), rel=1e-9)
    # tiny matrices are judged relative to their scale
    assert effective_rank(1e-300 * np.eye(3)) == pytest.approx(3.0, rel=1e-12)


@pytest.mark.parametrize("C, match", [
    (np.ones((2, 3)), r"^effective_rank: C must be a square matrix or a 1-d spectrum, got shape "
                      r"\(2, 3\)$"),
    (np.ones((2, 2, 2)), r"^effective_rank: C must be a square matrix or a 1-d spectrum, got "
                         r"shape \(2, 2, 2\)$"),
    (np.array([[1.0, 1e-8], [0.0, 1.0]]), r"^effective_rank: C must be symmetric$"),
    (1e-150 * np.array([[1.0, 1e-8], [0.0, 1.0]]), r"^effective_rank: C must be symmetric$"),
    (np.array([]), r"^effective_rank: C is empty$"),
    (np.zeros(2), r"^effective_rank: C is zero: the effective rank of a zero matrix is "
                  r"undefined$"),
    (np.zeros((2, 2)), r"^effective_rank: C is zero"),
    (np.array([2.0, -1.0]), r"^effective_rank: C must be positive semidefinite, smallest "
                            r"eigenvalue -1.000e\+00 \(largest magnitude 2.000e\+00\)$"),
    (np.array([1.0, -2e-10]), r"^effective_rank: C must be positive semidefinite"),
    (-np.eye(2), r"^effective_rank: C must be positive semidefinite, smallest eigenvalue "
                 r"-1.000e\+00 \(largest magnitude 1.000e\+00\)$"),
])
def test_effective_rank_refusals(C, match):
    with pytest.raises(ValueError, match=match):
        effective_rank(C)


# --------------------------------------------------------------------------------- read-out


def _readout_reference(Ptr, T, Pte, ridge):
    """Ridge least squares with an unpenalised intercept column, by a dense normal-equation
    solve on the augmented features (penalty ridge · n · tr(ZᵀZ)/k on W only)."""
    n, k = Ptr.shape
    Z = Ptr - Ptr.mean(0)
    pen = ridge * n * np.trace(Z.T @ Z) / k
    A = np.c_[Ptr, np.ones(n)]
    D = np.diag(np.r_[np.full(k, pen), 0.0])
    coef = np.linalg.solve(A.T @ A + D, A.T @ T)
    return np.c_[Pte, np.ones(len(Pte))] @ coef


def test_readout_with_integer_labels_against_the_reference():
    rng = np.random.default_rng(2)
    Ptr, Pte = rng.standard_normal((30, 4)), rng.standard_normal((12, 4))
    ytr, yte = rng.integers(0, 3, 30) * 2 + 1, rng.integers(0, 3, 12) * 2 + 1    # labels 1, 3, 5
    classes = np.unique(ytr)
    for ridge in (1e-8, 0.3):
        out = _readout_reference(Ptr, (ytr[:, None] == classes).astype(float), Pte, ridge)
        want = float(np.mean(classes[out.argmax(1)] == yte))
        assert linear_readout_accuracy(Ptr, ytr, Pte, yte, ridge=ridge) == want
    # ridge = 0: the least-squares fit itself
    out = _readout_reference(Ptr, (ytr[:, None] == classes).astype(float), Pte, 0.0)
    assert linear_readout_accuracy(Ptr, ytr, Pte, yte, ridge=0.0) == float(
        np.mean(classes[out.argmax(1)] == yte))


def test_readout_with_targets_against_the_reference():
    rng = np.random.default_rng(3)
    Ptr, Pte = rng.standard_normal((25, 3)), rng.standard_normal((15, 3))
    Ttr, Tte = rng.standard_normal((25, 3)), rng.standard_normal((15, 3))
    out = _readout_reference(Ptr, Ttr, Pte, 0.1)
    assert linear_readout_accuracy(Ptr, Ttr, Pte, Tte, ridge=0.1) == float(
        np.mean(out.argmax(1) == Tte.argmax(1)))
    t1, s1 = Ttr[:, :1], np.sign(Tte[:, :1])
    out1 = _readout_reference(Ptr, t1, Pte, 0.1)
    assert linear_readout_accuracy(Ptr, t1, Pte, s1, ridge=0.1) == float(
        np.mean(np.sign(out1[:, 0]) == s1[:, 0]))


def test_readout_exact_cases():
    lab = np.array([0, 1] * 5)
    Phi = np.c_[lab, 1 - lab].astype(float)
    assert linear_readout_accuracy(Phi, lab, Phi, lab) == 1.0
    assert linear_readout_accuracy(Phi, lab, Phi, 1 - lab) == 0.0
    # a test label never seen in training is never predicted
    assert linear_readout_accuracy(Phi, lab, Phi[:4], np.array([0, 1, 2, 2])) == 0.5
    # one column of +-1 targets: the sign decides
    t = (2 * lab - 1.0)[:, None]
    assert linear_readout_accuracy(Phi, t, Phi, t) == 1.0
    assert linear_readout_accuracy(Phi, t, Phi, -t) == 0.0
    # the ridge penalty does not depend on the scale of the features
    rng = np.random.default_rng(4)
    P, y = rng.standard_normal((20, 3)), rng.integers(0, 2, 20)
    a = linear_readout_accuracy(P, y, P, y, ridge=5.0)
    assert linear_readout_accuracy(1e-150 * P, y, 1e-150 * P, y, ridge=5.0) == a
    # a constant feature column is allowed
    assert linear_readout_accuracy(np.ones((4, 1)), np.array([0, 1, 0, 1]), np.ones((2, 1)),
                                   np.array([0, 0])) in (0.0, 1.0)


@pytest.mark.parametrize("args, match", [
    ((np.eye(4), np.arange(4), np.eye(4), np.ones((4, 2))),
     r"^linear_readout_accuracy: y_test must be of the same kind as y_train, got shapes \(4, 2\) "
     r"and \(4,\)$"),
    ((np.eye(4), np.ones((4, 2)), np.eye(4), np.arange(4)),
     r"^linear_readout_accuracy: y_test must be of the same kind as y_train, got shapes \(4,\) "
     r"and \(4, 2\)$"),
    ((np.eye(4), np.ones((4, 2)), np.eye(4), np.ones((4, 3))),
     r"^linear_readout_accuracy: y_test must be of the same kind as y_train, got shapes \(4, 3\)"),
    ((np.eye(4), np.arange(3), np.eye(4), np.arange(4)),
     r"^linear_readout_accuracy: y_train must have 4 rows \(one per feature row\), got 3$"),
    ((np.eye(4), np.arange(4), np.eye(4), np.arange(3)),
     r"^linear_readout_accuracy: y_test must have 4 rows \(one per feature row\), got 3$"),
    ((np.eye(4), np.arange(4) + 0.5, np.eye(4), np.arange(4)),
     r"^linear_readout_accuracy: y_train as a 1-d array must hold integer class labels$"),
    ((np.eye(4), np.arange(4), np.eye(4), np.arange(4) + 0.5),
     r"^linear_readout_accuracy: y_test as a 1-d array must hold integer class labels$"),
    ((np.eye(4), np.ones((4, 2, 1)), np.eye(4), np.ones((4, 2, 1))),
     r"^linear_readout_accuracy: y_train must be 1-d labels or a 2-d target matrix, got shape "
     r"\(4, 2, 1\)$"),
    ((np.eye(4), np.float64(1.0), np.eye(4), np.arange(4)),
     r"^linear_readout_accuracy: y_train must be 1-d labels or a 2-d target matrix, got a "
     r"scalar$"),
])
def test_readout_refusals(args, match):
    with pytest.raises(ValueError, match=match):
        linear_readout_accuracy(*args)


def test_readout_overflow_names_the_features_without_warnings():
    lab = np.array([0, 1, 0, 1])
    P = np.c_[lab, 1 - lab].astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(NonFiniteResultError, match=r"^linear_readout_accuracy: the Gram matrix "
                                                       r"of the training features is not finite "
                                                       r"\(float64 overflow\) for Phi_train"):
            linear_readout_accuracy(1e300 * P, lab, P, lab)
        with pytest.raises(NonFiniteResultError, match=r"^linear_readout_accuracy: the read-out "
                                                       r"of the test features is not finite "
                                                       r"\(float64 overflow\) for Phi_test"):
            # read-out weights of size 5 (features 0.1 apart) times test features 1e308
            linear_readout_accuracy(0.1 * P, lab, np.array([[1e308, -1e308]]), np.array([0]))


# ----------------------------------------------------------------------------- correlations


def test_distance_correlation_against_pdist():
    rng = np.random.default_rng(5)
    X, Phi = rng.standard_normal((9, 3)), rng.standard_normal((9, 5))
    want = np.corrcoef(pdist(X), pdist(Phi))[0, 1]
    assert distance_correlation(X, Phi) == pytest.approx(want, rel=1e-10)
    assert distance_correlation(X, 3 * X + 1) == pytest.approx(1.0, abs=1e-12)
    assert distance_correlation(1e-200 * X, 1e200 * Phi) == pytest.approx(want, rel=1e-10)


def test_angle_correlation_against_pdist():
    rng = np.random.default_rng(6)
    X, Phi = rng.standard_normal((8, 3)), rng.standard_normal((8, 4))
    ang = lambda Z: np.arccos(np.clip(1 - pdist(Z, "cosine"), -1, 1))   # noqa: E731
    want = np.corrcoef(ang(X), ang(Phi))[0, 1]
    assert angle_correlation(X, Phi) == pytest.approx(want, rel=1e-9)
    assert angle_correlation(X, 5 * X) == pytest.approx(1.0, abs=1e-12)
    assert angle_correlation(1e-200 * X, 1e200 * Phi) == pytest.approx(want, rel=1e-9)
    # antipodal rows: angle pi, clipped cosines
    Y = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    assert angle_correlation(Y, Y) == pytest.approx(1.0, abs=1e-12)


def test_correlation_refusals():
    tri = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2]])   # equal distances
    rnd = np.random.default_rng(7).standard_normal((3, 2))
    with pytest.raises(ValueError, match=r"^distance_correlation: the pairwise distances are "
                                         r"constant in one of the spaces; their correlation is "
                                         r"undefined$"):
        distance_correlation(tri, rnd)
    with pytest.raises(ValueError, match=r"^distance_correlation: the pairwise distances are "
                                         r"constant"):
        distance_correlation(rnd, tri)
    with pytest.raises(ValueError, match=r"^angle_correlation: X has a zero row; its angle to "
                                         r"other rows is undefined$"):
        angle_correlation(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), rnd)
    with pytest.raises(ValueError, match=r"^angle_correlation: Phi has a zero row; its angle to "
                                         r"other rows is undefined$"):
        angle_correlation(rnd + 3, np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
    eq = np.array([[1.0, 0.0], [-0.5, np.sqrt(3) / 2], [-0.5, -np.sqrt(3) / 2]])  # 120 degrees
    with pytest.raises(ValueError, match=r"^angle_correlation: the pairwise angles are constant"):
        angle_correlation(eq, rnd + 3)
    with pytest.raises(ValueError, match=r"^distance_correlation: need at least 3 points"):
        distance_correlation(rnd[:2], rnd[:2])


def test_effective_rank_at_the_psd_tolerance():
    # exactly -PSD_RTOL * top is still rounding: clipped, and the clipped value is not summed
    assert effective_rank([1.0, -1e-10]) == pytest.approx(1.0, rel=1e-13)
    assert effective_rank([1.0, 1.0, -0.9e-10]) == pytest.approx(2.0, rel=1e-13)


def test_readout_without_ridge_on_more_features_than_samples_is_the_minimum_norm_fit():
    rng = np.random.default_rng(8)
    Ptr, Pte = rng.standard_normal((4, 6)), rng.standard_normal((30, 6))
    t = np.array([[1.0], [-1.0], [1.0], [1.0]])
    Z = Ptr - Ptr.mean(0)
    W = np.linalg.pinv(Z) @ (t - t.mean())
    out = (Pte - Ptr.mean(0)) @ W + t.mean()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = linear_readout_accuracy(Ptr, t, Pte, np.sign(out), ridge=0.0)
    assert got == 1.0


def test_readout_penalty_is_relative_to_the_mean_eigenvalue():
    # one +-1 target column with unbalanced classes: the intercept and the size of W both move
    # the sign threshold, so the accuracy on a dense test grid tracks the exact ridge solution
    rng = np.random.default_rng(9)
    Ptr = rng.standard_normal((12, 3))
    t = np.where(rng.random(12) < 0.75, 1.0, -1.0)[:, None]
    Pte = rng.standard_normal((400, 3))
    out = _readout_reference(Ptr, t, Pte, 0.05)
    truth = np.sign(out[:, 0] - 0.3)                  # a labelling the read-out half agrees with
    want = float(np.mean(np.sign(out[:, 0]) == truth))
    assert linear_readout_accuracy(Ptr, t, Pte, truth[:, None], ridge=0.05) == want
    assert 0.5 < want < 1.0


def test_readout_overflow_inside_the_fit_does_not_warn():
    lab = np.array([0, 1, 0, 1])
    a = 9e153                                         # Gram diagonal 1.6e308: its trace overflows
    P = np.array([[a, 0.0], [-a, 0.0], [0.0, a], [0.0, -a]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for ridge in (1e-8, 0.0):                     # 0 * inf: an invalid operation
            with pytest.raises(NonFiniteResultError, match=r"^linear_readout_accuracy: the Gram "
                                                           r"matrix .* for Phi_train \(max"):
                linear_readout_accuracy(P, lab, P, lab, ridge=ridge)
        # one training row at -1e308: the test features minus its mean overflow
        with pytest.raises(NonFiniteResultError, match=r"^linear_readout_accuracy: the read-out "
                                                       r"of the test features is not finite "
                                                       r"\(float64 overflow\) for Phi_test \(max "
                                                       r"\|entry\| 1e\+308\), Phi_train \(max"):
            linear_readout_accuracy(np.array([[-1e308]]), np.array([0]), np.array([[1e308]]),
                                    np.array([0]))
