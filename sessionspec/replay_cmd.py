"""``sessionspec replay`` on the command line: read the log as ``check`` reads it
(sessionspec/logsource.py), rebuild its requests (sessionspec/replay.py) and
write them as text, JSON or a page (sessionspec/replay_html.py)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from sessionspec.check.checker import Verdict
from sessionspec.check.logfile import MAX_EVENTS
from sessionspec.economics import PRESETS
from sessionspec.logsource import ReadFailure, read_log
from sessionspec.model.rejected import Rejected
from sessionspec.options import add_dialect, positive_int, write_output
from sessionspec.replay import DEFAULT_INSTRUCTION, replay, report_to_json, report_to_text
from sessionspec.replay_html import report_to_html

HELP = "reconstruct every request of a session log from the log alone (text, json or html)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", metavar="LOG",
                        help="session log: .jsonl or .jsonl.zst, or - for stdin; read exactly as `sessionspec check` reads it")
    parser.add_argument("--format", choices=("text", "json", "html"), default="text")
    parser.add_argument("--request", type=int, metavar="N", help="only request N (1-based, dispatch order)")
    parser.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout")
    add_dialect(parser, default=None, help="force the log's dialect instead of detecting it as check does (FMT-10; DIA-8: d08 has no session prefix)")
    parser.add_argument("--seed-length", type=int, metavar="N",
                        help="events before N belong to a seed (default: what check reads: the session header's seedLength, "
                             "the sessions.json sidecar, a D08 session/end-seed)")
    parser.add_argument("--max-events", type=positive_int, default=MAX_EVENTS, metavar="N",
                        help=f"stop reading after N events, as check does: the replay is undecided, exit 4 (default {MAX_EVENTS})")
    parser.add_argument("--economics", action="store_true", help="add input/cache-hit tokens and the first differing block")
    parser.add_argument("--cache-model", choices=sorted(PRESETS), default="neutral", help="provider cache model for --economics")
    parser.add_argument("--context-window", type=int, metavar="N",
                        help="html: draw the routed model's context window (tokens; the log does not record it, CMP-8)")
    parser.add_argument("--instruction-file", metavar="FILE",
                        help="compaction instruction text for summariser requests (an opaque, unlogged parameter)")


def _fail(message: str, code: int) -> int:
    print(f"sessionspec replay: {message}", file=sys.stderr)
    return code


def run(args: argparse.Namespace) -> int:
    if args.context_window is not None and args.context_window <= 0:
        return _fail("--context-window must be a positive number of tokens", 2)
    if args.seed_length is not None and args.seed_length < 0:
        return _fail("--seed-length must be 0 or more", 2)
    instruction = DEFAULT_INSTRUCTION
    if args.instruction_file is not None:
        try:
            instruction = Path(args.instruction_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as problem:
            return _fail(f"--instruction-file {args.instruction_file}: cannot read: {getattr(problem, 'strerror', None) or problem}", 2)
    loaded = read_log(args.log, dialect=args.dialect, max_events=args.max_events)
    if isinstance(loaded, ReadFailure):
        return _fail(loaded.message, loaded.exit_code)
    if loaded.report.verdict is Verdict.INVALID and loaded.report.findings:
        print(f"sessionspec replay: note: check finds this log invalid ({loaded.report.findings[0].text(loaded.name)}); "
              "the requests below are rebuilt from the log as it is", file=sys.stderr)
    seed = args.seed_length if args.seed_length is not None else loaded.first_live_seq
    report = replay(loaded.events, dialect=loaded.dialect, first_live_seq=seed, instruction=instruction,
                    cache_model=PRESETS[args.cache_model] if args.economics else None, dialect_source=loaded.dialect_source.value)
    if isinstance(report, Rejected):
        line = loaded.line_of(report.seq)
        return _fail(f"{loaded.name}:{'?' if line is None else line}: {report}", 1)
    if args.request is not None:
        if not 1 <= args.request <= len(report.requests):
            return _fail(f"--request {args.request} out of range (the log has {len(report.requests)} request(s))", 2)
        report = replace(report, requests=(report.requests[args.request - 1],))
    match args.format:
        case "json":
            output = json.dumps(report_to_json(report), ensure_ascii=False, indent=1) + "\n"
        case "html":
            output = report_to_html(report, context_window=args.context_window)
        case _:
            output = report_to_text(report)
    return write_output(output, args.out, "sessionspec replay")
