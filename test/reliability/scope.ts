// The fixtures in test/fixtures/ take tap's Test to register their teardowns (and, for a missing
// Debian tool, to skip). The scripts, which run without tap, hand them this stand-in: it keeps the
// teardowns, runs them in reverse order on `close`, and records a skip or a failure as a message.
import type { Test } from 'tap'

export type Scope = Readonly<{
  /** What to pass where a fixture expects a Test. */
  test: Test
  /** Messages of the fixture's skips and failures (a tool not installed). */
  notes(): readonly string[]
  close(): Promise<void>
}>

export const createScope = (): Scope => {
  const teardowns: Array<() => unknown> = []
  const notes: string[] = []
  // The fixtures call only these three methods of Test.
  const stand = {
    teardown: (fn: () => unknown): void => void teardowns.push(fn),
    pass: (message: string): void => void notes.push(message),
    fail: (message: string): void => void notes.push(message),
  }
  return {
    test: stand as unknown as Test,
    notes: () => notes,
    close: async () => {
      for (const fn of teardowns.reverse()) await fn()
      teardowns.length = 0
    },
  }
}
