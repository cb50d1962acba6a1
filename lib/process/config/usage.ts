// `svc --help`: the commands, one line each, then, written from the declarations (./variables.ts)
// in their order, the flags, each with the variable it overrides, and the variables read from the
// environment only. Every entry gets its default; help wraps at word boundaries, and a default is
// never split across lines. Also what svc says to a command it does not know.
import { nearest } from './nearest.js'
import type { Variable } from './variables.js'

/** svc's commands, in the order --help lists them; bin/svc.ts runs each. Without one, svc serves. */
export const COMMANDS = [
  { name: 'loadgen', args: '--model NAME', help: 'prediction traffic for a running svc: real rows replayed, optionally shifted' },
  { name: 'profile', args: '--input FILE', help: "the drift reference profile of a model's training rows" },
  { name: 'sign', args: 'FILE…', help: 'write the sha256 into model artifacts edited by hand; --check verifies only' },
  { name: 'help', args: '[COMMAND]', help: "print this help, or a command's, and exit" },
] as const

export type CommandName = (typeof COMMANDS)[number]['name']

/** Help starts in this column. */
const INDENT = 26
/** Lines wrap before this width: the widest unwrapped entry of the hand-written help was 107. */
const WIDTH = 110

export const formatUsage = (variables: Readonly<Record<string, Variable<unknown>>>): string => {
  const declared = Object.entries(variables)
  const flags = declared.flatMap(([name, v]) => (v.flag === undefined ? [] : [entry(`--${v.flag.name} ${v.flag.arg}`, `${v.help} [${name}]`, v)]))
  const envOnly = declared.flatMap(([name, v]) => (v.flag === undefined ? [entry(name, v.help, v)] : []))
  return `Usage: svc [options]            serve, as the options and environment variables below set it
       svc COMMAND [options]    run a command

Commands (svc help COMMAND, or svc COMMAND --help, for a command's options):
${COMMANDS.map(({ name, args, help }) => entry(`${name} ${args}`, help)).join('\n')}

Options (each overrides the environment variable in brackets):
${flags.join('\n')}
${entry('-h, --help', 'print this help and exit')}
${entry('-v, -V, --version', 'print the version and exit')}

Environment only:
${envOnly.join('\n')}

Exit codes: 0 stopped cleanly, 1 start-up or runtime failure, 2 invalid configuration or an unknown command.
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

/** What svc says, on stderr, to a first argument that is neither an option nor a command. */
export const unknownCommand = (word: string): string => {
  const near = nearest(
    word,
    COMMANDS.map(({ name }) => name),
  )
  return `svc: ${word} is not a command${near === undefined ? '' : `; did you mean svc ${near}?`}\nsvc --help lists the commands.\n`
}
