// HTTP(S) check: one GET expecting 2xx. Redirects are not followed (a 3xx says the configured URL is
// not the health endpoint), the body is never read, and no keep-alive socket outlives the attempt.
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { describeError } from '../core/net/describe-error.js'
import { failed } from '../core/result.js'
import { attempt, OK, type Check } from './check.js'

export const httpCheck = (url: URL, timeoutMs: number): Check => {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest
  return () =>
    attempt(timeoutMs, (done) => {
      // `agent: false`: the global agent keeps sockets alive (Node ≥ 19); this one gets a socket of
      // its own with `Connection: close`, destroyed whichever way the attempt ends.
      const req = request(url, { agent: false }, (res) => {
        // Always set on a response to a client request; only server-side messages lack it.
        const status = res.statusCode as number
        // The verdict is in the status line: drop the body unread rather than download it.
        res.destroy()
        done(status >= 200 && status < 300 ? OK : failed(`HTTP ${status}`))
      })
      req.on('error', (error) => done(failed(describeError(error))))
      req.end()
      return () => req.destroy()
    })
}
