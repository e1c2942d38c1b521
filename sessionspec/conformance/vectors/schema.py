"""The JSON Schema of a vector file (``vectors/schema.json``) and the small validator that checks
vector files against it (the subset of JSON Schema 2020-12 that the schema uses)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from sessionspec.conformance.vectors.format import FORMAT

# --------------------------------------------------------------------------- a small JSON Schema validator

# The subset of JSON Schema (2020-12) that vectors/schema.json uses: type,
# const, enum, properties, required, additionalProperties, items, minItems,
# minLength, pattern, oneOf, anyOf and local $ref ("#/$defs/name").
_TYPES: Final = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate(schema: Mapping[str, object], value: object) -> list[str]:
    """Every violation of ``schema`` by ``value`` (the subset above), as ``path: what``."""
    root = schema
    out: list[str] = []

    def check(s: Mapping[str, object], v: object, path: str) -> None:
        ref = s.get("$ref")
        if isinstance(ref, str):
            name = ref.removeprefix("#/$defs/")
            defs = root.get("$defs")
            assert isinstance(defs, dict) and name in defs, ref
            check(defs[name], v, path)
        kind = s.get("type")
        if isinstance(kind, str) and not _TYPES[kind](v):
            out.append(f"{path}: expected {kind}")
            return
        if "const" in s and v != s["const"]:
            out.append(f"{path}: expected {s['const']!r}")
        enum = s.get("enum")
        if isinstance(enum, list) and v not in enum:
            out.append(f"{path}: {v!r} is not one of {enum}")
        if isinstance(v, str):
            min_length = s.get("minLength")
            if isinstance(min_length, int) and len(v) < min_length:
                out.append(f"{path}: shorter than {min_length}")
            pattern = s.get("pattern")
            if isinstance(pattern, str) and not re.search(pattern, v):
                out.append(f"{path}: does not match {pattern}")
        if isinstance(v, dict):
            props = s.get("properties")
            props = props if isinstance(props, dict) else {}
            required = s.get("required")
            for key in required if isinstance(required, list) else []:
                if key not in v:
                    out.append(f"{path}: missing {key}")
            extra = s.get("additionalProperties", True)
            for key, item in v.items():
                if key in props:
                    check(props[key], item, f"{path}.{key}")
                elif extra is False:
                    out.append(f"{path}: unexpected key {key}")
                elif isinstance(extra, dict):
                    check(extra, item, f"{path}.{key}")
        if isinstance(v, list):
            min_items = s.get("minItems")
            if isinstance(min_items, int) and len(v) < min_items:
                out.append(f"{path}: fewer than {min_items} items")
            items = s.get("items")
            if isinstance(items, dict):
                for index, item in enumerate(v):
                    check(items, item, f"{path}[{index}]")
        for combinator in ("oneOf", "anyOf"):
            options = s.get(combinator)
            if isinstance(options, list):
                passing = 0
                for option in options:
                    saved = len(out)
                    check(option, v, path)
                    if len(out) == saved:
                        passing += 1
                    del out[saved:]
                if passing == 0 or (combinator == "oneOf" and passing > 1):
                    out.append(f"{path}: matches {passing} of the {combinator} alternatives")

    check(schema, value, "$")
    return out


# --------------------------------------------------------------------------- the schema of a vector file

_PATTERN_REF: Final = {"$ref": "#/$defs/pattern"}

SCHEMA: Final[dict[str, object]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://sessionspec.invalid/vectors/schema.json",
    "title": FORMAT,
    "description": "A file of sessionspec conformance vectors (docs/conformance.md).",
    "type": "object",
    "required": ["format", "registry", "group", "vectors"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": FORMAT},
        "registry": {"type": "string", "pattern": "^[0-9a-f]{16}$",
                     "description": "sessionspec.spec.registry.registry_digest() of the rule registry the vectors were generated from"},
        "group": {"type": "string", "minLength": 1},
        "vectors": {"type": "array", "items": {"$ref": "#/$defs/vector"}},
    },
    "$defs": {
        "vector": {
            "type": "object",
            "required": ["id", "rules", "description", "initial", "steps"],
            "additionalProperties": False,
            "properties": {
                "id": {"type": "string", "minLength": 1},
                "rules": {"type": "array", "items": {"type": "string", "pattern": "^[A-Z]+-[0-9]+$"}},
                "description": {"type": "string"},
                "initial": {"$ref": "#/$defs/initial"},
                "steps": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/step"}},
            },
        },
        "initial": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "log": {"type": "array", "items": {"type": "string"}, "description": "seed log: JSONL lines"},
                "agent": {"$ref": "#/$defs/agent"},
            },
        },
        "agent": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "provider": {"type": "string"},
                "model": {"type": "string"},
                "system": {"type": "string"},
                "tools": {"type": "array"},
                "contributors": {"type": "array", "items": {"$ref": "#/$defs/contributor"}},
                "requestConfig": {"type": "object"},
                "compaction": {"type": "object"},
                "agentId": {"type": "string"},
            },
        },
        "contributor": {
            "type": "object",
            "required": ["idiom", "content"],
            "additionalProperties": False,
            "properties": {
                "idiom": {"enum": ["prepend", "append"]},
                "content": {"type": "array"},
                "throws": {"type": "string"},
                "inject": {"type": "object"},
                "mutateAfter": {"type": "boolean"},
                "lossy": {"type": "boolean"},
                "scope": {"type": "string"},
            },
        },
        "step": {
            "type": "object",
            "required": ["op"],
            "additionalProperties": False,
            "properties": {"op": {"$ref": "#/$defs/operation"}, "expect": _PATTERN_REF},
        },
        "operation": {
            "type": "object",
            "required": ["op"],
            "properties": {
                "op": {"enum": ["send", "configure", "resume", "dispose", "fork", "log", "check", "replay", "init", "pack",
                                "repair", "append-out-of-band", "measure", "compact"]},
                "prompt": {"type": "object", "required": ["content"]},
                "replies": {"type": "array", "items": {"type": "object"}},
                "interrupt": {
                    "type": "object",
                    "required": ["window"],
                    "properties": {"window": {"type": "string"}, "kind": {"enum": ["cancel", "dispose", "foreign"]},
                                   "step": {"type": "integer"}, "chunk": {"type": "integer"}},
                },
                "steering": {"type": "array"},
                "preStepError": {"type": "string"},
                "agent": {"$ref": "#/$defs/agent"},
                "log": {"type": "array", "items": {"type": "string"}},
                "dialect": {"enum": ["A55", "D08"]},
            },
        },
        "pattern": {
            "oneOf": [
                {"type": "object", "required": ["eq"], "additionalProperties": False, "properties": {"eq": {}}},
                {"type": "object", "required": ["one_of"], "additionalProperties": False,
                 "properties": {"one_of": {"type": "array"}}},
                {"type": "object", "required": ["any"], "additionalProperties": False,
                 "properties": {"any": {"type": "object", "additionalProperties": False}}},
                {"type": "object", "required": ["reject"], "additionalProperties": False,
                 "properties": {"reject": {"type": "object", "required": ["rule"], "additionalProperties": False,
                                           "properties": {"rule": {"type": "string", "pattern": "^[A-Z]+-[0-9]+$"}}}}},
                {"type": "object", "required": ["object"], "additionalProperties": False,
                 "properties": {"object": {"type": "object", "additionalProperties": _PATTERN_REF}}},
                {"type": "object", "required": ["fields"], "additionalProperties": False,
                 "properties": {"fields": {"type": "object", "additionalProperties": _PATTERN_REF}}},
                {"type": "object", "required": ["array"], "additionalProperties": False,
                 "properties": {"array": {"type": "array", "items": _PATTERN_REF}}},
            ],
        },
    },
}
