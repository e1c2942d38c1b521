"""``sessionspec serve-model``: the model itself behind the adapter protocol.

The reference adapter: it reads ``sessionspec-adapter/1`` operations from stdin
and answers on stdout (sessionspec/conformance/adapter/session.py, docs/conformance.md), so it passes every
vector and never diverges in ``conform``.  ``--mutant NAME`` serves one of the
deliberately broken variants of sessionspec/conformance/mutants.py instead (the patch lives only
in this process).
"""

from __future__ import annotations

import argparse
import sys
from typing import Final

from sessionspec.conformance.adapter.driver import serve_stdio
from sessionspec.conformance.adapter.session import ModelSession

HELP: Final = "serve the model over the JSON-lines adapter protocol on stdin/stdout (the reference adapter)"
EXIT_CODES: Final = (
    (0, "its input ended (the client closed it)"),
    (2, "a usage error (an unknown mutant)"),
    (3, "a bug in sessionspec itself"),
    (130, "interrupted (Ctrl-C)"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from sessionspec.conformance.vectors.cli_words import add_verbosity_arguments, exit_codes

    parser.epilog = exit_codes(EXIT_CODES) + "\n\nThe protocol: docs/conformance.md section 3."
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--mutant", default=None, metavar="NAME",
                        help="serve a deliberately broken variant (see `sessionspec mutants --list`; default: the model)")
    add_verbosity_arguments(parser, quiet="nothing on stderr (as without -v)",
                            verbose="a line on stderr per operation answered: its id, name and outcome")


def run(args: argparse.Namespace) -> int:
    session = ModelSession()
    if args.mutant is not None:
        from sessionspec.conformance.mutants import BY_NAME, mutant_session

        if args.mutant not in BY_NAME:
            print(f"sessionspec serve-model: unknown mutant {args.mutant!r} (see `sessionspec mutants --list`)", file=sys.stderr)
            return 2
        session = mutant_session(args.mutant)
    if getattr(args, "verbose", False) and not getattr(args, "quiet", False):
        return serve_stdio(session, log=sys.stderr)
    return serve_stdio(session)


def main() -> int:
    parser = argparse.ArgumentParser(prog="sessionspec serve-model", description=HELP)
    add_arguments(parser)
    return run(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
