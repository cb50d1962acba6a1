// A prediction out as an Open Inference Protocol response (lib/README.md §10), the same body for
// /api/v1/predict and /v2/.../infer, whichever runtime predicted:
//   classification  { name: <label output>, datatype: BYTES, shape: [N], data: class names }
//                   { name: <probabilities output>, datatype: FP64, shape: [N, C], data: row-major,
//                     each row summing to 1, columns in `classes` order }
//   regression      { name: <value output>, datatype: FP64, shape: [N], data: values }
// Output names are the version's. A predictor never answers NaN or Infinity (runtime.ts), so every
// value is a plain JSON number.
//
// hot path: the body is written as JSON text straight from the prediction's typed arrays. Going
// through objects cost more than everything else a batch-1 prediction does in process: copying
// the typed arrays into arrays (JSON.stringify writes a typed array as an object of indices) and
// serialising the objects took 1.25 µs of CPU on Node 24, this text 0.3 µs. Everything fixed for a
// model version (its name, version, output names, the class names' JSON) is prepared once per
// version, on its first answer.
//
// A request naming its outputs (request.ts) is answered by `selectedResponseJson` with those alone,
// in its order; `selectOutputs` checks the names against the model before it predicts. A request
// naming none never reaches either: its cost is what it was.
import type { ModelVersion, Output, Prediction } from '../runtime.js'
import { RequestError } from './request-error.js'

export type OutputTensor =
  | Readonly<{ name: string; datatype: 'BYTES'; shape: readonly number[]; data: readonly string[] }>
  | Readonly<{ name: string; datatype: 'FP64'; shape: readonly number[]; data: readonly number[] }>

/** The response's shape, as clients read it (the text below is this object's JSON). */
export type InferResponse = Readonly<{ model_name: string; model_version: string; id: string; outputs: readonly OutputTensor[] }>

/** The constant pieces of one version's responses, around the id, the row count and the data. */
type Template = Readonly<{
  head: string
  /** Up to the first output's shape: `","outputs":[{"name":…,"datatype":…,"shape":[`. */
  first: string
  /** Each class's name as a JSON string; empty for a regressor. */
  classes: readonly string[]
  /** Between the labels and the probabilities' row count: `]},{"name":…,"shape":[`. */
  second: string
  /** After the probabilities' row count: `,C],"data":[`. */
  columns: string
  /** Each output's opening, by its index in `model.outputs`: `{"name":…,"datatype":…,"shape":[`. */
  opens: readonly string[]
}>

const templates = new WeakMap<ModelVersion, Template>()

// noUncheckedIndexedAccess types every element read `| undefined`; the callers index within the
// arrays' lengths, so these say so once.
const numberAt = (values: ArrayLike<number>, i: number): number => values[i] as number
const itemAt = <T>(items: readonly T[], i: number): T => items[i] as T

const templateOf = (model: ModelVersion): Template => {
  let template = templates.get(model)
  if (template === undefined) {
    const output = (i: number, datatype: string): string => `{"name":${JSON.stringify(itemAt(model.outputs, i).name)},"datatype":"${datatype}","shape":[`
    const classes = model.task === 'regression' ? [] : model.classes.map((name) => JSON.stringify(name))
    template = {
      head: `{"model_name":${JSON.stringify(model.name)},"model_version":${JSON.stringify(model.version)},"id":`,
      first: `,"outputs":[${output(0, model.task === 'regression' ? 'FP64' : 'BYTES')}`,
      classes,
      second: model.task === 'regression' ? '' : `]},${output(1, 'FP64')}`,
      columns: `,${classes.length}],"data":[`,
      opens: model.outputs.map((o, i) => output(i, o.type === 'label' ? 'BYTES' : 'FP64')),
    }
    templates.set(model, template)
  }
  return template
}

/** The first `count` of `values` (at least one: a batch has a row) joined by commas, as JSON writes finite numbers. */
const numbers = (values: ArrayLike<number>, count: number): string => {
  let text = `${numberAt(values, 0)}`
  for (let i = 1; i < count; i++) text += `,${numberAt(values, i)}`
  return text
}

/** The class names of the first `rows` labels, as JSON strings joined by commas. */
const labelsJson = (classes: readonly string[], labels: ArrayLike<number>, rows: number): string => {
  let names = ''
  for (let r = 0; r < rows; r++) names += r === 0 ? classes[numberAt(labels, r)] : `,${classes[numberAt(labels, r)]}`
  return names
}

/**
 * The response body, as JSON text, for `rows` rows of `prediction`, which `model`'s predictor
 * answered (a ClassPrediction for a classifier, a ValuePrediction for a regressor). `model.outputs`
 * come in the order runtime.ts fixes: label then probabilities, or the value. `id` is the
 * request's, or, when it sent none, its X-Request-ID, so the answer, the response header and the
 * log lines share one id. `members` is JSON text of members added after `outputs` (`,"name":value…`):
 * the feedback tokens.
 */
export const inferResponseJson = (model: ModelVersion, prediction: Prediction, rows: number, id: string, members = ''): string => {
  const t = templateOf(model)
  const start = `${t.head}${JSON.stringify(id)}${t.first}${rows}],"data":[`
  // A regressor's predictor answers values, a classifier's labels and probabilities (runtime.ts).
  if ('values' in prediction) return `${start}${numbers(prediction.values, rows)}]}]${members}}`
  const { labels, probabilities } = prediction
  return `${start}${labelsJson(t.classes, labels, rows)}${t.second}${rows}${t.columns}${numbers(probabilities, rows * t.classes.length)}]}]${members}}`
}

/**
 * The indices in `model.outputs` of the outputs `names` asks for, in its order (request.ts has
 * refused a repeat); throws RequestError INVALID_REQUEST naming one the model does not have.
 */
export const selectOutputs = (names: readonly string[], model: ModelVersion): readonly number[] =>
  names.map((name) => {
    const i = model.outputs.findIndex((output) => output.name === name)
    if (i === -1) {
      const known = model.outputs.map((output) => output.name).join(', ')
      throw new RequestError('INVALID_REQUEST', `output ${name} is not an output of model ${model.name}; its outputs are ${known}`)
    }
    return i
  })

/** One output's tensor after its opening: its shape's rest and its data, closed. */
const tensorJson = (t: Template, { type }: Output, prediction: Prediction, rows: number): string => {
  // `value` is a regressor's only output, so its prediction holds values; the others, a classifier's, labels and probabilities.
  if ('values' in prediction) return `${rows}],"data":[${numbers(prediction.values, rows)}]}`
  const { labels, probabilities } = prediction
  if (type === 'label') return `${rows}],"data":[${labelsJson(t.classes, labels, rows)}]}`
  return `${rows}${t.columns}${numbers(probabilities, rows * t.classes.length)}]}`
}

/** The response body as `inferResponseJson` writes it, with the outputs `selected` (from `selectOutputs`) only, in that order, then `members`. */
export const selectedResponseJson = (
  model: ModelVersion,
  prediction: Prediction,
  rows: number,
  id: string,
  selected: readonly number[],
  members = '',
): string => {
  const t = templateOf(model)
  let text = `${t.head}${JSON.stringify(id)},"outputs":[`
  for (let k = 0; k < selected.length; k++) {
    const i = itemAt(selected, k)
    text += `${k === 0 ? '' : ','}${itemAt(t.opens, i)}${tensorJson(t, itemAt(model.outputs, i), prediction, rows)}`
  }
  return `${text}]${members}}`
}
