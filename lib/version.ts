// The package version, read once from package.json: one level above lib/ when run from source,
// two above dist/lib/ when built, so walk upward from this module until svc's manifest appears.
import { readFileSync } from 'node:fs'

export const readVersion = (from: URL, dir: URL = new URL('.', from)): string => {
  const version = manifestVersion(new URL('package.json', dir))
  if (version !== undefined) return version
  if (dir.pathname === '/') throw new Error(`package.json of svc not found above ${from.pathname}`)
  return readVersion(from, new URL('..', dir))
}

const manifestVersion = (file: URL): string | undefined => {
  try {
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown }
    return pkg.name === 'svc' && typeof pkg.version === 'string' ? pkg.version : undefined
  } catch {
    return undefined // no readable manifest here
  }
}

export const VERSION: string = readVersion(new URL(import.meta.url))
