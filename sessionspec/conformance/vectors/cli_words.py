"""The command-line words every command of the kit spells the same way: ``-q``/``-v``, the exit-code table of
``--help`` and the adapter driver's bounds (``vectors run``, ``conform``, ``mutants``, ``serve-model``)."""

from __future__ import annotations

import argparse

from sessionspec.conformance.adapter.driver import DEFAULT_TIMEOUT, MAX_ANSWER


def add_verbosity_arguments(parser: argparse.ArgumentParser, *, quiet: str, verbose: str) -> None:
    """``-q``/``-v``, as every command of the kit spells them (issue 46, part 5)."""
    parser.add_argument("--quiet", "-q", action="store_true", help=f"{quiet} (default: off)")
    parser.add_argument("--verbose", "-v", action="store_true", help=f"{verbose} (default: off)")


def exit_codes(rows: tuple[tuple[int, str], ...]) -> str:
    """A command's exit-code table, for its ``--help`` (the codes mean what ``sessionspec --help`` says)."""
    return "exit codes:\n" + "\n".join(f"  {code:<4} {meaning}" for code, meaning in rows)


def add_driver_arguments(parser: argparse.ArgumentParser) -> None:
    """The adapter driver's bounds (``vectors run``, ``conform``)."""
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help=f"the longest wait for one answer of the adapter (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--max-answer", type=int, default=MAX_ANSWER, metavar="BYTES",
                        help=f"the largest answer line accepted (default {MAX_ANSWER} = 64 MiB)")


def driver_usage_error(args: argparse.Namespace) -> str | None:
    if not args.timeout > 0 or args.timeout > 86400:
        return "--timeout must be a number of seconds above 0 (at most 86400)"
    if args.max_answer < 1024:
        return "--max-answer must be at least 1024 bytes"
    return None
