"""The sessionspec pytest plugin: the conformance kit as pytest items.

Installed with the package (entry point ``pytest11``) and inert unless
``--sessionspec-adapter CMD`` is given.  Then every vector of the vector
directory (default: the vectors shipped with sessionspec) becomes one pytest
item whose id is the vector id, marked ``sessionspec``, ``sessionspec_<group>``
and ``sessionspec_rule_<RULE>`` (``-`` spelled ``_``) and matched by ``-k`` on
its group and rule IDs (node id ``sessionspec/<group>::<vector id>``, so JUnit XML
shows the group as the class and the vector id as the name); ``conform`` (differential random testing,
sessionspec/conformance/conform/search.py) runs as one more item,
``conform``, with ``--sessionspec-examples N`` traces and
``--sessionspec-seed S``.  The items are collected like any test (the session's
collection yields the kit's collector), so ``collected N items``,
``--collect-only`` and ``-k``/``-m`` deselection count them right.  The
defaults are the command line's (``sessionspec conform --examples``, ``--timeout``),
and the conform item leaves no ``.hypothesis/`` behind (sessionspec/hypothesis_home.py).

A failing item names the rule, the JSON paths that differ, for ``conform`` the
shrunk trace, and the command that replays it: the failing vector is written
as a one-vector directory under ``--sessionspec-failures DIR`` (default
``.sessionspec-failures``) and ``sessionspec vectors run DIR --adapter CMD``
replays it.  Works with ``-k``, ``-m``, ``-x``, ``-n`` (pytest-xdist: each
worker keeps its own adapter process) and ``--junitxml`` (one test case per
vector).  docs/conformance.md shows the one-line CI step.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import shlex
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

if TYPE_CHECKING:
    from sessionspec.conformance.adapter.driver import ProcessAdapter
    from sessionspec.conformance.vectors.expectations import Expectations
    from sessionspec.conformance.vectors.floor import Floor

# The model and the kit are imported only when --sessionspec-adapter is given:
# the plugin loads in every pytest run of an environment that has sessionspec.

# The command line's defaults, spelled here so that loading the plugin imports nothing of the kit;
# tests/conformance/test_pytest_plugin.py checks they equal sessionspec.conformance's (conform.search.DEFAULT_EXAMPLES,
# driver.DEFAULT_TIMEOUT).
DEFAULT_EXAMPLES: Final = 200
DEFAULT_TIMEOUT: Final = 30.0

CONFORM_ID: Final = "conform"


def marker_name(text: str) -> str:
    """A marker name for a group or rule ID (pytest markers are identifiers)."""
    return re.sub(r"\W", "_", text)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("sessionspec", "sessionspec conformance kit (docs/conformance.md)")
    group.addoption("--sessionspec-adapter", metavar="CMD", default=None,
                    help="run the sessionspec vectors and conform against this adapter command")
    group.addoption("--sessionspec-vectors", metavar="DIR", default=None,
                    help="vector directory (default: the vectors shipped with sessionspec)")
    # The defaults are the command line's (`sessionspec conform --examples`, `--timeout`); they
    # are read from the kit only when --sessionspec-adapter is given (see _defaults).
    group.addoption("--sessionspec-examples", metavar="N", type=int, default=None,
                    help=f"traces the conform item generates (default {DEFAULT_EXAMPLES}, as `sessionspec conform`; 0 leaves the conform item out)")
    group.addoption("--sessionspec-seed", metavar="S", type=int, default=None,
                    help="random seed of the conform item (default: derandomized, reproducible)")
    group.addoption("--sessionspec-timeout", metavar="SECONDS", type=float, default=None,
                    help=f"a vector whose adapter does not answer within SECONDS fails and the adapter is restarted "
                         f"(default {DEFAULT_TIMEOUT:g}, as `sessionspec conform --timeout`)")
    group.addoption("--sessionspec-expect", metavar="FILE", default=None,
                    help="vectors expected to fail (one 'ID-or-glob [@SIGNATURE] reason' per line, or JSON; conform: "
                         "'conform/SIGNATURE'): they are xfail, a listed vector that passes fails as XPASS(strict), one "
                         "that fails another way than @SIGNATURE fails; an entry matching no vector is a usage error, one "
                         "matching only skipped vectors fails the session (default: none)")
    group.addoption("--sessionspec-failures", metavar="DIR", default=".sessionspec-failures",
                    help="where each failing vector is written as a replayable one-vector directory (default .sessionspec-failures)")
    group.addoption("--sessionspec-min-run", metavar="N|P%", default=None,
                    help="fail the session when fewer than N sessionspec items, or less than P%% of those selected, ran "
                         "(not skipped) (default 1, as `sessionspec vectors run --min-run`: a run where nothing ran fails)")
    group.addoption("--sessionspec-fail-on-skip", action="store_true", default=False,
                    help="fail the session when any sessionspec item was skipped (default: a skip is not a failure)")


@dataclass
class _State:
    command: str
    directory: Path
    documents: list[dict[str, Any]]
    examples: int
    seed: int | None
    failures: Path
    timeout: float
    expectations: Expectations | None = None
    adapter: ProcessAdapter | None = field(default=None)
    floor: Floor | None = None
    outcomes: dict[str, str] = field(default_factory=dict)  # node id -> ran / skipped (the controller's view)
    problems: list[str] = field(default_factory=list)  # why the session fails beyond its items

    def connection(self) -> ProcessAdapter:
        """This process's adapter (one per pytest process, so one per xdist worker)."""
        if self.adapter is None:
            from sessionspec.conformance.adapter.driver import ProcessAdapter

            adapter = ProcessAdapter(self.command, timeout=self.timeout)
            try:
                adapter.hello()  # the protocol, and the capabilities it declares (skips, issue 27)
            except BaseException:
                adapter.close()
                raise
            self.adapter = adapter
        return self.adapter

    def drop(self) -> None:
        """Close the adapter (after it failed, the next item starts a fresh one)."""
        if self.adapter is not None:
            self.adapter.close()
            self.adapter = None


STATE: Final = pytest.StashKey[_State]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sessionspec: a sessionspec conformance item (vector or conform)")
    command = config.getoption("--sessionspec-adapter")
    if command is None:
        return
    from sessionspec.conformance.vectors.command import load_dir
    from sessionspec.conformance.vectors.format import FormatError
    from sessionspec.conformance.vectors.shipped import shipped_vectors

    if not shlex.split(command):
        raise pytest.UsageError("--sessionspec-adapter: the adapter command is empty")
    given = config.getoption("--sessionspec-vectors")
    directory = Path(given) if given else shipped_vectors()
    if not directory.is_dir():
        raise pytest.UsageError(f"--sessionspec-vectors: no such directory: {directory}")
    try:
        documents = load_dir(directory)
    except (FormatError, json.JSONDecodeError, OSError) as bad:
        raise pytest.UsageError(f"--sessionspec-vectors: {bad}") from bad
    examples = config.getoption("--sessionspec-examples")
    examples = DEFAULT_EXAMPLES if examples is None else examples
    if examples < 0:
        raise pytest.UsageError("--sessionspec-examples must be 0 or more")
    timeout = config.getoption("--sessionspec-timeout")
    timeout = DEFAULT_TIMEOUT if timeout is None else timeout
    if not timeout > 0:
        raise pytest.UsageError("--sessionspec-timeout must be a positive number of seconds")
    failures = Path(config.getoption("--sessionspec-failures"))
    expect = config.getoption("--sessionspec-expect")
    from sessionspec.conformance.vectors.expectations import ExpectationsError, load_expectations

    try:
        expectations = load_expectations(expect) if expect else None
    except ExpectationsError as bad:
        raise pytest.UsageError(f"--sessionspec-expect: {bad}") from bad
    from sessionspec.conformance.vectors.floor import DEFAULT_MIN_RUN, Floor, parse_min_run

    try:
        least = parse_min_run(config.getoption("--sessionspec-min-run") or DEFAULT_MIN_RUN)
    except argparse.ArgumentTypeError as bad:
        raise pytest.UsageError(f"--sessionspec-min-run: {bad}") from bad
    floor = Floor(count=least.count, percent=least.percent, fail_on_skip=config.getoption("--sessionspec-fail-on-skip"),
                  options="--sessionspec-")
    ids = [str(v["id"]) for d in documents for v in d["vectors"]]
    for entry in expectations.entries if expectations is not None else ():
        if not entry.pattern.startswith("conform/") and not any(fnmatch.fnmatchcase(i, entry.pattern) for i in ids):
            raise pytest.UsageError(f"--sessionspec-expect: {expectations.source if expectations else ''}: "
                                    f"{entry.pattern!r} matches no vector of {directory}")
    config.stash[STATE] = _State(command=command, directory=directory, documents=documents, examples=examples,
                                 seed=config.getoption("--sessionspec-seed"), timeout=timeout, expectations=expectations,
                                 failures=failures if failures.is_absolute() else config.rootpath / failures, floor=floor)
    from sessionspec.conformance.vectors.pytest_session import SessionOutcome, report_kit_items_by_node_id

    config.pluginmanager.register(SessionOutcome(config.stash[STATE]), "sessionspec-session-outcome")
    report_kit_items_by_node_id(config)
    for document in documents:
        config.addinivalue_line("markers", f"sessionspec_{marker_name(document['group'])}: vectors of group {document['group']}")
        for vector in document["vectors"]:
            for rule in vector["rules"]:
                config.addinivalue_line("markers", f"sessionspec_rule_{marker_name(rule)}: vectors that name rule {rule}")
    config.addinivalue_line("markers", "sessionspec_conform: the conform item (generated traces)")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A kit item's skip is reported at its node id, not at the plugin's line that skipped it."""
    report = yield
    if isinstance(item, VectorItem | ConformItem) and report.skipped and isinstance(report.longrepr, tuple):
        # A relative path is shown as it is; lineno None: no line (pytest's own skip-marker reports have none).
        report.longrepr = (item.nodeid, None, report.longrepr[2])  # type: ignore[assignment]
    return report


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is not None:
        state.drop()


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    """The session's collection also yields the kit's collector, so vectors and
    conform are collected like any test: counted in the ``collected N items``
    header and by ``--collect-only``, then selected by ``-k``/``-m`` as usual."""
    report = yield
    state = collector.config.stash.get(STATE, None)
    if state is not None and isinstance(collector, pytest.Session) and report.passed:
        report.result.append(KitCollector.from_parent(collector, name="sessionspec", nodeid="sessionspec"))
    return report


class KitCollector(pytest.Collector):
    """``sessionspec``: one :class:`GroupCollector` per vector file, then the conform item."""

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        state = self.config.stash[STATE]
        nodes: list[pytest.Item | pytest.Collector] = [
            GroupCollector.from_parent(self, name=str(document["group"]), nodeid=f"sessionspec/{document['group']}", document=document)
            for document in state.documents]
        if state.examples > 0:
            nodes.append(ConformItem.from_parent(self, name=CONFORM_ID, nodeid=f"sessionspec::{CONFORM_ID}"))
        return nodes


class GroupCollector(pytest.Collector):
    """``sessionspec/<group>``: the vectors of one file (JUnit XML shows the group as the class)."""

    def __init__(self, *, document: Mapping[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.document = document

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        return [VectorItem.from_parent(self, name=vector["id"], nodeid=f"{self.nodeid}::{vector['id']}", document=self.document,
                                       vector=vector) for vector in self.document["vectors"]]


class Failed(Exception):
    """A readable conformance failure (the report is the message)."""


class FailedOtherwise(Exception):
    """A vector listed in the expectations fails, but not the way its entry pins (its signature): not the
    expected failure (``xfail(raises=Failed)`` does not take it), so the item fails."""


def replay_command(state: _State, directory: Path) -> str:
    return f"sessionspec vectors run {shlex.quote(str(directory))} --adapter {shlex.quote(state.command)}"


def write_replay(state: _State, name: str, document: Mapping[str, Any]) -> Path:
    """Write ``document`` as ``<failures>/<name>/<group>.json``; the directory."""
    from sessionspec.conformance.vectors.format import file_text

    directory = state.failures / marker_name(name)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{marker_name(str(document['group']))}.json").write_text(file_text(document), encoding="utf-8")
    return directory


class VectorItem(pytest.Item):
    """One vector against the adapter."""

    def __init__(self, *, document: Mapping[str, Any], vector: Mapping[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.document = document
        self.vector = vector
        group = str(document["group"])
        rules: Sequence[str] = vector["rules"]
        self.add_marker(pytest.mark.sessionspec)
        self.add_marker(getattr(pytest.mark, f"sessionspec_{marker_name(group)}"))
        for rule in rules:
            self.add_marker(getattr(pytest.mark, f"sessionspec_rule_{marker_name(rule)}"))
        self.extra_keyword_matches.update({group, *rules})
        expectations = self.config.stash[STATE].expectations
        reason = None if expectations is None else expectations.reason_for(str(vector["id"]))
        if reason is not None:  # --sessionspec-expect: strict, so a listed vector that passes is reported
            self.add_marker(pytest.mark.xfail(reason=reason, strict=True, raises=Failed))

    def runtest(self) -> None:
        from sessionspec.conformance.adapter.protocol import AdapterError
        from sessionspec.conformance.vectors.format import FORMAT
        from sessionspec.conformance.vectors.runner import expect, failure_lines, run_vector

        state = self.config.stash[STATE]
        try:
            adapter = state.connection()
        except AdapterError as failed:
            raise Failed(f"adapter: {failed}") from None
        # A hung adapter must not hang CI: the driver waits at most --sessionspec-timeout
        # for each answer, then kills the adapter's process group (AdapterError).
        try:
            result = run_vector(adapter, self.vector, str(self.document["group"]))
        except AdapterError as failed:
            state.drop()
            raise Failed(f"vector {self.vector['id']}: adapter failed: {failed} (--sessionspec-timeout {state.timeout:g} s)") from None
        if any(f.startswith("adapter:") for f in result.failures):
            state.drop()
        if result.skipped:  # not supported is not wrong (issue 27)
            pytest.skip(result.skip_reason or f"unsupported: {', '.join(result.skipped)}")
        if result.passed:
            return
        directory = write_replay(state, str(self.vector["id"]), {
            "format": FORMAT, "registry": self.document["registry"], "group": self.document["group"], "vectors": [self.vector]})
        lines = [f"vector {self.vector['id']} failed (rules: {', '.join(self.vector['rules']) or '-'})"]
        # The same text as `sessionspec vectors run` (vectors.runner.failure_lines); -v shows every difference.
        lines += [f"  {line}" for line in failure_lines(expect(result, state.expectations),
                                                        None if self.config.get_verbosity() > 0 else 8)]
        lines.append(f"replay: {replay_command(state, directory)}")
        if expect(result, state.expectations).unpinned:
            raise FailedOtherwise("\n".join(lines))
        raise Failed("\n".join(lines))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, Failed | FailedOtherwise):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"sessionspec vector {self.name}"


class ConformItem(pytest.Item):
    """``conform``: generated traces against the model; fails on the first (shrunk) divergence."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_marker(pytest.mark.sessionspec)
        self.add_marker(pytest.mark.sessionspec_conform)

    def runtest(self) -> None:
        from sessionspec.conformance.adapter.protocol import AdapterError
        from sessionspec.conformance.conform.outcome import Tally
        from sessionspec.conformance.conform.report import crash_lines, divergence_lines, expected_lines, trace_lines
        from sessionspec.conformance.conform.search import run_conform
        from sessionspec.conformance.vectors.format import FORMAT
        from sessionspec.hypothesis_home import scratch_hypothesis_home

        state = self.config.stash[STATE]
        tally = Tally()
        try:
            with scratch_hypothesis_home():  # no .hypothesis/ left in the user's directory
                divergence = run_conform(state.command, examples=state.examples, seed=state.seed, timeout=state.timeout,
                                         tally=tally, expectations=state.expectations)
        except AdapterError as failed:
            raise Failed(f"conform: adapter: {failed}") from None
        verbose = self.config.get_verbosity() > 0
        lines: list[str] = []
        if divergence is not None:
            from sessionspec.spec.registry import registry_digest

            vector = divergence.vector().to_json()
            directory = write_replay(state, "conform", {"format": FORMAT, "registry": registry_digest(), "group": "conform",
                                                        "vectors": [vector]})
            lines = [f"conform: DIVERGENCE, rule {divergence.rule}, at operation {divergence.index} of a "
                     f"{len(divergence.trace)}-operation trace ({state.examples} examples, seed {state.seed})"]
            lines += [f"  {line}" for line in divergence_lines(divergence, None if verbose else 8)]
            lines.append("shrunk trace:")
            lines += [f"  {line}" for line in trace_lines(divergence.initial, divergence.trace)]
            lines.append(f"replay: {replay_command(state, directory)}")
        for crash in tally.crashes:
            lines += crash_lines(crash)
        if lines:
            raise Failed("\n".join([*lines, *expected_lines(tally, verbose), *tally.lines()]))
        if tally.expected:  # --sessionspec-expect lists what diverged: the search went on past each
            pytest.xfail("; ".join(f"{key}: {seen.reason} ({seen.count} traces)" for key, seen in sorted(tally.expected.items())))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, Failed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, "sessionspec conform"
