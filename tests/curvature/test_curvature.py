"""Tests of quadnet.curvature: effective Hessian (dense and matrix-free) and population form."""

from __future__ import annotations

import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

import quadnet
import quadnet as qn
from quadnet import FrobeniusLoss, GaussianSensing, Loss, PSDQuotient, effective_hessian, effective_spectrum, population_effective_hessian
from quadnet.curvature.hessian import effective_operator, factor_hessian, horizontal_dimension
from quadnet.sensing.population import population_effective_hvp, population_effective_spectrum
from quadnet.sensing.population import population_effective_inverse
from quadnet.sensing.gaussian import population_normal_operator

from _geometry_reference import vertical_generators

# Eigenvalues from two mathematically equal symmetric matrices built by different float
# paths differ by O(n eps ||H||) (Weyl); n <= 40 here, so 1e-10 * ||H|| has >= 1e3 margin.
EIG_RTOL = 1e-10


class DenseLeastSquares(Loss):
    """ell(Q) = (1/(2m)) sum_i (<A_i, Q> - y_i)^2 with explicit symmetric A_i (test only)."""

    def __init__(self, A, y):
        self.A, self.y = np.asarray(A, float), np.asarray(y, float)
        self.m, self.d = self.A.shape[0], self.A.shape[1]

    def _meas(self, Q):
        return np.einsum("kij,ij->k", self.A, Q)

    def value(self, Q):
        res = self._meas(Q) - self.y
        return float(res @ res) / (2 * self.m)

    def gradient(self, Q):
        return np.einsum("k,kij->ij", self._meas(Q) - self.y, self.A) / self.m

    def hessian_vector(self, Q, H):
        return np.einsum("k,kij->ij", self._meas(H), self.A) / self.m


def _random_instance(d, r, m, seed, zero_residual):
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((m, d, d))
    A = 0.5 * (G + np.swapaxes(G, 1, 2))
    U = rng.standard_normal((d, r))
    Ustar = U if zero_residual else rng.standard_normal((d, r))
    y = np.einsum("kij,ij->k", A, Ustar @ Ustar.T)
    return DenseLeastSquares(A, y), U


def _null_space_basis(U):
    """Independent basis of H_U: null space (SVD) of xi -> {(U^T xi)_ab - (U^T xi)_ba}_{a<b}
    (the rows of that map are the vertical generators vec(U (E_ab - E_ba)))."""
    rows = vertical_generators(U)
    if not len(rows):
        return np.eye(U.size)
    return scipy.linalg.null_space(rows)


def _jacobian_hessian(A, y, U):
    """Full factor Hessian from the explicit Jacobian J_k = 2 vec(A_k U) plus 2 (S kron I_r)."""
    m = A.shape[0]
    J = 2.0 * np.einsum("kij,jb->kib", A, U).reshape(m, -1)
    res = np.einsum("kij,ij->k", A, U @ U.T) - y
    S = np.einsum("k,kij->ij", res, A) / m
    return J.T @ J / m + 2.0 * np.kron(S, np.eye(U.shape[1]))


def _rel_eig_err(H1, H2):
    w1, w2 = np.linalg.eigvalsh(H1), np.linalg.eigvalsh(H2)
    return np.max(np.abs(w1 - w2)) / np.max(np.abs(w2))


@settings(max_examples=25, deadline=None)
@given(d=st.integers(2, 6), r=st.integers(1, 4), extra=st.integers(0, 12),
       seed=st.integers(0, 2**31 - 1), zero=st.booleans())
def test_effective_hessian_matches_explicit_jacobian(d, r, extra, seed, zero):
    r = min(r, d)
    n_h = horizontal_dimension(d, r)
    loss, U = _random_instance(d, r, n_h + extra, seed, zero)
    N = _null_space_basis(U)
    ref = N.T @ _jacobian_hessian(loss.A, loss.y, U) @ N
    assert _rel_eig_err(effective_hessian(loss, U), ref) <= EIG_RTOL


@settings(max_examples=15, deadline=None)
@given(d=st.integers(2, 6), r=st.integers(1, 4), seed=st.integers(0, 2**31 - 1))
def test_effective_hessian_frobenius_and_autograd(d, r, seed):
    r = min(r, d)
    rng = np.random.default_rng(seed)
    T = rng.standard_normal((d, d))
    T = T + T.T
    U = rng.standard_normal((d, r))
    N = _null_space_basis(U)
    # Frobenius: explicit Jacobian of pi, Jvec(xi) = vec(xi U^T + U xi^T)
    J = np.empty((d * d, d * r))
    for j in range(d * r):
        E = np.zeros(d * r)
        E[j] = 1.0
        xi = E.reshape(d, r)
        J[:, j] = (xi @ U.T + U @ xi.T).reshape(-1)
    S = U @ U.T - T
    ref = N.T @ (J.T @ J + 2.0 * np.kron(S, np.eye(r))) @ N
    assert _rel_eig_err(effective_hessian(FrobeniusLoss(T), U), ref) <= EIG_RTOL

    # a non-quadratic loss through autograd, against autograd's full Hessian of U -> ell(UU^T)
    def ell(Q):
        return anp.sum(anp.log(anp.cosh(Q - T))) + 0.1 * anp.trace(Q) ** 2

    loss = quadnet.AutogradLoss(ell, d=d)
    full = autograd.hessian(lambda u: ell(anp.reshape(u, (d, r)) @ anp.reshape(u, (d, r)).T))(
        U.reshape(-1))
    assert _rel_eig_err(effective_hessian(loss, U), N.T @ full @ N) <= EIG_RTOL


def test_vertical_zeros_at_zero_residual_minimiser():
    for d, r, seed in [(6, 3, 0), (8, 4, 1), (5, 1, 2)]:
        n_h = horizontal_dimension(d, r)
        loss = GaussianSensing.random(d, r, n_h + 3, seed=seed)     # m >= n_h
        U = loss.U_star
        w = np.linalg.eigvalsh(factor_hessian(loss, U))
        # rounding-level zeros are ~1e-15 lambda_max; generic nonzero ones >~1e-4 lambda_max
        zero = np.abs(w) <= 1e-9 * w[-1]
        assert np.count_nonzero(zero) == r * (r - 1) // 2
        weff = np.linalg.eigvalsh(effective_hessian(loss, U))
        assert weff[0] > 1e-9 * weff[-1]
        # the nonzero part of the full spectrum is the effective spectrum
        assert np.max(np.abs(np.sort(w[~zero]) - weff)) <= EIG_RTOL * weff[-1]


def test_invariance_under_orthogonal_representative():
    loss = GaussianSensing.random(7, 3, 80, seed=3)
    rng = np.random.default_rng(0)
    U = rng.standard_normal((7, 3))                  # away from the minimiser
    R = np.linalg.qr(rng.standard_normal((3, 3)))[0]
    assert _rel_eig_err(effective_hessian(loss, U @ R), effective_hessian(loss, U)) <= EIG_RTOL


def test_gram_form_is_generalised_eigenproblem_against_quotient_metric():
    """At zero residual: eig(H_eff) = eig(Gram form on T_Q M, quotient metric) in ANY tangent basis."""
    d, r = 6, 2
    loss = GaussianSensing.random(d, r, 60, seed=5)
    U = loss.U_star
    M = PSDQuotient(d, r)
    rng = np.random.default_rng(1)
    n_h = horizontal_dimension(d, r)
    Zdots = [M.differential(U, rng.standard_normal((d, r))) for _ in range(n_h)]  # not orthonormal
    meas = np.array([[loss.X[i] @ Z @ loss.X[i] for Z in Zdots] for i in range(loss.m)])
    gram = meas.T @ meas / loss.m                                # (1/m) sum <A_i, Z_a><A_i, Z_b>
    lifts = np.array([M.lift(U, Z).reshape(-1) for Z in Zdots])
    metric = lifts @ lifts.T                                     # g(Z_a, Z_b) = <lift, lift>
    gen = scipy.linalg.eigh(gram, metric, eigvals_only=True)
    w = np.linalg.eigvalsh(effective_hessian(loss, U))
    # the random tangent basis has condition number ~1e2, costing ~2 digits: 1e-8 is generous
    assert np.max(np.abs(gen - w)) <= 1e-8 * w[-1]


# ------------------------------------------------------------------------ matrix-free
@pytest.mark.parametrize("which", ["smallest", "largest"])
@pytest.mark.parametrize("d,r,k", [(12, 3, 1), (15, 4, 3), (20, 1, 2)])
def test_effective_spectrum_matches_dense(which, d, r, k):
    loss = GaussianSensing.random(d, r, 3 * horizontal_dimension(d, r), seed=d + r)
    rng = np.random.default_rng(k)
    for U in (loss.U_star, loss.U_star + 0.3 * rng.standard_normal((d, r))):
        w = np.linalg.eigvalsh(effective_hessian(loss, U))
        sp = effective_spectrum(loss, U, k=k, which=which)
        ref = w[:k] if which == "smallest" else w[-k:]
        # tol=1e-10 ARPACK default: Ritz values converge to ~1e-14 relative here
        assert np.max(np.abs(sp.eigenvalues - ref)) <= 1e-9 * abs(w).max()
        assert np.all(np.abs(sp.eigenvalues - ref) <= sp.error_bound + 1e-12 * abs(w).max())
        for X in sp.eigenvectors:
            K = U.T @ X
            assert np.linalg.norm(K - K.T) <= 1e-12 * np.linalg.norm(U)   # horizontal
            assert abs(np.linalg.norm(X) - 1) <= 1e-12


def test_effective_spectrum_deterministic_and_counts_hvps():
    loss = GaussianSensing.random(10, 2, 100, seed=0)
    a = effective_spectrum(loss, loss.U_star, k=2, seed=7)
    b = effective_spectrum(loss, loss.U_star, k=2, seed=7)
    assert np.array_equal(a.eigenvalues, b.eigenvalues)
    assert np.array_equal(a.eigenvectors, b.eigenvectors)
    assert a.n_hvp > 0 and a.n_h == horizontal_dimension(10, 2)


def test_vertical_shift_retry_when_k_reaches_mid_spectrum():
    """k = n_h - 1 smallest: the mid-spectrum vertical shift is inside the wanted range at first."""
    d, r = 5, 3
    n_h = horizontal_dimension(d, r)
    loss = GaussianSensing.random(d, r, 40, seed=2)
    w = np.linalg.eigvalsh(effective_hessian(loss, loss.U_star))
    sp = effective_spectrum(loss, loss.U_star, k=n_h - 1)
    assert np.max(np.abs(sp.eigenvalues - w[:-1])) <= 1e-9 * w[-1]
    assert sp.vertical_shift > w[-2]
    sp = effective_spectrum(loss, loss.U_star, k=n_h - 1, which="largest")
    assert np.max(np.abs(sp.eigenvalues - w[1:])) <= 1e-9 * w[-1]


def test_effective_operator_is_hessian_on_horizontal_and_shift_on_vertical():
    loss = GaussianSensing.random(8, 3, 50, seed=4)
    U = np.random.default_rng(2).standard_normal((8, 3))
    op = effective_operator(loss, U, vertical_shift=2.5)
    M = PSDQuotient(8, 3)
    Om = np.array([[0, 1.0, -2], [-1, 0, 0.5], [2, -0.5, 0]])
    V = U @ Om
    assert np.allclose(op.matvec(V.reshape(-1)), 2.5 * V.reshape(-1), rtol=0, atol=1e-12)
    xi = M.random_tangent_vector(U, 3)
    ref = M.horizontal_projection(U, loss.factor_hvp(U, xi))
    assert np.allclose(op.matvec(xi.reshape(-1)), ref.reshape(-1), rtol=0, atol=1e-12)
    assert op.n_hvp == 2


def test_effective_operator_matmat_equals_columnwise_matvec():
    """The blocked path (one batched HVP for all columns) is the column-by-column operator:
    same sums in another BLAS order, so equal to rounding (1e-12 relative)."""
    loss = GaussianSensing.random(7, 3, 60, seed=6)
    U = np.random.default_rng(8).standard_normal((7, 3))
    op = effective_operator(loss, U, vertical_shift=1.5)
    V = np.random.default_rng(9).standard_normal((21, 4))
    cols = np.column_stack([op.matvec(V[:, j]) for j in range(4)])
    assert np.linalg.norm(op.matmat(V) - cols) <= 1e-12 * np.linalg.norm(cols)
    assert op.n_hvp == 8


def test_indefinite_effective_hessian_is_reported():
    """Frobenius loss with U on the 2nd eigenvector of T: a critical point and a saddle."""
    d = 6
    lam = np.array([5.0, 3.0, 1.0, 0.5, -1.0, -2.0])
    Qo = np.linalg.qr(np.random.default_rng(0).standard_normal((d, d)))[0]
    T = (Qo * lam) @ Qo.T
    U = np.sqrt(3.0) * Qo[:, [1]]
    loss = FrobeniusLoss(T)
    assert np.linalg.norm(loss.factor_gradient(U)) <= 1e-12
    w = np.linalg.eigvalsh(effective_hessian(loss, U))
    assert w[0] < -1.0                         # lambda_min = 4 (3 - 5) / ... < 0: not hidden
    sp = effective_spectrum(loss, U, k=1)
    assert sp.has_negative and abs(sp.eigenvalues[0] - w[0]) <= 1e-10 * abs(w).max()


# ----------------------------------------------------------------------- bad input
def test_bad_input():
    loss = GaussianSensing.random(6, 2, 40, seed=0)
    U = loss.U_star
    n_h = horizontal_dimension(6, 2)
    with pytest.raises(ValueError, match="k must be"):
        effective_spectrum(loss, U, k=0)
    with pytest.raises(ValueError, match="k must be"):
        effective_spectrum(loss, U, k=n_h)
    with pytest.raises(TypeError, match="k must be an integer"):
        effective_spectrum(loss, U, k=1.5)
    with pytest.raises(ValueError, match="which"):
        effective_spectrum(loss, U, which="min")
    with pytest.raises(ValueError, match="tol"):
        effective_spectrum(loss, U, tol=-1.0)
    with pytest.raises(TypeError, match="loss"):
        effective_hessian(np.eye(6), U)
    H0 = effective_hessian(loss, np.zeros((6, 2)))     # rank 0: accepted, dim H_U = d r
    assert H0.shape == (12, 12) and np.all(np.isfinite(H0))
    with pytest.raises(ValueError, match="shape"):
        effective_spectrum(loss, np.ones((5, 2)))
    with pytest.raises(ValueError, match="non-finite"):
        effective_hessian(loss, np.full((6, 2), np.nan))
    with pytest.raises(ValueError, match="vertical_shift"):
        effective_operator(loss, U, vertical_shift=np.inf)

    class Asymmetric(FrobeniusLoss):
        def factor_hvp(self, U, xi):
            return xi @ np.triu(np.ones((U.shape[1], U.shape[1])))

    with pytest.raises(ValueError, match="not symmetric"):
        effective_hessian(Asymmetric(np.eye(4)), np.eye(4)[:, :2])


# --------------------------------------------------------------------- population
@settings(max_examples=20, deadline=None)
@given(d=st.integers(2, 9), r=st.integers(1, 5), seed=st.integers(0, 2**31 - 1))
def test_population_closed_form_spectrum(d, r, seed):
    r = min(r, d)
    U = np.random.default_rng(seed).standard_normal((d, r))
    w = np.linalg.eigvalsh(population_effective_hessian(U))
    closed = population_effective_spectrum(U)
    assert closed.shape == (horizontal_dimension(d, r),)
    assert np.max(np.abs(w - closed)) <= EIG_RTOL * closed[-1]


def test_population_hvp_is_two_T_zeta_U_and_r1_closed_form():
    rng = np.random.default_rng(0)
    U, xi = rng.standard_normal((7, 3)), rng.standard_normal((7, 3))
    zeta = xi @ U.T + U @ xi.T
    ref = 2.0 * population_normal_operator(zeta) @ U        # sensing module's T, independently
    assert np.allclose(population_effective_hvp(U, xi), ref, rtol=1e-13, atol=0)
    # the quadratic form 2||zeta||^2 + tr(zeta)^2
    q = np.sum(xi * population_effective_hvp(U, xi))
    assert abs(q - (2 * np.sum(zeta**2) + np.trace(zeta) ** 2)) <= 1e-12 * abs(q)
    u = rng.standard_normal((9, 1))
    n2 = float(np.sum(u**2))
    w = np.linalg.eigvalsh(population_effective_hessian(u))
    assert np.allclose(w[:-1], 4 * n2, rtol=1e-12) and np.isclose(w[-1], 12 * n2, rtol=1e-12)
    # equal Gram eigenvalues g: diagonal block gives 8g (r-1 times) and (8 + 4r) g
    Uo = 1.7 * np.linalg.qr(rng.standard_normal((8, 3)))[0]
    grp = population_effective_spectrum(Uo, grouped=True)
    g = 1.7**2
    assert np.allclose(grp["diagonal"], [8 * g, 8 * g, (8 + 12) * g], rtol=1e-12)
    assert np.allclose(grp["offdiagonal"], 8 * g, rtol=1e-12) and grp["multiplicity_normal"] == 5


def test_empirical_effective_hessian_approaches_population():
    """E[T_m] = T, so H_eff(emp) -> H_eff(pop) at Q*; the deviation shrinks like m^{-1/2}."""
    d, r = 6, 2
    devs = []
    for m in (2_000, 50_000):
        loss = GaussianSensing.random(d, r, m, seed=11)
        U = loss.U_star
        Hp = population_effective_hessian(U)
        devs.append(np.linalg.norm(effective_hessian(loss, U) - Hp, 2) / np.linalg.norm(Hp, 2))
    # relative spectral-norm deviation ~ sqrt(c/m), c ~ 10-50 from fourth/eighth Gaussian
    # moments: 0.07-0.16 at m = 2e3, 0.014-0.03 at 5e4 (seed 11 gives 0.069 and 0.031).
    # The fixed seed makes this deterministic; 0.1 leaves >3x margin at 5e4.
    assert devs[1] <= 0.1
    assert devs[1] < devs[0]


# ------------------------------------------------------------ preconditioned (lobpcg) path
@settings(max_examples=20, deadline=None)
@given(d=st.integers(1, 9), r=st.integers(1, 5), seed=st.integers(0, 2**31 - 1))
def test_population_inverse_is_inverse_on_horizontal_space(d, r, seed):
    """P H_pop = I on H_U: every eigenvalue of the product in the horizontal basis is 1."""
    r = min(r, d)
    rng = np.random.default_rng(seed)
    # singular values in [0.5, 2]: condition of H_pop <= 3 * 16 = 48, so rounding ~1e-14
    Wq = np.linalg.qr(rng.standard_normal((d, r)))[0]
    Vq = np.linalg.qr(rng.standard_normal((r, r)))[0]
    U = (Wq * rng.uniform(0.5, 2.0, r)) @ Vq.T
    B = PSDQuotient(d, r).horizontal_basis(U)
    P = B.T @ np.column_stack([population_effective_inverse(U, B[:, j].reshape(d, r)).ravel()
                               for j in range(B.shape[1])])
    ev = np.linalg.eigvals(P @ population_effective_hessian(U))
    assert np.max(np.abs(ev - 1.0)) <= 1e-10
    assert np.max(np.abs(P - P.T)) <= 1e-10 * np.abs(P).max()        # symmetric on H_U
    # output horizontal, input's vertical part ignored
    xi = population_effective_inverse(U, rng.standard_normal((d, r)))
    K = U.T @ xi
    assert np.linalg.norm(K - K.T) <= 1e-12 * np.linalg.norm(U) * np.linalg.norm(xi)
    if r > 1:
        Om = rng.standard_normal((r, r))
        assert np.linalg.norm(population_effective_inverse(U, U @ (Om - Om.T))) <= 1e-12


@pytest.mark.parametrize("d,r,k", [(12, 3, 1), (15, 4, 3), (20, 1, 2)])
def test_lobpcg_path_matches_dense(d, r, k):
    loss = GaussianSensing.random(d, r, 3 * horizontal_dimension(d, r), seed=d + r)
    rng = np.random.default_rng(k)
    for U in (loss.U_star, loss.U_star + 0.3 * rng.standard_normal((d, r))):   # at / away
        w = np.linalg.eigvalsh(effective_hessian(loss, U))
        sp = effective_spectrum(loss, U, k=k, preconditioner="population", tol=1e-8)
        assert sp.method == "lobpcg" and sp.vertical_shift == 0.0
        # residual 1e-8 x RMS eigenvalue: eigenvalue error ~ res^2 / gap ~ 1e-15 here, and
        # the a-posteriori bound must cover it
        assert np.max(np.abs(sp.eigenvalues - w[:k])) <= EIG_RTOL * abs(w).max()
        assert np.all(np.abs(sp.eigenvalues - w[:k]) <= sp.error_bound + 1e-13 * abs(w).max())
        for X in sp.eigenvectors:
            K = U.T @ X
            assert np.linalg.norm(K - K.T) <= 1e-12 * np.linalg.norm(U)
            assert abs(np.linalg.norm(X) - 1) <= 1e-12
    a = effective_spectrum(loss, U, k=k, preconditioner="auto", seed=3)
    b = effective_spectrum(loss, U, k=k, preconditioner="auto", seed=3)
    assert a.method == "lobpcg" and np.array_equal(a.eigenvectors, b.eigenvectors)


def test_preconditioner_selection_and_fallbacks():
    loss = GaussianSensing.random(8, 2, 200, seed=5)
    U = loss.U_star
    assert effective_spectrum(loss, U).method == "eigsh"                     # default
    assert effective_spectrum(loss, U, which="largest", preconditioner="auto").method == "eigsh"
    n_h = horizontal_dimension(8, 2)
    assert effective_spectrum(loss, U, k=n_h // 5 + 1, preconditioner="auto").method == "eigsh"
    # non-sensing loss: "auto" falls back to ARPACK; an explicit callable is used as given
    T = np.random.default_rng(1).standard_normal((6, 6))
    fro = FrobeniusLoss(T + T.T)
    V = np.random.default_rng(2).standard_normal((6, 2))
    w = np.linalg.eigvalsh(effective_hessian(fro, V))
    assert effective_spectrum(fro, V, preconditioner="auto").method == "eigsh"
    sp = effective_spectrum(fro, V, k=2, preconditioner=lambda Z: Z, tol=1e-9)
    assert sp.method == "lobpcg"
    assert np.max(np.abs(sp.eigenvalues - w[:2])) <= EIG_RTOL * abs(w).max()
    # the population preconditioner is SPD at any U: valid (if less effective) off sensing
    sp = effective_spectrum(fro, V, k=2, preconditioner="population", tol=1e-9)
    assert np.max(np.abs(sp.eigenvalues - w[:2])) <= EIG_RTOL * abs(w).max()


def test_lobpcg_reports_indefinite_and_bad_input():
    d = 6
    lam = np.array([5.0, 3.0, 1.0, 0.5, -1.0, -2.0])
    Qo = np.linalg.qr(np.random.default_rng(0).standard_normal((d, d)))[0]
    loss = FrobeniusLoss((Qo * lam) @ Qo.T)
    U = np.sqrt(3.0) * Qo[:, [1]]
    w = np.linalg.eigvalsh(effective_hessian(loss, U))
    sp = effective_spectrum(loss, U, k=1, preconditioner="population", tol=1e-9)
    assert sp.has_negative and abs(sp.eigenvalues[0] - w[0]) <= EIG_RTOL * abs(w).max()
    g = GaussianSensing.random(10, 2, 100, seed=0)
    with pytest.raises(ValueError, match="preconditioner"):
        effective_spectrum(g, g.U_star, preconditioner="jacobi")
    with pytest.raises(ValueError, match="preconditioner"):
        effective_spectrum(g, g.U_star, preconditioner=lambda Z: Z[:, :1])
    with pytest.raises(RuntimeError, match="lobpcg did not converge"):
        effective_spectrum(g, g.U_star, preconditioner="population", tol=1e-12, max_iter=2)
    with pytest.raises(ValueError, match="eta"):
        population_effective_inverse(g.U_star, np.ones((3, 2)))
    with pytest.raises(ValueError, match="rank deficient"):
        population_effective_inverse(np.zeros((4, 2)), np.ones((4, 2)))


def test_effective_spectrum_maxiter_is_a_deprecated_alias_of_max_iter():
    """``maxiter=`` (former name) warns and gives the same bits as ``max_iter=``; both: refused."""
    g = GaussianSensing.random(6, 2, 60, seed=1)
    new = effective_spectrum(g, g.U_star, k=2, max_iter=500, seed=4)
    with pytest.warns(DeprecationWarning, match="max_iter"):
        old = effective_spectrum(g, g.U_star, k=2, maxiter=500, seed=4)
    assert np.array_equal(new.eigenvalues, old.eigenvalues)
    with pytest.raises(TypeError, match="max_iter"):
        effective_spectrum(g, g.U_star, max_iter=5, maxiter=5)


def test_curvature_check_quick_mode_passes():
    from quadnet.harness.checks import CheckContext, run_check

    res = run_check("curvature", CheckContext(quick=True))
    failed = [(r.claim, r.measured, r.tolerance) for r in res.rows if not r.passed]
    assert res.passed, failed


# ------------------------------------------------------------------- the rank boundary
def _rank_k_point(d, r, k, seed, critical=True):
    from quadnet.geometry.conformance import random_orthogonal

    rng = np.random.default_rng(seed)
    P = random_orthogonal(d, rng)
    lam = np.concatenate([np.arange(k, 0, -1) + 1.0, np.zeros(2), -np.arange(1.0, d - k - 1)])
    T = P @ np.diag(lam) @ P.T
    if critical:
        U = np.zeros((d, r))
        U[:, :k] = P[:, :k] * np.sqrt(lam[:k])
    else:
        U = rng.standard_normal((d, k)) @ rng.standard_normal((k, r))
    return qn.FrobeniusLoss(T), U @ random_orthogonal(r, rng), lam


@pytest.mark.parametrize("d,r,k,critical", [(6, 4, 2, True), (6, 4, 2, False), (5, 3, 1, True),
                                            (7, 5, 3, False), (6, 5, 4, True)])
def test_boundary_spectrum_is_the_effective_hessian_split(d, r, k, critical):
    # the signal (+) excess block structure is exact at every rank-deficient U; the dense
    # effective Hessian in the geometry's rank-aware basis has the same n_h eigenvalues
    from quadnet.curvature import boundary_spectrum

    loss, U, lam = _rank_k_point(d, r, k, seed=d + r + k)
    sp = boundary_spectrum(loss, U)
    w = np.linalg.eigvalsh(qn.effective_hessian(loss, U))
    assert sp.rank == k and w.size == sp.n_h == qn.curvature.horizontal_dimension(d, r, k)
    assert np.max(np.abs(w - sp.eigenvalues)) <= 1e-12 * max(1.0, np.max(np.abs(w)))
    if critical:
        # idle columns are flat along the two zero eigenvalues of T: 2 (r - k) structural zeros;
        # the negative eigenvalues give excess curvature 2 |lambda|
        assert sp.structural_zeros == 2 * (r - k)
        assert np.allclose(sp.excess, np.sort(np.concatenate([[0, 0], -2 * lam[k + 2:]])),
                           atol=1e-12)
        assert not sp.has_negative


def test_structural_zeros_at_an_overparameterised_sensing_minimiser():
    # zero residual (S = 0): every excess direction is flat, (r - k)(d - k) structural zeros;
    # effective_spectrum and local_curvature report the signal lambda_min of the rank-k factor
    from quadnet.curvature import boundary_spectrum, local_curvature

    loss = qn.GaussianSensing.random(8, 2, 200, seed=3)
    U = np.hstack([loss.U_star, np.zeros((8, 2))])            # r = 4 > rank(Q*) = 2
    sp = boundary_spectrum(loss, U)
    assert sp.structural_zeros == (4 - 2) * (8 - 2)
    ref = np.linalg.eigvalsh(qn.effective_hessian(loss, loss.U_star))[0]
    assert abs(sp.lambda_min_signal - ref) <= 1e-12 * ref
    es = qn.effective_spectrum(loss, U, k=1)
    assert es.rank == 2 and es.structural_zeros == 12 and abs(es.eigenvalues[0] - ref) <= 1e-9 * ref
    assert es.eigenvectors.shape == (1, 8, 4)
    lc = local_curvature(loss, U)
    assert lc.rank == 2 and lc.structural_zeros == 12 and abs(lc.lambda_min - ref) <= 1e-12 * ref


def test_rates_at_a_rank_deficient_minimiser_and_saddle_warning():
    from quadnet.curvature import descent_contraction, flow_decay_rate, local_curvature

    loss, U, lam = _rank_k_point(6, 4, 2, seed=5)
    fr = flow_decay_rate(loss, U)
    assert fr.relative_error <= 1e-6
    dc = descent_contraction(loss, U, 0.05)
    assert dc.relative_error <= 1e-6
    # a positive eigenvalue of T left out of range(U): a negative excess eigenvalue, a saddle
    T = loss.target + 1.5 * np.outer(*[np.linalg.eigh(loss.target)[1][:, 3]] * 2)
    with pytest.warns(qn.exceptions.IndefiniteHessianWarning):
        lc = local_curvature(qn.FrobeniusLoss(T), U)
    assert lc.indefinite and lc.excess_min < 0


def test_boundary_spectrum_bad_input():
    from quadnet.curvature import boundary_spectrum

    loss, U, _ = _rank_k_point(5, 3, 1, seed=0)
    with pytest.raises(ValueError, match="zero_rtol"):
        boundary_spectrum(loss, U, zero_rtol=1.5)
    with pytest.raises(ValueError, match="non-finite"):
        boundary_spectrum(loss, np.full((5, 3), np.nan))
    with pytest.raises(ValueError, match="shape"):
        boundary_spectrum(loss, U[:4])
    sp = boundary_spectrum(loss, np.zeros((5, 3)))            # rank 0: all excess, no NaN
    assert sp.rank == 0 and np.all(np.isfinite(sp.eigenvalues))
    with pytest.raises(ValueError, match="no signal part"):
        qn.effective_spectrum(loss, np.zeros((5, 3)))


# ------------------------------------------------------------------- structured Gram route
class _GramSensing(GaussianSensing):
    def gram_factor(self, U):
        XU = self.X @ U
        return ((2.0 / np.sqrt(self.m)) * (self.X[:, :, None] * XU[:, None, :])).reshape(self.m, -1)


def test_gram_route_matches_the_dense_effective_spectrum():
    # K^T K + 2 S (x) I_r is the factor Hessian of the sensing loss; projected with the
    # vertical shift its k smallest eigenvalues are the effective ones, at and away from Q*
    base = GaussianSensing.random(8, 3, 150, seed=2)
    loss = _GramSensing(base.X, base.y)
    for U in (base.U_star, base.U_star + 0.2 * np.random.default_rng(0).standard_normal((8, 3))):
        g = qn.curvature.gram_effective_spectrum(loss, U, k=3)
        w = np.linalg.eigvalsh(effective_hessian(loss, U))
        assert np.allclose(g.eigenvalues, w[:3], rtol=1e-11, atol=1e-12 * abs(w).max())
        assert np.all(g.residual_norms <= 1e-9 * abs(w).max()) and g.method == "gram"
        Z = g.eigenvectors[0]
        assert np.linalg.norm(U.T @ Z - Z.T @ U) <= 1e-12       # horizontal


def test_gram_route_needs_the_hook():
    base = GaussianSensing.random(6, 2, 60, seed=0)
    with pytest.raises(TypeError, match="gram_factor"):
        qn.curvature.gram_effective_spectrum(FrobeniusLoss(np.eye(6)), base.U_star)
    # GaussianSensing's own hook gives the same as the subclass above
    g = qn.curvature.gram_effective_spectrum(base, base.U_star, k=2)
    w = np.linalg.eigvalsh(effective_hessian(base, base.U_star))
    assert np.allclose(g.eigenvalues, w[:2], rtol=1e-11)

    class Bad(GaussianSensing):
        def gram_factor(self, U):
            return np.ones((3, 5))

    with pytest.raises(ValueError, match="gram_factor"):
        qn.curvature.gram_effective_spectrum(Bad(base.X, base.y), base.U_star)


# ------------------------------------ one answer to "the smallest eigenvalue" at the boundary
def _excess_below_signal_point(d=10, seed=0):
    """A rank-2 minimiser at width r = 3 whose idle column is stiffer than nothing but softer
    than the signal: ``T = 10 v1 v1^T + 8 v2 v2^T - 2.5 P_rest``, ``U = [U_2, 0]``, so the
    excess block ``2 W_0^T S W_0 = 5 I_{d-2}`` lies below the signal block (smallest 21)."""
    rng = np.random.default_rng(seed)
    V = np.linalg.qr(rng.standard_normal((d, d)))[0]
    lam = np.concatenate([[10.0, 8.0], np.full(d - 2, -2.5)])
    U = np.zeros((d, 3))
    U[:, :2] = V[:, :2] * np.sqrt(lam[:2])
    return FrobeniusLoss((V * lam) @ V.T), U


@pytest.mark.parametrize("which", ["smallest", "largest"])
def test_effective_spectrum_and_dense_hessian_agree_at_a_rank_deficient_minimiser(which):
    from quadnet.exceptions import RankDeficientSpectrumWarning

    loss, U = _excess_below_signal_point()
    w = np.linalg.eigvalsh(effective_hessian(loss, U))      # dense reference
    assert np.allclose(w[:8], 5.0, atol=1e-12) and abs(w[8] - 21.0) <= 1e-12
    if which == "smallest":
        with pytest.warns(RankDeficientSpectrumWarning, match=r"smallest eigenvalue of the "
                          r"whole effective Hessian is 5 \(excess"):
            es = effective_spectrum(loss, U, k=2, which=which)
        ref = w[:2]
        assert es.overall_parts == ("excess", "excess")
        assert abs(es.eigenvalues[0] - 21.0) <= 1e-9          # the signal block's
        assert "signal block's (smallest 21)" in es.note
    else:
        es = effective_spectrum(loss, U, k=2, which=which)    # the signal is the extreme: silent
        ref = w[-2:]
        assert es.overall_parts == ("signal", "signal")
        np.testing.assert_allclose(es.eigenvalues, ref, rtol=1e-9)
    np.testing.assert_allclose(es.overall_eigenvalues, ref, rtol=1e-9, atol=1e-12)


def test_overall_eigenvalues_match_the_dense_hessian_on_random_rank_deficient_sensing_points():
    # noisy sensing at U = [U_k, 0] V^T (not a critical point: S != 0, excess block generic);
    # the merged extremes equal eigvalsh of the explicit effective Hessian
    rng = np.random.default_rng(4)
    for d, r, k, m in [(8, 3, 2, 90), (9, 4, 1, 120), (7, 5, 3, 100)]:
        loss = GaussianSensing.random(d, 3, m, seed=rng, noise=0.3)
        U = np.zeros((d, r))
        U[:, :k] = rng.standard_normal((d, k))
        U = U @ np.linalg.qr(rng.standard_normal((r, r)))[0]
        w = np.linalg.eigvalsh(effective_hessian(loss, U))
        scale = np.max(np.abs(w))
        for which, ref in (("smallest", w[:2]), ("largest", w[-2:])):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", qn.exceptions.RankDeficientSpectrumWarning)
                es = effective_spectrum(loss, U, k=2, which=which)
            assert es.rank == k and es.note.startswith(f"U has rank {k} < r = {r}")
            np.testing.assert_allclose(es.overall_eigenvalues, ref, atol=1e-9 * scale)
            assert set(es.overall_parts) <= {"signal", "excess"}


def test_full_rank_overall_eigenvalues_are_the_eigenvalues():
    loss = GaussianSensing.random(6, 2, 60, seed=1)
    es = effective_spectrum(loss, loss.U_star, k=2)
    assert es.note == "" and es.overall_parts == ("signal", "signal")
    np.testing.assert_array_equal(es.overall_eigenvalues, es.eigenvalues)


def test_mixed_precision_spectrum_is_a_float64_answer():
    """precision="mixed" iterates with float32 products but returns float64 Rayleigh quotients
    and residuals: the dense eigenvalues lie within the returned bounds (Weyl), like the
    double path's, at the same tolerance."""
    from quadnet import GaussianSensing, effective_hessian, effective_spectrum

    loss = GaussianSensing.random(30, 3, 3000, seed=0)
    U = loss.U_star
    dense = np.linalg.eigvalsh(effective_hessian(loss, U))
    for tol in (1e-6, 1e-9):
        sp = effective_spectrum(loss, U, k=2, preconditioner="population", precision="mixed",
                                tol=tol)
        assert sp.method == "lobpcg-mixed"
        assert np.all(np.abs(sp.eigenvalues - dense[:2]) <= sp.residual_norms + 1e-13)
        ref = effective_spectrum(loss, U, k=2, preconditioner="population", tol=tol)
        # the same tolerance reached: residuals of the same order as the double path's
        assert np.all(sp.residual_norms <= 10 * ref.residual_norms.max() + 1e-12)


def test_single_precision_hvp_is_accurate_to_float32():
    """Relative error of a float32 product <= 1e-5: X U and the residuals are formed in float64
    and rounded once, then each entry is a float32 dot product over d and a blocked sum over m
    (error ~ sqrt(d) u_32 ~ 5e-7 here, u_32 = 6e-8; the bound leaves a factor 20)."""
    from quadnet import GaussianSensing

    loss = GaussianSensing.random(60, 4, 20000, seed=1)
    rng = np.random.default_rng(2)
    U = loss.U_star + 0.1 * rng.standard_normal(loss.U_star.shape)    # residuals nonzero
    h64, h32 = loss.hvp_at(U), loss.single_precision_hvp_at(U)
    xi = rng.standard_normal((5, 60, 4))
    a, b = h64(xi), h32(xi)
    assert b.dtype == np.float64
    err = np.linalg.norm(a - b, axis=(1, 2)) / np.linalg.norm(a, axis=(1, 2))
    assert np.all(err <= 1e-5), err
    assert np.all(err > 0)            # it is the float32 route


def test_mixed_precision_refusals_name_what_is_missing():
    from quadnet import FrobeniusLoss, GaussianSensing, effective_spectrum

    U = np.linalg.qr(np.random.default_rng(0).standard_normal((6, 2)))[0]
    with pytest.raises(ValueError, match=r"precision='mixed' needs a loss with a float32 "
                                         r"Hessian-vector product .* FrobeniusLoss has none"):
        effective_spectrum(FrobeniusLoss(np.eye(6)), U, precision="mixed",
                           preconditioner=lambda Z: Z)
    loss = GaussianSensing.random(6, 2, 200, seed=0)
    with pytest.raises(ValueError, match="precision='mixed' runs LOBPCG: give a preconditioner"):
        effective_spectrum(loss, loss.U_star, precision="mixed")
    with pytest.raises(ValueError, match="precision"):
        effective_spectrum(loss, loss.U_star, precision="half")
