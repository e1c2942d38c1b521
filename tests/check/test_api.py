"""``sessionspec.api`` (issue 21): one log in, the report ``check --format json``
prints out; the summary fold equals the command's summary."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from sessionspec import api
from sessionspec.cli import main
from tests.support import GROUNDTRUTH, REAL

GOOD = GROUNDTRUTH / "b-prefix-idioms-tool-roundtrip" / "session.jsonl"


def _files(tmp_path: Path) -> list[str]:
    """One file of each verdict: valid, invalid (a seq break), unknown (mixed
    dialect markers), unreadable (missing)."""
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(GOOD.read_bytes().replace(b'"seq":4,', b'"seq":40,', 1))
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(GOOD.read_bytes() + b'{"type":"session/end-seed","seq":56,"time":1796222150099,"data":{}}\n')
    return [str(GOOD), str(bad), str(mixed), str(tmp_path / "missing.jsonl")]


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["check", *argv])
    return code, capsys.readouterr().out


def test_check_file_gives_the_report_the_command_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _files(tmp_path)
    code, out = _cli(capsys, "--format", "json", *files)
    lines = out.splitlines(keepends=True)
    reports = [api.check_file(path) for path in files]
    assert [r.verdict for r in reports] == [api.Verdict.VALID, api.Verdict.INVALID, api.Verdict.UNKNOWN, api.Verdict.UNREADABLE]
    assert [json.loads(line) for line in lines[:-1]] == [r.to_json() for r in reports]
    assert [api.report_line(r, "json") for r in reports] == lines[:-1]
    summary = api.summarize(reports)
    assert api.summary_line(summary, "json") == lines[-1]
    assert summary.exit_code() == code == 2
    code, text = _cli(capsys, *files)
    assert "".join(api.report_line(r, "text") for r in reports) + api.summary_line(summary, "text") == text


def test_summary_exit_code_follows_the_table() -> None:
    assert api.Summary().exit_code() == 0
    assert api.Summary(valid=3).exit_code() == 0
    assert api.Summary(valid=1, unknown=1).exit_code() == 4
    assert api.Summary(unknown=1, invalid=1).exit_code() == 1
    assert api.Summary(unknown=1, invalid=1, unreadable=1).exit_code() == 2


summaries = st.builds(api.Summary, *(st.integers(0, 5) for _ in range(4)))


@given(summaries, summaries, summaries)
def test_summary_merge_is_an_associative_commutative_fold(a: api.Summary, b: api.Summary, c: api.Summary) -> None:
    assert a.merge(b).merge(c) == a.merge(b.merge(c))
    assert a.merge(b) == b.merge(a)
    assert a.merge(api.Summary()) == a
    assert a.merge(b).files == a.files + b.files


def test_check_bytes_plain_and_zstd_equal_check_file() -> None:
    data = GOOD.read_bytes()
    from_file = api.check_file(str(GOOD)).to_json()
    plain = api.check_bytes(data, str(GOOD)).to_json()
    packed = api.check_bytes(zstandard.ZstdCompressor().compress(data), "s.jsonl.zst").to_json()
    assert plain == from_file
    assert {**packed, "path": str(GOOD)} == from_file


def test_check_bytes_never_raises_on_garbage() -> None:
    assert api.check_bytes(b"\xff\x00garbage", "x.jsonl").verdict is api.Verdict.INVALID
    assert api.check_bytes(b"garbage", "x.jsonl.zst").verdict is api.Verdict.UNREADABLE
    assert api.check_bytes(b"", "x.jsonl").verdict is api.Verdict.INVALID  # FMT-1: empty file


def test_check_url_reads_file_urls_as_local_files() -> None:
    report = api.check_url(f"file://{GOOD}")
    assert report.path == f"file://{GOOD}" and report.to_json() == {**api.check_file(str(GOOD)).to_json(), "path": f"file://{GOOD}"}
    assert api.check_url(str(GOOD)).to_json() == api.check_file(str(GOOD)).to_json()


def test_check_url_with_an_unknown_store_is_unreadable_not_an_exception() -> None:
    pytest.importorskip("fsspec", reason="fsspec is part of the optional extra sessionspec[dask]")
    report = api.check_url("nosuchstore://bucket/s.jsonl")
    assert report.verdict is api.Verdict.UNREADABLE and str(report.reason).startswith("cannot open:")


def test_check_url_turns_a_backend_read_failure_into_unreadable(monkeypatch: pytest.MonkeyPatch) -> None:
    fsspec = pytest.importorskip("fsspec", reason="fsspec is part of the optional extra sessionspec[dask]")

    class Failing(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
            raise RuntimeError("connection reset by the store")

    class Opener:
        def open(self) -> io.RawIOBase:
            return Failing()

    monkeypatch.setattr(fsspec, "open", lambda url, mode: Opener())
    report = api.check_url("memory://fleet/s.jsonl")
    assert report.verdict is api.Verdict.UNREADABLE
    assert "RuntimeError: connection reset by the store" in str(report.reason)


def test_the_real_logs_through_the_api_equal_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    folder = REAL / "a55f148516"
    code, out = _cli(capsys, "--format", "json", str(folder))
    records = [json.loads(line) for line in out.splitlines()]
    reports = [api.check_file(str(r["path"])) for r in records[:-1]]
    assert [r.to_json() for r in reports] == records[:-1]
    assert api.summary_line(api.summarize(reports), "json") == json.dumps(records[-1], ensure_ascii=False) + "\n"
    assert api.summarize(reports).to_json() == {k: v for k, v in records[-1].items() if k != "notDecided"}
    assert api.summarize(reports).exit_code() == code
