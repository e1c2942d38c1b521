"""One command-line dialect: option values spelled the same in every subcommand.

Every subcommand that reads a dialect takes ``--dialect a55|d08`` (documented
spelling, lower case, docs/cli.md); the upper-case ``A55``/``D08`` that
``check`` used to print and the full commit names (``a55f148516``,
``611615650f``) are accepted too, so old scripts keep working.  The exit codes
are one table, printed by ``sessionspec --help`` and copied in docs/cli.md (a
test keeps the two equal).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Final

from sessionspec.model.log import Dialect

DIALECT_METAVAR: Final = "a55|d08"
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


def exit_codes_text() -> str:
    return "exit codes:\n" + "\n".join(f"  {code:<4} {meaning}" for code, meaning in EXIT_CODES)


def version_text() -> str:
    """``sessionspec --version``: the package, the rule registry and the vector format it speaks."""
    from importlib.metadata import PackageNotFoundError, version

    from sessionspec.conformance.vectors.format import FORMAT
    from sessionspec.spec.registry import registry_digest

    try:
        number = version("sessionspec")
    except PackageNotFoundError:
        number = "0+unknown"
    return f"sessionspec {number} ({build_kind()}; rule registry {registry_digest()}, {FORMAT}, dialects a55 d08)"


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


def dialect_value(text: str) -> Dialect:
    """``a55``/``d08`` in any case, or a dialect's commit name; else a usage error."""
    key = text.strip().lower()
    for dialect in Dialect:
        if key in (dialect.name.lower(), dialect.value.lower()):
            return dialect
    raise argparse.ArgumentTypeError(f"unknown dialect {text!r} (choose a55 or d08)")


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
