"""The vector files: the groups, byte-stable generation, loading and validation of a vector
directory, and the rules the committed vectors declare.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from sessionspec.conformance.vectors.build import SCHEMA_FILE, VECTORS_DIR, Vector
from sessionspec.conformance.vectors.format import (
    FORMAT,
    FormatError,
    file_text,
)
from sessionspec.conformance.vectors.groups.check import check_vectors
from sessionspec.conformance.vectors.groups.codec import codec_vectors
from sessionspec.conformance.vectors.groups.corruption import recorded_check_vectors
from sessionspec.conformance.vectors.groups.groundtruth import compaction_groundtruth_vectors, groundtruth_vectors, replay_vectors
from sessionspec.conformance.vectors.groups.recorded import loop_vectors, random_vectors, shrunk_vectors
from sessionspec.conformance.vectors.groups.rules import rule_check_vectors
from sessionspec.conformance.vectors.schema import SCHEMA, validate
from sessionspec.spec.registry import registry_digest, rule_ids

# --------------------------------------------------------------------------- files


GROUPS: Final[tuple[tuple[str, Callable[[], list[Vector]]], ...]] = (
    ("check", lambda: check_vectors() + recorded_check_vectors() + rule_check_vectors()),
    ("codec", codec_vectors),
    ("groundtruth", lambda: groundtruth_vectors() + compaction_groundtruth_vectors()),
    ("loop", loop_vectors),
    ("random", random_vectors),
    ("replay", replay_vectors),
    ("shrunk", shrunk_vectors),
)


def schema() -> dict[str, Any]:
    return SCHEMA


def generate() -> dict[str, str]:
    """File name -> exact file text of a fresh generation."""
    files: dict[str, str] = {SCHEMA_FILE: file_text(schema())}
    digest = registry_digest()
    for group, build in GROUPS:
        vectors = build()
        files[f"{group}.json"] = file_text({"format": FORMAT, "registry": digest, "group": group,
                                            "vectors": [v.to_json() for v in vectors]})
    return files


def load_dir(directory: Path) -> list[dict[str, Any]]:
    """The vector files of ``directory`` (every ``*.json`` but the schema), validated."""
    files: list[dict[str, Any]] = []
    the_schema = schema()
    for path in sorted(directory.glob("*.json")):
        if path.name == SCHEMA_FILE:
            continue
        document = json.loads(path.read_text(encoding="utf-8"))
        problems = validate(the_schema, document)
        if problems:
            raise FormatError(f"{path}: {problems[0]}")
        files.append(document)
    return files


def load_path(path: Path) -> list[dict[str, Any]]:
    """A vector directory (:func:`load_dir`) or one vector file, validated."""
    if path.is_dir():
        return load_dir(path)
    document = json.loads(path.read_text(encoding="utf-8"))
    problems = validate(schema(), document)
    if problems:
        raise FormatError(f"{path}: {problems[0]}")
    return [document]


def vectors_by_rule(directory: Path = VECTORS_DIR) -> dict[str, tuple[str, ...]]:
    """Registered rule ID -> the IDs of the vectors that name it in their ``rules``
    (a drop-in for sessionspec/coverage.py's text scan: only declared rules count)."""
    by_rule: dict[str, set[str]] = {}
    registered = rule_ids()
    for document in load_dir(directory) if directory.is_dir() else []:
        for vector in document["vectors"]:
            for rule_id in vector["rules"]:
                if rule_id in registered:
                    by_rule.setdefault(rule_id, set()).add(vector["id"])
    return {rule_id: tuple(sorted(ids)) for rule_id, ids in sorted(by_rule.items())}


def rules_with_vectors(directory: Path = VECTORS_DIR) -> frozenset[str]:
    """The registered rule IDs some committed vector names in its ``rules`` (for sessionspec/coverage.py)."""
    return frozenset(vectors_by_rule(directory))
