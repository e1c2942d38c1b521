"""LOOP-4: a prompt with ``prompt-prefix`` contexts, as the loop logs it."""

from __future__ import annotations

from typing import Final

from sessionspec.check.audits import audits
from sessionspec.fast.constants import ABSENT
from sessionspec.fast.json_eq import same_json
from sessionspec.fast.jsonget import get
from sessionspec.model.log import Event
from sessionspec.model.rejected import Rejected

DELIMITER_TEXT: Final = "\n\n## My request:\n"


@audits("LOOP-4")
def check_prefix_contexts(event: Event) -> Rejected | None:
    """LOOP-4: with ``prompt-prefix`` contexts the logged prompt is "``content``
    = the content of every such context, concatenated, then the delimiter
    block ``{type:"text", text:"\\n\\n## My request:\\n"}``, then the (possibly
    rewritten) prompt content; ``envelope = {displayContent: prompt content,
    prefixContexts:[{source, meta?}]}``".  So an envelope names at least one
    context, the content holds context blocks, then the delimiter, then
    exactly ``displayContent``."""
    envelope = get(event.data, "envelope")
    if envelope is ABSENT:
        return None
    content, display, contexts = get(event.data, "content"), get(envelope, "displayContent"), get(envelope, "prefixContexts")
    if not (isinstance(contexts, tuple) and contexts):
        return Rejected(rule="LOOP-4", seq=event.seq, reason="user/message envelope names no prefix context (the loop writes an envelope only with one)")
    if not isinstance(content, tuple) or not isinstance(display, tuple):
        return None  # LOG-12 reports the shape
    cut = len(content) - len(display) - 1
    delimiter = content[cut] if 0 < cut < len(content) else ABSENT
    if get(delimiter, "type") != "text" or get(delimiter, "text") != DELIMITER_TEXT or not same_json(content[cut + 1:], display):
        return Rejected(rule="LOOP-4", seq=event.seq, reason="user/message with prefix contexts is not context blocks, the delimiter block, then displayContent")
    return None
