// Redis check: RESP `PING`, after `AUTH` when a password is configured. Both commands go out in one
// write (Redis answers pipelined commands in order), so an authenticated check costs one round trip.
import { failed } from '../core/result.js'
import { OK, tcpCheck, UNEXPECTED_REPLY, type Check, type Outcome, type Target } from './check.js'

export type RedisTarget = Target & Readonly<{ password?: string }>

const CRLF = '\r\n'

/** A command as a RESP array of bulk strings, which carries any byte, spaces and CRLF included. */
const command = (...args: readonly string[]): string => `*${args.length}${CRLF}${args.map((arg) => `$${Buffer.byteLength(arg)}${CRLF}${arg}${CRLF}`).join('')}`

/** An empty password counts as none (a variable set to ''), as Redis itself cannot require one. */
export const redisCheck = ({ host, port, password = '' }: RedisTarget, timeoutMs: number): Check => {
  const hasPassword = password !== ''
  const request = Buffer.from(hasPassword ? command('AUTH', password) + command('PING') : command('PING'))
  // One expected status line per command, in order.
  const replies = hasPassword ? ['+OK', '+PONG'] : ['+PONG']
  // Error texts end up in /ready bodies and logs: a server that echoes the password must not leak it.
  const redact = hasPassword ? (text: string) => text.replaceAll(password, '***') : (text: string) => text

  const judge = (received: Buffer): Outcome | undefined => {
    let start = 0
    for (const expected of replies) {
      const end = received.indexOf(CRLF, start)
      if (end === -1) return undefined
      const line = received.toString('utf8', start, end)
      // An error reply (`-NOAUTH …`, `-WRONGPASS …`, `-ERR …`) is the reason, as Redis words it.
      if (line.startsWith('-')) return failed(redact(line.slice(1)))
      if (line !== expected) return UNEXPECTED_REPLY
      start = end + CRLF.length
    }
    return OK
  }

  return tcpCheck({ host, port }, timeoutMs, { request, judge })
}
