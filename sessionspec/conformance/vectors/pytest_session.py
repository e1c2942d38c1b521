"""What the pytest plugin (sessionspec/pytest_plugin.py) adds to a session that runs the kit, beyond its
items: the floor and the expectations entries that expected nothing (issue 45, part 2), and the kit's items
named by their node ids in the short summary.  Imported only when ``--sessionspec-adapter`` is given.
"""

from __future__ import annotations

import fnmatch
from typing import Any, Protocol

import pytest

from sessionspec.conformance.vectors.expectations import Expectations
from sessionspec.conformance.vectors.floor import Floor


class KitState(Protocol):
    """What of the plugin's state this module reads and writes."""

    expectations: Expectations | None
    floor: Floor | None
    outcomes: dict[str, str]
    problems: list[str]


def report_kit_items_by_node_id(config: pytest.Config) -> None:
    """Short summaries (``XFAIL``, ``SKIPPED``) name a kit item by its node id, ``sessionspec/<group>::<id>``:
    pytest reads a node id's first part as a path and rewrites it relative to the invocation directory
    (``../sessionspec/loop::…`` from a subdirectory), but the kit's items are not files."""
    relative: Any = config.cwd_relative_nodeid

    def nodeid_as_is(nodeid: Any) -> Any:  # a str, or pytest's NodeId (pytest 9)
        return nodeid if kit_item(str(nodeid)) else relative(nodeid)

    setattr(config, "cwd_relative_nodeid", nodeid_as_is)  # noqa: B010 (an instance's method, replaced for this config)


def kit_item(nodeid: str) -> bool:
    return nodeid.startswith(("sessionspec/", "sessionspec::"))


class SessionOutcome:
    """Registered for a session that runs the kit: what ran and what was skipped (on the controller under
    xdist, which every worker's reports reach), then the floor (``--sessionspec-min-run``,
    ``--sessionspec-fail-on-skip``) and the expectations entries that expected nothing (issue 45, part 2)."""

    def __init__(self, state: KitState) -> None:
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not kit_item(report.nodeid):
            return
        if report.skipped and not hasattr(report, "wasxfail"):
            self.state.outcomes[report.nodeid] = "skipped"
        elif report.when == "call":
            self.state.outcomes[report.nodeid] = "ran"

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        state = self.state
        if hasattr(session.config, "workerinput") or not state.outcomes:
            return
        ran = sum(1 for o in state.outcomes.values() if o == "ran")
        skipped = len(state.outcomes) - ran
        below = state.floor.problem(ran, len(state.outcomes), skipped, "sessionspec items") if state.floor else None
        if below is not None:
            state.problems.append(f"below the floor: {below}")
        for entry in state.expectations.entries if state.expectations is not None else ():
            matched = [o for nodeid, o in state.outcomes.items()
                       if "::" in nodeid and fnmatch.fnmatchcase(nodeid.split("::", 1)[1], entry.pattern)]
            if matched and all(o == "skipped" for o in matched):
                state.problems.append(f"--sessionspec-expect: {entry.pattern!r} matches only skipped vectors "
                                      f"({len(matched)}): it expects nothing of this adapter")
        if state.problems and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.state.problems:
            terminalreporter.section("sessionspec", sep="=", red=True)
            for problem in self.state.problems:
                terminalreporter.line(f"FAILED {problem}", red=True)


__all__ = ["KitState", "SessionOutcome", "kit_item", "report_kit_items_by_node_id"]
