"""``sessionspec conform``'s command line: random or exhaustive traces against an adapter, the divergence
printed readably (search.divergence_lines), as text or ``--format json``
(docs/schemas/conform.v2.schema.json), with ``--expect`` for divergences known to happen.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from sessionspec.conformance.adapter.protocol import AdapterError
from sessionspec.conformance.conform.coverage import Coverage
from sessionspec.conformance.conform.search import DEFAULT_EXAMPLES, Divergence, Tally, divergence_lines, run_conform
from sessionspec.conformance.vectors.build import recorded_expectation
from sessionspec.conformance.vectors.command import add_driver_arguments, driver_usage_error
from sessionspec.conformance.vectors.diff import diff
from sessionspec.conformance.vectors.expectations import Expectations, ExpectationsError, load_expectations
from sessionspec.conformance.vectors.format import FORMAT, PlainJson, file_text

HELP: Final = "drive an adapter with generated operation traces and report the first divergence from the model"
CONFORM_FORMAT: Final = "sessionspec-conform/2"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--adapter", required=True, metavar="CMD", help="the adapter command to test")
    parser.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES, metavar="N", help=f"generated traces (default {DEFAULT_EXAMPLES})")
    parser.add_argument("--seed", type=int, default=None, metavar="S", help="a random seed (default: derandomized, reproducible)")
    parser.add_argument("--out", default=None, metavar="FILE",
                        help="write the shrunk divergence as a replayable vector file here (missing directories are created)")
    parser.add_argument("--no-progress", action="store_true", help="no progress lines on stderr (as check --no-progress)")
    parser.add_argument("--quiet", "-q", dest="no_progress", action="store_true", help=argparse.SUPPRESS)  # the old spelling
    parser.add_argument("--exhaustive", action="store_true",
                        help="run every trace of up to --depth operations over the small alphabet of docs/conformance.md "
                             "section 4.1 instead of random traces")
    parser.add_argument("--depth", type=int, default=2, metavar="K",
                        help="with --exhaustive: the longest trace, in operations (default 2)")
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="with --exhaustive: adapters run in parallel (default: the CPU count, at most 4)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text (default) or json (one object, docs/schemas/conform.v2.schema.json)")
    parser.add_argument("--expect", default=None, metavar="FILE",
                        help="divergences expected, one 'conform/RULE reason' per line (or JSON): a divergence whose "
                             "rule is listed exits 0 (xfail)")
    parser.add_argument("--verbose", "-v", action="store_true", help="every difference of a divergence, not the first 8")
    add_driver_arguments(parser)


def run(args: argparse.Namespace) -> int:
    if args.examples < 1:
        print("sessionspec conform: --examples must be at least 1", file=sys.stderr)
        return 2
    problem = driver_usage_error(args)
    if problem is not None:
        print(f"sessionspec conform: {problem}", file=sys.stderr)
        return 2
    try:
        expectations = load_expectations(args.expect) if args.expect else None
    except ExpectationsError as bad:
        print(f"sessionspec conform: {bad}", file=sys.stderr)
        return 2
    if args.exhaustive:
        return _run_exhaustive(args, expectations)
    coverage = Coverage()
    tally = Tally()
    try:
        divergence = run_conform(args.adapter, examples=args.examples, seed=args.seed, timeout=args.timeout,
                                 max_answer=args.max_answer, coverage=coverage,
                                 progress=None if args.no_progress else sys.stderr, tally=tally)
    except ModuleNotFoundError as missing:
        print(f"sessionspec conform: needs the {missing.name} package (pip install hypothesis)", file=sys.stderr)
        return 2
    except AdapterError as failed:
        print(f"sessionspec conform: adapter failure: {failed}", file=sys.stderr)
        return 2
    return _finish(args, divergence, expectations, coverage=coverage, agent=None,
                   scope={"mode": "random", "examples": args.examples, "seed": args.seed}, tally=tally)


def _run_exhaustive(args: argparse.Namespace, expectations: Expectations | None) -> int:
    import os

    from sessionspec.conformance.conform.exhaustive import report, run_exhaustive

    if not 1 <= args.depth <= 6:
        print("sessionspec conform: --depth must be between 1 and 6", file=sys.stderr)
        return 2
    jobs = args.jobs if args.jobs is not None else min(os.cpu_count() or 1, 4)
    if jobs < 1:
        print("sessionspec conform: --jobs must be at least 1", file=sys.stderr)
        return 2
    try:
        result = run_exhaustive(args.adapter, depth=args.depth, jobs=jobs, timeout=args.timeout,
                                max_answer=args.max_answer, progress=None if args.no_progress else sys.stderr)
    except AdapterError as failed:
        print(f"sessionspec conform: adapter failure: {failed}", file=sys.stderr)
        return 2
    if args.format == "text":
        report(result)
    return _finish(args, result.divergence, expectations, coverage=None, agent=result.agent,
                   scope={"mode": "exhaustive", "depth": args.depth, "traces": result.run})


def _finish(args: argparse.Namespace, divergence: Divergence | None, expectations: Expectations | None, *,
            coverage: Coverage | None, agent: str | None, scope: dict[str, Any], tally: Tally | None = None) -> int:
    """Print (text or JSON), write ``--out``; exit 0 (no divergence, or one ``--expect`` lists), 1 (a
    divergence), 2 (``--out`` not writable)."""
    ident = None if divergence is None else f"conform/{divergence.rule}"
    reason = None if ident is None or expectations is None else expectations.reason_for(ident)
    status = "pass" if divergence is None else ("xfail" if reason is not None else "fail")
    replay: str | None = None
    if divergence is not None and args.out:
        try:
            replay = _write_divergence(divergence, args.out, args.adapter)
        except OSError as failed:
            print(f"sessionspec conform: cannot write {args.out}: {failed}", file=sys.stderr)
            return 2
    if args.format == "json":
        print(json.dumps({"format": CONFORM_FORMAT, "adapter": args.adapter, **scope, "status": status,
                          "expected": reason, "divergence": None if divergence is None else {
                              "rule": divergence.rule, "index": divergence.index, "agent": agent,
                              "mismatches": list(divergence.mismatches),
                              "diffs": [d.as_json() for d in diff(recorded_expectation(divergence.expected), divergence.actual)],
                              "initial": divergence.initial, "trace": list(divergence.trace), "replay": replay}},
                         ensure_ascii=False))
        return 1 if status == "fail" else 0
    if divergence is None:
        if scope["mode"] == "random":
            print(f"no divergence in {args.examples} generated traces")
    else:
        if agent is not None:
            print(f"initial agent: {agent}")
        print(f"{'XFAIL' if reason else 'DIVERGENCE'} ({divergence.rule}) at operation {divergence.index} of a "
              f"{len(divergence.trace)}-operation trace" + (f": expected ({reason})" if reason else ""))
        for line in divergence_lines(divergence, None if args.verbose else 8):
            print(f"    {line}")
        print("trace:")
        print("    " + json.dumps({"op": "init", **divergence.initial}, sort_keys=True, ensure_ascii=False))
        for op in divergence.trace:
            print("    " + json.dumps(op, sort_keys=True, ensure_ascii=False))
    for line in tally.lines() if tally is not None else []:
        print(line)
    if coverage is not None:
        print(coverage.report())
    if replay is not None:
        print(f"replay with: {replay}")
    return 1 if status == "fail" else 0


def _write_divergence(divergence: Divergence, out: str, adapter: str) -> str:
    """Write the divergence as a one-vector file at ``out`` (its directory created); the shell command that
    replays it, exactly as it runs (quoted for a POSIX shell)."""
    document: Mapping[str, PlainJson] = {"format": FORMAT, "registry": _digest(), "group": "conform",
                                         "vectors": [divergence.vector().to_json()]}
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(file_text(document), encoding="utf-8")
    return f"sessionspec vectors run {shlex.quote(out)} --adapter {shlex.quote(adapter)}"


def _digest() -> str:
    from sessionspec.spec.registry import registry_digest

    return registry_digest()
