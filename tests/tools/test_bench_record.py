"""bench/record_reports: two recordings are compared input by input, and any change of a report is a difference.

The tool guards the checker's rewrite (issue 26: every report identical
before and after), so its comparison must not miss a changed finding, line or
note, and must attribute text lines to the right input.  No timing here.
"""

from __future__ import annotations

import json
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tool() -> ModuleType:
    loader = SourceFileLoader("record_reports", str(ROOT / "bench" / "record_reports"))
    spec = spec_from_loader("record_reports", loader)
    assert spec is not None
    module = module_from_spec(spec)
    loader.exec_module(module)
    return module


def _recording(findings: list[dict[str, object]], notes: list[str]) -> dict[str, object]:
    report = {"kind": "file", "path": "corpus:captured/a.jsonl", "verdict": "invalid" if findings else "valid",
              "findings": findings, "notes": notes}
    return {"inputs": 1, "option_sets": {"default": {"reports": {"corpus:captured/a.jsonl": report},
                                                     "text": {"corpus:captured/a.jsonl": ["corpus:captured/a.jsonl: valid"]}}}}


FINDING = {"line": 3, "rule": "FMT-9", "seq": 2, "kind": "invalid", "reason": "r", "loader": "accepts", "onlyIf": None}


@pytest.mark.parametrize(
    "changed",
    [
        _recording([{**FINDING, "line": 4}], []),  # a line number moved
        _recording([{**FINDING, "rule": "FMT-8"}], []),  # another rule
        _recording([FINDING], ["quirk Q-17"]),  # a note appeared
        _recording([], []),  # the finding vanished (and the verdict with it)
    ],
)
def test_diff_reports_any_changed_report(tmp_path: Path, changed: dict[str, object], capsys: pytest.CaptureFixture[str]) -> None:
    tool = _tool()
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    before.write_text(json.dumps(_recording([FINDING], [])))
    after.write_text(json.dumps(changed))
    assert tool.diff(before, after, 5) == 1
    assert "corpus:captured/a.jsonl" in capsys.readouterr().out


def test_diff_of_equal_recordings_is_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tool = _tool()
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    before.write_text(json.dumps(_recording([FINDING], ["n"])))
    after.write_text(json.dumps(_recording([FINDING], ["n"])))
    assert tool.diff(before, after, 5) == 0
    assert capsys.readouterr().out.startswith("0 difference(s)")


def test_an_ignored_key_is_the_only_field_taken_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``diff --ignore-key notDecided``: a field the change adds is no difference; any other change still is."""
    tool = _tool()
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    before.write_text(json.dumps(_recording([FINDING], [])))
    added = _recording([FINDING], [])
    added["option_sets"]["default"]["reports"]["corpus:captured/a.jsonl"]["notDecided"] = [{"rule": "CMP-6"}]  # type: ignore[index]
    after.write_text(json.dumps(added))
    assert tool.diff(before, after, 5) == 1
    assert tool.diff(before, after, 5, ["notDecided"]) == 0
    added["option_sets"]["default"]["reports"]["corpus:captured/a.jsonl"]["notes"] = ["n"]  # type: ignore[index]
    after.write_text(json.dumps(added))
    assert tool.diff(before, after, 5, ["notDecided"]) == 1
    capsys.readouterr()


def test_text_lines_belong_to_the_longest_matching_path() -> None:
    tool = _tool()
    paths = ["/c/log.jsonl", "/c/log.jsonl.zst"]
    assert tool._owner("/c/log.jsonl.zst:4: FMT-1: ...", paths) == "/c/log.jsonl.zst"
    assert tool._owner("/c/log.jsonl: valid [A55 detected, 3 events]", paths) == "/c/log.jsonl"
    assert tool._owner("checked 2 files: 2 valid", paths) is None
