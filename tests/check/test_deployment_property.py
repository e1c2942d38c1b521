"""The deployment's definitions and the model's writer, held together both ways (docs/index.md, "How an area
moves", step 3), over logs the loop model writes with compact-basic under drawn configurations.

* Accepted: a log written under a configuration is valid under the deployment stating it.
* Refused by the rule: the same turns written with compaction unmounted are identical up to the first
  post-step where the writer compacted; that point is a CMP-6 finding at its step/end (the seq the writer's
  first compaction event took), and there is no finding at all when the writer never compacted.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec import api
from sessionspec.model.codec import serialize_event
from sessionspec.model.compaction import CompactConfig
from sessionspec.model.deployment import Deployment, ModelCapabilities
from sessionspec.model.jsonval import get
from sessionspec.model.log import Event
from sessionspec.model.loop import (
    AgentConfig,
    Hooks,
    Prompt,
    Reply,
    ReplyKind,
    ToolCallSpec,
    TurnScript,
    compaction_hooks,
    new_instance,
    run_turn,
    text_content,
)
from sessionspec.model.rejected import Rejected
from sessionspec.simulate import ECHO_TOOL, PERSONA
from sessionspec.spec.machine_scripts import compaction_plugin

AGENT = AgentConfig(system=PERSONA, tools=(ECHO_TOOL,))


def _script(n: int, size: int, calls: bool) -> TurnScript:
    call = ToolCallSpec(call_id=f"call-{n}", name="echo", arguments='{"text":"x"}', result="r" * size)
    replies = (Reply(kind=ReplyKind.TOOL_CALLS, text="calling", tool_calls=(call,)), Reply(text=f"done {n}")) if calls \
        else (Reply(text="t" * size),)
    return TurnScript(prompt=Prompt(content=text_content(f"turn {n}")), replies=replies)


def _written(scripts: list[TurnScript], hooks: Hooks) -> tuple[Event, ...]:
    log: tuple[Event, ...] = ()
    instance = new_instance()
    for script in scripts:
        out = run_turn(log, instance, AGENT, script, hooks=hooks)
        assert not isinstance(out, Rejected), out
        log, instance = out.log, out.instance
    return log


def _findings(log: tuple[Event, ...], deployment: Deployment) -> list[api.Finding]:
    data = "".join(serialize_event(e) + "\n" for e in log).encode()
    return list(api.check_bytes(data, "generated.jsonl", deployment=deployment).findings)


@settings(max_examples=12, deadline=None)
@given(turns=st.lists(st.tuples(st.integers(50, 1500), st.booleans()), min_size=1, max_size=5),
       window=st.sampled_from([400, 700, 1200, 3000]), ratio=st.sampled_from([0.5, 0.75, 1.0]), prune=st.booleans())
def test_the_writer_and_the_deployment_agree_both_ways(turns: list[tuple[int, bool]], window: int, ratio: float, prune: bool) -> None:
    plugin = compaction_plugin(window, prune)
    plugin = replace(plugin, config=replace(plugin.config, threshold_ratio=ratio))
    assert isinstance(plugin.config, CompactConfig)
    deployment = Deployment(compaction=plugin.config, prune=plugin.prune, prune_installed=prune,
                            models=(ModelCapabilities(provider="mock", model="mock-1", context_window=window),))
    scripts = [_script(n, size, calls) for n, (size, calls) in enumerate(turns, 1)]
    compacting = _written(scripts, compaction_hooks(plugin))
    assert _findings(compacting, deployment) == []
    plain = _written(scripts, Hooks())
    # The writer's first compaction event: a bracket's start or a prune replacement (PRN-4).
    first = next((e.seq for e in compacting if e.type == "compact/start" or (e.type == "tool/result" and get(e.surface_op, "op") == "replace")), None)
    found = _findings(plain, deployment)
    if first is None:
        assert found == []
    else:
        assert found and found[0].rule == "CMP-6" and found[0].seq == first and plain[first].type == "step/end"
