"""What lies beside a log file: the ``sessions.json`` sidecar of ground-truth logs (which have no
header line) and a fork child's parent file (FMT-11)."""

from __future__ import annotations

import json
from pathlib import Path


def _sidecar_table(directory: Path) -> dict[str, dict[str, object]]:
    """``sessions.json`` beside ground-truth logs: ``{sessionId: {file, header}}``
    (those logs have no header line).  Empty when absent or malformed."""
    sidecar = directory / "sessions.json"
    try:
        if not sidecar.is_file() or sidecar.stat().st_size > 16 * 1024 * 1024:
            return {}
        table = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if isinstance(k, str) and isinstance(v, dict)}


def sidecar_header(path: Path) -> dict[str, object]:
    """The live session header the sidecar records for this file."""
    for entry in _sidecar_table(path.parent).values():
        header = entry.get("header")
        if entry.get("file") == path.name and isinstance(header, dict):
            return header
    return {}


def _first_line_id(path: Path) -> str | None:
    """The ``id`` of a file's session header line (its first line only)."""
    try:
        if not path.is_file():  # never open a FIFO or device: it could block
            return None
        with path.open("rb") as handle:
            first = handle.readline(1024 * 1024)
        value = json.loads(first)
    except (OSError, ValueError, RecursionError):
        return None
    if isinstance(value, dict) and value.get("type") == "session" and isinstance(value.get("id"), str):
        return str(value["id"])
    return None


def find_parent_file(child: Path, parent_id: str) -> Path | None:
    """FMT-11: the parent session's file beside a child (sidecar table, else a
    sibling ``*.jsonl`` whose header line names ``parent_id``)."""
    entry = _sidecar_table(child.parent).get(parent_id)
    if entry is not None and isinstance(entry.get("file"), str):
        candidate = child.parent / str(entry["file"])
        return candidate if candidate.is_file() else None
    for sibling in sorted(child.parent.glob("*.jsonl")):
        if sibling != child and _first_line_id(sibling) == parent_id:
            return sibling
    return None
