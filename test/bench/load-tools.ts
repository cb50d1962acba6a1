// What the benchmark and the reliability report share about driving load: finding the tools,
// waiting for a server's port, wrk's scripts, and reading wrk's and autocannon's reports and a server's /metrics.
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'

export const run = promisify(execFile)

export type LoadResult = Readonly<{ rps: number; p99Ms: number; requests: number; errors: number }>

export const hasCommand = async (name: string): Promise<boolean> =>
  run('sh', ['-c', `command -v ${name}`]).then(
    () => true,
    () => false,
  )

/** Resolves once something accepts connections on the loopback port (15 s at most). */
export const waitForPort = async (port: number): Promise<void> => {
  for (let i = 0; i < 300; i++) {
    const isOpen = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => resolve(socket.end() !== undefined)).on('error', () => resolve(false))
    })
    if (isOpen) return
    await sleep(50)
  }
  throw new Error(`nothing listens on ${port}`)
}

/** A percentile of wrk --latency's distribution (50, 75, 90 or 99) in ms; NaN when missing. wrk pads seconds (`2.40s `). */
export const wrkLatencyMs = (stdout: string, percent: 50 | 75 | 90 | 99): number => {
  const found = new RegExp(`^\\s+${percent}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(stdout)
  return found === null ? Number.NaN : Number(found[1]) * ({ us: 0.001, ms: 1, s: 1000 }[found[2] as string] ?? 1)
}

/** wrk --latency output: req/s, p99, requests, and errors (non-2xx/3xx answers and every socket error). */
export const parseWrk = (stdout: string): LoadResult => {
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout)
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]),
    p99Ms: wrkLatencyMs(stdout, 99),
    requests: Number(/(\d+) requests in/.exec(stdout)?.[1]),
    errors:
      Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? '0') +
      (socketErrors === null ? 0 : socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0)),
  }
}

/**
 * A wrk script POSTing `bodies` in turn, one a line of a file beside it in `dir`, so formatting each
 * request is wrk's CPU, not the server's; `tail` is Lua appended to it (a `done` function).
 */
export const wrkBodiesScript = async (dir: string, bodies: readonly string[], tail = ''): Promise<string> => {
  const lines = join(dir, 'bodies.jsonl')
  await writeFile(lines, `${bodies.join('\n')}\n`)
  const script = join(dir, 'post.lua')
  await writeFile(
    script,
    'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n' +
      `local bodies = {}\nfor line in io.lines(${JSON.stringify(lines)}) do bodies[#bodies + 1] = line end\n` +
      `local next = 0\nrequest = function()\n  next = next % #bodies + 1\n  return wrk.format(nil, nil, nil, bodies[next])\nend\n${tail}`,
  )
  return script
}

/** autocannon -j output. */
export const parseAutocannon = (stdout: string): LoadResult => {
  const report = JSON.parse(stdout) as {
    requests: { average: number; total: number }
    latency: { p99: number }
    non2xx: number
    errors: number
    timeouts: number
  }
  return { rps: report.requests.average, p99Ms: report.latency.p99, requests: report.requests.total, errors: report.non2xx + report.errors + report.timeouts }
}

/** The sum of every sample of `name` in a Prometheus text exposition whose labels include `labels`. */
export const metricTotal = (text: string, name: string, labels: Readonly<Record<string, string>> = {}): number => {
  let sum = 0
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)/.exec(line)
    if (match?.[1] !== name) continue
    const found = new Map<string, string>()
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) found.set(pair[1] as string, pair[2] as string)
    if (Object.entries(labels).every(([k, v]) => found.get(k) === v)) sum += Number(match[3])
  }
  return sum
}
