"""DIA-5 (D08): "The Session constructor MUST append ``session/end-seed {}`` after a seed unless the
seed already ends with one."  The real seeded D08 child (its parent beside it) is valid; the same
file claiming a seed one event shorter (so an ordinary event, not session/end-seed, follows the seed)
breaks only DIA-5; a seed that itself ends with the end-seed is an allowed variant."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sessionspec.check.checker import Verdict, check_path

SOURCE = Path(__file__).parents[1] / "data" / "real" / "611615650f" / "examples" / "acp-agent" / "tests" / "snapshots" / "subagent-mixed"
CHILD = "session.2.jsonl"


def _with_seed_length(tmp_path: Path, seed_length: int) -> Path:
    for name in ("session.jsonl", "session.1.jsonl"):
        shutil.copy(SOURCE / name, tmp_path / name)
    lines = (SOURCE / CHILD).read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["seedLength"] = seed_length
    (tmp_path / CHILD).write_text("\n".join([json.dumps(header, separators=(",", ":")), *lines[1:]]) + "\n", encoding="utf-8")
    return tmp_path / CHILD


def _seed_length() -> int:
    header = json.loads((SOURCE / CHILD).read_text(encoding="utf-8").splitlines()[0])
    return int(header["seedLength"])


def test_DIA_5_the_real_seeded_child_has_its_end_seed_after_the_seed() -> None:
    report = check_path(str(SOURCE / CHILD))
    assert report.verdict is Verdict.VALID, [f.text(CHILD) for f in report.findings]


def test_DIA_5_a_seed_followed_by_an_ordinary_event_is_named(tmp_path: Path) -> None:
    report = check_path(str(_with_seed_length(tmp_path, _seed_length() - 1)))
    assert report.verdict is Verdict.INVALID
    assert "DIA-5" in {f.rule for f in report.findings}


def test_DIA_5_a_seed_that_ends_with_the_end_seed_is_allowed(tmp_path: Path) -> None:
    # The recorded end-seed sits right after the seed; counting it into the seed is the other allowed form.
    report = check_path(str(_with_seed_length(tmp_path, _seed_length() + 1)))
    assert "DIA-5" not in {f.rule for f in report.findings}
