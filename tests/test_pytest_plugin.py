"""The pytest plugin (sessionspec/pytest_plugin.py) run through ``pytester``.

Against the reference adapter (``serve-model``) every selected item passes;
against a mutant adapter (sessionspec/conformance/mutants.py) the vectors that
exercise the broken rule fail, and ``conform`` fails naming that rule, with the
JSON paths, the shrunk trace and a replay command that really replays it.  The
runs select a few vectors with ``-k`` to stay fast.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sessionspec.conformance.vectors import VECTORS_DIR, load_dir

pytest_plugins = ["pytester"]

MODEL = f"{sys.executable} -m sessionspec.conformance.serve_model"


def _mutant(name: str) -> str:
    return f"{MODEL} --mutant {name}"


def _vectors() -> dict[str, dict[str, object]]:
    return {v["id"]: {**v, "group": d["group"]} for d in load_dir(VECTORS_DIR) for v in d["vectors"]}


def test_plugin_is_inert_without_the_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_one():\n    assert True\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_every_vector_is_an_item_named_by_its_id(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "--collect-only", "-q", "--sessionspec-adapter", MODEL)
    listed = {line.split("::", 1)[1] for line in result.outlines if line.startswith("sessionspec")}
    assert listed == set(_vectors()) | {"conform"}


def test_reference_adapter_passes_selected_vectors_and_conform(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "--sessionspec-adapter", MODEL, "--sessionspec-examples", "5",
                                "-k", "sessionspec_loop or conform")
    loop_count = sum(1 for v in _vectors().values() if v["group"] == "loop")
    assert loop_count > 10
    result.assert_outcomes(passed=loop_count + 1)


def test_markers_select_by_rule_and_group(pytester: pytest.Pytester) -> None:
    vectors = _vectors()
    hdr2 = {i for i, v in vectors.items() if "HDR-2" in v["rules"]}  # type: ignore[operator]
    result = pytester.runpytest("-p", "no:cacheprovider", "--collect-only", "-q", "--sessionspec-adapter", MODEL,
                                "-m", "sessionspec_rule_HDR_2")
    listed = {line.split("::", 1)[1] for line in result.outlines if line.startswith("sessionspec")}
    assert hdr2 and listed == hdr2


def test_mutant_adapter_fails_the_expected_items_readably(pytester: pytest.Pytester) -> None:
    """keep-empty-tools breaks HDR-2 (an empty tools list stays in the header):
    the vector that sends ``tools: []`` and conform fail; a vector whose agent
    has a non-empty tools list (gt/b: the echo tool) cannot tell and passes."""
    command = _mutant("keep-empty-tools")
    result = pytester.runpytest("-p", "no:cacheprovider", "--sessionspec-adapter", command, "--sessionspec-examples", "20",
                                "-k", "loop/header/empty-tools or gt/b-prefix-idioms-tool-roundtrip or conform")
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    assert "FAILED sessionspec/loop::loop/header/empty-tools" in out
    assert "FAILED sessionspec::conform" in out
    assert "rule HDR-2" in out and "rules: HDR-2" in out
    assert "$.requests[0]: unexpected keys tools" in out  # the JSON path that differs
    assert "shrunk trace:" in out and '"op": "init"' in out
    # (set: under CI=true pytest repeats each failure's whole message in the short summary)
    replays = sorted({line.split("replay: ", 1)[1] for line in result.outlines if line.startswith("replay: ")})
    assert len(replays) == 2
    for replay in replays:  # the printed command replays the failure
        directory = Path(replay.split(" ")[3])
        done = subprocess.run([sys.executable, "-m", "sessionspec.cli", "vectors", "run", str(directory), "--adapter", command],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 1 and "0/1 vectors passed" in done.stdout, done.stdout + done.stderr


def test_exitfirst_stops_at_the_first_failing_vector(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "-x", "--sessionspec-adapter", _mutant("keep-empty-tools"),
                                "--sessionspec-examples", "0", "-k", "sessionspec_loop")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed") == 1 and result.ret == 1


def test_xdist_and_junitxml_report_one_case_per_vector(pytester: pytest.Pytester) -> None:
    """Under xdist each worker runs its own adapter; JUnit XML names the group as
    the class and the vector id as the test.  gt/b and gt/g carry non-empty tools
    lists, so the keep-empty-tools mutant passes them."""
    xml = pytester.path / "out.xml"
    chosen = {"loop/header/empty-tools", "gt/b-prefix-idioms-tool-roundtrip", "gt/g-header-change-system-and-tools"}
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", f"--junitxml={xml}",
                                           "--sessionspec-adapter", _mutant("keep-empty-tools"), "--sessionspec-examples", "0",
                                           "-k", " or ".join(sorted(chosen)))
    cases = {c.get("name"): c for c in ET.parse(xml).getroot().iter("testcase")}
    assert set(cases) == chosen
    assert cases["loop/header/empty-tools"].get("classname") == "sessionspec.loop"
    assert cases["gt/b-prefix-idioms-tool-roundtrip"].get("classname") == "sessionspec.groundtruth"
    failed = {name for name, c in cases.items() if c.find("failure") is not None}
    assert failed == {"loop/header/empty-tools"} and result.ret == 1


def test_bad_options_are_usage_errors(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "--sessionspec-adapter", MODEL,
                                "--sessionspec-vectors", str(pytester.path / "missing"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "no such directory" in result.stderr.str()


def test_an_adapter_that_cannot_start_fails_each_item_clearly(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "--sessionspec-adapter", "/nonexistent/adapter",
                                "--sessionspec-examples", "0", "-k", "loop/header/empty-tools")
    result.assert_outcomes(failed=1)
    assert "cannot start adapter" in result.stdout.str() and "Traceback" not in result.stdout.str()


def test_a_hung_adapter_fails_the_item_after_the_timeout(pytester: pytest.Pytester) -> None:
    """An adapter that reads but never answers must not hang CI."""
    hung = pytester.makepyfile(hung="import sys, time\nfor _ in sys.stdin:\n    time.sleep(3600)\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--sessionspec-adapter", f"{sys.executable} {hung}",
                                "--sessionspec-timeout", "1", "--sessionspec-examples", "0", "-k", "loop/header/empty-tools")
    result.assert_outcomes(failed=1)
    assert "no answer within 1 s" in result.stdout.str() and "Traceback" not in result.stdout.str()
