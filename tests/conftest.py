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
