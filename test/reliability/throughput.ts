// "Load held" for `npm run reliability`: the compiled CLI as production runs it (logging to a file,
// metrics, tracing at 1 % over OTLP/gRPC to a collector on loopback) under wrk, or autocannon when
// wrk is missing, on keep-alive connections, the server pinned to CPU 0 and the load to CPU 1 as
// `npm run bench` does. Reports req/s, p99 and every error the load generator saw.
import { spawn } from 'node:child_process'
import { openSync } from 'node:fs'
import { mkdtemp, writeFile } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { startCollector } from '../bench/collector.js'
import { hasCommand, parseAutocannon, parseWrk, run, waitForPort } from '../bench/load-tools.js'
import { asItsShebangRuns } from '../fixtures/shebang.js'
import { closedPort } from '../fixtures/tcp.js'

export type Throughput = Readonly<{
  loadgen: string
  path: string
  connections: number
  seconds: number
  rps: number
  p99Ms: number
  requests: number
  /** Non-2xx answers, socket errors and timeouts. */
  errors: number
  isPinned: boolean
}>

export type ThroughputOptions = Readonly<{
  /** The repository root: dist/bin/svc.js and node_modules are found under it. */
  root: string
  seconds: number
  connections: number
  warmupSeconds: number
  /** A POST with a JSON body instead of GET /. */
  post?: Readonly<{ path: string; body: string }>
}>

export const throughput = async ({ root, seconds, connections, warmupSeconds, post }: ThroughputOptions): Promise<Throughput> => {
  const loadgen = process.env['RELIABILITY_LOADGEN'] ?? ((await hasCommand('wrk')) ? 'wrk' : 'autocannon')
  const isPinned = availableParallelism() >= 2 && (await hasCommand('taskset'))
  const pinned = (cpu: number, command: string, args: readonly string[]): [string, string[]] =>
    isPinned ? ['taskset', ['-c', String(cpu), command, ...args]] : [command, [...args]]
  const collector = await startCollector()
  const port = await closedPort()
  const dir = await mkdtemp(join(tmpdir(), 'svc-reliability-load-'))
  const log = openSync(join(dir, 'svc.log'), 'w')
  const [cmd, args] = pinned(0, process.execPath, [...asItsShebangRuns(join(root, 'dist/bin/svc.js')), '--port', String(port)])
  const env = { ...process.env, OTLP_ENDPOINT: `127.0.0.1:${collector.port}`, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' }
  const server = spawn(cmd, args, { cwd: root, stdio: ['ignore', log, 'inherit'], env })
  const url = `http://127.0.0.1:${port}${post?.path ?? '/'}`

  const load = async (duration: number): Promise<Omit<Throughput, 'loadgen' | 'path' | 'connections' | 'seconds' | 'isPinned'>> => {
    if (loadgen === 'wrk') {
      const script = join(dir, 'post.lua')
      if (post !== undefined)
        await writeFile(script, `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = ${JSON.stringify(post.body)}\n`)
      const [wrk, wrkArgs] = pinned(1, 'wrk', ['-t1', `-c${connections}`, `-d${duration}s`, '--latency', ...(post === undefined ? [] : ['-s', script]), url])
      const { stdout } = await run(wrk, wrkArgs)
      return parseWrk(stdout)
    }
    const body = post === undefined ? [] : ['-m', 'POST', '-H', 'content-type=application/json', '-b', post.body]
    const [node, nodeArgs] = pinned(1, process.execPath, [
      join(root, 'node_modules/autocannon/autocannon.js'),
      '-j',
      '-c',
      String(connections),
      '-d',
      String(duration),
      ...body,
      url,
    ])
    const { stdout } = await run(node, nodeArgs, { maxBuffer: 64 * 1024 * 1024 })
    return parseAutocannon(stdout)
  }

  try {
    await waitForPort(port)
    await load(warmupSeconds)
    return { loadgen, path: `${post === undefined ? 'GET' : 'POST'} ${post?.path ?? '/'}`, connections, seconds, isPinned, ...(await load(seconds)) }
  } finally {
    server.kill('SIGKILL')
    collector.close()
  }
}
