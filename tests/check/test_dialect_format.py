"""Rules of the later dialect (DIA), the legacy reader (LEG) and the file format
(FMT) that are decidable on single events or small hand-made logs.

Expected values come from the rule text (and the rule book's own examples), not
from the model's output."""

from __future__ import annotations

from typing import Any

from sessionspec.model.codec import parse_event_line, serialize_event
from sessionspec.model.derive import derive, project
from sessionspec.model.jsonval import freeze, get, js_stringify
from sessionspec.model.log import D08_SURFACE_TYPES, Dialect, Event, make_event
from sessionspec.model.migrate import detect_dialect, dialect_evidence, migrate_legacy
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import fold_surface

USER_D08 = {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}, "role": "user", "id": "u1"}


_ENVELOPE = {"surfaceOp": "surface_op", "sourceEventSeqs": "source_event_seqs"}


def _event(seq: int, type_name: str, data: Any, **kw: Any) -> Event:
    """An event from plain JSON, the optional envelope keys spelt as on the wire."""
    return make_event(type_name, seq=seq, time=0, data=freeze(data), **{_ENVELOPE[k]: freeze(v) for k, v in kw.items()})


def _tool_result_d08(seq: int, text: str, *, call_id: str = "c1", msg_id: str = "r1") -> dict[str, Any]:
    block = {"type": "tool-result", "toolCallId": call_id, "content": [{"type": "text", "text": text}], "isError": False}
    return {"turn": 1, "step": 1,
            "message": {"id": msg_id, "role": "user", "content": [block], "source": {"kind": "tool", "callId": call_id}}}


# --------------------------------------------------------------------------- FMT-5


FMT_5_ROWS = (
    '{"type":"reasoning-chunks","seq0":6,"time0":1785014475457,"data":{"turn":1,"step":1,"index":0,'
    '"dt":[139,42],"texts":["The"," user"," wants"]}}',
    '{"type":"tool-call-chunks","seq0":53,"time0":1785014476183,"data":{"turn":1,"step":1,"index":1,'
    '"dt":[41,1],"id":"call_00_x","name":"run_code","args":["","{","\\""]}}',
)


def test_FMT_5_rule_book_rows_expand_to_chunk_events_before_validation() -> None:
    """FMT-5's two example rows: one chunk event per payload entry, seqs from
    seq0, times from time0 plus the running dt (CHK-6)."""
    reasoning = parse_event_line(FMT_5_ROWS[0])
    assert not isinstance(reasoning, Rejected)
    assert [e.seq for e in reasoning] == [6, 7, 8]
    assert [e.time for e in reasoning] == [1785014475457, 1785014475457 + 139, 1785014475457 + 139 + 42]
    assert all(e.type == "assistant/chunk" for e in reasoning)
    assert [js_stringify(e.data) for e in reasoning][1] == (
        '{"turn":1,"step":1,"chunk":{"type":"reasoning-delta","index":0,"text":" user"}}')
    calls = parse_event_line(FMT_5_ROWS[1])
    assert not isinstance(calls, Rejected)
    assert [e.seq for e in calls] == [53, 54, 55]
    deltas = [get(get(e.data, "chunk"), "argumentsDelta") for e in calls]
    assert deltas == ["", "{", '"']
    assert {get(get(e.data, "chunk"), "id") for e in calls} == {"call_00_x"}


def test_FMT_5_a_row_missing_a_field_is_rejected_not_expanded() -> None:
    broken = FMT_5_ROWS[0].replace('"dt":[139,42],', "")
    result = parse_event_line(broken)
    assert isinstance(result, Rejected) and result.rule == "CHK-5"


# --------------------------------------------------------------------------- DIA-10 / DIA-11


def test_DIA_10_d08_derivation_uses_the_message_objects() -> None:
    """DIA-10: user -> data; assistant -> data.message unless empty; tool result -> data.message."""
    user = _event(0, "user/message", USER_D08, surfaceOp="append")
    assert js_stringify(project(user, Dialect.D08)) == js_stringify(freeze(USER_D08))  # type: ignore[arg-type]
    message = {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "yo"}],
               "source": {"kind": "model", "provider": "p", "model": "m"}}
    assistant = _event(1, "assistant/message", {"turn": 1, "step": 1, "message": message}, surfaceOp="append")
    assert js_stringify(project(assistant, Dialect.D08)) == js_stringify(freeze(message))  # type: ignore[arg-type]
    empty = _event(2, "assistant/message", {"turn": 1, "step": 1, "message": {**message, "content": []}},
                   surfaceOp="append")
    assert project(empty, Dialect.D08) is None
    result = _event(3, "tool/result", _tool_result_d08(3, "out"), surfaceOp="append")
    assert js_stringify(project(result, Dialect.D08)) == js_stringify(freeze(_tool_result_d08(3, "out")["message"]))  # type: ignore[arg-type]


def test_DIA_11_d08_surface_types_exclude_steering() -> None:
    assert frozenset({"user/message", "assistant/message", "tool/result"}) == D08_SURFACE_TYPES


def _d08_log_with_replace(new: dict[str, Any]) -> list[Event]:
    return [
        _event(0, "user/message", USER_D08, surfaceOp="append"),
        _event(1, "tool/result", _tool_result_d08(1, "long output"), surfaceOp="append"),
        _event(2, "tool/result", new, sourceEventSeqs=[1], surfaceOp={"op": "replace", "start": 1, "end": 1}),
    ]


def test_DIA_11_tool_result_replace_may_change_the_inner_content() -> None:
    folded = fold_surface(_d08_log_with_replace(_tool_result_d08(2, "short")), Dialect.D08)
    assert not isinstance(folded, Rejected)
    derived = derive(_d08_log_with_replace(_tool_result_d08(2, "short")), Dialect.D08)
    assert not isinstance(derived, Rejected) and "short" in js_stringify(derived[-1])


def test_DIA_11_tool_result_replace_may_not_change_the_call_id() -> None:
    """Only ``message.content[0].content`` may change: a different callId is rejected."""
    changed = _tool_result_d08(2, "short", call_id="other")
    changed["message"]["source"]["callId"] = "c1"  # only the block's toolCallId differs
    folded = fold_surface(_d08_log_with_replace(changed), Dialect.D08)
    assert isinstance(folded, Rejected)


def test_DIA_11_tool_result_replace_may_not_change_the_message_id() -> None:
    folded = fold_surface(_d08_log_with_replace(_tool_result_d08(2, "short", msg_id="r2")), Dialect.D08)
    assert isinstance(folded, Rejected)


# --------------------------------------------------------------------------- DIA-21 / LEG-9 / FMT-10


def test_DIA_21_origin_on_the_session_header_is_accepted_and_marks_d08() -> None:
    header = freeze({"type": "session", "version": 0, "id": "s", "createdAt": 0, "cwd": "/", "origin": "subagent"})
    assert isinstance(header, dict)
    evidence = dialect_evidence((), header)  # type: ignore[arg-type]
    assert evidence.d08_seq == -1 and evidence.a55_seq is None


def test_LEG_9_a55_shapes_are_native_in_a55_and_legacy_in_d08() -> None:
    """The A55 prompt shape {content, source} is native A55 (no migration, it
    derives as is); a D08 reader migrates it to {content, source, role, id}."""
    prompt = {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}
    log = [_event(0, "user/message", prompt, surfaceOp="append")]
    assert detect_dialect(log) is not Dialect.D08
    a55 = derive(log, Dialect.A55)
    assert not isinstance(a55, Rejected) and js_stringify(a55[0]) == (
        '{"role":"user","content":[{"type":"text","text":"hi"}]}')
    migrated = migrate_legacy(log, "sess")
    data = migrated[0].data
    assert js_stringify(data) == (
        '{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"role":"user","id":"legacy-message:sess:0"}')


def test_LEG_9_d08_reader_turns_steering_into_a_user_message() -> None:
    steering = _event(0, "steering/message",
                      {"turn": 1, "content": [{"type": "text", "text": "go"}], "source": {"kind": "user"}},
                      surfaceOp="append")
    migrated = migrate_legacy([steering], "s")
    assert migrated[0].type == "user/message"


# --------------------------------------------------------------------------- FMT-4

FMT_4_EXAMPLE = (
    '{"type":"compact/start","seq":19,"time":0,"data":{"turn":1}}',
    '{"type":"compact/summary","seq":20,"time":0,"data":{"summary":[{"type":"text","text":"S"}],"shadowedRange":{"start":4,"end":4},"shadowedSeqs":[4],"shadowedTokenCount":266,"provider":"p","model":"m","maxTokens":8192}}',
    '{"type":"user/message","seq":21,"time":0,"data":{"content":[{"type":"text","text":"<PREAMBLE>\\n\\n<compacted-summary>"},{"type":"text","text":"S"},{"type":"text","text":"</compacted-summary>"}],"source":{"kind":"plugin","plugin":"compact"}},"sourceEventSeqs":[19,20,4],"surfaceOp":{"op":"replace","start":4,"end":4}}',
    '{"type":"compact/end","seq":22,"time":0,"data":{"turn":1}}',
)


def _skeleton(value: Any) -> Any:
    """The shape of a JSON value: keys in order, strings kept only for ``type``,
    ``kind``, ``plugin`` and ``op`` (the words FMT-4 fixes), numbers as ``#``."""
    if isinstance(value, dict):
        return [(k, v if k in ("type", "kind", "plugin", "op") and isinstance(v, str) else _skeleton(v))
                for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [_skeleton(v) for v in value]
    return "#" if isinstance(value, int) else type(value).__name__


def test_FMT_4_a55_compaction_lines_have_the_rule_books_shape() -> None:
    """The model's A55 region transaction serializes exactly like FMT-4's
    example: same event types, key order at every level, source and surfaceOp
    words (one shadowed node, a summariser that reports maxTokens)."""
    import json

    from sessionspec.model.compaction import compact_region
    from tests.support import Log, summarizer_of

    log = Log()
    log.add("turn/start", {"turn": 1, "trigger": {"kind": "message"}})
    log.user("a long question " * 100)
    log.header()
    log.user("the retained tail")
    nodes = fold_surface(log.events)
    assert not isinstance(nodes, Rejected)
    first = nodes.state.nodes[0]
    outcome = compact_region(log.events, first, first, summarizer_of("S"))  # type: ignore[arg-type]
    assert not isinstance(outcome, Rejected) and outcome.error is None
    produced = [_skeleton(json.loads(serialize_event(e))) for e in outcome.events]
    expected = [_skeleton(json.loads(line)) for line in FMT_4_EXAMPLE]
    assert produced == expected


# --------------------------------------------------------------------------- LEG-7


def _simulated_logs() -> list[tuple[Event, ...]]:
    from sessionspec.simulate import simulate

    return [simulate(seed, 12) for seed in range(4)]


def test_LEG_7_pre_a55_designs_are_never_produced() -> None:
    """The loop model writes none of the retired designs: no per-step
    ``agent/request-advice``, no ``request/header-delta``, no
    ``messageSuffix`` and no ``fallback`` reason in any simulated log."""
    for log in _simulated_logs():
        assert log
        types = {e.type for e in log}
        assert not types & {"agent/request-advice", "request/header-delta"}
        for e in log:
            if e.type == "request/header":
                assert get(e.data, "reason") in ("initial", "resume", "change")
                assert "messageSuffix" not in js_stringify(get(e.data, "header"))
