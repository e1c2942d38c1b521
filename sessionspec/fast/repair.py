"""LOG-14's scan and the watch of ``model/repair.py`` (CloserWatch, watch_event, scan_event), for the checker's one
pass: the same findings, computed by a module the compiled wheel compiles (issue 44).

Interpreted, the model's functions and these cost the same; compiled, the model's stay interpreted, and a call
per scanned event from compiled code into them costs the compiled check several per cent.  So the fold runs
these; the closers themselves, at each ``turn/end {interrupted}`` (rare), are judged by the model's own
:func:`sessionspec.model.repair.judge_closer_run` over the model's scan states.
``tests/fast/test_fast_repair.py`` holds them equal to the definitions, finding for finding, on the logs the loop
simulator writes cut and closed by the model's repair, on every change of the closers the model refuses, and on
a D08 crash.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import final

from sessionspec.fast.constants import ABSENT, D08
from sessionspec.fast.jsonget import get
from sessionspec.fast.provenance import call_key
from sessionspec.model.jsonval import Absent, Json, JsonObject
from sessionspec.model.log import Dialect, Event
from sessionspec.model.provenance import CallKey
from sessionspec.model.rejected import Rejected
from sessionspec.model.repair import SYNTHETIC_CODES, PendingCall, RepairScanState, judge_closer_run, repair_shapes


def _val(v: Json | Absent) -> Json:
    return None if v is ABSENT else v


@final
class CloserWatch:
    """:class:`sessionspec.model.repair.CloserWatch` with its :class:`~sessionspec.model.repair.RepairScanState`
    unpacked, as a native class."""

    __slots__ = ("dialect", "d08", "turn", "step", "open_turn", "open_step", "pending", "run", "befores")

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.d08 = dialect is D08
        self.turn: Json = None
        self.step: Json = None
        self.open_turn = False
        self.open_step = False
        self.pending: dict[CallKey, PendingCall] = {}
        self.run: list[Event] = []
        self.befores: list[tuple[RepairScanState, int | None]] = []

    def state(self) -> RepairScanState:
        """The model's scan state of this moment (a copy)."""
        return RepairScanState(self.turn, self.step, self.open_turn, self.open_step, dict(self.pending))


def watch_event(watch: CloserWatch, event: Event, previous: Event | None) -> Sequence[Rejected]:
    """:func:`sessionspec.model.repair.watch_event`."""
    found: Sequence[Rejected] = ()
    run = watch.run
    if run and run[-1] is not previous:
        run = watch.run = []
        watch.befores = []
    kind = event.type
    data = event.data
    closing = kind == "turn/end" and get(get(data, "reason"), "kind") == "interrupted"
    if closing or kind == "step/end" or (kind == "tool/result" and get(get(data, "error"), "code") in SYNTHETIC_CODES):
        watch.befores.append((watch.state(), None if previous is None else previous.time))
        run.append(event)
        if closing:
            found = judge_closer_run(run, watch.befores, repair_shapes(watch.dialect))
            watch.run, watch.befores = [], []
    elif run:
        watch.run, watch.befores = [], []
    _scan(watch, event, kind, data)
    return found


def _scan(watch: CloserWatch, event: Event, kind: str, data: Json) -> None:
    """:func:`sessionspec.model.repair.scan_event` (DIA-10: D08's blocks and call ids under ``data.message``)."""
    if kind == "turn/start":
        watch.turn, watch.open_turn = _val(get(data, "turn")), True
        watch.step, watch.open_step = None, False
        watch.pending.clear()
    elif kind == "turn/end":
        watch.turn, watch.step, watch.open_turn, watch.open_step = None, None, False, False
        watch.pending.clear()
    elif kind == "step/start":
        watch.step, watch.open_step = _val(get(data, "step")), True
    elif kind == "step/end":
        watch.step, watch.open_step = None, False
        watch.pending.clear()
    elif kind == "assistant/message":
        content = get(get(data, "message"), "content") if watch.d08 else get(data, "content")
        if isinstance(content, tuple):
            for block in content:
                if isinstance(block, JsonObject) and get(block, "type") == "tool-call":
                    call_id = _val(get(block, "id"))
                    watch.pending[call_key(call_id)] = PendingCall(call_id, _val(get(data, "step")))
    elif kind == "tool/call":
        key = call_key(_val(get(data, "callId")))
        entry = watch.pending.get(key)
        if entry is not None:
            watch.pending[key] = PendingCall(entry.call_id, entry.step, event.seq)
    elif kind == "tool/result":
        result_id = get(get(get(data, "message"), "source"), "callId") if watch.d08 else get(data, "callId")
        watch.pending.pop(call_key(_val(result_id)), None)
