// The scale section's scraper (scale.ts), a process of its own so that reading a /metrics body never
// delays the client in the benchmark's process that measures the service's event loop. Told over IPC:
//   { scrape: url }            one GET; answers { ms, bytes }: the time to the body's last byte
//   { every: url, ms }         one GET every `ms` (as Prometheus scrapes) until { stop: true }; answers { scrapes }
// Each body is counted and dropped, never decoded.
import { get } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'

export type ScraperMessage = Readonly<{ scrape: string } | { every: string; ms: number } | { stop: true }>
export type ScrapeTaken = Readonly<{ ms: number; bytes: number }>

const scrape = (url: string): Promise<ScrapeTaken> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    get(url, (res) => {
      let bytes = 0
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length
      })
      res.on('end', () => resolve({ ms: performance.now() - started, bytes }))
    }).on('error', reject)
  })

let isRepeating = false
const reply = (message: unknown): void => {
  process.send?.(message)
}

process.on('message', async (message: ScraperMessage) => {
  if ('scrape' in message) reply(await scrape(message.scrape))
  else if ('stop' in message) isRepeating = false
  else {
    isRepeating = true
    let scrapes = 0
    while (isRepeating) {
      const { ms } = await scrape(message.every)
      scrapes++
      await sleep(Math.max(0, message.ms - ms))
    }
    reply({ scrapes })
  }
})
