// A batch through the kernel and out as an Open Inference Protocol response (DESIGN §10), the same
// body for /api/v1/predict and /v2/.../infer:
//   classification  { name: <label output>, datatype: BYTES, shape: [N], data: class names }
//                   { name: <probabilities output>, datatype: FP64, shape: [N, C], data: row-major,
//                     each row summing to 1, columns in `classes` order }
//   regression      { name: <value output>, datatype: FP64, shape: [N], data: values }
// Output names are the artifact's. The kernel never yields NaN or Infinity, so `data` is plain JSON.
import { randomUUID } from 'node:crypto'
import type { Output } from './artifact.js'
import type { Classifier, CompiledModel, Regressor } from './kernel.js'

export type OutputTensor =
  | Readonly<{ name: string; datatype: 'BYTES'; shape: readonly number[]; data: readonly string[] }>
  | Readonly<{ name: string; datatype: 'FP64'; shape: readonly number[]; data: readonly number[] }>

export type InferResponse = Readonly<{ model_name: string; model_version: string; id: string; outputs: readonly OutputTensor[] }>

/** What `predict` wrote for `rows` rows, with the model that wrote it. */
export type Prediction =
  | Readonly<{ model: Classifier; rows: number; labels: Uint32Array; probabilities: Float64Array }>
  | Readonly<{ model: Regressor; rows: number; values: Float64Array }>

/** Runs `rows` rows of `features` (from `encodeInputs`); the output arrays are this request's own. */
export const predictBatch = (model: CompiledModel, features: Float64Array, rows: number): Prediction => {
  if (model.task === 'regression') {
    const values = new Float64Array(rows)
    model.predict(features, rows, values)
    return { model, rows, values }
  }
  const probabilities = new Float64Array(rows * model.classes.length)
  const labels = new Uint32Array(rows)
  model.predict(features, rows, probabilities, labels)
  return { model, rows, labels, probabilities }
}

/**
 * The response body. `outputs` are the artifact's (`parseArtifact` fixes their order: label then
 * probabilities, or the value). `id` is the request's, or a new UUID when it sent none.
 */
export const buildInferResponse = (prediction: Prediction, outputs: readonly Output[], id: string | undefined): InferResponse => {
  const { model, rows } = prediction
  // Array.from: JSON.stringify writes a typed array as an object of indices, not as an array.
  const tensors: readonly OutputTensor[] =
    'values' in prediction
      ? [{ name: (outputs[0] as Output).name, datatype: 'FP64', shape: [rows], data: Array.from(prediction.values) }]
      : [
          {
            name: (outputs[0] as Output).name,
            datatype: 'BYTES',
            shape: [rows],
            data: Array.from(prediction.labels, (k) => prediction.model.classes[k] as string),
          },
          { name: (outputs[1] as Output).name, datatype: 'FP64', shape: [rows, prediction.model.classes.length], data: Array.from(prediction.probabilities) },
        ]
  return { model_name: model.name, model_version: model.version, id: id ?? randomUUID(), outputs: tensors }
}
