"""``sessionspec conform``'s command line: random or exhaustive traces against an adapter, what it found
printed readably (report.py), as text or ``--format json`` (docs/schemas/conform.v3.schema.json), with
``--expect`` for divergences known to happen and a floor under what must run (``--min-run``).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, Final

from sessionspec.conformance.adapter.protocol import AdapterError
from sessionspec.conformance.conform.coverage import Coverage
from sessionspec.conformance.conform.decisions import decision_lines, decisions_taken
from sessionspec.conformance.conform.outcome import Divergence, Tally
from sessionspec.conformance.conform.report import (
    crash_lines,
    divergence_lines,
    expected_lines,
    op_text,
    rule_sentence,
    trace_lines,
)
from sessionspec.conformance.conform.search import DEFAULT_EXAMPLES, run_conform
from sessionspec.conformance.vectors.cli_words import add_driver_arguments, driver_usage_error, exit_codes
from sessionspec.conformance.vectors.diff import elide
from sessionspec.conformance.vectors.expectations import Expectations, ExpectationsError, load_expectations
from sessionspec.conformance.vectors.floor import Floor, add_floor_arguments, floor_of
from sessionspec.conformance.vectors.format import FORMAT, PlainJson, file_text

HELP: Final = "drive an adapter with generated operation traces and report the first divergence from the model"
CONFORM_FORMAT: Final = "sessionspec-conform/3"
EXIT_CODES: Final = (
    (0, "no unexpected divergence, no crash, and the floor met (--min-run, --fail-on-skip)"),
    (1, "a divergence --expect does not list, an adapter crash, or a run below the floor"),
    (2, "a usage error, or an adapter that fails at start-up (hello)"),
    (3, "a bug in sessionspec itself (no adapter behaviour reaches it)"),
    (130, "interrupted (Ctrl-C)"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = exit_codes(EXIT_CODES) + "\n\ndocs/conformance.md section 4"
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--adapter", required=True, metavar="CMD", help="the adapter command to test (required)")
    parser.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES, metavar="N", help=f"generated traces to run (default {DEFAULT_EXAMPLES})")
    parser.add_argument("--seed", type=int, default=None, metavar="S", help="a random seed (default: derandomized, reproducible)")
    parser.add_argument("--out", default=None, metavar="FILE",
                        help="write the shrunk divergence as a replayable vector file here (default: not written; "
                             "missing directories are created)")
    parser.add_argument("--no-progress", action="store_true", help="no progress lines on stderr (default: a line every 2 s)")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="failures and the final line only, no progress (default: the counts, the coverage and the "
                             "per-rule table too)")
    parser.add_argument("--failures-only", action="store_true", help="the same as -q")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="every difference of a divergence (default: the first 8), every expected divergence in "
                             "full, every rule of the per-rule table")
    parser.add_argument("--exhaustive", action="store_true",
                        help="run every trace of up to --depth operations over the small alphabet of docs/conformance.md "
                             "section 4.1 instead of random traces (default: random)")
    parser.add_argument("--depth", type=int, default=2, metavar="K",
                        help="with --exhaustive: the longest trace, in operations (default 2)")
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="with --exhaustive: adapters run in parallel (default: the CPU count, at most 4)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text (default) or json (one object, docs/schemas/conform.v3.schema.json)")
    parser.add_argument("--expect", default=None, metavar="FILE",
                        help="divergences expected, one 'conform/SIGNATURE reason' per line (or JSON; the 'expect with:' "
                             "line of a divergence): they are recorded and the search goes on (default: none)")
    parser.add_argument("--no-decisions", action="store_true",
                        help="do not count the model's decisions the run reaches (default: counted, the model runs "
                             "instrumented: slower)")
    add_floor_arguments(parser, "traces")
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
    args.quiet = args.quiet or args.failures_only
    progress = None if args.no_progress or args.quiet else sys.stderr
    if args.exhaustive:
        return _run_exhaustive(args, expectations, progress)
    coverage = Coverage()
    tally = Tally()
    counting: AbstractContextManager[dict[str, Any] | None] = nullcontext(None) if args.no_decisions else decisions_taken()
    try:
        with counting as decisions:
            divergence = run_conform(args.adapter, examples=args.examples, seed=args.seed, timeout=args.timeout,
                                     max_answer=args.max_answer, coverage=coverage, progress=progress, tally=tally,
                                     expectations=expectations)
    except ModuleNotFoundError as missing:
        print(f"sessionspec conform: needs the {missing.name} package (pip install hypothesis)", file=sys.stderr)
        return 2
    except AdapterError as failed:
        print(f"sessionspec conform: adapter failure: {failed}", file=sys.stderr)
        return 2
    return _finish(args, divergence, tally, coverage=coverage, agent=None,
                   scope={"mode": "random", "examples": args.examples, "seed": args.seed}, decisions=decisions)


def _run_exhaustive(args: argparse.Namespace, expectations: Expectations | None, progress: Any) -> int:
    import os

    from sessionspec.conformance.conform.exhaustive import report, run_exhaustive

    if not 1 <= args.depth <= 6:
        print("sessionspec conform: --depth must be between 1 and 6", file=sys.stderr)
        return 2
    jobs = args.jobs if args.jobs is not None else min(os.cpu_count() or 1, 4)
    if jobs < 1:
        print("sessionspec conform: --jobs must be at least 1", file=sys.stderr)
        return 2
    tally = Tally()
    try:
        result = run_exhaustive(args.adapter, depth=args.depth, jobs=jobs, timeout=args.timeout,
                                max_answer=args.max_answer, progress=progress, tally=tally, expectations=expectations)
    except AdapterError as failed:
        print(f"sessionspec conform: adapter failure: {failed}", file=sys.stderr)
        return 2
    if args.format == "text" and not args.quiet:
        report(result)
    return _finish(args, result.divergence, tally, coverage=None, agent=result.agent,
                   scope={"mode": "exhaustive", "depth": args.depth, "traces": result.run})


def _floor_problem(floor: Floor, tally: Tally, requested: int | None) -> str | None:
    total = max(tally.total, requested or 0)
    return floor.problem(tally.run, total, tally.skipped, "traces")


def _finish(args: argparse.Namespace, divergence: Divergence | None, tally: Tally, *, coverage: Coverage | None,
            agent: str | None, scope: dict[str, Any], decisions: dict[str, Any] | None = None) -> int:
    """Print (text or JSON), write ``--out``; the exit code (EXIT_CODES)."""
    floor = floor_of(args)
    below = _floor_problem(floor, tally, scope.get("examples"))
    failed = divergence is not None or bool(tally.crashes) or below is not None
    status = "fail" if failed else ("xfail" if tally.expected else "pass")
    replay: str | None = None
    if divergence is not None and args.out:
        try:
            replay = _write_divergence(divergence, args.out, args.adapter)
        except OSError as failure:
            print(f"sessionspec conform: cannot write {args.out}: {failure}", file=sys.stderr)
            return 2
    if args.format == "json":
        document = conform_json(args.adapter, scope, status, tally, divergence, agent, replay, floor, below)
        if decisions is not None:
            document["decisions"] = decisions
        print(json.dumps(document, ensure_ascii=False))
        return 1 if failed else 0
    if divergence is not None:
        if agent is not None:
            print(f"initial agent: {agent}")
        print(f"DIVERGENCE ({divergence.rule}) at operation {divergence.index} of a {len(divergence.trace)}-operation trace")
        for line in divergence_lines(divergence, None if args.verbose else 8):
            print(f"    {line}")
        print("trace:")
        for line in trace_lines(divergence.initial, divergence.trace):
            print(f"    {line}")
    for crash in tally.crashes:
        for line in crash_lines(crash):
            print(line)
    if not args.quiet:
        for line in expected_lines(tally, args.verbose):
            print(line)
        if divergence is None and not tally.crashes and scope["mode"] == "random":
            print(f"no unexpected divergence in {tally.run} traces run ({tally.xfailed} diverged as expected)"
                  if tally.expected else f"no divergence in {tally.run} traces run")
        lines = tally.lines()
        for line in lines[1:]:
            print(line)
        for line in tally.rules.lines("traces", every=args.verbose):
            print(line)
        if coverage is not None:
            print(coverage.report())
        for line in decision_lines(decisions) if decisions is not None else ():
            print(line)
    if replay is not None:
        print(f"replay with: {replay}")
    if below is not None:
        print(f"FAIL: below the floor: {below}")
    print(tally.lines()[0])
    return 1 if failed else 0


def conform_json(adapter: str, scope: Mapping[str, Any], status: str, tally: Tally, divergence: Divergence | None,
                 agent: str | None, replay: str | None, floor: Floor, below: str | None) -> dict[str, Any]:
    """The ``--format json`` document (docs/schemas/conform.v3.schema.json)."""
    return {
        "format": CONFORM_FORMAT, "adapter": adapter, **scope, "status": status,
        "counts": {"passed": tally.passed, "failed": tally.failed, "xfailed": tally.xfailed, "skipped": tally.skipped,
                   "crashed": tally.crashed, "run": tally.run},
        "executed": {"operations": dict(sorted(tally.operations.items())), "shapes": dict(sorted(tally.shapes.items()))},
        "declared": tally.declared,
        **({"unknownDeclared": tally.unknown} if tally.unknown else {}),
        "degraded": bool(tally.dropped),
        "dropped": [{"needs": list(d.needs), "words": d.words, "op": d.op} for d in tally.dropped],
        "stopped": tally.stopped,
        "floor": {"rule": floor.describe(), "problem": below},
        "expected": [{"key": key, "reason": seen.reason, "count": seen.count, "first": _divergence_json(seen.first, None, None)}
                     for key, seen in sorted(tally.expected.items())],
        "crashes": [{"key": c.key, "message": c.message, "output": c.output, "initial": c.initial, "trace": list(c.trace)}
                    for c in tally.crashes],
        "rules": tally.rules.as_json(),
        "divergence": None if divergence is None else _divergence_json(divergence, agent, replay),
    }


def _divergence_json(divergence: Divergence, agent: str | None, replay: str | None) -> dict[str, Any]:
    return {"rule": divergence.rule, "ruleSentence": rule_sentence(divergence.rule), "signature": divergence.signature,
            "key": divergence.key, "index": divergence.index, "agent": agent, "op": elide(divergence.op),
            "sent": op_text(divergence.op), "mismatches": list(divergence.mismatches),
            "diffs": [d.as_json() for d in divergence.diffs], "initial": divergence.initial,
            "trace": list(divergence.trace), "replay": replay}


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
