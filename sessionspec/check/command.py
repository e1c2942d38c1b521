"""``sessionspec check`` on the command line: arguments, workers, output.

The per-file function is :func:`sessionspec.check.checker.check_path` and the
summary is the fold :class:`sessionspec.check.summary.Summary`, the same two
functions :mod:`sessionspec.api` offers and ``--dask`` distributes, so every
way of running a check takes one code path.  Reports are written in input
order; see ``docs/check.md`` for the formats and the exit codes.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from typing import BinaryIO, Final, TextIO, cast

from sessionspec.check import output
from sessionspec.check.checker import (
    EXIT_CODES,
    EXIT_PRECEDENCE,
    FileReport,
    Summary,
    check_path,
    sample_paths,
)
from sessionspec.check.config import ConfigError, Exclusion, exclusion, load_config
from sessionspec.check.deployment_file import load_deployment
from sessionspec.check.junit import JunitDocument
from sessionspec.check.logfile import MAX_EVENTS, STDIN
from sessionspec.check.output import FORMATS, RecordSink
from sessionspec.check.output import json_line as json_line
from sessionspec.check.paths import LogPath, Unlistable, escape_text, iter_log_paths
from sessionspec.check.sarif import SarifDocument
from sessionspec.check.selection import Selection, SelectorError, parse_selectors
from sessionspec.check.task import Task, available_cpus, check_task, selected
from sessionspec.check.undecided import not_decided
from sessionspec.options import add_dialect, add_verbosity, describe, package_version, positive_int
from sessionspec.progress import BAR_CELLS, CountingReader, ProgressBar, bar_text, on_terminal
from sessionspec.workers import worker_context

HELP: Final = "check session-log files (.jsonl, .jsonl.zst, directories, - for stdin) and give a verdict per file"

# A single file at least this large gets a bar of the bytes read (smaller ones take well under a second).
BYTES_BAR_MIN: Final = 4 * 1024 * 1024


def exit_code_text() -> str:
    """The exit-code table for ``--help`` (the same rows as docs/check.md)."""
    rows = "\n".join(f"  {code}  {meaning}" for code, meaning in EXIT_CODES)
    order = ", ".join(str(code) for code in EXIT_PRECEDENCE)
    return f"exit codes:\n{rows}\nwhen several apply: {order} (the first wins)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    describe(parser, exit_codes=EXIT_CODES, see="docs/check.md",
             extra=f"when several apply: {', '.join(str(code) for code in EXIT_PRECEDENCE)} (the first wins)")
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="log files or directories (recursive), - for stdin (default: the bundled samples)")
    add_dialect(parser, default=None, help="force a dialect instead of detecting it per file (FMT-10; default: detect)")  # one spelling: sessionspec/options.py
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="text; json (JSON Lines, one object per file, then a summary; docs/schemas/check.v4.schema.json); "
                             "github (GitHub Actions annotations on file and line); sarif (one SARIF 2.1.0 log, for code scanning); "
                             "junit (one JUnit XML report)")
    parser.add_argument("--select", action="append", default=[], metavar="RULE",
                        help="report only these rules: IDs (SURF-3), areas (SURF, Q) or ALL, comma-separated or repeated "
                             "(default: [tool.sessionspec] select, else ALL)")
    parser.add_argument("--ignore", action="append", default=[], metavar="RULE",
                        help="do not report these rules (the most specific of --select and --ignore wins); the verdict is "
                             "decided on the findings reported (default: [tool.sessionspec] ignore, else none)")
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                        help="leave out the files and directories a directory walk finds that match (*.replay.jsonl, ralph-loop, "
                             "tests/data/**/snapshots); repeatable (default: [tool.sessionspec] exclude, else none)")
    parser.add_argument("--config", metavar="FILE",
                        help="read [tool.sessionspec] from FILE (default: the nearest pyproject.toml upwards that has the table)")
    parser.add_argument("--isolated", action="store_true", help="read no configuration file")
    add_verbosity(parser, quiet="text: omit the verdict lines of valid files; no progress bar",
                  verbose="text and github: show every knock-on finding on its own line instead of grouped under its cause; "
                          "text: under each verdict, the rules this file's check could not decide and why; after the summary, "
                          "the rules the run could not decide (no --deployment; request-only)")
    parser.add_argument("-j", "--jobs", type=positive_int, default=1, metavar="N",
                        help="check files in N worker processes (at most the CPUs available); output order stays the input order")
    parser.add_argument("--max-events", type=positive_int, default=MAX_EVENTS, metavar="N",
                        help="stop reading a file after N events: the file is unknown (a limit) unless already invalid")
    parser.add_argument("--dask", metavar="SCHEDULER",
                        help="check on a Dask cluster: a scheduler address (tcp://host:8786), 'local' (a local cluster of --jobs worker "
                             "processes), or 'processes'/'threads'/'synchronous'; PATHs may be fsspec URL globs "
                             "(needs sessionspec[dask]; default: no cluster)")
    parser.add_argument("--strict-quirks", action="store_true",
                        help="report the quirks of the real code a log shows (spec/rulebook.md section 17: Q-4, Q-17, Q-29), and the turns "
                             "the writer's own invariant guard ended (code INVARIANT), as findings instead of notes")
    parser.add_argument("--deployment", metavar="FILE",
                        help="a deployment file (JSON, docs/schemas/deployment.v1.schema.json): the compaction and prune configuration "
                             "and the models' context windows, which a log does not record; with it, whether compaction had to run at a "
                             "post-step (CMP-6; D08 pre-step, DIA-6) or after a context overflow (CMP-7; D08 inside the failed step, DIA-7), ran below its "
                             "threshold (CMP-8), and whether "
                             "prunes kept the configured head and tail (PRN-3, PRN-4) are decided too (default: none; those rules are listed "
                             "as not decided)")
    parser.add_argument("--no-progress", action="store_true",
                        help="never draw the progress bar on stderr (drawn only on a terminal: 5 files or more, or one file of 4 MiB or more)")


def report_line(report: FileReport, fmt: str, quiet: bool = False, verbose: bool = False) -> str:
    """What one report writes in a streamed format (sessionspec/check/output.py)."""
    return output.report_line(report, fmt, quiet, verbose)


def summary_line(summary: Summary, fmt: str, deployment_given: bool = False) -> str:
    """The summary line the command prints last (in json with the rules a run could not decide: those needing
    the deployment unless ``deployment_given``, and the request-only ones)."""
    return output.summary_line(summary, fmt, not_decided(deployment_given))


# --------------------------------------------------------------------------- progress

PROGRESS_MIN_FILES: Final = 5


def progress_line(done: int, total: int, invalid: int, cells: int = BAR_CELLS) -> str:
    """The bar's text over files: ``[#####.....] done/total files  NN%`` (and the invalid count)."""
    return bar_text(done, total, "files", f", {invalid} invalid" if invalid else "", cells)


def _progress_bar(paths: list[LogPath], enabled: bool) -> ProgressBar | None:
    """A bar when asked for, stderr is a terminal and there are many files."""
    if not enabled or len(paths) < PROGRESS_MIN_FILES or not on_terminal():
        return None
    return ProgressBar(stream=sys.stderr, total=len(paths))


def _bytes_bar(paths: list[LogPath], enabled: bool) -> tuple[str, ProgressBar] | None:
    """A bar of the bytes read when the run checks one large local file on a terminal."""
    if not enabled or len(paths) != 1 or not isinstance(paths[0], str) or paths[0] == STDIN or "://" in paths[0]:
        return None
    try:
        size = os.stat(paths[0]).st_size
    except OSError:
        return None
    if size < BYTES_BAR_MIN or not on_terminal():
        return None
    return paths[0], ProgressBar(stream=sys.stderr, total=size, unit="bytes")


def _check_watched(task: Task, path: str, bar: ProgressBar) -> FileReport:
    """One file checked in this process, its bytes counted into ``bar`` as they are read (each pass anew)."""
    passes = [0]

    def watch(handle: BinaryIO) -> BinaryIO:
        passes[0] += 1
        suffix = "" if passes[0] == 1 else f" (pass {passes[0]}: the dialect or the first live seq is known now)"
        return cast(BinaryIO, io.BufferedReader(CountingReader(handle, bar, suffix), buffer_size=1024 * 1024))

    report = check_path(path, task.forced, task.strict_quirks, task.max_events, watch=watch, deployment=task.deployment)
    bar.clear()
    return selected(report, task)


# --------------------------------------------------------------------------- running


def _reports(tasks: Iterable[Task], jobs: int, work: Callable[[Task], FileReport] = check_task) -> Iterator[FileReport]:
    """Reports in input order.  With ``jobs > 1`` files are checked in worker
    processes; ``map`` hands results back in submission order, so the output
    does not depend on which worker finishes first.  An executor, not a
    ``multiprocessing.Pool``: a worker that dies (killed, out of memory) breaks
    the executor, which says so, where a pool replaces the worker and waits for
    the lost file for ever."""
    if jobs <= 1:
        yield from map(work, tasks)
        return
    with ProcessPoolExecutor(max_workers=jobs, mp_context=worker_context()) as pool:
        yield from pool.map(work, tasks)


def _capped_jobs(requested: int) -> int:
    """--jobs capped at the CPUs: more processes than CPUs only add start-up
    and switching cost to a CPU-bound check."""
    cpus = available_cpus()
    if requested > cpus:
        print(f"sessionspec check: --jobs {requested} capped at {cpus}, the CPUs available", file=sys.stderr)
        return cpus
    return requested


def _settings(args: argparse.Namespace) -> tuple[Selection, Exclusion] | str:
    """The rules and files of the run: the command line's options, else the configuration's; or why not."""
    try:
        config = load_config(args.config, args.isolated)
        select = parse_selectors(args.select, "--select") if args.select else \
            parse_selectors(config.select or (), f"{config.path}: select")
        ignore = parse_selectors(args.ignore, "--ignore") if args.ignore else \
            parse_selectors(config.ignore or (), f"{config.path}: ignore")
    except (ConfigError, SelectorError) as problem:
        return str(problem)
    return Selection(select=select, ignore=ignore), exclusion(args.exclude, config)


def _walked(paths: Sequence[str], excluded: Exclusion, left_out: list[int]) -> Iterator[LogPath]:
    """The files to check: each argument as given or walked, less what a walk found that ``excluded`` matches
    (a file named on the command line is always checked, as in ruff), counted in ``left_out[0]``."""
    for path in paths:
        for item in iter_log_paths([path]):
            if excluded and item != path and excluded.excludes(item.path if isinstance(item, Unlistable) else item):
                left_out[0] += 1
                continue
            yield item


def _nothing_to_check(paths: Sequence[str], left_out: int) -> int:
    """Exit 2 when no file is left to check, saying why: none found, or every one found left out."""
    why = (f": the {left_out} found {'are' if left_out != 1 else 'is'} all left out by --exclude or the configuration's "
           "exclude" if left_out else "")
    print(f"sessionspec check: no session-log files (*.jsonl, *.jsonl.zst) under {escape_text(' '.join(paths))}{why}", file=sys.stderr)
    return 2


def _unknown_hint(summary: Summary) -> None:
    """After a run with unknown files: how to leave out files that are not loop logs."""
    if summary.unknown:
        print(f"sessionspec check: {summary.unknown} file{'s are' if summary.unknown != 1 else ' is'} unknown (exit 4: not decided, "
              "so not a pass); files that are not loop logs (replay scripts) can be left out with --exclude GLOB or "
              "exclude = [...] in [tool.sessionspec] (docs/check.md)", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    paths: list[str] = list(args.paths) or sample_paths()
    if not paths:
        print("sessionspec check: no paths given and no bundled samples found", file=sys.stderr)
        return 2
    if paths.count(STDIN) > 1:
        print("sessionspec check: - (stdin) may be given only once", file=sys.stderr)
        return 2
    settings = _settings(args)
    if isinstance(settings, str):
        print(f"sessionspec check: {escape_text(settings)}", file=sys.stderr)
        return 2
    selection, excluded = settings
    deployment = None if args.deployment is None else load_deployment(args.deployment)
    if isinstance(deployment, str):
        print(f"sessionspec check: --deployment {escape_text(deployment)}", file=sys.stderr)
        return 2
    template = Task(path="", forced=args.dialect, strict_quirks=args.strict_quirks, max_events=args.max_events, selection=selection,
                    deployment=deployment)
    document = _document(args.format)
    if args.dask is not None:
        return _run_dask(args, paths, template, excluded, document)
    # Workers cannot share the parent's stdin: a run that reads - stays in one process.
    jobs = 1 if STDIN in paths else _capped_jobs(args.jobs)
    out: TextIO = sys.stdout
    wants_bar = not args.no_progress and not args.quiet and on_terminal()
    # The bar needs the total, so the paths are listed first only when it is drawn.
    left_out = [0]
    log_paths: Iterable[LogPath] = list(_walked(paths, excluded, left_out)) if wants_bar else _walked(paths, excluded, left_out)
    bar = _progress_bar(log_paths, wants_bar) if isinstance(log_paths, list) else None
    one_large = _bytes_bar(log_paths, wants_bar) if isinstance(log_paths, list) else None
    if one_large is not None:
        reports: Iterable[FileReport] = [_check_watched(replace(template, path=one_large[0]), one_large[0], one_large[1])]
    else:
        reports = _reports((replace(template, path=path) for path in log_paths), jobs)
    summary = Summary()
    try:
        for report in reports:
            summary = summary.add(report)
            if bar is not None:
                bar.clear()
            if document is not None:
                document.add(report.to_json())
            else:
                out.write(report_line(report, args.format, args.quiet, args.verbose))
            if bar is not None:
                out.flush()
                bar.update(summary.files, f", {summary.invalid} invalid" if summary.invalid else "")
    except BrokenProcessPool:
        if bar is not None:
            bar.clear()
        out.flush()
        print(f"sessionspec check: a worker process ended abruptly (killed, or out of memory) after {summary.files} "
              f"file{'s' if summary.files != 1 else ''} had been reported; the run is incomplete: rerun with --jobs 1 "
              "to check the files in one process", file=sys.stderr)
        return 3
    if bar is not None:
        bar.clear()
    if summary.files == 0:
        return _nothing_to_check(paths, left_out[0])
    undecided = not_decided(template.deployment is not None)
    out.write(document.finish(output.summary_record(summary, undecided)) if document is not None
              else output.summary_line(summary, args.format, undecided, args.verbose))
    out.flush()
    if args.format == "text" and not args.quiet:
        _unknown_hint(summary)
    return summary.exit_code()


def _document(fmt: str) -> SarifDocument | JunitDocument | None:
    if fmt == "sarif":
        return SarifDocument(version=package_version())
    return JunitDocument() if fmt == "junit" else None


def _run_dask(args: argparse.Namespace, paths: list[str], template: Task, excluded: Exclusion,
              document: SarifDocument | JunitDocument | None) -> int:
    """``--dask``: the same run on a cluster; a SARIF or JUnit document is built from the records it streams."""
    from sessionspec.check.dask_run import expand_paths, run_dask  # the optional extra, imported only when asked for

    if excluded:
        found = expand_paths(paths)
        listed = [item for item in found if not (isinstance(item, str) and item not in paths and excluded.excludes(item))]
        if found and not listed:
            return _nothing_to_check(paths, len(found))
        paths = [item.path if isinstance(item, Unlistable) else item for item in listed]
    if document is None:
        return run_dask(args.dask, paths, template, args.format, args.quiet, args.jobs, sys.stdout)
    sink = RecordSink(document)
    code = run_dask(args.dask, paths, template, "json", args.quiet, args.jobs, cast(TextIO, sink))
    if sink.summary is not None:
        sys.stdout.write(document.finish(sink.summary))
        sys.stdout.flush()
    return code
