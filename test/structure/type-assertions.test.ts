// Types are checked at lib/'s edges, not asserted: JSON read from input goes through a TypeBox
// schema or a type guard, and a typed-array kernel keeps its numeric assertions in one module. This
// counts the type assertions in lib/ as TypeScript's syntax tree sees them, and holds them under a limit: `as`
// expressions and angle-bracket assertions, `as const` left out (it narrows, it asserts nothing).
// The goal is 150 (issue 36); the limit is a ratchet at today's count, lowered with each module
// converted, never raised.
// Non-null assertions (`x!`) are counted too, and printed, but not limited. A failure prints the
// count per file, most first.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import ts from 'typescript'
import { ROOT } from '../fixtures/import-graph.js'

const MAX_ASSERTIONS = 138

type Counts = { assertions: number; nonNull: number }

const sources = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`
    if (entry.isDirectory()) return sources(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })

const isAsConst = (node: ts.AssertionExpression): boolean =>
  ts.isTypeReferenceNode(node.type) && ts.isIdentifier(node.type.typeName) && node.type.typeName.text === 'const'

/** The type assertions (`as` and `<T>`, `as const` left out) and the non-null assertions in one module's text. */
const countAssertions = (path: string, text: string): Counts => {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS)
  const counts = { assertions: 0, nonNull: 0 }
  const visit = (node: ts.Node): void => {
    if ((ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && !isAsConst(node)) counts.assertions++
    else if (ts.isNonNullExpression(node)) counts.nonNull++
    ts.forEachChild(node, visit)
  }
  visit(source)
  return counts
}

/** One line per file that holds any, most assertions first. */
const report = (perFile: ReadonlyMap<string, Counts>): string =>
  [...perFile]
    .filter(([, c]) => c.assertions + c.nonNull > 0)
    .sort(([a, x], [b, y]) => y.assertions - x.assertions || y.nonNull - x.nonNull || a.localeCompare(b))
    .map(([path, c]) => `${String(c.assertions).padStart(4)} ${String(c.nonNull).padStart(4)}  ${path}`)
    .join('\n')

t.test('the counter counts `as` and `<T>` assertions, not `as const`, and non-null assertions apart', async (t) => {
  const text = [
    'const a = x as number',
    'const b = <string>y',
    "const c = ['a', 'b'] as const",
    'const d = z as unknown as Foo',
    'const e = w!.length',
    'const f = { k: 1 } satisfies Bar',
  ].join('\n')
  t.same(countAssertions('x.ts', text), { assertions: 4, nonNull: 1 })
})

t.test(`lib/ holds at most ${MAX_ASSERTIONS} type assertions`, async (t) => {
  const perFile = new Map(sources('lib').map((path) => [path, countAssertions(path, readFileSync(join(ROOT, path), 'utf8'))]))
  let total = 0
  let nonNull = 0
  for (const counts of perFile.values()) {
    total += counts.assertions
    nonNull += counts.nonNull
  }
  const summary = `${total} type assertions in lib/ (at most ${MAX_ASSERTIONS}), ${nonNull} non-null assertions`
  t.ok(total <= MAX_ASSERTIONS, summary, { 'assertions, non-null, file': report(perFile).split('\n') })
})

/**
 * `Record<string, unknown>` says nothing of what a value holds: a JSON object read from input is a
 * JsonObject (lib/core/json.ts), checked member by member. The rest (log fields, a problem's extra
 * members, an exported span) stay at most MAX_UNKNOWN_RECORDS (issue 47).
 */
const MAX_UNKNOWN_RECORDS = 10

t.test(`lib/ and bin/ write \`Record<string, unknown>\` at most ${MAX_UNKNOWN_RECORDS} times`, async (t) => {
  const perFile = [...sources('lib'), ...sources('bin')]
    .map((path) => [path, readFileSync(join(ROOT, path), 'utf8').split('Record<string, unknown>').length - 1] as const)
    .filter(([, count]) => count > 0)
  const total = perFile.reduce((sum, [, count]) => sum + count, 0)
  t.ok(perFile.length > 0 && total <= MAX_UNKNOWN_RECORDS, `${total} in lib/ and bin/ (at most ${MAX_UNKNOWN_RECORDS})`, {
    'count, file': perFile.map(([path, count]) => `${count} ${path}`),
  })
})
