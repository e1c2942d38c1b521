"""Builders shared by several test modules (one place: a test module never imports another).

``Log`` writes small A55 logs event by event (seq = index); the summarisers stand in for the model
call of a compaction (CMP-17) with a fixed summary.  The row helpers below them serve the checker's
corruption tests: a corruption is one edit of a real or ground-truth log that the checker finds
valid; :func:`rules_after` checks the edited rows and returns the rules named.  The unedited log is
asserted valid first, so no test passes vacuously.
"""

from __future__ import annotations

import copy
import io
import json
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from hypothesis import strategies as st

from sessionspec.check.checker import FileReport, Verdict, check_log
from sessionspec.check.logfile import LineReader, read_stream
from sessionspec.generate import generate_events, write_log
from sessionspec.model.codec import parse_event_line
from sessionspec.model.compaction import RegionOutcome, SummarizerOutput, SummaryCall, Trigger, compact_if_needed, compact_region
from sessionspec.model.jsonval import ABSENT, JsonObject, freeze, get, thaw
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.loop import (
    AgentConfig,
    Hooks,
    Prompt,
    Reply,
    ReplyKind,
    ToolCallSpec,
    TurnScript,
    new_instance,
    run_turn,
    text_content,
)
from sessionspec.model.migrate import migrate_legacy
from sessionspec.model.nesting import Nesting, companion_veto, nesting_shapes
from sessionspec.model.prune import PruneConfig
from sessionspec.model.rejected import Rejected
from sessionspec.model.repair import SCANNED_TYPES, CloserWatch, repair_closers, repair_shapes, watch_event
from sessionspec.model.surface import SurfaceState, fold_surface
from sessionspec.simulate import ECHO_TOOL, PERSONA

# The bundled data: real logs (tests/data/real, from ../shared/corpus) and the real harness's ground truth.
DATA = Path(__file__).parent / "data"
REAL = DATA / "real"
GROUNDTRUTH = DATA / "groundtruth"


@dataclass
class Log:
    """A tiny A55 log builder (seq = index)."""

    events: list[Event] = field(default_factory=list)

    def add(self, type_name: str, data: object, **meta: object) -> int:
        seq = len(self.events)
        self.events.append(
            make_event(type_name, seq=seq, time=0, data=freeze(data),
                       source_event_seqs=freeze(meta["prov"]) if "prov" in meta else ABSENT,
                       surface_op=freeze(meta["op"]) if "op" in meta else ABSENT)
        )
        return seq

    def header(self, system: str = "sys", prefix: list[object] | None = None) -> int:
        h: dict[str, object] = {"config": {"provider": "p", "model": "m"}, "system": system}
        if prefix:
            h["messagePrefix"] = prefix
        return self.add("request/header", {"reason": "initial", "header": h})

    def user(self, text: str) -> int:
        return self.add("user/message", {"content": [{"type": "text", "text": text}], "source": {"kind": "user"}}, op="append")

    def assistant(self, turn: int, step: int, text: str = "", calls: tuple[str, ...] = ()) -> int:
        content: list[object] = [{"type": "text", "text": text}] if text else []
        content += [{"type": "tool-call", "id": c, "name": "t", "arguments": "{}"} for c in calls]
        return self.add("assistant/message", {"turn": turn, "step": step, "content": content,
                                              "provenance": {"provider": "p", "model": "m"}}, op="append")

    def result(self, turn: int, step: int, call: str, text: str) -> int:
        return self.add("tool/result", {"turn": turn, "step": step, "callId": call,
                                        "content": [{"type": "text", "text": text}], "isError": False},
                        op="append", prov=[len(self.events) - 1])

    def tool_step(self, turn: int, step: int, text: str) -> None:
        self.add("step/start", {"turn": turn, "step": step})
        self.assistant(turn, step, calls=(f"c{step}",))
        self.add("tool/call", {"turn": turn, "step": step, "callId": f"c{step}", "name": "t", "arguments": "{}"})
        self.result(turn, step, f"c{step}", text)
        self.add("step/end", {"turn": turn, "step": step})


def timed_event(type_name: str, seq: int, data: object, **extra: object) -> Event:
    """An event at time ``100 + seq`` (a repair closer copies the last event's time, LOG-14)."""
    return make_event(type_name, seq=seq, time=100 + seq, data=freeze(data), **extra)  # type: ignore[arg-type]


def d08_log() -> Log:
    """A tiny D08 log: two identity-shaped user messages and a header."""
    log = Log()
    log.add("user/message", {"content": [{"type": "text", "text": "q" * 400}], "source": {"kind": "user"}, "role": "user", "id": "u1"}, op="append")
    log.add("user/message", {"content": [{"type": "text", "text": "r"}], "source": {"kind": "user"}, "role": "user", "id": "u2"}, op="append")
    log.header()
    return log


def summarizer_of(text: str) -> object:
    def summarize(call: SummaryCall) -> SummarizerOutput:
        return SummarizerOutput(summary=(freeze({"type": "text", "text": text}),), provider=call.provider,
                                model=call.model, max_tokens=call.max_tokens)
    return summarize


def short(call: SummaryCall) -> SummarizerOutput:
    return SummarizerOutput(summary=(freeze({"type": "text", "text": "S"}),), provider=call.provider, model=call.model)


def busy_log(steps: int = 4, size: int = 400) -> Log:
    log = Log()
    log.add("turn/start", {"turn": 1, "trigger": {"kind": "message"}})
    log.user("hello " * 50)
    log.header()
    for step in range(1, steps + 1):
        log.tool_step(1, step, "x" * size)
    return log


# A prune config under which the 400-character tool results of ``busy_log`` are pruned (PRN-1).
BUSY_LOG_PRUNE = PruneConfig(threshold_chars=100, head_chars=10, tail_chars=10)


def compacted_head(log: Log, last: int, summarizer: Callable[[SummaryCall], SummarizerOutput] = short) -> tuple[SurfaceState, RegionOutcome]:
    """The surface of ``log`` and the outcome of compacting its nodes ``0..last`` (CMP-1)."""
    fold = fold_surface(log.events)
    assert not isinstance(fold, Rejected)
    outcome = compact_region(log.events, fold.state.nodes[0], fold.state.nodes[last], summarizer)
    assert not isinstance(outcome, Rejected)
    return fold.state, outcome


def d08_tool_result_log() -> Log:
    """A D08 turn: an assistant message calling tool ``c`` and its 200-character result (DIA-10, DIA-18)."""
    log = Log()
    log.add("turn/start", {"turn": 1})
    log.add("assistant/message", {"turn": 1, "step": 1, "message": {"id": "a", "role": "assistant", "content": [
        {"type": "tool-call", "id": "c", "name": "t", "arguments": "{}"}], "source": {"kind": "model"}}}, op="append")
    log.add("tool/result", {"turn": 1, "step": 1, "message": {"id": "r", "role": "user", "content": [
        {"type": "tool-result", "toolCallId": "c", "content": [{"type": "text", "text": "y" * 200}], "isError": False}],
        "source": {"kind": "tool", "callId": "c"}}}, op="append", prov=[1])
    return log


def events_of_lines(*lines: str) -> list[Event]:
    """The events of log lines (a packed row gives several), each line accepted."""
    events: list[Event] = []
    for line in lines:
        parsed = parse_event_line(line)
        assert not isinstance(parsed, Rejected)
        events.extend(parsed)
    return events


# ---------------------------------------------------------------- rows of real logs, for the checker

Row = dict[str, Any]

A55_SNAPSHOTS = REAL / "a55f148516" / "examples" / "acp-agent" / "tests" / "snapshots"
D08_SNAPSHOTS = REAL / "611615650f" / "examples" / "acp-agent" / "tests" / "snapshots"
D08_HEADLESS = REAL / "611615650f" / "examples" / "headless-agent" / "tests" / "snapshots"


def load(path: Path) -> list[Row]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def gt(scenario: str) -> list[Row]:
    return load(GROUNDTRUTH / scenario / "session.jsonl")


def text(rows: list[Row]) -> bytes:
    return "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in rows).encode()


def check(rows: list[Row]) -> FileReport:
    return check_log(read_stream(io.BytesIO(text(rows)), "corrupt.jsonl"))


def rules(report: FileReport) -> set[str]:
    return {f.rule for f in report.findings}


def index(rows: list[Row], type_name: str, nth: int = 0, **data: Any) -> int:
    hits = [i for i, r in enumerate(rows) if r.get("type") == type_name and all(r.get("data", {}).get(k) == v for k, v in data.items())]
    return hits[nth]


def rules_after(rows: list[Row], edit: Callable[[list[Row]], list[Row] | None]) -> set[str]:
    """The rules named once ``edit`` (in place, or returning new rows) is applied
    to a copy of ``rows``; the unedited rows must be valid."""
    base = check(rows)
    assert base.verdict is Verdict.VALID, [f.text("base") for f in base.findings]
    edited = copy.deepcopy(rows)
    out = edit(edited)
    report = check(out if out is not None else edited)
    return rules(report)


def renumber_insert(rows: list[Row], at: int, new: Row) -> list[Row]:
    """Insert ``new`` at position ``at`` (its seq the position's), shifting the
    later seqs and every seq reference to them by one."""
    row = rows[at] if at < len(rows) else None
    first: int = (row["seq"] if "seq" in row else row["seq0"]) if row is not None else rows[-1]["seq"] + 1

    def shift(s: Any) -> Any:
        return s + 1 if isinstance(s, int) and s >= first else s

    out: list[Row] = []
    for r in rows:
        r = copy.deepcopy(r)
        if "seq" in r:
            r["seq"] = shift(r["seq"])
        if "seq0" in r:  # a packed chunk row (CHK-1)
            r["seq0"] = shift(r["seq0"])
        _map_seq_references(r, shift)
        out.append(r)
    new = dict(new, seq=first)
    header = 1 if out and out[0].get("type") == "session" else 0
    position = at if at >= header else header
    out.insert(position, new)
    return out


def permute(rows: list[Row], order: list[int]) -> list[Row]:
    """The rows in ``order`` (indices into ``rows``), seqs renumbered by position
    and every seq reference (provenance, replace ranges, compaction summaries)
    following its event."""
    header = [r for r in rows if r.get("type") == "session"]
    events = [r for r in rows if r.get("type") != "session"]
    assert all("seq" in r for r in events), "permute works on unpacked logs only"
    moved = [copy.deepcopy(events[i]) for i in order]
    new_seq = {events[i]["seq"]: position for position, i in enumerate(order)}

    def m(s: Any) -> Any:
        return new_seq.get(s, s) if isinstance(s, int) else s

    for position, r in enumerate(moved):
        r["seq"] = position
        _map_seq_references(r, m)
    return header + moved


def _map_seq_references(r: Row, f: Callable[[Any], Any]) -> None:
    """Apply ``f`` to every seq a row refers to (provenance, a replace range, a compaction summary's
    shadowed seqs and range), in place."""
    if "sourceEventSeqs" in r:
        r["sourceEventSeqs"] = [f(s) for s in r["sourceEventSeqs"]]
    op = r.get("surfaceOp")
    if isinstance(op, dict):
        op["start"], op["end"] = f(op["start"]), f(op["end"])
    if r.get("type") in ("compact/summary", "compaction/summary"):
        d = r["data"]
        d["shadowedSeqs"] = [f(s) for s in d["shadowedSeqs"]]
        d["shadowedRange"] = {"start": f(d["shadowedRange"]["start"]), "end": f(d["shadowedRange"]["end"])}


def events_to_rows(events: Any) -> list[Row]:
    from sessionspec.model.codec import serialize_event

    return [json.loads(serialize_event(e)) for e in events]


def rows_to_events(rows: list[Row]) -> Any:
    log = read_stream(io.BytesIO(text(rows)), "rows.jsonl")
    return log.events


def generated_log(events: int, seed: int) -> bytes:
    """The bytes of ``sessionspec generate --events EVENTS --seed SEED``."""
    out = io.StringIO()
    write_log(out, events, seed)
    return out.getvalue().encode()


def read_events(raw: bytes) -> list[Event]:
    """The events of a log's bytes, as the checker reads them (packed rows expanded)."""
    return [event for event, _ in LineReader("log.jsonl").events(io.BytesIO(raw))]


def lines_dropped(raw: bytes, rng: random.Random) -> bytes:
    """A few lines dropped, seqs left as they were: the surface is rejected where a seq breaks (the
    audit then finds nothing), and the points before it are judged."""
    lines = raw.splitlines(keepends=True)
    for _ in range(rng.randint(1, 3)):
        if len(lines) > 2:
            del lines[rng.randrange(1, len(lines))]
    return b"".join(lines)


def headers_damaged(raw: bytes, rng: random.Random) -> bytes:
    """Headers made useless, seqs kept: the first (or another) no longer a header (its requests have
    none in force, FMT-9), or a header's provider or model emptied (HDR-8)."""
    records = [json.loads(line) for line in raw.splitlines() if line.strip()]
    headers = [r for r in records if r.get("type") == "request/header"]
    for _ in range(rng.randint(1, 3)):
        if not headers:
            break
        header = headers[0] if rng.random() < 0.4 else rng.choice(headers)
        if rng.random() < 0.5:
            header["type"] = "plugin/header-gone"
        else:
            header["data"]["header"]["config"][rng.choice(["provider", "model"])] = ""
    return "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in records).encode()


@st.composite
def request_point_logs(draw: st.DrawFn) -> tuple[list[Event], Dialect, int]:
    """A generated log, maybe with lines dropped and headers damaged, read in a drawn dialect from a drawn first
    live seq: what the request points are judged on (the checker's fold, the model, the compiled twin)."""
    raw = generated_log(draw(st.integers(30, 500)), draw(st.integers(0, 2**16)))
    mutation = draw(st.integers(0, 2**32))
    if draw(st.booleans()):
        raw = lines_dropped(raw, random.Random(mutation))
    if draw(st.booleans()):
        raw = headers_damaged(raw, random.Random(mutation))
    return read_events(raw), draw(st.sampled_from(Dialect)), draw(st.sampled_from([0, 0, 7, 40]))


# check --deployment (issue 44): turns of tool dumps written by the loop model, and the deployment file stating
# the configuration of spec.machine_scripts.compaction_plugin(700, prune=True), under which they compact.
DUMP_AGENT = AgentConfig(system=PERSONA, tools=(ECHO_TOOL,))
DUMP_DEPLOYMENT: dict[str, Any] = {
    "version": 1,
    "compaction": {"thresholdRatio": 0.5, "retainTokens": 87, "maxTokens": 128},
    "prune": {"thresholdChars": 400, "headChars": 100, "tailChars": 50},
    "models": [{"provider": "mock", "model": "mock-1", "contextWindow": 700}],
}


def dump_turn(n: int, size: int = 900) -> TurnScript:
    """A turn that calls ``echo`` once and gets ``size`` characters back, then answers."""
    call = ToolCallSpec(call_id=f"call-{n}", name="echo", arguments='{"text":"dump"}',
                        result=f"dump {n}: " + "lorem ipsum " * (size // 12))
    return TurnScript(prompt=Prompt(content=text_content(f"dump {n}")),
                      replies=(Reply(kind=ReplyKind.TOOL_CALLS, text="dumping", tool_calls=(call,)), Reply(text=f"dumped {n}")))


def dump_turns(hooks: Hooks, scripts: tuple[TurnScript, ...] | None = None) -> tuple[Event, ...]:
    """The log the loop model writes for ``scripts`` (default: four dumps, the third of 2000 characters) with ``hooks``."""
    log: tuple[Event, ...] = ()
    instance = new_instance()
    for script in scripts or (dump_turn(1), dump_turn(2), dump_turn(3, 2000), dump_turn(4)):
        out = run_turn(log, instance, DUMP_AGENT, script, hooks=hooks)
        assert not isinstance(out, Rejected), out
        log, instance = out.log, out.instance
    return log


# --------------------------------------------------------------------------- crash repair (LOG-14): logs, cuts and closers


def closers_judged(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> list[Rejected]:
    """The model's LOG-14 definitions folded over ``events``."""
    watch = CloserWatch(repair_shapes(dialect))
    found: list[Rejected] = []
    for previous, event in zip([None, *events], events, strict=False):
        if event.type in SCANNED_TYPES:
            found += watch_event(watch, event, previous)
    return found


def repair_loop_log(seed: int, events: int = 400) -> list[Event]:
    return [event for block in generate_events(events, seed, 5) for event in block]


def crash_cuts(log: list[Event]) -> list[int]:
    """Where a crash leaves calls pending: just after a message with tool calls, or after a ``tool/call``."""
    return [i + 1 for i, e in enumerate(log) if e.type == "tool/call"
            or (e.type == "assistant/message" and any(get(b, "type") == "tool-call" for b in _tool_blocks(e)))]


def _tool_blocks(message: Event) -> tuple[JsonObject, ...]:
    content = get(message.data, "content")
    return tuple(b for b in content if isinstance(b, JsonObject)) if isinstance(content, tuple) else ()


def crash_repaired(log: list[Event], cut: int) -> tuple[list[Event], int]:
    """``log[:cut]`` and the closers the model's repair writes for it, and where the closers start."""
    prefix = log[:cut]
    closers = repair_closers(prefix)
    assert closers and closers[-1].type == "turn/end"
    return prefix + list(closers), cut


def _closer_results(events: list[Event], start: int) -> list[int]:
    return [i for i in range(start, len(events)) if events[i].type == "tool/result"]


def _edited(events: list[Event], index: int, **changes: object) -> list[Event]:
    changed = list(events)
    changed[index] = replace(events[index], **changes)  # type: ignore[arg-type]
    return changed


def closer_dropped(events: list[Event], start: int) -> list[Event]:
    # Of two results or more: with none left, a step/end before the turn/end may be an ordinary one.
    return events[:start] + events[start + 1:]


def closers_swapped(events: list[Event], start: int) -> list[Event]:
    first, second = _closer_results(events, start)[:2]
    changed = list(events)
    changed[first], changed[second] = replace(events[second], seq=events[first].seq), replace(events[first], seq=events[second].seq)
    return changed


def closer_late(events: list[Event], start: int) -> list[Event]:
    return _edited(events, len(events) - 1, time=events[-1].time + 1)


def closer_other_code(events: list[Event], start: int) -> list[Event]:
    index = _closer_results(events, start)[0]
    code = get(get(events[index].data, "error"), "code")
    other = "TOOL_NOT_STARTED" if code == "TOOL_OUTCOME_UNKNOWN" else "TOOL_OUTCOME_UNKNOWN"
    data = events[index].data
    assert isinstance(data, JsonObject)
    error = freeze({"name": "ToolNotStartedError" if other == "TOOL_NOT_STARTED" else "ToolOutcomeUnknownError", "code": other})
    return _edited(events, index, data=JsonObject({**data, "error": error}))


def closer_other_text(events: list[Event], start: int) -> list[Event]:
    index = _closer_results(events, start)[0]
    data = events[index].data
    assert isinstance(data, JsonObject)
    return _edited(events, index, data=JsonObject({**data, "content": freeze([{"type": "text", "text": "it broke"}])}))


def closer_without_provenance(events: list[Event], start: int) -> list[Event]:
    index = next(i for i in _closer_results(events, start) if events[i].source_event_seqs is not ABSENT)
    return _edited(events, index, source_event_seqs=ABSENT)


def crash_cut_with(log: list[Event], results: int, started: bool) -> int:
    """A cut whose closers hold at least ``results`` synthetic results (one started, if asked)."""
    for cut in crash_cuts(log):
        closers = repair_closers(log[:cut])
        answers = [c for c in closers if c.type == "tool/result"]
        if len(answers) >= results and (not started or any(c.source_event_seqs is not ABSENT for c in answers)):
            return cut
    raise AssertionError("no such cut in the log")


def d08_crash(result_time: int = 9, code: str = "TOOL_OUTCOME_UNKNOWN") -> list[Event]:
    """A D08 turn cut after a started call, closed as the D08 repair closes it (``repair.ts`` at 611615650f: the
    result is a message, DIA-10, and every closer takes the last event's time)."""
    message = {"id": "m1", "role": "assistant", "content": [{"type": "tool-call", "id": "c1", "name": "read", "arguments": "{}"}]}
    result = {"id": "interrupted-tool-result-c1-5", "role": "user", "source": {"kind": "tool", "callId": "c1"},
              "content": [{"type": "tool-result", "toolCallId": "c1", "isError": True, "content": [{"type": "text", "text": "x"}]}]}
    name = "ToolOutcomeUnknownError" if code == "TOOL_OUTCOME_UNKNOWN" else "ToolNotStartedError"
    return [
        make_event("turn/start", seq=0, time=1, data=freeze({"turn": 1})),
        make_event("step/start", seq=1, time=2, data=freeze({"turn": 1, "step": 1})),
        make_event("assistant/message", seq=2, time=3, data=freeze({"turn": 1, "step": 1, "message": message}), surface_op="append"),
        make_event("tool/call", seq=3, time=9, data=freeze({"turn": 1, "step": 1, "callId": "c1"})),
        make_event("tool/result", seq=4, time=result_time, data=freeze({"turn": 1, "step": 1, "message": result, "error": {"name": name, "code": code}}),
                   surface_op="append", source_event_seqs=(3,)),
        make_event("step/end", seq=5, time=9, data=freeze({"turn": 1, "step": 1})),
        make_event("turn/end", seq=6, time=9, data=freeze({"turn": 1, "reason": {"kind": "interrupted"}})),
    ]


def check_or_die(task: Any) -> Any:
    """A worker's job for ``check --jobs`` that kills its own process on a file named ``die.jsonl`` (as the
    kernel's out-of-memory killer would) and checks every other file (tests/check/test_check_cli.py)."""
    import signal  # noqa: PLC0415

    from sessionspec.check.task import check_task  # noqa: PLC0415

    if str(task.path).endswith("die.jsonl"):
        os.kill(os.getpid(), signal.SIGKILL)
    return check_task(task)


# LOG-13's relations (model/nesting.py): the model's companion over a log, the D08 writer's log, and the changes of a
# loop log the relations forbid (tests/model/test_nesting.py, tests/fast/test_fast_nesting.py).


def nesting_judged(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> list[Rejected]:
    """The model's companion folded over ``events``."""
    nesting, shapes = Nesting(), nesting_shapes(dialect)
    found: list[Rejected] = []
    for event in events:
        bad = companion_veto(nesting, event, shapes)
        if bad is not None:
            found.append(bad)
    return found


def d08_manual_log(seed: int, events: int = 400) -> list[Event]:
    """A loop log as the D08 reader migrates it (DIA-13), then a manual compaction of the model's between turns (DIA-3)."""
    log = list(migrate_legacy(repair_loop_log(seed, events), "s"))
    run = compact_if_needed(log, short, dialect=Dialect.D08, trigger=Trigger.MANUAL)
    assert not isinstance(run, Rejected) and run.error is None and run.events
    return [*log, *run.events]


def _where(log: list[Event], type_name: str, after: int = 0) -> int:
    return next(i for i, e in enumerate(log) if e.type == type_name and i >= after)


def with_data(event: Event, **changes: object) -> Event:
    """``event`` with these ``data`` fields set."""
    data = thaw(event.data)
    assert isinstance(data, dict)
    data.update(changes)
    return replace(event, data=freeze(data))


def _dropped(log: list[Event], index: int) -> list[Event]:
    """The log without ``log[index]`` (the seqs still increase: the companion asks no more)."""
    return log[:index] + log[index + 1:]


def _moved_after_turn(log: list[Event], index: int) -> list[Event]:
    """``log[index]`` moved to just after its turn's ``turn/end``, the seqs renumbered in log order."""
    end = _where(log, "turn/end", index)
    moved = [*log[:index], *log[index + 1:end + 1], log[index], *log[end + 1:]]
    return [replace(event, seq=log[i].seq) for i, event in enumerate(moved)]


def _replaced(log: list[Event], index: int, event: Event) -> list[Event]:
    return [*log[:index], event, *log[index + 1:]]


def _appended_result(log: list[Event]) -> int:
    return next(i for i, e in enumerate(log) if e.type == "tool/result" and e.surface_op == "append")


def seq_repeated(log: list[Event]) -> list[Event]:
    at = _where(log, "assistant/message")
    return _replaced(log, at, replace(log[at], seq=log[at - 1].seq))


def turn_renumbered(log: list[Event]) -> list[Event]:
    at = _where(log, "turn/start", _where(log, "turn/end") + 1)
    turn = get(log[at].data, "turn")
    assert isinstance(turn, int)
    return _replaced(log, at, with_data(log[at], turn=turn + 1))


def turn_opened_twice(log: list[Event]) -> list[Event]:
    return _dropped(log, _where(log, "turn/end"))


def step_left_open(log: list[Event]) -> list[Event]:
    end = _where(log, "turn/end")
    return _dropped(log, max(i for i in range(end) if log[i].type == "step/end"))


def step_never_opened(log: list[Event]) -> list[Event]:
    return _dropped(log, _where(log, "step/start"))


def step_renumbered(log: list[Event]) -> list[Event]:
    at = _where(log, "step/start")
    return _replaced(log, at, with_data(log[at], step=2))


def message_of_another_step(log: list[Event]) -> list[Event]:
    at = _where(log, "assistant/message")
    step = get(log[at].data, "step")
    assert isinstance(step, int)
    return _replaced(log, at, with_data(log[at], step=step + 1))


def result_of_another_call(log: list[Event]) -> list[Event]:
    at = _appended_result(log)
    return _replaced(log, at, with_data(log[at], callId="no-such-call"))


def result_dropped(log: list[Event]) -> list[Event]:
    return _dropped(log, _appended_result(log))


def prune_between_turns(log: list[Event]) -> list[Event]:
    """P-PRN-3: a prune (a ``tool/result`` replace) moved out of its turn."""
    return _moved_after_turn(log, next(i for i, e in enumerate(log) if e.type == "tool/result" and isinstance(e.surface_op, JsonObject)))


def prompt_between_turns(log: list[Event]) -> list[Event]:
    return _moved_after_turn(log, _where(log, "user/message"))


def call_between_turns(log: list[Event]) -> list[Event]:
    return _moved_after_turn(log, _where(log, "tool/call"))


_LOG_13: Final = frozenset({"LOG-13"})
# Each change with the rules that refuse it.
NESTING_CHANGES: Final[tuple[tuple[Callable[[list[Event]], list[Event]], frozenset[str]], ...]] = (
    (seq_repeated, _LOG_13), (turn_renumbered, _LOG_13), (turn_opened_twice, _LOG_13), (step_left_open, _LOG_13),
    (step_never_opened, _LOG_13), (step_renumbered, _LOG_13), (message_of_another_step, _LOG_13),
    # The result answers no pending call (LOG-13), and its own call is left unanswered at step/end (LOOP-12).
    (result_of_another_call, frozenset({"LOG-13", "LOOP-12"})), (result_dropped, frozenset({"LOOP-12"})),
    (prune_between_turns, _LOG_13), (prompt_between_turns, _LOG_13), (call_between_turns, _LOG_13),
)
