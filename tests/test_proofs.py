"""CrossHair contracts (issue 7): the contracts can fail, and the bounded subset holds.

- For each contracted core module a planted-bug variant (``tests/planted/``)
  keeps the real contract and breaks the code; CrossHair must refute it.  This
  is what makes "no counterexample" on the real functions mean something.
- ``proofs/run --tier ci`` (the bounded subset) finds no counterexample on the
  real model, with a short explicit ``--per-condition-timeout``.
- ``docs/proofs.md`` (generated, committed) covers every curated target and
  records no refutation.

The full run is opt-in: ``proofs/run`` (see proofs/README.md).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "proofs" / "run"
PLANTED = ROOT / "tests" / "planted"

pytestmark = pytest.mark.skipif(importlib.util.find_spec("crosshair") is None, reason="crosshair-tool (dev extra) is not installed")

# module -> (planted file, what CrossHair must report).  A counterexample is an
# 'error:' line: a false postcondition or an exception on some input.
PLANTED_BUGS = {
    "jsonval": ("jsonval_bug.py", r"error: false when calling is_safe_int\("),
    "surface": ("surface_bug.py", r"error: false when calling replacement_range\("),
    "derive": ("derive_bug.py", r"error: false when calling project\(ToolResult\("),
    "header": ("header_bug.py", r"error: false when calling canonical\("),
    "wire": ("wire_bug.py", r"error: false when calling build_request\("),
    "reconstruct": ("reconstruct_bug.py", r"error: IndexError: .*when calling boundary_type\("),
    "meter": ("meter_bug.py", r"error: false when calling ceil4\("),
    "compaction": ("compaction_bug.py", r"error: false when calling retention_cut\("),
    "prune": ("prune_bug.py", r"error: false when calling check_prune_config\("),
}


def _crosshair(target: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "crosshair", "check", "--analysis_kind=PEP316", f"--per_condition_timeout={timeout:g}", target],
        cwd=ROOT, env=dict(os.environ, PYTHONHASHSEED="0"), capture_output=True, text=True, timeout=300,
    )


@pytest.mark.parametrize("module", sorted(PLANTED_BUGS))
def test_planted_bug_is_refuted(module: str) -> None:
    """Each contracted module's contract catches a planted bug (a contract that cannot fail proves nothing)."""
    filename, expected = PLANTED_BUGS[module]
    result = _crosshair(str(PLANTED / filename), 30)
    assert result.returncode == 1, f"CrossHair found no counterexample for the planted bug in {filename}:\n{result.stdout}{result.stderr}"
    assert re.search(expected, result.stdout), result.stdout


def test_every_contracted_core_module_has_a_planted_bug() -> None:
    """The planted variants cover every core module that carries contracts."""
    contracted = set()
    for path in sorted((ROOT / "model").rglob("*.py")):
        if re.search(r"^\s*(pre|post|inv):", path.read_text(encoding="utf-8"), re.MULTILINE):
            # a package (model/compaction/) counts as its top-level module
            contracted.add(path.relative_to(ROOT / "model").parts[0].removesuffix(".py"))
    core = {"jsonval", "surface", "derive", "header", "wire", "reconstruct", "meter", "compaction", "prune"}
    assert core <= contracted, f"core modules without contracts: {sorted(core - contracted)}"
    assert contracted & core <= set(PLANTED_BUGS)


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(RUN), *args], cwd=ROOT, capture_output=True, text=True, timeout=900)


def test_proofs_run_reports_refuted_quiet_and_skipped(tmp_path: Path) -> None:
    """proofs/run classifies outcomes honestly: refuted, no counterexample within N s, skipped module."""
    targets = tmp_path / "targets.txt"
    targets.write_text(
        "model.jsonval.is_safe_int ci\n"
        "tests.planted.surface_bug.replacement_range ci  # planted: must be refuted\n"
        "model.not_there_yet full\n",
        encoding="utf-8",
    )
    out = tmp_path / "proofs.md"
    result = _run(["--targets", str(targets), "--per-condition-timeout", "2", "--out", str(out)])
    assert result.returncode == 1, result.stderr  # a refutation fails the run
    table = out.read_text(encoding="utf-8")
    assert re.search(r"\| `model\.jsonval\.is_safe_int` \| `post: .*` \| no counterexample within 2 s \|", table)
    assert re.search(r"\| `tests\.planted\.surface_bug\.replacement_range` \| `post: .*` \| refuted: false when calling", table)
    assert "| `model.not_there_yet` | module model.not_there_yet does not exist yet |" in table
    assert "proved" not in table.lower().replace("not a proof", "")


def test_proofs_run_rejects_a_malformed_target_list(tmp_path: Path) -> None:
    targets = tmp_path / "targets.txt"
    targets.write_text("model.jsonval.u16 sometimes\n", encoding="utf-8")
    result = _run(["--targets", str(targets), "--out", str(tmp_path / "x.md")])
    assert result.returncode != 0
    assert "targets.txt:1: expected '<target> ci|full'" in result.stderr
    assert "Traceback" not in result.stderr


def test_ci_subset_finds_no_counterexample(tmp_path: Path) -> None:
    """The bounded CI subset of proofs/targets.txt: no contract of the real model is refuted."""
    out = tmp_path / "proofs.md"
    result = _run(["--tier", "ci", "--per-condition-timeout", "2", "--out", str(out)])
    table = out.read_text(encoding="utf-8")
    assert result.returncode == 0, table + result.stderr
    assert "| refuted" not in table
    ci_targets = [line.split()[0] for line in _target_lines() if line.split()[1] == "ci"]
    for target in ci_targets:
        assert f"`{target}" in table, f"{target} missing from the CI table"


def _target_lines() -> list[str]:
    lines = []
    for raw in (ROOT / "proofs" / "targets.txt").read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            lines.append(line)
    return lines


def test_every_contracted_function_is_a_target() -> None:
    """No contract in model/ goes unchecked: each contracted function is listed
    in proofs/targets.txt (by name, or through its whole module)."""
    import ast

    targets = {line.split()[0] for line in _target_lines()}
    missing = []
    for path in sorted((ROOT / "model").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                doc = ast.get_docstring(node) or ""
                if re.search(r"^\s*(pre|post):", doc, re.MULTILINE):
                    name = f"model.{path.stem}.{node.name}"
                    if name not in targets and f"model.{path.stem}" not in targets:
                        missing.append(name)
    assert not missing, f"contracted functions missing from proofs/targets.txt: {missing}"


def test_committed_proofs_table_covers_every_target() -> None:
    """docs/proofs.md is generated from proofs/targets.txt: every target appears (checked or skipped), none refuted."""
    table = (ROOT / "docs" / "proofs.md").read_text(encoding="utf-8")
    for line in _target_lines():
        target = line.split()[0]
        assert f"`{target}" in table, f"{target} is not in docs/proofs.md; regenerate with: proofs/run"
    assert "| refuted" not in table, "docs/proofs.md records a refuted contract"
    assert "--per_condition_timeout=" in table


# --------------------------------------------------------------------------- Hypothesis on the CrossHair backend (opt-in)
# The small pure properties also run with Hypothesis's CrossHair backend
# (hypothesis-crosshair), which explores inputs symbolically instead of by
# random draws.  Opt-in: SESSIONSPEC_CROSSHAIR_BACKEND=1 (needs hypothesis-crosshair).

_BACKEND_OPT_IN = os.environ.get("SESSIONSPEC_CROSSHAIR_BACKEND") == "1"
_backend = pytest.mark.skipif(
    not _BACKEND_OPT_IN or importlib.util.find_spec("hypothesis_crosshair_provider") is None,
    reason="opt-in: set SESSIONSPEC_CROSSHAIR_BACKEND=1 with hypothesis-crosshair installed",
)


def _crosshair_settings() -> object:
    from hypothesis import settings

    return settings(backend="crosshair", max_examples=50, deadline=None, database=None)


if _BACKEND_OPT_IN:
    from hypothesis import given
    from hypothesis import strategies as st

    from model.jsonval import MAX_SAFE_INTEGER, is_safe_int, u16

    @_backend
    @_crosshair_settings()  # type: ignore[misc]
    @given(st.text())
    def test_u16_is_the_utf16_length_symbolic(s: str) -> None:
        """§0.4 U16 on the CrossHair backend."""
        assert u16(s) == len(s.encode("utf-16-le", "surrogatepass")) // 2

    @_backend
    @_crosshair_settings()  # type: ignore[misc]
    @given(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=3)))
    def test_safe_int_excludes_bools_symbolic(v: object) -> None:
        """SURF-3/SURF-4 integer test on the CrossHair backend: booleans are not integers in JS."""
        assert is_safe_int(v) == (type(v) is int and 0 <= v <= MAX_SAFE_INTEGER)  # type: ignore[arg-type, operator]
