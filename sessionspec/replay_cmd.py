"""``sessionspec replay`` on the command line: read the log as ``check`` reads it, up to where it stops being a
valid loop log (sessionspec/replay_read.py), rebuild its requests (sessionspec/replay.py) and write them as text,
JSON or a page (sessionspec/replay_html.py); the exit code is ``check``'s for the log."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from sessionspec.check.checker import Verdict
from sessionspec.check.logfile import MAX_EVENTS
from sessionspec.economics import PRESETS
from sessionspec.logsource import ReadFailure
from sessionspec.model.rejected import Rejected
from sessionspec.options import add_dialect, add_verbosity, describe, positive_int, write_output
from sessionspec.replay import DEFAULT_INSTRUCTION, replay, report_to_json, report_to_text, stop_sentence
from sessionspec.replay_html import report_to_html
from sessionspec.replay_read import ReplaySource, read_for_replay

HELP = "reconstruct every request of a session log from the log alone (text, json or html)"

EXIT_CODES = (
    (0, "the log is valid: every request is rebuilt"),
    (1, "check finds the log invalid: the requests before its first finding are rebuilt and shown, the point where the log "
        "stops being a valid loop log is marked"),
    (2, "a usage error, or the log cannot be read (check's words on stderr)"),
    (4, "check cannot decide the log (a limit of sessionspec, mixed dialect markers: --dialect decides, a replay script, "
        "a pre-A55 design): what can be rebuilt is shown; unknown is not a pass"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    describe(parser, exit_codes=EXIT_CODES, see="docs/replay.md")
    parser.add_argument("log", metavar="LOG",
                        help="session log: .jsonl or .jsonl.zst, or - for stdin; read exactly as `sessionspec check` reads it")
    parser.add_argument("--format", choices=("text", "json", "html"), default="text",
                        help="text: one block per request (its header, what changed, each message on a line); json: one object, "
                             "the requests in the ground truth's field names (docs/schemas/replay.v2.schema.json); html: one "
                             "self-contained page with a summary, the token chart, the timeline and every request")
    parser.add_argument("--request", type=positive_int, metavar="N", help="only request N (1-based, dispatch order; default: all)")
    parser.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout (default: stdout; missing directories are created)")
    add_dialect(parser, default=None, help="force the log's dialect instead of detecting it as check does "
                                           "(FMT-10; DIA-8: D08 has no session prefix; default: detect)")
    parser.add_argument("--seed-length", type=int, metavar="N",
                        help="events before N belong to a seed (default: what check reads: the session header's seedLength, "
                             "the sessions.json sidecar, a D08 session/end-seed)")
    parser.add_argument("--max-events", type=positive_int, default=MAX_EVENTS, metavar="N",
                        help="stop reading after N events, as check does: the replay is undecided, exit 4")
    parser.add_argument("--economics", action="store_true",
                        help="text and json: add input and cache-hit tokens per request and the first differing block "
                             "(the page always shows them)")
    parser.add_argument("--cache-model", choices=sorted(PRESETS), default="neutral",
                        help="the provider cache model that meters cache hits (docs/economics.md)")
    parser.add_argument("--context-window", type=positive_int, metavar="N",
                        help="html: draw the routed model's context window, in tokens (default: none; the log does not record it, CMP-8)")
    parser.add_argument("--instruction-file", metavar="FILE",
                        help="compaction instruction text for summariser requests (an opaque, unlogged parameter; default: a placeholder)")
    add_verbosity(parser, quiet="say nothing on stderr about what check finds (the exit code still says it)",
                  verbose="text: every message in full instead of its first 160 characters")


def _fail(message: str, code: int) -> int:
    print(f"sessionspec replay: {message}", file=sys.stderr)
    return code


def _verdict_note(source: ReplaySource, requests: int) -> str | None:
    """What check finds, once on stderr: why the replay stops where it does, or why it is not decided."""
    report = source.report
    if report.verdict is Verdict.VALID:
        return None
    if source.stop is not None:
        return (f"check finds this log {report.verdict.value}: {source.stop.text}; the {requests} request(s) before it are rebuilt "
                f"(exit {source.exit_code})")
    return f"check finds this log unknown ({report.reason}); its {requests} request(s) are rebuilt, but not decided (exit 4)"


def run(args: argparse.Namespace) -> int:
    if args.seed_length is not None and args.seed_length < 0:
        return _fail("--seed-length must be 0 or more", 2)
    instruction = DEFAULT_INSTRUCTION
    if args.instruction_file is not None:
        try:
            instruction = Path(args.instruction_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as problem:
            return _fail(f"--instruction-file {args.instruction_file}: cannot read: {getattr(problem, 'strerror', None) or problem}", 2)
    source = read_for_replay(args.log, dialect=args.dialect, max_events=args.max_events)
    if isinstance(source, ReadFailure):
        return _fail(source.message, source.exit_code)
    seed = args.seed_length if args.seed_length is not None else source.first_live_seq
    report = replay(source.events, dialect=source.dialect, first_live_seq=seed, instruction=instruction,
                    cache_model=PRESETS[args.cache_model] if args.economics else None, dialect_source=source.dialect_source.value)
    if isinstance(report, Rejected):  # the events before check's first finding hold none; a bug if reached
        line = source.line_of(report.seq)
        return _fail(f"{source.name}:{'?' if line is None else line}: {report}", 1)
    report = replace(report, verdict=source.report.verdict.value, stop=source.stop)
    rebuilt = len(report.requests)
    if args.request is not None:
        if args.request > rebuilt:
            stopped = f"; {stop_sentence(report)}" if report.stop is not None else ""
            return _fail(f"--request {args.request} out of range (the log has {rebuilt} request(s){stopped})", 2)
        report = replace(report, requests=(report.requests[args.request - 1],), rebuilt=rebuilt)
    note = _verdict_note(source, rebuilt)
    if note is not None and not args.quiet:
        print(f"sessionspec replay: {note}", file=sys.stderr)
    match args.format:
        case "json":
            output = json.dumps(report_to_json(report), ensure_ascii=False, indent=1) + "\n"
        case "html":
            output = report_to_html(report, context_window=args.context_window, cache_model=PRESETS[args.cache_model])
        case _:
            output = report_to_text(report, full=args.verbose)
    written = write_output(output, args.out, "sessionspec replay")
    return written if written else source.exit_code
