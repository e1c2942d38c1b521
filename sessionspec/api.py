"""The Python API of the log checker: one file in, one report out, and a summary fold.

Stable (issue 21): these names and signatures change only with a new major
version.  The command line (``sessionspec check``) runs exactly these
functions, so a report from here is the report the command prints::

    from sessionspec import api

    report = api.check_file("session.jsonl")          # or api.check_bytes(data, "s.jsonl.zst")
    report.verdict                                    # api.Verdict.VALID, INVALID, UNKNOWN, UNREADABLE
    report.to_json()                                  # the object `check --format json` prints for the file
    report.undecided                                  # the rules this file's check could not decide, and why
    api.summarize([report]).to_json()                 # the summary object it prints last

For a fleet, map :func:`check_file` (or :func:`check_url`) over the files on
any engine and reduce with :meth:`Summary.add` and :meth:`Summary.merge`
(associative and commutative, with ``Summary()`` as the empty summary); see
``docs/check.md`` (Fleets: ``sessionspec check --dask``, Spark, Ray).
"""

from __future__ import annotations

import io

from sessionspec.check.checker import (
    EXIT_CODES,
    FileReport,
    Finding,
    Summary,
    Verdict,
    check_handle,
    check_location,
    check_path,
    summarize,
)
from sessionspec.check.command import json_line, report_line, summary_line
from sessionspec.check.declines import FileNotDecided
from sessionspec.check.deployment_file import load_deployment
from sessionspec.check.logfile import MAX_EVENTS
from sessionspec.model.deployment import Deployment
from sessionspec.model.log import Dialect

__all__ = [
    "EXIT_CODES",
    "MAX_EVENTS",
    "Deployment",
    "DeploymentError",
    "Dialect",
    "FileNotDecided",
    "FileReport",
    "Finding",
    "Summary",
    "Verdict",
    "check_bytes",
    "check_file",
    "check_url",
    "read_deployment_file",
    "json_line",
    "report_line",
    "summarize",
    "summary_line",
]

def check_file(path: str, *, dialect: Dialect | None = None, strict_quirks: bool = False, max_events: int = MAX_EVENTS,
               deployment: Deployment | None = None) -> FileReport:
    """Check one log file (``.jsonl`` or ``.jsonl.zst``; ``-`` reads stdin).

    Never raises for bad input: a missing, non-regular or undecodable file
    is an ``unreadable`` report with the reason.  ``deployment``: the
    deployment's facts (:func:`read_deployment_file`), as ``check --deployment``."""
    return check_path(path, dialect, strict_quirks, max_events, deployment=deployment)


def check_bytes(
    data: bytes, name: str = "<bytes>", *, dialect: Dialect | None = None, strict_quirks: bool = False, max_events: int = MAX_EVENTS,
    deployment: Deployment | None = None,
) -> FileReport:
    """Check a log given as bytes; ``name`` is the report's path, and a name
    ending ``.zst`` means the bytes are a zstandard stream.  No file is read
    (no ``sessions.json`` sidecar, no fork parent beside it)."""
    return check_handle(io.BytesIO(data), name, dialect, strict_quirks, max_events, deployment=deployment)


def check_url(url: str, *, dialect: Dialect | None = None, strict_quirks: bool = False, max_events: int = MAX_EVENTS,
              deployment: Deployment | None = None) -> FileReport:
    """Check one log named by a URL through fsspec (``s3://…``, ``gs://…``,
    ``file://…``; needs ``sessionspec[dask]``, or fsspec and the store's own
    fsspec backend).  A ``file://`` URL or a plain path is read as by
    :func:`check_file` (regular files only); the report's path is the URL."""
    return check_location(url, dialect, strict_quirks, max_events, deployment=deployment)


class DeploymentError(ValueError):
    """A deployment file that cannot be used: the message names the file, the field and the rule."""


def read_deployment_file(path: str) -> Deployment:
    """The deployment facts of a deployment file (docs/check.md, "Deployment facts"); raises
    :class:`DeploymentError` naming the field when the file cannot be used (as ``check`` exits 2)."""
    read = load_deployment(path)
    if isinstance(read, str):
        raise DeploymentError(read)
    return read
