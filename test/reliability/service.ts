// The real CLI in a child process, however the caller runs TypeScript: the tests pass a launcher
// running bin/svc.ts under tap's loader, the scripts one running the compiled dist/bin/svc.js.
import type { Child } from '../fixtures/spawn.js'
import { jsonLines } from '../fixtures/spawn.js'

/** Starts the CLI with these flags and variables (added to the environment). */
export type Launch = (args: readonly string[], env: Readonly<Record<string, string>>) => Child

export type Service = Readonly<{ child: Child; port: number; base: string }>

/** Launches the CLI on 127.0.0.1:0 and waits for `application_started`; kills it if that never comes. */
export const startService = async (launch: Launch, env: Readonly<Record<string, string>>): Promise<Service> => {
  const child = launch(['--host', '127.0.0.1', '--port', '0'], env)
  try {
    const started = await child.waitForEvent('application_started', 60_000)
    const port = Number(started['port'])
    return { child, port, base: `http://127.0.0.1:${port}` }
  } catch (error: unknown) {
    child.proc.kill('SIGKILL')
    throw error
  }
}

/** SIGTERM, then the exit; SIGKILL if it has not exited within `withinMs`. */
export const stopService = async ({ child }: Service, withinMs = 30_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> => {
  if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill('SIGTERM')
  const timer = setTimeout(() => child.proc.kill('SIGKILL'), withinMs)
  try {
    return await child.exited
  } finally {
    clearTimeout(timer)
  }
}

/** Every JSON line the service wrote to stdout (other lines, if any, skipped). */
export const logLines = (child: Child): Array<Record<string, unknown>> =>
  jsonLines(
    child
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .join('\n'),
  )

/** request_completed lines by request id: how many times each id was logged, and its trace id. */
export const completedById = (lines: ReadonlyArray<Record<string, unknown>>): Map<string, { count: number; traceId: string | undefined }> => {
  const byId = new Map<string, { count: number; traceId: string | undefined }>()
  for (const line of lines) {
    if (line['event'] !== 'request_completed') continue
    const id = String(line['request_id'])
    const seen = byId.get(id)
    const traceId = typeof line['trace_id'] === 'string' ? line['trace_id'] : undefined
    if (seen === undefined) byId.set(id, { count: 1, traceId })
    else seen.count++
  }
  return byId
}

/** Sum of every sample of a metric family in a Prometheus text exposition (0 when absent). */
export const sumOf = (text: string, name: string, labels: Readonly<Record<string, string>> = {}): number => {
  let sum = 0
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue
    sum += Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return sum
}
