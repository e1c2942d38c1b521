"""Progress and words (issue 46, item 5) for check, replay, generate, economics, rules and spec: ``-q`` and
``-v`` on each, every option's default in its help, each command's exit-code table in its help (codes of the one
table, sessionspec.options.EXIT_CODES), every ``--format`` described, and a progress bar for ``generate`` on a
terminal (the bar of ``check``'s files and bytes: tests/check/test_check_ci.py)."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pytest

from sessionspec.cli import build_parser, main
from sessionspec.options import EXIT_CODES

COMMANDS = ("check", "replay", "generate", "economics", "rules", "spec")


def _parser(command: str) -> argparse.ArgumentParser:
    parser = build_parser(only=command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    chosen = sub.choices[command]
    assert isinstance(chosen, argparse.ArgumentParser)
    return chosen


def _help(command: str) -> str:
    return _parser(command).format_help()


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_takes_quiet_and_verbose(command: str) -> None:
    shown = _help(command)
    assert re.search(r"-q, --quiet\s+\S", shown) and re.search(r"-v, --verbose\s+\S", shown), shown
    with pytest.raises(SystemExit) as exited:  # one or the other
        _parser(command).parse_args(["-q", "-v"])
    assert exited.value.code == 2


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_states_its_default(command: str) -> None:
    """Each option's help ends with its default, or says in its own words what happens without it."""
    parser = _parser(command)
    formatter = parser._get_formatter()
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction) or action.required:
            continue
        if not action.option_strings and action.nargs not in ("?", "*"):
            continue  # a required positional has no default
        text = formatter._expand_help(action)
        assert "default" in text, f"{command} {action.option_strings or action.dest}: {text!r}"


@pytest.mark.parametrize("command", COMMANDS)
def test_each_help_ends_with_its_exit_code_table(command: str) -> None:
    shown = _help(command)
    table = shown.split("exit codes:\n", 1)[1]
    codes = [int(code) for code in re.findall(r"^  (\d+)\s+\S", table, re.M)]
    assert codes and set(codes) <= {code for code, _ in EXIT_CODES}, codes
    assert {0, 2, 3, 130} <= set(codes) and codes == sorted(codes)
    if command in ("check", "replay"):
        assert {1, 4} <= set(codes)


def _leaves() -> list[tuple[str, argparse.ArgumentParser]]:
    """Every command a user runs, by its words: each of ``sessionspec --help``'s commands, and each action of
    ``vectors``."""
    from sessionspec.cli import COMMANDS as ALL

    out = []
    for name in ALL:
        parser = _parser(name)
        actions = next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        out += [(f"{name} {action}", sub) for action, sub in actions.items()] if actions else [(name, parser)]
    return out


LEAVES = _leaves()


@pytest.mark.parametrize(("command", "parser"), LEAVES, ids=[name for name, _ in LEAVES])
def test_every_command_has_quiet_verbose_defaults_and_exit_codes(command: str, parser: argparse.ArgumentParser) -> None:
    """Issue 46 item 5 for every command, the conformance ones too: a description, ``-q`` and ``-v``, each option's
    default (an alias, ``--failures-only``: 'the same as -q', takes its twin's), and the exit-code table."""
    shown = parser.format_help()
    assert parser.description, command
    options = {o for a in parser._actions for o in a.option_strings}
    assert {"-q", "--quiet", "-v", "--verbose"} <= options, command
    formatter = parser._get_formatter()
    helps = {o: formatter._expand_help(a) for a in parser._actions if a.help not in (None, argparse.SUPPRESS) for o in a.option_strings}
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction) or action.required:
            continue
        if not action.option_strings and action.nargs not in ("?", "*"):
            continue
        text = formatter._expand_help(action)
        twin = re.fullmatch(r"the same as (-\w|--[\w-]+)", text)
        assert "default" in (helps[twin.group(1)] if twin else text), f"{command} {action.option_strings or action.dest}: {text!r}"
    table = shown.split("exit codes:\n", 1)[1]
    codes = [int(code) for code in re.findall(r"^  (\d+)\s+\S", table, re.M)]
    assert {0, 2, 3, 130} <= set(codes) <= {code for code, _ in EXIT_CODES} and codes == sorted(codes), (command, codes)


@pytest.mark.parametrize("command", ["check", "replay", "rules", "economics"])
def test_format_is_described(command: str) -> None:
    action = next(a for a in _parser(command)._actions if "--format" in a.option_strings)
    assert action.help and all(choice in action.help for choice in action.choices or ()), action.help


class _Terminal:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


def test_generate_draws_a_bar_of_the_events_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    out = tmp_path / "g.jsonl"
    assert main(["generate", "--events", "400", "--out", str(out)]) == 0
    assert "[" + "#" * 30 + "] 400/400 events 100%" in terminal.text and terminal.text.endswith("\r")
    terminal.text = ""
    assert main(["generate", "-q", "--events", "400", "--out", str(out)]) == 0 and terminal.text == ""
    terminal.text = ""
    assert main(["generate", "--events", "50", "--out", str(out), "-v"]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    last = terminal.text.rsplit("\r", 1)[1]
    assert re.fullmatch(rf"sessionspec generate: wrote \d+ events in {len(lines)} lines to {re.escape(str(out))} \(seed 0\)\n", last), last


def test_generate_draws_no_bar_over_a_log_written_to_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The log to standard output, itself the terminal: a bar redrawn between its lines would garble them."""
    screen = _Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    monkeypatch.setattr(sys, "stdout", screen)
    assert main(["generate", "--events", "400"]) == 0
    assert "events 100%" not in screen.text and "[" + "#" * 30 + "]" not in screen.text
    assert screen.text.startswith("{") and all(line.startswith("{") for line in screen.text.splitlines())


def test_generate_is_silent_off_a_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", "--events", "100", "--out", str(tmp_path / "g.jsonl")]) == 0
    assert capsys.readouterr().err == ""


def test_rules_quiet_and_verbose(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--area", "SURF", "-q"]) == 0
    quiet = capsys.readouterr().out.splitlines()
    assert quiet[0].startswith("SURF-1   The surface state MUST be") and not any("implemented by" in line for line in quiet)
    assert main(["rules", "--area", "SURF"]) == 0
    plain = capsys.readouterr().out
    assert main(["rules", "--area", "SURF", "-v"]) == 0
    verbose = capsys.readouterr().out
    assert "implemented by" in plain and len(verbose) > len(plain)


@pytest.mark.slow  # minutes under load: out of the quick loop (issue 42 item 4), in .ci/run
def test_spec_quiet_and_verbose(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "SPEC.md"
    assert main(["spec", "--out", str(out), "-q"]) == 0 and capsys.readouterr().err == ""
    assert main(["spec", "--out", str(out), "-v"]) == 0
    assert re.fullmatch(rf"sessionspec spec: wrote {re.escape(str(out))} \(\d+ lines; \d+ rules, \d+ properties, \d+ quirks\)\n",
                        capsys.readouterr().err)


def test_economics_quiet_and_verbose(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["economics", "--seeds", "1", "-q"]) == 0
    quiet = capsys.readouterr().out
    assert main(["economics", "--seeds", "1"]) == 0
    plain = capsys.readouterr().out
    assert main(["economics", "--seeds", "1", "-v"]) == 0
    verbose = capsys.readouterr().out
    assert "on cost" not in quiet and plain.count("on cost") == 3 and "docs/economics.md" in plain
    assert "(c) durable opener in history injects the opener into history once" in verbose and "injects" not in plain
