#!/usr/bin/env node
// A partial implementation of the harness loop behind sessionspec-adapter/2, written from
// docs/conformance.md and docs/events.md alone, as an implementer half-way there would (issues 27, 45).
// It declares in `hello` the operations and the shapes (features) it implements: the kit skips the
// vectors that need anything else and conform generates nothing else.  It handles text and tool-call
// replies (tool errors included); it declares, but gets wrong, three shapes: an `empty` reply (it logs an
// empty text block instead of no content), a request-time inject and a request mutation (it ignores both),
// so the vectors that use them fail with a real, aligned diff and conform finds real divergences.
//
// `--undeclared`: hello declares nothing, so the kit learns what is missing from `unsupported` answers,
// whose words name what is refused (`unsupported: reply kind error-thrown`, `unsupported: agent option
// requestConfig` for an init, ...); `configure` and `fork` are refused as operations ("unsupported").
// `PARTIAL_ADAPTER_OPLOG=FILE`: append the name of every operation it executed (answered ok or rejected), one a
// line, so a test can count what it really ran.
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";

const DECLARED = ["init", "send", "log", "dispose", "resume"];
const FEATURES = ["tool-calls", "tool-error", "reply-empty", "request-inject", "request-mutation"];
const UNDECLARED = process.argv.includes("--undeclared");
const OPLOG = process.env.PARTIAL_ADAPTER_OPLOG;
let log = [], agent = {}, disposed = false, lastHeader = null;

function append(type, data, extra = {}) {
  const event = { type, seq: log.length, time: log.length, data, ...extra };
  log.push(event);
  return event;
}

function history() {
  const messages = [];
  for (const e of log) {
    if (e.type === "user/message") messages.push({ role: "user", content: e.data.content });
    else if (e.type === "assistant/message")
      messages.push({ role: "assistant", content: e.data.content, provenance: e.data.provenance });
    else if (e.type === "tool/result") {
      const block = { type: "tool-result", toolCallId: e.data.callId, content: e.data.content, isError: e.data.isError };
      const last = messages[messages.length - 1];
      if (last && last.role === "user" && last.content.every((b) => b.type === "tool-result")) last.content.push(block);
      else messages.push({ role: "user", content: [block] });
    }
  }
  return messages;
}

function header() {
  const h = { config: { provider: agent.provider ?? "mock", model: agent.model ?? "mock-1" } };
  if (agent.system) h.system = agent.system;
  if (agent.tools && agent.tools.length) h.tools = agent.tools;
  return h;
}

function stream(reply, turn, step) {
  const chunks = [], content = [];
  const push = (chunk) => chunks.push(append("assistant/chunk", { chunk, step, turn }).seq);
  let index = 0;
  const text = reply.text ?? "ok";
  if (text !== "" || reply.kind !== "tool-calls") {
    push({ type: "block-start", blockType: "text", index });
    for (const piece of reply.textChunks ?? [...text]) push({ type: "text-delta", index, text: piece });
    push({ type: "block-end", index, block: { type: "text", text } });
    content.push({ type: "text", text });
    index++;
  }
  for (const call of reply.toolCalls ?? []) {
    push({ type: "block-start", blockType: "tool-call", index });
    push({ type: "tool-call-delta", index, id: call.callId, name: call.name, argumentsDelta: call.arguments });
    const block = { type: "tool-call", id: call.callId, name: call.name, arguments: call.arguments };
    push({ type: "block-end", index, block });
    content.push(block);
    index++;
  }
  const usage = reply.usage === undefined ? [10, 10] : reply.usage;
  if (usage !== null) push({ type: "usage", usage: { inputTokens: usage[0], outputTokens: usage[1] } });
  push({ type: "finish", reason: { kind: reply.kind === "tool-calls" ? "tool-calls" : "stop" } });
  const data = { content, provenance: { provider: "mock", model: "mock-1" }, step, turn };
  if (usage !== null) data.usage = { inputTokens: usage[0], outputTokens: usage[1] };
  append("assistant/message", data, { sourceEventSeqs: chunks, surfaceOp: "append" });
  return reply.toolCalls ?? [];
}

function send(op) {
  if (disposed) return { reject: { rules: ["LOOP-1"], reason: "the loop instance was disposed" } };
  const start = log.length, requests = [], replies = [...(op.replies ?? [])];
  const turn = log.filter((e) => e.type === "turn/start").length + 1;
  append("turn/start", { turn, trigger: { kind: "message", source: op.prompt.source ?? { kind: "user" } } });
  append("user/message", { content: op.prompt.content, source: op.prompt.source ?? { kind: "user" } }, { surfaceOp: "append" });
  for (let step = 1; ; step++) {
    append("step/start", { step, turn });
    const h = header();
    if (lastHeader === null) append("request/header", { header: h, reason: "initial" });
    lastHeader = h;
    const request = { provider: h.config.provider, model: h.config.model, messages: history() };
    if (h.system) request.system = h.system;
    if (h.tools) request.tools = h.tools;
    requests.push(request);
    const calls = stream(replies.shift() ?? { kind: "text", text: "ok" }, turn, step);
    for (const call of calls) {
      const seq = append("tool/call", { arguments: call.arguments, callId: call.callId, name: call.name, step, turn }).seq;
      append("tool/result", { callId: call.callId, content: [{ type: "text", text: call.result }], isError: call.isError ?? false,
        step, turn }, { sourceEventSeqs: [seq], surfaceOp: "append" });
    }
    append("step/end", { step, turn });
    if (!calls.length) break;
  }
  append("turn/end", { reason: { kind: "completed" }, turn });
  return { ok: { appended: log.slice(start), requests, summaries: [] } };
}

// What this adapter does not implement, in words that name it (docs/conformance.md section 1.1); null: it
// implements the operation.  Checked before anything changes: a refused operation leaves the session as it was.
function refusal(op) {
  const agent = op.agent ?? {};
  if (agent.requestConfig && Object.keys(agent.requestConfig).length) return "unsupported: agent option requestConfig";
  if (agent.contributors && agent.contributors.length) return "unsupported: contributors";
  if (agent.compaction) return "unsupported: compaction";
  if (op.op !== "send") return null;
  if (op.interrupt) return "unsupported: interrupts";
  if (op.steering && op.steering.length) return "unsupported: steering";
  if (op.preStepError) return "unsupported: preStepError";
  const prompt = op.prompt ?? {};
  for (const key of ["blockReason", "submitError", "contexts"]) if (prompt[key]) return `unsupported: prompt ${key}`;
  for (const reply of op.replies ?? []) {
    if (reply.kind === "error-thrown" || reply.kind === "error-in-band") return `unsupported: reply kind ${reply.kind}`;
    for (const key of ["reasoning", "maxTokens", "continueWith", "stepResultError", "systemAfter", "toolsAfter"])
      if (reply[key]) return `unsupported: reply option ${key}`;
    for (const call of reply.toolCalls ?? []) if (call.deferred) return "unsupported: deferred context";
  }
  return null;
}

function handle(op) {
  if (UNDECLARED && (op.op === "configure" || op.op === "fork")) return { error: "unsupported" };
  const refused = UNDECLARED ? refusal(op) : null;
  if (refused) return { error: refused };
  switch (op.op) {
    case "hello":
      return { ok: UNDECLARED ? { protocol: "sessionspec-adapter/2", implementation: "partial-node" }
        : { protocol: "sessionspec-adapter/2", implementation: "partial-node", operations: DECLARED, features: FEATURES } };
    case "init":
      log = []; agent = op.agent ?? {}; disposed = false; lastHeader = null;
      return { ok: { length: 0 } };
    case "send": return send(op);
    case "log": return { ok: { log } };
    case "dispose": disposed = true; return { ok: {} };
    case "resume": disposed = false; lastHeader = null; return { ok: {} };
    default: return { error: "unsupported" };
  }
}

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  if (!line.trim()) return;
  const op = JSON.parse(line);
  const answer = handle(op);
  if (OPLOG && op.op !== "hello" && !("error" in answer)) appendFileSync(OPLOG, op.op + "\n");
  process.stdout.write(JSON.stringify({ id: op.id, ...answer }) + "\n");
});
