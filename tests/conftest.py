"""Shared test set-up: the Hypothesis profiles and the heartbeat (the data paths and builders are tests/support.py)."""

from __future__ import annotations

import importlib.util
import os

from hypothesis import HealthCheck, settings

# `ci`: fast and derandomized (the default under CI); `dev`: the everyday
# default; `thorough`: opt-in long runs (HYPOTHESIS_PROFILE=thorough).
settings.register_profile("ci", max_examples=40, derandomize=True, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=60, deadline=None)
settings.register_profile("thorough", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# `crosshair`: opt-in symbolic backend (hypothesis-crosshair, a dev dependency) for the small pure properties;
# registered where the backend is installed (tests/packaging runs tests/check on a user install without it).
if importlib.util.find_spec("hypothesis_crosshair_provider") is not None:
    settings.register_profile("crosshair", backend="crosshair", max_examples=50, deadline=None, database=None,
                              suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

# A line names any test that runs longer than 30 s (tests/heartbeat.py): the suite is not silent for minutes.
from tests.heartbeat import pytest_configure, pytest_runtest_protocol, pytest_unconfigure  # noqa: E402, F401


def pytest_sessionstart(session: object) -> None:
    """``SESSIONSPEC_EXPECT_BUILD=compiled`` (or ``pure``): the run is meant for that build of the checker
    (tests/packaging runs tests/check and tests/fast on the compiled wheel); a run that would import another
    build (a checkout on the path, say) stops before its first test instead of passing on the wrong code."""
    import pytest

    expected = os.environ.get("SESSIONSPEC_EXPECT_BUILD")
    if expected:
        from sessionspec.options import build_kind

        if not build_kind().startswith(expected):
            pytest.exit(f"SESSIONSPEC_EXPECT_BUILD={expected}, but this run imports the {build_kind()} build", returncode=3)


def pytest_runtest_setup(item: object) -> None:
    """``@pytest.mark.interpreted_only(why)``: skipped on the compiled build (a skip with its reason, not a pass)."""
    import pytest

    assert isinstance(item, pytest.Item)
    marker = item.get_closest_marker("interpreted_only")
    if marker is not None:
        from sessionspec.options import build_kind

        if build_kind() != "pure Python":
            pytest.skip(f"interpreted build only: {marker.args[0] if marker.args else 'patches the checker at run time'}")
