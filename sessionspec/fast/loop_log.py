"""The step a chunk streams, :func:`sessionspec.model.loop_log.step.take_chunk`, for the checker's one pass: the
same state, computed by a module the compiled wheel compiles (issue 44).

A chunk is the log's most common event and the loop fold takes every one: compiled, a call into the interpreted
model per chunk would cost more than the reading itself.  So the fold runs this, and
``tests/fast/test_fast_loop_log.py`` holds it equal to the definition, field for field of the step, on the logs the
loop simulator writes and on chunks of every kind, both dialects.
"""

from __future__ import annotations

from typing import Final

from sessionspec.fast.constants import ABSENT
from sessionspec.fast.jsonget import get
from sessionspec.model.jsonval import JsonObject
from sessionspec.model.log import Event
from sessionspec.model.loop_log.track import LoopTrack, StepTrack

_OBJECT: Final = JsonObject


def take_chunk(track: LoopTrack, st: StepTrack, event: Event) -> None:
    """:func:`sessionspec.model.loop_log.step.take_chunk`."""
    fields = event.data
    data = fields.get("chunk", ABSENT) if type(fields) is _OBJECT else ABSENT
    kind = data.get("type", ABSENT) if type(data) is _OBJECT else ABSENT
    st.streaming = kind != "finish"
    if kind == "usage":
        st.attempt_usage = get(data, "usage")
    elif kind == "text-delta" or kind == "reasoning-delta":
        if type(data) is _OBJECT and bool(data.get("text", ABSENT)):
            st.attempt_visible = True
    elif kind == "finish":
        st.attempt_visible = False
        st.finish = get(get(data, "reason"), "kind")
        if st.finish == "error":
            st.failed_attempt = True
            track.shapes.attempt_failed(st)
