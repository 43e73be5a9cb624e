"""``quadnet.harness.sweeps.run_cells``, the one runner of the cells a check computes: the
same results, bit for bit and in cell order, in this process and on worker processes; one
BLAS thread per cell; its arguments checked, naming the function."""

from __future__ import annotations

import numpy as np
import pytest

from quadnet._threads import blas_threads
from quadnet.harness.checks._sweep_cells import SweepCells
from quadnet.harness.sweeps import _execute_cell, get_sweep, run_cells, sweep_cells


def gram_cell(t: int) -> tuple[int, float, list[float]]:
    """A pure cell with BLAS work: its result depends on ``t`` only."""
    X = np.random.default_rng([7, t]).standard_normal((40, 30))
    w = np.linalg.eigvalsh(X.T @ X)
    return t, float(w[-1]), w[:3].tolist()


def threads_cell(_) -> int | None:
    return blas_threads()


def test_workers_give_the_same_bits_in_cell_order():
    cells = list(range(11))[::-1]  # not sorted: the order of the cells is kept, not of t
    here = run_cells(gram_cell, cells)
    assert [c[0] for c in here] == cells
    assert here == [gram_cell(t) for t in cells]  # independent: called directly
    assert run_cells(gram_cell, cells, workers=2, chunksize=3) == here


def test_every_cell_runs_with_one_blas_thread(default_blas_threads):
    assert set(run_cells(threads_cell, range(3))) <= {None, 1}
    assert set(run_cells(threads_cell, range(4), workers=2)) <= {None, 1}


def test_progress_sees_every_cell():
    seen = []

    def progress(it, desc, total=None):
        seen.append((desc, total))
        return it

    assert run_cells(abs, [-1, 2, -3], progress=progress, desc="demo") == [1, 2, 3]
    assert seen == [("demo", 3)]


@pytest.mark.parametrize("kwargs, error, match", [
    ({"workers": 0}, ValueError, r"run_cells: workers must be >= 1, got 0"),
    ({"workers": 2.0}, TypeError, r"run_cells: workers must be an integer, got float"),
    ({"workers": True}, TypeError, r"run_cells: workers must be an integer, got bool"),
    ({"chunksize": 0}, ValueError, r"run_cells: chunksize must be >= 1, got 0"),
])
def test_bad_arguments_name_the_function(kwargs, error, match):
    with pytest.raises(error, match=match):
        run_cells(abs, [1], **kwargs)


def test_fn_must_be_callable():
    with pytest.raises(TypeError, match=r"run_cells: fn must be a callable fn\(cell\), got int"):
        run_cells(3, [1])


def test_sweep_cells_compute_through_the_runner_as_a_sweep_worker_does():
    """SweepCells.run_all gives, per cell, what a sweep worker computes for it (same cell
    seed); a cell asked twice is computed once."""
    sweep = get_sweep("quotient-gd")
    cells = sweep_cells(sweep, quick=True, seed=3)[:2]
    sc = SweepCells("quotient-gd", 3, read_stores=False)
    got = sc.run_all([c["params"] for c in cells] + [cells[0]["params"]])
    want = [_execute_cell(sweep, c["params"], c["seed"]) for c in cells]
    assert got == want + want[:1]
    assert sc.computed == 2 and sc.from_store == 0
    assert sc.metrics()["cells_computed"] == 2
