"""Decision outcomes no vector can take, by group and why (issue 43 item 3: "where the protocol cannot reach a
decision, the protocol gains the operation or the report says why not").

A vector is a trace of the adapter protocol (docs/conformance.md): the model answers it through
sessionspec/conformance/adapter (``ModelSession``).  An outcome of a decision the protocol cannot reach is exempt
from the three vectors each reachable outcome needs, and its group says why.  Each group's claim is one a test
checks (tests/spec/test_decision_not_by_vectors.py):

- ``NO_OPERATION``: no operation calls the function: the call graph read from the source
  (sessionspec/decisions/reach.py, which over-approximates) does not reach it from any operation;
- ``DEPLOYMENT``: only the checker's deployment fold calls it (the graph without
  sessionspec/check/deployment_fold.py does not reach it) and the ``check`` operation passes no deployment;
- ``PROTOCOL_FIXES``: the protocol's decoder fixes the value the outcome needs (the test decodes it);
- ``OPERATION_ERROR``: the protocol answers the input with an operation error (malformed for the protocol), never
  with the model's answer, so a vector cannot carry it (the test decodes it).

Outcomes short of three vectors that no group exempts are the work left; ``python -m sessionspec.decisions.record
--list-short`` lists every short outcome with its group or what is known of its reach.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Final, final


class Claim(Enum):
    NO_OPERATION = "no operation of the protocol calls it"
    DEPLOYMENT = "only the checker's deployment fold calls it, and no operation carries a deployment"
    PROTOCOL_FIXES = "the protocol fixes the value it needs"
    OPERATION_ERROR = "the protocol refuses the input as an operation error"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Group:
    """Outcomes of the decisions of ``functions`` (``module`` for all of a module, ``module:function`` for a function
    with its nested functions and lambdas), those whose decision text ``text`` matches (searched) when given, or the
    listed ``outcomes``."""

    name: str
    claim: Claim
    reason: str
    functions: tuple[str, ...] = ()
    text: str = ""
    outcomes: frozenset[str] = frozenset()

    def holds(self, outcome_id: str) -> bool:
        if outcome_id in self.outcomes:
            return True
        module, function, text = split_outcome(outcome_id)
        if self.text and not re.search(self.text, text):
            return False
        return any(where == module or where == f"{module}:{function}" or f"{module}:{function}".startswith(where + ".")
                   for where in self.functions)


def split_outcome(outcome_id: str) -> tuple[str, str, str]:
    """``module:function: text => outcome`` -> (module, function, text)."""
    decision = outcome_id.rpartition(" => ")[0]
    module, _, rest = decision.partition(":")
    function, _, text = rest.partition(": ")
    return module, function, text


_TWINS: Final = ("the `check` operation runs the compiled twin of this definition (sessionspec/fast, tied to it finding "
                 "for finding by tests/fast), and no other operation calls it; its outcomes are pinned by the model's "
                 "tests and, through the twin, by the check vectors")

GROUPS: Final[tuple[Group, ...]] = (
    Group(name="checked-by-twin", claim=Claim.NO_OPERATION, reason=_TWINS, functions=(
        "compaction.bracket_contents:take_boundary", "compaction.bracket_contents:take_event",
        "compaction.bracket_contents:take_surface", "compaction.bracket_contents:_add",
        "compaction.companion:check_checkpoint", "compaction.companion:is_logged_checkpoint",
        "compaction.trigger_place:take_bracket_event", "compaction.trigger_place:take_chunk",
        "compaction.zero_retention:take_bracket_event", "loop_log.step:take_chunk", "loop_log.step:take_config",
        "nesting", "provenance:check_message_stream", "provenance:check_result_stream",
        "provenance:check_stream_provenance", "provenance:take_call", "provenance:take_chunks",
        "prune_check:check_prune_replacement", "repair:watch_event", "request_points")),
    Group(name="request-reconstruction", claim=Claim.NO_OPERATION, reason=(
        "model/reconstruct.py has no operation: only the request points' check (model/request_points.py, which the "
        "`check` operation runs as its compiled twin) and the tests rebuild a request from a log"),
        functions=("reconstruct",)),
    Group(name="whole-log-definitions", claim=Claim.NO_OPERATION, reason=(
        "a whole-log form of a rule (the seed's validation in model/seed.py, HDR-4's clauses, the dialect detection, "
        "prune over a whole session, the surface's event test) or a helper only the tests, the spec's properties and the "
        "command line call: the protocol has no operation for it (the `check` operation decides the same rules by the "
        "fold, the loop by its own steps)"), functions=(
        "seed:validate_seed", "seed:validate_load", "seed:check_not_header_delta", "seed_log:end_seed",
        "header:hdr4_clauses", "migrate:detect_dialect", "prune:prune_session", "prune:only_surface_results",
        "prune:prune_again_is_empty", "prune:_surface_as_promised", "surface:is_surface_event", "surface:surface_of",
        "log:with_seq", "jsonval:without", "codec:parse_event_line", "derive:derive", "repair:scan_for_repair",
        "loop.listeners:manual_listener")),
    Group(name="deployment", claim=Claim.DEPLOYMENT, reason=(
        "the rules that need the deployment's facts (model/deployment.py reads them, model/compaction/obligation.py "
        "decides with them at the points model/compaction/trigger_points.py finds) run only in `sessionspec check --deployment FILE`; the protocol's `check` operation carries "
        "no deployment (the protocol would gain one with a `deployment` argument of `check`, which no implementation's "
        "adapter reads yet)"), functions=("deployment", "compaction.obligation", "compaction.trigger_points")),
    Group(name="model-policies-and-summarization-target", claim=Claim.PROTOCOL_FIXES, reason=(
        "the protocol's `compaction` option carries compact-basic's top-level settings only: no `modelPolicies` and no "
        "summarization provider or model (sessionspec/conformance/adapter/decode.py `decode_compaction` keeps CMP-3's "
        "defaults, no policies and no target), so the decisions over policies and a summarization target see only those"),
        functions=("compaction.policy:target_policy", "compaction.policy:check_compact_config",
                   "compaction.region", "compaction.run", "compaction.readback"),
        text=r"\bp\.|(?<!run\.)\bpolicy\.|model_policies|summarization_|\bseen\b|\bresolved\.|^counts is not None #2$|^retains"),
    Group(name="refused-prune-configuration", claim=Claim.OPERATION_ERROR, reason=(
        "a prune configuration PRN-1 refuses is malformed for the protocol: `decode_compaction` raises an operation "
        "error (the adapter answers `error`, not a rejection), so no vector carries it; and the protocol never passes a "
        "missing configuration (a `prune` key absent or null means no prune)"), outcomes=frozenset({
        "prune:check_prune_config: config.head_chars + len(PRUNE_MARKER) + config.tail_chars > config.threshold_chars => above",
        "prune:check_prune_config: config.head_chars < 0 => below",
        "prune:check_prune_config: config.tail_chars < 0 => below",
        "prune:check_prune_config: config.threshold_chars <= 0 => below",
        "prune:check_prune_config: config.threshold_chars <= 0 => equal",
        "prune:check_prune_config: config.threshold_chars <= 0 or config.head_chars < 0 or config.tail_chars < 0 => true",
        "prune:resolve_prune_config: key not in _CONFIG_KEYS => true",
        "prune:resolve_prune_config: not is_safe_int(value) => true",
        "prune:resolve_prune_config: not isinstance(raw, JsonObject) => true",
        "prune:resolve_prune_config: raw is None => true"})),
)


# Functions no vector enters yet that no group exempts, with what is known of their reach: the work left (the test
# lets an outcome short of three vectors stand only when its function is entered by some vector, is in a group, or is
# here).  A function that a vector enters, or that a group covers, comes off (the test says so).
WORK_LEFT: Final[dict[str, str]] = {
    "compaction.trigger_place:check_overflow_retry": "reachable through `check` (compaction_rules_audit drives it on an A55 overflow retry); no candidate found yet",
    "event_shape:check_d08_prompt_source": "reachable through `check` of a D08 log (the D08 prompt's source); no candidate found yet",
    "guard:_rule_of": "reachable when a harness guard trips (model/guard.py `guard_trip` names the rule); no candidate found yet",
    "loop_log.step:take_deltas": "reachable through `check` (sessionspec/check/loop_audit.py folds a chunk run with it); no candidate found yet",
    "loop_log.turn:unrecorded_stream": "A55's step_closed of the loop-log fold, which `check` runs as its compiled twin (sessionspec/fast/loop_log.py); not yet shown unreachable",
    "meter:PricedSurface.fold": "the priced-surface fold; `check` prices through its compiled twin (sessionspec/fast/compaction.py) and the meter through fold_meter_event; not yet shown unreachable",
    "prune:_js_to_string": "a kept element of a text block whose text is an array (QF-16): reachable through `compact` with a prune of such a block; no candidate found yet",
    "prune:prune_record_d08": "a D08 prune record (DIA-16): reachable through `compact` with dialect D08 and a prune; no candidate found yet",
    "rejected:Rejected": "called by the tests and the command line (a rejection's text, errors compared by kind); the call graph reaches the class's methods with the class",
    "repair:_a55_result_differs": "the repair judge's; `check` judges logged closers through its compiled twin (sessionspec/fast/repair.py), and the `repair` operation writes closers without judging them",
    "repair:_d08_result_differs": "as repair:_a55_result_differs",
    "repair:check_closers": "as repair:_a55_result_differs",
    "repair:judge_closer_run": "as repair:_a55_result_differs",
    "repair:repair_shapes": "as repair:_a55_result_differs (built per dialect when the judge starts)",
    "seed:llm_shape_check": "called when model/load_shape.py is imported (A55_LOAD, D08_LOAD), before any run is recorded",
    "seed_log:check_fork_child": "only `sessionspec check` of a fork child with its parent log calls it (sessionspec/check/judge.py); the protocol's `check` carries no parent log",
    "migrate:as_read": "as seed_log:check_fork_child (the parent log read in the child's dialect)",
    "writers:_turn_end_dialect": "reachable: shape_dialect calls it for a turn/end (`check` runs the compiled twin, sessionspec/fast/writers.py); no candidate found yet",
}


def work_left(module: str, function: str) -> str | None:
    """What is known of a function in WORK_LEFT (``module:function``, or its class for a method), or None."""
    key = f"{module}:{function.split('.<lambda>')[0]}"
    return WORK_LEFT.get(key) or WORK_LEFT.get(key.rsplit(".", 1)[0] if "." in function else "")


@cache
def group_of(outcome_id: str) -> Group | None:
    """The first group that holds the outcome (None: the protocol is not shown unable to reach it)."""
    return next((g for g in GROUPS if g.holds(outcome_id)), None)


def not_by_vectors(outcome_id: str) -> str | None:
    """Why no vector can take the outcome (``group: reason``), or None."""
    group = group_of(outcome_id)
    return None if group is None else f"{group.name}: {group.reason}"


__all__ = ["GROUPS", "WORK_LEFT", "Claim", "Group", "group_of", "not_by_vectors", "split_outcome", "work_left"]
