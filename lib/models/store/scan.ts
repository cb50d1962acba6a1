// A reload pass's view of any store (store.ts `StoreScan`): the store's own scan where it has one,
// else its listing and a stat per file, as the directory, HTTP and memory stores answer.
import type { Store, StoreScan } from './store.js'

export const scanStore = async (store: Store): Promise<StoreScan> => store.scan?.() ?? { models: await store.list(), stat: store.stat }
