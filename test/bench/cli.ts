// The CLI as the bench starts it: `node dist/bin/svc.js` through process.execPath (the Node being
// measured), with the Node flags of the CLI's own `#!` line (bin/svc.ts), as /usr/local/bin/svc runs.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/** The flags after `node` on a `#!/usr/bin/env [-S] node …` line; none on any other. */
export const shebangNodeFlags = (script: string): string[] => {
  const words = (script.split('\n', 1)[0] ?? '').split(/\s+/)
  const node = words.indexOf('node')
  return words[0]?.startsWith('#!') === true && node > 0 ? words.slice(node + 1).filter((word) => word !== '') : []
}

/** `node`'s arguments for the built CLI under `root`, before the CLI's own. */
export const cliArgs = (root: string): string[] => {
  const script = join(root, 'dist/bin/svc.js')
  return [...shebangNodeFlags(readFileSync(script, 'utf8')), script]
}
