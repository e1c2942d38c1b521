"""One file of a ``check`` run: the task a runner maps (in this process, in worker processes, on a Dask
cluster) and the CPUs a run may use.  Its own module, so that the runners (``command``, ``dask_run``) need it
and not each other."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, final

from sessionspec.check.checker import FileReport, check_location, unlistable_report
from sessionspec.check.logfile import MAX_EVENTS
from sessionspec.check.paths import LogPath, Unlistable
from sessionspec.check.pickling import reduce_by_fields
from sessionspec.check.selection import Selection
from sessionspec.model.deployment import Deployment
from sessionspec.model.log import Dialect


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, else the count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    """One file to check and how (picklable, for worker processes)."""

    path: LogPath
    forced: Dialect | None = None
    strict_quirks: bool = False
    max_events: int = MAX_EVENTS
    selection: Selection = Selection()
    deployment: Deployment | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        return reduce_by_fields(self)  # it crosses processes: sessionspec/check/pickling.py


def check_task(task: Task) -> FileReport:
    """The per-file function every runner maps (module level, so it pickles)."""
    if isinstance(task.path, Unlistable):
        return unlistable_report(task.path)
    return selected(check_location(task.path, task.forced, task.strict_quirks, task.max_events, deployment=task.deployment), task)


def selected(report: FileReport, task: Task) -> FileReport:
    """A report as the run shows it: only the rules the run selects (``--select``, ``--ignore``)."""
    return report if task.selection.everything else report.selected(task.selection.keeps)
