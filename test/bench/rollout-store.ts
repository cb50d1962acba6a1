// The benchmark's rollout stores: the shipped iris as version 1 and the same artifact re-signed as
// version 2 (its `version` member changed, its sha256 computed again by artifactSha256), so the two
// versions predict alike and cost alike, and a request costs the same whichever answers it. One
// store per manifest, each served with SVC_MODEL_STORE=<dir>, every one listing both versions:
//   none    {"default_version": "1", "versions": ["1", "2"]}
//   canary  the same, with "canary": {"version": "2", "percent": 5}
//   shadow  the same, with "shadow": {"version": "2", "percent": 100}
// `rolloutFiles` gives the same files as a path → content record, for a memory store in process (rollout.ts).
import { readFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { artifactSha256 } from '../../lib/models/artifact.js'

export const CANARY_PERCENT = 5
export const SHADOW_PERCENT = 100

export type Rollout = 'none' | 'canary' | 'shadow'

const MANIFESTS: Readonly<Record<Rollout, Readonly<Record<string, unknown>>>> = {
  none: { default_version: '1', versions: ['1', '2'] },
  canary: { default_version: '1', versions: ['1', '2'], canary: { version: '2', percent: CANARY_PERCENT } },
  shadow: { default_version: '1', versions: ['1', '2'], shadow: { version: '2', percent: SHADOW_PERCENT } },
}

/** The shipped iris as `version`, signed for it. */
const irisAs = (root: string, version: string): string => {
  const artifact = JSON.parse(readFileSync(join(root, 'lib/models/artifacts/iris/1/model.json'), 'utf8')) as Record<string, unknown>
  artifact['version'] = version
  artifact['sha256'] = artifactSha256(artifact)
  return `${JSON.stringify(artifact, null, 2)}\n`
}

/** The store's files for `rollout`, by path; `root` is the repository's. */
export const rolloutFiles = (root: string, rollout: Rollout): Record<string, string> => ({
  'iris/manifest.json': `${JSON.stringify(MANIFESTS[rollout])}\n`,
  'iris/1/model.json': irisAs(root, '1'),
  'iris/2/model.json': irisAs(root, '2'),
})

export type RolloutStores = Readonly<{
  /** The directory of each store. */
  dirs: Readonly<Record<Rollout, string>>
  /** Removes them. */
  remove(): Promise<void>
}>

/** Writes the three stores under a fresh temporary directory. */
export const createRolloutStores = async (root: string): Promise<RolloutStores> => {
  const base = await mkdtemp(join(tmpdir(), 'svc-bench-rollout-'))
  const dirs = { none: join(base, 'none'), canary: join(base, 'canary'), shadow: join(base, 'shadow') }
  for (const rollout of ['none', 'canary', 'shadow'] as const) {
    for (const [path, content] of Object.entries(rolloutFiles(root, rollout))) {
      await mkdir(dirname(join(dirs[rollout], path)), { recursive: true })
      await writeFile(join(dirs[rollout], path), content)
    }
  }
  return { dirs, remove: () => rm(base, { recursive: true, force: true }) }
}
