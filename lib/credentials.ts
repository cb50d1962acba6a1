// Secrets handed over by systemd's LoadCredential= (ops/systemd): each is a file in
// $CREDENTIALS_DIRECTORY, readable only by the service's own user, which keeps it out of the
// environment that `systemctl show` and /proc/<pid>/environ expose. A variable set explicitly wins.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError, type Env } from './config.js'

/** Credential file name → the variable it stands for. */
export const CREDENTIALS: Readonly<Record<string, string>> = { 'svc-cache-password': 'SVC_CACHE_PASSWORD' }

/** The environment with each credential found filled in; a missing file is simply not there. */
export const withCredentials = (env: Env, read: (path: string) => string = (path) => readFileSync(path, 'utf8')): Env => {
  const dir = env['CREDENTIALS_DIRECTORY']
  if (dir === undefined || dir === '') return env
  const filled: Record<string, string | undefined> = { ...env }
  for (const [file, variable] of Object.entries(CREDENTIALS)) {
    if ((env[variable] ?? '') !== '') continue
    try {
      // Files written with `echo` end with a newline that is not part of the secret.
      filled[variable] = read(join(dir, file)).replace(/\r?\n$/, '')
    } catch (error: unknown) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue
      throw new ConfigError([`credential ${file} in CREDENTIALS_DIRECTORY: ${(error as Error).message}`])
    }
  }
  return filled
}
