// The scale section's clients (scale.ts), each a process of its own on the load's CPU, so that
// neither reading a /metrics body nor the bench's own work delays the client that measures. One
// process scrapes, another probes; told over IPC:
//   { scrape: url }            one GET; answers { ms, bytes }: the time to the body's last byte
//   { every: url, ms }         one GET every `ms` (as Prometheus scrapes) until { stop: true }; answers { scrapes }
//   { probe: url, ms?, sockets? }  a GET every `ms` (1 unless given) on at most `sockets` keep-alive
//                              sockets (16 unless given; a probe waits for one) until { stop: true };
//                              answers { probes }: each one's wall-clock send time and latency
// Each body is counted and dropped, never decoded. A process that scrapes runs in Linux's idle
// scheduling class (SCHED_IDLE), where it never preempts wrk and runs only while wrk waits: on the
// load's CPU, reading a 4 MiB body at normal priority held wrk off the CPU while answers waited,
// and that showed as the service's latency; at nice 19 it could still preempt wrk on waking.
// Prometheus scrapes from another machine.
import { spawnSync } from 'node:child_process'
import { Agent, get } from 'node:http'
import { setPriority } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'

export type ScraperMessage = Readonly<{ scrape: string } | { every: string; ms: number } | { probe: string; ms?: number; sockets?: number } | { stop: true }>
export type ScrapeTaken = Readonly<{ ms: number; bytes: number }>
/** A `GET /` sent; `sent` in Unix ms (fractional), the clock the service's log lines use. */
export type Probe = Readonly<{ sent: number; ms: number }>

export const wallNow = (): number => performance.timeOrigin + performance.now()

/** One connection kept between scrapes, as Prometheus keeps one to each target. */
const scrapes = new Agent({ keepAlive: true, maxSockets: 1 })

const scrape = (url: string): Promise<ScrapeTaken> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    get(url, { agent: scrapes }, (res) => {
      let bytes = 0
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length
      })
      res.on('end', () => resolve({ ms: performance.now() - started, bytes }))
    }).on('error', reject)
  })

/** GETs `url` every `ms` milliseconds on up to `sockets` sockets, each one's latency kept, until `stop`. */
const probe = (url: string, ms: number, sockets: number): { stop(): Promise<Probe[]> } => {
  const agent = new Agent({ keepAlive: true, maxSockets: sockets })
  const probes: Probe[] = []
  const pending = new Set<Promise<void>>()
  const send = (): void => {
    const sent = wallNow()
    const done = new Promise<void>((resolve) => {
      get(url, { agent }, (res) => {
        res.resume()
        res.on('end', () => resolve(void probes.push({ sent, ms: wallNow() - sent })))
      }).on('error', () => resolve())
    })
    pending.add(done)
    void done.then(() => pending.delete(done))
  }
  const timer = setInterval(send, ms)
  return {
    stop: async () => {
      clearInterval(timer)
      await Promise.all(pending)
      agent.destroy()
      return probes
    },
  }
}

let stopping: (() => Promise<unknown>) | undefined
const reply = (message: unknown): void => {
  process.send?.(message)
}

let isYielding = false
/** Every thread of this process into SCHED_IDLE (util-linux `chrt`), or nice 19 where that cannot be; once. */
const yieldToLoad = (): void => {
  if (isYielding) return
  isYielding = true
  const { status } = spawnSync('chrt', ['--all-tasks', '--idle', '--pid', '0', String(process.pid)], { stdio: 'ignore' })
  if (status !== 0) setPriority(19)
}

process.on('message', async (message: ScraperMessage) => {
  if ('scrape' in message || 'every' in message) yieldToLoad()
  if ('scrape' in message) reply(await scrape(message.scrape))
  else if ('stop' in message) {
    // A prober answers its probes; a repeating scraper answers from its loop, once it ends.
    const answer = await stopping?.()
    if (answer !== undefined) reply(answer)
  } else if ('probe' in message) {
    const prober = probe(message.probe, message.ms ?? 1, message.sockets ?? 16)
    stopping = async () => ({ probes: await prober.stop() })
  } else {
    let isRepeating = true
    let scrapes = 0
    stopping = async () => {
      isRepeating = false
      return undefined
    }
    while (isRepeating) {
      const { ms } = await scrape(message.every)
      scrapes++
      await sleep(Math.max(0, message.ms - ms))
    }
    reply({ scrapes })
  }
})
