"""What an adapter declares in ``hello`` and what it refuses, at the edges (issue 45, part 1-2): an adapter that
refuses every ``init`` has nothing run and fails the default floor; a misspelt declaration is named with the
nearest known name.  Both adapters are a few lines of Python written to a temporary file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from sessionspec.cli import main
from sessionspec.conformance.adapter.capabilities import Capabilities
from sessionspec.conformance.vectors.command import VECTORS_DIR
from sessionspec.conformance.vectors.files import load_dir

ROOT = Path(__file__).resolve().parents[2]


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _schema_errors(name: str, document: Any) -> list[str]:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(json.loads((ROOT / "docs" / "schemas" / name).read_text(encoding="utf-8")))
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


def _vector_count() -> int:
    return sum(len(d["vectors"]) for d in load_dir(VECTORS_DIR))


REFUSER = '''import json, sys
for line in sys.stdin:
    m = json.loads(line)
    answer = ({"ok": {"protocol": "sessionspec-adapter/2", "implementation": "refuser"}} if m["op"] == "hello"
              else {"error": "unsupported: nothing works yet"})
    print(json.dumps({"id": m["id"], **answer}), flush=True)
'''


def test_an_adapter_that_refuses_every_init_has_nothing_run_and_fails_the_floor(tmp_path: Path,
                                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """An adapter that answers every operation ``unsupported`` (words naming no shape): conform's first trace
    is refused at an init with no shape to leave out, so no trace can run.  That trace counts as skipped
    (before, the search stopped before counting it: '0/0 traces passed, 0 skipped'), the coverage says
    ``none``, and the default floor (--min-run 1) fails the run; vectors run skips all 739 and fails too."""
    script = tmp_path / "refuser.py"
    script.write_text(REFUSER, encoding="utf-8")
    adapter = f"{sys.executable} {script}"
    code, out, _ = _cli(capsys, "conform", "--adapter", adapter, "--examples", "20", "--no-progress", "--no-decisions")
    lines = out.splitlines()
    assert code == 1 and lines[-1] == "0/1 traces passed, 0 failed, 1 skipped"
    assert lines[-2] == "FAIL: below the floor: 0 traces ran, fewer than --min-run 1"
    assert "stopped early: the adapter refused init of an agent with no optional shape ('unsupported: nothing works yet')" \
           ": no trace can run" in out
    assert "  turn shapes and contributors: none" in lines and "  rules exercised (0): none" in lines
    code, out, _ = _cli(capsys, "vectors", "run", str(VECTORS_DIR), "--adapter", adapter)
    total = _vector_count()
    assert code == 1 and out.splitlines()[-1] == f"0/{total} vectors passed, 0 failed, {total} skipped"


MISSPELT = '''import json, sys
for line in sys.stdin:
    m = json.loads(line)
    answer = ({"ok": {"protocol": "sessionspec-adapter/2", "implementation": "typo", "operations": ["init", "send", "lg"],
                      "features": ["tool-call", "reply-empty", "zzz"]}} if m["op"] == "hello"
              else {"error": "unsupported"})
    print(json.dumps({"id": m["id"], **answer}), flush=True)
'''


def test_a_misspelt_declaration_is_named_with_the_nearest_known_name(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A name in hello that no operation or shape has unlocks nothing: ``tool-call`` for ``tool-calls`` would
    silently skip every tool vector.  Both commands say so, with the nearest known name (text and JSON)."""
    assert Capabilities(operations=frozenset({"init", "lg"}), features=frozenset({"tool-call", "contributors/lossy"})
                        ).unknown() == ["op lg (did you mean log?)", "feature tool-call (did you mean tool-calls?)"]
    assert Capabilities().unknown() == [] and Capabilities(features=frozenset({"zzz"})).unknown() == ["feature zzz"]
    script = tmp_path / "typo.py"
    script.write_text(MISSPELT, encoding="utf-8")
    adapter = f"{sys.executable} {script}"
    unknown = ["op lg (did you mean log?)", "feature tool-call (did you mean tool-calls?)", "feature zzz"]
    line = f"UNKNOWN in hello (declares nothing; docs/conformance.md 1.1): {'; '.join(unknown)}"
    _, out, _ = _cli(capsys, "vectors", "run", str(VECTORS_DIR), "--adapter", adapter, "--min-run", "0")
    assert out.splitlines()[1] == line
    _, out, _ = _cli(capsys, "vectors", "run", str(VECTORS_DIR), "--adapter", adapter, "--min-run", "0", "--format", "json")
    document = json.loads(out)
    assert document["capabilities"]["unknown"] == unknown and not _schema_errors("vectors-run.v3.schema.json", document)
    _, out, _ = _cli(capsys, "conform", "--adapter", adapter, "--examples", "5", "--no-progress", "--no-decisions")
    assert line in out.splitlines()
    _, out, _ = _cli(capsys, "conform", "--adapter", adapter, "--examples", "5", "--no-progress", "--no-decisions",
                     "--format", "json")
    document = json.loads(out)
    assert document["unknownDeclared"] == unknown and not _schema_errors("conform.v3.schema.json", document)
