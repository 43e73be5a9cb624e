"""Statements of the theory pages about what a call does, executed.

Each test quotes the page it holds true; when a change makes the statement false, the test
fails and the page must change with it.
"""

from __future__ import annotations

import warnings

import numpy as np

from quadnet import PSDQuotient, bw_barycenter


def test_quotient_md_exp_and_retraction_never_refuse_leaving_the_stratum():
    # docs/theory/quotient.md §1: "Neither refuses a result that leaves the full-rank stratum
    # ... `exp(U, -U)` returns the zero factor"
    M = PSDQuotient(4, 2)
    U = np.random.default_rng(0).standard_normal((4, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Z = M.exp(U, -U)
        R = M.retraction(U, -U)
    assert np.array_equal(Z, np.zeros((4, 2)))
    assert np.array_equal(R, np.zeros((4, 2)))
    # and the zero factor is a point where the geometry is defined: its distance to U is ||U||_F
    assert abs(M.dist(U, Z) - np.linalg.norm(U)) <= 1e-14 * np.linalg.norm(U)


def test_quotient_md_barycenters_are_implemented():
    # docs/theory/quotient.md: "Bures–Wasserstein barycenters ... are computed by
    # `quadnet.bw_barycenter`"; the barycentre of one predictor is that predictor
    U = np.random.default_rng(1).standard_normal((5, 2))
    res = bw_barycenter([U, U], inputs="factors")
    Q = res.Q
    assert np.linalg.norm(res.U @ res.U.T - Q) <= 1e-12 * np.linalg.norm(Q)
    assert np.linalg.norm(Q - U @ U.T) <= 1e-10 * np.linalg.norm(U @ U.T)
