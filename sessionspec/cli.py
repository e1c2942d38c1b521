"""The ``sessionspec`` command line.

Each subcommand lives in its own module exposing ``HELP``, ``add_arguments``
and ``run`` (returning the exit code), so commands stay independent.  Usage
errors exit 2; no command lets a traceback reach the user: an unexpected
exception is reported as an interpreter bug (exit 3), like the reference
interpreter's third failure kind.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Final, Protocol, cast


class Command(Protocol):
    HELP: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


COMMANDS: Final = {
    "check": "sessionspec.check.command",
    "replay": "sessionspec.replay_cmd",
    "rules": "sessionspec.rules_cmd",
    "spec": "sessionspec.spec_render",
    "vectors": "sessionspec.conformance.vectors.command",
    "conform": "sessionspec.conformance.conform.cli",
    "serve-model": "sessionspec.conformance.adapter.serve_model",
    "mutants": "sessionspec.conformance.mutants",
    "generate": "sessionspec.generate",
    "economics": "sessionspec.economics_cmd",
}

# The commands that run a Hypothesis search (conform, and mutants through it).
SEARCHES_WITH_HYPOTHESIS: Final = frozenset({"conform", "mutants"})


def _load(name: str) -> Command | None:
    try:
        return cast(Command, importlib.import_module(COMMANDS[name]))
    except ModuleNotFoundError as missing:
        if missing.name == COMMANDS[name]:
            return None
        raise


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or with ``only``: that command's module alone imported and its options added.

    A command's module is imported only when the command runs (or for ``--help``), so one
    command's missing dependency (the checker's C parser, Hypothesis) never breaks another.
    """
    from sessionspec.options import exit_codes_text, version_text

    parser = argparse.ArgumentParser(prog="sessionspec", description="Reference model and conformance oracle for agent session logs.",
                                     epilog=exit_codes_text() + "\n\nOne spelling for every option: docs/cli.md.",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=version_text())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if only is not None and name != only:
            sub.add_parser(name)  # a name to choose; only the chosen command's options are ever parsed
            continue
        command = _load(name)
        if command is None:
            continue
        sub_parser = sub.add_parser(name, help=command.HELP, description=command.HELP)
        command.add_arguments(sub_parser)
        sub_parser.set_defaults(_run=command.run)
    return parser


def _chosen_command(argv: Sequence[str]) -> str | None:
    # The top-level options (--help, --version) take no value, so the first other word is the command;
    # a top-level --help before it lists every command, so it needs the whole parser.
    for word in argv:
        if word in ("-h", "--help"):
            return None
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(only=_chosen_command(words))
    args = parser.parse_args(words)
    if not hasattr(args, "_run"):
        parser.print_help(sys.stderr)
        return 2
    from sessionspec.hypothesis_home import scratch_hypothesis_home

    try:
        if args.command not in SEARCHES_WITH_HYPOTHESIS:
            return int(args._run(args))
        with scratch_hypothesis_home():  # no .hypothesis/ left in the user's directory
            return int(args._run(args))
    except KeyboardInterrupt:
        print("sessionspec: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as bug:  # the third failure kind: a bug in the oracle itself
        print(f"sessionspec: internal error (a bug in sessionspec, please report): {type(bug).__name__}: {bug}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
