"""Hardening of the codec (issue 9): every input gives events or a Rejected.

No exception escapes ``parse_event_line`` for any text: bytes decoded with
replacement, mutated real lines, and the hostile shapes named by the issue.
"""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.model.codec import parse_event_line, serialize_event
from sessionspec.model.rejected import FailureKind, Rejected
from tests.support import GROUNDTRUTH, REAL


def _real_lines(limit: int = 400) -> list[str]:
    lines: list[str] = []
    for path in sorted(REAL.rglob("*.jsonl")) + sorted(GROUNDTRUTH.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and '"type":"session"' not in line[:20]:
                lines.append(line)
    random.Random(7).shuffle(lines)
    return lines[:limit]


REAL_LINES = _real_lines()


def _total(text: str) -> tuple[object, ...] | Rejected:
    result = parse_event_line(text)
    assert isinstance(result, (tuple, Rejected))
    if isinstance(result, tuple):
        for event in result:
            # whatever parsed must serialize again (totality of the way back)
            assert isinstance(serialize_event(event), str)
    return result


@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    _total(data.decode("utf-8", errors="replace"))


@given(st.sampled_from(REAL_LINES), st.integers(min_value=0, max_value=10_000), st.sampled_from(["cut", "flip", "insert", "delete"]), st.text(max_size=3))
def test_mutated_real_lines_never_raise(line: str, where: int, how: str, junk: str) -> None:
    i = where % (len(line) + 1)
    match how:
        case "cut":
            text = line[:i]
        case "flip":
            text = line[:i] + junk + line[i + 1 :]
        case "insert":
            text = line[:i] + junk + line[i:]
        case _:
            text = line[:i] + line[i + 3 :]
    _total(text)


@settings(max_examples=20)
@given(st.sampled_from(REAL_LINES))
def test_truncated_real_line_is_rejected_not_raised(line: str) -> None:
    assert isinstance(_total(line[: len(line) // 2]), Rejected)


def test_named_hostile_inputs() -> None:
    seq_line = '{"type":"x/y","seq":0,"time":0,"data":%s}'
    cases = {
        "nan": seq_line % "NaN",
        "infinity": seq_line % "[Infinity]",
        "big-int": seq_line % str(2**60),
        "neg-zero": seq_line % "-0",
        "neg-zero-float": seq_line % "-0.0",
        "overflow-float": seq_line % "1e400",
        "duplicate-key": '{"type":"x/y","seq":0,"seq":1,"time":0,"data":null}',
        "bom": "\ufeff" + seq_line % "null",
        "crlf": seq_line % "null" + "\r",
        "not-object": "[1,2,3]",
        "empty": "",
        "lone-surrogate": seq_line % '"\\ud800"',
        "deep-array": seq_line % ("[" * 10_000 + "]" * 10_000),
        "deep-object": seq_line % ('{"a":' * 10_000 + "1" + "}" * 10_000),
    }
    results = {name: _total(text) for name, text in cases.items()}
    for name in ("nan", "infinity", "big-int", "neg-zero", "neg-zero-float", "overflow-float"):
        assert isinstance(results[name], Rejected) and results[name].rule == "LOG-4", name
    assert isinstance(results["duplicate-key"], Rejected) and results["duplicate-key"].rule == "FMT-2"
    for name in ("bom", "not-object", "empty"):
        assert isinstance(results[name], Rejected), name
    deep = results["deep-array"]
    assert isinstance(deep, Rejected) and deep.kind is FailureKind.LIMIT
    deep_object = results["deep-object"]
    assert isinstance(deep_object, Rejected) and deep_object.kind is FailureKind.LIMIT
    # trailing CR is JSON whitespace: the event parses
    assert isinstance(results["crlf"], tuple)
    # a lone surrogate is JSON; JS writes it back escaped, and so do we
    lone = results["lone-surrogate"]
    assert isinstance(lone, tuple) and serialize_event(lone[0]).endswith('"data":"\\ud800"}')


def test_large_line_is_parsed(tmp_path: Path) -> None:
    """A 5 MB text field parses (the checker bounds line length separately)."""
    text = "x" * (5 * 1024 * 1024)
    result = _total('{"type":"x/y","seq":0,"time":0,"data":"' + text + '"}')
    assert isinstance(result, tuple) and result[0].data == text
