"""Test configuration: headless plotting, and derandomised hypothesis under CI.

Under ``CI=true`` hypothesis draws its examples from a fixed seed, so a CI run is
reproducible; locally it explores new examples every run.
"""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    settings.load_profile("ci")
