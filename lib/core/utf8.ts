// Strict UTF-8: a malformed byte sequence is refused (a TypeError), never read as U+FFFD, so a
// damaged file fails where it is read instead of loading as something else. A leaf: imports nothing.

// Neither decoder is used with `stream`, so they keep no state between calls and are shared.
const STRICT = new TextDecoder('utf-8', { fatal: true })
const STRICT_KEEPING_BOM = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/**
 * `bytes` as text; throws TypeError when they are not UTF-8. A leading byte-order mark is dropped,
 * unless `isBomKept`: a piece of a longer text (a chunk of a file) keeps what it starts with.
 */
export const decodeUtf8 = (bytes: Uint8Array, isBomKept = false): string => (isBomKept ? STRICT_KEEPING_BOM : STRICT).decode(bytes)
