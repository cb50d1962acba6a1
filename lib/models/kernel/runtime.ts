// svc's own runtime (runtime.ts): a version is one `model.json` (artifact.ts), run by the
// typed-array kernel (kernel.ts). Its platform is "svc": the models run on svc's own code, not on a
// framework a client could name.
import { parseArtifact, type Artifact } from '../artifact.js'
import { compile, type CompiledModel } from './kernel.js'
import { PLATFORM } from '../platform.js'
import type { ModelVersion, Predictor, Runtime } from '../runtime.js'

export const KERNEL_PLATFORM = PLATFORM.kernel

/** The artifact as the rest of svc sees it; shares the artifact's frozen members, copies none. */
export const describeArtifact = (artifact: Artifact): ModelVersion => {
  const common = {
    name: artifact.name,
    version: artifact.version,
    platform: KERNEL_PLATFORM,
    type: artifact.type,
    inputs: artifact.inputs,
    outputs: artifact.outputs,
    standardisation: artifact.preprocessing.standardisation,
    reference: artifact.reference,
    provenance: artifact.provenance,
    quality: artifact.provenance.metrics,
    signature: undefined,
    sha256: artifact.sha256,
  }
  return Object.freeze(artifact.task === 'classification' ? { ...common, task: artifact.task, classes: artifact.classes } : { ...common, task: artifact.task })
}

/** The kernel holds nothing outside the JS heap. */
const dispose = (): void => {}

/**
 * The kernel behind the Predictor contract. Its `predict` writes into buffers it is given; here each
 * call makes the arrays the response keeps (two typed arrays and their record, as before the seam),
 * and stays synchronous.
 */
const predictorOf = (compiled: CompiledModel): Predictor => {
  if (compiled.task === 'regression') {
    return Object.freeze({
      predict: (features: Float64Array, rows: number) => {
        const values = new Float64Array(rows)
        compiled.predict(features, rows, values)
        return { values }
      },
      dispose,
    })
  }
  const classes = compiled.classes.length
  return Object.freeze({
    predict: (features: Float64Array, rows: number) => {
      const probabilities = new Float64Array(rows * classes)
      const labels = new Uint32Array(rows)
      compiled.predict(features, rows, probabilities, labels)
      return { labels, probabilities }
    },
    dispose,
  })
}

export const kernelRuntime: Runtime<Artifact> = Object.freeze({
  platform: KERNEL_PLATFORM,
  files: Object.freeze(['model.json']),
  optional: Object.freeze([]),
  read: (files: readonly (Buffer | undefined)[]) => {
    const artifact = parseArtifact(files[0] as Buffer)
    return Object.freeze({ model: describeArtifact(artifact), payload: artifact })
  },
  load: (_model: ModelVersion, artifact: Artifact) => predictorOf(compile(artifact)),
})
