// The payload log's events (lib/README.md §10): CloudEvents 1.0 in the structured JSON format
// (https://github.com/cloudevents/spec/blob/v1.0.2/cloudevents/formats/json-format.md), one
// `svc.prediction` per logged request and one `svc.label` per label POST /api/v1/feedback accepts.
//
// - Built after the reply, never before. The request path keeps references only (the checked
//   request, the build that answered, the features and prediction arrays, the tokens' JSON text):
//   nothing is copied or serialised until the writer's drain turn runs the builder (writer.ts).
// - `rows` are the model's inputs by name, decoded from the features the model was fed (a level's
//   index back to the level), so a row reads as an /api/v1 `instances` row whatever form the request
//   took; the inputs SVC_PAYLOAD_LOG_EXCLUDE names are left out of the columns, so no byte of them is
//   ever written. `answers` are per row, by output name.
// - `source` is `svc://<hostname>:<port>`, the listener's port, read once on the first event (a
//   request can only come once the listener is bound); `time` is when the reply was written.
import { randomUUID } from 'node:crypto'
import type { ServedModel } from '../../models/registry/registry.js'
import type { Prediction } from '../../models/runtime.js'
import type { AcceptedLabel } from '../feedback/score.js'

export type Role = 'default' | 'canary' | 'named'

/** What the request path keeps of a logged prediction: references, no copies. */
export type PredictionCapture = Readonly<{
  served: ServedModel
  /** The answer's `id`: the request's own, else the request id. */
  requestId: string
  role: Role
  rows: number
  features: Float64Array
  prediction: Prediction
  /** The JSON array text of the rows' feedback tokens; undefined when feedback is off. */
  tokens: string | undefined
  durationMs: number
  traceId: string | undefined
}>

/** How one input column of a row is written: its member's key, and its levels' JSON for a categorical one. */
type Column = Readonly<{
  index: number
  key: string
  levels: readonly string[] | undefined
}>
/** How one output of a row's answer is written. */
type Answer = Readonly<{
  key: string
  kind: 'label' | 'probabilities' | 'value'
}>
type Layout = Readonly<{
  width: number
  columns: readonly Column[]
  answers: readonly Answer[]
  /** The classes' JSON, by index. */
  classes: readonly string[]
  /** `subject`'s JSON, and the data's `"model":…,"version":…` members. */
  subject: string
  names: string
}>

const number = (value: number): string => (Number.isFinite(value) ? String(value) : 'null')

// noUncheckedIndexedAccess types every element read `| undefined`; the callers index within the
// arrays' lengths, so these say so once.
const numberAt = (values: ArrayLike<number>, i: number): number => values[i] as number
const itemAt = <T>(items: readonly T[], i: number): T => items[i] as T

/** How a build's events are written, its excluded inputs left out. */
const layoutFor = (served: ServedModel, excluded: ReadonlySet<string>): Layout => {
  const { model } = served
  const columns: Column[] = []
  model.inputs.forEach((input, index) => {
    if (!excluded.has(input.name))
      columns.push({
        index,
        key: JSON.stringify(input.name),
        levels: input.type === 'categorical' ? input.levels.map((level) => JSON.stringify(level)) : undefined,
      })
  })
  return {
    width: model.inputs.length,
    columns,
    answers: model.outputs.map((output) => ({
      key: JSON.stringify(output.name),
      kind: output.type,
    })),
    classes: model.task === 'classification' ? model.classes.map((label) => JSON.stringify(label)) : [],
    subject: JSON.stringify(`${served.name}/${served.version}`),
    names: `"model":${JSON.stringify(served.name)},"version":${JSON.stringify(served.version)}`,
  }
}

// Built by concatenation, not arrays joined: V8 keeps the pieces as a rope until the writer flattens
// the batch once, so an event costs its numbers' formatting and little else.
const rowsJson = ({ width, columns }: Layout, features: Float64Array, rows: number): string => {
  let out = '['
  for (let i = 0; i < rows; i++) {
    const base = i * width
    let row = i === 0 ? '{' : ',{'
    for (let c = 0; c < columns.length; c++) {
      const { index, key, levels } = itemAt(columns, c)
      const value = numberAt(features, base + index)
      row += `${c === 0 ? '' : ','}${key}:${levels === undefined ? number(value) : itemAt(levels, value)}`
    }
    out += `${row}}`
  }
  return `${out}]`
}

const answerJson = (kind: Answer['kind'], layout: Layout, prediction: Prediction, i: number): string => {
  // `value` is a regressor's only output, so its prediction holds values; a classifier's holds labels and probabilities.
  if ('values' in prediction) return number(numberAt(prediction.values, i))
  if (kind === 'label') return itemAt(layout.classes, numberAt(prediction.labels, i))
  const { probabilities } = prediction
  const width = layout.classes.length
  let out = '['
  for (let k = i * width, end = k + width; k < end; k++) out += `${k === i * width ? '' : ','}${number(numberAt(probabilities, k))}`
  return `${out}]`
}

const answersJson = (layout: Layout, prediction: Prediction, rows: number): string => {
  let out = '['
  for (let i = 0; i < rows; i++) {
    let row = i === 0 ? '{' : ',{'
    for (let a = 0; a < layout.answers.length; a++) {
      const { key, kind } = itemAt(layout.answers, a)
      row += `${a === 0 ? '' : ','}${key}:${answerJson(kind, layout, prediction, i)}`
    }
    out += `${row}}`
  }
  return `${out}]`
}

export type PayloadEvents = Readonly<{
  /** The `svc.prediction` event's JSON text, at `timeMs`. */
  prediction(capture: PredictionCapture, timeMs: number): string
  /** The `svc.label` event's JSON text, at `timeMs`. */
  label(capture: AcceptedLabel, timeMs: number): string
}>

export type PayloadEventsOptions = Readonly<{
  /** The instance: `svc://<hostname>:<port>`; read on the first event. */
  source: () => string
  /** Inputs never written (SVC_PAYLOAD_LOG_EXCLUDE). */
  exclude: readonly string[]
}>

export const createPayloadEvents = ({ source, exclude }: PayloadEventsOptions): PayloadEvents => {
  const excluded = new Set(exclude)
  let sourceJson: string | undefined
  // Events of one millisecond share their time's text: formatting a Date costs more than an event's numbers.
  let lastMs = Number.NaN
  let lastTime = ''
  const timeOf = (timeMs: number): string => {
    if (timeMs !== lastMs) {
      lastMs = timeMs
      lastTime = new Date(timeMs).toISOString()
    }
    return lastTime
  }
  // An event's id is UUID-shaped and unique per source: 20 hex digits drawn at start (a restarted
  // instance draws anew), then 12 counting events; drawing a UUID per event costs more than the rows.
  const idPrefix = randomUUID().slice(0, 24)
  let count = 0
  /** The members every event starts with, `type` and `subject` apart. */
  const envelope = (type: string, subject: string, timeMs: number): string => {
    sourceJson ??= JSON.stringify(source())
    return (
      `{"specversion":"1.0","id":"${idPrefix}${(count++).toString(16).padStart(12, '0')}","source":${sourceJson},"type":"${type}",` +
      `"time":"${timeOf(timeMs)}","subject":${subject},"datacontenttype":"application/json","data":`
    )
  }

  // Per build, kept with it: a reload brings a new ServedModel, so a new layout.
  const layouts = new WeakMap<ServedModel, Layout>()
  const layoutOf = (served: ServedModel): Layout => {
    let layout = layouts.get(served)
    if (layout === undefined) layouts.set(served, (layout = layoutFor(served, excluded)))
    return layout
  }

  return {
    prediction: (capture, timeMs) => {
      const layout = layoutOf(capture.served)
      const tokens = capture.tokens === undefined ? '' : `,"feedback_tokens":${capture.tokens}`
      const traceId = capture.traceId === undefined ? 'null' : JSON.stringify(capture.traceId)
      return (
        `${envelope('svc.prediction', layout.subject, timeMs)}{"request_id":${JSON.stringify(capture.requestId)},${layout.names},"role":"${capture.role}",` +
        `"rows":${rowsJson(layout, capture.features, capture.rows)},"answers":${answersJson(layout, capture.prediction, capture.rows)}${tokens},` +
        `"duration_ms":${number(Math.round(capture.durationMs * 1000) / 1000)},"trace_id":${traceId}}}`
      )
    },
    label: ({ token, model, version, build, truth, predicted, delayS }, timeMs) =>
      `${envelope('svc.label', JSON.stringify(`${model}/${version}`), timeMs)}{"token":${JSON.stringify(token)},"model":${JSON.stringify(model)},` +
      `"version":${JSON.stringify(version)},"build":${JSON.stringify(build)},"truth":${JSON.stringify(truth)},` +
      `"predicted":${JSON.stringify(predicted)},"delay_s":${delayS}}}`,
  }
}
