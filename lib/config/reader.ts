// Reading declared variables (./variables.ts): a flag wins over its variable, an empty variable
// counts as unset (systemd's `Environment=X=`), and an unset or refused one takes its declared
// default; the unset ones are noted as they are read, for start-up to report. Problems collect in
// the order found, so an operator fixes them all in one edit.
import { parseArgs } from 'node:util'
import { argsProblem } from '../core/args.js'
import { Invalid, type Parser } from './parsers.js'
import { type Name, type Readable, type Value, VARIABLES, type Variable } from './variables.js'

export type Env = Readonly<Record<string, string | undefined>>

type Source = Readonly<{ label: string; raw: string }>

const DECLARED: Readonly<Record<string, Variable<unknown>>> = VARIABLES
const FLAG_NAMES = Object.values(DECLARED).flatMap((variable) => (variable.flag === undefined ? [] : [variable.flag.name]))
const ACCEPTED_FLAGS = [...FLAG_NAMES.map((name) => `--${name}`), '--help', '--version'].join(', ')
const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
  ...Object.fromEntries(FLAG_NAMES.map((name) => [name, { type: 'string' }])),
} as const

export class Reader {
  /** Every problem found so far, in the order found. */
  readonly problems: string[] = []
  /** The variables read while unset, flag and variable alike, which took their defaults. */
  readonly defaulted = new Set<Name>()
  readonly #env: Env
  readonly #flags: Readonly<Record<string, string | undefined>>

  constructor(env: Env, argv: readonly string[]) {
    this.#env = env
    this.#flags = parseFlags(argv, this.problems)
  }

  /** The value of the variable's flag, else of the variable, else (unset, or refused and reported) its default. */
  read<K extends Readable>(name: K): Value<K> {
    const variable: Variable<unknown> = VARIABLES[name]
    // A Readable variable has a parser (see Readable).
    const parse = variable.parse as Parser<unknown>
    const fallback = variable.default === undefined ? undefined : parse(variable.default)
    const source = this.#source(name)
    if (source === undefined) {
      this.defaulted.add(name)
      return fallback as Value<K>
    }
    const value = parse(source.raw)
    if (!(value instanceof Invalid)) return value as Value<K>
    for (const reason of value.reasons) this.problems.push(`${source.label}: ${reason}`)
    return fallback as Value<K>
  }

  isSet(name: Name): boolean {
    return this.#source(name) !== undefined
  }

  /** Reports `reason` against the variable, as its own problems are, if it is set. */
  refuse(name: Name, reason: string): void {
    const source = this.#source(name)
    if (source !== undefined) this.problems.push(`${source.label}: ${reason}`)
  }

  /** Reports a problem across variables, which names them itself. */
  problem(text: string): void {
    this.problems.push(text)
  }

  #source(name: Name): Source | undefined {
    const variable: Variable<unknown> = VARIABLES[name]
    const flag = variable.flag?.name
    const fromFlag = flag === undefined ? undefined : this.#flags[flag]
    if (fromFlag !== undefined) return { label: label(`--${flag}`, fromFlag, variable), raw: fromFlag }
    const fromEnv = this.#env[name]
    return fromEnv === undefined || fromEnv === '' ? undefined : { label: label(name, fromEnv, variable), raw: fromEnv }
  }
}

/** How a problem names a value: `NAME=value`, the value masked by `redact`, or the name alone for a secret. */
const label = (option: string, raw: string, { redact }: Variable<unknown>): string => {
  const shown = redact === undefined ? raw : redact(raw)
  return shown === undefined ? option : `${option}=${shown}`
}

const parseFlags = (argv: readonly string[], problems: string[]): Readonly<Record<string, string | undefined>> => {
  try {
    const { values } = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: false })
    return values as Record<string, string | undefined>
  } catch (error: unknown) {
    problems.push(`${argsProblem(error)}; accepted flags: ${ACCEPTED_FLAGS}`)
    return {}
  }
}
