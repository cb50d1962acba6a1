// The store SVC_MODEL_STORE names (store.ts has the interface): a directory, an HTTP(S) base URL,
// or memory for tests that build their configuration in code.
import type { StoreSpec } from '../../config/model-store.js'
import { DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT_MS, type Store, type StoreOptions } from './store.js'
import { createDirectoryStore } from './directory.js'
import { createHttpStore } from './http.js'
import { createMemoryStore } from './memory.js'
import { StoreError } from './error.js'
import { openS3Store } from './s3/open.js'

/** Builds the store a spec names, with the defaults for what `options` leaves out. */
export const createStore = (
  spec: StoreSpec,
  { timeoutMs = DEFAULT_TIMEOUT_MS, maxBytes = DEFAULT_MAX_BYTES, now = Date.now, s3, onCredentialsStale }: StoreOptions = {},
): Store => {
  switch (spec.kind) {
    case 'directory':
      return createDirectoryStore(spec.root, { maxBytes })
    case 'http':
      return createHttpStore(spec.url, { timeoutMs, maxBytes })
    case 's3':
      if (s3 === undefined) throw new StoreError('UNREADABLE', `${spec.bucket}: an s3:// store needs its S3 settings (lib/config/s3.ts)`)
      return openS3Store(spec, s3, { timeoutMs, maxBytes, onCredentialsStale })
    case 'memory':
      return createMemoryStore(spec.files, { maxBytes, now })
  }
}
