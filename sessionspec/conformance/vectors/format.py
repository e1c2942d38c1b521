"""``sessionspec-vectors/1``: canonical JSON and expectation patterns (the schema: schema.py).

A vector file is language-neutral JSON.  *Canonical* here means: object keys
sorted, UTF-8 text (non-ASCII written literally), integers only.  A JSON number
that is not an integer (a temperature, a compaction ratio) is written as the
one-key object ``{"$number": "<JS number text>"}`` (``"0.7"``), so every
implementation reads it back exactly; an object with the single key
``$number`` is reserved for this escape.

Expectations are *patterns* (docs/conformance.md):

``{"eq": V}``           the actual value is V (canonical JSON equality)
``{"one_of": [V, …]}``  the actual value is one of the Vs
``{"any": {}}``         any value (the key must be present)
``{"reject": {"rule": R}}``  the operation was rejected and R is among the rule IDs it names
``{"object": {k: P}}``  an object with exactly these keys, each matching its pattern
``{"fields": {k: P}}``  an object with at least these keys, each matching
``{"array": [P, …]}``   an array of exactly this length, element-wise

Errors are compared by rule ID only, never by message text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Final

from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, js_number

FORMAT: Final = "sessionspec-vectors/1"
NUMBER_ESCAPE: Final = "$number"

PlainJson = None | bool | int | str | list["PlainJson"] | dict[str, "PlainJson"]


class FormatError(Exception):
    """A vector document that does not follow the format (a bug in the vector or its generator)."""


# --------------------------------------------------------------------------- canonical JSON


def to_plain(value: object) -> PlainJson:
    """Model JSON (``JsonObject``, tuples, floats) or plain Python JSON -> the
    canonical plain form: lists, dicts, integers; a non-integer number becomes
    ``{"$number": text}``."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) <= 2**53:
            return int(value)
        if not math.isfinite(value):
            raise FormatError(f"not a JSON number: {value!r}")
        return {NUMBER_ESCAPE: js_number(value)}
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    raise FormatError(f"not JSON: {type(value).__name__}")


def to_model(value: object) -> Json:
    """Plain canonical JSON -> the model's immutable JSON (``$number`` decoded)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, Mapping):
        if set(value) == {NUMBER_ESCAPE} and isinstance(value[NUMBER_ESCAPE], str):
            number = float(value[NUMBER_ESCAPE])
            return int(number) if number.is_integer() else number
        return JsonObject((str(k), to_model(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(to_model(v) for v in value)
    raise FormatError(f"not JSON: {type(value).__name__}")


def canonical_text(value: object) -> str:
    """Compact canonical text (sorted keys, UTF-8, ``,``/``:`` separators)."""
    return json.dumps(to_plain(value), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def file_text(document: object) -> str:
    """How a vector file is written (deterministic, so regeneration is byte-stable):
    canonical JSON with one vector per line (compact, sorted keys), a final
    newline.  Any other document (the schema) is one-space indented."""
    plain = to_plain(document)
    if isinstance(plain, dict) and isinstance(plain.get("vectors"), list):
        head = canonical_text({k: v for k, v in plain.items() if k != "vectors"})[:-1]
        vectors = plain["vectors"]
        assert isinstance(vectors, list)
        body = ",\n".join(canonical_text(v) for v in vectors)
        return f'{head},"vectors":[\n{body}\n]}}\n' if vectors else f'{head},"vectors":[]}}\n'
    return json.dumps(plain, sort_keys=True, ensure_ascii=False, indent=1) + "\n"


def reject_plain(value: object) -> bool:
    """Whether a plain value carries a float (forbidden in canonical files)."""
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(reject_plain(v) for v in value.values())
    if isinstance(value, list):
        return any(reject_plain(v) for v in value)
    return False


# --------------------------------------------------------------------------- patterns


def eq(value: object) -> PlainJson:
    return {"eq": to_plain(value)}


def one_of(*values: object) -> PlainJson:
    return {"one_of": [to_plain(v) for v in values]}


def any_value() -> PlainJson:
    return {"any": {}}


def reject(rule: str) -> PlainJson:
    return {"reject": {"rule": rule}}


def exact_object(fields: Mapping[str, PlainJson]) -> PlainJson:
    return {"object": dict(fields)}


def some_fields(fields: Mapping[str, PlainJson]) -> PlainJson:
    return {"fields": dict(fields)}


def array(items: Sequence[PlainJson]) -> PlainJson:
    return {"array": list(items)}


# Marks the one mismatch that is a rule disagreement only: the verdict (a rejection) agrees.
RULE_UNKNOWN: Final = "rule unknown:"


def verdict_only(mismatch: str) -> bool:
    """Whether ``mismatch`` is a rejection that names no rule where a rule was expected (verdict agrees)."""
    return f": {RULE_UNKNOWN} " in mismatch


PATTERN_KINDS: Final = ("eq", "one_of", "any", "reject", "object", "fields", "array")


def rejection_rules(actual: object) -> list[str] | None:
    """The rule IDs of a rejection response ``{"reject": {"rules": [...]}}``, else None."""
    if isinstance(actual, dict) and set(actual) == {"reject"} and isinstance(actual["reject"], dict):
        rules = actual["reject"].get("rules")
        if isinstance(rules, list) and all(isinstance(r, str) for r in rules):
            return list(rules)
    return None


def match(pattern: object, actual: object | Absent, path: str = "$") -> list[str]:
    """Every mismatch of ``actual`` (plain canonical JSON, ``ABSENT`` for a
    missing key) against ``pattern``, as ``path: what`` lines; empty when it matches."""
    if not isinstance(pattern, dict) or len(pattern) != 1:
        raise FormatError(f"{path}: a pattern is a one-key object, got {pattern!r}")
    (kind, arg), = pattern.items()
    if kind != "reject" and rejection_rules(actual) is not None:
        return [f"{path}: rejected ({', '.join(rejection_rules(actual) or [])}) but a value was expected"]
    match kind:
        case "eq":
            if isinstance(actual, Absent) or canonical_text(actual) != canonical_text(arg):
                return [f"{path}: expected {_short(arg)}, got {_short(actual)}"]
            return []
        case "one_of":
            if not isinstance(arg, list):
                raise FormatError(f"{path}: one_of takes an array")
            if isinstance(actual, Absent) or canonical_text(actual) not in {canonical_text(v) for v in arg}:
                return [f"{path}: expected one of {_short(arg)}, got {_short(actual)}"]
            return []
        case "any":
            return [f"{path}: missing"] if isinstance(actual, Absent) else []
        case "reject":
            if not isinstance(arg, dict) or not isinstance(arg.get("rule"), str):
                raise FormatError(f"{path}: reject takes {{rule}}")
            rules = rejection_rules(actual)
            if rules is None:
                return [f"{path}: expected a rejection by {arg['rule']}, got {_short(actual)}"]
            if not rules:
                # sessionspec-adapter/2: the implementation rejects but cannot name the rule.
                return [f"{path}: {RULE_UNKNOWN} expected a rejection by {arg['rule']}, got one that names no rule"]
            if arg["rule"] not in rules:
                return [f"{path}: expected a rejection by {arg['rule']}, got one by {', '.join(rules) or '(no rule)'}"]
            return []
        case "object" | "fields":
            if not isinstance(arg, dict):
                raise FormatError(f"{path}: {kind} takes an object of patterns")
            if not isinstance(actual, dict):
                return [f"{path}: expected an object, got {_short(actual)}"]
            out: list[str] = []
            if kind == "object":
                extra = sorted(set(actual) - set(arg))
                if extra:
                    out.append(f"{path}: unexpected keys {', '.join(extra)}")
            for key in sorted(arg):
                out += match(arg[key], actual.get(key, ABSENT), f"{path}.{key}")
            return out
        case "array":
            if not isinstance(arg, list):
                raise FormatError(f"{path}: array takes an array of patterns")
            if not isinstance(actual, list):
                return [f"{path}: expected an array, got {_short(actual)}"]
            out = []
            if len(actual) != len(arg):
                out.append(f"{path}: expected {len(arg)} items, got {len(actual)}")
            for index, (p, a) in enumerate(zip(arg, actual)):
                out += match(p, a, f"{path}[{index}]")
            return out
        case _:
            raise FormatError(f"{path}: unknown pattern kind {kind!r}")


def _short(value: object, limit: int = 200) -> str:
    text = "(absent)" if isinstance(value, Absent) else canonical_text(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
