// svc's package root: the directory of the package.json whose name is svc. A module sits one level
// below it when run from source (lib/) and two when built (dist/lib/), and tsc copies neither the
// manifest nor the shipped data files, so every reader of those walks up from its own module.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isObject } from '../core/json.js'

/** The root above the module at `from`, as a path; throws when no svc manifest is found up to `/`. */
export const packageRoot = (from: URL): string => {
  let dir = new URL('.', from)
  while (!isSvcManifest(new URL('package.json', dir))) {
    if (dir.pathname === '/') throw new Error(`package.json of svc not found above ${from.pathname}`)
    dir = new URL('..', dir)
  }
  return resolve(fileURLToPath(dir))
}

const isSvcManifest = (file: URL): boolean => {
  try {
    const manifest: unknown = JSON.parse(readFileSync(file, 'utf8'))
    return isObject(manifest) && manifest['name'] === 'svc'
  } catch {
    return false // no readable manifest here
  }
}
