"""``sessionspec vectors run PATH``: the vectors against an adapter, as a person or a program reads them.

PATH is a vector directory or one vector file; ``--id``/``--group``/``--rule`` select (globs, repeatable;
the kinds combine with *and*), and a selection of no vector is a usage error (exit 2), never a pass.  Each
vector ends ``pass``, ``fail``, ``skip`` (the adapter lacks an operation or feature: never a failure),
``xfail``/``xpass`` (``--expect FILE``) or ``error`` (an operation answered as malformed).  Text output
shows each failure once, with the operation sent and an aligned diff; ``--format json`` is
docs/schemas/vectors-run.v2.schema.json.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import shlex
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from sessionspec.conformance.adapter.capabilities import Capabilities, unlock_ranking, unlock_summary
from sessionspec.conformance.adapter.protocol import AdapterError
from sessionspec.conformance.vectors.diff import elide
from sessionspec.conformance.vectors.expectations import Expectations, ExpectationsError, load_expectations
from sessionspec.conformance.vectors.files import load_path
from sessionspec.conformance.vectors.floor import Floor, floor_of
from sessionspec.conformance.vectors.format import FormatError
from sessionspec.conformance.vectors.rule_table import RuleTable
from sessionspec.conformance.vectors.runner import STATUSES, VectorResult, failure_lines, run_on, start_adapter

RUN_FORMAT: Final = "sessionspec-vectors-run/3"


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--id", dest="ids", action="append", default=None, metavar="GLOB",
                        help="run only the vectors whose id matches (repeatable; fnmatch globs: 'loop/prefix/*'; "
                             "default: every vector)")
    parser.add_argument("--group", dest="groups", action="append", default=None, metavar="NAME",
                        help="run only the vectors of this group (repeatable: loop, check, codec, ...; default: every group)")
    parser.add_argument("--rule", dest="rule_ids", action="append", default=None, metavar="RULE",
                        help="run only the vectors that name this rule (repeatable; a glob: 'PFX-*'; default: any rule)")
    parser.add_argument("--expect", default=None, metavar="FILE",
                        help="vectors expected to fail, one 'ID-or-glob [@SIGNATURE] reason' per line (or JSON): they "
                             "report xfail, xpass (exit 1) when they pass, and fail when they fail another way than "
                             "@SIGNATURE; an entry that matches no vector or only skipped ones is an error (exit 1) "
                             "(default: none)")


def select(documents: Sequence[Mapping[str, Any]], ids: Sequence[str] | None, groups: Sequence[str] | None,
           rule_ids: Sequence[str] | None) -> list[dict[str, Any]]:
    """The documents with only the selected vectors (documents left empty are dropped)."""
    def chosen(group: str, vector: Mapping[str, Any]) -> bool:
        return ((ids is None or any(fnmatch.fnmatchcase(vector["id"], g) for g in ids))
                and (groups is None or group in groups)
                and (rule_ids is None or any(fnmatch.fnmatchcase(r, g) for r in vector["rules"] for g in rule_ids)))

    out: list[dict[str, Any]] = []
    for document in documents:
        vectors = [v for v in document["vectors"] if chosen(str(document.get("group", "")), v)]
        if vectors:
            out.append({**document, "vectors": vectors})
    return out


def run(path: Path, command: str | None, args: argparse.Namespace) -> int:
    """The ``vectors run`` command (its driver bounds already validated)."""
    if not path.exists():
        print(f"sessionspec vectors: no such file or directory: {path}", file=sys.stderr)
        return 2
    try:
        every = load_path(path)
    except (FormatError, json.JSONDecodeError, UnicodeDecodeError, OSError) as bad:
        print(f"sessionspec vectors: {bad}", file=sys.stderr)
        return 2
    try:
        expectations = load_expectations(args.expect) if args.expect else None
    except ExpectationsError as bad:
        print(f"sessionspec vectors: {bad}", file=sys.stderr)
        return 2
    documents = select(every, args.ids, args.groups, args.rule_ids)
    if not documents:
        print(f"sessionspec vectors: no vector selected in {path} (check --id, --group, --rule)", file=sys.stderr)
        return 2
    try:
        adapter = start_adapter(command, timeout=args.timeout, max_answer=args.max_answer)
        try:
            results = run_on(adapter, documents, expectations=expectations)
        finally:
            adapter.close()
    except AdapterError as failed:
        print(f"sessionspec vectors: adapter failure: {failed}", file=sys.stderr)
        return 2
    stale = expectation_problems(expectations, [v["id"] for d in every for v in d["vectors"]], results)
    ran = [r for r in results if not r.skipped]
    below = floor_of(args).problem(len(ran), len(results), len(results) - len(ran), "vectors")
    failing = [r for r in results
               if r.counts_as_failure and not (args.verdicts_only and r.status == "fail" and r.verdicts_agree)]
    code = 1 if failing or stale or below else 0
    if args.format == "json":
        print(json.dumps(run_json(command, adapter.capabilities, results, stale=stale, floor=floor_of(args), below=below),
                         ensure_ascii=False))
        return code
    _print_text(path, command, adapter.capabilities, results, ran, verbose=args.verbose, quiet=args.quiet,
                expectations=expectations)
    for line in stale:
        print(f"EXPECTATIONS: {line}")
    if below is not None:
        print(f"FAIL: below the floor: {below}")
    print(summary_line(results))
    return code


def expectation_problems(expectations: Expectations | None, every_id: Sequence[str],
                         results: Sequence[VectorResult]) -> list[str]:
    """Entries of the expectations file that expect nothing (issue 45, part 2): one that matches no vector
    at all (a typo, a vector that is gone), or only vectors that were skipped (they cannot fail).  Entries
    that match only vectors left out by --id/--group/--rule, and conform's entries, are not judged here."""
    if expectations is None:
        return []
    problems: list[str] = []
    loaded = {i.split("/", 1)[0] for i in every_id}  # an entry for a file not loaded is not judged
    for entry in expectations.entries:
        head = entry.pattern.split("/", 1)[0]
        if entry.pattern.startswith("conform/") or (not any(c in head for c in "*?[") and head not in loaded):
            continue
        if not any(fnmatch.fnmatchcase(i, entry.pattern) for i in every_id):
            problems.append(f"{expectations.source}: {entry.pattern!r} matches no vector")
            continue
        matched = [r for r in results if fnmatch.fnmatchcase(r.vector_id, entry.pattern)]
        if matched and all(r.skipped for r in matched):
            problems.append(f"{expectations.source}: {entry.pattern!r} matches only skipped vectors ({len(matched)}): "
                            "it expects nothing of this adapter")
    return problems


def run_json(command: str | None, capabilities: Capabilities, results: Sequence[VectorResult], *,
             stale: Sequence[str] = (), floor: Floor | None = None, below: str | None = None) -> dict[str, Any]:
    """The ``--format json`` document (docs/schemas/vectors-run.v3.schema.json)."""
    counts = Counter(r.status for r in results)
    return {
        "format": RUN_FORMAT,
        "adapter": command,
        "capabilities": {"operations": None if capabilities.operations is None else sorted(capabilities.operations),
                         "features": None if capabilities.features is None else sorted(capabilities.features),
                         **({"unknown": capabilities.unknown()} if capabilities.unknown() else {})},
        "selected": len(results),
        "counts": {status: counts.get(status, 0) for status in STATUSES},
        "verdictAgreement": sum(1 for r in results if r.verdicts_agree),
        "ruleAgreement": sum(1 for r in results if r.passed),
        "unlock": [{"need": need, "alone": alone, "total": total}
                   for need, alone, total in unlock_ranking([r.skipped for r in results if r.skipped])],
        "floor": {"rule": (floor or Floor()).describe(), "problem": below},
        "expectationProblems": list(stale),
        "rules": rule_table(results).as_json(),
        "results": [{"id": r.vector_id, "group": r.group, "rules": list(r.rules), "status": r.status,
                     "skipped": list(r.skipped), "skipReason": r.skip_reason, "expected": r.expected,
                     "unpinned": r.unpinned, "breaks": list(r.breaks), "signature": r.signature,
                     "description": r.description,
                     **({"initial": elide(dict(r.initial))} if r.steps and r.initial is not None else {}),
                     "steps": [{"step": s.step, "sent": elide(dict(s.op)), "diffs": [d.as_json() for d in s.diffs]}
                               for s in r.steps],
                     "diffs": [{"step": s.step, "op": s.op.get("op"), **d.as_json()} for s in r.steps for d in s.diffs]}
                    for r in results],
    }


def rule_table(results: Sequence[VectorResult]) -> RuleTable:
    """Per rule, the vectors naming it that passed, failed, were skipped or failed as expected."""
    table = RuleTable()
    outcome = {"pass": "passed", "fail": "failed", "error": "failed", "xpass": "failed", "skip": "skipped",
               "xfail": "expected"}
    for r in results:
        table.add(r.rules, outcome[r.status])
    return table


def summary_line(results: Sequence[VectorResult]) -> str:
    """``13/266 vectors passed, 2 failed, 251 skipped`` (then the expected failures, when any)."""
    counts = Counter(r.status for r in results)
    line = (f"{counts['pass']}/{len(results)} vectors passed, {counts['fail'] + counts['error']} failed, "
            f"{counts['skip']} skipped")
    if counts["xfail"] or counts["xpass"]:
        line += f", {counts['xfail']} failed as expected, {counts['xpass']} passed unexpectedly"
    return line


def _print_text(path: Path, command: str | None, capabilities: Capabilities, results: Sequence[VectorResult],
                ran: Sequence[VectorResult], *, verbose: bool, quiet: bool, expectations: Expectations | None) -> None:
    if capabilities != Capabilities() and not quiet:
        print(f"adapter declares {capabilities.describe()}")
    if capabilities.unknown():
        print(f"UNKNOWN in hello (declares nothing; docs/conformance.md 1.1): {'; '.join(capabilities.unknown())}")
    for r in results:
        status = r.status
        if status in ("fail", "error") or (verbose and status == "xfail"):
            breaks = f" breaks {', '.join(r.breaks)}" if r.breaks else ""
            print(f"{status.upper()} {r.vector_id} [{', '.join(r.rules)}]{breaks}" + (f" expected: {r.expected}" if r.expected else ""))
            for line in failure_lines(r, None if verbose else 8):
                print(f"    {line}")
        elif status == "xpass":
            print(f"XPASS {r.vector_id}: listed in {expectations.source if expectations else '--expect'} "
                  f"({r.expected}) but passes: remove it from the file")
        elif verbose:
            shown = f" ({r.skip_reason})" if r.skip_reason else ""
            print(f"{status.upper()} {r.vector_id} [{', '.join(r.rules)}]{shown}")
    if quiet:
        return
    verdicts = sum(1 for r in ran if r.verdicts_agree)
    rules = sum(1 for r in ran if r.passed)
    unrun = f" (the {len(results) - len(ran)} skipped not counted)" if len(ran) < len(results) else ""
    print(f"verdict agreement: {verdicts}/{len(ran)} vectors; rule agreement: {rules}/{len(ran)} vectors{unrun}")
    for line in rule_table(results).lines("vectors", every=verbose):
        print(line)
    skipped = [r.skipped for r in results if r.skipped]
    if skipped:
        print(f"skipped for lack of: {unlock_summary(skipped)}")
    first = next((r for r in results if r.status in ("fail", "error")), None)
    if first is not None:
        adapter = f" --adapter {shlex.quote(command)}" if command is not None else ""
        print(f"rerun one: sessionspec vectors run {shlex.quote(str(path))} --id {shlex.quote(first.vector_id)}{adapter}")
