"""``sessionspec check --dask SCHEDULER``: the same check, distributed by Dask.

The file list is made here (local paths and directories as the command line
walks them; ``file://`` and other fsspec URLs globbed by fsspec), becomes a
Dask bag, and each partition maps the per-file function
(:func:`sessionspec.check.task.check_task`) and folds its reports with
:meth:`Summary.add` on the worker.  The client writes the partitions' lines
in input order as they arrive and merges their summaries
(:meth:`Summary.merge`), so the output is byte for byte that of
``check --jobs 1`` over the same files.  Workers must see the same paths (a
shared file system, or an object store through fsspec).

Needs the optional extra: ``pip install 'sessionspec[dask]'``.
"""

from __future__ import annotations

import contextlib
import glob
import importlib
import logging
import math
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any, Final, TextIO

from sessionspec.check.checker import Summary
from sessionspec.check.output import report_line, summary_line
from sessionspec.check.paths import LOG_SUFFIXES, LogPath, escape_text, iter_log_paths
from sessionspec.check.task import Task, available_cpus, check_task
from sessionspec.check.undecided import not_decided

LOCAL_SCHEDULERS: Final = ("processes", "threads", "synchronous", "sync", "single-threaded")
MAX_PARTITION_FILES: Final = 1000
_GLOB_CHARS: Final = frozenset("*?[")


def _module(name: str) -> Any:
    """An optional module, untyped on purpose: Dask's API is used dynamically."""
    return importlib.import_module(name)


def _fail(message: str) -> int:
    print(f"sessionspec check: {escape_text(message)}", file=sys.stderr)
    return 2


def expand_paths(paths: Sequence[str]) -> list[LogPath]:
    """Every file to check, in input order: local paths as the command line
    lists them, ``file://`` URLs as local paths (globs expanded, sorted), and
    other URLs through fsspec (globs expanded, directories listed, sorted)."""
    items: list[LogPath] = []
    for path in paths:
        if path.startswith("file://"):
            items += [f"file://{p}" if isinstance(p, str) else p for p in _local(path.removeprefix("file://"))]
        elif "://" in path:
            items += _remote(path)
        else:
            items += _local(path)
    return items


def _local(path: str) -> list[LogPath]:
    if _GLOB_CHARS & set(path):
        matches = sorted(glob.glob(path, recursive=True))
        return list(iter_log_paths(matches)) if matches else [path]
    return list(iter_log_paths([path]))


def _remote(url: str) -> list[LogPath]:
    fsspec = _module("fsspec.core")
    fs, root = fsspec.url_to_fs(url)
    if _GLOB_CHARS & set(root):
        names = [n for n in fs.glob(root) if not fs.isdir(n)]
    elif fs.isdir(root):
        names = [n for n in fs.find(root) if n.endswith(LOG_SUFFIXES)]
    else:
        return [url]
    return [fs.unstrip_protocol(n) for n in sorted(names)]


def partition_output(tasks: Iterable[Task], fmt: str, quiet: bool) -> list[tuple[str, Summary]]:
    """One partition: its output text, in order, and its summary (the fold)."""
    text: list[str] = []
    summary = Summary()
    for task in tasks:
        report = check_task(task)
        summary = summary.add(report)
        text.append(report_line(report, fmt, quiet))
    return [("".join(text), summary)]


@contextlib.contextmanager
def _client(scheduler: str, jobs: int) -> Iterator[Any]:
    """A distributed client (None for Dask's local schedulers)."""
    if scheduler in LOCAL_SCHEDULERS:
        yield None
        return
    distributed = _module("distributed")
    if scheduler == "local":
        cluster = distributed.LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR)
        with cluster, distributed.Client(cluster) as client:
            yield client
        return
    with distributed.Client(scheduler) as client:
        yield client


def _lost_errors() -> tuple[type[BaseException], ...]:
    """What a cluster raises when it, not the check, fails."""
    errors: list[type[BaseException]] = [OSError, TimeoutError]
    with contextlib.suppress(ImportError):
        distributed = _module("distributed")
        errors += [distributed.KilledWorker, _module("asyncio").CancelledError]
    return tuple(errors)


def _workers(client: Any, jobs: int) -> int:
    if client is None:
        return jobs
    return max(1, len(client.scheduler_info().get("workers", {})))


def run_dask(scheduler: str, paths: Sequence[str], template: Task, fmt: str, quiet: bool, jobs: int, out: TextIO) -> int:
    """The ``--dask`` run; exit code as ``check`` (docs/check.md)."""
    try:
        dask = _module("dask")
        bags = _module("dask.bag")
    except ImportError:
        return _fail("--dask needs the dask extra: pip install 'sessionspec[dask]'")
    if "-" in paths:
        return _fail("--dask cannot read - (stdin): workers do not share it")
    try:
        items = expand_paths(paths)
    except (ImportError, OSError, ValueError) as error:
        return _fail(f"cannot list {' '.join(paths)}: {type(error).__name__}: {error}")
    if not items:
        return _fail(f"no session-log files (*.jsonl, *.jsonl.zst) under {' '.join(paths)}")
    tasks = [replace(template, path=item) for item in items]
    jobs = min(jobs, available_cpus()) if scheduler == "local" else jobs
    stack = contextlib.ExitStack()
    try:
        client = stack.enter_context(_client(scheduler, jobs))
    except (OSError, ValueError, TypeError) as error:  # no such scheduler, a bad address, a cluster that cannot start
        stack.close()
        return _fail(f"dask scheduler {scheduler}: {type(error).__name__}: {error}")
    lost = _lost_errors()
    with stack:
        workers = _workers(client, jobs)
        size = max(1, min(MAX_PARTITION_FILES, math.ceil(len(tasks) / (4 * workers))))
        parts = bags.from_sequence(tasks, partition_size=size).map_partitions(partition_output, fmt, quiet).to_delayed()
        summary = Summary()
        try:
            if client is None:
                with dask.config.set(scheduler=scheduler, num_workers=jobs):
                    results: Iterable[Any] = dask.compute(*parts)
            else:
                results = (future.result() for future in client.compute(parts))
            for result in results:
                text, partial = result[0]
                out.write(text)
                summary = summary.merge(partial)
        except lost as error:  # the cluster failed (a worker died, a connection dropped), not the check
            out.flush()
            return _fail(f"dask: the run was lost after {summary.files} files: {type(error).__name__}: {error}")
    out.write(summary_line(summary, fmt, not_decided(template.deployment is not None)))
    out.flush()
    return summary.exit_code()
