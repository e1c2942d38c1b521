"""A hostile adapter for the driver tests: the model behind the protocol, misbehaving on command.

    python tests/hostile_adapter.py BEHAVIOUR[,BEHAVIOUR...]

The k-th request gets the k-th behaviour (the last one repeats).  Behaviours:

- ``model``: answer as the model does (``sessionspec serve-model``);
- ``hang``: never answer (keep reading);
- ``deaf``: never read again and never answer;
- ``half``: write half an answer line, then hang;
- ``huge``: write bytes without a newline, forever (1 MiB at a time);
- ``badutf8``: answer with a byte that is not UTF-8;
- ``die``: exit with code 7 without answering;
- ``scream``: write two lines on standard error, then exit with code 7 without answering;
- ``wrongid``: answer as the model, under another id;
- ``noprotocol``: answer ``hello`` without a ``protocol``;
- ``hello1``: answer ``hello`` as a ``sessionspec-adapter/1`` adapter;
- ``error``: answer ``{"error": "unsupported"}``;
- ``garbage``: answer a line that is not JSON;
- ``deep``: answer a JSON value nested 100,000 levels deep;
- ``norule``: answer as the model, but a rejection names no rule (``sessionspec-adapter/2``);
- ``spawn``: hang; before anything else the adapter started a grandchild that sleeps and writes its pid to
  ``$HOSTILE_PIDFILE`` (to test that the whole process group is ended).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def main() -> int:
    behaviours = (sys.argv[1] if len(sys.argv) > 1 else "model").split(",")
    if "spawn" in behaviours:
        subprocess.Popen([sys.executable, "-c", "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid()));"
                          " time.sleep(60)", os.environ["HOSTILE_PIDFILE"]])

    from sessionspec.conformance.adapter.driver import answer
    from sessionspec.conformance.adapter.session import ModelSession

    session = ModelSession()
    out = sys.stdout.buffer
    count = 0
    while True:
        raw = sys.stdin.buffer.readline()
        if not raw:
            return 0
        behaviour = behaviours[min(count, len(behaviours) - 1)]
        count += 1
        line = answer(session.handle, raw.decode("utf-8"))
        match behaviour:
            case "model":
                out.write(line.encode("utf-8") + b"\n")
            case "hang" | "spawn":
                while sys.stdin.buffer.readline():
                    pass
                time.sleep(60)
            case "deaf":
                time.sleep(60)
            case "half":
                out.write(line.encode("utf-8")[: max(1, len(line) // 2)])
                out.flush()
                time.sleep(60)
            case "huge":
                block = b"x" * (1 << 20)
                while True:
                    out.write(block)
                    out.flush()
            case "badutf8":
                message = json.loads(line)
                out.write(json.dumps({"id": message["id"], "ok": {"x": "@"}}).encode("utf-8").replace(b"@", b"\xff") + b"\n")
            case "die":
                os._exit(7)
            case "scream":
                sys.stderr.write("hostile_adapter: about to fail\nhostile_adapter: fatal: out of cheese\n")
                sys.stderr.flush()
                os._exit(7)
            case "wrongid":
                message = json.loads(line)
                message["id"] = (message["id"] or 0) + 1000
                out.write(json.dumps(message).encode("utf-8") + b"\n")
            case "noprotocol":
                message = json.loads(line)
                out.write(json.dumps({"id": message["id"], "ok": {"implementation": "hostile"}}).encode("utf-8") + b"\n")
            case "hello1":
                message = json.loads(line)
                message["ok"]["protocol"] = "sessionspec-adapter/1"
                out.write(json.dumps(message).encode("utf-8") + b"\n")
            case "error":
                message = json.loads(line)
                out.write(json.dumps({"id": message["id"], "error": "unsupported"}).encode("utf-8") + b"\n")
            case "garbage":
                out.write(b"this is not json\n")
            case "deep":
                message = json.loads(line)
                out.write(b'{"id": %d, "ok": {"x": ' % message["id"] + b"[" * 100_000 + b"]" * 100_000 + b"}}\n")
            case "norule":
                message = json.loads(line)
                if "reject" in message:
                    message["reject"] = {"reason": "refused"}
                out.write(json.dumps(message).encode("utf-8") + b"\n")
            case other:
                print(f"hostile_adapter: unknown behaviour {other}", file=sys.stderr)
                return 2
        out.flush()


if __name__ == "__main__":
    sys.exit(main())
