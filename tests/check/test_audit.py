"""sessionspec.check.audit: the log-alone checks (LOG-8 shapes, LOG-13, FMT-9, PFX-15, FMT-8), on small built logs."""

from __future__ import annotations

import copy
from typing import Any

from sessionspec.check.audit import audit_events, audit_log, pre_a55_designs, quirk_observations
from sessionspec.check.d08_audit import check_d08_message_shapes, check_retry_attempts
from sessionspec.check.header_audit import check_header_reasons
from sessionspec.check.nesting_audit import check_nesting
from sessionspec.model.codec import event_from_json
from sessionspec.model.header import EpochHeader, opt_header_eq
from sessionspec.model.header_log import check_header_types
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Dialect, Event, with_seq
from sessionspec.model.migrate import migrate_legacy
from sessionspec.model.rejected import Rejected
from sessionspec.model.seed_log import check_fork_child

USER = {"kind": "user"}
PREFIX = [{"role": "user", "content": [{"type": "text", "text": "opener"}]}]


def _header(reason: str, *, system: str = "S", prefix: list[Any] | None = None, provider: str = "p") -> dict[str, Any]:
    header: dict[str, Any] = {"config": {"provider": provider, "model": "m"}, "system": system}
    if prefix is not None:
        header["messagePrefix"] = prefix
    return {"type": "request/header", "data": {"header": header, "reason": reason}}


def _turn(turn: int, header: dict[str, Any] | None, *, steps: int = 1, text: str = "hi") -> list[dict[str, Any]]:
    """One loop turn: prompt, then ``steps`` steps of chunk + assistant message."""
    rows: list[dict[str, Any]] = [
        {"type": "turn/start", "data": {"turn": turn, "trigger": {"kind": "message", "source": USER}}},
        {"type": "user/message", "data": {"content": [{"type": "text", "text": text}], "source": USER}, "surfaceOp": "append"},
    ]
    for step in range(1, steps + 1):
        rows.append({"type": "step/start", "data": {"turn": turn, "step": step}})
        if header is not None and step == 1:
            rows.append(copy.deepcopy(header))
        rows.append({"type": "assistant/chunk", "data": {"turn": turn, "step": step, "chunk": {"type": "text-delta", "index": 0, "text": "ok"}}})
        rows.append(
            {
                "type": "assistant/message",
                "data": {"turn": turn, "step": step, "content": [{"type": "text", "text": "ok"}], "provenance": {"provider": "p", "model": "m"}},
                "sourceEventSeqs": ["CHUNK"],
                "surfaceOp": "append",
            }
        )
        rows.append({"type": "step/end", "data": {"turn": turn, "step": step}})
    rows.append({"type": "turn/end", "data": {"turn": turn, "reason": {"kind": "completed"}}})
    return rows


def _tool_turn(turn: int, header: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A turn whose step 1 calls a tool and whose step 2 answers in text."""
    call = {"type": "tool-call", "id": "c1", "name": "read", "arguments": "{}"}
    return [
        {"type": "turn/start", "data": {"turn": turn, "trigger": {"kind": "message", "source": USER}}},
        {"type": "user/message", "data": {"content": [{"type": "text", "text": "go"}], "source": USER}, "surfaceOp": "append"},
        {"type": "step/start", "data": {"turn": turn, "step": 1}},
        *([copy.deepcopy(header)] if header is not None else []),
        {"type": "assistant/chunk", "data": {"turn": turn, "step": 1, "chunk": {"type": "block-end", "index": 0, "block": call}}},
        {
            "type": "assistant/message",
            "data": {"turn": turn, "step": 1, "content": [call], "provenance": {"provider": "p", "model": "m"}},
            "sourceEventSeqs": ["CHUNK"],
            "surfaceOp": "append",
        },
        {"type": "tool/call", "data": {"turn": turn, "step": 1, "callId": "c1", "name": "read", "arguments": "{}"}},
        {
            "type": "tool/result",
            "data": {"turn": turn, "step": 1, "callId": "c1", "content": [{"type": "text", "text": "r"}], "isError": False},
            "sourceEventSeqs": ["CALL"],
            "surfaceOp": "append",
        },
        {"type": "step/end", "data": {"turn": turn, "step": 1}},
        {"type": "turn/end", "data": {"turn": turn, "reason": {"kind": "completed"}}},
    ]


def _events(rows: list[dict[str, Any]]) -> list[Event]:
    """Number the rows and resolve the CHUNK/CALL placeholders to the latest such seq."""
    events: list[Event] = []
    last: dict[str, int] = {}
    for seq, row in enumerate(rows):
        row = copy.deepcopy(row)
        if "sourceEventSeqs" in row:
            row["sourceEventSeqs"] = [last["assistant/chunk" if s == "CHUNK" else "tool/call"] if isinstance(s, str) else s for s in row["sourceEventSeqs"]]
        envelope = {"type": row["type"], "seq": seq, "time": 0, "data": row["data"]}
        for key in ("sourceEventSeqs", "surfaceOp"):
            if key in row:
                envelope[key] = row[key]
        event = event_from_json(freeze(envelope))
        assert not isinstance(event, Rejected), event
        events.append(event)
        last[row["type"]] = seq
    return events


def _rules(findings: tuple[Rejected, ...] | list[Rejected]) -> set[str]:
    return {f.rule for f in findings}


def _valid_log() -> list[dict[str, Any]]:
    return _turn(1, _header("initial", prefix=PREFIX)) + _tool_turn(2, None) + _turn(3, None, steps=2)


def test_built_log_is_valid() -> None:
    assert audit_log(_events(_valid_log()), Dialect.A55) == ()


# --------------------------------------------------------------------------- LOG-8 shapes


def test_LEG_2_rejects_fallback_reason() -> None:
    rows = _turn(1, _header("fallback"))
    assert "LEG-2" in _rules(audit_log(_events(rows), Dialect.A55))


def test_LEG_3_rejects_mode_set() -> None:
    rows = _turn(1, _header("initial"))
    rows.insert(1, {"type": "mode/set", "data": {"mode": "plan"}})
    assert "LEG-3" in _rules(audit_log(_events(rows), Dialect.A55))


def test_LEG_4_rejects_reason_bearing_aborted() -> None:
    rows = _turn(1, _header("initial"))
    rows[-1]["data"]["reason"] = {"kind": "aborted", "reason": {"kind": "user"}}
    assert "LEG-4" in _rules(audit_log(_events(rows), Dialect.A55))


def test_LOG_11_rejects_unknown_turn_end_kind() -> None:
    rows = _turn(1, _header("initial"))
    rows[-1]["data"]["reason"] = {"kind": "finished"}
    assert "LOG-11" in _rules(audit_log(_events(rows), Dialect.A55))


def test_HDR_8_rejects_header_without_provider() -> None:
    rows = _turn(1, _header("initial", provider=""))
    assert "HDR-8" in _rules(audit_log(_events(rows), Dialect.A55))


# --------------------------------------------------------------------------- LOG-13


def test_LOG_13_turn_numbers_follow_on() -> None:
    rows = _turn(1, _header("initial")) + _turn(3, None)
    found = check_nesting(_events(rows), Dialect.A55)
    assert [f.rule for f in found] == ["LOG-13"] and "not the next turn 2" in found[0].reason


def test_LOG_13_step_numbers_follow_on() -> None:
    rows = _turn(1, _header("initial"), steps=2)
    second = next(i for i, r in enumerate(rows) if r["type"] == "step/start" and r["data"]["step"] == 2)
    for row in rows[second : second + 4]:
        row["data"]["step"] = 3
    assert any("not the next step 2" in f.reason for f in check_nesting(_events(rows), Dialect.A55))


def test_LOG_13_turn_end_with_open_step() -> None:
    rows = _turn(1, _header("initial"))
    del rows[-2]  # the step/end
    assert any("while step 1 is open" in f.reason for f in check_nesting(_events(rows), Dialect.A55))


def test_LOG_13_chunk_outside_step() -> None:
    rows = _turn(1, _header("initial"))
    rows.insert(2, {"type": "assistant/chunk", "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "x"}}})
    assert any("outside an open step" in f.reason for f in check_nesting(_events(rows), Dialect.A55))


def test_LOG_13_result_without_call() -> None:
    rows = _turn(1, _header("initial")) + _tool_turn(2, None)
    del rows[next(i for i, r in enumerate(rows) if r["type"] == "tool/call")]
    rows[next(i for i, r in enumerate(rows) if r["type"] == "tool/result")]["sourceEventSeqs"] = [0]
    assert any("not a pending call" in f.reason for f in check_nesting(_events(rows), Dialect.A55))


def test_LOG_13_synthetic_not_started_result_needs_no_call() -> None:
    rows = _turn(1, _header("initial")) + _tool_turn(2, None)
    del rows[next(i for i, r in enumerate(rows) if r["type"] == "tool/call")]
    result = rows[next(i for i, r in enumerate(rows) if r["type"] == "tool/result")]
    result["data"]["isError"] = True
    result["data"]["error"] = {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
    del result["sourceEventSeqs"]
    assert check_nesting(_events(rows), Dialect.A55) == []


def test_LOG_13_step_end_with_unanswered_call() -> None:
    rows = _turn(1, _header("initial")) + _tool_turn(2, None)
    del rows[next(i for i, r in enumerate(rows) if r["type"] == "tool/result")]
    assert any("without a tool/result" in f.reason for f in check_nesting(_events(rows), Dialect.A55))


def test_LOG_13_event_outside_turn() -> None:
    rows = _turn(1, _header("initial"))
    rows.append({"type": "todo/write", "data": {"todos": []}})
    assert any("outside an open turn" in f.reason for f in check_nesting(_events(rows), Dialect.A55))


def test_LOG_13_seed_events_are_audited_too() -> None:
    """The companion replays the seed through the same validation on session/created
    (core/session/src/invariant.ts lines 196-210 at a55f148516, seedSession; QF-12)."""
    rows = [{"type": "todo/write", "data": {"todos": []}}] + _turn(1, _header("initial"))
    events = _events(rows)
    assert check_nesting(events, Dialect.A55, first_live_seq=0) != []
    assert [f.reason for f in check_nesting(events, Dialect.A55, first_live_seq=1)] == ["todo/write outside an open turn (in the seed)"]


def test_LOG_13_d08_plugin_records_may_lie_between_turns() -> None:
    rows = [{"type": "agent/inbox/spliced", "data": {"target": "next-step", "start": 0, "inserted": []}}]
    assert check_nesting(_events(rows), Dialect.D08) == []
    assert check_nesting(_events(rows), Dialect.A55) != []


# --------------------------------------------------------------------------- FMT-9, PFX-15, HDR-7


def test_FMT_9_header_outside_step() -> None:
    rows = _turn(1, None)
    rows.insert(1, _header("initial"))
    assert any("outside a step" in f.reason for f in check_header_reasons(_events(rows), Dialect.A55))


def test_FMT_9_header_after_first_chunk() -> None:
    rows = _turn(1, None)
    chunk = next(i for i, r in enumerate(rows) if r["type"] == "assistant/chunk")
    rows.insert(chunk + 1, _header("initial"))
    assert any("after the step's first chunk" in f.reason for f in check_header_reasons(_events(rows), Dialect.A55))


def test_FMT_9_two_headers_in_one_step() -> None:
    rows = _turn(1, _header("initial"))
    rows.insert(4, _header("change", system="S2"))
    assert any("second request/header" in f.reason for f in check_header_reasons(_events(rows), Dialect.A55))


def test_FMT_9_initial_only_first() -> None:
    rows = _turn(1, _header("initial")) + _turn(2, _header("initial", system="S2"))
    assert any("initial header although" in f.reason for f in check_header_reasons(_events(rows), Dialect.A55))


def test_FMT_9_resume_needs_earlier_header() -> None:
    rows = _turn(1, _header("resume"))
    assert any("expected initial" in f.reason for f in check_header_reasons(_events(rows), Dialect.A55))


def test_FMT_9_change_must_differ() -> None:
    rows = _turn(1, _header("initial")) + _turn(2, _header("change"))
    found = check_header_reasons(_events(rows), Dialect.A55)
    assert [f.rule for f in found] == ["FMT-9"] and "equal to the header in force" in found[0].reason


def test_FMT_9_real_change_and_resume_anchor_are_valid() -> None:
    rows = _turn(1, _header("initial")) + _turn(2, _header("change", system="S2")) + _turn(3, _header("resume", system="S2"))
    assert audit_log(_events(rows), Dialect.A55) == ()


def test_PFX_15_prefix_changes_only_at_anchors() -> None:
    other = [{"role": "user", "content": [{"type": "text", "text": "other"}]}]
    changed = _turn(1, _header("initial", prefix=PREFIX)) + _turn(2, _header("change", system="S2", prefix=other))
    assert "PFX-15" in _rules(check_header_reasons(_events(changed), Dialect.A55))
    resumed = _turn(1, _header("initial", prefix=PREFIX)) + _turn(2, _header("resume", prefix=other))
    assert check_header_reasons(_events(resumed), Dialect.A55) == []


def test_HDR_7_loop_reasons_only() -> None:
    rows = _turn(1, _header("initial")) + _turn(2, _header("refresh", system="S2"))
    assert "HDR-7" in _rules(check_header_reasons(_events(rows), Dialect.A55))


def test_FMT_6_placeholder_headers_compare_by_identity() -> None:
    a = EpochHeader(config=freeze({"provider": "p", "model": "m"}), tools="{{tools}}")
    b = EpochHeader(config=freeze({"provider": "p", "model": "m"}), tools="{{tools}}")
    c = EpochHeader(config=freeze({"provider": "p", "model": "m"}), tools="{{other}}")
    assert opt_header_eq(a, b, Dialect.A55)
    assert not opt_header_eq(a, c, Dialect.A55)


# --------------------------------------------------------------------------- FMT-8 request points


def test_FMT_8_request_without_header_in_force() -> None:
    rows = _turn(1, None)
    found = audit_log(_events(rows), Dialect.A55)
    assert any(f.rule == "FMT-9" and "no request/header in force" in f.reason for f in found)


def test_FMT_8_seeded_request_uses_seed_header() -> None:
    seed = _turn(1, _header("initial"))
    rows = seed + _turn(2, _header("resume"))
    assert audit_log(_events(rows), Dialect.A55, first_live_seq=len(seed)) == ()
    # Without its own anchor, the child's request uses the seed's header and a
    # change as its first header is not an anchor (FMT-9 e).
    no_anchor = seed + _turn(2, _header("change", system="S2"))
    assert any("before any initial/resume anchor" in f.reason for f in audit_log(_events(no_anchor), Dialect.A55, first_live_seq=len(seed)))


# --------------------------------------------------------------------------- FMT-11, LOG-15


def test_FMT_11_seed_is_a_copy_of_the_parent_prefix() -> None:
    parent = _events(_turn(1, _header("initial")) + _turn(2, None))
    seed = len(_turn(1, _header("initial")))
    child = _events(_turn(1, _header("initial")) + _turn(2, _header("resume"), text="child"))
    assert check_fork_child(child, parent, seed) == []
    other = _events(_turn(1, _header("initial"), text="changed") + _turn(2, None))
    assert [f.rule for f in check_fork_child(other, parent, seed)] == ["FMT-11"]
    assert [f.rule for f in check_fork_child(child, parent, len(parent) + 1)] == ["FMT-11"]


def test_LOG_15_fork_boundary_is_a_turn_end() -> None:
    parent = _events(_turn(1, _header("initial")))
    assert [f.rule for f in check_fork_child(parent, parent, 3)] == ["LOG-15"]


def test_LEG_8_placeholder_prefix_is_a_note_not_a_finding() -> None:
    header = _header("initial", prefix=["{{messagePrefix}}"])
    # canonical key order (HDR-2): tools before messagePrefix
    header["data"]["header"] = {"config": header["data"]["header"]["config"], "system": "S", "tools": "{{tools}}", "messagePrefix": ["{{messagePrefix}}"]}
    audit = audit_events(_events(_turn(1, header)), Dialect.A55)
    assert audit.findings == ()
    assert any("tools (first at seq 3)" in n and "messagePrefix (first at seq 3)" in n for n in audit.notes)


# --------------------------------------------------------------------------- §17 quirks (notes, never findings)


def _prompt_submit_failure(turn: int) -> list[dict[str, Any]]:
    """Q-4: a prompt-submit failure ends the turn {kind:"error", step: 0} with no step."""
    return [
        {"type": "turn/start", "data": {"turn": turn, "trigger": {"kind": "message", "source": USER}}},
        {"type": "turn/end", "data": {"turn": turn, "reason": {"kind": "error", "step": 0, "message": "submit failed"}}},
    ]


def test_Q_4_error_naming_a_step_that_never_started_is_a_quirk_not_a_finding() -> None:
    events = _events(_valid_log() + _prompt_submit_failure(4))
    audit = audit_events(events, Dialect.A55)
    assert audit.findings == ()
    assert [(q.rule, q.seq) for q in audit.quirks] == [("Q-4", len(events) - 1)]
    assert quirk_observations(events) == list(audit.quirks)


def test_Q_4_error_of_a_started_step_is_no_quirk() -> None:
    rows = _turn(1, _header("initial"))
    rows[-1] = {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "error", "step": 1, "message": "boom"}}}
    assert quirk_observations(_events(rows)) == []


def test_Q_17_time_going_back_is_a_quirk_for_live_events_only() -> None:
    events = _events(_valid_log())
    # Every built event has time 0; the first three get times 5, 6, 7, so seq 3 goes back to 0.
    live = [with_seq(e, e.seq, time=5 + e.seq if e.seq < 3 else 0) for e in events]
    assert [(q.rule, q.seq) for q in quirk_observations(live)] == [("Q-17", 3)]
    # In a seed (seq < first_live_seq) the clock is the source session's: not reported.
    assert quirk_observations(live, first_live_seq=4) == []
    assert audit_events(live, Dialect.A55).findings == ()


# --------------------------------------------------------------------------- issue 5: HDR-1, DIA-7, DIA-10, LEG-7


def _d08_attempts(*, finish: str, interrupted: bool = False, cite_failed: bool = False) -> list[Event]:
    """A D08 step whose first attempt ends with a ``finish`` of kind ``finish``,
    then an assistant/message (``interrupted`` or not) citing that attempt (or
    only a second attempt's chunk)."""
    source = {"kind": "model", "provider": "p", "model": "m"}
    message: dict[str, Any] = {"turn": 1, "step": 1, "message": {"id": "m1", "role": "assistant", "content": [], "source": source}}
    if interrupted:
        message["interrupted"] = True
    rows: list[dict[str, Any]] = [
        {"type": "step/start", "data": {"turn": 1, "step": 1}},
        {"type": "assistant/chunk", "data": {"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {"kind": finish}}}},
    ]
    if not cite_failed:
        rows.append({"type": "assistant/chunk", "data": {"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {"kind": "stop"}}}})
    rows.append({"type": "assistant/message", "data": message, "sourceEventSeqs": ["CHUNK"], "surfaceOp": "append"})
    return _events(rows)


def test_DIA_7_message_after_a_failed_attempt() -> None:
    assert _rules(check_retry_attempts(_d08_attempts(finish="error", cite_failed=True))) == {"DIA-7"}
    # The retry's own message (citing only the retry's chunk) is fine.
    assert check_retry_attempts(_d08_attempts(finish="error")) == []
    # A successful attempt's message is what the step writes.
    assert check_retry_attempts(_d08_attempts(finish="stop", cite_failed=True)) == []


def test_DIA_7_leaves_interrupted_messages_to_DIA_15() -> None:
    assert check_retry_attempts(_d08_attempts(finish="error", interrupted=True, cite_failed=True)) == []


def test_DIA_10_migrated_a55_log_has_the_identity_shapes() -> None:
    """DIA-13 gives every legacy message its identity, so an A55 log read in
    D08 mode passes DIA-10; the unmigrated A55 shapes do not."""
    events = _events(_valid_log())
    assert check_d08_message_shapes(migrate_legacy(events, "s")) == []
    assert _rules(check_d08_message_shapes(events)) == {"DIA-10"}


def test_HDR_1_header_field_types_unless_placeholder() -> None:
    def header_event(**fields: Any) -> Event:
        header = {"config": {"provider": "p", "model": "m"}, **fields}
        return _events([{"type": "request/header", "data": {"header": header, "reason": "initial"}}])[0]

    assert check_header_types(header_event(system="S", tools=[], messagePrefix=PREFIX), Dialect.A55) == []
    assert check_header_types(header_event(system="{{system}}", tools="{{tools}}", messagePrefix=["{{messagePrefix}}"]), Dialect.A55) == []
    assert _rules(check_header_types(header_event(system=5), Dialect.A55)) == {"HDR-1"}
    assert _rules(check_header_types(header_event(tools="read"), Dialect.A55)) == {"HDR-1"}
    assert _rules(check_header_types(header_event(messagePrefix="opener"), Dialect.A55)) == {"HDR-1"}
    # D08 drops a logged messagePrefix (DIA-8): not typed there.
    assert check_header_types(header_event(messagePrefix="opener"), Dialect.D08) == []
    assert _rules(check_header_types(header_event(adapterDefaults=True), Dialect.D08)) == {"DIA-8"}


def test_LEG_7_pre_a55_designs_make_the_audit_outside_the_model() -> None:
    events = _events(_valid_log())
    assert pre_a55_designs(events) == [] and audit_events(events, Dialect.A55).outside == ()
    advice = _events(_valid_log()[:3] + [{"type": "agent/request-advice", "data": {"before": [], "after": []}}] + _valid_log()[3:])
    audit = audit_events(advice, Dialect.A55)
    assert audit.findings == () and len(audit.outside) == 1 and "agent/request-advice at seq 3" in audit.outside[0]
