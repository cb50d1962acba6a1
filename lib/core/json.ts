// JSON documents as svc reads them: strict UTF-8 (./utf8.ts), then JSON.parse, and the test every
// checker starts with, "is this a JSON object". A leaf but for ./utf8.ts.
import { decodeUtf8 } from './utf8.js'

/** A JSON object's members, as a checker reads them. */
export type JsonObject = Readonly<Record<string, unknown>>

/**
 * A document from its bytes (strict UTF-8, a leading byte-order mark dropped) or its text. Throws
 * what the decoder or JSON.parse throws: the caller says which document, errorMessage says why.
 */
export const parseJson = (document: Uint8Array | string): unknown => JSON.parse(typeof document === 'string' ? document : decodeUtf8(document))

/** A JSON object: not null, not an array. */
export const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value)
