// `svc --help`: the commands, one line each, then, written from the declarations (./variables.ts)
// in their order, the flags, each with the variable it overrides, and the variables read from the
// environment only. Every entry gets its default; help wraps at word boundaries, and a default is
// never split across lines. The commands and the options that are no variable come from the
// command table (lib/process/commands.ts).
import type { Variable } from './variables.js'

/** A line of --help that is no variable: what is typed, and what it does. */
export type UsageEntry = Readonly<{ left: string; help: string }>

export type UsageListing = Readonly<{
  /** How svc serves: `svc [options]` and what that does. */
  serve: UsageEntry
  /** The commands, in their order. */
  commands: readonly UsageEntry[]
  /** The options that set no variable (help, version), after those that do. */
  options: readonly UsageEntry[]
}>

/** Help starts in this column. */
const INDENT = 26
/** Lines wrap before this width: the widest unwrapped entry of the hand-written help was 107. */
const WIDTH = 110

/** The first column of the synopsis: `svc` and what follows it. */
const SYNOPSIS = 21

export const formatUsage = (variables: Readonly<Record<string, Variable<unknown>>>, { serve, commands, options }: UsageListing): string => {
  const declared = Object.entries(variables)
  const flags = declared.flatMap(([name, v]) => (v.flag === undefined ? [] : [entry(`--${v.flag.name} ${v.flag.arg}`, `${v.help} [${name}]`, v)]))
  const envOnly = declared.flatMap(([name, v]) => (v.flag === undefined ? [entry(name, v.help, v)] : []))
  return `Usage: svc ${serve.left.padEnd(SYNOPSIS)}${serve.help}
       svc ${'COMMAND [options]'.padEnd(SYNOPSIS)}run a command

Commands (svc help COMMAND, or svc COMMAND --help, for a command's options):
${commands.map(({ left, help }) => entry(left, help)).join('\n')}

Options (each overrides the environment variable in brackets):
${flags.join('\n')}
${options.map(({ left, help }) => entry(left, help)).join('\n')}

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
