"""Recording the pins of the decision table (issue 43): what each run of the project's checks takes.

Three kinds of run are recorded under the instrumented model (spec/decision_probe.py):

- **vectors**: every committed vector, run in this process against the model (``vector:ID``); a vector
  pins the outcomes it takes only when every answer matched its expectation (they are the model's own
  answers, so a failure here means the vectors are stale);
- **tests**: the test suite under the pytest plugin of this module (``test:NODEID``), and within it the
  rules and invariants of the state machines (``machine:LoopRules.send_turn``), whose steps are
  attributed to the rule that ran them;
- the CrossHair targets are not run here: spec/decision_table.py reads them from proofs/targets.txt.

``python -m sessionspec.decisions.record [--tests [PYTEST ARGS...] | --parts DIR | --list-short]`` writes
spec/decision_pins.json: the vectors, and with ``--tests`` the test suite (minutes; the tests marked slow are
left out; ``-n 2`` spreads it over two processes), or with ``--parts`` the parts an earlier test run wrote
(``SESSIONSPEC_DECISION_PINS=DIR pytest -p sessionspec.decisions.record ...``); with neither, the test and
machine pins of the committed file are kept.  The pins file keeps, per outcome, the counts and the
first pin of each kind taken by at most three (the table shows those); the vectors' trace shapes are counted in full.
``--list-short`` writes the outcomes still short of three vector shapes, each with its reason: the group of
spec/decision_not_by_vectors.py that says why the protocol cannot reach it, or the work left (spec/decision_short_of_vectors.txt).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import pytest

from sessionspec.conformance.adapter.driver import InProcessAdapter
from sessionspec.conformance.vectors.files import load_dir
from sessionspec.conformance.vectors.runner import run_vector
from sessionspec.spec.decision_probe import Probe, recording
from sessionspec.spec.decision_table import PINS_FILE, PinSet, read_pins, trace_shape, write_pins

ROOT: Final = Path(__file__).resolve().parents[2]
VECTORS: Final = ROOT / "vectors"


def record_vectors(probe: Probe, directory: Path = VECTORS) -> list[str]:
    """Run every vector of ``directory`` on the model under ``probe``; the ids of those that failed."""
    failed: list[str] = []
    for file in load_dir(directory):
        for vector in file["vectors"]:
            label = f"vector:{vector['id']}"
            with probe.pinned(label):
                result = run_vector(InProcessAdapter(), vector, file.get("group", ""))
            if result.status != "pass":
                failed.append(vector["id"])
    return failed


def vector_shapes(directory: Path = VECTORS) -> dict[str, str]:
    """Vector id -> its trace shape (spec/decision_table.trace_shape)."""
    return {v["id"]: trace_shape(v["initial"], [s["op"] for s in v["steps"]])
            for file in load_dir(directory) for v in file["vectors"]}


@contextmanager
def machine_rules_pinned(probe: Probe) -> Iterator[None]:
    """While the block runs, each rule and invariant of the loop machine runs pinned to its own name."""
    from sessionspec.spec.machine_invariants import LoopInvariants
    from sessionspec.spec.machine_rules import LoopRules

    markers = ("hypothesis_stateful_rule", "hypothesis_stateful_initialize_rule", "hypothesis_stateful_invariant")
    restore: list[tuple[object, Callable[..., Any]]] = []
    for machine in (LoopRules, LoopInvariants):
        for name, member in vars(machine).items():
            for marker in markers:
                held = getattr(member, marker, None)
                if held is None:
                    continue
                original = held.function

                def pinned(*args: Any, _original: Callable[..., Any] = original, _label: str = f"machine:{machine.__name__}.{name}",
                           **kwargs: Any) -> Any:
                    with probe.pinned(_label):
                        return _original(*args, **kwargs)

                pinned.__name__, pinned.__qualname__ = original.__name__, original.__qualname__
                object.__setattr__(held, "function", pinned)
                restore.append((held, original))
    try:
        yield
    finally:
        for held, original in restore:
            object.__setattr__(held, "function", original)


class PytestPins:
    """The pytest plugin of a recording run: every test runs pinned to its node id, the machines' rules to
    their names; at the end each process writes its part (xdist workers too) to ``out``."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self._recording: Any = None
        self._rules: Any = None
        self.probe: Probe | None = None

    def pytest_configure(self, config: Any) -> None:
        self._recording = recording()
        self.probe = self._recording.__enter__()
        self._rules = machine_rules_pinned(self.probe)
        self._rules.__enter__()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Iterator[None]:
        assert self.probe is not None
        with self.probe.pinned(f"test:{item.nodeid}"):
            return (yield)

    def pytest_unconfigure(self, config: Any) -> None:
        assert self.probe is not None
        worker = getattr(config, "workerinput", {}).get("workerid", "main")
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / f"part-{worker}.json").write_text(json.dumps({o: sorted(p) for o, p in self.probe.taken().items()}),
                                                     encoding="utf-8")
        self._rules.__exit__(None, None, None)
        self._recording.__exit__(None, None, None)


def pytest_configure(config: Any) -> None:
    """Loaded with ``-p sessionspec.decisions.record``: records when ``SESSIONSPEC_DECISION_PINS`` names a directory."""
    import os

    out = os.environ.get("SESSIONSPEC_DECISION_PINS")
    if out and not config.pluginmanager.has_plugin("decision-pins"):
        plugin = PytestPins(Path(out))
        config.pluginmanager.register(plugin, "decision-pins")
        plugin.pytest_configure(config)


def merge_parts(directory: Path) -> dict[str, set[str]]:
    taken: dict[str, set[str]] = {}
    for part in sorted(directory.glob("part-*.json")):
        for outcome, pins in json.loads(part.read_text(encoding="utf-8")).items():
            taken.setdefault(outcome, set()).update(pins)
    return taken


def record(pytest_args: Sequence[str] | None = None, parts: Path | None = None, out: Path = PINS_FILE) -> int:
    """Record the vectors (and the tests, run now or from ``parts``) and write the pins file; 1 when a vector
    failed or the recorded test run did."""
    import os
    import subprocess
    import tempfile

    with recording() as probe:
        failed = record_vectors(probe)
        vectors = probe.taken()
    tests: Mapping[str, set[str]] | None = None
    status = 0
    if pytest_args is not None:
        with tempfile.TemporaryDirectory() as scratch:
            env = {**os.environ, "SESSIONSPEC_DECISION_PINS": scratch, "HYPOTHESIS_PROFILE": os.environ.get("HYPOTHESIS_PROFILE", "ci")}
            done = subprocess.run([sys.executable, "-m", "pytest", "-p", "sessionspec.decisions.record", "-p", "no:cacheprovider",
                                   "-q", "-m", "not slow", *pytest_args], cwd=ROOT, env=env, check=False)
            print(f"decisions: the recorded test run exited {done.returncode}", file=sys.stderr)
            status = 1 if done.returncode != 0 else 0
            tests = merge_parts(Path(scratch))
    elif parts is not None:
        tests = merge_parts(parts)
    pins = PinSet.from_runs(vectors, tests, vector_shapes(), previous=read_pins(out))
    write_pins(pins, out)
    for vector_id in failed:
        print(f"decisions: vector {vector_id} does not match the model: regenerate the vectors first", file=sys.stderr)
    return 1 if failed else status


def list_short(out: Path | None = None) -> int:
    """Write every reachable outcome fewer than three vector shapes take, each with its reason after a tab
    (spec/decision_short_of_vectors.txt; tests/spec/test_decision_table.py lets its work left only shrink and
    fails on an outcome without a reason), from the committed pins."""
    from sessionspec.spec.decision_table import short_reasons
    from sessionspec.spec.decision_unreachable import EXEMPT_MARK, SHORT_FILE

    reasons = short_reasons()
    unstated = sorted(o for o, why in reasons.items() if why is None)
    lines = [f"{o}\t{why or 'no reason stated'}\n" for o, why in sorted(reasons.items())]
    (out or SHORT_FILE).write_text("# Reachable decision outcomes fewer than three vectors of distinct trace shapes take (issue 43 item 3),\n"
                                   "# each with why after a tab: 'not by vectors: GROUP' (spec/decision_not_by_vectors.py) or 'work left: ...'.\n"
                                   "# Written by `python -m sessionspec.decisions.record --list-short`; its work left may only shrink.\n"
                                   + "".join(lines), encoding="utf-8")
    exempt = sum(1 for why in reasons.values() if why is not None and why.startswith(EXEMPT_MARK))
    print(f"decisions: {len(reasons)} reachable outcomes short of three vector shapes: {exempt} the protocol cannot reach "
          f"(with the reason), {len(reasons) - exempt - len(unstated)} work left, {len(unstated)} without a reason", file=sys.stderr)
    for outcome in unstated:
        print(f"decisions: no reason stated for {outcome}", file=sys.stderr)
    return 1 if unstated else 0


def main(argv: Sequence[str]) -> int:
    if argv == ["--list-short"]:
        return list_short()
    if argv[:1] == ["--tests"]:
        return record(list(argv[1:]))
    if len(argv) == 2 and argv[0] == "--parts":
        return record(parts=Path(argv[1]))
    if argv:
        print("usage: python -m sessionspec.decisions.record [--tests [PYTEST ARGS...] | --parts DIR | --list-short]", file=sys.stderr)
        return 2
    return record()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
