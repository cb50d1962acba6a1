// Every contract is described once: the Markdown outside CHANGELOG.md (the guides, the runbooks,
// the architecture, the figures) stays under one budget, so a fact added twice, or history kept
// beside the current figures, shows as growth here. History is CHANGELOG.md's.
import { execFileSync } from 'node:child_process'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
// 185 000 until README.md's new contract rows of the same round (readme-size.test.ts): raised by
// 1 350 bytes, less than their 1 664; then by 1 545 for test/bench/README.md's heavy models (1 549);
// then by 554 for test/fixtures/sigv4/README.md, where the SigV4 vectors come from (554).
const MAX_MARKDOWN_BYTES = 198_600

/** The Markdown files of the repository, as git tracks them. */
const markdownFiles = (): string[] =>
  execFileSync('git', ['ls-files', '-z', '--', '*.md'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((file) => file !== '' && file !== 'CHANGELOG.md')

t.test(`the Markdown outside CHANGELOG.md is at most ${MAX_MARKDOWN_BYTES} bytes`, async (t) => {
  const files = markdownFiles()
  t.ok(files.includes('README.md') && files.some((file) => file.startsWith('ops/runbooks/')), 'the guides and the runbooks are counted')
  const sizes = files.map((file) => [file, statSync(join(ROOT, file)).size] as const).sort((a, b) => b[1] - a[1])
  const total = sizes.reduce((sum, [, bytes]) => sum + bytes, 0)
  t.ok(
    total <= MAX_MARKDOWN_BYTES,
    `${total} bytes; the largest: ${sizes
      .slice(0, 4)
      .map(([file, bytes]) => `${file} ${bytes}`)
      .join(', ')}`,
  )
})
