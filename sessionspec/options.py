"""One command-line dialect: option values spelled the same in every subcommand.

A dialect has one spelling in every output and in the documentation: ``A55``
and ``D08`` (:func:`dialect_text`, the rule book's names; issue 46: ``check``'s
text, its JSON and ``replay`` used to print ``A55``, ``a55f148516`` and ``a55``).
``--dialect`` takes that spelling in any case, and the full commit names
(``a55f148516``, ``611615650f``) too, so old scripts keep working.  The exit codes
are one table, printed by ``sessionspec --help`` and copied in docs/cli.md (a
test keeps the two equal).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from sessionspec.model.log import Dialect

DIALECT_METAVAR: Final = "A55|D08"
# The one exit-code table (issue 30): `sessionspec --help`, docs/cli.md, docs/guide.md and the
# README show exactly these rows; tests/tools/test_exit_codes.py keeps them equal and runs a command for
# each code.  `check --help` adds its own precedence (docs/check.md); its codes mean the same.
EXIT_CODES: Final = (
    (0, "success: every log valid, every vector passed, no divergence, every mutant killed"),
    (1, "a finding: an invalid log, a failing vector, a divergence, a mutant that survived"),
    (2, "a usage error or unreadable input (one message on standard error, no traceback)"),
    (3, "an internal error: a bug in sessionspec itself (please report it)"),
    (4, "undecided (check, replay): a log beyond a limit of sessionspec, with mixed dialect markers "
        "or outside the model; unknown is not a pass"),
    (130, "interrupted (Ctrl-C)"),
)


# Every command's own table ends with the two codes any command can give.
COMMON_CODES: Final = ((3, "an internal error: a bug in sessionspec itself (please report it)"), (130, "interrupted (Ctrl-C)"))


def exit_codes_text(rows: Sequence[tuple[int, str]] = EXIT_CODES) -> str:
    return "exit codes:\n" + "\n".join(f"  {code:<4} {meaning}" for code, meaning in rows)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """``--help`` as every command of this package writes it: the description and epilog (the exit-code
    table) as written, and each option's default at the end of its help (``(default: 3)``, ``(default:
    off)`` for a flag) unless the help already says it; an option whose default is None says in its own
    words what happens without it (tests/tools/test_cli_words.py keeps every option's help saying so)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "default" in text or action.default is argparse.SUPPRESS or action.required or action.default is None:
            return text
        if not action.option_strings and action.nargs not in (argparse.OPTIONAL, argparse.ZERO_OR_MORE):
            return text
        if action.default is False or action.nargs == 0:
            return f"{text} (default: off)"
        return f"{text} (default: %(default)s)"


def describe(parser: argparse.ArgumentParser, *, exit_codes: Sequence[tuple[int, str]], see: str, extra: str = "") -> None:
    """A command's help as every command of this package writes it (:class:`HelpFormatter`): its own exit
    codes (the meanings of sessionspec.options.EXIT_CODES for that command, then 3 and 130), what else to
    know, and the document to read."""
    parser.formatter_class = HelpFormatter
    rows = sorted([*exit_codes, *(row for row in COMMON_CODES if row[0] not in {code for code, _ in exit_codes})])
    parser.epilog = exit_codes_text(rows) + (f"\n{extra}" if extra else "") + f"\n\nsee {see}"


def add_verbosity(parser: argparse.ArgumentParser, *, quiet: str, verbose: str) -> None:
    """``-q``/``--quiet`` and ``-v``/``--verbose`` (one or the other), each with what it does for this command."""
    words = parser.add_mutually_exclusive_group()
    words.add_argument("-q", "--quiet", action="store_true", help=quiet)
    words.add_argument("-v", "--verbose", action="store_true", help=verbose)


def package_version() -> str:
    """The installed package's version (``0+unknown`` when run from a tree that is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sessionspec")
    except PackageNotFoundError:
        return "0+unknown"


def version_text() -> str:
    """``sessionspec --version``: the package, the rule registry and the vector format it speaks."""
    from sessionspec.conformance.vectors.format import FORMAT
    from sessionspec.spec.registry import registry_digest

    return f"sessionspec {package_version()} ({build_kind()}; rule registry {registry_digest()}, {FORMAT}, dialects A55 D08)"


def build_kind() -> str:
    """Which build is running: the checker's fast layer compiled by mypyc (hatch_build.py), or pure Python.

    Read from where the import system finds a module of the fast layer, not from a note the build wrote (a
    ``.so`` shadows its ``.py`` only where it was installed beside it, and that is what runs), and without
    importing it: ``--version`` and ``rules`` run without the checker's C parser.
    """
    from importlib.machinery import EXTENSION_SUFFIXES
    from importlib.util import find_spec

    found = find_spec("sessionspec.fast.parse")
    origin = found.origin if found is not None else None
    return "compiled (mypyc)" if origin is not None and origin.endswith(tuple(EXTENSION_SUFFIXES)) else "pure Python"


def dialect_text(dialect: Dialect | None) -> str | None:
    """A dialect's one spelling in every output (text, JSON, pages): ``A55`` or ``D08``; None for none."""
    return None if dialect is None else dialect.name


def dialect_value(text: str) -> Dialect:
    """``A55``/``D08`` in any case, or a dialect's commit name; else a usage error."""
    key = text.strip().lower()
    for dialect in Dialect:
        if key in (dialect.name.lower(), dialect.value.lower()):
            return dialect
    raise argparse.ArgumentTypeError(f"unknown dialect {text!r} (choose A55 or D08)")


def add_dialect(parser: argparse.ArgumentParser, *, default: Dialect | None, help: str) -> None:
    parser.add_argument("--dialect", type=dialect_value, default=default, metavar=DIALECT_METAVAR, help=help)


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1, else a usage error."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def write_output(text: str, out: str | None, prog: str) -> int:
    """``--out FILE`` for every command: write ``text`` there (missing parent
    directories are created), or to stdout without ``--out`` or with ``-``.
    The exit code: 0, or 2 with one line on stderr when FILE cannot be written."""
    if out is None or out == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0
    try:
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as problem:
        print(f"{prog}: cannot write {out}: {problem.strerror or problem}", file=sys.stderr)
        return 2
    return 0
