"""Test configuration: headless plotting, and derandomised hypothesis.

hypothesis draws its examples from a fixed seed by default, so every run of the suite is
reproducible (a failure seen once is seen again); ``QUADNET_HYPOTHESIS_EXPLORE=1`` explores new
examples every run instead (the way new counterexamples are found; add each one found as an
explicit regression test).
"""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("QUADNET_HYPOTHESIS_EXPLORE", "").lower() not in ("1", "true", "yes"):
    settings.load_profile("ci")


#: The test files that take longest (a child process factoring a 16,000 x 16,000 kernel matrix,
#: the Sphinx build with its browser checks, the notebooks executed in kernels), scheduled first:
#: ``pytest -n 2 --dist loadfile`` hands whole files to the workers in collection order, so a
#: long file collected last keeps one worker busy after the other has run out of work.
_LONGEST_FIRST = ("tests/test_lapack.py", "tests/docs/test_docs.py",
                  "tests/docs/test_notebooks.py")


def pytest_collection_modifyitems(config, items):
    root = config.rootpath

    def rank(item):
        rel = item.path.relative_to(root).as_posix() if item.path.is_relative_to(root) else ""
        return _LONGEST_FIRST.index(rel) if rel in _LONGEST_FIRST else len(_LONGEST_FIRST)

    items.sort(key=rank)  # stable: the order within and after the listed files is kept
