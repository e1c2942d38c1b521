"""The server loop and the two clients of the adapter protocol: :class:`InProcessAdapter` (the model
in this process) and :class:`ProcessAdapter` (an adapter command over pipes).
"""


import contextlib
import json
import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping
from typing import TextIO

from sessionspec.conformance.adapter import ModelSession
from sessionspec.conformance.protocol import AdapterError, OperationError, Response
from sessionspec.conformance.vector_format import FormatError, PlainJson

# --------------------------------------------------------------------------- server and clients


Handler = Callable[[Mapping[str, object]], Response]


def answer(handler: Handler, line: str) -> str:
    """One request line -> one response line (never raises)."""
    try:
        request = json.loads(line)
    except json.JSONDecodeError as bad:
        return json.dumps({"id": None, "error": f"not JSON: {bad}"}, sort_keys=True)
    ident = request.get("id") if isinstance(request, dict) else None
    if not isinstance(request, dict):
        return json.dumps({"id": None, "error": "an operation is a JSON object"}, sort_keys=True)
    try:
        result = handler(request)
    except (OperationError, FormatError) as bad:
        return json.dumps({"id": ident, "error": str(bad)}, sort_keys=True, ensure_ascii=False)
    if set(result) == {"reject"}:
        return json.dumps({"id": ident, "reject": result["reject"]}, sort_keys=True, ensure_ascii=False)
    return json.dumps({"id": ident, "ok": result}, sort_keys=True, ensure_ascii=False)


def serve(handler: Handler, stdin: TextIO, stdout: TextIO) -> int:
    """The server loop: one answer line per request line, flushed, until EOF."""
    for line in stdin:
        if not line.strip():
            continue
        stdout.write(answer(handler, line) + "\n")
        stdout.flush()
    return 0


def _response(message: object, ident: int) -> Response:
    if not isinstance(message, dict) or message.get("id") != ident:
        raise AdapterError(f"answer to operation {ident} is not {{id, ok|reject|error}}: {str(message)[:200]}")
    if "error" in message:
        raise AdapterError(f"the adapter refused operation {ident} as malformed: {message['error']}")
    if "reject" in message:
        reject = message["reject"]
        if not isinstance(reject, dict) or not isinstance(reject.get("rules"), list):
            raise AdapterError(f"operation {ident}: a rejection is {{rules: [IDs], reason}}")
        return {"reject": reject}
    ok = message.get("ok")
    if not isinstance(ok, dict):
        raise AdapterError(f"operation {ident}: ok must carry an object")
    return ok


class InProcessAdapter:
    """A client over a :class:`ModelSession` in this process (the reference side of ``conform``)."""

    def __init__(self, session: ModelSession | None = None) -> None:
        self.session = session or ModelSession()
        self._next = 0

    def call(self, op: Mapping[str, PlainJson]) -> Response:
        self._next += 1
        message = json.loads(answer(self.session.handle, json.dumps({**op, "id": self._next})))
        return _response(message, self._next)

    def close(self) -> None:
        return None


class ProcessAdapter:
    """A client over an adapter command (``--adapter CMD``), spoken to over pipes."""

    def __init__(self, command: str) -> None:
        self.command = command
        try:
            self.process = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            text=True, encoding="utf-8", bufsize=1)
        except OSError as failed:
            raise AdapterError(f"cannot start adapter {command!r}: {failed}") from failed
        self._next = 0

    def call(self, op: Mapping[str, PlainJson]) -> Response:
        self._next += 1
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(json.dumps({**op, "id": self._next}, sort_keys=True, ensure_ascii=False) + "\n")
            self.process.stdin.flush()
        except BrokenPipeError as gone:
            raise AdapterError(f"adapter {self.command!r} exited") from gone
        line = self.process.stdout.readline()
        if not line:
            raise AdapterError(f"adapter {self.command!r} closed its output (exit code {self.process.poll()})")
        try:
            message = json.loads(line)
        except json.JSONDecodeError as bad:
            raise AdapterError(f"adapter wrote a line that is not JSON: {line[:200]!r}") from bad
        return _response(message, self._next)

    def close(self) -> None:
        if self.process.stdin is not None:
            # An adapter that already exited leaves nothing to flush.
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


def serve_stdio(session: ModelSession) -> int:
    sys.stdin.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    sys.stdout.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    return serve(session.handle, sys.stdin, sys.stdout)
