"""``sessionspec generate``: a valid synthetic A55 session log of about N events.

The events come from the model's own loop simulator (``sessionspec.simulate``, with compaction mounted: text and
tool rounds, request-error retries and overflow recoveries, system/tool changes, cancels, steering, pressure
compactions and prunes, a session prefix from two contributors, a resume every four turns).  They are written as
the real writer writes them: chunk runs packed into rows (:func:`model.codec.pack_chunk_runs`, CHK-3/4),
everything else one event per line in the harness key order (FMT-3).

Large logs are built from *blocks*: each compaction of the simulator re-measures the whole log (quadratic in the
log), so it is run for at most :data:`BLOCK_TURNS` turns at a time and the blocks are appended one after the other
as new loop instances, i.e. as resumes (PFX-1, HDR-7): every seq, provenance seq, replace endpoint, compaction
seq, turn number and tool-call id of a later block is renumbered to follow the earlier ones, the block's first
``initial`` header becomes ``resume``, and its first compaction is extended over what earlier blocks left on the
surface (see :class:`_BlockStitch`).  A log of at most one block is the simulator's output unchanged.
Deterministic in ``--seed``; ``sessionspec check`` judges the output valid (tests/tools/test_generate.py).
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TextIO, final

from sessionspec.generate_ahead import BlockSource, default_workers
from sessionspec.generate_text import js_text
from sessionspec.model.codec import pack_chunk_runs
from sessionspec.model.jsonval import Json, JsonObject, get, with_values
from sessionspec.model.log import Event, make_event
from sessionspec.model.meter import PricedSurface, node_price
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfaceOp, surface_op_of
from sessionspec.options import add_verbosity, describe
from sessionspec.progress import ProgressBar, on_terminal
from sessionspec.simulate import simulate

HELP: Final = "write a valid synthetic session log of about N events from the model's loop simulator"
BLOCK_TURNS: Final = 50
EVENTS_PER_TURN: Final = 28  # the first block's guess; later blocks use the measured average
CONTRIBUTORS: Final = 2
RESUME_EVERY: Final = 4
# Below a few blocks the workers' start costs more than they save.
WORKERS_FROM_EVENTS: Final = 20_000
WRITE_BATCH: Final = 1024
# ``call-<turn index>`` and ``call-<turn index>-<round>-<call>``.
_CALL_ID: Final = re.compile(r"call-(\d+)((?:-\d+)*)")
# Data keys that hold seqs of the same log (A55 compaction records, CMP-22).
_SEQ_LIST_KEYS: Final = frozenset({"shadowedSeqs", "messageSeqs"})
_SEQ_RANGE_KEYS: Final = frozenset({"shadowedRange"})
_SEQ_KEYS: Final = _SEQ_LIST_KEYS | _SEQ_RANGE_KEYS
_PLAIN_TEXT: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)



def simulated_log(seed: int, turns: int) -> tuple[Event, ...]:
    """One simulator run: ``turns`` turns, deterministic in ``seed``; with
    compactions, prunes and overflow recoveries where the simulator offers them."""
    return simulate(seed, turns, contributors=CONTRIBUTORS, resume_every=RESUME_EVERY, compaction=True)


def _shift_call_ids(value: Json, turn_offset: int) -> Json:
    """The simulator names tool calls after the turn index (``call-<n>``,
    ``call-<n>-<round>-<call>``); a later block's ids move by the turns before
    it so ids stay unique in the whole log."""
    # A prefix test before the regex, and values returned as they are when
    # nothing in them moves: this walk touches every value of every later
    # block, and was a tenth of the generator's time (2026-12-04).
    if isinstance(value, str):
        if not value.startswith("call-"):
            return value
        match = _CALL_ID.fullmatch(value)
        return f"call-{int(match.group(1)) + turn_offset}{match.group(2)}" if match else value
    if isinstance(value, tuple):
        items = [_shift_call_ids(v, turn_offset) for v in value]
        return value if all(a is b for a, b in zip(items, value)) else tuple(items)
    if isinstance(value, JsonObject):
        pairs = [(k, _shift_call_ids(v, turn_offset)) for k, v in value.items()]
        return value if all(p[1] is v for p, v in zip(pairs, value.values())) else JsonObject(pairs)
    return value


def _shift_seq_range(value: Json, offset: int) -> Json:
    if not isinstance(value, JsonObject):
        return value
    return JsonObject((k, v + offset if k in ("start", "end") and isinstance(v, int) else v) for k, v in value.items())


def _shift_turns(data: Json, turn_offset: int) -> Json:
    """The part of a later block's renumbering that depends on the turns
    before it only (the ``turn`` of the data, the call ids), so a worker can
    do it ahead (:mod:`sessionspec.generate_ahead`)."""
    if not isinstance(data, JsonObject):
        return data
    turn = data.get("turn")
    if isinstance(turn, int) and not isinstance(turn, bool):
        data = JsonObject((k, turn + turn_offset if k == "turn" else v) for k, v in data.items())
    return _shift_call_ids(data, turn_offset) if _may_cite_call_ids(data) else data


def _may_cite_call_ids(data: JsonObject) -> bool:
    """False only if no string in ``data`` starts with ``call-``: the C encoder's
    text holds every string literally after its quote (only control characters,
    quotes and backslashes are escaped), so one substring test rules out the
    walk for most events (the walk was a seventh of the generator's CPU)."""
    try:
        return '"call-' in _PLAIN_TEXT.encode(data)
    except (TypeError, ValueError):
        return True


def _shift_seqs(data: Json, offset: int) -> Json:
    """The part that depends on the events before the block: the seqs the data cites (CMP-22)."""
    if not isinstance(data, JsonObject) or _SEQ_KEYS.isdisjoint(data):
        return data
    pairs: list[tuple[str, Json]] = []
    for key, value in data.items():
        if key in _SEQ_LIST_KEYS and isinstance(value, tuple):
            value = tuple(v + offset if isinstance(v, int) else v for v in value)
        elif key in _SEQ_RANGE_KEYS:
            value = _shift_seq_range(value, offset)
        pairs.append((key, value))
    return JsonObject(pairs)


def turn_shifted(block: tuple[Event, ...], turn_offset: int) -> tuple[Event, ...]:
    """``block`` with its turns and call ids moved by ``turn_offset`` (the block itself at 0)."""
    if not turn_offset:
        return block
    return tuple(_with_data(event, _shift_turns(event.data, turn_offset)) for event in block)


def _with_data(event: Event, data: Json) -> Event:
    if data is event.data:
        return event
    return make_event(event.type, seq=event.seq, time=event.time, data=data,
                      source_event_seqs=event.source_event_seqs, surface_op=event.surface_op, op_first=event.op_first)


def _as_resume(data: Json) -> Json:
    """HDR-7: the first header of a later block is that instance's anchor, ``resume``."""
    if not isinstance(data, JsonObject) or get(data, "reason") != "initial":
        return data
    return with_values(data, reason="resume")


def _renumbered(event: Event, offset: int) -> Event:
    provenance = event.source_event_seqs
    if isinstance(provenance, tuple):
        provenance = tuple(s + offset if isinstance(s, int) else s for s in provenance)
    op = event.surface_op
    return make_event(
        event.type,
        seq=event.seq + offset,
        time=event.time + offset,
        data=_shift_seqs(event.data, offset),
        source_event_seqs=provenance,
        surface_op=_shift_seq_range(op, offset) if isinstance(op, JsonObject) else op,
        op_first=event.op_first,
    )


@final
class _SurfaceEvents(Sequence[Event]):
    """The log written so far as the surface fold reads it: its length, and the
    events still on the surface (SURF-7 reads only those), so the generator
    keeps memory in the surface, not in the log."""

    __slots__ = ("_events", "_length")

    def __init__(self, events: dict[int, Event], length: int) -> None:
        self._events = events
        self._length = length

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int) -> Event:  # type: ignore[override]
        return self._events[index]


@dataclass(slots=True)
class WrittenSurface:
    """The surface of the log written so far, priced by the one priced-surface
    fold (:class:`model.meter.PricedSurface`, MTR-7): every event is planned
    (SURF-9) and spliced (SURF-8) exactly as ``check`` will fold it."""

    priced: PricedSurface = field(default_factory=PricedSurface)
    written: int = 0
    on_surface: dict[int, Event] = field(default_factory=dict)

    @property
    def seqs(self) -> list[int]:
        return self.priced.seqs

    def add(self, event: Event) -> None:
        plan = self.priced.plan(event, _SurfaceEvents(self.on_surface, self.written))
        price = 0 if plan is None or isinstance(plan, Rejected) else node_price(event)
        # The simulator writes valid logs only: a rejection here is a generator bug.
        assert not isinstance(plan, Rejected), plan
        assert not isinstance(price, Rejected), price
        self.written += 1
        if plan is None:
            return
        for seq in self.priced.seqs[plan.start_idx : plan.end_idx + 1] if plan.is_replace else ():
            del self.on_surface[seq]
        self.priced.commit(plan, price)
        self.on_surface[event.seq] = event

    def tokens(self, start: int, end: int) -> int | None:
        """CMP-15: the priced total of the surface range ``start..end`` (seqs)."""
        seqs = self.priced.seqs
        if start not in seqs or end not in seqs:
            return None
        return self.priced.range_tokens(seqs.index(start), seqs.index(end))


@dataclass(slots=True)
class _BlockStitch:
    """What a later block changes beyond renumbering: its first header becomes
    ``resume``, and its first compaction is extended over the nodes earlier
    blocks left on the surface (they run from the head up to the block's
    first node), so the surface stays as small as one simulated session
    keeps it instead of growing by every block's retained tail."""

    surface: WrittenSurface
    block_head: int | None = None
    leftovers: tuple[int, ...] = ()
    header_seen: bool = False
    extended_start: int | None = None

    def event(self, event: Event) -> Event:
        data = event.data
        if event.type == "request/header" and not self.header_seen:
            data, self.header_seen = _as_resume(data), True
        elif event.type == "compact/summary" and isinstance(data, JsonObject):
            data = self._summary(data)
        elif self.extended_start is not None and _is_checkpoint_of(event, self.extended_start):
            event = _extended_checkpoint(event, self.leftovers)
            self.extended_start, self.leftovers = None, ()
        if data is not event.data:
            event = make_event(event.type, seq=event.seq, time=event.time, data=data,
                               source_event_seqs=event.source_event_seqs, surface_op=event.surface_op, op_first=event.op_first)
        if self.block_head is None and isinstance(surface_op_of(event), SurfaceOp):
            self.block_head = event.seq
            if self.surface.seqs:
                self.leftovers = tuple(self.surface.seqs)
        self.surface.add(event)
        return event

    def _summary(self, data: JsonObject) -> JsonObject:
        shadowed_range, shadowed = get(data, "shadowedRange"), get(data, "shadowedSeqs")
        start, end = get(shadowed_range, "start"), get(shadowed_range, "end")
        if not (isinstance(shadowed_range, JsonObject) and isinstance(shadowed, tuple) and isinstance(start, int) and isinstance(end, int)):
            return data
        if self.leftovers and start == self.block_head and self.extended_start is None:
            self.extended_start = start
            start = self.leftovers[0]
            shadowed = self.leftovers + shadowed
            data = with_values(data, shadowedRange=with_values(shadowed_range, start=start), shadowedSeqs=shadowed)
        # Renamed call ids change prices: recount as the audit will (CMP-15).
        tokens = self.surface.tokens(start, end)
        return data if tokens is None else with_values(data, shadowedTokenCount=tokens)


def _is_checkpoint_of(event: Event, start: int) -> bool:
    return event.type == "user/message" and isinstance(event.surface_op, JsonObject) and get(event.surface_op, "start") == start


def _extended_checkpoint(event: Event, leftovers: tuple[int, ...]) -> Event:
    """CMP-22: the checkpoint replaces ``shadowedRange`` with provenance ``[start, summary] ++ shadowed``."""
    op, provenance = event.surface_op, event.source_event_seqs
    assert isinstance(op, JsonObject) and isinstance(provenance, tuple)
    return make_event(event.type, seq=event.seq, time=event.time, data=event.data,
                      source_event_seqs=(*provenance[:2], *leftovers, *provenance[2:]),
                      surface_op=with_values(op, start=leftovers[0]), op_first=event.op_first)


def append_block(block: tuple[Event, ...], offset: int, surface: WrittenSurface) -> Iterator[Event]:
    """``block`` (its turns already moved, :func:`turn_shifted`) renumbered to
    follow ``offset`` events, as a new loop instance (a resume) of the log whose surface is ``surface``."""
    stitch = _BlockStitch(surface=surface)
    for event in block:
        yield stitch.event(_renumbered(event, offset))


def simulated_block(seed: int, turns: int, turn_offset: int) -> tuple[Event, ...]:
    """One block as the writer appends it: :func:`simulated_log`, its turns moved by ``turn_offset``."""
    return turn_shifted(simulated_log(seed, turns), turn_offset)


def generate_events(events: int, seed: int = 0, block_turns: int = BLOCK_TURNS,
                    workers: int = 0) -> Iterator[tuple[Event, ...]]:
    """Blocks of at most ``block_turns`` turns, together about ``events`` long
    (at least one turn); ``workers`` processes simulate blocks ahead (the same blocks)."""
    surface = WrittenSurface()
    total = turns_done = 0
    with BlockSource(simulated_block, seed, block_turns, workers) as source:
        while total < events or turns_done == 0:
            per_turn = total / turns_done if turns_done else EVENTS_PER_TURN
            turns = max(1, min(block_turns, math.ceil((events - total) / max(per_turn, 1))))
            block = source.block(turns, turns_done)
            if turns_done:
                block = tuple(append_block(block, total, surface))
            else:
                for event in block:
                    surface.add(event)
            yield block
            total += len(block)
            turns_done += turns


def generate_lines(events: int, seed: int = 0, block_turns: int = BLOCK_TURNS, workers: int = 0,
                   progress: Callable[[int], None] | None = None) -> Iterator[str]:
    """The log's storage lines (no newline): chunk runs packed as rows (CHK-3/4), each ``JS(record)`` (FMT-3);
    ``progress`` is told the events generated so far after each block."""
    done = 0
    for block in generate_events(events, seed, block_turns, workers):
        for record in pack_chunk_runs(block):
            yield js_text(record)
        done += len(block)
        if progress is not None:
            progress(done)


def write_log(out: TextIO, events: int, seed: int, workers: int | None = None, progress: Callable[[int], None] | None = None) -> int:
    """Write the log; the number of lines written.  ``workers`` (default: from
    :data:`WORKERS_FROM_EVENTS` events on, :func:`default_workers`) simulate blocks ahead."""
    if workers is None:
        workers = default_workers() if events >= WORKERS_FROM_EVENTS else 0
    lines = 0
    batch: list[str] = []
    for line in generate_lines(events, seed, workers=workers, progress=progress):
        batch.append(line)
        if len(batch) == WRITE_BATCH:
            lines += _write(out, batch)
    return lines + _write(out, batch)


def _write(out: TextIO, batch: list[str]) -> int:
    # One write per batch of lines: a write per line was a call per line.
    if batch:
        out.write("\n".join(batch) + "\n")
    count = len(batch)
    batch.clear()
    return count


EXIT_CODES: Final = ((0, "the log is written"), (2, "a usage error (--events below 1), or FILE cannot be written"))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    describe(parser, exit_codes=EXIT_CODES, see="docs/performance.md")
    parser.add_argument("--events", type=int, required=True, metavar="N", help="about how many events to write (at least one turn)")
    parser.add_argument("--out", default="-", metavar="FILE",
                        help="write the log to FILE, a .jsonl file (default: stdout, as every command; missing directories are created)")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0); the same seed gives the same bytes")
    add_verbosity(parser, quiet="no progress bar", verbose="when done, say on stderr what was written (events, lines, where)")


def run(args: argparse.Namespace) -> int:
    if args.events < 1:
        print("sessionspec generate: --events must be at least 1", file=sys.stderr)
        return 2
    # No bar when the log itself goes to the terminal: its lines and the redrawn bar would mix on the screen.
    to_screen = args.out == "-" and on_terminal(sys.stdout)
    bar = ProgressBar(stream=sys.stderr, total=args.events, unit="events") if not args.quiet and on_terminal() and not to_screen else None
    written: list[int] = [0]

    def progress(done: int) -> None:
        written[0] = done
        if bar is not None:
            bar.update(min(done, args.events))

    try:
        if args.out == "-":
            lines = write_log(sys.stdout, args.events, args.seed, progress=progress)
            sys.stdout.flush()
        else:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            with Path(args.out).open("w", encoding="utf-8", newline="\n") as out:
                lines = write_log(out, args.events, args.seed, progress=progress)
    except OSError as error:
        print(f"sessionspec generate: cannot write {args.out}: {error.strerror or error}", file=sys.stderr)
        return 2
    finally:
        if bar is not None:
            bar.clear()
    if args.verbose:
        where = "stdout" if args.out == "-" else args.out
        print(f"sessionspec generate: wrote {written[0]} events in {lines} lines to {where} (seed {args.seed})", file=sys.stderr)
    return 0
