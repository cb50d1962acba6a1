// A prediction out as an Open Inference Protocol response (lib/README.md §10), the same body for
// /api/v1/predict and /v2/.../infer, whichever runtime predicted:
//   classification  { name: <label output>, datatype: BYTES, shape: [N], data: class names }
//                   { name: <probabilities output>, datatype: FP64, shape: [N, C], data: row-major,
//                     each row summing to 1, columns in `classes` order }
//   regression      { name: <value output>, datatype: FP64, shape: [N], data: values }
// Output names are the version's. A predictor never answers NaN or Infinity (runtime.ts), so `data`
// is plain JSON.
import { randomUUID } from 'node:crypto'
import type { ClassPrediction, ModelVersion, Output, Prediction, ValuePrediction } from './runtime.js'

export type OutputTensor =
  | Readonly<{ name: string; datatype: 'BYTES'; shape: readonly number[]; data: readonly string[] }>
  | Readonly<{ name: string; datatype: 'FP64'; shape: readonly number[]; data: readonly number[] }>

export type InferResponse = Readonly<{ model_name: string; model_version: string; id: string; outputs: readonly OutputTensor[] }>

/**
 * The response body for `rows` rows of `prediction`, which `model`'s predictor answered (a
 * ClassPrediction for a classifier, a ValuePrediction for a regressor). `model.outputs` come in the
 * order runtime.ts fixes: label then probabilities, or the value. `id` is the request's, or a new
 * UUID when it sent none.
 */
export const buildInferResponse = (model: ModelVersion, prediction: Prediction, rows: number, id: string | undefined): InferResponse => {
  const { outputs } = model
  // Array.from: JSON.stringify writes a typed array as an object of indices, not as an array.
  let tensors: readonly OutputTensor[]
  if (model.task === 'regression') {
    const { values } = prediction as ValuePrediction
    tensors = [{ name: (outputs[0] as Output).name, datatype: 'FP64', shape: [rows], data: Array.from(values) }]
  } else {
    const { labels, probabilities } = prediction as ClassPrediction
    const { classes } = model
    tensors = [
      { name: (outputs[0] as Output).name, datatype: 'BYTES', shape: [rows], data: Array.from(labels, (k) => classes[k] as string) },
      { name: (outputs[1] as Output).name, datatype: 'FP64', shape: [rows, classes.length], data: Array.from(probabilities) },
    ]
  }
  return { model_name: model.name, model_version: model.version, id: id ?? randomUUID(), outputs: tensors }
}
