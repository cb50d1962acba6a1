// README.md's configuration table against the declarations of lib/config/variables.ts: one row per
// declared variable and none for anything else, each with the variable's flag and default.
import { readFile } from 'node:fs/promises'
import t from 'tap'
import { VARIABLES, type Variable } from '../../lib/config/variables.js'

const DECLARED: ReadonlyArray<readonly [string, Variable<unknown>]> = Object.entries(VARIABLES)
const HEADER = '| Variable | Flag | Default | Meaning |'

type Row = Readonly<{ cells: readonly string[]; line: string }>

/** The table's rows: the lines after its header and delimiter, up to the first that is not a row (a blank line ends a Markdown table). */
const tableRows = async (): Promise<Row[]> => {
  const lines = (await readFile(new URL('../../README.md', import.meta.url), 'utf8')).split('\n')
  const start = lines.indexOf(HEADER)
  const rows: Row[] = []
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break
    rows.push({
      cells: line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
      line,
    })
  }
  return rows
}

/** A cell as --help would say it: without Markdown's backticks. */
const plain = (cell: string): string => cell.replaceAll('`', '')

t.test('the configuration table has one row per declared variable, and no other', async (t) => {
  const rows = await tableRows()
  t.ok(rows.length > 0, `README.md has the table headed ${HEADER}`)
  const named = rows.map(({ cells, line }) => {
    t.equal(cells.length, 4, `four cells: ${line.slice(0, 40)}`)
    const match = /^`([A-Z][A-Z0-9_]*)`$/.exec(cells[0] ?? '')
    t.ok(match, `one variable per row: ${cells[0]}`)
    return match?.[1] ?? ''
  })
  const declared = DECLARED.map(([name]) => name)
  t.same(
    named.filter((name) => !declared.includes(name)),
    [],
    'in README.md but not declared',
  )
  t.same(
    declared.filter((name) => !named.includes(name)),
    [],
    'declared but not in README.md',
  )
  t.same(named, [...new Set(named)], 'no variable twice')
})

t.test("each row shows the variable's flag and default", async (t) => {
  const rows = new Map((await tableRows()).map(({ cells }) => [plain(cells[0] ?? ''), cells]))
  for (const [name, variable] of DECLARED) {
    const [, flag, value] = rows.get(name) ?? []
    t.equal(flag === undefined ? undefined : plain(flag), variable.flag === undefined ? '' : `--${variable.flag.name}`, `${name} flag`)
    t.equal(value === undefined ? undefined : plain(value), variable.shown ?? variable.default ?? 'unset', `${name} default`)
  }
})
