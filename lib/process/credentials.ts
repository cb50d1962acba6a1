// Secrets kept out of the environment. systemd's LoadCredential= (ops/systemd) hands each over as a
// file in $CREDENTIALS_DIRECTORY, readable only by the service's own user, which keeps it out of
// what `systemctl show` and /proc/<pid>/environ expose; SVC_API_TOKENS_FILE names a token file
// directly. A variable set explicitly wins over a credential file.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { errorMessage } from '../core/errors.js'
import { ConfigError, type Env } from './config/config.js'

/** Credential file name → the variable it stands for. */
export const CREDENTIALS: Readonly<Record<string, string>> = {
  'svc-cache-password': 'SVC_CACHE_PASSWORD',
  'svc-api-tokens': 'SVC_API_TOKENS',
  'svc-metrics-token': 'SVC_METRICS_TOKEN',
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

/** The environment with each credential found filled in; a missing credential file is simply not there. */
export const withCredentials = (env: Env, read: Read = (path) => readFileSync(path, 'utf8')): Env => {
  const tokensFile = env['SVC_API_TOKENS_FILE']
  const dir = env['CREDENTIALS_DIRECTORY']
  if (!isSet(tokensFile) && !isSet(dir)) return env
  const filled: Record<string, string | undefined> = { ...env }
  if (isSet(tokensFile)) {
    if (isSet(env['SVC_API_TOKENS'])) throw new ConfigError(['SVC_API_TOKENS_FILE: set it or SVC_API_TOKENS, not both'])
    try {
      filled['SVC_API_TOKENS'] = tokenList(read(tokensFile as string))
    } catch (error: unknown) {
      throw new ConfigError([`SVC_API_TOKENS_FILE=${tokensFile as string}: ${errorMessage(error)}`])
    }
  }
  if (!isSet(dir)) return filled
  for (const [file, variable] of Object.entries(CREDENTIALS)) {
    if (isSet(filled[variable])) continue
    try {
      filled[variable] = secret(variable, read(join(dir as string, file)))
    } catch (error: unknown) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue
      throw new ConfigError([`credential ${file} in CREDENTIALS_DIRECTORY: ${errorMessage(error)}`])
    }
  }
  return filled
}
