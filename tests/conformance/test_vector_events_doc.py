"""docs/events.md is generated from the model's event classes, the rule book and the vectors (issue 27,
part 6): the committed file must equal a fresh rendering, and it must cover what an implementer needs."""

from __future__ import annotations

import json
import re

from sessionspec.conformance.vectors.events_doc import EVENTS_DOC, render, survey
from sessionspec.model.log import CORE_CLASSES


def test_the_committed_event_reference_is_fresh() -> None:
    assert EVENTS_DOC.read_text(encoding="utf-8") == render(), (
        "docs/events.md is stale: run `python -m sessionspec.conformance.vectors.events_doc`")


def test_every_event_type_and_chunk_kind_has_a_section_and_a_real_example() -> None:
    text = render()
    by_type, by_chunk = survey()
    headings = re.findall(r"^### `([^`]+)`$", text, re.M)
    assert set(CORE_CLASSES) | set(by_type) | set(by_chunk) <= set(headings)
    # the chunk kinds an implementer must produce for text, reasoning and tool-call replies (docs/conformance.md)
    assert {"block-start", "text-delta", "reasoning-delta", "tool-call-delta", "block-end", "usage", "finish"} <= set(by_chunk)
    examples = re.findall(r"^```json\n(.*)\n```$", text, re.M)
    assert len(examples) == sum(1 for seen in [*by_type.values(), *by_chunk.values()] if seen.count)
    for example in examples:
        assert isinstance(json.loads(example), dict)


def test_the_assistant_message_section_names_provenance_and_source_event_seqs() -> None:
    """The two things issue 27's implementer had to copy from vectors/loop.json."""
    section = render().split("### `assistant/message`", 1)[1].split("### ", 1)[0]
    assert "| `provenance` |" in section and "`sourceEventSeqs` in" in section
