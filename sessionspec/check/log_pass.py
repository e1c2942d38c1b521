"""One pass over a log's events, in file order, judging them as they come (issue 26).

:class:`LogPass` takes each event with its line and keeps nothing of the log but what the
report needs: the audited prefix (:class:`PrefixTracker`), the dialect evidence (FMT-10,
:func:`model.migrate.with_markers`), the D08 first live seq (the last ``session/end-seed``,
DIA-5), the seqs the file load's repair walk throws on (QF-13), the last ``turn/end``'s line
(QF-15), the seed's events (FMT-11, DIA-5), the line of each seq (:class:`LineTable`) and
the audits' folds (:class:`FoldLoop`), which keep the surface and the open turn and step.

The folds must know the dialect and the first live seq before the first event, and both are
facts of the whole log.  So the pass **guesses** them: the dialect forced, else the one the
first marker shows (the first events are held until a marker decides, up to
:data:`HOLD_EVENTS`), and the live seq from the ``session/end-seed`` events held.  After the
pass the checker compares the guess with the facts; a wrong guess costs one more pass with
the facts known (:attr:`LogPass.judged_as`), never a different report.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, final

from sessionspec.check.audit import Audit, audit_outcome
from sessionspec.check.audited_prefix import PrefixTracker
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.file_load import TurnEndLines, repair_walk_throws
from sessionspec.check.fold_loop import FoldLoop
from sessionspec.check.fold_set import registered_folds
from sessionspec.check.line_table import LineTable
from sessionspec.fast.constants import A55, D08
from sessionspec.fast.surface import may_carry_marker, with_markers
from sessionspec.model.deployment import Deployment
from sessionspec.model.log import Dialect, Event
from sessionspec.model.message_shape import message_shape
from sessionspec.model.migrate import NO_EVIDENCE, DialectEvidence, migrate_event
from sessionspec.model.seed_log import first_live_seq

# The events held while no marker has decided the dialect (a D08 log shows one within its first
# events: its user messages carry ``role`` and ``id``).
HOLD_EVENTS: Final = 4096


@final
@dataclass(frozen=True, slots=True)
class Guess:
    """The dialect and first live seq the folds judge with."""

    dialect: Dialect
    live: int


@final
class LogPass:
    """One pass over a log's events (see the module docstring)."""

    def __init__(self, guess: Guess | None, seed_length: int, session_id: str, evidence: DialectEvidence = NO_EVIDENCE,
                 forced: Dialect | None = None, deployment: Deployment | None = None) -> None:
        self.seed_length = seed_length
        self.session_id = session_id
        self.forced = forced
        self.deployment = deployment
        self.evidence = evidence
        self.prefix = PrefixTracker()
        self.lines = LineTable()
        self.turn_ends = TurnEndLines()
        # Kept as arrays (an A55 log's every assistant message throws as D08 would read it).
        self.throws: dict[Dialect, array[int]] = {A55: array("q"), D08: array("q")}
        # Each dialect's reader of a message's content (DIA-10), with the seqs its repair walk throws on.
        self.walks = tuple((message_shape(dialect).content, throws) for dialect, throws in self.throws.items())
        self.last_end_seed = -1
        self.replay_script = True
        self.held: list[Event] = []
        self.judged_as: Guess | None = None
        self.wrong_guess = False
        self.loop: FoldLoop | None = None
        self.ids: dict[int, str] = {}
        self.head: list[Event] = []
        self.found: Audit | None = None
        # Whether an event type may carry an FMT-10 marker (``with_markers`` passes the others by).
        self.may_mark: dict[str, bool] = {}
        if guess is not None:
            self.start(guess)

    def take(self, event: Event, line: int, first_damage: int | None) -> None:
        """The next event of the file, with its line and the first damaged line met so far."""
        seq, kind = event.seq, event.type  # read once: compiled, each read is a generic attribute read
        self.lines.add(seq, line)
        if kind == "turn/end":  # (the only type it reads: one call fewer per other event)
            self.turn_ends.take(event, line)
        marks = self.may_mark.get(kind)
        if marks is None:
            marks = self.may_mark[kind] = may_carry_marker(kind)
        if marks:  # (most events are of a type that carries none: no call for them)
            self.evidence = with_markers(self.evidence, event)
        if kind == "assistant/message":
            data = event.data
            for content_of, throws in self.walks:
                if repair_walk_throws(content_of(data)):
                    throws.append(seq)
        if not self.prefix.take(seq, line, first_damage):
            return
        if kind != "assistant/chunk":
            self.replay_script = False
        if kind == "session/end-seed":
            self.last_end_seed = seq
            judged = self.judged_as
            if judged is not None and judged.dialect is D08 and self.live(D08) != judged.live:
                self.wrong_guess = True
                self.loop = None  # its findings cannot be used: stop folding
        judged = self.judged_as
        if judged is None:
            self.held.append(event)
            if len(self.held) >= HOLD_EVENTS or (self.marked() and not self.seed_unended(event)):
                self.start(self.guess())
        elif judged.dialect is D08 or len(self.head) <= self.seed_length:
            self.judge(event)
        elif self.loop is not None:  # :meth:`judge` of an A55 event past the seed's head, in place
            self.loop.take(event, event)

    def take_run(self, run: ChunkRun, line: int, first_damage: int | None) -> None:
        """:meth:`take` of each of a packed row's chunks, at once when nothing of it depends on the
        member: a chunk is no marker, no ``turn/end``, no ``assistant/message``, no
        ``session/end-seed``, keeps a replay script one, and is not migrated (DIA-13); so once the
        folds have started, past the seed's head, with the whole run audited, only the line table,
        the prefix and the folds see it."""
        if self.loop is None or len(self.head) <= self.seed_length or not self.prefix.take_all(run.seq, run.count, line, first_damage):
            for event in run.members:
                self.take(event, line, first_damage)
            return
        self.lines.add_run(run.seq, run.count, line)
        self.loop.take_run(run)

    def marked(self) -> bool:
        return self.forced is not None or self.evidence.a55_seq is not None or self.evidence.d08_seq is not None

    def seed_unended(self, event: Event) -> bool:
        """Whether a D08 guess must wait for the seed's ``session/end-seed`` (DIA-5: at the seed's end
        or right after it), which moves the first live seq."""
        return self.guess().dialect is D08 and event.seq < self.seed_length

    def guess(self) -> Guess:
        """The dialect the markers so far show (A55 without one, or when mixed), and its live seq."""
        dialect = self.forced
        if dialect is None:
            dialect = D08 if self.evidence.d08_seq is not None and self.evidence.a55_seq is None else A55
        return Guess(dialect, self.live(dialect))

    def live(self, dialect: Dialect) -> int:
        """The first live seq (:func:`sessionspec.model.seed_log.first_live_seq`: LOG-8, DIA-5)."""
        return first_live_seq(dialect, self.seed_length, self.last_end_seed)

    def start(self, guess: Guess) -> None:
        self.judged_as = guess
        self.loop = FoldLoop(guess.dialect, guess.live, registered_folds(), self.deployment, lists_undecided=True)
        held, self.held = self.held, []
        for event in held:
            self.judge(event)

    def judge(self, logged: Event) -> None:
        assert self.judged_as is not None
        event = migrate_event(logged, self.session_id, self.ids) if self.judged_as.dialect is D08 else logged
        if len(self.head) <= self.seed_length:
            self.head.append(event)
        if self.loop is not None:
            self.loop.take(event, logged)

    def flush(self) -> None:
        """After a batch of events: the folds that step a batch at a time take it (:meth:`FoldLoop.flush`)."""
        if self.loop is not None:
            self.loop.flush()

    def finish(self) -> None:
        """After the last event: judge what is still held."""
        if self.judged_as is None:
            self.start(self.guess())

    def audit(self) -> Audit | None:
        """The audit of the prefix, when the guess held for the live seq (the checker compares the dialect)."""
        if self.loop is None or self.wrong_guess:
            return None
        if self.found is None:
            self.found = audit_outcome(self.loop.outcome())
        return self.found

    def audited(self) -> Sequence[Event]:
        """The first ``seed_length + 1`` audited events (as judged): all that FMT-11 and DIA-5 read.  When
        the audited prefix is shorter it is all of it, so their length tests (a seed longer than the
        events, an event after the seed) answer as they would on the whole prefix."""
        return self.head
