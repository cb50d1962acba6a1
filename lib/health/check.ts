// What every dependency check shares (lib/README.md §9): the result shape, one hard timeout around
// the whole attempt, latency, and a TCP exchange that always destroys its socket. Error texts come
// from lib/core/net/describe-error.ts, short and stable: they are shown in /ready bodies.
import { connect } from 'node:net'
import { CONNECTION_CLOSED, describeError } from '../core/net/describe-error.js'
import { failed, succeeded, type Result } from '../core/result.js'

/** A component's status in the probes' bodies: `skipped` when its variable is unset, never a check's result. */
export const CHECK_STATUSES = ['ok', 'fail', 'skipped'] as const
export type CheckStatus = (typeof CHECK_STATUSES)[number]

export type CheckResult = Readonly<{ status: Exclude<CheckStatus, 'skipped'>; latency_ms: number; error?: string }>
/** Runs one attempt against a dependency. Never rejects and never throws: every failure is a result. */
export type Check = () => Promise<CheckResult>

export type Target = Readonly<{ host: string; port: number }>

/** How an attempt ends (lib/core/result.ts): OK when the dependency answered as it should, else the failure, short. */
export type Outcome = Result<undefined, string>

/** The one success, built once and shared by every attempt. */
export const OK: Outcome = Object.freeze(succeeded(undefined))

/**
 * A protocol's half of a short TCP exchange, built once per check.
 * `judge` sees everything received so far and returns an Outcome, or `undefined` to wait for more.
 */
export type Exchange = Readonly<{
  request: Buffer
  judge(received: Buffer): Outcome | undefined
}>

/** The failure of a peer that does not speak the protocol, built once. */
export const UNEXPECTED_REPLY: Outcome = Object.freeze(failed('unexpected reply'))

const CLOSED: Outcome = Object.freeze(failed(CONNECTION_CLOSED))

// Our replies are a byte or a line or two; a peer that keeps talking is not the protocol we speak,
// and must not make us buffer without bound.
const MAX_REPLY_BYTES = 4096

/**
 * Runs one attempt under a hard timeout and settles it exactly once. `start` begins the work,
 * calls `done` (never synchronously) when it knows the outcome, and returns how to release what it
 * holds; that release runs whichever way the attempt ends, the timeout included.
 */
export const attempt = (timeoutMs: number, start: (done: (outcome: Outcome) => void) => () => void): Promise<CheckResult> =>
  new Promise((resolve) => {
    const started = performance.now()
    let release = (): void => {}
    let isSettled = false
    const done = (outcome: Outcome): void => {
      if (isSettled) return
      isSettled = true
      clearTimeout(timer)
      release()
      const latency_ms = Math.round((performance.now() - started) * 10) / 10
      resolve(outcome.ok ? { status: 'ok', latency_ms } : { status: 'fail', latency_ms, error: outcome.reason })
    }
    const timer = setTimeout(done, timeoutMs, failed(`timeout after ${timeoutMs} ms`))
    try {
      release = start(done)
    } catch (error: unknown) {
      // Invalid options (a bad port, an unsupported URL scheme) throw synchronously; a check must not.
      done(failed(describeError(error)))
    }
  })

/** Connects, sends the request, and lets the protocol judge the reply; the socket never outlives the attempt. */
export const tcpCheck =
  ({ host, port }: Target, timeoutMs: number, { request, judge }: Exchange): Check =>
  () =>
    attempt(timeoutMs, (done) => {
      let received: Buffer = Buffer.alloc(0)
      const socket = connect({ host, port }, () => socket.write(request))
      socket.on('data', (chunk: Buffer) => {
        // Replies may arrive split across TCP segments: judge the whole so far, not the chunk.
        received = received.length === 0 ? chunk : Buffer.concat([received, chunk])
        const outcome = judge(received)
        if (outcome !== undefined) done(outcome)
        else if (received.length > MAX_REPLY_BYTES) done(UNEXPECTED_REPLY)
      })
      socket.on('error', (error) => done(failed(describeError(error))))
      // Closed before the protocol reached a verdict (after a verdict, `done` ignores this).
      socket.on('close', () => done(CLOSED))
      return () => socket.destroy()
    })
