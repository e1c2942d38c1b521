"""Hardening of the checker (issue 9): every input gets a verdict, never a traceback.

Hypothesis feeds arbitrary bytes and mutated real logs to the checker, both
in-process (``check_log(read_stream(...))``) and through the command line
(``sessionspec check`` on a temporary file).  Whatever the bytes, the checker
must end with one of the four verdicts (FMT-7) and an exit code of 0, 1 or 2:
exit 3 is the "bug in sessionspec" code, which no input may reach.

Inputs are bounded in size so every example finishes quickly; a generous
alarm turns a hang into a test failure instead of a stuck run (it measures
nothing).  The named hostile shapes of the issue (truncated lines, invalid
UTF-8, NaN/Infinity, integers beyond 2^53, 10k-deep nesting, a 50 MB line,
BOM, CRLF, duplicate keys, empty file, non-log JSON) each have a test whose
expected verdict is reasoned from the rule they break.
"""

from __future__ import annotations

import io
import json
import random
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionspec.check.checker import FileReport, Verdict, check_log
from sessionspec.check.logfile import MAX_DEPTH, read_stream
from sessionspec.cli import main
from sessionspec.model.rejected import FailureKind
from tests.support import GROUNDTRUTH, REAL

GOOD = GROUNDTRUTH / "b-prefix-idioms-tool-roundtrip" / "session.jsonl"
RULE_ID = re.compile(r"^[A-Z]+-\d+$")
# A finding line of the text format, or a verdict line, or the summary line.
# A finding, a file's verdict, the run's summary, or a cascade's summary (the knock-on findings of one cause,
# sessionspec/check/cascades.py: "  caused by SURF-3 at line 12: 9 more: ...").
OUTPUT_LINE = re.compile(r"^(.+?(:\d+)?: [A-Z]+-\d+( seq \d+)?: .*|.+: (valid|invalid|unknown|unreadable)\b.*|checked \d+ files?: .*"
                         r"|  caused by [A-Z]+-\d+ .*)$")
HANG_GUARD_SECONDS = 120  # far above any example; only there to stop a hang


@contextmanager
def _no_hang(seconds: int = HANG_GUARD_SECONDS) -> Iterator[None]:
    """Fail (instead of hanging the run) when one input takes absurdly long."""

    def expired(signum: int, frame: FrameType | None) -> None:
        raise AssertionError(f"the checker did not finish one input within {seconds} s (a hang)")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _small_logs(limit_bytes: int = 16 * 1024) -> list[Path]:
    paths = sorted(REAL.rglob("*.jsonl")) + sorted(GROUNDTRUTH.rglob("*.jsonl"))
    return [p for p in paths if 0 < p.stat().st_size <= limit_bytes]


SMALL_LOGS = _small_logs()


def _check_bytes(data: bytes, like: Path | None = None) -> FileReport:
    """The checker's verdict for ``data`` read as if it were the file ``like``
    (so a headerless ground-truth log still finds its sidecar)."""
    name = str(like) if like is not None else "<fuzz>"
    with _no_hang():
        report = check_log(read_stream(io.BytesIO(data), name, like))
    _assert_well_formed(report)
    return report


def _assert_well_formed(report: FileReport) -> None:
    """A verdict, findings that name a rule, and output that renders."""
    assert isinstance(report.verdict, Verdict)
    for finding in report.findings:
        assert RULE_ID.match(finding.rule), finding
        assert finding.line is None or finding.line >= 1
        assert "\n" not in finding.text(report.path)
    if report.verdict is Verdict.INVALID:
        assert any(f.kind is FailureKind.INVALID for f in report.findings)
    if report.verdict is Verdict.VALID:
        assert not report.findings
    if report.verdict in (Verdict.UNKNOWN, Verdict.UNREADABLE):
        assert report.reason
    json.dumps(report.to_json())
    report.verdict_text()


def _cli(tmp_path: Path, data: bytes, *options: str) -> tuple[int, list[str], str]:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    out, err = io.StringIO(), io.StringIO()
    with _no_hang(), pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdout", out)
        patch.setattr("sys.stderr", err)
        code = main(["check", "--no-progress", *options, str(path)])
    return code, out.getvalue().splitlines(), err.getvalue()


def _mutate(data: bytes, how: str, where: int, junk: bytes) -> bytes:
    """One byte-level damage of a log: the kinds of corruption a crash, a bad
    copy or an editor can leave behind."""
    lines = data.split(b"\n")
    i = where % (len(data) + 1)
    line = where % max(len(lines), 1)
    match how:
        case "cut":
            return data[:i]
        case "flip":
            return data[:i] + junk + data[i + 1 :]
        case "insert":
            return data[:i] + junk + data[i:]
        case "delete":
            return data[:i] + data[i + 7 :]
        case "drop-line":
            return b"\n".join(lines[:line] + lines[line + 1 :])
        case "duplicate-line":
            return b"\n".join(lines[: line + 1] + lines[line:])
        case "swap-lines":
            if line + 1 < len(lines):
                lines[line], lines[line + 1] = lines[line + 1], lines[line]
            return b"\n".join(lines)
        case "crlf":
            return data.replace(b"\n", b"\r\n")
        case "bom":
            return b"\xef\xbb\xbf" + data
        case "invalid-utf8":
            return data[:i] + b"\xff\xc0" + data[i:]
        case "nan":
            return re.sub(rb":(\d+)", b":NaN", data, count=1 + where % 3)
        case "big-int":
            return re.sub(rb'"seq":(\d+)', b'"seq":9007199254740993', data, count=1)
        case _:
            raise AssertionError(how)


MUTATIONS = ["cut", "flip", "insert", "delete", "drop-line", "duplicate-line", "swap-lines", "crlf", "bom", "invalid-utf8", "nan", "big-int"]


# ---------------------------------------------------------------- generated


@given(st.binary(max_size=2000))
def test_FMT_7_arbitrary_bytes_get_a_verdict(data: bytes) -> None:
    _check_bytes(data)


@given(st.lists(st.one_of(st.binary(max_size=80), st.sampled_from([b"{}", b"[]", b"null", b'{"type":"session"}', b"\xef\xbb\xbf", b"\r"])), max_size=12))
def test_FMT_7_arbitrary_lines_get_a_verdict(lines: list[bytes]) -> None:
    _check_bytes(b"\n".join(lines))


@given(
    st.sampled_from(SMALL_LOGS),
    st.sampled_from(MUTATIONS),
    st.integers(min_value=0, max_value=1 << 20),
    st.binary(min_size=1, max_size=4),
)
def test_FMT_7_mutated_real_logs_get_a_verdict(path: Path, how: str, where: int, junk: bytes) -> None:
    _check_bytes(_mutate(path.read_bytes(), how, where, junk), like=path)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**60), max_value=2**60) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["type", "turn", "step", "content", "text", "role", "kind", "seq", "x"]), inner, max_size=4),
    max_leaves=12,
)


def _replace_somewhere(value: object, path: list[int], new: object) -> object:
    """``value`` with one nested value (chosen by ``path``) replaced by ``new``."""
    if not path:
        return new
    if isinstance(value, dict) and value:
        key = list(value)[path[0] % len(value)]
        return {**value, key: _replace_somewhere(value[key], path[1:], new)}
    if isinstance(value, list) and value:
        i = path[0] % len(value)
        return value[:i] + [_replace_somewhere(value[i], path[1:], new)] + value[i + 1 :]
    return new


@given(
    st.sampled_from(SMALL_LOGS),
    st.integers(min_value=0, max_value=1 << 20),
    st.lists(st.integers(min_value=0, max_value=50), max_size=6),
    JSON_VALUES,
)
def test_FMT_7_real_logs_with_one_value_replaced_get_a_verdict(path: Path, where: int, inner: list[int], new: object) -> None:
    """Structure-aware damage: one value anywhere inside one event of a real
    log becomes arbitrary JSON of a wrong shape or type, so the model's checks
    (not only the JSON parser) meet hostile values."""
    lines = path.read_bytes().split(b"\n")
    candidates = [i for i, line in enumerate(lines) if line.startswith(b"{")]
    index = candidates[where % len(candidates)]
    event = json.loads(lines[index])
    lines[index] = json.dumps(_replace_somewhere(event, [where, *inner], new), separators=(",", ":")).encode()
    _check_bytes(b"\n".join(lines), like=path)


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(SMALL_LOGS), st.sampled_from(MUTATIONS), st.integers(min_value=0, max_value=1 << 20), st.binary(min_size=1, max_size=4))
def test_FMT_7_cli_exit_code_is_a_verdict_never_a_bug(tmp_path: Path, path: Path, how: str, where: int, junk: bytes) -> None:
    """Through the command line: exit 0/1/2/4 (4: unknown, docs/check.md), every
    output line a finding, a verdict or the summary, and nothing on stderr but,
    for exit 4, the one hint docs/check.md gives for an unknown file (exit 3
    would be a bug)."""
    code, out, err = _cli(tmp_path, _mutate(path.read_bytes(), how, where, junk))
    assert code in (0, 1, 2, 4), err
    hint = "sessionspec check: 1 file is unknown (exit 4: not decided, so not a pass); files that are not loop logs"
    assert err == "" if code != 4 else err.startswith(hint) and err.count("\n") == 1, err
    assert out and out[-1].startswith("checked 1 file: ")
    assert all(OUTPUT_LINE.match(line) for line in out), out


@settings(max_examples=20)
@given(st.sampled_from(SMALL_LOGS), st.data())
def test_QF_15_a_log_cut_inside_its_last_line_is_judged_without_that_line(path: Path, data: st.DataObject) -> None:
    """A crash mid-write leaves the last line cut short and without its newline.  The file load ignores
    such a line (QF-15), so the report is the report of the log without it, plus one QF-15 note on that
    line; only a torn first record (no header left, which the load refuses) is an FMT-1 finding.  The
    verdict is never a traceback."""
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    number = data.draw(st.integers(min_value=1, max_value=len([x for x in lines if x.strip()])), label="line")
    starts = [i for i, line in enumerate(lines) if line.strip()]
    index = starts[number - 1]
    line = lines[index]
    # A proper prefix of a one-object JSON line (ending in "}") is never JSON.
    cut = data.draw(st.integers(min_value=1, max_value=len(line.rstrip()) - 1), label="cut")
    report = _check_bytes(b"\n".join(lines[:index] + [line[:cut]]), like=path)
    line_number = index + 1
    if number == 1:
        truncation = [f for f in report.findings if f.line == line_number and f.rule == "FMT-1"]
        assert truncation and truncation[0].reason.startswith("truncated last line"), report.findings
        return
    without = _check_bytes(b"".join(part + b"\n" for part in lines[:index]), like=path)
    torn = [note for note in report.notes if note.startswith(f"quirk QF-15 (1 time, first at line {line_number}): ")]
    assert len(torn) == 1, report.notes
    assert (report.verdict, report.findings) == (without.verdict, without.findings)
    assert [note for note in report.notes if note not in torn] == list(without.notes)


# ---------------------------------------------------------------- named hostile shapes

EVENT = '{"type":"turn/start","seq":0,"time":0,"data":%s}'


def _findings(report: FileReport) -> set[tuple[int | None, str]]:
    return {(f.line, f.rule) for f in report.findings}


def test_FMT_1_empty_file_is_invalid() -> None:
    report = _check_bytes(b"")
    assert report.verdict is Verdict.INVALID and _findings(report) == {(None, "FMT-1")}


def test_FMT_1_blank_lines_only_is_the_empty_file() -> None:
    report = _check_bytes(b"\n\n  \n")
    assert report.verdict is Verdict.INVALID and _findings(report) == {(None, "FMT-1")}


def test_FMT_1_invalid_utf8_is_a_finding_on_its_line() -> None:
    data = GOOD.read_bytes().replace(b"turn one", b"turn \xff\xfe one", 1)
    report = _check_bytes(data, like=GOOD)
    assert report.verdict is Verdict.INVALID and (2, "FMT-1") in _findings(report)
    assert any("invalid UTF-8" in f.reason for f in report.findings)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "[NaN]", '{"x":Infinity}', "1e400", "-0"])
def test_LOG_4_non_lossless_numbers_are_rejected(literal: str) -> None:
    """NaN, ±Infinity, overflowing floats and textual -0 are not lossless JSON
    (LOG-4; JSON.parse even refuses NaN/Infinity)."""
    report = _check_bytes((EVENT % literal).encode() + b"\n")
    assert report.verdict is Verdict.INVALID and (1, "LOG-4") in _findings(report), report.findings


@pytest.mark.parametrize("number", [2**53 + 1, -(2**53) - 1, 2**64, 10**30])
def test_LOG_4_integers_beyond_2_53_are_rejected(number: int) -> None:
    """JS numbers are doubles: an integer beyond 2^53 cannot round-trip."""
    report = _check_bytes((EVENT % f'{{"n":{number}}}').encode() + b"\n")
    assert report.verdict is Verdict.INVALID and (1, "LOG-4") in _findings(report), report.findings


def test_LOG_4_a_seq_beyond_2_53_is_rejected_not_a_traceback() -> None:
    lines = GOOD.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b'"seq":1,', b'"seq":9007199254740993,')
    report = _check_bytes(b"".join(lines), like=GOOD)
    assert report.verdict is Verdict.INVALID and any(line == 2 for line, _ in _findings(report))


def test_LOG_4_largest_safe_integer_is_lossless() -> None:
    """2^53 - 1 is still exact in a double: not a LOG-4 finding."""
    report = _check_bytes((EVENT % str(2**53 - 1)).encode() + b"\n")
    assert (1, "LOG-4") not in _findings(report)


@pytest.mark.parametrize("opener,closer", [("[", "]"), ('{"a":', "}")])
def test_FMT_1_ten_thousand_deep_nesting_is_a_limit_not_a_crash(opener: str, closer: str) -> None:
    """Deeper than the checker's nesting limit: the line is outside what the
    checker decides (unknown, a LIMIT finding), and the other lines are read."""
    deep = EVENT.replace('"seq":0', '"seq":56') % (opener * 10_000 + "1" * (opener == '{"a":') + closer * 10_000)
    report = _check_bytes(GOOD.read_bytes() + deep.encode() + b"\n", like=GOOD)
    limits = [f for f in report.findings if f.kind is FailureKind.LIMIT]
    assert [(f.line, f.rule) for f in limits] == [(57, "FMT-1")] and str(MAX_DEPTH) in limits[0].reason
    assert report.events == 56


def test_FMT_2_duplicate_keys_are_reported() -> None:
    lines = GOOD.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b'"seq":2,', b'"seq":2,"seq":2,')
    report = _check_bytes(b"".join(lines), like=GOOD)
    assert report.verdict is Verdict.INVALID and (3, "FMT-2") in _findings(report)


def test_FMT_2_duplicate_keys_in_data_are_reported() -> None:
    report = _check_bytes((EVENT % '{"turn":1,"turn":1}').encode() + b"\n")
    assert report.verdict is Verdict.INVALID and (1, "FMT-2") in _findings(report)


def test_FMT_1_crlf_line_ends_give_the_same_verdict() -> None:
    """CR is JSON whitespace (JSON.parse of a line split at LF accepts it), so a
    CRLF copy of a valid log is as valid as the original."""
    original = _check_bytes(GOOD.read_bytes(), like=GOOD)
    crlf = _check_bytes(GOOD.read_bytes().replace(b"\n", b"\r\n"), like=GOOD)
    assert original.verdict is crlf.verdict is Verdict.VALID and crlf.events == original.events


def test_FMT_1_a_byte_order_mark_is_not_json() -> None:
    """FMT-1 asks for UTF-8 JSONL; JSON.parse rejects a leading U+FEFF, so a
    BOM makes its line a finding (and never a traceback)."""
    report = _check_bytes(b"\xef\xbb\xbf" + GOOD.read_bytes(), like=GOOD)
    assert report.verdict is Verdict.INVALID and (1, "FMT-1") in _findings(report)
    assert report.events == 55  # every other line is still read


@pytest.mark.parametrize("text", ["[1,2,3]", '"a string"', "42", "null", "true", "{}", '{"hello":"world"}'])
def test_LOG_3_non_log_json_is_invalid(text: str) -> None:
    """Valid JSON that is not an event envelope breaks LOG-3 (or, for an array
    that is not a packed row, the record shape)."""
    report = _check_bytes(text.encode() + b"\n")
    assert report.verdict is Verdict.INVALID and report.findings and all(f.line == 1 for f in report.findings)


def test_FMT_1_a_50_mb_line_is_checked(tmp_path: Path) -> None:
    """A 50 MB user message (under the 64 MB line limit) is read and checked
    like any other: the log stays valid.  Generated in tmp, never committed."""
    size = 50 * 1024 * 1024
    data = GOOD.read_bytes().replace(b'"text":"turn one"', b'"text":"' + b"x" * size + b'"', 1)
    assert len(max(data.split(b"\n"), key=len)) > size
    code, out, err = _cli(tmp_path, data)
    assert (code, err) == (0, "") and out[0].endswith(": valid [A55 detected, 56 events]")


def test_FMT_7_json_format_survives_hostile_bytes(tmp_path: Path) -> None:
    """Every hostile shape at once, through --format json: JSON Lines out."""
    rng = random.Random(9)
    data = GOOD.read_bytes() + b"".join(
        [b"\xef\xbb\xbf{}\n", b"\xff\n", (EVENT % "NaN").encode() + b"\n", b"[" * 300 + b"\n", b'{"type":"session","version":0}\n', bytes(rng.randrange(256) for _ in range(200))]
    )
    code, out, err = _cli(tmp_path, data, "--format", "json")
    docs = [json.loads(line) for line in out]
    assert code == 1 and err == ""
    assert [d["kind"] for d in docs] == ["file", "summary"] and docs[0]["verdict"] == "invalid"
