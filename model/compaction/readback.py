"""Reading compaction back from a log (CMP-16, CMP-17): the summarizer requests it implies."""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.model.compaction.dialect import compaction_type, summarization_input, summarizer_request
from sessionspec.model.compaction.records import SummaryCall
from sessionspec.model.header import latest_header
from sessionspec.model.jsonval import JsonObject, get
from sessionspec.model.log import Dialect, Event, log_view
from sessionspec.model.rejected import Rejected


def _brackets(events: Sequence[Event], dialect: Dialect) -> list[tuple[Event, Event | None]]:
    """(start, summary) pairs of every bracket, in log order."""
    found: list[tuple[Event, Event | None]] = []
    start_type, summary_type = compaction_type(dialect, "start"), compaction_type(dialect, "summary")
    for event in events:
        if event.type == start_type:
            found.append((event, None))
        elif event.type == summary_type and found and found[-1][1] is None:
            found[-1] = (found[-1][0], event)
    return found


def summary_requests(events: Sequence[Event], dialect: Dialect, instruction: str) -> tuple[JsonObject, ...]:
    """CMP-16/CMP-17: the summarizer requests reconstructed from the log, one
    per bracket with a ``summary``: the latest header before the start, the
    derived shadowed messages, the recorded provider/model/maxTokens."""
    requests: list[JsonObject] = []
    for start, summary in _brackets(events, dialect):
        if summary is None:
            continue
        header = latest_header(log_view(events, start.seq), dialect)
        shadowed = get(summary.data, "shadowedSeqs")
        provider, model, cap = get(summary.data, "provider"), get(summary.data, "model"), get(summary.data, "maxTokens")
        if isinstance(header, Rejected) or not isinstance(shadowed, tuple):
            continue
        seqs = tuple(s for s in shadowed if isinstance(s, int) and 0 <= s < len(events))
        summary_in = summarization_input(events, seqs, header, dialect)
        if isinstance(summary_in, Rejected) or not isinstance(provider, str) or not isinstance(model, str):
            continue
        call = SummaryCall(input=summary_in, provider=provider, model=model, max_tokens=cap if isinstance(cap, int) else 0)
        request = summarizer_request(call, instruction, dialect)
        if not isinstance(cap, int):
            request = JsonObject((k, v) for k, v in request.items() if k != "maxTokens")
        requests.append(request)
    return tuple(requests)

