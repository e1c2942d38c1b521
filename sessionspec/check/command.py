"""``sessionspec check`` on the command line: arguments, workers, output.

The per-file function is :func:`sessionspec.check.checker.check_path` and the
summary is the fold :class:`sessionspec.check.summary.Summary`, the same two
functions :mod:`sessionspec.api` offers and ``--dask`` distributes, so every
way of running a check takes one code path.  Reports are written in input
order; see ``docs/check.md`` for the formats and the exit codes.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Final, TextIO, final

from sessionspec.check.checker import (
    EXIT_CODES,
    EXIT_PRECEDENCE,
    FileReport,
    Summary,
    Verdict,
    check_location,
    sample_paths,
    unlistable_report,
)
from sessionspec.check.logfile import MAX_EVENTS, STDIN
from sessionspec.check.paths import LogPath, Unlistable, escape_text, iter_log_paths
from sessionspec.check.pickling import reduce_by_fields
from sessionspec.model.log import Dialect
from sessionspec.options import add_dialect

HELP: Final = "check session-log files (.jsonl, .jsonl.zst, directories, - for stdin) and give a verdict per file"


def exit_code_text() -> str:
    """The exit-code table for ``--help`` (the same rows as docs/check.md)."""
    rows = "\n".join(f"  {code}  {meaning}" for code, meaning in EXIT_CODES)
    order = ", ".join(str(code) for code in EXIT_PRECEDENCE)
    return f"exit codes:\n{rows}\nwhen several apply: {order} (the first wins)"


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, else the count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = exit_code_text() + "\n\nsee docs/check.md"
    parser.add_argument("paths", nargs="*", metavar="PATH", help="log files or directories (recursive), - for stdin; none: the bundled samples")
    add_dialect(parser, default=None, help="force a dialect instead of detecting it per file (FMT-10)")  # one spelling: sessionspec/options.py
    parser.add_argument("--format", choices=["text", "json"], default="text", help="text (default) or json (JSON Lines, one object per file, then a summary)")
    parser.add_argument("-q", "--quiet", action="store_true", help="text format: omit the verdict lines of valid files")
    parser.add_argument("-j", "--jobs", type=_positive_int, default=1, metavar="N",
                        help="check files in N worker processes (default 1, at most the CPUs available); output order stays the input order")
    parser.add_argument("--max-events", type=_positive_int, default=MAX_EVENTS, metavar="N",
                        help=f"stop reading a file after N events: the file is unknown (a limit) unless already invalid (default {MAX_EVENTS})")
    parser.add_argument("--dask", metavar="SCHEDULER",
                        help="check on a Dask cluster: a scheduler address (tcp://host:8786), 'local' (a local cluster of --jobs worker "
                             "processes), or 'processes'/'threads'/'synchronous'; PATHs may be fsspec URL globs (needs sessionspec[dask])")
    parser.add_argument("--strict-quirks", action="store_true",
                        help="report the quirks of the real code a log shows (spec/rulebook.md section 17: Q-4, Q-17, Q-29) as findings instead of notes")
    parser.add_argument("--no-progress", action="store_true", help="never draw the progress bar on stderr")


def report_line(report: FileReport, fmt: str, quiet: bool = False) -> str:
    """What one report writes: a JSON line, or its finding and verdict lines."""
    if fmt == "json":
        return json_line(report.to_json())
    lines = [finding.text(report.path) for finding in report.findings]
    if not (quiet and report.verdict is Verdict.VALID):
        lines.append(report.verdict_text())
    return "".join(line + "\n" for line in lines)


def json_line(value: dict[str, object]) -> str:
    """One JSON Lines record.  A path that is not UTF-8 (surrogate escapes)
    is written with ``\\udcNN`` escapes rather than failing to encode."""
    text = json.dumps(value, ensure_ascii=False)
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        text = json.dumps(value, ensure_ascii=True)
    return text + "\n"


def summary_line(summary: Summary, fmt: str) -> str:
    return json_line(summary.to_json()) if fmt == "json" else summary.text() + "\n"


# --------------------------------------------------------------------------- progress


PROGRESS_MIN_FILES: Final = 5
PROGRESS_BAR_CELLS: Final = 30
PROGRESS_INTERVAL_S: Final = 0.1


def progress_line(done: int, total: int, invalid: int, cells: int = PROGRESS_BAR_CELLS) -> str:
    """The bar's text: ``[#####.....] done/total files  NN%`` (and the invalid count)."""
    filled = cells * done // total if total else cells
    percent = 100 * done // total if total else 100
    bad = f", {invalid} invalid" if invalid else ""
    return f"[{'#' * filled}{'.' * (cells - filled)}] {done}/{total} files {percent:3d}%{bad}"


@final
@dataclass(slots=True, kw_only=True)
class ProgressBar:
    """A one-line bar redrawn in place with ``\\r`` on a terminal stream.

    Redraws at most every ``interval`` seconds (and always at the end), and
    is cleared before report lines are written so they never mix with it."""

    stream: TextIO
    total: int
    clock: Callable[[], float] = time.monotonic
    interval: float = PROGRESS_INTERVAL_S
    _shown: int = 0
    _last: float | None = None

    def update(self, done: int, invalid: int) -> None:
        now = self.clock()
        if done < self.total and self._last is not None and now - self._last < self.interval:
            return
        self._last = now
        text = progress_line(done, self.total, invalid)
        self.stream.write("\r" + text)
        self.stream.flush()
        self._shown = len(text)

    def clear(self) -> None:
        if self._shown:
            self.stream.write("\r" + " " * self._shown + "\r")
            self.stream.flush()
            self._shown = 0


def _progress_bar(paths: list[LogPath], enabled: bool) -> ProgressBar | None:
    """A bar when asked for, stderr is a terminal and there are many files."""
    if not enabled or len(paths) < PROGRESS_MIN_FILES or not sys.stderr.isatty():
        return None
    return ProgressBar(stream=sys.stderr, total=len(paths))


# --------------------------------------------------------------------------- running


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    """One file to check and how (picklable, for worker processes)."""

    path: LogPath
    forced: Dialect | None = None
    strict_quirks: bool = False
    max_events: int = MAX_EVENTS

    def __reduce__(self) -> tuple[Any, ...]:
        return reduce_by_fields(self)  # it crosses processes: sessionspec/check/pickling.py


def check_task(task: Task) -> FileReport:
    """The per-file function every runner maps (module level, so it pickles)."""
    if isinstance(task.path, Unlistable):
        return unlistable_report(task.path)
    return check_location(task.path, task.forced, task.strict_quirks, task.max_events)


def _reports(tasks: Iterable[Task], jobs: int) -> Iterator[FileReport]:
    """Reports in input order.  With ``jobs > 1`` files are checked in worker
    processes; ``imap`` hands results back in submission order, so the output
    does not depend on which worker finishes first."""
    if jobs <= 1:
        yield from map(check_task, tasks)
        return
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    with context.Pool(processes=jobs) as pool:
        yield from pool.imap(check_task, tasks, chunksize=1)


def _capped_jobs(requested: int) -> int:
    """--jobs capped at the CPUs: more processes than CPUs only add start-up
    and switching cost to a CPU-bound check."""
    cpus = available_cpus()
    if requested > cpus:
        print(f"sessionspec check: --jobs {requested} capped at {cpus}, the CPUs available", file=sys.stderr)
        return cpus
    return requested


def run(args: argparse.Namespace) -> int:
    paths: list[str] = list(args.paths) or sample_paths()
    if not paths:
        print("sessionspec check: no paths given and no bundled samples found", file=sys.stderr)
        return 2
    if paths.count(STDIN) > 1:
        print("sessionspec check: - (stdin) may be given only once", file=sys.stderr)
        return 2
    forced: Dialect | None = args.dialect
    if args.dask is not None:
        from sessionspec.check.dask_run import run_dask  # the optional extra, imported only when asked for

        return run_dask(args.dask, paths, Task(path="", forced=forced, strict_quirks=args.strict_quirks, max_events=args.max_events),
                        args.format, args.quiet, args.jobs, sys.stdout)
    # Workers cannot share the parent's stdin: a run that reads - stays in one process.
    jobs = 1 if STDIN in paths else _capped_jobs(args.jobs)
    out: TextIO = sys.stdout
    wants_bar = not args.no_progress and sys.stderr.isatty()
    # The bar needs the total, so the paths are listed first only when it is drawn.
    log_paths: Iterable[LogPath] = list(iter_log_paths(paths)) if wants_bar else iter_log_paths(paths)
    bar = _progress_bar(log_paths, wants_bar) if isinstance(log_paths, list) else None
    tasks = (Task(path=path, forced=forced, strict_quirks=args.strict_quirks, max_events=args.max_events) for path in log_paths)
    summary = Summary()
    for report in _reports(tasks, jobs):
        summary = summary.add(report)
        if bar is not None:
            bar.clear()
        out.write(report_line(report, args.format, args.quiet))
        if bar is not None:
            out.flush()
            bar.update(summary.files, summary.invalid)
    if bar is not None:
        bar.clear()
    if summary.files == 0:
        print(f"sessionspec check: no session-log files (*.jsonl, *.jsonl.zst) under {escape_text(' '.join(paths))}", file=sys.stderr)
        return 2
    out.write(summary_line(summary, args.format))
    out.flush()
    return summary.exit_code()
