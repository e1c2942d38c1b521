"""An error turn from the writer's own invariant guard (issue 44, item 4).

The harness's package-owned invariants throw ``InvariantError`` (``code = 'INVARIANT'``, message ``invariant
violated by "<package>": …``; ``packages/support/invariants/src/index.ts`` at ``a55f148516``), and the loop
records the error as the turn's end (``loop.ts`` ``failTurn``).  ``check`` reports it as what it is: the
writer caught itself breaking the rule its guard enforces -- a note by default, a finding with
``--strict-quirks`` -- and not as an ordinary provider error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionspec import api
from sessionspec.cli import main
from sessionspec.model.codec import serialize_event
from sessionspec.model.guard import guard_trip
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Dialect, Event
from sessionspec.model.loop import AgentConfig, Prompt, Reply, ReplyKind, TurnScript, new_instance, run_turn, text_content
from sessionspec.model.rejected import Rejected
from sessionspec.simulate import ECHO_TOOL, PERSONA

LOOP_GUARD = 'invariant violated by "@deepseek-ai/dsh-agent-loop": llm request for session "s1" diverges from the boundary derivation (log-reconstruction desync)'


def _log(code: str, message: str) -> tuple[Event, ...]:
    """Two turns by the loop model; the second's request fails with a thrown error of ``code``."""
    agent = AgentConfig(system=PERSONA, tools=(ECHO_TOOL,))
    log: tuple[Event, ...] = ()
    instance = new_instance()
    for script in (TurnScript(prompt=Prompt(content=text_content("hi")), replies=(Reply(text="hello"),)),
                   TurnScript(prompt=Prompt(content=text_content("again")),
                              replies=(Reply(kind=ReplyKind.ERROR_THROWN, error_code=code, error_message=message),))):
        out = run_turn(log, instance, agent, script)
        assert not isinstance(out, Rejected), out
        log, instance = out.log, out.instance
    return log


def _file(tmp_path: Path, log: tuple[Event, ...]) -> str:
    path = tmp_path / "s.jsonl"
    path.write_text("".join(serialize_event(e) + "\n" for e in log), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(("reason", "dialect", "rule"), [
    ({"kind": "error", "step": 1, "message": LOOP_GUARD, "code": "INVARIANT"}, Dialect.A55, "INV-3"),
    ({"kind": "error", "step": 1, "failure": {"message": LOOP_GUARD, "code": "INVARIANT"}}, Dialect.A55, "INV-3"),
    ({"kind": "error", "error": {"message": LOOP_GUARD, "code": "INVARIANT"}}, Dialect.D08, "INV-3"),
    ({"kind": "error", "step": 2, "code": "INVARIANT",
      "message": 'invariant violated by "@deepseek-ai/dsh-agent-loop": llm request for session "s" diverges from the folded request header'},
     Dialect.A55, "INV-4"),
    ({"kind": "error", "step": 2, "code": "INVARIANT",
      "message": 'invariant violated by "@deepseek-ai/dsh-agent-loop": a loop-built request must be frozen'}, Dialect.A55, "INV-2"),
    ({"kind": "error", "step": 2, "code": "INVARIANT",
      "message": 'invariant violated by "@deepseek-ai/dsh-session": seq must strictly increase: saw 4 after 4'}, Dialect.A55, "LOG-13"),
    ({"kind": "error", "step": 2, "code": "INVARIANT",
      "message": 'invariant violated by "@deepseek-ai/dsh-sandbox": policy must be frozen'}, Dialect.A55, "LOOP-16"),
])
def test_an_INVARIANT_error_end_names_the_rule_its_guard_enforces(reason: dict[str, object], dialect: Dialect, rule: str) -> None:
    trip = guard_trip(freeze(reason), dialect)
    assert trip is not None and trip.rule == rule and trip.message.startswith("invariant violated by")


@pytest.mark.parametrize("reason", [
    {"kind": "error", "step": 1, "message": "rate limited", "code": "RATE_LIMIT"},
    {"kind": "error", "step": 1, "failure": {"message": "too long", "code": "CONTEXT_WINDOW_EXCEEDED"}},
    {"kind": "completed"},
    {"kind": "aborted"},
])
def test_other_turn_ends_are_not_the_guard(reason: dict[str, object]) -> None:
    assert guard_trip(freeze(reason), Dialect.A55) is None


def test_by_default_the_guard_is_a_note_naming_the_rule(tmp_path: Path) -> None:
    report = api.check_file(_file(tmp_path, _log("INVARIANT", LOOP_GUARD)))
    assert report.verdict is api.Verdict.VALID and report.findings == ()
    [note] = [n for n in report.notes if "invariant guard" in n]
    assert "caught it breaking INV-3" in note and "--strict-quirks makes it a finding" in note and "line 21" in note


def test_with_strict_quirks_the_guard_is_a_finding_at_the_turn_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, _log("INVARIANT", LOOP_GUARD))
    report = api.check_file(path, strict_quirks=True)
    assert report.verdict is api.Verdict.INVALID
    assert [(f.rule, f.line, f.seq) for f in report.findings] == [("INV-3", 21, 20)]
    assert main(["check", "--strict-quirks", path]) == 1
    assert f"{path}:21: INV-3 seq 20: turn/end error INVARIANT (@deepseek-ai/dsh-agent-loop)" in capsys.readouterr().out


def test_an_ordinary_provider_error_is_neither(tmp_path: Path) -> None:
    for strict in (False, True):
        report = api.check_file(_file(tmp_path, _log("RATE_LIMIT", "rate limited")), strict_quirks=strict)
        assert report.verdict is api.Verdict.VALID and not any("guard" in n for n in report.notes)
