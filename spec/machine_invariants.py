"""The loop machine's invariants (``spec/machines.py``), each a property of ``spec/loop_properties.py`` or
``spec/loop_compaction_properties.py`` asserted after every step when its :class:`~spec.machine_checks.Check`
is enabled and the log grew since it last ran.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis.stateful import invariant

from sessionspec.model.jsonval import js_stringify
from sessionspec.model.loop import SentRequest
from sessionspec.spec.loop_compaction_properties import (
    compaction_leaves_envelope,
    compactions_keep_tool_pairs,
    compactions_resummarize_head,
    overflow_retry_iff_compacted,
    pressure_compaction_closes_step,
    prunes_only_under_pressure,
)
from sessionspec.spec.loop_order_properties import prunes_only_above_threshold, steering_in_queue_order
from sessionspec.spec.loop_properties import (
    checker_finds_the_sent_requests,
    header_reasons_follow_instances,
    other_agents_never_contribute,
    prefix_frozen_per_instance,
    prefix_never_history,
    requests_extend_within_instance,
    requests_rebuild_from_log,
    turn_numbers_continue,
)
from sessionspec.spec.machine_checks import Check
from sessionspec.spec.machine_state import MachineState


class LoopInvariants(MachineState):
    """The invariants of the loop machine."""

    def _when_grown(self, check: Check, predicate: Callable[[int], str | None]) -> None:
        """Run an enabled invariant when the log grew since its last run (nothing it
        reads changes otherwise); ``predicate`` gets the log length it last saw."""
        s = self.session
        seen = s.checked_at.get(check)
        if check not in self.checks or seen == len(s.log):
            return
        problem = predicate(seen or 0)
        s.checked_at[check] = len(s.log)
        assert problem is None, problem

    def _new_requests(self, check: Check) -> list[SentRequest]:
        """The requests this invariant has not seen yet (all instances, in order)."""
        s = self.session
        flat = [r for rs in s.requests for r in rs]
        done = s.requests_checked.get(check, 0)
        s.requests_checked[check] = len(flat)
        return flat[done:]

    @invariant()
    def reconstructable(self) -> None:
        s = self.session
        find = self.under_test.find_requests
        self._when_grown(Check.RECONSTRUCT, lambda since: requests_rebuild_from_log(s.log, self._new_requests(Check.RECONSTRUCT)) or (
            None if find is None else
            checker_finds_the_sent_requests(s.log, [r for rs in s.requests for r in rs], s.first_live_seq, since, find=find)))

    @invariant()
    def frozen_prefix(self) -> None:
        s = self.session
        self._when_grown(Check.FREEZE, lambda _: prefix_frozen_per_instance(s.log, s.requests, s.compositions))

    @invariant()
    def cache_stable(self) -> None:
        # Earlier instances were checked while they were current; the current one
        # from its last checked request on (the pair it forms with the next one).
        s = self.session

        def check(_: int) -> str | None:
            current = s.requests[-1]
            done = s.requests_checked.get(Check.CACHE, 0) if s.cache_instance == len(s.requests) else 0
            s.requests_checked[Check.CACHE], s.cache_instance = len(current), len(s.requests)
            return requests_extend_within_instance(s.log, [current[max(0, done - 1):]])

        self._when_grown(Check.CACHE, check)

    @invariant()
    def prefix_not_history(self) -> None:
        s = self.session
        self._when_grown(Check.HISTORY, lambda _: prefix_never_history(s.log, sorted(self.contributed, key=js_stringify)))

    @invariant()
    def compaction_envelope(self) -> None:
        s = self.session
        self._when_grown(Check.ENVELOPE, lambda since: compaction_leaves_envelope(s.log, self._new_requests(Check.ENVELOPE), since))

    @invariant()
    def compaction_keeps_tool_pairs(self) -> None:
        self._when_grown(Check.PAIRS, lambda since: compactions_keep_tool_pairs(self.session.log, since))

    @invariant()
    def compaction_resummarizes(self) -> None:
        s = self.session
        self._when_grown(Check.RESUMMARIZE, lambda since: compactions_resummarize_head(s.log, s.summaries, since))

    @invariant()
    def overflow_compaction_placed(self) -> None:
        self._when_grown(Check.OVERFLOW, lambda _: overflow_retry_iff_compacted(self.session.log))

    @invariant()
    def pressure_compaction_placed(self) -> None:
        self._when_grown(Check.PRESSURE, lambda _: pressure_compaction_closes_step(self.session.log))

    @invariant()
    def prune_content_only(self) -> None:
        self._when_grown(Check.PRUNE, lambda since: prunes_only_under_pressure(self.session.log, since))

    @invariant()
    def dispatch_scoped(self) -> None:
        self._when_grown(Check.DISPATCH, lambda _: other_agents_never_contribute(self._new_requests(Check.DISPATCH),
                                                           sorted(self.foreign, key=js_stringify)))

    @invariant()
    def header_reasons(self) -> None:
        s = self.session
        self._when_grown(Check.HEADERS, lambda _: header_reasons_follow_instances(s.log, s.instance_starts, s.first_live_seq) or
                         turn_numbers_continue(s.log, s.first_live_seq))

    @invariant()
    def steering_first_in_first_out(self) -> None:
        self._when_grown(Check.STEERING, lambda since: steering_in_queue_order(self.session.log, since))

    @invariant()
    def prune_threshold(self) -> None:
        plugin = self.plugin
        if plugin is None or plugin.prune is None:
            return
        threshold = plugin.prune.threshold_chars
        self._when_grown(Check.PRUNE_THRESHOLD, lambda since: prunes_only_above_threshold(self.session.log, threshold, since))
