"""The rule-by-rule audit table: what ``sessionspec check`` decides from a log alone.

For every rule and property of ``spec/rulebook.md`` one entry: the checker
function that audits it (``AUDITED``), or why a log cannot decide it
(``UNDECIDABLE``), or -- honestly -- that a log could decide it but the
checker does not yet (``NOT_YET``).  ``LOADER_REFUSES`` names the rules the
real loader enforces too (LOG-8 seed validation, LOG-17 persistence load,
line decoding); a finding under any other rule is one the loader accepts.
:func:`render` writes the table into ``docs/check.md`` (a test keeps the
two equal and every registered ID in exactly one column).
"""

from __future__ import annotations

from typing import Final

from model.rejected import FailureKind

# rule -> (checker function, what of the rule it decides when not all of it)
AUDITED: Final[dict[str, tuple[str, str]]] = {
    "LOG-1": ("model.surface.plan_surface_event", ""),
    "LOG-2": ("model.codec.event_from_json", ""),
    "LOG-3": ("model.codec.event_from_json", ""),
    "LOG-4": ("model.jsonval.parse_json", ""),
    "LOG-8": ("sessionspec.check.audit.check_load_shapes", ""),
    "LOG-9": ("sessionspec.check.shape_audit.check_core_shape", "live events; D08 keeps the shapes DIA-10/13 did not change"),
    "LOG-10": ("sessionspec.check.shape_audit.check_plugin_shape", "the session/title shape; no surface metadata by model.surface.surface_op_of (SURF-2)"),
    "LOG-11": ("sessionspec.check.shape_audit.check_turn_end_reason", "shapes, both dialects; max-tokens precedence in sessionspec.check.loop_audit.audit_loop"),
    "LOG-12": ("sessionspec.check.shape_audit.check_prompt_shape", "A55"),
    "LOG-13": ("sessionspec.check.audit.check_nesting", "every event, the seed too: the companion replays it (QF-12)"),
    "LOG-14": ("sessionspec.check.repair_audit.check_closers", "A55 byte-exact; D08 codes and provenance"),
    "LOG-15": ("sessionspec.check.audit.check_fork_seed", "when the parent file lies beside the child"),
    "LOG-16": ("sessionspec.check.loop_audit.audit_loop", "A55: a stepless turn ends completed only around one log-only event (its trigger is not pinned by the book)"),
    "LOG-17": ("model.codec.parse_session_header", "version; header-delta, mode/set and fallback by LEG-1..3"),
    "LOG-18": ("model.codec.parse_session_header", ""),
    "SURF-2": ("model.surface.surface_op_of", ""),
    "SURF-3": ("model.surface.surface_op_of", ""),
    "SURF-4": ("model.surface.check_provenance", ""),
    "SURF-5": ("model.surface.replacement_range", ""),
    "SURF-6": ("model.surface.check_coverage", ""),
    "SURF-7": ("model.surface.check_tool_result_rewrite", ""),
    "SURF-9": ("model.surface.plan_surface_event", ""),
    "SURF-13": ("sessionspec.check.provenance_audit.check_message_provenance", "messages and tool results; checkpoints and prunes by sessionspec.check.compaction_audit.audit_compactions"),
    "HDR-1": ("sessionspec.check.audit.check_header_types", ""),
    "HDR-2": ("sessionspec.check.shape_audit.check_header_canonical", ""),
    "HDR-7": ("sessionspec.check.shape_audit.check_header_canonical", "data keys; reasons by sessionspec.check.audit.check_header_reasons"),
    "HDR-8": ("model.header.check_llm_shape", ""),
    "HDR-9": ("sessionspec.check.audit.check_request_points", "every request has a header in force"),
    "PFX-7": ("sessionspec.check.audit.check_header_reasons", "its trace: one prefix per instance (PFX-15)"),
    "PFX-10": ("sessionspec.check.shape_audit.check_header_canonical", "an empty messagePrefix is never written (HDR-2)"),
    "PFX-15": ("sessionspec.check.audit.check_header_reasons", ""),
    "LOOP-2": ("sessionspec.check.audit.check_nesting", "turn numbers (LOG-13)"),
    "LOOP-3": ("sessionspec.check.loop_audit.audit_loop", "blocked prompts (one per turn, before the prompt) and the prompt before a step (A55)"),
    "LOOP-4": ("sessionspec.check.loop_audit.check_prefix_contexts", ""),
    "LOOP-9": ("sessionspec.check.loop_audit.audit_loop", "anchors per visible instance; reasons by sessionspec.check.audit.check_header_reasons"),
    "LOOP-10": ("sessionspec.check.loop_audit.audit_loop", "A55 (D08: DIA-7)"),
    "LOOP-11": ("sessionspec.check.loop_audit.audit_loop", "one message per step, provenance, usage, sourceEventSeqs, max-tokens, a successful stream's message (A55); steps a loop wrote (FMT-7 Writers)"),
    "LOOP-12": ("sessionspec.check.loop_audit.audit_loop", ""),
    "LOOP-5": ("sessionspec.check.loop_audit.audit_loop", "the stage a log shows: steering drained before step/start or after the message and its results"),
    "LOOP-13": ("sessionspec.check.loop_audit.audit_loop", "the turn a steering message names, and where it lies (LOOP-5)"),
    "LOOP-16": ("sessionspec.check.loop_audit.audit_loop", "A55: the step an error turn/end names (last started, pending, or 0)"),
    "LOOP-14": ("sessionspec.check.loop_audit.audit_loop", "what follows a failed step"),
    "LOOP-15": ("sessionspec.check.audit.check_nesting", "its trace: step/end before turn/end (LOG-13)"),
    "LOOP-17": ("sessionspec.check.audit.check_nesting", "its trace: an open step closed before turn/end (LOG-13)"),
    "INV-7": ("sessionspec.check.audit.check_request_points", "request points; chunk provenance by sessionspec.check.provenance_audit.check_message_provenance"),
    "CMP-1": ("sessionspec.check.shape_audit.check_compaction_shape", ""),
    "CMP-2": ("sessionspec.check.compaction_audit.audit_compactions", ""),
    "CMP-5": ("sessionspec.check.compaction_rules_audit.audit_compaction_rules", "no automatic bracket before any header"),
    "CMP-6": ("sessionspec.check.compaction_rules_audit.check_bracket_placement", ""),
    "CMP-7": ("sessionspec.check.compaction_rules_audit.check_bracket_placement", "A55: a bracket after a failed step only for a logged CONTEXT_WINDOW_EXCEEDED (or an unlogged failure); a committed one is followed by the retry"),
    "CMP-10": ("sessionspec.check.compaction_audit.audit_compactions", ""),
    "CMP-9": ("sessionspec.check.retention_audit.check_zero_retention_range", "the range selected with retainTokens 0; the prune and retry decisions depend on in-process results"),
    "CMP-11": ("sessionspec.check.retention_audit.check_zero_retention_range", "exactly for retainTokens 0 (overflow, manual); otherwise a non-empty retained tail (CMP-12), its size needing retainTokens, not logged"),
    "CMP-12": ("sessionspec.check.compaction_rules_audit.check_range_anchoring", ""),
    "CMP-13": ("sessionspec.check.compaction_audit.audit_compactions", ""),
    "CMP-14": ("sessionspec.check.compaction_audit.audit_compactions", ""),
    "CMP-15": ("sessionspec.check.compaction_audit.audit_compactions", ""),
    "CMP-19": ("sessionspec.check.compaction_rules_audit.check_bracket_body", ""),
    "CMP-20": ("sessionspec.check.compaction_audit.audit_compactions", ""),
    "CMP-21": ("sessionspec.check.compaction_audit.audit_compactions", "skipped where a placeholder prevents pricing"),
    "CMP-22": ("sessionspec.check.compaction_audit.audit_compactions", "with sessionspec.check.compaction_rules_audit.check_bracket_closed (A55: closed before the loop goes on)"),
    "CMP-23": ("sessionspec.check.compaction_rules_audit.check_bracket_body", "and check_bracket_closed (an open start only before a failing turn end, Q-12)"),
    "CMP-25": ("sessionspec.check.compaction_audit.audit_compactions", ""),
    "MTR-6": ("sessionspec.check.audit.check_nesting", "the meter's step vetoes are LOG-13's"),
    "MTR-9": ("sessionspec.check.provenance_audit.check_message_provenance", ""),
    "PRN-3": ("sessionspec.check.compaction_audit.audit_compactions", ""),
    "PRN-4": ("sessionspec.check.compaction_audit.audit_compactions", ""),
    "PRN-5": ("sessionspec.check.compaction_audit.audit_compactions", "a second prune of a pruned node is not pruneContent of it (reported as PRN-3)"),
    "PRN-6": ("sessionspec.check.compaction_rules_audit.check_prune_placement", "at compactIfNeeded's windows (CMP-6/CMP-7, DIA-6/DIA-7); inside an open turn by check_nesting (LOG-13)"),
    "CHK-5": ("model.codec.expand_row", ""),
    "CHK-6": ("model.codec.expand_row", ""),
    "CHK-8": ("model.surface.plan_surface_event", "contiguity after expansion (LOG-1)"),
    "LEG-1": ("model.codec.event_from_json", ""),
    "LEG-2": ("sessionspec.check.audit.check_load_shapes", ""),
    "LEG-3": ("sessionspec.check.audit.check_load_shapes", ""),
    "LEG-4": ("sessionspec.check.audit.check_load_shapes", ""),
    "LEG-5": ("model.header.check_llm_shape", ""),
    "LEG-6": ("model.header.check_llm_shape", ""),
    "LEG-7": ("sessionspec.check.audit.pre_a55_designs", ""),
    "LEG-8": ("sessionspec.check.audit.placeholder_notes", ""),
    "LEG-10": ("model.surface.plan_surface_event", "as LOG-1, LOG-17 and HDR-8"),
    "DIA-1": ("model.migrate.dialect_evidence", "a compact/* in a D08 log mixes the dialects"),
    "DIA-2": ("sessionspec.check.compaction_audit.audit_compactions", ""),
    "DIA-3": ("sessionspec.check.audit.check_nesting", "owner null only between turns; brackets by sessionspec.check.compaction_audit.audit_compactions"),
    "DIA-4": ("sessionspec.check.shape_audit.check_compaction_shape", ""),
    "DIA-5": ("sessionspec.check.audit.check_end_seed", "the end-seed after a seed; the compaction lock half is in-process"),
    "DIA-6": ("sessionspec.check.compaction_rules_audit.check_bracket_placement", ""),
    "DIA-7": ("sessionspec.check.audit.check_retry_attempts", ""),
    "DIA-8": ("sessionspec.check.audit.check_header_types", "field types; the canonical order by sessionspec.check.shape_audit.check_header_canonical (findings HDR-2)"),
    "DIA-9": ("sessionspec.check.shape_audit.check_plugin_shape", "the request/context shape; header equality is a definition"),
    "DIA-10": ("sessionspec.check.audit.check_d08_message_shapes", ""),
    "DIA-11": ("model.surface.fold_surface", ""),
    "DIA-13": ("sessionspec.check.writers.check_turn_dialects", "a legacy event inside a turn the D08 loop wrote; the migration itself is the checker's, model.migrate.migrate_legacy"),
    "DIA-12": ("sessionspec.check.loop_audit.audit_loop", "no entering user/message before step/start or after an attempt's first chunk (unless it failed); no request/context in or after a streamed attempt; requests by check_request_points"),
    "DIA-14": ("sessionspec.check.audit.check_d08_turn_end", ""),
    "DIA-16": ("sessionspec.check.compaction_audit.audit_compactions", ""),
    "DIA-18": ("sessionspec.check.compaction_audit.audit_compactions", ""),
    "DIA-19": ("sessionspec.check.compaction_audit.audit_compactions", ""),
    "DIA-20": ("sessionspec.check.retention_audit.check_zero_retention_range", "the manual range (retainTokens 0); idle-only by LOG-13 (owner null between turns)"),
    "FMT-1": ("sessionspec.check.logfile.read_stream", ""),
    "FMT-2": ("model.jsonval.parse_json", ""),
    "FMT-4": ("sessionspec.check.compaction_audit.audit_compactions", "with sessionspec.check.shape_audit.check_compaction_shape"),
    "FMT-5": ("model.codec.expand_row", ""),
    "FMT-6": ("sessionspec.check.opaque.is_opaque", "scrubbed fields skip type checks and equality"),
    "FMT-7": ("sessionspec.check.audit.audit_events", "with each turn's writer, sessionspec.check.writers (a writer's rule binds its own events)"),
    "FMT-8": ("sessionspec.check.audit.check_request_points", ""),
    "FMT-9": ("sessionspec.check.audit.check_header_reasons", ""),
    "FMT-10": ("model.migrate.dialect_evidence", ""),
    "FMT-11": ("sessionspec.check.audit.check_fork_seed", ""),
    # properties a log shows (◆ in the book, and the model properties with a log trace)
    "P-LOG-1": ("model.surface.plan_surface_event", ""),
    "P-LOG-3": ("model.jsonval.parse_json", ""),
    "P-LOG-4": ("sessionspec.check.audit.check_load_shapes", ""),
    "P-LOG-6": ("sessionspec.check.repair_audit.check_closers", "on the closers a log holds"),
    "P-LOG-7": ("sessionspec.check.audit.check_fork_seed", ""),
    "P-SURF-1": ("model.surface.surface_op_of", ""),
    "P-SURF-2": ("model.surface.fold_surface", ""),
    "P-SURF-4": ("model.surface.check_tool_result_rewrite", ""),
    "P-LOOP-1": ("sessionspec.check.loop_audit.audit_loop", "with sessionspec.check.audit.check_header_reasons"),
    "P-LOOP-4": ("sessionspec.check.audit.check_nesting", "what a log shows: step/end before turn/end, as many step/end as step/start (where the interruption landed is not logged)"),
    "P-LOOP-5": ("sessionspec.check.loop_audit.audit_loop", ""),
    "P-LOOP-7": ("sessionspec.check.audit.check_nesting", "turn numbers 1..n; a prompt before any step (LOOP-3); the prompt and its separate contexts are all user/messages"),
    "P-PFX-7": ("sessionspec.check.shape_audit.check_header_canonical", ""),
    "P-INV-1": ("sessionspec.check.audit.check_request_points", "every request can be rebuilt; the sent one is not logged"),
    "P-CMP-1": ("sessionspec.check.compaction_audit.audit_compactions", ""),
    "P-CMP-2": ("sessionspec.check.compaction_rules_audit.check_bracket_body", ""),
    "P-CMP-3": ("sessionspec.check.compaction_audit.audit_compactions", ""),
    "P-CMP-4": ("sessionspec.check.compaction_rules_audit.check_range_anchoring", "head-anchored, never the whole surface; the shortest tail needs retainTokens"),
    "P-CMP-6": ("sessionspec.check.compaction_audit.audit_compactions", ""),
    "P-CMP-7": ("sessionspec.check.compaction_audit.audit_compactions", ""),
    "P-CMP-10": ("sessionspec.check.compaction_rules_audit.check_overflow_retry", "A55: a committed overflow compaction is followed by a retry step unless interrupted, and lies between the failed step/end and the retry"),
    "P-CMP-11": ("sessionspec.check.compaction_rules_audit.check_bracket_placement", ""),
    "P-PRN-2": ("sessionspec.check.compaction_audit.audit_compactions", "single-node content-only prunes citing [seq]; a second prune (PRN-5)"),
    "P-PRN-3": ("sessionspec.check.audit.check_nesting", "inside an open turn; whether pressure qualified needs the context window"),
    "P-CHK-1": ("model.codec.expand_row", "decoding; packing is not judged (CHK-4)"),
    "P-DIA-2": ("sessionspec.check.compaction_audit.audit_compactions", ""),
}

# Audited rules whose findings carry another rule's ID (the check is that
# rule's veto), or that decide no finding: "note" (a file note) or "unknown"
# (the verdict's reason).  Every other audited rule names itself.
REPORTED_AS: Final[dict[str, str]] = {
    "LOG-8": "LEG-2", "SURF-9": "SURF-5", "HDR-9": "FMT-9", "FMT-8": "FMT-9",
    "PFX-7": "PFX-15", "PFX-10": "HDR-2", "LOOP-2": "LOG-13", "LOOP-15": "LOG-13", "LOOP-17": "LOG-13",
    "MTR-6": "LOG-13", "DIA-3": "LOG-13", "CHK-6": "CHK-5", "CHK-8": "LOG-1",
    "LEG-10": "LOG-1", "LEG-5": "HDR-8", "CMP-11": "CMP-9", "FMT-4": "CMP-1", "FMT-5": "CHK-5",
    "DIA-11": "SURF-7", "FMT-7": "LOG-13", "LEG-7": "unknown", "LEG-8": "note", "FMT-6": "note",
    "FMT-10": "unknown", "DIA-1": "unknown",
    "P-LOG-1": "LOG-1", "P-LOG-3": "LOG-4", "P-LOG-4": "LEG-2", "P-LOG-6": "LOG-14", "P-LOG-7": "FMT-11",
    "P-SURF-1": "SURF-2", "P-SURF-2": "SURF-5", "P-SURF-4": "SURF-7", "P-LOOP-1": "FMT-9", "P-LOOP-5": "LOOP-3",
    "P-PFX-7": "HDR-2", "P-INV-1": "FMT-9", "P-CMP-1": "CMP-22", "P-CMP-2": "CMP-23", "P-CMP-3": "CMP-10",
    "P-CMP-4": "CMP-12", "P-CMP-6": "CMP-21", "P-CMP-7": "CMP-25", "P-CMP-11": "CMP-6", "P-CHK-1": "CHK-5",
    "P-DIA-2": "DIA-16", "PRN-5": "PRN-3", "P-LOOP-4": "LOG-13", "P-LOOP-7": "LOG-13", "P-CMP-10": "CMP-7",
    "P-PRN-2": "PRN-4", "P-PRN-3": "LOG-13",
}

_REQUEST: Final = "the request sent to the model is not in the log (the checker rebuilds it by this rule)"
_RUNTIME: Final = "in-process behaviour of one append or call; a log records only committed events"
_DEFINITION: Final = "defines a computation the checker performs over the log; no event can break it"
_PREFIX: Final = "composition writes no event; a log shows the prefix only on the instance's anchor header"
_CONFIG: Final = "needs the compaction configuration and the model's context window, which the log does not record"
_MODEL: Final = "a property of the model's functions over every log (Hypothesis, spec/), not of one log"

UNDECIDABLE: Final[dict[str, str]] = {
    "LOG-5": _RUNTIME,
    "LOG-6": "a rejected append leaves nothing in the log",
    "LOG-7": "a reentrant append is rejected and leaves nothing in the log",
    "SURF-1": _DEFINITION,
    "SURF-8": _DEFINITION,
    "SURF-10": "equality of two implementations of the fold, not a property of a log",
    "SURF-11": _DEFINITION,
    "SURF-12": "forbids the fold from validating more; constrains implementations, not logs",
    **{f"DER-{n}": _DEFINITION for n in range(1, 9)},
    "DER-9": _RUNTIME,
    "HDR-3": _DEFINITION,
    "HDR-4": _DEFINITION,
    "HDR-5": _DEFINITION,
    "HDR-6": _DEFINITION,
    "PFX-1": _PREFIX,
    "PFX-2": _PREFIX,
    "PFX-3": _PREFIX,
    "PFX-4": _PREFIX,
    "PFX-5": "an interrupted composition writes no event; the turn's events are LOOP-15's",
    "PFX-6": _PREFIX,
    "PFX-8": "which appends ran during composition is not logged; all of them precede step/start, so the boundary holds them",
    "PFX-9": "prefix content on the surface cannot be told from a user message with the same text",
    "PFX-11": _REQUEST,
    "PFX-12": "a throwing contributor leaves only turn/end {error} naming an unopened step, like other pre-step failures (quirk Q-4)",
    "PFX-13": _PREFIX,
    "PFX-14": _PREFIX,
    "PFX-16": "a permission (MAY): an anchor may come in a later turn (Q-5); nothing to break",
    "LOOP-1": "per-instance state lives in the process; a log shows instances only through anchors (LOOP-9)",
    "LOOP-6": _REQUEST,
    "LOOP-7": "in-process stages; the ones that write events are judged by FMT-9 (header before the stream) and LOOP-11/12",
    "LOOP-8": "the agent options are not in the log, and a resume header may differ from the last one (Q-10)",
    **{f"WIRE-{n}": _REQUEST for n in range(1, 7)},
    **{f"INV-{n}": "the dev invariant runs on the live request at dispatch; the request is not in the log" for n in range(1, 5)},
    "INV-5": _REQUEST,
    "INV-6": "holds for every rebuilt request of an append-only surface; the sent requests are not in the log",
    "CMP-3": _CONFIG,
    "CMP-4": _CONFIG,
    "CMP-8": _CONFIG,
    "CMP-16": "the summarization request is not in the log",
    "CMP-17": "the summarizer call is not in the log (only its recorded provider/model)",
    "CMP-18": "binds the default summarizer; a custom one may return any summary, and the log does not say which ran",
    "CMP-24": "a request/header inside a bracket may come from another writer (CMP-19 tolerates it); the next request is rebuilt, not logged",
    "CMP-26": "the abort signal is not logged; an abort after a committed compaction is quirk Q-2",
    "MTR-1": _DEFINITION,
    "MTR-2": _DEFINITION,
    "MTR-3": _DEFINITION,
    "MTR-4": _DEFINITION,
    "MTR-5": _DEFINITION,
    "MTR-7": _DEFINITION,
    "MTR-8": _DEFINITION,
    "MTR-10": _DEFINITION,
    "MTR-11": _DEFINITION,
    "PRN-1": _CONFIG,
    "PRN-2": "the size measure PRN-3's recomputation uses; no event can break it",
    "CHK-1": "rows are written by the packer; a log may be stored unpacked (ground truth, snapshots), and read rows are CHK-5's",
    "CHK-2": "defines which events pack; an unpacked file is valid",
    "CHK-3": "defines runs; an unpacked file is valid",
    "CHK-4": "packing is per flushed batch and optional per writer, so an unpacked run is not an error; short rows are quirk Q-29",
    "CHK-7": _DEFINITION,
    "LEG-9": "an obligation of the checker (it migrates in D08, model.migrate.migrate_legacy), not of a log",
    "DIA-17": "the summarization request is not in the log",
    "DIA-21": "a permission (MAY): the header may carry origin",
    "FMT-3": "an obligation of the checker: either key order is accepted",
    "P-LOG-2": "a rejected append leaves nothing in the log",
    "P-LOG-5": _MODEL,
    "P-SURF-3": _MODEL,
    "P-SURF-5": _MODEL,
    **{f"P-DER-{n}": _MODEL for n in range(1, 6)},
    "P-HDR-1": _MODEL,
    "P-HDR-2": _MODEL,
    "P-LOOP-2": "needs the previous instance's last request, which is not in the log",
    "P-LOOP-3": "the agent options are not in the log",
    "P-LOOP-6": _PREFIX,
    "P-PFX-1": "composition is not logged; its visible part (one prefix per instance) is PFX-15's",
    "P-PFX-2": _PREFIX,
    "P-PFX-3": _PREFIX,
    "P-PFX-4": _PREFIX,
    "P-PFX-5": _PREFIX,
    "P-PFX-6": _PREFIX,
    "P-PFX-8": "prefix content on the surface cannot be told from a user message with the same text",
    "P-INV-2": _REQUEST,
    "P-INV-3": _REQUEST,
    "P-INV-4": "holds for every rebuilt request of an append-only surface; the sent requests are not in the log",
    "P-INV-5": _RUNTIME,
    "P-INV-6": _REQUEST,
    "P-CMP-5": _REQUEST,
    "P-CMP-8": "a surface append during summarization is CMP-19's; the rejected commit leaves only compact/end {error}",
    "P-CMP-9": _CONFIG,
    "P-CMP-12": _CONFIG,
    "P-MTR-1": _MODEL,
    "P-MTR-2": _MODEL,
    "P-MTR-3": _MODEL,
    "P-MTR-4": _MODEL,
    "P-PRN-1": _MODEL,
    "P-DIA-1": _MODEL,
}

# A log could decide these, but the checker does not (yet).
NOT_YET: Final[dict[str, str]] = {
    "DIA-15": "ABORTED_BEFORE_DISPATCH results of a cancelled batch are not checked (an interrupted message's tool calls are, and the message a cancelled visible stream records)",
}

# Rules the real loader enforces too (LOG-8 seed validation, LOG-17 load, line decoding).
LOADER_REFUSES: Final = frozenset({
    "LOG-1", "LOG-2", "LOG-3", "LOG-4", "LOG-8", "LOG-17", "LOG-18",
    "SURF-2", "SURF-3", "SURF-4", "SURF-5", "SURF-6", "SURF-7", "SURF-9",
    "HDR-8", "LEG-1", "LEG-2", "LEG-3", "LEG-4", "LEG-5", "LEG-6", "LEG-10",
    "CHK-5", "CHK-8", "FMT-1", "FMT-5", "DIA-10", "DIA-11",
})


# Rules the harness's session invariant companion vetoes at load (LOG-13: it replays the seed's
# relational checks on session/created), on in the harness's own tests and dev runs, off in a bare
# core load (the adapter's check op with HARNESS_ADAPTER_INVARIANTS=0).
COMPANION_REFUSES: Final = frozenset({"LOG-13"})

# The three answers of the real loader, from the strictest load to none (docs/check.md).
LOADER_LEVELS: Final = ("refuses", "companion-refuses", "accepts")


def loader_level(rule: str, kind: FailureKind) -> str:
    """The loader's answer for one finding in three levels: ``refuses`` (the core load refuses it),
    ``companion-refuses`` (only the invariant companion does), ``accepts``."""
    if kind is not FailureKind.INVALID:
        return "accepts"
    if rule in LOADER_REFUSES:
        return "refuses"
    return "companion-refuses" if rule in COMPANION_REFUSES else "accepts"


def loader_answer(rule: str, kind: FailureKind) -> str:
    """``refuses`` when the real loader rejects a log for this finding too,
    else ``accepts`` (the loader has no checker limits, and quirks are what
    the real code does)."""
    return "refuses" if kind is FailureKind.INVALID and rule in LOADER_REFUSES else "accepts"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(ids: list[str]) -> str:
    """The markdown table for ``docs/check.md``, in the given (book) order."""
    rows = ["| rule | checked by (from a log alone) | loader refuses it too? | or: why a log cannot decide it |", "|---|---|---|---|"]
    for rid in ids:
        if rid in AUDITED:
            checker, part = AUDITED[rid]
            named = REPORTED_AS.get(rid)
            shown = {"note": "a file note, never a finding", "unknown": "the verdict unknown, with the reason"}.get(
                named or "", f"findings name {named}")
            notes = "; ".join(x for x in (_cell(part), shown if named else "") if x)
            where = f"`{checker}`" + (f" ({notes})" if notes else "")
            loader = loader_level(rid, FailureKind.INVALID).replace("companion-refuses", "with the invariant companion")
            rows.append(f"| {rid} | {where} | {loader} | |")
        elif rid in NOT_YET:
            rows.append(f"| {rid} | **not yet audited**: {_cell(NOT_YET[rid])} | | |")
        elif rid in UNDECIDABLE:
            rows.append(f"| {rid} | | | {_cell(UNDECIDABLE[rid])} |")
        else:
            rows.append(f"| {rid} | **missing from the audit table** | | |")
    return "\n".join(rows) + "\n"


START_MARK: Final = "<!-- audit-table:start (generated by: python -m sessionspec.check.audit_table) -->"
END_MARK: Final = "<!-- audit-table:end -->"


def registered_ids() -> list[str]:
    """Every rule, then every property, of the rule book, in book order."""
    from spec.registry import properties, rules

    return [r.id for r in rules()] + [p.id for p in properties()]


def with_table(doc: str) -> str:
    """``doc`` with the text between the markers replaced by the rendering."""
    head, rest = doc.split(START_MARK, 1)
    _, tail = rest.split(END_MARK, 1)
    return f"{head}{START_MARK}\n{render(registered_ids())}{END_MARK}{tail}"


if __name__ == "__main__":
    from pathlib import Path

    target = Path(__file__).resolve().parents[2] / "docs" / "check.md"
    target.write_text(with_table(target.read_text(encoding="utf-8")), encoding="utf-8")
