// What the payload writer (writer.ts) hands its batches to: the file (file-sink.ts) or an HTTP sink
// (http-sink.ts). One write at a time: the writer awaits each before the next.
import { CodedError } from '../../core/errors.js'

export type Sink = Readonly<{
  /** How long an event may wait for its batch: a tenth of a second for a file, a sink's flush interval for its POSTs. */
  lingerMs: number
  /** Writes one batch, each event its JSON text; rejects with why it could not, `signal` aborting it past its timeout. */
  write(events: readonly string[], signal: AbortSignal): Promise<void>
  /** Releases what the sink holds open (the file); never rejects. */
  close(): Promise<void>
}>

/** A sink that did not take a batch: its message is the reason logged (`HTTP 503`, `connection refused`). */
export class SinkError extends CodedError<'SINK_FAILED'> {
  override name = 'SinkError'
}
