"""The check's loop fold (sessionspec/check/loop_audit.py) with the model's definitions in the compiled twins'
place: what tests/fast ties the twins to, and what a test of a model decision folds (the check itself runs the
twins, so a test through ``audit_loop`` alone takes the twins' branches, not the definition's)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final
from unittest import mock

from sessionspec.check import loop_audit
from sessionspec.model.log import Dialect, Event
from sessionspec.model.loop_log import step, turn
from sessionspec.model.rejected import Rejected

# The twins the loop fold runs, by their name there, and the definition each stands for.
TWINNED: Final[dict[str, Any]] = {"open_turn": turn.open_turn, "open_step": turn.open_step, "close_step": turn.close_step,
                  "record_message": step.record_message, "take_user_message": step.take_user_message,
                  "take_chunk": step.take_chunk, "take_request": turn.take_request, "close_turn": turn.close_turn,
                  "take_tool_call": step.take_tool_call, "take_tool_result": step.take_tool_result,
                  "take_config": step.take_config}


@contextmanager
def definitions() -> Iterator[None]:
    """The loop fold with the definitions in the twins' place."""
    with mock.patch.multiple(loop_audit, **TWINNED):
        yield


def audit_loop_by_definitions(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """``audit_loop`` folding the model's definitions."""
    with definitions():
        return loop_audit.audit_loop(events, dialect, first_live_seq)
