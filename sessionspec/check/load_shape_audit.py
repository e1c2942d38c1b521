"""LOG-8 (strict load): the shapes the harness's load refuses, one fold over the log."""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Final

from sessionspec.check.audits import audits
from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import WalkFold
from sessionspec.fast.constants import A55, ABSENT
from sessionspec.fast.jsonget import get
from sessionspec.model.d08_shapes import check_aborted_turn_end
from sessionspec.model.header import check_llm_shape
from sessionspec.model.header_log import check_header_types
from sessionspec.model.jsonval import JsonObject, js_stringify
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected

A55_TURN_END_KINDS: Final = frozenset({"completed", "aborted", "error", "disposed", "max-tokens", "rejected", "interrupted"})


class LoadShapeAudit(WalkFold):
    """LOG-8 (strict load): the legacy ``fallback`` reason (LEG-2), ``mode/set``
    (LEG-3), a reason-bearing A55 ``aborted`` (LEG-4), the LLM shape (HDR-8,
    LEG-5, LEG-6; D08 assistant provenance lives in ``message.source``,
    checked with its shape by DIA-10), the header field types (HDR-1/DIA-8,
    FMT-6), the A55 ``turn/end`` reason kinds (LOG-11) and the D08 aborted
    reasons (DIA-14)."""

    EVENT_TYPES = frozenset({"request/header", "mode/set", "assistant/message", "turn/end"})

    def walk(self) -> Generator[None, Event | None, list[Rejected]]:
        dialect = self.dialect
        found: list[Rejected] = []
        while (event := (yield)) is not None:
            data = event.data
            match event.type:
                case "request/header":
                    if get(data, "reason") == "fallback":
                        found.append(Rejected(rule="LEG-2", seq=event.seq, reason='uses unsupported legacy request/header reason "fallback"'))
                    shape = check_llm_shape(event)
                    if shape is not None:
                        found.append(shape)
                    found += check_header_types(event, dialect)
                case "mode/set":
                    found.append(Rejected(rule="LEG-3", seq=event.seq, reason="mode/set is rejected at persistence load"))
                case "assistant/message" if dialect is A55:
                    shape = check_llm_shape(event)
                    if shape is not None:
                        found.append(shape)
                case "turn/end" if dialect is A55:
                    reason = get(data, "reason")
                    kind = get(reason, "kind")
                    if kind == "aborted" and isinstance(reason, JsonObject) and len(reason) != 1:
                        found.append(Rejected(rule="LEG-4", seq=event.seq, reason="uses unsupported reason-bearing aborted format"))
                    elif not isinstance(kind, str) or kind not in A55_TURN_END_KINDS:
                        found.append(Rejected(rule="LOG-11", seq=event.seq, reason=f"turn/end reason kind {js_stringify(kind if kind is not ABSENT else None)} is not an A55 kind"))
                case "turn/end":
                    aborted = check_aborted_turn_end(event)
                    if aborted is not None:
                        found.append(aborted)
                case _:
                    pass
        return found


audits("LOG-8", "LEG-2", "LEG-3", "LEG-4", "LOG-11", "P-LOG-4")(LoadShapeAudit)


def check_load_shapes(events: Sequence[Event], dialect: Dialect) -> list[Rejected]:
    """:class:`LoadShapeAudit` run alone."""
    return run_alone(LoadShapeAudit, events, dialect)
