"""The header records of a log (HDR-1, DIA-8, FMT-6; FMT-9, HDR-7, PFX-15): the fold that runs the model's definitions.

The definitions are :mod:`sessionspec.model.header_log`'s: the field types of each header
(:func:`~sessionspec.model.header_log.check_header_types`, run with the load shapes, ``load_shape_audit``) and a
:class:`~sessionspec.model.header_log.HeaderTrack` against which each live header record is judged.  This fold
only drives it: which events reach the definitions (a row's chunks at once), the canonical header of each
record, and which headers are live (a fork's seed headers set the header in force, unjudged).  The canonical
header, the step boundaries and an anchor's record are their compiled twins' (``sessionspec/fast/header.py``,
``header_log.py``, tied by ``tests/fast/test_fast_header.py``).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence

from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import WalkFold
from sessionspec.fast.header import canonical_header_of
from sessionspec.fast.header_log import check_header_record, close_step, open_step
from sessionspec.model.header_log import HeaderTrack, header_shapes, take_seed_header
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected


class HeaderReasonAudit(WalkFold):
    """Every live ``request/header`` record (:func:`sessionspec.model.header_log.check_header_record`)."""

    EVENT_TYPES = frozenset({"step/start", "step/end", "assistant/chunk", "request/header"})
    TAKES_RUNS = True

    def walk(self) -> Generator[None, Event | ChunkRun | None, list[Rejected]]:
        dialect, first_live_seq = self.dialect, self.first_live_seq
        shapes = header_shapes(dialect)
        found: list[Rejected] = []
        track = HeaderTrack()
        live_headers = 0
        while (event := (yield)) is not None:
            match event.type:
                case "assistant/chunk":
                    # The one fact a chunk gives (HeaderTrack); a packed row's chunks (CHK-6): its last.
                    track.last_chunk = event.members[-1] if isinstance(event, ChunkRun) else event
                case "step/start":
                    open_step(track)
                case "step/end":
                    close_step(track)
                case "request/header":
                    assert not isinstance(event, ChunkRun)  # a run holds chunks only
                    header = canonical_header_of(event, dialect)
                    if isinstance(header, Rejected):
                        found.append(header)
                    elif event.seq >= first_live_seq:
                        found += check_header_record(track, event, header, shapes, live_headers == 0)
                        live_headers += 1
                    else:
                        take_seed_header(track, header)
                case _:
                    pass
        return found


def check_header_reasons(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """:class:`HeaderReasonAudit` run alone."""
    return run_alone(HeaderReasonAudit, events, dialect, first_live_seq)
