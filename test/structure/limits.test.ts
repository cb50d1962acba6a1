// Size limits that keep lib/ and bin/ readable as they grow: no function over 80 lines, no line over
// 160 characters (Biome's lineWidth, which it cannot enforce on a long string or comment), no folder
// of lib/ with more than 12 modules directly in it, and at most 6 at lib/'s top. The trained
// artifacts (lib/models/artifacts/) are data, not code, and are left out. A failure names the file
// and line, or the folder, and the size found.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import ts from 'typescript'
import { ROOT } from '../fixtures/import-graph.js'

const MAX_FUNCTION_LINES = 80
const MAX_LINE_CHARACTERS = 160
const MAX_FOLDER_MODULES = 12
const MAX_TOP_MODULES = 6
const EXCLUDED = new Set(['lib/models/artifacts'])

/** Every folder under `dir` (itself first) and the .ts modules directly in each, paths from the repository root. */
const folders = (dir: string): [string, string[]][] => {
  if (EXCLUDED.has(dir)) return []
  const entries = readdirSync(join(ROOT, dir), { withFileTypes: true })
  const modules = entries.filter((entry) => entry.isFile() && entry.name.endsWith('.ts')).map((entry) => `${dir}/${entry.name}`)
  return [[dir, modules], ...entries.filter((entry) => entry.isDirectory()).flatMap((entry) => folders(`${dir}/${entry.name}`))]
}

const FOLDERS = [...folders('lib'), ...folders('bin')]
const SOURCES = FOLDERS.flatMap(([, modules]) => modules).map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }))

/** What a function is called where it is declared: its own name, or the variable or member it is assigned to. */
const nameOf = (node: ts.SignatureDeclaration): string => {
  if (node.name !== undefined) return node.name.getText()
  const parent = node.parent
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name !== undefined)
    return parent.name.getText()
  return '(anonymous)'
}

/**
 * Every function-like node with a body (declarations, expressions, arrows, methods, accessors,
 * constructors) longer than `max` lines, counted from its first token (a leading comment left out)
 * to its closing one, nested functions each on their own.
 */
const longFunctions = (path: string, text: string, max: number): string[] => {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const lines = source.getLineAndCharacterOfPosition(node.end).line - first + 1
      if (lines > max) found.push(`${path}:${first + 1} ${nameOf(node)}: ${lines} lines (at most ${max})`)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** Every line longer than `max` characters, comments and string literals included. */
const longLines = (path: string, text: string, max: number): string[] =>
  text.split('\n').flatMap((line, i) => (line.length > max ? [`${path}:${i + 1}: ${line.length} characters (at most ${max})`] : []))

/** Every folder holding more modules directly than it may: `top` for lib/ itself, `max` for any other. */
const crowdedFolders = (listing: readonly (readonly [string, readonly string[]])[], max: number, top: number): string[] =>
  listing.flatMap(([dir, modules]) => {
    const limit = dir === 'lib' ? top : max
    return modules.length > limit ? [`${dir}/: ${modules.length} .ts files (at most ${limit}): ${modules.map((m) => m.slice(dir.length + 1)).join(', ')}`] : []
  })

/** A function whose body has `bodyLines` lines, so it is `bodyLines + 2` lines long. */
const synthetic = (header: string, bodyLines: number, footer = '}'): string =>
  [header, ...Array.from({ length: bodyLines }, (_, i) => `  const v${i} = ${i}`), footer].join('\n')

t.test('the function counter counts every kind of function, from its first token to its last', async (t) => {
  t.same(
    longFunctions('x.ts', synthetic('export function long() {', 79), 80),
    ['x.ts:1 long: 81 lines (at most 80)'],
    'an 81-line function is over 80: 79 lines of body and the two of its braces',
  )
  t.same(longFunctions('x.ts', synthetic('export function long() {', 78), 80), [], 'an 80-line function is not')
  t.same(longFunctions('x.ts', `/**\n * A comment.\n */\n${synthetic('export function long() {', 79)}`, 80), ['x.ts:4 long: 81 lines (at most 80)'])
  t.same(longFunctions('x.ts', synthetic('const arrow = () => {', 79), 80), ['x.ts:1 arrow: 81 lines (at most 80)'])
  t.same(longFunctions('x.ts', `class C {\n${synthetic('  method() {', 79, '  }')}\n}`, 80), ['x.ts:2 method: 81 lines (at most 80)'])
  t.same(longFunctions('x.ts', `const o = {\n${synthetic('  member: function () {', 79, '  },')}\n}`, 80), ['x.ts:2 member: 81 lines (at most 80)'])
  t.same(
    longFunctions('x.ts', `export const outer = () => {\n${synthetic('  queue.push(() => {', 79, '  })')}\n}`, 80),
    ['x.ts:1 outer: 83 lines (at most 80)', 'x.ts:2 (anonymous): 81 lines (at most 80)'],
    'a nested function counts in its own right and in the one around it',
  )
  t.same(longFunctions('x.ts', `declare function f(): void\ninterface I {\n${'  m(): void\n'.repeat(90)}}`, 80), [], 'a signature has no body')
})

t.test('the line counter counts every character of a line, strings and comments included', async (t) => {
  const at = (n: number) => `// ${'x'.repeat(n - 3)}`
  t.same(longLines('x.ts', [at(160), `const s = '${'y'.repeat(148)}'`, at(161)].join('\n'), 160), ['x.ts:3: 161 characters (at most 160)'])
  t.same(longLines('x.ts', `const s = '${'y'.repeat(149)}'`, 160), ['x.ts:1: 161 characters (at most 160)'])
})

t.test('the folder counter holds lib/ itself to its own limit', async (t) => {
  const modules = (dir: string, n: number) => Array.from({ length: n }, (_, i) => `${dir}/m${i}.ts`)
  t.same(
    crowdedFolders(
      [
        ['lib', modules('lib', 6)],
        ['lib/a', modules('lib/a', 12)],
      ],
      12,
      6,
    ),
    [],
  )
  t.same(
    crowdedFolders(
      [
        ['lib', modules('lib', 7)],
        ['lib/a', modules('lib/a', 13)],
      ],
      12,
      6,
    ),
    [
      'lib/: 7 .ts files (at most 6): m0.ts, m1.ts, m2.ts, m3.ts, m4.ts, m5.ts, m6.ts',
      'lib/a/: 13 .ts files (at most 12): m0.ts, m1.ts, m2.ts, m3.ts, m4.ts, m5.ts, m6.ts, m7.ts, m8.ts, m9.ts, m10.ts, m11.ts, m12.ts',
    ],
  )
})

t.test('the limits read every module of lib/ and bin/, and none of the trained artifacts', async (t) => {
  t.ok(SOURCES.length > 100, `${SOURCES.length} modules`)
  t.ok(
    SOURCES.some(({ path }) => path === 'bin/svc.ts'),
    'bin/svc.ts',
  )
  t.notOk(
    SOURCES.some(({ path }) => path.startsWith('lib/models/artifacts/')),
    'no artifact',
  )
  t.ok(
    FOLDERS.some(([dir]) => dir === 'lib/models/store'),
    'nested folders are read',
  )
})

t.test(`no function in lib/ or bin/ is over ${MAX_FUNCTION_LINES} lines`, async (t) => {
  t.same(
    SOURCES.flatMap(({ path, text }) => longFunctions(path, text, MAX_FUNCTION_LINES)),
    [],
  )
})

t.test(`no line in lib/ or bin/ is over ${MAX_LINE_CHARACTERS} characters`, async (t) => {
  t.same(
    SOURCES.flatMap(({ path, text }) => longLines(path, text, MAX_LINE_CHARACTERS)),
    [],
  )
})

t.test(`no folder of lib/ holds over ${MAX_FOLDER_MODULES} modules directly, and lib/ itself at most ${MAX_TOP_MODULES}`, async (t) => {
  t.same(
    crowdedFolders(
      FOLDERS.filter(([dir]) => dir === 'lib' || dir.startsWith('lib/')),
      MAX_FOLDER_MODULES,
      MAX_TOP_MODULES,
    ),
    [],
  )
})
