# %% [markdown]
# # Verify your own claim: the Marchenko–Pastur law
#
# quadnet's harness (`quadnet verify`) is not only for the claims that ship with quadnet. A check
# of your own is a Python file that uses the public API of `quadnet.harness` — `register`,
# `CheckResult`, `CheckContext`, `figure`, `register_sweep` — and runs with
# `quadnet verify --checks FILE`, with everything the built-in checks have: the results table,
# the JSON, Markdown and LaTeX reports, figures redrawn byte for byte from a report, resumable
# sweeps, seeded streams, and `quadnet compare` between two reports.
#
# This tutorial verifies a classical result that quadnet does not ship. Let $X$ be an
# $m\times d$ matrix of independent $N(0,1)$ entries and $S = X^\top X/m$ its sample covariance.
# As $m, d\to\infty$ with $d/m\to\gamma\in(0,1]$:
#
# * **Marchenko & Pastur (1967)**, "Distribution of eigenvalues for some sets of random
#   matrices": the eigenvalues of $S$ are distributed with the density
#   $$p_\gamma(x) = \frac{\sqrt{(b-x)(x-a)}}{2\pi\gamma x}\ \text{ on } [a,b],\qquad
#   a, b = (1\mp\sqrt\gamma)^2;$$
# * **Geman (1980)**, "A limit theorem for the norm of random matrices": the largest eigenvalue
#   tends to the edge $b = (1+\sqrt{d/m})^2$ almost surely;
# * **Johnstone (2001)**, "On the distribution of the largest eigenvalue in principal components
#   analysis": it fluctuates around it on the Tracy–Widom scale $\sigma \propto m^{-2/3}$, so
#   $|\lambda_{\max}/b - 1|$ shrinks like $d^{-2/3}$ at fixed $\gamma$.
#
# The check has two theorem rows with tolerances, one measurement without a tolerance, a
# sweep, and a figure drawn from the data stored in the report. Everything runs in a scratch
# folder.
#
# **Assumes.** Python, and running `quadnet verify` once; no geometry.
#
# **Learning outcomes.**
#
# - write a check of your own with `register`, `CheckResult`, `CheckContext` and `figure`;
# - run it with `quadnet verify --checks FILE` and read its report;
# - add a resumable sweep and redraw a figure from a saved report;
# - compare two reports with `quadnet compare`.
#
# **Theory.** The harness's conventions for proved, measured and reported rows:
# [§0 Objects and notation](../docs/theory/notation.md); the reference for checks of your own:
# [your own checks](../docs/tutorials/own_checks.md).

# %%
import contextlib, io, os, shlex, tempfile
from pathlib import Path
from IPython.display import Image, display

import quadnet.harness as qh
from quadnet.harness.cli import main as quadnet_main

os.chdir(tempfile.mkdtemp(prefix="quadnet-own-claim-"))   # a scratch folder

def sh(command, cwd="."):
    # run a `quadnet ...` command line as typed in a shell (here in this kernel, without
    # starting Python again); show what it prints and its exit status
    assert command.startswith("quadnet ")
    err, here = io.StringIO(), os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stderr(err):
            rc = quadnet_main(shlex.split(command)[1:])
    finally:
        os.chdir(here)
    if rc not in (0, 1):
        print(err.getvalue())
    print(f"[exit status {rc}]")


# %% [markdown]
# ## 1. The check: one file
#
# `quadnet new-check NAME` writes a commented template of such a file (and a pytest file for
# it); here is the finished one. The parts:
#
# * `@register(NAME, CLAIM)` makes `run(ctx, res)` the check `marchenko-pastur`: the name and
#   the claim are written once, there, and `res` is the check's result (a `CheckResult` that
#   already carries them), which `run` fills;
# * every random draw comes from `ctx.rng(...)`, so the same `--seed` gives the same bits;
# * `res.add(claim, measured, tolerance, kind="theorem", source=...)` is one row of the table:
#   PASS or FAIL against the tolerance, with the source cited by name; `res.report(...)` is a
#   measurement without a tolerance (REPORTED);
# * `register_sweep(Sweep(..., cell=mp_edge_cell, ...))` declares a parameter grid of pure
#   cells; `run_sweep` runs the unfinished cells into a store folder and **resumes** from it;
# * `@figure(STEM)` registers a drawer that gets only JSON data: `ctx.draw(res, STEM, data)`
#   stores the data in the report and draws it, so `quadnet figures --from report.json` redraws
#   the same bytes later without recomputing anything.

# %%
# %%writefile mp_checks.py
"""marchenko-pastur: the spectrum of a sample covariance matrix (a check of one's own).

Marchenko & Pastur (1967): for X (m x d) with i.i.d. N(0, 1) entries and d/m -> gamma in
(0, 1], the eigenvalues of S = X^T X / m are distributed, in the limit, with the density

    p(x) = sqrt((b - x)(x - a)) / (2 pi gamma x)  on  [a, b],  a, b = (1 -+ sqrt(gamma))^2.

Geman (1980): the largest eigenvalue tends to the upper edge b = (1 + sqrt(gamma))^2 almost
surely. Johnstone (2001): it fluctuates around it on the Tracy-Widom scale sigma ~ m^(-2/3).
"""

import math
from pathlib import Path

import numpy as np
from scipy import integrate

from quadnet.harness import Sweep, figure, read_results, register, register_sweep, run_sweep

NAME = "marchenko-pastur"
CLAIM = ("the spectrum of X^T X / m follows the Marchenko-Pastur law and its largest "
         "eigenvalue tends to (1 + sqrt(d/m))^2")
MP = 'Marchenko & Pastur (1967) "Distribution of eigenvalues for some sets of random matrices"'
GEMAN = 'Geman (1980) "A limit theorem for the norm of random matrices"'
JOHNSTONE = ('Johnstone (2001) "On the distribution of the largest eigenvalue in principal '
             'components analysis"')
GAMMA = 0.25  # d / m


def sample_covariance(X):
    """S = X^T X / m for the m x d data matrix X."""
    return X.T @ X / X.shape[0]


def mp_edges(gamma):
    return (1 - math.sqrt(gamma)) ** 2, (1 + math.sqrt(gamma)) ** 2


def mp_cdf(x, gamma):
    """The Marchenko-Pastur distribution function, by quadrature in x = a + (b - a) sin^2 t
    (the substitution removes the square-root endpoints, so the integrand is smooth)."""
    a, b = mp_edges(gamma)

    def density_t(t):
        s, c = math.sin(t), math.cos(t)
        return (b - a) ** 2 * s * s * c * c / (math.pi * gamma * (a + (b - a) * s * s))

    def one(v):
        if v <= a:
            return 0.0
        if v >= b:
            return 1.0
        return integrate.quad(density_t, 0.0, math.asin(math.sqrt((v - a) / (b - a))))[0]

    return np.array([one(v) for v in np.atleast_1d(x)])


def tracy_widom_scale(m, d):
    """Johnstone's (2001) centring mu and scale sigma of the largest eigenvalue of X^T X / m."""
    s = math.sqrt(m - 1) + math.sqrt(d)
    return s * s / m, s * (1 / math.sqrt(m - 1) + 1 / math.sqrt(d)) ** (1 / 3) / m


def mp_edge_cell(d, gamma, trial, seed):
    """One cell of the sweep: the largest eigenvalue of one d x d sample covariance."""
    m = round(d / gamma)
    X = np.random.default_rng(seed).standard_normal((m, d))
    lam = np.linalg.eigvalsh(sample_covariance(X))[-1]
    edge = mp_edges(d / m)[1]
    return {"m": m, "lambda_max": float(lam), "rel_error": abs(lam / edge - 1)}


register_sweep(Sweep(
    "mp-edge", "largest eigenvalue of X^T X / m against the Marchenko-Pastur edge",
    cell=mp_edge_cell,
    quick={"d": (25, 50, 100, 200), "gamma": (GAMMA,), "trial": tuple(range(16))},
    full={"d": (25, 50, 100, 200, 400, 800), "gamma": (GAMMA,), "trial": tuple(range(32))}))


@figure("marchenko-pastur")
def draw(data):
    import matplotlib.pyplot as plt

    a, b = mp_edges(data["gamma"])
    x = np.linspace(a, b, 400)[1:-1]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(6.8, 2.5))
    ax1.hist(data["eigenvalues"], bins=40, density=True, color="0.75", label="eigenvalues")
    ax1.plot(x, np.sqrt((b - x) * (x - a)) / (2 * np.pi * data["gamma"] * x),
             label="Marchenko-Pastur")
    ax1.axvline(b, color="k", ls=":", lw=0.8)
    ax1.set_xlabel(f"eigenvalue of $X^T X/m$ (d = {data['d']}, m = {data['m']})")
    ax1.legend()
    d = np.asarray(data["sweep_d"], float)
    ax2.loglog(d, data["sweep_mean_rel_error"], "o-", label="mean over trials")
    ax2.loglog(d, data["sweep_mean_rel_error"][0] * (d / d[0]) ** (-2 / 3), "k--", lw=0.8,
               label="slope -2/3")
    ax2.set_xlabel("d (m = d / %g)" % data["gamma"])
    ax2.set_ylabel(r"$|\lambda_{max} / b - 1|$")
    ax2.legend()
    fig.tight_layout()
    return fig


@register(NAME, CLAIM)
def run(ctx, res):
    d = 200 if ctx.quick else 800
    m = round(d / GAMMA)
    X = ctx.rng("X").standard_normal((m, d))
    eig = np.linalg.eigvalsh(sample_covariance(X))
    # Kolmogorov distance between the empirical spectrum and the law (both one-sided gaps)
    F = mp_cdf(eig, d / m)
    k = np.arange(1, d + 1)
    ks = max(np.max(k / d - F), np.max(F - (k - 1) / d))
    # finite-size tolerances of this tutorial (the theorem is a limit): seeds 0-2 measured
    # 0.011-0.013 at d = 200 and 0.004 at d = 800
    res.add(f"Kolmogorov distance, spectrum vs Marchenko-Pastur law (d = {d}, m = {m})", ks,
            0.05 if ctx.quick else 0.02, kind="theorem", source=MP, paper="-> 0")
    a, b = mp_edges(d / m)
    mu, sigma = tracy_widom_scale(m, d)
    # six Tracy-Widom scales: the Tracy-Widom law puts less than 1e-6 of its mass beyond
    res.add(f"largest eigenvalue vs (1 + sqrt(d/m))^2, relative (d = {d})", abs(eig[-1] / b - 1),
            6 * sigma / b, kind="theorem", source=GEMAN, paper="-> 0")
    store = Path("sweeps") / f"mp-edge-{'quick' if ctx.quick else 'full'}-seed{ctx.seed}"
    rep = run_sweep("mp-edge", store, quick=ctx.quick, seed=ctx.seed, workers=0,
                    progress=ctx.show_progress)
    rows = read_results(store)
    ds = sorted({r["d"] for r in rows})
    mean = [float(np.mean([r["rel_error"] for r in rows if r["d"] == v])) for v in ds]
    slope = np.polyfit(np.log(ds), np.log(mean), 1)[0]
    res.report(f"slope of log mean |lambda_max / b - 1| against log d, d = {ds[0]}..{ds[-1]}",
               slope, paper="-2/3", source=JOHNSTONE)
    res.metrics.update(sweep_cells=rep.n_cells, sweep_cells_resumed=rep.skipped)
    ctx.draw(res, "marchenko-pastur", {"eigenvalues": eig, "gamma": d / m, "d": d, "m": m,
                                        "sweep_d": ds, "sweep_mean_rel_error": mean})


# %% [markdown]
# ## 2. Run it from Python
#
# `load_checks` imports the file (as the module `mp_checks`) and registers its checks next to
# the built-in ones; `run_check` runs one in a `CheckContext` (seed, quick mode, where figures
# go).

# %%
print(qh.load_checks("mp_checks.py"))
res = qh.run_check("marchenko-pastur", qh.CheckContext(seed=0, quick=True, figures_dir=Path("figs")))
for row in res.rows:
    tol = "-" if row.tolerance is None else f"{row.relation} {row.tolerance:.3g}"
    print(f"{row.status:9} {row.measured:10.4g}  {tol:>9}  {row.claim}")
print(res.status, res.metrics, res.origin["kind"])
display(Image("figs/marchenko-pastur.png"))

# %% [markdown]
# Both theorem rows pass with room to spare at $d = 200$; the slope of the sweep is close to
# Johnstone's $-2/3$ (it is REPORTED: a trend from 16 trials per size is too noisy for a
# tolerance). Run the check again: the sweep's 64 cells are already in its store, so they are
# read back, not recomputed — the same mechanism resumes a long sweep that was interrupted.

# %%
again = qh.run_check("marchenko-pastur", qh.CheckContext(seed=0, quick=True))
print(again.metrics)
print("same numbers:", [r.measured for r in again.rows] == [r.measured for r in res.rows])

# %% [markdown]
# ## 3. The command line, a report, and a figure redrawn from it
#
# The same check from a shell, for two seeds, each with a JSON report. The report follows the
# versioned schema `quadnet-report/1` (see the report format page) and records where the
# check came from, so `quadnet figures --from` finds the drawer again (it reloads the file if
# it is unchanged; otherwise pass `--checks mp_checks.py`).

# %%
sh("quadnet verify --checks mp_checks.py marchenko-pastur --quick --json seed0.json --figures figs0")

# %%
sh("quadnet verify --checks mp_checks.py marchenko-pastur --quick --seed 1 --json seed1.json --figures figs1")
sh("quadnet figures --from seed0.json --out redrawn")
print("redrawn byte for byte:", all(
    (Path("redrawn") / f).read_bytes() == (Path("figs0") / f).read_bytes()
    for f in ("marchenko-pastur.png", "marchenko-pastur.pdf")))

# %% [markdown]
# ## 4. Compare two runs
#
# `quadnet compare OLD.json NEW.json` matches rows by (check, claim) and lists status changes,
# rows that crossed their tolerance, and measured values that moved by more than `--factor`
# (default 10; values within `--floor` = 1e-12 of zero count as 1e-12). Its exit status is 0
# when nothing regressed, 1 when something did, 2 for a file that is not a quadnet report — so
# a paper's CI can run it against a committed baseline. Two seeds: the numbers differ, nothing
# moves by an order of magnitude, nothing regressed.

# %%
sh("quadnet compare seed0.json seed1.json")

# %% [markdown]
# Now a deliberately broken version, as a colleague's checkout might have it: the sample
# covariance divided by $d$ instead of $m$ (`X.shape[1]` for `X.shape[0]`), which scales the
# spectrum by $m/d = 4$. It lives in its own folder (so its sweep gets its own store: a store is
# keyed by the sweep's name, grid and seed, not by the code — after changing a cell function,
# start a new store). `compare` names the rows that regressed and exits with status 1.

# %%
Path("broken").mkdir(exist_ok=True)
code = Path("mp_checks.py").read_text()
assert code.count("X.shape[0]") == 1
Path("broken/mp_checks.py").write_text(code.replace("X.shape[0]", "X.shape[1]"))
qh.unload_checks("mp_checks.py")   # this kernel forgets the good version (a shell would not need this)
sh("quadnet verify --checks mp_checks.py marchenko-pastur --quick --json broken.json --figures ''", cwd="broken")
sh("quadnet compare seed0.json broken/broken.json")

# %% [markdown]
# The same comparison as Markdown, e.g. for a comment on a pull request:

# %%
sh("quadnet compare seed0.json broken/broken.json --format markdown")

# %% [markdown]
# ## Where to go from here
#
# * `quadnet new-check my-claim` writes the template of such a check and a pytest file that runs
#   it in quick mode (through the API and the command line) and redraws its figure.
# * `quadnet verify --list` shows every check with where it comes from (built-in, a file, a
#   module, an installed package).
# * A package of checks declares them in the `quadnet.checks` entry-point group of its
#   `pyproject.toml` (`[project.entry-points."quadnet.checks"]`, `name = "mypkg.checks"`);
#   once it is installed, `quadnet verify` finds them without `--checks`.
# * `quadnet sweep --checks mp_checks.py mp-edge --workers 2` runs the sweep alone, on local
#   processes or Dask.
