"""Shared test set-up: the Hypothesis profiles and the heartbeat (the data paths and builders are tests/support.py)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# `ci`: fast and derandomized (the default under CI); `dev`: the everyday
# default; `thorough`: opt-in long runs (HYPOTHESIS_PROFILE=thorough).
settings.register_profile("ci", max_examples=40, derandomize=True, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=60, deadline=None)
settings.register_profile("thorough", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# `crosshair`: opt-in symbolic backend (hypothesis-crosshair) for the small pure properties.
settings.register_profile("crosshair", backend="crosshair", max_examples=50, deadline=None, database=None,
                          suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

# A line names any test that runs longer than 30 s (tests/heartbeat.py): the suite is not silent for minutes.
from tests.heartbeat import pytest_configure, pytest_runtest_protocol, pytest_unconfigure  # noqa: E402, F401
