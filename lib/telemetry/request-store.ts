// The per-request store every log call reads, so `request_id` (and later `trace_id`/`span_id`)
// reach log lines without being passed around. The logging layer enters it; tracing fills it.
import { AsyncLocalStorage } from 'node:async_hooks'
import type { RequestBindings } from '../core/http/context.js'

export const requestStore = new AsyncLocalStorage<RequestBindings>()
