// Tables for the scripts' output, in Markdown so README can quote them as printed.

/** Thin spaces between thousands, as README writes figures (74 961). */
export const figure = (n: number, digits = 0): string => {
  if (!Number.isFinite(n)) return '—'
  const [whole = '', fraction] = n.toFixed(digits).split('.')
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ' ')
  return fraction === undefined ? grouped : `${grouped}.${fraction}`
}

export const table = (header: readonly string[], rows: ReadonlyArray<readonly string[]>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`
  return `${[line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n')}\n`
}
