"""P-CMP-12 with ``check --deployment FILE``: after each write of a pressure point, CMP-8's loop decides whether
another region transaction follows ("for attempt in 0..compactionRetries: select ...; run one region transaction;
re-measure; if total < threshold return"), and the log is held to it.

The logs are written by the loop model (``run_turn`` with compact-basic mounted) with no prune service: at a
post-step over the threshold of 350 (window 700, thresholdRatio 0.5) its first bracket leaves the total still over
it, so with compactionRetries 1 a second transaction runs (its summary is not smaller: it fails, CMP-21/23).  Each
fault is a writer configured otherwise than the deployment says; the log alone is valid, the deployment's verdict
is invalid with CMP-8 at the event where the loop and the log part.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec import api
from sessionspec.model.codec import serialize_event
from sessionspec.model.deployment import Deployment, ModelCapabilities
from sessionspec.model.log import Event
from sessionspec.model.loop import CompactionPlugin, compaction_hooks
from sessionspec.model.meter import MeterState, measure_state, meter_state
from sessionspec.spec.machine_scripts import compaction_plugin
from tests.support import dump_turn, dump_turns


def _plugin(retries: int, prune: bool = False, window: int = 700) -> CompactionPlugin:
    plugin = compaction_plugin(window, prune=prune)
    return replace(plugin, config=replace(plugin.config, compaction_retries=retries))


def _deployment(plugin: CompactionPlugin, window: int = 700) -> Deployment:
    return Deployment(compaction=plugin.config, prune=plugin.prune, prune_installed=plugin.prune is not None,
                      models=(ModelCapabilities(provider="mock", model="mock-1", context_window=window),))


def _findings(log: tuple[Event, ...], deployment: Deployment | None) -> list[api.Finding]:
    data = "".join(serialize_event(e) + "\n" for e in log).encode()
    report = api.check_bytes(data, "written.jsonl") if deployment is None else api.check_bytes(data, "written.jsonl", deployment=deployment)
    return list(report.findings)


def _retry_starts(log: tuple[Event, ...]) -> list[int]:
    """The seqs of the brackets a point wrote after an earlier one (a bracket start right after a bracket end)."""
    return [e.seq for e in log[1:] if e.type == "compact/start" and log[e.seq - 1].type == "compact/end"]


def test_P_CMP_12_a_writer_stopping_after_one_transaction_while_still_over_the_threshold() -> None:
    """compactionRetries 0 in the writer, 1 in the deployment: after each point's first (committed) bracket the
    total is still over 350 and a range is selectable, so the second transaction was due where the writer with
    compactionRetries 1 wrote it (the first such point is at the same seq in both logs); the log shows the step's
    step/end there instead."""
    once, twice = dump_turns(compaction_hooks(_plugin(0))), dump_turns(compaction_hooks(_plugin(1)))
    due = _retry_starts(twice)
    assert due and _retry_starts(once) == []
    assert _findings(once, None) == []
    found = _findings(once, _deployment(_plugin(1)))
    # The logs are one up to the first retry; later seqs differ, each finding at a step/end after a committed bracket.
    assert once[: due[0]] == twice[: due[0]] and found and found[0].seq == due[0]
    assert all(f.rule == "CMP-8" and once[f.seq].type == "step/end" and once[f.seq - 1].type == "compact/end"
               and "error" not in once[f.seq - 1].data for f in found)
    assert "compaction stopped at this post-step (CMP-6) point though another transaction was due" in found[0].reason
    assert "after 1 of compactionRetries 1 + 1 transactions the total is still at or over the threshold" in found[0].reason


def test_P_CMP_12_more_than_compactionRetries_plus_one_transactions() -> None:
    """The writer retries once (compactionRetries 1); the deployment allows one transaction (0): each second
    bracket is one too many, at its start."""
    twice = dump_turns(compaction_hooks(_plugin(1)))
    assert _findings(twice, None) == []
    found = _findings(twice, _deployment(_plugin(0)))
    assert [(f.rule, f.seq) for f in found] == [("CMP-8", seq) for seq in _retry_starts(twice)]
    assert "another compaction ran at this post-step (CMP-6) point though compactionRetries 0 + 1 transactions ran" in found[0].reason


def test_P_CMP_12_a_transaction_after_the_total_fell_below_the_threshold() -> None:
    """The writer's threshold is 350; the deployment's window puts it one token over the total the first bracket
    left (its own threshold floor(window x 0.5)): the second bracket ran below it.  At a threshold equal to that
    total (not below: CMP-8 compares ``total < threshold``) it was due and the log is valid."""
    log = dump_turns(compaction_hooks(_plugin(1)))
    second = _retry_starts(log)[0]
    meter = meter_state(log[:second])
    assert isinstance(meter, MeterState)
    left = measure_state(meter).total_tokens
    assert left >= 350
    assert _findings(log, _deployment(_plugin(1), 2 * left)) == []
    found = _findings(log, _deployment(_plugin(1), 2 * (left + 1)))
    assert [(f.rule, f.seq) for f in found][:1] == [("CMP-8", second)]
    assert found[0].reason == ("another compaction ran at this post-step (CMP-6) point though the total measured after its last write is "
                               f"below the threshold ({left} estimated tokens, threshold {left + 1} for mock/mock-1)")


@settings(max_examples=5, deadline=None)
@given(sizes=st.lists(st.sampled_from([300, 900, 2000]), max_size=2), prune=st.booleans())
def test_P_CMP_12_the_writers_loop_and_the_deployments_agree_both_ways(sizes: list[int], prune: bool) -> None:
    """A log written with compactionRetries ``written`` is valid under a deployment stating ``declared`` exactly
    when the writer with ``declared`` writes the same log (retries alone differ, so any difference is the loop's).
    The turns start with a 900- and a 2000-character result, whose points retry without a prune service (the
    first test), so some pair differs there and the refusing side is exercised."""
    scripts = tuple(dump_turn(n, size) for n, size in enumerate([900, 2000, *sizes], 1))
    logs = [dump_turns(compaction_hooks(_plugin(retries, prune)), scripts) for retries in range(3)]
    for written, log in enumerate(logs):
        for declared, other in enumerate(logs):
            found = _findings(log, _deployment(_plugin(declared, prune)))
            assert (found == []) == (log == other), (written, declared, found)
            assert all(f.rule == "CMP-8" for f in found)
    assert prune or logs[0] != logs[1]
