// README.md stays the user's and operator's guide: under a size that keeps it readable (the per-request
// figures live in test/bench/README.md, the reliability evidence in test/reliability/README.md, the
// API's fields in /openapi.json), every relative link in it and in those two pages leads somewhere,
// and none of the three speaks of how it was written instead of what the software does.
import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
// 47 896 until the round that added the SVC_PAYLOAD_LOG_QUEUE_BYTES and SVC_WRITE_TIMEOUT_MS rows,
// svc loadgen's --version, --token, --header and per-version noise, and the payload log's stuck-disk
// and one-process-a-file rules: 1 664 bytes of new contract, the whole of the rise (CHANGELOG.md).
const MAX_README_BYTES = 54_400
const PAGES = ['README.md', 'test/bench/README.md', 'test/reliability/README.md'] as const

/** Phrases about the writing of the text rather than the software. */
const FORBIDDEN = [/\bthe seed\b/i, /\bthe issue\b/i, /\bthis work\b/i, /\bthis session\b/i, /\bissue #?\d+/i]

/** The text outside fenced code blocks, line by line: a `# comment` in a shell example is no heading. */
const proseLines = (markdown: string): string[] => {
  const lines: string[] = []
  let fence: string | undefined
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (marker !== undefined && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined
      continue
    }
    if (fence === undefined) lines.push(line)
  }
  return lines
}

/**
 * GitHub's anchor for a heading: its text without links' targets, lower-cased, every character but
 * letters, digits, spaces, `-` and `_` dropped, each space a `-`.
 */
const anchorOf = (heading: string): string =>
  heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-')

/** The anchors of a page's headings; a repeated heading gets -1, -2… as on GitHub. */
const anchorsOf = (markdown: string): Set<string> => {
  const anchors = new Set<string>()
  for (const line of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.+?)(?:\s+#+)?\s*$/.exec(line)?.[1]
    if (heading === undefined) continue
    const base = anchorOf(heading)
    let anchor = base
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`
    anchors.add(anchor)
  }
  return anchors
}

/** Link targets outside code: `](target)` of links and images, without inline code spans. */
const linkTargets = (markdown: string): string[] =>
  proseLines(markdown)
    .map((line) => line.replace(/`[^`]*`/g, ''))
    .flatMap((line) => [...line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] as string))

const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target)

/**
 * The relative links of `markdown` (a page at `page`, relative to `root`) that lead nowhere: a file
 * that does not exist, or an anchor that is no heading of the page it names.
 */
const brokenLinks = (markdown: string, page: string, root: string): string[] => {
  const broken: string[] = []
  for (const target of linkTargets(markdown)) {
    if (isExternal(target)) continue
    const hash = target.indexOf('#')
    const path = hash === -1 ? target : target.slice(0, hash)
    const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1))
    const file = path === '' ? join(root, page) : join(root, dirname(page), decodeURIComponent(path))
    if (relative(root, file).startsWith('..') || !existsSync(file)) {
      broken.push(`${target}: no such file`)
      continue
    }
    if (anchor === undefined) continue
    if (statSync(file).isDirectory() || !file.endsWith('.md')) {
      broken.push(`${target}: an anchor into something that is not a Markdown page`)
      continue
    }
    const text = path === '' ? markdown : readFileSync(file, 'utf8')
    if (!anchorsOf(text).has(anchor)) broken.push(`${target}: no heading with that anchor`)
  }
  return broken
}

const read = (page: string): string => readFileSync(join(ROOT, page), 'utf8')

t.test(`README.md is at most ${MAX_README_BYTES} bytes`, async (t) => {
  const bytes = statSync(join(ROOT, 'README.md')).size
  t.ok(bytes <= MAX_README_BYTES, `README.md: ${bytes} bytes (reference material belongs in /openapi.json, test/bench/README.md, test/reliability/README.md)`)
})

t.test('no page speaks of how it was written instead of what the software does', async (t) => {
  t.ok(
    FORBIDDEN.some((phrase) => phrase.test('Every row buys something The Seed needs')),
    'the check finds a phrase in any case',
  )
  t.notOk(
    FORBIDDEN.some((phrase) => phrase.test('a seeded shuffle; the issuer of the token')),
    'and not a word that merely starts like one',
  )
  for (const page of PAGES) {
    const found = read(page)
      .split('\n')
      .flatMap((line, i) => (FORBIDDEN.some((phrase) => phrase.test(line)) ? [`${page}:${i + 1}: ${line.trim()}`] : []))
    t.same(found, [], page)
  }
})

t.test("a heading's anchor is GitHub's", async (t) => {
  t.equal(anchorOf('Drift across a fleet'), 'drift-across-a-fleet')
  t.equal(anchorOf('Reference profiles: `svc profile`'), 'reference-profiles-svc-profile')
  t.equal(anchorOf('§2 Layout'), '2-layout')
  t.equal(anchorOf('Why 500 rows, and why iris has 3 bins'), 'why-500-rows-and-why-iris-has-3-bins')
  t.equal(anchorOf('snake_case and hyphen-ated'), 'snake_case-and-hyphen-ated')
  t.equal(anchorOf('See [ops](ops/README.md)'), 'see-ops')
  t.same([...anchorsOf('# A\n\n```sh\n# not a heading\n```\n\n## A\n### B #')], ['a', 'a-1', 'b'])
})

t.test('the link check finds a missing file, a missing heading and an anchor into a file that is no page', async (t) => {
  const page = 'README.md'
  const text = [
    '# Title',
    '## Known heading',
    '[ok](#known-heading) [ok](lib/README.md#2-layout) [ok](https://example.com/#nowhere) [ok](ops/)',
    '[bad](#unknown-heading) [bad](no/such/file.md) [bad](lib/README.md#no-such-section) [bad](package.json#x)',
    '`[not a link](#in-code)`',
    '```',
    '[not a link](#in-a-fence)',
    '```',
  ].join('\n')
  t.same(brokenLinks(text, page, ROOT), [
    '#unknown-heading: no heading with that anchor',
    'no/such/file.md: no such file',
    'lib/README.md#no-such-section: no heading with that anchor',
    'package.json#x: an anchor into something that is not a Markdown page',
  ])
})

for (const page of PAGES) {
  t.test(`every relative link of ${page} leads to a file or heading that exists`, async (t) => {
    const text = read(page)
    t.ok(linkTargets(text).length > 0, `${page} has links`)
    t.same(brokenLinks(text, page, ROOT), [], page)
  })
}
