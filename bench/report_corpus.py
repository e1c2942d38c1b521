"""pytest plugin of ``bench/record_reports collect``: keep every log the tests hand to the checker.

Loaded with ``-p report_corpus`` (``bench/`` on ``sys.path``) and
``SESSIONSPEC_REPORT_CORPUS=DIR``.  It wraps
``sessionspec.check.logfile.read_stream``, the one reader every checker entry
point goes through (``check_path``, ``check_handle``, ``check_bytes``, and the
tests' own ``check_log(read_stream(...))`` of mutated logs), before any test
module imports it; each distinct input is written once as ``DIR/<sha256>.jsonl``
(decompressed: a ``.zst`` stream arrives here already decoded), and
``DIR/index.json`` lists, per digest, the names it was read under and the
tests that read it.  The wrapper hands the same bytes on to the real reader,
so the tests run as before.

The corpus is taken once, before a refactor of the checker, and then checked
as files by ``record_reports record`` on both sides of it: the recording does
not depend on the reader this plugin wraps still existing afterwards.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

_INDEX: dict[str, dict[str, list[str]]] = {}
_CURRENT = {"test": "(collection)"}


def _folder() -> Path | None:
    value = os.environ.get("SESSIONSPEC_REPORT_CORPUS")
    return Path(value) if value else None


class _Replay(io.BytesIO):
    """The bytes a stream gave, then the error it raised (if any), for the reader."""

    def __init__(self, data: bytes, failure: BaseException | None) -> None:
        super().__init__(data)
        self._failure = failure

    def readline(self, size: int | None = -1, /) -> bytes:
        line = super().readline(size)
        if not line and self._failure is not None:
            raise self._failure
        return line


def _keep(folder: Path, data: bytes, name: str) -> None:
    digest = hashlib.sha256(data).hexdigest()
    target = folder / f"{digest}.jsonl"
    if not target.exists():
        target.write_bytes(data)
    entry = _INDEX.setdefault(digest, {"names": [], "tests": []})
    if name not in entry["names"]:
        entry["names"].append(name)
    if _CURRENT["test"] not in entry["tests"]:
        entry["tests"].append(_CURRENT["test"])


def _install() -> None:
    from sessionspec.check import logfile  # noqa: PLC0415  (after the plugin is loaded, before the tests import it)

    original = logfile.read_stream
    if getattr(original, "__wrapped_by_report_corpus__", False):
        return

    def read_stream(stream: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        folder = _folder()
        if folder is None:
            return original(stream, name, *args, **kwargs)
        # Read as the reader reads (line by line, same limit), so a stream that
        # fails fails at the same place, with the same error, for the reader.
        lines: list[bytes] = []
        failure: BaseException | None = None
        try:
            while raw := stream.readline(logfile.MAX_LINE_BYTES + 1):
                lines.append(raw)
        except Exception as error:  # noqa: BLE001  (handed on to the reader below)
            failure = error
        data = b"".join(lines)
        if failure is None:
            _keep(folder, data, name)
        return original(_Replay(data, failure), name, *args, **kwargs)

    read_stream.__wrapped_by_report_corpus__ = True  # type: ignore[attr-defined]
    logfile.read_stream = read_stream


# At import (``-p`` loads the plugin before conftest.py and the test modules),
# so every later ``from sessionspec.check.logfile import read_stream`` gets the wrapper.
if _folder() is not None:
    _folder().mkdir(parents=True, exist_ok=True)  # type: ignore[union-attr]
    _install()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    _CURRENT["test"] = item.nodeid
    try:
        return (yield)
    finally:
        _CURRENT["test"] = "(between tests)"


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = _folder()
    if folder is None:
        return
    index_path = folder / "index.json"
    merged: dict[str, dict[str, list[str]]] = json.loads(index_path.read_text()) if index_path.exists() else {}
    for digest, entry in _INDEX.items():
        seen = merged.setdefault(digest, {"names": [], "tests": []})
        seen["names"] = sorted(set(seen["names"]) | set(entry["names"]))
        seen["tests"] = sorted(set(seen["tests"]) | set(entry["tests"]))
    index_path.write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n", encoding="utf-8")
