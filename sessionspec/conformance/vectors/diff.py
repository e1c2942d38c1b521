"""Readable failure diffs: an answer against its expectation pattern, lists compared by alignment.

:func:`sessionspec.conformance.vectors.format.match` decides whether an answer matches (its mismatch lines
are what ``conform`` maps to rules); this module only *explains* a mismatch to a person, so its output is
shaped for reading (issue 27, part 3):

- a list whose length differs is aligned (a longest common subsequence over a short summary of each item:
  an event's type and key field, a message's role), so one missing event reads
  ``$.appended: missing at [3]: request/header reason=change`` instead of a cascade of shifted items;
  after the first missing or extra item, the ``seq``/``sourceEventSeqs`` differences that only restate the
  shift are folded into one line;
- an ``eq`` pattern over an object or a list is compared structurally, so a request that differs in one
  message names that message, not the whole request.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, final

from sessionspec.conformance.vectors.format import canonical_text, match, rejection_rules
from sessionspec.model.jsonval import ABSENT, Absent

_SHIFTED: Final = (".seq", ".sourceEventSeqs")


@final
@dataclass(frozen=True, slots=True)
class Diff:
    """One difference: where (a JSON path), what was expected and what came (short texts; ``None`` for
    nothing: a missing item has no ``got``, an extra one no ``expected``)."""

    path: str
    expected: str | None
    got: str | None
    text: str

    def as_json(self) -> dict[str, str | None]:
        return {"path": self.path, "expected": self.expected, "got": self.got, "text": self.text}


def short(value: object, limit: int = 160) -> str:
    text = "(absent)" if isinstance(value, Absent) else canonical_text(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def summary(value: object, *, texts: bool = True) -> str:
    """A short name for a list item, used to align lists (``texts=False``) and to name a missing or extra
    item: an event's type and key field (``request/header reason=change``, ``assistant/chunk
    chunk=text-delta``) and first text, a message's role and first text, else the value's short text."""
    if isinstance(value, dict):
        kind = value.get("type")
        data = value.get("data")
        if isinstance(kind, str) and isinstance(data, dict):
            return f"{kind}{_key_field(data)}{_first_text(data.get('content')) if texts else ''}"
        role = value.get("role")
        if isinstance(role, str):
            return f"{role} message{_first_text(value.get('content'))}"
        if isinstance(kind, str):
            return f"{kind}{_first_text([value])}"
    return short(value, 80)


def _key_field(data: dict[str, object]) -> str:
    for key in ("reason", "trigger", "chunk", "kind"):
        field = data.get(key)
        if isinstance(field, str):
            return f" {key}={field}"
        if isinstance(field, dict):
            inner = field.get("kind", field.get("type"))
            if isinstance(inner, str):
                return f" {key}={inner}"
    return ""


def _first_text(content: object) -> str:
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                text = str(block["text"])
                return f" {text[:30]!r}"
    return ""


def expected_value(pattern: object) -> object | Absent:
    """The value a pattern stands for, as far as it is one (for summaries): ``eq``, or an ``object``/``fields``
    of ``eq`` leaves; ``ABSENT`` when it is not a value (``any``, ``reject``)."""
    if not isinstance(pattern, dict) or len(pattern) != 1:
        return ABSENT
    (kind, arg), = pattern.items()
    if kind == "eq":
        value: object = arg
        return value
    if kind in ("object", "fields") and isinstance(arg, dict):
        out = {k: expected_value(p) for k, p in arg.items()}
        return {k: v for k, v in out.items() if not isinstance(v, Absent)}
    if kind == "array" and isinstance(arg, list):
        return [None if isinstance(v, Absent) else v for v in (expected_value(p) for p in arg)]
    return ABSENT


def diff(pattern: object, actual: object | Absent, path: str = "$") -> list[Diff]:
    """Every difference of ``actual`` from ``pattern``, for reading; empty exactly when
    :func:`~sessionspec.conformance.vectors.format.match` finds none."""
    if not match(pattern, actual, path):
        return []
    assert isinstance(pattern, dict)
    (kind, arg), = pattern.items()
    if kind != "reject" and rejection_rules(actual) is not None:  # a rejection where a value was expected: one line
        return [_leaf(path, expected_value(pattern), actual, line) for line in match(pattern, actual, path)]
    if kind in ("object", "fields") and isinstance(arg, dict) and isinstance(actual, dict):
        out: list[Diff] = []
        extra = sorted(set(actual) - set(arg)) if kind == "object" else []
        if extra:
            out.append(Diff(path, None, ", ".join(extra), f"{path}: unexpected keys {', '.join(extra)}"))
        for key in sorted(arg):
            out += diff(arg[key], actual.get(key, ABSENT), f"{path}.{key}")
        return out
    if kind == "array" and isinstance(arg, list) and isinstance(actual, list):
        return _list_diff(list(arg), actual, path, pattern_items=True)
    if kind == "eq" and not isinstance(actual, Absent):
        return _value_diff(arg, actual, path)
    return [_leaf(path, arg if kind == "eq" else pattern, actual, line) for line in match(pattern, actual, path)]


def _leaf(path: str, expected: object, actual: object | Absent, line: str) -> Diff:
    return Diff(path, short(expected), short(actual), line)


def _value_diff(expected: object, actual: object, path: str) -> list[Diff]:
    """Structural comparison of two plain values (the inside of an ``eq`` pattern)."""
    if canonical_text(expected) == canonical_text(actual):
        return []
    if isinstance(expected, dict) and isinstance(actual, dict) and "$number" not in expected:
        out: list[Diff] = []
        for key in sorted(set(expected) | set(actual)):
            if key not in actual:
                out.append(Diff(f"{path}.{key}", short(expected[key]), None, f"{path}.{key}: missing (expected {short(expected[key])})"))
            elif key not in expected:
                out.append(Diff(f"{path}.{key}", None, short(actual[key]), f"{path}.{key}: unexpected (got {short(actual[key])})"))
            else:
                out += _value_diff(expected[key], actual[key], f"{path}.{key}")
        return out
    if isinstance(expected, list) and isinstance(actual, list):
        return _list_diff(expected, actual, path, pattern_items=False)
    return [Diff(path, short(expected), short(actual), f"{path}: expected {short(expected)}, got {short(actual)}")]


def _list_diff(expected: Sequence[object], actual: Sequence[object], path: str, *, pattern_items: bool) -> list[Diff]:
    """Same length: item by item.  Else aligned: missing and extra items by index, then the differences of
    the aligned pairs (the ``seq`` shift after the first gap folded into one line)."""
    def item_diff(e: object, a: object, at: str) -> list[Diff]:
        return diff(e, a, at) if pattern_items else _value_diff(e, a, at)

    if len(expected) == len(actual):
        return [d for i, (e, a) in enumerate(zip(expected, actual)) for d in item_diff(e, a, f"{path}[{i}]")]
    values_e = [expected_value(e) if pattern_items else e for e in expected]
    pairs = _align([summary(e, texts=False) for e in values_e], [summary(a, texts=False) for a in actual])
    names_e = [summary(e) for e in values_e]
    names_a = [summary(a) for a in actual]
    paired_e = {i for i, _ in pairs}
    paired_a = {j for _, j in pairs}
    out = [Diff(f"{path}[{i}]", names_e[i], None, f"{path}: missing at [{i}]: {names_e[i]}")
           for i in range(len(expected)) if i not in paired_e]
    out += [Diff(f"{path}[{j}]", None, names_a[j], f"{path}: extra at [{j}]: {names_a[j]}")
            for j in range(len(actual)) if j not in paired_a]
    out.sort(key=lambda d: int(d.path.rsplit("[", 1)[1].rstrip("]")))
    first_gap = min((i for i in range(len(expected)) if i not in paired_e), default=len(expected))
    first_gap = min(first_gap, min((i for i, j in pairs if j != i), default=len(expected)))
    folded = 0
    for i, j in pairs:
        for d in item_diff(expected[i], actual[j], f"{path}[{i}]"):
            if i >= first_gap and any(d.path.endswith(s) or f"{s}[" in d.path for s in _SHIFTED):
                folded += 1
            elif i != j:  # paths index the expectation; say where the answer has the item
                out.append(Diff(d.path, d.expected, d.got, f"{d.text} (the answer's [{j}])"))
            else:
                out.append(d)
    if folded:
        out.append(Diff(path, None, None, f"{path}: {folded} seq/sourceEventSeqs differences after [{first_gap}] "
                                          "follow from the missing or extra items"))
    return out


def _align(left: Sequence[str], right: Sequence[str]) -> list[tuple[int, int]]:
    """A longest common subsequence of two name lists, as index pairs (quadratic; lists are a few hundred
    items at most)."""
    n, m = len(left), len(right)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            table[i][j] = table[i + 1][j + 1] + 1 if left[i] == right[j] else max(table[i + 1][j], table[i][j + 1])
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < n and j < m:
        if left[i] == right[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def _normal_path(path: str) -> str:
    """``$.requests[3].messages`` -> ``requests.messages`` (indices depend on the trace; the root is ``$``)."""
    bare = re.sub(r"\[\d+\]", "", path).removeprefix("$").removeprefix(".")
    return bare or "$"


def signature(op: str, diffs: Sequence[Diff]) -> str:
    """How a failure fails, stable across traces that fail the same way (issue 45, part 3): the operation
    and the first differing path without its indices, and for a missing or extra list item its kind:
    ``send/requests.messages``, ``send/appended:missing=user/message``, ``send/$:rejected``."""
    if not diffs:
        return f"{op}/$"
    first = diffs[0]
    detail = ""
    if first.expected is None and first.got is not None and ": extra at [" in first.text:
        detail = f":extra={_item_kind(first.got)}"
    elif first.got is None and first.expected is not None and ": missing at [" in first.text:
        detail = f":missing={_item_kind(first.expected)}"
    elif first.path == "$" and "rejected (" in first.text:
        detail = ":rejected"
    elif first.path == "$" and "expected a rejection" in first.text:
        detail = ":not-rejected"
    elif first.path == "$" and first.text.startswith("error answer"):
        detail = ":error"
    return f"{op}/{_normal_path(first.path)}{detail}"


def _item_kind(name: str) -> str:
    """The kind of a list item from its summary: an event's type, a message's role (``user-message``)."""
    words = name.split()
    if len(words) >= 2 and words[1] == "message":
        return f"{words[0]}-message"
    return words[0] if words else "item"


def elide(value: object, limit: int = 60) -> object:
    """``value`` with every string longer than ``limit`` cut in the middle (``rrrr…[1,600 chars]…rrrr``), so
    a whole operation prints readably (issue 45, part 4)."""
    if isinstance(value, str) and len(value) > limit:
        keep = max(8, (limit - 20) // 2)
        return f"{value[:keep]}…[{len(value):,} chars]…{value[-keep:]}"
    if isinstance(value, dict):
        return {k: elide(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [elide(v, limit) for v in value]
    return value


_ITEM: Final = re.compile(r"^(?P<head>.*?): (?P<kind>missing|extra) at \[(?P<index>\d+)\]: (?P<type>\S+)")


def collapse_runs(lines: Sequence[str], least: int = 3) -> list[str]:
    """Runs of at least ``least`` missing (or extra) items of one type at consecutive indices folded into one
    line, where the run starts: ``$.appended: extra at [5..9]: 5 × assistant/chunk`` (issue 45, part 4).
    A line of another kind between two items of a run (a missing item among extra ones) does not end it."""
    found = [_ITEM.match(line) for line in lines]
    runs: dict[tuple[str, str, str], list[list[int]]] = {}
    for position, item in enumerate(found):
        if item is None:
            continue
        groups = runs.setdefault((item["head"], item["kind"], item["type"]), [])
        previous = found[groups[-1][-1]] if groups else None
        if previous is not None and int(item["index"]) == int(previous["index"]) + 1:
            groups[-1].append(position)
        else:
            groups.append([position])
    folded: dict[int, str] = {}
    dropped: set[int] = set()
    for (head, kind, kind_type), groups in runs.items():
        for group in groups:
            if len(group) < least:
                continue
            first, last = found[group[0]], found[group[-1]]
            assert first is not None and last is not None
            folded[group[0]] = f"{head}: {kind} at [{first['index']}..{last['index']}]: {len(group)} × {kind_type}"
            dropped.update(group[1:])
    return [folded.get(i, line) for i, line in enumerate(lines) if i not in dropped]
