"""The decision search's wider candidates, configurations (issue 43 item 3): compact-basic at its edges.

compact-basic is called directly (``compact``, pressure) on a model log cut before its last ``step/end``
(pressure compaction runs inside a step, CMP-6) with a configuration drawn from each setting's edge values
(CMP-3: a ratio at 0, 1 and past them, the retained ratio equal to the threshold and one ulp either side,
both retain settings at once, counts that are negative, fractional or booleans, a window of 0 or 1), or with
a prune configuration around the size of one of the log's tool results, whose content is first split into
several text blocks, given a block that is not text, or emptied (PRN-1..3, the head and tail crossing block
boundaries).  A configuration the protocol cannot decode is no candidate (the search drops it).
"""

from __future__ import annotations

import json
import math
import random
from typing import Any, Final

from sessionspec.conformance.vectors.build import text
from sessionspec.decisions.candidates import Op

RATIOS: Final = (0, 1, {"$number": "1e-9"}, {"$number": "0.5"}, {"$number": "0.999999"}, {"$number": "1.0000001"},
                 {"$number": "1.5"}, -1, {"$number": "0.25"}, {"$number": "0.3"})
COUNTS: Final = (0, 1, -1, {"$number": "1.5"}, True, 2, 10**6)
WINDOWS: Final = (0, 1, -1, 2, 100, 1000, 5000, {"$number": "1000.5"})


def cut_before_last_step_end(lines: list[str]) -> list[str]:
    ends = [i for i, line in enumerate(lines) if '"type":"step/end"' in line]
    return lines[:ends[-1]] if ends else lines


def _number(value: float) -> Any:
    return value if float(value).is_integer() else {"$number": repr(value)}


def edge_config(rng: random.Random) -> dict[str, Any]:
    """A compact-basic configuration with one to three settings on or past their edges."""
    spec: dict[str, Any] = {"contextWindow": rng.choice(WINDOWS), "instruction": "condense", "maxTokens": 256,
                            "summaries": [text("CHECKPOINT")] * 3}
    for _ in range(rng.randint(1, 3)):
        roll = rng.random()
        if roll < 0.25:
            spec["thresholdRatio"] = rng.choice(RATIOS)
        elif roll < 0.5:
            threshold = rng.choice([0.25, 0.5, 0.8, 1.0])
            spec["thresholdRatio"] = _number(threshold)
            spec["retainRatio"] = _number(rng.choice([threshold, math.nextafter(threshold, 0), math.nextafter(threshold, 2),
                                                      threshold / 2, 1.0]))
        elif roll < 0.6:
            spec["retainRatio"], spec["retainTokens"] = rng.choice(RATIOS), rng.choice(COUNTS)
        elif roll < 0.7:
            spec["retainRatio"] = rng.choice(RATIOS)
        elif roll < 0.8:
            spec["retainTokens"] = rng.choice(COUNTS)
        else:
            spec[rng.choice(["compactionRetries", "maxOverflowRetries", "maxTokens"])] = rng.choice(COUNTS)
    return spec


def _blocks(rng: random.Random, content_text: str) -> Any:
    """A tool result's content rewritten: text split into blocks, a block that is not text, or no list at all."""
    roll = rng.random()
    if roll < 0.5:
        cuts = sorted(rng.sample(range(len(content_text) + 1), min(2, len(content_text) + 1)))
        parts = [content_text[:cuts[0]], content_text[cuts[0]:cuts[-1]], content_text[cuts[-1]:]]
        return [{"type": "text", "text": p} for p in parts if p or rng.random() < 0.3]
    if roll < 0.75:
        blocks: list[Any] = [{"type": "text", "text": content_text}]
        blocks.insert(rng.randint(0, 1), rng.choice([{"type": "image", "data": "AA=="}, {"type": "text", "text": 5}, "loose"]))
        return blocks
    return rng.choice([[], "just text", None, {}])


def prune_trace(rng: random.Random, lines: list[str]) -> tuple[dict[str, Any], list[Op]] | None:
    """compact-basic with a prune configuration around the size of one (edited) tool result of ``lines``."""
    results = [i for i, line in enumerate(lines) if '"type":"tool/result"' in line[:30]]
    if not results:
        return None
    edited = list(lines)
    i = rng.choice(results)
    event = json.loads(edited[i])
    content = event["data"].get("content")
    body = "".join(b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)) \
        if isinstance(content, list) else ""
    if rng.random() < 0.8:
        event["data"]["content"] = _blocks(rng, body)
        edited[i] = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
    size = max(len(body), 1)
    threshold = max(40, size + rng.choice([-1, 0, 1, -size // 4]))
    head = rng.choice([0, 1, (threshold - 39) // 2, threshold - 39])
    tail = rng.choice([0, 1, size // 4, max(threshold - head - 39, 0), max(threshold - head - 40, 0)])
    compaction: dict[str, Any] = {"contextWindow": rng.choice([2, 50, 10**6]), "instruction": "condense", "maxTokens": 256,
                                  "summaries": [text("CHECKPOINT")] * 3,
                                  "prune": {"thresholdChars": threshold, "headChars": head, "tailChars": tail}}
    return {}, [{"op": "compact", "trigger": "pressure", "log": cut_before_last_step_end(edited), "compaction": compaction}]


def config_trace(rng: random.Random, lines: list[str]) -> tuple[dict[str, Any], list[Op]]:
    return {}, [{"op": "compact", "trigger": "pressure", "log": cut_before_last_step_end(lines), "compaction": edge_config(rng)}]
