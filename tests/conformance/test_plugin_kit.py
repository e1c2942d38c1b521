"""Issue 27 in the pytest plugin: capabilities skip, ``--sessionspec-expect`` maps to xfail/xpass, and a
failure reads as ``sessionspec vectors run`` prints it (the same lines, vectors.runner.failure_lines)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from sessionspec.cli import main
from sessionspec.conformance.vectors.command import VECTORS_DIR

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")
PARTIAL = f"{NODE} {ROOT / 'tests' / 'partial_adapter' / 'adapter.mjs'}"
MUTANT = f"{sys.executable} -m sessionspec.conformance.adapter.serve_model --mutant keep-empty-tools"
SELECT = "a-single-turn-no-prefix or compose-once or keep-empty-assistant"


@pytest.mark.skipif(NODE is None, reason="no node runtime on PATH (the partial adapter is JavaScript)")
def test_partial_adapter_items_pass_skip_and_fail_with_the_cli_text(pytester: pytest.Pytester,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "-o", "addopts=", "-rs", "--sessionspec-adapter", PARTIAL,
                                "--sessionspec-examples", "0", "-k", SELECT)
    # gt/ and check/valid/ a-single-turn-no-prefix: the loop one passes, the check one needs `op check`;
    # loop/prefix/compose-once needs contributors; shrunk/keep-empty-assistant is a real failure (DER-5).
    result.assert_outcomes(passed=1, skipped=3, failed=1)
    output = result.stdout.str()
    assert "not declared in hello: feature contributors" in output and "not declared in hello: op check" in output
    main(["vectors", "run", str(VECTORS_DIR), "--adapter", PARTIAL, "--id", "shrunk/keep-empty-assistant"])
    cli = capsys.readouterr().out
    diff_lines = [line.strip() for line in cli.splitlines() if line.startswith("      $.")]
    assert diff_lines and all(line in output for line in diff_lines)
    assert output.count("vector shrunk/keep-empty-assistant failed") == 1


def test_expectations_are_xfail_and_a_listed_pass_is_a_strict_xpass(pytester: pytest.Pytester) -> None:
    """keep-empty-tools fails its own regression vector (HDR-2) and passes the log checker's."""
    expect = pytester.path / "expected.txt"
    expect.write_text("shrunk/keep-empty-tools  empty tools kept\ncheck/valid/a-single-turn-no-prefix  not yet\n"
                      "conform/send/*  known\n", encoding="utf-8")
    result = pytester.runpytest("-p", "no:cacheprovider", "-o", "addopts=", "--sessionspec-adapter", MUTANT,
                                "--sessionspec-expect", str(expect), "--sessionspec-examples", "20",
                                "-k", "shrunk/keep-empty-tools or check/valid/a-single-turn-no-prefix or conform")
    result.assert_outcomes(xfailed=2, failed=1)
    assert "XPASS(strict)" in result.stdout.str()


def test_a_bad_expectations_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    expect = pytester.path / "expected.txt"
    expect.write_text("loop/x\n", encoding="utf-8")
    result = pytester.runpytest("-p", "no:cacheprovider", "--sessionspec-adapter", MUTANT, "--sessionspec-expect", str(expect))
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "has no reason" in result.stderr.str()
