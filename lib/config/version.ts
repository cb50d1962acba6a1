// The package version, read once from svc's package.json (lib/config/package-root.ts finds it, from
// source or from a build).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { packageRoot } from './package-root.js'

export const readVersion = (from: URL): string => (JSON.parse(readFileSync(join(packageRoot(from), 'package.json'), 'utf8')) as { version: string }).version

export const VERSION: string = readVersion(new URL(import.meta.url))
