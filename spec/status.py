"""The status of every rule and property of the book: one table, keyed by literal IDs (issue 28).

For each ID two answers, and the reason whenever the answer is no:

* **model** -- does the model define it?  ``DEFINED`` (some function of ``model/`` carries
  ``@implements(ID)``; for a property, a predicate of ``spec/``), ``OutOfScope(reason)`` (a pure,
  single-threaded model cannot exhibit or observe it), or ``NotDefined(reason)``;
* **log** -- does ``sessionspec check`` decide it from a log alone?  ``AUDITED`` /
  ``Audited(part, reported_as=…)`` (some checker function carries ``@audits(ID)``; ``part`` says
  what of the rule it decides when not all of it, ``reported_as`` the rule its findings name when
  not this one, or ``"note"``/``"unknown"``), ``Undecidable(reason)`` or ``NotYet(reason)``.

Functions are never named here: the links live on the functions (``@implements``, ``@audits``),
and ``tests/spec/test_rule_status.py`` requires this table and the links to agree.  docs/SPEC.md,
docs/check.md's audit table, the coverage report and ``sessionspec rules`` are rendered from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, final


@final
@dataclass(frozen=True, slots=True)
class Defined:
    """Some function carries ``@implements(ID)``."""


@final
@dataclass(frozen=True, slots=True)
class OutOfScope:
    reason: str


@final
@dataclass(frozen=True, slots=True)
class NotDefined:
    reason: str


@final
@dataclass(frozen=True, slots=True)
class Audited:
    part: str = ""
    reported_as: str | None = None


@final
@dataclass(frozen=True, slots=True)
class WithDeployment:
    """Decided only with the deployment's facts (``check --deployment``, issue 44): ``part`` says what of it."""

    part: str


@final
@dataclass(frozen=True, slots=True)
class Undecidable:
    reason: str


@final
@dataclass(frozen=True, slots=True)
class NotYet:
    reason: str


ModelStatus = Defined | OutOfScope | NotDefined
LogStatus = Audited | WithDeployment | Undecidable | NotYet


@final
@dataclass(frozen=True, slots=True)
class RuleStatus:
    model: ModelStatus
    log: LogStatus


DEFINED: Final = Defined()
AUDITED: Final = Audited()

# Reasons a log cannot decide a rule
_REQUEST: Final = 'the request sent to the model is not in the log (the checker rebuilds it by this rule)'
_RUNTIME: Final = 'in-process behaviour of one append or call; a log records only committed events'
_DEFINITION: Final = 'defines a computation the checker performs over the log; no event can break it'
_PREFIX: Final = "composition writes no event; a log shows the prefix only on the instance's anchor header"
_SUMMARY_REQUEST: Final = 'the summarization request is not in the log'
_DEV_INVARIANT: Final = 'the dev invariant runs on the live request at dispatch; the request is not in the log'
_SENT_REQUESTS: Final = 'holds for every rebuilt request of an append-only surface; the sent requests are not in the log'
_CONFIG: Final = "a rule of the configuration, not of a log: check --deployment FILE applies it to the deployment's (a file it refuses is a usage error)"
_MODEL: Final = "a property of the model's functions over every log (Hypothesis, spec/), not of one log"
# Reasons a rule has no definition of its own in model/
_CHECKER: Final = "a rule of the checker itself: its audit is its definition"
# Why a property has no predicate in spec/
_TESTED: Final = "stated by the tests named after it, not (yet) as a predicate of spec/"

STATUS: Final[dict[str, RuleStatus]] = {
    # LOG
    "LOG-1": RuleStatus(DEFINED, AUDITED),
    "LOG-2": RuleStatus(DEFINED, AUDITED),
    "LOG-3": RuleStatus(DEFINED, AUDITED),
    "LOG-4": RuleStatus(DEFINED, AUDITED),
    "LOG-5": RuleStatus(NotDefined("the order of an append's checks: the model rejects at the first failing check but the order is not yet linked"), Undecidable(_RUNTIME)),
    "LOG-6": RuleStatus(DEFINED, Undecidable('a rejected append leaves nothing in the log')),
    "LOG-7": RuleStatus(OutOfScope('Reentrant appends need observers running while an append is being published; the model appends by returning new tuples, so no append can start inside another.'), Undecidable('a reentrant append is rejected and leaves nothing in the log')),
    "LOG-8": RuleStatus(DEFINED, Audited(reported_as='LEG-2')),
    "LOG-9": RuleStatus(DEFINED, Audited('live events; D08 keeps the shapes DIA-10/13 did not change')),
    "LOG-10": RuleStatus(DEFINED, Audited('the session/title shape; no surface metadata by model.surface.surface_op_of (SURF-2)')),
    "LOG-11": RuleStatus(DEFINED, Audited('shapes, both dialects; max-tokens precedence in sessionspec.model.loop_log.turn.check_stop_precedence')),
    "LOG-12": RuleStatus(DEFINED, Audited('A55')),
    "LOG-13": RuleStatus(DEFINED, Audited('every event, the seed too: the companion replays it (QF-12)')),
    "LOG-14": RuleStatus(DEFINED, Audited('A55 byte-exact; D08 codes and provenance')),
    "LOG-15": RuleStatus(DEFINED, Audited('when the parent file lies beside the child')),
    "LOG-16": RuleStatus(DEFINED, Audited('A55: a stepless turn ends completed only around one log-only event (its trigger is not pinned by the book)')),
    "LOG-17": RuleStatus(DEFINED, Audited('version; header-delta, mode/set and fallback by LEG-1..3')),
    "LOG-18": RuleStatus(DEFINED, AUDITED),
    # SURF
    "SURF-1": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "SURF-2": RuleStatus(DEFINED, AUDITED),
    "SURF-3": RuleStatus(DEFINED, AUDITED),
    "SURF-4": RuleStatus(DEFINED, AUDITED),
    "SURF-5": RuleStatus(DEFINED, AUDITED),
    "SURF-6": RuleStatus(DEFINED, AUDITED),
    "SURF-7": RuleStatus(DEFINED, AUDITED),
    "SURF-8": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "SURF-9": RuleStatus(DEFINED, Audited(reported_as='SURF-5')),
    "SURF-10": RuleStatus(DEFINED, Undecidable('equality of two implementations of the fold, not a property of a log')),
    "SURF-11": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "SURF-12": RuleStatus(DEFINED, Undecidable('forbids the fold from validating more; constrains implementations, not logs')),
    "SURF-13": RuleStatus(DEFINED, Audited('messages and tool results; checkpoints and prunes as compaction writes them, CMP-22 and PRN-4')),
    # DER
    "DER-1": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "DER-2": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "DER-3": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "DER-4": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "DER-5": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "DER-6": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "DER-7": RuleStatus(NotDefined('constrains caching implementations: sessionspec.fast.derivation is checked against derive (tests/fast/test_incremental.py)'), Undecidable(_DEFINITION)),
    "DER-8": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "DER-9": RuleStatus(NotDefined('derived messages are JsonObject/tuple values, immutable by construction (tests/model/test_jsonval.py)'), Undecidable(_RUNTIME)),
    # HDR
    "HDR-1": RuleStatus(DEFINED, AUDITED),
    "HDR-2": RuleStatus(DEFINED, AUDITED),
    "HDR-3": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "HDR-4": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "HDR-5": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "HDR-6": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "HDR-7": RuleStatus(DEFINED, Audited('data keys; reasons by sessionspec.model.header_log.check_header_record')),
    "HDR-8": RuleStatus(DEFINED, AUDITED),
    "HDR-9": RuleStatus(DEFINED, Audited('every request has a header in force', reported_as='FMT-9')),
    # PFX
    "PFX-1": RuleStatus(DEFINED, Undecidable(_PREFIX)),
    "PFX-2": RuleStatus(DEFINED, Undecidable(_PREFIX)),
    "PFX-3": RuleStatus(DEFINED, Undecidable(_PREFIX)),
    "PFX-4": RuleStatus(DEFINED, Undecidable(_PREFIX)),
    "PFX-5": RuleStatus(DEFINED, Undecidable("an interrupted composition writes no event; the turn's events are LOOP-15's")),
    "PFX-6": RuleStatus(DEFINED, Undecidable(_PREFIX)),
    "PFX-7": RuleStatus(DEFINED, Audited('its trace: one prefix per instance (PFX-15)', reported_as='PFX-15')),
    "PFX-8": RuleStatus(DEFINED, Undecidable('which appends ran during composition is not logged; all of them precede step/start, so the boundary holds them')),
    "PFX-9": RuleStatus(DEFINED, Undecidable('prefix content on the surface cannot be told from a user message with the same text')),
    "PFX-10": RuleStatus(DEFINED, Audited('an empty messagePrefix is never written (HDR-2)', reported_as='HDR-2')),
    "PFX-11": RuleStatus(DEFINED, Undecidable(_REQUEST)),
    "PFX-12": RuleStatus(DEFINED, Undecidable('a throwing contributor leaves only turn/end {error} naming an unopened step, like other pre-step failures (quirk Q-4)')),
    "PFX-13": RuleStatus(DEFINED, Undecidable(_PREFIX)),
    "PFX-14": RuleStatus(DEFINED, Undecidable(_PREFIX)),
    "PFX-15": RuleStatus(DEFINED, AUDITED),
    "PFX-16": RuleStatus(DEFINED, Undecidable('a permission (MAY): an anchor may come in a later turn (Q-5); nothing to break')),
    # LOOP
    "LOOP-1": RuleStatus(DEFINED, Undecidable('per-instance state lives in the process; a log shows instances only through anchors (LOOP-9)')),
    "LOOP-2": RuleStatus(DEFINED, Audited('turn numbers (LOG-13)', reported_as='LOG-13')),
    "LOOP-3": RuleStatus(DEFINED, Audited('blocked prompts (one per turn, before the prompt) and the prompt before a step (A55)')),
    "LOOP-4": RuleStatus(DEFINED, AUDITED),
    "LOOP-5": RuleStatus(DEFINED, Audited('the stage a log shows: steering drained before step/start or after the message and its results')),
    "LOOP-6": RuleStatus(DEFINED, Undecidable(_REQUEST)),
    "LOOP-7": RuleStatus(DEFINED, Undecidable('in-process stages; the ones that write events are judged by FMT-9 (header before the stream) and LOOP-11/12')),
    "LOOP-8": RuleStatus(DEFINED, Undecidable('the agent options are not in the log, and a resume header may differ from the last one (Q-10)')),
    "LOOP-9": RuleStatus(DEFINED, Audited('anchors per visible instance; reasons by sessionspec.model.header_log.check_header_record')),
    "LOOP-10": RuleStatus(DEFINED, Audited('A55 (D08: DIA-7)')),
    "LOOP-11": RuleStatus(DEFINED, Audited("one message per step, provenance, usage, sourceEventSeqs, max-tokens, a successful stream's message (A55); steps a loop wrote (FMT-7 Writers)")),
    "LOOP-12": RuleStatus(DEFINED, AUDITED),
    "LOOP-13": RuleStatus(DEFINED, Audited('the turn a steering message names, and where it lies (LOOP-5)')),
    "LOOP-14": RuleStatus(DEFINED, Audited('what follows a failed step')),
    "LOOP-15": RuleStatus(DEFINED, Audited('its trace: step/end before turn/end (LOG-13)', reported_as='LOG-13')),
    "LOOP-16": RuleStatus(NotDefined("written where the loop raises TurnFailed (seven stages, docs/index.md 'Where the loop raises'), not by one function"), Audited('A55: the step an error turn/end names (last started, pending, or 0)')),
    "LOOP-17": RuleStatus(DEFINED, Audited('its trace: an open step closed before turn/end (LOG-13)', reported_as='LOG-13')),
    # WIRE
    "WIRE-1": RuleStatus(DEFINED, Undecidable(_REQUEST)),
    "WIRE-2": RuleStatus(DEFINED, Undecidable(_REQUEST)),
    "WIRE-3": RuleStatus(DEFINED, Undecidable(_REQUEST)),
    "WIRE-4": RuleStatus(DEFINED, Undecidable(_REQUEST)),
    "WIRE-5": RuleStatus(DEFINED, Undecidable(_REQUEST)),
    "WIRE-6": RuleStatus(NotDefined('a prohibition: the model does not model adapter-layer changes; nothing to define'), Undecidable(_REQUEST)),
    # INV
    "INV-1": RuleStatus(OutOfScope('Concerns where the harness registers its dev invariant in the `llm/stream` listener chain; the model has no listener chain, and its machines check every request at dispatch by construction (`reconstruction_mismatch` on every `SentRequest`).'), Undecidable(_DEV_INVARIANT)),
    "INV-2": RuleStatus(NotDefined("the harness's own runtime invariant and its check order; the model checks the stronger INV-5"), Audited("only as the writer's own guard reports it: a turn/end error with code INVARIANT from @deepseek-ai/dsh-agent-loop (the request is not in the log)", reported_as='note')),
    "INV-3": RuleStatus(DEFINED, Audited("only as the writer's own guard reports it: a turn/end error with code INVARIANT from @deepseek-ai/dsh-agent-loop (the request is not in the log)", reported_as='note')),
    "INV-4": RuleStatus(DEFINED, Audited("only as the writer's own guard reports it: a turn/end error with code INVARIANT from @deepseek-ai/dsh-agent-loop (the request is not in the log)", reported_as='note')),
    "INV-5": RuleStatus(DEFINED, Undecidable(_REQUEST)),
    "INV-6": RuleStatus(NotDefined('a corollary of INV-5, checked as the property requests_extend_within_instance (P-INV-4)'), Undecidable(_SENT_REQUESTS)),
    "INV-7": RuleStatus(DEFINED, Audited('request points; the chunks of a request, through the provenance of its message (SURF-13)')),
    # CMP
    "CMP-1": RuleStatus(DEFINED, AUDITED),
    "CMP-2": RuleStatus(DEFINED, AUDITED),
    "CMP-3": RuleStatus(DEFINED, Undecidable(_CONFIG)),
    "CMP-4": RuleStatus(DEFINED, Undecidable(_CONFIG)),
    "CMP-5": RuleStatus(DEFINED, Audited('no automatic bracket before any header')),
    "CMP-6": RuleStatus(DEFINED, AUDITED),
    "CMP-7": RuleStatus(DEFINED, Audited('A55: a bracket after a failed step only for a logged CONTEXT_WINDOW_EXCEEDED (or an unlogged failure); a committed one is followed by the retry')),
    "CMP-8": RuleStatus(DEFINED, WithDeployment('that compactIfNeeded(pressure) ran at a trigger point only over its threshold, with a range to compact, and pruned first; and retried as its loop says (P-CMP-12)')),
    "CMP-9": RuleStatus(DEFINED, Audited('the range selected with retainTokens 0; the prune and retry decisions depend on in-process results')),
    "CMP-10": RuleStatus(DEFINED, AUDITED),
    "CMP-11": RuleStatus(DEFINED, Audited('exactly for retainTokens 0 (overflow, manual); otherwise a tail some retainTokens selects (CMP-12), the deployment\'s retainTokens deciding its size', reported_as='CMP-9')),
    "CMP-12": RuleStatus(DEFINED, AUDITED),
    "CMP-13": RuleStatus(DEFINED, Audited("a logged summary's range: both seqs on the surface, in order (CMP-13's positions; the finding is on the summary's record, CMP-15), and balanced at both edges (CMP-10)", reported_as='CMP-15')),
    "CMP-14": RuleStatus(DEFINED, AUDITED),
    "CMP-15": RuleStatus(DEFINED, AUDITED),
    "CMP-16": RuleStatus(DEFINED, Undecidable(_SUMMARY_REQUEST)),
    "CMP-17": RuleStatus(DEFINED, Undecidable('the summarizer call is not in the log (only its recorded provider/model)')),
    "CMP-18": RuleStatus(DEFINED, Undecidable('binds the default summarizer; a custom one may return any summary, and the log does not say which ran')),
    "CMP-19": RuleStatus(DEFINED, AUDITED),
    "CMP-20": RuleStatus(DEFINED, AUDITED),
    "CMP-21": RuleStatus(DEFINED, Audited('skipped where a placeholder prevents pricing')),
    "CMP-22": RuleStatus(DEFINED, Audited('A55: closed by compact/end before the loop goes on')),
    "CMP-23": RuleStatus(DEFINED, Audited('A55: an open start only before a failing turn end (Q-12)')),
    "CMP-24": RuleStatus(DEFINED, Undecidable('a request/header inside a bracket may come from another writer (CMP-19 tolerates it); the next request is rebuilt, not logged')),
    "CMP-25": RuleStatus(DEFINED, AUDITED),
    "CMP-26": RuleStatus(DEFINED, Undecidable('the abort signal is not logged; an abort after a committed compaction is quirk Q-2')),
    # MTR
    "MTR-1": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "MTR-2": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "MTR-3": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "MTR-4": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "MTR-5": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "MTR-6": RuleStatus(DEFINED, Audited("the meter's step vetoes are LOG-13's", reported_as='LOG-13')),
    "MTR-7": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "MTR-8": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "MTR-9": RuleStatus(DEFINED, Audited("the cited chunks; the assembler's own refusals are the meter's, when it prices a message")),
    "MTR-10": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "MTR-11": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    # PRN
    "PRN-1": RuleStatus(DEFINED, Undecidable(_CONFIG)),
    "PRN-2": RuleStatus(DEFINED, Undecidable("the size measure PRN-3's recomputation uses; no event can break it")),
    "PRN-3": RuleStatus(DEFINED, AUDITED),
    "PRN-4": RuleStatus(DEFINED, AUDITED),
    "PRN-5": RuleStatus(DEFINED, Audited('a second prune of a pruned node is not pruneContent of it (reported as PRN-3)', reported_as='PRN-3')),
    "PRN-6": RuleStatus(DEFINED, Audited("at compactIfNeeded's windows (CMP-6/CMP-7, DIA-6/DIA-7); inside an open turn (LOG-13)")),
    # CHK
    "CHK-1": RuleStatus(DEFINED, Undecidable("rows are written by the packer; a log may be stored unpacked (ground truth, snapshots), and read rows are CHK-5's")),
    "CHK-2": RuleStatus(DEFINED, Undecidable('defines which events pack; an unpacked file is valid')),
    "CHK-3": RuleStatus(DEFINED, Undecidable('defines runs; an unpacked file is valid')),
    "CHK-4": RuleStatus(DEFINED, Undecidable('packing is per flushed batch and optional per writer, so an unpacked run is not an error; short rows are quirk Q-29')),
    "CHK-5": RuleStatus(DEFINED, AUDITED),
    "CHK-6": RuleStatus(DEFINED, Audited(reported_as='CHK-5')),
    "CHK-7": RuleStatus(DEFINED, Undecidable(_DEFINITION)),
    "CHK-8": RuleStatus(NotDefined('contiguity after expansion is LOG-1 on the expanded events; the pack round trip is a codec property'), Audited('contiguity after expansion (LOG-1)', reported_as='LOG-1')),
    # LEG
    "LEG-1": RuleStatus(DEFINED, AUDITED),
    "LEG-2": RuleStatus(DEFINED, AUDITED),
    "LEG-3": RuleStatus(DEFINED, AUDITED),
    "LEG-4": RuleStatus(DEFINED, AUDITED),
    "LEG-5": RuleStatus(DEFINED, Audited(reported_as='HDR-8')),
    "LEG-6": RuleStatus(DEFINED, AUDITED),
    "LEG-7": RuleStatus(DEFINED, Audited(reported_as='unknown')),
    "LEG-8": RuleStatus(DEFINED, Audited(reported_as='note')),
    "LEG-9": RuleStatus(DEFINED, Undecidable('an obligation of the checker (it migrates in D08, model.migrate.migrate_legacy), not of a log')),
    "LEG-10": RuleStatus(NotDefined('strict-mode refusal of hand-edited fixtures: not yet audited'), Audited('as LOG-1, LOG-17 and HDR-8', reported_as='LOG-1')),
    # DIA
    "DIA-1": RuleStatus(DEFINED, Audited('a compact/* in a D08 log mixes the dialects', reported_as='unknown')),
    "DIA-2": RuleStatus(DEFINED, AUDITED),
    "DIA-3": RuleStatus(DEFINED, Audited('owner null only between turns; brackets by sessionspec.check.compaction_audit.audit_compactions', reported_as='LOG-13')),
    "DIA-4": RuleStatus(DEFINED, AUDITED),
    "DIA-5": RuleStatus(DEFINED, Audited('the end-seed after a seed; the compaction lock half is in-process')),
    "DIA-6": RuleStatus(DEFINED, AUDITED),
    "DIA-7": RuleStatus(DEFINED, AUDITED),
    "DIA-8": RuleStatus(DEFINED, Audited('field types; the canonical order by sessionspec.model.header_log.check_canonical_header (findings HDR-2)')),
    "DIA-9": RuleStatus(DEFINED, Audited('the request/context shape; header equality is a definition')),
    "DIA-10": RuleStatus(DEFINED, AUDITED),
    "DIA-11": RuleStatus(DEFINED, Audited(reported_as='SURF-7')),
    "DIA-12": RuleStatus(OutOfScope('The D08 step order is a property of the later loop; the loop model simulates A55 only (RULES §0.2, `run_turn` refuses D08 with DIA-8). D08 logs are checked by the log rules (surface, derivation, header, compaction), not simulated.'), Audited("no entering user/message before step/start or after an attempt's first chunk (unless it failed); no request/context in or after a streamed attempt; requests by check_request_points")),
    "DIA-13": RuleStatus(DEFINED, Audited("a legacy event inside a turn the D08 loop wrote; the migration itself is the checker's, model.migrate.migrate_legacy")),
    "DIA-14": RuleStatus(DEFINED, AUDITED),
    "DIA-15": RuleStatus(OutOfScope('The D08 cancel shapes (`interrupted: true`, `ABORTED_BEFORE_DISPATCH` results) are written by the later loop, which the model does not simulate (see DIA-12).'), Audited("an interrupted message's tool calls and the message a cancelled visible stream records; the ABORTED_BEFORE_DISPATCH results of a cancelled batch are not yet checked")),
    "DIA-16": RuleStatus(DEFINED, AUDITED),
    "DIA-17": RuleStatus(DEFINED, Undecidable(_SUMMARY_REQUEST)),
    "DIA-18": RuleStatus(DEFINED, AUDITED),
    "DIA-19": RuleStatus(DEFINED, AUDITED),
    "DIA-20": RuleStatus(DEFINED, Audited('the manual range (retainTokens 0); idle-only by LOG-13 (owner null between turns)')),
    "DIA-21": RuleStatus(NotDefined('a permission (MAY): nothing to define or audit'), Undecidable('a permission (MAY): the header may carry origin')),
    # FMT
    "FMT-1": RuleStatus(DEFINED, AUDITED),
    "FMT-2": RuleStatus(DEFINED, AUDITED),
    "FMT-3": RuleStatus(DEFINED, Undecidable('an obligation of the checker: either key order is accepted')),
    "FMT-4": RuleStatus(NotDefined('an example of the file format (FMT-1/FMT-5 define it)'), Audited('with sessionspec.model.log_only_shape.check_compaction_shape', reported_as='CMP-1')),
    "FMT-5": RuleStatus(DEFINED, Audited(reported_as='CHK-5')),
    "FMT-6": RuleStatus(DEFINED, Audited('scrubbed fields skip type checks and equality', reported_as='note')),
    "FMT-7": RuleStatus(NotDefined(_CHECKER), Audited("with each turn's writer, sessionspec.model.writers (a writer's rule binds its own events)", reported_as='LOG-13')),
    "FMT-8": RuleStatus(DEFINED, Audited(reported_as='FMT-9')),
    "FMT-9": RuleStatus(DEFINED, AUDITED),
    "FMT-10": RuleStatus(DEFINED, Audited(reported_as='unknown')),
    "FMT-11": RuleStatus(NotDefined(_CHECKER), AUDITED),
    # properties (P-…): the model facet says whether spec/ states the property as a predicate
    "P-LOG-1": RuleStatus(DEFINED, Audited(reported_as='LOG-1')),
    "P-LOG-2": RuleStatus(DEFINED, Undecidable('a rejected append leaves nothing in the log')),
    "P-LOG-3": RuleStatus(DEFINED, Audited(reported_as='LOG-4')),
    "P-LOG-4": RuleStatus(NotDefined(_TESTED), Audited(reported_as='LEG-2')),
    "P-LOG-5": RuleStatus(DEFINED, Undecidable(_MODEL)),
    "P-LOG-6": RuleStatus(DEFINED, Audited('on the closers a log holds', reported_as='LOG-14')),
    "P-LOG-7": RuleStatus(NotDefined(_TESTED), Audited(reported_as='FMT-11')),
    "P-SURF-1": RuleStatus(DEFINED, Audited(reported_as='SURF-2')),
    "P-SURF-2": RuleStatus(DEFINED, Audited(reported_as='SURF-5')),
    "P-SURF-3": RuleStatus(DEFINED, Undecidable(_MODEL)),
    "P-SURF-4": RuleStatus(DEFINED, Audited(reported_as='SURF-7')),
    "P-SURF-5": RuleStatus(DEFINED, Undecidable(_MODEL)),
    "P-DER-1": RuleStatus(DEFINED, Undecidable(_MODEL)),
    "P-DER-2": RuleStatus(DEFINED, Undecidable(_MODEL)),
    "P-DER-3": RuleStatus(DEFINED, Undecidable(_MODEL)),
    "P-DER-4": RuleStatus(DEFINED, Undecidable(_MODEL)),
    "P-DER-5": RuleStatus(NotDefined(_TESTED), Undecidable(_MODEL)),
    "P-HDR-1": RuleStatus(DEFINED, Undecidable(_MODEL)),
    "P-HDR-2": RuleStatus(DEFINED, Undecidable(_MODEL)),
    "P-LOOP-1": RuleStatus(DEFINED, Audited('with sessionspec.model.header_log.check_header_record', reported_as='FMT-9')),
    "P-LOOP-2": RuleStatus(NotDefined(_TESTED), Undecidable("needs the previous instance's last request, which is not in the log")),
    "P-LOOP-3": RuleStatus(NotDefined(_TESTED), Undecidable('the agent options are not in the log')),
    "P-LOOP-4": RuleStatus(DEFINED, Audited('what a log shows: step/end before turn/end, as many step/end as step/start (where the interruption landed is not logged)', reported_as='LOG-13')),
    "P-LOOP-5": RuleStatus(NotDefined(_TESTED), Audited(reported_as='LOOP-3')),
    "P-LOOP-6": RuleStatus(NotDefined(_TESTED), Undecidable(_PREFIX)),
    "P-LOOP-7": RuleStatus(DEFINED, Audited('turn numbers 1..n; a prompt before any step (LOOP-3); the prompt and its separate contexts are all user/messages', reported_as='LOG-13')),
    "P-PFX-1": RuleStatus(DEFINED, Undecidable("composition is not logged; its visible part (one prefix per instance) is PFX-15's")),
    "P-PFX-2": RuleStatus(NotDefined(_TESTED), Undecidable(_PREFIX)),
    "P-PFX-3": RuleStatus(NotDefined(_TESTED), Undecidable(_PREFIX)),
    "P-PFX-4": RuleStatus(DEFINED, Undecidable(_PREFIX)),
    "P-PFX-5": RuleStatus(NotDefined(_TESTED), Undecidable(_PREFIX)),
    "P-PFX-6": RuleStatus(DEFINED, Undecidable(_PREFIX)),
    "P-PFX-7": RuleStatus(DEFINED, Audited(reported_as='HDR-2')),
    "P-PFX-8": RuleStatus(DEFINED, Undecidable('prefix content on the surface cannot be told from a user message with the same text')),
    "P-INV-1": RuleStatus(DEFINED, Audited('every request can be rebuilt; the sent one is not logged', reported_as='FMT-9')),
    "P-INV-2": RuleStatus(DEFINED, Undecidable(_REQUEST)),
    "P-INV-3": RuleStatus(NotDefined(_TESTED), Undecidable(_REQUEST)),
    "P-INV-4": RuleStatus(DEFINED, Undecidable(_SENT_REQUESTS)),
    "P-INV-5": RuleStatus(NotDefined(_TESTED), Undecidable(_RUNTIME)),
    "P-INV-6": RuleStatus(NotDefined(_TESTED), Undecidable(_REQUEST)),
    "P-CMP-1": RuleStatus(DEFINED, Audited(reported_as='CMP-22')),
    "P-CMP-2": RuleStatus(DEFINED, Audited(reported_as='CMP-23')),
    "P-CMP-3": RuleStatus(DEFINED, Audited(reported_as='CMP-10')),
    "P-CMP-4": RuleStatus(DEFINED, Audited('a range the retention walk selects for some retainTokens; the shortest tail for the configured retainTokens with --deployment', reported_as='CMP-12')),
    "P-CMP-5": RuleStatus(DEFINED, Undecidable(_REQUEST)),
    "P-CMP-6": RuleStatus(DEFINED, Audited(reported_as='CMP-21')),
    "P-CMP-7": RuleStatus(DEFINED, Audited(reported_as='CMP-25')),
    "P-CMP-8": RuleStatus(NotDefined(_TESTED), Undecidable("a surface append during summarization is CMP-19's; the rejected commit leaves only compact/end {error}")),
    "P-CMP-9": RuleStatus(DEFINED, WithDeployment('no compaction event at a trigger point below floor(cw x thresholdRatio); findings name CMP-8')),
    "P-CMP-10": RuleStatus(DEFINED, Audited('A55: a committed overflow compaction is followed by a retry step unless interrupted, and lies between the failed step/end and the retry', reported_as='CMP-7')),
    "P-CMP-11": RuleStatus(DEFINED, Audited(reported_as='CMP-6')),
    "P-CMP-12": RuleStatus(DEFINED, WithDeployment("after each write of a pressure point, another transaction exactly when CMP-8's loop runs one (over the threshold, attempts left, a range selectable, the last not failed); findings name CMP-8")),
    "P-MTR-1": RuleStatus(DEFINED, Undecidable(_MODEL)),
    "P-MTR-2": RuleStatus(DEFINED, Undecidable(_MODEL)),
    "P-MTR-3": RuleStatus(DEFINED, Undecidable(_MODEL)),
    "P-MTR-4": RuleStatus(NotDefined(_TESTED), Undecidable(_MODEL)),
    "P-PRN-1": RuleStatus(DEFINED, Undecidable(_MODEL)),
    "P-PRN-2": RuleStatus(DEFINED, Audited('single-node content-only prunes citing [seq]; a second prune (PRN-5)', reported_as='PRN-4')),
    "P-PRN-3": RuleStatus(DEFINED, Audited('inside an open turn; whether pressure qualified needs the context window', reported_as='LOG-13')),
    "P-CHK-1": RuleStatus(NotDefined(_TESTED), Audited('decoding; packing is not judged (CHK-4)', reported_as='CHK-5')),
    "P-DIA-1": RuleStatus(NotDefined(_TESTED), Undecidable(_MODEL)),
    "P-DIA-2": RuleStatus(DEFINED, Audited(reported_as='DIA-16')),
}

# The reasons that say only a request shows the rule (the request sent to the model, or the summarizer's).
REQUEST_ONLY_REASONS: Final = frozenset({_REQUEST, _SUMMARY_REQUEST, _DEV_INVARIANT, _SENT_REQUESTS})
