"""The agent of the ground-truth scenarios (tests/data/groundtruth): its persona
and its one tool, shared by the state machines (spec/machines.py) and the
simulator (sessionspec/simulate.py), so both drive the loop with the agent
the real harness was recorded with."""

from __future__ import annotations

from typing import Final

from sessionspec.model.jsonval import freeze

ECHO_TOOL: Final = freeze({"name": "echo", "description": "echo back the text argument",
                           "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}})
PERSONA: Final = "You are an AI agent powered by the DeepSeek Harness SDK.\n\nYou are the ground-truth test agent."
