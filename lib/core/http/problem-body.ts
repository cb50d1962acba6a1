// What an RFC 9457 body holds (lib/README.md §7): its members, their builder and its media type.
// A leaf on purpose: lib/core/pipeline.ts names the Problem type and lib/core/route-doc.ts builds its
// examples with `problem`, so nothing here may import a reply type (that would be an import cycle).
import { STATUS_CODES } from 'node:http'

/** RFC 9457 members an endpoint chooses; `instance` and `request_id` are added when written. */
export type Problem = Readonly<{ type: string; title: string; status: number; detail: string }> & Readonly<Record<string, unknown>>

export const PROBLEM_CONTENT_TYPE = 'application/problem+json'

/** `MODEL_NOT_FOUND` → `urn:svc:problem:model-not-found`: absolute, stable, and never dereferenced. */
export const problemType = (code: string): string => `urn:svc:problem:${code.toLowerCase().replaceAll('_', '-')}`

/** Longest text member of a problem: a detail that quotes the request never echoes much of it back. */
export const MAX_DETAIL = 1024

const clip = (text: string): string => (text.length <= MAX_DETAIL ? text : `${text.slice(0, MAX_DETAIL - 1)}…`)

export const problem = (status: number, code: string, detail: string, extra?: Readonly<Record<string, unknown>>): Problem => {
  const body: Record<string, unknown> = { type: problemType(code), title: STATUS_CODES[status] ?? 'Error', status, detail: clip(detail) }
  for (const key in extra) {
    const value = extra[key]
    body[key] = typeof value === 'string' ? clip(value) : value
  }
  return body as Problem
}
