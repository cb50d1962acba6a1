// The model-runtime seam: what a model version is, whatever runs it, and what a runtime must do to
// serve one. Types only, documented; nothing else lives here.
//
// A version is two things:
//   a description (`ModelVersion`)  runtime-neutral: name, version, task, typed inputs and outputs,
//                                   classes, the reference distribution drift is measured against,
//                                   provenance, the quality measured on held-out rows, a sha256 of
//                                   the content, and `platform`, the runtime
//                                   that serves it. Endpoints, drift, metrics and the registry read
//                                   only this.
//   a payload                       the runtime's own: the kernel's checked artifact, an ONNX graph.
// Both come from the version's files, `<model>/<version>/<file>` for each of `Runtime.files` and,
// when present, each of `Runtime.optional`. The registry picks a version's runtime (the first, in
// its list, whose first file the version holds), stats and reads the files that runtime names, and
// hands over their bytes; a runtime never touches a store.
//
// A runtime:
//   read(files, place)     sync and pure: parses and checks every byte it is given (an absent
//                          optional file as undefined; `place` is the model and version its path
//                          names, for a format that does not carry them) and returns the
//                          description and the payload, or throws an Error whose message names the
//                          member (`inputs[1].name: …`, and the file when a version has several); the
//                          registry prefixes it with the version's first file, and refuses a
//                          description whose name and version are not those of its path. The
//                          description is trusted downstream: check it here, once.
//   load(model, payload)   builds the Predictor, once per build of a version (the registry skips it
//                          when a re-read version has the sha256 already served). May be async (a
//                          native session); a throw or rejection refuses the version like a parse
//                          error.
//
// A predictor:
//   predict(features, rows)  `rows` rows of `features` (row-major, rows × inputs, in input order, as
//                          lib/models/inference/features.ts encodes them: a numerical input as its value, a
//                          categorical one as its level index) in, a Prediction out, with arrays of
//                          its own the response keeps. It must not change or keep `features` (the
//                          drift window records them afterwards), and never answers NaN or
//                          Infinity (responses are plain JSON). Return a value when the work is
//                          synchronous: callers check `instanceof Promise` and only then wait, so
//                          the kernel's path stays synchronous (hot path). An async predictor may see
//                          calls overlap; a synchronous one never does. A throw or rejection is the
//                          server's failure: the request answers 500. Requests are checked before
//                          they get here, so that is a bug or a broken runtime, never bad input.
//   dispose()              frees what lives outside the JS heap (a no-op for the kernel). The
//                          registry calls it once, after the pass that stopped serving the build has
//                          published the models without it. A request may still hold the build: one
//                          whose prediction is running, or a /v2 request that found the model and is
//                          still reading its body. So an async predictor frees its memory only once
//                          the runs under way settle, and a `predict` after `dispose` rejects (the
//                          request answers 500) rather than touch freed memory. It may return a
//                          promise; a failure is logged (model_dispose_failed), never thrown.
//                          Nothing is disposed at shutdown: the process's exit frees it.
//
// What stays outside every runtime, so every model is encoded, watched and measured the same way:
// feature encoding (features.ts), the drift window (lib/drift/), the series (metrics.ts) and the
// response body (inference/response.ts).

export type Task = 'classification' | 'regression'

/**
 * What a numerical input takes, when its runtime is stricter than any finite number (FP64): an ONNX
 * graph's tensor element type. Encoding (features.ts) refuses values the type cannot hold.
 */
export type NumericalDatatype = 'FP64' | 'FP32' | 'INT64' | 'INT32' | 'BOOL'
export type NumericalInput = Readonly<{ name: string; type: 'numerical'; datatype?: NumericalDatatype }>
export type CategoricalInput = Readonly<{ name: string; type: 'categorical'; levels: readonly string[] }>
export type Input = NumericalInput | CategoricalInput

export type Output = Readonly<{ name: string; type: 'label' | 'probabilities' | 'value' }>

/**
 * The distribution of one input over the rows a model was built from. Numerical: bin i holds
 * values v with edges[i-1] <= v < edges[i], the outer bins open (`referenceBin` in
 * lib/drift/psi.ts), edges.length + 1 proportions, and the range the rows spanned. Categorical:
 * one proportion per level.
 */
export type NumericalReference = Readonly<{
  name: string
  type: 'numerical'
  edges: readonly number[]
  proportions: readonly number[]
  /**
   * The smallest and largest value the rows held: a served value outside them is extrapolation
   * (svc_drift_out_of_range_total). Absent from a reference made before they were recorded.
   */
  min?: number
  max?: number
}>
export type CategoricalReference = Readonly<{ name: string; type: 'categorical'; levels: readonly string[]; proportions: readonly number[] }>
export type FeatureReference = NumericalReference | CategoricalReference

/**
 * The reference of every input, in input order, over `rows` training rows, and, when known, of what
 * the model answered on them (`predictions`: a classifier's label output as categorical over its
 * classes, a regressor's value output as numerical; lib/models/profile.ts `predictionInput`).
 */
export type Reference = Readonly<{ rows: number; features: readonly FeatureReference[]; predictions?: FeatureReference }>

/** A tensor as OIP metadata shows it: -1 for a free dimension (the batch). */
export type TensorSignature = Readonly<{ name: string; datatype: string; shape: readonly number[] }>

export type Provenance = Readonly<{
  dataset: Readonly<{ name: string; source: string; rows: number }>
  /** Seeds the PRNG that splits the data; training is otherwise free of randomness. */
  seed: number
  split: Readonly<{ test_fraction: number; stratified: boolean; train_rows: number; test_rows: number }>
  method: string
  hyperparameters: Readonly<Record<string, number>>
  /** Measured on the held-out rows. */
  metrics: Readonly<Record<string, number>>
}>

type Description = Readonly<{
  name: string
  version: string
  /** The runtime that serves it (`Runtime.platform`): what /v2 metadata and /api/v1 summaries show. */
  platform: string
  /** The model family as its files name it (`logistic_regression`); shown on /api/v1/models/{name}. */
  type: string
  inputs: readonly Input[]
  /** Classification: [label, probabilities]; regression: [value]. The response keeps this order. */
  outputs: readonly Output[]
  /**
   * The training mean and standard deviation of each numerical input, in input order: what
   * /api/v1/models/{name} shows so a client can draw realistic inputs.
   */
  standardisation: Readonly<{ mean: readonly number[]; scale: readonly number[] }> | undefined
  /** What drift is measured against; undefined for a version served without one (no profile). */
  reference: Reference | undefined
  /** How it was trained; undefined when its files do not say (a model trained elsewhere). */
  provenance: Provenance | undefined
  /**
   * Its quality measured on labelled rows it was not fitted to, by metric (`accuracy`, `rmse`, …):
   * what svc_model_reference_quality exports and realized quality is compared with. The kernel's
   * is its artifact's `provenance.metrics`, an ONNX version's its profile's `quality`; undefined
   * when nothing was measured.
   */
  quality: Readonly<Record<string, number>> | undefined
  /**
   * The tensors a client sends, as the model's own format declares them (an ONNX graph's inputs):
   * one per input, named and ordered as `inputs`, or one [N, F] tensor whose F columns are `inputs`
   * in order. A request then sends exactly these, by name, shape and datatype (features.ts).
   * Undefined when the inputs themselves are the tensors (one [N] tensor each, FP64 or BYTES).
   */
  signature: readonly TensorSignature[] | undefined
  /** Hex SHA-256 of the version's content: equal digests are the same build. */
  sha256: string
}>

/** A model version as everything outside its runtime sees it. Frozen. */
export type ModelVersion = Description & (Readonly<{ task: 'classification'; classes: readonly string[] }> | Readonly<{ task: 'regression' }>)

/** Per row, the index of its class in `classes`, and one probability per class (row-major, each row summing to 1). */
export type ClassPrediction = Readonly<{ labels: Uint32Array; probabilities: Float64Array }>
/** One value per row. */
export type ValuePrediction = Readonly<{ values: Float64Array }>
/**
 * What a predictor answers for `rows` rows: arrays exactly that long (× the class count), its
 * caller's to keep; `waitedS`, the seconds it waited for an ONNX worker before its run (onnx/pool.ts),
 * which its duration leaves out.
 */
export type Prediction = (ClassPrediction | ValuePrediction) & Readonly<{ waitedS?: number }>

/** Predicts for one build of one version; see the contract above. */
export type Predictor = Readonly<{
  predict(features: Float64Array, rows: number): Prediction | Promise<Prediction>
  dispose(): void | Promise<void>
}>

/** The model and version a version's path names. */
export type Place = Readonly<{ name: string; version: string }>

/** What `Runtime.read` makes of a version's files. */
export type ReadVersion<Payload> = Readonly<{ model: ModelVersion; payload: Payload }>

/** Turns a version's files into a description and a Predictor; see the contract above. */
export type Runtime<Payload = unknown> = Readonly<{
  /** The name clients see as `platform`, and `ModelVersion.platform` of what it reads. */
  platform: string
  /** A version's files, relative to `<model>/<version>/`, at least one; the first marks a version as this runtime's. */
  files: readonly string[]
  /** Files a version may hold beside those: read when present. */
  optional: readonly string[]
  /** The bytes of `files` then of `optional` (undefined when absent), checked and described. */
  read(files: readonly (Buffer | undefined)[], place: Place): ReadVersion<Payload>
  load(model: ModelVersion, payload: Payload): Predictor | Promise<Predictor>
}>
