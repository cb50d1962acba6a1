// The package version, read once from package.json. The file sits one level above lib/ when run
// from source and two levels above dist/lib/ when built, so look upward for it.
import { readFileSync } from 'node:fs'

const findPackage = (): { version: string } => {
  for (const relative of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as { name?: string; version?: string }
      if (pkg.name === 'svc' && typeof pkg.version === 'string') return { version: pkg.version }
    } catch {
      // not at this depth; try the next
    }
  }
  /* c8 ignore next -- only reachable when the package is installed without its package.json */
  return { version: '0.0.0' }
}

export const VERSION: string = findPackage().version
