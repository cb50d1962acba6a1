// Secrets kept out of the environment. systemd's LoadCredential= (ops/systemd) hands each over as a
// file in $CREDENTIALS_DIRECTORY, readable only by the service's own user, which keeps it out of
// what `systemctl show` and /proc/<pid>/environ expose; SVC_API_TOKENS_FILE names a token file
// directly, SVC_FEEDBACK_SECRET_FILE (and _PREVIOUS_FILE) a secret's. A variable set explicitly wins
// over a credential file; a variable and its *_FILE together are a mistake. The S3 model store's
// keys become the variables every AWS tool reads (AWS_ACCESS_KEY_ID…), from svc-s3-* credentials.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { errorCode, errorMessage } from '../core/errors.js'
import { ConfigError, type Env } from './config.js'

/** Credential file name → the variable it stands for. */
export const CREDENTIALS: Readonly<Record<string, string>> = {
  'svc-cache-password': 'SVC_CACHE_PASSWORD',
  'svc-api-tokens': 'SVC_API_TOKENS',
  'svc-metrics-token': 'SVC_METRICS_TOKEN',
  'svc-feedback-secret': 'SVC_FEEDBACK_SECRET',
  'svc-feedback-secret-previous': 'SVC_FEEDBACK_SECRET_PREVIOUS',
  'svc-s3-access-key-id': 'AWS_ACCESS_KEY_ID',
  'svc-s3-secret-access-key': 'AWS_SECRET_ACCESS_KEY',
  'svc-s3-session-token': 'AWS_SESSION_TOKEN',
}

/** `*_FILE` variable → the variable whose value the file holds. */
export const SECRET_FILES: Readonly<Record<string, string>> = {
  SVC_API_TOKENS_FILE: 'SVC_API_TOKENS',
  SVC_FEEDBACK_SECRET_FILE: 'SVC_FEEDBACK_SECRET',
  SVC_FEEDBACK_SECRET_PREVIOUS_FILE: 'SVC_FEEDBACK_SECRET_PREVIOUS',
}

type Read = (path: string) => string

/**
 * A token file's tokens as SVC_API_TOKENS takes them: one per line (or comma-separated), blank
 * lines and `#` comments ignored.
 */
export const tokenList = (text: string): string =>
  text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .join(',')

// Files written with `echo` end with a newline that is not part of the secret.
const secret = (variable: string, text: string): string => (variable === 'SVC_API_TOKENS' ? tokenList(text) : text.replace(/\r?\n$/, ''))

const isSet = (value: string | undefined): boolean => (value ?? '') !== ''

/** What withCredentials returned → the variables it filled from files, for a description to say where a value came from. */
const filledFromFiles = new WeakMap<Env, ReadonlySet<string>>()

/**
 * The variables `env` holds because withCredentials read them from a file (a credential or a
 * *_FILE), not from the environment: the S3 store says "systemd credentials" rather than
 * "environment" for its keys. Empty for an environment withCredentials did not return.
 */
export const fromFiles = (env: Env): ReadonlySet<string> => filledFromFiles.get(env) ?? new Set()

/** The environment with each credential found filled in; a missing credential file is simply not there. */
export const withCredentials = (env: Env, read: Read = (path) => readFileSync(path, 'utf8')): Env => {
  const files = Object.entries(SECRET_FILES).filter(([file]) => isSet(env[file]))
  const dir = env['CREDENTIALS_DIRECTORY']
  if (files.length === 0 && !isSet(dir)) return env
  const filled: Record<string, string | undefined> = { ...env }
  const fromFile = new Set<string>()
  filledFromFiles.set(filled, fromFile)
  for (const [file, variable] of files) {
    const path = env[file] as string
    if (isSet(env[variable])) throw new ConfigError([`${file}: set it or ${variable}, not both`])
    try {
      filled[variable] = secret(variable, read(path))
      fromFile.add(variable)
    } catch (error: unknown) {
      throw new ConfigError([`${file}=${path}: ${errorMessage(error)}`])
    }
  }
  if (!isSet(dir)) return filled
  for (const [file, variable] of Object.entries(CREDENTIALS)) {
    if (isSet(filled[variable])) continue
    try {
      filled[variable] = secret(variable, read(join(dir as string, file)))
      fromFile.add(variable)
    } catch (error: unknown) {
      if (errorCode(error) === 'ENOENT') continue
      throw new ConfigError([`credential ${file} in CREDENTIALS_DIRECTORY: ${errorMessage(error)}`])
    }
  }
  return filled
}
