"""How long CrossHair searches: a wall-clock budget for reports, an iteration bound for tests (issue 29, part 4).

``proofs/run`` records how much a search found within N seconds of CPU per condition: a machine-dependent
budget, which is what a report measures.  The test suite must give the same verdict for the same commit on a
loaded and an idle machine, so its CrossHair runs are bounded by CrossHair's own path count instead:

- ``max_iterations`` (how many paths a condition's search runs) is not a command-line option of
  CrossHair 0.0.113, only an analysis option; :func:`install_from_env`, called by the plugin files,
  sets it from ``SESSIONSPEC_CH_MAX_ITERATIONS`` on CrossHair's defaults before the target is analysed;
- ``--max_uninteresting_iterations=0`` turns the "no progress" cut-off off (CrossHair's default of 5
  would end the search early whenever no per-condition timeout is given);
- no ``--per_condition_timeout`` (CrossHair's default: none), and a per-path CPU limit so generous
  (:data:`PATH_SECONDS`) that it only guards against a hung path, never decides an outcome on a
  healthy one.

CrossHair's path choices come from a fixed seed and ``PYTHONHASHSEED=0`` (set by every caller), so an
iteration-bounded run explores the same paths in the same order everywhere.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Final

ENV: Final = "SESSIONSPEC_CH_MAX_ITERATIONS"
# Set to 1: every condition's search prints how many paths it ran (to calibrate the bounds of the tests).
REPORT_ENV: Final = "SESSIONSPEC_CH_REPORT_ITERATIONS"
# CPU seconds one path may run before CrossHair abandons it (a guard against a hung path only).
PATH_SECONDS: Final = 300.0


@dataclass(frozen=True, slots=True)
class Budget:
    """Either ``seconds`` of CPU per condition (a report) or ``iterations`` paths per condition (a test)."""

    seconds: float | None = None
    iterations: int | None = None

    def __post_init__(self) -> None:
        if (self.seconds is None) == (self.iterations is None):
            raise ValueError("a CrossHair budget is either seconds or iterations")

    def args(self) -> list[str]:
        """The ``crosshair check`` options of this budget."""
        if self.seconds is not None:
            return [f"--per_condition_timeout={self.seconds:g}"]
        return ["--max_uninteresting_iterations=0", f"--per_path_timeout={PATH_SECONDS:g}"]

    def env(self) -> dict[str, str]:
        """The environment the plugin reads (:func:`install_from_env`); removes a stale bound for a timed run."""
        merged = dict(os.environ, PYTHONHASHSEED="0")
        merged.pop(ENV, None)
        if self.iterations is not None:
            merged[ENV] = str(self.iterations)
        return merged

    def describe(self) -> str:
        """How the report names the budget: ``2 s`` or ``200 iterations``."""
        return f"{self.seconds:g} s" if self.seconds is not None else f"{self.iterations} iterations"

    def wall_guard(self, conditions: int = 1) -> float:
        """Seconds after which the subprocess is killed as hung (never the budget itself)."""
        if self.seconds is not None:
            return 120 + self.seconds * max(conditions, 1) * 10  # CrossHair overruns its budget on a loaded machine
        return 1800.0 * max(conditions, 1)


def install_from_env() -> None:
    """Bound every condition's search to ``$SESSIONSPEC_CH_MAX_ITERATIONS`` paths (when set).

    Runs inside the CrossHair process (from a plugin file), before any target is analysed: the
    analysis options are overlays of ``DEFAULT_OPTIONS``, so changing the default bounds them all."""
    if os.environ.get(REPORT_ENV) == "1":
        _report_iterations()
    value = os.environ.get(ENV)
    if not value:
        return
    iterations = int(value)
    if iterations <= 0:
        raise ValueError(f"{ENV} must be a positive number of iterations, got {value!r}")
    from crosshair import options

    options.DEFAULT_OPTIONS.max_iterations = iterations


def _report_iterations() -> None:
    """Print each search's path count and verdict to standard error (``proofs: iterations N ...``)."""
    import sys

    from crosshair import core

    explore = core.explore_loop
    if getattr(explore, "reports_iterations", False):
        return

    def reporting(*args: object, **kwargs: object) -> object:
        result = explore(*args, **kwargs)  # type: ignore[arg-type]
        status = result.top_analysis.verification_status if result.top_analysis is not None else None
        print(f"proofs: iterations {result.iterations} exhausted={result.exhausted} status={status}",
              file=sys.stderr, flush=True)
        return result

    reporting.reports_iterations = True  # type: ignore[attr-defined]
    core.explore_loop = reporting  # type: ignore[assignment]
