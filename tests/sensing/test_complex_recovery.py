"""Recovery on complex rank-one sensing (phase retrieval for r = 1): every method of the real
case from the spectral and the small start, pymanopt's solvers on the complex quotient, and the
argument checks. Success is judged against the planted Q* = U* U*^*, which is determined only
up to the U(r) fibre (for r = 1 a global phase)."""

from __future__ import annotations

import numpy as np
import pytest

import quadnet as qn
from quadnet.sensing import recover, spectral_init
from quadnet.sensing.gaussian import relative_error

try:
    qn.PSDQuotient(2, 1, field="complex")
    HAVE_COMPLEX_MANIFOLD = True
except (TypeError, ValueError):          # the complex quotient of quadnet.geometry
    HAVE_COMPLEX_MANIFOLD = False
needs_manifold = pytest.mark.skipif(not HAVE_COMPLEX_MANIFOLD,
                                    reason="PSDQuotient(d, r, field='complex') not available")

METHODS = ["gd", "lbfgs", pytest.param("trust-regions", marks=needs_manifold)]


@pytest.fixture(scope="module")
def phase_retrieval():
    # m = 8d is far above every threshold (4d - 4 injectivity, Conca et al. 2015): every
    # method must reach Q* from both starts
    return qn.GaussianSensing.random(16, 1, 128, seed=0, field="complex")


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("init", ["spectral", "small"])
def test_every_method_recovers_phase_retrieval(phase_retrieval, method, init):
    prob = phase_retrieval
    res = recover(prob, 1, method, init, seed=0)
    assert res.converged, res.message
    assert res.U.dtype == np.complex128
    # gtol = 1e-13 on the scale-free gradient; near a non-degenerate minimiser the error of Q
    # is of that order times the condition number: 1e-10 leaves a wide margin
    assert relative_error(res.Q, prob.Q_star) < 1e-10
    assert np.allclose(res.Q, res.Q.conj().T)
    # the factor is U* up to a global phase
    phase = np.vdot(res.U, prob.U_star) / abs(np.vdot(res.U, prob.U_star))
    assert np.linalg.norm(res.U * phase - prob.U_star) < 1e-8 * np.linalg.norm(prob.U_star)


@pytest.mark.parametrize("method", METHODS)
def test_rank_two_complex_recovery(method):
    prob = qn.GaussianSensing.random(10, 2, 160, seed=1, field="complex")
    res = recover(prob, 2, method, "spectral", seed=0)
    assert res.converged and relative_error(res.Q, prob.Q_star) < 1e-10


def test_optimal_preprocessing_and_given_starts():
    prob = qn.GaussianSensing.random(24, 1, 96, seed=2, field="complex")
    res = recover(prob, 1, "lbfgs", "spectral", preprocessing="optimal")
    assert relative_error(res.Q, prob.Q_star) < 1e-10
    U0 = spectral_init(prob, 1, preprocessing="optimal")
    given = recover(prob, 1, "lbfgs", U0)
    assert given.init == "array" and np.allclose(given.U, res.U)
    gd = recover(prob, 1, "gd", "spectral", preprocessing="optimal", eta="tuned")
    assert relative_error(gd.Q, prob.Q_star) < 1e-10 and gd.eta > 0


def test_small_start_is_complex_gaussian_and_seeded():
    prob = qn.GaussianSensing.random(8, 1, 64, seed=3, field="complex")
    a = recover(prob, 1, "gd", "small", seed=5, max_iter=1, eta=1e-3)
    b = recover(prob, 1, "gd", "small", seed=5, max_iter=1, eta=1e-3)
    assert np.array_equal(a.U, b.U) and np.any(a.U.imag != 0)


def test_reduce_rank_on_a_complex_problem():
    prob = qn.GaussianSensing.random(8, 2, 120, seed=4, field="complex")
    res = recover(prob, 5, "lbfgs", "small", init_scale=1e-6, seed=0, max_iter=600,
                  reduce_rank=True)
    assert res.history["rank"] == 2 and relative_error(res.Q, prob.Q_star) < 1e-10


def test_complex_recovery_arguments_are_refused_naming_them():
    prob = qn.GaussianSensing.random(6, 1, 40, seed=0, field="complex")
    real = qn.GaussianSensing.random(6, 1, 40, seed=0)
    with pytest.raises(ValueError, match="eta='prescribed'"):
        recover(prob, 1, "gd", eta="prescribed")
    with pytest.raises(TypeError, match="init is a complex array"):
        recover(real, 1, "lbfgs", np.ones((6, 1)) * 1j)
    with pytest.raises(ValueError, match="init"):
        recover(prob, 1, "lbfgs", np.zeros((6, 1), dtype=complex))        # rank deficient
    with pytest.raises(ValueError, match="init"):
        recover(prob, 1, "lbfgs", np.ones((5, 1)) * 1j)
    with pytest.raises(ValueError, match="preprocessing"):
        recover(prob, 1, "lbfgs", preprocessing="truncated")
    with pytest.raises(ValueError, match="preprocessing"):
        recover(real, 1, "lbfgs", preprocessing="optimal")
    # the real problem is unchanged: a real start and the prescribed step still work
    out = recover(real, 1, "gd", eta="prescribed", max_iter=5)
    assert out.U.dtype == np.float64


# ------------------------------------------------------------------------------- pymanopt
@needs_manifold
@pytest.mark.parametrize("solver", ["SteepestDescent", "ConjugateGradient", "TrustRegions"])
def test_pymanopt_solvers_reach_the_planted_q(solver):
    """pymanopt's solvers on pymanopt_problem(loss, PSDQuotient(d, 1, field="complex")),
    d = 32, m = 8d, from the optimal spectral start: relative error of Q <= 1e-6 (the quadnet
    target; first-order solvers stop on their step-size rule, measured at ~2e-9)."""
    import pymanopt

    prob = qn.GaussianSensing.random(32, 1, 256, seed=0, field="complex")
    problem = qn.pymanopt_problem(prob, qn.PSDQuotient(32, 1, field="complex"))
    opt = getattr(pymanopt.optimizers, solver)(max_iterations=3000 if solver != "TrustRegions"
                                               else 200, min_gradient_norm=1e-12, verbosity=0)
    res = opt.run(problem, initial_point=spectral_init(prob, 1, preprocessing="optimal"))
    U = np.asarray(res.point)
    assert relative_error(U @ U.conj().T, prob.Q_star) <= 1e-6


@needs_manifold
def test_pymanopt_autograd_backend_agrees_with_the_closed_form_gradient():
    """pymanopt's autograd backend differentiates the loss written in autograd.numpy; its
    Euclidean gradient of a real cost of complex U is our 2 dL/d conj(U) (for Re tr(xi^* eta)),
    and its TrustRegions reaches Q* as well."""
    import autograd.numpy as anp
    import pymanopt

    prob = qn.GaussianSensing.random(32, 1, 256, seed=0, field="complex")
    manifold = qn.PSDQuotient(32, 1, field="complex")
    X, y, m = prob.X, prob.y, prob.m

    @pymanopt.function.autograd(manifold)
    def cost(U):
        XU = anp.dot(X, U)
        res = anp.sum(anp.real(XU * anp.conj(XU)), axis=1) - y
        return anp.sum(res ** 2) / (2 * m)

    problem = pymanopt.Problem(manifold, cost)
    U0 = spectral_init(prob, 1, preprocessing="optimal")
    g = prob.factor_gradient(U0)
    assert np.linalg.norm(problem.euclidean_gradient(U0) - g) <= 1e-12 * np.linalg.norm(g)
    res = pymanopt.optimizers.TrustRegions(max_iterations=100, min_gradient_norm=1e-12,
                                           verbosity=0).run(problem, initial_point=U0)
    U = np.asarray(res.point)
    assert relative_error(U @ U.conj().T, prob.Q_star) <= 1e-6
