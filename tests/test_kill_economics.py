"""Cache-meter boundaries that mutation testing found unpinned (issue 9, docs/quality.md).

A provider's meter counts nothing below its minimum cacheable length and
rounds the rest down to its granularity: OpenAI caches prompts of 1,024
tokens or more, in 128-token steps; a neutral meter counts every token.
"""

from __future__ import annotations

import pytest

from sessionspec.economics import NEUTRAL, OPENAI, metered_hit


@pytest.mark.parametrize("shared,hit", [(0, 0), (1023, 0), (1024, 1024), (1151, 1024), (1152, 1152), (5000, 4992)])
def test_openai_meter_counts_from_the_minimum_in_granularity_steps(shared: int, hit: int) -> None:
    assert metered_hit(OPENAI, shared) == hit


@pytest.mark.parametrize("shared,hit", [(0, 0), (1, 1), (7, 7)])
def test_neutral_meter_counts_every_shared_token(shared: int, hit: int) -> None:
    assert metered_hit(NEUTRAL, shared) == hit
