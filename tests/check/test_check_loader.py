"""Issue 25: the real loader's answer in the three levels the harness has (docs/check.md).

The harness's core load (the Session constructor and the persistence load: envelope, lossless
JSON, contiguous seq, surface transitions, LOG-8's shapes) refuses some logs; its session
invariant companion (LOG-13, on in the harness's own tests and dev runs) refuses more; every other
finding is about a writer, and the loader accepts the log.  Expectations from the book: LOG-1 is a
core-load rule (LOG-8/LEG-10), LOG-13 the companion's, LOOP-11 the loop's only.
"""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from sessionspec.check.checker import FileReport, check_log
from sessionspec.check.loader_levels import loader_level
from sessionspec.check.logfile import read_stream
from sessionspec.model.rejected import FailureKind
from tests.support import Row, check, gt, index, renumber_insert

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "schemas" / "check.v4.schema.json"


def B() -> list[Row]:
    return gt("b-prefix-idioms-tool-roundtrip")


def test_loader_levels_follow_the_rule() -> None:
    assert loader_level("LOG-1", FailureKind.INVALID) == "refuses"
    assert loader_level("LOG-13", FailureKind.INVALID) == "companion-refuses"
    assert loader_level("LOOP-11", FailureKind.INVALID) == "accepts"
    assert loader_level("LOG-13", FailureKind.LIMIT) == "accepts"


def _answer(rows: list[Row]) -> tuple[str | None, str, dict[str, object]]:
    report = check(rows)
    return report.loader(), report.verdict_text(), report.to_json()


def test_a_nesting_break_is_refused_by_the_companion_only() -> None:
    """A step/end moved before the step's message: LOG-13 ("assistant/message ... name the open turn
    and step"), which only the invariant companion vetoes."""
    rows = B()
    rows[20], rows[21] = rows[21], rows[20]
    rows[20]["seq"], rows[21]["seq"] = 20, 21
    rows[21]["sourceEventSeqs"] = list(range(4, 20))
    loader, text, record = _answer(rows)
    assert loader == "companion-refuses" and text.endswith("[real loader: only its invariant companion would refuse the log]"), text
    assert {f["loader"] for f in record["findings"]} >= {"companion-refuses"}  # type: ignore[attr-defined]
    assert list(Draft202012Validator(json.loads(SCHEMA.read_text())).iter_errors(record)) == []


def test_a_seq_break_is_refused_by_the_core_load() -> None:
    rows = B()
    rows[5]["seq"] = 4
    loader, text, _ = _answer(rows)
    assert loader == "refuses" and text.endswith("[real loader: would refuse to load the log]")


def test_a_writer_finding_is_accepted_by_the_loader() -> None:
    """Two assistant/message in one step (LOOP-11): no load check forbids it."""
    loader, text, record = _answer(renumber_insert(B(), 21, copy.deepcopy(B()[20])))
    assert record["verdict"] == "invalid" and loader == "accepts" and text.endswith("[real loader: would load the log]")


# --------------------------------------------------------------------------- the persistence (file) load
# Verified against the real file loaders outside the project (docs/fidelity.md, "Loader answers (check)"):
# a log written to disk and loaded by session-persistence-jsonl's PersistenceCoordinator, then seeded.

VECTORS = Path(__file__).resolve().parents[2] / "vectors" / "check.json"
HEADER: Row = {"type": "session", "version": 0, "id": "loader-test", "createdAt": 0, "delegationDepth": 0}


def _vector_log(vector_id: str) -> list[Row]:
    vectors = json.loads(VECTORS.read_text(encoding="utf-8"))["vectors"]
    (log,) = [step["op"]["log"] for v in vectors if v["id"] == vector_id for step in v["steps"]]
    return [json.loads(line) for line in log]


def test_a_header_version_other_than_0_is_refused_by_the_file_load() -> None:
    """LOG-17: "A persistence load MUST reject a session header `version` other than `0`"
    (`coordinator.ts` `assertVersion`, line 391 at a55f148516, run by `loadCore` before any event)."""
    loader, text, _ = _answer([{**HEADER, "version": 1}, *B()])
    assert loader == "refuses" and text.endswith("[real loader: would refuse to load the log]"), text


def test_a_mode_set_event_is_refused_by_the_file_load() -> None:
    """LEG-3 / LOG-17: the persistence load rejects "any `mode/set`" (`coordinator.ts`
    `assertSupportedEvents`, line 135 at a55f148516), whatever else the log holds."""
    rows = B()
    rows[0]["type"] = "mode/set"
    loader, _, record = _answer([HEADER, *rows])
    assert loader == "refuses"
    assert "LEG-3" in {f["rule"] for f in record["findings"]}  # type: ignore[attr-defined]


def test_a_legacy_event_in_a_d08_turn_is_accepted_by_the_d08_file_load() -> None:
    """DIA-13 is the D08 writer's rule, not a load check: the D08 persistence load migrates a legacy
    (A55-shaped) `user/message` before seeding (`migrateLegacyMessageEvent`, `coordinator.ts` lines
    462-537 at 611615650f), so the loader accepts what the checker calls invalid."""
    report = check(_vector_log("check/writer/legacy-user-message-in-a-d08-turn"))
    assert report.verdict.value == "invalid" and "DIA-13" in {f.rule for f in report.findings}
    assert report.loader() == "accepts"


@pytest.mark.parametrize("content", [None, {}, 3, [None]])
def test_an_assistant_message_without_iterable_content_is_refused_by_the_file_load(content: object) -> None:
    """QF-13: the file load's crash repair iterates every `assistant/message`'s `content` and reads each
    block's `type` (`core/session/src/repair.ts` line 54, called by `coordinator.ts` `loadCore` line 317 at
    a55f148516) before any validation, so a content that is not iterable, or a null block, makes the load
    throw (measured with the real file load: "event.data.content is not iterable", "Cannot read
    properties of null (reading 'type')")."""
    rows = B()
    rows[index(rows, "assistant/message")]["data"]["content"] = content
    loader, _, record = _answer([HEADER, *rows])
    assert loader == "refuses" and "LOG-9" in {f["rule"] for f in record["findings"]}  # type: ignore[attr-defined]


def test_a_string_content_is_walked_without_a_throw_so_the_file_load_accepts_it() -> None:
    """QF-13's control: JS iterates a string's characters, so the repair walk does not throw and the
    seed does not check content shapes: LOG-9 for the checker, accepted by the real file load (measured)."""
    rows = B()
    rows[index(rows, "assistant/message")]["data"]["content"] = "hello"
    loader, _, record = _answer([HEADER, *rows])
    assert loader == "accepts" and "LOG-9" in {f["rule"] for f in record["findings"]}  # type: ignore[attr-defined]


def test_a_header_line_without_delegation_depth_is_refused_by_the_file_load() -> None:
    """QF-14: the JSONL header line needs a non-negative safe-integer `delegationDepth`
    (`session-persistence-jsonl/src/format.ts` `isHeaderLine`, lines 79-93 at a55f148516), else
    "corrupt session log: first line is not a session header"."""
    header = {k: v for k, v in HEADER.items() if k != "delegationDepth"}
    loader, _, record = _answer([header, *B()])
    # Valid all the same: the harness's test tooling wrote such headers (nine real fixtures); only the file
    # load refuses them, and the report says so in a note.
    assert loader == "refuses" and record["verdict"] == "valid"
    assert any("QF-14" in note for note in record["notes"])  # type: ignore[attr-defined]


def _torn_check(tail: str, strict_quirks: bool = False) -> FileReport:
    """Ground truth B cut inside its last turn (a crash prefix), with ``tail`` appended as the file's end."""
    rows = B()
    last_end = max(i for i, r in enumerate(rows) if r["type"] == "turn/end")
    body = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in [HEADER, *rows[:last_end]])
    return check_log(read_stream(io.BytesIO((body + tail).encode()), "torn.jsonl"), strict_quirks=strict_quirks)


def _torn(tail: str) -> str | None:
    return _torn_check(tail).loader()


def test_a_crash_prefix_is_accepted_by_the_file_load() -> None:
    """LOG-14: "The persistence coordinator applies it on cold load": an open last turn is closed, not refused."""
    assert _torn("") == "accepts"


@pytest.mark.parametrize("tail", ['{"type":"step/end","seq":5', '{"type":"step/end","seq":5\n'])
def test_a_torn_tail_after_the_last_turn_end_is_accepted_by_the_file_load(tail: str) -> None:
    """QF-15: the JSONL scan ignores a tail without a newline and stops at the first unparsable line or seq
    gap after the last valid `turn/end` (`session-persistence-jsonl/src/format.ts` `scanLog`, lines 226 and
    279-295 at a55f148516); the coordinator truncates it (`commitRepair`, `coordinator.ts` line 322)."""
    assert _torn(tail) == "accepts"


def test_the_same_hole_before_the_last_turn_end_is_refused_by_the_file_load() -> None:
    """QF-15's control: an unparsable line at or before the last valid ``turn/end`` is committed corruption
    ("corrupt session log: unparsable committed event at line N", ``format.ts`` scanLog): the load throws."""
    rows = B()
    last_end = max(i for i, r in enumerate(rows) if r["type"] == "turn/end")
    lines = [json.dumps(r, separators=(",", ":")) for r in [HEADER, *rows]]
    lines[last_end] = '{"type":"step/end","seq":'  # a line before the last turn/end (HEADER is line 0)
    report = check_log(read_stream(io.BytesIO(("\n".join(lines) + "\n").encode()), "hole.jsonl"))
    assert report.loader() == "refuses"


def _torn_report(tail: str, strict_quirks: bool = False) -> dict[str, object]:
    return _torn_check(tail, strict_quirks).to_json()


def test_a_torn_last_line_leaves_the_log_valid_with_a_QF_15_note() -> None:
    """FMT-1 (amended, issue 25): a last line without its newline that does not parse is what a crash
    mid-write leaves; the file load never reads it (QF-15), so it is a quirk note, not a finding, and
    ``--strict-quirks`` makes it a QF-15 finding on that line, which the file load accepts."""
    tail = '{"type":"step/end","seq":5'
    record = _torn_report(tail)
    assert record["verdict"] == "valid" and record["findings"] == []
    assert any(note.startswith("quirk QF-15") for note in record["notes"])  # type: ignore[attr-defined]
    strict = _torn_report(tail, strict_quirks=True)
    [finding] = strict["findings"]  # type: ignore[misc]
    last_end = max(i for i, r in enumerate(B()) if r["type"] == "turn/end")
    # line 1 is the header, lines 2..last_end+1 the events before the last turn/end, then the torn line
    assert (finding["rule"], finding["line"], finding["loader"]) == ("QF-15", last_end + 2, "accepts")


@pytest.mark.parametrize(("newline", "loader"), [("\n", "refuses"), ("", "accepts")])
def test_a_last_line_without_its_newline_is_never_read_by_the_file_load(newline: str, loader: str) -> None:
    """QF-15: scanLog splits the file at newlines and ignores what follows the last one, whatever it
    holds (``format.ts`` lines 226-238 at a55f148516): an event line with the right seq but a bad
    envelope is refused by the core load when its newline was written, and never read when it was not.
    The checker reads the line either way (the writer wrote it), so its finding stays."""
    rows = B()
    last_end = max(i for i, r in enumerate(rows) if r["type"] == "turn/end")
    bad = json.dumps({"type": "step/end", "seq": last_end, "time": "noon", "data": {"turn": 2, "step": 1}}, separators=(",", ":"))
    record = _torn_report(bad + newline)
    assert record["verdict"] == "invalid" and record["loader"] == loader
    assert {f["loader"] for f in record["findings"]} == {loader}  # type: ignore[attr-defined]


def test_a_torn_header_line_is_still_refused() -> None:
    """A crash while the header line was written leaves no header: the file load throws ("empty or
    header-less session log", ``format.ts`` line 240), and the checker keeps FMT-1 on line 1."""
    header = json.dumps(HEADER, separators=(",", ":"))
    report = check_log(read_stream(io.BytesIO(header[:-3].encode()), "torn.jsonl"))
    assert [(f.rule, f.line, f.loader) for f in report.findings] == [("FMT-1", 1, "refuses")]
    assert "truncated last line" in report.findings[0].reason


@pytest.mark.parametrize("strict_quirks", [False, True])
def test_a_replay_script_keeps_the_QF_15_note_of_its_torn_last_line(strict_quirks: bool) -> None:
    """A log of bare ``assistant/chunk`` events is a replay script, outside the model and not audited;
    what reading its lines showed is still reported: a torn last line is QF-15 (a note, or a finding
    with ``--strict-quirks``), as in a loop log (found by the QF-15 property on a real snapshot)."""
    chunk = {"type": "assistant/chunk", "seq": 0, "time": 1, "data": {"turn": 1, "step": 1, "chunk": {"type": "block-start", "index": 0, "blockType": "text"}}}
    lines = [json.dumps(row, separators=(",", ":")) for row in (HEADER, chunk, {**chunk, "seq": 1})]
    body = "\n".join(lines[:2]) + "\n" + lines[2][:-5]
    report = check_log(read_stream(io.BytesIO(body.encode()), "script.jsonl"), strict_quirks=strict_quirks)
    # Strict, the torn line is an invalid finding that decides the verdict; why the log is outside stays a note.
    assert report.verdict.value == ("invalid" if strict_quirks else "unknown")
    assert any("replay script" in text for text in (report.reason or "", *report.notes))
    torn = [f for f in report.findings if f.rule == "QF-15"] if strict_quirks else [n for n in report.notes if n.startswith("quirk QF-15 (1 time, first at line 3)")]
    assert len(torn) == 1, (report.findings, report.notes)
