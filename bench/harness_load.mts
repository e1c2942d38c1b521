/**
 * The real harness's own cold load + validation of one sessionspec log, timed (issue 26).
 *
 * Run by bench/harness (which passes the harness checkout and its runtime):
 *
 *   node tsx/dist/cli.mjs --tsconfig HARNESS/tsconfig.json bench/harness_load.mts HARNESS LOG [REPEAT]
 *
 * Nothing of the harness is copied here: every step is the harness's own code at HARNESS, imported
 * through its tsconfig paths.  The steps are those of its cold load (session-persistence
 * coordinator `loadCore` over the JSONL backend `readPrefix`), on the same bytes `sessionspec check`
 * reads:
 *
 *   read      node:fs readFile of the log (the backend's first step);
 *   scan      session-persistence-jsonl `scanLog`: split the lines, JSON.parse every record, expand
 *             packed chunk rows (`decodeStorageRecord`), keep the contiguous prefix.  A sessionspec log
 *             has no session header line, so one is put in front of the bytes (the harness's own
 *             `toHeaderLine` of a fixed header); the events are the file's;
 *   validate  `ctx.sessions.create(id, { seed: events, meta })` in a cordis Context with the
 *             invariant service and the session invariant companion: the Session constructor's seed
 *             validation (envelope, lossless JSON, contiguous seq, surface transitions) and the
 *             companion's replay of the seed on `session/created`; the repair closers of an open last
 *             turn (`interruptedTurnClosers`) are computed first, as `loadCore` does.
 *
 * Prints one JSON line: per step the best-of-REPEAT CPU seconds (process.cpuUsage, user + system) and
 * wall seconds, the event count, and the peak RSS of this process (process.resourceUsage().maxRSS).
 */

import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

const [harness, logPath, repeatText] = process.argv.slice(2)
if (harness === undefined || logPath === undefined) {
  process.stderr.write('usage: harness_load.mts HARNESS LOG [REPEAT]\n')
  process.exit(2)
}
const repeat = Math.max(1, Number(repeatText ?? 3))

// stdout carries the one result line; the harness's logger writes elsewhere.
console.log = (...args: unknown[]) => { process.stderr.write(args.map(String).join(' ') + '\n') }

const format = await import(join(harness, 'packages/session-persistence/session-persistence-jsonl/src/format.ts'))
const session = await import('@deepseek-ai/dsh-session')
const invariants = await import('@deepseek-ai/dsh-invariants')
const sessionInvariant = await import('@deepseek-ai/dsh-session/invariant')
const { Context } = await import('cordis')

interface Timing { cpu: number; wall: number }

async function timed<T>(action: () => Promise<T> | T): Promise<{ value: T; timing: Timing }> {
  const cpu0 = process.cpuUsage()
  const wall0 = performance.now()
  const value = await action()
  const cpu = process.cpuUsage(cpu0)
  return { value, timing: { cpu: (cpu.user + cpu.system) / 1e6, wall: (performance.now() - wall0) / 1e3 } }
}

const META = { version: 1, id: session.SessionId('sessionspec-bench'), createdAt: 0, delegationDepth: 0 }
const headerBytes = Buffer.from(JSON.stringify(format.toHeaderLine(META)) + '\n', 'utf8')

async function validate(events: unknown[], meta: unknown): Promise<number> {
  const ctx = new Context()
  ctx.logger.exporter({ colors: false, levels: { default: 1 }, export: () => {} })
  await ctx.plugin(invariants.default, { enabled: true })
  await ctx.plugin(session.default)
  await ctx.plugin(sessionInvariant as any)
  try {
    const closers = session.interruptedTurnClosers(events as any)
    const created = (ctx as any).sessions.create(session.SessionId('sessionspec-bench'), {
      seed: [...events, ...closers], meta,
    })
    return created.events.length
  } finally {
    await ctx.fiber.dispose()
  }
}

const best: Record<string, Timing> = {}
let events = 0
let closers = 0
for (let round = 0; round < repeat; round += 1) {
  const read = await timed(() => readFile(logPath))
  const scan = await timed(() => format.scanLog(Buffer.concat([headerBytes, read.value])))
  const check = await timed(() => validate(scan.value.events, scan.value.meta))
  events = scan.value.events.length
  closers = check.value - events
  for (const [step, timing] of [['read', read.timing], ['scan', scan.timing], ['validate', check.timing]] as const) {
    const seen = best[step]
    if (seen === undefined || timing.cpu < seen.cpu) best[step] = timing
  }
  const total = { cpu: read.timing.cpu + scan.timing.cpu + check.timing.cpu, wall: read.timing.wall + scan.timing.wall + check.timing.wall }
  if (best.total === undefined || total.cpu < best.total.cpu) best.total = total
}

process.stdout.write(JSON.stringify({
  log: logPath, events, closers, repeat, steps: best,
  maxRssKb: process.resourceUsage().maxRSS, node: process.version,
}) + '\n')
