"""Complex rank-one sensing (phase retrieval for r = 1): design, loss, derivatives, population
operator and spectral starts, against independent references (explicit A_i = a_i a_i^*, finite
differences along random complex directions, Gauss-Hermite quadrature, Monte Carlo)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import quadnet as qn
from quadnet.sensing import spectral_init
from quadnet.sensing.complex_gaussian import ComplexGaussianSensing, optimal_preprocessing


def crandn(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def explicit_A(X):
    """A_i = a_i a_i^* with a_i = conj(X_i) (rows of X are a_i^*)."""
    a = np.conj(X)
    return np.einsum("ij,ik->ijk", a, np.conj(a))


def hermitian(rng, d):
    H = crandn(rng, d, d)
    return H + H.conj().T


def rdot(A, B):
    """The real inner product Re tr(A^* B)."""
    return float(np.real(np.vdot(A, B)))


# ------------------------------------------------------------------------------ the design
def test_random_complex_design_moments_and_bits():
    prob = qn.GaussianSensing.random(8, 2, 20_000, seed=3, field="complex")
    assert isinstance(prob, qn.GaussianSensing) and prob.field == "complex"
    X = prob.X
    assert X.dtype == np.complex128 and X.shape == (20_000, 8)
    # E a a^* = I and E a a^T = 0: standard errors are 1/sqrt(m) ~ 0.007 per entry
    cov = X.T @ np.conj(X) / prob.m
    pseudo = X.T @ X / prob.m
    assert np.max(np.abs(cov - np.eye(8))) < 0.04
    assert np.max(np.abs(pseudo)) < 0.04
    assert abs(np.mean(X.real ** 2) - 0.5) < 0.01 and abs(np.mean(X.imag ** 2) - 0.5) < 0.01
    # y_i = a_i^* Q* a_i = ||U*^* a_i||^2, real
    a = np.conj(X[:50])
    direct = np.einsum("ij,jk,ik->i", np.conj(a), prob.Q_star, a)
    assert np.max(np.abs(direct.imag)) < 1e-12
    assert np.allclose(prob.y[:50], direct.real, rtol=1e-12)
    assert np.allclose(prob.y, prob.measure(prob.Q_star), rtol=1e-12)
    again = qn.GaussianSensing.random(8, 2, 20_000, seed=3, field="complex")
    assert np.array_equal(again.X, X) and np.array_equal(again.y, prob.y)
    assert np.array_equal(again.U_star, prob.U_star)
    # E |U*_jk|^2 = 1/d (as in the real case): tr Q* = r on average
    big = qn.GaussianSensing.random(400, 3, 1, seed=0, field="complex")
    assert abs(np.trace(big.Q_star).real / 3 - 1) < 0.05
    clean = qn.GaussianSensing.random(8, 2, 50, seed=3, field="complex")
    noisy = qn.GaussianSensing.random(8, 2, 50, seed=3, noise=0.1, field="complex")
    assert np.array_equal(noisy.X, clean.X)                       # U*, X, then the noise
    assert 0 < np.std(noisy.y - clean.y) < 0.2


def test_constructor_takes_a_complex_design_only_with_field_complex():
    rng = np.random.default_rng(0)
    X, y = crandn(rng, 10, 3), rng.random(10)
    prob = qn.GaussianSensing(X, y, field="complex")
    assert isinstance(prob, ComplexGaussianSensing) and prob.X.dtype == np.complex128
    with warnings.catch_warnings():
        warnings.simplefilter("error")                    # never a ComplexWarning
        with pytest.raises(TypeError, match=r"X is complex .*field='complex'"):
            qn.GaussianSensing(X, y)
        with pytest.raises(TypeError, match="X"):
            qn.GaussianSensing(X, y, field="real")
        with pytest.raises(TypeError, match="y"):
            qn.GaussianSensing(X, y + 1j, field="complex")
    with pytest.raises(ValueError, match="field"):
        qn.GaussianSensing(X.real, y, field="quaternion")
    with pytest.raises(ValueError, match="field"):
        qn.GaussianSensing.random(4, 1, 8, seed=0, field="quaternion")
    with pytest.raises(ValueError, match="len\\(y\\)"):
        qn.GaussianSensing(X, y[:5], field="complex")
    with pytest.raises(ValueError, match="X has 1 non-finite"):
        Xn = X.copy()
        Xn[0, 0] = np.nan
        qn.GaussianSensing(Xn, y, field="complex")
    real = qn.GaussianSensing(X.real, y, field="complex")            # a real design, cast
    assert real.X.dtype == np.complex128


def test_pickle_round_trip_keeps_the_class():
    import pickle

    prob = qn.GaussianSensing.random(4, 1, 10, seed=0, field="complex")
    back = pickle.loads(pickle.dumps(prob))
    assert type(back) is ComplexGaussianSensing and np.array_equal(back.X, prob.X)


# ------------------------------------------------------- loss and derivatives, O(m d r)
@pytest.fixture(scope="module")
def small():
    return qn.GaussianSensing.random(5, 2, 40, seed=1, field="complex")


def test_loss_and_s_against_explicit_measurement_matrices(small):
    prob, rng = small, np.random.default_rng(2)
    U = crandn(rng, 5, 2)
    A = explicit_A(prob.X)
    Q = U @ U.conj().T
    res = np.einsum("ijk,kj->i", A, Q).real - prob.y             # <A_i, Q> = tr(A_i^* Q)
    assert np.isclose(prob.factor_value(U), res @ res / (2 * prob.m), rtol=1e-12)
    assert np.isclose(prob.value(Q), res @ res / (2 * prob.m), rtol=1e-12)
    S = np.einsum("i,ijk->jk", res, A) / prob.m
    assert np.allclose(prob.gradient(Q), S, rtol=1e-12, atol=1e-13)
    assert np.allclose(prob.factor_gradient(U), 2 * S @ U, rtol=1e-12, atol=1e-13)
    H = hermitian(rng, 5)
    Tm = np.einsum("i,ijk->jk", np.einsum("ijk,kj->i", A, H).real, A) / prob.m
    assert np.allclose(prob.normal_operator(H), Tm, rtol=1e-12, atol=1e-13)
    assert np.allclose(prob.hessian_vector(Q, H), Tm, rtol=1e-12, atol=1e-13)
    assert np.allclose(prob.moment_matrix(), np.einsum("i,ijk->jk", prob.y, A) / prob.m)


def test_u_r_invariance_and_equivariance(small):
    prob, rng = small, np.random.default_rng(3)
    U = crandn(rng, 5, 2)
    W = np.linalg.qr(crandn(rng, 2, 2))[0]                         # unitary
    assert np.isclose(prob.factor_value(U @ W), prob.factor_value(U), rtol=1e-13)
    assert np.allclose(prob.factor_gradient(U @ W), prob.factor_gradient(U) @ W, rtol=1e-12)
    # grad L = 2 S U is horizontal: U^* grad is Hermitian
    G = U.conj().T @ prob.factor_gradient(U)
    assert np.allclose(G, G.conj().T, rtol=1e-12, atol=1e-14)


def test_gradient_against_central_differences_along_complex_directions(small):
    """dL(U + t xi)/dt = Re tr(grad^* xi). Central differences have error t^2 L'''/6 plus
    rounding eps L / t; at t = 1e-5 both are below 1e-8 relative here (L = O(1)), so 1e-6
    relative is a margin of 100 on the worst of 10 random directions."""
    prob, rng = small, np.random.default_rng(4)
    U = crandn(rng, 5, 2)
    g = prob.factor_gradient(U)
    t = 1e-5
    for _ in range(10):
        xi = crandn(rng, 5, 2)
        fd = (prob.factor_value(U + t * xi) - prob.factor_value(U - t * xi)) / (2 * t)
        assert abs(fd - rdot(g, xi)) <= 1e-6 * max(abs(fd), np.linalg.norm(g) *
                                                      np.linalg.norm(xi))


def test_hvp_against_differences_of_the_gradient_and_symmetry(small):
    """D^2 L(U)[xi] = d grad(U + t xi)/dt (central differences, the gradient is cubic in U, so
    the error is t^2 times a third derivative: 1e-8 relative at t = 1e-4), and the Hessian is
    self-adjoint for Re tr(xi^* eta) (to rounding)."""
    prob, rng = small, np.random.default_rng(5)
    U = crandn(rng, 5, 2)
    hvp = prob.hvp_at(U)
    t = 1e-4
    for _ in range(5):
        xi, eta = crandn(rng, 5, 2), crandn(rng, 5, 2)
        fd = (prob.factor_gradient(U + t * xi) - prob.factor_gradient(U - t * xi)) / (2 * t)
        h = prob.factor_hvp(U, xi)
        assert np.linalg.norm(fd - h) <= 1e-6 * np.linalg.norm(h)
        assert np.allclose(hvp(xi), h, rtol=1e-13, atol=1e-13)
        a, b = rdot(eta, h), rdot(xi, prob.factor_hvp(U, eta))
        assert abs(a - b) <= 1e-12 * np.linalg.norm(h) * np.linalg.norm(eta)
    stack = crandn(rng, 3, 5, 2)
    out = hvp(stack)
    assert out.shape == (3, 5, 2)
    for k in range(3):
        assert np.allclose(out[k], prob.factor_hvp(U, stack[k]), rtol=1e-12, atol=1e-13)
    lo = prob.single_precision_hvp_at(U)(stack)
    assert lo.dtype == np.complex128
    assert np.linalg.norm(lo - out) <= 1e-5 * np.linalg.norm(out)


def test_gram_factor_is_the_gauss_newton_part(small):
    prob, rng = small, np.random.default_rng(6)
    U = prob.U_star
    K = prob.gram_factor(U)
    assert K.shape == (prob.m, 2 * 5 * 2) and K.dtype == np.float64
    xi = crandn(rng, 5, 2)
    hv = prob.factor_hvp(U, xi)                                   # zero residual at U*
    assert np.allclose(K.T @ (K @ xi.view(float).ravel()), hv.view(float).ravel(), rtol=1e-11)


def test_row_blocks_and_the_real_path_agree(monkeypatch):
    """The complex code on a real design equals the real code (blockwise products too)."""
    import quadnet.sensing.gaussian as gs     # the row blocks of both fields are set there

    real = qn.GaussianSensing.random(6, 2, 3000, seed=7)
    cplx = qn.GaussianSensing(real.X, real.y, field="complex")
    rng = np.random.default_rng(8)
    U, xi = rng.standard_normal((6, 2)), rng.standard_normal((6, 2))
    assert np.isclose(cplx.factor_value(U), real.factor_value(U), rtol=1e-13)
    assert np.allclose(cplx.factor_gradient(U), real.factor_gradient(U), rtol=1e-12)
    with monkeypatch.context() as patch:
        patch.setattr(gs, "HVP_ROW_BLOCK_BYTES", 256 * 16 * 6)   # 256-row blocks
        h = cplx.factor_hvp(U, xi)
    assert np.allclose(h, real.factor_hvp(U, xi), rtol=1e-12)
    assert np.allclose(cplx.moment_matrix(), real.moment_matrix(), rtol=1e-12)


def test_complex_arguments_are_checked_naming_them(small):
    prob = small
    with pytest.raises(ValueError, match="U must have shape"):
        prob.factor_value(np.ones((4, 2)))
    with pytest.raises(TypeError, match="U"):
        prob.factor_gradient("abc")
    with pytest.raises(ValueError, match="xi"):
        prob.factor_hvp(prob.U_star, np.ones((5, 3)))
    with pytest.raises(ValueError, match="Q must be Hermitian"):
        prob.value(np.array([[0, 1j, 0, 0, 0]] * 5))
    with pytest.raises(ValueError, match="H must be Hermitian"):
        prob.normal_operator(np.triu(np.ones((5, 5))) * 1j)
    with pytest.raises(ValueError, match="U has 2 non-finite"):
        prob.factor_value(np.where(np.eye(5, 2) > 0, np.nan, 0.0))


# --------------------------------------------------------------------- population operator
def test_population_operator_closed_form_and_inverse():
    rng = np.random.default_rng(9)
    d = 4
    H = hermitian(rng, d)
    T = qn.population_normal_operator(H, field="complex")
    assert np.allclose(T, H + np.trace(H) * np.eye(d), rtol=1e-15)
    back = qn.inverse_population_normal_operator(T, field="complex")
    assert np.allclose(back, H, rtol=1e-14, atol=1e-14)
    G = hermitian(rng, d)
    assert np.allclose(qn.inverse_population_normal_operator(G, field="complex"),
                       G - np.trace(G) / (d + 1) * np.eye(d))
    # spectrum: 1 on traceless Hermitian matrices, d + 1 on I
    tl = H - np.trace(H) / d * np.eye(d)
    assert np.allclose(qn.population_normal_operator(tl, field="complex"), tl)
    assert np.allclose(qn.population_normal_operator(np.eye(d), field="complex"),
                       (d + 1) * np.eye(d))
    # the real operator is unchanged
    S = rng.standard_normal((d, d))
    S = S + S.T
    assert np.allclose(qn.population_normal_operator(S), 2 * S + np.trace(S) * np.eye(d))


def test_population_operator_against_exact_gauss_hermite_quadrature():
    """E[(a^* H a) a a^*] over a ~ CN(0, I_2), computed exactly: the integrand is a polynomial
    of degree 4 in the 4 real coordinates, and a 3-point Gauss-Hermite rule per coordinate
    (exact to degree 5) integrates it to rounding."""
    d = 2
    rng = np.random.default_rng(10)
    H = hermitian(rng, d)
    x, w = np.polynomial.hermite_e.hermegauss(3)          # weight exp(-x^2/2)
    w = w / w.sum()
    x = x / np.sqrt(2.0)                                   # N(0, 1/2) per part
    E = np.zeros((d, d), dtype=complex)
    for idx in itertools.product(range(3), repeat=2 * d):
        pts = x[list(idx)]
        a = pts[:d] + 1j * pts[d:]
        E += np.prod(w[list(idx)]) * (np.conj(a) @ H @ a) * np.outer(a, np.conj(a))
    assert np.allclose(E, qn.population_normal_operator(H, field="complex"), rtol=1e-13,
                       atol=1e-13)
    # the same rule gives the real operator 2H + tr(H) I for x ~ N(0, I_2)
    S = H.real
    E = np.zeros((d, d))
    xr = x * np.sqrt(2.0)
    for idx in itertools.product(range(3), repeat=d):
        v = xr[list(idx)]
        E += np.prod(w[list(idx)]) * (v @ S @ v) * np.outer(v, v)
    assert np.allclose(E, qn.population_normal_operator(S), rtol=1e-13, atol=1e-13)


def test_empirical_operator_converges_with_slope_minus_one_half():
    """||T_m(H) - T(H)||_F against m: a mean of m i.i.d. terms, so its RMS over replicates is
    exactly C / sqrt(m). 16 replicates per m estimate the RMS to ~ 1/sqrt(2 * 16 * d^2)
    relative, i.e. a log error of about 0.05 at each of 6 sizes over a factor 100 in m: the
    fitted slope has a standard error of about 0.05 / (sqrt(6) * sd(log m) ) ~ 0.013, so
    +-0.1 is over seven standard errors."""
    d = 4
    rng = np.random.default_rng(11)
    H = hermitian(rng, d)
    T = qn.population_normal_operator(H, field="complex")
    ms = np.array([200, 500, 1000, 2000, 5000, 20_000])
    rms = []
    for m in ms:
        errs = [np.linalg.norm(
            qn.GaussianSensing.random(d, 1, int(m), seed=[12, int(m), k],
                                      field="complex").normal_operator(H) - T)
            for k in range(16)]
        rms.append(np.sqrt(np.mean(np.square(errs))))
    slope = np.polyfit(np.log(ms), np.log(rms), 1)[0]
    assert abs(slope + 0.5) <= 0.1, slope


def test_population_operator_refuses_complex_data_on_the_real_field():
    Hc = np.array([[1.0, 1j], [-1j, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match=r"H is complex .*field='real'"):
            qn.population_normal_operator(Hc)
        with pytest.raises(TypeError, match="Y is complex"):
            qn.inverse_population_normal_operator(Hc, field="real")
    with pytest.raises(ValueError, match="H must be Hermitian"):
        qn.population_normal_operator(np.array([[1.0, 1j], [1j, 2.0]]), field="complex")
    with pytest.raises(ValueError, match="field"):
        qn.population_normal_operator(np.eye(2), field="quaternion")


# --------------------------------------------------------------------------- spectral start
def overlap(u, x):
    return float(abs(np.vdot(u, x)) ** 2 / (np.vdot(u, u).real * np.vdot(x, x).real))


def test_identity_spectral_start_is_the_moment_estimator():
    prob = qn.GaussianSensing.random(12, 2, 600, seed=13, field="complex")
    M = prob.moment_matrix()
    Qhat = M - np.trace(M).real / 13 * np.eye(12)                 # T^-1(M), complex
    lam, V = np.linalg.eigh(Qhat)
    U0 = spectral_init(prob, 2)
    assert U0.dtype == np.complex128
    assert np.allclose(U0 @ U0.conj().T, V[:, -2:] @ np.diag(lam[-2:]) @ V[:, -2:].conj().T,
                       rtol=1e-10, atol=1e-12)
    Ul = prob.spectral_init(2, method="lanczos")
    assert np.allclose(Ul @ Ul.conj().T, U0 @ U0.conj().T, rtol=1e-8, atol=1e-10)
    assert np.allclose(qn.inverse_population_normal_operator(M, field="complex"), Qhat)


def test_moment_matrix_is_unbiased_for_the_complex_population_operator():
    """E M = T(Q*) = Q* + tr(Q*) I (noiseless): the Monte Carlo mean over 20,000 samples has
    entrywise standard error about tr(Q*) sqrt(2 / m) ~ 0.01 here."""
    prob = qn.GaussianSensing.random(4, 1, 20_000, seed=14, field="complex")
    T = qn.population_normal_operator(prob.Q_star, field="complex")
    assert np.max(np.abs(prob.moment_matrix() - T)) < 0.06


def test_optimal_weights_and_fitted_magnitudes():
    y = np.array([0.0, 1.0, 2.0, 5.0])
    yhat = y / y.mean()
    assert np.allclose(optimal_preprocessing(y, 9.0), (yhat - 1) / (yhat + 2.0))
    prob = qn.GaussianSensing.random(10, 2, 200, seed=15, field="complex")
    U0 = prob.spectral_init(2, preprocessing="optimal")
    # the magnitudes are the least-squares fit of B on the eigenvectors: at the returned
    # start, the gradient of L(V B V^*) in B vanishes, so the loss is not lowered by any
    # Hermitian perturbation B + t E inside the subspace
    V = np.linalg.qr(U0)[0]
    B = V.conj().T @ U0 @ U0.conj().T @ V
    rng = np.random.default_rng(16)

    def loss(Bm):
        return prob.value(V @ Bm @ V.conj().T)
    for _ in range(3):
        E = hermitian(rng, 2)
        t = 1e-4
        assert abs(loss(B + t * E) - loss(B - t * E)) / (2 * t) < 1e-7 * np.linalg.norm(E)


def test_optimal_preprocessing_beats_identity_near_the_threshold():
    """At m/d = 2 and d = 200 the optimal preprocessing correlates with the signal (weak
    recovery above m/d = 1, Mondelli & Montanari 2019) and beats y-weights (Luo, Alghamdi & Lu
    2019), on each of 3 instances; measured overlaps ~0.5 against ~0.1."""
    for seed in range(3):
        prob = qn.GaussianSensing.random(200, 1, 400, seed=seed, field="complex")
        opt = overlap(prob.spectral_init(1, preprocessing="optimal"), prob.U_star)
        ide = overlap(prob.spectral_init(1), prob.U_star)
        assert opt > 0.3 and opt > ide + 0.1, (opt, ide)


def test_preprocessing_is_validated_naming_it():
    prob = qn.GaussianSensing.random(6, 1, 30, seed=0, field="complex")
    with pytest.raises(ValueError, match="preprocessing"):
        prob.spectral_init(1, preprocessing="truncated")
    with pytest.raises(ValueError, match="preprocessing"):
        spectral_init(prob, 1, preprocessing="truncated")
    few = qn.GaussianSensing.random(6, 1, 6, seed=0, field="complex")
    with pytest.raises(ValueError, match=r"preprocessing='optimal' needs m > d"):
        few.spectral_init(1, preprocessing="optimal")
    real = qn.GaussianSensing.random(6, 1, 30, seed=0)
    with pytest.raises(ValueError, match="preprocessing='optimal'.*complex"):
        real.spectral_init(1, preprocessing="optimal")
    with pytest.raises(ValueError, match="preprocessing"):
        spectral_init(real, 1, preprocessing="optimal")
    with pytest.raises(ValueError, match="r = 7|r must satisfy"):
        spectral_init(prob, 7)
    with pytest.raises(TypeError, match="problem"):
        spectral_init("abc", 1)
