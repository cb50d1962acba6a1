// lib/README.md keeps the architecture and the reasons: the layout, a request's way through the
// layers, the lifecycle, and why each design choice was made. What a module does in detail is its
// header comment; the tables are README.md's, rendered from the declarations; history is
// CHANGELOG.md's. The cap keeps it from growing a second copy of any of them.
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const MAX_LIB_README_BYTES = 21_600

t.test(`lib/README.md is under ${MAX_LIB_README_BYTES} bytes`, async (t) => {
  const bytes = statSync(join(ROOT, 'lib', 'README.md')).size
  t.ok(bytes < MAX_LIB_README_BYTES, `lib/README.md: ${bytes} bytes (module details belong in their headers, history in CHANGELOG.md)`)
})
