"""The hypothesis-crosshair trial of issue 18: the same Hypothesis tests on the default
backend and on ``backend="crosshair"``; time to the first failure on planted faults and
examples per second on the real model.  Prints a Markdown table (recorded in proofs/notes.md).

Usage: ``.venv/bin/python -m proofs.backend_trial [max_examples]`` (slow; opt-in, never in CI).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proofs.planted.faults import LoopFault, installed
from proofs.scenarios import Played, Scenario, discard_holds, inv_1, pfx_1, play

CHECKS: dict[str, Callable[[Played], str | None]] = {
    "reconstructability": inv_1, "freeze": pfx_1, "discard": discard_holds}


def _settings(backend: str, examples: int) -> settings:
    return settings(backend=backend, max_examples=examples, deadline=None, database=None, derandomize=backend == "hypothesis",
                    suppress_health_check=list(HealthCheck))


def scenario_run(check: str, fault: LoopFault | None, backend: str, examples: int) -> tuple[str, float, int]:
    """(outcome, seconds, examples tried) for one scenario property on one backend."""
    tried = [0]

    @_settings(backend, examples)
    @given(st.from_type(Scenario))
    def test(s: Scenario) -> None:
        tried[0] += 1
        context: AbstractContextManager[None] = installed(fault) if fault is not None else nullcontext()
        with context:
            played = play(s)
        assert CHECKS[check](played) is None

    started = time.monotonic()
    try:
        test()
        outcome = "no failure"
    except AssertionError as exc:
        outcome = f"failure found: {str(exc).splitlines()[0][:100] if str(exc) else 'AssertionError'}"
    except Exception as exc:  # noqa: BLE001 - the trial records whatever the backend does
        outcome = f"{type(exc).__name__}: {str(exc)[:120]}"
    return outcome, time.monotonic() - started, tried[0]


def machine_run(fault_name: str, backend: str, examples: int) -> tuple[str, float]:
    """The loop state machine of spec/machines.py on one backend (if this tree's machine takes a fault)."""
    from hypothesis.stateful import run_state_machine_as_test

    import sessionspec.model.loop as loop
    from sessionspec.spec.machines import loop_machine

    fault_enum = getattr(loop, "Fault", None)
    if fault_enum is None:
        return "skipped: this tree's loop machine takes no Fault", 0.0
    machine = loop_machine(getattr(fault_enum, fault_name))
    started = time.monotonic()
    try:
        run_state_machine_as_test(machine, settings=settings(_settings(backend, examples), stateful_step_count=10))
        outcome = "no failure"
    except AssertionError as exc:
        outcome = f"failure found: {str(exc).splitlines()[0][:100] if str(exc) else 'AssertionError'}"
    except Exception as exc:  # noqa: BLE001
        outcome = f"{type(exc).__name__}: {str(exc)[:120]}"
    return outcome, time.monotonic() - started


def main(argv: list[str]) -> int:
    examples = int(argv[0]) if argv else 50
    print("| Test | Planted fault | Backend | Outcome | Examples | Time (s) |")
    print("|---|---|---|---|---:|---:|")
    cases = [("reconstructability", None), ("reconstructability", LoopFault.PREFIX_AFTER_HISTORY),
             ("discard", LoopFault.CACHE_INTERRUPTED), ("freeze", LoopFault.NO_CLONE)]
    for check, fault in cases:
        for backend in ("hypothesis", "crosshair"):
            outcome, seconds, tried = scenario_run(check, fault, backend, examples)
            name = "-" if fault is None else fault.value
            print(f"| scenario `{check}` | {name} | {backend} | {outcome} | {tried} | {seconds:.1f} |", flush=True)
    for fault_name in ("NONE", "CACHE_INTERRUPTED"):
        for backend in ("hypothesis", "crosshair"):
            outcome, seconds = machine_run(fault_name, backend, max(examples // 5, 5))
            print(f"| loop machine | {fault_name} | {backend} | {outcome} | {max(examples // 5, 5)} max | {seconds:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
