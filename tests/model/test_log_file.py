"""A raw log file's lines as the model decides them (model/log_file.py): the header on line 1, a storage record on
every further non-empty line, and a line that cannot be read (FMT-1; a torn last line, QF-15).

Both ways, over the files the loop simulator's logs are written to (``sessionspec generate``): every line is read,
the header first and the events as the checker reads them; each change FMT-1 forbids (the header moved, a line not
UTF-8, a torn first line, no line at all) is refused by FMT-1, and a torn last line is QF-15's quirk, not a finding.
The reader here is the test's own (the checker's is ``sessionspec/check/logfile.py``, with its limits).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.model.codec import SessionHeader, decode_record, parse_value
from sessionspec.model.jsonval import JsonObject, freeze
from sessionspec.model.log import Dialect, Event
from sessionspec.model.log_file import check_not_empty, header_line, header_line_refused, not_utf8, unreadable_line
from sessionspec.model.rejected import Rejected
from tests.support import generated_log, read_events

# The header line the file store writes first (``session-persistence-jsonl/src/format.ts`` lines 46-57 at
# ``a55f148516``: ``type`` first, absent optional fields omitted), FMT-1's example.
HEADER = b'{"type":"session","version":0,"id":"s","createdAt":0,"cwd":"/w","delegationDepth":0}'


def written(events: int, seed: int) -> bytes:
    """A file as the store writes it: the header line, then the simulator's records, each line ending its newline."""
    return HEADER + b"\n" + generated_log(events, seed)


@dataclass
class Read:
    header: SessionHeader | None = None
    events: list[Event] = field(default_factory=list)
    found: list[Rejected] = field(default_factory=list)


def read(raw: bytes) -> Read:
    """The model's line definitions over a file's bytes, one line at a time."""
    out = Read()
    lines = raw.split(b"\n")
    ends = [True] * (len(lines) - 1) + [False]
    first, count = True, 0
    for line, newline in zip(lines, ends, strict=True):
        count += 1 if line or newline else 0
        if not line.strip():
            continue
        try:
            value = parse_value(line.decode("utf-8"))
        except UnicodeDecodeError as error:
            value = not_utf8(error.start)
        was_first, first = first, False
        if isinstance(value, Rejected):
            out.found.append(unreadable_line(value, newline, was_first))
            continue
        header = header_line(value, was_first)
        if isinstance(header, SessionHeader):
            out.header = header
        elif isinstance(header, Rejected):
            out.found.append(header)
        else:
            decoded = decode_record(value)
            out.found += [decoded] if isinstance(decoded, Rejected) else []
            out.events += [] if isinstance(decoded, Rejected) else list(decoded)
    empty = check_not_empty(count, out.header is not None or bool(out.events) or bool(out.found))
    out.found += [] if empty is None else [empty]
    return out


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 10_000))
def test_every_line_of_a_written_file_is_read(seed: int) -> None:
    raw = written(300, seed)
    got = read(raw)
    assert got.found == [] and got.header is not None and got.header.id == "s"
    assert got.events == read_events(raw) == read_events(generated_log(300, seed))


def _rules(raw: bytes) -> list[str]:
    return [f.rule for f in read(raw).found]


def test_a_header_not_on_the_first_line_is_refused() -> None:
    lines = written(300, 1).split(b"\n")
    moved = b"\n".join([lines[1], lines[0], *lines[2:]])
    assert [(f.rule, f.reason) for f in read(moved).found] == [("FMT-1", "session header line after the first line")]
    assert _rules(b"\n".join([lines[0].replace(b'"version":0', b'"version":1'), *lines[1:]])) == ["LOG-17"]


def test_a_line_not_utf_8_is_refused() -> None:
    lines = written(300, 1).split(b"\n")
    broken = b"\n".join([lines[0], lines[1].replace(b'"', b'"\xff', 1), *lines[2:]])
    assert [(f.rule, f.reason) for f in read(broken).found] == [("FMT-1", "invalid UTF-8 at byte 2")]


@pytest.mark.parametrize(("raw", "rules"), [
    (b"", ["FMT-1"]), (b"\n\n  \n", ["FMT-1"]), (b'{"type":"session","version":0,"id":"s"', ["FMT-1"]),
    (b'{"type":"session","version":0,"id":"s","createdAt":0}\n', []),
])
def test_a_file_without_its_header_line_is_refused(raw: bytes, rules: list[str]) -> None:
    assert _rules(raw) == rules


def test_a_torn_last_line_is_a_quirk_and_a_broken_one_with_its_newline_is_refused() -> None:
    raw = written(300, 1)
    torn = raw[:-1][: -10]
    assert _rules(torn) == ["QF-15"]
    assert _rules(torn + b"\n") == ["FMT-1"]


# ---------------------------------------------------------------- QF-14: the header line the file load takes

def _header(**changes: object) -> JsonObject:
    value = json.loads(HEADER)
    value.update(changes)
    frozen = freeze({k: v for k, v in value.items() if v is not _DROP})
    assert isinstance(frozen, JsonObject)
    return frozen


_DROP = object()


@pytest.mark.parametrize("dialect", list(Dialect))
def test_QF_14_the_header_line_the_store_writes_is_taken(dialect: Dialect) -> None:
    """``toHeaderLine`` writes every key ``isHeaderLine`` requires (``delegationDepth ?? 0``)."""
    assert header_line_refused(_header(), dialect) is None
    assert header_line_refused(_header(createdAt=2**53 - 1, delegationDepth=2**53 - 1, version=0.5), dialect) is None


@pytest.mark.parametrize(("changes", "why"), [
    ({"type": "other"}, "its type is not \"session\""),
    ({"version": "0"}, "no number version"),
    ({"version": True}, "no number version"),
    ({"id": 7}, "no string id"),
    ({"createdAt": _DROP}, "no non-negative safe-integer createdAt"),
    ({"createdAt": -1}, "no non-negative safe-integer createdAt"),
    ({"createdAt": 2**53}, "no non-negative safe-integer createdAt"),
    ({"createdAt": 1.5}, "no non-negative safe-integer createdAt"),
    ({"delegationDepth": _DROP}, "no non-negative safe-integer delegationDepth"),
    ({"delegationDepth": False}, "no non-negative safe-integer delegationDepth"),
])
@pytest.mark.parametrize("dialect", list(Dialect))
def test_QF_14_a_header_line_without_a_required_key_is_refused_by_the_file_load(changes: dict[str, object], why: str, dialect: Dialect) -> None:
    """``isHeaderLine`` (``format.ts`` lines 79-93 at ``a55f148516``): a number ``version``, a string ``id``, and
    ``createdAt`` and ``delegationDepth`` non-negative safe integers."""
    assert header_line_refused(_header(**changes), dialect) == why


@pytest.mark.parametrize(("changes", "why"), [
    ({"origin": "subagent"}, None),
    ({"origin": "cli"}, "an origin other than \"subagent\""),
    ({"agentPreset": "coder"}, None),
    ({"agentPreset": 3}, "a non-string agentPreset"),
    ({"origin": "subagent", "agentPreset": None}, "a non-string agentPreset"),
])
def test_QF_14_only_the_d08_load_bounds_origin_and_agent_preset(changes: dict[str, object], why: str | None) -> None:
    """D08's ``isHeaderLine`` (lines 89-107 at ``611615650f``) also bounds ``origin`` and ``agentPreset``; A55's
    reads neither."""
    assert header_line_refused(_header(**changes), Dialect.D08) == why
    assert header_line_refused(_header(**changes), Dialect.A55) is None
