"""Compaction and prune plugged into the loop (issue 4 "Properties").

compact-basic runs on the loop model through ``model.loop.compaction_hooks``
(pressure at post-step, CMP-6; overflow recovery at request-error, CMP-7) and
``manual_listener``; the loop-level predicates of
``spec/loop_compaction_properties.py`` hold on what it writes, and each one fails on
a log (or a listener) broken in the way it names.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sessionspec.fast.meter import metered_pressure_listener
from sessionspec.model.codec import parse_event_line
from sessionspec.model.compaction import CONTEXT_WINDOW_EXCEEDED, SummarizerOutput, SummaryCall
from sessionspec.model.jsonval import JsonObject, get
from sessionspec.model.log import Event, make_event
from sessionspec.model.loop import (
    AgentConfig,
    CompactionPlugin,
    ErrorAction,
    ErrorDecision,
    Hooks,
    Interrupt,
    Prompt,
    Reply,
    ReplyKind,
    RequestErrorContext,
    SentRequest,
    ToolCallSpec,
    TurnScript,
    Window,
    compaction_hooks,
    manual_listener,
    new_instance,
    overflow_listener,
    run_turn,
    text_content,
)
from sessionspec.model.prefix import Contributor, Idiom, prefix_message
from sessionspec.model.prune import PruneConfig, prune_session
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import fold_surface
from sessionspec.planted.loop import Planted, planted
from sessionspec.simulate import ECHO_TOOL, PERSONA
from sessionspec.spec.loop_compaction_properties import (
    brackets,
    compaction_leaves_envelope,
    compactions_keep_tool_pairs,
    compactions_resummarize_head,
    overflow_retry_iff_compacted,
    pressure_compaction_closes_step,
    prunes_only_under_pressure,
)
from sessionspec.spec.loop_properties import requests_rebuild_from_log
from sessionspec.spec.machine_scripts import compaction_plugin, summarize
from tests.support import BUSY_LOG_PRUNE, GROUNDTRUTH, busy_log, short

AGENT = AgentConfig(system=PERSONA, tools=(ECHO_TOOL,),
                    contributors=(Contributor(idiom=Idiom.PREPEND, content=(prefix_message("<pfx kept>"),)),))
PLUGIN = compaction_plugin(700, prune=True)


@dataclass(frozen=True)
class Run:
    log: tuple[Event, ...]
    requests: tuple[SentRequest, ...]
    summaries: tuple[tuple[int, JsonObject], ...]


def _big(n: int, size: int = 900) -> TurnScript:
    call = ToolCallSpec(call_id=f"call-{n}", name="echo", arguments='{"text":"dump"}',
                        result=f"dump {n}: " + "lorem ipsum " * (size // 12))
    return TurnScript(prompt=Prompt(content=text_content(f"dump {n}")),
                      replies=(Reply(kind=ReplyKind.TOOL_CALLS, text="dumping", tool_calls=(call,)),
                               Reply(text=f"dumped {n}")))


OVERFLOW = Reply(kind=ReplyKind.ERROR_THROWN, error_code=CONTEXT_WINDOW_EXCEEDED, error_message="too long")


def _run(scripts: list[tuple[TurnScript, Hooks]]) -> Run:
    log: tuple[Event, ...] = ()
    instance = new_instance()
    requests: list[SentRequest] = []
    summaries: list[tuple[int, JsonObject]] = []
    for script, hooks in scripts:
        out = run_turn(log, instance, AGENT, script, hooks=hooks)
        assert not isinstance(out, Rejected), out
        log, instance = out.log, out.instance
        requests.extend(out.requests)
        summaries.extend((c.dispatch_len, c.request) for c in out.side_calls)
    return Run(log=log, requests=tuple(requests), summaries=tuple(summaries))


def _session(fault: Planted | None = None) -> Run:
    """Pressure compactions with prunes, an overflow recovery with retry, a manual compaction."""
    hooks = compaction_hooks(PLUGIN)
    manual = replace(hooks, post_step=manual_listener(PLUGIN))
    overflow = TurnScript(prompt=Prompt(content=text_content("question " + "long " * 40)),
                          replies=(OVERFLOW, Reply(text="recovered")))
    with planted(fault):
        return _run([(_big(1), hooks), (_big(2), hooks), (_big(3, 2000), hooks), (overflow, hooks), (_big(4), hooks),
                     (TurnScript(prompt=Prompt(content=text_content("compact now")), replies=(Reply(text="ok"),)), manual),
                     (_big(5), hooks)])


def _ok(run: Run) -> None:
    assert requests_rebuild_from_log(run.log, run.requests) is None
    assert compaction_leaves_envelope(run.log, run.requests) is None
    assert compactions_keep_tool_pairs(run.log) is None
    assert compactions_resummarize_head(run.log, run.summaries) is None
    assert overflow_retry_iff_compacted(run.log) is None
    assert pressure_compaction_closes_step(run.log) is None
    assert prunes_only_under_pressure(run.log) is None


def test_P_CMP_5_P_CMP_3_P_CMP_4_P_CMP_10_P_CMP_11_P_PRN_3_hold_on_the_loop() -> None:
    run = _session()
    _ok(run)
    committed = [b for b in brackets(run.log) if b.checkpoint is not None]
    # Several compactions (re-compacting the previous checkpoint), prunes, an overflow retry.
    assert len(committed) >= 3 and len(run.summaries) >= len(committed)
    assert any(e.type == "tool/result" and isinstance(e.surface_op, JsonObject) for e in run.log)
    overflow_steps = [e for e in run.log if e.type == "step/start" and get(e.data, "step") == 2
                      and run.log[e.seq - 1].type == "compact/end"]
    assert overflow_steps, "the overflow recovery retried in a new step after its bracket"


def test_CMP_7_overflow_recovery_retries_and_second_overflow_fails() -> None:
    """CMP-7: the first CONTEXT_WINDOW_EXCEEDED is recovered (compaction, retry);
    the second in a row finds one earlier overflow in priorFailures, which is not
    below maxOverflowRetries (1): no recovery, the turn fails — although a second
    compaction would have been possible (the first summary is long, the next short)."""
    outputs = iter(["long summary " * 100, "short"])

    def summarizer(call: SummaryCall) -> SummarizerOutput:
        return SummarizerOutput(summary=text_content(next(outputs)), provider=call.provider, model=call.model)

    plugin = replace(PLUGIN, summarizer=summarizer, context_window=10**6, prune=None)
    hooks = compaction_hooks(plugin)
    twice = TurnScript(prompt=Prompt(content=text_content("q " + "long " * 40)),
                       replies=(OVERFLOW, OVERFLOW, Reply(text="never")))
    run = _run([(_big(1, 2000), hooks), (_big(2, 2000), hooks), (twice, hooks)])
    _ok(run)
    end = run.log[-1]
    assert len([b for b in brackets(run.log) if b.checkpoint is not None]) == 1
    assert get(get(end.data, "reason"), "kind") == "error"
    assert get(get(get(end.data, "reason"), "failure"), "code") == CONTEXT_WINDOW_EXCEEDED
    # Control: with a budget of two overflows the same turn recovers twice and completes.
    outputs = iter(["long summary " * 100, "short"])
    two = replace(plugin, config=replace(plugin.config, max_overflow_retries=2))
    again = _run([(_big(1, 2000), compaction_hooks(two)), (_big(2, 2000), compaction_hooks(two)),
                  (twice, compaction_hooks(two))])
    assert len([b for b in brackets(again.log) if b.checkpoint is not None]) == 2
    assert get(get(again.log[-1].data, "reason"), "kind") == "completed"


def test_P_CMP_3_catches_a_retention_walk_that_splits_a_tool_pair() -> None:
    run = _session(Planted.COMPACT_SPLITS_TOOL_PAIR)
    problem = compactions_keep_tool_pairs(run.log)
    assert problem is not None and problem.startswith("P-CMP-3")


def test_P_CMP_5_catches_a_compaction_that_drops_the_prefix() -> None:
    run = _session(Planted.COMPACT_DROPS_PREFIX)
    problem = compaction_leaves_envelope(run.log, run.requests)
    assert problem is not None and problem.startswith("P-CMP-5")


def test_P_CMP_4_catches_a_summarizer_request_without_the_prefix() -> None:
    run = _session()
    dispatch, request = run.summaries[0]
    messages = request["messages"]
    assert isinstance(messages, tuple)
    stripped = JsonObject((k, messages[1:] if k == "messages" else v) for k, v in request.items())
    problem = compactions_resummarize_head(run.log, ((dispatch, stripped), *run.summaries[1:]))
    assert problem is not None and problem.startswith("P-CMP-4")


def test_P_CMP_4_recompaction_resummarises_the_previous_checkpoint() -> None:
    run = _session()
    committed = [b for b in brackets(run.log) if b.checkpoint is not None and b.summary is not None]
    for earlier, later in zip(committed, committed[1:]):
        shadowed = get(run.log[later.summary].data, "shadowedSeqs")  # type: ignore[index]
        assert isinstance(shadowed, tuple) and shadowed[0] == earlier.checkpoint


def test_P_CMP_10_catches_an_overflow_listener_that_fails_after_compacting() -> None:
    inner = overflow_listener(PLUGIN)

    def stubborn(events: object, ctx: RequestErrorContext) -> ErrorDecision:
        decision = inner(events, ctx)  # type: ignore[arg-type]
        return replace(decision, action=ErrorAction.FAIL)

    hooks = compaction_hooks(PLUGIN)
    broken = Hooks(post_step=hooks.post_step, request_error=stubborn)
    overflow = TurnScript(prompt=Prompt(content=text_content("q " + "long " * 40)),
                          replies=(OVERFLOW, Reply(text="x")))
    run = _run([(_big(1), hooks), (_big(2), hooks), (overflow, broken)])
    problem = overflow_retry_iff_compacted(run.log)
    assert problem is not None and problem.startswith("P-CMP-10")


def _groundtruth(name: str) -> list[Event]:
    events: list[Event] = []
    for line in (GROUNDTRUTH / name / "session.jsonl").read_text().splitlines():
        parsed = parse_event_line(line)
        assert not isinstance(parsed, Rejected)
        events.extend(parsed)
    return events


def test_P_CMP_11_catches_step_work_after_a_pressure_compaction() -> None:
    log = _groundtruth("j1-pressure-compaction")
    end = next(e.seq for e in log if e.type == "compact/end")
    assert pressure_compaction_closes_step(log) is None
    late = make_event("tool/call", seq=end + 1, time=0,
                      data=JsonObject((("turn", 1), ("step", 4), ("callId", "late"), ("name", "work"),
                                       ("arguments", "{}"))))
    problem = pressure_compaction_closes_step([*log[: end + 1], late])
    assert problem is not None and problem.startswith("P-CMP-11")


def test_P_PRN_3_catches_a_prune_outside_an_open_turn() -> None:
    log = _groundtruth("j2-tool-result-prune")
    assert prunes_only_under_pressure(log) is None
    pruned = prune_session(log, PruneConfig(threshold_chars=100, head_chars=20, tail_chars=10))
    assert not isinstance(pruned, Rejected) and len(pruned) == 1
    problem = prunes_only_under_pressure([*log, *pruned])
    assert problem is not None and problem.startswith("P-PRN-3")


def test_CMP_14_manual_listener_compacts_inside_the_turn_with_retain_zero() -> None:
    hooks = compaction_hooks(PLUGIN)
    manual = replace(hooks, post_step=manual_listener(PLUGIN))
    run = _run([(_big(1, 300), hooks),
                (TurnScript(prompt=Prompt(content=text_content("compact now")), replies=(Reply(text="ok"),)), manual)])
    _ok(run)
    committed = [b for b in brackets(run.log) if b.checkpoint is not None]
    assert len(committed) == 1
    # CMP-9 selection with retain 0: everything but the last surface node (this step's answer).
    start, summary = committed[0].start, committed[0].summary
    assert summary is not None
    nodes = fold_surface(run.log[:start])
    assert not isinstance(nodes, Rejected)
    assert get(run.log[summary].data, "shadowedSeqs") == nodes.state.nodes[:-1]
    assert run.log[nodes.state.nodes[-1]].type == "assistant/message"


def test_summarizer_is_called_with_the_cmp_16_input() -> None:
    calls: list[SummaryCall] = []

    def spy(call: SummaryCall) -> SummarizerOutput:
        calls.append(call)
        return summarize(call)

    plugin = replace(PLUGIN, summarizer=spy)
    run = _run([(_big(n), compaction_hooks(plugin)) for n in range(1, 4)])
    assert calls and all(c.input.messages[0] == prefix_message("<pfx kept>") for c in calls)
    assert len(run.summaries) == len(calls)


def test_CMP_6_pressure_compaction_skips_when_the_turn_is_already_aborted() -> None:
    hooks = compaction_hooks(PLUGIN)
    warm = _run([(_big(1), hooks), (_big(2), hooks)])
    script = replace(_big(3, 2000), interrupt=Interrupt(window=Window.AFTER_POST_STEP, step=1))
    calm = run_turn(warm.log, new_instance(), AGENT, replace(script, interrupt=None), hooks=hooks)
    cut = run_turn(warm.log, new_instance(), AGENT, script, hooks=hooks)
    assert not isinstance(calm, Rejected) and not isinstance(cut, Rejected)
    # Without the cancel this step compacts; with it the post-step listener sees the abort and skips.
    assert any(e.type == "compact/start" for e in calm.log[len(warm.log):])
    assert not any(e.type == "compact/start" for e in cut.log[len(warm.log):])
    assert cut.end_reason == JsonObject((("kind", "aborted"),)) and cut.log[-2].type == "step/end"


def test_CMP_8_the_metered_pressure_listener_writes_what_the_plain_one_writes() -> None:
    """The incremental-meter shortcut (MTR-5) only skips runs below the CMP-8
    threshold, where ``compactIfNeeded`` appends nothing: the logs are identical."""
    plain = _session()
    metered = compaction_hooks(PLUGIN)
    metered = replace(metered, post_step=metered_pressure_listener(PLUGIN))
    manual = replace(metered, post_step=manual_listener(PLUGIN))
    overflow = TurnScript(prompt=Prompt(content=text_content("question " + "long " * 40)),
                          replies=(OVERFLOW, Reply(text="recovered")))
    fast = _run([(_big(1), metered), (_big(2), metered), (_big(3, 2000), metered), (overflow, metered),
                 (_big(4), metered),
                 (TurnScript(prompt=Prompt(content=text_content("compact now")), replies=(Reply(text="ok"),)), manual),
                 (_big(5), metered)])
    assert fast.log == plain.log and fast.summaries == plain.summaries


def test_P_CMP_3_P_CMP_4_P_CMP_5_P_CMP_10_P_CMP_11_P_PRN_3_hold_on_the_real_harness_logs() -> None:
    """The loop-level predicates accept what the real harness wrote (ground truth j1, j2, j3)."""
    for name in ("j1-pressure-compaction", "j2-tool-result-prune", "j3-overflow-compaction-retry"):
        log = _groundtruth(name)
        for predicate in (compactions_keep_tool_pairs, compactions_resummarize_head, compaction_leaves_envelope, overflow_retry_iff_compacted, pressure_compaction_closes_step, prunes_only_under_pressure):
            assert predicate(log) is None, (name, predicate.__name__)


def test_CMP_9_PRN_6_the_overflow_listener_prunes_first_and_dispatches_the_summary_after_compact_start() -> None:
    """CMP-9: on a context overflow, prune (if a prune service exists) and re-measure, then run one region
    transaction; PRN-6: the prune runs from compactIfNeeded on overflow; CMP-15: the summarizer request is
    sent right after the bracket's ``compact/start`` (the log then holds that event)."""
    log = busy_log()  # four tool results of 400 characters, each above the 100-character threshold
    plugin = CompactionPlugin(summarizer=short, instruction="I", prune=BUSY_LOG_PRUNE)
    context = RequestErrorContext(turn=1, step=5, failure=JsonObject((("code", CONTEXT_WINDOW_EXCEEDED),)), prior_failures=(),
                                  default=ErrorAction.FAIL)
    decision = overflow_listener(plugin)(log.events, context)
    assert decision.action is ErrorAction.RETRY
    types = [d.type_name for d in decision.drafts]
    assert types[:4] == ["tool/result"] * 4 and types[4] == "compact/start"
    start_seq = len(log.events) + 4
    assert [s.dispatch_len for s in decision.side_calls] == [start_seq + 1]
