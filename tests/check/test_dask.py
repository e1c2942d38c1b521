"""``sessionspec check --dask`` (issue 21): a local Dask cluster of 2 worker
processes over real and generated logs gives, byte for byte, the output of
``check --jobs 1``.  Skipped with the reason when the optional extra
``sessionspec[dask]`` is missing; ``.ci/run`` installs it, so CI runs this."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from sessionspec.cli import main
from sessionspec.generate import write_log
from tests.support import GROUNDTRUTH, REAL

pytestmark = pytest.mark.slow  # a local Dask cluster: the quick loop leaves it out
pytest.importorskip("dask.bag", reason="the optional extra is not installed: pip install -e '.[dask]'")
pytest.importorskip("distributed", reason="the optional extra is not installed: pip install -e '.[dask]'")
pytest.importorskip("fsspec", reason="the optional extra is not installed: pip install -e '.[dask]'")

GOOD = GROUNDTRUTH / "b-prefix-idioms-tool-roundtrip" / "session.jsonl"


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def check(capsys: pytest.CaptureFixture[str]) -> Callable[..., Run]:
    """``sessionspec check`` in this process (no interpreter start-up per run)."""

    def run(*argv: str) -> Run:
        code = main(["check", "--no-progress", *argv])
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err, err
        return Run(code, out, err)

    return run


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Generated logs of several sizes, an invalid one, a mixed-marker one and
    an unreadable one (a FIFO), beside the real logs."""
    folder = tmp_path_factory.mktemp("fleet")
    for seed, events in enumerate((100, 300, 700)):
        with (folder / f"gen-{seed}.jsonl").open("w") as out:
            write_log(out, events, seed)
    (folder / "bad.jsonl").write_bytes(GOOD.read_bytes().replace(b'"seq":4,', b'"seq":40,', 1))
    (folder / "mixed.jsonl").write_bytes(GOOD.read_bytes() + b'{"type":"session/end-seed","seq":56,"time":1796222150099,"data":{}}\n')
    os.mkfifo(folder / "pipe.jsonl")
    return folder


def test_a_local_cluster_of_two_workers_equals_jobs_1_byte_for_byte(fleet: Path, check: Callable[..., Run]) -> None:
    paths = (str(REAL / "a55f148516"), str(fleet))
    sequential = check("--format", "json", "--jobs", "1", *paths)
    distributed = check("--format", "json", "--dask", "local", "--jobs", "2", *paths)
    assert sequential.returncode == 2  # the FIFO is unreadable
    assert distributed.stdout == sequential.stdout and distributed.returncode == sequential.returncode
    assert sequential.stdout.count("\n") == 54 + 6 + 1  # 54 real logs, 6 of the fleet, the summary


def test_text_output_and_a_local_scheduler_equal_jobs_1(fleet: Path, check: Callable[..., Run]) -> None:
    sequential = check(str(fleet))
    threaded = check("--dask", "threads", "--jobs", "2", str(fleet))
    assert threaded.stdout == sequential.stdout and threaded.returncode == sequential.returncode == 2


def test_a_file_url_glob_is_expanded_by_the_client(fleet: Path, check: Callable[..., Run]) -> None:
    result = check("--format", "json", "--dask", "synchronous", f"file://{fleet}/gen-*.jsonl")
    local = check("--format", "json", *sorted(str(p) for p in fleet.glob("gen-*.jsonl")))
    assert result.returncode == local.returncode == 0
    assert result.stdout == local.stdout.replace(f'"path": "{fleet}', f'"path": "file://{fleet}')


def test_no_file_and_stdin_are_clear_errors(fleet: Path, check: Callable[..., Run]) -> None:
    empty = fleet / "empty-dir"
    empty.mkdir(exist_ok=True)
    result = check("--dask", "synchronous", str(empty))
    assert result.returncode == 2 and "no session-log files" in result.stderr
    result = check("--dask", "synchronous", "-")
    assert result.returncode == 2 and "--dask cannot read - (stdin)" in result.stderr


def test_a_bad_scheduler_address_is_a_clear_error_not_a_bug(fleet: Path, check: Callable[..., Run]) -> None:
    result = check("--dask", "no-port-here", str(fleet))
    assert result.returncode == 2 and result.stderr.startswith("sessionspec check: dask scheduler no-port-here: ValueError")


def test_an_fsspec_store_url_glob_is_read_through_fsspec(fleet: Path, check: Callable[..., Run]) -> None:
    """fsspec's in-memory store stands in for an object store (s3://, gs://):
    the client globs it, the per-file function opens each URL through fsspec.
    The synchronous scheduler runs in this process, where the store lives."""
    import fsspec

    memory = fsspec.filesystem("memory")
    for name in ("gen-0.jsonl", "gen-1.jsonl", "bad.jsonl"):
        memory.pipe(f"/fleet/{name}", (fleet / name).read_bytes())
    memory.pipe("/fleet/notes.txt", b"not a log")
    try:
        remote = check("--format", "json", "--dask", "synchronous", "memory://fleet/*.jsonl")
        local = check("--format", "json", *(str(fleet / name) for name in ("bad.jsonl", "gen-0.jsonl", "gen-1.jsonl")))
    finally:
        memory.rm("/fleet", recursive=True)
    assert remote.returncode == local.returncode == 1
    expected = local.stdout
    for name in ("bad.jsonl", "gen-0.jsonl", "gen-1.jsonl"):
        expected = expected.replace(f'"path": "{fleet / name}"', f'"path": "memory:///fleet/{name}"')  # fsspec's canonical URL
    assert remote.stdout == expected


def test_the_deployment_reaches_the_workers(tmp_path: Path, check: Callable[..., Run]) -> None:
    """``--deployment`` travels with each task (sessionspec/check/task.py) to a cluster's workers: the same
    findings and the same summary (notDecided without the deployment's rules) as in one process."""
    from sessionspec.model.codec import serialize_event
    from sessionspec.model.loop import Hooks
    from tests.support import DUMP_DEPLOYMENT, dump_turns

    log = tmp_path / "uncompacted.jsonl"
    log.write_text("".join(serialize_event(e) + "\n" for e in dump_turns(Hooks())), encoding="utf-8")
    deployment = tmp_path / "deployment.json"
    deployment.write_text(json.dumps(DUMP_DEPLOYMENT), encoding="utf-8")
    sequential = check("--format", "json", "--deployment", str(deployment), str(log))
    distributed = check("--format", "json", "--dask", "threads", "--jobs", "2", "--deployment", str(deployment), str(log))
    assert sequential.returncode == 1 and '"CMP-6"' in sequential.stdout
    assert distributed.stdout == sequential.stdout and distributed.returncode == 1
    assert '"why": "deployment"' not in sequential.stdout.splitlines()[-1]


def test_each_files_list_of_what_it_could_not_decide_reaches_the_output(tmp_path: Path, check: Callable[..., Run]) -> None:
    """Issue 44: the file record's ``notDecided`` (sessionspec/check/declines.py) travels in the report from the
    workers: without the deployment, the log's post-step points (CMP-6), as in one process."""
    from sessionspec.model.codec import serialize_event
    from sessionspec.model.loop import Hooks
    from tests.support import dump_turns

    log = tmp_path / "uncompacted.jsonl"
    log.write_text("".join(serialize_event(e) + "\n" for e in dump_turns(Hooks())), encoding="utf-8")
    sequential = check("--format", "json", str(log))
    distributed = check("--format", "json", "--dask", "threads", "--jobs", "2", str(log))
    assert distributed.stdout == sequential.stdout and distributed.returncode == sequential.returncode == 0
    listed = json.loads(distributed.stdout.splitlines()[0])["notDecided"]
    assert [(item["rule"], item["why"]) for item in listed] == [("CMP-6", "deployment")]
