// Store paths are relative, `/`-separated and canonical, checked before any store touches a disk
// or a socket: no way to name something outside the root, and one spelling per file (so the HTTP
// store's ETag cache and a registry's last-seen etags have one key per artifact).
import { StoreError } from './error.js'

// Backslashes are separators on Windows and in some servers' path handling; control characters
// (NUL above all) truncate or confuse file system calls and logs; a lone surrogate is no file name
// and makes encodeURIComponent throw.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
const FORBIDDEN = /[/\\\u0000-\u001f\u007f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** One path segment: a file or directory name (no `/`), never `.` or `..`. */
export const isSegment = (segment: string): boolean => segment !== '' && segment !== '.' && segment !== '..' && !FORBIDDEN.test(segment)

/** The segments of `path`, or INVALID_PATH: absolute, empty segments, `.`/`..`, backslashes, control characters. */
export const checkPath = (path: string): readonly string[] => {
  const segments = path.split('/')
  if (!segments.every(isSegment)) {
    throw new StoreError(
      'INVALID_PATH',
      `invalid store path ${JSON.stringify(path)}: expected names separated by "/", without "." or ".." segments, backslashes or control characters`,
    )
  }
  return segments
}
