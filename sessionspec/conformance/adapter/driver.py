"""The server loop and the two clients of the adapter protocol: :class:`InProcessAdapter` (the model
in this process) and :class:`ProcessAdapter` (an adapter command over pipes).
"""


from __future__ import annotations

import contextlib
import json
import os
import select
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Final, TextIO

from sessionspec.conformance.adapter.capabilities import Capabilities, from_hello
from sessionspec.conformance.adapter.protocol import (
    PROTOCOL,
    PROTOCOL_V1,
    READABLE,
    AdapterError,
    OperationError,
    OperationRefused,
    Response,
    is_unsupported,
)
from sessionspec.conformance.adapter.session import ModelSession
from sessionspec.conformance.vectors.format import FormatError, PlainJson

Handler = Callable[[Mapping[str, object]], Response]


def answer(handler: Handler, line: str) -> str:
    """One request line -> one response line (never raises)."""
    try:
        request = json.loads(line)
    except json.JSONDecodeError as bad:
        return json.dumps({"id": None, "error": f"not JSON: {bad}"}, sort_keys=True)
    except RecursionError:
        return json.dumps({"id": None, "error": "not JSON: nested too deeply"}, sort_keys=True)
    ident = request.get("id") if isinstance(request, dict) else None
    if not isinstance(request, dict):
        return json.dumps({"id": None, "error": "an operation is a JSON object"}, sort_keys=True)
    try:
        result = handler(request)
    except (OperationError, FormatError) as bad:
        return _line({"id": ident, "error": str(bad)})
    if set(result) == {"reject"}:
        return _line({"id": ident, "reject": result["reject"]})
    return _line({"id": ident, "ok": result})


def _line(message: object) -> str:
    """An answer line, UTF-8 text as it is; with a lone surrogate (a log line may carry one, and a rejection's reason
    quotes it) escaped instead, which UTF-8 cannot encode: the line is the same JSON either way."""
    text = json.dumps(message, sort_keys=True, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(message, sort_keys=True)
    return text


def serve(handler: Handler, stdin: TextIO, stdout: TextIO, log: TextIO | None = None) -> int:
    """The server loop: one answer line per request line, flushed, until EOF; with ``log``, a line there per
    answer (``serve-model -v``): the id, the operation and the outcome."""
    for line in stdin:
        if not line.strip():
            continue
        reply = answer(handler, line)
        stdout.write(reply + "\n")
        stdout.flush()
        if log is not None:
            log.write(_outcome_line(line, reply) + "\n")
            log.flush()
    return 0


def _outcome_line(request: str, reply: str) -> str:
    try:
        asked = json.loads(request)
        op = asked.get("op") if isinstance(asked, dict) else None
    except (json.JSONDecodeError, RecursionError):
        op = None
    answered = json.loads(reply)
    outcome = "error: " + str(answered["error"]) if "error" in answered else (
        "reject " + ",".join(answered["reject"].get("rules", [])) if "reject" in answered else "ok")
    return f"serve-model: {answered.get('id')} {op}: {outcome}"


def _response(message: object, ident: int, what: str, protocol: str = PROTOCOL) -> Response:
    """The answer ``message`` to operation ``ident`` as a response; a malformed one raises :class:`AdapterError`
    (an ``error`` answer :class:`OperationRefused`).  ``/2`` lets a rejection name no rule (``rules`` absent or
    ``[]``: "rejects, rule unknown", scored verdict-only)."""
    if not isinstance(message, dict) or message.get("id") != ident:
        shown = message.get("id") if isinstance(message, dict) else None
        raise AdapterError(f"{what}: the answer is not {{id: {ident}, ok|reject|error}} (id {shown!r}): {str(message)[:200]}")
    if "error" in message:
        error = str(message["error"])
        if is_unsupported(error):
            raise OperationRefused(f"{what}: the adapter does not support it: {error[:200]}", error)
        raise OperationRefused(f"{what}: the adapter refused it as malformed: {error[:200]}", error)
    if "reject" in message:
        reject = message["reject"]
        if not isinstance(reject, dict):
            raise AdapterError(f"{what}: a rejection is {{rules: [IDs], reason}}")
        rules = reject.get("rules", None if protocol == PROTOCOL_V1 else [])
        if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
            raise AdapterError(f"{what}: a rejection's rules are a list of rule IDs"
                               + (" (required by sessionspec-adapter/1)" if protocol == PROTOCOL_V1 else ""))
        return {"reject": {**reject, "rules": list[PlainJson](rules)}}
    ok = message.get("ok")
    if not isinstance(ok, dict):
        raise AdapterError(f"{what}: ok must carry an object")
    return ok


def _depth_within(value: object, limit: int) -> bool:
    """Whether ``value`` nests at most ``limit`` arrays/objects deep (iterative: no recursion on hostile input)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return False
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return True


def check_hello(answer_: Response, what: str = "operation 'hello' (id 1)") -> str:
    """The protocol a ``hello`` answer names; :class:`AdapterError` unless it is one this driver reads."""
    if "reject" in answer_:
        raise AdapterError(f"{what}: the adapter rejected hello")
    protocol = answer_.get("protocol")
    if not isinstance(protocol, str):
        raise AdapterError(f"{what}: the answer names no protocol (expected {{\"protocol\": {PROTOCOL!r}, ...}})")
    if protocol not in READABLE:
        raise AdapterError(f"{what}: the adapter speaks {protocol[:80]!r}; this sessionspec reads {', '.join(READABLE)}")
    return protocol


class InProcessAdapter:
    """A client over a :class:`ModelSession` in this process (the reference side of ``conform``)."""

    def __init__(self, session: ModelSession | None = None) -> None:
        self.session = session or ModelSession()
        self.protocol = PROTOCOL
        self.capabilities = Capabilities()
        self._next = 0

    def hello(self) -> str:
        answer_ = self.call({"op": "hello"})
        protocol = check_hello(answer_)
        self.capabilities = from_hello(answer_)
        return protocol

    def call(self, op: Mapping[str, PlainJson]) -> Response:
        self._next += 1
        message = json.loads(answer(self.session.handle, json.dumps({**op, "id": self._next})))
        return _response(message, self._next, f"operation {op.get('op')!r} (id {self._next})")

    def close(self) -> None:
        return None

    def output_tail(self) -> str:
        return ""


DEFAULT_TIMEOUT: Final = 30.0
MAX_ANSWER: Final = 64 * 1024 * 1024
MAX_DEPTH: Final = 200  # nesting of an answer; the model's own answers stay far below
_READ: Final = 1 << 20
OUTPUT_TAIL: Final = 16 * 1024  # the bytes of the adapter's standard error kept for a crash report


class _ErrorTail:
    """The adapter's standard error, passed through to ours as it comes (as when it was inherited) and its
    last :data:`OUTPUT_TAIL` bytes kept, so a crash report can show what the adapter said (issue 43, part 4)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._tail = bytearray()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="sessionspec-adapter-stderr", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            with contextlib.suppress(OSError):
                os.write(2, chunk)
            with self._lock:
                self._tail += chunk
                del self._tail[: max(0, len(self._tail) - OUTPUT_TAIL)]

    def text(self) -> str:
        with self._lock:
            return bytes(self._tail).decode("utf-8", errors="replace")

    def close(self) -> bool:
        """Wait a moment for the end of the adapter's output; whether the reader has stopped (only then may
        the pipe be closed: a descriptor closed under a blocked reader could be reused by another file)."""
        self._thread.join(timeout=1.0)
        return not self._thread.is_alive()


class ProcessAdapter:
    """A client over an adapter command (``--adapter CMD``), spoken to over pipes.

    Every exchange is bounded: the request must be read and the answer line
    written within ``timeout`` seconds, the answer may not exceed
    ``max_answer`` bytes (never buffered beyond it), and must be strict UTF-8
    JSON.  Any failure raises :class:`AdapterError` naming the operation and
    what went wrong; the adapter is then unusable (later calls repeat the
    error).  The adapter runs in its own session and process group, and
    :meth:`close` ends the whole group."""

    def __init__(self, command: str, *, timeout: float = DEFAULT_TIMEOUT, max_answer: int = MAX_ANSWER) -> None:
        self.command = command
        self.timeout = timeout
        self.max_answer = max_answer
        self.protocol = PROTOCOL
        self.capabilities = Capabilities()  # what hello declares (issue 27): all until it says otherwise
        self._next = 0
        self._buffer = bytearray()
        self._broken: AdapterError | None = None
        self._closed = False
        try:
            argv = shlex.split(command)
        except ValueError as bad:
            raise AdapterError(f"cannot start adapter {command!r}: {bad}") from bad
        if not argv:
            raise AdapterError("cannot start adapter: the command is empty")
        try:
            self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                            start_new_session=True)
        except (OSError, ValueError) as failed:
            raise AdapterError(f"cannot start adapter {command!r}: {failed}") from failed
        assert self.process.stdin is not None and self.process.stdout is not None and self.process.stderr is not None
        self._errors = _ErrorTail(self.process.stderr.fileno())
        self._in = self.process.stdin.fileno()
        self._out = self.process.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)

    def hello(self) -> str:
        """The handshake: ``hello`` must name a protocol this driver reads (``sessionspec-adapter/1`` or ``/2``);
        it may declare the operations and features the adapter supports (capabilities.py)."""
        what = f"operation 'hello' (id {self._next + 1})"
        answer_ = self.call({"op": "hello"})
        self.protocol = check_hello(answer_, what)
        self.capabilities = from_hello(answer_, what)
        return self.protocol

    def call(self, op: Mapping[str, PlainJson]) -> Response:
        if self._broken is not None:
            raise self._broken
        self._next += 1
        what = f"operation {str(op.get('op'))[:40]!r} (id {self._next})"
        try:
            request = json.dumps({**op, "id": self._next}, sort_keys=True, ensure_ascii=False).encode("utf-8") + b"\n"
            deadline = time.monotonic() + self.timeout
            self._write(request, deadline, what)
            line = self._read_line(deadline, what)
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as bad:
                raise AdapterError(f"{what}: the answer is not valid UTF-8 (byte {bad.start}: {bad.reason})") from None
            try:
                message = json.loads(text)
            except (json.JSONDecodeError, RecursionError):
                raise AdapterError(f"{what}: the answer is not a JSON line: {text[:200]!r}") from None
            if not _depth_within(message, MAX_DEPTH):
                raise AdapterError(f"{what}: the answer nests deeper than {MAX_DEPTH} levels")
            return _response(message, self._next, what, self.protocol)
        except OperationRefused:
            raise  # the adapter answered (in sync): not broken
        except AdapterError as failed:
            self._broken = failed
            raise

    def _write(self, data: bytes, deadline: float, what: str) -> None:
        view = memoryview(data)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([], [self._in], [], remaining)[1]:
                raise AdapterError(f"{what}: the adapter did not read the request within {self.timeout:g} s")
            try:
                written = os.write(self._in, view[:_READ])
            except BlockingIOError:
                continue
            except OSError:
                raise AdapterError(f"{what}: the adapter stopped reading its input ({self._status()})") from None
            view = view[written:]

    def _read_line(self, deadline: float, what: str) -> bytes:
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                if end > self.max_answer:
                    raise AdapterError(f"{what}: the answer exceeds the {_size(self.max_answer)} limit")
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                return line
            if len(self._buffer) > self.max_answer:
                raise AdapterError(f"{what}: the answer exceeds the {_size(self.max_answer)} limit "
                                   f"(no newline in {_size(len(self._buffer))})")
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._out], [], [], remaining)[0]:
                partial = f" ({_size(len(self._buffer))} of an unfinished line)" if self._buffer else ""
                raise AdapterError(f"{what}: no answer within {self.timeout:g} s{partial}")
            try:
                chunk = os.read(self._out, min(_READ, self.max_answer + 1 - len(self._buffer)))
            except BlockingIOError:
                continue
            if not chunk:
                partial = " after half a line" if self._buffer else ""
                raise AdapterError(f"{what}: the adapter closed its output{partial} ({self._status()})")
            self._buffer += chunk

    def _status(self) -> str:
        """The adapter's exit status in words (it may take a moment to exit after closing its output).  Read
        without reaping it: until :meth:`close` reaps it, its process group id names only our processes."""
        deadline = time.monotonic() + 1.0
        while True:
            try:
                info = os.waitid(os.P_PID, self.process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return "exited"
            if info is not None:
                if info.si_code == os.CLD_EXITED:
                    return f"exited with code {info.si_status}"
                return f"killed by signal {info.si_status}"
            if time.monotonic() >= deadline:
                return "still running"
            time.sleep(0.02)

    def close(self) -> None:
        """Close its input, give it a moment to exit (none when it already failed), then end its whole
        process group.  A second call does nothing (the group id may name other processes by then)."""
        if self._closed:
            return
        self._closed = True
        assert self.process.stdin is not None and self.process.stdout is not None
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        deadline = time.monotonic() + (0.0 if self._broken is not None else min(self.timeout, 2.0))
        while time.monotonic() < deadline and not _exited_unreaped(self.process.pid):
            time.sleep(0.02)
        # The leader is alive or a zombie here, so its group id still names only our processes.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.process.stdout.close()
        assert self.process.stderr is not None
        if self._errors.close():
            self.process.stderr.close()

    def output_tail(self, lines: int = 20) -> str:
        """The last ``lines`` lines the adapter wrote on its standard error (for a crash report)."""
        return "\n".join(self._errors.text().splitlines()[-lines:])


def _exited_unreaped(pid: int) -> bool:
    """Whether ``pid`` (our child) has exited, without reaping it (so its group id stays reserved)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _size(n: int) -> str:
    return f"{n / (1024 * 1024):g} MiB" if n >= 1024 * 1024 else f"{n} bytes"


def serve_stdio(session: ModelSession, log: TextIO | None = None) -> int:
    """``serve`` on stdin/stdout.  A request line that is not UTF-8 is read with replacement characters and
    answered as it then reads (an ``error`` answer when it is malformed), never with a traceback."""
    sys.stdin.reconfigure(encoding="utf-8", errors="replace")  # type: ignore[union-attr]
    sys.stdout.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    try:
        return serve(session.handle, sys.stdin, sys.stdout, log)
    except BrokenPipeError:
        return 0  # the client went away
