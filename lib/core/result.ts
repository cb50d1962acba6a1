// "Failed, with a reason": the one shape of a result that can fail without throwing (a health
// check, a store read, a rate lookup). `reason` is a string unless the caller needs more; on a hot
// path a failure is a frozen constant built once, never a new object per call.
export type Result<T, R = string> = Readonly<{ ok: true; value: T }> | Readonly<{ ok: false; reason: R }>

export const succeeded = <T>(value: T): Result<T, never> => ({ ok: true, value })
export const failed = <R>(reason: R): Result<never, R> => ({ ok: false, reason })
