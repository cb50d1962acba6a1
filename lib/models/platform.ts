// The runtimes svc ships, by the name clients see as `platform` (/v2 model metadata, /api/v1
// summaries): declared once, read by each runtime (kernel/runtime.ts, onnx/plan.ts) and by the
// OpenAPI schema (lib/endpoints/model-schemas.ts). `Runtime.platform` stays a string: a runtime
// made elsewhere (a test's fake) names its own.
export const PLATFORM = Object.freeze({ kernel: 'svc', onnx: 'onnxruntime' } as const)
export type Platform = (typeof PLATFORM)[keyof typeof PLATFORM]

/** Every platform, in the order the document lists them. */
export const PLATFORMS: readonly Platform[] = Object.freeze(Object.values(PLATFORM))
