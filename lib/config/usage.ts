// `svc --help`, written from the declarations (./variables.ts) in their order: the flags, each with
// the variable it overrides, then the variables read from the environment only. Every entry gets
// its default; help wraps at word boundaries, and a default is never split across lines.
import type { Variable } from './variables.js'

/** Help starts in this column. */
const INDENT = 26
/** Lines wrap before this width: the widest unwrapped entry of the hand-written help was 107. */
const WIDTH = 110

export const formatUsage = (variables: Readonly<Record<string, Variable<unknown>>>): string => {
  const declared = Object.entries(variables)
  const flags = declared.flatMap(([name, v]) => (v.flag === undefined ? [] : [entry(`--${v.flag.name} ${v.flag.arg}`, `${v.help} [${name}]`, v)]))
  const envOnly = declared.flatMap(([name, v]) => (v.flag === undefined ? [entry(name, v.help, v)] : []))
  return `Usage: svc [options]
       svc loadgen --model NAME [options]   prediction traffic for a running svc (--help for more)

Options (each overrides the environment variable in brackets):
${flags.join('\n')}
${entry('-h, --help', 'print this help and exit')}
${entry('-V, --version', 'print the version and exit')}

Environment only:
${envOnly.join('\n')}

Exit codes: 0 stopped cleanly, 1 start-up or runtime failure, 2 invalid configuration.
`
}

/** A default as --help shows it: a value with spaces in quotes, as a shell would need it. */
const shownDefault = ({ shown, default: value }: Variable<unknown>): string | undefined =>
  shown ?? (value === undefined || !/\s/.test(value) ? value : JSON.stringify(value))

const entry = (left: string, help: string, variable?: Variable<unknown>): string => {
  const value = variable === undefined ? undefined : shownDefault(variable)
  const words = [...help.split(' '), ...(value === undefined ? [] : [`(default ${value})`])]
  const lines: string[] = []
  // At least one space before the help column, as the hand-written help had; past it, two.
  let line = left.length < INDENT - 2 ? `  ${left}`.padEnd(INDENT) : `  ${left}  `
  let isStart = true
  for (const word of words) {
    if (!isStart && line.length + 1 + word.length > WIDTH) {
      lines.push(line)
      line = ' '.repeat(INDENT) + word
    } else line += isStart ? word : ` ${word}`
    isStart = false
  }
  return [...lines, line].join('\n')
}
