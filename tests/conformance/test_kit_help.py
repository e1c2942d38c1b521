"""The kit's commands say what they do (issue 46, part 5): each has a description, every option's help states
its default (or that it is required), and each help ends with its exit-code table."""

from __future__ import annotations

import argparse

import pytest

from sessionspec.cli import build_parser


def _parsers() -> dict[str, argparse.ArgumentParser]:
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    vectors = commands["vectors"]._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    return {"conform": commands["conform"], "mutants": commands["mutants"], "serve-model": commands["serve-model"],
            **{f"vectors {name}": vectors[name] for name in ("run", "generate", "pack")}}


@pytest.mark.parametrize("command", sorted(_parsers()))
def test_every_option_states_its_default_and_the_help_ends_with_the_exit_codes(command: str) -> None:
    parser = _parsers()[command]
    assert parser.description, f"{command} has no description"
    undocumented = [a.option_strings or [a.dest] for a in parser._actions
                    if a.help != argparse.SUPPRESS and "--help" not in a.option_strings
                    and not any(word in (a.help or "") for word in ("default", "required", "the same as"))]
    assert undocumented == [], command
    shown = parser.format_help()
    assert "exit codes:\n  0    " in shown and "\n  2    " in shown and "\n  3    " in shown


@pytest.mark.parametrize("command", sorted(_parsers()))
def test_quiet_and_verbose_on_every_command(command: str) -> None:
    strings = {s for a in _parsers()[command]._actions for s in a.option_strings}
    assert {"-q", "--quiet", "-v", "--verbose"} <= strings, command
