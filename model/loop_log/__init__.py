"""The loop's own rules as a log shows them (LOOP-3..LOOP-16, LOG-11's precedence, LOG-16, DIA-12, DIA-15),
decided event by event over :class:`~sessionspec.model.loop_log.track.LoopTrack`.

No request is rebuilt: the state is the open turn (its trigger, prompt, blocked prompt, failed step, max-tokens
finish), the open step (its current attempt, its message's tool-call blocks and how many were called and
answered) and whether the loop instance has anchored a header.  Memory is bounded by the open step; time is
linear in the log.  Instances are visible in a log at its live start and after a crash repair (``turn/end
{interrupted}``, LOG-14: the repair runs on a cold load, so a new instance follows).

Read in this order: ``track`` (the state and the dialect's shapes), ``turn`` (turns, steps, anchors, steering),
``step`` (chunks, the message, tools, entering messages), ``dialect`` (the overlay).  ``sessionspec check`` runs
these over a log (``sessionspec/check/loop_audit.py``); ``tests/model/test_loop_log.py`` holds them against the
loop simulator's logs, both ways.
"""
