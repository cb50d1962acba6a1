// SVC_MODEL_RELOAD_INTERVAL_S's range, stated once: the configuration parses it (./variables.ts, 0
// for no hot reload), the model registry and its cron plan check it (lib/models/registry/).

/** The longest hot-reload interval: a day. A longer one is a restart, not a hot reload. */
export const MAX_RELOAD_INTERVAL_S = 86_400

/** The range in words, as the messages refusing an interval say it. */
export const RELOAD_INTERVAL_RANGE = `a whole number of seconds from 1 to ${MAX_RELOAD_INTERVAL_S}`

/** True for an interval hot reload can run at: RELOAD_INTERVAL_RANGE. */
export const isReloadInterval = (seconds: number): boolean => Number.isSafeInteger(seconds) && seconds >= 1 && seconds <= MAX_RELOAD_INTERVAL_S
