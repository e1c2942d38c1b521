"""``sessionspec vectors generate|run``: the conformance vectors (``sessionspec-vectors/1``).

A vector is a language-neutral script: an initial state (seed log lines, agent
options with contributors), then ``steps``, each an adapter operation
(sessionspec/conformance/adapter/session.py) with an optional expectation *pattern* over its answer
(sessionspec/conformance/vectors/format.py).  Files group vectors and carry the format name and the
rule-registry digest; they are canonical JSON, so ``generate`` is byte-stable
and a test fails when the committed ``vectors/`` differ from a fresh generation.

Sources of the expectations:

- ``groundtruth.json``: the 17 scenarios recorded from the real harness; the
  expected requests and the final log come from ``tests/data/groundtruth`` (the
  real data), never from the model;
- ``replay.json``: reconstruction of the recorded requests from each recorded
  log alone (issue 10 part 1), again expected from the real data;
- ``check.json``: log verdicts, ``valid`` for real logs and ``reject {rule}``
  for one targeted corruption each (the rule is the one the corruption breaks),
  including ``check/rule/*``: one vector for each rule no other vector reaches
  (D08 reading, compaction brackets, legacy and synthetic logs);
- ``codec.json``: the operations below the loop (chunk-row writer, crash repair,
  out-of-band appends, the token meter, compact-basic's entry points, seed
  loading); the real ``pack`` vectors expect the real files;
- ``loop.json``: hand-written scenarios per rule; their expected answers are
  recorded from the model (the oracle) and the scenario says which rule it exercises.

This module is the command line and re-exports the names other code imports;
the pieces live in one module each of this package: ``build`` (types, builders,
recorded expectations), ``groups`` (``data``: the bundled real data; ``groundtruth``,
``check``, ``corruption``, ``rules``, ``codec``, ``recorded``: the groups), ``files``
(generation and loading), ``runner`` (running against an adapter).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Final

from sessionspec.conformance.vectors.build import (
    ECHO_TOOL,
    GROUNDTRUTH,
    VECTORS_DIR,
    Op,
    Step,
    Vector,
    contributor,
    echo,
    message,
    record,
    recorded_expectation,
    reply,
    send,
    text,
)
from sessionspec.conformance.vectors.cli_words import (
    add_driver_arguments,
    add_verbosity_arguments,
    driver_usage_error,
    exit_codes,
)
from sessionspec.conformance.vectors.exit_codes import EXIT_CODES
from sessionspec.conformance.vectors.files import generate, load_dir, rules_with_vectors, vectors_by_rule
from sessionspec.conformance.vectors.runner import VectorResult, run_vector, run_vectors

# The names other modules and projects import from here (the module was split; issue 14).
__all__ = ["ECHO_TOOL", "VECTORS_DIR", "Op", "Step", "Vector", "VectorResult", "contributor", "echo", "generate",
           "load_dir", "message", "record", "recorded_expectation", "reply", "rules_with_vectors", "run_vector",
           "run_vectors", "send", "text", "vectors_by_rule"]

HELP: Final = "generate the conformance vectors, or run a vector directory against an adapter command"


# --------------------------------------------------------------------------- CLI


GENERATE_HELP: Final = "write the conformance vectors (default: the committed vectors/ folder), or check them"
GENERATE_DESCRIPTION: Final = (
    "Generate every vector file from the model and the bundled real data (byte-stable canonical JSON). "
    "With --check nothing is written: it says whether the directory equals a fresh generation.")
RUN_HELP: Final = "run a vector directory or file against an adapter command"
RUN_DESCRIPTION: Final = (
    "Send each selected vector to the adapter (init, then each step) and match every answer against the vector's "
    "expectation patterns. Vectors that need an operation or feature the adapter does not declare, or that it "
    "answers 'unsupported', are skipped, never failed. docs/conformance.md sections 1 and 2.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = exit_codes(EXIT_CODES)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    gen = sub.add_parser("generate", help=GENERATE_HELP, description=GENERATE_DESCRIPTION, epilog=exit_codes(EXIT_CODES),
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    gen.add_argument("--out", default=None, metavar="DIR", help="output directory (default: the committed vectors/)")
    gen.add_argument("--check", action="store_true",
                     help="do not write; exit 1 if the directory differs from a fresh generation (default: write)")
    add_verbosity_arguments(gen, quiet="no line on success", verbose="every file written or checked")
    runner = sub.add_parser("run", help=RUN_HELP, description=RUN_DESCRIPTION, epilog=exit_codes(EXIT_CODES),
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    runner.add_argument("directory", metavar="PATH", help="a directory of vector files, or one vector file (required)")
    runner.add_argument("--adapter", default=None, metavar="CMD",
                        help="the adapter command (default: the model itself, in this process)")
    add_verbosity_arguments(runner, quiet="the failures and the final line only",
                            verbose="every vector (passes, skips with their reason), every difference of a failure, "
                                    "every rule of the per-rule table")
    runner.add_argument("--failures-only", dest="quiet", action="store_true", help="the same as -q")
    runner.add_argument("--format", choices=("text", "json"), default="text",
                        help="text (default) or json (one object, docs/schemas/vectors-run.v3.schema.json)")
    from sessionspec.conformance.vectors.floor import add_floor_arguments
    from sessionspec.conformance.vectors.run_cli import add_selection_arguments

    add_selection_arguments(runner)
    add_floor_arguments(runner, "vectors")
    add_driver_arguments(runner)
    runner.add_argument("--verdicts-only", action="store_true",
                        help="exit 0 when every verdict agrees, even if rejections name no rule (sessionspec-adapter/2; "
                             "default: rules must agree too)")
    from sessionspec.conformance.vectors.pack import add_pack_parser  # issue 20: the release artifact

    add_pack_parser(sub)


def run(args: argparse.Namespace) -> int:
    match args.action:
        case "generate":
            return _generate(Path(args.out) if args.out else VECTORS_DIR, args.check, quiet=args.quiet, verbose=args.verbose)
        case "run":
            return _run(Path(args.directory), args.adapter, args)
        case "pack":
            from sessionspec.conformance.vectors.pack import run_pack

            return run_pack(args)
        case _:
            print("sessionspec vectors: choose an action: generate, run or pack", file=sys.stderr)
            return 2


def _generate(directory: Path, check: bool, *, quiet: bool = False, verbose: bool = False) -> int:
    if not GROUNDTRUTH.is_dir():
        print(f"sessionspec vectors: generating needs a source checkout (no {GROUNDTRUTH})", file=sys.stderr)
        return 2
    files = generate()
    count = sum(len(json.loads(body).get("vectors", [])) for body in files.values())
    if check:
        stale = [name for name, body in files.items()
                 if not (directory / name).exists() or (directory / name).read_text(encoding="utf-8") != body]
        for name in files:
            if name in stale or verbose:
                print(f"{'stale' if name in stale else 'fresh'}: {directory / name}")
        if stale:
            print(f"{len(stale)} of {len(files)} files differ from a fresh generation: run sessionspec vectors generate")
        elif not quiet:
            print(f"{directory}: {len(files)} files, {count} vectors, equal to a fresh generation")
        return 1 if stale else 0
    directory.mkdir(parents=True, exist_ok=True)
    for name, body in files.items():
        (directory / name).write_text(body, encoding="utf-8")
        if verbose:
            print(f"wrote {directory / name}")
    if not quiet:
        print(f"wrote {len(files)} files, {count} vectors to {directory}")
    return 0


def _run(path: Path, command: str | None, args: argparse.Namespace) -> int:
    problem = driver_usage_error(args)
    if problem is not None:
        print(f"sessionspec vectors: {problem}", file=sys.stderr)
        return 2
    from sessionspec.conformance.vectors.run_cli import run as run_selected

    return run_selected(path, command, args)
