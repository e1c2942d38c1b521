"""Decision outcomes no run can take, and outcomes no vector can reach, each with the reason (issue 43).

``UNREACHABLE``: outcome id -> why no input of the model takes it (the types, or an earlier check, rule it
out).  Why the adapter protocol cannot reach an outcome is said per group in spec/decision_not_by_vectors.py.
tests/spec/test_decision_table.py checks that no recorded run takes an outcome declared unreachable.
``SHORT_OF_VECTORS`` (spec/decision_short_of_vectors.txt, ``python -m sessionspec.decisions.record --list-short``):
the reachable outcomes fewer than three vectors of distinct shapes take yet and no group exempts -- the work issue 43
item 3 still asks for; the test lets the list shrink only.  The file lists every outcome short of three vector shapes,
each with its reason after a tab (``not by vectors: GROUP`` for the exempt ones, ``work left: ...`` for these).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

SHORT_FILE: Final = Path(__file__).with_name("decision_short_of_vectors.txt")
WORK_LEFT_MARK: Final = "work left: "
EXEMPT_MARK: Final = "not by vectors: "
SHORT_LINES: Final[dict[str, str]] = dict(
    (line.split("\t", 1) + [""])[:2] for line in (SHORT_FILE.read_text(encoding="utf-8").splitlines() if SHORT_FILE.exists() else ())
    if line and not line.startswith("#"))
SHORT_OF_VECTORS: Final[frozenset[str]] = frozenset(o for o, why in SHORT_LINES.items() if why.startswith(WORK_LEFT_MARK))

_CONSTANT_LOOP: Final = "the loop runs over a constant, non-empty tuple"
_OWN_EVENTS: Final = ("the run folds events it built itself after the same fold accepted the log before them; a "
                      "rejection here would be a bug of the model (the machines' 'rejected its own turn' check)")
_LOOP_DRAFTS: Final = ("the loop validates its own drafts (the loop cannot write an invalid log): a rejection is a bug, "
                       "raised as AppendRejected and reported as kind BUG, which no test or machine run has met")

_COMMIT_GOES_ON: Final = "CMP-26 (Q-2): the commit never stops on an abort (stops_when_aborted's contract: only COMMIT answers no)"
_ABORTED_RETURNED: Final = ("the retry's second look at the signal: an aborted call returned before the run, and a pure run "
                            "cannot be aborted midway, so ``aborted`` is false here and the rest is never evaluated")

UNREACHABLE: Final[dict[str, str]] = {
    # assemble
    # codec
    "codec:SessionHeader.seed_length: isinstance(v, int) => false":
        "parse_session_header refused a seedLength that is not a safe integer (LOG-18)",
    "codec:event_from_json: keys.index('surfaceOp') < keys.index('sourceEventSeqs') => equal":
        "two different keys have different positions",
    "codec:expand_row: for (k, text) in enumerate(payload) => none":
        "a payload that is empty was refused just before (CHK-5)",
    "codec:expand_row: not isinstance(seq0, int) => true":
        "is_safe_int(seq0) held just before: a safe integer is an int",
    "codec:expand_row: not isinstance(time0, int) => true":
        "_is_js_safe_int(time0) held just before: it is an int",
    "codec:pack_chunk_runs.flush: run_key is not None => false":
        "a run holds members only after run_key was set to their key",
    # compaction.d08
    "compaction.d08:bracket_owner: start > seed => equal":
        "start and seed are seqs of different events, equal only when both are -1, where start > end failed first",
    "compaction.d08:summary_input: isinstance(derived, Rejected) => true":
        "the shadowed nodes were priced by the meter just before, which projects each of them (MTR-7): they derive |  |  | `compaction.summary.summary_input (full)`, `compaction.d08.summary_input (full)`",
    # compaction.policy
    "compaction.policy:_counts_ok: for (name, value, least) in (('retainTokens', retain_tokens, 0), ('maxTokens', max_tokens, 1), ('compactionRetries', retries, 0), ('maxOverflowRetries', overflow_retries, 0)) => none":
        _CONSTANT_LOOP,
    # compaction.region
    "compaction.region:region_positions: for (name, seq) in (('start', start), ('end', end)) => none":
        _CONSTANT_LOOP,
    "compaction.region:run_region: isinstance(shadowed_tokens, Rejected) => true":
        "the meter's nodes and the fold's nodes are folds of the same log: the priced positions are the shadowed seqs",
    "compaction.region:run_region: isinstance(summary_input, Rejected) => true":
        "the shadowed nodes were priced by the meter just before, which projects each of them (MTR-7): they derive",
    # CMP-26: one definition says where an abort stops a run (model/compaction/cancellation.py)
    "compaction.region:run_region: stops_when_aborted(AbortPoint.COMMIT) => true": _COMMIT_GOES_ON,
    "compaction.region:run_region: aborted and stops_when_aborted(AbortPoint.COMMIT) => true": _COMMIT_GOES_ON,
    "compaction.run:pressure_compaction: stops_when_aborted(AbortPoint.PRESSURE_TRIGGER) => false":
        "CMP-26: the post-step trigger always stops on an aborted signal (stops_when_aborted's contract)",
    "compaction.run:recover_overflow: stops_when_aborted(AbortPoint.OVERFLOW_RECOVERY) => false":
        "CMP-26: the overflow path always stops on an aborted signal (stops_when_aborted's contract)",
    "compaction.run:recover_overflow: aborted #2 => true": _ABORTED_RETURNED,
    "compaction.run:recover_overflow: not (aborted and stops_when_aborted(AbortPoint.OVERFLOW_RECOVERY)) => false": _ABORTED_RETURNED,
    "compaction.run:recover_overflow: stops_when_aborted(AbortPoint.OVERFLOW_RECOVERY) #2 => false": _ABORTED_RETURNED,
    "compaction.run:recover_overflow: stops_when_aborted(AbortPoint.OVERFLOW_RECOVERY) #2 => true": _ABORTED_RETURNED,
    # compaction.run
    "compaction.run:_Run.transaction: policy.summarization_model => false":
        "CMP-3 refuses a summarization provider without a model (checked before any transaction)",
    "compaction.run:compact_under_pressure: for attempt in range(run.policy.compaction_retries + 1) => none":
        "compactionRetries is a non-negative integer (CMP-3, checked first), so the range has at least one attempt",
    "compaction.run:compact_under_pressure: isinstance(now, Rejected) #3 => true":
        _OWN_EVENTS,
    "compaction.run:compact_under_pressure: isinstance(now, Rejected) #4 => true":
        _OWN_EVENTS,
    "compaction.run:compact_under_pressure: isinstance(now, Rejected) #5 => true":
        _OWN_EVENTS,
    "compaction.run:recover_overflow: isinstance(e.surface_op, JsonObject) => false":
        "a compaction appends no surface append: the checkpoint and a prune replace, brackets are log-only (CMP-22, PRN-4)",
    # compaction.summary
    # header
    "header:_present: length > 0 => below":
        "js_length is a length: never negative",
    "header:config_eq: for key in CONFIG_SCALARS => none":
        _CONSTANT_LOOP,
    "header:header_to_json: for (key, value) in (('adapterDefaults', h.adapter_defaults), ('system', h.system), ('tools', h.tools), ('messagePrefix', h.message_prefix)) => none":
        _CONSTANT_LOOP,
    # jsonval
    "jsonval:_object_hook: seen.add(k) => true":
        "set.add returns None: the operand is falsy by construction",
    "jsonval:js_number: '0' => false":
        "evaluated only when digits.rstrip('0') is empty, which no non-zero number gives",
    "jsonval:js_number: '0' => true":
        "evaluated only when digits.rstrip('0') is empty, which no non-zero number gives",
    "jsonval:js_number: digits.rstrip('0') => false":
        "a non-zero finite number has a non-zero digit",
    "jsonval:js_number: e >= 0 => equal":
        "e == 0 means n == 1, which an earlier arm (k <= n or 0 < n <= 21) took",
    "jsonval:js_number: n <= 21 #2 => equal":
        "reached only with k > n (the first arm took k <= n <= 21): n == 21 would need 22 significant digits; a double has 17",
    "jsonval:js_number: x < 0 => equal":
        "x == 0 returned \"0\" just before",
    # loop.compose
    "loop.compose:cached_prefix: isinstance(prefix, NotComposed) => true":
        "a request is built after compose_if_needed cached a composition (LOOP-5 stage 6 before stage 12)",
    # loop.instance
    "loop.instance:header_record: isinstance(logged, Absent) #2 => true":
        "an instance that logged a header (the first test) finds a header in its log",
    "loop.instance:seed_config: isinstance(logged, EpochHeader) => false":
        "an instance that logged a header (the first operand) finds a header in its log",
    "loop.instance:seed_config: isinstance(logged.config, JsonObject) => false":
        "a folded header's config is an object (HDR-1)",
    # loop.listeners
    "loop.listeners:manual_listener.post_step: isinstance(run, Rejected) => true":
        "the listener's log is the loop's own, in a step: compact_if_needed answers a run, an error inside it",
    "loop.listeners:overflow_listener.request_error: isinstance(code, str) => false":
        "the failure the loop hands the listener carries the scripted error code, a string (LOOP-14)",
    "loop.listeners:pressure_listener.post_step: isinstance(run, Rejected) => true":
        "the listener's log is the loop's own, in a step (CMP-6): pressure_compaction answers a run, an error inside it",
    # loop.state
    "loop.state:LogWriter.append: isinstance(folded, Rejected) => true":
        _LOOP_DRAFTS,
    "loop.state:LogWriter.append: isinstance(projected, Rejected) => true":
        _LOOP_DRAFTS,
    "loop.state:LogWriter.append: isinstance(state, Rejected) => true":
        _LOOP_DRAFTS,
    "loop.state:log_writer: isinstance(messages, Rejected) => true":
        "the surface fold accepted the log (just before), and every surface event it accepts projects (SURF-9 checks DER-1)",
    # loop.step
    "loop.step:mutation_attempt: request.messages => false":
        "every request carries the turn's prompt (LOOP-3 appends it before the first step)",
    # loop.turn
    "loop.turn:play_turn: try: except AppendRejected => except AppendRejected":
        _LOOP_DRAFTS,
    "loop.turn:turn_body: t.replies_taken < len(replies) => above":
        "once the replies are taken (equal) the default reply is plain text, which ends the turn: no later step compares",
    # meter
    "meter:_usage_tokens: for (key, required) in (('inputTokens', True), ('cacheReadTokens', False), ('cacheWriteTokens', False), ('outputTokens', True)) => none":
        _CONSTANT_LOOP,
    "meter:measure_state: max(0, baseline.tokens + delta) => above":
        "baseline >= the anchor surface (MTR-8) and delta >= -anchor surface: the sum is never negative",
    # migrate
    "migrate:migrate_event: legacy_message_id(session_id, event.seq) => false":
        "the legacy id is a non-empty string",
    # prune
    "prune:prune_content: after >= total => above":
        "evaluated only when after <= threshold < total",
    "prune:prune_content: after >= total => equal":
        "evaluated only when after <= threshold < total",
    "prune:prune_content: bs < cut_end => above":
        "evaluated only before the marker is placed (see the equal case)",
    "prune:prune_content: bs < cut_end => equal":
        "evaluated only before the marker is placed; a text block overlaps [head, cut) before any block starts at the cut",
    "prune:prune_content: for block in blocks => none":
        "an empty block list has 0 code points, within every threshold (returned before)",
    "prune:prune_content: not isinstance(block, JsonObject) => true":
        "reached only when get(block, 'type') == 'text', which only an object gives",
    "prune:prune_content: not marked #2 => true":
        "the removed span [head, total - tail) is non-empty (total > threshold >= head + 39 + tail) and covered by text",
    # surface
    "surface:surface_op_of: isinstance(op, str) => false":
        "op == 'append' holds only for the string",
    # wire
    "wire:request_to_json: for (key, attr) in REQUEST_KEYS => none":
        _CONSTANT_LOOP,
    # issue 43, step 1: shown after the table was recorded again
    "codec:event_from_json: isinstance(seq_value, int) => false":
        "is_safe_int(seq_value) held just before: it is an int",
    "codec:event_from_json: not isinstance(time, int) => true":
        "is_safe_int(time) held just before: it is an int",
    "codec:_text: isinstance(v, str) => false":
        "_packable packs only chunks whose text or argumentsDelta is a string (CHK-1): a row is built from those",
    "loop_records:prefixed_content: for blocks in contexts => none":
        "the loop passes its prompt-prefix contexts only when there is one (prompt_message_data), the log check one run of blocks",
    "meter:provider_output_price: bad is not None => true":
        "BlockAssembler.feed returns None on every path (an unassemblable block is reported by blocks())",
    "migrate:migrate_event: type_name == event.type => false":
        "the type changes only where the data is migrated too (steering/message -> user/message): with the data as it was, the type is the event's",
    "prune:prune_record_d08: message is None => true":
        "the record is written for a tool/result, which projects to a message or a rejection (DER-1); None is a log-only type's",
    "prune:only_surface_results: isinstance(events[target].data, JsonObject) => false":
        "the surface fold accepted the log: the tool/result it replaces has object data (LOG-9)",
    "surface:surface_op_of: not isinstance(op['op'], str) => true":
        "op['op'] == 'replace' held just before: only a string equals it",
    "surface:plan_surface_event: event.source_event_seqs is not ABSENT => true":
        "surface_op_of returns None only for an event without sourceEventSeqs (SURF-2 refuses one that has it)",
    "surface:plan_surface_event: op is None and event.source_event_seqs is not ABSENT => true":
        "surface_op_of returns None only for an event without sourceEventSeqs (SURF-2 refuses one that has it)",
    # issue 43 item 1: shown unreachable while pinning the rest
    "compaction.obligation:decide_prune_pass: 'pruned a result twice' => false":
        'a non-empty string literal: the operand is truthy by construction',
    "nesting:answer_call: f'tool/result answers {js_stringify(call_id)}, which is not a pending call' => false":
        'a non-empty f-string: the operand is truthy by construction',
    'deployment:_read_models: not isinstance(window, int) => true':
        'is_safe_int(window) held just before (the or short-circuits otherwise): a safe integer is an int',
    'deployment:_read_models: window <= 0 => below':
        'is_safe_int(window) held just before: a safe integer is non-negative',
    'guard:guard_trip: for carrier in carriers => none':
        'carriers is built just before as a pair (the reason and its failure, or the error and the reason): never empty',
    'provenance:check_message_stream: sorted(positions) => single':
        'evaluated only when the positions are not one contiguous run, which a single position always is',
    'd08_shapes:take_attempt_chunk: attempts.failed.update(attempts.attempt) => overlap':
        ("each chunk joins one attempt, which its finish clears; chunks of a step have distinct seqs (LOG-1: seq is "
         "the index), so the failed attempts' seqs never meet the current one's"),
    'header_log:_is_list_of_objects: is_placeholder(x) => true':
        ("placeholders is true only for the A55 messagePrefix, typed after is_opaque_field found no placeholder entry "
         "in it (FMT-6: a prefix with one is skipped)"),
    'repair:check_closers: for (event, closer) in zip(run, expected, strict=True) => none':
        'closers_of always ends with the turn/end, and the types matched just before: the run is never empty',
    'repair:repair_closers: for event in events => none':
        'an empty log returned just before (LOG-14: an empty log gives [])',
    'header_log:check_canonical_header: for key in LENGTHY_FIELDS => none':
        _CONSTANT_LOOP,
    'record_keys:key_flaw: positions != sorted(positions) => false':
        ("reached only for known keys, the required ones present (a JsonObject has no duplicate key): in the listed "
         "order they are one of valid_orders, which returned before"),
    'record_keys:key_flaw: sorted(positions) => single':
        'a single known key with every required key present is a valid order, which returned before',
    'turn_end_reason:a55_reason_flaw: isinstance(reason, JsonObject) => false':
        "reached only with kind == 'error', read from the reason by get: only an object has a kind",
    'turn_end_reason:d08_reason_flaw: isinstance(reason, JsonObject) => false':
        "reached only with kind == 'error', read from the reason by get: only an object has a kind",
    'compaction.run:compact_under_pressure: not run.results => false':
        ("a later attempt's surface is the checkpoint and the earlier retained tail, its prices and balance unchanged:"
         " the walk (CMP-11) stops at the same node and rounds to the same cut, just after the checkpoint (balanced on"
         " both sides, P-CMP-3), so keep >= 1 and a range is selected (a search of 8,000 candidates and a targeted one"
         " agree)"),
    # issue 43 item 1: the moved areas' outcomes shown unreachable while pinning the rest
    'compaction.companion:check_summary: count < 0 => below':
        'is_safe_int(count) held just before (the or short-circuits otherwise): a safe integer is non-negative',
    'compaction.companion:check_summary: not isinstance(count, int) => true':
        'is_safe_int(count) held just before (the or short-circuits otherwise): a safe integer is an int',
    "loop_log.step:take_tool_call: for (key, want) in (('callId', call_id), ('name', name), ('arguments', arguments)) => none":
        _CONSTANT_LOOP,
    "loop_log.step:take_user_message: event.seq => false":
        ("evaluated only inside a step after one of its results: its turn/start and step/start came before, and a log's"
         " seqs start at 0 and rise (FMT-1), so the message's seq is above 0"),
    "log_file:header_line_refused: for key in ('createdAt', 'delegationDepth') => none":
        _CONSTANT_LOOP,
    'loop_log.turn:block_prompt: event => false':
        'an Event is a dataclass without __bool__ or __len__: always truthy',
    'seed_log:_end_seed_refusal: seed_length < len(events) => above':
        'a seed longer than the log returned just before (seed_length > len(events)): only below or equal remain',
    'seed_log:_end_seed_refusal: seed_length < len(events) #2 => above':
        'a seed longer than the log returned just before (seed_length > len(events)): only below or equal remain',
    'seed_log:check_fork_child: for index in range(seed_length) => none':
        'seed_length <= 0 returned just before: the range is never empty',
    'writers:_turn_end_dialect: isinstance(reason, JsonObject) => false':
        "reached only with kind == 'aborted', read from the reason by get: only an object has a kind",
    'writers:_turn_end_dialect: isinstance(reason, JsonObject) #2 => false':
        "reached only with kind == 'error', read from the reason by get: only an object has a kind",
    'writers:check_turn_dialects: Dialect.A55 => false':
        'an Enum member without __bool__ is truthy (Dialect defines none)',
    'writers:check_turn_dialects: a55 > d08 => equal':
        'evaluated only when a55 != d08 (a tie took the turn/start\'s dialect just before)',
}

# Reachable, or not yet shown unreachable, and taken by no run yet: the work left (the test lets this only shrink).
NOT_YET_PINNED: Final[dict[str, str]] = {}
