"""Geometry at every factor (docs/stratified.md): rank-deficient projections against an
independent null-space computation, continuity as sigma_min -> 0, accuracy at kappa(U) = 1e12
against 60-digit mpmath, extreme scales, lift residuals, no NaN at any rank.

Tolerances. The null-space references are SVD-based orthonormal bases of the range of the
linear map Omega -> U Omega (vertical) and of the kernel of xi -> skew(U^T xi) (horizontal),
backward stable with error ~ eps ||A|| / sigma_min(A) ~ 1e-15 for the well-separated
spectra used there, so 1e-10 leaves five orders. The stated error bound of the projections
is c eps sigma_max / (sigma_{r-1}^2 + sigma_r^2)^{1/2} (docs/stratified.md); the kappa tests
check it with c = 100.
"""

import warnings

import mpmath
import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import quadnet as qn
from quadnet.geometry import _kernels as K
from quadnet.geometry.manifold import horizontal_dimension

EPS = np.finfo(float).eps


def factor(d, r, sigma, rng):
    """``P diag(sigma) W^T`` with Haar ``P`` (d x r orthonormal) and ``W`` (r x r)."""
    P = np.linalg.qr(rng.standard_normal((d, r)))[0]
    W = np.linalg.qr(rng.standard_normal((r, r)))[0]
    return (P * np.asarray(sigma, dtype=float)) @ W.T


def skew_basis(r):
    out = []
    for a in range(r):
        for b in range(a + 1, r):
            Om = np.zeros((r, r))
            Om[a, b], Om[b, a] = 1.0, -1.0
            out.append(Om)
    return out


def nullspace_projections(U, Z):
    """Independent references: P_v from an orthonormal basis of range(Omega -> U Omega) by
    SVD, P_h from scipy.linalg.null_space of xi -> skew(U^T xi)."""
    d, r = U.shape
    sk = skew_basis(r)
    if sk:
        A = np.array([(U @ Om).reshape(-1) for Om in sk]).T
        Bv = scipy.linalg.orth(A, rcond=1e-9)
    else:
        Bv = np.zeros((d * r, 0))
    pv = (Bv @ (Bv.T @ Z.reshape(-1))).reshape(d, r)
    cons = []
    for i in range(d * r):
        E = np.zeros(d * r)
        E[i] = 1.0
        S = U.T @ E.reshape(d, r)
        cons.append((S - S.T)[np.triu_indices(r, 1)])
    C = np.array(cons).T if r > 1 else np.zeros((0, d * r))
    Bh = scipy.linalg.null_space(C, rcond=1e-9) if C.size else np.eye(d * r)
    ph = (Bh @ (Bh.T @ Z.reshape(-1))).reshape(d, r)
    return pv, ph, Bv.shape[1], Bh.shape[1]


@pytest.mark.parametrize("r", [1, 2, 3, 4, 5, 6])
def test_projections_equal_nullspace_at_every_rank(r):
    """Every k = 0..r, d = r + 2: projections, dim V_U formula, rank."""
    rng = np.random.default_rng(r)
    d = r + 2
    M = qn.PSDQuotient(d, r)
    worst = 0.0
    for k in range(r + 1):
        sigma = np.concatenate([np.linspace(2.0, 0.5, k), np.zeros(r - k)])
        U = factor(d, r, sigma, rng)
        Z = rng.standard_normal((d, r))
        pv_ref, ph_ref, dim_v, dim_h = nullspace_projections(U, Z)
        assert M.rank(U) == k
        assert M.vertical_dimension(U) == dim_v == r * (r - 1) // 2 - (r - k) * (r - k - 1) // 2
        assert horizontal_dimension(d, r, k) == dim_h == d * r - dim_v
        pv, ph = M.vertical_projection(U, Z), M.horizontal_projection(U, Z)
        err = max(np.linalg.norm(pv - pv_ref), np.linalg.norm(ph - ph_ref)) / np.linalg.norm(Z)
        worst = max(worst, err)
        # the bases span the same spaces and are orthonormal
        Bv, Bh = M.vertical_basis(U), M.horizontal_basis(U)
        assert Bv.shape == (d * r, dim_v) and Bh.shape == (d * r, dim_h)
        assert np.linalg.norm(np.hstack([Bv, Bh]).T @ np.hstack([Bv, Bh]) - np.eye(d * r)) < 1e-12
        resid = (Bv @ Bv.T) @ Z.reshape(-1) - pv.reshape(-1)
        assert np.linalg.norm(resid) < 1e-12 * np.linalg.norm(Z)
    assert worst <= 1e-10, worst


def test_continuity_as_sigma_min_vanishes():
    """U_t = P diag(2, 1.3, ..., t) W^T: ||P_v(U_t) - P_v(U_0)|| -> 0 (<= 1e-8 at t = 1e-12);
    the rank drops by one, so dim V_U does not change and the limit is the projection there."""
    rng = np.random.default_rng(7)
    for r in (2, 3, 6):
        d = r + 3
        M = qn.PSDQuotient(d, r)
        P = np.linalg.qr(rng.standard_normal((d, r)))[0]
        W = np.linalg.qr(rng.standard_normal((r, r)))[0]
        base = np.linspace(2.0, 0.7, r - 1)
        at = lambda t: (P * np.append(base, t)) @ W.T  # noqa: E731
        Z = rng.standard_normal((d, r))
        limit = M.vertical_projection(at(0.0), Z)
        errs = [np.linalg.norm(M.vertical_projection(at(2.0 * t), Z) - limit) / np.linalg.norm(Z)
                for t in np.logspace(-1, -12, 12)]
        assert errs[-1] <= 1e-8, errs
        assert all(b <= a * 1.5 + 1e-15 for a, b in zip(errs, errs[1:]))   # monotone to rounding
        # first order in t away from rounding: the error is O(t)
        assert errs[3] < 1e-3


def test_two_vanishing_singular_values_drop_a_pair():
    """Two singular values below the tolerance: the pair is dropped (dim V_U falls by 1) and the
    projection equals the one at the rank-(r-2) limit to O(rtol)."""
    rng = np.random.default_rng(3)
    d, r = 6, 4
    M = qn.PSDQuotient(d, r)
    P = np.linalg.qr(rng.standard_normal((d, r)))[0]
    W = np.linalg.qr(rng.standard_normal((r, r)))[0]
    U_eps = (P * [2.0, 1.0, 3e-12, 1e-12]) @ W.T
    U_0 = (P * [2.0, 1.0, 0.0, 0.0]) @ W.T
    Z = rng.standard_normal((d, r))
    assert M.vertical_dimension(U_eps) == M.vertical_dimension(U_0) == 5
    err = np.linalg.norm(M.vertical_projection(U_eps, Z) - M.vertical_projection(U_0, Z))
    assert err <= 1e-10 * np.linalg.norm(Z)


def _mp_projection(U, Z, dps=60):
    """60-digit reference: P_v(Z) = A (A^T A)^{-1} A^T vec Z, A = [vec(U Omega_ab)] (the
    normal equations are fine at 60 digits)."""
    with mpmath.workdps(dps):
        d, r = U.shape
        Um = mpmath.matrix(U.tolist())
        cols = []
        for a in range(r):
            for b in range(a + 1, r):
                col = []
                for i in range(d):
                    for j in range(r):
                        v = (Um[i, a] if j == b else 0) - (Um[i, b] if j == a else 0)
                        col.append(v)
                cols.append(col)
        A = mpmath.matrix(cols).T
        z = mpmath.matrix(Z.reshape(-1).tolist())
        coef = mpmath.lu_solve(A.T * A, A.T * z)
        pv = A * coef
        return np.array([float(pv[i]) for i in range(d * r)]).reshape(d, r)


@pytest.mark.parametrize("sigma", [
    [1.0, 1e-12],
    [1.0, 0.6, 0.3, 1e-12],
    [1.0, 1e-4, 1e-8, 1e-12],
    [1.0, 1e-6, 1e-9],
])
def test_ill_conditioned_accuracy_against_mpmath(sigma):
    """kappa(U) up to 1e12: error <= 100 eps sigma_max / (sigma_{r-1}^2 + sigma_r^2)^{1/2}
    relative to ||Z|| (the stated bound), against 60 digits on the same float U."""
    rng = np.random.default_rng(len(sigma))
    r = len(sigma)
    d = r + 2
    U = factor(d, r, sigma, rng)
    Z = rng.standard_normal((d, r))
    M = qn.PSDQuotient(d, r)
    s = np.sort(np.linalg.svd(U, compute_uv=False))
    bound = 100 * EPS * s[-1] / np.hypot(s[0], s[1])
    err = np.linalg.norm(M.vertical_projection(U, Z) - _mp_projection(U, Z)) / np.linalg.norm(Z)
    assert err <= max(bound, 1e-14), (err, bound)
    # the Gram route of pymanopt-style solvers divides by 2 sigma_min^2 and loses every digit
    G = U.T @ U
    Kx = U.T @ Z - Z.T @ U
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # scipy: "eigenvalue pair ... zero"
        naive = U @ scipy.linalg.solve_continuous_lyapunov(G, Kx)
    naive_err = np.linalg.norm(naive - _mp_projection(U, Z)) / np.linalg.norm(Z)
    print(f"sigma={sigma}: error {err:.2e} (bound {bound:.2e}); "
          f"Gram/Bartels-Stewart {naive_err:.2e}")
    if sigma[-2] < 1e-3:     # graded spectrum: the Gram route loses kappa^2, we keep kappa_{r-1}
        assert naive_err > 100 * err


def test_nothing_is_nan_at_any_rank():
    rng = np.random.default_rng(11)
    d, r = 5, 3
    M = qn.PSDQuotient(d, r)
    T = rng.standard_normal((d, d))
    loss = qn.FrobeniusLoss(T + T.T)
    for k in range(r + 1):
        U = factor(d, r, [1.5, 0.8, 0.4][:k] + [0.0] * (r - k), rng)
        Z, V = rng.standard_normal((2, d, r))
        Qdot = Z @ U.T + U @ Z.T + np.eye(d)
        outs = [M.vertical_projection(U, Z), M.horizontal_projection(U, Z), M.projection(U, Z),
                M.lift(U, Qdot), M.exp(U, Z), M.retraction(U, Z), M.log(U, V), M.log(V, U),
                M.pair_mean(U, V), M.transport(V, U, Z), M.align(U, V),
                qn.geometry.lyapunov_skew(U, Z.T @ U - U.T @ Z), M.horizontal_basis(U),
                M.vertical_basis(U),
                M.euclidean_to_riemannian_gradient(U, loss.factor_gradient(U)),
                M.euclidean_to_riemannian_hessian(U, loss.factor_gradient(U),
                                                  loss.factor_hvp(U, Z), Z),
                np.array([M.dist(U, V), M.dist(U, U), qn.bures_wasserstein(U @ U.T, V @ V.T)])]
        for o in outs:
            assert np.all(np.isfinite(o))
        if k > 0:
            assert M.random_tangent_vector(U, rng).shape == (d, r)


def test_lift_minimum_norm_and_residual():
    """At rank k < r: xi is horizontal, minimum norm among preimages, differential o lift is
    the projection onto the image, the residual is ||(I - Pi) Qdot (I - Pi)||."""
    rng = np.random.default_rng(5)
    d, r = 6, 4
    M = qn.PSDQuotient(d, r)
    for k in range(r + 1):
        U = factor(d, r, [2.0, 1.2, 0.7, 0.3][:k] + [0.0] * (r - k), rng)
        X = rng.standard_normal((d, r))
        tangent = X @ U.T + U @ X.T
        xi, res = M.lift(U, tangent, return_residual=True)
        assert res <= 1e-12 * np.linalg.norm(tangent) + 1e-300
        assert (np.linalg.norm(M.differential(U, xi) - tangent)
                <= 1e-11 * max(np.linalg.norm(tangent), 1))
        S = U.T @ xi
        assert np.linalg.norm(S - S.T) <= 1e-12 * max(np.linalg.norm(xi), 1)
        # minimum norm: the least-squares solution of the dense (d r) x (d d) system
        D = np.array([M.differential(U, e.reshape(d, r)).reshape(-1) for e in np.eye(d * r)]).T
        ref = np.linalg.lstsq(D, tangent.reshape(-1), rcond=1e-10)[0].reshape(d, r)
        assert np.linalg.norm(xi - ref) <= 1e-9 * max(np.linalg.norm(ref), 1)
        # off the image: the residual is the (I - Pi) Qdot (I - Pi) block
        Qdot = tangent + np.eye(d)
        xi2, res2 = M.lift(U, Qdot, return_residual=True)
        Pk = np.linalg.svd(U)[0][:, :k]
        Pi = Pk @ Pk.T
        assert res2 == pytest.approx(np.linalg.norm((np.eye(d) - Pi) @ (np.eye(d) - Pi)), rel=1e-10)
        with pytest.raises(ValueError, match="not in the image"):
            M.lift(U, Qdot, exact=True)


def test_rank_tolerance_is_the_one_of_validation():
    from quadnet._validation import RANK_RTOL

    assert K.RANK_RTOL is RANK_RTOL or K.RANK_RTOL == RANK_RTOL == 1e-10
    M = qn.PSDQuotient(3, 2, rank_rtol=1e-6)
    U = np.eye(3)[:, :2] * [1.0, 1e-8]
    assert M.rank(U) == 1 and qn.PSDQuotient(3, 2).rank(U) == 2


# --------------------------------------------------------------------- hypothesis
@st.composite
def extreme_factors(draw):
    d = draw(st.integers(1, 6))
    r = draw(st.integers(1, d))
    scale = 10.0 ** draw(st.integers(-150, 150))
    log_kappa = draw(st.floats(0.0, 12.0))
    base = draw(hnp.arrays(np.float64, (d, r), elements=st.floats(-1, 1, width=64)))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    sigma = np.logspace(0, -log_kappa, r) if r > 1 else np.ones(1)
    U = factor(d, r, sigma, rng) + 1e-3 * base * (draw(st.booleans()))
    Z = draw(hnp.arrays(np.float64, (d, r), elements=st.floats(-1e3, 1e3, width=64)))
    return scale * U, Z, scale


@settings(max_examples=60, deadline=None)
@given(extreme_factors())
def test_projection_identities_at_extreme_scales(case):
    """Scales 1e-150..1e150 and kappa up to 1e12: finite, idempotent, complementary,
    horizontal, scale invariant (V_U does not depend on |U|)."""
    U, Z, scale = case
    d, r = U.shape
    M = qn.PSDQuotient(d, r)
    h, v = M.horizontal_projection(U, Z), M.vertical_projection(U, Z)
    nz = max(np.linalg.norm(Z), 1e-300)
    assert np.all(np.isfinite(h)) and np.all(np.isfinite(v))
    assert np.linalg.norm(h + v - Z) <= 1e-13 * nz
    s = np.sort(np.linalg.svd(U / scale, compute_uv=False))
    cond = s[-1] / max(np.hypot(s[0], s[1]) if r > 1 else s[0], 1e-10 * s[-1])
    tol = 1e-12 + 200 * EPS * cond
    assert np.linalg.norm(M.horizontal_projection(U, h) - h) <= tol * nz
    assert np.linalg.norm(M.vertical_projection(U / scale, Z) - v) <= tol * nz
    S = (U / scale).T @ h
    assert np.linalg.norm(S - S.T) <= tol * nz * max(s[-1], 1e-300)
    V = U[::-1].copy()
    dist = M.dist(U, V)
    # dist is homogeneous of degree 1; rounding of the aligned difference is eps ||U||
    assert np.isfinite(dist) and dist == pytest.approx(scale * M.dist(U / scale, V / scale),
                                                       rel=1e-12, abs=1e-13 * M.norm(U, U))


# --------------------------------------------------------------------- Bures-Wasserstein
def _mp_bw(Q1, Q2, dps=60):
    with mpmath.workdps(dps):
        A = mpmath.matrix(Q1.tolist())
        B = mpmath.matrix(Q2.tolist())
        S = mpmath.sqrtm(A)
        mid = mpmath.sqrtm(S * B * S)
        val = sum(A[i, i] + B[i, i] - 2 * mid[i, i] for i in range(A.rows))
        return float(mpmath.sqrt(mpmath.re(val)))


@pytest.mark.parametrize("gap", [1e-2, 1e-5, 1e-8, 1e-11])
def test_bures_wasserstein_accurate_for_nearly_equal_points(gap):
    """Positive definite Q1, Q2 = Q1 + gap * (PSD-keeping perturbation): relative error
    <= 1e-12 against 60-digit mpmath on the same float matrices (the trace formula has
    relative error ~ eps ||Q|| / dist^2: 1.0 at gap 1e-8)."""
    rng = np.random.default_rng(int(-np.log10(gap)))
    n = 4
    A = rng.standard_normal((n, n)) + 2 * np.eye(n)
    Q1 = A @ A.T
    B = A + gap * rng.standard_normal((n, n))
    Q2 = B @ B.T
    Q1, Q2 = 0.5 * (Q1 + Q1.T), 0.5 * (Q2 + Q2.T)
    ref = _mp_bw(Q1, Q2)
    ours = qn.bures_wasserstein(Q1, Q2)
    assert abs(ours - ref) <= 1e-12 * ref, (ours, ref)
    assert qn.bures_wasserstein(Q2, Q1) == pytest.approx(ref, rel=1e-12)


def test_bures_wasserstein_factor_route_matches_dist():
    """Rank-deficient Q (factor route): equals the quotient distance at far points."""
    rng = np.random.default_rng(4)
    M = qn.PSDQuotient(6, 2)
    for _ in range(5):
        U, V = M.random_point(rng), M.random_point(rng)
        bw = qn.bures_wasserstein(U @ U.T, V @ V.T)
        assert bw == pytest.approx(M.dist(U, V), rel=1e-7)


def test_bures_wasserstein_refuses_non_psd():
    with pytest.raises(ValueError, match="positive semidefinite"):
        qn.bures_wasserstein(-np.eye(3), np.eye(3))
    with pytest.raises(ValueError, match="symmetric"):
        qn.bures_wasserstein(np.triu(np.ones((3, 3))), np.eye(3))
    assert qn.bures_wasserstein(np.zeros((2, 2)), np.diag([4.0, 0.0])) == 2.0


def test_pair_mean_is_the_geodesic_midpoint():
    rng = np.random.default_rng(9)
    M = qn.PSDQuotient(5, 2)
    U, V = M.random_point(rng), M.random_point(rng)
    m = M.pair_mean(U, V)
    dUV = M.dist(U, V)
    assert M.dist(U, m) == pytest.approx(dUV / 2, rel=1e-10)
    assert M.dist(m, V) == pytest.approx(dUV / 2, rel=1e-10)


# --------------------------------------------------------------------- conformance, optimisers
def test_check_manifold_covers_the_boundary():
    worst = qn.check_manifold(qn.PSDQuotient(5, 3), seed=1, trials=1)
    for key in ("P_h + P_v = I (rank < r)", "dimension (rank < r)" if False else
                "horizontal_basis orthonormal (rank < r)",
                "lift is the minimum-norm preimage (||lift|| <= ||h||) (rank < r)",
                "Hessian vanishes on vertical directions (rank < r)",
                "dist = Bures-Wasserstein (rank < r)"):
        assert key in worst, key
    assert worst["P_h + P_v = I (rank < r)"] < 1e-12
    from quadnet.geometry.conformance import BOUNDARY_EXCEPTIONS
    assert set(BOUNDARY_EXCEPTIONS) == {"dimension", "lift uniqueness", "ker D pi = V_U"}
    with pytest.raises(ValueError, match="trials must be >= 1"):
        qn.check_manifold(qn.PSDQuotient(3, 1), trials=0)


@pytest.mark.parametrize("seed", [0, 1])
def test_pymanopt_optimisers_reach_low_rank_optima(seed):
    """FrobeniusLoss(T), T with 2 positive eigenvalues, PSDQuotient(7, 3): TrustRegions,
    SteepestDescent, ConjugateGradient end within 1e-10 relative of the Eckart–Young value,
    no exception, in at most 2x the iterations of pymanopt's PSDFixedRank on the same start."""
    from quadnet.geometry.conformance import compare_pymanopt_optimisers, eckart_young_value

    rng = np.random.default_rng(100 + seed)
    V = np.linalg.qr(rng.standard_normal((7, 7)))[0]
    T = (V * [3.0, 1.5, -0.5, -1.0, -1.5, -2.0, -2.5]) @ V.T
    T = 0.5 * (T + T.T)
    assert eckart_young_value(T, 3) == pytest.approx(0.5 * (0.25 + 1 + 2.25 + 4 + 6.25))
    rows = compare_pymanopt_optimisers(qn.FrobeniusLoss(T), 7, 3, seed=seed)
    by = {(row["optimiser"], row["manifold"]): row for row in rows}
    for name in ("TrustRegions", "SteepestDescent", "ConjugateGradient"):
        ours, theirs = by[name, "PSDQuotient"], by[name, "PSDFixedRank"]
        print(name, ours["iterations"], theirs["iterations"], ours["rel_cost_error"])
        assert ours["error"] is None
        assert abs(ours["rel_cost_error"]) <= 1e-10
        assert ours["iterations"] <= 2 * theirs["iterations"]


def test_procrustes_kernel_on_stacks_matches_align():
    """The one Procrustes kernel on a (k, d, r) stack equals align per factor (barycentres
    align many factors to one)."""
    rng = np.random.default_rng(12)
    Us = rng.standard_normal((5, 6, 3))
    V = rng.standard_normal((6, 3))
    Rs = K.procrustes(Us, V)
    for U, R in zip(Us, Rs):
        assert np.allclose(R, qn.align(U, V), atol=1e-13)
    tiny = K.procrustes(1e-160 * Us, V)
    assert np.allclose(tiny, Rs, atol=1e-12)


def test_nelder_mead_runs_with_pair_mean():
    """pymanopt's NelderMead needs Manifold.pair_mean: it runs and lowers the cost."""
    import pymanopt

    M = qn.PSDQuotient(3, 1, seed=0)
    loss = qn.FrobeniusLoss(np.diag([2.0, 1.0, -1.0]))
    problem = qn.pymanopt_problem(loss, M)
    # pymanopt 2.2.1 refuses a user simplex of the right size (its test reads `!=`), so the
    # simplex comes from M.random_point (seeded above)
    res = pymanopt.optimizers.NelderMead(max_iterations=300, verbosity=0).run(problem)
    best = qn.geometry.eckart_young_value(loss.target, 1)
    assert res.cost < best + 0.1 * (loss.factor_value(np.zeros((3, 1))) - best)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 5), log_gap=st.floats(-7, -1), log_scale=st.integers(-70, 70),
       log_kappa=st.floats(0, 3), seed=st.integers(0, 2**32 - 1))
def test_bures_wasserstein_nearly_equal_extreme_scales(n, log_gap, log_scale, log_kappa, seed):
    """BW(U U^T, V V^T) = dist(U, V) for square full-rank U, V = U + gap X, at scales
    1e-140..1e140 of Q: input rounding eps ||Q|| moves the distance by ~eps kappa sigma_max,
    so the relative tolerance is 1e3 eps kappa / gap (<= 5e-5 here)."""
    rng = np.random.default_rng(seed)
    c = 10.0 ** log_scale
    U = c * factor(n, n, np.logspace(0, -log_kappa, n), rng)
    V = U + 10.0 ** log_gap * c * rng.standard_normal((n, n))
    d = qn.PSDQuotient(n, n).dist(U, V)
    bw = qn.bures_wasserstein(U @ U.T, V @ V.T)
    assert np.isfinite(bw)
    tol = 1e3 * EPS * 10.0 ** log_kappa / 10.0 ** log_gap + 1e-12
    assert abs(bw - d) <= tol * d, (bw, d, tol)


def test_trust_regions_onto_the_boundary_psd_target():
    """T PSD of rank 2, PSDQuotient(7, 3): the optimum Q = T needs a factor of rank 2, so the
    iterates approach the boundary; TrustRegions runs without exception (the full-rank-only
    geometry raised 'exp leaves the full-rank stratum' here) and stops at pymanopt's gradient
    tolerance with the cost of PSDFixedRank (1.5e-9 in 14 iterations on both: the excess column
    decays algebraically at a zero eigenvalue, so the cost is O(gtol^(4/3)), not O(gtol^2))."""
    from quadnet.geometry.conformance import compare_pymanopt_optimisers

    rng = np.random.default_rng(3)
    V = np.linalg.qr(rng.standard_normal((7, 7)))[0]
    T = (V[:, :2] * [3.0, 1.5]) @ V[:, :2].T
    rows = compare_pymanopt_optimisers(qn.FrobeniusLoss(0.5 * (T + T.T)), 7, 3, seed=0,
                                       optimisers=("TrustRegions",))
    ours, theirs = rows
    assert ours["manifold"] == "PSDQuotient" and ours["error"] is None
    assert ours["cost"] <= 1e-8 * np.sum(T * T)
    assert ours["cost"] <= 2 * theirs["cost"] and ours["iterations"] <= 2 * theirs["iterations"]
