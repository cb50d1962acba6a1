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
import type { ClassPrediction, ModelVersion, Output, Prediction, ValuePrediction } from '../runtime.js'

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
}>

const templates = new WeakMap<ModelVersion, Template>()

const templateOf = (model: ModelVersion): Template => {
  let template = templates.get(model)
  if (template === undefined) {
    const output = (i: number, datatype: string): string => `{"name":${JSON.stringify((model.outputs[i] as Output).name)},"datatype":"${datatype}","shape":[`
    const classes = model.task === 'regression' ? [] : model.classes.map((name) => JSON.stringify(name))
    template = {
      head: `{"model_name":${JSON.stringify(model.name)},"model_version":${JSON.stringify(model.version)},"id":`,
      first: `,"outputs":[${output(0, model.task === 'regression' ? 'FP64' : 'BYTES')}`,
      classes,
      second: model.task === 'regression' ? '' : `]},${output(1, 'FP64')}`,
      columns: `,${classes.length}],"data":[`,
    }
    templates.set(model, template)
  }
  return template
}

/** The first `count` of `values` (at least one: a batch has a row) joined by commas, as JSON writes finite numbers. */
const numbers = (values: ArrayLike<number>, count: number): string => {
  let text = `${values[0] as number}`
  for (let i = 1; i < count; i++) text += `,${values[i] as number}`
  return text
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
  if (model.task === 'regression') return `${start}${numbers((prediction as ValuePrediction).values, rows)}]}]${members}}`
  const { labels, probabilities } = prediction as ClassPrediction
  let names = ''
  for (let r = 0; r < rows; r++) names += r === 0 ? t.classes[labels[r] as number] : `,${t.classes[labels[r] as number]}`
  return `${start}${names}${t.second}${rows}${t.columns}${numbers(probabilities, rows * t.classes.length)}]}]${members}}`
}
