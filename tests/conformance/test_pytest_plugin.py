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

from sessionspec.conformance.vectors.command import VECTORS_DIR, load_dir

pytest_plugins = ["pytester"]

MODEL = f"{sys.executable} -m sessionspec.conformance.adapter.serve_model"


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
    # collected like any test: the count is the items listed (it once said "no tests collected")
    assert f"{len(listed)} tests collected" in result.stdout.str() and result.ret == pytest.ExitCode.OK


def test_a_filtered_run_counts_collected_deselected_and_selected(pytester: pytest.Pytester) -> None:
    total = len(_vectors()) + 1
    result = pytester.runpytest("-p", "no:cacheprovider", "-o", "addopts=", "--sessionspec-adapter", MODEL,
                                "--sessionspec-examples", "3", "-k", "loop/header/empty-tools or conform")
    result.assert_outcomes(passed=2, deselected=total - 2)
    assert f"collected {total} items / {total - 2} deselected / 2 selected" in result.stdout.str()


def test_the_defaults_are_the_command_lines(pytester: pytest.Pytester) -> None:
    """The same knob has the same default in `sessionspec conform` and the plugin."""
    from sessionspec.conformance.adapter import driver
    from sessionspec.conformance.conform import search
    from sessionspec.pytest_plugin import DEFAULT_EXAMPLES, DEFAULT_TIMEOUT

    assert (DEFAULT_EXAMPLES, DEFAULT_TIMEOUT) == (search.DEFAULT_EXAMPLES, driver.DEFAULT_TIMEOUT)
    shown = " ".join(pytester.runpytest("-p", "no:cacheprovider", "--help").stdout.str().split())
    assert f"(default {search.DEFAULT_EXAMPLES}, as `sessionspec conform`;" in shown
    assert f"(default {driver.DEFAULT_TIMEOUT:g}, as `sessionspec conform --timeout`)" in shown
    cli = subprocess.run([sys.executable, "-m", "sessionspec.cli", "conform", "--help"], capture_output=True, text=True, timeout=60)
    assert f"(default {search.DEFAULT_EXAMPLES})" in cli.stdout and f"(default {driver.DEFAULT_TIMEOUT:g})" in " ".join(cli.stdout.split())


def test_the_conform_item_leaves_no_hypothesis_directory(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sessionspec-adapter", MODEL,
                                           "--sessionspec-examples", "3", "-k", "conform")
    result.assert_outcomes(passed=1)
    assert not (pytester.path / ".hypothesis").exists()


def test_conform_on_the_command_line_leaves_no_hypothesis_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    done = subprocess.run([sys.executable, "-m", "sessionspec.cli", "conform", "--adapter", MODEL, "--examples", "3", "--no-progress"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.iterdir()) == []


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


@pytest.mark.slow  # seconds each, out of the quick loop (issue 42 item 4), in .ci/run
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
