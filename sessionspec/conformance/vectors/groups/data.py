"""The bundled real data (tests/data) read as vector inputs: logs as JSONL lines or parsed rows."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from sessionspec.conformance.vectors.build import GROUNDTRUTH, ROOT

Row = dict[str, Any]


SNAPSHOTS: Final = "examples/acp-agent/tests/snapshots"


def dump_row(row: Any) -> str:
    return json.dumps(row, separators=(",", ":"), ensure_ascii=False)


def gt_lines(name: str, file: str = "session.jsonl") -> list[str]:
    return [line for line in (GROUNDTRUTH / name / file).read_text(encoding="utf-8").splitlines() if line.strip()]


def gt_rows(name: str, file: str = "session.jsonl") -> list[Row]:
    return [json.loads(line) for line in gt_lines(name, file)]


def row_lines(rows: Sequence[Row]) -> list[str]:
    return [json.dumps(r, separators=(",", ":"), ensure_ascii=False) for r in rows]


def first_index(rows: Sequence[Row], type_name: str, nth: int = 0, **data: Any) -> int:
    hits = [i for i, r in enumerate(rows) if r.get("type") == type_name and all(r["data"].get(k) == val for k, val in data.items())]
    return hits[nth]


def real_lines(source: str) -> list[str]:
    return [line for line in (ROOT / "tests" / "data" / "real" / source).read_text(encoding="utf-8").splitlines() if line.strip()]


def real_rows(source: str) -> list[Row]:
    return [json.loads(line) for line in real_lines(source)]
