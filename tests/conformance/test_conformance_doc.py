"""docs/conformance.md is enough to write an adapter from (issue 45, part 5): what it shows of the vectors is
checked against the vectors themselves.

- every ``<!-- checked: VECTOR STEP [first=N] TYPE... -->`` block (section 1.4, the defaults and logged shapes
  the vectors rely on) equals the events of that types in the model's answer to that step of that committed
  vector (``requests``: the count of requests sent);
- the first-vector path (section 1, step 2) names exactly the vectors that run with each declaration;
- the example summary of the partial adapter, its per-rule line and its conform run are what it really prints on
  the committed pack (a ``…`` line of an example stands for any lines, a ``…`` inside a line for any text).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from sessionspec.cli import main
from sessionspec.conformance.adapter.capabilities import Capabilities, vector_needs
from sessionspec.conformance.adapter.driver import InProcessAdapter
from sessionspec.conformance.vectors.command import VECTORS_DIR
from sessionspec.conformance.vectors.files import load_dir

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "conformance.md"
NODE = shutil.which("node")
CHECKED = re.compile(r"<!-- checked: (?P<vector>\S+) (?P<step>\d+)(?: first=(?P<first>\d+))? (?P<types>[^>]+?) -->\s*"
                     r"```json\n(?P<body>.*?)\n\s*```", re.S)


def _vectors() -> dict[str, dict[str, Any]]:
    return {v["id"]: v for d in load_dir(VECTORS_DIR) for v in d["vectors"]}


def shown_events(vector: dict[str, Any], step: int, types: list[str], first: int | None = None) -> list[dict[str, Any]]:
    """What a checked block shows: the events of ``types`` the model appends at ``step`` of ``vector`` (``type``
    and ``data``, in log order, the first ``first`` of them), then ``{"requests": count}`` when asked."""
    adapter = InProcessAdapter()
    adapter.call({"op": "init", **vector["initial"]})
    answer: dict[str, Any] = {}
    for index, s in enumerate(vector["steps"][: step + 1]):
        answer = adapter.call(s["op"])
        assert index < step or "reject" not in answer
    events = [{"type": e["type"], "data": e["data"]} for e in answer["appended"] if e["type"] in types]
    shown = events[:first] if first is not None else events
    return [*shown, *([{"requests": len(answer["requests"])}] if "requests" in types else [])]


def test_every_checked_block_is_what_its_vector_logs() -> None:
    text = DOC.read_text(encoding="utf-8")
    blocks = list(CHECKED.finditer(text))
    assert len(blocks) >= 6  # the defaults and logged shapes issue 45 names
    vectors = _vectors()
    for block in blocks:
        documented = [json.loads(line) for line in block["body"].splitlines() if line.strip()]
        expected = shown_events(vectors[block["vector"]], int(block["step"]), block["types"].split(),
                                int(block["first"]) if block["first"] else None)
        assert documented == expected, block["vector"]


def test_the_inputs_a_checked_block_names_are_its_steps() -> None:
    """The arguments a block's sentence quotes in parentheses before it (`"textChunks": ["cut"]`) are in the
    operation of that step, as canonical JSON writes them: the reader sees what produced the events."""
    text = DOC.read_text(encoding="utf-8")
    vectors = _vectors()
    quoted = 0
    for block in CHECKED.finditer(text):
        before = re.search(r"\(([^()]*)\):\s*$", text[: block.start()])
        if before is None:
            continue
        op = json.dumps(vectors[block["vector"]]["steps"][int(block["step"])]["op"], sort_keys=True, ensure_ascii=False)
        for fragment in re.findall(r"`([^`]+)`", before.group(1)):
            assert fragment in op, (block["vector"], fragment)
            quoted += 1
    assert quoted >= 7


def _running(capabilities: Capabilities) -> list[str]:
    return [i for i, v in _vectors().items() if not capabilities.missing(vector_needs(v))]


def test_the_first_vector_path_names_the_vectors_each_declaration_runs() -> None:
    """Step 2 of section 1: with init/send/log and no feature, then with tool-calls, then with a plain
    contributor too, the vectors it names are those the pack's needs let run."""
    text = DOC.read_text(encoding="utf-8")
    step = text.split("2. Start with `init`, `send`", 1)[1].split("\n3. ", 1)[0]
    ops = frozenset({"init", "send", "log"})
    none = _running(Capabilities(operations=ops, features=frozenset()))
    tools = _running(Capabilities(operations=ops, features=frozenset({"tool-calls"})))
    contributors = _running(Capabilities(operations=ops, features=frozenset({"tool-calls", "contributors"})))
    first, second = step.split("<!-- first-vectors: tool-calls -->", 1)
    assert set(re.findall(r"`([a-z]+/[a-z0-9/-]+)`", first.split("<!-- first-vectors: -->", 1)[1])) == set(none)
    assert set(re.findall(r"`([a-z]+/[a-z0-9/-]+)`", second.split("Nearly every", 1)[0])) == set(tools) - set(none)
    assert f"<!-- first-vectors: tool-calls contributors --> it makes {len(contributors)} vectors" in step


@pytest.mark.skipif(NODE is None, reason="no node runtime on PATH (the partial adapter is JavaScript)")
def test_the_example_summary_is_the_partial_adapters(capsys: pytest.CaptureFixture[str]) -> None:
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- partial-adapter-summary -->", 1)[1].split("```", 2)[1]
    documented = [line.strip() for line in block.splitlines() if line.strip()]
    main(["vectors", "run", str(VECTORS_DIR), "--adapter", f"{NODE} {ROOT / 'tests' / 'partial_adapter' / 'adapter.mjs'}"])
    printed = capsys.readouterr().out.splitlines()
    summary = next(line for line in printed if re.match(r"\d+/\d+ vectors passed", line))
    unlock = next(line for line in printed if line.startswith("skipped for lack of: "))
    assert documented == [summary, unlock]
    assert f"`{summary}` (the partial adapter of docs/conformance.md section 1)" in (ROOT / "docs" / "cli.md").read_text(
        encoding="utf-8")
    assert _example(text, "partial-adapter-rules") == [next(line for line in printed if line.startswith("per rule"))]
    failure = _example(text, "partial-adapter-failure")
    start = printed.index(failure[0])
    shown = [line.strip() for line in printed[start: start + len(failure)]]
    assert _shown_as(failure).fullmatch("".join(f"{line}\n" for line in shown)), shown


def _example(text: str, marker: str) -> list[str]:
    """The lines of the code block after ``<!-- marker -->``."""
    block = text.split(f"<!-- {marker} -->", 1)[1].split("```", 2)[1]
    return [line.strip() for line in block.splitlines() if line.strip()]


def _shown_as(documented: list[str]) -> re.Pattern[str]:
    """What an example with ``…`` stands for: a ``…`` line any lines, a ``…`` in a line any text."""
    parts = ["(?:[^\n]*\n)*?" if line == "…" else ".*?".join(re.escape(p) for p in line.split("…")) + "\n"
             for line in documented]
    return re.compile("".join(parts))


@pytest.mark.skipif(NODE is None, reason="no node runtime on PATH (the partial adapter is JavaScript)")
def test_the_conform_example_is_the_partial_adapters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Section 4's example run, as documented (its options, its expectations file), prints what the section
    shows.  Deterministic for a Hypothesis version (``--seed``): after an upgrade, paste the new output."""
    documented = _example(DOC.read_text(encoding="utf-8"), "partial-adapter-conform")
    expect = tmp_path / "known.txt"
    expect.write_text("conform/*  the partial adapter's known bugs\n", encoding="utf-8")
    adapter = f"{NODE} {ROOT / 'tests' / 'partial_adapter' / 'adapter.mjs'} --undeclared"
    code = main(["conform", "--adapter", adapter, "--examples", "40", "--seed", "11", "--no-decisions", "--no-progress",
                 "--expect", str(expect)])
    printed = capsys.readouterr().out
    assert code == 0
    assert _shown_as(documented).fullmatch(printed), printed


def test_the_rules_without_a_vector_are_the_ones_named() -> None:
    """Section 2.2 names the registered rules no vector names, and counts those that have one."""
    from sessionspec.conformance.vectors.command import rules_with_vectors
    from sessionspec.spec.registry import rule_ids

    text = DOC.read_text(encoding="utf-8").split("<!-- rules-without-vectors -->", 1)[1].split(")", 1)[0]
    named, counts = text.split("(", 1)
    assert set(re.findall(r"[A-Z]+-\d+", named)) == set(rule_ids()) - set(rules_with_vectors())
    assert counts == f"{len(rules_with_vectors())} of {len(rule_ids())}"


@pytest.mark.slow
def test_the_two_scores_example_is_the_model_without_rule_ids(capsys: pytest.CaptureFixture[str]) -> None:
    """Section 2.1.1's example: the model with every rejection's rules removed, on the committed pack."""
    import sys

    main(["vectors", "run", str(VECTORS_DIR), "--adapter", f"{sys.executable} {ROOT / 'tests' / 'hostile_adapter.py'} model,norule"])
    printed = capsys.readouterr().out.splitlines()
    shown = [line for line in printed if line.startswith("verdict agreement: ") or re.match(r"\d+/\d+ vectors passed", line)]
    assert _example(DOC.read_text(encoding="utf-8"), "norule-summary") == shown
