// What the payload writer (writer.ts) hands its batches to: the file (file-sink.ts) or an HTTP sink
// (http-sink.ts). One write at a time: the writer awaits each before the next. The writer encodes a
// batch itself, in slices of the loop (writer.ts), framed as the sink says: a sink only sends bytes.
import { CodedError } from '../../core/errors.js'

/** How a batch's events are joined into its bytes: `open`, the events with `separator` between them, `close`. */
export type Frame = Readonly<{ open: string; separator: string; close: string }>

export type Sink = Readonly<{
  /** How long an event may wait for its batch: a tenth of a second for a file, a sink's flush interval for its POSTs. */
  lingerMs: number
  /** How the writer frames a batch for this sink. */
  frame: Frame
  /** Writes one batch, framed (`frame`) and encoded, in pieces; rejects with why it could not, `signal` aborting it past its timeout. */
  write(batch: readonly Buffer[], signal: AbortSignal): Promise<void>
  /** Releases what the sink holds open (the file); never rejects. */
  close(): Promise<void>
}>

/** A sink that did not take a batch: its message is the reason logged (`HTTP 503`, `connection refused`). */
export class SinkError extends CodedError<'SINK_FAILED'> {
  override name = 'SinkError'
}

/** A batch's length in bytes. */
export const lengthOf = (batch: readonly Buffer[]): number => batch.reduce((sum, piece) => sum + piece.length, 0)
